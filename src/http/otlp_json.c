/* otlp_json.c — OTLP/JSON (application/json) for the OTLP receiver: the
 * request is parsed (jansson) and re-encoded as the protobuf it stands for,
 * following the proto3 JSON mapping the OTLP specification requires
 * (lowerCamelCase field names, 64-bit integers as strings or numbers, enums as
 * numbers, bytes as base64), so one decoder (otlp.c) serves both encodings.
 * Only the messages the receiver reads are in the schema below; other fields
 * are skipped. A value of the wrong JSON type is a parse error naming the
 * field. */
#include "util/base.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "http/server.h"
#include "util/base64.h"

typedef enum jt {
    J_MSG,
    J_STR,
    J_BYTES,
    J_BOOL,
    J_INT64,   /* varint */
    J_UINT,    /* varint (uint32/uint64, enum) */
    J_SINT,    /* zigzag varint */
    J_FIXED64, /* fixed64 / sfixed64 */
    J_DOUBLE,
} jt_t;

typedef struct jfield jfield_t;
typedef struct jmsg {
    const jfield_t *f;
} jmsg_t;
struct jfield {
    const char *name;
    unsigned num;
    jt_t type;
    const jmsg_t *sub;
};

#define END                                                                                        \
    {                                                                                              \
        NULL, 0, J_STR, NULL                                                                       \
    }

static const jmsg_t m_any, m_kv;
static const jfield_t f_array[] = {{"values", 1, J_MSG, &m_any}, END};
static const jmsg_t m_array = {f_array};
static const jfield_t f_kvlist[] = {{"values", 1, J_MSG, &m_kv}, END};
static const jmsg_t m_kvlist = {f_kvlist};
static const jfield_t f_any[] = {
    {"stringValue", 1, J_STR, NULL},    {"boolValue", 2, J_BOOL, NULL},
    {"intValue", 3, J_INT64, NULL},     {"doubleValue", 4, J_DOUBLE, NULL},
    {"arrayValue", 5, J_MSG, &m_array}, {"kvlistValue", 6, J_MSG, &m_kvlist},
    {"bytesValue", 7, J_BYTES, NULL},   END};
static const jmsg_t m_any = {f_any};
static const jfield_t f_kv[] = {{"key", 1, J_STR, NULL}, {"value", 2, J_MSG, &m_any}, END};
static const jmsg_t m_kv = {f_kv};

static const jfield_t f_ndp[] = {{"attributes", 7, J_MSG, &m_kv},
                                 {"startTimeUnixNano", 2, J_FIXED64, NULL},
                                 {"timeUnixNano", 3, J_FIXED64, NULL},
                                 {"asDouble", 4, J_DOUBLE, NULL},
                                 {"asInt", 6, J_FIXED64, NULL},
                                 {"flags", 8, J_UINT, NULL},
                                 END};
static const jmsg_t m_ndp = {f_ndp};
static const jfield_t f_hdp[] = {{"attributes", 9, J_MSG, &m_kv},
                                 {"startTimeUnixNano", 2, J_FIXED64, NULL},
                                 {"timeUnixNano", 3, J_FIXED64, NULL},
                                 {"count", 4, J_FIXED64, NULL},
                                 {"sum", 5, J_DOUBLE, NULL},
                                 {"bucketCounts", 6, J_FIXED64, NULL},
                                 {"explicitBounds", 7, J_DOUBLE, NULL},
                                 {"flags", 10, J_UINT, NULL},
                                 {"min", 11, J_DOUBLE, NULL},
                                 {"max", 12, J_DOUBLE, NULL},
                                 END};
static const jmsg_t m_hdp = {f_hdp};
static const jfield_t f_buckets[] = {
    {"offset", 1, J_SINT, NULL}, {"bucketCounts", 2, J_UINT, NULL}, END};
static const jmsg_t m_buckets = {f_buckets};
static const jfield_t f_edp[] = {{"attributes", 1, J_MSG, &m_kv},
                                 {"startTimeUnixNano", 2, J_FIXED64, NULL},
                                 {"timeUnixNano", 3, J_FIXED64, NULL},
                                 {"count", 4, J_FIXED64, NULL},
                                 {"sum", 5, J_DOUBLE, NULL},
                                 {"scale", 6, J_SINT, NULL},
                                 {"zeroCount", 7, J_FIXED64, NULL},
                                 {"positive", 8, J_MSG, &m_buckets},
                                 {"negative", 9, J_MSG, &m_buckets},
                                 {"flags", 10, J_UINT, NULL},
                                 {"zeroThreshold", 14, J_DOUBLE, NULL},
                                 END};
static const jmsg_t m_edp = {f_edp};
static const jfield_t f_vaq[] = {
    {"quantile", 1, J_DOUBLE, NULL}, {"value", 2, J_DOUBLE, NULL}, END};
static const jmsg_t m_vaq = {f_vaq};
static const jfield_t f_sdp[] = {
    {"attributes", 7, J_MSG, &m_kv},      {"startTimeUnixNano", 2, J_FIXED64, NULL},
    {"timeUnixNano", 3, J_FIXED64, NULL}, {"count", 4, J_FIXED64, NULL},
    {"sum", 5, J_DOUBLE, NULL},           {"quantileValues", 6, J_MSG, &m_vaq},
    {"flags", 8, J_UINT, NULL},           END};
static const jmsg_t m_sdp = {f_sdp};
static const jfield_t f_gauge[] = {{"dataPoints", 1, J_MSG, &m_ndp}, END};
static const jmsg_t m_gauge = {f_gauge};
static const jfield_t f_sum[] = {{"dataPoints", 1, J_MSG, &m_ndp},
                                 {"aggregationTemporality", 2, J_UINT, NULL},
                                 {"isMonotonic", 3, J_BOOL, NULL},
                                 END};
static const jmsg_t m_sum = {f_sum};
static const jfield_t f_hist[] = {
    {"dataPoints", 1, J_MSG, &m_hdp}, {"aggregationTemporality", 2, J_UINT, NULL}, END};
static const jmsg_t m_hist = {f_hist};
static const jfield_t f_ehist[] = {
    {"dataPoints", 1, J_MSG, &m_edp}, {"aggregationTemporality", 2, J_UINT, NULL}, END};
static const jmsg_t m_ehist = {f_ehist};
static const jfield_t f_summary[] = {{"dataPoints", 1, J_MSG, &m_sdp}, END};
static const jmsg_t m_summary = {f_summary};
static const jfield_t f_metric[] = {{"name", 1, J_STR, NULL},
                                    {"description", 2, J_STR, NULL},
                                    {"unit", 3, J_STR, NULL},
                                    {"gauge", 5, J_MSG, &m_gauge},
                                    {"sum", 7, J_MSG, &m_sum},
                                    {"histogram", 9, J_MSG, &m_hist},
                                    {"exponentialHistogram", 10, J_MSG, &m_ehist},
                                    {"summary", 11, J_MSG, &m_summary},
                                    END};
static const jmsg_t m_metric = {f_metric};
static const jfield_t f_scope[] = {
    {"name", 1, J_STR, NULL}, {"version", 2, J_STR, NULL}, {"attributes", 3, J_MSG, &m_kv}, END};
static const jmsg_t m_scope = {f_scope};
static const jfield_t f_sm[] = {
    {"scope", 1, J_MSG, &m_scope}, {"metrics", 2, J_MSG, &m_metric}, END};
static const jmsg_t m_sm = {f_sm};
static const jfield_t f_res[] = {{"attributes", 1, J_MSG, &m_kv}, END};
static const jmsg_t m_res = {f_res};
static const jfield_t f_rm[] = {
    {"resource", 1, J_MSG, &m_res}, {"scopeMetrics", 2, J_MSG, &m_sm}, END};
static const jmsg_t m_rm = {f_rm};
static const jfield_t f_req[] = {{"resourceMetrics", 1, J_MSG, &m_rm}, END};
static const jmsg_t m_req = {f_req};

#define JSON_MAX_DEPTH 32

static void put_varint(im_buf_t *b, uint64_t v)
{
    while (v >= 0x80) {
        im_buf_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    im_buf_putc(b, (char)v);
}

static void put_key(im_buf_t *b, unsigned f, unsigned wt)
{
    put_varint(b, (uint64_t)f << 3 | wt);
}

static void put_fixed64(im_buf_t *b, uint64_t v)
{
    char x[8];
    for (int i = 0; i < 8; i++) x[i] = (char)(v >> (8 * i));
    im_buf_append(b, x, 8);
}

/* A 64-bit integer given as a JSON number or a decimal string. */
static bool j_int(const json_t *v, bool is_signed, uint64_t *out)
{
    if (json_is_integer(v)) {
        *out = (uint64_t)json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d != floor(d) || fabs(d) > 1.8446744073709552e19) return false;
        *out = d < 0 ? (uint64_t)(int64_t)d : (uint64_t)d;
        return true;
    }
    if (!json_is_string(v)) return false;
    const char *s = json_string_value(v);
    char *end;
    errno = 0;
    if (is_signed || s[0] == '-')
        *out = (uint64_t)strtoll(s, &end, 10);
    else
        *out = strtoull(s, &end, 10);
    return *s && !*end && errno == 0;
}

/* A double given as a number or "NaN", "Infinity", "-Infinity" (or a numeric string). */
static bool j_double(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    if (!json_is_string(v)) return false;
    const char *s = json_string_value(v);
    if (!strcmp(s, "NaN"))
        *out = NAN;
    else if (!strcmp(s, "Infinity"))
        *out = INFINITY;
    else if (!strcmp(s, "-Infinity"))
        *out = -INFINITY;
    else {
        char *end;
        *out = strtod(s, &end);
        return *s && !*end;
    }
    return true;
}

static im_rc encode_msg(const json_t *obj, const jmsg_t *m, im_buf_t *out, int depth,
                        im_err_t *err);

static im_rc encode_value(const jfield_t *f, const json_t *v, im_buf_t *out, int depth,
                          im_err_t *err)
{
    uint64_t u;
    double d;
    switch (f->type) {
    case J_MSG: {
        if (!json_is_object(v)) break;
        im_buf_t sub;
        im_buf_init(&sub, 0);
        im_rc rc = encode_msg(v, f->sub, &sub, depth + 1, err);
        if (rc == IM_OK) {
            put_key(out, f->num, 2);
            put_varint(out, sub.len);
            im_buf_append(out, sub.data ? sub.data : "", sub.len);
        }
        im_buf_free(&sub);
        return rc;
    }
    case J_STR:
        if (!json_is_string(v)) break;
        put_key(out, f->num, 2);
        put_varint(out, json_string_length(v));
        im_buf_append(out, json_string_value(v), json_string_length(v));
        return IM_OK;
    case J_BYTES: {
        if (!json_is_string(v)) break;
        im_buf_t raw;
        im_buf_init(&raw, 0);
        if (im_base64_decode(json_string_value(v), json_string_length(v), &raw) != IM_OK) {
            im_buf_free(&raw);
            break;
        }
        put_key(out, f->num, 2);
        put_varint(out, raw.len);
        im_buf_append(out, raw.data ? raw.data : "", raw.len);
        im_buf_free(&raw);
        return IM_OK;
    }
    case J_BOOL:
        if (!json_is_boolean(v)) break;
        put_key(out, f->num, 0);
        put_varint(out, json_is_true(v));
        return IM_OK;
    case J_INT64:
    case J_UINT:
        if (!j_int(v, f->type == J_INT64, &u)) break;
        put_key(out, f->num, 0);
        put_varint(out, u);
        return IM_OK;
    case J_SINT:
        if (!j_int(v, true, &u)) break;
        put_key(out, f->num, 0);
        put_varint(out, (u << 1) ^ (uint64_t)((int64_t)u >> 63));
        return IM_OK;
    case J_FIXED64:
        if (!j_int(v, false, &u)) break;
        put_key(out, f->num, 1);
        put_fixed64(out, u);
        return IM_OK;
    case J_DOUBLE: {
        if (!j_double(v, &d)) break;
        memcpy(&u, &d, sizeof u);
        put_key(out, f->num, 1);
        put_fixed64(out, u);
        return IM_OK;
    }
    }
    return im_err_set(err, IM_EPARSE, "malformed OTLP/JSON request: field %s has the wrong type",
                      f->name);
}

static im_rc encode_msg(const json_t *obj, const jmsg_t *m, im_buf_t *out, int depth, im_err_t *err)
{
    if (depth > JSON_MAX_DEPTH)
        return im_err_set(err, IM_EPARSE, "malformed OTLP/JSON request: nested over %d levels",
                          JSON_MAX_DEPTH);
    for (const jfield_t *f = m->f; f->name; f++) {
        const json_t *v = json_object_get(obj, f->name);
        if (!v || json_is_null(v)) continue;
        if (json_is_array(v)) {
            size_t i;
            const json_t *e;
            json_array_foreach(v, i, e)
            {
                im_rc rc = encode_value(f, e, out, depth, err);
                if (rc) return rc;
            }
            continue;
        }
        im_rc rc = encode_value(f, v, out, depth, err);
        if (rc) return rc;
    }
    return IM_OK;
}

im_rc http_otlp_json_to_pb(const char *json, size_t len, im_buf_t *out, im_err_t *err)
{
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return im_err_set(err, IM_EPARSE, "malformed OTLP/JSON request: %s (byte %d)", je.text,
                          je.position);
    im_rc rc = json_is_object(root)
                   ? encode_msg(root, &m_req, out, 0, err)
                   : im_err_set(err, IM_EPARSE, "malformed OTLP/JSON request: not an object");
    json_decref(root);
    return rc;
}
