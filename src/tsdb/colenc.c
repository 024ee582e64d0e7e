/* colenc.c — the column codecs of block files, chosen per series to be small
 * before the general compressor (zstd) runs over them, and always bit-exact.
 *
 * Timestamp column:
 *   uvarint n | varint t0 | varint (t1 - t0) | zigzag varint dod_i ... (n - 2 of them)
 * With regular scrapes every dod is 0 and the column is ~1 byte per sample before
 * zstd; identical columns are stored once per block (block.c).
 *
 * Value column (n is known from the series table):
 *   u8 mode
 *   mode 0  CONST   u64 bits                          every value has these bits
 *   mode 1  DECIMAL u8 k | u8 order | uvarint nexc | (uvarint gap, u64 bits)*nexc |
 *                   varint m0 | zigzag varint diff_i ... (n - 1)
 *           value i = (double)m_i / 10^k, which IEEE division gives back exactly
 *           for every value that was accepted (the encoder checks each one). order
 *           1 stores m_i - m_i-1 (gauges), order 2 the delta of deltas (counters).
 *           Values that are not such decimals (NaN, staleness markers, ±Inf, -0,
 *           long fractions) are exceptions: stored raw at their position (gap from
 *           the previous exception), their m repeats the previous one.
 *   mode 2  XOR     uvarint nbytes | Gorilla XOR bit stream (chunk_xor.c)
 * The encoder tries all and keeps the shortest. */
#include "util/base.h"

#include <math.h>

#include "tsdb/tsdb_int.h"

/* ---- Integers ---- */

void tsdb__put_uvarint(im_buf_t *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    while (v >= 0x80) {
        tmp[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    tmp[n++] = (uint8_t)v;
    (void)im_buf_append(b, tmp, n);
}

void tsdb__put_varint(im_buf_t *b, int64_t v)
{
    tsdb__put_uvarint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

bool tsdb__get_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    unsigned shift = 0;
    const uint8_t *q = *p;
    while (q < end) {
        uint8_t c = *q++;
        if (shift == 63 && c > 1) return false;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *p = q;
            *v = r;
            return true;
        }
        shift += 7;
        if (shift > 63) return false;
    }
    return false;
}

bool tsdb__get_varint(const uint8_t **p, const uint8_t *end, int64_t *v)
{
    uint64_t u;
    if (!tsdb__get_uvarint(p, end, &u)) return false;
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return true;
}

void tsdb__put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
void tsdb__put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
uint32_t tsdb__get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}
uint64_t tsdb__get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* ---- Timestamps ---- */

void tsdb__ts_encode(im_buf_t *out, const int64_t *t, size_t n)
{
    tsdb__put_uvarint(out, n);
    if (n == 0) return;
    tsdb__put_varint(out, t[0]);
    if (n == 1) return;
    int64_t d = (int64_t)((uint64_t)t[1] - (uint64_t)t[0]);
    tsdb__put_varint(out, d);
    for (size_t i = 2; i < n; i++) {
        int64_t nd = (int64_t)((uint64_t)t[i] - (uint64_t)t[i - 1]);
        tsdb__put_varint(out, (int64_t)((uint64_t)nd - (uint64_t)d));
        d = nd;
    }
}

bool tsdb__ts_decode(const uint8_t *p, size_t len, size_t *used, int64_t **t, size_t *n)
{
    const uint8_t *q = p, *end = p + len;
    uint64_t cnt;
    *t = NULL;
    if (!tsdb__get_uvarint(&q, end, &cnt) || cnt > len * 1ULL + 1) return false;
    int64_t *o = im_malloc((cnt ? cnt : 1) * sizeof *o);
    int64_t d = 0;
    for (uint64_t i = 0; i < cnt; i++) {
        int64_t x;
        if (!tsdb__get_varint(&q, end, &x)) {
            im_free(o);
            return false;
        }
        if (i == 0)
            o[0] = x;
        else {
            d = i == 1 ? x : (int64_t)((uint64_t)d + (uint64_t)x);
            o[i] = (int64_t)((uint64_t)o[i - 1] + (uint64_t)d);
        }
    }
    *t = o;
    *n = cnt;
    if (used) *used = (size_t)(q - p);
    return true;
}

/* ---- Values ---- */

static const double p10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                             1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
#define MAXK   15
#define MAXMAN 9007199254740992.0 /* 2^53 */

static inline uint64_t dbits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* m such that m / 10^k == v bit-exactly, or false. */
static bool as_decimal(double v, int k, int64_t *m)
{
    if (!isfinite(v) || (v == 0 && signbit(v))) return false;
    double s = v * p10[k];
    if (!(fabs(s) < MAXMAN)) return false;
    double r = nearbyint(s);
    double back = r / p10[k];
    if (dbits(back) != dbits(v)) return false;
    *m = (int64_t)r;
    return true;
}

static int min_k(double v)
{
    int64_t m;
    for (int k = 0; k <= MAXK; k++)
        if (as_decimal(v, k, &m)) return k;
    return -1;
}

static void encode_decimal(im_buf_t *out, const double *v, size_t n, int k, int order, int64_t *m,
                           uint8_t *exc)
{
    size_t nexc = 0;
    int64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x;
        if (as_decimal(v[i], k, &x)) {
            m[i] = x;
            exc[i] = 0;
        } else {
            m[i] = prev;
            exc[i] = 1;
            nexc++;
        }
        prev = m[i];
    }
    (void)im_buf_putc(out, 1);
    (void)im_buf_putc(out, (char)k);
    (void)im_buf_putc(out, (char)order);
    tsdb__put_uvarint(out, nexc);
    size_t last = 0;
    for (size_t i = 0; i < n; i++) {
        if (!exc[i]) continue;
        tsdb__put_uvarint(out, i - last);
        last = i;
        uint8_t b8[8];
        tsdb__put_u64(b8, dbits(v[i]));
        (void)im_buf_append(out, b8, 8);
    }
    if (n == 0) return;
    tsdb__put_varint(out, m[0]);
    int64_t pd = 0;
    for (size_t i = 1; i < n; i++) {
        int64_t d = (int64_t)((uint64_t)m[i] - (uint64_t)m[i - 1]);
        if (order == 1)
            tsdb__put_varint(out, d);
        else
            tsdb__put_varint(out, (int64_t)((uint64_t)d - (uint64_t)pd));
        pd = d;
    }
}

void tsdb__vals_encode(im_buf_t *out, const double *v, size_t n)
{
    bool same = true;
    for (size_t i = 1; i < n && same; i++) same = dbits(v[i]) == dbits(v[0]);
    if (n > 0 && same) {
        uint8_t b[9] = {0};
        tsdb__put_u64(b + 1, dbits(v[0]));
        (void)im_buf_append(out, b, 9);
        return;
    }
    /* Candidate: XOR. */
    im_buf_t best;
    im_buf_init(&best, 0);
    tsdb__bw_t w = {0};
    tsdb__xorv_encode(&w, v, n);
    (void)im_buf_putc(&best, 2);
    tsdb__put_uvarint(&best, (w.nbits + 7) / 8);
    (void)im_buf_append(&best, w.b ? (const char *)w.b : "", (w.nbits + 7) / 8);
    tsdb__bw_free(&w);
    /* Candidate: decimal with the smallest k that covers the non-exceptional values. */
    int k = -1;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        int ki = min_k(v[i]);
        if (ki < 0)
            bad++;
        else if (ki > k)
            k = ki;
    }
    if (k >= 0 && bad * 4 <= n) {
        int64_t *m = im_malloc(n * sizeof *m);
        uint8_t *exc = im_malloc(n);
        im_buf_t cand;
        im_buf_init(&cand, 0);
        for (int order = 1; order <= 2; order++) {
            im_buf_reset(&cand);
            encode_decimal(&cand, v, n, k, order, m, exc);
            if (cand.len < best.len) {
                im_buf_t t = best;
                best = cand;
                cand = t;
            }
        }
        im_buf_free(&cand);
        im_free(m);
        im_free(exc);
    }
    (void)im_buf_append(out, best.data, best.len);
    im_buf_free(&best);
}

bool tsdb__vals_decode(const uint8_t *p, size_t len, size_t *used, double *v, size_t n)
{
    const uint8_t *q = p, *end = p + len;
    if (q >= end) return false;
    uint8_t mode = *q++;
    if (mode == 0) {
        if (end - q < 8) return false;
        uint64_t b = tsdb__get_u64(q);
        q += 8;
        double d;
        memcpy(&d, &b, sizeof d);
        for (size_t i = 0; i < n; i++) v[i] = d;
    } else if (mode == 2) {
        uint64_t nb;
        if (!tsdb__get_uvarint(&q, end, &nb) || nb > (uint64_t)(end - q)) return false;
        if (nb > UINT32_MAX / 8) return false;
        tsdb__br_t r = {q, (uint32_t)(nb * 8), 0};
        if (!tsdb__xorv_decode(&r, v, n)) return false;
        q += nb;
    } else if (mode == 1) {
        if (end - q < 2) return false;
        int k = q[0], order = q[1];
        q += 2;
        if (k > MAXK || (order != 1 && order != 2)) return false;
        uint64_t nexc;
        if (!tsdb__get_uvarint(&q, end, &nexc) || nexc > n) return false;
        const uint8_t *excp = q;
        for (uint64_t i = 0; i < nexc; i++) {
            uint64_t gap;
            if (!tsdb__get_uvarint(&q, end, &gap) || end - q < 8) return false;
            q += 8;
        }
        int64_t m = 0, d = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t x;
            if (!tsdb__get_varint(&q, end, &x)) return false;
            if (i == 0)
                m = x;
            else if (order == 1) {
                m = (int64_t)((uint64_t)m + (uint64_t)x);
            } else {
                d = (int64_t)((uint64_t)d + (uint64_t)x);
                m = (int64_t)((uint64_t)m + (uint64_t)d);
            }
            v[i] = (double)m / p10[k];
        }
        /* Patch the exceptions in. */
        const uint8_t *e = excp;
        uint64_t pos = 0;
        for (uint64_t i = 0; i < nexc; i++) {
            uint64_t gap;
            (void)tsdb__get_uvarint(&e, end, &gap);
            pos += gap;
            if (pos >= n) return false;
            uint64_t b = tsdb__get_u64(e);
            e += 8;
            memcpy(&v[pos], &b, sizeof b);
        }
    } else {
        return false;
    }
    if (used) *used = (size_t)(q - p);
    return true;
}
