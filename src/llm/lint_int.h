/* lint_int.h — private to src/llm: the known-name table behind lint_names_t and
 * helpers shared by the lint files. */
#ifndef IM_LLM_LINT_INT_H
#define IM_LLM_LINT_INT_H

#include "llm/catalog.h"
#include "llm/lint.h"
#include "util/base.h"

#define LINT_MAX_VALUES_PER_LABEL 256

/* A lint_where_t at file:line:col and path (borrowed), everything else zero. */
static inline lint_where_t lint__where(const char *file, int line, int col, const char *path)
{
    lint_where_t w;
    memset(&w, 0, sizeof w);
    w.file = file;
    w.line = line;
    w.col = col;
    w.path = path;
    return w;
}

typedef struct lname_label {
    char *name;    /* owned */
    char **values; /* owned strings; complete unless overflow */
    uint32_t nvalues, cap;
    bool overflow;
    bool values_known; /* false: names only (catalog without an enum) */
} lname_label_t;

typedef struct lname {
    char *name; /* owned sample name */
    size_t len;
    llm_mtype_t type;    /* the family's type (from TYPE / metadata / catalog) */
    llm_suffix_t suffix; /* sample suffix relative to its family */
    lname_label_t *labels;
    uint32_t nlabels, lcap;
    double *le; /* finite bucket bounds seen (for _bucket samples), sorted */
    uint32_t nle, lecap;
    int64_t interval_ms; /* scrape interval of its job (0 = unknown) */
    bool record;         /* a recording rule's output */
    char *record_expr;   /* owned: its expression (first definition), or NULL */
    bool catalog;        /* known from the catalog only */
    bool labels_exact;   /* label set known exactly (from Prometheus series) */
    uint32_t sources;    /* bit mask of source indexes */
} lname_t;

struct lint_names {
    lname_t **slots; /* open addressing */
    size_t cap, count;
    lint_source_kind_t kind;
    bool live; /* an exposition or Prometheus was added */
    char **source_names;
    size_t nsources;
    int64_t default_interval_ms;
    llm_version_t catalog_version;
    bool exporters_seen[LLM_EXP_COUNT];
};

lname_t *lint__names_get(const lint_names_t *n, const char *name, size_t len);
lname_t *lint__names_put(lint_names_t *n, const char *name, size_t len);
lname_label_t *lint__lname_label(lname_t *e, const char *name, size_t len, bool create);
void lint__lname_add_value(lname_label_t *l, const char *v, size_t len);
void lint__lname_add_le(lname_t *e, double le);
/* Iterate: returns the i-th occupied slot's entry or NULL (i in [0, cap)). */
static inline lname_t *lint__names_slot(const lint_names_t *n, size_t i)
{
    return i < n->cap ? n->slots[i] : NULL;
}

/* Suffix of a sample name given its family name length. */
llm_suffix_t lint__suffix_from(const char *name, size_t len, size_t family_len);

/* ---- Helm templates (lint_helm.c) ---- */

typedef struct lint_tmpl {
    bool templated;      /* chart markers or Helm actions: masked holds the text */
    bool chart;          /* under templates/ next to a Chart.yaml */
    char *masked;        /* owned: the text with every action replaced, same length */
    uint32_t (*acts)[2]; /* owned: byte ranges of the actions */
    size_t nacts, nhelm, nalone, unclosed;
} lint_tmpl_t;

/* Finds the `{{ … }}` actions of buf and, when the file is a Helm template,
 * fills t->masked (json: the text is JSON, so actions outside strings become a
 * number). Returns t->templated. */
bool lint__tmpl_prepare(const char *file, const char *buf, size_t len, bool json, lint_tmpl_t *t);
bool lint__tmpl_overlaps(const lint_tmpl_t *t, size_t s, size_t e);
/* Whether a text holds a placeholder (a run of five `_`). */
bool lint__tmpl_placeholder(const char *s, size_t n);
/* The `template` info finding: what was replaced and what was not checked. */
void lint__tmpl_note(lint_run_t *r, const char *file, const char *buf, size_t len,
                     const lint_tmpl_t *t, size_t nexprs);
void lint__tmpl_free(lint_tmpl_t *t);

/* A dashboard embedded in another file (a ConfigMap's data, a GrafanaDashboard's
 * spec.json): locations start with prefix, findings carry line/col. (dashboard.c) */
im_rc lint__dashboard_at(lint_run_t *r, const char *file, const char *prefix, int line, int col,
                         const char *buf, size_t len);

/* Checks across one dashboard's queries (lint.c): mark before walking it,
 * then lint__dashboard_vars reports selectors that leave out a label the
 * dashboard's other queries of the same family filter by a variable
 * (`ignores-variable`), and forgets the dashboard's selectors. */
size_t lint__dashboard_mark(const lint_run_t *r);
void lint__dashboard_vars(lint_run_t *r, size_t from, const char *file, int line, int col);

/* Moves finding i to line:col (an embedded dashboard's expression found in the
 * file's text). (lint.c) */
void lint__finding_move(lint_run_t *r, size_t i, int line, int col);

/* The value of key in a YAML mapping node, or NULL (map NULL or not a mapping,
 * or no such scalar key). (rulefile.c) */

#endif
