/* limits.c — the check of limits.h: one function decides whether the store
 * can hold a series, for the appender (user settings) and the block writer
 * (format caps), with the sentence a client sees when it cannot. */
#include "util/base.h"

#include <stdio.h>

#include "tsdb/limits.h"

tsdb_limits_t tsdb_limits_format(void)
{
    return (tsdb_limits_t){TSDB_FMT_MAX_LABELS, TSDB_FMT_MAX_SERIES_BYTES,
                           TSDB_FMT_MAX_SERIES_BYTES, TSDB_FMT_MAX_SERIES_BYTES};
}

im_rc tsdb_limits_resolve(tsdb_limits_t *l, im_err_t *err)
{
    static const char *const flag[] = {
        "--storage.tsdb.max-labels-per-series", "--storage.tsdb.max-label-name-bytes",
        "--storage.tsdb.max-label-value-bytes", "--storage.tsdb.max-series-bytes"};
    uint32_t *v[] = {&l->max_labels, &l->max_label_name_bytes, &l->max_label_value_bytes,
                     &l->max_series_bytes};
    tsdb_limits_t f = tsdb_limits_format();
    const uint32_t cap[] = {f.max_labels, f.max_label_name_bytes, f.max_label_value_bytes,
                            f.max_series_bytes};
    const uint32_t def[] = {TSDB_FMT_MAX_LABELS, 0, 0, TSDB_DEFAULT_MAX_SERIES_BYTES};
    for (int i = 0; i < 4; i++) {
        if (*v[i] > cap[i])
            return im_err_set(err, IM_EINVAL,
                              "%s %u is above the storage format's cap of %u (see "
                              "docs/storage.md)",
                              flag[i], *v[i], cap[i]);
        if (!*v[i]) *v[i] = def[i] ? def[i] : cap[i];
    }
    return IM_OK;
}

bool tsdb_limits_ok_raw(uint64_t nlabels, uint64_t total_bytes)
{
    return nlabels <= TSDB_FMT_MAX_LABELS && total_bytes <= TSDB_FMT_MAX_SERIES_BYTES;
}

/* The series as the error names it: its metric name, else its first label. */
static void series_name(const im_labels_t *ls, char *buf, size_t cap)
{
    const im_istr_t *n = im_labels_get(ls, IM_METRIC_NAME);
    if (n)
        snprintf(buf, cap, "%.*s", (int)IM_MIN(n->len, 100), n->s);
    else if (ls->n)
        snprintf(buf, cap, "{%.*s=...}", (int)IM_MIN(ls->l[0].name->len, 100), ls->l[0].name->s);
    else
        snprintf(buf, cap, "{}");
}

im_rc tsdb_limits_check(const tsdb_limits_t *l, const im_labels_t *ls, im_err_t *err)
{
    char nm[128];
    if (ls->n > l->max_labels) {
        series_name(ls, nm, sizeof nm);
        return im_err_set(err, IM_ELIMIT,
                          "series %s has %u labels, more than the limit of %u labels per series "
                          "(--storage.tsdb.max-labels-per-series; the storage format holds at "
                          "most %u)",
                          nm, ls->n, l->max_labels, TSDB_FMT_MAX_LABELS);
    }
    uint64_t total = 0;
    for (uint32_t i = 0; i < ls->n; i++) {
        const im_istr_t *n = ls->l[i].name, *v = ls->l[i].value;
        if (n->len > l->max_label_name_bytes) {
            series_name(ls, nm, sizeof nm);
            return im_err_set(err, IM_ELIMIT,
                              "series %s has a label name of %u bytes (\"%.40s...\"), more than "
                              "the limit of %u bytes (--storage.tsdb.max-label-name-bytes)",
                              nm, n->len, n->s, l->max_label_name_bytes);
        }
        if (v->len > l->max_label_value_bytes) {
            series_name(ls, nm, sizeof nm);
            return im_err_set(err, IM_ELIMIT,
                              "series %s has a value of %u bytes for label \"%.100s\", more than "
                              "the limit of %u bytes (--storage.tsdb.max-label-value-bytes)",
                              nm, v->len, n->s, l->max_label_value_bytes);
        }
        total += (uint64_t)n->len + v->len;
    }
    if (total > l->max_series_bytes) {
        series_name(ls, nm, sizeof nm);
        return im_err_set(err, IM_ELIMIT,
                          "series %s has %llu bytes of label names and values, more than the "
                          "limit of %u bytes (--storage.tsdb.max-series-bytes; the storage "
                          "format holds at most %u)",
                          nm, (unsigned long long)total, l->max_series_bytes,
                          TSDB_FMT_MAX_SERIES_BYTES);
    }
    return IM_OK;
}
