/* rules.h — recording and alerting rules: contract of src/rules/.
 *
 * Rule files. Prometheus' format (groups: name, interval, limit, query_offset,
 * rules: record|alert, expr, for, keep_firing_for, labels, annotations), read
 * with libyaml. rules_file_parse validates as Prometheus' rulefmt does and
 * reports every problem in promtool's words, e.g.
 *   r.yml: 5:15: group "g", rule 1, "x": could not parse expression: 1:17: ...
 * (strings in rules_errs_t, each already prefixed with the file name). YAML
 * syntax/type problems come first and stop validation, as in Prometheus.
 *
 * Evaluation (manager.c). A rules_manager_t owns groups loaded from files and
 * evaluates each group on its own thread-less schedule: the caller drives it
 * with rules_manager_tick(now) (the daemon from a timer thread, tests with a
 * simulated clock). Group evaluation times are aligned as Prometheus aligns
 * them: t = interval-aligned base + offset(hash(file, group name)), so that
 * restarts keep the same phase. Rules run in order; a recording rule's output
 * is appended through the sink before the next rule runs, so later rules of the
 * same evaluation see it (the sink's queryable must make it visible).
 *
 * Running (run.c). The daemon does not drive ticks itself: rules_manager_start
 * loads rule files (globs relative to the config's directory) and generated
 * files (the built-in LLM rules, src/llm/builtin.h), writes through a storage_t
 * (storage/storage.h) and ticks on its own thread until rules_manager_stop.
 *
 * Alert state (manager.c) — invariants:
 *  1. one alert instance per distinct label set (after templating labels);
 *  2. inactive --(expr returns the series)--> pending --(active for >= for)-->
 *     firing; pending --(series gone)--> deleted; firing --(series gone for >=
 *     keep_firing_for)--> inactive (resolved, kept 15m for notification);
 *  3. ALERTS{alertstate="pending|firing",...} = 1 and ALERTS_FOR_STATE = active
 *     since (seconds) are emitted for every pending/firing instance at each eval;
 *  4. restoring `for` state after a restart: an instance whose ALERTS_FOR_STATE
 *     is found within for_outage_tolerance keeps its active-since time (shifted
 *     by the downtime), never firing sooner than for_grace_period after start.
 *
 * Thread-safety: set_files, tick, next_ms, eval_group, stats and the JSON calls
 * take the manager's lock and may come from any thread; the other calls (ngroups,
 * group, visit_alerts, rule_error) are for the thread that sets the files and
 * ticks (not for a manager from rules_manager_start, whose thread does both). */
#ifndef IM_RULES_RULES_H
#define IM_RULES_RULES_H

#include "labels/labels.h"
#include "promql/ast.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

/* ---- Error list ---- */
typedef struct rules_errs {
    char **v; /* owned strings */
    size_t n;
    bool only_lint; /* true if every error is a lint (duplicates): exit 0 in promtool */
} rules_errs_t;
void rules_errs_add(rules_errs_t *e, const char *fmt, ...) IM_PRINTF(2, 3);
void rules_errs_free(rules_errs_t *e);

/* ---- Rule files ---- */
typedef struct rules_kv {
    char *name; /* owned */
    char *value;
} rules_kv_t;

typedef enum rules_kind {
    RULES_RECORDING = 0,
    RULES_ALERTING,
} rules_kind_t;

typedef struct rules_rule {
    rules_kind_t kind;
    char *name;         /* record: metric name; alert: alert name (owned) */
    char *expr;         /* owned PromQL text */
    promql_expr_t *ast; /* owned parsed expression (NULL if it did not parse) */
    int64_t for_ms;
    int64_t keep_firing_for_ms;
    rules_kv_t *labels; /* owned, sorted by name */
    size_t nlabels;
    rules_kv_t *annotations; /* owned, sorted by name */
    size_t nannotations;
    int line; /* position of the rule's mapping (1-based) */
} rules_rule_t;

typedef struct rules_group {
    char *name;              /* owned */
    char *file;              /* owned: the file it came from */
    int64_t interval_ms;     /* 0 = the global evaluation_interval */
    int64_t limit;           /* 0 = no limit */
    int64_t query_offset_ms; /* -1 = global rule_query_offset */
    rules_rule_t *rules;
    size_t nrules;
} rules_group_t;

typedef struct rules_file {
    char *path;
    rules_group_t *groups;
    size_t ngroups;
} rules_file_t;

/* Parses and validates a rule file. Returns IM_OK with *out when the file is
 * valid; otherwise IM_EPARSE, *out NULL and errs filled (may also hold lint
 * findings with IM_OK). */
im_rc rules_file_parse(const char *path, const char *data, size_t len, rules_file_t **out,
                       rules_errs_t *errs);
/* Reads and parses a file from disk. */
im_rc rules_file_load(const char *path, rules_file_t **out, rules_errs_t *errs);
void rules_file_free(rules_file_t *f);
/* Duplicate rules (same name and labels) across the groups of one file:
 * promtool's duplicate-rules lint. Adds one message to errs if any. */
void rules_file_lint_duplicates(const rules_file_t *f, rules_errs_t *errs);
size_t rules_file_count(const rules_file_t *f);

/* ---- Evaluation ---- */

#include "promql/promql.h"
#include "storage/storage.h"

/* Where rules read and write. queryable: borrowed for the manager's life.
 * append: adds one sample to the current batch; commit: makes the batch
 * visible (called after each rule, so the next rule sees its output). */
typedef struct rules_storage {
    storage_queryable_t *queryable;
    im_rc (*append)(void *ctx, const im_labels_t *ls, int64_t t_ms, double v);
    im_rc (*commit)(void *ctx);
    void *ctx;
} rules_storage_t;

typedef enum rules_alert_state {
    RULES_ALERT_INACTIVE = 0,
    RULES_ALERT_PENDING,
    RULES_ALERT_FIRING,
} rules_alert_state_t;

/* An alert handed to the notifier (all borrowed for the call). */
typedef struct rules_notify_alert {
    const im_labels_t *labels;
    const im_labels_t *annotations;
    int64_t starts_at_ms; /* fired at */
    int64_t ends_at_ms;   /* resolved at, or valid-until */
    bool resolved;
    const char *generator_url;
} rules_notify_alert_t;

typedef void (*rules_notify_fn)(void *ctx, const rules_notify_alert_t *alerts, size_t n);

typedef struct rules_opts {
    const promql_engine_t *engine; /* borrowed */
    rules_storage_t storage;
    int64_t eval_interval_ms;           /* global evaluation_interval; 0 = 1m */
    int64_t query_offset_ms;            /* global rule_query_offset */
    const im_labels_t *external_labels; /* borrowed; may be NULL */
    const char *external_url;           /* borrowed; may be NULL */
    int64_t outage_tolerance_ms;        /* --rules.alert.for-outage-tolerance; 0 = 1h */
    int64_t grace_period_ms;            /* --rules.alert.for-grace-period; 0 = 10m */
    int64_t resend_delay_ms;            /* --rules.alert.resend-delay; 0 = 1m */
    bool restore_for_state;             /* restore `for` state from ALERTS_FOR_STATE at start */
    rules_notify_fn notify;             /* may be NULL */
    void *notify_ctx;
} rules_opts_t;

typedef struct rules_manager rules_manager_t;

rules_manager_t *rules_manager_new(const rules_opts_t *opts);
void rules_manager_free(rules_manager_t *m);
/* Replaces the groups with those of the files (takes ownership of files[i]);
 * alert state of rules that keep their group, name and labels is kept. */
void rules_manager_set_files(rules_manager_t *m, rules_file_t **files, size_t n);
/* Evaluates every group whose next evaluation time is <= now_ms (at most once
 * per call per group, counting missed iterations). Returns the number of
 * groups evaluated. */
size_t rules_manager_tick(rules_manager_t *m, int64_t now_ms);
/* Milliseconds until the next group evaluation is due (>= 0). */
int64_t rules_manager_next_ms(rules_manager_t *m, int64_t now_ms);
/* Evaluates one group at t (rule unit tests: explicit times and order). */
void rules_manager_eval_group(rules_manager_t *m, size_t group_index, int64_t t_ms);
size_t rules_manager_ngroups(const rules_manager_t *m);
const rules_group_t *rules_manager_group(const rules_manager_t *m, size_t i);
/* Prometheus' group evaluation time for a start time (offset from the hash of
 * file and name). */
int64_t rules_group_eval_timestamp(const rules_group_t *g, int64_t interval_ms, int64_t start_ms);

/* Current alerts of one alerting rule (group i, rule j): state, labels,
 * annotations, active-since, value. Returned through a callback. */
typedef void (*rules_alert_visit_fn)(void *ctx, rules_alert_state_t st, const im_labels_t *labels,
                                     const im_labels_t *annotations, int64_t active_at_ms,
                                     int64_t fired_at_ms, double value);
void rules_manager_visit_alerts(rules_manager_t *m, size_t gi, size_t ri, rules_alert_visit_fn fn,
                                void *ctx);
/* Last evaluation error of a rule ("" when healthy). */
const char *rules_manager_rule_error(rules_manager_t *m, size_t gi, size_t ri);

/* The `data` objects of /api/v1/rules (type = NULL, "alert" or "record") and
 * /api/v1/alerts, as Prometheus answers them. */
im_rc rules_manager_rules_json(rules_manager_t *m, const char *type, im_buf_t *out);
im_rc rules_manager_alerts_json(rules_manager_t *m, im_buf_t *out);

/* Counters for /metrics. */
typedef struct rules_stats {
    uint64_t evaluations, evaluation_failures, iterations_missed, iterations_scheduled;
    uint64_t template_failures;
} rules_stats_t;
void rules_manager_stats(rules_manager_t *m, rules_stats_t *out);
/* The rule manager's /metrics families (prometheus_rule_evaluations_total,
 * ..._failures_total, prometheus_rule_group_iterations_missed_total,
 * prometheus_template_text_expansion_failures_total), appended to out. */
void rules_manager_metrics_text(rules_manager_t *m, im_buf_t *out);

/* ---- Running (run.c): the daemon's evaluation thread ---- */

/* Rule files made by code rather than read from disk (the built-in LLM rules,
 * llm/builtin.h). load appends the files it makes to (*files, *n) (grown with
 * im_realloc; the runner takes ownership) and returns false if it failed (it
 * logs why); changed says whether load would now make something else (checked
 * every recheck_ms; the runner then reloads everything, alert state kept as by
 * rules_manager_set_files). q is the runner's queryable. free releases ctx. */
typedef struct rules_generator {
    bool (*load)(void *ctx, storage_queryable_t *q, rules_file_t ***files, size_t *n);
    bool (*changed)(void *ctx, storage_queryable_t *q); /* may be NULL: never */
    void (*free)(void *ctx);                            /* may be NULL */
    void *ctx;
    int64_t recheck_ms; /* 0 = 15 s */
} rules_generator_t;

/* What to load: rule_files are glob patterns (Prometheus' rule_files), relative
 * ones resolved against base_dir (the config file's directory; NULL = "."),
 * loaded in pattern order, then the generator's files. */
typedef struct rules_run_config {
    const char *base_dir;    /* borrowed for the call */
    char *const *rule_files; /* borrowed for the call */
    size_t nrule_files;
    rules_generator_t gen; /* gen.load NULL = none; owned by the runner after the call */
} rules_run_config_t;

/* Loads cfg into a new manager and evaluates it on its own thread (a tick at
 * every due group evaluation, at least every 200 ms) against store: queries
 * through one queryable, each rule's output appended with one appender and
 * committed before the next rule runs. opts->storage is ignored (filled from
 * store). Rule files that fail to load are logged and the rest runs. Stop with
 * rules_manager_stop, which also frees the manager. */
rules_manager_t *rules_manager_start(const rules_opts_t *opts, storage_t *store,
                                     const rules_run_config_t *cfg);
/* Applies a new cfg: false (and the previous rules kept, the new generator
 * freed) if a rule file did not load. Safe while the thread runs. */
bool rules_manager_reload(rules_manager_t *m, const rules_run_config_t *cfg);
/* Stops the thread, rolls back an unfinished batch, frees the manager. */
void rules_manager_stop(rules_manager_t *m);

#endif
