/* seriesvals.c — Prometheus' expanding notation for series values, as test
 * scripts (`load`, `eval` expectations) and promtool rule tests
 * (`input_series` values) write them: `a`, `a+bxN` / `a-bxN` (N + 1 values
 * a, a±b, …), `axN`, `_` and `_xN` (omitted steps), `stale` (a staleness
 * marker). Shared by the test-script runner and `infermon test rules`. */
#include "util/base.h"

#include <string.h>

#include "promql/promql.h"
#include "storage/storage.h"
#include "util/fmtfloat.h"

#define MAX_TIMES 10000000 /* one xN may not expand beyond this */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

static void push(promql_seqval_t **vals, size_t *n, size_t *cap, promql_seqval_t v)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *vals = im_realloc(*vals, *cap * sizeof **vals);
    }
    (*vals)[(*n)++] = v;
}

bool promql_series_values(const char *s, size_t slen, promql_seqval_t **vals, size_t *n,
                          size_t *cap, size_t *bad_off, size_t *bad_len)
{
    size_t off = 0;
    for (;;) {
        while (off < slen && is_space(s[off])) off++;
        if (off >= slen) break;
        const char *st = s + off;
        size_t len = 0;
        while (off + len < slen && !is_space(st[len])) len++;
        off += len;
        if (bad_off) *bad_off = (size_t)(st - s);
        if (bad_len) *bad_len = len;
        /* split off xN: the last 'x' followed by digits only */
        uint64_t times = 0;
        bool has_times = false;
        for (size_t i = len; i-- > 0;) {
            if (st[i] == 'x' && i + 1 < len) {
                has_times = true;
                for (size_t j = i + 1; j < len; j++) {
                    times = times * 10 + (uint64_t)(st[j] - '0');
                    if (times > MAX_TIMES) return false;
                }
                len = i;
                break;
            }
            if (st[i] < '0' || st[i] > '9') break;
        }
        if (len == 0) return false;
        size_t add;
        double start = 0, step = 0;
        bool omitted = false;
        if (len == 1 && st[0] == '_') {
            omitted = true;
            add = has_times ? times : 1;
        } else if (len == 5 && memcmp(st, "stale", 5) == 0) {
            start = storage_stale_nan();
            add = 1;
        } else {
            /* start[(+|-)step], a sign allowed on start and in exponents */
            size_t split = 0;
            for (size_t i = 1; i < len; i++)
                if ((st[i] == '+' || st[i] == '-') && st[i - 1] != 'e' && st[i - 1] != 'E') {
                    split = i;
                    break;
                }
            if (split && has_times) {
                if (!im_parse_float(st, split, &start)) return false;
                if (split + 1 >= len || !im_parse_float(st + split + 1, len - split - 1, &step))
                    return false;
                if (st[split] == '-') step = -step;
            } else if (!im_parse_float(st, len, &start)) {
                return false;
            }
            add = has_times ? times + 1 : 1;
        }
        for (uint64_t i = 0; i < add; i++)
            /* i == 0 keeps start bit-exact (the staleness NaN is signalling) */
            push(vals, n, cap,
                 (promql_seqval_t){omitted  ? 0
                                   : i == 0 ? start
                                            : start + step * (double)i,
                                   omitted});
    }
    return true;
}
