/* ast.c — PromQL AST helpers: names of types and operators, the lookup in the
 * function table, ownership of a parsed tree (arena, matchers, interned
 * strings), structural equality and a generic walk. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <strings.h>

#include "promql/ast.h"
#include "promql/parser_int.h"

/* ---- Names ---- */

const char *promql_value_type_str(promql_value_type_t t)
{
    switch (t) {
    case PROMQL_TYPE_SCALAR: return "scalar";
    case PROMQL_TYPE_VECTOR: return "instant vector";
    case PROMQL_TYPE_MATRIX: return "range vector";
    case PROMQL_TYPE_STRING: return "string";
    default: return "none";
    }
}

const char *promql_value_type_api_str(promql_value_type_t t)
{
    switch (t) {
    case PROMQL_TYPE_SCALAR: return "scalar";
    case PROMQL_TYPE_VECTOR: return "vector";
    case PROMQL_TYPE_MATRIX: return "matrix";
    case PROMQL_TYPE_STRING: return "string";
    default: return "none";
    }
}

const char *promql_binop_str(promql_binop_t op)
{
    switch (op) {
    case PROMQL_OP_ADD: return "+";
    case PROMQL_OP_SUB: return "-";
    case PROMQL_OP_MUL: return "*";
    case PROMQL_OP_DIV: return "/";
    case PROMQL_OP_MOD: return "%";
    case PROMQL_OP_POW: return "^";
    case PROMQL_OP_ATAN2: return "atan2";
    case PROMQL_OP_EQL: return "==";
    case PROMQL_OP_NEQ: return "!=";
    case PROMQL_OP_GTR: return ">";
    case PROMQL_OP_LSS: return "<";
    case PROMQL_OP_GTE: return ">=";
    case PROMQL_OP_LTE: return "<=";
    case PROMQL_OP_AND: return "and";
    case PROMQL_OP_OR: return "or";
    case PROMQL_OP_UNLESS: return "unless";
    }
    return "?";
}

bool promql_binop_is_comparison(promql_binop_t op)
{
    return op >= PROMQL_OP_EQL && op <= PROMQL_OP_LTE;
}

bool promql_binop_is_set(promql_binop_t op)
{
    return op == PROMQL_OP_AND || op == PROMQL_OP_OR || op == PROMQL_OP_UNLESS;
}

int promql_binop_precedence(promql_binop_t op)
{
    switch (op) {
    case PROMQL_OP_OR: return 1;
    case PROMQL_OP_AND:
    case PROMQL_OP_UNLESS: return 2;
    case PROMQL_OP_EQL:
    case PROMQL_OP_NEQ:
    case PROMQL_OP_GTR:
    case PROMQL_OP_LSS:
    case PROMQL_OP_GTE:
    case PROMQL_OP_LTE: return 3;
    case PROMQL_OP_ADD:
    case PROMQL_OP_SUB: return 4;
    case PROMQL_OP_MUL:
    case PROMQL_OP_DIV:
    case PROMQL_OP_MOD:
    case PROMQL_OP_ATAN2: return 5;
    case PROMQL_OP_POW: return 6;
    }
    return 0;
}

const char *promql_aggop_str(promql_aggop_t op)
{
    switch (op) {
    case PROMQL_AGG_SUM: return "sum";
    case PROMQL_AGG_AVG: return "avg";
    case PROMQL_AGG_COUNT: return "count";
    case PROMQL_AGG_MIN: return "min";
    case PROMQL_AGG_MAX: return "max";
    case PROMQL_AGG_GROUP: return "group";
    case PROMQL_AGG_STDDEV: return "stddev";
    case PROMQL_AGG_STDVAR: return "stdvar";
    case PROMQL_AGG_TOPK: return "topk";
    case PROMQL_AGG_BOTTOMK: return "bottomk";
    case PROMQL_AGG_COUNT_VALUES: return "count_values";
    case PROMQL_AGG_QUANTILE: return "quantile";
    case PROMQL_AGG_LIMITK: return "limitk";
    case PROMQL_AGG_LIMIT_RATIO: return "limit_ratio";
    }
    return "?";
}

promql_value_type_t promql_aggop_param_type(promql_aggop_t op)
{
    switch (op) {
    case PROMQL_AGG_TOPK:
    case PROMQL_AGG_BOTTOMK:
    case PROMQL_AGG_LIMITK:
    case PROMQL_AGG_LIMIT_RATIO:
    case PROMQL_AGG_QUANTILE: return PROMQL_TYPE_SCALAR;
    case PROMQL_AGG_COUNT_VALUES: return PROMQL_TYPE_STRING;
    default: return PROMQL_TYPE_NONE;
    }
}

/* ---- Function lookup (the table is in functions.c) ---- */

const promql_function_t *promql_function_lookup(const char *name, size_t len)
{
    size_t lo = 0, hi = promql_functions_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *fn = promql_functions[mid].name;
        size_t fl = strlen(fn);
        int c = memcmp(fn, name, IM_MIN(fl, len));
        if (c == 0) c = fl < len ? -1 : fl > len ? 1 : 0;
        if (c == 0) return &promql_functions[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int promql_function_usable(const promql_function_t *f, const promql_lang_t *l)
{
    promql_lang_t r = promql_lang_resolve(l);
    if (f->only_compat && f->only_compat != r.compat) return 1;
    /* 2.x mode keeps the old behaviour: the 2.53 experimental functions always on */
    if (r.compat >= 3 && f->experimental && !r.experimental_functions) return 2;
    return 0;
}

/* ---- Language level ---- */

static promql_lang_t default_lang = {.compat = 3};

void promql_lang_set_default(const promql_lang_t *l)
{
    default_lang = *l;
    if (default_lang.compat != 2) default_lang.compat = 3;
}

promql_lang_t promql_lang_default(void)
{
    return default_lang;
}

promql_lang_t promql_lang_resolve(const promql_lang_t *l)
{
    if (!l || l->compat == 0) return default_lang;
    promql_lang_t r = *l;
    if (r.compat != 2) r.compat = 3;
    return r;
}

bool promql_lang_enable_features(promql_lang_t *l, const char *list, char *why, size_t whycap)
{
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0) {
        } else if (n == 29 && memcmp(p, "promql-experimental-functions", n) == 0) {
            l->experimental_functions = true;
        } else if (n == 27 && memcmp(p, "promql-binop-fill-modifiers", n) == 0) {
            l->binop_fill_modifiers = true;
        } else if (n == 31 && memcmp(p, "promql-extended-range-selectors", n) == 0) {
            l->extended_range_selectors = true;
        } else if (n == 27 && memcmp(p, "promql-delayed-name-removal", n) == 0) {
            l->delayed_name_removal = true;
        } else if (n == 20 && memcmp(p, "promql-duration-expr", n) == 0) {
            /* on by default since Prometheus 3.14 (and here) */
        } else {
            snprintf(why, whycap,
                     "--enable-feature: unknown or unsupported feature \"%.*s\" (supported: "
                     "promql-experimental-functions, promql-binop-fill-modifiers, "
                     "promql-extended-range-selectors, "
                     "promql-delayed-name-removal, promql-duration-expr)",
                     (int)n, p);
            return false;
        }
        p += n + (e ? 1 : 0);
    }
    return true;
}

/* ---- Ownership ---- */

promql_expr_owner_t *promql__owner_new(void)
{
    promql_expr_owner_t *o = im_calloc(1, sizeof *o);
    im_arena_init(&o->arena, 4096, 0);
    return o;
}

void promql__owner_free(promql_expr_owner_t *o)
{
    if (!o) return;
    for (size_t i = 0; i < o->nmatchers; i++) im_matcher_free(o->matchers[i]);
    for (size_t i = 0; i < o->nistrs; i++) im_istr_unref(o->istrs[i]);
    im_free(o->matchers);
    im_free(o->istrs);
    im_arena_free(&o->arena);
    im_free(o);
}

void promql__owner_add_matcher(promql_expr_owner_t *o, im_matcher_t *m)
{
    if (o->nmatchers == o->cap_matchers) {
        o->cap_matchers = o->cap_matchers ? o->cap_matchers * 2 : 8;
        o->matchers = im_realloc(o->matchers, o->cap_matchers * sizeof *o->matchers);
    }
    o->matchers[o->nmatchers++] = m;
}

void promql__owner_add_istr(promql_expr_owner_t *o, const im_istr_t *s)
{
    if (o->nistrs == o->cap_istrs) {
        o->cap_istrs = o->cap_istrs ? o->cap_istrs * 2 : 8;
        o->istrs = im_realloc(o->istrs, o->cap_istrs * sizeof *o->istrs);
    }
    o->istrs[o->nistrs++] = s;
}

promql_value_type_t promql_expr_type(const promql_expr_t *e)
{
    return e ? e->type : PROMQL_TYPE_NONE;
}

void promql_expr_free(promql_expr_t *root)
{
    if (!root) return;
    promql__owner_free(root->owner); /* root lives in the arena */
}

im_arena_t *promql_expr_arena(promql_expr_t *root)
{
    return &root->owner->arena;
}

void promql_expr_own_matcher(promql_expr_t *root, im_matcher_t *m)
{
    promql__owner_add_matcher(root->owner, m);
}

void promql_expr_own_istr(promql_expr_t *root, const im_istr_t *s)
{
    promql__owner_add_istr(root->owner, s);
}

/* ---- Equality ---- */

static bool num_eq(double a, double b)
{
    if (isnan(a) && isnan(b)) return true;
    return memcmp(&a, &b, sizeof a) == 0;
}

/* @ timestamps print as %.3f seconds (as Prometheus): exact below 2^53 ms,
 * within a few ulps beyond. */
static bool at_eq(int64_t a, int64_t b)
{
    if (a == b) return true;
    double x = (double)a, y = (double)b;
    if (fabs(x) < 9007199254740992.0) return false;
    return fabs(x - y) <= fabs(x) * 0x1p-50;
}

static bool names_eq(const im_istr_t **a, size_t na, const im_istr_t **b, size_t nb)
{
    if (na != nb) return false;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i]) return false;
    return true;
}

static bool matcher_eq(const im_matcher_t *a, const im_matcher_t *b)
{
    if (im_matcher_type(a) != im_matcher_type(b)) return false;
    if (im_matcher_name(a) != im_matcher_name(b)) return false;
    size_t la, lb;
    const char *va = im_matcher_value(a, &la);
    const char *vb = im_matcher_value(b, &lb);
    return la == lb && (la == 0 || memcmp(va, vb, la) == 0);
}

/* A vector matching without labels, on or grouping equals none at all. */
static bool fill_eq(bool ha, double a, bool hb, double b)
{
    return ha == hb && (!ha || a == b || (isnan(a) && isnan(b)));
}

static bool matching_trivial(const promql_vector_matching_t *m)
{
    return !m || (!m->has_fill_left && !m->has_fill_right && !m->on && m->nmatching_labels == 0 &&
                  m->ninclude_labels == 0 &&
                  (m->card == PROMQL_CARD_ONE_TO_ONE || m->card == PROMQL_CARD_MANY_TO_MANY));
}

static bool matching_eq(const promql_vector_matching_t *a, const promql_vector_matching_t *b)
{
    if (matching_trivial(a) && matching_trivial(b)) return true;
    if (!a || !b) return false;
    return a->card == b->card && a->on == b->on &&
           names_eq(a->matching_labels, a->nmatching_labels, b->matching_labels,
                    b->nmatching_labels) &&
           names_eq(a->include_labels, a->ninclude_labels, b->include_labels, b->ninclude_labels) &&
           fill_eq(a->has_fill_left, a->fill_left, b->has_fill_left, b->fill_left) &&
           fill_eq(a->has_fill_right, a->fill_right, b->has_fill_right, b->fill_right);
}

/* Parentheses do not count (the printer adds some around an offset). */
static bool dur_equal(const promql_dur_t *a, const promql_dur_t *b)
{
    while (a && a->op == PROMQL_DUR_PAREN) a = a->a;
    while (b && b->op == PROMQL_DUR_PAREN) b = b->a;
    if (!a || !b) return a == b;
    if (a->op != b->op) return false;
    if (a->op == PROMQL_DUR_NUM && a->v != b->v) return false;
    return dur_equal(a->a, b->a) && dur_equal(a->b, b->b);
}

bool promql_expr_equal(const promql_expr_t *a, const promql_expr_t *b)
{
    if (a == b) return true;
    if (!a || !b) return false;
    if (a->kind != b->kind || a->type != b->type) return false;
    switch (a->kind) {
    case PROMQL_NODE_NUMBER: return num_eq(a->u.number.value, b->u.number.value);
    case PROMQL_NODE_STRING:
        return a->u.string.len == b->u.string.len &&
               memcmp(a->u.string.s, b->u.string.s, a->u.string.len) == 0;
    case PROMQL_NODE_VECTOR_SELECTOR: {
        const promql_vector_selector_t *x = &a->u.vs, *y = &b->u.vs;
        if (x->name != y->name || x->nmatchers != y->nmatchers || x->offset_ms != y->offset_ms ||
            !dur_equal(x->offset_expr, y->offset_expr) || x->at != y->at ||
            (x->at == PROMQL_AT_TIMESTAMP && !at_eq(x->at_ms, y->at_ms)) ||
            x->smoothed != y->smoothed)
            return false;
        /* The printer sorts matchers, so compare them as a multiset. */
        for (size_t i = 0; i < x->nmatchers; i++) {
            size_t want = 0, have = 0;
            for (size_t j = 0; j < x->nmatchers; j++)
                if (matcher_eq(x->matchers[i], x->matchers[j])) want++;
            for (size_t j = 0; j < y->nmatchers; j++)
                if (matcher_eq(x->matchers[i], y->matchers[j])) have++;
            if (want != have) return false;
        }
        return true;
    }
    case PROMQL_NODE_MATRIX_SELECTOR:
        return a->u.ms.range_ms == b->u.ms.range_ms && a->u.ms.ext == b->u.ms.ext &&
               dur_equal(a->u.ms.range_expr, b->u.ms.range_expr) &&
               promql_expr_equal(a->u.ms.vs, b->u.ms.vs);
    case PROMQL_NODE_SUBQUERY: {
        const promql_subquery_t *x = &a->u.sq, *y = &b->u.sq;
        return x->range_ms == y->range_ms && x->step_ms == y->step_ms &&
               dur_equal(x->range_expr, y->range_expr) && dur_equal(x->step_expr, y->step_expr) &&
               dur_equal(x->offset_expr, y->offset_expr) && x->offset_ms == y->offset_ms &&
               x->at == y->at && (x->at != PROMQL_AT_TIMESTAMP || at_eq(x->at_ms, y->at_ms)) &&
               promql_expr_equal(x->expr, y->expr);
    }
    case PROMQL_NODE_CALL:
        if (a->u.call.func != b->u.call.func || a->u.call.nargs != b->u.call.nargs) return false;
        for (size_t i = 0; i < a->u.call.nargs; i++)
            if (!promql_expr_equal(a->u.call.args[i], b->u.call.args[i])) return false;
        return true;
    case PROMQL_NODE_AGGREGATE: {
        const promql_aggregate_t *x = &a->u.agg, *y = &b->u.agg;
        if (x->op != y->op || x->without != y->without) return false;
        if (!names_eq(x->grouping, x->ngrouping, y->grouping, y->ngrouping)) return false;
        return promql_expr_equal(x->expr, y->expr) && promql_expr_equal(x->param, y->param);
    }
    case PROMQL_NODE_BINARY: {
        const promql_binary_t *x = &a->u.bin, *y = &b->u.bin;
        return x->op == y->op && x->return_bool == y->return_bool &&
               matching_eq(x->matching, y->matching) && promql_expr_equal(x->lhs, y->lhs) &&
               promql_expr_equal(x->rhs, y->rhs);
    }
    case PROMQL_NODE_UNARY:
        return a->u.unary.op == b->u.unary.op &&
               promql_expr_equal(a->u.unary.expr, b->u.unary.expr);
    case PROMQL_NODE_PAREN: return promql_expr_equal(a->u.paren.expr, b->u.paren.expr);
    case PROMQL_NODE_STEP_INVARIANT: return promql_expr_equal(a->u.si.expr, b->u.si.expr);
    }
    return false;
}

/* ---- Walk ---- */

void promql_expr_walk(const promql_expr_t *e, promql_walk_fn fn, void *ctx)
{
    if (!e || !fn(e, ctx)) return;
    switch (e->kind) {
    case PROMQL_NODE_MATRIX_SELECTOR: promql_expr_walk(e->u.ms.vs, fn, ctx); break;
    case PROMQL_NODE_SUBQUERY: promql_expr_walk(e->u.sq.expr, fn, ctx); break;
    case PROMQL_NODE_CALL:
        for (size_t i = 0; i < e->u.call.nargs; i++) promql_expr_walk(e->u.call.args[i], fn, ctx);
        break;
    case PROMQL_NODE_AGGREGATE:
        promql_expr_walk(e->u.agg.param, fn, ctx);
        promql_expr_walk(e->u.agg.expr, fn, ctx);
        break;
    case PROMQL_NODE_BINARY:
        promql_expr_walk(e->u.bin.lhs, fn, ctx);
        promql_expr_walk(e->u.bin.rhs, fn, ctx);
        break;
    case PROMQL_NODE_UNARY: promql_expr_walk(e->u.unary.expr, fn, ctx); break;
    case PROMQL_NODE_PAREN: promql_expr_walk(e->u.paren.expr, fn, ctx); break;
    case PROMQL_NODE_STEP_INVARIANT: promql_expr_walk(e->u.si.expr, fn, ctx); break;
    default: break;
    }
}
