/* test_http.c — unit tests for src/http: JSON timestamps (strings: the
 * labels tests), result serialisation, the remote-write decoder (hand-built
 * protobuf + snappy), and the API served by a real server on 127.0.0.1 over a
 * memory-only store: query / query_range (GET and form POST), series, labels,
 * label values, errors with Prometheus' errorType and status, gzip, lifecycle
 * and remote-write switches, basic auth with a bcrypt hash. */
#include "util/base.h"

#include <curl/curl.h>
#include <math.h>
#include <setjmp.h>
#include <snappy-c.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "http/server.h"
#include "promql/promql.h"
#include "tsdb/tsdb.h"
#include "util/timeutil.h"

#include "http_test.h"

static void test_json(void **state)
{
    (void)state;
    /* JSON strings (im_json_string, IM_JSON_GO): tests/unit/labels */
    im_buf_t b;
    im_buf_init(&b, 0);
    http_json_timestamp(&b, 1700000000123);
    (void)im_buf_putc(&b, ' ');
    http_json_timestamp(&b, 1700000000000);
    (void)im_buf_putc(&b, ' ');
    http_json_timestamp(&b, 1500);
    (void)im_buf_putc(&b, ' ');
    http_json_timestamp(&b, 5);
    assert_string_equal(b.data, "1700000000.123 1700000000 1.500 0.005");
    im_buf_free(&b);
}

/* ---- remote write 1.0 and the client (http_test.h) ---- */
static void pb_series(im_buf_t *req, const char *name, const char *job, int64_t t, double v)
{
    const char *pairs[] = {"__name__", name, "job", job};
    ht_pb_series1(req, pairs, 2, t, v);
}
static char *snap(const im_buf_t *b, size_t *n)
{
    return ht_snappy(b->data, b->len, n);
}

typedef ht_resp_t resp_t;
static uint16_t g_port;
static void req(resp_t *r, const char *method, const char *path, const char *body, size_t blen,
                const char *ctype, const char *userpw, bool gzip)
{
    ht_opts_t o = {method, ctype, NULL, userpw, gzip};
    assert_int_not_equal(ht_request(g_port, r, path, body, blen, &o), 0);
}
#define GET(r, p) req(r, NULL, p, NULL, 0, NULL, NULL, false)

/* GET path; the body must be exactly want. */
static void get_expect(const char *path, const char *want)
{
    resp_t r;
    GET(&r, path);
    assert_string_equal(r.body.data, want);
    im_buf_free(&r.body);
}

static void test_api(void **state)
{
    (void)state;
    http_server_opts_t o;
    memset(&o, 0, sizeof o);
    o.enable_remote_write = true;
    o.remote_write_max_bytes = 4096;
    const char *flags[] = {"web.listen-address", "127.0.0.1:0", NULL};
    o.flags = flags;
    ht_server_t h;
    ht_start(&h, &o);
    http_server_t *s = h.s;
    g_port = h.port;

    /* remote write: 3 series at t=1000..3000 s */
    im_buf_t pb;
    im_buf_init(&pb, 0);
    pb_series(&pb, "m", "a", 1000000, 1);
    pb_series(&pb, "m", "b", 1000000, 2);
    pb_series(&pb, "m", "a", 2000000, 3);
    pb_series(&pb, "other", "a", 2000000, 0.5);
    size_t zn;
    char *z = snap(&pb, &zn);
    resp_t r;
    req(&r, "POST", "/api/v1/write", z, zn, "application/x-protobuf", NULL, false);
    assert_int_equal(r.code, 204);
    im_buf_free(&r.body);
    im_free(z);
    /* the newest samples again: equal duplicates are accepted; a different value is not */
    im_buf_reset(&pb);
    pb_series(&pb, "m", "a", 2000000, 3);
    pb_series(&pb, "other", "a", 2000000, 0.5);
    z = snap(&pb, &zn);
    req(&r, "POST", "/api/v1/write", z, zn, "application/x-protobuf", NULL, false);
    assert_int_equal(r.code, 204);
    im_buf_free(&r.body);
    im_free(z);
    im_buf_reset(&pb);
    pb_series(&pb, "other", "a", 2000000, 0.75);
    z = snap(&pb, &zn);
    req(&r, "POST", "/api/v1/write", z, zn, "application/x-protobuf", NULL, false);
    assert_int_equal(r.code, 400);
    assert_non_null(strstr(r.body.data, "duplicate sample"));
    im_buf_free(&r.body);
    im_free(z);
    /* out of order: 400, nothing of the request stored */
    im_buf_reset(&pb);
    pb_series(&pb, "m", "c", 5000000, 9);
    pb_series(&pb, "m", "a", 500000, 1);
    z = snap(&pb, &zn);
    req(&r, "POST", "/api/v1/write", z, zn, NULL, NULL, false);
    assert_int_equal(r.code, 400);
    assert_non_null(strstr(r.body.data, "out of order"));
    im_buf_free(&r.body);
    im_free(z);
    /* malformed */
    req(&r, "POST", "/api/v1/write", "garbage!", 8, NULL, NULL, false);
    assert_int_equal(r.code, 400);
    im_buf_free(&r.body);
    im_buf_free(&pb);
    /* too large */
    char big[5000];
    memset(big, 'x', sizeof big);
    req(&r, "POST", "/api/v1/write", big, sizeof big, NULL, NULL, false);
    assert_int_equal(r.code, 413);
    im_buf_free(&r.body);

    GET(&r, "/api/v1/query?query=m&time=1200");
    assert_int_equal(r.code, 200);
    assert_string_equal(
        r.body.data, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                     "{\"metric\":{\"__name__\":\"m\",\"job\":\"a\"},\"value\":[1200,\"1\"]},"
                     "{\"metric\":{\"__name__\":\"m\",\"job\":\"b\"},\"value\":[1200,\"2\"]}]}}");
    im_buf_free(&r.body);
    GET(&r, "/api/v1/query?query=m%7Bjob%3D%22c%22%7D&time=5000");
    assert_non_null(strstr(r.body.data, "\"result\":[]"));
    im_buf_free(&r.body);
    get_expect("/api/v1/query?query=1%2B1&time=1970-01-01T00:16:40.5Z",
               "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\","
               "\"result\":[1000.5,\"2\"]}}");
    req(&r, "POST", "/api/v1/query_range",
        "query=m%7Bjob%3D%22a%22%7D&start=1000&end=2000&step=500", 55,
        "application/x-www-form-urlencoded", NULL, false);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.body.data,
                        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":["
                        "{\"metric\":{\"__name__\":\"m\",\"job\":\"a\"},\"values\":[[1000,\"1\"],["
                        "2000,\"3\"]]}]}}");
    im_buf_free(&r.body);
    req(&r, NULL, "/api/v1/query_range?query=m&start=1000&end=2000&step=1s", NULL, 0, NULL, NULL,
        true);
    assert_int_equal(r.code, 200);
    assert_non_null(strstr(r.enc, "gzip"));
    assert_non_null(strstr(r.body.data, "\"resultType\":\"matrix\""));
    im_buf_free(&r.body);
    /* errors */
    GET(&r, "/api/v1/query?query=sum(");
    assert_int_equal(r.code, 400);
    assert_non_null(strstr(r.body.data, "\"errorType\":\"bad_data\",\"error\":\"invalid parameter "
                                        "\\\"query\\\": 1:5: parse error:"));
    im_buf_free(&r.body);
    GET(&r, "/api/v1/query?query=1&time=abc");
    assert_int_equal(r.code, 400);
    assert_string_equal(r.body.data, "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":"
                                     "\"invalid parameter \\\"time\\\": Invalid time value for "
                                     "'time': cannot parse \\\"abc\\\" to "
                                     "a valid timestamp\"}");
    im_buf_free(&r.body);
    GET(&r, "/api/v1/query_range?query=1&start=10&end=5&step=1");
    assert_non_null(strstr(r.body.data, "end timestamp must not be before start time"));
    im_buf_free(&r.body);
    GET(&r, "/api/v1/query_range?query=1&start=0&end=100000&step=1");
    assert_non_null(strstr(r.body.data, "exceeded maximum resolution of 11,000 points"));
    im_buf_free(&r.body);
    GET(&r, "/api/v1/query_range?query=1&start=0&end=10&step=0");
    assert_non_null(strstr(r.body.data, "zero or negative query resolution step"));
    im_buf_free(&r.body);
    GET(&r, "/api/v1/query?query=m%2Bon(job)%20group_left%20m&time=2000");
    assert_int_equal(r.code, 200); /* one-to-one per job */
    im_buf_free(&r.body);
    /* series, labels, values */
    get_expect("/api/v1/series?match[]=m&match[]=other",
               "{\"status\":\"success\",\"data\":[{\"__name__\":\"m\",\"job\":\"a\"},"
               "{\"__name__\":\"m\",\"job\":\"b\"},{\"__name__\":\"other\","
               "\"job\":\"a\"}]}");
    GET(&r, "/api/v1/series");
    assert_int_equal(r.code, 400);
    assert_non_null(strstr(r.body.data, "no match[] parameter provided"));
    im_buf_free(&r.body);
    get_expect("/api/v1/labels", "{\"status\":\"success\",\"data\":[\"__name__\",\"job\"]}");
    get_expect("/api/v1/label/job/values?match[]=other",
               "{\"status\":\"success\",\"data\":[\"a\"]}");
    get_expect("/api/v1/label/__name__/values",
               "{\"status\":\"success\",\"data\":[\"m\",\"other\"]}");
    /* rules/alerts empty, targets empty, status */
    get_expect("/api/v1/rules", "{\"status\":\"success\",\"data\":{\"groups\":[]}}");
    get_expect("/api/v1/alerts", "{\"status\":\"success\",\"data\":{\"alerts\":[]}}");
    get_expect("/api/v1/targets", "{\"status\":\"success\",\"data\":{\"activeTargets\":[],"
                                  "\"droppedTargets\":[]}}");
    get_expect("/api/v1/status/flags",
               "{\"status\":\"success\",\"data\":{\"web.listen-address\":\"127.0.0.1:0\"}}");
    GET(&r, "/api/v1/status/tsdb");
    assert_non_null(strstr(r.body.data, "\"headStats\":{\"numSeries\":"));
    assert_non_null(strstr(r.body.data, "{\"name\":\"m\",\"value\":"));
    im_buf_free(&r.body);
    scrape_config_t *c = NULL;
    const char *y = "scrape_configs:\n  - job_name: j\n    basic_auth: {username: u, password: "
                    "hunter2}\n";
    assert_int_equal(scrape_config_parse(y, strlen(y), NULL, &c, NULL), IM_OK);
    http_server_set_config(s, c);
    scrape_config_free(c);
    GET(&r, "/api/v1/status/config");
    assert_non_null(strstr(r.body.data, "password: \\u003csecret\\u003e"));
    assert_null(strstr(r.body.data, "hunter2"));
    im_buf_free(&r.body);
    /* lifecycle off, health, readiness, metrics */
    req(&r, "POST", "/-/reload", "", 0, NULL, NULL, false);
    assert_int_equal(r.code, 403);
    im_buf_free(&r.body);
    GET(&r, "/-/healthy");
    assert_int_equal(r.code, 200);
    im_buf_free(&r.body);
    GET(&r, "/-/ready");
    assert_int_equal(r.code, 503);
    im_buf_free(&r.body);
    http_server_set_ready(s, true);
    GET(&r, "/-/ready");
    assert_int_equal(r.code, 200);
    im_buf_free(&r.body);
    GET(&r, "/metrics");
    assert_non_null(strstr(r.body.data,
                           "infermon_http_requests_total{code=\"200\",handler=\"/api/v1/query\"}"));
    assert_non_null(strstr(r.body.data, "infermon_remote_write_samples_received_total 6"));
    assert_non_null(strstr(r.body.data, "infermon_memory_bytes{subsystem="));
    im_buf_free(&r.body);
    GET(&r, "/nope");
    assert_int_equal(r.code, 404);
    im_buf_free(&r.body);
    http_server_stop(s);

    /* remote write switched off; basic auth with bcrypt */
    FILE *f = fopen("test_http_web.yml", "w");
    assert_non_null(f);
    /* bcrypt("secret", cost 4) */
    fputs("basic_auth_users:\n  alice: "
          "$2b$04$APE9ZAZGWTOVirXEp6L9DeEHJoMpCRvlXrkIOMMdTNPREM2w1PdYG\n",
          f);
    fclose(f);
    o.enable_remote_write = false;
    o.web_config_file = "test_http_web.yml";
    assert_int_equal(http_server_start(&o, &s, NULL), IM_OK);
    g_port = http_server_port(s);
    req(&r, NULL, "/api/v1/labels", NULL, 0, NULL, NULL, false);
    assert_int_equal(r.code, 401);
    im_buf_free(&r.body);
    req(&r, NULL, "/api/v1/labels", NULL, 0, NULL, "alice:wrong", false);
    assert_int_equal(r.code, 401);
    im_buf_free(&r.body);
    req(&r, NULL, "/api/v1/labels", NULL, 0, NULL, "alice:secret", false);
    assert_int_equal(r.code, 200);
    im_buf_free(&r.body);
    req(&r, "POST", "/api/v1/write", "x", 1, NULL, "alice:secret", false);
    assert_int_equal(r.code, 404);
    im_buf_free(&r.body);
    http_server_stop(s);
    remove("test_http_web.yml");
    promql_engine_free(h.eng);
    tsdb_close(h.db);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_api),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
