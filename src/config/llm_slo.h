/* llm_slo.h — the typed `llm.slos:` and `llm.slo_files:` sub-sections: service
 * level objectives on the serving model's signals (docs/slo.md).
 *
 *   llm:
 *     slos:
 *       - name: chat-ttft            # [a-zA-Z0-9_.-]+, unique
 *         model: llama-3-8b          # the served model (the engine's model label)
 *         labels: {namespace: prod}  # optional extra exact matchers
 *         engine: vllm               # optional: vllm, sglang, ... (default: every engine)
 *         sli: latency               # latency | availability
 *         signal: ttft               # latency: ttft | itl | e2e
 *         metric: my_histogram       # latency, instead of signal: any histogram family
 *         threshold: 2.5s            # latency: a bucket bound of the histogram
 *         objective: 99              # percent in (0, 100); or "p95 < 2.5s" (sets
 *                                    #   objective 95 and the threshold)
 *         window: 30d                # rolling; or {calendar: month}
 *         alert_name: SLOErrorBudgetBurn   # optional
 *         burn_rates:                # optional (SRE-workbook defaults)
 *           page:   [{factor: 14.4, long: 1h, short: 5m}, {factor: 6, long: 6h, short: 30m}]
 *           ticket: [{factor: 3, long: 1d, short: 2h}, {factor: 1, long: 3d, short: 6h}]
 *     slo_files: [slos/chat*.yml]    # globs: our format ({slos: [...]}), Sloth's
 *                                    # `version: prometheus/v1` or OpenSLO `kind: SLO`
 *
 * Sloth and OpenSLO SLOs become "events" SLIs: an error query and a total
 * query with {{.window}} where the range goes (Sloth's own templates; OpenSLO
 * ratioMetric selectors are wrapped in sum(rate(...[{{.window}}]))), except an
 * OpenSLO thresholdMetric on a histogram, which is a latency SLI on `metric`.
 * Every OpenSLO key is honoured or refused naming the field: metadata.labels
 * and spec.service become rule_labels, metadata.annotations and the
 * documentation strings (displayName, description) alert_annots
 * (openslo_*); alertPolicies, metricSourceRef, Timeslices and the like are
 * refused (docs/slo.md has the table).
 * Burn-rate windows must be recorded windows (5m 30m 1h 2h 6h 1d 3d).
 * Unknown keys and bad values are errors with file:line:column naming the
 * field, as everywhere. All strings are owned by the section. */
#ifndef IM_CONFIG_LLM_SLO_H
#define IM_CONFIG_LLM_SLO_H

#include "config/yaml.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum cfg_slo_sli {
    CFG_SLO_AVAILABILITY = 0,
    CFG_SLO_LATENCY,
    CFG_SLO_EVENTS, /* imported: error/total query templates */
} cfg_slo_sli_t;

typedef enum cfg_slo_signal {
    CFG_SLO_SIG_NONE = 0,
    CFG_SLO_SIG_TTFT,
    CFG_SLO_SIG_ITL,
    CFG_SLO_SIG_E2E,
} cfg_slo_signal_t;

#define CFG_SLO_NWINDOWS  7 /* 5m 30m 1h 2h 6h 1d 3d */
#define CFG_SLO_MAX_BURNS 4 /* per severity */

/* The recorded windows, ascending: "5m", ..., "3d"; index < CFG_SLO_NWINDOWS. */
const char *cfg_slo_window_name(int i);
int64_t cfg_slo_window_ms(int i);
/* The index of a recorded window of ms milliseconds, or -1. */
int cfg_slo_window_index(int64_t ms);
/* "availability", "latency", "events"; "ttft", "itl", "e2e" (NULL for NONE). */
const char *cfg_slo_sli_name(cfg_slo_sli_t s);
const char *cfg_slo_signal_name(cfg_slo_signal_t s);

typedef struct cfg_slo_burn {
    double factor;
    int long_w, short_w; /* indexes of recorded windows */
} cfg_slo_burn_t;

/* Extra labels or annotations written on generated rules (Sloth's labels,
 * alerting.labels/annotations, page_alert/ticket_alert.labels/annotations). */
typedef struct cfg_slo_kv {
    char **k, **v; /* parallel, owned */
    size_t n;
} cfg_slo_kv_t;

typedef struct cfg_slo {
    char *name;
    char *model;                      /* NULL = every model */
    char **label_names, **label_vals; /* extra exact matchers (parallel) */
    size_t nlabels;
    char *engine; /* NULL = every engine of the serving model */
    cfg_slo_sli_t sli;
    cfg_slo_signal_t signal;         /* latency with a serving-model signal */
    char *metric;                    /* latency on a named histogram family (NULL = signal's) */
    double threshold_s;              /* latency */
    char *error_query, *total_query; /* events: templates with {{.window}} */
    double objective;                /* a ratio in (0, 1) */
    int64_t window_ms;               /* rolling window; 0 when calendar_month */
    bool calendar_month;
    char *alert_name; /* NULL = "SLOErrorBudgetBurn" */
    /* Sloth: labels on every generated rule (the spec's, then the SLO's: the SLO's win);
     * on both alerts; on the page / the ticket alert (these win over alert_labels).
     * OpenSLO: spec.service and metadata.labels in rule_labels, metadata.annotations
     * and the openslo_* documentation annotations in alert_annots */
    cfg_slo_kv_t rule_labels, alert_labels, page_labels, ticket_labels;
    cfg_slo_kv_t alert_annots, page_annots, ticket_annots;
    cfg_slo_burn_t page[CFG_SLO_MAX_BURNS], ticket[CFG_SLO_MAX_BURNS];
    int npage, nticket;
    char *origin; /* "llm.slos[0]" or "file.yml:3:5": where it was defined */
} cfg_slo_t;

typedef struct cfg_llm_slo {
    cfg_slo_t *v; /* owned: llm.slos, then the SLOs of the files */
    size_t n;
    size_t ninline; /* the first ninline came from llm.slos (the dump writes those) */
    char **files;   /* owned: the slo_files globs as written */
    size_t nfiles;
} cfg_llm_slo_t;

/* Decodes llm.slos (slos, may be NULL) and llm.slo_files (files, may be NULL)
 * into *out (initialised here; free with cfg_llm_slo_free also after an
 * error). The files are read by cfg_llm_slo_load_files. */
im_rc cfg_llm_slo_decode(cfg_dec_t *d, const cfg_node_t *slos, const cfg_node_t *files,
                         cfg_llm_slo_t *out);
/* Expands the slo_files globs (relative ones against dir) and appends their
 * SLOs; a glob that matches nothing is an error, as is a repeated name. */
im_rc cfg_llm_slo_load_files(cfg_llm_slo_t *s, const char *dir, im_err_t *err);
/* Decodes one SLO file's text (our format, Sloth or OpenSLO: told by its
 * keys) and appends its SLOs to *s. name is the file name for errors. */
im_rc cfg_llm_slo_parse_file(cfg_llm_slo_t *s, const char *text, size_t len, const char *name,
                             im_err_t *err);
/* Appends "  slos:\n ..." and "  slo_files:" when given (re-loadable). */
void cfg_llm_slo_dump(const cfg_llm_slo_t *s, im_buf_t *out);
void cfg_llm_slo_free(cfg_llm_slo_t *s);
/* Sets the SRE-workbook burn rates on *o. */
void cfg_slo_default_burns(cfg_slo_t *o);
/* Parses a latency such as "2s", "2.5s", "500ms", "0.25" (seconds); false if not. */
bool cfg_slo_parse_seconds(const char *s, double *out);

#endif
