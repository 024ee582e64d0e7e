/* float.c — Go-compatible float parsing for the exposition parsers, and the
 * character-class table the lexers share. Values must be read exactly as Go's
 * strconv.ParseFloat reads them (the syntax it accepts, correct rounding,
 * overflow an error), fast: simple decimals take an exact fast path (Clinger:
 * a mantissa below 2^53 and a power of ten up to 22 give a correctly rounded
 * result with one multiply or divide), and up to 19 digits with a power of ten up
 * to 19 use exact 128-bit integer arithmetic; everything else goes to strtod, which is
 * correctly rounded in glibc, after our own syntax check. */
#include "util/base.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "expo/expo_int.h"

#define N1 (EXPO_C_NAME1 | EXPO_C_NAME)
#define L1 (EXPO_C_LNAME1 | EXPO_C_LNAME)
#define A  (N1 | L1) /* letters and '_' */
#define D  (EXPO_C_DIGIT | EXPO_C_NAME | EXPO_C_LNAME)
#define CO (EXPO_C_NAME1 | EXPO_C_NAME) /* ':' */

const uint8_t expo__cls[256] = {
    [':'] = CO, ['_'] = A, ['0'] = D, ['1'] = D, ['2'] = D, ['3'] = D, ['4'] = D, ['5'] = D,
    ['6'] = D,  ['7'] = D, ['8'] = D, ['9'] = D, ['a'] = A, ['b'] = A, ['c'] = A, ['d'] = A,
    ['e'] = A,  ['f'] = A, ['g'] = A, ['h'] = A, ['i'] = A, ['j'] = A, ['k'] = A, ['l'] = A,
    ['m'] = A,  ['n'] = A, ['o'] = A, ['p'] = A, ['q'] = A, ['r'] = A, ['s'] = A, ['t'] = A,
    ['u'] = A,  ['v'] = A, ['w'] = A, ['x'] = A, ['y'] = A, ['z'] = A, ['A'] = A, ['B'] = A,
    ['C'] = A,  ['D'] = A, ['E'] = A, ['F'] = A, ['G'] = A, ['H'] = A, ['I'] = A, ['J'] = A,
    ['K'] = A,  ['L'] = A, ['M'] = A, ['N'] = A, ['O'] = A, ['P'] = A, ['Q'] = A, ['R'] = A,
    ['S'] = A,  ['T'] = A, ['U'] = A, ['V'] = A, ['W'] = A, ['X'] = A, ['Y'] = A, ['Z'] = A,
};

const double expo__pow10_d[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

__extension__ typedef unsigned __int128 u128;

const uint64_t expo__pow10_u64[20] = {1ULL,
                                      10ULL,
                                      100ULL,
                                      1000ULL,
                                      10000ULL,
                                      100000ULL,
                                      1000000ULL,
                                      10000000ULL,
                                      100000000ULL,
                                      1000000000ULL,
                                      10000000000ULL,
                                      100000000000ULL,
                                      1000000000000ULL,
                                      10000000000000ULL,
                                      100000000000000ULL,
                                      1000000000000000ULL,
                                      10000000000000000ULL,
                                      100000000000000000ULL,
                                      1000000000000000000ULL,
                                      10000000000000000000ULL};

static bool eq_ci(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    if (len != n) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
        if (c != lit[i]) return false;
    }
    return true;
}

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* strtod on a NUL-terminated copy; rejects overflow as Go does. */
static bool slow_parse(const char *s, size_t len, double *out)
{
    char stack[128];
    char *tmp = len < sizeof stack ? stack : im_malloc(len + 1);
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(tmp, &end);
    bool ok = end == tmp + len && !isinf(v);
    if (tmp != stack) im_free(tmp);
    if (!ok) return false;
    *out = v;
    return true;
}

/* The common case: [+-]digits[.digits][e[+-]digits] with at most 19 digits in
 * the mantissa, whose value is mant * 10^e with mant <= 2^53 and |e| <= 22 (exact
 * operands, so one correctly rounded multiply or divide). Returns false when the input is anything
 * else; the general reader below then decides (it gives the same result for these inputs). */
static inline bool parse_simple(const char *s, size_t len, double *out)
{
    size_t i = 0;
    bool neg = false;
    if (len == 0 || len > 21) return false;
    if (s[0] == '-' || s[0] == '+') neg = s[i++] == '-';
    uint64_t mant = 0;
    size_t d0 = i;
    while (i < len && (unsigned)(s[i] - '0') < 10) mant = mant * 10 + (uint64_t)(s[i++] - '0');
    size_t nd = i - d0, fd = 0;
    if (i < len && s[i] == '.') {
        size_t f0 = ++i;
        while (i < len && (unsigned)(s[i] - '0') < 10) mant = mant * 10 + (uint64_t)(s[i++] - '0');
        fd = i - f0;
        nd += fd;
    }
    if (nd == 0 || nd > 19 || mant > (1ULL << 53)) return false;
    int e = -(int)fd;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < len && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
        size_t e0 = i;
        int x = 0;
        while (i < len && (unsigned)(s[i] - '0') < 10 && i - e0 < 4) x = x * 10 + (s[i++] - '0');
        if (i == e0) return false;
        e += eneg ? -x : x;
    }
    if (i != len || e < -22 || e > 22) return false;
    double v = (double)mant;
    v = e < 0 ? v / expo__pow10_d[-e] : v * expo__pow10_d[e];
    *out = neg ? -v : v;
    return true;
}

bool expo__float_u128(uint64_t mant, int e, bool neg, double *out)
{
    if (e < -19 || e > 19) return false;
    /* 17-19 digits (Python's repr, Go's %v of float64 print 17): one exact
     * 128-bit product or a 128-bit quotient with a sticky bit, then a single
     * correctly rounded conversion. */
    u128 v;
    int shift = 0;
    if (e >= 0) {
        v = (u128)mant * expo__pow10_u64[e];
    } else {
        shift = __builtin_clzll(mant) + 64; /* mant << shift has bit 127 set */
        u128 num = (u128)mant << shift, d = expo__pow10_u64[-e];
        v = num / d;
        if (num % d) v |= 1; /* sticky: v has >= 63 bits, far below the rounding bit */
    }
    double r = ldexp((double)v, -shift);
    *out = neg ? -r : r;
    return true;
}

bool expo__parse_float(const char *s, size_t len, double *out)
{
    if (parse_simple(s, len, out)) return true;
    size_t i = 0;
    bool neg = false, sign = false;
    if (len == 0) return false;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        sign = true;
        i = 1;
        if (len == 1) return false;
    }
    char c = s[i];
    if (c == 'i' || c == 'I') {
        if (eq_ci(s + i, len - i, "inf") || eq_ci(s + i, len - i, "infinity")) {
            *out = neg ? -INFINITY : INFINITY;
            return true;
        }
        return false;
    }
    if (c == 'n' || c == 'N') {
        if (!sign && eq_ci(s + i, len - i, "nan")) {
            *out = NAN;
            return true;
        }
        return false;
    }
    if (c == '0' && i + 1 < len && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        /* Hex: digits [. digits] p [sign] digits; the 'p' exponent is required. */
        size_t j = i + 2, nd = 0;
        while (j < len && is_hex(s[j])) j++, nd++;
        if (j < len && s[j] == '.') {
            j++;
            while (j < len && is_hex(s[j])) j++, nd++;
        }
        if (nd == 0 || j >= len || (s[j] != 'p' && s[j] != 'P')) return false;
        j++;
        if (j < len && (s[j] == '+' || s[j] == '-')) j++;
        size_t ed = 0;
        while (j < len && s[j] >= '0' && s[j] <= '9') j++, ed++;
        if (ed == 0 || j != len) return false;
        return slow_parse(s, len, out);
    }
    /* Decimal. */
    uint64_t mant = 0;
    int nsig = 0, nd = 0, dropped_exp = 0;
    bool exact = true;
    size_t j = i;
    while (j < len && s[j] >= '0' && s[j] <= '9') {
        nd++;
        if (mant == 0 && s[j] == '0') {
            j++;
            continue;
        }
        if (nsig < 19) {
            mant = mant * 10 + (uint64_t)(s[j] - '0');
            nsig++;
        } else {
            exact = false;
            dropped_exp++;
        }
        j++;
    }
    int frac_exp = 0;
    if (j < len && s[j] == '.') {
        j++;
        while (j < len && s[j] >= '0' && s[j] <= '9') {
            nd++;
            if (mant == 0 && s[j] == '0') {
                frac_exp--;
                j++;
                continue;
            }
            if (nsig < 19) {
                mant = mant * 10 + (uint64_t)(s[j] - '0');
                nsig++;
                frac_exp--;
            } else {
                exact = false;
            }
            j++;
        }
    }
    if (nd == 0) return false;
    int e10 = 0;
    if (j < len && (s[j] == 'e' || s[j] == 'E')) {
        j++;
        bool eneg = false;
        if (j < len && (s[j] == '+' || s[j] == '-')) {
            eneg = s[j] == '-';
            j++;
        }
        int ed = 0;
        while (j < len && s[j] >= '0' && s[j] <= '9') {
            if (e10 < 100000) e10 = e10 * 10 + (s[j] - '0');
            j++, ed++;
        }
        if (ed == 0) return false;
        if (eneg) e10 = -e10;
    }
    if (j != len) return false;
    if (mant == 0) {
        *out = neg ? -0.0 : 0.0;
        return true;
    }
    int e = e10 + frac_exp + dropped_exp;
    if (exact && mant <= (1ULL << 53) && e >= -22 && e <= 22) {
        double v = (double)mant;
        v = e < 0 ? v / expo__pow10_d[-e] : v * expo__pow10_d[e];
        *out = neg ? -v : v;
        return true;
    }
    if (exact && expo__float_u128(mant, e, neg, out)) return true;
    return slow_parse(s, len, out);
}
