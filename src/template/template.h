/* template.h — the Go text/template subset Prometheus expands in alert labels and
 * annotations (contract of src/template/; the stages inside are described in
 * template_int.h). The engine depends only on util and labels: queries reach it
 * through the tmpl_query_fn callback its caller (rules/) supplies.
 *
 * Behaviour follows Prometheus 2.53's template package over Go's text/template:
 *  - the text is prefixed with Prometheus' four variable definitions ($labels,
 *    $externalLabels, $externalURL, $value), so error positions ("name:1:131")
 *    count them as Prometheus' do;
 *  - option missingkey=zero: a missing label prints as "";
 *  - actions: text, {{pipeline}}, comments, trim markers, if/else if/else/end,
 *    range (with $i, $e :=, else, break, continue), with/else, variables
 *    (:= and =), pipelines, parenthesised pipelines and field chains;
 *  - Go builtins: and or not len index slice print printf println eq ne lt le gt
 *    ge html js urlquery; Prometheus' functions: query first label value strvalue
 *    sortByLabel args reReplaceAll match safeHtml title toUpper toLower graphLink
 *    tableLink humanize humanize1024 humanizeDuration humanizePercentage
 *    humanizeTimestamp toTime toDuration parseDuration stripPort stripDomain
 *    externalURL pathPrefix; define, template and block.
 *  - printf implements Go's fmt verbs (%v %s %d %f %e %g %q %x %t %c %%, flags,
 *    width, precision, %!verb(type=value) for mismatches, MISSING and EXTRA).
 * An error never aborts the process: expand returns IM_EPARSE/IM_EEXEC with the
 * message Prometheus would give ("error parsing template X: template: X:1: ..."
 * or "error executing template X: template: X:1:120: executing ..."). Output and
 * work are bounded (TMPL_MAX_OUTPUT bytes, nesting depth, range iterations). */
#ifndef IM_TEMPLATE_TEMPLATE_H
#define IM_TEMPLATE_TEMPLATE_H

#include "labels/labels.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

#define TMPL_MAX_OUTPUT (1 << 20)

/* One sample of a query result. labels: a reference the receiver owns. */
typedef struct tmpl_sample {
    const im_labels_t *labels;
    double v;
} tmpl_sample_t;

/* Runs an instant query at the expansion time for the `query` template function.
 * On success *out is an im_malloc'd array of *n samples (labels references
 * included) that the template engine frees; a scalar result is one sample with
 * empty labels. On error returns non-zero and fills err (its message becomes
 * "error calling query: <msg>"). */
typedef im_rc (*tmpl_query_fn)(void *ctx, const char *q, size_t qlen, int64_t t_ms,
                               tmpl_sample_t **out, size_t *n, im_err_t *err);

typedef struct tmpl_data {
    const im_labels_t *labels;          /* borrowed; NULL = empty */
    const im_labels_t *external_labels; /* borrowed; NULL = empty */
    const char *external_url;           /* borrowed; NULL = "" */
    double value;
    int64_t t_ms;        /* evaluation time (for query) */
    tmpl_query_fn query; /* NULL: query fails with an error */
    void *query_ctx;
} tmpl_data_t;

/* Expands `text` as Prometheus expands an alert template named `name`
 * ("__alert_<alertname>"), appending the result to out. On error out holds
 * nothing new and err the message Prometheus would show after
 * "<error expanding template: ". */
im_rc tmpl_expand(const char *name, const char *text, size_t len, const tmpl_data_t *data,
                  im_buf_t *out, im_err_t *err);

/* As Prometheus does for an annotation/label value: expands, and on error writes
 * "<error expanding template: MSG>" instead. Returns the expansion's code. */
im_rc tmpl_expand_or_error(const char *name, const char *text, size_t len, const tmpl_data_t *data,
                           im_buf_t *out);

/* Parses only (promtool check rules' template test): IM_OK or IM_EPARSE with
 * "template: NAME:LINE: msg" in err. */
im_rc tmpl_check(const char *name, const char *text, size_t len, im_err_t *err);

/* Prometheus' number formatting helpers, exposed for reuse (API, UI, tests).
 * Each writes a NUL-terminated string into buf (cap >= 64) and returns its length. */
size_t tmpl_humanize(double v, char *buf, size_t cap);
size_t tmpl_humanize1024(double v, char *buf, size_t cap);
size_t tmpl_humanize_duration(double v, char *buf, size_t cap);
size_t tmpl_humanize_percentage(double v, char *buf, size_t cap);

#endif
