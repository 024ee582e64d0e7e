/* scenario.c — built-in scenarios and the YAML scenario file (docs/simulator.md).
 *
 * A scenario is a set of knobs (sim_knobs_t) at t = 0 plus a schedule of events
 * that change knobs at given simulated offsets, for all pods or a range of them.
 * Built-in scenarios are knob presets; `traffic-spike` is healthy traffic with
 * the spike starting after two minutes, so that the change itself is visible. */
#include "util/base.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/timeutil.h"
#include "config/yaml.h"
#include "sim/sim_int.h"

#define SPIKE_AT_MS (120 * 1000)

static void healthy(sim_knobs_t *k)
{
    *k = (sim_knobs_t){
        .rate = 5.0,
        .burst_prob = 0.2,
        .burst_mult = 1.8,
        .prompt_median = 900,
        .prompt_sigma = 0.9,
        .output_median = 220,
        .output_sigma = 0.8,
        .prefix_share = 0.6,
        .prefix_len = 600,
        .deferred_frac = 0.01,
        .deferred_s = 2,
        .abort_frac = 0.004,
        .error_frac = 0.001,
        .patience_s = 600,
        .cpu_overhead_ms = 1.5,
        .admit_per_s = 0,
        .kv_factor = 1.0,
        .max_num_seqs = 256,
        .daily_amp = 0.5,
        .batch_jobs_per_h = 6,
        .max_num_batched_tokens = 0,
        .slowdown = 1,
        .throttle_clock = 1200,
        .quota_gpus = -1,
        .borrowing_limit = -1,
        .lending_limit = -1,
    };
}

static const char *const presets[] = {
    "healthy",      "traffic-spike",   "kv-pressure",  "deferred",      "memory-bound",
    "cpu-bound",    "overprovisioned", "errors",       "prefill-heavy", "scheduler-stall",
    "slow-replica", "xid-errors",      "gpu-throttle", "quota-starved", "target-down"};

#define PRESET_LIST                                                                                \
    "healthy, traffic-spike, kv-pressure, deferred, memory-bound, cpu-bound, overprovisioned, "    \
    "errors, prefill-heavy, scheduler-stall, slow-replica, xid-errors, gpu-throttle, "             \
    "quota-starved, target-down"

bool sim__scenario_preset(const char *name, sim_knobs_t *k)
{
    healthy(k);
    if (strcmp(name, "healthy") == 0) return true;
    if (strcmp(name, "traffic-spike") == 0) {
        k->rate = 40;
        k->burst_prob = 0;
        k->daily_amp = 0;
        k->prompt_median = 500;
        k->output_median = 160;
        k->patience_s = 600; /* bounds the queue: clients give up after ~10 minutes */
        return true;
    }
    if (strcmp(name, "kv-pressure") == 0) {
        k->rate = 1.6;
        k->prompt_median = 6000;
        k->prompt_sigma = 0.5;
        k->output_median = 1500;
        k->output_sigma = 0.4;
        k->prefix_share = 0.2;
        k->kv_factor = 0.35;
        k->daily_amp = 0;
        /* Clients give up: most wait a minute or two for a first token, and the
         * SDK's request timeout (5 min) ends the rest, preempted ones included.
         * This bounds the queue and TTFT. */
        k->patience_s = 90;
        k->patience_sigma = 0.8;
        k->timeout_s = 300;
        return true;
    }
    if (strcmp(name, "deferred") == 0) {
        k->rate = 0.4;
        k->deferred_frac = 1.0;
        k->deferred_s = 900;
        k->patience_s = 3600;
        k->daily_amp = 0;
        return true;
    }
    if (strcmp(name, "memory-bound") == 0) {
        k->rate = 0.7;
        k->prompt_median = 8000;
        k->prompt_sigma = 0.3;
        k->prefix_share = 0.97;
        k->prefix_len = 7500;
        k->output_median = 700;
        k->output_sigma = 0.3;
        k->daily_amp = 0;
        k->burst_prob = 0;
        return true;
    }
    if (strcmp(name, "cpu-bound") == 0) {
        k->cpu_overhead_ms = 150;
        k->admit_per_s = 3;
        k->rate = 6;
        k->daily_amp = 0;
        k->patience_s = 3600;
        return true;
    }
    if (strcmp(name, "overprovisioned") == 0) {
        k->rate = 0.05;
        k->burst_prob = 0;
        k->daily_amp = 0.3;
        k->batch_jobs_per_h = 0.5;
        return true;
    }
    if (strcmp(name, "errors") == 0) {
        k->error_frac = 0.15;
        k->abort_frac = 0.08;
        k->patience_s = 20;
        return true;
    }
    if (strcmp(name, "prefill-heavy") == 0) {
        /* Long prompts, short answers, a small step budget: prefill saturates the
         * compute while the few running requests hold a moderate share of KV. */
        k->rate = 4;
        k->prompt_median = 12000;
        k->prompt_sigma = 0.3;
        k->output_median = 60;
        k->output_sigma = 0.5;
        k->prefix_share = 0.05;
        k->max_num_batched_tokens = 2048;
        k->daily_amp = 0;
        k->burst_prob = 0;
        k->patience_s = 1800;
        return true;
    }
    /* The fault presets are healthy traffic plus the fault; the built-in
     * scenarios of the same name apply them after a while or to some pods
     * (scenario_builtin below). */
    if (strcmp(name, "scheduler-stall") == 0) {
        k->stall = 1;
        return true;
    }
    if (strcmp(name, "slow-replica") == 0) {
        k->slowdown = 4;
        return true;
    }
    if (strcmp(name, "xid-errors") == 0) {
        k->xid_code = 48;
        k->row_remap_failure = 1;
        return true;
    }
    if (strcmp(name, "gpu-throttle") == 0) {
        k->throttle = 2;
        k->throttle_clock = 1100;
        return true;
    }
    if (strcmp(name, "quota-starved") == 0) {
        k->batch_jobs_per_h = 60;
        k->borrowing_limit = 0;
        k->evict_per_h = 6;
        return true;
    }
    if (strcmp(name, "target-down") == 0) {
        k->down = 1;
        return true;
    }
    return false;
}

#define KNOBS(X)                                                                                   \
    X(rate, 0.0, 1e6)                                                                              \
    X(burst_prob, 0.0, 60.0)                                                                       \
    X(burst_mult, 0.0, 1000.0)                                                                     \
    X(prompt_median, 1.0, 1e7)                                                                     \
    X(prompt_sigma, 0.0, 10.0)                                                                     \
    X(output_median, 1.0, 1e7)                                                                     \
    X(output_sigma, 0.0, 10.0)                                                                     \
    X(prefix_share, 0.0, 1.0)                                                                      \
    X(prefix_len, 0.0, 1e7)                                                                        \
    X(deferred_frac, 0.0, 1.0)                                                                     \
    X(deferred_s, 0.0, 1e9)                                                                        \
    X(abort_frac, 0.0, 1.0)                                                                        \
    X(error_frac, 0.0, 1.0)                                                                        \
    X(patience_s, 0.0, 1e9)                                                                        \
    X(patience_sigma, 0.0, 10.0)                                                                   \
    X(timeout_s, 0.0, 1e9)                                                                         \
    X(cpu_overhead_ms, 0.0, 1e6)                                                                   \
    X(admit_per_s, 0.0, 1e9)                                                                       \
    X(kv_factor, 0.0001, 1000.0)                                                                   \
    X(max_num_seqs, 1.0, 1024.0)                                                                   \
    X(daily_amp, 0.0, 1.0)                                                                         \
    X(batch_jobs_per_h, 0.0, 1e6)                                                                  \
    X(max_num_batched_tokens, 0.0, 1e7)                                                            \
    X(stall, 0.0, 1.0)                                                                             \
    X(slowdown, 0.01, 1000.0)                                                                      \
    X(xid_code, 0.0, 1e6)                                                                          \
    X(gpu_index, 0.0, 7.0)                                                                         \
    X(row_remap_failure, 0.0, 1.0)                                                                 \
    X(gpu_lost, 0.0, 1.0)                                                                          \
    X(throttle, 0.0, 2.0)                                                                          \
    X(throttle_clock, 100.0, 1980.0)                                                               \
    X(down, 0.0, 1.0)                                                                              \
    X(dcgm_down, 0.0, 1.0)                                                                         \
    X(quota_gpus, -1.0, 1e6)                                                                       \
    X(borrowing_limit, -1.0, 1e6)                                                                  \
    X(lending_limit, -1.0, 1e6)                                                                    \
    X(evict_per_h, 0.0, 1e6)

bool sim__knob_set(sim_knobs_t *k, const char *name, double v)
{
#define KSET(f, lo, hi)                                                                            \
    if (strcmp(name, #f) == 0) {                                                                   \
        k->f = v;                                                                                  \
        return true;                                                                               \
    }
    KNOBS(KSET)
#undef KSET
    return false;
}

bool sim__knob_range(const char *name, double *lo, double *hi)
{
#define KRANGE(f, l, h)                                                                            \
    if (strcmp(name, #f) == 0) {                                                                   \
        *lo = l;                                                                                   \
        *hi = h;                                                                                   \
        return true;                                                                               \
    }
    KNOBS(KRANGE)
#undef KRANGE
    return false;
}

void sim__scenario_free(sim_scenario_t *sc)
{
    im_free(sc->events);
    sc->events = NULL;
    sc->nevents = 0;
}

static sim_event_t *add_event(sim_scenario_t *sc)
{
    sc->events = im_realloc(sc->events, sizeof *sc->events * (size_t)(sc->nevents + 1));
    sim_event_t *e = &sc->events[sc->nevents++];
    memset(e, 0, sizeof *e);
    e->pod_lo = e->pod_hi = -1;
    e->team_idx = -1;
    return e;
}

static bool is_preset(const char *name)
{
    for (size_t i = 0; i < IM_ARRAY_LEN(presets); i++)
        if (strcmp(presets[i], name) == 0) return true;
    return false;
}

static sim_event_t *ev_at(sim_scenario_t *sc, int64_t at_s, const char *preset, int pod)
{
    sim_event_t *e = add_event(sc);
    e->at_ms = at_s * 1000;
    if (preset) snprintf(e->preset, sizeof e->preset, "%s", preset);
    if (pod >= 0) e->pod_lo = e->pod_hi = pod;
    return e;
}

static void ev_set(sim_event_t *e, const char *knob, double v)
{
    snprintf(e->names[e->nset], sizeof e->names[0], "%s", knob);
    e->values[e->nset++] = v;
}

/* The built-in scenarios: a preset as the base, or healthy traffic with the
 * preset applied later or to some pods only, so that the change is visible. */
static void scenario_builtin(const char *name, sim_scenario_t *sc)
{
    snprintf(sc->name, sizeof sc->name, "%s", name);
    healthy(&sc->base);
    sim_event_t *e;
    if (strcmp(name, "traffic-spike") == 0 || strcmp(name, "scheduler-stall") == 0 ||
        strcmp(name, "gpu-throttle") == 0) {
        ev_at(sc, SPIKE_AT_MS / 1000, name, -1);
    } else if (strcmp(name, "slow-replica") == 0) {
        ev_at(sc, 0, name, 0); /* pod 0 only */
    } else if (strcmp(name, "xid-errors") == 0) {
        ev_at(sc, 120, name, 0); /* XID 48 (double-bit ECC) and a row-remap failure */
        e = ev_at(sc, 300, NULL, 0);
        ev_set(e, "xid_code", 79); /* then the GPU falls off the bus */
        ev_set(e, "gpu_lost", 1);
    } else if (strcmp(name, "quota-starved") == 0) {
        /* the first team's ClusterQueue gets busy and borrows from the cohort;
         * at 10 minutes its borrowing limit drops to 0: the lenders reclaim
         * (evictions), then its workloads wait */
        e = ev_at(sc, 0, NULL, -1);
        ev_set(e, "batch_jobs_per_h", 60);
        e->team_idx = 0;
        e = ev_at(sc, 600, name, -1);
        e->team_idx = 0;
    } else if (strcmp(name, "target-down") == 0) {
        e = ev_at(sc, 120, NULL, 0);
        ev_set(e, "down", 1); /* pod 0's endpoint fails from 2 to 7 minutes */
        e = ev_at(sc, 180, NULL, 0);
        ev_set(e, "dcgm_down", 1); /* its node's exporter from 3 to 6 minutes */
        e = ev_at(sc, 360, NULL, 0);
        ev_set(e, "dcgm_down", 0);
        e = ev_at(sc, 420, NULL, 0);
        ev_set(e, "down", 0);
    } else {
        sim__scenario_preset(name, &sc->base);
    }
}

im_rc sim__scenario_load(const char *name, sim_scenario_t *sc, im_err_t *err)
{
    memset(sc, 0, sizeof *sc);
    if (!name || !*name) name = "healthy";
    if (is_preset(name)) {
        scenario_builtin(name, sc);
        return IM_OK;
    }
    FILE *fp = fopen(name, "rb");
    if (!fp) {
        return im_err_set(err, IM_EINVAL,
                          "unknown scenario \"%s\" (built-ins: " PRESET_LIST
                          "; or a YAML file): %s",
                          name, strerror(errno));
    }
    char *buf = im_malloc(1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    im_rc rc = sim__scenario_parse_yaml(buf, n, sc, err);
    im_free(buf);
    if (rc != IM_OK && err) {
        im_err_prefix(err, "%s", name);
    }
    return rc;
}

/* ---- YAML (config/yaml.h) ---- */

static const char *scalar(const cfg_node_t *n)
{
    return n && n->type == CFG_NODE_SCALAR ? n->str : NULL;
}

static im_rc node_err(im_err_t *err, const cfg_node_t *n, const char *fmt, ...) IM_PRINTF(3, 4);
static im_rc node_err(im_err_t *err, const cfg_node_t *n, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return im_err_setpos(err, IM_EPARSE, n ? n->line : 0, n ? n->col : 0, "%s", msg);
}

static im_rc parse_number(const cfg_node_t *n, const char *s, double *out, im_err_t *err)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno || !isfinite(v))
        return node_err(err, n, "not a finite number: \"%s\"", s);
    *out = v;
    return IM_OK;
}

static im_rc parse_set(const cfg_node_t *m, sim_knobs_t *k, sim_event_t *e, im_err_t *err)
{
    if (!m || m->type != CFG_NODE_MAP) return node_err(err, m, "%s must be a mapping", "set");
    for (size_t i = 0; i + 1 < m->nkids; i += 2) {
        const cfg_node_t *kn = m->kids[i], *vn = m->kids[i + 1];
        const char *key = scalar(kn), *val = scalar(vn);
        if (!key || !val) return node_err(err, kn, "%s: expected knob: number", "set");
        double v = 0;
        im_rc rc = parse_number(vn, val, &v, err);
        if (rc != IM_OK) return rc;
        double lo, hi;
        if (!sim__knob_range(key, &lo, &hi))
            return node_err(err, kn, "unknown knob \"%s\" (docs/simulator.md lists them)", key);
        if (!(v >= lo && v <= hi))
            return node_err(err, vn, "knob %s: %s is outside [%g, %g]", key, val, lo, hi);
        if (k) sim__knob_set(k, key, v);
        if (e) {
            if (e->nset >= 16) return node_err(err, kn, "too many knobs in one event (%s)", "16");
            snprintf(e->names[e->nset], sizeof e->names[0], "%s", key);
            e->values[e->nset++] = v;
        }
    }
    return IM_OK;
}

static int yaml_cmp_event(const void *a, const void *b)
{
    const sim_event_t *x = a, *y = b;
    return (x->at_ms > y->at_ms) - (x->at_ms < y->at_ms);
}

static im_rc parse_event(const cfg_node_t *en, sim_scenario_t *sc, im_err_t *err)
{
    if (en->type != CFG_NODE_MAP)
        return node_err(err, en, "%s",
                        "an event is a mapping (at, scenario, set, pods, model, team)");
    sim_event_t *e = add_event(sc);
    bool have_at = false;
    for (size_t q = 0; q + 1 < en->nkids; q += 2) {
        const cfg_node_t *ek = en->kids[q], *ev = en->kids[q + 1];
        const char *k2 = scalar(ek), *v2 = scalar(ev);
        im_rc rc;
        if (!k2) return node_err(err, ek, "%s", "keys must be strings");
        if (strcmp(k2, "at") == 0) {
            if (!v2 || im_duration_parse(v2, strlen(v2), &e->at_ms, NULL) != IM_OK)
                return node_err(err, ev, "at: not a duration: \"%s\"", v2 ? v2 : "");
            have_at = true;
        } else if (strcmp(k2, "scenario") == 0) {
            sim_knobs_t probe;
            if (!v2 || !sim__scenario_preset(v2, &probe))
                return node_err(err, ev, "unknown scenario \"%s\"", v2 ? v2 : "");
            snprintf(e->preset, sizeof e->preset, "%s", v2);
        } else if (strcmp(k2, "set") == 0) {
            if ((rc = parse_set(ev, NULL, e, err)) != IM_OK) return rc;
        } else if (strcmp(k2, "pods") == 0) {
            char *end;
            long lo = v2 ? strtol(v2, &end, 10) : -1;
            long hi = lo;
            if (v2 && *end == '-') hi = strtol(end + 1, &end, 10);
            if (!v2 || *end != '\0' || lo < 0 || hi < lo)
                return node_err(err, ev, "pods: expected N or N-M, got \"%s\"", v2 ? v2 : "");
            e->pod_lo = (int)lo;
            e->pod_hi = (int)hi;
        } else if (strcmp(k2, "model") == 0 || strcmp(k2, "team") == 0) {
            bool model = k2[0] == 'm';
            size_t cap = model ? sizeof e->model : sizeof e->team;
            if (!v2 || !*v2 || strlen(v2) >= cap)
                return node_err(err, ev, "%s: expected a %s name (at most %zu bytes)", k2,
                                model ? "served model" : "team namespace", cap - 1);
            snprintf(model ? e->model : e->team, cap, "%s", v2);
        } else {
            return node_err(err, ek,
                            "unknown event key \"%s\" (at, scenario, set, pods, model, team)", k2);
        }
    }
    if (!have_at) return node_err(err, en, "%s", "an event needs \"at\"");
    return IM_OK;
}

im_rc sim__scenario_parse_yaml(const char *text, size_t len, sim_scenario_t *sc, im_err_t *err)
{
    memset(sc, 0, sizeof *sc);
    healthy(&sc->base);
    snprintf(sc->name, sizeof sc->name, "custom");
    cfg_node_t *root = NULL;
    cfg_yaml_problem_t prob;
    im_rc rc = cfg_parse_yaml_ex(text, len, NULL, &root, err, &prob);
    if (rc != IM_OK) {
        if (prob.syntax)
            im_err_setpos(err, IM_EPARSE, prob.line, prob.col, "YAML: %s",
                          prob.problem[0] ? prob.problem : "syntax error");
        return rc;
    }
    if (!root || root->type != CFG_NODE_MAP) {
        rc = node_err(err, root, "%s", "a scenario file is a mapping (name, base, set, events)");
        goto out;
    }
    /* First pass: base, so that set applies on top of it regardless of order. */
    for (size_t i = 0; i + 1 < root->nkids; i += 2) {
        const char *key = scalar(root->kids[i]);
        const cfg_node_t *vn = root->kids[i + 1];
        if (key && strcmp(key, "base") == 0) {
            const char *v = scalar(vn);
            if (!v || !sim__scenario_preset(v, &sc->base)) {
                rc = node_err(err, vn, "unknown base scenario \"%s\"", v ? v : "");
                goto out;
            }
        }
    }
    for (size_t i = 0; i + 1 < root->nkids; i += 2) {
        const cfg_node_t *kn = root->kids[i], *vn = root->kids[i + 1];
        const char *key = scalar(kn);
        if (!key) {
            rc = node_err(err, kn, "%s", "keys must be strings");
            goto out;
        }
        if (strcmp(key, "base") == 0) continue;
        if (strcmp(key, "name") == 0) {
            const char *v = scalar(vn);
            snprintf(sc->name, sizeof sc->name, "%s", v ? v : "custom");
        } else if (strcmp(key, "set") == 0) {
            if ((rc = parse_set(vn, &sc->base, NULL, err)) != IM_OK) goto out;
        } else if (strcmp(key, "loop") == 0) {
            const char *v = scalar(vn);
            if (!v || im_duration_parse(v, strlen(v), &sc->loop_ms, NULL) != IM_OK) {
                rc = node_err(err, vn, "loop: not a duration: \"%s\"", v ? v : "");
                goto out;
            }
        } else if (strcmp(key, "events") == 0) {
            if (vn->type != CFG_NODE_SEQ) {
                rc = node_err(err, vn, "%s", "events must be a list");
                goto out;
            }
            for (size_t k = 0; k < vn->nkids; k++)
                if ((rc = parse_event(vn->kids[k], sc, err)) != IM_OK) goto out;
        } else {
            rc = node_err(err, kn, "unknown key \"%s\" (name, base, set, loop, events)", key);
            goto out;
        }
    }
    if (sc->nevents > 1) qsort(sc->events, (size_t)sc->nevents, sizeof *sc->events, yaml_cmp_event);
out:
    cfg_node_free(root);
    if (rc != IM_OK) sim__scenario_free(sc);
    return rc;
}
