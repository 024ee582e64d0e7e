/* parser.c — PromQL text to a type-checked AST.
 *
 * A recursive-descent parser with precedence climbing for binary operators
 * (or < and/unless < comparisons < + - < * / % atan2 < ^, ^ right-associative;
 * unary +/- bind like * so that -2^2 = -(2^2); [..], offset and @ bind
 * tightest), built to give the same first error as Prometheus' yacc parser:
 *  - lexical errors (from lexer.c) are reported when the parser first looks at
 *    the offending token, as yacc does when it fetches it;
 *  - syntax errors say `unexpected <token>` plus the context of the innermost
 *    construct that has an error rule in Prometheus' grammar (label matching,
 *    grouping opts, offset, @, subquery selector, aggregation);
 *  - semantic errors of the grammar actions (unknown function, aggregate
 *    argument counts, offset/@ placement, ranges) are reported at the point
 *    where Prometheus reduces the rule, i.e. right after the construct's last
 *    token;
 *  - type checks (checkAST) run only when the parse had no error, in
 *    Prometheus' order.
 * Only the first error is kept (as Prometheus 2.x prints only the first), so
 * the parser stops at the first error of any kind. */
#include "util/base.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "promql/parser.h"
#include "promql/parser_int.h"

typedef struct parser {
    const char *in;
    size_t n;
    promql_lexer_t lx;
    promql_token_t tok[2]; /* lookahead buffer */
    int ntok;
    uint32_t last_end; /* end of the last consumed token */
    promql_expr_owner_t *owner;
    im_arena_t *arena;
    bool failed;
    im_rc rc;
    uint32_t err_pos;
    char err_msg[IM_ERR_MSG_MAX];
    int agg_ctx; /* inside an aggregation's arguments: errors say "in aggregation" */
    int depth;
    promql_lang_t lang; /* resolved (compat 2 or 3) */
    bool info_selector; /* checking info()'s second argument */
} parser_t;

/* ---- Errors ---- */

static void fail_at(parser_t *p, uint32_t pos, const char *fmt, ...) IM_PRINTF(3, 4);
static void fail_at(parser_t *p, uint32_t pos, const char *fmt, ...)
{
    if (p->failed) return;
    p->failed = true;
    p->rc = IM_EPARSE;
    p->err_pos = pos;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err_msg, sizeof p->err_msg, fmt, ap);
    va_end(ap);
}

static void fail_limit(parser_t *p, const char *msg)
{
    if (p->failed) return;
    fail_at(p, 0, "%s", msg);
    p->rc = IM_ELIMIT;
}

/* ---- Tokens ---- */

static void fill(parser_t *p, int i)
{
    while (p->ntok <= i) {
        promql_token_t *t = &p->tok[p->ntok];
        do {
            promql__lex_next(&p->lx, t);
        } while (t->type == PT_COMMENT);
        p->ntok++;
    }
}

/* The token at lookahead i (0 or 1). Looking at a lexer error reports it. */
static const promql_token_t *peek_n(parser_t *p, int i)
{
    fill(p, i);
    const promql_token_t *t = &p->tok[i];
    if (t->type == PT_ERROR) fail_at(p, t->pos, "%s", p->lx.err);
    return t;
}

static const promql_token_t *peek(parser_t *p)
{
    return peek_n(p, 0);
}

static promql_tok_t peek_type(parser_t *p)
{
    const promql_token_t *t = peek(p);
    return p->failed ? PT_EOF : t->type;
}

static promql_token_t advance(parser_t *p)
{
    fill(p, 0);
    promql_token_t t = p->tok[0];
    p->tok[0] = p->tok[1];
    p->ntok--;
    p->last_end = t.pos + t.len;
    return t;
}

/* Syntax error at the current token: "unexpected X[ in ctx][, expected exp]". */
static void unexpected(parser_t *p, const char *ctx, const char *exp)
{
    if (p->failed) return;
    const promql_token_t *t = peek(p);
    if (p->failed) return;
    if (!ctx && p->agg_ctx > 0) ctx = "aggregation";
    im_buf_t b;
    im_buf_init(&b, IM_ERR_MSG_MAX - 64);
    (void)im_buf_puts(&b, "unexpected ");
    promql__tok_desc(p->in, t, &b);
    if (ctx) (void)im_buf_printf(&b, " in %s", ctx);
    if (exp) (void)im_buf_printf(&b, ", expected %s", exp);
    fail_at(p, t->pos, "%s", b.data ? b.data : "unexpected input");
    im_buf_free(&b);
}

/* ---- Nodes ---- */

static promql_expr_t *node(parser_t *p, promql_node_kind_t kind, uint32_t start)
{
    promql_expr_t *e = im_arena_calloc(p->arena, sizeof *e);
    e->kind = kind;
    e->pos_start = start;
    e->pos_end = p->last_end;
    return e;
}

static const im_istr_t *intern_owned(parser_t *p, const char *s, size_t len)
{
    const im_istr_t *is = im_intern(s, len);
    promql__owner_add_istr(p->owner, is);
    return is;
}

static bool is_label_name(const char *s, size_t len)
{
    if (len == 0) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (i > 0 && c >= '0' && c <= '9');
        if (!ok) return false;
    }
    return true;
}

/* ---- Numbers ---- */

static bool parse_int_base0(const char *s, size_t len, uint64_t *out)
{
    unsigned base = 10;
    size_t i = 0;
    if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        i = 2;
    } else if (len >= 2 && s[0] == '0') {
        base = 8;
        i = 1;
    }
    if (i >= len) return false;
    uint64_t v = 0;
    for (; i < len; i++) {
        int d;
        char c = s[i];
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return false;
        if ((unsigned)d >= base) return false;
        if (v > ((uint64_t)INT64_MAX - (uint64_t)d) / base) return false;
        v = v * base + (uint64_t)d;
    }
    *out = v;
    return true;
}

/* Prometheus: strconv.ParseInt(s, 0, 64), else strconv.ParseFloat(s, 64). */
static bool parse_number(parser_t *p, const promql_token_t *t, double *out)
{
    const char *s = p->in + t->pos;
    size_t len = t->len;
    uint64_t iv;
    if (parse_int_base0(s, len, &iv)) {
        *out = (double)iv;
        return true;
    }
    const char *why = "invalid syntax";
    char buf[512];
    bool hex = len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    if (!hex && len < sizeof buf) {
        memcpy(buf, s, len);
        buf[len] = 0;
        char *end;
        errno = 0;
        double d = strtod(buf, &end);
        if (end == buf + len && len > 0) {
            if (isinf(d) && errno == ERANGE) {
                why = "value out of range";
            } else {
                *out = d;
                return true;
            }
        }
    }
    im_buf_t q;
    im_buf_init(&q, 300);
    (void)promql__go_quote(&q, s, len);
    fail_at(p, t->pos, "error parsing number: strconv.ParseFloat: parsing %s: %s",
            q.data ? q.data : "\"\"", why);
    im_buf_free(&q);
    return false;
}

static bool parse_duration_tok(parser_t *p, const promql_token_t *t, int64_t *out)
{
    im_err_t e;
    im_err_clear(&e);
    if (promql_parse_duration(p->in + t->pos, t->len, out, &e) != IM_OK) {
        fail_at(p, t->pos, "%s", e.msg);
        return false;
    }
    if (*out == 0) {
        fail_at(p, t->pos, "duration must be greater than 0");
        return false;
    }
    return true;
}

/* ---- Duration expressions (Prometheus 3) ----
 *
 * Inside brackets and after `offset`: `5m`, `300` (seconds), `+ - * / % ^`,
 * parentheses, unary minus, step(), range(), min_of(a, b), max_of(a, b). Values
 * are seconds; constant expressions are folded here, the ones using step() or
 * range() are kept (promql_dur_t) and computed by the engine per query. After
 * `offset` without parentheses only one term is taken (`x offset 100 + 2` adds 2
 * to the vector), as Prometheus. */

static promql_dur_t *dnode(parser_t *p, promql_dur_op_t op, const promql_dur_t *a,
                           const promql_dur_t *b)
{
    promql_dur_t *d = im_arena_alloc(p->arena, sizeof *d);
    if (!d) im_oom(sizeof *d);
    memset(d, 0, sizeof *d);
    d->op = op;
    d->a = a;
    d->b = b;
    return d;
}

static bool dur_const(const promql_dur_t *d)
{
    if (!d) return true;
    if (d->op == PROMQL_DUR_STEP || d->op == PROMQL_DUR_RANGE) return false;
    return dur_const(d->a) && dur_const(d->b);
}

static bool ident_is(parser_t *p, const promql_token_t *t, const char *w)
{
    return t->len == strlen(w) && strncasecmp(p->in + t->pos, w, t->len) == 0;
}

static promql_dur_t *parse_dexpr(parser_t *p, int min_prec);

static promql_dur_t *parse_datom(parser_t *p, const char *ctx)
{
    promql_tok_t t = peek_type(p);
    if (p->failed) return NULL;
    if (t == PT_DURATION) {
        promql_token_t dt = advance(p);
        int64_t ms;
        im_err_t e;
        im_err_clear(&e);
        if (promql_parse_duration(p->in + dt.pos, dt.len, &ms, &e) != IM_OK) {
            fail_at(p, dt.pos, "%s", e.msg);
            return NULL;
        }
        promql_dur_t *d = dnode(p, PROMQL_DUR_NUM, NULL, NULL);
        d->v = (double)ms / 1000.0;
        d->is_duration = true;
        return d;
    }
    if (t == PT_NUMBER) {
        promql_token_t nt = advance(p);
        double v;
        if (!parse_number(p, &nt, &v)) return NULL;
        promql_dur_t *d = dnode(p, PROMQL_DUR_NUM, NULL, NULL);
        d->v = v;
        return d;
    }
    if (t == PT_LEFT_PAREN) {
        advance(p);
        promql_dur_t *in = parse_dexpr(p, 0);
        if (!in) return NULL;
        if (peek_type(p) != PT_RIGHT_PAREN) {
            unexpected(p, ctx, "\")\"");
            return NULL;
        }
        advance(p);
        return dnode(p, PROMQL_DUR_PAREN, in, NULL);
    }
    if (t == PT_IDENTIFIER) {
        promql_token_t it = advance(p);
        promql_dur_op_t op = ident_is(p, &it, "step")     ? PROMQL_DUR_STEP
                             : ident_is(p, &it, "range")  ? PROMQL_DUR_RANGE
                             : ident_is(p, &it, "min_of") ? PROMQL_DUR_MIN
                             : ident_is(p, &it, "max_of") ? PROMQL_DUR_MAX
                                                          : (promql_dur_op_t)0;
        if (!op) {
            fail_at(p, it.pos, "unexpected identifier %.*s in %s, expected duration", (int)it.len,
                    p->in + it.pos, ctx);
            return NULL;
        }
        if (peek_type(p) != PT_LEFT_PAREN) {
            unexpected(p, ctx, "\"(\"");
            return NULL;
        }
        advance(p);
        const promql_dur_t *a = NULL, *b = NULL;
        if (op == PROMQL_DUR_MIN || op == PROMQL_DUR_MAX) {
            if (!(a = parse_dexpr(p, 0))) return NULL;
            if (peek_type(p) != PT_COMMA) {
                unexpected(p, ctx, "\",\"");
                return NULL;
            }
            advance(p);
            if (!(b = parse_dexpr(p, 0))) return NULL;
        }
        if (peek_type(p) != PT_RIGHT_PAREN) {
            unexpected(p, ctx, "\")\"");
            return NULL;
        }
        advance(p);
        return dnode(p, op, a, b);
    }
    unexpected(p, ctx, "duration");
    return NULL;
}

/* A signed term; in_expr: inside a duration expression, where only ^ binds
 * tighter than a sign (-2^2 = -(2^2)); after `offset` the sign takes the term
 * alone (`x offset -2 ^ 2` squares the vector). */
static promql_dur_t *parse_dunary(parser_t *p, const char *ctx, bool in_expr)
{
    promql_tok_t t = peek_type(p);
    if (t == PT_SUB || t == PT_ADD) {
        advance(p);
        promql_dur_t *x = parse_dunary(p, ctx, in_expr);
        while (in_expr && x && !p->failed && peek_type(p) == PT_POW) {
            advance(p);
            promql_dur_t *r = parse_dexpr(p, 6);
            if (!r) return NULL;
            x = dnode(p, PROMQL_DUR_POW, x, r);
        }
        if (!x) return NULL;
        return t == PT_SUB ? dnode(p, PROMQL_DUR_NEG, x, NULL) : x;
    }
    return parse_datom(p, ctx);
}

static int dprec(promql_tok_t t, promql_dur_op_t *op)
{
    switch (t) {
    case PT_ADD: *op = PROMQL_DUR_ADD; return 4;
    case PT_SUB: *op = PROMQL_DUR_SUB; return 4;
    case PT_MUL: *op = PROMQL_DUR_MUL; return 5;
    case PT_DIV: *op = PROMQL_DUR_DIV; return 5;
    case PT_MOD: *op = PROMQL_DUR_MOD; return 5;
    case PT_POW: *op = PROMQL_DUR_POW; return 6;
    default: return -1;
    }
}

static promql_dur_t *parse_dexpr(parser_t *p, int min_prec)
{
    if (++p->depth > PROMQL_MAX_DEPTH) {
        fail_limit(p, "query is nested too deeply (limit 1000 levels)");
        return NULL;
    }
    promql_dur_t *l = parse_dunary(p, "duration expression", true);
    while (l && !p->failed) {
        promql_dur_op_t op;
        int pr = dprec(peek_type(p), &op);
        if (pr < 0 || pr < min_prec) break;
        advance(p);
        promql_dur_t *r = parse_dexpr(p, op == PROMQL_DUR_POW ? pr : pr + 1);
        if (!r) {
            l = NULL;
            break;
        }
        l = dnode(p, op, l, r);
    }
    p->depth--;
    return p->failed ? NULL : l;
}

double promql_dur_eval(const promql_dur_t *d, int64_t step_ms, int64_t range_ms)
{
    double a = d->a ? promql_dur_eval(d->a, step_ms, range_ms) : 0;
    double b = d->b ? promql_dur_eval(d->b, step_ms, range_ms) : 0;
    switch (d->op) {
    case PROMQL_DUR_NUM: return d->v;
    case PROMQL_DUR_STEP: return (double)step_ms / 1000.0;
    case PROMQL_DUR_RANGE: return (double)range_ms / 1000.0;
    case PROMQL_DUR_NEG: return -a;
    case PROMQL_DUR_ADD: return a + b;
    case PROMQL_DUR_SUB: return a - b;
    case PROMQL_DUR_MUL: return a * b;
    case PROMQL_DUR_DIV: return a / b;
    case PROMQL_DUR_MOD: return fmod(a, b);
    case PROMQL_DUR_POW: return pow(a, b);
    case PROMQL_DUR_MIN: return a < b ? a : b;
    case PROMQL_DUR_MAX: return a > b ? a : b;
    case PROMQL_DUR_PAREN: return a;
    }
    return 0;
}

/* Seconds to ms with Prometheus' checks; positive = the value must be > 0. */
static bool dur_to_ms(parser_t *p, uint32_t pos, double sec, bool positive, int64_t *out)
{
    double ms = round(sec * 1000.0);
    if (isnan(ms) || !(ms < 9.2e18 && ms > -9.2e18)) {
        fail_at(p, pos, "duration out of range");
        return false;
    }
    if (positive && ms <= 0) {
        fail_at(p, pos, "duration must be greater than 0");
        return false;
    }
    *out = (int64_t)ms;
    return true;
}

/* A duration where 2.x takes a duration token: a full expression in brackets
 * (offset_ctx NULL), or one term after `offset`. *out_ms gets the folded value,
 * *expr the tree when it needs the query (then *out_ms is 0). */
static bool parse_dur_slot(parser_t *p, bool after_offset, bool positive, int64_t *out_ms,
                           const promql_dur_t **expr)
{
    (void)peek_type(p);
    uint32_t pos = p->tok[0].pos;
    promql_dur_t *d = after_offset ? parse_dunary(p, "offset", false) : parse_dexpr(p, 0);
    if (!d) return false;
    *expr = NULL;
    *out_ms = 0;
    if (!dur_const(d)) {
        *expr = d;
        return true;
    }
    return dur_to_ms(p, pos, promql_dur_eval(d, 0, 0), positive, out_ms);
}

/* ---- Regex matchers ----
 *
 * Go's RE2 syntax check and its error texts live in labels/regex.c (shared with
 * relabelling, templates and label_replace); the matcher reports them as
 * `invalid regular expression "v": error parsing regexp: ...`, of which the parser
 * keeps the Go part, as Prometheus prints it. */

static im_matcher_t *new_matcher_named(parser_t *p, im_match_type_t type,
                                       const promql_token_t *name, const char *nm, size_t nlen,
                                       const char *val, size_t vlen)
{
    im_matcher_t *m = NULL;
    im_err_t e;
    im_err_clear(&e);
    unsigned flags = p->lang.compat >= 3 ? IM_MATCHER_DOTALL : 0;
    if (im_matcher_new_flags(type, nm, nlen, val, vlen, flags, &m, &e) != IM_OK) {
        const char *msg = e.msg;
        size_t skip = strlen("invalid regular expression \"") + vlen + strlen("\": ");
        if (strlen(msg) > skip) msg += skip;
        fail_at(p, name->pos, "%s", msg);
        return NULL;
    }
    promql__owner_add_matcher(p->owner, m);
    return m;
}

static im_matcher_t *new_matcher(parser_t *p, im_match_type_t type, const promql_token_t *name,
                                 const char *val, size_t vlen)
{
    return new_matcher_named(p, type, name, p->in + name->pos, name->len, val, vlen);
}

/* ---- Grammar ---- */

static promql_expr_t *parse_expr(parser_t *p, int min_prec);
static promql_range_ext_t parse_range_ext(parser_t *p);

static bool can_be_metric_identifier(promql_tok_t t)
{
    switch (t) {
    case PT_AVG:
    case PT_BOTTOMK:
    case PT_BY:
    case PT_COUNT:
    case PT_COUNT_VALUES:
    case PT_GROUP:
    case PT_IDENTIFIER:
    case PT_LAND:
    case PT_LOR:
    case PT_LUNLESS:
    case PT_MAX:
    case PT_METRIC_IDENTIFIER:
    case PT_MIN:
    case PT_OFFSET:
    case PT_QUANTILE:
    case PT_STDDEV:
    case PT_STDVAR:
    case PT_SUM:
    case PT_TOPK:
    case PT_LIMITK:
    case PT_LIMIT_RATIO:
    case PT_WITHOUT:
    case PT_START:
    case PT_END: return true;
    default: return false;
    }
}

static bool can_be_label(promql_tok_t t)
{
    switch (t) {
    case PT_BOOL:
    case PT_GROUP_LEFT:
    case PT_GROUP_RIGHT:
    case PT_IGNORING:
    case PT_ON:
    case PT_ATAN2: return true;
    default: return can_be_metric_identifier(t);
    }
}

static bool can_start_expr(promql_tok_t t)
{
    switch (t) {
    case PT_NUMBER:
    case PT_STRING:
    case PT_LEFT_PAREN:
    case PT_LEFT_BRACE:
    case PT_ADD:
    case PT_SUB: return true;
    default: return can_be_metric_identifier(t);
    }
}

static bool is_aggregator(promql_tok_t t)
{
    return t > PT_AGGS_START && t < PT_AGGS_END;
}

/* Room for one more element in an arena array of n elements and capacity *cap
 * (doubling, from 4), plus `spare` slots past the capacity. Returns the array. */
static void *arena_grow(parser_t *p, void *arr, size_t n, size_t *cap, size_t size, size_t spare)
{
    if (n < *cap) return arr;
    size_t ncap = *cap ? *cap * 2 : 4;
    void *na = im_arena_alloc(p->arena, (ncap + spare) * size);
    if (n) memcpy(na, arr, n * size);
    *cap = ncap;
    return na;
}

/* The punctuation of a `{...}` or `(...)` list. list_start, just after the
 * opening token: an empty list's closing token. list_next, after an element: `,`
 * (a trailing one may close the list) or the closing token. Both return
 * LIST_MORE when an element follows, LIST_END when the closing token was
 * consumed, LIST_ERR on error. */
enum { LIST_ERR = -1, LIST_END, LIST_MORE };
static int list_start(parser_t *p, promql_tok_t close)
{
    if (peek_type(p) == close) {
        advance(p);
        return LIST_END;
    }
    return p->failed ? LIST_ERR : LIST_MORE;
}

static int list_next(parser_t *p, promql_tok_t close, const char *ctx, const char *want)
{
    promql_tok_t t = peek_type(p);
    if (t == PT_COMMA) {
        advance(p);
        if (peek_type(p) == close) {
            advance(p);
            return LIST_END;
        }
        return p->failed ? LIST_ERR : LIST_MORE;
    }
    if (t == close) {
        advance(p);
        return LIST_END;
    }
    unexpected(p, ctx, want);
    return LIST_ERR;
}

/* The matching operator and the quoted value after a label name: false with
 * the error set. *val is in the arena. */
static bool parse_match_value(parser_t *p, im_match_type_t *mt, char **val, size_t *vlen)
{
    switch (peek_type(p)) {
    case PT_EQL: *mt = IM_MATCH_EQ; break;
    case PT_NEQ: *mt = IM_MATCH_NEQ; break;
    case PT_EQL_REGEX: *mt = IM_MATCH_RE; break;
    case PT_NEQ_REGEX: *mt = IM_MATCH_NRE; break;
    default: unexpected(p, "label matching", "label matching operator"); return false;
    }
    advance(p);
    if (peek_type(p) != PT_STRING) {
        unexpected(p, "label matching", "string");
        return false;
    }
    promql_token_t vt = advance(p);
    *val = promql__unquote(p->arena, p->in + vt.pos, vt.len, vlen);
    return true;
}

/* Label matchers after '{' has been seen (not consumed). Appends to *ms. Under
 * compat 3 a label name may be quoted (`{"a.b"="x"}`, UTF-8) and a quoted string
 * on its own is the metric name (`{"my.metric"}`): *qname then (else NULL). */
static bool parse_label_matchers(parser_t *p, im_matcher_t ***ms, size_t *nms,
                                 const im_istr_t **qname)
{
    advance(p); /* { */
    size_t cap = 0;
    *ms = NULL;
    *nms = 0;
    *qname = NULL;
    int r = list_start(p, PT_RIGHT_BRACE);
    if (r != LIST_MORE) return r == LIST_END && !p->failed;
    for (;;) {
        if (p->lang.compat >= 3 && peek_type(p) == PT_STRING) {
            promql_token_t qt = advance(p);
            size_t qlen;
            char *q = promql__unquote(p->arena, p->in + qt.pos, qt.len, &qlen);
            if (qlen == 0 || !im_utf8_valid(q, qlen) || memchr(q, 0, qlen)) {
                fail_at(p, qt.pos, "invalid label name %.*s", (int)qt.len, p->in + qt.pos);
                return false;
            }
            promql_tok_t nt = peek_type(p);
            if (nt == PT_COMMA || nt == PT_RIGHT_BRACE) {
                if (*qname) {
                    fail_at(p, qt.pos, "metric name must not be set twice");
                    return false;
                }
                *qname = intern_owned(p, q, qlen);
            } else {
                im_match_type_t mt;
                char *val;
                size_t vlen;
                if (!parse_match_value(p, &mt, &val, &vlen)) return false;
                im_matcher_t *m = new_matcher_named(p, mt, &qt, q, qlen, val, vlen);
                if (!m) return false;
                *ms = arena_grow(p, *ms, *nms, &cap, sizeof **ms, 1);
                (*ms)[(*nms)++] = m;
            }
            r = list_next(p, PT_RIGHT_BRACE, "label matching", "\",\" or \"}\"");
            if (r != LIST_MORE) return r == LIST_END && !p->failed;
            continue;
        }
        if (peek_type(p) != PT_IDENTIFIER) {
            unexpected(p, "label matching", "identifier or \"}\"");
            return false;
        }
        promql_token_t name = advance(p);
        im_match_type_t mt;
        char *val;
        size_t vlen;
        if (!parse_match_value(p, &mt, &val, &vlen)) return false;
        im_matcher_t *m = new_matcher(p, mt, &name, val, vlen);
        if (!m) return false;
        *ms = arena_grow(p, *ms, *nms, &cap, sizeof **ms, 1); /* + 1: the name's */
        (*ms)[(*nms)++] = m;
        r = list_next(p, PT_RIGHT_BRACE, "label matching", "\",\" or \"}\"");
        if (r != LIST_MORE) return r == LIST_END && !p->failed;
    }
}

static promql_expr_t *parse_vector_selector(parser_t *p)
{
    uint32_t start = peek(p)->pos;
    const im_istr_t *name = NULL;
    im_matcher_t **ms = NULL;
    size_t nms = 0;
    if (peek_type(p) != PT_LEFT_BRACE) {
        promql_token_t nt = advance(p);
        name = intern_owned(p, p->in + nt.pos, nt.len);
        const im_istr_t *qn = NULL;
        if (peek_type(p) == PT_LEFT_BRACE && !parse_label_matchers(p, &ms, &nms, &qn)) return NULL;
        if (qn) {
            fail_at(p, start, "metric name must not be set twice: %.*s and \"%s\"", (int)nt.len,
                    p->in + nt.pos, qn->s);
            return NULL;
        }
    } else if (!parse_label_matchers(p, &ms, &nms, &name)) {
        return NULL;
    }
    if (p->failed) return NULL;
    if (name) {
        im_matcher_t *m = NULL;
        if (im_matcher_new(IM_MATCH_EQ, IM_METRIC_NAME, strlen(IM_METRIC_NAME), name->s, name->len,
                           &m, NULL) != IM_OK) {
            fail_at(p, start, "invalid metric name");
            return NULL;
        }
        promql__owner_add_matcher(p->owner, m);
        im_matcher_t **nm = im_arena_alloc(p->arena, (nms + 1) * sizeof *nm);
        if (nms) memcpy(nm, ms, nms * sizeof *nm);
        nm[nms++] = m;
        ms = nm;
    }
    promql_expr_t *e = node(p, PROMQL_NODE_VECTOR_SELECTOR, start);
    e->type = PROMQL_TYPE_VECTOR;
    e->u.vs.name = name;
    e->u.vs.matchers = ms;
    e->u.vs.nmatchers = nms;
    return e;
}

/* `( label, ... )` after by/without/on/ignoring/group_x. */
static bool parse_grouping_labels(parser_t *p, const im_istr_t ***out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (peek_type(p) != PT_LEFT_PAREN) {
        unexpected(p, "grouping opts", "\"(\"");
        return false;
    }
    advance(p);
    int r = list_start(p, PT_RIGHT_PAREN);
    if (r != LIST_MORE) return r == LIST_END && !p->failed;
    size_t cap = 0;
    for (;;) {
        promql_tok_t t = peek_type(p);
        if (p->failed) return false;
        if (t == PT_STRING && p->lang.compat >= 3) { /* "a.b": a quoted (UTF-8) name */
            promql_token_t st = advance(p);
            size_t qlen;
            char *q = promql__unquote(p->arena, p->in + st.pos, st.len, &qlen);
            if (qlen == 0 || !im_utf8_valid(q, qlen) || memchr(q, 0, qlen)) {
                fail_at(p, st.pos, "invalid label name %.*s", (int)st.len, p->in + st.pos);
                return false;
            }
            *out = arena_grow(p, *out, *nout, &cap, sizeof **out, 0);
            (*out)[(*nout)++] = intern_owned(p, q, qlen);
            r = list_next(p, PT_RIGHT_PAREN, "grouping opts", "\",\" or \")\"");
            if (r != LIST_MORE) return r == LIST_END && !p->failed;
            continue;
        }
        if (!can_be_label(t)) {
            unexpected(p, "grouping opts", "label");
            return false;
        }
        const promql_token_t *lt = peek(p);
        if (!is_label_name(p->in + lt->pos, lt->len)) {
            unexpected(p, "grouping opts", "label");
            return false;
        }
        promql_token_t l = advance(p);
        *out = arena_grow(p, *out, *nout, &cap, sizeof **out, 0);
        (*out)[(*nout)++] = intern_owned(p, p->in + l.pos, l.len);
        r = list_next(p, PT_RIGHT_PAREN, "grouping opts", "\",\" or \")\"");
        if (r != LIST_MORE) return r == LIST_END && !p->failed;
    }
}

/* `( args )` of a call or an aggregation; '(' is the current token. */
static bool parse_call_args(parser_t *p, promql_expr_t ***args, size_t *nargs)
{
    advance(p); /* ( */
    *args = NULL;
    *nargs = 0;
    size_t cap = 0;
    int r = list_start(p, PT_RIGHT_PAREN);
    if (r != LIST_MORE) return r == LIST_END && !p->failed;
    for (;;) {
        promql_expr_t *a = parse_expr(p, 0);
        if (!a) return false;
        *args = arena_grow(p, *args, *nargs, &cap, sizeof **args, 0);
        (*args)[(*nargs)++] = a;
        promql_tok_t t = peek_type(p);
        if (t == PT_COMMA) {
            promql_token_t comma = advance(p);
            /* Prometheus reduces `args ,` (its trailing-comma rule) whenever the
             * next token cannot start an expression, not only before ')' */
            promql_tok_t nt = peek_type(p);
            if (p->failed) return false;
            if (nt == PT_RIGHT_PAREN || !can_start_expr(nt)) {
                fail_at(p, comma.pos, "trailing commas not allowed in function call args");
                return false;
            }
            continue;
        }
        if (t == PT_RIGHT_PAREN) {
            advance(p);
            return !p->failed;
        }
        unexpected(p, NULL, NULL);
        return false;
    }
}

static promql_expr_t *parse_call(parser_t *p)
{
    promql_token_t name = advance(p);
    promql_expr_t **args;
    size_t nargs;
    if (!parse_call_args(p, &args, &nargs)) return NULL;
    const promql_function_t *f = promql_function_lookup(p->in + name.pos, name.len);
    int why = f ? promql_function_usable(f, &p->lang) : 1;
    if (why == 2) {
        /* Prometheus 3's words for an experimental function without its flag */
        fail_at(p, name.pos,
                "function \"%s\" is not enabled (--enable-feature=promql-experimental-functions)",
                f->name);
        return NULL;
    }
    if (why) {
        im_buf_t q;
        im_buf_init(&q, 400);
        (void)promql__go_quote(&q, p->in + name.pos, name.len);
        fail_at(p, name.pos, "unknown function with name %s", q.data ? q.data : "\"\"");
        im_buf_free(&q);
        return NULL;
    }
    promql_expr_t *e = node(p, PROMQL_NODE_CALL, name.pos);
    e->type = f->return_type;
    e->u.call.func = f;
    e->u.call.args = args;
    e->u.call.nargs = nargs;
    return e;
}

static promql_aggop_t aggop_of(promql_tok_t t)
{
    switch (t) {
    case PT_SUM: return PROMQL_AGG_SUM;
    case PT_AVG: return PROMQL_AGG_AVG;
    case PT_COUNT: return PROMQL_AGG_COUNT;
    case PT_MIN: return PROMQL_AGG_MIN;
    case PT_MAX: return PROMQL_AGG_MAX;
    case PT_GROUP: return PROMQL_AGG_GROUP;
    case PT_STDDEV: return PROMQL_AGG_STDDEV;
    case PT_STDVAR: return PROMQL_AGG_STDVAR;
    case PT_TOPK: return PROMQL_AGG_TOPK;
    case PT_BOTTOMK: return PROMQL_AGG_BOTTOMK;
    case PT_COUNT_VALUES: return PROMQL_AGG_COUNT_VALUES;
    case PT_LIMITK: return PROMQL_AGG_LIMITK;
    case PT_LIMIT_RATIO: return PROMQL_AGG_LIMIT_RATIO;
    default: return PROMQL_AGG_QUANTILE;
    }
}

static promql_expr_t *parse_aggregate(parser_t *p)
{
    promql_token_t op = advance(p);
    promql_expr_t *e = node(p, PROMQL_NODE_AGGREGATE, op.pos);
    e->type = PROMQL_TYPE_VECTOR;
    e->u.agg.op = aggop_of(op.type);
    if ((op.type == PT_LIMITK || op.type == PT_LIMIT_RATIO) && !p->lang.experimental_functions) {
        fail_at(p, op.pos,
                "limitk() and limit_ratio() are experimental and must be enabled with "
                "--enable-feature=promql-experimental-functions");
        return NULL;
    }
    bool have_mod = false;
    p->agg_ctx++;
    promql_tok_t t = peek_type(p);
    if (t == PT_BY || t == PT_WITHOUT) {
        advance(p);
        e->u.agg.without = t == PT_WITHOUT;
        int saved = p->agg_ctx;
        p->agg_ctx = 0;
        bool ok = parse_grouping_labels(p, &e->u.agg.grouping, &e->u.agg.ngrouping);
        p->agg_ctx = saved;
        if (!ok) return NULL;
        have_mod = true;
        if (peek_type(p) != PT_LEFT_PAREN) {
            unexpected(p, "aggregation", NULL);
            return NULL;
        }
    }
    if (p->failed) return NULL;
    promql_expr_t **args;
    size_t nargs;
    if (!parse_call_args(p, &args, &nargs)) return NULL;
    p->agg_ctx--;
    if (!have_mod) {
        t = peek_type(p);
        if (t == PT_BY || t == PT_WITHOUT) {
            advance(p);
            e->u.agg.without = t == PT_WITHOUT;
            if (!parse_grouping_labels(p, &e->u.agg.grouping, &e->u.agg.ngrouping)) return NULL;
        }
        if (p->failed) return NULL;
    }
    e->pos_end = p->last_end;
    if (nargs == 0) {
        fail_at(p, op.pos, "no arguments for aggregate expression provided");
        return NULL;
    }
    size_t want = promql_aggop_param_type(e->u.agg.op) != PROMQL_TYPE_NONE ? 2 : 1;
    if (nargs != want) {
        fail_at(p, op.pos,
                "wrong number of arguments for aggregate expression provided, expected %zu, got "
                "%zu",
                want, nargs);
        return NULL;
    }
    if (want == 2) e->u.agg.param = args[0];
    e->u.agg.expr = args[want - 1];
    return e;
}

/* ---- Postfix: [range], [range:step], offset, @ ---- */

static promql_expr_t *inner_vs(promql_expr_t *e)
{
    return e->kind == PROMQL_NODE_MATRIX_SELECTOR ? e->u.ms.vs : e;
}

static const char *const modifier_err =
    "modifier must be preceded by an instant vector selector or range vector selector or a "
    "subquery";

static void add_offset(parser_t *p, promql_expr_t *e, int64_t off, const promql_dur_t *expr)
{
    int64_t *slot;
    const promql_dur_t **eslot;
    if (e->kind == PROMQL_NODE_VECTOR_SELECTOR || e->kind == PROMQL_NODE_MATRIX_SELECTOR) {
        slot = &inner_vs(e)->u.vs.offset_ms;
        eslot = &inner_vs(e)->u.vs.offset_expr;
    } else if (e->kind == PROMQL_NODE_SUBQUERY) {
        slot = &e->u.sq.offset_ms;
        eslot = &e->u.sq.offset_expr;
    } else {
        fail_at(p, e->pos_start, "offset %s", modifier_err);
        return;
    }
    if (*slot != 0 || *eslot) {
        fail_at(p, e->pos_start, "offset may not be set multiple times");
        return;
    }
    *slot = off;
    *eslot = expr;
    e->pos_end = p->last_end;
}

static void set_at(parser_t *p, promql_expr_t *e, promql_at_kind_t kind, double ts)
{
    if (kind == PROMQL_AT_TIMESTAMP &&
        (isinf(ts) || isnan(ts) || ts >= 9223372036854775807.0 || ts <= -9223372036854775808.0)) {
        char num[400];
        if (isnan(ts))
            snprintf(num, sizeof num, "NaN");
        else if (isinf(ts))
            snprintf(num, sizeof num, "%s", ts > 0 ? "+Inf" : "-Inf");
        else
            snprintf(num, sizeof num, "%f", ts);
        fail_at(p, e->pos_start, "timestamp out of bounds for @ modifier: %s", num);
        return;
    }
    promql_at_kind_t *ak;
    int64_t *ams;
    if (e->kind == PROMQL_NODE_VECTOR_SELECTOR || e->kind == PROMQL_NODE_MATRIX_SELECTOR) {
        ak = &inner_vs(e)->u.vs.at;
        ams = &inner_vs(e)->u.vs.at_ms;
    } else if (e->kind == PROMQL_NODE_SUBQUERY) {
        ak = &e->u.sq.at;
        ams = &e->u.sq.at_ms;
    } else {
        fail_at(p, e->pos_start, "@ %s", modifier_err);
        return;
    }
    if (*ak != PROMQL_AT_NONE) {
        fail_at(p, e->pos_start, "@ <timestamp> may not be set multiple times");
        return;
    }
    *ak = kind;
    if (kind == PROMQL_AT_TIMESTAMP) {
        double ms = round(ts * 1000.0);
        /* Go converts out-of-range floats to MinInt64 on amd64 */
        if (!(ms < 9223372036854775807.0 && ms >= -9223372036854775808.0))
            *ams = INT64_MIN;
        else
            *ams = (int64_t)ms;
    }
    e->pos_end = p->last_end;
}

static promql_expr_t *parse_postfix(parser_t *p, promql_expr_t *e)
{
    int chain = 0;
    while (e && !p->failed) {
        if (++chain > PROMQL_MAX_DEPTH) {
            fail_limit(p, "query is nested too deeply (limit 1000 levels)");
            return NULL;
        }
        promql_tok_t t = peek_type(p);
        if (p->failed) return NULL;
        if (t == PT_LEFT_BRACKET) {
            promql_token_t lb = advance(p);
            int64_t range;
            const promql_dur_t *range_expr = NULL, *step_expr = NULL;
            if (p->lang.compat >= 3) {
                if (!parse_dur_slot(p, false, true, &range, &range_expr)) return NULL;
            } else {
                if (peek_type(p) != PT_DURATION) {
                    unexpected(p, "subquery selector", "duration");
                    return NULL;
                }
                promql_token_t dt = advance(p);
                if (!parse_duration_tok(p, &dt, &range)) return NULL;
            }
            t = peek_type(p);
            if (t == PT_RIGHT_BRACKET) {
                advance(p);
                const char *msg = NULL;
                if (e->kind != PROMQL_NODE_VECTOR_SELECTOR)
                    msg = "ranges only allowed for vector selectors";
                else if (e->u.vs.offset_ms != 0 || e->u.vs.offset_expr)
                    msg = "no offset modifiers allowed before range";
                else if (e->u.vs.at != PROMQL_AT_NONE)
                    msg = "no @ modifiers allowed before range";
                else if (e->u.vs.smoothed)
                    msg = "no smoothed modifier allowed before range";
                if (msg) {
                    fail_at(p, lb.pos, "%s", msg);
                    return NULL;
                }
                promql_expr_t *m = node(p, PROMQL_NODE_MATRIX_SELECTOR, e->pos_start);
                m->type = PROMQL_TYPE_MATRIX;
                m->u.ms.vs = e;
                m->u.ms.range_ms = range;
                m->u.ms.range_expr = range_expr;
                m->u.ms.ext = parse_range_ext(p);
                e = m;
                continue;
            }
            if (t != PT_COLON) {
                unexpected(p, "subquery or range", "\":\" or \"]\"");
                return NULL;
            }
            advance(p);
            int64_t step = 0;
            t = peek_type(p);
            if (p->lang.compat >= 3 && t != PT_RIGHT_BRACKET) {
                if (!parse_dur_slot(p, false, true, &step, &step_expr)) return NULL;
                if (peek_type(p) != PT_RIGHT_BRACKET) {
                    unexpected(p, "subquery selector", "\"]\"");
                    return NULL;
                }
            } else if (t == PT_DURATION) {
                promql_token_t st = advance(p);
                if (!parse_duration_tok(p, &st, &step)) return NULL;
                if (peek_type(p) != PT_RIGHT_BRACKET) {
                    unexpected(p, "subquery selector", "\"]\"");
                    return NULL;
                }
            } else if (t != PT_RIGHT_BRACKET) {
                unexpected(p, "subquery selector", "duration or \"]\"");
                return NULL;
            }
            advance(p);
            promql_expr_t *s = node(p, PROMQL_NODE_SUBQUERY, e->pos_start);
            s->type = PROMQL_TYPE_MATRIX;
            s->u.sq.expr = e;
            s->u.sq.range_ms = range;
            s->u.sq.step_ms = step;
            s->u.sq.range_expr = range_expr;
            s->u.sq.step_expr = step_expr;
            e = s;
            continue;
        }
        if (t == PT_IDENTIFIER && e->kind == PROMQL_NODE_VECTOR_SELECTOR && !e->u.vs.smoothed &&
            p->lang.extended_range_selectors && p->lang.compat >= 3) {
            const promql_token_t *id = peek(p);
            if (id->len == 8 && memcmp(p->in + id->pos, "smoothed", 8) == 0) {
                advance(p);
                e->u.vs.smoothed = true;
                e->pos_end = p->last_end;
                continue;
            }
        }
        if (t == PT_OFFSET && p->lang.compat >= 3) {
            advance(p);
            int64_t off;
            const promql_dur_t *off_expr;
            if (!parse_dur_slot(p, true, false, &off, &off_expr)) return NULL;
            add_offset(p, e, off, off_expr);
            continue;
        }
        if (t == PT_OFFSET) {
            advance(p);
            bool neg = false;
            t = peek_type(p);
            if (t == PT_SUB) {
                advance(p);
                neg = true;
                t = peek_type(p);
            }
            if (t != PT_DURATION) {
                unexpected(p, "offset", "duration");
                return NULL;
            }
            promql_token_t dt = advance(p);
            int64_t off;
            if (!parse_duration_tok(p, &dt, &off)) return NULL;
            add_offset(p, e, neg ? -off : off, NULL);
            continue;
        }
        if (t == PT_AT) {
            advance(p);
            t = peek_type(p);
            if (t == PT_START || t == PT_END) {
                advance(p);
                if (peek_type(p) != PT_LEFT_PAREN) {
                    unexpected(p, "@", "timestamp");
                    return NULL;
                }
                advance(p);
                if (peek_type(p) != PT_RIGHT_PAREN) {
                    unexpected(p, "@", "timestamp");
                    return NULL;
                }
                advance(p);
                set_at(p, e, t == PT_START ? PROMQL_AT_START : PROMQL_AT_END, 0);
                continue;
            }
            bool neg = false;
            if (t == PT_ADD || t == PT_SUB) {
                advance(p);
                neg = t == PT_SUB;
                t = peek_type(p);
            }
            if (t != PT_NUMBER) {
                unexpected(p, "@", "timestamp");
                return NULL;
            }
            promql_token_t nt = advance(p);
            double v;
            if (!parse_number(p, &nt, &v)) return NULL;
            set_at(p, e, PROMQL_AT_TIMESTAMP, neg ? -v : v);
            continue;
        }
        break;
    }
    return p->failed ? NULL : e;
}

/* ---- Primary and unary ---- */

static promql_expr_t *parse_unary_or_primary(parser_t *p)
{
    const promql_token_t *t = peek(p);
    if (p->failed) return NULL;
    promql_expr_t *e = NULL;
    switch (t->type) {
    case PT_ADD:
    case PT_SUB: {
        promql_token_t op = advance(p);
        promql_expr_t *x = parse_expr(p, 6);
        if (!x) return NULL;
        if (x->kind == PROMQL_NODE_NUMBER) {
            if (op.type == PT_SUB) x->u.number.value = -x->u.number.value;
            x->pos_start = op.pos;
            return x;
        }
        e = node(p, PROMQL_NODE_UNARY, op.pos);
        e->u.unary.op = op.type == PT_SUB ? PROMQL_UNARY_MINUS : PROMQL_UNARY_PLUS;
        e->u.unary.expr = x;
        e->type = x->type;
        return e;
    }
    case PT_NUMBER: {
        promql_token_t nt = advance(p);
        double v;
        if (!parse_number(p, &nt, &v)) return NULL;
        e = node(p, PROMQL_NODE_NUMBER, nt.pos);
        e->type = PROMQL_TYPE_SCALAR;
        e->u.number.value = v;
        break;
    }
    case PT_STRING: {
        promql_token_t st = advance(p);
        e = node(p, PROMQL_NODE_STRING, st.pos);
        e->type = PROMQL_TYPE_STRING;
        e->u.string.s = promql__unquote(p->arena, p->in + st.pos, st.len, &e->u.string.len);
        break;
    }
    case PT_LEFT_PAREN: {
        promql_token_t lp = advance(p);
        promql_expr_t *x = parse_expr(p, 0);
        if (!x) return NULL;
        if (peek_type(p) != PT_RIGHT_PAREN) {
            unexpected(p, NULL, NULL);
            return NULL;
        }
        advance(p);
        e = node(p, PROMQL_NODE_PAREN, lp.pos);
        e->u.paren.expr = x;
        e->type = x->type;
        break;
    }
    case PT_LEFT_BRACE: e = parse_vector_selector(p); break;
    case PT_IDENTIFIER:
        if (peek_n(p, 1)->type == PT_LEFT_PAREN && !p->failed)
            e = parse_call(p);
        else if (!p->failed)
            e = parse_vector_selector(p);
        break;
    default:
        if (is_aggregator(t->type)) {
            promql_tok_t nt = peek_n(p, 1)->type;
            if (p->failed) return NULL;
            if (nt == PT_LEFT_PAREN || nt == PT_BY || nt == PT_WITHOUT) {
                e = parse_aggregate(p);
                break;
            }
        }
        if (can_be_metric_identifier(t->type)) {
            e = parse_vector_selector(p);
            break;
        }
        unexpected(p, NULL, NULL);
        return NULL;
    }
    return parse_postfix(p, e);
}

static bool binop_of(promql_tok_t t, promql_binop_t *op)
{
    switch (t) {
    case PT_ADD: *op = PROMQL_OP_ADD; return true;
    case PT_SUB: *op = PROMQL_OP_SUB; return true;
    case PT_MUL: *op = PROMQL_OP_MUL; return true;
    case PT_DIV: *op = PROMQL_OP_DIV; return true;
    case PT_MOD: *op = PROMQL_OP_MOD; return true;
    case PT_POW: *op = PROMQL_OP_POW; return true;
    case PT_ATAN2: *op = PROMQL_OP_ATAN2; return true;
    case PT_EQLC: *op = PROMQL_OP_EQL; return true;
    case PT_NEQ: *op = PROMQL_OP_NEQ; return true;
    case PT_GTR: *op = PROMQL_OP_GTR; return true;
    case PT_LSS: *op = PROMQL_OP_LSS; return true;
    case PT_GTE: *op = PROMQL_OP_GTE; return true;
    case PT_LTE: *op = PROMQL_OP_LTE; return true;
    case PT_LAND: *op = PROMQL_OP_AND; return true;
    case PT_LOR: *op = PROMQL_OP_OR; return true;
    case PT_LUNLESS: *op = PROMQL_OP_UNLESS; return true;
    default: return false;
    }
}

/* Which fill modifier the next two tokens start (`fill(`, `fill_left(`,
 * `fill_right(`): 1, 2, 3; 0 when none (`x + fill` is the metric fill). */
static int fill_kind(parser_t *p)
{
    const promql_token_t *t = peek(p);
    if (p->failed || (t->type != PT_IDENTIFIER && t->type != PT_METRIC_IDENTIFIER)) return 0;
    const char *s = p->in + t->pos;
    int kind = 0;
    if (t->len == 4 && memcmp(s, "fill", 4) == 0)
        kind = 1;
    else if (t->len == 9 && memcmp(s, "fill_left", 9) == 0)
        kind = 2;
    else if (t->len == 10 && memcmp(s, "fill_right", 10) == 0)
        kind = 3;
    if (!kind) return 0;
    const promql_token_t *n = peek_n(p, 1);
    return !p->failed && n->type == PT_LEFT_PAREN ? kind : 0;
}

/* `anchored` / `smoothed` after a range (promql-extended-range-selectors). */
static promql_range_ext_t parse_range_ext(parser_t *p)
{
    if (!p->lang.extended_range_selectors || p->lang.compat < 3) return PROMQL_RANGE_PLAIN;
    const promql_token_t *t = peek(p);
    if (p->failed || t->type != PT_IDENTIFIER) return PROMQL_RANGE_PLAIN;
    const char *s = p->in + t->pos;
    promql_range_ext_t x = PROMQL_RANGE_PLAIN;
    if (t->len == 8 && memcmp(s, "anchored", 8) == 0)
        x = PROMQL_RANGE_ANCHORED;
    else if (t->len == 8 && memcmp(s, "smoothed", 8) == 0)
        x = PROMQL_RANGE_SMOOTHED;
    if (x) advance(p);
    return x;
}

/* Prometheus 3's fill modifiers after the matching clause: `fill(v)`, or
 * `fill_left(v)` and/or `fill_right(v)`; v a number literal, optionally signed.
 * Only with promql-binop-fill-modifiers (else `fill(` stays a function call). */
static bool parse_fill_modifiers(parser_t *p, promql_vector_matching_t *vm)
{
    if (!p->lang.binop_fill_modifiers || p->lang.compat < 3) return true;
    int kind;
    while ((kind = fill_kind(p)) != 0) {
        promql_token_t kw = advance(p);
        if ((kind == 1 && (vm->has_fill_left || vm->has_fill_right)) ||
            (kind == 2 && vm->has_fill_left) || (kind == 3 && vm->has_fill_right)) {
            fail_at(p, kw.pos, "duplicate or conflicting fill modifier %.*s", (int)kw.len,
                    p->in + kw.pos);
            return false;
        }
        advance(p); /* ( */
        double sign = 1;
        promql_tok_t t = peek_type(p);
        if (t == PT_SUB || t == PT_ADD) {
            advance(p);
            if (t == PT_SUB) sign = -1;
        }
        if (peek_type(p) != PT_NUMBER) {
            unexpected(p, "fill modifier", "number literal");
            return false;
        }
        promql_token_t nt = advance(p);
        double v;
        if (!parse_number(p, &nt, &v)) return false;
        v *= sign;
        if (peek_type(p) != PT_RIGHT_PAREN) {
            unexpected(p, "fill modifier", "\")\"");
            return false;
        }
        advance(p);
        if (kind != 3) {
            vm->has_fill_left = true;
            vm->fill_left = v;
        }
        if (kind != 2) {
            vm->has_fill_right = true;
            vm->fill_right = v;
        }
    }
    return !p->failed;
}

static promql_expr_t *parse_expr(parser_t *p, int min_prec)
{
    if (++p->depth > PROMQL_MAX_DEPTH) {
        fail_limit(p, "query is nested too deeply (limit 1000 levels)");
        return NULL;
    }
    promql_expr_t *lhs = parse_unary_or_primary(p);
    int chain = 0;
    while (lhs && !p->failed) {
        promql_binop_t op;
        promql_tok_t t = peek_type(p);
        if (p->failed || !binop_of(t, &op)) break;
        int prec = promql_binop_precedence(op);
        if (prec < min_prec) break;
        advance(p);
        promql_vector_matching_t *vm = im_arena_calloc(p->arena, sizeof *vm);
        bool rbool = false;
        if (peek_type(p) == PT_BOOL) {
            advance(p);
            rbool = true;
        }
        t = peek_type(p);
        if (t == PT_ON || t == PT_IGNORING) {
            advance(p);
            vm->on = t == PT_ON;
            if (!parse_grouping_labels(p, &vm->matching_labels, &vm->nmatching_labels)) break;
            t = peek_type(p);
            if (t == PT_GROUP_LEFT || t == PT_GROUP_RIGHT) {
                advance(p);
                vm->card = t == PT_GROUP_LEFT ? PROMQL_CARD_MANY_TO_ONE : PROMQL_CARD_ONE_TO_MANY;
                promql_tok_t n = peek_type(p);
                if (n == PT_LEFT_PAREN || !can_start_expr(n)) {
                    if (!parse_grouping_labels(p, &vm->include_labels, &vm->ninclude_labels)) break;
                }
            }
        }
        if (p->failed || !parse_fill_modifiers(p, vm)) break;
        promql_expr_t *rhs = parse_expr(p, op == PROMQL_OP_POW ? prec : prec + 1);
        if (!rhs) break;
        promql_expr_t *b = node(p, PROMQL_NODE_BINARY, lhs->pos_start);
        b->pos_end = rhs->pos_end;
        b->u.bin.op = op;
        b->u.bin.lhs = lhs;
        b->u.bin.rhs = rhs;
        b->u.bin.return_bool = rbool;
        b->u.bin.matching = vm;
        if (++chain > PROMQL_MAX_DEPTH) {
            fail_limit(p, "query is nested too deeply (limit 1000 levels)");
            break;
        }
        lhs = b;
    }
    p->depth--;
    return p->failed ? NULL : lhs;
}

/* Tree height, computed with a bounded recursion: every later recursion
 * (check, print, equality, evaluation) is bounded by PROMQL_MAX_DEPTH. */
static int tree_height(const promql_expr_t *e, int d);

static int max_height(int h, const promql_expr_t *child, int d)
{
    int c = tree_height(child, d);
    return c > h ? c : h;
}

static int tree_height(const promql_expr_t *e, int d)
{
    if (!e || d > PROMQL_MAX_DEPTH) return d;
    int h = d + 1;
    switch (e->kind) {
    case PROMQL_NODE_MATRIX_SELECTOR: h = max_height(h, e->u.ms.vs, d + 1); break;
    case PROMQL_NODE_SUBQUERY: h = max_height(h, e->u.sq.expr, d + 1); break;
    case PROMQL_NODE_CALL:
        for (size_t i = 0; i < e->u.call.nargs && h <= PROMQL_MAX_DEPTH; i++)
            h = max_height(h, e->u.call.args[i], d + 1);
        break;
    case PROMQL_NODE_AGGREGATE:
        h = max_height(h, e->u.agg.param, d + 1);
        h = max_height(h, e->u.agg.expr, d + 1);
        break;
    case PROMQL_NODE_BINARY:
        h = max_height(h, e->u.bin.lhs, d + 1);
        if (h <= PROMQL_MAX_DEPTH) h = max_height(h, e->u.bin.rhs, d + 1);
        break;
    case PROMQL_NODE_UNARY: h = max_height(h, e->u.unary.expr, d + 1); break;
    case PROMQL_NODE_PAREN: h = max_height(h, e->u.paren.expr, d + 1); break;
    default: break;
    }
    return h;
}

/* ---- Type check (Prometheus' checkAST) ---- */

static void check_err_type(parser_t *p, const promql_expr_t *e, promql_value_type_t want,
                           const char *ctx);

static void opr_pos(parser_t *p, const promql_expr_t *e, uint32_t *pos)
{
    uint32_t s = e->u.bin.lhs->pos_end;
    while (s < p->n &&
           (p->in[s] == ' ' || p->in[s] == '\t' || p->in[s] == '\n' || p->in[s] == '\r'))
        s++;
    *pos = s;
}

static promql_value_type_t check(parser_t *p, promql_expr_t *e)
{
    if (p->failed || !e) return PROMQL_TYPE_NONE;
    switch (e->kind) {
    case PROMQL_NODE_AGGREGATE:
        check_err_type(p, e->u.agg.expr, PROMQL_TYPE_VECTOR, "aggregation expression");
        if (e->u.agg.param)
            check_err_type(p, e->u.agg.param, promql_aggop_param_type(e->u.agg.op),
                           "aggregation parameter");
        break;
    case PROMQL_NODE_BINARY: {
        promql_binary_t *b = &e->u.bin;
        promql_value_type_t lt = check(p, b->lhs);
        promql_value_type_t rt = check(p, b->rhs);
        uint32_t opos;
        opr_pos(p, e, &opos);
        if (b->return_bool && !promql_binop_is_comparison(b->op))
            fail_at(p, opos, "bool modifier can only be used on comparison operators");
        if (promql_binop_is_comparison(b->op) && !b->return_bool && lt == PROMQL_TYPE_SCALAR &&
            rt == PROMQL_TYPE_SCALAR)
            fail_at(p, opos, "comparisons between scalars must use BOOL modifier");
        promql_vector_matching_t *vm = b->matching;
        if ((vm->has_fill_left || vm->has_fill_right) &&
            (promql_binop_is_set(b->op) || lt != PROMQL_TYPE_VECTOR || rt != PROMQL_TYPE_VECTOR))
            fail_at(p, opos,
                    "fill modifiers are only allowed on arithmetic and comparison operations "
                    "between two instant vectors");
        if (promql_binop_is_set(b->op) && vm->card == PROMQL_CARD_ONE_TO_ONE)
            vm->card = PROMQL_CARD_MANY_TO_MANY;
        for (size_t i = 0; i < vm->nmatching_labels; i++)
            for (size_t j = 0; j < vm->ninclude_labels; j++)
                if (vm->matching_labels[i] == vm->include_labels[j] && vm->on) {
                    im_buf_t q;
                    im_buf_init(&q, 400);
                    (void)promql__go_quote(&q, vm->matching_labels[i]->s,
                                           vm->matching_labels[i]->len);
                    fail_at(p, opos, "label %s must not occur in ON and GROUP clause at once",
                            q.data ? q.data : "");
                    im_buf_free(&q);
                }
        if (lt != PROMQL_TYPE_SCALAR && lt != PROMQL_TYPE_VECTOR)
            fail_at(p, b->lhs->pos_start,
                    "binary expression must contain only scalar and instant vector types");
        if (rt != PROMQL_TYPE_SCALAR && rt != PROMQL_TYPE_VECTOR)
            fail_at(p, b->rhs->pos_start,
                    "binary expression must contain only scalar and instant vector types");
        if (lt != PROMQL_TYPE_VECTOR || rt != PROMQL_TYPE_VECTOR) {
            if (vm->nmatching_labels > 0)
                fail_at(p, e->pos_start, "vector matching only allowed between instant vectors");
            b->matching = NULL;
        } else if (promql_binop_is_set(b->op)) {
            if (vm->card == PROMQL_CARD_ONE_TO_MANY || vm->card == PROMQL_CARD_MANY_TO_ONE)
                fail_at(p, e->pos_start, "no grouping allowed for \"%s\" operation",
                        promql_binop_str(b->op));
            if (vm->card != PROMQL_CARD_MANY_TO_MANY)
                fail_at(p, e->pos_start, "set operations must always be many-to-many");
        }
        if ((lt == PROMQL_TYPE_SCALAR || rt == PROMQL_TYPE_SCALAR) && promql_binop_is_set(b->op))
            fail_at(p, e->pos_start, "set operator \"%s\" not allowed in binary scalar expression",
                    promql_binop_str(b->op));
        e->type = (lt == PROMQL_TYPE_SCALAR && rt == PROMQL_TYPE_SCALAR) ? PROMQL_TYPE_SCALAR
                                                                         : PROMQL_TYPE_VECTOR;
        break;
    }
    case PROMQL_NODE_CALL: {
        const promql_function_t *f = e->u.call.func;
        size_t na = e->u.call.nargs;
        size_t nd = (size_t)f->nargs;
        if (f->variadic == 0) {
            if (nd != na)
                fail_at(p, e->pos_start, "expected %zu argument(s) in call to \"%s\", got %zu", nd,
                        f->name, na);
        } else {
            size_t minn = nd - 1;
            if (minn > na)
                fail_at(p, e->pos_start,
                        "expected at least %zu argument(s) in call to \"%s\", got %zu", minn,
                        f->name, na);
            else if (f->variadic > 0 && minn + (size_t)f->variadic < na)
                fail_at(p, e->pos_start,
                        "expected at most %zu argument(s) in call to \"%s\", got %zu",
                        minn + (size_t)f->variadic, f->name, na);
        }
        char ctx[128];
        snprintf(ctx, sizeof ctx, "call to function \"%s\"", f->name);
        for (size_t i = 0; i < na; i++) {
            size_t k = i;
            if (k >= nd) {
                if (f->variadic == 0) break;
                k = nd - 1;
            }
            /* info()'s second argument: a label selector that may match empty */
            bool info_sel = i == 1 && strcmp(f->name, "info") == 0;
            if (info_sel && e->u.call.args[i]->kind != PROMQL_NODE_VECTOR_SELECTOR) {
                fail_at(p, e->u.call.args[i]->pos_start,
                        "expected label selectors only, got %s instead",
                        promql_value_type_api_str(check(p, e->u.call.args[i])));
                break;
            }
            p->info_selector = info_sel;
            check_err_type(p, e->u.call.args[i], f->arg_types[k], ctx);
            p->info_selector = false;
        }
        break;
    }
    case PROMQL_NODE_PAREN: e->type = check(p, e->u.paren.expr); break;
    case PROMQL_NODE_UNARY: {
        promql_value_type_t t = check(p, e->u.unary.expr);
        if (t != PROMQL_TYPE_SCALAR && t != PROMQL_TYPE_VECTOR)
            fail_at(p, e->pos_start,
                    "unary expression only allowed on expressions of type scalar or instant "
                    "vector, got \"%s\"",
                    promql_value_type_str(t));
        e->type = t;
        break;
    }
    case PROMQL_NODE_SUBQUERY: {
        promql_value_type_t t = check(p, e->u.sq.expr);
        if (t != PROMQL_TYPE_VECTOR)
            fail_at(p, e->pos_start, "subquery is only allowed on instant vector, got %s instead",
                    promql_value_type_api_str(t));
        break;
    }
    case PROMQL_NODE_MATRIX_SELECTOR: check(p, e->u.ms.vs); break;
    case PROMQL_NODE_VECTOR_SELECTOR: {
        promql_vector_selector_t *vs = &e->u.vs;
        if (vs->name) {
            for (size_t i = 0; i + 1 < vs->nmatchers; i++) {
                const im_istr_t *mn = im_matcher_name(vs->matchers[i]);
                if (mn->len == 8 && memcmp(mn->s, IM_METRIC_NAME, 8) == 0) {
                    size_t vl;
                    const char *v = im_matcher_value(vs->matchers[i], &vl);
                    im_buf_t q;
                    im_buf_init(&q, 0);
                    (void)promql__go_quote(&q, vs->name->s, vs->name->len);
                    (void)im_buf_puts(&q, " or ");
                    (void)promql__go_quote(&q, v, vl);
                    fail_at(p, e->pos_start, "metric name must not be set twice: %s", q.data);
                    im_buf_free(&q);
                }
            }
            break;
        }
        bool non_empty = false;
        for (size_t i = 0; i < vs->nmatchers; i++)
            if (!im_matcher_matches_empty(vs->matchers[i])) non_empty = true;
        if (!non_empty && !p->info_selector)
            fail_at(p, e->pos_start, "vector selector must contain at least one non-empty matcher");
        break;
    }
    default: break;
    }
    return e->type;
}

static void check_err_type(parser_t *p, const promql_expr_t *e, promql_value_type_t want,
                           const char *ctx)
{
    promql_value_type_t t = check(p, (promql_expr_t *)e);
    if (t != want)
        fail_at(p, e->pos_start, "expected type %s in %s, got %s", promql_value_type_str(want), ctx,
                promql_value_type_str(t));
}

/* ---- Entry points ---- */

static void set_error(parser_t *p, im_err_t *err)
{
    if (!err) return;
    if (p->rc == IM_ELIMIT) {
        im_err_set(err, IM_ELIMIT, "%s", p->err_msg);
        err->offset = -1;
        return;
    }
    int line = 1;
    long last_nl = -1;
    for (size_t i = 0; i < p->err_pos && i < p->n; i++)
        if (p->in[i] == '\n') {
            line++;
            last_nl = (long)i;
        }
    long col = (long)p->err_pos - last_nl;
    im_err_set(err, p->rc, "%d:%ld: parse error: %s", line, col, p->err_msg);
    err->offset = p->err_pos;
}

im_rc promql_parse(const char *text, size_t len, promql_expr_t **out, im_err_t *err)
{
    return promql_parse_lang(text, len, NULL, out, err);
}

im_rc promql_parse_lang(const char *text, size_t len, const promql_lang_t *lang,
                        promql_expr_t **out, im_err_t *err)
{
    *out = NULL;
    if (err) im_err_clear(err);
    if (len > PROMQL_MAX_QUERY_BYTES) {
        return im_err_set(err, IM_ELIMIT,
                          "query is %zu bytes long, more than the limit of %u bytes", len,
                          PROMQL_MAX_QUERY_BYTES);
    }
    parser_t p;
    memset(&p, 0, sizeof p);
    p.lang = promql_lang_resolve(lang);
    p.in = text;
    p.n = len;
    promql__lex_init(&p.lx, text, len);
    p.lx.dur_expr = p.lang.compat >= 3;
    p.owner = promql__owner_new();
    p.arena = &p.owner->arena;

    promql_expr_t *e = NULL;
    if (peek_type(&p) == PT_EOF) {
        if (!p.failed) fail_at(&p, 0, "no expression found in input");
    } else if (!p.failed) {
        e = parse_expr(&p, 0);
        if (e && !p.failed && peek_type(&p) != PT_EOF) unexpected(&p, NULL, NULL);
    }
    if (!p.failed && tree_height(e, 0) > PROMQL_MAX_DEPTH)
        fail_limit(&p, "query is nested too deeply (limit 1000 levels)");
    if (!p.failed) check(&p, e);
    if (p.failed) {
        set_error(&p, err);
        promql__owner_free(p.owner);
        return p.rc;
    }
    e->owner = p.owner;
    *out = e;
    return IM_OK;
}

im_rc promql_parse_metric_selector(const char *text, size_t len, im_matcher_t ***matchers,
                                   size_t *nmatchers, im_err_t *err)
{
    *matchers = NULL;
    *nmatchers = 0;
    if (err) im_err_clear(err);
    if (len > PROMQL_MAX_QUERY_BYTES)
        return im_err_set(err, IM_ELIMIT, "selector is %zu bytes long, more than the limit of %u",
                          len, PROMQL_MAX_QUERY_BYTES);
    parser_t p;
    memset(&p, 0, sizeof p);
    p.lang = promql_lang_resolve(NULL);
    p.in = text;
    p.n = len;
    promql__lex_init(&p.lx, text, len);
    p.owner = promql__owner_new();
    p.arena = &p.owner->arena;
    /* Prometheus' START_METRIC_SELECTOR grammar: one vector selector, nothing
     * else, no type check (callers check for an empty selector themselves). */
    promql_expr_t *e = NULL;
    promql_tok_t t = peek_type(&p);
    if (!p.failed && (t == PT_LEFT_BRACE || can_be_metric_identifier(t)))
        e = parse_vector_selector(&p);
    else
        unexpected(&p, NULL, NULL);
    if (e && !p.failed && peek_type(&p) != PT_EOF) unexpected(&p, NULL, NULL);
    if (p.failed) {
        set_error(&p, err);
        promql__owner_free(p.owner);
        return p.rc;
    }
    size_t n = e->u.vs.nmatchers;
    im_matcher_t **ms = im_calloc(n ? n : 1, sizeof *ms);
    promql_expr_owner_t *o = p.owner;
    /* Move the matchers out of the owner so that freeing it keeps them. */
    for (size_t i = 0; i < n; i++) {
        ms[i] = e->u.vs.matchers[i];
        for (size_t j = 0; j < o->nmatchers; j++)
            if (o->matchers[j] == ms[i]) o->matchers[j] = NULL;
    }
    size_t k = 0;
    for (size_t j = 0; j < o->nmatchers; j++)
        if (o->matchers[j]) o->matchers[k++] = o->matchers[j];
    o->nmatchers = k;
    promql__owner_free(o);
    *matchers = ms;
    *nmatchers = n;
    return IM_OK;
}

void promql_matchers_free(im_matcher_t **matchers, size_t n)
{
    if (!matchers) return;
    for (size_t i = 0; i < n; i++) im_matcher_free(matchers[i]);
    im_free(matchers);
}
