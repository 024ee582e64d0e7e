/* test_relabel_regex.c — relabel regexes go through labels/regex.h: PCRE-only syntax is
 * a config error at the rule's line:column with Go's text (promtool 2.42 prints the
 * same text, without a position), Go's meaning of escapes, and a regex that exceeds the
 * regex limit fails the label set with an error instead of a silent keep or drop. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

#include "labels/regex.h"
#include "scrape/config.h"

static const char *const head = "scrape_configs:\n  - job_name: a\n    relabel_configs:\n"
                                "      - source_labels: [v]\n";

static scrape_config_t *load(const char *rule, im_err_t *e)
{
    char y[1024];
    snprintf(y, sizeof y, "%s%s", head, rule);
    scrape_config_t *c = NULL;
    im_err_clear(e);
    if (scrape_config_parse(y, strlen(y), "t.yml", &c, e) != IM_OK) return NULL;
    return c;
}

static void test_pcre_only_rejected(void **state)
{
    (void)state;
    static const struct {
        const char *re, *want;
    } cases[] = {
        {"(?=x)a", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"},
        {"(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`"},
        {"a++", "error parsing regexp: invalid nested repetition operator: `++`"},
        {"(?>a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?>`"},
        {"(?<!a)b", "error parsing regexp: invalid or unsupported Perl syntax: `(?<`"},
        {"\\K", "error parsing regexp: invalid escape sequence: `\\K`"},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(cases); i++) {
        char rule[256];
        snprintf(rule, sizeof rule, "        regex: '%s'\n        action: keep\n", cases[i].re);
        im_err_t e;
        scrape_config_t *c = load(rule, &e);
        if (c) fail_msg("%s accepted", cases[i].re);
        if (!strstr(e.msg, cases[i].want)) fail_msg("%s: message %s", cases[i].re, e.msg);
        /* the position of the rule, as for every relabel_config error */
        assert_int_equal(e.line, 4);
        assert_int_equal(e.col, 9);
    }
}

static void test_go_semantics_and_limit(void **state)
{
    (void)state;
    im_err_t e;
    /* \s is Go's (no \v); replacement with a named group */
    scrape_config_t *c = load("        regex: '(?P<w>\\S+)\\s(.*)'\n        target_label: t\n"
                              "        replacement: '${w}-$2'\n",
                              &e);
    if (!c) fail_msg("%s", e.msg);
    im_labels_builder_t lb;
    im_lb_init(&lb);
    im_lb_set(&lb, "v", 1, "ab cd", 5);
    im_err_clear(&e);
    assert_int_equal(labels_relabel_apply(c->jobs[0].relabel, c->jobs[0].nrelabel, &lb, &e), 1);
    assert_string_equal(im_lb_get(&lb, "t")->s, "ab-cd");
    im_lb_reset(&lb);
    im_lb_set(&lb, "v", 1, "ab\vcd", 5);
    assert_int_equal(labels_relabel_apply(c->jobs[0].relabel, c->jobs[0].nrelabel, &lb, &e), 1);
    assert_null(im_lb_get(&lb, "t"));
    scrape_config_free(c);

    /* keep with a regex over a value neither the budget nor the DFA decides: an error */
    c = load("        regex: '(x+x+)+y'\n        action: drop\n", &e);
    if (!c) fail_msg("%s", e.msg);
    enum { N = 10000 };
    static char v[N];
    memset(v, 'x', N);
    v[N - 2] = 'y';
    v[N - 1] = 'b';
    im_lb_reset(&lb);
    im_lb_set(&lb, "v", 1, v, N);
    im_err_clear(&e);
    assert_int_equal(labels_relabel_apply(c->jobs[0].relabel, c->jobs[0].nrelabel, &lb, &e),
                     IM_ELIMIT);
    assert_non_null(strstr(e.msg, "--regex.match-limit"));
    /* the bool wrapper logs and drops; it never keeps what it could not decide */
    im_lb_reset(&lb);
    im_lb_set(&lb, "v", 1, v, N);
    assert_false(labels_relabel_process(c->jobs[0].relabel, c->jobs[0].nrelabel, &lb));
    scrape_config_free(c);
    im_lb_free(&lb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pcre_only_rejected),
        cmocka_unit_test(test_go_semantics_and_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
