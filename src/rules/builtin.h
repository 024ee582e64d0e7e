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
 * in v0.9.2, removed in v0.12): names = RULES_NAMES_AUTO covers both with `or`;
 * OLD/NEW use one name (chosen from the names the targets expose). */
#ifndef IM_RULES_BUILTIN_H
#define IM_RULES_BUILTIN_H

#include "util/base.h"
#include "util/buf.h"

typedef enum rules_names {
    RULES_NAMES_AUTO = 0,
    RULES_NAMES_OLD,
    RULES_NAMES_NEW,
} rules_names_t;

typedef struct rules_builtin_opts {
    double ttft_p95_target_seconds; /* llm.ttft_p95_target_seconds; 0 = 2 */
    double failure_ratio;           /* llm.failure_ratio; 0 = 0.05 */
    double queue_waiting_threshold; /* llm.queue_waiting_threshold; 0 = 50 */
    double kv_cache_threshold;      /* llm.kv_cache_threshold; 0 = 0.9 */
    rules_names_t names;
} rules_builtin_opts_t;

/* Appends the rule file (YAML) for opts (NULL = defaults). */
void rules_builtin_yaml(const rules_builtin_opts_t *opts, im_buf_t *out);

/* The path under which the built-in rules are reported (/api/v1/rules "file"). */
#define RULES_BUILTIN_FILE "<builtin>/llm.rules.yml"

#endif
