/* hash.h — 64-bit hashing (xxHash XXH3) for label sets, strings and postings. */
#ifndef IM_UTIL_HASH_H
#define IM_UTIL_HASH_H

#include "util/base.h"

uint64_t im_hash(const void *p, size_t n);
/* Mixes a 64-bit value into a running hash (order-sensitive). */
static inline uint64_t im_hash_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

/* CRC32C (Castagnoli), as used by the WAL and block files. */
uint32_t im_crc32c(uint32_t crc, const void *p, size_t n);

#endif
