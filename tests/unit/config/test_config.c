/* test_config.c — unit tests for the configuration loader and relabelling
 * (src/scrape/config.c, relabel.c): defaults, strict keys with positions, every
 * relabel action against Prometheus' documented semantics, hashmod buckets. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

#include "config/config.h"

static scrape_config_t *load_ok(const char *y)
{
    scrape_config_t *c = NULL;
    im_err_t e;
    im_err_clear(&e);
    im_rc rc = scrape_config_parse(y, strlen(y), "t.yml", &c, &e);
    if (rc != IM_OK) fprintf(stderr, "unexpected error: %s\n", e.msg);
    assert_int_equal(rc, IM_OK);
    return c;
}

static void load_err(const char *y, int line, int col, const char *needle)
{
    scrape_config_t *c = NULL;
    im_err_t e;
    im_err_clear(&e);
    assert_int_not_equal(scrape_config_parse(y, strlen(y), "t.yml", &c, &e), IM_OK);
    assert_null(c);
    if (!strstr(e.msg, needle)) fprintf(stderr, "message: %s\n", e.msg);
    assert_non_null(strstr(e.msg, needle));
    if (line && (e.line != line || e.col != col))
        fprintf(stderr, "%s: at %d:%d\n", e.msg, e.line, e.col);
    if (line) assert_int_equal(e.line, line);
    if (col) assert_int_equal(e.col, col);
}

static void test_defaults(void **state)
{
    (void)state;
    scrape_config_t *c = load_ok("scrape_configs:\n  - job_name: a\n    static_configs:\n"
                                 "      - targets: [x:1, 'y:2']\n        labels: {env: prod}\n");
    assert_int_equal(c->scrape_interval_ms, 60000);
    assert_int_equal(c->scrape_timeout_ms, 10000);
    assert_int_equal(c->evaluation_interval_ms, 60000);
    assert_int_equal(c->njobs, 1);
    scrape_job_cfg_t *j = &c->jobs[0];
    assert_string_equal(j->metrics_path, "/metrics");
    assert_string_equal(j->scheme, "http");
    assert_true(j->honor_timestamps);
    assert_false(j->honor_labels);
    assert_int_equal(j->interval_ms, 60000);
    assert_int_equal(j->timeout_ms, 10000);
    assert_int_equal(j->static_groups[0].ntargets, 2);
    assert_string_equal(im_labels_get(j->static_groups[0].labels, "env")->s, "prod");
    scrape_config_free(c);

    c = load_ok("global: {scrape_interval: 5s}\nscrape_configs: [{job_name: a}]\n");
    assert_int_equal(c->jobs[0].timeout_ms, 5000); /* capped to the interval */
    scrape_config_free(c);

    c = load_ok(scrape_default_config_yaml);
    assert_int_equal(c->njobs, 2);
    assert_int_equal(c->jobs[0].interval_ms, 15000);
    assert_string_equal(c->storage_path, "./data");
    scrape_config_free(c);

    c = load_ok("");
    assert_int_equal(c->njobs, 0);
    scrape_config_free(c);
}

static void test_errors(void **state)
{
    (void)state;
    load_err("global:\n  scrape_intervall: 5s\n", 2, 3, "field scrape_intervall not found");
    load_err("global:\n  scrape_interval: 5x\n", 2, 20, "not a valid duration");
    load_err("scrape_configs:\n  - job_name: a\n  - job_name: a\n", 3, 5,
             "multiple scrape configs");
    load_err("scrape_configs:\n  - job_name: a\n    scrape_interval: 5s\n    scrape_timeout: 10s\n",
             2, 5, "scrape timeout greater than scrape interval");
    load_err("scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: foo\n", 4, 17,
             "unknown relabel action");
    load_err("scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - action: hashmod\n"
             "        target_label: x\n",
             4, 9, "non-zero modulus");
    load_err("scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - source_labels: [a]\n",
             4, 9, "requires 'target_label'");
    load_err("scrape_configs:\n  - job_name: a\n    relabel_configs:\n      - regex: '('\n"
             "        action: labeldrop\n",
             4, 9, "error parsing regexp");
    load_err("scrape_configs:\n  - job_name: a\n    static_configs:\n      - labels: {1x: a}\n", 4,
             18, "not a valid label name");
    load_err("global: {a: 1, a: 2}\n", 0, 0, "field a not found");
    load_err("global:\n  evaluation_interval: 1m\n  evaluation_interval: 2m\n", 3, 3,
             "already defined");
    load_err("scrape_configs:\n  - job_name: a\n    scheme: ftp\n", 3, 13,
             "unknown scrape config scheme");
    load_err("scrape_configs:\n  - job_name: a\n    body_size_limit: 10XB\n", 3, 22,
             "invalid size");
    load_err("a: [\n", 0, 0, "yaml:");
    load_err("storage:\n  wal:\n    fsync: sometimes\n", 3, 12, "fsync");
    load_err(
        "scrape_configs:\n  - job_name: a\n    basic_auth: {password: x}\n    bearer_token: y\n", 2,
        5, "at most one");
}

static void test_full(void **state)
{
    (void)state;
    scrape_config_t *c = load_ok(
        "global:\n  scrape_interval: 15s\n  external_labels: {cluster: c1}\n"
        "rule_files: [a.yml, b.yml]\n"
        "alerting:\n  alertmanagers:\n    - static_configs: [{targets: ['am:9093']}]\n"
        "remote_write:\n  - url: http://x/api/v1/write\n"
        "storage:\n  path: /tmp/d\n  retention: {time: 30d, size: 10GB}\n  wal: {fsync: always}\n"
        "  frame_cache_size: 64MiB\n"
        "llm:\n  ttft_p95_target_seconds: 1.5\n  vllm_names: old\n"
        "scrape_configs:\n"
        "  - job_name: j\n    params: {module: [a, b]}\n    honor_labels: true\n"
        "    basic_auth: {username: u, password: secretpw}\n"
        "    tls_config: {insecure_skip_verify: true}\n"
        "    sample_limit: 100\n    body_size_limit: 1MB\n"
        "    file_sd_configs: [{files: ['/tmp/*.json'], refresh_interval: 1m}]\n"
        "    metric_relabel_configs:\n      - source_labels: [__name__]\n        regex: go_.*\n"
        "        action: drop\n");
    assert_string_equal(im_labels_get(c->external_labels, "cluster")->s, "c1");
    assert_int_equal(c->nrule_files, 2);
    assert_non_null(c->alerting);
    assert_non_null(c->remote_write);
    assert_true(c->llm.present);
    assert_true(c->llm.ttft_p95_target_seconds == 1.5);
    assert_int_equal(c->llm.vllm_names, CFG_LLM_NAMES_OLD);
    assert_int_equal(c->nremote_write, 1);
    assert_int_equal(c->remote_write[0].queue.capacity, 2500);
    assert_int_equal(c->retention_ms, 30 * 86400000LL);
    assert_int_equal(c->retention_bytes, 10LL << 30);
    assert_true(c->storage_fsync_set);
    assert_int_equal(c->storage_fsync, SCRAPE_FSYNC_ALWAYS);
    assert_true(c->storage_frame_cache_set);
    assert_int_equal(c->storage_frame_cache_bytes, 64LL << 20);
    scrape_job_cfg_t *j = &c->jobs[0];
    assert_int_equal(j->nparams, 2);
    assert_int_equal(j->body_size_limit, 1 << 20);
    assert_int_equal(j->sample_limit, 100);
    assert_int_equal(j->file_sd[0].refresh_ms, 60000);
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(scrape_config_dump(c, &b), IM_OK);
    if (!strstr(b.data, "password: <secret>")) fprintf(stderr, "%s", b.data);
    assert_non_null(strstr(b.data, "password: <secret>"));
    assert_null(strstr(b.data, "secretpw"));
    assert_non_null(strstr(b.data, "job_name: j"));
    /* the dump parses back */
    scrape_config_t *c2 = load_ok(b.data);
    assert_int_equal(c2->njobs, 1);
    scrape_config_free(c2);
    im_buf_free(&b);
    scrape_config_free(c);
}

/* Every secret of the config is hidden in the dump: <secret> for passwords,
 * credentials and bearer tokens (scrape jobs, alertmanagers, remote write),
 * xxxxx for the password in a URL's userinfo (as Prometheus 2.42 prints it). */
static void test_dump_secrets(void **state)
{
    (void)state;
    scrape_config_t *c = load_ok(
        "alerting:\n  alertmanagers:\n    - basic_auth: {username: am, password: s3cr1t-am}\n"
        "      static_configs: [{targets: ['am:9093']}]\n"
        "    - authorization: {credentials: s3cr1t-amtok}\n"
        "      static_configs: [{targets: ['am:9093']}]\n"
        "remote_write:\n  - url: http://rwuser:s3cr1t-url@rw.example:9201/api/v1/write?x=1\n"
        "    basic_auth: {username: x, password: s3cr1t-rw}\n"
        "    proxy_url: http://pu:s3cr1t-proxy@proxy:3128\n"
        "  - url: http://onlyuser@rw2.example/w\n"
        "    authorization: {credentials: s3cr1t-rwtok}\n"
        "  - url: http://rw3.example/a@b:c\n    bearer_token: s3cr1t-bearer\n"
        "scrape_configs:\n"
        "  - job_name: a\n    basic_auth: {username: u, password: s3cr1t-a}\n"
        "    proxy_url: http://u2:s3cr1t-jproxy@proxy:3128/\n"
        "  - job_name: b\n    authorization: {credentials: s3cr1t-b}\n"
        "  - job_name: c\n    bearer_token: s3cr1t-c\n");
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(scrape_config_dump(c, &b), IM_OK);
    if (strstr(b.data, "s3cr1t")) fprintf(stderr, "%s", b.data);
    assert_null(strstr(b.data, "s3cr1t"));
    assert_non_null(strstr(b.data, "url: http://rwuser:xxxxx@rw.example:9201/api/v1/write?x=1\n"));
    assert_non_null(strstr(b.data, "proxy_url: http://pu:xxxxx@proxy:3128\n"));
    assert_non_null(strstr(b.data, "proxy_url: http://u2:xxxxx@proxy:3128/\n"));
    assert_non_null(strstr(b.data, "url: http://onlyuser@rw2.example/w\n"));
    assert_non_null(strstr(b.data, "url: http://rw3.example/a@b:c\n")); /* '@' in the path */
    assert_non_null(strstr(b.data, "username: u\n"));
    assert_non_null(strstr(b.data, "password: <secret>"));
    assert_non_null(strstr(b.data, "credentials: <secret>"));
    im_buf_free(&b);
    scrape_config_free(c);
}

/* ---- Relabelling ---- */

static scrape_config_t *rules_cfg(const char *rules)
{
    char y[4096];
    snprintf(y, sizeof y, "scrape_configs:\n  - job_name: a\n    relabel_configs:\n%s", rules);
    return load_ok(y);
}

/* Applies rules to labels given as "a=1,b=2"; returns "a=1,b=2" sorted or "DROP". */
static char *apply(const char *rules, const char *in)
{
    static char out[1024];
    scrape_config_t *c = rules_cfg(rules);
    im_labels_builder_t lb;
    im_lb_init(&lb);
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", in);
    for (char *p = tmp; *p;) {
        char *e = strchr(p, ',');
        if (e) *e = 0;
        char *eq = strchr(p, '=');
        im_lb_set(&lb, p, (size_t)(eq - p), eq + 1, strlen(eq + 1));
        p = e ? e + 1 : p + strlen(p);
    }
    bool keep = labels_relabel_process(c->jobs[0].relabel, c->jobs[0].nrelabel, &lb);
    out[0] = 0;
    if (!keep) {
        snprintf(out, sizeof out, "DROP");
    } else {
        size_t o = 0;
        for (uint32_t i = 0; i < lb.n; i++)
            o += (size_t)snprintf(out + o, sizeof out - o, "%s%s=%s", i ? "," : "", lb.l[i].name->s,
                                  lb.l[i].value->s);
    }
    im_lb_free(&lb);
    scrape_config_free(c);
    return out;
}

static void test_relabel(void **state)
{
    (void)state;
    /* replace with defaults: copies the joined value */
    assert_string_equal(
        apply("      - source_labels: [a, b]\n        target_label: c\n", "a=1,b=2"),
        "a=1,b=2,c=1;2");
    /* no match: nothing happens */
    assert_string_equal(apply("      - source_labels: [a]\n        regex: x(.*)\n"
                              "        target_label: c\n",
                              "a=1"),
                        "a=1");
    /* anchored regex, capture groups, named groups, $$ */
    assert_string_equal(apply("      - source_labels: [a]\n        regex: 'h(?P<n>o+)st:(\\d+)'\n"
                              "        target_label: c\n        replacement: '${n}-$2-$$'\n",
                              "a=hoost:80"),
                        "a=hoost:80,c=oo-80-$");
    /* $1x is the (empty) group named 1x as in Go */
    assert_string_equal(apply("      - source_labels: [a]\n        regex: (.*)\n"
                              "        target_label: c\n        replacement: $1x\n",
                              "a=v,c=old"),
                        "a=v");
    /* target label from a template; invalid result deletes */
    assert_string_equal(apply("      - source_labels: [a]\n        regex: (.*)\n"
                              "        target_label: 'l_$1'\n        replacement: yes\n",
                              "a=v"),
                        "a=v,l_v=yes");
    assert_string_equal(apply("      - source_labels: [a]\n        regex: (.*)\n"
                              "        target_label: '$1'\n",
                              "a=1bad"),
                        "a=1bad");
    /* empty replacement deletes the target */
    assert_string_equal(apply("      - target_label: b\n        replacement: ''\n", "a=1,b=2"),
                        "a=1");
    /* keep / drop */
    assert_string_equal(
        apply("      - source_labels: [a]\n        regex: '1|2'\n        action: keep\n", "a=1"),
        "a=1");
    assert_string_equal(
        apply("      - source_labels: [a]\n        regex: '1|2'\n        action: keep\n", "a=11"),
        "DROP");
    assert_string_equal(
        apply("      - source_labels: [a]\n        regex: '1.*'\n        action: drop\n", "a=11"),
        "DROP");
    /* keep with a missing label matches the empty string */
    assert_string_equal(
        apply("      - source_labels: [zz]\n        regex: ''\n        action: keep\n", "a=1"),
        "a=1");
    /* keepequal / dropequal */
    assert_string_equal(apply("      - source_labels: [a]\n        target_label: b\n"
                              "        action: keepequal\n",
                              "a=1,b=1"),
                        "a=1,b=1");
    assert_string_equal(apply("      - source_labels: [a]\n        target_label: b\n"
                              "        action: keepequal\n",
                              "a=1,b=2"),
                        "DROP");
    assert_string_equal(apply("      - source_labels: [a]\n        target_label: b\n"
                              "        action: dropequal\n",
                              "a=1,b=1"),
                        "DROP");
    /* hashmod: md5, last 8 bytes big-endian */
    assert_string_equal(apply("      - source_labels: [a]\n        target_label: h\n"
                              "        modulus: 1000\n        action: hashmod\n",
                              "a=foo"),
                        "a=foo,h=696");
    assert_string_equal(apply("      - source_labels: [__address__]\n        target_label: h\n"
                              "        modulus: 1000\n        action: hashmod\n",
                              "__address__=localhost:9100"),
                        "__address__=localhost:9100,h=751");
    assert_string_equal(apply("      - source_labels: [a, b]\n        target_label: h\n"
                              "        modulus: 7\n        action: hashmod\n",
                              "a=a,b=b"),
                        "a=a,b=b,h=2");
    /* labelmap */
    assert_string_equal(apply("      - regex: __meta_(.+)\n        action: labelmap\n",
                              "__meta_x=1,__meta_y=2,z=3"),
                        "__meta_x=1,__meta_y=2,x=1,y=2,z=3");
    assert_string_equal(apply("      - regex: (a)\n        replacement: ${1}_new\n"
                              "        action: labelmap\n",
                              "a=1"),
                        "a=1,a_new=1");
    /* labeldrop / labelkeep */
    assert_string_equal(apply("      - regex: 'b|c'\n        action: labeldrop\n", "a=1,b=2,c=3"),
                        "a=1");
    assert_string_equal(apply("      - regex: 'b|c'\n        action: labelkeep\n", "a=1,b=2,c=3"),
                        "b=2,c=3");
    /* lowercase / uppercase */
    assert_string_equal(apply("      - source_labels: [a]\n        target_label: l\n"
                              "        action: lowercase\n",
                              "a=AbC"),
                        "a=AbC,l=abc");
    assert_string_equal(apply("      - source_labels: [a]\n        target_label: a\n"
                              "        action: uppercase\n",
                              "a=AbC"),
                        "a=ABC");
    /* rules run in order */
    assert_string_equal(
        apply("      - source_labels: [a]\n        target_label: b\n"
              "      - source_labels: [b]\n        regex: x\n        action: keep\n",
              "a=x"),
        "a=x,b=x");
    /* custom separator */
    assert_string_equal(apply("      - source_labels: [a, b]\n        separator: '-'\n"
                              "        target_label: c\n",
                              "a=1"),
                        "a=1,c=1-");
}

static void test_bytes(void **state)
{
    (void)state;
    int64_t v;
    assert_int_equal(cfg_parse_bytes("0", &v), IM_OK);
    assert_int_equal(v, 0);
    assert_int_equal(cfg_parse_bytes("512KB", &v), IM_OK);
    assert_int_equal(v, 512 * 1024);
    assert_int_equal(cfg_parse_bytes("3MiB", &v), IM_OK);
    assert_int_equal(v, 3 << 20);
    assert_int_not_equal(cfg_parse_bytes("12", &v), IM_OK);
    assert_int_not_equal(cfg_parse_bytes("-1MB", &v), IM_OK);
    assert_int_not_equal(cfg_parse_bytes("1XB", &v), IM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_full),     cmocka_unit_test(test_relabel),
        cmocka_unit_test(test_bytes),    cmocka_unit_test(test_dump_secrets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
