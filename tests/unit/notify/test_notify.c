/* test_notify.c — the Alertmanager client without an Alertmanager: the JSON
 * body, config parsing of the alerting section, external labels and
 * alert_relabel_configs, and the bounded queue (overflow drops the oldest and
 * counts them; a batch nobody accepted stays queued for the retry). */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>
#include <jansson.h>

#include "notify/notify.h"

static void test_json(void **state)
{
    (void)state;
    const im_labels_t *l = im_labels_from_strs("alertname", "A", "x", "q\"uote", NULL);
    const im_labels_t *a = im_labels_from_strs("summary", "s\n", NULL);
    rules_notify_alert_t al = {l, a, 1700000000123, 1700000060000, false, "http://h/graph?x"};
    im_buf_t b;
    im_buf_init(&b, 0);
    notify_alerts_json(&al, 1, &b);
    assert_string_equal(b.data, "[{\"labels\":{\"alertname\":\"A\",\"x\":\"q\\\"uote\"},"
                                "\"annotations\":{\"summary\":\"s\\n\"},"
                                "\"startsAt\":\"2023-11-14T22:13:20.123Z\","
                                "\"endsAt\":\"2023-11-14T22:14:20.000Z\","
                                "\"generatorURL\":\"http://h/graph?x\"}]");
    json_error_t je;
    json_t *j = json_loads(b.data, 0, &je);
    assert_non_null(j);
    json_decref(j);
    im_buf_free(&b);
    im_labels_unref(l);
    im_labels_unref(a);
}

static cfg_node_t *yaml(const char *t)
{
    cfg_node_t *root = NULL;
    im_err_t err;
    assert_int_equal(cfg_parse_yaml(t, strlen(t), "t", &root, &err), IM_OK);
    return root;
}

/* The alerting section as the configuration decodes it at load. */
static im_rc decode(const cfg_node_t *n, notify_config_t **out, im_err_t *err)
{
    cfg_dec_t d = {NULL, err};
    return cfg_alerting_decode(&d, n, out);
}

static void test_config(void **state)
{
    (void)state;
    cfg_node_t *n = yaml("alertmanagers:\n"
                         "  - scheme: https\n    path_prefix: /am\n    timeout: 3s\n"
                         "    basic_auth: {username: u, password: p}\n"
                         "    static_configs: [{targets: ['a:9093', 'b:9093']}]\n"
                         "alert_relabel_configs:\n"
                         "  - source_labels: [severity]\n    regex: debug\n    action: drop\n");
    notify_config_t *c;
    im_err_t err;
    assert_int_equal(decode(n, &c, &err), IM_OK);
    assert_int_equal(c->nams, 1);
    assert_string_equal(c->ams[0].scheme, "https");
    assert_string_equal(c->ams[0].path_prefix, "/am");
    assert_int_equal(c->ams[0].timeout_ms, 3000);
    assert_int_equal(c->ams[0].ntargets, 2);
    assert_string_equal(c->ams[0].http.basic_user, "u");
    assert_int_equal(c->nrelabel, 1);
    cfg_alerting_unref(c);
    cfg_node_free(n);
    n = yaml("alertmanagers:\n  - api_version: v1\n");
    assert_int_equal(decode(n, &c, &err), IM_EPARSE);
    assert_null(c);
    cfg_node_free(n);
}

static void test_queue(void **state)
{
    (void)state;
    /* An Alertmanager nobody listens on: every send fails. */
    cfg_node_t *n = yaml("alertmanagers:\n"
                         "  - timeout: 1s\n    static_configs: [{targets: ['127.0.0.1:1']}]\n"
                         "alert_relabel_configs:\n"
                         "  - source_labels: [severity]\n    regex: debug\n    action: drop\n");
    notify_config_t *c;
    im_err_t err;
    assert_int_equal(decode(n, &c, &err), IM_OK);
    cfg_node_free(n);
    const im_labels_t *ext = im_labels_from_strs("cluster", "c1", "alertname", "not-this", NULL);
    notify_opts_t o = {.queue_capacity = 5, .max_batch = 2, .external_labels = ext};
    notify_t *nt = notify_new(&o, c);
    cfg_alerting_unref(c); /* the notifier keeps its own reference */
    const im_labels_t *ann = im_labels_ref(im_labels_empty());
    for (int i = 0; i < 10; i++) {
        char v[16];
        snprintf(v, sizeof v, "%d", i);
        const im_labels_t *l = im_labels_from_strs("alertname", "A", "i", v, "severity",
                                                   i == 9 ? "debug" : "page", NULL);
        rules_notify_alert_t a = {l, ann, 0, 1000, false, ""};
        notify_send(nt, &a, 1);
        im_labels_unref(l);
    }
    notify_stats_t st;
    notify_get_stats(nt, &st);
    /* 9 kept by relabelling, capacity 5 (+ up to one batch in flight) */
    assert_true(st.dropped >= 2 && st.dropped <= 4);
    assert_true(st.queue_length + st.dropped <= 9);
    assert_int_equal(st.queue_capacity, 5);
    assert_int_equal(st.alertmanagers, 1);
    assert_false(notify_flush(nt, 300)); /* nothing can be delivered */
    notify_get_stats(nt, &st);
    assert_true(st.errors >= 1);
    assert_int_equal(st.sent, 0);
    im_buf_t m;
    im_buf_init(&m, 0);
    notify_metrics_text(nt, &m);
    assert_non_null(strstr(m.data, "prometheus_notifications_queue_capacity 5\n"));
    im_buf_free(&m);
    notify_free(nt);
    im_labels_unref(ann);
    im_labels_unref(ext);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
