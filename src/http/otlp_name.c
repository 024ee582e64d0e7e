/* otlp_name.c — OTLP metric and attribute names as Prometheus 3's OTLP
 * receiver writes them with its default translation strategy
 * (UnderscoreEscapingWithSuffixes): the metric name is cut into words at every
 * character that is not an ASCII letter or digit, the unit adds its words
 * (`s` → `seconds`, `By` → `bytes`, `m/s` → `meters_per_second`, `{…}`
 * annotations dropped, a word the name already has not added twice), a
 * monotonic sum ends in `total` and a gauge of unit `1` in `ratio`; the words
 * are joined with `_`, and a leading digit gets `_` in front. An attribute key
 * has each character that is not a letter, digit or `_` replaced by `_`; a key
 * that starts with a digit gets `key_` in front, one with a single leading `_`
 * gets `key`. The tables are the OpenTelemetry unit codes (UCUM case-sensitive)
 * that Prometheus' translator maps; any other unit is kept as its words. */
#include "util/base.h"

#include <string.h>

#include "http/server.h"

typedef struct unit_word {
    const char *code, *word;
} unit_word_t;

static const unit_word_t main_units[] = {
    /* time */
    {"d", "days"},
    {"h", "hours"},
    {"min", "minutes"},
    {"s", "seconds"},
    {"ms", "milliseconds"},
    {"us", "microseconds"},
    {"ns", "nanoseconds"},
    /* bytes */
    {"By", "bytes"},
    {"KiBy", "kibibytes"},
    {"MiBy", "mebibytes"},
    {"GiBy", "gibibytes"},
    {"TiBy", "tibibytes"},
    {"KBy", "kilobytes"},
    {"MBy", "megabytes"},
    {"GBy", "gigabytes"},
    {"TBy", "terabytes"},
    /* SI */
    {"m", "meters"},
    {"V", "volts"},
    {"A", "amperes"},
    {"J", "joules"},
    {"W", "watts"},
    {"g", "grams"},
    /* misc */
    {"Cel", "celsius"},
    {"Hz", "hertz"},
    {"1", ""},
    {"%", "percent"},
};

static const unit_word_t per_units[] = {
    {"s", "second"}, {"m", "minute"}, {"h", "hour"}, {"d", "day"},
    {"w", "week"},   {"mo", "month"}, {"y", "year"},
};

typedef struct words {
    struct {
        const char *p;
        size_t n;
    } w[64];
    size_t n;
} words_t;

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool words_has(const words_t *ws, const char *p, size_t n)
{
    for (size_t i = 0; i < ws->n; i++)
        if (ws->w[i].n == n && !memcmp(ws->w[i].p, p, n)) return true;
    return false;
}

static void words_add(words_t *ws, const char *p, size_t n)
{
    if (n && ws->n < IM_ARRAY_LEN(ws->w)) {
        ws->w[ws->n].p = p;
        ws->w[ws->n].n = n;
        ws->n++;
    }
}

/* Splits s into words at every non-alphanumeric character. */
static void words_split(words_t *ws, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && !is_alnum(s[i])) i++;
        size_t st = i;
        while (i < n && is_alnum(s[i])) i++;
        words_add(ws, s + st, i - st);
    }
}

static void words_del(words_t *ws, const char *w)
{
    size_t wl = strlen(w), k = 0;
    for (size_t i = 0; i < ws->n; i++)
        if (!(ws->w[i].n == wl && !memcmp(ws->w[i].p, w, wl))) ws->w[k++] = ws->w[i];
    ws->n = k;
}

static const char *unit_lookup(const unit_word_t *t, size_t nt, const char *p, size_t n)
{
    for (size_t i = 0; i < nt; i++)
        if (strlen(t[i].code) == n && !memcmp(t[i].code, p, n)) return t[i].word;
    return NULL;
}

/* Adds the words of one unit part (mapped when the table knows it). */
static void unit_words(words_t *ws, const unit_word_t *t, size_t nt, const char *p, size_t n,
                       bool per)
{
    while (n && (*p == ' ')) p++, n--;
    while (n && p[n - 1] == ' ') n--;
    if (!n || memchr(p, '{', n)) return; /* an annotation: {requests} */
    const char *w = unit_lookup(t, nt, p, n);
    words_t uw = {.n = 0};
    if (w)
        words_split(&uw, w, strlen(w));
    else
        words_split(&uw, p, n);
    if (!uw.n) return;
    /* added when the name does not already say it */
    bool have = true;
    for (size_t i = 0; i < uw.n; i++) have = have && words_has(ws, uw.w[i].p, uw.w[i].n);
    if (have) return;
    if (per) words_add(ws, "per", 3);
    for (size_t i = 0; i < uw.n; i++) words_add(ws, uw.w[i].p, uw.w[i].n);
}

size_t http_otlp_metric_name(const char *name, size_t nlen, const char *unit, size_t ulen,
                             http_otlp_kind_t kind, char *out, size_t cap)
{
    words_t ws = {.n = 0};
    words_split(&ws, name, nlen);
    const char *slash = unit ? memchr(unit, '/', ulen) : NULL;
    if (unit && ulen) {
        size_t mainlen = slash ? (size_t)(slash - unit) : ulen;
        unit_words(&ws, main_units, IM_ARRAY_LEN(main_units), unit, mainlen, false);
        if (slash)
            unit_words(&ws, per_units, IM_ARRAY_LEN(per_units), slash + 1, ulen - mainlen - 1,
                       true);
    }
    if (kind == HTTP_OTLP_COUNTER) {
        words_del(&ws, "total");
        words_add(&ws, "total", 5);
    } else if (kind == HTTP_OTLP_GAUGE && ulen == 1 && unit[0] == '1') {
        words_del(&ws, "ratio");
        words_add(&ws, "ratio", 5);
    }
    size_t o = 0;
    if (!cap) return 0;
    for (size_t i = 0; i < ws.n; i++) {
        if (i == 0 && ws.w[i].p[0] >= '0' && ws.w[i].p[0] <= '9' && o + 1 < cap) out[o++] = '_';
        if (i && o + 1 < cap) out[o++] = '_';
        size_t k = IM_MIN(ws.w[i].n, cap - 1 - o);
        memcpy(out + o, ws.w[i].p, k);
        o += k;
    }
    out[o] = 0;
    return o;
}

size_t http_otlp_label_name(const char *key, size_t klen, char *out, size_t cap)
{
    if (!cap) return 0;
    size_t o = 0;
    const char *pre = NULL;
    if (klen && key[0] >= '0' && key[0] <= '9')
        pre = "key_";
    else if (klen >= 2 && key[0] == '_' && key[1] != '_')
        pre = "key";
    else if (klen == 1 && key[0] == '_')
        pre = "key";
    if (pre)
        for (; *pre && o + 1 < cap; pre++) out[o++] = *pre;
    for (size_t i = 0; i < klen && o + 1 < cap; i++)
        out[o++] = (is_alnum(key[i]) || key[i] == '_') ? key[i] : '_';
    out[o] = 0;
    return o;
}
