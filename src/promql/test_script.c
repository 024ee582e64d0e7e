/* test_script.c — runner for Prometheus' PromQL test-script language.
 *
 * Commands (one per line; '#' lines are comments and, as in Prometheus, end a
 * block like an empty line does):
 *   load <interval>                 followed by series lines until an empty line:
 *                                   `metric{l="v"} 0+10x100 _ stale 1-2x3 _x2 Inf`
 *   load_with_nhcb <interval>       the same, and the classic histograms also
 *                                   as native histograms with custom buckets (3.x,
 *                                   nhcb.c)
 *   clear                           drops all data
 *   eval[_fail|_ordered|_warn|_info] instant at <duration> <expr>
 *   eval[_fail|_ordered|_warn|_info] range from <d> to <d> step <d> <expr>
 *                                   followed by expected lines until an empty line:
 *                                   a number (scalar), or `metric{l="v"} value(s)`
 * and, in the 3.x language, directives among the expected lines:
 *   expect fail [msg: <text> | regex: <re>]   (also expected_fail_message/_regexp)
 *   expect ordered
 *   expect warn [msg: <text>] | expect no_warn | expect info [msg: …] | no_info
 *   expect string "<s>"
 *   expect range vector from <d> to <d> step <d>   (an instant query's range vector)
 * Samples of a load go at 0, interval, 2×interval, … (time 0 = Unix epoch).
 * Vector results are compared without order unless ordered; values with
 * Prometheus' tolerance (relative 1e-6, NaN equals NaN). Annotations are checked
 * only when an expectation names them (warn = "PromQL warning: …", info =
 * "PromQL info: …"). Evals that need what this engine does not have are skipped
 * and counted by reason (promql.h, promql_skip_reason): native histograms
 * (`{{…}}`, the histogram_count/sum/… functions, load_with_nhcb) and start
 * timestamps (`metric@st` lines). */
#include "util/base.h"

#include <math.h>
#include <stdio.h>

#include "promql/nhist.h"
#include "promql/parser.h"
#include "labels/regex.h"
#include "promql/promql.h"
#include "util/fmtfloat.h"
#include "util/timeutil.h"

#define MIN_NORMAL 2.2250738585072014e-308

typedef struct line {
    const char *p;
    size_t len;
} line_t;

typedef struct exp_series {
    const im_labels_t *labels; /* NULL for a scalar */
    double *v;                 /* values (range: per step, NaN payload for missing) */
    bool *present;
    size_t n;
} exp_series_t;

typedef struct runner {
    const char *name;
    FILE *out;
    promql_memstore_t *ms;
    promql_engine_t *eng;
    promql_lang_t lang; /* the engine's, for parsing */
    promql_test_stats_t *st;
    bool nhcb;                  /* a load_with_nhcb block is loaded (until clear) */
    char native_metrics[4096];  /* names loaded with native histograms, space-separated */
    const im_labels_t **native; /* label sets loaded with native histograms (owned refs) */
    size_t nnative, cap_native;
    char st_metrics[4096]; /* names loaded with start timestamps, space-separated */
} runner_t;

static void skip(runner_t *r, promql_skip_reason_t why)
{
    r->st->skipped++;
    r->st->skipped_by[why]++;
}

const char *promql_skip_reason_str(promql_skip_reason_t why)
{
    switch (why) {
    case PROMQL_SKIP_NATIVE_HISTOGRAMS: return "native histograms";
    case PROMQL_SKIP_NHCB: return "load_with_nhcb (native histograms with custom buckets)";
    case PROMQL_SKIP_START_TIMESTAMPS: return "start timestamps";
    default: return "?";
    }
}

static bool almost_equal(double a, double b)
{
    if (isnan(a) && isnan(b)) return true;
    if (a == b) return true;
    double abs_sum = fabs(a) + fabs(b), diff = fabs(a - b);
    if (a == 0 || b == 0 || abs_sum < MIN_NORMAL) return diff < 1e-6 * MIN_NORMAL;
    return diff / fmin(abs_sum, 1.7976931348623157e308) < 1e-6;
}

/* Expected against got: floats almost equal, histograms as promql_fh_equal. */
static bool value_match(double exp, double got)
{
    const storage_fh_t *he = storage_fh_unbox(exp), *hg = storage_fh_unbox(got);
    if (he || hg) return he && hg && promql_fh_equal(he, hg, almost_equal);
    return almost_equal(exp, got);
}

/* A value as printed in failure messages. */
static const char *fmt_value(double v, char *fb, size_t cap, im_buf_t *tmp)
{
    const storage_fh_t *h = storage_fh_unbox(v);
    if (!h) {
        im_fmt_float_api(v, fb, cap);
        return fb;
    }
    im_buf_reset(tmp);
    promql_fh_format(h, tmp);
    return tmp->data;
}

static line_t trim(const char *p, size_t len)
{
    while (len && (*p == ' ' || *p == '\t' || *p == '\r')) p++, len--;
    while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r')) len--;
    return (line_t){p, len};
}

static bool word(line_t *l, const char *w)
{
    size_t n = strlen(w);
    if (l->len < n || memcmp(l->p, w, n) != 0) return false;
    if (l->len > n && l->p[n] != ' ' && l->p[n] != '\t') return false;
    *l = trim(l->p + n, l->len - n);
    return true;
}

/* A `key:` prefix, with or without a space after it (`msg:text` as `msg: text`). */
static bool key_word(line_t *l, const char *w)
{
    size_t n = strlen(w);
    if (l->len < n || memcmp(l->p, w, n) != 0) return false;
    *l = trim(l->p + n, l->len - n);
    return true;
}

static line_t next_token(line_t *l)
{
    size_t i = 0;
    while (i < l->len && l->p[i] != ' ' && l->p[i] != '\t') i++;
    line_t t = {l->p, i};
    *l = trim(l->p + i, l->len - i);
    return t;
}

/* ---- Series descriptions ---- */

static bool parse_label_value(const char **pp, const char *end, im_buf_t *out)
{
    const char *p = *pp;
    if (p >= end) return false;
    char q = *p++;
    if (q != '"' && q != '\'' && q != '`') return false;
    while (p < end && *p != q) {
        if (*p == '\\' && q != '`' && p + 1 < end) {
            p++;
            char c = *p;
            switch (c) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case '\\': c = '\\'; break;
            default: break;
            }
            (void)im_buf_putc(out, c);
            p++;
            continue;
        }
        (void)im_buf_putc(out, *p++);
    }
    if (p >= end) return false;
    *pp = p + 1;
    return true;
}

static bool is_name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
}

/* Parses `metric{a="b"}` from the start of l; returns the labels and leaves the
 * rest in l. */
static const im_labels_t *parse_metric(line_t *l)
{
    const char *p = l->p, *end = l->p + l->len;
    im_labels_builder_t b;
    im_lb_init(&b);
    const char *ns = p;
    while (p < end && is_name_char(*p, p == ns)) p++;
    if (p > ns) im_lb_set(&b, IM_METRIC_NAME, 8, ns, (size_t)(p - ns));
    if (p < end && *p == '{') {
        p++;
        for (;;) {
            while (p < end && (*p == ' ' || *p == '\t' || *p == ',')) p++;
            if (p < end && *p == '}') {
                p++;
                break;
            }
            im_buf_t qn; /* 3.x: a quoted (UTF-8) label name, or alone the metric name */
            im_buf_init(&qn, 0);
            if (p < end && *p == '"') {
                if (!parse_label_value(&p, end, &qn) || !qn.len) {
                    im_buf_free(&qn);
                    goto fail;
                }
                while (p < end && (*p == ' ' || *p == '\t')) p++;
                if (p < end && (*p == ',' || *p == '}')) {
                    im_lb_set(&b, IM_METRIC_NAME, 8, qn.data, qn.len);
                    im_buf_free(&qn);
                    continue;
                }
            }
            const char *ls = qn.len ? qn.data : p;
            if (!qn.len)
                while (p < end && is_name_char(*p, p == ls)) p++;
            size_t lnl = qn.len ? qn.len : (size_t)(p - ls);
            while (p < end && (*p == ' ' || *p == '\t')) p++;
            if (!lnl || p >= end || *p != '=') {
                im_buf_free(&qn);
                goto fail;
            }
            p++;
            while (p < end && (*p == ' ' || *p == '\t')) p++;
            im_buf_t v;
            im_buf_init(&v, 0);
            if (!parse_label_value(&p, end, &v)) {
                im_buf_free(&v);
                im_buf_free(&qn);
                goto fail;
            }
            im_lb_set(&b, ls, lnl, v.data ? v.data : "", v.len);
            im_buf_free(&v);
            im_buf_free(&qn);
        }
    } else if (p == ns) {
        goto fail;
    }
    *l = trim(p, (size_t)(end - p));
    const im_labels_t *r = im_lb_build(&b);
    im_lb_free(&b);
    return r;
fail:
    im_lb_free(&b);
    return NULL;
}

/* ---- Output helpers ---- */

static void fmt_labels(const im_labels_t *ls, im_buf_t *b)
{
    if (!ls) {
        (void)im_buf_puts(b, "scalar");
        return;
    }
    (void)im_labels_format(ls, b);
}

static void fail_header(runner_t *r, int lineno, line_t cmd)
{
    fprintf(r->out, "%s:%d: FAIL: %.*s\n", r->name, lineno, (int)cmd.len, cmd.p);
}

static void print_result(runner_t *r, const promql_result_t *res)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    char fb[IM_FLOAT_BUF];
    switch (res->type) {
    case PROMQL_RESULT_SCALAR:
        im_fmt_float_api(res->scalar.v, fb, sizeof fb);
        fprintf(r->out, "    got: scalar %s\n", fb);
        break;
    case PROMQL_RESULT_STRING: fprintf(r->out, "    got: string \"%s\"\n", res->str); break;
    default:
        fprintf(r->out, "    got: %zu series\n", res->nseries);
        for (size_t i = 0; i < res->nseries; i++) {
            im_buf_reset(&b);
            fmt_labels(res->series[i].labels, &b);
            fprintf(r->out, "      %s", b.data);
            for (size_t k = 0; k < res->series[i].npoints && k < 20; k++) {
                im_buf_t hb;
                im_buf_init(&hb, 0);
                fprintf(r->out, " %s@%lld",
                        fmt_value(res->series[i].points[k].v, fb, sizeof fb, &hb),
                        (long long)res->series[i].points[k].t_ms);
                im_buf_free(&hb);
            }
            fprintf(r->out, "\n");
        }
    }
    im_buf_free(&b);
}

static void print_expected(runner_t *r, exp_series_t *ex, size_t nex)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    char fb[IM_FLOAT_BUF];
    fprintf(r->out, "    expected: %zu %s\n", nex, nex == 1 ? "entry" : "entries");
    for (size_t i = 0; i < nex; i++) {
        im_buf_reset(&b);
        fmt_labels(ex[i].labels, &b);
        fprintf(r->out, "      %s", b.data);
        for (size_t k = 0; k < ex[i].n && k < 20; k++) {
            if (!ex[i].present[k]) {
                fprintf(r->out, " _");
                continue;
            }
            im_buf_t hb;
            im_buf_init(&hb, 0);
            fprintf(r->out, " %s", fmt_value(ex[i].v[k], fb, sizeof fb, &hb));
            im_buf_free(&hb);
        }
        fprintf(r->out, "\n");
    }
    im_buf_free(&b);
}

/* ---- Comparison ---- */

static bool compare(runner_t *r, const promql_result_t *res, exp_series_t *ex, size_t nex,
                    bool ordered, bool range, int64_t start, int64_t step, char *why, size_t wcap)
{
    if (nex == 1 && !ex[0].labels) {
        double got;
        if (res->type == PROMQL_RESULT_SCALAR)
            got = res->scalar.v;
        else if (res->type == PROMQL_RESULT_MATRIX && range && res->nseries == 1 &&
                 res->series[0].labels->n == 0)
            got = res->series[0].points[0].v;
        else {
            snprintf(why, wcap, "expected a scalar");
            return false;
        }
        if (!value_match(ex[0].v[0], got)) {
            snprintf(why, wcap, "scalar value mismatch");
            return false;
        }
        return true;
    }
    if (res->type == PROMQL_RESULT_SCALAR || res->type == PROMQL_RESULT_STRING) {
        snprintf(why, wcap, "expected a vector, got a %s",
                 res->type == PROMQL_RESULT_SCALAR ? "scalar" : "string");
        return false;
    }
    if (res->nseries != nex) {
        snprintf(why, wcap, "expected %zu series, got %zu", nex, res->nseries);
        return false;
    }
    IM_UNUSED(r);
    for (size_t i = 0; i < res->nseries; i++) {
        const promql_series_t *s = &res->series[i];
        size_t j = 0;
        for (; j < nex; j++)
            if (im_labels_equal(ex[j].labels, s->labels)) break;
        if (j == nex) {
            snprintf(why, wcap, "unexpected series in the result");
            return false;
        }
        if (ordered && j != i) {
            snprintf(why, wcap, "series at position %zu expected at %zu", i, j);
            return false;
        }
        if (!range) {
            if (!value_match(ex[j].v[0], s->points[0].v)) {
                snprintf(why, wcap, "value mismatch for series %zu", i);
                return false;
            }
            continue;
        }
        size_t np = 0;
        for (size_t k = 0; k < ex[j].n; k++) np += ex[j].present[k];
        if (np != s->npoints) {
            snprintf(why, wcap, "point count mismatch for series %zu", i);
            return false;
        }
        size_t p = 0;
        for (size_t k = 0; k < ex[j].n; k++) {
            if (!ex[j].present[k]) continue;
            if (s->points[p].t_ms != start + (int64_t)k * step ||
                !value_match(ex[j].v[k], s->points[p].v)) {
                snprintf(why, wcap, "point mismatch for series %zu", i);
                return false;
            }
            p++;
        }
    }
    return true;
}

static bool mentions(line_t expr, const char *names)
{
    const char *m = names;
    while (*m) {
        const char *e = strchr(m, ' ');
        size_t ml = e ? (size_t)(e - m) : strlen(m);
        if (ml && memmem(expr.p, expr.len, m, ml)) return true;
        m += ml + (e ? 1 : 0);
    }
    return false;
}

static void remember_name(char *names, size_t cap, const im_labels_t *ls)
{
    const im_istr_t *nm = im_labels_get(ls, IM_METRIC_NAME);
    size_t cur = strlen(names);
    if (nm && cur + nm->len + 2 < cap) {
        memcpy(names + cur, nm->s, nm->len);
        names[cur + nm->len] = ' ';
        names[cur + nm->len + 1] = 0;
    }
}

static void forget_native(runner_t *r)
{
    for (size_t i = 0; i < r->nnative; i++) im_labels_unref(r->native[i]);
    r->nnative = 0;
    r->native_metrics[0] = 0;
}

typedef struct sel_ctx {
    runner_t *r;
    bool hit;
} sel_ctx_t;

/* Does a selector of the tree select a series loaded as a native histogram
 * (`{job="x"}`, `{__name__=~"a(_histogram)?"}` do without naming it)? */
static bool native_selected(const promql_expr_t *e, void *vctx)
{
    sel_ctx_t *c = vctx;
    if (c->hit || e->kind != PROMQL_NODE_VECTOR_SELECTOR) return !c->hit;
    for (size_t i = 0; i < c->r->nnative && !c->hit; i++) {
        bool all = true;
        for (size_t m = 0; m < e->u.vs.nmatchers && all; m++) {
            const im_matcher_t *mt = e->u.vs.matchers[m];
            const im_istr_t *v = im_labels_get_istr(c->r->native[i], im_matcher_name(mt));
            all = im_matcher_matches(mt, v ? v->s : "", v ? v->len : 0);
        }
        c->hit = all;
    }
    return true;
}

/* Why the eval cannot run here, or -1. */
static int skip_reason(runner_t *r, line_t expr, line_t *exp_lines, size_t nexp)
{
    IM_UNUSED(exp_lines);
    IM_UNUSED(nexp);
    if (mentions(expr, r->st_metrics)) return PROMQL_SKIP_START_TIMESTAMPS;
    return -1;
}

/* ---- Commands ---- */

static im_rc do_load(runner_t *r, int64_t interval, line_t *lines, size_t n, int first_line,
                     bool nhcb)
{
    promql_seqval_t *vals = NULL;
    size_t nv = 0, cap = 0;
    /* load_with_nhcb: every series kept for the conversion */
    const im_labels_t **kl = nhcb ? im_calloc(n + 1, sizeof *kl) : NULL;
    promql_seqval_t **kv = nhcb ? im_calloc(n + 1, sizeof *kv) : NULL;
    size_t *kn = nhcb ? im_calloc(n + 1, sizeof *kn) : NULL, nk = 0;
    im_rc rc = IM_OK;
    for (size_t i = 0; i < n; i++) {
        line_t l = lines[i];
        const im_labels_t *ls = parse_metric(&l);
        if (ls && l.len >= 3 && memcmp(l.p, "@st", 3) == 0) {
            /* start timestamps of the series (3.x): not stored here */
            remember_name(r->st_metrics, sizeof r->st_metrics, ls);
            im_labels_unref(ls);
            continue;
        }
        nv = 0;
        if (!ls || !promql_series_values_nh(l.p, l.len, &vals, &nv, &cap)) {
            fprintf(r->out, "%s:%d: bad series line\n", r->name, first_line + (int)i);
            if (ls) im_labels_unref(ls);
            promql_seqvals_free_hists(vals, nv);
            rc = IM_EPARSE;
            break;
        }
        for (size_t k = 0; k < nv; k++)
            if (!vals[k].omitted) promql_memstore_add(r->ms, ls, (int64_t)k * interval, vals[k].v);
        if (nhcb) {
            kl[nk] = im_labels_ref(ls);
            kv[nk] = im_malloc((nv + 1) * sizeof **kv);
            if (nv) memcpy(kv[nk], vals, nv * sizeof **kv);
            kn[nk++] = nv;
        } else {
            promql_seqvals_free_hists(vals, nv);
        }
        im_labels_unref(ls);
    }
    if (nhcb && rc == IM_OK) promql_nhcb_add(r->ms, kl, kv, kn, nk, interval);
    for (size_t i = 0; i < nk; i++) {
        im_labels_unref(kl[i]);
        promql_seqvals_free_hists(kv[i], kn[i]);
        im_free(kv[i]);
    }
    im_free(kl);
    im_free(kv);
    im_free(kn);
    im_free(vals);
    return rc;
}

static void free_expected(exp_series_t *ex, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (ex[i].labels) im_labels_unref(ex[i].labels);
        for (size_t k = 0; k < ex[i].n; k++) {
            const storage_fh_t *h = storage_fh_unbox(ex[i].v[k]);
            if (h) im_free((void *)h);
        }
        im_free(ex[i].v);
        im_free(ex[i].present);
    }
    im_free(ex);
}

/* What an eval expects besides its series: the 3.x `expect …` directives and the
 * older eval_* keywords folded into one. */
typedef struct expect {
    bool fail, ordered;
    line_t fail_msg, fail_re;  /* len 0 = any error */
    int warn, info;            /* 1 expected, -1 forbidden, 0 not checked */
    line_t warn_msg, info_msg; /* len 0 = any */
    bool string;
    im_buf_t str; /* the expected string (unquoted) */
    bool range_vec;
    int64_t rv_from, rv_to, rv_step;
} expect_t;

static bool parse_duration_tok(line_t *l, int64_t *out)
{
    line_t d = next_token(l);
    return d.len && im_duration_parse(d.p, d.len, out, NULL) == IM_OK;
}

/* One directive (after "expect "); false when it is malformed. */
static bool parse_expect(line_t l, expect_t *x)
{
    if (word(&l, "fail")) {
        x->fail = true;
        if (key_word(&l, "msg:"))
            x->fail_msg = l;
        else if (key_word(&l, "regex:"))
            x->fail_re = l;
        else if (l.len)
            return false;
        return true;
    }
    if (word(&l, "ordered")) return l.len == 0 && (x->ordered = true);
    if (word(&l, "no_warn")) return l.len == 0 && (x->warn = -1);
    if (word(&l, "no_info")) return l.len == 0 && (x->info = -1);
    bool w = false;
    if ((w = word(&l, "warn")) || word(&l, "info")) {
        int *which = w ? &x->warn : &x->info;
        line_t *msg = w ? &x->warn_msg : &x->info_msg;
        *which = 1;
        if (key_word(&l, "msg:"))
            *msg = l;
        else if (l.len)
            return false;
        return true;
    }
    if (word(&l, "string")) {
        const char *p = l.p, *end = l.p + l.len;
        x->string = true;
        im_buf_reset(&x->str);
        if (!parse_label_value(&p, end, &x->str)) return false;
        return p == end;
    }
    if (word(&l, "range")) {
        x->range_vec = true;
        return word(&l, "vector") && word(&l, "from") && parse_duration_tok(&l, &x->rv_from) &&
               word(&l, "to") && parse_duration_tok(&l, &x->rv_to) && word(&l, "step") &&
               parse_duration_tok(&l, &x->rv_step) && l.len == 0 && x->rv_step > 0;
    }
    return false;
}

/* Does the result's annotation list satisfy want (prefix "PromQL warning:" or
 * "PromQL info:") for the expectation state/msg? Writes why not. */
static bool check_annotations(const promql_result_t *res, const char *prefix, int state, line_t msg,
                              char *why, size_t wcap)
{
    if (!state) return true;
    size_t pl = strlen(prefix);
    bool any = false, exact = false;
    for (size_t i = 0; i < res->nwarnings; i++) {
        const char *w = res->warnings[i];
        if (strncmp(w, prefix, pl) != 0) continue;
        any = true;
        if (msg.len && strlen(w) == msg.len && memcmp(w, msg.p, msg.len) == 0) exact = true;
    }
    if (state < 0 && any) {
        snprintf(why, wcap, "unexpected annotation \"%s…\"", prefix);
        return false;
    }
    if (state > 0 && !any) {
        snprintf(why, wcap, "expected an annotation \"%s…\", got none", prefix);
        return false;
    }
    if (state > 0 && msg.len && !exact) {
        snprintf(why, wcap, "expected the annotation \"%.*s\"", (int)msg.len, msg.p);
        return false;
    }
    return true;
}

static bool error_matches(const expect_t *x, const char *msg)
{
    if (x->fail_msg.len)
        return strlen(msg) == x->fail_msg.len && memcmp(msg, x->fail_msg.p, x->fail_msg.len) == 0;
    if (x->fail_re.len) {
        im_regex_t *re;
        if (im_regex_compile(x->fail_re.p, x->fail_re.len, IM_REGEX_SEARCH, &re, NULL) != IM_OK)
            return false;
        int m = im_regex_match(re, msg, strlen(msg), NULL);
        im_regex_free(re);
        return m == 1;
    }
    return true;
}

static void do_eval(runner_t *r, line_t cmd, int lineno, line_t *exp_lines, size_t nexp)
{
    line_t l = cmd;
    bool range = false;
    expect_t x;
    memset(&x, 0, sizeof x);
    im_buf_init(&x.str, 0);
    line_t kw = next_token(&l);
    if (kw.len == 9 && memcmp(kw.p, "eval_fail", 9) == 0)
        x.fail = true;
    else if (kw.len == 12 && memcmp(kw.p, "eval_ordered", 12) == 0)
        x.ordered = true;
    else if (kw.len == 9 && memcmp(kw.p, "eval_warn", 9) == 0)
        x.warn = 1;
    else if (kw.len == 9 && memcmp(kw.p, "eval_info", 9) == 0)
        x.info = 1;
    int64_t t0 = 0, t1 = 0, step = 0;
    im_err_t err;
    im_err_clear(&err);
    bool ok_syntax = true;
    if (word(&l, "instant")) {
        ok_syntax = word(&l, "at") && parse_duration_tok(&l, &t0);
    } else if (word(&l, "range")) {
        range = true;
        ok_syntax = word(&l, "from") && parse_duration_tok(&l, &t0) && word(&l, "to") &&
                    parse_duration_tok(&l, &t1) && word(&l, "step") &&
                    parse_duration_tok(&l, &step) && step > 0;
    } else {
        ok_syntax = false;
    }
    if (!ok_syntax) {
        fail_header(r, lineno, cmd);
        fprintf(r->out, "    cannot parse the eval command\n");
        r->st->failed++;
        im_buf_free(&x.str);
        return;
    }
    line_t expr = l;
    int why_skip = skip_reason(r, expr, exp_lines, nexp);
    if (why_skip >= 0) {
        skip(r, (promql_skip_reason_t)why_skip);
        im_buf_free(&x.str);
        return;
    }
    /* expected */
    exp_series_t *ex = im_calloc(nexp + 1, sizeof *ex);
    size_t nex = 0;
    promql_seqval_t *vals = NULL;
    size_t nv = 0, cap = 0;
    for (size_t i = 0; i < nexp; i++) {
        line_t el = exp_lines[i];
        double num;
        exp_series_t *e = &ex[nex];
        if (word(&el, "expect")) {
            if (parse_expect(el, &x)) continue;
            goto bad_line;
        }
        if (word(&el, "expected_fail_message")) {
            x.fail = true;
            x.fail_msg = el;
            continue;
        }
        if (word(&el, "expected_fail_regexp")) {
            x.fail = true;
            x.fail_re = el;
            continue;
        }
        if (im_parse_float(el.p, el.len, &num)) {
            e->v = im_malloc(sizeof(double));
            e->present = im_malloc(sizeof(bool));
            e->v[0] = num;
            e->present[0] = true;
            e->n = 1;
            nex++;
            continue;
        }
        const im_labels_t *ls = parse_metric(&el);
        nv = 0;
        if (!ls || !promql_series_values_nh(el.p, el.len, &vals, &nv, &cap)) {
            promql_seqvals_free_hists(vals, nv);
            if (ls) im_labels_unref(ls);
            goto bad_line;
        }
        e->labels = ls;
        e->n = nv;
        e->v = im_malloc((nv + 1) * sizeof(double));
        e->present = im_malloc((nv + 1) * sizeof(bool));
        for (size_t k = 0; k < nv; k++) {
            e->v[k] = vals[k].v;
            e->present[k] = !vals[k].omitted;
        }
        nex++;
        continue;
    bad_line:
        fail_header(r, lineno, cmd);
        fprintf(r->out, "    cannot parse expected line %d\n", lineno + 1 + (int)i);
        r->st->failed++;
        free_expected(ex, nex);
        im_free(vals);
        im_buf_free(&x.str);
        return;
    }
    im_free(vals);

    promql_expr_t *ast = NULL;
    promql_result_t res;
    memset(&res, 0, sizeof res);
    im_rc rc = promql_parse_lang(expr.p, expr.len, &r->lang, &ast, &err);
    sel_ctx_t sc = {r, false};
    if (rc == IM_OK) promql_expr_walk(ast, native_selected, &sc);
    if (sc.hit) {
        skip(r, PROMQL_SKIP_NATIVE_HISTOGRAMS);
        promql_expr_free(ast);
        free_expected(ex, nex);
        im_buf_free(&x.str);
        return;
    }
    if (rc == IM_OK) {
        if (range)
            rc = promql_eval_range(r->eng, promql_memstore_queryable(r->ms), ast, t0, t1, step,
                                   &res, &err);
        else
            rc = promql_eval_instant(r->eng, promql_memstore_queryable(r->ms), ast, t0, &res, &err);
    }
    char why[IM_ERR_MSG_MAX + 64] = "";
    bool ok;
    if (x.fail) {
        ok = rc != IM_OK && error_matches(&x, err.msg);
        if (rc == IM_OK)
            snprintf(why, sizeof why, "expected an error, got a result");
        else if (!ok)
            snprintf(why, sizeof why, "error \"%s\" is not the one expected", err.msg);
    } else if (rc != IM_OK) {
        ok = false;
        snprintf(why, sizeof why, "error: %s", err.msg);
    } else if (x.string) {
        ok = res.type == PROMQL_RESULT_STRING && res.str_len == x.str.len &&
             memcmp(res.str, x.str.data ? x.str.data : "", x.str.len) == 0;
        if (!ok)
            snprintf(why, sizeof why, "expected the string \"%.*s\"", (int)x.str.len,
                     x.str.data ? x.str.data : "");
    } else if (nex == 0) {
        ok = (res.type == PROMQL_RESULT_VECTOR || res.type == PROMQL_RESULT_MATRIX) &&
             res.nseries == 0;
    } else if (x.range_vec) {
        ok = res.type == PROMQL_RESULT_MATRIX &&
             compare(r, &res, ex, nex, x.ordered, true, x.rv_from, x.rv_step, why, sizeof why);
        if (res.type != PROMQL_RESULT_MATRIX) snprintf(why, sizeof why, "expected a range vector");
    } else {
        ok = compare(r, &res, ex, nex, x.ordered, range, t0, step, why, sizeof why);
    }
    if (ok && rc == IM_OK)
        ok = check_annotations(&res, "PromQL warning:", x.warn, x.warn_msg, why, sizeof why) &&
             check_annotations(&res, "PromQL info:", x.info, x.info_msg, why, sizeof why);
    if (ok) {
        r->st->passed++;
    } else {
        fail_header(r, lineno, cmd);
        if (why[0]) fprintf(r->out, "    %s\n", why);
        if (!x.fail) print_expected(r, ex, nex);
        if (rc == IM_OK) print_result(r, &res);
        r->st->failed++;
    }
    promql_result_free(&res);
    promql_expr_free(ast);
    free_expected(ex, nex);
    im_buf_free(&x.str);
}

im_rc promql_test_run(const char *name, const char *text, size_t len, void *outp,
                      promql_test_stats_t *st, im_err_t *err)
{
    return promql_test_run_opts(name, text, len, outp, NULL, st, err);
}

im_rc promql_test_run_opts(const char *name, const char *text, size_t len, void *outp,
                           const promql_engine_opts_t *opts, promql_test_stats_t *st, im_err_t *err)
{
    runner_t r = {.name = name, .out = outp, .st = st};
    r.ms = promql_memstore_new();
    r.eng = promql_engine_new(opts);
    r.lang = promql_engine_opts(r.eng)->lang;
    /* split into trimmed lines; comments become empty lines */
    size_t cap = 256, n = 0;
    line_t *lines = im_malloc(cap * sizeof *lines);
    for (size_t i = 0; i <= len;) {
        size_t j = i;
        while (j < len && text[j] != '\n') j++;
        line_t l = trim(text + i, j - i);
        if (l.len && l.p[0] == '#') l.len = 0;
        if (n == cap) {
            cap *= 2;
            lines = im_realloc(lines, cap * sizeof *lines);
        }
        lines[n++] = l;
        i = j + 1;
        if (j >= len) break;
    }
    im_rc rc = IM_OK;
    for (size_t i = 0; i < n && rc == IM_OK; i++) {
        line_t l = lines[i];
        if (!l.len) continue;
        size_t j = i + 1;
        while (j < n && lines[j].len) j++;
        line_t c = l;
        bool nhcb = word(&c, "load_with_nhcb");
        if (nhcb || word(&c, "load")) {
            line_t d = next_token(&c);
            int64_t interval;
            if (im_duration_parse(d.p, d.len, &interval, NULL) != IM_OK) {
                rc = im_err_set(err, IM_EPARSE, "%s:%zu: bad load interval", name, i + 1);
                break;
            }
            rc = do_load(&r, interval, lines + i + 1, j - i - 1, (int)i + 2, nhcb);
            if (rc != IM_OK) im_err_set(err, rc, "%s:%zu: bad load block", name, i + 1);
            i = j - 1;
        } else if (l.len == 5 && memcmp(l.p, "clear", 5) == 0) {
            promql_memstore_clear(r.ms);
            forget_native(&r);
            r.st_metrics[0] = 0;
            r.nhcb = false;
        } else if (l.len >= 4 && memcmp(l.p, "eval", 4) == 0) {
            do_eval(&r, l, (int)i + 1, lines + i + 1, j - i - 1);
            i = j - 1;
        } else {
            rc = im_err_set(err, IM_EPARSE, "%s:%zu: unknown command \"%.*s\"", name, i + 1,
                            (int)l.len, l.p);
        }
    }
    im_free(lines);
    forget_native(&r);
    im_free(r.native);
    promql_engine_free(r.eng);
    promql_memstore_free(r.ms);
    return rc;
}
