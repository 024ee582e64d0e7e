/* test_regex.c — unit tests for src/labels/regex.c: Go's syntax accept/reject list
 * (the expected texts are what promtool 2.42 prints for a relabel regex), Go's meaning
 * of \s \v and octal escapes, `.` and `$`, captures and Expand, and the cost bound: a
 * pathological pattern over a 10k-byte value gives the right answer or IM_ELIMIT,
 * never a silent non-match, and quickly. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <cmocka.h>

#include "labels/labels.h"
#include "labels/regex.h"

/* "" = accepted; else the error text (Go's, as promtool 2.42 reports it). */
static const struct {
    const char *pat, *err;
} syntax_cases[] = {
    {"a.*b", ""},
    {"(a|a)*b", ""},
    {"(a+)+b", ""},
    {"(.*a){20}", ""},
    {"\\Qa.b\\E", ""},
    {"a\\z", ""},
    {"\\pL+", ""},
    {"\\p{Greek}", ""},
    {"[[:alpha:]]+", ""},
    {"(?i)abc", ""},
    {"(?s).", ""},
    {"(?m)^a$", ""},
    {"(?U)a+", ""},
    {"(?P<name>x)", ""},
    {"\\d\\w\\s\\S\\W\\D", ""},
    {"\\x41\\x{263a}", ""},
    {"\\101", ""},
    {"\\0", ""},
    {"a{2,5}", ""},
    {"[^\\n]", ""},
    {"(?i:a)b", ""},
    {"\\b\\B\\A", ""},
    {"[\\s]", ""},
    {"\\v", ""},
    {"(?=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"},
    {"(?!a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?!`"},
    {"(?<=a)b", "error parsing regexp: invalid or unsupported Perl syntax: `(?<`"},
    {"(?<!a)b", "error parsing regexp: invalid or unsupported Perl syntax: `(?<`"},
    {"(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`"},
    {"a++", "error parsing regexp: invalid nested repetition operator: `++`"},
    {"a*+", "error parsing regexp: invalid nested repetition operator: `*+`"},
    {"(?>a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?>`"},
    {"\\K", "error parsing regexp: invalid escape sequence: `\\K`"},
    {"\\h", "error parsing regexp: invalid escape sequence: `\\h`"},
    {"\\Z", "error parsing regexp: invalid escape sequence: `\\Z`"},
    {"\\C", "error parsing regexp: invalid escape sequence: `\\C`"},
    {"a{1001}", "error parsing regexp: invalid repeat count: `{1001}`"},
    {"(?#comment)", "error parsing regexp: invalid or unsupported Perl syntax: `(?#`"},
    {"(?R)", "error parsing regexp: invalid or unsupported Perl syntax: `(?R`"},
    {"(?P=name)", "error parsing regexp: invalid or unsupported Perl syntax: `(?P`"},
    {"\\e", "error parsing regexp: invalid escape sequence: `\\e`"},
    {"\\cA", "error parsing regexp: invalid escape sequence: `\\c`"},
    {"x**", "error parsing regexp: invalid nested repetition operator: `**`"},
    {"(?x) a", "error parsing regexp: invalid or unsupported Perl syntax: `(?x`"},
    {"\\N{U+0041}", "error parsing regexp: invalid escape sequence: `\\N`"},
    {"\\R", "error parsing regexp: invalid escape sequence: `\\R`"},
    {"\\X", "error parsing regexp: invalid escape sequence: `\\X`"},
};

static void test_syntax(void **state)
{
    (void)state;
    for (size_t i = 0; i < IM_ARRAY_LEN(syntax_cases); i++) {
        const char *p = syntax_cases[i].pat, *want = syntax_cases[i].err;
        for (int mode = 0; mode < 2; mode++) {
            im_regex_t *re = NULL;
            im_err_t err;
            im_err_clear(&err);
            im_rc rc =
                im_regex_compile(p, strlen(p), mode ? IM_REGEX_SEARCH : IM_REGEX_FULL, &re, &err);
            if (*want) {
                if (rc != IM_EPARSE || strcmp(err.msg, want) != 0)
                    fail_msg("%s (mode %d): want error \"%s\", got rc %d \"%s\"", p, mode, want, rc,
                             err.msg);
            } else if (rc != IM_OK) {
                fail_msg("%s (mode %d): want accepted, got \"%s\"", p, mode, err.msg);
            }
            im_regex_free(re);
        }
    }
}

static int full_match(const char *pat, const char *s, size_t len)
{
    im_regex_t *re = NULL;
    im_err_t err;
    im_err_clear(&err);
    if (im_regex_compile(pat, strlen(pat), IM_REGEX_FULL, &re, &err) != IM_OK)
        fail_msg("%s: %s", pat, err.msg);
    int rc = im_regex_match(re, s, len, &err);
    im_regex_free(re);
    return rc;
}

#define FM(pat, s) full_match(pat, s, sizeof(s) - 1)

static void test_semantics(void **state)
{
    (void)state;
    /* Go's \s is [\t\n\f\r ]: no vertical tab (PCRE2's \s has it) */
    assert_int_equal(FM("\\s", " "), 1);
    assert_int_equal(FM("\\s", "\v"), 0);
    assert_int_equal(FM("\\S", "\v"), 1);
    assert_int_equal(FM("[\\s]", "\v"), 0);
    assert_int_equal(FM("[\\S]", "\v"), 1);
    assert_int_equal(FM("[^\\S]", "\t"), 1);
    assert_int_equal(FM("[\\S]", "\t"), 0);
    assert_int_equal(FM("[[:space:]]", "\v"), 1); /* POSIX space has \v in both */
    /* Go's \v is the character U+000B (PCRE2's: any vertical space) */
    assert_int_equal(FM("\\v", "\v"), 1);
    assert_int_equal(FM("\\v", "\n"), 0);
    /* octal */
    assert_int_equal(FM("\\101", "A"), 1);
    assert_int_equal(FM("\\0", "\0"), 1);
    assert_int_equal(FM("a\\012", "a\n"), 1);
    /* `.` stops at \n unless (?s); $ is the end of text unless (?m) */
    assert_int_equal(FM(".*", "a\nb"), 0);
    assert_int_equal(FM("(?s).*", "a\nb"), 1);
    assert_int_equal(FM("a$", "a\n"), 0);
    assert_int_equal(FM("(?m)a$\\n", "a\n"), 1);
    assert_int_equal(FM("a\\z", "a"), 1);
    /* \Q..\E, Unicode classes, (?i) with Unicode case folding, ASCII \w */
    assert_int_equal(FM("\\Qa.b\\E", "a.b"), 1);
    assert_int_equal(FM("\\Qa.b\\E", "axb"), 0);
    assert_int_equal(FM("\\p{Greek}+", "\xce\xb1\xce\xb2"), 1);
    assert_int_equal(FM("(?i)\xc3\xa9", "\xc3\x89"), 1);
    assert_int_equal(FM("\\w", "\xc3\xa9"), 0);
    /* fully anchored, alternation inside the anchors */
    assert_int_equal(FM("a|b", "ab"), 0);
    assert_int_equal(FM("a|ab", "ab"), 1);
}

/* exec + Expand: leftmost-first groups, as Go's FindStringSubmatchIndex/Expand. */
static void test_captures(void **state)
{
    (void)state;
    static const struct {
        const char *pat, *subj, *tpl, *want;
    } cases[] = {
        {"(.*):(.*)", "host:9090", "$2-$1", "9090-host"},
        {"(a|ab)(c|bcd)(d*)", "abcd", "[$1][$2][$3]", "[a][bcd][]"},
        {"(a*)+", "b", "[$1]", ""}, /* no full match */
        {"(a*)*", "", "[$1]", "[]"},
        {"(?P<host>[^:]+):(?P<port>\\d+)", "h:1", "${port}/${host}", "1/h"},
        {"(.)(.)", "xy", "$1x $$ ${1}x $01 $9 $", " $ xx   $"},
        {"(x)?y", "y", "[$1]", "[]"},
        {"(?U)(a+)(a*)", "aaa", "$1|$2", "a|aa"},
        {"(?i)(ab)+", "AbaB", "$1", "aB"},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(cases); i++) {
        im_regex_t *re = NULL;
        assert_int_equal(
            im_regex_compile(cases[i].pat, strlen(cases[i].pat), IM_REGEX_FULL, &re, NULL), IM_OK);
        size_t ov[32];
        int rc = im_regex_exec(re, cases[i].subj, strlen(cases[i].subj), 0, ov, NULL);
        im_buf_t out;
        im_buf_init(&out, 0);
        if (rc == 1)
            im_regex_expand(re, cases[i].tpl, strlen(cases[i].tpl), cases[i].subj, ov, &out);
        const char *got = out.data ? out.data : "";
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("%s on %s: want \"%s\", got \"%s\" (rc %d)", cases[i].pat, cases[i].subj,
                     cases[i].want, got, rc);
        im_buf_free(&out);
        im_regex_free(re);
    }
    /* SEARCH mode from an offset */
    im_regex_t *re = NULL;
    assert_int_equal(im_regex_compile("b+", 2, IM_REGEX_SEARCH, &re, NULL), IM_OK);
    size_t ov[2];
    assert_int_equal(im_regex_exec(re, "abbab", 5, 3, ov, NULL), 1);
    assert_int_equal(ov[0], 4);
    assert_int_equal(ov[1], 5);
    assert_int_equal(im_regex_exec(re, "abba", 4, 3, ov, NULL), 0);
    im_regex_free(re);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Pathological patterns over 10k-byte values: the right answer (computed by hand:
 * these are small languages) or IM_ELIMIT; never a wrong answer; each call fast. */
static void test_redos(void **state)
{
    (void)state;
    enum { N = 10000 };
    static char a_then_c[N + 2], b_then_a[N + 1], xs_b[N + 1], xs_yb[N + 1], a20[N + 1];
    memset(a_then_c, 'a', N);
    a_then_c[N] = 'c';
    memset(b_then_a, 'a', N);
    b_then_a[0] = 'b';
    memset(xs_b, 'x', N);
    xs_b[N - 1] = 'b';
    memcpy(xs_yb, xs_b, N);
    xs_yb[N - 2] = 'y';
    memset(a20, 'a', N);
    static const struct {
        const char *pat, *s;
        int want; /* RE2's answer */
    } cases[] = {
        {"(a|a)*b", a_then_c, 0},  {"(a|a)*b", b_then_a, 0},   {"b(a|a)*", b_then_a, 1},
        {"(a+)+b", a_then_c, 0},   {"(a+)+b", b_then_a, 0},    {"(.*a){20}", a20, 1},
        {"(.*a){20}x", a20, 0},    {"(x+x+)+y", xs_b, 0},      {"(x+x+)+y", xs_yb, 0},
        {"(.*){30}b", xs_b, 1},    {"(\\w+\\s?)+$", a20, 1},   {"(a|aa)+c", a_then_c, 1},
        {"(a|aa)+d", a_then_c, 0}, {"(.*a){20}", a_then_c, 0}, {"((a+)+)+(b|c)", a_then_c, 1},
    };
    int limited = 0;
    for (size_t i = 0; i < IM_ARRAY_LEN(cases); i++) {
        im_regex_t *re = NULL;
        assert_int_equal(
            im_regex_compile(cases[i].pat, strlen(cases[i].pat), IM_REGEX_FULL, &re, NULL), IM_OK);
        size_t len = strlen(cases[i].s);
        im_err_t err;
        im_err_clear(&err);
        double t0 = now_ms();
        int rc = im_regex_match(re, cases[i].s, len, &err);
        size_t ov[64];
        int rx = im_regex_exec(re, cases[i].s, len, 0, ov, &err);
        double dt = now_ms() - t0;
        if (rc >= 0 && rc != cases[i].want)
            fail_msg("%s: match says %d, RE2 says %d", cases[i].pat, rc, cases[i].want);
        if (rx >= 0 && rx != cases[i].want)
            fail_msg("%s: exec says %d, RE2 says %d", cases[i].pat, rx, cases[i].want);
        if (rc < 0 || rx < 0) {
            limited++;
            assert_int_equal(err.code, IM_ELIMIT);
            assert_non_null(strstr(err.msg, "--regex.match-limit"));
        }
        /* generous for ASan builds; release runs take a few ms */
        if (dt > 2000) fail_msg("%s: %.0f ms", cases[i].pat, dt);
        im_regex_free(re);
    }
    /* (x+x+)+y over 10k x then "yb" needs more DFA states than the fallback allows */
    assert_true(limited >= 1);
    /* a tiny budget turns the backtracking off early; the DFA still answers */
    im_regex_limits_t old = im_regex_get_limits();
    im_regex_set_limits(&(im_regex_limits_t){.match_limit = 10});
    assert_int_equal(full_match("(a|b)*abb", "abababababababababababababababababababb", 39), 1);
    assert_int_equal(full_match("(a|b)*abb", "abababababababababababababababababababa", 39), 0);
    /* captures cannot come from the DFA: a match found only there is an error */
    im_regex_t *re = NULL;
    assert_int_equal(im_regex_compile("(.*a){3}", 8, IM_REGEX_FULL, &re, NULL), IM_OK);
    size_t ov[8];
    im_err_t err;
    im_err_clear(&err);
    char s[300];
    memset(s, 'b', sizeof s);
    s[0] = s[sizeof s - 2] = s[sizeof s - 1] = 'a';
    assert_int_equal(im_regex_match(re, s, sizeof s, NULL), 1);
    assert_int_equal(im_regex_exec(re, s, sizeof s, 0, ov, &err), IM_ELIMIT);
    assert_non_null(strstr(err.msg, "regex match limit exceeded"));
    im_regex_free(re);
    /* a matcher counts the error and selects nothing */
    im_matcher_t *m = NULL;
    assert_int_equal(im_matcher_new(IM_MATCH_RE, "l", 1, "(x+x+)+y", 8, &m, NULL), IM_OK);
    assert_int_equal(im_matcher_errors(m), 0);
    assert_false(im_matcher_matches(m, xs_b, N)); /* decided: no 'y' at all */
    assert_int_equal(im_matcher_errors(m), 0);
    assert_false(im_matcher_matches(m, xs_yb, N));
    assert_int_equal(im_matcher_errors(m), 1);
    im_matcher_free(m);
    im_regex_set_limits(&old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_semantics),
        cmocka_unit_test(test_captures),
        cmocka_unit_test(test_redos),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
