/* lint.h — `infermon lint`: PromQL in rule files, Grafana dashboards and query
 * lists checked against the names the sources really expose.
 *
 * Contract.
 *  1. Known names (lint_names_t) come from the sources: expositions (a scraped
 *     --target or a saved file), a Prometheus server's APIs (--prometheus), the
 *     recording rules of the linted files, or, when none of the first two is given,
 *     the catalog (catalog.h) for one vLLM version. A name set remembers per
 *     sample name its type, the label names seen and (up to a cap) their values,
 *     the `le` bounds of histograms, and the scrape interval of its job when known.
 *  2. A lint run (lint_run_t) takes queries one at a time with their location
 *     (lint_where_t) and collects findings. Each finding has a check id from the
 *     table in docs/lint.md, a severity, the location (file, line, column, the
 *     panel or rule path), the expression, the byte range inside it, a message
 *     and, when one exists, a fix text; `fixed_expr` is the whole expression
 *     rewritten when the fix is mechanical (renames and suffixes), which --fix
 *     applies. No check may fire on a correct query: when the sources cannot
 *     tell (a recording rule, a label relabelling may add), the check stays quiet.
 *  3. Walkers (lint_rulefile, lint_dashboard, lint_textfile) parse one input
 *     file and call lint_query for each expression; they never modify the input.
 *     lint_fix_apply rewrites the input text at the expressions' byte positions
 *     (YAML keeps comments and layout, JSON its key order and formatting).
 *  4. Ownership: everything a run returns is owned by the run and freed by
 *     lint_run_free; lint_names_t by lint_names_free. */
#ifndef IM_LLM_LINT_H
#define IM_LLM_LINT_H

#include "llm/catalog.h"
#include "query/query.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

/* ---- Known names ---- */

typedef struct lint_names lint_names_t;

typedef enum lint_source_kind {
    LINT_SOURCE_CATALOG = 0, /* no live source: the catalog for a vLLM version */
    LINT_SOURCE_EXPOSITION,  /* --target (URL or file) */
    LINT_SOURCE_PROMETHEUS,  /* --prometheus */
} lint_source_kind_t;

lint_names_t *lint_names_new(void);
void lint_names_free(lint_names_t *n);
/* Adds every sample of an exposition (text 0.0.4 or OpenMetrics). source is a
 * display name (URL or path). */
im_rc lint_names_add_exposition(lint_names_t *n, const char *buf, size_t len, const char *source,
                                im_err_t *err);
/* Scrapes url once (libcurl; 10 s timeout, 64 MiB cap) or reads it as a file when
 * it has no scheme, then lint_names_add_exposition. */
im_rc lint_names_add_target(lint_names_t *n, const char *url_or_file, im_err_t *err);
/* Reads names, series labels, metadata and the scrape intervals of a Prometheus
 * server's HTTP API at base_url. */
im_rc lint_names_add_prometheus(lint_names_t *n, const char *base_url, im_err_t *err);
/* The same over any query backend (query/query.h: a remote store with its
 * auth/TLS/headers, or the local engine — which has no metadata or config:
 * types and intervals then stay unknown). */
im_rc lint_names_add_backend(lint_names_t *n, query_backend_t *b, im_err_t *err);
/* A recording rule's output name (type unknown, labels unknown). */
void lint_names_add_record(lint_names_t *n, const char *name, size_t len);
/* The same with the rule's expression (kept: a recorded histogram_quantile
 * carries its histogram's buckets into the alerts that compare it). */
void lint_names_add_record_expr(lint_names_t *n, const char *name, size_t len, const char *expr,
                                size_t elen);
/* Uses the catalog for vLLM version v (when no live source was added). */
void lint_names_use_catalog(lint_names_t *n, const llm_version_t *v);
/* Reads a prometheus.yml (or infermon.yml) text: range-too-short then assumes the
 * shortest scrape interval of its jobs (global.scrape_interval, else 1m, for
 * jobs without their own) when the sources do not say. IM_EPARSE when the text
 * is not YAML. */
im_rc lint_names_load_config(lint_names_t *n, const char *yml, size_t len, im_err_t *err);
/* Scrape interval for range-too-short when the sources do not say (0 = unknown). */
void lint_names_set_scrape_interval(lint_names_t *n, int64_t ms);
lint_source_kind_t lint_names_kind(const lint_names_t *n);
bool lint_names_has(const lint_names_t *n, const char *name, size_t len);
/* The vLLM version the sources imply (lower bound from the newest family they
 * expose), or the catalog's version; known=false when no vLLM name is exposed. */
llm_version_t lint_names_vllm_version(const lint_names_t *n);
/* Display names of the sources (for the report header). */
size_t lint_names_sources(const lint_names_t *n, const char *const **out);

/* ---- Findings ---- */

typedef enum lint_severity {
    LINT_SEV_ERROR = 0,
    LINT_SEV_WARNING = 1,
    LINT_SEV_INFO = 2,
} lint_severity_t;
const char *lint_severity_name(lint_severity_t s); /* "error", "warning", "info" */

/* Where an expression comes from. Strings are borrowed for the call. */
typedef struct lint_where {
    const char *file;
    int line, col;    /* of the expression's first byte in the file; 0 = unknown */
    const char *path; /* "groups[0] \"vllm\" rules[1] alert VLLMHighTTFT",
                         "panels[3] \"TTFT p95\" targets[0]", "line 4" */
    bool is_alert;    /* an alerting rule's expr */
    bool is_record;
    int64_t for_ms; /* alerting rule's `for` (0 = none) */
    bool heatmap;   /* a Grafana heatmap panel / format=heatmap: raw _bucket is fine */
    /* Byte ranges of the expression that came from template variables (the
     * checks that depend on exact values stay quiet there). */
    const uint32_t (*subst)[2];
    size_t nsubst;
    /* When the expression was rewritten before parsing (Grafana variables), the
     * original text as written in the file, for --fix; NULL otherwise. */
    const char *orig_expr;
    /* Byte range of the expression's raw text in the file (YAML scalar, text
     * line), when the walker knows it; --fix edits inside it. */
    bool has_raw;
    size_t raw_start, raw_end;
    /* A Grafana variable's label_values(selector, label): the label the
     * selector's series must carry (NULL otherwise). */
    const char *values_label;
    /* A dashboard target's legendFormat (borrowed), or NULL. */
    const char *legend;
} lint_where_t;

typedef struct lint_finding {
    const char *check; /* static id, e.g. "unknown-metric" */
    lint_severity_t severity;
    char *file; /* owned copies */
    int line, col;
    char *path;
    char *expr; /* the expression as parsed */
    uint32_t expr_start, expr_end;
    char *message;
    char *fix;        /* human-readable fix, or NULL */
    char *fixed_expr; /* the expression rewritten, or NULL (not mechanical) */
    char *orig_expr;  /* as written in the file (NULL = same as expr) */
    /* The mechanical edit itself: replace [edit_start, edit_end) of expr by
     * edit_text (a metric or label name). */
    uint32_t edit_start, edit_end;
    char *edit_text;
    bool has_raw; /* copied from lint_where_t */
    size_t raw_start, raw_end;
    /* Info findings about a name lint cannot check (other exporter, an option,
     * a recording rule of another file) are reported once per file and name:
     * uses counts the queries, msg_base the message length before " (N uses…)". */
    uint32_t uses;
    size_t msg_base;
} lint_finding_t;

typedef struct lint_run lint_run_t;

typedef struct lint_opts {
    llm_version_t vllm_version; /* known=false: detect from sources / newest */
} lint_opts_t;

lint_run_t *lint_run_new(const lint_names_t *names, const lint_opts_t *opts);
void lint_run_free(lint_run_t *r);
/* Lints one expression. */
void lint_query(lint_run_t *r, const lint_where_t *w, const char *expr, size_t len);
/* A finding not about an expression (a skipped library panel, a file that does
 * not parse). */
void lint_note(lint_run_t *r, const char *check, lint_severity_t sev, const char *file, int line,
               int col, const char *path, const char *fmt, ...) IM_PRINTF(8, 9);
size_t lint_run_findings(const lint_run_t *r, const lint_finding_t **out);
size_t lint_run_count(const lint_run_t *r, lint_severity_t sev);
size_t lint_run_queries(const lint_run_t *r);

/* ---- Walkers ---- */

typedef enum lint_input_kind {
    LINT_INPUT_AUTO = 0,
    LINT_INPUT_RULES,
    LINT_INPUT_DASHBOARD,
    LINT_INPUT_TEXT,
} lint_input_kind_t;

/* By extension and content: .json or starting with '{' = dashboard, .yml/.yaml
 * = rules, else text. */
lint_input_kind_t lint_input_detect(const char *file, const char *buf, size_t len);
/* Parse errors of the file itself are findings (check "input"). Returns IM_OK
 * unless the file could not be read at all. */
im_rc lint_rulefile(lint_run_t *r, lint_names_t *names_for_records, const char *file,
                    const char *buf, size_t len);
im_rc lint_dashboard(lint_run_t *r, const char *file, const char *buf, size_t len);
im_rc lint_textfile(lint_run_t *r, const char *file, const char *buf, size_t len);
/* Recording-rule names of a rule file (so later files see them). */
void lint_rulefile_records(lint_names_t *names, const char *buf, size_t len);

/* ---- Output ---- */

typedef enum lint_output {
    LINT_OUT_TEXT = 0,
    LINT_OUT_JSON,
    LINT_OUT_GITHUB,
} lint_output_t;

im_rc lint_report(const lint_run_t *r, const lint_names_t *names, lint_output_t fmt, im_buf_t *out);

/* ---- --fix ---- */

/* Applies the mechanical fixes of the findings for `file` to its text buf and
 * appends the new text to out; *nfixed = edits made. */
im_rc lint_fix_apply(const lint_run_t *r, const char *file, lint_input_kind_t kind, const char *buf,
                     size_t len, im_buf_t *out, size_t *nfixed);
/* Appends a line diff (unified-style hunks) of a -> b, labelled with file. */
im_rc lint_diff(const char *file, const char *a, size_t alen, const char *b, size_t blen,
                im_buf_t *out);

#endif
