/* template.c — Prometheus' template functions (its template/template.go) and the
 * public API of template.h: query first label value strvalue sortByLabel args
 * reReplaceAll match safeHtml title toUpper toLower graphLink tableLink
 * humanize* toTime toDuration parseDuration stripPort stripDomain externalURL
 * pathPrefix, and tmpl_expand/tmpl_check, which prefix the text with Prometheus'
 * variable definitions, parse (parse.c) and execute (exec.c) it. The engine
 * reaches queries only through the tmpl_query_fn callback of the data. */
#include "util/base.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "labels/regex.h"
#include "template/template_int.h"
#include "util/fmtfloat.h"
#include "util/timeutil.h"

static bool to_float(fcall_t *c, const char *fname, const tv_t *v, double *out)
{
    switch (v->k) {
    case TV_FLOAT: *out = v->u.f; return true;
    case TV_INT: *out = (double)v->u.i; return true;
    case TV_DURATION: *out = (double)v->u.i / 1e9; return true;
    case TV_STRING: {
        char *e;
        char tmp[128];
        size_t n = v->u.s.len;
        bool okp = n > 0 && n < sizeof tmp;
        if (okp) {
            memcpy(tmp, v->u.s.p, n);
            tmp[n] = 0;
            /* Go's ParseFloat: decimal, hex, inf, nan, underscores only with base prefix */
            double d;
            if (im_parse_float(tmp, n, &d) && !strchr(tmp, ' ')) {
                *out = d;
                return true;
            }
            errno = 0;
            d = strtod(tmp, &e);
            if (*e == 0 && !isspace((unsigned char)tmp[0])) {
                if (errno == ERANGE && fabs(d) > 1) {
                    im_buf_t q;
                    im_buf_init(&q, 0);
                    tmpl__quote(&q, v->u.s.p, v->u.s.len);
                    tmpl__call_err(c, fname, "strconv.ParseFloat: parsing %s: value out of range",
                                   q.data);
                    im_buf_free(&q);
                    return false;
                }
                *out = d;
                return true;
            }
        }
        im_buf_t q;
        im_buf_init(&q, 0);
        tmpl__quote(&q, v->u.s.p, v->u.s.len);
        tmpl__call_err(c, fname, "strconv.ParseFloat: parsing %s: invalid syntax", q.data);
        im_buf_free(&q);
        return false;
    }
    case TV_INVALID:
    case TV_NILIF: tmpl__call_err(c, fname, "can't convert <nil> to float"); return false;
    default:
        tmpl__call_err(c, fname, "can't convert %s to float", tmpl__type_name(v));
        return false;
    }
}

/* humanize, humanize1024, humanizeDuration, humanizePercentage (variant: the
 * index in fmts). */
static tv_t f_humanize(fcall_t *c)
{
    static size_t (*const fmts[])(double, char *, size_t) = {
        tmpl_humanize, tmpl_humanize1024, tmpl_humanize_duration, tmpl_humanize_percentage};
    size_t (*f)(double, char *, size_t) = fmts[c->variant];
    double v;
    if (!to_float(c, c->name, &c->args[0], &v)) return NOVAL;
    char buf[128];
    size_t n = f(v, buf, sizeof buf);
    return mk_str(c->s, buf, n);
}

static size_t fmt_g4_buf(double v, char *buf, size_t cap, const char *suffix)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    tmpl__fmt_g4(&b, v);
    (void)im_buf_puts(&b, suffix);
    size_t n = (size_t)snprintf(buf, cap, "%s", b.data);
    im_buf_free(&b);
    return n >= cap ? cap - 1 : n;
}

size_t tmpl_humanize(double v, char *buf, size_t cap)
{
    if (v == 0 || isnan(v) || isinf(v)) return fmt_g4_buf(v, buf, cap, "");
    static const char *big[] = {"k", "M", "G", "T", "P", "E", "Z", "Y"};
    static const char *small[] = {"m", "u", "n", "p", "f", "a", "z", "y"};
    const char *prefix = "";
    if (fabs(v) >= 1) {
        for (size_t i = 0; i < IM_ARRAY_LEN(big); i++) {
            if (fabs(v) < 1000) break;
            prefix = big[i];
            v /= 1000;
        }
    } else {
        for (size_t i = 0; i < IM_ARRAY_LEN(small); i++) {
            if (fabs(v) >= 1) break;
            prefix = small[i];
            v *= 1000;
        }
    }
    return fmt_g4_buf(v, buf, cap, prefix);
}

size_t tmpl_humanize1024(double v, char *buf, size_t cap)
{
    if (fabs(v) <= 1 || isnan(v) || isinf(v)) return fmt_g4_buf(v, buf, cap, "");
    static const char *big[] = {"ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"};
    const char *prefix = "";
    for (size_t i = 0; i < IM_ARRAY_LEN(big); i++) {
        if (fabs(v) < 1024) break;
        prefix = big[i];
        v /= 1024;
    }
    return fmt_g4_buf(v, buf, cap, prefix);
}

size_t tmpl_humanize_duration(double v, char *buf, size_t cap)
{
    if (isnan(v) || isinf(v)) return fmt_g4_buf(v, buf, cap, "");
    if (v == 0) return fmt_g4_buf(v, buf, cap, "s");
    if (fabs(v) >= 1) {
        const char *sign = "";
        if (v < 0) {
            sign = "-";
            v = -v;
        }
        double dd = v > 9.2e18 ? 9.2e18 : v;
        int64_t d = (int64_t)dd;
        int64_t sec = d % 60, min = (d / 60) % 60, hrs = (d / 3600) % 24, days = d / 86400;
        if (days)
            return (size_t)snprintf(buf, cap,
                                    "%s%" PRId64 "d %" PRId64 "h %" PRId64 "m %" PRId64 "s", sign,
                                    days, hrs, min, sec);
        if (hrs)
            return (size_t)snprintf(buf, cap, "%s%" PRId64 "h %" PRId64 "m %" PRId64 "s", sign, hrs,
                                    min, sec);
        if (min) return (size_t)snprintf(buf, cap, "%s%" PRId64 "m %" PRId64 "s", sign, min, sec);
        char tmp[64];
        fmt_g4_buf(v, tmp, sizeof tmp, "s");
        return (size_t)snprintf(buf, cap, "%s%s", sign, tmp);
    }
    static const char *small[] = {"m", "u", "n", "p", "f", "a", "z", "y"};
    const char *prefix = "";
    for (size_t i = 0; i < IM_ARRAY_LEN(small); i++) {
        if (fabs(v) >= 1) break;
        prefix = small[i];
        v *= 1000;
    }
    char suf[8];
    snprintf(suf, sizeof suf, "%ss", prefix);
    return fmt_g4_buf(v, buf, cap, suf);
}

size_t tmpl_humanize_percentage(double v, char *buf, size_t cap)
{
    return fmt_g4_buf(v * 100, buf, cap, "%");
}

/* Prometheus' floatToTime: seconds -> nanoseconds (must fit int64) ->
 * model.Time, i.e. millisecond precision. */
static bool float_to_time(fcall_t *c, const char *fname, double v, int64_t *sec, int64_t *nsec)
{
    double ts = v * 1e9;
    if (ts >= 9.223372036854775807e18 || ts < -9.223372036854775808e18) {
        char tmp[IM_FLOAT_BUF];
        im_fmt_float_go(v, 'g', tmp, sizeof tmp);
        tmpl__call_err(
            c, fname,
            "%s cannot be represented as a nanoseconds timestamp since it overflows int64", tmp);
        return false;
    }
    int64_t ms = (int64_t)ts / 1000000;
    *sec = ms / 1000;
    *nsec = (ms % 1000) * 1000000;
    if (*nsec < 0) {
        *nsec += 1000000000;
        *sec -= 1;
    }
    return true;
}

static tv_t f_humanize_timestamp(fcall_t *c)
{
    double v;
    if (!to_float(c, "humanizeTimestamp", &c->args[0], &v)) return NOVAL;
    im_buf_t b;
    im_buf_init(&b, 0);
    if (isnan(v) || isinf(v)) {
        tmpl__fmt_g4(&b, v);
        return mk_buf_str(c->s, &b);
    }
    int64_t sec = 0, nsec = 0;
    if (!float_to_time(c, "humanizeTimestamp", v, &sec, &nsec)) {
        im_buf_free(&b);
        return NOVAL;
    }
    tmpl__fmt_time(&b, sec, nsec);
    return mk_buf_str(c->s, &b);
}

static tv_t f_to_time(fcall_t *c)
{
    double v;
    if (!to_float(c, "toTime", &c->args[0], &v)) return NOVAL;
    if (isnan(v) || isinf(v)) {
        tmpl__call_err(c, "toTime", "value is NaN or Inf");
        return NOVAL;
    }
    int64_t sec = 0, nsec = 0;
    if (!float_to_time(c, "toTime", v, &sec, &nsec)) return NOVAL;
    return (tv_t){.k = TV_TIME, .u.f = (double)sec + (double)nsec / 1e9};
}

static tv_t f_to_duration(fcall_t *c)
{
    double v;
    if (!to_float(c, "toDuration", &c->args[0], &v)) return NOVAL;
    if (isnan(v) || isinf(v)) {
        tmpl__call_err(c, "toDuration", "value is NaN or Inf");
        return NOVAL;
    }
    double ns = round(v * 1e9);
    if (ns > 9.2e18 || ns < -9.2e18) {
        tmpl__call_err(c, "toDuration", "value out of range");
        return NOVAL;
    }
    return (tv_t){.k = TV_DURATION, .u.i = (int64_t)ns};
}

static tv_t f_parse_duration(fcall_t *c)
{
    int64_t ms;
    im_err_t err;
    if (im_duration_parse(c->args[0].u.s.p, c->args[0].u.s.len, &ms, &err) != IM_OK) {
        tmpl__call_err(c, "parseDuration", "not a valid duration string: \"%.*s\"",
                       (int)c->args[0].u.s.len, c->args[0].u.s.p);
        return NOVAL;
    }
    return mk_float((double)ms / 1000.0);
}

static tv_t f_first(fcall_t *c)
{
    const tsamples_t *ss = c->args[0].u.ss;
    if (ss && ss->n > 0) return (tv_t){.k = TV_SAMPLE, .u.smp = ss->v[0]};
    tmpl__call_err(c, "first", "first() called on vector with no elements");
    return NOVAL;
}

static tv_t f_label(fcall_t *c)
{
    const tsample_t *smp = c->args[1].u.smp;
    if (!smp) {
        tmpl__call_err(c, "label",
                       "runtime error: invalid memory address or nil pointer dereference");
        return NOVAL;
    }
    const tv_t *v = tmpl__map_get(&smp->labels, c->args[0].u.s);
    return v ? *v : (tv_t){.k = TV_STRING, .u.s = {"", 0}};
}

static tv_t f_value(fcall_t *c)
{
    if (!c->args[0].u.smp) {
        tmpl__call_err(c, "value",
                       "runtime error: invalid memory address or nil pointer dereference");
        return NOVAL;
    }
    return mk_float(c->args[0].u.smp->v);
}

static tv_t f_strvalue(fcall_t *c)
{
    if (!c->args[0].u.smp) {
        tmpl__call_err(c, "strvalue",
                       "runtime error: invalid memory address or nil pointer dereference");
        return NOVAL;
    }
    const tv_t *v = tmpl__map_get(&c->args[0].u.smp->labels, IM_SV("__value__"));
    return v ? *v : (tv_t){.k = TV_STRING, .u.s = {"", 0}};
}

static tv_t f_sort_by_label(fcall_t *c)
{
    const tsamples_t *in = c->args[1].u.ss;
    tsamples_t *o = xalloc(c->s, sizeof *o);
    o->n = in ? in->n : 0;
    o->v = xalloc(c->s, (o->n ? o->n : 1) * sizeof *o->v);
    if (o->n) memcpy(o->v, in->v, o->n * sizeof *o->v);
    im_sv_t key = c->args[0].u.s;
    /* stable insertion sort */
    for (size_t i = 1; i < o->n; i++) {
        tsample_t *x = o->v[i];
        const tv_t *xv = tmpl__map_get(&x->labels, key);
        im_sv_t xs = xv ? xv->u.s : (im_sv_t){"", 0};
        size_t j = i;
        while (j > 0) {
            const tv_t *yv = tmpl__map_get(&o->v[j - 1]->labels, key);
            im_sv_t ys = yv ? yv->u.s : (im_sv_t){"", 0};
            size_t ml = IM_MIN(xs.len, ys.len);
            int cmp = ml ? memcmp(ys.p, xs.p, ml) : 0;
            if (cmp == 0) cmp = ys.len > xs.len ? 1 : ys.len < xs.len ? -1 : 0;
            if (cmp <= 0) break;
            o->v[j] = o->v[j - 1];
            j--;
        }
        o->v[j] = x;
    }
    return (tv_t){.k = TV_SAMPLES, .u.ss = o};
}

static tv_t f_args(fcall_t *c)
{
    tmap_t *m = xalloc(c->s, sizeof *m);
    m->n = c->n;
    m->e = xalloc(c->s, (c->n ? c->n : 1) * sizeof *m->e);
    for (size_t i = 0; i < c->n; i++) {
        char k[32];
        int kl = snprintf(k, sizeof k, "arg%zu", i);
        tv_t ks = mk_str(c->s, k, (size_t)kl);
        m->e[i].key = ks.u.s;
        m->e[i].val = c->args[i];
    }
    /* sort keys (arg10 < arg2) */
    for (size_t i = 1; i < m->n; i++) {
        tmap_entry_t x = m->e[i];
        size_t j = i;
        while (j > 0 && strcmp(m->e[j - 1].key.p, x.key.p) > 0) {
            m->e[j] = m->e[j - 1];
            j--;
        }
        m->e[j] = x;
    }
    return (tv_t){.k = TV_ANYMAP, .u.m = m};
}

/* Go's regexp.MustCompile (RE2 syntax, unanchored; labels/regex.h): a bad pattern
 * is a template error with Go's panic text. */
static im_regex_t *compile_re(fcall_t *c, const char *fname, im_sv_t pat)
{
    im_regex_t *re = NULL;
    im_err_t e;
    im_err_clear(&e);
    if (im_regex_compile(pat.p, pat.len, IM_REGEX_SEARCH, &re, &e) != IM_OK) {
        tmpl__call_err(c, fname, "regexp: Compile(`%.*s`): %s", (int)IM_MIN(pat.len, (size_t)200),
                       pat.p, e.msg);
        return NULL;
    }
    return re;
}

static tv_t f_match(fcall_t *c)
{
    im_regex_t *re = compile_re(c, "match", c->args[0].u.s);
    if (!re) return NOVAL;
    im_err_t err;
    im_err_clear(&err);
    int rc = im_regex_match(re, c->args[1].u.s.p, c->args[1].u.s.len, &err);
    im_regex_free(re);
    if (rc < 0) {
        tmpl__call_err(c, "match", "%s", err.msg);
        return NOVAL;
    }
    return mk_bool(rc == 1);
}

/* Go's regexp.ReplaceAllString: $1, ${1}, $name, $$ in the replacement; an empty
 * match right after the previous match is not replaced; the search always moves on
 * by at least one rune. */
static tv_t f_re_replace_all(fcall_t *c)
{
    im_regex_t *re = compile_re(c, "reReplaceAll", c->args[0].u.s);
    if (!re) return NOVAL;
    im_sv_t repl = c->args[1].u.s, text = c->args[2].u.s;
    im_buf_t out;
    im_buf_init(&out, TMPL_MAX_OUTPUT);
    size_t *ov = im_malloc(2 * ((size_t)im_regex_groups(re) + 1) * sizeof *ov);
    size_t search = 0, last_end = 0;
    im_err_t err;
    im_err_clear(&err);
    int rc = 0;
    while (search <= text.len) {
        rc = im_regex_exec(re, text.p, text.len, search, ov, &err);
        if (rc <= 0) break;
        size_t ms = ov[0], me = ov[1];
        (void)im_buf_append(&out, text.p + last_end, ms - last_end);
        if (me > last_end || ms == 0) im_regex_expand(re, repl.p, repl.len, text.p, ov, &out);
        last_end = me;
        size_t width = 0;
        if (search < text.len) {
            width = 1;
            while (search + width < text.len &&
                   ((unsigned char)text.p[search + width] & 0xC0) == 0x80 && width < 4)
                width++;
        }
        if (search + width > me)
            search += width;
        else if (search + 1 > me)
            search++;
        else
            search = me;
    }
    im_free(ov);
    im_regex_free(re);
    if (rc < 0) {
        im_buf_free(&out);
        tmpl__call_err(c, "reReplaceAll", "%s", err.msg);
        return NOVAL;
    }
    if (last_end < text.len) (void)im_buf_append(&out, text.p + last_end, text.len - last_end);
    return mk_buf_str(c->s, &out);
}

static tv_t f_safe_html(fcall_t *c)
{
    tv_t v = c->args[0];
    v.k = TV_HTML;
    return v;
}

/* toUpper (variant 0), toLower (1), title (2). */
static tv_t f_map_case(fcall_t *c)
{
    int mode = c->variant;
    im_sv_t in = c->args[0].u.s;
    char *o = xalloc(c->s, in.len + 1);
    bool prev_letter = false;
    for (size_t i = 0; i < in.len; i++) {
        unsigned char ch = (unsigned char)in.p[i];
        if (mode == 0)
            o[i] = (char)((ch >= 'a' && ch <= 'z') ? ch - 32 : ch);
        else if (mode == 1)
            o[i] = (char)((ch >= 'A' && ch <= 'Z') ? ch + 32 : ch);
        else {
            o[i] = (char)((!prev_letter && ch >= 'a' && ch <= 'z') ? ch - 32 : ch);
            /* strings.Title: letters, digits, '_' and non-ASCII continue a word;
             * other ASCII are separators */
            prev_letter = tmpl__is_alnum(ch) || ch == '\'';
        }
    }
    o[in.len] = 0;
    return (tv_t){.k = TV_STRING, .u.s = {o, in.len}};
}

/* graphLink (variant 0: the graph tab) and tableLink (1: the table tab). */
static tv_t f_link(fcall_t *c)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_puts(&b, "/graph?g0.expr=");
    tmpl__query_escape(&b, c->args[0].u.s);
    (void)im_buf_printf(&b, "&g0.tab=%d", c->variant);
    return mk_buf_str(c->s, &b);
}
static tv_t f_external_url(fcall_t *c)
{
    const char *u = c->s->data->external_url ? c->s->data->external_url : "";
    return mk_str(c->s, u, strlen(u));
}
static tv_t f_path_prefix(fcall_t *c)
{
    const char *u = c->s->data->external_url ? c->s->data->external_url : "";
    const char *p = strstr(u, "://");
    if (!p) return mk_str(c->s, "", 0);
    p = strchr(p + 3, '/');
    if (!p) return mk_str(c->s, "", 0);
    size_t n = strcspn(p, "?#");
    return mk_str(c->s, p, n);
}

static tv_t f_strip_port(fcall_t *c)
{
    im_sv_t h = c->args[0].u.s;
    if (h.len && h.p[0] == '[') {
        const char *rb = memchr(h.p, ']', h.len);
        if (rb) return mk_str(c->s, h.p + 1, (size_t)(rb - h.p) - 1);
    }
    const char *colon = NULL;
    size_t ncolons = 0;
    for (size_t i = 0; i < h.len; i++)
        if (h.p[i] == ':') {
            colon = h.p + i;
            ncolons++;
        }
    if (ncolons == 1) return mk_str(c->s, h.p, (size_t)(colon - h.p));
    return mk_str(c->s, h.p, h.len);
}

static tv_t f_strip_domain(fcall_t *c)
{
    im_sv_t h = c->args[0].u.s;
    /* host[:port] -> first label of host, port kept */
    size_t ncolons = 0, colon = h.len;
    for (size_t i = 0; i < h.len; i++)
        if (h.p[i] == ':') {
            ncolons++;
            colon = i;
        }
    if (ncolons > 1 || (h.len && h.p[0] == '[')) return mk_str(c->s, h.p, h.len);
    size_t hl = ncolons ? colon : h.len;
    /* an IPv4 address is kept whole */
    bool ip = hl > 0;
    for (size_t i = 0; i < hl; i++)
        if (!((h.p[i] >= '0' && h.p[i] <= '9') || h.p[i] == '.')) ip = false;
    if (ip) return mk_str(c->s, h.p, h.len);
    const char *dot = memchr(h.p, '.', hl);
    if (!dot) return mk_str(c->s, h.p, h.len);
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_append(&b, h.p, (size_t)(dot - h.p));
    if (ncolons) (void)im_buf_append(&b, h.p + colon, h.len - colon);
    return mk_buf_str(c->s, &b);
}

static void free_samples(tmpl_sample_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) im_labels_unref(v[i].labels);
    im_free(v);
}

static tv_t f_query(fcall_t *c)
{
    state_t *s = c->s;
    if (!s->data->query) {
        tmpl__call_err(c, "query", "queries are not available here");
        return NOVAL;
    }
    tmpl_sample_t *res = NULL;
    size_t n = 0;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = s->data->query(s->data->query_ctx, c->args[0].u.s.p, c->args[0].u.s.len,
                              s->data->t_ms, &res, &n, &err);
    if (rc != IM_OK) {
        tmpl__call_err(c, "query", "%s", err.msg[0] ? err.msg : im_rc_str(rc));
        if (res) free_samples(res, n);
        return NOVAL;
    }
    tsamples_t *ss = xalloc(s, sizeof *ss);
    ss->n = n;
    ss->v = xalloc(s, (n ? n : 1) * sizeof *ss->v);
    for (size_t i = 0; i < n; i++) {
        tsample_t *smp = xalloc(s, sizeof *smp);
        tmpl__labels_to_map(s, res[i].labels, &smp->labels);
        /* keys point into interned strings held by the labels: copy them */
        for (size_t k = 0; k < smp->labels.n; k++) {
            tv_t ks = mk_str(s, smp->labels.e[k].key.p, smp->labels.e[k].key.len);
            smp->labels.e[k].key = ks.u.s;
        }
        smp->v = res[i].v;
        ss->v[i] = smp;
    }
    free_samples(res, n);
    return (tv_t){.k = TV_SAMPLES, .u.ss = ss};
}

const func_def_t tmpl__prom_funcs[] = {
    {"query", f_query, 1, false, {P_STR}, false, 0},
    {"first", f_first, 1, false, {P_SAMPLES}, false, 0},
    {"label", f_label, 2, false, {P_STR, P_SAMPLE}, false, 0},
    {"value", f_value, 1, false, {P_SAMPLE}, false, 0},
    {"strvalue", f_strvalue, 1, false, {P_SAMPLE}, false, 0},
    {"args", f_args, 0, true, {P_ANY}, false, 0},
    {"reReplaceAll", f_re_replace_all, 3, false, {P_STR, P_STR, P_STR}, false, 0},
    {"safeHtml", f_safe_html, 1, false, {P_STR}, false, 0},
    {"match", f_match, 2, false, {P_STR, P_STR}, false, 0},
    {"title", f_map_case, 1, false, {P_STR}, false, 2},
    {"toUpper", f_map_case, 1, false, {P_STR}, false, 0},
    {"toLower", f_map_case, 1, false, {P_STR}, false, 1},
    {"graphLink", f_link, 1, false, {P_STR}, false, 0},
    {"tableLink", f_link, 1, false, {P_STR}, false, 1},
    {"sortByLabel", f_sort_by_label, 2, false, {P_STR, P_SAMPLES}, false, 0},
    {"humanize", f_humanize, 1, false, {P_ANY}, false, 0},
    {"humanize1024", f_humanize, 1, false, {P_ANY}, false, 1},
    {"humanizeDuration", f_humanize, 1, false, {P_ANY}, false, 2},
    {"humanizePercentage", f_humanize, 1, false, {P_ANY}, false, 3},
    {"humanizeTimestamp", f_humanize_timestamp, 1, false, {P_ANY}, false, 0},
    {"toTime", f_to_time, 1, false, {P_ANY}, false, 0},
    {"toDuration", f_to_duration, 1, false, {P_ANY}, false, 0},
    {"parseDuration", f_parse_duration, 1, false, {P_STR}, false, 0},
    {"stripPort", f_strip_port, 1, false, {P_STR}, false, 0},
    {"stripDomain", f_strip_domain, 1, false, {P_STR}, false, 0},
    {"externalURL", f_external_url, 0, false, {P_ANY}, false, 0},
    {"pathPrefix", f_path_prefix, 0, false, {P_ANY}, false, 0},
};
const size_t tmpl__nprom_funcs = IM_ARRAY_LEN(tmpl__prom_funcs);

/* ---- Public API ---- */

static const char DEFS[] = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}"
                           "{{$externalURL := .ExternalURL}}{{$value := .Value}}";

static char *with_defs(const char *text, size_t len, size_t *out_len)
{
    size_t dl = sizeof DEFS - 1;
    char *full = im_malloc(dl + len + 1);
    memcpy(full, DEFS, dl);
    if (len) memcpy(full + dl, text, len);
    full[dl + len] = 0;
    *out_len = dl + len;
    return full;
}

im_rc tmpl_check(const char *name, const char *text, size_t len, im_err_t *err)
{
    size_t fl;
    char *full = with_defs(text, len, &fl);
    im_arena_t arena;
    im_arena_init(&arena, 16384, 64u << 20);
    node_t *root = tmpl__parse(name, full, fl, &arena, err);
    im_arena_free(&arena);
    im_free(full);
    return root ? IM_OK : IM_EPARSE;
}

im_rc tmpl_expand(const char *name, const char *text, size_t len, const tmpl_data_t *data,
                  im_buf_t *out, im_err_t *err)
{
    /* Fast path: no action at all. */
    if (!memmem(text, len, "{{", 2)) {
        if (im_buf_append(out, text, len) != IM_OK)
            return im_err_set(err, IM_ELIMIT, "template output too large");
        return IM_OK;
    }
    size_t fl;
    char *full = with_defs(text, len, &fl);
    im_arena_t arena;
    im_arena_init(&arena, 16384, 256u << 20);
    im_err_t perr_;
    im_err_clear(&perr_);
    node_t *root = tmpl__parse(name, full, fl, &arena, &perr_);
    if (!root) {
        im_err_set(err, IM_EPARSE, "error parsing template %s: %s", name, perr_.msg);
        im_arena_free(&arena);
        im_free(full);
        return IM_EPARSE;
    }
    im_buf_t res;
    im_buf_init(&res, TMPL_MAX_OUTPUT);
    im_err_t xe;
    im_err_clear(&xe);
    state_t s = {
        .name = name, .text = full, .data = data, .arena = &arena, .out = &res, .err = &xe};
    tmpl__labels_to_map(&s, data->labels, &s.labels);
    tmpl__labels_to_map(&s, data->external_labels, &s.ext_labels);
    troot_t troot = {&s.labels, &s.ext_labels, data->external_url ? data->external_url : "",
                     data->value};
    tv_t dot = {.k = TV_DATA, .u.root = &troot};
    tmpl__push_var(&s, IM_SV("$"), dot);
    s.defs = root->elist;
    tmpl__walk(&s, dot, root);
    im_free(s.vars);
    im_rc rc = IM_OK;
    if (s.failed) {
        im_err_set(err, IM_EEXEC, "error executing template %s: %s", name, xe.msg);
        rc = IM_EEXEC;
    } else if (im_buf_append(out, res.data ? res.data : "", res.len) != IM_OK) {
        rc = im_err_set(err, IM_ELIMIT, "template output too large");
    }
    im_buf_free(&res);
    im_arena_free(&arena);
    im_free(full);
    return rc;
}

im_rc tmpl_expand_or_error(const char *name, const char *text, size_t len, const tmpl_data_t *data,
                           im_buf_t *out)
{
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = tmpl_expand(name, text, len, data, out, &err);
    if (rc != IM_OK) (void)im_buf_printf(out, "<error expanding template: %s>", err.msg);
    return rc;
}
