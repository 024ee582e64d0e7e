/* test_incluster.c — the in-cluster default configuration (src/discovery/
 * incluster.c) run through our target pipeline (scrape_target_labels: relabelling,
 * defaults, instance, scrape URL) on the targets the reference Prometheus 2.42.0
 * discovered from tests/fixtures/k8s/incluster/pods.json, recorded with their
 * discovered labels in prometheus-2.42.0-targets.json by
 * tests/integration/run_incluster_reference.sh: every target Prometheus kept must
 * get exactly its labels and URL here, every target it dropped must be dropped.
 * Plus the detection of a pod (KUBERNETES_SERVICE_HOST + token). */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "discovery/generate.h"
#include "scrape/scrape.h"

/* The generated text with its kubernetes_sd_configs blocks taken out: the
 * relabelling under test does not depend on how targets are discovered, and the
 * loader may not decode kubernetes_sd_configs (that is discovery's job). */
static scrape_config_t *load_generated(void)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(discovery_incluster_config(NULL, &b, NULL), IM_OK);
    static const char sd[] = "    kubernetes_sd_configs:\n      - role: pod\n";
    int n = 0;
    for (char *p; (p = strstr(b.data, sd)) != NULL; n++)
        memmove(p, p + sizeof sd - 1, strlen(p + sizeof sd - 1) + 1);
    assert_int_equal(n, 3);
    scrape_config_t *c = NULL;
    im_err_t e;
    im_err_clear(&e);
    im_rc rc = scrape_config_parse(b.data, strlen(b.data), "<in-cluster>", &c, &e);
    if (rc != IM_OK) fprintf(stderr, "%s at %d:%d\n", e.msg, e.line, e.col);
    assert_int_equal(rc, IM_OK);
    im_buf_free(&b);
    return c;
}

static const scrape_job_cfg_t *job(const scrape_config_t *c, const char *name)
{
    for (size_t i = 0; i < c->njobs; i++)
        if (!strcmp(c->jobs[i].job_name, name)) return &c->jobs[i];
    fail_msg("no job %s", name);
    return NULL;
}

static const im_labels_t *labels_of(json_t *obj)
{
    im_labels_builder_t lb;
    im_lb_init(&lb);
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
        im_lb_set(&lb, k, strlen(k), json_string_value(v), strlen(json_string_value(v)));
    const im_labels_t *ls = im_lb_build(&lb);
    im_lb_free(&lb);
    return ls;
}

static json_t *fixture(void)
{
    const char *src = getenv("IM_SOURCE_DIR");
    char p[4096];
    snprintf(p, sizeof p, "%s/tests/fixtures/k8s/incluster/prometheus-2.42.0-targets.json",
             src ? src : ".");
    json_error_t je;
    json_t *j = json_load_file(p, 0, &je);
    if (!j) fail_msg("%s: %s", p, je.text);
    return j;
}

static void test_same_targets_as_prometheus(void **state)
{
    (void)state;
    scrape_config_t *c = load_generated();
    json_t *fx = fixture();
    json_t *act = json_object_get(fx, "active"), *drop = json_object_get(fx, "dropped");
    assert_true(json_array_size(act) >= 10);
    assert_true(json_array_size(drop) >= 40);
    size_t i;
    json_t *t;
    json_array_foreach(act, i, t)
    {
        const im_labels_t *disc = labels_of(json_object_get(t, "discoveredLabels"));
        const im_labels_t *want = labels_of(json_object_get(t, "labels"));
        const im_labels_t *got = NULL;
        char *url = NULL;
        im_err_t e;
        im_err_clear(&e);
        const char *jn = json_string_value(json_object_get(t, "job"));
        assert_int_equal(scrape_target_labels(job(c, jn), disc, &got, &url, &e), IM_OK);
        if (!got || !im_labels_equal(got, want)) {
            im_buf_t a, b;
            im_buf_init(&a, 0);
            im_buf_init(&b, 0);
            if (got) (void)im_labels_format(got, &a);
            (void)im_labels_format(want, &b);
            fail_msg("job %s target %zu: got %s, Prometheus %s", jn, i, got ? a.data : "dropped",
                     b.data);
        }
        assert_string_equal(url, json_string_value(json_object_get(t, "url")));
        im_free(url);
        im_labels_unref(got);
        im_labels_unref(want);
        im_labels_unref(disc);
    }
    json_array_foreach(drop, i, t)
    {
        const im_labels_t *disc = labels_of(t);
        const im_labels_t *got = NULL;
        char *url = NULL;
        const char *jn = json_string_value(json_object_get(t, "job"));
        assert_int_equal(scrape_target_labels(job(c, jn), disc, &got, &url, NULL), IM_OK);
        if (got)
            fail_msg("job %s: pod %s port %s kept, Prometheus drops it", jn,
                     json_string_value(json_object_get(t, "__meta_kubernetes_pod_name")),
                     json_string_value(
                         json_object_get(t, "__meta_kubernetes_pod_container_port_number")));
        im_free(url);
        im_labels_unref(disc);
    }
    json_decref(fx);
    scrape_config_free(c);
}

/* What the recording shows, said plainly, so a change in the rules that
 * re-recording would hide is caught: which pods each job scrapes. */
static void test_kept_pods(void **state)
{
    (void)state;
    json_t *fx = fixture();
    char seen[4096] = "";
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(fx, "active"), i, t)
    {
        char one[512];
        snprintf(one, sizeof one, "%s %s\n", json_string_value(json_object_get(t, "job")),
                 json_string_value(json_object_get(t, "url")));
        strncat(seen, one, sizeof seen - strlen(seen) - 1);
    }
    static const char *const want[] = {
        "dcgm-exporter http://10.244.1.3:9400/metrics",
        "dcgm-exporter http://10.244.2.4:9400/metrics",
        "kubernetes-pods http://10.244.1.15:8000/metrics",      /* vLLM, port declared */
        "kubernetes-pods http://10.244.2.21:8000/metrics",      /* vLLM, no port declared */
        "kubernetes-pods http://10.244.3.7:8080/metrics",       /* LWS leader only */
        "kubernetes-pods http://10.244.5.3:8001/stats/metrics", /* each declared port */
        "kubernetes-pods http://10.244.5.3:9090/stats/metrics",
        "kubernetes-pods https://10.244.5.9:8443/metrics?format=prometheus",
        "kubernetes-pods http://[fd00:10:244::15]:8000/metrics",
        "kueue https://10.244.5.20:8443/metrics",
    };
    size_t lines = 0;
    for (const char *p = seen; *p; p++) lines += *p == '\n';
    assert_int_equal(lines, IM_ARRAY_LEN(want));
    for (size_t k = 0; k < IM_ARRAY_LEN(want); k++)
        if (!strstr(seen, want[k])) fail_msg("not kept: %s\nkept:\n%s", want[k], seen);
    json_decref(fx);
}

static void test_kueue_auth(void **state)
{
    (void)state;
    scrape_config_t *c = load_generated();
    const scrape_job_cfg_t *k = job(c, "kueue");
    assert_string_equal(k->scheme, "https");
    assert_string_equal(k->http.auth_type, "Bearer");
    assert_string_equal(k->http.auth_cred_file, DISCOVERY_SA_DIR "/token");
    assert_true(k->http.tls.insecure_skip_verify);
    assert_int_equal(c->scrape_interval_ms, 15000);
    scrape_config_free(c);
}

static void test_detect(void **state)
{
    (void)state;
    char dir[] = "/tmp/im_incluster_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char tok[4200];
    snprintf(tok, sizeof tok, "%s/token", dir);
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_false(discovery_incluster_detect(dir));
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    assert_false(discovery_incluster_detect(dir)); /* no token */
    FILE *f = fopen(tok, "w");
    assert_non_null(f);
    fputs("eyJhbGciOi.test.token", f);
    fclose(f);
    assert_true(discovery_incluster_detect(dir));
    setenv("KUBERNETES_SERVICE_HOST", "", 1);
    assert_false(discovery_incluster_detect(dir));
    unsetenv("KUBERNETES_SERVICE_HOST");
    unlink(tok);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_targets_as_prometheus),
        cmocka_unit_test(test_kept_pods),
        cmocka_unit_test(test_kueue_auth),
        cmocka_unit_test(test_detect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
