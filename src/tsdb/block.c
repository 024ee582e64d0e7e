/* block.c — immutable on-disk blocks: one file per block holding every series
 * of a time range, compressed per column (colenc.c) and then by zstd, read
 * through mmap. The layout is specified in docs/storage.md; in short:
 *
 *   offset     size   field
 *   0          8      magic "IMBLK\0\0\1"
 *   8          ...    value frames: zstd frames, each the concatenated value
 *                     columns of consecutive series (in label order), 256 KiB
 *                     raw (1 MiB in compacted blocks)
 *   ...        ...    TS section   zstd: the distinct timestamp columns, back to back
 *   ...        ...    SYM section  zstd: uvarint count, (uvarint len, bytes)* sorted
 *   ...        ...    SER section  zstd: uvarint count, per series in label order:
 *                       uvarint nlabels, (uvarint name sym, uvarint value sym)*,
 *                       varint mint, uvarint maxt-mint, uvarint n,
 *                       uvarint frame, uvarint off, uvarint len (value column),
 *                       uvarint tsoff, uvarint tslen (timestamp column in TS)
 *   ...        ...    FRT section  zstd: uvarint count, per frame:
 *                       uvarint off, uvarint clen, uvarint rawlen, u32 crc32c
 *   end-144    144    footer:
 *                       4 x {u64 off, u32 clen, u32 rawlen, u32 crc32c, u32 0}
 *                         for TS, SYM, SER, FRT (crc over the compressed bytes)
 *                       i64 mint, i64 maxt, u64 nseries, u64 nsamples,
 *                       u32 level, u32 version (1),
 *                       u32 crc32c of the 136 bytes before it, u32 magic "IMBF"
 * All integers little endian. A block is valid iff the footer crc matches, every
 * section and frame lies inside the file between the header and the footer, every
 * crc matches, every section decompresses to its rawlen, and every reference in
 * SER points inside SYM, FRT, its frame and TS. tsdb__block_validate checks all
 * of that; the loader calls it before using a block, and so does the fuzzer.
 *
 * Invariants: a block file is written as NAME.tmp, fsynced, then renamed, so a
 * crash never leaves a half block under a final name. Files are never modified
 * after the rename; compaction writes new ones and deletes the old. All file I/O
 * goes through io.c: a failed write, fsync, rename or directory fsync abandons
 * the block (its .tmp, or the renamed file when the directory fsync failed, is
 * deleted; nothing is retried) and returns IM_EIO, which puts the store into
 * its failed state (db.c invariant 5). A block that cannot be opened or mapped
 * is IM_EIO, one that does not validate IM_ECORRUPT. */
#include "util/base.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "tsdb/io.h"
#include "tsdb/tsdb_int.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/timeutil.h"

#define BLK_MAGIC   "IMBLK\0\0\1"
#define BLK_HDR     8
#define BLK_FOOTER  144
#define FRAME_RAW   (256u << 10)  /* blocks from the head */
#define FRAME_RAW_Z (1024u << 10) /* compacted blocks (zstd level >= 15): better ratio */
#define MAX_SECTION (1u << 30)
enum { SEC_TS, SEC_SYM, SEC_SER, SEC_FRT, NSEC };

/* ---- Writer ---- */

typedef struct wseries {
    const im_labels_t *labels; /* referenced */
    int64_t mint, maxt;
    uint32_t n, frame, off, len, tsoff, tslen;
} wseries_t;

typedef struct tsent {
    uint64_t h;
    uint32_t off, len; /* into w->ts; len 0 = empty slot */
} tsent_t;

struct tsdb__bwriter {
    char *tmp_path, *final_path; /* owned */
    int fd;
    uint64_t off;
    int64_t mint, maxt;
    uint32_t level;
    int zlevel;
    ZSTD_CCtx *cctx;
    im_buf_t frame, ts, scratch, zbuf;
    tsdb__bframe_t *frames;
    uint32_t nframes, capframes;
    uint32_t *fcrc;
    tsent_t *tsmap;
    size_t ntsmap, captsmap;
    wseries_t *ser;
    size_t nser, capser;
    uint64_t nsamples;
    im_rc err;     /* sticky: once set, nothing more is written and finish fails */
    int err_errno; /* errno of the first failed write (0: not an I/O error) */
};

/* Writes through io.c; a failure is never retried (the .tmp file is dropped). */
static im_rc write_all(tsdb__bwriter_t *w, const void *p, size_t n)
{
    size_t done = 0;
    im_rc rc = tsdb__io_write_all(w->fd, p, n, &done);
    w->off += done;
    if (rc != IM_OK && !w->err_errno) w->err_errno = errno ? errno : EIO;
    return rc;
}

static uint32_t seq_counter;

im_rc tsdb__bwriter_new(const char *dir, int64_t mint, int64_t maxt, uint32_t level, int zlevel,
                        tsdb__bwriter_t **out, im_err_t *err)
{
    tsdb__bwriter_t *w = im_calloc(1, sizeof *w);
    char name[512];
    uint32_t seq = __atomic_add_fetch(&seq_counter, 1, __ATOMIC_RELAXED);
    snprintf(name, sizeof name, "%s/b-%016" PRIx64 "-%016" PRIx64 "-L%u-%08x%04x.imb", dir,
             (uint64_t)mint, (uint64_t)maxt, level, (uint32_t)(im_mono_ns() & 0xffffffff),
             seq & 0xffff);
    w->final_path = im_strdup(name);
    size_t tl = strlen(name) + 5;
    w->tmp_path = im_malloc(tl);
    snprintf(w->tmp_path, tl, "%s.tmp", name);
    w->fd = tsdb__io_open_w(w->tmp_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (w->fd < 0) {
        im_rc rc =
            im_err_set(err, IM_EIO, "cannot create block %s: %s", w->tmp_path, strerror(errno));
        im_free(w->tmp_path);
        im_free(w->final_path);
        im_free(w);
        return rc;
    }
    w->mint = mint;
    w->maxt = maxt;
    w->level = level;
    w->zlevel = zlevel;
    w->cctx = ZSTD_createCCtx();
    im_buf_init(&w->frame, 0);
    im_buf_init(&w->ts, 0);
    im_buf_init(&w->scratch, 0);
    im_buf_init(&w->zbuf, 0);
    w->err = write_all(w, BLK_MAGIC, BLK_HDR);
    *out = w;
    return IM_OK;
}

static im_rc compress(tsdb__bwriter_t *w, const void *p, size_t n)
{
    size_t bound = ZSTD_compressBound(n);
    im_buf_reset(&w->zbuf);
    if (im_buf_reserve(&w->zbuf, bound) != IM_OK) return IM_ELIMIT;
    size_t r = ZSTD_compressCCtx(w->cctx, w->zbuf.data, bound, p, n, w->zlevel);
    if (ZSTD_isError(r)) return IM_ERR;
    w->zbuf.len = r;
    return IM_OK;
}

static void flush_frame(tsdb__bwriter_t *w)
{
    if (w->frame.len == 0 || w->err) return;
    if (compress(w, w->frame.data, w->frame.len) != IM_OK) {
        w->err = IM_ERR;
        return;
    }
    if (w->nframes == w->capframes) {
        w->capframes = w->capframes ? w->capframes * 2 : 16;
        w->frames = im_realloc(w->frames, w->capframes * sizeof *w->frames);
        w->fcrc = im_realloc(w->fcrc, w->capframes * sizeof *w->fcrc);
    }
    tsdb__bframe_t *f = &w->frames[w->nframes];
    f->off = w->off;
    f->clen = (uint32_t)w->zbuf.len;
    f->rawlen = (uint32_t)w->frame.len;
    w->fcrc[w->nframes] = im_crc32c(0, w->zbuf.data, w->zbuf.len);
    w->nframes++;
    w->err = write_all(w, w->zbuf.data, w->zbuf.len);
    im_buf_reset(&w->frame);
}

/* Stores a timestamp column once per block; returns its offset. */
static uint32_t ts_intern(tsdb__bwriter_t *w, const uint8_t *p, uint32_t len)
{
    uint64_t h = im_hash(p, len);
    if ((w->ntsmap + 1) * 2 > w->captsmap) {
        size_t nc = w->captsmap ? w->captsmap * 2 : 256;
        tsent_t *nm = im_calloc(nc, sizeof *nm);
        for (size_t i = 0; i < w->captsmap; i++) {
            if (!w->tsmap[i].len) continue;
            size_t j = w->tsmap[i].h & (nc - 1);
            while (nm[j].len) j = (j + 1) & (nc - 1);
            nm[j] = w->tsmap[i];
        }
        im_free(w->tsmap);
        w->tsmap = nm;
        w->captsmap = nc;
    }
    size_t j = h & (w->captsmap - 1);
    while (w->tsmap[j].len) {
        tsent_t *e = &w->tsmap[j];
        if (e->h == h && e->len == len && memcmp(w->ts.data + e->off, p, len) == 0) return e->off;
        j = (j + 1) & (w->captsmap - 1);
    }
    uint32_t off = (uint32_t)w->ts.len;
    (void)im_buf_append(&w->ts, p, len);
    w->tsmap[j] = (tsent_t){h, off, len};
    w->ntsmap++;
    return off;
}

im_rc tsdb__bwriter_add(tsdb__bwriter_t *w, const im_labels_t *ls, const int64_t *t,
                        const double *v, size_t n, im_err_t *err)
{
    if (n == 0) return IM_OK;
    if (w->err)
        return im_err_set(err, w->err, "cannot write block %s: %s", w->tmp_path,
                          w->err_errno ? strerror(w->err_errno) : im_rc_str(w->err));
    /* What the reader refuses is never written (tsdb/limits.h). */
    tsdb_limits_t caps = tsdb_limits_format();
    im_rc lrc = tsdb_limits_check(&caps, ls, err);
    if (lrc != IM_OK) return lrc;
    if (w->nser == w->capser) {
        w->capser = w->capser ? w->capser * 2 : 1024;
        w->ser = im_realloc(w->ser, w->capser * sizeof *w->ser);
    }
    wseries_t *s = &w->ser[w->nser++];
    s->labels = im_labels_ref(ls);
    s->mint = t[0];
    s->maxt = t[n - 1];
    s->n = (uint32_t)n;
    im_buf_reset(&w->scratch);
    tsdb__ts_encode(&w->scratch, t, n);
    s->tslen = (uint32_t)w->scratch.len;
    s->tsoff = ts_intern(w, (const uint8_t *)w->scratch.data, s->tslen);
    s->frame = w->nframes;
    s->off = (uint32_t)w->frame.len;
    tsdb__vals_encode(&w->frame, v, n);
    s->len = (uint32_t)(w->frame.len - s->off);
    w->nsamples += n;
    if (w->frame.len >= (w->zlevel >= 15 ? FRAME_RAW_Z : FRAME_RAW)) flush_frame(w);
    return IM_OK;
}

void tsdb__bwriter_abort(tsdb__bwriter_t *w)
{
    if (!w) return;
    if (w->fd >= 0) close(w->fd);
    if (w->tmp_path[0] && tsdb__io_unlink(w->tmp_path) != IM_OK)
        IM_WARN("cannot delete an unfinished block file; the next open deletes it",
                "file=%s err=%s", im_logq(w->tmp_path), im_logq(strerror(errno)));
    for (size_t i = 0; i < w->nser; i++) im_labels_unref(w->ser[i].labels);
    im_free(w->ser);
    im_free(w->frames);
    im_free(w->fcrc);
    im_free(w->tsmap);
    im_buf_free(&w->frame);
    im_buf_free(&w->ts);
    im_buf_free(&w->scratch);
    im_buf_free(&w->zbuf);
    ZSTD_freeCCtx(w->cctx);
    im_free(w->tmp_path);
    im_free(w->final_path);
    im_free(w);
}

/* Symbols: the distinct strings, sorted; a pointer -> index map. */
typedef struct symtab {
    const im_istr_t **v;
    size_t n, cap;
    const im_istr_t **hk; /* open addressing keys */
    uint32_t *hv;
    size_t hcap;
} symtab_t;

static size_t sym_slot(const symtab_t *st, const im_istr_t *s)
{
    size_t i = (uintptr_t)s * 0x9e3779b97f4a7c15ULL >> 20;
    i &= st->hcap - 1;
    while (st->hk[i] && st->hk[i] != s) i = (i + 1) & (st->hcap - 1);
    return i;
}

static void sym_add(symtab_t *st, const im_istr_t *s)
{
    if ((st->n + 1) * 2 > st->hcap) {
        size_t nc = st->hcap ? st->hcap * 2 : 1024;
        const im_istr_t **nk = im_calloc(nc, sizeof *nk);
        const im_istr_t **ok = st->hk;
        size_t oc = st->hcap;
        st->hk = nk;
        st->hcap = nc;
        im_free(st->hv);
        st->hv = im_calloc(nc, sizeof *st->hv);
        for (size_t i = 0; i < oc; i++)
            if (ok[i]) st->hk[sym_slot(st, ok[i])] = ok[i];
        im_free(ok);
    }
    size_t i = sym_slot(st, s);
    if (st->hk[i]) return;
    st->hk[i] = s;
    if (st->n == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 1024;
        st->v = im_realloc(st->v, st->cap * sizeof *st->v);
    }
    st->v[st->n++] = s;
}

static int cmp_istrp(const void *a, const void *b)
{
    const im_istr_t *x = *(const im_istr_t *const *)a, *y = *(const im_istr_t *const *)b;
    int c = memcmp(x->s, y->s, IM_MIN(x->len, y->len));
    if (c) return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

static im_rc write_section(tsdb__bwriter_t *w, const im_buf_t *raw, uint8_t *toc)
{
    if (raw->len > MAX_SECTION) return IM_ELIMIT; /* the reader would refuse it */
    if (compress(w, raw->data ? raw->data : "", raw->len) != IM_OK) return IM_ERR;
    tsdb__put_u64(toc, w->off);
    tsdb__put_u32(toc + 8, (uint32_t)w->zbuf.len);
    tsdb__put_u32(toc + 12, (uint32_t)raw->len);
    tsdb__put_u32(toc + 16, im_crc32c(0, w->zbuf.data, w->zbuf.len));
    tsdb__put_u32(toc + 20, 0);
    return write_all(w, w->zbuf.data, w->zbuf.len);
}

im_rc tsdb__bwriter_finish(tsdb__bwriter_t *w, char **path_out, im_err_t *err)
{
    if (path_out) *path_out = NULL;
    if (w->nser == 0) {
        tsdb__bwriter_abort(w);
        return IM_OK;
    }
    flush_frame(w);
    uint8_t footer[BLK_FOOTER] = {0};
    im_buf_t raw;
    im_buf_init(&raw, 0);
    symtab_t st = {0};
    for (size_t i = 0; i < w->nser; i++)
        for (uint32_t j = 0; j < w->ser[i].labels->n; j++) {
            sym_add(&st, w->ser[i].labels->l[j].name);
            sym_add(&st, w->ser[i].labels->l[j].value);
        }
    qsort(st.v, st.n, sizeof *st.v, cmp_istrp);
    for (size_t i = 0; i < st.n; i++) st.hv[sym_slot(&st, st.v[i])] = (uint32_t)i;
    im_rc rc = w->err;
    if (rc == IM_OK) rc = write_section(w, &w->ts, footer + 24 * SEC_TS);
    tsdb__put_uvarint(&raw, st.n);
    for (size_t i = 0; i < st.n; i++) {
        tsdb__put_uvarint(&raw, st.v[i]->len);
        (void)im_buf_append(&raw, st.v[i]->s, st.v[i]->len);
    }
    if (rc == IM_OK) rc = write_section(w, &raw, footer + 24 * SEC_SYM);
    im_buf_reset(&raw);
    tsdb__put_uvarint(&raw, w->nser);
    int64_t mint = INT64_MAX, maxt = INT64_MIN;
    for (size_t i = 0; i < w->nser; i++) {
        const wseries_t *s = &w->ser[i];
        tsdb__put_uvarint(&raw, s->labels->n);
        for (uint32_t j = 0; j < s->labels->n; j++) {
            tsdb__put_uvarint(&raw, st.hv[sym_slot(&st, s->labels->l[j].name)]);
            tsdb__put_uvarint(&raw, st.hv[sym_slot(&st, s->labels->l[j].value)]);
        }
        tsdb__put_varint(&raw, s->mint);
        tsdb__put_uvarint(&raw, (uint64_t)s->maxt - (uint64_t)s->mint);
        tsdb__put_uvarint(&raw, s->n);
        tsdb__put_uvarint(&raw, s->frame);
        tsdb__put_uvarint(&raw, s->off);
        tsdb__put_uvarint(&raw, s->len);
        tsdb__put_uvarint(&raw, s->tsoff);
        tsdb__put_uvarint(&raw, s->tslen);
        if (s->mint < mint) mint = s->mint;
        if (s->maxt > maxt) maxt = s->maxt;
    }
    if (rc == IM_OK) rc = write_section(w, &raw, footer + 24 * SEC_SER);
    im_buf_reset(&raw);
    tsdb__put_uvarint(&raw, w->nframes);
    for (uint32_t i = 0; i < w->nframes; i++) {
        tsdb__put_uvarint(&raw, w->frames[i].off);
        tsdb__put_uvarint(&raw, w->frames[i].clen);
        tsdb__put_uvarint(&raw, w->frames[i].rawlen);
        uint8_t c[4];
        tsdb__put_u32(c, w->fcrc[i]);
        (void)im_buf_append(&raw, c, 4);
    }
    if (rc == IM_OK) rc = write_section(w, &raw, footer + 24 * SEC_FRT);
    im_buf_free(&raw);
    im_free(st.v);
    im_free(st.hk);
    im_free(st.hv);
    /* The block's range is the one it was asked for, widened to its data. */
    if (mint > w->mint) mint = w->mint;
    if (maxt < w->maxt) maxt = w->maxt;
    uint8_t *f = footer + 96;
    tsdb__put_u64(f, (uint64_t)mint);
    tsdb__put_u64(f + 8, (uint64_t)maxt);
    tsdb__put_u64(f + 16, w->nser);
    tsdb__put_u64(f + 24, w->nsamples);
    tsdb__put_u32(f + 32, w->level);
    tsdb__put_u32(f + 36, 1);
    tsdb__put_u32(footer + 136, im_crc32c(0, footer, 136));
    memcpy(footer + 140, "IMBF", 4);
    if (rc == IM_OK) rc = write_all(w, footer, sizeof footer);
    const char *what = "write";
    int e = w->err_errno;
    if (rc == IM_OK) {
        what = "fsync";
        rc = tsdb__io_fsync(w->fd);
        e = errno;
    }
    if (rc == IM_OK) {
        what = "rename";
        rc = tsdb__io_rename(w->tmp_path, w->final_path);
        e = errno;
    }
    if (rc != IM_OK) {
        if (rc == IM_ELIMIT)
            rc = im_err_set(err, rc,
                            "cannot write block %s: a section would exceed %u bytes (too many "
                            "distinct label values in one block range)",
                            w->tmp_path, MAX_SECTION);
        else
            rc = im_err_set(err, rc, "cannot %s block %s: %s", what, w->tmp_path,
                            e ? strerror(e) : im_rc_str(rc));
        tsdb__bwriter_abort(w);
        return rc;
    }
    close(w->fd);
    w->fd = -1;
    /* fsync the directory so the rename is durable; if that fails the block is
     * not used: it is deleted again (its data is still in the head and WAL). */
    if (tsdb__io_fsync_parent(w->final_path) != IM_OK) {
        rc = im_err_set(err, IM_EIO, "cannot fsync the directory of block %s: %s", w->final_path,
                        strerror(errno));
        (void)tsdb__io_unlink(w->final_path);
        w->tmp_path[0] = 0;
        tsdb__bwriter_abort(w);
        return rc;
    }
    if (path_out) {
        *path_out = w->final_path;
        w->final_path = NULL;
    }
    w->tmp_path[0] = 0; /* nothing to unlink */
    tsdb__bwriter_abort(w);
    return IM_OK;
}

/* ---- Validation and loading ---- */

typedef struct sect {
    uint64_t off;
    uint32_t clen, rawlen, crc;
} sect_t;

static bool decompress(const uint8_t *p, size_t clen, uint32_t rawlen, uint8_t **out)
{
    uint8_t *b = im_malloc(rawlen ? rawlen : 1);
    unsigned long long fs = ZSTD_getFrameContentSize(p, clen);
    if (fs != rawlen) {
        im_free(b);
        return false;
    }
    size_t r = ZSTD_decompress(b, rawlen, p, clen);
    if (ZSTD_isError(r) || r != rawlen) {
        im_free(b);
        return false;
    }
    *out = b;
    return true;
}

/* Parses and checks a block image. With b == NULL only validates; otherwise
 * fills b's metadata (series, frames, ts, index). */
static im_rc parse(const uint8_t *p, size_t len, tsdb__block_t *b, im_err_t *err)
{
    if (len < BLK_HDR + BLK_FOOTER || memcmp(p, BLK_MAGIC, BLK_HDR) != 0)
        return im_err_set(err, IM_ECORRUPT, "not a block file (bad magic or too short)");
    const uint8_t *f = p + len - BLK_FOOTER;
    if (memcmp(f + 140, "IMBF", 4) != 0 || tsdb__get_u32(f + 136) != im_crc32c(0, f, 136))
        return im_err_set(err, IM_ECORRUPT, "block footer checksum mismatch");
    if (tsdb__get_u32(f + 132) != 1)
        return im_err_set(err, IM_EUNSUPPORTED, "block format version %u is not supported",
                          tsdb__get_u32(f + 132));
    uint64_t data_end = len - BLK_FOOTER;
    sect_t s[NSEC];
    uint8_t *raw[NSEC] = {0};
    im_rc rc = IM_OK;
    for (int i = 0; i < NSEC; i++) {
        s[i].off = tsdb__get_u64(f + 24 * i);
        s[i].clen = tsdb__get_u32(f + 24 * i + 8);
        s[i].rawlen = tsdb__get_u32(f + 24 * i + 12);
        s[i].crc = tsdb__get_u32(f + 24 * i + 16);
        if (s[i].off < BLK_HDR || s[i].off > data_end || s[i].clen > data_end - s[i].off ||
            s[i].rawlen > MAX_SECTION) {
            rc = im_err_set(err, IM_ECORRUPT, "block section %d out of range", i);
            goto out;
        }
        if (im_crc32c(0, p + s[i].off, s[i].clen) != s[i].crc) {
            rc = im_err_set(err, IM_ECORRUPT, "block section %d checksum mismatch", i);
            goto out;
        }
        if (!decompress(p + s[i].off, s[i].clen, s[i].rawlen, &raw[i])) {
            rc = im_err_set(err, IM_ECORRUPT, "block section %d does not decompress", i);
            goto out;
        }
    }
    int64_t mint = (int64_t)tsdb__get_u64(f + 96), maxt = (int64_t)tsdb__get_u64(f + 104);
    uint64_t nseries = tsdb__get_u64(f + 112), nsamples = tsdb__get_u64(f + 120);
    /* Frame table. */
    const uint8_t *q = raw[SEC_FRT], *end = q + s[SEC_FRT].rawlen;
    uint64_t nfr;
    if (!tsdb__get_uvarint(&q, end, &nfr) || nfr > s[SEC_FRT].rawlen) {
        rc = im_err_set(err, IM_ECORRUPT, "block frame table is malformed");
        goto out;
    }
    tsdb__bframe_t *frames = im_malloc((nfr ? nfr : 1) * sizeof *frames);
    for (uint64_t i = 0; i < nfr; i++) {
        uint64_t off, clen, rawlen;
        if (!tsdb__get_uvarint(&q, end, &off) || !tsdb__get_uvarint(&q, end, &clen) ||
            !tsdb__get_uvarint(&q, end, &rawlen) || end - q < 4 || off < BLK_HDR ||
            off > data_end || clen > data_end - off || rawlen > MAX_SECTION) {
            im_free(frames);
            rc = im_err_set(err, IM_ECORRUPT, "block frame %" PRIu64 " is out of range", i);
            goto out;
        }
        uint32_t crc = tsdb__get_u32(q);
        q += 4;
        if (im_crc32c(0, p + off, clen) != crc) {
            im_free(frames);
            rc = im_err_set(err, IM_ECORRUPT, "block frame %" PRIu64 " checksum mismatch", i);
            goto out;
        }
        if (ZSTD_getFrameContentSize(p + off, clen) != rawlen) {
            im_free(frames);
            rc = im_err_set(err, IM_ECORRUPT, "block frame %" PRIu64 " has a wrong size", i);
            goto out;
        }
        frames[i] = (tsdb__bframe_t){off, (uint32_t)clen, (uint32_t)rawlen};
    }
    /* Symbols. */
    q = raw[SEC_SYM];
    end = q + s[SEC_SYM].rawlen;
    uint64_t nsym;
    const im_istr_t **syms = NULL;
    if (!tsdb__get_uvarint(&q, end, &nsym) || nsym > s[SEC_SYM].rawlen) {
        im_free(frames);
        rc = im_err_set(err, IM_ECORRUPT, "block symbol table is malformed");
        goto out;
    }
    syms = im_calloc(nsym ? nsym : 1, sizeof *syms);
    uint64_t *symlen = im_calloc(nsym ? nsym : 1, sizeof *symlen); /* for the limits */
    bool ok = true;
    for (uint64_t i = 0; i < nsym && ok; i++) {
        uint64_t l;
        if (!tsdb__get_uvarint(&q, end, &l) || l > (uint64_t)(end - q)) {
            ok = false;
            break;
        }
        if (b) syms[i] = im_intern((const char *)q, l);
        symlen[i] = l;
        q += l;
    }
    /* Series. */
    q = raw[SEC_SER];
    end = q + s[SEC_SER].rawlen;
    uint64_t nser = 0;
    tsdb__bseries_t *ser = NULL;
    uint64_t samples = 0;
    if (ok && (!tsdb__get_uvarint(&q, end, &nser) || nser != nseries || nser > s[SEC_SER].rawlen))
        ok = false;
    if (ok) ser = im_calloc(nser ? nser : 1, sizeof *ser);
    im_labels_builder_t lb;
    im_lb_init(&lb);
    const im_labels_t *prev = NULL;
    for (uint64_t i = 0; i < nser && ok; i++) {
        uint64_t nl, x[8];
        int64_t smin;
        if (!tsdb__get_uvarint(&q, end, &nl) || nl == 0 || nl > TSDB_FMT_MAX_LABELS) {
            ok = false;
            break;
        }
        im_lb_reset(&lb);
        uint64_t lbytes = 0;
        for (uint64_t j = 0; j < nl && ok; j++) {
            uint64_t a, c;
            if (!tsdb__get_uvarint(&q, end, &a) || !tsdb__get_uvarint(&q, end, &c) || a >= nsym ||
                c >= nsym) {
                ok = false;
                break;
            }
            lbytes += symlen[a] + symlen[c];
            if (b) im_lb_set_istr(&lb, syms[a], syms[c]);
        }
        if (ok && !tsdb_limits_ok_raw(nl, lbytes)) ok = false; /* tsdb/limits.h */
        if (!ok || !tsdb__get_varint(&q, end, &smin)) {
            ok = false;
            break;
        }
        for (int k = 0; k < 7 && ok; k++) ok = tsdb__get_uvarint(&q, end, &x[k]);
        if (!ok) break;
        /* x: maxt-mint, n, frame, off, len, tsoff, tslen */
        if (x[1] == 0 || x[1] > UINT32_MAX || x[2] >= nfr || x[3] > frames[x[2]].rawlen ||
            x[4] > frames[x[2]].rawlen - x[3] || x[5] > s[SEC_TS].rawlen ||
            x[6] > s[SEC_TS].rawlen - x[5] || x[1] > x[6] * 1ULL) {
            ok = false;
            break;
        }
        samples += x[1];
        ser[i].mint = smin;
        ser[i].maxt = (int64_t)((uint64_t)smin + x[0]);
        ser[i].n = (uint32_t)x[1];
        ser[i].frame = (uint32_t)x[2];
        ser[i].off = (uint32_t)x[3];
        ser[i].len = (uint32_t)x[4];
        ser[i].tsoff = (uint32_t)x[5];
        ser[i].tslen = (uint32_t)x[6];
        if (b) {
            ser[i].labels = im_lb_build(&lb);
            if (ser[i].labels->n == 0 || (prev && im_labels_compare(prev, ser[i].labels) >= 0)) {
                ok = false;
                i++;
                nser = i;
                break;
            }
            prev = ser[i].labels;
        }
    }
    im_lb_free(&lb);
    im_free(symlen);
    if (ok && samples != nsamples) ok = false;
    if (syms) {
        for (uint64_t i = 0; i < nsym; i++)
            if (syms[i]) im_istr_unref(syms[i]);
        im_free(syms);
    }
    if (!ok) {
        if (ser)
            for (uint64_t i = 0; i < nser; i++)
                if (ser[i].labels) im_labels_unref(ser[i].labels);
        im_free(ser);
        im_free(frames);
        rc = im_err_set(err, IM_ECORRUPT, "block series table is malformed");
        goto out;
    }
    if (!b) {
        im_free(ser);
        im_free(frames);
        goto out;
    }
    b->mint = mint;
    b->maxt = maxt;
    b->nseries = nser;
    b->nsamples = nsamples;
    b->level = tsdb__get_u32(f + 128);
    b->series = ser;
    b->frames = frames;
    b->nframes = (uint32_t)nfr;
    b->ts = raw[SEC_TS];
    b->tslen = s[SEC_TS].rawlen;
    raw[SEC_TS] = NULL;
    tsdb__index_init(&b->ix);
    for (uint64_t i = 0; i < nser; i++) tsdb__index_add(&b->ix, (uint32_t)i, ser[i].labels);
out:
    for (int i = 0; i < NSEC; i++) im_free(raw[i]);
    return rc;
}

im_rc tsdb__block_validate(const uint8_t *p, size_t len, im_err_t *err)
{
    return parse(p, len, NULL, err);
}

im_rc tsdb__block_open(const char *path, tsdb__block_t **out, im_err_t *err)
{
    int fd = tsdb__io_open_r(path);
    if (fd < 0) return im_err_set(err, IM_EIO, "cannot open block %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        im_rc rc = im_err_set(err, IM_EIO, "cannot stat block %s: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    if (st.st_size <= 0) {
        close(fd);
        return im_err_set(err, IM_ECORRUPT, "block %s is empty", path);
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return im_err_set(err, IM_EIO, "cannot mmap block %s: %s", path, strerror(errno));
    tsdb__block_t *b = im_calloc(1, sizeof *b);
    im_rc rc = parse(m, (size_t)st.st_size, b, err);
    if (rc != IM_OK) {
        munmap(m, (size_t)st.st_size);
        im_free(b);
        im_err_prefix(err, "block %s", path);
        return rc;
    }
    b->map = m;
    b->maplen = (size_t)st.st_size;
    b->bytes = (uint64_t)st.st_size;
    b->path = im_strdup(path);
    const char *sl = strrchr(b->path, '/');
    b->name = sl ? sl + 1 : b->path;
    atomic_store(&b->refs, 1);
    static _Atomic uint64_t next_id;
    b->id = atomic_fetch_add(&next_id, 1) + 1;
    *out = b;
    return IM_OK;
}

void tsdb__block_ref(tsdb__block_t *b)
{
    atomic_fetch_add(&b->refs, 1);
}

void tsdb__block_unref(tsdb__block_t *b)
{
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1) return;
    tsdb__frame_cache_drop_block(b->cache, b->id);
    if (atomic_load(&b->deleted) && tsdb__io_unlink(b->path) != IM_OK)
        IM_WARN("cannot delete a dropped block", "block=%s err=%s", im_logq(b->path),
                im_logq(strerror(errno)));
    for (uint64_t i = 0; i < b->nseries; i++) im_labels_unref(b->series[i].labels);
    im_free(b->series);
    im_free(b->frames);
    im_free(b->ts);
    tsdb__index_free(&b->ix);
    munmap((void *)b->map, b->maplen);
    im_free(b->path);
    im_free(b);
}

void tsdb__fcache_free(tsdb__fcache_t *c)
{
    tsdb__frame_unref(c->last);
    for (uint32_t i = 0; i < c->npins; i++) tsdb__frame_unref(c->pins[i]);
    im_free(c->pins);
    for (size_t i = 0; i < c->captsc; i++) im_free(c->tsc[i].t);
    im_free(c->tsc);
    im_free(c->tslast.t);
    bool pin_all = c->pin_all;
    memset(c, 0, sizeof *c);
    c->pin_all = pin_all;
}

/* The decoded frame idx of b for reader c (borrowed from c), NULL if corrupt. */
static const tsdb__frame_t *reader_frame(const tsdb__block_t *b, uint32_t idx, tsdb__fcache_t *c)
{
    if (c->b != b) {
        tsdb__fcache_free(c);
        c->b = b;
    }
    if (!c->pin_all) {
        if (c->last && c->last->idx == idx) return c->last;
        tsdb__frame_unref(c->last);
        c->last = tsdb__frame_get(NULL, b, idx);
        return c->last;
    }
    if (!c->pins) {
        c->npins = b->nframes;
        c->pins = im_calloc(c->npins ? c->npins : 1, sizeof *c->pins);
    }
    if (!c->pins[idx]) c->pins[idx] = tsdb__frame_get(b->cache, b, idx);
    return c->pins[idx];
}

/* The decoded timestamp column at (off, len) of the ts section for reader c
 * (borrowed from c), NULL if malformed. Series of one target share a column:
 * pinning readers keep every column decoded (a hash by offset), sequential
 * ones the last. */
static const tsdb__tscol_t *reader_ts(const tsdb__block_t *b, uint32_t off, uint32_t len,
                                      tsdb__fcache_t *c)
{
    tsdb__tscol_t *e;
    if (!c->pin_all) {
        e = &c->tslast;
        if (e->t && e->off == off && e->len == len) return e;
    } else {
        if (c->ntsc * 2 >= c->captsc) { /* grow (load <= 1/2) */
            size_t nc = c->captsc ? c->captsc * 2 : 64;
            tsdb__tscol_t *nt = im_calloc(nc, sizeof *nt);
            for (size_t k = 0; k < c->captsc; k++) {
                if (!c->tsc[k].t) continue;
                size_t h = (c->tsc[k].off * 0x9e3779b1u) & (nc - 1);
                while (nt[h].t) h = (h + 1) & (nc - 1);
                nt[h] = c->tsc[k];
            }
            im_free(c->tsc);
            c->tsc = nt;
            c->captsc = nc;
        }
        size_t h = (off * 0x9e3779b1u) & (c->captsc - 1);
        while (c->tsc[h].t && !(c->tsc[h].off == off && c->tsc[h].len == len))
            h = (h + 1) & (c->captsc - 1);
        e = &c->tsc[h];
        if (e->t) return e;
        c->ntsc++;
    }
    im_free(e->t);
    e->t = NULL;
    int64_t *t;
    size_t n;
    if (!tsdb__ts_decode(b->ts + off, len, NULL, &t, &n)) {
        im_free(t);
        if (c->pin_all) c->ntsc--;
        return NULL;
    }
    *e = (tsdb__tscol_t){.off = off, .len = len, .t = t, .n = n};
    return e;
}

bool tsdb__block_read_append(const tsdb__block_t *b, uint32_t i, tsdb__fcache_t *c, int64_t mint,
                             int64_t maxt, int64_t **pt, double **pv, size_t *pn, size_t *pcap)
{
    const tsdb__bseries_t *s = &b->series[i];
    const tsdb__frame_t *fr = reader_frame(b, s->frame, c);
    if (!fr) return false;
    const tsdb__tscol_t *tc = reader_ts(b, s->tsoff, s->tslen, c);
    if (!tc || tc->n != s->n) return false;
    if (*pn + s->n > *pcap || !*pt) {
        size_t cap = *pcap ? *pcap : 128;
        while (cap < *pn + s->n) cap *= 2;
        *pt = im_realloc(*pt, cap * sizeof **pt);
        *pv = im_realloc(*pv, cap * sizeof **pv);
        *pcap = cap;
    }
    double *V = *pv + *pn;
    if (!tsdb__vals_decode(fr->data + s->off, s->len, NULL, V, s->n)) return false;
    int64_t *T = *pt + *pn;
    const int64_t *ts = tc->t;
    size_t w = 0;
    for (size_t k = 0; k < s->n; k++) {
        if (ts[k] < mint || ts[k] > maxt) continue;
        T[w] = ts[k];
        V[w] = V[k];
        w++;
    }
    *pn += w;
    return true;
}

bool tsdb__block_read(const tsdb__block_t *b, uint32_t i, tsdb__fcache_t *c, int64_t mint,
                      int64_t maxt, int64_t **t, double **v, size_t *n)
{
    *t = NULL;
    *v = NULL;
    *n = 0;
    size_t cap = 0;
    if (tsdb__block_read_append(b, i, c, mint, maxt, t, v, n, &cap)) return true;
    *n = 0;
    return false;
}
