/* log.h — logfmt logging to stderr, like Prometheus' own logs:
 *   ts=2026-11-29T10:00:00.123Z level=info msg="Server is ready" addr=:9470
 *
 * im_log(level, msg, kvfmt, ...) writes one line; kvfmt is a printf format for
 * the key=value tail (may be NULL). String values that may hold spaces or quotes
 * go through im_logq(), which returns them quoted and escaped (from a small
 * thread-local ring, valid until the 8th next call in the same thread).
 * Thread-safe: one write(2) per line. */
#ifndef IM_UTIL_LOG_H
#define IM_UTIL_LOG_H

#include "util/base.h"

typedef enum im_log_level {
    IM_LOG_DEBUG = 0,
    IM_LOG_INFO,
    IM_LOG_WARN,
    IM_LOG_ERROR,
} im_log_level_t;

void im_log_set_level(im_log_level_t lvl);
/* Parses "debug|info|warn|error"; false if unknown. */
bool im_log_parse_level(const char *s, im_log_level_t *out);
/* Redirects output to fd (default 2). */
void im_log_set_fd(int fd);
void im_log(im_log_level_t lvl, const char *msg, const char *kvfmt, ...) IM_PRINTF(3, 4);
const char *im_logq(const char *s);

#define IM_DEBUG(msg, ...) im_log(IM_LOG_DEBUG, msg, __VA_ARGS__)
#define IM_INFO(msg, ...)  im_log(IM_LOG_INFO, msg, __VA_ARGS__)
#define IM_WARN(msg, ...)  im_log(IM_LOG_WARN, msg, __VA_ARGS__)
#define IM_ERROR(msg, ...) im_log(IM_LOG_ERROR, msg, __VA_ARGS__)

#endif
