/* query_int.h — private to src/query. */
#ifndef IM_QUERY_QUERY_INT_H
#define IM_QUERY_QUERY_INT_H

#include "query/query.h"

/* Sets a's error (errorType etype, or the one of rc when NULL; status, or the
 * type's when 0) and, when JSON is wanted, the Prometheus error answer with
 * msg. Returns rc. */
im_rc query__fail(query_answer_t *a, const query_req_t *r, im_rc rc, const char *etype,
                  unsigned status, const char *msg);
/* The errorType of a result code. */
const char *query__etype_of(im_rc rc);

#endif
