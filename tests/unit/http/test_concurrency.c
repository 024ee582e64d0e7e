/* test_concurrency.c — one engine and one HTTP server used from several threads
 * at once, as the HTTP and rule threads do. Meant to be run under ThreadSanitizer
 * too (cmake -DIM_TSAN=ON, `make test-tsan`), where any data race fails it:
 *  - engine: sort, sort_desc, sort_by_label(_desc), topk, bottomk, quantile,
 *    count_values, label_replace, binary operations and subqueries evaluated by
 *    4 threads on one engine, each answer equal to the one-thread answer (a
 *    comparator reading a file global set by another thread's sort gives a
 *    different order, so this fails without TSan as well);
 *  - server: concurrent queries (sort/topk over remote-written data), remote
 *    writes, /-/ready and /metrics, and a client that hangs up on a heavy query
 *    (its evaluation is canceled: the client-gone counter grows). */
#include "util/base.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <snappy-c.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "http/server.h"
#include "promql/parser.h"
#include "promql/promql.h"
#include "tsdb/tsdb.h"
#include "util/timeutil.h"

#include "http_test.h"

#define NTHREADS 4

/* ---- engine ---- */

static const char *const queries[] = {
    "sort(m)",
    "sort_desc(m)",
    "sort_by_label(m, \"g\", \"i\")",
    "sort_by_label_desc(m, \"i\")",
    "topk(3, m)",
    "bottomk(2, m) by (g)",
    "sort(topk(5, m))",
    "quantile(0.3, m) by (g)",
    "count_values(\"v\", m)",
    "label_replace(m, \"x\", \"$1\", \"i\", \"(.)\")",
    "m * on(i) group_left m",
    "sort_desc(m + 1)",
    "max_over_time(m[2m:15s])",
    "sort(quantile_over_time(0.5, m[5m]))",
};

typedef struct eng_ctx {
    const promql_engine_t *eng;
    tsdb_queryable_t *q;
    promql_expr_t *exprs[IM_ARRAY_LEN(queries)];
    char *want_instant[IM_ARRAY_LEN(queries)];
    char *want_range[IM_ARRAY_LEN(queries)];
    int id;
    int mismatches;
} eng_ctx_t;

static char *eval_json(const eng_ctx_t *c, size_t qi, bool range)
{
    promql_result_t r;
    im_err_t err;
    im_rc rc = range ? promql_eval_range(c->eng, c->q, c->exprs[qi], 0, 600000, 15000, &r, &err)
                     : promql_eval_instant(c->eng, c->q, c->exprs[qi], 600000, &r, &err);
    if (rc != IM_OK) {
        fail_msg("%s: %s", queries[qi], err.msg);
    }
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(promql_result_to_json(&r, &b), IM_OK);
    promql_result_free(&r);
    return im_buf_steal(&b, NULL);
}

typedef struct eng_thread {
    eng_ctx_t *c;
    int id, mismatches;
} eng_thread_t;

static void *eng_main(void *arg)
{
    eng_thread_t *t = arg;
    size_t nq = IM_ARRAY_LEN(queries);
    for (int it = 0; it < 12; it++)
        for (size_t j = 0; j < nq; j++) {
            size_t qi = (j + (size_t)t->id * 3) % nq; /* threads sort in different modes */
            bool range = (it + t->id) & 1;
            char *got = eval_json(t->c, qi, range);
            if (strcmp(got, range ? t->c->want_range[qi] : t->c->want_instant[qi]) != 0)
                t->mismatches++;
            im_free(got);
        }
    return NULL;
}

static void test_engine_shared(void **state)
{
    (void)state;
    promql_memstore_t *m = promql_memstore_new();
    for (int i = 0; i < 40; i++) {
        char iv[16], gv[16];
        snprintf(iv, sizeof iv, "%d", i);
        snprintf(gv, sizeof gv, "g%d", i % 4);
        const im_labels_t *ls = im_labels_from_strs("__name__", "m", "i", iv, "g", gv, NULL);
        for (int k = 0; k <= 40; k++) {
            double v = (double)((i * 7 + k * 3) % 11); /* many ties, for the orders */
            if (i == 5 && k % 3 == 0) v = NAN;
            promql_memstore_add(m, ls, k * 15000LL, v);
        }
        im_labels_unref(ls);
    }
    promql_engine_opts_t o = {.threads = 1};
    eng_ctx_t c;
    memset(&c, 0, sizeof c);
    c.eng = promql_engine_new(&o);
    c.q = promql_memstore_queryable(m);
    for (size_t i = 0; i < IM_ARRAY_LEN(queries); i++) {
        im_err_t err;
        if (promql_parse(queries[i], strlen(queries[i]), &c.exprs[i], &err) != IM_OK)
            fail_msg("%s: %s", queries[i], err.msg);
        c.want_instant[i] = eval_json(&c, i, false);
        c.want_range[i] = eval_json(&c, i, true);
    }
    pthread_t th[NTHREADS];
    eng_thread_t ts[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        ts[i] = (eng_thread_t){&c, i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, eng_main, &ts[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(ts[i].mismatches, 0);
    }
    for (size_t i = 0; i < IM_ARRAY_LEN(queries); i++) {
        promql_expr_free(c.exprs[i]);
        im_free(c.want_instant[i]);
        im_free(c.want_range[i]);
    }
    promql_engine_free((promql_engine_t *)c.eng);
    promql_memstore_free(m);
}

/* ---- server ---- */

static uint16_t g_port;

/* One request; returns the status (0 on a transport error), body appended to
 * *out. A POST carries Content-Type ctype and Content-Encoding snappy. */
static long http(const char *method, const char *path, const char *body, size_t blen,
                 const char *ctype, im_buf_t *out)
{
    bool post = method && !strcmp(method, "POST");
    ht_opts_t o = {NULL, post ? ctype : NULL, post ? "snappy" : NULL, NULL, false};
    ht_resp_t r;
    long code = ht_request(g_port, &r, path, post ? body : NULL, blen, &o);
    (void)im_buf_append(out, r.body.data, r.body.len);
    im_buf_free(&r.body);
    return code;
}

/* A snappy WriteRequest with series w{i="<i>",src=src} at t_ms. */
static char *write_body(const char *src, int nseries, int64_t t_ms, double v, size_t *zn)
{
    im_buf_t req;
    im_buf_init(&req, 0);
    for (int i = 0; i < nseries; i++) {
        char iv[16];
        snprintf(iv, sizeof iv, "%d", i);
        const char *pairs[] = {"__name__", "w", "i", iv, "src", src};
        ht_pb_series1(&req, pairs, 3, t_ms, v + i % 5);
    }
    char *z = ht_snappy(req.data, req.len, zn);
    im_buf_free(&req);
    return z;
}

static double metric(const char *name)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    double v = -1;
    if (http(NULL, "/metrics", NULL, 0, NULL, &b) == 200) {
        (void)im_buf_putc(&b, 0);
        size_t nl = strlen(name);
        for (const char *p = b.data; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
            if (!strncmp(p, name, nl) && p[nl] == ' ') {
                v = strtod(p + nl + 1, NULL);
                break;
            }
    }
    im_buf_free(&b);
    return v;
}

static bool wait_metric(const char *name, double want_at_least)
{
    int64_t deadline = im_mono_ns() + 20 * 1000000000LL;
    while (im_mono_ns() < deadline) {
        if (metric(name) >= want_at_least) return true;
        usleep(10000);
    }
    return false;
}

typedef struct srv_thread {
    int kind, id;
    int failures;
} srv_thread_t;

static void *srv_main(void *arg)
{
    srv_thread_t *t = arg;
    static const char *const paths[] = {
        "/api/v1/query?query=sort(w)&time=1000",
        "/api/v1/query?query=topk(3,w)&time=1000",
        "/api/v1/query?query=sort_desc(w)&time=1000",
        "/api/v1/query?query=bottomk(2,w)&time=1000",
        "/api/v1/query_range?query=quantile(0.5,w)&start=900&end=1000&step=10",
        "/api/v1/query_range?query=count_values(%22v%22,w)&start=900&end=1000&step=10",
    };
    for (int it = 0; it < 20; it++) {
        im_buf_t b;
        im_buf_init(&b, 0);
        long code;
        if (t->kind == 0) {
            code = http(NULL, paths[(it + t->id) % IM_ARRAY_LEN(paths)], NULL, 0, NULL, &b);
            if (code != 200) t->failures++;
        } else if (t->kind == 1) {
            size_t zn;
            char src[16];
            snprintf(src, sizeof src, "t%d", t->id);
            char *z = write_body(src, 20, 1000000 + (int64_t)it * 1000, it, &zn);
            code = http("POST", "/api/v1/write", z, zn, "application/x-protobuf", &b);
            im_free(z);
            if (code != 204) t->failures++;
        } else {
            code = http(NULL, it & 1 ? "/metrics" : "/-/ready", NULL, 0, NULL, &b);
            if (code != 200) t->failures++;
        }
        im_buf_free(&b);
    }
    return NULL;
}

static void test_server_shared(void **state)
{
    (void)state;
    http_server_opts_t o;
    memset(&o, 0, sizeof o);
    o.enable_remote_write = true;
    o.query_max_concurrency = 3;
    ht_server_t h;
    ht_start(&h, &o);
    http_server_t *s = h.s;
    http_server_set_ready(s, true);
    g_port = h.port;
    size_t zn;
    char *z = write_body("init", 20, 995000, 1, &zn);
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(http("POST", "/api/v1/write", z, zn, "application/x-protobuf", &b), 204);
    im_free(z);
    im_buf_free(&b);

    /* a heavy query whose client hangs up once it evaluates */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(g_port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    const char *heavy = "GET /api/v1/query_range?query=quantile_over_time(0.5,vector(time())"
                        "%5B1d:1s%5D)&start=0&end=600000&step=60&timeout=60s HTTP/1.1\r\n"
                        "Host: x\r\n\r\n";
    assert_int_equal(write(fd, heavy, strlen(heavy)), (ssize_t)strlen(heavy));
    assert_true(wait_metric("infermon_engine_queries", 1));

    pthread_t th[6];
    srv_thread_t ts[6];
    int kinds[6] = {0, 0, 0, 1, 1, 2};
    for (int i = 0; i < 6; i++) {
        ts[i] = (srv_thread_t){kinds[i], i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, srv_main, &ts[i]), 0);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(ts[i].failures, 0);
    }
    close(fd);
    assert_true(wait_metric("infermon_engine_queries_client_gone_total", 1));
    ht_stop(&h);
}

int main(void)
{
    /* sort_by_label is experimental in Prometheus 3: these tests use 2.53's language */
    promql_lang_set_default(&(promql_lang_t){.compat = 2});
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_shared),
        cmocka_unit_test(test_server_shared),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
