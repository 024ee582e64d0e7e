/* wal.c — the write-ahead log: numbered segment files of CRC-checked records,
 * plus checkpoints that replace the segments once the head has been persisted.
 *
 * Directory DIR/wal/:
 *   00000001, 00000002, ...   segments, written in order, cut at wal_segment_bytes
 *   checkpoint.00000007       the head as of the end of segment 7 (replaces 1..7)
 *
 * File layout (segments and checkpoints alike):
 *   offset  size  field
 *   0       8     magic "IMWAL\0\0\2" (version 2; version 1 files, "IMWAL\0\0\1",
 *                 are read the same way: they just never hold fragments)
 *   8       ...   physical records, back to back:
 *                   0  4  len    payload length, u32 little endian (1 .. 64 MiB)
 *                   4  4  crc    CRC32C (Castagnoli) of the payload
 *                   8  len payload; payload[0] is the record type (tsdb_int.h)
 *
 * Logical records. A record the store logs (a COMMIT, a checkpoint record) of at
 * most wal_frag_bytes is one physical record. A longer one is split into pieces:
 * physical records of type FRAG_MORE (0x7e) then one FRAG_END (0x7f), each
 * payload = type byte + the next piece; the logical record is the concatenation
 * of the pieces (a lone FRAG_END is a one-piece record: how a record that itself
 * starts with byte 0x7e or 0x7f is framed). Version 2 added fragments (so a commit of any size is
 * stored); nothing else changed, so a version 1 WAL replays unchanged, while a version 1 binary
 * would not read a version 2 segment (bad magic).
 *
 * Invariants:
 *  1. A logical record never spans two files; its physical records are written
 *     by one writev (looped over short writes by io.c).
 *  2. A physical record is good iff its len is in range, it is complete and its
 *     crc matches; a logical record is good iff all its pieces are good and in
 *     order (MORE* END). Replay hands only good logical records to the caller,
 *     so a commit is replayed whole or not at all.
 *  3. Replay stops a file at its first bad record (a torn tail, a CRC mismatch,
 *     a fragment sequence cut short): the segment is truncated at the end of the
 *     last good logical record, later segments are deleted (their records may
 *     depend on lost ones), the cut is logged and counted. A read error or a
 *     file shorter than its size (IM_EIO, IM_ESHORT from io.c) is not
 *     corruption: the open fails with the error and nothing is cut or deleted.
 *     A repair that cannot be made durable (truncate, unlink, directory fsync)
 *     fails the open too, since later writes would land after a bad tail.
 *  4. A checkpoint is written as checkpoint.N.tmp, fsynced, renamed and the
 *     directory fsynced before any segment <= N is deleted; replay reads the
 *     newest checkpoint, then the segments > N.
 *  5. fsync: the owner (db.c) calls tsdb__wal_sync per its policy; close syncs.
 *  6. Segment numbers only grow: after a replay the next write opens segment
 *     (newest + 1), so a cut tail is never appended to.
 *  7. Failures are sticky: after any failed create, write, fsync, rename or
 *     directory fsync the WAL is failed (tsdb__wal_fail may also be called by
 *     the owner, for a failed block write or an fsync it ran itself) and every
 *     later log, sync, cut or checkpoint returns IM_EIO naming the first error,
 *     until the store is reopened. A partial write is never undone or retried:
 *     after a failed write or fsync the state of the file and of the page cache
 *     is unknown; the reopen's replay decides what is good (invariant 3).
 *  8. A segment a reader still needs (the keep hook: remote-write queues that
 *     have not sent it, storage/remote) is not deleted by a checkpoint or an
 *     open even when a checkpoint replaces it; replay still skips it. The
 *     hook's owner bounds what it keeps (--storage.remote.max-wal-retention).
 *
 * State of the writer:
 *
 *   open ──first log──▶ writing ──cut (fdatasync, new segment)──▶ writing
 *     │                   │ any I/O error (or tsdb__wal_fail)
 *     └───────────────────┴──────────────▶ failed ──close──▶ (reopen replays) */
#include "util/base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tsdb/io.h"
#include "tsdb/tsdb_int.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/timeutil.h"

#define WAL_MAGIC      "IMWAL\0\0\2"
#define WAL_MAGIC_V1   "IMWAL\0\0\1"
#define WAL_HDR        8
#define WAL_MAX_RECORD TSDB_FMT_MAX_WAL_RECORD /* physical record payload (tsdb/limits.h) */
#define WAL_FRAG_BYTES (8u << 20)              /* default physical payload of a fragment */

struct tsdb__wal {
    char *dir; /* owned: DIR/wal */
    size_t seg_bytes;
    int fd;
    uint32_t seg;   /* current segment number */
    uint64_t size;  /* bytes in the current segment */
    bool dirty;     /* written since the last sync */
    uint64_t total; /* bytes in all segments (approximate) */
    /* Segments a reader still needs (invariant 8): keep(keep_ctx) is the lowest
     * segment number to keep, 0 = none. Borrowed; set before the open. */
    uint32_t (*keep)(void *ctx);
    void *keep_ctx;
    /* Sticky failure (invariant 7): set once, read on every write. */
    _Atomic bool failed;
    pthread_mutex_t fail_mu; /* guards failmsg */
    char failmsg[IM_ERR_MSG_MAX];
};

static _Atomic size_t frag_bytes = WAL_FRAG_BYTES;

void tsdb__wal_set_frag_bytes(size_t n)
{
    if (n != 0 && n < 16) n = 16;
    if (n > WAL_MAX_RECORD) n = WAL_MAX_RECORD;
    atomic_store(&frag_bytes, n ? n : WAL_FRAG_BYTES);
}

static void seg_path(const tsdb__wal_t *w, uint32_t n, bool ckp, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s%08u", w->dir, ckp ? "checkpoint." : "", n);
}

/* ---- Sticky failure ---- */

void tsdb__wal_fail(tsdb__wal_t *w, const char *msg)
{
    pthread_mutex_lock(&w->fail_mu);
    if (!atomic_load(&w->failed)) {
        snprintf(w->failmsg, sizeof w->failmsg, "%s", msg);
        atomic_store(&w->failed, true);
        IM_ERROR("storage entered the failed state; commits are refused until restart", "err=%s",
                 im_logq(msg));
    }
    pthread_mutex_unlock(&w->fail_mu);
}

im_rc tsdb__wal_failed(tsdb__wal_t *w, im_err_t *err)
{
    if (!atomic_load_explicit(&w->failed, memory_order_acquire)) return IM_OK;
    pthread_mutex_lock(&w->fail_mu);
    im_rc rc = im_err_set(err, IM_EIO,
                          "storage is in a failed state after an I/O error (%s); commits are "
                          "refused until infermon is restarted (check the disk and free space)",
                          w->failmsg);
    pthread_mutex_unlock(&w->fail_mu);
    return rc;
}

/* Enters the failed state with a message (printf-style) and returns IM_EIO. */
static im_rc IM_PRINTF(3, 4) fail(tsdb__wal_t *w, im_err_t *err, const char *fmt, ...)
{
    char m[IM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    tsdb__wal_fail(w, m);
    return im_err_set(err, IM_EIO, "%s", m);
}

/* ---- Framing and scanning ---- */

/* Calls out(ctx, hdr, type, piece, n) for each physical record of rec[0..len):
 * one (type NUL, the record itself) if it fits a fragment, else the pieces. */
typedef void (*frame_fn)(void *ctx, const uint8_t hdr[8], const uint8_t *type, const uint8_t *p,
                         size_t n);

/* A record that itself starts with a fragment type byte is always framed as
 * fragments (then as one FRAG_END if short), so that it reads back as itself. */
static bool whole(const uint8_t *rec, size_t len, size_t fb)
{
    return len <= fb && rec[0] != TSDB__REC_FRAG_MORE && rec[0] != TSDB__REC_FRAG_END;
}

static size_t frame_count(const uint8_t *rec, size_t len)
{
    size_t fb = atomic_load(&frag_bytes);
    return whole(rec, len, fb) ? 1 : (len + fb - 2) / (fb - 1);
}

static void frame_each(const uint8_t *rec, size_t len, uint8_t (*hdrs)[8], uint8_t *types,
                       frame_fn out, void *ctx)
{
    size_t fb = atomic_load(&frag_bytes);
    if (whole(rec, len, fb)) {
        tsdb__put_u32(hdrs[0], (uint32_t)len);
        tsdb__put_u32(hdrs[0] + 4, im_crc32c(0, rec, len));
        out(ctx, hdrs[0], NULL, rec, len);
        return;
    }
    size_t piece = fb - 1, nf = frame_count(rec, len);
    for (size_t i = 0; i < nf; i++) {
        size_t off = i * piece, n = len - off < piece ? len - off : piece;
        types[i] = i + 1 < nf ? TSDB__REC_FRAG_MORE : TSDB__REC_FRAG_END;
        tsdb__put_u32(hdrs[i], (uint32_t)(n + 1));
        tsdb__put_u32(hdrs[i] + 4, im_crc32c(im_crc32c(0, &types[i], 1), rec + off, n));
        out(ctx, hdrs[i], &types[i], rec + off, n);
    }
}

static void frame_to_buf(void *ctx, const uint8_t hdr[8], const uint8_t *type, const uint8_t *p,
                         size_t n)
{
    im_buf_t *b = ctx;
    (void)im_buf_append(b, hdr, 8);
    if (type) (void)im_buf_append(b, type, 1);
    (void)im_buf_append(b, p, n);
}

void tsdb__wal_frame(im_buf_t *out, const uint8_t *rec, size_t len)
{
    if (len == 0) return;
    size_t nf = frame_count(rec, len);
    uint8_t(*hdrs)[8] = im_malloc(nf * 8);
    uint8_t *types = im_malloc(nf);
    frame_each(rec, len, hdrs, types, frame_to_buf, out);
    im_free(types);
    im_free(hdrs);
}

typedef struct scan_adapt {
    tsdb__wal_rec_fn fn;
    void *ctx;
} scan_adapt_t;

static im_rc scan_adapt(void *ctx, const uint8_t *rec, size_t len, size_t end)
{
    (void)end;
    scan_adapt_t *a = ctx;
    return a->fn ? a->fn(a->ctx, rec, len) : IM_OK;
}

size_t tsdb__wal_scan(const uint8_t *p, size_t len, tsdb__wal_rec_fn fn, void *ctx)
{
    scan_adapt_t a = {fn, ctx};
    return tsdb__wal_scan_ex(p, len, scan_adapt, &a);
}

size_t tsdb__wal_scan_ex(const uint8_t *p, size_t len, tsdb__wal_rec_end_fn fn, void *ctx)
{
    size_t off = 0, good = 0;
    bool pending = false; /* pieces of a logical record gathered in asm */
    im_buf_t asm_;
    im_buf_init(&asm_, 0);
    while (off < len) {
        if (len - off < 8) break;
        uint32_t rl = tsdb__get_u32(p + off), crc = tsdb__get_u32(p + off + 4);
        if (rl == 0 || rl > WAL_MAX_RECORD || rl > len - off - 8) break;
        const uint8_t *pl = p + off + 8;
        if (im_crc32c(0, pl, rl) != crc) break;
        if (pl[0] == TSDB__REC_FRAG_MORE || pl[0] == TSDB__REC_FRAG_END) {
            (void)im_buf_append(&asm_, pl + 1, rl - 1);
            off += 8 + rl;
            pending = true;
            if (pl[0] == TSDB__REC_FRAG_MORE) continue;
            pending = false;
            if (asm_.len == 0 ||
                (fn && fn(ctx, (const uint8_t *)asm_.data, asm_.len, off) != IM_OK))
                break;
            im_buf_reset(&asm_);
            good = off;
            continue;
        }
        if (pending) break; /* a whole record inside a fragmented one */
        if (fn && fn(ctx, pl, rl, off + 8 + rl) != IM_OK) break;
        off += 8 + rl;
        good = off;
    }
    im_buf_free(&asm_);
    return good;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

bool tsdb__wal_parse_num(const char *s, uint32_t *out)
{
    if (strlen(s) != 8) return false;
    uint32_t v = 0;
    for (int i = 0; i < 8; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (uint32_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

static bool good_magic(const uint8_t *data, size_t len)
{
    return len >= WAL_HDR &&
           (memcmp(data, WAL_MAGIC, WAL_HDR) == 0 || memcmp(data, WAL_MAGIC_V1, WAL_HDR) == 0);
}

/* The error of a failed tsdb__io_read_file of a WAL file, as the open's error. */
static im_rc read_error(im_rc rc, const char *what, const char *path, im_err_t *err)
{
    if (rc == IM_ESHORT)
        return im_err_set(err, IM_EIO,
                          "cannot read WAL %s %s: short read (the file ended before its size); "
                          "the store was not opened and nothing was cut",
                          what, path);
    return im_err_set(err, IM_EIO,
                      "cannot read WAL %s %s: %s; the store was not opened and nothing was cut "
                      "(check the disk, or move the file away to start without it)",
                      what, path, strerror(errno));
}

/* Reads a whole WAL file and replays its records through fn: *good is the
 * length of its good part (0 without a good header), *len its size. A read
 * failure is the open's error. */
static im_rc read_scan(const char *what, const char *path, tsdb__wal_rec_fn fn, void *ctx,
                       size_t *good, size_t *len, im_err_t *err)
{
    uint8_t *data;
    im_rc rc = tsdb__io_read_file(path, &data, len);
    if (rc != IM_OK) return read_error(rc, what, path, err);
    *good = good_magic(data, *len)
                ? WAL_HDR + tsdb__wal_scan(data + WAL_HDR, *len - WAL_HDR, fn, ctx)
                : 0;
    im_free(data);
    return IM_OK;
}

/* ---- Writing ---- */

static im_rc open_segment(tsdb__wal_t *w, uint32_t n, im_err_t *err)
{
    char p[4096];
    seg_path(w, n, false, p, sizeof p);
    int fd = tsdb__io_open_w(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return fail(w, err, "cannot create WAL segment %s: %s", p, strerror(errno));
    if (tsdb__io_write_all(fd, WAL_MAGIC, WAL_HDR, NULL) != IM_OK) {
        im_rc rc = fail(w, err, "cannot write WAL segment %s: %s", p, strerror(errno));
        close(fd);
        return rc;
    }
    if (tsdb__io_fsync_dir(w->dir) != IM_OK) {
        im_rc rc = fail(w, err, "cannot fsync WAL directory %s: %s", w->dir, strerror(errno));
        close(fd);
        return rc;
    }
    w->fd = fd;
    w->seg = n;
    w->size = WAL_HDR;
    w->total += WAL_HDR;
    w->dirty = true;
    return IM_OK;
}

/* ---- Open and replay ---- */

static void wal_free(tsdb__wal_t *w)
{
    pthread_mutex_destroy(&w->fail_mu);
    im_free(w->dir);
    im_free(w);
}

im_rc tsdb__wal_open(const char *dir, size_t seg_bytes, tsdb__wal_rec_fn fn, void *ctx,
                     tsdb__wal_replay_stats_t *st, tsdb__wal_t **out, im_err_t *err)
{
    return tsdb__wal_open_keep(dir, seg_bytes, NULL, NULL, fn, ctx, st, out, err);
}

/* True when segment n must stay although a checkpoint replaces it. */
static bool kept(const tsdb__wal_t *w, uint32_t n)
{
    uint32_t k = w->keep ? w->keep(w->keep_ctx) : 0;
    return k != 0 && n >= k;
}

im_rc tsdb__wal_open_keep(const char *dir, size_t seg_bytes, uint32_t (*keep)(void *),
                          void *keep_ctx, tsdb__wal_rec_fn fn, void *ctx,
                          tsdb__wal_replay_stats_t *st, tsdb__wal_t **out, im_err_t *err)
{
    memset(st, 0, sizeof *st);
    *out = NULL;
    tsdb__wal_t *w = im_calloc(1, sizeof *w);
    pthread_mutex_init(&w->fail_mu, NULL);
    size_t dl = strlen(dir) + 8;
    w->dir = im_malloc(dl);
    snprintf(w->dir, dl, "%s/wal", dir);
    w->seg_bytes = seg_bytes;
    w->fd = -1;
    w->keep = keep;
    w->keep_ctx = keep_ctx;
    if (mkdir(w->dir, 0755) != 0 && errno != EEXIST) {
        im_rc rc = im_err_set(err, IM_EIO, "cannot create %s: %s", w->dir, strerror(errno));
        wal_free(w);
        return rc;
    }
    DIR *d = opendir(w->dir);
    if (!d) {
        im_rc rc = im_err_set(err, IM_EIO, "cannot read %s: %s", w->dir, strerror(errno));
        wal_free(w);
        return rc;
    }
    uint32_t *segs = NULL, nsegs = 0, capsegs = 0, ckp = 0;
    bool have_ckp = false;
    struct dirent *de;
    char p[4096];
    im_rc rc = IM_OK;
    while ((de = readdir(d))) {
        uint32_t n;
        size_t nl = strlen(de->d_name);
        if (nl > 4 && strcmp(de->d_name + nl - 4, ".tmp") == 0) {
            snprintf(p, sizeof p, "%s/%s", w->dir, de->d_name);
            (void)tsdb__io_unlink(p); /* a leftover: harmless if it stays */
        } else if (strncmp(de->d_name, "checkpoint.", 11) == 0 &&
                   tsdb__wal_parse_num(de->d_name + 11, &n)) {
            if (!have_ckp || n > ckp) ckp = n;
            have_ckp = true;
        } else if (tsdb__wal_parse_num(de->d_name, &n)) {
            if (nsegs == capsegs) {
                capsegs = capsegs ? capsegs * 2 : 16;
                segs = im_realloc(segs, capsegs * sizeof *segs);
            }
            segs[nsegs++] = n;
        }
    }
    closedir(d);
    if (nsegs) qsort(segs, nsegs, sizeof *segs, cmp_u32);
    int64_t t0 = im_mono_ns();
    if (have_ckp) {
        seg_path(w, ckp, true, p, sizeof p);
        size_t good, len;
        if ((rc = read_scan("checkpoint", p, fn, ctx, &good, &len, err)) != IM_OK) goto fail;
        if (!good) good = WAL_HDR; /* no good header: all of it is bad */
        if (good != len) {
            st->corruptions++;
            IM_WARN("WAL checkpoint is corrupt; using its good part", "file=%s offset=%zu size=%zu",
                    im_logq(p), good, len);
        }
        st->bytes += len;
        /* Delete older checkpoints (best effort: the newest one wins anyway). */
        d = opendir(w->dir);
        while (d && (de = readdir(d))) {
            uint32_t n;
            if (strncmp(de->d_name, "checkpoint.", 11) == 0 &&
                tsdb__wal_parse_num(de->d_name + 11, &n) && n < ckp) {
                snprintf(p, sizeof p, "%s/%s", w->dir, de->d_name);
                (void)tsdb__io_unlink(p);
            }
        }
        if (d) closedir(d);
    }
    uint32_t last = have_ckp ? ckp : 0;
    bool cut = false, repaired = false;
    for (uint32_t i = 0; i < nsegs; i++) {
        seg_path(w, segs[i], false, p, sizeof p);
        if (have_ckp && segs[i] <= ckp) {
            /* replaced by the checkpoint; replay skips it anyway */
            if (!kept(w, segs[i])) (void)tsdb__io_unlink(p);
            continue;
        }
        if (segs[i] > last) last = segs[i];
        if (cut) {
            if (tsdb__io_unlink(p) != IM_OK) {
                rc = im_err_set(err, IM_EIO,
                                "cannot delete WAL segment %s after a corrupt one: %s; the "
                                "store was not opened",
                                p, strerror(errno));
                goto fail;
            }
            repaired = true;
            IM_WARN("WAL segment deleted after a corrupt one", "file=%s", im_logq(p));
            continue;
        }
        size_t good, len;
        if ((rc = read_scan("segment", p, fn, ctx, &good, &len, err)) != IM_OK) goto fail;
        st->segments++;
        st->bytes += len;
        if (good != len) {
            st->corruptions++;
            cut = true;
            repaired = true;
            IM_WARN("WAL segment has a torn or corrupt tail; cut at the last good record",
                    "file=%s offset=%zu size=%zu", im_logq(p), good, len);
            im_rc r2 = good < WAL_HDR ? tsdb__io_unlink(p) : tsdb__io_truncate(p, good);
            if (r2 != IM_OK) {
                rc = im_err_set(err, IM_EIO,
                                "cannot cut the corrupt tail of WAL segment %s at offset %zu: "
                                "%s; the store was not opened",
                                p, good, strerror(errno));
                goto fail;
            }
            if (good < WAL_HDR) continue;
        }
        if (len == WAL_HDR && good == len) {
            /* empty: nothing to keep (numbering continues after it) */
            (void)tsdb__io_unlink(p);
            continue;
        }
        w->total += good;
        IM_INFO("WAL segment loaded", "segment=%u maxSegment=%u", segs[i], segs[nsegs - 1]);
    }
    if (repaired && tsdb__io_fsync_dir(w->dir) != IM_OK) {
        rc = im_err_set(err, IM_EIO,
                        "cannot fsync WAL directory %s after cutting a corrupt tail: %s; the "
                        "store was not opened",
                        w->dir, strerror(errno));
        goto fail;
    }
    im_free(segs);
    if (st->segments || have_ckp)
        IM_INFO("WAL replay completed", "segments=%" PRIu64 " bytes=%" PRIu64 " duration=%.3fs",
                st->segments, st->bytes, (double)(im_mono_ns() - t0) / 1e9);
    /* The next segment is created by the first write (a read-only open writes
     * nothing and fsyncs nothing). */
    w->seg = last;
    *out = w;
    return IM_OK;
fail:
    im_free(segs);
    wal_free(w);
    return rc;
}

void tsdb__wal_close(tsdb__wal_t *w)
{
    if (!w) return;
    if (w->fd >= 0) {
        if (!atomic_load(&w->failed) && tsdb__io_fdatasync(w->fd) != IM_OK)
            IM_ERROR("WAL fsync at close failed; the newest commits may not be durable",
                     "dir=%s err=%s", im_logq(w->dir), im_logq(strerror(errno)));
        close(w->fd);
    }
    wal_free(w);
}

im_rc tsdb__wal_cut(tsdb__wal_t *w, uint32_t *last, im_err_t *err)
{
    im_rc rc = tsdb__wal_failed(w, err);
    if (rc != IM_OK) return rc;
    if (w->fd >= 0) {
        if (tsdb__io_fdatasync(w->fd) != IM_OK)
            return fail(w, err, "WAL fsync of segment %08u failed: %s", w->seg, strerror(errno));
        close(w->fd);
        w->fd = -1;
    }
    *last = w->seg;
    return open_segment(w, w->seg + 1, err);
}

typedef struct iov_ctx {
    struct iovec *iov;
    int n;
} iov_ctx_t;

static void frame_to_iov(void *ctx, const uint8_t hdr[8], const uint8_t *type, const uint8_t *p,
                         size_t n)
{
    iov_ctx_t *c = ctx;
    c->iov[c->n++] = (struct iovec){(void *)hdr, 8};
    if (type) c->iov[c->n++] = (struct iovec){(void *)type, 1};
    c->iov[c->n++] = (struct iovec){(void *)p, n};
}

im_rc tsdb__wal_log(tsdb__wal_t *w, const uint8_t *rec, size_t len, im_err_t *err)
{
    im_rc rc = tsdb__wal_failed(w, err);
    if (rc != IM_OK) return rc;
    if (len == 0) return im_err_set(err, IM_EINVAL, "empty WAL record");
    size_t nf = frame_count(rec, len);
    size_t want = len + nf * 8 + (whole(rec, len, atomic_load(&frag_bytes)) ? 0 : nf);
    if (w->fd < 0 || (w->size + want > w->seg_bytes && w->size > WAL_HDR)) {
        uint32_t last;
        rc = tsdb__wal_cut(w, &last, err);
        if (rc != IM_OK) return rc;
    }
    uint8_t one_hdr[1][8], one_type[1];
    uint8_t(*hdrs)[8] = nf == 1 ? one_hdr : im_malloc(nf * 8);
    uint8_t *types = nf == 1 ? one_type : im_malloc(nf);
    struct iovec one_iov[3];
    iov_ctx_t c = {nf == 1 ? one_iov : im_malloc(nf * 3 * sizeof(struct iovec)), 0};
    frame_each(rec, len, hdrs, types, frame_to_iov, &c);
    size_t done = 0;
    rc = tsdb__io_writev_all(w->fd, c.iov, c.n, &done);
    int e = errno;
    if (nf > 1) {
        im_free(c.iov);
        im_free(types);
        im_free(hdrs);
    }
    if (rc != IM_OK) {
        /* Never undone or retried (invariant 7): the reopen cuts the torn tail. */
        w->size += done;
        w->total += done;
        return fail(w, err, "WAL write to segment %08u failed after %zu of %zu bytes: %s", w->seg,
                    done, want, strerror(e));
    }
    w->size += want;
    w->total += want;
    w->dirty = true;
    return IM_OK;
}

im_rc tsdb__wal_sync(tsdb__wal_t *w, im_err_t *err)
{
    im_rc rc = tsdb__wal_failed(w, err);
    if (rc != IM_OK) return rc;
    if (w->fd >= 0 && tsdb__io_fdatasync(w->fd) != IM_OK)
        return fail(w, err, "WAL fsync of segment %08u failed: %s", w->seg, strerror(errno));
    w->dirty = false;
    return IM_OK;
}

int tsdb__wal_sync_begin(tsdb__wal_t *w)
{
    if (atomic_load(&w->failed) || !w->dirty || w->fd < 0) return -1;
    int fd = dup(w->fd);
    if (fd >= 0) w->dirty = false;
    return fd;
}

uint64_t tsdb__wal_bytes(tsdb__wal_t *w)
{
    return w->total;
}

im_rc tsdb__wal_checkpoint(tsdb__wal_t *w, uint32_t upto, const im_buf_t *records, im_err_t *err)
{
    im_rc rc = tsdb__wal_failed(w, err);
    if (rc != IM_OK) return rc;
    char p[4096], tmp[4200];
    seg_path(w, upto, true, p, sizeof p);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    int fd = tsdb__io_open_w(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return fail(w, err, "cannot create WAL checkpoint %s: %s", tmp, strerror(errno));
    const char *what = "write";
    rc = tsdb__io_write_all(fd, WAL_MAGIC, WAL_HDR, NULL);
    if (rc == IM_OK) rc = tsdb__io_write_all(fd, records->data, records->len, NULL);
    if (rc == IM_OK) {
        what = "fsync";
        rc = tsdb__io_fsync(fd);
    }
    if (rc == IM_OK) {
        what = "rename";
        rc = tsdb__io_rename(tmp, p);
    }
    int e = errno;
    close(fd);
    if (rc != IM_OK) {
        (void)tsdb__io_unlink(tmp);
        return fail(w, err, "cannot %s WAL checkpoint %s: %s", what, tmp, strerror(e));
    }
    if (tsdb__io_fsync_dir(w->dir) != IM_OK)
        return fail(w, err, "cannot fsync WAL directory %s after writing checkpoint %s: %s", w->dir,
                    p, strerror(errno));
    /* Now the segments it replaces and older checkpoints can go (a file left
     * behind is deleted by the next open: replay skips it). */
    DIR *d = opendir(w->dir);
    struct dirent *de;
    uint64_t total = 0;
    while (d && (de = readdir(d))) {
        uint32_t n;
        char fp[4400];
        snprintf(fp, sizeof fp, "%s/%s", w->dir, de->d_name);
        if ((tsdb__wal_parse_num(de->d_name, &n) && n <= upto && !kept(w, n)) ||
            (strncmp(de->d_name, "checkpoint.", 11) == 0 &&
             tsdb__wal_parse_num(de->d_name + 11, &n) && n < upto)) {
            if (tsdb__io_unlink(fp) != IM_OK)
                IM_WARN("cannot delete a WAL file replaced by a checkpoint", "file=%s err=%s",
                        im_logq(fp), im_logq(strerror(errno)));
        } else {
            struct stat st;
            if (stat(fp, &st) == 0 && S_ISREG(st.st_mode)) total += (uint64_t)st.st_size;
        }
    }
    if (d) closedir(d);
    w->total = total;
    return IM_OK;
}

void tsdb__wal_drop_before(tsdb__wal_t *w, uint32_t before)
{
    DIR *d = opendir(w->dir);
    struct dirent *de;
    bool any = false;
    while (d && (de = readdir(d))) {
        uint32_t n;
        if (!tsdb__wal_parse_num(de->d_name, &n) || n >= before || n >= w->seg) continue;
        char fp[4400];
        snprintf(fp, sizeof fp, "%s/%s", w->dir, de->d_name);
        struct stat st;
        uint64_t sz = stat(fp, &st) == 0 ? (uint64_t)st.st_size : 0;
        if (tsdb__io_unlink(fp) == IM_OK) {
            w->total = w->total > sz ? w->total - sz : 0;
            any = true;
        }
    }
    if (d) closedir(d);
    if (any) (void)tsdb__io_fsync_dir(w->dir);
}

uint32_t tsdb__wal_segment(const tsdb__wal_t *w)
{
    return w->seg;
}
