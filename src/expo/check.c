/* check.c — expo_check: the exposition validator behind `infermon check metrics`
 * and the fuzzer. Runs the parser, then the checks the parser leaves out
 * because the scrape path should not pay for them: duplicate series and label
 * names, metadata repeated or after the samples, families split across the
 * input, histogram buckets (le numeric, cumulative, +Inf present and equal to
 * _count), summary quantiles, OpenMetrics counter/info/stateset rules, and the
 * lints promtool check metrics prints (no help text, counter suffix, base units,
 * abbreviated units, type in name, ':' and camelCase). Problems are collected,
 * sorted by position and reported at the end. Memory: one hash entry per
 * distinct series and family, in an arena freed on return. */
#include "util/base.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "expo/expo.h"
#include "expo/expo_int.h"
#include "expo/parse_int.h"
#include "util/arena.h"
#include "util/fmtfloat.h"
#include "util/hash.h"

/* ---- A small string-keyed hash map (open addressing) ---- */

typedef struct slot {
    const char *key; /* arena */
    size_t klen;
    uint64_t h;
    void *val;
} slot_t;

typedef struct map {
    slot_t *s;
    size_t cap, n;
} map_t;

static void map_free(map_t *m)
{
    im_free_tag(IM_MEM_EXPO, m->s, m->cap * sizeof *m->s);
}

static slot_t *map_find(map_t *m, const char *k, size_t kl, uint64_t h)
{
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        slot_t *s = &m->s[i];
        if (!s->key) return s;
        if (s->h == h && s->klen == kl && memcmp(s->key, k, kl) == 0) return s;
    }
}

/* Returns the slot for key (new slots have val == NULL and a copied key). */
static slot_t *map_put(map_t *m, im_arena_t *a, const char *k, size_t kl)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 64;
        slot_t *old = m->s;
        size_t oc = m->cap;
        m->s = im_calloc_tag(IM_MEM_EXPO, nc, sizeof *m->s);
        m->cap = nc;
        for (size_t i = 0; i < oc; i++)
            if (old[i].key) *map_find(m, old[i].key, old[i].klen, old[i].h) = old[i];
        im_free_tag(IM_MEM_EXPO, old, oc * sizeof *old);
    }
    uint64_t h = im_hash(k, kl);
    slot_t *s = map_find(m, k, kl, h);
    if (!s->key) {
        s->key = im_arena_strndup(a, k, kl);
        s->klen = kl;
        s->h = h;
        s->val = NULL;
        m->n++;
    }
    return s;
}

/* ---- State ---- */

typedef struct fam {
    const char *name; /* arena, NUL-terminated */
    size_t len;
    expo_type_t type;
    bool typed, has_help, has_unit, closed, split_reported;
    bool le_label, quantile_label;
    int first_line, type_line, help_line, unit_line, last_line;
    size_t nsamples;
} fam_t;

typedef struct bucket {
    double le, v;
    int line;
} bucket_t;

typedef struct group {
    fam_t *f;
    int line;
    bucket_t *b; /* owned (im_realloc_tag) */
    size_t nb, cap;
    bool has_count;
    double count;
    int count_line;
} group_t;

typedef struct problem {
    int line, col;
    expo_severity_t sev;
    size_t seq;
    char *msg; /* arena */
} problem_t;

typedef struct chk {
    expo_format_t fmt;
    const expo_check_opts_t *opts;
    im_arena_t arena;
    map_t series, fams, groups;
    fam_t **famv; /* in order of appearance */
    size_t nfam, famcap;
    group_t **grpv;
    size_t ngrp, grpcap;
    problem_t *pv;
    size_t np, pcap;
    fam_t *cur;
    im_buf_t key;
    uint32_t *idx;
    size_t idxcap;
    expo_check_stats_t st;
} chk_t;

/* v (n used of *cap elements of elem bytes) with room for one more: doubled
 * when full, first elements at the start. */
static void *grow(void *v, size_t n, size_t *cap, size_t elem, size_t first)
{
    if (n < *cap) return v;
    size_t nc = *cap ? *cap * 2 : first;
    v = im_realloc_tag(IM_MEM_EXPO, v, *cap * elem, nc * elem);
    *cap = nc;
    return v;
}

static void problem(chk_t *c, int line, int col, expo_severity_t sev, const char *fmt, ...)
    IM_PRINTF(5, 6);
static void problem(chk_t *c, int line, int col, expo_severity_t sev, const char *fmt, ...)
{
    char msg[IM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->pv = grow(c->pv, c->np, &c->pcap, sizeof *c->pv, 16);
    problem_t *p = &c->pv[c->np];
    p->line = line;
    p->col = col;
    p->sev = sev;
    p->seq = c->np++;
    p->msg = im_arena_strndup(&c->arena, msg, strlen(msg));
    if (sev == EXPO_SEV_ERROR)
        c->st.errors++;
    else
        c->st.warnings++;
}

static fam_t *fam_get(chk_t *c, const char *name, size_t len, int line, bool create)
{
    if (!create) {
        if (!c->fams.cap) return NULL;
        slot_t *s = map_find(&c->fams, name, len, im_hash(name, len));
        return s->key ? s->val : NULL;
    }
    slot_t *s = map_put(&c->fams, &c->arena, name, len);
    if (!s->val) {
        fam_t *f = im_arena_calloc(&c->arena, sizeof *f);
        f->name = s->key;
        f->len = len;
        f->first_line = line;
        s->val = f;
        c->famv = grow(c->famv, c->nfam, &c->famcap, sizeof *c->famv, 64);
        c->famv[c->nfam++] = f;
    }
    return s->val;
}

/* Switches the current family; reports a split when f was left before. */
static void enter(chk_t *c, fam_t *f, int line)
{
    if (c->cur == f) return;
    if (c->cur) c->cur->closed = true;
    c->cur = f;
    if (f->closed && !f->split_reported) {
        f->split_reported = true;
        problem(c, line, 1, c->fmt == EXPO_OPENMETRICS_1 ? EXPO_SEV_ERROR : EXPO_SEV_WARNING,
                "metric family \"%s\" is split: its lines are not together (it started at "
                "line %d)",
                f->name, f->first_line);
    }
}

static bool has_suffix(const char *s, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* The family a sample belongs to. */
static fam_t *sample_family(chk_t *c, const expo_entry_t *e)
{
    if (e->type != EXPO_TYPE_UNKNOWN) {
        fam_t *cf = c->cur;
        if (cf && cf->len == e->family_len && memcmp(cf->name, e->name.p, cf->len) == 0) return cf;
        return fam_get(c, e->name.p, e->family_len, e->line, true);
    }
    static const struct {
        const char *suf;
        unsigned types; /* bit per expo_type_t */
    } sufs[] = {
        {"_total", 1u << EXPO_TYPE_COUNTER},
        {"_created", 1u << EXPO_TYPE_COUNTER | 1u << EXPO_TYPE_HISTOGRAM | 1u << EXPO_TYPE_SUMMARY},
        {"_bucket", 1u << EXPO_TYPE_HISTOGRAM | 1u << EXPO_TYPE_GAUGEHISTOGRAM},
        {"_sum", 1u << EXPO_TYPE_HISTOGRAM | 1u << EXPO_TYPE_SUMMARY},
        {"_count", 1u << EXPO_TYPE_HISTOGRAM | 1u << EXPO_TYPE_SUMMARY},
        {"_gsum", 1u << EXPO_TYPE_GAUGEHISTOGRAM},
        {"_gcount", 1u << EXPO_TYPE_GAUGEHISTOGRAM},
        {"_info", 1u << EXPO_TYPE_INFO},
    };
    fam_t *f = c->cur;
    if (f && f->len == e->name.len && memcmp(f->name, e->name.p, f->len) == 0) return f;
    f = fam_get(c, e->name.p, e->name.len, e->line, false);
    if (f && (f->typed || f->nsamples)) return f;
    for (size_t i = 0; i < IM_ARRAY_LEN(sufs); i++) {
        if (!has_suffix(e->name.p, e->name.len, sufs[i].suf)) continue;
        fam_t *g = fam_get(c, e->name.p, e->name.len - strlen(sufs[i].suf), e->line, false);
        if (g && g->typed && (sufs[i].types & (1u << g->type))) return g;
    }
    return fam_get(c, e->name.p, e->name.len, e->line, true);
}

static bool camel(const char *s, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] >= 'a' && s[i] <= 'z' && s[i + 1] >= 'A' && s[i + 1] <= 'Z') return true;
    return false;
}

/* Sorted label indices in c->idx; returns false (and reports) on duplicate names. */
static bool sort_labels(chk_t *c, const expo_entry_t *e)
{
    if (e->nlabels > c->idxcap) {
        size_t nc = e->nlabels * 2;
        c->idx =
            im_realloc_tag(IM_MEM_EXPO, c->idx, c->idxcap * sizeof *c->idx, nc * sizeof *c->idx);
        c->idxcap = nc;
    }
    for (uint32_t i = 0; i < e->nlabels; i++) {
        uint32_t j = i;
        im_sv_t n = e->labels[i].name;
        while (j > 0) {
            im_sv_t m = e->labels[c->idx[j - 1]].name;
            int r = memcmp(m.p, n.p, IM_MIN(m.len, n.len));
            if (r < 0 || (r == 0 && m.len < n.len)) break;
            if (r == 0 && m.len == n.len) {
                problem(c, e->line, (int)(n.p - e->name.p) + 1, EXPO_SEV_ERROR,
                        "duplicate label name \"%.*s\" in %.*s", (int)n.len, n.p, (int)e->name.len,
                        e->name.p);
                return false;
            }
            c->idx[j] = c->idx[j - 1];
            j--;
        }
        c->idx[j] = i;
    }
    return true;
}

/* Canonical key: name, then sorted name=value pairs, skipping label skip. */
static void build_key(chk_t *c, const expo_entry_t *e, size_t famlen, const char *skip)
{
    size_t need = famlen;
    for (uint32_t k = 0; k < e->nlabels; k++)
        need += e->labels[k].name.len + e->labels[k].value.len + 2;
    im_buf_reset(&c->key);
    if (im_buf_reserve(&c->key, need) != IM_OK) return; /* uncapped buffer: cannot fail */
    char *w = c->key.data;
    memcpy(w, e->name.p, famlen);
    w += famlen;
    for (uint32_t k = 0; k < e->nlabels; k++) {
        const expo_label_t *l = &e->labels[c->idx[k]];
        if (l->value.len == 0) continue; /* empty = absent, as Prometheus */
        if (skip && im_sv_eq_cstr(l->name, skip)) continue;
        *w++ = '\xff';
        memcpy(w, l->name.p, l->name.len);
        w += l->name.len;
        *w++ = '\xfe';
        memcpy(w, l->value.p, l->value.len);
        w += l->value.len;
    }
    c->key.len = (size_t)(w - c->key.data);
    *w = '\0';
}

static const expo_label_t *find_label(const expo_entry_t *e, const char *name)
{
    for (uint32_t i = 0; i < e->nlabels; i++)
        if (im_sv_eq_cstr(e->labels[i].name, name)) return &e->labels[i];
    return NULL;
}

static group_t *group_get(chk_t *c, fam_t *f, const expo_entry_t *e)
{
    build_key(c, e, f->len, "le");
    slot_t *s = map_put(&c->groups, &c->arena, c->key.data, c->key.len);
    if (!s->val) {
        group_t *g = im_arena_calloc(&c->arena, sizeof *g);
        g->f = f;
        g->line = e->line;
        s->val = g;
        c->grpv = grow(c->grpv, c->ngrp, &c->grpcap, sizeof *c->grpv, 64);
        c->grpv[c->ngrp++] = g;
    }
    return s->val;
}

static void check_sample(chk_t *c, const expo_entry_t *e)
{
    c->st.samples++;
    bool om = c->fmt == EXPO_OPENMETRICS_1;
    fam_t *f = sample_family(c, e);
    enter(c, f, e->line);
    f->nsamples++;
    f->last_line = e->line;
    for (uint32_t i = 0; i < e->nlabels; i++) {
        const expo_label_t *l = &e->labels[i];
        if (im_sv_eq_cstr(l->name, IM_METRIC_NAME))
            problem(c, e->line, (int)(l->name.p - e->name.p) + 1, EXPO_SEV_ERROR,
                    "label name \"__name__\" is reserved");
        if (im_sv_eq_cstr(l->name, "le")) f->le_label = true;
        if (im_sv_eq_cstr(l->name, "quantile")) f->quantile_label = true;
        if (camel(l->name.p, l->name.len) && (!c->opts || c->opts->lint))
            problem(c, e->line, (int)(l->name.p - e->name.p) + 1, EXPO_SEV_WARNING,
                    "%s label names should be written in 'snake_case' not 'camelCase'", f->name);
    }
    if (!sort_labels(c, e)) return;
    build_key(c, e, e->name.len, NULL);
    slot_t *s = map_put(&c->series, &c->arena, c->key.data, c->key.len);
    if (s->val) {
        problem(c, e->line, 1, EXPO_SEV_ERROR, "duplicate series %.*s (first at line %d)",
                (int)IM_MIN(e->name.len, 200), e->name.p, (int)(intptr_t)s->val);
    } else {
        s->val = (void *)(intptr_t)e->line;
        c->st.series++;
    }
    const char *suf = e->name.p + f->len;
    size_t sl = e->name.len >= f->len ? e->name.len - f->len : 0;
#define SUF(lit) (sl == sizeof(lit) - 1 && memcmp(suf, lit, sl) == 0)
    switch (f->typed ? f->type : EXPO_TYPE_UNKNOWN) {
    case EXPO_TYPE_HISTOGRAM:
    case EXPO_TYPE_GAUGEHISTOGRAM:
        if (SUF("_bucket")) {
            const expo_label_t *le = find_label(e, "le");
            double v;
            if (!le) {
                problem(c, e->line, 1, EXPO_SEV_WARNING,
                        "histogram bucket %.*s without an \"le\" label", (int)e->name.len,
                        e->name.p);
            } else if (!expo__parse_float(le->value.p, le->value.len, &v)) {
                problem(c, e->line, (int)(le->name.p - e->name.p) + 1, EXPO_SEV_ERROR,
                        "expected a float as the value of the \"le\" label, got \"%.*s\"",
                        (int)IM_MIN(le->value.len, 64), le->value.p);
            } else {
                group_t *g = group_get(c, f, e);
                g->b = grow(g->b, g->nb, &g->cap, sizeof *g->b, 16);
                g->b[g->nb++] = (bucket_t){v, e->value, e->line};
            }
        } else if (SUF("_count") || SUF("_gcount")) {
            group_t *g = group_get(c, f, e);
            g->has_count = true;
            g->count = e->value;
            g->count_line = e->line;
        }
        break;
    case EXPO_TYPE_SUMMARY:
        if (sl == 0) {
            const expo_label_t *q = find_label(e, "quantile");
            double v;
            if (!q)
                problem(c, e->line, 1, EXPO_SEV_WARNING,
                        "summary sample %.*s without a \"quantile\" label", (int)e->name.len,
                        e->name.p);
            else if (!expo__parse_float(q->value.p, q->value.len, &v))
                problem(c, e->line, (int)(q->name.p - e->name.p) + 1, EXPO_SEV_ERROR,
                        "expected a float as the value of the \"quantile\" label, got \"%.*s\"",
                        (int)IM_MIN(q->value.len, 64), q->value.p);
        }
        break;
    case EXPO_TYPE_COUNTER:
        if (om && sl == 0)
            problem(c, e->line, 1, EXPO_SEV_WARNING,
                    "OpenMetrics counter samples must be named %s_total (or %s_created)", f->name,
                    f->name);
        break;
    case EXPO_TYPE_STATESET:
        if (e->value != 0 && e->value != 1)
            problem(c, e->line, 1, EXPO_SEV_WARNING, "stateset values must be 0 or 1");
        if (!find_label(e, f->name))
            problem(c, e->line, 1, EXPO_SEV_WARNING,
                    "stateset sample without a label named after the family (\"%s\")", f->name);
        break;
    case EXPO_TYPE_INFO:
        if (e->value != 1) problem(c, e->line, 1, EXPO_SEV_WARNING, "info metric values must be 1");
        break;
    default: break;
    }
#undef SUF
    if (e->has_exemplar) {
        size_t runes = 0;
        for (uint32_t i = 0; i < e->exemplar.nlabels; i++) {
            const expo_label_t *l = &e->exemplar.labels[i];
            for (size_t k = 0; k < l->name.len; k++) runes += (l->name.p[k] & 0xc0) != 0x80;
            for (size_t k = 0; k < l->value.len; k++) runes += (l->value.p[k] & 0xc0) != 0x80;
        }
        if (runes > 128)
            problem(c, e->line, 1, EXPO_SEV_WARNING,
                    "exemplar labels have %zu characters, more than the 128 OpenMetrics allows",
                    runes);
    }
}

static void check_meta(chk_t *c, const expo_entry_t *e)
{
    if (e->kind == EXPO_ENTRY_EOF) return;
    fam_t *f = fam_get(c, e->name.p, e->name.len, e->line, true);
    enter(c, f, e->line);
    const char *what = e->kind == EXPO_ENTRY_HELP   ? "HELP"
                       : e->kind == EXPO_ENTRY_TYPE ? "TYPE"
                                                    : "UNIT";
    int *seen = e->kind == EXPO_ENTRY_HELP   ? &f->help_line
                : e->kind == EXPO_ENTRY_TYPE ? &f->type_line
                                             : &f->unit_line;
    if (*seen) {
        problem(c, e->line, 1, EXPO_SEV_ERROR,
                "second %s line for metric family \"%s\" (first at line %d)", what, f->name, *seen);
        return;
    }
    *seen = e->line;
    if (e->kind == EXPO_ENTRY_TYPE) {
        if (f->nsamples)
            problem(c, e->line, 1, EXPO_SEV_ERROR,
                    "TYPE line for metric family \"%s\" comes after its samples (line %d)", f->name,
                    f->first_line);
        f->typed = true;
        f->type = e->type;
    } else if (e->kind == EXPO_ENTRY_HELP) {
        f->has_help = true;
    } else {
        f->has_unit = true;
    }
}

static int cmp_bucket(const void *a, const void *b)
{
    double x = ((const bucket_t *)a)->le, y = ((const bucket_t *)b)->le;
    return x < y ? -1 : x > y ? 1 : 0;
}

static void fmt_le(double v, char *b, size_t cap)
{
    im_fmt_float_expo(v, b, cap);
}

static void check_groups(chk_t *c)
{
    for (size_t i = 0; i < c->ngrp; i++) {
        group_t *g = c->grpv[i];
        if (g->nb) qsort(g->b, g->nb, sizeof *g->b, cmp_bucket);
        char a[IM_FLOAT_BUF], b[IM_FLOAT_BUF], x[IM_FLOAT_BUF], y[IM_FLOAT_BUF];
        for (size_t k = 1; k < g->nb; k++) {
            if (g->b[k].v < g->b[k - 1].v) {
                fmt_le(g->b[k].le, a, sizeof a);
                fmt_le(g->b[k - 1].le, b, sizeof b);
                fmt_le(g->b[k].v, x, sizeof x);
                fmt_le(g->b[k - 1].v, y, sizeof y);
                problem(c, g->b[k].line, 1, EXPO_SEV_WARNING,
                        "histogram %s: buckets are not cumulative: le=\"%s\" has %s, less than %s "
                        "in le=\"%s\"",
                        g->f->name, a, x, y, b);
                break;
            }
        }
        bool has_inf = g->nb > 0 && isinf(g->b[g->nb - 1].le) && g->b[g->nb - 1].le > 0;
        if (g->nb > 0 && !has_inf)
            problem(c, g->line, 1, EXPO_SEV_WARNING, "histogram %s has no le=\"+Inf\" bucket",
                    g->f->name);
        if (has_inf && g->has_count) {
            double inf = g->b[g->nb - 1].v;
            if (inf != g->count && !(isnan(inf) && isnan(g->count))) {
                fmt_le(g->count, x, sizeof x);
                fmt_le(inf, y, sizeof y);
                problem(c, g->count_line, 1, EXPO_SEV_WARNING,
                        "histogram %s: %s (%s) is not equal to the le=\"+Inf\" bucket (%s)",
                        g->f->name, g->f->type == EXPO_TYPE_GAUGEHISTOGRAM ? "_gcount" : "_count",
                        x, y);
            }
        }
    }
}

/* ---- promtool's lints (client_golang promlint, as promtool 2.42 prints them) ---- */

static bool tok_eq(const char *t, size_t n, const char *s)
{
    return strlen(s) == n && memcmp(t, s, n) == 0;
}

/* s is lower case. */
static bool tok_eq_ci(const char *t, size_t n, const char *s)
{
    if (strlen(s) != n) return false;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
        if (c != s[i]) return false;
    }
    return true;
}

static void lint_family(chk_t *c, fam_t *f)
{
    static const char *const units[] = {"amperes", "bytes",  "celsius", "grams", "joules",
                                        "kelvin",  "meters", "seconds", "volts"};
    static const char *const prefixes[] = {"pico", "nano",  "micro", "milli", "centi", "deci",
                                           "deca", "hecto", "kilo",  "kibi",  "mega",  "giga",
                                           "gibi", "tera",  "tebi",  "peta",  "pebi"};
    static const char *const abbrev[] = {"s",  "ms", "us", "ns", "sec", "b", "kb",
                                         "mb", "gb", "tb", "pb", "m",   "h", "d"};
    static const char *const tnames[] = {"counter", "gauge", "histogram", "summary"};
    const char *n = f->name;
    size_t len = f->len;
    int line = f->first_line;
#define LINT(...) problem(c, line, 1, EXPO_SEV_WARNING, __VA_ARGS__)
    if (!f->has_help) LINT("%s no help text", n);
    bool text = c->fmt == EXPO_TEXT_004;
    expo_type_t t = f->typed ? f->type : EXPO_TYPE_UNKNOWN;
    if (t == EXPO_TYPE_COUNTER && text && !has_suffix(n, len, "_total"))
        LINT("%s counter metrics should have \"_total\" suffix", n);
    /* promtool skips the type-dependent lints for untyped families. */
    if (t != EXPO_TYPE_UNKNOWN) {
        if (t != EXPO_TYPE_COUNTER && has_suffix(n, len, "_total"))
            LINT("%s non-counter metrics should not have \"_total\" suffix", n);
        if (t != EXPO_TYPE_HISTOGRAM && t != EXPO_TYPE_SUMMARY) {
            if (has_suffix(n, len, "_count"))
                LINT("%s non-histogram and non-summary metrics should not have \"_count\" suffix",
                     n);
            if (has_suffix(n, len, "_sum"))
                LINT("%s non-histogram and non-summary metrics should not have \"_sum\" suffix", n);
        }
        if (t != EXPO_TYPE_HISTOGRAM && has_suffix(n, len, "_bucket"))
            LINT("%s non-histogram metrics should not have \"_bucket\" suffix", n);
        if (t != EXPO_TYPE_HISTOGRAM && t != EXPO_TYPE_GAUGEHISTOGRAM && f->le_label)
            LINT("%s non-histogram metrics should not have \"le\" label", n);
        if (t != EXPO_TYPE_SUMMARY && f->quantile_label)
            LINT("%s non-summary metrics should not have \"quantile\" label", n);
    }
    /* Tokens split on '_'. */
    bool abbr = false, unit_done = false;
    int ti = 0;
    for (size_t s = 0; s <= len; ti++) {
        size_t e = s;
        while (e < len && n[e] != '_') e++;
        const char *tok = n + s;
        size_t tl = e - s;
        for (size_t u = 0; u < IM_ARRAY_LEN(units); u++) {
            size_t ul = strlen(units[u]);
            if (tl <= ul || memcmp(tok + tl - ul, units[u], ul) != 0) continue;
            for (size_t p = 0; p < IM_ARRAY_LEN(prefixes); p++)
                if (!unit_done && tok_eq(tok, tl - ul, prefixes[p])) {
                    /* promtool reports the first prefixed unit only. */
                    LINT("%s use base unit \"%s\" instead of \"%.*s\"", n, units[u], (int)tl, tok);
                    unit_done = true;
                }
        }
        if (ti > 0) {
            for (size_t a = 0; a < IM_ARRAY_LEN(abbrev); a++)
                if (tok_eq_ci(tok, tl, abbrev[a])) abbr = true;
            for (size_t k = 0; k < IM_ARRAY_LEN(tnames); k++)
                if (tok_eq_ci(tok, tl, tnames[k]))
                    LINT("%s metric name should not include type '%s'", n, tnames[k]);
        }
        s = e + 1;
    }
    if (abbr) LINT("%s metric names should not contain abbreviated units", n);
    if (memchr(n, ':', len)) LINT("%s metric names should not contain ':'", n);
    if (camel(n, len)) LINT("%s metric names should be written in 'snake_case' not 'camelCase'", n);
#undef LINT
}

static int cmp_problem(const void *a, const void *b)
{
    const problem_t *x = a, *y = b;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

im_rc expo_check(const char *buf, size_t len, expo_format_t f, const expo_check_opts_t *opts,
                 void (*report)(void *user, const expo_problem_t *pr), void *user,
                 expo_check_stats_t *stats)
{
    chk_t c;
    memset(&c, 0, sizeof c);
    c.fmt = f;
    c.opts = opts;
    im_arena_init(&c.arena, 1 << 16, 0);
    im_buf_init(&c.key, 0);
    expo_parser_t *p = expo_parser_new(opts ? &opts->limits : NULL);
    im_err_t err;
    im_err_clear(&err);
    bool syntax_ok = expo_parser_reset(p, buf, len, f, &err) == IM_OK;
    if (syntax_ok) {
        expo_entry_t e;
        for (;;) {
            int r = expo_parser_next(p, &e, &err);
            if (r == 0) break;
            if (r < 0) {
                syntax_ok = false;
                break;
            }
            if (e.kind == EXPO_ENTRY_SAMPLE) {
                check_sample(&c, &e);
                if (opts && opts->on_sample) opts->on_sample(opts->on_sample_user, &e);
            } else {
                check_meta(&c, &e);
            }
        }
    }
    if (!syntax_ok) {
        problem(&c, err.line, err.col, EXPO_SEV_ERROR, "%s", err.msg);
    } else {
        check_groups(&c);
        const expo_parse_notes_t *nt = expo__parser_notes(p);
        if (nt->crlf_line)
            problem(&c, nt->crlf_line, 1, EXPO_SEV_ERROR,
                    "line ends with \\r\\n: Prometheus reads the \\r as part of the value and "
                    "rejects the scrape (use \\n line ends)");
        if (nt->missing_comma_line)
            problem(&c, nt->missing_comma_line, 1, EXPO_SEV_WARNING,
                    "labels not separated by ',' (Prometheus accepts it, promtool and other "
                    "parsers do not)");
        if (nt->bad_escape_line)
            problem(&c, nt->bad_escape_line, nt->bad_escape_col, EXPO_SEV_WARNING,
                    "invalid escape sequence in label value: only \\\\, \\\" and \\n are defined "
                    "(Prometheus keeps the backslash, promtool rejects it)");
        if (nt->no_final_newline)
            problem(&c, p->line, (int)(p->i - p->line_start) + 1, EXPO_SEV_WARNING,
                    "no newline at the end of the input (Prometheus accepts it, promtool does "
                    "not)");
        if (!opts || opts->lint)
            for (size_t i = 0; i < c.nfam; i++) lint_family(&c, c.famv[i]);
    }
    c.st.families = c.nfam;
    if (c.np) qsort(c.pv, c.np, sizeof *c.pv, cmp_problem);
    for (size_t i = 0; i < c.np && report; i++) {
        expo_problem_t pr = {c.pv[i].line, c.pv[i].col, c.pv[i].sev, c.pv[i].msg};
        report(user, &pr);
    }
    if (stats) *stats = c.st;
    im_rc rc = c.st.errors ? IM_EPARSE : IM_OK;
    expo_parser_free(p);
    for (size_t i = 0; i < c.ngrp; i++)
        im_free_tag(IM_MEM_EXPO, c.grpv[i]->b, c.grpv[i]->cap * sizeof(bucket_t));
    im_free_tag(IM_MEM_EXPO, c.grpv, c.grpcap * sizeof *c.grpv);
    im_free_tag(IM_MEM_EXPO, c.famv, c.famcap * sizeof *c.famv);
    im_free_tag(IM_MEM_EXPO, c.pv, c.pcap * sizeof *c.pv);
    im_free_tag(IM_MEM_EXPO, c.idx, c.idxcap * sizeof *c.idx);
    map_free(&c.series);
    map_free(&c.fams);
    map_free(&c.groups);
    im_buf_free(&c.key);
    im_arena_free(&c.arena);
    return rc;
}
