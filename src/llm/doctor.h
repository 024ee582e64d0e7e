/* doctor.h — `infermon doctor`: why is serving slow, with the evidence.
 *
 * The diagnosis applies the on-call rules of thumb (DOMAIN.md) to what a store
 * holds: first the application signals say whether users hurt (TTFT, errors,
 * aborts), then the engine and GPU signals say why (KV cache full ->
 * preemptions -> queue; GPUs idle while the queue is long -> configuration;
 * memory-copy high with compute low -> a bandwidth-bound, too-small batch; ...).
 * It is written against the engine-neutral serving model (llm/serving.h): the
 * metric names come from the detected engines' mappings, so the same causes
 * are found on vLLM, SGLang and the other engines the model maps (a signal an
 * engine lacks makes the causes that need it "not enough data", never a guess).
 * It reads through a query backend (query/query.h), so it runs on the local
 * store and on any Prometheus-compatible store alike.
 *
 * Contract.
 *  1. llm_doctor_run sends a bounded set of queries (one __name__ listing, two
 *     more for renamed names, then one range query per signal and engine over
 *     [at - window, at] at one step, each grouped by model and pod, sent
 *     llm.doctor.parallel at a time) and evaluates every cause on the result;
 *     the number of queries does not grow with the number of pods or models.
 *  2. A backend that fails (down, timeout, bad answer) makes llm_doctor_run
 *     return its error code with err naming the backend: no partial diagnosis.
 *  3. The findings are ranked: severity first (critical, warning, info), then
 *     what users feel (TTFT p95 over its target, failed or aborted share), then
 *     confidence. A healthy fleet gives nothing above info. Missing data (an
 *     unknown model, an empty window, an engine without a signal) gives an info
 *     finding with cause "no-data" that says what is missing.
 *  4. Cause ids are stable (LLM_DOCTOR_CAUSES); the JSON writer's schema is
 *     documented in docs/doctor.md and docs/api.md.
 *  5. Everything in a report is owned by it; free with llm_doctor_report_free. */
#ifndef IM_LLM_DOCTOR_H
#define IM_LLM_DOCTOR_H

#include "config/llm.h"
#include "query/query.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

/* The cause ids, in no particular order (X(id)). */
#define LLM_DOCTOR_CAUSES(X)                                                                       \
    X("kv-saturation")                                                                             \
    X("compute-bound-prefill")                                                                     \
    X("traffic-surge")                                                                             \
    X("deferred-admission")                                                                        \
    X("scheduler-stall")                                                                           \
    X("memory-bandwidth-bound")                                                                    \
    X("host-bound")                                                                                \
    X("overprovisioned")                                                                           \
    X("engine-errors")                                                                             \
    X("client-timeouts")                                                                           \
    X("load-imbalance")                                                                            \
    X("gpu-fault")                                                                                 \
    X("gpu-throttle")                                                                              \
    X("quota-starved")                                                                             \
    X("target-down")                                                                               \
    X("stale-names")                                                                               \
    X("no-data")

typedef enum llm_doctor_severity {
    LLM_DOCTOR_INFO = 0,
    LLM_DOCTOR_WARNING,
    LLM_DOCTOR_CRITICAL,
} llm_doctor_severity_t;

const char *llm_doctor_severity_str(llm_doctor_severity_t s); /* "info", ... */

typedef struct llm_doctor_evidence {
    char *signal;           /* serving-model signal id ("kv_usage") or a GPU/quota field */
    char *metric;           /* the exposed name the query used */
    char *query;            /* the PromQL sent to the backend */
    char *unit;             /* "ratio", "requests", "seconds", "percent", "1/s", ... */
    double mean, max, last; /* over the window, NaN when absent */
    double threshold;       /* what it was compared with (NaN: none) */
    char *text;             /* one sentence: what it shows */
    char **pods;            /* the pods it singles out (may be 0) */
    size_t npods;
} llm_doctor_evidence_t;

typedef struct llm_doctor_alt {
    char *cause; /* a cause id */
    char *why;   /* why it was rejected */
} llm_doctor_alt_t;

typedef struct llm_doctor_flag {
    char *engine; /* "vllm", "sglang", "kubernetes", "kueue" */
    char *flag;   /* "--gpu-memory-utilization" */
    char *advice; /* "raise toward 0.95" */
} llm_doctor_flag_t;

typedef struct llm_doctor_finding {
    const char *cause; /* static cause id */
    llm_doctor_severity_t severity;
    double confidence; /* 0..1 */
    char *model;       /* "" = fleet-wide */
    char *engine;      /* "vllm", "sglang", "" */
    char **pods, **nodes;
    size_t npods, nnodes;
    int64_t since_ms;                /* when the condition began (0 = unknown) */
    bool current;                    /* holds at the end of the window (else: resolved) */
    char *summary;                   /* one sentence */
    double ttft_p95_s, failed_ratio; /* what users feel (NaN: unknown) */
    llm_doctor_evidence_t *evidence;
    size_t nevidence;
    llm_doctor_alt_t *alts;
    size_t nalts;
    char *action; /* what to do */
    char *expect; /* what to expect after */
    char *panel;  /* the dashboard panel that shows it ("kv", "ttft", ...) */
    llm_doctor_flag_t *flags;
    size_t nflags;
    double score; /* ranking key (higher first) */
} llm_doctor_finding_t;

typedef struct llm_doctor_report {
    int64_t start_ms, end_ms, step_ms;
    char *backend;  /* query_backend_describe */
    char **engines; /* detected, described ("vLLM V1 >= v0.9.2") */
    size_t nengines;
    char **models; /* the models seen (or the one asked for) */
    size_t nmodels;
    int queries;      /* queries sent */
    char **query_log; /* the range queries, each once, in the order built */
    size_t nquery_log;
    llm_doctor_finding_t *findings; /* ranked */
    size_t nfindings;
} llm_doctor_report_t;

typedef struct llm_doctor_opts {
    query_backend_t *backend; /* borrowed */
    int64_t at_ms;            /* end of the window */
    int64_t window_ms;        /* 0 = cfg->doctor.window_ms */
    const char *model;        /* NULL = every model */
    const cfg_llm_t *cfg;     /* NULL = the defaults */
    const volatile int *cancel;
} llm_doctor_opts_t;

im_rc llm_doctor_run(const llm_doctor_opts_t *o, llm_doctor_report_t *out, im_err_t *err);

/* The points of a window (window / step + 1) a run accepts. */
#define LLM_DOCTOR_MAX_POINTS 11000

/* The HTTP parameters of a diagnosis (each NULL or "" = absent): at (RFC 3339
 * or Unix seconds; absent = now_ms), window (a positive duration; absent: 0,
 * the configured window) and model ("" = every model, borrowed). The window
 * must fit LLM_DOCTOR_MAX_POINTS at dc's step. IM_EINVAL with a message naming
 * the parameter otherwise (fuzz/fuzz_doctor_params.c). */
typedef struct llm_doctor_params {
    int64_t at_ms, window_ms;
    const char *model;
} llm_doctor_params_t;
im_rc llm_doctor_params_parse(const char *at, const char *window, const char *model, int64_t now_ms,
                              const cfg_llm_doctor_t *dc, llm_doctor_params_t *out, im_err_t *err);
void llm_doctor_report_free(llm_doctor_report_t *r);
/* The worst severity of the findings (INFO when none). */
llm_doctor_severity_t llm_doctor_worst(const llm_doctor_report_t *r);

/* Writers. JSON: {"findings":[...],"window":{...},...} (docs/doctor.md). */
void llm_doctor_write_json(const llm_doctor_report_t *r, im_buf_t *out);
void llm_doctor_write_text(const llm_doctor_report_t *r, im_buf_t *out, bool color);
void llm_doctor_write_markdown(const llm_doctor_report_t *r, im_buf_t *out);

#endif
