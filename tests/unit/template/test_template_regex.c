/* test_template_regex.c — template regex functions (match, reReplaceAll) go through
 * labels/regex.h: PCRE-only syntax is a template error with Go's panic text, results
 * follow Go's ReplaceAllString, and a regex over the limit is a template error. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

#include "template/template.h"

static char *expand(const char *t)
{
    tmpl_data_t d = {.value = 1};
    im_buf_t out;
    im_buf_init(&out, 0);
    (void)tmpl_expand_or_error("x", t, strlen(t), &d, &out);
    char *s = im_strdup(out.data ? out.data : "");
    im_buf_free(&out);
    return s;
}

static void want(const char *t, const char *needle)
{
    char *got = expand(t);
    if (!strstr(got, needle)) fail_msg("%s: want \"%s\" in \"%s\"", t, needle, got);
    im_free(got);
}

static void test_template_regex(void **state)
{
    (void)state;
    want("{{ match \"(?=a)\" \"a\" }}",
         "error calling match: regexp: Compile(`(?=a)`): error parsing regexp: invalid or "
         "unsupported Perl syntax: `(?=`");
    want("{{ reReplaceAll \"(a)\\\\1\" \"x\" \"aa\" }}",
         "error calling reReplaceAll: regexp: Compile(`(a)\\1`): error parsing regexp: invalid "
         "escape sequence: `\\1`");
    want("{{ match \"a++\" \"a\" }}", "invalid nested repetition operator: `++`");
    /* Go's ReplaceAllString: empty matches, unanchored search */
    want("[{{ reReplaceAll \"a*\" \"-\" \"baaac\" }}]", "[-b-c-]");
    want("[{{ reReplaceAll \"\" \"-\" \"ab\" }}]", "[-a-b-]");
    want("[{{ reReplaceAll \"(\\\\w+)@(\\\\w+)\" \"$2 at $1\" \"x me@host y\" }}]",
         "[x host at me y]");
    want("[{{ match \"^b\" \"ab\" }}|{{ match \"b$\" \"ab\" }}|{{ match \"\\\\s\" \"\\v\" }}]",
         "[false|true|false]");
    /* over the limit: a template error, not a silent false */
    im_buf_t t;
    im_buf_init(&t, 0);
    (void)im_buf_puts(&t, "{{ match \"^(x+x+)+y$\" \"");
    for (int i = 0; i < 10000; i++) (void)im_buf_putc(&t, 'x');
    (void)im_buf_puts(&t, "yb\" }}");
    want(t.data, "regex match limit exceeded");
    im_buf_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_template_regex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
