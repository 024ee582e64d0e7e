/* nhist.h — private to src/promql/: native-histogram arithmetic (nhist.c), the
 * test-script notation (nhist_text.c) and the evaluator's histogram paths
 * (nhist_eval.c). Values are storage_fh_t (storage/fhist.h), carried through the
 * engine as boxed doubles. New histograms are allocated in an arena (NULL: the
 * heap, im_free). */
#ifndef IM_PROMQL_NHIST_H
#define IM_PROMQL_NHIST_H

#include "promql/promql.h"
#include "storage/fhist.h"
#include "util/arena.h"
#include "util/buf.h"

storage_fh_t *promql_fh_new(im_arena_t *a, uint32_t npos, uint32_t nneg, uint32_t ncustom);
storage_fh_t *promql_fh_copy(im_arena_t *a, const storage_fh_t *h);
/* h at a lower (or equal) exponential schema. */
storage_fh_t *promql_fh_reduce(im_arena_t *a, const storage_fh_t *h, int32_t schema);
/* x + f*y (f = 1 or -1). NULL when the bucket layouts cannot be combined
 * (exponential with custom, or different custom bounds). */
storage_fh_t *promql_fh_add(im_arena_t *a, const storage_fh_t *x, const storage_fh_t *y, double f);
/* Every count and the sum multiplied by f. */
storage_fh_t *promql_fh_scale(im_arena_t *a, const storage_fh_t *h, double f);
/* Prometheus' counter-reset detection of cur after prev. */
bool promql_fh_detect_reset(const storage_fh_t *cur, const storage_fh_t *prev);
double promql_fh_quantile(double q, const storage_fh_t *h);
double promql_fh_fraction(double lo, double hi, const storage_fh_t *h);
double promql_fh_stdvar(const storage_fh_t *h);
/* Equal as the test runner compares: schema, zero threshold, custom bounds
 * exactly; counts, sum and bucket counts (missing = 0) almost equal. */
bool promql_fh_equal(const storage_fh_t *a, const storage_fh_t *b, bool (*almost)(double, double));

/* nhist_text.c */
bool promql_fh_parse(const char *s, size_t len, storage_fh_t **out);
void promql_fh_format(const storage_fh_t *h, im_buf_t *b);
/* promql_series_values with `{{…}}`, `{{…}}xN`, `{{a}}+{{b}}xN` items too: their
 * values are boxes of heap histograms (promql_seqvals_free_hists frees them).
 * false on a malformed item. */
bool promql_series_values_nh(const char *s, size_t slen, promql_seqval_t **vals, size_t *n,
                             size_t *cap);
void promql_seqvals_free_hists(promql_seqval_t *vals, size_t n);

/* nhcb.c: adds to m the NHCB series of the classic histograms among the n
 * series ls[i] with values v[i][0, nv[i]) at steps of interval (load_with_nhcb). */
void promql_nhcb_add(promql_memstore_t *m, const im_labels_t *const *ls, promql_seqval_t *const *v,
                     const size_t *nv, size_t n, int64_t interval);

#endif
