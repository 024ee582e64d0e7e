/* printer.c — canonical PromQL text of an AST, as Prometheus' String() prints it.
 *
 * `sum by (job) (rate(x{a="b"}[5m]))`, binary operators with single spaces,
 * matchers sorted by their printed form and quoted with Go's %q, the implicit
 * __name__ matcher folded into the name, durations canonical (90m -> 1h30m),
 * `@ <seconds with 3 decimals>` before `offset`, numbers as Go's %v
 * (1e-07, 31, 1e+06, +Inf, NaN). One deliberate difference: a group_left/group_right
 * with `ignoring ()` keeps its matching clause (Prometheus drops it and so
 * changes the meaning), and +Inf on the left of ^ prints as Inf (Prometheus'
 * "+Inf ^ 2" reads back as +(Inf ^ 2)); parse(print(ast)) is always ast again. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "promql/ast.h"
#include "promql/parser_int.h"
#include "util/fmtfloat.h"

/* model.Duration.String(): years and weeks only when they divide exactly
 * ("90d", not "12w6d"), then d h m s ms. */
static im_rc put_duration(im_buf_t *out, int64_t ms)
{
    static const struct {
        const char *unit;
        int64_t mult;
        bool exact;
    } units[] = {{"y", 365LL * 86400000, true},
                 {"w", 7LL * 86400000, true},
                 {"d", 86400000, false},
                 {"h", 3600000, false},
                 {"m", 60000, false},
                 {"s", 1000, false},
                 {"ms", 1, false}};
    if (ms == 0) return im_buf_puts(out, "0s");
    im_rc rc = IM_OK;
    for (size_t i = 0; i < IM_ARRAY_LEN(units) && rc == IM_OK; i++) {
        if (units[i].exact && ms % units[i].mult != 0) continue;
        int64_t v = ms / units[i].mult;
        if (v > 0) {
            rc = im_buf_printf(out, "%lld%s", (long long)v, units[i].unit);
            ms -= v * units[i].mult;
        }
    }
    return rc;
}

/* A label name as written: bare when a legacy name, else quoted (3.x UTF-8). */
static im_rc put_label_name(im_buf_t *out, const char *s, size_t len)
{
    if (im_label_name_valid(s, len)) return im_buf_append(out, s, len);
    return promql__go_quote(out, s, len);
}

static im_rc put_names(im_buf_t *out, const im_istr_t *const *names, size_t n)
{
    im_rc rc = IM_OK;
    for (size_t i = 0; i < n && rc == IM_OK; i++) {
        if (i) rc = im_buf_append(out, ", ", 2);
        if (rc == IM_OK) rc = put_label_name(out, names[i]->s, names[i]->len);
    }
    return rc;
}

static im_rc put_at_offset(im_buf_t *out, promql_at_kind_t at, int64_t at_ms, int64_t off)
{
    im_rc rc = IM_OK;
    if (at == PROMQL_AT_TIMESTAMP)
        rc = im_buf_printf(out, " @ %.3f", (double)at_ms / 1000.0);
    else if (at == PROMQL_AT_START)
        rc = im_buf_puts(out, " @ start()");
    else if (at == PROMQL_AT_END)
        rc = im_buf_puts(out, " @ end()");
    if (rc) return rc;
    if (off > 0) {
        rc = im_buf_puts(out, " offset ");
        if (rc == IM_OK) rc = put_duration(out, off);
    } else if (off < 0) {
        rc = im_buf_puts(out, " offset -");
        if (rc == IM_OK) rc = put_duration(out, off == INT64_MIN ? INT64_MAX : -off);
    }
    return rc;
}

static im_rc put_number(im_buf_t *out, double v);

/* A duration expression as written (normalised spacing): `step() * 2`. */
static im_rc put_dur(im_buf_t *out, const promql_dur_t *d)
{
    static const char *const ops[] = {
        [PROMQL_DUR_ADD] = " + ", [PROMQL_DUR_SUB] = " - ", [PROMQL_DUR_MUL] = " * ",
        [PROMQL_DUR_DIV] = " / ", [PROMQL_DUR_MOD] = " % ", [PROMQL_DUR_POW] = " ^ "};
    im_rc rc = IM_OK;
    switch (d->op) {
    case PROMQL_DUR_NUM:
        if (d->is_duration && d->v > 0) return put_duration(out, (int64_t)round(d->v * 1000.0));
        return put_number(out, d->v);
    case PROMQL_DUR_STEP: return im_buf_puts(out, "step()");
    case PROMQL_DUR_RANGE: return im_buf_puts(out, "range()");
    case PROMQL_DUR_NEG: rc = im_buf_putc(out, '-'); return rc == IM_OK ? put_dur(out, d->a) : rc;
    case PROMQL_DUR_PAREN:
        rc = im_buf_putc(out, '(');
        if (rc == IM_OK) rc = put_dur(out, d->a);
        return rc == IM_OK ? im_buf_putc(out, ')') : rc;
    case PROMQL_DUR_MIN:
    case PROMQL_DUR_MAX:
        rc = im_buf_puts(out, d->op == PROMQL_DUR_MIN ? "min_of(" : "max_of(");
        if (rc == IM_OK) rc = put_dur(out, d->a);
        if (rc == IM_OK) rc = im_buf_puts(out, ", ");
        if (rc == IM_OK) rc = put_dur(out, d->b);
        return rc == IM_OK ? im_buf_putc(out, ')') : rc;
    default:
        rc = put_dur(out, d->a);
        if (rc == IM_OK) rc = im_buf_puts(out, ops[d->op]);
        return rc == IM_OK ? put_dur(out, d->b) : rc;
    }
}

/* fill(v) when both sides get the same value, else fill_left(v) / fill_right(v). */
static im_rc put_fill(im_buf_t *out, const promql_vector_matching_t *vm)
{
    im_rc rc = IM_OK;
    bool same =
        vm->has_fill_left && vm->has_fill_right &&
        (vm->fill_left == vm->fill_right || (isnan(vm->fill_left) && isnan(vm->fill_right)));
    if (same) {
        rc = im_buf_puts(out, " fill(");
        if (rc == IM_OK) rc = put_number(out, vm->fill_left);
        return rc == IM_OK ? im_buf_putc(out, ')') : rc;
    }
    if (vm->has_fill_left) {
        rc = im_buf_puts(out, " fill_left(");
        if (rc == IM_OK) rc = put_number(out, vm->fill_left);
        if (rc == IM_OK) rc = im_buf_putc(out, ')');
    }
    if (rc == IM_OK && vm->has_fill_right) {
        rc = im_buf_puts(out, " fill_right(");
        if (rc == IM_OK) rc = put_number(out, vm->fill_right);
        if (rc == IM_OK) rc = im_buf_putc(out, ')');
    }
    return rc;
}

static im_rc put_range(im_buf_t *out, int64_t ms, const promql_dur_t *d)
{
    return d ? put_dur(out, d) : put_duration(out, ms);
}

static im_rc put_offset_expr(im_buf_t *out, const promql_dur_t *d)
{
    if (!d) return IM_OK;
    im_rc rc = im_buf_puts(out, " offset ");
    bool paren = d->op != PROMQL_DUR_STEP && d->op != PROMQL_DUR_RANGE && d->op != PROMQL_DUR_MIN &&
                 d->op != PROMQL_DUR_MAX && d->op != PROMQL_DUR_PAREN;
    if (rc == IM_OK && paren) rc = im_buf_putc(out, '(');
    if (rc == IM_OK) rc = put_dur(out, d);
    if (rc == IM_OK && paren) rc = im_buf_putc(out, ')');
    return rc;
}

typedef struct mstr {
    char *s;
    size_t len;
} mstr_t;

static int mstr_cmp(const void *a, const void *b)
{
    const mstr_t *x = a, *y = b;
    int c = memcmp(x->s, y->s, IM_MIN(x->len, y->len));
    if (c) return c;
    return x->len < y->len ? -1 : x->len > y->len ? 1 : 0;
}

static const char *match_op_str(im_match_type_t t)
{
    switch (t) {
    case IM_MATCH_EQ: return "=";
    case IM_MATCH_NEQ: return "!=";
    case IM_MATCH_RE: return "=~";
    default: return "!~";
    }
}

static im_rc put_selector(im_buf_t *out, const promql_vector_selector_t *vs)
{
    im_rc rc = IM_OK;
    /* a name that is not a legacy metric name goes inside the braces, quoted */
    bool quoted = vs->name && !im_metric_name_valid(vs->name->s, vs->name->len);
    if (vs->name && !quoted) rc = im_buf_append(out, vs->name->s, vs->name->len);
    if (rc) return rc;
    mstr_t *strs = im_calloc(vs->nmatchers ? vs->nmatchers : 1, sizeof *strs);
    size_t n = 0;
    for (size_t i = 0; i < vs->nmatchers && rc == IM_OK; i++) {
        const im_matcher_t *m = vs->matchers[i];
        const im_istr_t *mn = im_matcher_name(m);
        size_t vl;
        const char *v = im_matcher_value(m, &vl);
        if (vs->name && im_matcher_type(m) == IM_MATCH_EQ && mn->len == 8 &&
            memcmp(mn->s, IM_METRIC_NAME, 8) == 0 && vl == vs->name->len &&
            memcmp(v, vs->name->s, vl) == 0)
            continue;
        im_buf_t b;
        im_buf_init(&b, 0);
        rc = put_label_name(&b, mn->s, mn->len);
        if (rc == IM_OK) rc = im_buf_puts(&b, match_op_str(im_matcher_type(m)));
        if (rc == IM_OK) rc = promql__go_quote(&b, v, vl);
        strs[n].s = im_buf_steal(&b, &strs[n].len);
        n++;
    }
    if (rc == IM_OK && n > 1) qsort(strs, n, sizeof *strs, mstr_cmp);
    if (rc == IM_OK && quoted) {
        rc = im_buf_putc(out, '{');
        if (rc == IM_OK) rc = promql__go_quote(out, vs->name->s, vs->name->len);
        for (size_t i = 0; i < n && rc == IM_OK; i++) {
            rc = im_buf_putc(out, ',');
            if (rc == IM_OK) rc = im_buf_append(out, strs[i].s, strs[i].len);
        }
        if (rc == IM_OK) rc = im_buf_putc(out, '}');
    } else if (rc == IM_OK && n > 0) {
        rc = im_buf_putc(out, '{');
        for (size_t i = 0; i < n && rc == IM_OK; i++) {
            if (i) rc = im_buf_putc(out, ',');
            if (rc == IM_OK) rc = im_buf_append(out, strs[i].s, strs[i].len);
        }
        if (rc == IM_OK) rc = im_buf_putc(out, '}');
    }
    for (size_t i = 0; i < n; i++) im_free(strs[i].s);
    im_free(strs);
    return rc;
}

/* fmt.Sprint(float64) as Prometheus 2.x prints number literals: Go's %v,
 * i.e. strconv 'g' with the shortest digits (exponent form when the decimal
 * exponent is < -4 or >= 6: 1e-05, 1e+06, 100000), +Inf, -Inf, NaN. */
static im_rc put_number(im_buf_t *out, double v)
{
    char buf[IM_FLOAT_BUF];
    size_t n = im_fmt_float_go(v, 'g', buf, sizeof buf);
    return im_buf_append(out, buf, n);
}

im_rc promql_format(const promql_expr_t *e, im_buf_t *out)
{
    im_rc rc = IM_OK;
    if (!e) return IM_OK;
    switch (e->kind) {
    case PROMQL_NODE_NUMBER: return put_number(out, e->u.number.value);
    case PROMQL_NODE_STRING: return promql__go_quote(out, e->u.string.s, e->u.string.len);
    case PROMQL_NODE_VECTOR_SELECTOR:
        rc = put_selector(out, &e->u.vs);
        if (rc == IM_OK) rc = put_at_offset(out, e->u.vs.at, e->u.vs.at_ms, e->u.vs.offset_ms);
        if (rc == IM_OK) rc = put_offset_expr(out, e->u.vs.offset_expr);
        if (rc == IM_OK && e->u.vs.smoothed) rc = im_buf_puts(out, " smoothed");
        return rc;
    case PROMQL_NODE_MATRIX_SELECTOR: {
        const promql_vector_selector_t *vs = &e->u.ms.vs->u.vs;
        rc = put_selector(out, vs);
        if (rc == IM_OK) rc = im_buf_putc(out, '[');
        if (rc == IM_OK) rc = put_range(out, e->u.ms.range_ms, e->u.ms.range_expr);
        if (rc == IM_OK) rc = im_buf_putc(out, ']');
        if (rc == IM_OK && e->u.ms.ext != PROMQL_RANGE_PLAIN)
            rc = im_buf_puts(out, e->u.ms.ext == PROMQL_RANGE_ANCHORED ? " anchored" : " smoothed");
        if (rc == IM_OK) rc = put_at_offset(out, vs->at, vs->at_ms, vs->offset_ms);
        if (rc == IM_OK) rc = put_offset_expr(out, vs->offset_expr);
        return rc;
    }
    case PROMQL_NODE_SUBQUERY:
        rc = promql_format(e->u.sq.expr, out);
        if (rc == IM_OK) rc = im_buf_putc(out, '[');
        if (rc == IM_OK) rc = put_range(out, e->u.sq.range_ms, e->u.sq.range_expr);
        if (rc == IM_OK) rc = im_buf_putc(out, ':');
        if (rc == IM_OK && (e->u.sq.step_ms != 0 || e->u.sq.step_expr))
            rc = put_range(out, e->u.sq.step_ms, e->u.sq.step_expr);
        if (rc == IM_OK) rc = im_buf_putc(out, ']');
        if (rc == IM_OK) rc = put_at_offset(out, e->u.sq.at, e->u.sq.at_ms, e->u.sq.offset_ms);
        if (rc == IM_OK) rc = put_offset_expr(out, e->u.sq.offset_expr);
        return rc;
    case PROMQL_NODE_CALL:
        rc = im_buf_puts(out, e->u.call.func->name);
        if (rc == IM_OK) rc = im_buf_putc(out, '(');
        for (size_t i = 0; i < e->u.call.nargs && rc == IM_OK; i++) {
            if (i) rc = im_buf_append(out, ", ", 2);
            if (rc == IM_OK) rc = promql_format(e->u.call.args[i], out);
        }
        if (rc == IM_OK) rc = im_buf_putc(out, ')');
        return rc;
    case PROMQL_NODE_AGGREGATE: {
        const promql_aggregate_t *a = &e->u.agg;
        rc = im_buf_puts(out, promql_aggop_str(a->op));
        if (rc == IM_OK && (a->without || a->ngrouping > 0)) {
            rc = im_buf_puts(out, a->without ? " without (" : " by (");
            if (rc == IM_OK) rc = put_names(out, a->grouping, a->ngrouping);
            if (rc == IM_OK) rc = im_buf_puts(out, ") ");
        }
        if (rc == IM_OK) rc = im_buf_putc(out, '(');
        if (rc == IM_OK && a->param) {
            rc = promql_format(a->param, out);
            if (rc == IM_OK) rc = im_buf_append(out, ", ", 2);
        }
        if (rc == IM_OK) rc = promql_format(a->expr, out);
        if (rc == IM_OK) rc = im_buf_putc(out, ')');
        return rc;
    }
    case PROMQL_NODE_BINARY: {
        const promql_binary_t *b = &e->u.bin;
        if (b->op == PROMQL_OP_POW && b->lhs->kind == PROMQL_NODE_NUMBER &&
            isinf(b->lhs->u.number.value) && b->lhs->u.number.value > 0)
            rc = im_buf_puts(out, "Inf"); /* "+Inf ^ x" would read as +(Inf ^ x) */
        else
            rc = promql_format(b->lhs, out);
        if (rc == IM_OK) rc = im_buf_putc(out, ' ');
        if (rc == IM_OK) rc = im_buf_puts(out, promql_binop_str(b->op));
        if (rc == IM_OK && b->return_bool) rc = im_buf_puts(out, " bool");
        const promql_vector_matching_t *vm = b->matching;
        bool group =
            vm && (vm->card == PROMQL_CARD_MANY_TO_ONE || vm->card == PROMQL_CARD_ONE_TO_MANY);
        if (rc == IM_OK && vm && (vm->nmatching_labels > 0 || vm->on || group)) {
            rc = im_buf_puts(out, vm->on ? " on (" : " ignoring (");
            if (rc == IM_OK) rc = put_names(out, vm->matching_labels, vm->nmatching_labels);
            if (rc == IM_OK) rc = im_buf_putc(out, ')');
            if (rc == IM_OK && group) {
                rc = im_buf_puts(out, vm->card == PROMQL_CARD_MANY_TO_ONE ? " group_left ("
                                                                          : " group_right (");
                if (rc == IM_OK) rc = put_names(out, vm->include_labels, vm->ninclude_labels);
                if (rc == IM_OK) rc = im_buf_putc(out, ')');
            }
        }
        if (rc == IM_OK && vm) rc = put_fill(out, vm);
        if (rc == IM_OK) rc = im_buf_putc(out, ' ');
        if (rc == IM_OK) rc = promql_format(b->rhs, out);
        return rc;
    }
    case PROMQL_NODE_UNARY:
        rc = im_buf_putc(out, e->u.unary.op == PROMQL_UNARY_MINUS ? '-' : '+');
        if (rc == IM_OK) rc = promql_format(e->u.unary.expr, out);
        return rc;
    case PROMQL_NODE_PAREN:
        rc = im_buf_putc(out, '(');
        if (rc == IM_OK) rc = promql_format(e->u.paren.expr, out);
        if (rc == IM_OK) rc = im_buf_putc(out, ')');
        return rc;
    case PROMQL_NODE_STEP_INVARIANT: return promql_format(e->u.si.expr, out);
    }
    return IM_OK;
}
