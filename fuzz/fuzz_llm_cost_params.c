/* fuzz_llm_cost_params.c — fuzzes the parameters of GET /api/v1/llm/cost and
 * the flags of `infermon cost` (llm_cost_params_parse, src/llm/cost_params.c):
 * the input is up to seven lines, from, to, range, month, step, by and team
 * (an empty line = absent). Whatever the text, the parse must give a period
 * with from < to, a step >= 0 and a known grouping, or an error message that
 * names a parameter; never crash, leak or read past a value. Seeds in
 * fuzz/corpus/fuzz_llm_cost_params. */
#include "util/base.h"

#include <stdlib.h>

#include "llm/cost.h"
#include "util/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    char *buf = im_malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    const char *f[7] = {0};
    char *p = buf;
    for (int i = 0; i < 7 && p; i++) {
        f[i] = p;
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        p = nl ? nl + 1 : NULL;
    }
    llm_cost_params_t pp = {.from = f[0],
                            .to = f[1],
                            .range = f[2],
                            .month = f[3],
                            .step = f[4],
                            .by = f[5],
                            .team = f[6]};
    for (int flags = 0; flags < 2; flags++) {
        llm_cost_opts_t o;
        memset(&o, 0, sizeof o);
        im_err_t err;
        im_err_clear(&err);
        if (llm_cost_params_parse(&pp, 1787659200000, flags, &o, &err) == IM_OK) {
            if (o.from_ms < 0 || o.to_ms <= o.from_ms || o.step_ms < 0 || o.by >= LLM_COST_NBY)
                abort();
        } else if (!err.msg[0]) {
            abort();
        }
    }
    im_free(buf);
    return 0;
}
