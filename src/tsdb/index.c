/* index.c — the postings index: for every (label name, value) the ascending list
 * of series ids that carry it, per name the list of its values, and the list of
 * all ids. Matchers are evaluated as set operations on id lists: an equality or a
 * regex that is a literal alternation looks its values up directly, other regexes
 * scan the name's values; matchers that also match the empty string ("missing
 * label") are evaluated as "all ids minus the ids whose value does not match".
 * Used by the head (ids are series refs) and by each loaded block (ids are the
 * positions in the block's series table). Not thread-safe: the owner locks. */
#include "util/base.h"

#include <stdlib.h>

#include "tsdb/tsdb_int.h"
#include "util/hash.h"

/* ---- Id lists ---- */

void tsdb__ids_push(tsdb__ids_t *l, uint32_t id)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 4;
        l->v = im_realloc(l->v, nc * sizeof *l->v);
        l->cap = nc;
    }
    l->v[l->n++] = id;
}

/* Keeps the list sorted: appends in the common case, else inserts in place. */
static void ids_insert(tsdb__ids_t *l, uint32_t id)
{
    if (l->n == 0 || l->v[l->n - 1] < id) {
        tsdb__ids_push(l, id);
        return;
    }
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->v[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < l->n && l->v[lo] == id) return;
    tsdb__ids_push(l, id); /* grows */
    memmove(l->v + lo + 1, l->v + lo, (l->n - 1 - lo) * sizeof *l->v);
    l->v[lo] = id;
}

void tsdb__ids_free(tsdb__ids_t *l)
{
    im_free(l->v);
    memset(l, 0, sizeof *l);
}

static void ids_reserve(tsdb__ids_t *l, size_t n)
{
    if (n > l->cap) {
        l->v = im_realloc(l->v, n * sizeof *l->v);
        l->cap = n;
    }
}

/* One walk over two sorted lists: ids in both always go to out; ids only in a
 * when only_a, ids only in b when only_b (and: neither, or: both, minus: a). */
static void ids_merge(const tsdb__ids_t *a, const tsdb__ids_t *b, tsdb__ids_t *out, bool only_a,
                      bool only_b, bool keep_both)
{
    out->n = 0;
    ids_reserve(out, a->n + (only_b ? b->n : 0) + 1);
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        if (a->v[i] < b->v[j]) {
            if (only_a) out->v[out->n++] = a->v[i];
            i++;
        } else if (a->v[i] > b->v[j]) {
            if (only_b) out->v[out->n++] = b->v[j];
            j++;
        } else {
            if (keep_both) out->v[out->n++] = a->v[i];
            i++;
            j++;
        }
    }
    for (; only_a && i < a->n; i++) out->v[out->n++] = a->v[i];
    for (; only_b && j < b->n; j++) out->v[out->n++] = b->v[j];
}

void tsdb__ids_and(const tsdb__ids_t *a, const tsdb__ids_t *b, tsdb__ids_t *out)
{
    ids_merge(a, b, out, false, false, true);
}

void tsdb__ids_or(const tsdb__ids_t *a, const tsdb__ids_t *b, tsdb__ids_t *out)
{
    ids_merge(a, b, out, true, true, true);
}

void tsdb__ids_minus(const tsdb__ids_t *a, const tsdb__ids_t *b, tsdb__ids_t *out)
{
    ids_merge(a, b, out, true, false, false);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Union of many lists: concatenate, sort, unique. */
static void ids_union_many(const tsdb__ids_t *const *ls, size_t n, tsdb__ids_t *out)
{
    out->n = 0;
    if (n == 1) {
        ids_reserve(out, ls[0]->n + 1);
        if (ls[0]->n) memcpy(out->v, ls[0]->v, ls[0]->n * sizeof *out->v);
        out->n = ls[0]->n;
        return;
    }
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += ls[i]->n;
    ids_reserve(out, total + 1);
    for (size_t i = 0; i < n; i++) {
        if (ls[i]->n) memcpy(out->v + out->n, ls[i]->v, ls[i]->n * sizeof *out->v);
        out->n += ls[i]->n;
    }
    qsort(out->v, out->n, sizeof *out->v, cmp_u32);
    size_t w = 0;
    for (size_t i = 0; i < out->n; i++)
        if (w == 0 || out->v[w - 1] != out->v[i]) out->v[w++] = out->v[i];
    out->n = w;
}

/* ---- Hash tables ---- */

static uint64_t pair_hash(const im_istr_t *n, const im_istr_t *v)
{
    return im_hash_mix(n->hash, v->hash * 31 + 7);
}

void tsdb__index_init(tsdb__index_t *ix)
{
    memset(ix, 0, sizeof *ix);
}

void tsdb__index_free(tsdb__index_t *ix)
{
    for (size_t i = 0; i < ix->cappt; i++) {
        tsdb__posting_t *p = ix->pt[i];
        if (!p) continue;
        im_istr_unref(p->name);
        im_istr_unref(p->value);
        tsdb__ids_free(&p->ids);
        im_free(p);
    }
    for (size_t i = 0; i < ix->capnt; i++) {
        tsdb__lname_t *l = ix->nt[i];
        if (!l) continue;
        im_istr_unref(l->name);
        im_free(l->values);
        im_free(l);
    }
    im_free(ix->pt);
    im_free(ix->nt);
    tsdb__ids_free(&ix->all);
    memset(ix, 0, sizeof *ix);
}

static tsdb__posting_t **pt_slot(tsdb__posting_t **pt, size_t cap, const im_istr_t *n,
                                 const im_istr_t *v)
{
    size_t i = pair_hash(n, v) & (cap - 1);
    while (pt[i] && (pt[i]->name != n || pt[i]->value != v)) i = (i + 1) & (cap - 1);
    return &pt[i];
}

static tsdb__lname_t **nt_slot(tsdb__lname_t **nt, size_t cap, const im_istr_t *n)
{
    size_t i = n->hash & (cap - 1);
    while (nt[i] && nt[i]->name != n) i = (i + 1) & (cap - 1);
    return &nt[i];
}

static void grow(tsdb__index_t *ix)
{
    if ((ix->npt + 1) * 4 > ix->cappt * 3) {
        size_t nc = ix->cappt ? ix->cappt * 2 : 64;
        tsdb__posting_t **np = im_calloc(nc, sizeof *np);
        for (size_t i = 0; i < ix->cappt; i++)
            if (ix->pt[i]) *pt_slot(np, nc, ix->pt[i]->name, ix->pt[i]->value) = ix->pt[i];
        im_free(ix->pt);
        ix->pt = np;
        ix->cappt = nc;
    }
    if ((ix->nnt + 1) * 4 > ix->capnt * 3) {
        size_t nc = ix->capnt ? ix->capnt * 2 : 16;
        tsdb__lname_t **nn = im_calloc(nc, sizeof *nn);
        for (size_t i = 0; i < ix->capnt; i++)
            if (ix->nt[i]) *nt_slot(nn, nc, ix->nt[i]->name) = ix->nt[i];
        im_free(ix->nt);
        ix->nt = nn;
        ix->capnt = nc;
    }
}

void tsdb__index_add(tsdb__index_t *ix, uint32_t id, const im_labels_t *ls)
{
    ids_insert(&ix->all, id);
    for (uint32_t i = 0; i < ls->n; i++) {
        grow(ix);
        const im_istr_t *n = ls->l[i].name, *v = ls->l[i].value;
        tsdb__posting_t **ps = pt_slot(ix->pt, ix->cappt, n, v);
        if (!*ps) {
            tsdb__posting_t *p = im_calloc(1, sizeof *p);
            p->name = im_istr_ref(n);
            p->value = im_istr_ref(v);
            *ps = p;
            ix->npt++;
            tsdb__lname_t **ns = nt_slot(ix->nt, ix->capnt, n);
            if (!*ns) {
                tsdb__lname_t *l = im_calloc(1, sizeof *l);
                l->name = im_istr_ref(n);
                *ns = l;
                ix->nnt++;
            }
            tsdb__lname_t *l = *ns;
            if (l->nvalues == l->capvalues) {
                l->capvalues = l->capvalues ? l->capvalues * 2 : 4;
                l->values = im_realloc(l->values, l->capvalues * sizeof *l->values);
            }
            l->values[l->nvalues++] = p;
        }
        ids_insert(&(*ps)->ids, id);
    }
}

const tsdb__lname_t *tsdb__index_lname(const tsdb__index_t *ix, const im_istr_t *name)
{
    if (!ix->capnt) return NULL;
    return *nt_slot(ix->nt, ix->capnt, name);
}

static const tsdb__posting_t *lookup(const tsdb__index_t *ix, const im_istr_t *n, const char *v,
                                     size_t vlen)
{
    if (!ix->cappt) return NULL;
    const im_istr_t *vi = im_intern(v, vlen);
    const tsdb__posting_t *p = *pt_slot(ix->pt, ix->cappt, n, vi);
    im_istr_unref(vi);
    return p;
}

/* Ids whose value of m's name satisfies m (want == true) or does not (false),
 * counting only series that have the label. */
static void values_matching(const tsdb__index_t *ix, const im_matcher_t *m, bool want,
                            tsdb__ids_t *out)
{
    out->n = 0;
    const im_istr_t *name = im_matcher_name(m);
    im_match_type_t ty = im_matcher_type(m);
    size_t vlen;
    const char *val = im_matcher_value(m, &vlen);
    /* Direct lookups: EQ wanting matches, NEQ wanting non-matches, set regexes. */
    bool positive_eq = (ty == IM_MATCH_EQ && want) || (ty == IM_MATCH_NEQ && !want);
    if (positive_eq) {
        const tsdb__posting_t *p = lookup(ix, name, val, vlen);
        if (p) ids_union_many((const tsdb__ids_t *const[]){&p->ids}, 1, out);
        return;
    }
    size_t nset = 0;
    const char *const *set = NULL;
    if ((ty == IM_MATCH_RE && want) || (ty == IM_MATCH_NRE && !want))
        set = im_matcher_set_values(m, &nset);
    const tsdb__ids_t *stackl[16];
    const tsdb__ids_t **ls = stackl;
    size_t nl = 0;
    if (set) {
        if (nset > IM_ARRAY_LEN(stackl)) ls = im_malloc(nset * sizeof *ls);
        for (size_t i = 0; i < nset; i++) {
            const tsdb__posting_t *p = lookup(ix, name, set[i], strlen(set[i]));
            if (p) ls[nl++] = &p->ids;
        }
    } else {
        const tsdb__lname_t *l = tsdb__index_lname(ix, name);
        if (!l) return;
        if (l->nvalues > IM_ARRAY_LEN(stackl)) ls = im_malloc(l->nvalues * sizeof *ls);
        for (size_t i = 0; i < l->nvalues; i++) {
            const tsdb__posting_t *p = l->values[i];
            if (im_matcher_matches(m, p->value->s, p->value->len) == want) ls[nl++] = &p->ids;
        }
    }
    if (nl) ids_union_many(ls, nl, out);
    if (ls != stackl) im_free(ls);
}

void tsdb__index_select(const tsdb__index_t *ix, im_matcher_t *const *ms, size_t nms,
                        tsdb__ids_t *out)
{
    out->n = 0;
    tsdb__ids_t acc = {0}, tmp = {0}, res = {0};
    bool have = false;
    /* Positive matchers first: they shrink the set fastest. */
    for (size_t i = 0; i < nms; i++) {
        if (im_matcher_matches_empty(ms[i])) continue;
        values_matching(ix, ms[i], true, &tmp);
        if (!have) {
            tsdb__ids_t t = acc;
            acc = tmp;
            tmp = t;
            have = true;
        } else {
            tsdb__ids_and(&acc, &tmp, &res);
            tsdb__ids_t t = acc;
            acc = res;
            res = t;
        }
        if (acc.n == 0) goto done;
    }
    if (!have) {
        ids_union_many((const tsdb__ids_t *const[]){&ix->all}, 1, &acc);
        have = true;
    }
    for (size_t i = 0; i < nms; i++) {
        if (!im_matcher_matches_empty(ms[i])) continue;
        values_matching(ix, ms[i], false, &tmp);
        if (tmp.n == 0) continue;
        tsdb__ids_minus(&acc, &tmp, &res);
        tsdb__ids_t t = acc;
        acc = res;
        res = t;
        if (acc.n == 0) break;
    }
done:
    tsdb__ids_free(out);
    *out = acc;
    tsdb__ids_free(&tmp);
    tsdb__ids_free(&res);
}

size_t tsdb__index_bytes(const tsdb__index_t *ix)
{
    size_t b = (ix->cappt + ix->capnt) * sizeof(void *) + ix->all.cap * 4;
    for (size_t i = 0; i < ix->cappt; i++)
        if (ix->pt[i]) b += sizeof(tsdb__posting_t) + ix->pt[i]->ids.cap * 4;
    for (size_t i = 0; i < ix->capnt; i++)
        if (ix->nt[i]) b += sizeof(tsdb__lname_t) + ix->nt[i]->capvalues * sizeof(void *);
    return b;
}

/* ---- String lists ---- */

void tsdb__strlist_push(tsdb_strlist_t *l, size_t *cap, const im_istr_t *s)
{
    if (l->n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        l->v = im_realloc(l->v, *cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
}

static int cmp_istr(const void *a, const void *b)
{
    const im_istr_t *x = *(const im_istr_t *const *)a, *y = *(const im_istr_t *const *)b;
    size_t n = IM_MIN(x->len, y->len);
    int c = memcmp(x->s, y->s, n);
    if (c) return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

void tsdb__strlist_finish(tsdb_strlist_t *l)
{
    if (l->n > 1) qsort(l->v, l->n, sizeof *l->v, cmp_istr);
    size_t w = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (w > 0 && l->v[w - 1] == l->v[i]) {
            im_istr_unref(l->v[i]);
            continue;
        }
        l->v[w++] = l->v[i];
    }
    l->n = w;
}
