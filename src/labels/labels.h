/* labels.h — label sets and label matchers.
 *
 * A label set (im_labels_t) is an immutable array of (name, value) pairs of
 * interned strings, sorted by name (byte order), names unique, with a precomputed
 * 64-bit hash. `__name__` is the metric name. Sorting is plain byte order, as
 * Prometheus': `__name__` comes before names that start with a lowercase letter
 * but after those that start with an uppercase one ('A'-'Z' < '_' < 'a'), so
 * code must look it up, never assume it is first.
 * Empty values are not stored (a label with an empty value is the same as no label).
 *
 * Ownership: im_labels_t is refcounted; every function returning one gives the
 * caller a reference to release with im_labels_unref. Strings inside are
 * interned (util/intern.h) and live as long as the set.
 *
 * Equality: same hash and same pairs (pointer-equal interned strings).
 *
 * Matchers: =, !=, =~, !~. Regexes are fully anchored as in PromQL
 * (`^(?:re)$`), in Go's RE2 syntax and semantics with a bounded cost per match
 * (labels/regex.h). A matcher matches a missing label as the empty string (so
 * {foo=""} selects series without foo). */
#ifndef IM_LABELS_LABELS_H
#define IM_LABELS_LABELS_H

#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/intern.h"

#define IM_METRIC_NAME "__name__"

typedef struct im_label {
    const im_istr_t *name;  /* interned */
    const im_istr_t *value; /* interned, never empty */
} im_label_t;

typedef struct im_labels {
    uint64_t hash;
    uint32_t refs; /* atomic */
    uint32_t n;
    im_label_t l[];
} im_labels_t;

/* The empty label set (a static singleton; ref/unref are no-ops on it). */
const im_labels_t *im_labels_empty(void);
const im_labels_t *im_labels_ref(const im_labels_t *ls);
void im_labels_unref(const im_labels_t *ls);

/* From NUL-terminated name/value pairs, e.g. im_labels_from_strs("a","1","b","2",NULL).
 * Sorted and de-duplicated (last value wins); empty values dropped. */
const im_labels_t *im_labels_from_strs(const char *name, ...);

/* Value of a label, or NULL. */
const im_istr_t *im_labels_get(const im_labels_t *ls, const char *name);
/* ls without the label named name (a new reference; ls itself, referenced,
 * when it has no such label): no builder, one allocation. */
const im_labels_t *im_labels_without(const im_labels_t *ls, const im_istr_t *name);
const im_istr_t *im_labels_get_istr(const im_labels_t *ls, const im_istr_t *name);
bool im_labels_equal(const im_labels_t *a, const im_labels_t *b);
/* Prometheus' labels.Compare: pairwise name, then value; shorter first. */
int im_labels_compare(const im_labels_t *a, const im_labels_t *b);
/* Hash over only the given names (on) or all but them (!on), ignoring __name__
 * when drop_name. names need not be sorted. */
uint64_t im_labels_hash_subset(const im_labels_t *ls, const im_istr_t *const *names, size_t nnames,
                               bool on, bool drop_name);
/* {a="1", b="2"} with the name in front when present: up{job="x"}.
 * Values escaped as Go's %q does for printable UTF-8. */
im_rc im_labels_format(const im_labels_t *ls, im_buf_t *out);

/* ---- Builder: mutable, turns into an immutable set ---- */
typedef struct im_labels_builder {
    im_label_t *l; /* owned array; strings referenced */
    uint32_t n, cap;
} im_labels_builder_t;

void im_lb_init(im_labels_builder_t *b);
void im_lb_free(im_labels_builder_t *b);
void im_lb_reset(im_labels_builder_t *b);
/* Starts from an existing set. */
void im_lb_load(im_labels_builder_t *b, const im_labels_t *ls);
/* Sets name=value (an empty value deletes the label). */
void im_lb_set(im_labels_builder_t *b, const char *name, size_t nlen, const char *val, size_t vlen);
void im_lb_set_istr(im_labels_builder_t *b, const im_istr_t *name, const im_istr_t *val);
void im_lb_del(im_labels_builder_t *b, const char *name);
const im_istr_t *im_lb_get(const im_labels_builder_t *b, const char *name);
/* Returns a new set (caller owns a reference). The builder keeps its content. */
const im_labels_t *im_lb_build(im_labels_builder_t *b);

/* ---- Label-name and metric-name validity (Prometheus 2.x rules) ---- */
bool im_label_name_valid(const char *s, size_t len);  /* [a-zA-Z_][a-zA-Z0-9_]* */
bool im_metric_name_valid(const char *s, size_t len); /* [a-zA-Z_:][a-zA-Z0-9_:]* */
bool im_utf8_valid(const char *s, size_t len);

/* ---- Matchers ---- */
typedef enum im_match_type {
    IM_MATCH_EQ,
    IM_MATCH_NEQ,
    IM_MATCH_RE,
    IM_MATCH_NRE,
} im_match_type_t;

typedef struct im_matcher im_matcher_t;

/* Compiles a matcher. For regex types a bad pattern is IM_EPARSE,
 * "invalid regular expression \"v\": error parsing regexp: <Go's text>". The
 * matcher owns copies of name and value. */
im_rc im_matcher_new(im_match_type_t type, const char *name, size_t nlen, const char *value,
                     size_t vlen, im_matcher_t **out, im_err_t *err);
/* The same with flags: IM_MATCHER_DOTALL makes `.` in a regex match \n too
 * (Prometheus 3's PromQL matchers; 2.x and relabelling leave it out). */
#define IM_MATCHER_DOTALL 1u
im_rc im_matcher_new_flags(im_match_type_t type, const char *name, size_t nlen, const char *value,
                           size_t vlen, unsigned flags, im_matcher_t **out, im_err_t *err);
void im_matcher_free(im_matcher_t *m);
im_match_type_t im_matcher_type(const im_matcher_t *m);
const im_istr_t *im_matcher_name(const im_matcher_t *m);
const char *im_matcher_value(const im_matcher_t *m, size_t *len);
/* Does the value (empty string for a missing label) satisfy the matcher? */
bool im_matcher_matches(const im_matcher_t *m, const char *v, size_t len);
/* Regex matches that exceeded the regex limit so far (regex.h: a value the budget and
 * the DFA fallback could not decide; im_matcher_matches then answered "not selected").
 * Callers that must not return a partial answer compare it before and after matching
 * and fail with an error naming --regex.match-limit. Counts across all users of m. */
uint64_t im_matcher_errors(const im_matcher_t *m);
/* Does the matcher select series that lack the label (i.e. does "" match)? */
bool im_matcher_matches_empty(const im_matcher_t *m);
/* For a regex that is a plain alternation of literals ("a|b|c"), the literals;
 * NULL otherwise. Lets the index look values up instead of scanning. */
const char *const *im_matcher_set_values(const im_matcher_t *m, size_t *n);
/* Does the series match every matcher? */
bool im_labels_match_all(const im_labels_t *ls, im_matcher_t *const *ms, size_t n);
/* "name=\"value\"" etc. as PromQL prints it. */
im_rc im_matcher_format(const im_matcher_t *m, im_buf_t *out);
const char *im_match_type_str(im_match_type_t t);

/* Appends s quoted and escaped as Prometheus prints label values in PromQL and
 * JSON-free text ("a\"b\\c\n"). */
im_rc im_quote_string(im_buf_t *out, const char *s, size_t len);

#endif
