/* slo_rules.c — the SLO rules (slo.h, contract 3): SLI error ratios at the
 * recorded windows and over the SLO window, attainment, error budget left,
 * the multiwindow multi-burn-rate alerts and goodput, as a rule file or a
 * PrometheusRule; and the generator that loads them into `infermon run`. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "llm/slo.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/timeutil.h"

#define LLM_SLO_RULES_FILE "<builtin:llm-slo>"

static void q(im_buf_t *o, const char *s)
{
    (void)im_buf_putc(o, '\'');
    for (; *s; s++) {
        if (*s == '\'') (void)im_buf_putc(o, '\'');
        (void)im_buf_putc(o, *s == '\n' ? ' ' : *s);
    }
    (void)im_buf_putc(o, '\'');
}

static void num(double v, char *b, size_t cap)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(b, cap, "%.*g", prec, v);
        if (strtod(b, NULL) == v) break;
    }
}

static const char *kv_find(const cfg_slo_kv_t *kv, const char *k)
{
    for (size_t i = 0; kv && i < kv->n; i++)
        if (strcmp(kv->k[i], k) == 0) return kv->v[i];
    return NULL;
}

/* A labels: or annotations: block: our keys bk/bv (nb; the first nfixed the
 * user's may not change), then the user's (Sloth's labels and annotations),
 * u[0] first: a key in an earlier set wins over a later one and over ours. */
static void kv_block(im_buf_t *o, const char *ind, const char *title, const char *const *bk,
                     const char *const *bv, size_t nb, size_t nfixed, const cfg_slo_kv_t *const *u,
                     int nu)
{
    (void)im_buf_printf(o, "%s  %s:\n", ind, title);
    for (size_t i = 0; i < nb; i++) {
        const char *v = bv[i];
        for (int j = 0; j < nu && i >= nfixed; j++) {
            const char *uv = kv_find(u[j], bk[i]);
            if (uv) {
                v = uv;
                break;
            }
        }
        (void)im_buf_printf(o, "%s    %s: ", ind, bk[i]);
        q(o, v);
        (void)im_buf_putc(o, '\n');
    }
    for (int j = 0; j < nu; j++)
        for (size_t i = 0; i < u[j]->n; i++) {
            const char *k = u[j]->k[i];
            bool seen = false;
            for (size_t b = 0; b < nb && !seen; b++) seen = strcmp(bk[b], k) == 0;
            for (int e = 0; e < j && !seen; e++) seen = kv_find(u[e], k) != NULL;
            if (seen) continue;
            (void)im_buf_printf(o, "%s    %s: ", ind, k);
            q(o, u[j]->v[i]);
            (void)im_buf_putc(o, '\n');
        }
}

/* The label block of an SLO's series (ind: the rule's indentation): slo and sli
 * (they name the series the alerts select: fixed), model, extra_k; then Sloth's
 * labels; an alert's (ticket >= 0) also the alert's and the page/ticket alert's. */
static void labels(im_buf_t *o, const char *ind, const cfg_slo_t *s, const char *extra_k,
                   const char *extra_v, int ticket)
{
    const char *bk[4] = {"slo", "sli"}, *bv[4] = {s->name, cfg_slo_sli_name(s->sli)};
    size_t nb = 2;
    if (s->model) {
        bk[nb] = "model";
        bv[nb++] = s->model;
    }
    if (extra_k) {
        bk[nb] = extra_k;
        bv[nb++] = extra_v;
    }
    const cfg_slo_kv_t *u[3];
    int nu = 0;
    if (ticket >= 0) {
        u[nu++] = ticket ? &s->ticket_labels : &s->page_labels;
        u[nu++] = &s->alert_labels;
    }
    u[nu++] = &s->rule_labels;
    kv_block(o, ind, "labels", bk, bv, nb, 2, u, nu);
}

static void record(im_buf_t *o, const char *ind, const char *name, const char *expr,
                   const cfg_slo_t *s, const char *ek, const char *ev)
{
    (void)im_buf_printf(o, "%s- record: %s\n%s  expr: ", ind, name, ind);
    q(o, expr);
    (void)im_buf_putc(o, '\n');
    if (s) labels(o, ind, s, ek, ev, -1);
}

static void sel(im_buf_t *o, const char *metric, const cfg_slo_t *s)
{
    (void)im_buf_printf(o, "%s{slo=\"", metric);
    for (const char *p = s->name; *p; p++) (void)im_buf_putc(o, *p); /* name_ok: no quotes */
    (void)im_buf_puts(o, "\"}");
}

static void ratio_expr(im_buf_t *e, const llm_slo_plan_t *p, const char *w)
{
    char *er = llm_slo_expand(p->error_t, w), *to = llm_slo_expand(p->total_t, w);
    (void)im_buf_printf(e, "(%s) / (%s)", er, to);
    im_free(er);
    im_free(to);
}

static void alerts(im_buf_t *o, const char *ind, const cfg_slo_t *s, bool ticket)
{
    const cfg_slo_burn_t *bs = ticket ? s->ticket : s->page;
    int n = ticket ? s->nticket : s->npage;
    if (!n) return;
    im_buf_t e;
    im_buf_init(&e, 0);
    double budget = 1 - s->objective;
    for (int i = 0; i < n; i++) {
        char thr[32];
        num(bs[i].factor * budget, thr, sizeof thr);
        char ln[80], sn[80];
        snprintf(ln, sizeof ln, "infermon_slo:sli_error:ratio_rate%s",
                 cfg_slo_window_name(bs[i].long_w));
        snprintf(sn, sizeof sn, "infermon_slo:sli_error:ratio_rate%s",
                 cfg_slo_window_name(bs[i].short_w));
        (void)im_buf_puts(&e, i ? " or (" : "(");
        sel(&e, ln, s);
        (void)im_buf_printf(&e, " > %s and ", thr);
        sel(&e, sn, s);
        (void)im_buf_printf(&e, " > %s)", thr);
    }
    (void)im_buf_printf(o, "%s- alert: %s\n%s  expr: ", ind, llm_slo_alert_name(s), ind);
    q(o, e.data);
    (void)im_buf_putc(o, '\n');
    labels(o, ind, s, "severity", ticket ? "ticket" : "page", ticket);
    im_buf_reset(&e);
    char f[32], obj[32];
    double minf = bs[0].factor;
    for (int i = 1; i < n; i++) minf = fmin(minf, bs[i].factor);
    num(minf, f, sizeof f);
    num(s->objective * 100, obj, sizeof obj);
    (void)im_buf_printf(&e, "SLO %s (%s %s%%): error budget burning at %sx or more (%s)", s->name,
                        cfg_slo_sli_name(s->sli), obj, f, ticket ? "ticket" : "page");
    size_t sumlen = e.len;
    (void)im_buf_putc(&e, 0);
    (void)im_buf_puts(&e,
                      "The error ratio is above the burn-rate factor times the error budget over "
                      "both windows of a pair: ");
    for (int i = 0; i < n; i++) {
        num(bs[i].factor, f, sizeof f);
        (void)im_buf_printf(&e, "%s%sx over %s and %s", i ? ", " : "", f,
                            cfg_slo_window_name(bs[i].long_w), cfg_slo_window_name(bs[i].short_w));
    }
    (void)im_buf_puts(&e, " (docs/slo.md).");
    /* Sloth's annotations: the page/ticket alert's win over the alerting section's and ours */
    const char *bk[2] = {"summary", "description"}, *bv[2] = {e.data, e.data + sumlen + 1};
    const cfg_slo_kv_t *u[2] = {ticket ? &s->ticket_annots : &s->page_annots, &s->alert_annots};
    kv_block(o, ind, "annotations", bk, bv, 2, 0, u, 2);
    im_buf_free(&e);
}

static void window_expr(im_buf_t *e, const llm_slo_plan_t *p)
{
    const cfg_slo_t *s = p->slo;
    if (!s->calendar_month) {
        char w[40];
        im_duration_format(s->window_ms, w, sizeof w);
        ratio_expr(e, p, w);
        return;
    }
    /* The calendar month so far: the 30-minute increases recorded since the
     * month began, sampled every 30m, each step counted in the month its half
     * hour began in (the evaluation's month is read with @ end()). 30m, not 5m: 8928
     * steps exceed promtool test rules' sample limit, 1488 do not. */
    im_buf_t m;
    im_buf_init(&m, 0);
    (void)im_buf_puts(&m, "(year(vector(time() - 1800)) * 12 + month(vector(time() - 1800))) == "
                          "on () max(year(timestamp(");
    sel(&m, "infermon_slo:sli_total:increase30m", s);
    (void)im_buf_puts(&m, " @ end())) * 12 + month(timestamp(");
    sel(&m, "infermon_slo:sli_total:increase30m", s);
    (void)im_buf_puts(&m, " @ end())))");
    (void)im_buf_puts(e, "sum_over_time((");
    sel(e, "infermon_slo:sli_errors:increase30m", s);
    (void)im_buf_printf(e, " and on () (%s))[31d:30m]) / sum_over_time((", m.data);
    sel(e, "infermon_slo:sli_total:increase30m", s);
    (void)im_buf_printf(e, " and on () (%s))[31d:30m])", m.data);
    im_buf_free(&m);
}

/* The plans that make rules (no error). */
static size_t usable(const llm_slo_plans_t *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) n += p->v[i].error == NULL;
    return n;
}

static void groups(const llm_slo_plans_t *p, const char *gi, im_buf_t *o)
{
    char ri[16];
    snprintf(ri, sizeof ri, "%s    ", gi);
    im_buf_t e;
    im_buf_init(&e, 0);
    for (size_t i = 0; i < p->n; i++) {
        const llm_slo_plan_t *pl = &p->v[i];
        const cfg_slo_t *s = pl->slo;
        if (pl->error) continue; /* refused: no rules (the daemon logs why) */
        (void)im_buf_printf(o, "%s- name: infermon.slo.%s\n%s  rules:\n", gi, s->name, gi);
        for (int w = 0; w < CFG_SLO_NWINDOWS; w++) {
            char rn[80];
            snprintf(rn, sizeof rn, "infermon_slo:sli_error:ratio_rate%s", cfg_slo_window_name(w));
            im_buf_reset(&e);
            ratio_expr(&e, pl, cfg_slo_window_name(w));
            record(o, ri, rn, e.data, s, NULL, NULL);
        }
        if (s->calendar_month) {
            char *er = llm_slo_expand(pl->error_t, "30m"), *to = llm_slo_expand(pl->total_t, "30m");
            im_buf_reset(&e);
            (void)im_buf_printf(&e, "(%s) * 1800", er);
            record(o, ri, "infermon_slo:sli_errors:increase30m", e.data, s, NULL, NULL);
            im_buf_reset(&e);
            (void)im_buf_printf(&e, "(%s) * 1800", to);
            record(o, ri, "infermon_slo:sli_total:increase30m", e.data, s, NULL, NULL);
            im_free(er);
            im_free(to);
        }
        char wt[40] = "month";
        if (!s->calendar_month) im_duration_format(s->window_ms, wt, sizeof wt);
        im_buf_reset(&e);
        window_expr(&e, pl);
        record(o, ri, "infermon_slo:sli_error:ratio_window", e.data, s, "window", wt);
        im_buf_reset(&e);
        (void)im_buf_puts(&e, "1 - ");
        sel(&e, "infermon_slo:sli_error:ratio_window", s);
        record(o, ri, "infermon_slo:attainment:ratio", e.data, s, "window", wt);
        char b[32];
        num(1 - s->objective, b, sizeof b);
        im_buf_reset(&e);
        (void)im_buf_puts(&e, "1 - ");
        sel(&e, "infermon_slo:sli_error:ratio_window", s);
        (void)im_buf_printf(&e, " / %s", b);
        record(o, ri, "infermon_slo:error_budget_remaining:ratio", e.data, s, "window", wt);
        num(s->objective, b, sizeof b);
        im_buf_reset(&e);
        (void)im_buf_printf(&e, "vector(%s)", b);
        record(o, ri, "infermon_slo:objective:ratio", e.data, s, "window", wt);
        alerts(o, ri, s, false);
        alerts(o, ri, s, true);
    }
    bool any = false;
    for (size_t i = 0; i < p->n; i++) any |= p->v[i].good_t != NULL;
    if (any) {
        (void)im_buf_printf(o, "%s- name: infermon.slo.goodput\n%s  rules:\n", gi, gi);
        for (size_t i = 0; i < p->n; i++) {
            if (!p->v[i].good_t) continue;
            char *g = llm_slo_expand(p->v[i].good_t, "5m");
            record(o, ri, "infermon_slo:good_requests:rate5m", g, p->v[i].slo, NULL, NULL);
            im_free(g);
        }
        record(o, ri, "infermon_slo:goodput:rate5m",
               "min by (model) (infermon_slo:good_requests:rate5m)", NULL, NULL, NULL);
    }
    im_buf_free(&e);
}

void llm_slo_plans_groups_yaml(const llm_slo_plans_t *p, const char *indent, im_buf_t *out)
{
    groups(p, indent, out);
}

void llm_slo_plans_yaml(const llm_slo_plans_t *p, llm_slo_format_t fmt, im_buf_t *o)
{
    if (fmt == LLM_SLO_PROMETHEUSRULE) {
        (void)im_buf_puts(o, "apiVersion: monitoring.coreos.com/v1\n"
                             "kind: PrometheusRule\n"
                             "metadata:\n"
                             "  name: infermon-slos\n"
                             "  labels:\n"
                             "    app.kubernetes.io/name: infermon\n"
                             "spec:\n"
                             "  groups:\n");
        if (!usable(p)) (void)im_buf_puts(o, "    []\n");
        groups(p, "    ", o);
        return;
    }
    (void)im_buf_puts(o, usable(p) ? "groups:\n" : "groups: []\n");
    groups(p, "  ", o);
}

im_rc llm_slo_rules_yaml(const cfg_llm_slo_t *set, query_backend_t *backend, llm_slo_format_t fmt,
                         im_buf_t *out, im_buf_t *notes, im_err_t *err)
{
    llm_slo_plans_t p;
    im_rc rc = llm_slo_resolve(set, backend, &p, err);
    for (size_t i = 0; notes && i < p.nnotes; i++) (void)im_buf_printf(notes, "%s\n", p.notes[i]);
    if (rc == IM_OK) llm_slo_plans_yaml(&p, fmt, out);
    llm_slo_plans_free(&p);
    return rc;
}

/* ---- The generator: the wrapped one's files, then ours ---- */

typedef struct gen {
    rules_generator_t inner;
    char *yaml;
    size_t len;
} gen_t;

static bool gen_load(void *ctx, storage_queryable_t *sq, rules_file_t ***files, size_t *n)
{
    gen_t *g = ctx;
    bool ok = g->inner.load ? g->inner.load(g->inner.ctx, sq, files, n) : true;
    rules_errs_t errs = {0};
    rules_file_t *f = NULL;
    if (rules_file_parse(LLM_SLO_RULES_FILE, g->yaml, g->len, &f, &errs) == IM_OK) {
        *files = im_realloc(*files, (*n + 1) * sizeof **files);
        (*files)[(*n)++] = f;
    } else {
        for (size_t e = 0; e < errs.n; e++)
            IM_ERROR("SLO rules failed to load", "err=%s", im_logq(errs.v[e]));
        ok = false;
    }
    rules_errs_free(&errs);
    return ok;
}

static bool gen_changed(void *ctx, storage_queryable_t *sq)
{
    gen_t *g = ctx;
    return g->inner.changed && g->inner.changed(g->inner.ctx, sq);
}

static void gen_free(void *ctx)
{
    gen_t *g = ctx;
    if (g->inner.free) g->inner.free(g->inner.ctx);
    im_free(g->yaml);
    im_free(g);
}

void llm_slo_rules_generator(const llm_slo_plans_t *p, rules_generator_t *gen)
{
    gen_t *g = im_calloc(1, sizeof *g);
    g->inner = *gen;
    im_buf_t b;
    im_buf_init(&b, 0);
    llm_slo_plans_yaml(p, LLM_SLO_RULEFILE, &b);
    g->yaml = im_buf_steal(&b, &g->len);
    *gen = (rules_generator_t){gen_load, gen_changed, gen_free, g, g->inner.recheck_ms};
}
