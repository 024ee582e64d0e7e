/* otlp.c — the OTLP/HTTP metrics receiver: an ExportMetricsServiceRequest
 * (opentelemetry/proto/collector/metrics/v1; OTLP/JSON is first re-encoded as
 * protobuf by otlp_json.c) decoded by hand with the shared
 * wire readers (pb.h), translated as Prometheus 3's OTLP receiver does with its
 * default settings (names in otlp_name.c), and appended through one appender.
 *
 * Field numbers read (the OTLP schema; unknown fields are skipped, a known
 * field with another wire type is malformed):
 *   ExportMetricsServiceRequest: resource_metrics = 1
 *   ResourceMetrics: resource = 1, scope_metrics = 2   Resource: attributes = 1
 *   ScopeMetrics: metrics = 2
 *   Metric: name = 1, unit = 3, gauge = 5, sum = 7, histogram = 9,
 *           exponential_histogram = 10, summary = 11
 *   Gauge/Summary: data_points = 1; Sum: data_points = 1,
 *           aggregation_temporality = 2 (1 delta, 2 cumulative), is_monotonic = 3;
 *   Histogram/ExponentialHistogram: data_points = 1, aggregation_temporality = 2
 *   NumberDataPoint: time_unix_nano = 3 (fixed64), as_double = 4, as_int = 6
 *           (sfixed64), attributes = 7, flags = 8
 *   HistogramDataPoint: time_unix_nano = 3, count = 4 (fixed64), sum = 5,
 *           bucket_counts = 6 (fixed64), explicit_bounds = 7 (double; both
 *           packed or not, in any number of pieces), attributes = 9, flags = 10
 *   SummaryDataPoint: time_unix_nano = 3, count = 4, sum = 5,
 *           quantile_values = 6 (quantile = 1, value = 2), attributes = 7, flags = 8
 *   KeyValue: key = 1, value = 2; AnyValue: string = 1, bool = 2, int = 3,
 *           double = 4, array = 5 (values = 1), kvlist = 6 (values = 1), bytes = 7
 * The answer is an ExportMetricsServiceResponse: partial_success = 1
 * (rejected_data_points = 1, error_message = 2), present only when something
 * was rejected.
 *
 * Invariants:
 *  1. A malformed request writes nothing: the appender is rolled back on the
 *     first wire error, wherever it is in the message.
 *  2. Every data point is counted once, in samples' points or in rejected.
 *  3. A sample's labels are valid Prometheus names with UTF-8 values; a point
 *     whose attribute values are not UTF-8 is rejected, not the request. */
#include "util/base.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <zlib.h>

#include "http/http_int.h"
#include "http/pb.h"
#include "labels/labels.h"
#include "util/fmtfloat.h"
#include "util/log.h"
#include "util/mem.h"

#define OTLP_NAME_MAX   1024
#define OTLP_ERRS_SHOWN 10
#define OTLP_MAX_DEPTH  8 /* nesting of AnyValue arrays and kvlists rendered */

typedef struct otlp {
    storage_appender_t *a;
    http_otlp_stats_t *st;
    im_buf_t *errs;
    size_t nerrs;
    im_err_t *err;
    im_labels_builder_t lb;
    const im_labels_t *res; /* job, instance of the current resource (owned) */
    im_buf_t val;           /* a rendered attribute value */
    char name[OTLP_NAME_MAX], lname[OTLP_NAME_MAX], full[OTLP_NAME_MAX + 16];
    uint64_t *cnt; /* owned: the histogram point's bucket_counts */
    double *bnd;   /* owned: its explicit_bounds */
    size_t ncnt, nbnd, capc, capb;
    int64_t res_max_t; /* latest timestamp among the resource's points */
    bool res_any;
} otlp_t;

#define KEY(f, wt) (((uint64_t)(f) << 3) | (wt))

static im_rc bad(otlp_t *o, const char *what)
{
    return im_err_set(o->err, IM_EPARSE, "malformed OTLP request: %s", what);
}

IM_PRINTF(2, 3) static void reject(otlp_t *o, const char *fmt, ...)
{
    o->nerrs++;
    if (o->nerrs > OTLP_ERRS_SHOWN) return;
    if (o->errs->len) im_buf_puts(o->errs, "; ");
    char m[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    im_buf_puts(o->errs, m);
}

/* ---- Attribute values ---- */

static void json_str(im_buf_t *b, const char *p, size_t n)
{
    im_json_string(b, p, n, IM_JSON_GO);
}

/* Renders an AnyValue as Prometheus does a label value: strings as they are,
 * bools, ints and doubles in Go's form, arrays and kvlists as JSON. Returns
 * false when malformed. */
static bool any_value(otlp_t *o, http__pb_t v, im_buf_t *out, int depth, bool json)
{
    bool have = false;
    while (v.p < v.end) {
        uint64_t k, x;
        if (!http__pb_varint(&v, &k)) return false;
        http__pb_t sub;
        char num[40];
        switch (k) {
        case KEY(1, 2):
            if (!http__pb_len(&v, &sub)) return false;
            im_buf_reset(out);
            if (json)
                json_str(out, (const char *)sub.p, (size_t)(sub.end - sub.p));
            else
                im_buf_append(out, sub.p, (size_t)(sub.end - sub.p));
            have = true;
            break;
        case KEY(2, 0):
            if (!http__pb_varint(&v, &x)) return false;
            im_buf_reset(out);
            im_buf_puts(out, x ? "true" : "false");
            have = true;
            break;
        case KEY(3, 0):
            if (!http__pb_varint(&v, &x)) return false;
            im_buf_reset(out);
            im_buf_printf(out, "%lld", (long long)(int64_t)x);
            have = true;
            break;
        case KEY(4, 1): {
            double d;
            if (!http__pb_double(&v, &d)) return false;
            im_buf_reset(out);
            size_t n = im_fmt_float_go(d, 'g', num, sizeof num);
            if (json && !isfinite(d)) {
                json_str(out, num, n);
            } else {
                im_buf_append(out, num, n);
            }
            have = true;
            break;
        }
        case KEY(5, 2):
        case KEY(6, 2): {
            if (!http__pb_len(&v, &sub)) return false;
            bool kv = k == KEY(6, 2);
            im_buf_reset(out);
            if (depth >= OTLP_MAX_DEPTH) {
                im_buf_puts(out, "null");
                have = true;
                break;
            }
            im_buf_putc(out, kv ? '{' : '[');
            bool first = true;
            im_buf_t elem;
            im_buf_init(&elem, 0);
            while (sub.p < sub.end) {
                uint64_t ek;
                http__pb_t e;
                if (!http__pb_varint(&sub, &ek)) goto elem_bad;
                if (ek != KEY(1, 2)) {
                    if (!http__pb_skip(&sub, (unsigned)(ek & 7))) goto elem_bad;
                    continue;
                }
                if (!http__pb_len(&sub, &e)) goto elem_bad;
                if (!first) im_buf_putc(out, ',');
                first = false;
                if (kv) { /* KeyValue */
                    http__pb_t key = {NULL, NULL}, val = {NULL, NULL};
                    while (e.p < e.end) {
                        uint64_t kk;
                        if (!http__pb_varint(&e, &kk)) goto elem_bad;
                        if (kk == KEY(1, 2)) {
                            if (!http__pb_len(&e, &key)) goto elem_bad;
                        } else if (kk == KEY(2, 2)) {
                            if (!http__pb_len(&e, &val)) goto elem_bad;
                        } else if (!http__pb_skip(&e, (unsigned)(kk & 7))) {
                            goto elem_bad;
                        }
                    }
                    json_str(out, key.p ? (const char *)key.p : "",
                             key.p ? (size_t)(key.end - key.p) : 0);
                    im_buf_putc(out, ':');
                    e = val;
                }
                im_buf_reset(&elem);
                if (e.p && !any_value(o, e, &elem, depth + 1, true)) goto elem_bad;
                if (elem.len)
                    im_buf_append(out, elem.data, elem.len);
                else
                    im_buf_puts(out, "null");
            }
            im_buf_free(&elem);
            im_buf_putc(out, kv ? '}' : ']');
            have = true;
            break;
        elem_bad:
            im_buf_free(&elem);
            return false;
        }
        case KEY(7, 2): { /* bytes: base64, as pcommon's AsString */
            if (!http__pb_len(&v, &sub)) return false;
            static const char b64[] =
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            im_buf_reset(out);
            if (json) im_buf_putc(out, '"');
            size_t n = (size_t)(sub.end - sub.p);
            for (size_t i = 0; i < n; i += 3) {
                uint32_t w = (uint32_t)sub.p[i] << 16;
                if (i + 1 < n) w |= (uint32_t)sub.p[i + 1] << 8;
                if (i + 2 < n) w |= sub.p[i + 2];
                char q[4] = {b64[(w >> 18) & 63], b64[(w >> 12) & 63],
                             i + 1 < n ? b64[(w >> 6) & 63] : '=', i + 2 < n ? b64[w & 63] : '='};
                im_buf_append(out, q, 4);
            }
            if (json) im_buf_putc(out, '"');
            have = true;
            break;
        }
        default:
            if (!http__pb_skip(&v, (unsigned)(k & 7))) return false;
        }
    }
    if (!have) im_buf_reset(out);
    return true;
}

/* One KeyValue: *key and the rendered value in o->val. */
static bool key_value(otlp_t *o, http__pb_t kv, http__pb_t *key)
{
    key->p = key->end = NULL;
    http__pb_t val = {NULL, NULL};
    while (kv.p < kv.end) {
        uint64_t k;
        if (!http__pb_varint(&kv, &k)) return false;
        if (k == KEY(1, 2)) {
            if (!http__pb_len(&kv, key)) return false;
        } else if (k == KEY(2, 2)) {
            if (!http__pb_len(&kv, &val)) return false;
        } else if (!http__pb_skip(&kv, (unsigned)(k & 7))) {
            return false;
        }
    }
    im_buf_reset(&o->val);
    return !val.p || any_value(o, val, &o->val, 0, false);
}

/* Sets the attributes (KeyValue fields numbered f in msg) on the builder; two
 * keys with the same label name get their values joined with ';'. Returns 0,
 * or -1 malformed, or 1 when a value is not UTF-8 (the point is rejected). */
static int set_attrs(otlp_t *o, http__pb_t msg, unsigned f)
{
    int rc = 0;
    while (msg.p < msg.end) {
        uint64_t k;
        http__pb_t kv, key;
        if (!http__pb_varint(&msg, &k)) return -1;
        if (k != KEY(f, 2)) {
            if (!http__pb_skip(&msg, (unsigned)(k & 7))) return -1;
            continue;
        }
        if (!http__pb_len(&msg, &kv) || !key_value(o, kv, &key)) return -1;
        size_t kl = key.p ? (size_t)(key.end - key.p) : 0;
        if (!kl || !o->val.len) continue; /* empty keys and values make no label */
        if (!im_utf8_valid(o->val.data, o->val.len) || !im_utf8_valid((const char *)key.p, kl)) {
            rc = 1;
            continue;
        }
        size_t ln = http_otlp_label_name((const char *)key.p, kl, o->lname, sizeof o->lname);
        const im_istr_t *old = im_lb_get(&o->lb, o->lname);
        if (old) {
            im_buf_t j;
            im_buf_init(&j, 0);
            im_buf_append(&j, old->s, old->len);
            im_buf_putc(&j, ';');
            im_buf_append(&j, o->val.data, o->val.len);
            im_lb_set(&o->lb, o->lname, ln, j.data, j.len);
            im_buf_free(&j);
        } else {
            im_lb_set(&o->lb, o->lname, ln, o->val.data, o->val.len);
        }
    }
    return rc;
}

/* ---- Appending ---- */

/* Adds one sample named o->name + suffix with the builder's labels (plus
 * extra=value when extra). Returns false when the store refused it (the
 * reason is recorded). */
static bool add(otlp_t *o, const char *suffix, const char *extra, const char *xval, int64_t t,
                double v)
{
    snprintf(o->full, sizeof o->full, "%s%s", o->name, suffix);
    im_lb_set(&o->lb, "__name__", 8, o->full, strlen(o->full));
    if (extra) im_lb_set(&o->lb, extra, strlen(extra), xval, strlen(xval));
    const im_labels_t *ls = im_lb_build(&o->lb);
    if (extra) im_lb_del(&o->lb, extra);
    im_rc rc = storage_appender_add(o->a, 0, ls, t, v, NULL);
    if (rc != IM_OK) {
        im_buf_t lb;
        im_buf_init(&lb, 4096);
        (void)im_labels_format(ls, &lb);
        reject(o, "%s: %s (timestamp %lld)", lb.data ? lb.data : "", storage_appender_error(o->a),
               (long long)t);
        im_buf_free(&lb);
    } else {
        o->st->samples++;
    }
    im_labels_unref(ls);
    return rc == IM_OK;
}

/* The point's labels: its attributes, then the resource's job and instance. */
static int point_labels(otlp_t *o, http__pb_t dp, unsigned attr_field)
{
    im_lb_reset(&o->lb);
    int rc = set_attrs(o, dp, attr_field);
    if (rc) return rc;
    for (size_t i = 0; i < o->res->n; i++)
        im_lb_set_istr(&o->lb, o->res->l[i].name, o->res->l[i].value);
    return 0;
}

static double stale_nan(void)
{
    uint64_t b = STORAGE_STALE_NAN_BITS;
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static void saw_time(otlp_t *o, int64_t t)
{
    if (!o->res_any || t > o->res_max_t) o->res_max_t = t;
    o->res_any = true;
}

static void fmt_bound(double v, char *buf, size_t cap)
{
    if (isinf(v)) {
        snprintf(buf, cap, "%s", v > 0 ? "+Inf" : "-Inf");
        return;
    }
    (void)im_fmt_float_go(v, 'f', buf, cap); /* NUL-terminated, cut at cap (never: see b[]) */
}

typedef enum dp_kind { DP_NUMBER, DP_HIST, DP_SUMMARY } dp_kind_t;

#define QMAX 256 /* quantiles and buckets rendered per point beyond which the point is rejected */

/* One data point of a gauge/sum (suffix "" for both), histogram or summary.
 * Returns IM_OK or IM_EPARSE. */
static im_rc data_point(otlp_t *o, http__pb_t dp, dp_kind_t kind, bool *bad_utf8)
{
    uint64_t time_ns = 0, flags = 0, count = 0;
    double value = 0, sum = 0;
    bool has_sum = false;
    o->ncnt = o->nbnd = 0;
    size_t nq = 0;
    unsigned attr_f = kind == DP_HIST ? 9 : 7, flags_f = kind == DP_HIST ? 10 : 8;
    http__pb_t scan = dp;
    while (scan.p < scan.end) {
        uint64_t k, x;
        http__pb_t sub;
        if (!http__pb_varint(&scan, &k)) return bad(o, "truncated data point");
        unsigned f = (unsigned)(k >> 3), wt = (unsigned)(k & 7);
        if (f == 3) {
            if (wt != 1 || !http__pb_fixed64(&scan, &time_ns)) return bad(o, "time_unix_nano");
        } else if (f == flags_f) {
            if (wt != 0 || !http__pb_varint(&scan, &flags)) return bad(o, "flags");
        } else if (kind == DP_NUMBER && f == 4) {
            if (wt != 1 || !http__pb_double(&scan, &value)) return bad(o, "as_double");
        } else if (kind == DP_NUMBER && f == 6) {
            if (wt != 1 || !http__pb_fixed64(&scan, &x)) return bad(o, "as_int");
            value = (double)(int64_t)x;
        } else if (kind != DP_NUMBER && f == 4) {
            if (wt != 1 || !http__pb_fixed64(&scan, &count)) return bad(o, "count");
        } else if (kind != DP_NUMBER && f == 5) {
            if (wt != 1 || !http__pb_double(&scan, &sum)) return bad(o, "sum");
            has_sum = true;
        } else if (kind == DP_HIST && (f == 6 || f == 7)) {
            /* repeated fixed64/double: one value (wire type 1) or a packed run (2) */
            if (wt == 2) {
                if (!http__pb_len(&scan, &sub) || (sub.end - sub.p) % 8)
                    return bad(o, f == 6 ? "bucket_counts" : "explicit_bounds");
            } else if (wt == 1 && scan.end - scan.p >= 8) {
                sub.p = scan.p;
                sub.end = scan.p + 8;
                scan.p += 8;
            } else {
                return bad(o, f == 6 ? "bucket_counts" : "explicit_bounds");
            }
            while (sub.p < sub.end) {
                if (f == 6) {
                    if (o->ncnt == o->capc) {
                        o->capc = o->capc ? o->capc * 2 : 16;
                        o->cnt = im_realloc(o->cnt, o->capc * sizeof *o->cnt);
                    }
                    (void)http__pb_fixed64(&sub, &o->cnt[o->ncnt++]);
                } else {
                    if (o->nbnd == o->capb) {
                        o->capb = o->capb ? o->capb * 2 : 16;
                        o->bnd = im_realloc(o->bnd, o->capb * sizeof *o->bnd);
                    }
                    (void)http__pb_double(&sub, &o->bnd[o->nbnd++]);
                }
            }
        } else if (kind == DP_SUMMARY && f == 6) {
            if (wt != 2 || !http__pb_len(&scan, &sub)) return bad(o, "quantile_values");
            nq++;
        } else if (f == attr_f) {
            if (wt != 2 || !http__pb_skip(&scan, wt)) return bad(o, "attributes");
        } else if (!http__pb_skip(&scan, wt)) {
            return bad(o, "data point field");
        }
    }
    o->st->points++;
    int lrc = point_labels(o, dp, attr_f);
    if (lrc < 0) return bad(o, "data point attributes");
    if (lrc > 0) {
        *bad_utf8 = true;
        o->st->rejected++;
        reject(o, "metric \"%s\": an attribute is not valid UTF-8", o->name);
        return IM_OK;
    }
    int64_t t = (int64_t)(time_ns / 1000000u);
    bool stale = flags & 1; /* FLAG_NO_RECORDED_VALUE */
    saw_time(o, t);
    bool ok = true;
    char b[400]; /* Go's %f form of a double: up to 309 digits before the point */
    if (kind == DP_NUMBER) {
        ok = add(o, "", NULL, NULL, t, stale ? stale_nan() : value);
    } else if (kind == DP_HIST) {
        size_t nb = o->nbnd, nc = o->ncnt;
        if (nc && nc != nb + 1) {
            o->st->rejected++;
            reject(o, "histogram \"%s\": %zu bucket counts for %zu explicit bounds", o->name, nc,
                   nb);
            return IM_OK;
        }
        if (has_sum) ok = add(o, "_sum", NULL, NULL, t, stale ? stale_nan() : sum) && ok;
        ok = add(o, "_count", NULL, NULL, t, stale ? stale_nan() : (double)count) && ok;
        uint64_t cum = 0;
        for (size_t i = 0; i < nb && nc; i++) {
            cum += o->cnt[i];
            fmt_bound(o->bnd[i], b, sizeof b);
            ok = add(o, "_bucket", "le", b, t, stale ? stale_nan() : (double)cum) && ok;
        }
        ok = add(o, "_bucket", "le", "+Inf", t, stale ? stale_nan() : (double)count) && ok;
    } else {
        ok = add(o, "_sum", NULL, NULL, t, stale ? stale_nan() : sum) && ok;
        ok = add(o, "_count", NULL, NULL, t, stale ? stale_nan() : (double)count) && ok;
        scan = dp;
        while (scan.p < scan.end && nq) {
            uint64_t k = 0;
            http__pb_t q = {NULL, NULL};
            (void)http__pb_varint(&scan, &k);
            if (k != KEY(6, 2)) {
                (void)http__pb_skip(&scan, (unsigned)(k & 7));
                continue;
            }
            (void)http__pb_len(&scan, &q);
            double qq = 0, qv = 0;
            while (q.p < q.end) {
                uint64_t qk;
                if (!http__pb_varint(&q, &qk)) return bad(o, "quantile value");
                bool okf = qk == KEY(1, 1)   ? http__pb_double(&q, &qq)
                           : qk == KEY(2, 1) ? http__pb_double(&q, &qv)
                                             : http__pb_skip(&q, (unsigned)(qk & 7));
                if (!okf) return bad(o, "quantile value");
            }
            fmt_bound(qq, b, sizeof b);
            ok = add(o, "", "quantile", b, t, stale ? stale_nan() : qv) && ok;
        }
    }
    if (!ok) o->st->rejected++;
    return IM_OK;
}

/* One Metric. */
static im_rc metric(otlp_t *o, http__pb_t m)
{
    http__pb_t name = {NULL, NULL}, unit = {NULL, NULL}, data = {NULL, NULL};
    unsigned data_f = 0;
    while (m.p < m.end) {
        uint64_t k;
        if (!http__pb_varint(&m, &k)) return bad(o, "truncated metric");
        unsigned f = (unsigned)(k >> 3), wt = (unsigned)(k & 7);
        http__pb_t sub;
        if (f == 1 || f == 3 || f == 5 || f == 7 || f == 9 || f == 10 || f == 11) {
            if (wt != 2 || !http__pb_len(&m, &sub)) return bad(o, "metric field");
            if (f == 1)
                name = sub;
            else if (f == 3)
                unit = sub;
            else {
                data = sub;
                data_f = f;
            }
        } else if (!http__pb_skip(&m, wt)) {
            return bad(o, "metric field");
        }
    }
    /* the data's own header fields */
    uint64_t temporality = 0, monotonic = 0, n = 0;
    http__pb_t d = data;
    while (data_f && d.p < d.end) {
        uint64_t k;
        if (!http__pb_varint(&d, &k)) return bad(o, "truncated metric data");
        if (k == KEY(2, 0) && data_f != 5 && data_f != 11) {
            if (!http__pb_varint(&d, &temporality)) return bad(o, "aggregation_temporality");
        } else if (k == KEY(3, 0) && data_f == 7) {
            if (!http__pb_varint(&d, &monotonic)) return bad(o, "is_monotonic");
        } else {
            if (k == KEY(1, 2)) n++;
            if (!http__pb_skip(&d, (unsigned)(k & 7))) return bad(o, "metric data");
        }
    }
    size_t nl = name.p ? (size_t)(name.end - name.p) : 0;
    size_t ul = unit.p ? (size_t)(unit.end - unit.p) : 0;
    char shown[200];
    snprintf(shown, sizeof shown, "%.*s", (int)IM_MIN(nl, 150), nl ? (const char *)name.p : "");
    if (!data_f) return IM_OK; /* a metric without data: nothing to write */
    if (data_f == 10) {
        o->st->points += n;
        o->st->rejected += n;
        reject(o, "exponential histogram \"%s\": native histograms are not stored by this server",
               shown);
        return IM_OK;
    }
    if (data_f != 5 && data_f != 11 && temporality != 2) {
        o->st->points += n;
        o->st->rejected += n;
        reject(o, "invalid temporality and type combination for metric \"%s\"", shown);
        return IM_OK;
    }
    if (!nl || !im_utf8_valid((const char *)name.p, nl) ||
        (ul && !im_utf8_valid((const char *)unit.p, ul))) {
        o->st->points += n;
        o->st->rejected += n;
        reject(o, "metric without a valid name (\"%s\")", shown);
        return IM_OK;
    }
    http_otlp_kind_t kind = data_f == 5                ? HTTP_OTLP_GAUGE
                            : data_f == 7 && monotonic ? HTTP_OTLP_COUNTER
                            : data_f == 7              ? HTTP_OTLP_GAUGE
                                                       : HTTP_OTLP_OTHER;
    size_t len = http_otlp_metric_name((const char *)name.p, nl, (const char *)unit.p, ul, kind,
                                       o->name, sizeof o->name);
    if (!len || !im_metric_name_valid(o->name, len)) {
        o->st->points += n;
        o->st->rejected += n;
        reject(o, "metric \"%s\" has no Prometheus name", shown);
        return IM_OK;
    }
    dp_kind_t dk = data_f == 9 ? DP_HIST : data_f == 11 ? DP_SUMMARY : DP_NUMBER;
    d = data;
    while (d.p < d.end) {
        uint64_t k = 0;
        http__pb_t dp = {NULL, NULL};
        (void)http__pb_varint(&d, &k); /* checked by the scan above */
        if (k != KEY(1, 2)) {
            (void)http__pb_skip(&d, (unsigned)(k & 7));
            continue;
        }
        (void)http__pb_len(&d, &dp);
        bool bu = false;
        im_rc rc = data_point(o, dp, dk, &bu);
        if (rc) return rc;
    }
    return IM_OK;
}

/* The resource: job and instance labels (o->res) and the target_info labels
 * (the other attributes, in *info, with job and instance). */
static im_rc resource(otlp_t *o, http__pb_t r, const im_labels_t **info)
{
    im_lb_reset(&o->lb);
    int rc = set_attrs(o, r, 1);
    if (rc < 0) return bad(o, "resource attributes");
    if (rc > 0) reject(o, "a resource attribute is not valid UTF-8 (left out)");
    const im_istr_t *svc = im_lb_get(&o->lb, "service_name");
    const im_istr_t *ns = im_lb_get(&o->lb, "service_namespace");
    const im_istr_t *inst = im_lb_get(&o->lb, "service_instance_id");
    char job[1024] = "", instv[1024] = "";
    if (svc) {
        if (ns)
            snprintf(job, sizeof job, "%s/%s", ns->s, svc->s);
        else
            snprintf(job, sizeof job, "%s", svc->s);
    }
    if (inst) snprintf(instv, sizeof instv, "%s", inst->s);
    im_lb_del(&o->lb, "service_name");
    im_lb_del(&o->lb, "service_namespace");
    im_lb_del(&o->lb, "service_instance_id");
    bool others = o->lb.n > 0;
    if (*job) im_lb_set(&o->lb, "job", 3, job, strlen(job));
    if (*instv) im_lb_set(&o->lb, "instance", 8, instv, strlen(instv));
    *info = others ? im_lb_build(&o->lb) : NULL;
    im_lb_reset(&o->lb);
    if (*job) im_lb_set(&o->lb, "job", 3, job, strlen(job));
    if (*instv) im_lb_set(&o->lb, "instance", 8, instv, strlen(instv));
    o->res = im_lb_build(&o->lb);
    return IM_OK;
}

static im_rc resource_metrics(otlp_t *o, http__pb_t rm)
{
    /* the resource first, wherever it is in the message */
    http__pb_t r = {NULL, NULL}, scan = rm;
    while (scan.p < scan.end) {
        uint64_t k;
        if (!http__pb_varint(&scan, &k)) return bad(o, "truncated resource metrics");
        if (k == KEY(1, 2)) {
            if (!http__pb_len(&scan, &r)) return bad(o, "resource");
        } else if (!http__pb_skip(&scan, (unsigned)(k & 7))) {
            return bad(o, "resource metrics field");
        }
    }
    const im_labels_t *info = NULL;
    if (r.p) {
        im_rc rc = resource(o, r, &info);
        if (rc) return rc;
    } else {
        o->res = im_labels_ref(im_labels_empty());
    }
    o->res_any = false;
    im_rc rc = IM_OK;
    scan = rm;
    while (scan.p < scan.end && rc == IM_OK) {
        uint64_t k = 0;
        http__pb_t sm = {NULL, NULL};
        (void)http__pb_varint(&scan, &k);
        if (k != KEY(2, 2)) {
            (void)http__pb_skip(&scan, (unsigned)(k & 7));
            continue;
        }
        (void)http__pb_len(&scan, &sm);
        while (sm.p < sm.end && rc == IM_OK) { /* ScopeMetrics */
            uint64_t sk;
            http__pb_t m;
            if (!http__pb_varint(&sm, &sk)) {
                rc = bad(o, "truncated scope metrics");
                break;
            }
            if (sk != KEY(2, 2)) {
                if (!http__pb_skip(&sm, (unsigned)(sk & 7))) rc = bad(o, "scope metrics field");
                continue;
            }
            if (!http__pb_len(&sm, &m)) {
                rc = bad(o, "metric");
                break;
            }
            rc = metric(o, m);
        }
    }
    if (rc == IM_OK && info && o->res_any) {
        const im_labels_t *ls = im_labels_ref(info);
        im_lb_reset(&o->lb);
        im_lb_load(&o->lb, ls);
        im_labels_unref(ls);
        snprintf(o->name, sizeof o->name, "target_info");
        (void)add(o, "", NULL, NULL, o->res_max_t, 1);
    }
    if (info) im_labels_unref(info);
    im_labels_unref(o->res);
    o->res = NULL;
    return rc;
}

im_rc http_otlp_ingest(storage_t *storage, const uint8_t *p, size_t len, http_otlp_stats_t *st,
                       im_buf_t *errs, im_err_t *err)
{
    memset(st, 0, sizeof *st);
    otlp_t o;
    memset(&o, 0, sizeof o);
    o.st = st;
    o.errs = errs;
    o.err = err;
    im_lb_init(&o.lb);
    im_buf_init(&o.val, 0);
    o.a = storage_appender(storage);
    http__pb_t b = {p, p + len};
    im_rc rc = IM_OK;
    while (b.p < b.end && rc == IM_OK) {
        uint64_t k;
        http__pb_t rm;
        if (!http__pb_varint(&b, &k)) {
            rc = bad(&o, "truncated request");
            break;
        }
        if (k != KEY(1, 2)) {
            if (!http__pb_skip(&b, (unsigned)(k & 7))) rc = bad(&o, "request field");
            continue;
        }
        if (!http__pb_len(&b, &rm)) {
            rc = bad(&o, "truncated resource metrics");
            break;
        }
        rc = resource_metrics(&o, rm);
    }
    if (rc == IM_OK) {
        rc = storage_appender_commit(o.a, err);
    } else {
        storage_appender_rollback(o.a);
    }
    if (rc != IM_OK) {
        st->samples = 0;
    } else if (o.nerrs > OTLP_ERRS_SHOWN) {
        im_buf_printf(errs, "; and %zu more", o.nerrs - OTLP_ERRS_SHOWN);
    }
    im_free(o.cnt);
    im_free(o.bnd);
    im_buf_free(&o.val);
    im_lb_free(&o.lb);
    return rc;
}

/* ---- The HTTP handler ---- */

/* Inflates a gzip body into out, at most cap bytes (IM_ELIMIT past it). */
static im_rc gunzip(const char *in, size_t n, int64_t cap, im_buf_t *out, im_err_t *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return im_err_set(err, IM_ERR, "gzip: cannot start inflating");
    z.next_in = (Bytef *)(uintptr_t)in;
    z.avail_in = (uInt)n;
    char chunk[65536];
    im_rc rc = IM_OK;
    for (;;) {
        z.next_out = (Bytef *)chunk;
        z.avail_out = sizeof chunk;
        int zr = inflate(&z, Z_NO_FLUSH);
        size_t got = sizeof chunk - z.avail_out;
        if (out->len + got > (size_t)cap) {
            rc = im_err_set(err, IM_ELIMIT,
                            "decompressed request body exceeds the limit of %lld bytes "
                            "(--web.remote-write-max-bytes)",
                            (long long)cap);
            break;
        }
        im_buf_append(out, chunk, got);
        if (zr == Z_STREAM_END) {
            if (z.avail_in == 0) break;
            inflateReset(&z); /* a further gzip member */
            continue;
        }
        if (zr != Z_OK && !(zr == Z_BUF_ERROR && got)) {
            rc = im_err_set(err, IM_EPARSE, "gzip: %s", z.msg ? z.msg : "corrupt input");
            break;
        }
        if (z.avail_in == 0 && got == 0) {
            rc = im_err_set(err, IM_EPARSE, "gzip: truncated input");
            break;
        }
    }
    inflateEnd(&z);
    return rc;
}

static bool media_is(const char *ct, const char *media)
{
    while (*ct == ' ') ct++;
    size_t n = strlen(media);
    return !strncasecmp(ct, media, n) && (ct[n] == 0 || ct[n] == ';' || ct[n] == ' ');
}

static enum MHD_Result otlp_refuse(http_server_t *s, http__req_t *r, unsigned code, const char *msg)
{
    char m[IM_ERR_MSG_MAX + 2];
    snprintf(m, sizeof m, "%s\n", msg);
    IM_WARN("Error receiving OTLP metrics", "code=%u err=%s", code, im_logq(msg));
    pthread_mutex_lock(&s->mu);
    s->otlp_requests++;
    s->otlp_failures++;
    pthread_mutex_unlock(&s->mu);
    return http__send_text(s, r, code, m);
}

static void pb_put_varint(im_buf_t *b, uint64_t v)
{
    while (v >= 0x80) {
        im_buf_putc(b, (char)(v | 0x80));
        v >>= 7;
    }
    im_buf_putc(b, (char)v);
}

enum MHD_Result http__otlp(http_server_t *s, http__req_t *r)
{
    const char *ct = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Type");
    bool json = ct && media_is(ct, "application/json");
    if (!ct || (!json && !media_is(ct, "application/x-protobuf"))) {
        char m[300];
        snprintf(m, sizeof m,
                 "unsupported content type %.100s: this receiver takes "
                 "application/x-protobuf or application/json",
                 ct ? ct : "(none)");
        return otlp_refuse(s, r, 415, m);
    }
    const char *enc = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Content-Encoding");
    im_buf_t raw;
    im_buf_init(&raw, 0);
    const uint8_t *body = (const uint8_t *)(r->body.data ? r->body.data : "");
    size_t blen = r->body.len;
    im_err_t err;
    im_err_clear(&err);
    if (enc && *enc && strcasecmp(enc, "identity")) {
        if (strcasecmp(enc, "gzip")) {
            char m[300];
            snprintf(m, sizeof m,
                     "unsupported Content-Encoding %.100s: only gzip and identity are accepted",
                     enc);
            return otlp_refuse(s, r, 415, m);
        }
        int64_t cap =
            s->opts.remote_write_max_bytes > 0 ? s->opts.remote_write_max_bytes : 32LL << 20;
        im_rc grc = gunzip((const char *)body, blen, cap, &raw, &err);
        if (grc) {
            im_buf_free(&raw);
            return otlp_refuse(s, r, grc == IM_ELIMIT ? 413 : 400, err.msg);
        }
        body = (const uint8_t *)(raw.data ? raw.data : "");
        blen = raw.len;
    }
    im_buf_t pb;
    im_buf_init(&pb, 0);
    if (json) {
        im_rc jrc = http_otlp_json_to_pb((const char *)body, blen, &pb, &err);
        im_buf_free(&raw);
        if (jrc) {
            im_buf_free(&pb);
            return otlp_refuse(s, r, 400, err.msg);
        }
        body = (const uint8_t *)(pb.data ? pb.data : "");
        blen = pb.len;
    }
    http_otlp_stats_t st;
    im_buf_t errs;
    im_buf_init(&errs, 0);
    im_rc rc = http_otlp_ingest(s->opts.storage, body, blen, &st, &errs, &err);
    im_buf_free(&raw);
    im_buf_free(&pb);
    pthread_mutex_lock(&s->mu);
    s->otlp_requests++;
    s->otlp_samples += st.samples;
    s->otlp_rejected += st.rejected;
    if (rc != IM_OK) s->otlp_failures++;
    pthread_mutex_unlock(&s->mu);
    if (rc != IM_OK) {
        im_buf_free(&errs);
        if (rc == IM_EPARSE) return otlp_refuse(s, r, 400, err.msg);
        IM_ERROR("Error appending OTLP metrics", "err=%s", im_logq(err.msg));
        char m[IM_ERR_MSG_MAX + 2];
        snprintf(m, sizeof m, "%s\n", err.msg);
        return http__send_text(s, r, 500, m);
    }
    im_buf_t out;
    im_buf_init(&out, 0);
    if (st.rejected)
        IM_WARN("OTLP data points rejected", "rejected=%llu err=%s",
                (unsigned long long)st.rejected, im_logq(errs.data ? errs.data : ""));
    if (json) { /* the response in the request's encoding */
        if (st.rejected) {
            im_buf_printf(&out,
                          "{\"partialSuccess\":{\"rejectedDataPoints\":\"%llu\",\"errorMessage\":",
                          (unsigned long long)st.rejected);
            im_json_string(&out, errs.data ? errs.data : "", errs.len, IM_JSON_GO);
            im_buf_puts(&out, "}}");
        } else {
            im_buf_puts(&out, "{}");
        }
        im_buf_free(&errs);
        return http__send(s, r, 200, "application/json", &out);
    }
    if (st.rejected) {
        im_buf_t ps;
        im_buf_init(&ps, 0);
        im_buf_putc(&ps, 1 << 3 | 0);
        pb_put_varint(&ps, st.rejected);
        im_buf_putc(&ps, 2 << 3 | 2);
        pb_put_varint(&ps, errs.len);
        im_buf_append(&ps, errs.data ? errs.data : "", errs.len);
        im_buf_putc(&out, 1 << 3 | 2);
        pb_put_varint(&out, ps.len);
        im_buf_append(&out, ps.data, ps.len);
        im_buf_free(&ps);
    }
    im_buf_free(&errs);
    return http__send(s, r, 200, "application/x-protobuf", &out);
}
