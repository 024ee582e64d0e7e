/* http_int.h — private to src/http. */
#ifndef IM_HTTP_HTTP_INT_H
#define IM_HTTP_HTTP_INT_H

#include "http/server.h"
#include "labels/json.h" /* API strings: im_json_string(..., IM_JSON_GO) */

/* A resumable serialiser of a query result into the API's JSON: the envelope
 * around promql's writer (promql.h). Zero-initialised with res set. */
typedef struct http__result_stream {
    promql_result_t res; /* owned */
    promql_json_writer_t w;
    int phase;
} http__result_stream_t;

/* Appends JSON until out grows by about `chunk` bytes or the answer ends;
 * returns true when the whole answer has been written. */
bool http__result_stream_step(http__result_stream_t *st, im_buf_t *out, size_t chunk);

/* ---- Web config (webcfg.c): TLS, basic auth, headers, rate limit ---- */
#include <microhttpd.h>

typedef enum http__client_auth {
    HTTP__CLIENT_NONE,            /* NoClientCert */
    HTTP__CLIENT_REQUEST,         /* RequestClientCert */
    HTTP__CLIENT_REQUIRE_ANY,     /* RequireAnyClientCert */
    HTTP__CLIENT_VERIFY_IF_GIVEN, /* VerifyClientCertIfGiven */
    HTTP__CLIENT_REQUIRE_VERIFY,  /* RequireAndVerifyClientCert */
} http__client_auth_t;

typedef enum http__auth {
    HTTP__AUTH_OK,
    HTTP__AUTH_UNAUTHORIZED, /* 401 + WWW-Authenticate: Basic */
    HTTP__AUTH_BUSY,         /* 503: the bcrypt pool stayed full */
    HTTP__AUTH_RATE_LIMITED, /* 429: rate_limit */
} http__auth_t;

#define HTTP__BCRYPT_MAX_DEFAULT     2
#define HTTP__BCRYPT_WAIT_MS_DEFAULT 250

typedef struct http__web_limits {
    int bcrypt_max;         /* concurrent bcrypt verifications; <= 0 = default */
    int64_t bcrypt_wait_ms; /* longest wait for a place; 0 = default, < 0 = no wait */
} http__web_limits_t;

/* One loaded web config file (immutable, refcounted). */
typedef struct http__webcfg http__webcfg_t;
/* The live web config: the current snapshot, reloaded when its files change. */
typedef struct http__web http__web_t;

/* Loads and validates the file (certificates and keys included). */
im_rc http__web_open(const char *path, const http__web_limits_t *lim, http__web_t **out,
                     im_err_t *err);
/* After every connection that used it has ended. */
void http__web_close(http__web_t *w);
/* TLS on (fixed when the server starts); NULL = no web config. */
bool http__web_tls(const http__web_t *w);
/* The certificate and key MHD starts with (valid until http__web_close). */
const char *http__web_cert_pem(const http__web_t *w);
const char *http__web_key_pem(const http__web_t *w);
/* The current snapshot, reloaded first if a file changed; release it. */
http__webcfg_t *http__web_acquire(http__web_t *w);
void http__webcfg_release(http__webcfg_t *c);
/* Before a TLS handshake: sets the session's credentials, priorities and client
 * certificate policy from the current snapshot. Returns a context for
 * http__web_conn_end (when the connection closes). */
void *http__web_conn_start(http__web_t *w, void *gnutls_session);
void http__web_conn_end(void *ctx);
/* Rate limit, then basic auth of an Authorization header value (may be NULL). */
http__auth_t http__web_authorize(http__web_t *w, const char *authorization);
int http__web_bcrypt_max(const http__web_t *w);
/* http_server_config.headers, added to every response. w may be NULL. */
void http__web_headers(http__web_t *w, struct MHD_Response *resp);
/* The web config's metrics (a /metrics hook; ud = the http__web_t). */
void http__web_metrics(void *ud, im_buf_t *out);
/* Checks a bcrypt (or any crypt(3)) hash. */
bool http__password_ok(const char *password, const char *hash);

/* ---- Requests (server.c) ---- */
#include <microhttpd.h>
#include <pthread.h>

typedef struct http__param {
    char *k, *v; /* owned, decoded */
} http__param_t;

typedef struct http__req {
    struct MHD_Connection *conn;
    const char *method, *url; /* borrowed from MHD for the request */
    im_buf_t body;
    bool body_over;
    http__param_t *params;
    size_t nparams, pcap;
    bool gzip;           /* client accepts gzip */
    const char *handler; /* metrics label */
    unsigned status;     /* set by the responders */
    /* Extra response headers (names are literals), e.g. remote write 2.0's
     * X-Prometheus-Remote-Write-*-Written, added by http__send. */
    struct {
        const char *name;
        char value[24];
    } xhdr[3];
    size_t nxhdr;
    int64_t start_ns;
    /* Query admission (server.c, guarded by the server's qmu but `cancel`). */
    volatile int cancel;     /* the engine's cancel flag: the watcher stores 1 (atomically)
                                when the client hangs up; read with __atomic_load_n */
    int qfd;                 /* the connection's socket, watched while queued or running */
    uint64_t qid;            /* registration number (0 = not registered) */
    bool qrunning;           /* holds an evaluation slot */
    struct http__req *qnext; /* in the server's qlist */
} http__req_t;

typedef struct http__counter {
    char handler[64];
    unsigned code;
    uint64_t count;
    double seconds; /* sum of durations */
} http__counter_t;

struct http_server {
    http_server_opts_t opts;
    struct MHD_Daemon *d;
    uint16_t port;
    http__web_t *web;   /* owned; NULL = no web config */
    pthread_mutex_t mu; /* guards everything below */
    scrape_config_t *cfg;
    bool ready;
    bool reload_ok;
    int64_t reload_ms;
    int64_t start_ms;
    http_rules_hook_t rules;
    http_asset_lookup_fn assets;
    struct {
        void (*fn)(void *, im_buf_t *);
        void *ud;
    } mhooks[8];
    size_t nmhooks;
    /* GET /api/v1/status/remote_write: the queues as a JSON array (under mu). */
    void (*remote_status)(void *ud, im_buf_t *out);
    void *remote_status_ud;
    http_doctor_fn doctor; /* GET /api/v1/llm/doctor (under mu) */
    void *doctor_ud;
    http_cost_fn cost; /* GET /api/v1/llm/cost (under mu) */
    void *cost_ud;
    http_doctor_fn slos; /* GET /api/v1/llm/slos (under mu) */
    void *slos_ud;
    http__counter_t *counters;
    size_t ncounters;
    uint64_t rw_requests, rw_samples, rw_failures;
    uint64_t rw2_requests, rw2_exemplars_dropped, rw2_histograms_refused;
    uint64_t otlp_requests, otlp_samples, otlp_rejected, otlp_failures; /* otlp.c */
    http_rw_meta_t *rw_meta; /* owned: metadata of remote write 2.0 (has its own lock) */
    /* Query admission (server.c): guarded by qmu, never held with mu. */
    pthread_mutex_t qmu;
    pthread_cond_t qcond;      /* CLOCK_MONOTONIC: a slot freed, a waiter canceled, stop */
    pthread_cond_t wcond;      /* the watcher: a query registered, or stop */
    int qmax;                  /* --query.max-concurrency */
    int qrunning, qwaiting;    /* queries evaluating, queries in the queue */
    http__req_t *qlist;        /* queued and running queries (watched for hang-ups) */
    uint64_t qids;             /* last registration number */
    uint64_t q_client_gone;    /* evaluations canceled because the client went away */
    uint64_t q_queue_timeouts; /* queries that timed out waiting for a slot */
    bool qstop;
    bool watcher_started;
    pthread_t watcher;
};

const char *http__param(const http__req_t *r, const char *k);
/* Sends a whole body (takes ownership of b's data). */
enum MHD_Result http__send(http_server_t *s, http__req_t *r, unsigned code, const char *ctype,
                           im_buf_t *b);
enum MHD_Result http__send_text(http_server_t *s, http__req_t *r, unsigned code, const char *text);
/* {"status":"error","errorType":..,"error":..} with the status code of the type. */
enum MHD_Result http__send_error(http_server_t *s, http__req_t *r, const char *etype,
                                 const char *msg);
/* {"status":"success","data":<data>} */
enum MHD_Result http__send_data(http_server_t *s, http__req_t *r, im_buf_t *data);
/* Streams a query result (takes ownership of *res). */
enum MHD_Result http__send_result(http_server_t *s, http__req_t *r, promql_result_t *res);

/* Query admission. Takes an evaluation slot for r, waiting in the queue while
 * --query.max-concurrency queries evaluate, until deadline_ns (im_mono_ns). From
 * this call to http__query_leave the connection is watched: when the client
 * hangs up, r->cancel becomes 1 (pass &r->cancel to the engine). Returns IM_OK
 * (a slot is held: call http__query_leave with the evaluation's result code),
 * IM_ETIMEOUT (the deadline passed in the queue) or IM_ECANCELED (the client went
 * away, or the server stops); nothing is held then. */
im_rc http__query_enter(http_server_t *s, http__req_t *r, int64_t deadline_ns);
void http__query_leave(http_server_t *s, http__req_t *r, im_rc rc);

enum MHD_Result http__api(http_server_t *s, http__req_t *r, const char *path);
/* api_v3.c: the endpoints Prometheus 3 added; *handled false when path is none of them. */
enum MHD_Result http__api_v3(http_server_t *s, http__req_t *r, const char *path, bool *handled);
/* api_search.c: /api/v1/search/{metric_names,label_names,label_values};
 * *handled false when path is none of them. */
enum MHD_Result http__api_search(http_server_t *s, http__req_t *r, const char *path, bool *handled);
/* api.c, shared with api_search.c: the label names (value_of NULL) or the
 * values of label value_of over [start, end] of the series the request's
 * match[] selects (all series without match[]), sorted and distinct; *out is
 * owned by the caller (unref each, im_free the array). false: an error answer
 * was sent (*ret). */
bool http__label_strings(http_server_t *s, http__req_t *r, const char *value_of, int64_t start,
                         int64_t end, const im_istr_t ***out, size_t *nout, enum MHD_Result *ret);
/* A time parameter as the API reads it (Unix seconds or RFC 3339), def when
 * absent; false: a bad_data answer was sent (*ret). */
bool http__get_time(http_server_t *s, http__req_t *r, const char *name, int64_t def, int64_t *out,
                    enum MHD_Result *ret);
/* routes.c: the /api/v1 endpoints (the OpenAPI document is made from them). */
#define HTTP__GET  1
#define HTTP__POST 2
typedef struct http__route {
    const char *path;    /* "/api/v1/label/{name}/values"; also the /metrics handler label */
    int methods;         /* HTTP__GET | HTTP__POST */
    const char *tag;     /* OpenAPI tag */
    const char *summary; /* one line */
    const char *params;  /* query parameters, space-separated; "x!" required */
} http__route_t;
extern const http__route_t http__routes[];
extern const size_t http__nroutes;
/* The route of a request path ("/api/v1/..."), NULL when none. */
const http__route_t *http__route_find(const char *path);
/* Appends the OpenAPI 3.1 document of http__routes. */
void http__openapi_yaml(im_buf_t *b, const char *version);
/* The version string of /api/v1/status/buildinfo (depends on --promql.compat). */
const char *http__build_version(void);
enum MHD_Result http__metrics(http_server_t *s, http__req_t *r);
enum MHD_Result http__remote_write(http_server_t *s, http__req_t *r);
/* POST /api/v1/otlp/v1/metrics (otlp.c). */
enum MHD_Result http__otlp(http_server_t *s, http__req_t *r);
#define HTTP__OTLP_PATH "/api/v1/otlp/v1/metrics"
/* Remote-write content negotiation (Content-Type, may be NULL): 1 or 2 (the
 * protocol version), or 0 with the 415 message in msg. */
int http__rw_negotiate(const char *ctype, char *msg, size_t msz);
void http__count(http_server_t *s, const char *handler, unsigned code, double secs);
/* Metrics hook (ud = the http_rw_meta_t): the remote write 2.0 metadata store. */
void http__rw_meta_metrics(void *ud, im_buf_t *out);

#endif
