/* timeutil.h — Prometheus durations and timestamps.
 *
 * Durations follow Prometheus' model.Duration: units y w d h m s ms, each at most
 * once and in that order ("1h30m", "5m", "1d", "500ms"); "0" alone is zero; a
 * bare number ("5"), a repeated or misordered unit ("5mm", "1m1h") and a sign
 * ("-5m") are errors, and so is a total over IM_MAX_DURATION_MS. 1y = 365d, 1w = 7d. Formatting
 * gives the canonical form
 * ("90m" -> "1h30m", "0s" for zero; years and weeks only when exact, as Prometheus:
 * "90d" stays "90d", "14d" is "2w").
 *
 * Timestamps are int64 milliseconds since the Unix epoch. API parameters accept a
 * Unix float ("1700000000.123") or RFC 3339 ("2023-11-14T22:13:20.123Z",
 * offsets allowed), as Prometheus' HTTP API does. */
#ifndef IM_UTIL_TIMEUTIL_H
#define IM_UTIL_TIMEUTIL_H

#include "util/base.h"
#include "util/err.h"

#define IM_MS_PER_SECOND 1000LL
#define IM_MS_PER_MINUTE (60 * IM_MS_PER_SECOND)
#define IM_MS_PER_HOUR   (60 * IM_MS_PER_MINUTE)
#define IM_MS_PER_DAY    (24 * IM_MS_PER_HOUR)

/* Largest duration: int64 nanoseconds, as Prometheus' model.Duration (292y and a
 * bit; "293y" is out of range). */
#define IM_MAX_DURATION_MS (9223372036854775807LL / 1000000)

/* Smallest and largest timestamps the API accepts (as Prometheus' minTime/maxTime).
 * A Unix time beyond them (or +-Inf) saturates to them; NaN gives the smallest. */
#define IM_MIN_TIME_MS (-9223372036854775807LL / 1000000 * 1000 + 0)
#define IM_MAX_TIME_MS (9223372036854775807LL / 1000000 * 1000)

im_rc im_duration_parse(const char *s, size_t len, int64_t *out_ms, im_err_t *err);
/* Writes the canonical form; returns the length (buf gets at most cap-1 chars). */
size_t im_duration_format(int64_t ms, char *buf, size_t cap);

/* A float as Go's strconv.ParseFloat reads it (decimal, hex with p exponent,
 * Inf, NaN); false on a syntax error or overflow. s is NUL-terminated. */
bool im_parse_go_float(const char *s, double *out);
/* Unix float seconds or RFC 3339 -> ms. */
im_rc im_time_parse(const char *s, size_t len, int64_t *out_ms, im_err_t *err);
im_rc im_time_parse_rfc3339(const char *s, size_t len, int64_t *out_ms);
/* "2006-01-02T15:04:05.999Z" style (milliseconds only when non-zero). */
size_t im_time_format_rfc3339(int64_t ms, char *buf, size_t cap);
/* Current wall-clock time in ms, and a monotonic clock in ns. */
int64_t im_now_ms(void);
int64_t im_mono_ns(void);

/* Civil date helpers (proleptic Gregorian, UTC). */
int64_t im_days_from_civil(int64_t y, unsigned m, unsigned d);
void im_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

#endif
