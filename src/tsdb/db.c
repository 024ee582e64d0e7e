/* db.c — the store as a whole: opening (blocks, then WAL replay into the head),
 * background work (WAL fsync on a timer, persisting the head into blocks,
 * compaction, retention, WAL checkpoints), statistics and closing.
 *
 * Directory layout:
 *   DIR/lock               flock'ed while open (one process per directory)
 *   DIR/wal/               segments and checkpoints (wal.c)
 *   DIR/blocks/NAME.imb    immutable blocks (block.c)
 *
 * Life of a sample:
 *   appender_add -> commit: WAL record -> head chunk
 *     -> persist: head window [w, w+R) older than 1.5 R behind the head's newest
 *        sample (capped at now + max_future, invariant 5) -> block (level 1),
 *        head truncated, WAL checkpointed; a flush
 *        (backfill) persists partial windows too: a block's [mint, maxt] is
 *        the range of its samples, never widened to its window, so the head's
 *        lower bound after a flush is the newest persisted sample + 1 ms
 *     -> compaction: level-n blocks of one window of 3^n R -> one level n+1 block
 *     -> retention: blocks ending before min(now, newest) - retention_ms, or the
 *        oldest while the total size exceeds retention_bytes, are deleted.
 *
 * Invariants:
 *  1. A block is durable (fsynced, renamed) before the head drops its range and
 *     before the WAL segments holding it are deleted.
 *  2. head->min_valid_t only grows; it is raised (under commit_mu) before a
 *     window is snapshotted for persisting, so no commit can add to it later.
 *  3. On open, min_valid_t starts just after the newest sample in a block, so
 *     a WAL replay never re-adds persisted samples.
 *  4. A block that fails validation is reported, counted, and left out; a block
 *     that cannot be read (I/O error) fails the open: it is never left out
 *     silently, and nothing is deleted because of it.
 *  5. All file I/O goes through io.c. An I/O error while writing (WAL, block,
 *     checkpoint, fsync, rename, directory fsync) puts the store into the WAL's
 *     sticky failed state (wal.c invariant 7): commits, syncs and maintenance
 *     are refused with that error until the store is reopened, and the failed
 *     write is never retried. Queries go on being served from memory and the
 *     blocks already open.
 *  6. No client timestamp alone moves a bound: appends more than max_future
 *     ahead of the wall clock are refused (head_append.c); time retention counts
 *     back from min(now, newest sample), so a block ending in the future never
 *     makes it drop others; persisting counts from min(newest, now + max_future).
 *     What an older version let through is neutralised at open: blocks that
 *     start beyond now + max_future are not loaded (left on disk, warned), and
 *     WAL samples beyond it are dropped (warned), so the head's lower bound
 *     and the series' newest samples come from plausible data only. */
#include "util/base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tsdb/io.h"
#include "tsdb/tsdb_int.h"
#include "util/log.h"
#include "util/timeutil.h"

im_rc tsdb__head_apply_record(tsdb__head_t *h, const uint8_t *rec, size_t len);
void tsdb__head_checkpoint(tsdb__head_t *h, im_buf_t *out);

#define DEFAULT_RETENTION_MS (15 * IM_MS_PER_DAY)
#define DEFAULT_BLOCK_MS     (2 * IM_MS_PER_HOUR)
#define DEFAULT_SEGMENT      (128u << 20)
#define MAINT_INTERVAL_MS    60000
#define AGENT_TRUNCATE_MS    10000 /* agent mode: drop sent WAL segments this often */
#define ZLEVEL_PERSIST       9
#define ZLEVEL_COMPACT       19

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

int64_t tsdb__now_ms(const tsdb_t *db)
{
    return db->opts.now_ms ? db->opts.now_ms() : im_now_ms();
}

int64_t tsdb__max_valid_t(const tsdb_t *db)
{
    if (db->opts.max_future_ms < 0) return INT64_MAX;
    int64_t now = tsdb__now_ms(db);
    return now > INT64_MAX - db->opts.max_future_ms ? INT64_MAX : now + db->opts.max_future_ms;
}

/* The reference time persisting counts from: the head's newest sample, but
 * never beyond what an append may add now (invariant 5). */
static int64_t persist_ref(const tsdb_t *db, int64_t head_maxt)
{
    int64_t lim = tsdb__max_valid_t(db);
    return head_maxt < lim ? head_maxt : lim;
}

/* ---- Blocks list ---- */

static int cmp_block(const void *a, const void *b)
{
    const tsdb__block_t *x = *(tsdb__block_t *const *)a, *y = *(tsdb__block_t *const *)b;
    if (x->mint != y->mint) return x->mint < y->mint ? -1 : 1;
    return x->maxt < y->maxt ? -1 : x->maxt > y->maxt;
}

/* Caller holds blocks_mu. */
static void blocks_add(tsdb_t *db, tsdb__block_t *b)
{
    if (db->nblocks == db->capblocks) {
        db->capblocks = db->capblocks ? db->capblocks * 2 : 16;
        db->blocks = im_realloc(db->blocks, db->capblocks * sizeof *db->blocks);
    }
    b->cache = db->fcache;
    db->blocks[db->nblocks++] = b;
    qsort(db->blocks, db->nblocks, sizeof *db->blocks, cmp_block);
}

/* Caller holds blocks_mu. Marks the block deleted and drops the list's reference. */
static void blocks_remove(tsdb_t *db, tsdb__block_t *b)
{
    for (size_t i = 0; i < db->nblocks; i++) {
        if (db->blocks[i] != b) continue;
        memmove(db->blocks + i, db->blocks + i + 1, (db->nblocks - i - 1) * sizeof *db->blocks);
        db->nblocks--;
        atomic_store(&b->deleted, true);
        tsdb__block_unref(b);
        return;
    }
}

static char *blocks_dir(const tsdb_t *db)
{
    size_t n = strlen(db->dir) + 8;
    char *p = im_malloc(n);
    snprintf(p, n, "%s/blocks", db->dir);
    return p;
}

static im_rc load_blocks(tsdb_t *db, im_err_t *err)
{
    char *bd = blocks_dir(db);
    if (mkdir(bd, 0755) != 0 && errno != EEXIST) {
        im_rc rc = im_err_set(err, IM_EIO, "cannot create %s: %s", bd, strerror(errno));
        im_free(bd);
        return rc;
    }
    DIR *d = opendir(bd);
    if (!d) {
        im_rc rc = im_err_set(err, IM_EIO, "cannot read %s: %s", bd, strerror(errno));
        im_free(bd);
        return rc;
    }
    struct dirent *de;
    char p[4096];
    while ((de = readdir(d))) {
        size_t nl = strlen(de->d_name);
        snprintf(p, sizeof p, "%s/%s", bd, de->d_name);
        if (nl > 4 && strcmp(de->d_name + nl - 4, ".tmp") == 0) {
            (void)tsdb__io_unlink(p); /* an unfinished block: harmless if it stays */
            continue;
        }
        if (nl < 5 || strcmp(de->d_name + nl - 4, ".imb") != 0) continue;
        tsdb__block_t *b;
        im_err_t e;
        im_err_clear(&e);
        im_rc brc = tsdb__block_open(p, &b, &e);
        if (brc == IM_EIO) {
            closedir(d);
            im_free(bd);
            return im_err_set(err, IM_EIO,
                              "%s; the store was not opened (check the disk, or move the block "
                              "away to start without it)",
                              e.msg);
        }
        if (brc != IM_OK) {
            atomic_fetch_add(&db->blocks_corrupt, 1);
            IM_WARN("block is corrupt; skipped, the rest is served", "block=%s err=%s",
                    im_logq(de->d_name), im_logq(e.msg));
            continue;
        }
        if (b->mint > tsdb__max_valid_t(db)) {
            IM_WARN("block starts further ahead of the clock than --storage.tsdb.max-future; "
                    "not loaded, left on disk (an older version accepted its samples; loaded, "
                    "they would refuse current writes): move it away or delete it",
                    "block=%s mint=%" PRId64 " now=%" PRId64 " max_future=%" PRId64 "ms",
                    im_logq(de->d_name), b->mint, tsdb__now_ms(db), db->opts.max_future_ms);
            tsdb__block_unref(b);
            continue;
        }
        blocks_add(db, b);
    }
    closedir(d);
    im_free(bd);
    return IM_OK;
}

/* ---- Open / close ---- */

static im_rc replay_rec(void *ctx, const uint8_t *rec, size_t len)
{
    tsdb_t *db = ctx;
    return tsdb__head_apply_record(db->head, rec, len);
}

static void *bg_main(void *arg);

im_rc tsdb_open(const tsdb_opts_t *opts, tsdb_t **out, im_err_t *err)
{
    tsdb_t *db = im_calloc(1, sizeof *db);
    db->storage.vt = &tsdb__storage_vt;
    db->opts = *opts;
    if (db->opts.retention_ms <= 0) db->opts.retention_ms = DEFAULT_RETENTION_MS;
    if (db->opts.block_range_ms <= 0) db->opts.block_range_ms = DEFAULT_BLOCK_MS;
    if (db->opts.fsync_interval_ms <= 0) db->opts.fsync_interval_ms = 1000;
    if (db->opts.wal_segment_bytes == 0) db->opts.wal_segment_bytes = DEFAULT_SEGMENT;
    if (db->opts.max_future_ms == 0) db->opts.max_future_ms = TSDB_DEFAULT_MAX_FUTURE_MS;
    db->opts.dir = NULL;
    db->lock_fd = -1;
    pthread_mutex_init(&db->commit_mu, NULL);
    pthread_mutex_init(&db->blocks_mu, NULL);
    pthread_mutex_init(&db->maint_mu, NULL);
    pthread_mutex_init(&db->bg_mu, NULL);
    pthread_cond_init(&db->bg_cv, NULL);
    if (db->opts.frame_cache_bytes == 0) db->opts.frame_cache_bytes = TSDB_DEFAULT_FRAME_CACHE;
    db->fcache = tsdb__frame_cache_new(
        db->opts.frame_cache_bytes < 0 ? 0 : (size_t)db->opts.frame_cache_bytes);
    db->head = tsdb__head_new(db->opts.block_range_ms);
    db->head->agent = db->opts.agent;
    db->head->replay_max_t = INT64_MAX;
    im_rc rc = tsdb_limits_resolve(&db->opts.limits, err);
    if (rc != IM_OK) goto fail;
    if (opts->dir) {
        db->dir = im_strdup(opts->dir);
        db->opts.dir = db->dir;
        if (mkdir(db->dir, 0755) != 0 && errno != EEXIST) {
            rc = im_err_set(err, IM_EIO, "cannot create storage directory %s: %s", db->dir,
                            strerror(errno));
            goto fail;
        }
        char p[4096];
        snprintf(p, sizeof p, "%s/lock", db->dir);
        int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
            if (fd >= 0) close(fd);
            rc = im_err_set(err, IM_EEXIST,
                            "storage directory %s is in use by another process (lock file %s)",
                            db->dir, p);
            goto fail;
        }
        db->lock_fd = fd;
        rc = load_blocks(db, err);
        if (rc != IM_OK) goto fail;
        /* The lower bound follows the blocks' newest sample, not their range's
         * end: a block's range may end after its data (a window persisted early
         * because an older version let a future sample in, up to a window
         * ahead of the clock). No sample between the two was ever accepted
         * (the bound was raised to the window's end before its snapshot), so
         * nothing persisted is re-added. */
        int64_t bmax = INT64_MIN;
        for (size_t i = 0; i < db->nblocks; i++)
            for (uint64_t k = 0; k < db->blocks[i]->nseries; k++)
                if (db->blocks[i]->series[k].maxt > bmax) bmax = db->blocks[i]->series[k].maxt;
        int64_t now = tsdb__now_ms(db);
        if (bmax != INT64_MIN) atomic_store(&db->head->min_valid_t, bmax + 1);
        tsdb__wal_replay_stats_t st;
        db->head->replay_max_t = tsdb__max_valid_t(db);
        rc = tsdb__wal_open_keep(db->dir, db->opts.wal_segment_bytes, db->opts.wal_keep,
                                 db->opts.wal_keep_ctx, replay_rec, db, &st, &db->wal, err);
        tsdb__head_replay_done(db->head);
        db->head->replay_max_t = INT64_MAX;
        if (rc != IM_OK) goto fail;
        /* Same for a lower bound a checkpoint recorded ahead of the clock: no
         * sample between the blocks' newest and it was ever accepted (the head
         * held none when it was raised), so lowering it re-adds nothing. */
        if (atomic_load(&db->head->min_valid_t) > now) {
            int64_t lo = bmax == INT64_MIN ? INT64_MIN : bmax + 1;
            IM_WARN("head lower bound was ahead of the clock (an older version accepted a sample "
                    "too far in the future); reset to just after the newest block",
                    "was=%" PRId64 " now=%" PRId64 " reset_to=%" PRId64,
                    atomic_load(&db->head->min_valid_t), now, lo);
            atomic_store(&db->head->min_valid_t, lo);
        }
        if (db->head->replay_future_dropped)
            IM_WARN("WAL samples further ahead of the clock than --storage.tsdb.max-future "
                    "dropped at replay (an older version accepted them; kept, they would refuse "
                    "current writes)",
                    "samples=%" PRIu64 " now=%" PRId64 " max_future=%" PRId64 "ms",
                    db->head->replay_future_dropped, tsdb__now_ms(db), db->opts.max_future_ms);
        atomic_store(&db->wal_corruptions, st.corruptions);
        IM_INFO("TSDB started", "dir=%s blocks=%zu head_series=%" PRIu64 " head_samples=%" PRIu64,
                im_logq(db->dir), db->nblocks, db->head->nseries, db->head->nsamples);
    }
    if (!db->opts.no_background) {
        if (pthread_create(&db->bg, NULL, bg_main, db) == 0) db->bg_started = true;
    }
    *out = db;
    return IM_OK;
fail:
    db->bg_started = false;
    tsdb_close(db);
    *out = NULL;
    return rc;
}

void tsdb_close(tsdb_t *db)
{
    if (!db) return;
    if (db->bg_started) {
        pthread_mutex_lock(&db->bg_mu);
        db->bg_stop = true;
        pthread_cond_signal(&db->bg_cv);
        pthread_mutex_unlock(&db->bg_mu);
        pthread_join(db->bg, NULL);
    }
    if (db->wal) tsdb__wal_close(db->wal);
    for (size_t i = 0; i < db->nblocks; i++) tsdb__block_unref(db->blocks[i]);
    im_free(db->blocks);
    tsdb__frame_cache_free(db->fcache); /* after the blocks: they drop their frames */
    tsdb__head_free(db->head);
    if (db->lock_fd >= 0) close(db->lock_fd);
    im_free(db->dir);
    pthread_mutex_destroy(&db->commit_mu);
    pthread_mutex_destroy(&db->blocks_mu);
    pthread_mutex_destroy(&db->maint_mu);
    pthread_mutex_destroy(&db->bg_mu);
    pthread_cond_destroy(&db->bg_cv);
    im_free(db);
}

/* ---- Sync ---- */

im_rc tsdb__sync_locked(tsdb_t *db, im_err_t *err)
{
    if (!db->wal) return IM_OK;
    int64_t t0 = im_mono_ns();
    im_rc rc = tsdb__wal_sync(db->wal, err);
    atomic_fetch_add(&db->wal_fsyncs, 1);
    atomic_fetch_add(&db->wal_fsync_ns, (uint64_t)(im_mono_ns() - t0));
    return rc;
}

/* Makes every commit made before the call durable; the fdatasync itself runs
 * without commit_mu, so commits go on meanwhile. */
static im_rc sync_unlocked(tsdb_t *db, im_err_t *err)
{
    if (!db->wal) return IM_OK;
    pthread_mutex_lock(&db->commit_mu);
    im_rc rc = tsdb__wal_failed(db->wal, err);
    int fd = rc == IM_OK ? tsdb__wal_sync_begin(db->wal) : -1;
    pthread_mutex_unlock(&db->commit_mu);
    if (fd < 0) return rc;
    int64_t t0 = im_mono_ns();
    rc = tsdb__io_fdatasync(fd);
    int e = errno;
    close(fd);
    atomic_fetch_add(&db->wal_fsyncs, 1);
    atomic_fetch_add(&db->wal_fsync_ns, (uint64_t)(im_mono_ns() - t0));
    if (rc != IM_OK) {
        /* Never retried: after a failed fsync the page cache may have dropped
         * the data while marking it clean, so a later fsync would "succeed". */
        char m[IM_ERR_MSG_MAX];
        snprintf(m, sizeof m, "WAL fsync failed: %s", strerror(e));
        tsdb__wal_fail(db->wal, m);
        return tsdb__wal_failed(db->wal, err);
    }
    return IM_OK;
}

im_rc tsdb_sync(tsdb_t *db, im_err_t *err)
{
    return sync_unlocked(db, err);
}

/* ---- Persisting the head ---- */

typedef struct snap {
    const im_labels_t *labels;
    tsdb__chunk_copy_t *chunks;
    size_t nchunks;
} snap_t;

static int cmp_snap(const void *a, const void *b)
{
    return im_labels_compare(((const snap_t *)a)->labels, ((const snap_t *)b)->labels);
}

typedef struct samples {
    int64_t *t;
    double *v;
    size_t n, cap;
} samples_t;

static void samples_push(samples_t *s, int64_t t, double v)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->t = im_realloc(s->t, s->cap * sizeof *s->t);
        s->v = im_realloc(s->v, s->cap * sizeof *s->v);
    }
    s->t[s->n] = t;
    s->v[s->n] = v;
    s->n++;
}

/* A block just written and fsynced that cannot be opened: the disk is failing
 * (IM_EIO, so the store enters the failed state). */
static im_rc reopen_error(im_rc rc, im_err_t *err)
{
    char m[IM_ERR_MSG_MAX];
    snprintf(m, sizeof m, "%s", err ? err->msg : im_rc_str(rc));
    return im_err_set(err, IM_EIO, "a block just written cannot be opened: %s", m);
}

/* Persists the head's samples in [w0, w1] into one level-1 block. The block's
 * range is only what it holds: it starts at the head's lower bound when an
 * earlier flush already persisted the window's start, and ends at the head's
 * newest sample when that is before w1 (a flush of a partial window), so the
 * head accepts samples right after the newest persisted one. */
static im_rc persist_window(tsdb_t *db, int64_t w0, int64_t w1, im_err_t *err)
{
    tsdb__head_t *h = db->head;
    pthread_mutex_lock(&db->commit_mu);
    pthread_rwlock_rdlock(&h->lock);
    int64_t newest = h->maxt;
    pthread_rwlock_unlock(&h->lock);
    if (newest != INT64_MIN && newest < w1) w1 = newest;
    int64_t lo = atomic_load(&h->min_valid_t);
    if (lo > w0 && lo <= w1) w0 = lo;
    if (lo < w1 + 1) atomic_store(&h->min_valid_t, w1 + 1);
    pthread_mutex_unlock(&db->commit_mu);
    snap_t *sn = NULL;
    size_t ns = 0, cap = 0;
    pthread_rwlock_rdlock(&h->lock);
    for (uint32_t id = 1; id < h->next_id && id < h->capids; id++) {
        tsdb__series_t *s = h->by_id[id];
        if (!s || s->nchunks == 0 || s->chunks[0].mint > w1) continue;
        if (ns == cap) {
            cap = cap ? cap * 2 : 1024;
            sn = im_realloc(sn, cap * sizeof *sn);
        }
        sn[ns].labels = im_labels_ref(s->labels);
        tsdb__head_copy_chunks(s, w0, w1, &sn[ns].chunks, &sn[ns].nchunks);
        ns++;
    }
    pthread_rwlock_unlock(&h->lock);
    if (ns > 1) qsort(sn, ns, sizeof *sn, cmp_snap);
    char *bd = blocks_dir(db);
    tsdb__bwriter_t *w = NULL;
    im_rc rc = tsdb__bwriter_new(bd, w0, w1, 1, ZLEVEL_PERSIST, &w, err);
    samples_t sm = {0};
    for (size_t i = 0; i < ns && rc == IM_OK; i++) {
        sm.n = 0;
        for (size_t c = 0; c < sn[i].nchunks; c++) {
            tsdb__xor_dec_t d;
            tsdb__xor_dec_init(&d, sn[i].chunks[c].b, sn[i].chunks[c].nbits, sn[i].chunks[c].n);
            int64_t t;
            double v;
            while (tsdb__xor_next(&d, &t, &v))
                if (t >= w0 && t <= w1) samples_push(&sm, t, v);
        }
        rc = tsdb__bwriter_add(w, sn[i].labels, sm.t, sm.v, sm.n, err);
    }
    im_free(sm.t);
    im_free(sm.v);
    for (size_t i = 0; i < ns; i++) {
        im_labels_unref(sn[i].labels);
        tsdb__chunk_copies_free(sn[i].chunks, sn[i].nchunks);
    }
    im_free(sn);
    char *path = NULL;
    if (rc == IM_OK)
        rc = tsdb__bwriter_finish(w, &path, err);
    else if (w)
        tsdb__bwriter_abort(w);
    im_free(bd);
    if (rc != IM_OK) return rc;
    if (path) {
        tsdb__block_t *b;
        rc = tsdb__block_open(path, &b, err);
        if (rc != IM_OK) {
            /* Just written and fsynced, yet unreadable: the disk is failing. */
            im_free(path);
            return reopen_error(rc, err);
        }
        IM_INFO("head persisted into a block",
                "block=%s series=%" PRIu64 " samples=%" PRIu64 " bytes=%" PRIu64, im_logq(b->name),
                b->nseries, b->nsamples, b->bytes);
        im_free(path);
        pthread_mutex_lock(&db->blocks_mu);
        blocks_add(db, b);
        pthread_mutex_unlock(&db->blocks_mu);
    }
    tsdb__head_truncate(h, w1 + 1);
    /* Checkpoint the WAL: everything up to the cut is in the head or in blocks. */
    if (db->wal) {
        im_buf_t ck;
        im_buf_init(&ck, 0);
        uint32_t last;
        pthread_mutex_lock(&db->commit_mu);
        rc = tsdb__wal_cut(db->wal, &last, err);
        if (rc == IM_OK) tsdb__head_checkpoint(h, &ck);
        pthread_mutex_unlock(&db->commit_mu);
        if (rc == IM_OK) rc = tsdb__wal_checkpoint(db->wal, last, &ck, err);
        im_buf_free(&ck);
    }
    return rc;
}

/* ---- Compaction ---- */

typedef struct cursor {
    tsdb__block_t *b;
    size_t i;
} cursor_t;

static im_rc compact(tsdb_t *db, tsdb__block_t **src, size_t n, int64_t w0, int64_t w1,
                     uint32_t level, im_err_t *err)
{
    char *bd = blocks_dir(db);
    tsdb__bwriter_t *w = NULL;
    /* The new block covers its sources' ranges, not the whole window. */
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (src[i]->mint < lo) lo = src[i]->mint;
        if (src[i]->maxt > hi) hi = src[i]->maxt;
    }
    if (n > 0 && lo >= w0 && hi <= w1) {
        w0 = lo;
        w1 = hi;
    }
    im_rc rc = tsdb__bwriter_new(bd, w0, w1, level, ZLEVEL_COMPACT, &w, err);
    im_free(bd);
    if (rc != IM_OK) return rc;
    cursor_t *cur = im_calloc(n, sizeof *cur);
    tsdb__fcache_t *fc = im_calloc(n, sizeof *fc);
    for (size_t i = 0; i < n; i++) cur[i].b = src[i];
    samples_t sm = {0};
    for (;;) {
        const im_labels_t *min = NULL;
        for (size_t i = 0; i < n; i++) {
            if (cur[i].i >= cur[i].b->nseries) continue;
            const im_labels_t *l = cur[i].b->series[cur[i].i].labels;
            if (!min || im_labels_compare(l, min) < 0) min = l;
        }
        if (!min) break;
        min = im_labels_ref(min);
        sm.n = 0;
        bool sorted = true;
        for (size_t i = 0; i < n; i++) {
            if (cur[i].i >= cur[i].b->nseries ||
                !im_labels_equal(cur[i].b->series[cur[i].i].labels, min))
                continue;
            int64_t *t;
            double *v;
            size_t k;
            if (!tsdb__block_read(cur[i].b, (uint32_t)cur[i].i, &fc[i], INT64_MIN, INT64_MAX, &t,
                                  &v, &k)) {
                /* Never write a compacted block without a series' samples. */
                rc = im_err_set(err, IM_ECORRUPT,
                                "cannot read series %zu of block %s; compaction stopped, the "
                                "source blocks are kept",
                                cur[i].i, cur[i].b->name);
                im_free(t);
                im_free(v);
                break;
            }
            for (size_t j = 0; j < k; j++) {
                if (sm.n && t[j] <= sm.t[sm.n - 1]) sorted = false;
                samples_push(&sm, t[j], v[j]);
            }
            im_free(t);
            im_free(v);
            cur[i].i++;
        }
        if (rc != IM_OK) {
            im_labels_unref(min);
            break;
        }
        if (!sorted) {
            /* Overlapping sources: insertion-merge, first occurrence of a t wins. */
            for (size_t a = 1; a < sm.n; a++) {
                int64_t tt = sm.t[a];
                double vv = sm.v[a];
                size_t b = a;
                while (b > 0 && sm.t[b - 1] > tt) {
                    sm.t[b] = sm.t[b - 1];
                    sm.v[b] = sm.v[b - 1];
                    b--;
                }
                sm.t[b] = tt;
                sm.v[b] = vv;
            }
            size_t wi = 0;
            for (size_t a = 0; a < sm.n; a++) {
                if (wi && sm.t[wi - 1] == sm.t[a]) continue;
                sm.t[wi] = sm.t[a];
                sm.v[wi] = sm.v[a];
                wi++;
            }
            sm.n = wi;
        }
        rc = tsdb__bwriter_add(w, min, sm.t, sm.v, sm.n, err);
        im_labels_unref(min);
        if (rc != IM_OK) break;
    }
    im_free(sm.t);
    im_free(sm.v);
    for (size_t i = 0; i < n; i++) tsdb__fcache_free(&fc[i]);
    im_free(fc);
    im_free(cur);
    char *path = NULL;
    if (rc == IM_OK)
        rc = tsdb__bwriter_finish(w, &path, err);
    else
        tsdb__bwriter_abort(w);
    if (rc != IM_OK) return rc;
    tsdb__block_t *nb = NULL;
    if (path) {
        rc = tsdb__block_open(path, &nb, err);
        im_free(path);
        if (rc != IM_OK) return reopen_error(rc, err);
    }
    pthread_mutex_lock(&db->blocks_mu);
    if (nb) blocks_add(db, nb);
    for (size_t i = 0; i < n; i++) blocks_remove(db, src[i]);
    pthread_mutex_unlock(&db->blocks_mu);
    atomic_fetch_add(&db->compactions, 1);
    if (nb)
        IM_INFO("blocks compacted", "sources=%zu block=%s samples=%" PRIu64 " bytes=%" PRIu64, n,
                im_logq(nb->name), nb->nsamples, nb->bytes);
    return IM_OK;
}

/* One compaction if any group is ready; returns true if it did one. */
static bool compact_once(tsdb_t *db, im_err_t *err, im_rc *rc)
{
    int64_t R = db->opts.block_range_ms;
    int64_t limit = atomic_load(&db->head->min_valid_t);
    int64_t maxrange = db->opts.retention_ms / 10;
    if (maxrange < 3 * R) maxrange = 3 * R;
    uint32_t level = 2;
    for (int64_t L = 3 * R; L <= maxrange && L > 0; L *= 3, level++) {
        pthread_mutex_lock(&db->blocks_mu);
        tsdb__block_t **src = NULL;
        size_t nsrc = 0;
        int64_t g0 = 0;
        for (size_t i = 0; i < db->nblocks && !src; i++) {
            int64_t g = floordiv(db->blocks[i]->mint, L);
            int64_t ws = g * L, we = ws + L - 1;
            if (we >= limit || db->blocks[i]->maxt > we) continue;
            size_t cnt = 0;
            for (size_t j = 0; j < db->nblocks; j++)
                if (db->blocks[j]->mint >= ws && db->blocks[j]->maxt <= we) cnt++;
            if (cnt < 2) continue;
            src = im_malloc(cnt * sizeof *src);
            for (size_t j = 0; j < db->nblocks; j++)
                if (db->blocks[j]->mint >= ws && db->blocks[j]->maxt <= we) {
                    tsdb__block_ref(db->blocks[j]);
                    src[nsrc++] = db->blocks[j];
                }
            g0 = ws;
        }
        pthread_mutex_unlock(&db->blocks_mu);
        if (src) {
            *rc = compact(db, src, nsrc, g0, g0 + L - 1, level, err);
            for (size_t i = 0; i < nsrc; i++) tsdb__block_unref(src[i]);
            im_free(src);
            return *rc == IM_OK;
        }
    }
    return false;
}

/* ---- Retention ---- */

static void retention(tsdb_t *db)
{
    pthread_rwlock_rdlock(&db->head->lock);
    int64_t newest = db->head->maxt;
    pthread_rwlock_unlock(&db->head->lock);
    pthread_mutex_lock(&db->blocks_mu);
    for (size_t i = 0; i < db->nblocks; i++)
        if (db->blocks[i]->maxt > newest) newest = db->blocks[i]->maxt;
    /* Counted back from the clock when the data reaches it (invariant 5): a
     * block ending in the future keeps its own data and costs no other. Older
     * data alone (a backfill) counts from its newest sample, as Prometheus. */
    int64_t now = tsdb__now_ms(db);
    if (newest > now) newest = now;
    for (size_t i = 0; i < db->nblocks;) {
        tsdb__block_t *b = db->blocks[i];
        if (newest != INT64_MIN && b->maxt < newest - db->opts.retention_ms) {
            IM_INFO("block deleted by time retention", "block=%s", im_logq(b->name));
            blocks_remove(db, b);
            continue;
        }
        i++;
    }
    if (db->opts.retention_bytes > 0) {
        for (;;) {
            uint64_t total = db->wal ? tsdb__wal_bytes(db->wal) : 0;
            for (size_t i = 0; i < db->nblocks; i++) total += db->blocks[i]->bytes;
            if (total <= (uint64_t)db->opts.retention_bytes || db->nblocks == 0) break;
            IM_INFO("block deleted by size retention", "block=%s", im_logq(db->blocks[0]->name));
            blocks_remove(db, db->blocks[0]);
        }
    }
    pthread_mutex_unlock(&db->blocks_mu);
}

/* Maintenance entry: refused once the store has failed; an I/O error during it
 * puts the store into the failed state (invariant 5). */
static im_rc maint_begin(tsdb_t *db, im_err_t *err)
{
    return db->wal ? tsdb__wal_failed(db->wal, err) : IM_OK;
}

static im_rc maint_end(tsdb_t *db, im_rc rc, im_err_t *e, im_err_t *err)
{
    if (rc == IM_EIO && db->wal) tsdb__wal_fail(db->wal, e->msg);
    if (rc != IM_OK && err) *err = *e;
    return rc;
}

/* Runs one maintenance step between maint_begin and maint_end. */
static im_rc maint_run(tsdb_t *db, im_rc (*step)(tsdb_t *, im_err_t *), im_err_t *err)
{
    im_rc rc = maint_begin(db, err);
    if (rc != IM_OK) return rc;
    im_err_t e;
    im_err_clear(&e);
    return maint_end(db, step(db, &e), &e, err);
}

static im_rc maintain(tsdb_t *db, im_err_t *err);

im_rc tsdb_maintain(tsdb_t *db, im_err_t *err)
{
    return maint_run(db, maintain, err);
}

/* Agent mode (no blocks): a new segment, a checkpoint of the series, and the
 * segments the queues have sent deleted with it (wal.c invariant 8 keeps the
 * others). Caller holds maint_mu. */
static im_rc agent_truncate(tsdb_t *db, im_err_t *err)
{
    if (!db->wal) return IM_OK;
    im_buf_t ck;
    im_buf_init(&ck, 0);
    uint32_t last;
    pthread_mutex_lock(&db->commit_mu);
    im_rc rc = tsdb__wal_cut(db->wal, &last, err);
    if (rc == IM_OK) tsdb__head_checkpoint(db->head, &ck);
    pthread_mutex_unlock(&db->commit_mu);
    if (rc == IM_OK) rc = tsdb__wal_checkpoint(db->wal, last, &ck, err);
    im_buf_free(&ck);
    return rc;
}

/* Persists the head's oldest block window after window: all of them (flush), or
 * as long as the head reaches 1.5 windows past it. Caller holds maint_mu. */
static im_rc persist_windows(tsdb_t *db, bool all, im_err_t *err)
{
    tsdb__head_t *h = db->head;
    int64_t R = db->opts.block_range_ms;
    for (;;) {
        pthread_rwlock_rdlock(&h->lock);
        int64_t mint = h->mint, maxt = h->maxt;
        pthread_rwlock_unlock(&h->lock);
        if (maxt == INT64_MIN) return IM_OK;
        int64_t w0 = floordiv(mint, R) * R;
        if (!all && persist_ref(db, maxt) < w0 + R + R / 2) return IM_OK;
        im_rc rc = persist_window(db, w0, w0 + R - 1, err);
        if (rc != IM_OK) return rc;
    }
}

static im_rc maintain(tsdb_t *db, im_err_t *err)
{
    pthread_mutex_lock(&db->maint_mu);
    im_rc rc = IM_OK;
    tsdb__head_t *h = db->head;
    if (!db->dir) {
        /* Memory only: keep the retention window in the head. */
        pthread_rwlock_rdlock(&h->lock);
        int64_t maxt = h->maxt, mint = h->mint;
        pthread_rwlock_unlock(&h->lock);
        int64_t now = tsdb__now_ms(db);
        if (maxt > now) maxt = now; /* invariant 5 */
        if (maxt != INT64_MIN && mint < maxt - db->opts.retention_ms) {
            int64_t cut = maxt - db->opts.retention_ms;
            pthread_mutex_lock(&db->commit_mu);
            if (atomic_load(&h->min_valid_t) < cut) atomic_store(&h->min_valid_t, cut);
            pthread_mutex_unlock(&db->commit_mu);
            tsdb__head_truncate(h, cut);
        }
        pthread_mutex_unlock(&db->maint_mu);
        return IM_OK;
    }
    if (db->opts.agent) {
        rc = agent_truncate(db, err);
        pthread_mutex_unlock(&db->maint_mu);
        return rc;
    }
    rc = persist_windows(db, false, err);
    while (rc == IM_OK && compact_once(db, err, &rc)) {
    }
    if (rc == IM_OK) retention(db);
    pthread_mutex_unlock(&db->maint_mu);
    return rc;
}

static im_rc flush_head(tsdb_t *db, im_err_t *err);

im_rc tsdb_flush_head(tsdb_t *db, im_err_t *err)
{
    if (!db->dir) return IM_OK;
    return maint_run(db, flush_head, err);
}

static im_rc flush_head(tsdb_t *db, im_err_t *err)
{
    pthread_mutex_lock(&db->maint_mu);
    im_rc rc = persist_windows(db, true, err);
    pthread_mutex_unlock(&db->maint_mu);
    return rc;
}

/* ---- Background thread ---- */

static void *bg_main(void *arg)
{
    tsdb_t *db = arg;
    int64_t last_maint = im_mono_ns();
    bool failed_logged = false; /* the failed state is logged once, by wal.c */
    pthread_mutex_lock(&db->bg_mu);
    while (!db->bg_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t ns = ts.tv_nsec + (db->opts.fsync_interval_ms % 1000) * 1000000LL;
        ts.tv_sec += db->opts.fsync_interval_ms / 1000 + ns / 1000000000LL;
        ts.tv_nsec = ns % 1000000000LL;
        pthread_cond_timedwait(&db->bg_cv, &db->bg_mu, &ts);
        if (db->bg_stop) break;
        pthread_mutex_unlock(&db->bg_mu);
        if (db->wal && !failed_logged && tsdb__wal_failed(db->wal, NULL) != IM_OK)
            failed_logged = true;
        if (db->wal && !failed_logged && db->opts.fsync == TSDB_FSYNC_TIMER) {
            im_err_t e;
            if (sync_unlocked(db, &e) != IM_OK) failed_logged = true;
        }
        int64_t every = db->opts.agent ? AGENT_TRUNCATE_MS : MAINT_INTERVAL_MS;
        if (!failed_logged && im_mono_ns() - last_maint > every * 1000000) {
            last_maint = im_mono_ns();
            im_err_t e;
            im_err_clear(&e);
            if (tsdb_maintain(db, &e) != IM_OK)
                IM_ERROR("TSDB maintenance failed", "err=%s", im_logq(e.msg));
        }
        pthread_mutex_lock(&db->bg_mu);
    }
    pthread_mutex_unlock(&db->bg_mu);
    return NULL;
}

/* ---- Stats ---- */

void tsdb_get_stats(tsdb_t *db, tsdb_stats_t *o)
{
    memset(o, 0, sizeof *o);
    tsdb__head_t *h = db->head;
    pthread_rwlock_rdlock(&h->lock);
    o->head_series = h->nseries;
    o->head_chunks = h->nchunks;
    o->head_samples = h->nsamples;
    o->head_bytes = h->chunk_bytes + h->nseries * sizeof(tsdb__series_t) +
                    h->nchunks * sizeof(tsdb__hchunk_t) + h->capmap * sizeof(void *) +
                    h->capids * sizeof(void *) + tsdb__index_bytes(&h->ix);
    o->head_mint_ms = h->mint;
    o->head_maxt_ms = h->maxt;
    pthread_rwlock_unlock(&h->lock);
    o->samples_appended = atomic_load(&db->samples_appended);
    o->out_of_order = atomic_load(&db->out_of_order);
    o->duplicates = atomic_load(&db->duplicates);
    o->out_of_bounds = atomic_load(&db->out_of_bounds);
    o->too_far_future = atomic_load(&db->too_far_future);
    o->over_limits = atomic_load(&db->over_limits);
    o->wal_fsyncs = atomic_load(&db->wal_fsyncs);
    o->wal_fsync_seconds_total = (double)atomic_load(&db->wal_fsync_ns) / 1e9;
    o->wal_corruptions = atomic_load(&db->wal_corruptions);
    o->blocks_corrupt = atomic_load(&db->blocks_corrupt);
    o->compactions = atomic_load(&db->compactions);
    tsdb__frame_cache_stats_t fs;
    tsdb__frame_cache_stats(db->fcache, &fs);
    o->frame_cache_hits = fs.hits;
    o->frame_cache_misses = fs.misses;
    o->frame_cache_evictions = fs.evictions;
    o->frame_cache_bytes = fs.bytes;
    o->frame_cache_limit_bytes = fs.limit;
    pthread_mutex_lock(&db->blocks_mu);
    o->blocks = db->nblocks;
    for (size_t i = 0; i < db->nblocks; i++) o->block_bytes += db->blocks[i]->bytes;
    pthread_mutex_unlock(&db->blocks_mu);
}
