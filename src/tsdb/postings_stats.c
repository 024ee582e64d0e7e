/* postings_stats.c — cardinality statistics of the head's postings index, as
 * Prometheus reports them in /api/v1/status/tsdb: the number of label pairs,
 * and the top N of series per metric name, values per label name, bytes of
 * label values per label name (the lengths of its distinct values, as
 * Prometheus counts them) and series per name=value pair. One pass over the index under the head's
 * read lock; each top list is a bounded array kept sorted by count descending,
 * ties by name ascending (Prometheus leaves ties unordered; a fixed order keeps
 * answers stable). */
#include "util/base.h"

#include <string.h>

#include "tsdb/tsdb_int.h"

typedef struct cand {
    const im_istr_t *name, *value; /* value NULL: the entry is a label name */
    uint64_t count;
} cand_t;

typedef struct top {
    cand_t *v;
    size_t n, cap;
} top_t;

static int cand_cmp_names(const cand_t *a, const cand_t *b)
{
    size_t la = a->name->len, lb = b->name->len;
    int c = memcmp(a->name->s, b->name->s, IM_MIN(la, lb));
    if (c || la != lb) return c ? c : (la < lb ? -1 : 1);
    if (!a->value || !b->value) return 0;
    la = a->value->len;
    lb = b->value->len;
    c = memcmp(a->value->s, b->value->s, IM_MIN(la, lb));
    if (c || la != lb) return c ? c : (la < lb ? -1 : 1);
    return 0;
}

/* true when a ranks before b */
static bool cand_before(const cand_t *a, const cand_t *b)
{
    if (a->count != b->count) return a->count > b->count;
    return cand_cmp_names(a, b) < 0;
}

static void top_offer(top_t *t, cand_t c)
{
    if (t->cap == 0) return;
    if (t->n == t->cap && !cand_before(&c, &t->v[t->n - 1])) return;
    size_t pos = t->n < t->cap ? t->n : t->cap - 1;
    while (pos > 0 && cand_before(&c, &t->v[pos - 1])) {
        t->v[pos] = t->v[pos - 1];
        pos--;
    }
    t->v[pos] = c;
    if (t->n < t->cap) t->n++;
}

static void top_export(const top_t *t, bool pair, tsdb_stat_t **out, size_t *n)
{
    *out = im_calloc(t->n ? t->n : 1, sizeof **out);
    *n = t->n;
    for (size_t i = 0; i < t->n; i++) {
        const cand_t *c = &t->v[i];
        if (pair) {
            size_t len = c->name->len + 1 + c->value->len;
            char *s = im_malloc(len + 1);
            memcpy(s, c->name->s, c->name->len);
            s[c->name->len] = '=';
            memcpy(s + c->name->len + 1, c->value->s, c->value->len);
            s[len] = 0;
            (*out)[i].name = s;
        } else {
            const im_istr_t *s = c->value ? c->value : c->name;
            (*out)[i].name = im_strndup(s->s, s->len);
        }
        (*out)[i].count = c->count;
    }
}

void tsdb_postings_stats(tsdb_t *db, size_t limit, tsdb_postings_stats_t *out)
{
    memset(out, 0, sizeof *out);
    top_t metric = {0}, nvalues = {0}, bytes = {0}, pairs = {0};
    top_t *all[] = {&metric, &nvalues, &bytes, &pairs};
    for (size_t i = 0; i < IM_ARRAY_LEN(all); i++) {
        all[i]->cap = limit;
        all[i]->v = im_calloc(limit ? limit : 1, sizeof *all[i]->v);
    }
    tsdb__head_t *h = db->head;
    pthread_rwlock_rdlock(&h->lock);
    const tsdb__index_t *ix = &h->ix;
    for (size_t i = 0; i < ix->capnt; i++) {
        const tsdb__lname_t *l = ix->nt[i];
        if (!l) continue;
        bool is_name = l->name->len == 8 && !memcmp(l->name->s, "__name__", 8);
        uint64_t nv = 0, size = 0;
        for (size_t j = 0; j < l->nvalues; j++) {
            const tsdb__posting_t *p = l->values[j];
            uint64_t series = p->ids.n;
            if (series == 0) continue;
            nv++;
            out->num_label_pairs++;
            size += p->value->len;
            top_offer(&pairs, (cand_t){l->name, p->value, series});
            if (is_name) top_offer(&metric, (cand_t){l->name, p->value, series});
        }
        if (nv == 0) continue;
        top_offer(&nvalues, (cand_t){l->name, NULL, nv});
        top_offer(&bytes, (cand_t){l->name, NULL, size});
    }
    top_export(&metric, false, &out->series_by_metric, &out->nseries_by_metric);
    top_export(&nvalues, false, &out->values_by_label, &out->nvalues_by_label);
    top_export(&bytes, false, &out->bytes_by_label, &out->nbytes_by_label);
    top_export(&pairs, true, &out->series_by_pair, &out->nseries_by_pair);
    pthread_rwlock_unlock(&h->lock);
    for (size_t i = 0; i < IM_ARRAY_LEN(all); i++) im_free(all[i]->v);
}
