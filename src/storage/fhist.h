/* fhist.h — the native-histogram sample value (Prometheus' float histogram)
 * as storage and PromQL carry it.
 *
 * A histogram has a schema: -4..8 are exponential (bucket index i covers
 * (base^(i-1), base^i] with base = 2^(2^-schema)), STORAGE_FH_CUSTOM (-53) has
 * custom bounds (index i covers (custom[i-1], custom[i]], index 0 starts at
 * -Inf and index ncustom ends at +Inf). The zero bucket [-zthresh, zthresh]
 * holds zcount. Buckets are dense: pos[k] is the count of index poff + k (the
 * same for neg, which mirrors the positive side: index i covers
 * [-base^i, -base^(i-1))); a gap between spans is a run of zeros. Counts are
 * absolute (not deltas), as in a float histogram.
 *
 * Carrying. A histogram sample travels through the float paths of storage and
 * the PromQL engine as a boxed double: a signalling NaN with the tag
 * STORAGE_FH_TAG in its top 16 bits and the address of the storage_fh_t in the
 * low 48. Arithmetic on it yields a quiet NaN without the tag, so code that
 * does not know histograms sees a NaN, never a wrong histogram. A backend only
 * returns boxes from series sets with hist_boxes set (storage.h); the engine
 * turns a float with the tag bits from any other set into a plain NaN.
 *
 * Memory: one block (storage_fh_size) holds the struct and its arrays;
 * storage_fh_place lays it out, storage_fh_clone copies into a new heap block
 * (im_free releases it). */
#ifndef IM_STORAGE_FHIST_H
#define IM_STORAGE_FHIST_H

#include "util/base.h"

#define STORAGE_FH_CUSTOM     (-53)
#define STORAGE_FH_MIN_SCHEMA (-4)
#define STORAGE_FH_MAX_SCHEMA 8
#define STORAGE_FH_TAG        0x7ff4u

typedef enum storage_fh_hint {
    STORAGE_FH_UNKNOWN = 0,
    STORAGE_FH_RESET,
    STORAGE_FH_NOT_RESET,
    STORAGE_FH_GAUGE,
} storage_fh_hint_t;

typedef struct storage_fh {
    int32_t schema;
    uint8_t hint; /* storage_fh_hint_t */
    double zthresh, zcount, count, sum;
    int32_t poff, noff;
    uint32_t npos, nneg, ncustom;
    double *pos, *neg, *custom;
} storage_fh_t;

/* Bytes of one block holding a histogram with these array lengths. */
size_t storage_fh_size(uint32_t npos, uint32_t nneg, uint32_t ncustom);
/* Lays out a histogram in mem (storage_fh_size bytes, aligned as malloc's):
 * arrays zeroed, other fields zero. */
storage_fh_t *storage_fh_place(void *mem, uint32_t npos, uint32_t nneg, uint32_t ncustom);
/* A heap copy (im_free it). */
storage_fh_t *storage_fh_clone(const storage_fh_t *h);
/* Copies h into mem (storage_fh_size of h's lengths). */
storage_fh_t *storage_fh_copy_to(void *mem, const storage_fh_t *h);
size_t storage_fh_bytes(const storage_fh_t *h);

static inline double storage_fh_box(const storage_fh_t *h)
{
    uint64_t b = ((uint64_t)STORAGE_FH_TAG << 48) | ((uint64_t)(uintptr_t)h & 0xffffffffffffull);
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}
static inline bool storage_fh_is_box(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return (b >> 48) == STORAGE_FH_TAG && (b & 0xffffffffffffull) != 0;
}
/* The histogram of a box, NULL for any other value. */
static inline const storage_fh_t *storage_fh_unbox(double v)
{
    if (!storage_fh_is_box(v)) return NULL;
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return (const storage_fh_t *)(uintptr_t)(b & 0xffffffffffffull);
}

/* Bounds of bucket index idx of a schema (positive side). */
double storage_fh_upper(int32_t schema, int32_t idx, const storage_fh_t *h);
double storage_fh_lower(int32_t schema, int32_t idx, const storage_fh_t *h);

#endif
