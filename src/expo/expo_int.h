/* expo_int.h — helpers shared inside src/expo (not part of the contract). */
#ifndef IM_EXPO_EXPO_INT_H
#define IM_EXPO_EXPO_INT_H

#include "util/base.h"

/* Parses a float exactly as Go's strconv.ParseFloat(s, 64) accepts it (decimal,
 * exponent, hex with a 'p' exponent, inf/infinity/nan case-insensitively, a sign
 * before numbers and inf). Overflow to +-Inf is an error, as in Go. Returns false
 * on error. Correctly rounded. */
bool expo__parse_float(const char *s, size_t len, double *out);

/* mant * 10^e (mant > 0 exact, at most 19 digits) correctly rounded, for
 * -19 <= e <= 19; false otherwise. */
bool expo__float_u128(uint64_t mant, int e, bool neg, double *out);

/* Inlined into the fast path (and into each of its target clones). */
#define IM_EXPO_INLINE static inline __attribute__((always_inline))

extern const double expo__pow10_d[23];     /* 1e0 .. 1e22 */
extern const uint64_t expo__pow10_u64[20]; /* 10^0 .. 10^19 */

/* SWAR digit reading (8 ASCII bytes at a time, no per-digit branches). */
IM_EXPO_INLINE uint64_t expo__load8(const char *s)
{
    uint64_t x;
    memcpy(&x, s, 8);
    return x;
}

/* Value of 8 digit bytes (0..9 each, the first digit in the lowest byte). */
IM_EXPO_INLINE uint64_t expo__swar8(uint64_t v)
{
    v = v * 10 + (v >> 8);
    return (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
            (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
           32;
}

/* Leading digits of s (16 bytes readable): returns how many (16 = at least
 * 16), *v the value of the first min(that, 16). */
IM_EXPO_INLINE unsigned expo__digits16(const char *s, uint64_t *v)
{
    const uint64_t zeros = 0x3030303030303030ull, hi = 0x8080808080808080ull;
    uint64_t d = expo__load8(s) - zeros;
    uint64_t nd = (d | (d + 0x7676767676767676ull)) & hi;
    if (IM_LIKELY(nd)) {
        unsigned n = (unsigned)__builtin_ctzll(nd) >> 3;
        *v = n ? expo__swar8(d << (64 - 8 * n)) : 0;
        return n;
    }
    uint64_t d2 = expo__load8(s + 8) - zeros;
    uint64_t nd2 = (d2 | (d2 + 0x7676767676767676ull)) & hi;
    if (!nd2) {
        *v = expo__swar8(d) * 100000000u + expo__swar8(d2);
        return 16;
    }
    unsigned n2 = (unsigned)__builtin_ctzll(nd2) >> 3;
    *v = expo__swar8(d) * expo__pow10_u64[n2] + (n2 ? expo__swar8(d2 << (64 - 8 * n2)) : 0);
    return 8 + n2;
}

/* expo__parse_float's result, faster for plain decimals (SWAR digit reading),
 * when s[len] is ' ' or '\n' and s[len .. len + 16) may be read. */
IM_EXPO_INLINE bool expo__parse_float_fast(const char *s, size_t len, double *out)
{
    size_t i = s[0] == '-';
    uint64_t mant, f;
    unsigned n = expo__digits16(s + i, &mant);
    if (IM_UNLIKELY(n == 0 || n == 16)) return expo__parse_float(s, len, out);
    i += n;
    int e = 0;
    if (s[i] == '.') {
        unsigned m = expo__digits16(s + i + 1, &f);
        if (m == 16) {
            /* 16 fraction digits and more: Python and Go print 17 in all */
            uint64_t g;
            unsigned k = expo__digits16(s + i + 17, &g);
            if (IM_UNLIKELY(k > 3)) return expo__parse_float(s, len, out);
            f = f * expo__pow10_u64[k] + g;
            m += k;
        }
        if (IM_UNLIKELY(n + m > 19)) return expo__parse_float(s, len, out);
        if (f) { /* "12.0" (Python's str of a float) needs no division */
            mant = mant * expo__pow10_u64[m] + f;
            e = -(int)m;
        }
        i += 1 + m;
    }
    if (s[i] == 'e' || s[i] == 'E') {
        i++;
        bool eneg = s[i] == '-';
        if (s[i] == '-' || s[i] == '+') i++;
        int x = 0;
        size_t e0 = i;
        while ((unsigned)(s[i] - '0') < 10 && i - e0 < 3) x = x * 10 + (s[i++] - '0');
        if (i == e0) return false;
        e += eneg ? -x : x;
    }
    if (IM_UNLIKELY(i != len)) return expo__parse_float(s, len, out);
    if (IM_UNLIKELY(e < -22 || e > 22 || mant > (1ULL << 53))) {
        if (mant && expo__float_u128(mant, e, s[0] == '-', out)) return true;
        return expo__parse_float(s, len, out);
    }
    double v = (double)mant;
    v = e < 0 ? v / expo__pow10_d[-e] : v * expo__pow10_d[e];
    *out = s[0] == '-' ? -v : v;
    return true;
}

/* Character classes. */
extern const uint8_t expo__cls[256];
#define EXPO_C_NAME1  0x01 /* [a-zA-Z_:] metric name start */
#define EXPO_C_NAME   0x02 /* [a-zA-Z0-9_:] */
#define EXPO_C_LNAME1 0x04 /* [a-zA-Z_] */
#define EXPO_C_LNAME  0x08 /* [a-zA-Z0-9_] */
#define EXPO_C_DIGIT  0x10

#endif
