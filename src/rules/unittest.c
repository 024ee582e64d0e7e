/* unittest.c — promtool's rule unit tests (`promtool test rules`): the test
 * file format (rule_files, evaluation_interval, group_eval_order, tests with
 * input_series in the expanding notation, alert_rule_test, promql_expr_test,
 * external_labels, external_url), evaluated as promtool 2.x evaluates them: input
 * series loaded at 0, interval, 2·interval…; every group evaluated from time 0 to
 * the largest eval_time in steps of evaluation_interval; alerts compared at the
 * evaluation covering each eval_time (firing alerts only); expressions queried
 * at their eval_time. Failure texts are promtool's. */
#include "util/base.h"

#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/yaml.h"
#include "promql/parser.h"
#include "promql/promql.h"
#include "rules/rules.h"
#include "rules/unittest.h"
#include "util/fmtfloat.h"
#include "util/timeutil.h"

/* ---- small helpers ---- */

static void errs_addbuf(rules_errs_t *e, im_buf_t *b)
{
    rules_errs_add(e, "%s", b->data ? b->data : "");
}

/* Go's time.Duration.String for whole milliseconds. */
static void go_duration(im_buf_t *b, int64_t ms)
{
    if (ms == 0) {
        (void)im_buf_puts(b, "0s");
        return;
    }
    if (ms < 0) {
        (void)im_buf_putc(b, '-');
        ms = -ms;
    }
    if (ms < 1000) {
        (void)im_buf_printf(b, "%" PRId64 "ms", ms);
        return;
    }
    int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, f = ms % 1000;
    if (h) (void)im_buf_printf(b, "%" PRId64 "h", h);
    if (h || m) (void)im_buf_printf(b, "%" PRId64 "m", m);
    (void)im_buf_printf(b, "%" PRId64, s);
    if (f) {
        char fr[8];
        snprintf(fr, sizeof fr, "%03" PRId64, f);
        int n = 3;
        while (n > 0 && fr[n - 1] == '0') n--;
        (void)im_buf_printf(b, ".%.*s", n, fr);
    }
    (void)im_buf_putc(b, 's');
}

static void model_duration(im_buf_t *b, int64_t ms)
{
    char tmp[64];
    im_duration_format(ms, tmp, sizeof tmp);
    (void)im_buf_puts(b, tmp);
}

/* labels.Labels.String(): {a="b", c="d"} with __name__ as a plain label. */
static void go_labels(im_buf_t *b, const im_labels_t *ls)
{
    (void)im_buf_putc(b, '{');
    for (uint32_t i = 0; ls && i < ls->n; i++) {
        if (i) (void)im_buf_puts(b, ", ");
        (void)im_buf_append(b, ls->l[i].name->s, ls->l[i].name->len);
        (void)im_buf_putc(b, '=');
        (void)im_quote_string(b, ls->l[i].value->s, ls->l[i].value->len);
    }
    (void)im_buf_putc(b, '}');
}

/* ---- the test file model ---- */

typedef struct exp_alert {
    const im_labels_t *labels, *annotations;
} exp_alert_t;

typedef struct alert_test {
    int64_t eval_ms;
    char *alertname;
    exp_alert_t *exp;
    size_t nexp;
} alert_test_t;

typedef struct exp_sample {
    char *labels;
    double v;
} exp_sample_t;

typedef struct expr_test {
    char *expr;
    int64_t eval_ms;
    exp_sample_t *exp;
    size_t nexp;
} expr_test_t;

typedef struct input_series {
    char *series, *values;
} input_series_t;

typedef struct test_group {
    int64_t interval_ms;
    char *name;
    input_series_t *in;
    size_t nin;
    alert_test_t *at;
    size_t nat;
    expr_test_t *et;
    size_t net;
    const im_labels_t *ext_labels;
    char *ext_url;
} test_group_t;

typedef struct test_file {
    char **rule_files;
    size_t nrule_files;
    int64_t eval_interval_ms;
    char **order;
    size_t norder;
    test_group_t *tests;
    size_t ntests;
} test_file_t;

static void free_test_file(test_file_t *tf)
{
    for (size_t i = 0; i < tf->nrule_files; i++) im_free(tf->rule_files[i]);
    im_free(tf->rule_files);
    for (size_t i = 0; i < tf->norder; i++) im_free(tf->order[i]);
    im_free(tf->order);
    for (size_t t = 0; t < tf->ntests; t++) {
        test_group_t *g = &tf->tests[t];
        im_free(g->name);
        im_free(g->ext_url);
        im_labels_unref(g->ext_labels);
        for (size_t i = 0; i < g->nin; i++) {
            im_free(g->in[i].series);
            im_free(g->in[i].values);
        }
        im_free(g->in);
        for (size_t i = 0; i < g->nat; i++) {
            im_free(g->at[i].alertname);
            for (size_t k = 0; k < g->at[i].nexp; k++) {
                im_labels_unref(g->at[i].exp[k].labels);
                im_labels_unref(g->at[i].exp[k].annotations);
            }
            im_free(g->at[i].exp);
        }
        im_free(g->at);
        for (size_t i = 0; i < g->net; i++) {
            im_free(g->et[i].expr);
            for (size_t k = 0; k < g->et[i].nexp; k++) im_free(g->et[i].exp[k].labels);
            im_free(g->et[i].exp);
        }
        im_free(g->et);
    }
    im_free(tf->tests);
}

/* ---- YAML decoding (strict, yaml.v3-like messages) ---- */

typedef struct ydec {
    im_buf_t errs; /* "\n  line N: ..." */
    char *fatal;
} ydec_t;

static bool ynull(const cfg_node_t *n)
{
    if (n->type != CFG_NODE_SCALAR || !n->plain) return false;
    return n->str[0] == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0;
}

static void ytype_err(ydec_t *d, const cfg_node_t *n, const char *into)
{
    const char *tag = n->type == CFG_NODE_MAP   ? "!!map"
                      : n->type == CFG_NODE_SEQ ? "!!seq"
                                                : "!!str";
    (void)im_buf_printf(&d->errs, "\n  line %d: cannot unmarshal %s", n->line, tag);
    if (n->type == CFG_NODE_SCALAR) {
        if (strlen(n->str) > 10)
            (void)im_buf_printf(&d->errs, " `%.7s...`", n->str);
        else
            (void)im_buf_printf(&d->errs, " `%s`", n->str);
    }
    (void)im_buf_printf(&d->errs, " into %s", into);
}

static char *ystr(ydec_t *d, const cfg_node_t *n)
{
    if (n->type != CFG_NODE_SCALAR) {
        ytype_err(d, n, "string");
        return NULL;
    }
    if (ynull(n)) return im_strdup("");
    return im_strdup(n->str);
}

static void ydur(ydec_t *d, const cfg_node_t *n, int64_t *out)
{
    char *s = ystr(d, n);
    if (!s) return;
    if (s[0] && im_duration_parse(s, strlen(s), out, NULL) != IM_OK && !d->fatal) {
        im_buf_t b;
        im_buf_init(&b, 0);
        (void)im_buf_printf(&b, "not a valid duration string: \"%s\"", s);
        d->fatal = im_buf_steal(&b, NULL);
    }
    im_free(s);
}

static void yunknown(ydec_t *d, const cfg_node_t *k, const char *type)
{
    (void)im_buf_printf(&d->errs, "\n  line %d: field %s not found in type %s", k->line,
                        k->type == CFG_NODE_SCALAR ? k->str : "?", type);
}

#define YFOR_MAP(d, n, kn, vn, kname)                                                              \
    for (size_t i_##kn = 0; i_##kn + 1 < (n)->nkids; i_##kn += 2)                                  \
        for (const cfg_node_t *kn = (n)->kids[i_##kn], *vn = (n)->kids[i_##kn + 1]; kn; kn = NULL) \
            for (const char *kname = kn->type == CFG_NODE_SCALAR ? kn->str : ""; kname;            \
                 kname = NULL)

static bool ymap(ydec_t *d, const cfg_node_t *n, const char *type)
{
    if (n->type == CFG_NODE_MAP) return true;
    if (!ynull(n)) ytype_err(d, n, type);
    return false;
}

static size_t yseq(ydec_t *d, const cfg_node_t *n, const char *type)
{
    if (n->type == CFG_NODE_SEQ) return n->nkids;
    if (!ynull(n)) ytype_err(d, n, type);
    return 0;
}

static const cfg_node_t *yitem(ydec_t *d, const cfg_node_t *n, size_t i)
{
    (void)d;
    return n->kids[i];
}

static const im_labels_t *ylabels(ydec_t *d, const cfg_node_t *n)
{
    im_labels_builder_t b;
    im_lb_init(&b);
    if (ymap(d, n, "map[string]string")) {
        YFOR_MAP(d, n, kn, vn, k)
        {
            char *v = ystr(d, vn);
            if (v) im_lb_set(&b, k, strlen(k), v, strlen(v));
            im_free(v);
        }
    }
    const im_labels_t *ls = im_lb_build(&b);
    im_lb_free(&b);
    return ls;
}

static char **ystrlist(ydec_t *d, const cfg_node_t *n, size_t *out_n)
{
    size_t cnt = yseq(d, n, "[]string");
    char **v = im_calloc(cnt ? cnt : 1, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < cnt; i++) {
        char *s = ystr(d, yitem(d, n, i));
        if (s) v[k++] = s;
    }
    *out_n = k;
    return v;
}

/* yaml.v3 float64: decimal/exponent numbers, .inf/-.inf/.nan (not "NaN"/"Inf"). */
static bool yfloat(ydec_t *d, const cfg_node_t *n, double *out)
{
    char *s = ystr(d, n);
    if (!s) return false;
    bool ok = false;
    if (strcmp(s, ".inf") == 0 || strcmp(s, ".Inf") == 0 || strcmp(s, ".INF") == 0 ||
        strcmp(s, "+.inf") == 0 || strcmp(s, "+.Inf") == 0 || strcmp(s, "+.INF") == 0) {
        *out = INFINITY;
        ok = true;
    } else if (strcmp(s, "-.inf") == 0 || strcmp(s, "-.Inf") == 0 || strcmp(s, "-.INF") == 0) {
        *out = -INFINITY;
        ok = true;
    } else if (strcmp(s, ".nan") == 0 || strcmp(s, ".NaN") == 0 || strcmp(s, ".NAN") == 0) {
        *out = NAN;
        ok = true;
    } else if (s[0] && strspn(s, "0123456789+-.eE_") == strlen(s)) {
        char *e;
        *out = strtod(s, &e);
        ok = *e == 0;
    }
    if (!ok) ytype_err(d, n, "float64");
    im_free(s);
    return ok;
}

static void dec_test_group(ydec_t *d, const cfg_node_t *n, test_group_t *g)
{
    if (!ymap(d, n, "main.testGroup")) return;
    YFOR_MAP(d, n, kn, vn, k)
    {
        if (strcmp(k, "interval") == 0) {
            ydur(d, vn, &g->interval_ms);
        } else if (strcmp(k, "name") == 0) {
            im_free(g->name);
            g->name = ystr(d, vn);
        } else if (strcmp(k, "external_labels") == 0) {
            im_labels_unref(g->ext_labels);
            g->ext_labels = ylabels(d, vn);
        } else if (strcmp(k, "external_url") == 0) {
            im_free(g->ext_url);
            g->ext_url = ystr(d, vn);
        } else if (strcmp(k, "input_series") == 0) {
            size_t cnt = yseq(d, vn, "[]main.series");
            g->in = im_calloc(cnt ? cnt : 1, sizeof *g->in);
            for (size_t i = 0; i < cnt; i++) {
                const cfg_node_t *it = yitem(d, vn, i);
                input_series_t *s = &g->in[g->nin++];
                if (!ymap(d, it, "main.series")) continue;
                YFOR_MAP(d, it, k2, v2, kk)
                {
                    if (strcmp(kk, "series") == 0) {
                        im_free(s->series);
                        s->series = ystr(d, v2);
                    } else if (strcmp(kk, "values") == 0) {
                        im_free(s->values);
                        s->values = ystr(d, v2);
                    } else {
                        yunknown(d, k2, "main.series");
                    }
                }
            }
        } else if (strcmp(k, "alert_rule_test") == 0) {
            size_t cnt = yseq(d, vn, "[]main.alertTestCase");
            g->at = im_calloc(cnt ? cnt : 1, sizeof *g->at);
            for (size_t i = 0; i < cnt; i++) {
                const cfg_node_t *it = yitem(d, vn, i);
                alert_test_t *a = &g->at[g->nat++];
                if (!ymap(d, it, "main.alertTestCase")) continue;
                YFOR_MAP(d, it, k2, v2, kk)
                {
                    if (strcmp(kk, "eval_time") == 0) {
                        ydur(d, v2, &a->eval_ms);
                    } else if (strcmp(kk, "alertname") == 0) {
                        im_free(a->alertname);
                        a->alertname = ystr(d, v2);
                    } else if (strcmp(kk, "exp_alerts") == 0) {
                        size_t ce = yseq(d, v2, "[]main.alert");
                        a->exp = im_calloc(ce ? ce : 1, sizeof *a->exp);
                        for (size_t e = 0; e < ce; e++) {
                            const cfg_node_t *ei = yitem(d, v2, e);
                            exp_alert_t *x = &a->exp[a->nexp++];
                            if (!ymap(d, ei, "main.alert")) continue;
                            YFOR_MAP(d, ei, k3, v3, k3n)
                            {
                                if (strcmp(k3n, "exp_labels") == 0) {
                                    im_labels_unref(x->labels);
                                    x->labels = ylabels(d, v3);
                                } else if (strcmp(k3n, "exp_annotations") == 0) {
                                    im_labels_unref(x->annotations);
                                    x->annotations = ylabels(d, v3);
                                } else {
                                    yunknown(d, k3, "main.alert");
                                }
                            }
                        }
                    } else {
                        yunknown(d, k2, "main.alertTestCase");
                    }
                }
            }
        } else if (strcmp(k, "promql_expr_test") == 0) {
            size_t cnt = yseq(d, vn, "[]main.promqlTestCase");
            g->et = im_calloc(cnt ? cnt : 1, sizeof *g->et);
            for (size_t i = 0; i < cnt; i++) {
                const cfg_node_t *it = yitem(d, vn, i);
                expr_test_t *t = &g->et[g->net++];
                if (!ymap(d, it, "main.promqlTestCase")) continue;
                YFOR_MAP(d, it, k2, v2, kk)
                {
                    if (strcmp(kk, "expr") == 0) {
                        im_free(t->expr);
                        t->expr = ystr(d, v2);
                    } else if (strcmp(kk, "eval_time") == 0) {
                        ydur(d, v2, &t->eval_ms);
                    } else if (strcmp(kk, "exp_samples") == 0) {
                        size_t ce = yseq(d, v2, "[]main.sample");
                        t->exp = im_calloc(ce ? ce : 1, sizeof *t->exp);
                        for (size_t e = 0; e < ce; e++) {
                            const cfg_node_t *ei = yitem(d, v2, e);
                            exp_sample_t *x = &t->exp[t->nexp++];
                            if (!ymap(d, ei, "main.sample")) continue;
                            YFOR_MAP(d, ei, k3, v3, k3n)
                            {
                                if (strcmp(k3n, "labels") == 0) {
                                    im_free(x->labels);
                                    x->labels = ystr(d, v3);
                                } else if (strcmp(k3n, "value") == 0) {
                                    (void)yfloat(d, v3, &x->v);
                                } else {
                                    yunknown(d, k3, "main.sample");
                                }
                            }
                        }
                    } else {
                        yunknown(d, k2, "main.promqlTestCase");
                    }
                }
            }
        } else {
            yunknown(d, kn, "main.testGroup");
        }
    }
}

static im_rc dec_test_file(const char *data, size_t len, test_file_t *tf, im_buf_t *msg)
{
    cfg_node_t *root = NULL;
    im_err_t perr;
    cfg_yaml_problem_t prob;
    im_err_clear(&perr);
    if (cfg_parse_yaml_ex(data, len, NULL, &root, &perr, &prob) != IM_OK) {
        if (!prob.syntax) {
            (void)im_buf_puts(msg, perr.msg);
            return IM_EPARSE;
        }
        /* go-yaml's wording: 0-based marks, the scanner's one line further */
        int line = prob.ctx_line - 1 ? prob.ctx_line - 1 : prob.line - 1;
        if (line && prob.scanner) line++;
        (void)im_buf_puts(msg, "yaml: ");
        if (line) (void)im_buf_printf(msg, "line %d: ", line);
        (void)im_buf_puts(msg, prob.problem[0] ? prob.problem : "unknown problem");
        return IM_EPARSE;
    }
    ydec_t d = {0};
    im_buf_init(&d.errs, 0);
    if (root && ymap(&d, root, "main.unitTestFile")) {
        YFOR_MAP(&d, root, kn, vn, k)
        {
            if (strcmp(k, "rule_files") == 0) {
                tf->rule_files = ystrlist(&d, vn, &tf->nrule_files);
            } else if (strcmp(k, "evaluation_interval") == 0) {
                ydur(&d, vn, &tf->eval_interval_ms);
            } else if (strcmp(k, "group_eval_order") == 0) {
                tf->order = ystrlist(&d, vn, &tf->norder);
            } else if (strcmp(k, "tests") == 0) {
                size_t cnt = yseq(&d, vn, "[]main.testGroup");
                tf->tests = im_calloc(cnt ? cnt : 1, sizeof *tf->tests);
                for (size_t i = 0; i < cnt; i++)
                    dec_test_group(&d, yitem(&d, vn, i), &tf->tests[tf->ntests++]);
            } else {
                yunknown(&d, kn, "main.unitTestFile");
            }
        }
    }
    cfg_node_free(root);
    im_rc rc = IM_OK;
    if (d.fatal) {
        (void)im_buf_puts(msg, d.fatal);
        rc = IM_EPARSE;
    } else if (d.errs.len) {
        (void)im_buf_printf(msg, "yaml: unmarshal errors:%s", d.errs.data);
        rc = IM_EPARSE;
    }
    im_free(d.fatal);
    im_buf_free(&d.errs);
    return rc;
}

/* ---- series loading ---- */

/* A series selector with only = matchers into labels (parser.ParseMetric). */
static const im_labels_t *parse_metric(const char *s, im_err_t *err)
{
    im_matcher_t **ms = NULL;
    size_t nms = 0;
    if (promql_parse_metric_selector(s, strlen(s), &ms, &nms, err) != IM_OK) return NULL;
    im_labels_builder_t b;
    im_lb_init(&b);
    bool ok = true;
    for (size_t i = 0; i < nms; i++) {
        if (im_matcher_type(ms[i]) != IM_MATCH_EQ) ok = false;
        size_t vl;
        const char *v = im_matcher_value(ms[i], &vl);
        im_lb_set(&b, im_matcher_name(ms[i])->s, im_matcher_name(ms[i])->len, v, vl);
    }
    promql_matchers_free(ms, nms);
    const im_labels_t *ls = ok ? im_lb_build(&b) : NULL;
    if (!ok) im_err_set(err, IM_EPARSE, "only = matchers are allowed in a series description");
    im_lb_free(&b);
    return ls;
}

/* ---- storage adapter over the memstore ---- */

static im_rc ms_append(void *ctx, const im_labels_t *ls, int64_t t, double v)
{
    promql_memstore_add(ctx, ls, t, v);
    return IM_OK;
}

/* ---- running one test group ---- */

typedef struct gotalert {
    const im_labels_t *labels, *annotations;
} gotalert_t;

static int ga_cmp(const void *a, const void *b)
{
    const gotalert_t *x = a, *y = b;
    int c = im_labels_compare(x->labels, y->labels);
    return c ? c : im_labels_compare(x->annotations, y->annotations);
}

static void la_string(im_buf_t *b, const gotalert_t *v, size_t n, const char *indent)
{
    if (n == 0) {
        (void)im_buf_puts(b, "[]");
        return;
    }
    (void)im_buf_puts(b, "[\n");
    for (size_t i = 0; i < n; i++) {
        if (i) (void)im_buf_puts(b, ",\n");
        (void)im_buf_printf(b, "%s%zu:\n%s  Labels:", indent, i, indent);
        go_labels(b, v[i].labels);
        (void)im_buf_printf(b, "\n%s  Annotations:", indent);
        go_labels(b, v[i].annotations);
    }
    (void)im_buf_printf(b, "\n%s]", indent);
}

typedef struct collect_ctx {
    gotalert_t *v;
    size_t n, cap;
} collect_ctx_t;

static void collect_firing(void *ctx, rules_alert_state_t st, const im_labels_t *labels,
                           const im_labels_t *annotations, int64_t active_at, int64_t fired_at,
                           double value)
{
    (void)active_at;
    (void)fired_at;
    (void)value;
    collect_ctx_t *c = ctx;
    if (st != RULES_ALERT_FIRING) return;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 8;
        c->v = im_realloc(c->v, c->cap * sizeof *c->v);
    }
    c->v[c->n].labels = im_labels_ref(labels);
    c->v[c->n].annotations = im_labels_ref(annotations);
    c->n++;
}

static void free_got(gotalert_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        im_labels_unref(v[i].labels);
        im_labels_unref(v[i].annotations);
    }
    im_free(v);
}

static int i64cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void format_sample_value(im_buf_t *b, double v)
{
    char tmp[IM_FLOAT_BUF];
    im_fmt_float_go(v, 'e', tmp, sizeof tmp);
    for (char *c = tmp; *c; c++)
        if (*c == 'e') *c = 'E';
    (void)im_buf_puts(b, tmp);
}

typedef struct psample {
    const im_labels_t *labels;
    double v;
} psample_t;

static int ps_cmp(const void *a, const void *b)
{
    return im_labels_compare(((const psample_t *)a)->labels, ((const psample_t *)b)->labels);
}

static void ps_string(im_buf_t *b, const psample_t *v, size_t n)
{
    if (n == 0) {
        (void)im_buf_puts(b, "nil");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (i) (void)im_buf_puts(b, ", ");
        go_labels(b, v[i].labels);
        (void)im_buf_putc(b, ' ');
        format_sample_value(b, v[i].v);
    }
}

static void go_quote(im_buf_t *b, const char *s)
{
    (void)im_quote_string(b, s, strlen(s));
}

static void run_group(const test_file_t *tf, test_group_t *tg, char **rule_files, size_t nrf,
                      rules_errs_t *errs)
{
    int64_t eval_interval = tf->eval_interval_ms;
    int64_t interval = tg->interval_ms ? tg->interval_ms : eval_interval;
    promql_memstore_t *ms = promql_memstore_new();
    /* input series */
    promql_seqval_t *vals = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < tg->nin; i++) {
        im_err_t err;
        im_err_clear(&err);
        const char *sd = tg->in[i].series ? tg->in[i].series : "";
        const im_labels_t *ls = parse_metric(sd, &err);
        size_t nv = 0;
        if (!ls) {
            /* as promtool: the error of parsing "series values" as one line */
            im_buf_t line;
            im_buf_init(&line, 0);
            (void)im_buf_printf(&line, "%s %s", sd, tg->in[i].values ? tg->in[i].values : "");
            im_matcher_t **lms = NULL;
            size_t nlms = 0;
            im_err_t le;
            im_err_clear(&le);
            if (promql_parse_metric_selector(line.data, line.len, &lms, &nlms, &le) == IM_OK)
                promql_matchers_free(lms, nlms);
            rules_errs_add(errs, "%s", le.msg[0] ? le.msg : err.msg);
            im_buf_free(&line);
            im_free(vals);
            promql_memstore_free(ms);
            return;
        }
        size_t boff = 0, blen = 0;
        const char *vs = tg->in[i].values ? tg->in[i].values : "";
        if (!promql_series_values(vs, strlen(vs), &vals, &nv, &cap, &boff, &blen)) {
            /* promtool parses "series values" as one line: column of the token */
            size_t col = strlen(sd) + 1 + boff + 1;
            if (blen &&
                ((vs[boff] >= 'a' && vs[boff] <= 'z') || (vs[boff] >= 'A' && vs[boff] <= 'Z')))
                rules_errs_add(
                    errs,
                    "1:%zu: parse error: unexpected identifier \"%.*s\" in series values, "
                    "expected number or \"stale\"",
                    col, (int)blen, vs + boff);
            else
                rules_errs_add(errs, "1:%zu: parse error: bad number or duration syntax: \"%.*s\"",
                               col, (int)blen, vs + boff);
            im_labels_unref(ls);
            im_free(vals);
            promql_memstore_free(ms);
            return;
        }
        for (size_t k = 0; k < nv; k++)
            if (!vals[k].omitted) promql_memstore_add(ms, ls, (int64_t)k * interval, vals[k].v);
        im_labels_unref(ls);
    }
    im_free(vals);
    /* rules */
    rules_file_t **files = im_calloc(nrf ? nrf : 1, sizeof *files);
    size_t nfiles = 0;
    for (size_t i = 0; i < nrf; i++) {
        rules_file_t *f = NULL;
        rules_errs_t fe = {0};
        if (rules_file_load(rule_files[i], &f, &fe) != IM_OK) {
            for (size_t k = 0; k < fe.n; k++) rules_errs_add(errs, "%s", fe.v[k]);
            rules_errs_free(&fe);
            for (size_t k = 0; k < nfiles; k++) rules_file_free(files[k]);
            im_free(files);
            promql_memstore_free(ms);
            return;
        }
        rules_errs_free(&fe);
        /* group intervals default to the test group's interval */
        files[nfiles++] = f;
    }
    promql_engine_opts_t eo = {.default_eval_interval_ms = eval_interval};
    promql_engine_t *eng = promql_engine_new(&eo);
    rules_opts_t ro = {
        .engine = eng,
        .storage = {.queryable = promql_memstore_queryable(ms), .append = ms_append, .ctx = ms},
        .eval_interval_ms = interval,
        .external_labels = tg->ext_labels,
        .external_url = tg->ext_url,
        .restore_for_state = false};
    rules_manager_t *m = rules_manager_new(&ro);
    rules_manager_set_files(m, files, nfiles);
    im_free(files);
    size_t ng = rules_manager_ngroups(m);
    /* group order: group_eval_order first (stable otherwise) */
    size_t *order = im_calloc(ng ? ng : 1, sizeof *order);
    int *rank = im_calloc(ng ? ng : 1, sizeof *rank);
    for (size_t i = 0; i < ng; i++) {
        order[i] = i;
        rank[i] = 0;
        for (size_t k = 0; k < tf->norder; k++)
            if (strcmp(tf->order[k], rules_manager_group(m, i)->name) == 0) rank[i] = (int)k;
    }
    for (size_t i = 1; i < ng; i++) {
        size_t x = order[i], j = i;
        while (j > 0 && rank[order[j - 1]] > rank[x]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    /* max eval time and the alert eval times */
    int64_t maxt = 0;
    int64_t *atimes = im_calloc(tg->nat ? tg->nat : 1, sizeof *atimes);
    size_t nat = 0;
    for (size_t i = 0; i < tg->nat; i++) {
        if (!tg->at[i].alertname || !tg->at[i].alertname[0]) {
            im_buf_t b;
            im_buf_init(&b, 0);
            (void)im_buf_puts(&b, "an item under alert_rule_test misses required attribute "
                                  "alertname at eval_time ");
            model_duration(&b, tg->at[i].eval_ms);
            if (tg->name && tg->name[0]) (void)im_buf_printf(&b, " (in TestGroup %s)", tg->name);
            errs_addbuf(errs, &b);
            im_buf_free(&b);
            goto out;
        }
        if (tg->at[i].eval_ms > maxt) maxt = tg->at[i].eval_ms;
        bool seen = false;
        for (size_t k = 0; k < nat; k++) seen = seen || atimes[k] == tg->at[i].eval_ms;
        if (!seen) atimes[nat++] = tg->at[i].eval_ms;
    }
    for (size_t i = 0; i < tg->net; i++)
        if (tg->et[i].eval_ms > maxt) maxt = tg->et[i].eval_ms;
    qsort(atimes, nat, sizeof *atimes, i64cmp);
    size_t curr = 0;
    for (int64_t ts = 0; ts <= maxt; ts += eval_interval) {
        bool eval_err = false;
        for (size_t oi = 0; oi < ng; oi++) {
            size_t gi = order[oi];
            rules_manager_eval_group(m, gi, ts);
            const rules_group_t *g = rules_manager_group(m, gi);
            for (size_t ri = 0; ri < g->nrules; ri++) {
                const char *e = rules_manager_rule_error(m, gi, ri);
                if (e[0]) {
                    im_buf_t b;
                    im_buf_init(&b, 0);
                    (void)im_buf_printf(&b, "    rule: %s, time: ", g->rules[ri].name);
                    go_duration(&b, ts);
                    (void)im_buf_printf(&b, ", err: %s", e);
                    errs_addbuf(errs, &b);
                    im_buf_free(&b);
                    eval_err = true;
                }
            }
        }
        if (eval_err) goto out;
        while (curr < nat && ts <= atimes[curr] && atimes[curr] < ts + eval_interval) {
            int64_t t = atimes[curr];
            for (size_t ai = 0; ai < tg->nat; ai++) {
                alert_test_t *at = &tg->at[ai];
                if (at->eval_ms != t) continue;
                collect_ctx_t got = {0};
                for (size_t gi = 0; gi < ng; gi++) {
                    const rules_group_t *g = rules_manager_group(m, gi);
                    for (size_t ri = 0; ri < g->nrules; ri++)
                        if (g->rules[ri].kind == RULES_ALERTING &&
                            strcmp(g->rules[ri].name, at->alertname) == 0)
                            rules_manager_visit_alerts(m, gi, ri, collect_firing, &got);
                }
                gotalert_t *exp = im_calloc(at->nexp ? at->nexp : 1, sizeof *exp);
                for (size_t k = 0; k < at->nexp; k++) {
                    im_labels_builder_t b;
                    im_lb_init(&b);
                    if (at->exp[k].labels) im_lb_load(&b, at->exp[k].labels);
                    im_lb_set(&b, "alertname", 9, at->alertname, strlen(at->alertname));
                    exp[k].labels = im_lb_build(&b);
                    im_lb_free(&b);
                    exp[k].annotations = at->exp[k].annotations
                                             ? im_labels_ref(at->exp[k].annotations)
                                             : im_labels_ref(im_labels_empty());
                }
                if (got.n) qsort(got.v, got.n, sizeof *got.v, ga_cmp);
                qsort(exp, at->nexp, sizeof *exp, ga_cmp);
                bool eq = got.n == at->nexp;
                for (size_t k = 0; eq && k < got.n; k++)
                    eq = im_labels_equal(got.v[k].labels, exp[k].labels) &&
                         im_labels_equal(got.v[k].annotations, exp[k].annotations);
                if (!eq) {
                    im_buf_t b;
                    im_buf_init(&b, 0);
                    if (tg->name && tg->name[0])
                        (void)im_buf_printf(&b, "    name: %s,\n", tg->name);
                    (void)im_buf_printf(&b, "    alertname: %s, time: ", at->alertname);
                    model_duration(&b, at->eval_ms);
                    (void)im_buf_puts(&b, ", \n        exp:");
                    la_string(&b, exp, at->nexp, "            ");
                    (void)im_buf_puts(&b, ", \n        got:");
                    la_string(&b, got.v, got.n, "            ");
                    errs_addbuf(errs, &b);
                    im_buf_free(&b);
                }
                free_got(exp, at->nexp);
                free_got(got.v, got.n);
            }
            curr++;
        }
    }
    /* promql expressions */
    for (size_t ei = 0; ei < tg->net; ei++) {
        expr_test_t *et = &tg->et[ei];
        const char *ex = et->expr ? et->expr : "";
        im_err_t err;
        im_err_clear(&err);
        promql_expr_t *ast = NULL;
        promql_result_t res;
        memset(&res, 0, sizeof res);
        im_rc rc = promql_parse(ex, strlen(ex), &ast, &err);
        if (rc == IM_OK)
            rc = promql_eval_instant(eng, promql_memstore_queryable(ms), ast, et->eval_ms, &res,
                                     &err);
        if (rc == IM_OK && res.type != PROMQL_RESULT_VECTOR && res.type != PROMQL_RESULT_SCALAR) {
            rc = im_err_set(&err, IM_EEXEC, "rule result is not a vector or scalar");
        }
        im_buf_t b;
        im_buf_init(&b, 0);
        if (rc != IM_OK) {
            (void)im_buf_puts(&b, "    expr: ");
            go_quote(&b, ex);
            (void)im_buf_puts(&b, ", time: ");
            model_duration(&b, et->eval_ms);
            (void)im_buf_printf(&b, ", err: %s", err.msg);
            errs_addbuf(errs, &b);
            im_buf_free(&b);
            promql_result_free(&res);
            promql_expr_free(ast);
            continue;
        }
        size_t ngot = res.type == PROMQL_RESULT_SCALAR ? 1 : res.nseries;
        psample_t *got = im_calloc(ngot ? ngot : 1, sizeof *got);
        if (res.type == PROMQL_RESULT_SCALAR) {
            got[0] = (psample_t){im_labels_ref(im_labels_empty()), res.scalar.v};
        } else {
            for (size_t i = 0; i < ngot; i++)
                got[i] = (psample_t){im_labels_ref(res.series[i].labels),
                                     res.series[i].npoints ? res.series[i].points[0].v : NAN};
        }
        psample_t *exp = im_calloc(et->nexp ? et->nexp : 1, sizeof *exp);
        size_t nexp = 0;
        bool bad = false;
        for (size_t k = 0; k < et->nexp; k++) {
            im_err_t le;
            im_err_clear(&le);
            const char *l = et->exp[k].labels ? et->exp[k].labels : "";
            const im_labels_t *ls = l[0] ? parse_metric(l, &le) : im_labels_ref(im_labels_empty());
            if (!ls) {
                (void)im_buf_puts(&b, "    expr: ");
                go_quote(&b, ex);
                (void)im_buf_puts(&b, ", time: ");
                model_duration(&b, et->eval_ms);
                (void)im_buf_puts(&b, ", err: labels ");
                go_quote(&b, l);
                (void)im_buf_printf(&b, ": %s", le.msg);
                errs_addbuf(errs, &b);
                bad = true;
                break;
            }
            exp[nexp++] = (psample_t){ls, et->exp[k].v};
        }
        if (!bad) {
            qsort(exp, nexp, sizeof *exp, ps_cmp);
            qsort(got, ngot, sizeof *got, ps_cmp);
            bool eq = nexp == ngot;
            /* reflect.DeepEqual: float ==, so NaN never equals */
            for (size_t k = 0; eq && k < nexp; k++)
                eq = im_labels_equal(exp[k].labels, got[k].labels) && exp[k].v == got[k].v;
            if (!eq) {
                (void)im_buf_puts(&b, "    expr: ");
                go_quote(&b, ex);
                (void)im_buf_puts(&b, ", time: ");
                model_duration(&b, et->eval_ms);
                (void)im_buf_puts(&b, ",\n        exp: ");
                ps_string(&b, exp, nexp);
                (void)im_buf_puts(&b, "\n        got: ");
                ps_string(&b, got, ngot);
                errs_addbuf(errs, &b);
            }
        }
        for (size_t k = 0; k < nexp; k++) im_labels_unref(exp[k].labels);
        for (size_t k = 0; k < ngot; k++) im_labels_unref(got[k].labels);
        im_free(exp);
        im_free(got);
        im_buf_free(&b);
        promql_result_free(&res);
        promql_expr_free(ast);
    }
out:
    im_free(atimes);
    im_free(order);
    im_free(rank);
    rules_manager_free(m);
    promql_engine_free(eng);
    promql_memstore_free(ms);
}

im_rc rules_unittest_file(const char *path, rules_errs_t *errs, FILE *warn)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        rules_errs_add(errs, "open %s: %s", path, strerror(errno));
        return IM_EIO;
    }
    im_buf_t data;
    im_buf_init(&data, 64u << 20);
    char tmp[65536];
    size_t r;
    while ((r = fread(tmp, 1, sizeof tmp, fp)) > 0)
        if (im_buf_append(&data, tmp, r) != IM_OK) break;
    fclose(fp);
    test_file_t tf;
    memset(&tf, 0, sizeof tf);
    im_buf_t msg;
    im_buf_init(&msg, 0);
    if (dec_test_file(data.data ? data.data : "", data.len, &tf, &msg) != IM_OK) {
        errs_addbuf(errs, &msg);
        im_buf_free(&msg);
        im_buf_free(&data);
        free_test_file(&tf);
        return IM_EPARSE;
    }
    im_buf_free(&msg);
    im_buf_free(&data);
    if (!tf.eval_interval_ms) tf.eval_interval_ms = IM_MS_PER_MINUTE;
    /* rule files: relative to the test file's directory, globbed */
    char *pcopy = im_strdup(path);
    const char *dir = dirname(pcopy);
    char **rf = NULL;
    size_t nrf = 0;
    for (size_t i = 0; i < tf.nrule_files; i++) {
        im_buf_t p;
        im_buf_init(&p, 0);
        if (tf.rule_files[i][0] && tf.rule_files[i][0] != '/' && strcmp(dir, ".") != 0)
            (void)im_buf_printf(&p, "%s/%s", dir, tf.rule_files[i]);
        else
            (void)im_buf_puts(&p, tf.rule_files[i]);
        glob_t gl;
        memset(&gl, 0, sizeof gl);
        if (glob(p.data ? p.data : "", 0, NULL, &gl) == 0 && gl.gl_pathc > 0) {
            for (size_t k = 0; k < gl.gl_pathc; k++) {
                rf = im_realloc(rf, (nrf + 1) * sizeof *rf);
                /* promtool shows paths as filepath.Join gives them */
                const char *gp = gl.gl_pathv[k];
                if (strncmp(gp, "./", 2) == 0) gp += 2;
                rf[nrf++] = im_strdup(gp);
            }
        } else if (warn) {
            fprintf(warn, "  WARNING: no file match pattern %s\n", p.data);
        }
        globfree(&gl);
        im_buf_free(&p);
    }
    im_free(pcopy);
    for (size_t i = 0; i < tf.norder; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(tf.order[i], tf.order[j]) == 0) {
                rules_errs_add(errs, "group name repeated in evaluation order: %s", tf.order[i]);
                goto done;
            }
    for (size_t t = 0; t < tf.ntests; t++) run_group(&tf, &tf.tests[t], rf, nrf, errs);
done:
    for (size_t i = 0; i < nrf; i++) im_free(rf[i]);
    im_free(rf);
    free_test_file(&tf);
    return errs->n ? IM_ERR : IM_OK;
}
