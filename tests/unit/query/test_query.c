/* test_query.c — the query backend (query/query.h): the local backend over a
 * memory-only TSDB, and the remote backend over infermon's own HTTP API on
 * 127.0.0.1 (a real Prometheus-compatible server) giving the same typed
 * results, the store's JSON as it came, limit= applied, errors that name the
 * backend (the store's own error, nobody listening, an answer over the size
 * cap, a backend in relay mode whose store is down), and the backend config
 * file (headers, tenant, HTTP client keys; unknown keys and an Authorization
 * header refused). */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "query/query.h"

#include "../http/http_test.h"

static ht_server_t g_srv;

/* m{job="a",i="1"} and m{job="b",i="2"} at 10, 20 s; n{job="a"} at 10 s. */
static void fill(tsdb_t *db)
{
    tsdb_appender_t *a = tsdb_appender(db);
    const im_labels_t *l1 = im_labels_from_strs("__name__", "m", "i", "1", "job", "a", NULL);
    const im_labels_t *l2 = im_labels_from_strs("__name__", "m", "i", "2", "job", "b", NULL);
    const im_labels_t *l3 = im_labels_from_strs("__name__", "n", "job", "a", NULL);
    for (int t = 10; t <= 20; t += 10) {
        assert_int_equal(tsdb_appender_add(a, 0, l1, t * 1000, t, NULL), IM_OK);
        assert_int_equal(tsdb_appender_add(a, 0, l2, t * 1000, 2 * t, NULL), IM_OK);
    }
    assert_int_equal(tsdb_appender_add(a, 0, l3, 10000, 0.5, NULL), IM_OK);
    assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    im_labels_unref(l1);
    im_labels_unref(l2);
    im_labels_unref(l3);
}

static query_backend_t *remote(uint16_t port, int64_t max_bytes)
{
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", (unsigned)port);
    query_remote_opts_t o = {.url = url, .timeout_ms = 5000, .max_bytes = max_bytes};
    cfg_http_client_init(&o.http);
    query_backend_t *b = NULL;
    assert_int_equal(query_remote_new(&o, &b, NULL), IM_OK);
    cfg_http_client_free(&o.http);
    return b;
}

/* The same request over both backends gives the same typed answer. */
static void same(query_backend_t *l, query_backend_t *r, const query_req_t *q, size_t want_n)
{
    query_answer_t a, b;
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(query_backend_do(l, q, &a, &err), IM_OK);
    im_rc rc = query_backend_do(r, q, &b, &err);
    if (rc != IM_OK) fprintf(stderr, "remote: %s\n", err.msg);
    assert_int_equal(rc, IM_OK);
    assert_int_equal(a.http_status, 200);
    assert_int_equal(b.http_status, 200);
    switch (q->op) {
    case QUERY_INSTANT:
    case QUERY_RANGE:
        assert_int_equal(a.result.type, b.result.type);
        assert_int_equal(a.result.nseries, want_n);
        assert_int_equal(b.result.nseries, want_n);
        for (size_t i = 0; i < want_n; i++) {
            assert_true(im_labels_equal(a.result.series[i].labels, b.result.series[i].labels));
            assert_int_equal(a.result.series[i].npoints, b.result.series[i].npoints);
            for (size_t k = 0; k < a.result.series[i].npoints; k++) {
                assert_int_equal(a.result.series[i].points[k].t_ms,
                                 b.result.series[i].points[k].t_ms);
                assert_true(a.result.series[i].points[k].v == b.result.series[i].points[k].v);
            }
        }
        break;
    case QUERY_SERIES:
        assert_int_equal(a.nseries, want_n);
        assert_int_equal(b.nseries, want_n);
        for (size_t i = 0; i < want_n; i++) assert_true(im_labels_equal(a.series[i], b.series[i]));
        break;
    default:
        assert_int_equal(a.nstrs, want_n);
        assert_int_equal(b.nstrs, want_n);
        for (size_t i = 0; i < want_n; i++) assert_string_equal(a.strs[i], b.strs[i]);
    }
    query_answer_free(&a);
    query_answer_free(&b);
}

static void test_local_and_remote_agree(void **state)
{
    (void)state;
    query_backend_t *l = query_local_new(tsdb_storage(g_srv.db), g_srv.eng);
    query_backend_t *r = remote(g_srv.port, 0);
    assert_string_equal(query_backend_describe(l), "local");
    assert_non_null(strstr(query_backend_describe(r), "http://127.0.0.1:"));
    query_req_t q = {.op = QUERY_INSTANT, .expr = "m", .time_ms = 20000};
    same(l, r, &q, 2);
    q = (query_req_t){.op = QUERY_INSTANT, .expr = "sum(m) / 4", .time_ms = 20500};
    same(l, r, &q, 1);
    q = (query_req_t){
        .op = QUERY_RANGE, .expr = "m * 1.5", .start_ms = 5000, .end_ms = 25000, .step_ms = 2500};
    same(l, r, &q, 2);
    const char *mm[] = {"m", "{job=\"a\"}"};
    q = (query_req_t){.op = QUERY_SERIES, .match = mm, .nmatch = 2};
    same(l, r, &q, 3);
    q.limit = 2;
    same(l, r, &q, 2); /* the limit, applied by the client where the server ignores it */
    q = (query_req_t){.op = QUERY_LABELS};
    same(l, r, &q, 3); /* __name__ i job */
    q = (query_req_t){.op = QUERY_LABEL_VALUES, .label = "job", .match = mm, .nmatch = 1};
    same(l, r, &q, 2);
    q = (query_req_t){.op = QUERY_LABEL_VALUES,
                      .label = "__name__",
                      .has_start = true,
                      .has_end = true,
                      .start_ms = 15000,
                      .end_ms = 30000};
    same(l, r, &q, 1); /* n has no sample after 10 s */
    /* the helpers */
    char **vals;
    size_t n;
    assert_int_equal(query_label_values(r, "i", NULL, 0, 0, 0, &vals, &n, NULL), IM_OK);
    assert_int_equal(n, 2);
    assert_string_equal(vals[1], "2");
    query_strs_free(vals, n);
    promql_result_t res;
    assert_int_equal(query_instant(r, "scalar(n)", 10000, &res, NULL), IM_OK);
    assert_int_equal(res.type, PROMQL_RESULT_SCALAR);
    assert_true(res.scalar.v == 0.5);
    promql_result_free(&res);
    query_backend_free(l);
    query_backend_free(r);
}

/* The JSON form is the server's answer byte for byte. */
static void test_relay_json(void **state)
{
    (void)state;
    query_backend_t *r = remote(g_srv.port, 0);
    query_req_t q = {.op = QUERY_INSTANT, .want = QUERY_WANT_JSON, .expr = "m", .time_ms = 20000};
    query_answer_t a;
    assert_int_equal(query_backend_do(r, &q, &a, NULL), IM_OK);
    ht_resp_t resp;
    char path[128];
    snprintf(path, sizeof path, "/api/v1/query?query=m&time=20");
    ht_opts_t o = {0};
    assert_int_not_equal(ht_request(g_srv.port, &resp, path, NULL, 0, &o), 0);
    assert_int_equal(a.json.len, resp.body.len);
    assert_memory_equal(a.json.data, resp.body.data, a.json.len);
    assert_int_equal(a.result.nseries, 0); /* not asked for */
    im_buf_free(&resp.body);
    query_answer_free(&a);
    /* the local backend's JSON is the API's too */
    query_backend_t *l = query_local_new(tsdb_storage(g_srv.db), g_srv.eng);
    q.want = QUERY_WANT_JSON | QUERY_WANT_RESULT;
    assert_int_equal(query_backend_do(l, &q, &a, NULL), IM_OK);
    assert_non_null(
        strstr(a.json.data, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\""));
    assert_int_equal(a.result.nseries, 2);
    query_answer_free(&a);
    query_backend_free(l);
    query_backend_free(r);
}

static void test_errors(void **state)
{
    (void)state;
    query_backend_t *r = remote(g_srv.port, 0);
    query_backend_t *l = query_local_new(tsdb_storage(g_srv.db), g_srv.eng);
    query_answer_t a;
    im_err_t err;
    /* the store's own error keeps its type and status, and names the store */
    query_req_t q = {.op = QUERY_INSTANT, .want = QUERY_WANT_JSON, .expr = "sum(", .time_ms = 1};
    im_err_clear(&err);
    assert_int_equal(query_backend_do(r, &q, &a, &err), IM_EINVAL);
    assert_int_equal(a.http_status, 400);
    assert_string_equal(a.error_type, "bad_data");
    assert_non_null(strstr(err.msg, "backend http://127.0.0.1:"));
    assert_non_null(strstr(a.json.data, "\"errorType\":\"bad_data\""));
    assert_non_null(strstr(a.json.data, "parse error"));
    query_answer_free(&a);
    assert_int_equal(query_backend_do(l, &q, &a, &err), IM_EINVAL);
    assert_int_equal(a.http_status, 400);
    query_answer_free(&a);
    /* series needs a match[]; the local backend has no API_GET */
    q = (query_req_t){.op = QUERY_SERIES};
    assert_int_equal(query_backend_do(r, &q, &a, NULL), IM_EINVAL);
    query_answer_free(&a);
    q = (query_req_t){.op = QUERY_API_GET, .path = "metadata"};
    assert_int_equal(query_backend_do(l, &q, &a, NULL), IM_EUNSUPPORTED);
    query_answer_free(&a);
    assert_int_equal(query_backend_do(r, &q, &a, NULL), IM_OK);
    query_answer_free(&a);
    /* an answer over the cap names the flag to raise */
    query_backend_t *small = remote(g_srv.port, 16);
    q = (query_req_t){.op = QUERY_INSTANT, .expr = "m", .time_ms = 20000};
    im_err_clear(&err);
    assert_int_equal(query_backend_do(small, &q, &a, &err), IM_ELIMIT);
    assert_non_null(strstr(err.msg, "raise --query.backend-max-bytes"));
    query_answer_free(&a);
    query_backend_free(small);
    /* nobody listening */
    ht_server_t h2;
    ht_start(&h2, NULL);
    uint16_t dead = h2.port;
    ht_stop(&h2);
    query_backend_t *down = remote(dead, 0);
    q.want = QUERY_WANT_JSON;
    im_err_clear(&err);
    assert_int_equal(query_backend_do(down, &q, &a, &err), IM_EIO);
    assert_int_equal(a.http_status, 503);
    assert_non_null(strstr(err.msg, "is unavailable"));
    assert_non_null(strstr(a.json.data, "\"errorType\":\"unavailable\""));
    query_answer_free(&a);
    /* a server relaying to that dead store answers the Prometheus error */
    http_server_opts_t o;
    memset(&o, 0, sizeof o);
    o.backend = down;
    ht_start(&h2, &o);
    ht_resp_t resp;
    ht_opts_t ho = {0};
    assert_int_not_equal(ht_request(h2.port, &resp, "/api/v1/labels", NULL, 0, &ho), 0);
    assert_int_equal(resp.code, 503);
    assert_non_null(strstr(resp.body.data, "\"errorType\":\"unavailable\""));
    assert_non_null(strstr(resp.body.data, "backend http://127.0.0.1:"));
    im_buf_free(&resp.body);
    assert_int_not_equal(ht_request(h2.port, &resp, "/api/v1/status/query_backend", NULL, 0, &ho),
                         0);
    assert_int_equal(resp.code, 200);
    assert_non_null(strstr(resp.body.data, "\"type\":\"remote\""));
    im_buf_free(&resp.body);
    ht_stop(&h2);
    query_backend_free(down);
    /* bad URLs */
    query_backend_t *b = NULL;
    query_remote_opts_t ro = {.url = "prom:9090"};
    im_err_clear(&err);
    assert_int_equal(query_remote_new(&ro, &b, &err), IM_EINVAL);
    assert_non_null(strstr(err.msg, "http://"));
    ro.url = "http://prom:9090/api/v1/query?x=1";
    assert_int_equal(query_remote_new(&ro, &b, &err), IM_EINVAL);
    query_backend_free(l);
    query_backend_free(r);
}

static char *write_tmp(const char *text)
{
    char *path = im_strdup("/tmp/im_query_cfg_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_config_file(void **state)
{
    (void)state;
    char *p = write_tmp("basic_auth: {username: u, password: pw}\n"
                        "tls_config: {insecure_skip_verify: true}\n"
                        "headers: {X-Team: infra, X-Other: 'a b'}\n"
                        "tenant: team-a\n");
    query_remote_file_t f;
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(query_remote_config_load(p, &f, &err), IM_OK);
    assert_true(f.http.has_basic);
    assert_string_equal(f.http.basic_user, "u");
    assert_true(f.http.tls.insecure_skip_verify);
    assert_int_equal(f.nheaders, 2);
    assert_string_equal(f.header_names[0], "X-Team");
    assert_string_equal(f.header_values[1], "a b");
    assert_string_equal(f.tenant, "team-a");
    query_remote_file_free(&f);
    unlink(p);
    im_free(p);
    static const char *const bad[][2] = {
        {"urls: [x]\n", "urls"},
        {"headers: {Authorization: x}\n", "basic_auth or authorization"},
        {"headers: {'X A': x}\n", "invalid header"},
        {"basic_auth: {username: u}\nauthorization: {credentials: c}\n", "basic_auth"},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(bad); i++) {
        p = write_tmp(bad[i][0]);
        im_err_clear(&err);
        assert_int_not_equal(query_remote_config_load(p, &f, &err), IM_OK);
        if (!strstr(err.msg, bad[i][1])) fprintf(stderr, "%s -> %s\n", bad[i][0], err.msg);
        assert_non_null(strstr(err.msg, bad[i][1]));
        unlink(p);
        im_free(p);
    }
    im_err_clear(&err);
    assert_int_not_equal(query_remote_config_load("/nonexistent/x.yml", &f, &err), IM_OK);
    assert_non_null(strstr(err.msg, "--query.backend-config"));
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ht_start(&g_srv, NULL);
    fill(g_srv.db);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_and_remote_agree),
        cmocka_unit_test(test_relay_json),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_config_file),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ht_stop(&g_srv);
    curl_global_cleanup();
    return rc;
}
