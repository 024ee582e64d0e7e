/* xxh64.c — XXH64 written from the xxHash specification (see xxh64.h): four
 * accumulators over 32-byte stripes of little-endian 64-bit lanes, merged and
 * mixed with the remaining 8-, 4- and 1-byte pieces, then the avalanche. */
#include "util/base.h"

#include "util/xxh64.h"

#define P1 0x9E3779B185EBCA87ULL
#define P2 0xC2B2AE3D27D4EB4FULL
#define P3 0x165667B19E3779F9ULL
#define P4 0x85EBCA77C2B2AE63ULL
#define P5 0x27D4EB2F165667C5ULL

static inline uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t lane_round(uint64_t acc, uint64_t lane)
{
    acc += lane * P2;
    acc = rotl(acc, 31);
    return acc * P1;
}

static inline uint64_t merge_round(uint64_t h, uint64_t acc)
{
    h ^= lane_round(0, acc);
    return h * P1 + P4;
}

static void stripe(uint64_t v[4], const uint8_t *p)
{
    for (int i = 0; i < 4; i++) v[i] = lane_round(v[i], le64(p + 8 * i));
}

/* The end of the algorithm: h from the accumulators (or the seed for inputs
 * under 32 bytes), the length, the tail p[0, n) (n < 32), the avalanche. */
static uint64_t finish(const uint64_t v[4], uint64_t seed, uint64_t total, const uint8_t *p,
                       size_t n)
{
    uint64_t h;
    if (total >= 32) {
        h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
        for (int i = 0; i < 4; i++) h = merge_round(h, v[i]);
    } else {
        h = seed + P5;
    }
    h += total;
    for (; n >= 8; p += 8, n -= 8) {
        h ^= lane_round(0, le64(p));
        h = rotl(h, 27) * P1 + P4;
    }
    if (n >= 4) {
        h ^= (uint64_t)le32(p) * P1;
        h = rotl(h, 23) * P2 + P3;
        p += 4;
        n -= 4;
    }
    for (; n > 0; p++, n--) {
        h ^= (uint64_t)*p * P5;
        h = rotl(h, 11) * P1;
    }
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

void im_xxh64_init(im_xxh64_state_t *s, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->seed = seed;
    s->v[0] = seed + P1 + P2;
    s->v[1] = seed + P2;
    s->v[2] = seed;
    s->v[3] = seed - P1;
}

void im_xxh64_update(im_xxh64_state_t *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    s->total += n;
    if (s->nbuf) {
        size_t take = 32 - s->nbuf < n ? 32 - s->nbuf : n;
        memcpy(s->buf + s->nbuf, p, take);
        s->nbuf += take;
        p += take;
        n -= take;
        if (s->nbuf < 32) return;
        stripe(s->v, s->buf);
        s->nbuf = 0;
    }
    for (; n >= 32; p += 32, n -= 32) stripe(s->v, p);
    if (n) memcpy(s->buf, p, n);
    s->nbuf = n;
}

uint64_t im_xxh64_digest(const im_xxh64_state_t *s)
{
    return finish(s->v, s->seed, s->total, s->buf, s->nbuf);
}

uint64_t im_xxh64(const void *data, size_t n, uint64_t seed)
{
    im_xxh64_state_t s;
    im_xxh64_init(&s, seed);
    im_xxh64_update(&s, data, n);
    return im_xxh64_digest(&s);
}
