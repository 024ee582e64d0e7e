/* err.c — result-code names and the error value (see err.h). */
#include "util/base.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/err.h"

const char *im_rc_name(im_rc rc)
{
    switch (rc) {
#define IM_RC_NAME(name, val, msg)                                                                 \
    case IM_##name: return #name;
        IM_RC_MAP(IM_RC_NAME)
#undef IM_RC_NAME
    }
    return "UNKNOWN";
}

const char *im_rc_str(im_rc rc)
{
    switch (rc) {
#define IM_RC_STR(name, val, msg)                                                                  \
    case IM_##name: return msg;
        IM_RC_MAP(IM_RC_STR)
#undef IM_RC_STR
    }
    return "unknown error";
}

void im_err_clear(im_err_t *err)
{
    if (!err) return;
    err->code = IM_OK;
    err->msg[0] = '\0';
    err->file = NULL;
    err->line = 0;
    err->col = 0;
    err->offset = -1;
}

__attribute__((format(printf, 3, 0))) static void vset(im_err_t *err, im_rc code, const char *fmt,
                                                       va_list ap)
{
    err->code = code;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
}

im_rc im_err_set(im_err_t *err, im_rc code, const char *fmt, ...)
{
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, fmt, ap);
    va_end(ap);
    err->line = 0;
    err->col = 0;
    err->offset = -1;
    return code;
}

im_rc im_err_setpos(im_err_t *err, im_rc code, int line, int col, const char *fmt, ...)
{
    if (!err) return code;
    va_list ap;
    va_start(ap, fmt);
    vset(err, code, fmt, ap);
    va_end(ap);
    err->line = line;
    err->col = col;
    err->offset = -1;
    return code;
}

void im_err_prefix(im_err_t *err, const char *fmt, ...)
{
    if (!err) return;
    char pre[IM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    char old[IM_ERR_MSG_MAX];
    memcpy(old, err->msg, sizeof old);
    size_t n = strlen(pre);
    if (n > sizeof err->msg - 3) n = sizeof err->msg - 3;
    memcpy(err->msg, pre, n);
    memcpy(err->msg + n, ": ", 2);
    size_t rest = sizeof err->msg - n - 3;
    size_t olen = strnlen(old, rest);
    memcpy(err->msg + n + 2, old, olen);
    err->msg[n + 2 + olen] = '\0';
}

const char *im_err_format(const im_err_t *err, char *buf, size_t cap)
{
    if (!err) {
        snprintf(buf, cap, "(no error)");
        return buf;
    }
    const char *file = err->file ? err->file : "";
    if (err->line > 0 && err->col > 0)
        snprintf(buf, cap, "%s%s%d:%d: %s", file, *file ? ":" : "", err->line, err->col, err->msg);
    else if (err->line > 0)
        snprintf(buf, cap, "%s%s%d: %s", file, *file ? ":" : "", err->line, err->msg);
    else if (*file)
        snprintf(buf, cap, "%s: %s", file, err->msg);
    else
        snprintf(buf, cap, "%s", err->msg);
    return buf;
}
