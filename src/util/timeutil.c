/* timeutil.c — durations and timestamps (see timeutil.h). */
#include "util/base.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util/timeutil.h"

static const struct {
    const char *unit;
    int64_t ms;
} units[] = {
    {"y", 365 * IM_MS_PER_DAY},
    {"w", 7 * IM_MS_PER_DAY},
    {"d", IM_MS_PER_DAY},
    {"h", IM_MS_PER_HOUR},
    {"m", IM_MS_PER_MINUTE},
    {"s", IM_MS_PER_SECOND},
    {"ms", 1},
};

im_rc im_duration_parse(const char *s, size_t len, int64_t *out_ms, im_err_t *err)
{
    if (len == 0) return im_err_set(err, IM_EPARSE, "empty duration string");
    if (len == 1 && s[0] == '0') {
        *out_ms = 0;
        return IM_OK;
    }
    size_t i = 0;
    size_t next_unit = 0; /* units must appear in table order */
    int64_t total = 0;
    while (i < len) {
        if (s[i] < '0' || s[i] > '9') goto bad;
        int64_t n = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (n > (INT64_MAX - 9) / 10) goto overflow;
            n = n * 10 + (s[i] - '0');
            i++;
        }
        size_t ustart = i;
        while (i < len && s[i] >= 'a' && s[i] <= 'z') i++;
        size_t ulen = i - ustart;
        if (ulen == 0) goto bad;
        size_t u;
        for (u = next_unit; u < IM_ARRAY_LEN(units); u++)
            if (strlen(units[u].unit) == ulen && memcmp(units[u].unit, s + ustart, ulen) == 0)
                break;
        if (u == IM_ARRAY_LEN(units)) goto bad;
        next_unit = u + 1;
        /* As model.Duration, the total must fit int64 nanoseconds (about 292y). */
        if (n > 0 && units[u].ms > IM_MAX_DURATION_MS / n) goto overflow;
        int64_t add = n * units[u].ms;
        if (total > IM_MAX_DURATION_MS - add) goto overflow;
        total += add;
    }
    *out_ms = total;
    return IM_OK;
bad:
    return im_err_set(err, IM_EPARSE, "not a valid duration string: \"%.*s\"", (int)len, s);
overflow:
    return im_err_set(err, IM_EPARSE, "duration out of range: \"%.*s\"", (int)len, s);
}

size_t im_duration_format(int64_t ms, char *buf, size_t cap)
{
    if (cap == 0) return 0;
    if (ms == 0) return (size_t)snprintf(buf, cap, "0s");
    size_t n = 0;
    char tmp[128];
    if (ms < 0) {
        tmp[n++] = '-';
        ms = -ms;
    }
    for (size_t u = 0; u < IM_ARRAY_LEN(units); u++) {
        /* As Prometheus: years and weeks only when they divide the rest exactly
         * ("90d", not "12w6d"). */
        if (u < 2 && ms % units[u].ms != 0) continue;
        int64_t q = ms / units[u].ms;
        if (q == 0) continue;
        ms -= q * units[u].ms;
        n += (size_t)snprintf(tmp + n, sizeof tmp - n, "%lld%s", (long long)q, units[u].unit);
    }
    tmp[n] = '\0';
    return (size_t)snprintf(buf, cap, "%s", tmp);
}

/* Howard Hinnant's days_from_civil / civil_from_days. */
int64_t im_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void im_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t yy = (int64_t)yoe + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

static int digits(const char *s, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

im_rc im_time_parse_rfc3339(const char *s, size_t len, int64_t *out_ms)
{
    /* YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM) */
    int Y, M, D, h, mi, sec;
    if (len < 20) return IM_EPARSE;
    if (digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) || s[7] != '-' ||
        digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) ||
        s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' || digits(s + 17, 2, &sec))
        return IM_EPARSE;
    if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || mi > 59 || sec > 59) return IM_EPARSE;
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (D > mdays[M - 1]) return IM_EPARSE;
    if (M == 2 && D == 29 && !((Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0)) return IM_EPARSE;
    size_t i = 19;
    int64_t frac_ns = 0;
    if (i < len && s[i] == '.') {
        i++;
        size_t start = i;
        int64_t scale = 100000000;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            frac_ns += (s[i] - '0') * scale;
            scale /= 10;
            i++;
        }
        if (i == start || i - start > 9) return IM_EPARSE;
    }
    if (i >= len) return IM_EPARSE;
    int64_t off_s = 0;
    if (s[i] == 'Z' || s[i] == 'z') {
        i++;
    } else if (s[i] == '+' || s[i] == '-') {
        int oh, om;
        if (len - i != 6 || digits(s + i + 1, 2, &oh) || s[i + 3] != ':' ||
            digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
            return IM_EPARSE;
        off_s = (int64_t)oh * 3600 + om * 60;
        if (s[i] == '-') off_s = -off_s;
        i += 6;
    } else {
        return IM_EPARSE;
    }
    if (i != len) return IM_EPARSE;
    int64_t days = im_days_from_civil(Y, (unsigned)M, (unsigned)D);
    int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec - off_s;
    /* Prometheus truncates to milliseconds (time.UnixNano / 1e6). */
    *out_ms = secs * 1000 + frac_ns / 1000000;
    return IM_OK;
}

bool im_parse_go_float(const char *s, double *out)
{
    /* strtod also takes leading space, "nan(...)" and hexadecimal without a
     * binary exponent ("0x10"); ParseFloat refuses them. */
    if (!*s || *s == ' ' || (*s >= '\t' && *s <= '\r') || strchr(s, '(')) return false;
    const char *x = s + (*s == '+' || *s == '-');
    if (x[0] == '0' && (x[1] == 'x' || x[1] == 'X') && !strpbrk(x, "pP")) return false;
    char *end;
    errno = 0;
    double f = strtod(s, &end);
    if (*end) return false;
    /* ParseFloat fails on overflow ("1e309") but gives 0 on underflow. */
    if (errno == ERANGE && isinf(f)) return false;
    *out = f;
    return true;
}

im_rc im_time_parse(const char *s, size_t len, int64_t *out_ms, im_err_t *err)
{
    char tmp[64];
    if (len == 0 || len >= sizeof tmp) goto bad;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    if (memchr(tmp, '\0', len)) goto bad;
    /* Unix float seconds, as strconv.ParseFloat accepts them (hex floats too). */
    double f;
    if (im_parse_go_float(tmp, &f)) {
        /* NaN and times past the int64 millisecond range: Prometheus converts
         * them with int64(float), which wraps; we saturate instead (NaN becomes
         * the smallest time, as Go's conversion gives on amd64). */
        if (isnan(f)) {
            *out_ms = IM_MIN_TIME_MS;
            return IM_OK;
        }
        double ip;
        double fr = modf(f, &ip);
        if (ip >= (double)(IM_MAX_TIME_MS / 1000) || ip <= (double)(IM_MIN_TIME_MS / 1000)) {
            *out_ms = ip > 0 ? IM_MAX_TIME_MS : IM_MIN_TIME_MS;
            return IM_OK;
        }
        int64_t ms = (int64_t)ip * 1000 + (int64_t)llround(fr * 1000.0);
        *out_ms = IM_MAX(IM_MIN(ms, IM_MAX_TIME_MS), IM_MIN_TIME_MS);
        return IM_OK;
    }
    if (im_time_parse_rfc3339(s, len, out_ms) == IM_OK) return IM_OK;
bad:
    return im_err_set(err, IM_EPARSE, "cannot parse \"%.*s\" to a valid timestamp",
                      (int)IM_MIN(len, 64), s);
}

size_t im_time_format_rfc3339(int64_t ms, char *buf, size_t cap)
{
    int64_t secs = ms / 1000;
    int64_t rem = ms % 1000;
    if (rem < 0) {
        rem += 1000;
        secs--;
    }
    int64_t days = secs / 86400;
    int64_t sod = secs % 86400;
    if (sod < 0) {
        sod += 86400;
        days--;
    }
    int64_t y;
    unsigned m, d;
    im_civil_from_days(days, &y, &m, &d);
    if (rem)
        return (size_t)snprintf(buf, cap, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", (long long)y, m,
                                d, (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60),
                                (int)rem);
    return (size_t)snprintf(buf, cap, "%04lld-%02u-%02uT%02d:%02d:%02dZ", (long long)y, m, d,
                            (int)(sod / 3600), (int)(sod / 60 % 60), (int)(sod % 60));
}

int64_t im_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t im_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
