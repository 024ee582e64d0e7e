/* history.c — the fleet's past as OpenMetrics with timestamps (for backfills).
 *
 * The fleet is stepped from start to end; after each step every endpoint's
 * value array is copied into a step-major matrix. Then each metric family is
 * written once (OpenMetrics forbids interleaving families): the family of every
 * vLLM pod together, then every dcgm node, then Kueue; inside a family, series
 * by series, each with all its timestamps in order. Series carry the labels a
 * Prometheus with Kubernetes service discovery would have attached (job,
 * instance, and namespace/pod for the vLLM and Kueue targets), so pods of the
 * same model do not collide. `_created` families are left out. Last comes `up`
 * per target, as the scrapes would have stored it: 0 (and no samples) while
 * the scenario takes a target down. */
#include "util/base.h"

#include <stdio.h>

#include "sim/vllm_int.h"

typedef struct hep {
    const sim_tpl_t *t;
    const double *live; /* the endpoint's live value array */
    double *m;          /* owned: steps x nvalues */
    uint8_t *up;        /* owned: per step, 1 when the target answered */
    sim_label_t tl[8];  /* target labels (sim__target_labels) */
    int ntl;
    char inst[300]; /* storage for the instance value */
} hep_t;

static size_t put_u64(char *p, uint64_t x)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    for (int i = 0; i < n; i++) p[i] = tmp[n - 1 - i];
    return (size_t)n;
}

static im_rc flush(im_buf_t *b, FILE *out, int64_t *bytes, im_err_t *err)
{
    if (b->len && fwrite(b->data, 1, b->len, out) != b->len)
        return im_err_set(err, IM_EIO, "cannot write the history output");
    *bytes += (int64_t)b->len;
    im_buf_reset(b);
    return IM_OK;
}

static size_t put_str(char *p, const char *s)
{
    size_t n = strlen(s);
    memcpy(p, s, n);
    return n;
}

/* "name{target labels,series labels} " for one series, as a scrape with
 * honor_labels: false stores it: a series label that a target label also has
 * is renamed exported_<name>. Returns the length, 0 if it does not fit. */
static size_t series_prefix(const sim_tpl_t *t, const sim_series_t *s, const hep_t *ep, char *pre,
                            size_t cap)
{
    const char *txt = t->text.data + s->text_off, *end = txt + s->text_len;
    const char *brace = memchr(txt, '{', s->text_len);
    size_t namelen = brace ? (size_t)(brace - txt) : s->text_len;
    size_t need = s->text_len + 16;
    for (int i = 0; i < ep->ntl; i++)
        need += strlen(ep->tl[i].name) + strlen(ep->tl[i].value) * 2 + 4;
    if (need + 64 > cap) return 0;
    char *p = pre;
    memcpy(p, txt, namelen);
    p += namelen;
    *p++ = '{';
    for (int i = 0; i < ep->ntl; i++) {
        if (i) *p++ = ',';
        p += put_str(p, ep->tl[i].name);
        *p++ = '=';
        *p++ = '"';
        for (const char *v = ep->tl[i].value; *v; v++) {
            if (*v == '"' || *v == '\\') *p++ = '\\';
            *p++ = *v;
        }
        *p++ = '"';
    }
    if (brace) {
        const char *q = brace + 1;
        while (q < end && *q != '}') {
            const char *eq = memchr(q, '=', (size_t)(end - q));
            if (!eq) break;
            size_t ln = (size_t)(eq - q);
            bool clash = false;
            for (int i = 0; i < ep->ntl; i++)
                if (strlen(ep->tl[i].name) == ln && memcmp(ep->tl[i].name, q, ln) == 0)
                    clash = true;
            *p++ = ',';
            if (clash) p += put_str(p, "exported_");
            /* the label name, '=', and the quoted value with its escapes */
            const char *v = eq + 2;
            while (v < end && *v != '"') v += *v == '\\' ? 2 : 1;
            memcpy(p, q, (size_t)(v + 1 - q));
            p += v + 1 - q;
            q = v + 1;
            if (q < end && *q == ',') q++;
        }
    }
    *p++ = '}';
    *p++ = ' ';
    return (size_t)(p - pre);
}

#define PREFIX_CAP 1024

/* Writes family fi of the endpoints idx[0..n) (all share the family layout: one
 * engine's pods, the dcgm nodes, Kueue). Inside the family, one OpenMetrics group
 * at a time (a histogram's buckets, _count and _sum share a group), all of the
 * group's samples per timestamp, in time order. */
static im_rc write_family(hep_t *eps, const int *idx, int n, int fi, int nsteps, const int64_t *ts,
                          im_buf_t *b, FILE *out, sim_history_stats_t *st, im_err_t *err)
{
    const sim_family_t *f0 = &eps[idx[0]].t->fams[fi];
    if (f0->om_skip) return IM_OK;
    (void)im_buf_append(b, eps[idx[0]].t->text.data + f0->om_off, f0->om_len);
    char *pre = NULL;
    size_t *pl = NULL;
    uint32_t precap = 0;
    for (int ei = 0; ei < n; ei++) {
        int e = idx[ei];
        const sim_tpl_t *t = eps[e].t;
        const sim_family_t *f = &t->fams[fi];
        uint32_t g = f->group ? f->group : 1;
        if (g > precap) {
            precap = g;
            pre = im_realloc(pre, (size_t)precap * PREFIX_CAP);
            pl = im_realloc(pl, sizeof *pl * precap);
        }
        for (uint32_t g0 = 0; g0 < f->n; g0 += g) {
            uint32_t gn = g0 + g <= f->n ? g : f->n - g0;
            const sim_series_t *gs = &t->series[f->first + g0];
            for (uint32_t j = 0; j < gn; j++)
                pl[j] = series_prefix(t, &gs[j], &eps[e], pre + (size_t)j * PREFIX_CAP, PREFIX_CAP);
            const double *m = eps[e].m;
            int nv = t->nvalues;
            for (int k = 0; k < nsteps; k++) {
                const double *row = m + (size_t)k * (size_t)nv;
                for (uint32_t j = 0; j < gn; j++) {
                    const sim_series_t *s = &gs[j];
                    if (pl[j] == 0 || !eps[e].up[k] ||
                        (s->present_idx >= 0 && row[s->present_idx] == 0))
                        continue;
                    if (b->cap - b->len < pl[j] + 96) {
                        im_rc rc = flush(b, out, &st->bytes, err);
                        if (rc != IM_OK) goto fail;
                        if (im_buf_reserve(b, pl[j] + 96) != IM_OK) im_oom(pl[j] + 96);
                    }
                    char *p = b->data + b->len;
                    memcpy(p, pre + (size_t)j * PREFIX_CAP, pl[j]);
                    p += pl[j];
                    p += sim__fmt(row[s->vidx], SIM_FMT_GO, p);
                    *p++ = ' ';
                    int64_t t_ms = ts[k];
                    p += put_u64(p, (uint64_t)(t_ms / 1000));
                    if (t_ms % 1000) {
                        int frac = (int)(t_ms % 1000);
                        *p++ = '.';
                        *p++ = (char)('0' + frac / 100);
                        *p++ = (char)('0' + frac / 10 % 10);
                        *p++ = (char)('0' + frac % 10);
                    }
                    *p++ = '\n';
                    b->len = (size_t)(p - b->data);
                    st->samples++;
                }
            }
            st->series += gn;
        }
    }
    im_free(pre);
    im_free(pl);
    if (b->len > (1u << 20)) return flush(b, out, &st->bytes, err);
    return IM_OK;
fail:
    im_free(pre);
    im_free(pl);
    return IM_EIO;
}

/* The `up` series of every target, as a scraper stores it. */
static im_rc write_up(hep_t *eps, int neps, int nsteps, const int64_t *ts, im_buf_t *b, FILE *out,
                      sim_history_stats_t *st, im_err_t *err)
{
    (void)im_buf_puts(b, "# TYPE up gauge\n");
    char pre[PREFIX_CAP];
    for (int e = 0; e < neps; e++) {
        size_t n = 0;
        n += put_str(pre + n, "up{");
        for (int i = 0; i < eps[e].ntl; i++) {
            const char *v = eps[e].tl[i].value;
            if (n + strlen(eps[e].tl[i].name) + 2 * strlen(v) + 8 > sizeof pre) break;
            if (i) pre[n++] = ',';
            n += put_str(pre + n, eps[e].tl[i].name);
            pre[n++] = '=';
            pre[n++] = '"';
            for (; *v; v++) {
                if (*v == '"' || *v == '\\') pre[n++] = '\\';
                pre[n++] = *v;
            }
            pre[n++] = '"';
        }
        pre[n++] = '}';
        pre[n++] = ' ';
        for (int k = 0; k < nsteps; k++) {
            if (b->cap - b->len < n + 64) {
                im_rc rc = flush(b, out, &st->bytes, err);
                if (rc != IM_OK) return rc;
                if (im_buf_reserve(b, n + 64) != IM_OK) im_oom(n + 64);
            }
            (void)im_buf_append(b, pre, n);
            (void)im_buf_printf(b, "%d %lld", eps[e].up[k], (long long)(ts[k] / 1000));
            if (ts[k] % 1000) (void)im_buf_printf(b, ".%03d", (int)(ts[k] % 1000));
            (void)im_buf_putc(b, '\n');
            st->samples++;
        }
        st->series++;
    }
    return IM_OK;
}

im_rc sim_history_write(sim_fleet_t *f, int64_t start_ms, int64_t end_ms, int64_t step_ms,
                        size_t max_bytes, FILE *out, sim_history_stats_t *st_out, im_err_t *err)
{
    sim_history_stats_t st = {0};
    if (step_ms <= 0 || end_ms < start_ms)
        return im_err_set(err, IM_EINVAL, "--history needs a positive --step and range");
    if (f->now_ms != start_ms)
        return im_err_set(err, IM_EINVAL, "the fleet must start at the history's start time");
    int64_t nsteps64 = (end_ms - start_ms) / step_ms + 1;
    int ndcgm = f->nnodes + f->nmig;
    int neps = f->npods + ndcgm + 1;
    size_t per_step = 0;
    for (int i = 0; i < f->npods; i++) per_step += (size_t)f->lay.nvalues;
    for (int n = 0; n < f->nnodes; n++) per_step += (size_t)f->dtpl[n].nvalues;
    for (int n = 0; n < f->nmig; n++) per_step += (size_t)f->mtpl[n].nvalues;
    per_step += (size_t)sim__kueue_tpl(f)->nvalues;
    double need = (double)nsteps64 * (double)per_step * 8.0;
    if (need > (double)max_bytes)
        return im_err_set(err, IM_ELIMIT,
                          "--history needs %.0f MiB of memory (%lld steps x %zu values); use a "
                          "longer --step, fewer --pods, or raise --history-max-bytes",
                          need / 1048576.0, (long long)nsteps64, per_step);
    int nsteps = (int)nsteps64;
    hep_t *eps = im_calloc((size_t)neps, sizeof *eps);
    int64_t *ts = im_malloc(sizeof *ts * (size_t)nsteps);
    /* endpoints in the fleet's order: pods, nodes, Kueue */
    for (int k = 0; k < neps; k++) {
        const sim_endpoint_t *ep = sim_fleet_endpoint(f, k);
        if (ep->kind == SIM_EP_VLLM) {
            sim_pod_t *p = &f->pods[ep->index];
            eps[k].t = &f->vtpl[p->model];
            eps[k].live = p->v;
        } else if (ep->kind == SIM_EP_DCGM && ep->index < f->nnodes) {
            eps[k].t = &f->dtpl[ep->index];
            eps[k].live = f->dv[ep->index];
        } else if (ep->kind == SIM_EP_DCGM) {
            eps[k].t = &f->mtpl[ep->index - f->nnodes];
            eps[k].live = f->mv[ep->index - f->nnodes];
        } else {
            eps[k].t = sim__kueue_tpl(f);
            eps[k].live = sim__kueue_values(f);
        }
        eps[k].ntl = sim__target_labels(f, k, eps[k].tl, eps[k].inst, sizeof eps[k].inst);
    }
    for (int e = 0; e < neps; e++) {
        eps[e].m = im_malloc(sizeof(double) * (size_t)eps[e].t->nvalues * (size_t)nsteps);
        eps[e].up = im_malloc((size_t)nsteps);
    }
    for (int s = 0; s < nsteps; s++) {
        ts[s] = start_ms + (int64_t)s * step_ms;
        sim_fleet_advance(f, ts[s]);
        for (int e = 0; e < neps; e++) {
            const sim_endpoint_t *ep = sim_fleet_endpoint(f, e);
            memcpy(eps[e].m + (size_t)s * (size_t)eps[e].t->nvalues, eps[e].live,
                   sizeof(double) * (size_t)eps[e].t->nvalues);
            eps[e].up[s] = sim_fleet_endpoint_up(f, ep->kind, ep->index);
        }
    }
    im_buf_t b;
    im_buf_init(&b, 0);
    if (im_buf_reserve(&b, 2u << 20) != IM_OK) im_oom(2u << 20);
    im_rc rc = IM_OK;
    /* the groups that share a family layout: each engine's pods (a mixed fleet's
     * vLLM and SGLang pods have different families), the dcgm nodes, Kueue */
    int *idx = im_malloc(sizeof *idx * (size_t)neps);
    for (int eng = 0; eng < 2 && rc == IM_OK; eng++) {
        int n = 0;
        for (int k = 0; k < f->npods; k++)
            if (sim__pod_sglang(f, &f->pods[k]) == (eng == 1)) idx[n++] = k;
        for (int fi = 0; n > 0 && fi < eps[idx[0]].t->nfams && rc == IM_OK; fi++)
            rc = write_family(eps, idx, n, fi, nsteps, ts, &b, out, &st, err);
    }
    for (int k = 0; k < ndcgm; k++) idx[k] = f->npods + k;
    for (int fi = 0; fi < eps[f->npods].t->nfams && rc == IM_OK; fi++)
        rc = write_family(eps, idx, ndcgm, fi, nsteps, ts, &b, out, &st, err);
    idx[0] = neps - 1;
    for (int fi = 0; fi < eps[neps - 1].t->nfams && rc == IM_OK; fi++)
        rc = write_family(eps, idx, 1, fi, nsteps, ts, &b, out, &st, err);
    im_free(idx);
    if (rc == IM_OK) rc = write_up(eps, neps, nsteps, ts, &b, out, &st, err);
    if (rc == IM_OK) {
        (void)im_buf_puts(&b, "# EOF\n");
        rc = flush(&b, out, &st.bytes, err);
    }
    im_buf_free(&b);
    for (int e = 0; e < neps; e++) {
        im_free(eps[e].m);
        im_free(eps[e].up);
    }
    im_free(eps);
    im_free(ts);
    st.steps = nsteps;
    if (st_out) *st_out = st;
    return rc;
}
