/* bench_xor.c — micro-benchmark of the query path's Gorilla XOR chunk decoder
 * (tsdb__xor_decode_append) against the previous version of it (a copy kept
 * here, "old") and the reference tsdb__xor_next loop, in one process, over
 * realistic chunks: 120 samples at a 15 s step (exact, or with millisecond
 * jitter in every other chunk), values
 * like histogram bucket counters (small integer increments, buckets that rarely
 * move, occasional resets), plus float gauges. Rounds alternate the decoders;
 * prints the median and range of ns/sample for each.
 *
 *   bench_xor [ROUNDS]   (default 9) */
#include "util/base.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tsdb/tsdb_int.h"
#include "util/mem.h"

#define NCHUNK 2000
#define NS     120

static uint64_t rs = 0x2545f4914f6cdd1dULL;

static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

/* ---- The previous decoder, for comparison ---- */

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

static void old_decode_append(const uint8_t *b, uint32_t nbits, uint16_t n, int64_t mint,
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

/* ---- Driver ---- */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 9;
    if (rounds < 1) rounds = 1;
    tsdb__bw_t *w = im_calloc(NCHUNK, sizeof *w);
    for (int c = 0; c < NCHUNK; c++) {
        tsdb__xor_enc_t e;
        tsdb__xor_enc_init(&e);
        int64_t t = 1700000000000LL + (int64_t)(rnd() % 15000);
        double v = (double)(rnd() % 100000);
        int kind = (c / 2) % 10; /* 0-6 bucket counters, 7 rarely moving bucket, 8-9 gauges */
        for (int i = 0; i < NS; i++) {
            t += 15000 + (c % 2 ? (int64_t)(rnd() % 5) - 2 : 0); /* odd: jitter */
            if (kind <= 6) {
                if (rnd() % 2000 == 0) v = 0;
                v += (double)(rnd() % (unsigned)(1 + kind * 8));
            } else if (kind == 7) {
                if (rnd() % 20 == 0) v += 1;
            } else {
                v = (double)(int64_t)(rnd() % 100000) / 1000.0;
            }
            tsdb__xor_append(&e, &w[c], t, v);
        }
    }
    int64_t *ot = NULL;
    double *ov = NULL;
    size_t cap = 0;
    double *res[3];
    for (int k = 0; k < 3; k++) res[k] = im_calloc((size_t)rounds, sizeof(double));
    double sink = 0;
    const int reps = 20;
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 3; k++) {
            double t0 = now_ns();
            for (int rep = 0; rep < reps; rep++) {
                for (int c = 0; c < NCHUNK; c++) {
                    size_t cnt = 0;
                    if (k == 0) {
                        old_decode_append(w[c].b, w[c].nbits, NS, INT64_MIN, INT64_MAX, &ot, &ov,
                                          &cnt, &cap);
                    } else if (k == 1) {
                        tsdb__xor_decode_append(w[c].b, w[c].nbits, NS, INT64_MIN, INT64_MAX, &ot,
                                                &ov, &cnt, &cap);
                    } else {
                        if (cap < NS)
                            tsdb__xor_decode_append(w[c].b, w[c].nbits, NS, 0, -1, &ot, &ov, &cnt,
                                                    &cap);
                        tsdb__xor_dec_t d;
                        tsdb__xor_dec_init(&d, w[c].b, w[c].nbits, NS);
                        int64_t tt;
                        double vv;
                        while (tsdb__xor_next(&d, &tt, &vv)) {
                            ot[cnt] = tt;
                            ov[cnt++] = vv;
                        }
                    }
                    sink += ov[cnt - 1] + (double)ot[cnt / 2];
                }
            }
            res[k][r] = (now_ns() - t0) / ((double)reps * NCHUNK * NS);
        }
    }
    uint64_t bits = 0;
    for (int c = 0; c < NCHUNK; c++) bits += w[c].nbits;
    printf("chunks=%d samples_per_chunk=%d bits_per_sample=%.2f rounds=%d\n", NCHUNK, NS,
           (double)bits / ((double)NCHUNK * NS), rounds);
    static const char *names[3] = {"old_decode_append", "new_decode_append", "xor_next_loop"};
    double med[3];
    for (int k = 0; k < 3; k++) {
        qsort(res[k], (size_t)rounds, sizeof(double), cmpd);
        med[k] = res[k][rounds / 2];
        printf("%s_ns_per_sample=%.3f min=%.3f max=%.3f\n", names[k], med[k], res[k][0],
               res[k][rounds - 1]);
    }
    printf("speedup_new_vs_old=%.2f (sink %g)\n", med[0] / med[1], sink > 0 ? 1.0 : 0.0);
    for (int k = 0; k < 3; k++) im_free(res[k]);
    for (int c = 0; c < NCHUNK; c++) tsdb__bw_free(&w[c]);
    im_free(w);
    im_free(ot);
    im_free(ov);
    return 0;
}
