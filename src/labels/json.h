/* json.h — the one JSON string and label-set writer, shared by rules, notify and
 * the HTTP API; in labels/ because it writes label sets.
 *
 * im_json_string appends s as a quoted JSON string: ", \, \n, \r, \t escaped,
 * other control bytes as \u00XX. The flags add escaping variants:
 *  - IM_JSON_HTML: also <, >, & as \u003c, \u003e, \u0026 (Go's encoding/json
 *    default; rules' API answers).
 *  - IM_JSON_UTF8: invalid UTF-8 bytes each become \ufffd and U+2028/U+2029 are
 *    escaped (Go's encoding/json too).
 * Without IM_JSON_UTF8, bytes >= 0x80 are copied as they are. IM_JSON_GO is both,
 * byte for byte what Go's encoding/json writes (the HTTP API, so answers match
 * Prometheus'); IM_JSON_PLAIN is neither (notify's Alertmanager payloads). */
#ifndef IM_LABELS_JSON_H
#define IM_LABELS_JSON_H

#include "labels/labels.h"
#include "util/base.h"
#include "util/buf.h"

enum {
    IM_JSON_PLAIN = 0,
    IM_JSON_HTML = 1,
    IM_JSON_UTF8 = 2,
    IM_JSON_GO = IM_JSON_HTML | IM_JSON_UTF8,
};

void im_json_string(im_buf_t *b, const char *s, size_t len, unsigned flags);
/* {"name":"value",...} in label order, strings as im_json_string. ls may be NULL
 * (gives {}). */
void im_json_labels(im_buf_t *b, const im_labels_t *ls, unsigned flags);

#endif
