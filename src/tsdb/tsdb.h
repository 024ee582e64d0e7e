/* tsdb.h — the embedded time-series store: contract.
 *
 * Data model. A series is a label set (labels/labels.h, __name__ included) with
 * samples (int64 t_ms, IEEE double v). Values are stored bit-exact, NaN payloads
 * included; the Prometheus staleness marker is the NaN with bits
 * 0x7ff0000000000002 (TSDB_STALE_NAN_BITS) and is stored like any sample.
 *
 * Appending (tsdb_appender_*). An appender batches samples and makes them visible
 * atomically: tsdb_appender_commit writes the whole batch to the WAL first, then
 * publishes it to queriers; either all of it becomes visible or none (on a WAL
 * write error the batch is discarded and the error returned). An appender must be
 * completed with exactly one commit or rollback and is freed by it. Any number of
 * appenders may be open at once, from any threads.
 *
 * Per-sample rejection happens in tsdb_appender_add and does not poison the batch:
 *  - IM_EOUTOFORDER  t is older than the series' newest committed sample;
 *  - IM_EDUPLICATE   same t as the newest sample but a different value (bit-wise)
 *                    (same t and same value is accepted and ignored, as Prometheus);
 *  - IM_EOUTOFBOUNDS t is older than the head's lower bound (already persisted),
 *                    or more than opts.max_future_ms ahead of the wall clock;
 *  - IM_ELIMIT       a new series over opts.limits (tsdb/limits.h).
 * tsdb_appender_error gives the sentence for the last rejection (which limit,
 * what to change).
 * The caller counts these; tsdb_stats reports the totals.
 *
 * Series references. tsdb_appender_add returns a tsdb_ref_t for the series; a
 * caller (the scraper) may cache it and pass it with labels == NULL next time.
 * A ref stays valid while the series is in the head; a stale ref (series gone)
 * gives IM_ENOTFOUND and the caller retries with labels.
 *
 * Querying. tsdb_queryable(db) gives the queryable (storage/storage.h) over
 * head and blocks; each select is a consistent view for its [mint, maxt] (inclusive, ms):
 * it sees whole commits only, and pins the blocks and (copies of) the head chunks
 * it may read until the series set is freed. Through the same vtable the PromQL
 * engine reads either this store or any other backend (tests use an in-memory
 * one). A series set and its iterators are used by one thread at a time;
 * different sets and queryables may be used concurrently.
 *
 * Time bounds. Retention, persisting and the head's lower bound follow the
 * wall clock, never a client's timestamps alone: time retention deletes blocks
 * ending before min(now, newest sample) - retention_ms, and a window is
 * persisted once min(newest sample, now + max_future_ms) is 1.5 block ranges
 * past it. On open, a block that starts more than max_future_ms ahead of the
 * clock is left on disk unloaded (warned), and WAL samples that far ahead are
 * dropped (warned), so a store that took such a sample from an older version
 * recovers on restart.
 *
 * Durability. WAL segments with a CRC32C per record (a commit of any size: long
 * records are fragmented and replayed whole or not at all); fsync policy from
 * tsdb_opts_t; replay on open (a torn or corrupt tail is cut and reported, never
 * fatal; a read error or short read is not corruption: tsdb_open fails with
 * IM_EIO and cuts nothing). The head is persisted into 2 h blocks, compacted,
 * and deleted by retention (time and size). A block with a bad checksum is
 * reported, skipped, and the rest is served; a block that cannot be read fails
 * the open.
 *
 * I/O failures are sticky. After a failed write, fsync, rename or directory
 * fsync (WAL, block, checkpoint) the store is failed: every later commit,
 * tsdb_sync, tsdb_maintain and tsdb_flush_head returns IM_EIO naming the first
 * error, until the store is closed and reopened (the reopen's replay decides
 * what of the failed write is good). A commit that returned an error is either
 * entirely there after the reopen or not at all; queries go on meanwhile.
 * Formats: docs/storage.md.
 *
 * With opts.dir == NULL the store is memory-only (no WAL, no blocks): used by
 * tests and the PromQL test-script runner. */
#ifndef IM_TSDB_TSDB_H
#define IM_TSDB_TSDB_H

#include "labels/labels.h"
#include "storage/storage.h"
#include "tsdb/limits.h"
#include "util/base.h"
#include "util/err.h"

/* The storage types (storage/storage.h) under this store's names: the store
 * implements the queryable and appender interfaces, and its own callers
 * (tests, `infermon tsdb`) use the direct tsdb_appender_* calls below. */
#define TSDB_STALE_NAN_BITS STORAGE_STALE_NAN_BITS
static inline double tsdb_stale_nan(void)
{
    return storage_stale_nan();
}
static inline bool tsdb_is_stale(double v)
{
    return storage_is_stale(v);
}
typedef storage_iter_t tsdb_iter_t;
typedef storage_iter_vt_t tsdb_iter_vt_t;
typedef storage_series_t tsdb_series_t;
typedef storage_series_set_t tsdb_series_set_t;
typedef storage_series_set_vt_t tsdb_series_set_vt_t;
typedef storage_select_hints_t tsdb_select_hints_t;
typedef storage_strlist_t tsdb_strlist_t;
typedef storage_queryable_t tsdb_queryable_t;
typedef storage_queryable_vt_t tsdb_queryable_vt_t;
typedef storage_ref_t tsdb_ref_t;
typedef storage_stats_t tsdb_stats_t;
typedef storage_stat_t tsdb_stat_t;
typedef storage_postings_stats_t tsdb_postings_stats_t;
static inline void tsdb_strlist_free(tsdb_strlist_t *l)
{
    storage_strlist_free(l);
}
static inline void tsdb_postings_stats_free(tsdb_postings_stats_t *s)
{
    storage_postings_stats_free(s);
}

/* ---- The store ---- */

typedef struct tsdb tsdb_t;

typedef enum tsdb_fsync_policy {
    TSDB_FSYNC_TIMER = 0, /* default: fsync every fsync_interval_ms and at close */
    TSDB_FSYNC_ALWAYS,    /* fsync on every commit */
    TSDB_FSYNC_NEVER,     /* leave it to the OS (close still fsyncs) */
} tsdb_fsync_policy_t;

typedef struct tsdb_opts {
    const char *dir;           /* NULL = memory only */
    int64_t retention_ms;      /* 0 = default 15d */
    int64_t retention_bytes;   /* 0 = no size limit */
    int64_t block_range_ms;    /* 0 = default 2h */
    tsdb_fsync_policy_t fsync; /* default TSDB_FSYNC_TIMER */
    int64_t fsync_interval_ms; /* 0 = default 1000 */
    size_t wal_segment_bytes;  /* 0 = default 128 MiB */
    bool no_background;        /* tests: no compaction/fsync thread; call tsdb_maintain */
    tsdb_limits_t limits;      /* 0 fields = the format caps (tsdb/limits.h) */
    int64_t max_future_ms;     /* 0 = TSDB_DEFAULT_MAX_FUTURE_MS; < 0 = no check */
    int64_t (*now_ms)(void);   /* wall clock; NULL = im_now_ms (tests set it) */
    /* The lowest WAL segment a reader still needs (0 = none), consulted before a
     * segment is deleted (remote write; see the WAL watcher below). */
    uint32_t (*wal_keep)(void *ctx);
    void *wal_keep_ctx;
    /* Agent mode: samples go to the WAL only (the head keeps series, no
     * chunks, nothing is persisted into blocks) and maintenance deletes the WAL
     * segments below wal_keep (the queues have sent them). */
    bool agent;
    /* Bytes of decoded block frames kept for later queries (frame_cache.c);
     * 0 = TSDB_DEFAULT_FRAME_CACHE, < 0 = none (a query still decodes each frame once). */
    int64_t frame_cache_bytes;
} tsdb_opts_t;
#define TSDB_DEFAULT_FRAME_CACHE ((int64_t)256 << 20)

im_rc tsdb_open(const tsdb_opts_t *opts, tsdb_t **out, im_err_t *err);
/* Flushes and fsyncs the WAL, stops background work, frees everything. */
void tsdb_close(tsdb_t *db);

/* One round of background work now: persist head ranges older than the
 * block range into blocks, compact, apply retention, truncate the WAL. */
im_rc tsdb_maintain(tsdb_t *db, im_err_t *err);
/* Persists everything in the head into blocks now (backfill and tools: `infermon
 * tsdb import`); afterwards samples at or before the newest persisted sample are
 * out of bounds, and newer ones (live data after a backfill) are accepted at once.
 * Memory-only stores: no-op. */
im_rc tsdb_flush_head(tsdb_t *db, im_err_t *err);
/* Forces the WAL to disk now. */
im_rc tsdb_sync(tsdb_t *db, im_err_t *err);

typedef struct tsdb_appender tsdb_appender_t;

tsdb_appender_t *tsdb_appender(tsdb_t *db);
/* Adds a sample to the batch. labels may be NULL when ref != 0. On success
 * *out_ref (may be NULL) receives the series ref. labels are borrowed for the
 * call (the store takes its own reference when it creates a series). */
im_rc tsdb_appender_add(tsdb_appender_t *a, tsdb_ref_t ref, const im_labels_t *labels, int64_t t_ms,
                        double v, tsdb_ref_t *out_ref);
/* Writes the batch to the WAL and publishes it; frees the appender. */
im_rc tsdb_appender_commit(tsdb_appender_t *a, im_err_t *err);
/* The sentence for the last rejected tsdb_appender_add (e.g. which limit and
 * which flag to change); "" when none. Valid until the next add or the end. */
const char *tsdb_appender_error(const tsdb_appender_t *a);
/* Discards the batch; frees the appender. */
void tsdb_appender_rollback(tsdb_appender_t *a);

/* A queryable view of the store (head + blocks); close it when done. */
tsdb_queryable_t *tsdb_queryable(tsdb_t *db);
/* The store as a storage_t (appenders are tsdb appenders, queryables as
 * tsdb_queryable, stats as below); owned by db, valid until tsdb_close. */
storage_t *tsdb_storage(tsdb_t *db);

void tsdb_get_stats(tsdb_t *db, tsdb_stats_t *out);

/* The head index cardinality (storage_postings_stats_t says what). */
void tsdb_postings_stats(tsdb_t *db, size_t limit, tsdb_postings_stats_t *out);

/* ---- WAL watcher (remote write) ----
 *
 * A read-only tail of a store's WAL (DIR/wal), as Prometheus' WAL watcher: the
 * newest checkpoint's series, then every segment in order, the live one
 * included, handing out series definitions and each commit's samples. It never
 * writes; it may run in another thread (or process) than the store. Only
 * complete records are handed out (a record being written is read on a later
 * poll). Positions: {seg, off} is the byte offset in segment seg just after a
 * record; records ending at or before the start position give their series
 * only. A segment that is gone before it was read (deleted past every keep,
 * see tsdb_opts_t.wal_keep) is reported through gap and skipped.
 * The store keeps the segments at or after wal_keep(wal_keep_ctx) (not 0)
 * even when a checkpoint replaces them. */
typedef struct tsdb_wal_pos {
    uint32_t seg;
    uint64_t off;
} tsdb_wal_pos_t;
static inline int tsdb_wal_pos_cmp(tsdb_wal_pos_t a, tsdb_wal_pos_t b)
{
    if (a.seg != b.seg) return a.seg < b.seg ? -1 : 1;
    return a.off < b.off ? -1 : a.off > b.off;
}
typedef struct tsdb_wal_sample {
    uint32_t id; /* the series' id in its definition */
    int64_t t_ms;
    double v;
} tsdb_wal_sample_t;
typedef struct tsdb_wal_watch_cb {
    /* A series definition; ls is borrowed for the call. A later definition of
     * the same id replaces the earlier one. */
    void (*series)(void *ctx, uint32_t id, const im_labels_t *ls);
    /* The samples of one commit after the start position (s borrowed for the
     * call); end is the position just after it. Returning false stops the poll
     * before this record (it is handed out again by the next poll). */
    bool (*samples)(void *ctx, const tsdb_wal_sample_t *s, size_t n, tsdb_wal_pos_t end);
    /* Segments from_seg..to_seg were deleted before being read. May be NULL. */
    void (*gap)(void *ctx, uint32_t from_seg, uint32_t to_seg);
} tsdb_wal_watch_cb_t;
typedef struct tsdb_wal_watcher tsdb_wal_watcher_t;
/* Opens a watcher of storage directory dir, reading series from the newest
 * checkpoint. start NULL = the current end of the WAL (only later commits give
 * samples). cb and ctx are borrowed until close. */
im_rc tsdb_wal_watcher_open(const char *dir, const tsdb_wal_pos_t *start,
                            const tsdb_wal_watch_cb_t *cb, void *ctx, tsdb_wal_watcher_t **out,
                            im_err_t *err);
/* Reads what was written since the last poll; *nrec (may be NULL) = records read.
 * Returns IM_OK also when a callback stopped it. */
im_rc tsdb_wal_watcher_poll(tsdb_wal_watcher_t *w, size_t *nrec, im_err_t *err);
/* The position just after the last record read. */
tsdb_wal_pos_t tsdb_wal_watcher_pos(const tsdb_wal_watcher_t *w);
void tsdb_wal_watcher_close(tsdb_wal_watcher_t *w);
/* Bytes of the WAL segments from segment seg on (the backlog of a reader). */
uint64_t tsdb_wal_bytes_from(const char *dir, uint32_t seg);

#endif
