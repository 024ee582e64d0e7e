/* gzip.h — one-shot gzip compression (zlib) into an im_buf_t. */
#ifndef IM_UTIL_GZIP_H
#define IM_UTIL_GZIP_H

#include "util/base.h"
#include "util/buf.h"

/* Gzips in[0, n) into out (a gzip stream, zlib level: Z_DEFAULT_COMPRESSION for
 * API answers, 1 for the simulator's hot /metrics). Returns false on a zlib error
 * (out then holds nothing useful). */
bool im_gzip(const char *in, size_t n, int level, im_buf_t *out);

#endif
