/* fuzz_tsdb_wal.c — fuzzes the WAL reader with the loader's own code: the input
 * is the body of a WAL segment (records after the 8-byte header); every record
 * the validator (tsdb__wal_scan) accepts is applied to a memory head by the
 * replay function (tsdb__head_apply_record), then the head is queried. Since
 * random bytes rarely pass a CRC, the input is also read as payloads
 * (u16 length, bytes)* that are framed with good CRCs and replayed, so the
 * record decoders see mutated content; that framing uses 64-byte fragments, so
 * the joining of fragmented records is exercised too (the seeds "fragments" and
 * "fragments-torn" hold fragmented COMMIT records). Must never crash, leak or
 * read out of bounds, whatever the bytes. */
#include "util/base.h"

#include <stdlib.h>

#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
im_rc tsdb__head_apply_record(tsdb__head_t *h, const uint8_t *rec, size_t len);

static im_rc apply(void *ctx, const uint8_t *rec, size_t len)
{
    tsdb_t *db = ctx;
    (void)tsdb__head_apply_record(db->head, rec, len);
    return IM_OK; /* keep going: exercise every record */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tsdb_opts_t o = {0};
    o.no_background = true;
    tsdb_t *db;
    if (tsdb_open(&o, &db, NULL) != IM_OK) abort();
    size_t good = tsdb__wal_scan(data, size, apply, db);
    if (good > size) abort();
    im_buf_t framed;
    im_buf_init(&framed, 0);
    tsdb__wal_set_frag_bytes(64);
    for (size_t off = 0; off + 2 <= size;) {
        size_t n = (size_t)data[off] | (size_t)data[off + 1] << 8;
        off += 2;
        if (n > size - off) n = size - off;
        if (n) tsdb__wal_frame(&framed, data + off, n);
        off += n;
    }
    if (tsdb__wal_scan((const uint8_t *)framed.data, framed.len, apply, db) != framed.len) abort();
    tsdb__wal_set_frag_bytes(0);
    im_buf_free(&framed);
    im_matcher_t *m;
    if (im_matcher_new(IM_MATCH_RE, "__name__", 8, ".*", 2, &m, NULL) != IM_OK) abort();
    tsdb_queryable_t *q = tsdb_queryable(db);
    tsdb_series_set_t *set;
    if (q->vt->select(q, INT64_MIN, INT64_MAX, &m, 1, NULL, &set, NULL) == IM_OK) {
        for (size_t i = 0; i < set->n; i++) {
            tsdb_iter_t *it = set->vt->iter(set, i);
            int64_t t, prev = INT64_MIN;
            double v;
            bool first = true;
            while (it->vt->next(it)) {
                it->vt->at(it, &t, &v);
                if (!first && t <= prev) abort(); /* the head keeps samples ordered */
                prev = t;
                first = false;
            }
            it->vt->free(it);
        }
        set->vt->free(set);
    }
    q->vt->close(q);
    im_matcher_free(m);
    tsdb_close(db);
    return 0;
}
