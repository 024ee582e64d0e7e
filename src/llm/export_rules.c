/* export_rules.c — `infermon export rules`: joins the generated rule files
 * (built-in, cost, SLO) into one Prometheus rule file or one PrometheusRule
 * object of the Prometheus Operator (monitoring.coreos.com/v1). */
#include "util/base.h"

#include <stdio.h>

#include "llm/export.h"

/* Offset just past the top-level "groups:" line of t, or (size_t)-1. */
static size_t groups_body(const char *t, size_t len)
{
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(t + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - t) : len;
        size_t l = e - i;
        while (l > 0 && (t[i + l - 1] == ' ' || t[i + l - 1] == '\r')) l--;
        if (l == 7 && memcmp(t + i, "groups:", 7) == 0) return nl ? e + 1 : len;
        i = nl ? e + 1 : len;
    }
    return (size_t)-1;
}

/* YAML double-quoted scalar. */
static void yq(im_buf_t *b, const char *s)
{
    (void)im_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            (void)im_buf_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            (void)im_buf_printf(b, "\\x%02x", (unsigned char)*s);
        else
            (void)im_buf_putc(b, *s);
    }
    (void)im_buf_putc(b, '"');
}

im_rc llm_export_rules_merge(const llm_export_rules_opts_t *o, const char *const *parts,
                             const size_t *lens, size_t nparts, im_buf_t *out, im_err_t *err)
{
    size_t *off = nparts ? im_calloc(nparts, sizeof *off) : NULL;
    for (size_t i = 0; i < nparts; i++) {
        off[i] = groups_body(parts[i], lens[i]);
        if (off[i] == (size_t)-1) {
            im_free(off);
            return im_err_set(err, IM_EINVAL, "rule text %zu has no top-level groups: line", i);
        }
    }
    bool any = false;
    for (size_t i = 0; i < nparts && !any; i++)
        for (size_t j = off[i]; j < lens[i] && !any; j++)
            any = parts[i][j] != ' ' && parts[i][j] != '\n' && parts[i][j] != '\r';
    (void)im_buf_puts(out, "# infermon export rules (generated; docs/export.md)\n");
    const char *ind = "";
    if (o && o->prometheusrule) {
        (void)im_buf_puts(out, "apiVersion: monitoring.coreos.com/v1\n"
                               "kind: PrometheusRule\n"
                               "metadata:\n"
                               "  name: ");
        yq(out, o->name ? o->name : "infermon-llm-rules");
        (void)im_buf_puts(out, "\n  namespace: ");
        yq(out, o->namespace_ ? o->namespace_ : "monitoring");
        (void)im_buf_puts(out, "\n  labels:\n    app.kubernetes.io/managed-by: infermon\n");
        for (size_t i = 0; o->labels && o->labels[i] && o->labels[i + 1]; i += 2) {
            (void)im_buf_printf(out, "    %s: ", o->labels[i]);
            yq(out, o->labels[i + 1]);
            (void)im_buf_putc(out, '\n');
        }
        (void)im_buf_puts(out, any ? "spec:\n  groups:\n" : "spec:\n  groups: []\n");
        ind = "  ";
    } else {
        (void)im_buf_puts(out, any ? "groups:\n" : "groups: []\n");
    }
    for (size_t i = 0; i < nparts; i++) {
        const char *t = parts[i] + off[i];
        size_t len = lens[i] - off[i];
        size_t j = 0;
        while (j < len) {
            const char *nl = memchr(t + j, '\n', len - j);
            size_t e = nl ? (size_t)(nl - t) : len;
            if (e > j) {
                (void)im_buf_puts(out, ind);
                (void)im_buf_append(out, t + j, e - j);
            }
            (void)im_buf_putc(out, '\n');
            j = nl ? e + 1 : len;
        }
    }
    im_free(off);
    return IM_OK;
}
