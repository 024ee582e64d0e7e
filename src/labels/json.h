/* json.h — small JSON writers shared by subsystems below http (notify, rules); in labels/ because
 * it writes label sets.
 *
 * im_json_string appends s as a quoted JSON string: ", \, \n, \r, \t escaped,
 * other control bytes as \u00XX; with html_safe also <, >, & as \u003c, \u003e,
 * \u0026 (what Go's encoding/json does, so API answers match Prometheus').
 * Bytes >= 0x80 are copied as they are. (The HTTP API's own writer,
 * http_json_string, additionally replaces invalid UTF-8.) */
#ifndef IM_LABELS_JSON_H
#define IM_LABELS_JSON_H

#include "labels/labels.h"
#include "util/base.h"
#include "util/buf.h"

void im_json_string(im_buf_t *b, const char *s, size_t len, bool html_safe);
/* {"name":"value",...} in label order. ls may be NULL (gives {}). */
void im_json_labels(im_buf_t *b, const im_labels_t *ls, bool html_safe);

#endif
