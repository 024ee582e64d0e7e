/* aggregate_int.h — private to src/promql/: an aggregation's groups, shared by
 * aggregate.c and the operators in their own files (limit.c). */
#ifndef IM_PROMQL_AGGREGATE_INT_H
#define IM_PROMQL_AGGREGATE_INT_H

#include "promql/promql_int.h"

typedef struct grp {
    const im_labels_t *labels; /* owned until moved to the output */
    double *a, *b, *c;         /* per-step accumulators */
    size_t *members;           /* input series indices (quantile, topk, limitk), input order */
    size_t nm, capm;
    bool drop; /* a member's name is marked dropped (delayed name removal) */
} grp_t;

/* limitk / limit_ratio (limit.c): the selected input series, labels untouched. */
im_rc promql__agg_limit(ev_t *ev, const promql_aggregate_t *agg, const val_t *in,
                        const val_t *param, const grp_t *g, size_t ng, val_t *out);

#endif
