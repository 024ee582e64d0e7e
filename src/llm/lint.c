/* lint.c — the checks of `infermon lint` over one PromQL expression at a time:
 * names against the sources and the catalog (unknown, deprecated, removed,
 * suffixes, prefixes, conditional families), types (rate on a gauge, a counter
 * read as a level), histograms (quantiles without le, per series, φ range,
 * thresholds inside bucket gaps or above the top bucket), labels (never carried,
 * never matching), units (tokens over requests, _sum rates as latencies, sums of
 * ratios) and windows (rate of a sum, ranges under two scrape intervals, short
 * `for`). Every check stays quiet when the sources cannot tell. */
#include "util/base.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>

#include "llm/lint_int.h"
#include "llm/serving.h"
#include "promql/ast.h"
#include "promql/parser.h"
#include "util/fmtfloat.h"
#include "util/timeutil.h"

#define MAX_DEPTH   256
#define MAX_LABELS  64
#define MAX_FINDING 100000

/* One vector selector of a dashboard query, for the checks across its queries
 * (lint__dashboard_vars): the metric's family prefix, the labels it has
 * matchers on, and which of those take their value from a dashboard variable. */
#define SELREC_LABELS 8
typedef struct selrec {
    char *path; /* owned */
    char prefix[48];
    char name[96];
    char labels[SELREC_LABELS][40];
    uint8_t nlabels, var_mask;
    const lname_t *known; /* the name's entry in the sources (borrowed), or NULL */
    char by[4][40];       /* labels of enclosing `by (…)` aggregations */
    uint8_t nby;
} selrec_t;

struct lint_run {
    const lint_names_t *names;
    llm_version_t version; /* effective vLLM version (may be unknown) */
    bool version_given;
    lint_finding_t *f;
    size_t n, cap;
    size_t nqueries;
    selrec_t *sel;
    size_t nsel, capsel;
};

const char *lint_severity_name(lint_severity_t s)
{
    switch (s) {
    case LINT_SEV_ERROR: return "error";
    case LINT_SEV_WARNING: return "warning";
    default: return "info";
    }
}

lint_run_t *lint_run_new(const lint_names_t *names, const lint_opts_t *opts)
{
    lint_run_t *r = im_calloc(1, sizeof(*r));
    r->names = names;
    if (opts && opts->vllm_version.known) {
        r->version = opts->vllm_version;
        r->version_given = true;
    } else {
        r->version = lint_names_vllm_version(names);
    }
    return r;
}

static void finding_free(lint_finding_t *f)
{
    im_free(f->file);
    im_free(f->path);
    im_free(f->expr);
    im_free(f->message);
    im_free(f->fix);
    im_free(f->fixed_expr);
    im_free(f->orig_expr);
    im_free(f->edit_text);
}

void lint_run_free(lint_run_t *r)
{
    if (r)
        for (size_t i = 0; i < r->nsel; i++) im_free(r->sel[i].path);
    if (r) im_free(r->sel);
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) finding_free(&r->f[i]);
    im_free(r->f);
    im_free(r);
}

size_t lint_run_findings(const lint_run_t *r, const lint_finding_t **out)
{
    *out = r->f;
    return r->n;
}

void lint__finding_move(lint_run_t *r, size_t i, int line, int col)
{
    if (i >= r->n) return;
    r->f[i].line = line;
    r->f[i].col = col;
}

size_t lint_run_count(const lint_run_t *r, lint_severity_t sev)
{
    size_t c = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->f[i].severity == sev) c++;
    return c;
}

size_t lint_run_queries(const lint_run_t *r)
{
    return r->nqueries;
}

static char *vfmt(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static char *vfmt(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) n = 0;
    char *s = im_malloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

static char *dupn(const char *s)
{
    return s ? im_strdup(s) : NULL;
}

static lint_finding_t *add_finding(lint_run_t *r)
{
    if (r->n >= MAX_FINDING) return NULL;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 32;
        r->f = im_realloc(r->f, r->cap * sizeof(*r->f));
    }
    lint_finding_t *f = &r->f[r->n++];
    memset(f, 0, sizeof(*f));
    return f;
}

void lint_note(lint_run_t *r, const char *check, lint_severity_t sev, const char *file, int line,
               int col, const char *path, const char *fmt, ...)
{
    lint_finding_t *f = add_finding(r);
    if (!f) return;
    f->check = check;
    f->severity = sev;
    f->file = dupn(file);
    f->line = line;
    f->col = col;
    f->path = dupn(path);
    va_list ap;
    va_start(ap, fmt);
    f->message = vfmt(fmt, ap);
    va_end(ap);
}

/* ---- Per-query context ---- */

typedef struct labelset {
    bool any;     /* unknown: anything goes */
    bool open;    /* more labels may be added by relabelling / target labels */
    int exporter; /* catalog exporter of the selector (-1 = unknown/mixed) */
    const char *names[MAX_LABELS];
    size_t lens[MAX_LABELS];
    int n;
} labelset_t;

typedef struct q {
    lint_run_t *r;
    const lint_where_t *w;
    const char *expr;
    size_t len;
    const promql_expr_t *stack[MAX_DEPTH];
    int depth;
    int64_t max_range_ms;
    bool latency_quantile;
    int record_depth; /* recorded quantiles followed (a record of a record …) */
    char recfam[256]; /* the histogram behind a recorded quantile */
} q_t;

static int64_t longest_range(const promql_expr_t *e, int depth);
static bool multiwindow(const promql_expr_t *e, int depth);
struct sel;
static const double *record_buckets(const struct q *cq, const struct sel *s, size_t *n,
                                    const char **fam, bool *latency, int64_t *range_ms);

static bool in_subst(const q_t *q, const promql_expr_t *e)
{
    for (size_t i = 0; i < q->w->nsubst; i++)
        if (q->w->subst[i][0] < e->pos_end && q->w->subst[i][1] > e->pos_start) return true;
    return false;
}

/* Checks whose info findings say "not checked" about a name: once per file. */
static bool once_per_file(const char *check)
{
    return strcmp(check, "other-exporter") == 0 || strcmp(check, "conditional-metric") == 0 ||
           strcmp(check, "unknown-metric") == 0;
}

static lint_finding_t *same_note(lint_run_t *r, const char *check, const char *file,
                                 const char *msg)
{
    size_t ml = strlen(msg);
    for (size_t i = 0; i < r->n; i++) {
        lint_finding_t *f = &r->f[i];
        if (f->check != check || f->severity != LINT_SEV_INFO) continue;
        if ((f->file == NULL) != (file == NULL) || (file && strcmp(f->file, file) != 0)) continue;
        if (f->msg_base == ml && memcmp(f->message, msg, ml) == 0) return f;
    }
    return NULL;
}

static lint_finding_t *report(q_t *q, const promql_expr_t *e, const char *check,
                              lint_severity_t sev, const char *fix, const char *fmt, ...)
    IM_PRINTF(6, 7);
static lint_finding_t *report(q_t *q, const promql_expr_t *e, const char *check,
                              lint_severity_t sev, const char *fix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = vfmt(fmt, ap);
    va_end(ap);
    if (sev == LINT_SEV_INFO && once_per_file(check)) {
        lint_finding_t *d = same_note(q->r, check, q->w->file, msg);
        if (d) {
            im_free(msg);
            d->uses++;
            size_t cap = d->msg_base + 40;
            char *m = im_malloc(cap);
            snprintf(m, cap, "%.*s (%u uses in this file)", (int)d->msg_base, d->message, d->uses);
            im_free(d->message);
            d->message = m;
            return NULL;
        }
    }
    lint_finding_t *f = add_finding(q->r);
    if (!f) {
        im_free(msg);
        return NULL;
    }
    f->check = check;
    f->severity = sev;
    f->file = dupn(q->w->file);
    f->line = q->w->line;
    f->col = q->w->col;
    f->path = dupn(q->w->path);
    f->expr = im_strndup(q->expr, q->len);
    f->orig_expr = dupn(q->w->orig_expr);
    f->expr_start = e ? e->pos_start : 0;
    f->expr_end = e ? e->pos_end : (uint32_t)q->len;
    f->has_raw = q->w->has_raw;
    f->raw_start = q->w->raw_start;
    f->raw_end = q->w->raw_end;
    f->message = msg;
    f->uses = 1;
    f->msg_base = strlen(msg);
    f->fix = dupn(fix);
    return f;
}

/* Mechanical edit: replace [s, e) of the expression with text. */
static void set_edit(q_t *q, lint_finding_t *f, uint32_t s, uint32_t e, const char *text)
{
    if (!f || s > e || e > q->len) return;
    f->edit_start = s;
    f->edit_end = e;
    f->edit_text = im_strdup(text);
    size_t tl = strlen(text);
    char *x = im_malloc(q->len - (e - s) + tl + 1);
    memcpy(x, q->expr, s);
    memcpy(x + s, text, tl);
    memcpy(x + s + tl, q->expr + e, q->len - e);
    x[q->len - (e - s) + tl] = '\0';
    f->fixed_expr = x;
}

static const promql_expr_t *unparen(const promql_expr_t *e)
{
    while (e && e->kind == PROMQL_NODE_PAREN) e = e->u.paren.expr;
    return e;
}

static const promql_expr_t *parent(const q_t *q, int up)
{
    int i = q->depth - 1 - up;
    return i >= 0 ? q->stack[i] : NULL;
}

static bool is_instance_label(im_sv_t l);
static im_sv_t istr(const im_istr_t *s);

/* Whether the query means one series per replica: an enclosing vector match or
 * aggregation names a per-replica label (`* on(pod, namespace) group_left() …`,
 * `max by (pod) (…)`), or the dashboard target's legend shows one
 * (`P99 - {{pod}}`). */
static bool per_replica_intent(const q_t *q)
{
    for (int up = 0; up < q->depth; up++) {
        const promql_expr_t *p = parent(q, up);
        const im_istr_t *const *ls = NULL;
        size_t n = 0;
        if (p->kind == PROMQL_NODE_BINARY && p->u.bin.matching && p->u.bin.matching->on) {
            ls = p->u.bin.matching->matching_labels;
            n = p->u.bin.matching->nmatching_labels;
        } else if (p->kind == PROMQL_NODE_AGGREGATE && !p->u.agg.without) {
            ls = p->u.agg.grouping;
            n = p->u.agg.ngrouping;
        }
        for (size_t i = 0; i < n; i++)
            if (is_instance_label(istr(ls[i]))) return true;
    }
    const char *g = q->w->legend;
    while (g && (g = strstr(g, "{{")) != NULL) {
        g += 2;
        while (*g == ' ') g++;
        size_t k = strcspn(g, " }");
        if (is_instance_label((im_sv_t){g, k})) return true;
    }
    return false;
}

static bool func_is(const promql_expr_t *e, const char *name)
{
    return e && e->kind == PROMQL_NODE_CALL && strcmp(e->u.call.func->name, name) == 0;
}

static bool is_rate_like(const promql_expr_t *e)
{
    return func_is(e, "rate") || func_is(e, "irate") || func_is(e, "increase") ||
           func_is(e, "resets");
}

static im_sv_t istr(const im_istr_t *s)
{
    return im_istr_sv(s);
}

/* ---- Selector resolution ---- */

typedef struct sel {
    const char *name; /* NUL-terminated (interned) */
    size_t len;
    lname_t *known;
    const llm_family_t *fam;
    llm_form_t form;
    llm_suffix_t fsuffix;
    llm_mtype_t type;
    llm_suffix_t suffix;
    bool typed;
} sel_t;

static bool resolve(const q_t *q, const promql_expr_t *vs, sel_t *s)
{
    memset(s, 0, sizeof(*s));
    const im_istr_t *nm = vs->u.vs.name;
    if (!nm) {
        /* {__name__="x"} */
        for (size_t i = 0; i < vs->u.vs.nmatchers; i++) {
            im_matcher_t *m = vs->u.vs.matchers[i];
            if (im_matcher_type(m) == IM_MATCH_EQ &&
                strcmp(im_istr_sv(im_matcher_name(m)).p, "__name__") == 0) {
                size_t l;
                s->name = im_matcher_value(m, &l);
                s->len = l;
            }
        }
        if (!s->name) return false;
    } else {
        s->name = istr(nm).p;
        s->len = istr(nm).len;
    }
    s->known = lint__names_get(q->r->names, s->name, s->len);
    s->fam = llm_catalog_lookup(llm_catalog_get(), s->name, s->len, &s->form, &s->fsuffix);
    if (s->known && s->known->type != LLM_MTYPE_UNKNOWN) {
        s->type = s->known->type;
        s->suffix = s->known->suffix;
        s->typed = true;
    } else if (s->fam && s->form == LLM_FORM_SAMPLE && !(s->known && s->known->record)) {
        s->type = s->fam->type;
        s->suffix = s->fsuffix;
        s->typed = true;
    }
    return true;
}

static bool sel_counterlike(const sel_t *s)
{
    if (!s->typed) return false;
    if (s->type == LLM_MTYPE_COUNTER) return s->suffix != LLM_SUFFIX_CREATED;
    if (s->type == LLM_MTYPE_HISTOGRAM || s->type == LLM_MTYPE_SUMMARY)
        return s->suffix == LLM_SUFFIX_BUCKET || s->suffix == LLM_SUFFIX_SUM ||
               s->suffix == LLM_SUFFIX_COUNT;
    return false;
}

static bool sel_gaugelike(const sel_t *s)
{
    if (!s->typed) return false;
    if (s->suffix == LLM_SUFFIX_CREATED) return true;
    if (s->type == LLM_MTYPE_SUMMARY && s->suffix == LLM_SUFFIX_NONE)
        return true; /* quantile series */
    return s->type == LLM_MTYPE_GAUGE || s->type == LLM_MTYPE_INFO;
}

static llm_unit_t sel_unit(const sel_t *s)
{
    const llm_family_t *f = s->fam;
    if (!f) return LLM_UNIT_NONE;
    if (s->suffix == LLM_SUFFIX_COUNT || s->suffix == LLM_SUFFIX_BUCKET) {
        /* Observations of a per-request histogram count requests. */
        if (f->exporter == LLM_EXP_VLLM && strstr(f->name, "request")) return LLM_UNIT_REQUESTS;
        if (strstr(f->name, "time_to_first_token")) return LLM_UNIT_REQUESTS;
        return LLM_UNIT_NONE;
    }
    return f->unit;
}

/* ---- Label sets of expressions ---- */

static const char *const common_target_labels[] = {"job",
                                                   "instance",
                                                   "namespace",
                                                   "pod",
                                                   "container",
                                                   "node",
                                                   "service",
                                                   "endpoint",
                                                   "cluster",
                                                   "region",
                                                   "zone",
                                                   "env",
                                                   "environment",
                                                   "team",
                                                   "app",
                                                   "tenant",
                                                   "deployment",
                                                   "kubernetes_namespace",
                                                   "kubernetes_pod_name",
                                                   "kubernetes_node",
                                                   "pod_name",
                                                   "host",
                                                   "hostname",
                                                   "exported_job",
                                                   "exported_instance",
                                                   "exported_namespace",
                                                   "exported_pod",
                                                   "exported_container",
                                                   "replica",
                                                   "prometheus",
                                                   "prometheus_replica",
                                                   "datacenter",
                                                   "dc",
                                                   "owner",
                                                   "component",
                                                   "version"};

static bool is_common_target_label(const char *l, size_t len)
{
    for (size_t i = 0; i < IM_ARRAY_LEN(common_target_labels); i++)
        if (strlen(common_target_labels[i]) == len && memcmp(common_target_labels[i], l, len) == 0)
            return true;
    if (len > 8 && memcmp(l, "exported", 8) == 0) return true;
    if (len > 6 && memcmp(l, "label_", 6) == 0) return false;
    return false;
}

static void ls_add(labelset_t *s, const char *n, size_t len)
{
    for (int i = 0; i < s->n; i++)
        if (s->lens[i] == len && memcmp(s->names[i], n, len) == 0) return;
    if (s->n >= MAX_LABELS) {
        s->any = true;
        return;
    }
    s->names[s->n] = n;
    s->lens[s->n++] = len;
}

static bool ls_has(const labelset_t *s, const char *n, size_t len)
{
    for (int i = 0; i < s->n; i++)
        if (s->lens[i] == len && memcmp(s->names[i], n, len) == 0) return true;
    return false;
}

static void ls_del(labelset_t *s, const char *n, size_t len)
{
    for (int i = 0; i < s->n; i++)
        if (s->lens[i] == len && memcmp(s->names[i], n, len) == 0) {
            s->names[i] = s->names[s->n - 1];
            s->lens[i] = s->lens[s->n - 1];
            s->n--;
            return;
        }
}

static void selector_labels(const q_t *q, const promql_expr_t *vs, labelset_t *out)
{
    memset(out, 0, sizeof(*out));
    out->exporter = -1;
    sel_t s;
    if (!resolve(q, vs, &s) || (!s.known && !s.fam) || (s.known && s.known->record) ||
        (!s.known && s.form != LLM_FORM_SAMPLE)) {
        out->any = true;
        return;
    }
    if (s.known && !s.known->catalog && s.known->nlabels > 0) {
        for (uint32_t i = 0; i < s.known->nlabels; i++)
            ls_add(out, s.known->labels[i].name, strlen(s.known->labels[i].name));
        out->open = !s.known->labels_exact;
    } else if (s.fam) {
        if (s.fam->labels_open) {
            out->any = true;
            return;
        }
        for (int i = 0; i < s.fam->nlabels; i++)
            ls_add(out, s.fam->labels[i], strlen(s.fam->labels[i]));
        if (s.fsuffix == LLM_SUFFIX_BUCKET) ls_add(out, "le", 2);
        if (s.fam->type == LLM_MTYPE_SUMMARY && s.fsuffix == LLM_SUFFIX_NONE)
            ls_add(out, "quantile", 8);
        out->open = true;
    } else {
        out->any = true;
        return;
    }
    if (s.fam) out->exporter = (int)s.fam->exporter;
    if (out->open) {
        ls_add(out, "job", 3);
        ls_add(out, "instance", 8);
    }
}

static void expr_labels_d(const q_t *q, const promql_expr_t *e, labelset_t *out, int depth);

static void expr_labels(const q_t *q, const promql_expr_t *e, labelset_t *out)
{
    expr_labels_d(q, e, out, 0);
}

/* Label names an expression's result can carry; depth-bounded (deep trees: any). */
static void expr_labels_d(const q_t *q, const promql_expr_t *e, labelset_t *out, int depth)
{
    memset(out, 0, sizeof(*out));
    out->exporter = -1;
    if (!e || depth > 64) {
        out->any = true;
        return;
    }
    switch (e->kind) {
    case PROMQL_NODE_VECTOR_SELECTOR: selector_labels(q, e, out); return;
    case PROMQL_NODE_MATRIX_SELECTOR: selector_labels(q, e->u.ms.vs, out); return;
    case PROMQL_NODE_SUBQUERY: expr_labels_d(q, e->u.sq.expr, out, depth + 1); return;
    case PROMQL_NODE_PAREN: expr_labels_d(q, e->u.paren.expr, out, depth + 1); return;
    case PROMQL_NODE_UNARY: expr_labels_d(q, e->u.unary.expr, out, depth + 1); return;
    case PROMQL_NODE_STEP_INVARIANT: expr_labels_d(q, e->u.si.expr, out, depth + 1); return;
    case PROMQL_NODE_CALL: {
        const char *fn = e->u.call.func->name;
        if (strcmp(fn, "label_replace") == 0 || strcmp(fn, "label_join") == 0) {
            expr_labels_d(q, e->u.call.args[0], out, depth + 1);
            const promql_expr_t *dst = e->u.call.nargs > 1 ? unparen(e->u.call.args[1]) : NULL;
            if (dst && dst->kind == PROMQL_NODE_STRING)
                ls_add(out, dst->u.string.s, dst->u.string.len);
            else
                out->any = true;
            return;
        }
        if (strcmp(fn, "histogram_quantile") == 0 && e->u.call.nargs == 2) {
            expr_labels_d(q, e->u.call.args[1], out, depth + 1);
            ls_del(out, "le", 2);
            return;
        }
        for (size_t i = 0; i < e->u.call.nargs; i++) {
            promql_value_type_t t = e->u.call.args[i]->type;
            if (t == PROMQL_TYPE_VECTOR || t == PROMQL_TYPE_MATRIX) {
                expr_labels_d(q, e->u.call.args[i], out, depth + 1);
                return;
            }
        }
        out->any = true;
        return;
    }
    case PROMQL_NODE_AGGREGATE: {
        const promql_aggregate_t *a = &e->u.agg;
        if (!a->without) {
            for (size_t i = 0; i < a->ngrouping; i++)
                ls_add(out, istr(a->grouping[i]).p, istr(a->grouping[i]).len);
        } else {
            expr_labels_d(q, a->expr, out, depth + 1);
            for (size_t i = 0; i < a->ngrouping; i++)
                ls_del(out, istr(a->grouping[i]).p, istr(a->grouping[i]).len);
        }
        if (a->op == PROMQL_AGG_COUNT_VALUES) {
            const promql_expr_t *p = unparen(a->param);
            if (p && p->kind == PROMQL_NODE_STRING) ls_add(out, p->u.string.s, p->u.string.len);
        }
        if (a->op == PROMQL_AGG_TOPK || a->op == PROMQL_AGG_BOTTOMK)
            expr_labels_d(q, a->expr, out, depth + 1);
        return;
    }
    case PROMQL_NODE_BINARY: {
        const promql_binary_t *b = &e->u.bin;
        labelset_t l, r;
        expr_labels_d(q, b->lhs, &l, depth + 1);
        expr_labels_d(q, b->rhs, &r, depth + 1);
        if (!b->matching) {
            *out = b->lhs->type == PROMQL_TYPE_VECTOR ? l : r;
            return;
        }
        const promql_vector_matching_t *m = b->matching;
        if (b->op == PROMQL_OP_OR) {
            *out = l;
            if (r.any) out->any = true;
            for (int i = 0; i < r.n; i++) ls_add(out, r.names[i], r.lens[i]);
            out->open = l.open || r.open;
            return;
        }
        if (promql_binop_is_set(b->op)) {
            *out = l;
            return;
        }
        if (m->card == PROMQL_CARD_ONE_TO_ONE) {
            if (m->on) {
                for (size_t i = 0; i < m->nmatching_labels; i++)
                    ls_add(out, istr(m->matching_labels[i]).p, istr(m->matching_labels[i]).len);
                return;
            }
            *out = l;
            for (size_t i = 0; i < m->nmatching_labels; i++)
                ls_del(out, istr(m->matching_labels[i]).p, istr(m->matching_labels[i]).len);
            return;
        }
        *out = m->card == PROMQL_CARD_MANY_TO_ONE ? l : r;
        for (size_t i = 0; i < m->ninclude_labels; i++)
            ls_add(out, istr(m->include_labels[i]).p, istr(m->include_labels[i]).len);
        return;
    }
    default: out->any = true; return;
    }
}

/* ---- Name similarity ---- */

static size_t stem_tokens(const char *s, size_t len, char tok[][8], size_t max)
{
    size_t n = 0, i = 0;
    while (i < len && n < max) {
        while (i < len && (s[i] == '_' || s[i] == ':')) i++;
        size_t st = i;
        while (i < len && s[i] != '_' && s[i] != ':') i++;
        size_t tl = i - st;
        if (tl == 0) continue;
        char w[64];
        if (tl > 63) tl = 63;
        for (size_t k = 0; k < tl; k++) w[k] = (char)tolower((unsigned char)s[st + k]);
        w[tl] = 0;
        static const char *const sufs[] = {"ations", "ation", "ions", "ion",
                                           "ing",    "ed",    "es",   "s"};
        for (size_t k = 0; k < IM_ARRAY_LEN(sufs); k++) {
            size_t sl = strlen(sufs[k]);
            if (tl > sl + 3 && memcmp(w + tl - sl, sufs[k], sl) == 0) {
                tl -= sl;
                w[tl] = 0;
                break;
            }
        }
        if (tl > 6) tl = 6;
        w[tl] = 0;
        /* Words engines spell differently for the same thing (SGLang's
         * num_queue_reqs is vLLM's num_requests_waiting). */
        static const struct {
            const char *from, *to;
        } syn[] = {
            {"wait", "queue"},  {"waitin", "queue"}, {"reqs", "reques"},
            {"req", "reques"},  {"tok", "token"},    {"toks", "token"},
            {"latenc", "time"}, {"respon", "e2e"}}; /* response time: the end-to-end latency */
        for (size_t k = 0; k < IM_ARRAY_LEN(syn); k++)
            if (strcmp(w, syn[k].from) == 0) {
                tl = strlen(syn[k].to);
                memcpy(w, syn[k].to, tl + 1);
                break;
            }
        memcpy(tok[n], w, tl);
        tok[n][tl] = 0;
        n++;
    }
    return n;
}

/* The two names are made of the same words, stemmed, in any order (a
 * misspelt plural, req vs requests): one is the other misspelt. */
static bool same_words(const char *a, size_t alen, const char *b)
{
    char ta[16][8], tb[16][8];
    size_t na = stem_tokens(a, alen, ta, 16), nb = stem_tokens(b, strlen(b), tb, 16);
    if (na != nb || na == 0) return false;
    for (size_t i = 0; i < na; i++) {
        bool found = false;
        for (size_t k = 0; k < nb && !found; k++) found = strcmp(ta[i], tb[k]) == 0;
        if (!found) return false;
    }
    return true;
}

static size_t levenshtein(const char *a, size_t al, const char *b, size_t bl)
{
    if (al > 64 || bl > 64) return 99;
    size_t prev[65], cur[65];
    for (size_t j = 0; j <= bl; j++) prev[j] = j;
    for (size_t i = 1; i <= al; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= bl; j++) {
            size_t c = prev[j - 1] + (a[i - 1] != b[j - 1]);
            c = IM_MIN(c, prev[j] + 1);
            c = IM_MIN(c, cur[j - 1] + 1);
            cur[j] = c;
        }
        memcpy(prev, cur, sizeof(size_t) * (bl + 1));
    }
    return prev[bl];
}

static bool near_miss(const char *a, size_t al, const char *b, size_t bl)
{
    if (al == bl && memcmp(a, b, al) == 0) return false;
    if (al < bl && memcmp(a, b, al) == 0 && b[al] == '_' && al >= 3) return true;
    if (bl < al && memcmp(a, b, bl) == 0 && a[bl] == '_' && bl >= 3) return true;
    return al >= 5 && bl >= 5 && levenshtein(a, al, b, bl) <= 1;
}

typedef struct used_labels {
    const char *n[32];
    size_t l[32];
    int count;
} used_labels_t;

static void used_add(used_labels_t *u, const char *n, size_t l)
{
    if (u->count < 32 && !(l == 8 && memcmp(n, "__name__", 8) == 0)) {
        u->n[u->count] = n;
        u->l[u->count++] = l;
    }
}

static void collect_used(const q_t *q, const promql_expr_t *vs, used_labels_t *u)
{
    memset(u, 0, sizeof(*u));
    for (size_t i = 0; i < vs->u.vs.nmatchers; i++) {
        im_sv_t n = istr(im_matcher_name(vs->u.vs.matchers[i]));
        used_add(u, n.p, n.len);
    }
    for (int d = q->depth - 1; d >= 0; d--) {
        const promql_expr_t *a = q->stack[d];
        if (a->kind == PROMQL_NODE_AGGREGATE && !a->u.agg.without)
            for (size_t i = 0; i < a->u.agg.ngrouping; i++)
                used_add(u, istr(a->u.agg.grouping[i]).p, istr(a->u.agg.grouping[i]).len);
    }
}

static bool name_has_label(const lint_names_t *names, const lname_t *e, const llm_family_t *f,
                           const char *l, size_t len)
{
    (void)names;
    if (e && !e->catalog && lint__lname_label((lname_t *)e, l, len, false)) return true;
    if (f && llm_family_has_label(f, l, len)) return true;
    return false;
}

/* What a name measures, by its words: suggestions never cross it. */
typedef enum name_kind {
    NK_NONE = 0,
    NK_SECONDS,
    NK_BYTES,
    NK_UTIL,
    NK_TEMP,
    NK_POWER,
    NK_CLOCK,
    NK_TOKENS,
    NK_ERRORS,
} name_kind_t;

static bool has_word_ci(const char *s, size_t len, const char *w)
{
    size_t wl = strlen(w);
    for (size_t i = 0; i + wl <= len; i++)
        if (strncasecmp(s + i, w, wl) == 0 && (i == 0 || s[i - 1] == '_' || s[i - 1] == ':'))
            return true;
    return false;
}

static name_kind_t name_kind(const char *s, size_t len)
{
    if (has_word_ci(s, len, "seconds") || has_word_ci(s, len, "latency") ||
        has_word_ci(s, len, "duration") || has_word_ci(s, len, "ms"))
        return NK_SECONDS;
    if (has_word_ci(s, len, "temp") || has_word_ci(s, len, "temperature")) return NK_TEMP;
    if (has_word_ci(s, len, "power") || has_word_ci(s, len, "energy")) return NK_POWER;
    if (has_word_ci(s, len, "clock")) return NK_CLOCK;
    if (has_word_ci(s, len, "util") || has_word_ci(s, len, "utilization") ||
        has_word_ci(s, len, "usage_perc") || has_word_ci(s, len, "active"))
        return NK_UTIL;
    if (has_word_ci(s, len, "bytes") || has_word_ci(s, len, "fb") ||
        has_word_ci(s, len, "bandwidth") || has_word_ci(s, len, "throughput"))
        return NK_BYTES;
    if (has_word_ci(s, len, "tokens")) return NK_TOKENS;
    if (has_word_ci(s, len, "errors") || has_word_ci(s, len, "error") ||
        has_word_ci(s, len, "violation") || has_word_ci(s, len, "failure") ||
        has_word_ci(s, len, "failed") || has_word_ci(s, len, "failures"))
        return NK_ERRORS;
    return NK_NONE;
}

/* The exporter of a known or queried name (catalog family, else prefix). */
static bool name_exporter(const char *name, size_t len, llm_exporter_t *out)
{
    const llm_family_t *f = llm_catalog_lookup(llm_catalog_get(), name, len, NULL, NULL);
    if (f) {
        *out = f->exporter;
        return true;
    }
    return llm_exporter_by_prefix(name, len, out);
}

/* The exporter's display name; for the serving engines of the serving model
 * (Dynamo, llm-d's EPP, SGLang's router, Triton) the engine's own. */
static const char *exporter_display(llm_exporter_t e, const char *name, size_t len)
{
    if (e == LLM_EXP_ENGINE) {
        const llm_serving_t *sv = llm_serving_get();
        int i = llm_serving_engine_of(sv, name, len);
        const llm_engine_info_t *ei = i >= 0 ? llm_serving_engine(sv, i) : NULL;
        if (ei && ei->name) return ei->name;
    }
    return llm_exporter_name(e);
}

/* The known name most like `name`: shared word stems, same kind (counter or
 * not), the same exporter and what it measures, and the labels the query uses.
 * NULL when nothing is close. */
static const char *suggest(const q_t *q, const promql_expr_t *vs, const char *name, size_t len,
                           bool counterish)
{
    char qt[16][8];
    size_t nq = stem_tokens(name, len, qt, 16);
    used_labels_t used;
    collect_used(q, vs, &used);
    const lint_names_t *names = q->r->names;
    const char *best = NULL;
    int best_score = -1000;
    bool want_bucket = len > 7 && memcmp(name + len - 7, "_bucket", 7) == 0;
    llm_exporter_t qe = LLM_EXP_COUNT, ce;
    bool qe_known = llm_exporter_by_prefix(name, len, &qe);
    name_kind_t qk = name_kind(name, len);
    for (size_t i = 0; i < names->cap; i++) {
        const lname_t *e = names->slots[i];
        if (!e || e->record) continue;
        if (e->suffix == LLM_SUFFIX_CREATED) continue;
        bool ce_known = name_exporter(e->name, e->len, &ce);
        if (qe_known && (!ce_known || ce != qe)) continue;
        name_kind_t ck = name_kind(e->name, e->len);
        if (qk != NK_NONE && ck != NK_NONE && qk != ck) continue;
        /* A duration, temperature, power, clock or error count is never told
         * another kind of name (request failures are not successes). */
        if ((qk == NK_SECONDS || qk == NK_TEMP || qk == NK_POWER || qk == NK_CLOCK ||
             qk == NK_ERRORS) &&
            ck != qk)
            continue;
        if (counterish && e->type != LLM_MTYPE_UNKNOWN && e->type != LLM_MTYPE_COUNTER &&
            !(e->type == LLM_MTYPE_HISTOGRAM || e->type == LLM_MTYPE_SUMMARY))
            continue;
        bool is_bucket = e->suffix == LLM_SUFFIX_BUCKET;
        if ((e->type == LLM_MTYPE_HISTOGRAM || e->type == LLM_MTYPE_SUMMARY) &&
            is_bucket != want_bucket && e->suffix != LLM_SUFFIX_NONE)
            continue;
        char ct[16][8];
        size_t nc = stem_tokens(e->name, e->len, ct, 16);
        int common = 0;
        for (size_t a = 0; a < nq; a++)
            for (size_t b = 0; b < nc; b++)
                if (strcmp(qt[a], ct[b]) == 0) {
                    common++;
                    break;
                }
        if (common < 2 || common * 2 < (int)nq) continue;
        int score = common * 10 - (int)(nc - (size_t)common) - 2 * (int)(nq - (size_t)common);
        bool cand_counter = e->type == LLM_MTYPE_COUNTER;
        if (counterish != cand_counter && e->type != LLM_MTYPE_UNKNOWN)
            score -= counterish ? 15 : 8;
        const llm_family_t *f = llm_catalog_lookup(llm_catalog_get(), e->name, e->len, NULL, NULL);
        for (int k = 0; k < used.count; k++)
            if (name_has_label(names, e, f, used.n[k], used.l[k])) score += 3;
        if (score > best_score) {
            best_score = score;
            best = e->name;
        }
    }
    return best;
}

/* A known name that is `name` under another prefix (ray_vllm:…). */
static const char *prefixed_variant(const q_t *q, const char *name, size_t len)
{
    const lint_names_t *names = q->r->names;
    const char *colon = memchr(name, ':', len);
    for (size_t i = 0; i < names->cap; i++) {
        const lname_t *e = names->slots[i];
        if (!e || e->record || e->catalog || e->len <= len) continue;
        if (memcmp(e->name + e->len - len, name, len) == 0) {
            char c = e->name[e->len - len - 1];
            if (c == '_' || c == ':') return e->name;
        }
        /* ray_vllm_num_requests_running for vllm:num_requests_running */
        if (colon && e->len > len) {
            const char *tail = e->name + e->len - len;
            bool same = true;
            for (size_t k = 0; k < len && same; k++)
                same = tail[k] == name[k] || (name[k] == ':' && tail[k] == '_');
            if (same && (tail[-1] == '_' || tail[-1] == ':')) return e->name;
        }
    }
    return NULL;
}

/* Reverse rename: the old name a source still exposes for a new one. */
static const char *old_name_exposed(const q_t *q, const char *name, size_t len)
{
    const llm_catalog_t *c = llm_catalog_get();
    for (size_t i = 0; i < llm_catalog_count(c); i++) {
        const llm_family_t *f = llm_catalog_family(c, i);
        if (!f->replacement) continue;
        for (int s = 0; s < f->nsamples; s++) {
            lname_t *e = lint__names_get(q->r->names, f->samples[s], strlen(f->samples[s]));
            if (!e || e->catalog) continue;
            const llm_family_t *nf = llm_catalog_lookup(c, name, len, NULL, NULL);
            if (!nf) continue;
            size_t bl = strlen(nf->name);
            if (strncmp(f->replacement, nf->name, bl) == 0 &&
                (f->replacement[bl] == '\0' || f->replacement[bl] == ' ' ||
                 f->replacement[bl] == '_'))
                return f->samples[s];
        }
    }
    return NULL;
}

/* The replacement for an old name as a plain sample name with the same suffix,
 * or NULL when the replacement is not a single name (an expression, "none"). */
static bool replacement_name(const char *repl, llm_suffix_t suf, char *buf, size_t cap)
{
    if (!repl) return false;
    size_t n = 0;
    while (repl[n] && (isalnum((unsigned char)repl[n]) || repl[n] == '_' || repl[n] == ':')) n++;
    if (n == 0) return false;
    const char *rest = repl + n;
    while (*rest == ' ') rest++;
    if (*rest && *rest != '(' && *rest != ';') return false; /* "a / b", "a + b" */
    const llm_catalog_t *c = llm_catalog_get();
    llm_form_t form;
    llm_suffix_t rs;
    const llm_family_t *f = llm_catalog_lookup(c, repl, n, &form, &rs);
    if (!f) f = llm_catalog_by_family(c, repl, n);
    if (!f) return false;
    if (form == LLM_FORM_SAMPLE && rs != LLM_SUFFIX_NONE && suf == LLM_SUFFIX_NONE) suf = rs;
    if (f->type == LLM_MTYPE_COUNTER && f->base != f->name && suf == LLM_SUFFIX_NONE)
        suf = LLM_SUFFIX_TOTAL;
    llm_family_sample_name(f, suf, buf, cap);
    return true;
}

/* ---- Selector checks ---- */

static bool name_edit_range(const q_t *q, const promql_expr_t *vs, const sel_t *s, uint32_t *a,
                            uint32_t *b)
{
    if (!vs->u.vs.name) return false;
    if (vs->pos_start + s->len > q->len) return false;
    if (memcmp(q->expr + vs->pos_start, s->name, s->len) != 0) return false;
    *a = vs->pos_start;
    *b = vs->pos_start + (uint32_t)s->len;
    return true;
}

static void fix_name(q_t *q, lint_finding_t *f, const promql_expr_t *vs, const sel_t *s,
                     const char *newname)
{
    uint32_t a, b;
    if (f && name_edit_range(q, vs, s, &a, &b)) set_edit(q, f, a, b, newname);
}

static bool ancestor_func(const q_t *q, const char *fn)
{
    for (int d = q->depth - 1; d >= 0; d--)
        if (func_is(q->stack[d], fn)) return true;
    return false;
}

static bool has_le_context(const q_t *q, const promql_expr_t *vs)
{
    for (size_t i = 0; i < vs->u.vs.nmatchers; i++)
        if (im_sv_eq_cstr(istr(im_matcher_name(vs->u.vs.matchers[i])), "le")) return true;
    for (int d = q->depth - 1; d >= 0; d--)
        if (func_is(q->stack[d], "histogram_quantile") ||
            func_is(q->stack[d], "histogram_fraction"))
            return true;
    for (int d = q->depth - 1; d >= 0; d--) {
        const promql_expr_t *a = q->stack[d];
        if (a->kind == PROMQL_NODE_AGGREGATE) {
            bool has = false;
            for (size_t i = 0; i < a->u.agg.ngrouping; i++)
                if (im_sv_eq_cstr(istr(a->u.agg.grouping[i]), "le")) has = true;
            if (a->u.agg.without ? !has : has) return true;
            return false;
        }
    }
    return false;
}

static void status_text(const llm_family_t *f, char *buf, size_t cap)
{
    char d[32] = "", h[32] = "", r[32] = "";
    if (f->deprecated.known) llm_version_format(&f->deprecated, d, sizeof d);
    if (f->hidden.known) llm_version_format(&f->hidden, h, sizeof h);
    if (f->removed.known) llm_version_format(&f->removed, r, sizeof r);
    int n = 0;
    buf[0] = 0;
    if (d[0]) n += snprintf(buf + n, cap - (size_t)n, "deprecated in %s", d);
    if (h[0] && (size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, "%shidden from %s", n ? ", " : "", h);
    if (r[0] && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, "%sremoved in %s", n ? ", " : "", r);
}

/* Is the text a query our parser accepts? Fix hints that are queries must be. */
static bool valid_query(const char *text)
{
    promql_expr_t *root = NULL;
    im_err_t err;
    im_err_clear(&err);
    if (promql_parse(text, strlen(text), &root, &err) != IM_OK) return false;
    promql_expr_free(root);
    return true;
}

/* The fix for a catalog replacement: "use NAME" for a mechanical rename, else
 * "use QUERY" when the replacement text is a query once its "[..]" ranges get
 * a window, else prose that names it. */
static void repl_fix(const char *repl, const char *name, char *out, size_t cap)
{
    if (name) {
        snprintf(out, cap, "use %s", name);
        return;
    }
    im_buf_t b;
    im_buf_init(&b, 4096);
    for (const char *p = repl; *p && *p != ';'; p++) {
        if (p[0] == ' ' && p[1] == '(') break; /* "x (same semantics)" */
        if (strncmp(p, "[..]", 4) == 0) {
            (void)im_buf_puts(&b, "[5m]");
            p += 3;
        } else {
            (void)im_buf_putc(&b, *p);
        }
    }
    if (b.data && valid_query(b.data))
        snprintf(out, cap, "use %s", b.data);
    else
        snprintf(out, cap, "see the replacement: %s", repl);
    im_buf_free(&b);
}

/* Length of a name's first word with its separator ("sglang:" of sglang:x,
 * "tgi_" of tgi_queue_size), 0 when there is none. */
static size_t name_prefix_len(const char *name, size_t len)
{
    for (size_t i = 2; i < len; i++)
        if (name[i] == '_' || name[i] == ':') return i + 1;
    return 0;
}

/* Does any live source expose a name with the same first word? */
static bool prefix_exposed(const q_t *q, const char *name, size_t len)
{
    size_t pl = name_prefix_len(name, len);
    if (pl == 0) return true; /* one word: no exporter to blame */
    const lint_names_t *names = q->r->names;
    for (size_t i = 0; i < names->cap; i++) {
        const lname_t *e = names->slots[i];
        if (!e || e->record || e->catalog || e->len < pl) continue;
        if (memcmp(e->name, name, pl) == 0) return true;
    }
    return false;
}

/* A kueue_ name no Kueue version exposes whose nearest name is a per-queue
 * family: Kueue reports the same thing per ClusterQueue and per LocalQueue,
 * under different labels, so name both; the resource reservation and usage
 * gauges are what `infermon cost` turns into GPU-hours per team. */
static bool kueue_unknown(q_t *q, const promql_expr_t *vs, const sel_t *s, const char *sug)
{
    static const char cq[] = "kueue_cluster_queue_", lq[] = "kueue_local_queue_";
    if (s->len <= 6 || memcmp(s->name, "kueue_", 6) != 0) return false;
    const char *tail;
    bool local = strncmp(sug, lq, sizeof lq - 1) == 0;
    if (local)
        tail = sug + sizeof lq - 1;
    else if (strncmp(sug, cq, sizeof cq - 1) == 0)
        tail = sug + sizeof cq - 1;
    else
        return false;
    char other[160], fixbuf[512];
    snprintf(other, sizeof other, "%s%s", local ? cq : lq, tail);
    if (!llm_catalog_lookup(llm_catalog_get(), other, strlen(other), NULL, NULL)) return false;
    static const char cq_by[] = "per ClusterQueue: by cluster_queue, cohort, flavor, resource",
                      lq_by[] = "per LocalQueue, i.e. per team namespace: by namespace, name, "
                                "flavor, resource";
    bool money = strcmp(tail, "resource_reservation") == 0 || strcmp(tail, "resource_usage") == 0;
    snprintf(fixbuf, sizeof fixbuf, "did you mean %s (%s) or %s (%s)?%s", sug,
             local ? lq_by : cq_by, other, local ? cq_by : lq_by,
             money ? " `infermon cost` reports the reserved GPU-hours per team from them" : "");
    report(q, vs, "unknown-metric", LINT_SEV_ERROR, fixbuf,
           "%.*s is not a Kueue metric: no Kueue version exposes it (the catalog lists every "
           "kueue_ family); Kueue reports %s per ClusterQueue and per LocalQueue",
           (int)s->len, s->name, tail);
    return true;
}

/* Checks a selector's name; returns true when the name belongs to an exporter
 * none of the sources is (nothing else about it can be checked). */
static bool check_name(q_t *q, const promql_expr_t *vs, const sel_t *s)
{
    const lint_names_t *names = q->r->names;
    const llm_catalog_t *cat = llm_catalog_get();
    char buf[512], fixbuf[600];
    bool live = names->live;
    if (s->known) {
        if (s->known->record) return false;
        /* Exposed (or current in the catalog): deprecated? conditional? */
        if (s->fam && s->form == LLM_FORM_SAMPLE && s->fam->exporter == LLM_EXP_VLLM &&
            s->fam->deprecated.known) {
            llm_version_t v = q->r->version;
            if (!v.known && !live) v = names->catalog_version;
            llm_status_t st = llm_family_status(s->fam, &v);
            if (st == LLM_STATUS_DEPRECATED || (live && st >= LLM_STATUS_DEPRECATED)) {
                char stt[160];
                status_text(s->fam, stt, sizeof stt);
                const char *repl = llm_catalog_renamed_to(cat, s->name, s->len);
                if (!repl) repl = s->fam->replacement;
                bool mech = replacement_name(repl, s->fsuffix, buf, sizeof buf);
                if (repl) repl_fix(repl, mech ? buf : NULL, fixbuf, sizeof fixbuf);
                lint_finding_t *f =
                    report(q, vs, "deprecated-metric", LINT_SEV_WARNING, repl ? fixbuf : NULL,
                           "%.*s is deprecated (%s)%s%s", (int)s->len, s->name, stt,
                           repl ? "; replacement: " : "", repl ? repl : "");
                if (mech) fix_name(q, f, vs, s, buf);
            }
        }
        if (s->fam && s->fam->option && !live)
            report(q, vs, "conditional-metric", LINT_SEV_INFO, NULL, "%.*s exists only %s%s",
                   (int)s->len, s->name, strncmp(s->fam->option, "only ", 5) == 0 ? "" : "when: ",
                   strncmp(s->fam->option, "only ", 5) == 0 ? s->fam->option + 5 : s->fam->option);
        return false;
    }

    /* Series Prometheus itself adds at scrape (up, scrape_*, ALERTS) are never in
     * an exposition. */
    if (s->fam && s->fam->exporter == LLM_EXP_PROMETHEUS && names->kind != LINT_SOURCE_PROMETHEUS)
        return false;
    /* Not exposed. Ray Serve and friends: the same family under another prefix. */
    bool ours =
        (s->len > 5 && memcmp(s->name, "vllm:", 5) == 0) ||
        (s->fam && (s->fam->exporter == LLM_EXP_VLLM || s->fam->exporter == LLM_EXP_VLLM_HTTP ||
                    s->fam->exporter == LLM_EXP_DCGM || s->fam->exporter == LLM_EXP_KUEUE));
    if (live && ours) {
        const char *pv = prefixed_variant(q, s->name, s->len);
        if (pv) {
            snprintf(fixbuf, sizeof fixbuf, "use %s", pv);
            lint_finding_t *f = report(q, vs, "prefix-mismatch", LINT_SEV_ERROR, fixbuf,
                                       "%.*s is not exposed, but %s is: the sources add a prefix",
                                       (int)s->len, s->name, pv);
            fix_name(q, f, vs, s, pv);
            return false;
        }
    }

    const llm_family_t *f = s->fam;
    if (f && s->form == LLM_FORM_COUNTER_BARE) {
        llm_family_sample_name(f, LLM_SUFFIX_TOTAL, buf, sizeof buf);
        if (lint_names_has(names, buf, strlen(buf)) || !live) {
            snprintf(fixbuf, sizeof fixbuf, "use %s", buf);
            lint_finding_t *fd = report(q, vs, "missing-total", LINT_SEV_ERROR, fixbuf,
                                        "%.*s is a counter: the exposition names its samples %s",
                                        (int)s->len, s->name, buf);
            fix_name(q, fd, vs, s, buf);
            return false;
        }
    }
    if (f && s->form == LLM_FORM_HISTOGRAM_BARE && f->exporter == LLM_EXP_VLLM) {
        /* A bare histogram name that is also gone at the version: the samples
         * to point at are the replacement's (time_per_output_token ->
         * inter_token_latency), not the removed ones. */
        llm_version_t v = q->r->version;
        if (!v.known && !live) v = names->catalog_version;
        llm_status_t st = llm_family_status(f, &v);
        const char *repl = llm_catalog_renamed_to(cat, s->name, s->len);
        if (!repl) repl = f->replacement;
        char rb[160];
        if ((st == LLM_STATUS_REMOVED || st == LLM_STATUS_HIDDEN) && repl &&
            replacement_name(repl, LLM_SUFFIX_NONE, rb, sizeof rb)) {
            char stt[160];
            status_text(f, stt, sizeof stt);
            bool quant = ancestor_func(q, "histogram_quantile");
            if (quant)
                snprintf(fixbuf, sizeof fixbuf, "use %s_bucket", rb);
            else
                snprintf(fixbuf, sizeof fixbuf,
                         "query %s_bucket for quantiles, %s_sum / %s_count for the mean", rb, rb,
                         rb);
            lint_finding_t *fd =
                report(q, vs, "removed-metric", LINT_SEV_ERROR, fixbuf,
                       "%.*s is a histogram (no sample of that name) and is gone at this version "
                       "(%s); replacement: %s_bucket / _sum / _count",
                       (int)s->len, s->name, stt, rb);
            if (quant) {
                char full[300];
                snprintf(full, sizeof full, "%s_bucket", rb);
                fix_name(q, fd, vs, s, full);
            }
            return false;
        }
    }
    if (f && s->form == LLM_FORM_HISTOGRAM_BARE) {
        bool quant = ancestor_func(q, "histogram_quantile");
        llm_family_sample_name(f, LLM_SUFFIX_BUCKET, buf, sizeof buf);
        if (quant)
            snprintf(fixbuf, sizeof fixbuf, "use %s", buf);
        else
            snprintf(fixbuf, sizeof fixbuf,
                     "query %s_bucket for quantiles, %s_sum / %s_count for the mean", f->base,
                     f->base, f->base);
        lint_finding_t *fd =
            report(q, vs, "histogram-suffix", LINT_SEV_ERROR, fixbuf,
                   "%.*s is a %s: there is no sample of that name, only %s_bucket, %s_sum and "
                   "%s_count",
                   (int)s->len, s->name, llm_mtype_name(f->type), f->base, f->base, f->base);
        if (quant && f->type == LLM_MTYPE_HISTOGRAM) fix_name(q, fd, vs, s, buf);
        return false;
    }

    if (f && s->form == LLM_FORM_SAMPLE) {
        /* A catalog name the sources do not expose. */
        llm_version_t v = q->r->version;
        llm_status_t st = llm_family_status(f, &v);
        if (f->exporter == LLM_EXP_VLLM && (st == LLM_STATUS_REMOVED || st == LLM_STATUS_HIDDEN)) {
            char stt[160], vb[40] = "";
            status_text(f, stt, sizeof stt);
            if (v.known) llm_version_format(&v, vb, sizeof vb);
            const char *repl = llm_catalog_renamed_to(cat, s->name, s->len);
            if (!repl) repl = f->replacement;
            bool mech = replacement_name(repl, s->fsuffix, buf, sizeof buf);
            if (mech && live && !lint_names_has(names, buf, strlen(buf))) mech = false;
            if (repl) repl_fix(repl, mech ? buf : NULL, fixbuf, sizeof fixbuf);
            char who[96];
            if (q->r->version_given || !live)
                snprintf(who, sizeof who, "vLLM %s", vb);
            else if (vb[0])
                snprintf(who, sizeof who, "the sources (vLLM %s or newer)", vb);
            else
                snprintf(who, sizeof who, "the sources");
            lint_finding_t *fd =
                report(q, vs, "removed-metric", LINT_SEV_ERROR, repl ? fixbuf : NULL,
                       "%.*s is not exposed by %s (%s)%s%s", (int)s->len, s->name, who, stt,
                       repl ? "; replacement: " : "; it has no replacement", repl ? repl : "");
            if (mech) fix_name(q, fd, vs, s, buf);
            return false;
        }
        if (f->option) {
            report(q, vs, "conditional-metric", LINT_SEV_INFO, NULL,
                   "%.*s is not exposed: it exists only %s%s", (int)s->len, s->name,
                   strncmp(f->option, "only ", 5) == 0 ? "" : "when: ",
                   strncmp(f->option, "only ", 5) == 0 ? f->option + 5 : f->option);
            return false;
        }
        if (live && !names->exporters_seen[f->exporter]) {
            report(q, vs, "other-exporter", LINT_SEV_INFO, NULL,
                   "%.*s comes from %s, which none of the sources exposes: add its endpoint with "
                   "--target to check it (the name is right)",
                   (int)s->len, s->name, exporter_display(f->exporter, s->name, s->len));
            return true;
        }
        if (st == LLM_STATUS_NOT_YET) {
            char vb[40] = "", fb[40];
            llm_version_format(&f->first, fb, sizeof fb);
            if (v.known) llm_version_format(&v, vb, sizeof vb);
            const char *old = live ? old_name_exposed(q, s->name, s->len) : NULL;
            if (old) snprintf(fixbuf, sizeof fixbuf, "use %s on this version", old);
            if (live && !q->r->version_given)
                report(q, vs, "unknown-metric", LINT_SEV_ERROR, old ? fixbuf : NULL,
                       "%.*s was added in vLLM %s; the sources run an older vLLM%s%s%s",
                       (int)s->len, s->name, fb, vb[0] ? " (" : "", vb[0] ? vb : "",
                       vb[0] ? ")" : "");
            else
                report(q, vs, "unknown-metric", LINT_SEV_ERROR, old ? fixbuf : NULL,
                       "%.*s was added in vLLM %s, after vLLM %s (--vllm-version)", (int)s->len,
                       s->name, fb, vb);
            return false;
        }
        /* The exporter is there and the name is right: series of labelled counters
         * and histograms appear with their first event (Kueue, dcgm-exporter, lazily
         * created vLLM families), so only a vLLM family created at start-up is
         * suspicious. */
        if (live && f->exporter == LLM_EXP_VLLM && !strstr(f->condition, "lazily")) {
            report(q, vs, "unknown-metric", LINT_SEV_WARNING, NULL,
                   "%.*s is not exposed by the sources although vLLM creates it at start-up (%s): "
                   "the sources run "
                   "another version or configuration",
                   (int)s->len, s->name, f->condition[0] ? f->condition : "no condition known");
        }
        return false;
    }

    /* `vllm_e2e_request_latency_seconds_sum` for vllm:…: the colon of the
     * exposition turned into `_` (written after an OTel-translated pipeline, or
     * by hand). Only when the family's exporter is a source (or the catalog). */
    if (!f && s->len < sizeof buf) {
        const char *us = memchr(s->name, '_', s->len);
        if (us && us > s->name && !memchr(s->name, ':', s->len)) {
            memcpy(buf, s->name, s->len);
            buf[s->len] = '\0';
            buf[us - s->name] = ':';
            llm_form_t cf;
            llm_suffix_t csf;
            const llm_family_t *cfam = llm_catalog_lookup(cat, buf, s->len, &cf, &csf);
            bool there = cfam && cf == LLM_FORM_SAMPLE &&
                         (live ? (names->exporters_seen[cfam->exporter] &&
                                  lint_names_has(names, buf, s->len))
                               : true);
            /* vllm_request_failure_total: vLLM's own prefix with `_`, and no
             * vllm: family of that name either. */
            if (!there && s->len > 5 && memcmp(s->name, "vllm_", 5) == 0 && !cfam &&
                (live ? names->exporters_seen[LLM_EXP_VLLM] && !prefix_exposed(q, s->name, s->len)
                      : true)) {
                bool counterish = s->len > 6 && memcmp(s->name + s->len - 6, "_total", 6) == 0;
                const char *sug = suggest(q, vs, buf, s->len, counterish);
                if (sug) snprintf(fixbuf, sizeof fixbuf, "did you mean %s?", sug);
                report(q, vs, "unknown-metric", LINT_SEV_ERROR, sug ? fixbuf : NULL,
                       "%.*s is not exposed: vLLM names its metrics vllm:…, and has no %s either",
                       (int)s->len, s->name, buf);
                return false;
            }
            if (there) {
                snprintf(fixbuf, sizeof fixbuf, "use %s", buf);
                lint_finding_t *fd =
                    report(q, vs, "prefix-mismatch", LINT_SEV_ERROR, fixbuf,
                           "%.*s is not exposed: %s exposes %s, with a colon (an underscore "
                           "appears only where a pipeline rewrote the name)",
                           (int)s->len, s->name, llm_exporter_name(cfam->exporter), buf);
                fix_name(q, fd, vs, s, buf);
                return false;
            }
        }
    }

    /* Not in the catalog either. A lower-cased DCGM field name? */
    if (s->len > 8 && s->len < sizeof buf && strncasecmp(s->name, "DCGM_FI_", 8) == 0 &&
        memcmp(s->name, "DCGM_FI_", 8) != 0) {
        for (size_t i = 0; i < s->len; i++) buf[i] = (char)toupper((unsigned char)s->name[i]);
        buf[s->len] = 0;
        if (llm_catalog_lookup(cat, buf, s->len, NULL, NULL)) {
            snprintf(fixbuf, sizeof fixbuf, "use %s", buf);
            lint_finding_t *fd = report(
                q, vs, "unknown-metric", LINT_SEV_ERROR, fixbuf,
                "%.*s: dcgm-exporter names its metrics after the DCGM field in upper case (%s); "
                "metric names are case-sensitive",
                (int)s->len, s->name, buf);
            fix_name(q, fd, vs, s, buf);
            return false;
        }
    }
    /* Renamed? */
    const char *repl = llm_catalog_renamed_to(cat, s->name, s->len);
    if (repl) {
        bool mech = replacement_name(repl, LLM_SUFFIX_NONE, buf, sizeof buf);
        repl_fix(repl, mech ? buf : NULL, fixbuf, sizeof fixbuf);
        bool dcgm1 = s->len > 5 && memcmp(s->name, "dcgm_", 5) == 0;
        const llm_family_t *rf = llm_catalog_lookup(cat, repl, strlen(repl), NULL, NULL);
        lint_finding_t *fd;
        if (dcgm1)
            fd = report(q, vs, "removed-metric", LINT_SEV_ERROR, fixbuf,
                        "%.*s is a dcgm-exporter 1.x name; current dcgm-exporter exposes %s%s",
                        (int)s->len, s->name, repl,
                        rf ? "" : " (not in the default counters: enable it in the counters CSV)");
        else
            fd = report(q, vs, "removed-metric", LINT_SEV_ERROR, fixbuf,
                        "%.*s was renamed: replacement %s", (int)s->len, s->name, repl);
        if (mech) fix_name(q, fd, vs, s, buf);
        return false;
    }
    if (!live && names->kind == LINT_SOURCE_CATALOG) {
        /* The catalog only knows some exporters: a name outside them may be fine,
         * unless it uses a prefix the catalog or the serving model owns (vllm:,
         * sglang:, dynamo_frontend_, llm_d_epp_, ..., see llm/serving.h); a name
         * the serving model maps (Ray Serve's ray_vllm_*) is known. */
        const llm_serving_t *sv = llm_serving_get();
        int eng = llm_serving_engine_of(sv, s->name, s->len);
        bool owned = (s->len > 6 && memcmp(s->name, "kueue_", 6) == 0) ||
                     (s->len > 8 && memcmp(s->name, "DCGM_FI_", 8) == 0) || eng >= 0;
        if (!owned || llm_serving_has_name(sv, s->name, s->len)) return false;
        const llm_engine_info_t *ei = eng >= 0 ? llm_serving_engine(sv, eng) : NULL;
        if (ei && !ei->all_names) {
            /* Dynamo, EPP, Triton, the SGLang router: the catalog knows the
             * names of their serving signals, not every name they expose. A
             * known name with the same words (a plural, a suffix) is a typo. */
            bool counterish = s->len > 6 && memcmp(s->name + s->len - 6, "_total", 6) == 0;
            const char *sug = suggest(q, vs, s->name, s->len, counterish);
            if (sug && same_words(s->name, s->len, sug)) {
                snprintf(fixbuf, sizeof fixbuf, "did you mean %s?", sug);
                report(q, vs, "unknown-metric", LINT_SEV_ERROR, fixbuf,
                       "%.*s is not a name of %s; it differs from %s only in spelling", (int)s->len,
                       s->name, ei->name, sug);
                return false;
            }
            report(q, vs, "other-exporter", LINT_SEV_INFO, NULL,
                   "%.*s has the prefix of %s, of which the catalog knows only the names of "
                   "its serving signals: not checked (add its endpoint with --target)",
                   (int)s->len, s->name, ei->name);
            return true;
        }
    }
    /* A vLLM source string that is gone (vllm-metric-events.tsv). */
    if (s->len > 5 && memcmp(s->name, "vllm:", 5) == 0) {
        llm_version_t added, removed;
        bool h = llm_catalog_history(cat, s->name, s->len, &added, &removed);
        if (!h && s->len > 6 && memcmp(s->name + s->len - 6, "_total", 6) == 0)
            h = llm_catalog_history(cat, s->name, s->len - 6, &added, &removed);
        if (h && removed.known) {
            char ab[40] = "?", rb[40];
            if (added.known) llm_version_format(&added, ab, sizeof ab);
            llm_version_format(&removed, rb, sizeof rb);
            const char *sug = suggest(q, vs, s->name, s->len, false);
            if (sug) snprintf(fixbuf, sizeof fixbuf, "did you mean %s?", sug);
            report(q, vs, "removed-metric", LINT_SEV_ERROR, sug ? fixbuf : NULL,
                   "%.*s was added to vLLM's source in %s and removed in %s", (int)s->len, s->name,
                   ab, rb);
            return false;
        }
    }
    /* level:metric:operation is the recording-rule naming convention. */
    const char *c1 = memchr(s->name, ':', s->len);
    if (c1 && memchr(c1 + 1, ':', s->len - (size_t)(c1 + 1 - s->name)) &&
        memcmp(s->name, "vllm:", 5) != 0) {
        report(q, vs, "unknown-metric", LINT_SEV_INFO,
               "lint the rule file that records it together with this file",
               "%.*s is not exposed by %s; by its name it is a recording rule's output",
               (int)s->len, s->name, live ? "any source" : "the catalog's exporters");
        return false;
    }
    /* A name of an exporter none of the sources is: say whose it seems to be and
     * check nothing else about it. */
    if (live) {
        llm_exporter_t pe;
        if (llm_exporter_by_prefix(s->name, s->len, &pe)) {
            if (!names->exporters_seen[pe]) {
                report(q, vs, "other-exporter", LINT_SEV_INFO, NULL,
                       "%.*s seems to come from %s, which none of the sources exposes: not "
                       "checked (add its endpoint with --target)",
                       (int)s->len, s->name, exporter_display(pe, s->name, s->len));
                return true;
            }
        } else if (!prefix_exposed(q, s->name, s->len)) {
            size_t pl = name_prefix_len(s->name, s->len);
            report(q, vs, "other-exporter", LINT_SEV_INFO, NULL,
                   "%.*s: no source exposes it or any name starting with %.*s; it seems to come "
                   "from an exporter not among the sources: not checked",
                   (int)s->len, s->name, (int)pl, s->name);
            return true;
        }
    }
    bool counterish = (s->len > 6 && memcmp(s->name + s->len - 6, "_total", 6) == 0);
    const promql_expr_t *p = parent(q, 0);
    if (p && p->kind == PROMQL_NODE_MATRIX_SELECTOR && is_rate_like(parent(q, 1)))
        counterish = true;
    const char *sug = suggest(q, vs, s->name, s->len, counterish);
    if (sug && kueue_unknown(q, vs, s, sug)) return false;
    if (sug) snprintf(fixbuf, sizeof fixbuf, "did you mean %s?", sug);
    report(q, vs, "unknown-metric", LINT_SEV_ERROR, sug ? fixbuf : NULL,
           "%.*s is not exposed by %s", (int)s->len, s->name,
           live ? "any source" : "the catalog's exporters");
    return false;
}

static bool label_suspicious(const q_t *q, const labelset_t *ls, const char *l, size_t len)
{
    if (ls->any) return false;
    if (ls_has(ls, l, len)) return false;
    if (!ls->open) return true;
    /* dcgm-exporter's Hostname became hostname on main (#655): a case variant of a
     * carried label is a mistake even for labels a scrape could add. */
    for (int i = 0; i < ls->n; i++)
        if (ls->lens[i] == len && strncasecmp(ls->names[i], l, len) == 0) return true;
    if (is_common_target_label(l, len)) return false;
    if (len == 2 && memcmp(l, "le", 2) == 0) return true;
    for (int i = 0; i < ls->n; i++)
        if (near_miss(l, len, ls->names[i], ls->lens[i])) return true;
    /* A label other families of the same exporter carry, or (for an exporter the
     * catalog knows completely) one that only another such exporter's families
     * carry: `by (model_name)` over dcgm-exporter's series. */
    if (ls->exporter >= 0) {
        const llm_catalog_t *c = llm_catalog_get();
        bool own = false, other = false;
        for (size_t i = 0; i < llm_catalog_count(c); i++) {
            const llm_family_t *f = llm_catalog_family(c, i);
            bool has = false;
            for (int k = 0; k < f->nlabels && !has; k++)
                has = strlen(f->labels[k]) == len && memcmp(f->labels[k], l, len) == 0;
            if (!has) continue;
            if ((int)f->exporter == ls->exporter) {
                own = true;
                break;
            }
            if (llm_exporter_complete(f->exporter)) other = true;
        }
        if (own) return true;
        if (other && llm_exporter_complete((llm_exporter_t)ls->exporter)) return true;
    }
    (void)q;
    return false;
}

static const char *closest_label(const labelset_t *ls, const char *l, size_t len)
{
    for (int i = 0; i < ls->n; i++)
        if (ls->lens[i] == len && strncasecmp(ls->names[i], l, len) == 0) return ls->names[i];
    for (int i = 0; i < ls->n; i++)
        if (near_miss(l, len, ls->names[i], ls->lens[i])) return ls->names[i];
    return NULL;
}

/* le="120" against the catalog. vLLM's and SGLang's Python client writes an
 * integral bound as le="120.0"; Go (and Rust, C++) clients write le="120".
 * Prometheus 2 stores what the exporter wrote; Prometheus 3 normalises every
 * le to the float form "120.0". So on a Python engine le="120" matches on no
 * Prometheus, and on another exporter either spelling holds on one major
 * version only. Bounds like 0.5 have one spelling. */
static void check_le_spelling(q_t *q, const promql_expr_t *vs, const sel_t *s,
                              const im_matcher_t *m)
{
    if (!s->fam || s->fam->type != LLM_MTYPE_HISTOGRAM || in_subst(q, vs)) return;
    if (s->known && !s->known->catalog) return; /* a live source: its values are judged */
    size_t vl;
    const char *v = im_matcher_value(m, &vl);
    char buf[64], go[64];
    if (vl == 0 || vl >= sizeof buf) return;
    memcpy(buf, v, vl);
    buf[vl] = 0;
    char *end;
    double d = strtod(buf, &end);
    if (*end || !isfinite(d) || d <= 0) return;
    im_fmt_float_go(d, 'g', go, sizeof go);
    if (strpbrk(go, ".e")) return;
    char flt[72], fx[200];
    snprintf(flt, sizeof flt, "%s.0", go);
    bool python = s->fam->exporter == LLM_EXP_VLLM || s->fam->exporter == LLM_EXP_SGLANG;
    bool as_go = strcmp(buf, go) == 0, as_float = strcmp(buf, flt) == 0;
    if (python && as_go) {
        snprintf(fx, sizeof fx, "use le=\"%s\"", flt);
        report(q, vs, "le-spelling", LINT_SEV_ERROR, fx,
               "le=\"%s\" matches no bucket of %.*s on any Prometheus: %s's Python client "
               "writes le=\"%s\", which Prometheus 2 keeps and Prometheus 3 normalises to",
               buf, (int)s->len, s->name, s->fam->exporter == LLM_EXP_SGLANG ? "SGLang" : "vLLM",
               flt);
    } else if (!python && (as_go || as_float)) {
        snprintf(fx, sizeof fx, "use le=~\"%s|%s\\\\.0\", which matches both", go, go);
        report(q, vs, "le-spelling", LINT_SEV_WARNING, fx,
               "le=\"%s\" on %.*s matches on Prometheus %s only: the exporter writes le=\"%s\", "
               "which Prometheus 3 normalises to le=\"%s\"",
               buf, (int)s->len, s->name, as_go ? "2" : "3", go, flt);
    }
}

static void check_matchers(q_t *q, const promql_expr_t *vs, const sel_t *s)
{
    labelset_t ls;
    selector_labels(q, vs, &ls);
    char fixbuf[300];
    for (size_t i = 0; i < vs->u.vs.nmatchers; i++) {
        im_matcher_t *m = vs->u.vs.matchers[i];
        im_sv_t ln = istr(im_matcher_name(m));
        if (im_sv_eq_cstr(ln, "__name__")) continue;
        im_match_type_t t = im_matcher_type(m);
        if (t == IM_MATCH_EQ && im_sv_eq_cstr(ln, "le")) check_le_spelling(q, vs, s, m);
        /* x!="" and x!~"" require the label as much as x="v" does. */
        bool positive = ((t == IM_MATCH_EQ || t == IM_MATCH_RE) && !im_matcher_matches_empty(m)) ||
                        ((t == IM_MATCH_NEQ || t == IM_MATCH_NRE) &&
                         im_matcher_matches(m, "x", 1) && !im_matcher_matches_empty(m));
        if (!positive) continue;
        /* exported_* renames by a scrape without honor_labels. */
        if (s->known && !s->known->catalog && !lint__lname_label(s->known, ln.p, ln.len, false)) {
            char ex[128];
            snprintf(ex, sizeof ex, "exported_%.*s", (int)ln.len, ln.p);
            if (lint__lname_label(s->known, ex, strlen(ex), false)) {
                snprintf(fixbuf, sizeof fixbuf, "use %s", ex);
                report(q, vs, "prefix-mismatch", LINT_SEV_ERROR, fixbuf,
                       "%.*s carries %s, not %.*s: the scrape renamed the target's label (no "
                       "honor_labels)",
                       (int)s->len, s->name, ex, (int)ln.len, ln.p);
                continue;
            }
        }
        if (label_suspicious(q, &ls, ln.p, ln.len)) {
            const char *cl = closest_label(&ls, ln.p, ln.len);
            if (cl) snprintf(fixbuf, sizeof fixbuf, "use %s", cl);
            report(q, vs, "unknown-label", LINT_SEV_ERROR, cl ? fixbuf : NULL,
                   "%.*s never carries the label %.*s: the selector is always empty", (int)s->len,
                   s->name, (int)ln.len, ln.p);
            continue;
        }
        if (!s->known || in_subst(q, vs)) continue;
        {
            size_t pvl;
            const char *pv = im_matcher_value(m, &pvl);
            if (lint__tmpl_placeholder(pv, pvl)) continue; /* a Helm action's placeholder */
        }
        lname_label_t *l = lint__lname_label(s->known, ln.p, ln.len, false);
        if (!l || !l->values_known || l->overflow || l->nvalues == 0) continue;
        /* Label values of counters and histograms appear with the events that
         * create them: only a closed, pre-created set (the catalog's) is complete. */
        const llm_label_values_t *en = NULL;
        for (int k = 0; s->fam && k < s->fam->nenums; k++)
            if (im_sv_eq_cstr(ln, s->fam->enums[k].label)) en = &s->fam->enums[k];
        /* a histogram's le values all appear with its first series */
        bool eventful = s->typed && s->type != LLM_MTYPE_GAUGE && s->type != LLM_MTYPE_INFO &&
                        !im_sv_eq_cstr(ln, "le");
        if (eventful && !en) continue;
        bool any = false;
        for (uint32_t k = 0; k < l->nvalues && !any; k++)
            any = im_matcher_matches(m, l->values[k], strlen(l->values[k]));
        for (int k = 0; en && k < 8 && en->values[k] && !any; k++)
            any = im_matcher_matches(m, en->values[k], strlen(en->values[k]));
        if (!any && im_sv_eq_cstr(ln, "le") && t == IM_MATCH_EQ) {
            /* the bound is there, spelt otherwise (120 vs 120.0) */
            size_t vl;
            const char *val = im_matcher_value(m, &vl);
            char vb[64], *end;
            double want = NAN;
            if (vl < sizeof vb) {
                memcpy(vb, val, vl);
                vb[vl] = 0;
                want = strtod(vb, &end);
                if (*end) want = NAN;
            }
            const char *same = NULL;
            for (uint32_t k = 0; k < l->nvalues && !same && !isnan(want); k++)
                if (strtod(l->values[k], &end) == want && !*end) same = l->values[k];
            if (same) {
                char esc[2][80];
                const char *src[2] = {vb, same};
                for (int w = 0; w < 2; w++) { /* a regex: the dot escaped, \\. in PromQL */
                    size_t o = 0;
                    for (const char *c = src[w]; *c && o + 4 < sizeof esc[w]; c++) {
                        if (*c == '.') esc[w][o++] = '\\', esc[w][o++] = '\\';
                        esc[w][o++] = *c;
                    }
                    esc[w][o] = 0;
                }
                snprintf(fixbuf, sizeof fixbuf, "use le=~\"%s|%s\", which matches both spellings",
                         esc[0], esc[1]);
                report(q, vs, "matcher-never-matches", LINT_SEV_ERROR, fixbuf,
                       "le=\"%s\" matches no bucket of %.*s: the source spells this bound "
                       "le=\"%s\"",
                       vb, (int)s->len, s->name, same);
                continue;
            }
        }
        if (!any) {
            im_buf_t vb;
            im_buf_init(&vb, 4096);
            for (uint32_t k = 0; k < l->nvalues && k < 8; k++)
                (void)im_buf_printf(&vb, "%s\"%s\"", k ? ", " : "", l->values[k]);
            if (l->nvalues > 8) (void)im_buf_puts(&vb, ", …");
            size_t vl;
            const char *val = im_matcher_value(m, &vl);
            report(q, vs, "matcher-never-matches", LINT_SEV_WARNING, NULL,
                   "%.*s%s\"%.*s\" matches none of the values of %.*s on %.*s (%s)", (int)ln.len,
                   ln.p, im_match_type_str(t), (int)vl, val, (int)ln.len, ln.p, (int)s->len,
                   s->name, vb.data ? vb.data : "");
            im_buf_free(&vb);
        }
    }
}

/* The expression with each [start, end) span wrapped as rate(<span>[5m]); NULL
 * when the result does not parse. Spans ascending, at most 8. */
static char *wrap_rates(const q_t *q, const uint32_t (*sp)[2], size_t n, const char *fn,
                        const char *range)
{
    im_buf_t b;
    im_buf_init(&b, 1u << 20);
    uint32_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (sp[i][0] < pos || sp[i][1] > q->len) {
            im_buf_free(&b);
            return NULL;
        }
        (void)im_buf_append(&b, q->expr + pos, sp[i][0] - pos);
        (void)im_buf_printf(&b, "%s(%.*s[%s])", fn, (int)(sp[i][1] - sp[i][0]), q->expr + sp[i][0],
                            range);
        pos = sp[i][1];
    }
    (void)im_buf_append(&b, q->expr + pos, q->len - pos);
    size_t l;
    char *t = im_buf_steal(&b, &l);
    if (!t || !valid_query(t)) {
        im_free(t);
        return NULL;
    }
    return t;
}

/* "use <the expression with the spans wrapped>" when that parses, else fallback. */
static void wrap_fix(const q_t *q, const uint32_t (*sp)[2], size_t n, const char *fn,
                     const char *range, const char *fallback, char *out, size_t cap)
{
    char *wr = wrap_rates(q, sp, n, fn, range);
    if (wr && strlen(wr) + 5 <= cap)
        snprintf(out, cap, "use %s", wr);
    else
        snprintf(out, cap, "%s", fallback);
    im_free(wr);
}

/* A raw counter, bare or under sum/avg/min/max (no rate): its selector, else NULL. */
static const promql_expr_t *raw_counter(const q_t *q, const promql_expr_t *e)
{
    e = unparen(e);
    if (e && e->kind == PROMQL_NODE_AGGREGATE &&
        (e->u.agg.op == PROMQL_AGG_SUM || e->u.agg.op == PROMQL_AGG_AVG ||
         e->u.agg.op == PROMQL_AGG_MAX || e->u.agg.op == PROMQL_AGG_MIN))
        e = unparen(e->u.agg.expr);
    if (!e || e->kind != PROMQL_NODE_VECTOR_SELECTOR) return NULL;
    sel_t s;
    if (!resolve(q, e, &s) || (s.known && s.known->record)) return NULL;
    return sel_counterlike(&s) && s.suffix != LLM_SUFFIX_BUCKET ? e : NULL;
}

/* The selector is one side of counter / counter (reported as a ratio). */
static bool in_counter_ratio(const q_t *q)
{
    for (int d = q->depth - 1; d >= 0; d--) {
        const promql_expr_t *a = q->stack[d];
        if (a->kind == PROMQL_NODE_PAREN || a->kind == PROMQL_NODE_AGGREGATE) continue;
        return a->kind == PROMQL_NODE_BINARY && a->u.bin.op == PROMQL_OP_DIV &&
               raw_counter(q, a->u.bin.lhs) && raw_counter(q, a->u.bin.rhs);
    }
    return false;
}

static void check_raw_counter(q_t *q, const promql_expr_t *vs, const sel_t *s, bool by_name);

/* Strip a sample suffix: the family a name belongs to, by its spelling. */
static size_t name_base_len(const char *n, size_t len)
{
    static const char *const sfx[] = {"_total", "_bucket", "_count", "_sum", "_created"};
    for (size_t i = 0; i < IM_ARRAY_LEN(sfx); i++) {
        size_t sl = strlen(sfx[i]);
        if (len > sl && memcmp(n + len - sl, sfx[i], sl) == 0) return len - sl;
    }
    return len;
}

/* y is the signal x stands for under another name: the same family (x without
 * its _total), or x's replacement (a removed name and the one that took over). */
static bool same_signal(const sel_t *x, const sel_t *y)
{
    if (x->fam && y->fam && x->fam == y->fam) return true;
    size_t xb = name_base_len(x->name, x->len), yb = name_base_len(y->name, y->len);
    if (xb == yb && memcmp(x->name, y->name, xb) == 0) return true;
    const char *repl = llm_catalog_renamed_to(llm_catalog_get(), x->name, x->len);
    if (!repl) repl = llm_catalog_renamed_to(llm_catalog_get(), x->name, xb);
    return repl && strlen(repl) == yb && memcmp(repl, y->name, yb) == 0;
}

typedef struct {
    const q_t *q;
    const sel_t *x;
    bool found;
} signal_find_t;

static bool find_signal(const promql_expr_t *e, void *ctx)
{
    signal_find_t *f = ctx;
    if (f->found) return false;
    sel_t y;
    if (e->kind == PROMQL_NODE_VECTOR_SELECTOR && resolve(f->q, e, &y) && y.known &&
        !y.known->record && same_signal(f->x, &y))
        f->found = true;
    return !f->found;
}

/* `old_name or current_name` (either order): a dashboard written for several
 * versions (or for an OTLP pipeline that drops _total) falls back on purpose.
 * The name that is not exposed is not a problem when the other operand of the
 * nearest `or` queries the exposed name of the same signal. */
static bool or_fallback(const q_t *q, const promql_expr_t *vs, const sel_t *x)
{
    if (x->known) return false;
    for (int d = q->depth - 1; d >= 0; d--) {
        const promql_expr_t *a = q->stack[d];
        if (a->kind != PROMQL_NODE_BINARY || a->u.bin.op != PROMQL_OP_OR) continue;
        const promql_expr_t *child = d + 1 < q->depth ? q->stack[d + 1] : vs;
        const promql_expr_t *other = child == a->u.bin.lhs ? a->u.bin.rhs : a->u.bin.lhs;
        signal_find_t f = {q, x, false};
        promql_expr_walk(other, find_signal, &f);
        return f.found;
    }
    return false;
}

/* The family prefix a dashboard's queries share: up to the `:` of a recording
 * or engine name (`vllm:`), else the first two words (`dynamo_frontend`,
 * `DCGM_FI`). */
static size_t family_prefix(const char *n, size_t len)
{
    const char *c = memchr(n, ':', len);
    if (c) return (size_t)(c - n) + 1;
    const char *u = memchr(n, '_', len);
    if (!u) return len;
    const char *v = memchr(u + 1, '_', len - (size_t)(u + 1 - n));
    return v ? (size_t)(v - n) : len;
}

static void selrec_add(q_t *q, const promql_expr_t *vs, const sel_t *s)
{
    lint_run_t *r = q->r;
    if (r->nsel == r->capsel) {
        r->capsel = r->capsel ? r->capsel * 2 : 32;
        r->sel = im_realloc(r->sel, r->capsel * sizeof *r->sel);
    }
    selrec_t *e = &r->sel[r->nsel++];
    memset(e, 0, sizeof *e);
    e->path = im_strdup(q->w->path);
    size_t pl = family_prefix(s->name, s->len);
    snprintf(e->prefix, sizeof e->prefix, "%.*s", (int)pl, s->name);
    snprintf(e->name, sizeof e->name, "%.*s", (int)s->len, s->name);
    e->known = s->known;
    for (int up = 0; up < q->depth && e->nby < 4; up++) {
        const promql_expr_t *p = parent(q, up);
        if (p->kind != PROMQL_NODE_AGGREGATE || p->u.agg.without) continue;
        for (size_t i = 0; i < p->u.agg.ngrouping && e->nby < 4; i++) {
            im_sv_t g = istr(p->u.agg.grouping[i]);
            if (g.len < sizeof e->by[0]) {
                memcpy(e->by[e->nby], g.p, g.len);
                e->by[e->nby++][g.len] = 0;
            }
        }
    }
    /* a matcher's value from a variable: a substituted range inside the
     * selector's braces, after `label op` */
    for (size_t i = 0; i < vs->u.vs.nmatchers && e->nlabels < SELREC_LABELS; i++) {
        im_sv_t ln = istr(im_matcher_name(vs->u.vs.matchers[i]));
        if (im_sv_eq_cstr(ln, "__name__") || ln.len >= sizeof e->labels[0]) continue;
        memcpy(e->labels[e->nlabels], ln.p, ln.len);
        e->labels[e->nlabels][ln.len] = 0;
        /* find `label` followed by an operator in the selector's text */
        const char *t = q->expr + vs->pos_start, *end = q->expr + vs->pos_end;
        bool var = false;
        for (const char *p = t; p + ln.len < end && !var; p++) {
            if (memcmp(p, ln.p, ln.len) != 0) continue;
            if (p > t && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
            const char *o = p + ln.len;
            while (o < end && *o == ' ') o++;
            if (o >= end || (*o != '=' && *o != '!')) continue;
            while (o < end && (*o == '=' || *o == '!' || *o == '~' || *o == ' ')) o++;
            if (o >= end || (*o != '"' && *o != '\'' && *o != '`')) continue;
            uint32_t vs0 = (uint32_t)(o - q->expr);
            for (size_t k = 0; k < q->w->nsubst; k++)
                if (q->w->subst[k][0] >= vs0 && q->w->subst[k][0] <= vs0 + 1) var = true;
        }
        if (var) e->var_mask |= (uint8_t)(1u << e->nlabels);
        e->nlabels++;
    }
}

/* Whether e filters by l, or breaks its result down by l on purpose. */
static bool selrec_has(const selrec_t *e, const char *l)
{
    for (uint8_t i = 0; i < e->nlabels; i++)
        if (strcmp(e->labels[i], l) == 0) return true;
    for (uint8_t i = 0; i < e->nby; i++)
        if (strcmp(e->by[i], l) == 0) return true;
    return false;
}

void lint__dashboard_vars(lint_run_t *r, size_t from, const char *file, int line, int col)
{
    for (size_t i = from; i < r->nsel; i++) {
        const selrec_t *a = &r->sel[i];
        for (uint8_t li = 0; li < a->nlabels; li++) {
            if (!(a->var_mask & (1u << li))) continue;
            const char *l = a->labels[li];
            /* count each (prefix, label) once: at its first variable use */
            bool first = true;
            for (size_t j = from; j < i && first; j++)
                for (uint8_t lj = 0; lj < r->sel[j].nlabels; lj++)
                    if ((r->sel[j].var_mask & (1u << lj)) && strcmp(r->sel[j].labels[lj], l) == 0 &&
                        strcmp(r->sel[j].prefix, a->prefix) == 0)
                        first = false;
            if (!first) continue;
            /* with: filtered by a variable; a breakdown by the label counts for
             * neither side. Only a clear majority (3 in 4) makes it a rule. */
            size_t with = 0, without = 0;
            for (size_t j = from; j < r->nsel; j++) {
                const selrec_t *b = &r->sel[j];
                if (strcmp(b->prefix, a->prefix) != 0) continue;
                bool var = false;
                for (uint8_t k = 0; k < b->nlabels; k++)
                    if ((b->var_mask & (1u << k)) && strcmp(b->labels[k], l) == 0) var = true;
                if (var)
                    with++;
                else if (!selrec_has(b, l))
                    without++;
            }
            if (with < 3 || without == 0 || without * 3 > with) continue;
            for (size_t j = from; j < r->nsel; j++) {
                const selrec_t *b = &r->sel[j];
                if (strcmp(b->prefix, a->prefix) != 0 || selrec_has(b, l)) continue;
                /* a series that does not carry the label cannot be filtered by it */
                if (b->known && b->known->nlabels > 0 && !is_common_target_label(l, strlen(l)) &&
                    !lint__lname_label((lname_t *)b->known, l, strlen(l), false))
                    continue;
                lint_note(r, "ignores-variable", LINT_SEV_WARNING, file, line, col, b->path,
                          "%s is not filtered by %s, while %zu other selectors "
                          "of %s* in this dashboard filter it with a variable: this panel shows "
                          "every %s, not "
                          "the one selected",
                          b->name, l, with, a->prefix, l);
            }
        }
    }
    for (size_t i = from; i < r->nsel; i++) im_free(r->sel[i].path);
    r->nsel = from;
}

size_t lint__dashboard_mark(const lint_run_t *r)
{
    return r->nsel;
}

static void check_selector(q_t *q, const promql_expr_t *vs)
{
    sel_t s;
    if (!resolve(q, vs, &s)) return;
    /* A name built by a Helm action (`{{ .Values.prefix }}_requests`): unknown. */
    if (lint__tmpl_placeholder(s.name, s.len)) return;
    if (or_fallback(q, vs, &s)) return;
    /* a name no source types: only the naming convention tells a counter */
    bool total_name = !s.typed && s.suffix == LLM_SUFFIX_NONE && s.len > 6 &&
                      memcmp(s.name + s.len - 6, "_total", 6) == 0;
    size_t nbefore = q->r->n;
    if (check_name(q, vs, &s)) {
        if (total_name) check_raw_counter(q, vs, &s, true);
        return;
    }
    /* names without a finding: across the dashboard's queries (a wrong name says enough) */
    if (q->r->n == nbefore && q->w->path && strstr(q->w->path, "panels[")) selrec_add(q, vs, &s);
    check_matchers(q, vs, &s);
    if (s.known && s.known->record) {
        size_t n = 0;
        const char *fam = NULL;
        bool lat = false;
        int64_t rr = 0;
        if (record_buckets(q, &s, &n, &fam, &lat, &rr) || fam) {
            if (lat) q->latency_quantile = true;
            if (rr > q->max_range_ms) q->max_range_ms = rr;
        }
        return;
    }

    /* _bucket outside a quantile / le context. */
    if (s.typed && s.type == LLM_MTYPE_HISTOGRAM && s.suffix == LLM_SUFFIX_BUCKET &&
        !q->w->heatmap && !has_le_context(q, vs))
        report(q, vs, "histogram-suffix", LINT_SEV_WARNING,
               "wrap in histogram_quantile(φ, sum by (le, …) (rate(…[5m]))), or use _count for a "
               "rate of observations",
               "%.*s is used outside a quantile or le context: each series is one bucket's "
               "cumulative count",
               (int)s.len, s.name);

    check_raw_counter(q, vs, &s, total_name);
}

/* counter-without-rate: the raw counter compared or aggregated as a level. A
 * name no source types counts by the naming convention (a _total is a counter). */
static void check_raw_counter(q_t *q, const promql_expr_t *vs, const sel_t *s, bool by_name)
{
    bool in_subquery = false;
    for (int d = q->depth - 1; d >= 0; d--)
        if (q->stack[d]->kind == PROMQL_NODE_SUBQUERY) in_subquery = true;
    if ((by_name || sel_counterlike(s)) && s->suffix != LLM_SUFFIX_BUCKET && !in_subquery &&
        !in_counter_ratio(q)) {
        const promql_expr_t *p = NULL;
        int d = q->depth - 1;
        while (d >= 0 && q->stack[d]->kind == PROMQL_NODE_PAREN) d--;
        p = d >= 0 ? q->stack[d] : NULL;
        bool bad = false;
        if (p && p->kind == PROMQL_NODE_AGGREGATE) {
            promql_aggop_t op = p->u.agg.op;
            bad = op == PROMQL_AGG_SUM || op == PROMQL_AGG_AVG || op == PROMQL_AGG_MIN ||
                  op == PROMQL_AGG_MAX || op == PROMQL_AGG_STDDEV || op == PROMQL_AGG_STDVAR ||
                  op == PROMQL_AGG_QUANTILE;
        } else if (p && p->kind == PROMQL_NODE_BINARY && promql_binop_is_comparison(p->u.bin.op)) {
            const promql_expr_t *other = unparen(p->u.bin.lhs) == vs ? p->u.bin.rhs : p->u.bin.lhs;
            other = unparen(other);
            /* `x > 0` asks whether it ever happened: fine. */
            bad = !(other->kind == PROMQL_NODE_NUMBER && other->u.number.value == 0);
        }
        if (bad) {
            char fx[1200];
            uint32_t sp[1][2] = {{vs->pos_start, vs->pos_end}};
            bool cmp = false;
            for (int k = q->depth - 1; k >= 0 && !cmp; k--)
                cmp = q->stack[k]->kind == PROMQL_NODE_BINARY &&
                      promql_binop_is_comparison(q->stack[k]->u.bin.op);
            wrap_fix(q, (const uint32_t(*)[2])sp, 1, cmp ? "increase" : "rate", cmp ? "1h" : "5m",
                     "wrap it in rate(…[5m]) or increase(…[1h])", fx, sizeof fx);
            report(q, vs, "counter-without-rate", LINT_SEV_WARNING, fx,
                   "%.*s is %sa counter (it only grows and resets on restart): its raw value is "
                   "not a level",
                   (int)s->len, s->name, by_name ? "by its _total name " : "");
        }
    }
}

/* ---- Calls ---- */

static const promql_expr_t *range_arg_selector(const promql_expr_t *call)
{
    for (size_t i = 0; i < call->u.call.nargs; i++) {
        const promql_expr_t *a = unparen(call->u.call.args[i]);
        if (a->kind == PROMQL_NODE_MATRIX_SELECTOR) return a;
    }
    return NULL;
}

static bool under_div(const q_t *q)
{
    for (int d = q->depth - 1; d >= 0; d--) {
        const promql_expr_t *a = q->stack[d];
        if (a->kind == PROMQL_NODE_BINARY && a->u.bin.op == PROMQL_OP_DIV) return true;
        if (a->kind == PROMQL_NODE_BINARY && !promql_binop_is_comparison(a->u.bin.op) &&
            !promql_binop_is_set(a->u.bin.op))
            return true; /* part of a larger arithmetic: leave it */
    }
    return false;
}

static void check_quantile_arg(q_t *q, const promql_expr_t *call, const promql_expr_t *arg,
                               bool *aggregated);

static void check_quantile_arg(q_t *q, const promql_expr_t *call, const promql_expr_t *a,
                               bool *aggregated)
{
    a = unparen(a);
    if (!a) return;
    switch (a->kind) {
    case PROMQL_NODE_AGGREGATE: {
        const promql_aggregate_t *g = &a->u.agg;
        bool has_le = false;
        for (size_t i = 0; i < g->ngrouping; i++)
            if (im_sv_eq_cstr(istr(g->grouping[i]), "le")) has_le = true;
        bool drops = g->without ? has_le : !has_le;
        if (g->op == PROMQL_AGG_TOPK || g->op == PROMQL_AGG_BOTTOMK) drops = false;
        if (drops) {
            report(q, a, "quantile-without-le", LINT_SEV_ERROR,
                   g->without ? "remove le from without(…)" : "add le to by(…): sum by (le, …)",
                   "histogram_quantile needs the le label, but this %s %s it: the result is empty",
                   promql_aggop_str(g->op), g->without ? "removes" : "drops");
            *aggregated = true;
            return;
        }
        *aggregated = true;
        check_quantile_arg(q, call, g->expr, aggregated);
        return;
    }
    case PROMQL_NODE_CALL:
        for (size_t i = 0; i < a->u.call.nargs; i++)
            if (a->u.call.args[i]->type == PROMQL_TYPE_VECTOR ||
                a->u.call.args[i]->type == PROMQL_TYPE_MATRIX)
                check_quantile_arg(q, call, a->u.call.args[i], aggregated);
        return;
    case PROMQL_NODE_MATRIX_SELECTOR: return;
    case PROMQL_NODE_SUBQUERY: check_quantile_arg(q, call, a->u.sq.expr, aggregated); return;
    case PROMQL_NODE_BINARY:
        check_quantile_arg(q, call, a->u.bin.lhs, aggregated);
        if (a->u.bin.rhs->type == PROMQL_TYPE_VECTOR) {
            bool agg2 = false;
            check_quantile_arg(q, call, a->u.bin.rhs, &agg2);
        }
        return;
    default: return;
    }
}

static const double *quantile_buckets(const q_t *q, const promql_expr_t *a, size_t *n,
                                      const char **fam);

/* A recording rule of the linted files whose expression is a histogram_quantile:
 * the bucket bounds of that histogram (NULL if not, or unknown). */
static const double *record_buckets(const q_t *cq, const sel_t *s, size_t *n, const char **fam,
                                    bool *latency, int64_t *range_ms)
{
    q_t *q = (q_t *)cq; /* recfam/record_depth are scratch space */
    if (!s->known || !s->known->record || !s->known->record_expr || q->record_depth > 4)
        return NULL;
    promql_expr_t *root = NULL;
    im_err_t err;
    im_err_clear(&err);
    const char *rx = s->known->record_expr;
    if (promql_parse(rx, strlen(rx), &root, &err) != IM_OK) return NULL;
    const promql_expr_t *c = unparen(root);
    const double *bk = NULL;
    if (func_is(c, "histogram_quantile") && c->u.call.nargs == 2) {
        const char *f = NULL;
        q->record_depth++;
        bk = quantile_buckets(q, c->u.call.args[1], n, &f);
        q->record_depth--;
        if (f) {
            snprintf(q->recfam, sizeof q->recfam, "%s", f);
            *fam = q->recfam;
            if (latency)
                *latency =
                    strstr(f, "_seconds") || strstr(f, "latency") || strstr(f, "_milliseconds");
        }
        if (range_ms) *range_ms = longest_range(c, 0);
    }
    promql_expr_free(root);
    return bk;
}

/* Bucket bounds of the histogram under a histogram_quantile (NULL if unknown). */
static const double *quantile_buckets(const q_t *q, const promql_expr_t *a, size_t *n,
                                      const char **fam)
{
    a = unparen(a);
    if (!a) return NULL;
    switch (a->kind) {
    case PROMQL_NODE_VECTOR_SELECTOR: {
        sel_t s;
        if (!resolve(q, a, &s)) return NULL;
        *fam = s.name;
        if (s.known && !s.known->catalog && s.known->nle > 0) {
            *n = s.known->nle;
            return s.known->le;
        }
        if (s.known && s.known->catalog && s.known->nle > 0) {
            *n = s.known->nle;
            return s.known->le;
        }
        if (s.fam && s.fam->nbuckets > 0 && !s.fam->buckets_vary && !s.known) {
            *n = s.fam->nbuckets;
            return s.fam->buckets;
        }
        return NULL;
    }
    case PROMQL_NODE_MATRIX_SELECTOR: return quantile_buckets(q, a->u.ms.vs, n, fam);
    case PROMQL_NODE_AGGREGATE: return quantile_buckets(q, a->u.agg.expr, n, fam);
    case PROMQL_NODE_SUBQUERY: return quantile_buckets(q, a->u.sq.expr, n, fam);
    case PROMQL_NODE_CALL:
        for (size_t i = 0; i < a->u.call.nargs; i++)
            if (a->u.call.args[i]->type != PROMQL_TYPE_SCALAR &&
                a->u.call.args[i]->type != PROMQL_TYPE_STRING)
                return quantile_buckets(q, a->u.call.args[i], n, fam);
        return NULL;
    default: return NULL;
    }
}

static bool is_seconds_histogram_quantile(const q_t *q, const promql_expr_t *call)
{
    if (!func_is(call, "histogram_quantile") || call->u.call.nargs != 2) return false;
    size_t n = 0;
    const char *fam = NULL;
    (void)quantile_buckets(q, call->u.call.args[1], &n, &fam);
    return fam &&
           (strstr(fam, "_seconds") || strstr(fam, "latency") || strstr(fam, "_milliseconds"));
}

static void check_phi(q_t *q, const promql_expr_t *phi, const char *what)
{
    phi = unparen(phi);
    if (!phi || phi->kind != PROMQL_NODE_NUMBER) return;
    double v = phi->u.number.value;
    if (v < 0 || v > 1 || isnan(v)) {
        char b[40];
        im_fmt_float_go(v, 'g', b, sizeof b);
        char fx[80];
        snprintf(fx, sizeof fx, "use %s",
                 v > 1 && v <= 100 ? "a fraction: 0.95 for p95, 0.99 for p99" : "φ in [0, 1]");
        report(q, phi, "quantile-range", LINT_SEV_ERROR, fx,
               "%s(%s, …): φ must lie in [0, 1]; %s returns %s", what, b, what,
               v < 0 ? "-Inf" : "+Inf");
    }
}

static void check_call(q_t *q, const promql_expr_t *e)
{
    const char *fn = e->u.call.func->name;
    if (is_rate_like(e)) {
        const promql_expr_t *a = unparen(e->u.call.args[0]);
        if (a->kind == PROMQL_NODE_MATRIX_SELECTOR) {
            sel_t s;
            if (resolve(q, a->u.ms.vs, &s) && sel_gaugelike(&s) && !(s.known && s.known->record)) {
                char fx[300];
                snprintf(fx, sizeof fx, "query %.*s directly, or deriv()/delta() for its change",
                         (int)s.len, s.name);
                report(
                    q, e, "rate-on-gauge", LINT_SEV_ERROR, fx,
                    "%s() over %.*s, a gauge: %s is for counters, its result here is meaningless",
                    fn, (int)s.len, s.name, fn);
            }
            /* A histogram of one maximum per request: the rate of its _sum is no maximum. */
            if (s.typed && s.type == LLM_MTYPE_HISTOGRAM && s.suffix == LLM_SUFFIX_SUM &&
                strcmp(fn, "resets") != 0 && (strstr(s.name, "_max_") || strstr(s.name, ":max_")) &&
                !under_div(q)) {
                char fx[600], rb[32];
                im_duration_format(a->u.ms.range_ms, rb, sizeof rb);
                snprintf(fx, sizeof fx,
                         "use histogram_quantile(0.99, sum by (le) (rate(%.*s_bucket[%s])))",
                         (int)s.len - 4, s.name, rb);
                report(q, e, "rate-of-max-histogram", LINT_SEV_WARNING, fx,
                       "%.*s records one maximum per request: %s() of its _sum adds those maxima "
                       "up over all requests, it is not a maximum",
                       (int)s.len - 4, s.name, fn);
            }
            /* rate(x_seconds_sum[…]) on its own reads as a duration but is seconds/second. */
            if (s.typed && (s.type == LLM_MTYPE_HISTOGRAM || s.type == LLM_MTYPE_SUMMARY) &&
                s.suffix == LLM_SUFFIX_SUM && strcmp(fn, "resets") != 0 &&
                (strstr(s.name, "_seconds") || (s.fam && s.fam->unit == LLM_UNIT_SECONDS)) &&
                !under_div(q)) {
                char fx[600];
                int bl = (int)s.len - 4;
                char rb[32];
                im_duration_format(a->u.ms.range_ms, rb, sizeof rb);
                snprintf(fx, sizeof fx,
                         "divide by the observation rate: %s(%.*s_sum[%s]) / %s(%.*s_count[%s])",
                         fn, bl, s.name, rb, fn, bl, s.name, rb);
                report(q, e, "sum-rate-as-latency", LINT_SEV_WARNING, fx,
                       "%s(%.*s) is seconds per second (mean concurrency), not a duration", fn,
                       (int)s.len, s.name);
            }
        } else if (a->kind == PROMQL_NODE_SUBQUERY) {
            const promql_expr_t *in = unparen(a->u.sq.expr);
            if (in->kind == PROMQL_NODE_AGGREGATE) {
                report(q, e, "rate-of-sum", LINT_SEV_WARNING,
                       "sum the rates instead: sum(rate(x[5m]))",
                       "%s() over a subquery of %s(…): counter resets of single series are lost in "
                       "the sum, so the "
                       "rate jumps",
                       fn, promql_aggop_str(in->u.agg.op));
            }
        }
    }
    if (strcmp(fn, "histogram_quantile") == 0 && e->u.call.nargs == 2) {
        check_phi(q, e->u.call.args[0], "histogram_quantile");
        bool aggregated = false;
        size_t before = q->r->n;
        check_quantile_arg(q, e, e->u.call.args[1], &aggregated);
        if (!aggregated && q->r->n == before && !per_replica_intent(q)) {
            size_t n = 0;
            const char *fam = NULL;
            (void)quantile_buckets(q, e->u.call.args[1], &n, &fam);
            if (fam) {
                /* the model label of the engine the family belongs to */
                const llm_serving_t *sv = llm_serving_get();
                int eng = llm_serving_engine_of(sv, fam, strlen(fam));
                const char *ml = eng >= 0 ? llm_serving_engine(sv, eng)->model_label : "";
                char fx[160];
                snprintf(fx, sizeof fx,
                         "aggregate the buckets first: histogram_quantile(φ, sum by (le, %s) "
                         "(rate(…[5m])))",
                         ml[0] ? ml : "model_name");
                report(q, e, "quantile-per-series", LINT_SEV_INFO, fx,
                       "histogram_quantile over un-aggregated buckets gives one quantile per "
                       "series (per pod, engine, "
                       "…), not one per model");
            }
        }
        if (is_seconds_histogram_quantile(q, e)) q->latency_quantile = true;
    }
    if (strcmp(fn, "quantile_over_time") == 0 && e->u.call.nargs == 2)
        check_phi(q, e->u.call.args[0], fn);
    /* range-too-short */
    const promql_expr_t *ms = range_arg_selector(e);
    if (ms && !in_subst(q, ms)) {
        sel_t s;
        int64_t iv = q->r->names->default_interval_ms;
        if (resolve(q, ms->u.ms.vs, &s) && s.known && s.known->interval_ms > 0)
            iv = s.known->interval_ms;
        if (iv > 0 && ms->u.ms.range_ms < 2 * iv &&
            (is_rate_like(e) || func_is(e, "delta") || func_is(e, "deriv"))) {
            char rb[32], ib[32], fb[128];
            im_duration_format(ms->u.ms.range_ms, rb, sizeof rb);
            im_duration_format(iv, ib, sizeof ib);
            char sug[32];
            im_duration_format(4 * iv, sug, sizeof sug);
            snprintf(fb, sizeof fb, "make the range at least [%s], 4 × the scrape interval", sug);
            report(q, ms, "range-too-short", LINT_SEV_WARNING, fb,
                   "the range [%s] holds fewer than two samples at a %s scrape interval: %s() "
                   "returns nothing",
                   rb, ib, fn);
        }
    }
}

/* ---- Aggregations ---- */

static bool is_instance_label(im_sv_t l)
{
    static const char *const ids[] = {"instance",
                                      "pod",
                                      "engine",
                                      "gpu",
                                      "UUID",
                                      "uuid",
                                      "Hostname",
                                      "hostname",
                                      "device",
                                      "pci_bus_id",
                                      "node",
                                      "pod_name",
                                      "kubernetes_pod_name",
                                      "container"};
    for (size_t i = 0; i < IM_ARRAY_LEN(ids); i++)
        if (im_sv_eq_cstr(l, ids[i])) return true;
    return false;
}

static void check_aggregate(q_t *q, const promql_expr_t *e)
{
    const promql_aggregate_t *a = &e->u.agg;
    if (a->op == PROMQL_AGG_QUANTILE) check_phi(q, a->param, "quantile");
    /* by (label) the argument never carries. */
    if (!a->without && a->ngrouping > 0) {
        labelset_t ls;
        expr_labels(q, a->expr, &ls);
        for (size_t i = 0; i < a->ngrouping; i++) {
            im_sv_t l = istr(a->grouping[i]);
            if (!label_suspicious(q, &ls, l.p, l.len)) continue;
            char fx[200];
            const char *cl = closest_label(&ls, l.p, l.len);
            if (cl) snprintf(fx, sizeof fx, "use %s", cl);
            char ex[128];
            snprintf(ex, sizeof ex, "exported_%.*s", (int)l.len, l.p);
            if (ls_has(&ls, ex, strlen(ex))) {
                snprintf(fx, sizeof fx, "use %s", ex);
                report(q, e, "prefix-mismatch", LINT_SEV_ERROR, fx,
                       "the series carry %s, not %.*s: the scrape renamed the target's label (no "
                       "honor_labels)",
                       ex, (int)l.len, l.p);
                continue;
            }
            report(q, e, "unknown-label", LINT_SEV_WARNING, cl ? fx : NULL,
                   "%s by (%.*s): the aggregated series never carry %.*s, so everything collapses "
                   "into one group",
                   promql_aggop_str(a->op), (int)l.len, l.p, (int)l.len, l.p);
        }
    }
    /* sum over a ratio gauge across instances. */
    if (a->op == PROMQL_AGG_SUM) {
        const promql_expr_t *in = unparen(a->expr);
        if (in->kind == PROMQL_NODE_VECTOR_SELECTOR) {
            sel_t s;
            if (resolve(q, in, &s) && s.fam && s.typed && s.type == LLM_MTYPE_GAUGE &&
                (s.fam->unit == LLM_UNIT_RATIO || s.fam->unit == LLM_UNIT_PERCENT)) {
                bool per_instance = a->without;
                for (size_t i = 0; i < a->ngrouping && !per_instance; i++)
                    per_instance = is_instance_label(istr(a->grouping[i]));
                /* sum(x) / count(x) is an average. */
                const promql_expr_t *p = NULL;
                for (int d = q->depth - 1; d >= 0; d--) {
                    if (q->stack[d]->kind == PROMQL_NODE_PAREN) continue;
                    p = q->stack[d];
                    break;
                }
                bool divided = p && p->kind == PROMQL_NODE_BINARY && p->u.bin.op == PROMQL_OP_DIV;
                if (!per_instance && !divided) {
                    char sfx[1200] = "take max or avg instead of sum";
                    if (e->pos_start + 3 <= q->len &&
                        memcmp(q->expr + e->pos_start, "sum", 3) == 0) {
                        char *t = im_malloc(q->len + 1);
                        memcpy(t, q->expr, q->len);
                        t[q->len] = 0;
                        memcpy(t + e->pos_start, "max", 3);
                        if (valid_query(t) && q->len < 1000)
                            snprintf(sfx, sizeof sfx, "use %.1000s", t);
                        im_free(t);
                    }
                    report(q, e, "sum-of-ratio-gauge", LINT_SEV_WARNING, sfx,
                           "sum over %.*s, a %s gauge (%s), adds fractions across series: the "
                           "result can exceed "
                           "100%%",
                           (int)s.len, s.name, s.fam->unit == LLM_UNIT_RATIO ? "0–1" : "0–100",
                           s.fam->unit == LLM_UNIT_RATIO ? "1 means 100%" : "percent");
                }
            }
        }
    }
}

/* ---- Binary ---- */

static llm_unit_t expr_unit(const q_t *q, const promql_expr_t *e, bool *prefix_cache)
{
    e = unparen(e);
    if (!e) return LLM_UNIT_NONE;
    switch (e->kind) {
    case PROMQL_NODE_VECTOR_SELECTOR: {
        sel_t s;
        if (!resolve(q, e, &s)) return LLM_UNIT_NONE;
        if (s.fam && (strstr(s.fam->name, "prefix_cache_hits") ||
                      strstr(s.fam->name, "prefix_cache_queries")))
            *prefix_cache = true;
        return sel_unit(&s);
    }
    case PROMQL_NODE_MATRIX_SELECTOR: return expr_unit(q, e->u.ms.vs, prefix_cache);
    case PROMQL_NODE_CALL:
        if (is_rate_like(e) || func_is(e, "sum_over_time") || func_is(e, "delta"))
            return expr_unit(q, e->u.call.args[0], prefix_cache);
        return LLM_UNIT_NONE;
    case PROMQL_NODE_AGGREGATE:
        if (e->u.agg.op == PROMQL_AGG_SUM || e->u.agg.op == PROMQL_AGG_AVG ||
            e->u.agg.op == PROMQL_AGG_MAX || e->u.agg.op == PROMQL_AGG_MIN)
            return expr_unit(q, e->u.agg.expr, prefix_cache);
        return LLM_UNIT_NONE;
    default: return LLM_UNIT_NONE;
    }
}

static const promql_expr_t *quantile_side(const promql_expr_t *e)
{
    e = unparen(e);
    return func_is(e, "histogram_quantile") ? e : NULL;
}

/* The buckets behind one side of a comparison: a histogram_quantile, or a
 * recorded quantile (optionally under max/min/avg). */
static const double *side_buckets(const q_t *q, const promql_expr_t *e, size_t *n, const char **fam)
{
    e = unparen(e);
    const promql_expr_t *qs = quantile_side(e);
    if (qs && qs->u.call.nargs == 2) return quantile_buckets(q, qs->u.call.args[1], n, fam);
    if (e && e->kind == PROMQL_NODE_AGGREGATE &&
        (e->u.agg.op == PROMQL_AGG_MAX || e->u.agg.op == PROMQL_AGG_MIN ||
         e->u.agg.op == PROMQL_AGG_AVG))
        e = unparen(e->u.agg.expr);
    if (e && e->kind == PROMQL_NODE_VECTOR_SELECTOR) {
        sel_t s;
        if (!resolve(q, e, &s)) return NULL;
        return record_buckets(q, &s, n, fam, NULL, NULL);
    }
    return NULL;
}

static void check_threshold(q_t *q, const promql_expr_t *bin)
{
    const promql_binary_t *b = &bin->u.bin;
    const promql_expr_t *num = unparen(b->rhs);
    bool lhs_is_q = true;
    size_t n = 0;
    const char *fam = NULL;
    const double *bk = NULL;
    if (num && num->kind == PROMQL_NODE_NUMBER) bk = side_buckets(q, b->lhs, &n, &fam);
    if (!bk) {
        num = unparen(b->lhs);
        lhs_is_q = false;
        if (num && num->kind == PROMQL_NODE_NUMBER) bk = side_buckets(q, b->rhs, &n, &fam);
    }
    if (!bk || n < 1 || !num || num->kind != PROMQL_NODE_NUMBER) return;
    double t = num->u.number.value;
    promql_binop_t op = b->op;
    if (!lhs_is_q) { /* 2 < q  ==  q > 2 */
        if (op == PROMQL_OP_LSS)
            op = PROMQL_OP_GTR;
        else if (op == PROMQL_OP_GTR)
            op = PROMQL_OP_LSS;
        else if (op == PROMQL_OP_LTE)
            op = PROMQL_OP_GTE;
        else if (op == PROMQL_OP_GTE)
            op = PROMQL_OP_LTE;
    }
    char tb[40], lo[40], hi[40];
    im_fmt_float_go(t, 'g', tb, sizeof tb);
    double top = bk[n - 1];
    if ((op == PROMQL_OP_GTR && t >= top) || (op == PROMQL_OP_GTE && t > top)) {
        im_fmt_float_go(top, 'g', hi, sizeof hi);
        char fx[160];
        snprintf(fx, sizeof fx, "use a threshold below %s, or a histogram with larger buckets", hi);
        report(q, bin, "top-bucket", LINT_SEV_ERROR, fx,
               "the highest finite bucket of %s is %s: a quantile above it is reported as %s (a "
               "flat line), so %s %s "
               "never holds",
               fam, hi, hi, op == PROMQL_OP_GTR ? ">" : ">=", tb);
        return;
    }
    if (!q->w->is_alert) return;
    for (size_t i = 0; i + 1 < n; i++) {
        if (t > bk[i] && t < bk[i + 1] && bk[i] > 0 && bk[i + 1] / bk[i] >= 2) {
            im_fmt_float_go(bk[i], 'g', lo, sizeof lo);
            im_fmt_float_go(bk[i + 1], 'g', hi, sizeof hi);
            double near = (t - bk[i]) <= (bk[i + 1] - t) ? bk[i] : bk[i + 1];
            char nb[40], fx[120];
            im_fmt_float_go(near, 'g', nb, sizeof nb);
            snprintf(fx, sizeof fx, "use %s as the threshold: it is a bucket bound", nb);
            report(q, bin, "bucket-gap-threshold", LINT_SEV_WARNING, fx,
                   "threshold %s lies between the buckets %s and %s of %s: the quantile there is "
                   "linear "
                   "interpolation, not a measurement",
                   tb, lo, hi, fam);
            return;
        }
    }
}

/* An upper bound of e's values when one is known (a 0–1 gauge, a percent
 * gauge, a ratio), or +Inf when e is known to be unbounded (a rate, a raw
 * counter), or NAN when nothing is known. */
static double upper_bound(const q_t *q, const promql_expr_t *e, int depth)
{
    e = unparen(e);
    if (!e || depth > 16) return NAN;
    switch (e->kind) {
    case PROMQL_NODE_NUMBER: return e->u.number.value;
    case PROMQL_NODE_VECTOR_SELECTOR: {
        sel_t s;
        if (!resolve(q, e, &s) || !s.fam || (s.known && s.known->record)) return NAN;
        if (s.typed && s.type == LLM_MTYPE_GAUGE && s.fam->unit == LLM_UNIT_RATIO) return 1;
        if (s.typed && s.type == LLM_MTYPE_GAUGE && s.fam->unit == LLM_UNIT_PERCENT) return 100;
        if (sel_counterlike(&s)) return INFINITY;
        return NAN;
    }
    case PROMQL_NODE_CALL:
        if (is_rate_like(e) || func_is(e, "deriv")) {
            /* Seconds per second (CPU time, busy time) is a fraction of one. */
            const promql_expr_t *m = unparen(e->u.call.args[0]);
            if (m && m->kind == PROMQL_NODE_MATRIX_SELECTOR && m->u.ms.vs->u.vs.name &&
                strstr(istr(m->u.ms.vs->u.vs.name).p, "seconds"))
                return NAN;
            return INFINITY;
        }
        if (func_is(e, "avg_over_time") || func_is(e, "max_over_time") ||
            func_is(e, "min_over_time") || func_is(e, "last_over_time"))
            return upper_bound(q, e->u.call.args[0], depth + 1);
        return NAN;
    case PROMQL_NODE_MATRIX_SELECTOR: return upper_bound(q, e->u.ms.vs, depth + 1);
    case PROMQL_NODE_AGGREGATE:
        if (e->u.agg.op == PROMQL_AGG_AVG || e->u.agg.op == PROMQL_AGG_MAX ||
            e->u.agg.op == PROMQL_AGG_MIN || e->u.agg.op == PROMQL_AGG_QUANTILE)
            return upper_bound(q, e->u.agg.expr, depth + 1);
        if (e->u.agg.op == PROMQL_AGG_SUM) {
            double u = upper_bound(q, e->u.agg.expr, depth + 1);
            return isinf(u) ? u : NAN;
        }
        return NAN;
    case PROMQL_NODE_BINARY:
        /* `x > 0` filters x: the values stay x's. */
        if (promql_binop_is_comparison(e->u.bin.op) && !e->u.bin.return_bool &&
            unparen(e->u.bin.rhs)->kind == PROMQL_NODE_NUMBER)
            return upper_bound(q, e->u.bin.lhs, depth + 1);
        return NAN;
    default: return NAN;
    }
}

/* 1 - x (or 100 - x) where x can exceed 1 (100): negative by construction. */
static void check_negative(q_t *q, const promql_expr_t *e)
{
    const promql_expr_t *l = unparen(e->u.bin.lhs);
    if (!l || l->kind != PROMQL_NODE_NUMBER || in_subst(q, e)) return;
    double k = l->u.number.value;
    if (k != 1 && k != 100) return;
    double u = upper_bound(q, e->u.bin.rhs, 0);
    if (isnan(u) || u <= k) return;
    char kb[16];
    im_fmt_float_go(k, 'g', kb, sizeof kb);
    if (isinf(u))
        report(q, e, "negative-by-construction", LINT_SEV_WARNING,
               "divide by the total first: 1 - (sum(rate(errors[5m])) / sum(rate(requests[5m])))",
               "%s - (…) subtracts a rate or a count, which is not bounded by %s: the result goes "
               "negative whenever it exceeds %s",
               kb, kb, kb);
    else
        report(q, e, "negative-by-construction", LINT_SEV_WARNING,
               "subtract from 100 (a percent) or divide the percentage by 100",
               "%s - (…) subtracts a percentage (0–100): the result is negative almost always", kb);
}

/* bucket_series {le="…"} <op> x_count: one-to-one matching pairs series with
 * the same labels, and only one side has le, so the result is always empty. */
static void check_le_one_side(q_t *q, const promql_expr_t *e)
{
    const promql_binary_t *b = &e->u.bin;
    const promql_vector_matching_t *m = b->matching;
    if (m->card != PROMQL_CARD_ONE_TO_ONE && m->card != PROMQL_CARD_MANY_TO_ONE &&
        m->card != PROMQL_CARD_ONE_TO_MANY)
        return;
    for (size_t i = 0; i < m->nmatching_labels; i++)
        if (im_sv_eq_cstr(istr(m->matching_labels[i]), "le")) return; /* on(le) / ignoring(le) */
    if (m->on) return; /* on(…) without le: le is not compared */
    labelset_t l, r;
    expr_labels(q, b->lhs, &l);
    expr_labels(q, b->rhs, &r);
    if (l.any || r.any) return;
    bool ll = ls_has(&l, "le", 2), rl = ls_has(&r, "le", 2);
    if (ll == rl) return;
    report(q, e, "le-one-side", LINT_SEV_ERROR,
           "add ignoring(le) to the operator, or aggregate both sides by the same labels",
           "only the %s side carries le (bucket series): %s matches series with identical labels, "
           "so this %s never finds a pair and the result is always empty",
           ll ? "left" : "right", promql_binop_str(b->op),
           promql_binop_is_comparison(b->op) ? "comparison" : "operation");
}

/* count(x == 1) < N: when no series passes the filter, count() returns no series
 * at all (not 0), so the comparison is empty exactly when it should hold. */
static void check_count_of_nothing(q_t *q, const promql_expr_t *e)
{
    const promql_binary_t *b = &e->u.bin;
    const promql_expr_t *l = unparen(b->lhs), *r = unparen(b->rhs);
    if (!l || !r || l->kind != PROMQL_NODE_AGGREGATE || r->kind != PROMQL_NODE_NUMBER) return;
    if (l->u.agg.op != PROMQL_AGG_COUNT || l->u.agg.ngrouping || l->u.agg.without) return;
    double n = r->u.number.value;
    bool low = (b->op == PROMQL_OP_LSS && n > 0) || (b->op == PROMQL_OP_LTE && n >= 0) ||
               (b->op == PROMQL_OP_EQL && n == 0);
    const promql_expr_t *in = unparen(l->u.agg.expr);
    if (!low || !in || in->kind != PROMQL_NODE_BINARY ||
        !promql_binop_is_comparison(in->u.bin.op) || in->u.bin.return_bool || in_subst(q, e))
        return;
    char cand[1100], fx[1200];
    const char *t = q->expr;
    size_t ll = b->lhs->pos_end - b->lhs->pos_start, rest = e->pos_end - b->lhs->pos_end;
    if (e->pos_end <= q->len && ll + rest + 20 < sizeof cand) {
        snprintf(cand, sizeof cand, "(%.*s or vector(0))%.*s", (int)ll, t + b->lhs->pos_start,
                 (int)rest, t + b->lhs->pos_end);
        if (!valid_query(cand)) cand[0] = 0;
    } else {
        cand[0] = 0;
    }
    if (cand[0])
        snprintf(fx, sizeof fx, "use %s", cand);
    else
        snprintf(fx, sizeof fx, "add `or vector(0)` inside: (count(…) or vector(0)) %s …",
                 promql_binop_str(b->op));
    report(q, e, "count-of-nothing", LINT_SEV_WARNING, fx,
           "count() of a filter returns no series at all when nothing passes it, not 0: this "
           "alert is silent exactly when every series fails the filter (all replicas down)");
}

static void check_binary(q_t *q, const promql_expr_t *e)
{
    const promql_binary_t *b = &e->u.bin;
    if (b->op == PROMQL_OP_DIV) {
        bool pl = false, pr = false;
        llm_unit_t ul = expr_unit(q, b->lhs, &pl), ur = expr_unit(q, b->rhs, &pr);
        if ((pl || pr) && ((ul == LLM_UNIT_TOKENS && ur == LLM_UNIT_REQUESTS) ||
                           (ul == LLM_UNIT_REQUESTS && ur == LLM_UNIT_TOKENS)))
            report(
                q, e, "token-vs-request", LINT_SEV_WARNING,
                "divide vllm:prefix_cache_hits_total by vllm:prefix_cache_queries_total (both in "
                "tokens)",
                "this ratio divides %s by %s: the prefix-cache counters count tokens, not requests",
                llm_unit_name(ul), llm_unit_name(ur));
    }
    if (b->op == PROMQL_OP_DIV) {
        const promql_expr_t *l = raw_counter(q, b->lhs), *r = raw_counter(q, b->rhs);
        if (l && r && !in_subst(q, e)) {
            uint32_t sp[2][2] = {{l->pos_start, l->pos_end}, {r->pos_start, r->pos_end}};
            char fx[1200];
            wrap_fix(q, (const uint32_t(*)[2])sp, 2, "rate", "5m",
                     "take rate(…[5m]) of both counters", fx, sizeof fx);
            report(q, e, "counter-ratio-without-rate", LINT_SEV_WARNING, fx,
                   "a ratio of two raw counters is the average since each process started (and "
                   "jumps at every restart), not the current rate");
        }
    }
    if (b->op == PROMQL_OP_DIV) {
        /* a 0–1 fraction divided by 100 (its name may say _perc) */
        const promql_expr_t *r = unparen(b->rhs);
        bool pc = false;
        if (r && r->kind == PROMQL_NODE_NUMBER && r->u.number.value == 100 &&
            expr_unit(q, b->lhs, &pc) == LLM_UNIT_RATIO && !in_subst(q, b->rhs))
            report(q, e, "ratio-by-100", LINT_SEV_WARNING,
                   "drop the / 100 (multiply by 100 for a 0–100 percent)",
                   "the left side is a 0–1 fraction (1 means 100 %%), whatever its name says: "
                   "divided by 100, 50 %% shows as 0.5 %%");
    }
    if (b->op == PROMQL_OP_SUB) check_negative(q, e);
    if (promql_binop_is_comparison(b->op)) check_threshold(q, e);
    if (b->matching && !promql_binop_is_set(b->op)) check_le_one_side(q, e);
    if (promql_binop_is_comparison(b->op)) check_count_of_nothing(q, e);
}

/* ---- Walk ---- */

static void visit(q_t *q, const promql_expr_t *e)
{
    if (!e || q->depth >= MAX_DEPTH) return;
    switch (e->kind) {
    case PROMQL_NODE_VECTOR_SELECTOR: check_selector(q, e); break;
    case PROMQL_NODE_MATRIX_SELECTOR:
        if (e->u.ms.range_ms > q->max_range_ms) q->max_range_ms = e->u.ms.range_ms;
        break;
    case PROMQL_NODE_SUBQUERY:
        if (e->u.sq.range_ms > q->max_range_ms) q->max_range_ms = e->u.sq.range_ms;
        break;
    case PROMQL_NODE_CALL: check_call(q, e); break;
    case PROMQL_NODE_AGGREGATE: check_aggregate(q, e); break;
    case PROMQL_NODE_BINARY: check_binary(q, e); break;
    default: break;
    }
    q->stack[q->depth++] = e;
    switch (e->kind) {
    case PROMQL_NODE_MATRIX_SELECTOR: visit(q, e->u.ms.vs); break;
    case PROMQL_NODE_SUBQUERY: visit(q, e->u.sq.expr); break;
    case PROMQL_NODE_CALL:
        for (size_t i = 0; i < e->u.call.nargs; i++) visit(q, e->u.call.args[i]);
        break;
    case PROMQL_NODE_AGGREGATE:
        if (e->u.agg.param) visit(q, e->u.agg.param);
        visit(q, e->u.agg.expr);
        break;
    case PROMQL_NODE_BINARY:
        visit(q, e->u.bin.lhs);
        visit(q, e->u.bin.rhs);
        break;
    case PROMQL_NODE_UNARY: visit(q, e->u.unary.expr); break;
    case PROMQL_NODE_PAREN: visit(q, e->u.paren.expr); break;
    case PROMQL_NODE_STEP_INVARIANT: visit(q, e->u.si.expr); break;
    default: break;
    }
    q->depth--;
}

static bool looks_like_rate_of_aggregation(const char *s, size_t len)
{
    static const char *const fns[] = {"rate", "irate", "increase"};
    static const char *const aggs[] = {"sum", "avg", "max", "min", "count"};
    for (size_t i = 0; i < len; i++) {
        for (size_t f = 0; f < IM_ARRAY_LEN(fns); f++) {
            size_t fl = strlen(fns[f]);
            if (i + fl > len || memcmp(s + i, fns[f], fl) != 0) continue;
            if (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_')) continue;
            size_t j = i + fl;
            while (j < len && s[j] == ' ') j++;
            if (j >= len || s[j] != '(') continue;
            j++;
            while (j < len && s[j] == ' ') j++;
            for (size_t a = 0; a < IM_ARRAY_LEN(aggs); a++) {
                size_t al = strlen(aggs[a]);
                if (j + al < len && memcmp(s + j, aggs[a], al) == 0 &&
                    (s[j + al] == ' ' || s[j + al] == '('))
                    return true;
            }
        }
    }
    return false;
}

/* label_values(selector, label): the variable lists nothing when the series
 * never carry the label. */
static void check_values_label(q_t *q, const promql_expr_t *root, const char *label)
{
    const promql_expr_t *vs = unparen(root);
    if (!vs || vs->kind != PROMQL_NODE_VECTOR_SELECTOR) return;
    labelset_t ls;
    selector_labels(q, vs, &ls);
    size_t ll = strlen(label);
    if (!label_suspicious(q, &ls, label, ll)) return;
    const char *cl = closest_label(&ls, label, ll);
    char fx[200];
    if (cl) snprintf(fx, sizeof fx, "use %s", cl);
    sel_t s;
    if (!resolve(q, vs, &s)) return;
    report(q, vs, "unknown-label", LINT_SEV_WARNING, cl ? fx : NULL,
           "label_values(%.*s, %s): the series never carry %s, so the variable has no values "
           "and every panel using it is empty",
           (int)s.len, s.name, label, label);
}

/* Longest range (matrix or subquery) under e. */
static int64_t longest_range(const promql_expr_t *e, int depth)
{
    if (!e || depth > 64) return 0;
    int64_t m = 0;
    switch (e->kind) {
    case PROMQL_NODE_MATRIX_SELECTOR: return e->u.ms.range_ms;
    case PROMQL_NODE_SUBQUERY:
        return IM_MAX(e->u.sq.range_ms, longest_range(e->u.sq.expr, depth + 1));
    case PROMQL_NODE_CALL:
        for (size_t i = 0; i < e->u.call.nargs; i++)
            m = IM_MAX(m, longest_range(e->u.call.args[i], depth + 1));
        return m;
    case PROMQL_NODE_AGGREGATE: return longest_range(e->u.agg.expr, depth + 1);
    case PROMQL_NODE_BINARY:
        return IM_MAX(longest_range(e->u.bin.lhs, depth + 1),
                      longest_range(e->u.bin.rhs, depth + 1));
    case PROMQL_NODE_UNARY: return longest_range(e->u.unary.expr, depth + 1);
    case PROMQL_NODE_PAREN: return longest_range(e->u.paren.expr, depth + 1);
    case PROMQL_NODE_STEP_INVARIANT: return longest_range(e->u.si.expr, depth + 1);
    default: return 0;
    }
}

/* A multiwindow alert: `long-window condition and short-window condition`. */
static bool multiwindow(const promql_expr_t *e, int depth)
{
    e = unparen(e);
    if (!e || depth > 16 || e->kind != PROMQL_NODE_BINARY) return false;
    if (e->u.bin.op == PROMQL_OP_AND) {
        int64_t a = longest_range(e->u.bin.lhs, 0), b = longest_range(e->u.bin.rhs, 0);
        if (a > 0 && b > 0 && a != b) return true;
    }
    if (e->u.bin.op == PROMQL_OP_AND || e->u.bin.op == PROMQL_OP_OR)
        return multiwindow(e->u.bin.lhs, depth + 1) || multiwindow(e->u.bin.rhs, depth + 1);
    return false;
}

void lint_query(lint_run_t *r, const lint_where_t *w, const char *expr, size_t len)
{
    r->nqueries++;
    q_t *q = im_calloc(1, sizeof(*q));
    q->r = r;
    q->w = w;
    q->expr = expr;
    q->len = len;
    promql_expr_t *root = NULL;
    im_err_t err;
    im_err_clear(&err);
    if (promql_parse(expr, len, &root, &err) != IM_OK) {
        if (looks_like_rate_of_aggregation(expr, len))
            report(q, NULL, "rate-of-sum", LINT_SEV_ERROR,
                   "sum the rates instead: sum(rate(x[5m]))",
                   "rate() needs a range vector of the raw counter, so rate(sum(…)) does not parse "
                   "(%s)",
                   err.msg);
        else
            report(q, NULL, "syntax", LINT_SEV_ERROR, NULL, "%s", err.msg);
        if (r->n > 0 && err.offset >= 0 && (size_t)err.offset <= len) {
            r->f[r->n - 1].expr_start = (uint32_t)err.offset;
            r->f[r->n - 1].expr_end =
                (uint32_t)(err.offset < (int64_t)len ? err.offset + 1 : err.offset);
        }
        im_free(q);
        return;
    }
    visit(q, root);
    if (w->values_label && root) check_values_label(q, root, w->values_label);
    /* short-for protects against one thing: a latency quantile over a short
     * window swings with request lengths, so an alert on it pages on noise unless
     * for: (or a long window) smooths it. A range longer than for: is no reason
     * to wait (the range already smooths; waiting only delays), a multiwindow
     * burn-rate `and` is built to fire fast, and deriv/delta spike alerts are
     * meant to fire at once. */
    if (w->is_alert && root && q->latency_quantile && w->for_ms < 5 * IM_MS_PER_MINUTE &&
        q->max_range_ms < 10 * IM_MS_PER_MINUTE && !multiwindow(root, 0)) {
        char fb[32];
        im_duration_format(w->for_ms, fb, sizeof fb);
        report(q, root, "short-for", LINT_SEV_WARNING, "raise for: to 10m or more",
               "a latency-quantile alert with for: %s over a window under 10m: short-window "
               "quantiles swing with request lengths even when healthy",
               w->for_ms ? fb : "0 (none)");
    }
    promql_expr_free(root);
    im_free(q);
}
