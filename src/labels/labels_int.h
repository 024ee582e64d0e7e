/* labels_int.h — private to src/labels. */
#ifndef IM_LABELS_LABELS_INT_H
#define IM_LABELS_LABELS_INT_H

#include "util/base.h"

/* MD5 of data (md5.c; for the hashmod relabel action only). */
void labels__md5(const void *data, size_t len, unsigned char out[16]);

#endif
