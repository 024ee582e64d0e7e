/* regex.h — the one regular-expression module: Go's RE2 syntax and semantics on PCRE2,
 * with a bounded cost per match. Used by label matchers (labels/matcher.c), relabelling
 * (scrape/relabel.c), templates (template/template.c: match, reReplaceAll) and
 * label_replace (promql/functions.c).
 *
 * Syntax. Prometheus compiles every regex with Go's regexp (RE2 syntax). PCRE2 accepts
 * a superset; im_regex_compile first rejects the PCRE2-only constructs with Go's error
 * texts (lookaround, atomic groups, comments, recursion and callouts, backreferences and
 * PCRE-only escapes such as \K \h \C \Z, possessive and nested quantifiers, repeat counts
 * over 1000), then rewrites the few escapes whose meaning differs (Go's \s is
 * [\t\n\f\r ], PCRE2's also holds \v; Go's \v is the character U+000B, PCRE2's a class;
 * Go's octal \0NN and \1NN..\7NN), then compiles in UTF mode with LF newlines, `$`
 * meaning end of text (as Go without (?m)), ASCII \d \w \b (as Go), Unicode classes
 * \pL \p{Greek}, (?i) (?m) (?s) (?U) flags, \A \z \Q..\E. `.` does not match \n unless
 * (?s), as Go's regexp and Prometheus 2.x. Every accepted pattern is therefore a true
 * regular expression (no backreference, no lookaround).
 *
 * Semantics. Matching is leftmost-first (Perl order), which is what RE2 and PCRE2's
 * backtracking matcher both give; captures are the same for the patterns we test
 * (tests/unit/labels/test_regex.c). Invalid UTF-8 in a subject never matches `.` or a
 * class in PCRE2 (Go reads each bad byte as U+FFFD); label values are UTF-8.
 *
 * Cost — why this is safe against ReDoS. Each match first runs PCRE2's JIT backtracking
 * matcher with a budget of `match_limit` backtracking steps (plus a depth and heap
 * limit for the interpreter when JIT is unavailable): a few milliseconds at the
 * default. A pattern that exhausts the budget (`(a|a)*b`, `(a+)+b`, `(.*a){20}` over
 * long values) falls back to pcre2_dfa_match, which runs all alternatives in parallel
 * over the subject once, with a bounded workspace (its cost is at most subject length
 * times the number of live states, and the workspace caps the states). For a yes/no
 * answer the DFA is exact: the set of strings a regex matches does not depend on
 * leftmost-first versus leftmost-longest. A match needing captures only asks the DFA
 * whether there is a match at all: if not, "no match" is exact; if so (or if the DFA
 * workspace overflows) the result is IM_ELIMIT "regex match limit exceeded", never a
 * silent non-match. So every call is bounded in time (budget + one DFA pass) and either
 * gives RE2's answer or an error naming --regex.match-limit.
 *
 * We chose this over a Thompson/Pike engine of our own: PCRE2 already gives Go's
 * syntax (after the check above), Unicode tables and case folding, JIT speed for the
 * common patterns; the fallback only has to be exact for yes/no, which the DFA is.
 *
 * Thread-safety. A compiled im_regex_t is immutable and may be used from any number of
 * threads at once. im_regex_set_limits is called once at start-up, before matching. */
#ifndef IM_LABELS_REGEX_H
#define IM_LABELS_REGEX_H

#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct im_regex im_regex_t;

typedef enum im_regex_mode {
    IM_REGEX_FULL,   /* the whole subject must match: ^(?:re)$ (matchers, relabel, label_replace) */
    IM_REGEX_SEARCH, /* find re anywhere (Go's MatchString, ReplaceAllString: templates) */
    IM_REGEX_FULL_DOTALL, /* FULL with `.` also matching \n (Prometheus 3's PromQL matchers) */
} im_regex_mode_t;

typedef struct im_regex_limits {
    uint32_t match_limit;    /* backtracking steps per match attempt before the DFA fallback */
    uint32_t heap_limit_kib; /* interpreter's backtracking heap (no JIT) */
} im_regex_limits_t;

#define IM_REGEX_DEFAULT_MATCH_LIMIT    1000000u
#define IM_REGEX_DEFAULT_HEAP_LIMIT_KIB 65536u

/* Sets the limits for every later match (process-wide; call at start-up). 0 = default. */
void im_regex_set_limits(const im_regex_limits_t *l);
im_regex_limits_t im_regex_get_limits(void);

/* Compiles pat (len bytes, not NUL-terminated). A syntax error is IM_EPARSE with Go's
 * text, "error parsing regexp: invalid or unsupported Perl syntax: `(?=`". *out is
 * owned by the caller (im_regex_free). */
im_rc im_regex_compile(const char *pat, size_t len, im_regex_mode_t mode, im_regex_t **out,
                       im_err_t *err);
void im_regex_free(im_regex_t *re);
/* The pattern as written (NUL-terminated, borrowed for re's lifetime). */
const char *im_regex_pattern(const im_regex_t *re, size_t *len);
/* Number of capture groups (not counting the whole match). */
uint32_t im_regex_groups(const im_regex_t *re);

/* Yes/no: 1 match, 0 no match, or IM_ELIMIT (err filled) when both the backtracking
 * budget and the DFA's workspace are exhausted. */
int im_regex_match(const im_regex_t *re, const char *s, size_t len, im_err_t *err);

/* Captures. ov must hold 2 * (im_regex_groups(re) + 1) entries; on a match ov[2g],
 * ov[2g+1] are group g's byte offsets or IM_REGEX_UNSET. The search starts at byte
 * `start` (IM_REGEX_SEARCH; FULL always matches from 0). Returns 1 match, 0 no match,
 * or IM_ELIMIT with err filled ("regex match limit exceeded ..."). */
#define IM_REGEX_UNSET SIZE_MAX
int im_regex_exec(const im_regex_t *re, const char *s, size_t len, size_t start, size_t *ov,
                  im_err_t *err);

/* Go's Regexp.Expand: appends tpl with $1, ${1}, $name, ${name} replaced by the
 * groups of the match in ov (from im_regex_exec on subj), $$ by $; an unknown or unset
 * group expands to nothing, a malformed $ stays literal. */
void im_regex_expand(const im_regex_t *re, const char *tpl, size_t tlen, const char *subj,
                     const size_t *ov, im_buf_t *out);

/* Go's syntax check alone, on re: wrapped in ^(?:...)$ with the raw text at
 * re[4..raw_end), or unwrapped with raw_end 0. false with Go's message in why. *raw_unexpected is
 * set for `b)x(`, fine inside the wrapper but rejected by Go, which also parses the raw text.
 * Exposed for tests. */
bool im_regex_re2_check(const char *re, size_t len, size_t raw_end, char *why, size_t cap,
                        bool *raw_unexpected);

#endif
