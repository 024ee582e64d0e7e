/* test_llm_doctor.c — the llm.doctor: sub-section: defaults when absent, every
 * kind of key decoded, bad values and unknown keys refused with the key's name
 * and position, and the dump reading back to the same values. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"

static scrape_config_t *load(const char *y, im_err_t *err)
{
    scrape_config_t *c = NULL;
    im_err_clear(err);
    if (scrape_config_parse(y, strlen(y), "t.yml", &c, err) != IM_OK) return NULL;
    return c;
}

static void test_defaults(void **st)
{
    (void)st;
    im_err_t err;
    scrape_config_t *c = load("global: {scrape_interval: 15s}\n", &err);
    assert_non_null(c);
    assert_false(c->llm.doctor.present);
    assert_int_equal(c->llm.doctor.window_ms, 30 * 60 * 1000);
    assert_int_equal(c->llm.doctor.rate_window_ms, 2 * 60 * 1000);
    assert_true(c->llm.doctor.hold_share == 0.5);
    assert_int_equal(c->llm.doctor.max_series, 20000);
    scrape_config_free(c);
}

static void test_values_and_dump(void **st)
{
    (void)st;
    im_err_t err;
    scrape_config_t *c = load("llm:\n  doctor:\n    window: 45m\n    step: 30s\n    host_util: 20\n"
                              "    abort_ratio: 0.1\n    max_series: 500\n",
                              &err);
    assert_non_null(c);
    const cfg_llm_doctor_t *d = &c->llm.doctor;
    assert_true(d->present);
    assert_int_equal(d->window_ms, 45 * 60 * 1000);
    assert_int_equal(d->step_ms, 30000);
    assert_true(d->host_util == 20);
    assert_true(d->abort_ratio == 0.1);
    assert_int_equal(d->max_series, 500);
    assert_true(d->waiting_per_pod == 5); /* untouched keys keep their default */
    im_buf_t b;
    im_buf_init(&b, 0);
    cfg_llm_dump(&c->llm, &b);
    assert_non_null(strstr(b.data, "  doctor:\n    window: 45m\n"));
    assert_non_null(strstr(b.data, "    abort_ratio: 0.1\n"));
    /* the dump reads back to the same section */
    scrape_config_t *c2 = load(b.data, &err);
    assert_non_null(c2);
    assert_memory_equal(&c2->llm.doctor, d, sizeof *d);
    im_buf_free(&b);
    scrape_config_free(c2);
    scrape_config_free(c);
}

static void test_errors(void **st)
{
    (void)st;
    static const struct {
        const char *yaml, *want;
    } bad[] = {
        {"llm:\n  doctor:\n    abort_ratio: 2\n",
         "llm.doctor.abort_ratio must be a number in (0, 1]"},
        {"llm:\n  doctor:\n    host_util: 150\n", "llm.doctor.host_util must be a percentage"},
        {"llm:\n  doctor:\n    window: 0s\n", "llm.doctor.window must be a positive duration"},
        {"llm:\n  doctor:\n    surge_factor: -1\n", "llm.doctor.surge_factor must be a positive"},
        {"llm:\n  doctor:\n    max_series: 0\n",
         "llm.doctor.max_series must be a positive integer"},
        {"llm:\n  doctor:\n    bogus: 1\n", "bogus"},
        {"llm:\n  doctor:\n    hold_share: .nan\n", "llm.doctor.hold_share"},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(bad); i++) {
        im_err_t err;
        scrape_config_t *c = load(bad[i].yaml, &err);
        if (c || !strstr(err.msg, bad[i].want))
            fail_msg("%s: got \"%s\"", bad[i].yaml, c ? "(accepted)" : err.msg);
        assert_int_equal(err.line, 3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_values_and_dump),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
