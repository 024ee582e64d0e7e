/* cost.h — GPU cost per team, per model and per token over a period, computed
 * through the query backend (query/query.h: the local store or any
 * Prometheus-compatible one, the same PromQL for both). docs/cost.md is the
 * user's page; this is the contract.
 *
 * Figures (per group; GPU-hours are integrals over (from, to] at the step):
 *   reserved   Kueue kueue_local_queue_resource_reservation (teams, namespaces,
 *              flavors) or kueue_cluster_queue_resource_reservation (cluster
 *              queues) for nvidia.com/gpu and nvidia.com/mig-* (a MIG profile
 *              counts as its share of a GPU, e.g. 1g.10gb = 1/7);
 *   allocated  GPUs held by the group's pods (dcgm-exporter's pod attribution;
 *              a GPU shared by N pods counts 1/N to each, a MIG instance its
 *              share): an estimate where GPUs are shared;
 *   busy       DCGM_FI_PROF_GR_ENGINE_ACTIVE when present, else
 *              DCGM_FI_DEV_GPU_UTIL / 100, over the allocated GPUs;
 *   borrowed / lent (cluster queues): reservation above nominal quota / the
 *              cohort's borrowed GPU-hours shared by what each queue can lend
 *              (unused quota, at most kueue_cluster_queue_lending_limit);
 *   energy     DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ) differences; a MIG
 *              GPU's (per device, no pod) split among its instances by their
 *              compute share;
 *   tokens     prompt / generation / cached token counters of every model
 *              server the serving model knows (llm/serving.h), not the
 *              routers in front of them;
 *   cost       GPU-hours of the cost basis x the price of the flavor (reserved)
 *              or the GPU model (allocated, when a group has no reservation).
 * Groups: team / namespace / model have every figure; cluster_queue reserved,
 * borrowed, lent and cost (pods cannot be tied to a ClusterQueue); flavor
 * reserved per Kueue flavor and allocated / busy / energy per GPU (a MIG
 * instance under its profile, a whole GPU under the price table's flavor of
 * its modelName), no tokens. The rest is NaN with a problem sentence.
 *
 * Contract.
 *  1. A figure that cannot be had is NaN (null in JSON, empty in CSV), never 0:
 *     its source metric is absent, or a price is missing. A source that is
 *     present gives 0 to a group that has none of it.
 *  2. The period covers the step multiples t with from < t <= to, like a
 *     Prometheus range (from, to]: a sample stands for the step before it.
 *     Counter figures are sums of the differences x(t) - x(t - step) (a
 *     counter reset restarting from 0); gauge figures are sums of x(t) x the
 *     step. The step is the resolution: reserved GPU-hours are exact when
 *     reservations change at the step's multiples.
 *  3. Labels are read as a real scrape gives them: when the scrape adds its own
 *     namespace/pod, the workload's arrive as exported_namespace/exported_pod
 *     and those are used.
 *  4. What cannot be attributed (GPUs with no pod, namespaces with no team,
 *     pods with no model) is reported in the unattributed figures, and every
 *     missing price or source as a problem sentence.
 *  5. llm_cost_compute returns IM_ENOTFOUND when the period has no Kueue,
 *     dcgm-exporter or engine series at all, and when opts.group names a group
 *     the period does not have (the message lists the ones it has). */
#ifndef IM_LLM_COST_H
#define IM_LLM_COST_H

#include "config/llm_cost.h"
#include "query/query.h"
#include "rules/rules.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum llm_cost_by {
    LLM_COST_BY_TEAM = 0,
    LLM_COST_BY_NAMESPACE,
    LLM_COST_BY_MODEL,
    LLM_COST_BY_CLUSTER_QUEUE,
    LLM_COST_BY_FLAVOR,
    LLM_COST_NBY
} llm_cost_by_t;

/* "team", "namespace", ...; parse returns LLM_COST_NBY when unknown. */
const char *llm_cost_by_name(llm_cost_by_t by);
llm_cost_by_t llm_cost_by_parse(const char *s);

typedef enum llm_cost_field {
    LLM_COST_RESERVED = 0, /* GPU-hours */
    LLM_COST_ALLOCATED,
    LLM_COST_BUSY,
    LLM_COST_IDLE, /* basis - busy */
    LLM_COST_BORROWED,
    LLM_COST_LENT,
    LLM_COST_COST,
    LLM_COST_IDLE_COST,
    LLM_COST_ENERGY_KWH,
    LLM_COST_ENERGY_COST,
    LLM_COST_INPUT_TOKENS,
    LLM_COST_OUTPUT_TOKENS,
    LLM_COST_CACHED_TOKENS,
    LLM_COST_TOKENS_PER_GPU_HOUR, /* output tokens per basis GPU-hour */
    LLM_COST_PER_M_OUTPUT,        /* cost per 1e6 output tokens */
    LLM_COST_NFIELDS
} llm_cost_field_t;

/* The JSON key of a field ("gpu_hours_reserved", ...). */
const char *llm_cost_field_key(llm_cost_field_t f);

typedef struct llm_cost_row {
    char *group;                /* owned */
    double f[LLM_COST_NFIELDS]; /* NaN = cannot be had */
    const char *basis;          /* "reserved", "allocated" or NULL (static) */
} llm_cost_row_t;

typedef struct llm_cost_unattributed {
    double gpu_hours_no_pod;      /* GPUs no pod held (NaN: no dcgm data) */
    double gpu_hours_busy_no_pod; /* their busy GPU-hours */
    double energy_kwh_no_pod;
    double gpu_hours_reserved_no_group; /* namespaces with no team, ... */
    double gpu_hours_allocated_no_group;
    double output_tokens_no_group;
    char **names; /* owned: namespaces with no team / pods with no model */
    size_t nnames;
} llm_cost_unattributed_t;

typedef struct llm_cost_opts {
    int64_t from_ms, to_ms; /* the period (from, to] */
    int64_t step_ms;        /* 0 = LLM_COST_DEFAULT_STEP_MS, or period/LLM_COST_MAX_STEPS */
    llm_cost_by_t by;
    const cfg_llm_cost_t *cfg; /* prices and teams (borrowed; NULL = none) */
    const char *group;         /* only this group (NULL = all) */
    int64_t timeout_ms;        /* per query; 0 = the backend's */
} llm_cost_opts_t;

#define LLM_COST_DEFAULT_STEP_MS (15 * 1000)
#define LLM_COST_MAX_STEPS       10000

typedef struct llm_cost_report {
    int64_t from_ms, to_ms, step_ms;
    llm_cost_by_t by;
    char *backend;           /* owned: query_backend_describe */
    const char *busy_source; /* metric name or NULL (static) */
    const char *alloc_source;
    const cfg_llm_cost_t *cfg; /* borrowed from the opts: the price table printed */
    llm_cost_row_t *rows;      /* owned, sorted by group */
    size_t nrows;
    llm_cost_row_t total; /* sums of the rows (group "total") */
    llm_cost_unattributed_t un;
    char **problems; /* owned sentences: missing prices, absent sources */
    size_t nproblems;
    bool missing_price; /* a cost is null for want of a price */
    char **queries;     /* owned: the instant queries sent, in order (--explain) */
    int64_t *query_ms;  /* their evaluation times */
    size_t nqueries;
} llm_cost_report_t;

/* The text of a report's period and grouping: --from/--to, --range (with an
 * optional --to; 1d by default), --month YYYY-MM, --step, --by, --team, or the
 * API's parameters of the same names. NULL or "" = not given. */
typedef struct llm_cost_params {
    const char *from, *to, *range, *month, *step, *by, *team;
} llm_cost_params_t;

/* Sets o's period, step, by and group (the rest is left as it is); now_ms is
 * the end of a range without a to. IM_EINVAL with a message naming the flag
 * ("--from", flags true) or the API parameter ("parameter \"from\"").
 * Strings stay borrowed (o->group is p->team). */
im_rc llm_cost_params_parse(const llm_cost_params_t *p, int64_t now_ms, bool flags,
                            llm_cost_opts_t *o, im_err_t *err);

/* Computes the report; *out is initialised here, free it with
 * llm_cost_report_free whatever the result. Errors: the backend's, or
 * IM_ENOTFOUND as in contract 5, IM_EINVAL for a bad period. */
im_rc llm_cost_compute(query_backend_t *b, const llm_cost_opts_t *o, llm_cost_report_t *out,
                       im_err_t *err);
void llm_cost_report_free(llm_cost_report_t *r);

/* Output. JSON: {"period":{"from","to","step_seconds"},"by","backend",
 * "busy_source","prices":{...},"rows":[...],"total":{...},"unattributed":{...},
 * "problems":[...]}. CSV: FinOps FOCUS columns (docs/cost.md), one line per
 * row. Text: a table plus the price table, the period and the problems. */
void llm_cost_report_json(const llm_cost_report_t *r, im_buf_t *out);
void llm_cost_report_csv(const llm_cost_report_t *r, im_buf_t *out);
void llm_cost_report_text(const llm_cost_report_t *r, im_buf_t *out);

/* The share of a GPU a MIG profile or Kueue MIG resource stands for:
 * "1g.10gb" and "nvidia.com/mig-1g.10gb" 1/7, "1c.3g.40gb" 1/7, A30's
 * "2g.12gb" 2/4; "nvidia.com/gpu" and "" 1. NaN for a profile it cannot read. */
double llm_cost_gpu_share(const char *profile_or_resource);

/* Is engine id (llm/serving.h) a router / front-end, whose tokens the model
 * servers behind it count again ("sglang-router", "dynamo", "llm-d-epp")? */
bool llm_cost_frontend(const char *engine_id);

/* The recording rules (rule-file YAML, group infermon.llm.cost) for
 * llm.cost.rules: true, with the prices of cfg (NULL: no cost rule). Appends
 * to out. */
void llm_cost_rules_yaml(const cfg_llm_cost_t *cfg, im_buf_t *out);
/* Wraps *gen (the built-in rules' generator, or none: load NULL) so that it
 * also loads the cost rules made from cfg now (cfg need not outlive it). */
void llm_cost_rules_generator(const cfg_llm_cost_t *cfg, rules_generator_t *gen);

#endif
