/* test_expo.c — unit tests for src/expo: both parsers (every construct and every
 * error with its line:column message), limits, CRLF, missing newline, huge lines,
 * the float reader, the checker's problems and lints, the writers, and a random
 * write -> parse round trip. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "expo/expo.h"
#include "expo/expo_int.h"
#include "expo/parse_int.h"
#include "util/buf.h"
#include "util/fmtfloat.h"

#define T  EXPO_TEXT_004
#define OM EXPO_OPENMETRICS_1

/* Renders every entry of an input, one per line:
 *   S name{l="v",...} value [@ts] [# {..} v [@ts]] [type/famlen]
 *   HELP name text | TYPE name type | UNIT name unit | EOF
 * On error returns "ERR line:col: message". Caller frees. */
static char *render_mode(const char *in, size_t len, expo_format_t f, const expo_limits_t *lim,
                         int mode)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    expo_parser_t *p = expo_parser_new(lim);
    p->fast = mode;
    im_err_t err;
    im_err_clear(&err);
    int r = expo_parser_reset(p, in, len, f, &err);
    expo_entry_t e;
    if (r == IM_OK) r = 1;
    while (r > 0 && (r = expo_parser_next(p, &e, &err)) > 0) {
        char v[IM_FLOAT_BUF];
        switch (e.kind) {
        case EXPO_ENTRY_SAMPLE:
            (void)!im_buf_printf(&b, "S %.*s{", (int)e.name.len, e.name.p);
            for (uint32_t i = 0; i < e.nlabels; i++)
                (void)!im_buf_printf(&b, "%s%.*s=\"%.*s\"", i ? "," : "", (int)e.labels[i].name.len,
                                     e.labels[i].name.p, (int)e.labels[i].value.len,
                                     e.labels[i].value.p);
            im_fmt_float_expo(e.value, v, sizeof v);
            (void)!im_buf_printf(&b, "} %s", v);
            if (e.has_ts) (void)!im_buf_printf(&b, " @%lld", (long long)e.t_ms);
            if (e.has_exemplar) {
                (void)!im_buf_puts(&b, " # {");
                for (uint32_t i = 0; i < e.exemplar.nlabels; i++)
                    (void)!im_buf_printf(
                        &b, "%s%.*s=\"%.*s\"", i ? "," : "", (int)e.exemplar.labels[i].name.len,
                        e.exemplar.labels[i].name.p, (int)e.exemplar.labels[i].value.len,
                        e.exemplar.labels[i].value.p);
                im_fmt_float_expo(e.exemplar.value, v, sizeof v);
                (void)!im_buf_printf(&b, "} %s", v);
                if (e.exemplar.has_ts)
                    (void)!im_buf_printf(&b, " @%lld", (long long)e.exemplar.t_ms);
            }
            if (e.type != EXPO_TYPE_UNKNOWN)
                (void)!im_buf_printf(&b, " [%s/%zu]", expo_type_name(e.type, f), e.family_len);
            break;
        case EXPO_ENTRY_HELP:
            (void)!im_buf_printf(&b, "HELP %.*s %.*s", (int)e.name.len, e.name.p, (int)e.text.len,
                                 e.text.p);
            break;
        case EXPO_ENTRY_TYPE:
            (void)!im_buf_printf(&b, "TYPE %.*s %s", (int)e.name.len, e.name.p,
                                 expo_type_name(e.type, f));
            break;
        case EXPO_ENTRY_UNIT:
            (void)!im_buf_printf(&b, "UNIT %.*s %.*s", (int)e.name.len, e.name.p, (int)e.text.len,
                                 e.text.p);
            break;
        case EXPO_ENTRY_EOF: (void)!im_buf_puts(&b, "EOF"); break;
        }
        (void)!im_buf_printf(&b, " :%d\n", e.line);
    }
    if (r < 0) {
        im_buf_reset(&b);
        (void)!im_buf_printf(&b, "ERR %d:%d: %s", err.line, err.col, err.msg);
        int l, c;
        expo_parser_pos(p, &l, &c);
        assert_int_equal(l, err.line);
        assert_int_equal(c, err.col);
        /* Sticky. */
        im_err_t e2;
        assert_int_equal(expo_parser_next(p, &e, &e2), r);
        assert_string_equal(e2.msg, err.msg);
    }
    expo_parser_free(p);
    if (!b.data) (void)!im_buf_puts(&b, "");
    return im_buf_steal(&b, NULL);
}

static char *render_lim(const char *in, size_t len, expo_format_t f, const expo_limits_t *lim)
{
    return render_mode(in, len, f, lim, EXPO_FAST_AUTO);
}

static char *render(const char *in, expo_format_t f)
{
    return render_lim(in, strlen(in), f, NULL);
}

#define EXPECT(fmt, in, want)                                                                      \
    do {                                                                                           \
        char *got_ = render(in, fmt);                                                              \
        if (strcmp(got_, want) != 0) print_error("input: %s\n", in);                               \
        assert_string_equal(got_, want);                                                           \
        im_free(got_);                                                                             \
    } while (0)

static void test_text_basic(void **state)
{
    (void)state;
    EXPECT(T, "", "");
    EXPECT(T, "\n\n  \n", "");
    EXPECT(T, "a 1\n", "S a{} 1 :1\n");
    EXPECT(T, "a 1", "S a{} 1 :1\n"); /* missing final newline */
    EXPECT(T, "a 1\r\nb 2\r\n", "S a{} 1 :1\nS b{} 2 :2\n");
    EXPECT(T, "  a   1   \n", "S a{} 1 :1\n");
    EXPECT(T, "a\t1\t123\n", "S a{} 1 @123 :1\n");
    EXPECT(T, "a:b_c9 -1.5e3 0\n", "S a:b_c9{} -1500 @0 :1\n");
    EXPECT(T, "a{} 1\n", "S a{} 1 :1\n");
    EXPECT(T, "a{b=\"c\",d=\"e\"} 1\n", "S a{b=\"c\",d=\"e\"} 1 :1\n");
    EXPECT(T, "a { b = \"c\" , d=\"e\" , } 1\n", "S a{b=\"c\",d=\"e\"} 1 :1\n");
    EXPECT(T, "a{b=\"c\" d=\"e\"} 1\n", "S a{b=\"c\",d=\"e\"} 1 :1\n"); /* as Prometheus */
    EXPECT(T, "a{b=\"c\"}1\n", "S a{b=\"c\"} 1 :1\n");
    EXPECT(T, "a{b=\"x\\\\y\\\"z\\nw\\q\"} 1\n", "S a{b=\"x\\y\"z\nw\\q\"} 1 :1\n");
    EXPECT(T, "a{b=\"multi\nline\"} 1\nc 2\n", "S a{b=\"multi\nline\"} 1 :1\nS c{} 2 :3\n");
    EXPECT(T, "a{b=\"\xc3\xa9\xe2\x82\xac\"} 1\n", "S a{b=\"\xc3\xa9\xe2\x82\xac\"} 1 :1\n");
    EXPECT(T, "a NaN\nb +Inf\nc -Inf\nd inf\ne nan\nf Infinity\n",
           "S a{} NaN :1\nS b{} +Inf :2\nS c{} -Inf :3\nS d{} +Inf :4\nS e{} NaN :5\nS f{} "
           "+Inf :6\n");
    EXPECT(T, "a 0x1p-2\nb 1e-400\nc .5\nd 5.\ne 1E3\n",
           "S a{} 0.25 :1\nS b{} 0 :2\nS c{} 0.5 :3\nS d{} 5 :4\nS e{} 1000 :5\n");
    EXPECT(T, "a 9223372036854775807 9223372036854775807\n",
           "S a{} 9.223372036854776e+18 @9223372036854775807 :1\n");
    /* Comments and metadata. */
    EXPECT(T, "# just a comment\n#HELP a x\n#\n# HELPER x\n", "");
    EXPECT(T, "# HELP a some \\\\ text \\n \\\" here\n", "HELP a some \\ text \n \\\" here :1\n");
    EXPECT(T, "#\tHELP\ta\tx y  \n", "HELP a x y   :1\n");
    EXPECT(T, "# HELP a\n", "HELP a  :1\n");
    EXPECT(T, "# HELP a \n", "HELP a  :1\n");
    EXPECT(T,
           "# TYPE a counter\n# TYPE b gauge\n# TYPE c histogram\n# TYPE d summary\n# TYPE e "
           "untyped\n",
           "TYPE a counter :1\nTYPE b gauge :2\nTYPE c histogram :3\nTYPE d summary :4\nTYPE e "
           "untyped :5\n");
    EXPECT(T, "# HELP a x\r\n# TYPE a gauge\r\na 1\r\n",
           "HELP a x :1\nTYPE a gauge :2\nS a{} 1 [gauge/1] :3\n");
}

static void test_text_families(void **state)
{
    (void)state;
    EXPECT(
        T,
        "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3\nh_count "
        "2\nh_created 5\nh_other 1\nh 9\n",
        "TYPE h histogram :1\nS h_bucket{le=\"1\"} 1 [histogram/1] :2\nS h_bucket{le=\"+Inf\"} 2 "
        "[histogram/1] :3\nS h_sum{} 3 [histogram/1] :4\nS h_count{} 2 [histogram/1] :5\nS "
        "h_created{} 5 [histogram/1] :6\nS h_other{} 1 :7\nS h{} 9 [histogram/1] :8\n");
    EXPECT(T, "# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_sum 1\ns_count 1\n",
           "TYPE s summary :1\nS s{quantile=\"0.5\"} 1 [summary/1] :2\nS s_sum{} 1 [summary/1] "
           ":3\nS s_count{} 1 [summary/1] :4\n");
    EXPECT(T, "# TYPE c_total counter\nc_total 1\n# TYPE c counter\nc_total 2\n",
           "TYPE c_total counter :1\nS c_total{} 1 [counter/7] :2\nTYPE c counter :3\nS c_total{} "
           "2 [counter/1] :4\n");
}

static void test_openmetrics(void **state)
{
    (void)state;
    EXPECT(OM, "# EOF\n", "EOF :1\n");
    EXPECT(OM, "# EOF", "EOF :1\n");
    EXPECT(
        OM,
        "# HELP a_seconds Help \\\" \\\\ \\n x\n# TYPE a_seconds counter\n# UNIT a_seconds "
        "seconds\na_seconds_total{x=\"1\"} 1 1700000000.123 # {trace_id=\"abc\"} 0.5 "
        "1700000000.5\na_seconds_created{x=\"1\"} 1700000000\n# EOF\n",
        "HELP a_seconds Help \" \\ \n x :1\nTYPE a_seconds counter :2\nUNIT a_seconds seconds "
        ":3\nS a_seconds_total{x=\"1\"} 1 @1700000000123 # {trace_id=\"abc\"} 0.5 @1700000000500 "
        "[counter/9] :4\nS a_seconds_created{x=\"1\"} 1.7e+09 [counter/9] :5\nEOF :6\n");
    EXPECT(OM, "a 1 # {} 2\n# EOF\n", "S a{} 1 # {} 2 :1\nEOF :2\n");
    EXPECT(OM, "a 1 -1.5\nb 1 1e3\nc 2 0.0001\n# EOF\n",
           "S a{} 1 @-1500 :1\nS b{} 1 @1000000 :2\nS c{} 2 @0 :3\nEOF :4\n");
    EXPECT(
        OM,
        "# TYPE g gaugehistogram\ng_bucket{le=\"+Inf\"} 1\ng_gsum 1\ng_gcount 1\n# TYPE i "
        "info\ni_info{v=\"1\"} 1\n# TYPE s stateset\ns{s=\"a\"} 1\ns{s=\"b\"} 0\n# TYPE u "
        "unknown\nu 1\n# EOF\n",
        "TYPE g gaugehistogram :1\nS g_bucket{le=\"+Inf\"} 1 [gaugehistogram/1] :2\nS g_gsum{} 1 "
        "[gaugehistogram/1] :3\nS g_gcount{} 1 [gaugehistogram/1] :4\nTYPE i info :5\nS "
        "i_info{v=\"1\"} 1 [info/1] :6\nTYPE s stateset :7\nS s{s=\"a\"} 1 [stateset/1] :8\nS "
        "s{s=\"b\"} 0 [stateset/1] :9\nTYPE u unknown :10\nS u{} 1 :11\nEOF :12\n");
    EXPECT(OM, "# UNIT a \n# HELP a \n# EOF\n", "UNIT a  :1\nHELP a  :2\nEOF :3\n");
}

/* Every error: format, input, expected "ERR line:col: message". */
static const struct {
    expo_format_t f;
    const char *in;
    const char *want;
} errors[] = {
    {T, "a\n", "ERR 1:2: expected a value after the metric name, got end of line"},
    {T, "a", "ERR 1:2: expected a value after the metric name, got end of input"},
    {T, "a{b=\"c\"}\n", "ERR 1:9: expected a value after the metric labels, got end of line"},
    {T, "a x\n", "ERR 1:3: invalid value \"x\": expected a float such as 1, -2.5e3, NaN or +Inf"},
    {T, "a 1e400\n",
     "ERR 1:3: invalid value \"1e400\": expected a float such as 1, -2.5e3, NaN or +Inf"},
    {T, "a 1_000\n",
     "ERR 1:3: invalid value \"1_000\": expected a float such as 1, -2.5e3, NaN or +Inf"},
    {T, "a 0x1\n",
     "ERR 1:3: invalid value \"0x1\": expected a float such as 1, -2.5e3, NaN or +Inf"},
    {T, "a +NaN\n",
     "ERR 1:3: invalid value \"+NaN\": expected a float such as 1, -2.5e3, NaN or +Inf"},
    {T, "a 1 -5\n", "ERR 1:5: expected a timestamp (integer milliseconds) or end of line, got '-'"},
    {T, "a 1 2 3\n", "ERR 1:7: expected end of line after the timestamp, got '3'"},
    {T, "a 1 1.5\n", "ERR 1:6: expected end of line after the timestamp, got '.'"},
    {T, "a 1 99999999999999999999\n",
     "ERR 1:5: timestamp \"99999999999999999999\" is out of range (int64 ms)"},
    {T, "a 1\r\n", NULL}, /* accepted */
    {T, "a 1\rb\n",
     "ERR 1:3: invalid value \"1\rb\": expected a float such as 1, -2.5e3, NaN or +Inf"},
    {T, "a{1=\"x\"} 1\n", "ERR 1:3: expected a label name or '}', got '1'"},
    {T, "a{b-c=\"x\"} 1\n", "ERR 1:4: expected '=' after label name \"b\", got '-'"},
    {T, "a{b:c=\"x\"} 1\n", "ERR 1:4: expected '=' after label name \"b\", got ':'"},
    {T, "a{b=c} 1\n", "ERR 1:5: expected '\"' to start the value of label \"b\", got 'c'"},
    {T, "a{b=\"c} 1\n", "ERR 1:5: unterminated label value: missing closing '\"'"},
    {T, "a{b=\"c\"", "ERR 1:8: expected a label name or '}', got end of input"},
    {T, "a{b=\"\xff\"} 1\n", "ERR 1:6: invalid UTF-8 in label value \"b\""},
    {T, "a{b=\"\xed\xa0\x80\"} 1\n", "ERR 1:6: invalid UTF-8 in label value \"b\""},
    {T, "ok 1\n\nx{b=\"\xc3\"} 1\n", "ERR 3:6: invalid UTF-8 in label value \"b\""},
    {T, "a{b=\"\\\xd1\"} 1\n", "ERR 1:6: invalid UTF-8 in label value \"b\""},
    {T, "1a 1\n", "ERR 1:1: expected a metric name, a comment or end of line, got '1'"},
    {T, "-a 1\n", "ERR 1:1: expected a metric name, a comment or end of line, got '-'"},
    {T, "a-b 1\n",
     "ERR 1:2: invalid value \"-b\": expected a float such as 1, -2.5e3, NaN or +Inf"},
    {T, "\xc3\xa9 1\n", "ERR 1:1: expected a metric name, a comment or end of line, got byte 0xc3"},
    {T, "# HELP 1a x\n", "ERR 1:8: expected a metric name after HELP, got '1'"},
    {T, "# TYPE a\n",
     "ERR 1:9: invalid metric type \"\" (expected counter, gauge, histogram, "
     "summary or untyped)"},
    {T, "# TYPE a info\n",
     "ERR 1:10: invalid metric type \"info\" (expected counter, gauge, "
     "histogram, summary or untyped)"},
    {T, "# TYPE a Counter\n",
     "ERR 1:10: invalid metric type \"Counter\" (expected counter, "
     "gauge, histogram, summary or untyped)"},
    {T, "# HELP a-b x\n", "ERR 1:9: expected whitespace after the metric name in HELP, got '-'"},
    {T, "# HELP a \xff\n", "ERR 1:10: invalid UTF-8 in HELP text"},
    /* OpenMetrics. */
    {OM, "", "ERR 1:1: expected \"# EOF\" as the last line of OpenMetrics input"},
    {OM, "a 1\n", "ERR 2:1: expected \"# EOF\" as the last line of OpenMetrics input"},
    {OM, "# EOF\na 1\n", "ERR 2:1: unexpected data after \"# EOF\""},
    {OM, "# EOF\n\n", "ERR 2:1: unexpected data after \"# EOF\""},
    {OM, "a 1\n# EOF\n", NULL},
    {OM, "a 1\n\n# EOF\n", "ERR 2:1: unexpected empty line (not allowed in OpenMetrics)"},
    {OM, "# comment\n# EOF\n",
     "ERR 1:1: expected \"# HELP\", \"# TYPE\", \"# UNIT\" or \"# EOF\" "
     "(OpenMetrics has no other comments)"},
    {OM, " a 1\n# EOF\n", "ERR 1:1: expected a metric name or \"#\", got ' '"},
    {OM, "a  1\n# EOF\n", "ERR 1:3: expected a value after the metric name, got ' '"},
    {OM, "a 1 \n# EOF\n",
     "ERR 1:5: invalid timestamp \"\": expected seconds since the epoch such as 1700000000.123"},
    {OM, "a\t1\n# EOF\n", "ERR 1:2: expected ' ' and a value after the metric, got tab"},
    {OM, "a 1",
     "ERR 1:4: expected end of line after the sample (or ' # {' and an exemplar), got "
     "end of input"},
    {OM, "a 1\r\n# EOF\n",
     "ERR 1:4: carriage return before the newline: OpenMetrics lines end with a bare \\n"},
    {OM, "a{b=\"c\",} 1\n# EOF\n", "ERR 1:9: expected a label name after ',', got '}'"},
    {OM, "a{b=\"c\" d=\"e\"} 1\n# EOF\n", "ERR 1:8: expected ',' or '}' after a label, got ' '"},
    {OM, "a{ b=\"c\"} 1\n# EOF\n", "ERR 1:3: expected a label name or '}', got ' '"},
    {OM, "a{b=\"x\ny\"} 1\n# EOF\n",
     "ERR 1:7: newline in label value (write it as \\n), or missing closing '\"'"},
    {OM, "a 1 NaN\n# EOF\n",
     "ERR 1:5: invalid timestamp \"NaN\": expected seconds since the epoch such as 1700000000.123"},
    {OM, "a 1 1 2\n# EOF\n",
     "ERR 1:6: expected end of line after the sample (or ' # {' and an exemplar), got ' '"},
    {OM, "a 1 # x\n# EOF\n",
     "ERR 1:5: invalid timestamp \"#\": expected seconds since the epoch such as 1700000000.123"},
    {OM, "a 1 # {a=\"b\"}\n# EOF\n",
     "ERR 1:14: expected ' ' and the exemplar value, got end of line"},
    {OM, "a 1 # {a=\"b\"} x\n# EOF\n",
     "ERR 1:15: invalid value \"x\": expected a float such as 1, -2.5e3, NaN or +Inf"},
    {OM, "a 1 # {a=\"b\"} 1 y\n# EOF\n",
     "ERR 1:17: invalid exemplar timestamp \"y\": expected seconds since the epoch"},
    {OM, "# TYPE a untyped\n# EOF\n",
     "ERR 1:10: invalid metric type \"untyped\" (expected counter, gauge, histogram, "
     "gaugehistogram, summary, info, stateset or unknown)"},
    {OM, "# UNIT a_seconds bytes\n# EOF\n",
     "ERR 1:18: unit \"bytes\" is not a suffix of the metric name \"a_seconds\" (expected the name "
     "to end in \"_bytes\")"},
    {OM, "# UNIT seconds seconds\n# EOF\n",
     "ERR 1:16: unit \"seconds\" is not a suffix of the metric name \"seconds\" (expected the name "
     "to end in \"_seconds\")"},
    {OM, "# HELP a\n# EOF\n",
     "ERR 1:9: expected ' ' after the metric name in HELP, got end of "
     "line"},
    {OM, "# HELP a x", "ERR 1:11: expected end of line after HELP, got end of input"},
    {OM, "#  HELP a x\n# EOF\n",
     "ERR 1:1: expected \"# HELP\", \"# TYPE\", \"# UNIT\" or \"# EOF\" "
     "(OpenMetrics has no other comments)"},
};

static void test_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < IM_ARRAY_LEN(errors); i++) {
        char *got = render(errors[i].in, errors[i].f);
        if (errors[i].want == NULL) {
            if (strncmp(got, "ERR", 3) == 0) print_error("case %zu: %s\n", i, got);
            assert_false(strncmp(got, "ERR", 3) == 0);
        } else {
            if (strcmp(got, errors[i].want) != 0)
                print_error("case %zu (%s)\n got: %s\nwant: %s\n", i,
                            errors[i].f == OM ? "om" : "text", got, errors[i].want);
            assert_string_equal(got, errors[i].want);
        }
        im_free(got);
    }
}

static void test_limits(void **state)
{
    (void)state;
    /* A 2 MiB label value: over the default line limit; fine with a larger one. */
    size_t big = 2u << 20;
    im_buf_t in;
    im_buf_init(&in, 0);
    (void)!im_buf_puts(&in, "ok 1\na{b=\"");
    assert_int_equal(im_buf_reserve(&in, big + 64), IM_OK);
    memset(in.data + in.len, 'x', big);
    in.len += big;
    (void)!im_buf_puts(&in, "\"} 1\n");
    char *got = render_lim(in.data, in.len, T, NULL);
    assert_string_equal(got, "ERR 2:1: line is longer than the limit of 1048576 bytes "
                             "(expo_limits_t.max_line_bytes; --max-line-bytes)");
    im_free(got);
    expo_limits_t lim = {.max_line_bytes = 4u << 20};
    got = render_lim(in.data, in.len, T, &lim);
    assert_int_equal(strncmp(got, "S ok{} 1 :1\nS a{b=\"xxx", 22), 0);
    im_free(got);
    /* Huge comment and HELP lines. */
    memcpy(in.data, "# xx", 4);
    in.data[4] = '\n';
    got = render_lim(in.data, in.len, T, NULL);
    assert_string_equal(got, "ERR 2:1: line is longer than the limit of 1048576 bytes "
                             "(expo_limits_t.max_line_bytes; --max-line-bytes)");
    im_free(got);
    /* Line limit on a short line. */
    lim.max_line_bytes = 10;
    got = render_lim("abc 1\nabcdefghij 1\n", 20, T, &lim);
    assert_string_equal(got, "ERR 2:1: line is longer than the limit of 10 bytes "
                             "(expo_limits_t.max_line_bytes; --max-line-bytes)");
    im_free(got);
    got = render_lim("# HELP abcdefghij x\n", 20, T, &lim);
    assert_string_equal(got, "ERR 1:1: line is longer than the limit of 10 bytes "
                             "(expo_limits_t.max_line_bytes; --max-line-bytes)");
    im_free(got);
    /* The caller names its own settings (the scraper: its scrape config keys),
     * and one parser takes new limits between inputs. */
    expo_limits_t named = {.max_line_bytes = 10,
                           .max_labels = 1,
                           .line_setting = "body_size_limit in the scrape config",
                           .labels_setting = "label_limit in the scrape config"};
    expo_parser_t *ps = expo_parser_new(NULL);
    expo_parser_set_limits(ps, &named);
    expo_entry_t ent;
    im_err_t perr_;
    im_err_clear(&perr_);
    assert_int_equal(expo_parser_reset(ps, "abcdefghij 1\n", 13, T, &perr_), IM_OK);
    assert_int_equal(expo_parser_next(ps, &ent, &perr_), IM_ELIMIT);
    assert_non_null(strstr(perr_.msg, "limit of 10 bytes (body_size_limit in the scrape config)"));
    assert_int_equal(expo_parser_reset(ps, "a{x=\"1\",y=\"2\"} 1\n", 17, T, &perr_), IM_OK);
    assert_int_equal(expo_parser_next(ps, &ent, &perr_), IM_ELIMIT);
    assert_non_null(
        strstr(perr_.msg, "more than 1 labels in one sample (label_limit in the scrape"));
    expo_parser_set_limits(ps, NULL);
    assert_int_equal(expo_parser_reset(ps, in.data, in.len, T, &perr_), IM_OK);
    assert_int_equal(expo_parser_next(ps, &ent, &perr_), IM_ELIMIT); /* the 2 MiB comment */
    assert_non_null(strstr(perr_.msg, "(expo_limits_t.max_line_bytes; --max-line-bytes)"));
    expo_parser_free(ps);
    /* Labels and body. */
    expo_limits_t l2 = {.max_labels = 2};
    got = render_lim("a{x=\"1\",y=\"2\",z=\"3\"} 1\n", 23, T, &l2);
    assert_string_equal(got, "ERR 1:15: more than 2 labels in one sample "
                             "(expo_limits_t.max_labels; --max-labels)");
    im_free(got);
    expo_limits_t l3 = {.max_body_bytes = 4};
    got = render_lim("a 1\nb 2\n", 8, T, &l3);
    assert_string_equal(got, "ERR 1:1: input is 8 bytes, more than the limit of 4 bytes "
                             "(expo_limits_t.max_body_bytes; --max-body-bytes)");
    im_free(got);
    im_buf_free(&in);
}

/* Many escaped values in one sample make the scratch grow and move mid-sample. */
static void test_scratch_growth(void **state)
{
    (void)state;
    im_buf_t in, want;
    im_buf_init(&in, 0);
    im_buf_init(&want, 0);
    (void)!im_buf_puts(&in, "m{");
    (void)!im_buf_puts(&want, "S m{");
    for (int i = 0; i < 200; i++) {
        (void)!im_buf_printf(&in, "%sl%d=\"v%d\\\\\\\"%0*d\"", i ? "," : "", i, i, i * 3 + 1, 0);
        (void)!im_buf_printf(&want, "%sl%d=\"v%d\\\"%0*d\"", i ? "," : "", i, i, i * 3 + 1, 0);
    }
    (void)!im_buf_puts(&in, "} 7\n");
    (void)!im_buf_puts(&want, "} 7 :1\n");
    char *got = render(in.data, T);
    assert_string_equal(got, want.data);
    im_free(got);
    im_buf_free(&in);
    im_buf_free(&want);
}

static void test_floats(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        bool ok;
        double v;
    } cases[] = {
        {"0", true, 0},
        {"1", true, 1},
        {"-1.5", true, -1.5},
        {"+2", true, 2},
        {"1e3", true, 1000},
        {"1E-3", true, 0.001},
        {"0.1", true, 0.1},
        {"123456789012345678901234567890", true, 1.2345678901234568e29},
        {"0.000000000000000000000000000001", true, 1e-30},
        {"1.7976931348623157e308", true, 1.7976931348623157e308},
        {"4.9e-324", true, 4.9e-324},
        {"2.2250738585072011e-308", true, 2.2250738585072011e-308},
        {"9007199254740993", true, 9007199254740992.0},
        {"0x1.8p1", true, 3},
        {"0X10P0", true, 16},
        {"Inf", true, INFINITY},
        {"-infinity", true, -INFINITY},
        {"+INF", true, INFINITY},
        {"1e309", false, 0},
        {"-1e309", false, 0},
        {"", false, 0},
        {"-", false, 0},
        {".", false, 0},
        {"e5", false, 0},
        {"1e", false, 0},
        {"1e+", false, 0},
        {"0x", false, 0},
        {"0x1", false, 0},
        {"1.2.3", false, 0},
        {" 1", false, 0},
        {"1 ", false, 0},
        {"nan(1)", false, 0},
        {"-nan", false, 0},
        {"infx", false, 0},
        {"1_0", false, 0},
        {"--1", false, 0},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(cases); i++) {
        double v = -12345;
        bool ok = expo__parse_float(cases[i].s, strlen(cases[i].s), &v);
        if (ok != cases[i].ok) print_error("case %s\n", cases[i].s);
        assert_int_equal(ok, cases[i].ok);
        if (ok) assert_true(v == cases[i].v);
    }
    double v;
    /* Long mantissas (the 128-bit path and strtod) agree with strtod bit for bit. */
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        char num[64];
        int nd = 15 + (int)(x % 5), dot = 1 + (int)((x >> 8) % (uint64_t)nd);
        int ex = (int)((x >> 16) % 61) - 30, k = 0;
        uint64_t y = x;
        for (int d = 0; d < nd; d++) {
            if (d == dot) num[k++] = '.';
            y = y * 6364136223846793005ULL + 1442695040888963407ULL;
            num[k++] = (char)('0' + (d == 0 ? 1 + (y >> 60) % 9 : (y >> 59) % 10));
        }
        k += snprintf(num + k, sizeof num - (size_t)k, "e%d", ex);
        double want = strtod(num, NULL), got = 0;
        assert_true(expo__parse_float(num, (size_t)k, &got));
        if (memcmp(&want, &got, sizeof got) != 0)
            print_error("%s: %.17g != %.17g\n", num, got, want);
        assert_memory_equal(&want, &got, sizeof got);
    }
    assert_true(expo__parse_float("NaN", 3, &v) && isnan(v));
    assert_true(expo__parse_float("-0", 2, &v) && v == 0 && signbit(v));
}

static void test_content_type(void **state)
{
    (void)state;
#define CT(s) expo_format_from_content_type(s, strlen(s))
    assert_int_equal(CT("application/openmetrics-text; version=1.0.0; charset=utf-8"), OM);
    assert_int_equal(CT(" Application/OpenMetrics-Text ;version=0.0.1"), OM);
    assert_int_equal(CT("text/plain; version=0.0.4"), T);
    assert_int_equal(CT(""), T);
    assert_int_equal(CT("application/json"), T);
    assert_int_equal(CT("application/openmetrics-textx"), T);
#undef CT
    assert_string_equal(expo_format_name(OM), "openmetrics");
    assert_non_null(strstr(expo_format_content_type(T), "0.0.4"));
}

/* ---- expo_check ---- */

static void collect(void *user, const expo_problem_t *pr)
{
    im_buf_t *b = user;
    (void)!im_buf_printf(b, "%d:%d: %s: %s\n", pr->line, pr->col,
                         pr->severity == EXPO_SEV_ERROR ? "error" : "warning", pr->message);
}

static char *check(const char *in, expo_format_t f, bool lint, expo_check_stats_t *st)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    expo_check_opts_t o = {.lint = lint};
    im_rc rc = expo_check(in, strlen(in), f, &o, collect, &b, st);
    assert_int_equal(rc, strstr(b.data ? b.data : "", ": error: ") ? IM_EPARSE : IM_OK);
    if (!b.data) (void)!im_buf_puts(&b, "");
    return im_buf_steal(&b, NULL);
}

#define CHECK(f, lint, in, want)                                                                   \
    do {                                                                                           \
        char *got_ = check(in, f, lint, NULL);                                                     \
        if (strcmp(got_, want) != 0) print_error("input: %s\n", in);                               \
        assert_string_equal(got_, want);                                                           \
        im_free(got_);                                                                             \
    } while (0)

static void test_check(void **state)
{
    (void)state;
    expo_check_stats_t st;
    char *got =
        check("# HELP a_total x\n# TYPE a_total counter\na_total{x=\"1\"} 1\na_total{x=\"2\"} "
              "1\n# HELP b x\n# TYPE b gauge\nb 1\n",
              T, true, &st);
    assert_string_equal(got, "");
    im_free(got);
    assert_int_equal(st.families, 2);
    assert_int_equal(st.series, 3);
    assert_int_equal(st.samples, 3);
    CHECK(T, false, "a 1\na 2\n", "2:1: error: duplicate series a (first at line 1)\n");
    CHECK(T, false, "a{x=\"1\",y=\"2\"} 1\na{y=\"2\",x=\"1\"} 2\n",
          "2:1: error: duplicate series a (first at line 1)\n");
    CHECK(T, false, "a{x=\"\"} 1\na 2\n", "2:1: error: duplicate series a (first at line 1)\n");
    CHECK(T, false, "a{x=\"1\",x=\"2\"} 1\n", "1:9: error: duplicate label name \"x\" in a\n");
    CHECK(T, false, "a{__name__=\"b\"} 1\n", "1:3: error: label name \"__name__\" is reserved\n");
    CHECK(T, false, "# TYPE a gauge\n# TYPE a gauge\na 1\n",
          "2:1: error: second TYPE line for metric family \"a\" (first at line 1)\n");
    CHECK(T, false, "# HELP a x\n# HELP a y\na 1\n",
          "2:1: error: second HELP line for metric family \"a\" (first at line 1)\n");
    CHECK(T, false, "a 1\n# TYPE a gauge\n",
          "2:1: error: TYPE line for metric family \"a\" comes after its samples (line 1)\n");
    CHECK(T, false, "a{x=\"1\"} 1\nb 2\na{x=\"2\"} 3\n",
          "3:1: warning: metric family \"a\" is split: its lines are not together (it started at "
          "line 1)\n");
    CHECK(OM, false, "a{x=\"1\"} 1\nb 2\na{x=\"2\"} 3\n# EOF\n",
          "3:1: error: metric family \"a\" is split: its lines are not together (it started at "
          "line 1)\n");
    CHECK(T, false,
          "# TYPE h histogram\nh_bucket{le=\"1\"} 5\nh_bucket{le=\"2\"} 3\nh_bucket{le=\"+Inf\"} "
          "7\nh_sum 1\nh_count 6\n",
          "3:1: warning: histogram h: buckets are not cumulative: le=\"2\" has 3, less than 5 in "
          "le=\"1\"\n6:1: warning: histogram h: _count (6) is not equal to the le=\"+Inf\" bucket "
          "(7)\n");
    CHECK(T, false,
          "# TYPE h histogram\nh_bucket{a=\"1\",le=\"+Inf\"} 2\nh_bucket{a=\"1\",le=\"0.5\"} "
          "1\nh_count{a=\"1\"} 2\nh_bucket{a=\"2\",le=\"1\"} 1\nh_count{a=\"2\"} 1\n",
          "5:1: warning: histogram h has no le=\"+Inf\" bucket\n");
    CHECK(T, false, "# TYPE h histogram\nh_bucket{le=\"x\"} 1\n",
          "2:10: error: expected a float as the value of the \"le\" label, got \"x\"\n");
    CHECK(T, false, "# TYPE h histogram\nh_bucket 1\n",
          "2:1: warning: histogram bucket h_bucket without an \"le\" label\n");
    CHECK(T, false, "# TYPE s summary\ns{quantile=\"q\"} 1\n",
          "2:3: error: expected a float as the value of the \"quantile\" label, got \"q\"\n");
    CHECK(OM, false,
          "# TYPE g gaugehistogram\ng_bucket{le=\"+Inf\"} 2\ng_gcount 3\n# TYPE s "
          "stateset\ns{s=\"a\"} 2\ns{t=\"b\"} 1\n# TYPE i info\ni_info 2\n# TYPE c counter\nc 1\n# "
          "EOF\n",
          "3:1: warning: histogram g: _gcount (3) is not equal to the le=\"+Inf\" bucket (2)\n"
          "5:1: warning: stateset values must be 0 or 1\n6:1: warning: stateset sample without a "
          "label named after the family (\"s\")\n8:1: warning: info metric values must be 1\n"
          "10:1: warning: OpenMetrics counter samples must be named c_total (or c_created)\n");
    CHECK(T, false, "a 1\r\n",
          "1:1: error: line ends with \\r\\n: Prometheus reads the \\r as part "
          "of the value and rejects the scrape (use \\n line ends)\n");
    CHECK(T, false, "a 1",
          "1:4: warning: no newline at the end of the input (Prometheus accepts "
          "it, promtool does not)\n");
    CHECK(
        T, false, "a{x=\"\\q\"} 1\n",
        "1:6: warning: invalid escape sequence in label value: only \\\\, \\\" and \\n are defined "
        "(Prometheus keeps the backslash, promtool rejects it)\n");
    CHECK(T, false, "a{x=\"1\" y=\"2\"} 1\n",
          "1:1: warning: labels not separated by ',' (Prometheus accepts it, promtool and other "
          "parsers do not)\n");
    CHECK(T, false, "ok 1\na{x=\"1\" 1\n", "2:9: error: expected a label name or '}', got '1'\n");
    /* An exemplar with too many characters. */
    im_buf_t in;
    im_buf_init(&in, 0);
    (void)!im_buf_puts(&in, "# TYPE c counter\nc_total 1 # {t=\"");
    for (int i = 0; i < 130; i++) (void)!im_buf_putc(&in, 'x');
    (void)!im_buf_puts(&in, "\"} 1\n# EOF\n");
    CHECK(OM, false, in.data,
          "2:1: warning: exemplar labels have 131 characters, more than the 128 OpenMetrics "
          "allows\n");
    im_buf_free(&in);
}

static void test_lints(void **state)
{
    (void)state;
    CHECK(T, true, "# TYPE a counter\na 1\n",
          "1:1: warning: a no help text\n1:1: warning: a counter metrics should have \"_total\" "
          "suffix\n");
    CHECK(T, true, "# HELP x_total x\n# TYPE x_total gauge\nx_total 1\n",
          "1:1: warning: x_total non-counter metrics should not have \"_total\" suffix\n");
    CHECK(T, true, "# HELP y_count x\n# TYPE y_count gauge\ny_count{le=\"1\",quantile=\"1\"} 1\n",
          "1:1: warning: y_count non-histogram and non-summary metrics should not have \"_count\" "
          "suffix\n1:1: warning: y_count non-histogram metrics should not have \"le\" label\n1:1: "
          "warning: y_count non-summary metrics should not have \"quantile\" label\n");
    /* Untyped families get none of the type-dependent lints (as promtool). */
    CHECK(T, true, "# HELP y_sum x\ny_sum{le=\"1\"} 1\n# HELP y_total x\ny_total 1\n", "");
    CHECK(T, true,
          "# HELP y_sum x\n# TYPE y_sum gauge\ny_sum 1\n# HELP y_bucket x\n# TYPE y_bucket "
          "gauge\ny_bucket 1\n",
          "1:1: warning: y_sum non-histogram and non-summary metrics should not have \"_sum\" "
          "suffix\n4:1: warning: y_bucket non-histogram metrics should not have \"_bucket\" "
          "suffix\n");
    CHECK(T, true, "# HELP x_milliseconds_kilobytes x\nx_milliseconds_kilobytes 1\n",
          "1:1: warning: x_milliseconds_kilobytes use base unit \"seconds\" instead of "
          "\"milliseconds\"\n"); /* one per name (promtool picks one at random) */
    CHECK(T, true, "# HELP x_MS x\nx_MS 1\n# HELP ms_x x\nms_x 1\n",
          "1:1: warning: x_MS metric names should not contain abbreviated units\n");
    CHECK(T, true, "# HELP x_Counter x\nx_Counter 1\n# HELP gauge_x x\ngauge_x 1\n",
          "1:1: warning: x_Counter metric name should not include type 'counter'\n");
    CHECK(T, true, "# HELP a:b x\na:b 1\n",
          "1:1: warning: a:b metric names should not contain ':'\n");
    CHECK(T, true, "# HELP fooBar x\nfooBar{myLabel=\"1\"} 1\nfooBar{myLabel=\"2\"} 1\n",
          "1:1: warning: fooBar metric names should be written in 'snake_case' not 'camelCase'\n"
          "2:8: warning: fooBar label names should be written in 'snake_case' not 'camelCase'\n"
          "3:8: warning: fooBar label names should be written in 'snake_case' not 'camelCase'\n");
    CHECK(OM, true, "# HELP c x\n# TYPE c counter\nc_total 1\n# EOF\n", "");
}

/* ---- Writers ---- */

static void test_writer(void **state)
{
    (void)state;
    im_buf_t out;
    im_buf_init(&out, 0);
    expo_writer_t w;
    expo_writer_init(&w, &out, T);
    expo_label_t l[] = {{IM_SV("a"), IM_SV("x\"y\\z\nw")}, {IM_SV("le"), IM_SV("+Inf")}};
    expo_label_t exl[] = {{IM_SV("trace_id"), IM_SV("abc")}};
    expo_exemplar_t ex = {exl, 1, 0.5, true, 1700000000123};
    assert_int_equal(expo_write_help(&w, IM_SV("m"), IM_SV("h \\ \" \n")), IM_OK);
    assert_int_equal(expo_write_type(&w, IM_SV("m"), EXPO_TYPE_UNKNOWN), IM_OK);
    assert_int_equal(expo_write_unit(&w, IM_SV("m"), IM_SV("s")), IM_OK);
    assert_int_equal(expo_write_sample(&w, IM_SV("m"), l, 2, 1e6, true, -5, &ex), IM_OK);
    assert_int_equal(expo_write_sample(&w, IM_SV("n"), NULL, 0, NAN, false, 0, NULL), IM_OK);
    assert_int_equal(expo_write_sample(&w, IM_SV("n"), NULL, 0, -INFINITY, false, 0, NULL), IM_OK);
    assert_int_equal(expo_write_eof(&w), IM_OK);
    assert_string_equal(out.data, "# HELP m h \\\\ \" \\n\n# TYPE m untyped\n"
                                  "m{a=\"x\\\"y\\\\z\\nw\",le=\"+Inf\"} 1e+06 -5\nn NaN\nn -Inf\n");
    im_buf_reset(&out);
    expo_writer_init(&w, &out, OM);
    (void)expo_write_help(&w, IM_SV("m_seconds"), IM_SV("h \\ \" \n"));
    (void)expo_write_type(&w, IM_SV("m_seconds"), EXPO_TYPE_COUNTER);
    (void)expo_write_unit(&w, IM_SV("m_seconds"), IM_SV("seconds"));
    (void)expo_write_sample(&w, IM_SV("m_seconds_total"), l, 1, 0.1, true, 1700000000120, &ex);
    (void)expo_write_sample(&w, IM_SV("m_seconds_total"), NULL, 0, 2, true, 1500, NULL);
    (void)expo_write_sample(&w, IM_SV("m_seconds_total"), NULL, 0, 3, true, -1001, NULL);
    assert_int_equal(expo_write_eof(&w), IM_OK);
    assert_string_equal(
        out.data,
        "# HELP m_seconds h \\\\ \\\" \\n\n# TYPE m_seconds counter\n# UNIT m_seconds seconds\n"
        "m_seconds_total{a=\"x\\\"y\\\\z\\nw\"} 0.1 1700000000.12 # {trace_id=\"abc\"} 0.5 "
        "1700000000.123\nm_seconds_total 2 1.5\nm_seconds_total 3 -1.001\n# EOF\n");
    /* And it parses back. */
    char *got = render(out.data, OM);
    assert_string_equal(
        got, "HELP m_seconds h \\ \" \n :1\nTYPE m_seconds counter :2\nUNIT m_seconds seconds :3\n"
             "S m_seconds_total{a=\"x\"y\\z\nw\"} 0.1 @1700000000120 # {trace_id=\"abc\"} 0.5 "
             "@1700000000123 [counter/9] :4\nS m_seconds_total{} 2 @1500 [counter/9] :5\n"
             "S m_seconds_total{} 3 @-1001 [counter/9] :6\nEOF :7\n");
    im_free(got);
    /* Sticky cap error. */
    im_buf_t small;
    im_buf_init(&small, 8);
    expo_writer_init(&w, &small, T);
    assert_int_equal(expo_write_sample(&w, IM_SV("long_name"), NULL, 0, 1, false, 0, NULL),
                     IM_ELIMIT);
    assert_int_equal(expo_write_eof(&w), IM_ELIMIT);
    im_buf_free(&small);
    /* From a label set. */
    im_buf_reset(&out);
    expo_writer_init(&w, &out, T);
    const im_labels_t *ls = im_labels_from_strs("__name__", "up", "job", "a", "b", "c", NULL);
    assert_int_equal(expo_write_sample_ls(&w, ls, 1, true, 42), IM_OK);
    assert_string_equal(out.data, "up{b=\"c\",job=\"a\"} 1 42\n");
    im_labels_unref(ls);
    im_buf_free(&out);
}

static int cb_count(void *user, const expo_entry_t *e)
{
    int *n = user;
    (*n)++;
    return *n == 3 && e->kind == EXPO_ENTRY_SAMPLE ? 77 : 0;
}

static void test_callbacks_and_labels(void **state)
{
    (void)state;
    const char *in = "# HELP a x\na{z=\"1\",b=\"2\"} 1\nb 2\nc 3\n";
    int n = 0;
    expo_callbacks_t cb = {cb_count, cb_count};
    assert_int_equal(expo_parse(in, strlen(in), T, &cb, &n, NULL, NULL), 77);
    assert_int_equal(n, 3);
    im_err_t err;
    assert_int_equal(expo_parse("a{", 2, T, NULL, NULL, NULL, &err), IM_EPARSE);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.col, 3);
    /* Labels helper. */
    expo_parser_t *p = expo_parser_new(NULL);
    assert_int_equal(expo_parser_reset(p, in, strlen(in), T, NULL), IM_OK);
    expo_entry_t e;
    assert_int_equal(expo_parser_next(p, &e, NULL), 1);
    assert_int_equal(expo_parser_next(p, &e, NULL), 1);
    im_labels_builder_t lb;
    im_lb_init(&lb);
    const im_labels_t *ls = expo_entry_labels(&e, &lb);
    im_buf_t out;
    im_buf_init(&out, 0);
    assert_int_equal(im_labels_format(ls, &out), IM_OK);
    assert_string_equal(out.data, "a{b=\"2\", z=\"1\"}");
    im_labels_unref(ls);
    im_lb_free(&lb);
    im_buf_free(&out);
    /* Reuse after the end and after reset. */
    while (expo_parser_next(p, &e, NULL) > 0) {
    }
    assert_int_equal(expo_parser_next(p, &e, NULL), 0);
    assert_int_equal(expo_parser_reset(p, "x 1\n# EOF\n", 10, OM, NULL), IM_OK);
    assert_int_equal(expo_parser_next(p, &e, NULL), 1);
    assert_int_equal(expo_parser_next(p, &e, NULL), 1);
    assert_int_equal(e.kind, EXPO_ENTRY_EOF);
    assert_int_equal(expo_parser_next(p, &e, NULL), 0);
    expo_parser_free(p);
}

/* ---- Random round trip: write random families, parse, compare ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double rnd_value(void)
{
    switch (rnd() % 8) {
    case 0: return NAN;
    case 1: return rnd() % 2 ? INFINITY : -INFINITY;
    case 2: return (double)(int64_t)(rnd() % 2000000) - 1000000;
    case 3: return 0;
    default: {
        uint64_t b = rnd();
        double d;
        memcpy(&d, &b, sizeof d);
        return isfinite(d) ? d : 1.5;
    }
    }
}

static void test_round_trip(void **state)
{
    (void)state;
    static const char alpha[] = "abcXYZ_:019";
    static const char valch[] = "ab \"\\\n{}=,#\xc3\xa9";
    for (int iter = 0; iter < 300; iter++) {
        expo_format_t f = iter % 2 ? OM : T;
        im_buf_t out, names, vals;
        im_buf_init(&out, 0);
        im_buf_init(&names, 0);
        im_buf_init(&vals, 0);
        expo_writer_t w;
        expo_writer_init(&w, &out, f);
        int ns = 1 + (int)(rnd() % 20);
        struct {
            char name[16];
            expo_label_t l[4];
            char lv[4][12];
            char ln[4][8];
            uint32_t nl;
            double v;
            bool has_ts;
            int64_t t;
        } s[20];
        for (int i = 0; i < ns; i++) {
            int nlen = 1 + (int)(rnd() % 10);
            s[i].name[0] = "ab_:"[rnd() % 4];
            for (int k = 1; k < nlen; k++) s[i].name[k] = alpha[rnd() % (sizeof alpha - 1)];
            s[i].name[nlen] = 0;
            s[i].nl = (uint32_t)(rnd() % 4);
            for (uint32_t k = 0; k < s[i].nl; k++) {
                s[i].ln[k][0] = "lm_"[rnd() % 3];
                s[i].ln[k][1] = (char)('0' + k);
                s[i].ln[k][2] = 0;
                int vl = (int)(rnd() % 11);
                int q = 0;
                while (q < vl) {
                    char c = valch[rnd() % (sizeof valch - 1)];
                    if ((unsigned char)c >= 0x80) {
                        if (q + 2 > vl) break;
                        s[i].lv[k][q++] = '\xc3';
                        s[i].lv[k][q++] = '\xa9';
                        continue;
                    }
                    s[i].lv[k][q++] = c;
                }
                s[i].lv[k][q] = 0;
                s[i].l[k].name = im_sv(s[i].ln[k]);
                s[i].l[k].value = im_sv(s[i].lv[k]);
            }
            s[i].v = rnd_value();
            s[i].has_ts = rnd() % 2;
            s[i].t = (int64_t)(rnd() % 4000000000000ULL) - (f == T ? 0 : 2000000000000LL);
            assert_int_equal(expo_write_sample(&w, im_sv(s[i].name), s[i].l, s[i].nl, s[i].v,
                                               s[i].has_ts, s[i].t, NULL),
                             IM_OK);
        }
        (void)expo_write_eof(&w);
        expo_parser_t *p = expo_parser_new(NULL);
        assert_int_equal(expo_parser_reset(p, out.data, out.len, f, NULL), IM_OK);
        expo_entry_t e;
        im_err_t err;
        for (int i = 0; i < ns; i++) {
            int r = expo_parser_next(p, &e, &err);
            if (r != 1) print_error("%s\nerr %d:%d %s\n", out.data, err.line, err.col, err.msg);
            assert_int_equal(r, 1);
            assert_int_equal(e.kind, EXPO_ENTRY_SAMPLE);
            assert_true(im_sv_eq_cstr(e.name, s[i].name));
            assert_int_equal(e.nlabels, s[i].nl);
            for (uint32_t k = 0; k < s[i].nl; k++) {
                assert_true(im_sv_eq(e.labels[k].name, s[i].l[k].name));
                assert_true(im_sv_eq(e.labels[k].value, s[i].l[k].value));
            }
            if (isnan(s[i].v))
                assert_true(isnan(e.value));
            else
                assert_true(e.value == s[i].v);
            assert_int_equal(e.has_ts, s[i].has_ts);
            if (s[i].has_ts) assert_int_equal(e.t_ms, s[i].t);
        }
        if (f == OM) {
            assert_int_equal(expo_parser_next(p, &e, NULL), 1);
            assert_int_equal(e.kind, EXPO_ENTRY_EOF);
        }
        assert_int_equal(expo_parser_next(p, &e, NULL), 0);
        expo_parser_free(p);
        im_buf_free(&out);
        im_buf_free(&names);
        im_buf_free(&vals);
    }
}

/* ---- Text fast path (structural masks) against the general path ---- */

/* Renders in with every sample path (general only, fast with each classifier)
 * and checks that entries, errors and notes are the same. */
static void same_all_paths(const char *in, size_t len, const expo_limits_t *lim)
{
    static const int modes[] = {EXPO_FAST_AUTO, EXPO_FAST_SCALAR, EXPO_FAST_SSE2, EXPO_FAST_AVX2};
    char *want = render_mode(in, len, T, lim, EXPO_FAST_OFF);
    for (size_t m = 0; m < IM_ARRAY_LEN(modes); m++) {
        char *got = render_mode(in, len, T, lim, modes[m]);
        if (strcmp(got, want) != 0)
            print_error("mode %d, input (%zu bytes):\n%.*s\n got: %s\nwant: %s\n", modes[m], len,
                        (int)len, in, got, want);
        assert_string_equal(got, want);
        im_free(got);
    }
    im_free(want);
    /* Notes (CRLF, missing newline, missing commas, unknown escapes). */
    expo_parser_t *a = expo_parser_new(lim), *b = expo_parser_new(lim);
    a->fast = EXPO_FAST_OFF;
    expo_entry_t e;
    if (expo_parser_reset(a, in, len, T, NULL) == IM_OK &&
        expo_parser_reset(b, in, len, T, NULL) == IM_OK) {
        while (expo_parser_next(a, &e, NULL) > 0) {
        }
        while (expo_parser_next(b, &e, NULL) > 0) {
        }
        const expo_parse_notes_t *na = expo__parser_notes(a), *nb = expo__parser_notes(b);
        assert_int_equal(na->crlf_line, nb->crlf_line);
        assert_int_equal(na->no_final_newline, nb->no_final_newline);
        assert_int_equal(na->missing_comma_line, nb->missing_comma_line);
        assert_int_equal(na->bad_escape_line, nb->bad_escape_line);
        assert_int_equal(na->bad_escape_col, nb->bad_escape_col);
    }
    expo_parser_free(a);
    expo_parser_free(b);
}

static const char *const fast_lines[] = {
    "m 1\n",
    "m{} 1\n",
    "m{a=\"1\"} 1\n",
    "m{a=\"1\",} 2\n",
    "vllm:x_total{pod=\"p-1\",instance=\"10.0.0.1:8000\",le=\"+Inf\"} 1.787649975318503e+09\n",
    "m{a=\"1\",b=\"x y = , } {\"} 3 1700000000000\n",
    "m{a=\"1\"} NaN\n",
    "m{a=\"1\"} +Inf\n",
    "m{a=\"1\"} -Inf\n",
    "m{a=\"1\"} -0\n",
    "m{a=\"1\"} 2.5374449664e+010\n",
    "m{a=\"1\"} 1e-5\n",
    "m{a=\"1\"} 12345678901234567890\n",
    "m{a=\"1\"} 0.000000012345678901\n",
    "m{a=\"1\"} 0x1p3\n",
    "m{a=\"1\"} 1.\n",
    "m{a=\"1\"} .5\n",
    "m{a=\"1\"} 1e0005\n",
    "m{a=\"\\\\ \\\" \\n \\q\"} 1\n",
    "m{a=\"\xc3\xa9\"} 1\n",
    "m{a=\"\xc3\"} 1\n",
    "m{a=\"1\"} 1\r\n",
    "m{a=\"1\" b=\"2\"} 1\n",
    "m{a=\"1\",,b=\"2\"} 1\n",
    "m{ a=\"1\" } 1\n",
    "m {a=\"1\"} 1\n",
    "m{a=\"1\"}  1  \n",
    "m{a=\"1\"}\t1\t5\n",
    "m{a=\"1\"} 1 -5\n",
    "m{a=\"1\"} 1 99999999999999999999\n",
    "m{a=\"1\"} 1 5 6\n",
    "m{a=\"1\"} 1{\n",
    "m{a=\"1\"}\n",
    "m{a=\"1\"} \n",
    "m{a=\"1\"\n",
    "m{a=\"1\n2\"} 1\n",
    "m{1a=\"1\"} 1\n",
    "m{a:b=\"1\"} 1\n",
    "m{=\"1\"} 1\n",
    "m{a=1} 1\n",
    "m{a=\"1\"}} 1\n",
    "m{a=\"1\"} 1 # x\n",
    "# a comment {a=\"1\"}\n",
    "# HELP m help \\n text\n",
    "# TYPE m histogram\n",
    "m_bucket{le=\"1\"} 1\n",
    "m_count 1\n",
    "\n",
    "  m 1\n",
    "m\t1\n",
};

/* Builds lines into one input after pad bytes of a comment, so the lines cross
 * 64-byte block boundaries at every offset. */
static void fast_mix(im_buf_t *in, size_t pad, const size_t *pick, size_t npick)
{
    im_buf_reset(in);
    if (pad) {
        (void)!im_buf_puts(in, "#");
        for (size_t i = 1; i < pad; i++) (void)!im_buf_putc(in, 'x');
        (void)!im_buf_putc(in, '\n');
    }
    for (size_t i = 0; i < npick; i++) (void)!im_buf_puts(in, fast_lines[pick[i]]);
}

static void test_fast_path(void **state)
{
    (void)state;
    im_buf_t in;
    im_buf_init(&in, 0);
    /* Every line at every offset of a block, with and without the final newline. */
    for (size_t k = 0; k < IM_ARRAY_LEN(fast_lines); k++) {
        for (size_t pad = 0; pad < 140; pad++) {
            size_t pick[3] = {0, k, 4};
            fast_mix(&in, pad, pick, 3);
            same_all_paths(in.data, in.len, NULL);
            same_all_paths(in.data, in.len - 1, NULL); /* no final newline */
            fast_mix(&in, pad, pick + 1, 1);
            same_all_paths(in.data, in.len - 1, NULL);
        }
    }
    /* Long names and values around the 56-bit window and the 64-byte block. */
    static const size_t big[] = {100, 200, 5000};
    for (size_t a = 1; a < 74; a++) {
        size_t len = a < 71 ? a : big[a - 71];
        for (size_t pad = 0; pad < 70; pad += 3) {
            for (int what = 0; what < 4; what++) {
                fast_mix(&in, pad, NULL, 0);
                if (what == 0) { /* metric name */
                    for (size_t i = 0; i < len; i++) (void)!im_buf_putc(&in, "ab:_9"[i % 5]);
                    (void)!im_buf_puts(&in, "{a=\"1\"} 1\n");
                } else if (what == 1) { /* label name */
                    (void)!im_buf_puts(&in, "m{x=\"1\",");
                    for (size_t i = 0; i < len; i++) (void)!im_buf_putc(&in, "l_9Z"[i % 4]);
                    (void)!im_buf_puts(&in, "=\"v\"} 1\n");
                } else if (what == 2) { /* label value */
                    (void)!im_buf_puts(&in, "m{x=\"1\",y=\"");
                    for (size_t i = 0; i < len; i++) (void)!im_buf_putc(&in, "v =,}{:"[i % 7]);
                    (void)!im_buf_puts(&in, "\",z=\"2\"} 1 123\n");
                } else { /* value */
                    (void)!im_buf_puts(&in, "m{x=\"1\"} ");
                    for (size_t i = 0; i < len; i++) (void)!im_buf_putc(&in, i == 1 ? '.' : '1');
                    (void)!im_buf_puts(&in, "\n");
                }
                (void)!im_buf_puts(&in, "n 2\n");
                same_all_paths(in.data, in.len, NULL);
                expo_limits_t lim = {.max_line_bytes = 60, .max_labels = 2};
                same_all_paths(in.data, in.len, &lim);
            }
        }
    }
    /* Many labels (the label array grows), limits at the edge. */
    for (int nl = 1; nl < 40; nl += 3) {
        fast_mix(&in, 0, NULL, 0);
        (void)!im_buf_puts(&in, "m{");
        for (int i = 0; i < nl; i++) (void)!im_buf_printf(&in, "%sl%d=\"%d\"", i ? "," : "", i, i);
        (void)!im_buf_puts(&in, "} 1\n");
        same_all_paths(in.data, in.len, NULL);
        for (uint32_t ml = 1; ml < 20; ml += 4) {
            expo_limits_t lim = {.max_labels = ml, .max_line_bytes = in.len - 2 + ml % 3};
            same_all_paths(in.data, in.len, &lim);
        }
    }
    /* Inputs bigger than the classified window (16 KiB): lines straddle it. */
    for (size_t pad = 0; pad < 200; pad += 37) {
        fast_mix(&in, pad + 1, NULL, 0);
        for (int i = 0; in.len < 3 * 64 * EXPO_WIN_BLKS; i++)
            (void)!im_buf_printf(&in, "metric_%d{pod=\"pod-%d\",v=\"%0*d\"} %d.5\n", i % 7, i,
                                 i % 90, 0, i);
        same_all_paths(in.data, in.len, NULL);
        /* one line longer than the window */
        (void)!im_buf_puts(&in, "long{v=\"");
        for (size_t i = 0; i < 64 * EXPO_WIN_BLKS + 100; i++) (void)!im_buf_putc(&in, 'x');
        (void)!im_buf_puts(&in, "\"} 1\nafter 2\n");
        same_all_paths(in.data, in.len, NULL);
    }
    /* Random mixes and byte mutations of the lines above. */
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    static const char mut[] = "\"\\\n\r\t {},=#.e-+09az:_\xc3\xa9\x80";
    for (int iter = 0; iter < 4000; iter++) {
        size_t pick[8], np = 1 + (size_t)iter % 8;
        for (size_t i = 0; i < np; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            pick[i] = x % IM_ARRAY_LEN(fast_lines);
        }
        fast_mix(&in, x % 97, pick, np);
        int nm = (int)((x >> 40) % 4);
        for (int k = 0; k < nm && in.len; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            in.data[x % in.len] = mut[(x >> 32) % (sizeof mut - 1)];
        }
        same_all_paths(in.data, in.len, NULL);
        expo_limits_t lim = {.max_line_bytes = 40 + x % 60, .max_labels = 1 + (x >> 20) % 3};
        same_all_paths(in.data, in.len, &lim);
    }
    im_buf_free(&in);
}

/* The SWAR float reader gives what the general reader gives. */
static void test_fast_float(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "0",
        "1",
        "-1",
        "-0",
        "12.0",
        "0.0",
        "1.",
        ".5",
        "-.5",
        "00012.50",
        "1e5",
        "1E-5",
        "1e+22",
        "1e23",
        "1e-22",
        "1e-23",
        "1.5e300",
        "1e",
        "1e+",
        "1.e2",
        "12345678",
        "123456789",
        "1234567890123456",
        "12345678901234567",
        "9007199254740993",
        "9007199254740992",
        "1.787649975318503e+09",
        "2.5374449664e+010",
        "0.1234567812345678",
        "0.12345678123456789",
        "1234567.12345678",
        "12345678.12345678",
        "NaN",
        "+Inf",
        "-Inf",
        "+1",
        "--1",
        "1-",
        "0x1p3",
        "1_0",
        "1.2.3",
        "1e0005",
        "1e005",
        "-",
        "+",
        "e5",
        "1ee5",
        "7.0e-1",
        "5.000",
        "-3.0",
        "1.0e5",
        "0.00e-3",
        "123456789012.0000000",
        "9007199254740993.0",
        "1.0e-30",
        "1.0e25",
    };
    char buf[128];
    for (size_t i = 0; i < IM_ARRAY_LEN(cases); i++) {
        for (int end = 0; end < 2; end++) {
            size_t n = strlen(cases[i]);
            memset(buf, end ? '\n' : ' ', sizeof buf);
            memcpy(buf, cases[i], n);
            double a = -7, b = -7;
            bool oa = expo__parse_float(buf, n, &a), ob = expo__parse_float_fast(buf, n, &b);
            if (oa != ob) print_error("case %s\n", cases[i]);
            assert_int_equal(oa, ob);
            if (oa) assert_memory_equal(&a, &b, sizeof a);
        }
    }
    uint64_t x = 0x123456789ABCDEFULL;
    for (int i = 0; i < 300000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t k = 0;
        if (x & 1) buf[k++] = '-';
        int ni = (int)((x >> 1) % 20), nf = (int)((x >> 6) % 20);
        uint64_t y = x;
        for (int d = 0; d < ni; d++, y = y * 6364136223846793005ULL + 1)
            buf[k++] = (char)('0' + (y >> 60) % 10);
        if ((x >> 11) % 4) {
            buf[k++] = '.';
            for (int d = 0; d < nf; d++, y = y * 6364136223846793005ULL + 1)
                buf[k++] = (x >> 30) % 4 ? (char)('0' + (y >> 60) % 10) : '0';
        }
        if ((x >> 13) % 3 == 0)
            k += (size_t)snprintf(buf + k, 16, "e%d", (int)((x >> 20) % 61) - 30);
        size_t n = k;
        memset(buf + n, (x >> 40) & 1 ? ' ' : '\n', sizeof buf - n);
        double a = -7, b = -7;
        bool oa = expo__parse_float(buf, n, &a), ob = expo__parse_float_fast(buf, n, &b);
        if (oa != ob || (oa && memcmp(&a, &b, sizeof a) != 0))
            print_error("case %.*s\n", (int)n, buf);
        assert_int_equal(oa, ob);
        if (oa) assert_memory_equal(&a, &b, sizeof a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_basic),  cmocka_unit_test(test_text_families),
        cmocka_unit_test(test_openmetrics), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_limits),      cmocka_unit_test(test_scratch_growth),
        cmocka_unit_test(test_floats),      cmocka_unit_test(test_content_type),
        cmocka_unit_test(test_check),       cmocka_unit_test(test_lints),
        cmocka_unit_test(test_writer),      cmocka_unit_test(test_callbacks_and_labels),
        cmocka_unit_test(test_round_trip),  cmocka_unit_test(test_fast_path),
        cmocka_unit_test(test_fast_float),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
