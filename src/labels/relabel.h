/* relabel.h — Prometheus relabelling (relabel_config): the rule type, its
 * validation and its application to a label set.
 *
 * Relabelling follows Prometheus 2.x exactly: regexes are fully anchored,
 * `$1`/`${1}`/`$name` expand as Go's regexp.Expand does (so `$1x` is the empty
 * group "1x"), hashmod takes the last 8 bytes of the MD5 of the joined source
 * values as a big-endian integer modulo `modulus`, lowercase/uppercase are ASCII.
 * Used by scraping (relabel_configs, metric_relabel_configs), the notifier
 * (alert_relabel_configs) and remote write (write_relabel_configs); decoded from
 * YAML by config/relabel_cfg.h. */
#ifndef IM_LABELS_RELABEL_H
#define IM_LABELS_RELABEL_H

#include "labels/labels.h"
#include "util/base.h"
#include "util/err.h"

typedef enum labels_relabel_action {
    LABELS_RELABEL_REPLACE,
    LABELS_RELABEL_KEEP,
    LABELS_RELABEL_DROP,
    LABELS_RELABEL_KEEPEQUAL,
    LABELS_RELABEL_DROPEQUAL,
    LABELS_RELABEL_HASHMOD,
    LABELS_RELABEL_LABELMAP,
    LABELS_RELABEL_LABELDROP,
    LABELS_RELABEL_LABELKEEP,
    LABELS_RELABEL_LOWERCASE,
    LABELS_RELABEL_UPPERCASE,
} labels_relabel_action_t;

typedef struct labels_relabel {
    labels_relabel_action_t action;
    char **source_labels; /* owned array of owned strings */
    size_t nsource;
    char *separator;    /* owned, default ";" */
    char *target_label; /* owned, may be NULL */
    char *regex;        /* owned, default "(.*)" (unanchored text as written) */
    char *replacement;  /* owned, default "$1" */
    uint64_t modulus;
    struct im_regex *re; /* compiled, IM_REGEX_FULL (labels/regex.h; owned) */
} labels_relabel_t;

const char *labels_relabel_action_name(labels_relabel_action_t a);
/* Fills defaults for a zeroed rule (action replace, separator ";", ...). */
void labels_relabel_defaults(labels_relabel_t *r);
/* Validates as Prometheus does and compiles the regex. */
im_rc labels_relabel_compile(labels_relabel_t *r, im_err_t *err);
void labels_relabel_clear(labels_relabel_t *r);
/* Applies rules in order to the builder. Returns 1 to keep, 0 when a keep/drop rule
 * drops the label set, or IM_ELIMIT (err filled) when a regex exceeded the regex
 * limit (labels/regex.h); after 0 or an error the builder is in an unspecified
 * state. Thread-safe (the compiled rules are only read). */
int labels_relabel_apply(const labels_relabel_t *rules, size_t n, im_labels_builder_t *lb,
                         im_err_t *err);
/* labels_relabel_apply, with an error logged (rate-limited) and treated as a drop:
 * returns false when the label set is dropped. */
bool labels_relabel_process(const labels_relabel_t *rules, size_t n, im_labels_builder_t *lb);

#endif
