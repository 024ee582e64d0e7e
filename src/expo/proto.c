/* proto.c — the delimited protobuf exposition decoder (proto.h), by hand over the
 * wire format: varints, 64-bit fields, length-delimited fields (strings,
 * sub-messages, packed repeated fields). Each message is read twice: once to
 * count its repeated fields, once to fill arrays of that size in the arena. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>

#include "expo/proto.h"
#include "util/buf.h"
#include "util/fmtfloat.h"

typedef struct rd {
    const uint8_t *p, *end;
} rd_t;

typedef struct ctx {
    im_arena_t *a;
    im_err_t *err;
    const uint8_t *base;
    im_rc rc;
} ctx_t;

static bool fail(ctx_t *c, const uint8_t *at, const char *what)
{
    if (c->rc == IM_OK)
        c->rc = im_err_set(c->err, IM_EPARSE, "protobuf exposition: malformed %s at byte %zu", what,
                           (size_t)(at - c->base));
    return false;
}

static void *alloc(ctx_t *c, size_t n, size_t size)
{
    if (n == 0) return NULL;
    void *p = im_arena_calloc(c->a, n * size);
    if (!p && c->rc == IM_OK)
        c->rc = im_err_set(c->err, IM_ELIMIT,
                           "protobuf exposition: the scrape needs more memory than its limit "
                           "(raise the scrape's body size limit)");
    return p;
}

static bool varint(rd_t *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) return false;
        uint8_t b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

static bool key(rd_t *r, uint32_t *field, unsigned *wt)
{
    uint64_t k;
    if (!varint(r, &k) || (k >> 3) == 0 || (k >> 3) > 0x1fffffff) return false;
    *field = (uint32_t)(k >> 3);
    *wt = (unsigned)(k & 7);
    return true;
}

static bool bytes(rd_t *r, rd_t *out)
{
    uint64_t n;
    if (!varint(r, &n) || n > (uint64_t)(r->end - r->p)) return false;
    out->p = r->p;
    out->end = r->p + n;
    r->p += n;
    return true;
}

static bool f64(rd_t *r, double *v)
{
    if (r->end - r->p < 8) return false;
    uint64_t b = 0;
    for (int i = 0; i < 8; i++) b |= (uint64_t)r->p[i] << (8 * i);
    r->p += 8;
    memcpy(v, &b, sizeof *v);
    return true;
}

static bool skip(rd_t *r, unsigned wt)
{
    uint64_t v = 0;
    rd_t s;
    switch (wt) {
    case 0: return varint(r, &v);
    case 1:
        if (r->end - r->p < 8) return false;
        r->p += 8;
        return true;
    case 2: return bytes(r, &s);
    case 5:
        if (r->end - r->p < 4) return false;
        r->p += 4;
        return true;
    default: return false; /* groups (3, 4) are not used by metrics.proto */
    }
}

static int64_t unzig(uint64_t z)
{
    return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

static expo_pb_str_t str_of(rd_t s)
{
    return (expo_pb_str_t){(const char *)s.p, (size_t)(s.end - s.p)};
}

/* google.protobuf.Timestamp as ms. */
static bool timestamp(ctx_t *c, rd_t m, int64_t *ms)
{
    uint64_t secs = 0, nanos = 0, v;
    uint32_t f;
    unsigned wt;
    while (m.p < m.end) {
        const uint8_t *at = m.p;
        if (!key(&m, &f, &wt)) return fail(c, at, "timestamp");
        if ((f == 1 || f == 2) && wt == 0) {
            if (!varint(&m, &v)) return fail(c, at, "timestamp");
            if (f == 1)
                secs = v;
            else
                nanos = v;
        } else if (!skip(&m, wt)) {
            return fail(c, at, "timestamp");
        }
    }
    *ms = (int64_t)(secs * 1000u) + (int64_t)((int32_t)(uint32_t)nanos / 1000000);
    return true;
}

/* A message holding one double at field 1 (Gauge, Counter, Untyped). */
static bool value_msg(ctx_t *c, rd_t m, double *v)
{
    uint32_t f;
    unsigned wt;
    while (m.p < m.end) {
        const uint8_t *at = m.p;
        if (!key(&m, &f, &wt)) return fail(c, at, "value");
        if (f == 1 && wt == 1) {
            if (!f64(&m, v)) return fail(c, at, "value");
        } else if (!skip(&m, wt)) {
            return fail(c, at, "value");
        }
    }
    return true;
}

static bool label_pair(ctx_t *c, rd_t m, expo_pb_label_t *l)
{
    uint32_t f;
    unsigned wt;
    rd_t s;
    while (m.p < m.end) {
        const uint8_t *at = m.p;
        if (!key(&m, &f, &wt)) return fail(c, at, "label");
        if ((f == 1 || f == 2) && wt == 2) {
            if (!bytes(&m, &s)) return fail(c, at, "label");
            if (f == 1)
                l->name = str_of(s);
            else
                l->value = str_of(s);
        } else if (!skip(&m, wt)) {
            return fail(c, at, "label");
        }
    }
    return true;
}

static bool summary(ctx_t *c, rd_t m, expo_pb_metric_t *o)
{
    uint32_t f;
    unsigned wt;
    rd_t s, m0 = m;
    uint64_t v = 0;
    size_t nq = 0;
    while (m.p < m.end) { /* count */
        const uint8_t *at = m.p;
        if (!key(&m, &f, &wt) || !skip(&m, wt)) return fail(c, at, "summary");
        nq += f == 3 && wt == 2;
    }
    o->quantile = alloc(c, nq, sizeof(double));
    o->qvalue = alloc(c, nq, sizeof(double));
    if (c->rc != IM_OK) return false;
    m = m0;
    while (m.p < m.end) {
        const uint8_t *at = m.p;
        (void)key(&m, &f, &wt);
        if (f == 1 && wt == 0) {
            (void)varint(&m, &v);
            o->scount = (double)v;
        } else if (f == 2 && wt == 1) {
            (void)f64(&m, &o->ssum);
        } else if (f == 3 && wt == 2) {
            (void)bytes(&m, &s);
            double q = 0, qv = 0;
            uint32_t qf;
            unsigned qwt;
            while (s.p < s.end) {
                const uint8_t *qat = s.p;
                if (!key(&s, &qf, &qwt)) return fail(c, qat, "quantile");
                if ((qf == 1 || qf == 2) && qwt == 1) {
                    if (!f64(&s, qf == 1 ? &q : &qv)) return fail(c, qat, "quantile");
                } else if (!skip(&s, qwt)) {
                    return fail(c, qat, "quantile");
                }
            }
            o->quantile[o->nquantiles] = q;
            o->qvalue[o->nquantiles++] = qv;
        } else if (!skip(&m, wt)) {
            return fail(c, at, "summary");
        }
    }
    return true;
}

static bool span(ctx_t *c, rd_t m, expo_pb_span_t *sp)
{
    uint32_t f;
    unsigned wt;
    uint64_t v = 0;
    while (m.p < m.end) {
        const uint8_t *at = m.p;
        if (!key(&m, &f, &wt)) return fail(c, at, "bucket span");
        if ((f == 1 || f == 2) && wt == 0) {
            if (!varint(&m, &v)) return fail(c, at, "bucket span");
            if (f == 1) {
                int64_t o = unzig(v);
                if (o < INT32_MIN || o > INT32_MAX) return fail(c, at, "bucket span offset");
                sp->offset = (int32_t)o;
            } else {
                if (v > UINT32_MAX) return fail(c, at, "bucket span length");
                sp->length = (uint32_t)v;
            }
        } else if (!skip(&m, wt)) {
            return fail(c, at, "bucket span");
        }
    }
    return true;
}

/* Elements of a repeated scalar field (packed or not): varints (wt 0) or
 * doubles (wt 1). */
static bool count_repeated(rd_t *m, unsigned wt, bool dbl, size_t *n)
{
    rd_t s;
    uint64_t v = 0;
    if (wt == 2) {
        if (!bytes(m, &s)) return false;
        if (dbl) {
            if ((s.end - s.p) % 8) return false;
            *n += (size_t)(s.end - s.p) / 8;
            return true;
        }
        while (s.p < s.end) {
            if (!varint(&s, &v)) return false;
            (*n)++;
        }
        return true;
    }
    if (wt != (dbl ? 1u : 0u)) return skip(m, wt);
    (*n)++;
    return skip(m, wt);
}

static void read_repeated(rd_t *m, unsigned wt, bool dbl, double *out, size_t *n, double *run)
{
    rd_t s;
    uint64_t v = 0;
    double d;
    if (wt == 2) {
        (void)bytes(m, &s);
        while (s.p < s.end) {
            if (dbl) {
                (void)f64(&s, &out[(*n)++]);
            } else {
                (void)varint(&s, &v);
                *run += (double)unzig(v);
                out[(*n)++] = *run;
            }
        }
        return;
    }
    if (wt != (dbl ? 1u : 0u)) {
        (void)skip(m, wt);
        return;
    }
    if (dbl) {
        (void)f64(m, &d);
        out[(*n)++] = d;
    } else {
        (void)varint(m, &v);
        *run += (double)unzig(v);
        out[(*n)++] = *run;
    }
}

static bool histogram(ctx_t *c, rd_t m, expo_pb_hist_t *h)
{
    uint32_t f;
    unsigned wt;
    rd_t s, m0 = m;
    uint64_t v = 0;
    size_t nb = 0, nps = 0, nns = 0, npd = 0, nnd = 0, npc = 0, nnc = 0;
    while (m.p < m.end) { /* count */
        const uint8_t *at = m.p;
        if (!key(&m, &f, &wt)) return fail(c, at, "histogram");
        bool ok;
        switch (f) {
        case 3:
            nb += wt == 2;
            ok = skip(&m, wt);
            break;
        case 9:
            nns += wt == 2;
            ok = skip(&m, wt);
            break;
        case 12:
            nps += wt == 2;
            ok = skip(&m, wt);
            break;
        case 10: ok = count_repeated(&m, wt, false, &nnd); break;
        case 13: ok = count_repeated(&m, wt, false, &npd); break;
        case 11: ok = count_repeated(&m, wt, true, &nnc); break;
        case 14: ok = count_repeated(&m, wt, true, &npc); break;
        default: ok = skip(&m, wt);
        }
        if (!ok) return fail(c, at, "histogram");
    }
    h->upper = alloc(c, nb, sizeof(double));
    h->cumulative = alloc(c, nb, sizeof(double));
    h->pspan = alloc(c, nps, sizeof *h->pspan);
    h->nspan = alloc(c, nns, sizeof *h->nspan);
    double *pd = alloc(c, npd, sizeof(double)), *nd = alloc(c, nnd, sizeof(double));
    double *pc = alloc(c, npc, sizeof(double)), *nc = alloc(c, nnc, sizeof(double));
    if (c->rc != IM_OK) return false;
    size_t npdn = 0, nndn = 0, npcn = 0, nncn = 0;
    double prun = 0, nrun = 0, dummy = 0, count_f = 0, zc_f = 0, zc_i = 0;
    uint64_t count_i = 0;
    m = m0;
    while (m.p < m.end) {
        const uint8_t *at = m.p;
        (void)key(&m, &f, &wt);
        if (f == 1 && wt == 0) {
            (void)varint(&m, &count_i);
        } else if (f == 4 && wt == 1) {
            (void)f64(&m, &count_f);
        } else if (f == 2 && wt == 1) {
            (void)f64(&m, &h->sum);
        } else if (f == 3 && wt == 2) {
            (void)bytes(&m, &s);
            double ub = 0, cf = 0;
            uint64_t ci = 0;
            uint32_t bf;
            unsigned bwt;
            while (s.p < s.end) {
                const uint8_t *bat = s.p;
                if (!key(&s, &bf, &bwt)) return fail(c, bat, "bucket");
                if (bf == 1 && bwt == 0) {
                    if (!varint(&s, &ci)) return fail(c, bat, "bucket");
                } else if ((bf == 2 || bf == 4) && bwt == 1) {
                    if (!f64(&s, bf == 2 ? &ub : &cf)) return fail(c, bat, "bucket");
                } else if (!skip(&s, bwt)) {
                    return fail(c, bat, "bucket");
                }
            }
            h->upper[h->nbuckets] = ub;
            h->cumulative[h->nbuckets++] = cf > 0 ? cf : (double)ci;
        } else if (f == 5 && wt == 0) {
            (void)varint(&m, &v);
            int64_t sc = unzig(v);
            if (sc < INT32_MIN || sc > INT32_MAX) return fail(c, at, "histogram schema");
            h->schema = (int32_t)sc;
        } else if (f == 6 && wt == 1) {
            (void)f64(&m, &h->zthresh);
        } else if (f == 7 && wt == 0) {
            (void)varint(&m, &v);
            zc_i = (double)v;
        } else if (f == 8 && wt == 1) {
            (void)f64(&m, &zc_f);
        } else if ((f == 9 || f == 12) && wt == 2) {
            (void)bytes(&m, &s);
            expo_pb_span_t *sp = f == 9 ? &h->nspan[h->nnspan++] : &h->pspan[h->npspan++];
            if (!span(c, s, sp)) return false;
        } else if (f == 10) {
            read_repeated(&m, wt, false, nd, &nndn, &nrun);
        } else if (f == 13) {
            read_repeated(&m, wt, false, pd, &npdn, &prun);
        } else if (f == 11) {
            read_repeated(&m, wt, true, nc, &nncn, &dummy);
        } else if (f == 14) {
            read_repeated(&m, wt, true, pc, &npcn, &dummy);
        } else if (f == 15 && wt == 2) {
            (void)bytes(&m, &s);
            if (!timestamp(c, s, &h->created_ms)) return false;
        } else {
            (void)skip(&m, wt);
        }
    }
    h->count = count_f > 0 ? count_f : (double)count_i;
    h->zcount = zc_f > 0 ? zc_f : zc_i;
    /* float counts win over integer deltas */
    h->pos = npcn ? pc : pd;
    h->npos = npcn ? npcn : npdn;
    h->neg = nncn ? nc : nd;
    h->nneg = nncn ? nncn : nndn;
    h->native = h->zthresh > 0 || h->zcount > 0 || h->npspan || h->nnspan;
    uint64_t lp = 0, ln = 0;
    for (size_t i = 0; i < h->npspan; i++) lp += h->pspan[i].length;
    for (size_t i = 0; i < h->nnspan; i++) ln += h->nspan[i].length;
    if (lp != h->npos || ln != h->nneg)
        return fail(c, m0.p, "native histogram (span lengths do not match the bucket counts)");
    return true;
}

static bool metric(ctx_t *c, rd_t m, expo_pb_metric_t *o)
{
    uint32_t f;
    unsigned wt;
    rd_t s, m0 = m;
    uint64_t v = 0;
    size_t nl = 0;
    while (m.p < m.end) {
        const uint8_t *at = m.p;
        if (!key(&m, &f, &wt) || !skip(&m, wt)) return fail(c, at, "metric");
        nl += f == 1 && wt == 2;
    }
    o->labels = alloc(c, nl, sizeof *o->labels);
    if (c->rc != IM_OK) return false;
    m = m0;
    while (m.p < m.end) {
        (void)key(&m, &f, &wt);
        if (wt == 2 && (f == 1 || f == 2 || f == 3 || f == 4 || f == 5 || f == 7)) {
            (void)bytes(&m, &s);
            bool ok = true;
            switch (f) {
            case 1: ok = label_pair(c, s, &o->labels[o->nlabels++]); break;
            case 4: ok = summary(c, s, o); break;
            case 7: ok = histogram(c, s, &o->hist); break;
            default: ok = value_msg(c, s, &o->value);
            }
            if (!ok) return false;
            o->has_value |= f != 1;
        } else if (f == 6 && wt == 0) {
            (void)varint(&m, &v);
            o->ts_ms = (int64_t)v;
            o->has_ts = true;
        } else {
            (void)skip(&m, wt);
        }
    }
    return true;
}

static bool family(ctx_t *c, rd_t m, expo_pb_family_t *o)
{
    uint32_t f;
    unsigned wt;
    rd_t s, m0 = m;
    uint64_t v = 0;
    size_t nm = 0;
    while (m.p < m.end) {
        const uint8_t *at = m.p;
        if (!key(&m, &f, &wt) || !skip(&m, wt)) return fail(c, at, "metric family");
        nm += f == 4 && wt == 2;
    }
    o->metrics = alloc(c, nm, sizeof *o->metrics);
    if (c->rc != IM_OK) return false;
    m = m0;
    while (m.p < m.end) {
        const uint8_t *at = m.p;
        (void)key(&m, &f, &wt);
        if (wt == 2 && (f == 1 || f == 2 || f == 4 || f == 5)) {
            (void)bytes(&m, &s);
            if (f == 1) o->name = str_of(s);
            if (f == 2) o->help = str_of(s);
            if (f == 5) o->unit = str_of(s);
            if (f == 4 && !metric(c, s, &o->metrics[o->nmetrics++])) return false;
        } else if (f == 3 && wt == 0) {
            (void)varint(&m, &v);
            if (v > EXPO_PB_GAUGE_HISTOGRAM) return fail(c, at, "metric type");
            o->type = (expo_pb_type_t)v;
        } else {
            (void)skip(&m, wt);
        }
    }
    if (o->name.len == 0) return fail(c, m0.p, "metric family (no name)");
    return true;
}

im_rc expo_pb_parse(const uint8_t *p, size_t len, im_arena_t *a, expo_pb_family_t **fams,
                    size_t *nfams, im_err_t *err)
{
    ctx_t c = {a, err, p, IM_OK};
    rd_t r = {p, p + len}, m;
    size_t n = 0;
    *fams = NULL;
    *nfams = 0;
    while (r.p < r.end) {
        const uint8_t *at = r.p;
        if (!bytes(&r, &m)) {
            fail(&c, at, "length prefix (a message runs past the end)");
            return c.rc;
        }
        n++;
    }
    expo_pb_family_t *out = alloc(&c, n, sizeof *out);
    if (c.rc != IM_OK) return c.rc;
    r = (rd_t){p, p + len};
    for (size_t i = 0; i < n; i++) {
        (void)bytes(&r, &m);
        if (!family(&c, m, &out[i])) return c.rc;
    }
    *fams = out;
    *nfams = n;
    return IM_OK;
}

/* ---- Samples ---- */

/* Go's 'g' with ".0" added when there is neither a '.' nor an exponent. */
static void float_label(double f, char *out, size_t cap)
{
    if (isnan(f)) {
        snprintf(out, cap, "NaN");
        return;
    }
    if (isinf(f)) {
        snprintf(out, cap, "%s", f > 0 ? "+Inf" : "-Inf");
        return;
    }
    size_t l = im_fmt_float_go(f, 'g', out, cap - 3);
    if (!memchr(out, '.', l) && !memchr(out, 'e', l)) memcpy(out + l, ".0", 3);
}

typedef struct emit {
    bool (*fn)(void *ctx, const expo_pb_sample_t *s);
    void *ctx;
    im_buf_t name;
    const expo_pb_family_t *f;
    const expo_pb_metric_t *m;
} emit_t;

static bool out(emit_t *e, const char *suffix, const char *xn, const char *xv, double v,
                const expo_pb_hist_t *native)
{
    im_buf_reset(&e->name);
    (void)im_buf_append(&e->name, e->f->name.p, e->f->name.len);
    (void)im_buf_puts(&e->name, suffix);
    expo_pb_sample_t s = {e->name.data, e->name.len,  e->m->labels, e->m->nlabels, xn, xv, v,
                          e->m->ts_ms,  e->m->has_ts, e->f->type,   native};
    return e->fn(e->ctx, &s);
}

static bool classic(emit_t *e, const expo_pb_hist_t *h)
{
    char lb[64];
    bool inf = false;
    for (size_t k = 0; k < h->nbuckets; k++) {
        inf |= isinf(h->upper[k]) && h->upper[k] > 0;
        float_label(h->upper[k], lb, sizeof lb);
        if (!out(e, "_bucket", "le", lb, h->cumulative[k], NULL)) return false;
    }
    if (!inf && !out(e, "_bucket", "le", "+Inf", h->count, NULL)) return false;
    return out(e, "_sum", NULL, NULL, h->sum, NULL) && out(e, "_count", NULL, NULL, h->count, NULL);
}

bool expo_pb_samples(const expo_pb_family_t *fams, size_t n, bool want_native, bool keep_classic,
                     bool (*fn)(void *ctx, const expo_pb_sample_t *s), void *ctx)
{
    emit_t e = {fn, ctx, {0}, NULL, NULL};
    im_buf_init(&e.name, 0);
    bool ok = true;
    char qb[64];
    for (size_t i = 0; i < n && ok; i++) {
        e.f = &fams[i];
        for (size_t j = 0; j < e.f->nmetrics && ok; j++) {
            e.m = &e.f->metrics[j];
            switch (e.f->type) {
            case EXPO_PB_SUMMARY:
                for (size_t q = 0; q < e.m->nquantiles && ok; q++) {
                    float_label(e.m->quantile[q], qb, sizeof qb);
                    ok = out(&e, "", "quantile", qb, e.m->qvalue[q], NULL);
                }
                ok = ok && out(&e, "_sum", NULL, NULL, e.m->ssum, NULL) &&
                     out(&e, "_count", NULL, NULL, e.m->scount, NULL);
                break;
            case EXPO_PB_HISTOGRAM:
            case EXPO_PB_GAUGE_HISTOGRAM: {
                const expo_pb_hist_t *h = &e.m->hist;
                bool nat = h->native && want_native;
                if (nat) ok = out(&e, "", NULL, NULL, 0, h);
                if (ok && (!nat || (keep_classic && h->nbuckets))) ok = classic(&e, h);
                break;
            }
            default: ok = out(&e, "", NULL, NULL, e.m->value, NULL);
            }
        }
    }
    im_buf_free(&e.name);
    return ok;
}
