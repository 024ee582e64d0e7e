/* test_tsdb_enc.c — round trips of every tsdb encoding (Gorilla chunks, the
 * value-only XOR stream, block timestamp and value columns, varints) over random
 * and adversarial inputs: NaN payloads, the staleness marker, ±Inf, denormals,
 * -0, equal timestamps, huge gaps, counters with resets, decimals. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>

#include "tsdb/tsdb_int.h"
#include "tsdb_test.h"

static uint64_t rng = 88172645463325252ULL;

static const uint64_t special[] = {
    0x7ff0000000000002ULL, /* stale */
    0x7ff8000000000001ULL, 0xfff8000000000000ULL,
    0x7ff4000000000000ULL,                        /* NaNs */
    0x7ff0000000000000ULL, 0xfff0000000000000ULL, /* ±Inf */
    0x0000000000000001ULL, 0x800fffffffffffffULL, /* denormals */
    0x8000000000000000ULL, 0,                     /* -0, +0 */
    0x7fefffffffffffffULL, 0x3ff0000000000000ULL,
};

/* Value generators: kind 0 random bits, 1 specials, 2 counter with resets,
 * 3 decimals, 4 constant, 5 small ints gauge, 6 mix. */
static void gen_values(double *v, size_t n, int kind)
{
    double c = 0;
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case 0: v[i] = tt_bitsd(tt_xorshift(&rng)); break;
        case 1: v[i] = tt_bitsd(special[tt_xorshift(&rng) % IM_ARRAY_LEN(special)]); break;
        case 2:
            if (tt_xorshift(&rng) % 50 == 0) c = 0;
            c += (double)(tt_xorshift(&rng) % 20);
            v[i] = c;
            break;
        case 3: v[i] = (double)(int64_t)(tt_xorshift(&rng) % 200000 - 100000) / 1000.0; break;
        case 4: v[i] = 42.5; break;
        case 5: v[i] = (double)(tt_xorshift(&rng) % 8); break;
        default:
            v[i] = (tt_xorshift(&rng) % 5 == 0)
                       ? tt_bitsd(special[tt_xorshift(&rng) % IM_ARRAY_LEN(special)])
                       : (double)(tt_xorshift(&rng) % 1000) / 10.0;
        }
    }
}

/* Timestamp generators: 0 regular 15 s, 1 jitter, 2 equal, 3 huge gaps, 4 random. */
static void gen_ts(int64_t *t, size_t n, int kind)
{
    int64_t cur = tt_ts_first(&rng);
    for (size_t i = 0; i < n; i++) t[i] = cur = tt_ts_next(&rng, cur, kind);
}

static void test_xor_chunk(void **state)
{
    (void)state;
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + tt_xorshift(&rng) % 200;
        int64_t t[200];
        double v[200];
        gen_ts(t, n, round % 5);
        gen_values(v, n, round % 7);
        tsdb__bw_t w = {0};
        tsdb__xor_enc_t e;
        tsdb__xor_enc_init(&e);
        for (size_t i = 0; i < n; i++) tsdb__xor_append(&e, &w, t[i], v[i]);
        tsdb__xor_dec_t d;
        tsdb__xor_dec_init(&d, w.b, w.nbits, (uint16_t)n);
        for (size_t i = 0; i < n; i++) {
            int64_t tt;
            double vv;
            assert_true(tsdb__xor_next(&d, &tt, &vv));
            assert_int_equal(tt, t[i]);
            assert_int_equal(tt_dbits(vv), tt_dbits(v[i]));
        }
        int64_t tt;
        double vv;
        assert_false(tsdb__xor_next(&d, &tt, &vv));
        /* Truncated input never reads past the end. */
        if (w.nbits > 8) {
            tsdb__xor_dec_init(&d, w.b, w.nbits / 2, (uint16_t)n);
            while (tsdb__xor_next(&d, &tt, &vv)) {
            }
        }
        tsdb__bw_free(&w);
    }
}

static void test_extreme_timestamps(void **state)
{
    (void)state;
    int64_t t[] = {INT64_MIN, INT64_MIN + 1, 0, INT64_MAX - 5, INT64_MAX};
    tsdb__bw_t w = {0};
    tsdb__xor_enc_t e;
    tsdb__xor_enc_init(&e);
    for (size_t i = 0; i < 5; i++) tsdb__xor_append(&e, &w, t[i], (double)i);
    tsdb__xor_dec_t d;
    tsdb__xor_dec_init(&d, w.b, w.nbits, 5);
    for (size_t i = 0; i < 5; i++) {
        int64_t tt;
        double vv;
        assert_true(tsdb__xor_next(&d, &tt, &vv));
        assert_int_equal(tt, t[i]);
    }
    tsdb__bw_free(&w);
    im_buf_t b;
    im_buf_init(&b, 0);
    tsdb__ts_encode(&b, t, 5);
    int64_t *o;
    size_t n;
    assert_true(tsdb__ts_decode((const uint8_t *)b.data, b.len, NULL, &o, &n));
    assert_int_equal(n, 5);
    for (size_t i = 0; i < 5; i++) assert_int_equal(o[i], t[i]);
    im_free(o);
    im_buf_free(&b);
}

static void test_columns(void **state)
{
    (void)state;
    size_t total_raw = 0, total_n = 0;
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + tt_xorshift(&rng) % 600;
        int64_t *t = im_malloc(n * sizeof *t);
        double *v = im_malloc(n * sizeof *v), *o = im_malloc(n * sizeof *o);
        gen_ts(t, n, round % 5);
        gen_values(v, n, round % 7);
        im_buf_t b;
        im_buf_init(&b, 0);
        tsdb__ts_encode(&b, t, n);
        size_t tlen = b.len;
        tsdb__vals_encode(&b, v, n);
        int64_t *to;
        size_t tn, used;
        assert_true(tsdb__ts_decode((const uint8_t *)b.data, b.len, &used, &to, &tn));
        assert_int_equal(used, tlen);
        assert_int_equal(tn, n);
        for (size_t i = 0; i < n; i++) assert_int_equal(to[i], t[i]);
        assert_true(tsdb__vals_decode((const uint8_t *)b.data + tlen, b.len - tlen, &used, o, n));
        assert_int_equal(used, b.len - tlen);
        for (size_t i = 0; i < n; i++) assert_int_equal(tt_dbits(o[i]), tt_dbits(v[i]));
        if (round % 7 == 2) {
            total_raw += b.len - tlen;
            total_n += n;
        }
        /* Every truncation fails cleanly or decodes something, never crashes. */
        for (size_t cut = 0; cut < b.len - tlen; cut += 1 + (b.len - tlen) / 7)
            (void)tsdb__vals_decode((const uint8_t *)b.data + tlen, cut, NULL, o, n);
        im_free(to);
        im_buf_free(&b);
        im_free(t);
        im_free(v);
        im_free(o);
    }
    /* Counters cost about a byte per sample before zstd. */
    assert_true(total_raw < total_n * 2);
}

static void test_decimal_exactness(void **state)
{
    (void)state;
    /* Values that look decimal but are not exactly k-digit decimals stay exact. */
    double v[] = {0.1, 0.2,       0.30000000000000004, 1e-300, 123456789.123, -0.0,
                  3.0, 1.0 / 3.0, 9007199254740993.0,  1e21,   -5e-324};
    size_t n = IM_ARRAY_LEN(v);
    im_buf_t b;
    im_buf_init(&b, 0);
    tsdb__vals_encode(&b, v, n);
    double o[16];
    assert_true(tsdb__vals_decode((const uint8_t *)b.data, b.len, NULL, o, n));
    for (size_t i = 0; i < n; i++) assert_int_equal(tt_dbits(o[i]), tt_dbits(v[i]));
    im_buf_free(&b);
}

static void test_varints(void **state)
{
    (void)state;
    im_buf_t b;
    im_buf_init(&b, 0);
    int64_t vals[] = {0, 1, -1, 63, -64, INT64_MAX, INT64_MIN, 1234567890123LL};
    for (size_t i = 0; i < IM_ARRAY_LEN(vals); i++) tsdb__put_varint(&b, vals[i]);
    tsdb__put_uvarint(&b, UINT64_MAX);
    const uint8_t *p = (const uint8_t *)b.data, *end = p + b.len;
    for (size_t i = 0; i < IM_ARRAY_LEN(vals); i++) {
        int64_t x;
        assert_true(tsdb__get_varint(&p, end, &x));
        assert_int_equal(x, vals[i]);
    }
    uint64_t u;
    assert_true(tsdb__get_uvarint(&p, end, &u));
    assert_true(u == UINT64_MAX);
    assert_false(tsdb__get_uvarint(&p, end, &u));
    uint8_t bad[11];
    memset(bad, 0xff, sizeof bad);
    p = bad;
    assert_false(tsdb__get_uvarint(&p, bad + sizeof bad, &u));
    im_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xor_chunk), cmocka_unit_test(test_extreme_timestamps),
        cmocka_unit_test(test_columns),   cmocka_unit_test(test_decimal_exactness),
        cmocka_unit_test(test_varints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
