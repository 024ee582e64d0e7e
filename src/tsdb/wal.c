/* wal.c — the write-ahead log: numbered segment files of CRC-checked records,
 * plus checkpoints that replace the segments once the head has been persisted.
 *
 * Directory DIR/wal/:
 *   00000001, 00000002, ...   segments, written in order, cut at wal_segment_bytes
 *   checkpoint.00000007       the head as of the end of segment 7 (replaces 1..7)
 *
 * File layout (segments and checkpoints alike):
 *   offset  size  field
 *   0       8     magic "IMWAL\0\0\1"
 *   8       ...   records, back to back:
 *                   0  4  len    payload length, u32 little endian (1 .. 64 MiB,
 *                                TSDB_FMT_MAX_WAL_RECORD in tsdb/limits.h)
 *                   4  4  crc    CRC32C (Castagnoli) of the payload
 *                   8  len payload; payload[0] is the record type (tsdb_int.h)
 *
 * Invariants:
 *  1. A record is written with one write(2); a record never spans two files.
 *  2. A record is good iff its len is in range, it is complete and its crc
 *     matches. Replay stops a segment at its first bad record: the file is
 *     truncated there, later segments are deleted (their records may depend on
 *     lost ones), the cut is logged and counted — never a reason not to start.
 *  3. A checkpoint is written as checkpoint.N.tmp, fsynced, renamed and the
 *     directory fsynced before any segment <= N is deleted; replay reads the
 *     newest checkpoint, then the segments > N.
 *  4. fsync: the owner (db.c) calls tsdb__wal_sync per its policy; close syncs.
 *  5. Segment numbers only grow: after a replay the next write opens segment
 *     (newest + 1), so a cut tail is never appended to. */
#include "util/base.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tsdb/tsdb_int.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/timeutil.h"

#define WAL_MAGIC      "IMWAL\0\0\1"
#define WAL_HDR        8
#define WAL_MAX_RECORD TSDB_FMT_MAX_WAL_RECORD /* tsdb/limits.h */

struct tsdb__wal {
    char *dir; /* owned: DIR/wal */
    size_t seg_bytes;
    int fd;
    uint32_t seg;   /* current segment number */
    uint64_t size;  /* bytes in the current segment */
    bool dirty;     /* written since the last sync */
    uint64_t total; /* bytes in all segments (approximate) */
};

static void seg_path(const tsdb__wal_t *w, uint32_t n, bool ckp, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s%08u", w->dir, ckp ? "checkpoint." : "", n);
}

static im_rc fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return IM_EIO;
    int r = fsync(fd);
    close(fd);
    return r == 0 ? IM_OK : IM_EIO;
}

void tsdb__wal_frame(im_buf_t *out, const uint8_t *rec, size_t len)
{
    uint8_t h[8];
    tsdb__put_u32(h, (uint32_t)len);
    tsdb__put_u32(h + 4, im_crc32c(0, rec, len));
    (void)im_buf_append(out, h, 8);
    (void)im_buf_append(out, rec, len);
}

size_t tsdb__wal_scan(const uint8_t *p, size_t len, tsdb__wal_rec_fn fn, void *ctx)
{
    size_t off = 0;
    while (off < len) {
        if (len - off < 8) break;
        uint32_t rl = tsdb__get_u32(p + off), crc = tsdb__get_u32(p + off + 4);
        if (rl == 0 || rl > WAL_MAX_RECORD || rl > len - off - 8) break;
        if (im_crc32c(0, p + off + 8, rl) != crc) break;
        if (fn && fn(ctx, p + off + 8, rl) != IM_OK) break;
        off += 8 + rl;
    }
    return off;
}

static im_rc read_file(const char *path, uint8_t **data, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return IM_EIO;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return IM_EIO;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *b = im_malloc(n ? n : 1);
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r <= 0) {
            if (r < 0 && errno == EINTR) continue;
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    *data = b;
    *len = got;
    return IM_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static bool parse_num(const char *s, uint32_t *out)
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

static im_rc open_segment(tsdb__wal_t *w, uint32_t n, im_err_t *err)
{
    char p[4096];
    seg_path(w, n, false, p, sizeof p);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return im_err_set(err, IM_EIO, "cannot create WAL segment %s: %s", p, strerror(errno));
    if (write(fd, WAL_MAGIC, WAL_HDR) != WAL_HDR) {
        close(fd);
        return im_err_set(err, IM_EIO, "cannot write WAL segment %s: %s", p, strerror(errno));
    }
    if (fsync_dir(w->dir) != IM_OK) {
        close(fd);
        return im_err_set(err, IM_EIO, "cannot fsync WAL directory %s", w->dir);
    }
    w->fd = fd;
    w->seg = n;
    w->size = WAL_HDR;
    w->total += WAL_HDR;
    w->dirty = true;
    return IM_OK;
}

im_rc tsdb__wal_open(const char *dir, size_t seg_bytes, tsdb__wal_rec_fn fn, void *ctx,
                     tsdb__wal_replay_stats_t *st, tsdb__wal_t **out, im_err_t *err)
{
    memset(st, 0, sizeof *st);
    tsdb__wal_t *w = im_calloc(1, sizeof *w);
    size_t dl = strlen(dir) + 8;
    w->dir = im_malloc(dl);
    snprintf(w->dir, dl, "%s/wal", dir);
    w->seg_bytes = seg_bytes;
    w->fd = -1;
    if (mkdir(w->dir, 0755) != 0 && errno != EEXIST) {
        im_rc rc = im_err_set(err, IM_EIO, "cannot create %s: %s", w->dir, strerror(errno));
        im_free(w->dir);
        im_free(w);
        return rc;
    }
    DIR *d = opendir(w->dir);
    if (!d) {
        im_rc rc = im_err_set(err, IM_EIO, "cannot read %s: %s", w->dir, strerror(errno));
        im_free(w->dir);
        im_free(w);
        return rc;
    }
    uint32_t *segs = NULL, nsegs = 0, capsegs = 0, ckp = 0;
    bool have_ckp = false;
    struct dirent *de;
    char p[4096];
    while ((de = readdir(d))) {
        uint32_t n;
        size_t nl = strlen(de->d_name);
        if (nl > 4 && strcmp(de->d_name + nl - 4, ".tmp") == 0) {
            snprintf(p, sizeof p, "%s/%s", w->dir, de->d_name);
            unlink(p);
        } else if (strncmp(de->d_name, "checkpoint.", 11) == 0 && parse_num(de->d_name + 11, &n)) {
            if (!have_ckp || n > ckp) ckp = n;
            have_ckp = true;
        } else if (parse_num(de->d_name, &n)) {
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
        uint8_t *data;
        size_t len;
        if (read_file(p, &data, &len) == IM_OK) {
            size_t good = WAL_HDR;
            if (len >= WAL_HDR && memcmp(data, WAL_MAGIC, WAL_HDR) == 0)
                good += tsdb__wal_scan(data + WAL_HDR, len - WAL_HDR, fn, ctx);
            if (good != len) {
                st->corruptions++;
                IM_WARN("WAL checkpoint is corrupt; using its good part",
                        "file=%s offset=%zu size=%zu", im_logq(p), good, len);
            }
            st->bytes += len;
            im_free(data);
        }
        /* Delete older checkpoints. */
        d = opendir(w->dir);
        while (d && (de = readdir(d))) {
            uint32_t n;
            if (strncmp(de->d_name, "checkpoint.", 11) == 0 && parse_num(de->d_name + 11, &n) &&
                n < ckp) {
                snprintf(p, sizeof p, "%s/%s", w->dir, de->d_name);
                unlink(p);
            }
        }
        if (d) closedir(d);
    }
    uint32_t last = have_ckp ? ckp : 0;
    bool cut = false;
    for (uint32_t i = 0; i < nsegs; i++) {
        seg_path(w, segs[i], false, p, sizeof p);
        if (have_ckp && segs[i] <= ckp) {
            unlink(p);
            continue;
        }
        if (segs[i] > last) last = segs[i];
        if (cut) {
            unlink(p);
            IM_WARN("WAL segment deleted after a corrupt one", "file=%s", im_logq(p));
            continue;
        }
        uint8_t *data;
        size_t len;
        if (read_file(p, &data, &len) != IM_OK) continue;
        size_t good = 0;
        if (len >= WAL_HDR && memcmp(data, WAL_MAGIC, WAL_HDR) == 0)
            good = WAL_HDR + tsdb__wal_scan(data + WAL_HDR, len - WAL_HDR, fn, ctx);
        st->segments++;
        st->bytes += len;
        if (good != len) {
            st->corruptions++;
            cut = true;
            IM_WARN("WAL segment has a torn or corrupt tail; cut at the last good record",
                    "file=%s offset=%zu size=%zu", im_logq(p), good, len);
            if (good < WAL_HDR) {
                unlink(p);
            } else if (truncate(p, (off_t)good) != 0) {
                IM_WARN("cannot truncate WAL segment", "file=%s err=%s", im_logq(p),
                        im_logq(strerror(errno)));
            }
        }
        im_free(data);
        if (len == WAL_HDR && good == len) {
            unlink(p); /* empty: nothing to keep (numbering continues after it) */
            continue;
        }
        w->total += good;
        IM_INFO("WAL segment loaded", "segment=%u maxSegment=%u", segs[i], segs[nsegs - 1]);
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
}

void tsdb__wal_close(tsdb__wal_t *w)
{
    if (!w) return;
    if (w->fd >= 0) {
        fdatasync(w->fd);
        close(w->fd);
    }
    im_free(w->dir);
    im_free(w);
}

im_rc tsdb__wal_cut(tsdb__wal_t *w, uint32_t *last, im_err_t *err)
{
    if (w->fd >= 0) {
        if (fdatasync(w->fd) != 0)
            return im_err_set(err, IM_EIO, "WAL fsync failed: %s", strerror(errno));
        close(w->fd);
        w->fd = -1;
    }
    *last = w->seg;
    return open_segment(w, w->seg + 1, err);
}

im_rc tsdb__wal_log(tsdb__wal_t *w, const uint8_t *rec, size_t len, im_err_t *err)
{
    if (len == 0 || len > WAL_MAX_RECORD)
        return im_err_set(err, IM_ELIMIT, "WAL record of %zu bytes is larger than %u", len,
                          WAL_MAX_RECORD);
    if (w->fd < 0 || (w->size + 8 + len > w->seg_bytes && w->size > WAL_HDR)) {
        uint32_t last;
        im_rc rc = tsdb__wal_cut(w, &last, err);
        if (rc != IM_OK) return rc;
    }
    uint8_t h[8];
    tsdb__put_u32(h, (uint32_t)len);
    tsdb__put_u32(h + 4, im_crc32c(0, rec, len));
    struct iovec iov[2] = {{h, 8}, {(void *)rec, len}};
    size_t want = 8 + len;
    ssize_t r;
    do r = writev(w->fd, iov, 2);
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)want) {
        int e = errno;
        /* Undo a partial write so the segment stays valid. */
        if (r > 0 && ftruncate(w->fd, (off_t)w->size) == 0) lseek(w->fd, (off_t)w->size, SEEK_SET);
        return im_err_set(err, IM_EIO, "WAL write failed: %s", r < 0 ? strerror(e) : "short write");
    }
    w->size += want;
    w->total += want;
    w->dirty = true;
    return IM_OK;
}

im_rc tsdb__wal_sync(tsdb__wal_t *w, im_err_t *err)
{
    if (w->fd >= 0 && fdatasync(w->fd) != 0)
        return im_err_set(err, IM_EIO, "WAL fsync failed: %s", strerror(errno));
    w->dirty = false;
    return IM_OK;
}

int tsdb__wal_sync_begin(tsdb__wal_t *w)
{
    if (!w->dirty || w->fd < 0) return -1;
    int fd = dup(w->fd);
    if (fd >= 0) w->dirty = false;
    return fd;
}

void tsdb__wal_set_dirty(tsdb__wal_t *w)
{
    w->dirty = true;
}

bool tsdb__wal_dirty(const tsdb__wal_t *w)
{
    return w->dirty;
}

uint64_t tsdb__wal_bytes(tsdb__wal_t *w)
{
    return w->total;
}

im_rc tsdb__wal_checkpoint(tsdb__wal_t *w, uint32_t upto, const im_buf_t *records, im_err_t *err)
{
    char p[4096], tmp[4200];
    seg_path(w, upto, true, p, sizeof p);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return im_err_set(err, IM_EIO, "cannot create %s: %s", tmp, strerror(errno));
    bool ok = write(fd, WAL_MAGIC, WAL_HDR) == WAL_HDR;
    size_t off = 0;
    while (ok && off < records->len) {
        ssize_t r = write(fd, records->data + off, records->len - off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            ok = false;
        else
            off += (size_t)r;
    }
    ok = ok && fsync(fd) == 0;
    close(fd);
    if (!ok || rename(tmp, p) != 0 || fsync_dir(w->dir) != IM_OK) {
        unlink(tmp);
        return im_err_set(err, IM_EIO, "cannot write WAL checkpoint %s", p);
    }
    /* Now the segments it replaces and older checkpoints can go. */
    DIR *d = opendir(w->dir);
    struct dirent *de;
    uint64_t total = 0;
    while (d && (de = readdir(d))) {
        uint32_t n;
        char fp[4400];
        snprintf(fp, sizeof fp, "%s/%s", w->dir, de->d_name);
        if ((parse_num(de->d_name, &n) && n <= upto) ||
            (strncmp(de->d_name, "checkpoint.", 11) == 0 && parse_num(de->d_name + 11, &n) &&
             n < upto)) {
            unlink(fp);
        } else {
            struct stat st;
            if (stat(fp, &st) == 0 && S_ISREG(st.st_mode)) total += (uint64_t)st.st_size;
        }
    }
    if (d) closedir(d);
    w->total = total;
    return IM_OK;
}
