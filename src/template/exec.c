/* exec.c — the executor of the template engine (Go's text/template/exec.go):
 * walks the parse tree with a variable stack, evaluating pipelines into values
 * (template_int.h) and printing them as fmt does, calling the functions of
 * funcs.c and template.c through one table. An error is a flag checked after
 * each evaluation (the first message wins; no longjmp). Work is bounded: nesting
 * depth, range iterations and the output size (TMPL_MAX_OUTPUT). */
#include "util/base.h"

#include <stdarg.h>
#include <stdio.h>

#include "template/template_int.h"

void tmpl__xerr(state_t *s, const char *fmt, ...)
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
    tmpl__node_string(&ctx, s->node);
    char cbuf[256];
    snprintf(cbuf, sizeof cbuf, "%s", ctx.data ? ctx.data : "");
    im_buf_free(&ctx);
    im_err_set(s->err, IM_EEXEC, "template: %s:%d:%zu: executing \"%s\" at <%s>: %s", s->name, line,
               col, s->name, cbuf, msg);
}

void tmpl__labels_to_map(state_t *s, const im_labels_t *ls, tmap_t *m)
{
    m->n = ls ? ls->n : 0;
    m->e = xalloc(s, (m->n ? m->n : 1) * sizeof *m->e);
    for (size_t i = 0; i < m->n; i++) {
        m->e[i].key = im_istr_sv(ls->l[i].name);
        m->e[i].val = mk_str(s, ls->l[i].value->s, ls->l[i].value->len);
    }
}

const tv_t *tmpl__map_get(const tmap_t *m, im_sv_t key)
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

void tmpl__push_var(state_t *s, im_sv_t name, tv_t v)
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
    tmpl__xerr(s, "undefined variable: %.*s", (int)name.len, name.p);
}
static tv_t get_var(state_t *s, im_sv_t name)
{
    for (size_t i = s->nvars; i-- > 0;)
        if (im_sv_eq(s->vars[i].name, name)) return s->vars[i].v;
    tmpl__xerr(s, "undefined variable: %.*s", (int)name.len, name.p);
    return NOVAL;
}

/* Go's truth. ok=false when the value cannot be tested. */
bool tmpl__truth(const tv_t *v, bool *ok)
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
        tmpl__xerr(s, "%.*s has arguments but cannot be invoked as function", (int)field.len,
                   field.p);
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
            tmpl__xerr(s, "nil pointer evaluating *template.sample.%.*s", (int)field.len, field.p);
            return NOVAL;
        }
        if (im_sv_eq_cstr(field, "Labels"))
            return (tv_t){.k = TV_STRMAP, .u.m = &recv.u.smp->labels};
        if (im_sv_eq_cstr(field, "Value")) return mk_float(recv.u.smp->v);
        break;
    case TV_STRMAP: {
        const tv_t *v = tmpl__map_get(recv.u.m, field);
        if (v) return *v;
        return (tv_t){.k = TV_STRING, .u.s = {"", 0}}; /* missingkey=zero */
    }
    case TV_ANYMAP: {
        const tv_t *v = tmpl__map_get(recv.u.m, field);
        if (v) return *v;
        return (tv_t){.k = TV_NILIF};
    }
    case TV_INVALID:
    case TV_NILIF:
        tmpl__xerr(s, "nil data; no entry for key \"%.*s\"", (int)field.len, field.p);
        return NOVAL;
    default: break;
    }
    tmpl__xerr(s, "can't evaluate field %.*s in type %s", (int)field.len, field.p,
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

void tmpl__call_err(fcall_t *c, const char *name, const char *fmt, ...)
{
    char msg[500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->s->node = c->cmd;
    tmpl__xerr(c->s, "error calling %s: %s", name, msg);
}

static const func_def_t *find_in(const func_def_t *tab, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(tab[i].name) == len && memcmp(tab[i].name, name, len) == 0) return &tab[i];
    return NULL;
}

const func_def_t *tmpl__find_func(const char *name, size_t len)
{
    const func_def_t *fd = find_in(tmpl__builtins, tmpl__nbuiltins, name, len);
    return fd ? fd : find_in(tmpl__prom_funcs, tmpl__nprom_funcs, name, len);
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

/* tmpl__xerr of before, the node as template text, after. */
static void xerr_node(state_t *s, const char *before, const node_t *n, const char *after)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    tmpl__node_string(&b, n);
    tmpl__xerr(s, "%s%s%s", before, b.data ? b.data : "", after);
    im_buf_free(&b);
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
        tmpl__xerr(s, "cannot assign nil to %s", ptype_name(t));
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
        xerr_node(s, "expected string; found ", n, "");
        return NOVAL;
    case P_SAMPLE:
    case P_SAMPLES:
        if (n->t == N_DOT) {
            if (ptype_ok(t, &dot)) return dot;
            goto wrongdot;
        }
        {
            char tail[64];
            snprintf(tail, sizeof tail, " for arg of type %s", ptype_name(t));
            xerr_node(s, "can't handle ", n, tail);
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
    tmpl__xerr(s, "can't handle argument");
    return NOVAL;
wrongdot:
    tmpl__xerr(s, "wrong type for value; expected %s; got %s", ptype_name(t),
               tmpl__type_name(&dot));
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
            tmpl__xerr(s, "wrong number of args for %s: want at least %d got %zu", fd->name,
                       fd->nparams, nargs);
            return NOVAL;
        }
    } else if ((int)num_in != fd->nparams) {
        tmpl__xerr(s, "wrong number of args for %s: want %d got %zu", fd->name, fd->nparams,
                   num_in);
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
            bool t = tmpl__truth(&v, &ok);
            if (is_and ? !t : t) return v;
        }
        return v;
    }
    if (num_in > 4096) {
        tmpl__xerr(s, "too many arguments");
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
                tmpl__xerr(s, "wrong type for value; expected %s; got %s", ptype_name(t),
                           tmpl__type_name(&argv[i]));
                return NOVAL;
            }
        } else {
            argv[i] = *final;
            if (!ptype_ok(t, &argv[i])) {
                tmpl__xerr(s, "wrong type for value; expected %s; got %s", ptype_name(t),
                           tmpl__type_name(&argv[i]));
                return NOVAL;
            }
        }
    }
    fcall_t c = {s, argv, num_in, cmd, fd->name, fd->variant};
    tv_t r = fd->fn(&c);
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
        const func_def_t *fd = tmpl__find_func(first->text.p, first->text.len);
        if (!fd) {
            tmpl__xerr(s, "\"%.*s\" is not a defined function", (int)first->text.len,
                       first->text.p);
            return NOVAL;
        }
        return eval_call(s, dot, fd, cmd, first, final);
    }
    case N_PIPE:
        s->node = first;
        if (cmd->nkids > 1 || (final && final->k != TV_INVALID)) {
            tmpl__xerr(s, "can't give argument to non-function %s", "");
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
        xerr_node(s, "can't give argument to non-function ", first, "");
        return NOVAL;
    }
    switch (first->t) {
    case N_BOOL: return mk_bool(first->b);
    case N_DOT: return dot;
    case N_NIL: tmpl__xerr(s, "nil is not a command"); return NOVAL;
    case N_NUMBER: return eval_arg(s, dot, P_ANY, first);
    case N_STRING: return (tv_t){.k = TV_STRING, .u.s = first->text};
    default: break;
    }
    tmpl__xerr(s, "can't evaluate command");
    return NOVAL;
}

static tv_t eval_pipeline(state_t *s, tv_t dot, const node_t *pipe)
{
    if (++s->depth > TMPL_MAX_DEPTH * 4) {
        tmpl__xerr(s, "exceeded maximum template depth");
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
            tmpl__push_var(s, pipe->decl[i]->idents[0], v);
    }
    return v;
}

static void walk_list(state_t *s, tv_t dot, const node_t *list)
{
    for (size_t i = 0; list && i < list->nkids && !s->failed && !s->brk; i++)
        tmpl__walk(s, dot, list->kids[i]);
}

static void walk_if_with(state_t *s, tv_t dot, const node_t *n)
{
    size_t mark = s->nvars;
    tv_t v = eval_pipeline(s, dot, n->pipe);
    if (s->failed) return;
    bool ok;
    bool t = tmpl__truth(&v, &ok);
    if (!ok) {
        s->node = n->pipe;
        tmpl__xerr(s, "if/with can't use %s", "<no value>");
        return;
    }
    if (t) {
        walk_list(s, n->t == N_WITH ? v : dot, n->list);
    } else if (n->elist) {
        walk_list(s, dot, n->elist);
    }
    s->nvars = mark;
}

/* One iteration of a range: counts it against TMPL_MAX_RANGE_ITER, sets the last
 * nset declared variables (the element, then the key before it), runs the body
 * and drops what it declared. Returns false to end the range (limit or break). */
static bool range_iter(state_t *s, const node_t *n, size_t *count, size_t iter_mark, size_t nset,
                       tv_t key, tv_t elem)
{
    if (++*count > TMPL_MAX_RANGE_ITER) {
        tmpl__xerr(s, "range: too many iterations");
        return false;
    }
    if (nset >= 1) s->vars[s->nvars - 1].v = elem;
    if (nset == 2) s->vars[s->nvars - 2].v = key;
    walk_list(s, elem, n->list);
    s->nvars = iter_mark;
    bool brk = s->brk == 1;
    s->brk = 0;
    return !brk;
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
            tv_t key, elem;
            if (v.k == TV_SAMPLES) {
                key = mk_int((int64_t)i);
                elem = (tv_t){.k = TV_SAMPLE, .u.smp = v.u.ss->v[i]};
            } else {
                key = (tv_t){.k = TV_STRING, .u.s = v.u.m->e[i].key};
                elem = v.u.m->e[i].val;
            }
            if (!range_iter(s, n, &count, iter_mark, nd, key, elem)) break;
        }
        break;
    }
    case TV_INT: {
        for (int64_t i = 0; i < v.u.i && !s->failed; i++) {
            /* an integer's range sets only the element */
            if (!range_iter(s, n, &count, iter_mark, nd >= 1 ? 1 : 0, NOVAL, mk_int(i))) break;
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
            tmpl__xerr(s, "range can't iterate over %s", b.data ? b.data : "");
            im_buf_free(&b);
        }
        return;
    }
    if (count == 0 && !s->failed && n->elist) walk_list(s, dot, n->elist);
    s->nvars = mark;
}

void tmpl__walk(state_t *s, tv_t dot, const node_t *n)
{
    if (s->failed) return;
    switch (n->t) {
    case N_TEXT:
        if (im_buf_append(s->out, n->text.p, n->text.len) != IM_OK)
            tmpl__xerr(s, "output exceeds %d bytes", TMPL_MAX_OUTPUT);
        break;
    case N_ACTION: {
        tv_t v = eval_pipeline(s, dot, n->pipe);
        if (s->failed) return;
        if (n->pipe->ndecl == 0) {
            size_t before = s->out->len;
            tmpl__print_value(s->out, &v);
            if (s->out->max && s->out->len >= s->out->max - 1 && before < s->out->len)
                tmpl__xerr(s, "output exceeds %d bytes", TMPL_MAX_OUTPUT);
        }
        break;
    }
    case N_IF:
    case N_WITH:
    case N_RANGE:
        if (++s->depth > TMPL_MAX_DEPTH * 4) {
            tmpl__xerr(s, "exceeded maximum template depth");
            return;
        }
        if (n->t == N_RANGE)
            walk_range(s, dot, n);
        else
            walk_if_with(s, dot, n);
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
            tmpl__xerr(s, "template %s not defined", q.data);
            im_buf_free(&q);
            return;
        }
        if (++s->depth > TMPL_MAX_DEPTH * 4) {
            tmpl__xerr(s, "exceeded maximum template depth (%d)", TMPL_MAX_DEPTH * 4);
            return;
        }
        tv_t nd = n->pipe ? eval_pipeline(s, dot, n->pipe) : NOVAL;
        if (s->failed) return;
        /* no dynamic scoping: the template sees only $ = its dot */
        var_t *saved = s->vars;
        size_t sn = s->nvars, sc = s->capvars;
        s->vars = NULL;
        s->nvars = s->capvars = 0;
        tmpl__push_var(s, IM_SV("$"), nd);
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
