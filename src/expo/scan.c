/* scan.c — the structural pass of the text-format fast path: classifies the
 * input 64 bytes at a time into bit masks (one bit per byte: quotes, label-name
 * characters, metric-name characters, spaces, and the "special" bytes that make
 * a line leave the fast path — backslash, newline, carriage return, any byte
 * >= 0x80), so that parse.c finds label, value and line boundaries with tzcnt
 * instead of byte loops. Four versions give identical masks: AVX-512BW or AVX2
 * (chosen at run time when the CPU has them), SSE2 (the x86-64 baseline) and a
 * portable scalar one for other machines. */
#include "util/base.h"

#include "expo/expo_int.h"
#include "expo/parse_int.h"

#if defined(__x86_64__) && defined(__SSE2__)
#define EXPO_X86 1
#include <immintrin.h>
#endif

#define PREFETCH 2048 /* bytes ahead: the input streams from memory once */

/* Bits of the scalar classifier's byte table. */
enum { K_Q = 1, K_LN = 2, K_NM = 4, K_SP = 8, K_E = 16 };

static uint8_t byte_class(unsigned c)
{
    uint8_t k = 0;
    if (c == '"') k |= K_Q;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
        k |= K_LN | K_NM;
    if (c == ':') k |= K_NM;
    if (c == ' ') k |= K_SP;
    if (c == '\\' || c == '\n' || c == '\r' || c >= 0x80) k |= K_E;
    return k;
}

static void classify_scalar(const unsigned char *s, expo_win_t *o, size_t k)
{
    uint64_t q = 0, ln = 0, nm = 0, sp = 0, e = 0;
    for (unsigned i = 0; i < 64; i++) {
        uint64_t c = byte_class(s[i]);
        q |= (c & 1) << i;
        ln |= ((c >> 1) & 1) << i;
        nm |= ((c >> 2) & 1) << i;
        sp |= ((c >> 3) & 1) << i;
        e |= ((c >> 4) & 1) << i;
    }
    o->q[k] = q, o->ln[k] = ln, o->nm[k] = nm, o->sp[k] = sp, o->e[k] = e;
}

#ifdef EXPO_X86
static void classify_sse2(const unsigned char *s, expo_win_t *o, size_t blk)
{
    const __m128i cq = _mm_set1_epi8('"'), x20 = _mm_set1_epi8(0x20);
    const __m128i alo = _mm_set1_epi8((char)(0x80 - 'a')), alim = _mm_set1_epi8((char)(-128 + 26));
    const __m128i dlo = _mm_set1_epi8((char)(0x80 - '0')), dlim = _mm_set1_epi8((char)(-128 + 10));
    const __m128i us = _mm_set1_epi8('_'), co = _mm_set1_epi8(':'), sp = _mm_set1_epi8(' ');
    const __m128i bs = _mm_set1_epi8('\\'), nl = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    uint64_t q = 0, ln = 0, nm = 0, spm = 0, e = 0;
    for (unsigned k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * k));
        __m128i al = _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(v, x20), alo), alim);
        __m128i dg = _mm_cmplt_epi8(_mm_add_epi8(v, dlo), dlim);
        __m128i l = _mm_or_si128(_mm_or_si128(al, dg), _mm_cmpeq_epi8(v, us));
        __m128i x = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, bs), _mm_cmpeq_epi8(v, nl)),
                                 _mm_or_si128(_mm_cmpeq_epi8(v, cr), v));
        unsigned sh = 16 * k;
        q |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, cq)) << sh;
        ln |= (uint64_t)(unsigned)_mm_movemask_epi8(l) << sh;
        nm |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_or_si128(l, _mm_cmpeq_epi8(v, co))) << sh;
        spm |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, sp)) << sh;
        e |= (uint64_t)(unsigned)_mm_movemask_epi8(x) << sh;
    }
    o->q[blk] = q, o->ln[blk] = ln, o->nm[blk] = nm, o->sp[blk] = spm, o->e[blk] = e;
}

__attribute__((target("avx2"))) static void classify_avx2(const unsigned char *s, expo_win_t *o,
                                                          size_t nblk)
{
    const __m256i cq = _mm256_set1_epi8('"'), x20 = _mm256_set1_epi8(0x20);
    const __m256i alo = _mm256_set1_epi8((char)(0x80 - 'a'));
    const __m256i alim = _mm256_set1_epi8((char)(-128 + 26));
    const __m256i dlo = _mm256_set1_epi8((char)(0x80 - '0'));
    const __m256i dlim = _mm256_set1_epi8((char)(-128 + 10));
    const __m256i us = _mm256_set1_epi8('_'), co = _mm256_set1_epi8(':');
    const __m256i sp = _mm256_set1_epi8(' '), bs = _mm256_set1_epi8('\\');
    const __m256i nl = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r');
    for (size_t b = 0; b < nblk; b++, s += 64) {
        uint32_t m[5][2];
        _mm_prefetch((const char *)s + PREFETCH, _MM_HINT_T0);
        for (unsigned k = 0; k < 2; k++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32 * k));
            __m256i al = _mm256_cmpgt_epi8(alim, _mm256_add_epi8(_mm256_or_si256(v, x20), alo));
            __m256i dg = _mm256_cmpgt_epi8(dlim, _mm256_add_epi8(v, dlo));
            __m256i l = _mm256_or_si256(_mm256_or_si256(al, dg), _mm256_cmpeq_epi8(v, us));
            __m256i x =
                _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, bs), _mm256_cmpeq_epi8(v, nl)),
                                _mm256_or_si256(_mm256_cmpeq_epi8(v, cr), v));
            m[0][k] = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, cq));
            m[1][k] = (uint32_t)_mm256_movemask_epi8(l);
            m[2][k] = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(l, _mm256_cmpeq_epi8(v, co)));
            m[3][k] = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, sp));
            m[4][k] = (uint32_t)_mm256_movemask_epi8(x);
        }
        o->q[b] = m[0][0] | (uint64_t)m[0][1] << 32;
        o->ln[b] = m[1][0] | (uint64_t)m[1][1] << 32;
        o->nm[b] = m[2][0] | (uint64_t)m[2][1] << 32;
        o->sp[b] = m[3][0] | (uint64_t)m[3][1] << 32;
        o->e[b] = m[4][0] | (uint64_t)m[4][1] << 32;
    }
}

/* Nibble tables for the AVX-512 classifier: class(c) = LO[c & 15] & HI[c >> 4],
 * with bits N_NLCR ('\n' '\r'), N_SP, N_Q, N_DIG, N_COLON, N_AL1 (0x41-0x4f,
 * 0x61-0x6f), N_AL2 (0x50-0x5a, 0x70-0x7a), N_BS ('\\'). '_' and bytes >= 0x80
 * are found apart. */
enum { N_NLCR = 1, N_SP = 2, N_Q = 4, N_DIG = 8, N_COLON = 16, N_AL1 = 32, N_AL2 = 64, N_BS = 128 };

__attribute__((target("avx512bw"))) static void classify_avx512(const unsigned char *s,
                                                                expo_win_t *o, size_t nblk)
{
    static const signed char lo[16] = {N_SP | N_DIG | N_AL2,
                                       N_DIG | N_AL1 | N_AL2,
                                       N_Q | N_DIG | N_AL1 | N_AL2,
                                       N_DIG | N_AL1 | N_AL2,
                                       N_DIG | N_AL1 | N_AL2,
                                       N_DIG | N_AL1 | N_AL2,
                                       N_DIG | N_AL1 | N_AL2,
                                       N_DIG | N_AL1 | N_AL2,
                                       N_DIG | N_AL1 | N_AL2,
                                       N_DIG | N_AL1 | N_AL2,
                                       N_NLCR | N_COLON | N_AL1 | N_AL2,
                                       N_AL1,
                                       (signed char)(N_AL1 | N_BS),
                                       N_NLCR | N_AL1,
                                       N_AL1,
                                       N_AL1};
    static const signed char hi[16] = {
        N_NLCR, 0, N_SP | N_Q, N_DIG | N_COLON, N_AL1, (signed char)(N_AL2 | N_BS), N_AL1, N_AL2};
    const __m512i tlo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)lo));
    const __m512i thi = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)hi));
    const __m512i m0f = _mm512_set1_epi8(0x0f), us = _mm512_set1_epi8('_');
    const __m512i bq = _mm512_set1_epi8(N_Q), bsp = _mm512_set1_epi8(N_SP);
    const __m512i bln = _mm512_set1_epi8(N_DIG | N_AL1 | N_AL2);
    const __m512i bnm = _mm512_set1_epi8(N_DIG | N_COLON | N_AL1 | N_AL2);
    const __m512i be = _mm512_set1_epi8((char)(N_NLCR | N_BS));
    for (size_t b = 0; b < nblk; b++, s += 64) {
        __m512i v = _mm512_loadu_si512((const void *)s);
        _mm_prefetch((const char *)s + PREFETCH, _MM_HINT_T0);
        __m512i c = _mm512_and_si512(
            _mm512_shuffle_epi8(tlo, _mm512_and_si512(v, m0f)),
            _mm512_shuffle_epi8(thi, _mm512_and_si512(_mm512_srli_epi16(v, 4), m0f)));
        uint64_t u = _mm512_cmpeq_epi8_mask(v, us);
        o->q[b] = _mm512_test_epi8_mask(c, bq);
        o->sp[b] = _mm512_test_epi8_mask(c, bsp);
        o->ln[b] = _mm512_test_epi8_mask(c, bln) | u;
        o->nm[b] = _mm512_test_epi8_mask(c, bnm) | u;
        o->e[b] = _mm512_test_epi8_mask(c, be) | _mm512_movepi8_mask(v);
    }
}
#endif

size_t expo__classify(const char *b, size_t len, expo_win_t *out, size_t max_blk, int mode)
{
    const unsigned char *s = (const unsigned char *)b;
    size_t full = len / 64;
    if (full > max_blk) full = max_blk;
    void (*one)(const unsigned char *, expo_win_t *, size_t) = classify_scalar;
#ifdef EXPO_X86
    if (mode != EXPO_FAST_SCALAR) one = classify_sse2;
    if (mode == EXPO_FAST_AUTO && __builtin_cpu_supports("avx512bw"))
        classify_avx512(s, out, full);
    else if ((mode == EXPO_FAST_AUTO || mode == EXPO_FAST_AVX2) && __builtin_cpu_supports("avx2"))
        classify_avx2(s, out, full);
    else
#endif
        for (size_t k = 0; k < full; k++) one(s + 64 * k, out, k);
    size_t nblk = full;
    if (full < max_blk && len > 64 * full) {
        /* The last, partial block: a copy padded with NULs (no class). */
        unsigned char tail[64] = {0};
        memcpy(tail, s + 64 * full, len - 64 * full);
        one(tail, out, full);
        nblk++;
    }
    /* Sentinels: bit windows read up to three words past the last block. */
    for (size_t k = nblk; k < nblk + 3; k++)
        out->q[k] = out->ln[k] = out->nm[k] = out->sp[k] = out->e[k] = 0;
    return nblk;
}
