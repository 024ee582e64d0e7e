/* buf.c — growable, capped byte buffer (see buf.h). */
#include "util/base.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/buf.h"

void im_buf_init(im_buf_t *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void im_buf_free(im_buf_t *b)
{
    im_free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void im_buf_reset(im_buf_t *b)
{
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

im_rc im_buf_reserve(im_buf_t *b, size_t extra)
{
    if (extra > SIZE_MAX / 2 - b->len) return IM_ELIMIT;
    size_t need = b->len + extra + 1;
    if (b->max && b->len + extra > b->max) return IM_ELIMIT;
    if (need <= b->cap) return IM_OK;
    size_t ncap = b->cap ? b->cap : 64;
    while (ncap < need) ncap *= 2;
    if (b->max && ncap > b->max + 1) ncap = b->max + 1;
    b->data = im_realloc(b->data, ncap);
    b->cap = ncap;
    return IM_OK;
}

im_rc im_buf_append(im_buf_t *b, const void *p, size_t n)
{
    im_rc rc = im_buf_reserve(b, n);
    if (rc) return rc;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return IM_OK;
}

im_rc im_buf_putc(im_buf_t *b, char c)
{
    if (IM_LIKELY(b->len + 2 <= b->cap)) {
        b->data[b->len++] = c;
        b->data[b->len] = '\0';
        return IM_OK;
    }
    return im_buf_append(b, &c, 1);
}

im_rc im_buf_puts(im_buf_t *b, const char *s)
{
    return im_buf_append(b, s, strlen(s));
}

im_rc im_buf_printf(im_buf_t *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return IM_EINVAL;
    if ((size_t)n < sizeof tmp) return im_buf_append(b, tmp, (size_t)n);
    im_rc rc = im_buf_reserve(b, (size_t)n);
    if (rc) return rc;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return IM_OK;
}

char *im_buf_steal(im_buf_t *b, size_t *len_out)
{
    if (!b->data && im_buf_reserve(b, 0) != IM_OK) return NULL;
    char *d = b->data;
    if (len_out) *len_out = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return d;
}
