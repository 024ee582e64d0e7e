/* fuzz_rules_template.c — fuzzes the alert template engine (template/template.h):
 * any input must parse or fail with a message, and expansion (with a query
 * callback answering one sample) must end with output or an error, never a
 * crash, a hang or unbounded memory. */
#include "util/base.h"

#include "template/template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static im_rc fuzz_query(void *ctx, const char *q, size_t qlen, int64_t t_ms, tmpl_sample_t **out,
                        size_t *n, im_err_t *err)
{
    (void)ctx;
    (void)t_ms;
    if (qlen > 0 && q[0] == 'e') return im_err_set(err, IM_EPARSE, "parse error");
    *out = im_malloc(sizeof **out);
    (*out)[0].labels = im_labels_from_strs("__name__", "m", "job", "j", NULL);
    (*out)[0].v = (double)qlen;
    *n = 1;
    return IM_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192) return 0;
    const char *s = (const char *)data;
    im_err_t err;
    (void)tmpl_check("__alert_F", s, size, &err);
    const im_labels_t *ls = im_labels_from_strs("instance", "h:1", "job", "j", NULL);
    tmpl_data_t d = {.labels = ls, .value = 1.5, .external_url = "http://x/", .query = fuzz_query};
    im_buf_t out;
    im_buf_init(&out, 0);
    (void)tmpl_expand_or_error("__alert_F", s, size, &d, &out);
    im_buf_free(&out);
    im_labels_unref(ls);
    return 0;
}
