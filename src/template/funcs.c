/* funcs.c — Go's template builtins (text/template/funcs.go) over the values of
 * template_int.h: and or not len index slice print printf println html js
 * urlquery eq ne lt le gt ge, with Go's error messages. and/or are evaluated
 * lazily by the executor (exec.c); the rest get their arguments evaluated. */
#include "util/base.h"

#include <inttypes.h>

#include "template/template_int.h"

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

static tv_t f_not(fcall_t *c)
{
    bool ok;
    bool t = tmpl__truth(&c->args[0], &ok);
    return mk_bool(!t);
}

static tv_t f_len(fcall_t *c)
{
    const tv_t *v = &c->args[0];
    switch (v->k) {
    case TV_STRING:
    case TV_HTML: return mk_int((int64_t)v->u.s.len);
    case TV_STRMAP:
    case TV_ANYMAP: return mk_int((int64_t)(v->u.m ? v->u.m->n : 0));
    case TV_SAMPLES: return mk_int((int64_t)(v->u.ss ? v->u.ss->n : 0));
    case TV_INVALID:
    case TV_NILIF: tmpl__call_err(c, "len", "len of nil pointer"); return NOVAL;
    default: tmpl__call_err(c, "len", "len of type %s", tmpl__type_name(v)); return NOVAL;
    }
}

static bool index_of(fcall_t *c, const char *fname, const tv_t *ix, size_t cap, int64_t *out)
{
    if (ix->k != TV_INT) {
        if (ix->k == TV_INVALID || ix->k == TV_NILIF)
            tmpl__call_err(c, fname, "cannot index slice/array with nil");
        else
            tmpl__call_err(c, fname, "cannot index slice/array with type %s", tmpl__type_name(ix));
        return false;
    }
    if (ix->u.i < 0 || (uint64_t)ix->u.i >= cap) {
        tmpl__call_err(c, fname, "error calling index: index out of range: %" PRId64, ix->u.i);
        return false;
    }
    *out = ix->u.i;
    return true;
}

static tv_t f_index(fcall_t *c)
{
    tv_t item = c->args[0];
    for (size_t i = 1; i < c->n && !c->s->failed; i++) {
        const tv_t *ix = &c->args[i];
        switch (item.k) {
        case TV_STRMAP:
        case TV_ANYMAP: {
            if (basic_kind(ix) != BK_STRING) {
                tmpl__call_err(c, "index", "value has type %s; should be string",
                               tmpl__type_name(ix));
                return NOVAL;
            }
            const tv_t *v = tmpl__map_get(item.u.m, ix->u.s);
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
        case TV_NILIF: tmpl__call_err(c, "index", "index of untyped nil"); return NOVAL;
        default:
            tmpl__call_err(c, "index", "can't index item of type %s", tmpl__type_name(&item));
            return NOVAL;
        }
    }
    return item;
}

static tv_t f_slice(fcall_t *c)
{
    tv_t item = c->args[0];
    if (item.k != TV_STRING && item.k != TV_SAMPLES) {
        tmpl__call_err(c, "slice", "can't slice item of type %s", tmpl__type_name(&item));
        return NOVAL;
    }
    size_t len = item.k == TV_STRING ? item.u.s.len : (item.u.ss ? item.u.ss->n : 0);
    int64_t idx[3] = {0, (int64_t)len, (int64_t)len};
    if (c->n > 4 || (item.k == TV_STRING && c->n > 3)) {
        tmpl__call_err(c, "slice", "too many slice indexes: %zu", c->n - 1);
        return NOVAL;
    }
    for (size_t i = 1; i < c->n; i++) {
        if (!index_of(c, "slice", &c->args[i], len + 1, &idx[i - 1])) return NOVAL;
    }
    if (idx[0] > idx[1]) {
        tmpl__call_err(c, "slice", "invalid slice index: %" PRId64 " > %" PRId64, idx[0], idx[1]);
        return NOVAL;
    }
    if (item.k == TV_STRING) return mk_str(c->s, item.u.s.p + idx[0], (size_t)(idx[1] - idx[0]));
    tsamples_t *o = xalloc(c->s, sizeof *o);
    o->n = (size_t)(idx[1] - idx[0]);
    o->v = item.u.ss->v + idx[0];
    return (tv_t){.k = TV_SAMPLES, .u.ss = o};
}

/* print (variant 0) and println (1). */
static tv_t f_print(fcall_t *c)
{
    im_buf_t b;
    im_buf_init(&b, TMPL_MAX_OUTPUT);
    tmpl__sprint(&b, c->args, c->n, c->variant == 1);
    return mk_buf_str(c->s, &b);
}
static tv_t f_printf(fcall_t *c)
{
    im_buf_t b;
    im_buf_init(&b, TMPL_MAX_OUTPUT);
    tmpl__sprintf(&b, c->args[0].u.s.p, c->args[0].u.s.len, c->args + 1, c->n - 1);
    return mk_buf_str(c->s, &b);
}

void tmpl__query_escape(im_buf_t *b, im_sv_t s)
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

/* What Go's html and js escapers write for a byte (NULL: the byte itself; js
 * writes the other control bytes as \uXXXX). */
static const char *const html_esc[256] = {['"'] = "&#34;", ['\''] = "&#39;", ['&'] = "&amp;",
                                          ['<'] = "&lt;",  ['>'] = "&gt;",   [0] = "\xEF\xBF\xBD"};
static const char *const js_esc[256] = {
    ['\\'] = "\\\\",   ['\''] = "\\'",    ['"'] = "\\\"", ['<'] = "\\u003C", ['>'] = "\\u003E",
    ['&'] = "\\u0026", ['='] = "\\u003D", ['\n'] = "\\n", ['\r'] = "\\r",    ['\t'] = "\\t"};

static void html_escape(im_buf_t *b, const tv_t *args, size_t n, int mode)
{
    im_buf_t tmp;
    im_buf_init(&tmp, TMPL_MAX_OUTPUT);
    if (n == 1 && basic_kind(&args[0]) == BK_STRING)
        (void)im_buf_append(&tmp, args[0].u.s.p, args[0].u.s.len);
    else
        tmpl__sprint(&tmp, args, n, false);
    for (size_t i = 0; i < tmp.len; i++) {
        unsigned char ch = (unsigned char)tmp.data[i];
        const char *r = mode == 0 ? html_esc[ch] : mode == 1 ? js_esc[ch] : NULL;
        if (r) {
            (void)im_buf_puts(b, r);
        } else if (mode == 2) {
            im_sv_t sv = {tmp.data + i, 1};
            tmpl__query_escape(b, sv);
        } else if (mode == 1 && ch < 0x20) {
            (void)im_buf_printf(b, "\\u%04X", ch);
        } else {
            (void)im_buf_putc(b, (char)ch);
        }
    }
    im_buf_free(&tmp);
}
/* html (variant 0), js (1), urlquery (2). */
static tv_t f_escape(fcall_t *c)
{
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
                tmpl__call_err(c, fname, "incompatible types for comparison");
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
                tmpl__call_err(c, fname, "incompatible types for comparison");
                return 0;
            }
            if (a->k == TV_STRMAP || a->k == TV_ANYMAP || a->k == TV_SAMPLES || a->k == TV_DATA) {
                tmpl__call_err(c, fname, "non-comparable type %s", tmpl__type_name(a));
                return 0;
            }
            *ok = true;
            return a->u.smp == b->u.smp ? 0 : 1;
        }
    } else {
        if (ka == BK_OTHER || ka == BK_INVALID || kb == BK_OTHER || kb == BK_INVALID) {
            tmpl__call_err(c, fname, "invalid type for comparison");
            return 0;
        }
        if (ka != kb) {
            tmpl__call_err(c, fname, "incompatible types for comparison");
            return 0;
        }
        if (ka == BK_BOOL) {
            tmpl__call_err(c, fname, "invalid type for comparison");
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

static tv_t f_eq(fcall_t *c)
{
    if (c->n < 2) {
        tmpl__call_err(c, "eq", "missing argument for comparison");
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
static tv_t f_cmp(fcall_t *c)
{
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

const func_def_t tmpl__builtins[] = {
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
};
const size_t tmpl__nbuiltins = IM_ARRAY_LEN(tmpl__builtins);
