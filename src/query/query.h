/* query.h — the query backend: one interface through which infermon's
 * features read a Prometheus-compatible store, whichever store it is.
 *
 * Two implementations:
 *  - local (query_local_new): the PromQL engine over a storage_t (the TSDB);
 *  - remote (query_remote_new): an HTTP client of any Prometheus-compatible
 *    query API (Prometheus, VictoriaMetrics, Mimir, Thanos), with the HTTP
 *    client keys of config/http_client.h (basic auth, bearer token, TLS, proxy),
 *    extra headers, a tenant header (X-Scope-OrgID), a timeout and a response
 *    size cap.
 * Callers: `infermon run --query.backend-url` (http/ relays the five query
 * endpoints through the remote backend), `infermon lint --prometheus` (its
 * names and series), and the diagnosis and cost commands to come. Like
 * rules_storage_t and http_rules_hook_t, the backend is a function table: a
 * caller never knows which store answers.
 *
 * Operations (Prometheus' /api/v1 endpoints): instant query, range query,
 * series, label names, label values — with match[] selectors, start/end and a
 * limit — and API_GET, a read-only relay of another endpoint (metadata,
 * status/config) that only the remote backend has.
 *
 * An answer comes in one or both of two forms (query_req_t.want):
 *  - QUERY_WANT_JSON: the whole Prometheus answer, envelope included, as the
 *    store wrote it ({"status":"success","data":...}), so it can be relayed
 *    byte for byte. On an error it is a Prometheus error answer
 *    ({"status":"error","errorType":...,"error":...}) whose message names the
 *    backend, with http_status the code to send it with.
 *  - QUERY_WANT_RESULT: decoded for C callers: promql_result_t for the two
 *    queries, label sets for series, strings for names and values.
 *
 * Contract:
 *   1. query_backend_do returns IM_OK with a success answer, or an error code
 *      with err set (one sentence that names the backend: "backend
 *      http://prom:9090: ...") and, when JSON was wanted, the error answer in
 *      a->json. Timeouts are IM_ETIMEOUT (errorType "timeout", 503); a store
 *      that is down or answers 5xx is IM_EIO ("unavailable", 503); its own
 *      Prometheus error (bad_data 400, execution 422, ...) keeps its errorType
 *      and status; an answer that is not the API's JSON is IM_EPARSE
 *      ("internal", 502); an answer over the size cap is IM_ELIMIT (its error
 *      names the flag that raises the cap).
 *   2. The answer is the caller's: free it with query_answer_free (also after
 *      an error). A backend is thread-safe: any number of query_backend_do
 *      calls may run at once.
 *   3. A limit (> 0) bounds series, names and values in both forms, also when
 *      the store does not know the parameter (Prometheus before 2.51). */
#ifndef IM_QUERY_QUERY_H
#define IM_QUERY_QUERY_H

#include "config/http_client.h"
#include "promql/promql.h"
#include "storage/storage.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum query_op {
    QUERY_INSTANT,      /* /api/v1/query */
    QUERY_RANGE,        /* /api/v1/query_range */
    QUERY_SERIES,       /* /api/v1/series */
    QUERY_LABELS,       /* /api/v1/labels */
    QUERY_LABEL_VALUES, /* /api/v1/label/<label>/values */
    QUERY_API_GET,      /* GET /api/v1/<path> (remote only; JSON only) */
} query_op_t;

enum {
    QUERY_WANT_JSON = 1,   /* a->json: the Prometheus answer */
    QUERY_WANT_RESULT = 2, /* a->result / series / strs */
};

typedef struct query_req {
    query_op_t op;
    unsigned want;                  /* QUERY_WANT_*; 0 = QUERY_WANT_RESULT */
    const char *expr;               /* INSTANT, RANGE: PromQL (borrowed) */
    int64_t time_ms;                /* INSTANT: evaluation time */
    int64_t start_ms, end_ms;       /* RANGE; and SERIES/LABELS/VALUES when has_* */
    bool has_start, has_end;        /* SERIES/LABELS/VALUES: false = unbounded */
    int64_t step_ms;                /* RANGE: > 0 */
    const char *const *match;       /* match[] selectors (borrowed) */
    size_t nmatch;                  /* SERIES needs at least one */
    const char *label;              /* LABEL_VALUES: the label name (borrowed) */
    int64_t limit;                  /* SERIES/LABELS/VALUES: at most this many; 0 = all */
    int64_t timeout_ms;             /* 0 = the backend's; a smaller one wins */
    const char *path;               /* API_GET: the path under /api/v1/, e.g. "metadata" */
    const char *const *param_names; /* API_GET: query parameters (borrowed; encoded here) */
    const char *const *param_values;
    size_t nparams;
    const volatile int *cancel; /* optional: non-zero cancels (local backend) */
} query_req_t;

typedef struct query_answer {
    unsigned http_status;       /* 200, or the error's status code */
    const char *error_type;     /* NULL on success; "bad_data", "timeout", ... (static) */
    im_buf_t json;              /* WANT_JSON: owned */
    promql_result_t result;     /* WANT_RESULT, INSTANT/RANGE: owned */
    const im_labels_t **series; /* WANT_RESULT, SERIES: owned references, sorted */
    size_t nseries;
    char **strs; /* WANT_RESULT, LABELS/VALUES: owned, sorted as the store gave them */
    size_t nstrs;
} query_answer_t;

typedef struct query_backend query_backend_t;

typedef struct query_backend_vt {
    /* a is zeroed by query_backend_do; the rest is the contract above. */
    im_rc (*do_query)(query_backend_t *b, const query_req_t *r, query_answer_t *a, im_err_t *err);
    /* "local", or the URL of the remote store (for the UI and the messages). */
    const char *(*describe)(const query_backend_t *b);
    /* Appends the `data` of GET /api/v1/status/query_backend:
     * {"type":"local"|"remote","url":...,"tenant":...,"timeoutSeconds":...}. */
    void (*status_json)(const query_backend_t *b, im_buf_t *out);
    void (*free)(query_backend_t *b);
} query_backend_vt_t;

struct query_backend {
    const query_backend_vt_t *vt;
};

/* Runs r. *a is initialised here (uninitialised on entry); free it with
 * query_answer_free whatever the result. */
im_rc query_backend_do(query_backend_t *b, const query_req_t *r, query_answer_t *a, im_err_t *err);
const char *query_backend_describe(const query_backend_t *b);
void query_backend_status_json(const query_backend_t *b, im_buf_t *out);
void query_backend_free(query_backend_t *b); /* NULL is fine */
void query_answer_free(query_answer_t *a);

/* Helpers for callers that want one form. Both return the answer's code. */
im_rc query_instant(query_backend_t *b, const char *expr, int64_t t_ms, promql_result_t *out,
                    im_err_t *err);
/* Label values of `label` over [start, end] (both ms; 0 and 0 = unbounded),
 * with optional match[] selectors; *vals and *n owned by the caller (free with
 * query_strs_free). */
im_rc query_label_values(query_backend_t *b, const char *label, const char *const *match,
                         size_t nmatch, int64_t start_ms, int64_t end_ms, char ***vals, size_t *n,
                         im_err_t *err);
void query_strs_free(char **v, size_t n);

/* ---- Local: the engine over a store ----
 * Both borrowed; they must outlive the backend. */
query_backend_t *query_local_new(storage_t *storage, promql_engine_t *engine);

/* ---- Remote: a Prometheus-compatible HTTP API ---- */

#define QUERY_REMOTE_TIMEOUT_MS_DEFAULT (60 * 1000)
#define QUERY_REMOTE_MAX_BYTES_DEFAULT  ((int64_t)256 << 20)

typedef struct query_remote_opts {
    const char *url;           /* base URL, e.g. http://prom:9090 or https://mimir/prometheus */
    cfg_http_client_t http;    /* auth, TLS, proxy (borrowed; copied by query_remote_new) */
    char *const *header_names; /* extra headers (borrowed, copied) */
    char *const *header_values;
    size_t nheaders;
    const char *tenant; /* X-Scope-OrgID value; NULL = none */
    int64_t timeout_ms; /* per request; 0 = QUERY_REMOTE_TIMEOUT_MS_DEFAULT */
    int64_t max_bytes;  /* response body cap; 0 = QUERY_REMOTE_MAX_BYTES_DEFAULT */
    /* How the limits are named in errors, e.g. "--query.backend-timeout";
     * NULL = the run flags. Borrowed, static. */
    const char *timeout_flag, *max_bytes_flag;
    const char *user_agent; /* NULL = "infermon/query" */
} query_remote_opts_t;

/* Checks the URL (http:// or https://) and copies the options. */
im_rc query_remote_new(const query_remote_opts_t *o, query_backend_t **out, im_err_t *err);

/* A backend HTTP configuration file (--query.backend-config): the keys of
 * config/http_client.h plus `headers:` (a mapping of header name to value, as
 * remote_write's; Authorization is refused: use basic_auth or authorization)
 * and `tenant:` (the X-Scope-OrgID value). Unknown keys are refused. */
typedef struct query_remote_file {
    cfg_http_client_t http;
    char **header_names, **header_values; /* owned, parallel */
    size_t nheaders;
    char *tenant; /* owned, NULL = none */
} query_remote_file_t;

im_rc query_remote_config_load(const char *path, query_remote_file_t *out, im_err_t *err);
void query_remote_file_free(query_remote_file_t *f);

#endif
