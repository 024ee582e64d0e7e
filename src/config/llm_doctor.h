/* llm_doctor.h — the `llm.doctor:` sub-section: the thresholds of
 * `infermon doctor` (llm/doctor.h; every key is explained in docs/doctor.md).
 *
 *   llm:
 *     doctor:
 *       window: 30m                  default look-back of a diagnosis
 *       step: 0s                     resolution; 0 = window / 60 (at least 1s)
 *       rate_window: 2m              range of every rate()
 *       recent_share: 0.25           the part of the window that counts as "now"
 *       hold_share: 0.5              share of the recent steps a condition must hold
 *       waiting_per_pod: 5           a queue: mean waiting requests per pod at least this
 *       preemptions_per_second: 0.01 kv-saturation: preemptions (retractions) per second
 *       kv_moderate: 0.7             compute-bound-prefill, scheduler-stall: KV use below this
 *       running_ceiling: 0.97        running within this share of its window maximum = pinned
 *       compute_util: 60             compute-bound-prefill: GPU util (%) at least this
 *       prompt_tokens: 3000          compute-bound-prefill: mean prompt tokens per request
 *       surge_factor: 2              traffic-surge: arrivals this many times the baseline
 *       deferred_share: 0.5          deferred-admission: deferred share of the queue
 *       stall_tokens_per_second: 1   scheduler-stall: generated tokens/s per pod below this
 *       gpu_idle_util: 10            overprovisioned: GPU util (%) below this
 *       host_util: 25                host-bound: GPU util and memory-copy util (%) below this
 *       mem_copy_min: 60             memory-bandwidth-bound: memory-copy util (%) at least
 *       mem_util_max: 40             memory-bandwidth-bound: GPU util (%) at most
 *       mem_copy_ratio: 1.7          memory-bandwidth-bound: memory-copy / GPU util at least
 *       abort_ratio: 0.015           client-timeouts: aborted share of requests
 *       timeout_queue_seconds: 0.5   client-timeouts: mean queue time at least
 *       imbalance_factor: 3          load-imbalance: one pod this many times the median
 *       throttle_share: 0.05         gpu-throttle: share of time in power/thermal violation
 *       quota_pending: 4             quota-starved: pending workloads at least
 *       max_series: 20000            series one doctor query may return
 *       parallel: 4                  queries a doctor run sends at once
 *
 * The TTFT target, the failure ratio and the KV threshold are the llm: keys
 * ttft_p95_target_seconds, failure_ratio and kv_cache_threshold (config/llm.h),
 * shared with the built-in alert rules. Unknown keys and bad values are errors
 * with line:column naming llm.doctor.<key>. */
#ifndef IM_CONFIG_LLM_DOCTOR_H
#define IM_CONFIG_LLM_DOCTOR_H

#include "config/yaml.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct cfg_llm_doctor {
    bool present; /* an llm.doctor: mapping was given */
    int64_t window_ms, step_ms, rate_window_ms;
    double recent_share, hold_share, waiting_per_pod, preemptions_per_second, kv_moderate,
        running_ceiling, compute_util, prompt_tokens, surge_factor, deferred_share,
        stall_tokens_per_second, gpu_idle_util, host_util, mem_copy_min, mem_util_max,
        mem_copy_ratio, abort_ratio, timeout_queue_seconds, imbalance_factor, throttle_share,
        quota_pending;
    int64_t max_series, parallel;
} cfg_llm_doctor_t;

/* The defaults above (present = false). */
void cfg_llm_doctor_defaults(cfg_llm_doctor_t *out);
/* Decodes the `doctor:` mapping of llm: (n NULL: absent, defaults). */
im_rc cfg_llm_doctor_decode(cfg_dec_t *d, const cfg_node_t *n, cfg_llm_doctor_t *out);
/* Appends "  doctor:\n    key: value\n..." when the mapping was given. */
void cfg_llm_doctor_dump(const cfg_llm_doctor_t *c, im_buf_t *out);

#endif
