/* k8s_selector.c — Kubernetes label and field selector syntax (k8s_selector.h):
 * a lexer and a recursive-descent parser with the client library's grammar,
 * error texts and checking order, written from its documented behaviour and
 * checked against Prometheus 2.42 (tests/unit/config/test_k8s_selector.c). */
#include "util/base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/k8s_selector.h"
#include "util/buf.h"
#include "util/mem.h"

/* ---- Label selectors ---- */

typedef enum tok {
    T_END,
    T_IDENT,
    T_IN,
    T_NOTIN,
    T_NOT, /* ! */
    T_EQ,
    T_DEQ,
    T_NEQ,
    T_GT,
    T_LT,
    T_LPAR,
    T_RPAR,
    T_COMMA,
} tok_t;

typedef struct item {
    tok_t t;
    const char *lit; /* points into the parser's literal storage, NUL-terminated */
} item_t;

typedef struct parser {
    item_t *items;
    size_t n, pos;
    char *lits; /* every literal, NUL-separated */
    im_err_t *err;
} parser_t;

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_special(char c)
{
    return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

/* The token a whole literal names; T_IDENT when none. */
static tok_t sym(const char *s, size_t n)
{
    static const struct {
        const char *s;
        tok_t t;
    } tab[] = {{")", T_RPAR}, {",", T_COMMA},     {"!", T_NOT}, {"==", T_DEQ},
               {"=", T_EQ},   {">", T_GT},        {"in", T_IN}, {"<", T_LT},
               {"!=", T_NEQ}, {"notin", T_NOTIN}, {"(", T_LPAR}};
    for (size_t i = 0; i < IM_ARRAY_LEN(tab); i++)
        if (strlen(tab[i].s) == n && !memcmp(tab[i].s, s, n)) return tab[i].t;
    return T_IDENT;
}

/* Splits s into tokens (the last one T_END). A run of special characters gives
 * its longest prefix that is an operator. */
static void scan(parser_t *p, const char *s)
{
    size_t len = strlen(s);
    p->items = im_calloc(len + 2, sizeof *p->items);
    p->lits = im_malloc(2 * len + 2);
    char *w = p->lits;
    size_t i = 0;
    for (;;) {
        while (i < len && is_blank(s[i])) i++;
        item_t *it = &p->items[p->n++];
        size_t start = i, take;
        if (i >= len) {
            it->t = T_END;
            take = 0;
        } else if (is_special(s[i])) {
            take = 1;
            while (i + take < len && is_special(s[i + take]) && sym(s + i, take + 1) != T_IDENT)
                take++;
            it->t = sym(s + i, take);
        } else {
            take = 0;
            while (i + take < len && !is_special(s[i + take]) && !is_blank(s[i + take])) take++;
            it->t = sym(s + i, take);
            if (it->t != T_IN && it->t != T_NOTIN) it->t = T_IDENT;
        }
        memcpy(w, s + start, take);
        w[take] = 0;
        it->lit = w;
        w += take + 1;
        i += take;
        if (it->t == T_END) break;
    }
}

/* In a value position "in" and "notin" are plain identifiers. */
static tok_t as_value(tok_t t)
{
    return t == T_IN || t == T_NOTIN ? T_IDENT : t;
}

static item_t peek(parser_t *p, bool values)
{
    item_t it = p->items[p->pos];
    if (values) it.t = as_value(it.t);
    return it;
}

static item_t next(parser_t *p, bool values)
{
    item_t it = peek(p, values);
    if (p->pos + 1 < p->n) p->pos++;
    return it;
}

/* Go's %q of s. */
static void quote(im_buf_t *b, const char *s)
{
    im_buf_putc(b, '"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            im_buf_putc(b, '\\');
            im_buf_putc(b, (char)*c);
        } else if (*c == '\a' || *c == '\b' || *c == '\f' || *c == '\n' || *c == '\r' ||
                   *c == '\t' || *c == '\v') {
            im_buf_putc(b, '\\');
            im_buf_putc(b, "abtnvfr"[*c - '\a']);
        } else if (*c < 0x20 || *c == 0x7f) {
            im_buf_printf(b, "\\x%02x", *c);
        } else {
            im_buf_putc(b, (char)*c);
        }
    }
    im_buf_putc(b, '"');
}

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static bool qname_ok(const char *s, size_t n)
{
    if (!n || !alnum(s[0]) || !alnum(s[n - 1])) return false;
    for (size_t i = 1; i + 1 < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return false;
    return true;
}

/* A lowercase RFC 1123 subdomain: labels of [a-z0-9-], alphanumeric at both
 * ends, joined by dots. */
static bool subdomain_ok(const char *s, size_t n)
{
    size_t i = 0;
    for (;;) {
        size_t st = i;
        while (i < n &&
               ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            i++;
        if (i == st || s[st] == '-' || s[i - 1] == '-') return false;
        if (i == n) return true;
        if (s[i] != '.') return false;
        i++;
    }
}

#define QNAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QNAME_MSG                                                                                  \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "         \
    "validation is '" QNAME_FMT "')"
#define SUBDOMAIN_MSG                                                                              \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define VALUE_MSG                                                                                  \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value', " \
    " "                                                                                            \
    "or '12345', regex used for validation is '(" QNAME_FMT ")?')"

static void sep(im_buf_t *b)
{
    if (b->len) im_buf_puts(b, "; ");
}

/* The problems of key as a qualified name ("; "-joined), empty when none. */
static void key_problems(const char *k, im_buf_t *o)
{
    const char *slash = strchr(k, '/');
    const char *name = k;
    if (slash && strchr(slash + 1, '/')) {
        im_buf_puts(o, "a qualified name " QNAME_MSG
                       " with an optional DNS subdomain prefix and '/' (e.g. "
                       "'example.com/MyName')");
        return;
    }
    if (slash) {
        size_t pn = (size_t)(slash - k);
        name = slash + 1;
        if (!pn) {
            im_buf_puts(o, "prefix part must be non-empty");
        } else {
            if (pn > 253) im_buf_puts(o, "prefix part must be no more than 253 characters");
            if (!subdomain_ok(k, pn)) {
                sep(o);
                im_buf_puts(o, "prefix part " SUBDOMAIN_MSG);
            }
        }
    }
    size_t nn = strlen(name);
    if (!nn) {
        sep(o);
        im_buf_puts(o, "name part must be non-empty");
    } else if (nn > 63) {
        sep(o);
        im_buf_puts(o, "name part must be no more than 63 characters");
    }
    if (!qname_ok(name, nn)) {
        sep(o);
        im_buf_puts(o, "name part " QNAME_MSG);
    }
}

static void value_problems(const char *v, im_buf_t *o)
{
    size_t n = strlen(v);
    if (n > 63) im_buf_puts(o, "must be no more than 63 characters");
    if (n && !qname_ok(v, n)) {
        sep(o);
        im_buf_puts(o, VALUE_MSG);
    }
}

/* strconv.ParseInt(v, 10, 64) succeeds. */
static bool int64_ok(const char *v)
{
    const char *p = v;
    if (*p == '+' || *p == '-') p++;
    if (!*p) return false;
    size_t nd = 0;
    for (; *p; p++, nd++)
        if (*p < '0' || *p > '9') return false;
    if (nd < 19) return true;
    char *end;
    errno = 0;
    (void)strtoll(v, &end, 10);
    return errno == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "found '<lit>'<rest>" */
static im_rc fail(parser_t *p, const char *rest, const char *lit)
{
    return im_err_set(p->err, IM_EINVAL, "found '%s'%s", lit, rest);
}

/* One requirement; errors without the "unable to parse requirement: " prefix,
 * which the caller adds. */
static im_rc requirement(parser_t *p)
{
    item_t it = next(p, true);
    bool not = false;
    if (it.t == T_NOT) {
        not = true;
        it = next(p, true);
    }
    if (it.t != T_IDENT) return fail(p, ", expected: identifier", it.lit);
    const char *key = it.lit;
    im_buf_t kp;
    im_buf_init(&kp, 0);
    key_problems(key, &kp);
    if (kp.len) {
        im_buf_t m;
        im_buf_init(&m, 0);
        im_buf_puts(&m, "<nil>: Invalid value: ");
        quote(&m, key);
        im_buf_printf(&m, ": %s", kp.data);
        im_rc rc = im_err_set(p->err, IM_EINVAL, "%s", m.data);
        im_buf_free(&kp);
        im_buf_free(&m);
        return rc;
    }
    im_buf_free(&kp);
    tok_t la = peek(p, true).t;
    if (not || la == T_END || la == T_COMMA) return IM_OK; /* !key or key (exists) */
    it = next(p, false);
    tok_t op = it.t;
    if (op != T_IN && op != T_NOTIN && op != T_EQ && op != T_DEQ && op != T_NEQ && op != T_GT &&
        op != T_LT)
        return fail(p, ", expected: in, notin, =, ==, !=, gt, lt", it.lit);
    const char **vals = im_calloc(p->n + 1, sizeof *vals);
    size_t nv = 0;
    im_rc rc = IM_OK;
    if (op == T_IN || op == T_NOTIN) {
        it = next(p, true);
        if (it.t != T_LPAR) {
            rc = fail(p, " expected: '('", it.lit);
        } else if (peek(p, true).t == T_RPAR) {
            next(p, true);
            vals[nv++] = "";
        } else if (peek(p, true).t != T_IDENT && peek(p, true).t != T_COMMA) {
            rc = fail(p, ", expected: ',', ')' or identifier", peek(p, true).lit);
        } else {
            for (;;) { /* a possibly empty list of possibly empty values */
                it = next(p, true);
                if (it.t == T_IDENT) {
                    vals[nv++] = it.lit;
                    item_t la2 = peek(p, true);
                    if (la2.t == T_COMMA) continue;
                    if (la2.t == T_RPAR) break;
                    rc = fail(p, ", expected: ',' or ')'", la2.lit);
                    break;
                }
                if (it.t == T_COMMA) {
                    if (!nv) vals[nv++] = "";
                    tok_t t2 = peek(p, true).t;
                    if (t2 == T_RPAR) {
                        vals[nv++] = "";
                        break;
                    }
                    if (t2 == T_COMMA) {
                        next(p, true);
                        vals[nv++] = "";
                    }
                    continue;
                }
                rc = fail(p, ", expected: ',', or identifier", it.lit);
                break;
            }
            if (rc == IM_OK) next(p, true); /* the ')' */
        }
    } else {
        tok_t t2 = peek(p, true).t;
        if (t2 == T_END || t2 == T_COMMA) {
            vals[nv++] = "";
        } else {
            it = next(p, true);
            if (it.t == T_IDENT)
                vals[nv++] = it.lit;
            else
                rc = fail(p, ", expected: identifier", it.lit);
        }
    }
    if (rc == IM_OK) {
        /* a sorted set, then each value checked (errors aggregated as Go does) */
        qsort(vals, nv, sizeof *vals, cmp_str);
        size_t u = 0;
        for (size_t i = 0; i < nv; i++)
            if (!u || strcmp(vals[u - 1], vals[i])) vals[u++] = vals[i];
        nv = u;
        im_buf_t all;
        im_buf_init(&all, 0);
        size_t nerr = 0;
        for (size_t i = 0; (op == T_GT || op == T_LT) && i < nv; i++)
            if (!int64_ok(vals[i])) {
                im_buf_printf(&all, "%svalues[%zu]: Invalid value: ", nerr++ ? ", " : "", i);
                quote(&all, vals[i]);
                im_buf_puts(&all, ": for 'Gt', 'Lt' operators, the value must be an integer");
            }
        for (size_t i = 0; i < nv; i++) {
            im_buf_t vp;
            im_buf_init(&vp, 0);
            value_problems(vals[i], &vp);
            if (vp.len) {
                im_buf_printf(&all, "%svalues[%zu][%s]: Invalid value: ", nerr++ ? ", " : "", i,
                              key);
                quote(&all, vals[i]);
                im_buf_printf(&all, ": %s", vp.data);
            }
            im_buf_free(&vp);
        }
        if (nerr)
            rc = im_err_set(p->err, IM_EINVAL, "%s%s%s", nerr > 1 ? "[" : "", all.data,
                            nerr > 1 ? "]" : "");
        im_buf_free(&all);
    }
    im_free(vals);
    return rc;
}

im_rc k8s_label_selector_check(const char *s, im_err_t *err)
{
    if (!s) return IM_OK;
    parser_t p = {.err = err};
    scan(&p, s);
    im_rc rc = IM_OK;
    for (;;) {
        item_t it = peek(&p, true);
        if (it.t == T_END) break;
        if (it.t != T_IDENT && it.t != T_NOT) {
            rc = fail(&p, ", expected: !, identifier, or 'end of string'", it.lit);
            break;
        }
        if ((rc = requirement(&p))) {
            im_err_prefix(err, "unable to parse requirement");
            break;
        }
        it = next(&p, true);
        if (it.t == T_END) break;
        if (it.t != T_COMMA) {
            rc = fail(&p, ", expected: ',' or 'end of string'", it.lit);
            break;
        }
        item_t la = peek(&p, true);
        if (la.t != T_IDENT && la.t != T_NOT) {
            rc = fail(&p, ", expected: identifier after ','", la.lit);
            break;
        }
    }
    im_free(p.items);
    im_free(p.lits);
    return rc;
}

/* ---- Field selectors ---- */

/* Length of the UTF-8 sequence starting with byte c (1 for a stray byte). */
static size_t u8len(unsigned char c)
{
    return c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

/* The value's escapes: "\\", "\,", "\=" only; "," and "=" must be escaped. */
static im_rc unescape_check(const char *v, im_err_t *err)
{
    for (size_t i = 0; v[i]; i++) {
        if (v[i] == '\\') {
            char c = v[i + 1];
            if (c == '\\' || c == ',' || c == '=') {
                i++;
                continue;
            }
            size_t n = c ? u8len((unsigned char)c) : 0;
            return im_err_set(err, IM_EINVAL,
                              "invalid field selector: invalid escape sequence: \\%.*s", (int)n,
                              v + i + 1);
        }
        if (v[i] == ',' || v[i] == '=')
            return im_err_set(err, IM_EINVAL,
                              "invalid field selector: unescaped character in value: %d", v[i]);
    }
    return IM_OK;
}

im_rc k8s_field_selector_check(const char *s, im_err_t *err)
{
    if (!s || !*s) return IM_OK;
    /* split at commas not escaped by a backslash */
    size_t len = strlen(s), n = 0;
    char **parts = im_calloc(len + 2, sizeof *parts);
    size_t start = 0;
    bool esc = false;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && esc) {
            esc = false;
        } else if (i < len && s[i] == '\\') {
            esc = true;
        } else if (i == len || s[i] == ',') {
            parts[n++] = im_strndup(s + start, i - start);
            start = i + 1;
        }
    }
    qsort(parts, n, sizeof *parts, cmp_str);
    im_rc rc = IM_OK;
    for (size_t i = 0; i < n && rc == IM_OK; i++) {
        const char *t = parts[i];
        if (!*t) continue;
        const char *rhs = NULL;
        for (const char *c = t; *c && !rhs; c++) /* the first of !=, ==, = */
            if (c[0] == '!' && c[1] == '=')
                rhs = c + 2;
            else if (c[0] == '=')
                rhs = c[1] == '=' ? c + 2 : c + 1;
        if (!rhs)
            rc = im_err_set(err, IM_EINVAL, "invalid selector: '%s'; can't understand '%s'", s, t);
        else
            rc = unescape_check(rhs, err);
    }
    for (size_t i = 0; i < n; i++) im_free(parts[i]);
    im_free(parts);
    return rc;
}
