/* vllm_int.h — the simulated vLLM engine, dcgm GPUs and Kueue (private to src/sim). */
#ifndef IM_SIM_VLLM_INT_H
#define IM_SIM_VLLM_INT_H

#include "sim/sim_int.h"

/* Scalar quantities a vLLM pod publishes (one value each). */
enum sim_q {
    Q_ZERO = 0, /* always 0 (features off: external cache, multimodal, MFU) */
    Q_ONE,      /* always 1 (info metrics, sleep_state awake) */
    Q_RUNNING,
    Q_WAITING,
    Q_WAIT_CAP,
    Q_WAIT_DEF,
    Q_KV_USAGE,
    Q_GPU_PREFIX_HIT_RATE,
    Q_PREFIX_QUERIES,
    Q_PREFIX_HITS,
    Q_PREEMPT,
    Q_PROMPT,
    Q_SRC_COMPUTE,
    Q_CACHED,
    Q_RECOMPUTED,
    Q_GEN,
    Q_FIN_STOP,
    Q_FIN_LENGTH,
    Q_FIN_ABORT,
    Q_FIN_ERROR,
    Q_FIN_REP,
    Q_AVG_PROMPT_TPUT,
    Q_AVG_GEN_TPUT,
    Q_GC0,
    Q_GC1,
    Q_GC2,
    Q_GCC0,
    Q_GCC1,
    Q_GCC2,
    Q_PROC_VMEM,
    Q_PROC_RSS,
    Q_PROC_START,
    Q_PROC_CPU,
    Q_PROC_FDS,
    Q_PROC_MAXFDS,
    Q_HTTP_CHAT_2XX,
    Q_HTTP_CHAT_4XX,
    Q_HTTP_CHAT_5XX,
    Q_HTTP_MODELS_2XX,
    Q_HTTP_REQSZ_CHAT_SUM,
    Q_HTTP_REQSZ_MODELS_SUM,
    Q_HTTP_RESPSZ_CHAT_SUM,
    Q_HTTP_RESPSZ_MODELS_SUM,
    /* SGLang (sglang.c) */
    Q_SGL_USED_TOKENS,
    Q_SGL_MAX_TOKENS,
    Q_SGL_GEN_TPUT,
    Q_SGL_CACHE_HIT_RATE,
    Q_SGL_RETRACT_RECENT,  /* retracted since the last publish (the old gauge) */
    Q_SGL_RETRACT_IN_TOK,  /* cumulative */
    Q_SGL_RETRACT_OUT_TOK, /* cumulative */
    Q_SGL_PROMPT,          /* counted when a request finishes, as SGLang does */
    Q_SGL_GEN,
    Q_SGL_CACHED,
    Q_SGL_REQUESTS,
    Q_SGL_ABORTED,
    Q_COUNT
};

/* Histograms a vLLM pod observes into. */
enum sim_h {
    H_PROMPT_TOK = 0,
    H_GEN_TOK,
    H_ITER_TOK,
    H_MAX_GEN,
    H_PARAMS_N,
    H_MAX_TOKENS,
    H_TTFT,
    H_ITL,      /* per token: inter_token_latency and the old time_per_output_token */
    H_TPOT_REQ, /* per request mean */
    H_E2E,
    H_QUEUE,
    H_INFER,
    H_PREFILL,
    H_DECODE,
    H_KV_COMPUTED,
    H_FWD_MS,
    H_EXEC_MS,
    H_BEST_OF,
    H_HTTP_HIGHR,
    H_HTTP_DUR_CHAT,
    H_HTTP_DUR_MODELS,
    H_PREEMPT_REQ, /* preemptions (retractions) of a finished request */
    H_COUNT
};

#define SIM_MAX_HIST_BIND 3

typedef struct sim_vllm_layout {
    int nvalues;
    struct {
        int q, vidx;
    } * scal; /* owned: scalar quantity -> value index copies */
    int nscal, capscal;
    sim_hist_t hist[H_COUNT][SIM_MAX_HIST_BIND];
    int nhist[H_COUNT];
    int *created; /* owned: value indices of _created samples, in order */
    int ncreated, capcreated;
    int http_chat_pres_4xx, http_chat_pres_5xx; /* presence indices */
    bool v0;                                    /* V0 engine profile */
    bool has_error_reason, has_rep_reason;
} sim_vllm_layout_t;

typedef struct sim_model_spec {
    char name[128];
    double params;           /* parameters */
    double kv_bytes_per_tok; /* whole model, all layers */
    int max_model_len;
    int num_gpu_blocks;
    double weight_bytes; /* whole model */
} sim_model_spec_t;

/* Builds the vLLM template for one served model; the layout is filled on the
 * first call (lay->nvalues == 0) and checked on the next ones. */
void sim__vllm_build(sim_tpl_t *t, sim_vllm_layout_t *lay, uint32_t version,
                     const sim_model_spec_t *m, int gpus_per_pod, const double *b125, int nb125);
void sim__vllm_layout_free(sim_vllm_layout_t *lay);
/* Binds scalar quantity q to value index vidx in the layout. */
void sim__lay_bind(sim_vllm_layout_t *l, int q, int vidx);
bool sim__parse_version(const char *s, uint32_t *out);

/* ---- Engine state ---- */
typedef struct sim_req {
    double arrival, sched, first_tok, defer_until, patience_at;
    double deadline; /* client timeout from arrival (0 = none): aborted while still waiting */
    double gen;      /* generated tokens so far (fractional progress) */
    double prefill_left;
    int prompt, target, max_tokens, group;
    int cached;     /* tokens of the shared prefix (block accounting) */
    int hit_tok;    /* prompt tokens served from the prefix cache */
    int fate;       /* 0 normal, 1 abort (client), 2 error (engine) */
    double fail_at; /* generated tokens at which an error/abort strikes */
    int preempted;
} sim_req_t;

typedef struct sim_pod {
    int index, model, team, node, gpu0;
    sim_rng_t rng;
    double *v; /* owned: published values (layout nvalues) */
    double q[Q_COUNT];
    sim_knobs_t k;
    /* engine */
    sim_req_t *run; /* owned, cap max_cap */
    int nrun, caprun;
    sim_req_t *wait; /* owned ring buffer */
    int whead, nwait, capwait;
    int blocks_total, blocks_private;
    int group_nb[32]; /* blocks of each shared prefix */
    int group_ref[32];
    double group_last[32];
    bool group_res[32];
    int res_blocks; /* blocks held by resident, unreferenced prefix groups */
    double admit_credit;
    /* accounting over the last tick, for the GPU model */
    double busy_s, comp_s, mem_s, tokens_s, prefill_tok_s;
    double gpu_util, mem_util, sm_active, tensor_active, dram_active;
    double last_prompt_rate, last_gen_rate;
    double start_s;
} sim_pod_t;

#define SIM_MAX_XID 16 /* XID codes one fleet can raise (series variants per GPU) */

typedef struct sim_gpu {
    int pod; /* -1 idle */
    char uuid[48];
    double power, temp, mem_temp, energy_mj, nvlink;
    double util, mem_util, sm_active, tensor, dram, fb_used, pcie_tx, pcie_rx, sm_clock;
    /* faults */
    double xid;                      /* the last XID code (0: none yet) */
    bool remap_failed, lost;         /* row remapping failed; missing from the output */
    double uncorr_rows;              /* rows remapped for uncorrectable errors */
    double power_viol, thermal_viol; /* ns throttled */
    int pres_vidx;                   /* presence value of the GPU's series */
    int xid_pres_vidx[SIM_MAX_XID];  /* presence of each XID series variant */
} sim_gpu_t;

/* One dcgm-exporter family as the simulator serves it. */
typedef struct sim_dcgm_fam {
    const char *name, *help;
    char *help_owned; /* from the embedded TSV, or NULL */
    bool counter, is_int;
    int q; /* GQ_* quantity (dcgm.c) */
} sim_dcgm_fam_t;

/* One MIG instance on a MIG node (dcgm.c). */
typedef struct sim_mig {
    int gpu;   /* index into the MIG GPUs */
    int gi_id; /* GPU instance id */
    int team;  /* holding team, -1 idle */
    char pod[96];
    double act, target; /* graphics engine activity 0..1 */
} sim_mig_t;

/* Ground-truth totals since the start (truth.c): GPU-seconds and joules. */
typedef struct sim_truth_team {
    double reserved_s, nominal_s, borrowed_s, lent_s;  /* Kueue ClusterQueue, nvidia.com/gpu */
    double allocated_s, busy_s, busy_util_s, energy_j; /* GPUs held by the team's pods */
} sim_truth_team_t;

struct sim_kueue;

/* The serving engine of a model's pods (--engine). */
typedef enum sim_engine { SIM_ENGINE_VLLM = 0, SIM_ENGINE_SGLANG } sim_engine_t;

struct sim_fleet {
    sim_options_t o;
    uint32_t version;
    char *models_s, *teams_s; /* owned copies of the lists */
    char **models;            /* borrowed into models_s */
    int nmodels;
    char **teams;
    int nteams;
    sim_model_spec_t *specs; /* per model */
    sim_scenario_t sc;
    int next_event;
    int64_t t0_ms, now_ms, tick_ms;
    sim_rng_t rng;
    /* engines: per model (options.engine, cycled over the models) */
    uint8_t *model_engine;
    sim_vllm_layout_t slay; /* SGLang pods' layout (sglang.c) */
    /* vLLM */
    sim_vllm_layout_t lay;
    sim_tpl_t *vtpl; /* per model */
    sim_pod_t *pods;
    int npods;
    double *b125; /* owned: build_1_2_5_buckets(max_model_len) */
    int nb125;
    /* dcgm */
    int nnodes, gpus_per_node;
    sim_gpu_t *gpus; /* nnodes * gpus_per_node */
    sim_tpl_t *dtpl; /* per node */
    double **dv;     /* per node values */
    char **node_names;
    char **pod_names;
    sim_dcgm_fam_t *dfams; /* owned: the families served, in order */
    int ndfams;
    int xid_codes[SIM_MAX_XID]; /* [0] = 0, then the codes the scenario raises */
    int nxid;
    /* MIG nodes (dcgm.c) */
    int nmig, mig_per_gpu;
    const char *mig_profile;
    double mig_frac, mig_fb_mib; /* an instance's share of a GPU; its framebuffer */
    sim_gpu_t *mgpus;            /* nmig * 8 */
    sim_mig_t *minst;            /* nmig * 8 * mig_per_gpu */
    char **mig_node_names;
    sim_tpl_t *mtpl;
    double **mv;
    sim_rng_t mig_rng;
    /* ground truth (truth.c) */
    sim_truth_team_t *truth, *truth_mig; /* per team */
    sim_truth_team_t truth_idle, truth_mig_idle;
    double truth_s;
    /* kueue */
    struct sim_kueue *kq;
    /* endpoints */
    sim_endpoint_t *eps;
    int neps;
};

/* The labels a Kubernetes-discovered scrape of endpoint i carries (job, instance,
 * namespace, pod, container, model, node), as /targets lists them. Values point
 * into the fleet or into buf (cap >= 300); returns the count (<= 8). */
int sim__target_labels(const sim_fleet_t *f, int i, sim_label_t *out, char *buf, size_t cap);

/* Appends s as a quoted JSON string (/targets, /ground-truth). */
void sim__json_str(im_buf_t *b, const char *s);

/* The layout of a pod's engine. */
static inline sim_vllm_layout_t *sim__pod_lay(sim_fleet_t *f, const sim_pod_t *p)
{
    return f->model_engine && f->model_engine[p->model] == SIM_ENGINE_SGLANG ? &f->slay : &f->lay;
}
static inline bool sim__pod_sglang(const sim_fleet_t *f, const sim_pod_t *p)
{
    return f->model_engine && f->model_engine[p->model] == SIM_ENGINE_SGLANG;
}

/* ---- SGLang (sglang.c): the same batching model, SGLang's exposition ---- */
/* Parses "vllm", "sglang" or a comma list into f->model_engine (cycled over the
 * models); false on an unknown name. */
bool sim__engines_parse(sim_fleet_t *f, const char *spec, char *bad, size_t cap);
/* Builds the SGLang template of one served model (fills f->slay on first use). */
void sim__sglang_build(sim_fleet_t *f, sim_tpl_t *t, const sim_model_spec_t *m);
/* The running request SGLang retracts first (fewest output tokens, then the
 * longest prompt: the least work lost), and the accounting of a retraction. */
int sim__sglang_victim(const sim_pod_t *p);
void sim__sglang_on_retract(sim_pod_t *p, const sim_req_t *r);
/* A finished request: SGLang counts its tokens at the end. */
void sim__sglang_on_finish(sim_pod_t *p, const sim_req_t *r, int reason);
/* Per-publish quantities (gauges derived from the engine state). */
void sim__sglang_publish(sim_fleet_t *f, sim_pod_t *p, double kv_usage, int used_blocks);

void sim__pod_init(sim_fleet_t *f, sim_pod_t *p);
void sim__pod_free(sim_pod_t *p);
void sim__pod_tick(sim_fleet_t *f, sim_pod_t *p, double t0_s, double dt_s);
void sim__pod_publish(sim_fleet_t *f, sim_pod_t *p);

void sim__dcgm_build(sim_fleet_t *f);
void sim__dcgm_tick(sim_fleet_t *f, double dt_s);
void sim__dcgm_publish(sim_fleet_t *f);
void sim__dcgm_free(sim_fleet_t *f);

bool sim__mig_profile_ok(const char *name);
void sim__mig_build(sim_fleet_t *f);
void sim__mig_tick(sim_fleet_t *f, double dt_s);
void sim__mig_publish(sim_fleet_t *f);
void sim__mig_truth(sim_fleet_t *f, double dt_s);
void sim__mig_free(sim_fleet_t *f);

/* Integrates the ground truth over one tick (after every layer advanced). */
void sim__truth_tick(sim_fleet_t *f, double dt_s);
void sim__kueue_truth(sim_fleet_t *f, double dt_s);

void sim__kueue_build(sim_fleet_t *f);
void sim__kueue_tick(sim_fleet_t *f, double t_s, double dt_s);
void sim__kueue_publish(sim_fleet_t *f);
void sim__kueue_free(sim_fleet_t *f);
const sim_tpl_t *sim__kueue_tpl(const sim_fleet_t *f);
const double *sim__kueue_values(const sim_fleet_t *f);

#endif
