/* write.c — the exposition writers: Prometheus text 0.0.4 and OpenMetrics 1.0,
 * appended to a caller's im_buf_t (contract in expo.h). Output is what the Go
 * client library writes for the same data (values in Go's 'g' shortest form
 * through im_fmt_float_expo, label values escaped \\ \" \n, HELP escaped \\ \n
 * and in OpenMetrics also \"), so our own /metrics and federation read back the
 * same in Prometheus. Errors are sticky (the buffer's cap). */
#include "util/base.h"

#include <inttypes.h>
#include <stdio.h>

#include "expo/expo.h"
#include "util/fmtfloat.h"

void expo_writer_init(expo_writer_t *w, im_buf_t *out, expo_format_t f)
{
    w->out = out;
    w->format = f;
    w->rc = IM_OK;
}

static void put(expo_writer_t *w, const char *s, size_t n)
{
    if (w->rc == IM_OK) w->rc = im_buf_append(w->out, s, n);
}

static void puts_(expo_writer_t *w, const char *s)
{
    put(w, s, strlen(s));
}

static void put_escaped(expo_writer_t *w, im_sv_t s, bool quote)
{
    size_t from = 0;
    for (size_t i = 0; i < s.len; i++) {
        char c = s.p[i];
        const char *rep = NULL;
        if (c == '\\')
            rep = "\\\\";
        else if (c == '\n')
            rep = "\\n";
        else if (c == '"' && quote)
            rep = "\\\"";
        if (!rep) continue;
        put(w, s.p + from, i - from);
        put(w, rep, 2);
        from = i + 1;
    }
    put(w, s.p + from, s.len - from);
}

static void put_float(expo_writer_t *w, double v)
{
    char b[IM_FLOAT_BUF];
    size_t n = im_fmt_float_expo(v, b, sizeof b);
    put(w, b, n);
}

static void put_ts(expo_writer_t *w, int64_t t_ms)
{
    char b[48];
    int n;
    if (w->format == EXPO_OPENMETRICS_1) {
        uint64_t a = t_ms < 0 ? (uint64_t)0 - (uint64_t)t_ms : (uint64_t)t_ms;
        unsigned ms = (unsigned)(a % 1000);
        if (ms == 0)
            n = snprintf(b, sizeof b, "%s%" PRIu64, t_ms < 0 ? "-" : "", a / 1000);
        else if (ms % 100 == 0)
            n = snprintf(b, sizeof b, "%s%" PRIu64 ".%u", t_ms < 0 ? "-" : "", a / 1000, ms / 100);
        else if (ms % 10 == 0)
            n = snprintf(b, sizeof b, "%s%" PRIu64 ".%02u", t_ms < 0 ? "-" : "", a / 1000, ms / 10);
        else
            n = snprintf(b, sizeof b, "%s%" PRIu64 ".%03u", t_ms < 0 ? "-" : "", a / 1000, ms);
    } else {
        n = snprintf(b, sizeof b, "%" PRId64, t_ms);
    }
    put(w, b, (size_t)n);
}

im_rc expo_write_help(expo_writer_t *w, im_sv_t name, im_sv_t text)
{
    puts_(w, "# HELP ");
    put(w, name.p, name.len);
    put(w, " ", 1);
    put_escaped(w, text, w->format == EXPO_OPENMETRICS_1);
    put(w, "\n", 1);
    return w->rc;
}

im_rc expo_write_type(expo_writer_t *w, im_sv_t name, expo_type_t t)
{
    puts_(w, "# TYPE ");
    put(w, name.p, name.len);
    put(w, " ", 1);
    puts_(w, expo_type_name(t, w->format));
    put(w, "\n", 1);
    return w->rc;
}

im_rc expo_write_unit(expo_writer_t *w, im_sv_t name, im_sv_t unit)
{
    if (w->format != EXPO_OPENMETRICS_1) return w->rc;
    puts_(w, "# UNIT ");
    put(w, name.p, name.len);
    put(w, " ", 1);
    put(w, unit.p, unit.len);
    put(w, "\n", 1);
    return w->rc;
}

static void put_labels(expo_writer_t *w, const expo_label_t *labels, size_t n, bool braces_always)
{
    if (n == 0 && !braces_always) return;
    put(w, "{", 1);
    for (size_t i = 0; i < n; i++) {
        if (i) put(w, ",", 1);
        put(w, labels[i].name.p, labels[i].name.len);
        put(w, "=\"", 2);
        put_escaped(w, labels[i].value, true);
        put(w, "\"", 1);
    }
    put(w, "}", 1);
}

im_rc expo_write_sample(expo_writer_t *w, im_sv_t name, const expo_label_t *labels, size_t nlabels,
                        double v, bool has_ts, int64_t t_ms, const expo_exemplar_t *ex)
{
    put(w, name.p, name.len);
    put_labels(w, labels, nlabels, false);
    put(w, " ", 1);
    put_float(w, v);
    if (has_ts) {
        put(w, " ", 1);
        put_ts(w, t_ms);
    }
    if (ex && w->format == EXPO_OPENMETRICS_1) {
        put(w, " # ", 3);
        put_labels(w, ex->labels, ex->nlabels, true);
        put(w, " ", 1);
        put_float(w, ex->value);
        if (ex->has_ts) {
            put(w, " ", 1);
            put_ts(w, ex->t_ms);
        }
    }
    put(w, "\n", 1);
    return w->rc;
}

im_rc expo_write_sample_ls(expo_writer_t *w, const im_labels_t *ls, double v, bool has_ts,
                           int64_t t_ms)
{
    expo_label_t stack[32];
    expo_label_t *lab = ls->n <= 32 ? stack : im_malloc(ls->n * sizeof *lab);
    im_sv_t name = {"", 0};
    size_t k = 0;
    for (uint32_t i = 0; i < ls->n; i++) {
        if (strcmp(ls->l[i].name->s, IM_METRIC_NAME) == 0) {
            name = im_istr_sv(ls->l[i].value);
            continue;
        }
        lab[k].name = im_istr_sv(ls->l[i].name);
        lab[k].value = im_istr_sv(ls->l[i].value);
        k++;
    }
    im_rc rc = expo_write_sample(w, name, k ? lab : NULL, k, v, has_ts, t_ms, NULL);
    if (lab != stack) im_free(lab);
    return rc;
}

im_rc expo_write_eof(expo_writer_t *w)
{
    if (w->format == EXPO_OPENMETRICS_1) puts_(w, "# EOF\n");
    return w->rc;
}
