/* local.c — the local query backend: the PromQL engine over a storage_t (the
 * TSDB), answering the query.h operations as infermon's own API would. */
#include "util/base.h"

#include <stdlib.h>

#include "labels/json.h"
#include "promql/parser.h"
#include "query/query_int.h"
#include "util/timeutil.h"

typedef struct local {
    query_backend_t base;
    storage_t *storage;      /* borrowed */
    promql_engine_t *engine; /* borrowed */
} local_t;

static void json_strs(im_buf_t *out, char *const *v, size_t n)
{
    (void)im_buf_puts(out, "{\"status\":\"success\",\"data\":[");
    for (size_t i = 0; i < n; i++) {
        if (i) (void)im_buf_putc(out, ',');
        im_json_string(out, v[i], strlen(v[i]), IM_JSON_GO);
    }
    (void)im_buf_puts(out, "]}");
}

static im_rc do_eval(local_t *l, const query_req_t *r, query_answer_t *a, im_err_t *err)
{
    const char *q = r->expr ? r->expr : "";
    promql_expr_t *expr = NULL;
    im_rc rc = promql_parse(q, strlen(q), &expr, err);
    if (rc != IM_OK) return query__fail(a, r, IM_EINVAL, "bad_data", 400, err->msg);
    promql_query_params_t p;
    memset(&p, 0, sizeof p);
    if (r->op == QUERY_RANGE) {
        if (r->step_ms <= 0 || r->end_ms < r->start_ms) {
            promql_expr_free(expr);
            im_err_set(err, IM_EINVAL, "a range query needs start <= end and a positive step");
            return query__fail(a, r, IM_EINVAL, "bad_data", 400, err->msg);
        }
        p.start_ms = r->start_ms;
        p.end_ms = r->end_ms;
        p.step_ms = r->step_ms;
    } else {
        p.start_ms = p.end_ms = r->time_ms;
        p.instant = true;
    }
    p.cancel = r->cancel;
    if (r->timeout_ms > 0) p.deadline_ns = im_mono_ns() + r->timeout_ms * 1000000;
    storage_queryable_t *qq = storage_queryable(l->storage);
    rc = promql_eval(l->engine, qq, expr, &p, &a->result, err);
    qq->vt->close(qq);
    promql_expr_free(expr);
    if (rc != IM_OK) return query__fail(a, r, rc, promql_error_type(rc), 0, err->msg);
    if (r->want & QUERY_WANT_JSON) {
        (void)im_buf_puts(&a->json, "{\"status\":\"success\",\"data\":");
        promql_json_writer_t w;
        promql_json_init(&w, &a->result, PROMQL_JSON_TIMES_API);
        while (!promql_json_step(&w, &a->json, 1 << 20)) {
        }
        (void)im_buf_putc(&a->json, '}');
    }
    if (!(r->want & QUERY_WANT_RESULT)) promql_result_free(&a->result);
    return IM_OK;
}

static int ls_cmp(const void *x, const void *y)
{
    return im_labels_compare(*(const im_labels_t *const *)x, *(const im_labels_t *const *)y);
}

static int str_cmp(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Parses every match[] selector; *ms[i]/n[i] freed by free_sets. */
static im_rc parse_sets(const query_req_t *r, im_matcher_t ****ms, size_t **n, im_err_t *err)
{
    *ms = im_calloc(r->nmatch + 1, sizeof **ms);
    *n = im_calloc(r->nmatch + 1, sizeof **n);
    for (size_t i = 0; i < r->nmatch; i++) {
        im_rc rc = promql_parse_metric_selector(r->match[i], strlen(r->match[i]), &(*ms)[i],
                                                &(*n)[i], err);
        if (rc != IM_OK) return rc;
    }
    return IM_OK;
}

static void free_sets(const query_req_t *r, im_matcher_t ***ms, size_t *n)
{
    for (size_t i = 0; i < r->nmatch; i++)
        if (ms[i]) promql_matchers_free(ms[i], n[i]);
    im_free(ms);
    im_free(n);
}

static im_rc do_meta(local_t *l, const query_req_t *r, query_answer_t *a, im_err_t *err)
{
    if (r->op == QUERY_SERIES && r->nmatch == 0)
        return query__fail(a, r, IM_EINVAL, "bad_data", 400, "no match[] parameter provided");
    if (r->op == QUERY_LABEL_VALUES &&
        (!r->label || !im_label_name_valid(r->label, strlen(r->label)))) {
        im_err_set(err, IM_EINVAL, "invalid label name: \"%.500s\"", r->label ? r->label : "");
        return query__fail(a, r, IM_EINVAL, "bad_data", 400, err->msg);
    }
    im_matcher_t ***ms;
    size_t *nms;
    im_rc rc = parse_sets(r, &ms, &nms, err);
    if (rc != IM_OK) {
        free_sets(r, ms, nms);
        return query__fail(a, r, IM_EINVAL, "bad_data", 400, err->msg);
    }
    int64_t start = r->has_start ? r->start_ms : IM_MIN_TIME_MS;
    int64_t end = r->has_end ? r->end_ms : IM_MAX_TIME_MS;
    storage_queryable_t *q = storage_queryable(l->storage);
    size_t rounds = r->nmatch ? r->nmatch : 1, cap = 0;
    for (size_t i = 0; i < rounds && rc == IM_OK; i++) {
        im_matcher_t *const *m = r->nmatch ? ms[i] : NULL;
        size_t nm = r->nmatch ? nms[i] : 0;
        if (r->op == QUERY_SERIES) {
            storage_series_set_t *set = NULL;
            if ((rc = q->vt->select(q, start, end, m, nm, NULL, &set, err)) != IM_OK) break;
            for (size_t k = 0; k < set->n; k++) {
                if (a->nseries == cap) {
                    cap = cap ? cap * 2 : 64;
                    a->series = im_realloc(a->series, cap * sizeof *a->series);
                }
                a->series[a->nseries++] = im_labels_ref(set->series[k].labels);
            }
            set->vt->free(set);
            continue;
        }
        storage_strlist_t sl;
        memset(&sl, 0, sizeof sl);
        rc = r->op == QUERY_LABELS ? q->vt->label_names(q, start, end, m, nm, &sl, err)
                                   : q->vt->label_values(q, r->label, start, end, m, nm, &sl, err);
        if (rc != IM_OK) break;
        for (size_t k = 0; k < sl.n; k++) {
            if (a->nstrs == cap) {
                cap = cap ? cap * 2 : 64;
                a->strs = im_realloc(a->strs, cap * sizeof *a->strs);
            }
            a->strs[a->nstrs++] = im_strndup(sl.v[k]->s, sl.v[k]->len);
        }
        storage_strlist_free(&sl);
    }
    q->vt->close(q);
    free_sets(r, ms, nms);
    if (rc != IM_OK) return query__fail(a, r, rc, "execution", 422, err->msg);
    /* sorted, unique, limited */
    size_t out = 0;
    if (r->op == QUERY_SERIES) {
        if (a->nseries > 1) qsort(a->series, a->nseries, sizeof *a->series, ls_cmp);
        for (size_t i = 0; i < a->nseries; i++) {
            bool keep = (!out || !im_labels_equal(a->series[i], a->series[out - 1])) &&
                        (r->limit <= 0 || (int64_t)out < r->limit);
            if (keep)
                a->series[out++] = a->series[i];
            else
                im_labels_unref(a->series[i]);
        }
        a->nseries = out;
        if (r->want & QUERY_WANT_JSON) {
            (void)im_buf_puts(&a->json, "{\"status\":\"success\",\"data\":[");
            for (size_t i = 0; i < a->nseries; i++) {
                if (i) (void)im_buf_putc(&a->json, ',');
                im_json_labels(&a->json, a->series[i], IM_JSON_GO);
            }
            (void)im_buf_puts(&a->json, "]}");
        }
    } else {
        if (a->nstrs > 1) qsort(a->strs, a->nstrs, sizeof *a->strs, str_cmp);
        for (size_t i = 0; i < a->nstrs; i++) {
            bool keep = (!out || strcmp(a->strs[i], a->strs[out - 1])) &&
                        (r->limit <= 0 || (int64_t)out < r->limit);
            if (keep)
                a->strs[out++] = a->strs[i];
            else
                im_free(a->strs[i]);
        }
        a->nstrs = out;
        if (r->want & QUERY_WANT_JSON) json_strs(&a->json, a->strs, a->nstrs);
    }
    return IM_OK;
}

static im_rc local_do(query_backend_t *b, const query_req_t *r, query_answer_t *a, im_err_t *err)
{
    local_t *l = (local_t *)b;
    switch (r->op) {
    case QUERY_INSTANT:
    case QUERY_RANGE: return do_eval(l, r, a, err);
    case QUERY_SERIES:
    case QUERY_LABELS:
    case QUERY_LABEL_VALUES: return do_meta(l, r, a, err);
    case QUERY_API_GET: break;
    }
    im_err_set(err, IM_EUNSUPPORTED, "the local backend answers queries, series and labels only");
    return query__fail(a, r, IM_EUNSUPPORTED, "not_found", 404, err->msg);
}

static const char *local_describe(const query_backend_t *b)
{
    (void)b;
    return "local";
}

static void local_status(const query_backend_t *b, im_buf_t *out)
{
    (void)b;
    (void)im_buf_puts(out, "{\"type\":\"local\",\"url\":\"\"}");
}

static void local_free(query_backend_t *b)
{
    im_free(b);
}

static const query_backend_vt_t local_vt = {local_do, local_describe, local_status, local_free};

query_backend_t *query_local_new(storage_t *storage, promql_engine_t *engine)
{
    local_t *l = im_calloc(1, sizeof *l);
    l->base.vt = &local_vt;
    l->storage = storage;
    l->engine = engine;
    return &l->base;
}
