/* nhist_text.c — the test-script notation of native histograms:
 * `{{schema:0 sum:5 count:4 z_bucket:1 z_bucket_w:0.001 buckets:[1 2 1] offset:-1
 * n_buckets:[1] n_offset:0 counter_reset_hint:gauge custom_values:[1 2]}}`
 * (every field optional; buckets are one span starting at offset), parsed into
 * a heap histogram and printed back (for failure messages). */
#include "util/base.h"

#include <math.h>
#include <stdio.h>

#include "promql/nhist.h"
#include "util/fmtfloat.h"
#include "util/mem.h"

static bool sp(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == ',';
}

/* Reads a list `[a b c]` of floats into a heap array. */
static bool parse_list(const char **pp, const char *end, double **out, uint32_t *n)
{
    const char *p = *pp;
    if (p >= end || *p != '[') return false;
    p++;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        while (p < end && sp(*p)) p++;
        if (p >= end) return false;
        if (*p == ']') {
            p++;
            break;
        }
        const char *st = p;
        while (p < end && !sp(*p) && *p != ']') p++;
        double v;
        if (!im_parse_float(st, (size_t)(p - st), &v)) return false;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            *out = im_realloc(*out, cap * sizeof **out);
        }
        (*out)[(*n)++] = v;
    }
    *pp = p;
    return true;
}

static bool parse_num(const char **pp, const char *end, double *v)
{
    const char *p = *pp, *st = p;
    while (p < end && !sp(*p) && *p != '}') p++;
    if (!im_parse_float(st, (size_t)(p - st), v)) return false;
    *pp = p;
    return true;
}

static bool key(const char **pp, const char *end, const char *k)
{
    size_t n = strlen(k);
    if ((size_t)(end - *pp) < n + 1 || memcmp(*pp, k, n) != 0 || (*pp)[n] != ':') return false;
    *pp += n + 1;
    return true;
}

bool promql_fh_parse(const char *s, size_t len, storage_fh_t **out)
{
    const char *p = s, *end = s + len;
    if (len < 4 || memcmp(p, "{{", 2) != 0 || memcmp(end - 2, "}}", 2) != 0) return false;
    p += 2;
    end -= 2;
    double schema = 0, sum = 0, count = 0, zc = 0, zw = 0, off = 0, noff = 0;
    double *pb = NULL, *nb = NULL, *cv = NULL;
    uint32_t npb = 0, nnb = 0, ncv = 0;
    int hint = STORAGE_FH_UNKNOWN;
    bool ok = true;
    while (ok) {
        while (p < end && sp(*p)) p++;
        if (p >= end) break;
        if (key(&p, end, "schema"))
            ok = parse_num(&p, end, &schema);
        else if (key(&p, end, "sum"))
            ok = parse_num(&p, end, &sum);
        else if (key(&p, end, "count"))
            ok = parse_num(&p, end, &count);
        else if (key(&p, end, "z_bucket"))
            ok = parse_num(&p, end, &zc);
        else if (key(&p, end, "z_bucket_w"))
            ok = parse_num(&p, end, &zw);
        else if (key(&p, end, "offset"))
            ok = parse_num(&p, end, &off);
        else if (key(&p, end, "n_offset"))
            ok = parse_num(&p, end, &noff);
        else if (key(&p, end, "buckets"))
            ok = parse_list(&p, end, &pb, &npb);
        else if (key(&p, end, "n_buckets"))
            ok = parse_list(&p, end, &nb, &nnb);
        else if (key(&p, end, "custom_values"))
            ok = parse_list(&p, end, &cv, &ncv);
        else if (key(&p, end, "counter_reset_hint")) {
            static const char *const names[] = {"unknown", "reset", "not_reset", "gauge"};
            const char *st = p;
            while (p < end && !sp(*p)) p++;
            ok = false;
            for (int i = 0; i < 4; i++)
                if (strlen(names[i]) == (size_t)(p - st) &&
                    memcmp(st, names[i], (size_t)(p - st)) == 0) {
                    hint = i;
                    ok = true;
                }
        } else
            ok = false;
    }
    if (ok && (schema != floor(schema) || off != floor(off) || noff != floor(noff) ||
               fabs(off) > 1e6 || fabs(noff) > 1e6 ||
               !((schema >= STORAGE_FH_MIN_SCHEMA && schema <= STORAGE_FH_MAX_SCHEMA) ||
                 schema == STORAGE_FH_CUSTOM)))
        ok = false;
    if (ok && ncv && schema != STORAGE_FH_CUSTOM) ok = false;
    if (ok) {
        storage_fh_t *h =
            storage_fh_place(im_malloc(storage_fh_size(npb, nnb, ncv)), npb, nnb, ncv);
        h->schema = (int32_t)schema;
        h->hint = (uint8_t)hint;
        h->sum = sum;
        h->count = count;
        h->zcount = zc;
        h->zthresh = zw;
        h->poff = (int32_t)off;
        h->noff = (int32_t)noff;
        if (npb) memcpy(h->pos, pb, npb * sizeof(double));
        if (nnb) memcpy(h->neg, nb, nnb * sizeof(double));
        if (ncv) memcpy(h->custom, cv, ncv * sizeof(double));
        *out = h;
    }
    im_free(pb);
    im_free(nb);
    im_free(cv);
    return ok;
}

static void put_num(im_buf_t *b, const char *k, double v)
{
    char fb[IM_FLOAT_BUF];
    im_fmt_float_api(v, fb, sizeof fb);
    im_buf_printf(b, " %s:%s", k, fb);
}

static void put_list(im_buf_t *b, const char *k, const double *v, uint32_t n)
{
    char fb[IM_FLOAT_BUF];
    im_buf_printf(b, " %s:[", k);
    for (uint32_t i = 0; i < n; i++) {
        im_fmt_float_api(v[i], fb, sizeof fb);
        im_buf_printf(b, "%s%s", i ? " " : "", fb);
    }
    im_buf_printf(b, "]");
}

void promql_fh_format(const storage_fh_t *h, im_buf_t *b)
{
    static const char *const hints[] = {"unknown", "reset", "not_reset", "gauge"};
    im_buf_printf(b, "{{schema:%d", (int)h->schema);
    put_num(b, "count", h->count);
    put_num(b, "sum", h->sum);
    if (h->zcount != 0) put_num(b, "z_bucket", h->zcount);
    if (h->zthresh != 0) put_num(b, "z_bucket_w", h->zthresh);
    if (h->npos) {
        if (h->poff) im_buf_printf(b, " offset:%d", (int)h->poff);
        put_list(b, "buckets", h->pos, h->npos);
    }
    if (h->nneg) {
        if (h->noff) im_buf_printf(b, " n_offset:%d", (int)h->noff);
        put_list(b, "n_buckets", h->neg, h->nneg);
    }
    if (h->ncustom) put_list(b, "custom_values", h->custom, h->ncustom);
    if (h->hint != STORAGE_FH_UNKNOWN && h->hint < 4)
        im_buf_printf(b, " counter_reset_hint:%s", hints[h->hint]);
    im_buf_printf(b, "}}");
}

static void push_val(promql_seqval_t **vals, size_t *n, size_t *cap, double v, bool omitted)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *vals = im_realloc(*vals, *cap * sizeof **vals);
    }
    (*vals)[(*n)++] = (promql_seqval_t){v, omitted};
}

/* The end of a `{{…}}` starting at p, or NULL. */
static const char *hist_end(const char *p, const char *end)
{
    for (const char *q = p + 2; q + 1 < end; q++)
        if (q[0] == '}' && q[1] == '}') return q + 2;
    return NULL;
}

void promql_seqvals_free_hists(promql_seqval_t *vals, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const storage_fh_t *h = storage_fh_unbox(vals[i].v);
        if (h) im_free((void *)h);
    }
}

bool promql_series_values_nh(const char *s, size_t slen, promql_seqval_t **vals, size_t *n,
                             size_t *cap)
{
    const char *p = s, *end = s + slen;
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n')) p++;
        if (p >= end) return true;
        if (end - p < 2 || p[0] != '{' || p[1] != '{') {
            const char *st = p;
            while (p < end && *p != ' ' && *p != '\t' && *p != '\n') p++;
            if (!promql_series_values(st, (size_t)(p - st), vals, n, cap, NULL, NULL)) return false;
            continue;
        }
        const char *e1 = hist_end(p, end);
        storage_fh_t *a = NULL, *b = NULL;
        if (!e1 || !promql_fh_parse(p, (size_t)(e1 - p), &a)) return false;
        p = e1;
        double sign = 1;
        if (p + 2 < end && (*p == '+' || *p == '-') && p[1] == '{' && p[2] == '{') {
            sign = *p == '-' ? -1 : 1;
            const char *e2 = hist_end(p + 1, end);
            if (!e2 || !promql_fh_parse(p + 1, (size_t)(e2 - p - 1), &b)) {
                im_free(a);
                return false;
            }
            p = e2;
        }
        uint64_t times = 0;
        bool has_times = false;
        if (p < end && *p == 'x') {
            p++;
            while (p < end && *p >= '0' && *p <= '9') {
                times = times * 10 + (uint64_t)(*p++ - '0');
                if (times > 10000000) break;
            }
            has_times = true;
        }
        if ((p < end && *p != ' ' && *p != '\t' && *p != '\n') || (b && !has_times) ||
            times > 10000000) {
            im_free(a);
            im_free(b);
            return false;
        }
        push_val(vals, n, cap, storage_fh_box(a), false);
        storage_fh_t *cur = a;
        for (uint64_t i = 0; i < times; i++) {
            storage_fh_t *nx = b ? promql_fh_add(NULL, cur, b, sign) : promql_fh_copy(NULL, cur);
            if (!nx) {
                im_free(b);
                return false;
            }
            if (b) nx->hint = cur->hint == STORAGE_FH_GAUGE ? STORAGE_FH_GAUGE : STORAGE_FH_UNKNOWN;
            push_val(vals, n, cap, storage_fh_box(nx), false);
            cur = nx;
        }
        im_free(b);
    }
}
