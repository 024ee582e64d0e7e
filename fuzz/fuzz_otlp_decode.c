/* fuzz_otlp_decode.c — libFuzzer target for the OTLP metrics receiver's
 * decoder and append step (src/http/otlp.c). The input is an uncompressed
 * ExportMetricsServiceRequest. http_otlp_ingest must answer IM_OK or IM_EPARSE
 * and never read past the input; on IM_EPARSE nothing is written (samples 0),
 * on IM_OK every data point is counted once (rejected <= points) and at most
 * a bounded number of samples come from one point. The in-memory store is
 * reopened every 1000 inputs so it stays small. Seeds in
 * fuzz/corpus/fuzz_otlp_decode (made by tests/otlp/otlp_encode.py seeds). */
#include "util/base.h"

#include <stdlib.h>

#include "http/server.h"
#include "tsdb/tsdb.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tsdb_t *g_db;
static unsigned g_runs;

static void reopen(void)
{
    if (g_db) tsdb_close(g_db);
    tsdb_opts_t to;
    memset(&to, 0, sizeof to);
    to.no_background = true;
    if (tsdb_open(&to, &g_db, NULL) != IM_OK) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_db || ++g_runs % 1000 == 0) reopen();
    /* a copy of exactly size bytes, so that ASan sees any read past the end */
    uint8_t *in = malloc(size ? size : 1);
    if (!in) return 0;
    memcpy(in, data, size);
    http_otlp_stats_t st;
    im_buf_t errs;
    im_buf_init(&errs, 0);
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = http_otlp_ingest(tsdb_storage(g_db), in, size, &st, &errs, &err);
    if (rc != IM_OK && rc != IM_EPARSE) abort();
    if (rc == IM_EPARSE && (st.samples || !err.msg[0])) abort();
    if (rc == IM_OK && st.rejected > st.points) abort();
    if (rc == IM_OK && st.rejected && !errs.len) abort();
    im_buf_free(&errs);
    free(in);
    return 0;
}
