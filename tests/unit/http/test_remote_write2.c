/* test_remote_write2.c — remote write 2.0 receiving (src/http/remote_write.c):
 * the wire decoder on good requests (packed and unpacked references, every
 * field, unknown fields skipped) and on every malformed shape (truncations,
 * wrong wire types, lengths past the end, over-long varints, groups); the
 * append step on a memory-only store, one refusal per bad series with its
 * message while the good ones are written (references outside the table, an
 * odd count, a duplicate or invalid name, no metric name, non-UTF-8 values,
 * metadata references outside, too many labels, native histograms, a bad
 * exemplar, an out-of-order sample), the created timestamp's zero sample, the
 * metadata store; content negotiation; and a server answering 2.0 with the
 * written-count headers. */
#include "util/base.h"

#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "http/http_int.h"
#include "util/timeutil.h"

#include "http_test.h"

/* ---- a 2.0 request builder ---- */

static void sym(im_buf_t *req, const char *s)
{
    ht_pb_bytes(req, 4, s, strlen(s));
}

/* labels_refs packed (field 1, wire type 2). */
static void refs_packed(im_buf_t *ts, const uint32_t *refs, size_t n)
{
    im_buf_t p;
    im_buf_init(&p, 0);
    for (size_t i = 0; i < n; i++) ht_pb_varint(&p, refs[i]);
    ht_pb_bytes(ts, 1, p.data ? p.data : "", p.len);
    im_buf_free(&p);
}

static void sample(im_buf_t *ts, int64_t t, double v)
{
    im_buf_t s;
    im_buf_init(&s, 0);
    ht_pb_double(&s, 1, v);
    ht_pb_uint(&s, 2, (uint64_t)t);
    ht_pb_bytes(ts, 2, s.data, s.len);
    im_buf_free(&s);
}

static void metadata(im_buf_t *ts, uint32_t type, uint32_t help, uint32_t unit)
{
    im_buf_t m;
    im_buf_init(&m, 0);
    ht_pb_uint(&m, 1, type);
    ht_pb_uint(&m, 3, help);
    ht_pb_uint(&m, 4, unit);
    ht_pb_bytes(ts, 5, m.data, m.len);
    im_buf_free(&m);
}

static void exemplar(im_buf_t *ts, const uint32_t *refs, size_t n, double v, int64_t t)
{
    im_buf_t e;
    im_buf_init(&e, 0);
    refs_packed(&e, refs, n);
    ht_pb_double(&e, 2, v);
    ht_pb_uint(&e, 3, (uint64_t)t);
    ht_pb_bytes(ts, 4, e.data, e.len);
    im_buf_free(&e);
}

static void series_end(im_buf_t *req, im_buf_t *ts)
{
    ht_pb_bytes(req, 5, ts->data ? ts->data : "", ts->len);
    im_buf_free(ts);
    im_buf_init(ts, 0);
}

/* symbols: "", __name__, m, job, a, help, s, b, trace_id, x */
enum { S_EMPTY, S_NAME, S_M, S_JOB, S_A, S_HELP, S_UNIT, S_B, S_TRACE, S_X, S_N };
static const char *const syms[S_N] = {"",           "__name__", "m", "job",      "a",
                                      "Help text.", "seconds",  "b", "trace_id", "x"};

static void symbols(im_buf_t *req)
{
    for (int i = 0; i < S_N; i++) sym(req, syms[i]);
}

static im_rc decode(const im_buf_t *b, http_rw2_req_t *q, im_err_t *err)
{
    im_err_clear(err);
    q->raw = NULL;
    return http_rw2_decode((const uint8_t *)(b->data ? b->data : ""), b->len, q, err);
}

/* ---- decoder ---- */

static void test_decode_good(void **state)
{
    (void)state;
    im_buf_t req, ts;
    im_buf_init(&req, 0);
    im_buf_init(&ts, 0);
    symbols(&req);
    const uint32_t r1[] = {S_NAME, S_M, S_JOB, S_A};
    refs_packed(&ts, r1, 4);
    sample(&ts, 1000, 1.5);
    sample(&ts, -5, -0.0);              /* a negative timestamp: a ten-byte varint */
    ht_pb_bytes(&ts, 3, "\x08\x01", 2); /* a histogram */
    const uint32_t er[] = {S_TRACE, S_X};
    exemplar(&ts, er, 2, 7.0, 999);
    metadata(&ts, 1, S_HELP, S_UNIT);
    ht_pb_uint(&ts, 6, 500);
    ht_pb_uint(&ts, 99, 12345); /* unknown fields are skipped */
    ht_pb_bytes(&ts, 98, "zz", 2);
    ht_pb_double(&ts, 97, 1);
    series_end(&req, &ts);
    /* second series: unpacked references, no metadata */
    ht_pb_uint(&ts, 1, S_NAME);
    ht_pb_uint(&ts, 1, S_M);
    ht_pb_uint(&ts, 1, S_JOB);
    ht_pb_uint(&ts, 1, S_B);
    sample(&ts, 2000, 3);
    series_end(&req, &ts);
    ht_pb_uint(&req, 1, 1); /* reserved/unknown fields of Request: skipped */
    ht_pb_bytes(&req, 2, "q", 1);

    http_rw2_req_t q;
    im_err_t err;
    assert_int_equal(decode(&req, &q, &err), IM_OK);
    assert_int_equal(q.nsymbols, S_N);
    for (int i = 0; i < S_N; i++) {
        assert_int_equal(q.symbols[i].len, strlen(syms[i]));
        assert_memory_equal(q.symbols[i].p, syms[i], strlen(syms[i]) ? strlen(syms[i]) : 0);
    }
    assert_int_equal(q.nseries, 2);
    const http_rw2_series_t *a = &q.series[0], *b = &q.series[1];
    assert_int_equal(a->nrefs, 4);
    for (int i = 0; i < 4; i++) assert_int_equal(q.refs[a->refs + i], r1[i]);
    assert_int_equal(a->nsamples, 2);
    assert_int_equal(q.samples[a->samples].t, 1000);
    assert_true(q.samples[a->samples].v == 1.5);
    assert_int_equal(q.samples[a->samples + 1].t, -5);
    assert_true(signbit(q.samples[a->samples + 1].v));
    assert_int_equal(a->nhistograms, 1);
    assert_int_equal(a->nexemplars, 1);
    const http_rw2_exemplar_t *e = &q.exemplars[a->exemplars];
    assert_int_equal(e->nrefs, 2);
    assert_int_equal(q.refs[e->refs], S_TRACE);
    assert_int_equal(q.refs[e->refs + 1], S_X);
    assert_true(e->v == 7.0);
    assert_int_equal(e->t, 999);
    assert_int_equal(a->type, 1);
    assert_int_equal(a->help_ref, S_HELP);
    assert_int_equal(a->unit_ref, S_UNIT);
    assert_int_equal(a->created_ms, 500);
    assert_int_equal(b->nrefs, 4);
    assert_int_equal(q.refs[b->refs + 3], S_B);
    assert_int_equal(b->nsamples, 1);
    assert_int_equal(b->nexemplars, 0);
    assert_int_equal(b->type, 0);
    assert_int_equal(b->help_ref, 0);
    http_rw2_req_free(&q);

    /* empty: nothing */
    im_buf_reset(&req);
    assert_int_equal(decode(&req, &q, &err), IM_OK);
    assert_int_equal(q.nseries + q.nsymbols, 0);
    http_rw2_req_free(&q);
    im_buf_free(&req);
    im_buf_free(&ts);
}

/* A request made of one good symbol table, then `tail` as it is. */
static void expect_malformed(const char *tail, size_t n, const char *part)
{
    im_buf_t req;
    im_buf_init(&req, 0);
    symbols(&req);
    (void)im_buf_append(&req, tail, n);
    http_rw2_req_t q;
    im_err_t err;
    im_rc rc = decode(&req, &q, &err);
    if (rc != IM_EPARSE || !strstr(err.msg, part))
        fail_msg("tail of %zu bytes: rc %d \"%s\", want \"%s\"", n, rc, err.msg, part);
    http_rw2_req_free(&q);
    im_buf_free(&req);
}

/* A series whose body is `body` (n bytes), for malformed series. */
static void expect_bad_series(const char *body, size_t n, const char *part)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    ht_pb_bytes(&b, 5, body, n);
    expect_malformed(b.data, b.len, part);
    im_buf_free(&b);
}

static void test_decode_malformed(void **state)
{
    (void)state;
    /* Request level */
    expect_malformed("\x80", 1, "truncated write request");       /* key */
    expect_malformed("\x2a\x64\x01", 3, "truncated time series"); /* len 100 */
    expect_malformed("\x22\x05"
                     "ab",
                     4, "truncated symbol"); /* len 5 */
    expect_malformed("\x20\x01", 2, "write request: field 4 with wire type 0");
    expect_malformed("\x28\x01", 2, "write request: field 5 with wire type 0");
    expect_malformed("\x2d\x01\x02\x03\x04", 5, "write request: field 5 with wire type 5");
    expect_malformed("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12,
                     "malformed write request");            /* 11-byte varint */
    expect_malformed("\x0b", 1, "malformed write request"); /* group start */
    expect_malformed("\x0c", 1, "malformed write request"); /* group end */
    expect_malformed("\x0f", 1, "malformed write request"); /* wire type 7 */
    expect_malformed("\x12\x09"
                     "abc",
                     5, "malformed write request");                 /* unknown, past end */
    expect_malformed("\x09\x01\x02", 3, "malformed write request"); /* fixed64 short */
    expect_malformed("\x0d\x01", 2, "malformed write request");     /* fixed32 short */
    /* TimeSeries level */
    expect_bad_series("\x0a\x02\x01", 3, "truncated labels_refs"); /* packed past end */
    expect_bad_series("\x0a\x01\x80", 3, "truncated labels_refs"); /* varint cut in it */
    expect_bad_series("\x08", 1, "truncated labels_refs");         /* unpacked, no value */
    expect_bad_series("\x09\x00\x00\x00\x00\x00\x00\x00\x00", 9, "labels_refs with wire type 1");
    expect_bad_series("\x10\x01", 2, "time series: field 2 with wire type 0");
    expect_bad_series("\x18\x01", 2, "time series: field 3 with wire type 0");
    expect_bad_series("\x20\x01", 2, "time series: field 4 with wire type 0");
    expect_bad_series("\x28\x01", 2, "time series: field 5 with wire type 0");
    expect_bad_series("\x32\x01\x00", 3, "time series: field 6 with wire type 2");
    expect_bad_series("\x30", 1, "truncated time series");
    expect_bad_series("\x12\x05\x09", 3, "truncated sample");
    expect_bad_series("\x1a\x05\x09", 3, "truncated time series");
    expect_bad_series("\x2a\x05\x09", 3, "truncated metadata");
    expect_bad_series("\x22\x05\x09", 3, "truncated time series");
    expect_bad_series("\x80", 1, "truncated time series");
    expect_bad_series("\x3b", 1, "malformed time series field 7");
    /* Sample level */
    expect_bad_series("\x12\x05\x09\x00\x00\x00\x00", 7, "truncated sample"); /* short double */
    expect_bad_series("\x12\x02\x08\x01", 4, "sample: field 1 with wire type 0");
    expect_bad_series("\x12\x02\x12\x00", 4, "sample: field 2 with wire type 2");
    expect_bad_series("\x12\x01\x10", 3, "truncated sample");
    expect_bad_series("\x12\x01\x80", 3, "truncated sample");
    expect_bad_series("\x12\x01\x1b", 3, "malformed sample");
    /* Metadata level */
    expect_bad_series("\x2a\x02\x0a\x00", 4, "metadata: field 1 with wire type 2");
    expect_bad_series("\x2a\x02\x19\x00", 4, "metadata: field 3 with wire type 1");
    expect_bad_series("\x2a\x01\x20", 3, "truncated metadata");
    expect_bad_series("\x2a\x01\x0b", 3, "malformed metadata");
    /* Exemplar level */
    expect_bad_series("\x22\x02\x10\x01", 4, "exemplar: field 2 with wire type 0");
    expect_bad_series("\x22\x02\x1a\x00", 4, "exemplar: field 3 with wire type 2");
    expect_bad_series("\x22\x03\x11\x00\x00", 5, "truncated exemplar");
    expect_bad_series("\x22\x01\x18", 3, "truncated exemplar");
    expect_bad_series("\x22\x02\x0a\x05", 4, "truncated labels_refs");
    expect_bad_series("\x22\x01\x80", 3, "truncated exemplar");
    expect_bad_series("\x22\x01\x23", 3, "malformed exemplar");
    expect_bad_series("\x22\x01\x0f", 3, "labels_refs with wire type 7");
}

/* ---- append ---- */

typedef struct fx {
    tsdb_t *db;
    http_rw_meta_t *meta;
} fx_t;

static void fx_open(fx_t *f)
{
    tsdb_opts_t to;
    memset(&to, 0, sizeof to);
    to.no_background = true;
    assert_int_equal(tsdb_open(&to, &f->db, NULL), IM_OK);
    f->meta = http_rw_meta_new();
}

static void fx_close(fx_t *f)
{
    http_rw_meta_free(f->meta);
    tsdb_close(f->db);
}

static im_rc append(fx_t *f, const im_buf_t *req, http_rw2_stats_t *st, im_buf_t *errs)
{
    http_rw2_req_t q;
    im_err_t err;
    assert_int_equal(decode(req, &q, &err), IM_OK);
    im_buf_reset(errs);
    im_rc rc = http_rw2_append(tsdb_storage(f->db), f->meta, &q, st, errs, &err);
    (void)im_buf_putc(errs, 0);
    http_rw2_req_free(&q);
    return rc;
}

/* The samples of series {__name__=name, job=job} in the store: how many, and
 * the first one in *t0, *v0. */
static size_t count_samples(tsdb_t *db, const char *name, const char *job, int64_t *t0, double *v0)
{
    tsdb_queryable_t *qa = tsdb_queryable(db);
    im_matcher_t *ms[2];
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "__name__", 8, name, strlen(name), &ms[0], NULL),
                     IM_OK);
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "job", 3, job, strlen(job), &ms[1], NULL), IM_OK);
    tsdb_series_set_t *ss = NULL;
    assert_int_equal(qa->vt->select(qa, INT64_MIN, INT64_MAX, ms, 2, NULL, &ss, NULL), IM_OK);
    size_t n = 0;
    for (size_t i = 0; i < ss->n; i++) {
        tsdb_iter_t *it = ss->vt->iter(ss, i);
        while (it->vt->next(it)) {
            int64_t t;
            double v;
            it->vt->at(it, &t, &v);
            if (n++ == 0) {
                *t0 = t;
                *v0 = v;
            }
        }
        it->vt->free(it);
    }
    ss->vt->free(ss);
    im_matcher_free(ms[0]);
    im_matcher_free(ms[1]);
    qa->vt->close(qa);
    return n;
}

static void test_append(void **state)
{
    (void)state;
    fx_t f;
    fx_open(&f);
    im_buf_t req, ts, errs;
    im_buf_init(&req, 0);
    im_buf_init(&ts, 0);
    im_buf_init(&errs, 0);
    symbols(&req);
    int64_t now = im_now_ms();
    const uint32_t good[] = {S_JOB, S_A, S_NAME, S_M}; /* any order */
    refs_packed(&ts, good, 4);
    sample(&ts, now - 2000, 1);
    sample(&ts, now - 1000, 2);
    metadata(&ts, 1, S_HELP, S_UNIT);
    ht_pb_uint(&ts, 6, (uint64_t)(now - 5000)); /* created: a zero sample before */
    const uint32_t er[] = {S_TRACE, S_X};
    exemplar(&ts, er, 2, 1, now - 2000);
    series_end(&req, &ts);
    /* the bad ones */
    const uint32_t odd[] = {S_NAME, S_M, S_JOB};
    refs_packed(&ts, odd, 3);
    sample(&ts, now, 1);
    series_end(&req, &ts);
    const uint32_t outside[] = {S_NAME, S_M, S_JOB, 77};
    refs_packed(&ts, outside, 4);
    series_end(&req, &ts);
    ht_pb_uint(&ts, 1, S_NAME);
    ht_pb_uint(&ts, 1, 0x1ffffffffull); /* above 2^32 */
    series_end(&req, &ts);
    const uint32_t dup[] = {S_NAME, S_M, S_JOB, S_A, S_JOB, S_B};
    refs_packed(&ts, dup, 6);
    sample(&ts, now, 1);
    series_end(&req, &ts);
    const uint32_t noname[] = {S_JOB, S_X};
    refs_packed(&ts, noname, 2);
    series_end(&req, &ts);
    const uint32_t badname[] = {S_NAME, S_M, S_HELP, S_A}; /* "Help text." as a label name */
    refs_packed(&ts, badname, 4);
    series_end(&req, &ts);
    const uint32_t badmetric[] = {S_NAME, S_HELP};
    refs_packed(&ts, badmetric, 2);
    series_end(&req, &ts);
    const uint32_t emptyname[] = {S_NAME, S_EMPTY, S_JOB, S_A};
    refs_packed(&ts, emptyname, 4);
    series_end(&req, &ts);
    const uint32_t hist[] = {S_NAME, S_M, S_JOB, S_X};
    refs_packed(&ts, hist, 4);
    ht_pb_bytes(&ts, 3, "", 0);
    ht_pb_bytes(&ts, 3, "", 0);
    sample(&ts, now, 4);
    series_end(&req, &ts);
    const uint32_t mref[] = {S_NAME, S_M, S_JOB, S_B};
    refs_packed(&ts, mref, 4);
    sample(&ts, now, 5);
    metadata(&ts, 2, S_HELP, 1000);
    series_end(&req, &ts);
    const uint32_t exbad[] = {S_NAME, S_M, S_JOB, S_TRACE};
    refs_packed(&ts, exbad, 4);
    sample(&ts, now, 6);
    const uint32_t er_bad[] = {S_TRACE};
    exemplar(&ts, er_bad, 1, 1, now);
    series_end(&req, &ts);
    /* too many labels: 4097 pairs */
    {
        im_buf_t p;
        im_buf_init(&p, 0);
        for (int i = 0; i < 4097; i++) {
            ht_pb_varint(&p, S_NAME);
            ht_pb_varint(&p, S_M);
        }
        ht_pb_bytes(&ts, 1, p.data, p.len);
        im_buf_free(&p);
        series_end(&req, &ts);
    }
    /* an extra symbol with a value that is not UTF-8, used last */
    sym(&req, "\xff\xfe");
    const uint32_t notutf8[] = {S_NAME, S_M, S_JOB, S_N};
    refs_packed(&ts, notutf8, 4);
    series_end(&req, &ts);

    http_rw2_stats_t st;
    assert_int_equal(append(&f, &req, &st, &errs), IM_EPARSE);
    const char *e = errs.data;
    const char *want[] = {
        "invalid labels_refs length 3 (name and value references come in pairs)\n",
        "labels_refs 3 (name) = 77 (value) outside of symbols table (size 11)\n",
        "labels_refs 1 (name) = 4294967295 (value) outside of symbols table (size 11)\n",
        "invalid labels for series, labels m{job=\"b\"}, duplicated label job\n",
        "invalid metric name or labels, got {job=\"x\"}\n",
        "invalid metric name or labels, got m{Help text.=\"a\"}\n",
        "invalid metric name or labels, got Help text.\n",
        "invalid metric name or labels, got {job=\"a\"}\n",
        "native histograms are disabled for series m{job=\"x\"} (2 histogram samples",
        "metadata unit_ref 1000 outside of symbols table (size 11) for series m{job=\"b\"}\n",
        "invalid exemplar for series m{job=\"trace_id\"}: invalid labels_refs length 1",
        "4097 labels, more than the 4096 any series can have",
        "invalid metric name or labels, got m{job=\"", /* the bytes as they are */
    };
    const char *p = e;
    for (size_t i = 0; i < IM_ARRAY_LEN(want); i++) {
        const char *h = strstr(p, want[i]);
        if (!h) fail_msg("missing (in order) \"%s\" in:\n%s", want[i], e);
        p = h + 1;
    }
    assert_int_equal(st.samples, 4); /* good 2, hist 1, exbad 1 */
    assert_int_equal(st.created_zero, 1);
    assert_int_equal(st.histograms, 0);
    assert_int_equal(st.histograms_refused, 2);
    assert_int_equal(st.exemplars, 0);
    assert_int_equal(st.exemplars_dropped, 1);
    assert_int_equal(st.series_refused, 11);
    assert_int_equal(st.samples_refused, 3); /* odd, dup, mref */
    int64_t t0;
    double v0;
    assert_int_equal(count_samples(f.db, "m", "a", &t0, &v0), 3);
    assert_int_equal(t0, now - 5000);
    assert_true(v0 == 0);
    assert_int_equal(count_samples(f.db, "m", "x", &t0, &v0), 1);
    assert_int_equal(count_samples(f.db, "m", "b", &t0, &v0), 0);
    /* metadata of the good series only */
    scrape_metadata_t *md = NULL;
    size_t n = 0;
    http_rw_meta_list(f.meta, &md, &n);
    assert_int_equal(n, 1);
    assert_string_equal(md[0].metric, "m");
    assert_string_equal(md[0].type, "counter");
    assert_string_equal(md[0].help, "Help text.");
    assert_string_equal(md[0].unit, "seconds");
    assert_string_equal(md[0].target_job, "");
    scrape_metadata_free(md, n);

    /* again: out of order now (and the created timestamp is older than the
     * series: no zero sample); one more sample is written */
    im_buf_reset(&req);
    symbols(&req);
    refs_packed(&ts, good, 4);
    sample(&ts, now - 3000, 9);
    sample(&ts, now, 3);
    ht_pb_uint(&ts, 6, (uint64_t)(now - 4000));
    metadata(&ts, 2, S_EMPTY, S_EMPTY);
    series_end(&req, &ts);
    assert_int_equal(append(&f, &req, &st, &errs), IM_EPARSE);
    assert_non_null(strstr(errs.data, "out of order sample for series m{job=\"a\"}\n"));
    assert_int_equal(st.samples, 1);
    assert_int_equal(st.created_zero, 0);
    assert_int_equal(count_samples(f.db, "m", "a", &t0, &v0), 4);
    md = NULL;
    n = 0;
    http_rw_meta_list(f.meta, &md, &n);
    assert_int_equal(n, 1);
    assert_string_equal(md[0].type, "gauge"); /* the latest wins */
    assert_string_equal(md[0].help, "");
    scrape_metadata_free(md, n);

    /* a created timestamp not before the first sample: no zero sample; all good: IM_OK */
    im_buf_reset(&req);
    symbols(&req);
    const uint32_t c2[] = {S_NAME, S_X};
    refs_packed(&ts, c2, 2);
    sample(&ts, now, 1);
    ht_pb_uint(&ts, 6, (uint64_t)now);
    series_end(&req, &ts);
    assert_int_equal(append(&f, &req, &st, &errs), IM_OK);
    assert_int_equal(st.samples, 1);
    assert_int_equal(st.created_zero, 0);

    /* many refusals: 20 lines, then a count */
    im_buf_reset(&req);
    symbols(&req);
    for (int i = 0; i < 25; i++) {
        refs_packed(&ts, odd, 3);
        series_end(&req, &ts);
    }
    assert_int_equal(append(&f, &req, &st, &errs), IM_EPARSE);
    size_t lines = 0;
    for (const char *c = errs.data; *c; c++) lines += *c == '\n';
    assert_int_equal(lines, 21);
    assert_non_null(strstr(errs.data, "... and 5 more\n"));

    im_buf_free(&req);
    im_buf_free(&ts);
    im_buf_free(&errs);
    fx_close(&f);
}

/* ---- the metadata store: kept in its file, bounded ---- */

static size_t meta_get(http_rw_meta_t *m, const char *metric, scrape_metadata_t *out)
{
    scrape_metadata_t *md = NULL;
    size_t n = 0;
    http_rw_meta_list(m, &md, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(md[i].metric, metric)) {
            snprintf(out->type = im_malloc(64), 64, "%s", md[i].type);
            out->help = im_strdup(md[i].help);
            out->unit = im_strdup(md[i].unit);
        }
    scrape_metadata_free(md, n);
    return n;
}

static void test_metadata_store(void **state)
{
    (void)state;
    char dir[] = "/tmp/im_rw2md_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/md", dir);
    http_rw_meta_t *m = http_rw_meta_open(path, 3);
    const char *h = "Tab\there, newline\nthere, backslash \\ too.";
    http_rw_meta_set(m, "a", 1, "counter", h, strlen(h), "seconds", 7);
    http_rw_meta_set(m, "b", 1, "gauge", "B", 1, "", 0);
    http_rw_meta_set(m, "b", 1, "gauge", "B2", 2, "", 0); /* latest wins */
    http_rw_meta_set(m, "c", 1, "summary", "", 0, "", 0);
    /* full (3 names): a new one is not kept and counted; a known one still changes */
    http_rw_meta_set(m, "d", 1, "gauge", "D", 1, "", 0);
    http_rw_meta_set(m, "c", 1, "histogram", "C", 1, "", 0);
    im_buf_t out;
    im_buf_init(&out, 0);
    http__rw_meta_metrics(m, &out);
    assert_non_null(strstr(out.data, "infermon_remote_write_metadata_dropped_total 1\n"));
    assert_non_null(strstr(out.data, "infermon_remote_write_metadata_entries 3\n"));
    im_buf_free(&out);
    http_rw_meta_free(m);
    /* a line cut short by a kill (no newline) is not taken */
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs("e\tgauge\tcut", f);
    fclose(f);

    /* reopened (a restart): the same entries, the text exact */
    m = http_rw_meta_open(path, 3);
    scrape_metadata_t x = {0};
    assert_int_equal(meta_get(m, "a", &x), 3);
    assert_string_equal(x.type, "counter");
    assert_string_equal(x.help, h);
    assert_string_equal(x.unit, "seconds");
    im_free(x.type), im_free(x.help), im_free(x.unit);
    meta_get(m, "b", &x);
    assert_string_equal(x.help, "B2");
    im_free(x.type), im_free(x.help), im_free(x.unit);
    meta_get(m, "c", &x);
    assert_string_equal(x.type, "histogram");
    im_free(x.type), im_free(x.help), im_free(x.unit);
    x.type = NULL;
    meta_get(m, "d", &x);
    assert_null(x.type);
    http_rw_meta_free(m);
    /* a smaller maximum at the next start keeps the first names (in log order) and
     * counts the rest */
    m = http_rw_meta_open(path, 2);
    assert_int_equal(meta_get(m, "a", &x), 2);
    im_free(x.type), im_free(x.help), im_free(x.unit);
    im_buf_init(&out, 0);
    http__rw_meta_metrics(m, &out); /* c's two lines in the log */
    assert_non_null(strstr(out.data, "infermon_remote_write_metadata_dropped_total 2\n"));
    im_buf_free(&out);
    http_rw_meta_free(m);
    unlink(path);
    rmdir(dir);
}

/* ---- content negotiation ---- */

static void test_negotiate(void **state)
{
    (void)state;
    char m[600];
    assert_int_equal(http__rw_negotiate(NULL, m, sizeof m), 1);
    assert_int_equal(http__rw_negotiate("", m, sizeof m), 1);
    assert_int_equal(http__rw_negotiate("application/x-protobuf", m, sizeof m), 1);
    assert_int_equal(http__rw_negotiate(" application/x-protobuf ", m, sizeof m), 1);
    assert_int_equal(http__rw_negotiate("application/x-www-form-urlencoded", m, sizeof m), 1);
    assert_int_equal(
        http__rw_negotiate("application/x-protobuf;proto=prometheus.WriteRequest", m, sizeof m), 1);
    assert_int_equal(
        http__rw_negotiate("application/x-protobuf;proto=io.prometheus.write.v2.Request", m,
                           sizeof m),
        2);
    assert_int_equal(http__rw_negotiate("application/x-protobuf;a=b;proto=io.prometheus.write.v2."
                                        "Request",
                                        m, sizeof m),
                     2);
    /* " proto" is not "proto" (Prometheus 3 does not trim parameters) */
    assert_int_equal(
        http__rw_negotiate("application/x-protobuf; proto=io.prometheus.write.v2.Request", m,
                           sizeof m),
        1);
    assert_int_equal(http__rw_negotiate("application/x-protobuf;proto=v3", m, sizeof m), 0);
    assert_string_equal(m, "got application/x-protobuf;proto=v3 content type; unknown remote "
                           "write protobuf message v3, supported: prometheus.WriteRequest, "
                           "io.prometheus.write.v2.Request");
    assert_int_equal(http__rw_negotiate("application/x-protobuf;", m, sizeof m), 0);
    assert_non_null(strstr(m, "expected parameters to be key-values, got  in"));
    assert_int_equal(http__rw_negotiate("application/x-protobuf;a=b=c", m, sizeof m), 0);
    assert_non_null(strstr(m, "got a=b=c in application/x-protobuf;a=b=c content-type"));
    assert_int_equal(http__rw_negotiate("application/x-protobuf;proto", m, sizeof m), 0);
}

/* ---- through a server ---- */

static void test_server(void **state)
{
    (void)state;
    ht_server_t h;
    ht_start(&h, NULL);
    im_buf_t req, ts;
    im_buf_init(&req, 0);
    im_buf_init(&ts, 0);
    symbols(&req);
    const uint32_t good[] = {S_NAME, S_M, S_JOB, S_A};
    refs_packed(&ts, good, 4);
    int64_t now = im_now_ms();
    sample(&ts, now - 1000, 1);
    sample(&ts, now, 2);
    metadata(&ts, 2, S_HELP, S_EMPTY);
    series_end(&req, &ts);
    size_t zn;
    char *z = ht_snappy(req.data, req.len, &zn);
    ht_opts_t v2 = {NULL, "application/x-protobuf;proto=io.prometheus.write.v2.Request", "snappy",
                    NULL, false};
    ht_resp_t r;
    char hv[64];
    assert_int_equal(ht_request(h.port, &r, "/api/v1/write", z, zn, &v2), 204);
    assert_string_equal(ht_header(&r, "X-Prometheus-Remote-Write-Samples-Written", hv, sizeof hv),
                        "2");
    assert_string_equal(
        ht_header(&r, "X-Prometheus-Remote-Write-Histograms-Written", hv, sizeof hv), "0");
    assert_string_equal(ht_header(&r, "X-Prometheus-Remote-Write-Exemplars-Written", hv, sizeof hv),
                        "0");
    im_buf_free(&r.body);
    /* the metadata API shows it */
    assert_int_equal(ht_request(h.port, &r, "/api/v1/metadata", NULL, 0, NULL), 200);
    assert_string_equal(r.body.data, "{\"status\":\"success\",\"data\":{\"m\":[{\"type\":\"gauge\","
                                     "\"help\":\"Help text.\",\"unit\":\"\"}]}}");
    im_buf_free(&r.body);
    /* partial: 400 with the written count */
    im_buf_reset(&req);
    symbols(&req);
    refs_packed(&ts, good, 4);
    sample(&ts, now + 1000, 3);
    series_end(&req, &ts);
    const uint32_t odd[] = {S_NAME};
    refs_packed(&ts, odd, 1);
    series_end(&req, &ts);
    im_free(z);
    z = ht_snappy(req.data, req.len, &zn);
    assert_int_equal(ht_request(h.port, &r, "/api/v1/write", z, zn, &v2), 400);
    assert_string_equal(r.body.data,
                        "invalid labels_refs length 1 (name and value references come in pairs)\n");
    assert_string_equal(ht_header(&r, "X-Prometheus-Remote-Write-Samples-Written", hv, sizeof hv),
                        "1");
    im_buf_free(&r.body);
    /* malformed: 400, nothing written */
    assert_int_equal(ht_request(h.port, &r, "/api/v1/write", "\x00\x01\x80", 3, &v2), 400);
    assert_string_equal(ht_header(&r, "X-Prometheus-Remote-Write-Samples-Written", hv, sizeof hv),
                        "0");
    im_buf_free(&r.body);
    /* 415s */
    ht_opts_t v3 = {NULL, "application/x-protobuf;proto=io.prometheus.write.v3.Request", "snappy",
                    NULL, false};
    assert_int_equal(ht_request(h.port, &r, "/api/v1/write", z, zn, &v3), 415);
    assert_non_null(strstr(r.body.data, "unknown remote write protobuf message"));
    im_buf_free(&r.body);
    ht_opts_t gz = {NULL, v2.ctype, "gzip", NULL, false};
    assert_int_equal(ht_request(h.port, &r, "/api/v1/write", z, zn, &gz), 415);
    assert_string_equal(r.body.data, "gzip encoding (compression) is not accepted by this server; "
                                     "only snappy is acceptable\n");
    assert_null(ht_header(&r, "X-Prometheus-Remote-Write-Samples-Written", hv, sizeof hv));
    im_buf_free(&r.body);
    /* /metrics counts 2.0 requests */
    assert_int_equal(ht_request(h.port, &r, "/metrics", NULL, 0, NULL), 200);
    assert_non_null(strstr(r.body.data, "infermon_remote_write_v2_requests_total 3\n"));
    assert_non_null(strstr(r.body.data, "infermon_remote_write_samples_received_total 3\n"));
    im_buf_free(&r.body);
    im_free(z);
    im_buf_free(&req);
    im_buf_free(&ts);
    ht_stop(&h);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_good), cmocka_unit_test(test_decode_malformed),
        cmocka_unit_test(test_append),      cmocka_unit_test(test_negotiate),
        cmocka_unit_test(test_server),      cmocka_unit_test(test_metadata_store),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
