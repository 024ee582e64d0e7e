/* doctor_rules.c — the causes of doctor.h evaluated over the per-step series
 * of doctor_int.h, and the ranking. Each cause is a per-step condition; it is
 * current when it holds in at least llm.doctor.hold_share of the recent steps
 * (the last llm.doctor.recent_share of the window), and "resolved" (info) when
 * it held earlier in the window only. Causes that explain the same queue
 * exclude each other in a fixed order (deferred, stall, KV, host, surge,
 * prefill): each finding lists the others as alternatives with the figure
 * that rejected them. The thresholds and their keys are in docs/doctor.md. */
#include "util/base.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "llm/doctor_int.h"
#include "util/timeutil.h"

/* ---- Statistics over a series ---- */

typedef struct st {
    double mean, max, last, rmean; /* whole window, recent part; NaN = no data */
    size_t n;
} st_t;

static st_t stats(const doc_data_t *d, const double *v)
{
    st_t s = {NAN, NAN, NAN, NAN, 0};
    if (!v) return s;
    double sum = 0, rsum = 0;
    size_t rn = 0;
    for (size_t k = 0; k < d->nsteps; k++) {
        if (isnan(v[k])) continue;
        sum += v[k];
        s.n++;
        if (isnan(s.max) || v[k] > s.max) s.max = v[k];
        s.last = v[k];
        if (k >= d->nsteps - d->nrecent) {
            rsum += v[k];
            rn++;
        }
    }
    if (s.n) s.mean = sum / (double)s.n;
    if (rn) s.rmean = rsum / (double)rn;
    return s;
}

static double at(const double *v, size_t k)
{
    return v ? v[k] : NAN;
}

/* A per-step condition: 1 true, 0 false, -1 no data. */
typedef signed char cond_t;

typedef struct hold {
    bool current, earlier;
    double share; /* of the recent steps with data */
    int64_t since_ms, until_ms;
} hold_t;

static hold_t hold_of(const doc_data_t *d, const cond_t *c)
{
    hold_t h = {false, false, 0, 0, 0};
    size_t rn = 0, rt = 0, an = 0, at_ = 0;
    ssize_t last = -1;
    for (size_t k = 0; k < d->nsteps; k++) {
        if (c[k] < 0) continue;
        an++;
        if (c[k]) {
            at_++;
            last = (ssize_t)k;
        }
        if (k >= d->nsteps - d->nrecent) {
            rn++;
            if (c[k]) rt++;
        }
    }
    if (rn) h.share = (double)rt / (double)rn;
    h.current = rn > 0 && rt > 0 && h.share >= d->dc.hold_share;
    h.earlier = !h.current && an > 0 && at_ >= 3 && (double)at_ / (double)an >= 0.2;
    if (last >= 0) {
        /* back from the last true step over gaps of at most 2 steps */
        ssize_t k = last, first = last, gap = 0;
        for (; k >= 0; k--) {
            if (c[k] > 0) {
                first = k;
                gap = 0;
            } else if (++gap > 2) {
                break;
            }
        }
        h.since_ms = d->start_ms + (int64_t)first * d->step_ms;
        h.until_ms = d->start_ms + (int64_t)last * d->step_ms;
    }
    return h;
}

/* ---- Building findings ---- */

static char *vfmt(const char *fmt, va_list ap) IM_PRINTF(1, 0);
static char *vfmt(const char *fmt, va_list ap)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    char tmp[2048];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    (void)im_buf_puts(&b, tmp);
    return im_buf_steal(&b, NULL);
}

static char *fmt(const char *f, ...) IM_PRINTF(1, 2);
static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = vfmt(f, ap);
    va_end(ap);
    return s;
}

static llm_doctor_finding_t *fnew(llm_doctor_report_t *r, const char *cause,
                                  llm_doctor_severity_t sev, double conf, const doc_model_t *m)
{
    r->findings = im_realloc(r->findings, (r->nfindings + 1) * sizeof *r->findings);
    llm_doctor_finding_t *f = &r->findings[r->nfindings++];
    memset(f, 0, sizeof *f);
    f->cause = cause;
    f->severity = sev;
    f->confidence = conf;
    f->model = im_strdup(m ? m->model : "");
    f->engine = im_strdup(m ? m->engine : "");
    f->ttft_p95_s = NAN;
    f->failed_ratio = NAN;
    f->current = true;
    return f;
}

static void fsummary(llm_doctor_finding_t *f, const char *fm, ...) IM_PRINTF(2, 3);
static void fsummary(llm_doctor_finding_t *f, const char *fm, ...)
{
    va_list ap;
    va_start(ap, fm);
    im_free(f->summary);
    f->summary = vfmt(fm, ap);
    va_end(ap);
}

static llm_doctor_evidence_t *fev(llm_doctor_finding_t *f, const char *signal, const char *metric,
                                  const char *query, const char *unit, st_t s, double thr,
                                  const char *fm, ...) IM_PRINTF(8, 9);
static llm_doctor_evidence_t *fev(llm_doctor_finding_t *f, const char *signal, const char *metric,
                                  const char *query, const char *unit, st_t s, double thr,
                                  const char *fm, ...)
{
    f->evidence = im_realloc(f->evidence, (f->nevidence + 1) * sizeof *f->evidence);
    llm_doctor_evidence_t *e = &f->evidence[f->nevidence++];
    memset(e, 0, sizeof *e);
    e->signal = im_strdup(signal);
    e->metric = im_strdup(metric ? metric : "");
    e->query = im_strdup(query ? query : "");
    e->unit = im_strdup(unit);
    e->mean = s.mean;
    e->max = s.max;
    e->last = s.last;
    e->threshold = thr;
    va_list ap;
    va_start(ap, fm);
    e->text = vfmt(fm, ap);
    va_end(ap);
    return e;
}

static void falt(llm_doctor_finding_t *f, const char *cause, const char *fm, ...) IM_PRINTF(3, 4);
static void falt(llm_doctor_finding_t *f, const char *cause, const char *fm, ...)
{
    f->alts = im_realloc(f->alts, (f->nalts + 1) * sizeof *f->alts);
    llm_doctor_alt_t *a = &f->alts[f->nalts++];
    a->cause = im_strdup(cause);
    va_list ap;
    va_start(ap, fm);
    a->why = vfmt(fm, ap);
    va_end(ap);
}

static bool is_engine(const char *e)
{
    return !strcmp(e, "vllm") || !strcmp(e, "sglang") || !strcmp(e, "ray-vllm");
}

/* Engine flags of the other engine are left out (a vLLM finding gets vLLM's). */
static void fflag(llm_doctor_finding_t *f, const char *engine, const char *flag, const char *advice)
{
    if (is_engine(engine) && is_engine(f->engine) && strcmp(engine, f->engine) &&
        !(!strcmp(engine, "vllm") && !strcmp(f->engine, "ray-vllm")))
        return;
    f->flags = im_realloc(f->flags, (f->nflags + 1) * sizeof *f->flags);
    llm_doctor_flag_t *x = &f->flags[f->nflags++];
    x->engine = im_strdup(engine);
    x->flag = im_strdup(flag);
    x->advice = im_strdup(advice);
}

static void add_str(char ***v, size_t *n, const char *s)
{
    if (!s || !*s) return;
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*v)[i], s)) return;
    *v = im_realloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = im_strdup(s);
}

static void fpod(llm_doctor_finding_t *f, const doc_pod_t *p)
{
    add_str(&f->pods, &f->npods, p->name);
    add_str(&f->nodes, &f->nnodes, p->node);
}

static void fhold(llm_doctor_finding_t *f, const hold_t *h)
{
    f->since_ms = h->since_ms;
    f->current = h->current;
    if (!h->current) f->severity = LLM_DOCTOR_INFO;
}

/* ---- Per-model context ---- */

typedef struct mc {
    const doc_data_t *d;
    const doc_model_t *m;
    size_t n;
    double *npods;  /* pods reporting per step */
    double *wpp;    /* waiting per pod */
    double *rpp;    /* running per pod */
    double *gpp;    /* generated tokens/s per pod */
    double *fail;   /* (errors + aborts) / finished */
    double *errs;   /* errors / finished (or mixed failures) */
    double *aborts; /* aborts / finished */
    double *defshare;
    double *ppr;      /* prompt tokens per request */
    double *arrivals; /* finished + d(waiting)/dt */
    double run_max;   /* window maximum of running (model) */
    st_t s[DS_COUNT];
    double ttft_now, fail_now; /* what users feel now */
    cond_t *queue;
    bool have_gpu;
} mc_t;

static double ratio(double a, double b)
{
    if (isnan(a) || isnan(b)) return NAN;
    if (b <= 0) return a > 0 ? 1 : 0;
    return a / b;
}

static void mc_init(mc_t *c, const doc_data_t *d, const doc_model_t *m)
{
    memset(c, 0, sizeof *c);
    c->d = d;
    c->m = m;
    size_t n = c->n = d->nsteps;
    c->npods = doc_nan_series(n);
    c->wpp = doc_nan_series(n);
    c->rpp = doc_nan_series(n);
    c->gpp = doc_nan_series(n);
    c->fail = doc_nan_series(n);
    c->errs = doc_nan_series(n);
    c->aborts = doc_nan_series(n);
    c->defshare = doc_nan_series(n);
    c->ppr = doc_nan_series(n);
    c->arrivals = doc_nan_series(n);
    c->queue = im_calloc(n, sizeof *c->queue);
    for (int i = 0; i < DS_COUNT; i++) c->s[i] = stats(d, m->s[i].v);
    c->run_max = c->s[DS_RUNNING].max;
    c->have_gpu = m->s[DS_GPU_UTIL].v != NULL;
    for (size_t k = 0; k < n; k++) {
        double np = 0;
        for (size_t p = 0; p < m->npods; p++)
            if (!isnan(at(m->pods[p].running, k)) || !isnan(at(m->pods[p].waiting, k))) np++;
        if (np == 0) np = NAN;
        c->npods[k] = np;
        double w = at(m->s[DS_WAITING].v, k), r = at(m->s[DS_RUNNING].v, k);
        c->wpp[k] = w / np;
        c->rpp[k] = r / np;
        c->gpp[k] = at(m->s[DS_GEN].v, k) / np;
        double fin = at(m->s[DS_FINISHED].v, k);
        double er = at(m->s[DS_ERRORS].v, k), ab = at(m->s[DS_ABORTS].v, k);
        double failed = (isnan(er) ? 0 : er) + (isnan(ab) ? 0 : ab);
        if (isnan(er) && isnan(ab)) failed = NAN;
        /* engines whose finished count leaves failures out: the larger is the total */
        double tot = isnan(fin) ? NAN : IM_MAX(fin, failed);
        c->fail[k] = ratio(failed, tot);
        c->errs[k] = m->errors_mixed ? NAN : ratio(er, tot);
        c->aborts[k] = ratio(ab, tot);
        c->defshare[k] = ratio(at(m->s[DS_DEFERRED].v, k), w);
        c->ppr[k] = ratio(at(m->s[DS_PROMPT].v, k), fin);
        if (k > 0 && !isnan(fin) && !isnan(w) && !isnan(at(m->s[DS_WAITING].v, k - 1)))
            c->arrivals[k] = fin + (w - m->s[DS_WAITING].v[k - 1]) / ((double)d->step_ms / 1000.0);
        c->queue[k] = isnan(c->wpp[k]) ? -1 : c->wpp[k] >= d->dc.waiting_per_pod;
    }
    c->ttft_now = c->s[DS_TTFT_P95].rmean;
    if (isnan(c->ttft_now)) c->ttft_now = c->s[DS_TTFT_MEAN].rmean;
    c->fail_now = stats(d, c->fail).rmean;
}

static void mc_free(mc_t *c)
{
    im_free(c->npods);
    im_free(c->wpp);
    im_free(c->rpp);
    im_free(c->gpp);
    im_free(c->fail);
    im_free(c->errs);
    im_free(c->aborts);
    im_free(c->defshare);
    im_free(c->ppr);
    im_free(c->arrivals);
    im_free(c->queue);
}

static bool users_hurt(const mc_t *c)
{
    return (!isnan(c->ttft_now) && c->ttft_now > c->d->ttft_target_s) ||
           (!isnan(c->fail_now) && c->fail_now > c->d->failure_ratio);
}

/* The user-felt evidence first: TTFT p95 and the failed share. */
static void felt(llm_doctor_finding_t *f, const mc_t *c)
{
    const doc_model_t *m = c->m;
    const doc_data_t *d = c->d;
    f->ttft_p95_s = c->ttft_now;
    f->failed_ratio = c->fail_now;
    if (m->s[DS_TTFT_P95].v)
        fev(f, "ttft", m->s[DS_TTFT_P95].metric, m->s[DS_TTFT_P95].query, "seconds",
            c->s[DS_TTFT_P95], d->ttft_target_s, "TTFT p95 %.3g s now (max %.3g s; target %g s)",
            c->s[DS_TTFT_P95].rmean, c->s[DS_TTFT_P95].max, d->ttft_target_s);
    if (!isnan(c->fail_now))
        fev(f, "requests_failed", m->s[DS_ABORTS].metric, m->s[DS_ABORTS].query, "ratio",
            stats(d, c->fail), d->failure_ratio, "%.1f%% of requests failed or aborted now",
            100 * c->fail_now);
}

static llm_doctor_severity_t sev_for(const mc_t *c)
{
    if (!users_hurt(c)) return LLM_DOCTOR_WARNING;
    bool bad = (!isnan(c->ttft_now) && c->ttft_now > 2 * c->d->ttft_target_s) ||
               (!isnan(c->fail_now) && c->fail_now > 2 * c->d->failure_ratio);
    return bad ? LLM_DOCTOR_CRITICAL : LLM_DOCTOR_WARNING;
}

/* How each series is named in the evidence: its signal, unit and words. */
static const struct {
    const char *signal, *unit, *what;
} sig_desc[DS_COUNT] = {
    [DS_DEFERRED] = {"waiting_by_reason", "requests", "requests waiting with reason deferred"},
    [DS_WAITING] = {"waiting", "requests", "requests waiting"},
    [DS_GPU_UTIL] = {"gpu_util", "percent", "GPU util (%)"},
    [DS_RUNNING] = {"running", "requests", "requests running"},
    [DS_GEN] = {"generation_tokens", "tokens/s", "generated tokens/s"},
    [DS_KV] = {"kv_usage", "ratio", "KV-cache use"},
    [DS_PREEMPT] = {"preemptions", "1/s", "preemptions/s"},
    [DS_QUEUE_MEAN] = {"queue_time", "seconds", "mean queue time (s)"},
    [DS_MEM_COPY] = {"gpu_mem_copy", "percent", "memory-copy util (%)"},
    [DS_PREFILL_MEAN] = {"prefill_time", "seconds", "mean prefill time (s)"},
    [DS_FINISHED] = {"requests_finished", "1/s", "requests finished/s"},
};

/* Evidence of series ds (when the model has it) against the threshold thr. */
static void ev_sig(llm_doctor_finding_t *f, const mc_t *c, int ds, double thr)
{
    const doc_model_t *m = c->m;
    if (!m->s[ds].v) return;
    assert(sig_desc[ds].signal);
    st_t s = c->s[ds];
    fev(f, sig_desc[ds].signal, m->s[ds].metric, m->s[ds].query, sig_desc[ds].unit, s, thr,
        "%s %.3g now (mean %.3g, max %.3g over the window)", sig_desc[ds].what, s.rmean, s.mean,
        s.max);
}

/* Pods whose recent mean of the per-pod series meets >= thr (all if none). */
static void pods_where(llm_doctor_finding_t *f, const mc_t *c, int field, double thr)
{
    const doc_model_t *m = c->m;
    size_t added = 0;
    for (size_t p = 0; p < m->npods; p++) {
        const doc_pod_t *pp = &m->pods[p];
        const double *v = field == 0   ? pp->waiting
                          : field == 1 ? pp->kv
                          : field == 2 ? pp->gpu_util
                                       : pp->ttft_mean;
        st_t s = stats(c->d, v);
        bool hit = field == 2 ? s.rmean < thr : s.rmean >= thr;
        if (!isnan(s.rmean) && hit) {
            fpod(f, pp);
            added++;
        }
    }
    if (!added)
        for (size_t p = 0; p < m->npods; p++) fpod(f, &m->pods[p]);
}

static const char *pct(double v, char *b, size_t cap)
{
    if (isnan(v))
        snprintf(b, cap, "n/a");
    else
        snprintf(b, cap, "%.0f%%", 100 * v);
    return b;
}

/* ---- The queue causes ---- */

typedef struct qcause {
    const char *id;
    cond_t *c;
    hold_t h;
    char why[256]; /* why rejected, when not current */
} qcause_t;

enum { Q_DEFERRED, Q_STALL, Q_KV, Q_HOST, Q_SURGE, Q_PREFILL, Q_COUNT };

static void queue_causes(const mc_t *c, llm_doctor_report_t *r)
{
    const doc_data_t *d = c->d;
    const doc_model_t *m = c->m;
    const cfg_llm_doctor_t *dc = &d->dc;
    size_t n = c->n;
    static const char *const ids[Q_COUNT] = {"deferred-admission", "scheduler-stall",
                                             "kv-saturation",      "host-bound",
                                             "traffic-surge",      "compute-bound-prefill"};
    qcause_t q[Q_COUNT];
    memset(q, 0, sizeof q);
    for (int i = 0; i < Q_COUNT; i++) {
        q[i].id = ids[i];
        q[i].c = im_calloc(n, sizeof(cond_t));
    }
    bool have_def = m->s[DS_DEFERRED].v != NULL, have_kv = m->s[DS_KV].v != NULL;
    for (size_t k = 0; k < n; k++) {
        double kv = at(m->s[DS_KV].v, k), util = at(m->s[DS_GPU_UTIL].v, k),
               copy = at(m->s[DS_MEM_COPY].v, k), pre = at(m->s[DS_PREEMPT].v, k),
               run = at(m->s[DS_RUNNING].v, k);
        bool queue = c->queue[k] > 0, nodata = c->queue[k] < 0;
        bool deferred = have_def && !isnan(c->defshare[k]) && c->defshare[k] >= dc->deferred_share;
        bool waits = !isnan(c->wpp[k]) && c->wpp[k] >= 1;
        bool idle = (!isnan(c->rpp[k]) && c->rpp[k] < 0.5) ||
                    (!isnan(c->gpp[k]) && c->gpp[k] < dc->stall_tokens_per_second);
        bool kv_free = !have_kv || (!isnan(kv) && kv < dc->kv_moderate);
        bool pinned = !isnan(run) && !isnan(c->run_max) && c->run_max > 0 &&
                      run >= dc->running_ceiling * c->run_max;
        bool gpu_low = c->have_gpu && !isnan(util) && util < dc->host_util &&
                       (isnan(copy) || copy < dc->host_util);
        q[Q_DEFERRED].c[k] = nodata ? -1 : (queue && deferred);
        q[Q_STALL].c[k] = nodata ? -1 : (waits && idle && kv_free && !deferred);
        q[Q_KV].c[k] = nodata || !have_kv || isnan(kv)
                           ? -1
                           : (kv >= d->kv_threshold &&
                              ((!isnan(pre) && pre >= dc->preemptions_per_second) || queue));
        q[Q_HOST].c[k] = nodata || !c->have_gpu ? -1 : (queue && gpu_low && !deferred && !idle);
        q[Q_SURGE].c[k] =
            nodata ? -1
                   : (queue && pinned && (!have_kv || isnan(kv) || kv < d->kv_threshold) &&
                      !gpu_low && !deferred && !idle);
        q[Q_PREFILL].c[k] = nodata
                                ? -1
                                : (queue && kv_free && !pinned && !deferred && !idle && !gpu_low &&
                                   !isnan(c->ppr[k]) && c->ppr[k] >= dc->prompt_tokens &&
                                   (!c->have_gpu || (!isnan(util) && util >= dc->compute_util)));
    }
    for (int i = 0; i < Q_COUNT; i++) q[i].h = hold_of(d, q[i].c);
    hold_t hq = hold_of(d, c->queue);
    char b1[32], b2[32];
    /* why each is rejected (for the alternatives) */
    snprintf(q[Q_DEFERRED].why, sizeof q[0].why,
             have_def ? "deferred share of the queue %s now (threshold %s)"
                      : "%s%snot enough data: the engine does not expose the waiting reason",
             have_def ? pct(stats(d, c->defshare).rmean, b1, sizeof b1) : "",
             have_def ? pct(dc->deferred_share, b2, sizeof b2) : "");
    snprintf(q[Q_STALL].why, sizeof q[0].why,
             "requests run: %.3g running and %.3g generated tokens/s per pod now",
             stats(d, c->rpp).rmean, stats(d, c->gpp).rmean);
    if (have_kv)
        snprintf(q[Q_KV].why, sizeof q[0].why,
                 "KV cache use %s now (threshold %s), preemptions %.3g/s",
                 pct(c->s[DS_KV].rmean, b1, sizeof b1), pct(d->kv_threshold, b2, sizeof b2),
                 isnan(c->s[DS_PREEMPT].rmean) ? 0 : c->s[DS_PREEMPT].rmean);
    else
        snprintf(q[Q_KV].why, sizeof q[0].why, "not enough data: no KV-cache use series");
    if (c->have_gpu)
        snprintf(q[Q_HOST].why, sizeof q[0].why,
                 "GPU util %.0f%% and memory-copy %.0f%% now (host-bound below %.0f%%)",
                 c->s[DS_GPU_UTIL].rmean, c->s[DS_MEM_COPY].rmean, dc->host_util);
    else
        snprintf(q[Q_HOST].why, sizeof q[0].why,
                 "not enough data: no dcgm-exporter GPU series for these pods");
    snprintf(q[Q_SURGE].why, sizeof q[0].why,
             "running %.3g now vs a window maximum of %.3g: not pinned at a ceiling",
             c->s[DS_RUNNING].rmean, c->run_max);
    snprintf(q[Q_PREFILL].why, sizeof q[0].why,
             "prompts %.0f tokens per request now (threshold %.0f), KV use %s",
             stats(d, c->ppr).rmean, dc->prompt_tokens, pct(c->s[DS_KV].rmean, b1, sizeof b1));
    if (!hq.current && !hq.earlier) {
        for (int i = Q_DEFERRED; i < Q_COUNT; i++)
            if (i != Q_KV && i != Q_STALL) snprintf(q[i].why, sizeof q[0].why, "no queue");
    }

    int first = -1;
    for (int i = 0; i < Q_COUNT; i++) {
        if (!q[i].h.current && !q[i].h.earlier) continue;
        if (q[i].h.current && first >= 0 && q[first].h.current) continue; /* one current cause */
        if (first < 0 || (q[i].h.current && !q[first].h.current)) first = i;
    }
    for (int i = 0; i < Q_COUNT; i++) {
        bool show = q[i].h.current ? i == first : q[i].h.earlier;
        if (!show) continue;
        double conf = 0.6 + 0.4 * q[i].h.share;
        llm_doctor_finding_t *f = fnew(r, q[i].id, sev_for(c), conf, m);
        felt(f, c);
        fhold(f, &q[i].h);
        if (!q[i].h.current) f->confidence = 0.5;
        char t1[32];
        switch (i) {
        case Q_DEFERRED:
            fsummary(f,
                     "%s of the queue of %s waits with reason deferred: admission is held back "
                     "by configuration (LoRA adapter budget, KV transfer), not by capacity",
                     pct(stats(d, c->defshare).rmean, t1, sizeof t1), m->model);
            ev_sig(f, c, DS_DEFERRED, NAN);
            ev_sig(f, c, DS_WAITING, dc->waiting_per_pod);
            ev_sig(f, c, DS_GPU_UTIL, NAN);
            f->panel = im_strdup("waiting");
            f->action = fmt("Find what defers admission: LoRA adapters over the budget (vLLM "
                            "--max-loras, --max-cpu-loras; SGLang --max-loras-per-batch) or a "
                            "disaggregated-prefill KV transfer that stalls (the KV connector's "
                            "logs). Adding replicas does not help.");
            f->expect = fmt("The deferred share falls to ~0 and queue time to the capacity "
                            "share; GPU util rises with the admitted work.");
            fflag(f, "vllm", "--max-loras", "raise to the adapters served at once");
            fflag(f, "vllm", "--max-cpu-loras", "raise so adapters are not swapped in per request");
            fflag(f, "sglang", "--max-loras-per-batch", "raise to the adapters served at once");
            pods_where(f, c, 0, dc->waiting_per_pod);
            break;
        case Q_STALL:
            fsummary(f,
                     "requests wait on %s but nothing runs or tokens stopped, while the KV cache "
                     "is mostly free: the scheduler is stalled",
                     m->model);
            ev_sig(f, c, DS_WAITING, 1);
            ev_sig(f, c, DS_RUNNING, 0.5);
            ev_sig(f, c, DS_GEN, dc->stall_tokens_per_second);
            ev_sig(f, c, DS_KV, dc->kv_moderate);
            f->panel = im_strdup("running");
            f->action = fmt("Restart the stalled pods (a known vLLM failure mode: the engine "
                            "loop hangs on a request, e.g. a tokenizer or structured-output "
                            "deadlock); capture py-spy dumps first and check the engine logs. "
                            "Lower --max-num-seqs if the stall follows OOM retries.");
            f->expect = fmt("Running requests and tokens/s resume at once; the queue drains at "
                            "the normal rate.");
            fflag(f, "kubernetes", "kubectl delete pod", "restart the stalled pods");
            fflag(f, "vllm", "--max-num-seqs", "lower if the stall follows memory retries");
            fflag(f, "sglang", "--max-running-requests", "lower if the stall follows retractions");
            pods_where(f, c, 0, 1);
            break;
        case Q_KV:
            fsummary(f,
                     "the KV cache of %s is full (%s now): requests are preempted and sent back "
                     "to the queue, the queue grows and TTFT with it",
                     m->model, pct(c->s[DS_KV].rmean, t1, sizeof t1));
            ev_sig(f, c, DS_KV, d->kv_threshold);
            ev_sig(f, c, DS_PREEMPT, dc->preemptions_per_second);
            ev_sig(f, c, DS_WAITING, dc->waiting_per_pod);
            ev_sig(f, c, DS_QUEUE_MEAN, NAN);
            f->panel = im_strdup("kv");
            f->action = fmt("Give the KV cache more room or ask less of it: raise vLLM "
                            "--gpu-memory-utilization (e.g. 0.90 -> 0.95) or SGLang "
                            "--mem-fraction-static; lower --max-num-seqs / "
                            "--max-running-requests so fewer sequences compete; cap "
                            "--max-model-len / --context-length to the prompts you serve; use "
                            "--kv-cache-dtype fp8; or add replicas.");
            f->expect = fmt("Preemptions fall to ~0, KV use stays under %s, queue time and TTFT "
                            "p95 return under %g s; per-pod throughput may drop a little with a "
                            "lower --max-num-seqs.",
                            pct(d->kv_threshold, t1, sizeof t1), d->ttft_target_s);
            fflag(f, "vllm", "--gpu-memory-utilization", "raise (0.90 -> 0.95) if memory allows");
            fflag(f, "vllm", "--max-num-seqs", "lower (e.g. 256 -> 128)");
            fflag(f, "vllm", "--max-model-len", "cap to the longest prompt + output you serve");
            fflag(f, "sglang", "--mem-fraction-static", "raise (e.g. 0.85 -> 0.9)");
            fflag(f, "sglang", "--max-running-requests", "lower");
            fflag(f, "kubernetes", "replicas", "add replicas to spread the KV demand");
            pods_where(f, c, 1, d->kv_threshold);
            break;
        case Q_HOST:
            fsummary(f,
                     "the queue of %s grows while its GPUs are idle (util %.0f%%, memory-copy "
                     "%.0f%%): the host (CPU, tokenizer, detokenizer, Python scheduler) is the "
                     "bottleneck",
                     m->model, c->s[DS_GPU_UTIL].rmean, c->s[DS_MEM_COPY].rmean);
            ev_sig(f, c, DS_WAITING, dc->waiting_per_pod);
            ev_sig(f, c, DS_GPU_UTIL, dc->host_util);
            ev_sig(f, c, DS_MEM_COPY, dc->host_util);
            ev_sig(f, c, DS_RUNNING, NAN);
            f->panel = im_strdup("gpu_vs_wait");
            f->action = fmt("Give the engine CPU: raise the pod's CPU request/limit (no CPU "
                            "throttling), run the API server apart from the engine (vLLM "
                            "--api-server-count, SGLang --tokenizer-worker-num), enable "
                            "multi-step/async scheduling (vLLM --async-scheduling) and check "
                            "for slow tokenizers or logits processors.");
            f->expect = fmt("GPU util rises with the admitted work and the queue drains; "
                            "adding GPUs would not help.");
            fflag(f, "kubernetes", "resources.limits.cpu", "raise; check CPU throttling");
            fflag(f, "vllm", "--api-server-count", "raise to move tokenization off the engine");
            fflag(f, "vllm", "--async-scheduling", "enable");
            fflag(f, "sglang", "--tokenizer-worker-num", "raise");
            pods_where(f, c, 0, dc->waiting_per_pod);
            break;
        case Q_SURGE: {
            st_t a = stats(d, c->arrivals);
            double base = NAN;
            size_t nb = IM_MAX((size_t)1, d->nsteps / 10);
            double sb = 0;
            size_t cb = 0;
            for (size_t k = 0; k < nb && k < d->nsteps; k++)
                if (!isnan(c->arrivals[k])) {
                    sb += c->arrivals[k];
                    cb++;
                }
            if (cb) base = sb / (double)cb;
            double factor = base > 0 ? a.rmean / base : NAN;
            bool surge = !isnan(factor) && factor >= dc->surge_factor;
            f->confidence = surge ? 0.9 : 0.7;
            if (surge)
                fsummary(f,
                         "traffic to %s rose %.1fx since the start of the window and the "
                         "replicas serve all they can (running pinned at %.0f): demand exceeds "
                         "capacity",
                         m->model, factor, c->run_max);
            else
                fsummary(f,
                         "requests to %s arrive faster than the replicas serve them (running "
                         "pinned at %.0f, queue growing, KV cache not the limit): demand exceeds "
                         "capacity",
                         m->model, c->run_max);
            fev(f, "arrivals", m->s[DS_FINISHED].metric, m->s[DS_FINISHED].query, "1/s", a, NAN,
                "arrivals %.3g/s now (finished + queue growth), %.3g/s at the start", a.rmean,
                base);
            ev_sig(f, c, DS_RUNNING, dc->running_ceiling * c->run_max);
            ev_sig(f, c, DS_WAITING, dc->waiting_per_pod);
            ev_sig(f, c, DS_KV, d->kv_threshold);
            ev_sig(f, c, DS_GPU_UTIL, NAN);
            f->panel = im_strdup("waiting");
            f->action = fmt("Add replicas (HPA maxReplicas, or scale on waiting requests); the "
                            "batch limit is reached (--max-num-seqs / --max-running-requests): "
                            "raise it only while KV use stays under %s; rate-limit or shed low-"
                            "priority traffic meanwhile.",
                            pct(d->kv_threshold, t1, sizeof t1));
            f->expect = fmt("With replicas for the new rate the queue drains and TTFT p95 "
                            "returns under %g s; aborts from impatient clients stop.",
                            d->ttft_target_s);
            fflag(f, "kubernetes", "replicas", "scale out for the new arrival rate");
            fflag(f, "vllm", "--max-num-seqs", "raise only if KV use has room");
            fflag(f, "sglang", "--max-running-requests", "raise only if token_usage has room");
            pods_where(f, c, 0, dc->waiting_per_pod);
            break;
        }
        case Q_PREFILL:
            fsummary(f,
                     "the queue of %s grows while the KV cache has room (%s): long prompts "
                     "(%.0f tokens per request) keep the GPUs busy with prefill",
                     m->model, pct(c->s[DS_KV].rmean, t1, sizeof t1), stats(d, c->ppr).rmean);
            fev(f, "prompt_tokens", m->s[DS_PROMPT].metric, m->s[DS_PROMPT].query, "tokens/request",
                stats(d, c->ppr), dc->prompt_tokens, "%.0f prompt tokens per request now",
                stats(d, c->ppr).rmean);
            ev_sig(f, c, DS_PREFILL_MEAN, NAN);
            ev_sig(f, c, DS_WAITING, dc->waiting_per_pod);
            ev_sig(f, c, DS_KV, dc->kv_moderate);
            ev_sig(f, c, DS_GPU_UTIL, dc->compute_util);
            f->panel = im_strdup("tokens");
            f->action = fmt("Prefill is compute-bound: tune the prefill budget per step (vLLM "
                            "--max-num-batched-tokens, e.g. 8192 -> 16384 for throughput, lower "
                            "for ITL; SGLang --chunked-prefill-size), keep chunked prefill and "
                            "prefix caching on (--enable-prefix-caching) for shared prefixes, "
                            "or separate prefill from decode (disaggregated prefill) / add "
                            "replicas.");
            f->expect = fmt("Queue time falls; TTFT p95 returns under %g s; inter-token latency "
                            "may rise a little with a larger prefill budget.",
                            d->ttft_target_s);
            fflag(f, "vllm", "--max-num-batched-tokens", "raise for prefill throughput");
            fflag(f, "vllm", "--enable-prefix-caching", "keep on for shared prefixes");
            fflag(f, "sglang", "--chunked-prefill-size", "raise for prefill throughput");
            fflag(f, "kubernetes", "replicas", "add replicas if GPUs stay saturated");
            pods_where(f, c, 0, dc->waiting_per_pod);
            break;
        }
        if (!q[i].h.current) {
            char ub[64];
            im_time_format_rfc3339(q[i].h.until_ms, ub, sizeof ub);
            char *s = fmt("resolved (last seen %s): %s", ub, f->summary);
            im_free(f->summary);
            f->summary = s;
        }
        for (int j = 0; j < Q_COUNT; j++)
            if (j != i)
                falt(f, q[j].id, "%s",
                     q[j].h.current ? "holds too, but ranks after this cause" : q[j].why);
    }
    for (int i = 0; i < Q_COUNT; i++) im_free(q[i].c);
}

/* ---- Efficiency: memory-bandwidth-bound, overprovisioned ---- */

static void efficiency_causes(const mc_t *c, llm_doctor_report_t *r)
{
    const doc_data_t *d = c->d;
    const doc_model_t *m = c->m;
    const cfg_llm_doctor_t *dc = &d->dc;
    if (!c->have_gpu) return;
    cond_t *mem = im_calloc(c->n, sizeof *mem), *over = im_calloc(c->n, sizeof *over);
    for (size_t k = 0; k < c->n; k++) {
        double util = at(m->s[DS_GPU_UTIL].v, k), copy = at(m->s[DS_MEM_COPY].v, k);
        if (isnan(util) || c->queue[k] < 0) {
            mem[k] = over[k] = -1;
            continue;
        }
        bool queue = c->queue[k] > 0;
        mem[k] = !isnan(copy) && !queue && copy >= dc->mem_copy_min && util <= dc->mem_util_max &&
                 copy >= dc->mem_copy_ratio * util;
        over[k] = !queue && util < dc->gpu_idle_util && !(c->wpp[k] >= 1);
    }
    hold_t hm = hold_of(d, mem), ho = hold_of(d, over);
    char t1[32];
    if (hm.current) {
        llm_doctor_finding_t *f =
            fnew(r, "memory-bandwidth-bound", LLM_DOCTOR_WARNING, 0.6 + 0.3 * hm.share, m);
        felt(f, c);
        fhold(f, &hm);
        fsummary(f,
                 "the GPUs of %s move memory (memory-copy %.0f%%) far more than they compute "
                 "(util %.0f%%): decode is bandwidth-bound with too small a batch (%.0f running "
                 "per pod)",
                 m->model, c->s[DS_MEM_COPY].rmean, c->s[DS_GPU_UTIL].rmean,
                 stats(d, c->rpp).rmean);
        ev_sig(f, c, DS_MEM_COPY, dc->mem_copy_min);
        ev_sig(f, c, DS_GPU_UTIL, dc->mem_util_max);
        ev_sig(f, c, DS_RUNNING, NAN);
        ev_sig(f, c, DS_KV, NAN);
        f->panel = im_strdup("memcopy");
        f->action = fmt("Batch more per GPU: send the traffic to fewer replicas (each reads the "
                        "weights once per step for the whole batch), raise --max-num-seqs / "
                        "--max-running-requests if queues form, shrink the bytes per token "
                        "(--kv-cache-dtype fp8, FP8/AWQ weights), and keep prefix caching on for "
                        "the long shared contexts.");
        f->expect = fmt("Tokens/s per GPU rise with the batch; GPU util rises toward the "
                        "memory-copy share; inter-token latency stays about the same.");
        fflag(f, "kubernetes", "replicas", "fewer replicas, larger batches");
        fflag(f, "vllm", "--kv-cache-dtype", "fp8");
        fflag(f, "vllm", "--max-num-seqs", "raise if queues form");
        fflag(f, "sglang", "--kv-cache-dtype", "fp8_e5m2");
        for (size_t p = 0; p < m->npods; p++) fpod(f, &m->pods[p]);
        falt(f, "host-bound", "memory-copy %.0f%% is not low (host-bound below %.0f%%)",
             c->s[DS_MEM_COPY].rmean, dc->host_util);
        falt(f, "overprovisioned", "GPU util %.0f%% is over %.0f%%", c->s[DS_GPU_UTIL].rmean,
             dc->gpu_idle_util);
        falt(f, "kv-saturation", "KV-cache use %s", pct(c->s[DS_KV].rmean, t1, sizeof t1));
    }
    if (ho.current) {
        llm_doctor_finding_t *f =
            fnew(r, "overprovisioned", LLM_DOCTOR_WARNING, 0.6 + 0.3 * ho.share, m);
        felt(f, c);
        fhold(f, &ho);
        fsummary(f,
                 "the %zu pods of %s are nearly idle (GPU util %.1f%%, %.2g running per pod, no "
                 "queue): more GPUs are reserved than the traffic needs",
                 m->npods, m->model, c->s[DS_GPU_UTIL].rmean, stats(d, c->rpp).rmean);
        ev_sig(f, c, DS_GPU_UTIL, dc->gpu_idle_util);
        ev_sig(f, c, DS_RUNNING, NAN);
        ev_sig(f, c, DS_WAITING, 1);
        ev_sig(f, c, DS_FINISHED, NAN);
        f->panel = im_strdup("gpu_vs_wait");
        f->action = fmt("Scale in: lower the replicas (HPA minReplicas) until GPU util reaches "
                        "~50-60%% at the daily peak, serve several small models per GPU, or "
                        "move to smaller GPUs.");
        f->expect = fmt("GPU-hours (cost) fall in proportion; TTFT stays under its target while "
                        "the queue stays empty at the peak.");
        fflag(f, "kubernetes", "replicas", "lower (HPA minReplicas)");
        for (size_t p = 0; p < m->npods; p++) fpod(f, &m->pods[p]);
        falt(f, "host-bound", "no queue: the GPUs are idle because there is little traffic");
        falt(f, "memory-bandwidth-bound", "memory-copy %.0f%% is low too", c->s[DS_MEM_COPY].rmean);
    }
    im_free(mem);
    im_free(over);
}

/* ---- Errors and aborts ---- */

static void failure_causes(const mc_t *c, llm_doctor_report_t *r, bool queue_explained)
{
    const doc_data_t *d = c->d;
    const doc_model_t *m = c->m;
    const cfg_llm_doctor_t *dc = &d->dc;
    cond_t *err = im_calloc(c->n, sizeof *err), *tmo = im_calloc(c->n, sizeof *tmo);
    for (size_t k = 0; k < c->n; k++) {
        double qt = at(m->s[DS_QUEUE_MEAN].v, k);
        bool long_q = !isnan(qt) && qt >= dc->timeout_queue_seconds;
        if (m->errors_mixed) {
            err[k] = isnan(c->aborts[k]) ? -1 : (c->aborts[k] >= d->failure_ratio && !long_q);
        } else {
            err[k] = isnan(c->errs[k]) ? -1 : c->errs[k] >= d->failure_ratio;
        }
        tmo[k] =
            isnan(c->aborts[k]) || isnan(qt) ? -1 : (c->aborts[k] >= dc->abort_ratio && long_q);
    }
    hold_t he = hold_of(d, err), ht = hold_of(d, tmo);
    char t1[32], t2[32];
    if (he.current || he.earlier) {
        st_t s = stats(d, m->errors_mixed ? c->aborts : c->errs);
        llm_doctor_finding_t *f = fnew(r, "engine-errors", LLM_DOCTOR_WARNING,
                                       m->errors_mixed ? 0.5 : 0.6 + 0.4 * he.share, m);
        felt(f, c);
        f->severity = sev_for(c);
        if (f->severity < LLM_DOCTOR_WARNING) f->severity = LLM_DOCTOR_WARNING;
        fhold(f, &he);
        fsummary(f, "%s of the requests to %s fail in the engine%s (threshold %s)",
                 pct(s.rmean, t1, sizeof t1), m->model,
                 m->errors_mixed ? " or are aborted without queueing (the engine counts both)" : "",
                 pct(d->failure_ratio, t2, sizeof t2));
        fev(f, "requests_failed", m->s[m->errors_mixed ? DS_ABORTS : DS_ERRORS].metric,
            m->s[m->errors_mixed ? DS_ABORTS : DS_ERRORS].query, "ratio", s, d->failure_ratio,
            "failed share %s now (max %s)", pct(s.rmean, t1, sizeof t1), pct(s.max, t2, sizeof t2));
        ev_sig(f, c, DS_FINISHED, NAN);
        ev_sig(f, c, DS_QUEUE_MEAN, dc->timeout_queue_seconds);
        f->panel = im_strdup("aborts");
        f->action = fmt("Read the engine logs of these pods for the failing requests: prompts "
                        "over --max-model-len / --context-length (HTTP 400), CUDA or NCCL "
                        "errors (see gpu-fault), out-of-memory on long prompts (lower "
                        "--max-num-batched-tokens / --chunked-prefill-size), bad structured-"
                        "output schemas; restart pods that keep failing.");
        f->expect = fmt("The error share returns under %s; TTFT is unaffected unless retries "
                        "add load.",
                        pct(d->failure_ratio, t1, sizeof t1));
        fflag(f, "vllm", "--max-model-len", "check against the prompts rejected");
        fflag(f, "sglang", "--context-length", "check against the prompts rejected");
        for (size_t p = 0; p < m->npods; p++) fpod(f, &m->pods[p]);
        falt(f, "client-timeouts",
             "mean queue time %.3g s is short (client-timeouts from %g s): requests fail, they "
             "are not given up",
             c->s[DS_QUEUE_MEAN].rmean, dc->timeout_queue_seconds);
    }
    if (ht.current || ht.earlier) {
        st_t s = stats(d, c->aborts);
        llm_doctor_finding_t *f =
            fnew(r, "client-timeouts", LLM_DOCTOR_WARNING, 0.6 + 0.3 * ht.share, m);
        felt(f, c);
        f->severity = sev_for(c);
        if (f->severity < LLM_DOCTOR_WARNING) f->severity = LLM_DOCTOR_WARNING;
        fhold(f, &ht);
        fsummary(f,
                 "%s of the requests to %s are aborted by clients after queueing %.3g s on "
                 "average: users give up before their first token%s",
                 pct(s.rmean, t1, sizeof t1), m->model, c->s[DS_QUEUE_MEAN].rmean,
                 queue_explained ? " (the queue's cause is the finding above)" : "");
        fev(f, "requests_failed", m->s[DS_ABORTS].metric, m->s[DS_ABORTS].query, "ratio", s,
            dc->abort_ratio, "aborted share %s now", pct(s.rmean, t1, sizeof t1));
        ev_sig(f, c, DS_QUEUE_MEAN, dc->timeout_queue_seconds);
        ev_sig(f, c, DS_WAITING, NAN);
        f->panel = im_strdup("aborts");
        f->action = fmt("Shorten the queue (the cause ranked above, if any; else replicas or a "
                        "lower --max-num-seqs so TTFT is predictable), and make clients' "
                        "timeouts and the queue agree: reject early at the gateway (a max queue "
                        "length or time) instead of letting requests wait out the client's "
                        "timeout.");
        f->expect = fmt("Aborts fall with the queue time; the work spent on requests that are "
                        "then abandoned is saved.");
        fflag(f, "kubernetes", "replicas", "add replicas if no other cause explains the queue");
        pods_where(f, c, 0, dc->waiting_per_pod);
        falt(f, "engine-errors", "the failures are client aborts after %.3g s of queueing",
             c->s[DS_QUEUE_MEAN].rmean);
    }
    im_free(err);
    im_free(tmo);
}

/* ---- One replica far from its peers ---- */

static double median(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n == 0 ? NAN : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const double *pod_field(const doc_pod_t *p, int field)
{
    return field == 0 ? p->waiting : field == 1 ? p->kv : field == 3 ? p->ttft_mean : p->itl_mean;
}

static void imbalance_cause(const mc_t *c, llm_doctor_report_t *r)
{
    const doc_data_t *d = c->d;
    const doc_model_t *m = c->m;
    const cfg_llm_doctor_t *dc = &d->dc;
    if (m->npods < 3) return; /* a median of peers needs two of them */
    static const struct {
        int field;
        const char *signal, *what, *unit;
        int ds;
    } kinds[] = {{3, "ttft", "mean TTFT", "seconds", DS_TTFT_MEAN},
                 {4, "itl", "mean inter-token latency", "seconds", DS_ITL_MEAN},
                 {0, "waiting", "requests waiting", "requests", DS_WAITING},
                 {1, "kv_usage", "KV-cache use", "ratio", DS_KV}};
    double floors[] = {d->ttft_target_s / 10, 0, dc->waiting_per_pod, dc->kv_moderate};
    llm_doctor_finding_t *f = NULL;
    double *vals = im_calloc(m->npods, sizeof *vals), *others = im_calloc(m->npods, sizeof *others);
    for (size_t ki = 0; ki < IM_ARRAY_LEN(kinds); ki++) {
        size_t nv = 0;
        for (size_t p = 0; p < m->npods; p++) {
            const doc_pod_t *pp = &m->pods[p];
            const double *v = pod_field(pp, kinds[ki].field);
            vals[p] = stats(d, v).rmean;
            if (!isnan(vals[p])) nv++;
        }
        if (nv < 2) continue;
        for (size_t p = 0; p < m->npods; p++) {
            if (isnan(vals[p]) || vals[p] < floors[ki]) continue;
            size_t no = 0;
            for (size_t q = 0; q < m->npods; q++)
                if (q != p && !isnan(vals[q])) others[no++] = vals[q];
            double med = median(others, no);
            if (isnan(med) || vals[p] < dc->imbalance_factor * IM_MAX(med, 1e-9)) continue;
            if (!f) {
                f = fnew(r, "load-imbalance", LLM_DOCTOR_WARNING, 0.8, m);
                felt(f, c);
                double pod_ttft = stats(d, m->pods[p].ttft_mean).rmean;
                if (!isnan(pod_ttft) && pod_ttft > d->ttft_target_s)
                    f->severity = LLM_DOCTOR_CRITICAL;
                fsummary(f,
                         "pod %s of %s is far from its %zu peers (%s %.3g vs a median of %.3g): "
                         "one slow or overloaded replica, not the fleet",
                         m->pods[p].name, m->model, no, kinds[ki].what, vals[p], med);
                f->since_ms = d->start_ms + (int64_t)(d->nsteps - d->nrecent) * d->step_ms;
                f->panel = im_strdup(kinds[ki].field == 0   ? "waiting"
                                     : kinds[ki].field == 1 ? "kv"
                                     : kinds[ki].field == 4 ? "itl"
                                                            : "ttft");
                f->action = fmt("Look at the outlying pod's node and GPU (gpu-throttle, gpu-fault "
                                "findings, noisy neighbours), drain or restart it, and route by "
                                "load (least outstanding requests or KV-aware: llm-d endpoint "
                                "picker, SGLang router --policy cache_aware) instead of round "
                                "robin.");
                f->expect = fmt("The pod's latency and queue return to its peers'; the users "
                                "routed to it stop seeing the slow tail.");
                fflag(f, "kubernetes", "kubectl drain / delete pod", "move the slow replica");
                fflag(f, "sglang-router", "--policy", "cache_aware or least-load routing");
            }
            fpod(f, &m->pods[p]);
            llm_doctor_evidence_t *e =
                fev(f, kinds[ki].signal, m->s[kinds[ki].ds].metric, m->s[kinds[ki].ds].query,
                    kinds[ki].unit,
                    stats(d, kinds[ki].field == 0   ? m->pods[p].waiting
                             : kinds[ki].field == 1 ? m->pods[p].kv
                                                    : m->pods[p].ttft_mean),
                    dc->imbalance_factor * med,
                    "%s on %s %.3g now, %.1fx the median of its peers (%.3g)", kinds[ki].what,
                    m->pods[p].name, vals[p], vals[p] / IM_MAX(med, 1e-9), med);
            add_str(&e->pods, &e->npods, m->pods[p].name);
        }
    }
    if (f) {
        falt(f, "traffic-surge", "the other replicas are not saturated");
        falt(f, "kv-saturation", "only the outlying pod stands out");
    }
    im_free(vals);
    im_free(others);
}

/* ---- GPU layer ---- */

static void gpu_causes(const doc_data_t *d, llm_doctor_report_t *r)
{
    const cfg_llm_doctor_t *dc = &d->dc;
    /* fault: XID changes, row-remap failures, a GPU that stopped reporting */
    for (size_t i = 0; i < d->ngpus; i++) {
        const doc_gpu_t *gp = &d->gpus[i];
        int64_t when = 0;
        double code = NAN;
        for (size_t k = 1; gp->xid && k < d->nsteps; k++) {
            double a = gp->xid[k - 1], b = gp->xid[k];
            if (!isnan(a) && !isnan(b) && a != b && b != 0) {
                when = d->start_ms + (int64_t)k * d->step_ms;
                code = b;
            }
        }
        /* no change in the window, yet the gauge holds a code: it changed
         * before the window (dcgm-exporter keeps the last XID, never resets) */
        bool xid_before = false;
        if (!when && gp->xid) {
            double first = NAN, last = NAN;
            for (size_t k = 0; k < d->nsteps; k++)
                if (!isnan(gp->xid[k])) {
                    if (isnan(first)) first = gp->xid[k];
                    last = gp->xid[k];
                }
            if (!isnan(last) && last != 0 && first == last) {
                xid_before = true;
                code = last;
            }
        }
        st_t rm = stats(d, gp->remap);
        bool remap = !isnan(rm.rmean) && rm.max > 0;
        bool gone = false;
        if (gp->util) {
            size_t seen_early = 0, seen_late = 0;
            for (size_t k = 0; k < d->nsteps; k++) {
                if (isnan(gp->util[k])) continue;
                if (k < d->nsteps - d->nrecent)
                    seen_early++;
                else
                    seen_late++;
            }
            bool node_alive = false;
            for (size_t j = 0; j < d->ngpus && !node_alive; j++)
                if (j != i && !strcmp(d->gpus[j].node, gp->node) && d->gpus[j].util &&
                    !isnan(d->gpus[j].util[d->nsteps - 1]))
                    node_alive = true;
            gone = seen_early > 0 && seen_late == 0 && node_alive;
        }
        if (!when && !xid_before && !remap && !gone) continue;
        doc_model_t mm;
        memset(&mm, 0, sizeof mm);
        mm.model = (char *)(uintptr_t)(gp->model ? gp->model : "");
        mm.engine = "";
        llm_doctor_finding_t *f =
            fnew(r, "gpu-fault", gp->model ? LLM_DOCTOR_CRITICAL : LLM_DOCTOR_WARNING, 0.9, &mm);
        f->since_ms = when ? when : d->start_ms;
        add_str(&f->pods, &f->npods, gp->pod);
        add_str(&f->nodes, &f->nnodes, gp->node);
        char ts[64] = "";
        if (when) im_time_format_rfc3339(when, ts, sizeof ts);
        if (when)
            fsummary(f, "GPU %s on %s reported XID %.0f at %s%s%s", gp->gpu, gp->node, code, ts,
                     *gp->pod ? " under pod " : "", gp->pod);
        else if (xid_before)
            fsummary(f,
                     "GPU %s on %s holds XID %.0f from before the window (the gauge keeps the "
                     "last code: the fault is in force until the GPU is reset)%s%s",
                     gp->gpu, gp->node, code, *gp->pod ? " under pod " : "", gp->pod);
        else if (remap)
            fsummary(f, "GPU %s on %s has a row-remap failure: its memory is degraded", gp->gpu,
                     gp->node);
        else
            fsummary(f,
                     "GPU %s on %s stopped reporting while the node's other GPUs report "
                     "(fallen off the bus, XID 79?)",
                     gp->gpu, gp->node);
        if (gp->xid)
            fev(f, "gpu_xid", "DCGM_FI_DEV_XID_ERRORS", d->gpu_query[1], "code", stats(d, gp->xid),
                NAN, "last XID code %.0f (the gauge keeps the last code: changes are the events)",
                stats(d, gp->xid).last);
        if (remap)
            fev(f, "gpu_row_remap_failure", "DCGM_FI_DEV_ROW_REMAP_FAILURE", d->gpu_query[2],
                "none", rm, 0, "row-remap failure flag %.0f", rm.max);
        if (gone)
            fev(f, "gpu_util", "DCGM_FI_DEV_GPU_UTIL", d->gpu_query[0], "percent",
                stats(d, gp->util), NAN, "no samples in the last %zu steps", d->nrecent);
        f->panel = im_strdup("sm");
        f->action = fmt("Cordon the node (kubectl cordon %s) and move the pods, then reset the "
                        "GPU (nvidia-smi -r) or reboot; XIDs 48, 63, 64, 79, 94, 95 and row-remap "
                        "failures mean hardware: file an RMA if they recur.",
                        gp->node);
        f->expect = fmt("The pods rescheduled on healthy GPUs serve normally; no new XID on the "
                        "node after the reset.");
        fflag(f, "kubernetes", "kubectl cordon", "take the node out of scheduling");
    }
    /* throttle: time in power/thermal violation */
    for (size_t i = 0; i < d->ngpus; i++) {
        const doc_gpu_t *gp = &d->gpus[i];
        if (!gp->pviol && !gp->tviol) continue;
        cond_t *c = im_calloc(d->nsteps, sizeof *c);
        double *share = doc_nan_series(d->nsteps);
        for (size_t k = 0; k < d->nsteps; k++) {
            double p = at(gp->pviol, k), t = at(gp->tviol, k);
            if (isnan(p) && isnan(t)) {
                c[k] = -1;
                continue;
            }
            double s = (isnan(p) ? 0 : p) + (isnan(t) ? 0 : t);
            share[k] = s / 1e9; /* dcgm-exporter counts nanoseconds */
            c[k] = share[k] >= dc->throttle_share;
        }
        hold_t h = hold_of(d, c);
        if (h.current) {
            st_t pv = stats(d, gp->pviol), tv = stats(d, gp->tviol);
            bool thermal = !isnan(tv.rmean) && (isnan(pv.rmean) || tv.rmean > pv.rmean);
            doc_model_t mm;
            memset(&mm, 0, sizeof mm);
            mm.model = (char *)(uintptr_t)(gp->model ? gp->model : "");
            mm.engine = "";
            st_t ss = stats(d, share);
            llm_doctor_finding_t *f = NULL;
            for (size_t j = 0; j < r->nfindings && !f; j++)
                if (!strcmp(r->findings[j].cause, "gpu-throttle") &&
                    !strcmp(r->findings[j].model, mm.model))
                    f = &r->findings[j];
            if (f) { /* one finding per model: add this GPU to it */
                add_str(&f->pods, &f->npods, gp->pod);
                add_str(&f->nodes, &f->nnodes, gp->node);
                char *sm = fmt("%s; GPU %s on %s too (%.0f%%)", f->summary, gp->gpu, gp->node,
                               100 * ss.rmean);
                im_free(f->summary);
                f->summary = sm;
                im_free(c);
                im_free(share);
                continue;
            }
            f = fnew(r, "gpu-throttle", LLM_DOCTOR_WARNING, 0.6 + 0.3 * h.share, &mm);
            fhold(f, &h);
            add_str(&f->pods, &f->npods, gp->pod);
            add_str(&f->nodes, &f->nnodes, gp->node);
            fsummary(f, "GPU %s on %s spends %.0f%% of the time with %s-capped clocks", gp->gpu,
                     gp->node, 100 * ss.rmean, thermal ? "temperature" : "power");
            fev(f, thermal ? "gpu_thermal_violation" : "gpu_power_violation",
                thermal ? "DCGM_FI_DEV_THERMAL_VIOLATION" : "DCGM_FI_DEV_POWER_VIOLATION",
                d->gpu_query[thermal ? 4 : 3], "ratio", ss, dc->throttle_share,
                "%.0f%% of the time in %s violation now", 100 * ss.rmean,
                thermal ? "thermal" : "power");
            if (gp->clock)
                fev(f, "gpu_sm_clock", "DCGM_FI_DEV_SM_CLOCK", d->gpu_query[5], "MHz",
                    stats(d, gp->clock), NAN, "SM clock %.0f MHz now (max %.0f)",
                    stats(d, gp->clock).rmean, stats(d, gp->clock).max);
            f->panel = im_strdup("power");
            f->action = fmt(thermal ? "Check the node's cooling (fans, airflow, inlet "
                                      "temperature) and spread load off the hot GPU."
                                    : "Check the power cap (nvidia-smi -q -d POWER; raise it "
                                      "with nvidia-smi -pl to the board limit) and the rack's "
                                      "power budget.");
            f->expect = fmt("Clocks stay at their maximum; the pod's latency returns to its "
                            "peers'.");
            fflag(f, "nvidia-smi", thermal ? "-q -d TEMPERATURE" : "-pl",
                  thermal ? "inspect" : "raise to the board limit");
            falt(f, "load-imbalance", "the clocks, not the routing, slow this GPU");
            im_free(c);
            im_free(share);
            continue;
        }
        im_free(c);
        im_free(share);
    }
}

/* ---- Kueue ---- */

static void quota_causes(const doc_data_t *d, llm_doctor_report_t *r)
{
    const cfg_llm_doctor_t *dc = &d->dc;
    for (size_t i = 0; i < d->nqueues; i++) {
        const doc_queue_t *q = &d->queues[i];
        if (!q->pending) continue;
        cond_t *c = im_calloc(d->nsteps, sizeof *c);
        for (size_t k = 0; k < d->nsteps; k++)
            c[k] = isnan(q->pending[k]) ? -1 : q->pending[k] >= dc->quota_pending;
        hold_t h = hold_of(d, c);
        st_t ev = stats(d, q->evicted), pe = stats(d, q->pending);
        bool evicting = !isnan(ev.max) && ev.max > 0;
        if (h.current && (evicting || pe.rmean >= 2 * dc->quota_pending)) {
            llm_doctor_finding_t *f =
                fnew(r, "quota-starved", LLM_DOCTOR_WARNING, evicting ? 0.85 : 0.65, NULL);
            fhold(f, &h);
            fsummary(f,
                     "Kueue ClusterQueue %s keeps %.0f workloads pending%s: its quota is used "
                     "up, so new replicas and jobs wait",
                     q->name, pe.rmean, evicting ? " and evicts admitted ones" : "");
            fev(f, "quota_pending", "kueue_pending_workloads", d->queue_query, "workloads", pe,
                dc->quota_pending, "%.0f pending workloads now (max %.0f)", pe.rmean, pe.max);
            if (evicting)
                fev(f, "quota_evicted", "kueue_evicted_workloads_total", d->evict_query, "1/s", ev,
                    0, "evictions %.3g/min now", 60 * ev.rmean);
            f->panel = im_strdup("quota");
            f->action = fmt("Raise the ClusterQueue's nominalQuota or borrowingLimit for its "
                            "flavor, lend from the cohort (lendingLimit of the others), or give "
                            "the serving workloads a higher WorkloadPriorityClass so they are "
                            "admitted first and not preempted.");
            f->expect = fmt("Pending workloads are admitted; serving replicas stop waiting for "
                            "quota and evictions stop.");
            fflag(f, "kueue",
                  "ClusterQueue.spec.resourceGroups[].flavors[].resources[].nominalQuota", "raise");
            fflag(f, "kueue", "WorkloadPriorityClass", "higher for serving");
            add_str(&f->nodes, &f->nnodes, "");
        }
        im_free(c);
    }
}

/* ---- Scrape health ---- */

static void target_causes(const doc_data_t *d, llm_doctor_report_t *r)
{
    for (size_t i = 0; i < d->ntargets; i++) {
        const doc_target_t *t = &d->targets[i];
        cond_t *c = im_calloc(d->nsteps, sizeof *c);
        for (size_t k = 0; k < d->nsteps; k++) c[k] = isnan(t->up[k]) ? -1 : t->up[k] < 1;
        hold_t h = hold_of(d, c);
        if (h.current) {
            doc_model_t mm;
            memset(&mm, 0, sizeof mm);
            mm.model = (char *)(uintptr_t)(t->model ? t->model : "");
            mm.engine = "";
            llm_doctor_finding_t *f = fnew(r, "target-down", LLM_DOCTOR_WARNING, 0.95, &mm);
            fhold(f, &h);
            add_str(&f->pods, &f->npods, t->pod);
            fsummary(f,
                     "target %s (job %s) cannot be scraped: its signals are missing, and the "
                     "other findings see the fleet without it",
                     t->instance, t->job);
            fev(f, "up", "up", d->up_query, "none", stats(d, t->up), 1, "up %.0f now",
                stats(d, t->up).last);
            f->panel = im_strdup("targets");
            f->action = fmt("Check the target: is the pod running and ready (kubectl describe "
                            "pod), is /metrics served on the scraped port (vLLM serves it on the "
                            "API port; SGLang needs --enable-metrics), and do the scrape "
                            "timeout and network policy allow it.");
            f->expect = fmt("up returns to 1 and the missing signals come back.");
            fflag(f, "sglang", "--enable-metrics", "required for SGLang's /metrics");
        }
        im_free(c);
    }
    /* pods whose serving series stopped while their peers' go on */
    for (size_t mi = 0; mi < d->nmodels; mi++) {
        const doc_model_t *m = &d->models[mi];
        if (m->npods < 2) continue;
        for (size_t p = 0; p < m->npods; p++) {
            const double *v = m->pods[p].running ? m->pods[p].running : m->pods[p].waiting;
            if (!v) continue;
            bool early = false, late = false;
            int64_t last = 0;
            for (size_t k = 0; k < d->nsteps; k++) {
                if (isnan(v[k])) continue;
                if (k < d->nsteps - d->nrecent)
                    early = true;
                else
                    late = true;
                last = d->start_ms + (int64_t)k * d->step_ms;
            }
            bool peers = false;
            for (size_t q = 0; q < m->npods && !peers; q++) {
                const double *w = m->pods[q].running ? m->pods[q].running : m->pods[q].waiting;
                if (q != p && w && !isnan(w[d->nsteps - 1])) peers = true;
            }
            if (!early || late || !peers) continue;
            bool dup = false;
            for (size_t f = 0; f < r->nfindings; f++)
                for (size_t x = 0; x < r->findings[f].npods; x++)
                    if (!strcmp(r->findings[f].cause, "target-down") &&
                        !strcmp(r->findings[f].pods[x], m->pods[p].name))
                        dup = true;
            if (dup) continue;
            llm_doctor_finding_t *f = fnew(r, "target-down", LLM_DOCTOR_WARNING, 0.7, m);
            f->since_ms = last + d->step_ms;
            fpod(f, &m->pods[p]);
            char ts[64];
            im_time_format_rfc3339(last, ts, sizeof ts);
            fsummary(f,
                     "pod %s of %s has no samples since %s while its peers report: it is down "
                     "or no longer scraped",
                     m->pods[p].name, m->model, ts);
            fev(f, "running", m->s[DS_RUNNING].metric, m->s[DS_RUNNING].query, "requests",
                stats(d, v), NAN, "last sample at %s", ts);
            f->panel = im_strdup("running");
            f->action = fmt("Check the pod (kubectl get pod %s; its events and logs) and its "
                            "scrape target; if the pod was replaced, nothing to do.",
                            m->pods[p].name);
            f->expect = fmt("The pod's series resume, or the replacement pod's appear.");
            fflag(f, "kubernetes", "kubectl describe pod", "why it stopped");
        }
    }
}

/* ---- Names ---- */

static void name_causes(const doc_data_t *d, llm_doctor_report_t *r)
{
    if (!d->nrenames) return;
    llm_doctor_finding_t *f = fnew(r, "stale-names", LLM_DOCTOR_WARNING, 0.8, NULL);
    f->since_ms = d->start_ms;
    im_buf_t b;
    im_buf_init(&b, 0);
    for (size_t i = 0; i < d->nrenames; i++) {
        const doc_rename_t *rn = &d->renames[i];
        (void)im_buf_printf(&b, "%s%s%s%s", i ? ", " : "", rn->old_name,
                            *rn->new_name ? " -> " : "", rn->new_name);
        st_t none = {NAN, NAN, NAN, NAN, 0};
        fev(f, "names", rn->old_name, "", "none", none, NAN,
            *rn->new_name ? "%s is gone; the targets now expose %s"
                          : "%s is gone and has no successor%s",
            rn->old_name, rn->new_name);
    }
    fsummary(f,
             "names the targets exposed earlier in the window are gone (%s): dashboards and rules "
             "that use them now show nothing",
             b.data ? b.data : "");
    im_buf_free(&b);
    f->panel = im_strdup("lint");
    f->action = fmt("Run infermon lint on your dashboards and rule files against this store "
                    "(infermon lint --prometheus URL rules.yml dashboard.json; --fix rewrites the "
                    "renamed names), or set llm.vllm_names: both for the built-in rules.");
    f->expect = fmt("Lint lists every query that uses a gone name; after the fix the panels and "
                    "alerts see data again.");
    fflag(f, "infermon", "lint --prometheus URL FILES", "find the stale names");
}

/* ---- Not enough data ---- */

static void nodata(const doc_data_t *d, llm_doctor_report_t *r)
{
    if (d->model_filter) {
        bool found = false;
        for (size_t i = 0; i < d->nmodels; i++)
            if (!strcmp(d->models[i].model, d->model_filter)) found = true;
        if (!found) {
            llm_doctor_finding_t *f = fnew(r, "no-data", LLM_DOCTOR_INFO, 1, NULL);
            im_free(f->model);
            f->model = im_strdup(d->model_filter);
            fsummary(f,
                     "not enough data for model %s: no serving series carry it in the window "
                     "(check the name with infermon doctor without --model)",
                     d->model_filter);
            f->panel = im_strdup("");
            f->action = fmt("Run without --model to list the models the store holds.");
            f->expect = im_strdup("");
            return;
        }
    }
    if (d->nmodels == 0) {
        llm_doctor_finding_t *f = fnew(r, "no-data", LLM_DOCTOR_INFO, 1, NULL);
        fsummary(f,
                 "not enough data: no inference-engine series (vLLM, SGLang, ...) in the window; "
                 "nothing can be diagnosed");
        f->panel = im_strdup("");
        f->action = fmt("Check that the engines are scraped (infermon lint --target URL, the "
                        "targets page) and that the window covers the time of interest (--at, "
                        "--window).");
        f->expect = im_strdup("");
        return;
    }
    for (size_t i = 0; i < d->nmodels; i++) {
        const doc_model_t *m = &d->models[i];
        static const struct {
            int ds;
            const char *sig, *needed;
        } need[] = {
            {DS_KV, "kv_usage", "kv-saturation"},
            {DS_TTFT_P95, "ttft", "the user impact"},
            {DS_GPU_UTIL, "gpu_util", "host-bound, memory-bandwidth-bound, overprovisioned"},
            {DS_DEFERRED, "waiting_by_reason", "deferred-admission"}};
        im_buf_t b;
        im_buf_init(&b, 0);
        for (size_t k = 0; k < IM_ARRAY_LEN(need); k++)
            if (!m->s[need[k].ds].v)
                (void)im_buf_printf(&b, "%s%s (for %s)", b.len ? "; " : "", need[k].sig,
                                    need[k].needed);
        if (b.len) {
            llm_doctor_finding_t *f = fnew(r, "no-data", LLM_DOCTOR_INFO, 1, m);
            fsummary(f, "not enough data for some causes on %s (%s): missing %s", m->model,
                     m->ename, b.data);
            f->panel = im_strdup("");
            f->action = fmt("Scrape dcgm-exporter on the GPU nodes for the GPU signals; the "
                            "engine signals missing here are not exposed by %s (docs/engines.md).",
                            m->ename);
            f->expect = im_strdup("");
            for (size_t p = 0; p < m->npods; p++) fpod(f, &m->pods[p]);
        }
        im_buf_free(&b);
    }
}

/* ---- Run and rank ---- */

void doc_rules_run(const doc_data_t *d, llm_doctor_report_t *r)
{
    for (size_t i = 0; i < d->nmodels; i++) {
        mc_t c;
        mc_init(&c, d, &d->models[i]);
        size_t before = r->nfindings;
        queue_causes(&c, r);
        bool explained = false;
        for (size_t k = before; k < r->nfindings; k++)
            if (r->findings[k].current) explained = true;
        failure_causes(&c, r, explained);
        efficiency_causes(&c, r);
        imbalance_cause(&c, r);
        mc_free(&c);
    }
    gpu_causes(d, r);
    quota_causes(d, r);
    target_causes(d, r);
    name_causes(d, r);
    nodata(d, r);
}

/* Symptoms whose cause is another finding of the same model rank after it. */
static bool is_symptom(const char *cause)
{
    return !strcmp(cause, "client-timeouts");
}

static int cmp_finding(const void *a, const void *b)
{
    const llm_doctor_finding_t *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? 1 : -1;
    int c = strcmp(x->model, y->model);
    return c ? c : strcmp(x->cause, y->cause);
}

void doc_rank(llm_doctor_report_t *r)
{
    for (size_t i = 0; i < r->nfindings; i++) {
        llm_doctor_finding_t *f = &r->findings[i];
        if (!f->current && f->summary && strncmp(f->summary, "resolved", 8)) {
            char *s = fmt("resolved (held earlier in the window): %s", f->summary);
            im_free(f->summary);
            f->summary = s;
        }
        double felt = 0;
        if (!isnan(f->ttft_p95_s) && f->ttft_p95_s > 0) felt += IM_MIN(f->ttft_p95_s, 600) / 600;
        if (!isnan(f->failed_ratio)) felt += IM_MIN(f->failed_ratio, 1);
        /* users feel it (TTFT, failures) > the GPU and quota layers > the rest */
        double layer = isnan(f->ttft_p95_s) && isnan(f->failed_ratio) ? 0 : 1;
        f->score = (double)f->severity * 100 + (f->current ? 20 : 0) + layer * 10 + felt * 4 +
                   f->confidence;
        if (is_symptom(f->cause))
            for (size_t j = 0; j < r->nfindings; j++) {
                const llm_doctor_finding_t *g = &r->findings[j];
                if (j != i && !is_symptom(g->cause) && g->current && g->severity >= f->severity &&
                    !strcmp(g->model, f->model) && !strcmp(g->engine, f->engine) &&
                    strcmp(g->cause, "engine-errors")) {
                    if (f->score >= g->score) f->score = g->score - 0.001;
                }
            }
    }
    if (r->nfindings > 1) qsort(r->findings, r->nfindings, sizeof *r->findings, cmp_finding);
}
