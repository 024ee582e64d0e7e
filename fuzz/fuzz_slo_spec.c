/* fuzz_slo_spec.c — libFuzzer target for the SLO file decoders
 * (cfg_llm_slo_parse_file: ours, Sloth prometheus/v1, OpenSLO v1): any input
 * gives SLOs or an error with a position, never a crash, leak or hang; SLOs
 * read are resolved offline (the catalog) and made into rules. */
#include "util/base.h"

#include "config/llm_slo.h"
#include "llm/slo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 16)) return 0;
    cfg_llm_slo_t s;
    memset(&s, 0, sizeof s);
    im_err_t err;
    im_err_clear(&err);
    if (cfg_llm_slo_parse_file(&s, (const char *)data, size, "fuzz.yml", &err) == IM_OK) {
        im_buf_t out, notes;
        im_buf_init(&out, 0);
        im_buf_init(&notes, 0);
        (void)llm_slo_rules_yaml(&s, NULL, LLM_SLO_PROMETHEUSRULE, &out, &notes, &err);
        im_buf_free(&out);
        im_buf_free(&notes);
    }
    cfg_llm_slo_free(&s);
    return 0;
}
