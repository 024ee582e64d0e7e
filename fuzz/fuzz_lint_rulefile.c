/* fuzz_lint_rulefile.c — fuzzes the rule-file walker of `infermon lint` on its
 * own: PrometheusRule objects, Helm values, multi-document YAML, Helm-templated
 * files (the `{{ … }}` masker with its same-length placeholders) and dashboards
 * embedded in ConfigMaps / GrafanaDashboard objects, with the recording-rule
 * pass, the text report and --fix on the original bytes: any bytes must give
 * findings, never a crash, a leak or an edit outside the input. */
#include "util/base.h"

#include "llm/lint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static lint_names_t *g_names;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    if (!g_names) {
        g_names = lint_names_new();
        llm_version_t v;
        llm_version_parse(LLM_VLLM_NEWEST, strlen(LLM_VLLM_NEWEST), &v);
        lint_names_use_catalog(g_names, &v);
    }
    const char *buf = (const char *)data;
    /* Recording rules go into a fresh name set (the shared one stays the catalog). */
    lint_names_t *recs = lint_names_new();
    lint_rulefile_records(recs, buf, size);
    lint_names_free(recs);
    lint_run_t *r = lint_run_new(g_names, NULL);
    /* A path under templates/ (no Chart.yaml exists next to it: the masker
     * decides from the actions alone). */
    (void)lint_rulefile(r, NULL, "chart/templates/f.yaml", buf, size);
    im_buf_t out;
    im_buf_init(&out, 0);
    (void)lint_report(r, g_names, LINT_OUT_TEXT, &out);
    im_buf_reset(&out);
    size_t nfixed = 0;
    if (lint_fix_apply(r, "chart/templates/f.yaml", LINT_INPUT_RULES, buf, size, &out, &nfixed) ==
            IM_OK &&
        nfixed > 0 && out.len == 0)
        __builtin_trap(); /* edits made but nothing written */
    im_buf_free(&out);
    lint_run_free(r);
    return 0;
}
