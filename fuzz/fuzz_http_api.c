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
 * method bit 1 set, sends as it is. The request is sent on a fresh connection
 * and the whole answer read: the server must answer every input with a status
 * line and never crash, leak or read out of bounds. The server is restarted
 * on a fresh store every 500 requests. */
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
    o.db = db;
    o.engine = eng;
    o.enable_remote_write = true;
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

static void roundtrip(const im_buf_t *req)
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > (1u << 14)) return 0;
    if (g_port && ++g_requests % 500 == 0) stop_server();
    if (!g_port) start_server();
    const char *path = paths[data[0] % IM_ARRAY_LEN(paths)];
    bool post = data[1] & 1, raw = data[1] & 2;
    const uint8_t *p = data + 2;
    size_t n = size - 2;
    bool write = !strcmp(path, "/api/v1/write");
    im_buf_t body, req;
    im_buf_init(&body, 0);
    im_buf_init(&req, 0);
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
    roundtrip(&req);
    im_buf_free(&body);
    im_buf_free(&req);
    return 0;
}
