/* llm_doctor.c — decodes and dumps `llm.doctor:` (see llm_doctor.h): one table
 * of keys with their kind, bounds and default, used by the decoder, the dump and
 * the defaults alike. */
#include "util/base.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/llm_doctor.h"
#include "util/timeutil.h"

typedef enum kind { K_DUR, K_RATIO, K_POS, K_PERCENT, K_COUNT } kind_t;

typedef struct key {
    const char *name;
    kind_t kind;
    size_t off;
    double def; /* ms for durations */
} dkey_t;

#define F(n) offsetof(cfg_llm_doctor_t, n)
static const dkey_t keys[] = {
    {"window", K_DUR, F(window_ms), 30 * 60 * 1000},
    {"step", K_DUR, F(step_ms), 0},
    {"rate_window", K_DUR, F(rate_window_ms), 2 * 60 * 1000},
    {"recent_share", K_RATIO, F(recent_share), 0.25},
    {"hold_share", K_RATIO, F(hold_share), 0.5},
    {"waiting_per_pod", K_POS, F(waiting_per_pod), 5},
    {"preemptions_per_second", K_POS, F(preemptions_per_second), 0.01},
    {"kv_moderate", K_RATIO, F(kv_moderate), 0.7},
    {"running_ceiling", K_RATIO, F(running_ceiling), 0.97},
    {"compute_util", K_PERCENT, F(compute_util), 60},
    {"prompt_tokens", K_POS, F(prompt_tokens), 3000},
    {"surge_factor", K_POS, F(surge_factor), 2},
    {"deferred_share", K_RATIO, F(deferred_share), 0.5},
    {"stall_tokens_per_second", K_POS, F(stall_tokens_per_second), 1},
    {"gpu_idle_util", K_PERCENT, F(gpu_idle_util), 10},
    {"host_util", K_PERCENT, F(host_util), 25},
    {"mem_copy_min", K_PERCENT, F(mem_copy_min), 60},
    {"mem_util_max", K_PERCENT, F(mem_util_max), 40},
    {"mem_copy_ratio", K_POS, F(mem_copy_ratio), 1.7},
    {"abort_ratio", K_RATIO, F(abort_ratio), 0.015},
    {"timeout_queue_seconds", K_POS, F(timeout_queue_seconds), 0.5},
    {"imbalance_factor", K_POS, F(imbalance_factor), 3},
    {"throttle_share", K_RATIO, F(throttle_share), 0.05},
    {"quota_pending", K_POS, F(quota_pending), 4},
    {"max_series", K_COUNT, F(max_series), 20000},
    {"parallel", K_COUNT, F(parallel), 4},
};
#undef F

static int64_t *i64_at(cfg_llm_doctor_t *c, const dkey_t *k)
{
    return (int64_t *)(void *)((char *)c + k->off);
}

static double *dbl_at(cfg_llm_doctor_t *c, const dkey_t *k)
{
    return (double *)(void *)((char *)c + k->off);
}

void cfg_llm_doctor_defaults(cfg_llm_doctor_t *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < IM_ARRAY_LEN(keys); i++) {
        if (keys[i].kind == K_DUR || keys[i].kind == K_COUNT)
            *i64_at(c, &keys[i]) = (int64_t)keys[i].def;
        else
            *dbl_at(c, &keys[i]) = keys[i].def;
    }
}

static im_rc decode_key(cfg_dec_t *d, const cfg_node_t *n, const dkey_t *k, cfg_llm_doctor_t *c)
{
    const cfg_node_t *v = cfg_get(n, k->name);
    if (!v) return IM_OK;
    im_rc rc;
    if (k->kind == K_DUR) {
        int64_t ms = *i64_at(c, k);
        if ((rc = cfg_get_dur(d, n, k->name, &ms))) return rc;
        /* window and rate_window must be positive; step 0 means "window / 60" */
        if (ms < 0 || (ms == 0 && strcmp(k->name, "step") != 0))
            return cfg_fail(d, v, "llm.doctor.%s must be a positive duration", k->name);
        *i64_at(c, k) = ms;
        return IM_OK;
    }
    if (k->kind == K_COUNT) {
        uint64_t u = 0;
        if ((rc = cfg_get_u64(d, n, k->name, &u))) return rc;
        if (u == 0 || u > (uint64_t)1 << 40)
            return cfg_fail(d, v, "llm.doctor.%s must be a positive integer", k->name);
        *i64_at(c, k) = (int64_t)u;
        return IM_OK;
    }
    double x = 0;
    if ((rc = cfg_get_float(d, n, k->name, &x))) return rc;
    bool bad = isnan(x) || isinf(x) || x <= 0;
    const char *want = "a positive number";
    if (k->kind == K_RATIO) {
        bad = bad || x > 1;
        want = "a number in (0, 1]";
    } else if (k->kind == K_PERCENT) {
        bad = bad || x > 100;
        want = "a percentage in (0, 100]";
    }
    if (bad) return cfg_fail(d, v, "llm.doctor.%s must be %s, not %s", k->name, want, v->str);
    *dbl_at(c, k) = x;
    return IM_OK;
}

im_rc cfg_llm_doctor_decode(cfg_dec_t *d, const cfg_node_t *n, cfg_llm_doctor_t *c)
{
    const char *known[IM_ARRAY_LEN(keys) + 1];
    for (size_t i = 0; i < IM_ARRAY_LEN(keys); i++) known[i] = keys[i].name;
    known[IM_ARRAY_LEN(keys)] = NULL;
    cfg_llm_doctor_defaults(c);
    if (!n) return IM_OK;
    c->present = true;
    im_rc rc;
    if ((rc = cfg_check_map(d, n, "llm.doctor", known))) return rc;
    for (size_t i = 0; i < IM_ARRAY_LEN(keys); i++)
        if ((rc = decode_key(d, n, &keys[i], c))) return rc;
    if (c->recent_share * 60 < 1 && c->step_ms == 0)
        return cfg_fail(d, cfg_get(n, "recent_share"),
                        "llm.doctor.recent_share must cover at least one step (>= 1/60)");
    if (c->parallel > 64)
        return cfg_fail(d, cfg_get(n, "parallel"),
                        "llm.doctor.parallel must be at most 64 (queries sent at once)");
    return IM_OK;
}

void cfg_llm_doctor_dump(const cfg_llm_doctor_t *c, im_buf_t *o)
{
    if (!c->present) return;
    (void)im_buf_puts(o, "  doctor:\n");
    cfg_llm_doctor_t *m = (cfg_llm_doctor_t *)(uintptr_t)c; /* read only below */
    for (size_t i = 0; i < IM_ARRAY_LEN(keys); i++) {
        char b[64];
        if (keys[i].kind == K_DUR) {
            im_duration_format(*i64_at(m, &keys[i]), b, sizeof b);
        } else if (keys[i].kind == K_COUNT) {
            snprintf(b, sizeof b, "%lld", (long long)*i64_at(m, &keys[i]));
        } else {
            double v = *dbl_at(m, &keys[i]);
            for (int prec = 1; prec <= 17; prec++) { /* shortest text that reads back */
                snprintf(b, sizeof b, "%.*g", prec, v);
                if (strtod(b, NULL) == v) break;
            }
        }
        (void)im_buf_printf(o, "    %s: %s\n", keys[i].name, b);
    }
}
