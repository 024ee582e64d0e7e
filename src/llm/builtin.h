/* builtin.h — infermon's built-in LLM-serving rules (llm.builtin_rules).
 *
 * Symptom alerts (few, long `for:` windows, as docs/alerting.md explains) and
 * recording rules for the dashboard's heavy queries, written as a Prometheus
 * rule file so that they load, test and export like any user file:
 *   VLLMHighTTFT            TTFT p95 above target for 10m
 *   VLLMRequestFailures     aborted/errored share of finished requests above a ratio for 10m
 *   VLLMQueueGrowing        waiting requests above a threshold and growing, with
 *                           preemptions, for 15m
 *   VLLMKVCachePinned       KV-cache use above a fraction for 15m
 * vLLM renamed some metrics (vllm:gpu_cache_usage_perc -> vllm:kv_cache_usage_perc
 * in v0.9.2, removed in v0.12): names = LLM_NAMES_AUTO covers both with `or`;
 * OLD/NEW use one name (chosen from the names the targets expose). */
#ifndef IM_LLM_BUILTIN_H
#define IM_LLM_BUILTIN_H

#include "rules/rules.h"
#include "storage/storage.h"
#include "util/base.h"
#include "util/buf.h"

typedef enum llm_names {
    LLM_NAMES_AUTO = 0,
    LLM_NAMES_OLD,
    LLM_NAMES_NEW,
} llm_names_t;

typedef struct llm_builtin_opts {
    double ttft_p95_target_seconds; /* llm.ttft_p95_target_seconds; 0 = 2 */
    double failure_ratio;           /* llm.failure_ratio; 0 = 0.05 */
    double queue_waiting_threshold; /* llm.queue_waiting_threshold; 0 = 50 */
    double kv_cache_threshold;      /* llm.kv_cache_threshold; 0 = 0.9 */
    llm_names_t names;
    /* Serving engines besides vLLM to write rules for: bit i = engine i of
     * llm/serving.h (0 = none; the generator sets it from the names the targets
     * expose). Each gets the same recording rules and four alerts under its own
     * names (<model label>:<engine>_..., e.g. SGLangHighTTFT), from the serving
     * model's mappings; vLLM's rules above are always there and unchanged. */
    uint32_t engines;
    /* Leave vLLM's rules out (export for a fleet without vLLM). */
    bool no_vllm;
} llm_builtin_opts_t;

/* Appends the rule file (YAML) for opts (NULL = defaults). */
void llm_builtin_yaml(const llm_builtin_opts_t *opts, im_buf_t *out);

/* The path under which the built-in rules are reported (/api/v1/rules "file"). */
#define LLM_BUILTIN_FILE "<builtin>/llm.rules.yml"

/* Which KV-cache metric name the scraped vLLM targets expose (series of the
 * last hour in q): only one of them: that one; both or none: LLM_NAMES_AUTO
 * (the rule reads either). q NULL: AUTO. */
llm_names_t llm_detect_vllm_names(storage_queryable_t *q);

/* The engines (bit mask as in opts.engines) besides vLLM, dcgm and Kueue that
 * the store's series of the last hour show (q NULL: 0). */
uint32_t llm_detect_engines(storage_queryable_t *q);

/* The built-in rules as a rules generator (rules/rules.h) for the daemon's
 * rule runner, with opts' thresholds. detect (llm.vllm_names: auto): opts->names
 * is ignored and the names come from llm_detect_vllm_names at each load; the
 * generator then reports a change when the detected names differ from those the
 * loaded rules were made for (the targets' vLLM version may show only later). */
void llm_builtin_generator(const llm_builtin_opts_t *opts, bool detect, rules_generator_t *out);

#endif
