/* fuzz_rw2.c — libFuzzer target for the remote-write 2.0 receiver's decoder
 * and append step (src/http/remote_write.c). The input is an uncompressed
 * io.prometheus.write.v2.Request. http_rw2_decode must accept it or refuse it
 * with IM_EPARSE and never read past the input; an accepted request must be
 * consistent (every series', exemplar's and sample's range inside the decoded
 * arrays, every symbol inside the input) and is appended to an in-memory store
 * with a metadata table, where every reference is bounds-checked: the append
 * answers IM_OK or IM_EPARSE (a refusal, with a message per refused line),
 * never anything else, and the written counts never exceed what was sent. The
 * store is reopened every 1000 inputs so it stays small. Seeds in
 * fuzz/corpus/fuzz_rw2 (made by tests/lib/remote_write.py). */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>

#include "http/server.h"
#include "tsdb/tsdb.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tsdb_t *g_db;
static http_rw_meta_t *g_meta;
static unsigned g_runs;

static void reopen(void)
{
    if (g_db) tsdb_close(g_db);
    if (g_meta) http_rw_meta_free(g_meta);
    tsdb_opts_t to;
    memset(&to, 0, sizeof to);
    to.no_background = true;
    if (tsdb_open(&to, &g_db, NULL) != IM_OK) abort();
    g_meta = http_rw_meta_new();
}

static void check_ranges(const http_rw2_req_t *q, const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < q->nsymbols; i++) {
        const uint8_t *p = (const uint8_t *)q->symbols[i].p;
        if (q->symbols[i].len && (p < data || p + q->symbols[i].len > data + size)) abort();
    }
    size_t refs = 0, samples = 0, ex = 0;
    for (size_t i = 0; i < q->nseries; i++) {
        const http_rw2_series_t *ts = &q->series[i];
        if (ts->refs + ts->nrefs > q->nrefs || ts->samples + ts->nsamples > q->nsamples ||
            ts->exemplars + ts->nexemplars > q->nexemplars)
            abort();
        refs += ts->nrefs;
        samples += ts->nsamples;
        ex += ts->nexemplars;
        for (size_t k = 0; k < ts->nexemplars; k++) {
            const http_rw2_exemplar_t *e = &q->exemplars[ts->exemplars + k];
            if (e->refs + e->nrefs > q->nrefs) abort();
            refs += e->nrefs;
        }
    }
    if (refs != q->nrefs || samples != q->nsamples || ex != q->nexemplars) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_db || ++g_runs % 1000 == 0) reopen();
    /* a copy of exactly size bytes, so that ASan sees any read past the end */
    uint8_t *in = malloc(size ? size : 1);
    if (!in) return 0;
    memcpy(in, data, size);
    http_rw2_req_t q;
    q.raw = NULL;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = http_rw2_decode(in, size, &q, &err);
    if (rc != IM_OK && rc != IM_EPARSE) abort();
    if (rc == IM_OK) {
        check_ranges(&q, in, size);
        http_rw2_stats_t st;
        im_buf_t errs;
        im_buf_init(&errs, 0);
        im_err_clear(&err);
        rc = http_rw2_append(tsdb_storage(g_db), g_meta, &q, &st, &errs, &err);
        if (rc != IM_OK && rc != IM_EPARSE) abort();
        if (rc == IM_EPARSE && errs.len == 0) abort();
        if (st.samples > q.nsamples || st.histograms || st.exemplars ||
            st.exemplars_dropped > q.nexemplars || st.series_refused > q.nseries)
            abort();
        im_buf_free(&errs);
    }
    http_rw2_req_free(&q);
    free(in);
    return 0;
}
