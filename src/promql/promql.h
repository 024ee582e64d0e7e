/* promql.h — the PromQL engine: contract.
 *
 * Semantics are Prometheus 2.53's, or 3.x's under compat 3, for float samples
 * and native histograms (docs/promql.md lists what histograms support). The parser
 * (promql/parser.h) turns text into an AST (promql/ast.h); this engine evaluates an AST over a
 * storage_queryable_t (the local store, or the in-memory store below for tests).
 *
 * Evaluation model. An instant query at t is a range query with start = end = t.
 * A range query evaluates the expression at every step start, start+step, …, end
 * with the same answers Prometheus gives:
 *  - instant vector selectors take, per step t, the newest sample in
 *    [t - lookback_delta, t]; a staleness marker (storage_is_stale) as the newest
 *    sample hides the series;
 *  - range selectors and subqueries take the samples in [t - range, t] (both ends
 *    included, as in 2.x), staleness markers dropped;
 *  - `offset` shifts the window back, `@ t` pins it (start()/end() = the query's
 *    start and end);
 *  - subquery steps are aligned to absolute time (multiples of the step); a
 *    subquery without a step uses default_eval_interval_ms.
 *
 * Results. A promql_result_t owns everything in it (label references included)
 * and is released with promql_result_free. Instant queries give a scalar, string,
 * vector (one point per series, t = the evaluation time) or matrix (for a range
 * selector or subquery at the top level). Range queries give a matrix sorted by
 * labels (a scalar expression becomes one series with empty labels), or an error
 * for string/range-vector expressions, as Prometheus.
 * Instant-vector order is Prometheus' (unsorted except after sort*, topk, …).
 *
 * Errors. Failures return a negative im_rc and fill err with Prometheus' text;
 * promql_error_type maps an error to the HTTP API's errorType:
 *   IM_ETIMEOUT   "timeout"   "query timed out in expression evaluation"
 *   IM_ECANCELED  "canceled"  "query was canceled in expression evaluation"
 *   IM_ELIMIT     "execution" "query processing would load too many samples into
 *                              memory in query execution"
 *   IM_EINVAL     "bad_data"  bad parameters (e.g. end before start, zero step)
 *   other         "execution" (e.g. "vector cannot contain metrics with the same
 *                              labelset", "many-to-many matching not allowed: …")
 *
 * Limits. max_samples bounds the number of samples (points) the query holds in
 * memory at once, counted as Prometheus counts them (samples loaded for a window
 * plus points of intermediate results); timeout_ms bounds the wall time. Both are
 * checked while evaluating, never per sample but often enough (every series and
 * every few thousand steps).
 *
 * Thread-safety. An engine is immutable after creation and may be shared by any
 * number of threads; each evaluation uses its own memory: per-series value arrays
 * (never per sample) freed as soon as a node's consumer is done with them, counted
 * against max_samples, and one arena for the result. */
#ifndef IM_PROMQL_PROMQL_H
#define IM_PROMQL_PROMQL_H

#include "labels/labels.h"
#include "promql/ast.h"
#include "storage/storage.h"
#include "util/arena.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

/* ---- Engine ---- */

typedef struct promql_engine_opts {
    int64_t lookback_delta_ms;        /* 0 = default 5m (--query.lookback-delta) */
    int64_t max_samples;              /* 0 = default 50,000,000 (--query.max-samples) */
    int64_t timeout_ms;               /* 0 = default 2m (--query.timeout) */
    int64_t default_eval_interval_ms; /* subqueries without a step; 0 = default 1m */
    /* Range functions over a matrix selector (rate, *_over_time, …) with at least
     * parallel_min_work series × steps (so range queries over many series, not
     * instant ones) read and compute series on up to `threads` threads (the
     * caller's included); the result is the same bit for bit. 0 = defaults (one
     * per CPU, at most 4; 32768); threads 1 = never. */
    int threads;
    int64_t parallel_min_work;
    /* Language level (ast.h): compat 0 = the process default (promql_lang_default).
     * Compat 3 makes range windows and the lookback left-open, (t - d, t]. */
    promql_lang_t lang;
} promql_engine_opts_t;

typedef struct promql_engine promql_engine_t;

/* opts may be NULL (all defaults). Never fails. */
promql_engine_t *promql_engine_new(const promql_engine_opts_t *opts);
void promql_engine_free(promql_engine_t *e);
/* The effective options (defaults filled in). */
const promql_engine_opts_t *promql_engine_opts(const promql_engine_t *e);

/* ---- Results ---- */

typedef enum promql_result_type {
    PROMQL_RESULT_NONE = 0,
    PROMQL_RESULT_SCALAR,
    PROMQL_RESULT_VECTOR,
    PROMQL_RESULT_MATRIX,
    PROMQL_RESULT_STRING,
} promql_result_type_t;

/* A point. A native-histogram point has v boxed (storage/fhist.h:
 * storage_fh_unbox gives the histogram, in the result's arena); code that does
 * not look sees a NaN. */
typedef struct promql_point {
    int64_t t_ms;
    double v;
} promql_point_t;

typedef struct promql_series {
    const im_labels_t *labels; /* owned reference */
    promql_point_t *points;    /* in the result's arena, sorted by time */
    size_t npoints;            /* 1 for vectors */
} promql_series_t;

typedef struct promql_result {
    promql_result_type_t type;
    promql_point_t scalar;   /* SCALAR: value and time; STRING: time */
    const char *str;         /* STRING: in the arena, NUL-terminated */
    size_t str_len;          /* STRING */
    promql_series_t *series; /* VECTOR / MATRIX: in the arena */
    size_t nseries;
    const char **warnings; /* annotations (in the arena), de-duplicated */
    size_t nwarnings;
    int64_t samples_total; /* samples read from storage (stats) */
    int64_t samples_peak;  /* peak samples held (what max_samples bounds) */
    im_arena_t arena;      /* owns everything above but the label references */
} promql_result_t;

/* Resets r to an empty result; safe on a zeroed or already-freed result. */
void promql_result_free(promql_result_t *r);

/* ---- Evaluation ---- */

typedef struct promql_query_params {
    int64_t start_ms, end_ms;   /* instant query: start == end */
    int64_t step_ms;            /* range query: > 0; instant: ignored */
    bool instant;               /* true = instant query at start_ms */
    const volatile int *cancel; /* optional: non-zero cancels the query; another thread
                                   sets it with __atomic_store_n (read atomically) */
    int64_t deadline_ns;        /* optional: an im_mono_ns() time the query must end by
                                   (timeout error) when sooner than the engine's timeout */
} promql_query_params_t;

/* Evaluates expr (borrowed, not modified; it may be evaluated concurrently) over
 * q. On success *out (caller-provided, uninitialised) holds the result, which the
 * caller frees with promql_result_free; on error *out is empty and err says why. */
im_rc promql_eval(const promql_engine_t *e, storage_queryable_t *q, const promql_expr_t *expr,
                  const promql_query_params_t *p, promql_result_t *out, im_err_t *err);
im_rc promql_eval_instant(const promql_engine_t *e, storage_queryable_t *q,
                          const promql_expr_t *expr, int64_t t_ms, promql_result_t *out,
                          im_err_t *err);
im_rc promql_eval_range(const promql_engine_t *e, storage_queryable_t *q, const promql_expr_t *expr,
                        int64_t start_ms, int64_t end_ms, int64_t step_ms, promql_result_t *out,
                        im_err_t *err);

/* The HTTP API errorType for an evaluation error code ("execution", "timeout",
 * "canceled", "bad_data"). */
const char *promql_error_type(im_rc rc);

/* ---- JSON of results (result_json.c): the one writer ----
 *
 * Writes a result as the Prometheus HTTP API's `data` object,
 * {"resultType":"vector","result":[…]}: label names and values and string results
 * escaped as Go's encoding/json (control bytes, ", \, <, >, &, U+2028/2029,
 * invalid UTF-8 as \ufffd: labels/json.h IM_JSON_GO), values as Prometheus'
 * sample strings, timestamps in seconds. */

typedef enum promql_json_times {
    /* ".mmm" whenever the milliseconds are not zero: 1.500, 2 (the HTTP API;
     * Prometheus' form for vector and matrix points; the time of a scalar or
     * string result is always written in the SHORT form, as Prometheus does) */
    PROMQL_JSON_TIMES_API = 0,
    /* the shortest decimal: 1.5, 2 (promql_result_to_json) */
    PROMQL_JSON_TIMES_SHORT,
} promql_json_times_t;

/* A timestamp (ms) as JSON seconds in the given form. */
void promql_json_time(im_buf_t *out, int64_t t_ms, promql_json_times_t times);

/* A resumable writer, so a large matrix goes out in chunks. res is borrowed and
 * must outlive the writing. */
typedef struct promql_json_writer {
    const promql_result_t *res;
    promql_json_times_t times;
    size_t si, pi; /* next series, next point */
    int phase;
    bool first; /* no point written yet in the current list */
    im_rc rc;   /* IM_ELIMIT when out's cap was reached (the output is then incomplete) */
} promql_json_writer_t;

void promql_json_init(promql_json_writer_t *w, const promql_result_t *r, promql_json_times_t times);
/* Appends until out grew by about `chunk` bytes or the object is complete;
 * returns true when complete (or stopped by w->rc). */
bool promql_json_step(promql_json_writer_t *w, im_buf_t *out, size_t chunk);

/* The whole `data` object with PROMQL_JSON_TIMES_SHORT; IM_ELIMIT when out's cap
 * was reached. */
im_rc promql_result_to_json(const promql_result_t *r, im_buf_t *out);

/* ---- Series values notation (test scripts, promtool rule tests) ---- */

typedef struct promql_seqval {
    double v;
    bool omitted; /* `_`: no sample at this step */
} promql_seqval_t;

/* Expands s[0, slen) — whitespace-separated `a`, `a+bxN`, `a-bxN`, `axN`, `_`,
 * `_xN`, `stale` — appending to the growable *vals (*n used, *cap allocated).
 * false on a malformed item (or one xN above 10,000,000); bad_off/bad_len (may
 * be NULL) then give its position in s. */
bool promql_series_values(const char *s, size_t slen, promql_seqval_t **vals, size_t *n,
                          size_t *cap, size_t *bad_off, size_t *bad_len);

/* ---- In-memory queryable (tests, the test-script runner, promql-eval) ---- */

typedef struct promql_memstore promql_memstore_t;

promql_memstore_t *promql_memstore_new(void);
void promql_memstore_free(promql_memstore_t *m);
/* Drops every series. */
void promql_memstore_clear(promql_memstore_t *m);
/* Adds a sample (labels borrowed). Samples may come in any order; a later
 * sample with the same timestamp replaces the earlier one. A boxed native
 * histogram (storage/fhist.h) is copied. */
void promql_memstore_add(promql_memstore_t *m, const im_labels_t *labels, int64_t t_ms, double v);
/* A queryable over the store, borrowed: valid until the store is freed or
 * changed; its close is a no-op. */
/* Drops every sample older than min_t_ms (series stay, possibly empty): a
 * sliding window for a store that lives long (infermon top). */
void promql_memstore_drop_before(promql_memstore_t *m, int64_t min_t_ms);
storage_queryable_t *promql_memstore_queryable(promql_memstore_t *m);
size_t promql_memstore_series(const promql_memstore_t *m);

/* ---- Test-script runner (Prometheus' promqltest language) ---- */

/* Why an eval was skipped: what this engine does not have yet. */
typedef enum promql_skip_reason {
    PROMQL_SKIP_NATIVE_HISTOGRAMS = 0, /* {{…}} samples, histogram_* functions on them */
    PROMQL_SKIP_NHCB,                  /* load_with_nhcb */
    PROMQL_SKIP_START_TIMESTAMPS,      /* metric@st series lines */
    PROMQL_SKIP_N
} promql_skip_reason_t;
const char *promql_skip_reason_str(promql_skip_reason_t why);

typedef struct promql_test_stats {
    int passed, failed, skipped;
    int skipped_by[PROMQL_SKIP_N]; /* skipped, per reason */
} promql_test_stats_t;

/* Runs one script (name is used in messages as name:line). Failures are printed
 * to out (a FILE *) with expected and got. Returns IM_OK when the script could be
 * read (check stats for failures). */
im_rc promql_test_run(const char *name, const char *text, size_t len, void *out,
                      promql_test_stats_t *stats, im_err_t *err);
/* The same with engine options (NULL: defaults), e.g. threads and
 * parallel_min_work 1 to run every range function through the parallel path;
 * opts->lang also sets the language the expressions are parsed in. */
im_rc promql_test_run_opts(const char *name, const char *text, size_t len, void *out,
                           const promql_engine_opts_t *opts, promql_test_stats_t *stats,
                           im_err_t *err);

#endif
