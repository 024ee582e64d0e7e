/* test_script.c — runner for Prometheus' PromQL test-script language.
 *
 * Commands (one per line; '#' lines are comments and, as in Prometheus, end a
 * block like an empty line does):
 *   load <interval>                 followed by series lines until an empty line:
 *                                   `metric{l="v"} 0+10x100 _ stale 1-2x3 _x2 Inf`
 *   clear                           drops all data
 *   eval[_fail|_ordered|_warn] instant at <duration> <expr>
 *   eval[_fail|_ordered|_warn] range from <d> to <d> step <d> <expr>
 *                                   followed by expected lines until an empty line:
 *                                   a number (scalar), or `metric{l="v"} value(s)`
 * Samples of a load go at 0, interval, 2×interval, … (time 0 = Unix epoch).
 * Vector results are compared without order unless eval_ordered; values with
 * Prometheus' tolerance (relative 1e-6, NaN equals NaN). Evals that need native
 * histograms (`{{…}}` notation, histogram_count/sum/… functions) are skipped. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>

#include "promql/parser.h"
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
    promql_test_stats_t *st;
    char native_metrics[4096]; /* names loaded with native histograms, space-separated */
} runner_t;

static bool almost_equal(double a, double b)
{
    if (isnan(a) && isnan(b)) return true;
    if (a == b) return true;
    double abs_sum = fabs(a) + fabs(b), diff = fabs(a - b);
    if (a == 0 || b == 0 || abs_sum < MIN_NORMAL) return diff < 1e-6 * MIN_NORMAL;
    return diff / fmin(abs_sum, 1.7976931348623157e308) < 1e-6;
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
            const char *ls = p;
            while (p < end && is_name_char(*p, p == ls)) p++;
            size_t lnl = (size_t)(p - ls);
            while (p < end && (*p == ' ' || *p == '\t')) p++;
            if (!lnl || p >= end || *p != '=') goto fail;
            p++;
            while (p < end && (*p == ' ' || *p == '\t')) p++;
            im_buf_t v;
            im_buf_init(&v, 0);
            if (!parse_label_value(&p, end, &v)) {
                im_buf_free(&v);
                goto fail;
            }
            im_lb_set(&b, ls, lnl, v.data ? v.data : "", v.len);
            im_buf_free(&v);
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
                im_fmt_float_api(res->series[i].points[k].v, fb, sizeof fb);
                fprintf(r->out, " %s@%lld", fb, (long long)res->series[i].points[k].t_ms);
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
            im_fmt_float_api(ex[i].v[k], fb, sizeof fb);
            fprintf(r->out, " %s", fb);
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
        if (!almost_equal(ex[0].v[0], got)) {
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
            if (!almost_equal(ex[j].v[0], s->points[0].v)) {
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
                !almost_equal(ex[j].v[k], s->points[p].v)) {
                snprintf(why, wcap, "point mismatch for series %zu", i);
                return false;
            }
            p++;
        }
    }
    return true;
}

static bool uses_native_histograms(runner_t *r, line_t expr, line_t *exp_lines, size_t nexp)
{
    static const char *const fns[] = {"histogram_count", "histogram_sum",    "histogram_fraction",
                                      "histogram_avg",   "histogram_stddev", "histogram_stdvar"};
    for (size_t i = 0; i < IM_ARRAY_LEN(fns); i++)
        if (memmem(expr.p, expr.len, fns[i], strlen(fns[i]))) return true;
    for (size_t i = 0; i < nexp; i++)
        if (memmem(exp_lines[i].p, exp_lines[i].len, "{{", 2)) return true;
    /* a metric that was loaded with native histograms */
    const char *m = r->native_metrics;
    while (*m) {
        const char *e = strchr(m, ' ');
        size_t ml = e ? (size_t)(e - m) : strlen(m);
        if (ml && memmem(expr.p, expr.len, m, ml)) return true;
        m += ml + (e ? 1 : 0);
    }
    return false;
}

/* ---- Commands ---- */

static im_rc do_load(runner_t *r, int64_t interval, line_t *lines, size_t n, int first_line)
{
    promql_seqval_t *vals = NULL;
    size_t nv = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        line_t l = lines[i];
        if (memmem(l.p, l.len, "{{", 2)) {
            /* native histogram: remember the name, skip */
            line_t c = l;
            const im_labels_t *ls = parse_metric(&c);
            if (ls) {
                const im_istr_t *nm = im_labels_get(ls, IM_METRIC_NAME);
                size_t cur = strlen(r->native_metrics);
                if (nm && cur + nm->len + 2 < sizeof r->native_metrics) {
                    memcpy(r->native_metrics + cur, nm->s, nm->len);
                    r->native_metrics[cur + nm->len] = ' ';
                    r->native_metrics[cur + nm->len + 1] = 0;
                }
                im_labels_unref(ls);
            }
            continue;
        }
        const im_labels_t *ls = parse_metric(&l);
        nv = 0;
        if (!ls || !promql_series_values(l.p, l.len, &vals, &nv, &cap, NULL, NULL)) {
            fprintf(r->out, "%s:%d: bad series line\n", r->name, first_line + (int)i);
            if (ls) im_labels_unref(ls);
            im_free(vals);
            return IM_EPARSE;
        }
        for (size_t k = 0; k < nv; k++)
            if (!vals[k].omitted) promql_memstore_add(r->ms, ls, (int64_t)k * interval, vals[k].v);
        im_labels_unref(ls);
    }
    im_free(vals);
    return IM_OK;
}

static void free_expected(exp_series_t *ex, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (ex[i].labels) im_labels_unref(ex[i].labels);
        im_free(ex[i].v);
        im_free(ex[i].present);
    }
    im_free(ex);
}

static void do_eval(runner_t *r, line_t cmd, int lineno, line_t *exp_lines, size_t nexp)
{
    line_t l = cmd;
    bool fail = false, ordered = false, range = false;
    line_t kw = next_token(&l);
    if (kw.len == 9 && memcmp(kw.p, "eval_fail", 9) == 0)
        fail = true;
    else if (kw.len == 12 && memcmp(kw.p, "eval_ordered", 12) == 0)
        ordered = true;
    int64_t t0 = 0, t1 = 0, step = 0;
    im_err_t err;
    im_err_clear(&err);
    bool ok_syntax = true;
    if (word(&l, "instant")) {
        if (!word(&l, "at")) ok_syntax = false;
        line_t d = next_token(&l);
        if (ok_syntax && im_duration_parse(d.p, d.len, &t0, NULL) != IM_OK) ok_syntax = false;
    } else if (word(&l, "range")) {
        range = true;
        line_t d;
        if (!word(&l, "from")) ok_syntax = false;
        d = next_token(&l);
        if (ok_syntax && im_duration_parse(d.p, d.len, &t0, NULL) != IM_OK) ok_syntax = false;
        if (ok_syntax && !word(&l, "to")) ok_syntax = false;
        d = next_token(&l);
        if (ok_syntax && im_duration_parse(d.p, d.len, &t1, NULL) != IM_OK) ok_syntax = false;
        if (ok_syntax && !word(&l, "step")) ok_syntax = false;
        d = next_token(&l);
        if (ok_syntax && im_duration_parse(d.p, d.len, &step, NULL) != IM_OK) ok_syntax = false;
    } else {
        ok_syntax = false;
    }
    if (!ok_syntax) {
        fail_header(r, lineno, cmd);
        fprintf(r->out, "    cannot parse the eval command\n");
        r->st->failed++;
        return;
    }
    line_t expr = l;
    if (uses_native_histograms(r, expr, exp_lines, nexp)) {
        r->st->skipped++;
        return;
    }
    size_t nsteps = range ? (size_t)((t1 - t0) / step) + 1 : 1;
    /* expected */
    exp_series_t *ex = im_calloc(nexp + 1, sizeof *ex);
    size_t nex = 0;
    promql_seqval_t *vals = NULL;
    size_t nv = 0, cap = 0;
    for (size_t i = 0; i < nexp; i++) {
        line_t el = exp_lines[i];
        double num;
        exp_series_t *e = &ex[nex];
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
        if (!ls || !promql_series_values(el.p, el.len, &vals, &nv, &cap, NULL, NULL)) {
            if (ls) im_labels_unref(ls);
            fail_header(r, lineno, cmd);
            fprintf(r->out, "    cannot parse expected line %d\n", lineno + 1 + (int)i);
            r->st->failed++;
            free_expected(ex, nex);
            im_free(vals);
            return;
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
    }
    im_free(vals);
    IM_UNUSED(nsteps);

    promql_expr_t *ast = NULL;
    promql_result_t res;
    memset(&res, 0, sizeof res);
    im_rc rc = promql_parse(expr.p, expr.len, &ast, &err);
    if (rc == IM_OK) {
        if (range)
            rc = promql_eval_range(r->eng, promql_memstore_queryable(r->ms), ast, t0, t1, step,
                                   &res, &err);
        else
            rc = promql_eval_instant(r->eng, promql_memstore_queryable(r->ms), ast, t0, &res, &err);
    }
    if (fail) {
        if (rc == IM_OK) {
            fail_header(r, lineno, cmd);
            fprintf(r->out, "    expected an error, got a result\n");
            print_result(r, &res);
            r->st->failed++;
        } else {
            r->st->passed++;
        }
    } else if (rc != IM_OK) {
        fail_header(r, lineno, cmd);
        fprintf(r->out, "    error: %s\n", err.msg);
        print_expected(r, ex, nex);
        r->st->failed++;
    } else {
        char why[256] = "";
        bool ok;
        if (nex == 0)
            ok = (res.type == PROMQL_RESULT_VECTOR || res.type == PROMQL_RESULT_MATRIX) &&
                 res.nseries == 0;
        else
            ok = compare(r, &res, ex, nex, ordered, range, t0, step, why, sizeof why);
        if (ok) {
            r->st->passed++;
        } else {
            fail_header(r, lineno, cmd);
            if (why[0]) fprintf(r->out, "    %s\n", why);
            print_expected(r, ex, nex);
            print_result(r, &res);
            r->st->failed++;
        }
    }
    promql_result_free(&res);
    promql_expr_free(ast);
    free_expected(ex, nex);
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
        if (word(&c, "load")) {
            line_t d = next_token(&c);
            int64_t interval;
            if (im_duration_parse(d.p, d.len, &interval, NULL) != IM_OK) {
                rc = im_err_set(err, IM_EPARSE, "%s:%zu: bad load interval", name, i + 1);
                break;
            }
            rc = do_load(&r, interval, lines + i + 1, j - i - 1, (int)i + 2);
            if (rc != IM_OK) im_err_set(err, rc, "%s:%zu: bad load block", name, i + 1);
            i = j - 1;
        } else if (l.len == 5 && memcmp(l.p, "clear", 5) == 0) {
            promql_memstore_clear(r.ms);
            r.native_metrics[0] = 0;
        } else if (l.len >= 4 && memcmp(l.p, "eval", 4) == 0) {
            do_eval(&r, l, (int)i + 1, lines + i + 1, j - i - 1);
            i = j - 1;
        } else {
            rc = im_err_set(err, IM_EPARSE, "%s:%zu: unknown command \"%.*s\"", name, i + 1,
                            (int)l.len, l.p);
        }
    }
    im_free(lines);
    promql_engine_free(r.eng);
    promql_memstore_free(r.ms);
    return rc;
}
