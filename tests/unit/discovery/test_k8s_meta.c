/* test_k8s_meta.c — unit tests for Kubernetes objects to target groups
 * (src/discovery/k8s_meta.c) and the watch-stream decoder (k8s_watch.c): the
 * __meta_kubernetes_* labels of every role as Prometheus 2.42 sets them, the
 * target-address rules, label-name sanitising, and bad input. */
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

/* The value of label name in target i, or NULL. */
static const char *L(const k8s_group_t *g, size_t i, const char *name)
{
    assert_true(i < g->ntargets);
    const im_istr_t *v = im_labels_get(g->targets[i], name);
    return v ? v->s : NULL;
}

static void build(k8s_role_t r, json_t *const *stores, const json_t *obj, bool attach,
                  k8s_group_t *g)
{
    k8s_cache_t c = {0};
    for (int k = 0; k < K8S_NROLES; k++)
        if (stores && stores[k]) {
            c.stores[k] = &stores[k];
            c.nstores[k] = 1;
        }
    k8s_build(r, &c, attach, obj, g);
}

static void test_sanitize(void **st)
{
    char b[64];
    k8s_sanitize("app.kubernetes.io/name", b, sizeof b);
    assert_string_equal(b, "app_kubernetes_io_name");
    k8s_sanitize("caf\xc3\xa9-x", b, sizeof b); /* one '_' per character */
    assert_string_equal(b, "caf__x");
    k8s_sanitize("a\xff"
                 "b",
                 b, sizeof b);
    assert_string_equal(b, "a_b");
    k8s_sanitize("\xe2\x82", b, sizeof b); /* truncated sequence: byte by byte */
    assert_string_equal(b, "__");
}

static const char *POD =
    "{\"metadata\":{\"name\":\"vllm-0\",\"namespace\":\"llm\",\"uid\":\"u1\","
    "\"labels\":{\"app.kubernetes.io/name\":\"vllm\",\"empty\":\"\"},"
    "\"annotations\":{\"prometheus.io/scrape\":\"true\"},"
    "\"ownerReferences\":[{\"kind\":\"Foo\",\"name\":\"x\"},"
    "{\"kind\":\"ReplicaSet\",\"name\":\"vllm-rs\",\"controller\":true}]},"
    "\"spec\":{\"nodeName\":\"gpu-a\",\"containers\":["
    "{\"name\":\"vllm\",\"image\":\"img\",\"ports\":[{\"name\":\"http\",\"containerPort\":8000,"
    "\"protocol\":\"TCP\"},{\"containerPort\":8001,\"protocol\":\"UDP\"}]},"
    "{\"name\":\"side\",\"image\":\"img2\"}],"
    "\"initContainers\":[{\"name\":\"init\",\"image\":\"i\"}]},"
    "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.1\",\"hostIP\":\"192.168.0.1\","
    "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}";

static void test_pod(void **st)
{
    json_t *pod = J(POD);
    json_t *nodes =
        J("{\"gpu-a\":{\"metadata\":{\"name\":\"gpu-a\",\"labels\":{\"zone\":\"z1\"}}}}");
    json_t *stores[K8S_NROLES] = {0};
    stores[K8S_ROLE_NODE] = nodes;
    k8s_group_t g;
    build(K8S_ROLE_POD, stores, pod, true, &g);
    assert_string_equal(g.source, "pod/llm/vllm-0");
    assert_int_equal(g.ntargets, 4); /* 2 ports, 1 container without port, 1 init */
    assert_string_equal(L(&g, 0, "__address__"), "10.0.0.1:8000");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_pod_container_port_name"), "http");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_pod_container_port_number"), "8000");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_pod_container_init"), "false");
    assert_null(L(&g, 1, "__meta_kubernetes_pod_container_port_name"));
    assert_string_equal(L(&g, 1, "__meta_kubernetes_pod_container_port_protocol"), "UDP");
    assert_string_equal(L(&g, 2, "__address__"), "10.0.0.1");
    assert_null(L(&g, 2, "__meta_kubernetes_pod_container_port_number"));
    assert_string_equal(L(&g, 3, "__meta_kubernetes_pod_container_init"), "true");
    assert_string_equal(L(&g, 3, "__meta_kubernetes_pod_container_name"), "init");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_pod_ready"), "false");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_pod_phase"), "Running");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_pod_controller_kind"), "ReplicaSet");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_pod_controller_name"), "vllm-rs");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_pod_label_app_kubernetes_io_name"), "vllm");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_pod_labelpresent_empty"), "true");
    assert_null(L(&g, 0, "__meta_kubernetes_pod_label_empty")); /* empty values vanish */
    assert_string_equal(L(&g, 0, "__meta_kubernetes_pod_annotation_prometheus_io_scrape"), "true");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_namespace"), "llm");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_node_label_zone"), "z1");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_node_name"), "gpu-a");
    k8s_group_clear(&g);
    /* without IP: no targets; without Ready condition: unknown; IPv6 brackets */
    json_object_del(json_object_get(pod, "status"), "podIP");
    build(K8S_ROLE_POD, NULL, pod, false, &g);
    assert_int_equal(g.ntargets, 0);
    k8s_group_clear(&g);
    json_object_set_new(json_object_get(pod, "status"), "podIP", json_string("fd00::1"));
    json_object_del(json_object_get(pod, "status"), "conditions");
    build(K8S_ROLE_POD, NULL, pod, false, &g);
    assert_string_equal(L(&g, 0, "__address__"), "[fd00::1]:8000");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_pod_ready"), "unknown");
    assert_null(L(&g, 0, "__meta_kubernetes_node_name"));
    k8s_group_clear(&g);
    json_decref(pod);
    json_decref(nodes);
}

static void test_service(void **st)
{
    json_t *svc = J("{\"metadata\":{\"name\":\"s\",\"namespace\":\"n\"},\"spec\":{\"type\":"
                    "\"ExternalName\",\"externalName\":\"api.example.com\",\"clusterIP\":\"x\","
                    "\"ports\":[{\"port\":443,\"protocol\":\"TCP\"}]}}");
    k8s_group_t g;
    build(K8S_ROLE_SERVICE, NULL, svc, false, &g);
    assert_string_equal(g.source, "svc/n/s");
    assert_int_equal(g.ntargets, 1);
    assert_string_equal(L(&g, 0, "__address__"), "s.n.svc:443");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_service_external_name"), "api.example.com");
    assert_null(L(&g, 0, "__meta_kubernetes_service_cluster_ip"));
    assert_string_equal(L(&g, 0, "__meta_kubernetes_service_port_number"), "443");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_service_type"), "ExternalName");
    k8s_group_clear(&g);
    json_decref(svc);
}

static void test_endpoints(void **st)
{
    json_t *pods = json_object();
    json_object_set_new(pods, "llm/vllm-0", J(POD));
    json_t *svcs = J("{\"llm/vllm\":{\"metadata\":{\"name\":\"vllm\",\"namespace\":\"llm\","
                     "\"labels\":{\"a\":\"b\"}}}}");
    json_t *stores[K8S_NROLES] = {0};
    stores[K8S_ROLE_POD] = pods;
    stores[K8S_ROLE_SERVICE] = svcs;
    json_t *eps = J("{\"metadata\":{\"name\":\"vllm\",\"namespace\":\"llm\"},\"subsets\":[{"
                    "\"addresses\":[{\"ip\":\"10.0.0.1\",\"nodeName\":\"gpu-a\",\"targetRef\":{"
                    "\"kind\":\"Pod\",\"namespace\":\"llm\",\"name\":\"vllm-0\"}}],"
                    "\"notReadyAddresses\":[{\"ip\":\"10.9.9.9\",\"hostname\":\"h\"}],"
                    "\"ports\":[{\"name\":\"web\",\"port\":8000,\"protocol\":\"TCP\"}]}]}");
    k8s_group_t g;
    build(K8S_ROLE_ENDPOINTS, stores, eps, false, &g);
    assert_string_equal(g.source, "endpoints/llm/vllm");
    /* the pod's address, the not-ready address, the pod's uncovered port 8001 */
    assert_int_equal(g.ntargets, 3);
    assert_string_equal(L(&g, 0, "__meta_kubernetes_endpoint_ready"), "true");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_endpoint_node_name"), "gpu-a");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_endpoint_address_target_kind"), "Pod");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_pod_container_port_name"), "http");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_service_label_a"), "b");
    assert_string_equal(L(&g, 1, "__meta_kubernetes_endpoint_ready"), "false");
    assert_string_equal(L(&g, 1, "__meta_kubernetes_endpoint_hostname"), "h");
    assert_null(L(&g, 1, "__meta_kubernetes_pod_name"));
    assert_string_equal(L(&g, 2, "__address__"), "10.0.0.1:8001");
    assert_null(L(&g, 2, "__meta_kubernetes_endpoint_ready"));
    assert_string_equal(L(&g, 2, "__meta_kubernetes_pod_name"), "vllm-0");
    assert_string_equal(L(&g, 2, "__meta_kubernetes_endpoints_name"), "vllm");
    k8s_group_clear(&g);
    json_decref(eps);
    json_decref(pods);
    json_decref(svcs);
}

static void test_endpointslice(void **st)
{
    json_t *es = J("{\"metadata\":{\"name\":\"s-1\",\"namespace\":\"n\",\"labels\":{"
                   "\"kubernetes.io/service-name\":\"s\"}},\"addressType\":\"IPv4\","
                   "\"endpoints\":[{\"addresses\":[\"10.0.0.2\"],\"conditions\":{\"ready\":false,"
                   "\"serving\":true,\"terminating\":true},\"deprecatedTopology\":{"
                   "\"kubernetes.io/hostname\":\"n1\"}},{\"addresses\":[\"10.0.0.3\"]}],"
                   "\"ports\":[{\"name\":\"m\",\"port\":9400,\"protocol\":\"TCP\","
                   "\"appProtocol\":\"http\"}]}");
    k8s_group_t g;
    build(K8S_ROLE_ENDPOINTSLICE, NULL, es, false, &g);
    assert_string_equal(g.source, "endpointslice/n/s-1");
    assert_int_equal(g.ntargets, 2);
    assert_string_equal(L(&g, 0, "__address__"), "10.0.0.2:9400");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_endpointslice_endpoint_conditions_ready"),
                        "false");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_endpointslice_endpoint_conditions_terminating"),
                        "true");
    assert_string_equal(
        L(&g, 0, "__meta_kubernetes_endpointslice_endpoint_topology_kubernetes_io_hostname"), "n1");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_endpointslice_port_app_protocol"), "http");
    assert_null(L(&g, 1, "__meta_kubernetes_endpointslice_endpoint_conditions_ready"));
    assert_string_equal(L(&g, 1, "__meta_kubernetes_endpointslice_address_type"), "IPv4");
    k8s_group_clear(&g);
    json_decref(es);
}

static void test_node(void **st)
{
    json_t *n = J("{\"metadata\":{\"name\":\"n1\"},\"spec\":{\"providerID\":\"aws:///i\"},"
                  "\"status\":{\"addresses\":[{\"type\":\"ExternalIP\",\"address\":\"1.2.3.4\"},"
                  "{\"type\":\"InternalDNS\",\"address\":\"n1.internal\"},{\"type\":\"ExternalIP\","
                  "\"address\":\"5.6.7.8\"}],\"daemonEndpoints\":{\"kubeletEndpoint\":{\"Port\":"
                  "10250}}}}");
    k8s_group_t g;
    build(K8S_ROLE_NODE, NULL, n, false, &g);
    assert_string_equal(g.source, "node/n1");
    assert_int_equal(g.ntargets, 1);
    assert_string_equal(L(&g, 0, "__address__"), "n1.internal:10250"); /* InternalDNS first */
    assert_string_equal(L(&g, 0, "instance"), "n1");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_node_address_ExternalIP"), "1.2.3.4");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_node_provider_id"), "aws:///i");
    k8s_group_clear(&g);
    json_object_set_new(json_object_get(n, "status"), "addresses", json_array());
    build(K8S_ROLE_NODE, NULL, n, false, &g);
    assert_int_equal(g.ntargets, 0);
    k8s_group_clear(&g);
    json_decref(n);
}

static void test_ingress(void **st)
{
    json_t *i = J("{\"metadata\":{\"name\":\"i\",\"namespace\":\"n\"},\"spec\":{"
                  "\"ingressClassName\":\"nginx\",\"tls\":[{\"hosts\":[\"*.example.com\"]}],"
                  "\"rules\":[{\"host\":\"a.example.com\",\"http\":{\"paths\":[{\"path\":\"/v1\"},"
                  "{}]}},{\"host\":\"a.b.example.com\"}]}}");
    k8s_group_t g;
    build(K8S_ROLE_INGRESS, NULL, i, false, &g);
    assert_string_equal(g.source, "ingress/n/i");
    assert_int_equal(g.ntargets, 3);
    assert_string_equal(L(&g, 0, "__meta_kubernetes_ingress_scheme"), "https");
    assert_string_equal(L(&g, 0, "__meta_kubernetes_ingress_path"), "/v1");
    assert_string_equal(L(&g, 1, "__meta_kubernetes_ingress_path"), "/");
    assert_string_equal(L(&g, 2, "__meta_kubernetes_ingress_scheme"), "http"); /* one level */
    assert_string_equal(L(&g, 2, "__address__"), "a.b.example.com");
    assert_string_equal(L(&g, 2, "__meta_kubernetes_ingress_class_name"), "nginx");
    k8s_group_clear(&g);
    json_decref(i);
}

static void test_malformed_objects(void **st)
{
    const char *bad[] = {"[]", "{}", "{\"metadata\":5}", "{\"spec\":{\"containers\":7}}",
                         "{\"status\":{\"podIP\":\"1.1.1.1\"},\"spec\":{\"containers\":[5,"
                         "{\"ports\":[null,{\"containerPort\":\"x\"}]}]}}"};
    for (size_t b = 0; b < IM_ARRAY_LEN(bad); b++)
        for (int r = 0; r < K8S_NROLES; r++) {
            json_t *o = J(bad[b]);
            k8s_group_t g;
            build((k8s_role_t)r, NULL, o, true, &g);
            assert_non_null(g.source);
            k8s_group_clear(&g);
            json_decref(o);
        }
}

typedef struct evlog {
    int n[5];
    char last_rv[32];
} evlog_t;

static int on_ev(void *arg, k8s_event_type_t t, json_t *obj)
{
    evlog_t *l = arg;
    l->n[t]++;
    const char *rv =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    if (rv) snprintf(l->last_rv, sizeof l->last_rv, "%s", rv);
    return 0;
}

static void test_watch_decoder(void **st)
{
    const char *s =
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
        "\"resourceVersion\":\"5\"}}}\n{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":"
        "{\"resourceVersion\":\"9\"}}}\r\n\n{\"type\":\"ERROR\",\"object\":{\"code\":410}}\n";
    evlog_t l = {0};
    k8s_watch_decoder_t d;
    k8s_watch_decoder_init(&d, 1 << 20, on_ev, &l);
    for (size_t i = 0; s[i]; i++) assert_int_equal(k8s_watch_decoder_feed(&d, s + i, 1), IM_OK);
    assert_int_equal(l.n[K8S_EV_ADDED], 1);
    assert_int_equal(l.n[K8S_EV_BOOKMARK], 1);
    assert_int_equal(l.n[K8S_EV_ERROR], 1);
    assert_string_equal(l.last_rv, "9");
    assert_int_equal(k8s_watch_decoder_feed(&d, "{\"type\":\"NOPE\",\"object\":{}}\n", 29),
                     IM_EPARSE);
    assert_int_equal(k8s_watch_decoder_feed(&d, "{oops\n", 6), IM_EPARSE);
    k8s_watch_decoder_free(&d);
    k8s_watch_decoder_init(&d, 16, on_ev, &l);
    assert_int_equal(k8s_watch_decoder_feed(&d, "{\"type\":\"ADDED\",\"object\":{}}", 28),
                     IM_ELIMIT);
    k8s_watch_decoder_free(&d);
}

static void test_list_decode(void **st)
{
    const char *b = "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"12\",\"continue\":"
                    "\"c1\"},\"items\":[{\"metadata\":{\"name\":\"a\"}}],\"unknownField\":1}";
    json_t *root, *items;
    const char *rv, *cont;
    im_err_t e;
    im_err_clear(&e);
    assert_int_equal(k8s_list_decode(b, strlen(b), &root, &items, &rv, &cont, &e), IM_OK);
    assert_string_equal(rv, "12");
    assert_string_equal(cont, "c1");
    assert_int_equal(json_array_size(items), 1);
    json_decref(root);
    assert_int_equal(k8s_list_decode("{\"items\":[]}", 12, &root, &items, &rv, &cont, &e),
                     IM_EPARSE);
    assert_int_equal(k8s_list_decode("{\"metadata\":{}", 14, &root, &items, &rv, &cont, &e),
                     IM_EPARSE);
}

static void test_cfg_validate(void **st)
{
    k8s_sd_cfg_t c = {0};
    im_err_t e;
    im_err_clear(&e);
    c.role = K8S_ROLE_POD;
    c.label_sel[K8S_ROLE_SERVICE] = "a=b";
    assert_int_equal(k8s_sd_cfg_validate(&c, &e), IM_EINVAL);
    assert_non_null(strstr(e.msg, "pod role supports only pod selectors"));
    c.label_sel[K8S_ROLE_SERVICE] = NULL;
    c.http.auth_type = "Bearer";
    assert_int_equal(k8s_sd_cfg_validate(&c, &e), IM_EINVAL);
    assert_non_null(strstr(e.msg, "api_server"));
    c.api_server = "https://k:6443";
    assert_int_equal(k8s_sd_cfg_validate(&c, &e), IM_OK);
    c.kubeconfig_file = "k";
    assert_int_equal(k8s_sd_cfg_validate(&c, &e), IM_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sanitize),      cmocka_unit_test(test_pod),
        cmocka_unit_test(test_service),       cmocka_unit_test(test_endpoints),
        cmocka_unit_test(test_endpointslice), cmocka_unit_test(test_node),
        cmocka_unit_test(test_ingress),       cmocka_unit_test(test_malformed_objects),
        cmocka_unit_test(test_watch_decoder), cmocka_unit_test(test_list_decode),
        cmocka_unit_test(test_cfg_validate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
