/* storage.h — the storage interfaces (Prometheus' storage package): what the
 * PromQL engine, rules, scraping and the HTTP API use to read and write
 * samples, without knowing which store is behind them.
 *
 * Implementations: the embedded TSDB (tsdb/tsdb.h, tsdb_storage), PromQL's
 * in-memory test store (promql_memstore_queryable: read side only) and the
 * fanout (storage_fanout_new below: writes to a primary and tees to
 * secondaries, where the remote-write sender hangs). Only the daemon's wiring
 * (src/cli/) names a concrete store; everything above storage depends on this
 * header alone (the build checks it, see CMakeLists.txt and ARCHITECTURE.md).
 *
 * Data model. A series is a label set (labels/labels.h, __name__ included) with
 * samples (int64 t_ms, IEEE double v). Values travel bit-exact, NaN payloads
 * included; the Prometheus staleness marker is the NaN with bits
 * 0x7ff0000000000002 (STORAGE_STALE_NAN_BITS) and is stored like any sample.
 *
 * Reading (storage_queryable_t). select gives the series matching every matcher
 * with at least one sample in [mint, maxt] (inclusive, ms), sorted by
 * im_labels_compare, no duplicates; each select is a consistent view that sees
 * whole commits only. Samples are read per series with an iterator (next/seek/at)
 * or in bulk (iterator read, series set read_series): the engine uses the bulk
 * calls when a backend has them, so the vtable costs one indirect call per
 * series or per block of samples, not per sample. A series set and its
 * iterators are used by one thread at a time (unless concurrent_iter);
 * different sets and queryables may be used concurrently.
 *
 * Writing (storage_appender_t). An appender batches samples and makes them
 * visible atomically on commit (all or nothing); it must be completed with
 * exactly one commit or rollback, which frees it. Any number of appenders may be
 * open at once, from any threads. add rejects one sample without poisoning the
 * batch (IM_EOUTOFORDER, IM_EDUPLICATE, IM_EOUTOFBOUNDS, IM_ELIMIT: the store's
 * header says when); error() gives the sentence for the last rejection.
 * Series refs: add returns a storage_ref_t for the series that the caller (the
 * scraper) may cache and pass with labels == NULL next time; a stale ref gives
 * IM_ENOTFOUND and the caller retries with labels. */
#ifndef IM_STORAGE_STORAGE_H
#define IM_STORAGE_STORAGE_H

#include "labels/labels.h"
#include "util/base.h"
#include "util/err.h"

#define STORAGE_STALE_NAN_BITS 0x7ff0000000000002ULL

/* The most labels any series can have in any store (the on-disk formats' bound;
 * tsdb/limits.h TSDB_FMT_MAX_LABELS is this value). */
#define STORAGE_FMT_MAX_LABELS 4096u

static inline double storage_stale_nan(void)
{
    uint64_t b = STORAGE_STALE_NAN_BITS;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}
static inline bool storage_is_stale(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b == STORAGE_STALE_NAN_BITS;
}

/* ---- Queryable: the read interface ---- */

/* A sample iterator over one series, restricted to the [mint, maxt] it was
 * created for. Usage: while (it->vt->next(it)) it->vt->at(it, &t, &v); */
typedef struct storage_iter storage_iter_t;
typedef struct storage_iter_vt {
    /* Advances to the next sample; false at the end. */
    bool (*next)(storage_iter_t *it);
    /* Advances to the first sample with time >= t (never moves backwards; if the
     * current sample already satisfies it, stays). False if there is none. */
    bool (*seek)(storage_iter_t *it, int64_t t_ms);
    /* The current sample (valid after next/seek returned true). */
    void (*at)(storage_iter_t *it, int64_t *t_ms, double *v);
    void (*free)(storage_iter_t *it);
    /* Optional (NULL: use next/at). Copies up to max (> 0) samples following the
     * current position into t[]/v[] and advances to the last one copied, exactly
     * as that many next calls would; returns how many (0: at the end). */
    size_t (*read)(storage_iter_t *it, int64_t *t, double *v, size_t max);
} storage_iter_vt_t;
struct storage_iter {
    const storage_iter_vt_t *vt;
};

/* One selected series. labels is a reference owned by the set. */
typedef struct storage_series {
    const im_labels_t *labels;
    void *priv; /* backend's */
} storage_series_t;

/* The result of a select: series sorted by im_labels_compare, no duplicates. */
typedef struct storage_series_set storage_series_set_t;
typedef struct storage_series_set_vt {
    /* A new iterator over series i's samples within the select's [mint, maxt]. */
    storage_iter_t *(*iter)(storage_series_set_t *set, size_t i);
    void (*free)(storage_series_set_t *set);
    /* Optional (NULL: use iter). Series i's samples within [mint, maxt] — what an
     * iterator would yield — into (*t, *v) from index 0, arrays of capacity *cap
     * grown with im_realloc as needed; returns how many. Threading as iter. */
    size_t (*read_series)(storage_series_set_t *set, size_t i, int64_t **t, double **v,
                          size_t *cap);
} storage_series_set_vt_t;
struct storage_series_set {
    const storage_series_set_vt_t *vt;
    storage_series_t *series;
    size_t n;
    /* True when iter may be called for different series from several threads at
     * once (each iterator still used by one thread); false (the default of a
     * zeroed set) keeps the one-thread-at-a-time rule. */
    bool concurrent_iter;
    /* True when samples may be native histograms, boxed (storage/fhist.h),
     * valid while the set is open; false (a zeroed set) means floats only. */
    bool hist_boxes;
};

/* Hints let a backend skip work; all optional (0 = none). */
typedef struct storage_select_hints {
    int64_t step_ms;   /* range-query step */
    const char *func;  /* enclosing function name, e.g. "rate" */
    size_t max_series; /* 0 = no limit; above it select fails with IM_ELIMIT */
} storage_select_hints_t;

/* A list of strings (label names or values), sorted, unique. Owned by the
 * caller after a successful call: free with storage_strlist_free. */
typedef struct storage_strlist {
    const im_istr_t **v; /* each an interned reference */
    size_t n;
} storage_strlist_t;
void storage_strlist_free(storage_strlist_t *l);

typedef struct storage_queryable storage_queryable_t;
typedef struct storage_queryable_vt {
    /* Series with at least one sample in [mint, maxt] matching every matcher.
     * An empty matcher list is an error (IM_EINVAL). */
    im_rc (*select)(storage_queryable_t *q, int64_t mint_ms, int64_t maxt_ms,
                    im_matcher_t *const *ms, size_t nms, const storage_select_hints_t *hints,
                    storage_series_set_t **out, im_err_t *err);
    /* Label names of series in [mint, maxt] matching ms (all series if nms == 0). */
    im_rc (*label_names)(storage_queryable_t *q, int64_t mint_ms, int64_t maxt_ms,
                         im_matcher_t *const *ms, size_t nms, storage_strlist_t *out,
                         im_err_t *err);
    /* Values of label `name` in [mint, maxt] among series matching ms. */
    im_rc (*label_values)(storage_queryable_t *q, const char *name, int64_t mint_ms,
                          int64_t maxt_ms, im_matcher_t *const *ms, size_t nms,
                          storage_strlist_t *out, im_err_t *err);
    void (*close)(storage_queryable_t *q);
} storage_queryable_vt_t;
struct storage_queryable {
    const storage_queryable_vt_t *vt;
};

/* ---- Appender: the write interface ---- */

typedef uint64_t storage_ref_t; /* 0 = none */
typedef struct storage_appender storage_appender_t;
typedef struct storage_appender_vt {
    /* Adds a sample to the batch. labels may be NULL when ref != 0; labels are
     * borrowed for the call. On success *out_ref (may be NULL) gets the ref. */
    im_rc (*add)(storage_appender_t *a, storage_ref_t ref, const im_labels_t *labels, int64_t t_ms,
                 double v, storage_ref_t *out_ref);
    /* Makes the batch visible; frees the appender. */
    im_rc (*commit)(storage_appender_t *a, im_err_t *err);
    /* Discards the batch; frees the appender. */
    void (*rollback)(storage_appender_t *a);
    /* The sentence for the last rejected add; "" when none. Valid until the
     * next add or the end. */
    const char *(*error)(const storage_appender_t *a);
} storage_appender_vt_t;
struct storage_appender {
    const storage_appender_vt_t *vt;
};

static inline im_rc storage_appender_add(storage_appender_t *a, storage_ref_t ref,
                                         const im_labels_t *labels, int64_t t_ms, double v,
                                         storage_ref_t *out_ref)
{
    return a->vt->add(a, ref, labels, t_ms, v, out_ref);
}
static inline im_rc storage_appender_commit(storage_appender_t *a, im_err_t *err)
{
    return a->vt->commit(a, err);
}
static inline void storage_appender_rollback(storage_appender_t *a)
{
    a->vt->rollback(a);
}
static inline const char *storage_appender_error(const storage_appender_t *a)
{
    return a->vt->error(a);
}

/* ---- Storage: a store that hands out queryables and appenders ---- */

/* What a store reports about itself for /metrics and /api/v1/status/tsdb
 * (Prometheus' TSDBAdminStats); a store without a head leaves fields 0. */
typedef struct storage_stats {
    uint64_t head_series;
    uint64_t head_chunks;
    uint64_t head_samples; /* samples currently in the head */
    uint64_t head_bytes;   /* memory held by the head */
    int64_t head_mint_ms, head_maxt_ms;
    uint64_t samples_appended; /* total committed */
    uint64_t out_of_order, duplicates, out_of_bounds;
    uint64_t too_far_future; /* of out_of_bounds: ahead of the clock by more than max_future */
    uint64_t over_limits;    /* new series refused by the store's limits */
    uint64_t wal_fsyncs;
    double wal_fsync_seconds_total;
    uint64_t wal_corruptions; /* torn/corrupt tails cut at replay */
    uint64_t blocks;
    uint64_t block_bytes;
    uint64_t blocks_corrupt; /* skipped at open */
    uint64_t compactions;
    /* decoded block frames kept for queries (tsdb frame_cache.c) */
    uint64_t frame_cache_hits, frame_cache_misses, frame_cache_evictions;
    uint64_t frame_cache_bytes, frame_cache_limit_bytes;
} storage_stats_t;

/* Cardinality of the head's index, as /api/v1/status/tsdb reports it: the
 * number of name=value pairs and four top-`limit` lists, each sorted by count
 * descending (ties by name): series per metric name, distinct values per label
 * name, bytes of values per label name (sum of its distinct values' lengths), and
 * series per "name=value" pair. Names are owned copies. */
typedef struct storage_stat {
    char *name;
    uint64_t count;
} storage_stat_t;
typedef struct storage_postings_stats {
    uint64_t num_label_pairs;
    storage_stat_t *series_by_metric, *values_by_label, *bytes_by_label, *series_by_pair;
    size_t nseries_by_metric, nvalues_by_label, nbytes_by_label, nseries_by_pair;
} storage_postings_stats_t;
void storage_postings_stats_free(storage_postings_stats_t *s);

typedef struct storage storage_t;
typedef struct storage_vt {
    /* A new appender (see above). */
    storage_appender_t *(*appender)(storage_t *s);
    /* A queryable view; close it when done. */
    storage_queryable_t *(*queryable)(storage_t *s);
    /* Optional (NULL: not known). A new reference to the labels of the series
     * ref names (as an appender of this store returned it), or NULL. */
    const im_labels_t *(*series_labels)(storage_t *s, storage_ref_t ref);
    /* Optional (NULL: all zero). */
    void (*stats)(storage_t *s, storage_stats_t *out);
    /* Optional (NULL: empty). */
    void (*postings_stats)(storage_t *s, size_t limit, storage_postings_stats_t *out);
} storage_vt_t;
struct storage {
    const storage_vt_t *vt;
};

static inline storage_appender_t *storage_appender(storage_t *s)
{
    return s->vt->appender(s);
}
static inline storage_queryable_t *storage_queryable(storage_t *s)
{
    return s->vt->queryable(s);
}
/* The store's stats (zeros when it keeps none). */
void storage_get_stats(storage_t *s, storage_stats_t *out);
/* The store's postings stats (empty when it keeps none); free the result. */
void storage_get_postings_stats(storage_t *s, size_t limit, storage_postings_stats_t *out);

/* ---- Fanout: one appender over a primary and secondaries ---- */

/* A store that writes every sample to primary and, once the primary accepted
 * it, to each secondary (Prometheus' fanout storage; the remote-write queue is a
 * secondary). Reads, series labels and stats are the primary's. Refs are the
 * primary's: a secondary gets the labels (looked up with the primary's
 * series_labels when the caller passed only a ref) and ref 0.
 * Results: add returns the primary's answer; a secondary's rejection does not
 * fail the add (the primary has the sample) but is kept and returned by commit
 * (after every store committed). Commit commits the primary first; if that
 * fails the secondaries are rolled back. primary and secondaries are borrowed
 * and must outlive the fanout; n may be 0. */
storage_t *storage_fanout_new(storage_t *primary, storage_t *const *secondaries, size_t n);
void storage_fanout_free(storage_t *fanout);

#endif
