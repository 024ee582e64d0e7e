/* base64.h — base64 decoding (RFC 4648), for the values Kubernetes hands over in
 * base64: Secret data and kubeconfig *-data fields. */
#ifndef IM_UTIL_BASE64_H
#define IM_UTIL_BASE64_H

#include "util/base.h"
#include "util/buf.h"

/* Appends the bytes s[0..n) encodes to out. Accepts the standard and the URL
 * alphabet, padding or none, and skips blanks (space, tab, CR, LF). IM_EPARSE on
 * any other character, IM_ELIMIT when out's cap is hit. */
im_rc im_base64_decode(const char *s, size_t n, im_buf_t *out);

#endif
