/* test_otlp_names.c — the OTLP name translation table (src/http/otlp_name.c):
 * metric names with unit suffixes, `_total` for monotonic sums, `_ratio` for
 * gauges of unit "1", annotations, per-units, words not repeated, a leading
 * digit; attribute keys with dots, a leading digit or underscore. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

#include "http/server.h"

typedef struct name_case {
    const char *name, *unit;
    http_otlp_kind_t kind;
    const char *want;
} name_case_t;

static const name_case_t metric_cases[] = {
    {"http.server.duration", "s", HTTP_OTLP_OTHER, "http_server_duration_seconds"},
    {"http.server.duration", "ms", HTTP_OTLP_OTHER, "http_server_duration_milliseconds"},
    {"http.server.requests", "", HTTP_OTLP_COUNTER, "http_server_requests_total"},
    {"requests_total", "", HTTP_OTLP_COUNTER, "requests_total"},
    {"total.requests", "", HTTP_OTLP_COUNTER, "requests_total"},
    {"requests", "{request}", HTTP_OTLP_COUNTER, "requests_total"},
    {"system.memory.usage", "By", HTTP_OTLP_GAUGE, "system_memory_usage_bytes"},
    {"process.memory", "MiBy", HTTP_OTLP_GAUGE, "process_memory_mebibytes"},
    {"network.io", "By", HTTP_OTLP_COUNTER, "network_io_bytes_total"},
    {"cpu.utilization", "1", HTTP_OTLP_GAUGE, "cpu_utilization_ratio"},
    {"cpu.ratio", "1", HTTP_OTLP_GAUGE, "cpu_ratio"},
    {"events", "1", HTTP_OTLP_COUNTER, "events_total"},
    {"speed", "m/s", HTTP_OTLP_GAUGE, "speed_meters_per_second"},
    {"throughput", "By/s", HTTP_OTLP_GAUGE, "throughput_bytes_per_second"},
    {"rate", "1/h", HTTP_OTLP_GAUGE, "rate_per_hour"},
    {"latency_seconds", "s", HTTP_OTLP_OTHER, "latency_seconds"},
    {"temp", "Cel", HTTP_OTLP_GAUGE, "temp_celsius"},
    {"disk", "%", HTTP_OTLP_GAUGE, "disk_percent"},
    {"foo", "widgets", HTTP_OTLP_GAUGE, "foo_widgets"},
    {"my___metric", "", HTTP_OTLP_GAUGE, "my_metric"},
    {"9lives", "", HTTP_OTLP_GAUGE, "_9lives"},
    {"a-b/c d", "", HTTP_OTLP_GAUGE, "a_b_c_d"},
};

static void test_metric_names(void **state)
{
    (void)state;
    char out[256];
    for (size_t i = 0; i < IM_ARRAY_LEN(metric_cases); i++) {
        const name_case_t *c = &metric_cases[i];
        size_t n = http_otlp_metric_name(c->name, strlen(c->name), c->unit, strlen(c->unit),
                                         c->kind, out, sizeof out);
        if (strcmp(out, c->want))
            fail_msg("%s [%s]: got %s, want %s", c->name, c->unit, out, c->want);
        assert_int_equal(n, strlen(c->want));
    }
    /* cut at the buffer, NUL-terminated */
    size_t n = http_otlp_metric_name("abcdefgh", 8, "", 0, HTTP_OTLP_GAUGE, out, 4);
    assert_int_equal(n, 3);
    assert_string_equal(out, "abc");
}

static void test_label_names(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"http.method", "http_method"},
        {"k8s.pod.name", "k8s_pod_name"},
        {"9a", "key_9a"},
        {"_b", "key_b"},
        {"__c", "__c"},
        {"ok_name", "ok_name"},
        {"a-b c", "a_b_c"},
        {"é", "__"},
    };
    char out[64];
    for (size_t i = 0; i < IM_ARRAY_LEN(cases); i++) {
        http_otlp_label_name(cases[i][0], strlen(cases[i][0]), out, sizeof out);
        if (strcmp(out, cases[i][1]))
            fail_msg("%s: got %s, want %s", cases[i][0], out, cases[i][1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metric_names),
        cmocka_unit_test(test_label_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
