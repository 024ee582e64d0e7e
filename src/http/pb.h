/* pb.h — private to src/http: the protobuf wire-format readers the receivers
 * share (remote write 1.0 and 2.0 in remote_write.c, OTLP in otlp_decode.c).
 * A http__pb_t is a view [p, end) of borrowed bytes; every reader advances p
 * and returns false (leaving p anywhere inside the view) on a truncated or
 * malformed field, never reading past end. */
#ifndef IM_HTTP_PB_H
#define IM_HTTP_PB_H

#include "util/base.h"

typedef struct http__pb {
    const uint8_t *p, *end;
} http__pb_t;

static inline bool http__pb_varint(http__pb_t *b, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (b->p >= b->end) return false;
        uint8_t c = *b->p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* Skips a field of the given wire type. */
static inline bool http__pb_skip(http__pb_t *b, unsigned wt)
{
    uint64_t v;
    switch (wt) {
    case 0: return http__pb_varint(b, &v);
    case 1:
        if (b->end - b->p < 8) return false;
        b->p += 8;
        return true;
    case 2:
        if (!http__pb_varint(b, &v) || v > (uint64_t)(b->end - b->p)) return false;
        b->p += v;
        return true;
    case 5:
        if (b->end - b->p < 4) return false;
        b->p += 4;
        return true;
    default: return false;
    }
}

/* A length-delimited field's bytes as a sub-view. */
static inline bool http__pb_len(http__pb_t *b, http__pb_t *sub)
{
    uint64_t v;
    sub->p = sub->end = b->p; /* an empty view on failure */
    if (!http__pb_varint(b, &v) || v > (uint64_t)(b->end - b->p)) return false;
    sub->p = b->p;
    sub->end = b->p + v;
    b->p += v;
    return true;
}

/* A fixed64 field (wire type 1), little-endian. */
static inline bool http__pb_fixed64(http__pb_t *b, uint64_t *out)
{
    if (b->end - b->p < 8) return false;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | b->p[i];
    b->p += 8;
    *out = v;
    return true;
}

static inline bool http__pb_double(http__pb_t *b, double *out)
{
    uint64_t v;
    if (!http__pb_fixed64(b, &v)) return false;
    memcpy(out, &v, sizeof v);
    return true;
}

#endif
