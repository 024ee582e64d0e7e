/* limit.c — Prometheus 3's experimental limitk and limit_ratio aggregations.
 *
 * limitk(k, v) keeps, per group and step, the first k present series of the group
 * in input order (series order is the selector's, so a range query keeps the same
 * series while they are present); k < 1 keeps none. limit_ratio(r, v) keeps a
 * deterministic share of the series: a series is kept when its label hash,
 * scaled to [0, 1), is below r (r > 0) or at or above 1 + r (r < 0), so
 * limit_ratio(r, v) and limit_ratio(-(1 - r), v) are complements; r outside
 * [-1, 1] is capped with a warning. The hash is Prometheus' labels.Hash()
 * (XXH64 over name, 0xff, value, 0xff, … in label order; util/xxh64.h), not our
 * own label hash, so the same series are picked as in Prometheus 3. Both keep the
 * input labels, __name__ included, as topk does. */
#include "util/base.h"

#include <math.h>

#include "promql/aggregate_int.h"
#include "util/fmtfloat.h"
#include "util/xxh64.h"

/* Prometheus' labels.Hash(). */
static uint64_t prom_labels_hash(const im_labels_t *ls)
{
    static const uint8_t sep = 0xff;
    im_xxh64_state_t st;
    im_xxh64_init(&st, 0);
    for (uint32_t i = 0; i < ls->n; i++) {
        im_xxh64_update(&st, ls->l[i].name->s, ls->l[i].name->len);
        im_xxh64_update(&st, &sep, 1);
        im_xxh64_update(&st, ls->l[i].value->s, ls->l[i].value->len);
        im_xxh64_update(&st, &sep, 1);
    }
    return im_xxh64_digest(&st);
}

/* off: the series' hash scaled to [0, 1] as Prometheus does,
 * float64(hash) / float64(MaxUint64) (MaxUint64 rounds to 2^64). */
static bool ratio_keeps(double off, double r)
{
    if (r >= 1.0) return true;
    return (off >= 0 && off < r) || (off >= 1.0 + r && off < 1.0);
}

im_rc promql__agg_limit(ev_t *ev, const promql_aggregate_t *agg, const val_t *in,
                        const val_t *param, const grp_t *g, size_t ng, val_t *out)
{
    size_t nsteps = ev->nsteps;
    uint32_t *outidx = im_malloc((in->n ? in->n : 1) * sizeof *outidx);
    for (size_t i = 0; i < in->n; i++) outidx[i] = UINT32_MAX;
    double *off = NULL; /* per series, for limit_ratio: computed once */
    if (agg->op == PROMQL_AGG_LIMIT_RATIO) {
        off = im_malloc((in->n ? in->n : 1) * sizeof *off);
        for (size_t i = 0; i < in->n; i++)
            off[i] = (double)prom_labels_hash(in->s[i].labels) / 18446744073709551616.0;
    }
    bool warned = false;
    im_rc rc = IM_OK;
    for (size_t k = 0; k < nsteps && rc == IM_OK; k++) {
        double p = param->sc[k];
        int64_t kk = 0;
        if (agg->op == PROMQL_AGG_LIMITK) {
            kk = (int64_t)p;
            if (kk < 1) continue;
        } else {
            if (p == 0) continue;
            if (p < -1.0 || p > 1.0) {
                double capped = p < -1.0 ? -1.0 : 1.0;
                if (!warned) {
                    char fb[IM_FLOAT_BUF], fc[IM_FLOAT_BUF];
                    im_fmt_float_go(p, 'g', fb, sizeof fb);
                    im_fmt_float_go(capped, 'g', fc, sizeof fc);
                    promql__warn(ev,
                                 "PromQL warning: ratio value should be between -1 and 1, got "
                                 "%s, capping to %s",
                                 fb, fc);
                    warned = true;
                }
                p = capped;
            }
        }
        for (size_t gi = 0; gi < ng; gi++) {
            int64_t taken = 0;
            for (size_t j = 0; j < g[gi].nm; j++) {
                size_t si = g[gi].members[j];
                if (!in->s[si].has[k]) continue;
                if (agg->op == PROMQL_AGG_LIMITK) {
                    if (taken >= kk) break;
                    taken++;
                } else if (!ratio_keeps(off[si], p)) {
                    continue;
                }
                if (outidx[si] == UINT32_MAX) {
                    outidx[si] =
                        (uint32_t)promql__val_add(ev, out, im_labels_ref(in->s[si].labels));
                    out->s[outidx[si]].drop_name = in->s[si].drop_name;
                    if (ev->over_limit) {
                        rc = IM_ELIMIT;
                        break;
                    }
                }
                vser_t *o = &out->s[outidx[si]];
                o->v[k] = in->s[si].v[k];
                o->has[k] = 1;
            }
            if (rc != IM_OK) break;
        }
    }
    im_free(outidx);
    im_free(off);
    return rc;
}
