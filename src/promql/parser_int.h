/* parser_int.h — private to the PromQL parser files (lexer.c, parser.c, printer.c, ast.c).
 *
 * The lexer mirrors Prometheus' lexer state machine (token kinds, the bracket
 * and brace modes, its error texts) so that error messages come out the same.
 * Tokens are slices of the input: `pos`/`len` index the query text, valid as
 * long as the text. */
#ifndef IM_PROMQL_PARSER_INT_H
#define IM_PROMQL_PARSER_INT_H

#include "promql/ast.h"
#include "util/base.h"
#include "util/buf.h"

typedef enum promql_tok {
    PT_EOF = 0,
    PT_ERROR,
    PT_COMMENT,
    PT_IDENTIFIER,
    PT_METRIC_IDENTIFIER,
    PT_NUMBER,
    PT_STRING,
    PT_DURATION,
    PT_LEFT_PAREN,
    PT_RIGHT_PAREN,
    PT_LEFT_BRACE,
    PT_RIGHT_BRACE,
    PT_LEFT_BRACKET,
    PT_RIGHT_BRACKET,
    PT_COMMA,
    PT_EQL,
    PT_COLON,
    /* operators (Prometheus prints them as <op:x>) */
    PT_OPS_START,
    PT_ADD,
    PT_DIV,
    PT_EQLC,
    PT_EQL_REGEX,
    PT_GTE,
    PT_GTR,
    PT_LAND,
    PT_LOR,
    PT_LSS,
    PT_LTE,
    PT_LUNLESS,
    PT_MOD,
    PT_MUL,
    PT_NEQ,
    PT_NEQ_REGEX,
    PT_POW,
    PT_SUB,
    PT_AT,
    PT_ATAN2,
    PT_OPS_END,
    /* aggregators (<aggr:x>) */
    PT_AGGS_START,
    PT_AVG,
    PT_BOTTOMK,
    PT_COUNT,
    PT_COUNT_VALUES,
    PT_GROUP,
    PT_MAX,
    PT_MIN,
    PT_QUANTILE,
    PT_STDDEV,
    PT_STDVAR,
    PT_SUM,
    PT_TOPK,
    PT_LIMITK,      /* compat 3 only */
    PT_LIMIT_RATIO, /* compat 3 only */
    PT_AGGS_END,
    /* keywords (<x>) */
    PT_KEYWORDS_START,
    PT_BOOL,
    PT_BY,
    PT_GROUP_LEFT,
    PT_GROUP_RIGHT,
    PT_IGNORING,
    PT_OFFSET,
    PT_ON,
    PT_WITHOUT,
    PT_KEYWORDS_END,
    /* preprocessors (printed quoted) */
    PT_START,
    PT_END,
} promql_tok_t;

#define PROMQL_LEX_MSG_MAX 256

typedef struct promql_token {
    promql_tok_t type;
    uint32_t pos; /* byte offset of the first byte */
    uint32_t len; /* bytes */
} promql_token_t; /* small on purpose: the parser copies tokens on deep recursions */

typedef struct promql_lexer {
    const char *in; /* borrowed query text */
    size_t n;
    size_t pos;   /* next byte to read */
    size_t start; /* start of the token being scanned */
    size_t width; /* width of the last rune read (0 at end) */
    int paren_depth;
    bool brace_open;
    bool bracket_open;
    bool got_colon;
    bool want_duration; /* just after '[': the next token is a duration */
    bool dur_expr;      /* Prometheus 3: numbers and names inside brackets (duration
                           expressions); set by the parser after promql__lex_init */
    bool done;          /* an error or EOF was returned */
    uint32_t string_open;
    char err[PROMQL_LEX_MSG_MAX]; /* after a PT_ERROR: the sentence, as Prometheus words it */
} promql_lexer_t;

void promql__lex_init(promql_lexer_t *lx, const char *in, size_t n);
/* Next token, comments included. After PT_EOF or PT_ERROR, always PT_EOF. */
void promql__lex_next(promql_lexer_t *lx, promql_token_t *t);

/* Describes a token as Prometheus' error texts do: `"}"`, `<op:+>`, `<by>`,
 * `identifier "foo"`, `end of input`, ... Appends to out (capped buffer). */
void promql__tok_desc(const char *in, const promql_token_t *t, im_buf_t *out);

/* Go's strconv.Quote (%q) of a byte string, appended to out. */
im_rc promql__go_quote(im_buf_t *out, const char *s, size_t len);

/* Decodes one UTF-8 rune as Go's utf8.DecodeRune: invalid input gives U+FFFD
 * with width 1; at the end width 0 and rune -1. */
int32_t promql__decode_rune(const char *s, size_t n, size_t *width);

/* Unescapes a STRING token's text (quotes included) that the lexer accepted.
 * Returns an arena copy (NUL-terminated) and its length. */
char *promql__unquote(im_arena_t *a, const char *s, size_t len, size_t *out_len);

/* Ownership bookkeeping of a parse: the arena and what must be released. */
struct promql_expr_owner {
    im_arena_t arena;
    im_matcher_t **matchers; /* im_malloc'd array of owned matchers */
    size_t nmatchers, cap_matchers;
    const im_istr_t **istrs; /* im_malloc'd array of owned interned references */
    size_t nistrs, cap_istrs;
};

promql_expr_owner_t *promql__owner_new(void);
void promql__owner_free(promql_expr_owner_t *o);
void promql__owner_add_matcher(promql_expr_owner_t *o, im_matcher_t *m);
void promql__owner_add_istr(promql_expr_owner_t *o, const im_istr_t *s);

#endif
