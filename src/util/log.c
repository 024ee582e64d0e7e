/* log.c — logfmt logger (see log.h). */
#include "util/base.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "util/log.h"
#include "util/timeutil.h"

static _Atomic int min_level = IM_LOG_INFO;
static _Atomic int log_fd = 2;
static const char *const level_names[] = {"debug", "info", "warn", "error"};

void im_log_set_level(im_log_level_t lvl)
{
    atomic_store(&min_level, (int)lvl);
}

void im_log_set_fd(int fd)
{
    atomic_store(&log_fd, fd);
}

bool im_log_parse_level(const char *s, im_log_level_t *out)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, level_names[i]) == 0) {
            *out = (im_log_level_t)i;
            return true;
        }
    return false;
}

static bool needs_quote(const char *s)
{
    if (!*s) return true;
    for (; *s; s++)
        if (*s == ' ' || *s == '"' || *s == '=' || (unsigned char)*s < 0x20) return true;
    return false;
}

static void quote_into(char *dst, size_t cap, const char *s)
{
    size_t n = 0;
    if (!needs_quote(s)) {
        snprintf(dst, cap, "%s", s);
        return;
    }
    dst[n++] = '"';
    for (; *s && n + 8 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            dst[n++] = '\\';
            dst[n++] = (char)c;
        } else if (c == '\n') {
            dst[n++] = '\\';
            dst[n++] = 'n';
        } else if (c < 0x20) {
            n += (size_t)snprintf(dst + n, cap - n, "\\u%04x", c);
        } else {
            dst[n++] = (char)c;
        }
    }
    dst[n++] = '"';
    dst[n] = '\0';
}

const char *im_logq(const char *s)
{
    static _Thread_local char ring[8][1024];
    static _Thread_local unsigned idx;
    char *dst = ring[idx++ & 7];
    quote_into(dst, sizeof ring[0], s ? s : "");
    return dst;
}

void im_log(im_log_level_t lvl, const char *msg, const char *kvfmt, ...)
{
    if ((int)lvl < atomic_load(&min_level)) return;
    char line[4096];
    char ts[48];
    im_time_format_rfc3339(im_now_ms(), ts, sizeof ts);
    char qmsg[1024];
    quote_into(qmsg, sizeof qmsg, msg);
    int n = snprintf(line, sizeof line, "ts=%s level=%s msg=%s", ts, level_names[lvl], qmsg);
    if (n < 0) return;
    if (kvfmt && *kvfmt && (size_t)n < sizeof line - 2) {
        line[n++] = ' ';
        va_list ap;
        va_start(ap, kvfmt);
        int m = vsnprintf(line + n, sizeof line - (size_t)n, kvfmt, ap);
        va_end(ap);
        if (m > 0) n += m;
    }
    if ((size_t)n >= sizeof line - 1) n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(atomic_load(&log_fd), line, (size_t)n);
    (void)w;
}
