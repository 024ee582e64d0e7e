/* json.c — the JSON pieces of Prometheus' API answers: timestamps and a resumable writer for query
 * results so a large matrix is serialised chunk by chunk into the connection. */
#include "util/base.h"

#include "http/http_int.h"
#include "util/fmtfloat.h"

void http_json_timestamp(im_buf_t *out, int64_t t)
{
    if (t < 0) {
        (void)im_buf_putc(out, '-');
        t = -t;
    }
    (void)im_buf_printf(out, "%lld", (long long)(t / 1000));
    int64_t f = t % 1000;
    if (f) (void)im_buf_printf(out, ".%03lld", (long long)f);
}

static void json_value(im_buf_t *out, double v)
{
    char b[IM_FLOAT_BUF];
    size_t n = im_fmt_float_api(v, b, sizeof b);
    (void)im_buf_putc(out, '"');
    (void)im_buf_append(out, b, n);
    (void)im_buf_putc(out, '"');
}

static const char *rtype(promql_result_type_t t)
{
    switch (t) {
    case PROMQL_RESULT_SCALAR: return "scalar";
    case PROMQL_RESULT_VECTOR: return "vector";
    case PROMQL_RESULT_MATRIX: return "matrix";
    case PROMQL_RESULT_STRING: return "string";
    default: return "vector";
    }
}

bool http__result_stream_step(http__result_stream_t *st, im_buf_t *out, size_t chunk)
{
    const promql_result_t *r = &st->res;
    size_t goal = out->len + chunk;
    for (;;) {
        if (out->len >= goal && st->phase != 5) return false;
        switch (st->phase) {
        case 0:
            (void)im_buf_puts(out, "{\"status\":\"success\",\"data\":{\"resultType\":\"");
            (void)im_buf_puts(out, rtype(r->type));
            (void)im_buf_puts(out, "\",\"result\":");
            if (r->type == PROMQL_RESULT_SCALAR || r->type == PROMQL_RESULT_STRING) {
                (void)im_buf_putc(out, '[');
                http_json_timestamp(out, r->scalar.t_ms);
                (void)im_buf_putc(out, ',');
                if (r->type == PROMQL_RESULT_SCALAR)
                    json_value(out, r->scalar.v);
                else
                    im_json_string(out, r->str ? r->str : "", r->str_len, IM_JSON_GO);
                (void)im_buf_putc(out, ']');
                st->phase = 4;
            } else {
                (void)im_buf_putc(out, '[');
                st->phase = 1;
                st->si = 0;
            }
            break;
        case 1: /* series start */
            if (st->si >= r->nseries) {
                (void)im_buf_putc(out, ']');
                st->phase = 4;
                break;
            }
            if (st->si) (void)im_buf_putc(out, ',');
            (void)im_buf_puts(out, "{\"metric\":");
            im_json_labels(out, r->series[st->si].labels, IM_JSON_GO);
            if (r->type == PROMQL_RESULT_VECTOR) {
                const promql_series_t *s = &r->series[st->si];
                (void)im_buf_puts(out, ",\"value\":[");
                http_json_timestamp(out, s->npoints ? s->points[0].t_ms : 0);
                (void)im_buf_putc(out, ',');
                json_value(out, s->npoints ? s->points[0].v : 0);
                (void)im_buf_puts(out, "]}");
                st->si++;
            } else {
                (void)im_buf_puts(out, ",\"values\":[");
                st->pi = 0;
                st->phase = 2;
            }
            break;
        case 2: { /* matrix points */
            const promql_series_t *s = &r->series[st->si];
            while (st->pi < s->npoints && out->len < goal) {
                if (st->pi) (void)im_buf_putc(out, ',');
                (void)im_buf_putc(out, '[');
                http_json_timestamp(out, s->points[st->pi].t_ms);
                (void)im_buf_putc(out, ',');
                json_value(out, s->points[st->pi].v);
                (void)im_buf_putc(out, ']');
                st->pi++;
            }
            if (st->pi >= s->npoints) {
                (void)im_buf_puts(out, "]}");
                st->si++;
                st->phase = 1;
            }
            break;
        }
        case 4:
            (void)im_buf_putc(out, '}');
            if (r->nwarnings) {
                (void)im_buf_puts(out, ",\"warnings\":[");
                for (size_t i = 0; i < r->nwarnings; i++) {
                    if (i) (void)im_buf_putc(out, ',');
                    im_json_string(out, r->warnings[i], strlen(r->warnings[i]), IM_JSON_GO);
                }
                (void)im_buf_putc(out, ']');
            }
            (void)im_buf_putc(out, '}');
            st->phase = 5;
            break;
        default: return true;
        }
    }
}

void http_json_result(im_buf_t *out, const promql_result_t *r)
{
    http__result_stream_t st;
    memset(&st, 0, sizeof st);
    st.res = *r; /* shallow: not freed here */
    while (!http__result_stream_step(&st, out, 1 << 20)) {
    }
}
