/* fmtfloat.c — shortest round-trip float formatting (see fmtfloat.h).
 *
 * Shortest digits: a double has 15.95 significant decimal digits, so any decimal
 * with <= 15 digits that rounds to v is found by correctly rounding v to 15
 * digits and stripping trailing zeros; otherwise 16, else 17 digits (always
 * enough). That is at most three snprintf/strtod pairs per value. For normal
 * values in [2^-19, 2^53) (PromQL rates, ratios, latencies) the same three steps
 * are done exactly in 128-bit integers instead — the same digits, about 20 times
 * faster (tests/unit/util/test_fmtfloat_fast.c compares both on many values). */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "util/fmtfloat.h"

__extension__ typedef unsigned __int128 fu128;
__extension__ typedef __int128 fi128;

/* The digits of the slow path below for av in [2^-19, 2^53), normal, not a power
 * of two (whose rounding interval is asymmetric); false otherwise. With X = av *
 * 10^k = Q + R / 2^s exactly (Q of 17 digits), the p-digit rounding (ties to even,
 * as printf) is Q rounded to a multiple of 10^(17-p), and it reads back as av
 * (strtod: nearest, ties to even) iff it lies within half an ulp of X — an ulp is
 * 10^k / 2^s there — or exactly on the edge with an even mantissa. m * 10^k stays
 * below 2^127 since k <= 22. */
static bool shortest_fast(double av, char digits[20], int *ndigits, int *dp)
{
    if (!(av >= 0x1p-19 && av < 0x1p53)) return false;
    uint64_t bits;
    memcpy(&bits, &av, sizeof bits);
    int be = (int)(bits >> 52) & 0x7ff;
    uint64_t m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
    if (m == 1ULL << 52) return false;
    unsigned s = (unsigned)(1075 - be);    /* av = m / 2^s, s in [0, 71] */
    int dec = ((be - 1023) * 78913) >> 18; /* floor(log10(2^(be-1023))) <= floor(log10 av) */
    int k = 16 - dec;                      /* <= 22 */
    fu128 p10 = 1;
    for (int i = 0; i < k; i++) p10 *= 10;
    fu128 P = (fu128)m * p10;
    uint64_t Q = (uint64_t)(P >> s);
    if (Q >= 100000000000000000ULL) {
        k--;
        p10 /= 10;
        P = (fu128)m * p10;
        Q = (uint64_t)(P >> s);
    }
    fu128 R = s ? P & (((fu128)1 << s) - 1) : 0;
    uint64_t d = 0;
    for (int prec = 15; prec <= 17; prec++) {
        uint64_t pw = prec == 15 ? 100 : prec == 16 ? 10 : 1;
        uint64_t low = Q % pw;
        d = Q - low;
        fu128 frac2 = (((fu128)low << s) + R) * 2, half = (fu128)pw << s;
        if (frac2 > half || (frac2 == half && ((d / pw) & 1))) d += pw;
        if (prec == 17) break;
        fi128 dist = (fi128)((int64_t)(d - Q)) * ((fi128)1 << (s + 1)) - (fi128)(2 * R);
        if (dist < 0) dist = -dist;
        if ((fu128)dist < p10 || ((fu128)dist == p10 && !(m & 1))) break;
    }
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + d % 10);
        d /= 10;
    } while (d);
    int len = n, nz = 0;
    while (nz < n - 1 && tmp[nz] == '0') nz++;
    int out = 0;
    for (int i = n - 1; i >= nz; i--) digits[out++] = tmp[i];
    digits[out] = '\0';
    *ndigits = out;
    *dp = len - k;
    return true;
}

void im_float_shortest(double v, char digits[20], int *ndigits, int *dp)
{
    char tmp[40];
    double av = fabs(v);
    if (shortest_fast(av, digits, ndigits, dp)) return;
    /* Subnormals have fewer significant bits: search all precisions. */
    int first = av < 2.2250738585072014e-308 ? 1 : 15;
    for (int prec = first; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, av);
        if (prec == 17 || strtod(tmp, NULL) == av) break;
    }
    /* tmp = "d.ddddde[+-]XX" */
    int n = 0;
    const char *p = tmp;
    while (*p && *p != 'e') {
        if (*p != '.') digits[n++] = *p;
        p++;
    }
    int e = (int)strtol(p + 1, NULL, 10); /* snprintf %e always writes the exponent */
    while (n > 1 && digits[n - 1] == '0') n--;
    digits[n] = '\0';
    *ndigits = n;
    *dp = e + 1;
}

static size_t put(char *buf, size_t cap, size_t *pos, char c)
{
    if (*pos + 1 < cap) buf[*pos] = c;
    (*pos)++;
    return *pos;
}

size_t im_fmt_float_go(double v, char fmt, char *buf, size_t cap)
{
    size_t pos = 0;
    if (isnan(v)) return (size_t)snprintf(buf, cap, "NaN");
    if (isinf(v)) return (size_t)snprintf(buf, cap, v > 0 ? "+Inf" : "-Inf");
    if (signbit(v)) put(buf, cap, &pos, '-');
    char d[20];
    int nd, dp;
    if (v == 0) {
        d[0] = '0';
        d[1] = '\0';
        nd = 1;
        dp = 1;
    } else {
        im_float_shortest(v, d, &nd, &dp);
    }
    if (fmt == 'g') {
        /* Go: with shortest precision, %e is used when the decimal exponent is
         * < -4 or >= 6 (eprec is forced to 6 for the decision). */
        int exp = dp - 1;
        fmt = (exp < -4 || exp >= 6) ? 'e' : 'f';
    }
    if (fmt == 'e') {
        put(buf, cap, &pos, d[0]);
        if (nd > 1) {
            put(buf, cap, &pos, '.');
            for (int i = 1; i < nd; i++) put(buf, cap, &pos, d[i]);
        }
        int exp = (v == 0) ? 0 : dp - 1;
        put(buf, cap, &pos, 'e');
        put(buf, cap, &pos, exp < 0 ? '-' : '+');
        if (exp < 0) exp = -exp;
        char eb[8];
        int en = snprintf(eb, sizeof eb, "%02d", exp);
        for (int i = 0; i < en; i++) put(buf, cap, &pos, eb[i]);
    } else {
        if (dp <= 0) {
            put(buf, cap, &pos, '0');
            put(buf, cap, &pos, '.');
            for (int i = 0; i < -dp; i++) put(buf, cap, &pos, '0');
            for (int i = 0; i < nd; i++) put(buf, cap, &pos, d[i]);
        } else if (dp >= nd) {
            for (int i = 0; i < nd; i++) put(buf, cap, &pos, d[i]);
            for (int i = nd; i < dp; i++) put(buf, cap, &pos, '0');
        } else {
            for (int i = 0; i < dp; i++) put(buf, cap, &pos, d[i]);
            put(buf, cap, &pos, '.');
            for (int i = dp; i < nd; i++) put(buf, cap, &pos, d[i]);
        }
    }
    if (cap) buf[pos < cap ? pos : cap - 1] = '\0';
    return pos;
}

size_t im_fmt_float_api(double v, char *buf, size_t cap)
{
    double a = fabs(v);
    char f = 'f';
    if (a != 0 && (a < 1e-6 || a >= 1e21)) f = 'e';
    return im_fmt_float_go(v, f, buf, cap);
}

size_t im_fmt_float_expo(double v, char *buf, size_t cap)
{
    return im_fmt_float_go(v, 'g', buf, cap);
}

bool im_parse_float(const char *s, size_t len, double *out)
{
    char tmp[128];
    if (len == 0 || len >= sizeof tmp) return false;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    const char *p = tmp;
    int sign = 1;
    if (*p == '+' || *p == '-') {
        if (*p == '-') sign = -1;
        p++;
    }
    if (strcasecmp(p, "inf") == 0 || strcasecmp(p, "infinity") == 0) {
        *out = sign * INFINITY;
        return true;
    }
    if (strcasecmp(p, "nan") == 0) {
        *out = NAN;
        return true;
    }
    /* strtod accepts things Go does not ("infinity" handled above, "nan(...)",
     * leading spaces): reject anything but digits, '.', exponent, hex. */
    for (const char *q = p; *q; q++) {
        char c = *q;
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' ||
              c == 'x' || c == 'X' || c == 'p' || c == 'P' || (c >= 'a' && c <= 'f') ||
              (c >= 'A' && c <= 'F') || c == '_'))
            return false;
    }
    if (*p == '\0' || *p == '+' || *p == '-') return false;
    char *end;
    double v = strtod(tmp, &end);
    if (end != tmp + len) return false;
    *out = v;
    return true;
}
