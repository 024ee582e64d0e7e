/* lex.c — the lexer of the template engine (Go's text/template/parse/lex.go):
 * turns the whole text into tokens at once — text, delimiters (with their trim
 * markers), spaces, identifiers and keywords, fields, variables, literals — and
 * drops comments. An error becomes the last token (T_ERROR) with Go's message, so
 * the parser reports it where Go would. Tokens point into the text. */
#include "util/base.h"

#include <stdarg.h>
#include <stdio.h>

#include "template/template_int.h"

typedef struct lexer {
    const char *s;
    size_t n, pos, start;
    int line, start_line;
    int paren;
    tok_t *toks;
    size_t ntoks, cap;
    im_arena_t *arena;
    bool done;
} lexer_t;

static void emit_tok(lexer_t *l, tok_type_t t)
{
    if (l->ntoks == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        l->toks = im_realloc(l->toks, nc * sizeof *l->toks);
        l->cap = nc;
    }
    l->toks[l->ntoks++] = (tok_t){t, l->start, l->pos - l->start, l->start_line, NULL};
    for (size_t i = l->start; i < l->pos; i++)
        if (l->s[i] == '\n') l->line++;
    l->start = l->pos;
    l->start_line = l->line;
    if (l->ntoks >= TMPL_MAX_TOKENS) l->done = true;
}

static void lex_error(lexer_t *l, const char *fmt, ...) IM_PRINTF(2, 3);
static void lex_error(lexer_t *l, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    emit_tok(l, T_ERROR);
    l->toks[l->ntoks - 1].err = im_arena_strndup(l->arena, msg, strlen(msg));
    l->done = true;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
bool tmpl__is_alnum(unsigned char c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c >= 0x80;
}
static bool has_prefix(const lexer_t *l, size_t at, const char *p)
{
    size_t n = strlen(p);
    return at + n <= l->n && memcmp(l->s + at, p, n) == 0;
}
/* " -}}" at at */
static bool right_trim_at(const lexer_t *l, size_t at)
{
    return at + 4 <= l->n && is_space(l->s[at]) && l->s[at + 1] == '-' && l->s[at + 2] == '}' &&
           l->s[at + 3] == '}';
}
static bool at_terminator(const lexer_t *l)
{
    if (l->pos >= l->n) return true;
    char c = l->s[l->pos];
    if (is_space(c)) return true;
    switch (c) {
    case '.':
    case ',':
    case '|':
    case ':':
    case ')':
    case '(': return true;
    default: break;
    }
    return has_prefix(l, l->pos, "}}");
}

static void describe_rune(char *buf, size_t cap, const char *s, size_t n)
{
    /* Go's %#U: U+0021 '!' */
    unsigned char c = (unsigned char)s[0];
    uint32_t cp = c;
    size_t len = 1;
    if (c >= 0x80) {
        len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
        if (len > n) len = 1;
        cp = len == 1 ? 0xFFFD : (uint32_t)(c & (0x7F >> len));
        for (size_t i = 1; i < len; i++) cp = (cp << 6) | ((unsigned char)s[i] & 0x3F);
    }
    if (cp >= 0x20 && cp != 0x7f)
        snprintf(buf, cap, "U+%04X '%.*s'", cp, (int)len, s);
    else
        snprintf(buf, cap, "U+%04X", cp);
}

/* Takes the rest of a word (field, variable or identifier): false with the
 * error set when it does not end at a terminator. */
static bool word_end(lexer_t *l)
{
    while (l->pos < l->n && tmpl__is_alnum((unsigned char)l->s[l->pos])) l->pos++;
    if (at_terminator(l)) return true;
    char d[48];
    describe_rune(d, sizeof d, l->s + l->pos, l->n - l->pos);
    lex_error(l, "bad character %s", d);
    return false;
}

static void lex_inside(lexer_t *l);

/* Past the white space a trim marker ("{{- ", " -}}") removes, counting lines. */
static void skip_trimmed_space(lexer_t *l)
{
    for (; l->pos < l->n && is_space(l->s[l->pos]); l->pos++)
        if (l->s[l->pos] == '\n') l->line++;
}

/* Past the closing quote q of a "..." string or '...' character constant (the
 * opening one is consumed). An end of input or a newline before it, also right
 * after a backslash, is the error msg (false), as Go's lexQuote and lexChar. */
static bool lex_quoted(lexer_t *l, char q, const char *msg)
{
    for (;;) {
        if (l->pos >= l->n || l->s[l->pos] == '\n') {
            lex_error(l, "%s", msg);
            return false;
        }
        char d = l->s[l->pos++];
        if (d == '\\') {
            if (l->pos >= l->n || l->s[l->pos] == '\n') {
                lex_error(l, "%s", msg);
                return false;
            }
            l->pos++;
        } else if (d == q) {
            return true;
        }
    }
}

static void lex_text(lexer_t *l)
{
    for (;;) {
        const char *p = l->pos < l->n ? memmem(l->s + l->pos, l->n - l->pos, "{{", 2) : NULL;
        if (!p) {
            l->pos = l->n;
            if (l->pos > l->start) emit_tok(l, T_TEXT);
            emit_tok(l, T_EOF);
            l->done = true;
            return;
        }
        size_t at = (size_t)(p - l->s);
        /* left trim marker "{{- " */
        bool trim = at + 3 < l->n && l->s[at + 2] == '-' && is_space(l->s[at + 3]);
        size_t end = at;
        if (trim)
            while (end > l->start && is_space(l->s[end - 1])) end--;
        if (end > l->start) {
            l->pos = end;
            emit_tok(l, T_TEXT);
        }
        l->pos = at;
        /* skip the trimmed space (count lines) */
        for (size_t i = l->start; i < at; i++)
            if (l->s[i] == '\n') l->line++;
        l->start = at;
        l->start_line = l->line;
        l->pos = at + 2;
        size_t after = l->pos + (trim ? 2 : 0);
        /* comment? */
        if (has_prefix(l, after, "/*")) {
            const char *e = memmem(l->s + after + 2, l->n - after - 2, "*/", 2);
            if (!e) {
                l->pos = l->n;
                lex_error(l, "unclosed comment");
                return;
            }
            size_t ce = (size_t)(e - l->s) + 2;
            bool rtrim = false;
            if (right_trim_at(l, ce)) {
                rtrim = true;
                ce += 4;
            } else if (has_prefix(l, ce, "}}")) {
                ce += 2;
            } else {
                l->pos = ce;
                lex_error(l, "comment ends before closing delimiter");
                return;
            }
            for (size_t i = l->start; i < ce; i++)
                if (l->s[i] == '\n') l->line++;
            l->pos = ce;
            if (rtrim) skip_trimmed_space(l);
            l->start = l->pos;
            l->start_line = l->line;
            continue;
        }
        emit_tok(l, T_LDELIM);
        if (trim) {
            l->pos += 2; /* "- " — the space is consumed as part of the marker */
            l->start = l->pos;
        }
        l->paren = 0;
        lex_inside(l);
        if (l->done) return;
    }
}

static void lex_inside(lexer_t *l)
{
    while (!l->done) {
        if (right_trim_at(l, l->pos) || has_prefix(l, l->pos, "}}")) {
            bool trim = !has_prefix(l, l->pos, "}}");
            if (trim) {
                l->pos += 1; /* the space before "-}}" belongs to the delimiter */
                l->start = l->pos - 1;
            }
            if (l->paren > 0) {
                l->pos = l->start;
                lex_error(l, "unclosed left paren");
                return;
            }
            l->pos += trim ? 3 : 2;
            emit_tok(l, T_RDELIM);
            if (trim) {
                skip_trimmed_space(l);
                l->start = l->pos;
                l->start_line = l->line;
            }
            return;
        }
        if (l->pos >= l->n) {
            lex_error(l, "unclosed action");
            return;
        }
        char c = l->s[l->pos];
        if (is_space(c)) {
            while (l->pos < l->n && is_space(l->s[l->pos])) {
                if (right_trim_at(l, l->pos)) break;
                l->pos++;
            }
            if (l->pos > l->start) emit_tok(l, T_SPACE);
            continue;
        }
        l->pos++;
        switch (c) {
        case '=': emit_tok(l, T_ASSIGN); continue;
        case ':':
            if (l->pos >= l->n || l->s[l->pos] != '=') {
                lex_error(l, "expected :=");
                return;
            }
            l->pos++;
            emit_tok(l, T_DECLARE);
            continue;
        case '|': emit_tok(l, T_PIPE); continue;
        case '"':
            if (!lex_quoted(l, '"', "unterminated quoted string")) return;
            emit_tok(l, T_STRING);
            continue;
        case '`': {
            const char *e = memchr(l->s + l->pos, '`', l->n - l->pos);
            if (!e) {
                lex_error(l, "unterminated raw quoted string");
                return;
            }
            l->pos = (size_t)(e - l->s) + 1;
            emit_tok(l, T_RAWSTRING);
            continue;
        }
        case '\'':
            if (!lex_quoted(l, '\'', "unterminated character constant")) return;
            emit_tok(l, T_CHARCONST);
            continue;
        case '$':
        case '.':
            if (c == '.' && l->pos < l->n && l->s[l->pos] >= '0' && l->s[l->pos] <= '9') {
                l->pos--;
                goto number;
            }
            if (at_terminator(l)) {
                emit_tok(l, c == '.' ? T_DOT : T_VAR);
                continue;
            }
            if (!word_end(l)) return;
            emit_tok(l, c == '.' ? T_FIELD : T_VAR);
            continue;
        case '(':
            l->paren++;
            emit_tok(l, T_LPAREN);
            continue;
        case ')':
            l->paren--;
            emit_tok(l, T_RPAREN);
            continue;
        default: break;
        }
        if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
            l->pos--;
        number:
            if (l->pos < l->n && (l->s[l->pos] == '+' || l->s[l->pos] == '-')) l->pos++;
            const char *digits = "0123456789_";
            if (l->pos + 1 < l->n && l->s[l->pos] == '0' && strchr("xXoObB", l->s[l->pos + 1]) &&
                l->s[l->pos + 1]) {
                char b = l->s[l->pos + 1];
                l->pos += 2;
                digits = (b == 'x' || b == 'X')   ? "0123456789abcdefABCDEF_"
                         : (b == 'o' || b == 'O') ? "01234567_"
                                                  : "01_";
            }
            while (l->pos < l->n && strchr(digits, l->s[l->pos]) && l->s[l->pos]) l->pos++;
            if (l->pos < l->n && l->s[l->pos] == '.') {
                l->pos++;
                while (l->pos < l->n && strchr(digits, l->s[l->pos]) && l->s[l->pos]) l->pos++;
            }
            if (l->pos < l->n && (l->s[l->pos] == 'e' || l->s[l->pos] == 'E') &&
                strlen(digits) == 11) {
                l->pos++;
                if (l->pos < l->n && (l->s[l->pos] == '+' || l->s[l->pos] == '-')) l->pos++;
                while (l->pos < l->n && l->s[l->pos] >= '0' && l->s[l->pos] <= '9') l->pos++;
            }
            if (l->pos < l->n && tmpl__is_alnum((unsigned char)l->s[l->pos])) {
                l->pos++;
                lex_error(l, "bad number syntax: \"%.*s\"", (int)(l->pos - l->start),
                          l->s + l->start);
                return;
            }
            emit_tok(l, T_NUMBER);
            continue;
        }
        if (tmpl__is_alnum((unsigned char)c)) {
            if (!word_end(l)) return;
            static const struct {
                const char *w;
                tok_type_t t;
            } kw[] = {{"if", T_IF},
                      {"else", T_ELSE},
                      {"end", T_END},
                      {"range", T_RANGE},
                      {"with", T_WITH},
                      {"define", T_DEFINE},
                      {"template", T_TEMPLATE},
                      {"block", T_BLOCK},
                      {"break", T_BREAK},
                      {"continue", T_CONTINUE},
                      {"nil", T_NIL},
                      {"true", T_BOOL},
                      {"false", T_BOOL}};
            tok_type_t t = T_IDENT;
            size_t wl = l->pos - l->start;
            for (size_t i = 0; i < IM_ARRAY_LEN(kw); i++)
                if (strlen(kw[i].w) == wl && memcmp(kw[i].w, l->s + l->start, wl) == 0) t = kw[i].t;
            emit_tok(l, t);
            continue;
        }
        if ((unsigned char)c < 0x80 && c >= 0x20 && c != 0x7f) {
            emit_tok(l, T_CHAR);
            continue;
        }
        char d[48];
        l->pos--;
        describe_rune(d, sizeof d, l->s + l->pos, l->n - l->pos);
        lex_error(l, "unrecognized character in action: %s", d);
        return;
    }
}

bool tmpl__lex(const char *s, size_t n, im_arena_t *arena, tok_t **toks, size_t *ntoks)
{
    lexer_t l = {.s = s, .n = n, .line = 1, .start_line = 1, .arena = arena};
    lex_text(&l);
    if (l.ntoks == 0 || (l.toks[l.ntoks - 1].t != T_EOF && l.toks[l.ntoks - 1].t != T_ERROR)) {
        if (l.ntoks >= TMPL_MAX_TOKENS) {
            im_free(l.toks);
            *toks = NULL;
            *ntoks = 0;
            return false;
        }
        emit_tok(&l, T_EOF);
    }
    *toks = l.toks;
    *ntoks = l.ntoks;
    return true;
}
