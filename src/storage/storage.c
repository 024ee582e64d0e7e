/* storage.c — the parts of the storage interfaces (storage.h) that are not a
 * store: freeing the lists a queryable returns, the optional stats calls, and
 * the fanout store that tees every appended sample to secondaries. */
#include "util/base.h"

#include <assert.h>

#include "storage/storage.h"
#include "util/mem.h"

void storage_strlist_free(storage_strlist_t *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) im_istr_unref(l->v[i]);
    im_free(l->v);
    l->v = NULL;
    l->n = 0;
}

static void stats_free(storage_stat_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) im_free(v[i].name);
    im_free(v);
}

void storage_postings_stats_free(storage_postings_stats_t *s)
{
    stats_free(s->series_by_metric, s->nseries_by_metric);
    stats_free(s->values_by_label, s->nvalues_by_label);
    stats_free(s->bytes_by_label, s->nbytes_by_label);
    stats_free(s->series_by_pair, s->nseries_by_pair);
    memset(s, 0, sizeof *s);
}

void storage_get_stats(storage_t *s, storage_stats_t *out)
{
    memset(out, 0, sizeof *out);
    if (s->vt->stats) s->vt->stats(s, out);
}

void storage_get_postings_stats(storage_t *s, size_t limit, storage_postings_stats_t *out)
{
    memset(out, 0, sizeof *out);
    if (s->vt->postings_stats) s->vt->postings_stats(s, limit, out);
}

/* ---- Fanout ---- */

typedef struct fanout {
    storage_t pub; /* must be first */
    storage_t *primary;
    storage_t **sec; /* owned array of borrowed stores */
    size_t nsec;
} fanout_t;

typedef struct fanout_app {
    storage_appender_t pub; /* must be first */
    fanout_t *f;
    storage_appender_t *primary;
    storage_appender_t **sec; /* owned array; each completed by our commit/rollback */
    im_err_t err;             /* a secondary's rejection (kept for commit) */
    im_rc sec_rc;             /* IM_OK or the first secondary rejection */
} fanout_app_t;

static im_rc fa_add(storage_appender_t *a, storage_ref_t ref, const im_labels_t *labels,
                    int64_t t_ms, double v, storage_ref_t *out_ref)
{
    fanout_app_t *fa = (fanout_app_t *)a;
    storage_ref_t pref = 0;
    im_rc rc = storage_appender_add(fa->primary, ref, labels, t_ms, v, &pref);
    if (out_ref) *out_ref = pref;
    if (rc != IM_OK || fa->f->nsec == 0) return rc;
    const im_labels_t *ls = labels, *looked = NULL;
    if (!ls && fa->f->primary->vt->series_labels)
        ls = looked = fa->f->primary->vt->series_labels(fa->f->primary, pref);
    for (size_t i = 0; i < fa->f->nsec; i++) {
        im_rc src = ls ? storage_appender_add(fa->sec[i], 0, ls, t_ms, v, NULL) : IM_ENOTFOUND;
        if (src != IM_OK && fa->sec_rc == IM_OK) {
            fa->sec_rc = src;
            if (ls)
                im_err_set(&fa->err, src, "secondary storage %zu: %s", i,
                           storage_appender_error(fa->sec[i]));
            else
                im_err_set(&fa->err, src,
                           "secondary storage %zu: the primary cannot name series ref %llu", i,
                           (unsigned long long)pref);
        }
    }
    if (looked) im_labels_unref(looked);
    return IM_OK;
}

static void fa_free(fanout_app_t *fa)
{
    im_free(fa->sec);
    im_free(fa);
}

static im_rc fa_commit(storage_appender_t *a, im_err_t *err)
{
    fanout_app_t *fa = (fanout_app_t *)a;
    im_rc rc = storage_appender_commit(fa->primary, err);
    if (rc != IM_OK) {
        for (size_t i = 0; i < fa->f->nsec; i++) storage_appender_rollback(fa->sec[i]);
        fa_free(fa);
        return rc;
    }
    im_rc first = IM_OK;
    for (size_t i = 0; i < fa->f->nsec; i++) {
        im_err_t e;
        im_err_clear(&e);
        im_rc src = storage_appender_commit(fa->sec[i], &e);
        if (src != IM_OK && first == IM_OK) {
            first = src;
            im_err_set(err, src, "secondary storage %zu: %s", i, e.msg);
        }
    }
    if (first == IM_OK && fa->sec_rc != IM_OK) {
        first = fa->sec_rc;
        im_err_set(err, first, "%s", fa->err.msg);
    }
    fa_free(fa);
    return first;
}

static void fa_rollback(storage_appender_t *a)
{
    fanout_app_t *fa = (fanout_app_t *)a;
    storage_appender_rollback(fa->primary);
    for (size_t i = 0; i < fa->f->nsec; i++) storage_appender_rollback(fa->sec[i]);
    fa_free(fa);
}

/* The primary's sentence: add's answer is the primary's. */
static const char *fa_error(const storage_appender_t *a)
{
    const fanout_app_t *fa = (const fanout_app_t *)a;
    return storage_appender_error(fa->primary);
}

static const storage_appender_vt_t fanout_app_vt = {fa_add, fa_commit, fa_rollback, fa_error};

static storage_appender_t *f_appender(storage_t *s)
{
    fanout_t *f = (fanout_t *)s;
    fanout_app_t *fa = im_calloc(1, sizeof *fa);
    fa->pub.vt = &fanout_app_vt;
    fa->f = f;
    fa->primary = storage_appender(f->primary);
    if (f->nsec) fa->sec = im_calloc(f->nsec, sizeof *fa->sec);
    for (size_t i = 0; i < f->nsec; i++) fa->sec[i] = storage_appender(f->sec[i]);
    im_err_clear(&fa->err);
    return &fa->pub;
}

static storage_queryable_t *f_queryable(storage_t *s)
{
    fanout_t *f = (fanout_t *)s;
    return storage_queryable(f->primary);
}

static const im_labels_t *f_series_labels(storage_t *s, storage_ref_t ref)
{
    fanout_t *f = (fanout_t *)s;
    return f->primary->vt->series_labels ? f->primary->vt->series_labels(f->primary, ref) : NULL;
}

static void f_stats(storage_t *s, storage_stats_t *out)
{
    storage_get_stats(((fanout_t *)s)->primary, out);
}

static void f_postings_stats(storage_t *s, size_t limit, storage_postings_stats_t *out)
{
    storage_get_postings_stats(((fanout_t *)s)->primary, limit, out);
}

static const storage_vt_t fanout_vt = {f_appender, f_queryable, f_series_labels, f_stats,
                                       f_postings_stats};

storage_t *storage_fanout_new(storage_t *primary, storage_t *const *secondaries, size_t n)
{
    assert(primary && (n == 0 || secondaries));
    fanout_t *f = im_calloc(1, sizeof *f);
    f->pub.vt = &fanout_vt;
    f->primary = primary;
    f->nsec = n;
    if (n) {
        f->sec = im_calloc(n, sizeof *f->sec);
        memcpy(f->sec, secondaries, n * sizeof *f->sec);
    }
    return &f->pub;
}

void storage_fanout_free(storage_t *s)
{
    if (!s) return;
    fanout_t *f = (fanout_t *)s;
    im_free(f->sec);
    im_free(f);
}
