/* base.h — included first by every .c file of infermon.
 *
 * Common headers, small macros, and the memory wrapper. Nothing here allocates
 * or has state. */
#ifndef IM_UTIL_BASE_H
#define IM_UTIL_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define IM_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define IM_MIN(a, b)    ((a) < (b) ? (a) : (b))
#define IM_MAX(a, b)    ((a) > (b) ? (a) : (b))
#define IM_LIKELY(x)    __builtin_expect(!!(x), 1)
#define IM_UNLIKELY(x)  __builtin_expect(!!(x), 0)
#define IM_UNUSED(x)    ((void)(x))
#define IM_NODISCARD    __attribute__((warn_unused_result))
#define IM_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* A borrowed string view: not NUL-terminated unless said so. */
typedef struct im_str_view {
    const char *p;
    size_t len;
} im_sv_t;

#define IM_SV(lit) ((im_sv_t){(lit), sizeof(lit) - 1})
static inline im_sv_t im_sv(const char *s)
{
    return (im_sv_t){s, s ? strlen(s) : 0};
}
static inline bool im_sv_eq(im_sv_t a, im_sv_t b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}
static inline bool im_sv_eq_cstr(im_sv_t a, const char *b)
{
    return im_sv_eq(a, im_sv(b));
}

#include "util/mem.h"

#endif
