/* proto.h — the protobuf exposition format (Prometheus' "PrometheusProto":
 * application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily;
 * encoding=delimited): a decoder of the subset of io.prometheus.client's
 * metrics.proto that scraping uses (expo/metrics.proto lists it).
 *
 * Input: MetricFamily messages, each prefixed by its length as a varint.
 * Output: families with their metrics, decoded into an arena the caller owns
 * (its byte cap bounds what one scrape may take: IM_ELIMIT when reached);
 * names, help, unit and label strings point into the input (not
 * NUL-terminated). Unknown fields are skipped, as protobuf readers do; a
 * truncated or malformed message is IM_EPARSE naming the field and the byte
 * offset. Strings are not checked for UTF-8 or name syntax here (the caller's
 * job, as for the text formats).
 *
 * Histograms carry both forms when the exposer sent both: classic buckets
 * (cumulative counts by upper bound) and the native part (schema, zero bucket,
 * spans and absolute bucket counts — deltas are resolved). `native` says whether
 * the native part is there, by Prometheus' rule: a zero threshold or zero count
 * above 0, or any span (client libraries send an empty span for an empty native
 * histogram). */
#ifndef IM_EXPO_PROTO_H
#define IM_EXPO_PROTO_H

#include "util/arena.h"
#include "util/base.h"
#include "util/err.h"

typedef enum expo_pb_type {
    EXPO_PB_COUNTER = 0,
    EXPO_PB_GAUGE = 1,
    EXPO_PB_SUMMARY = 2,
    EXPO_PB_UNTYPED = 3,
    EXPO_PB_HISTOGRAM = 4,
    EXPO_PB_GAUGE_HISTOGRAM = 5,
} expo_pb_type_t;

typedef struct expo_pb_str {
    const char *p;
    size_t len;
} expo_pb_str_t;

typedef struct expo_pb_label {
    expo_pb_str_t name, value;
} expo_pb_label_t;

typedef struct expo_pb_span {
    int32_t offset;
    uint32_t length;
} expo_pb_span_t;

typedef struct expo_pb_hist {
    double count, sum; /* sample_count (or sample_count_float), sample_sum */
    size_t nbuckets;   /* classic */
    double *upper, *cumulative;
    bool native;
    int32_t schema;
    double zthresh, zcount;
    size_t npspan, nnspan;
    expo_pb_span_t *pspan, *nspan;
    size_t npos, nneg; /* absolute counts, bucket by bucket along the spans */
    double *pos, *neg;
    int64_t created_ms; /* 0 = none */
} expo_pb_hist_t;

typedef struct expo_pb_metric {
    expo_pb_label_t *labels;
    size_t nlabels;
    double value; /* counter, gauge, untyped */
    int64_t ts_ms;
    bool has_ts;
    /* summary */
    double scount, ssum;
    size_t nquantiles;
    double *quantile, *qvalue;
    expo_pb_hist_t hist; /* histogram, gauge histogram */
    bool has_value;      /* the field of the family's type was there */
} expo_pb_metric_t;

typedef struct expo_pb_family {
    expo_pb_str_t name, help, unit;
    expo_pb_type_t type;
    expo_pb_metric_t *metrics;
    size_t nmetrics;
} expo_pb_family_t;

/* Decodes the whole delimited input. */
im_rc expo_pb_parse(const uint8_t *p, size_t len, im_arena_t *a, expo_pb_family_t **fams,
                    size_t *nfams, im_err_t *err);

/* ---- The samples a scrape ingests from the families ----
 *
 * As Prometheus' protobuf scrape parser: counters, gauges and untyped metrics as
 * the family name; summaries as name{quantile="…"}, name_sum, name_count;
 * classic histograms as name_bucket{le="…"} (a "+Inf" bucket added when the
 * exposer left it out), name_sum, name_count; `le` and `quantile` in the float
 * form ("1.0"). A native histogram (hist->native) gives one sample with `native`
 * set when want_native (scrape_native_histograms); its classic series are given
 * too when it has classic buckets and keep_classic
 * (always_scrape_classic_histograms), or when want_native is off (then a native
 * histogram without classic buckets still gives _count, _sum and the "+Inf"
 * bucket). */
typedef struct expo_pb_sample {
    const char *name; /* NUL-terminated, valid during the callback */
    size_t name_len;
    const expo_pb_label_t *labels; /* the metric's */
    size_t nlabels;
    const char *extra_name, *extra_value; /* "le"/"quantile" and its value, or NULL */
    double value;
    int64_t ts_ms;
    bool has_ts;
    expo_pb_type_t type;
    const expo_pb_hist_t *native; /* the native histogram sample, else NULL */
} expo_pb_sample_t;

/* Calls fn for every sample; stops when it returns false (then false). */
bool expo_pb_samples(const expo_pb_family_t *fams, size_t n, bool want_native, bool keep_classic,
                     bool (*fn)(void *ctx, const expo_pb_sample_t *s), void *ctx);

#endif
