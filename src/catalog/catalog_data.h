/* catalog_data.h — the one embedded copy of the vendored metric catalog (catalog/),
 * generated at build time by scripts/gen-catalog.py into one C file that is the
 * whole of libim_catalog, a leaf (it needs only util/base.h): llm and sim both
 * read it, neither through the other. The binary never reads catalog/ at run
 * time.
 *
 * Two views of the same files:
 *  1. llm__tsv_<name>: each catalog/<name>.tsv as bytes followed by a NUL (not
 *     counted in _len). Private to llm: its parser (catalog.c) reads them; the
 *     rest of llm and everything above use llm/catalog.h.
 *  2. llm_cat_*: the exposition tables the simulator (src/sim) renders from:
 *     names, types, help texts, buckets and version windows of the vLLM, dcgm,
 *     Kueue and SGLang families, and vLLM's registration order (from the catalog's sample
 *     expositions).
 *     Versions are packed as major*1000000 + minor*1000 + patch. 0 in first_v
 *     means "unknown, assume always"; LLM_V_NONE in removed_v/hidden_v means
 *     "never". */
#ifndef IM_CATALOG_CATALOG_DATA_H
#define IM_CATALOG_CATALOG_DATA_H

#include "util/base.h"

/* ---- 1. The TSVs (private to llm) ---- */
extern const unsigned char llm__tsv_vllm_metrics[];
extern const size_t llm__tsv_vllm_metrics_len;
extern const unsigned char llm__tsv_vllm_renames[];
extern const size_t llm__tsv_vllm_renames_len;
extern const unsigned char llm__tsv_vllm_metric_events[];
extern const size_t llm__tsv_vllm_metric_events_len;
extern const unsigned char llm__tsv_dcgm_metrics[];
extern const size_t llm__tsv_dcgm_metrics_len;
extern const unsigned char llm__tsv_kueue_metrics[];
extern const size_t llm__tsv_kueue_metrics_len;
extern const unsigned char llm__tsv_neighbour_metrics[];
extern const size_t llm__tsv_neighbour_metrics_len;
extern const unsigned char llm__tsv_dcgm_renames[];
extern const size_t llm__tsv_dcgm_renames_len;
extern const unsigned char llm__tsv_sglang_metrics[];
extern const size_t llm__tsv_sglang_metrics_len;
extern const unsigned char llm__tsv_serving_signals[];
extern const size_t llm__tsv_serving_signals_len;

/* ---- 2. The exposition tables (the simulator's) ---- */
#define LLM_V(a, b, c) ((uint32_t)(a)*1000000u + (uint32_t)(b)*1000u + (uint32_t)(c))
#define LLM_V_NONE     0xffffffffu

typedef enum llm_cat_mtype {
    LLM_CT_GAUGE = 0,
    LLM_CT_COUNTER,
    LLM_CT_HISTOGRAM,
    LLM_CT_SUMMARY,
} llm_cat_mtype_t;

/* Bucket rules: fixed list, or vLLM's build_1_2_5_buckets(max_model_len). */
enum { LLM_CB_FIXED = 0, LLM_CB_125 = 1 };

/* Family flags. */
enum {
    LLM_CF_V0_ONLY = 1,    /* only the V0 engine (vllm/engine/metrics.py) */
    LLM_CF_V1_ONLY = 2,    /* only the V1 engine */
    LLM_CF_DEFAULT = 4,    /* registered in a default deployment (no opt-in flag) */
    LLM_CF_DCGM_INT = 8,   /* dcgm: INT64 field, printed as a plain integer */
    LLM_CF_IN_SAMPLE = 16, /* kueue: exposed by a default v0.19.2 deployment */
};

typedef struct llm_cat_family {
    const char *name; /* family name as the TSV has it (counters without _total) */
    uint8_t type;     /* llm_cat_mtype_t */
    uint8_t bucket_rule;
    uint16_t flags;
    const char *help;      /* exposition text (Kueue: newlines already as \n) */
    const char *help_v0;   /* vLLM V0 help when it differs, else NULL */
    const double *buckets; /* finite upper bounds, ascending (no +Inf) */
    int nbuckets;
    uint32_t first_v;      /* vLLM: first version exposing it */
    uint32_t deprecated_v; /* vLLM: help gains "DEPRECATED" from here */
    uint32_t hidden_v;     /* vLLM: hidden from here */
    uint32_t removed_v;    /* vLLM: gone from here */
    int field_id;          /* dcgm: DCGM field id */
} llm_cat_family_t;

extern const llm_cat_family_t llm_cat_vllm[];
extern const int llm_cat_vllm_len;
/* dcgm: the default counters (LLM_CF_DEFAULT) and the commented-out DCP profiling
 * fields (opt-in), by field id */
extern const llm_cat_family_t llm_cat_dcgm[];
extern const int llm_cat_dcgm_len;
extern const llm_cat_family_t llm_cat_kueue[]; /* sorted by name */
extern const int llm_cat_kueue_len;
/* SGLang's engine families (sglang-metrics.tsv, in its order); LLM_CF_DEFAULT on
 * those a plain launch with --enable-metrics registers */
extern const llm_cat_family_t llm_cat_sglang[];
extern const int llm_cat_sglang_len;

/* Registration order of vLLM families (TSV names) for V1 and V0 expositions;
 * NULL-terminated. Families outside a version's window are skipped. */
extern const char *const llm_cat_vllm_order_v1[];
extern const char *const llm_cat_vllm_order_v0[];

/* The family of tab[0..n) named name exactly, or NULL. */
const llm_cat_family_t *llm_cat_find(const llm_cat_family_t *tab, int n, const char *name);

#endif
