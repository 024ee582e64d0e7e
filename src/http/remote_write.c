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
#include <stdio.h>
#include <stdlib.h>

#include "http/http_int.h"
#include "util/log.h"

#define RW_MAX_DECOMPRESSED (256u << 20)

typedef struct pb {
    const uint8_t *p, *end;
} pb_t;

static bool pb_varint(pb_t *b, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (b->p >= b->end) return false;
        uint8_t c = *b->p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* Skips a field of the given wire type. */
static bool pb_skip(pb_t *b, unsigned wt)
{
    uint64_t v;
    switch (wt) {
    case 0: return pb_varint(b, &v);
    case 1:
        if (b->end - b->p < 8) return false;
        b->p += 8;
        return true;
    case 2:
        if (!pb_varint(b, &v) || v > (uint64_t)(b->end - b->p)) return false;
        b->p += v;
        return true;
    case 5:
        if (b->end - b->p < 4) return false;
        b->p += 4;
        return true;
    default: return false;
    }
}

static bool pb_len(pb_t *b, pb_t *sub)
{
    uint64_t v;
    if (!pb_varint(b, &v) || v > (uint64_t)(b->end - b->p)) return false;
    sub->p = b->p;
    sub->end = b->p + v;
    b->p += v;
    return true;
}

typedef struct rw_sample {
    double v;
    int64_t t;
} rw_sample_t;

/* The label names of one series, to find a repeated one whatever its length,
 * its value (an empty value is a label too) and the order of the labels. */
typedef struct rw_names {
    pb_t *v;
    size_t n, cap;
} rw_names_t;

static int name_cmp(const void *a, const void *b)
{
    const pb_t *x = a, *y = b;
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

static im_rc decode_series(pb_t *ts, im_labels_builder_t *lb, rw_names_t *nm, rw_sample_t **samples,
                           size_t *ns, size_t *cap, im_err_t *err)
{
    im_lb_reset(lb);
    nm->n = 0;
    *ns = 0;
    while (ts->p < ts->end) {
        uint64_t key;
        if (!pb_varint(ts, &key)) return im_err_set(err, IM_EPARSE, "truncated time series");
        unsigned f = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
        if (f == 1 && wt == 2) {
            pb_t l;
            if (!pb_len(ts, &l)) return im_err_set(err, IM_EPARSE, "truncated label");
            pb_t name = {NULL, NULL}, value = {NULL, NULL};
            while (l.p < l.end) {
                uint64_t k2;
                if (!pb_varint(&l, &k2)) return im_err_set(err, IM_EPARSE, "truncated label");
                pb_t *dst = (k2 >> 3) == 1 ? &name : (k2 >> 3) == 2 ? &value : NULL;
                if (dst && (k2 & 7) == 2) {
                    if (!pb_len(&l, dst)) return im_err_set(err, IM_EPARSE, "truncated label");
                } else if (!pb_skip(&l, (unsigned)(k2 & 7))) {
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
            pb_t s;
            if (!pb_len(ts, &s)) return im_err_set(err, IM_EPARSE, "truncated sample");
            rw_sample_t smp = {0, 0};
            while (s.p < s.end) {
                uint64_t k2;
                if (!pb_varint(&s, &k2)) return im_err_set(err, IM_EPARSE, "truncated sample");
                if (k2 == ((1 << 3) | 1)) {
                    if (s.end - s.p < 8)
                        return im_err_set(err, IM_EPARSE, "truncated sample value");
                    uint64_t bits = 0;
                    for (int i = 7; i >= 0; i--) bits = bits << 8 | s.p[i];
                    memcpy(&smp.v, &bits, 8);
                    s.p += 8;
                } else if (k2 == ((2 << 3) | 0)) {
                    uint64_t t;
                    if (!pb_varint(&s, &t))
                        return im_err_set(err, IM_EPARSE, "truncated timestamp");
                    smp.t = (int64_t)t;
                } else if (!pb_skip(&s, (unsigned)(k2 & 7))) {
                    return im_err_set(err, IM_EPARSE, "malformed sample");
                }
            }
            if (*ns == *cap) {
                *cap = *cap ? *cap * 2 : 16;
                *samples = im_realloc(*samples, *cap * sizeof **samples);
            }
            (*samples)[(*ns)++] = smp;
        } else if (!pb_skip(ts, wt)) {
            return im_err_set(err, IM_EPARSE, "malformed time series field %u", f);
        }
    }
    return check_unique(nm, err);
}

im_rc http_remote_write_decode_append(storage_t *storage, const char *body, size_t len,
                                      http_rw_stats_t *st, im_err_t *err)
{
    memset(st, 0, sizeof *st);
    size_t ulen;
    if (snappy_uncompressed_length(body, len, &ulen) != SNAPPY_OK)
        return im_err_set(err, IM_EPARSE, "snappy: corrupt input");
    if (ulen > RW_MAX_DECOMPRESSED)
        return im_err_set(err, IM_ELIMIT, "decompressed request larger than %u bytes",
                          RW_MAX_DECOMPRESSED);
    char *raw = im_malloc(ulen ? ulen : 1);
    size_t got = ulen;
    if (snappy_uncompress(body, len, raw, &got) != SNAPPY_OK) {
        im_free(raw);
        return im_err_set(err, IM_EPARSE, "snappy: corrupt input");
    }
    pb_t b = {(const uint8_t *)raw, (const uint8_t *)raw + got};
    im_labels_builder_t lb;
    im_lb_init(&lb);
    rw_sample_t *samples = NULL;
    size_t ns = 0, cap = 0;
    rw_names_t names = {NULL, 0, 0};
    storage_appender_t *a = storage_appender(storage);
    im_rc rc = IM_OK;
    while (b.p < b.end && rc == IM_OK) {
        uint64_t key;
        if (!pb_varint(&b, &key)) {
            rc = im_err_set(err, IM_EPARSE, "truncated write request");
            break;
        }
        if (key != ((1 << 3) | 2)) {
            if (!pb_skip(&b, (unsigned)(key & 7)))
                rc = im_err_set(err, IM_EPARSE, "malformed write request");
            continue;
        }
        pb_t ts;
        if (!pb_len(&b, &ts)) {
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

enum MHD_Result http__remote_write(http_server_t *s, http__req_t *r)
{
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
