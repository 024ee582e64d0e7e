/* server.c — the libmicrohttpd server: listening, TLS and basic auth from the
 * web config, request bodies (capped), form and query parameters, routing,
 * gzip, streamed answers, and request counters for /metrics. */
#include "util/base.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <zlib.h>

#include "http/http_int.h"
#include "util/gzip.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/timeutil.h"

#define API_BODY_MAX (16LL << 20) /* default of --web.max-request-body-bytes */

/* ---- Parameters ---- */

static int hexv(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Form bodies. As unescape below, "%00" is kept as it is (a NUL would cut the
 * C string the handlers see). */
static char *url_decode(const char *s, size_t n)
{
    char *o = im_malloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '+')
            o[k++] = ' ';
        else if (s[i] == '%' && i + 2 < n && hexv(s[i + 1]) >= 0 && hexv(s[i + 2]) >= 0 &&
                 (hexv(s[i + 1]) | hexv(s[i + 2]))) {
            o[k++] = (char)(hexv(s[i + 1]) * 16 + hexv(s[i + 2]));
            i += 2;
        } else
            o[k++] = s[i];
    }
    o[k] = 0;
    return o;
}

/* MHD's unescaping of the request path and the query arguments, but "%00"
 * stays as it is: the handlers see C strings, and a decoded NUL would make
 * "/index.html%00.js" serve /index.html and "/-/healthy%00x" answer as
 * /-/healthy. Returns the new length. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    char *w = s;
    for (const char *p = s; *p; p++) {
        int h, l;
        if (p[0] == '%' && (h = hexv(p[1])) >= 0 && (l = hexv(p[2])) >= 0 && (h | l)) {
            *w++ = (char)(h * 16 + l);
            p += 2;
        } else {
            *w++ = *p;
        }
    }
    *w = 0;
    return (size_t)(w - s);
}

/* A path no handler or asset may see: a control byte, a kept "%00" (see
 * unescape) or a "." / ".." segment. */
static bool bad_path(const char *u)
{
    for (const char *p = u; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) return true;
        if (p[0] == '%' && p[1] == '0' && p[2] == '0') return true;
        if (p[0] == '/' && p[1] == '.' &&
            (p[2] == '/' || !p[2] || (p[2] == '.' && (p[3] == '/' || !p[3]))))
            return true;
    }
    return false;
}

static void add_param(http__req_t *r, char *k, char *v)
{
    if (r->nparams == r->pcap) {
        r->pcap = r->pcap ? r->pcap * 2 : 8;
        r->params = im_realloc(r->params, r->pcap * sizeof *r->params);
    }
    r->params[r->nparams].k = k;
    r->params[r->nparams++].v = v;
}

static void parse_form(http__req_t *r, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t e = i;
        while (e < n && s[e] != '&') e++;
        size_t eq = i;
        while (eq < e && s[eq] != '=') eq++;
        if (e > i) {
            char *k = url_decode(s + i, eq - i);
            char *v = eq < e ? url_decode(s + eq + 1, e - eq - 1) : im_strdup("");
            add_param(r, k, v);
        }
        i = e + 1;
    }
}

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                              const char *value)
{
    (void)kind;
    add_param(cls, im_strdup(key), im_strdup(value ? value : ""));
    return MHD_YES;
}

const char *http__param(const http__req_t *r, const char *k)
{
    for (size_t i = 0; i < r->nparams; i++)
        if (!strcmp(r->params[i].k, k)) return r->params[i].v;
    return NULL;
}

static void req_free(http__req_t *r)
{
    for (size_t i = 0; i < r->nparams; i++) {
        im_free(r->params[i].k);
        im_free(r->params[i].v);
    }
    im_free(r->params);
    im_buf_free(&r->body);
    im_free(r);
}

/* ---- Counters ---- */

void http__count(http_server_t *s, const char *handler, unsigned code, double secs)
{
    pthread_mutex_lock(&s->mu);
    size_t i;
    for (i = 0; i < s->ncounters; i++)
        if (s->counters[i].code == code && !strcmp(s->counters[i].handler, handler)) break;
    if (i == s->ncounters && s->ncounters < 512) {
        s->counters = im_realloc(s->counters, (s->ncounters + 1) * sizeof *s->counters);
        memset(&s->counters[i], 0, sizeof s->counters[i]);
        snprintf(s->counters[i].handler, sizeof s->counters[i].handler, "%s", handler);
        s->counters[i].code = code;
        s->ncounters++;
    }
    if (i < s->ncounters) {
        s->counters[i].count++;
        s->counters[i].seconds += secs;
    }
    pthread_mutex_unlock(&s->mu);
}

/* ---- Responses ---- */

static void free_cb(void *p)
{
    im_free(p);
}

static void common_headers(http_server_t *s, http__req_t *r, struct MHD_Response *resp,
                           const char *ctype)
{
    if (ctype) MHD_add_response_header(resp, "Content-Type", ctype);
    for (size_t i = 0; i < r->nxhdr; i++)
        MHD_add_response_header(resp, r->xhdr[i].name, r->xhdr[i].value);
    http__web_headers(s->web, resp);
}

enum MHD_Result http__send(http_server_t *s, http__req_t *r, unsigned code, const char *ctype,
                           im_buf_t *b)
{
    bool gz = false;
    if (r->gzip && b->len > 1024) {
        im_buf_t z;
        im_buf_init(&z, 0);
        if (im_gzip(b->data, b->len, Z_DEFAULT_COMPRESSION, &z)) {
            im_buf_free(b);
            *b = z;
            gz = true;
        } else {
            im_buf_free(&z);
        }
    }
    size_t len = b->len;
    char *data = im_buf_steal(b, NULL);
    struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(
        len, data ? data : im_strdup(""), free_cb);
    common_headers(s, r, resp, ctype);
    if (gz) MHD_add_response_header(resp, "Content-Encoding", "gzip");
    r->status = code;
    enum MHD_Result ret = MHD_queue_response(r->conn, code, resp);
    MHD_destroy_response(resp);
    return ret;
}

enum MHD_Result http__send_text(http_server_t *s, http__req_t *r, unsigned code, const char *text)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_puts(&b, text);
    return http__send(s, r, code, "text/plain; charset=utf-8", &b);
}

static unsigned etype_code(const char *t)
{
    if (!strcmp(t, "bad_data")) return 400;
    if (!strcmp(t, "execution")) return 422;
    if (!strcmp(t, "canceled") || !strcmp(t, "timeout") || !strcmp(t, "unavailable")) return 503;
    if (!strcmp(t, "not_found")) return 404;
    return 500;
}

enum MHD_Result http__send_error(http_server_t *s, http__req_t *r, const char *etype,
                                 const char *msg)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_puts(&b, "{\"status\":\"error\",\"errorType\":");
    im_json_string(&b, etype, strlen(etype), IM_JSON_GO);
    (void)im_buf_puts(&b, ",\"error\":");
    im_json_string(&b, msg, strlen(msg), IM_JSON_GO);
    (void)im_buf_putc(&b, '}');
    return http__send(s, r, etype_code(etype), "application/json", &b);
}

enum MHD_Result http__send_data(http_server_t *s, http__req_t *r, im_buf_t *data)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    if (im_buf_reserve(&b, data->len + 40) != IM_OK) im_oom(data->len);
    (void)im_buf_puts(&b, "{\"status\":\"success\",\"data\":");
    (void)im_buf_append(&b, data->data ? data->data : "null", data->data ? data->len : 4);
    (void)im_buf_putc(&b, '}');
    im_buf_free(data);
    return http__send(s, r, 200, "application/json", &b);
}

/* A streamed answer: JSON produced chunk by chunk, gzip optional. */
typedef struct stream {
    http__result_stream_t st;
    im_buf_t pending;
    size_t off;
    bool gz, done, zdone;
    z_stream z;
    im_buf_t raw;
} stream_t;

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream_t *s = cls;
    while (s->off >= s->pending.len) {
        if (s->done && (!s->gz || s->zdone)) return MHD_CONTENT_READER_END_OF_STREAM;
        im_buf_reset(&s->pending);
        s->off = 0;
        if (!s->gz) {
            s->done = http__result_stream_step(&s->st, &s->pending, 64 * 1024);
            continue;
        }
        im_buf_reset(&s->raw);
        if (!s->done) s->done = http__result_stream_step(&s->st, &s->raw, 64 * 1024);
        size_t cap = deflateBound(&s->z, s->raw.len) + 64;
        if (im_buf_reserve(&s->pending, cap) != IM_OK) return MHD_CONTENT_READER_END_WITH_ERROR;
        s->z.next_in = (Bytef *)s->raw.data;
        s->z.avail_in = (uInt)s->raw.len;
        s->z.next_out = (Bytef *)s->pending.data;
        s->z.avail_out = (uInt)cap;
        int rc = deflate(&s->z, s->done ? Z_FINISH : Z_NO_FLUSH);
        s->pending.len = cap - s->z.avail_out;
        if (rc == Z_STREAM_END)
            s->zdone = true;
        else if (s->done && rc == Z_OK) {
            /* more output pending at finish: loop again with no new input */
            im_buf_reset(&s->raw);
        }
    }
    size_t n = IM_MIN(max, s->pending.len - s->off);
    memcpy(buf, s->pending.data + s->off, n);
    s->off += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    stream_t *s = cls;
    promql_result_free(&s->st.res);
    im_buf_free(&s->pending);
    im_buf_free(&s->raw);
    if (s->gz) deflateEnd(&s->z);
    im_free(s);
}

enum MHD_Result http__send_result(http_server_t *s, http__req_t *r, promql_result_t *res)
{
    stream_t *st = im_calloc(1, sizeof *st);
    st->st.res = *res;
    memset(res, 0, sizeof *res);
    im_buf_init(&st->pending, 0);
    im_buf_init(&st->raw, 0);
    if (r->gzip &&
        deflateInit2(&st->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK)
        st->gz = true;
    struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024,
                                                                  stream_read, st, stream_free);
    common_headers(s, r, resp, "application/json");
    if (st->gz) MHD_add_response_header(resp, "Content-Encoding", "gzip");
    r->status = 200;
    enum MHD_Result ret = MHD_queue_response(r->conn, 200, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* ---- Auth ---- */

/* Rate limit and basic auth of a request (webcfg.c does the work): false = go
 * on; true = a response was queued (401, 429 or 503) and its result is in *ret.
 * Runs before any handler and needs only the request headers. */
static bool refused(http_server_t *s, http__req_t *r, enum MHD_Result *ret)
{
    const char *h = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");
    http__auth_t a = http__web_authorize(s->web, h);
    if (a == HTTP__AUTH_OK) return false;
    const char *text = "Unauthorized\n";
    unsigned code = 401;
    char busy[256];
    if (a == HTTP__AUTH_RATE_LIMITED) {
        code = 429;
        text = "Too Many Requests\n";
    } else if (a == HTTP__AUTH_BUSY) {
        code = 503;
        snprintf(busy, sizeof busy,
                 "too many concurrent password verifications (at most %d at once, "
                 "--web.basic-auth.bcrypt-concurrency, each waiting at most "
                 "--web.basic-auth.bcrypt-wait); retry later\n",
                 http__web_bcrypt_max(s->web));
        text = busy;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    if (code == 401) MHD_add_response_header(resp, "WWW-Authenticate", "Basic");
    if (code == 503) MHD_add_response_header(resp, "Retry-After", "1");
    common_headers(s, r, resp, "text/plain; charset=utf-8");
    r->status = code;
    r->handler = code == 401 ? "unauthorized" : code == 429 ? "rate_limited" : "auth_busy";
    *ret = MHD_queue_response(r->conn, code, resp);
    MHD_destroy_response(resp);
    return true;
}

/* ---- Query admission and client-gone cancellation ---- */

/* Why this shape. libmicrohttpd runs in thread-per-connection mode (see
 * http_server_start): a connection's request runs on that connection's thread,
 * so an evaluation that takes a minute holds only its own thread, and health
 * checks, /metrics and remote writes arriving meanwhile are answered on theirs
 * (a thread pool shared by all would queue them behind the queries). What is
 * bounded for queries is CPU and memory: at most qmax evaluations at once; the
 * others sleep on qcond until a slot frees or their timeout passes (Prometheus'
 * --query.max-concurrency gate, which is not strictly FIFO either).
 *
 * While its thread evaluates, libmicrohttpd does not look at the connection, so
 * it cannot tell that the client left (the completion callback comes only after
 * the handler returns). One watcher thread polls the sockets of the queued and
 * running queries for a hang-up (POLLRDHUP, POLLHUP, POLLERR; data such as a
 * pipelined request is not a hang-up) and stores 1 into the request's cancel
 * flag, the flag the engine checks while it evaluates (as for the timeout).
 * The watcher sleeps on wcond while no query is registered, and polls with a
 * 50 ms timeout otherwise so that new registrations are picked up. Requests are
 * matched by registration number, never by pointer or fd, which may be reused. */

#define WATCH_POLL_MS 50

static void query_unlink(http_server_t *s, http__req_t *r)
{
    for (http__req_t **pp = &s->qlist; *pp; pp = &(*pp)->qnext)
        if (*pp == r) {
            *pp = r->qnext;
            break;
        }
    r->qnext = NULL;
    r->qid = 0;
}

static void *watch_main(void *arg)
{
    http_server_t *s = arg;
    struct pollfd *pf = NULL;
    uint64_t *ids = NULL;
    size_t cap = 0;
    pthread_mutex_lock(&s->qmu);
    while (!s->qstop) {
        size_t n = 0;
        for (http__req_t *r = s->qlist; r; r = r->qnext)
            if (r->qfd >= 0 && !__atomic_load_n(&r->cancel, __ATOMIC_RELAXED)) n++;
        if (!n) {
            pthread_cond_wait(&s->wcond, &s->qmu);
            continue;
        }
        if (n > cap) {
            cap = n * 2;
            pf = im_realloc(pf, cap * sizeof *pf);
            ids = im_realloc(ids, cap * sizeof *ids);
        }
        n = 0;
        for (http__req_t *r = s->qlist; r; r = r->qnext)
            if (r->qfd >= 0 && !__atomic_load_n(&r->cancel, __ATOMIC_RELAXED)) {
                pf[n] = (struct pollfd){.fd = r->qfd, .events = POLLRDHUP};
                ids[n++] = r->qid;
            }
        pthread_mutex_unlock(&s->qmu);
        int k = poll(pf, (nfds_t)n, WATCH_POLL_MS);
        pthread_mutex_lock(&s->qmu);
        if (k <= 0) continue;
        bool woke = false;
        for (size_t i = 0; i < n; i++) {
            if (!(pf[i].revents & (POLLRDHUP | POLLHUP | POLLERR))) continue;
            for (http__req_t *r = s->qlist; r; r = r->qnext)
                if (r->qid == ids[i]) {
                    __atomic_store_n(&r->cancel, 1, __ATOMIC_RELAXED);
                    IM_INFO("Client went away: canceling its query", "url=%s",
                            im_logq(r->url ? r->url : ""));
                    woke = true;
                    break;
                }
        }
        if (woke) pthread_cond_broadcast(&s->qcond);
    }
    pthread_mutex_unlock(&s->qmu);
    im_free(pf);
    im_free(ids);
    return NULL;
}

im_rc http__query_enter(http_server_t *s, http__req_t *r, int64_t deadline_ns)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    pthread_mutex_lock(&s->qmu);
    r->qfd = ci ? ci->connect_fd : -1;
    r->qid = ++s->qids;
    r->qnext = s->qlist;
    s->qlist = r;
    pthread_cond_signal(&s->wcond);
    s->qwaiting++;
    bool timed_out = false;
    while (s->qrunning >= s->qmax && !s->qstop && !__atomic_load_n(&r->cancel, __ATOMIC_RELAXED)) {
        int64_t now = im_mono_ns();
        if (now >= deadline_ns) {
            timed_out = true;
            break;
        }
        struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000),
                              .tv_nsec = (long)(deadline_ns % 1000000000)};
        pthread_cond_timedwait(&s->qcond, &s->qmu, &ts);
    }
    s->qwaiting--;
    im_rc rc = IM_OK;
    if (s->qstop || __atomic_load_n(&r->cancel, __ATOMIC_RELAXED))
        rc = IM_ECANCELED;
    else if (timed_out)
        rc = IM_ETIMEOUT;
    if (rc == IM_OK) {
        s->qrunning++;
        r->qrunning = true;
    } else {
        if (rc == IM_ETIMEOUT) s->q_queue_timeouts++;
        if (rc == IM_ECANCELED && !s->qstop) s->q_client_gone++;
        query_unlink(s, r);
        pthread_cond_signal(&s->qcond); /* pass on a wake-up this waiter may have taken */
    }
    pthread_mutex_unlock(&s->qmu);
    return rc;
}

void http__query_leave(http_server_t *s, http__req_t *r, im_rc rc)
{
    pthread_mutex_lock(&s->qmu);
    if (rc == IM_ECANCELED && __atomic_load_n(&r->cancel, __ATOMIC_RELAXED) && !s->qstop)
        s->q_client_gone++;
    if (r->qrunning) {
        s->qrunning--;
        r->qrunning = false;
        pthread_cond_signal(&s->qcond);
    }
    query_unlink(s, r);
    pthread_mutex_unlock(&s->qmu);
}

/* ---- Routing ---- */

/* Agent mode (--agent): the API over local data answers as Prometheus' agent. */
static bool agent_refused(const char *p)
{
    static const char *const refused[] = {
        "/query", "/query_range", "/query_exemplars", "/series",       "/labels",
        "/rules", "/alerts",      "/status/tsdb",     "/format_query", NULL};
    for (size_t i = 0; refused[i]; i++)
        if (!strcmp(p, refused[i])) return true;
    return !strncmp(p, "/label/", 7);
}

static const char *param_of(const void *r, const char *k)
{
    return http__param(r, k);
}

static enum MHD_Result route(http_server_t *s, http__req_t *r)
{
    const char *u = r->url;
    bool get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");
    bool post = !strcmp(r->method, "POST") || !strcmp(r->method, "PUT");
    if (bad_path(u)) {
        r->handler = "other";
        return http__send_text(s, r, 404, "404 page not found\n");
    }
    if (!strncmp(u, "/api/v1/", 8)) {
        if (!strcmp(u, "/api/v1/write")) {
            r->handler = "/api/v1/write";
            if (!s->opts.enable_remote_write)
                return http__send_text(s, r, 404,
                                       "remote write receiver needs to be enabled with "
                                       "--web.enable-remote-write-receiver\n");
            if (!post) return http__send_text(s, r, 405, "Method Not Allowed\n");
            return http__remote_write(s, r);
        }
        if (!strcmp(u, HTTP__OTLP_PATH)) {
            r->handler = HTTP__OTLP_PATH;
            if (!s->opts.enable_otlp) return http__send_text(s, r, 404, "404 page not found\n");
            if (!post) return http__send_text(s, r, 405, "Method Not Allowed\n");
            return http__otlp(s, r);
        }
        if (!strcmp(u, "/api/v1/status/remote_write")) {
            r->handler = "/api/v1/status/remote_write";
            pthread_mutex_lock(&s->mu);
            void (*fn)(void *, im_buf_t *) = s->remote_status;
            void *ud = s->remote_status_ud;
            pthread_mutex_unlock(&s->mu);
            im_buf_t b;
            im_buf_init(&b, 0);
            if (fn)
                fn(ud, &b);
            else
                (void)im_buf_puts(&b, "[]");
            return http__send_data(s, r, &b);
        }
        bool slos = !strcmp(u, "/api/v1/llm/slos"); /* the SLOs (docs/slo.md) */
        if (!strcmp(u, "/api/v1/llm/doctor") || slos) {
            r->handler = slos ? "/api/v1/llm/slos" : "/api/v1/llm/doctor";
            if (!get) return http__send_text(s, r, 405, "Method Not Allowed\n");
            pthread_mutex_lock(&s->mu);
            http_doctor_fn fn = slos ? s->slos : s->doctor;
            void *ud = slos ? s->slos_ud : s->doctor_ud;
            pthread_mutex_unlock(&s->mu);
            if (!fn || s->opts.agent)
                return http__send_error(s, r, "unavailable",
                                        slos ? "the SLOs are not available here"
                                             : "the doctor is not available here");
            im_buf_t b;
            im_buf_init(&b, 0);
            const char *et =
                fn(ud, http__param(r, "at"), http__param(r, "window"), http__param(r, "model"), &b);
            if (!et) return http__send_data(s, r, &b);
            enum MHD_Result ret = http__send_error(s, r, et, b.data ? b.data : "doctor failed");
            im_buf_free(&b);
            return ret;
        }
        if (!strcmp(u, "/api/v1/llm/cost")) {
            r->handler = "/api/v1/llm/cost";
            if (!get) return http__send_text(s, r, 405, "Method Not Allowed\n");
            pthread_mutex_lock(&s->mu);
            http_cost_fn fn = s->cost;
            void *ud = s->cost_ud;
            pthread_mutex_unlock(&s->mu);
            if (!fn || s->opts.agent)
                return http__send_error(s, r, "unavailable",
                                        "the cost report is not available here");
            im_buf_t b;
            im_buf_init(&b, 0);
            const char *et = fn(ud, param_of, r, &b);
            if (!et) return http__send_data(s, r, &b);
            enum MHD_Result ret = http__send_error(s, r, et, b.data ? b.data : "cost failed");
            im_buf_free(&b);
            return ret;
        }
        if (s->opts.agent && agent_refused(u + 7)) {
            r->handler = "agent";
            return http__send_error(s, r, "execution", "unavailable with infermon agent");
        }
        return http__api(s, r, u + 7);
    }
    if (s->opts.agent && !strcmp(u, "/federate")) {
        r->handler = "/federate";
        return http__send_text(s, r, 500, "unsupported operation with WAL-only storage\n");
    }
    if (!strcmp(u, "/metrics")) {
        r->handler = "/metrics";
        return http__metrics(s, r);
    }
    if (!strcmp(u, "/-/healthy")) {
        r->handler = "/-/healthy";
        return http__send_text(s, r, 200, "infermon Server is Healthy.\n");
    }
    if (!strcmp(u, "/-/ready")) {
        r->handler = "/-/ready";
        pthread_mutex_lock(&s->mu);
        bool ready = s->ready;
        pthread_mutex_unlock(&s->mu);
        if (ready && s->opts.agent) return http__send_text(s, r, 200, "infermon Agent is Ready.\n");
        return ready ? http__send_text(s, r, 200, "infermon Server is Ready.\n")
                     : http__send_text(s, r, 503, "Service Unavailable");
    }
    if (!strcmp(u, "/-/reload") || !strcmp(u, "/-/quit")) {
        r->handler = !strcmp(u, "/-/reload") ? "/-/reload" : "/-/quit";
        if (!post) return http__send_text(s, r, 405, "Only POST or PUT requests allowed");
        if (!s->opts.enable_lifecycle)
            return http__send_text(s, r, 403, "Lifecycle API is not enabled.");
        if (!strcmp(u, "/-/quit")) {
            if (s->opts.lifecycle.quit) s->opts.lifecycle.quit(s->opts.lifecycle.ud);
            return http__send_text(s, r, 200, "Requesting termination... Goodbye!");
        }
        im_err_t err;
        im_err_clear(&err);
        im_rc rc = s->opts.lifecycle.reload ? s->opts.lifecycle.reload(s->opts.lifecycle.ud, &err)
                                            : im_err_set(&err, IM_ERR, "reload not available");
        if (rc != IM_OK) {
            char b[1200], m[1300];
            snprintf(m, sizeof m, "failed to reload config: %s\n",
                     im_err_format(&err, b, sizeof b));
            return http__send_text(s, r, 500, m);
        }
        return http__send_text(s, r, 200, "");
    }
    if (get) {
        http_asset_lookup_fn fn;
        pthread_mutex_lock(&s->mu);
        fn = s->assets;
        pthread_mutex_unlock(&s->mu);
        http_asset_t a;
        if (fn && fn(u, &a)) {
            r->handler = "/static";
            const char *inm =
                MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "If-None-Match");
            struct MHD_Response *resp;
            unsigned code = 200;
            if (a.etag && inm && !strcmp(inm, a.etag)) {
                resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
                code = 304;
            } else {
                resp =
                    MHD_create_response_from_buffer(a.len, (void *)a.data, MHD_RESPMEM_PERSISTENT);
                MHD_add_response_header(resp, "Content-Type", a.content_type);
            }
            http__web_headers(s->web, resp);
            if (a.etag) MHD_add_response_header(resp, "ETag", a.etag);
            if (a.cache_control) MHD_add_response_header(resp, "Cache-Control", a.cache_control);
            r->status = code;
            enum MHD_Result ret = MHD_queue_response(r->conn, code, resp);
            MHD_destroy_response(resp);
            return ret;
        }
    }
    r->handler = "other";
    return http__send_text(s, r, 404, "404 page not found\n");
}

/* The body cap of a request: the remote-write one or the API one. */
static int64_t body_cap(const http_server_t *s, bool rw)
{
    if (rw) return s->opts.remote_write_max_bytes > 0 ? s->opts.remote_write_max_bytes : 32LL << 20;
    return s->opts.max_request_body_bytes > 0 ? s->opts.max_request_body_bytes : API_BODY_MAX;
}

static enum MHD_Result send_too_large(http_server_t *s, http__req_t *r, bool rw, int64_t cap,
                                      const char *got)
{
    char m[300];
    snprintf(m, sizeof m, "request body %s%s exceeds the limit of %lld bytes (%s)\n",
             got ? "of " : "", got ? got : "", (long long)cap,
             rw ? "--web.remote-write-max-bytes" : "--web.max-request-body-bytes");
    r->handler = rw ? r->url && !strcmp(r->url, HTTP__OTLP_PATH) ? HTTP__OTLP_PATH : "/api/v1/write"
                    : "other";
    return http__send_text(s, r, 413, m);
}

/* Request lifecycle. libmicrohttpd calls this once when the headers are in
 * (*con_cls NULL), then once per piece of body, then once more with
 * *upload_size 0. Everything that can refuse a request without its body is
 * decided on that first call, before one byte of body is read: credentials
 * (401) and a Content-Length over the cap (413). A response queued then makes
 * libmicrohttpd skip the body (no 100 Continue is sent) and close the
 * connection, so an unauthenticated or oversized upload costs no memory. A body
 * without Content-Length (chunked) is appended up to the cap, the rest is
 * discarded, and the answer is 413. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    http_server_t *s = cls;
    http__req_t *r = *con_cls;
    if (!r) {
        r = im_calloc(1, sizeof *r);
        r->conn = conn;
        r->start_ns = im_mono_ns();
        r->method = method;
        r->url = url;
        *con_cls = r;
        bool rw = !strcmp(url, "/api/v1/write") || !strcmp(url, HTTP__OTLP_PATH);
        int64_t cap = body_cap(s, rw);
        enum MHD_Result aret;
        if (refused(s, r, &aret)) return aret; /* 401/429/503 on the headers alone */
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        if (cl) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(cl, &end, 10);
            if (end != cl && (errno == ERANGE || n > (unsigned long long)cap))
                return send_too_large(s, r, rw, cap, cl);
        }
        im_buf_init(&r->body, (size_t)cap);
        return MHD_YES;
    }
    if (*upload_size) {
        if (!r->body_over && im_buf_append(&r->body, upload, *upload_size) != IM_OK) {
            r->body_over = true;
            im_buf_free(&r->body); /* what was read is of no use: the answer is 413 */
        }
        *upload_size = 0;
        return MHD_YES;
    }
    r->method = method;
    r->url = url;
    const char *ae = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept-Encoding");
    r->gzip = ae && strstr(ae, "gzip");
    if (r->body_over) {
        bool rw = !strcmp(url, "/api/v1/write") || !strcmp(url, HTTP__OTLP_PATH);
        return send_too_large(s, r, rw, body_cap(s, rw), NULL);
    }
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, on_arg, r);
    const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    if (!strcmp(method, "POST") && ct && !strncasecmp(ct, "application/x-www-form-urlencoded", 33))
        parse_form(r, r->body.data ? r->body.data : "", r->body.len);
    return route(s, r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)conn;
    (void)toe;
    http_server_t *s = cls;
    http__req_t *r = *con_cls;
    if (!r) return;
    if (r->handler)
        http__count(s, r->handler, r->status, (double)(im_mono_ns() - r->start_ns) / 1e9);
    req_free(r);
    *con_cls = NULL;
}

/* TLS: each connection gets the current web config's credentials, priorities and
 * client-certificate policy before its handshake (webcfg.c). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    http_server_t *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        *socket_context = http__web_conn_start(s->web, ci ? ci->tls_session : NULL);
    } else if (*socket_context) {
        http__web_conn_end(*socket_context);
        *socket_context = NULL;
    }
}

static void mhd_log(void *cls, const char *fmt, va_list ap) IM_PRINTF(2, 0);
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char b[512];
    vsnprintf(b, sizeof b, fmt, ap);
    size_t n = strlen(b);
    while (n && b[n - 1] == '\n') b[--n] = 0;
    IM_DEBUG("HTTP server", "detail=%s", im_logq(b));
}

static im_rc parse_listen(const char *a, struct sockaddr_storage *ss, bool *any, uint16_t *port,
                          im_err_t *err)
{
    memset(ss, 0, sizeof *ss);
    const char *colon = strrchr(a, ':');
    if (!colon) return im_err_set(err, IM_EINVAL, "listen address \"%s\": missing port", a);
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p < 0 || p > 65535 || colon[1] == 0)
        return im_err_set(err, IM_EINVAL, "listen address \"%s\": bad port", a);
    *port = (uint16_t)p;
    char host[256];
    size_t hl = (size_t)(colon - a);
    if (hl >= sizeof host) return im_err_set(err, IM_EINVAL, "listen address too long");
    memcpy(host, a, hl);
    host[hl] = 0;
    if (host[0] == '[' && hl >= 2 && host[hl - 1] == ']') {
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = 0;
    }
    *any = host[0] == 0 || !strcmp(host, "0.0.0.0") || !strcmp(host, "::");
    if (!strcmp(host, "localhost")) snprintf(host, sizeof host, "127.0.0.1");
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    if (host[0] == 0) return IM_OK;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(*port);
        return IM_OK;
    }
    if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(*port);
        return IM_OK;
    }
    return im_err_set(err, IM_EINVAL, "listen address \"%s\": not an IP address", a);
}

im_rc http_server_start(const http_server_opts_t *opts, http_server_t **out, im_err_t *err)
{
    *out = NULL;
    http_server_t *s = im_calloc(1, sizeof *s);
    s->opts = *opts;
    s->start_ms = im_now_ms();
    s->reload_ok = true;
    s->reload_ms = s->start_ms;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->qmu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->qcond, &ca);
    pthread_condattr_destroy(&ca);
    pthread_cond_init(&s->wcond, NULL);
    s->qmax = opts->query_max_concurrency > 0 ? opts->query_max_concurrency : 20;
    s->rw_meta = http_rw_meta_open(opts->enable_remote_write ? opts->rw_metadata_path : NULL,
                                   opts->rw_metadata_max);
    if (opts->enable_remote_write)
        http_server_add_metrics_hook(s, http__rw_meta_metrics, s->rw_meta);
    im_rc rc;
    if (opts->web_config_file) {
        http__web_limits_t lim = {opts->bcrypt_max, opts->bcrypt_wait_ms};
        rc = http__web_open(opts->web_config_file, &lim, &s->web, err);
        if (rc) goto fail;
        http_server_add_metrics_hook(s, http__web_metrics, s->web);
    } else {
        IM_WARN("No web config file given: the API is open to anyone who can reach "
                "the listen address; use --web.config.file for TLS and basic auth",
                "addr=%s", im_logq(opts->listen_address));
    }
    struct sockaddr_storage ss;
    bool any = true;
    uint16_t port = 0;
    rc = parse_listen(opts->listen_address ? opts->listen_address : ":9470", &ss, &any, &port, err);
    if (rc) goto fail;
    /* A thread per connection (not a pool): see "Query admission" above. poll,
     * not select, so that descriptors above FD_SETSIZE work. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_POLL | MHD_USE_ERROR_LOG;
    bool tls = http__web_tls(s->web);
    if (tls) flags |= MHD_USE_TLS;
    if (any) flags |= MHD_USE_DUAL_STACK;
    int max_conns = opts->max_connections > 0 ? opts->max_connections : 512;
    struct MHD_OptionItem ops[16];
    int no = 0;
    ops[no++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s};
    ops[no++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, 300, NULL};
    ops[no++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, max_conns, NULL};
    ops[no++] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, NULL};
    ops[no++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, 256 * 1024, NULL};
    ops[no++] = (struct MHD_OptionItem){MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, NULL};
    if (!any) ops[no++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, &ss};
    if (tls) {
        /* MHD needs a certificate to start; each connection then gets the current
         * snapshot's credentials in on_connection. */
        ops[no++] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)http__web_key_pem(s->web)};
        ops[no++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0,
                                            (void *)http__web_cert_pem(s->web)};
        ops[no++] =
            (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s};
    }
    ops[no++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    s->d = MHD_start_daemon(flags, any ? port : 0, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, ops,
                            MHD_OPTION_END);
    if (!s->d && any) { /* no IPv6: retry IPv4 only */
        flags &= ~(unsigned)MHD_USE_DUAL_STACK;
        s->d = MHD_start_daemon(flags, port, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, ops,
                                MHD_OPTION_END);
    }
    if (!s->d) {
        rc = im_err_set(err, IM_EIO, "cannot listen on %s: %s",
                        opts->listen_address ? opts->listen_address : ":9470",
                        strerror(errno ? errno : EADDRINUSE));
        goto fail;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : port;
    if (pthread_create(&s->watcher, NULL, watch_main, s) != 0) {
        rc = im_err_set(err, IM_EIO, "cannot start the HTTP query watcher thread");
        MHD_stop_daemon(s->d);
        goto fail;
    }
    s->watcher_started = true;
    *out = s;
    return IM_OK;
fail:
    http__web_close(s->web);
    http_rw_meta_free(s->rw_meta);
    pthread_cond_destroy(&s->qcond);
    pthread_cond_destroy(&s->wcond);
    pthread_mutex_destroy(&s->qmu);
    pthread_mutex_destroy(&s->mu);
    im_free(s);
    return rc;
}

void http_server_stop(http_server_t *s)
{
    if (!s) return;
    /* Cancel queued and running queries so that their threads end soon, then
     * let libmicrohttpd join the connection threads, then the watcher. */
    pthread_mutex_lock(&s->qmu);
    s->qstop = true;
    for (http__req_t *r = s->qlist; r; r = r->qnext)
        __atomic_store_n(&r->cancel, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&s->qcond);
    pthread_cond_broadcast(&s->wcond);
    pthread_mutex_unlock(&s->qmu);
    if (s->d) MHD_stop_daemon(s->d);
    if (s->watcher_started) pthread_join(s->watcher, NULL);
    pthread_cond_destroy(&s->qcond);
    pthread_cond_destroy(&s->wcond);
    pthread_mutex_destroy(&s->qmu);
    scrape_config_free(s->cfg);
    http__web_close(s->web);
    http_rw_meta_free(s->rw_meta);
    im_free(s->counters);
    pthread_mutex_destroy(&s->mu);
    im_free(s);
}

uint16_t http_server_port(const http_server_t *s)
{
    return s->port;
}

void http_server_set_config(http_server_t *s, scrape_config_t *cfg)
{
    if (cfg) scrape_config_ref(cfg);
    pthread_mutex_lock(&s->mu);
    scrape_config_t *old = s->cfg;
    s->cfg = cfg;
    pthread_mutex_unlock(&s->mu);
    scrape_config_free(old);
}

void http_server_set_reload_status(http_server_t *s, bool ok, int64_t t_ms)
{
    pthread_mutex_lock(&s->mu);
    s->reload_ok = ok;
    if (ok) s->reload_ms = t_ms;
    pthread_mutex_unlock(&s->mu);
}

void http_server_set_ready(http_server_t *s, bool ready)
{
    pthread_mutex_lock(&s->mu);
    s->ready = ready;
    pthread_mutex_unlock(&s->mu);
}

void http_server_set_rules_hook(http_server_t *s, const http_rules_hook_t *h)
{
    pthread_mutex_lock(&s->mu);
    if (h)
        s->rules = *h;
    else
        memset(&s->rules, 0, sizeof s->rules);
    pthread_mutex_unlock(&s->mu);
}

void http_server_set_asset_lookup(http_server_t *s, http_asset_lookup_fn fn)
{
    pthread_mutex_lock(&s->mu);
    s->assets = fn;
    pthread_mutex_unlock(&s->mu);
}

void http_server_set_cost(http_server_t *s, http_cost_fn fn, void *ud)
{
    pthread_mutex_lock(&s->mu);
    s->cost = fn;
    s->cost_ud = ud;
    pthread_mutex_unlock(&s->mu);
}

void http_server_set_doctor(http_server_t *s, http_doctor_fn fn, void *ud)
{
    pthread_mutex_lock(&s->mu);
    s->doctor = fn;
    s->doctor_ud = ud;
    pthread_mutex_unlock(&s->mu);
}

void http_server_set_slos(http_server_t *s, http_doctor_fn fn, void *ud)
{
    pthread_mutex_lock(&s->mu);
    s->slos = fn;
    s->slos_ud = ud;
    pthread_mutex_unlock(&s->mu);
}

void http_server_set_remote_status(http_server_t *s, void (*fn)(void *ud, im_buf_t *out), void *ud)
{
    pthread_mutex_lock(&s->mu);
    s->remote_status = fn;
    s->remote_status_ud = ud;
    pthread_mutex_unlock(&s->mu);
}

void http_server_add_metrics_hook(http_server_t *s, void (*fn)(void *ud, im_buf_t *out), void *ud)
{
    pthread_mutex_lock(&s->mu);
    if (s->nmhooks < IM_ARRAY_LEN(s->mhooks)) {
        s->mhooks[s->nmhooks].fn = fn;
        s->mhooks[s->nmhooks++].ud = ud;
    }
    pthread_mutex_unlock(&s->mu);
}
