/* fuzz_tsdb_hist.c — the native-histogram chunk decoder (tsdb/chunk_hist.h) on
 * arbitrary bytes (an exact-size copy, so a read past the chunk is caught by
 * ASan), and, when it accepts them, a round trip: the decoded samples encoded
 * again (into as many chunks as their layouts need) must decode to the same
 * samples bit for bit. Aborts on a mismatch. */
#include "util/base.h"

#include <stdlib.h>
#include <string.h>

#include "tsdb/chunk_hist.h"
#include "util/buf.h"
#include "util/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t bits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double at(const double *v, uint32_t n, int32_t off, int32_t idx)
{
    int64_t k = (int64_t)idx - off;
    return k >= 0 && k < (int64_t)n ? v[k] : 0;
}

static bool same_side(const double *a, uint32_t an, int32_t ao, const double *b, uint32_t bn,
                      int32_t bo)
{
    for (uint32_t k = 0; k < an; k++)
        if (bits(a[k]) != bits(at(b, bn, bo, ao + (int32_t)k)) && a[k] != 0) return false;
    for (uint32_t k = 0; k < bn; k++)
        if (bits(b[k]) != bits(at(a, an, ao, bo + (int32_t)k)) && b[k] != 0) return false;
    return true;
}

static void check_same(const storage_fh_t *a, const storage_fh_t *b)
{
    if (a->schema != b->schema || a->hint != b->hint || bits(a->zthresh) != bits(b->zthresh) ||
        bits(a->count) != bits(b->count) || bits(a->zcount) != bits(b->zcount) ||
        bits(a->sum) != bits(b->sum) || a->ncustom != b->ncustom ||
        !same_side(a->pos, a->npos, a->poff, b->pos, b->npos, b->poff) ||
        !same_side(a->neg, a->nneg, a->noff, b->neg, b->nneg, b->noff))
        abort();
    for (uint32_t i = 0; i < a->ncustom; i++)
        if (bits(a->custom[i]) != bits(b->custom[i])) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    uint8_t *b = im_malloc(size ? size : 1);
    if (size) memcpy(b, data, size);
    int64_t *t;
    storage_fh_t **h;
    size_t n;
    if (!tsdb__hist_decode(b, size, &t, &h, &n)) {
        im_free(b);
        return 0;
    }
    im_free(b);
    size_t i = 0;
    while (i < n) {
        tsdb__hist_enc_t e;
        tsdb__hist_enc_start(&e, h[i]);
        size_t first = i;
        while (i < n && tsdb__hist_enc_fits(&e, h[i])) {
            tsdb__hist_append(&e, t[i], h[i]);
            i++;
        }
        if (i == first) abort(); /* a chunk's first sample always fits */
        im_buf_t out;
        im_buf_init(&out, 0);
        tsdb__hist_chunk_bytes(&e, &out);
        tsdb__hist_enc_free(&e);
        int64_t *t2;
        storage_fh_t **h2;
        size_t n2;
        if (!tsdb__hist_decode((const uint8_t *)out.data, out.len, &t2, &h2, &n2) ||
            n2 != i - first)
            abort();
        for (size_t k = 0; k < n2; k++) {
            if (t2[k] != t[first + k]) abort();
            check_same(h2[k], h[first + k]);
        }
        tsdb__hist_decoded_free(t2, h2, n2);
        im_buf_free(&out);
    }
    tsdb__hist_decoded_free(t, h, n);
    return 0;
}
