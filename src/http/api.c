/* api.c — the Prometheus HTTP API v1 handlers: query, query_range, series,
 * labels, label values, targets, metadata, rules, alerts and status pages,
 * with Prometheus' parameter parsing and error texts. */
#include "util/base.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "http/http_int.h"
#include "labels/regex.h"
#include "promql/parser.h"
#include "util/fmtfloat.h"
#include "util/log.h"
#include "util/timeutil.h"

#define MAX_POINTS 11000

/* ---- Parameter parsing ---- */

static enum MHD_Result bad_param(http_server_t *s, http__req_t *r, const char *name,
                                 const char *what)
{
    char m[1400];
    snprintf(m, sizeof m, "invalid parameter \"%s\": %s", name, what);
    return http__send_error(s, r, "bad_data", m);
}

/* Unix float or RFC 3339, and the two ends Prometheus' clients send as the
 * formatted min and max time. Out-of-range Unix times saturate (see
 * im_time_parse), so every parsed time lies in [IM_MIN_TIME_MS, IM_MAX_TIME_MS]. */
static bool parse_time(const char *v, int64_t *out)
{
    if (!strcmp(v, "-292273086-05-16T16:47:06Z")) {
        *out = IM_MIN_TIME_MS;
        return true;
    }
    if (!strcmp(v, "292277025-08-18T07:12:54.999999999Z")) {
        *out = IM_MAX_TIME_MS;
        return true;
    }
    return im_time_parse(v, strlen(v), out, NULL) == IM_OK;
}

static bool get_time(http_server_t *s, http__req_t *r, const char *name, int64_t def, int64_t *out,
                     enum MHD_Result *ret)
{
    const char *v = http__param(r, name);
    if (!v || !*v) {
        *out = def;
        return true;
    }
    if (!parse_time(v, out)) {
        char w[700];
        snprintf(w, sizeof w,
                 "Invalid time value for '%s': cannot parse \"%.500s\" to a valid timestamp", name,
                 v);
        *ret = bad_param(s, r, name, w);
        return false;
    }
    return true;
}

typedef enum { DUR_OK, DUR_BAD, DUR_OVERFLOW } dur_rc;

/* Duration as float seconds or a Prometheus duration, in nanoseconds as
 * Prometheus' parseDuration: a float must fit int64 nanoseconds (DUR_OVERFLOW,
 * "9e15", "Inf"); NaN becomes the smallest int64 (what Go's conversion gives on
 * amd64), so it is refused as a negative step and times a query out at once. */
static dur_rc parse_dur_ns(const char *v, int64_t *out_ns)
{
    double d;
    if (im_parse_go_float(v, &d)) {
        double ns = d * 1e9;
        if (isnan(ns)) {
            *out_ns = INT64_MIN;
            return DUR_OK;
        }
        if (ns >= 9223372036854775807.0 || ns < -9223372036854775808.0) return DUR_OVERFLOW;
        *out_ns = (int64_t)ns;
        return DUR_OK;
    }
    int64_t ms;
    if (im_duration_parse(v, strlen(v), &ms, NULL) != IM_OK) return DUR_BAD;
    *out_ns = ms * 1000000; /* ms <= IM_MAX_DURATION_MS */
    return DUR_OK;
}

static enum MHD_Result bad_dur(http_server_t *s, http__req_t *r, const char *name, const char *v,
                               dur_rc rc)
{
    char w[600];
    snprintf(w, sizeof w, "cannot parse \"%.500s\" to a valid duration%s", v ? v : "",
             rc == DUR_OVERFLOW ? ". It overflows int64" : "");
    return bad_param(s, r, name, w);
}

/* ---- Relaying to a query backend (--query.backend-url) ---- */

/* Answers r from the backend: its JSON as it came, or the Prometheus error
 * answer naming the backend, with the status code the backend's error has. */
static enum MHD_Result relay(http_server_t *s, http__req_t *r, query_req_t *q, const char *engine)
{
    const char *match[256];
    size_t nmatch = 0;
    for (size_t i = 0; i < r->nparams && nmatch < IM_ARRAY_LEN(match); i++)
        if (!strcmp(r->params[i].k, "match[]")) match[nmatch++] = r->params[i].v;
    if (nmatch == IM_ARRAY_LEN(match))
        return http__send_error(s, r, "bad_data",
                                "more than 255 match[] parameters: ask in several requests");
    q->match = match;
    q->nmatch = nmatch;
    q->want = QUERY_WANT_JSON;
    const char *lim = http__param(r, "limit");
    if (lim && *lim) {
        char *e;
        long long l = strtoll(lim, &e, 10);
        if (*e || l < 0) return bad_param(s, r, "limit", "limit must be a non-negative number");
        q->limit = l;
    }
    /* --query.max-concurrency bounds the requests relayed at once as it bounds
     * local evaluations: the others queue until a slot frees or the timeout
     * (--query.timeout, or a smaller timeout=) passes, with the local engine's
     * answers; a client hanging up cancels its queued or running request (the
     * watcher sets r->cancel; the HTTP client aborts the transfer on it). */
    int64_t to_ms = s->opts.engine ? promql_engine_opts(s->opts.engine)->timeout_ms : 120000;
    if (q->timeout_ms > 0 && q->timeout_ms < to_ms) to_ms = q->timeout_ms;
    int64_t now_ns = im_mono_ns();
    int64_t deadline =
        to_ms > (INT64_MAX - now_ns) / 1000000 ? INT64_MAX : now_ns + to_ms * 1000000;
    im_rc rc = http__query_enter(s, r, deadline);
    if (rc != IM_OK)
        return http__send_error(s, r, promql_error_type(rc),
                                rc == IM_ETIMEOUT ? "query timed out in query queue"
                                                  : "query was canceled in query queue");
    q->cancel = &r->cancel;
    query_answer_t a;
    im_err_t err;
    im_err_clear(&err);
    int64_t t0 = im_mono_ns();
    rc = query_backend_do(s->opts.backend, q, &a, &err);
    http__query_leave(s, r, rc);
    if (engine) http__count(s, engine, rc == IM_OK ? 0 : 1, (double)(im_mono_ns() - t0) / 1e9);
    if (rc != IM_OK)
        IM_DEBUG("Query backend error", "handler=%s err=%s", im_logq(r->handler), im_logq(err.msg));
    enum MHD_Result ret = http__send(s, r, a.http_status, "application/json", &a.json);
    query_answer_free(&a);
    return ret;
}

/* ---- Query ---- */

/* The engine for the request's timeout= (a copy with the smaller timeout when
 * it is below the configured one). A timeout of zero or less has expired
 * before the query starts: *expired is set and the caller answers 503 after the
 * query parsed, as Prometheus does. */
static promql_engine_t *engine_for(http_server_t *s, http__req_t *r, bool *own, bool *expired,
                                   enum MHD_Result *ret, bool *ok)
{
    *own = false;
    *expired = false;
    *ok = true;
    const char *to = http__param(r, "timeout");
    if (!to || !*to) return s->opts.engine;
    int64_t ns;
    dur_rc dr = parse_dur_ns(to, &ns);
    if (dr != DUR_OK) {
        *ret = bad_dur(s, r, "timeout", to, dr);
        *ok = false;
        return NULL;
    }
    if (ns <= 0) {
        *expired = true;
        return s->opts.engine;
    }
    int64_t ms = ns / 1000000 + (ns % 1000000 != 0); /* under 1ms: 1ms */
    promql_engine_opts_t o = *promql_engine_opts(s->opts.engine);
    if (ms < o.timeout_ms) {
        o.timeout_ms = ms;
        *own = true;
        return promql_engine_new(&o);
    }
    return s->opts.engine;
}

static enum MHD_Result do_query(http_server_t *s, http__req_t *r, bool range)
{
    enum MHD_Result ret = MHD_NO;
    const char *q = http__param(r, "query");
    if (!q) q = "";
    promql_query_params_t p;
    memset(&p, 0, sizeof p);
    if (range) {
        const char *sv = http__param(r, "start"), *ev = http__param(r, "end"),
                   *stv = http__param(r, "step");
        if (!sv || !parse_time(sv, &p.start_ms)) {
            char w[600];
            snprintf(w, sizeof w, "cannot parse \"%.500s\" to a valid timestamp", sv ? sv : "");
            return bad_param(s, r, "start", w);
        }
        if (!ev || !parse_time(ev, &p.end_ms)) {
            char w[600];
            snprintf(w, sizeof w, "cannot parse \"%.500s\" to a valid timestamp", ev ? ev : "");
            return bad_param(s, r, "end", w);
        }
        if (p.end_ms < p.start_ms)
            return bad_param(s, r, "end", "end timestamp must not be before start time");
        int64_t step_ns = 0;
        dur_rc dr = stv ? parse_dur_ns(stv, &step_ns) : DUR_BAD;
        if (dr != DUR_OK) return bad_dur(s, r, "step", stv, dr);
        if (step_ns <= 0)
            return bad_param(s, r, "step",
                             "zero or negative query resolution step widths are not accepted. "
                             "Try a positive integer");
        /* Points per series, as Prometheus counts them: the span in nanoseconds,
         * saturated at int64 (end - start of two extreme times does not fit),
         * over the step. */
        uint64_t span_ms = (uint64_t)p.end_ms - (uint64_t)p.start_ms;
        int64_t span_ns =
            span_ms > (uint64_t)IM_MAX_DURATION_MS ? INT64_MAX : (int64_t)span_ms * 1000000;
        if (span_ns / step_ns > MAX_POINTS)
            return http__send_error(s, r, "bad_data",
                                    "exceeded maximum resolution of 11,000 points per timeseries. "
                                    "Try decreasing the query resolution (?step=XX)");
        p.step_ms = step_ns / 1000000;
        if (p.step_ms == 0) /* Prometheus divides by this zero and answers 422 */
            return bad_param(s, r, "step",
                             "query resolution step widths under 1ms are not accepted. "
                             "Try a step of at least 0.001 (seconds) or 1ms");
    } else {
        if (!get_time(s, r, "time", im_now_ms(), &p.start_ms, &ret)) return ret;
        p.end_ms = p.start_ms;
        p.instant = true;
    }
    if (s->opts.backend) {
        query_req_t qr = {.op = range ? QUERY_RANGE : QUERY_INSTANT,
                          .expr = q,
                          .time_ms = p.start_ms,
                          .start_ms = p.start_ms,
                          .end_ms = p.end_ms,
                          .step_ms = p.step_ms};
        const char *to = http__param(r, "timeout");
        if (to && *to) {
            int64_t ns;
            dur_rc dr = parse_dur_ns(to, &ns);
            if (dr != DUR_OK) return bad_dur(s, r, "timeout", to, dr);
            qr.timeout_ms = ns <= 0 ? 1 : ns / 1000000 + (ns % 1000000 != 0);
        }
        return relay(s, r, &qr, range ? "engine:query_range" : "engine:query");
    }
    bool own, ok, expired;
    promql_engine_t *e = engine_for(s, r, &own, &expired, &ret, &ok);
    if (!ok) return ret;
    promql_expr_t *expr = NULL;
    im_err_t err;
    im_err_clear(&err);
    if (promql_parse(q, strlen(q), &expr, &err) != IM_OK) {
        if (own) promql_engine_free(e);
        return bad_param(s, r, "query", err.msg);
    }
    if (expired) {
        promql_expr_free(expr);
        return http__send_error(s, r, "timeout", "query timed out in query queue");
    }
    /* The timeout covers the wait in the query queue and the evaluation (a
     * timeout of 292 years or more never expires). */
    int64_t now_ns = im_mono_ns(), to_ms = promql_engine_opts(e)->timeout_ms;
    p.deadline_ns = to_ms > (INT64_MAX - now_ns) / 1000000 ? INT64_MAX : now_ns + to_ms * 1000000;
    p.cancel = &r->cancel;
    im_rc rc = http__query_enter(s, r, p.deadline_ns);
    if (rc != IM_OK) {
        promql_expr_free(expr);
        if (own) promql_engine_free(e);
        return http__send_error(s, r, promql_error_type(rc),
                                rc == IM_ETIMEOUT ? "query timed out in query queue"
                                                  : "query was canceled in query queue");
    }
    storage_queryable_t *qq = storage_queryable(s->opts.storage);
    promql_result_t res;
    memset(&res, 0, sizeof res);
    int64_t t0 = im_mono_ns();
    rc = promql_eval(e, qq, expr, &p, &res, &err);
    double secs = (double)(im_mono_ns() - t0) / 1e9;
    http__query_leave(s, r, rc);
    http__count(s, range ? "engine:query_range" : "engine:query", rc == IM_OK ? 0 : 1, secs);
    qq->vt->close(qq);
    promql_expr_free(expr);
    if (own) promql_engine_free(e);
    if (rc != IM_OK) return http__send_error(s, r, promql_error_type(rc), err.msg);
    return http__send_result(s, r, &res);
}

/* series, labels, label values over the backend; start/end as the request gave them. */
static enum MHD_Result relay_meta(http_server_t *s, http__req_t *r, query_op_t op,
                                  const char *label, int64_t start, int64_t end)
{
    const char *sv = http__param(r, "start"), *ev = http__param(r, "end");
    query_req_t qr = {.op = op,
                      .label = label,
                      .has_start = sv && *sv,
                      .has_end = ev && *ev,
                      .start_ms = start,
                      .end_ms = end};
    return relay(s, r, &qr, NULL);
}

/* ---- Matchers ---- */

typedef struct msets {
    im_matcher_t ***ms;
    size_t *n;
    size_t count;
} msets_t;

static void msets_free(msets_t *m)
{
    for (size_t i = 0; i < m->count; i++) promql_matchers_free(m->ms[i], m->n[i]);
    im_free(m->ms);
    im_free(m->n);
}

static uint64_t mset_errors(im_matcher_t *const *ms, size_t n)
{
    uint64_t e = 0;
    for (size_t i = 0; i < n; i++) e += im_matcher_errors(ms[i]);
    return e;
}

/* A match[] whose regex hit the regex limit while selecting (labels/regex.h)
 * fails the request: its "not selected" would make a wrong answer. */
static im_rc mset_check(im_matcher_t *const *ms, size_t n, uint64_t before, im_err_t *err)
{
    if (mset_errors(ms, n) == before) return IM_OK;
    return im_err_set(err, IM_EEXEC,
                      "regex match limit exceeded in a match[] matcher: a label value needs "
                      "more than %u backtracking steps and more DFA states than the fallback "
                      "allows; raise --regex.match-limit",
                      im_regex_get_limits().match_limit);
}

static bool get_match(http_server_t *s, http__req_t *r, msets_t *m, enum MHD_Result *ret)
{
    memset(m, 0, sizeof *m);
    size_t cnt = 0;
    for (size_t i = 0; i < r->nparams; i++)
        if (!strcmp(r->params[i].k, "match[]")) cnt++;
    m->ms = im_calloc(cnt + 1, sizeof *m->ms);
    m->n = im_calloc(cnt + 1, sizeof *m->n);
    for (size_t i = 0; i < r->nparams; i++) {
        if (strcmp(r->params[i].k, "match[]")) continue;
        im_err_t err;
        im_err_clear(&err);
        const char *v = r->params[i].v;
        if (promql_parse_metric_selector(v, strlen(v), &m->ms[m->count], &m->n[m->count], &err) !=
            IM_OK) {
            *ret = http__send_error(s, r, "bad_data", err.msg);
            msets_free(m);
            return false;
        }
        m->count++;
    }
    return true;
}

static int ls_cmp(const void *a, const void *b)
{
    return im_labels_compare(*(const im_labels_t *const *)a, *(const im_labels_t *const *)b);
}

static enum MHD_Result do_series(http_server_t *s, http__req_t *r)
{
    enum MHD_Result ret = MHD_NO;
    msets_t m;
    int64_t start, end;
    if (!get_time(s, r, "start", IM_MIN_TIME_MS, &start, &ret)) return ret;
    if (!get_time(s, r, "end", IM_MAX_TIME_MS, &end, &ret)) return ret;
    if (s->opts.backend) return relay_meta(s, r, QUERY_SERIES, NULL, start, end);
    if (!get_match(s, r, &m, &ret)) return ret;
    if (m.count == 0) {
        msets_free(&m);
        return http__send_error(s, r, "bad_data", "no match[] parameter provided");
    }
    storage_queryable_t *q = storage_queryable(s->opts.storage);
    const im_labels_t **all = NULL;
    size_t nall = 0, cap = 0;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = IM_OK;
    for (size_t i = 0; i < m.count && rc == IM_OK; i++) {
        storage_series_set_t *set = NULL;
        uint64_t before = mset_errors(m.ms[i], m.n[i]);
        rc = q->vt->select(q, start, end, m.ms[i], m.n[i], NULL, &set, &err);
        if (rc == IM_OK && (rc = mset_check(m.ms[i], m.n[i], before, &err)) != IM_OK)
            set->vt->free(set);
        if (rc != IM_OK) break;
        for (size_t k = 0; k < set->n; k++) {
            if (nall == cap) {
                cap = cap ? cap * 2 : 64;
                all = im_realloc(all, cap * sizeof *all);
            }
            all[nall++] = im_labels_ref(set->series[k].labels);
        }
        set->vt->free(set);
    }
    q->vt->close(q);
    msets_free(&m);
    if (rc != IM_OK) {
        for (size_t i = 0; i < nall; i++) im_labels_unref(all[i]);
        im_free(all);
        return http__send_error(s, r, "execution", err.msg);
    }
    if (nall > 1) qsort(all, nall, sizeof *all, ls_cmp);
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_putc(&b, '[');
    size_t out = 0;
    for (size_t i = 0; i < nall; i++) {
        if (i && im_labels_equal(all[i], all[i - 1])) continue;
        if (out++) (void)im_buf_putc(&b, ',');
        im_json_labels(&b, all[i], IM_JSON_GO);
    }
    (void)im_buf_putc(&b, ']');
    for (size_t i = 0; i < nall; i++) im_labels_unref(all[i]);
    im_free(all);
    return http__send_data(s, r, &b);
}

static int istr_cmp(const void *a, const void *b)
{
    const im_istr_t *x = *(const im_istr_t *const *)a, *y = *(const im_istr_t *const *)b;
    size_t n = IM_MIN(x->len, y->len);
    int c = memcmp(x->s, y->s, n);
    return c ? c : (x->len < y->len ? -1 : x->len > y->len);
}

bool http__label_strings(http_server_t *s, http__req_t *r, const char *value_of, int64_t start,
                         int64_t end, const im_istr_t ***out, size_t *nout, enum MHD_Result *ret)
{
    msets_t m;
    *out = NULL;
    *nout = 0;
    if (!get_match(s, r, &m, ret)) return false;
    storage_queryable_t *q = storage_queryable(s->opts.storage);
    const im_istr_t **all = NULL;
    size_t nall = 0, cap = 0;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = IM_OK;
    size_t rounds = m.count ? m.count : 1;
    for (size_t i = 0; i < rounds && rc == IM_OK; i++) {
        storage_strlist_t l;
        memset(&l, 0, sizeof l);
        im_matcher_t *const *ms = m.count ? m.ms[i] : NULL;
        size_t nms = m.count ? m.n[i] : 0;
        uint64_t before = mset_errors(ms, nms);
        rc = value_of ? q->vt->label_values(q, value_of, start, end, ms, nms, &l, &err)
                      : q->vt->label_names(q, start, end, ms, nms, &l, &err);
        if (rc == IM_OK && (rc = mset_check(ms, nms, before, &err)) != IM_OK)
            storage_strlist_free(&l);
        if (rc != IM_OK) break;
        for (size_t k = 0; k < l.n; k++) {
            if (nall == cap) {
                cap = cap ? cap * 2 : 64;
                all = im_realloc(all, cap * sizeof *all);
            }
            all[nall++] = im_istr_ref(l.v[k]);
        }
        storage_strlist_free(&l);
    }
    q->vt->close(q);
    msets_free(&m);
    if (rc != IM_OK) {
        for (size_t i = 0; i < nall; i++) im_istr_unref(all[i]);
        im_free(all);
        *ret = http__send_error(s, r, "execution", err.msg);
        return false;
    }
    if (nall > 1) qsort(all, nall, sizeof *all, istr_cmp);
    size_t o = 0; /* sorted interned strings: equal ones are the same pointer */
    for (size_t i = 0; i < nall; i++) {
        if (o && all[i] == all[o - 1]) {
            im_istr_unref(all[i]);
            continue;
        }
        all[o++] = all[i];
    }
    *out = all;
    *nout = o;
    return true;
}

static enum MHD_Result do_labels(http_server_t *s, http__req_t *r, const char *value_of)
{
    enum MHD_Result ret = MHD_NO;
    int64_t start, end;
    if (value_of && !im_label_name_valid(value_of, strlen(value_of))) {
        char w[600];
        snprintf(w, sizeof w, "invalid label name: \"%.500s\"", value_of);
        return http__send_error(s, r, "bad_data", w);
    }
    if (!get_time(s, r, "start", IM_MIN_TIME_MS, &start, &ret)) return ret;
    if (!get_time(s, r, "end", IM_MAX_TIME_MS, &end, &ret)) return ret;
    if (s->opts.backend)
        return relay_meta(s, r, value_of ? QUERY_LABEL_VALUES : QUERY_LABELS, value_of, start, end);
    const im_istr_t **all;
    size_t nall;
    if (!http__label_strings(s, r, value_of, start, end, &all, &nall, &ret)) return ret;
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_putc(&b, '[');
    for (size_t i = 0; i < nall; i++) {
        if (i) (void)im_buf_putc(&b, ',');
        im_json_string(&b, all[i]->s, all[i]->len, IM_JSON_GO);
    }
    (void)im_buf_putc(&b, ']');
    for (size_t i = 0; i < nall; i++) im_istr_unref(all[i]);
    im_free(all);
    return http__send_data(s, r, &b);
}

bool http__get_time(http_server_t *s, http__req_t *r, const char *name, int64_t def, int64_t *out,
                    enum MHD_Result *ret)
{
    return get_time(s, r, name, def, out, ret);
}

/* ---- Targets, metadata ---- */

static void ts_rfc3339(im_buf_t *b, int64_t ms)
{
    char t[64];
    if (ms == 0)
        snprintf(t, sizeof t, "0001-01-01T00:00:00Z");
    else
        im_time_format_rfc3339(ms, t, sizeof t);
    (void)im_buf_printf(b, "\"%s\"", t);
}

static void global_url(im_buf_t *b, const char *url)
{
    /* Prometheus replaces a loopback host by the machine's hostname. */
    const char *p = strstr(url, "://");
    if (!p) {
        im_json_string(b, url, strlen(url), IM_JSON_GO);
        return;
    }
    p += 3;
    const char *hosts[] = {"localhost", "127.0.0.1", "[::1]"};
    for (size_t i = 0; i < IM_ARRAY_LEN(hosts); i++) {
        size_t hl = strlen(hosts[i]);
        if (!strncmp(p, hosts[i], hl) && (p[hl] == ':' || p[hl] == '/' || !p[hl])) {
            char hn[256];
            if (gethostname(hn, sizeof hn) != 0) break;
            hn[sizeof hn - 1] = 0;
            im_buf_t u;
            im_buf_init(&u, 0);
            (void)im_buf_append(&u, url, (size_t)(p - url));
            (void)im_buf_puts(&u, hn);
            (void)im_buf_puts(&u, p + hl);
            im_json_string(b, u.data, u.len, IM_JSON_GO);
            im_buf_free(&u);
            return;
        }
    }
    im_json_string(b, url, strlen(url), IM_JSON_GO);
}

static enum MHD_Result do_targets(http_server_t *s, http__req_t *r)
{
    const char *state = http__param(r, "state");
    const char *pool = http__param(r, "scrapePool");
    bool act = !state || !*state || !strcasecmp(state, "active") || !strcasecmp(state, "any");
    bool drop = !state || !*state || !strcasecmp(state, "dropped") || !strcasecmp(state, "any");
    scrape_targets_t t;
    memset(&t, 0, sizeof t);
    if (s->opts.scrape) scrape_manager_targets(s->opts.scrape, &t);
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_puts(&b, "{\"activeTargets\":[");
    size_t n = 0;
    for (size_t i = 0; act && i < t.nactive; i++) {
        scrape_target_info_t *x = &t.active[i];
        if (pool && *pool && strcmp(pool, x->job)) continue;
        if (n++) (void)im_buf_putc(&b, ',');
        (void)im_buf_puts(&b, "{\"discoveredLabels\":");
        im_json_labels(&b, x->discovered_labels, IM_JSON_GO);
        (void)im_buf_puts(&b, ",\"labels\":");
        im_json_labels(&b, x->labels, IM_JSON_GO);
        (void)im_buf_puts(&b, ",\"scrapePool\":");
        im_json_string(&b, x->job, strlen(x->job), IM_JSON_GO);
        (void)im_buf_puts(&b, ",\"scrapeUrl\":");
        im_json_string(&b, x->url, strlen(x->url), IM_JSON_GO);
        (void)im_buf_puts(&b, ",\"globalUrl\":");
        global_url(&b, x->url);
        (void)im_buf_puts(&b, ",\"lastError\":");
        im_json_string(&b, x->last_error, strlen(x->last_error), IM_JSON_GO);
        (void)im_buf_puts(&b, ",\"lastScrape\":");
        ts_rfc3339(&b, x->last_scrape_ms);
        char f[IM_FLOAT_BUF];
        im_fmt_float_api(x->last_duration_s, f, sizeof f);
        (void)im_buf_printf(&b, ",\"lastScrapeDuration\":%s,\"health\":\"%s\"", f,
                            x->health == SCRAPE_HEALTH_UP     ? "up"
                            : x->health == SCRAPE_HEALTH_DOWN ? "down"
                                                              : "unknown");
        char iv[64], tv[64];
        im_duration_format(x->interval_ms, iv, sizeof iv);
        im_duration_format(x->timeout_ms, tv, sizeof tv);
        (void)im_buf_printf(&b, ",\"scrapeInterval\":\"%s\",\"scrapeTimeout\":\"%s\"}", iv, tv);
    }
    (void)im_buf_puts(&b, "],\"droppedTargets\":[");
    n = 0;
    for (size_t i = 0; drop && i < t.ndropped; i++) {
        scrape_target_info_t *x = &t.dropped[i];
        if (pool && *pool && strcmp(pool, x->job)) continue;
        if (n++) (void)im_buf_putc(&b, ',');
        (void)im_buf_puts(&b, "{\"discoveredLabels\":");
        im_json_labels(&b, x->discovered_labels, IM_JSON_GO);
        (void)im_buf_putc(&b, '}');
    }
    (void)im_buf_puts(&b, "]}");
    scrape_targets_free(&t);
    return http__send_data(s, r, &b);
}

static int md_cmp(const void *a, const void *b)
{
    const scrape_metadata_t *x = a, *y = b;
    int c = strcmp(x->metric, y->metric);
    if (c) return c;
    if ((c = strcmp(x->type, y->type))) return c;
    if ((c = strcmp(x->help, y->help))) return c;
    return strcmp(x->unit, y->unit);
}

static enum MHD_Result do_metadata(http_server_t *s, http__req_t *r)
{
    if (s->opts.backend) {
        const char *names[64], *values[64];
        size_t n = 0;
        for (size_t i = 0; i < r->nparams && n < IM_ARRAY_LEN(names); i++) {
            names[n] = r->params[i].k;
            values[n++] = r->params[i].v;
        }
        query_req_t qr = {.op = QUERY_API_GET,
                          .path = "metadata",
                          .param_names = names,
                          .param_values = values,
                          .nparams = n};
        return relay(s, r, &qr, NULL);
    }
    const char *metric = http__param(r, "metric");
    const char *lim = http__param(r, "limit");
    long long limit = -1; /* negative: no limit, as in Prometheus */
    if (lim && *lim) {
        char *e;
        errno = 0;
        limit = strtoll(lim, &e, 10);
        if (*e || errno == ERANGE || *lim == ' ' || (*lim >= '\t' && *lim <= '\r'))
            return http__send_error(s, r, "bad_data", "limit must be a number");
    }
    scrape_metadata_t *md = NULL;
    size_t n = 0;
    if (s->opts.scrape) scrape_manager_metadata(s->opts.scrape, &md, &n);
    if (s->rw_meta) http_rw_meta_list(s->rw_meta, &md, &n); /* remote write 2.0 */
    if (n > 1) qsort(md, n, sizeof *md, md_cmp);
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_putc(&b, '{');
    long long nmetrics = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(md[j].metric, md[i].metric)) j++;
        if ((!metric || !*metric || !strcmp(metric, md[i].metric)) &&
            (limit < 0 || nmetrics < limit)) {
            if (nmetrics++) (void)im_buf_putc(&b, ',');
            im_json_string(&b, md[i].metric, strlen(md[i].metric), IM_JSON_GO);
            (void)im_buf_puts(&b, ":[");
            for (size_t k = i; k < j; k++) {
                if (k > i && !md_cmp(&md[k], &md[k - 1])) continue;
                if (k > i) (void)im_buf_putc(&b, ',');
                (void)im_buf_puts(&b, "{\"type\":");
                im_json_string(&b, md[k].type, strlen(md[k].type), IM_JSON_GO);
                (void)im_buf_puts(&b, ",\"help\":");
                im_json_string(&b, md[k].help, strlen(md[k].help), IM_JSON_GO);
                (void)im_buf_puts(&b, ",\"unit\":");
                im_json_string(&b, md[k].unit, strlen(md[k].unit), IM_JSON_GO);
                (void)im_buf_putc(&b, '}');
            }
            (void)im_buf_putc(&b, ']');
        }
        i = j;
    }
    (void)im_buf_putc(&b, '}');
    scrape_metadata_free(md, n);
    return http__send_data(s, r, &b);
}

/* ---- Status ---- */

static enum MHD_Result do_status(http_server_t *s, http__req_t *r, const char *what)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    if (!strcmp(what, "buildinfo")) {
        (void)im_buf_printf(&b,
                            "{\"version\":\"%s\",\"revision\":\"\",\"branch\":\"\","
                            "\"buildUser\":\"\",\"buildDate\":\"\",\"goVersion\":\"\"}",
                            http__build_version());
    } else if (!strcmp(what, "query_backend")) {
        if (s->opts.backend)
            query_backend_status_json(s->opts.backend, &b);
        else
            (void)im_buf_puts(&b, "{\"type\":\"local\",\"url\":\"\"}");
    } else if (!strcmp(what, "config")) {
        im_buf_t y;
        im_buf_init(&y, 0);
        pthread_mutex_lock(&s->mu);
        if (s->cfg) (void)scrape_config_dump(s->cfg, &y);
        pthread_mutex_unlock(&s->mu);
        (void)im_buf_puts(&b, "{\"yaml\":");
        im_json_string(&b, y.data ? y.data : "", y.len, IM_JSON_GO);
        (void)im_buf_putc(&b, '}');
        im_buf_free(&y);
    } else if (!strcmp(what, "flags")) {
        (void)im_buf_putc(&b, '{');
        for (size_t i = 0; s->opts.flags && s->opts.flags[i]; i += 2) {
            if (i) (void)im_buf_putc(&b, ',');
            im_json_string(&b, s->opts.flags[i], strlen(s->opts.flags[i]), IM_JSON_GO);
            (void)im_buf_putc(&b, ':');
            const char *v = s->opts.flags[i + 1] ? s->opts.flags[i + 1] : "";
            im_json_string(&b, v, strlen(v), IM_JSON_GO);
        }
        (void)im_buf_putc(&b, '}');
    } else if (!strcmp(what, "runtimeinfo")) {
        char st[64], lc[64], cwd[1024];
        pthread_mutex_lock(&s->mu);
        im_time_format_rfc3339(s->start_ms, st, sizeof st);
        im_time_format_rfc3339(s->reload_ms, lc, sizeof lc);
        bool ok = s->reload_ok;
        pthread_mutex_unlock(&s->mu);
        if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, "?");
        storage_stats_t ts;
        memset(&ts, 0, sizeof ts);
        storage_get_stats(s->opts.storage, &ts);
        (void)im_buf_printf(&b, "{\"startTime\":\"%s\",\"CWD\":", st);
        im_json_string(&b, cwd, strlen(cwd), IM_JSON_GO);
        (void)im_buf_printf(&b,
                            ",\"reloadConfigSuccess\":%s,\"lastConfigTime\":\"%s\","
                            "\"corruptionCount\":%llu,\"goroutineCount\":0,\"GOMAXPROCS\":%ld,"
                            "\"GOGC\":\"\",\"GODEBUG\":\"\",\"storageRetention\":",
                            ok ? "true" : "false", lc,
                            (unsigned long long)(ts.wal_corruptions + ts.blocks_corrupt),
                            sysconf(_SC_NPROCESSORS_ONLN));
        const char *ret = s->opts.storage_retention ? s->opts.storage_retention : "15d";
        im_json_string(&b, ret, strlen(ret), IM_JSON_GO);
        (void)im_buf_putc(&b, '}');
    } else if (!strcmp(what, "tsdb")) {
        /* limit: as newer Prometheus versions accept it; 2.42 always gives 10 */
        size_t limit = 10;
        const char *lv = http__param(r, "limit");
        if (lv && *lv) {
            char *e;
            long long l = strtoll(lv, &e, 10);
            if (*e || l <= 0 || l > 10000) {
                im_buf_free(&b);
                return bad_param(s, r, "limit", "limit must be a positive number up to 10000");
            }
            limit = (size_t)l;
        }
        storage_stats_t ts;
        storage_get_stats(s->opts.storage, &ts);
        storage_postings_stats_t ps;
        storage_get_postings_stats(s->opts.storage, limit, &ps);
        (void)im_buf_printf(&b,
                            "{\"headStats\":{\"numSeries\":%llu,\"numLabelPairs\":%llu,"
                            "\"chunkCount\":%llu,\"minTime\":%lld,\"maxTime\":%lld}",
                            (unsigned long long)ts.head_series,
                            (unsigned long long)ps.num_label_pairs,
                            (unsigned long long)ts.head_chunks, (long long)ts.head_mint_ms,
                            (long long)ts.head_maxt_ms);
        const struct {
            const char *key;
            const storage_stat_t *v;
            size_t n;
        } lists[] = {
            {"seriesCountByMetricName", ps.series_by_metric, ps.nseries_by_metric},
            {"labelValueCountByLabelName", ps.values_by_label, ps.nvalues_by_label},
            {"memoryInBytesByLabelName", ps.bytes_by_label, ps.nbytes_by_label},
            {"seriesCountByLabelValuePair", ps.series_by_pair, ps.nseries_by_pair},
        };
        for (size_t li = 0; li < IM_ARRAY_LEN(lists); li++) {
            (void)im_buf_printf(&b, ",\"%s\":[", lists[li].key);
            for (size_t i = 0; i < lists[li].n; i++) {
                if (i) (void)im_buf_putc(&b, ',');
                (void)im_buf_puts(&b, "{\"name\":");
                const char *nm = lists[li].v[i].name;
                im_json_string(&b, nm, strlen(nm), IM_JSON_GO);
                (void)im_buf_printf(&b, ",\"value\":%llu}",
                                    (unsigned long long)lists[li].v[i].count);
            }
            (void)im_buf_putc(&b, ']');
        }
        (void)im_buf_putc(&b, '}');
        storage_postings_stats_free(&ps);
    } else {
        im_buf_free(&b);
        return http__send_text(s, r, 404, "404 page not found\n");
    }
    return http__send_data(s, r, &b);
}

enum MHD_Result http__api(http_server_t *s, http__req_t *r, const char *path)
{
    bool get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");
    bool post = !strcmp(r->method, "POST");
    /* The handler label for /metrics: the route's path (constant strings: no
     * buffer written per request, which raced between connection threads). */
    char full[256];
    snprintf(full, sizeof full, "/api/v1%s", path);
    const http__route_t *rt = http__route_find(full);
    r->handler = rt ? rt->path : "/api/v1/other";
    if (!strncmp(path, "/label/", 7)) r->handler = "/api/v1/label/:name/values";
    if (!get && !post) return http__send_text(s, r, 405, "Method Not Allowed\n");
    if (!strcmp(path, "/query")) return do_query(s, r, false);
    if (!strcmp(path, "/query_range")) return do_query(s, r, true);
    if (!strcmp(path, "/series")) return do_series(s, r);
    if (!strcmp(path, "/labels")) return do_labels(s, r, NULL);
    if (!strncmp(path, "/label/", 7) && get) {
        const char *n = path + 7;
        const char *e = strchr(n, '/');
        if (e && !strcmp(e, "/values")) {
            char name[512];
            size_t nl = IM_MIN((size_t)(e - n), sizeof name - 1);
            memcpy(name, n, nl);
            name[nl] = 0;
            return do_labels(s, r, name);
        }
    }
    if (!strcmp(path, "/openapi.yaml") && get) {
        im_buf_t y;
        im_buf_init(&y, 0);
        http__openapi_yaml(&y, http__build_version());
        return http__send(s, r, 200, "application/yaml; charset=utf-8", &y);
    }
    bool handled;
    enum MHD_Result v3 = http__api_v3(s, r, path, &handled);
    if (handled) return v3;
    v3 = http__api_search(s, r, path, &handled);
    if (handled) return v3;
    if (!strcmp(path, "/targets") && get) return do_targets(s, r);
    if (!strcmp(path, "/metadata") && get) return do_metadata(s, r);
    if ((!strcmp(path, "/rules") || !strcmp(path, "/alerts")) && get) {
        bool rules = !strcmp(path, "/rules");
        http_rules_hook_t h;
        pthread_mutex_lock(&s->mu);
        h = s->rules;
        pthread_mutex_unlock(&s->mu);
        im_buf_t b;
        im_buf_init(&b, 0);
        im_rc rc = IM_OK;
        if (rules && h.rules_json) {
            const char *t = http__param(r, "type");
            rc = h.rules_json(h.ud, t ? t : "", &b);
        } else if (!rules && h.alerts_json) {
            rc = h.alerts_json(h.ud, &b);
        } else {
            (void)im_buf_puts(&b, rules ? "{\"groups\":[]}" : "{\"alerts\":[]}");
        }
        if (rc != IM_OK) {
            im_buf_free(&b);
            return http__send_error(s, r, "internal", "error retrieving rules");
        }
        return http__send_data(s, r, &b);
    }
    if (!strncmp(path, "/status/", 8) && get) return do_status(s, r, path + 8);
    r->handler = "/api/v1/other";
    return http__send_text(s, r, 404, "404 page not found\n");
}
