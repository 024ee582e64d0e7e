/* rulefile.c — Prometheus rule files: YAML (libyaml document API, with line and
 * column of every node) into rules_file_t, validated as Prometheus' rulefmt
 * validates, with promtool's error texts.
 *
 * Two passes, as Prometheus: the YAML is decoded (syntax errors, unknown fields,
 * type mismatches and bad durations are reported in yaml.v3's words and stop
 * there), then every group and rule is validated (empty or repeated group names,
 * record/alert/expr presence, PromQL syntax, metric and label names, fields not
 * allowed in recording rules, templates of alerting rules). */
#include "util/base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/yaml.h"
#include "promql/parser.h"
#include "rules/rules.h"
#include "template/template.h"
#include "util/timeutil.h"

#define RULES_MAX_FILE_BYTES (64u << 20)

void rules_errs_add(rules_errs_t *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    im_buf_t b;
    im_buf_init(&b, 0);
    char tmp[2048];
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    (void)im_buf_puts(&b, tmp);
    e->v = im_realloc(e->v, (e->n + 1) * sizeof *e->v);
    e->v[e->n++] = im_buf_steal(&b, NULL);
}

void rules_errs_free(rules_errs_t *e)
{
    for (size_t i = 0; i < e->n; i++) im_free(e->v[i]);
    im_free(e->v);
    e->v = NULL;
    e->n = 0;
}

static void free_kvs(rules_kv_t *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        im_free(kv[i].name);
        im_free(kv[i].value);
    }
    im_free(kv);
}

void rules_file_free(rules_file_t *f)
{
    if (!f) return;
    for (size_t g = 0; g < f->ngroups; g++) {
        rules_group_t *gr = &f->groups[g];
        for (size_t r = 0; r < gr->nrules; r++) {
            rules_rule_t *ru = &gr->rules[r];
            im_free(ru->name);
            im_free(ru->expr);
            promql_expr_free(ru->ast);
            free_kvs(ru->labels, ru->nlabels);
            free_kvs(ru->annotations, ru->nannotations);
        }
        im_free(gr->rules);
        im_free(gr->name);
        im_free(gr->file);
    }
    im_free(f->groups);
    im_free(f->path);
    im_free(f);
}

size_t rules_file_count(const rules_file_t *f)
{
    size_t n = 0;
    for (size_t g = 0; f && g < f->ngroups; g++) n += f->groups[g].nrules;
    return n;
}

/* ---- YAML decoding ---- */

typedef struct dec {
    im_buf_t unmarshal;  /* "\n  line N: ..." accumulated type errors */
    im_buf_t unmarshal2; /* the same from Prometheus' second (yaml.Node) decoding */
    char *fatal;         /* a decoding error that stops everything (bad duration) */
} dec_t;

/* A scalar value as decoded: positions of interesting nodes are kept. */
typedef struct ynode {
    bool set;
    int line, col;
    char *value; /* owned (scalars only) */
} ynode_t;

typedef struct rule_raw {
    int line, col;
    ynode_t record, alert, expr;
    int64_t for_ms, keep_ms;
    rules_kv_t *labels;
    size_t nlabels;
    rules_kv_t *ann;
    size_t nann;
} rule_raw_t;

typedef struct group_raw {
    int line, col;
    char *name;
    int64_t interval_ms, limit, query_offset_ms;
    rule_raw_t *rules;
    size_t nrules;
} group_raw_t;

static const char *short_tag(const cfg_node_t *n)
{
    switch (n->type) {
    case CFG_NODE_MAP: return "!!map";
    case CFG_NODE_SEQ: return "!!seq";
    default: break;
    }
    const char *v = n->str;
    size_t l = strlen(v);
    if (!n->plain) return "!!str";
    if (l == 0 || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
        strcmp(v, "NULL") == 0)
        return "!!null";
    if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0 || strcmp(v, "True") == 0 ||
        strcmp(v, "False") == 0 || strcmp(v, "TRUE") == 0 || strcmp(v, "FALSE") == 0)
        return "!!bool";
    char *e;
    errno = 0;
    (void)strtoll(v, &e, 0);
    if (*e == 0) return "!!int";
    (void)strtod(v, &e);
    if (*e == 0) return "!!float";
    return "!!str";
}

static void type_err_to(im_buf_t *b, const cfg_node_t *n, const char *into)
{
    (void)im_buf_printf(b, "\n  line %d: cannot unmarshal %s", n->line, short_tag(n));
    if (n->type == CFG_NODE_SCALAR) {
        const char *v = n->str;
        size_t l = strlen(v);
        if (l > 10)
            (void)im_buf_printf(b, " `%.7s...`", v);
        else
            (void)im_buf_printf(b, " `%s`", v);
    }
    (void)im_buf_printf(b, " into %s", into);
}

static void type_err(dec_t *d, const cfg_node_t *n, const char *into)
{
    type_err_to(&d->unmarshal, n, into);
}

static bool is_null(const cfg_node_t *n)
{
    return n->type == CFG_NODE_SCALAR && strcmp(short_tag(n), "!!null") == 0;
}

/* Decodes a string scalar; NULL on type error (reported). */
static char *dec_string(dec_t *d, const cfg_node_t *n)
{
    if (n->type != CFG_NODE_SCALAR) {
        type_err(d, n, "string");
        return NULL;
    }
    if (is_null(n)) return im_strdup("");
    return im_strdup(n->str);
}

static void dec_duration(dec_t *d, const cfg_node_t *n, int64_t *out)
{
    char *s = dec_string(d, n);
    if (!s) return;
    if (s[0] == 0) {
        im_free(s);
        return;
    }
    im_err_t err;
    if (im_duration_parse(s, strlen(s), out, &err) != IM_OK && !d->fatal) {
        im_buf_t b;
        im_buf_init(&b, 0);
        (void)im_buf_printf(&b, "not a valid duration string: \"%s\"", s);
        d->fatal = im_buf_steal(&b, NULL);
    }
    im_free(s);
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const rules_kv_t *)a)->name, ((const rules_kv_t *)b)->name);
}

static void dec_strmap(dec_t *d, const cfg_node_t *n, rules_kv_t **out, size_t *nout)
{
    if (is_null(n)) return;
    if (n->type != CFG_NODE_MAP) {
        type_err(d, n, "map[string]string");
        return;
    }
    size_t cnt = n->nkids / 2;
    rules_kv_t *kv = im_calloc(cnt ? cnt : 1, sizeof *kv);
    size_t k = 0;
    for (size_t i = 0; i + 1 < n->nkids; i += 2) {
        const cfg_node_t *kn = n->kids[i], *vn = n->kids[i + 1];
        char *key = dec_string(d, kn);
        char *val = dec_string(d, vn);
        if (!key || !val) {
            im_free(key);
            im_free(val);
            continue;
        }
        /* duplicate keys: the later wins (yaml.v3 reports it for strict decoding) */
        bool dup = false;
        for (size_t j = 0; j < k; j++)
            if (strcmp(kv[j].name, key) == 0) {
                (void)im_buf_printf(&d->unmarshal,
                                    "\n  line %d: mapping key \"%s\" already defined at line %d",
                                    kn->line, key, 0);
                im_free(kv[j].value);
                kv[j].value = val;
                im_free(key);
                dup = true;
                break;
            }
        if (!dup) {
            kv[k].name = key;
            kv[k].value = val;
            k++;
        }
    }
    qsort(kv, k, sizeof *kv, kv_cmp);
    *out = kv;
    *nout = k;
}

static void set_ynode(dec_t *d, const cfg_node_t *n, ynode_t *y)
{
    (void)d;
    y->set = true;
    y->line = n->line;
    y->col = n->col;
    if (n->type == CFG_NODE_SCALAR && !is_null(n))
        y->value = im_strdup(n->str);
    else
        y->value = im_strdup("");
}

/* Checks for repeated keys in a mapping (yaml.v3: "mapping key already defined"):
 * is the key at kids[i] one of an earlier pair? */
static bool dup_key(dec_t *d, const cfg_node_t *m, size_t i)
{
    const cfg_node_t *kn = m->kids[i];
    if (kn->type != CFG_NODE_SCALAR) return false;
    for (size_t q = 0; q < i; q += 2) {
        const cfg_node_t *qk = m->kids[q];
        if (qk->type == CFG_NODE_SCALAR && strcmp(qk->str, kn->str) == 0) {
            (void)im_buf_printf(&d->unmarshal,
                                "\n  line %d: mapping key \"%s\" already defined at line %d",
                                kn->line, kn->str, qk->line);
            return true;
        }
    }
    return false;
}

/* n must be a mapping of Go type `type`: false (reported) when it is not, and
 * for a null node (nothing to decode). */
static bool is_map(dec_t *d, const cfg_node_t *n, const char *type)
{
    if (is_null(n)) return false;
    if (n->type != CFG_NODE_MAP) {
        type_err(d, n, type);
        return false;
    }
    return true;
}

/* The key of pair i of mapping n; NULL for a repeated key (reported). */
static const char *map_key(dec_t *d, const cfg_node_t *n, size_t i)
{
    if (dup_key(d, n, i)) return NULL;
    return n->kids[i]->type == CFG_NODE_SCALAR ? n->kids[i]->str : "";
}

static void dec_rule(dec_t *d, const cfg_node_t *n, rule_raw_t *r)
{
    r->line = n->line;
    r->col = n->col;
    if (!is_map(d, n, "rulefmt.RuleNode")) return;
    for (size_t i = 0; i + 1 < n->nkids; i += 2) {
        const cfg_node_t *kn = n->kids[i], *vn = n->kids[i + 1];
        const char *k = map_key(d, n, i);
        if (!k) continue;
        if (strcmp(k, "record") == 0)
            set_ynode(d, vn, &r->record);
        else if (strcmp(k, "alert") == 0)
            set_ynode(d, vn, &r->alert);
        else if (strcmp(k, "expr") == 0)
            set_ynode(d, vn, &r->expr);
        else if (strcmp(k, "for") == 0)
            dec_duration(d, vn, &r->for_ms);
        else if (strcmp(k, "keep_firing_for") == 0)
            dec_duration(d, vn, &r->keep_ms);
        else if (strcmp(k, "labels") == 0)
            dec_strmap(d, vn, &r->labels, &r->nlabels);
        else if (strcmp(k, "annotations") == 0)
            dec_strmap(d, vn, &r->ann, &r->nann);
        else
            (void)im_buf_printf(&d->unmarshal, "\n  line %d: field %s not found in type %s",
                                kn->line, k, "rulefmt.RuleNode");
    }
}

static void dec_group(dec_t *d, const cfg_node_t *n, group_raw_t *g)
{
    g->line = n->line;
    g->col = n->col;
    g->query_offset_ms = -1;
    if (!is_map(d, n, "rulefmt.RuleGroup")) return;
    for (size_t i = 0; i + 1 < n->nkids; i += 2) {
        const cfg_node_t *kn = n->kids[i], *vn = n->kids[i + 1];
        const char *k = map_key(d, n, i);
        if (!k) continue;
        if (strcmp(k, "name") == 0) {
            im_free(g->name);
            g->name = dec_string(d, vn);
        } else if (strcmp(k, "interval") == 0) {
            dec_duration(d, vn, &g->interval_ms);
        } else if (strcmp(k, "query_offset") == 0) {
            int64_t v = 0;
            dec_duration(d, vn, &v);
            g->query_offset_ms = v;
        } else if (strcmp(k, "limit") == 0) {
            if (vn->type != CFG_NODE_SCALAR ||
                (strcmp(short_tag(vn), "!!int") != 0 && !is_null(vn))) {
                type_err(d, vn, "int");
                continue;
            }
            g->limit = is_null(vn) ? 0 : strtoll(vn->str, NULL, 0);
        } else if (strcmp(k, "rules") == 0) {
            if (is_null(vn)) continue;
            if (vn->type != CFG_NODE_SEQ) {
                type_err(d, vn, "[]rulefmt.RuleNode");
                continue;
            }
            g->rules = im_calloc(vn->nkids ? vn->nkids : 1, sizeof *g->rules);
            for (size_t it = 0; it < vn->nkids; it++)
                dec_rule(d, vn->kids[it], &g->rules[g->nrules++]);
        } else {
            (void)im_buf_printf(&d->unmarshal, "\n  line %d: field %s not found in type %s",
                                kn->line, k, "rulefmt.RuleGroup");
        }
    }
}

static void free_raw(group_raw_t *gs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t r = 0; r < gs[i].nrules; r++) {
            rule_raw_t *ru = &gs[i].rules[r];
            im_free(ru->record.value);
            im_free(ru->alert.value);
            im_free(ru->expr.value);
            free_kvs(ru->labels, ru->nlabels);
            free_kvs(ru->ann, ru->nann);
        }
        im_free(gs[i].rules);
        im_free(gs[i].name);
    }
    im_free(gs);
}

/* yaml.v3's message for a libyaml parser error (0-based marks; the scanner's
 * are one line further). */
static void yaml_syntax_error(const cfg_yaml_problem_t *p, im_buf_t *out)
{
    int line = 0;
    if (p->ctx_line - 1 != 0) {
        line = p->ctx_line - 1 + (p->scanner ? 1 : 0);
    } else if (p->line - 1 != 0) {
        line = p->line - 1 + (p->scanner ? 1 : 0);
    }
    (void)im_buf_puts(out, "yaml: ");
    if (line) (void)im_buf_printf(out, "line %d: ", line);
    (void)im_buf_puts(out, p->problem[0] ? p->problem : "unknown problem parsing YAML content");
}

static bool label_value_valid(const char *s)
{
    return im_utf8_valid(s, strlen(s));
}

static void validate(const char *path, group_raw_t *gs, size_t ng, rules_errs_t *errs)
{
    for (size_t gi = 0; gi < ng; gi++) {
        group_raw_t *g = &gs[gi];
        const char *gname = g->name ? g->name : "";
        if (gname[0] == 0)
            rules_errs_add(errs, "%s: %d:%d: Groupname must not be empty", path, g->line, g->col);
        for (size_t j = 0; j < gi; j++)
            if (strcmp(gs[j].name ? gs[j].name : "", gname) == 0) {
                rules_errs_add(errs, "%s: %d:%d: groupname: \"%s\" is repeated in the same file",
                               path, g->line, g->col, gname);
                break;
            }
        for (size_t ri = 0; ri < g->nrules; ri++) {
            rule_raw_t *r = &g->rules[ri];
            const char *rec = r->record.value ? r->record.value : "";
            const char *al = r->alert.value ? r->alert.value : "";
            const char *rname = al[0] ? al : rec;
            char pre[1024];
            snprintf(pre, sizeof pre, "group \"%s\", rule %zu, \"%s\"", gname, ri + 1, rname);
#define POS(y) ((y).set ? (y).line : 0), ((y).set ? (y).col : 0)
            if (rec[0] && al[0])
                rules_errs_add(errs,
                               "%s: %d:%d: %d:%d: %s: only one of 'record' and 'alert' must be set",
                               path, POS(r->record), POS(r->alert), pre);
            if (!rec[0] && !al[0]) {
                if (r->record.set)
                    rules_errs_add(errs, "%s: %d:%d: %s: one of 'record' or 'alert' must be set",
                                   path, POS(r->record), pre);
                else
                    rules_errs_add(errs, "%s: %d:%d: %s: one of 'record' or 'alert' must be set",
                                   path, POS(r->alert), pre);
            }
            const char *ex = r->expr.value ? r->expr.value : "";
            if (!ex[0]) {
                rules_errs_add(errs, "%s: %d:%d: %s: field 'expr' must be set in rule", path,
                               POS(r->expr), pre);
            } else {
                promql_expr_t *ast = NULL;
                im_err_t err;
                im_err_clear(&err);
                if (promql_parse(ex, strlen(ex), &ast, &err) != IM_OK)
                    rules_errs_add(errs, "%s: %d:%d: %s: could not parse expression: %s", path,
                                   POS(r->expr), pre, err.msg);
                promql_expr_free(ast);
            }
            if (rec[0]) {
                if (r->nann)
                    rules_errs_add(errs,
                                   "%s: %d:%d: %s: invalid field 'annotations' in recording rule",
                                   path, POS(r->record), pre);
                if (r->for_ms)
                    rules_errs_add(errs, "%s: %d:%d: %s: invalid field 'for' in recording rule",
                                   path, POS(r->record), pre);
                if (r->keep_ms)
                    rules_errs_add(
                        errs, "%s: %d:%d: %s: invalid field 'keep_firing_for' in recording rule",
                        path, POS(r->record), pre);
                if (!im_metric_name_valid(rec, strlen(rec)))
                    rules_errs_add(errs, "%s: %d:%d: %s: invalid recording rule name: %s", path,
                                   POS(r->record), pre, rec);
            }
#undef POS
            for (size_t k = 0; k < r->nlabels; k++) {
                const char *ln = r->labels[k].name;
                if (!im_label_name_valid(ln, strlen(ln)) || strcmp(ln, IM_METRIC_NAME) == 0)
                    rules_errs_add(errs, "%s: %s: invalid label name: %s", path, pre, ln);
                if (!label_value_valid(r->labels[k].value))
                    rules_errs_add(errs, "%s: %s: invalid label value: %s", path, pre,
                                   r->labels[k].value);
            }
            for (size_t k = 0; k < r->nann; k++) {
                const char *an = r->ann[k].name;
                if (!im_label_name_valid(an, strlen(an)))
                    rules_errs_add(errs, "%s: %s: invalid annotation name: %s", path, pre, an);
            }
            if (al[0]) {
                char tname[1100];
                snprintf(tname, sizeof tname, "__alert_%s", al);
                for (size_t k = 0; k < r->nlabels; k++) {
                    im_err_t err;
                    im_err_clear(&err);
                    if (tmpl_check(tname, r->labels[k].value, strlen(r->labels[k].value), &err) !=
                        IM_OK)
                        rules_errs_add(errs, "%s: %s: label \"%s\": %s", path, pre,
                                       r->labels[k].name, err.msg);
                }
                for (size_t k = 0; k < r->nann; k++) {
                    im_err_t err;
                    im_err_clear(&err);
                    if (tmpl_check(tname, r->ann[k].value, strlen(r->ann[k].value), &err) != IM_OK)
                        rules_errs_add(errs, "%s: %s: annotation \"%s\": %s", path, pre,
                                       r->ann[k].name, err.msg);
                }
            }
        }
    }
}

im_rc rules_file_parse(const char *path, const char *data, size_t len, rules_file_t **out,
                       rules_errs_t *errs)
{
    *out = NULL;
    cfg_node_t *root = NULL;
    im_err_t perr;
    cfg_yaml_problem_t prob;
    im_err_clear(&perr);
    if (cfg_parse_yaml_ex(data, len, path, &root, &perr, &prob) != IM_OK) {
        im_buf_t b;
        im_buf_init(&b, 0);
        if (prob.syntax)
            yaml_syntax_error(&prob, &b);
        else
            (void)im_buf_puts(&b, perr.msg);
        /* Prometheus decodes twice and reports a syntax error from both. */
        rules_errs_add(errs, "%s: %s", path, b.data);
        rules_errs_add(errs, "%s: %s", path, b.data);
        im_buf_free(&b);
        return IM_EPARSE;
    }
    dec_t d = {0};
    im_buf_init(&d.unmarshal, 0);
    im_buf_init(&d.unmarshal2, 0);
    group_raw_t *gs = NULL;
    size_t ng = 0;
    if (root && !is_null(root)) {
        if (root->type != CFG_NODE_MAP) {
            type_err(&d, root, "rulefmt.RuleGroups");
            type_err_to(&d.unmarshal2, root, "rulefmt.ruleGroups");
        } else {
            for (size_t i = 0; i + 1 < root->nkids; i += 2) {
                const cfg_node_t *kn = root->kids[i], *vn = root->kids[i + 1];
                if (dup_key(&d, root, i)) continue;
                const char *k = kn->type == CFG_NODE_SCALAR ? kn->str : "";
                if (strcmp(k, "groups") != 0) {
                    (void)im_buf_printf(&d.unmarshal, "\n  line %d: field %s not found in type %s",
                                        kn->line, k, "rulefmt.RuleGroups");
                    continue;
                }
                if (is_null(vn)) continue;
                if (vn->type != CFG_NODE_SEQ) {
                    type_err(&d, vn, "[]rulefmt.RuleGroup");
                    type_err_to(&d.unmarshal2, vn, "[]yaml.Node");
                    continue;
                }
                free_raw(gs, ng);
                gs = im_calloc(vn->nkids ? vn->nkids : 1, sizeof *gs);
                ng = 0;
                for (size_t it = 0; it < vn->nkids; it++) dec_group(&d, vn->kids[it], &gs[ng++]);
            }
        }
    }
    cfg_node_free(root);
    if (d.fatal) {
        rules_errs_add(errs, "%s: %s", path, d.fatal);
        im_free(d.fatal);
        im_buf_free(&d.unmarshal);
        im_buf_free(&d.unmarshal2);
        free_raw(gs, ng);
        return IM_EPARSE;
    }
    if (d.unmarshal.len) {
        rules_errs_add(errs, "%s: yaml: unmarshal errors:%s", path, d.unmarshal.data);
        if (d.unmarshal2.len)
            rules_errs_add(errs, "%s: yaml: unmarshal errors:%s", path, d.unmarshal2.data);
        im_buf_free(&d.unmarshal);
        im_buf_free(&d.unmarshal2);
        free_raw(gs, ng);
        return IM_EPARSE;
    }
    im_buf_free(&d.unmarshal);
    im_buf_free(&d.unmarshal2);
    size_t before = errs->n;
    validate(path, gs, ng, errs);
    if (errs->n > before) {
        free_raw(gs, ng);
        return IM_EPARSE;
    }
    /* Build the result. */
    rules_file_t *f = im_calloc(1, sizeof *f);
    f->path = im_strdup(path);
    f->groups = im_calloc(ng ? ng : 1, sizeof *f->groups);
    f->ngroups = ng;
    for (size_t gi = 0; gi < ng; gi++) {
        group_raw_t *g = &gs[gi];
        rules_group_t *o = &f->groups[gi];
        o->name = g->name ? g->name : im_strdup("");
        g->name = NULL;
        o->file = im_strdup(path);
        o->interval_ms = g->interval_ms;
        o->limit = g->limit;
        o->query_offset_ms = g->query_offset_ms;
        o->rules = im_calloc(g->nrules ? g->nrules : 1, sizeof *o->rules);
        o->nrules = g->nrules;
        for (size_t ri = 0; ri < g->nrules; ri++) {
            rule_raw_t *r = &g->rules[ri];
            rules_rule_t *ru = &o->rules[ri];
            bool rec = r->record.value && r->record.value[0];
            ru->kind = rec ? RULES_RECORDING : RULES_ALERTING;
            ru->name = im_strdup(rec ? r->record.value : r->alert.value);
            ru->expr = im_strdup(r->expr.value);
            im_err_t err;
            if (promql_parse(ru->expr, strlen(ru->expr), &ru->ast, &err) != IM_OK) ru->ast = NULL;
            ru->for_ms = r->for_ms;
            ru->keep_firing_for_ms = r->keep_ms;
            ru->labels = r->labels;
            ru->nlabels = r->nlabels;
            r->labels = NULL;
            r->nlabels = 0;
            ru->annotations = r->ann;
            ru->nannotations = r->nann;
            r->ann = NULL;
            r->nann = 0;
            ru->line = r->line;
        }
    }
    free_raw(gs, ng);
    *out = f;
    return IM_OK;
}

im_rc rules_file_load(const char *path, rules_file_t **out, rules_errs_t *errs)
{
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        rules_errs_add(errs, "%s: open %s: %s", path, path, strerror(errno));
        return IM_EIO;
    }
    im_buf_t b;
    im_buf_init(&b, RULES_MAX_FILE_BYTES);
    char tmp[65536];
    size_t r;
    while ((r = fread(tmp, 1, sizeof tmp, fp)) > 0) {
        if (im_buf_append(&b, tmp, r) != IM_OK) {
            fclose(fp);
            im_buf_free(&b);
            rules_errs_add(errs, "%s: file larger than %u bytes", path, RULES_MAX_FILE_BYTES);
            return IM_ELIMIT;
        }
    }
    fclose(fp);
    im_rc rc = rules_file_parse(path, b.data ? b.data : "", b.len, out, errs);
    im_buf_free(&b);
    return rc;
}

/* ---- Duplicate-rules lint ---- */

typedef struct dup_key {
    const char *metric;
    const rules_rule_t *r;
} dup_key_t;

static int dup_cmp(const void *a, const void *b)
{
    const dup_key_t *x = a, *y = b;
    int c = strcmp(x->metric, y->metric);
    if (c) return c;
    size_t n = IM_MIN(x->r->nlabels, y->r->nlabels);
    for (size_t i = 0; i < n; i++) {
        c = strcmp(x->r->labels[i].name, y->r->labels[i].name);
        if (c) return c;
        c = strcmp(x->r->labels[i].value, y->r->labels[i].value);
        if (c) return c;
    }
    return x->r->nlabels < y->r->nlabels ? -1 : x->r->nlabels > y->r->nlabels ? 1 : 0;
}

void rules_file_lint_duplicates(const rules_file_t *f, rules_errs_t *errs)
{
    size_t n = rules_file_count(f);
    if (n < 2) return;
    dup_key_t *keys = im_calloc(n, sizeof *keys);
    size_t k = 0;
    for (size_t g = 0; g < f->ngroups; g++)
        for (size_t r = 0; r < f->groups[g].nrules; r++) {
            keys[k].metric = f->groups[g].rules[r].name;
            keys[k].r = &f->groups[g].rules[r];
            k++;
        }
    qsort(keys, k, sizeof *keys, dup_cmp);
    im_buf_t b;
    im_buf_init(&b, 0);
    size_t ndup = 0;
    for (size_t i = 1; i < k; i++) {
        if (dup_cmp(&keys[i - 1], &keys[i]) != 0) continue;
        ndup++;
        (void)im_buf_printf(&b, "Metric: %s\nLabel(s):\n", keys[i].metric);
        for (size_t l = 0; l < keys[i].r->nlabels; l++)
            (void)im_buf_printf(&b, "\t%s: %s\n", keys[i].r->labels[l].name,
                                keys[i].r->labels[l].value);
    }
    if (ndup) {
        bool was_lint_only = errs->n == 0;
        rules_errs_add(errs,
                       "lint error %zu duplicate rule(s) found.\n%sMight cause inconsistency while "
                       "recording expressions",
                       ndup, b.data);
        errs->only_lint = was_lint_only || errs->only_lint;
    }
    im_buf_free(&b);
    im_free(keys);
}
