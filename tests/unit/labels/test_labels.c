/* test_labels.c — unit tests for src/labels: label sets, builder, matchers, and the
 * JSON string writer's escaping variants. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

#include "labels/json.h"
#include "labels/labels.h"

static void test_sets(void **state)
{
    (void)state;
    const im_labels_t *a =
        im_labels_from_strs("job", "api", "__name__", "up", "instance", "x:1", "empty", "", NULL);
    assert_int_equal(a->n, 3); /* empty value dropped */
    assert_string_equal(a->l[0].name->s, "__name__");
    assert_string_equal(a->l[1].name->s, "instance");
    assert_string_equal(a->l[2].name->s, "job");
    assert_string_equal(im_labels_get(a, "job")->s, "api");
    assert_null(im_labels_get(a, "nope"));
    const im_labels_t *b =
        im_labels_from_strs("instance", "x:1", "job", "api", "__name__", "up", NULL);
    assert_true(im_labels_equal(a, b));
    assert_int_equal(a->hash, b->hash);
    assert_int_equal(im_labels_compare(a, b), 0);
    const im_labels_t *c = im_labels_from_strs("__name__", "up", "instance", "x:2", NULL);
    assert_false(im_labels_equal(a, c));
    assert_true(im_labels_compare(a, c) < 0);
    im_buf_t out;
    im_buf_init(&out, 0);
    assert_int_equal(im_labels_format(a, &out), IM_OK);
    assert_string_equal(out.data, "up{instance=\"x:1\", job=\"api\"}");
    im_buf_reset(&out);
    const im_labels_t *q = im_labels_from_strs("a", "x\"y\\z\n", NULL);
    assert_int_equal(im_labels_format(q, &out), IM_OK);
    assert_string_equal(out.data, "{a=\"x\\\"y\\\\z\\n\"}");
    im_buf_free(&out);
    /* hash subsets: grouping by job ignores instance */
    const im_istr_t *job = im_intern_cstr("job");
    assert_int_equal(im_labels_hash_subset(a, &job, 1, true, false),
                     im_labels_hash_subset(c, &job, 0, true, false) * 0 +
                         im_labels_hash_subset(b, &job, 1, true, false));
    im_istr_unref(job);
    im_labels_unref(a);
    im_labels_unref(b);
    im_labels_unref(c);
    im_labels_unref(q);
    assert_int_equal(im_labels_empty()->n, 0);
}

/* im_labels_without equals what the builder gives, keeps refcounts right */
static void test_without(void **state)
{
    (void)state;
    const im_labels_t *a = im_labels_from_strs("__name__", "up", "job", "api", "le", "1", NULL);
    const im_istr_t *name = im_intern_cstr("__name__"), *le = im_intern_cstr("le"),
                    *nope = im_intern_cstr("nope");
    const im_labels_t *w = im_labels_without(a, name);
    const im_labels_t *want = im_labels_from_strs("job", "api", "le", "1", NULL);
    assert_true(im_labels_equal(w, want));
    assert_int_equal(w->hash, want->hash);
    const im_labels_t *w2 = im_labels_without(w, le);
    const im_labels_t *want2 = im_labels_from_strs("job", "api", NULL);
    assert_true(im_labels_equal(w2, want2));
    assert_int_equal(w2->hash, want2->hash);
    assert_ptr_equal(im_labels_without(a, nope), a); /* referenced, not copied */
    im_labels_unref(a);
    const im_labels_t *one = im_labels_from_strs("__name__", "x", NULL);
    assert_ptr_equal(im_labels_without(one, name), im_labels_empty());
    im_labels_unref(one);
    im_labels_unref(a);
    im_labels_unref(w);
    im_labels_unref(want);
    im_labels_unref(w2);
    im_labels_unref(want2);
    im_istr_unref(name);
    im_istr_unref(le);
    im_istr_unref(nope);
}

static void test_builder(void **state)
{
    (void)state;
    im_labels_builder_t b;
    im_lb_init(&b);
    im_lb_set(&b, "z", 1, "1", 1);
    im_lb_set(&b, "a", 1, "2", 1);
    im_lb_set(&b, "m", 1, "3", 1);
    im_lb_set(&b, "a", 1, "4", 1);
    im_lb_del(&b, "m");
    const im_labels_t *ls = im_lb_build(&b);
    assert_int_equal(ls->n, 2);
    assert_string_equal(ls->l[0].value->s, "4");
    assert_string_equal(im_lb_get(&b, "z")->s, "1");
    im_lb_load(&b, ls);
    im_lb_set(&b, "z", 1, "", 0);
    const im_labels_t *ls2 = im_lb_build(&b);
    assert_int_equal(ls2->n, 1);
    im_labels_unref(ls);
    im_labels_unref(ls2);
    im_lb_free(&b);
}

static bool m_match(im_match_type_t t, const char *re, const char *v)
{
    im_matcher_t *m;
    assert_int_equal(im_matcher_new(t, "l", 1, re, strlen(re), &m, NULL), IM_OK);
    bool r = im_matcher_matches(m, v, strlen(v));
    im_matcher_free(m);
    return r;
}

static void test_matchers(void **state)
{
    (void)state;
    assert_true(m_match(IM_MATCH_EQ, "a", "a"));
    assert_false(m_match(IM_MATCH_EQ, "a", "ab"));
    assert_true(m_match(IM_MATCH_NEQ, "a", "ab"));
    assert_true(m_match(IM_MATCH_RE, "a.*", "abc"));
    assert_false(m_match(IM_MATCH_RE, "b.*", "abc")); /* anchored at start */
    assert_false(m_match(IM_MATCH_RE, "a", "abc"));   /* anchored at end */
    assert_true(m_match(IM_MATCH_RE, "abc|def", "def"));
    assert_false(m_match(IM_MATCH_RE, "abc|def", "abcdef"));
    assert_true(m_match(IM_MATCH_RE, "a|b.*", "bz")); /* alternation binds loosely */
    assert_true(m_match(IM_MATCH_RE, ".*", ""));
    assert_false(m_match(IM_MATCH_RE, ".+", ""));
    assert_false(m_match(IM_MATCH_RE, ".*", "a\nb")); /* no (?s) */
    assert_true(m_match(IM_MATCH_RE, "(?s).*", "a\nb"));
    assert_false(m_match(IM_MATCH_RE, "a$", "a\n"));
    assert_true(m_match(IM_MATCH_NRE, "pro.*", "canary"));
    assert_true(m_match(IM_MATCH_RE, "[0-9]+", "123"));
    assert_true(m_match(IM_MATCH_RE, "x", "x"));
    assert_true(m_match(IM_MATCH_RE, "(?i)abc", "ABC"));
    im_matcher_t *m;
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(im_matcher_new(IM_MATCH_RE, "l", 1, "(", 1, &m, &err), IM_EPARSE);
    assert_non_null(strstr(err.msg, "invalid regular expression"));
    /* matches_empty and matching over label sets */
    const im_labels_t *ls = im_labels_from_strs("__name__", "up", "job", "api", NULL);
    im_matcher_t *ms[2];
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "foo", 3, "", 0, &ms[0], NULL), IM_OK);
    assert_int_equal(im_matcher_new(IM_MATCH_RE, "job", 3, "a.i", 3, &ms[1], NULL), IM_OK);
    assert_true(im_matcher_matches_empty(ms[0]));
    assert_true(im_labels_match_all(ls, ms, 2));
    size_t n;
    assert_null(im_matcher_set_values(ms[1], &n));
    im_matcher_t *set;
    assert_int_equal(im_matcher_new(IM_MATCH_RE, "job", 3, "a|bb|c", 6, &set, NULL), IM_OK);
    const char *const *vals = im_matcher_set_values(set, &n);
    assert_int_equal(n, 3);
    assert_string_equal(vals[1], "bb");
    im_buf_t out;
    im_buf_init(&out, 0);
    assert_int_equal(im_matcher_format(set, &out), IM_OK);
    assert_string_equal(out.data, "job=~\"a|bb|c\"");
    im_buf_free(&out);
    im_matcher_free(set);
    im_matcher_free(ms[0]);
    im_matcher_free(ms[1]);
    im_labels_unref(ls);
}

static void test_validity(void **state)
{
    (void)state;
    assert_true(im_metric_name_valid("vllm:num_requests_running", 25));
    assert_false(im_label_name_valid("a:b", 3));
    assert_false(im_metric_name_valid("1abc", 4));
    assert_true(im_label_name_valid("_x1", 3));
    assert_true(im_utf8_valid("h\xc3\xa9llo", 6));
    assert_false(im_utf8_valid("\xc3", 1));
    assert_false(im_utf8_valid("\xed\xa0\x80", 3)); /* surrogate */
    assert_false(im_utf8_valid("\xc0\x80", 2));     /* overlong */
    assert_true(im_utf8_valid("\xf0\x9f\x98\x80", 4));
}

/* im_json_string with the given flags, as a NUL-terminated string. */
static const char *js(const char *s, size_t n, unsigned flags)
{
    static char out[256];
    im_buf_t b;
    im_buf_init(&b, 0);
    im_json_string(&b, s, n, flags);
    snprintf(out, sizeof out, "%s", b.data);
    im_buf_free(&b);
    return out;
}

static void test_json(void **state)
{
    (void)state;
    /* what every variant escapes */
    static const unsigned all[] = {IM_JSON_PLAIN, IM_JSON_HTML, IM_JSON_UTF8, IM_JSON_GO};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        assert_string_equal(js("a\"b\\c", 5, all[i]), "\"a\\\"b\\\\c\"");
        assert_string_equal(js("\n\r\t\x01\x1f\x7f", 6, all[i]), "\"\\n\\r\\t\\u0001\\u001f\x7f\"");
        assert_string_equal(js("h\xc3\xa9", 3, all[i]), "\"h\xc3\xa9\"");
        assert_string_equal(js("", 0, all[i]), "\"\"");
    }
    /* HTML-safe */
    assert_string_equal(js("<&>", 3, IM_JSON_PLAIN), "\"<&>\"");
    assert_string_equal(js("<&>", 3, IM_JSON_UTF8), "\"<&>\"");
    assert_string_equal(js("<&>", 3, IM_JSON_HTML), "\"\\u003c\\u0026\\u003e\"");
    assert_string_equal(js("<&>", 3, IM_JSON_GO), "\"\\u003c\\u0026\\u003e\"");
    /* invalid UTF-8 and U+2028/2029 */
    assert_string_equal(js("a\xff"
                           "z\xc3",
                           4, IM_JSON_PLAIN),
                        "\"a\xff"
                        "z\xc3\"");
    assert_string_equal(js("a\xff"
                           "z\xc3",
                           4, IM_JSON_HTML),
                        "\"a\xff"
                        "z\xc3\"");
    assert_string_equal(js("a\xff"
                           "z\xc3",
                           4, IM_JSON_UTF8),
                        "\"a\\ufffdz\\ufffd\"");
    assert_string_equal(js("\xff", 1, IM_JSON_GO), "\"\\ufffd\"");
    assert_string_equal(js("\xed\xa0\x80", 3, IM_JSON_GO), "\"\\ufffd\\ufffd\\ufffd\"");
    assert_string_equal(js("\xe2\x80\xa8x\xe2\x80\xa9", 7, IM_JSON_GO), "\"\\u2028x\\u2029\"");
    assert_string_equal(js("\xe2\x80\xa8", 3, IM_JSON_HTML), "\"\xe2\x80\xa8\"");
    /* label sets */
    const im_labels_t *ls = im_labels_from_strs("a", "<x>", "b", "\xff", NULL);
    im_buf_t b;
    im_buf_init(&b, 0);
    im_json_labels(&b, ls, IM_JSON_GO);
    assert_string_equal(b.data, "{\"a\":\"\\u003cx\\u003e\",\"b\":\"\\ufffd\"}");
    im_buf_reset(&b);
    im_json_labels(&b, ls, IM_JSON_PLAIN);
    assert_string_equal(b.data, "{\"a\":\"<x>\",\"b\":\"\xff\"}");
    im_buf_reset(&b);
    im_json_labels(&b, NULL, IM_JSON_PLAIN);
    assert_string_equal(b.data, "{}");
    im_buf_free(&b);
    im_labels_unref(ls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sets),     cmocka_unit_test(test_builder),
        cmocka_unit_test(test_without),  cmocka_unit_test(test_matchers),
        cmocka_unit_test(test_validity), cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
