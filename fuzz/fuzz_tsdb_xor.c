/* fuzz_tsdb_xor.c — differential fuzzing of the query path's Gorilla XOR chunk
 * decoder: the input is a sample count (u16, little-endian), a time filter
 * selector (one byte), bits to drop from the last byte (low 3 bits of one byte)
 * and the chunk's bytes; tsdb__xor_decode_append must give exactly the samples
 * of a tsdb__xor_next loop (bit-exact, same stopping point) over an exact-size
 * copy, so any read past the chunk is caught by ASan. Aborts on a mismatch. */
#include "util/base.h"

#include <stdlib.h>
#include <string.h>

#include "tsdb/tsdb_int.h"
#include "util/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    uint16_t n = (uint16_t)(data[0] | (data[1] << 8));
    unsigned sel = data[2], drop = data[3] & 7;
    data += 4;
    size -= 4;
    if (n > 4096 || size > 65536) return 0;
    uint32_t nbits = (uint32_t)size * 8;
    if (nbits >= drop + 1) nbits -= drop;
    uint8_t *b = im_malloc(size ? size : 1);
    if (size) memcpy(b, data, size);
    int64_t mint = INT64_MIN, maxt = INT64_MAX;
    tsdb__xor_dec_t d;
    int64_t tt;
    double vv;
    if (sel & 1) { /* a filter from the decoded times */
        tsdb__xor_dec_init(&d, b, nbits, n);
        size_t k = 0;
        while (tsdb__xor_next(&d, &tt, &vv)) {
            if (k == (sel >> 4)) mint = tt;
            if (k == (sel >> 4) + ((sel >> 1) & 7)) maxt = tt;
            k++;
        }
    }
    size_t cnt = 2, cap = 2;
    int64_t *t = im_malloc(cap * sizeof *t);
    double *v = im_malloc(cap * sizeof *v);
    tsdb__xor_decode_append(b, nbits, n, mint, maxt, &t, &v, &cnt, &cap);
    tsdb__xor_dec_init(&d, b, nbits, n);
    size_t j = 2;
    while (tsdb__xor_next(&d, &tt, &vv)) {
        if (tt < mint || tt > maxt) continue;
        uint64_t x, y;
        memcpy(&x, &vv, 8);
        memcpy(&y, &v[j], 8);
        if (j >= cnt || t[j] != tt || x != y) abort();
        j++;
    }
    if (j != cnt) abort();
    im_free(t);
    im_free(v);
    im_free(b);
    return 0;
}
