/* iter_bulk.c — the bulk read path of the query iterator, kept apart from
 * querier.c so the iterator's own file only carries two small hooks: (1) a
 * Gorilla XOR chunk decoder that appends a whole chunk's samples within [mint,
 * maxt] to the iterator's arrays in one call, reading the bit stream 64 bits at a
 * time (tsdb__xor_next reads it a byte at a time through a call per field); it
 * decodes exactly what tsdb__xor_next does, stopping at the same point on
 * malformed data; (2) the optional tsdb_iter_vt_t.read method over those decoded
 * arrays, so a reader pays one indirect call per batch instead of two per sample. */
#include "util/base.h"

#include <string.h>

#include "tsdb/tsdb_int.h"

/* The decoder keeps the bit position in a register and reads every field from a
 * 64-bit big-endian window loaded at the field's byte: no bounds check per field.
 * A sample takes at most 68 + 77 bits, so its window loads stay within 27 bytes
 * of its first byte; while 32 bytes remain it reads the chunk in place, and for
 * the last ones it copies the rest to a zero-padded local buffer. Bits past the
 * end read as zeros; a sample whose fields end past nbits is dropped and ends the
 * decoding, as tsdb__xor_next fails on the first field that does not fit. */
#define XD_SLACK 32u

static inline uint64_t xd_be64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* At least 57 bits from bit pos, most significant first. */
static inline uint64_t xd_peek(const uint8_t *p, uint64_t pos)
{
    return xd_be64(p + (pos >> 3)) << (pos & 7);
}

/* The n bits (1..64) from bit pos. */
static inline uint64_t xd_get(const uint8_t *p, uint64_t pos, unsigned n)
{
    uint64_t byte = pos >> 3;
    unsigned sh = (unsigned)(pos & 7);
    uint64_t w = (xd_be64(p + byte) << sh) | ((uint64_t)p[byte + 8] >> (8 - sh));
    return w >> (64 - n);
}

/* Delta-of-delta prefixes other than 1111, by the window's top 3 bits (one byte
 * each, packed): bits the field takes (0xx: 1; 10x: 2+7; 110: 3+9; 1110: 4+12)
 * and the width of its value. */
#define XD_DOD_BITS  0x100c090901010101ULL
#define XD_DOD_WIDTH 0x0c09070700000000ULL

void tsdb__xor_decode_append(const uint8_t *b, uint32_t nbits, uint16_t n, int64_t mint,
                             int64_t maxt, int64_t **pt, double **pv, size_t *pn, size_t *pcap)
{
    if (*pn + n > *pcap) {
        size_t cap = *pcap ? *pcap : 128;
        while (cap < *pn + n) cap *= 2;
        *pt = im_realloc(*pt, cap * sizeof **pt);
        *pv = im_realloc(*pv, cap * sizeof **pv);
        *pcap = cap;
    }
    if (n == 0 || nbits < 128) return;
    uint8_t tail[2 * XD_SLACK + 8];
    const uint8_t *p = b;
    uint64_t pos = 128, end = nbits, nbytes = ((uint64_t)nbits + 7) / 8;
    /* In place while the sample's first byte is at most lim. */
    uint64_t lim = nbytes >= XD_SLACK ? nbytes - XD_SLACK : 0;
    int64_t *ot = *pt + *pn;
    double *ov = *pv + *pn;
    size_t k = 1; /* samples decoded */
    int64_t t;
    uint64_t tdelta = 0, vbits;
    if (lim == 0) { /* a tiny chunk: all of it padded */
        memset(tail, 0, sizeof tail);
        memcpy(tail, b, (size_t)nbytes);
        p = tail;
        lim = UINT64_MAX;
    }
    t = (int64_t)xd_be64(p);
    vbits = xd_be64(p + 8);
    ot[0] = t;
    memcpy(&ov[0], &vbits, sizeof vbits);
    /* The current value window: sig 1 keeps the (discarded) value read defined
     * before the first one; have is all ones once there is one. */
    uint64_t sig = 1, trail = 0, have = 0;
    for (uint16_t i = 1; i < n; i++) {
        if ((pos >> 3) > lim) {
            uint64_t byte0 = pos >> 3;
            memset(tail, 0, sizeof tail);
            memcpy(tail, b + byte0, (size_t)(nbytes - byte0));
            p = tail;
            pos -= byte0 * 8;
            end -= byte0 * 8;
            lim = UINT64_MAX;
        }
        /* Timestamp: the value header is then read from the same window, so only
         * one load per sample is on the bit position's dependency chain. */
        uint64_t win = xd_peek(p, pos), dd, win2, cd;
        if ((win >> 62) == 0) { /* same step, same value: the common case of a
                                 * regular scrape of a bucket that did not move */
            pos += 2;
            t = (int64_t)((uint64_t)t + tdelta);
            if (pos > end) break;
            ot[i] = t;
            memcpy(&ov[i], &vbits, sizeof vbits);
            k++;
            continue;
        }
        if ((win >> 60) == 15) {
            dd = xd_get(p, pos + 4, 64);
            cd = 68;
            win2 = xd_peek(p, pos + 68);
        } else {
            unsigned sel = (unsigned)(win >> 61) * 8;
            uint64_t nb = (XD_DOD_WIDTH >> sel) & 0xff;
            cd = (XD_DOD_BITS >> sel) & 0xff;
            uint64_t mask = (1ULL << nb) - 1, raw = (win >> (64 - cd)) & mask;
            dd = raw - ((mask + 1) & (0 - (uint64_t)(raw > ((mask + 1) >> 1))));
            win2 = win << cd;
        }
        tdelta += dd;
        t = (int64_t)((uint64_t)t + tdelta);
        /* Value: 0 unchanged, 10 previous window, 11 new window (5 + 6 bits),
         * selected with masks rather than branches. */
        uint64_t changed = win2 >> 63, isnew = changed & (win2 >> 62);
        uint64_t l = (win2 >> 57) & 31, s = ((win2 >> 51) & 63) + 1;
        uint64_t mnew = 0 - isnew;
        if ((isnew & (uint64_t)(l + s > 64)) | (changed & ~isnew & ~have & 1)) break;
        have |= mnew;
        sig ^= (sig ^ s) & mnew;
        trail ^= (trail ^ (64 - l - s)) & mnew;
        uint64_t hdr = 2 + (11 & mnew);
        uint64_t x = xd_get(p, pos + cd + hdr, (unsigned)sig) << trail;
        vbits ^= x & (0 - changed);
        pos += cd + 1 + ((hdr + sig - 1) & (0 - changed));
        if (pos > end) break;
        ot[i] = t;
        memcpy(&ov[i], &vbits, sizeof vbits);
        k++;
    }
    /* The time filter, as a second pass: chunks mostly lie wholly inside it. */
    size_t w = 0;
    while (w < k && ot[w] >= mint && ot[w] <= maxt) w++;
    for (size_t j = w; j < k; j++) {
        ot[w] = ot[j];
        memcpy(&ov[w], &ov[j], sizeof *ov); /* bits as they are, NaN payloads too */
        w += (size_t)(ot[j] >= mint) & (size_t)(ot[j] <= maxt);
    }
    *pn += w;
}

size_t tsdb__iter_read_arrays(const int64_t *src_t, const double *src_v, size_t n, ssize_t *pos,
                              int64_t *t, double *v, size_t max)
{
    size_t from = *pos < 0 ? 0 : (size_t)*pos + 1;
    if (*pos >= (ssize_t)n || from >= n) {
        *pos = (ssize_t)n;
        return 0;
    }
    size_t k = n - from;
    if (k > max) k = max;
    if (k == 0) return 0;
    memcpy(t, src_t + from, k * sizeof *t);
    memcpy(v, src_v + from, k * sizeof *v);
    *pos = (ssize_t)(from + k - 1);
    return k;
}
