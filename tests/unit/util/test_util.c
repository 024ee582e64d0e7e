/* test_util.c — unit tests for src/util: buffers, arena, interning, hashing,
 * durations, timestamps, float formatting, errors. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/fmtfloat.h"
#include "util/hash.h"
#include "util/intern.h"
#include "util/timeutil.h"

static void test_buf(void **state)
{
    (void)state;
    im_buf_t b;
    im_buf_init(&b, 10);
    assert_int_equal(im_buf_puts(&b, "hello"), IM_OK);
    assert_int_equal(im_buf_printf(&b, "%d", 12345), IM_OK);
    assert_string_equal(b.data, "hello12345");
    assert_int_equal(im_buf_putc(&b, 'x'), IM_ELIMIT);
    assert_string_equal(b.data, "hello12345"); /* unchanged after a failed append */
    im_buf_reset(&b);
    assert_int_equal(b.len, 0);
    im_buf_free(&b);
    im_buf_init(&b, 0);
    for (int i = 0; i < 1000; i++) assert_int_equal(im_buf_printf(&b, "%04d", i), IM_OK);
    assert_int_equal(b.len, 4000);
    assert_memory_equal(b.data + 3996, "0999", 4);
    im_buf_free(&b);
}

static void test_arena(void **state)
{
    (void)state;
    im_arena_t a;
    im_arena_init(&a, 128, 1024);
    char *p = im_arena_strndup(&a, "abc", 3);
    assert_string_equal(p, "abc");
    assert_true(((uintptr_t)im_arena_alloc(&a, 1) & 15) == 0);
    void *big = im_arena_alloc(&a, 600);
    assert_non_null(big);
    assert_null(im_arena_alloc(&a, 600)); /* over the cap */
    im_arena_reset(&a);
    assert_non_null(im_arena_alloc(&a, 600));
    im_arena_free(&a);
}

static void test_intern(void **state)
{
    (void)state;
    const im_istr_t *a = im_intern_cstr("job");
    const im_istr_t *b = im_intern("jobx", 3);
    assert_ptr_equal(a, b);
    assert_int_equal(a->len, 3);
    assert_string_equal(a->s, "job");
    const im_istr_t *c = im_intern("a\0b", 3);
    assert_int_equal(c->len, 3);
    assert_ptr_not_equal(c, im_intern_cstr("a"));
    im_istr_unref(im_intern_cstr("a")); /* balances the lookup above */
    im_istr_unref(a);
    im_istr_unref(b);
    im_istr_unref(c);
    /* many strings force table growth */
    const im_istr_t *many[5000];
    char tmp[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(tmp, sizeof tmp, "s%d", i);
        many[i] = im_intern_cstr(tmp);
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(tmp, sizeof tmp, "s%d", i);
        const im_istr_t *again = im_intern_cstr(tmp);
        assert_ptr_equal(again, many[i]);
        im_istr_unref(again);
    }
    for (int i = 0; i < 5000; i++) im_istr_unref(many[i]);
}

static void test_crc32c(void **state)
{
    (void)state;
    /* RFC 3720 test vector: 32 bytes of zeros -> 0x8A9136AA; "123456789" -> 0xE3069283 */
    unsigned char z[32] = {0};
    assert_int_equal(im_crc32c(0, z, 32), 0x8A9136AA);
    assert_int_equal(im_crc32c(0, "123456789", 9), 0xE3069283);
    /* incremental == one-shot */
    uint32_t c = im_crc32c(0, "1234", 4);
    c = im_crc32c(c, "56789", 5);
    assert_int_equal(c, 0xE3069283);
    assert_true(im_hash("abc", 3) != im_hash("abd", 3));
}

static void check_dur(const char *s, int64_t want)
{
    int64_t got = -1;
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(im_duration_parse(s, strlen(s), &got, &err), IM_OK);
    assert_int_equal(got, want);
}

static void check_dur_bad(const char *s)
{
    int64_t got;
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(im_duration_parse(s, strlen(s), &got, &err), IM_EPARSE);
    assert_true(strlen(err.msg) > 0);
}

static void check_dur_fmt(int64_t ms, const char *want)
{
    char buf[64];
    im_duration_format(ms, buf, sizeof buf);
    assert_string_equal(buf, want);
}

static void test_duration(void **state)
{
    (void)state;
    check_dur("1h30m", 90 * IM_MS_PER_MINUTE);
    check_dur("5m", 5 * IM_MS_PER_MINUTE);
    check_dur("1d", IM_MS_PER_DAY);
    check_dur("1w", 7 * IM_MS_PER_DAY);
    check_dur("1y", 365 * IM_MS_PER_DAY);
    check_dur("500ms", 500);
    check_dur("0", 0);
    check_dur("0s", 0);
    check_dur("1y2w3d4h5m6s7ms", 365 * IM_MS_PER_DAY + 17 * IM_MS_PER_DAY + 4 * IM_MS_PER_HOUR +
                                     5 * IM_MS_PER_MINUTE + 6007);
    check_dur_bad("5");
    check_dur_bad("5mm");
    check_dur_bad("-5m");
    check_dur_bad("");
    check_dur_bad("1m1h");
    check_dur_bad("1h1h");
    check_dur_bad("1.5h");
    check_dur_bad("5 m");
    check_dur_bad("99999999999999999999s");
    /* at most int64 nanoseconds, as model.Duration */
    check_dur("292y", 292 * 365 * IM_MS_PER_DAY);
    check_dur("9223372036854ms", IM_MAX_DURATION_MS);
    check_dur_bad("293y");
    check_dur_bad("9223372036855ms");
    check_dur_bad("292y1000w");
    check_dur_bad("9999999999999y");
    check_dur_fmt(0, "0s");
    check_dur_fmt(90 * IM_MS_PER_MINUTE, "1h30m");
    check_dur_fmt(IM_MS_PER_DAY, "1d");
    check_dur_fmt(7 * IM_MS_PER_DAY, "1w");
    check_dur_fmt(365 * IM_MS_PER_DAY, "1y");
    check_dur_fmt(500, "500ms");
    check_dur_fmt(61500, "1m1s500ms");
    check_dur_fmt(90 * IM_MS_PER_DAY, "90d");
    check_dur_fmt(14 * IM_MS_PER_DAY, "2w");
    check_dur_fmt(366 * IM_MS_PER_DAY, "366d");
    check_dur_fmt(730 * IM_MS_PER_DAY, "2y");
    check_dur_fmt(8 * IM_MS_PER_DAY + IM_MS_PER_HOUR, "8d1h");
}

static void check_time(const char *s, int64_t want)
{
    int64_t got;
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(im_time_parse(s, strlen(s), &got, &err), IM_OK);
    assert_int_equal(got, want);
}

static void test_time(void **state)
{
    (void)state;
    check_time("1700000000", 1700000000000LL);
    check_time("1700000000.123", 1700000000123LL);
    check_time("1.5", 1500);
    check_time("-1.5", -1500);
    check_time("2023-11-14T22:13:20Z", 1700000000000LL);
    check_time("2023-11-14T22:13:20.123Z", 1700000000123LL);
    check_time("2023-11-14T23:13:20.5+01:00", 1700000000500LL);
    check_time("1970-01-01T00:00:00Z", 0);
    check_time("2024-02-29T00:00:00Z", 1709164800000LL);
    int64_t got;
    assert_int_equal(im_time_parse("abc", 3, &got, NULL), IM_EPARSE);
    assert_int_equal(im_time_parse("2023-02-29T00:00:00Z", 20, &got, NULL), IM_EPARSE);
    assert_int_equal(im_time_parse("2023-11-14 22:13:20Z", 20, &got, NULL), IM_EPARSE);
    /* past the range: saturated, never wrapped; NaN is the smallest time */
    check_time("9e15", IM_MAX_TIME_MS);
    check_time("-9e15", IM_MIN_TIME_MS);
    check_time("9e300", IM_MAX_TIME_MS);
    check_time("Inf", IM_MAX_TIME_MS);
    check_time("-infinity", IM_MIN_TIME_MS);
    check_time("NaN", IM_MIN_TIME_MS);
    check_time("9223372036853.5", 9223372036853500LL);
    check_time("1e-400", 0);
    check_time("0x1p4", 16000);
    check_time("9999-12-31T23:59:59.999Z", 253402300799999LL);
    check_time("0000-01-01T00:00:00Z", -62167219200000LL);
    assert_int_equal(im_time_parse("1e309", 5, &got, NULL), IM_EPARSE);
    assert_int_equal(im_time_parse("0x10", 4, &got, NULL), IM_EPARSE);
    assert_int_equal(im_time_parse(" 1", 2, &got, NULL), IM_EPARSE);
    assert_int_equal(im_time_parse("nan(1)", 6, &got, NULL), IM_EPARSE);
    assert_int_equal(im_time_parse("1\0", 2, &got, NULL), IM_EPARSE);
    assert_int_equal(im_time_parse("10000-01-01T00:00:00Z", 21, &got, NULL), IM_EPARSE);
    char buf[64];
    im_time_format_rfc3339(1700000000123LL, buf, sizeof buf);
    assert_string_equal(buf, "2023-11-14T22:13:20.123Z");
    im_time_format_rfc3339(0, buf, sizeof buf);
    assert_string_equal(buf, "1970-01-01T00:00:00Z");
    im_time_format_rfc3339(-1, buf, sizeof buf);
    assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
}

static void check_api(double v, const char *want)
{
    char buf[IM_FLOAT_BUF];
    im_fmt_float_api(v, buf, sizeof buf);
    assert_string_equal(buf, want);
}

static void check_expo(double v, const char *want)
{
    char buf[IM_FLOAT_BUF];
    im_fmt_float_expo(v, buf, sizeof buf);
    assert_string_equal(buf, want);
}

/* Expected strings are what Go's strconv (and so Prometheus) prints; the peer
 * test tests/integration/run_float_format.sh checks the API ones against a real
 * Prometheus. */
static void test_float_format(void **state)
{
    (void)state;
    check_api(0, "0");
    check_api(1, "1");
    check_api(-1, "-1");
    check_api(0.1, "0.1");
    check_api(1.5, "1.5");
    check_api(100, "100");
    check_api(123456789, "123456789");
    check_api(1e20, "100000000000000000000");
    check_api(1e21, "1e+21");
    check_api(1.5e300, "1.5e+300");
    check_api(1e-6, "0.000001");
    check_api(1e-7, "1e-07");
    check_api(1.234e-7, "1.234e-07");
    check_api(5e-324, "5e-324");
    check_api(1.7976931348623157e308, "1.7976931348623157e+308");
    check_api(0.30000000000000004, "0.30000000000000004");
    check_api(1.0 / 3.0, "0.3333333333333333");
    check_api(INFINITY, "+Inf");
    check_api(-INFINITY, "-Inf");
    check_api(NAN, "NaN");
    check_api(-0.0, "-0");
    check_api(1700000000.123, "1700000000.123");
    check_expo(0, "0");
    check_expo(1, "1");
    check_expo(123456, "123456");
    check_expo(1e6, "1e+06");
    check_expo(1234567, "1.234567e+06");
    check_expo(0.0001, "0.0001");
    check_expo(0.00001, "1e-05");
    check_expo(1.7876499753185e+09, "1.7876499753185e+09");
    check_expo(0.25, "0.25");
    check_expo(INFINITY, "+Inf");
    check_expo(-INFINITY, "-Inf");
    check_expo(NAN, "NaN");
    check_expo(1e-300, "1e-300");
    /* round trip of random doubles through the shortest form */
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double v;
        memcpy(&v, &x, sizeof v);
        if (!isfinite(v)) continue;
        char buf[IM_FLOAT_BUF];
        im_fmt_float_api(v, buf, sizeof buf);
        double back;
        assert_true(im_parse_float(buf, strlen(buf), &back));
        assert_memory_equal(&back, &v, sizeof v);
        im_fmt_float_expo(v, buf, sizeof buf);
        assert_true(im_parse_float(buf, strlen(buf), &back));
        assert_memory_equal(&back, &v, sizeof v);
    }
}

static void test_parse_float(void **state)
{
    (void)state;
    double v;
    assert_true(im_parse_float("1.5", 3, &v) && v == 1.5);
    assert_true(im_parse_float("+Inf", 4, &v) && isinf(v) && v > 0);
    assert_true(im_parse_float("-inf", 4, &v) && isinf(v) && v < 0);
    assert_true(im_parse_float("NaN", 3, &v) && isnan(v));
    assert_true(im_parse_float("1e3", 3, &v) && v == 1000);
    assert_true(im_parse_float("0x10", 4, &v) && v == 16);
    assert_false(im_parse_float("", 0, &v));
    assert_false(im_parse_float("1.5x", 4, &v));
    assert_false(im_parse_float(" 1", 2, &v));
    assert_false(im_parse_float("nan(123)", 8, &v));
}

static void test_err(void **state)
{
    (void)state;
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(im_err_setpos(&err, IM_EPARSE, 3, 14, "unexpected \"%s\"", "}"), IM_EPARSE);
    err.file = "x.yml";
    char buf[256];
    assert_string_equal(im_err_format(&err, buf, sizeof buf), "x.yml:3:14: unexpected \"}\"");
    im_err_prefix(&err, "loading");
    assert_string_equal(err.msg, "loading: unexpected \"}\"");
    assert_string_equal(im_rc_name(IM_ELIMIT), "ELIMIT");
    assert_int_equal(im_err_set(NULL, IM_EIO, "x"), IM_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf),          cmocka_unit_test(test_arena),
        cmocka_unit_test(test_intern),       cmocka_unit_test(test_crc32c),
        cmocka_unit_test(test_duration),     cmocka_unit_test(test_time),
        cmocka_unit_test(test_float_format), cmocka_unit_test(test_parse_float),
        cmocka_unit_test(test_err),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
