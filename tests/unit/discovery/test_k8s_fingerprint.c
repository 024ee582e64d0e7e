/* test_k8s_fingerprint.c — unit tests for k8s_fingerprint_add (k8s_client.c),
 * which the daemon uses to decide whether the watched prometheus-operator
 * monitors differ from those the running jobs were generated from: a List item
 * and the same object from a watch event count equal; order does not matter;
 * a change to spec, labels or name, or the other resource, counts. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

#include "discovery/k8s.h"

static json_t *J(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j) fprintf(stderr, "bad test JSON: %s\n", e.text);
    assert_non_null(j);
    return j;
}

static uint64_t fp1(const char *res, const char *obj)
{
    json_t *o = J(obj);
    uint64_t h = k8s_fingerprint_add(0, res, o);
    json_decref(o);
    return h;
}

#define SM_SPEC "\"spec\":{\"endpoints\":[{\"port\":\"http\"}]}"

static void list_item_equals_watch_object(void **state)
{
    (void)state;
    /* A List item has no kind/apiVersion; a watch object has them, another
     * resourceVersion, managedFields and a status. */
    uint64_t a = fp1("servicemonitors", "{\"metadata\":{\"name\":\"vllm\",\"namespace\":\"llm\","
                                        "\"resourceVersion\":\"10\"}," SM_SPEC "}");
    uint64_t b = fp1("servicemonitors",
                     "{\"kind\":\"ServiceMonitor\",\"apiVersion\":\"monitoring.coreos.com/v1\","
                     "\"metadata\":{\"resourceVersion\":\"99\",\"namespace\":\"llm\","
                     "\"name\":\"vllm\",\"managedFields\":[{\"manager\":\"kubectl\"}]},"
                     "\"status\":{\"x\":1}," SM_SPEC "}");
    assert_true(a == b);
    assert_true(a != 0);
}

static void changes_count(void **state)
{
    (void)state;
    const char *base = "{\"metadata\":{\"name\":\"vllm\",\"namespace\":\"llm\"}," SM_SPEC "}";
    uint64_t a = fp1("servicemonitors", base);
    assert_true(a != fp1("podmonitors", base));
    assert_true(a != fp1("servicemonitors", "{\"metadata\":{\"name\":\"vllm\",\"namespace\":"
                                            "\"llm\"},\"spec\":{\"endpoints\":[{\"port\":"
                                            "\"metrics\"}]}}"));
    assert_true(a != fp1("servicemonitors", "{\"metadata\":{\"name\":\"vllm\",\"namespace\":"
                                            "\"llm\",\"labels\":{\"a\":\"b\"}}," SM_SPEC "}"));
    assert_true(a != fp1("servicemonitors",
                         "{\"metadata\":{\"name\":\"vllm2\",\"namespace\":\"llm\"}," SM_SPEC "}"));
}

static void set_order_does_not_matter(void **state)
{
    (void)state;
    json_t *x = J("{\"metadata\":{\"name\":\"a\",\"namespace\":\"llm\"}," SM_SPEC "}");
    json_t *y = J("{\"metadata\":{\"name\":\"b\",\"namespace\":\"llm\"}," SM_SPEC "}");
    uint64_t xy =
        k8s_fingerprint_add(k8s_fingerprint_add(0, "servicemonitors", x), "servicemonitors", y);
    uint64_t yx =
        k8s_fingerprint_add(k8s_fingerprint_add(0, "servicemonitors", y), "servicemonitors", x);
    assert_true(xy == yx);
    /* the set without one object differs (a deletion counts) */
    assert_true(xy != k8s_fingerprint_add(0, "servicemonitors", x));
    assert_true(k8s_fingerprint_add(0, "servicemonitors", x) != 0);
    json_decref(x);
    json_decref(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(list_item_equals_watch_object),
        cmocka_unit_test(changes_count),
        cmocka_unit_test(set_order_does_not_matter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
