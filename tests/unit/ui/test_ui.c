/* test_ui.c — the embedded dashboard assets: every page asset is present with the
 * right content type and caching, and no path outside the table is served. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>

#include "ui/ui.h"

static void test_lookup(void **state)
{
    (void)state;
    const ui_asset_t *a = ui_asset_lookup("/");
    assert_non_null(a);
    assert_string_equal(a->content_type, "text/html; charset=utf-8");
    assert_non_null(strstr((const char *)a->data, "<title>infermon</title>"));
    assert_string_equal(ui_asset_cache_control(a), "no-cache");
    assert_ptr_equal(ui_asset_lookup("/index.html"), a);
    const char *want[][2] = {
        {"/static/app.js", "text/javascript; charset=utf-8"},
        {"/static/style.css", "text/css; charset=utf-8"},
        {"/static/uPlot.iife.min.js", "text/javascript; charset=utf-8"},
        {"/static/uPlot.min.css", "text/css; charset=utf-8"},
        {"/static/serving-model.js", "text/javascript; charset=utf-8"},
        {"/static/slo.js", "text/javascript; charset=utf-8"},
        {"/static/cost.js", "text/javascript; charset=utf-8"},
        {"/static/doctor.js", "text/javascript; charset=utf-8"},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(want); i++) {
        const ui_asset_t *x = ui_asset_lookup(want[i][0]);
        assert_non_null(x);
        assert_string_equal(x->content_type, want[i][1]);
        assert_true(x->len > 100);
        assert_int_equal(x->etag[0], '"');
        assert_int_equal(x->data[x->len], 0); /* NUL after the bytes */
    }
    assert_int_equal(ui_asset_count(), IM_ARRAY_LEN(want) + 1); /* + index.html */
}

static void test_no_traversal(void **state)
{
    (void)state;
    const char *bad[] = {"/static/../index.html",
                         "/../etc/passwd",
                         "/static/",
                         "/static",
                         "/static/app.js/",
                         "//static/app.js",
                         "/STATIC/app.js",
                         "/static/app.js?x",
                         "/etc/passwd",
                         "/static/%2e%2e/app.js",
                         NULL};
    for (size_t i = 0; bad[i]; i++) assert_null(ui_asset_lookup(bad[i]));
    assert_null(ui_asset_lookup(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_no_traversal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
