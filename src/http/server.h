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
#include "config/config.h"
#include "query/query.h"
#include "scrape/scrape.h"
#include "storage/storage.h"
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
    storage_t *storage;          /* borrowed */
    promql_engine_t *engine;     /* borrowed */
    /* --query.backend-url: /api/v1/query, query_range, series, labels,
     * label/<name>/values and metadata answer from this store, relayed as it
     * answers (errors as Prometheus error answers naming it); NULL = the local
     * store. Borrowed. /api/v1/status/query_backend says which answers. */
    query_backend_t *backend;
    scrape_manager_t *scrape; /* borrowed, may be NULL */
    bool enable_lifecycle;
    bool enable_remote_write;
    /* --enable-feature=search-api: the /api/v1/search/ endpoints answer (else 503
     * "search API disabled", as Prometheus); their limit is capped at
     * search_max_limit (--web.search.max-limit; 0 = 10000). */
    bool enable_search;
    int64_t search_max_limit;
    bool enable_otlp; /* POST /api/v1/otlp/v1/metrics (--web.enable-otlp-receiver); body cap as
                         remote write's */
    int64_t remote_write_max_bytes; /* compressed request cap; 0 = 32 MiB */
    const char *rw_metadata_path;   /* remote write 2.0 metadata file; NULL = memory only */
    size_t rw_metadata_max; /* metric names kept (--web.remote-write-max-metadata); 0 = 100000 */
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
/* GET /api/v1/llm/doctor?at=&window=&model= (infermon doctor, docs/doctor.md):
 * fn appends the `data` object to out and returns NULL, or returns an
 * errorType ("bad_data", "unavailable", ...) with the message in out. Each
 * parameter is NULL when absent. Unset: the endpoint answers "unavailable". */
typedef const char *(*http_doctor_fn)(void *ud, const char *at, const char *window,
                                      const char *model, im_buf_t *out);
void http_server_set_doctor(http_server_t *s, http_doctor_fn fn, void *ud);
/* GET /api/v1/llm/cost?from=&to=|range=|month=&by=&team=&step= (infermon cost,
 * docs/cost.md): as the doctor's, fn reading the parameters with
 * param(req, name) (NULL when absent). */
typedef const char *(*http_param_fn)(const void *req, const char *name);
typedef const char *(*http_cost_fn)(void *ud, http_param_fn param, const void *req, im_buf_t *out);
void http_server_set_cost(http_server_t *s, http_cost_fn fn, void *ud);

/* GET /api/v1/llm/slos?at= (docs/slo.md): as the doctor's hook (window and
 * model are passed through, unused by infermon run's). */
void http_server_set_slos(http_server_t *s, http_doctor_fn fn, void *ud);
/* Extra text appended to /metrics (Prometheus text format). */
void http_server_add_metrics_hook(http_server_t *s, void (*fn)(void *ud, im_buf_t *out), void *ud);

/* ---- Pieces exposed for tests ---- */

/* Prometheus' timestamp: seconds, with ".mmm" when the ms part is not zero. */
void http_json_timestamp(im_buf_t *out, int64_t t_ms);
/* Writes a whole API answer for a result ({"status":"success","data":{...}}). */
void http_json_result(im_buf_t *out, const promql_result_t *r);

/* Decodes a snappy-compressed remote-write 1.0 WriteRequest and appends it.
 * Returns IM_OK, IM_EPARSE (malformed: err says why), or a store error. */
typedef struct http_rw_stats {
    uint64_t samples, series, out_of_order, duplicates, out_of_bounds;
} http_rw_stats_t;
im_rc http_remote_write_decode_append(storage_t *storage, const char *body, size_t len,
                                      http_rw_stats_t *st, im_err_t *err);

/* ---- Remote write 2.0 (io.prometheus.write.v2.Request) ----
 * The decoder checks the wire format only: every length against what is left
 * of the message, every field's wire type, varints of at most ten bytes. A
 * message that fails it is refused whole (400, nothing written). What the
 * references mean (symbol bounds, label pairs) is checked per series when
 * appending, so one bad series does not stop the others (a partial write, as
 * the 2.0 specification allows). The views point into req->raw. */
typedef struct http_rw2_str {
    const char *p;
    size_t len;
} http_rw2_str_t;
typedef struct http_rw2_sample {
    double v;
    int64_t t;
} http_rw2_sample_t;
typedef struct http_rw2_exemplar {
    size_t refs, nrefs; /* labels_refs: req->refs[refs, refs + nrefs) */
    double v;
    int64_t t;
} http_rw2_exemplar_t;
typedef struct http_rw2_series {
    size_t refs, nrefs;           /* labels_refs: req->refs[refs, refs + nrefs) */
    size_t samples, nsamples;     /* req->samples[samples, samples + nsamples) */
    size_t exemplars, nexemplars; /* req->exemplars[...] */
    size_t nhistograms;           /* native histograms (not decoded further) */
    uint32_t type;                /* Metadata.type: 0 unspecified .. 7 stateset */
    uint32_t help_ref, unit_ref;  /* Metadata.help_ref, unit_ref (symbols) */
    int64_t created_ms;           /* created_timestamp, 0 = none */
} http_rw2_series_t;
typedef struct http_rw2_req {
    char *raw; /* owned: the decompressed message */
    http_rw2_str_t *symbols;
    size_t nsymbols;
    uint32_t *refs; /* label references of every series and exemplar */
    size_t nrefs;
    http_rw2_sample_t *samples;
    size_t nsamples;
    http_rw2_exemplar_t *exemplars;
    size_t nexemplars;
    http_rw2_series_t *series;
    size_t nseries;
} http_rw2_req_t;

/* Decodes an uncompressed Request (p is not kept; views point into it).
 * IM_OK or IM_EPARSE with the reason; req is always valid for
 * http_rw2_req_free. */
im_rc http_rw2_decode(const uint8_t *p, size_t len, http_rw2_req_t *req, im_err_t *err);
/* Snappy-decompresses body into req->raw, then http_rw2_decode. */
im_rc http_rw2_decode_snappy(const char *body, size_t len, http_rw2_req_t *req, im_err_t *err);
void http_rw2_req_free(http_rw2_req_t *req);

/* The metadata remote write 2.0 brings, per metric name (latest wins), shown
 * by /api/v1/metadata next to the scraped metadata. Thread-safe. With a path
 * it is kept in that file (each change appended before the request is
 * answered; replayed at open), so it survives restarts; at most max metric
 * names (0 = 100000; --web.remote-write-max-metadata), new ones past it are
 * not kept (logged, counted). */
typedef struct http_rw_meta http_rw_meta_t;
http_rw_meta_t *http_rw_meta_open(const char *path, size_t max);
/* Memory only, the default maximum. */
http_rw_meta_t *http_rw_meta_new(void);

void http_rw_meta_free(http_rw_meta_t *m);
void http_rw_meta_set(http_rw_meta_t *m, const char *metric, size_t mlen, const char *type,
                      const char *help, size_t hlen, const char *unit, size_t ulen);
/* Appends every entry to *md (n entries, grown with im_realloc; target_job and
 * target_instance are ""), in the shape scrape_manager_metadata gives. */
void http_rw_meta_list(http_rw_meta_t *m, scrape_metadata_t **md, size_t *n);

typedef struct http_rw2_stats {
    uint64_t samples, histograms, exemplars; /* written (the response headers) */
    uint64_t series_refused;                 /* series not written: bad labels or references */
    uint64_t samples_refused;                /* samples refused by the store or with their series */
    uint64_t histograms_refused;             /* every native histogram sample */
    uint64_t exemplars_dropped;              /* valid but not stored (no exemplar storage) */
    uint64_t created_zero;                   /* zero samples written at a created timestamp */
} http_rw2_stats_t;
/* Appends a decoded request to storage in one appender. IM_OK: everything written.
 * IM_EPARSE: some series or samples were refused, the rest is committed;
 * *errs holds one line per refusal (at most 20, then a count), for the 400
 * answer. Any other code: nothing is written (rolled back or the commit
 * failed; err says why, a 500). meta may be NULL. */
im_rc http_rw2_append(storage_t *storage, http_rw_meta_t *meta, const http_rw2_req_t *req,
                      http_rw2_stats_t *st, im_buf_t *errs, im_err_t *err);

/* ---- OTLP metrics receiver (otlp.c, otlp_name.c; docs/otlp.md) ----
 * POST /api/v1/otlp/v1/metrics takes an OTLP/HTTP ExportMetricsServiceRequest
 * (application/x-protobuf, identity or gzip) as Prometheus 3's OTLP receiver
 * with its default settings: gauges as the metric name, monotonic cumulative
 * sums as counters (`_total`), non-monotonic sums as gauges, histograms as
 * `_bucket{le}`/`_sum`/`_count`, summaries as `{quantile}`/`_sum`/`_count`;
 * service.name (with service.namespace) → job, service.instance.id → instance,
 * the other resource attributes on a `target_info` series. Delta temporality
 * and exponential histograms are rejected per data point (partial success). */
typedef enum http_otlp_kind {
    HTTP_OTLP_GAUGE,   /* gauge, non-monotonic sum */
    HTTP_OTLP_COUNTER, /* monotonic sum */
    HTTP_OTLP_OTHER,   /* histogram, summary: no suffix from the kind */
} http_otlp_kind_t;

/* The Prometheus metric name of an OTLP metric (name, unit; otlp_name.c), NUL-
 * terminated in out (cut at cap - 1); returns its length. */
size_t http_otlp_metric_name(const char *name, size_t nlen, const char *unit, size_t ulen,
                             http_otlp_kind_t kind, char *out, size_t cap);
/* The label name of an attribute key (out as above). */
size_t http_otlp_label_name(const char *key, size_t klen, char *out, size_t cap);

typedef struct http_otlp_stats {
    uint64_t points;   /* data points in the request */
    uint64_t samples;  /* samples written */
    uint64_t rejected; /* data points not written (partial_success.rejected_data_points) */
} http_otlp_stats_t;

/* Decodes an uncompressed ExportMetricsServiceRequest and appends its samples
 * through one appender. IM_EPARSE: malformed (err says where), nothing is
 * written. IM_OK: committed; st->rejected data points were not written, errs
 * says why (for partial_success.error_message: the first reasons, then a
 * count). Any other code: a store error, nothing written. */
im_rc http_otlp_ingest(storage_t *storage, const uint8_t *p, size_t len, http_otlp_stats_t *st,
                       im_buf_t *errs, im_err_t *err);
/* OTLP/JSON (otlp_json.c): appends to out the protobuf encoding of a JSON
 * ExportMetricsServiceRequest (proto3 JSON mapping, lowerCamelCase names; the
 * fields the receiver reads). IM_EPARSE when it is not JSON or a field has the
 * wrong type. */
im_rc http_otlp_json_to_pb(const char *json, size_t len, im_buf_t *out, im_err_t *err);

#endif
