/* tsdb_int.h — private to src/tsdb: the pieces the store is built from.
 *
 *   chunk_xor.c   Gorilla head chunks (bit stream, delta-of-delta t, XOR v)
 *   index.c       postings: (name, value) -> sorted series ids, matcher evaluation
 *   head.c        in-memory series, chunks, appends, snapshots for queries, truncation
 *   head_append.c the appender (batch, validation, commit through the WAL)
 *   wal.c         write-ahead log segments and checkpoints
 *   colenc.c      block column codecs (timestamps, values) used by block.c
 *   block.c       immutable on-disk blocks: writer, validator, mmap reader
 *   querier.c     the queryable: head + blocks merged, sorted, iterators
 *   db.c          open/close, background work, persisting, compaction, retention
 *   io.c          the file-I/O wrappers every file above uses, with fault points (io.h)
 *
 * Locking order (never take an earlier lock while holding a later one):
 *   db->commit_mu  ->  head->lock (rwlock)  ->  db->blocks_mu
 * commit_mu serialises commits, WAL writes and head truncation; head->lock guards
 * the head's series table, index and chunks; blocks_mu guards the block list.
 * The WAL's fail_mu (its sticky error message) is a leaf: taken last, alone. */
#ifndef IM_TSDB_TSDB_INT_H
#define IM_TSDB_TSDB_INT_H

#include "util/base.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h> /* ssize_t (tsdb__iter_read_arrays) */

#include "labels/labels.h"
#include "tsdb/tsdb.h"
#include "util/buf.h"

#define TSDB__CHUNK_MAX_SAMPLES 120

/* ---- Bit stream (chunk_xor.c) ---- */

typedef struct tsdb__bw {
    uint8_t *b;     /* owned (im_malloc_tag IM_MEM_TSDB) */
    uint32_t nbits; /* bits written */
    uint32_t cap;   /* bytes allocated */
} tsdb__bw_t;

typedef struct tsdb__br {
    const uint8_t *b; /* borrowed */
    uint32_t nbits;   /* bits available */
    uint32_t pos;     /* next bit */
} tsdb__br_t;

void tsdb__bw_free(tsdb__bw_t *w);
void tsdb__bw_put(tsdb__bw_t *w, uint64_t v, unsigned nbits);
bool tsdb__br_get(tsdb__br_t *r, unsigned nbits, uint64_t *out);

/* ---- Gorilla XOR chunk ---- */

/* Encoder state for the open chunk of a series. */
typedef struct tsdb__xor_enc {
    int64_t t, tdelta;
    uint64_t vbits;
    uint8_t lead, trail; /* previous meaningful window; lead 0xff = none yet */
    uint16_t n;
} tsdb__xor_enc_t;

void tsdb__xor_enc_init(tsdb__xor_enc_t *e);
/* Appends one sample to w (any t order; the head guarantees increasing t). */
void tsdb__xor_append(tsdb__xor_enc_t *e, tsdb__bw_t *w, int64_t t, double v);

typedef struct tsdb__xor_dec {
    tsdb__br_t r;
    uint16_t n, i;
    int64_t t, tdelta;
    uint64_t vbits;
    uint8_t lead, trail;
} tsdb__xor_dec_t;

void tsdb__xor_dec_init(tsdb__xor_dec_t *d, const uint8_t *b, uint32_t nbits, uint16_t n);
/* Next sample; false at the end or on malformed data (then *corrupt is set if given). */
bool tsdb__xor_next(tsdb__xor_dec_t *d, int64_t *t, double *v);

/* Value-only XOR stream (used by the block codec): v[i] for i in [0, n). */
void tsdb__xorv_encode(tsdb__bw_t *w, const double *v, size_t n);
bool tsdb__xorv_decode(tsdb__br_t *r, double *v, size_t n);

/* Bulk decode (iter_bulk.c): appends the samples of one XOR chunk within [mint,
 * maxt] to (*t, *v) at *n (capacity *cap, grown), as a tsdb__xor_next loop would. */
void tsdb__xor_decode_append(const uint8_t *b, uint32_t nbits, uint16_t n, int64_t mint,
                             int64_t maxt, int64_t **t, double **v, size_t *pn, size_t *cap);
/* Bulk read over decoded arrays (iter_bulk.c): the tsdb_iter_vt_t.read contract
 * for an iterator at *pos (-1 before the first sample, n at the end). */
size_t tsdb__iter_read_arrays(const int64_t *src_t, const double *src_v, size_t n, ssize_t *pos,
                              int64_t *t, double *v, size_t max);

/* ---- Sorted id lists and the postings index (index.c) ---- */

typedef struct tsdb__ids {
    uint32_t *v; /* owned */
    size_t n, cap;
} tsdb__ids_t;

void tsdb__ids_push(tsdb__ids_t *l, uint32_t id);
void tsdb__ids_free(tsdb__ids_t *l);
/* out = a ∩ b, a ∪ b, a \ b (out must not alias the inputs). */
void tsdb__ids_and(const tsdb__ids_t *a, const tsdb__ids_t *b, tsdb__ids_t *out);
void tsdb__ids_or(const tsdb__ids_t *a, const tsdb__ids_t *b, tsdb__ids_t *out);
void tsdb__ids_minus(const tsdb__ids_t *a, const tsdb__ids_t *b, tsdb__ids_t *out);

typedef struct tsdb__posting {
    const im_istr_t *name, *value; /* referenced */
    tsdb__ids_t ids;               /* sorted ascending */
} tsdb__posting_t;

typedef struct tsdb__lname {
    const im_istr_t *name;    /* referenced */
    tsdb__posting_t **values; /* owned array, borrowed entries; unsorted */
    size_t nvalues, capvalues;
} tsdb__lname_t;

typedef struct tsdb__index {
    tsdb__posting_t **pt; /* open addressing on (name, value) pointers */
    size_t npt, cappt;
    tsdb__lname_t **nt; /* open addressing on name pointer */
    size_t nnt, capnt;
    tsdb__ids_t all; /* every id, ascending */
} tsdb__index_t;

void tsdb__index_init(tsdb__index_t *ix);
void tsdb__index_free(tsdb__index_t *ix);
/* Adds series id with its labels (ascending ids are cheapest: appended). */
void tsdb__index_add(tsdb__index_t *ix, uint32_t id, const im_labels_t *ls);
/* Ids of series matching every matcher (nms == 0: all), ascending. */
void tsdb__index_select(const tsdb__index_t *ix, im_matcher_t *const *ms, size_t nms,
                        tsdb__ids_t *out);
const tsdb__lname_t *tsdb__index_lname(const tsdb__index_t *ix, const im_istr_t *name);
/* Bytes held (approximate), for stats. */
size_t tsdb__index_bytes(const tsdb__index_t *ix);

/* ---- String lists ---- */

/* Sorts by bytes and removes duplicates; takes ownership of the references. */
void tsdb__strlist_finish(tsdb_strlist_t *l);
void tsdb__strlist_push(tsdb_strlist_t *l, size_t *cap, const im_istr_t *s);

/* ---- Head (head.c) ---- */

typedef struct tsdb__hchunk {
    int64_t mint, maxt;
    tsdb__bw_t data;
    uint16_t n;
} tsdb__hchunk_t;

typedef struct tsdb__series {
    uint32_t id;
    const im_labels_t *labels;   /* referenced */
    _Atomic int64_t maxt;        /* newest committed t; INT64_MIN = none */
    _Atomic uint64_t last_vbits; /* value bits of the newest committed sample */
    _Atomic uint32_t pending;    /* open appenders holding samples for it */
    bool logged;                 /* series record in the WAL (commit_mu) */
    tsdb__hchunk_t *chunks;      /* owned, oldest first (head->lock) */
    uint32_t nchunks, capchunks;
    tsdb__xor_enc_t enc; /* state of chunks[nchunks-1] */
} tsdb__series_t;

typedef struct tsdb__head {
    pthread_rwlock_t lock;
    tsdb__series_t **map; /* open addressing on labels hash */
    size_t nmap, capmap;
    tsdb__series_t **by_id; /* index = id; NULL when removed */
    uint32_t next_id, capids;
    tsdb__index_t ix;
    _Atomic int64_t min_valid_t; /* samples older than this are out of bounds */
    int64_t mint, maxt;          /* of the data held; INT64_MAX/INT64_MIN when empty */
    int64_t chunk_range_ms;      /* chunks never straddle a multiple of this */
    bool agent;                  /* agent mode: series and their newest sample only */
    uint64_t nseries, nchunks, nsamples, chunk_bytes;
    /* WAL replay only: ids that name a series already known under another id
     * (the series was dropped and made again, and a crash kept both records). */
    struct tsdb__alias *alias; /* owned, open addressing; NULL outside replay */
    size_t nalias, capalias;
    /* WAL replay only (set by db.c): samples after replay_max_t are dropped
     * (more than max_future ahead of the clock); counters for the summary. */
    int64_t replay_max_t;
    uint64_t replay_future_dropped, replay_over_limits;
} tsdb__head_t;

tsdb__head_t *tsdb__head_new(int64_t chunk_range_ms);
void tsdb__head_free(tsdb__head_t *h);
/* Finds or creates the series for ls (takes the lock itself). *created set when new. */
tsdb__series_t *tsdb__head_get_or_create(tsdb__head_t *h, const im_labels_t *ls, bool *created);
/* Creates a series with a given id (WAL replay); returns the existing one if equal labels. */
tsdb__series_t *tsdb__head_create_with_id(tsdb__head_t *h, uint32_t id, const im_labels_t *ls);
/* The series for an id or NULL; caller holds h->lock (read) or commit_mu. */
tsdb__series_t *tsdb__head_by_id(tsdb__head_t *h, uint32_t id);
/* Replay: the series an id names, aliases included. */
tsdb__series_t *tsdb__head_replay_series(tsdb__head_t *h, uint32_t id);
/* Ends a replay: forgets the aliases. */
void tsdb__head_replay_done(tsdb__head_t *h);
/* Appends a validated sample; caller holds h->lock for writing. */
void tsdb__head_append(tsdb__head_t *h, tsdb__series_t *s, int64_t t, double v);

/* A copy of the chunks of one series overlapping a range (query snapshot). */
typedef struct tsdb__chunk_copy {
    int64_t mint, maxt;
    uint8_t *b; /* owned */
    uint32_t nbits;
    uint16_t n;
} tsdb__chunk_copy_t;

/* Copies the chunks of s overlapping [mint, maxt]; caller holds h->lock (read). */
void tsdb__head_copy_chunks(const tsdb__series_t *s, int64_t mint, int64_t maxt,
                            tsdb__chunk_copy_t **out, size_t *n);
void tsdb__chunk_copies_free(tsdb__chunk_copy_t *c, size_t n);
/* Drops chunks entirely older than t and series left empty and idle; caller holds
 * commit_mu. Returns the number of series removed. */
size_t tsdb__head_truncate(tsdb__head_t *h, int64_t t);

/* ---- Block column codecs (colenc.c) ---- */

/* Timestamps: uvarint n, then varint t0, varint d1, zigzag dod... */
void tsdb__ts_encode(im_buf_t *out, const int64_t *t, size_t n);
/* Decodes into *t (owned by the caller, im_free). Returns false if malformed. */
bool tsdb__ts_decode(const uint8_t *p, size_t len, size_t *used, int64_t **t, size_t *n);
/* Values: picks the smallest of constant / integer-decimal delta / XOR. */
void tsdb__vals_encode(im_buf_t *out, const double *v, size_t n);
bool tsdb__vals_decode(const uint8_t *p, size_t len, size_t *used, double *v, size_t n);

void tsdb__put_uvarint(im_buf_t *b, uint64_t v);
void tsdb__put_varint(im_buf_t *b, int64_t v);
bool tsdb__get_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v);
bool tsdb__get_varint(const uint8_t **p, const uint8_t *end, int64_t *v);
void tsdb__put_u32(uint8_t *p, uint32_t v);
void tsdb__put_u64(uint8_t *p, uint64_t v);
uint32_t tsdb__get_u32(const uint8_t *p);
uint64_t tsdb__get_u64(const uint8_t *p);

/* ---- WAL (wal.c) ---- */

#define TSDB__REC_COMMIT     1 /* series definitions + samples of one commit */
#define TSDB__REC_CKP_SERIES 2 /* checkpoint: one series with its head chunks */
#define TSDB__REC_CKP_STATE  3 /* checkpoint: head lower bound */
/* Framing of a logical record longer than one physical record (wal.c only;
 * never handed to the replay function). */
#define TSDB__REC_FRAG_MORE 0x7e /* a piece, more follow */
#define TSDB__REC_FRAG_END  0x7f /* the last piece */

typedef struct tsdb__wal tsdb__wal_t;

typedef struct tsdb__wal_replay_stats {
    uint64_t records, segments, bytes;
    uint64_t corruptions; /* torn/corrupt tails cut */
} tsdb__wal_replay_stats_t;

/* Called per good record in order: first the newest checkpoint's, then the
 * segments after it. Returning non-OK stops the replay with that code. */
typedef im_rc (*tsdb__wal_rec_fn)(void *ctx, const uint8_t *rec, size_t len);

/* Opens (creating) dir/wal, replays it through fn, cutting corrupt tails, then
 * opens a fresh segment for writing. */
im_rc tsdb__wal_open(const char *dir, size_t seg_bytes, tsdb__wal_rec_fn fn, void *ctx,
                     tsdb__wal_replay_stats_t *st, tsdb__wal_t **out, im_err_t *err);
void tsdb__wal_close(tsdb__wal_t *w); /* fsyncs */
/* Appends one logical record of any length (payload rec[0] = type), as one
 * physical record or as fragments, with one writev. Every failure is sticky:
 * the WAL refuses all writes until reopened (wal.c invariant 7). */
im_rc tsdb__wal_log(tsdb__wal_t *w, const uint8_t *rec, size_t len, im_err_t *err);
im_rc tsdb__wal_sync(tsdb__wal_t *w, im_err_t *err);
/* Starts a sync that runs without the caller's lock: returns a dup of the current
 * segment's fd (the caller fdatasyncs and closes it) and marks the WAL clean, or
 * -1 when there is nothing to sync (or the WAL has failed). Caller holds
 * commit_mu for the call only. If the caller's fdatasync fails it must call
 * tsdb__wal_fail: the written data's state is unknown, it is never retried. */
int tsdb__wal_sync_begin(tsdb__wal_t *w);
/* Enters the sticky failed state (first message kept); thread-safe. */
void tsdb__wal_fail(tsdb__wal_t *w, const char *msg);
/* IM_OK, or IM_EIO with the sentence naming the first failure. Thread-safe. */
im_rc tsdb__wal_failed(tsdb__wal_t *w, im_err_t *err);
/* Test hook: the largest physical payload of a fragmented record (0 = default
 * 8 MiB; at least 16, at most 64 MiB). */
void tsdb__wal_set_frag_bytes(size_t n);
/* Closes the current segment and starts the next; *last = the closed one. */
im_rc tsdb__wal_cut(tsdb__wal_t *w, uint32_t *last, im_err_t *err);
/* Writes checkpoint.<upto> with the given records (each framed like a segment
 * record), fsyncs it, then deletes segments <= upto and older checkpoints. */
im_rc tsdb__wal_checkpoint(tsdb__wal_t *w, uint32_t upto, const im_buf_t *records, im_err_t *err);
/* Frames one logical record into out as physical records (u32 len, u32 crc32c,
 * payload), fragmented like tsdb__wal_log does. */
void tsdb__wal_frame(im_buf_t *out, const uint8_t *rec, size_t len);
/* Validator shared by the loader and the fuzzer: walks the framed records in
 * p[0..len) (after the segment header), calling fn for each good logical record
 * (fragments joined); returns the offset just after the last good logical
 * record (== len when all good). */
size_t tsdb__wal_scan(const uint8_t *p, size_t len, tsdb__wal_rec_fn fn, void *ctx);
/* As tsdb__wal_scan, also telling fn the offset (in p) just after each record. */
typedef im_rc (*tsdb__wal_rec_end_fn)(void *ctx, const uint8_t *rec, size_t len, size_t end);
size_t tsdb__wal_scan_ex(const uint8_t *p, size_t len, tsdb__wal_rec_end_fn fn, void *ctx);
/* tsdb__wal_open with a keep hook (wal.c invariant 8; NULL = none). */
im_rc tsdb__wal_open_keep(const char *dir, size_t seg_bytes, uint32_t (*keep)(void *),
                          void *keep_ctx, tsdb__wal_rec_fn fn, void *ctx,
                          tsdb__wal_replay_stats_t *st, tsdb__wal_t **out, im_err_t *err);
/* Deletes segments < before (not the open one) without a checkpoint: agent mode,
 * where the head keeps no samples and the queues have sent them. */
void tsdb__wal_drop_before(tsdb__wal_t *w, uint32_t before);
uint32_t tsdb__wal_segment(const tsdb__wal_t *w);
/* A segment file name (8 decimal digits) as its number. */
bool tsdb__wal_parse_num(const char *s, uint32_t *out);
/* Reads a record's label set (head_append.c). 1: *out set (a reference); 0:
 * malformed; -1: over the format caps, skipped (*out NULL, *p after it). */
int tsdb__wal_get_labels(const uint8_t **p, const uint8_t *end, const im_labels_t **out);
uint64_t tsdb__wal_bytes(tsdb__wal_t *w);

/* ---- Blocks (block.c) ---- */

typedef struct tsdb__bseries {
    const im_labels_t *labels; /* referenced */
    int64_t mint, maxt;
    uint32_t n;
    uint32_t frame;        /* index into the frame table */
    uint32_t off, len;     /* the value column inside the decompressed frame */
    uint32_t tsoff, tslen; /* the timestamp column inside the ts section */
} tsdb__bseries_t;

typedef struct tsdb__bframe {
    uint64_t off;
    uint32_t clen, rawlen;
} tsdb__bframe_t;

typedef struct tsdb__frame_cache tsdb__frame_cache_t;

typedef struct tsdb__block {
    _Atomic uint32_t refs;
    uint64_t id;                /* unique in the process: the frame cache's key */
    tsdb__frame_cache_t *cache; /* the store's decoded frames (NULL: none); set by db.c */
    char *path;                 /* owned */
    const char *name;           /* points into path */
    int64_t mint, maxt;
    uint64_t nseries, nsamples;
    uint64_t bytes; /* file size */
    uint32_t level;
    const uint8_t *map; /* mmap of the file */
    size_t maplen;
    tsdb__bseries_t *series; /* owned, sorted by labels */
    tsdb__bframe_t *frames;  /* owned */
    uint32_t nframes;
    uint8_t *ts; /* decompressed timestamp section (owned) */
    size_t tslen;
    tsdb__index_t ix;
    _Atomic bool deleted; /* unlink the file when the last reference goes */
} tsdb__block_t;

typedef struct tsdb__bwriter tsdb__bwriter_t;
/* Starts a block file dir/<name>.tmp; series must then be added in label order. */
im_rc tsdb__bwriter_new(const char *dir, int64_t mint, int64_t maxt, uint32_t level, int zlevel,
                        tsdb__bwriter_t **out, im_err_t *err);
im_rc tsdb__bwriter_add(tsdb__bwriter_t *w, const im_labels_t *ls, const int64_t *t,
                        const double *v, size_t n, im_err_t *err);
/* Finishes, fsyncs and renames into place; *path_out (may be NULL) gets the final
 * path (caller frees). An empty block (no series) is not written: *path_out NULL. */
im_rc tsdb__bwriter_finish(tsdb__bwriter_t *w, char **path_out, im_err_t *err);
void tsdb__bwriter_abort(tsdb__bwriter_t *w);

im_rc tsdb__block_open(const char *path, tsdb__block_t **out, im_err_t *err);
/* The deep validator shared by the loader and the fuzzer: checks the footer, every
 * checksum and the structure of every section of an in-memory block image. */
im_rc tsdb__block_validate(const uint8_t *p, size_t len, im_err_t *err);
void tsdb__block_ref(tsdb__block_t *b);
void tsdb__block_unref(tsdb__block_t *b);

/* ---- Decoded frames (frame_cache.c) ---- */

/* A decoded value frame: referenced by the cache while cached and by each pin. */
typedef struct tsdb__frame {
    _Atomic uint32_t refs;
    uint32_t idx;
    uint64_t block;
    struct tsdb__frame *prev, *next, *hnext; /* cache links (under its mutex) */
    uint32_t len;
    uint8_t data[];
} tsdb__frame_t;

typedef struct tsdb__frame_cache_stats {
    uint64_t hits, misses, evictions, bytes, frames, limit;
} tsdb__frame_cache_stats_t;

/* A cache of at most limit bytes of decoded frames (0: caches nothing). */
tsdb__frame_cache_t *tsdb__frame_cache_new(size_t limit);
void tsdb__frame_cache_free(tsdb__frame_cache_t *c);
/* Frame idx of block b, referenced for the caller (tsdb__frame_unref): from c when
 * cached, else decoded (and cached when it fits); c may be NULL. NULL: corrupt. */
tsdb__frame_t *tsdb__frame_get(tsdb__frame_cache_t *c, const tsdb__block_t *b, uint32_t idx);
void tsdb__frame_unref(tsdb__frame_t *f);
/* Frame idx of b referenced for the caller if c holds it (a hit), else NULL. */
tsdb__frame_t *tsdb__frame_cached(tsdb__frame_cache_t *c, const tsdb__block_t *b, uint32_t idx);
/* Drops every cached frame of a block (its last reference is going). */
void tsdb__frame_cache_drop_block(tsdb__frame_cache_t *c, uint64_t block);
void tsdb__frame_cache_stats(tsdb__frame_cache_t *c, tsdb__frame_cache_stats_t *o);

/* A reader's frames of one block. Zero-initialised: sequential reading (the
 * last frame is kept, nothing goes through the store's cache: compaction, the
 * fuzzer). With pin_all set (queries): every frame read stays pinned until
 * tsdb__fcache_free, and frames come from the block's store cache. */
typedef struct tsdb__tscol {
    uint32_t off, len; /* in the block's ts section */
    int64_t *t;        /* owned, decoded; NULL = empty slot */
    size_t n;
} tsdb__tscol_t;
typedef struct tsdb__fcache {
    bool pin_all;
    const tsdb__block_t *b;
    tsdb__frame_t *last;
    tsdb__frame_t **pins; /* owned, b->nframes entries (pin_all) */
    uint32_t npins;
    /* decoded timestamp columns: all of them (pin_all, open hash by offset) or the last */
    tsdb__tscol_t *tsc;
    size_t ntsc, captsc;
    tsdb__tscol_t tslast;
} tsdb__fcache_t;
void tsdb__fcache_free(tsdb__fcache_t *c);
/* Appends series i of block b restricted to [mint, maxt] to (*t, *v) (*n of
 * capacity *cap, grown as needed); false on corrupt data (*n unchanged). */
bool tsdb__block_read_append(const tsdb__block_t *b, uint32_t i, tsdb__fcache_t *c, int64_t mint,
                             int64_t maxt, int64_t **t, double **v, size_t *n, size_t *cap);
/* Decodes series i of block b restricted to [mint, maxt] into *t / *v (owned by
 * the caller); false on corrupt data. */
bool tsdb__block_read(const tsdb__block_t *b, uint32_t i, tsdb__fcache_t *c, int64_t mint,
                      int64_t maxt, int64_t **t, double **v, size_t *n);

/* ---- The store (db.c) ---- */

struct tsdb {
    storage_t storage; /* must be first: tsdb_storage(); vt = tsdb__storage_vt */
    tsdb_opts_t opts;
    char *dir;   /* owned; NULL = memory only */
    int lock_fd; /* flock'ed DIR/lock, -1 if none */
    tsdb__head_t *head;
    pthread_mutex_t commit_mu;
    tsdb__wal_t *wal; /* NULL in memory-only mode */
    pthread_mutex_t blocks_mu;
    tsdb__block_t **blocks; /* referenced, sorted by mint */
    size_t nblocks, capblocks;
    tsdb__frame_cache_t *fcache; /* owned: decoded block frames (frame_cache.c) */
    pthread_mutex_t maint_mu;    /* one maintenance round at a time */
    _Atomic uint64_t samples_appended, out_of_order, duplicates, out_of_bounds;
    _Atomic uint64_t too_far_future, over_limits;
    _Atomic uint64_t wal_fsyncs, wal_fsync_ns, wal_corruptions, blocks_corrupt, compactions;
    /* background thread */
    pthread_t bg;
    bool bg_started;
    pthread_mutex_t bg_mu;
    pthread_cond_t bg_cv;
    bool bg_stop;
};

/* The storage interface of a store (head_append.c). */
extern const storage_vt_t tsdb__storage_vt;

/* The wall clock (opts.now_ms or im_now_ms). */
int64_t tsdb__now_ms(const tsdb_t *db);
/* The newest t the store accepts now: now + max_future (INT64_MAX: no check). */
int64_t tsdb__max_valid_t(const tsdb_t *db);

/* Records a WAL fsync in the stats; caller holds commit_mu. */
im_rc tsdb__sync_locked(tsdb_t *db, im_err_t *err);

#endif
