/* result_json.c — the one JSON writer of query results (promql.h): the HTTP API
 * streams answers through it chunk by chunk, promql-test and promql-eval print
 * through promql_result_to_json. Strings and label sets are escaped as Go's
 * encoding/json does (labels/json.h, IM_JSON_GO), which is what Prometheus'
 * answers hold; values are Prometheus' sample strings (util/fmtfloat.h), with a
 * shortcut for integers; timestamps are seconds in one of two forms (see
 * promql_json_times_t). */
#include "util/base.h"

#include <math.h>

#include "labels/json.h"
#include "promql/promql.h"
#include "storage/fhist.h"
#include "util/fmtfloat.h"

enum { PH_HEAD = 0, PH_SERIES, PH_POINTS, PH_HPOINTS, PH_DONE };

/* Decimal digits of u written backwards ending at end; returns the start. */
static char *utoa_rev(uint64_t u, char *end)
{
    do {
        *--end = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    return end;
}

void promql_json_time(im_buf_t *out, int64_t t_ms, promql_json_times_t times)
{
    char buf[32], *end = buf + sizeof buf, *p = end;
    uint64_t a = t_ms < 0 ? (uint64_t)0 - (uint64_t)t_ms : (uint64_t)t_ms;
    unsigned ms = (unsigned)(a % 1000);
    if (ms) {
        char f[3] = {(char)('0' + ms / 100), (char)('0' + ms / 10 % 10), (char)('0' + ms % 10)};
        int fl = 3;
        if (times == PROMQL_JSON_TIMES_SHORT)
            while (f[fl - 1] == '0') fl--;
        p -= fl;
        memcpy(p, f, (size_t)fl);
        *--p = '.';
    }
    p = utoa_rev(a / 1000, p);
    if (t_ms < 0) *--p = '-';
    (void)im_buf_append(out, p, (size_t)(end - p));
}

/* A sample value as a JSON string: "1", "0.25", "NaN", "+Inf". */
static void put_value(im_buf_t *out, double v)
{
    char fb[IM_FLOAT_BUF + 2];
    size_t fl;
    if (fabs(v) < 1e15 && v == (double)(int64_t)v && !(v == 0 && signbit(v))) {
        /* integral: the shortest form is the integer itself */
        char *end = fb + sizeof fb - 1, *q = utoa_rev((uint64_t)(v < 0 ? -v : v), end);
        if (v < 0) *--q = '-';
        *--q = '"';
        *end = '"';
        (void)im_buf_append(out, q, (size_t)(end - q) + 1);
        return;
    }
    fb[0] = '"';
    fl = im_fmt_float_api(v, fb + 1, IM_FLOAT_BUF);
    fb[fl + 1] = '"';
    (void)im_buf_append(out, fb, fl + 2);
}

/* [t,"v"] */
static void put_point(im_buf_t *out, int64_t t_ms, double v, promql_json_times_t times)
{
    (void)im_buf_putc(out, '[');
    promql_json_time(out, t_ms, times);
    (void)im_buf_putc(out, ',');
    put_value(out, v);
    (void)im_buf_putc(out, ']');
}

/* One bucket [rule,"lo","hi","count"]: rule 0 (lo,hi], 1 [lo,hi), 3 [lo,hi]. */
static void put_bucket(im_buf_t *out, bool *first, int rule, double lo, double hi, double c)
{
    if (c == 0) return;
    if (!*first) (void)im_buf_putc(out, ',');
    *first = false;
    (void)im_buf_printf(out, "[%d,", rule);
    put_value(out, lo);
    (void)im_buf_putc(out, ',');
    put_value(out, hi);
    (void)im_buf_putc(out, ',');
    put_value(out, c);
    (void)im_buf_putc(out, ']');
}

/* A native histogram as the API writes it:
 * {"count":"…","sum":"…","buckets":[[rule,"lo","hi","count"],…]} in ascending
 * order, empty buckets left out (and "buckets" when there is none). */
static void put_hist(im_buf_t *out, const storage_fh_t *h)
{
    (void)im_buf_puts(out, "{\"count\":");
    put_value(out, h->count);
    (void)im_buf_puts(out, ",\"sum\":");
    put_value(out, h->sum);
    bool any = h->zcount != 0;
    for (uint32_t k = 0; k < h->npos && !any; k++) any = h->pos[k] != 0;
    for (uint32_t k = 0; k < h->nneg && !any; k++) any = h->neg[k] != 0;
    if (any) {
        bool first = true;
        (void)im_buf_puts(out, ",\"buckets\":[");
        for (uint32_t k = h->nneg; k-- > 0;) {
            int32_t i = h->noff + (int32_t)k;
            put_bucket(out, &first, 1, -storage_fh_upper(h->schema, i, h),
                       -storage_fh_lower(h->schema, i, h), h->neg[k]);
        }
        if (h->schema != STORAGE_FH_CUSTOM)
            put_bucket(out, &first, 3, -h->zthresh, h->zthresh, h->zcount);
        for (uint32_t k = 0; k < h->npos; k++) {
            int32_t i = h->poff + (int32_t)k;
            put_bucket(out, &first, 0, storage_fh_lower(h->schema, i, h),
                       storage_fh_upper(h->schema, i, h), h->pos[k]);
        }
        (void)im_buf_putc(out, ']');
    }
    (void)im_buf_putc(out, '}');
}

/* Worst size of a point: a float's, or a histogram's with all its buckets. */
static size_t point_worst(double v)
{
    const storage_fh_t *h = storage_fh_unbox(v);
    return h ? 128 + ((size_t)h->npos + h->nneg + 1) * 96 : 64;
}

/* [t,"v"] or, for a histogram, [t,{…}] */
static void put_any_point(im_buf_t *out, int64_t t_ms, double v, promql_json_times_t times)
{
    const storage_fh_t *h = storage_fh_unbox(v);
    if (!h) {
        put_point(out, t_ms, v, times);
        return;
    }
    (void)im_buf_putc(out, '[');
    promql_json_time(out, t_ms, times);
    (void)im_buf_putc(out, ',');
    put_hist(out, h);
    (void)im_buf_putc(out, ']');
}

/* With a capped buffer: false (and the writer's rc set) unless n more bytes
 * surely fit. Every append of the writer goes after such a check, so a capped
 * answer is reported rather than cut in the middle of a token. */
static bool room(promql_json_writer_t *w, const im_buf_t *out, size_t n)
{
    if (w->rc == IM_OK && (!out->max || out->len + n + 1 <= out->max)) return true;
    w->rc = IM_ELIMIT;
    return false;
}

/* Worst case of a string: every byte a \u00XX escape, and the quotes. */
static size_t str_worst(size_t n)
{
    return 6 * n + 2;
}

static size_t labels_worst(const im_labels_t *ls)
{
    size_t n = 2;
    for (uint32_t i = 0; ls && i < ls->n; i++)
        n += str_worst(ls->l[i].name->len) + str_worst(ls->l[i].value->len) + 2;
    return n;
}

#define POINT_WORST 64 /* [-9223372036854775.808,"-1.7976931348623157e+308"] and more */

static const char *result_type(promql_result_type_t t)
{
    switch (t) {
    case PROMQL_RESULT_SCALAR: return "scalar";
    case PROMQL_RESULT_MATRIX: return "matrix";
    case PROMQL_RESULT_STRING: return "string";
    default: return "vector";
    }
}

void promql_json_init(promql_json_writer_t *w, const promql_result_t *r, promql_json_times_t times)
{
    memset(w, 0, sizeof *w);
    w->res = r;
    w->times = times;
}

bool promql_json_step(promql_json_writer_t *w, im_buf_t *out, size_t chunk)
{
    const promql_result_t *r = w->res;
    size_t goal = out->len + chunk;
    while (w->phase != PH_DONE) {
        if (out->len >= goal) return false;
        switch (w->phase) {
        case PH_HEAD:
            if (!room(w, out, 64 + POINT_WORST + str_worst(r->str_len))) break;
            (void)im_buf_puts(out, "{\"resultType\":\"");
            (void)im_buf_puts(out, result_type(r->type));
            (void)im_buf_puts(out, "\",\"result\":");
            /* Prometheus prints the time of a scalar or string result as the
             * shortest decimal (1000.5), whatever form the points take */
            if (r->type == PROMQL_RESULT_SCALAR) {
                put_point(out, r->scalar.t_ms, r->scalar.v, PROMQL_JSON_TIMES_SHORT);
                (void)im_buf_putc(out, '}');
                w->phase = PH_DONE;
            } else if (r->type == PROMQL_RESULT_STRING) {
                (void)im_buf_putc(out, '[');
                promql_json_time(out, r->scalar.t_ms, PROMQL_JSON_TIMES_SHORT);
                (void)im_buf_putc(out, ',');
                im_json_string(out, r->str ? r->str : "", r->str_len, IM_JSON_GO);
                (void)im_buf_puts(out, "]}");
                w->phase = PH_DONE;
            } else {
                (void)im_buf_putc(out, '[');
                w->phase = PH_SERIES;
            }
            break;
        case PH_SERIES: {
            if (w->si >= r->nseries) {
                if (!room(w, out, 2)) break;
                (void)im_buf_puts(out, "]}");
                w->phase = PH_DONE;
                break;
            }
            const promql_series_t *s = &r->series[w->si];
            double v0 = s->npoints ? s->points[0].v : 0;
            if (!room(w, out, 32 + point_worst(v0) + labels_worst(s->labels))) break;
            if (w->si) (void)im_buf_putc(out, ',');
            (void)im_buf_puts(out, "{\"metric\":");
            im_json_labels(out, s->labels, IM_JSON_GO);
            if (r->type == PROMQL_RESULT_MATRIX) {
                /* floats in "values", histograms in "histograms" */
                bool floats = false;
                for (size_t k = 0; k < s->npoints && !floats; k++)
                    floats = !storage_fh_is_box(s->points[k].v);
                (void)im_buf_puts(out, floats ? ",\"values\":[" : ",\"histograms\":[");
                w->pi = 0;
                w->first = true;
                w->phase = floats ? PH_POINTS : PH_HPOINTS;
                break;
            }
            (void)im_buf_puts(out, storage_fh_is_box(v0) ? ",\"histogram\":" : ",\"value\":");
            put_any_point(out, s->npoints ? s->points[0].t_ms : 0, v0, w->times);
            (void)im_buf_putc(out, '}');
            w->si++;
            break;
        }
        case PH_POINTS:
        case PH_HPOINTS: {
            const promql_series_t *s = &r->series[w->si];
            bool hists = w->phase == PH_HPOINTS;
            while (w->pi < s->npoints && out->len < goal &&
                   room(w, out, point_worst(s->points[w->pi].v) + 1)) {
                double v = s->points[w->pi].v;
                if (storage_fh_is_box(v) == hists) {
                    if (!w->first) (void)im_buf_putc(out, ',');
                    w->first = false;
                    put_any_point(out, s->points[w->pi].t_ms, v, w->times);
                }
                w->pi++;
            }
            if (w->pi < s->npoints || !room(w, out, 20)) break;
            bool more = false; /* histograms after the floats */
            for (size_t k = 0; !hists && k < s->npoints && !more; k++)
                more = storage_fh_is_box(s->points[k].v);
            if (more) {
                (void)im_buf_puts(out, "],\"histograms\":[");
                w->pi = 0;
                w->first = true;
                w->phase = PH_HPOINTS;
                break;
            }
            (void)im_buf_puts(out, "]}");
            w->si++;
            w->phase = PH_SERIES;
            break;
        }
        default: break;
        }
        if (w->rc != IM_OK) w->phase = PH_DONE;
    }
    return true;
}

im_rc promql_result_to_json(const promql_result_t *r, im_buf_t *out)
{
    promql_json_writer_t w;
    promql_json_init(&w, r, PROMQL_JSON_TIMES_SHORT);
    while (!promql_json_step(&w, out, SIZE_MAX / 2)) {
    }
    return w.rc;
}
