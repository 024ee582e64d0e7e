/* catalog.h — the metric catalog: what vLLM, dcgm-exporter and Kueue expose, and
 * the families of other exporters that LLM-serving queries commonly join with.
 *
 * Contract.
 *  1. The data is the vendored catalog/<name>.tsv (see catalog/README.md),
 *     embedded in the binary at build time (scripts/gen-catalog.py;
 *     catalog/catalog_data.h, the one embedded copy, which the simulator reads too)
 *     and parsed once, on the first call to llm_catalog_get(), into a read-only
 *     table that lives until the process ends (thread-safe after that first
 *     call; call it once from the main thread before starting others). Families
 *     of kube-state-metrics, node_exporter and the Prometheus/process basics are
 *     a small table in catalog.c.
 *  2. A family is what one `# TYPE` line declares. `name` is the catalog's family
 *     name (for vLLM counters without `_total`, as registered); `samples` are the
 *     exact sample names the exposition carries (counters `<name>_total`,
 *     histograms `_bucket`/`_sum`/`_count`, `_created` when the default registry is
 *     served). Lookup is by any exposed sample name, and also recognises the
 *     near misses a query makes: a counter without `_total`, a histogram without
 *     its suffix (llm_catalog_lookup's `form`).
 *  3. Versions are vLLM's: first/deprecated/hidden/removed parsed from the
 *     catalog's text; `approx` marks the `~` versions (after v0.10.0 the release
 *     is inferred from merge dates, see catalog/README.md). A version that is
 *     "main only" has `unreleased`. llm_family_status answers for one vLLM
 *     version: not yet added, current, deprecated, hidden or removed.
 *  4. All strings are NUL-terminated and owned by the catalog (never free them). */
#ifndef IM_LLM_CATALOG_H
#define IM_LLM_CATALOG_H

#include "util/base.h"

/* ---- vLLM versions ---- */
typedef struct llm_version {
    bool known;      /* false: no version (empty, "-", "unverified") */
    bool approx;     /* "~v0.15.0", "v0.4.x", "v0.11.1/v0.12.0" */
    bool unreleased; /* "main ..." / "unreleased": newer than every release */
    int major, minor, patch;
} llm_version_t;

/* The newest vLLM release the catalog knows of (the default --vllm-version). */
#define LLM_VLLM_NEWEST "0.27.1"

/* Parses the first version in catalog text ("v0.9.2 (tag-verified)",
 * "~v0.15.0 (scheduled v0.13)", "0.27", "main after 2026-08-10"). Returns false
 * (and out->known = false) when there is none. */
bool llm_version_parse(const char *s, size_t len, llm_version_t *out);
/* <0, 0, >0 as a is older, equal, newer than b (approx ignored; unreleased is
 * newer than any release). Both must be known. */
int llm_version_cmp(const llm_version_t *a, const llm_version_t *b);
/* "v0.12.0" or "~v0.15.0" or "main (unreleased)"; returns the length. */
size_t llm_version_format(const llm_version_t *v, char *buf, size_t cap);

/* ---- Families ----
 * SGLang's families come from sglang-metrics.tsv; those of the other engines
 * (LLM_EXP_ENGINE) from the name/type/labels/buckets cells of
 * serving-signals.tsv (see llm/serving.h). */
typedef enum llm_mtype {
    LLM_MTYPE_UNKNOWN = 0,
    LLM_MTYPE_COUNTER,
    LLM_MTYPE_GAUGE,
    LLM_MTYPE_HISTOGRAM,
    LLM_MTYPE_SUMMARY,
    LLM_MTYPE_INFO,
} llm_mtype_t;
const char *llm_mtype_name(llm_mtype_t t); /* "counter", ... */

typedef enum llm_exporter {
    LLM_EXP_VLLM = 0,   /* vLLM's own vllm:* families */
    LLM_EXP_VLLM_HTTP,  /* http_* of prometheus-fastapi-instrumentator inside vLLM */
    LLM_EXP_DCGM,       /* NVIDIA dcgm-exporter */
    LLM_EXP_KUEUE,      /* Kueue controller */
    LLM_EXP_KSM,        /* kube-state-metrics */
    LLM_EXP_NODE,       /* node_exporter */
    LLM_EXP_PROMETHEUS, /* series Prometheus itself adds (up, scrape_*) */
    LLM_EXP_CADVISOR,   /* cAdvisor (the kubelet's container_* / machine_*) */
    LLM_EXP_EPP,        /* the gateway API inference extension's endpoint picker */
    LLM_EXP_ROUTER,     /* the vLLM production-stack router (vllm:* gauges by server) */
    LLM_EXP_RAY,        /* Ray (ray_serve_*, ray_node_*) */
    LLM_EXP_SGLANG,     /* SGLang's own sglang:* families (sglang-metrics.tsv) */
    LLM_EXP_ENGINE,     /* the other serving engines of serving-signals.tsv (Dynamo
                         * frontend, llm-d EPP, SGLang router, Triton/TRT-LLM) */
    LLM_EXP_COUNT
} llm_exporter_t;
const char *llm_exporter_name(llm_exporter_t e); /* "vLLM", "dcgm-exporter", ... */
/* Does the catalog list every name of the exporter (vLLM, dcgm-exporter, Kueue)?
 * The neighbours (kube-state-metrics, cAdvisor, node_exporter, EPP, the router,
 * Ray) are known by their common names only. */
bool llm_exporter_complete(llm_exporter_t e);
/* The exporter a metric name seems to belong to by its prefix (kube_, container_,
 * node_, inference_pool_, ray_, DCGM_/dcgm_, kueue_, vllm:, …); false if none. */
bool llm_exporter_by_prefix(const char *name, size_t len, llm_exporter_t *out);

/* Units the checks reason about (derived from name, catalog condition text). */
typedef enum llm_unit {
    LLM_UNIT_NONE = 0,
    LLM_UNIT_SECONDS,
    LLM_UNIT_MILLISECONDS,
    LLM_UNIT_BYTES,
    LLM_UNIT_TOKENS,
    LLM_UNIT_REQUESTS,
    LLM_UNIT_RATIO,   /* 0..1 (…_perc in vLLM: 1 means 100%) */
    LLM_UNIT_PERCENT, /* 0..100 (DCGM *_UTIL) */
    LLM_UNIT_ITEMS,
} llm_unit_t;
const char *llm_unit_name(llm_unit_t u);

typedef enum llm_status {
    LLM_STATUS_CURRENT = 0,
    LLM_STATUS_NOT_YET,    /* added after the given version */
    LLM_STATUS_DEPRECATED, /* still exposed, scheduled to go */
    LLM_STATUS_HIDDEN,     /* needs --show-hidden-metrics-for-version */
    LLM_STATUS_REMOVED,
} llm_status_t;

#define LLM_FAMILY_MAX_SAMPLES 6
#define LLM_FAMILY_MAX_LABELS  24
#define LLM_FAMILY_MAX_BUCKETS 40

typedef struct llm_label_values {
    const char *label;
    const char *values[8]; /* the complete set of values, NULL-terminated */
} llm_label_values_t;

typedef struct llm_family {
    const char *name; /* catalog family name */
    const char *base; /* name a query should start from: counters without _total */
    llm_mtype_t type;
    llm_exporter_t exporter;
    llm_unit_t unit;
    const char *samples[LLM_FAMILY_MAX_SAMPLES]; /* exposed sample names */
    uint8_t nsamples;
    bool created_default_registry_only;        /* _created only on a single API server */
    const char *labels[LLM_FAMILY_MAX_LABELS]; /* label names the family carries (no le) */
    uint8_t nlabels;
    bool labels_open; /* label set not fixed (info gauges, dcgm extras): don't judge labels */
    double buckets[LLM_FAMILY_MAX_BUCKETS]; /* finite upper bounds, ascending */
    uint8_t nbuckets;                       /* 0 = unknown or not a histogram */
    bool buckets_vary; /* e.g. build_1_2_5_buckets(max_model_len): only a live source knows */
    llm_label_values_t enums[3]; /* closed value sets parsed from the condition */
    uint8_t nenums;
    const char *condition; /* catalog text, "" when none */
    const char *option;    /* for conditional families: the option to turn on, else NULL */
    llm_version_t first, deprecated, hidden, removed;
    const char *replacement; /* exposed name (or expression text) to use instead, or NULL */
    const char *help;        /* "" when none */
} llm_family_t;

/* How a queried name relates to a family. */
typedef enum llm_form {
    LLM_FORM_SAMPLE = 0,     /* an exact exposed sample name */
    LLM_FORM_COUNTER_BARE,   /* counter queried without _total */
    LLM_FORM_HISTOGRAM_BARE, /* histogram/summary queried without _bucket/_sum/_count */
} llm_form_t;

typedef enum llm_suffix {
    LLM_SUFFIX_NONE = 0,
    LLM_SUFFIX_TOTAL,
    LLM_SUFFIX_BUCKET,
    LLM_SUFFIX_SUM,
    LLM_SUFFIX_COUNT,
    LLM_SUFFIX_CREATED,
} llm_suffix_t;
const char *llm_suffix_str(llm_suffix_t s); /* "", "_total", "_bucket", ... */

typedef struct llm_catalog llm_catalog_t;

/* The catalog (parsed on first use; never NULL: a parse failure of the embedded
 * data aborts, it is a build bug). */
const llm_catalog_t *llm_catalog_get(void);
size_t llm_catalog_count(const llm_catalog_t *c);
const llm_family_t *llm_catalog_family(const llm_catalog_t *c, size_t i);

/* Looks a queried metric name up. Returns the family (NULL if none) and fills
 * form and suffix (may be NULL). */
const llm_family_t *llm_catalog_lookup(const llm_catalog_t *c, const char *name, size_t len,
                                       llm_form_t *form, llm_suffix_t *suffix);
/* Family by catalog family name exactly (NULL if none). */
const llm_family_t *llm_catalog_by_family(const llm_catalog_t *c, const char *name, size_t len);

/* Rename history (vllm-renames.tsv, and dcgm-exporter 1.x names from
 * dcgm-renames.tsv): the replacement text for an old exposed name, or NULL. "(none)"/"(same as
 * above)" come back as NULL/the row above's. */
const char *llm_catalog_renamed_to(const llm_catalog_t *c, const char *name, size_t len);

/* Source-string history (vllm-metric-events.tsv): the first release whose
 * source added the quoted "vllm:..." string `name` and the first that removed
 * it (known=false when none). Returns false when the string never appeared.
 * Source strings are registered names: counters appear without _total since
 * v0.9.0 (see catalog/README.md), so callers try both forms. */
bool llm_catalog_history(const llm_catalog_t *c, const char *name, size_t len, llm_version_t *added,
                         llm_version_t *removed);

/* Status of a vLLM family at version v (non-vLLM families are always CURRENT). */
llm_status_t llm_family_status(const llm_family_t *f, const llm_version_t *v);

/* Is the exposed sample name one the family has (e.g. "_bucket" of a histogram)? */
bool llm_family_has_sample(const llm_family_t *f, const char *name, size_t len);
bool llm_family_has_label(const llm_family_t *f, const char *label, size_t len);

/* Splits a catalog TSV (NUL-terminated, modified in place) into rows and calls
 * fn with the columns (at most 16) of each data row; the header and rows with
 * an empty first column are skipped. For llm's parsers (catalog.c, serving.c). */
void llm__tsv_each(char *text, void (*fn)(void *ctx, char **cols, int ncols), void *ctx);

/* The sample name for a family + suffix ("vllm:prompt_tokens" + TOTAL). */
size_t llm_family_sample_name(const llm_family_t *f, llm_suffix_t s, char *buf, size_t cap);

#endif
