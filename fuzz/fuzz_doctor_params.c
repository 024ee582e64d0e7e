/* fuzz_doctor_params.c — libFuzzer target for the parameters of GET
 * /api/v1/llm/doctor (llm_doctor_params_parse, src/llm/doctor_params.c). The
 * input is "at\nwindow\nmodel" (a missing field is absent; the first byte's
 * low bits choose which fields count at all, and bit 3 a configured step). A
 * parse must succeed or fail with IM_EINVAL and a message naming the parameter,
 * never crash or read out of bounds; on success the time is whole seconds, the
 * window fits LLM_DOCTOR_MAX_POINTS, and the model, quoted into a selector as
 * doctor's queries quote it, still parses as PromQL matching that one label
 * (no selector injection). Seeds in fuzz/corpus/fuzz_doctor_params. */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>

#include "config/llm_doctor.h"
#include "llm/doctor.h"
#include "labels/labels.h"
#include "promql/ast.h"
#include "promql/parser.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096) return 0;
    unsigned mask = data[0];
    char *s = im_malloc(size);
    memcpy(s, data + 1, size - 1);
    s[size - 1] = 0;
    char *f[3] = {NULL, NULL, NULL};
    char *p = s;
    for (int i = 0; i < 3 && p; i++) {
        f[i] = p;
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        p = nl ? nl + 1 : NULL;
    }
    for (int i = 0; i < 3; i++)
        if (!(mask & (1u << i))) f[i] = NULL;
    cfg_llm_doctor_t dc;
    cfg_llm_doctor_defaults(&dc);
    if (mask & 8) dc.step_ms = 15000;
    llm_doctor_params_t pa;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = llm_doctor_params_parse(f[0], f[1], f[2], 1787659200123LL, &dc, &pa, &err);
    if (rc != IM_OK) {
        if (rc != IM_EINVAL || strncmp(err.msg, "invalid parameter \"", 19) != 0) abort();
        im_free(s);
        return 0;
    }
    if (pa.at_ms % 1000 || pa.window_ms < 0) abort();
    int64_t w = pa.window_ms ? pa.window_ms : dc.window_ms;
    int64_t step = dc.step_ms ? dc.step_ms : IM_MAX(w / 60 - (w / 60) % 1000, 1000);
    if (w / step + 1 > LLM_DOCTOR_MAX_POINTS) abort();
    if (pa.model) {
        im_buf_t q, b;
        im_buf_init(&q, 0);
        im_buf_init(&b, 0);
        (void)im_quote_string(&q, pa.model, strlen(pa.model));
        (void)im_buf_printf(&b, "up{model_name=%s}", q.data ? q.data : "");
        promql_expr_t *e = NULL;
        im_rc prc = promql_parse(b.data, b.len, &e, &err);
        if (prc == IM_OK) {
            /* printed back and parsed again, it is the same selector (one
             * matcher on the same value; the printer may escape differently) */
            im_buf_t b2;
            im_buf_init(&b2, 0);
            if (promql_format(e, &b2) != IM_OK) abort();
            promql_expr_t *e2 = NULL;
            if (promql_parse(b2.data ? b2.data : "", b2.len, &e2, &err) != IM_OK ||
                !promql_expr_equal(e, e2)) {
                fprintf(stderr, "selector changed: %s -> %s\n", b.data, b2.data ? b2.data : "");
                abort();
            }
            promql_expr_free(e2);
            im_buf_free(&b2);
            promql_expr_free(e);
        } else if (prc != IM_EPARSE) {
            abort(); /* a model that is not UTF-8 may be refused, never misread */
        }
        im_buf_free(&q);
        im_buf_free(&b);
    }
    im_free(s);
    return 0;
}
