/* test_monitors.c — PodMonitor / ServiceMonitor objects to scrape_configs
 * (src/discovery/monitors.c). Each tests/fixtures/k8s/monitors/<name>.json (real
 * monitors of vLLM production-stack, KubeAI, dcgm-exporter, plus two that use
 * every translated field; SOURCES.md says where each comes from) must give
 * <name>.expected.yml byte for byte: the operator's job names, discovery, the
 * relabelling in its order, the endpoint settings, secrets resolved. Then the
 * errors: malformed JSON, wrong kind, wrong types, unknown selector operators,
 * fields we cannot honour, unresolvable secrets — each naming object and field.
 * IM_RECORD=1 rewrites the expected files (review the diff). */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "discovery/generate.h"
#include "util/mem.h"

static const char *const fixtures[] = {
    "production-stack-engine",      "kubeai-vllm-podmonitor", "vllm-monitoring-servicemonitor",
    "dcgm-exporter-servicemonitor", "every-field-podmonitor", "every-field-servicemonitor",
};

/* The test's Secret reader: a fixed table, as if read from the API. */
static im_rc fake_secret(void *ctx, const char *ns, const char *name, const char *key, char **value,
                         im_err_t *err)
{
    int *calls = ctx;
    (*calls)++;
    static const char *const tab[][4] = {
        {"serving", "gw-metrics", "user", "scraper"},
        {"serving", "gw-metrics", "pass", "s3cr\"et\\pw"},
        {"serving", "gw-token", "token", "tok-123"},
        {"serving", "router-auth", "token", "router-tok"},
        {"ns", "tls", "ca.crt", "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"},
        {"ns", "tls", "tls.crt", "CERT"},
        {"ns", "tls", "tls.key", "KEY"},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(tab); i++)
        if (!strcmp(tab[i][0], ns) && !strcmp(tab[i][1], name) && !strcmp(tab[i][2], key)) {
            *value = im_strdup(tab[i][3]);
            return IM_OK;
        }
    return im_err_set(err, IM_ENOTFOUND, "secrets \"%s\" not found", name);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *d = im_malloc((size_t)n + 1);
    size_t got = fread(d, 1, (size_t)n, f);
    fclose(f);
    d[got] = 0;
    *len = got;
    return d;
}

static void fx_path(char *out, size_t cap, const char *name, const char *ext)
{
    const char *src = getenv("IM_SOURCE_DIR");
    snprintf(out, cap, "%s/tests/fixtures/k8s/monitors/%s%s", src ? src : ".", name, ext);
}

static void test_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < IM_ARRAY_LEN(fixtures); i++) {
        char p[4096], e[4096];
        fx_path(p, sizeof p, fixtures[i], ".json");
        fx_path(e, sizeof e, fixtures[i], ".expected.yml");
        size_t n;
        char *json = slurp(p, &n);
        if (!json) fail_msg("cannot read %s", p);
        int calls = 0;
        discovery_monitor_opts_t o = {.secret = fake_secret, .secret_ctx = &calls};
        im_buf_t b;
        im_buf_init(&b, 0);
        im_err_t err;
        im_err_clear(&err);
        discovery_monitor_kind_t kind;
        im_rc rc = discovery_monitor_scrape_configs(json, n, &o, &b, &kind, &err);
        if (rc != IM_OK) fail_msg("%s: %s", fixtures[i], err.msg);
        assert_int_equal(kind, strstr(fixtures[i], "podmonitor") ? DISCOVERY_POD_MONITOR
                                                                 : DISCOVERY_SERVICE_MONITOR);
        if (getenv("IM_RECORD") && !strcmp(getenv("IM_RECORD"), "1")) {
            FILE *f = fopen(e, "wb");
            assert_non_null(f);
            fwrite(b.data, 1, b.len, f);
            fclose(f);
        }
        size_t en;
        char *want = slurp(e, &en);
        if (!want) fail_msg("cannot read %s", e);
        if (en != b.len || memcmp(want, b.data, en))
            fail_msg("%s: generated\n%s\n--- expected (%s)\n%s", fixtures[i], b.data, e, want);
        if (strstr(fixtures[i], "every-field")) assert_true(calls > 0);
        im_free(want);
        im_free(json);
        im_buf_free(&b);
    }
}

/* Generates from inline JSON; returns the rc and leaves the message in err. */
static im_rc gen(const char *json, im_buf_t *b, im_err_t *err)
{
    int calls = 0;
    discovery_monitor_opts_t o = {.secret = fake_secret, .secret_ctx = &calls};
    im_buf_init(b, 0);
    im_err_clear(err);
    return discovery_monitor_scrape_configs(json, strlen(json), &o, b, NULL, err);
}

static void expect_error(const char *json, const char *needle)
{
    im_buf_t b;
    im_err_t err;
    if (gen(json, &b, &err) == IM_OK) fail_msg("accepted: %s", json);
    if (!strstr(err.msg, needle)) fail_msg("message \"%s\" lacks \"%s\"", err.msg, needle);
    im_buf_free(&b);
}

#define SM(spec)                                                                                   \
    "{\"kind\":\"ServiceMonitor\",\"metadata\":{\"name\":\"m\",\"namespace\":\"ns\"},"             \
    "\"spec\":" spec "}"
#define PM(spec)                                                                                   \
    "{\"kind\":\"PodMonitor\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":" spec "}"

static void test_errors(void **state)
{
    (void)state;
    expect_error("{\"kind\":", "monitor object");
    expect_error("{\"kind\":\"Pod\",\"metadata\":{}}", "must be ServiceMonitor or PodMonitor");
    expect_error("{\"kind\":\"PodMonitor\",\"metadata\":{\"name\":\"p\"},\"spec\":{}}",
                 "needs name and namespace");
    expect_error(SM("{\"endpoints\":[{\"port\":\"web\",\"oauth2\":{}}]}"),
                 "ServiceMonitor ns/m: spec.endpoints[0].oauth2: field not supported");
    expect_error(SM("{\"endpoints\":[{\"port\":\"web\",\"tlsConfig\":{\"ca\":{\"secret\":{}}}}]}"),
                 "spec.endpoints[0].tlsConfig.ca.secret: a Secret reference needs name and key");
    expect_error(
        SM("{\"endpoints\":[{\"port\":\"web\",\"tlsConfig\":{\"cert\":{\"configMap\":"
           "{\"name\":\"c\",\"key\":\"k\"}}}}]}"),
        "spec.endpoints[0].tlsConfig.cert: ConfigMaps are not read (use a Secret or certFile)");
    expect_error(SM("{\"endpoints\":[{\"port\":\"web\",\"tlsConfig\":{\"keySecret\":"
                    "{\"name\":\"tls\",\"key\":\"nokey\"}}}]}"),
                 "Secret tls key nokey");
    expect_error(PM("{\"selector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Gt\"}]}}"),
                 "unknown operator Gt");
    expect_error(PM("{\"podMetricsEndpoints\":[{\"port\":8080}]}"),
                 "spec.podMetricsEndpoints[0].port: must be a string");
    expect_error(PM("{\"podMetricsEndpoints\":[{\"port\":\"m\",\"bearerTokenSecret\":"
                    "{\"name\":\"nope\",\"key\":\"t\"}}]}"),
                 "Secret nope key t: secrets \"nope\" not found");
    expect_error(SM("{\"scrapeClass\":\"x\",\"endpoints\":[]}"),
                 "spec.scrapeClass: field not supported");
    expect_error(SM("{\"endpoints\":[{\"relabelings\":[{\"action\":\"keep\",\"if\":1}]}]}"),
                 "relabelings[0].if: field not supported");
    /* No secret reader configured. */
    const char *j = PM("{\"podMetricsEndpoints\":[{\"basicAuth\":{\"username\":{\"name\":\"a\","
                       "\"key\":\"u\"},\"password\":{\"name\":\"a\",\"key\":\"p\"}}}]}");
    im_buf_t b;
    im_buf_init(&b, 0);
    im_err_t err;
    im_err_clear(&err);
    assert_int_not_equal(discovery_monitor_scrape_configs(j, strlen(j), NULL, &b, NULL, &err),
                         IM_OK);
    assert_non_null(strstr(err.msg, "no Secret reader is configured"));
    im_buf_free(&b);
}

/* Values from the object cannot break out of their YAML scalar. */
static void test_quoting(void **state)
{
    (void)state;
    im_buf_t b;
    im_err_t err;
    assert_int_equal(gen(PM("{\"podMetricsEndpoints\":[{\"port\":\"a\\\"\\nb: [x]\",\"path\":"
                            "\"/m\\u0001\"}]}"),
                         &b, &err),
                     IM_OK);
    assert_non_null(strstr(b.data, "regex: \"a\\\"\\u000ab: [x]\""));
    assert_non_null(strstr(b.data, "metrics_path: \"/m\\u0001\""));
    im_buf_free(&b);
    /* An object with no endpoints yields nothing. */
    assert_int_equal(gen(SM("{\"selector\":{}}"), &b, &err), IM_OK);
    assert_int_equal(b.len, 0);
    im_buf_free(&b);
}

/* tlsConfig ca / cert / keySecret from Secrets become inline PEM. */
static void test_tls_secrets(void **state)
{
    (void)state;
    im_buf_t b;
    im_err_t err;
    assert_int_equal(gen(SM("{\"endpoints\":[{\"port\":\"web\",\"scheme\":\"https\",\"tlsConfig\":{"
                            "\"ca\":{\"secret\":{\"name\":\"tls\",\"key\":\"ca.crt\"}},"
                            "\"cert\":{\"secret\":{\"name\":\"tls\",\"key\":\"tls.crt\"}},"
                            "\"keySecret\":{\"name\":\"tls\",\"key\":\"tls.key\"},"
                            "\"serverName\":\"vllm.llm.svc\"}}]}"),
                         &b, &err),
                     IM_OK);
    assert_non_null(strstr(b.data,
                           "  tls_config:\n    server_name: \"vllm.llm.svc\"\n    ca: "
                           "\"-----BEGIN CERTIFICATE-----\\u000aCA\\u000a-----END CERTIFICATE-----"
                           "\\u000a\"\n    cert: \"CERT\"\n    key: \"KEY\"\n"));
    im_buf_free(&b);
}

/* sd_extra_yaml is appended to each job's discovery entry. */
static void test_sd_extra(void **state)
{
    (void)state;
    const char *j = SM("{\"endpoints\":[{\"port\":\"a\"},{\"port\":\"b\"}]}");
    discovery_monitor_opts_t o = {.sd_extra_yaml = "      api_server: \"https://k8s:6443\"\n"};
    im_buf_t b;
    im_buf_init(&b, 0);
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(discovery_monitor_scrape_configs(j, strlen(j), &o, &b, NULL, &err), IM_OK);
    const char *p = strstr(b.data, "api_server");
    assert_non_null(p);
    assert_non_null(strstr(p + 1, "api_server"));
    assert_non_null(strstr(b.data, "- job_name: \"serviceMonitor/ns/m/1\""));
    im_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_quoting),  cmocka_unit_test(test_tls_secrets),
        cmocka_unit_test(test_sd_extra),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
