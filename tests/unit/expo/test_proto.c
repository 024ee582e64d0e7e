/* test_proto.c — the protobuf exposition decoder (expo/proto.h) on messages
 * built here field by field: a counter, a gauge with a timestamp, a summary, a
 * classic histogram and a native one (integer deltas and float counts, spans,
 * zero bucket), unknown fields skipped, and malformed input refused with the
 * byte offset (truncations, a span/bucket mismatch, a bad type). */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "expo/proto.h"
#include "util/buf.h"

static void uv(im_buf_t *b, uint64_t v)
{
    while (v >= 0x80) {
        (void)im_buf_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    (void)im_buf_putc(b, (char)v);
}
static void tag(im_buf_t *b, uint32_t f, unsigned wt)
{
    uv(b, ((uint64_t)f << 3) | wt);
}
static void fvar(im_buf_t *b, uint32_t f, uint64_t v)
{
    tag(b, f, 0);
    uv(b, v);
}
static void fzig(im_buf_t *b, uint32_t f, int64_t v)
{
    fvar(b, f, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
static void fdbl(im_buf_t *b, uint32_t f, double d)
{
    uint64_t x;
    memcpy(&x, &d, sizeof x);
    tag(b, f, 1);
    for (int i = 0; i < 8; i++) (void)im_buf_putc(b, (char)(x >> (8 * i)));
}
static void fbytes(im_buf_t *b, uint32_t f, const void *p, size_t n)
{
    tag(b, f, 2);
    uv(b, n);
    (void)im_buf_append(b, p, n);
}
static void fmsg(im_buf_t *b, uint32_t f, im_buf_t *m)
{
    fbytes(b, f, m->data, m->len);
    im_buf_reset(m);
}
static void fstr(im_buf_t *b, uint32_t f, const char *s)
{
    fbytes(b, f, s, strlen(s));
}
static void label(im_buf_t *metric, const char *n, const char *v)
{
    im_buf_t l;
    im_buf_init(&l, 0);
    fstr(&l, 1, n);
    fstr(&l, 2, v);
    fmsg(metric, 1, &l);
    im_buf_free(&l);
}
static void delimited(im_buf_t *out, im_buf_t *fam)
{
    uv(out, fam->len);
    (void)im_buf_append(out, fam->data, fam->len);
    im_buf_reset(fam);
}

static bool streq(expo_pb_str_t s, const char *c)
{
    return s.len == strlen(c) && memcmp(s.p, c, s.len) == 0;
}

/* The exposition every test starts from. */
static void build(im_buf_t *out)
{
    im_buf_t fam, m, sub, sub2;
    im_buf_init(&fam, 0);
    im_buf_init(&m, 0);
    im_buf_init(&sub, 0);
    im_buf_init(&sub2, 0);
    /* counter */
    fstr(&fam, 1, "vllm:request_success_total");
    fstr(&fam, 2, "Requests.");
    fvar(&fam, 3, EXPO_PB_COUNTER);
    label(&m, "model", "llama");
    fdbl(&sub, 1, 42);
    fmsg(&m, 3, &sub);
    fvar(&m, 99, 7); /* unknown field */
    fmsg(&fam, 4, &m);
    delimited(out, &fam);
    /* gauge with a timestamp */
    fstr(&fam, 1, "g");
    fvar(&fam, 3, EXPO_PB_GAUGE);
    fdbl(&sub, 1, -1.5);
    fmsg(&m, 2, &sub);
    fvar(&m, 6, 1700000000123);
    fmsg(&fam, 4, &m);
    delimited(out, &fam);
    /* summary */
    fstr(&fam, 1, "s");
    fvar(&fam, 3, EXPO_PB_SUMMARY);
    fvar(&sub, 1, 10);
    fdbl(&sub, 2, 3.5);
    fdbl(&sub2, 1, 0.5);
    fdbl(&sub2, 2, 0.25);
    fmsg(&sub, 3, &sub2);
    fmsg(&m, 4, &sub);
    fmsg(&fam, 4, &m);
    delimited(out, &fam);
    /* histogram: classic buckets and a native part (integer deltas) */
    fstr(&fam, 1, "vllm:time_to_first_token_seconds");
    fvar(&fam, 3, EXPO_PB_HISTOGRAM);
    fvar(&sub, 1, 6);
    fdbl(&sub, 2, 1.25);
    fvar(&sub2, 1, 2);
    fdbl(&sub2, 2, 0.1);
    fmsg(&sub, 3, &sub2);
    fvar(&sub2, 1, 5);
    fdbl(&sub2, 2, 1);
    fmsg(&sub, 3, &sub2);
    fzig(&sub, 5, 3);
    fdbl(&sub, 6, 1e-128);
    fvar(&sub, 7, 1);
    fzig(&sub2, 1, -2);
    fvar(&sub2, 2, 2);
    fmsg(&sub, 12, &sub2);
    fzig(&sub2, 1, 3);
    fvar(&sub2, 2, 1);
    fmsg(&sub, 12, &sub2);
    /* packed positive deltas 2, -1, +2 -> counts 2 1 3 */
    im_buf_t pk;
    im_buf_init(&pk, 0);
    uv(&pk, 4); /* zigzag(2) */
    uv(&pk, 1); /* zigzag(-1) */
    uv(&pk, 4);
    fbytes(&sub, 13, pk.data, pk.len);
    im_buf_free(&pk);
    label(&m, "pod", "p1");
    fmsg(&m, 7, &sub);
    fmsg(&fam, 4, &m);
    delimited(out, &fam);
    /* float histogram: absolute counts, unpacked, a negative span */
    fstr(&fam, 1, "fh");
    fvar(&fam, 3, EXPO_PB_GAUGE_HISTOGRAM);
    fdbl(&sub, 4, 2.5);
    fzig(&sub, 5, 0);
    fzig(&sub2, 1, 0);
    fvar(&sub2, 2, 1);
    fmsg(&sub, 9, &sub2);
    fdbl(&sub, 11, 2.5);
    fmsg(&m, 7, &sub);
    fmsg(&fam, 4, &m);
    delimited(out, &fam);
    im_buf_free(&fam);
    im_buf_free(&m);
    im_buf_free(&sub);
    im_buf_free(&sub2);
}

static void test_decode(void **state)
{
    (void)state;
    im_buf_t in;
    im_buf_init(&in, 0);
    build(&in);
    im_arena_t a;
    im_arena_init(&a, 4096, 0);
    expo_pb_family_t *f;
    size_t n;
    im_err_t err = {0};
    assert_int_equal(expo_pb_parse((const uint8_t *)in.data, in.len, &a, &f, &n, &err), IM_OK);
    assert_int_equal(n, 5);
    assert_true(streq(f[0].name, "vllm:request_success_total") && streq(f[0].help, "Requests."));
    assert_int_equal(f[0].nmetrics, 1);
    assert_int_equal(f[0].metrics[0].nlabels, 1);
    assert_true(streq(f[0].metrics[0].labels[0].name, "model"));
    assert_true(streq(f[0].metrics[0].labels[0].value, "llama"));
    assert_true(f[0].metrics[0].value == 42 && f[0].metrics[0].has_value);
    assert_true(f[1].metrics[0].value == -1.5 && f[1].metrics[0].has_ts);
    assert_true(f[1].metrics[0].ts_ms == 1700000000123);
    assert_int_equal(f[2].type, EXPO_PB_SUMMARY);
    assert_true(f[2].metrics[0].scount == 10 && f[2].metrics[0].ssum == 3.5);
    assert_int_equal(f[2].metrics[0].nquantiles, 1);
    assert_true(f[2].metrics[0].quantile[0] == 0.5 && f[2].metrics[0].qvalue[0] == 0.25);
    const expo_pb_hist_t *h = &f[3].metrics[0].hist;
    assert_true(h->count == 6 && h->sum == 1.25);
    assert_int_equal(h->nbuckets, 2);
    assert_true(h->upper[1] == 1 && h->cumulative[1] == 5);
    assert_true(h->native);
    assert_int_equal(h->schema, 3);
    assert_true(h->zthresh == 1e-128 && h->zcount == 1);
    assert_int_equal(h->npspan, 2);
    assert_int_equal(h->pspan[0].offset, -2);
    assert_int_equal(h->pspan[1].offset, 3);
    assert_int_equal(h->npos, 3);
    assert_true(h->pos[0] == 2 && h->pos[1] == 1 && h->pos[2] == 3);
    const expo_pb_hist_t *g = &f[4].metrics[0].hist;
    assert_true(g->native && g->count == 2.5 && g->nneg == 1 && g->neg[0] == 2.5);
    /* every truncation is refused (never read past the end: ASan) */
    for (size_t cut = 1; cut < in.len; cut++) {
        im_arena_reset(&a);
        uint8_t *c = im_malloc(cut);
        memcpy(c, in.data, cut);
        im_rc rc = expo_pb_parse(c, cut, &a, &f, &n, &err);
        im_free(c);
        if (rc == IM_OK) continue; /* a cut between messages */
        assert_int_equal(rc, IM_EPARSE);
        assert_non_null(strstr(err.msg, "at byte"));
    }
    im_arena_free(&a);
    im_buf_free(&in);
}

static void test_malformed(void **state)
{
    (void)state;
    im_arena_t a;
    im_arena_init(&a, 4096, 0);
    expo_pb_family_t *f;
    size_t n;
    im_err_t err = {0};
    im_buf_t in, fam, m, sub, sp;
    im_buf_init(&in, 0);
    im_buf_init(&fam, 0);
    im_buf_init(&m, 0);
    im_buf_init(&sub, 0);
    im_buf_init(&sp, 0);
    /* a span of 2 buckets with 1 count */
    fstr(&fam, 1, "h");
    fvar(&fam, 3, EXPO_PB_HISTOGRAM);
    fvar(&sp, 2, 2);
    fmsg(&sub, 12, &sp);
    fzig(&sub, 13, 1);
    fmsg(&m, 7, &sub);
    fmsg(&fam, 4, &m);
    delimited(&in, &fam);
    assert_int_equal(expo_pb_parse((const uint8_t *)in.data, in.len, &a, &f, &n, &err), IM_EPARSE);
    assert_non_null(strstr(err.msg, "span lengths"));
    /* a bad type */
    im_buf_reset(&in);
    fstr(&fam, 1, "x");
    fvar(&fam, 3, 9);
    delimited(&in, &fam);
    assert_int_equal(expo_pb_parse((const uint8_t *)in.data, in.len, &a, &f, &n, &err), IM_EPARSE);
    assert_non_null(strstr(err.msg, "metric type"));
    /* a family without a name */
    im_buf_reset(&in);
    fvar(&fam, 3, 1);
    delimited(&in, &fam);
    assert_int_equal(expo_pb_parse((const uint8_t *)in.data, in.len, &a, &f, &n, &err), IM_EPARSE);
    /* the arena's cap is a limit error */
    im_buf_reset(&in);
    build(&in);
    im_arena_t small;
    im_arena_init(&small, 64, 64);
    assert_int_equal(expo_pb_parse((const uint8_t *)in.data, in.len, &small, &f, &n, &err),
                     IM_ELIMIT);
    im_arena_free(&small);
    /* empty input: no families */
    assert_int_equal(expo_pb_parse(NULL, 0, &a, &f, &n, &err), IM_OK);
    assert_int_equal(n, 0);
    im_buf_free(&in);
    im_buf_free(&fam);
    im_buf_free(&m);
    im_buf_free(&sub);
    im_buf_free(&sp);
    im_arena_free(&a);
}

typedef struct got {
    char lines[64][128];
    size_t n;
} got_t;

static bool collect(void *ctx, const expo_pb_sample_t *s)
{
    got_t *g = ctx;
    if (g->n == 64) return false;
    char *l = g->lines[g->n++];
    int o = snprintf(l, 128, "%s", s->name);
    if (s->extra_name)
        o += snprintf(l + o, (size_t)(128 - o), "{%s=%s}", s->extra_name, s->extra_value);
    if (s->native)
        snprintf(l + o, (size_t)(128 - o), " native");
    else
        snprintf(l + o, (size_t)(128 - o), " %g", s->value);
    return true;
}

static bool has(const got_t *g, const char *l)
{
    for (size_t i = 0; i < g->n; i++)
        if (strcmp(g->lines[i], l) == 0) return true;
    return false;
}

static void test_samples(void **state)
{
    (void)state;
    im_buf_t in;
    im_buf_init(&in, 0);
    build(&in);
    im_arena_t a;
    im_arena_init(&a, 4096, 0);
    expo_pb_family_t *f;
    size_t n;
    im_err_t err = {0};
    assert_int_equal(expo_pb_parse((const uint8_t *)in.data, in.len, &a, &f, &n, &err), IM_OK);
    got_t g = {0};
    /* native histograms off: classic series only (the +Inf bucket added) */
    assert_true(expo_pb_samples(f, n, false, false, collect, &g));
    assert_true(has(&g, "vllm:request_success_total 42"));
    assert_true(has(&g, "g -1.5"));
    assert_true(has(&g, "s{quantile=0.5} 0.25"));
    assert_true(has(&g, "s_sum 3.5") && has(&g, "s_count 10"));
    assert_true(has(&g, "vllm:time_to_first_token_seconds_bucket{le=0.1} 2"));
    assert_true(has(&g, "vllm:time_to_first_token_seconds_bucket{le=1.0} 5"));
    assert_true(has(&g, "vllm:time_to_first_token_seconds_bucket{le=+Inf} 6"));
    assert_true(has(&g, "vllm:time_to_first_token_seconds_count 6"));
    assert_true(has(&g, "fh_bucket{le=+Inf} 2.5")); /* native only: still _count, _sum, +Inf */
    assert_false(has(&g, "fh native"));
    /* native on: the native sample, no classic series of a native histogram */
    memset(&g, 0, sizeof g);
    assert_true(expo_pb_samples(f, n, true, false, collect, &g));
    assert_true(has(&g, "vllm:time_to_first_token_seconds native"));
    assert_false(has(&g, "vllm:time_to_first_token_seconds_count 6"));
    assert_true(has(&g, "fh native"));
    /* and both with always_scrape_classic_histograms (not for one without buckets) */
    memset(&g, 0, sizeof g);
    assert_true(expo_pb_samples(f, n, true, true, collect, &g));
    assert_true(has(&g, "vllm:time_to_first_token_seconds native"));
    assert_true(has(&g, "vllm:time_to_first_token_seconds_bucket{le=0.1} 2"));
    assert_false(has(&g, "fh_count 2.5"));
    im_arena_free(&a);
    im_buf_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
