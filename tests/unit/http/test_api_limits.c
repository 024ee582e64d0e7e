/* test_api_limits.c — the HTTP API against extreme parameters and hostile
 * requests, on a real server on 127.0.0.1 over a memory-only store: every time
 * and duration parameter at and past its range (+-9e15 and +-9e18 seconds,
 * +-Inf, NaN, 1e309, 292y/293y, years 0000 and 9999, sub-millisecond and huge
 * steps, negative timeouts) answers with Prometheus 2.42's status and error
 * text and never aborts the process (start=-9e15&end=9e15&step=1 used to
 * allocate 1.8e19 bytes); the remote-write decoder refuses a label name given
 * twice in a series (whatever its length, value or position) and an empty
 * one; a path with a NUL (%00), a control byte or a dot segment is 404 and
 * never serves another file or handler. */
#include "util/base.h"

#include <curl/curl.h>
#include <setjmp.h>
#include <snappy-c.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "http/server.h"
#include "promql/parser.h"
#include "promql/promql.h"
#include "tsdb/tsdb.h"

#include "http_test.h"

static uint16_t g_port;

typedef ht_resp_t resp_t;

/* path is sent as it is (already percent-encoded). */
static void req(resp_t *r, const char *path, const char *body, size_t blen, const char *ctype)
{
    ht_opts_t o = {NULL, ctype, NULL, NULL, false};
    assert_int_not_equal(ht_request(g_port, r, path, body, blen, &o), 0);
}

/* GET path: status code and a part of the body (NULL: anything). */
static void expect(const char *path, long code, const char *part)
{
    resp_t r;
    req(&r, path, NULL, 0, NULL);
    if (r.code != code || (part && !strstr(r.body.data, part)))
        fprintf(stderr, "GET %s\n  -> %ld %.300s\n  want %ld ...%s...\n", path, r.code, r.body.data,
                code, part ? part : "");
    assert_int_equal(r.code, code);
    if (part) assert_non_null(strstr(r.body.data, part));
    im_buf_free(&r.body);
}

/* A server over a store with one series m{job="a"} at t=1000 s. */
static http_server_t *start(tsdb_t **db, promql_engine_t **eng)
{
    ht_server_t h;
    ht_start(&h, NULL);
    tsdb_appender_t *a = tsdb_appender(h.db);
    const im_labels_t *ls = im_labels_from_strs("__name__", "m", "job", "a", NULL);
    assert_int_equal(tsdb_appender_add(a, 0, ls, 1000000, 1, NULL), IM_OK);
    im_labels_unref(ls);
    assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    *db = h.db;
    *eng = h.eng;
    g_port = h.port;
    return h.s;
}

#define RES   "exceeded maximum resolution of 11,000 points per timeseries"
#define NEG   "zero or negative query resolution step widths are not accepted"
#define OVF   "to a valid duration. It overflows int64"
#define QR    "/api/v1/query_range?query=vector(1)"
#define Q     "/api/v1/query?query=vector(1)"
#define OK200 "\"status\":\"success\""

/* Each case as Prometheus 2.42 answers it (checked against the real binary),
 * except where noted. */
static void test_times(void **state)
{
    (void)state;
    tsdb_t *db;
    promql_engine_t *eng;
    http_server_t *s = start(&db, &eng);
    /* the ends of a range far apart: the span saturates, never wraps */
    expect(QR "&start=-9e15&end=9e15&step=1", 400, RES);
    expect(QR "&start=-9e18&end=9e18&step=1", 400, RES);
    expect(QR "&start=-9223372036854775.808&end=9223372036854775.807&step=1", 400, RES);
    expect(QR "&start=-292273086-05-16T16:47:06Z&end=292277025-08-18T07:12:54.999999999Z&step=1",
           400, RES);
    expect(QR "&start=0000-01-01T00:00:00Z&end=9999-12-31T23:59:59Z&step=1", 400, RES);
    expect(QR "&start=NaN&end=1&step=1", 400, RES);
    /* Prometheus wraps +Inf to its smallest time and answers 200; here +Inf is the
     * largest time, so the range is too wide */
    expect(QR "&start=-Inf&end=Inf&step=1", 400, RES);
    expect(QR "&start=1e309&end=1e309&step=1", 400,
           "invalid parameter \\\"start\\\": cannot parse \\\"1e309\\\" to a valid timestamp");
    expect(QR "&start=0&end=-1e309&step=1", 400, "invalid parameter \\\"end\\\"");
    expect(QR "&start=1&end=0&step=1", 400, "end timestamp must not be before start time");
    expect(QR "&start=9999-12-31T23:59:59Z&end=9999-12-31T23:59:59Z&step=1", 200,
           "[[253402300799,\"1\"]]");
    expect(QR "&start=0000-01-01T00:00:00Z&end=0000-01-01T00:00:00Z&step=1", 200,
           "[[-62167219200,\"1\"]]");
    /* the ends of the time range are +-9223372036854 s (int64 ns, as Prometheus'
     * min and max time) */
    expect(QR "&start=9e12&end=9e12&step=1", 200, "[[9000000000000,\"1\"]]");
    expect(QR "&start=9e15&end=9e15&step=1", 200, "[[9223372036854,\"1\"]]");
    expect(QR "&start=9e18&end=9e18&step=1", 200, "[[9223372036854,\"1\"]]");
    /* steps */
    expect(QR "&start=0&end=100&step=9e15", 400, "\\\"9e15\\\" " OVF);
    expect(QR "&start=0&end=100&step=9223372037", 400, OVF);
    expect(QR "&start=0&end=100&step=9223372036.854", 200, "[[0,\"1\"]]");
    expect(QR "&start=0&end=100&step=-9e18", 400, OVF);
    expect(QR "&start=0&end=100&step=Inf", 400, OVF);
    expect(QR "&start=0&end=100&step=-Inf", 400, OVF);
    expect(QR "&start=0&end=100&step=1e309", 400,
           "invalid parameter \\\"step\\\": cannot parse \\\"1e309\\\" to a valid duration\"");
    expect(QR "&start=0&end=100&step=9999999999999y", 400,
           "cannot parse \\\"9999999999999y\\\" to a valid duration\"");
    expect(QR "&start=0&end=100&step=293y", 400, "cannot parse \\\"293y\\\" to a valid duration");
    expect(QR "&start=0&end=100&step=292y", 200, "[[0,\"1\"]]");
    expect(QR "&start=0&end=100&step=NaN", 400, NEG);
    expect(QR "&start=0&end=100&step=0", 400, NEG);
    expect(QR "&start=0&end=100&step=-1", 400, NEG);
    expect(QR "&start=0&end=1&step=1e-10", 400, NEG);
    expect(QR "&start=0&end=100&step=0.0001", 400, RES);
    expect(QR "&start=0&end=1&step=1e-9", 400, RES);
    /* Prometheus divides by the zero millisecond step and answers 422 */
    expect(QR "&start=0&end=1&step=0.0001", 400, "step widths under 1ms are not accepted");
    expect(QR "&start=0&end=1&step=0x1p-3", 200, "[0.125,\"1\"]");
    expect(QR "&start=0&end=100", 400, "cannot parse \\\"\\\" to a valid duration");
    /* instant times: past the range they saturate (Prometheus wraps, also 200) */
    expect(Q "&time=-9e12", 200, "[-9000000000000,\"1\"]");
    expect(Q "&time=9e15", 200, "[9223372036854,\"1\"]");
    expect(Q "&time=-9e15", 200, "[-9223372036854,\"1\"]");
    expect(Q "&time=9.3e15", 200, "[9223372036854,\"1\"]");
    expect(Q "&time=-9.3e15", 200, "[-9223372036854,\"1\"]");
    expect(Q "&time=9e18", 200, "[9223372036854,\"1\"]");
    expect(Q "&time=9223372036854775.807", 200, "[9223372036854,\"1\"]");
    expect(Q "&time=Inf", 200, "[9223372036854,\"1\"]");
    expect(Q "&time=-Inf", 200, "[-9223372036854,\"1\"]");
    expect(Q "&time=NaN", 200, "[-9223372036854,\"1\"]");
    expect(Q "&time=1e-400", 200, "[0,\"1\"]");
    expect(Q "&time=1e309", 400,
           "invalid parameter \\\"time\\\": Invalid time value for 'time': cannot parse "
           "\\\"1e309\\\" to a valid timestamp");
    expect(Q "&time=10000-01-01T00:00:00Z", 400, "Invalid time value for 'time'");
    expect(Q "&time=0x10", 400, "Invalid time value for 'time'");
    expect(Q "&time=nan(1)", 400, "Invalid time value for 'time'");
    expect(Q "&time=%201", 400, "Invalid time value for 'time'");
    expect(Q "&time=9999-12-31T23:59:59.999999999Z", 200, "[253402300799.999,\"1\"]");
    expect(Q "&time=0000-01-01T00:00:00-23:59", 200, "[-62167132860,\"1\"]");
    expect(Q "&time=2020-01-01T00:00:00.1234567891Z", 400, "Invalid time value for 'time'");
    expect("/api/v1/query?query=time()&time=-9223372036854775.808", 200, OK200);
    expect("/api/v1/query?query=rate(m%5B5m%5D)&time=-9223372036854775.808", 200, OK200);
    expect("/api/v1/query?query=m%20%40%20-9e15%20offset%20292y&time=0", 200, OK200);
    expect("/api/v1/query?query=m%5B292y%5D&time=-9e18", 200, OK200);
    expect("/api/v1/query?query=m%5B9999999y%5D&time=0", 400, "duration out of range");
    /* timeouts: zero or less has expired before the query runs */
    expect(QR "&start=0&end=100&step=1&timeout=-1", 503, "\"errorType\":\"timeout\"");
    expect(Q "&time=1&timeout=0", 503, "query timed out in query queue");
    expect(Q "&time=1&timeout=-0", 503, "\"errorType\":\"timeout\"");
    expect(Q "&time=1&timeout=NaN", 503, "\"errorType\":\"timeout\"");
    expect(Q "&time=1&timeout=-5s", 400,
           "invalid parameter \\\"timeout\\\": cannot parse \\\"-5s\\\" to a valid duration\"");
    expect(Q "&time=1&timeout=9e15", 400, "\\\"timeout\\\": cannot parse \\\"9e15\\\" " OVF);
    expect(Q "&time=1&timeout=Inf", 400, OVF);
    expect(Q "&time=1&timeout=1e309", 400, "to a valid duration\"");
    expect(Q "&time=1&timeout=9999999999999y", 400, "to a valid duration\"");
    expect(Q "&time=1&timeout=292y", 200, OK200);
    expect(Q "&time=1&timeout=1ms", 200, OK200);
    expect("/api/v1/query?query=sum(&time=1&timeout=-1", 400, "parse error");
    /* series, labels, label values take any ends */
    expect("/api/v1/series?match[]=m&start=-9e15&end=9e15", 200, "\"job\":\"a\"");
    expect("/api/v1/series?match[]=m&start=-9e18&end=9e18", 200, "\"job\":\"a\"");
    expect("/api/v1/series?match[]=m&start=Inf&end=NaN", 200,
           "{\"status\":\"success\",\"data\":[]}");
    expect("/api/v1/series?match[]=m&start=10&end=1", 200, "{\"status\":\"success\",\"data\":[]}");
    expect("/api/v1/series?match[]=m&start=1e309", 400,
           "invalid parameter \\\"start\\\": Invalid time value for 'start'");
    expect("/api/v1/labels?start=-9e15&end=9e15", 200, "\"job\"");
    expect("/api/v1/labels?start=NaN", 200, "\"job\"");
    expect("/api/v1/labels?end=1e309", 400, "Invalid time value for 'end'");
    expect("/api/v1/label/job/values?start=-Inf&end=Inf", 200, "[\"a\"]");
    expect("/api/v1/label/job/values?start=9999-12-31T23:59:59Z&end=0000-01-01T00:00:00Z", 200,
           "{\"status\":\"success\",\"data\":[]}");
    /* limits */
    expect("/api/v1/metadata?limit=99999999999999999999", 400, "limit must be a number");
    expect("/api/v1/metadata?limit=abc", 400, "limit must be a number");
    expect("/api/v1/metadata?limit=-5", 200, OK200);
    expect("/api/v1/status/tsdb?limit=99999999999999999999", 400, "limit must be a positive");
    /* the same through a form body */
    resp_t r;
    const char *form = "query=vector(1)&start=-9e15&end=9e15&step=1";
    req(&r, "/api/v1/query_range", form, strlen(form), "application/x-www-form-urlencoded");
    assert_int_equal(r.code, 400);
    assert_non_null(strstr(r.body.data, RES));
    im_buf_free(&r.body);
    expect("/-/healthy", 200, NULL); /* still up */
    http_server_stop(s);
    promql_engine_free(eng);
    tsdb_close(db);
}

/* The engine itself, for callers other than the API (rules, CLI): a range whose
 * step count no sample limit allows is refused before anything is sized. */
static void test_engine_range(void **state)
{
    (void)state;
    tsdb_opts_t to;
    memset(&to, 0, sizeof to);
    to.no_background = true;
    tsdb_t *db;
    assert_int_equal(tsdb_open(&to, &db, NULL), IM_OK);
    promql_engine_t *eng = promql_engine_new(NULL);
    promql_expr_t *e = NULL;
    assert_int_equal(promql_parse("vector(1)", 9, &e, NULL), IM_OK);
    tsdb_queryable_t *q = tsdb_queryable(db);
    promql_result_t res;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc =
        promql_eval_range(eng, q, e, -9000000000000000000LL, 9000000000000000000LL, 1, &res, &err);
    assert_int_equal(rc, IM_ELIMIT);
    assert_non_null(strstr(err.msg, "too many samples"));
    im_err_clear(&err);
    rc = promql_eval_range(eng, q, e, INT64_MIN, INT64_MAX, 1000, &res, &err);
    assert_int_equal(rc, IM_ELIMIT);
    rc = promql_eval_range(eng, q, e, INT64_MAX - 2000, INT64_MAX, 1000, &res, &err);
    assert_int_equal(rc, IM_OK);
    assert_int_equal(res.nseries, 1);
    assert_int_equal(res.series[0].npoints, 3);
    promql_result_free(&res);
    q->vt->close(q);
    promql_expr_free(e);
    promql_engine_free(eng);
    tsdb_close(db);
}

/* ---- remote write ---- */

/* One series of labels given as NULL-terminated name, value pairs and one sample. */
static void rw_series(im_buf_t *req, const char *const *pairs)
{
    size_t n = 0;
    while (pairs[2 * n]) n++;
    ht_pb_series1(req, pairs, n, 5000000, 1);
}

static void rw_expect(const char *const *pairs, long code, const char *part)
{
    im_buf_t pb;
    im_buf_init(&pb, 0);
    rw_series(&pb, pairs);
    size_t zn;
    char *z = ht_snappy(pb.data, pb.len, &zn);
    resp_t r;
    req(&r, "/api/v1/write", z, zn, "application/x-protobuf");
    if (r.code != code || (part && !strstr(r.body.data, part)))
        fprintf(stderr, "write %s...: %ld %s\n", pairs[0], r.code, r.body.data);
    assert_int_equal(r.code, code);
    if (part) assert_non_null(strstr(r.body.data, part));
    im_buf_free(&r.body);
    im_free(z);
    im_buf_free(&pb);
}

static void test_remote_write_labels(void **state)
{
    (void)state;
    tsdb_t *db;
    promql_engine_t *eng;
    http_server_t *s = start(&db, &eng);
    char longname[400];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    {
        const char *const p[] = {"__name__", "rw_dup", "a", "1", "a", "2", NULL};
        rw_expect(p, 400, "label name \"a\" is not unique: invalid sample");
    }
    {
        const char *const p[] = {"__name__", "rw_dup", "a", "1", "z", "1", "a", "1", NULL};
        rw_expect(p, 400, "label name \"a\" is not unique");
    }
    {
        const char *const p[] = {"__name__", "rw_dup", "a", "", "a", "x", NULL};
        rw_expect(p, 400, "label name \"a\" is not unique");
    }
    {
        const char *const p[] = {"__name__", "rw_dup", longname, "1", longname, "2", NULL};
        rw_expect(p, 400, "is not unique");
    }
    {
        const char *const p[] = {"__name__", "rw_dup", "__name__", "rw_dup2", NULL};
        rw_expect(p, 400, "label name \"__name__\" is not unique");
    }
    {
        const char *const p[] = {"__name__", "rw_empty", "", "x", NULL};
        rw_expect(p, 400, "invalid label name \"\"");
    }
    /* out of order labels are fine (sorted), and so is an empty value (no label) */
    {
        const char *const p[] = {"__name__", "rw_ok", "z", "1", "a", "2", "e", "", NULL};
        rw_expect(p, 204, NULL);
    }
    expect("/api/v1/series?match[]=%7B__name__%3D~%22rw_.*%22%7D", 200,
           "{\"status\":\"success\",\"data\":[{\"__name__\":\"rw_ok\",\"a\":\"2\",\"z\":\"1\"}]}");
    http_server_stop(s);
    promql_engine_free(eng);
    tsdb_close(db);
}

/* ---- paths ---- */

static bool serve_asset(const char *path, http_asset_t *a)
{
    static const unsigned char idx[] = "<html>index</html>";
    static const unsigned char js[] = "console.log(1)";
    memset(a, 0, sizeof *a);
    if (!strcmp(path, "/index.html")) {
        a->data = idx;
        a->len = sizeof idx - 1;
    } else if (!strcmp(path, "/app.js")) {
        a->data = js;
        a->len = sizeof js - 1;
    } else {
        return false;
    }
    a->content_type = "text/plain";
    return true;
}

static void test_paths(void **state)
{
    (void)state;
    tsdb_t *db;
    promql_engine_t *eng;
    http_server_t *s = start(&db, &eng);
    http_server_set_asset_lookup(s, serve_asset);
    expect("/app.js", 200, "console.log(1)");
    expect("/index.html", 200, "index");
    static const char *const bad[] = {
        "/app.js%00.html",
        "/app.js%00",
        "/index.html%00x",
        "/app.js%0a",
        "/app.js%0d",
        "/app.js%09",
        "/app.js%7f",
        "/app.js%01",
        "/x/../app.js",
        "/x/%2e%2e/app.js",
        "/./app.js",
        "/x/..",
        "/-/healthy%00x",
        "/metrics%00",
        "/api/v1/query%00x?query=1",
        "/api/v1/status/buildinfo%00",
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(bad); i++) expect(bad[i], 404, "404 page not found");
    /* a NUL in a parameter is not cut off either: the query keeps it and fails */
    expect("/api/v1/query?query=1%00x&time=1", 400, "parse error");
    expect("/api/v1/query?query=%0A1%0A&time=1", 200, "[1,\"1\"]"); /* newlines still decode */
    resp_t r;
    const char *form = "query=1%00x&time=1";
    req(&r, "/api/v1/query", form, strlen(form), "application/x-www-form-urlencoded");
    assert_int_equal(r.code, 400);
    im_buf_free(&r.body);
    http_server_stop(s);
    promql_engine_free(eng);
    tsdb_close(db);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_engine_range),
        cmocka_unit_test(test_remote_write_labels),
        cmocka_unit_test(test_paths),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
