/* wal_watch.c — a read-only tail of the WAL for remote write (tsdb.h, "WAL
 * watcher"): the newest checkpoint's series, then the segments in order, the live
 * one included, decoding COMMIT records into series definitions and samples.
 *
 * Invariants:
 *  1. Only good logical records are handed out (tsdb__wal_scan_ex, wal.c
 *     invariant 2); a record at the live segment's tail that is not complete yet
 *     is read again on the next poll from the same offset.
 *  2. A segment is left only when a newer one exists (the writer creates
 *     segment n+1 after it finished n, wal.c), so a segment is read to its end.
 *     Bytes left unparsable at the end of a finished segment are a corrupt tail
 *     (the store cuts it at its next open): warned, skipped.
 *  3. The position only moves forward, record by record; a callback that stops
 *     the poll leaves it before the record it refused. */
#include "util/base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tsdb/io.h"
#include "tsdb/tsdb_int.h"
#include "util/log.h"

#define WW_HDR       8
#define WW_READ_INIT (1u << 20)
#define WW_READ_MAX  ((size_t)TSDB_FMT_MAX_WAL_RECORD * 2 + 64)

struct tsdb_wal_watcher {
    char *dir; /* owned: DIR/wal */
    const tsdb_wal_watch_cb_t *cb;
    void *ctx;
    tsdb_wal_pos_t start; /* records ending at or before it give series only */
    bool to_end;          /* start = the end: set once the first poll reached it */
    uint32_t seg;         /* segment being read */
    uint64_t off;         /* offset in it just after the last record read */
    int fd;               /* -1 = not open */
    uint8_t *buf;         /* owned read buffer */
    size_t cap;
    tsdb_wal_sample_t *smp; /* owned decode buffer */
    size_t capsmp;
    bool stopped; /* a callback refused a record in this poll */
    size_t nrec;
};

/* The lowest segment >= from (0: none), and the newest checkpoint (0: none). */
static uint32_t scan_dir(const char *dir, uint32_t from, uint32_t *ckp, uint32_t *newest)
{
    DIR *d = opendir(dir);
    uint32_t best = 0;
    if (ckp) *ckp = 0;
    if (newest) *newest = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        uint32_t n;
        if (strncmp(de->d_name, "checkpoint.", 11) == 0 &&
            tsdb__wal_parse_num(de->d_name + 11, &n)) {
            if (ckp && n > *ckp) *ckp = n;
        } else if (tsdb__wal_parse_num(de->d_name, &n)) {
            if (newest && n > *newest) *newest = n;
            if (n >= from && (best == 0 || n < best)) best = n;
        }
    }
    if (d) closedir(d);
    return best;
}

/* ---- Decoding ---- */

static bool before_start(const tsdb_wal_watcher_t *w, uint64_t end)
{
    if (w->to_end) return true;
    tsdb_wal_pos_t p = {w->seg, end};
    return tsdb_wal_pos_cmp(p, w->start) <= 0;
}

static im_rc series_defs(tsdb_wal_watcher_t *w, const uint8_t **p, const uint8_t *end,
                         uint64_t nser)
{
    for (uint64_t i = 0; i < nser; i++) {
        uint64_t id;
        const im_labels_t *ls;
        if (!tsdb__get_uvarint(p, end, &id) || id == 0 || id >= UINT32_MAX) return IM_ECORRUPT;
        int gl = tsdb__wal_get_labels(p, end, &ls);
        if (gl == 0) return IM_ECORRUPT;
        if (gl < 0) continue;
        w->cb->series(w->ctx, (uint32_t)id, ls);
        im_labels_unref(ls);
    }
    return IM_OK;
}

static im_rc on_record(void *ctx, const uint8_t *rec, size_t len, size_t end_in_buf)
{
    tsdb_wal_watcher_t *w = ctx;
    const uint8_t *p = rec + 1, *end = rec + len;
    uint64_t rec_end = w->off + end_in_buf;
    if (rec[0] != TSDB__REC_COMMIT) return IM_OK; /* checkpoint records are read at open */
    uint64_t nser, nsm;
    int64_t base;
    if (!tsdb__get_uvarint(&p, end, &nser)) return IM_ECORRUPT;
    im_rc rc = series_defs(w, &p, end, nser);
    if (rc != IM_OK) return rc;
    if (!tsdb__get_uvarint(&p, end, &nsm) || !tsdb__get_varint(&p, end, &base)) return IM_ECORRUPT;
    if (before_start(w, rec_end)) {
        w->nrec++;
        return IM_OK;
    }
    if (nsm > (uint64_t)(end - p) / 10 + 1) return IM_ECORRUPT; /* >= 10 bytes a sample */
    if (nsm > w->capsmp) {
        w->capsmp = nsm;
        w->smp = im_realloc(w->smp, nsm * sizeof *w->smp);
    }
    for (uint64_t i = 0; i < nsm; i++) {
        uint64_t id;
        int64_t dt;
        if (!tsdb__get_uvarint(&p, end, &id) || !tsdb__get_varint(&p, end, &dt) || end - p < 8 ||
            id >= UINT32_MAX)
            return IM_ECORRUPT;
        uint64_t vb = tsdb__get_u64(p);
        p += 8;
        w->smp[i].id = (uint32_t)id;
        w->smp[i].t_ms = (int64_t)((uint64_t)base + (uint64_t)dt);
        memcpy(&w->smp[i].v, &vb, sizeof vb);
    }
    if (!w->cb->samples(w->ctx, w->smp, (size_t)nsm, (tsdb_wal_pos_t){w->seg, rec_end})) {
        w->stopped = true;
        return IM_ECANCELED;
    }
    w->nrec++;
    return IM_OK;
}

static im_rc on_ckp_record(void *ctx, const uint8_t *rec, size_t len)
{
    tsdb_wal_watcher_t *w = ctx;
    const uint8_t *p = rec + 1, *end = rec + len;
    if (rec[0] != TSDB__REC_CKP_SERIES) return IM_OK;
    return series_defs(w, &p, end, 1);
}

/* ---- Open / poll ---- */

/* The series of the newest checkpoint (the definitions of deleted segments). */
static im_rc read_checkpoint(tsdb_wal_watcher_t *w, im_err_t *err)
{
    uint32_t ckp;
    (void)scan_dir(w->dir, 1, &ckp, NULL);
    if (!ckp) return IM_OK;
    char p[4200];
    snprintf(p, sizeof p, "%s/checkpoint.%08u", w->dir, ckp);
    uint8_t *data;
    size_t len;
    im_rc rc = tsdb__io_read_file(p, &data, &len);
    if (rc != IM_OK)
        return errno == ENOENT ? IM_OK /* replaced meanwhile */
                               : im_err_set(err, IM_EIO, "cannot read WAL checkpoint %s: %s", p,
                                            strerror(errno));
    if (len >= WW_HDR) (void)tsdb__wal_scan(data + WW_HDR, len - WW_HDR, on_ckp_record, w);
    im_free(data);
    return IM_OK;
}

im_rc tsdb_wal_watcher_open(const char *dir, const tsdb_wal_pos_t *start,
                            const tsdb_wal_watch_cb_t *cb, void *ctx, tsdb_wal_watcher_t **out,
                            im_err_t *err)
{
    *out = NULL;
    tsdb_wal_watcher_t *w = im_calloc(1, sizeof *w);
    size_t dl = strlen(dir) + 8;
    w->dir = im_malloc(dl);
    snprintf(w->dir, dl, "%s/wal", dir);
    w->cb = cb;
    w->ctx = ctx;
    w->fd = -1;
    if (start)
        w->start = *start;
    else
        w->to_end = true;
    uint32_t ckp;
    uint32_t first = scan_dir(w->dir, 1, &ckp, NULL);
    im_rc rc = read_checkpoint(w, err);
    if (rc != IM_OK) {
        tsdb_wal_watcher_close(w);
        return rc;
    }
    w->seg = first ? first : (ckp ? ckp + 1 : 1);
    w->off = WW_HDR;
    if (start && start->seg > w->seg) {
        /* Segments before the start still give their series (commits define a
         * series the first time it is logged). Nothing to do: before_start. */
    }
    if (start && start->seg < w->seg && start->seg != 0 && cb->gap && first)
        cb->gap(ctx, start->seg, w->seg - 1);
    *out = w;
    return IM_OK;
}

static void close_seg(tsdb_wal_watcher_t *w)
{
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
}

/* Reads newly written bytes of the open segment; returns false at its end for now. */
static im_rc read_more(tsdb_wal_watcher_t *w, bool *progress, im_err_t *err)
{
    *progress = false;
    struct stat st;
    if (fstat(w->fd, &st) != 0)
        return im_err_set(err, IM_EIO, "cannot stat WAL segment %08u: %s", w->seg, strerror(errno));
    if ((uint64_t)st.st_size <= w->off) return IM_OK;
    if (!w->cap) {
        w->cap = WW_READ_INIT;
        w->buf = im_malloc(w->cap);
    }
    for (;;) {
        size_t want = (uint64_t)st.st_size - w->off;
        if (want > w->cap) want = w->cap;
        ssize_t n = pread(w->fd, w->buf, want, (off_t)w->off);
        if (n < 0)
            return im_err_set(err, IM_EIO, "cannot read WAL segment %08u: %s", w->seg,
                              strerror(errno));
        w->stopped = false;
        size_t good = tsdb__wal_scan_ex(w->buf, (size_t)n, on_record, w);
        w->off += good;
        if (good) *progress = true;
        if (w->stopped) return IM_OK;
        if (good == 0 && (size_t)n == w->cap && w->cap < WW_READ_MAX) {
            w->cap *= 2; /* a record longer than the buffer */
            w->buf = im_realloc(w->buf, w->cap);
            continue;
        }
        if (good == 0 || w->off >= (uint64_t)st.st_size) return IM_OK;
    }
}

im_rc tsdb_wal_watcher_poll(tsdb_wal_watcher_t *w, size_t *nrec, im_err_t *err)
{
    w->nrec = 0;
    im_rc rc = IM_OK;
    for (;;) {
        char p[4200];
        if (w->fd < 0) {
            snprintf(p, sizeof p, "%s/%08u", w->dir, w->seg);
            w->fd = open(p, O_RDONLY | O_CLOEXEC);
            if (w->fd < 0) {
                if (errno != ENOENT)
                    return im_err_set(err, IM_EIO, "cannot open WAL segment %s: %s", p,
                                      strerror(errno));
                uint32_t next = scan_dir(w->dir, w->seg, NULL, NULL);
                if (next == 0) break; /* not written yet */
                if (w->cb->gap) w->cb->gap(w->ctx, w->seg, next - 1);
                rc = read_checkpoint(w, err); /* the series the lost segments defined */
                if (rc != IM_OK) return rc;
                IM_WARN("WAL segments were deleted before the remote-write queue read them; "
                        "their samples are lost to it",
                        "from=%u to=%u", w->seg, next - 1);
                w->seg = next;
                w->off = WW_HDR;
                continue;
            }
            uint8_t magic[WW_HDR];
            if (pread(w->fd, magic, WW_HDR, 0) != WW_HDR) {
                close_seg(w); /* being created: read again next time */
                break;
            }
            if (w->off < WW_HDR) w->off = WW_HDR;
        }
        bool progress;
        rc = read_more(w, &progress, err);
        if (rc != IM_OK || w->stopped) break;
        if (progress) continue;
        /* Nothing more now: move on only if a newer segment exists (invariant 2). */
        uint32_t next = scan_dir(w->dir, w->seg + 1, NULL, NULL);
        if (next == 0) break;
        rc = read_more(w, &progress, err);
        if (rc != IM_OK || w->stopped) break;
        if (progress) continue;
        struct stat st;
        if (fstat(w->fd, &st) == 0 && (uint64_t)st.st_size > w->off)
            IM_WARN("WAL segment has a corrupt tail; the remote-write queue skips it",
                    "segment=%u offset=%" PRIu64 " size=%lld", w->seg, w->off,
                    (long long)st.st_size);
        close_seg(w);
        if (next > w->seg + 1 && w->cb->gap) w->cb->gap(w->ctx, w->seg + 1, next - 1);
        w->seg = next;
        w->off = WW_HDR;
    }
    if (rc == IM_OK && w->to_end && !w->stopped) {
        /* Reached the end once: from now on every commit gives samples. */
        w->to_end = false;
        w->start = (tsdb_wal_pos_t){w->seg, w->off};
    }
    if (nrec) *nrec = w->nrec;
    return rc;
}

tsdb_wal_pos_t tsdb_wal_watcher_pos(const tsdb_wal_watcher_t *w)
{
    return (tsdb_wal_pos_t){w->seg, w->off};
}

void tsdb_wal_watcher_close(tsdb_wal_watcher_t *w)
{
    if (!w) return;
    close_seg(w);
    im_free(w->buf);
    im_free(w->smp);
    im_free(w->dir);
    im_free(w);
}

uint64_t tsdb_wal_bytes_from(const char *dir, uint32_t seg)
{
    char wd[4100], p[4400];
    snprintf(wd, sizeof wd, "%s/wal", dir);
    DIR *d = opendir(wd);
    uint64_t total = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        uint32_t n;
        struct stat st;
        if (!tsdb__wal_parse_num(de->d_name, &n) || n < seg) continue;
        snprintf(p, sizeof p, "%s/%s", wd, de->d_name);
        if (stat(p, &st) == 0) total += (uint64_t)st.st_size;
    }
    if (d) closedir(d);
    return total;
}
