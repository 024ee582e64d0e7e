/* chunk_hist.h — private to src/tsdb/: the native-histogram chunk codec
 * (chunk_hist.c; format in docs/storage.md, "Native-histogram chunks").
 *
 * A chunk holds consecutive histogram samples of one series that share a
 * layout: schema, zero threshold, custom bounds and the bucket index ranges
 * (set by the chunk's first sample). A sample that does not fit
 * (tsdb__hist_enc_fits false) starts a new chunk. Values round-trip bit-exact. */
#ifndef IM_TSDB_CHUNK_HIST_H
#define IM_TSDB_CHUNK_HIST_H

#include "storage/fhist.h"
#include "tsdb/tsdb_int.h"
#include "util/buf.h"

#define TSDB_HIST_FMT_VERSION 1
/* Format bounds, checked by the decoder: buckets per chunk layout (both
 * sides) and custom bounds. */
#define TSDB_HIST_FMT_MAX_BUCKETS 16384u
#define TSDB_HIST_FMT_MAX_CUSTOM  16384u
#define TSDB_HIST_FMT_MAX_SAMPLES 65535u

typedef struct tsdb__hist_enc {
    tsdb__bw_t bits;
    int32_t schema;
    uint64_t zthresh_bits;
    int32_t poff, noff;
    uint32_t npos, nneg, ncustom;
    double *custom; /* owned */
    double *prev;   /* owned: count, zcount, sum, pos…, neg… of the last sample */
    int64_t t, tdelta;
    uint32_t n;
} tsdb__hist_enc_t;

/* Starts an empty chunk with h's layout: its non-zero bucket ranges, or every
 * bucket of its custom bounds. */
void tsdb__hist_enc_start(tsdb__hist_enc_t *e, const storage_fh_t *h);
void tsdb__hist_enc_free(tsdb__hist_enc_t *e);
/* Whether h can go into the chunk (layout and room). */
bool tsdb__hist_enc_fits(const tsdb__hist_enc_t *e, const storage_fh_t *h);
/* Appends (t after the previous sample; h fits). */
void tsdb__hist_append(tsdb__hist_enc_t *e, int64_t t, const storage_fh_t *h);
/* The chunk's bytes: header and bit stream. */
void tsdb__hist_chunk_bytes(const tsdb__hist_enc_t *e, im_buf_t *out);

/* Decodes a chunk: *t and *h (im_malloc'ed arrays of n; each histogram its own
 * block, storage_fh.h) of the samples. false on malformed input (nothing is
 * left allocated). */
bool tsdb__hist_decode(const uint8_t *p, size_t len, int64_t **t, storage_fh_t ***h, size_t *n);
void tsdb__hist_decoded_free(int64_t *t, storage_fh_t **h, size_t n);

#endif
