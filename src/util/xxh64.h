/* xxh64.h — xxHash64 (XXH64) as its public specification defines it
 * (Yann Collet's xxHash, "XXH64 algorithm description"): the 64-bit hash
 * Prometheus' labels.Hash() uses (Go's cespare/xxhash, seed 0), so that
 * what depends on that hash (limit_ratio's choice of series) matches
 * Prometheus. Our own label hash (hash.h) is XXH3 and is not this one. */
#ifndef IM_UTIL_XXH64_H
#define IM_UTIL_XXH64_H

#include "util/base.h"

/* XXH64 of p[0, n) with seed. */
uint64_t im_xxh64(const void *p, size_t n, uint64_t seed);

/* Streaming form: init, update any number of times, digest (the state is not
 * consumed: digest may be called again after more updates). */
typedef struct im_xxh64_state {
    uint64_t v[4];
    uint64_t total; /* bytes seen */
    uint64_t seed;
    uint8_t buf[32]; /* a partial stripe */
    size_t nbuf;
} im_xxh64_state_t;

void im_xxh64_init(im_xxh64_state_t *s, uint64_t seed);
void im_xxh64_update(im_xxh64_state_t *s, const void *p, size_t n);
uint64_t im_xxh64_digest(const im_xxh64_state_t *s);

#endif
