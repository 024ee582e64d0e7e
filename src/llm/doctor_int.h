/* doctor_int.h — private to llm/doctor*.c: the per-step series the rules read
 * and the finding builder, shared by the gatherer (doctor.c), the rules
 * (doctor_rules.c) and the unit tests of the rules. */
#ifndef IM_LLM_DOCTOR_INT_H
#define IM_LLM_DOCTOR_INT_H

#include "config/llm_doctor.h"
#include "llm/doctor.h"
#include "util/base.h"

/* One pod of one model: per-step values (NaN = no sample at that step). */
typedef struct doc_pod {
    char *name, *node; /* owned */
    double *waiting, *running, *kv, *ttft_mean, *itl_mean, *gen, *gpu_util;
} doc_pod_t;

/* A per-step series with the query that produced it (owned). */
typedef struct doc_sig {
    double *v;    /* nsteps values, NaN = none; NULL = the signal is absent */
    char *metric; /* exposed name the query used */
    char *query;
} doc_sig_t;

enum {
    DS_WAITING,
    DS_RUNNING,
    DS_KV,
    DS_PREEMPT,
    DS_TTFT_P95,
    DS_TTFT_MEAN,
    DS_QUEUE_MEAN,
    DS_PREFILL_MEAN,
    DS_ITL_MEAN,
    DS_PROMPT,   /* prompt tokens / s */
    DS_GEN,      /* generated tokens / s */
    DS_FINISHED, /* requests / s, every outcome */
    DS_ERRORS,   /* requests / s failed in the engine */
    DS_ABORTS,   /* requests / s aborted (SGLang: aborts and errors) */
    DS_DEFERRED, /* waiting with reason deferred */
    DS_GPU_UTIL, /* mean over the model's GPUs, % */
    DS_MEM_COPY,
    DS_COUNT
};

/* One model of one engine. */
typedef struct doc_model {
    char *model;        /* owned */
    const char *engine; /* "vllm", ... (static) */
    const char *ename;  /* "vLLM" */
    bool errors_mixed;  /* the engine counts errors together with aborts */
    doc_sig_t s[DS_COUNT];
    doc_pod_t *pods;
    size_t npods;
} doc_model_t;

/* A GPU (dcgm-exporter row) over the window. */
typedef struct doc_gpu {
    char *node, *gpu, *pod; /* owned; pod "" = no workload */
    const char *model;      /* the model its pod serves (borrowed), NULL */
    double *xid, *remap, *pviol, *tviol, *clock, *util; /* NULL = absent */
} doc_gpu_t;

typedef struct doc_queue {
    char *name; /* cluster_queue */
    double *pending, *evicted;
} doc_queue_t;

typedef struct doc_target {
    char *job, *instance, *pod; /* owned */
    const char *model;
    double *up;
} doc_target_t;

typedef struct doc_rename {
    char *old_name, *new_name; /* owned; new_name "" = gone without successor */
    const char *engine;
} doc_rename_t;

/* Everything the rules read. */
typedef struct doc_data {
    int64_t start_ms, step_ms;
    size_t nsteps, nrecent; /* the last nrecent steps are "now" */
    cfg_llm_doctor_t dc;
    double ttft_target_s, failure_ratio, kv_threshold;
    doc_model_t *models;
    size_t nmodels;
    doc_gpu_t *gpus;
    size_t ngpus;
    char *gpu_query[6]; /* per GPU signal: util, xid, remap, power/thermal violation, clock */
    doc_queue_t *queues;
    size_t nqueues;
    char *queue_query, *evict_query;
    doc_target_t *targets;
    size_t ntargets;
    char *up_query;
    doc_rename_t *renames;
    size_t nrenames;
    bool have_gpu, have_kueue, have_up;
    const char *model_filter; /* borrowed; NULL = all */
} doc_data_t;

/* Evaluates every cause over d, appends findings to r (unranked). */
void doc_rules_run(const doc_data_t *d, llm_doctor_report_t *r);
/* Ranks r->findings (contract 3 of doctor.h). */
void doc_rank(llm_doctor_report_t *r);
void doc_data_free(doc_data_t *d);
/* A zeroed series of d->nsteps NaNs (owned). */
double *doc_nan_series(size_t n);

#endif
