/* slo.c — resolving SLOs into engine-aware, bucket-checked PromQL templates,
 * and measuring them (see slo.h). */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "labels/labels.h"
#include "llm/catalog.h"
#include "llm/serving.h"
#include "llm/slo.h"
#include "util/mem.h"
#include "util/timeutil.h"

#define MAX_CAND   8
#define MAX_BOUNDS 128

/* ---- le spellings ---- */

static void shortest(double v, char *b, size_t cap)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(b, cap, "%.*g", prec, v);
        if (strtod(b, NULL) == v) return;
    }
}

static void add_alt(char alts[][48], int *n, const char *s)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(alts[i], s) == 0) return;
    if (*n < 6) snprintf(alts[(*n)++], 48, "%s", s);
}

static void le_regex_ex(double v, const char *extra, char *buf, size_t cap)
{
    char alts[6][48];
    int n = 0;
    char b[48];
    /* Go's strconv 'g' with the shortest digits (Prometheus 3's spelling):
     * an exponent below -4 or from 6 on, else plain decimals */
    int exp10 = v != 0 ? (int)floor(log10(fabs(v))) : 0;
    if (v != 0 && (exp10 < -4 || exp10 >= 6)) {
        for (int prec = 0; prec <= 17; prec++) {
            snprintf(b, sizeof b, "%.*e", prec, v);
            if (strtod(b, NULL) == v) break;
        }
        add_alt(alts, &n, b);
    }
    for (int prec = 0; prec <= 20; prec++) { /* fixed notation: 0.00001 */
        snprintf(b, sizeof b, "%.*f", prec, v);
        if (strtod(b, NULL) == v) break;
    }
    add_alt(alts, &n, b);
    if (v == floor(v) && fabs(v) < 1e15) { /* Python's 2.0 */
        snprintf(b, sizeof b, "%.1f", v);
        add_alt(alts, &n, b);
    }
    if (extra && *extra && strlen(extra) < 40) add_alt(alts, &n, extra);
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i && o + 1 < cap) buf[o++] = '|';
        for (const char *p = alts[i]; *p && o + 3 < cap; p++) {
            if (*p == '.' || *p == '+') {
                buf[o++] = '\\';
                buf[o++] = '\\';
            }
            buf[o++] = *p;
        }
        buf[o] = '\0';
    }
}

void llm_slo_le_regex(double v, char *buf, size_t cap)
{
    le_regex_ex(v, NULL, buf, cap);
}

char *llm_slo_expand(const char *t, const char *w)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    static const char key[] = "{{.window}}";
    for (const char *p = t; *p;) {
        const char *q = strstr(p, key);
        if (!q) {
            (void)im_buf_puts(&b, p);
            break;
        }
        (void)im_buf_append(&b, p, (size_t)(q - p));
        (void)im_buf_puts(&b, w);
        p = q + sizeof key - 1;
    }
    if (!b.data) (void)im_buf_puts(&b, "");
    return im_buf_steal(&b, NULL);
}

void llm_slo_plans_free(llm_slo_plans_t *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->n; i++) {
        im_free(p->v[i].error_t);
        im_free(p->v[i].total_t);
        im_free(p->v[i].good_t);
        im_free(p->v[i].metric);
        im_free(p->v[i].error);
    }
    im_free(p->v);
    cfg_strv_free(p->notes, p->nnotes);
    memset(p, 0, sizeof *p);
}

static void note(llm_slo_plans_t *p, const char *s)
{
    p->notes = im_realloc(p->notes, (p->nnotes + 1) * sizeof *p->notes);
    p->notes[p->nnotes++] = im_strdup(s);
}

/* ---- The live names ---- */

typedef struct ctx {
    query_backend_t *b;
    char **names; /* sorted __name__ values (live) */
    size_t nnames;
} ctx_t;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_name(const ctx_t *c, const char *n)
{
    if (!c->b) return true;
    if (!c->nnames) return false;
    return bsearch(&n, c->names, c->nnames, sizeof *c->names, cmp_str) != NULL;
}

static void put_quoted(im_buf_t *o, const char *s)
{
    (void)im_buf_putc(o, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') (void)im_buf_putc(o, '\\');
        if (*s == '\n')
            (void)im_buf_puts(o, "\\n");
        else
            (void)im_buf_putc(o, *s);
    }
    (void)im_buf_putc(o, '"');
}

/* The matchers of slo o on an engine whose model label is ml, plus extra. */
static void matchers(im_buf_t *o, const cfg_slo_t *s, const char *ml, const char *extra)
{
    int n = 0;
    if (s->model && *s->model) {
        (void)im_buf_printf(o, "%s=", ml);
        put_quoted(o, s->model);
        n++;
    }
    for (size_t i = 0; i < s->nlabels; i++) {
        (void)im_buf_printf(o, "%s%s=", n++ ? "," : "", s->label_names[i]);
        put_quoted(o, s->label_vals[i]);
    }
    if (extra && *extra) (void)im_buf_printf(o, "%s%s", n++ ? "," : "", extra);
}

static void fmt_num(double v, char *b, size_t cap)
{
    if (fabs(v) >= 1e-4 && fabs(v) < 1e15) { /* plain decimals: 2400, 0.025 */
        for (int d = 0; d <= 17; d++) {
            snprintf(b, cap, "%.*f", d, v);
            if (strtod(b, NULL) == v) return;
        }
    }
    shortest(v, b, cap);
}

/* ---- Bounds ---- */

typedef struct bounds {
    double v[MAX_BOUNDS];
    char spell[MAX_BOUNDS][24];
    int n;
    bool known;
} bounds_t;

static void bounds_from_text(bounds_t *bd, const char *t)
{
    while (t && *t && bd->n < MAX_BOUNDS) {
        char *end = NULL;
        double v = strtod(t, &end);
        if (end == t) break;
        if (isfinite(v)) {
            bd->v[bd->n] = v;
            bd->spell[bd->n][0] = '\0';
            bd->n++;
        }
        t = end;
        while (*t == ',' || *t == ' ') t++;
    }
    bd->known = bd->n > 0;
}

static void bound_add(bounds_t *bd, const char *le)
{
    char *end = NULL;
    double v = strtod(le, &end);
    if (end == le || !isfinite(v) || bd->n >= MAX_BOUNDS) return;
    for (int i = 0; i < bd->n; i++)
        if (strcmp(bd->spell[i], le) == 0) return;
    bd->v[bd->n] = v;
    snprintf(bd->spell[bd->n], sizeof bd->spell[0], "%s", le);
    bd->n++;
}

/* The `le` bounds of name_bucket{sel}: those of the series the store has now
 * (an instant query: a histogram re-bucketed by a restarted target drops its
 * old bounds as soon as they go stale), or, when none has a sample now (a
 * target down, a stopped daemon's data), those of any series it kept. */
static im_rc live_bounds(ctx_t *c, const char *name, const char *sel, bounds_t *bd, im_err_t *err)
{
    char m[2048];
    snprintf(m, sizeof m, "%s_bucket{%s}", name, sel);
    char q[2100];
    snprintf(q, sizeof q, "count by (le) (%s)", m);
    promql_result_t r;
    memset(&r, 0, sizeof r);
    im_rc rc = query_instant(c->b, q, im_now_ms(), &r, err);
    if (rc == IM_OK && r.type == PROMQL_RESULT_VECTOR)
        for (size_t i = 0; i < r.nseries; i++) {
            const im_istr_t *le = im_labels_get(r.series[i].labels, "le");
            if (le) bound_add(bd, le->s);
        }
    promql_result_free(&r);
    if (rc) return rc;
    if (bd->n) {
        bd->known = true;
        return IM_OK;
    }
    const char *match[1] = {m};
    char **vals = NULL;
    size_t n = 0;
    rc = query_label_values(c->b, "le", match, 1, 0, 0, &vals, &n, err);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++) bound_add(bd, vals[i]);
    bd->known = bd->n > 0;
    query_strs_free(vals, n);
    return IM_OK;
}

/* The index of v in bd, or -1 with *lo and *hi the neighbours (NaN when none). */
static int bound_find(const bounds_t *bd, double v, double *lo, double *hi)
{
    *lo = NAN;
    *hi = NAN;
    for (int i = 0; i < bd->n; i++) {
        if (fabs(bd->v[i] - v) <= 1e-9 * fmax(1, fabs(v))) return i;
        if (bd->v[i] < v && (isnan(*lo) || bd->v[i] > *lo)) *lo = bd->v[i];
        if (bd->v[i] > v && (isnan(*hi) || bd->v[i] < *hi)) *hi = bd->v[i];
    }
    return -1;
}

/* ---- Resolution ---- */

typedef struct cand {
    char err[1024], total[1024], good[1024];
    char name[200];
} cand_t;

static void join(im_buf_t *o, const cand_t *c, int n, int which, bool zero)
{
    if (n > 1 || zero) (void)im_buf_putc(o, '(');
    for (int i = 0; i < n; i++) {
        if (i) (void)im_buf_puts(o, " or ");
        (void)im_buf_puts(o, which == 0 ? c[i].err : which == 1 ? c[i].total : c[i].good);
    }
    if (zero) (void)im_buf_puts(o, " or on () vector(0)");
    if (n > 1 || zero) (void)im_buf_putc(o, ')');
}

static im_rc resolve_one(ctx_t *c, const cfg_slo_t *s, llm_slo_plan_t *pl, llm_slo_plans_t *ps,
                         im_err_t *err)
{
    const llm_serving_t *sv = llm_serving_get();
    cand_t cand[MAX_CAND];
    int nc = 0;
    char nb[1400];
    pl->slo = s;
    if (s->sli == CFG_SLO_EVENTS) {
        pl->error_t = im_strdup(s->error_query);
        pl->total_t = im_strdup(s->total_query);
        return IM_OK;
    }
    if (s->engine && llm_serving_engine_find(sv, s->engine) < 0)
        return im_err_set(err, IM_EINVAL,
                          "%s.engine (%s): \"%s\" is not an engine of the serving model (vllm, "
                          "sglang, dynamo, llm-d-epp, triton-trtllm, ...)",
                          s->origin, s->name, s->engine);
    im_buf_t sel;
    im_buf_init(&sel, 0);
    if (s->sli == CFG_SLO_AVAILABILITY) {
        for (int e = 0; e < llm_serving_engine_count(sv) && nc < MAX_CAND; e++) {
            const llm_engine_info_t *info = llm_serving_engine(sv, e);
            if (s->engine && strcmp(s->engine, info->id) != 0) continue;
            const llm_signal_map_t *fm[4], *tm[4];
            size_t nf = llm_serving_maps_for(sv, e, LLM_SIG_REQUESTS_FAILED, fm, 4);
            size_t nt = llm_serving_maps_for(sv, e, LLM_SIG_REQUESTS_FINISHED, tm, 4);
            const llm_signal_map_t *f = NULL, *t = NULL;
            for (size_t i = 0; i < nf && !f; i++)
                if (fm[i]->type == LLM_MTYPE_COUNTER && has_name(c, fm[i]->name)) f = fm[i];
            for (size_t i = 0; i < nt && !t; i++)
                if (tm[i]->type == LLM_MTYPE_COUNTER && has_name(c, tm[i]->name)) t = tm[i];
            if (!f || !t) continue;
            cand_t *k = &cand[nc++];
            im_buf_reset(&sel);
            matchers(&sel, s, info->model_label, f->selector);
            snprintf(k->err, sizeof k->err, "sum(rate(%s{%s}[{{.window}}]))", f->name,
                     sel.data ? sel.data : "");
            im_buf_reset(&sel);
            matchers(&sel, s, info->model_label, t->selector);
            snprintf(k->total, sizeof k->total, "sum(rate(%s{%s}[{{.window}}]))", t->name,
                     sel.data ? sel.data : "");
            snprintf(k->name, sizeof k->name, "%s", t->name);
        }
        im_buf_free(&sel);
        if (!nc)
            return im_err_set(err, IM_ENOTFOUND,
                              "%s.sli (%s): no target exposes the request-outcome counters of "
                              "%s (requests_finished and requests_failed of the serving model)",
                              s->origin, s->name, s->engine ? s->engine : "any engine");
        im_buf_t b;
        im_buf_init(&b, 0);
        join(&b, cand, nc, 0, true);
        pl->error_t = im_buf_steal(&b, NULL);
        im_buf_init(&b, 0);
        join(&b, cand, nc, 1, false);
        pl->total_t = im_buf_steal(&b, NULL);
        pl->metric = im_strdup(cand[0].name);
        return IM_OK;
    }
    /* latency */
    struct {
        const char *name;
        const char *ml;
        const llm_signal_map_t *m;
    } hs[MAX_CAND];
    int nh = 0;
    if (s->metric) {
        const llm_family_t *fam =
            llm_catalog_lookup(llm_catalog_get(), s->metric, strlen(s->metric), NULL, NULL);
        if (fam && fam->type != LLM_MTYPE_HISTOGRAM) {
            im_buf_free(&sel);
            return im_err_set(err, IM_EINVAL,
                              "%s.metric (%s): %s is a %s, not a histogram: a latency SLO needs "
                              "the le buckets of a histogram (the catalog knows its type)",
                              s->origin, s->name, s->metric,
                              fam->type == LLM_MTYPE_GAUGE     ? "gauge"
                              : fam->type == LLM_MTYPE_COUNTER ? "counter"
                                                               : "summary");
        }
        int e = s->engine ? llm_serving_engine_find(sv, s->engine)
                          : llm_serving_engine_of(sv, s->metric, strlen(s->metric));
        hs[nh].name = s->metric;
        hs[nh].ml = e >= 0 ? llm_serving_engine(sv, e)->model_label : "model_name";
        hs[nh].m = NULL;
        nh++;
    } else {
        llm_signal_t sig = s->signal == CFG_SLO_SIG_TTFT  ? LLM_SIG_TTFT
                           : s->signal == CFG_SLO_SIG_ITL ? LLM_SIG_ITL
                                                          : LLM_SIG_E2E;
        for (int e = 0; e < llm_serving_engine_count(sv) && nh < MAX_CAND; e++) {
            const llm_engine_info_t *info = llm_serving_engine(sv, e);
            if (s->engine && strcmp(s->engine, info->id) != 0) continue;
            const llm_signal_map_t *m[4];
            size_t nm = llm_serving_maps_for(sv, e, sig, m, 4);
            for (size_t i = 0; i < nm && nh < MAX_CAND; i++) {
                if (m[i]->type != LLM_MTYPE_HISTOGRAM) continue;
                char bn[300];
                snprintf(bn, sizeof bn, "%s_bucket", m[i]->name);
                if (!has_name(c, bn)) continue;
                hs[nh].name = m[i]->name;
                hs[nh].ml = info->model_label;
                hs[nh].m = m[i];
                nh++;
            }
        }
    }
    char thr[32];
    fmt_num(s->threshold_s, thr, sizeof thr);
    char first_refusal[1400] = "";
    char refused[MAX_CAND][1400];
    int nrefused = 0;
    for (int h = 0; h < nh && nc < MAX_CAND; h++) {
        im_buf_reset(&sel);
        matchers(&sel, s, hs[h].ml, hs[h].m ? hs[h].m->selector : "");
        const char *sl = sel.data ? sel.data : "";
        bounds_t bd;
        memset(&bd, 0, sizeof bd);
        if (c->b) {
            im_rc rc = live_bounds(c, hs[h].name, sl, &bd, err);
            if (rc) {
                im_buf_free(&sel);
                return rc;
            }
            if (!bd.known) {
                snprintf(nb, sizeof nb, "%s: no series of %s_bucket{%s} in the store", s->name,
                         hs[h].name, sl);
                note(ps, nb);
                continue;
            }
        } else {
            const llm_family_t *f = hs[h].m ? hs[h].m->family : NULL;
            if (!f)
                f = llm_catalog_lookup(llm_catalog_get(), hs[h].name, strlen(hs[h].name), NULL,
                                       NULL);
            if (f && f->nbuckets && !f->buckets_vary) {
                for (int i = 0; i < f->nbuckets && i < MAX_BOUNDS; i++) {
                    bd.v[bd.n] = f->buckets[i];
                    bd.spell[bd.n][0] = '\0';
                    bd.n++;
                }
                bd.known = true;
            } else if (hs[h].m && *hs[h].m->buckets) {
                bounds_from_text(&bd, hs[h].m->buckets);
            }
            if (!bd.known) {
                snprintf(nb, sizeof nb,
                         "%s: the bucket layout of %s is not in the catalog: check it against "
                         "a live store (--prometheus, --url or --storage.tsdb.path)",
                         s->name, hs[h].name);
                note(ps, nb);
                continue;
            }
        }
        double lo, hi;
        int at = bound_find(&bd, s->threshold_s, &lo, &hi);
        if (at < 0) {
            char a[32] = "none", b[32] = "none";
            if (!isnan(lo)) fmt_num(lo, a, sizeof a);
            if (!isnan(hi)) fmt_num(hi, b, sizeof b);
            snprintf(nb, sizeof nb,
                     "%s.threshold (%s): %ss is not a bucket bound of %s (%s; neighbours %s%s "
                     "and %s%s): a threshold between buckets measures nothing; use "
                     "threshold: %s%s%s%s%s",
                     s->origin, s->name, thr, hs[h].name, c->b ? "as scraped" : "catalog layout", a,
                     isnan(lo) ? "" : "s", b, isnan(hi) ? "" : "s", isnan(hi) ? a : b, "s",
                     isnan(hi) || isnan(lo) ? "" : " (or ", isnan(hi) || isnan(lo) ? "" : a,
                     isnan(hi) || isnan(lo) ? "" : "s)");
            if (!*first_refusal) snprintf(first_refusal, sizeof first_refusal, "%s", nb);
            if (nrefused < MAX_CAND) snprintf(refused[nrefused++], sizeof refused[0], "%s", nb);
            continue;
        }
        char re[200];
        le_regex_ex(s->threshold_s, bd.spell[at], re, sizeof re);
        cand_t *k = &cand[nc++];
        snprintf(k->total, sizeof k->total, "sum(rate(%s_count{%s}[{{.window}}]))", hs[h].name, sl);
        snprintf(k->good, sizeof k->good, "sum(rate(%s_bucket{%s%sle=~\"%s\"}[{{.window}}]))",
                 hs[h].name, sl, *sl ? "," : "", re);
        snprintf(k->name, sizeof k->name, "%s", hs[h].name);
    }
    im_buf_free(&sel);
    for (int i = 0; nc && i < nrefused; i++) note(ps, refused[i]); /* dropped, others kept */
    if (!nc) {
        if (*first_refusal) {
            pl->bound_refused = true;
            return im_err_set(err, IM_EINVAL, "%s", first_refusal);
        }
        return im_err_set(err, IM_ENOTFOUND,
                          "%s.%s (%s): no target exposes a latency histogram for it (%s%s%s)",
                          s->origin, s->metric ? "metric" : "signal", s->name,
                          s->metric ? s->metric : cfg_slo_signal_name(s->signal),
                          s->engine ? " of " : "", s->engine ? s->engine : "");
    }
    im_buf_t b, m;
    im_buf_init(&b, 0);
    im_buf_init(&m, 0);
    join(&b, cand, nc, 2, false);
    pl->good_t = im_buf_steal(&b, NULL);
    im_buf_init(&b, 0);
    join(&b, cand, nc, 1, false);
    pl->total_t = im_buf_steal(&b, NULL);
    im_buf_init(&b, 0);
    (void)im_buf_printf(&b, "(%s - %s)", pl->total_t, pl->good_t);
    pl->error_t = im_buf_steal(&b, NULL);
    for (int i = 0; i < nc; i++) (void)im_buf_printf(&m, "%s%s", i ? ", " : "", cand[i].name);
    pl->metric = im_buf_steal(&m, NULL);
    return IM_OK;
}

im_rc llm_slo_resolve(const cfg_llm_slo_t *set, query_backend_t *backend, llm_slo_plans_t *out,
                      im_err_t *err)
{
    memset(out, 0, sizeof *out);
    ctx_t c = {.b = backend};
    im_rc rc = IM_OK;
    if (backend) {
        rc = query_label_values(backend, "__name__", NULL, 0, 0, 0, &c.names, &c.nnames, err);
        if (rc) return rc;
        if (c.nnames > 1) qsort(c.names, c.nnames, sizeof *c.names, cmp_str);
    }
    out->v = im_calloc(set->n ? set->n : 1, sizeof *out->v);
    for (size_t i = 0; i < set->n && !rc; i++) {
        rc = resolve_one(&c, &set->v[i], &out->v[out->n], out, err);
        out->n++;
    }
    query_strs_free(c.names, c.nnames);
    return rc;
}

static void plan_clear(llm_slo_plan_t *pl)
{
    im_free(pl->error_t);
    im_free(pl->total_t);
    im_free(pl->good_t);
    im_free(pl->metric);
    im_free(pl->error);
    memset(pl, 0, sizeof *pl);
}

const char *llm_slo_bounds_name(llm_slo_bounds_t b)
{
    return b == LLM_SLO_BOUNDS_LIVE ? "live" : b == LLM_SLO_BOUNDS_CATALOG ? "catalog" : NULL;
}

void llm_slo_resolve_each(const cfg_llm_slo_t *set, query_backend_t *live, llm_slo_plans_t *out)
{
    memset(out, 0, sizeof *out);
    ctx_t lc = {.b = live}, cat = {.b = NULL};
    im_err_t err;
    im_err_clear(&err);
    if (live &&
        query_label_values(live, "__name__", NULL, 0, 0, 0, &lc.names, &lc.nnames, &err) != IM_OK) {
        char nb[1200];
        snprintf(nb, sizeof nb, "the store did not answer (%s): the catalog's names and bounds",
                 err.msg);
        note(out, nb);
        lc.b = NULL;
    }
    if (lc.nnames > 1) qsort(lc.names, lc.nnames, sizeof *lc.names, cmp_str);
    out->v = im_calloc(set->n ? set->n : 1, sizeof *out->v);
    for (size_t i = 0; i < set->n; i++) {
        const cfg_slo_t *s = &set->v[i];
        llm_slo_plan_t *pl = &out->v[out->n++];
        im_err_clear(&err);
        im_rc rc = IM_ENOTFOUND;
        if (lc.b) {
            rc = resolve_one(&lc, s, pl, out, &err);
            pl->bounds = LLM_SLO_BOUNDS_LIVE;
        }
        if (rc == IM_ENOTFOUND) { /* nothing scraped yet (or no store): the catalog */
            plan_clear(pl);
            im_err_clear(&err);
            rc = resolve_one(&cat, s, pl, out, &err);
            pl->bounds = LLM_SLO_BOUNDS_CATALOG;
        }
        if (s->sli == CFG_SLO_EVENTS) pl->bounds = LLM_SLO_BOUNDS_NONE;
        pl->slo = s;
        if (rc != IM_OK) {
            llm_slo_bounds_t b = pl->bounds;
            bool refused = pl->bound_refused;
            plan_clear(pl);
            pl->slo = s;
            pl->bounds = b;
            pl->bound_refused = refused;
            pl->error = im_strdup(err.msg[0] ? err.msg : "cannot be resolved");
        }
    }
    query_strs_free(lc.names, lc.nnames);
}

/* ---- Status ---- */

static double query_value(query_backend_t *b, const char *expr, int64_t at_ms, im_err_t *err,
                          im_rc *rc)
{
    promql_result_t r;
    memset(&r, 0, sizeof r);
    *rc = query_instant(b, expr, at_ms, &r, err);
    double v = NAN;
    if (*rc == IM_OK) {
        if (r.type == PROMQL_RESULT_SCALAR)
            v = r.scalar.v;
        else if (r.type == PROMQL_RESULT_VECTOR && r.nseries && r.series[0].npoints)
            v = r.series[0].points[0].v;
    }
    promql_result_free(&r);
    return v;
}

static int64_t month_start_ms(int64_t at_ms)
{
    time_t t = (time_t)(at_ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    tm.tm_mday = 1;
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    return (int64_t)timegm(&tm) * 1000;
}

typedef struct slo_state {
    double ratio[CFG_SLO_NWINDOWS];
    double window_ratio, attainment, budget, good5m;
    bool page, ticket;
} slo_state_t;

static double ratio_at(const llm_slo_plan_t *p, query_backend_t *b, const char *w, int64_t at_ms,
                       im_err_t *err, im_rc *rc)
{
    char *e = llm_slo_expand(p->error_t, w), *t = llm_slo_expand(p->total_t, w);
    im_buf_t q;
    im_buf_init(&q, 0);
    (void)im_buf_printf(&q, "(%s) / (%s)", e, t);
    double v = query_value(b, q.data, at_ms, err, rc);
    im_buf_free(&q);
    im_free(e);
    im_free(t);
    return v;
}

static bool burns_fire(const cfg_slo_burn_t *bs, int n, const slo_state_t *st, double budget)
{
    for (int i = 0; i < n; i++) {
        double thr = bs[i].factor * budget;
        if (st->ratio[bs[i].long_w] > thr && st->ratio[bs[i].short_w] > thr) return true;
    }
    return false;
}

static im_rc measure(const llm_slo_plan_t *p, query_backend_t *b, int64_t at_ms, slo_state_t *st,
                     im_err_t *err)
{
    im_rc rc = IM_OK;
    const cfg_slo_t *s = p->slo;
    for (int i = 0; i < CFG_SLO_NWINDOWS; i++) {
        st->ratio[i] = ratio_at(p, b, cfg_slo_window_name(i), at_ms, err, &rc);
        if (rc) return rc;
    }
    char w[40];
    if (s->calendar_month) {
        int64_t secs = (at_ms - month_start_ms(at_ms)) / 1000;
        snprintf(w, sizeof w, "%llds", (long long)(secs < 60 ? 60 : secs));
    } else {
        snprintf(w, sizeof w, "%llds", (long long)(s->window_ms / 1000));
    }
    st->window_ratio = ratio_at(p, b, w, at_ms, err, &rc);
    if (rc) return rc;
    double budget = 1 - s->objective;
    st->attainment = isnan(st->window_ratio) ? NAN : 1 - st->window_ratio;
    st->budget = isnan(st->window_ratio) ? NAN : 1 - st->window_ratio / budget;
    st->page = burns_fire(s->page, s->npage, st, budget);
    st->ticket = burns_fire(s->ticket, s->nticket, st, budget);
    st->good5m = NAN;
    if (p->good_t) {
        char *g = llm_slo_expand(p->good_t, "5m");
        st->good5m = query_value(b, g, at_ms, err, &rc);
        im_free(g);
    }
    return rc;
}

static void json_num(im_buf_t *o, double v)
{
    if (!isfinite(v)) {
        (void)im_buf_puts(o, "null");
        return;
    }
    char b[32];
    fmt_num(v, b, sizeof b);
    (void)im_buf_puts(o, b);
}

static void json_str(im_buf_t *o, const char *s)
{
    if (!s) {
        (void)im_buf_puts(o, "null");
        return;
    }
    (void)im_buf_putc(o, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            (void)im_buf_printf(o, "\\%c", *p);
        else if (*p < 0x20)
            (void)im_buf_printf(o, "\\u%04x", *p);
        else
            (void)im_buf_putc(o, (char)*p);
    }
    (void)im_buf_putc(o, '"');
}

static void window_text(const cfg_slo_t *s, char *b, size_t cap)
{
    if (s->calendar_month)
        snprintf(b, cap, "calendar month");
    else
        im_duration_format(s->window_ms, b, cap);
}

const char *llm_slo_alert_name(const cfg_slo_t *s)
{
    return s->alert_name ? s->alert_name : "SLOErrorBudgetBurn";
}

im_rc llm_slo_status_json(const llm_slo_plans_t *p, query_backend_t *b, int64_t at_ms, im_buf_t *o,
                          im_err_t *err)
{
    slo_state_t *st = im_calloc(p->n ? p->n : 1, sizeof *st);
    im_rc rc = IM_OK;
    for (size_t i = 0; i < p->n && !rc; i++) {
        if (p->v[i].error) { /* refused: nothing to measure */
            st[i] =
                (slo_state_t){.window_ratio = NAN, .attainment = NAN, .budget = NAN, .good5m = NAN};
            for (int k = 0; k < CFG_SLO_NWINDOWS; k++) st[i].ratio[k] = NAN;
            continue;
        }
        rc = measure(&p->v[i], b, at_ms, &st[i], err);
    }
    if (rc) {
        im_free(st);
        return rc;
    }
    (void)im_buf_puts(o, "{\"slos\":[");
    for (size_t i = 0; i < p->n; i++) {
        const cfg_slo_t *s = p->v[i].slo;
        char w[40];
        window_text(s, w, sizeof w);
        (void)im_buf_puts(o, i ? ",{\"name\":" : "{\"name\":");
        json_str(o, s->name);
        (void)im_buf_puts(o, ",\"model\":");
        json_str(o, s->model);
        (void)im_buf_puts(o, ",\"sli\":");
        json_str(o, cfg_slo_sli_name(s->sli));
        (void)im_buf_puts(o, ",\"signal\":");
        json_str(o, cfg_slo_signal_name(s->signal));
        (void)im_buf_puts(o, ",\"metric\":");
        json_str(o, p->v[i].metric);
        (void)im_buf_puts(o, ",\"threshold_seconds\":");
        json_num(o, s->sli == CFG_SLO_LATENCY ? s->threshold_s : NAN);
        (void)im_buf_puts(o, ",\"objective\":");
        json_num(o, s->objective);
        (void)im_buf_puts(o, ",\"window\":");
        json_str(o, w);
        if (p->v[i].bounds) {
            (void)im_buf_puts(o, ",\"bounds\":");
            json_str(o, llm_slo_bounds_name(p->v[i].bounds));
        }
        if (p->v[i].error) {
            (void)im_buf_puts(o, ",\"error\":");
            json_str(o, p->v[i].error);
        }
        (void)im_buf_puts(o, ",\"attainment\":");
        json_num(o, st[i].attainment);
        (void)im_buf_puts(o, ",\"error_budget_remaining\":");
        json_num(o, st[i].budget);
        (void)im_buf_puts(o, ",\"burn_rates\":{");
        for (int k = 0; k < CFG_SLO_NWINDOWS; k++) {
            (void)im_buf_printf(o, "%s\"%s\":", k ? "," : "", cfg_slo_window_name(k));
            json_num(o, st[i].ratio[k] / (1 - s->objective));
        }
        (void)im_buf_puts(o, "},\"alerts\":[");
        int na = 0;
        if (s->npage) {
            (void)im_buf_puts(o, "{\"name\":");
            json_str(o, llm_slo_alert_name(s));
            (void)im_buf_printf(o, ",\"severity\":\"page\",\"firing\":%s}",
                                st[i].page ? "true" : "false");
            na++;
        }
        if (s->nticket) {
            (void)im_buf_puts(o, na ? ",{\"name\":" : "{\"name\":");
            json_str(o, llm_slo_alert_name(s));
            (void)im_buf_printf(o, ",\"severity\":\"ticket\",\"firing\":%s}",
                                st[i].ticket ? "true" : "false");
        }
        (void)im_buf_puts(o, "]}");
    }
    (void)im_buf_puts(o, "],\"goodput\":[");
    /* per model: the minimum over its latency SLOs of good requests per second */
    int ng = 0;
    for (size_t i = 0; i < p->n; i++) {
        const cfg_slo_t *s = p->v[i].slo;
        if (!p->v[i].good_t) continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = p->v[j].good_t &&
                   ((!s->model && !p->v[j].slo->model) ||
                    (s->model && p->v[j].slo->model && strcmp(s->model, p->v[j].slo->model) == 0));
        if (seen) continue;
        double g = NAN;
        for (size_t j = i; j < p->n; j++) {
            const cfg_slo_t *t = p->v[j].slo;
            if (!p->v[j].good_t) continue;
            if (!((!s->model && !t->model) ||
                  (s->model && t->model && strcmp(s->model, t->model) == 0)))
                continue;
            if (isnan(st[j].good5m)) continue;
            if (isnan(g) || st[j].good5m < g) g = st[j].good5m;
        }
        (void)im_buf_puts(o, ng++ ? ",{\"model\":" : "{\"model\":");
        json_str(o, s->model);
        (void)im_buf_puts(o, ",\"requests_per_second\":");
        json_num(o, g);
        (void)im_buf_putc(o, '}');
    }
    (void)im_buf_puts(o, "]}");
    im_free(st);
    return IM_OK;
}

static void text_pct(im_buf_t *o, double v)
{
    if (isnan(v))
        (void)im_buf_printf(o, " %9s", "-");
    else
        (void)im_buf_printf(o, " %8.3f%%", v * 100);
}

im_rc llm_slo_status_text(const llm_slo_plans_t *p, query_backend_t *b, int64_t at_ms, im_buf_t *o,
                          im_err_t *err)
{
    (void)im_buf_printf(o, "%-24s %-14s %9s %9s %9s %7s %7s %7s  %s\n", "SLO", "WINDOW",
                        "OBJECTIVE", "ATTAINED", "BUDGET", "BURN1H", "BURN6H", "BURN3D", "ALERTS");
    for (size_t i = 0; i < p->n; i++) {
        const cfg_slo_t *s = p->v[i].slo;
        if (p->v[i].error) {
            (void)im_buf_printf(o, "%-24s refused: %s\n", s->name, p->v[i].error);
            continue;
        }
        slo_state_t st;
        im_rc rc = measure(&p->v[i], b, at_ms, &st, err);
        if (rc) return rc;
        char w[40];
        window_text(s, w, sizeof w);
        (void)im_buf_printf(o, "%-24s %-14s", s->name, w);
        text_pct(o, s->objective);
        text_pct(o, st.attainment);
        text_pct(o, st.budget);
        const int ws[3] = {2, 4, 6};
        for (int k = 0; k < 3; k++) {
            double br = st.ratio[ws[k]] / (1 - s->objective);
            if (isnan(br))
                (void)im_buf_printf(o, " %7s", "-");
            else
                (void)im_buf_printf(o, " %7.2f", br);
        }
        (void)im_buf_printf(o, "  %s%s%s\n", st.page ? "page " : "", st.ticket ? "ticket" : "",
                            !st.page && !st.ticket ? "none" : "");
    }
    return IM_OK;
}

im_rc llm_slo_check_retention(const cfg_llm_slo_t *set, int64_t retention_ms, const char *flag,
                              im_err_t *err)
{
    for (size_t i = 0; i < set->n && retention_ms > 0; i++) {
        const cfg_slo_t *s = &set->v[i];
        int64_t w = s->calendar_month ? 31 * 86400000LL : s->window_ms;
        if (w > retention_ms) {
            char a[40], b[40];
            window_text(s, a, sizeof a);
            im_duration_format(retention_ms, b, sizeof b);
            return im_err_set(err, IM_EINVAL,
                              "%s.window (%s): %s is longer than the storage retention %s (%s): "
                              "the attainment would be measured over what is kept; raise %s or "
                              "shorten the window",
                              s->origin, s->name, a, b, flag, flag);
        }
    }
    return IM_OK;
}
