/* fuzz_lint_dashboard.c — fuzzes the input walkers of `infermon lint` (Grafana
 * dashboard JSON with template substitution, rule YAML, query lists; chosen by
 * content as the CLI does) together with the checks, the three outputs and
 * --fix with its diff: any bytes must give findings, never a crash or a leak. */
#include "util/base.h"

#include "llm/lint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static lint_names_t *g_names;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    if (!g_names) {
        /* Built once: the catalog plus a few live-looking names with labels. */
        g_names = lint_names_new();
        llm_version_t v;
        llm_version_parse(LLM_VLLM_NEWEST, strlen(LLM_VLLM_NEWEST), &v);
        lint_names_use_catalog(g_names, &v);
        static const char expo[] =
            "# TYPE ray_vllm:num_requests_waiting gauge\n"
            "ray_vllm:num_requests_waiting{exported_pod=\"p\",model_name=\"m\"} 1\n";
        (void)lint_names_add_exposition(g_names, expo, sizeof expo - 1, "fuzz", NULL);
        lint_names_set_scrape_interval(g_names, 15000);
    }
    const char *buf = (const char *)data;
    lint_input_kind_t kind = lint_input_detect(NULL, buf, size);
    lint_run_t *r = lint_run_new(g_names, NULL);
    switch (kind) {
    case LINT_INPUT_DASHBOARD: (void)lint_dashboard(r, "f.json", buf, size); break;
    case LINT_INPUT_RULES: (void)lint_rulefile(r, NULL, "f.yml", buf, size); break;
    default: (void)lint_textfile(r, "f.txt", buf, size); break;
    }
    im_buf_t out;
    im_buf_init(&out, 0);
    for (int f = LINT_OUT_TEXT; f <= LINT_OUT_GITHUB; f++) {
        (void)lint_report(r, g_names, (lint_output_t)f, &out);
        im_buf_reset(&out);
    }
    const char *file = kind == LINT_INPUT_DASHBOARD ? "f.json"
                       : kind == LINT_INPUT_RULES   ? "f.yml"
                                                    : "f.txt";
    size_t nfixed = 0;
    if (lint_fix_apply(r, file, kind, buf, size, &out, &nfixed) == IM_OK && nfixed > 0) {
        im_buf_t diff;
        im_buf_init(&diff, 0);
        (void)lint_diff(file, buf, size, out.data, out.len, &diff);
        im_buf_free(&diff);
    }
    im_buf_free(&out);
    lint_run_free(r);
    return 0;
}
