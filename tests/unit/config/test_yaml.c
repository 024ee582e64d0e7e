/* test_yaml.c — the one YAML decoder (src/config/yaml.c) and the strictness it
 * gives every section of the configuration: an unknown key is refused with its
 * line:column in every section (remote_write and llm included), a repeated key
 * names the line of the first, and the getters refuse wrong types with the
 * texts the other tests and docs rely on. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

#include "config/config.h"
#include "config/yaml.h"

static int nbad; /* mismatches so far (all are reported before the test fails) */

/* Loads y as a whole config and expects an error at line:col with text msg. */
static void expect_cfg_err(const char *y, int line, int col, const char *msg)
{
    scrape_config_t *c = NULL;
    im_err_t e;
    im_err_clear(&e);
    im_rc rc = scrape_config_parse(y, strlen(y), "t.yml", &c, &e);
    if (rc == IM_OK || e.line != line || e.col != col || strcmp(e.msg, msg) != 0) {
        print_error("%s\ngot %d:%d %s\nwant %d:%d %s\n", y, e.line, e.col, e.msg, line, col, msg);
        nbad++;
    }
    if (rc != IM_OK) assert_string_equal(e.file, "t.yml");
    assert_null(c);
}

static void test_unknown_keys_everywhere(void **state)
{
    (void)state;
    static const struct {
        const char *yaml;
        int line, col;
        const char *msg;
    } cases[] = {
        {"foo: 1\n", 1, 1, "field foo not found in config"},
        {"global:\n  scrape_intervall: 1s\n", 2, 3, "field scrape_intervall not found in global"},
        {"scrape_configs:\n  - job_name: a\n    bogus: 1\n", 3, 5,
         "field bogus not found in scrape_config"},
        {"scrape_configs:\n  - job_name: a\n    static_configs: [{targets: [], lables: {}}]\n", 3,
         36, "field lables not found in static_config"},
        {"scrape_configs:\n  - job_name: a\n    file_sd_configs: [{files: [a.json], x: 1}]\n", 3,
         41, "field x not found in file_sd_config"},
        {"scrape_configs:\n  - job_name: a\n    relabel_configs: [{action: keep, regexp: a}]\n", 3,
         38, "field regexp not found in relabel_config"},
        {"scrape_configs:\n  - job_name: a\n    tls_config: {ca: x, foo: y}\n", 3, 25,
         "field foo not found in tls_config"},
        {"scrape_configs:\n  - job_name: a\n    basic_auth: {user: x}\n", 3, 18,
         "field user not found in basic_auth"},
        {"scrape_configs:\n  - job_name: a\n    authorization: {token: x}\n", 3, 21,
         "field token not found in authorization"},
        {"storage:\n  paht: x\n", 2, 3, "field paht not found in storage"},
        {"storage:\n  retention: {days: 1}\n", 2, 15, "field days not found in storage.retention"},
        {"storage:\n  wal: {sync: always}\n", 2, 9, "field sync not found in storage.wal"},
        {"alerting:\n  alertmanager: []\n", 2, 3, "field alertmanager not found in alerting"},
        {"alerting:\n  alertmanagers:\n    - static_configs: []\n      sheme: http\n", 4, 7,
         "field sheme not found in alertmanager_config"},
        {"alerting:\n  alertmanagers:\n    - kubernetes_sd_configs: []\n", 3, 7,
         "field kubernetes_sd_configs not found in alertmanager_config"},
        {"alerting:\n  alert_relabel_configs: [{foo: 1}]\n", 2, 28,
         "field foo not found in relabel_config"},
        {"remote_write:\n  - url: http://x/w\n    urls: [a]\n", 3, 5,
         "field urls not found in remote_write"},
        {"remote_write:\n  - url: http://x/w\n    queue_config:\n      capacityy: 1\n", 4, 7,
         "field capacityy not found in queue_config"},
        {"remote_write:\n  - url: http://x/w\n    metadata_config: {sendd: true}\n", 3, 23,
         "field sendd not found in metadata_config"},
        {"remote_write:\n  - url: http://x/w\n    azuread: {cloud: AzurePublic}\n", 3, 5,
         "field azuread not found in remote_write"},
        {"remote_write:\n  - url: http://x/w\n    write_relabel_configs: [{act: drop}]\n", 3, 30,
         "field act not found in relabel_config"},
        {"llm:\n  ttft_target: 2\n", 2, 3, "field ttft_target not found in llm"},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(cases); i++)
        expect_cfg_err(cases[i].yaml, cases[i].line, cases[i].col, cases[i].msg);
    assert_int_equal(nbad, 0);
}

static void test_duplicates_and_values(void **state)
{
    (void)state;
    expect_cfg_err("global: {}\nglobal: {}\n", 2, 1,
                   "mapping key \"global\" already defined at line 1");
    expect_cfg_err("remote_write:\n  - url: http://x/w\n    url: http://y/w\n", 3, 5,
                   "mapping key \"url\" already defined at line 2");
    expect_cfg_err("llm:\n  failure_ratio: 0.1\n  failure_ratio: 0.2\n", 3, 3,
                   "mapping key \"failure_ratio\" already defined at line 2");
    expect_cfg_err("remote_write:\n  - name: a\n", 2, 5, "url for remote_write is empty");
    expect_cfg_err("remote_write:\n  -\n", 2, 4, "empty or null remote write config section");
    expect_cfg_err("remote_write:\n  - url: http://a/w\n    name: x\n  - url: http://b/w\n"
                   "    name: x\n",
                   4, 5, "found multiple remote write configs with job name \"x\"");
    expect_cfg_err("remote_write:\n  - url: http://a/w\n    headers: {Authorization: x}\n", 3, 14,
                   "authorization header must be changed via the basic_auth, authorization, "
                   "oauth2, or sigv4 parameter");
    expect_cfg_err("remote_write:\n  - url: http://a/w\n    headers: {User-Agent: x}\n", 3, 14,
                   "User-Agent is a reserved header. It must not be changed");
    expect_cfg_err("remote_write:\n  - url: http://a/w\n    queue_config: {max_shards: lots}\n", 3,
                   32, "max_shards: cannot unmarshal \"lots\" into an integer");
    expect_cfg_err("remote_write:\n  - url: http://a/w\n    sigv4: {region: x}\n", 3, 12,
                   "sigv4 is not supported by infermon; sign requests with a proxy (proxy_url) "
                   "or use basic_auth / authorization");
    expect_cfg_err("llm:\n  failure_ratio: 2\n", 2, 18,
                   "llm.failure_ratio must be between 0 and 1, not 2");
    expect_cfg_err("llm:\n  kv_cache_threshold: high\n", 2, 23,
                   "kv_cache_threshold: cannot unmarshal \"high\" into a float");
    expect_cfg_err("llm:\n  vllm_names: newest\n", 2, 15,
                   "llm.vllm_names must be one of auto, both, old, new, not \"newest\"");
    expect_cfg_err("alerting:\n  alertmanagers:\n    - api_version: v1\n", 3, 20,
                   "unsupported Alertmanager api_version v1 (only v2)");
    expect_cfg_err("alerting:\n  alertmanagers:\n    - file_sd_configs: []\n", 3, 24,
                   "file_sd_configs in alertmanagers is not supported by infermon (use "
                   "static_configs)");
    assert_int_equal(nbad, 0);
}

static void test_remote_write_defaults_and_dump(void **state)
{
    (void)state;
    const char *y = "remote_write:\n  - url: http://u:pw@x:9201/w\n    name: r1\n"
                    "    headers: {X-Scope-OrgID: t1}\n    remote_timeout: 10s\n"
                    "    bearer_token_file: /tok\n"
                    "    write_relabel_configs: [{source_labels: [a], regex: b, action: drop}]\n"
                    "    queue_config: {max_shards: 7, retry_on_http_429: true}\n"
                    "    metadata_config: {send: false}\n"
                    "llm:\n  builtin_rules: false\n  ttft_p95_target_seconds: 0.75\n";
    scrape_config_t *c = NULL;
    im_err_t e;
    im_err_clear(&e);
    assert_int_equal(scrape_config_parse(y, strlen(y), "t.yml", &c, &e), IM_OK);
    assert_int_equal(c->nremote_write, 1);
    const cfg_remote_write_t *rw = &c->remote_write[0];
    assert_int_equal(rw->remote_timeout_ms, 10000);
    assert_int_equal(rw->queue.max_shards, 7);
    assert_int_equal(rw->queue.capacity, 2500);
    assert_int_equal(rw->queue.min_shards, 1);
    assert_int_equal(rw->queue.max_samples_per_send, 500);
    assert_int_equal(rw->queue.batch_send_deadline_ms, 5000);
    assert_int_equal(rw->queue.min_backoff_ms, 30);
    assert_int_equal(rw->queue.max_backoff_ms, 5000);
    assert_true(rw->queue.retry_on_http_429);
    assert_false(rw->metadata.send);
    assert_int_equal(rw->metadata.send_interval_ms, 60000);
    assert_int_equal(rw->nwrite_relabel, 1);
    assert_string_equal(rw->http.auth_type, "Bearer");
    assert_true(rw->http.follow_redirects);
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(scrape_config_dump(c, &b), IM_OK);
    const char *want = "remote_write:\n"
                       "- url: http://u:xxxxx@x:9201/w\n"
                       "  remote_timeout: 10s\n"
                       "  headers:\n    X-Scope-OrgID: t1\n"
                       "  name: r1\n"
                       "  write_relabel_configs:\n  - source_labels: [a]\n    separator: ;\n"
                       "    regex: b\n    replacement: $1\n    action: drop\n"
                       "  authorization:\n    type: Bearer\n    credentials_file: /tok\n"
                       "  follow_redirects: true\n  enable_http2: true\n"
                       "  queue_config:\n    capacity: 2500\n    max_shards: 7\n"
                       "    min_shards: 1\n    max_samples_per_send: 500\n"
                       "    batch_send_deadline: 5s\n    min_backoff: 30ms\n"
                       "    max_backoff: 5s\n    retry_on_http_429: true\n"
                       "  metadata_config:\n    send: false\n    send_interval: 1m\n"
                       "    max_samples_per_send: 500\n"
                       "llm:\n  builtin_rules: false\n  ttft_p95_target_seconds: 0.75\n"
                       "  vllm_names: auto\n";
    if (!strstr(b.data, want)) fail_msg("dump:\n%s", b.data);
    im_buf_free(&b);
    scrape_config_free(c);
}

static void test_getters(void **state)
{
    (void)state;
    const char *y = "i: -42\nbig: 9999999999\nf: 1e3\ninf: -.Inf\nnan: .nan\nhex: 0x10\n"
                    "b: yes\nsz: 10MiB\nm: {a: x, b: ''}\nl: [a, b]\nnull_v: ~\nq: 'null'\n";
    cfg_node_t *root = NULL;
    im_err_t e;
    im_err_clear(&e);
    assert_int_equal(cfg_parse_yaml(y, strlen(y), "g.yml", &root, &e), IM_OK);
    cfg_dec_t d = {"g.yml", &e};
    int i = 0;
    assert_int_equal(cfg_get_int(&d, root, "i", &i), IM_OK);
    assert_int_equal(i, -42);
    assert_int_equal(cfg_get_int(&d, root, "big", &i), IM_EPARSE);
    assert_string_equal(e.msg, "big: cannot unmarshal \"9999999999\" into an integer");
    assert_int_equal(e.line, 2);
    double f = 0;
    assert_int_equal(cfg_get_float(&d, root, "f", &f), IM_OK);
    assert_true(f == 1000);
    assert_int_equal(cfg_get_float(&d, root, "inf", &f), IM_OK);
    assert_true(isinf(f) && f < 0);
    assert_int_equal(cfg_get_float(&d, root, "nan", &f), IM_OK);
    assert_true(isnan(f));
    assert_int_equal(cfg_get_float(&d, root, "hex", &f), IM_EPARSE);
    bool bo = false;
    assert_int_equal(cfg_get_bool(&d, root, "b", &bo), IM_OK);
    assert_true(bo);
    int64_t sz = 0;
    assert_int_equal(cfg_get_bytes(&d, root, "sz", &sz), IM_OK);
    assert_int_equal(sz, 10 << 20);
    char **names = NULL, **vals = NULL;
    size_t n = 0;
    assert_int_equal(cfg_get_strmap(&d, root, "m", &names, &vals, &n), IM_OK);
    assert_int_equal(n, 2);
    assert_string_equal(names[1], "b");
    assert_string_equal(vals[1], "");
    assert_int_equal(cfg_get_strmap(&d, root, "l", &names, &vals, &n), IM_EPARSE);
    assert_string_equal(e.msg, "l must be a mapping, not a sequence");
    cfg_strv_free(names, n);
    cfg_strv_free(vals, n);
    char **lst = NULL;
    size_t nl = 0;
    assert_int_equal(cfg_get_strlist(&d, root, "l", &lst, &nl), IM_OK);
    assert_int_equal(nl, 2);
    cfg_strv_free(lst, nl);
    assert_null(cfg_get(root, "null_v"));
    assert_non_null(cfg_get_raw(root, "null_v"));
    assert_non_null(cfg_get(root, "q")); /* quoted: a string, not null */
    char *s = NULL;
    assert_int_equal(cfg_get_str(&d, root, "m", &s), IM_EPARSE);
    assert_string_equal(e.msg, "m must be a string, not a mapping");
    assert_int_equal(e.line, 9);
    assert_int_equal(e.col, 4);
    cfg_node_free(root);
    /* syntax errors and the node cap */
    assert_int_equal(cfg_parse_yaml("a: [1\n", 6, "s.yml", &root, &e), IM_EPARSE);
    assert_string_equal(e.file, "s.yml");
    assert_non_null(strstr(e.msg, "yaml: "));
    im_buf_t bomb;
    im_buf_init(&bomb, 0);
    (void)im_buf_puts(&bomb, "a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (int k = 0; k < 7; k++)
        (void)im_buf_printf(&bomb, "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n",
                            'b' + k, 'b' + k, 'a' + k, 'a' + k, 'a' + k, 'a' + k, 'a' + k, 'a' + k,
                            'a' + k, 'a' + k, 'a' + k, 'a' + k);
    assert_int_equal(cfg_parse_yaml(bomb.data, bomb.len, "bomb.yml", &root, &e), IM_ELIMIT);
    assert_non_null(strstr(e.msg, "too large or too deeply nested"));
    im_buf_free(&bomb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_keys_everywhere),
        cmocka_unit_test(test_duplicates_and_values),
        cmocka_unit_test(test_remote_write_defaults_and_dump),
        cmocka_unit_test(test_getters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
