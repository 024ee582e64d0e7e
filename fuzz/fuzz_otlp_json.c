/* fuzz_otlp_json.c — libFuzzer target for OTLP/JSON (src/http/otlp_json.c):
 * arbitrary bytes are transcoded to protobuf, which must either fail with
 * IM_EPARSE (and leave no error unsaid) or give a message the protobuf decoder
 * accepts as well-formed (IM_OK from http_otlp_ingest: the transcoder only
 * writes the wire format it declares). The in-memory store is reopened every
 * 1000 inputs. Seeds in fuzz/corpus/fuzz_otlp_json. */
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
    char *in = malloc(size ? size : 1);
    if (!in) return 0;
    memcpy(in, data, size);
    im_buf_t pb, errs;
    im_buf_init(&pb, 0);
    im_buf_init(&errs, 0);
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = http_otlp_json_to_pb(in, size, &pb, &err);
    if (rc != IM_OK && rc != IM_EPARSE) abort();
    if (rc == IM_EPARSE && !err.msg[0]) abort();
    if (rc == IM_OK) {
        http_otlp_stats_t st;
        im_err_clear(&err);
        rc = http_otlp_ingest(tsdb_storage(g_db), (const uint8_t *)(pb.data ? pb.data : ""), pb.len,
                              &st, &errs, &err);
        if (rc != IM_OK) abort();
    }
    im_buf_free(&pb);
    im_buf_free(&errs);
    free(in);
    return 0;
}
