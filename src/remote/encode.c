/* encode.c — the remote-write 1.0 wire format, written by hand (the receiver's
 * decoder in http/remote_write.c reads the same fields): WriteRequest.timeseries
 * = 1, .metadata = 3; TimeSeries.labels = 1, .samples = 2; Label.name = 1,
 * .value = 2; Sample.value = 1 (double), .timestamp = 2 (int64);
 * MetricMetadata.type = 1 (enum), .metric_family_name = 2, .help = 4, .unit = 5.
 * The whole request is sized first (each nested message's length precedes it),
 * reserved once and written in one pass; then snappy's block format. */
#include "util/base.h"

#include <assert.h>
#include <snappy-c.h>

#include "remote/remote.h"

static size_t uv_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Writers into space reserved beforehand (the whole request is sized first, so
 * the buffer grows once and nothing is copied twice). */
static uint8_t *put_uv(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

static uint8_t *put_bytes(uint8_t *o, unsigned field, const char *s, size_t n)
{
    o = put_uv(o, (uint64_t)(field << 3 | 2));
    o = put_uv(o, n);
    memcpy(o, s, n);
    return o + n;
}

static size_t bytes_len(size_t n)
{
    return 1 + uv_len(n) + n;
}

static size_t label_len(const im_istr_t *k, const im_istr_t *v)
{
    return bytes_len(k->len) + (v->len ? bytes_len(v->len) : 0);
}

static size_t sample_len(int64_t t)
{
    return 9 + (t ? 1 + uv_len((uint64_t)t) : 0);
}

static int md_type(const char *t)
{
    static const char *const names[] = {"unknown",        "counter", "gauge", "histogram",
                                        "gaugehistogram", "summary", "info",  "stateset"};
    for (int i = 0; i < 8; i++)
        if (t && !strcmp(t, names[i])) return i;
    return 0;
}

static size_t series_body_len(const remote_series_t *s)
{
    const im_labels_t *ls = s->labels;
    size_t len = 0;
    for (uint32_t k = 0; k < ls->n; k++) {
        size_t l = label_len(ls->l[k].name, ls->l[k].value);
        len += 1 + uv_len(l) + l;
    }
    for (size_t k = 0; k < s->n; k++) {
        size_t l = sample_len(s->t_ms[k]);
        len += 1 + uv_len(l) + l;
    }
    return len;
}

static uint8_t *put_series(uint8_t *o, const remote_series_t *s, size_t len)
{
    const im_labels_t *ls = s->labels;
    o = put_uv(o, 1 << 3 | 2);
    o = put_uv(o, len);
    for (uint32_t k = 0; k < ls->n; k++) {
        const im_istr_t *n = ls->l[k].name, *v = ls->l[k].value;
        o = put_uv(o, 1 << 3 | 2);
        o = put_uv(o, label_len(n, v));
        o = put_bytes(o, 1, n->s, n->len);
        if (v->len) o = put_bytes(o, 2, v->s, v->len);
    }
    for (size_t k = 0; k < s->n; k++) {
        int64_t t = s->t_ms[k];
        uint64_t vb;
        memcpy(&vb, &s->v[k], sizeof vb);
        o = put_uv(o, 2 << 3 | 2);
        o = put_uv(o, sample_len(t));
        *o++ = 1 << 3 | 1;
        for (int j = 0; j < 8; j++) *o++ = (uint8_t)(vb >> (8 * j));
        if (t) {
            *o++ = 2 << 3 | 0;
            o = put_uv(o, (uint64_t)t);
        }
    }
    return o;
}

static size_t md_body_len(const remote_metadata_t *m, int ty)
{
    size_t fl = strlen(m->family), hl = m->help ? strlen(m->help) : 0;
    size_t ul = m->unit ? strlen(m->unit) : 0;
    return (ty ? 1 + uv_len((uint64_t)ty) : 0) + bytes_len(fl) + (hl ? bytes_len(hl) : 0) +
           (ul ? bytes_len(ul) : 0);
}

static uint8_t *put_md(uint8_t *o, const remote_metadata_t *m, int ty, size_t len)
{
    o = put_uv(o, 3 << 3 | 2);
    o = put_uv(o, len);
    if (ty) {
        *o++ = 1 << 3 | 0;
        o = put_uv(o, (uint64_t)ty);
    }
    o = put_bytes(o, 2, m->family, strlen(m->family));
    if (m->help && *m->help) o = put_bytes(o, 4, m->help, strlen(m->help));
    if (m->unit && *m->unit) o = put_bytes(o, 5, m->unit, strlen(m->unit));
    return o;
}

void remote_encode_write_request(im_buf_t *out, const remote_series_t *s, size_t ns,
                                 const remote_metadata_t *md, size_t nmd)
{
    size_t total = 0, *lens = ns ? im_malloc(ns * sizeof *lens) : NULL;
    for (size_t i = 0; i < ns; i++) {
        size_t l = lens[i] = series_body_len(&s[i]);
        total += 1 + uv_len(l) + l;
    }
    for (size_t i = 0; i < nmd; i++) {
        size_t l = md_body_len(&md[i], md_type(md[i].type));
        total += 1 + uv_len(l) + l;
    }
    if (im_buf_reserve(out, total) != IM_OK) im_oom(total);
    uint8_t *o = (uint8_t *)out->data + out->len, *o0 = o;
    for (size_t i = 0; i < ns; i++) o = put_series(o, &s[i], lens[i]);
    im_free(lens);
    for (size_t i = 0; i < nmd; i++) {
        int ty = md_type(md[i].type);
        o = put_md(o, &md[i], ty, md_body_len(&md[i], ty));
    }
    assert((size_t)(o - o0) == total);
    out->len += total;
    out->data[out->len] = '\0';
}

im_rc remote_snappy(const im_buf_t *in, im_buf_t *out)
{
    size_t cap = snappy_max_compressed_length(in->len);
    im_buf_reset(out);
    if (im_buf_reserve(out, cap) != IM_OK) return IM_ELIMIT;
    size_t n = cap;
    if (snappy_compress(in->data ? in->data : "", in->len, out->data, &n) != SNAPPY_OK)
        return IM_ERR;
    out->len = n;
    return IM_OK;
}
