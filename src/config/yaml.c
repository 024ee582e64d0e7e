/* yaml.c — libyaml's document graph copied into cfg_node_t, and the strict getters.
 *
 * libyaml's document API gives a node graph with marks; we copy it into our own
 * small tree (capped at CFG_MAX_NODES so alias bombs are refused, and at
 * CFG_MAX_DEPTH levels), then callers decode that tree with the getters below:
 * every mapping key must be known, duplicated keys are errors, and every error
 * names file:line:column (see yaml.h). */
#include "util/base.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <yaml.h>

#include "config/yaml.h"
#include "util/timeutil.h"

/* ---- YAML -> tree ---- */

void cfg_node_free(cfg_node_t *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->nkids; i++) cfg_node_free(n->kids[i]);
    im_free(n->kids);
    im_free(n->str);
    im_free(n);
}

cfg_node_t *cfg_node_clone(const cfg_node_t *n)
{
    cfg_node_t *c = im_calloc(1, sizeof *c);
    *c = *n;
    c->str = n->str ? im_strdup(n->str) : NULL;
    c->kids = im_calloc(n->nkids ? n->nkids : 1, sizeof *c->kids);
    for (size_t i = 0; i < n->nkids; i++) c->kids[i] = cfg_node_clone(n->kids[i]);
    return c;
}

typedef struct conv {
    yaml_document_t *doc;
    size_t count;
    int depth;
} conv_t;

static cfg_node_t *convert(conv_t *c, yaml_node_t *yn)
{
    if (!yn || ++c->count > CFG_MAX_NODES || c->depth > CFG_MAX_DEPTH) return NULL;
    cfg_node_t *n = im_calloc(1, sizeof *n);
    n->line = (int)yn->start_mark.line + 1;
    n->col = (int)yn->start_mark.column + 1;
    n->end_line = (int)yn->end_mark.line + 1;
    n->end_col = (int)yn->end_mark.column + 1;
    c->depth++;
    bool ok = true;
    switch (yn->type) {
    case YAML_SCALAR_NODE:
        n->type = CFG_NODE_SCALAR;
        n->str = im_strndup((const char *)yn->data.scalar.value, yn->data.scalar.length);
        n->plain = yn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        break;
    case YAML_SEQUENCE_NODE: {
        n->type = CFG_NODE_SEQ;
        size_t k = (size_t)(yn->data.sequence.items.top - yn->data.sequence.items.start);
        n->kids = im_calloc(k ? k : 1, sizeof *n->kids);
        for (size_t i = 0; i < k && ok; i++) {
            n->kids[i] =
                convert(c, yaml_document_get_node(c->doc, yn->data.sequence.items.start[i]));
            if (!n->kids[i])
                ok = false;
            else
                n->nkids++;
        }
        break;
    }
    case YAML_MAPPING_NODE: {
        n->type = CFG_NODE_MAP;
        size_t k = (size_t)(yn->data.mapping.pairs.top - yn->data.mapping.pairs.start);
        n->kids = im_calloc(k ? 2 * k : 1, sizeof *n->kids);
        for (size_t i = 0; i < k && ok; i++) {
            yaml_node_pair_t *p = &yn->data.mapping.pairs.start[i];
            cfg_node_t *key = convert(c, yaml_document_get_node(c->doc, p->key));
            if (!key) {
                ok = false;
                break;
            }
            n->kids[n->nkids++] = key;
            cfg_node_t *val = convert(c, yaml_document_get_node(c->doc, p->value));
            if (!val) {
                ok = false;
                break;
            }
            n->kids[n->nkids++] = val;
        }
        break;
    }
    default: ok = false;
    }
    c->depth--;
    if (!ok) {
        cfg_node_free(n);
        return NULL;
    }
    return n;
}

im_rc cfg_parse_yaml(const char *text, size_t len, const char *name, cfg_node_t **root,
                     im_err_t *err)
{
    return cfg_parse_yaml_ex(text, len, name, root, err, NULL);
}

im_rc cfg_parse_yaml_ex(const char *text, size_t len, const char *name, cfg_node_t **root,
                        im_err_t *err, cfg_yaml_problem_t *prob)
{
    *root = NULL;
    if (prob) memset(prob, 0, sizeof *prob);
    yaml_parser_t p;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&p)) im_oom(sizeof p);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &doc)) {
        im_rc rc = im_err_setpos(err, IM_EPARSE, (int)p.problem_mark.line + 1,
                                 (int)p.problem_mark.column + 1, "yaml: %s%s%s",
                                 p.problem ? p.problem : "syntax error", p.context ? " " : "",
                                 p.context ? p.context : "");
        if (err) err->file = name;
        if (prob) {
            prob->syntax = true;
            prob->scanner = p.error == YAML_SCANNER_ERROR;
            snprintf(prob->problem, sizeof prob->problem, "%s", p.problem ? p.problem : "");
            snprintf(prob->context, sizeof prob->context, "%s", p.context ? p.context : "");
            prob->line = (int)p.problem_mark.line + 1;
            prob->col = (int)p.problem_mark.column + 1;
            prob->ctx_line = (int)p.context_mark.line + 1;
            prob->ctx_col = (int)p.context_mark.column + 1;
        }
        yaml_parser_delete(&p);
        return rc;
    }
    yaml_node_t *r = yaml_document_get_root_node(&doc);
    im_rc rc = IM_OK;
    if (r) {
        conv_t c = {&doc, 0, 0};
        *root = convert(&c, r);
        if (!*root) {
            rc = im_err_set(err, IM_ELIMIT,
                            "yaml: document too large or too deeply nested (more than %d nodes "
                            "or %d levels)",
                            CFG_MAX_NODES, CFG_MAX_DEPTH);
            if (err) err->file = name;
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    return rc;
}

/* ---- Decoding helpers ---- */

im_rc cfg_fail(cfg_dec_t *d, const cfg_node_t *n, const char *fmt, ...)
{
    char msg[IM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    im_err_setpos(d->err, IM_EPARSE, n ? n->line : 0, n ? n->col : 0, "%s", msg);
    if (d->err) d->err->file = d->file;
    return IM_EPARSE;
}

bool cfg_is_null(const cfg_node_t *n)
{
    return !n || (n->type == CFG_NODE_SCALAR && n->plain &&
                  (n->str[0] == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
                   strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0));
}

const char *cfg_type_name(const cfg_node_t *n)
{
    return n->type == CFG_NODE_MAP   ? "a mapping"
           : n->type == CFG_NODE_SEQ ? "a sequence"
                                     : "a scalar";
}

static bool in_list(const char *const *known, const char *s)
{
    for (size_t j = 0; known[j]; j++)
        if (strcmp(known[j], s) == 0) return true;
    return false;
}

im_rc cfg_check_map_lists(cfg_dec_t *d, const cfg_node_t *n, const char *what,
                          const char *const *const *lists)
{
    if (cfg_is_null(n)) return IM_OK;
    if (n->type != CFG_NODE_MAP)
        return cfg_fail(d, n, "%s must be a mapping, not %s", what, cfg_type_name(n));
    for (size_t i = 0; i < n->nkids; i += 2) {
        const cfg_node_t *k = n->kids[i];
        if (k->type != CFG_NODE_SCALAR)
            return cfg_fail(d, k, "mapping keys in %s must be strings", what);
        bool ok = lists == NULL;
        for (size_t l = 0; !ok && lists[l]; l++) ok = in_list(lists[l], k->str);
        if (!ok) return cfg_fail(d, k, "field %s not found in %s", k->str, what);
        for (size_t j = 0; j < i; j += 2)
            if (strcmp(n->kids[j]->str, k->str) == 0)
                return cfg_fail(d, k, "mapping key \"%s\" already defined at line %d", k->str,
                                n->kids[j]->line);
    }
    return IM_OK;
}

im_rc cfg_check_map(cfg_dec_t *d, const cfg_node_t *n, const char *what, const char *const *known)
{
    const char *const *lists[] = {known, NULL};
    return cfg_check_map_lists(d, n, what, known ? lists : NULL);
}

const cfg_node_t *cfg_get_raw(const cfg_node_t *m, const char *key)
{
    if (cfg_is_null(m) || m->type != CFG_NODE_MAP) return NULL;
    for (size_t i = 0; i + 1 < m->nkids; i += 2)
        if (m->kids[i]->type == CFG_NODE_SCALAR && strcmp(m->kids[i]->str, key) == 0)
            return m->kids[i + 1];
    return NULL;
}

const cfg_node_t *cfg_get(const cfg_node_t *m, const char *key)
{
    const cfg_node_t *v = cfg_get_raw(m, key);
    return cfg_is_null(v) ? NULL : v;
}

im_rc cfg_get_str(cfg_dec_t *d, const cfg_node_t *m, const char *key, char **out)
{
    const cfg_node_t *n = cfg_get(m, key);
    if (!n) return IM_OK;
    if (n->type != CFG_NODE_SCALAR)
        return cfg_fail(d, n, "%s must be a string, not %s", key, cfg_type_name(n));
    im_free(*out);
    *out = im_strdup(n->str);
    return IM_OK;
}

im_rc cfg_get_bool(cfg_dec_t *d, const cfg_node_t *m, const char *key, bool *out)
{
    const cfg_node_t *n = cfg_get(m, key);
    if (!n) return IM_OK;
    if (n->type == CFG_NODE_SCALAR) {
        const char *s = n->str;
        if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE") || !strcmp(s, "yes") ||
            !strcmp(s, "on")) {
            *out = true;
            return IM_OK;
        }
        if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE") || !strcmp(s, "no") ||
            !strcmp(s, "off")) {
            *out = false;
            return IM_OK;
        }
    }
    return cfg_fail(d, n, "%s: cannot unmarshal \"%s\" into a boolean", key, n->str ? n->str : "");
}

im_rc cfg_get_dur(cfg_dec_t *d, const cfg_node_t *m, const char *key, int64_t *out)
{
    const cfg_node_t *n = cfg_get(m, key);
    if (!n) return IM_OK;
    if (n->type != CFG_NODE_SCALAR)
        return cfg_fail(d, n, "%s must be a duration, not %s", key, cfg_type_name(n));
    im_err_t e;
    im_err_clear(&e);
    if (im_duration_parse(n->str, strlen(n->str), out, &e) != IM_OK)
        return cfg_fail(d, n, "%s: not a valid duration string: \"%s\"", key, n->str);
    return IM_OK;
}

/* The decimal integer at key, signed in [lo, hi] (*sv) or unsigned without a
 * sign (*uv); nothing set when absent. The error names what it is not. */
static im_rc get_decimal(cfg_dec_t *d, const cfg_node_t *m, const char *key, const char *what,
                         long long lo, long long hi, long long *sv, unsigned long long *uv)
{
    const cfg_node_t *n = cfg_get(m, key);
    if (!n) return IM_OK;
    const char *s = n->type == CFG_NODE_SCALAR ? n->str : "";
    char *end;
    errno = 0;
    long long v = 0;
    unsigned long long u = 0;
    if (sv)
        v = strtoll(s, &end, 10);
    else
        u = strtoull(s, &end, 10);
    bool bad = !*s || *end || errno || isspace((unsigned char)s[0]) || v < lo || v > hi ||
               (uv && (s[0] == '-' || s[0] == '+'));
    if (bad) return cfg_fail(d, n, "%s: cannot unmarshal \"%s\" into %s", key, s, what);
    if (sv) *sv = v;
    if (uv) *uv = u;
    return IM_OK;
}

im_rc cfg_get_u64(cfg_dec_t *d, const cfg_node_t *m, const char *key, uint64_t *out)
{
    unsigned long long u = *out;
    im_rc rc = get_decimal(d, m, key, "an unsigned integer", 0, 0, NULL, &u);
    *out = u;
    return rc;
}

im_rc cfg_get_int(cfg_dec_t *d, const cfg_node_t *m, const char *key, int *out)
{
    long long v = *out;
    im_rc rc = get_decimal(d, m, key, "an integer", INT_MIN, INT_MAX, &v, NULL);
    *out = (int)v;
    return rc;
}

im_rc cfg_get_float(cfg_dec_t *d, const cfg_node_t *m, const char *key, double *out)
{
    const cfg_node_t *n = cfg_get(m, key);
    if (!n) return IM_OK;
    const char *s = n->type == CFG_NODE_SCALAR ? n->str : "";
    static const struct {
        const char *text;
        double v;
    } special[] = {{".inf", INFINITY},   {".Inf", INFINITY},   {".INF", INFINITY},
                   {"+.inf", INFINITY},  {"+.Inf", INFINITY},  {"+.INF", INFINITY},
                   {"-.inf", -INFINITY}, {"-.Inf", -INFINITY}, {"-.INF", -INFINITY},
                   {".nan", NAN},        {".NaN", NAN},        {".NAN", NAN}};
    for (size_t i = 0; n->type == CFG_NODE_SCALAR && i < IM_ARRAY_LEN(special); i++)
        if (strcmp(s, special[i].text) == 0) {
            *out = special[i].v;
            return IM_OK;
        }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* strtod also takes "inf", "nan" and hex floats, which YAML does not */
    bool bad = !*s || *end || errno == ERANGE || strpbrk(s, "xXnNiI") != NULL || s[0] == ' ';
    if (bad) return cfg_fail(d, n, "%s: cannot unmarshal \"%s\" into a float", key, s);
    *out = v;
    return IM_OK;
}

im_rc cfg_parse_bytes(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-' || *s == '+') return IM_EINVAL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return IM_EINVAL;
    if (end == s) return IM_EINVAL;
    static const struct {
        const char *u;
        int shift;
    } units[] = {{"", 0},     {"B", 0},    {"KB", 10},  {"KiB", 10}, {"MB", 20},
                 {"MiB", 20}, {"GB", 30},  {"GiB", 30}, {"TB", 40},  {"TiB", 40},
                 {"PB", 50},  {"PiB", 50}, {"EB", 60},  {"EiB", 60}};
    for (size_t i = 0; i < IM_ARRAY_LEN(units); i++) {
        if (strcmp(end, units[i].u) == 0) {
            if (units[i].u[0] == 0 && v != 0) return IM_EINVAL; /* a unit is required */
            if (units[i].shift && v > (unsigned long long)(INT64_MAX >> units[i].shift))
                return IM_EINVAL;
            *out = (int64_t)(v << units[i].shift);
            return IM_OK;
        }
    }
    return IM_EINVAL;
}

im_rc cfg_get_bytes(cfg_dec_t *d, const cfg_node_t *m, const char *key, int64_t *out)
{
    const cfg_node_t *n = cfg_get(m, key);
    if (!n) return IM_OK;
    if (n->type != CFG_NODE_SCALAR || cfg_parse_bytes(n->str, out) != IM_OK)
        return cfg_fail(d, n, "%s: invalid size \"%s\" (use e.g. 10MB, 512KiB)", key,
                        n->type == CFG_NODE_SCALAR ? n->str : "");
    return IM_OK;
}

im_rc cfg_get_strlist(cfg_dec_t *d, const cfg_node_t *m, const char *key, char ***out, size_t *nout)
{
    const cfg_node_t *n = cfg_get(m, key);
    if (!n) return IM_OK;
    if (n->type != CFG_NODE_SEQ) return cfg_fail(d, n, "%s must be a list of strings", key);
    *out = im_realloc(*out, (*nout + n->nkids + 1) * sizeof(char *));
    for (size_t i = 0; i < n->nkids; i++) {
        if (n->kids[i]->type != CFG_NODE_SCALAR)
            return cfg_fail(d, n->kids[i], "%s must be a list of strings", key);
        (*out)[(*nout)++] = im_strdup(n->kids[i]->str);
    }
    return IM_OK;
}

im_rc cfg_read_file(const char *path, im_buf_t *out, int *sys_errno)
{
    *sys_errno = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        *sys_errno = errno;
        return IM_EIO;
    }
    char tmp[16384];
    size_t r;
    im_rc rc = IM_OK;
    while (!rc && (r = fread(tmp, 1, sizeof tmp, f)) > 0)
        if (im_buf_append(out, tmp, r) != IM_OK) rc = IM_ELIMIT;
    if (!rc && ferror(f)) rc = IM_EIO; /* *sys_errno stays 0: opened, then failed */
    fclose(f);
    return rc;
}

void cfg_strv_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) im_free(v[i]);
    im_free(v);
}

im_rc cfg_get_strmap(cfg_dec_t *d, const cfg_node_t *m, const char *key, char ***names,
                     char ***values, size_t *n)
{
    const cfg_node_t *x = cfg_get(m, key);
    if (!x) return IM_OK;
    im_rc rc = cfg_check_map(d, x, key, NULL);
    if (rc) return rc;
    for (size_t i = 1; i < x->nkids; i += 2)
        if (x->kids[i]->type != CFG_NODE_SCALAR)
            return cfg_fail(d, x->kids[i], "%s values must be strings, not %s", key,
                            cfg_type_name(x->kids[i]));
    cfg_strv_free(*names, *n);
    cfg_strv_free(*values, *n);
    size_t k = x->nkids / 2;
    *names = im_calloc(k + 1, sizeof(char *));
    *values = im_calloc(k + 1, sizeof(char *));
    for (size_t i = 0; i < k; i++) {
        (*names)[i] = im_strdup(x->kids[2 * i]->str);
        (*values)[i] = im_strdup(cfg_is_null(x->kids[2 * i + 1]) ? "" : x->kids[2 * i + 1]->str);
    }
    *n = k;
    return IM_OK;
}

im_rc cfg_get_listmap(cfg_dec_t *d, const cfg_node_t *m, const char *key, char ***names,
                      char ***values, size_t *n)
{
    const cfg_node_t *p = cfg_get(m, key);
    if (!p) return IM_OK;
    im_rc rc = cfg_check_map(d, p, key, NULL);
    if (rc) return rc;
    size_t total = 0;
    for (size_t i = 1; i < p->nkids; i += 2) {
        if (p->kids[i]->type != CFG_NODE_SEQ)
            return cfg_fail(d, p->kids[i], "%s values must be lists of strings", key);
        for (size_t k = 0; k < p->kids[i]->nkids; k++)
            if (p->kids[i]->kids[k]->type != CFG_NODE_SCALAR)
                return cfg_fail(d, p->kids[i]->kids[k], "%s values must be lists of strings", key);
        total += p->kids[i]->nkids;
    }
    cfg_strv_free(*names, *n);
    cfg_strv_free(*values, *n);
    *n = 0;
    *names = im_calloc(total + 1, sizeof(char *));
    *values = im_calloc(total + 1, sizeof(char *));
    for (size_t i = 0; i < p->nkids; i += 2)
        for (size_t k = 0; k < p->kids[i + 1]->nkids; k++) {
            (*names)[*n] = im_strdup(p->kids[i]->str);
            (*values)[(*n)++] = im_strdup(p->kids[i + 1]->kids[k]->str);
        }
    return IM_OK;
}

im_rc cfg_get_labels(cfg_dec_t *d, const cfg_node_t *m, const char *key, const im_labels_t **out)
{
    const cfg_node_t *n = cfg_get(m, key);
    if (!n) return IM_OK;
    im_rc rc = cfg_check_map(d, n, key, NULL);
    if (rc) return rc;
    im_labels_builder_t lb;
    im_lb_init(&lb);
    for (size_t i = 0; i < n->nkids; i += 2) {
        const cfg_node_t *k = n->kids[i], *v = n->kids[i + 1];
        if (!im_label_name_valid(k->str, strlen(k->str))) {
            im_lb_free(&lb);
            return cfg_fail(d, k, "\"%s\" is not a valid label name", k->str);
        }
        if (v->type != CFG_NODE_SCALAR) {
            im_lb_free(&lb);
            return cfg_fail(d, v, "label value for \"%s\" must be a string", k->str);
        }
        if (!im_utf8_valid(v->str, strlen(v->str))) {
            im_lb_free(&lb);
            return cfg_fail(d, v, "\"%s\" is not a valid label value", v->str);
        }
        im_lb_set(&lb, k->str, strlen(k->str), v->str, cfg_is_null(v) ? 0 : strlen(v->str));
    }
    if (*out) im_labels_unref(*out);
    *out = im_lb_build(&lb);
    im_lb_free(&lb);
    return IM_OK;
}

/* ---- Writing YAML back ---- */

void cfg_emit_str(im_buf_t *o, const char *s)
{
    size_t n = strlen(s);
    bool plain = n > 0 && !strchr("-?:,[]{}#&*!|>'\"%@` ", s[0]) && s[n - 1] != ' ' &&
                 !strstr(s, ": ") && !strstr(s, " #") && !strchr(s, '\n') && !strchr(s, '\t') &&
                 !strchr(s, '\\') && s[n - 1] != ':' && strcmp(s, "true") && strcmp(s, "false") &&
                 strcmp(s, "null") && strcmp(s, "~") && strcmp(s, "yes") && strcmp(s, "no") &&
                 strcmp(s, "on") && strcmp(s, "off");
    if (plain) {
        char *end;
        (void)strtod(s, &end);
        if (*end == 0) plain = false; /* looks like a number */
    }
    if (plain) {
        (void)im_buf_puts(o, s);
        return;
    }
    (void)im_buf_putc(o, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\') (void)im_buf_putc(o, '\\');
        if (*p == '\n') {
            (void)im_buf_puts(o, "\\n");
            continue;
        }
        (void)im_buf_putc(o, *p);
    }
    (void)im_buf_putc(o, '"');
}

void cfg_emit_url(im_buf_t *o, const char *u)
{
    const char *sch = strstr(u, "://");
    const char *auth = sch ? sch + 3 : u;
    size_t alen = strcspn(auth, "/?#");
    const char *at = NULL;
    for (const char *p = auth; p < auth + alen; p++)
        if (*p == '@') at = p;
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (!colon) {
        cfg_emit_str(o, u);
        return;
    }
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_append(&b, u, (size_t)(colon - u));
    (void)im_buf_puts(&b, ":xxxxx");
    (void)im_buf_puts(&b, at);
    cfg_emit_str(o, b.data);
    im_buf_free(&b);
}

void cfg_emit_kv(im_buf_t *o, int ind, const char *k, const char *v)
{
    (void)im_buf_printf(o, "%*s%s: ", ind, "", k);
    cfg_emit_str(o, v);
    (void)im_buf_putc(o, '\n');
}

void cfg_emit_dur(im_buf_t *o, int ind, const char *k, int64_t ms)
{
    char b[64];
    im_duration_format(ms, b, sizeof b);
    (void)im_buf_printf(o, "%*s%s: %s\n", ind, "", k, b);
}
