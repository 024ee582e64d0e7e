/* serving.h — the engine-neutral serving model: the causal chain of LLM serving
 * (queue -> running -> KV use -> preemptions/retractions -> TTFT/ITL -> tokens,
 * plus the GPU layer and the quota layer) as signals, and per engine the metric
 * names that implement each signal.
 *
 * Contract.
 *  1. The data is catalog/serving-signals.tsv (embedded like the other catalog
 *     TSVs; the dashboard gets the same rows as /static/serving-model.js, made
 *     by scripts/gen-catalog.py from the same file). Rows whose type is
 *     "=catalog" take type, labels, buckets and versions from the engine's own
 *     TSV (vllm-, sglang-, dcgm-, kueue-metrics.tsv) through llm/catalog.h.
 *     Parsed once on the first llm_serving_get() (thread-safe after that, like
 *     llm_catalog_get); all strings are owned by the model.
 *  2. Mappings of one engine and signal are in preference order: the newest
 *     name first, older names after it. An engine may have no mapping for a
 *     signal: that is what it lacks (docs/engines.md lists them).
 *  3. Ray Serve LLM (engine "ray-vllm") is derived: each vLLM mapping with the
 *     vllm: prefix replaced by ray_vllm_ (Ray's metrics agent) and a ReplicaId
 *     label.
 *  4. Detection works on a set of metric names (one scrape, or a store's
 *     __name__ values): an engine is present when any name of its mappings (or
 *     of its catalog families) is; for vLLM the version window and engine
 *     generation (V0/V1) follow from the catalog versions of the names seen. */
#ifndef IM_LLM_SERVING_H
#define IM_LLM_SERVING_H

#include "llm/catalog.h"
#include "util/base.h"
#include "util/buf.h"

typedef enum llm_signal {
    LLM_SIG_WAITING = 0,
    LLM_SIG_WAITING_BY_REASON,
    LLM_SIG_RUNNING,
    LLM_SIG_KV_USAGE,
    LLM_SIG_PREEMPTIONS, /* vLLM preemptions, SGLang retractions */
    LLM_SIG_TTFT,
    LLM_SIG_ITL,
    LLM_SIG_TPOT, /* per-request time per output token */
    LLM_SIG_E2E,
    LLM_SIG_QUEUE_TIME,
    LLM_SIG_PREFILL_TIME,
    LLM_SIG_DECODE_TIME,
    LLM_SIG_PROMPT_TOKENS,
    LLM_SIG_GENERATION_TOKENS,
    LLM_SIG_CACHED_TOKENS,
    LLM_SIG_PREFIX_QUERIES,
    LLM_SIG_PREFIX_HITS,
    LLM_SIG_PREFIX_HIT_RATE,
    LLM_SIG_REQUESTS_FINISHED,
    LLM_SIG_REQUESTS_FAILED,
    LLM_SIG_PREEMPTIONS_PER_REQUEST,
    LLM_SIG_MAX_SEQS,
    LLM_SIG_KV_CAPACITY,
    LLM_SIG_GPU_UTIL,
    LLM_SIG_GPU_SM_ACTIVE,
    LLM_SIG_GPU_MEM_COPY,
    LLM_SIG_GPU_FB_USED,
    LLM_SIG_GPU_POWER,
    LLM_SIG_QUOTA_PENDING,
    LLM_SIG_QUOTA_ADMITTED,
    LLM_SIG_GPU_XID,             /* dcgm: last XID code (a gauge that never resets) */
    LLM_SIG_GPU_ROW_REMAP_FAIL,  /* dcgm: row-remap failure (0/1) */
    LLM_SIG_GPU_POWER_VIOLATION, /* dcgm: microseconds of power-capped clocks */
    LLM_SIG_GPU_THERMAL_VIOLATION,
    LLM_SIG_GPU_SM_CLOCK,
    LLM_SIG_QUOTA_EVICTED, /* kueue: evictions */
    LLM_SIG_COUNT
} llm_signal_t;

/* "waiting", "kv_usage", ... (the TSV's signal column); NULL when out of range. */
const char *llm_signal_id(llm_signal_t s);
/* LLM_SIG_COUNT when unknown. */
llm_signal_t llm_signal_parse(const char *id, size_t len);

#define LLM_SERVING_MAX_ENGINES  16
#define LLM_SERVING_MAX_PREFIXES 8

typedef struct llm_engine_info {
    const char *id;          /* "vllm", "sglang", "dynamo", ... */
    const char *name;        /* "SGLang" */
    const char *model_label; /* the label naming the served model ("model_name", "model") */
    const char *prefixes[LLM_SERVING_MAX_PREFIXES]; /* name prefixes of its metrics */
    int nprefixes;
    bool all_names; /* the catalog lists every name it exposes ("all"), or only
                     * the names of its serving signals ("signals") */
    const char *source, *notes;
} llm_engine_info_t;

typedef struct llm_signal_map {
    llm_signal_t signal;
    int engine;       /* index into the engines */
    const char *name; /* exposed name a query uses (counters with _total; a
                       * histogram's family name, or its _sum for token sums) */
    llm_mtype_t type;
    llm_unit_t unit;
    const char *labels;   /* comma list ("" when none) */
    const char *buckets;  /* text ("" when none or not a histogram) */
    const char *selector; /* extra matcher, e.g. request_type="waiting" ("" = none) */
    const char *versions; /* where the name is valid (catalog text) */
    const char *source;   /* what the name was checked against */
    const char *notes;
    const llm_family_t *family; /* the catalog family (NULL if none) */
    bool derived;               /* ray-vllm rows made from vLLM's */
} llm_signal_map_t;

typedef struct llm_serving llm_serving_t;

/* The model (never NULL; a malformed embedded TSV aborts: a build bug). */
const llm_serving_t *llm_serving_get(void);
int llm_serving_engine_count(const llm_serving_t *s);
const llm_engine_info_t *llm_serving_engine(const llm_serving_t *s, int i);
int llm_serving_engine_find(const llm_serving_t *s, const char *id); /* -1 if none */
size_t llm_serving_map_count(const llm_serving_t *s);
const llm_signal_map_t *llm_serving_map(const llm_serving_t *s, size_t i);
/* The mappings of engine e for sig in preference order; returns how many there
 * are (fills at most cap). */
size_t llm_serving_maps_for(const llm_serving_t *s, int e, llm_signal_t sig,
                            const llm_signal_map_t **out, size_t cap);
/* Is name exactly a mapped name (or a histogram mapping's _bucket/_sum/_count)? */
bool llm_serving_has_name(const llm_serving_t *s, const char *name, size_t len);
/* The engine whose metric `name` is (by mapping or name prefix), or -1. */
int llm_serving_engine_of(const llm_serving_t *s, const char *name, size_t len);

/* ---- Detection ---- */
typedef bool (*llm_has_name_fn)(void *ctx, const char *name, size_t len);

typedef struct llm_detected {
    bool present[LLM_SERVING_MAX_ENGINES];
    int names_seen[LLM_SERVING_MAX_ENGINES]; /* mapped/catalog names present */
    /* vLLM: the versions every name seen exists in: [lo, hi) (known=false: open) */
    llm_version_t vllm_lo, vllm_hi;
    bool vllm_v0, vllm_v1; /* names only one generation has were seen */
} llm_detected_t;

/* Detects the engines from the names present (has(ctx, name) for each name
 * the model knows). */
void llm_serving_detect(const llm_serving_t *s, llm_has_name_fn has, void *ctx,
                        llm_detected_t *out);
/* Same over a NUL-terminated-string array. */
void llm_serving_detect_names(const llm_serving_t *s, const char *const *names, size_t n,
                              llm_detected_t *out);
/* "vLLM V1 >= v0.9.2, < v0.12.0" and the like for engine e; returns the length. */
size_t llm_detected_describe(const llm_serving_t *s, const llm_detected_t *d, int e, char *buf,
                             size_t cap);
/* The first mapping of engine e for sig whose name has() reports (NULL: none). */
const llm_signal_map_t *llm_serving_pick(const llm_serving_t *s, int e, llm_signal_t sig,
                                         llm_has_name_fn has, void *ctx);

#endif
