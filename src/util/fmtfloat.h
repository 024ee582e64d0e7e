/* fmtfloat.h — shortest round-trip float formatting, as Prometheus prints floats.
 *
 * Prometheus prints floats in two different ways, and we match both:
 *  - HTTP API (JSON sample values): Go strconv 'f' with shortest precision, or
 *    'e' when |v| < 1e-6 or |v| >= 1e21; "+Inf", "-Inf", "NaN".
 *    1e21 -> "1e+21", 1e-7 -> "1e-07", 123456789 -> "123456789", 0.1 -> "0.1".
 *  - Exposition text format: Go 'g' with shortest precision: exponent form when
 *    the decimal exponent is < -4 or >= 6, "+Inf", "-Inf", "NaN".
 *    1e6 -> "1e+06", 123456 -> "123456", 1234567 -> "1.234567e+06",
 *    0.0001 -> "0.0001", 0.00001 -> "1e-05".
 *
 * All functions write a NUL-terminated string and return its length. A buffer of
 * IM_FLOAT_BUF bytes is always enough. */
#ifndef IM_UTIL_FMTFLOAT_H
#define IM_UTIL_FMTFLOAT_H

#include "util/base.h"

#define IM_FLOAT_BUF 400

/* Shortest decimal digits d (no leading zeros, ndigits >= 1) and decimal point
 * position dp such that |v| = 0.d1d2...dn x 10^dp. v must be finite and non-zero. */
void im_float_shortest(double v, char digits[20], int *ndigits, int *dp);

/* Go strconv.AppendFloat(v, fmt, -1, 64) for fmt in 'e', 'f', 'g'. */
size_t im_fmt_float_go(double v, char fmt, char *buf, size_t cap);
/* Prometheus HTTP API sample value (without the JSON quotes). */
size_t im_fmt_float_api(double v, char *buf, size_t cap);
/* Prometheus text exposition value. */
size_t im_fmt_float_expo(double v, char *buf, size_t cap);

/* Parses a float as Prometheus' text format and PromQL accept it: decimal,
 * exponent, hex (PromQL), "Inf"/"+Inf"/"-Inf"/"NaN" case-insensitively. The whole
 * [s, s+len) must be consumed. Returns false on error. */
bool im_parse_float(const char *s, size_t len, double *out);

#endif
