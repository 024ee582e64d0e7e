/* sim_int.h — internals shared by the files of src/sim (not a public contract).
 *
 * Rendering model: an endpoint is a template (families, each with pre-rendered
 * header lines and series names with their labels) plus a value array. Every
 * series line is `text + ' ' + format(v[vidx])`. Templates are built once at
 * fleet creation; vLLM pods serving the same model share one template, because
 * their label sets are identical and only values differ. */
#ifndef IM_SIM_SIM_INT_H
#define IM_SIM_SIM_INT_H

#include "util/base.h"
#include "util/buf.h"

#include "catalog/catalog_data.h"
#include "sim/sim.h"

/* ---- Value formatting ---- */
typedef enum sim_fmt {
    SIM_FMT_PY = 0,   /* prometheus_client floatToGoString: 1.0, 2.093283e+06 */
    SIM_FMT_GO,       /* client_golang: Go %g shortest: 1, 2.06158430208e+12 */
    SIM_FMT_DCGM_INT, /* dcgm-exporter INT64 fields: plain integer */
    SIM_FMT_DCGM_F,   /* dcgm-exporter DOUBLE fields: %f */
} sim_fmt_t;

/* Writes v in the given style into buf (>= 64 bytes); returns the length. */
size_t sim__fmt(double v, sim_fmt_t fmt, char *buf);
/* Python repr(float). */
size_t sim__fmt_pyrepr(double v, char *buf);

/* ---- Templates ---- */
typedef struct sim_series {
    uint32_t text_off, text_len; /* "name{labels}" in tpl->text */
    int32_t vidx;                /* index into the endpoint's value array */
    int32_t present_idx;         /* -1: always present; else only when v[present_idx] != 0 */
} sim_series_t;

typedef struct sim_family {
    uint32_t hdr_off, hdr_len; /* "# HELP ...\n# TYPE ...\n" for text 0.0.4 */
    uint32_t om_off, om_len;   /* OpenMetrics header; om_len == 0 with om_skip */
    uint32_t first, n;         /* series range */
    uint32_t group;            /* series per OpenMetrics group (histogram: nb+3) */
    uint8_t fmt;               /* sim_fmt_t */
    uint8_t om_skip;           /* _created families: not in OpenMetrics output */
} sim_family_t;

typedef struct sim_tpl {
    im_buf_t text; /* owned: all header and series text */
    sim_family_t *fams;
    int nfams, capfams;
    sim_series_t *series;
    int nseries, capseries;
    int nvalues; /* values an endpoint of this template needs */
    /* builder state */
    bool sort_labels; /* Python and Go clients sort label names; dcgm does not */
    bool le_last;     /* client_golang writes le after the sorted labels */
} sim_tpl_t;

typedef struct sim_label {
    const char *name, *value;
} sim_label_t;

void sim__tpl_init(sim_tpl_t *t, bool sort_labels);
void sim__tpl_free(sim_tpl_t *t);
/* Starts a family: `name` is the name on the HELP/TYPE lines, `om_name` the
 * OpenMetrics family name (NULL = skip in OpenMetrics), om_type its type word. */
void sim__tpl_family(sim_tpl_t *t, const char *name, const char *type, const char *help,
                     const char *om_name, const char *om_type, sim_fmt_t fmt);
/* Adds a series to the current family; returns its value index (a new one when
 * vidx < 0). Labels are sorted by name when the template sorts labels. */
int sim__tpl_series(sim_tpl_t *t, const char *name, const sim_label_t *labels, int nlabels,
                    int vidx, int present_idx);
/* Sorts the current family's series by their label text (client_golang order). */
void sim__tpl_sort_family(sim_tpl_t *t);
int sim__tpl_value(sim_tpl_t *t); /* allocates one value index */
/* Marks the current family's series as groups of n (a histogram's buckets,
 * _count and _sum; a summary's _count and _sum) for OpenMetrics output. */
void sim__tpl_group(sim_tpl_t *t, int n);

void sim__render_text(const sim_tpl_t *t, const double *v, im_buf_t *out);

/* A histogram in a value array: cumulative buckets (nb finite + 1 for +Inf,
 * which is also _count) then the sum. */
typedef struct sim_hist {
    int base; /* -1: not exposed */
    int nb;
    const double *bounds; /* borrowed (catalog or fleet-owned) */
} sim_hist_t;

static inline void sim__hist_observe(double *v, const sim_hist_t *h, double x, double n)
{
    if (h->base < 0 || n <= 0) return;
    int i = 0;
    while (i < h->nb && x > h->bounds[i]) i++;
    for (int j = i; j <= h->nb; j++) v[h->base + j] += n;
    v[h->base + h->nb + 1] += x * n;
}

/* ---- Deterministic random numbers (xoshiro256**) ---- */
typedef struct sim_rng {
    uint64_t s[4];
} sim_rng_t;
void sim__rng_seed(sim_rng_t *r, uint64_t seed);
uint64_t sim__rng_next(sim_rng_t *r);
double sim__rng_unif(sim_rng_t *r);             /* [0, 1) */
double sim__rng_exp(sim_rng_t *r, double mean); /* exponential */
double sim__rng_normal(sim_rng_t *r);           /* N(0, 1) */
double sim__rng_lognormal(sim_rng_t *r, double median, double sigma);
int64_t sim__rng_poisson(sim_rng_t *r, double lambda);

/* ---- Scenario knobs ---- */
typedef struct sim_knobs {
    double rate;          /* arrivals per second per pod at daily peak */
    double burst_prob;    /* chance per minute of a burst */
    double burst_mult;    /* burst rate multiplier */
    double prompt_median; /* tokens */
    double prompt_sigma;  /* lognormal sigma */
    double output_median; /* tokens */
    double output_sigma;
    double prefix_share;     /* fraction of requests starting with a shared prefix */
    double prefix_len;       /* mean shared prefix length, tokens */
    double deferred_frac;    /* fraction of arrivals deferred (KV transfer, LoRA budget) */
    double deferred_s;       /* mean deferral, seconds */
    double abort_frac;       /* fraction of requests a client aborts */
    double error_frac;       /* fraction of requests failing in the engine */
    double patience_s;       /* client patience while waiting: mean (exponential) or median */
    double patience_sigma;   /* 0: exponential patience; > 0: log-normal with this sigma */
    double timeout_s;        /* client timeout from arrival, waiting or preempted (0 = none) */
    double cpu_overhead_ms;  /* host time per engine step */
    double admit_per_s;      /* scheduler admissions per second (0 = unlimited) */
    double kv_factor;        /* multiplier on the KV cache size */
    double max_num_seqs;     /* batch limit */
    double daily_amp;        /* 0..1 amplitude of the daily shape */
    double batch_jobs_per_h; /* Kueue batch jobs per team per hour */
    /* engine faults and limits */
    double max_num_batched_tokens; /* token budget per engine step (0: 8192 chunks, admission
                                    * not limited by the budget: the behaviour before the knob) */
    double stall;                  /* 1: the scheduler is stuck: nothing is admitted or stepped */
    double slowdown;               /* multiplier on the engine step time (a slow replica) */
    /* GPU faults (on the pod's GPUs; gpu_index picks one of a tensor-parallel pod's GPUs) */
    double xid_code;          /* > 0: an XID error on the GPU (the gauge keeps the last one) */
    double gpu_index;         /* which of the pod's GPUs xid/row_remap/gpu_lost hit */
    double row_remap_failure; /* 1: row remapping failed (sticky, as on a real GPU) */
    double gpu_lost;          /* 1: the GPU is missing from dcgm-exporter's output */
    double throttle;          /* 0 none, 1 power cap, 2 thermal: SM clock drops, steps slow */
    double throttle_clock;    /* SM clock while throttled, MHz */
    /* scrape failures */
    double down;      /* 1: the pod's metrics endpoint answers 503 */
    double dcgm_down; /* 1: the dcgm-exporter of the pod's node answers 503 */
    /* Kueue, per team (read from the team's first pod) */
    double quota_gpus;      /* nominal GPU quota of the team's ClusterQueue (< 0: even split) */
    double borrowing_limit; /* GPUs the ClusterQueue may borrow from the cohort (< 0: unlimited) */
    double lending_limit;   /* GPUs of its unused quota it lends to the cohort (< 0: all) */
    double evict_per_h;     /* evictions of admitted batch workloads per hour (requeued) */
} sim_knobs_t;

/* Applies a built-in scenario's knobs; false if unknown. */
bool sim__scenario_preset(const char *name, sim_knobs_t *k);
/* Sets one knob by name; false if unknown. */
bool sim__knob_set(sim_knobs_t *k, const char *name, double v);
/* The values a knob accepts in scenario files; false if unknown. */
bool sim__knob_range(const char *name, double *lo, double *hi);

typedef struct sim_event {
    int64_t at_ms;   /* offset from the start */
    char preset[48]; /* "" or a preset to apply first */
    int nset;
    char names[16][32];
    double values[16];
    int pod_lo, pod_hi; /* pods affected [lo, hi]; -1 = all */
    char model[128];    /* "" or only the pods serving this model */
    char team[64];      /* "" or only the pods of this team (namespace) */
    int team_idx;       /* -1 or only the pods of the team with this index (built-ins) */
} sim_event_t;

typedef struct sim_scenario {
    char name[64];
    sim_knobs_t base;
    sim_event_t *events; /* owned, sorted by at_ms */
    int nevents;
    int64_t loop_ms; /* 0 = no loop */
} sim_scenario_t;

IM_NODISCARD im_rc sim__scenario_load(const char *name_or_path, sim_scenario_t *sc, im_err_t *err);
IM_NODISCARD im_rc sim__scenario_parse_yaml(const char *text, size_t len, sim_scenario_t *sc,
                                            im_err_t *err);
void sim__scenario_free(sim_scenario_t *sc);

#endif
