/* top.h — `infermon top`: a live view of inference engines, no storage, no daemon.
 *
 * Contract.
 *  1. Endpoints are fetched in parallel (libcurl multi, the HTTP client defaults
 *     of config/http_client.h), each body parsed with expo and added, with an
 *     `instance` label naming the endpoint, to an in-memory PromQL store that
 *     keeps only the long window (plus two intervals). Nothing touches disk
 *     unless a record file is set (OpenMetrics with timestamps, for replaying
 *     with `infermon promql-eval` or `tsdb import`).
 *  2. Every number is a PromQL instant query over that store: rates with rate(),
 *     percentiles with histogram_quantile over buckets summed across replicas
 *     (`sum by (le, model_name)`), never averaged percentiles. Per replica the
 *     same queries keep `instance` and `engine` (vLLM's data-parallel rank).
 *  3. Metric names come from the serving model (llm/serving.h): each column is
 *     one of its signals (waiting, running, KV use, preemptions, tokens, prefix
 *     hits, failures, TTFT, ITL), and per engine the names that implement it, in
 *     the model's preference order; the first name an endpoint exposes wins. So
 *     vLLM (V0 and V1 names), SGLang and the other engines the model knows are
 *     one code path. Rows are grouped by (model, engine kind): a model's label
 *     value (each engine's model label) served by vLLM and by SGLang is two
 *     groups, each merging only its own replicas' buckets (the engines'
 *     histograms differ in name and bounds). An endpoint
 *     exposing no engine's names is "not an inference engine" (dcgm-exporter's
 *     DCGM_FI_* makes it a GPU source); one that cannot be fetched is "down".
 *  4. A replica is an outlier when, among at least three replicas of its group,
 *     its TTFT p95, waiting queue or KV use is far from the median of its peers
 *     (see top_outlier in top.c); the row says which.
 *  5. The doctor (llm/doctor.h) runs over the same store through a local
 *     query backend (query/query.h) every doctor interval (top_doctor_step);
 *     samples without a `pod` label get pod = the target, as Kubernetes
 *     discovery would give each replica, so the doctor tells replicas apart.
 *  6. Not thread-safe: one top_t per thread. */
#ifndef IM_TOP_TOP_H
#define IM_TOP_TOP_H

#include <stdio.h>

#include "llm/doctor.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct top_opts {
    int64_t interval_ms;        /* between scrapes; 0 = 2 s */
    int64_t short_ms;           /* short window; 0 = max(4 x interval, 10 s) */
    int64_t long_ms;            /* long window; 0 = 1 min */
    int64_t timeout_ms;         /* per fetch; 0 = the interval */
    size_t max_body_bytes;      /* per endpoint; 0 = 64 MiB */
    int64_t doctor_interval_ms; /* between doctor runs; 0 = 10 s; < 0 = never */
} top_opts_t;

typedef enum top_ep_state {
    TOP_EP_UNKNOWN = 0, /* not fetched yet */
    TOP_EP_DOWN,        /* connection or HTTP error */
    TOP_EP_NOT_ENGINE,  /* answers, but exposes no engine or GPU metrics */
    TOP_EP_ENGINE,      /* an inference engine of the serving model (vLLM, SGLang, ...) */
    TOP_EP_GPU,         /* dcgm-exporter */
} top_ep_state_t;

typedef struct top_endpoint {
    char *target; /* as given, and the instance label */
    char *url;
    bool probed; /* found by probing localhost: hidden while it does not answer */
    top_ep_state_t state;
    const char *kind; /* the serving model's engine id ("vllm", "sglang", ...), "dcgm" or NULL */
    char error[256];
    size_t samples;
    double fetch_s;
} top_endpoint_t;

#define TOP_SPARK 24

typedef struct top_pct {
    double p50, p95, p99; /* NaN = no observations in the window */
} top_pct_t;

typedef struct top_row {
    char model[128];
    char instance[192]; /* "" on a model's merged row */
    char engine[32];    /* the `engine` label (data-parallel rank), "" if none */
    const char *kind;   /* the engine id: "vllm", "sglang", ... (never NULL) */
    int replicas;       /* merged row: rows of this group */
    double running, waiting, kv, preempt_s, tok_in_s, tok_out_s, prefix_hit, fail_s;
    top_pct_t ttft[2], itl[2]; /* [0] short window, [1] long window */
    double spark[TOP_SPARK];   /* generated tokens/s, oldest first (NaN = none) */
    char outlier[96];          /* why this replica stands out, "" if it does not */
} top_row_t;

typedef struct top_gpu {
    char instance[192], gpu[16], model[64], pod[128];
    double util, mem_copy, mem_used_ratio, power_w, temp_c; /* %, %, ratio, W, degrees C */
    double mem_used_bytes, mem_total_bytes;                 /* framebuffer used, used + free */
} top_gpu_t;

/* The doctor (llm/doctor.h) over top's own store: the last run. */
typedef struct top_doctor {
    bool enabled;
    bool ran;                          /* a run has finished (with a report or an error) */
    int64_t interval_ms;               /* between runs */
    int64_t at_ms, window_ms, next_ms; /* the last run's window end and length; the next run */
    double run_ms;                     /* how long the last run took */
    char error[512];                   /* why the last run failed, "" = it did not */
    const llm_doctor_report_t *report; /* the last run's (ranked findings), NULL after an error */
} top_doctor_t;

typedef struct top_view {
    int64_t t_ms;
    int64_t short_ms, long_ms, span_ms; /* windows; how far back data reaches */
    int scrapes;
    top_row_t *rows; /* per group (model, kind): the merged row, then its replicas */
    size_t nrows;
    top_gpu_t *gpus;
    size_t ngpus;
    const top_endpoint_t *eps;
    size_t neps;
    const top_doctor_t *doctor;
} top_view_t;

typedef struct top top_t;

/* opts may be NULL (defaults). */
top_t *top_new(const top_opts_t *opts);
void top_free(top_t *t);
const top_opts_t *top_options(const top_t *t);
/* "http(s)://host:port[/path]" or "host:port[/path]" (path default /metrics). */
IM_NODISCARD im_rc top_add_target(top_t *t, const char *target, bool probed, im_err_t *err);
/* Adds localhost's usual engine and exporter ports as probed targets. */
void top_add_probes(top_t *t);
/* Also write every sample fetched to f (OpenMetrics, timestamps; "# EOF" at
 * top_free). f stays the caller's. */
void top_set_record(top_t *t, FILE *f);
/* Fetches every endpoint once (in parallel) and stores the samples at now_ms. */
void top_scrape(top_t *t, int64_t now_ms);
/* Runs the doctor over the store, with the window top holds (the long
 * window, a step of the interval, rates over the short window), when it is due
 * (doctor_interval after the first scrape, then after each run) or when force
 * is set; at now_ms (the last scrape). Synchronous, on the caller's thread,
 * between scrapes: the store does not change during a run. A run that takes
 * more than a twentieth of the interval puts the next one 20 x its time later,
 * so the doctor takes at most ~5 % of top's time. */
void top_doctor_step(top_t *t, int64_t now_ms, bool force);
/* The rows at now_ms (view owned by t, valid until the next call or free). */
const top_view_t *top_compute(top_t *t, int64_t now_ms);

/* ---- Output ---- */
typedef enum top_sort {
    TOP_SORT_NAME = 0,
    TOP_SORT_WAITING,
    TOP_SORT_KV,
    TOP_SORT_TTFT,
    TOP_SORT_TOKENS,
    TOP_SORT_COUNT
} top_sort_t;
const char *top_sort_name(top_sort_t s);

typedef struct top_screen {
    int width, height;
    top_sort_t sort;
    const char *filter; /* substring of the model name ("" = all) */
    bool paused;
    const char *prompt; /* the filter being typed, or NULL */
    bool plain;         /* no escapes, no key line, as many lines as there are (--once) */
} top_screen_t;

/* Rows a and b belong to one group: the same model served by the same engine kind. */
bool top_row_same_group(const top_row_t *a, const top_row_t *b);

/* One frame: ANSI (cursor home, clear, bold/reverse/colour), lines cut at width. */
void top_render(const top_view_t *v, const top_screen_t *s, im_buf_t *out);
/* The view as one JSON object (NaN as null). */
void top_json(const top_view_t *v, im_buf_t *out);

#endif
