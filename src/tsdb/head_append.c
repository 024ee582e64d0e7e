/* head_append.c — the appender: batches samples, validates them against the
 * committed state, and on commit writes one WAL record then publishes the batch.
 *
 * Invariants:
 *  1. A commit is one WAL record (TSDB__REC_COMMIT) holding the new series and all
 *     accepted samples; it is written (one write(2)) before any of it is applied
 *     to the head, and applied under the head's write lock, so queriers see all of
 *     a batch or none of it.
 *  2. Commits are serialised by db->commit_mu, so WAL order == apply order and a
 *     replay reproduces the head exactly.
 *  3. A series named in a batch is pinned (series->pending) from the first add
 *     until commit/rollback, so head truncation never frees it under the appender.
 *
 * COMMIT record payload:
 *   u8 type = 1
 *   uvarint nseries; per series: uvarint id, uvarint nlabels,
 *                                (uvarint len, bytes name, uvarint len, bytes value)*
 *   uvarint nsamples; varint base_t;
 *   per sample: uvarint id, varint (t - base_t), u64 value bits (little endian) */
#include "util/base.h"

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
    tsdb_t *db;
    app_sample_t *smp; /* owned */
    size_t n, cap;
    app_ent_t *map; /* open addressing on series id */
    size_t nmap, capmap;
};

tsdb_appender_t *tsdb_appender(tsdb_t *db)
{
    tsdb_appender_t *a = im_calloc(1, sizeof *a);
    a->db = db;
    return a;
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
            return IM_ENOTFOUND;
        }
    }
    if (!e) {
        if (!labels) return IM_EINVAL;
        if (labels->n == 0) return IM_EINVAL;
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
        return IM_EOUTOFBOUNDS;
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
            return IM_EOUTOFORDER;
        }
        if (t_ms == e->maxt) {
            if (vb == e->vbits) return IM_OK;
            atomic_fetch_add(&db->duplicates, 1);
            return IM_EDUPLICATE;
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
        im_buf_t rec;
        im_buf_init(&rec, 0);
        (void)im_buf_putc(&rec, TSDB__REC_COMMIT);
        size_t nnew = 0;
        for (size_t i = 0; i < a->capmap; i++)
            if (a->map[i].s && !a->map[i].s->logged) nnew++;
        tsdb__put_uvarint(&rec, nnew);
        for (size_t i = 0; i < a->capmap; i++) {
            tsdb__series_t *s = a->map[i].s;
            if (!s || s->logged) continue;
            tsdb__put_uvarint(&rec, s->id);
            put_labels(&rec, s->labels);
        }
        tsdb__put_uvarint(&rec, a->n);
        int64_t base = a->smp[0].t;
        tsdb__put_varint(&rec, base);
        /* samples: at most 10 + 10 + 8 bytes each, written in place */
        if (im_buf_reserve(&rec, a->n * 28) != IM_OK) im_oom(a->n * 28);
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
        rc = tsdb__wal_log(db->wal, (const uint8_t *)rec.data, rec.len, err);
        im_buf_free(&rec);
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

static bool get_labels(const uint8_t **p, const uint8_t *end, const im_labels_t **out)
{
    uint64_t nl;
    if (!tsdb__get_uvarint(p, end, &nl) || nl > 4096) return false;
    im_labels_builder_t b;
    im_lb_init(&b);
    for (uint64_t i = 0; i < nl; i++) {
        uint64_t ln, lv;
        if (!tsdb__get_uvarint(p, end, &ln) || ln > (uint64_t)(end - *p)) goto fail;
        const char *name = (const char *)*p;
        *p += ln;
        if (!tsdb__get_uvarint(p, end, &lv) || lv > (uint64_t)(end - *p)) goto fail;
        const char *val = (const char *)*p;
        *p += lv;
        if (ln == 0) goto fail;
        im_lb_set(&b, name, ln, val, lv);
    }
    *out = im_lb_build(&b);
    im_lb_free(&b);
    if ((*out)->n == 0) {
        im_labels_unref(*out);
        return false;
    }
    return true;
fail:
    im_lb_free(&b);
    return false;
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
        if (mv > atomic_load(&h->min_valid_t)) atomic_store(&h->min_valid_t, mv);
        return IM_OK;
    }
    if (rec[0] == TSDB__REC_CKP_SERIES) {
        uint64_t id, nch;
        const im_labels_t *ls;
        if (!tsdb__get_uvarint(&p, end, &id) || id == 0 || id >= UINT32_MAX) return IM_ECORRUPT;
        if (!get_labels(&p, end, &ls)) return IM_ECORRUPT;
        tsdb__series_t *s = tsdb__head_create_with_id(h, (uint32_t)id, ls);
        im_labels_unref(ls);
        if (!s) return IM_ECORRUPT;
        s->logged = true;
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
            while (tsdb__xor_next(&d, &t, &v))
                if (t > atomic_load(&s->maxt)) tsdb__head_append(h, s, t, v);
            p += (nbits + 7) / 8;
        }
        pthread_rwlock_unlock(&h->lock);
        return IM_OK;
    }
    if (rec[0] != TSDB__REC_COMMIT) return IM_ECORRUPT;
    uint64_t nser, nsm;
    if (!tsdb__get_uvarint(&p, end, &nser)) return IM_ECORRUPT;
    for (uint64_t i = 0; i < nser; i++) {
        uint64_t id;
        const im_labels_t *ls;
        if (!tsdb__get_uvarint(&p, end, &id) || id == 0 || id >= UINT32_MAX) return IM_ECORRUPT;
        if (!get_labels(&p, end, &ls)) return IM_ECORRUPT;
        tsdb__series_t *s = tsdb__head_create_with_id(h, (uint32_t)id, ls);
        im_labels_unref(ls);
        if (!s) return IM_ECORRUPT;
        s->logged = true;
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
    im_buf_t rec;
    im_buf_init(&rec, 0);
    (void)im_buf_putc(&rec, TSDB__REC_CKP_STATE);
    tsdb__put_varint(&rec, atomic_load(&h->min_valid_t));
    tsdb__wal_frame(out, (const uint8_t *)rec.data, rec.len);
    pthread_rwlock_rdlock(&h->lock);
    for (uint32_t id = 1; id < h->next_id && id < h->capids; id++) {
        tsdb__series_t *s = h->by_id[id];
        if (!s) continue;
        im_buf_reset(&rec);
        (void)im_buf_putc(&rec, TSDB__REC_CKP_SERIES);
        tsdb__put_uvarint(&rec, s->id);
        put_labels(&rec, s->labels);
        tsdb__put_uvarint(&rec, s->nchunks);
        for (uint32_t c = 0; c < s->nchunks; c++) {
            const tsdb__hchunk_t *hc = &s->chunks[c];
            tsdb__put_uvarint(&rec, hc->n);
            tsdb__put_uvarint(&rec, hc->data.nbits);
            (void)im_buf_append(&rec, hc->data.b ? (const char *)hc->data.b : "",
                                (hc->data.nbits + 7) / 8);
        }
        tsdb__wal_frame(out, (const uint8_t *)rec.data, rec.len);
    }
    pthread_rwlock_unlock(&h->lock);
    im_buf_free(&rec);
}
