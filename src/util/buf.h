/* buf.h — growable byte buffer with a cap.
 *
 * An im_buf_t owns its data (free with im_buf_free). Every buffer driven by
 * input has a cap (`max`, 0 = unlimited, only for internally bounded data): an
 * append that would pass it fails with IM_ELIMIT and leaves the buffer as it was.
 * The data is always kept NUL-terminated (the NUL is not counted in len). */
#ifndef IM_UTIL_BUF_H
#define IM_UTIL_BUF_H

#include "util/base.h"
#include "util/err.h"

typedef struct im_buf {
    char *data; /* owned; NUL-terminated when cap > 0 */
    size_t len;
    size_t cap;
    size_t max; /* 0 = no cap */
} im_buf_t;

void im_buf_init(im_buf_t *b, size_t max);
void im_buf_free(im_buf_t *b);
void im_buf_reset(im_buf_t *b); /* len = 0, keeps memory */
/* Ensures room for `extra` more bytes (+ NUL). */
IM_NODISCARD im_rc im_buf_reserve(im_buf_t *b, size_t extra);
im_rc im_buf_append(im_buf_t *b, const void *p, size_t n);
im_rc im_buf_putc(im_buf_t *b, char c);
im_rc im_buf_puts(im_buf_t *b, const char *s);
im_rc im_buf_printf(im_buf_t *b, const char *fmt, ...) IM_PRINTF(2, 3);
/* Transfers ownership of the data to the caller (NUL-terminated), resets b. */
char *im_buf_steal(im_buf_t *b, size_t *len_out);

#endif
