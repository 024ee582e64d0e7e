/* http_test.h — what the unit tests of src/http share: a server on
 * 127.0.0.1 (a free port) over a memory-only store and an engine (ht_start,
 * ht_stop), a curl client that keeps the status, the body and the answer's
 * headers (ht_request), and the protobuf + snappy writers of remote-write
 * requests (ht_pb_*, ht_snappy). Header only: every tests/unit/http/test_*.c
 * is a program of its own; the functions are static and may go unused.
 * Include it after <cmocka.h>. */
#ifndef IM_TESTS_HTTP_TEST_H
#define IM_TESTS_HTTP_TEST_H

#include <curl/curl.h>
#include <snappy-c.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http/server.h"
#include "promql/promql.h"
#include "tsdb/tsdb.h"
#include "util/buf.h"

#define HT_FN static __attribute__((unused))

/* ---- Server ---- */

typedef struct ht_server {
    tsdb_t *db;
    promql_engine_t *eng;
    http_server_t *s;
    uint16_t port;
} ht_server_t;

/* Opens a memory-only store (no background work) and an engine, and starts a
 * server with *o (NULL: the defaults below) on 127.0.0.1:0 over them; o's
 * listen_address, db and engine are filled in. The defaults: remote write on,
 * flags {web.listen-address 127.0.0.1:0}. */
HT_FN void ht_start(ht_server_t *h, http_server_opts_t *o)
{
    static const char *const flags[] = {"web.listen-address", "127.0.0.1:0", NULL};
    http_server_opts_t def;
    if (!o) {
        memset(&def, 0, sizeof def);
        def.enable_remote_write = true;
        def.flags = flags;
        o = &def;
    }
    memset(h, 0, sizeof *h);
    tsdb_opts_t to;
    memset(&to, 0, sizeof to);
    to.no_background = true;
    assert_int_equal(tsdb_open(&to, &h->db, NULL), IM_OK);
    h->eng = promql_engine_new(NULL);
    o->listen_address = "127.0.0.1:0";
    o->storage = tsdb_storage(h->db);
    o->engine = h->eng;
    assert_int_equal(http_server_start(o, &h->s, NULL), IM_OK);
    h->port = http_server_port(h->s);
    assert_true(h->port > 0);
}

HT_FN void ht_stop(ht_server_t *h)
{
    http_server_stop(h->s);
    promql_engine_free(h->eng);
    tsdb_close(h->db);
    memset(h, 0, sizeof *h);
}

/* ---- Client ---- */

typedef struct ht_resp {
    long code;       /* 0: the transport failed */
    im_buf_t body;   /* always a string ("" when empty) */
    char enc[64];    /* the Content-Encoding answered, with its leading space */
    char hdrs[2048]; /* every header line answered, as received */
} ht_resp_t;

typedef struct ht_opts {
    const char *method;   /* NULL: GET, or POST when there is a body */
    const char *ctype;    /* Content-Type, NULL: none (curl's default for a body) */
    const char *encoding; /* Content-Encoding, NULL: none */
    const char *userpw;   /* basic auth "user:password", NULL: none */
    bool gzip;            /* Accept-Encoding: gzip (the body is decoded) */
} ht_opts_t;

static size_t ht__body(char *p, size_t s, size_t n, void *u)
{
    (void)im_buf_append(&((ht_resp_t *)u)->body, p, s * n);
    return s * n;
}

static size_t ht__header(char *p, size_t s, size_t n, void *u)
{
    ht_resp_t *r = u;
    if (!strncasecmp(p, "Content-Encoding:", 17))
        snprintf(r->enc, sizeof r->enc, "%.*s", (int)(s * n - 17), p + 17);
    size_t have = strlen(r->hdrs);
    snprintf(r->hdrs + have, sizeof r->hdrs - have, "%.*s", (int)(s * n), p);
    return s * n;
}

/* One request on a fresh connection; path is sent as it is (already
 * percent-encoded). Returns r->code. Free r->body. Thread-safe. */
HT_FN long ht_request(uint16_t port, ht_resp_t *r, const char *path, const char *body, size_t blen,
                      const ht_opts_t *o)
{
    static const ht_opts_t none = {NULL, NULL, NULL, NULL, false};
    if (!o) o = &none;
    memset(r, 0, sizeof *r);
    im_buf_init(&r->body, 0);
    CURL *c = curl_easy_init();
    char url[4096];
    snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ht__body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, ht__header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    struct curl_slist *h = NULL;
    char hb[256];
    if (o->ctype) {
        snprintf(hb, sizeof hb, "Content-Type: %s", o->ctype);
        h = curl_slist_append(h, hb);
    }
    if (o->encoding) {
        snprintf(hb, sizeof hb, "Content-Encoding: %s", o->encoding);
        h = curl_slist_append(h, hb);
    }
    if (h) curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (o->gzip) curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
    if (o->userpw) curl_easy_setopt(c, CURLOPT_USERPWD, o->userpw);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)blen);
    }
    if (o->method) curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, o->method);
    if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    if (!r->body.data) (void)im_buf_puts(&r->body, "");
    return r->code;
}

/* The value of header name in r (case-insensitive), copied to out; NULL when absent. */
HT_FN const char *ht_header(const ht_resp_t *r, const char *name, char *out, size_t osz)
{
    size_t nl = strlen(name);
    for (const char *p = r->hdrs; *p;) {
        const char *e = strchr(p, '\n');
        if (!e) e = p + strlen(p);
        if ((size_t)(e - p) > nl && !strncasecmp(p, name, nl) && p[nl] == ':') {
            const char *v = p + nl + 1;
            while (*v == ' ') v++;
            size_t vl = (size_t)(e - v);
            while (vl && (v[vl - 1] == '\r' || v[vl - 1] == ' ')) vl--;
            snprintf(out, osz, "%.*s", (int)vl, v);
            return out;
        }
        p = *e ? e + 1 : e;
    }
    return NULL;
}

/* ---- Protobuf and snappy ---- */

HT_FN void ht_pb_varint(im_buf_t *b, uint64_t v)
{
    while (v >= 0x80) {
        (void)im_buf_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    (void)im_buf_putc(b, (char)v);
}

/* A length-delimited field (wire type 2). */
HT_FN void ht_pb_bytes(im_buf_t *b, unsigned field, const char *p, size_t n)
{
    ht_pb_varint(b, field << 3 | 2);
    ht_pb_varint(b, n);
    (void)im_buf_append(b, p, n);
}

/* A varint field (wire type 0); an int64 is passed as its two's complement. */
HT_FN void ht_pb_uint(im_buf_t *b, unsigned field, uint64_t v)
{
    ht_pb_varint(b, field << 3 | 0);
    ht_pb_varint(b, v);
}

/* A double field (wire type 1, little-endian). */
HT_FN void ht_pb_double(im_buf_t *b, unsigned field, double v)
{
    ht_pb_varint(b, field << 3 | 1);
    uint64_t bits;
    memcpy(&bits, &v, 8);
    for (int i = 0; i < 8; i++) (void)im_buf_putc(b, (char)(bits >> (8 * i)));
}

/* Remote write 1.0: appends to req one TimeSeries (WriteRequest field 1) with
 * the labels pairs[0, 2 * npairs) (name, value, ...) in the order given and one
 * sample. */
HT_FN void ht_pb_series1(im_buf_t *req, const char *const *pairs, size_t npairs, int64_t t,
                         double v)
{
    im_buf_t ts, l, s;
    im_buf_init(&ts, 0);
    for (size_t i = 0; i < 2 * npairs; i += 2) {
        im_buf_init(&l, 0);
        ht_pb_bytes(&l, 1, pairs[i], strlen(pairs[i]));
        ht_pb_bytes(&l, 2, pairs[i + 1], strlen(pairs[i + 1]));
        ht_pb_bytes(&ts, 1, l.data, l.len);
        im_buf_free(&l);
    }
    im_buf_init(&s, 0);
    ht_pb_double(&s, 1, v);
    ht_pb_uint(&s, 2, (uint64_t)t);
    ht_pb_bytes(&ts, 2, s.data, s.len);
    im_buf_free(&s);
    ht_pb_bytes(req, 1, ts.data ? ts.data : "", ts.len);
    im_buf_free(&ts);
}

/* Snappy-compresses p[0, n); returns a new buffer (im_free), its size in *zn. */
HT_FN char *ht_snappy(const char *p, size_t n, size_t *zn)
{
    size_t cap = snappy_max_compressed_length(n);
    char *out = im_malloc(cap ? cap : 1);
    *zn = cap;
    assert_int_equal(snappy_compress(p ? p : "", n, out, zn), SNAPPY_OK);
    return out;
}

#endif
