/* remote_write.c — the remote-write 1.0 receiver: a snappy-compressed protobuf
 * WriteRequest decoded by hand (only the fields remote write 1.0 defines:
 * WriteRequest.timeseries = 1, TimeSeries.labels = 1 and samples = 2,
 * Label.name = 1 and value = 2, Sample.value = 1 (double) and timestamp = 2
 * (int64); metadata, exemplars and histograms are skipped), appended through one
 * appender. Labels may come in any order (they are sorted); an empty or invalid
 * label name, a value that is not UTF-8 and a name given twice in one series
 * refuse the request with 400. As Prometheus' receiver: the first out-of-order, out-of-bounds or
 * duplicate sample rolls back the whole request and answers 400 (so the sender
 * does not retry it); the answer 204 is sent only after the commit, which writes
 * the WAL before it returns. */
#include "util/base.h"

#include <snappy-c.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>

#include "config/yaml.h"
#include "http/http_int.h"
#include "http/pb.h"
#include "util/log.h"

#define RW_MAX_DECOMPRESSED (256u << 20)

typedef struct rw_sample {
    double v;
    int64_t t;
} rw_sample_t;

/* The label names of one series, to find a repeated one whatever its length,
 * its value (an empty value is a label too) and the order of the labels. */
typedef struct rw_names {
    http__pb_t *v;
    size_t n, cap;
} rw_names_t;

static int name_cmp(const void *a, const void *b)
{
    const http__pb_t *x = a, *y = b;
    size_t xl = (size_t)(x->end - x->p), yl = (size_t)(y->end - y->p);
    int c = memcmp(x->p, y->p, IM_MIN(xl, yl));
    return c ? c : (xl < yl ? -1 : xl > yl);
}

/* Prometheus refuses such a series with "label name ... is not unique" (it
 * answers 500, so the sender retries it for ever; a 400 drops the batch). */
static im_rc check_unique(rw_names_t *nm, im_err_t *err)
{
    if (nm->n > 1) qsort(nm->v, nm->n, sizeof *nm->v, name_cmp);
    for (size_t i = 1; i < nm->n; i++)
        if (!name_cmp(&nm->v[i - 1], &nm->v[i])) {
            size_t l = (size_t)(nm->v[i].end - nm->v[i].p);
            return im_err_set(err, IM_EPARSE,
                              "label name \"%.*s\"%s is not unique: invalid sample (a series "
                              "of the request has it twice)",
                              (int)IM_MIN(l, 100), (const char *)nm->v[i].p, l > 100 ? "..." : "");
        }
    return IM_OK;
}

static im_rc decode_series(http__pb_t *ts, im_labels_builder_t *lb, rw_names_t *nm,
                           rw_sample_t **samples, size_t *ns, size_t *cap, im_err_t *err)
{
    im_lb_reset(lb);
    nm->n = 0;
    *ns = 0;
    while (ts->p < ts->end) {
        uint64_t key;
        if (!http__pb_varint(ts, &key)) return im_err_set(err, IM_EPARSE, "truncated time series");
        unsigned f = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
        if (f == 1 && wt == 2) {
            http__pb_t l;
            if (!http__pb_len(ts, &l)) return im_err_set(err, IM_EPARSE, "truncated label");
            http__pb_t name = {NULL, NULL}, value = {NULL, NULL};
            while (l.p < l.end) {
                uint64_t k2;
                if (!http__pb_varint(&l, &k2)) return im_err_set(err, IM_EPARSE, "truncated label");
                http__pb_t *dst = (k2 >> 3) == 1 ? &name : (k2 >> 3) == 2 ? &value : NULL;
                if (dst && (k2 & 7) == 2) {
                    if (!http__pb_len(&l, dst))
                        return im_err_set(err, IM_EPARSE, "truncated label");
                } else if (!http__pb_skip(&l, (unsigned)(k2 & 7))) {
                    return im_err_set(err, IM_EPARSE, "malformed label");
                }
            }
            size_t nl = name.p ? (size_t)(name.end - name.p) : 0;
            size_t vl = value.p ? (size_t)(value.end - value.p) : 0;
            if (!im_label_name_valid((const char *)name.p, nl))
                return im_err_set(err, IM_EPARSE, "invalid label name \"%.*s\"",
                                  (int)IM_MIN(nl, 100), name.p ? (const char *)name.p : "");
            if (!im_utf8_valid((const char *)value.p, vl))
                return im_err_set(err, IM_EPARSE, "invalid label value (not UTF-8)");
            if (nm->n == nm->cap) {
                nm->cap = nm->cap ? nm->cap * 2 : 16;
                nm->v = im_realloc(nm->v, nm->cap * sizeof *nm->v);
            }
            nm->v[nm->n++] = name;
            im_lb_set(lb, (const char *)name.p, nl, vl ? (const char *)value.p : "", vl);
        } else if (f == 2 && wt == 2) {
            http__pb_t s;
            if (!http__pb_len(ts, &s)) return im_err_set(err, IM_EPARSE, "truncated sample");
            rw_sample_t smp = {0, 0};
            while (s.p < s.end) {
                uint64_t k2;
                if (!http__pb_varint(&s, &k2))
                    return im_err_set(err, IM_EPARSE, "truncated sample");
                if (k2 == ((1 << 3) | 1)) {
                    if (s.end - s.p < 8)
                        return im_err_set(err, IM_EPARSE, "truncated sample value");
                    uint64_t bits = 0;
                    for (int i = 7; i >= 0; i--) bits = bits << 8 | s.p[i];
                    memcpy(&smp.v, &bits, 8);
                    s.p += 8;
                } else if (k2 == ((2 << 3) | 0)) {
                    uint64_t t;
                    if (!http__pb_varint(&s, &t))
                        return im_err_set(err, IM_EPARSE, "truncated timestamp");
                    smp.t = (int64_t)t;
                } else if (!http__pb_skip(&s, (unsigned)(k2 & 7))) {
                    return im_err_set(err, IM_EPARSE, "malformed sample");
                }
            }
            if (*ns == *cap) {
                *cap = *cap ? *cap * 2 : 16;
                *samples = im_realloc(*samples, *cap * sizeof **samples);
            }
            (*samples)[(*ns)++] = smp;
        } else if (!http__pb_skip(ts, wt)) {
            return im_err_set(err, IM_EPARSE, "malformed time series field %u", f);
        }
    }
    return check_unique(nm, err);
}

/* Snappy-decompresses body into a new *raw (im_free) of *got bytes, at most
 * RW_MAX_DECOMPRESSED. IM_EPARSE or IM_ELIMIT (*raw NULL) on failure. */
static im_rc rw_uncompress(const char *body, size_t len, char **raw, size_t *got, im_err_t *err)
{
    *raw = NULL;
    size_t ulen;
    if (snappy_uncompressed_length(body, len, &ulen) != SNAPPY_OK)
        return im_err_set(err, IM_EPARSE, "snappy: corrupt input");
    if (ulen > RW_MAX_DECOMPRESSED)
        return im_err_set(err, IM_ELIMIT, "decompressed request larger than %u bytes",
                          RW_MAX_DECOMPRESSED);
    char *out = im_malloc(ulen ? ulen : 1);
    *got = ulen;
    if (snappy_uncompress(body, len, out, got) != SNAPPY_OK) {
        im_free(out);
        return im_err_set(err, IM_EPARSE, "snappy: corrupt input");
    }
    *raw = out;
    return IM_OK;
}

im_rc http_remote_write_decode_append(storage_t *storage, const char *body, size_t len,
                                      http_rw_stats_t *st, im_err_t *err)
{
    memset(st, 0, sizeof *st);
    char *raw;
    size_t got;
    im_rc urc = rw_uncompress(body, len, &raw, &got, err);
    if (urc) return urc;
    http__pb_t b = {(const uint8_t *)raw, (const uint8_t *)raw + got};
    im_labels_builder_t lb;
    im_lb_init(&lb);
    rw_sample_t *samples = NULL;
    size_t ns = 0, cap = 0;
    rw_names_t names = {NULL, 0, 0};
    storage_appender_t *a = storage_appender(storage);
    im_rc rc = IM_OK;
    while (b.p < b.end && rc == IM_OK) {
        uint64_t key;
        if (!http__pb_varint(&b, &key)) {
            rc = im_err_set(err, IM_EPARSE, "truncated write request");
            break;
        }
        if (key != ((1 << 3) | 2)) {
            if (!http__pb_skip(&b, (unsigned)(key & 7)))
                rc = im_err_set(err, IM_EPARSE, "malformed write request");
            continue;
        }
        http__pb_t ts;
        if (!http__pb_len(&b, &ts)) {
            rc = im_err_set(err, IM_EPARSE, "truncated time series");
            break;
        }
        rc = decode_series(&ts, &lb, &names, &samples, &ns, &cap, err);
        if (rc) break;
        if (lb.n == 0) {
            rc = im_err_set(err, IM_EPARSE, "time series without labels");
            break;
        }
        const im_labels_t *ls = im_lb_build(&lb);
        st->series++;
        storage_ref_t ref = 0;
        for (size_t i = 0; i < ns && rc == IM_OK; i++) {
            im_rc arc =
                storage_appender_add(a, ref, ref ? NULL : ls, samples[i].t, samples[i].v, &ref);
            if (arc == IM_OK) {
                st->samples++;
                continue;
            }
            if (arc == IM_EOUTOFORDER)
                st->out_of_order++;
            else if (arc == IM_EDUPLICATE)
                st->duplicates++;
            else if (arc == IM_EOUTOFBOUNDS)
                st->out_of_bounds++;
            rc = im_err_set(err, arc, "%s", storage_appender_error(a)); /* names the limit */
            im_buf_t lbuf;
            im_buf_init(&lbuf, 4096);
            (void)im_labels_format(ls, &lbuf);
            IM_ERROR("Out of order sample from remote write", "err=%s series=%s timestamp=%lld",
                     im_logq(storage_appender_error(a)), im_logq(lbuf.data ? lbuf.data : ""),
                     (long long)samples[i].t);
            im_buf_free(&lbuf);
        }
        im_labels_unref(ls);
    }
    if (rc == IM_OK) {
        rc = storage_appender_commit(a, err);
    } else {
        storage_appender_rollback(a);
        st->samples = 0;
    }
    im_free(samples);
    im_free(names.v);
    im_lb_free(&lb);
    im_free(raw);
    return rc;
}

/* Content negotiation as Prometheus 3 for the media type application/x-protobuf:
 * its proto=... parameter (every parameter a key=value pair) names the message,
 * none meaning 1.0. No Content-Type, or another media type (curl's and
 * urllib's default form type), is read as 1.0 as before (Prometheus 2.x does;
 * Prometheus 3 answers 415 to another media type). Returns 1 or 2, or 0 with
 * the 415 message in msg. */
#define RW_PROTO_V1 "prometheus.WriteRequest"
#define RW_PROTO_V2 "io.prometheus.write.v2.Request"
#define RW_MEDIA    "application/x-protobuf"

int http__rw_negotiate(const char *ctype, char *msg, size_t msz)
{
    if (!ctype || !*ctype) return 1;
    while (*ctype == ' ' || (*ctype >= '\t' && *ctype <= '\r')) ctype++;
    size_t n = strlen(ctype);
    while (n && (ctype[n - 1] == ' ' || (ctype[n - 1] >= '\t' && ctype[n - 1] <= '\r'))) n--;
    const char *end = ctype + n, *semi = memchr(ctype, ';', n);
    const char *p0end = semi ? semi : end;
    if ((size_t)(p0end - ctype) != strlen(RW_MEDIA) || memcmp(ctype, RW_MEDIA, strlen(RW_MEDIA)))
        return 1;
    for (const char *p = semi; p && p < end;) {
        p++;
        const char *q = memchr(p, ';', (size_t)(end - p));
        if (!q) q = end;
        const char *eq = memchr(p, '=', (size_t)(q - p));
        if (!eq || memchr(eq + 1, '=', (size_t)(q - eq - 1))) {
            snprintf(msg, msz,
                     "as per https://www.rfc-editor.org/rfc/rfc9110#parameter expected parameters "
                     "to be key-values, got %.*s in %.*s content-type",
                     (int)IM_MIN((size_t)(q - p), 100), p, (int)IM_MIN(n, 200), ctype);
            return 0;
        }
        if (eq - p == 5 && !memcmp(p, "proto", 5)) {
            size_t vl = (size_t)(q - eq - 1);
            if (vl == strlen(RW_PROTO_V1) && !memcmp(eq + 1, RW_PROTO_V1, vl)) return 1;
            if (vl == strlen(RW_PROTO_V2) && !memcmp(eq + 1, RW_PROTO_V2, vl)) return 2;
            snprintf(msg, msz,
                     "got %.*s content type; unknown remote write protobuf message %.*s, "
                     "supported: %s, %s",
                     (int)IM_MIN(n, 200), ctype, (int)IM_MIN(vl, 100), eq + 1, RW_PROTO_V1,
                     RW_PROTO_V2);
            return 0;
        }
        p = q;
    }
    return 1;
}

static enum MHD_Result rw_refuse(http_server_t *s, http__req_t *r, unsigned code, const char *msg)
{
    char m[700];
    snprintf(m, sizeof m, "%s\n", msg);
    pthread_mutex_lock(&s->mu);
    s->rw_requests++;
    s->rw_failures++;
    pthread_mutex_unlock(&s->mu);
    return http__send_text(s, r, code, m);
}

static void rw2_header(http__req_t *r, const char *name, uint64_t v)
{
    if (r->nxhdr >= IM_ARRAY_LEN(r->xhdr)) return;
    r->xhdr[r->nxhdr].name = name;
    snprintf(r->xhdr[r->nxhdr].value, sizeof r->xhdr[0].value, "%llu", (unsigned long long)v);
    r->nxhdr++;
}

/* Remote write 2.0: a wire-format error refuses the whole request (400,
 * nothing written); refused series or samples give a 400 listing them after the
 * rest is committed (a partial write); a store failure rolls back (500). The
 * written counts go in the X-Prometheus-Remote-Write-*-Written headers of
 * every answer. */
static enum MHD_Result rw2_handle(http_server_t *s, http__req_t *r)
{
    http_rw2_req_t q;
    http_rw2_stats_t st;
    memset(&st, 0, sizeof st);
    im_err_t err;
    im_err_clear(&err);
    im_buf_t errs;
    im_buf_init(&errs, 0);
    im_rc rc = http_rw2_decode_snappy(r->body.data ? r->body.data : "", r->body.len, &q, &err);
    bool decoded = rc == IM_OK;
    if (decoded) rc = http_rw2_append(s->opts.storage, s->rw_meta, &q, &st, &errs, &err);
    http_rw2_req_free(&q);
    pthread_mutex_lock(&s->mu);
    s->rw_requests++;
    s->rw2_requests++;
    s->rw_samples += st.samples;
    s->rw2_exemplars_dropped += st.exemplars_dropped;
    s->rw2_histograms_refused += st.histograms_refused;
    if (rc != IM_OK) s->rw_failures++;
    pthread_mutex_unlock(&s->mu);
    rw2_header(r, "X-Prometheus-Remote-Write-Samples-Written", st.samples);
    rw2_header(r, "X-Prometheus-Remote-Write-Histograms-Written", st.histograms);
    rw2_header(r, "X-Prometheus-Remote-Write-Exemplars-Written", st.exemplars);
    enum MHD_Result ret;
    if (rc == IM_OK) {
        im_buf_t b;
        im_buf_init(&b, 0);
        ret = http__send(s, r, 204, NULL, &b);
    } else if (decoded && rc == IM_EPARSE) { /* partial write */
        ret = http__send(s, r, 400, "text/plain; charset=utf-8", &errs);
    } else {
        char m[IM_ERR_MSG_MAX + 2];
        snprintf(m, sizeof m, "%s\n", err.msg);
        bool bad = rc == IM_EPARSE || rc == IM_ELIMIT;
        IM_ERROR(bad ? "Error decoding v2 remote write request"
                     : "Error while remote writing the v2 request",
                 "err=%s", im_logq(err.msg));
        ret = http__send_text(s, r, bad ? 400 : 500, m);
    }
    im_buf_free(&errs);
    return ret;
}

enum MHD_Result http__remote_write(http_server_t *s, http__req_t *r)
{
    char why[600];
    const char *ctype = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Type");
    int ver = http__rw_negotiate(ctype, why, sizeof why);
    if (!ver) {
        IM_ERROR("Error decoding remote write request", "err=%s", im_logq(why));
        return rw_refuse(s, r, 415, why);
    }
    const char *enc = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Encoding");
    if (enc && *enc && strcasecmp(enc, "snappy")) {
        snprintf(why, sizeof why,
                 "%.200s encoding (compression) is not accepted by this server; only snappy is "
                 "acceptable",
                 enc);
        IM_ERROR("Error decoding remote write request", "err=%s", im_logq(why));
        return rw_refuse(s, r, 415, why);
    }
    if (ver == 2) return rw2_handle(s, r);
    http_rw_stats_t st;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = http_remote_write_decode_append(s->opts.storage, r->body.data ? r->body.data : "",
                                               r->body.len, &st, &err);
    pthread_mutex_lock(&s->mu);
    s->rw_requests++;
    if (rc == IM_OK)
        s->rw_samples += st.samples;
    else
        s->rw_failures++;
    pthread_mutex_unlock(&s->mu);
    if (rc == IM_OK) {
        im_buf_t b;
        im_buf_init(&b, 0);
        return http__send(s, r, 204, NULL, &b);
    }
    char m[IM_ERR_MSG_MAX + 2];
    snprintf(m, sizeof m, "%s\n", err.msg);
    if (rc == IM_EPARSE || rc == IM_EOUTOFORDER || rc == IM_EDUPLICATE || rc == IM_EOUTOFBOUNDS ||
        rc == IM_ELIMIT) {
        if (rc == IM_EPARSE)
            IM_ERROR("Error decoding remote write request", "err=%s", im_logq(err.msg));
        return http__send_text(s, r, 400, m);
    }
    IM_ERROR("Error appending remote write", "err=%s", im_logq(err.msg));
    return http__send_text(s, r, 500, m);
}

/* ---- Remote write 2.0 ----
 * io.prometheus.write.v2.Request: symbols = 4 (string), timeseries = 5.
 * TimeSeries: labels_refs = 1 (uint32, packed or not), samples = 2, histograms
 * = 3 (counted, refused), exemplars = 4, metadata = 5, created_timestamp = 6
 * (int64). Sample: value = 1 (double), timestamp = 2 (int64). Exemplar:
 * labels_refs = 1, value = 2, timestamp = 3. Metadata: type = 1 (enum), help_ref
 * = 3, unit_ref = 4. Unknown fields are skipped (proto3); a known field with
 * another wire type is malformed. */

#define RW2_GROW(arr, n, cap)                                                                      \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? (cap)*2 : 16;                                                          \
            (arr) = im_realloc((arr), (cap) * sizeof *(arr));                                      \
        }                                                                                          \
    } while (0)

typedef struct rw2_caps {
    size_t sym, refs, smp, ex, ts;
} rw2_caps_t;

/* labels_refs: a packed run of varints (wire type 2) or one varint (0). A
 * reference above 2^32-1 is kept as UINT32_MAX, outside any symbol table. */
static im_rc rw2_refs(http__pb_t *b, unsigned wt, http_rw2_req_t *q, rw2_caps_t *c, size_t *n,
                      im_err_t *err)
{
    uint64_t v;
    if (wt == 0) {
        if (!http__pb_varint(b, &v)) return im_err_set(err, IM_EPARSE, "truncated labels_refs");
        RW2_GROW(q->refs, q->nrefs, c->refs);
        q->refs[q->nrefs++] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
        (*n)++;
        return IM_OK;
    }
    if (wt != 2) return im_err_set(err, IM_EPARSE, "labels_refs with wire type %u", wt);
    http__pb_t r;
    if (!http__pb_len(b, &r)) return im_err_set(err, IM_EPARSE, "truncated labels_refs");
    while (r.p < r.end) {
        if (!http__pb_varint(&r, &v)) return im_err_set(err, IM_EPARSE, "truncated labels_refs");
        RW2_GROW(q->refs, q->nrefs, c->refs);
        q->refs[q->nrefs++] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
        (*n)++;
    }
    return IM_OK;
}

/* Field loop of a sub-message: key read, then f and wt set. */
#define RW2_KEY(b, what)                                                                           \
    uint64_t key_;                                                                                 \
    if (!http__pb_varint((b), &key_)) return im_err_set(err, IM_EPARSE, "truncated %s", (what));   \
    unsigned f = (unsigned)(key_ >> 3), wt = (unsigned)(key_ & 7)

static im_rc rw2_wrong(unsigned f, unsigned wt, const char *msg, im_err_t *err)
{
    return im_err_set(err, IM_EPARSE, "malformed %s: field %u with wire type %u", msg, f, wt);
}

/* The (double value, int64 timestamp) pair of Sample (fields 1, 2) and
 * Exemplar (2, 3): field vf is the value, vf + 1 the timestamp. Returns 1 when
 * f was one of them (read), 0 when not, -1 on an error (*rc set). */
static int rw2_value_time(http__pb_t *s, unsigned f, unsigned wt, unsigned vf, double *v,
                          int64_t *t, const char *what, im_rc *rc, im_err_t *err)
{
    uint64_t u;
    if (f != vf && f != vf + 1) return 0;
    if (f == vf && wt == 1) {
        if (http__pb_double(s, v)) return 1;
    } else if (f == vf + 1 && wt == 0) {
        if (http__pb_varint(s, &u)) {
            *t = (int64_t)u;
            return 1;
        }
    } else {
        *rc = rw2_wrong(f, wt, what, err);
        return -1;
    }
    *rc = im_err_set(err, IM_EPARSE, "truncated %s", what);
    return -1;
}

static im_rc rw2_sample(http__pb_t *s, http_rw2_sample_t *out, im_err_t *err)
{
    out->v = 0;
    out->t = 0;
    while (s->p < s->end) {
        RW2_KEY(s, "sample");
        im_rc rc = IM_OK;
        int r = rw2_value_time(s, f, wt, 1, &out->v, &out->t, "sample", &rc, err);
        if (r < 0) return rc;
        if (r == 0 && !http__pb_skip(s, wt)) return im_err_set(err, IM_EPARSE, "malformed sample");
    }
    return IM_OK;
}

static im_rc rw2_exemplar(http__pb_t *s, http_rw2_req_t *q, rw2_caps_t *c, im_err_t *err)
{
    RW2_GROW(q->exemplars, q->nexemplars, c->ex);
    http_rw2_exemplar_t *e = &q->exemplars[q->nexemplars];
    memset(e, 0, sizeof *e);
    e->refs = q->nrefs;
    while (s->p < s->end) {
        RW2_KEY(s, "exemplar");
        im_rc rc = IM_OK;
        if (f == 1) {
            if ((rc = rw2_refs(s, wt, q, c, &e->nrefs, err))) return rc;
            continue;
        }
        int r = rw2_value_time(s, f, wt, 2, &e->v, &e->t, "exemplar", &rc, err);
        if (r < 0) return rc;
        if (r == 0 && !http__pb_skip(s, wt))
            return im_err_set(err, IM_EPARSE, "malformed exemplar");
    }
    q->nexemplars++;
    return IM_OK;
}

static im_rc rw2_metadata(http__pb_t *s, http_rw2_series_t *ts, im_err_t *err)
{
    while (s->p < s->end) {
        RW2_KEY(s, "metadata");
        uint64_t v;
        if ((f == 1 || f == 3 || f == 4) && wt == 0) {
            if (!http__pb_varint(s, &v)) return im_err_set(err, IM_EPARSE, "truncated metadata");
            uint32_t v32 = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
            if (f == 1)
                ts->type = v32;
            else if (f == 3)
                ts->help_ref = v32;
            else
                ts->unit_ref = v32;
        } else if (f == 1 || f == 3 || f == 4) {
            return rw2_wrong(f, wt, "metadata", err);
        } else if (!http__pb_skip(s, wt)) {
            return im_err_set(err, IM_EPARSE, "malformed metadata");
        }
    }
    return IM_OK;
}

static im_rc rw2_series(http__pb_t *b, http_rw2_req_t *q, rw2_caps_t *c, im_err_t *err)
{
    http_rw2_series_t ts;
    memset(&ts, 0, sizeof ts);
    /* A series' own references and samples come first in the arrays, its
     * exemplars' references after them: collect exemplars in a second pass. */
    const uint8_t *start = b->p;
    ts.refs = q->nrefs;
    ts.samples = q->nsamples;
    while (b->p < b->end) {
        RW2_KEY(b, "time series");
        http__pb_t sub;
        uint64_t v;
        im_rc rc;
        if (f == 1) {
            if ((rc = rw2_refs(b, wt, q, c, &ts.nrefs, err))) return rc;
        } else if (f >= 2 && f <= 5 && wt != 2) {
            return rw2_wrong(f, wt, "time series", err);
        } else if (f == 2) {
            if (!http__pb_len(b, &sub)) return im_err_set(err, IM_EPARSE, "truncated sample");
            RW2_GROW(q->samples, q->nsamples, c->smp);
            if ((rc = rw2_sample(&sub, &q->samples[q->nsamples], err))) return rc;
            q->nsamples++;
            ts.nsamples++;
        } else if (f == 3 || f == 4) {
            if (!http__pb_len(b, &sub)) return im_err_set(err, IM_EPARSE, "truncated time series");
            if (f == 3) ts.nhistograms++;
        } else if (f == 5) {
            if (!http__pb_len(b, &sub)) return im_err_set(err, IM_EPARSE, "truncated metadata");
            if ((rc = rw2_metadata(&sub, &ts, err))) return rc;
        } else if (f == 6) {
            if (wt != 0) return rw2_wrong(f, wt, "time series", err);
            if (!http__pb_varint(b, &v)) return im_err_set(err, IM_EPARSE, "truncated time series");
            ts.created_ms = (int64_t)v;
        } else if (!http__pb_skip(b, wt)) {
            return im_err_set(err, IM_EPARSE, "malformed time series field %u", f);
        }
    }
    ts.exemplars = q->nexemplars;
    http__pb_t again = {start, b->end};
    while (again.p < again.end) {
        uint64_t key = 0;
        (void)http__pb_varint(&again, &key); /* framing checked by the first pass */
        if (key == ((4 << 3) | 2)) {
            http__pb_t sub;
            (void)http__pb_len(&again, &sub);
            im_rc rc = rw2_exemplar(&sub, q, c, err);
            if (rc) return rc;
            ts.nexemplars++;
        } else {
            (void)http__pb_skip(&again, (unsigned)(key & 7));
        }
    }
    RW2_GROW(q->series, q->nseries, c->ts);
    q->series[q->nseries++] = ts;
    return IM_OK;
}

im_rc http_rw2_decode(const uint8_t *p, size_t len, http_rw2_req_t *q, im_err_t *err)
{
    char *raw = q->raw;
    memset(q, 0, sizeof *q);
    q->raw = raw;
    rw2_caps_t c = {0, 0, 0, 0, 0};
    http__pb_t b = {p, p + len};
    while (b.p < b.end) {
        RW2_KEY(&b, "write request");
        http__pb_t sub;
        if (f == 4 || f == 5) {
            if (wt != 2) return rw2_wrong(f, wt, "write request", err);
            if (!http__pb_len(&b, &sub))
                return im_err_set(err, IM_EPARSE, "truncated %s",
                                  f == 4 ? "symbol" : "time series");
            if (f == 4) {
                RW2_GROW(q->symbols, q->nsymbols, c.sym);
                q->symbols[q->nsymbols].p = (const char *)sub.p;
                q->symbols[q->nsymbols++].len = (size_t)(sub.end - sub.p);
            } else {
                im_rc rc = rw2_series(&sub, q, &c, err);
                if (rc) return rc;
            }
        } else if (!http__pb_skip(&b, wt)) {
            return im_err_set(err, IM_EPARSE, "malformed write request");
        }
    }
    return IM_OK;
}

im_rc http_rw2_decode_snappy(const char *body, size_t len, http_rw2_req_t *q, im_err_t *err)
{
    memset(q, 0, sizeof *q);
    size_t got;
    im_rc rc = rw_uncompress(body, len, &q->raw, &got, err);
    if (rc) return rc;
    return http_rw2_decode((const uint8_t *)q->raw, got, q, err);
}

void http_rw2_req_free(http_rw2_req_t *q)
{
    im_free(q->raw);
    im_free(q->symbols);
    im_free(q->refs);
    im_free(q->samples);
    im_free(q->exemplars);
    im_free(q->series);
    memset(q, 0, sizeof *q);
}

/* ---- The metadata of remote write 2.0 ----
 *
 * Kept in memory (sorted by metric name) and, with a path, in a log file next to
 * the store: every change is appended as one line "metric\ttype\thelp\tunit\n"
 * (\\, \t, \n escaped) before the request is answered, so what a 2xx
 * acknowledged survives a restart and a SIGKILL; opening replays the log
 * (latest wins) and, when it holds more than twice the entries, rewrites it
 * (write, rename). At most max metric names are kept: a new one past it is not
 * stored, logged (naming --web.remote-write-max-metadata) and counted; its
 * samples are written all the same. */

typedef struct rw_meta_entry {
    char *metric, *type, *help, *unit; /* owned */
} rw_meta_entry_t;

struct http_rw_meta {
    pthread_mutex_t mu;
    rw_meta_entry_t *e; /* sorted by metric */
    size_t n, cap, max;
    char *path; /* owned; NULL = memory only */
    FILE *log;  /* append handle of path */
    size_t log_lines;
    uint64_t dropped; /* new names refused at max */
    im_buf_t line;
};

#define RW_META_DEFAULT_MAX 100000

static void meta_esc(im_buf_t *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\' || c == '\t' || c == '\n')
            (void)im_buf_printf(b, "\\%c", c == '\\' ? '\\' : c == '\t' ? 't' : 'n');
        else
            (void)im_buf_putc(b, c);
    }
}

/* Unescapes the field starting at *p up to a tab or the end (in place). */
static char *meta_field(char **p)
{
    char *r = *p, *w = *p, *q = *p;
    for (; *q && *q != '\t'; q++) {
        if (*q == '\\' && q[1]) {
            q++;
            *w++ = *q == 't' ? '\t' : *q == 'n' ? '\n' : *q;
        } else {
            *w++ = *q;
        }
    }
    *p = *q ? q + 1 : q;
    *w = 0;
    return r;
}

static rw_meta_entry_t *meta_set_locked(http_rw_meta_t *m, const char *metric, size_t mlen,
                                        const char *type, const char *help, size_t hlen,
                                        const char *unit, size_t ulen);

static void meta_write_entry(im_buf_t *b, const rw_meta_entry_t *e)
{
    meta_esc(b, e->metric, strlen(e->metric));
    (void)im_buf_putc(b, '\t');
    meta_esc(b, e->type, strlen(e->type));
    (void)im_buf_putc(b, '\t');
    meta_esc(b, e->help, strlen(e->help));
    (void)im_buf_putc(b, '\t');
    meta_esc(b, e->unit, strlen(e->unit));
    (void)im_buf_putc(b, '\n');
}

/* Rewrites the log from the entries (write, rename) and reopens it. */
static void meta_compact(http_rw_meta_t *m)
{
    im_buf_t b, tmp;
    im_buf_init(&b, 0);
    im_buf_init(&tmp, 0);
    for (size_t i = 0; i < m->n; i++) meta_write_entry(&b, &m->e[i]);
    (void)im_buf_printf(&tmp, "%s.tmp", m->path);
    FILE *f = fopen(tmp.data, "w");
    bool ok = f && fwrite(b.data ? b.data : "", 1, b.len, f) == b.len;
    if (f) ok = fclose(f) == 0 && ok;
    if (ok && rename(tmp.data, m->path) == 0) {
        if (m->log) fclose(m->log);
        m->log = fopen(m->path, "a");
        m->log_lines = m->n;
    } else {
        IM_ERROR("cannot rewrite the remote-write metadata file", "file=%s", im_logq(m->path));
    }
    im_buf_free(&b);
    im_buf_free(&tmp);
}

http_rw_meta_t *http_rw_meta_open(const char *path, size_t max)
{
    http_rw_meta_t *m = im_calloc(1, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
    m->max = max ? max : RW_META_DEFAULT_MAX;
    im_buf_init(&m->line, 0);
    if (!path) return m;
    m->path = im_strdup(path);
    im_buf_t file;
    im_buf_init(&file, 0);
    int eno = 0;
    bool have = cfg_read_file(path, &file, &eno) == IM_OK;
    for (char *ln = file.data, *nl; have && ln && (nl = strchr(ln, '\n')); ln = nl + 1) {
        /* (a last line without its newline was cut by a kill: not acknowledged) */
        *nl = 0;
        char *p = ln;
        char *metric = meta_field(&p), *type = meta_field(&p), *help = meta_field(&p);
        char *unit = meta_field(&p);
        if (*metric)
            (void)meta_set_locked(m, metric, strlen(metric), type, help, strlen(help), unit,
                                  strlen(unit));
        m->log_lines++;
    }
    im_buf_free(&file);
    if (m->log_lines > 2 * m->n || !have)
        meta_compact(m);
    else
        m->log = fopen(path, "a");
    if (!m->log)
        IM_ERROR("cannot open the remote-write metadata file; metadata is kept in memory only",
                 "file=%s", im_logq(path));
    return m;
}

http_rw_meta_t *http_rw_meta_new(void)
{
    return http_rw_meta_open(NULL, 0);
}

void http_rw_meta_free(http_rw_meta_t *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->n; i++) {
        im_free(m->e[i].metric);
        im_free(m->e[i].type);
        im_free(m->e[i].help);
        im_free(m->e[i].unit);
    }
    im_free(m->e);
    if (m->log) fclose(m->log);
    im_free(m->path);
    im_buf_free(&m->line);
    pthread_mutex_destroy(&m->mu);
    im_free(m);
}

void http__rw_meta_metrics(void *ud, im_buf_t *out)
{
    http_rw_meta_t *m = ud;
    pthread_mutex_lock(&m->mu);
    size_t n = m->n;
    uint64_t d = m->dropped;
    pthread_mutex_unlock(&m->mu);
    (void)im_buf_printf(
        out,
        "# HELP infermon_remote_write_metadata_entries Metric names with metadata "
        "received by remote write 2.0.\n# TYPE infermon_remote_write_metadata_entries "
        "gauge\ninfermon_remote_write_metadata_entries %zu\n"
        "# HELP infermon_remote_write_metadata_dropped_total New metric names whose "
        "metadata was not kept: --web.remote-write-max-metadata reached.\n# TYPE "
        "infermon_remote_write_metadata_dropped_total counter\n"
        "infermon_remote_write_metadata_dropped_total %llu\n",
        n, (unsigned long long)d);
}

static int meta_cmp(const char *a, const char *b, size_t blen)
{
    size_t al = strlen(a);
    int c = memcmp(a, b, IM_MIN(al, blen));
    return c ? c : (al < blen ? -1 : al > blen);
}

static bool str_is(const char *a, const char *b, size_t blen)
{
    return strlen(a) == blen && !memcmp(a, b, blen);
}

/* The entry when it changed (new or different; valid until the next change),
 * else NULL. */
static rw_meta_entry_t *meta_set_locked(http_rw_meta_t *m, const char *metric, size_t mlen,
                                        const char *type, const char *help, size_t hlen,
                                        const char *unit, size_t ulen)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (meta_cmp(m->e[mid].metric, metric, mlen) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    rw_meta_entry_t *e;
    if (lo < m->n && !meta_cmp(m->e[lo].metric, metric, mlen)) {
        e = &m->e[lo];
        if (!strcmp(e->type, type) && str_is(e->help, help, hlen) && str_is(e->unit, unit, ulen))
            return NULL;
        im_free(e->type);
        im_free(e->help);
        im_free(e->unit);
    } else {
        if (m->n >= m->max) {
            if (m->dropped++ % 10000 == 0) {
                char nm[256];
                snprintf(nm, sizeof nm, "%.*s", (int)IM_MIN(mlen, 200), metric);
                IM_WARN("remote write 2.0 metadata store full: metadata of new metric names is not "
                        "kept (their samples are); raise --web.remote-write-max-metadata",
                        "max=%zu metric=%s dropped=%llu", m->max, im_logq(nm),
                        (unsigned long long)m->dropped);
            }
            return NULL;
        }
        RW2_GROW(m->e, m->n, m->cap);
        memmove(&m->e[lo + 1], &m->e[lo], (m->n - lo) * sizeof *m->e);
        m->n++;
        e = &m->e[lo];
        e->metric = im_strndup(metric, mlen);
    }
    e->type = im_strdup(type);
    e->help = im_strndup(help, hlen);
    e->unit = im_strndup(unit, ulen);
    return e;
}

void http_rw_meta_set(http_rw_meta_t *m, const char *metric, size_t mlen, const char *type,
                      const char *help, size_t hlen, const char *unit, size_t ulen)
{
    pthread_mutex_lock(&m->mu);
    rw_meta_entry_t *e = meta_set_locked(m, metric, mlen, type, help, hlen, unit, ulen);
    if (e && m->log) {
        /* Appended before the request is answered (fflush: in the kernel, so a
         * SIGKILL keeps it). */
        im_buf_reset(&m->line);
        meta_write_entry(&m->line, e);
        if (fwrite(m->line.data, 1, m->line.len, m->log) != m->line.len || fflush(m->log) != 0)
            IM_ERROR("cannot append to the remote-write metadata file", "file=%s",
                     im_logq(m->path));
        if (++m->log_lines > 2 * m->n + 1000) meta_compact(m);
    }
    pthread_mutex_unlock(&m->mu);
}

void http_rw_meta_list(http_rw_meta_t *m, scrape_metadata_t **md, size_t *n)
{
    pthread_mutex_lock(&m->mu);
    if (m->n) {
        *md = im_realloc(*md, (*n + m->n) * sizeof **md);
        for (size_t i = 0; i < m->n; i++) {
            scrape_metadata_t *x = &(*md)[(*n)++];
            x->target_job = im_strdup("");
            x->target_instance = im_strdup("");
            x->metric = im_strdup(m->e[i].metric);
            x->type = im_strdup(m->e[i].type);
            x->help = im_strdup(m->e[i].help);
            x->unit = im_strdup(m->e[i].unit);
        }
    }
    pthread_mutex_unlock(&m->mu);
}

/* ---- Appending a 2.0 request ---- */

#define RW2_MAX_ERR_LINES 20

typedef struct rw2_ctx {
    const http_rw2_req_t *q;
    im_buf_t *errs;
    uint64_t nerr;
    im_labels_builder_t lb;
    rw_names_t names;
    im_buf_t fmt; /* the formatted series, for messages */
} rw2_ctx_t;

IM_PRINTF(2, 3) static void rw2_refuse(rw2_ctx_t *c, const char *fmt, ...)
{
    if (c->nerr++ >= RW2_MAX_ERR_LINES) return;
    char line[IM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    (void)im_buf_puts(c->errs, line);
    (void)im_buf_putc(c->errs, '\n');
}

static const char *rw2_series_str(rw2_ctx_t *c, const im_labels_t *ls)
{
    c->fmt.len = 0;
    (void)im_labels_format(ls, &c->fmt);
    if (c->fmt.len > 300) {
        c->fmt.len = 300;
        (void)im_buf_puts(&c->fmt, "...");
    }
    (void)im_buf_putc(&c->fmt, 0);
    return c->fmt.data;
}

/* Resolves the label pairs refs[0, n) into c->lb. NULL when they are fine,
 * else the reason (formatted into buf). Names must be valid label names and
 * given once, values UTF-8; for a series (series = true) __name__ must be a
 * valid metric name. */
static const char *rw2_labels(rw2_ctx_t *c, const uint32_t *refs, size_t n, bool series, char *buf,
                              size_t bsz)
{
    const http_rw2_req_t *q = c->q;
    im_lb_reset(&c->lb);
    c->names.n = 0;
    if (n % 2) {
        snprintf(buf, bsz,
                 "invalid labels_refs length %zu (name and value references come in pairs)", n);
        return buf;
    }
    if (n / 2 > STORAGE_FMT_MAX_LABELS) {
        snprintf(buf, bsz,
                 "%zu labels, more than the %u any series can have "
                 "(--storage.tsdb.max-labels-per-series can only lower it)",
                 n / 2, STORAGE_FMT_MAX_LABELS);
        return buf;
    }
    bool valid = true;
    for (size_t i = 0; i < n; i += 2) {
        if (refs[i] >= q->nsymbols || refs[i + 1] >= q->nsymbols) {
            snprintf(buf, bsz,
                     "labels_refs %u (name) = %u (value) outside of symbols table (size %zu)",
                     refs[i], refs[i + 1], q->nsymbols);
            return buf;
        }
        const http_rw2_str_t *k = &q->symbols[refs[i]], *v = &q->symbols[refs[i + 1]];
        if (!im_label_name_valid(k->p, k->len) || !im_utf8_valid(v->p, v->len)) valid = false;
        if (series && k->len == 8 && !memcmp(k->p, IM_METRIC_NAME, 8) &&
            !im_metric_name_valid(v->p, v->len))
            valid = false;
        RW2_GROW(c->names.v, c->names.n, c->names.cap);
        c->names.v[c->names.n++] =
            (http__pb_t){(const uint8_t *)k->p, (const uint8_t *)k->p + k->len};
        im_lb_set(&c->lb, k->p, k->len, v->p, v->len);
    }
    if (series && !im_lb_get(&c->lb, IM_METRIC_NAME)) valid = false;
    if (!valid) {
        const im_labels_t *ls = im_lb_build(&c->lb);
        snprintf(buf, bsz, "invalid metric name or labels, got %s", rw2_series_str(c, ls));
        im_labels_unref(ls);
        return buf;
    }
    im_err_t e;
    im_err_clear(&e);
    if (check_unique(&c->names, &e) != IM_OK) {
        const im_labels_t *ls = im_lb_build(&c->lb);
        size_t i = 1;
        while (i < c->names.n && name_cmp(&c->names.v[i - 1], &c->names.v[i])) i++;
        size_t l = (size_t)(c->names.v[i].end - c->names.v[i].p);
        snprintf(buf, bsz, "invalid labels for series, labels %s, duplicated label %.*s",
                 rw2_series_str(c, ls), (int)IM_MIN(l, 100), (const char *)c->names.v[i].p);
        im_labels_unref(ls);
        return buf;
    }
    return NULL;
}

static const char *const rw2_types[] = {"unknown",        "counter", "gauge", "histogram",
                                        "gaugehistogram", "summary", "info",  "stateset"};

/* One series: labels, metadata references, samples (with the created
 * timestamp's zero sample first), histograms, exemplars. IM_OK or a store
 * error that is not about a sample (the request then fails whole). */
static im_rc rw2_append_series(rw2_ctx_t *c, storage_appender_t *a, const http_rw2_series_t *ts,
                               http_rw2_stats_t *st, bool *meta_ok, im_err_t *err)
{
    const http_rw2_req_t *q = c->q;
    char why[IM_ERR_MSG_MAX];
    *meta_ok = false;
    const char *bad =
        rw2_labels(c, ts->nrefs ? q->refs + ts->refs : NULL, ts->nrefs, true, why, sizeof why);
    if (bad) {
        rw2_refuse(c, "%s", bad);
        st->series_refused++;
        st->samples_refused += ts->nsamples;
        st->histograms_refused += ts->nhistograms;
        return IM_OK;
    }
    const im_labels_t *ls = im_lb_build(&c->lb);
    if (ts->help_ref >= q->nsymbols || ts->unit_ref >= q->nsymbols) {
        rw2_refuse(c, "metadata %s %u outside of symbols table (size %zu) for series %s",
                   ts->help_ref >= q->nsymbols ? "help_ref" : "unit_ref",
                   ts->help_ref >= q->nsymbols ? ts->help_ref : ts->unit_ref, q->nsymbols,
                   rw2_series_str(c, ls));
        st->series_refused++;
        st->samples_refused += ts->nsamples;
        st->histograms_refused += ts->nhistograms;
        im_labels_unref(ls);
        return IM_OK;
    }
    const http_rw2_sample_t *smp = ts->nsamples ? q->samples + ts->samples : NULL;
    storage_ref_t ref = 0;
    im_rc rc = IM_OK;
    if (ts->created_ms != 0 && ts->nsamples > 0 && smp[0].t != 0 && ts->created_ms < smp[0].t) {
        /* Kept as Prometheus' created-timestamp zero ingestion does: a 0 at the
         * created time, written when it is newer than the series' last sample
         * (a new series or a reset); any refusal of it is ignored. */
        storage_ref_t r0 = 0;
        if (storage_appender_add(a, 0, ls, ts->created_ms, 0.0, &r0) == IM_OK) {
            ref = r0;
            st->created_zero++;
        }
    }
    bool logged = false;
    for (size_t i = 0; i < ts->nsamples; i++) {
        storage_ref_t nref = 0;
        im_rc arc = storage_appender_add(a, ref, ref ? NULL : ls, smp[i].t, smp[i].v, &nref);
        if (arc == IM_ENOTFOUND && ref) {
            ref = 0;
            arc = storage_appender_add(a, 0, ls, smp[i].t, smp[i].v, &nref);
        }
        if (arc == IM_OK) {
            ref = nref;
            st->samples++;
            continue;
        }
        if (arc != IM_EOUTOFORDER && arc != IM_EDUPLICATE && arc != IM_EOUTOFBOUNDS &&
            arc != IM_ELIMIT) {
            rc = im_err_set(err, arc, "%s", storage_appender_error(a));
            break;
        }
        const char *ser = rw2_series_str(c, ls);
        rw2_refuse(c, "%s for series %s", storage_appender_error(a), ser);
        if (!logged)
            IM_ERROR("Out of order sample from remote write", "err=%s series=%s timestamp=%lld",
                     im_logq(storage_appender_error(a)), im_logq(ser), (long long)smp[i].t);
        logged = true;
        if (arc == IM_ELIMIT) { /* the series is refused: so is every sample of it */
            st->samples_refused += ts->nsamples - i;
            break;
        }
        st->samples_refused++;
    }
    if (rc == IM_OK && ts->nhistograms) {
        rw2_refuse(c,
                   "native histograms are disabled for series %s (%zu histogram samples not "
                   "written: infermon stores float samples only)",
                   rw2_series_str(c, ls), ts->nhistograms);
        st->histograms_refused += ts->nhistograms;
    }
    for (size_t i = 0; rc == IM_OK && i < ts->nexemplars; i++) {
        const http_rw2_exemplar_t *e = &q->exemplars[ts->exemplars + i];
        const char *ebad =
            rw2_labels(c, e->nrefs ? q->refs + e->refs : NULL, e->nrefs, false, why, sizeof why);
        if (ebad) {
            rw2_refuse(c, "invalid exemplar for series %s: %s", rw2_series_str(c, ls), ebad);
            continue;
        }
        st->exemplars_dropped++; /* valid, but there is no exemplar storage */
    }
    *meta_ok = rc == IM_OK;
    im_labels_unref(ls);
    return rc;
}

im_rc http_rw2_append(storage_t *storage, http_rw_meta_t *meta, const http_rw2_req_t *q,
                      http_rw2_stats_t *st, im_buf_t *errs, im_err_t *err)
{
    memset(st, 0, sizeof *st);
    rw2_ctx_t c;
    memset(&c, 0, sizeof c);
    c.q = q;
    c.errs = errs;
    im_lb_init(&c.lb);
    im_buf_init(&c.fmt, 0);
    size_t *with_meta = NULL, nmeta = 0, mcap = 0;
    storage_appender_t *a = storage_appender(storage);
    im_rc rc = IM_OK;
    for (size_t i = 0; i < q->nseries && rc == IM_OK; i++) {
        const http_rw2_series_t *ts = &q->series[i];
        bool ok;
        rc = rw2_append_series(&c, a, ts, st, &ok, err);
        if (ok && (ts->type || q->symbols[ts->help_ref].len || q->symbols[ts->unit_ref].len)) {
            RW2_GROW(with_meta, nmeta, mcap);
            with_meta[nmeta++] = i;
        }
    }
    if (rc == IM_OK) {
        rc = storage_appender_commit(a, err);
    } else {
        storage_appender_rollback(a);
    }
    if (rc == IM_OK && meta) {
        for (size_t k = 0; k < nmeta; k++) {
            const http_rw2_series_t *ts = &q->series[with_meta[k]];
            const http_rw2_str_t *name = NULL;
            for (size_t j = 0; j + 1 < ts->nrefs; j += 2) {
                const http_rw2_str_t *n = &q->symbols[q->refs[ts->refs + j]];
                if (n->len == 8 && !memcmp(n->p, IM_METRIC_NAME, 8))
                    name = &q->symbols[q->refs[ts->refs + j + 1]];
            }
            const http_rw2_str_t *h = &q->symbols[ts->help_ref], *u = &q->symbols[ts->unit_ref];
            http_rw_meta_set(meta, name->p, name->len,
                             rw2_types[ts->type < IM_ARRAY_LEN(rw2_types) ? ts->type : 0], h->p,
                             h->len, u->p, u->len);
        }
    }
    if (rc != IM_OK) {
        uint64_t refused = st->series_refused;
        memset(st, 0, sizeof *st);
        st->series_refused = refused;
    } else if (c.nerr) {
        if (c.nerr > RW2_MAX_ERR_LINES)
            (void)im_buf_printf(errs, "... and %llu more\n",
                                (unsigned long long)(c.nerr - RW2_MAX_ERR_LINES));
        rc = im_err_set(err, IM_EPARSE, "%llu series or samples of the request refused",
                        (unsigned long long)c.nerr);
    }
    im_free(with_meta);
    im_free(c.names.v);
    im_buf_free(&c.fmt);
    im_lb_free(&c.lb);
    return rc;
}
