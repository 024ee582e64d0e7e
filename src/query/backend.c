/* backend.c — what both query backends share: the dispatch through the
 * function table, the answer's lifetime, the Prometheus error answer, and the
 * one-form helpers for C callers (query.h). */
#include "util/base.h"

#include "labels/json.h"
#include "query/query_int.h"

im_rc query_backend_do(query_backend_t *b, const query_req_t *r, query_answer_t *a, im_err_t *err)
{
    im_err_t own; /* the implementations may rely on an err to word the answer */
    if (!err) {
        im_err_clear(&own);
        err = &own;
    }
    memset(a, 0, sizeof *a);
    im_buf_init(&a->json, 0);
    query_req_t rr = *r;
    if (!rr.want) rr.want = QUERY_WANT_RESULT;
    im_rc rc = b->vt->do_query(b, &rr, a, err);
    if (rc == IM_OK) {
        a->http_status = 200;
        a->error_type = NULL;
    } else if (!a->error_type) { /* an implementation that set no answer */
        query__fail(a, &rr, rc, NULL, 0, err->msg[0] ? err->msg : im_rc_str(rc));
    }
    return rc;
}

const char *query_backend_describe(const query_backend_t *b)
{
    return b->vt->describe(b);
}

void query_backend_status_json(const query_backend_t *b, im_buf_t *out)
{
    b->vt->status_json(b, out);
}

void query_backend_free(query_backend_t *b)
{
    if (b) b->vt->free(b);
}

void query_strs_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) im_free(v[i]);
    im_free(v);
}

void query_answer_free(query_answer_t *a)
{
    im_buf_free(&a->json);
    promql_result_free(&a->result);
    for (size_t i = 0; i < a->nseries; i++) im_labels_unref(a->series[i]);
    im_free(a->series);
    query_strs_free(a->strs, a->nstrs);
    memset(a, 0, sizeof *a);
}

/* The status code of each Prometheus errorType (web/api/v1's mapping). */
static unsigned status_of(const char *etype)
{
    if (!strcmp(etype, "bad_data")) return 400;
    if (!strcmp(etype, "execution")) return 422;
    if (!strcmp(etype, "not_found")) return 404;
    if (!strcmp(etype, "internal")) return 500;
    return 503; /* timeout, canceled, unavailable */
}

const char *query__etype_of(im_rc rc)
{
    switch (rc) {
    case IM_ETIMEOUT: return "timeout";
    case IM_ECANCELED: return "canceled";
    case IM_EPARSE: return "internal";
    case IM_EINVAL: return "bad_data";
    case IM_EEXEC:
    case IM_ELIMIT: return "execution";
    case IM_EUNSUPPORTED: return "not_found";
    default: return "unavailable";
    }
}

im_rc query__fail(query_answer_t *a, const query_req_t *r, im_rc rc, const char *etype,
                  unsigned status, const char *msg)
{
    a->error_type = etype ? etype : query__etype_of(rc);
    a->http_status = status ? status : status_of(a->error_type);
    if (r->want & QUERY_WANT_JSON) {
        im_buf_reset(&a->json);
        (void)im_buf_printf(&a->json,
                            "{\"status\":\"error\",\"errorType\":\"%s\",\"error\":", a->error_type);
        im_json_string(&a->json, msg, strlen(msg), IM_JSON_GO);
        (void)im_buf_putc(&a->json, '}');
    }
    return rc;
}

/* ---- One-form helpers ---- */

im_rc query_instant(query_backend_t *b, const char *expr, int64_t t_ms, promql_result_t *out,
                    im_err_t *err)
{
    query_req_t r = {.op = QUERY_INSTANT, .want = QUERY_WANT_RESULT, .expr = expr, .time_ms = t_ms};
    query_answer_t a;
    im_rc rc = query_backend_do(b, &r, &a, err);
    memset(out, 0, sizeof *out);
    if (rc == IM_OK) {
        *out = a.result;
        memset(&a.result, 0, sizeof a.result);
    }
    query_answer_free(&a);
    return rc;
}

im_rc query_label_values(query_backend_t *b, const char *label, const char *const *match,
                         size_t nmatch, int64_t start_ms, int64_t end_ms, char ***vals, size_t *n,
                         im_err_t *err)
{
    bool range = start_ms || end_ms;
    query_req_t r = {.op = QUERY_LABEL_VALUES,
                     .want = QUERY_WANT_RESULT,
                     .label = label,
                     .match = match,
                     .nmatch = nmatch,
                     .has_start = range,
                     .has_end = range,
                     .start_ms = start_ms,
                     .end_ms = end_ms};
    query_answer_t a;
    im_rc rc = query_backend_do(b, &r, &a, err);
    *vals = NULL;
    *n = 0;
    if (rc == IM_OK) {
        *vals = a.strs;
        *n = a.nstrs;
        a.strs = NULL;
        a.nstrs = 0;
    }
    query_answer_free(&a);
    return rc;
}
