/* export.h — `infermon export`: infermon's knowledge written for the
 * Prometheus/Grafana stack a team already runs.
 *
 * Contract.
 *  1. llm_export_dashboard writes a Grafana dashboard (JSON, schemaVersion 39)
 *     of the causal-chain overview (the panels of the web UI's overview page)
 *     for the engines in opts->engines, with the metric names has() reports
 *     (the serving model's mappings in preference order: vLLM V0/V1 and SGLang
 *     names come out as the sources expose them). Panels whose signal no name
 *     implements are left out. Every query selects job=~"$job",
 *     instance=~"$instance" (and namespace/model where the series carry them),
 *     rates use $__rate_interval, the datasource is the `datasource` variable
 *     (no UID is written anywhere), and every panel has a unit and a
 *     description (docs/export.md lists the dashboard-linter rules it meets).
 *  2. llm_export_rules_merge joins rule files (each "groups:" text) into one
 *     rule file or one PrometheusRule object (monitoring.coreos.com/v1).
 *  3. Output is appended to out; nothing here does I/O. */
#ifndef IM_LLM_EXPORT_H
#define IM_LLM_EXPORT_H

#include "llm/serving.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct llm_export_dash_opts {
    const char *title;   /* NULL: "LLM serving (infermon)" */
    uint32_t engines;    /* bit i = serving-model engine i (dcgm and kueue included) */
    llm_has_name_fn has; /* the names the sources expose */
    void *ctx;
    const char *sources; /* shown in the dashboard description (NULL: none) */
} llm_export_dash_opts_t;

/* IM_EINVAL (err says why) when no panel could be made. *npanels = the panels
 * written (row panels not counted). */
im_rc llm_export_dashboard(const llm_export_dash_opts_t *o, im_buf_t *out, size_t *npanels,
                           im_err_t *err);

typedef struct llm_export_rules_opts {
    bool prometheusrule;       /* false: a rule file */
    const char *name;          /* metadata.name (NULL: "infermon-llm-rules") */
    const char *namespace_;    /* metadata.namespace (NULL: "monitoring") */
    const char *const *labels; /* metadata.labels as key, value pairs (NULL-terminated) */
} llm_export_rules_opts_t;

/* Appends the groups of each rule-file text parts[i] (comments before the
 * `groups:` line dropped) as one file in the form o asks. IM_EINVAL when a part
 * has no top-level `groups:` line. */
im_rc llm_export_rules_merge(const llm_export_rules_opts_t *o, const char *const *parts,
                             const size_t *lens, size_t nparts, im_buf_t *out, im_err_t *err);

#endif
