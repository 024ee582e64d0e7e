/* test_chunk_hist.c — the native-histogram chunk codec (tsdb/chunk_hist.h):
 * bit-exact round trips of counter-like (integer) and float histograms, the
 * layout rules that cut a new chunk, and malformed input (every truncation, a
 * bad version, absurd sizes) refused without reading past the bytes. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "tsdb/chunk_hist.h"
#include "util/mem.h"

static uint64_t rs = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}

static storage_fh_t *mk(uint32_t npos, uint32_t nneg, uint32_t ncustom)
{
    return storage_fh_place(im_malloc(storage_fh_size(npos, nneg, ncustom)), npos, nneg, ncustom);
}

static uint64_t bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static void assert_same(const storage_fh_t *a, const storage_fh_t *b)
{
    assert_int_equal(a->schema, b->schema);
    assert_int_equal(a->hint, b->hint);
    assert_true(bits(a->count) == bits(b->count) && bits(a->sum) == bits(b->sum));
    assert_true(bits(a->zcount) == bits(b->zcount) && bits(a->zthresh) == bits(b->zthresh));
    assert_int_equal(a->poff, b->poff);
    assert_int_equal(a->npos, b->npos);
    assert_int_equal(a->noff, b->noff);
    assert_int_equal(a->nneg, b->nneg);
    assert_int_equal(a->ncustom, b->ncustom);
    for (uint32_t k = 0; k < a->npos; k++) assert_true(bits(a->pos[k]) == bits(b->pos[k]));
    for (uint32_t k = 0; k < a->nneg; k++) assert_true(bits(a->neg[k]) == bits(b->neg[k]));
    for (uint32_t k = 0; k < a->ncustom; k++) assert_true(bits(a->custom[k]) == bits(b->custom[k]));
}

/* Encodes all of hs (one chunk), decodes, compares; returns the chunk size. */
static size_t round_trip(storage_fh_t **hs, const int64_t *ts, size_t n)
{
    tsdb__hist_enc_t e;
    tsdb__hist_enc_start(&e, hs[0]);
    for (size_t i = 0; i < n; i++) {
        assert_true(tsdb__hist_enc_fits(&e, hs[i]));
        tsdb__hist_append(&e, ts[i], hs[i]);
    }
    im_buf_t b;
    im_buf_init(&b, 0);
    tsdb__hist_chunk_bytes(&e, &b);
    tsdb__hist_enc_free(&e);
    int64_t *t;
    storage_fh_t **h;
    size_t got;
    assert_true(tsdb__hist_decode((const uint8_t *)b.data, b.len, &t, &h, &got));
    assert_int_equal(got, n);
    for (size_t i = 0; i < n; i++) {
        assert_true(t[i] == ts[i]);
        assert_same(h[i], hs[i]);
    }
    tsdb__hist_decoded_free(t, h, got);
    /* every truncation is refused (or decodes fewer bytes' worth: never more) */
    for (size_t cut = 0; cut < b.len; cut++) {
        uint8_t *c = im_malloc(cut ? cut : 1);
        memcpy(c, b.data, cut);
        if (tsdb__hist_decode(c, cut, &t, &h, &got)) tsdb__hist_decoded_free(t, h, got);
        im_free(c);
    }
    size_t len = b.len;
    im_buf_free(&b);
    return len;
}

static void test_nhcb_counter(void **state)
{
    (void)state;
    enum { N = 120, B = 21 };
    storage_fh_t *hs[N];
    int64_t ts[N];
    double c[B + 1] = {0}, sum = 0;
    for (size_t i = 0; i < N; i++) {
        storage_fh_t *h = mk(B + 1, 0, B);
        h->schema = STORAGE_FH_CUSTOM;
        for (uint32_t k = 0; k < B; k++) h->custom[k] = 0.001 * (double)(1u << k);
        for (int r = (int)(rnd() % 6); r > 0; r--) {
            uint32_t k = (uint32_t)(rnd() % 8) + 4;
            c[k]++;
            sum += 0.001 * (double)(1u << k) * 0.7;
        }
        double cnt = 0;
        for (uint32_t k = 0; k <= B; k++) {
            h->pos[k] = c[k];
            cnt += c[k];
        }
        h->count = cnt;
        h->sum = sum;
        hs[i] = h;
        ts[i] = 1700000000000 + (int64_t)i * 15000 + (int64_t)(rnd() % 3);
    }
    size_t len = round_trip(hs, ts, N);
    /* counters that move a little: a few bytes a sample, not 8 per bucket */
    assert_true(len < (size_t)N * 16);
    for (size_t i = 0; i < N; i++) im_free(hs[i]);
}

static void test_float_histograms(void **state)
{
    (void)state;
    enum { N = 50 };
    storage_fh_t *hs[N];
    int64_t ts[N];
    for (size_t i = 0; i < N; i++) {
        storage_fh_t *h = mk(4, 3, 0);
        h->schema = 3;
        h->zthresh = 1e-128;
        h->hint = (uint8_t)(i % 4);
        h->poff = -2;
        h->noff = 5;
        h->count = (double)i / 3.0;
        h->sum = i == 7 ? NAN : (i == 8 ? -INFINITY : (double)i * 1.1);
        h->zcount = i == 3 ? -0.0 : 0.5 * (double)i;
        h->pos[0] = 1; /* the layout comes from the first sample's non-zero range */
        h->pos[3] = 2;
        for (int k = 1; k < 3; k++) h->pos[k] = (double)(rnd() % 1000) / 7.0;
        for (int k = 0; k < 3; k++) h->neg[k] = k == 1 && i == 9 ? 1e300 : (double)k + 0.25;
        hs[i] = h;
        ts[i] = -5000 + (int64_t)i * (i % 5 == 0 ? 1 : 60000);
    }
    round_trip(hs, ts, N);
    for (size_t i = 0; i < N; i++) im_free(hs[i]);
}

static void test_layout(void **state)
{
    (void)state;
    storage_fh_t *a = mk(4, 0, 0);
    a->poff = 10;
    a->pos[1] = 1; /* non-zero range [11, 13) */
    a->pos[2] = 1;
    tsdb__hist_enc_t e;
    tsdb__hist_enc_start(&e, a);
    assert_int_equal(e.poff, 11);
    assert_int_equal(e.npos, 2);
    storage_fh_t *b = mk(1, 0, 0);
    b->poff = 12;
    b->pos[0] = 3;
    assert_true(tsdb__hist_enc_fits(&e, b)); /* inside */
    b->poff = 13;
    assert_false(tsdb__hist_enc_fits(&e, b)); /* outside: a new chunk */
    b->poff = 12;
    b->schema = 1;
    assert_false(tsdb__hist_enc_fits(&e, b)); /* another schema */
    b->schema = 0;
    b->zthresh = 0.5;
    assert_false(tsdb__hist_enc_fits(&e, b)); /* another zero threshold */
    tsdb__hist_enc_free(&e);
    im_free(a);
    im_free(b);
}

static void test_malformed(void **state)
{
    (void)state;
    int64_t *t;
    storage_fh_t **h;
    size_t n;
    const uint8_t v2[] = {2, 1, 0};
    assert_false(tsdb__hist_decode(v2, sizeof v2, &t, &h, &n));
    /* a huge bucket count with few bytes */
    const uint8_t big[] = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0x7f, 0, 0, 0, 0, 0, 0};
    assert_false(tsdb__hist_decode(big, sizeof big, &t, &h, &n));
    /* custom bounds on an exponential schema */
    const uint8_t cu[] = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
                          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_false(tsdb__hist_decode(cu, sizeof cu, &t, &h, &n));
    assert_false(tsdb__hist_decode(NULL, 0, &t, &h, &n));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nhcb_counter),
        cmocka_unit_test(test_float_histograms),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
