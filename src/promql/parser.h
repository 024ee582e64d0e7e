/* parser.h — PromQL text to a type-checked AST (ast.h), Prometheus 2.53 syntax.
 *
 * Contract.
 *  1. promql_parse reads exactly [text, text+len) (no NUL needed; NUL bytes
 *     inside are an error as any other unexpected character). On success *out is
 *     a new root that the caller frees with promql_expr_free, and IM_OK is
 *     returned. On failure *out is NULL, IM_EPARSE is returned (IM_ELIMIT for
 *     inputs past the limits below) and err, when given, is filled.
 *  2. Error text is Prometheus' word for word where we know it:
 *     err->msg is the whole sentence as Prometheus' API shows it after
 *     `invalid parameter "query": `, position included, e.g.
 *       1:14: parse error: unexpected "}" in label matching, expected string
 *     The position is line:column of the first error (1-based; column in bytes,
 *     as Prometheus counts it). err->offset holds the byte offset of that
 *     position; err->line and err->col are left 0 so that im_err_format prints
 *     the message unchanged. As Prometheus 2.x, only the first error is reported.
 *  3. Limits: queries longer than PROMQL_MAX_QUERY_BYTES and nesting deeper than
 *     PROMQL_MAX_DEPTH are refused (IM_ELIMIT; the message says which); the
 *     parser never recurses deeper than that, whatever the input.
 *  4. Regex matchers are compiled by labels/regex.h in Go's RE2 syntax; constructs
 *     that RE2 rejects and PCRE2 would accept (lookaround, backreferences,
 *     possessive quantifiers, atomic groups, \K, recursion, callouts...) are
 *     rejected with an error in RE2's words (see docs/promql.md, "Parser").
 *  5. Thread-safe: no global state besides the interning table. */
#ifndef IM_PROMQL_PARSER_H
#define IM_PROMQL_PARSER_H

#include "promql/ast.h"
#include "util/base.h"
#include "util/err.h"

#define PROMQL_MAX_QUERY_BYTES (1u << 20) /* 1 MiB */
#define PROMQL_MAX_DEPTH       1000

/* Parses at the process' default language level (ast.h, promql_lang_default). */
IM_NODISCARD im_rc promql_parse(const char *text, size_t len, promql_expr_t **out, im_err_t *err);
/* The same at level lang (NULL or compat 0: the default). Compat 3 compiles regex
 * matchers with `.` matching \n, knows the 3.x functions and refuses
 * holt_winters; its experimental functions need lang->experimental_functions
 * ("function \"x\" is not enabled"). */
IM_NODISCARD im_rc promql_parse_lang(const char *text, size_t len, const promql_lang_t *lang,
                                     promql_expr_t **out, im_err_t *err);

/* Parses a single metric selector (`foo{a="b"}`, `{job=~"x"}`) as the HTTP API's
 * match[] parameters need (Prometheus' ParseMetricSelector): anything else is an
 * error in Prometheus' words (`1:4: parse error: unexpected "("`). No type check:
 * `{}` parses to zero matchers, and the caller reports "match[] must contain at
 * least one non-empty matcher". On success *matchers is an im_malloc'd array
 * (name matcher last) the caller frees with promql_matchers_free. */
IM_NODISCARD im_rc promql_parse_metric_selector(const char *text, size_t len,
                                                im_matcher_t ***matchers, size_t *nmatchers,
                                                im_err_t *err);
void promql_matchers_free(im_matcher_t **matchers, size_t n);

/* Prometheus' `promtool`-style duration inside PromQL: "1h30m", "5m". Same rules
 * as the lexer's duration tokens. */
IM_NODISCARD im_rc promql_parse_duration(const char *s, size_t len, int64_t *out_ms, im_err_t *err);

#endif
