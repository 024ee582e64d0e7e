/* slo.h — service level objectives (config/llm_slo.h) made into Prometheus
 * rules and measured (docs/slo.md).
 *
 * Contract.
 *  1. Resolution (llm_slo_resolve) turns each SLO into three PromQL templates,
 *     error, total and (latency) good, with {{.window}} where the range goes.
 *     Availability and latency SLIs are engine-aware through the serving model
 *     (llm/serving.h): with a backend, the names the store actually has (and
 *     the `le` bounds of the histogram's live series); without one, the
 *     catalog's names and bucket layouts. Several engines are joined with `or`.
 *  2. Bucket-aware: a latency threshold must be an `le` bound of the
 *     histogram. An engine whose histogram lacks it is dropped with a note
 *     naming the two neighbouring bounds; when no engine is left the SLO is
 *     refused (IM_EINVAL, the message names the SLO's threshold field, the
 *     neighbours and a suggestion). `le` is matched by a regex of every
 *     spelling of the bound ("2|2\\.0"), so rules work whether the store keeps
 *     the client's spelling (Prometheus 2) or normalises it (Prometheus 3).
 *  3. Rules (llm_slo_rules_yaml): per SLO a group infermon.slo.<name> with the
 *     SLI error ratio at 5m 30m 1h 2h 6h 1d 3d and over the SLO window,
 *     attainment, error budget remaining, objective, and the multiwindow
 *     multi-burn-rate alerts (severity page / ticket); then group
 *     infermon.slo.goodput. Series names are stable (docs/slo.md).
 *  4. Status (llm_slo_status) measures from the raw series (no recording rule
 *     needed): the same expressions evaluated at `at`. */
#ifndef IM_LLM_SLO_H
#define IM_LLM_SLO_H

#include "config/llm_slo.h"
#include "query/query.h"
#include "rules/rules.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum llm_slo_format {
    LLM_SLO_RULEFILE = 0,   /* a Prometheus rule file: groups: [...] */
    LLM_SLO_PROMETHEUSRULE, /* a monitoring.coreos.com/v1 PrometheusRule object */
} llm_slo_format_t;

/* Where the names and `le` bounds of a plan came from (llm_slo_resolve_each). */
typedef enum llm_slo_bounds {
    LLM_SLO_BOUNDS_NONE = 0, /* not said: llm_slo_resolve, or an events SLI (its own queries) */
    LLM_SLO_BOUNDS_CATALOG,  /* the catalog's names and bucket layouts */
    LLM_SLO_BOUNDS_LIVE,     /* the series of the store */
} llm_slo_bounds_t;

typedef struct llm_slo_plan {
    const cfg_slo_t *slo;             /* borrowed */
    char *error_t, *total_t, *good_t; /* owned templates; good_t NULL unless latency */
    char *metric;                     /* latency: the histogram families used ("a, b") */
    llm_slo_bounds_t bounds;          /* llm_slo_resolve_each */
    char *error;        /* owned: why this SLO makes no rules (templates NULL); NULL = it does */
    bool bound_refused; /* error is a threshold that is no bucket bound (the rest was fine) */
} llm_slo_plan_t;

typedef struct llm_slo_plans {
    llm_slo_plan_t *v;
    size_t n;
    char **notes; /* owned: engines dropped and why */
    size_t nnotes;
} llm_slo_plans_t;

/* Resolves every SLO of set (see 1, 2). backend NULL: offline (the catalog).
 * *out is initialised here; free it with llm_slo_plans_free also after an
 * error. */
im_rc llm_slo_resolve(const cfg_llm_slo_t *set, query_backend_t *backend, llm_slo_plans_t *out,
                      im_err_t *err);
void llm_slo_plans_free(llm_slo_plans_t *p);

/* Resolves every SLO of set on its own, for the daemon (see 1, 2): an SLO
 * that cannot be made into rules keeps its place with plan.error set and no
 * templates, and the others are resolved as usual. live: the store; an SLO
 * whose counters or histogram have no series in it yet is resolved from the
 * catalog instead (bounds CATALOG), the others against it (bounds LIVE).
 * live NULL, or a store that does not answer: everything from the catalog.
 * Events SLIs are LLM_SLO_BOUNDS_NONE. *out is initialised here; free it with
 * llm_slo_plans_free. */
void llm_slo_resolve_each(const cfg_llm_slo_t *set, query_backend_t *live, llm_slo_plans_t *out);

/* "live", "catalog" or NULL (LLM_SLO_BOUNDS_NONE). */
const char *llm_slo_bounds_name(llm_slo_bounds_t b);

/* The rules of the resolved plans as YAML (fmt), appended to out. A plan with
 * an error makes no rules. */
void llm_slo_plans_yaml(const llm_slo_plans_t *p, llm_slo_format_t fmt, im_buf_t *out);

/* Only the group entries ("- name: infermon.slo.<name>" ...), each line
 * prefixed with indent ("  " under a rule file's groups:, "    " under a
 * PrometheusRule's spec.groups:), for callers that merge them with other
 * groups (infermon export rules). Appends nothing when there are no SLOs. */
void llm_slo_plans_groups_yaml(const llm_slo_plans_t *p, const char *indent, im_buf_t *out);

/* Resolve + YAML in one call, for `infermon export rules` and `slo generate`.
 * backend NULL = offline. Notes (dropped engines) go to notes when not NULL
 * (one line each). */
im_rc llm_slo_rules_yaml(const cfg_llm_slo_t *set, query_backend_t *backend, llm_slo_format_t fmt,
                         im_buf_t *out, im_buf_t *notes, im_err_t *err);

/* The PromQL of template t with {{.window}} replaced by w (owned). */
char *llm_slo_expand(const char *t, const char *w);

/* Wraps *gen so that it also loads the SLO rules of the plans (copied now). */
void llm_slo_rules_generator(const llm_slo_plans_t *p, rules_generator_t *gen);

/* The `data` of GET /api/v1/llm/slos at at_ms (docs/api.md):
 * {"slos":[...],"goodput":[...]}; errors are the backend's. A plan's bounds
 * (when said) is its "bounds"; a plan with an error is not measured (nulls)
 * and has "error". */
im_rc llm_slo_status_json(const llm_slo_plans_t *p, query_backend_t *b, int64_t at_ms,
                          im_buf_t *out, im_err_t *err);
/* The same as a text table. */
im_rc llm_slo_status_text(const llm_slo_plans_t *p, query_backend_t *b, int64_t at_ms,
                          im_buf_t *out, im_err_t *err);

/* The alert name of s ("SLOErrorBudgetBurn" unless alert_name is given). */
const char *llm_slo_alert_name(const cfg_slo_t *s);

/* IM_EINVAL naming the SLO's window field when a window is longer than the
 * retention (retention_ms <= 0: unbounded); flag names the setting. */
im_rc llm_slo_check_retention(const cfg_llm_slo_t *set, int64_t retention_ms, const char *flag,
                              im_err_t *err);

/* Every spelling of bound v as an `le` regex ("2|2\\.0"), written to buf. */
void llm_slo_le_regex(double v, char *buf, size_t cap);

#endif
