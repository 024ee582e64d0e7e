/* fuzz_http_api.c — libFuzzer target for the HTTP API's request handling: the
 * parameter decoding (query string and form body, percent escapes), the
 * parameter parsers (times as Unix floats or RFC 3339, durations as floats or
 * Prometheus durations, limits, match[] selectors, PromQL in query), the
 * handlers behind them and the remote-write decoder (snappy + protobuf).
 *
 * One server runs for the whole process on 127.0.0.1 over a small in-memory
 * store with a few series. Each input is one request: byte 0 picks the path,
 * byte 1 the method (GET with the rest as query string, POST with it as a form
 * body); for /api/v1/write the rest is a WriteRequest that the harness
 * snappy-compresses (so the protobuf decoder sees mutated content) or, with
 * method bit 1 set, sends as it is. With method bit 2 set the rest is not sent
 * as it is but generates the parameters (gen_params): each triple of bytes
 * names a time, duration or limit parameter and a form for its value — one of
 * the extreme values (+-9e15, +-Inf, NaN, 1e309, 292y/293y, years 0000/9999,
 * the formatted min and max times, ...) or a number built from the next eight
 * bytes (any double, any int64 in seconds or with a duration unit, any year),
 * so that every overflow path of the time arithmetic is reached without the
 * fuzzer having to spell the numbers. The request is sent on a fresh connection
 * and the whole answer read: the server must answer every input with a status
 * line (generated parameters never a 500) and never crash, leak or read out of
 * bounds. The server is restarted on a fresh store every 500 requests. */
#include "util/base.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "http/server.h"
#include "labels/labels.h"
#include "promql/promql.h"
#include "tsdb/tsdb.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const paths[] = {
    "/api/v1/query",
    "/api/v1/query_range",
    "/api/v1/series",
    "/api/v1/labels",
    "/api/v1/label/__name__/values",
    "/api/v1/label/job/values",
    "/api/v1/label/le/values",
    "/api/v1/metadata",
    "/api/v1/targets",
    "/api/v1/status/tsdb",
    "/api/v1/status/flags",
    "/api/v1/status/runtimeinfo",
    "/api/v1/rules",
    "/api/v1/alerts",
    "/api/v1/write",
    "/metrics",
    "/api/v1/search/metric_names",
    "/api/v1/search/label_names",
    "/api/v1/search/label_values",
};

static uint16_t g_port;
static http_server_t *g_server;
static tsdb_t *g_db;
static promql_engine_t *g_engine;
static unsigned g_requests;

static void seed(tsdb_t *db)
{
    static const char *const les[] = {"0.1", "0.5", "1", "+Inf"};
    tsdb_appender_t *a = tsdb_appender(db);
    for (int t = 0; t < 40; t++) {
        int64_t ts = 1000000 + (int64_t)t * 15000;
        for (int j = 0; j < 2; j++) {
            const char *job = j ? "b" : "a";
            const im_labels_t *ls =
                im_labels_from_strs("__name__", "vllm:num_requests_running", "job", job, NULL);
            (void)tsdb_appender_add(a, 0, ls, ts, t % 7 + j, NULL);
            im_labels_unref(ls);
            ls = im_labels_from_strs("__name__", "vllm:num_preemptions_total", "job", job, NULL);
            (void)tsdb_appender_add(a, 0, ls, ts, t * 2 + j, NULL);
            im_labels_unref(ls);
            for (size_t k = 0; k < IM_ARRAY_LEN(les); k++) {
                ls = im_labels_from_strs("__name__", "vllm:time_to_first_token_seconds_bucket",
                                         "job", job, "le", les[k], NULL);
                (void)tsdb_appender_add(a, 0, ls, ts, (double)(t * (int)(k + 1)), NULL);
                im_labels_unref(ls);
            }
        }
    }
    if (tsdb_appender_commit(a, NULL) != IM_OK) abort();
}

static void start_server(void)
{
    tsdb_opts_t to;
    memset(&to, 0, sizeof to);
    to.no_background = true;
    tsdb_t *db;
    if (tsdb_open(&to, &db, NULL) != IM_OK) abort();
    seed(db);
    g_db = db;
    promql_engine_opts_t eo;
    memset(&eo, 0, sizeof eo);
    eo.timeout_ms = 2000;
    eo.max_samples = 200000;
    promql_engine_t *eng = promql_engine_new(&eo);
    g_engine = eng;
    static const char *const flags[] = {"web.listen-address", "127.0.0.1:0", NULL};
    http_server_opts_t o;
    memset(&o, 0, sizeof o);
    o.listen_address = "127.0.0.1:0";
    o.storage = tsdb_storage(db);
    o.engine = eng;
    o.enable_remote_write = true;
    o.enable_search = true;
    o.remote_write_max_bytes = 1 << 16;
    o.max_connections = 16; /* one request at a time */
    o.flags = flags;
    if (http_server_start(&o, &g_server, NULL) != IM_OK) abort();
    g_port = http_server_port(g_server);
}

/* Remote writes add series: a fresh store every few hundred requests keeps a
 * long run's memory and query times flat. */
static void stop_server(void)
{
    http_server_stop(g_server);
    promql_engine_free(g_engine);
    tsdb_close(g_db);
    g_server = NULL;
    g_port = 0;
}

/* Percent-encodes the bytes a request line cannot carry. */
static void put_query(im_buf_t *b, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c <= ' ' || c >= 0x7f || c == '#') {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            (void)im_buf_append(b, e, 3);
        } else {
            (void)im_buf_putc(b, (char)c);
        }
    }
}

/* ---- Generated parameters ---- */

static const char *const gen_names[] = {
    "time", "start", "end", "step", "timeout", "limit", "query", "match[]",
};

static const char *const gen_extremes[] = {
    "-9e15",
    "9e15",
    "-9e18",
    "9e18",
    "9.3e15",
    "-9.3e15",
    "1e309",
    "-1e309",
    "1e-400",
    "Inf",
    "-Inf",
    "+Inf",
    "NaN",
    "nan(1)",
    "infinity",
    "0",
    "-0",
    "-1",
    "1e-9",
    "1e-10",
    "0.0001",
    "0x1p-3",
    "0x10",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775.807",
    "-9223372036854775.808",
    "9223372036.854775807",
    "9223372037",
    "18446744073709551616",
    "99999999999999999999",
    "9999999999999y",
    "292y",
    "293y",
    "106751d",
    "106752d",
    "15250w",
    "9223372036854ms",
    "9223372036855ms",
    "1y2w3d4h5m6s7ms",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999999Z",
    "9999-12-31T23:59:59+23:59",
    "0000-01-01T00:00:00-23:59",
    "10000-01-01T00:00:00Z",
    "-292273086-05-16T16:47:06Z",
    "292277025-08-18T07:12:54.999999999Z",
    "1970-01-01T00:00:00.1234567891Z",
    "",
    " 1",
    "1_000",
};

static const char *const gen_queries[] = {
    "vector(1)",
    "time()",
    "vllm:num_requests_running",
    "rate(vllm:num_preemptions_total[5m])",
    "vllm:num_requests_running @ 9e15",
    "vllm:num_requests_running @ -9e15 offset 292y",
    "vllm:num_requests_running offset -292y",
    "max_over_time(vllm:num_requests_running[292y])",
    "rate(vllm:num_preemptions_total[5m])[292y:1ms]",
    "sum_over_time(vector(1)[1h:1ms])",
    "timestamp(vllm:num_requests_running @ end())",
    "vllm:num_requests_running @ start() offset 1ms",
};

static uint64_t take_u64(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | (*p < end ? *(*p)++ : 0);
    return v;
}

/* Appends name=value pairs made from p (see the file comment). */
static void gen_params(im_buf_t *b, const uint8_t *p, size_t n)
{
    static const char *const units[] = {"ms", "s", "m", "h", "d", "w", "y"};
    const uint8_t *end = p + n;
    bool first = true;
    while (end - p >= 2) {
        const char *name = gen_names[*p++ % IM_ARRAY_LEN(gen_names)];
        unsigned form = *p++;
        char v[128];
        if (!strcmp(name, "query") || !strcmp(name, "match[]")) {
            snprintf(v, sizeof v, "%s", gen_queries[form % IM_ARRAY_LEN(gen_queries)]);
        } else if (form < IM_ARRAY_LEN(gen_extremes)) {
            snprintf(v, sizeof v, "%s", gen_extremes[form]);
        } else {
            uint64_t u = take_u64(&p, end);
            double d;
            memcpy(&d, &u, sizeof d);
            switch (form % 5) {
            case 0: snprintf(v, sizeof v, "%.17g", d); break;
            case 1: snprintf(v, sizeof v, "%lld", (long long)u); break;
            case 2:
                snprintf(v, sizeof v, "%llu%s", (unsigned long long)(u >> 8), units[u % 7]);
                break;
            case 3: snprintf(v, sizeof v, "%lld.%03u", (long long)u, (unsigned)(u % 1000)); break;
            default:
                snprintf(v, sizeof v, "%04u-%02u-%02uT%02u:%02u:%02uZ", (unsigned)(u % 10000),
                         (unsigned)(u >> 14) % 12 + 1, (unsigned)(u >> 18) % 28 + 1,
                         (unsigned)(u >> 23) % 24, (unsigned)(u >> 28) % 60,
                         (unsigned)(u >> 34) % 60);
                break;
            }
        }
        if (!first) (void)im_buf_putc(b, '&');
        first = false;
        (void)im_buf_puts(b, name);
        (void)im_buf_putc(b, '=');
        /* percent-encode everything but the unreserved characters */
        static const char hex[] = "0123456789ABCDEF";
        for (const char *c = v; *c; c++) {
            unsigned char ch = (unsigned char)*c;
            if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                ch == '.' || ch == '-' || ch == '_') {
                (void)im_buf_putc(b, (char)ch);
            } else {
                char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
                (void)im_buf_append(b, e, 3);
            }
        }
    }
}

/* Sends req and reads the whole answer; returns its status code. */
static int roundtrip(const im_buf_t *req)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) abort();
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons(g_port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) abort();
    size_t off = 0;
    while (off < req->len) {
        ssize_t w = send(fd, req->data + off, req->len - off, MSG_NOSIGNAL);
        if (w <= 0) break;
        off += (size_t)w;
    }
    char buf[4096], head[16];
    size_t got = 0;
    for (;;) {
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r <= 0) break;
        if (got < sizeof head) memcpy(head + got, buf, IM_MIN((size_t)r, sizeof head - got));
        got += (size_t)r;
    }
    close(fd);
    /* Every request gets an answer with a status line. */
    if (got < 12 || memcmp(head, "HTTP/1.1 ", 9) != 0) abort();
    return (head[9] - '0') * 100 + (head[10] - '0') * 10 + (head[11] - '0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > (1u << 14)) return 0;
    if (g_port && ++g_requests % 500 == 0) stop_server();
    if (!g_port) start_server();
    const char *path = paths[data[0] % IM_ARRAY_LEN(paths)];
    bool post = data[1] & 1, raw = data[1] & 2, gen = data[1] & 4;
    const uint8_t *p = data + 2;
    size_t n = size - 2;
    bool write = !strcmp(path, "/api/v1/write");
    im_buf_t body, req, genb;
    im_buf_init(&body, 0);
    im_buf_init(&req, 0);
    im_buf_init(&genb, 0);
    if (gen && !write) {
        gen_params(&genb, p, n);
        p = (const uint8_t *)(genb.data ? genb.data : "");
        n = genb.len;
    }
    if (write) {
        post = true;
        if (raw) {
            (void)im_buf_append(&body, p, n);
        } else {
            size_t zn = snappy_max_compressed_length(n);
            if (im_buf_reserve(&body, zn) != IM_OK) abort();
            if (snappy_compress((const char *)p, n, body.data, &zn) != SNAPPY_OK) abort();
            body.len = zn;
        }
    } else if (post) {
        (void)im_buf_append(&body, p, n);
    }
    (void)im_buf_printf(&req, "%s %s", post ? "POST" : "GET", path);
    if (!post && n) {
        (void)im_buf_putc(&req, '?');
        put_query(&req, p, n);
    }
    (void)im_buf_printf(&req, " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    if (post)
        (void)im_buf_printf(&req, "Content-Type: %s\r\nContent-Length: %zu\r\n",
                            write ? "application/x-protobuf" : "application/x-www-form-urlencoded",
                            body.len);
    (void)im_buf_puts(&req, "\r\n");
    if (body.len) (void)im_buf_append(&req, body.data, body.len);
    int status = roundtrip(&req);
    /* Parameters are checked before use: a bad one is a 4xx (or 503 for an
     * expired timeout, 422 for a query over a limit), never an internal error. */
    if (gen && !write && status == 500) abort();
    im_buf_free(&body);
    im_buf_free(&req);
    im_buf_free(&genb);
    return 0;
}
