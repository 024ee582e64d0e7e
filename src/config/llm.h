/* llm.h — the typed `llm:` section (infermon's own; see docs/alerting.md).
 *
 *   builtin_rules: bool            default: true when rule_files is empty
 *   ttft_p95_target_seconds: float > 0, 0/absent = the built-in default (2)
 *   failure_ratio: float in (0, 1]  0/absent = default
 *   queue_waiting_threshold: float > 0
 *   kv_cache_threshold: float in (0, 1]
 *   vllm_names: auto | both | old | new   default auto
 *   cost: the cost report's sub-section (config/llm_cost.h)
 *   doctor: {...}                  the thresholds of `infermon doctor` (config/llm_doctor.h)
 *   slos: [...], slo_files: [...]  service level objectives (config/llm_slo.h, docs/slo.md)
 *
 * Unknown keys and bad values are errors with line:column, as everywhere. */
#ifndef IM_CONFIG_LLM_H
#define IM_CONFIG_LLM_H

#include "config/llm_cost.h"
#include "config/llm_doctor.h"
#include "config/llm_slo.h"
#include "config/yaml.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum cfg_llm_names {
    CFG_LLM_NAMES_AUTO, /* detect from what the targets expose */
    CFG_LLM_NAMES_BOTH,
    CFG_LLM_NAMES_OLD,
    CFG_LLM_NAMES_NEW,
} cfg_llm_names_t;

typedef struct cfg_llm {
    bool present;           /* an llm: section was given */
    bool builtin_rules_set; /* builtin_rules given (else: on when no rule_files) */
    bool builtin_rules;
    double ttft_p95_target_seconds, failure_ratio, queue_waiting_threshold,
        kv_cache_threshold; /* 0 = the built-in default */
    cfg_llm_names_t vllm_names;
    cfg_llm_cost_t cost;     /* llm.cost (owned; freed by cfg_llm_cost_free) */
    cfg_llm_doctor_t doctor; /* llm.doctor: (defaults when absent) */
    cfg_llm_slo_t slo;       /* llm.slos + llm.slo_files (owned; cfg_llm_slo_free) */
} cfg_llm_t;

/* Decodes the `llm:` mapping (NULL: absent) into *out. */
im_rc cfg_llm_decode(cfg_dec_t *d, const cfg_node_t *n, cfg_llm_t *out);
/* Appends "llm:\n  ..." when the section was given. */
void cfg_llm_dump(const cfg_llm_t *l, im_buf_t *out);

#endif
