/* json.c — the JSON pieces of Prometheus' API answers: Go-compatible string
 * escaping, timestamps, label objects, and a resumable writer for query results
 * so a large matrix is serialised chunk by chunk into the connection. */
#include "util/base.h"

#include "http/http_int.h"
#include "util/fmtfloat.h"

static const char hexd[] = "0123456789abcdef";

/* Length of a valid UTF-8 sequence at p (1..4), or 0 when invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80) return 1;
    size_t need;
    unsigned min;
    if ((c & 0xe0) == 0xc0)
        need = 2, min = 0x80;
    else if ((c & 0xf0) == 0xe0)
        need = 3, min = 0x800;
    else if ((c & 0xf8) == 0xf0)
        need = 4, min = 0x10000;
    else
        return 0;
    if (n < need) return 0;
    unsigned cp = c & (0xff >> (need + 1));
    for (size_t i = 1; i < need; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return need;
}

void http_json_string(im_buf_t *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    (void)im_buf_putc(out, '"');
    size_t i = 0, start = 0;
    while (i < len) {
        unsigned c = p[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' && c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t l = utf8_len(p + i, len - i);
            if (l == 3 && p[i] == 0xe2 && p[i + 1] == 0x80 &&
                (p[i + 2] == 0xa8 || p[i + 2] == 0xa9)) {
                (void)im_buf_append(out, s + start, i - start);
                (void)im_buf_puts(out, p[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
                i += 3;
                start = i;
                continue;
            }
            if (l) {
                i += l;
                continue;
            }
            (void)im_buf_append(out, s + start, i - start);
            (void)im_buf_puts(out, "\\ufffd");
            i++;
            start = i;
            continue;
        }
        (void)im_buf_append(out, s + start, i - start);
        switch (c) {
        case '"': (void)im_buf_puts(out, "\\\""); break;
        case '\\': (void)im_buf_puts(out, "\\\\"); break;
        case '\n': (void)im_buf_puts(out, "\\n"); break;
        case '\r': (void)im_buf_puts(out, "\\r"); break;
        case '\t': (void)im_buf_puts(out, "\\t"); break;
        default: {
            char e[7] = {'\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15], 0};
            (void)im_buf_puts(out, e);
        }
        }
        i++;
        start = i;
    }
    (void)im_buf_append(out, s + start, i - start);
    (void)im_buf_putc(out, '"');
}

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

void http__json_labels(im_buf_t *out, const im_labels_t *ls)
{
    (void)im_buf_putc(out, '{');
    for (uint32_t i = 0; ls && i < ls->n; i++) {
        if (i) (void)im_buf_putc(out, ',');
        http_json_string(out, ls->l[i].name->s, ls->l[i].name->len);
        (void)im_buf_putc(out, ':');
        http_json_string(out, ls->l[i].value->s, ls->l[i].value->len);
    }
    (void)im_buf_putc(out, '}');
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
                    http_json_string(out, r->str ? r->str : "", r->str_len);
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
            http__json_labels(out, r->series[st->si].labels);
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
                    http_json_string(out, r->warnings[i], strlen(r->warnings[i]));
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
