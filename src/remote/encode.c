/* encode.c — the remote-write 1.0 wire format, written by hand (the receiver's
 * decoder in http/remote_write.c reads the same fields): WriteRequest.timeseries
 * = 1, .metadata = 3; TimeSeries.labels = 1, .samples = 2; Label.name = 1,
 * .value = 2; Sample.value = 1 (double), .timestamp = 2 (int64);
 * MetricMetadata.type = 1 (enum), .metric_family_name = 2, .help = 4, .unit = 5.
 * Sizes are computed before each nested message, so everything is written in
 * one pass into the caller's buffer; then snappy's block format. */
#include "util/base.h"

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

static void put_uv(im_buf_t *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (uint8_t)v;
    (void)im_buf_append(b, t, n);
}

static void put_bytes(im_buf_t *b, unsigned field, const char *s, size_t n)
{
    put_uv(b, (uint64_t)(field << 3 | 2));
    put_uv(b, n);
    (void)im_buf_append(b, s, n);
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

void remote_encode_write_request(im_buf_t *out, const remote_series_t *s, size_t ns,
                                 const remote_metadata_t *md, size_t nmd)
{
    for (size_t i = 0; i < ns; i++) {
        const im_labels_t *ls = s[i].labels;
        size_t len = 0;
        for (uint32_t k = 0; k < ls->n; k++) {
            size_t l = label_len(ls->l[k].name, ls->l[k].value);
            len += 1 + uv_len(l) + l;
        }
        for (size_t k = 0; k < s[i].n; k++) {
            size_t l = sample_len(s[i].t_ms[k]);
            len += 1 + uv_len(l) + l;
        }
        put_uv(out, 1 << 3 | 2);
        put_uv(out, len);
        for (uint32_t k = 0; k < ls->n; k++) {
            const im_istr_t *n = ls->l[k].name, *v = ls->l[k].value;
            put_uv(out, 1 << 3 | 2);
            put_uv(out, label_len(n, v));
            put_bytes(out, 1, n->s, n->len);
            if (v->len) put_bytes(out, 2, v->s, v->len);
        }
        for (size_t k = 0; k < s[i].n; k++) {
            int64_t t = s[i].t_ms[k];
            put_uv(out, 2 << 3 | 2);
            put_uv(out, sample_len(t));
            uint8_t d[9];
            uint64_t vb;
            memcpy(&vb, &s[i].v[k], sizeof vb);
            d[0] = 1 << 3 | 1;
            for (int j = 0; j < 8; j++) d[1 + j] = (uint8_t)(vb >> (8 * j));
            (void)im_buf_append(out, d, 9);
            if (t) {
                put_uv(out, 2 << 3 | 0);
                put_uv(out, (uint64_t)t);
            }
        }
    }
    for (size_t i = 0; i < nmd; i++) {
        int ty = md_type(md[i].type);
        size_t fl = strlen(md[i].family), hl = md[i].help ? strlen(md[i].help) : 0;
        size_t ul = md[i].unit ? strlen(md[i].unit) : 0;
        size_t len = (ty ? 1 + uv_len((uint64_t)ty) : 0) + bytes_len(fl) +
                     (hl ? bytes_len(hl) : 0) + (ul ? bytes_len(ul) : 0);
        put_uv(out, 3 << 3 | 2);
        put_uv(out, len);
        if (ty) {
            put_uv(out, 1 << 3 | 0);
            put_uv(out, (uint64_t)ty);
        }
        put_bytes(out, 2, md[i].family, fl);
        if (hl) put_bytes(out, 4, md[i].help, hl);
        if (ul) put_bytes(out, 5, md[i].unit, ul);
    }
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
