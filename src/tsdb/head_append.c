/* head_append.c — the appender: batches samples, validates them against the
 * committed state, and on commit writes one WAL record then publishes the batch.
 *
 * Invariants:
 *  1. A commit is written to the WAL (TSDB__REC_COMMIT records holding the new
 *     series and all accepted samples; one record but for huge batches, see 5)
 *     before any of it is applied to the head, and applied under the head's
 *     write lock, so queriers see all of a batch or none of it.
 *  2. Commits are serialised by db->commit_mu, so WAL order == apply order and a
 *     replay reproduces the head exactly.
 *  3. A series named in a batch is pinned (series->pending) from the first add
 *     until commit/rollback, so head truncation never frees it under the appender.
 *  4. Nothing is accepted that a reader would refuse: a new series is checked
 *     against the store's limits (tsdb/limits.h, never above the format caps)
 *     before it is created, and a sample more than max_future ahead of the wall
 *     clock is refused (it would otherwise decide retention and the head's
 *     lower bound). The replay applies the same format caps and skips, with a
 *     warning, what an older version let through, keeping the rest.
 *  5. A commit is one logical WAL record of any size: wal.c fragments a long
 *     record into physical pieces and replays it whole or not at all, so a
 *     torn huge commit never comes back half. A series' checkpoint is split
 *     into several CKP_SERIES records (each with some of its chunks) when one
 *     would exceed TSDB_FMT_WAL_RECORD_TARGET.
 *
 * COMMIT record payload:
 *   u8 type = 1
 *   uvarint nseries; per series: uvarint id, uvarint nlabels,
 *                                (uvarint len, bytes name, uvarint len, bytes value)*
 *   uvarint nsamples; varint base_t;
 *   per sample: uvarint id, varint (t - base_t), u64 value bits (little endian) */
#include "util/base.h"

#include <stdlib.h>

#include "tsdb/tsdb_int.h"
#include "util/log.h"

typedef struct app_sample {
    tsdb__series_t *s;
    int64_t t;
    double v;
} app_sample_t;

typedef struct app_ent {
    tsdb__series_t *s; /* pinned */
    int64_t maxt;      /* newest t seen for it in this batch (or committed) */
    uint64_t vbits;
    uint32_t id; /* s->id (probing without touching the series) */
} app_ent_t;

struct tsdb_appender {
    storage_appender_t pub; /* must be first: the storage interface (vt below) */
    tsdb_t *db;
    im_err_t err;      /* the last rejection's sentence (tsdb_appender_error) */
    int64_t max_t;     /* newest t accepted: now + max_future when the appender was made */
    app_sample_t *smp; /* owned */
    size_t n, cap;
    app_ent_t *map; /* open addressing on series id */
    size_t nmap, capmap;
};

static const storage_appender_vt_t appender_vt;

tsdb_appender_t *tsdb_appender(tsdb_t *db)
{
    tsdb_appender_t *a = im_calloc(1, sizeof *a);
    a->pub.vt = &appender_vt;
    a->db = db;
    a->max_t = tsdb__max_valid_t(db); /* one clock read per batch, not per sample */
    return a;
}

const char *tsdb_appender_error(const tsdb_appender_t *a)
{
    return a->err.msg;
}

static app_ent_t *ent_find(tsdb_appender_t *a, uint32_t id)
{
    if (!a->capmap) return NULL;
    size_t i = (id * 0x9e3779b1u) & (a->capmap - 1);
    while (a->map[i].s) {
        if (a->map[i].id == id) return &a->map[i];
        i = (i + 1) & (a->capmap - 1);
    }
    return NULL;
}

static app_ent_t *ent_insert(tsdb_appender_t *a, tsdb__series_t *s)
{
    if ((a->nmap + 1) * 2 > a->capmap) {
        size_t nc = a->capmap ? a->capmap * 2 : 64;
        app_ent_t *nm = im_calloc(nc, sizeof *nm);
        for (size_t j = 0; j < a->capmap; j++) {
            if (!a->map[j].s) continue;
            size_t i = (a->map[j].id * 0x9e3779b1u) & (nc - 1);
            while (nm[i].s) i = (i + 1) & (nc - 1);
            nm[i] = a->map[j];
        }
        im_free(a->map);
        a->map = nm;
        a->capmap = nc;
    }
    size_t i = (s->id * 0x9e3779b1u) & (a->capmap - 1);
    while (a->map[i].s) i = (i + 1) & (a->capmap - 1);
    a->map[i].s = s;
    a->map[i].id = s->id;
    a->map[i].maxt = atomic_load_explicit(&s->maxt, memory_order_acquire);
    a->map[i].vbits = atomic_load_explicit(&s->last_vbits, memory_order_relaxed);
    a->nmap++;
    return &a->map[i];
}

static void appender_free(tsdb_appender_t *a)
{
    for (size_t i = 0; i < a->capmap; i++)
        if (a->map[i].s) atomic_fetch_sub(&a->map[i].s->pending, 1);
    im_free(a->map);
    im_free(a->smp);
    im_free(a);
}

im_rc tsdb_appender_add(tsdb_appender_t *a, tsdb_ref_t ref, const im_labels_t *labels, int64_t t_ms,
                        double v, tsdb_ref_t *out_ref)
{
    tsdb_t *db = a->db;
    tsdb__head_t *h = db->head;
    app_ent_t *e = NULL;
    if (ref != 0 && ref < UINT32_MAX) e = ent_find(a, (uint32_t)ref);
    if (!e && ref != 0) {
        pthread_rwlock_rdlock(&h->lock);
        tsdb__series_t *s = ref < UINT32_MAX ? tsdb__head_by_id(h, (uint32_t)ref) : NULL;
        if (s && labels && !im_labels_equal(s->labels, labels)) s = NULL;
        if (s) atomic_fetch_add(&s->pending, 1);
        pthread_rwlock_unlock(&h->lock);
        if (s) {
            e = ent_insert(a, s); /* the entry holds the pin taken above */
        } else if (!labels) {
            return im_err_set(&a->err, IM_ENOTFOUND, "series ref %llu not found",
                              (unsigned long long)ref);
        }
    }
    if (!e) {
        if (!labels || labels->n == 0)
            return im_err_set(&a->err, IM_EINVAL, "a series needs at least one label");
        if (tsdb_limits_check(&db->opts.limits, labels, &a->err) != IM_OK) {
            atomic_fetch_add(&db->over_limits, 1);
            return IM_ELIMIT;
        }
        bool created;
        tsdb__series_t *s = tsdb__head_get_or_create(h, labels, &created);
        e = ent_find(a, s->id);
        if (e)
            atomic_fetch_sub(&s->pending, 1); /* already pinned by this appender */
        else
            e = ent_insert(a, s);
    }
    if (out_ref) *out_ref = e->s->id;
    if (t_ms < atomic_load_explicit(&h->min_valid_t, memory_order_relaxed)) {
        atomic_fetch_add(&db->out_of_bounds, 1);
        return im_err_set(&a->err, IM_EOUTOFBOUNDS, "%s", im_rc_str(IM_EOUTOFBOUNDS));
    }
    if (t_ms > a->max_t) {
        atomic_fetch_add(&db->out_of_bounds, 1);
        atomic_fetch_add(&db->too_far_future, 1);
        int64_t now = tsdb__now_ms(db);
        return im_err_set(&a->err, IM_EOUTOFBOUNDS,
                          "out of bounds: sample timestamp %lld is %lld s ahead of the clock "
                          "(now %lld), more than the %lld s allowed (--storage.tsdb.max-future); "
                          "fix the sender's clock",
                          (long long)t_ms, (long long)((t_ms - now) / 1000), (long long)now,
                          (long long)(db->opts.max_future_ms / 1000));
    }
    uint64_t vb;
    memcpy(&vb, &v, sizeof vb);
    if (e->maxt != INT64_MIN || atomic_load(&e->s->maxt) != INT64_MIN) {
        int64_t cm = atomic_load_explicit(&e->s->maxt, memory_order_acquire);
        if (cm > e->maxt) {
            e->maxt = cm;
            e->vbits = atomic_load_explicit(&e->s->last_vbits, memory_order_relaxed);
        }
        if (t_ms < e->maxt) {
            atomic_fetch_add(&db->out_of_order, 1);
            return im_err_set(&a->err, IM_EOUTOFORDER, "%s", im_rc_str(IM_EOUTOFORDER));
        }
        if (t_ms == e->maxt) {
            if (vb == e->vbits) return IM_OK;
            atomic_fetch_add(&db->duplicates, 1);
            return im_err_set(&a->err, IM_EDUPLICATE, "%s", im_rc_str(IM_EDUPLICATE));
        }
    }
    e->maxt = t_ms;
    e->vbits = vb;
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 64;
        a->smp = im_realloc(a->smp, a->cap * sizeof *a->smp);
    }
    a->smp[a->n++] = (app_sample_t){e->s, t_ms, v};
    return IM_OK;
}

void tsdb_appender_rollback(tsdb_appender_t *a)
{
    if (a) appender_free(a);
}

/* A uvarint at p (at most 10 bytes); returns the end. */
static uint8_t *put_uv(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static void put_labels(im_buf_t *b, const im_labels_t *ls)
{
    tsdb__put_uvarint(b, ls->n);
    for (uint32_t i = 0; i < ls->n; i++) {
        tsdb__put_uvarint(b, ls->l[i].name->len);
        (void)im_buf_append(b, ls->l[i].name->s, ls->l[i].name->len);
        tsdb__put_uvarint(b, ls->l[i].value->len);
        (void)im_buf_append(b, ls->l[i].value->s, ls->l[i].value->len);
    }
}

/* Logs the batch as one COMMIT record: the new series, then the samples. */
static int cmp_series_id(const void *x, const void *y)
{
    uint32_t a = (*(tsdb__series_t *const *)x)->id, b = (*(tsdb__series_t *const *)y)->id;
    return (a > b) - (a < b);
}

static im_rc log_commit(tsdb_t *db, tsdb_appender_t *a, im_err_t *err)
{
    im_buf_t rec;
    im_buf_init(&rec, 0);
    (void)im_buf_putc(&rec, TSDB__REC_COMMIT);
    size_t nnew = 0;
    for (size_t i = 0; i < a->capmap; i++)
        if (a->map[i].s && !a->map[i].s->logged) nnew++;
    tsdb__put_uvarint(&rec, nnew);
    /* New series in ascending id order: the replay then appends each to its
     * postings lists at the end (one memmove per series in hash order made the
     * replay of a 10^6-series commit take minutes). */
    tsdb__series_t **nw = nnew ? im_malloc(nnew * sizeof *nw) : NULL;
    size_t nw_n = 0;
    for (size_t i = 0; i < a->capmap; i++)
        if (a->map[i].s && !a->map[i].s->logged) nw[nw_n++] = a->map[i].s;
    if (nnew > 1) qsort(nw, nnew, sizeof *nw, cmp_series_id);
    for (size_t i = 0; i < nnew; i++) {
        tsdb__put_uvarint(&rec, nw[i]->id);
        put_labels(&rec, nw[i]->labels);
    }
    im_free(nw);
    tsdb__put_uvarint(&rec, a->n);
    int64_t base = a->n ? a->smp[0].t : 0;
    tsdb__put_varint(&rec, base);
    /* samples: at most 10 + 10 + 8 bytes each, written in place */
    if (im_buf_reserve(&rec, a->n * 28 + 1) != IM_OK) im_oom(a->n * 28);
    uint8_t *p = (uint8_t *)rec.data + rec.len;
    for (size_t i = 0; i < a->n; i++) {
        p = put_uv(p, a->smp[i].s->id);
        int64_t d = (int64_t)((uint64_t)a->smp[i].t - (uint64_t)base);
        p = put_uv(p, ((uint64_t)d << 1) ^ (uint64_t)(d >> 63));
        uint64_t vb;
        memcpy(&vb, &a->smp[i].v, sizeof vb);
        for (int k = 0; k < 8; k++) *p++ = (uint8_t)(vb >> (8 * k)); /* little endian */
    }
    rec.len = (size_t)(p - (uint8_t *)rec.data);
    rec.data[rec.len] = 0;
    im_rc rc = tsdb__wal_log(db->wal, (const uint8_t *)rec.data, rec.len, err);
    im_buf_free(&rec);
    return rc;
}

im_rc tsdb_appender_commit(tsdb_appender_t *a, im_err_t *err)
{
    tsdb_t *db = a->db;
    tsdb__head_t *h = db->head;
    im_rc rc = IM_OK;
    if (a->n == 0) {
        appender_free(a);
        return IM_OK;
    }
    pthread_mutex_lock(&db->commit_mu);
    /* Re-validate against what other appenders committed since add. */
    for (size_t i = 0; i < a->capmap; i++) {
        app_ent_t *e = &a->map[i];
        if (!e->s) continue;
        e->maxt = atomic_load(&e->s->maxt);
        e->vbits = atomic_load(&e->s->last_vbits);
    }
    int64_t minv = atomic_load(&h->min_valid_t);
    size_t w = 0;
    for (size_t i = 0; i < a->n; i++) {
        app_sample_t *sm = &a->smp[i];
        app_ent_t *e = ent_find(a, sm->s->id);
        uint64_t vb;
        memcpy(&vb, &sm->v, sizeof vb);
        if (sm->t < minv) {
            atomic_fetch_add(&db->out_of_bounds, 1);
            continue;
        }
        if (e->maxt != INT64_MIN && sm->t <= e->maxt) {
            if (sm->t < e->maxt)
                atomic_fetch_add(&db->out_of_order, 1);
            else if (vb != e->vbits)
                atomic_fetch_add(&db->duplicates, 1);
            continue;
        }
        e->maxt = sm->t;
        e->vbits = vb;
        a->smp[w++] = *sm;
    }
    a->n = w;
    if (a->n == 0) goto out;
    if (db->wal) {
        rc = log_commit(db, a, err);
        if (rc != IM_OK) goto out;
        for (size_t i = 0; i < a->capmap; i++)
            if (a->map[i].s) a->map[i].s->logged = true;
        if (db->opts.fsync == TSDB_FSYNC_ALWAYS) {
            rc = tsdb__sync_locked(db, err);
            if (rc != IM_OK) goto out;
        }
    }
    pthread_rwlock_wrlock(&h->lock);
    for (size_t i = 0; i < a->n; i++) tsdb__head_append(h, a->smp[i].s, a->smp[i].t, a->smp[i].v);
    pthread_rwlock_unlock(&h->lock);
    atomic_fetch_add(&db->samples_appended, a->n);
out:
    pthread_mutex_unlock(&db->commit_mu);
    appender_free(a);
    return rc;
}

/* ---- Replay ---- */

/* Reads a label set. 1: *out set; 0: malformed (the record is corrupt); -1:
 * well-formed but over the format caps (tsdb/limits.h) — written by an older
 * version that did not check; skipped, *out NULL, *p after it. */
int tsdb__wal_get_labels(const uint8_t **p, const uint8_t *end, const im_labels_t **out)
{
    uint64_t nl;
    *out = NULL;
    if (!tsdb__get_uvarint(p, end, &nl) || nl > (uint64_t)(end - *p)) return 0;
    /* First the structure and the sizes, so an over-cap set builds nothing. */
    const uint8_t *q = *p;
    uint64_t total = 0;
    for (uint64_t i = 0; i < nl; i++) {
        uint64_t ln, lv;
        if (!tsdb__get_uvarint(&q, end, &ln) || ln == 0 || ln > (uint64_t)(end - q)) return 0;
        q += ln;
        if (!tsdb__get_uvarint(&q, end, &lv) || lv > (uint64_t)(end - q)) return 0;
        q += lv;
        total += ln + lv;
    }
    if (!tsdb_limits_ok_raw(nl, total)) {
        *p = q;
        return -1;
    }
    im_labels_builder_t b;
    im_lb_init(&b);
    for (uint64_t i = 0; i < nl; i++) {
        uint64_t ln, lv;
        (void)tsdb__get_uvarint(p, end, &ln);
        const char *name = (const char *)*p;
        *p += ln;
        (void)tsdb__get_uvarint(p, end, &lv);
        const char *val = (const char *)*p;
        *p += lv;
        im_lb_set(&b, name, ln, val, lv);
    }
    *out = im_lb_build(&b);
    im_lb_free(&b);
    if ((*out)->n == 0) {
        im_labels_unref(*out);
        *out = NULL;
        return 0;
    }
    return 1;
}

/* A series of an older version's WAL over the format caps: skipped (its
 * samples go with it), counted, warned about once per replay. */
static void skipped_series(tsdb__head_t *h, uint64_t id)
{
    if (h->replay_over_limits++ == 0)
        IM_WARN("WAL series over the storage format's limits skipped with its samples (written "
                "by an older version); the rest of the WAL is kept",
                "id=%llu max_labels=%u max_series_bytes=%u", (unsigned long long)id,
                TSDB_FMT_MAX_LABELS, TSDB_FMT_MAX_SERIES_BYTES);
}

/* One series entry of a record (id, labels): *s is the series made with that id,
 * NULL when its labels are over the limits and it was skipped (counted). */
static im_rc replay_series(tsdb__head_t *h, const uint8_t **p, const uint8_t *end,
                           tsdb__series_t **s)
{
    uint64_t id;
    const im_labels_t *ls;
    *s = NULL;
    if (!tsdb__get_uvarint(p, end, &id) || id == 0 || id >= UINT32_MAX) return IM_ECORRUPT;
    int gl = tsdb__wal_get_labels(p, end, &ls);
    if (gl == 0) return IM_ECORRUPT;
    if (gl < 0) {
        skipped_series(h, id);
        return IM_OK;
    }
    *s = tsdb__head_create_with_id(h, (uint32_t)id, ls);
    im_labels_unref(ls);
    if (!*s) return IM_ECORRUPT;
    (*s)->logged = true;
    return IM_OK;
}

/* Applies one WAL/checkpoint record to the head (no WAL write). Samples that do
 * not fit (older than the series' newest) are skipped: a replay is idempotent. */
im_rc tsdb__head_apply_record(tsdb__head_t *h, const uint8_t *rec, size_t len);
im_rc tsdb__head_apply_record(tsdb__head_t *h, const uint8_t *rec, size_t len)
{
    const uint8_t *p = rec + 1, *end = rec + len;
    if (len < 1) return IM_ECORRUPT;
    if (rec[0] == TSDB__REC_CKP_STATE) {
        int64_t mv;
        if (!tsdb__get_varint(&p, end, &mv)) return IM_ECORRUPT;
        /* A bound past what may be appended now was raised by a future sample
         * an older version accepted; the blocks' bound stands (db.c). */
        if (h->replay_max_t != INT64_MAX && mv > h->replay_max_t + 1) return IM_OK;
        if (mv > atomic_load(&h->min_valid_t)) atomic_store(&h->min_valid_t, mv);
        return IM_OK;
    }
    if (rec[0] == TSDB__REC_CKP_SERIES) {
        uint64_t nch;
        tsdb__series_t *s;
        im_rc src = replay_series(h, &p, end, &s);
        if (src != IM_OK || !s) return src;
        if (!tsdb__get_uvarint(&p, end, &nch)) return IM_ECORRUPT;
        pthread_rwlock_wrlock(&h->lock);
        for (uint64_t c = 0; c < nch; c++) {
            uint64_t n, nbits;
            if (!tsdb__get_uvarint(&p, end, &n) || !tsdb__get_uvarint(&p, end, &nbits) ||
                n > 65535 || nbits > UINT32_MAX || (nbits + 7) / 8 > (uint64_t)(end - p)) {
                pthread_rwlock_unlock(&h->lock);
                return IM_ECORRUPT;
            }
            tsdb__xor_dec_t d;
            tsdb__xor_dec_init(&d, p, (uint32_t)nbits, (uint16_t)n);
            int64_t t;
            double v;
            while (tsdb__xor_next(&d, &t, &v)) {
                if (t > h->replay_max_t) {
                    h->replay_future_dropped++;
                    continue;
                }
                if (t > atomic_load(&s->maxt)) tsdb__head_append(h, s, t, v);
            }
            p += (nbits + 7) / 8;
        }
        pthread_rwlock_unlock(&h->lock);
        return IM_OK;
    }
    if (rec[0] != TSDB__REC_COMMIT) return IM_ECORRUPT;
    uint64_t nser, nsm;
    if (!tsdb__get_uvarint(&p, end, &nser)) return IM_ECORRUPT;
    for (uint64_t i = 0; i < nser; i++) {
        tsdb__series_t *s;
        im_rc src = replay_series(h, &p, end, &s);
        if (src != IM_OK) return src;
    }
    int64_t base;
    if (!tsdb__get_uvarint(&p, end, &nsm) || !tsdb__get_varint(&p, end, &base)) return IM_ECORRUPT;
    int64_t minv = atomic_load(&h->min_valid_t);
    pthread_rwlock_wrlock(&h->lock);
    im_rc rc = IM_OK;
    for (uint64_t i = 0; i < nsm; i++) {
        uint64_t id;
        int64_t dt;
        if (!tsdb__get_uvarint(&p, end, &id) || !tsdb__get_varint(&p, end, &dt) || end - p < 8) {
            rc = IM_ECORRUPT;
            break;
        }
        uint64_t vb = tsdb__get_u64(p);
        p += 8;
        tsdb__series_t *s = id < UINT32_MAX ? tsdb__head_replay_series(h, (uint32_t)id) : NULL;
        if (!s) continue; /* series dropped by a later truncation */
        int64_t t = (int64_t)((uint64_t)base + (uint64_t)dt);
        if (t < minv || t <= atomic_load(&s->maxt)) continue;
        if (t > h->replay_max_t) {
            h->replay_future_dropped++;
            continue;
        }
        double v;
        memcpy(&v, &vb, sizeof v);
        tsdb__head_append(h, s, t, v);
    }
    pthread_rwlock_unlock(&h->lock);
    return rc;
}

/* Encodes the checkpoint of the head (series with their chunks) into out as
 * framed records; caller holds commit_mu. */
void tsdb__head_checkpoint(tsdb__head_t *h, im_buf_t *out);
void tsdb__head_checkpoint(tsdb__head_t *h, im_buf_t *out)
{
    im_buf_t rec, hdr, body;
    im_buf_init(&rec, 0);
    im_buf_init(&hdr, 0);
    im_buf_init(&body, 0);
    (void)im_buf_putc(&rec, TSDB__REC_CKP_STATE);
    tsdb__put_varint(&rec, atomic_load(&h->min_valid_t));
    tsdb__wal_frame(out, (const uint8_t *)rec.data, rec.len);
    pthread_rwlock_rdlock(&h->lock);
    for (uint32_t id = 1; id < h->next_id && id < h->capids; id++) {
        tsdb__series_t *s = h->by_id[id];
        if (!s) continue;
        /* One record per series, or several (each with some of its chunks)
         * when its chunks would make it larger than the record target. */
        im_buf_reset(&hdr);
        (void)im_buf_putc(&hdr, TSDB__REC_CKP_SERIES);
        tsdb__put_uvarint(&hdr, s->id);
        put_labels(&hdr, s->labels);
        uint32_t c = 0;
        do {
            im_buf_reset(&body);
            uint32_t k = 0;
            for (; c < s->nchunks; c++, k++) {
                const tsdb__hchunk_t *hc = &s->chunks[c];
                size_t nb = (hc->data.nbits + 7) / 8;
                if (k > 0 && hdr.len + body.len + nb + 20 > TSDB_FMT_WAL_RECORD_TARGET) break;
                tsdb__put_uvarint(&body, hc->n);
                tsdb__put_uvarint(&body, hc->data.nbits);
                (void)im_buf_append(&body, hc->data.b ? (const char *)hc->data.b : "", nb);
            }
            im_buf_reset(&rec);
            (void)im_buf_append(&rec, hdr.data, hdr.len);
            tsdb__put_uvarint(&rec, k);
            if (body.len) (void)im_buf_append(&rec, body.data, body.len);
            tsdb__wal_frame(out, (const uint8_t *)rec.data, rec.len);
        } while (c < s->nchunks);
    }
    pthread_rwlock_unlock(&h->lock);
    im_buf_free(&rec);
    im_buf_free(&hdr);
    im_buf_free(&body);
}

/* ---- The storage interface (storage/storage.h) ---- */

static im_rc vt_add(storage_appender_t *a, storage_ref_t ref, const im_labels_t *labels,
                    int64_t t_ms, double v, storage_ref_t *out_ref)
{
    return tsdb_appender_add((tsdb_appender_t *)a, ref, labels, t_ms, v, out_ref);
}
static im_rc vt_commit(storage_appender_t *a, im_err_t *err)
{
    return tsdb_appender_commit((tsdb_appender_t *)a, err);
}
static void vt_rollback(storage_appender_t *a)
{
    tsdb_appender_rollback((tsdb_appender_t *)a);
}
static const char *vt_error(const storage_appender_t *a)
{
    return tsdb_appender_error((const tsdb_appender_t *)a);
}
static const storage_appender_vt_t appender_vt = {vt_add, vt_commit, vt_rollback, vt_error};

static storage_appender_t *st_appender(storage_t *s)
{
    return &tsdb_appender((tsdb_t *)s)->pub;
}
static storage_queryable_t *st_queryable(storage_t *s)
{
    return tsdb_queryable((tsdb_t *)s);
}
static const im_labels_t *st_series_labels(storage_t *s, storage_ref_t ref)
{
    tsdb__head_t *h = ((tsdb_t *)s)->head;
    if (ref == 0 || ref >= UINT32_MAX) return NULL;
    pthread_rwlock_rdlock(&h->lock);
    tsdb__series_t *se = tsdb__head_by_id(h, (uint32_t)ref);
    const im_labels_t *ls = se ? im_labels_ref(se->labels) : NULL;
    pthread_rwlock_unlock(&h->lock);
    return ls;
}
static void st_stats(storage_t *s, storage_stats_t *out)
{
    tsdb_get_stats((tsdb_t *)s, out);
}
static void st_postings_stats(storage_t *s, size_t limit, storage_postings_stats_t *out)
{
    tsdb_postings_stats((tsdb_t *)s, limit, out);
}
const storage_vt_t tsdb__storage_vt = {st_appender, st_queryable, st_series_labels, st_stats,
                                       st_postings_stats};

storage_t *tsdb_storage(tsdb_t *db)
{
    return &db->storage;
}
