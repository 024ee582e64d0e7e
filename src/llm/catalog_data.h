/* catalog_data.h — the vendored catalog TSVs as embedded bytes (private to llm).
 *
 * Generated at build time by scripts/embed-catalog.cmake from catalog/<name>.tsv; each
 * array holds the file's bytes followed by a NUL (not counted in _len). */
#ifndef IM_LLM_CATALOG_DATA_H
#define IM_LLM_CATALOG_DATA_H

#include "util/base.h"

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

#endif
