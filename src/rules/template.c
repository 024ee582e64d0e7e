/* template.c — lexer, parser and executor of the Go text/template subset that
 * Prometheus' alert templates use (contract in template.h).
 *
 * The structure follows Go's text/template/parse so that error messages and
 * positions come out the same: a lexer turns the whole text into tokens (text,
 * delimiters, spaces, identifiers, fields, variables, literals), a recursive
 * parser builds a tree of lists, actions, if/range/with nodes, pipelines,
 * commands and operands (checking that functions exist and variables are
 * declared), and an executor walks the tree with a variable stack, evaluating
 * pipelines into values (template_int.h) and printing them as fmt does. All
 * memory of one expansion lives in an arena freed at the end; errors propagate
 * as a flag checked after each evaluation (no longjmp). */
#include "util/base.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "labels/regex.h"
#include "rules/template_int.h"
#include "util/fmtfloat.h"
#include "util/timeutil.h"

#define MAX_DEPTH      64
#define MAX_RANGE_ITER 100000
#define MAX_TOKENS     200000

/* ---- Lexer ---- */

typedef enum tok_type {
    T_EOF,
    T_ERROR,
    T_TEXT,
    T_LDELIM,
    T_RDELIM,
    T_SPACE,
    T_IDENT,
    T_FIELD,
    T_VAR,
    T_DOT,
    T_STRING,
    T_RAWSTRING,
    T_CHARCONST,
    T_NUMBER,
    T_BOOL,
    T_NIL,
    T_PIPE,
    T_LPAREN,
    T_RPAREN,
    T_DECLARE,
    T_ASSIGN,
    T_CHAR,
    /* keywords */
    T_KEYWORD,
    T_IF,
    T_ELSE,
    T_END,
    T_RANGE,
    T_WITH,
    T_DEFINE,
    T_TEMPLATE,
    T_BLOCK,
    T_BREAK,
    T_CONTINUE,
} tok_type_t;

typedef struct tok {
    tok_type_t t;
    size_t pos, len; /* in the text (for T_ERROR: into errbuf storage) */
    int line;
    const char *err; /* T_ERROR: arena message */
} tok_t;

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
    if (l->ntoks >= MAX_TOKENS) l->done = true;
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
static bool is_alnum(unsigned char c)
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

static void lex_inside(lexer_t *l);

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
            if (rtrim)
                while (l->pos < l->n && is_space(l->s[l->pos])) {
                    if (l->s[l->pos] == '\n') l->line++;
                    l->pos++;
                }
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
                while (l->pos < l->n && is_space(l->s[l->pos])) {
                    if (l->s[l->pos] == '\n') l->line++;
                    l->pos++;
                }
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
            for (;;) {
                if (l->pos >= l->n || l->s[l->pos] == '\n') {
                    lex_error(l, "unterminated quoted string");
                    return;
                }
                char d = l->s[l->pos++];
                if (d == '\\') {
                    if (l->pos >= l->n || l->s[l->pos] == '\n') {
                        lex_error(l, "unterminated quoted string");
                        return;
                    }
                    l->pos++;
                } else if (d == '"') {
                    break;
                }
            }
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
            for (;;) {
                if (l->pos >= l->n || l->s[l->pos] == '\n') {
                    lex_error(l, "unterminated character constant");
                    return;
                }
                char d = l->s[l->pos++];
                if (d == '\\') {
                    if (l->pos < l->n) l->pos++;
                } else if (d == '\'') {
                    break;
                }
            }
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
            while (l->pos < l->n && is_alnum((unsigned char)l->s[l->pos])) l->pos++;
            if (!at_terminator(l)) {
                char d[48];
                describe_rune(d, sizeof d, l->s + l->pos, l->n - l->pos);
                lex_error(l, "bad character %s", d);
                return;
            }
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
            if (l->pos < l->n && is_alnum((unsigned char)l->s[l->pos])) {
                l->pos++;
                lex_error(l, "bad number syntax: \"%.*s\"", (int)(l->pos - l->start),
                          l->s + l->start);
                return;
            }
            emit_tok(l, T_NUMBER);
            continue;
        }
        if (is_alnum((unsigned char)c)) {
            while (l->pos < l->n && is_alnum((unsigned char)l->s[l->pos])) l->pos++;
            if (!at_terminator(l)) {
                char d[48];
                describe_rune(d, sizeof d, l->s + l->pos, l->n - l->pos);
                lex_error(l, "bad character %s", d);
                return;
            }
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

/* ---- Parse tree ---- */

typedef enum node_type {
    N_LIST,
    N_TEXT,
    N_ACTION,
    N_IF,
    N_RANGE,
    N_WITH,
    N_BREAK,
    N_CONTINUE,
    N_PIPE,
    N_CMD,
    N_FIELD, /* .A.B */
    N_VAR,   /* $x.A.B */
    N_IDENT, /* function name */
    N_DOT,
    N_NIL,
    N_BOOL,
    N_NUMBER,
    N_STRING,
    N_CHAIN,    /* (pipe).A.B */
    N_TEMPLATE, /* {{template "name" pipe}}: text = name, pipe may be NULL */
    N_DEFINE,   /* text = name, list = body (in the parser's defs) */
    N_END,      /* parse-time only */
    N_ELSE,     /* parse-time only */
} node_type_t;

typedef struct node node_t;
struct node {
    node_type_t t;
    size_t pos; /* byte offset in the text */
    int line;
    /* N_TEXT: text; N_STRING: decoded value; N_NUMBER/N_IDENT: source text */
    im_sv_t text;
    im_sv_t src;   /* source text of the token (strings, numbers) */
    node_t **kids; /* LIST: items; CMD: args; PIPE: cmds */
    size_t nkids;
    size_t cap;
    /* fields for FIELD/VAR/CHAIN: ident parts ("$x" first for VAR) */
    im_sv_t *idents;
    size_t nidents;
    node_t *pipe;  /* ACTION/IF/RANGE/WITH; CHAIN: the operand */
    node_t *list;  /* IF/RANGE/WITH body */
    node_t *elist; /* else list (may be NULL) */
    node_t **decl; /* PIPE: declared variables (N_VAR) */
    size_t ndecl;
    bool is_assign;
    bool b;
    /* numbers */
    bool is_int, is_float;
    int64_t i64;
    double f64;
};

typedef struct parser {
    const char *name;
    const char *s;
    size_t n;
    tok_t *toks;
    size_t ntoks, ti;
    im_arena_t *arena;
    im_err_t *err;
    bool failed;
    int range_depth;
    int depth;
    /* declared variables (parse-time) */
    im_sv_t *vars;
    size_t nvars, capvars;
    int action_line;
    node_t *defs; /* N_LIST of N_DEFINE */
} parser_t;

static void perr(parser_t *p, const char *fmt, ...) IM_PRINTF(2, 3);
static void perr(parser_t *p, const char *fmt, ...)
{
    if (p->failed) return;
    p->failed = true;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t ti = p->ti > 0 ? p->ti - 1 : 0;
    int line = ti < p->ntoks ? p->toks[ti].line : 1;
    im_err_set(p->err, IM_EPARSE, "template: %s:%d: %s", p->name, line, msg);
}

static tok_t *next_tok(parser_t *p)
{
    if (p->ti < p->ntoks) return &p->toks[p->ti++];
    return &p->toks[p->ntoks - 1];
}
static tok_t *peek_tok(parser_t *p)
{
    return &p->toks[p->ti < p->ntoks ? p->ti : p->ntoks - 1];
}
static tok_t *next_nonspace(parser_t *p)
{
    tok_t *t;
    do t = next_tok(p);
    while (t->t == T_SPACE);
    return t;
}
static tok_t *peek_nonspace(parser_t *p)
{
    tok_t *t = next_nonspace(p);
    p->ti--;
    return t;
}

static void tok_string(parser_t *p, const tok_t *t, char *buf, size_t cap)
{
    if (t->t == T_EOF) {
        snprintf(buf, cap, "EOF");
    } else if (t->t == T_ERROR) {
        snprintf(buf, cap, "%s", t->err);
    } else if (t->t > T_KEYWORD || t->t == T_DOT || t->t == T_NIL) {
        snprintf(buf, cap, "<%.*s>", (int)t->len, p->s + t->pos);
    } else {
        im_buf_t b;
        im_buf_init(&b, 0);
        tmpl__quote(&b, p->s + t->pos, t->len > 10 ? 10 : t->len);
        snprintf(buf, cap, "%s%s", b.data, t->len > 10 ? "..." : "");
        im_buf_free(&b);
    }
}

static void unexpected(parser_t *p, const tok_t *t, const char *context)
{
    char ts[128];
    tok_string(p, t, ts, sizeof ts);
    if (t->t == T_ERROR) {
        if (p->action_line != 0 && p->action_line != t->line)
            perr(p, "%s in action started at %s:%d", ts, p->name, p->action_line);
        else
            perr(p, "%s", ts);
        return;
    }
    perr(p, "unexpected %s in %s", ts, context);
}

static node_t *new_node(parser_t *p, node_type_t t, size_t pos, int line)
{
    node_t *n = im_arena_calloc(p->arena, sizeof *n);
    if (!n) im_oom(sizeof *n);
    n->t = t;
    n->pos = pos;
    n->line = line;
    return n;
}
static void add_kid(parser_t *p, node_t *n, node_t *k)
{
    if (n->nkids == n->cap) {
        size_t nc = n->cap ? n->cap * 2 : 4;
        node_t **nk = im_arena_alloc(p->arena, nc * sizeof *nk);
        if (!nk) im_oom(nc * sizeof *nk);
        if (n->nkids) memcpy(nk, n->kids, n->nkids * sizeof *nk);
        n->kids = nk;
        n->cap = nc;
    }
    n->kids[n->nkids++] = k;
}
static void push_var(parser_t *p, im_sv_t name)
{
    if (p->nvars == p->capvars) {
        p->capvars = p->capvars ? p->capvars * 2 : 16;
        p->vars = im_realloc(p->vars, p->capvars * sizeof *p->vars);
    }
    p->vars[p->nvars++] = name;
}

/* Splits "a.b.c" (a may start with $ or be empty for fields) into idents. */
static void split_idents(parser_t *p, node_t *n, const char *s, size_t len)
{
    size_t cnt = 1;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '.') cnt++;
    n->idents = im_arena_alloc(p->arena, cnt * sizeof *n->idents);
    if (!n->idents) im_oom(cnt * sizeof *n->idents);
    n->nidents = 0;
    size_t st = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            if (i > st || n->nidents > 0 || (i == st && s[0] != '.'))
                n->idents[n->nidents++] = (im_sv_t){s + st, i - st};
            st = i + 1;
        }
    }
}

static node_t *parse_pipeline(parser_t *p, const char *context, tok_type_t end);
static node_t *parse_list_until(parser_t *p, node_t **terminator);

static bool parse_number(parser_t *p, node_t *n, const char *s, size_t len, bool is_char)
{
    char buf[128];
    if (is_char) {
        /* 'x', '\n', '\x41', unicode */
        const char *q = s + 1;
        size_t ql = len >= 2 ? len - 2 : 0;
        int64_t v = -1;
        if (ql == 1 && q[0] != '\\') {
            v = (unsigned char)q[0];
        } else if (ql == 2 && q[0] == '\\') {
            const char *esc = "abfnrtv\\'\"";
            const char *val = "\a\b\f\n\r\t\v\\'\"";
            const char *e = strchr(esc, q[1]);
            if (e && q[1]) v = (unsigned char)val[e - esc];
        } else if (ql >= 2 && ql <= 4 && ((unsigned char)q[0] & 0x80)) {
            uint32_t cp = (unsigned char)q[0] & (0x7F >> ql);
            for (size_t i = 1; i < ql; i++) cp = (cp << 6) | ((unsigned char)q[i] & 0x3F);
            v = cp;
        } else if (ql == 4 && q[0] == '\\' && q[1] == 'x') {
            char h[3] = {q[2], q[3], 0};
            char *e;
            long x = strtol(h, &e, 16);
            if (*e == 0) v = x;
        }
        if (v < 0) {
            perr(p, "malformed character constant: %.*s", (int)len, s);
            return false;
        }
        n->is_int = n->is_float = true;
        n->i64 = v;
        n->f64 = (double)v;
        return true;
    }
    if (len >= sizeof buf) {
        perr(p, "illegal number syntax: \"%.*s\"", (int)len, s);
        return false;
    }
    size_t bl = 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] != '_') buf[bl++] = s[i];
    buf[bl] = 0;
    bool looks_float = false;
    bool hex = bl > 2 && (buf[0] == '0' || buf[1] == '0') && (strchr(buf, 'x') || strchr(buf, 'X'));
    for (size_t i = 0; i < bl; i++)
        if (buf[i] == '.' || ((buf[i] == 'e' || buf[i] == 'E') && !hex) || buf[i] == 'p' ||
            buf[i] == 'P')
            looks_float = true;
    char *e;
    errno = 0;
    int base = 10;
    const char *q = buf;
    bool neg = false;
    char ibuf[160];
    if (*q == '+' || *q == '-') {
        neg = *q == '-';
        q++;
    }
    if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
        base = 16;
        q += 2;
    } else if (q[0] == '0' && (q[1] == 'o' || q[1] == 'O')) {
        base = 8;
        q += 2;
    } else if (q[0] == '0' && (q[1] == 'b' || q[1] == 'B')) {
        base = 2;
        q += 2;
    } else if (q[0] == '0' && q[1] && !looks_float) {
        base = 8;
    }
    snprintf(ibuf, sizeof ibuf, "%s%s", neg ? "-" : "", q);
    if (!looks_float && *q) {
        long long v = strtoll(ibuf, &e, base);
        if (*e == 0 && errno == 0) {
            n->is_int = n->is_float = true;
            n->i64 = v;
            n->f64 = (double)v;
            return true;
        }
        if (*e == 0 && errno == ERANGE) {
            perr(p, "integer overflow: \"%.*s\"", (int)len, s);
            return false;
        }
    }
    if (looks_float && base != 8 && base != 2) {
        double f = strtod(buf, &e);
        if (*e == 0 && bl > 0 && !(bl == 1 && (buf[0] == '+' || buf[0] == '-'))) {
            n->is_float = true;
            n->f64 = f;
            if (f >= -9.2e18 && f <= 9.2e18 && (double)(int64_t)f == f) {
                n->is_int = true;
                n->i64 = (int64_t)f;
            }
            return true;
        }
    }
    perr(p, "illegal number syntax: \"%.*s\"", (int)len, s);
    return false;
}

/* strconv.Unquote of a "..." or `...` token into arena memory. */
static bool unquote(parser_t *p, const char *s, size_t len, im_sv_t *out)
{
    if (s[0] == '`') {
        *out = (im_sv_t){s + 1, len - 2};
        return true;
    }
    char *o = im_arena_alloc(p->arena, len + 1);
    if (!o) im_oom(len);
    size_t ol = 0;
    for (size_t i = 1; i + 1 < len; i++) {
        char c = s[i];
        if (c != '\\') {
            o[ol++] = c;
            continue;
        }
        i++;
        if (i + 1 >= len + 0 && i >= len - 1) goto bad;
        c = s[i];
        switch (c) {
        case 'a': o[ol++] = '\a'; break;
        case 'b': o[ol++] = '\b'; break;
        case 'f': o[ol++] = '\f'; break;
        case 'n': o[ol++] = '\n'; break;
        case 'r': o[ol++] = '\r'; break;
        case 't': o[ol++] = '\t'; break;
        case 'v': o[ol++] = '\v'; break;
        case '\\': o[ol++] = '\\'; break;
        case '"': o[ol++] = '"'; break;
        case 'x': {
            if (i + 2 >= len - 1 + 1 && i + 2 > len - 2) goto bad;
            char h[3] = {s[i + 1], s[i + 2], 0};
            char *e;
            long v = strtol(h, &e, 16);
            if (*e || !h[0] || !h[1]) goto bad;
            o[ol++] = (char)v;
            i += 2;
            break;
        }
        case 'u':
        case 'U': {
            size_t nd = c == 'u' ? 4 : 8;
            if (i + nd > len - 2) goto bad;
            char h[9];
            memcpy(h, s + i + 1, nd);
            h[nd] = 0;
            char *e;
            unsigned long cp = strtoul(h, &e, 16);
            if (*e || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) goto bad;
            if (cp < 0x80) {
                o[ol++] = (char)cp;
            } else if (cp < 0x800) {
                o[ol++] = (char)(0xC0 | (cp >> 6));
                o[ol++] = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                o[ol++] = (char)(0xE0 | (cp >> 12));
                o[ol++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                o[ol++] = (char)(0x80 | (cp & 0x3F));
            } else {
                o[ol++] = (char)(0xF0 | (cp >> 18));
                o[ol++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                o[ol++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                o[ol++] = (char)(0x80 | (cp & 0x3F));
            }
            i += nd;
            break;
        }
        default:
            if (c >= '0' && c <= '7' && i + 2 < len - 1) {
                int v = 0;
                for (int k = 0; k < 3; k++) {
                    char d = s[i + (size_t)k];
                    if (d < '0' || d > '7') goto bad;
                    v = v * 8 + (d - '0');
                }
                if (v > 255) goto bad;
                o[ol++] = (char)v;
                i += 2;
                break;
            }
            goto bad;
        }
    }
    o[ol] = 0;
    *out = (im_sv_t){o, ol};
    return true;
bad:
    perr(p, "invalid syntax");
    return false;
}

static bool has_function(const char *name, size_t len);

static node_t *parse_term(parser_t *p)
{
    tok_t *t = next_nonspace(p);
    im_sv_t txt = {p->s + t->pos, t->len};
    node_t *n;
    switch (t->t) {
    case T_IDENT:
        if (!has_function(txt.p, txt.len)) {
            perr(p, "function \"%.*s\" not defined", (int)txt.len, txt.p);
            return NULL;
        }
        n = new_node(p, N_IDENT, t->pos, t->line);
        n->text = txt;
        return n;
    case T_DOT: return new_node(p, N_DOT, t->pos, t->line);
    case T_NIL: return new_node(p, N_NIL, t->pos, t->line);
    case T_VAR:
        for (size_t i = p->nvars; i-- > 0;)
            if (im_sv_eq(p->vars[i], txt)) {
                n = new_node(p, N_VAR, t->pos, t->line);
                split_idents(p, n, txt.p, txt.len);
                n->src = txt;
                return n;
            }
        perr(p, "undefined variable \"%.*s\"", (int)txt.len, txt.p);
        return NULL;
    case T_FIELD:
        n = new_node(p, N_FIELD, t->pos, t->line);
        split_idents(p, n, txt.p, txt.len);
        n->src = txt;
        return n;
    case T_BOOL:
        n = new_node(p, N_BOOL, t->pos, t->line);
        n->b = txt.len == 4;
        return n;
    case T_NUMBER:
    case T_CHARCONST:
        n = new_node(p, N_NUMBER, t->pos, t->line);
        n->src = txt;
        if (!parse_number(p, n, txt.p, txt.len, t->t == T_CHARCONST)) return NULL;
        return n;
    case T_LPAREN:
        if (++p->depth > MAX_DEPTH) {
            perr(p, "max nesting depth exceeded");
            return NULL;
        }
        n = parse_pipeline(p, "parenthesized pipeline", T_RPAREN);
        p->depth--;
        return n;
    case T_STRING:
    case T_RAWSTRING:
        n = new_node(p, N_STRING, t->pos, t->line);
        n->src = txt;
        if (!unquote(p, txt.p, txt.len, &n->text)) return NULL;
        return n;
    default: break;
    }
    p->ti--;
    return NULL;
}

static node_t *parse_operand(parser_t *p)
{
    node_t *n = parse_term(p);
    if (!n || p->failed) return NULL;
    if (peek_tok(p)->t == T_FIELD) {
        size_t cpos = peek_tok(p)->pos;
        /* collect the chain's source text */
        size_t st = peek_tok(p)->pos, en = st;
        while (peek_tok(p)->t == T_FIELD) {
            tok_t *f = next_tok(p);
            en = f->pos + f->len;
        }
        im_sv_t fields = {p->s + st, en - st};
        switch (n->t) {
        case N_FIELD:
        case N_VAR: {
            size_t tl = n->src.len + fields.len;
            char *c = im_arena_alloc(p->arena, tl + 1);
            if (!c) im_oom(tl);
            memcpy(c, n->src.p, n->src.len);
            memcpy(c + n->src.len, fields.p, fields.len);
            c[tl] = 0;
            node_type_t nt = n->t;
            int line = n->line;
            n = new_node(p, nt, cpos, line);
            n->src = (im_sv_t){c, tl};
            split_idents(p, n, c, tl);
            break;
        }
        case N_BOOL:
        case N_STRING:
        case N_NUMBER:
        case N_NIL:
        case N_DOT: {
            const char *what = n->t == N_BOOL  ? (n->b ? "true" : "false")
                               : n->t == N_NIL ? "nil"
                               : n->t == N_DOT ? "."
                                               : NULL;
            if (what)
                perr(p, "unexpected . after term \"%s\"", what);
            else
                perr(p, "unexpected . after term \"%.*s\"", (int)n->src.len, n->src.p);
            return NULL;
        }
        default: {
            node_t *c = new_node(p, N_CHAIN, cpos, n->line);
            c->pipe = n;
            c->src = fields;
            split_idents(p, c, fields.p, fields.len);
            n = c;
        }
        }
    }
    return n;
}

static node_t *parse_command(parser_t *p)
{
    tok_t *first = peek_nonspace(p);
    node_t *cmd = new_node(p, N_CMD, first->pos, first->line);
    for (;;) {
        peek_nonspace(p);
        node_t *op = parse_operand(p);
        if (p->failed) return NULL;
        if (op) add_kid(p, cmd, op);
        tok_t *t = next_tok(p);
        if (t->t == T_SPACE) continue;
        if (t->t == T_RDELIM || t->t == T_RPAREN) {
            p->ti--;
        } else if (t->t != T_PIPE) {
            unexpected(p, t, "operand");
            return NULL;
        }
        break;
    }
    if (cmd->nkids == 0) {
        perr(p, "empty command");
        return NULL;
    }
    return cmd;
}

static node_t *parse_pipeline(parser_t *p, const char *context, tok_type_t end)
{
    tok_t *t0 = peek_nonspace(p);
    node_t *pipe = new_node(p, N_PIPE, t0->pos, t0->line);
    node_t *decls[2];
    size_t nd = 0;
decls:
    if (peek_nonspace(p)->t == T_VAR) {
        tok_t *v = next_nonspace(p);
        size_t save = p->ti;
        tok_t *after = peek_tok(p);
        tok_t *nx = peek_nonspace(p);
        im_sv_t vn = {p->s + v->pos, v->len};
        if (nx->t == T_ASSIGN || nx->t == T_DECLARE) {
            pipe->is_assign = nx->t == T_ASSIGN;
            next_nonspace(p);
            node_t *vnode = new_node(p, N_VAR, v->pos, v->line);
            split_idents(p, vnode, vn.p, vn.len);
            vnode->src = vn;
            decls[nd++] = vnode;
            push_var(p, vn);
        } else if (nx->t == T_CHAR && p->s[nx->pos] == ',') {
            next_nonspace(p);
            node_t *vnode = new_node(p, N_VAR, v->pos, v->line);
            split_idents(p, vnode, vn.p, vn.len);
            vnode->src = vn;
            decls[nd++] = vnode;
            push_var(p, vn);
            if (strcmp(context, "range") == 0 && nd < 2) {
                tok_type_t pt = peek_nonspace(p)->t;
                if (pt == T_VAR || pt == T_RDELIM || pt == T_RPAREN) goto decls;
                perr(p, "range can only initialize variables");
                return NULL;
            }
            perr(p, "too many declarations in %s", context);
            return NULL;
        } else if (after->t == T_SPACE) {
            p->ti = save - 1;
        } else {
            p->ti = save - 1;
        }
    }
    if (nd) {
        pipe->decl = im_arena_alloc(p->arena, nd * sizeof(node_t *));
        if (!pipe->decl) im_oom(nd);
        memcpy(pipe->decl, decls, nd * sizeof(node_t *));
        pipe->ndecl = nd;
    }
    for (;;) {
        tok_t *t = next_nonspace(p);
        if (t->t == end) {
            if (pipe->nkids == 0) {
                perr(p, "missing value for %s", context);
                return NULL;
            }
            for (size_t i = 1; i < pipe->nkids; i++) {
                node_type_t a = pipe->kids[i]->kids[0]->t;
                if (a == N_BOOL || a == N_DOT || a == N_NIL || a == N_NUMBER || a == N_STRING) {
                    perr(p, "non executable command in pipeline stage %zu", i + 1);
                    return NULL;
                }
            }
            return pipe;
        }
        switch (t->t) {
        case T_BOOL:
        case T_CHARCONST:
        case T_DOT:
        case T_FIELD:
        case T_IDENT:
        case T_NUMBER:
        case T_NIL:
        case T_RAWSTRING:
        case T_STRING:
        case T_VAR:
        case T_LPAREN: {
            p->ti--;
            node_t *c = parse_command(p);
            if (p->failed) return NULL;
            add_kid(p, pipe, c);
            break;
        }
        default: unexpected(p, t, context); return NULL;
        }
    }
}

static node_t *parse_text_or_action(parser_t *p);

static node_t *parse_list_until(parser_t *p, node_t **terminator)
{
    tok_t *t0 = peek_nonspace(p);
    node_t *list = new_node(p, N_LIST, t0->pos, t0->line);
    while (peek_nonspace(p)->t != T_EOF) {
        node_t *n = parse_text_or_action(p);
        if (p->failed) return NULL;
        if (n->t == N_END || n->t == N_ELSE) {
            *terminator = n;
            return list;
        }
        add_kid(p, list, n);
    }
    perr(p, "unexpected EOF");
    return NULL;
}

static node_t *parse_control(parser_t *p, node_type_t type, const char *context, size_t pos,
                             int line)
{
    size_t mark = p->nvars;
    if (++p->depth > MAX_DEPTH) {
        perr(p, "max nesting depth exceeded");
        return NULL;
    }
    node_t *n = new_node(p, type, pos, line);
    n->pipe = parse_pipeline(p, context, T_RDELIM);
    if (p->failed) return NULL;
    n->pos = n->pipe->pos;
    if (type == N_RANGE) p->range_depth++;
    node_t *term = NULL;
    n->list = parse_list_until(p, &term);
    if (type == N_RANGE) p->range_depth--;
    if (p->failed) return NULL;
    if (term->t == N_ELSE) {
        if (type == N_IF && peek_tok(p)->t == T_IF) {
            tok_t *it = next_tok(p);
            n->elist = new_node(p, N_LIST, term->pos, term->line);
            node_t *inner = parse_control(p, N_IF, "if", it->pos, it->line);
            if (p->failed) return NULL;
            add_kid(p, n->elist, inner);
        } else {
            node_t *t2 = NULL;
            n->elist = parse_list_until(p, &t2);
            if (p->failed) return NULL;
            if (t2->t != N_END) {
                perr(p, "expected end; found {{else}}");
                return NULL;
            }
        }
    }
    p->nvars = mark;
    p->depth--;
    return n;
}

static node_t *parse_action(parser_t *p)
{
    tok_t *t = next_nonspace(p);
    p->action_line = t->line;
    switch (t->t) {
    case T_BREAK:
    case T_CONTINUE: {
        bool brk = t->t == T_BREAK;
        tok_t *r = next_nonspace(p);
        if (r->t != T_RDELIM) {
            unexpected(p, r, brk ? "{{break}}" : "{{continue}}");
            return NULL;
        }
        if (p->range_depth == 0) {
            perr(p, brk ? "{{break}} outside {{range}}" : "{{continue}} outside {{range}}");
            return NULL;
        }
        return new_node(p, brk ? N_BREAK : N_CONTINUE, t->pos, t->line);
    }
    case T_ELSE: {
        tok_t *pk = peek_nonspace(p);
        if (pk->t == T_IF) return new_node(p, N_ELSE, pk->pos, pk->line);
        tok_t *r = next_nonspace(p);
        if (r->t != T_RDELIM) {
            unexpected(p, r, "else");
            return NULL;
        }
        return new_node(p, N_ELSE, r->pos, r->line);
    }
    case T_END: {
        tok_t *r = next_nonspace(p);
        if (r->t != T_RDELIM) {
            unexpected(p, r, "end");
            return NULL;
        }
        return new_node(p, N_END, r->pos, r->line);
    }
    case T_IF: return parse_control(p, N_IF, "if", t->pos, t->line);
    case T_RANGE: return parse_control(p, N_RANGE, "range", t->pos, t->line);
    case T_WITH: return parse_control(p, N_WITH, "with", t->pos, t->line);
    case T_TEMPLATE:
    case T_BLOCK: {
        bool block = t->t == T_BLOCK;
        const char *context = block ? "block clause" : "template clause";
        tok_t *nt = next_nonspace(p);
        if (nt->t != T_STRING && nt->t != T_RAWSTRING) {
            unexpected(p, nt, context);
            return NULL;
        }
        node_t *tn = new_node(p, N_TEMPLATE, nt->pos, nt->line);
        tn->src = (im_sv_t){p->s + nt->pos, nt->len};
        if (!unquote(p, p->s + nt->pos, nt->len, &tn->text)) return NULL;
        if (block) {
            tn->pipe = parse_pipeline(p, context, T_RDELIM);
            if (p->failed) return NULL;
            node_t *term = NULL;
            node_t *body = parse_list_until(p, &term);
            if (p->failed) return NULL;
            if (term->t != N_END) {
                perr(p, "unexpected {{else}} in %s", context);
                return NULL;
            }
            node_t *d = new_node(p, N_DEFINE, nt->pos, nt->line);
            d->text = tn->text;
            d->list = body;
            add_kid(p, p->defs, d);
        } else if (next_nonspace(p)->t != T_RDELIM) {
            p->ti--;
            tn->pipe = parse_pipeline(p, context, T_RDELIM);
            if (p->failed) return NULL;
        }
        return tn;
    }
    default: break;
    }
    p->ti--;
    tok_t *pk = peek_tok(p);
    node_t *a = new_node(p, N_ACTION, pk->pos, pk->line);
    a->pipe = parse_pipeline(p, "command", T_RDELIM);
    if (p->failed) return NULL;
    return a;
}

static node_t *parse_text_or_action(parser_t *p)
{
    tok_t *t = next_nonspace(p);
    switch (t->t) {
    case T_TEXT: {
        node_t *n = new_node(p, N_TEXT, t->pos, t->line);
        n->text = (im_sv_t){p->s + t->pos, t->len};
        return n;
    }
    case T_LDELIM: return parse_action(p);
    default: unexpected(p, t, "input"); return new_node(p, N_TEXT, t->pos, t->line);
    }
}

static node_t *parse_all(parser_t *p)
{
    node_t *root = new_node(p, N_LIST, 0, 1);
    while (!p->failed && peek_tok(p)->t != T_EOF) {
        if (peek_tok(p)->t == T_LDELIM) {
            size_t save = p->ti;
            next_tok(p);
            if (next_nonspace(p)->t == T_DEFINE) {
                const char *context = "define clause";
                tok_t *nt = next_nonspace(p);
                if (nt->t != T_STRING && nt->t != T_RAWSTRING) {
                    unexpected(p, nt, context);
                    break;
                }
                node_t *d = new_node(p, N_DEFINE, nt->pos, nt->line);
                if (!unquote(p, p->s + nt->pos, nt->len, &d->text)) break;
                tok_t *r = next_nonspace(p);
                if (r->t != T_RDELIM) {
                    unexpected(p, r, context);
                    break;
                }
                /* a definition is a new tree: only $ is declared */
                size_t mark = p->nvars;
                int rd = p->range_depth;
                p->nvars = 1;
                p->range_depth = 0;
                node_t *term = NULL;
                d->list = parse_list_until(p, &term);
                p->nvars = mark;
                p->range_depth = rd;
                if (p->failed) break;
                if (term->t != N_END) {
                    perr(p, "unexpected {{else}} in %s", context);
                    break;
                }
                add_kid(p, p->defs, d);
                continue;
            }
            p->ti = save;
        }
        node_t *n = parse_text_or_action(p);
        if (p->failed) break;
        if (n->t == N_END) {
            perr(p, "unexpected {{end}}");
            break;
        }
        if (n->t == N_ELSE) {
            perr(p, "unexpected {{else}}");
            break;
        }
        add_kid(p, root, n);
    }
    root->elist = p->defs;
    return p->failed ? NULL : root;
}

/* Parses text; on success returns the root list (arena memory). */
static node_t *tmpl_parse(const char *name, const char *s, size_t n, im_arena_t *arena,
                          im_err_t *err)
{
    lexer_t l = {.s = s, .n = n, .line = 1, .start_line = 1, .arena = arena};
    lex_text(&l);
    if (l.ntoks == 0 || (l.toks[l.ntoks - 1].t != T_EOF && l.toks[l.ntoks - 1].t != T_ERROR)) {
        if (l.ntoks >= MAX_TOKENS) {
            im_free(l.toks);
            im_err_set(err, IM_ELIMIT, "template: %s: too many tokens", name);
            return NULL;
        }
        emit_tok(&l, T_EOF);
    }
    parser_t p = {
        .name = name, .s = s, .n = n, .toks = l.toks, .ntoks = l.ntoks, .arena = arena, .err = err};
    push_var(&p, IM_SV("$")); /* $ = the data, as in Go */
    p.defs = new_node(&p, N_LIST, 0, 1);
    node_t *root = parse_all(&p);
    im_free(l.toks);
    im_free(p.vars);
    return root;
}

/* ---- Node printing (for error contexts, as Go's Node.String) ---- */

static void node_string(im_buf_t *b, const node_t *n);

static void pipe_string(im_buf_t *b, const node_t *n)
{
    for (size_t i = 0; i < n->ndecl; i++) {
        if (i) (void)im_buf_puts(b, ", ");
        (void)im_buf_append(b, n->decl[i]->src.p, n->decl[i]->src.len);
    }
    if (n->ndecl) (void)im_buf_puts(b, n->is_assign ? " = " : " := ");
    for (size_t i = 0; i < n->nkids; i++) {
        if (i) (void)im_buf_puts(b, " | ");
        node_string(b, n->kids[i]);
    }
}

static void node_string(im_buf_t *b, const node_t *n)
{
    switch (n->t) {
    case N_CMD:
        for (size_t i = 0; i < n->nkids; i++) {
            if (i) (void)im_buf_putc(b, ' ');
            if (n->kids[i]->t == N_PIPE) {
                (void)im_buf_putc(b, '(');
                pipe_string(b, n->kids[i]);
                (void)im_buf_putc(b, ')');
            } else {
                node_string(b, n->kids[i]);
            }
        }
        break;
    case N_PIPE: pipe_string(b, n); break;
    case N_FIELD:
    case N_VAR:
    case N_NUMBER:
    case N_STRING: (void)im_buf_append(b, n->src.p, n->src.len); break;
    case N_IDENT: (void)im_buf_append(b, n->text.p, n->text.len); break;
    case N_DOT: (void)im_buf_putc(b, '.'); break;
    case N_TEMPLATE:
        (void)im_buf_puts(b, "{{template ");
        (void)im_buf_append(b, n->src.p, n->src.len);
        if (n->pipe) {
            (void)im_buf_putc(b, ' ');
            pipe_string(b, n->pipe);
        }
        (void)im_buf_puts(b, "}}");
        break;
    case N_NIL: (void)im_buf_puts(b, "nil"); break;
    case N_BOOL: (void)im_buf_puts(b, n->b ? "true" : "false"); break;
    case N_CHAIN:
        if (n->pipe->t == N_PIPE) {
            (void)im_buf_putc(b, '(');
            pipe_string(b, n->pipe);
            (void)im_buf_putc(b, ')');
        } else {
            node_string(b, n->pipe);
        }
        (void)im_buf_append(b, n->src.p, n->src.len);
        break;
    default: break;
    }
}

/* ---- Executor ---- */

typedef struct var {
    im_sv_t name;
    tv_t v;
} var_t;

typedef struct state {
    const char *name;
    const char *text;
    const tmpl_data_t *data;
    im_arena_t *arena;
    im_buf_t *out;
    im_err_t *err;
    bool failed;
    const node_t *node; /* current node for error context */
    var_t *vars;
    size_t nvars, capvars;
    int depth;
    int brk; /* 1 = break, 2 = continue */
    tv_t dot_root;
    tmap_t labels, ext_labels;
    const node_t *defs; /* N_LIST of N_DEFINE */
} state_t;

static void xerr(state_t *s, const char *fmt, ...) IM_PRINTF(2, 3);
static void xerr(state_t *s, const char *fmt, ...)
{
    if (s->failed) return;
    s->failed = true;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!s->node) {
        im_err_set(s->err, IM_EEXEC, "template: %s: %s", s->name, msg);
        return;
    }
    size_t pos = s->node->pos;
    int line = 1;
    size_t last_nl = (size_t)-1;
    for (size_t i = 0; i < pos; i++)
        if (s->text[i] == '\n') {
            line++;
            last_nl = i;
        }
    size_t col = last_nl == (size_t)-1 ? pos : pos - (last_nl + 1);
    im_buf_t ctx;
    im_buf_init(&ctx, 0);
    node_string(&ctx, s->node);
    char cbuf[256];
    snprintf(cbuf, sizeof cbuf, "%s", ctx.data ? ctx.data : "");
    im_buf_free(&ctx);
    im_err_set(s->err, IM_EEXEC, "template: %s:%d:%zu: executing \"%s\" at <%s>: %s", s->name, line,
               col, s->name, cbuf, msg);
}

static void *xalloc(state_t *s, size_t n)
{
    void *p = im_arena_alloc(s->arena, n ? n : 1);
    if (!p) im_oom(n);
    return p;
}

static tv_t mk_str(state_t *s, const char *p, size_t n)
{
    char *c = xalloc(s, n + 1);
    if (n) memcpy(c, p, n);
    c[n] = 0;
    return (tv_t){.k = TV_STRING, .u.s = {c, n}};
}
static tv_t mk_buf_str(state_t *s, im_buf_t *b)
{
    tv_t v = mk_str(s, b->data ? b->data : "", b->len);
    im_buf_free(b);
    return v;
}
static tv_t mk_float(double f)
{
    return (tv_t){.k = TV_FLOAT, .u.f = f};
}
static tv_t mk_int(int64_t i)
{
    return (tv_t){.k = TV_INT, .u.i = i};
}
static tv_t mk_bool(bool b)
{
    return (tv_t){.k = TV_BOOL, .u.b = b};
}
static const tv_t NOVAL = {.k = TV_INVALID};

static void labels_to_map(state_t *s, const im_labels_t *ls, tmap_t *m)
{
    m->n = ls ? ls->n : 0;
    m->e = xalloc(s, (m->n ? m->n : 1) * sizeof *m->e);
    for (size_t i = 0; i < m->n; i++) {
        m->e[i].key = im_istr_sv(ls->l[i].name);
        m->e[i].val = mk_str(s, ls->l[i].value->s, ls->l[i].value->len);
    }
}

static const tv_t *map_get(const tmap_t *m, im_sv_t key)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        size_t ml = IM_MIN(m->e[mid].key.len, key.len);
        int c = memcmp(m->e[mid].key.p, key.p, ml);
        if (c == 0) c = m->e[mid].key.len < key.len ? -1 : m->e[mid].key.len > key.len ? 1 : 0;
        if (c == 0) return &m->e[mid].val;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static void push(state_t *s, im_sv_t name, tv_t v)
{
    if (s->nvars == s->capvars) {
        s->capvars = s->capvars ? s->capvars * 2 : 16;
        s->vars = im_realloc(s->vars, s->capvars * sizeof *s->vars);
    }
    s->vars[s->nvars++] = (var_t){name, v};
}
static void set_var(state_t *s, im_sv_t name, tv_t v)
{
    for (size_t i = s->nvars; i-- > 0;)
        if (im_sv_eq(s->vars[i].name, name)) {
            s->vars[i].v = v;
            return;
        }
    xerr(s, "undefined variable: %.*s", (int)name.len, name.p);
}
static tv_t get_var(state_t *s, im_sv_t name)
{
    for (size_t i = s->nvars; i-- > 0;)
        if (im_sv_eq(s->vars[i].name, name)) return s->vars[i].v;
    xerr(s, "undefined variable: %.*s", (int)name.len, name.p);
    return NOVAL;
}

/* Go's truth. ok=false when the value cannot be tested. */
static bool truth(const tv_t *v, bool *ok)
{
    *ok = true;
    switch (v->k) {
    case TV_INVALID: *ok = false; return false;
    case TV_NILIF: return false;
    case TV_BOOL: return v->u.b;
    case TV_INT:
    case TV_DURATION: return v->u.i != 0;
    case TV_FLOAT: return v->u.f != 0;
    case TV_STRING:
    case TV_HTML: return v->u.s.len != 0;
    case TV_STRMAP:
    case TV_ANYMAP: return v->u.m && v->u.m->n != 0;
    case TV_SAMPLE: return v->u.smp != NULL;
    case TV_SAMPLES: return v->u.ss && v->u.ss->n != 0;
    case TV_DATA:
    case TV_TIME: return true;
    }
    return true;
}

static tv_t eval_pipeline(state_t *s, tv_t dot, const node_t *pipe);
static tv_t eval_command(state_t *s, tv_t dot, const node_t *cmd, const tv_t *final);

static tv_t eval_field(state_t *s, tv_t recv, im_sv_t field, bool has_args)
{
    if (has_args) {
        xerr(s, "%.*s has arguments but cannot be invoked as function", (int)field.len, field.p);
        return NOVAL;
    }
    switch (recv.k) {
    case TV_DATA:
        if (im_sv_eq_cstr(field, "Labels")) return (tv_t){.k = TV_STRMAP, .u.m = &s->labels};
        if (im_sv_eq_cstr(field, "ExternalLabels"))
            return (tv_t){.k = TV_STRMAP, .u.m = &s->ext_labels};
        if (im_sv_eq_cstr(field, "ExternalURL")) {
            const char *u = s->data->external_url ? s->data->external_url : "";
            return (tv_t){.k = TV_STRING, .u.s = {u, strlen(u)}};
        }
        if (im_sv_eq_cstr(field, "Value")) return mk_float(s->data->value);
        break;
    case TV_SAMPLE:
        if (!recv.u.smp) {
            xerr(s, "nil pointer evaluating *template.sample.%.*s", (int)field.len, field.p);
            return NOVAL;
        }
        if (im_sv_eq_cstr(field, "Labels"))
            return (tv_t){.k = TV_STRMAP, .u.m = &recv.u.smp->labels};
        if (im_sv_eq_cstr(field, "Value")) return mk_float(recv.u.smp->v);
        break;
    case TV_STRMAP: {
        const tv_t *v = map_get(recv.u.m, field);
        if (v) return *v;
        return (tv_t){.k = TV_STRING, .u.s = {"", 0}}; /* missingkey=zero */
    }
    case TV_ANYMAP: {
        const tv_t *v = map_get(recv.u.m, field);
        if (v) return *v;
        return (tv_t){.k = TV_NILIF};
    }
    case TV_INVALID:
    case TV_NILIF:
        xerr(s, "nil data; no entry for key \"%.*s\"", (int)field.len, field.p);
        return NOVAL;
    default: break;
    }
    if (recv.k == TV_DATA || recv.k == TV_SAMPLE) {
        xerr(s, "can't evaluate field %.*s in type %s", (int)field.len, field.p,
             recv.k == TV_SAMPLE ? "*template.sample" : tmpl__type_name(&recv));
        return NOVAL;
    }
    xerr(s, "can't evaluate field %.*s in type %s", (int)field.len, field.p,
         tmpl__type_name(&recv));
    return NOVAL;
}

static tv_t eval_field_chain(state_t *s, tv_t recv, const im_sv_t *idents, size_t n,
                             const node_t *cmd, const tv_t *final)
{
    bool args = (cmd && cmd->nkids > 1) || (final && final->k != TV_INVALID);
    for (size_t i = 0; i < n && !s->failed; i++)
        recv = eval_field(s, recv, idents[i], i == n - 1 && args);
    return s->failed ? NOVAL : recv;
}

/* ---- functions ---- */

typedef enum ptype { P_ANY, P_STR, P_SAMPLE, P_SAMPLES, P_REFLECT } ptype_t;

typedef struct fcall {
    state_t *s;
    tv_t *args;
    size_t n;
    const node_t *cmd;
    const char *name; /* the function's template name (for errors) */
    int variant;      /* func_def_t.variant: which of a family of functions */
} fcall_t;

typedef tv_t (*tfunc_t)(fcall_t *c, bool *errset);

typedef struct func_def {
    const char *name;
    tfunc_t fn;
    int nparams;   /* fixed params */
    bool variadic; /* last param repeats */
    ptype_t ptypes[4];
    bool lazy;   /* and/or: evaluates args itself */
    int variant; /* for functions that serve several names (f_cmp, f_escape, ...) */
} func_def_t;

static void call_err(fcall_t *c, const char *name, const char *fmt, ...) IM_PRINTF(3, 4);
static void call_err(fcall_t *c, const char *name, const char *fmt, ...)
{
    char msg[500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->s->node = c->cmd;
    xerr(c->s, "error calling %s: %s", name, msg);
}

static bool to_float(fcall_t *c, const char *fname, const tv_t *v, double *out)
{
    switch (v->k) {
    case TV_FLOAT: *out = v->u.f; return true;
    case TV_INT: *out = (double)v->u.i; return true;
    case TV_DURATION: *out = (double)v->u.i / 1e9; return true;
    case TV_STRING: {
        char *e;
        char tmp[128];
        size_t n = v->u.s.len;
        bool okp = n > 0 && n < sizeof tmp;
        if (okp) {
            memcpy(tmp, v->u.s.p, n);
            tmp[n] = 0;
            /* Go's ParseFloat: decimal, hex, inf, nan, underscores only with base prefix */
            double d;
            if (im_parse_float(tmp, n, &d) && !strchr(tmp, ' ')) {
                *out = d;
                return true;
            }
            errno = 0;
            d = strtod(tmp, &e);
            if (*e == 0 && !isspace((unsigned char)tmp[0])) {
                if (errno == ERANGE && fabs(d) > 1) {
                    im_buf_t q;
                    im_buf_init(&q, 0);
                    tmpl__quote(&q, v->u.s.p, v->u.s.len);
                    call_err(c, fname, "strconv.ParseFloat: parsing %s: value out of range",
                             q.data);
                    im_buf_free(&q);
                    return false;
                }
                *out = d;
                return true;
            }
        }
        im_buf_t q;
        im_buf_init(&q, 0);
        tmpl__quote(&q, v->u.s.p, v->u.s.len);
        call_err(c, fname, "strconv.ParseFloat: parsing %s: invalid syntax", q.data);
        im_buf_free(&q);
        return false;
    }
    case TV_INVALID:
    case TV_NILIF: call_err(c, fname, "can't convert <nil> to float"); return false;
    default: call_err(c, fname, "can't convert %s to float", tmpl__type_name(v)); return false;
    }
}

/* humanize, humanize1024, humanizeDuration, humanizePercentage (variant: the
 * index in fmts). */
static tv_t f_humanize(fcall_t *c, bool *e)
{
    (void)e;
    static size_t (*const fmts[])(double, char *, size_t) = {
        tmpl_humanize, tmpl_humanize1024, tmpl_humanize_duration, tmpl_humanize_percentage};
    size_t (*f)(double, char *, size_t) = fmts[c->variant];
    double v;
    if (!to_float(c, c->name, &c->args[0], &v)) return NOVAL;
    char buf[128];
    size_t n = f(v, buf, sizeof buf);
    return mk_str(c->s, buf, n);
}

static size_t fmt_g4_buf(double v, char *buf, size_t cap, const char *suffix)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    tmpl__fmt_g4(&b, v);
    (void)im_buf_puts(&b, suffix);
    size_t n = (size_t)snprintf(buf, cap, "%s", b.data);
    im_buf_free(&b);
    return n >= cap ? cap - 1 : n;
}

size_t tmpl_humanize(double v, char *buf, size_t cap)
{
    if (v == 0 || isnan(v) || isinf(v)) return fmt_g4_buf(v, buf, cap, "");
    static const char *big[] = {"k", "M", "G", "T", "P", "E", "Z", "Y"};
    static const char *small[] = {"m", "u", "n", "p", "f", "a", "z", "y"};
    const char *prefix = "";
    if (fabs(v) >= 1) {
        for (size_t i = 0; i < IM_ARRAY_LEN(big); i++) {
            if (fabs(v) < 1000) break;
            prefix = big[i];
            v /= 1000;
        }
    } else {
        for (size_t i = 0; i < IM_ARRAY_LEN(small); i++) {
            if (fabs(v) >= 1) break;
            prefix = small[i];
            v *= 1000;
        }
    }
    return fmt_g4_buf(v, buf, cap, prefix);
}

size_t tmpl_humanize1024(double v, char *buf, size_t cap)
{
    if (fabs(v) <= 1 || isnan(v) || isinf(v)) return fmt_g4_buf(v, buf, cap, "");
    static const char *big[] = {"ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"};
    const char *prefix = "";
    for (size_t i = 0; i < IM_ARRAY_LEN(big); i++) {
        if (fabs(v) < 1024) break;
        prefix = big[i];
        v /= 1024;
    }
    return fmt_g4_buf(v, buf, cap, prefix);
}

size_t tmpl_humanize_duration(double v, char *buf, size_t cap)
{
    if (isnan(v) || isinf(v)) return fmt_g4_buf(v, buf, cap, "");
    if (v == 0) return fmt_g4_buf(v, buf, cap, "s");
    if (fabs(v) >= 1) {
        const char *sign = "";
        if (v < 0) {
            sign = "-";
            v = -v;
        }
        double dd = v > 9.2e18 ? 9.2e18 : v;
        int64_t d = (int64_t)dd;
        int64_t sec = d % 60, min = (d / 60) % 60, hrs = (d / 3600) % 24, days = d / 86400;
        if (days)
            return (size_t)snprintf(buf, cap,
                                    "%s%" PRId64 "d %" PRId64 "h %" PRId64 "m %" PRId64 "s", sign,
                                    days, hrs, min, sec);
        if (hrs)
            return (size_t)snprintf(buf, cap, "%s%" PRId64 "h %" PRId64 "m %" PRId64 "s", sign, hrs,
                                    min, sec);
        if (min) return (size_t)snprintf(buf, cap, "%s%" PRId64 "m %" PRId64 "s", sign, min, sec);
        char tmp[64];
        fmt_g4_buf(v, tmp, sizeof tmp, "s");
        return (size_t)snprintf(buf, cap, "%s%s", sign, tmp);
    }
    static const char *small[] = {"m", "u", "n", "p", "f", "a", "z", "y"};
    const char *prefix = "";
    for (size_t i = 0; i < IM_ARRAY_LEN(small); i++) {
        if (fabs(v) >= 1) break;
        prefix = small[i];
        v *= 1000;
    }
    char suf[8];
    snprintf(suf, sizeof suf, "%ss", prefix);
    return fmt_g4_buf(v, buf, cap, suf);
}

size_t tmpl_humanize_percentage(double v, char *buf, size_t cap)
{
    return fmt_g4_buf(v * 100, buf, cap, "%");
}

/* Prometheus' floatToTime: seconds -> nanoseconds (must fit int64) ->
 * model.Time, i.e. millisecond precision. */
static bool float_to_time(fcall_t *c, const char *fname, double v, int64_t *sec, int64_t *nsec)
{
    double ts = v * 1e9;
    if (ts >= 9.223372036854775807e18 || ts < -9.223372036854775808e18) {
        char tmp[IM_FLOAT_BUF];
        im_fmt_float_go(v, 'g', tmp, sizeof tmp);
        call_err(c, fname,
                 "%s cannot be represented as a nanoseconds timestamp since it overflows int64",
                 tmp);
        return false;
    }
    int64_t ms = (int64_t)ts / 1000000;
    *sec = ms / 1000;
    *nsec = (ms % 1000) * 1000000;
    if (*nsec < 0) {
        *nsec += 1000000000;
        *sec -= 1;
    }
    return true;
}

static tv_t f_humanize_timestamp(fcall_t *c, bool *e)
{
    (void)e;
    double v;
    if (!to_float(c, "humanizeTimestamp", &c->args[0], &v)) return NOVAL;
    im_buf_t b;
    im_buf_init(&b, 0);
    if (isnan(v) || isinf(v)) {
        tmpl__fmt_g4(&b, v);
        return mk_buf_str(c->s, &b);
    }
    int64_t sec = 0, nsec = 0;
    if (!float_to_time(c, "humanizeTimestamp", v, &sec, &nsec)) {
        im_buf_free(&b);
        return NOVAL;
    }
    tmpl__fmt_time(&b, sec, nsec);
    return mk_buf_str(c->s, &b);
}

static tv_t f_to_time(fcall_t *c, bool *e)
{
    (void)e;
    double v;
    if (!to_float(c, "toTime", &c->args[0], &v)) return NOVAL;
    if (isnan(v) || isinf(v)) {
        call_err(c, "toTime", "value is NaN or Inf");
        return NOVAL;
    }
    int64_t sec = 0, nsec = 0;
    if (!float_to_time(c, "toTime", v, &sec, &nsec)) return NOVAL;
    return (tv_t){.k = TV_TIME, .u.f = (double)sec + (double)nsec / 1e9};
}

static tv_t f_to_duration(fcall_t *c, bool *e)
{
    (void)e;
    double v;
    if (!to_float(c, "toDuration", &c->args[0], &v)) return NOVAL;
    if (isnan(v) || isinf(v)) {
        call_err(c, "toDuration", "value is NaN or Inf");
        return NOVAL;
    }
    double ns = round(v * 1e9);
    if (ns > 9.2e18 || ns < -9.2e18) {
        call_err(c, "toDuration", "value out of range");
        return NOVAL;
    }
    return (tv_t){.k = TV_DURATION, .u.i = (int64_t)ns};
}

static tv_t f_parse_duration(fcall_t *c, bool *e)
{
    (void)e;
    int64_t ms;
    im_err_t err;
    if (im_duration_parse(c->args[0].u.s.p, c->args[0].u.s.len, &ms, &err) != IM_OK) {
        call_err(c, "parseDuration", "not a valid duration string: \"%.*s\"",
                 (int)c->args[0].u.s.len, c->args[0].u.s.p);
        return NOVAL;
    }
    return mk_float((double)ms / 1000.0);
}

static tv_t f_first(fcall_t *c, bool *e)
{
    (void)e;
    const tsamples_t *ss = c->args[0].u.ss;
    if (ss && ss->n > 0) return (tv_t){.k = TV_SAMPLE, .u.smp = ss->v[0]};
    call_err(c, "first", "first() called on vector with no elements");
    return NOVAL;
}

static tv_t f_label(fcall_t *c, bool *e)
{
    (void)e;
    const tsample_t *smp = c->args[1].u.smp;
    if (!smp) {
        call_err(c, "label", "runtime error: invalid memory address or nil pointer dereference");
        return NOVAL;
    }
    const tv_t *v = map_get(&smp->labels, c->args[0].u.s);
    return v ? *v : (tv_t){.k = TV_STRING, .u.s = {"", 0}};
}

static tv_t f_value(fcall_t *c, bool *e)
{
    (void)e;
    if (!c->args[0].u.smp) {
        call_err(c, "value", "runtime error: invalid memory address or nil pointer dereference");
        return NOVAL;
    }
    return mk_float(c->args[0].u.smp->v);
}

static tv_t f_strvalue(fcall_t *c, bool *e)
{
    (void)e;
    if (!c->args[0].u.smp) {
        call_err(c, "strvalue", "runtime error: invalid memory address or nil pointer dereference");
        return NOVAL;
    }
    const tv_t *v = map_get(&c->args[0].u.smp->labels, IM_SV("__value__"));
    return v ? *v : (tv_t){.k = TV_STRING, .u.s = {"", 0}};
}

static tv_t f_sort_by_label(fcall_t *c, bool *e)
{
    (void)e;
    const tsamples_t *in = c->args[1].u.ss;
    tsamples_t *o = xalloc(c->s, sizeof *o);
    o->n = in ? in->n : 0;
    o->v = xalloc(c->s, (o->n ? o->n : 1) * sizeof *o->v);
    if (o->n) memcpy(o->v, in->v, o->n * sizeof *o->v);
    im_sv_t key = c->args[0].u.s;
    /* stable insertion sort */
    for (size_t i = 1; i < o->n; i++) {
        tsample_t *x = o->v[i];
        const tv_t *xv = map_get(&x->labels, key);
        im_sv_t xs = xv ? xv->u.s : (im_sv_t){"", 0};
        size_t j = i;
        while (j > 0) {
            const tv_t *yv = map_get(&o->v[j - 1]->labels, key);
            im_sv_t ys = yv ? yv->u.s : (im_sv_t){"", 0};
            size_t ml = IM_MIN(xs.len, ys.len);
            int cmp = ml ? memcmp(ys.p, xs.p, ml) : 0;
            if (cmp == 0) cmp = ys.len > xs.len ? 1 : ys.len < xs.len ? -1 : 0;
            if (cmp <= 0) break;
            o->v[j] = o->v[j - 1];
            j--;
        }
        o->v[j] = x;
    }
    return (tv_t){.k = TV_SAMPLES, .u.ss = o};
}

static tv_t f_args(fcall_t *c, bool *e)
{
    (void)e;
    tmap_t *m = xalloc(c->s, sizeof *m);
    m->n = c->n;
    m->e = xalloc(c->s, (c->n ? c->n : 1) * sizeof *m->e);
    for (size_t i = 0; i < c->n; i++) {
        char k[32];
        int kl = snprintf(k, sizeof k, "arg%zu", i);
        tv_t ks = mk_str(c->s, k, (size_t)kl);
        m->e[i].key = ks.u.s;
        m->e[i].val = c->args[i];
    }
    /* sort keys (arg10 < arg2) */
    for (size_t i = 1; i < m->n; i++) {
        tmap_entry_t x = m->e[i];
        size_t j = i;
        while (j > 0 && strcmp(m->e[j - 1].key.p, x.key.p) > 0) {
            m->e[j] = m->e[j - 1];
            j--;
        }
        m->e[j] = x;
    }
    return (tv_t){.k = TV_ANYMAP, .u.m = m};
}

/* Go's regexp.MustCompile (RE2 syntax, unanchored; labels/regex.h): a bad pattern
 * is a template error with Go's panic text. */
static im_regex_t *compile_re(fcall_t *c, const char *fname, im_sv_t pat)
{
    im_regex_t *re = NULL;
    im_err_t e;
    im_err_clear(&e);
    if (im_regex_compile(pat.p, pat.len, IM_REGEX_SEARCH, &re, &e) != IM_OK) {
        call_err(c, fname, "regexp: Compile(`%.*s`): %s", (int)IM_MIN(pat.len, (size_t)200), pat.p,
                 e.msg);
        return NULL;
    }
    return re;
}

static tv_t f_match(fcall_t *c, bool *e)
{
    (void)e;
    im_regex_t *re = compile_re(c, "match", c->args[0].u.s);
    if (!re) return NOVAL;
    im_err_t err;
    im_err_clear(&err);
    int rc = im_regex_match(re, c->args[1].u.s.p, c->args[1].u.s.len, &err);
    im_regex_free(re);
    if (rc < 0) {
        call_err(c, "match", "%s", err.msg);
        return NOVAL;
    }
    return mk_bool(rc == 1);
}

/* Go's regexp.ReplaceAllString: $1, ${1}, $name, $$ in the replacement; an empty
 * match right after the previous match is not replaced; the search always moves on
 * by at least one rune. */
static tv_t f_re_replace_all(fcall_t *c, bool *e)
{
    (void)e;
    im_regex_t *re = compile_re(c, "reReplaceAll", c->args[0].u.s);
    if (!re) return NOVAL;
    im_sv_t repl = c->args[1].u.s, text = c->args[2].u.s;
    im_buf_t out;
    im_buf_init(&out, TMPL_MAX_OUTPUT);
    size_t *ov = im_malloc(2 * ((size_t)im_regex_groups(re) + 1) * sizeof *ov);
    size_t search = 0, last_end = 0;
    im_err_t err;
    im_err_clear(&err);
    int rc = 0;
    while (search <= text.len) {
        rc = im_regex_exec(re, text.p, text.len, search, ov, &err);
        if (rc <= 0) break;
        size_t ms = ov[0], me = ov[1];
        (void)im_buf_append(&out, text.p + last_end, ms - last_end);
        if (me > last_end || ms == 0) im_regex_expand(re, repl.p, repl.len, text.p, ov, &out);
        last_end = me;
        size_t width = 0;
        if (search < text.len) {
            width = 1;
            while (search + width < text.len &&
                   ((unsigned char)text.p[search + width] & 0xC0) == 0x80 && width < 4)
                width++;
        }
        if (search + width > me)
            search += width;
        else if (search + 1 > me)
            search++;
        else
            search = me;
    }
    im_free(ov);
    im_regex_free(re);
    if (rc < 0) {
        im_buf_free(&out);
        call_err(c, "reReplaceAll", "%s", err.msg);
        return NOVAL;
    }
    if (last_end < text.len) (void)im_buf_append(&out, text.p + last_end, text.len - last_end);
    return mk_buf_str(c->s, &out);
}

static tv_t f_safe_html(fcall_t *c, bool *e)
{
    (void)e;
    tv_t v = c->args[0];
    v.k = TV_HTML;
    return v;
}

/* toUpper (variant 0), toLower (1), title (2). */
static tv_t f_map_case(fcall_t *c, bool *e)
{
    (void)e;
    int mode = c->variant;
    im_sv_t in = c->args[0].u.s;
    char *o = xalloc(c->s, in.len + 1);
    bool prev_letter = false;
    for (size_t i = 0; i < in.len; i++) {
        unsigned char ch = (unsigned char)in.p[i];
        if (mode == 0)
            o[i] = (char)((ch >= 'a' && ch <= 'z') ? ch - 32 : ch);
        else if (mode == 1)
            o[i] = (char)((ch >= 'A' && ch <= 'Z') ? ch + 32 : ch);
        else {
            o[i] = (char)((!prev_letter && ch >= 'a' && ch <= 'z') ? ch - 32 : ch);
            /* strings.Title: letters, digits, '_' and non-ASCII continue a word;
             * other ASCII are separators */
            prev_letter = is_alnum(ch) || ch == '\'';
            if (ch == '\'') prev_letter = true;
        }
    }
    o[in.len] = 0;
    return (tv_t){.k = TV_STRING, .u.s = {o, in.len}};
}

static void query_escape(im_buf_t *b, im_sv_t s)
{
    for (size_t i = 0; i < s.len; i++) {
        unsigned char ch = (unsigned char)s.p[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.' || ch == '~')
            (void)im_buf_putc(b, (char)ch);
        else if (ch == ' ')
            (void)im_buf_putc(b, '+');
        else
            (void)im_buf_printf(b, "%%%02X", ch);
    }
}

/* graphLink (variant 0: the graph tab) and tableLink (1: the table tab). */
static tv_t f_link(fcall_t *c, bool *e)
{
    (void)e;
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_puts(&b, "/graph?g0.expr=");
    query_escape(&b, c->args[0].u.s);
    (void)im_buf_printf(&b, "&g0.tab=%d", c->variant);
    return mk_buf_str(c->s, &b);
}
static tv_t f_external_url(fcall_t *c, bool *e)
{
    (void)e;
    const char *u = c->s->data->external_url ? c->s->data->external_url : "";
    return mk_str(c->s, u, strlen(u));
}
static tv_t f_path_prefix(fcall_t *c, bool *e)
{
    (void)e;
    const char *u = c->s->data->external_url ? c->s->data->external_url : "";
    const char *p = strstr(u, "://");
    if (!p) return mk_str(c->s, "", 0);
    p = strchr(p + 3, '/');
    if (!p) return mk_str(c->s, "", 0);
    size_t n = strcspn(p, "?#");
    return mk_str(c->s, p, n);
}

static tv_t f_strip_port(fcall_t *c, bool *e)
{
    (void)e;
    im_sv_t h = c->args[0].u.s;
    if (h.len && h.p[0] == '[') {
        const char *rb = memchr(h.p, ']', h.len);
        if (rb) return mk_str(c->s, h.p + 1, (size_t)(rb - h.p) - 1);
    }
    const char *colon = NULL;
    size_t ncolons = 0;
    for (size_t i = 0; i < h.len; i++)
        if (h.p[i] == ':') {
            colon = h.p + i;
            ncolons++;
        }
    if (ncolons == 1) return mk_str(c->s, h.p, (size_t)(colon - h.p));
    return mk_str(c->s, h.p, h.len);
}

static tv_t f_strip_domain(fcall_t *c, bool *e)
{
    (void)e;
    im_sv_t h = c->args[0].u.s;
    /* host[:port] -> first label of host, port kept */
    size_t ncolons = 0, colon = h.len;
    for (size_t i = 0; i < h.len; i++)
        if (h.p[i] == ':') {
            ncolons++;
            colon = i;
        }
    if (ncolons > 1 || (h.len && h.p[0] == '[')) return mk_str(c->s, h.p, h.len);
    size_t hl = ncolons ? colon : h.len;
    /* an IPv4 address is kept whole */
    bool ip = hl > 0;
    for (size_t i = 0; i < hl; i++)
        if (!((h.p[i] >= '0' && h.p[i] <= '9') || h.p[i] == '.')) ip = false;
    if (ip) return mk_str(c->s, h.p, h.len);
    const char *dot = memchr(h.p, '.', hl);
    if (!dot) return mk_str(c->s, h.p, h.len);
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_append(&b, h.p, (size_t)(dot - h.p));
    if (ncolons) (void)im_buf_append(&b, h.p + colon, h.len - colon);
    return mk_buf_str(c->s, &b);
}

static void free_samples(tmpl_sample_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) im_labels_unref(v[i].labels);
    im_free(v);
}

static tv_t f_query(fcall_t *c, bool *e)
{
    (void)e;
    state_t *s = c->s;
    if (!s->data->query) {
        call_err(c, "query", "queries are not available here");
        return NOVAL;
    }
    tmpl_sample_t *res = NULL;
    size_t n = 0;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = s->data->query(s->data->query_ctx, c->args[0].u.s.p, c->args[0].u.s.len,
                              s->data->t_ms, &res, &n, &err);
    if (rc != IM_OK) {
        call_err(c, "query", "%s", err.msg[0] ? err.msg : im_rc_str(rc));
        if (res) free_samples(res, n);
        return NOVAL;
    }
    tsamples_t *ss = xalloc(s, sizeof *ss);
    ss->n = n;
    ss->v = xalloc(s, (n ? n : 1) * sizeof *ss->v);
    for (size_t i = 0; i < n; i++) {
        tsample_t *smp = xalloc(s, sizeof *smp);
        labels_to_map(s, res[i].labels, &smp->labels);
        /* keys point into interned strings held by the labels: copy them */
        for (size_t k = 0; k < smp->labels.n; k++) {
            tv_t ks = mk_str(s, smp->labels.e[k].key.p, smp->labels.e[k].key.len);
            smp->labels.e[k].key = ks.u.s;
        }
        smp->v = res[i].v;
        ss->v[i] = smp;
    }
    free_samples(res, n);
    return (tv_t){.k = TV_SAMPLES, .u.ss = ss};
}

/* Go builtins */

typedef enum bkind { BK_INVALID, BK_BOOL, BK_INT, BK_FLOAT, BK_STRING, BK_OTHER } bkind_t;
static bkind_t basic_kind(const tv_t *v)
{
    switch (v->k) {
    case TV_BOOL: return BK_BOOL;
    case TV_INT:
    case TV_DURATION: return BK_INT;
    case TV_FLOAT: return BK_FLOAT;
    case TV_STRING:
    case TV_HTML: return BK_STRING;
    case TV_INVALID:
    case TV_NILIF: return BK_INVALID;
    default: return BK_OTHER;
    }
}

static tv_t f_not(fcall_t *c, bool *e)
{
    (void)e;
    bool ok;
    bool t = truth(&c->args[0], &ok);
    return mk_bool(!t);
}

static tv_t f_len(fcall_t *c, bool *e)
{
    (void)e;
    const tv_t *v = &c->args[0];
    switch (v->k) {
    case TV_STRING:
    case TV_HTML: return mk_int((int64_t)v->u.s.len);
    case TV_STRMAP:
    case TV_ANYMAP: return mk_int((int64_t)(v->u.m ? v->u.m->n : 0));
    case TV_SAMPLES: return mk_int((int64_t)(v->u.ss ? v->u.ss->n : 0));
    case TV_INVALID:
    case TV_NILIF: call_err(c, "len", "len of nil pointer"); return NOVAL;
    default: call_err(c, "len", "len of type %s", tmpl__type_name(v)); return NOVAL;
    }
}

static bool index_of(fcall_t *c, const char *fname, const tv_t *ix, size_t cap, int64_t *out)
{
    if (ix->k != TV_INT) {
        if (ix->k == TV_INVALID || ix->k == TV_NILIF)
            call_err(c, fname, "cannot index slice/array with nil");
        else
            call_err(c, fname, "cannot index slice/array with type %s", tmpl__type_name(ix));
        return false;
    }
    if (ix->u.i < 0 || (uint64_t)ix->u.i >= cap) {
        call_err(c, fname, "error calling index: index out of range: %" PRId64, ix->u.i);
        return false;
    }
    *out = ix->u.i;
    return true;
}

static tv_t f_index(fcall_t *c, bool *e)
{
    (void)e;
    tv_t item = c->args[0];
    for (size_t i = 1; i < c->n && !c->s->failed; i++) {
        const tv_t *ix = &c->args[i];
        switch (item.k) {
        case TV_STRMAP:
        case TV_ANYMAP: {
            if (basic_kind(ix) != BK_STRING) {
                call_err(c, "index", "value has type %s; should be string", tmpl__type_name(ix));
                return NOVAL;
            }
            const tv_t *v = map_get(item.u.m, ix->u.s);
            item = v                     ? *v
                   : item.k == TV_STRMAP ? (tv_t){.k = TV_STRING, .u.s = {"", 0}}
                                         : (tv_t){.k = TV_NILIF};
            break;
        }
        case TV_SAMPLES: {
            int64_t k;
            if (!index_of(c, "index", ix, item.u.ss ? item.u.ss->n : 0, &k)) return NOVAL;
            item = (tv_t){.k = TV_SAMPLE, .u.smp = item.u.ss->v[k]};
            break;
        }
        case TV_STRING: {
            int64_t k;
            if (!index_of(c, "index", ix, item.u.s.len, &k)) return NOVAL;
            item = mk_int((unsigned char)item.u.s.p[k]);
            break;
        }
        case TV_INVALID:
        case TV_NILIF: call_err(c, "index", "index of untyped nil"); return NOVAL;
        default:
            call_err(c, "index", "can't index item of type %s", tmpl__type_name(&item));
            return NOVAL;
        }
    }
    return item;
}

static tv_t f_slice(fcall_t *c, bool *e)
{
    (void)e;
    tv_t item = c->args[0];
    if (item.k != TV_STRING && item.k != TV_SAMPLES) {
        call_err(c, "slice", "can't slice item of type %s", tmpl__type_name(&item));
        return NOVAL;
    }
    size_t len = item.k == TV_STRING ? item.u.s.len : (item.u.ss ? item.u.ss->n : 0);
    int64_t idx[3] = {0, (int64_t)len, (int64_t)len};
    if (c->n > 4 || (item.k == TV_STRING && c->n > 3)) {
        call_err(c, "slice", "too many slice indexes: %zu", c->n - 1);
        return NOVAL;
    }
    for (size_t i = 1; i < c->n; i++) {
        if (!index_of(c, "slice", &c->args[i], len + 1, &idx[i - 1])) return NOVAL;
    }
    if (idx[0] > idx[1]) {
        call_err(c, "slice", "invalid slice index: %" PRId64 " > %" PRId64, idx[0], idx[1]);
        return NOVAL;
    }
    if (item.k == TV_STRING) return mk_str(c->s, item.u.s.p + idx[0], (size_t)(idx[1] - idx[0]));
    tsamples_t *o = xalloc(c->s, sizeof *o);
    o->n = (size_t)(idx[1] - idx[0]);
    o->v = item.u.ss->v + idx[0];
    return (tv_t){.k = TV_SAMPLES, .u.ss = o};
}

/* print (variant 0) and println (1). */
static tv_t f_print(fcall_t *c, bool *e)
{
    (void)e;
    im_buf_t b;
    im_buf_init(&b, TMPL_MAX_OUTPUT);
    tmpl__sprint(&b, c->args, c->n, c->variant == 1);
    return mk_buf_str(c->s, &b);
}
static tv_t f_printf(fcall_t *c, bool *e)
{
    (void)e;
    im_buf_t b;
    im_buf_init(&b, TMPL_MAX_OUTPUT);
    tmpl__sprintf(&b, c->args[0].u.s.p, c->args[0].u.s.len, c->args + 1, c->n - 1);
    return mk_buf_str(c->s, &b);
}

static void html_escape(im_buf_t *b, const tv_t *args, size_t n, int mode)
{
    im_buf_t tmp;
    im_buf_init(&tmp, TMPL_MAX_OUTPUT);
    if (n == 1 && basic_kind(&args[0]) == BK_STRING)
        (void)im_buf_append(&tmp, args[0].u.s.p, args[0].u.s.len);
    else
        tmpl__sprint(&tmp, args, n, false);
    for (size_t i = 0; i < tmp.len; i++) {
        char ch = tmp.data[i];
        if (mode == 0) {
            switch (ch) {
            case '"': (void)im_buf_puts(b, "&#34;"); break;
            case '\'': (void)im_buf_puts(b, "&#39;"); break;
            case '&': (void)im_buf_puts(b, "&amp;"); break;
            case '<': (void)im_buf_puts(b, "&lt;"); break;
            case '>': (void)im_buf_puts(b, "&gt;"); break;
            case '\0': (void)im_buf_puts(b, "\xEF\xBF\xBD"); break;
            default: (void)im_buf_putc(b, ch);
            }
        } else if (mode == 1) {
            switch (ch) {
            case '\\': (void)im_buf_puts(b, "\\\\"); break;
            case '\'': (void)im_buf_puts(b, "\\'"); break;
            case '"': (void)im_buf_puts(b, "\\\""); break;
            case '<': (void)im_buf_puts(b, "\\u003C"); break;
            case '>': (void)im_buf_puts(b, "\\u003E"); break;
            case '&': (void)im_buf_puts(b, "\\u0026"); break;
            case '=': (void)im_buf_puts(b, "\\u003D"); break;
            case '\n': (void)im_buf_puts(b, "\\n"); break;
            case '\r': (void)im_buf_puts(b, "\\r"); break;
            case '\t': (void)im_buf_puts(b, "\\t"); break;
            default:
                if ((unsigned char)ch < 0x20)
                    (void)im_buf_printf(b, "\\u%04X", (unsigned char)ch);
                else
                    (void)im_buf_putc(b, ch);
            }
        } else {
            im_sv_t sv = {tmp.data + i, 1};
            query_escape(b, sv);
        }
    }
    im_buf_free(&tmp);
}
/* html (variant 0), js (1), urlquery (2). */
static tv_t f_escape(fcall_t *c, bool *e)
{
    (void)e;
    im_buf_t b;
    im_buf_init(&b, TMPL_MAX_OUTPUT);
    html_escape(&b, c->args, c->n, c->variant);
    return mk_buf_str(c->s, &b);
}

/* Compares two basic values of the same kind: -1, 0, 1, or 2 when unordered
 * (NaN). Sets *ok = false with Go's error when they cannot be compared. */
static int cmp_vals(fcall_t *c, const char *fname, const tv_t *a, const tv_t *b, bool eq_only,
                    bool *ok)
{
    *ok = false;
    bkind_t ka = basic_kind(a), kb = basic_kind(b);
    if (eq_only) {
        if (ka != kb) {
            if (ka != BK_INVALID && kb != BK_INVALID) {
                call_err(c, fname, "incompatible types for comparison");
                return 0;
            }
            *ok = true;
            return 1;
        }
        if (ka == BK_INVALID) {
            *ok = true;
            return 0;
        }
        if (ka == BK_OTHER) {
            if (a->k != b->k) {
                call_err(c, fname, "incompatible types for comparison");
                return 0;
            }
            if (a->k == TV_STRMAP || a->k == TV_ANYMAP || a->k == TV_SAMPLES || a->k == TV_DATA) {
                call_err(c, fname, "non-comparable type %s", tmpl__type_name(a));
                return 0;
            }
            *ok = true;
            return a->u.smp == b->u.smp ? 0 : 1;
        }
    } else {
        if (ka == BK_OTHER || ka == BK_INVALID || kb == BK_OTHER || kb == BK_INVALID) {
            call_err(c, fname, "invalid type for comparison");
            return 0;
        }
        if (ka != kb) {
            call_err(c, fname, "incompatible types for comparison");
            return 0;
        }
        if (ka == BK_BOOL) {
            call_err(c, fname, "invalid type for comparison");
            return 0;
        }
    }
    *ok = true;
    switch (ka) {
    case BK_BOOL: return a->u.b == b->u.b ? 0 : 1;
    case BK_INT: return a->u.i < b->u.i ? -1 : a->u.i > b->u.i ? 1 : 0;
    case BK_FLOAT:
        if (a->u.f < b->u.f) return -1;
        if (a->u.f > b->u.f) return 1;
        if (a->u.f == b->u.f) return 0;
        return 2;
    case BK_STRING: {
        size_t ml = IM_MIN(a->u.s.len, b->u.s.len);
        int r = ml ? memcmp(a->u.s.p, b->u.s.p, ml) : 0;
        if (r) return r < 0 ? -1 : 1;
        return a->u.s.len < b->u.s.len ? -1 : a->u.s.len > b->u.s.len ? 1 : 0;
    }
    default: return 0;
    }
}

static tv_t f_eq(fcall_t *c, bool *e)
{
    (void)e;
    if (c->n < 2) {
        call_err(c, "eq", "missing argument for comparison");
        return NOVAL;
    }
    for (size_t i = 1; i < c->n; i++) {
        bool ok;
        int r = cmp_vals(c, "eq", &c->args[0], &c->args[i], true, &ok);
        if (!ok) return NOVAL;
        if (r == 0) return mk_bool(true);
    }
    return mk_bool(false);
}
/* ne, lt, le, gt, ge (variant: enum cmp_op). As Go's: le = lt || eq, gt = !le
 * and ge = !lt, so an unordered pair (NaN) is gt and ge but neither lt nor le. */
enum cmp_op { CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE };
static tv_t f_cmp(fcall_t *c, bool *e)
{
    (void)e;
    bool ok;
    int r = cmp_vals(c, c->name, &c->args[0], &c->args[1], c->variant == CMP_NE, &ok);
    if (!ok) return NOVAL;
    bool lt = r == -1, le = lt || r == 0;
    switch (c->variant) {
    case CMP_NE: return mk_bool(r != 0);
    case CMP_LT: return mk_bool(lt);
    case CMP_LE: return mk_bool(le);
    case CMP_GT: return mk_bool(!le);
    default: return mk_bool(!lt);
    }
}

static const func_def_t funcs[] = {
    /* Go builtins */
    {"and", NULL, 1, true, {P_REFLECT, P_REFLECT}, true, 0},
    {"or", NULL, 1, true, {P_REFLECT, P_REFLECT}, true, 0},
    {"not", f_not, 1, false, {P_REFLECT}, false, 0},
    {"len", f_len, 1, false, {P_REFLECT}, false, 0},
    {"index", f_index, 1, true, {P_REFLECT, P_REFLECT}, false, 0},
    {"slice", f_slice, 1, true, {P_REFLECT, P_REFLECT}, false, 0},
    {"print", f_print, 0, true, {P_ANY}, false, 0},
    {"printf", f_printf, 1, true, {P_STR, P_ANY}, false, 0},
    {"println", f_print, 0, true, {P_ANY}, false, 1},
    {"html", f_escape, 0, true, {P_ANY}, false, 0},
    {"js", f_escape, 0, true, {P_ANY}, false, 1},
    {"urlquery", f_escape, 0, true, {P_ANY}, false, 2},
    {"eq", f_eq, 1, true, {P_REFLECT, P_REFLECT}, false, 0},
    {"ne", f_cmp, 2, false, {P_REFLECT, P_REFLECT}, false, CMP_NE},
    {"lt", f_cmp, 2, false, {P_REFLECT, P_REFLECT}, false, CMP_LT},
    {"le", f_cmp, 2, false, {P_REFLECT, P_REFLECT}, false, CMP_LE},
    {"gt", f_cmp, 2, false, {P_REFLECT, P_REFLECT}, false, CMP_GT},
    {"ge", f_cmp, 2, false, {P_REFLECT, P_REFLECT}, false, CMP_GE},
    /* Prometheus */
    {"query", f_query, 1, false, {P_STR}, false, 0},
    {"first", f_first, 1, false, {P_SAMPLES}, false, 0},
    {"label", f_label, 2, false, {P_STR, P_SAMPLE}, false, 0},
    {"value", f_value, 1, false, {P_SAMPLE}, false, 0},
    {"strvalue", f_strvalue, 1, false, {P_SAMPLE}, false, 0},
    {"args", f_args, 0, true, {P_ANY}, false, 0},
    {"reReplaceAll", f_re_replace_all, 3, false, {P_STR, P_STR, P_STR}, false, 0},
    {"safeHtml", f_safe_html, 1, false, {P_STR}, false, 0},
    {"match", f_match, 2, false, {P_STR, P_STR}, false, 0},
    {"title", f_map_case, 1, false, {P_STR}, false, 2},
    {"toUpper", f_map_case, 1, false, {P_STR}, false, 0},
    {"toLower", f_map_case, 1, false, {P_STR}, false, 1},
    {"graphLink", f_link, 1, false, {P_STR}, false, 0},
    {"tableLink", f_link, 1, false, {P_STR}, false, 1},
    {"sortByLabel", f_sort_by_label, 2, false, {P_STR, P_SAMPLES}, false, 0},
    {"humanize", f_humanize, 1, false, {P_ANY}, false, 0},
    {"humanize1024", f_humanize, 1, false, {P_ANY}, false, 1},
    {"humanizeDuration", f_humanize, 1, false, {P_ANY}, false, 2},
    {"humanizePercentage", f_humanize, 1, false, {P_ANY}, false, 3},
    {"humanizeTimestamp", f_humanize_timestamp, 1, false, {P_ANY}, false, 0},
    {"toTime", f_to_time, 1, false, {P_ANY}, false, 0},
    {"toDuration", f_to_duration, 1, false, {P_ANY}, false, 0},
    {"parseDuration", f_parse_duration, 1, false, {P_STR}, false, 0},
    {"stripPort", f_strip_port, 1, false, {P_STR}, false, 0},
    {"stripDomain", f_strip_domain, 1, false, {P_STR}, false, 0},
    {"externalURL", f_external_url, 0, false, {P_ANY}, false, 0},
    {"pathPrefix", f_path_prefix, 0, false, {P_ANY}, false, 0},
};

static const func_def_t *find_func(const char *name, size_t len)
{
    for (size_t i = 0; i < IM_ARRAY_LEN(funcs); i++)
        if (strlen(funcs[i].name) == len && memcmp(funcs[i].name, name, len) == 0) return &funcs[i];
    return NULL;
}
static bool has_function(const char *name, size_t len)
{
    return find_func(name, len) != NULL;
}

static const char *ptype_name(ptype_t t)
{
    switch (t) {
    case P_STR: return "string";
    case P_SAMPLE: return "*template.sample";
    case P_SAMPLES: return "template.queryResult";
    default: return "interface {}";
    }
}

static bool ptype_ok(ptype_t t, const tv_t *v)
{
    switch (t) {
    case P_STR: return v->k == TV_STRING;
    case P_SAMPLE: return v->k == TV_SAMPLE;
    case P_SAMPLES: return v->k == TV_SAMPLES;
    default: return true;
    }
}

static tv_t eval_arg(state_t *s, tv_t dot, ptype_t t, const node_t *n)
{
    s->node = n;
    switch (n->t) {
    case N_DOT: break;
    case N_NIL:
        if (t == P_ANY || t == P_REFLECT) return (tv_t){.k = TV_NILIF};
        if (t == P_SAMPLE) return (tv_t){.k = TV_SAMPLE, .u.smp = NULL};
        if (t == P_SAMPLES) return (tv_t){.k = TV_SAMPLES, .u.ss = NULL};
        xerr(s, "cannot assign nil to %s", ptype_name(t));
        return NOVAL;
    case N_FIELD: return eval_field_chain(s, dot, n->idents, n->nidents, NULL, NULL);
    case N_VAR: {
        tv_t v = get_var(s, n->idents[0]);
        if (s->failed) return NOVAL;
        return eval_field_chain(s, v, n->idents + 1, n->nidents - 1, NULL, NULL);
    }
    case N_PIPE: {
        tv_t v = eval_pipeline(s, dot, n);
        s->node = n;
        return v;
    }
    case N_IDENT: {
        /* a function call without args */
        node_t tmp = {.t = N_CMD, .pos = n->pos, .line = n->line};
        const node_t *kid = n;
        tmp.kids = (node_t **)&kid;
        tmp.nkids = 1;
        tv_t v = eval_command(s, dot, &tmp, NULL);
        s->node = n;
        return v;
    }
    case N_CHAIN: {
        tv_t base = n->pipe->t == N_PIPE ? eval_pipeline(s, dot, n->pipe)
                                         : eval_arg(s, dot, P_ANY, n->pipe);
        if (s->failed) return NOVAL;
        s->node = n;
        return eval_field_chain(s, base, n->idents, n->nidents, NULL, NULL);
    }
    default: break;
    }
    switch (t) {
    case P_STR:
        if (n->t == N_STRING) return (tv_t){.k = TV_STRING, .u.s = n->text};
        if (n->t == N_DOT) {
            if (dot.k == TV_STRING) return dot;
            goto wrongdot;
        }
        {
            im_buf_t b;
            im_buf_init(&b, 0);
            node_string(&b, n);
            xerr(s, "expected string; found %s", b.data ? b.data : "");
            im_buf_free(&b);
        }
        return NOVAL;
    case P_SAMPLE:
    case P_SAMPLES:
        if (n->t == N_DOT) {
            if (ptype_ok(t, &dot)) return dot;
            goto wrongdot;
        }
        {
            im_buf_t b;
            im_buf_init(&b, 0);
            node_string(&b, n);
            xerr(s, "can't handle %s for arg of type %s", b.data ? b.data : "", ptype_name(t));
            im_buf_free(&b);
        }
        return NOVAL;
    default: break;
    }
    /* interface{} / reflect.Value: ideal constants */
    switch (n->t) {
    case N_DOT: return dot;
    case N_BOOL: return mk_bool(n->b);
    case N_STRING: return (tv_t){.k = TV_STRING, .u.s = n->text};
    case N_NUMBER: {
        bool floaty = false;
        bool hex = n->src.len > 1 &&
                   (memchr(n->src.p, 'x', n->src.len) || memchr(n->src.p, 'X', n->src.len));
        bool rune = n->src.len && n->src.p[0] == '\'';
        for (size_t i = 0; i < n->src.len; i++)
            if (strchr(".eEpP", n->src.p[i]) && n->src.p[i]) floaty = true;
        if (n->is_float && !hex && !rune && floaty) return mk_float(n->f64);
        if (n->is_int) return mk_int(n->i64);
        return mk_float(n->f64);
    }
    default: break;
    }
    xerr(s, "can't handle argument");
    return NOVAL;
wrongdot:
    xerr(s, "wrong type for value; expected %s; got %s", ptype_name(t), tmpl__type_name(&dot));
    return NOVAL;
}

static tv_t eval_call(state_t *s, tv_t dot, const func_def_t *fd, const node_t *cmd,
                      const node_t *ident, const tv_t *final)
{
    size_t nargs = cmd->nkids - 1;
    bool has_final = final && final->k != TV_INVALID;
    size_t num_in = nargs + (has_final ? 1 : 0);
    s->node = ident;
    if (fd->variadic) {
        if ((int)num_in < fd->nparams) {
            xerr(s, "wrong number of args for %s: want at least %d got %zu", fd->name, fd->nparams,
                 nargs);
            return NOVAL;
        }
    } else if ((int)num_in != fd->nparams) {
        xerr(s, "wrong number of args for %s: want %d got %zu", fd->name, fd->nparams, num_in);
        return NOVAL;
    }
    if (fd->lazy) {
        /* and/or short-circuit: evaluate left to right */
        bool is_and = fd->name[0] == 'a';
        tv_t v = NOVAL;
        for (size_t i = 0; i < num_in; i++) {
            if (i < nargs)
                v = eval_arg(s, dot, P_REFLECT, cmd->kids[i + 1]);
            else
                v = *final;
            if (s->failed) return NOVAL;
            bool ok;
            bool t = truth(&v, &ok);
            if (is_and ? !t : t) return v;
        }
        return v;
    }
    if (num_in > 4096) {
        xerr(s, "too many arguments");
        return NOVAL;
    }
    tv_t *argv = xalloc(s, (num_in ? num_in : 1) * sizeof *argv);
    for (size_t i = 0; i < num_in; i++) {
        ptype_t t = (int)i < fd->nparams ? fd->ptypes[i] : fd->ptypes[fd->nparams];
        if (i < nargs) {
            argv[i] = eval_arg(s, dot, t, cmd->kids[i + 1]);
            if (s->failed) return NOVAL;
            if (!ptype_ok(t, &argv[i])) {
                s->node = cmd->kids[i + 1];
                xerr(s, "wrong type for value; expected %s; got %s", ptype_name(t),
                     tmpl__type_name(&argv[i]));
                return NOVAL;
            }
        } else {
            argv[i] = *final;
            if (!ptype_ok(t, &argv[i])) {
                xerr(s, "wrong type for value; expected %s; got %s", ptype_name(t),
                     tmpl__type_name(&argv[i]));
                return NOVAL;
            }
        }
    }
    fcall_t c = {s, argv, num_in, cmd, fd->name, fd->variant};
    bool e = false;
    tv_t r = fd->fn(&c, &e);
    return s->failed ? NOVAL : r;
}

static tv_t eval_command(state_t *s, tv_t dot, const node_t *cmd, const tv_t *final)
{
    const node_t *first = cmd->kids[0];
    switch (first->t) {
    case N_FIELD:
        s->node = first;
        return eval_field_chain(s, dot, first->idents, first->nidents, cmd, final);
    case N_CHAIN: {
        tv_t base = first->pipe->t == N_PIPE ? eval_pipeline(s, dot, first->pipe)
                                             : eval_arg(s, dot, P_ANY, first->pipe);
        if (s->failed) return NOVAL;
        s->node = first;
        return eval_field_chain(s, base, first->idents, first->nidents, cmd, final);
    }
    case N_IDENT: {
        s->node = first;
        const func_def_t *fd = find_func(first->text.p, first->text.len);
        if (!fd) {
            xerr(s, "\"%.*s\" is not a defined function", (int)first->text.len, first->text.p);
            return NOVAL;
        }
        return eval_call(s, dot, fd, cmd, first, final);
    }
    case N_PIPE:
        s->node = first;
        if (cmd->nkids > 1 || (final && final->k != TV_INVALID)) {
            xerr(s, "can't give argument to non-function %s", "");
            return NOVAL;
        }
        return eval_pipeline(s, dot, first);
    case N_VAR: {
        s->node = first;
        tv_t v = get_var(s, first->idents[0]);
        if (s->failed) return NOVAL;
        return eval_field_chain(s, v, first->idents + 1, first->nidents - 1, cmd, final);
    }
    default: break;
    }
    s->node = first;
    if (cmd->nkids > 1 || (final && final->k != TV_INVALID)) {
        im_buf_t b;
        im_buf_init(&b, 0);
        node_string(&b, first);
        xerr(s, "can't give argument to non-function %s", b.data ? b.data : "");
        im_buf_free(&b);
        return NOVAL;
    }
    switch (first->t) {
    case N_BOOL: return mk_bool(first->b);
    case N_DOT: return dot;
    case N_NIL: xerr(s, "nil is not a command"); return NOVAL;
    case N_NUMBER: return eval_arg(s, dot, P_ANY, first);
    case N_STRING: return (tv_t){.k = TV_STRING, .u.s = first->text};
    default: break;
    }
    xerr(s, "can't evaluate command");
    return NOVAL;
}

static tv_t eval_pipeline(state_t *s, tv_t dot, const node_t *pipe)
{
    if (++s->depth > MAX_DEPTH * 4) {
        xerr(s, "exceeded maximum template depth");
        return NOVAL;
    }
    s->node = pipe;
    tv_t v = NOVAL;
    for (size_t i = 0; i < pipe->nkids && !s->failed; i++) {
        tv_t prev = v;
        v = eval_command(s, dot, pipe->kids[i], i ? &prev : NULL);
        /* a nil interface result becomes the invalid value for the next stage's
         * "final" check only when it is truly missing; keep as is */
        if (!s->failed && v.k == TV_INVALID && i + 1 < pipe->nkids) v.k = TV_NILIF;
    }
    s->depth--;
    if (s->failed) return NOVAL;
    for (size_t i = 0; i < pipe->ndecl; i++) {
        if (pipe->is_assign)
            set_var(s, pipe->decl[i]->idents[0], v);
        else
            push(s, pipe->decl[i]->idents[0], v);
    }
    return v;
}

static void walk(state_t *s, tv_t dot, const node_t *n);

static void walk_list(state_t *s, tv_t dot, const node_t *list)
{
    for (size_t i = 0; list && i < list->nkids && !s->failed && !s->brk; i++)
        walk(s, dot, list->kids[i]);
}

static void walk_if_with(state_t *s, tv_t dot, const node_t *n)
{
    size_t mark = s->nvars;
    tv_t v = eval_pipeline(s, dot, n->pipe);
    if (s->failed) return;
    bool ok;
    bool t = truth(&v, &ok);
    if (!ok) {
        s->node = n->pipe;
        xerr(s, "if/with can't use %s", "<no value>");
        return;
    }
    if (t) {
        walk_list(s, n->t == N_WITH ? v : dot, n->list);
    } else if (n->elist) {
        walk_list(s, dot, n->elist);
    }
    s->nvars = mark;
}

static void walk_range(state_t *s, tv_t dot, const node_t *n)
{
    size_t mark = s->nvars;
    tv_t v = eval_pipeline(s, dot, n->pipe);
    if (s->failed) return;
    /* the pipeline pushed its declared variables with the whole value: the
     * iteration overwrites them */
    size_t nd = n->pipe->ndecl;
    size_t count = 0;
    size_t iter_mark = s->nvars;
    switch (v.k) {
    case TV_SAMPLES:
    case TV_STRMAP:
    case TV_ANYMAP: {
        size_t len = v.k == TV_SAMPLES ? (v.u.ss ? v.u.ss->n : 0) : (v.u.m ? v.u.m->n : 0);
        for (size_t i = 0; i < len && !s->failed; i++) {
            if (++count > MAX_RANGE_ITER) {
                xerr(s, "range: too many iterations");
                break;
            }
            tv_t key, elem;
            if (v.k == TV_SAMPLES) {
                key = mk_int((int64_t)i);
                elem = (tv_t){.k = TV_SAMPLE, .u.smp = v.u.ss->v[i]};
            } else {
                key = (tv_t){.k = TV_STRING, .u.s = v.u.m->e[i].key};
                elem = v.u.m->e[i].val;
            }
            if (nd == 1) s->vars[s->nvars - 1].v = elem;
            if (nd == 2) {
                s->vars[s->nvars - 2].v = key;
                s->vars[s->nvars - 1].v = elem;
            }
            walk_list(s, elem, n->list);
            s->nvars = iter_mark;
            if (s->brk == 1) {
                s->brk = 0;
                break;
            }
            s->brk = 0;
        }
        break;
    }
    case TV_INT: {
        for (int64_t i = 0; i < v.u.i && !s->failed; i++) {
            if (++count > MAX_RANGE_ITER) {
                xerr(s, "range: too many iterations");
                break;
            }
            tv_t elem = mk_int(i);
            if (nd >= 1) s->vars[s->nvars - 1].v = elem;
            walk_list(s, elem, n->list);
            s->nvars = iter_mark;
            if (s->brk == 1) {
                s->brk = 0;
                break;
            }
            s->brk = 0;
        }
        break;
    }
    case TV_INVALID:
    case TV_NILIF: break;
    default:
        s->node = n->pipe;
        {
            im_buf_t b;
            im_buf_init(&b, 0);
            tmpl__print_value(&b, &v);
            xerr(s, "range can't iterate over %s", b.data ? b.data : "");
            im_buf_free(&b);
        }
        return;
    }
    if (count == 0 && !s->failed && n->elist) walk_list(s, dot, n->elist);
    s->nvars = mark;
}

static void walk(state_t *s, tv_t dot, const node_t *n)
{
    if (s->failed) return;
    switch (n->t) {
    case N_TEXT:
        if (im_buf_append(s->out, n->text.p, n->text.len) != IM_OK)
            xerr(s, "output exceeds %d bytes", TMPL_MAX_OUTPUT);
        break;
    case N_ACTION: {
        tv_t v = eval_pipeline(s, dot, n->pipe);
        if (s->failed) return;
        if (n->pipe->ndecl == 0) {
            size_t before = s->out->len;
            tmpl__print_value(s->out, &v);
            if (s->out->max && s->out->len >= s->out->max - 1 && before < s->out->len)
                xerr(s, "output exceeds %d bytes", TMPL_MAX_OUTPUT);
        }
        break;
    }
    case N_IF:
    case N_WITH:
        if (++s->depth > MAX_DEPTH * 4) {
            xerr(s, "exceeded maximum template depth");
            return;
        }
        walk_if_with(s, dot, n);
        s->depth--;
        break;
    case N_RANGE:
        if (++s->depth > MAX_DEPTH * 4) {
            xerr(s, "exceeded maximum template depth");
            return;
        }
        walk_range(s, dot, n);
        s->depth--;
        break;
    case N_TEMPLATE: {
        s->node = n;
        const node_t *def = NULL;
        for (size_t i = 0; s->defs && i < s->defs->nkids; i++)
            if (im_sv_eq(s->defs->kids[i]->text, n->text)) def = s->defs->kids[i];
        if (!def) {
            im_buf_t q;
            im_buf_init(&q, 0);
            tmpl__quote(&q, n->text.p, n->text.len);
            xerr(s, "template %s not defined", q.data);
            im_buf_free(&q);
            return;
        }
        if (++s->depth > MAX_DEPTH * 4) {
            xerr(s, "exceeded maximum template depth (%d)", MAX_DEPTH * 4);
            return;
        }
        tv_t nd = n->pipe ? eval_pipeline(s, dot, n->pipe) : NOVAL;
        if (s->failed) return;
        /* no dynamic scoping: the template sees only $ = its dot */
        var_t *saved = s->vars;
        size_t sn = s->nvars, sc = s->capvars;
        s->vars = NULL;
        s->nvars = s->capvars = 0;
        push(s, IM_SV("$"), nd);
        walk_list(s, nd, def->list);
        im_free(s->vars);
        s->vars = saved;
        s->nvars = sn;
        s->capvars = sc;
        s->depth--;
        break;
    }
    case N_BREAK: s->brk = 1; break;
    case N_CONTINUE: s->brk = 2; break;
    case N_LIST: walk_list(s, dot, n); break;
    default: break;
    }
}

/* ---- Public API ---- */

static const char DEFS[] = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}"
                           "{{$externalURL := .ExternalURL}}{{$value := .Value}}";

static char *with_defs(const char *text, size_t len, size_t *out_len)
{
    size_t dl = sizeof DEFS - 1;
    char *full = im_malloc(dl + len + 1);
    memcpy(full, DEFS, dl);
    if (len) memcpy(full + dl, text, len);
    full[dl + len] = 0;
    *out_len = dl + len;
    return full;
}

im_rc tmpl_check(const char *name, const char *text, size_t len, im_err_t *err)
{
    size_t fl;
    char *full = with_defs(text, len, &fl);
    im_arena_t arena;
    im_arena_init(&arena, 16384, 64u << 20);
    node_t *root = tmpl_parse(name, full, fl, &arena, err);
    im_arena_free(&arena);
    im_free(full);
    return root ? IM_OK : IM_EPARSE;
}

im_rc tmpl_expand(const char *name, const char *text, size_t len, const tmpl_data_t *data,
                  im_buf_t *out, im_err_t *err)
{
    /* Fast path: no action at all. */
    if (!memmem(text, len, "{{", 2)) {
        if (im_buf_append(out, text, len) != IM_OK)
            return im_err_set(err, IM_ELIMIT, "template output too large");
        return IM_OK;
    }
    size_t fl;
    char *full = with_defs(text, len, &fl);
    im_arena_t arena;
    im_arena_init(&arena, 16384, 256u << 20);
    im_err_t perr_;
    im_err_clear(&perr_);
    node_t *root = tmpl_parse(name, full, fl, &arena, &perr_);
    if (!root) {
        im_err_set(err, IM_EPARSE, "error parsing template %s: %s", name, perr_.msg);
        im_arena_free(&arena);
        im_free(full);
        return IM_EPARSE;
    }
    im_buf_t res;
    im_buf_init(&res, TMPL_MAX_OUTPUT);
    im_err_t xe;
    im_err_clear(&xe);
    state_t s = {
        .name = name, .text = full, .data = data, .arena = &arena, .out = &res, .err = &xe};
    labels_to_map(&s, data->labels, &s.labels);
    labels_to_map(&s, data->external_labels, &s.ext_labels);
    troot_t troot = {&s.labels, &s.ext_labels, data->external_url ? data->external_url : "",
                     data->value};
    s.dot_root = (tv_t){.k = TV_DATA, .u.root = &troot};
    push(&s, IM_SV("$"), s.dot_root);
    s.defs = root->elist;
    walk(&s, s.dot_root, root);
    im_free(s.vars);
    im_rc rc = IM_OK;
    if (s.failed) {
        im_err_set(err, IM_EEXEC, "error executing template %s: %s", name, xe.msg);
        rc = IM_EEXEC;
    } else if (im_buf_append(out, res.data ? res.data : "", res.len) != IM_OK) {
        rc = im_err_set(err, IM_ELIMIT, "template output too large");
    }
    im_buf_free(&res);
    im_arena_free(&arena);
    im_free(full);
    return rc;
}

im_rc tmpl_expand_or_error(const char *name, const char *text, size_t len, const tmpl_data_t *data,
                           im_buf_t *out)
{
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = tmpl_expand(name, text, len, data, out, &err);
    if (rc != IM_OK) (void)im_buf_printf(out, "<error expanding template: %s>", err.msg);
    return rc;
}
