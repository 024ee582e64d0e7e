/* test_remote_config.c — the remote_write section (src/config/remote_write.c,
 * consumed by src/remote): Prometheus 2.42's defaults, every key read, unknown
 * keys and bad values refused with line and column, the queue name. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

#include "remote/remote.h"

static scrape_config_t *load(const char *y, im_err_t *e)
{
    scrape_config_t *c = NULL;
    im_err_clear(e);
    (void)scrape_config_parse(y, strlen(y), "t.yml", &c, e);
    return c;
}

static void test_defaults(void **state)
{
    (void)state;
    im_err_t e;
    scrape_config_t *c = load("remote_write:\n  - url: http://a:1/w\n", &e);
    assert_non_null(c);
    assert_int_equal(c->nremote_write, 1);
    const remote_write_cfg_t *w = &c->remote_write[0];
    assert_string_equal(w->url, "http://a:1/w");
    assert_int_equal(w->remote_timeout_ms, 30000);
    assert_int_equal(w->queue.capacity, 2500);
    assert_int_equal(w->queue.min_shards, 1);
    assert_int_equal(w->queue.max_shards, 200);
    assert_int_equal(w->queue.max_samples_per_send, 500);
    assert_int_equal(w->queue.batch_send_deadline_ms, 5000);
    assert_int_equal(w->queue.min_backoff_ms, 30);
    assert_int_equal(w->queue.max_backoff_ms, 5000);
    assert_false(w->queue.retry_on_http_429);
    assert_true(w->metadata.send);
    assert_int_equal(w->metadata.send_interval_ms, 60000);
    scrape_config_free(c);
}

static void test_all_keys(void **state)
{
    (void)state;
    im_err_t e;
    scrape_config_t *c =
        load("remote_write:\n"
             "  - url: https://a:1/w\n"
             "    name: central\n"
             "    remote_timeout: 2s\n"
             "    headers: {X-Scope-OrgID: t1}\n"
             "    write_relabel_configs: [{source_labels: [job], regex: x, action: drop}]\n"
             "    basic_auth: {username: u, password: p}\n"
             "    tls_config: {insecure_skip_verify: true}\n"
             "    proxy_url: http://proxy:3128\n"
             "    queue_config: {capacity: 10, min_shards: 2, max_shards: 3,\n"
             "                   max_samples_per_send: 5, batch_send_deadline: 1s,\n"
             "                   min_backoff: 10ms, max_backoff: 1s, retry_on_http_429: true}\n"
             "    metadata_config: {send: false, send_interval: 5s, max_samples_per_send: 7}\n",
             &e);
    if (!c) fprintf(stderr, "%s\n", e.msg);
    assert_non_null(c);
    const remote_write_cfg_t *w = &c->remote_write[0];
    assert_string_equal(w->name, "central");
    assert_int_equal(w->remote_timeout_ms, 2000);
    assert_int_equal(w->nheaders, 1);
    assert_string_equal(w->header_names[0], "X-Scope-OrgID");
    assert_int_equal(w->nwrite_relabel, 1);
    assert_string_equal(w->http.basic_user, "u");
    assert_true(w->http.tls.insecure_skip_verify);
    assert_string_equal(w->http.proxy_url, "http://proxy:3128");
    assert_int_equal(w->queue.capacity, 10);
    assert_int_equal(w->queue.min_shards, 2);
    assert_int_equal(w->queue.max_shards, 3);
    assert_int_equal(w->queue.max_samples_per_send, 5);
    assert_true(w->queue.retry_on_http_429);
    assert_false(w->metadata.send);
    assert_int_equal(w->metadata.send_interval_ms, 5000);
    assert_int_equal(w->metadata.max_samples_per_send, 7);
    scrape_config_free(c);
}

static void err_at(const char *y, int line, int col, const char *needle)
{
    im_err_t e;
    scrape_config_t *c = load(y, &e);
    assert_null(c);
    if (!strstr(e.msg, needle) || e.line != line)
        fprintf(stderr, "%d:%d: %s (want line %d col %d)\n", e.line, e.col, e.msg, line, col);
    assert_non_null(strstr(e.msg, needle));
    assert_int_equal(e.line, line);
    assert_true(e.col > 0);
}

static void test_errors(void **state)
{
    (void)state;
    err_at("remote_write:\n  - url: http://a/w\n    bogus: 1\n", 3, 5, "field bogus not found");
    err_at("remote_write:\n  - url: http://a/w\n    queue_config: {shards: 1}\n", 3, 20,
           "field shards not found");
    err_at("remote_write:\n  - url: http://a/w\n    metadata_config: {sent: true}\n", 3, 23,
           "field sent not found");
    err_at("remote_write:\n  - name: x\n", 2, 5, "url for remote_write is empty");
    err_at("remote_write:\n  - url: http://a/w\n    headers: {User-Agent: x}\n", 3, 15,
           "reserved header");
    err_at("remote_write:\n  - url: http://a/w\n    sigv4: {region: x}\n", 3, 12, "not supported");
    err_at("remote_write:\n  - {url: 'http://a/w', name: n}\n  - {url: 'http://b/w', name: n}\n", 3,
           5, "multiple remote write configs");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_all_keys),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
