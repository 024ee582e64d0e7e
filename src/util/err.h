/* err.h — result codes and the error value that carries a sentence and a position.
 *
 * Functions that can fail return an im_rc (0 = IM_OK, negative = error) from the
 * one table below, and optionally fill an im_err_t the caller passed in (NULL is
 * allowed: then only the code is returned). Codes are never renumbered.
 *
 * The message is one sentence saying what went wrong and, for limits, which flag
 * or config key to change. The position is optional: line/column (1-based) for
 * text inputs, or a byte offset; 0 means unknown. */
#ifndef IM_UTIL_ERR_H
#define IM_UTIL_ERR_H

#include "util/base.h"

#define IM_RC_MAP(XX)                                                                              \
    XX(OK, 0, "ok")                                                                                \
    XX(ERR, -1, "error")                                                                           \
    XX(EINVAL, -2, "invalid argument")                                                             \
    XX(EPARSE, -3, "parse error")                                                                  \
    XX(ELIMIT, -4, "limit exceeded")                                                               \
    XX(EIO, -5, "I/O error")                                                                       \
    XX(ECORRUPT, -6, "corrupt data")                                                               \
    XX(ENOTFOUND, -7, "not found")                                                                 \
    XX(EEXIST, -8, "already exists")                                                               \
    XX(ETIMEOUT, -9, "timeout")                                                                    \
    XX(ECANCELED, -10, "canceled")                                                                 \
    XX(EOUTOFORDER, -11, "out of order sample")                                                    \
    XX(EDUPLICATE, -12, "duplicate sample for timestamp")                                          \
    XX(EOUTOFBOUNDS, -13, "out of bounds")                                                         \
    XX(EUNSUPPORTED, -14, "unsupported")                                                           \
    XX(ESHORT, -15, "short read")                                                                  \
    XX(EEXEC, -16, "execution error")

typedef enum im_rc {
#define IM_RC_ENUM(name, val, msg) IM_##name = (val),
    IM_RC_MAP(IM_RC_ENUM)
#undef IM_RC_ENUM
} im_rc;

#define IM_ERR_MSG_MAX 512

typedef struct im_err {
    im_rc code;
    char msg[IM_ERR_MSG_MAX]; /* one sentence, NUL-terminated */
    const char *file;         /* borrowed, may be NULL (e.g. the input's file name) */
    int line;                 /* 1-based; 0 = unknown */
    int col;                  /* 1-based; 0 = unknown */
    int64_t offset;           /* byte offset; -1 = unknown */
} im_err_t;

const char *im_rc_name(im_rc rc);
const char *im_rc_str(im_rc rc);

void im_err_clear(im_err_t *err);
/* Sets code and message (printf-style). Returns code so callers can
 * `return im_err_set(err, IM_EPARSE, "...")`. err may be NULL. */
im_rc im_err_set(im_err_t *err, im_rc code, const char *fmt, ...) IM_PRINTF(3, 4);
/* As im_err_set with a line and column. */
im_rc im_err_setpos(im_err_t *err, im_rc code, int line, int col, const char *fmt, ...)
    IM_PRINTF(5, 6);
/* Prefixes the existing message with `prefix: `. */
void im_err_prefix(im_err_t *err, const char *fmt, ...) IM_PRINTF(2, 3);
/* Formats "file:line:col: msg" (the parts known) into buf; returns buf. */
const char *im_err_format(const im_err_t *err, char *buf, size_t cap);

#endif
