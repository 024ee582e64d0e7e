/* chunk_hist.c — native-histogram chunks (chunk_hist.h).
 *
 * Layout (docs/storage.md, "Native-histogram chunks"):
 *   header (bytes): version 1, uvarint n, varint schema, 8 bytes zero
 *     threshold (IEEE bits, little-endian), varint poff, uvarint npos, varint
 *     noff, uvarint nneg, uvarint ncustom, ncustom x 8 bytes custom bounds
 *   bit stream (MSB first), per sample:
 *     time: sample 0 as 64 raw bits, sample 1 the delta, later ones the
 *       delta-of-delta, each as a bucketed integer (below)
 *     2 bits counter-reset hint, 1 bit mode
 *     mode 1 (every count an integer below 2^53, as counters are): count, zero
 *       count and each bucket (positive then negative, over the chunk's index
 *       ranges) as the bucketed integer delta against the previous sample
 *     mode 0: the same values as XOR floats
 *     sum: always an XOR float
 *   bucketed integer z = zigzag(d): '0' z == 0, '10' + 7 bits, '110' + 14 bits,
 *     '1110' + 30 bits, '1111' + 64 bits
 *   XOR float x = bits(v) ^ bits(prev): '0' x == 0, else '1' + 6 bits leading
 *     zeros + 6 bits (significant bits - 1) + the significant bits
 * The previous sample of sample 0 is all zeros. */
#include "util/base.h"

#include "tsdb/chunk_hist.h"
#include "util/mem.h"

#define TWO53 9007199254740992.0

static uint64_t dbits(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

static double bitsd(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static void put_int(tsdb__bw_t *w, int64_t d)
{
    uint64_t z = ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
    if (z == 0)
        tsdb__bw_put(w, 0, 1);
    else if (z < (1u << 7))
        tsdb__bw_put(w, (0x2ull << 7) | z, 9);
    else if (z < (1u << 14))
        tsdb__bw_put(w, (0x6ull << 14) | z, 17);
    else if (z < (1ull << 30))
        tsdb__bw_put(w, (0xeull << 30) | z, 34);
    else {
        tsdb__bw_put(w, 0xf, 4);
        tsdb__bw_put(w, z, 64);
    }
}

static bool get_int(tsdb__br_t *r, int64_t *d)
{
    uint64_t b, z;
    unsigned ones = 0;
    for (; ones < 4; ones++) {
        if (!tsdb__br_get(r, 1, &b)) return false;
        if (!b) break;
    }
    static const unsigned width[] = {0, 7, 14, 30, 64};
    if (ones == 0)
        z = 0;
    else if (!tsdb__br_get(r, width[ones], &z))
        return false;
    *d = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
    return true;
}

static void put_xor(tsdb__bw_t *w, double v, double prev)
{
    uint64_t x = dbits(v) ^ dbits(prev);
    if (x == 0) {
        tsdb__bw_put(w, 0, 1);
        return;
    }
    unsigned lead = (unsigned)__builtin_clzll(x), trail = (unsigned)__builtin_ctzll(x);
    if (lead > 63) lead = 63;
    unsigned sig = 64 - lead - trail;
    tsdb__bw_put(w, 1, 1);
    tsdb__bw_put(w, lead, 6);
    tsdb__bw_put(w, sig - 1, 6);
    tsdb__bw_put(w, x >> trail, sig);
}

static bool get_xor(tsdb__br_t *r, double prev, double *v)
{
    uint64_t b, lead, sig, x;
    if (!tsdb__br_get(r, 1, &b)) return false;
    if (!b) {
        *v = prev;
        return true;
    }
    if (!tsdb__br_get(r, 6, &lead) || !tsdb__br_get(r, 6, &sig)) return false;
    sig++;
    if (lead + sig > 64) return false;
    if (!tsdb__br_get(r, (unsigned)sig, &x)) return false;
    *v = bitsd(dbits(prev) ^ (x << (64 - lead - sig)));
    return true;
}

/* The non-zero index range [lo, hi) of one side, or an empty range. */
static void nz_range(const double *v, uint32_t n, int32_t off, int32_t *lo, uint32_t *len)
{
    uint32_t a = 0, b = n;
    while (a < n && v[a] == 0 && !__builtin_signbit(v[a])) a++;
    while (b > a && v[b - 1] == 0 && !__builtin_signbit(v[b - 1])) b--;
    *lo = a < b ? off + (int32_t)a : 0;
    *len = b - a;
}

static size_t nvals(const tsdb__hist_enc_t *e)
{
    return 3 + (size_t)e->npos + e->nneg;
}

void tsdb__hist_enc_start(tsdb__hist_enc_t *e, const storage_fh_t *h)
{
    memset(e, 0, sizeof *e);
    e->schema = h->schema;
    e->zthresh_bits = dbits(h->zthresh);
    if (h->schema == STORAGE_FH_CUSTOM) {
        /* every bucket of the bounds: a counter's later samples always fit */
        e->poff = 0;
        e->npos = h->ncustom + 1;
    } else {
        nz_range(h->pos, h->npos, h->poff, &e->poff, &e->npos);
        nz_range(h->neg, h->nneg, h->noff, &e->noff, &e->nneg);
    }
    e->ncustom = h->ncustom;
    if (h->ncustom) {
        e->custom = im_malloc(h->ncustom * sizeof(double));
        memcpy(e->custom, h->custom, h->ncustom * sizeof(double));
    }
    e->prev = im_calloc(nvals(e), sizeof(double));
}

void tsdb__hist_enc_free(tsdb__hist_enc_t *e)
{
    tsdb__bw_free(&e->bits);
    im_free(e->custom);
    im_free(e->prev);
    memset(e, 0, sizeof *e);
}

static bool side_fits(const double *v, uint32_t n, int32_t off, int32_t lo, uint32_t len)
{
    int32_t a;
    uint32_t l;
    nz_range(v, n, off, &a, &l);
    if (l == 0) return true;
    return a >= lo && (int64_t)a + l <= (int64_t)lo + len;
}

bool tsdb__hist_enc_fits(const tsdb__hist_enc_t *e, const storage_fh_t *h)
{
    if (e->n >= TSDB_HIST_FMT_MAX_SAMPLES || h->schema != e->schema ||
        dbits(h->zthresh) != e->zthresh_bits || h->ncustom != e->ncustom)
        return false;
    for (uint32_t i = 0; i < h->ncustom; i++)
        if (dbits(h->custom[i]) != dbits(e->custom[i])) return false;
    return side_fits(h->pos, h->npos, h->poff, e->poff, e->npos) &&
           side_fits(h->neg, h->nneg, h->noff, e->noff, e->nneg);
}

static double at(const double *v, uint32_t n, int32_t off, int32_t idx)
{
    int64_t k = (int64_t)idx - off;
    return k >= 0 && k < (int64_t)n ? v[k] : 0;
}

static bool integral(double v)
{
    /* the range first: the conversion of a larger value is undefined */
    return v < TWO53 && v > -TWO53 && v == (double)(int64_t)v && !(v == 0 && __builtin_signbit(v));
}

void tsdb__hist_append(tsdb__hist_enc_t *e, int64_t t, const storage_fh_t *h)
{
    tsdb__bw_t *w = &e->bits;
    if (e->n == 0) {
        tsdb__bw_put(w, (uint64_t)t, 64);
    } else if (e->n == 1) { /* wrapping as the decoder does */
        e->tdelta = (int64_t)((uint64_t)t - (uint64_t)e->t);
        put_int(w, e->tdelta);
    } else {
        int64_t d = (int64_t)((uint64_t)t - (uint64_t)e->t);
        put_int(w, (int64_t)((uint64_t)d - (uint64_t)e->tdelta));
        e->tdelta = d;
    }
    e->t = t;
    size_t nv = nvals(e);
    double *cur = im_malloc(nv * sizeof(double));
    cur[0] = h->count;
    cur[1] = h->zcount;
    cur[2] = h->sum;
    for (uint32_t k = 0; k < e->npos; k++)
        cur[3 + k] = at(h->pos, h->npos, h->poff, e->poff + (int32_t)k);
    for (uint32_t k = 0; k < e->nneg; k++)
        cur[3 + e->npos + k] = at(h->neg, h->nneg, h->noff, e->noff + (int32_t)k);
    bool ints = true;
    for (size_t i = 0; i < nv && ints; i++)
        if (i != 2) ints = integral(cur[i]) && integral(e->prev[i]);
    tsdb__bw_put(w, h->hint & 3u, 2);
    tsdb__bw_put(w, ints ? 1 : 0, 1);
    for (size_t i = 0; i < nv; i++) {
        if (i == 2) continue;
        if (ints)
            put_int(w, (int64_t)cur[i] - (int64_t)e->prev[i]);
        else
            put_xor(w, cur[i], e->prev[i]);
    }
    put_xor(w, cur[2], e->prev[2]);
    memcpy(e->prev, cur, nv * sizeof(double));
    im_free(cur);
    e->n++;
}

static void put_u64le(im_buf_t *b, uint64_t v)
{
    uint8_t p[8];
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
    (void)im_buf_append(b, p, 8);
}

void tsdb__hist_chunk_bytes(const tsdb__hist_enc_t *e, im_buf_t *out)
{
    uint8_t ver = TSDB_HIST_FMT_VERSION;
    (void)im_buf_append(out, &ver, 1);
    tsdb__put_uvarint(out, e->n);
    tsdb__put_varint(out, e->schema);
    put_u64le(out, e->zthresh_bits);
    tsdb__put_varint(out, e->poff);
    tsdb__put_uvarint(out, e->npos);
    tsdb__put_varint(out, e->noff);
    tsdb__put_uvarint(out, e->nneg);
    tsdb__put_uvarint(out, e->ncustom);
    for (uint32_t i = 0; i < e->ncustom; i++) put_u64le(out, dbits(e->custom[i]));
    (void)im_buf_append(out, e->bits.b, (e->bits.nbits + 7) / 8);
}

void tsdb__hist_decoded_free(int64_t *t, storage_fh_t **h, size_t n)
{
    for (size_t i = 0; h && i < n; i++) im_free(h[i]);
    im_free(h);
    im_free(t);
}

static bool get_off(const uint8_t **p, const uint8_t *end, int32_t *v)
{
    int64_t x;
    if (!tsdb__get_varint(p, end, &x) || x < -(1 << 30) || x > (1 << 30)) return false;
    *v = (int32_t)x;
    return true;
}

bool tsdb__hist_decode(const uint8_t *p, size_t len, int64_t **pt, storage_fh_t ***ph, size_t *pn)
{
    const uint8_t *end = p + len;
    uint64_t n, npos, nneg, ncustom;
    int64_t schema;
    int32_t poff, noff;
    if (len < 1 || *p++ != TSDB_HIST_FMT_VERSION) return false;
    if (!tsdb__get_uvarint(&p, end, &n) || n == 0 || n > TSDB_HIST_FMT_MAX_SAMPLES) return false;
    if (!tsdb__get_varint(&p, end, &schema) ||
        !((schema >= STORAGE_FH_MIN_SCHEMA && schema <= STORAGE_FH_MAX_SCHEMA) ||
          schema == STORAGE_FH_CUSTOM))
        return false;
    if (end - p < 8) return false;
    uint64_t zb = 0;
    for (int i = 0; i < 8; i++) zb |= (uint64_t)p[i] << (8 * i);
    p += 8;
    if (!get_off(&p, end, &poff) || !tsdb__get_uvarint(&p, end, &npos) ||
        !get_off(&p, end, &noff) || !tsdb__get_uvarint(&p, end, &nneg) ||
        !tsdb__get_uvarint(&p, end, &ncustom))
        return false;
    /* each first: npos + nneg must not wrap around */
    if (npos > TSDB_HIST_FMT_MAX_BUCKETS || nneg > TSDB_HIST_FMT_MAX_BUCKETS ||
        npos + nneg > TSDB_HIST_FMT_MAX_BUCKETS || ncustom > TSDB_HIST_FMT_MAX_CUSTOM)
        return false;
    if (ncustom && schema != STORAGE_FH_CUSTOM) return false;
    /* custom buckets: indices 0..ncustom, no negative side */
    if (schema == STORAGE_FH_CUSTOM && (nneg || (npos && (poff < 0 || poff + npos > ncustom + 1))))
        return false;
    if ((uint64_t)(end - p) < ncustom * 8) return false;
    const uint8_t *cp = p;
    p += ncustom * 8;
    /* the bit stream: every value of every sample takes a bit at least, which
     * also bounds what the decoded samples take in memory */
    tsdb__br_t r = {p, (uint32_t)IM_MIN((size_t)(end - p), (size_t)UINT32_MAX / 8) * 8, 0};
    size_t nv = 3 + (size_t)npos + nneg;
    if ((uint64_t)r.nbits < 64 + n * (3 + nv)) return false;
    double *prev = im_calloc(nv, sizeof(double)), *cur = im_malloc(nv * sizeof(double));
    int64_t *t = im_malloc(n * sizeof *t);
    storage_fh_t **h = im_calloc(n, sizeof *h);
    int64_t tt = 0, td = 0;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        uint64_t raw, hint, mode;
        int64_t d;
        if (i == 0) {
            ok = tsdb__br_get(&r, 64, &raw);
            tt = (int64_t)raw;
        } else if (i == 1) {
            ok = get_int(&r, &d);
            td = d;
            tt = (int64_t)((uint64_t)tt + (uint64_t)td);
        } else {
            ok = get_int(&r, &d);
            td = (int64_t)((uint64_t)td + (uint64_t)d);
            tt = (int64_t)((uint64_t)tt + (uint64_t)td);
        }
        ok = ok && tsdb__br_get(&r, 2, &hint) && tsdb__br_get(&r, 1, &mode);
        for (size_t k = 0; k < nv && ok; k++) {
            if (k == 2) continue;
            if (mode) {
                ok = integral(prev[k]) && get_int(&r, &d);
                if (ok) cur[k] = (double)(int64_t)((uint64_t)(int64_t)prev[k] + (uint64_t)d);
            } else {
                ok = get_xor(&r, prev[k], &cur[k]);
            }
        }
        ok = ok && get_xor(&r, prev[2], &cur[2]);
        if (!ok) break;
        storage_fh_t *o = storage_fh_place(
            im_malloc(storage_fh_size((uint32_t)npos, (uint32_t)nneg, (uint32_t)ncustom)),
            (uint32_t)npos, (uint32_t)nneg, (uint32_t)ncustom);
        o->schema = (int32_t)schema;
        o->hint = (uint8_t)hint;
        o->zthresh = bitsd(zb);
        o->count = cur[0];
        o->zcount = cur[1];
        o->sum = cur[2];
        o->poff = poff;
        o->noff = noff;
        if (npos) memcpy(o->pos, cur + 3, npos * sizeof(double));
        if (nneg) memcpy(o->neg, cur + 3 + npos, nneg * sizeof(double));
        for (uint64_t c = 0; c < ncustom; c++) {
            uint64_t b = 0;
            for (int j = 0; j < 8; j++) b |= (uint64_t)cp[c * 8 + (uint64_t)j] << (8 * j);
            o->custom[c] = bitsd(b);
        }
        h[i] = o;
        t[i] = tt;
        memcpy(prev, cur, nv * sizeof(double));
    }
    im_free(prev);
    im_free(cur);
    if (!ok) {
        tsdb__hist_decoded_free(t, h, n);
        return false;
    }
    *pt = t;
    *ph = h;
    *pn = (size_t)n;
    return true;
}
