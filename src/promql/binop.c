/* binop.c — binary operators: arithmetic, comparisons (filtering or `bool`),
 * atan2, set operators, and vector matching (on/ignoring, group_left/right).
 *
 * Matching signatures are hashed once per series; each step then pairs the
 * present series through small per-signature stamp arrays, so a range query costs
 * O(series × steps) without per-step hashing. Errors and their texts are those
 * of Prometheus 2.53 (duplicate series on the "one" side, multiple matches in
 * one-to-one matching, grouping labels that do not keep results unique). Result
 * labels: arithmetic and atan2 drop __name__, comparisons keep it unless `bool`;
 * one-to-one matching keeps only the on() labels or drops the ignoring() ones;
 * group_x(labels) copies those labels from the "one" side. */
#include "util/base.h"

#include <math.h>

#include "promql/promql_int.h"

static bool drops_name(promql_binop_t op)
{
    switch (op) {
    case PROMQL_OP_ADD:
    case PROMQL_OP_SUB:
    case PROMQL_OP_MUL:
    case PROMQL_OP_DIV:
    case PROMQL_OP_POW:
    case PROMQL_OP_MOD:
    case PROMQL_OP_ATAN2: return true;
    default: return false;
    }
}

/* vectorElemBinop: the value and whether a comparison keeps the element. */
static inline double elem_op(promql_binop_t op, double l, double r, bool *keep)
{
    *keep = true;
    switch (op) {
    case PROMQL_OP_ADD: return l + r;
    case PROMQL_OP_SUB: return l - r;
    case PROMQL_OP_MUL: return l * r;
    case PROMQL_OP_DIV: return l / r;
    case PROMQL_OP_POW: return pow(l, r);
    case PROMQL_OP_MOD: return fmod(l, r);
    case PROMQL_OP_ATAN2: return atan2(l, r);
    case PROMQL_OP_EQL: *keep = l == r; return l;
    case PROMQL_OP_NEQ: *keep = l != r; return l;
    case PROMQL_OP_GTR: *keep = l > r; return l;
    case PROMQL_OP_LSS: *keep = l < r; return l;
    case PROMQL_OP_GTE: *keep = l >= r; return l;
    case PROMQL_OP_LTE: *keep = l <= r; return l;
    default: *keep = false; return 0;
    }
}

static uint64_t sig_of(ev_t *ev, const promql_vector_matching_t *m, const im_labels_t *ls)
{
    IM_UNUSED(ev);
    if (m->on)
        return im_labels_hash_subset(ls, m->matching_labels, m->nmatching_labels, true, false);
    return im_labels_hash_subset(ls, m->matching_labels, m->nmatching_labels, false, true);
}

/* Prometheus' labels.String(): {a="b", c="d"}. */
static void labels_str(const im_labels_t *ls, im_buf_t *b)
{
    (void)im_buf_putc(b, '{');
    for (uint32_t i = 0; i < ls->n; i++) {
        if (i) (void)im_buf_puts(b, ", ");
        (void)im_buf_append(b, ls->l[i].name->s, ls->l[i].name->len);
        (void)im_buf_putc(b, '=');
        (void)im_quote_string(b, ls->l[i].value->s, ls->l[i].value->len);
    }
    (void)im_buf_putc(b, '}');
}

static const im_labels_t *match_labels(ev_t *ev, const promql_vector_matching_t *m,
                                       const im_labels_t *ls)
{
    im_labels_builder_t b;
    im_lb_init(&b);
    if (m->on) {
        for (size_t i = 0; i < m->nmatching_labels; i++) {
            const im_istr_t *v = im_labels_get_istr(ls, m->matching_labels[i]);
            if (v) im_lb_set_istr(&b, m->matching_labels[i], v);
        }
    } else {
        im_lb_load(&b, ls);
        promql__lb_del_name(ev, &b);
        for (size_t i = 0; i < m->nmatching_labels; i++) im_lb_del(&b, m->matching_labels[i]->s);
    }
    const im_labels_t *r = im_lb_build(&b);
    im_lb_free(&b);
    IM_UNUSED(ev);
    return r;
}

static const im_labels_t *result_metric(ev_t *ev, const promql_binary_t *bin,
                                        const im_labels_t *many, const im_labels_t *one)
{
    const promql_vector_matching_t *m = bin->matching;
    im_labels_builder_t b;
    im_lb_init(&b);
    im_lb_load(&b, many);
    /* with delayed name removal the name is only marked (emit) */
    if ((drops_name(bin->op) || bin->return_bool) && !ev->delayed_name) promql__lb_del_name(ev, &b);
    if (m->card == PROMQL_CARD_ONE_TO_ONE) {
        if (m->on) {
            im_labels_builder_t k;
            im_lb_init(&k);
            for (size_t i = 0; i < m->nmatching_labels; i++) {
                const im_istr_t *v = im_lb_get(&b, m->matching_labels[i]->s);
                if (v) im_lb_set_istr(&k, m->matching_labels[i], v);
            }
            im_lb_free(&b);
            b = k;
        } else {
            for (size_t i = 0; i < m->nmatching_labels; i++)
                im_lb_del(&b, m->matching_labels[i]->s);
        }
    }
    for (size_t i = 0; one && i < m->ninclude_labels; i++) {
        const im_istr_t *v = im_labels_get_istr(one, m->include_labels[i]);
        if (v)
            im_lb_set_istr(&b, m->include_labels[i], v);
        else
            im_lb_del(&b, m->include_labels[i]->s);
    }
    const im_labels_t *r = im_lb_build(&b);
    im_lb_free(&b);
    IM_UNUSED(ev);
    return r;
}

/* ---- vector op vector with matching ---- */

/* Output series of a matching: one slot per distinct result label set. */
typedef struct match_state {
    u64map_t pairmap, lblmap; /* (many, one) pair -> slot+1; labels hash -> slot+1 */
    size_t *slot_step;        /* step+1 a slot was last written at */
    uint32_t *slot_sig;       /* the signature that wrote it */
    size_t slot_cap;
} match_state_t;

/* One result element: many index i and one index j (UINT32_MAX for a side
 * filled by fill()), its signature, and the labels of the present sides. */
typedef struct emit {
    size_t i, j;
    uint32_t id;
    const im_labels_t *many, *one;
    bool filled_many; /* the many side is missing: labels are the match group's */
    bool marked;      /* the present many (else one) side's name is marked dropped */
} emit_t;

static im_rc emit(ev_t *ev, const promql_binary_t *bin, match_state_t *st, val_t *out,
                  const emit_t *em, size_t k, double value)
{
    const promql_vector_matching_t *m = bin->matching;
    uint32_t *ps = promql__map_slot(&st->pairmap, ((uint64_t)em->i << 32) | em->j);
    if (!*ps) {
        const im_labels_t *ls = em->filled_many ? match_labels(ev, m, em->one)
                                                : result_metric(ev, bin, em->many, em->one);
        uint32_t *lsl = promql__map_slot(&st->lblmap, ls->hash);
        if (!*lsl) {
            size_t idx = promql__val_add(ev, out, ls);
            *lsl = (uint32_t)(idx + 1);
            out->s[idx].drop_name =
                ev->delayed_name && (drops_name(bin->op) || bin->return_bool || em->marked);
            if (out->n > st->slot_cap) {
                size_t nc = st->slot_cap ? st->slot_cap * 2 : 16;
                st->slot_step = im_realloc(st->slot_step, nc * sizeof *st->slot_step);
                st->slot_sig = im_realloc(st->slot_sig, nc * sizeof *st->slot_sig);
                memset(st->slot_step + st->slot_cap, 0,
                       (nc - st->slot_cap) * sizeof *st->slot_step);
                st->slot_cap = nc;
            }
        } else {
            im_labels_unref(ls);
        }
        *ps = *lsl;
    }
    size_t slot = *ps - 1;
    if (st->slot_step[slot] == k + 1) {
        if (m->card != PROMQL_CARD_ONE_TO_ONE && st->slot_sig[slot] == em->id)
            return im_err_set(ev->err, IM_EEXEC,
                              "multiple matches for labels: grouping labels must ensure "
                              "unique matches");
        return im_err_set(ev->err, IM_EEXEC,
                          "vector cannot contain metrics with the same labelset");
    }
    st->slot_step[slot] = k + 1;
    st->slot_sig[slot] = em->id;
    out->s[slot].v[k] = value;
    out->s[slot].has[k] = 1;
    return IM_OK;
}

/* The value of one element (operands in source order) and whether it is kept. */
static bool elem_value(const promql_binary_t *bin, bool swap, double vmany, double vone,
                       double *value)
{
    double vl = swap ? vone : vmany, vr = swap ? vmany : vone;
    bool keep;
    *value = elem_op(bin->op, vl, vr, &keep);
    if (bin->return_bool) {
        *value = keep ? 1 : 0;
        return true;
    }
    return keep;
}

static im_rc vector_match(ev_t *ev, const promql_binary_t *bin, val_t *L, val_t *R, val_t *out)
{
    const promql_vector_matching_t *m = bin->matching;
    bool swap = m->card == PROMQL_CARD_ONE_TO_MANY;
    val_t *many = swap ? R : L, *one = swap ? L : R;
    /* fill(): a missing many-side operand takes fill_left, a missing one side
     * fill_right (as Prometheus 3.14, also for group_right) */
    bool fill_many = m->has_fill_left, fill_one = m->has_fill_right;
    size_t nsteps = ev->nsteps;
    im_rc rc = IM_OK;

    u64map_t sigmap;
    promql__map_init(&sigmap, one->n + (fill_one ? many->n : 0));
    uint32_t *oid = im_malloc((one->n + 1) * sizeof *oid);
    uint32_t *mid = im_malloc((many->n + 1) * sizeof *mid);
    size_t nsig = 0;
    for (size_t j = 0; j < one->n; j++) {
        uint32_t *slot = promql__map_slot(&sigmap, sig_of(ev, m, one->s[j].labels));
        if (!*slot) *slot = (uint32_t)++nsig;
        oid[j] = *slot;
    }
    for (size_t i = 0; i < many->n; i++) {
        uint64_t sig = sig_of(ev, m, many->s[i].labels);
        if (fill_one) { /* every many series gets an id: filled ones need it */
            uint32_t *slot = promql__map_slot(&sigmap, sig);
            if (!*slot) *slot = (uint32_t)++nsig;
            mid[i] = *slot;
        } else {
            mid[i] = promql__map_get(&sigmap, sig);
        }
    }
    promql__map_free(&sigmap);

    size_t *one_step = im_calloc(nsig + 1, sizeof *one_step);
    uint32_t *one_idx = im_calloc(nsig + 1, sizeof *one_idx);
    size_t *matched_step = im_calloc(nsig + 1, sizeof *matched_step);
    size_t *many_step = fill_many ? im_calloc(nsig + 1, sizeof *many_step) : NULL;
    match_state_t st;
    memset(&st, 0, sizeof st);
    promql__map_init(&st.pairmap, many->n);
    promql__map_init(&st.lblmap, many->n);
    promql__val_init(out, VAL_VECTOR);

    for (size_t k = 0; k < nsteps && rc == IM_OK; k++) {
        if ((rc = promql__check(ev)) != IM_OK) break;
        for (size_t j = 0; j < one->n; j++) {
            if (!one->s[j].has[k]) continue;
            uint32_t id = oid[j];
            if (one_step[id] == k + 1) {
                im_buf_t a, b, c;
                im_buf_init(&a, 0);
                im_buf_init(&b, 0);
                im_buf_init(&c, 0);
                const im_labels_t *ml = match_labels(ev, m, one->s[j].labels);
                labels_str(ml, &a);
                im_labels_unref(ml);
                labels_str(one->s[j].labels, &b);
                labels_str(one->s[one_idx[id]].labels, &c);
                rc = im_err_set(ev->err, IM_EEXEC,
                                "found duplicate series for the match group %s on the %s "
                                "hand-side of the operation: [%s, %s];many-to-many matching not "
                                "allowed: matching labels must be unique on one side",
                                a.data, swap ? "left" : "right", b.data, c.data);
                im_buf_free(&a);
                im_buf_free(&b);
                im_buf_free(&c);
                break;
            }
            one_step[id] = k + 1;
            one_idx[id] = (uint32_t)j;
        }
        if (rc != IM_OK) break;
        for (size_t i = 0; i < many->n; i++) {
            if (!many->s[i].has[k]) continue;
            uint32_t id = mid[i];
            if (id && many_step) many_step[id] = k + 1;
            double value;
            if (!id || one_step[id] != k + 1) {
                if (!fill_one) continue;
                if (!elem_value(bin, swap, many->s[i].v[k], m->fill_right, &value)) continue;
                emit_t em = {i,     UINT32_MAX,          id, many->s[i].labels, NULL,
                             false, many->s[i].drop_name};
                if ((rc = emit(ev, bin, &st, out, &em, k, value)) != IM_OK) break;
                continue;
            }
            size_t j = one_idx[id];
            /* 3.x raises the one-to-one error before a comparison filters */
            bool kept = elem_value(bin, swap, many->s[i].v[k], one->s[j].v[k], &value);
            if (!kept && ev->compat < 3) continue;
            if (m->card == PROMQL_CARD_ONE_TO_ONE) {
                if (matched_step[id] == k + 1) {
                    rc = im_err_set(ev->err, IM_EEXEC,
                                    "multiple matches for labels: many-to-one matching must be "
                                    "explicit (group_left/group_right)");
                    break;
                }
                matched_step[id] = k + 1;
            }
            if (!kept) continue;
            emit_t em = {
                i, j, id, many->s[i].labels, one->s[j].labels, false, many->s[i].drop_name};
            if ((rc = emit(ev, bin, &st, out, &em, k, value)) != IM_OK) break;
        }
        /* one-side series no many-side series matched: the many side filled */
        for (size_t j = 0; fill_many && rc == IM_OK && j < one->n; j++) {
            if (!one->s[j].has[k] || many_step[oid[j]] == k + 1) continue;
            double value;
            if (!elem_value(bin, swap, m->fill_left, one->s[j].v[k], &value)) continue;
            emit_t em = {UINT32_MAX, j, oid[j], NULL, one->s[j].labels, true, one->s[j].drop_name};
            rc = emit(ev, bin, &st, out, &em, k, value);
        }
    }
    im_free(oid);
    im_free(mid);
    im_free(one_step);
    im_free(one_idx);
    im_free(matched_step);
    im_free(many_step);
    im_free(st.slot_step);
    im_free(st.slot_sig);
    promql__map_free(&st.pairmap);
    promql__map_free(&st.lblmap);
    if (rc != IM_OK) promql__val_free(ev, out);
    return rc;
}

/* ---- set operators ---- */

static void move_series(ev_t *ev, val_t *out, vser_t *s)
{
    if (out->n == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 8;
        out->s = im_realloc(out->s, out->cap * sizeof *out->s);
    }
    out->s[out->n++] = *s;
    s->labels = NULL;
    s->v = NULL;
    IM_UNUSED(ev);
}

static im_rc set_op(ev_t *ev, const promql_binary_t *bin, val_t *L, val_t *R, val_t *out)
{
    const promql_vector_matching_t *m = bin->matching;
    size_t nsteps = ev->nsteps;
    u64map_t sigmap;
    promql__map_init(&sigmap, L->n + R->n);
    uint32_t *lid = im_malloc((L->n + 1) * sizeof *lid);
    uint32_t *rid = im_malloc((R->n + 1) * sizeof *rid);
    size_t nsig = 0;
    for (size_t i = 0; i < L->n; i++) {
        uint32_t *s = promql__map_slot(&sigmap, sig_of(ev, m, L->s[i].labels));
        if (!*s) *s = (uint32_t)++nsig;
        lid[i] = *s;
    }
    for (size_t i = 0; i < R->n; i++) {
        uint32_t *s = promql__map_slot(&sigmap, sig_of(ev, m, R->s[i].labels));
        if (!*s) *s = (uint32_t)++nsig;
        rid[i] = *s;
    }
    promql__map_free(&sigmap);
    /* stamp[sig] = k+1 when the other side has the signature at step k */
    size_t *stamp = im_calloc(nsig + 1, sizeof *stamp);
    promql__val_init(out, VAL_VECTOR);
    if (bin->op == PROMQL_OP_AND || bin->op == PROMQL_OP_UNLESS) {
        bool is_and = bin->op == PROMQL_OP_AND;
        for (size_t k = 0; k < nsteps; k++) {
            for (size_t j = 0; j < R->n; j++)
                if (R->s[j].has[k]) stamp[rid[j]] = k + 1;
            for (size_t i = 0; i < L->n; i++) {
                if (!L->s[i].has[k]) continue;
                bool hit = stamp[lid[i]] == k + 1;
                if (hit != is_and) L->s[i].has[k] = 0;
            }
        }
        for (size_t i = 0; i < L->n; i++) move_series(ev, out, &L->s[i]);
        L->n = 0;
    } else { /* or */
        for (size_t k = 0; k < nsteps; k++) {
            for (size_t i = 0; i < L->n; i++)
                if (L->s[i].has[k]) stamp[lid[i]] = k + 1;
            for (size_t j = 0; j < R->n; j++)
                if (R->s[j].has[k] && stamp[rid[j]] == k + 1) R->s[j].has[k] = 0;
        }
        for (size_t i = 0; i < L->n; i++) move_series(ev, out, &L->s[i]);
        for (size_t j = 0; j < R->n; j++) move_series(ev, out, &R->s[j]);
        L->n = 0;
        R->n = 0;
    }
    im_free(stamp);
    im_free(lid);
    im_free(rid);
    return promql__dedup(ev, out);
}

/* ---- dispatch ---- */

im_rc promql__eval_binary(ev_t *ev, const promql_expr_t *e, val_t *out)
{
    const promql_binary_t *bin = &e->u.bin;
    val_t L, R;
    im_rc rc = promql__eval(ev, bin->lhs, &L);
    if (rc != IM_OK) return rc;
    rc = promql__eval(ev, bin->rhs, &R);
    if (rc != IM_OK) {
        promql__val_free(ev, &L);
        return rc;
    }
    size_t nsteps = ev->nsteps;
    if (L.kind == VAL_SCALAR && R.kind == VAL_SCALAR) {
        for (size_t k = 0; k < nsteps; k++) {
            bool keep;
            double v = elem_op(bin->op, L.sc[k], R.sc[k], &keep);
            if (promql_binop_is_comparison(bin->op)) v = keep ? 1 : 0;
            L.sc[k] = v;
        }
        *out = L;
        promql__val_free(ev, &R);
        return IM_OK;
    }
    if (L.kind == VAL_VECTOR && R.kind == VAL_VECTOR) {
        if (promql_binop_is_set(bin->op))
            rc = set_op(ev, bin, &L, &R, out);
        else
            rc = vector_match(ev, bin, &L, &R, out);
        promql__val_free(ev, &L);
        promql__val_free(ev, &R);
        return rc;
    }
    /* vector op scalar, scalar op vector */
    bool swap = L.kind == VAL_SCALAR;
    val_t *vec = swap ? &R : &L, *sc = swap ? &L : &R;
    bool cmp = promql_binop_is_comparison(bin->op);
    for (size_t i = 0; i < vec->n; i++) {
        vser_t *s = &vec->s[i];
        for (size_t k = 0; k < nsteps; k++) {
            if (!s->has[k]) continue;
            double lv = s->v[k], rv = sc->sc[k];
            if (swap) {
                double t = lv;
                lv = rv;
                rv = t;
            }
            bool keep;
            double v = elem_op(bin->op, lv, rv, &keep);
            if (cmp && swap) v = rv;
            if (bin->return_bool)
                v = keep ? 1 : 0;
            else if (!keep) {
                s->has[k] = 0;
                continue;
            }
            s->v[k] = v;
        }
        if (drops_name(bin->op) || bin->return_bool) promql__vser_drop_name(ev, s);
    }
    if (vec->counted) {
        promql__count(ev, -vec->counted);
        vec->counted = 0;
    }
    *out = *vec;
    promql__val_init(vec, VAL_VECTOR);
    promql__val_free(ev, &L);
    promql__val_free(ev, &R);
    rc = promql__dedup(ev, out);
    if (rc != IM_OK) promql__val_free(ev, out);
    return rc;
}
