/* fmtfloat.c — shortest round-trip float formatting (see fmtfloat.h).
 *
 * Shortest digits: a double has 15.95 significant decimal digits, so any decimal
 * with <= 15 digits that rounds to v is found by correctly rounding v to 15
 * digits and stripping trailing zeros; otherwise 16, else 17 digits (always
 * enough). That is at most three snprintf/strtod pairs per value. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "util/fmtfloat.h"

void im_float_shortest(double v, char digits[20], int *ndigits, int *dp)
{
    char tmp[40];
    double av = fabs(v);
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
    int e = atoi(p + 1); /* checksrc: allow */
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
