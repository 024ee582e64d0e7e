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
 * Alert state (alerting.c) — invariants:
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
 * Thread-safety: a manager is used by one thread at a time except for
 * rules_manager_rules_json/alerts_json, which take the manager's lock. */
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

#endif
