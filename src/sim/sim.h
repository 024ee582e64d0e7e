/* sim.h — the simulated LLM-serving fleet: vLLM pods, dcgm-exporter nodes, Kueue.
 *
 * Contract:
 *  1. A fleet is created from sim_options_t and is fully deterministic: the same
 *     options (seed included) and the same sequence of sim_fleet_advance() targets
 *     give byte-identical expositions. Nothing reads files at run time except a
 *     scenario file named by options.scenario.
 *  2. Simulated time only moves forward, in fixed ticks of options.tick_ms;
 *     sim_fleet_advance(f, t) runs every tick ending at or before t.
 *  3. sim_fleet_render() appends one endpoint's exposition to `out` exactly as the
 *     real server prints it (vLLM: prometheus_client text 0.0.4 with _created
 *     families; dcgm-exporter: its Go template; Kueue: client_golang), for the
 *     vLLM version chosen in options.vllm_version.
 *  4. A fleet is not thread-safe. sim_server_t serialises its own access with a
 *     mutex; callers that share a fleet with a running server must use
 *     sim_server_lock()/sim_server_unlock() around their own calls.
 *  5. Counters only grow, histogram buckets are cumulative and _count equals the
 *     +Inf bucket, in every rendering (tests/unit/sim checks this over long runs).
 *
 * Ownership: the fleet owns everything it allocates; sim_fleet_free() releases it.
 * Strings in sim_endpoint_t are owned by the fleet and valid until it is freed. */
#ifndef IM_SIM_SIM_H
#define IM_SIM_SIM_H

#include <stdio.h>

#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct sim_fleet sim_fleet_t;

typedef struct sim_options {
    int pods;                 /* vLLM pods (default 4) */
    const char *models;       /* comma-separated served model names (borrowed) */
    int gpus_per_pod;         /* tensor-parallel size (default 1) */
    const char *teams;        /* comma-separated team namespaces (borrowed) */
    const char *scenario;     /* built-in name or path to a YAML file (borrowed) */
    const char *vllm_version; /* "0.27.1" (default), "0.10.0", "0.6.3", ... (borrowed) */
    uint64_t seed;            /* default 1 */
    int64_t start_ms;         /* simulated wall clock at t = 0 (unix ms); 0 = now */
    int64_t tick_ms;          /* model step (default 1000) */
    bool dcgm_profiling;      /* also the DCP fields default-counters.csv comments out
                               * (DCGM_FI_PROF_SM_ACTIVE, _SM_OCCUPANCY, _PIPE_FP*) */
    bool dcgm_violations;     /* also DCGM_FI_DEV_POWER_VIOLATION and _THERMAL_VIOLATION
                               * (commented out in default-counters.csv) */
    int mig_nodes;            /* extra nodes with MIG-partitioned GPUs (default 0) */
    const char *mig_profile;  /* their MIG profile: 1g.10gb (default), 2g.20gb, 3g.40gb,
                               * 7g.80gb (borrowed) */
    const char *engine;       /* serving engine: "vllm" (default), "sglang", or a comma
                               * list cycled over the models ("vllm,sglang": model 0 on
                               * vLLM, model 1 on SGLang, ...) (borrowed) */
} sim_options_t;

void sim_options_default(sim_options_t *o);

IM_NODISCARD im_rc sim_fleet_create(const sim_options_t *o, sim_fleet_t **out, im_err_t *err);
void sim_fleet_free(sim_fleet_t *f);

/* Runs every tick ending at or before t_ms (simulated unix ms). */
void sim_fleet_advance(sim_fleet_t *f, int64_t t_ms);
int64_t sim_fleet_now_ms(const sim_fleet_t *f);

typedef enum sim_ep_kind { SIM_EP_VLLM = 0, SIM_EP_DCGM, SIM_EP_KUEUE } sim_ep_kind_t;

/* One scrape target. */
typedef struct sim_endpoint {
    sim_ep_kind_t kind;
    int index;              /* pod or node index; 0 for Kueue */
    const char *path;       /* "/pods/3/metrics" */
    const char *namespace_; /* Kubernetes namespace */
    const char *pod;        /* Kubernetes pod name (vLLM and exporters) */
    const char *model;      /* served model name (serving pods only, else NULL) */
    const char *engine;     /* "vllm" or "sglang" for serving pods, else NULL */
    const char *node;       /* node name */
} sim_endpoint_t;

int sim_fleet_endpoint_count(const sim_fleet_t *f);
const sim_endpoint_t *sim_fleet_endpoint(const sim_fleet_t *f, int i);
int sim_fleet_count(const sim_fleet_t *f, sim_ep_kind_t kind);

/* False while the endpoint fails to be scraped (scenario knobs `down` for a pod,
 * `dcgm_down` for the node of a pod): the server answers 503 and --history
 * writes up == 0 and no samples for it. */
bool sim_fleet_endpoint_up(const sim_fleet_t *f, sim_ep_kind_t kind, int index);

/* Appends the endpoint's current exposition (text format 0.0.4) to out. */
IM_NODISCARD im_rc sim_fleet_render(sim_fleet_t *f, sim_ep_kind_t kind, int index, im_buf_t *out);

/* Prometheus file-SD JSON listing every endpoint. host_port is "127.0.0.1:9400";
 * with port_per_pod_base > 0, pod i is listed at host:(base+i) with path /metrics. */
IM_NODISCARD im_rc sim_fleet_targets_json(const sim_fleet_t *f, const char *host_port,
                                          int port_per_pod_base, im_buf_t *out);

/* The ground truth since the start (docs/simulator.md, "Ground truth"): per
 * team and flavor the Kueue GPU reservation and the GPUs its pods hold, their
 * activity and energy (GPU-seconds, joules); per pod requests by outcome and
 * tokens; per model the count of observations at or below each TTFT, ITL and
 * end-to-end bucket bound. Appends JSON to out. */
IM_NODISCARD im_rc sim_fleet_ground_truth_json(const sim_fleet_t *f, im_buf_t *out);

/* A summary of one pod's engine state, for tests and the CLI. */
typedef struct sim_pod_stats {
    int running, waiting, waiting_deferred, max_num_seqs;
    double kv_usage;      /* 0..1 */
    double preemptions;   /* cumulative */
    double finished[5];   /* stop, length, abort, error, repetition (cumulative) */
    double gpu_util;      /* 0..100, mean over the pod's GPUs */
    double mem_copy_util; /* 0..100 */
    double prompt_tokens, generation_tokens, prefix_hits, prefix_queries;
} sim_pod_stats_t;
void sim_fleet_pod_stats(const sim_fleet_t *f, int pod, sim_pod_stats_t *out);

/* Writes [start_ms, end_ms] every step_ms as OpenMetrics with timestamps (one
 * family at a time, ending with "# EOF"), simulating from start_ms. The fleet
 * must be freshly created with options.start_ms == start_ms. Memory is
 * series x steps x 8 bytes; more than max_bytes fails with IM_ELIMIT. */
typedef struct sim_history_stats {
    int64_t samples, bytes, series, steps;
} sim_history_stats_t;
IM_NODISCARD im_rc sim_history_write(sim_fleet_t *f, int64_t start_ms, int64_t end_ms,
                                     int64_t step_ms, size_t max_bytes, FILE *out,
                                     sim_history_stats_t *stats, im_err_t *err);

/* ---- HTTP server (libmicrohttpd, its own polling thread) ---- */
typedef struct sim_server sim_server_t;
typedef struct sim_server_options {
    const char *listen;    /* "127.0.0.1:9400", ":0" picks a free port */
    int port_per_pod_base; /* > 0: also serve pod i on port base+i at /metrics */
    double speed;          /* simulated seconds per wall second (default 1) */
} sim_server_options_t;

/* Starts serving f (borrowed; must outlive the server) and a clock thread that
 * advances it in step with wall time times speed. */
IM_NODISCARD im_rc sim_server_start(sim_fleet_t *f, const sim_server_options_t *o,
                                    sim_server_t **out, im_err_t *err);
int sim_server_port(const sim_server_t *s);
void sim_server_lock(sim_server_t *s);
void sim_server_unlock(sim_server_t *s);
/* Stops the threads and frees the server (not the fleet). NULL is a no-op. */
void sim_server_stop(sim_server_t *s);

#endif
