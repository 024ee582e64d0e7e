/* server.h — the HTTP server: Prometheus' HTTP API v1, /metrics, lifecycle
 * endpoints, the remote-write receiver, static assets. Contract.
 *
 * Answers are byte-compatible with Prometheus 2.x's JSON (status, data,
 * errorType, error, warnings; timestamps as seconds with up to 3 decimals,
 * sample values as strings via im_fmt_float_api; Go's HTML-safe string escaping).
 * Errors carry Prometheus' errorType and status codes: bad_data 400, execution
 * 422, canceled/timeout/unavailable 503, internal 500, not_found 404.
 * Query answers are streamed: a query_range result is serialised chunk by chunk
 * into the connection (optionally through gzip), never built as one document.
 *
 * The server borrows everything in its options (store, engine, scrape manager):
 * they must outlive http_server_stop. The current configuration is handed in with
 * http_server_set_config (a reference is taken), as is readiness.
 *
 * Hooks. Subsystems that come later plug in without touching this file:
 *  - rules/alerts: http_rules_hook_t fills the `data` of /api/v1/rules and
 *    /api/v1/alerts (empty lists while unset);
 *  - extra /metrics text (rules, notifier, remote write sender);
 *  - static assets (the dashboard): a lookup function by exact path.
 * Remote write (POST /api/v1/write) answers 204 only after the samples are
 * committed to the store, whose commit writes the WAL first.
 *
 * Capacity. Every connection has its own thread (up to max_connections), so a
 * slow query never delays /-/ready, /-/healthy, /metrics or a remote write.
 * Query evaluations (/api/v1/query, /api/v1/query_range) pass a gate of
 * query_max_concurrency slots; the others wait in a queue until the query
 * timeout ("query timed out in query queue", 503), as Prometheus'. A query whose
 * client hangs up (queued or evaluating) is canceled.
 *
 * Requests are authenticated on their headers, and a Content-Length over the
 * cap is refused (413), before any of the body is read. */
#ifndef IM_HTTP_SERVER_H
#define IM_HTTP_SERVER_H

#include "promql/promql.h"
#include "scrape/config.h"
#include "scrape/scrape.h"
#include "tsdb/tsdb.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct http_server http_server_t;

typedef struct http_asset {
    const char *content_type;
    const char *etag;          /* may be NULL */
    const char *cache_control; /* may be NULL */
    const unsigned char *data; /* static for the life of the process */
    size_t len;
} http_asset_t;

/* Finds the asset for an exact path; false = 404. */
typedef bool (*http_asset_lookup_fn)(const char *path, http_asset_t *out);

typedef struct http_rules_hook {
    /* Appends the `data` object of /api/v1/rules ({"groups":[...]}); type is
     * "", "alert" or "record". */
    im_rc (*rules_json)(void *ud, const char *type, im_buf_t *out);
    /* Appends the `data` object of /api/v1/alerts ({"alerts":[...]}). */
    im_rc (*alerts_json)(void *ud, im_buf_t *out);
    void *ud;
} http_rules_hook_t;

typedef struct http_lifecycle {
    /* Reloads the configuration; IM_OK or an error with the reason. */
    im_rc (*reload)(void *ud, im_err_t *err);
    /* Asks the process to shut down. */
    void (*quit)(void *ud);
    void *ud;
} http_lifecycle_t;

typedef struct http_server_opts {
    const char *listen_address;  /* "[host]:port"; ":9470" = all interfaces */
    const char *web_config_file; /* Prometheus web-config (TLS, basic auth); NULL = none */
    tsdb_t *db;                  /* borrowed */
    promql_engine_t *engine;     /* borrowed */
    scrape_manager_t *scrape;    /* borrowed, may be NULL */
    bool enable_lifecycle;
    bool enable_remote_write;
    int64_t remote_write_max_bytes; /* compressed request cap; 0 = 32 MiB */
    bool agent; /* --agent: the query API over local data answers 422, as Prometheus' agent */
    int64_t max_request_body_bytes; /* other request bodies (forms); 0 = 16 MiB */
    int max_connections;            /* simultaneous connections (--web.max-connections); 0 = 512 */
    int query_max_concurrency; /* queries evaluated at once (--query.max-concurrency); 0 = 20 */
    http_lifecycle_t lifecycle;
    /* name/value pairs for /api/v1/status/flags, NULL-terminated (borrowed). */
    const char *const *flags;
    const char *storage_retention; /* for runtimeinfo, e.g. "15d" */
    /* Basic auth: concurrent bcrypt verifications (0 = 2) and the longest wait for
     * a place before 503 (0 = 250 ms, < 0 = none) (--web.basic-auth.bcrypt-
     * concurrency, --web.basic-auth.bcrypt-wait). */
    int bcrypt_max;
    int64_t bcrypt_wait_ms;
} http_server_opts_t;

im_rc http_server_start(const http_server_opts_t *opts, http_server_t **out, im_err_t *err);
/* Stops accepting, waits for running requests, frees the server. */
void http_server_stop(http_server_t *s);
/* The bound port (useful with port 0). */
uint16_t http_server_port(const http_server_t *s);

void http_server_set_config(http_server_t *s, scrape_config_t *cfg);
void http_server_set_reload_status(http_server_t *s, bool ok, int64_t t_ms);
void http_server_set_ready(http_server_t *s, bool ready);
void http_server_set_rules_hook(http_server_t *s, const http_rules_hook_t *h);
void http_server_set_asset_lookup(http_server_t *s, http_asset_lookup_fn fn);
/* GET /api/v1/status/remote_write answers {"status":"success","data":<fn's JSON>}
 * (the remote-write queues, for the dashboard's Targets page). */
void http_server_set_remote_status(http_server_t *s, void (*fn)(void *ud, im_buf_t *out), void *ud);
/* Extra text appended to /metrics (Prometheus text format). */
void http_server_add_metrics_hook(http_server_t *s, void (*fn)(void *ud, im_buf_t *out), void *ud);

/* ---- Pieces exposed for tests ---- */

/* Gzips in[0, n) into out (a gzip stream, zlib level: Z_DEFAULT_COMPRESSION for
 * API answers, 1 for the simulator's hot /metrics). Returns false on a zlib error
 * (out then holds nothing useful). Also used by src/sim's server. */
bool http_gzip(const char *in, size_t n, int level, im_buf_t *out);
/* Prometheus' timestamp: seconds, with ".mmm" when the ms part is not zero. */
void http_json_timestamp(im_buf_t *out, int64_t t_ms);
/* Writes a whole API answer for a result ({"status":"success","data":{...}}). */
void http_json_result(im_buf_t *out, const promql_result_t *r);

/* Decodes a snappy-compressed remote-write 1.0 WriteRequest and appends it.
 * Returns IM_OK, IM_EPARSE (malformed: err says why), or a store error. */
typedef struct http_rw_stats {
    uint64_t samples, series, out_of_order, duplicates, out_of_bounds;
} http_rw_stats_t;
im_rc http_remote_write_decode_append(tsdb_t *db, const char *body, size_t len, http_rw_stats_t *st,
                                      im_err_t *err);

#endif
