/* json.c — the envelope of Prometheus' API answers around promql's one writer of
 * query results (promql.h, result_json.c): status, data, warnings, resumable so
 * a large matrix is serialised chunk by chunk into the connection. */
#include "util/base.h"

#include "http/http_int.h"

void http_json_timestamp(im_buf_t *out, int64_t t)
{
    promql_json_time(out, t, PROMQL_JSON_TIMES_API);
}

bool http__result_stream_step(http__result_stream_t *st, im_buf_t *out, size_t chunk)
{
    const promql_result_t *r = &st->res;
    switch (st->phase) {
    case 0:
        (void)im_buf_puts(out, "{\"status\":\"success\",\"data\":");
        promql_json_init(&st->w, r, PROMQL_JSON_TIMES_API);
        st->phase = 1;
        /* fall through */
    case 1:
        if (!promql_json_step(&st->w, out, chunk)) return false;
        if (r->nwarnings) {
            (void)im_buf_puts(out, ",\"warnings\":[");
            for (size_t i = 0; i < r->nwarnings; i++) {
                if (i) (void)im_buf_putc(out, ',');
                im_json_string(out, r->warnings[i], strlen(r->warnings[i]), IM_JSON_GO);
            }
            (void)im_buf_putc(out, ']');
        }
        (void)im_buf_putc(out, '}');
        st->phase = 2;
        /* fall through */
    default: return true;
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
