/* test_tsdb_bulk.c — the bulk read path (iter_bulk.c) against the reference
 * decoder: tsdb__xor_decode_append must give exactly the samples of a
 * tsdb__xor_next loop (bit-exact values, same stopping point) over random chunks,
 * every truncation of the bit stream, random corruption and time filters, reading
 * nothing past the chunk's bytes (exact-size copies, so ASan sees any overrun);
 * tsdb__iter_read_arrays must follow the next/at contract for every batch size. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "tsdb/tsdb_int.h"
#include "tsdb_test.h"
#include "util/mem.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static void gen(int64_t *t, double *v, size_t n, int kind)
{
    int64_t cur = tt_ts_first(&rng);
    double c = 0;
    for (size_t i = 0; i < n; i++) {
        t[i] = cur = tt_ts_next(&rng, cur, kind % 5);
        switch (kind % 4) {
        case 0: v[i] = tt_bitsd(tt_xorshift(&rng)); break;
        case 1:
            if (tt_xorshift(&rng) % 50 == 0) c = 0;
            c += (double)(tt_xorshift(&rng) % 20);
            v[i] = c;
            break;
        case 2: v[i] = (tt_xorshift(&rng) % 3 == 0) ? tt_bitsd(0x7ff0000000000002ULL) : 42.5; break;
        default: v[i] = (double)(int64_t)(tt_xorshift(&rng) % 200000 - 100000) / 1000.0; break;
        }
    }
}

/* Both decoders over b[0, (nbits+7)/8) agree. */
static void check(const uint8_t *src, uint32_t nbits, uint16_t n, int64_t mint, int64_t maxt)
{
    size_t nbytes = (nbits + 7) / 8;
    uint8_t *b = im_malloc(nbytes ? nbytes : 1);
    if (nbytes) memcpy(b, src, nbytes);
    int64_t rt[300];
    double rv[300];
    size_t rn = 0;
    tsdb__xor_dec_t d;
    tsdb__xor_dec_init(&d, b, nbits, n);
    int64_t tt;
    double vv;
    while (tsdb__xor_next(&d, &tt, &vv))
        if (tt >= mint && tt <= maxt) {
            rt[rn] = tt;
            rv[rn] = vv;
            rn++;
        }
    int64_t *t = NULL;
    double *v = NULL;
    size_t cnt = 3, cap = 0; /* appends after existing samples */
    t = im_malloc(3 * sizeof *t);
    v = im_malloc(3 * sizeof *v);
    cap = 3;
    tsdb__xor_decode_append(b, nbits, n, mint, maxt, &t, &v, &cnt, &cap);
    assert_int_equal(cnt, 3 + rn);
    for (size_t i = 0; i < rn; i++) {
        assert_int_equal(t[3 + i], rt[i]);
        assert_int_equal(tt_dbits(v[3 + i]), tt_dbits(rv[i]));
    }
    im_free(t);
    im_free(v);
    im_free(b);
}

static void test_decode_matches_reference(void **state)
{
    (void)state;
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + tt_xorshift(&rng) % 250;
        int64_t t[250];
        double v[250];
        gen(t, v, n, round);
        tsdb__bw_t w = {0};
        tsdb__xor_enc_t e;
        tsdb__xor_enc_init(&e);
        for (size_t i = 0; i < n; i++) tsdb__xor_append(&e, &w, t[i], v[i]);
        check(w.b, w.nbits, (uint16_t)n, INT64_MIN, INT64_MAX);
        check(w.b, w.nbits, (uint16_t)(n / 2), INT64_MIN, INT64_MAX);
        check(w.b, w.nbits, (uint16_t)n, t[n / 3], t[n - 1 - n / 4]);
        /* Truncations: every cut for a few rounds, random ones otherwise. */
        if (round < 20) {
            for (uint32_t cut = 0; cut < w.nbits; cut++)
                check(w.b, cut, (uint16_t)n, INT64_MIN, INT64_MAX);
        } else {
            check(w.b, (uint32_t)(tt_xorshift(&rng) % w.nbits), (uint16_t)n, INT64_MIN, INT64_MAX);
        }
        /* Corruption: flipped bits decode the same garbage (or stop) in both. */
        size_t nbytes = (w.nbits + 7) / 8;
        for (int k = 0; k < 4; k++) {
            uint8_t *c = im_malloc(nbytes);
            memcpy(c, w.b, nbytes);
            c[tt_xorshift(&rng) % nbytes] ^= (uint8_t)(1u << (tt_xorshift(&rng) % 8));
            check(c, w.nbits, (uint16_t)n, INT64_MIN, INT64_MAX);
            im_free(c);
        }
        tsdb__bw_free(&w);
    }
}

/* Special values and extreme timestamps: NaN payloads, infinities, denormals,
 * signed zeros and long constant runs; steps from 0 to 2^62 in either direction
 * and wrapping sums; chunks encoded from them are checked whole, truncated and
 * with several flipped bits, and raw random bytes are decoded as chunks. */
static double special(uint64_t r)
{
    static const uint64_t pat[] = {
        0x7ff8000000000000ULL, 0x7ff0000000000001ULL, 0xfff8000000000123ULL, 0x7ff0000000000000ULL,
        0xfff0000000000000ULL, 0x0000000000000001ULL, 0x000fffffffffffffULL, 0x8000000000000001ULL,
        0x0000000000000000ULL, 0x8000000000000000ULL, 0x3ff0000000000000ULL, 0x7fefffffffffffffULL};
    return tt_bitsd(pat[r % (sizeof pat / sizeof pat[0])]);
}

static void test_decode_special_values(void **state)
{
    (void)state;
    for (int round = 0; round < 600; round++) {
        size_t n = 1 + tt_xorshift(&rng) % 250;
        int64_t t[250];
        double v[250];
        int64_t cur = (int64_t)tt_xorshift(&rng);
        int tk = round % 6, vk = (round / 6) % 5;
        double c = special(tt_xorshift(&rng));
        for (size_t i = 0; i < n; i++) {
            uint64_t r = tt_xorshift(&rng);
            switch (tk) {
            case 0: cur += 15000 + (int64_t)(r % 7) - 3; break;
            case 1: cur = (int64_t)((uint64_t)cur + (r >> 1)); break; /* huge, wrapping */
            case 2: cur = (int64_t)((uint64_t)cur - (r >> (r % 64))); break;
            case 3: cur += (int64_t)(r % 5000) - 2500; break; /* dod in every bucket */
            case 4: cur = (int64_t)((uint64_t)cur + (r % 3 == 0 ? 1ULL << 62 : 0)); break;
            default: cur = i % 2 ? INT64_MAX : INT64_MIN; break;
            }
            t[i] = cur;
            uint64_t q = tt_xorshift(&rng);
            switch (vk) {
            case 0: v[i] = special(q); break;
            case 1: v[i] = c; break; /* constant */
            case 2: v[i] = q % 8 == 0 ? special(q >> 8) : c; break;
            case 3: v[i] = tt_bitsd(q & (q >> 7)); break; /* sparse bits, denormals */
            default: v[i] = tt_bitsd(q); break;
            }
        }
        tsdb__bw_t w = {0};
        tsdb__xor_enc_t e;
        tsdb__xor_enc_init(&e);
        for (size_t i = 0; i < n; i++) tsdb__xor_append(&e, &w, t[i], v[i]);
        check(w.b, w.nbits, (uint16_t)n, INT64_MIN, INT64_MAX);
        int64_t a = t[tt_xorshift(&rng) % n], z = t[tt_xorshift(&rng) % n];
        check(w.b, w.nbits, (uint16_t)n, a < z ? a : z, a < z ? z : a);
        check(w.b, w.nbits, (uint16_t)(n + 5), INT64_MIN, INT64_MAX); /* n beyond data */
        check(w.b, (uint32_t)(tt_xorshift(&rng) % w.nbits), (uint16_t)n, INT64_MIN, INT64_MAX);
        size_t nbytes = (w.nbits + 7) / 8;
        uint8_t *cb = im_malloc(nbytes);
        memcpy(cb, w.b, nbytes);
        for (int k = 0; k < 3; k++) {
            cb[tt_xorshift(&rng) % nbytes] ^= (uint8_t)(1u << (tt_xorshift(&rng) % 8));
            check(cb, w.nbits, (uint16_t)n, INT64_MIN, INT64_MAX);
        }
        im_free(cb);
        tsdb__bw_free(&w);
        /* Random bytes as a chunk. */
        uint8_t raw[400];
        size_t rl = 1 + tt_xorshift(&rng) % sizeof raw;
        for (size_t k = 0; k < rl; k++) raw[k] = (uint8_t)tt_xorshift(&rng);
        if (round % 2) memset(raw, 0, rl < 16 ? rl : 16); /* plausible header */
        check(raw, (uint32_t)(rl * 8 - tt_xorshift(&rng) % 8),
              (uint16_t)(1 + tt_xorshift(&rng) % 300), INT64_MIN, INT64_MAX);
    }
}

static void test_read_arrays(void **state)
{
    (void)state;
    int64_t st[37];
    double sv[37];
    for (size_t i = 0; i < 37; i++) {
        st[i] = (int64_t)i * 10;
        sv[i] = (double)i;
    }
    for (size_t n = 0; n <= 37; n += 6) {
        for (size_t max = 1; max <= 40; max++) {
            ssize_t pos = -1;
            int64_t t[40];
            double v[40];
            size_t got, total = 0;
            while ((got = tsdb__iter_read_arrays(st, sv, n, &pos, t, v, max)) > 0) {
                assert_true(got <= max);
                for (size_t k = 0; k < got; k++) {
                    assert_int_equal(t[k], st[total + k]);
                    assert_true(v[k] == sv[total + k]);
                }
                total += got;
                assert_int_equal(pos, (ssize_t)total - 1); /* at the last one read */
            }
            assert_int_equal(total, n);
            assert_int_equal(pos, (ssize_t)n);
            assert_int_equal(tsdb__iter_read_arrays(st, sv, n, &pos, t, v, max), 0);
        }
    }
    /* After some next calls (pos 4), a read continues with sample 5. */
    ssize_t pos = 4;
    int64_t t[2];
    double v[2];
    assert_int_equal(tsdb__iter_read_arrays(st, sv, 37, &pos, t, v, 2), 2);
    assert_int_equal(t[0], 50);
    assert_int_equal(pos, 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_matches_reference),
        cmocka_unit_test(test_decode_special_values),
        cmocka_unit_test(test_read_arrays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
