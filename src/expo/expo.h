/* expo.h — exposition formats: Prometheus text 0.0.4 and OpenMetrics 1.0 text,
 * parse, check and write. Contract for scrape, tsdb import, the simulator, lint.
 *
 * Parsing (expo_parser_*, expo_parse).
 *  1. Zero-copy and streaming: the parser walks the caller's buffer once and yields
 *     one entry at a time (a sample, or HELP/TYPE/UNIT metadata, or # EOF). It never
 *     copies the buffer and allocates nothing per sample: two scratch areas (label
 *     views and unescaped bytes) grow while lines get bigger, up to the limits, and
 *     are reused.
 *  2. Lifetime: every view in an entry (name, labels, help text, exemplar) is valid
 *     until the next call to expo_parser_next / reset / free on the same parser, or
 *     until the input buffer is changed or freed, whichever comes first. Views that
 *     need no unescaping point into the input buffer; unescaped ones point into the
 *     parser's scratch. Nothing in an entry is NUL-terminated.
 *  3. Syntax follows what Prometheus 2.x's scrape parsers accept (model/textparse):
 *     metric names [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*,
 *     label values in double quotes with escapes \\ \" \n resolved (any other
 *     backslash sequence is kept as is, as Prometheus does), values as Go's
 *     ParseFloat reads them (NaN, +Inf, -Inf, Inf case-insensitive), label values
 *     and HELP must be valid UTF-8.
 *     Text 0.0.4 also takes CRLF line ends (the CR is not part of the line;
 *     Prometheus itself rejects them, expo_check reports it) and a missing final
 *     newline; OpenMetrics takes neither.
 *     Text 0.0.4: optional integer timestamp in ms; free comments (# ...) skipped.
 *     OpenMetrics 1.0: timestamp in seconds (fraction allowed, converted to ms,
 *     truncating below 1 ms), exemplars after " # ", UNIT, the types info,
 *     stateset, gaugehistogram and unknown, `# EOF` required as the last line and
 *     nothing after it, no other comments, no blank lines.
 *  4. The parser checks syntax only. Semantics — duplicate series, suffixes that
 *     do not belong to the family's type, non-cumulative buckets, families split
 *     across the input, lints — are expo_check's job (the scrape path does not pay
 *     for them).
 *  5. Errors: expo_parser_next returns a negative im_rc and fills err with the line
 *     and column (1-based, columns in bytes) of the offending byte and a sentence
 *     saying what was expected ("expected label name or '}' after ','", ...). After
 *     an error the parser stays in error (sticky) until reset.
 *  6. Limits: max_line_bytes (a line longer than it is IM_ELIMIT naming
 *     expo_limits_t.max_line_bytes / --max-line-bytes, or the caller's
 *     line_setting), max_body_bytes (checked at reset: the whole input),
 *     max_labels per sample (labels_setting).
 *
 * Checking (expo_check): parse plus the semantic checks and the lints promtool
 * check metrics prints; each finding goes to a callback with line, column,
 * severity and message. Used by `infermon check metrics` and the fuzzer.
 *
 * Writing (expo_writer_*): appends byte-exact Prometheus text 0.0.4 or OpenMetrics
 * to an im_buf_t; values formatted with im_fmt_float_expo. Errors (buffer cap) are
 * sticky: after a failed append every later call returns the same code and the
 * output should be discarded. */
#ifndef IM_EXPO_EXPO_H
#define IM_EXPO_EXPO_H

#include "labels/labels.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum expo_format {
    EXPO_TEXT_004 = 0,      /* text/plain; version=0.0.4 */
    EXPO_OPENMETRICS_1 = 1, /* application/openmetrics-text; version=1.0.0 */
} expo_format_t;

/* From a Content-Type header value (parameters ignored, case-insensitive media
 * type): application/openmetrics-text -> EXPO_OPENMETRICS_1, anything else
 * (text/plain, empty, unknown) -> EXPO_TEXT_004, as Prometheus falls back. */
expo_format_t expo_format_from_content_type(const char *ct, size_t len);
/* The Content-Type to send / the Accept header to ask for a format. */
const char *expo_format_content_type(expo_format_t f);
const char *expo_format_name(expo_format_t f); /* "text" / "openmetrics" */

typedef enum expo_type {
    EXPO_TYPE_UNKNOWN = 0, /* no TYPE line, "untyped" (text) or "unknown" (OM) */
    EXPO_TYPE_COUNTER,
    EXPO_TYPE_GAUGE,
    EXPO_TYPE_HISTOGRAM,
    EXPO_TYPE_GAUGEHISTOGRAM, /* OpenMetrics only */
    EXPO_TYPE_SUMMARY,
    EXPO_TYPE_INFO,     /* OpenMetrics only */
    EXPO_TYPE_STATESET, /* OpenMetrics only */
} expo_type_t;

/* "counter", ...; for UNKNOWN "untyped" in text format and "unknown" in OM. */
const char *expo_type_name(expo_type_t t, expo_format_t f);

typedef struct expo_label {
    im_sv_t name;  /* borrowed (input), see lifetime rule 2 */
    im_sv_t value; /* borrowed (input or scratch), escapes resolved */
} expo_label_t;

typedef struct expo_exemplar {
    const expo_label_t *labels; /* borrowed (parser scratch) */
    uint32_t nlabels;
    double value;
    bool has_ts;
    int64_t t_ms;
} expo_exemplar_t;

typedef enum expo_entry_kind {
    EXPO_ENTRY_SAMPLE = 1,
    EXPO_ENTRY_HELP,
    EXPO_ENTRY_TYPE,
    EXPO_ENTRY_UNIT,
    EXPO_ENTRY_EOF, /* OpenMetrics "# EOF" (always the last entry) */
} expo_entry_kind_t;

typedef struct expo_entry {
    expo_entry_kind_t kind;
    int line; /* 1-based line of the entry */
    /* SAMPLE: the metric name as written (e.g. foo_bucket);
     * HELP/TYPE/UNIT: the family name. Borrowed (input). */
    im_sv_t name;
    /* TYPE: the declared type. SAMPLE: the type of the family the sample belongs
     * to, when the last TYPE line's family name is the sample's name or its name
     * minus a suffix valid for that type (_total, _created, _bucket, _sum, _count,
     * _gcount, _gsum, _info); EXPO_TYPE_UNKNOWN otherwise. */
    expo_type_t type;
    /* SAMPLE: length of the family part of name when type != UNKNOWN (so the
     * suffix is name[family_len..]); name.len otherwise. */
    size_t family_len;
    /* HELP: the text, escapes (\\ \n, and \" in OM) resolved. UNIT: the unit.
     * Borrowed (input or scratch). */
    im_sv_t text;
    /* SAMPLE only. labels: borrowed (parser scratch), in input order, without
     * __name__ (the name is in .name). */
    const expo_label_t *labels;
    uint32_t nlabels;
    double value;
    bool has_ts;
    int64_t t_ms; /* when has_ts */
    bool has_exemplar;
    expo_exemplar_t exemplar; /* when has_exemplar (OpenMetrics only) */
} expo_entry_t;

typedef struct expo_limits {
    size_t max_line_bytes; /* 0 = EXPO_DEFAULT_MAX_LINE_BYTES */
    size_t max_body_bytes; /* 0 = no limit (callers reading from the network set one) */
    uint32_t max_labels;   /* per sample; 0 = EXPO_DEFAULT_MAX_LABELS */
    /* What the limit errors tell the user to change, in parentheses after the
     * sentence (static strings, may be NULL): the default names the limit
     * fields and the `infermon check metrics` flags. The scraper names its
     * scrape config settings. */
    const char *line_setting;   /* NULL: "expo_limits_t.max_line_bytes; --max-line-bytes" */
    const char *labels_setting; /* NULL: "expo_limits_t.max_labels; --max-labels" */
} expo_limits_t;

#define EXPO_DEFAULT_MAX_LINE_BYTES (1u << 20) /* 1 MiB */
#define EXPO_DEFAULT_MAX_LABELS     1024u

typedef struct expo_parser expo_parser_t;

/* New parser (limits may be NULL = defaults; copied). Free with expo_parser_free. */
expo_parser_t *expo_parser_new(const expo_limits_t *limits);
/* Replaces the limits (NULL = defaults; copied) for the inputs after the next
 * reset: one parser can serve inputs with different limits (the scraper's jobs). */
void expo_parser_set_limits(expo_parser_t *p, const expo_limits_t *limits);
void expo_parser_free(expo_parser_t *p);
/* Points the parser at a new input (borrowed until the next reset/free). Keeps
 * scratch memory. Returns IM_ELIMIT (and fills err) when len > max_body_bytes; the
 * parser is then in error. */
im_rc expo_parser_reset(expo_parser_t *p, const char *buf, size_t len, expo_format_t f,
                        im_err_t *err);
/* Next entry: 1 = *e filled, 0 = end of input (for OM only after # EOF was seen
 * and returned), negative im_rc = error (err filled with line and column). */
int expo_parser_next(expo_parser_t *p, expo_entry_t *e, im_err_t *err);
/* Line and column (1-based) of the last byte position looked at; after an error
 * the position of the error. */
void expo_parser_pos(const expo_parser_t *p, int *line, int *col);

/* Callback form: walks the whole input. A callback returning non-zero stops the
 * walk and expo_parse returns that value. cb members may be NULL. Returns IM_OK,
 * the parser's error, or the callback's value. */
typedef struct expo_callbacks {
    int (*sample)(void *user, const expo_entry_t *e);
    int (*meta)(void *user, const expo_entry_t *e); /* HELP, TYPE, UNIT, EOF */
} expo_callbacks_t;

int expo_parse(const char *buf, size_t len, expo_format_t f, const expo_callbacks_t *cb, void *user,
               const expo_limits_t *limits, im_err_t *err);

/* Builds the sample's label set with __name__ (caller owns the reference; later
 * duplicates of a label name win, empty values dropped, as labels.h says). lb is
 * a scratch builder the caller keeps (reset here) to avoid allocating. */
const im_labels_t *expo_entry_labels(const expo_entry_t *e, im_labels_builder_t *lb);

/* ---- Checking: semantics and lints (promtool check metrics) ---- */

typedef enum expo_severity {
    EXPO_SEV_ERROR = 0,
    EXPO_SEV_WARNING = 1,
} expo_severity_t;

typedef struct expo_problem {
    int line, col; /* 1-based; col 0 when the problem is about a whole family */
    expo_severity_t severity;
    const char *message; /* NUL-terminated, valid during the callback only */
} expo_problem_t;

typedef struct expo_check_stats {
    size_t families; /* distinct family names (TYPE/HELP'd or inferred from samples) */
    size_t series;   /* distinct label sets (name included) */
    size_t samples;  /* sample lines */
    size_t errors, warnings;
} expo_check_stats_t;

typedef struct expo_check_opts {
    expo_limits_t limits;
    bool lint; /* also report promtool's lint warnings (missing HELP, counter
                  without _total, ...) */
    /* Called for every sample that parsed (after the semantic checks) — lets
     * `check metrics --dump` print what was read. May be NULL. */
    void (*on_sample)(void *user, const expo_entry_t *e);
    void *on_sample_user;
} expo_check_opts_t;

/* Parses the whole input and reports syntax errors (the first one ends the
 * check, as in promtool), semantic errors (duplicate series, bad suffix for the
 * type, TYPE/HELP twice or after the family's samples, family split across the
 * input, labels not allowed for the type, non-cumulative buckets, _count not equal
 * to the +Inf bucket, le/quantile not a number, ...) and, with opts->lint, lint
 * warnings. Allocates per distinct series (it must remember them). Returns IM_OK
 * if no error was reported (warnings allowed), IM_EPARSE otherwise. */
im_rc expo_check(const char *buf, size_t len, expo_format_t f, const expo_check_opts_t *opts,
                 void (*report)(void *user, const expo_problem_t *pr), void *user,
                 expo_check_stats_t *stats);

/* ---- Writing ---- */

typedef struct expo_writer {
    im_buf_t *out; /* borrowed */
    expo_format_t format;
    im_rc rc; /* sticky error */
} expo_writer_t;

void expo_writer_init(expo_writer_t *w, im_buf_t *out, expo_format_t f);
/* # HELP name text (text escaped: \\ and \n; in OM also \"). */
im_rc expo_write_help(expo_writer_t *w, im_sv_t name, im_sv_t text);
im_rc expo_write_type(expo_writer_t *w, im_sv_t name, expo_type_t t);
/* OpenMetrics only (ignored, returning IM_OK, in text format). */
im_rc expo_write_unit(expo_writer_t *w, im_sv_t name, im_sv_t unit);
/* name{l1="v1",...} value [timestamp] [# {ex labels} value [ts]]. Label values
 * escaped (\\ \" \n). Timestamps: ms in text, seconds with up to 3 decimals in OM.
 * Exemplars are written in OM only. labels may be NULL when nlabels == 0. */
im_rc expo_write_sample(expo_writer_t *w, im_sv_t name, const expo_label_t *labels, size_t nlabels,
                        double v, bool has_ts, int64_t t_ms, const expo_exemplar_t *ex);
/* Same from a label set with __name__ (which gives the name). */
im_rc expo_write_sample_ls(expo_writer_t *w, const im_labels_t *ls, double v, bool has_ts,
                           int64_t t_ms);
/* "# EOF\n" in OM; nothing in text format. */
im_rc expo_write_eof(expo_writer_t *w);

#endif
