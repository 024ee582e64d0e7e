/* lexer.c — PromQL tokens, string escapes, durations, Go-style quoting.
 *
 * A pull lexer that follows Prometheus 2.x's lexer state by state (outside and
 * inside braces, the duration right after '[', the colon of a subquery, paren
 * and bracket bookkeeping) so that every lexical error carries Prometheus' text
 * and position (the start of the offending token). It never allocates; tokens
 * are slices of the input. Also here: the duration parser with model.Duration's
 * rules and limits, unescaping of accepted strings, and Go's %q quoting used in
 * error messages and by the printer. */
#include "util/base.h"

#include <stdarg.h>
#include <stdio.h>

#include "promql/parser.h"
#include "promql/parser_int.h"

#define RUNE_EOF   (-1)
#define RUNE_ERROR 0xFFFD

/* ---- UTF-8 ---- */

int32_t promql__decode_rune(const char *str, size_t n, size_t *width)
{
    const unsigned char *s = (const unsigned char *)str;
    if (n == 0) {
        *width = 0;
        return RUNE_EOF;
    }
    unsigned c = s[0];
    if (c < 0x80) {
        *width = 1;
        return (int32_t)c;
    }
    *width = 1;
    if (c < 0xC2 || c > 0xF4) return RUNE_ERROR;
    if (c < 0xE0) {
        if (n < 2 || (s[1] & 0xC0) != 0x80) return RUNE_ERROR;
        *width = 2;
        return (int32_t)(((c & 0x1F) << 6) | (s[1] & 0x3F));
    }
    if (c < 0xF0) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return RUNE_ERROR;
        if (c == 0xE0 && s[1] < 0xA0) return RUNE_ERROR; /* overlong */
        if (c == 0xED && s[1] > 0x9F) return RUNE_ERROR; /* surrogate */
        *width = 3;
        return (int32_t)(((c & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F));
    }
    if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
        return RUNE_ERROR;
    if (c == 0xF0 && s[1] < 0x90) return RUNE_ERROR;
    if (c == 0xF4 && s[1] > 0x8F) return RUNE_ERROR;
    *width = 4;
    return (int32_t)(((c & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) |
                     (s[3] & 0x3F));
}

static size_t encode_rune(uint32_t r, char *out)
{
    if (r < 0x80) {
        out[0] = (char)r;
        return 1;
    }
    if (r < 0x800) {
        out[0] = (char)(0xC0 | (r >> 6));
        out[1] = (char)(0x80 | (r & 0x3F));
        return 2;
    }
    if (r < 0x10000) {
        out[0] = (char)(0xE0 | (r >> 12));
        out[1] = (char)(0x80 | ((r >> 6) & 0x3F));
        out[2] = (char)(0x80 | (r & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (r >> 18));
    out[1] = (char)(0x80 | ((r >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((r >> 6) & 0x3F));
    out[3] = (char)(0x80 | (r & 0x3F));
    return 4;
}

/* Approximation of Go's unicode.IsPrint for the runes we meet: ASCII exact;
 * C1 controls, soft hyphen, line/paragraph separators, noncharacters and
 * U+FFFD (which Prometheus' lexer rejects inside strings) count as not printable. */
static bool rune_printable(int32_t r)
{
    if (r < 0x20 || r == 0x7F) return false;
    if (r < 0x7F) return true;
    if (r >= 0x80 && r < 0xA0) return false;
    if (r == 0xAD || r == 0x2028 || r == 0x2029 || r == 0xFEFF) return false;
    if (r >= 0x200B && r <= 0x200F) return false;
    if (r >= 0x202A && r <= 0x202E) return false;
    if (r >= 0x2060 && r <= 0x206F) return false;
    if (r >= 0xE000 && r <= 0xF8FF) return false; /* private use */
    if (r >= 0xFFF9 && r < 0x10000) return false;
    /* planes 1 and 2 are mostly assigned, plane 3 up to CJK extension G; the
     * rest is unassigned or private use, which Go escapes */
    if (r >= 0x10000) return (r & 0xFFFE) != 0xFFFE && (r < 0x30000 || r <= 0x3134A);
    if (r >= 0xFDD0 && r <= 0xFDEF) return false;
    return true;
}

static im_rc quote_rune_body(im_buf_t *out, int32_t r, bool is_byte, unsigned char byte, char quote)
{
    if (is_byte) return im_buf_printf(out, "\\x%02x", byte);
    if (r == quote || r == '\\') {
        im_rc rc = im_buf_putc(out, '\\');
        return rc ? rc : im_buf_putc(out, (char)r);
    }
    if (rune_printable(r)) {
        char tmp[4];
        size_t n = encode_rune((uint32_t)r, tmp);
        return im_buf_append(out, tmp, n);
    }
    switch (r) {
    case '\a': return im_buf_puts(out, "\\a");
    case '\b': return im_buf_puts(out, "\\b");
    case '\f': return im_buf_puts(out, "\\f");
    case '\n': return im_buf_puts(out, "\\n");
    case '\r': return im_buf_puts(out, "\\r");
    case '\t': return im_buf_puts(out, "\\t");
    case '\v': return im_buf_puts(out, "\\v");
    default: break;
    }
    if (r < 0x20 || r == 0x7F) return im_buf_printf(out, "\\x%02x", (unsigned)r);
    if (r < 0x10000) return im_buf_printf(out, "\\u%04x", (unsigned)r);
    return im_buf_printf(out, "\\U%08x", (unsigned)r);
}

im_rc promql__go_quote(im_buf_t *out, const char *s, size_t len)
{
    im_rc rc = im_buf_putc(out, '"');
    size_t i = 0;
    while (i < len && rc == IM_OK) {
        size_t w;
        int32_t r = promql__decode_rune(s + i, len - i, &w);
        bool bad = (r == RUNE_ERROR && w == 1);
        rc = quote_rune_body(out, r, bad, (unsigned char)s[i], '"');
        i += w;
    }
    if (rc == IM_OK) rc = im_buf_putc(out, '"');
    return rc;
}

/* Go's %q of a rune ('x', '\n', '\u00a0'); invalid runes print as U+FFFD. */
static void quote_rune(char *buf, size_t cap, int32_t r)
{
    im_buf_t b;
    im_buf_init(&b, 64);
    if (r < 0 || r > 0x10FFFF || (r >= 0xD800 && r < 0xE000)) r = RUNE_ERROR;
    (void)im_buf_putc(&b, '\'');
    if (r == RUNE_ERROR) {
        (void)im_buf_puts(&b, "\xEF\xBF\xBD");
    } else {
        (void)quote_rune_body(&b, r, false, 0, '\'');
    }
    (void)im_buf_putc(&b, '\'');
    snprintf(buf, cap, "%s", b.data ? b.data : "");
    im_buf_free(&b);
}

/* Go's %#U: U+0041 'A' (the quoted char only when printable). */
static void sharp_u(char *buf, size_t cap, int32_t r)
{
    if (r < 0) r = RUNE_ERROR;
    if (rune_printable(r) || r == RUNE_ERROR) {
        char tmp[5] = {0};
        encode_rune((uint32_t)r, tmp);
        snprintf(buf, cap, "U+%04X '%s'", (unsigned)r, tmp);
    } else {
        snprintf(buf, cap, "U+%04X", (unsigned)r);
    }
}

/* ---- Lexer ---- */

void promql__lex_init(promql_lexer_t *lx, const char *in, size_t n)
{
    memset(lx, 0, sizeof *lx);
    lx->in = in;
    lx->n = n;
}

static int32_t next_rune(promql_lexer_t *lx)
{
    int32_t r = promql__decode_rune(lx->in + lx->pos, lx->n - lx->pos, &lx->width);
    lx->pos += lx->width;
    return r;
}

static void backup(promql_lexer_t *lx)
{
    lx->pos -= lx->width;
    lx->width = 0;
}

static int32_t peek_rune(promql_lexer_t *lx)
{
    size_t w;
    return promql__decode_rune(lx->in + lx->pos, lx->n - lx->pos, &w);
}

static bool is_space(int32_t r)
{
    return r == ' ' || r == '\t' || r == '\n' || r == '\r';
}
static bool is_digit(int32_t r)
{
    return r >= '0' && r <= '9';
}
static bool is_alpha(int32_t r)
{
    return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z');
}
static bool is_alnum(int32_t r)
{
    return is_alpha(r) || is_digit(r);
}

static bool accept(promql_lexer_t *lx, const char *valid)
{
    int32_t r = next_rune(lx);
    if (r > 0 && r < 0x80 && strchr(valid, (int)r)) return true;
    backup(lx);
    return false;
}

static void accept_run(promql_lexer_t *lx, const char *valid)
{
    while (accept(lx, valid)) {
    }
}

static void emit(promql_lexer_t *lx, promql_token_t *t, promql_tok_t type)
{
    t->type = type;
    t->pos = (uint32_t)lx->start;
    t->len = (uint32_t)(lx->pos - lx->start);
    lx->start = lx->pos;
}

/* A two-rune operator (the first rune taken, then '=') as eq, else the one-rune one. */
static void emit_or_eq(promql_lexer_t *lx, promql_token_t *t, promql_tok_t eq, promql_tok_t one)
{
    if (peek_rune(lx) == '=') {
        next_rune(lx);
        emit(lx, t, eq);
    } else {
        emit(lx, t, one);
    }
}

static void errorf(promql_lexer_t *lx, promql_token_t *t, const char *fmt, ...) IM_PRINTF(3, 4);
static void errorf(promql_lexer_t *lx, promql_token_t *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lx->err, sizeof lx->err, fmt, ap);
    va_end(ap);
    t->type = PT_ERROR;
    t->pos = (uint32_t)lx->start;
    t->len = 0;
    lx->done = true;
}

/* Prometheus' scanNumber: true when a complete number was scanned (the next
 * rune is not alphanumeric). */
static bool scan_number(promql_lexer_t *lx)
{
    const char *digits = "0123456789";
    if (accept(lx, "0") && accept(lx, "xX")) digits = "0123456789abcdefABCDEF";
    accept_run(lx, digits);
    if (accept(lx, ".")) accept_run(lx, digits);
    if (accept(lx, "eE")) {
        accept(lx, "+-");
        accept_run(lx, "0123456789");
    }
    return !is_alnum(peek_rune(lx));
}

static bool accept_remaining_duration(promql_lexer_t *lx)
{
    if (!accept(lx, "smhdwy")) return false;
    accept(lx, "s");
    while (accept(lx, "0123456789")) {
        while (accept(lx, "0123456789")) {
        }
        if (!accept(lx, "smhdw")) return false;
        accept(lx, "s");
    }
    return !is_alnum(next_rune(lx));
}

static void lex_number_or_duration(promql_lexer_t *lx, promql_token_t *t)
{
    if (scan_number(lx)) {
        emit(lx, t, PT_NUMBER);
        return;
    }
    if (accept_remaining_duration(lx)) {
        backup(lx);
        emit(lx, t, PT_DURATION);
        return;
    }
    /* the quoted text is the input scanned so far */
    im_buf_t b;
    im_buf_init(&b, PROMQL_LEX_MSG_MAX - 40);
    (void)promql__go_quote(&b, lx->in + lx->start, lx->pos - lx->start);
    errorf(lx, t, "bad number or duration syntax: %s", b.data ? b.data : "\"\"");
    im_buf_free(&b);
}

static void lex_duration(promql_lexer_t *lx, promql_token_t *t)
{
    if (scan_number(lx)) {
        errorf(lx, t, "missing unit character in duration");
        return;
    }
    if (!accept_remaining_duration(lx)) {
        im_buf_t b;
        im_buf_init(&b, PROMQL_LEX_MSG_MAX - 40);
        (void)promql__go_quote(&b, lx->in + lx->start, lx->pos - lx->start);
        errorf(lx, t, "bad duration syntax: %s", b.data ? b.data : "\"\"");
        im_buf_free(&b);
        return;
    }
    backup(lx);
    emit(lx, t, PT_DURATION);
}

static int digit_val(int32_t r)
{
    if (r >= '0' && r <= '9') return r - '0';
    if (r >= 'a' && r <= 'f') return r - 'a' + 10;
    if (r >= 'A' && r <= 'F') return r - 'A' + 10;
    return 16;
}

/* After a backslash. Returns false (with the error set) on a bad escape. */
static bool lex_escape(promql_lexer_t *lx, promql_token_t *t)
{
    int n;
    uint32_t base, max;
    int32_t ch = next_rune(lx);
    char u[32];
    switch (ch) {
    case 'a':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
    case 'v':
    case '\\': return true;
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7': n = 3, base = 8, max = 255; break;
    /* \xHH, \uHHHH, \UHHHHHHHH: the digits follow the letter */
    case 'x': n = 2, base = 16, max = 255, ch = next_rune(lx); break;
    case 'u': n = 4, base = 16, max = 0x10FFFF, ch = next_rune(lx); break;
    case 'U': n = 8, base = 16, max = 0x10FFFF, ch = next_rune(lx); break;
    case RUNE_EOF: errorf(lx, t, "escape sequence not terminated"); return false;
    default:
        if ((uint32_t)ch == lx->string_open) return true;
        sharp_u(u, sizeof u, ch);
        errorf(lx, t, "unknown escape sequence %s", u);
        return false;
    }
    uint32_t x = 0;
    while (n > 0) {
        uint32_t d = (uint32_t)digit_val(ch);
        if (d >= base) {
            if (ch == RUNE_EOF) {
                errorf(lx, t, "escape sequence not terminated");
                return false;
            }
            sharp_u(u, sizeof u, ch);
            errorf(lx, t, "illegal character %s in escape sequence", u);
            return false;
        }
        x = x * base + d;
        n--;
        if (n > 0) ch = next_rune(lx);
    }
    if (x > max || (x >= 0xD800 && x < 0xE000)) {
        errorf(lx, t, "escape sequence is an invalid Unicode code point");
        return false;
    }
    return true;
}

/* A string up to the rune that opened it (quote, taken): a quoted one with
 * escapes on one line, or a raw one (backquotes) as it stands. */
static void lex_string(promql_lexer_t *lx, promql_token_t *t, int32_t quote)
{
    bool raw = quote == '`';
    lx->string_open = (uint32_t)quote;
    for (;;) {
        int32_t r = next_rune(lx);
        if (r == '\\' && !raw) {
            if (!lex_escape(lx, t)) return;
        } else if (r == RUNE_ERROR) {
            errorf(lx, t, "invalid UTF-8 rune");
            return;
        } else if (r == RUNE_EOF || (r == '\n' && !raw)) {
            errorf(lx, t, raw ? "unterminated raw string" : "unterminated quoted string");
            return;
        } else if ((uint32_t)r == lx->string_open) {
            break;
        }
    }
    emit(lx, t, PT_STRING);
}

static void lex_comment(promql_lexer_t *lx, promql_token_t *t)
{
    lx->pos++; /* '#' */
    for (;;) {
        int32_t r = next_rune(lx);
        if (r == RUNE_EOF || r == '\n' || r == '\r') break;
    }
    backup(lx);
    emit(lx, t, PT_COMMENT);
}

#define KW(w, t)                                                                                   \
    {                                                                                              \
        w, sizeof(w) - 1, t                                                                        \
    }
static const struct {
    const char *word;
    size_t len;
    promql_tok_t type;
} keywords[] = {
    KW("and", PT_LAND),
    KW("or", PT_LOR),
    KW("unless", PT_LUNLESS),
    KW("atan2", PT_ATAN2),
    KW("sum", PT_SUM),
    KW("avg", PT_AVG),
    KW("count", PT_COUNT),
    KW("min", PT_MIN),
    KW("max", PT_MAX),
    KW("group", PT_GROUP),
    KW("stddev", PT_STDDEV),
    KW("stdvar", PT_STDVAR),
    KW("topk", PT_TOPK),
    KW("bottomk", PT_BOTTOMK),
    KW("count_values", PT_COUNT_VALUES),
    KW("quantile", PT_QUANTILE),
    KW("offset", PT_OFFSET),
    KW("by", PT_BY),
    KW("without", PT_WITHOUT),
    KW("on", PT_ON),
    KW("ignoring", PT_IGNORING),
    KW("group_left", PT_GROUP_LEFT),
    KW("group_right", PT_GROUP_RIGHT),
    KW("bool", PT_BOOL),
    KW("start", PT_START),
    KW("end", PT_END),
    KW("inf", PT_NUMBER),
    KW("nan", PT_NUMBER),
};

static void lex_keyword_or_identifier(promql_lexer_t *lx, promql_token_t *t)
{
    bool colon = false;
    for (;;) {
        int32_t r = next_rune(lx);
        if (is_alnum(r) || r == ':') {
            if (r == ':') colon = true;
            continue;
        }
        backup(lx);
        break;
    }
    size_t wl = lx->pos - lx->start;
    const char *w = lx->in + lx->start;
    for (size_t i = 0; i < IM_ARRAY_LEN(keywords); i++) {
        if (keywords[i].len == wl && strncasecmp(keywords[i].word, w, wl) == 0) {
            emit(lx, t, keywords[i].type);
            return;
        }
    }
    /* Prometheus 3's limitk and limit_ratio (not keywords at compat 2) */
    if (lx->dur_expr && wl == 6 && strncasecmp(w, "limitk", 6) == 0) {
        emit(lx, t, PT_LIMITK);
        return;
    }
    if (lx->dur_expr && wl == 11 && strncasecmp(w, "limit_ratio", 11) == 0) {
        emit(lx, t, PT_LIMIT_RATIO);
        return;
    }
    emit(lx, t, colon ? PT_METRIC_IDENTIFIER : PT_IDENTIFIER);
}

/* Starts the next token at lx->pos: true when it is a comment (emitted
 * whole), else *r is its first rune, taken. */
static bool start_token(promql_lexer_t *lx, promql_token_t *t, int32_t *r)
{
    lx->start = lx->pos;
    if (lx->pos < lx->n && lx->in[lx->pos] == '#') {
        lex_comment(lx, t);
        return true;
    }
    *r = next_rune(lx);
    return false;
}

static void lex_inside_braces(promql_lexer_t *lx, promql_token_t *t)
{
    char q[32];
    for (;;) {
        int32_t r;
        if (start_token(lx, t, &r)) return;
        if (r == RUNE_EOF) {
            errorf(lx, t, "unexpected end of input inside braces");
            return;
        }
        if (is_space(r)) continue;
        if (is_alpha(r)) {
            while (is_alnum(next_rune(lx))) {
            }
            backup(lx);
            emit(lx, t, PT_IDENTIFIER);
            return;
        }
        switch (r) {
        case ',': emit(lx, t, PT_COMMA); return;
        case '"':
        case '\'':
        case '`': lex_string(lx, t, r); return;
        case '=':
            if (next_rune(lx) == '~') {
                emit(lx, t, PT_EQL_REGEX);
                return;
            }
            backup(lx);
            emit(lx, t, PT_EQL);
            return;
        case '!': {
            int32_t nr = next_rune(lx);
            if (nr == '~') {
                emit(lx, t, PT_NEQ_REGEX);
                return;
            }
            if (nr == '=') {
                emit(lx, t, PT_NEQ);
                return;
            }
            quote_rune(q, sizeof q, nr);
            errorf(lx, t, "unexpected character after '!' inside braces: %s", q);
            return;
        }
        case '{':
            quote_rune(q, sizeof q, r);
            errorf(lx, t, "unexpected left brace %s", q);
            return;
        case '}':
            emit(lx, t, PT_RIGHT_BRACE);
            lx->brace_open = false;
            return;
        default:
            quote_rune(q, sizeof q, r);
            errorf(lx, t, "unexpected character inside braces: %s", q);
            return;
        }
    }
}

void promql__lex_next(promql_lexer_t *lx, promql_token_t *t)
{
    char q[32];
    if (lx->done) {
        lx->start = lx->pos;
        emit(lx, t, PT_EOF);
        return;
    }
    if (lx->want_duration) {
        lx->want_duration = false;
        if (!lx->dur_expr) {
            lx->start = lx->pos;
            lex_duration(lx, t);
            return;
        }
    }
    if (lx->brace_open) {
        lex_inside_braces(lx, t);
        return;
    }
    for (;;) {
        int32_t r;
        if (start_token(lx, t, &r)) return;
        if (r == RUNE_EOF) {
            if (lx->paren_depth != 0) {
                errorf(lx, t, "unclosed left parenthesis");
                return;
            }
            if (lx->bracket_open) {
                errorf(lx, t, "unclosed left bracket");
                return;
            }
            emit(lx, t, PT_EOF);
            lx->done = true;
            return;
        }
        if (is_space(r)) continue;
        if (is_digit(r) || (r == '.' && is_digit(peek_rune(lx)))) {
            backup(lx);
            lex_number_or_duration(lx, t);
            return;
        }
        if (is_alpha(r) || r == ':') {
            if (!lx->bracket_open || (lx->dur_expr && r != ':')) {
                backup(lx);
                lex_keyword_or_identifier(lx, t);
                return;
            }
            if (lx->got_colon) {
                quote_rune(q, sizeof q, r);
                errorf(lx, t, "unexpected colon %s", q);
                return;
            }
            emit(lx, t, PT_COLON);
            lx->got_colon = true;
            return;
        }
        switch (r) {
        case ',': emit(lx, t, PT_COMMA); return;
        case '*': emit(lx, t, PT_MUL); return;
        case '/': emit(lx, t, PT_DIV); return;
        case '%': emit(lx, t, PT_MOD); return;
        case '+': emit(lx, t, PT_ADD); return;
        case '-': emit(lx, t, PT_SUB); return;
        case '^': emit(lx, t, PT_POW); return;
        case '@': emit(lx, t, PT_AT); return;
        case '=': {
            int32_t n = peek_rune(lx);
            if (n == '~') {
                quote_rune(q, sizeof q, n);
                errorf(lx, t, "unexpected character after '=': %s", q);
            } else {
                emit_or_eq(lx, t, PT_EQLC, PT_EQL);
            }
            return;
        }
        case '!': {
            int32_t n = next_rune(lx);
            if (n != '=') {
                quote_rune(q, sizeof q, n);
                errorf(lx, t, "unexpected character after '!': %s", q);
                return;
            }
            emit(lx, t, PT_NEQ);
            return;
        }
        case '<': emit_or_eq(lx, t, PT_LTE, PT_LSS); return;
        case '>': emit_or_eq(lx, t, PT_GTE, PT_GTR); return;
        case '"':
        case '\'':
        case '`': lex_string(lx, t, r); return;
        case '(':
            emit(lx, t, PT_LEFT_PAREN);
            lx->paren_depth++;
            return;
        case ')':
            emit(lx, t, PT_RIGHT_PAREN);
            lx->paren_depth--;
            if (lx->paren_depth < 0) {
                quote_rune(q, sizeof q, r);
                errorf(lx, t, "unexpected right parenthesis %s", q);
            }
            return;
        case '{':
            emit(lx, t, PT_LEFT_BRACE);
            lx->brace_open = true;
            return;
        case '[':
            if (lx->bracket_open) {
                quote_rune(q, sizeof q, r);
                errorf(lx, t, "unexpected left bracket %s", q);
                return;
            }
            lx->got_colon = false;
            emit(lx, t, PT_LEFT_BRACKET);
            while (is_space(peek_rune(lx))) next_rune(lx);
            lx->start = lx->pos;
            lx->bracket_open = true;
            lx->want_duration = true;
            return;
        case ']':
            if (!lx->bracket_open) {
                quote_rune(q, sizeof q, r);
                errorf(lx, t, "unexpected right bracket %s", q);
                return;
            }
            emit(lx, t, PT_RIGHT_BRACKET);
            lx->bracket_open = false;
            return;
        default:
            quote_rune(q, sizeof q, r);
            errorf(lx, t, "unexpected character: %s", q);
            return;
        }
    }
}

/* ---- Token descriptions for error messages ---- */

void promql__tok_desc(const char *in, const promql_token_t *t, im_buf_t *out)
{
    const char *v = in + t->pos;
    size_t vl = t->len;
    if (t->type == PT_EOF) {
        (void)im_buf_puts(out, "end of input");
        return;
    }
    if (t->type == PT_AT) {
        /* Prometheus 2.42 has no display string for AT and prints its token number */
        (void)im_buf_puts(out, "\"<Item 57385>\" <op:@>");
        return;
    }
    if (t->type > PT_OPS_START && t->type < PT_OPS_END) {
        (void)im_buf_printf(out, "<op:%.*s>", (int)vl, v);
        return;
    }
    if (t->type > PT_AGGS_START && t->type < PT_AGGS_END) {
        (void)im_buf_printf(out, "<aggr:%.*s>", (int)vl, v);
        return;
    }
    if (t->type > PT_KEYWORDS_START && t->type < PT_KEYWORDS_END) {
        (void)im_buf_printf(out, "<%.*s>", (int)vl, v);
        return;
    }
    const char *kind = NULL;
    switch (t->type) {
    case PT_IDENTIFIER: kind = "identifier"; break;
    case PT_METRIC_IDENTIFIER: kind = "metric identifier"; break;
    case PT_STRING: kind = "string"; break;
    case PT_NUMBER: kind = "number"; break;
    case PT_DURATION: kind = "duration"; break;
    case PT_ERROR: kind = "error"; break;
    case PT_COMMENT: kind = "comment"; break;
    default: break;
    }
    if (kind) {
        (void)im_buf_puts(out, kind);
        (void)im_buf_putc(out, ' ');
    }
    /* Go's %q, or %.10q... when longer than 10 bytes (identifiers and metric
     * identifiers are never truncated). */
    if (vl > 10 && t->type != PT_IDENTIFIER && t->type != PT_METRIC_IDENTIFIER) {
        size_t cut = 0, runes = 0;
        while (cut < vl && runes < 10) {
            size_t w;
            promql__decode_rune(v + cut, vl - cut, &w);
            cut += w;
            runes++;
        }
        (void)promql__go_quote(out, v, cut);
        (void)im_buf_puts(out, "...");
        return;
    }
    (void)promql__go_quote(out, v, vl);
}

/* ---- Strings ---- */

char *promql__unquote(im_arena_t *a, const char *s, size_t len, size_t *out_len)
{
    char *o = im_arena_alloc(a, len + 1);
    if (!o) return NULL;
    size_t n = 0;
    if (len < 2) {
        o[0] = 0;
        *out_len = 0;
        return o;
    }
    char quote = s[0];
    const char *p = s + 1, *end = s + len - 1;
    if (quote == '`') {
        memcpy(o, p, (size_t)(end - p));
        n = (size_t)(end - p);
        o[n] = 0;
        *out_len = n;
        return o;
    }
    while (p < end) {
        if (*p != '\\') {
            o[n++] = *p++;
            continue;
        }
        p++;
        char c = *p++;
        switch (c) {
        case 'a': o[n++] = '\a'; break;
        case 'b': o[n++] = '\b'; break;
        case 'f': o[n++] = '\f'; break;
        case 'n': o[n++] = '\n'; break;
        case 'r': o[n++] = '\r'; break;
        case 't': o[n++] = '\t'; break;
        case 'v': o[n++] = '\v'; break;
        case 'x':
        case 'u':
        case 'U': {
            int k = c == 'x' ? 2 : c == 'u' ? 4 : 8;
            uint32_t x = 0;
            for (int i = 0; i < k && p < end; i++) x = x * 16 + (uint32_t)digit_val(*p++);
            if (c == 'x')
                o[n++] = (char)x;
            else
                n += encode_rune(x, o + n);
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                uint32_t x = (uint32_t)(c - '0');
                for (int i = 0; i < 2 && p < end; i++) x = x * 8 + (uint32_t)(*p++ - '0');
                o[n++] = (char)x;
            } else {
                o[n++] = c; /* \\ and the quote */
            }
        }
    }
    o[n] = 0;
    *out_len = n;
    return o;
}

/* ---- Durations (model.ParseDuration, ns arithmetic and its limits) ---- */

im_rc promql_parse_duration(const char *s, size_t len, int64_t *out_ms, im_err_t *err)
{
    static const struct {
        const char *u;
        int64_t ms;
    } units[] = {{"y", 365LL * 86400000},
                 {"w", 7LL * 86400000},
                 {"d", 86400000},
                 {"h", 3600000},
                 {"m", 60000},
                 {"s", 1000},
                 {"ms", 1}};
    if (len == 1 && s[0] == '0') {
        *out_ms = 0;
        return IM_OK;
    }
    if (len == 0) return im_err_set(err, IM_EPARSE, "empty duration string");
    size_t i = 0, next = 0;
    uint64_t dur_ns = 0;
    bool overflow = false;
    while (i < len) {
        size_t ds = i;
        while (i < len && s[i] >= '0' && s[i] <= '9') i++;
        if (i == ds) goto bad;
        size_t us = i;
        while (i < len && s[i] >= 'a' && s[i] <= 'z') i++;
        size_t ul = i - us;
        size_t u;
        for (u = next; u < IM_ARRAY_LEN(units); u++)
            if (strlen(units[u].u) == ul && memcmp(units[u].u, s + us, ul) == 0) break;
        if (u == IM_ARRAY_LEN(units)) goto bad;
        next = u + 1;
        /* strconv.Atoi saturates on overflow */
        uint64_t nv = 0;
        bool big = false;
        for (size_t k = ds; k < us; k++) {
            if (nv > (UINT64_MAX - 9) / 10) big = true;
            nv = big ? nv : nv * 10 + (uint64_t)(s[k] - '0');
        }
        if (big || nv > (uint64_t)INT64_MAX) nv = (uint64_t)INT64_MAX;
        int64_t limit = INT64_MAX / units[u].ms / 1000000;
        if (nv > (uint64_t)limit) {
            overflow = true;
            continue;
        }
        dur_ns += nv * 1000000ULL * (uint64_t)units[u].ms;
        if ((int64_t)dur_ns < 0) overflow = true;
    }
    if (overflow) return im_err_set(err, IM_EPARSE, "duration out of range");
    *out_ms = (int64_t)(dur_ns / 1000000ULL);
    return IM_OK;
bad : {
    im_buf_t b;
    im_buf_init(&b, 400);
    (void)promql__go_quote(&b, s, len);
    im_err_set(err, IM_EPARSE, "not a valid duration string: %s", b.data ? b.data : "\"\"");
    im_buf_free(&b);
    return IM_EPARSE;
}
}
