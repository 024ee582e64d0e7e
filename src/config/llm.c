/* llm.c — decodes and dumps the `llm:` section (see llm.h). */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/llm.h"

static const char *const names[] = {"auto", "both", "old", "new"};

static im_rc get_pos(cfg_dec_t *d, const cfg_node_t *n, const char *key, double *out, bool ratio)
{
    im_rc rc = cfg_get_float(d, n, key, out);
    if (rc) return rc;
    if (isnan(*out) || *out < 0 || isinf(*out) || (ratio && *out > 1))
        return cfg_fail(d, cfg_get(n, key), "llm.%s must be %s, not %g", key,
                        ratio ? "between 0 and 1" : "a positive number", *out);
    return IM_OK;
}

im_rc cfg_llm_decode(cfg_dec_t *d, const cfg_node_t *n, cfg_llm_t *o)
{
    static const char *const keys[] = {"builtin_rules",
                                       "ttft_p95_target_seconds",
                                       "failure_ratio",
                                       "queue_waiting_threshold",
                                       "kv_cache_threshold",
                                       "vllm_names",
                                       "cost",
                                       "doctor",
                                       "slos",
                                       "slo_files",
                                       NULL};
    memset(o, 0, sizeof *o);
    cfg_llm_cost_init(&o->cost);
    cfg_llm_doctor_defaults(&o->doctor);
    if (!n) return IM_OK;
    o->present = true;
    im_rc rc;
    if ((rc = cfg_check_map(d, n, "llm", keys))) return rc;
    o->builtin_rules_set = cfg_get(n, "builtin_rules") != NULL;
    if ((rc = cfg_get_bool(d, n, "builtin_rules", &o->builtin_rules))) return rc;
    if ((rc = get_pos(d, n, "ttft_p95_target_seconds", &o->ttft_p95_target_seconds, false)))
        return rc;
    if ((rc = get_pos(d, n, "failure_ratio", &o->failure_ratio, true))) return rc;
    if ((rc = get_pos(d, n, "queue_waiting_threshold", &o->queue_waiting_threshold, false)))
        return rc;
    if ((rc = get_pos(d, n, "kv_cache_threshold", &o->kv_cache_threshold, true))) return rc;
    if ((rc = cfg_llm_doctor_decode(d, cfg_get_raw(n, "doctor"), &o->doctor))) return rc;
    const cfg_node_t *v = cfg_get(n, "vllm_names");
    if (v) {
        bool found = false;
        for (size_t i = 0; v->type == CFG_NODE_SCALAR && i < IM_ARRAY_LEN(names); i++)
            if (strcmp(v->str, names[i]) == 0) {
                o->vllm_names = (cfg_llm_names_t)i;
                found = true;
            }
        if (!found)
            return cfg_fail(d, v, "llm.vllm_names must be one of auto, both, old, new, not \"%s\"",
                            v->type == CFG_NODE_SCALAR ? v->str : "");
    }
    if ((rc = cfg_llm_slo_decode(d, cfg_get(n, "slos"), cfg_get(n, "slo_files"), &o->slo)))
        return rc;
    return cfg_llm_cost_decode(d, cfg_get(n, "cost"), &o->cost);
}

void cfg_llm_dump(const cfg_llm_t *l, im_buf_t *o)
{
    if (!l->present) return;
    (void)im_buf_puts(o, "llm:\n");
    if (l->builtin_rules_set)
        (void)im_buf_printf(o, "  builtin_rules: %s\n", l->builtin_rules ? "true" : "false");
    const struct {
        const char *k;
        double v;
    } nums[] = {{"ttft_p95_target_seconds", l->ttft_p95_target_seconds},
                {"failure_ratio", l->failure_ratio},
                {"queue_waiting_threshold", l->queue_waiting_threshold},
                {"kv_cache_threshold", l->kv_cache_threshold}};
    for (size_t i = 0; i < IM_ARRAY_LEN(nums); i++)
        if (nums[i].v > 0) {
            char b[32];
            for (int prec = 1; prec <= 17; prec++) { /* shortest text that reads back */
                snprintf(b, sizeof b, "%.*g", prec, nums[i].v);
                if (strtod(b, NULL) == nums[i].v) break;
            }
            (void)im_buf_printf(o, "  %s: %s\n", nums[i].k, b);
        }
    (void)im_buf_printf(o, "  vllm_names: %s\n", names[l->vllm_names]);
    cfg_llm_cost_dump(&l->cost, o);
    cfg_llm_doctor_dump(&l->doctor, o);
    cfg_llm_slo_dump(&l->slo, o);
}
