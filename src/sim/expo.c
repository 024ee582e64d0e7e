/* expo.c — exposition templates and value formatting for the simulator.
 *
 * A template holds the text that never changes (HELP/TYPE lines, series names
 * with their labels) so rendering an endpoint is a copy plus one number per
 * line. The number formats reproduce each real server's client library:
 * prometheus_client's floatToGoString (Python repr, with Go-style exponents for
 * values of 1e6 and more), client_golang's %g, and dcgm-exporter's %d / %f. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/fmtfloat.h"
#include "sim/sim_int.h"

/* ---- Number formatting ---- */

/* Decimal digits of an integer 0 < k < 1e18 into d (most significant first). */
static int int_digits(uint64_t k, char *d)
{
    char tmp[24];
    int n = 0;
    while (k) {
        tmp[n++] = (char)('0' + k % 10);
        k /= 10;
    }
    for (int i = 0; i < n; i++) d[i] = tmp[n - 1 - i];
    return n;
}

/* Shortest digits of v > 0: integer fast path, else the util routine. */
static void shortest(double v, char *d, int *nd, int *dp)
{
    if (v < 1e15 && v == floor(v)) {
        int n = int_digits((uint64_t)v, d);
        *dp = n;
        while (n > 1 && d[n - 1] == '0') n--;
        *nd = n;
        return;
    }
    char tmp[20];
    im_float_shortest(v, tmp, nd, dp);
    memcpy(d, tmp, (size_t)*nd);
}

size_t sim__fmt_pyrepr(double v, char *buf)
{
    if (isnan(v)) return (size_t)snprintf(buf, 8, "nan");
    if (isinf(v)) return (size_t)snprintf(buf, 8, v > 0 ? "inf" : "-inf");
    size_t p = 0;
    if (signbit(v)) buf[p++] = '-';
    v = fabs(v);
    if (v == 0) {
        memcpy(buf + p, "0.0", 3);
        return p + 3;
    }
    char d[24];
    int nd, dp;
    shortest(v, d, &nd, &dp);
    int exp = dp - 1;
    if (exp >= -4 && exp < 16) {
        if (dp <= 0) {
            buf[p++] = '0';
            buf[p++] = '.';
            for (int i = 0; i < -dp; i++) buf[p++] = '0';
            memcpy(buf + p, d, (size_t)nd);
            p += (size_t)nd;
        } else {
            for (int i = 0; i < dp; i++) buf[p++] = i < nd ? d[i] : '0';
            buf[p++] = '.';
            if (nd > dp) {
                memcpy(buf + p, d + dp, (size_t)(nd - dp));
                p += (size_t)(nd - dp);
            } else {
                buf[p++] = '0';
            }
        }
        return p;
    }
    buf[p++] = d[0];
    if (nd > 1) {
        buf[p++] = '.';
        memcpy(buf + p, d + 1, (size_t)(nd - 1));
        p += (size_t)(nd - 1);
    }
    p += (size_t)snprintf(buf + p, 16, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
    return p;
}

/* prometheus_client floatToGoString: repr, except that positive values whose
 * repr has more than 6 digits before the point get an exponent, written as
 * "e+0" followed by the exponent (so 2.5e10 prints as 2.5e+010). */
static size_t fmt_py(double v, char *buf)
{
    if (isnan(v)) {
        memcpy(buf, "NaN", 3);
        return 3;
    }
    if (isinf(v)) {
        memcpy(buf, v > 0 ? "+Inf" : "-Inf", 4);
        return 4;
    }
    size_t n = sim__fmt_pyrepr(v, buf);
    if (!(v > 0)) return n;
    const char *dot = memchr(buf, '.', n);
    if (!dot) return n;
    int dotpos = (int)(dot - buf);
    if (dotpos <= 6) return n;
    /* mantissa = s[0] . s[1:dot] s[dot+1:], stripped of trailing '0' and '.' */
    char m[64];
    size_t mp = 0;
    m[mp++] = buf[0];
    m[mp++] = '.';
    for (int i = 1; i < dotpos; i++) m[mp++] = buf[i];
    for (size_t i = (size_t)dotpos + 1; i < n; i++) m[mp++] = buf[i];
    while (mp > 0 && (m[mp - 1] == '0' || m[mp - 1] == '.')) mp--;
    memcpy(buf, m, mp);
    mp += (size_t)snprintf(buf + mp, 16, "e+0%d", dotpos - 1);
    return mp;
}

static size_t fmt_go(double v, char *buf)
{
    if (v >= 0 && v < 1e6 && v == floor(v)) {
        if (v == 0) {
            buf[0] = '0';
            return 1;
        }
        return (size_t)int_digits((uint64_t)v, buf);
    }
    return im_fmt_float_expo(v, buf, 64);
}

size_t sim__fmt(double v, sim_fmt_t fmt, char *buf)
{
    switch (fmt) {
    case SIM_FMT_PY: return fmt_py(v, buf);
    case SIM_FMT_GO: return fmt_go(v, buf);
    case SIM_FMT_DCGM_INT:
        if (v >= 1 && v < 1e18) return (size_t)int_digits((uint64_t)llround(v), buf);
        return (size_t)snprintf(buf, 64, "%lld", (long long)llround(v));
    case SIM_FMT_DCGM_F: return (size_t)snprintf(buf, 64, "%f", v);
    }
    return 0;
}

/* ---- Templates ---- */

void sim__tpl_init(sim_tpl_t *t, bool sort_labels)
{
    memset(t, 0, sizeof *t);
    im_buf_init(&t->text, 0);
    t->sort_labels = sort_labels;
}

void sim__tpl_free(sim_tpl_t *t)
{
    im_buf_free(&t->text);
    im_free(t->fams);
    im_free(t->series);
    memset(t, 0, sizeof *t);
}

static void text_put(sim_tpl_t *t, const char *s, size_t n)
{
    if (im_buf_append(&t->text, s, n) != IM_OK) im_oom(n);
}

static void text_puts(sim_tpl_t *t, const char *s)
{
    text_put(t, s, strlen(s));
}

static void put_help(sim_tpl_t *t, const char *help, bool om)
{
    for (const char *p = help; *p; p++) {
        if (*p == '\n')
            text_puts(t, "\\n");
        else if (om && *p == '"')
            text_puts(t, "\\\"");
        else
            text_put(t, p, 1);
    }
}

void sim__tpl_family(sim_tpl_t *t, const char *name, const char *type, const char *help,
                     const char *om_name, const char *om_type, sim_fmt_t fmt)
{
    if (t->nfams == t->capfams) {
        t->capfams = t->capfams ? t->capfams * 2 : 32;
        t->fams = im_realloc(t->fams, sizeof *t->fams * (size_t)t->capfams);
    }
    sim_family_t *f = &t->fams[t->nfams++];
    memset(f, 0, sizeof *f);
    f->fmt = (uint8_t)fmt;
    f->group = 1;
    f->first = (uint32_t)t->nseries;
    f->hdr_off = (uint32_t)t->text.len;
    text_puts(t, "# HELP ");
    text_puts(t, name);
    text_puts(t, " ");
    put_help(t, help, false);
    text_puts(t, "\n# TYPE ");
    text_puts(t, name);
    text_puts(t, " ");
    text_puts(t, type);
    text_puts(t, "\n");
    f->hdr_len = (uint32_t)(t->text.len - f->hdr_off);
    if (!om_name) {
        f->om_skip = 1;
        return;
    }
    f->om_off = (uint32_t)t->text.len;
    text_puts(t, "# TYPE ");
    text_puts(t, om_name);
    text_puts(t, " ");
    text_puts(t, om_type);
    text_puts(t, "\n# HELP ");
    text_puts(t, om_name);
    text_puts(t, " ");
    put_help(t, help, true);
    text_puts(t, "\n");
    f->om_len = (uint32_t)(t->text.len - f->om_off);
}

void sim__tpl_group(sim_tpl_t *t, int n)
{
    t->fams[t->nfams - 1].group = (uint32_t)n;
}

int sim__tpl_value(sim_tpl_t *t)
{
    return t->nvalues++;
}

static int label_cmp(const void *a, const void *b)
{
    return strcmp(((const sim_label_t *)a)->name, ((const sim_label_t *)b)->name);
}

static void put_label_value(sim_tpl_t *t, const char *v)
{
    for (const char *p = v; *p; p++) {
        if (*p == '\\')
            text_puts(t, "\\\\");
        else if (*p == '"')
            text_puts(t, "\\\"");
        else if (*p == '\n')
            text_puts(t, "\\n");
        else
            text_put(t, p, 1);
    }
}

int sim__tpl_series(sim_tpl_t *t, const char *name, const sim_label_t *labels, int nlabels,
                    int vidx, int present_idx)
{
    if (t->nseries == t->capseries) {
        t->capseries = t->capseries ? t->capseries * 2 : 256;
        t->series = im_realloc(t->series, sizeof *t->series * (size_t)t->capseries);
    }
    sim_label_t ls[32];
    int n = nlabels > 32 ? 32 : nlabels;
    if (n > 0) memcpy(ls, labels, sizeof *ls * (size_t)n);
    int nsort = n;
    if (t->le_last && n > 0 && strcmp(ls[n - 1].name, "le") == 0) nsort = n - 1;
    if (t->sort_labels && nsort > 1) qsort(ls, (size_t)nsort, sizeof *ls, label_cmp);
    sim_series_t *s = &t->series[t->nseries++];
    s->text_off = (uint32_t)t->text.len;
    text_puts(t, name);
    if (n > 0) {
        text_puts(t, "{");
        for (int i = 0; i < n; i++) {
            if (i) text_puts(t, ",");
            text_puts(t, ls[i].name);
            text_puts(t, "=\"");
            put_label_value(t, ls[i].value);
            text_puts(t, "\"");
        }
        text_puts(t, "}");
    }
    s->text_len = (uint32_t)(t->text.len - s->text_off);
    s->vidx = vidx >= 0 ? vidx : sim__tpl_value(t);
    s->present_idx = present_idx;
    t->fams[t->nfams - 1].n++;
    return s->vidx;
}

/* ctx: the template's text (qsort_r; no file global, templates of several
 * simulators may be built concurrently). */
static int series_cmp(const void *a, const void *b, void *ctx)
{
    const sim_series_t *x = a, *y = b;
    const char *g_sort_text = ctx;
    /* Compare the label part only ("{...}"), names of one family are equal
     * except for the _bucket/_sum/_count suffix, handled by the caller. */
    const char *px = memchr(g_sort_text + x->text_off, '{', x->text_len);
    const char *py = memchr(g_sort_text + y->text_off, '{', y->text_len);
    size_t lx = px ? x->text_len - (size_t)(px - (g_sort_text + x->text_off)) : 0;
    size_t ly = py ? y->text_len - (size_t)(py - (g_sort_text + y->text_off)) : 0;
    int c = memcmp(px ? px : "", py ? py : "", IM_MIN(lx, ly));
    if (c) return c;
    return (lx > ly) - (lx < ly);
}

void sim__tpl_sort_family(sim_tpl_t *t)
{
    sim_family_t *f = &t->fams[t->nfams - 1];
    qsort_r(t->series + f->first, f->n, sizeof *t->series, series_cmp, t->text.data);
}

void sim__render_text(const sim_tpl_t *t, const double *v, im_buf_t *out)
{
    size_t need = t->text.len + (size_t)t->nseries * 32 + 64;
    if (im_buf_reserve(out, need) != IM_OK) return;
    for (int fi = 0; fi < t->nfams; fi++) {
        const sim_family_t *f = &t->fams[fi];
        (void)im_buf_append(out, t->text.data + f->hdr_off, f->hdr_len);
        for (uint32_t i = 0; i < f->n; i++) {
            const sim_series_t *s = &t->series[f->first + i];
            if (s->present_idx >= 0 && v[s->present_idx] == 0) continue;
            if (im_buf_reserve(out, s->text_len + 72) != IM_OK) return;
            char *p = out->data + out->len;
            memcpy(p, t->text.data + s->text_off, s->text_len);
            p += s->text_len;
            *p++ = ' ';
            p += sim__fmt(v[s->vidx], (sim_fmt_t)f->fmt, p);
            *p++ = '\n';
            out->len = (size_t)(p - out->data);
            out->data[out->len] = '\0';
        }
    }
}

/* ---- Random numbers ---- */

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void sim__rng_seed(sim_rng_t *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t sim__rng_next(sim_rng_t *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double sim__rng_unif(sim_rng_t *r)
{
    return (double)(sim__rng_next(r) >> 11) * 0x1.0p-53;
}

double sim__rng_exp(sim_rng_t *r, double mean)
{
    return -mean * log1p(-sim__rng_unif(r));
}

double sim__rng_normal(sim_rng_t *r)
{
    double u1 = sim__rng_unif(r), u2 = sim__rng_unif(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

double sim__rng_lognormal(sim_rng_t *r, double median, double sigma)
{
    return median * exp(sigma * sim__rng_normal(r));
}

int64_t sim__rng_poisson(sim_rng_t *r, double lambda)
{
    if (lambda <= 0) return 0;
    if (lambda > 30) {
        double x = lambda + sqrt(lambda) * sim__rng_normal(r);
        return x < 0 ? 0 : (int64_t)llround(x);
    }
    double l = exp(-lambda), p = 1;
    int64_t k = 0;
    do {
        k++;
        p *= sim__rng_unif(r);
    } while (p > l);
    return k - 1;
}
