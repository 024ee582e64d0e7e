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
#include "util/fmtfloat.h"

enum { PH_HEAD = 0, PH_SERIES, PH_POINTS, PH_DONE };

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
            if (!room(w, out, 32 + POINT_WORST + labels_worst(s->labels))) break;
            if (w->si) (void)im_buf_putc(out, ',');
            (void)im_buf_puts(out, "{\"metric\":");
            im_json_labels(out, s->labels, IM_JSON_GO);
            if (r->type == PROMQL_RESULT_MATRIX) {
                (void)im_buf_puts(out, ",\"values\":[");
                w->pi = 0;
                w->phase = PH_POINTS;
                break;
            }
            (void)im_buf_puts(out, ",\"value\":");
            put_point(out, s->npoints ? s->points[0].t_ms : 0, s->npoints ? s->points[0].v : 0,
                      w->times);
            (void)im_buf_putc(out, '}');
            w->si++;
            break;
        }
        case PH_POINTS: {
            const promql_series_t *s = &r->series[w->si];
            while (w->pi < s->npoints && out->len < goal && room(w, out, POINT_WORST + 1)) {
                if (w->pi) (void)im_buf_putc(out, ',');
                put_point(out, s->points[w->pi].t_ms, s->points[w->pi].v, w->times);
                w->pi++;
            }
            if (w->pi >= s->npoints && room(w, out, 2)) {
                (void)im_buf_puts(out, "]}");
                w->si++;
                w->phase = PH_SERIES;
            }
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
