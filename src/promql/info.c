/* info.c — Prometheus 3's experimental info(v [, selector]) function: adds the
 * data labels of info series (target_info by default) to each series of v.
 *
 * Semantics (Prometheus 3.14's, from its documentation and test scripts):
 *  - Info series are selected by the second argument's matchers: its __name__
 *    matchers, or __name__="target_info" when it has none, or also
 *    __name__=~".+_info" when it has only negative ones; its other matchers
 *    ("data label matchers") also select the info series, and when there are any
 *    only the labels they name are added, otherwise all data labels are.
 *  - An info series joins a series of v on the identifying labels, instance and
 *    job: equal values (a label missing on both counts as equal); a series with
 *    neither is never enriched. Data labels are the info series' labels but
 *    __name__ and the identifying ones; labels the series already has win.
 *  - Per step, among joined info series of one metric name the one with the
 *    latest sample wins; two names giving one data label different values is an
 *    error ("conflicting label").
 *  - A step where no info series joins keeps the series as it is when every data
 *    label matcher matches the empty string, else the sample is dropped.
 *  - Series of v that match every __name__ matcher are info series themselves and
 *    pass unchanged. */
#include "util/base.h"

#include <stdlib.h>

#include "promql/promql_int.h"
#include "storage/fhist.h"

im_rc promql__eval_timestamp_selector(ev_t *ev, const promql_expr_t *e, val_t *out);
im_rc promql__eval_info(ev_t *ev, const promql_call_t *call, val_t *out);

typedef struct info_ctx {
    im_matcher_t **ms; /* the info selector's matchers (effective) */
    size_t nms;
    im_matcher_t *extra; /* one we added (freed at the end), or NULL */
    const im_istr_t *id[2];
    const im_istr_t **data; /* names the data label matchers restrict to */
    size_t ndata;
    bool keep_unmatched; /* every data matcher matches "" */
} info_ctx_t;

static bool is_name(const im_istr_t *n)
{
    return n->len == 8 && memcmp(n->s, IM_METRIC_NAME, 8) == 0;
}

static bool id_equal(const info_ctx_t *c, const im_labels_t *a, const im_labels_t *b)
{
    for (int i = 0; i < 2; i++)
        if (im_labels_get_istr(a, c->id[i]) != im_labels_get_istr(b, c->id[i])) return false;
    return true;
}

/* Does the base series match every __name__ matcher (it is an info series)? */
static bool is_info_series(const info_ctx_t *c, const im_labels_t *ls)
{
    const im_istr_t *nm = im_labels_get(ls, IM_METRIC_NAME);
    for (size_t i = 0; i < c->nms; i++) {
        if (!is_name(im_matcher_name(c->ms[i]))) continue;
        if (!im_matcher_matches(c->ms[i], nm ? nm->s : "", nm ? nm->len : 0)) return false;
    }
    return true;
}

static bool wanted_data_label(const info_ctx_t *c, const im_istr_t *n)
{
    if (is_name(n) || n == c->id[0] || n == c->id[1]) return false;
    if (c->ndata == 0) return true;
    for (size_t i = 0; i < c->ndata; i++)
        if (c->data[i] == n) return true;
    return false;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
    return x < y ? -1 : x > y;
}

/* The result labels of base series ls at step k: *out (new reference), or NULL
 * when the sample is dropped. */
static im_rc enrich(ev_t *ev, const info_ctx_t *c, const val_t *info, const uint64_t *idx,
                    size_t nidx, const im_labels_t *ls, size_t k, const im_labels_t **out)
{
    *out = NULL;
    uint64_t h = im_labels_hash_subset(ls, c->id, 2, true, false);
    /* first entry of the hash run (idx is sorted pairs: hash, series index) */
    size_t lo = 0, hi = nidx;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (idx[2 * mid] < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* chosen info series per metric name: the latest sample */
    size_t chosen[64];
    size_t nchosen = 0;
    for (size_t p = lo; p < nidx && idx[2 * p] == h; p++) {
        const vser_t *s = &info->s[idx[2 * p + 1]];
        if (!s->has[k] || !id_equal(c, s->labels, ls)) continue;
        const im_istr_t *nm = im_labels_get(s->labels, IM_METRIC_NAME);
        size_t q = 0;
        for (; q < nchosen; q++)
            if (im_labels_get(info->s[chosen[q]].labels, IM_METRIC_NAME) == nm) break;
        if (q < nchosen) {
            if (s->v[k] > info->s[chosen[q]].v[k]) chosen[q] = idx[2 * p + 1];
        } else if (nchosen < IM_ARRAY_LEN(chosen)) {
            chosen[nchosen++] = idx[2 * p + 1];
        } else {
            return im_err_set(ev->err, IM_ELIMIT,
                              "info(): more than %zu info metrics join one series",
                              IM_ARRAY_LEN(chosen));
        }
    }
    if (nchosen == 0) {
        if (c->keep_unmatched) *out = im_labels_ref(ls);
        return IM_OK;
    }
    im_labels_builder_t b;
    im_lb_init(&b);
    im_lb_load(&b, ls);
    im_rc rc = IM_OK;
    for (size_t q = 0; q < nchosen && rc == IM_OK; q++) {
        const im_labels_t *il = info->s[chosen[q]].labels;
        for (uint32_t i = 0; i < il->n; i++) {
            const im_label_t *l = &il->l[i];
            if (!wanted_data_label(c, l->name) || im_labels_get_istr(ls, l->name)) continue;
            const im_istr_t *have = im_lb_get(&b, l->name->s);
            if (have && have != l->value) {
                rc = im_err_set(ev->err, IM_EEXEC,
                                "info(): conflicting label %s values \"%s\" and \"%s\" from "
                                "different info metrics",
                                l->name->s, have->s, l->value->s);
                break;
            }
            im_lb_set_istr(&b, l->name, l->value);
        }
    }
    if (rc == IM_OK) *out = im_lb_build(&b);
    im_lb_free(&b);
    return rc;
}

static im_rc info_setup(ev_t *ev, const promql_expr_t *sel, info_ctx_t *c)
{
    memset(c, 0, sizeof *c);
    c->id[0] = im_intern_cstr("instance");
    c->id[1] = im_intern_cstr("job");
    c->keep_unmatched = true;
    size_t n = sel ? sel->u.vs.nmatchers : 0;
    c->ms = im_calloc(n + 1, sizeof *c->ms);
    c->data = im_calloc(n + 1, sizeof *c->data);
    bool any_name = false, positive_name = false;
    for (size_t i = 0; i < n; i++) {
        im_matcher_t *m = sel->u.vs.matchers[i];
        c->ms[c->nms++] = m;
        if (is_name(im_matcher_name(m))) {
            any_name = true;
            im_match_type_t t = im_matcher_type(m);
            if (t == IM_MATCH_EQ || t == IM_MATCH_RE) positive_name = true;
            continue;
        }
        if (!im_matcher_matches_empty(m)) c->keep_unmatched = false;
        c->data[c->ndata++] = im_matcher_name(m);
    }
    if (!positive_name) {
        im_err_t err;
        im_err_clear(&err);
        im_rc rc = any_name ? im_matcher_new_flags(IM_MATCH_RE, IM_METRIC_NAME, 8, ".+_info", 7,
                                                   IM_MATCHER_DOTALL, &c->extra, &err)
                            : im_matcher_new(IM_MATCH_EQ, IM_METRIC_NAME, 8, "target_info", 11,
                                             &c->extra, &err);
        if (rc != IM_OK) return im_err_set(ev->err, rc, "info(): %s", err.msg);
        c->ms[c->nms++] = c->extra;
    }
    return IM_OK;
}

static void info_ctx_free(info_ctx_t *c)
{
    im_istr_unref(c->id[0]);
    im_istr_unref(c->id[1]);
    im_matcher_free(c->extra);
    im_free(c->ms);
    im_free(c->data);
}

/* An info series with a histogram sample: 3.x's error, naming the first such
 * series (labels as Go's labels.String()). The selector is evaluated again with
 * the histograms kept, which only this error path pays for. */
static im_rc hist_info_error(ev_t *ev, const promql_expr_t *sel)
{
    val_t hv;
    ev->want_hists = true;
    im_rc rc = promql__eval(ev, sel, &hv);
    if (rc != IM_OK) return rc;
    for (size_t i = 0; i < hv.n && rc == IM_OK; i++) {
        const vser_t *s = &hv.s[i];
        bool hist = false;
        for (size_t k = 0; k < ev->nsteps && !hist; k++)
            hist = s->has[k] && storage_fh_is_box(s->v[k]);
        if (!hist) continue;
        im_buf_t b;
        im_buf_init(&b, 0);
        (void)im_buf_putc(&b, '{');
        for (uint32_t j = 0; j < s->labels->n; j++) {
            if (j) (void)im_buf_puts(&b, ", ");
            (void)im_buf_append(&b, s->labels->l[j].name->s, s->labels->l[j].name->len);
            (void)im_buf_putc(&b, '=');
            (void)im_quote_string(&b, s->labels->l[j].value->s, s->labels->l[j].value->len);
        }
        (void)im_buf_putc(&b, '}');
        rc = im_err_set(ev->err, IM_EEXEC, "this should be an info metric, with float samples: %s",
                        b.data);
        im_buf_free(&b);
    }
    promql__val_free(ev, &hv);
    return rc;
}

im_rc promql__eval_info(ev_t *ev, const promql_call_t *call, val_t *out)
{
    val_t base;
    im_rc rc = promql__eval(ev, call->args[0], &base);
    if (rc != IM_OK) return rc;
    info_ctx_t c;
    if ((rc = info_setup(ev, call->nargs > 1 ? call->args[1] : NULL, &c)) != IM_OK) {
        info_ctx_free(&c);
        promql__val_free(ev, &base);
        return rc;
    }
    /* the info series, valued with their samples' timestamps */
    promql_expr_t sel;
    memset(&sel, 0, sizeof sel);
    sel.kind = PROMQL_NODE_VECTOR_SELECTOR;
    sel.type = PROMQL_TYPE_VECTOR;
    sel.u.vs.matchers = c.ms;
    sel.u.vs.nmatchers = c.nms;
    val_t info;
    promql__val_init(&info, VAL_VECTOR);
    bool need_info = false;
    for (size_t i = 0; i < base.n && !need_info; i++)
        need_info = !is_info_series(&c, base.s[i].labels);
    bool seen = ev->nh->seen; /* whether the info selector reads a histogram: */
    ev->nh->seen = false;
    if (need_info) rc = promql__eval_timestamp_selector(ev, &sel, &info);
    if (rc == IM_OK && ev->nh->seen) rc = hist_info_error(ev, &sel);
    ev->nh->seen |= seen;
    if (rc != IM_OK) {
        promql__val_free(ev, &info);
        info_ctx_free(&c);
        promql__val_free(ev, &base);
        return rc;
    }
    uint64_t *idx = im_malloc((2 * info.n + 2) * sizeof *idx);
    for (size_t j = 0; j < info.n; j++) {
        idx[2 * j] = im_labels_hash_subset(info.s[j].labels, c.id, 2, true, false);
        idx[2 * j + 1] = j;
    }
    if (info.n > 1) qsort(idx, info.n, 2 * sizeof *idx, cmp_u64);

    promql__val_init(out, VAL_VECTOR);
    u64map_t lblmap;
    promql__map_init(&lblmap, base.n);
    size_t nsteps = ev->nsteps;
    for (size_t i = 0; i < base.n && rc == IM_OK; i++) {
        vser_t *s = &base.s[i];
        bool passthrough = is_info_series(&c, s->labels) ||
                           (!im_labels_get_istr(s->labels, c.id[0]) &&
                            !im_labels_get_istr(s->labels, c.id[1]) && c.keep_unmatched);
        for (size_t k = 0; k < nsteps && rc == IM_OK; k++) {
            if (!s->has[k]) continue;
            const im_labels_t *ls = NULL;
            if (passthrough)
                ls = im_labels_ref(s->labels);
            else if ((rc = enrich(ev, &c, &info, idx, info.n, s->labels, k, &ls)) != IM_OK)
                break;
            if (!ls) continue;
            uint32_t *slot = promql__map_slot(&lblmap, ls->hash);
            if (!*slot) {
                *slot = (uint32_t)(promql__val_add(ev, out, ls) + 1);
                out->s[*slot - 1].drop_name = s->drop_name;
                if (ev->over_limit) {
                    rc = IM_ELIMIT;
                    break;
                }
            } else {
                im_labels_unref(ls);
            }
            vser_t *o = &out->s[*slot - 1];
            if (o->has[k]) {
                rc = im_err_set(ev->err, IM_EEXEC,
                                "vector cannot contain metrics with the same labelset");
                break;
            }
            o->has[k] = 1;
            o->v[k] = s->v[k];
        }
    }
    promql__map_free(&lblmap);
    im_free(idx);
    info_ctx_free(&c);
    promql__val_free(ev, &info);
    promql__val_free(ev, &base);
    if (rc != IM_OK) promql__val_free(ev, out);
    return rc;
}
