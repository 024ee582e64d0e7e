/* chunk_xor.c — Gorilla-style head chunks: a bit stream of delta-of-delta
 * timestamps and XOR-compressed values, plus the value-only XOR stream used as the
 * fallback value codec of blocks.
 *
 * Chunk bit layout (MSB first within each byte):
 *   sample 0: t as 64 raw bits, v as 64 raw bits
 *   sample 1: zigzag(t1 - t0) as a bucketed delta (below), then v as XOR
 *   sample i: zigzag-free delta-of-delta d = (ti - ti-1) - (ti-1 - ti-2) in buckets
 *     '0'                       d == 0
 *     '10'   + 7 bits           -63 <= d <= 64
 *     '110'  + 9 bits           -255 <= d <= 256
 *     '1110' + 12 bits          -2047 <= d <= 2048
 *     '1111' + 64 bits          anything else
 *   values: x = bits(v) ^ bits(prev)
 *     '0'                       x == 0
 *     '10' + meaningful bits    x fits the previous (lead, trail) window
 *     '11' + 5 bits lead + 6 bits (sig-1) + sig bits    a new window
 * Sample 1's delta uses the same buckets as a delta-of-delta against 0. Values
 * are copied bit-exact (NaN payloads included). */
#include "util/base.h"

#include "tsdb/tsdb_int.h"

/* ---- Bit stream ---- */

void tsdb__bw_free(tsdb__bw_t *w)
{
    if (w->b) im_free_tag(IM_MEM_TSDB, w->b, w->cap);
    w->b = NULL;
    w->nbits = w->cap = 0;
}

void tsdb__bw_put(tsdb__bw_t *w, uint64_t v, unsigned nbits)
{
    if (nbits == 0) return;
    uint32_t need = (w->nbits + nbits + 7) / 8;
    if (need > w->cap) {
        uint32_t nc = w->cap ? w->cap : 16;
        while (nc < need) nc = nc + nc / 2 + 8;
        w->b = im_realloc_tag(IM_MEM_TSDB, w->b, w->cap, nc);
        memset(w->b + w->cap, 0, nc - w->cap);
        w->cap = nc;
    }
    if (nbits < 64) v &= (1ULL << nbits) - 1;
    /* Bytes past the written bits are zero (memset on growth): the first byte
     * is ORed into, whole bytes stored, the last partial one stored shifted. */
    uint8_t *p = w->b + (w->nbits >> 3);
    unsigned room = 8 - (w->nbits & 7);
    w->nbits += nbits;
    if (nbits <= room) {
        *p |= (uint8_t)(v << (room - nbits));
        return;
    }
    nbits -= room;
    *p++ |= (uint8_t)(v >> nbits);
    while (nbits >= 8) {
        nbits -= 8;
        *p++ = (uint8_t)(v >> nbits);
    }
    if (nbits) *p = (uint8_t)(v << (8 - nbits));
}

bool tsdb__br_get(tsdb__br_t *r, unsigned nbits, uint64_t *out)
{
    if (nbits > r->nbits - r->pos || r->pos > r->nbits) return false;
    uint64_t v = 0;
    while (nbits > 0) {
        uint32_t byte = r->pos >> 3;
        unsigned used = r->pos & 7;
        unsigned room = 8 - used;
        unsigned take = nbits < room ? nbits : room;
        uint8_t bits = (uint8_t)((r->b[byte] >> (room - take)) & ((1u << take) - 1));
        v = (take == 64 ? 0 : (v << take)) | bits;
        r->pos += take;
        nbits -= take;
    }
    *out = v;
    return true;
}

static inline uint64_t dbits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}
static inline double bitsd(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* ---- Timestamp buckets ---- */

static void put_dod(tsdb__bw_t *w, int64_t d)
{
    if (d == 0) {
        tsdb__bw_put(w, 0, 1);
    } else if (d >= -63 && d <= 64) {
        tsdb__bw_put(w, 2, 2);
        tsdb__bw_put(w, (uint64_t)d, 7);
    } else if (d >= -255 && d <= 256) {
        tsdb__bw_put(w, 6, 3);
        tsdb__bw_put(w, (uint64_t)d, 9);
    } else if (d >= -2047 && d <= 2048) {
        tsdb__bw_put(w, 14, 4);
        tsdb__bw_put(w, (uint64_t)d, 12);
    } else {
        tsdb__bw_put(w, 15, 4);
        tsdb__bw_put(w, (uint64_t)d, 64);
    }
}

static int64_t sext(uint64_t v, unsigned nbits)
{
    /* The buckets are asymmetric (-63..64): values above 2^(n-1)-1 are negative
     * except the single top positive value, which is stored as its bit pattern. */
    uint64_t top = 1ULL << (nbits - 1);
    if (v > top) return (int64_t)(v - (1ULL << nbits));
    return (int64_t)v;
}

static bool get_dod(tsdb__br_t *r, int64_t *d)
{
    uint64_t b;
    unsigned ones = 0;
    while (ones < 4) {
        if (!tsdb__br_get(r, 1, &b)) return false;
        if (b == 0) break;
        ones++;
    }
    static const unsigned widths[5] = {0, 7, 9, 12, 64};
    if (ones == 0) {
        *d = 0;
        return true;
    }
    unsigned nb = widths[ones];
    if (!tsdb__br_get(r, nb, &b)) return false;
    *d = nb == 64 ? (int64_t)b : sext(b, nb);
    return true;
}

/* ---- Value XOR ---- */

static void put_xor(tsdb__bw_t *w, uint64_t prev, uint64_t cur, uint8_t *lead, uint8_t *trail)
{
    uint64_t x = prev ^ cur;
    if (x == 0) {
        tsdb__bw_put(w, 0, 1);
        return;
    }
    unsigned l = (unsigned)__builtin_clzll(x);
    unsigned t = (unsigned)__builtin_ctzll(x);
    if (l > 31) l = 31;
    if (*lead != 0xff && l >= *lead && t >= *trail) {
        tsdb__bw_put(w, 2, 2);
        unsigned sig = 64 - *lead - *trail;
        tsdb__bw_put(w, x >> *trail, sig);
        return;
    }
    unsigned sig = 64 - l - t;
    tsdb__bw_put(w, 3, 2);
    tsdb__bw_put(w, l, 5);
    tsdb__bw_put(w, sig - 1, 6);
    tsdb__bw_put(w, x >> t, sig);
    *lead = (uint8_t)l;
    *trail = (uint8_t)t;
}

static bool get_xor(tsdb__br_t *r, uint64_t *prev, uint8_t *lead, uint8_t *trail)
{
    uint64_t b;
    if (!tsdb__br_get(r, 1, &b)) return false;
    if (b == 0) return true;
    if (!tsdb__br_get(r, 1, &b)) return false;
    if (b == 0) {
        if (*lead == 0xff) return false;
    } else {
        uint64_t l, s;
        if (!tsdb__br_get(r, 5, &l) || !tsdb__br_get(r, 6, &s)) return false;
        unsigned sig = (unsigned)s + 1;
        if (l + sig > 64) return false;
        *lead = (uint8_t)l;
        *trail = (uint8_t)(64 - l - sig);
    }
    unsigned sig = 64 - *lead - *trail;
    uint64_t x;
    if (!tsdb__br_get(r, sig, &x)) return false;
    *prev ^= sig == 64 ? x : (x << *trail);
    return true;
}

/* ---- Chunk encoder / decoder ---- */

void tsdb__xor_enc_init(tsdb__xor_enc_t *e)
{
    memset(e, 0, sizeof *e);
    e->lead = 0xff;
}

void tsdb__xor_append(tsdb__xor_enc_t *e, tsdb__bw_t *w, int64_t t, double v)
{
    uint64_t vb = dbits(v);
    if (e->n == 0) {
        tsdb__bw_put(w, (uint64_t)t, 64);
        tsdb__bw_put(w, vb, 64);
    } else if (e->n == 1) {
        int64_t d = (int64_t)((uint64_t)t - (uint64_t)e->t);
        put_dod(w, d);
        put_xor(w, e->vbits, vb, &e->lead, &e->trail);
        e->tdelta = d;
    } else {
        int64_t d = (int64_t)((uint64_t)t - (uint64_t)e->t);
        put_dod(w, (int64_t)((uint64_t)d - (uint64_t)e->tdelta));
        put_xor(w, e->vbits, vb, &e->lead, &e->trail);
        e->tdelta = d;
    }
    e->t = t;
    e->vbits = vb;
    e->n++;
}

void tsdb__xor_dec_init(tsdb__xor_dec_t *d, const uint8_t *b, uint32_t nbits, uint16_t n)
{
    memset(d, 0, sizeof *d);
    d->r.b = b;
    d->r.nbits = nbits;
    d->n = n;
    d->lead = 0xff;
}

bool tsdb__xor_next(tsdb__xor_dec_t *d, int64_t *t, double *v)
{
    if (d->i >= d->n) return false;
    if (d->i == 0) {
        uint64_t tb, vb;
        if (!tsdb__br_get(&d->r, 64, &tb) || !tsdb__br_get(&d->r, 64, &vb)) return false;
        d->t = (int64_t)tb;
        d->vbits = vb;
    } else {
        int64_t dd;
        if (!get_dod(&d->r, &dd)) return false;
        if (d->i == 1)
            d->tdelta = dd;
        else
            d->tdelta = (int64_t)((uint64_t)d->tdelta + (uint64_t)dd);
        d->t = (int64_t)((uint64_t)d->t + (uint64_t)d->tdelta);
        if (!get_xor(&d->r, &d->vbits, &d->lead, &d->trail)) return false;
    }
    d->i++;
    *t = d->t;
    *v = bitsd(d->vbits);
    return true;
}

void tsdb__xorv_encode(tsdb__bw_t *w, const double *v, size_t n)
{
    uint64_t prev = 0;
    uint8_t lead = 0xff, trail = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = dbits(v[i]);
        if (i == 0)
            tsdb__bw_put(w, b, 64);
        else
            put_xor(w, prev, b, &lead, &trail);
        prev = b;
    }
}

bool tsdb__xorv_decode(tsdb__br_t *r, double *v, size_t n)
{
    uint64_t prev = 0;
    uint8_t lead = 0xff, trail = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0) {
            if (!tsdb__br_get(r, 64, &prev)) return false;
        } else if (!get_xor(r, &prev, &lead, &trail)) {
            return false;
        }
        v[i] = bitsd(prev);
    }
    return true;
}
