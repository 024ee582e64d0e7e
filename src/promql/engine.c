/* engine.c — the PromQL evaluator's core: query setup and limits, node dispatch,
 * vector selectors with lookback and staleness, range sources (matrix selectors
 * and subqueries with absolute step alignment), offset and @, de-duplication of
 * label sets, and turning the evaluated value into a result (its JSON is
 * result_json.c's).
 *
 * Every node is evaluated for all steps at once (see promql_int.h); answers are
 * those of Prometheus 2.53's step-by-step evaluation. */
#include "util/base.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "labels/regex.h"
#include "storage/fhist.h"
#include "promql/promql_int.h"
#include "util/hash.h"
#include "util/timeutil.h"

struct promql_engine {
    promql_engine_opts_t opts;
};

promql_engine_t *promql_engine_new(const promql_engine_opts_t *opts)
{
    promql_engine_t *e = im_calloc(1, sizeof *e);
    if (opts) e->opts = *opts;
    if (e->opts.lookback_delta_ms <= 0) e->opts.lookback_delta_ms = 5 * IM_MS_PER_MINUTE;
    if (e->opts.max_samples <= 0) e->opts.max_samples = 50000000;
    if (e->opts.timeout_ms <= 0) e->opts.timeout_ms = 2 * IM_MS_PER_MINUTE;
    if (e->opts.default_eval_interval_ms <= 0) e->opts.default_eval_interval_ms = IM_MS_PER_MINUTE;
    if (e->opts.threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        e->opts.threads = n < 1 ? 1 : n > 4 ? 4 : (int)n;
    }
    if (e->opts.parallel_min_work <= 0) e->opts.parallel_min_work = 32768;
    e->opts.lang = promql_lang_resolve(&e->opts.lang);
    return e;
}

void promql_engine_free(promql_engine_t *e)
{
    im_free(e);
}

const promql_engine_opts_t *promql_engine_opts(const promql_engine_t *e)
{
    return &e->opts;
}

const char *promql_error_type(im_rc rc)
{
    switch (rc) {
    case IM_ETIMEOUT: return "timeout";
    case IM_ECANCELED: return "canceled";
    case IM_EINVAL:
    case IM_EPARSE: return "bad_data";
    default: return "execution";
    }
}

/* ---- Limits ---- */

static im_rc too_many_samples(ev_t *ev)
{
    return im_err_set(ev->err, IM_ELIMIT,
                      "query processing would load too many samples into memory in query "
                      "execution");
}

im_rc promql__count(ev_t *ev, int64_t n)
{
    ev->cur_samples += n;
    if (n > 0) ev->total_samples += n;
    if (ev->cur_samples > ev->peak_samples) ev->peak_samples = ev->cur_samples;
    if (n > 0 && ev->cur_samples > ev->max_samples) return too_many_samples(ev);
    return IM_OK;
}

im_rc promql__check(ev_t *ev)
{
    if (ev->over_limit) return IM_ELIMIT;
    if (ev->cancel && __atomic_load_n(ev->cancel, __ATOMIC_RELAXED))
        return promql__fail(ev, IM_ECANCELED);
    if ((ev->check_ctr++ & 63) == 0 && im_mono_ns() > ev->deadline_ns) /* first, every 64th */
        return promql__fail(ev, IM_ETIMEOUT);
    return IM_OK;
}

im_rc promql__check_now(const ev_t *ev)
{
    if (ev->cancel && __atomic_load_n(ev->cancel, __ATOMIC_RELAXED)) return IM_ECANCELED;
    if (im_mono_ns() > ev->deadline_ns) return IM_ETIMEOUT;
    return IM_OK;
}

im_rc promql__fail(ev_t *ev, im_rc rc)
{
    if (rc == IM_ECANCELED)
        return im_err_set(ev->err, rc, "query was canceled in expression evaluation");
    return im_err_set(ev->err, IM_ETIMEOUT, "query timed out in expression evaluation");
}

void promql__warn(ev_t *ev, const char *fmt, ...)
{
    char msg[IM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = strlen(msg);
    /* de-duplicate */
    for (size_t off = 0; off < ev->warnings->len;) {
        const char *w = ev->warnings->data + off;
        size_t wl = strlen(w);
        if (wl == len && memcmp(w, msg, len) == 0) return;
        off += wl + 1;
    }
    if (im_buf_append(ev->warnings, msg, len + 1) != IM_OK) return;
}

/* ---- Values ---- */

void promql__val_init(val_t *v, vkind_t kind)
{
    memset(v, 0, sizeof *v);
    v->kind = kind;
}

void promql__val_free(ev_t *ev, val_t *v)
{
    if (v->kind == VAL_SCALAR) im_free(v->sc);
    for (size_t i = 0; i < v->n; i++) {
        im_labels_unref(v->s[i].labels);
        im_free(v->s[i].v);
    }
    im_free(v->s);
    if (v->counted) promql__count(ev, -v->counted);
    if (v->reserved) promql__count(ev, -v->reserved);
    memset(v, 0, sizeof *v);
}

size_t promql__val_add(ev_t *ev, val_t *v, const im_labels_t *labels)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->s = im_realloc(v->s, v->cap * sizeof *v->s);
    }
    vser_t *s = &v->s[v->n];
    s->labels = labels;
    s->drop_name = false;
    size_t n = ev->nsteps;
    v->reserved += (int64_t)n;
    ev->cur_samples += (int64_t)n;
    if (ev->cur_samples > ev->peak_samples) ev->peak_samples = ev->cur_samples;
    if (ev->cur_samples > ev->max_samples && !ev->over_limit) {
        (void)too_many_samples(ev);
        ev->over_limit = true;
    }
    s->v = im_malloc(n * sizeof(double) + n);
    s->has = (uint8_t *)(s->v + n);
    memset(s->has, 0, n);
    return v->n++;
}

size_t promql__val_adopt(val_t *v, const im_labels_t *labels, double *block, size_t nsteps)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->s = im_realloc(v->s, v->cap * sizeof *v->s);
    }
    vser_t *s = &v->s[v->n];
    s->labels = labels;
    s->drop_name = false;
    s->v = block;
    s->has = (uint8_t *)(block + nsteps);
    return v->n++;
}

im_rc promql__scalar_new(ev_t *ev, val_t *v)
{
    promql__val_init(v, VAL_SCALAR);
    v->sc = im_malloc(ev->nsteps * sizeof(double));
    return IM_OK;
}

/* Counts the points of a finished vector value against the limit, in place of
 * the slots reserved while it was built. */
static im_rc count_val(ev_t *ev, val_t *v)
{
    if (v->reserved) {
        promql__count(ev, -v->reserved);
        v->reserved = 0;
    }
    int64_t pts = 0;
    for (size_t i = 0; i < v->n; i++)
        for (size_t k = 0; k < ev->nsteps; k++) pts += v->s[i].has[k];
    v->counted += pts;
    return promql__count(ev, pts);
}

void promql__lb_del_name(const ev_t *ev, im_labels_builder_t *b)
{
    im_lb_del(b, IM_METRIC_NAME);
    if (ev->type_and_unit) {
        im_lb_del(b, "__type__");
        im_lb_del(b, "__unit__");
    }
}

const im_labels_t *promql__drop_name(ev_t *ev, const im_labels_t *ls)
{
    if (!ev->type_and_unit) return im_labels_without(ls, ev->name_istr);
    if (!im_labels_get_istr(ls, ev->name_istr) && !im_labels_get(ls, "__type__") &&
        !im_labels_get(ls, "__unit__"))
        return im_labels_ref(ls);
    im_labels_builder_t b;
    im_lb_init(&b);
    im_lb_load(&b, ls);
    promql__lb_del_name(ev, &b);
    const im_labels_t *r = im_lb_build(&b);
    im_lb_free(&b);
    return r;
}

size_t promql__val_add_named(ev_t *ev, val_t *v, const im_labels_t *ls, bool drop, bool in_mark)
{
    if (!ev->delayed_name) {
        return promql__val_add(ev, v, drop ? promql__drop_name(ev, ls) : im_labels_ref(ls));
    }
    size_t idx = promql__val_add(ev, v, im_labels_ref(ls));
    v->s[idx].drop_name = drop || in_mark;
    return idx;
}

void promql__vser_drop_name(ev_t *ev, vser_t *s)
{
    if (ev->delayed_name) {
        s->drop_name = true;
        return;
    }
    const im_labels_t *nl = promql__drop_name(ev, s->labels);
    im_labels_unref(s->labels);
    s->labels = nl;
}

im_rc promql__finish_names(ev_t *ev, val_t *v)
{
    if (!ev->delayed_name || v->kind != VAL_VECTOR) return IM_OK;
    bool any = false;
    for (size_t i = 0; i < v->n; i++) {
        vser_t *s = &v->s[i];
        if (!s->drop_name) continue;
        const im_labels_t *nl = promql__drop_name(ev, s->labels);
        im_labels_unref(s->labels);
        s->labels = nl;
        s->drop_name = false;
        any = true;
    }
    return any ? promql__dedup(ev, v) : IM_OK;
}

void promql__compact(ev_t *ev, val_t *v)
{
    size_t w = 0;
    for (size_t i = 0; i < v->n; i++) {
        vser_t *s = &v->s[i];
        bool any = false;
        for (size_t k = 0; k < ev->nsteps && !any; k++) any = s->has[k];
        if (!any) {
            im_labels_unref(s->labels);
            im_free(s->v);
            continue;
        }
        v->s[w++] = *s;
    }
    v->n = w;
}

/* ---- u64 map ---- */

void promql__map_init(u64map_t *m, size_t hint)
{
    size_t cap = 16;
    while (cap < hint * 2) cap *= 2;
    m->cap = cap;
    m->n = 0;
    m->k = im_malloc(cap * sizeof *m->k);
    m->v = im_calloc(cap, sizeof *m->v);
}

void promql__map_free(u64map_t *m)
{
    im_free(m->k);
    im_free(m->v);
    memset(m, 0, sizeof *m);
}

static void map_grow(u64map_t *m)
{
    u64map_t n;
    promql__map_init(&n, m->cap);
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->v[i]) continue;
        size_t h = (size_t)(m->k[i] * 0x9e3779b97f4a7c15ULL >> 20) & (n.cap - 1);
        while (n.v[h]) h = (h + 1) & (n.cap - 1);
        n.k[h] = m->k[i];
        n.v[h] = m->v[i];
        n.n++;
    }
    promql__map_free(m);
    *m = n;
}

uint32_t *promql__map_slot(u64map_t *m, uint64_t k)
{
    if ((m->n + 1) * 2 > m->cap) map_grow(m);
    size_t h = (size_t)(k * 0x9e3779b97f4a7c15ULL >> 20) & (m->cap - 1);
    while (m->v[h]) {
        if (m->k[h] == k) return &m->v[h];
        h = (h + 1) & (m->cap - 1);
    }
    m->k[h] = k;
    m->n++;
    return &m->v[h];
}

uint32_t promql__map_get(const u64map_t *m, uint64_t k)
{
    size_t h = (size_t)(k * 0x9e3779b97f4a7c15ULL >> 20) & (m->cap - 1);
    while (m->v[h]) {
        if (m->k[h] == k) return m->v[h];
        h = (h + 1) & (m->cap - 1);
    }
    return 0;
}

im_rc promql__dedup(ev_t *ev, val_t *v)
{
    if (v->n < 2) {
        promql__compact(ev, v);
        return IM_OK;
    }
    u64map_t m;
    promql__map_init(&m, v->n);
    size_t w = 0;
    im_rc rc = IM_OK;
    for (size_t i = 0; i < v->n; i++) {
        vser_t *s = &v->s[i];
        uint32_t *slot = promql__map_slot(&m, s->labels->hash);
        if (*slot) {
            vser_t *d = &v->s[*slot - 1];
            for (size_t k = 0; k < ev->nsteps; k++) {
                if (!s->has[k]) continue;
                if (d->has[k] && rc == IM_OK)
                    rc = im_err_set(ev->err, IM_EEXEC,
                                    "vector cannot contain metrics with the same labelset");
                d->has[k] = 1;
                d->v[k] = s->v[k];
            }
            d->drop_name |= s->drop_name;
            im_labels_unref(s->labels);
            im_free(s->v);
            continue;
        }
        *slot = (uint32_t)(w + 1);
        v->s[w++] = *s;
    }
    v->n = w;
    promql__map_free(&m);
    if (rc == IM_OK) promql__compact(ev, v);
    return rc;
}

/* ---- Vector selectors ---- */

static void iter_close(storage_iter_t *it)
{
    it->vt->free(it);
}

static void set_close(storage_series_set_t *set)
{
    set->vt->free(set);
}

static uint64_t matcher_errors(const promql_vector_selector_t *vs)
{
    uint64_t n = 0;
    for (size_t i = 0; i < vs->nmatchers; i++) n += im_matcher_errors(vs->matchers[i]);
    return n;
}

/* The backend's select, failing when a regex matcher exceeded the regex limit while
 * selecting (labels/regex.h): its "not selected" answer would make a wrong result. */
static im_rc select_series(ev_t *ev, int64_t mint, int64_t maxt, const promql_vector_selector_t *vs,
                           const storage_select_hints_t *hints, storage_series_set_t **out)
{
    uint64_t before = matcher_errors(vs);
    im_rc rc =
        ev->q->vt->select(ev->q, mint, maxt, vs->matchers, vs->nmatchers, hints, out, ev->err);
    if (rc != IM_OK || matcher_errors(vs) == before) return rc;
    set_close(*out);
    *out = NULL;
    im_buf_t b;
    im_buf_init(&b, 0);
    for (size_t i = 0; i < vs->nmatchers && b.len == 0; i++)
        if (im_matcher_errors(vs->matchers[i])) (void)im_matcher_format(vs->matchers[i], &b);
    im_regex_limits_t l = im_regex_get_limits();
    rc = im_err_set(ev->err, IM_EEXEC,
                    "regex match limit exceeded in matcher {%.*s}: a label value needs more than "
                    "%u backtracking steps and more DFA states than the fallback allows; raise "
                    "--regex.match-limit",
                    (int)IM_MIN(b.len, (size_t)200), b.data ? b.data : "", l.match_limit);
    im_buf_free(&b);
    return rc;
}

/* Reads every remaining sample of it into (*pt, *pv) (capacity *pcap, grown as
 * needed) from index 0 and returns how many: one call per batch through the
 * optional bulk read, else next/at per sample. */
static size_t iter_read_all(storage_iter_t *it, int64_t **pt, double **pv, size_t *pcap)
{
    size_t n = 0;
    for (;;) {
        if (n == *pcap) {
            size_t cap = *pcap ? *pcap * 2 : 256;
            *pt = im_realloc(*pt, cap * sizeof **pt);
            *pv = im_realloc(*pv, cap * sizeof **pv);
            *pcap = cap;
        }
        if (it->vt->read) {
            size_t got = it->vt->read(it, *pt + n, *pv + n, *pcap - n);
            assert(got <= *pcap - n); /* storage.h: up to max */
            if (got == 0) break;
            n += got;
        } else {
            if (!it->vt->next(it)) break;
            it->vt->at(it, *pt + n, *pv + n);
            n++;
        }
    }
    return n;
}

/* All of series si's samples into (*pt, *pv) from index 0: through the backend's
 * read_series when it has one, else an iterator. */
static size_t series_read_all(storage_series_set_t *set, size_t si, int64_t **pt, double **pv,
                              size_t *pcap)
{
    if (set->vt->read_series) return set->vt->read_series(set, si, pt, pv, pcap);
    storage_iter_t *it = set->vt->iter(set, si);
    size_t n = iter_read_all(it, pt, pv, pcap);
    iter_close(it);
    return n;
}

static int64_t at_time(const ev_t *ev, promql_at_kind_t at, int64_t at_ms)
{
    switch (at) {
    case PROMQL_AT_TIMESTAMP: return at_ms;
    case PROMQL_AT_START: return ev->qstart;
    case PROMQL_AT_END: return ev->qend;
    default: return 0;
    }
}

/* Evaluates a vector selector; with want_ts the values are the samples'
 * timestamps in seconds (for timestamp()). */
/* `x smoothed` at time ref: samples [0, j) are at or before ref, the last of
 * them (*v) within the lookback. Interpolated linearly towards the first
 * sample after ref when there is one within a lookback (not a staleness
 * marker, both floats); else the last value as it is. */
static void smooth(const ev_t *ev, const int64_t *t, const double *v, size_t n, size_t j,
                   int64_t ref, double *out)
{
    if (j >= n || t[j - 1] == ref || t[j] > ts_add(ref, ev->lookback)) return;
    if (storage_is_stale(v[j]) || storage_fh_is_box(v[j]) || storage_fh_is_box(v[j - 1])) return;
    double f = (double)(ref - t[j - 1]) / (double)(t[j] - t[j - 1]);
    *out = v[j - 1] + (v[j] - v[j - 1]) * f;
}

static im_rc eval_vector_selector(ev_t *ev, const promql_vector_selector_t *vs, bool want_ts,
                                  val_t *out, bool want_hists)
{
    promql__val_init(out, VAL_VECTOR);
    bool fixed = vs->at != PROMQL_AT_NONE;
    int64_t fixed_t = fixed ? at_time(ev, vs->at, vs->at_ms) : 0;
    int64_t offset = promql__dur(ev, vs->offset_ms, vs->offset_expr);
    int64_t first = ts_sub(fixed ? fixed_t : ev->start, offset);
    int64_t last = ts_sub(fixed ? fixed_t : ev_ts(ev, ev->nsteps - 1), offset);
    storage_series_set_t *set = NULL;
    storage_select_hints_t hints = {.step_ms = ev->step};
    /* smoothed: also the first sample after each step, within a lookback */
    im_rc rc = select_series(ev, ts_sub(first, ev->lookback),
                             vs->smoothed ? ts_add(last, ev->lookback) : last, vs, &hints, &set);
    if (rc != IM_OK) return rc;
    size_t nsteps = ev->nsteps;
    size_t eff_steps = fixed ? 1 : nsteps;
    int64_t *bt = NULL;
    double *bv = NULL;
    size_t bcap = 0;
    for (size_t si = 0; si < set->n; si++) {
        if ((rc = promql__check(ev)) != IM_OK) break;
        size_t n = series_read_all(set, si, &bt, &bv, &bcap);
        n = promql__nh_fix(ev->nh, set->hist_boxes, want_hists || want_ts, bt, bv, n);
        size_t idx = promql__val_add(ev, out, im_labels_ref(set->series[si].labels));
        vser_t *s = &out->s[idx];
        size_t j = 0;              /* samples [0, j) are at or before the step's time */
        size_t npts = 0, used = 0; /* used: j of the last step with a point */
        for (size_t k = 0; k < eff_steps; k++) {
            if ((k & 4095) == 4095 && (rc = promql__check(ev)) != IM_OK) break;
            int64_t ref = ts_sub(fixed ? fixed_t : ev_ts(ev, k), offset);
            while (j < n && bt[j] <= ref) j++;
            if (j > 0 && bt[j - 1] >= ts_add(ts_sub(ref, ev->lookback), ev->left_open) &&
                !storage_is_stale(bv[j - 1])) {
                s->has[k] = 1;
                s->v[k] = want_ts ? (double)bt[j - 1] / 1000.0 : bv[j - 1];
                if (vs->smoothed && !want_ts) smooth(ev, bt, bv, n, j, ref, &s->v[k]);
                if (j == used && !want_ts) s->v[k] = promql__nh_repeat(ev, s->v[k]);
                used = j;
                npts++;
            }
        }
        if (rc != IM_OK) break;
        if (fixed && nsteps > 1) {
            for (size_t k = 1; k < nsteps; k++) {
                s->has[k] = s->has[0];
                s->v[k] = s->v[0];
            }
            npts *= nsteps;
        }
        /* a selector counts its points, series by series, as Prometheus */
        out->reserved -= (int64_t)nsteps;
        promql__count(ev, -(int64_t)nsteps);
        ev->total_samples += (int64_t)npts;
        out->counted += (int64_t)npts;
        if ((rc = promql__count(ev, (int64_t)npts)) != IM_OK) break;
        if (npts == 0) {
            im_labels_unref(s->labels);
            im_free(s->v);
            out->n--;
        }
    }
    im_free(bt);
    im_free(bv);
    set_close(set);
    return rc;
}

/* ---- Range sources ---- */

struct rsrc {
    bool subquery;
    int64_t range, offset;
    bool fixed;
    int64_t fixed_t;
    /* matrix selector */
    storage_series_set_t *set;
    size_t next;
    bool cur_marked; /* the last series returned has its name marked dropped */
    /* subquery: the inner evaluation */
    val_t inner;
    int64_t istart, istep;
    size_t insteps;
    int64_t counted; /* samples of the current series counted against the limit */
    bool want_hists; /* histograms kept (else dropped) */
    promql_nh_t *nh;
    promql_range_ext_t ext; /* anchored/smoothed: samples up to a lookback outside too */
};

static void ensure_rbuf(ev_t *ev, size_t n)
{
    if (n <= ev->rcap) return;
    size_t cap = ev->rcap ? ev->rcap : 256;
    while (cap < n) cap *= 2;
    ev->rt = im_realloc(ev->rt, cap * sizeof *ev->rt);
    ev->rv = im_realloc(ev->rv, cap * sizeof *ev->rv);
    ev->rcap = cap;
}

static im_rc eval_subquery_inner(ev_t *ev, const promql_subquery_t *sq, rsrc_t *r)
{
    int64_t step = promql__dur(ev, sq->step_ms, sq->step_expr);
    if (step <= 0) step = ev->eng->opts.default_eval_interval_ms;
    int64_t s0 = ts_sub(ts_sub(r->fixed ? r->fixed_t : ev->start, r->offset), r->range);
    int64_t e0 = ts_sub(r->fixed ? r->fixed_t : ev_ts(ev, ev->nsteps - 1), r->offset);
    int64_t istart = step * (s0 / step);
    if (istart < s0) istart = ts_add(istart, step);
    ev_t child = *ev;
    child.start = istart;
    child.step = step;
    child.end = e0;
    child.rt = NULL;
    child.rv = NULL;
    child.rcap = 0;
    r->istart = istart;
    r->istep = step;
    im_rc rc;
    if (e0 < istart) {
        r->insteps = 0;
        promql__val_init(&r->inner, VAL_VECTOR);
        return IM_OK;
    }
    /* Far-apart ends (times near the int64 limits) would make a step array
     * no query could fill: refuse as the sample limit does. */
    uint64_t span = ((uint64_t)e0 - (uint64_t)istart) / (uint64_t)step;
    if (span >= (uint64_t)ev->max_samples) return too_many_samples(ev);
    child.nsteps = (size_t)span + 1;
    r->insteps = child.nsteps;
    child.want_hists = r->want_hists;
    rc = promql__eval(&child, sq->expr, &r->inner);
    im_free(child.rt);
    im_free(child.rv);
    ev->cur_samples = child.cur_samples;
    ev->peak_samples = IM_MAX(ev->peak_samples, child.peak_samples);
    ev->total_samples = child.total_samples;
    ev->check_ctr = child.check_ctr;
    ev->over_limit |= child.over_limit;
    if (rc != IM_OK) return rc;
    if (r->inner.kind == VAL_SCALAR) {
        /* A scalar subquery (e.g. time()[5m:1m]) behaves as one series without
         * labels. */
        val_t v;
        promql__val_init(&v, VAL_VECTOR);
        size_t nsteps_save = ev->nsteps;
        ev->nsteps = child.nsteps;
        size_t i = promql__val_add(ev, &v, im_labels_empty());
        for (size_t k = 0; k < child.nsteps; k++) {
            v.s[i].v[k] = r->inner.sc[k];
            v.s[i].has[k] = 1;
        }
        ev->nsteps = nsteps_save;
        promql__val_free(ev, &r->inner);
        r->inner = v;
    }
    return IM_OK;
}

im_rc promql__rsrc_open(ev_t *ev, const promql_expr_t *e, rsrc_t **out)
{
    while (e->kind == PROMQL_NODE_PAREN) e = e->u.paren.expr;
    rsrc_t *r = im_calloc(1, sizeof *r);
    im_rc rc = IM_OK;
    r->want_hists = ev->want_hists || (ev->want_expr && ev->want_expr == e);
    if (ev->want_expr == e) ev->want_expr = NULL;
    r->nh = ev->nh;
    ev->want_hists = false;
    if (e->kind == PROMQL_NODE_MATRIX_SELECTOR) {
        const promql_vector_selector_t *vs = &e->u.ms.vs->u.vs;
        r->range = promql__dur(ev, e->u.ms.range_ms, e->u.ms.range_expr);
        r->offset = promql__dur(ev, vs->offset_ms, vs->offset_expr);
        r->fixed = vs->at != PROMQL_AT_NONE;
        r->fixed_t = r->fixed ? at_time(ev, vs->at, vs->at_ms) : 0;
        int64_t first = ts_sub(ts_sub(r->fixed ? r->fixed_t : ev->start, r->offset), r->range);
        int64_t last = ts_sub(r->fixed ? r->fixed_t : ev_ts(ev, ev->nsteps - 1), r->offset);
        r->ext = e->u.ms.ext;
        if (r->ext != PROMQL_RANGE_PLAIN) first = ts_sub(first, ev->lookback);
        if (r->ext == PROMQL_RANGE_SMOOTHED) last = ts_add(last, ev->lookback);
        storage_select_hints_t hints = {.step_ms = ev->step};
        rc = select_series(ev, first, last, vs, &hints, &r->set);
    } else if (e->kind == PROMQL_NODE_SUBQUERY) {
        const promql_subquery_t *sq = &e->u.sq;
        r->subquery = true;
        r->range = promql__dur(ev, sq->range_ms, sq->range_expr);
        r->offset = promql__dur(ev, sq->offset_ms, sq->offset_expr);
        r->fixed = sq->at != PROMQL_AT_NONE;
        r->fixed_t = r->fixed ? at_time(ev, sq->at, sq->at_ms) : 0;
        rc = eval_subquery_inner(ev, sq, r);
    } else {
        rc = im_err_set(ev->err, IM_EEXEC, "expected a range vector");
    }
    if (rc != IM_OK) {
        promql__rsrc_close(ev, r);
        return rc;
    }
    *out = r;
    return IM_OK;
}

int promql__rsrc_next(ev_t *ev, rsrc_t *r, const im_labels_t **labels, size_t *n)
{
    if (r->counted) {
        promql__count(ev, -r->counted);
        r->counted = 0;
    }
    im_rc rc = promql__check(ev);
    if (rc != IM_OK) return rc;
    if (!r->subquery) {
        if (r->next >= r->set->n) return 0;
        size_t si = r->next++;
        *n = promql__rsrc_read(r, si, &ev->rt, &ev->rv, &ev->rcap);
        *labels = r->set->series[si].labels;
    } else {
        if (r->next >= r->inner.n) return 0;
        vser_t *s = &r->inner.s[r->next++];
        ensure_rbuf(ev, r->insteps + 1);
        size_t cnt = 0;
        for (size_t k = 0; k < r->insteps; k++) {
            if (!s->has[k]) continue;
            ev->rt[cnt] = r->istart + (int64_t)k * r->istep;
            ev->rv[cnt] = s->v[k];
            cnt++;
        }
        *labels = s->labels;
        r->cur_marked = s->drop_name;
        *n = cnt;
    }
    r->counted = (int64_t)*n;
    if ((rc = promql__count(ev, r->counted)) != IM_OK) return rc;
    return 1;
}

bool promql__rsrc_marked(const rsrc_t *r)
{
    return r->cur_marked;
}

size_t promql__rsrc_par_series(rsrc_t *r)
{
    if (r->subquery || !r->set || !r->set->concurrent_iter) return 0;
    if (r->want_hists && r->set->hist_boxes) return 0; /* one arena */
    return r->set->n;
}

size_t promql__rsrc_nseries(rsrc_t *r)
{
    return r->subquery || !r->set ? 0 : r->set->n;
}

size_t promql__rsrc_read(rsrc_t *r, size_t si, int64_t **pt, double **pv, size_t *pcap)
{
    size_t all = series_read_all(r->set, si, pt, pv, pcap);
    all = promql__nh_fix(r->nh, r->set->hist_boxes, r->want_hists, *pt, *pv, all);
    int64_t *t = *pt;
    double *v = *pv;
    size_t cnt = 0; /* stale markers dropped in place */
    while (cnt < all && !storage_is_stale(v[cnt])) cnt++;
    for (size_t k = cnt; k < all; k++) {
        if (storage_is_stale(v[k])) continue;
        t[cnt] = t[k];
        v[cnt] = v[k];
        cnt++;
    }
    return cnt;
}

const im_labels_t *promql__rsrc_labels(rsrc_t *r, size_t si)
{
    return r->set->series[si].labels;
}

void promql__rsrc_close(ev_t *ev, rsrc_t *r)
{
    if (!r) return;
    if (r->counted) promql__count(ev, -r->counted);
    if (r->set) set_close(r->set);
    if (r->subquery) {
        size_t save = ev->nsteps;
        promql__val_free(ev, &r->inner);
        ev->nsteps = save;
    }
    im_free(r);
}

void promql__rsrc_window(ev_t *ev, rsrc_t *r, size_t i, int64_t *lo, int64_t *hi)
{
    int64_t t = r->fixed ? r->fixed_t : ev_ts(ev, i);
    *hi = ts_sub(t, r->offset);
    *lo = ts_sub(*hi, r->range);
}

promql_range_ext_t promql__rsrc_ext(const rsrc_t *r)
{
    return r->ext;
}

int64_t promql__rsrc_time(ev_t *ev, rsrc_t *r, size_t i)
{
    return r->fixed ? r->fixed_t : ev_ts(ev, i);
}

int64_t promql__rsrc_range(rsrc_t *r)
{
    return r->range;
}

bool promql__rsrc_fixed(rsrc_t *r)
{
    return r->fixed;
}

/* ---- Dispatch ---- */

static im_rc eval_unary(ev_t *ev, const promql_expr_t *e, val_t *out)
{
    im_rc rc = promql__eval(ev, e->u.unary.expr, out);
    if (rc != IM_OK || e->u.unary.op == PROMQL_UNARY_PLUS) return rc;
    if (out->kind == VAL_SCALAR) {
        for (size_t k = 0; k < ev->nsteps; k++) out->sc[k] = -out->sc[k];
        return IM_OK;
    }
    for (size_t i = 0; i < out->n; i++) {
        vser_t *s = &out->s[i];
        for (size_t k = 0; k < ev->nsteps; k++) s->v[k] = -s->v[k];
        promql__vser_drop_name(ev, s);
    }
    rc = promql__dedup(ev, out);
    if (rc != IM_OK) promql__val_free(ev, out);
    return rc;
}

im_rc promql__eval(ev_t *ev, const promql_expr_t *e, val_t *out)
{
    promql__val_init(out, VAL_VECTOR); /* freeable whatever happens below */
    bool want = ev->want_hists || (ev->want_expr && ev->want_expr == e);
    ev->want_hists = false;
    if (ev->want_expr == e) ev->want_expr = NULL;
    im_rc rc = promql__check(ev);
    if (rc != IM_OK) return rc;
    switch (e->kind) {
    case PROMQL_NODE_NUMBER:
        promql__scalar_new(ev, out);
        for (size_t k = 0; k < ev->nsteps; k++) out->sc[k] = e->u.number.value;
        return IM_OK;
    case PROMQL_NODE_STRING:
        promql__val_init(out, VAL_STRING);
        out->str = e->u.string.s;
        out->slen = e->u.string.len;
        return IM_OK;
    case PROMQL_NODE_PAREN: ev->want_hists = want; return promql__eval(ev, e->u.paren.expr, out);
    case PROMQL_NODE_STEP_INVARIANT:
        ev->want_hists = want;
        return promql__eval(ev, e->u.si.expr, out);
    case PROMQL_NODE_UNARY: return eval_unary(ev, e, out);
    case PROMQL_NODE_VECTOR_SELECTOR:
        rc = eval_vector_selector(ev, &e->u.vs, false, out, want);
        if (rc != IM_OK) promql__val_free(ev, out);
        return rc;
    case PROMQL_NODE_CALL:
    case PROMQL_NODE_AGGREGATE:
    case PROMQL_NODE_BINARY:
        rc = promql__nh_node(ev, e, out);
        if (rc == IM_OK && !want && ev->nh->seen) promql__nh_strip(ev, out);
        break;
    case PROMQL_NODE_MATRIX_SELECTOR:
    case PROMQL_NODE_SUBQUERY:
        return im_err_set(ev->err, IM_EEXEC, "unexpected range vector in an instant context");
    default: return im_err_set(ev->err, IM_EEXEC, "unknown expression node %d", (int)e->kind);
    }
    if (rc == IM_OK && ev->over_limit) rc = IM_ELIMIT;
    if (rc == IM_OK && out->kind == VAL_VECTOR) rc = count_val(ev, out);
    if (rc != IM_OK) promql__val_free(ev, out);
    return rc;
}

im_rc promql__eval_timestamp_selector(ev_t *ev, const promql_expr_t *e, val_t *out);
im_rc promql__eval_timestamp_selector(ev_t *ev, const promql_expr_t *e, val_t *out)
{
    return eval_vector_selector(ev, &e->u.vs, true, out, false);
}

/* ---- Results ---- */

void promql_result_free(promql_result_t *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nseries; i++) im_labels_unref(r->series[i].labels);
    if (r->arena.head) im_arena_free(&r->arena);
    memset(r, 0, sizeof *r);
}

static void *ralloc(promql_result_t *r, size_t n)
{
    void *p = im_arena_alloc(&r->arena, n ? n : 1);
    if (!p) im_oom(n);
    return p;
}

static int cmp_series(const void *a, const void *b)
{
    return im_labels_compare(((const promql_series_t *)a)->labels,
                             ((const promql_series_t *)b)->labels);
}

/* A result value: a histogram copied into the result's arena. */
static double res_val(promql_result_t *r, double v)
{
    const storage_fh_t *h = storage_fh_unbox(v);
    if (!h) return v;
    return storage_fh_box(storage_fh_copy_to(ralloc(r, storage_fh_bytes(h)), h));
}

/* Top-level range vector of an instant query: raw samples of each window. */
static im_rc eval_top_matrix(ev_t *ev, const promql_expr_t *e, promql_result_t *res)
{
    rsrc_t *r;
    ev->want_hists = true;
    im_rc rc = promql__rsrc_open(ev, e, &r);
    if (rc != IM_OK) return rc;
    res->type = PROMQL_RESULT_MATRIX;
    size_t cap = 0;
    const im_labels_t *ls;
    size_t n;
    int got;
    int64_t lo, hi;
    promql__rsrc_window(ev, r, 0, &lo, &hi);
    while ((got = promql__rsrc_next(ev, r, &ls, &n)) == 1) {
        size_t a = 0;
        while (a < n && ev->rt[a] < ts_add(lo, ev->left_open)) a++;
        size_t b = a;
        while (b < n && ev->rt[b] <= hi) b++;
        if (b == a) continue;
        if (res->nseries == cap) {
            cap = cap ? cap * 2 : 16;
            promql_series_t *ns = ralloc(res, cap * sizeof *ns);
            if (res->nseries) memcpy(ns, res->series, res->nseries * sizeof *ns);
            res->series = ns;
        }
        promql_series_t *s = &res->series[res->nseries++];
        s->labels = promql__rsrc_marked(r) ? promql__drop_name(ev, ls) : im_labels_ref(ls);
        s->npoints = b - a;
        s->points = ralloc(res, s->npoints * sizeof *s->points);
        for (size_t k = a; k < b; k++)
            s->points[k - a] = (promql_point_t){ev->rt[k], res_val(res, ev->rv[k])};
    }
    promql__rsrc_close(ev, r);
    if (got < 0) return (im_rc)got;
    if (res->nseries > 1) qsort(res->series, res->nseries, sizeof *res->series, cmp_series);
    return IM_OK;
}

static void finish_warnings(ev_t *ev, promql_result_t *res)
{
    size_t n = 0;
    for (size_t off = 0; off < ev->warnings->len; off += strlen(ev->warnings->data + off) + 1) n++;
    if (!n) return;
    res->warnings = ralloc(res, n * sizeof *res->warnings);
    size_t i = 0;
    for (size_t off = 0; off < ev->warnings->len;) {
        size_t l = strlen(ev->warnings->data + off);
        char *w = ralloc(res, l + 1);
        memcpy(w, ev->warnings->data + off, l + 1);
        res->warnings[i++] = w;
        off += l + 1;
    }
    res->nwarnings = n;
}

im_rc promql_eval(const promql_engine_t *eng, storage_queryable_t *q, const promql_expr_t *expr,
                  const promql_query_params_t *p, promql_result_t *res, im_err_t *err)
{
    memset(res, 0, sizeof *res);
    im_arena_init(&res->arena, 16 * 1024, 0);
    if (!p->instant) {
        if (p->step_ms <= 0)
            return im_err_set(err, IM_EINVAL,
                              "zero or negative query resolution step widths are not accepted. "
                              "Try a positive integer");
        if (p->end_ms < p->start_ms)
            return im_err_set(err, IM_EINVAL, "end timestamp must not be before start time");
        promql_value_type_t t = promql_expr_type(expr);
        if (t != PROMQL_TYPE_SCALAR && t != PROMQL_TYPE_VECTOR)
            return im_err_set(err, IM_EINVAL,
                              "invalid expression type \"%s\" for range query, must be Scalar or "
                              "instant Vector",
                              promql_value_type_str(t));
    }
    ev_t ev;
    memset(&ev, 0, sizeof ev);
    im_buf_t warnings;
    im_buf_init(&warnings, 1 << 20);
    ev.eng = eng;
    ev.q = q;
    ev.start = p->start_ms;
    ev.end = p->instant ? p->start_ms : p->end_ms;
    ev.step = p->instant ? 1 : p->step_ms;
    if (!p->instant) {
        /* end >= start, so the unsigned difference is exact even for ends near
         * the int64 limits; a step count no sample limit allows is refused before
         * anything is sized by it. */
        uint64_t span = ((uint64_t)ev.end - (uint64_t)ev.start) / (uint64_t)ev.step;
        if (span >= (uint64_t)eng->opts.max_samples) {
            ev.err = err;
            im_buf_free(&warnings);
            return too_many_samples(&ev);
        }
        ev.nsteps = (size_t)span + 1;
    } else {
        ev.nsteps = 1;
    }
    ev.qstart = ev.start;
    ev.qend = ev.end;
    ev.qstep = p->instant ? 0 : p->step_ms;
    ev.lookback = eng->opts.lookback_delta_ms;
    ev.compat = eng->opts.lang.compat;
    ev.type_and_unit = ev.compat >= 3 && eng->opts.lang.type_and_unit_labels;
    ev.delayed_name = ev.compat >= 3 && eng->opts.lang.delayed_name_removal;
    ev.left_open = ev.compat >= 3 ? 1 : 0;
    ev.max_samples = eng->opts.max_samples;
    int64_t now_ns = im_mono_ns(); /* a timeout of 292 years or more never expires */
    ev.deadline_ns = eng->opts.timeout_ms > (INT64_MAX - now_ns) / 1000000
                         ? INT64_MAX
                         : now_ns + eng->opts.timeout_ms * 1000000;
    if (p->deadline_ns > 0 && p->deadline_ns < ev.deadline_ns) ev.deadline_ns = p->deadline_ns;
    ev.cancel = p->cancel;
    ev.err = err;
    ev.warnings = &warnings;
    ev.name_istr = im_intern_cstr(IM_METRIC_NAME);
    ev.le_istr = im_intern_cstr("le");
    promql_nh_t nh;
    memset(&nh, 0, sizeof nh);
    im_arena_init(&nh.arena, 16 * 1024, 0);
    ev.nh = &nh;

    im_rc rc = IM_OK;
    const promql_expr_t *e = expr;
    while (e->kind == PROMQL_NODE_PAREN || e->kind == PROMQL_NODE_STEP_INVARIANT)
        e = e->kind == PROMQL_NODE_PAREN ? e->u.paren.expr : e->u.si.expr;
    if (e->kind == PROMQL_NODE_MATRIX_SELECTOR || e->kind == PROMQL_NODE_SUBQUERY) {
        rc = eval_top_matrix(&ev, e, res);
        goto done;
    }
    val_t v;
    ev.want_hists = true;
    rc = promql__eval(&ev, e, &v);
    if (rc != IM_OK) goto done;
    if ((rc = promql__finish_names(&ev, &v)) != IM_OK) {
        promql__val_free(&ev, &v);
        goto done;
    }
    if (v.kind == VAL_STRING) {
        res->type = PROMQL_RESULT_STRING;
        char *s = ralloc(res, v.slen + 1);
        memcpy(s, v.str, v.slen);
        s[v.slen] = 0;
        res->str = s;
        res->str_len = v.slen;
        res->scalar.t_ms = ev.start;
    } else if (v.kind == VAL_SCALAR && p->instant) {
        res->type = PROMQL_RESULT_SCALAR;
        res->scalar = (promql_point_t){ev.start, v.sc[0]};
    } else if (v.kind == VAL_SCALAR) {
        res->type = PROMQL_RESULT_MATRIX;
        res->series = ralloc(res, sizeof *res->series);
        res->nseries = 1;
        promql_series_t *s = &res->series[0];
        s->labels = im_labels_empty();
        s->npoints = ev.nsteps;
        s->points = ralloc(res, ev.nsteps * sizeof *s->points);
        for (size_t k = 0; k < ev.nsteps; k++)
            s->points[k] = (promql_point_t){ev_ts(&ev, k), v.sc[k]};
    } else {
        res->type = p->instant ? PROMQL_RESULT_VECTOR : PROMQL_RESULT_MATRIX;
        res->series = ralloc(res, (v.n ? v.n : 1) * sizeof *res->series);
        size_t ns = 0;
        for (size_t i = 0; i < v.n; i++) {
            vser_t *s = &v.s[i];
            size_t np = 0;
            for (size_t k = 0; k < ev.nsteps; k++) np += s->has[k];
            if (!np) continue;
            promql_series_t *o = &res->series[ns++];
            o->labels = im_labels_ref(s->labels);
            o->npoints = np;
            o->points = ralloc(res, np * sizeof *o->points);
            size_t j = 0;
            for (size_t k = 0; k < ev.nsteps; k++)
                if (s->has[k])
                    o->points[j++] = (promql_point_t){ev_ts(&ev, k), res_val(res, s->v[k])};
        }
        res->nseries = ns;
        if (!p->instant && ns > 1) qsort(res->series, ns, sizeof *res->series, cmp_series);
    }
    promql__val_free(&ev, &v);
done:
    res->samples_total = ev.total_samples;
    res->samples_peak = ev.peak_samples;
    if (rc == IM_OK) finish_warnings(&ev, res);
    im_free(ev.rt);
    im_free(ev.rv);
    im_buf_free(&warnings);
    im_arena_free(&nh.arena);
    im_istr_unref(ev.name_istr);
    im_istr_unref(ev.le_istr);
    if (rc != IM_OK) promql_result_free(res);
    return rc;
}

im_rc promql_eval_instant(const promql_engine_t *e, storage_queryable_t *q,
                          const promql_expr_t *expr, int64_t t_ms, promql_result_t *out,
                          im_err_t *err)
{
    promql_query_params_t p = {.start_ms = t_ms, .end_ms = t_ms, .step_ms = 1, .instant = true};
    return promql_eval(e, q, expr, &p, out, err);
}

im_rc promql_eval_range(const promql_engine_t *e, storage_queryable_t *q, const promql_expr_t *expr,
                        int64_t start_ms, int64_t end_ms, int64_t step_ms, promql_result_t *out,
                        im_err_t *err)
{
    promql_query_params_t p = {.start_ms = start_ms, .end_ms = end_ms, .step_ms = step_ms};
    return promql_eval(e, q, expr, &p, out, err);
}
