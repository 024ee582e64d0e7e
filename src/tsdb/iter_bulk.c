/* iter_bulk.c — the bulk read path of the query iterator, kept apart from
 * querier.c so the iterator's own file only carries two small hooks: (1) a
 * Gorilla XOR chunk decoder that appends a whole chunk's samples within [mint,
 * maxt] to the iterator's arrays in one call, reading the bit stream 64 bits at a
 * time (tsdb__xor_next reads it a byte at a time through a call per field); it
 * decodes exactly what tsdb__xor_next does, stopping at the same point on
 * malformed data; (2) the optional tsdb_iter_vt_t.read method over those decoded
 * arrays, so a reader pays one indirect call per batch instead of two per sample. */
#include "util/base.h"

#include <string.h>

#include "tsdb/tsdb_int.h"

typedef struct fr {
    const uint8_t *b;
    uint32_t nbits, nbytes, pos;
} fr_t;

static inline uint64_t load_be64(const fr_t *r, uint32_t byte)
{
    uint64_t w = 0;
    if (byte + 8 <= r->nbytes) {
        memcpy(&w, r->b + byte, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        return w;
    }
    for (uint32_t k = 0; k < 8; k++) w = (w << 8) | (byte + k < r->nbytes ? r->b[byte + k] : 0);
    return w;
}

/* The next n bits (1..64), most significant first; false if fewer remain. */
static inline bool fr_get(fr_t *r, unsigned n, uint64_t *out)
{
    if (n > r->nbits - r->pos) return false;
    uint32_t byte = r->pos >> 3;
    unsigned sh = r->pos & 7;
    uint64_t v = load_be64(r, byte) << sh;
    if (n + sh > 64) v |= (uint64_t)(byte + 8 < r->nbytes ? r->b[byte + 8] : 0) >> (8 - sh);
    *out = v >> (64 - n);
    r->pos += n;
    return true;
}

static inline int64_t sext(uint64_t v, unsigned nbits)
{
    uint64_t top = 1ULL << (nbits - 1);
    if (v > top) return (int64_t)(v - (1ULL << nbits));
    return (int64_t)v;
}

/* The 57 or more bits from pos, most significant first (zeros past the end). */
static inline uint64_t fr_window(const fr_t *r)
{
    return load_be64(r, r->pos >> 3) << (r->pos & 7);
}

static inline bool fr_dod(fr_t *r, int64_t *d)
{
    static const unsigned widths[5] = {0, 7, 9, 12, 64};
    uint64_t b;
    if (r->nbits - r->pos >= 16) { /* prefix and a short value within one window */
        uint64_t w = fr_window(r);
        unsigned ones = ~w ? (unsigned)__builtin_clzll(~w) : 64;
        if (ones == 0) {
            r->pos += 1;
            *d = 0;
            return true;
        }
        if (ones > 4) ones = 4;
        unsigned pre = ones < 4 ? ones + 1 : 4, nb = widths[ones];
        if (nb < 64) {
            r->pos += pre + nb;
            *d = sext((w << pre) >> (64 - nb), nb);
            return true;
        }
        r->pos += pre;
        if (!fr_get(r, 64, &b)) return false;
        *d = (int64_t)b;
        return true;
    }
    unsigned ones = 0;
    while (ones < 4) {
        if (!fr_get(r, 1, &b)) return false;
        if (b == 0) break;
        ones++;
    }
    if (ones == 0) {
        *d = 0;
        return true;
    }
    unsigned nb = widths[ones];
    if (!fr_get(r, nb, &b)) return false;
    *d = nb == 64 ? (int64_t)b : sext(b, nb);
    return true;
}

static inline bool fr_xor(fr_t *r, uint64_t *prev, uint8_t *lead, uint8_t *trail)
{
    uint64_t b;
    if (r->nbits - r->pos >= 13) { /* control bits within one window */
        uint64_t w = fr_window(r);
        if (!(w >> 63)) {
            r->pos += 1;
            return true;
        }
        if (!((w >> 62) & 1)) {
            r->pos += 2;
            if (*lead == 0xff) return false;
        } else {
            unsigned l = (unsigned)((w >> 57) & 31), sig = (unsigned)((w >> 51) & 63) + 1;
            r->pos += 13;
            if (l + sig > 64) return false;
            *lead = (uint8_t)l;
            *trail = (uint8_t)(64 - l - sig);
        }
        unsigned sig = 64 - *lead - *trail;
        uint64_t x;
        if (!fr_get(r, sig, &x)) return false;
        *prev ^= sig == 64 ? x : (x << *trail);
        return true;
    }
    if (!fr_get(r, 1, &b)) return false;
    if (b == 0) return true;
    if (!fr_get(r, 1, &b)) return false;
    if (b == 0) {
        if (*lead == 0xff) return false;
    } else {
        uint64_t l, s;
        if (!fr_get(r, 5, &l) || !fr_get(r, 6, &s)) return false;
        unsigned sig = (unsigned)s + 1;
        if (l + sig > 64) return false;
        *lead = (uint8_t)l;
        *trail = (uint8_t)(64 - l - sig);
    }
    unsigned sig = 64 - *lead - *trail;
    uint64_t x;
    if (!fr_get(r, sig, &x)) return false;
    *prev ^= sig == 64 ? x : (x << *trail);
    return true;
}

void tsdb__xor_decode_append(const uint8_t *b, uint32_t nbits, uint16_t n, int64_t mint,
                             int64_t maxt, int64_t **pt, double **pv, size_t *pn, size_t *pcap)
{
    if (*pn + n > *pcap) {
        size_t cap = *pcap ? *pcap : 128;
        while (cap < *pn + n) cap *= 2;
        *pt = im_realloc(*pt, cap * sizeof **pt);
        *pv = im_realloc(*pv, cap * sizeof **pv);
        *pcap = cap;
    }
    fr_t r = {b, nbits, (nbits + 7) / 8, 0};
    int64_t *ot = *pt;
    double *ov = *pv;
    size_t w = *pn;
    int64_t t = 0, tdelta = 0;
    uint64_t vbits = 0;
    uint8_t lead = 0xff, trail = 0;
    for (uint16_t i = 0; i < n; i++) {
        if (i == 0) {
            uint64_t tb, vb;
            if (!fr_get(&r, 64, &tb) || !fr_get(&r, 64, &vb)) break;
            t = (int64_t)tb;
            vbits = vb;
        } else {
            int64_t dd;
            if (!fr_dod(&r, &dd)) break;
            tdelta = i == 1 ? dd : (int64_t)((uint64_t)tdelta + (uint64_t)dd);
            t = (int64_t)((uint64_t)t + (uint64_t)tdelta);
            if (!fr_xor(&r, &vbits, &lead, &trail)) break;
        }
        if (t >= mint && t <= maxt) {
            ot[w] = t;
            memcpy(&ov[w], &vbits, sizeof vbits);
            w++;
        }
    }
    *pn = w;
}

size_t tsdb__iter_read_arrays(const int64_t *src_t, const double *src_v, size_t n, ssize_t *pos,
                              int64_t *t, double *v, size_t max)
{
    size_t from = *pos < 0 ? 0 : (size_t)*pos + 1;
    if (*pos >= (ssize_t)n || from >= n) {
        *pos = (ssize_t)n;
        return 0;
    }
    size_t k = n - from;
    if (k > max) k = max;
    if (k == 0) return 0;
    memcpy(t, src_t + from, k * sizeof *t);
    memcpy(v, src_v + from, k * sizeof *v);
    *pos = (ssize_t)(from + k - 1);
    return k;
}
