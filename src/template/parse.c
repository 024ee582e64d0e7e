/* parse.c — the parser of the template engine (Go's text/template/parse/parse.go):
 * a recursive descent over the lexer's tokens building the tree of template_int.h
 * (lists, actions, if/range/with, pipelines, commands, operands, define/template/
 * block), checking as Go does that functions exist and variables are declared,
 * with Go's error messages and line numbers. Nodes live in the caller's arena. */
#include "util/base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "template/template_int.h"

typedef struct parser {
    const char *name;
    const char *s;
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
    size_t var_base; /* first variable visible: a define's tree does not see the caller's */
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
        if (i >= len - 1) goto bad; /* a backslash just before the closing quote */
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
            if (i + 2 >= len) goto bad;
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

static node_t *parse_term(parser_t *p)
{
    tok_t *t = next_nonspace(p);
    im_sv_t txt = {p->s + t->pos, t->len};
    node_t *n;
    switch (t->t) {
    case T_IDENT:
        if (!tmpl__find_func(txt.p, txt.len)) {
            perr(p, "function \"%.*s\" not defined", (int)txt.len, txt.p);
            return NULL;
        }
        n = new_node(p, N_IDENT, t->pos, t->line);
        n->text = txt;
        return n;
    case T_DOT: return new_node(p, N_DOT, t->pos, t->line);
    case T_NIL: return new_node(p, N_NIL, t->pos, t->line);
    case T_VAR:
        for (size_t i = p->nvars; i-- > p->var_base;)
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
        if (++p->depth > TMPL_MAX_DEPTH) {
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

/* The N_VAR of a variable declared by a pipeline (token v, text vn), in scope from now. */
static node_t *declare(parser_t *p, const tok_t *v, im_sv_t vn)
{
    node_t *vnode = new_node(p, N_VAR, v->pos, v->line);
    split_idents(p, vnode, vn.p, vn.len);
    vnode->src = vn;
    push_var(p, vn);
    return vnode;
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
        tok_t *nx = peek_nonspace(p);
        im_sv_t vn = {p->s + v->pos, v->len};
        if (nx->t == T_ASSIGN || nx->t == T_DECLARE) {
            pipe->is_assign = nx->t == T_ASSIGN;
            next_nonspace(p);
            decls[nd++] = declare(p, v, vn);
        } else if (nx->t == T_CHAR && p->s[nx->pos] == ',') {
            next_nonspace(p);
            decls[nd++] = declare(p, v, vn);
            if (strcmp(context, "range") == 0 && nd < 2) {
                tok_type_t pt = peek_nonspace(p)->t;
                if (pt == T_VAR || pt == T_RDELIM || pt == T_RPAREN) goto decls;
                perr(p, "range can only initialize variables");
                return NULL;
            }
            perr(p, "too many declarations in %s", context);
            return NULL;
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
    if (++p->depth > TMPL_MAX_DEPTH) {
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
            d->src = tn->src;
            d->list = body;
            d->is_block = true;
            tn->list = body;
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
                d->src = (im_sv_t){p->s + nt->pos, nt->len};
                if (!unquote(p, p->s + nt->pos, nt->len, &d->text)) break;
                tok_t *r = next_nonspace(p);
                if (r->t != T_RDELIM) {
                    unexpected(p, r, context);
                    break;
                }
                /* a definition is a new tree: only $ is declared */
                size_t mark = p->nvars, base = p->var_base;
                int rd = p->range_depth;
                p->var_base = p->nvars; /* the caller's variables stay as they are */
                push_var(p, IM_SV("$"));
                p->range_depth = 0;
                node_t *term = NULL;
                d->list = parse_list_until(p, &term);
                p->nvars = mark;
                p->var_base = base;
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
node_t *tmpl__parse(const char *name, const char *s, size_t n, im_arena_t *arena, im_err_t *err)
{
    tok_t *toks;
    size_t ntoks;
    if (!tmpl__lex(s, n, arena, &toks, &ntoks)) {
        im_err_set(err, IM_ELIMIT, "template: %s: too many tokens", name);
        return NULL;
    }
    parser_t p = {.name = name, .s = s, .toks = toks, .ntoks = ntoks, .arena = arena, .err = err};
    push_var(&p, IM_SV("$")); /* $ = the data, as in Go */
    p.defs = new_node(&p, N_LIST, 0, 1);
    node_t *root = parse_all(&p);
    im_free(toks);
    im_free(p.vars);
    return root;
}
