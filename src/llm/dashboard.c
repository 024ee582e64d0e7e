/* dashboard.c — the Grafana dashboard walker of `infermon lint`: reads the
 * dashboard JSON with jansson, visits panels, rows (old `rows[]` and new row
 * panels, collapsed rows' nested panels included) and their Prometheus targets,
 * skips library-panel references with a note, and substitutes template
 * variables ($var, ${var}, ${var:fmt}, [[var]], $__interval, $__rate_interval,
 * $__range, …) by plausible values before each expression is parsed. Locations
 * read like `panels[3] "TTFT p95" targets[0]`. */
#include "util/base.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>

#include "llm/lint_int.h"

#define MAX_VARS        256
#define MAX_PANEL_DEPTH 8

typedef struct tvar {
    const char *name;  /* borrowed from the JSON */
    const char *value; /* a plausible value (current, first option, or NULL) */
    bool interval;
} tvar_t;

typedef struct tvars {
    tvar_t v[MAX_VARS];
    size_t n;
} tvars_t;

size_t lint__subst_vars(const char *expr, size_t len, const void *vars, im_buf_t *out,
                        uint32_t (**ranges)[2], size_t *nranges);

/* ---- Template variables ---- */

static const char *builtin_value(const char *n, size_t l)
{
    static const struct {
        const char *name, *value;
    } b[] = {{"__interval_ms", "60000"},
             {"__interval", "1m"},
             {"__rate_interval_ms", "300000"},
             {"__rate_interval", "5m"},
             {"__range_ms", "3600000"},
             {"__range_s", "3600"},
             {"__range", "1h"},
             {"__from", "1700000000000"},
             {"__to", "1700003600000"},
             {"__auto_interval", "1m"},
             {"__name", "templated"},
             {"__dashboard", "dashboard"},
             {"__org", "1"},
             {"__user", "user"},
             {"timeFilter", "1"}};
    for (size_t i = 0; i < IM_ARRAY_LEN(b); i++)
        if (strlen(b[i].name) == l && memcmp(b[i].name, n, l) == 0) return b[i].value;
    return NULL;
}

static bool looks_duration(const char *s)
{
    if (!s || !isdigit((unsigned char)*s)) return false;
    while (isdigit((unsigned char)*s)) s++;
    return *s == 's' || *s == 'm' || *s == 'h' || *s == 'd' || *s == 'w' || *s == 'y';
}

static bool looks_number(const char *s)
{
    if (!s || !*s) return false;
    char *end;
    (void)strtod(s, &end);
    return *end == '\0';
}

static bool looks_ident(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_' || *s == ':')) return false;
    return true;
}

typedef enum ctx_kind { CTX_BARE, CTX_STRING, CTX_RANGE, CTX_NUMBER } ctx_kind_t;

static ctx_kind_t context_at(const char *s, size_t pos)
{
    bool in_str = false;
    int bracket = 0;
    char q = 0;
    for (size_t i = 0; i < pos; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == q)
                in_str = false;
            continue;
        }
        if (c == '"' || c == '\'' || c == '`') {
            in_str = true;
            q = c;
        } else if (c == '[')
            bracket++;
        else if (c == ']' && bracket > 0)
            bracket--;
    }
    if (in_str) return CTX_STRING;
    if (bracket > 0) return CTX_RANGE;
    /* After an operator, or as the first argument of topk/bottomk/quantile: a number. */
    size_t i = pos;
    while (i > 0 && s[i - 1] == ' ') i--;
    if (i > 0 && strchr("<>=+-*/%^,", s[i - 1])) {
        if (s[i - 1] != ',') return CTX_NUMBER;
    }
    if (i > 0 && s[i - 1] == '(') {
        size_t e = i - 1;
        while (e > 0 && s[e - 1] == ' ') e--;
        size_t b = e;
        while (b > 0 && (isalnum((unsigned char)s[b - 1]) || s[b - 1] == '_')) b--;
        static const char *const numf[] = {
            "topk",   "bottomk",    "quantile", "histogram_quantile", "quantile_over_time",
            "limitk", "limit_ratio"};
        for (size_t k = 0; k < IM_ARRAY_LEN(numf); k++)
            if (e - b == strlen(numf[k]) && memcmp(s + b, numf[k], e - b) == 0) return CTX_NUMBER;
    }
    return CTX_BARE;
}

static const char *plausible(const tvars_t *vars, const char *n, size_t l, ctx_kind_t ctx)
{
    const char *v = builtin_value(n, l);
    bool interval = false;
    if (!v && vars) {
        for (size_t i = 0; i < vars->n; i++)
            if (strlen(vars->v[i].name) == l && memcmp(vars->v[i].name, n, l) == 0) {
                v = vars->v[i].value;
                interval = vars->v[i].interval;
                break;
            }
    }
    switch (ctx) {
    case CTX_RANGE: return looks_duration(v) ? v : "5m";
    case CTX_STRING:
        if (v && !strchr(v, '"') && !strchr(v, '\\') && !strchr(v, '$') && strcmp(v, "All") != 0)
            return v;
        return ".*";
    case CTX_NUMBER: return looks_number(v) ? v : "1";
    default:
        if (interval && looks_duration(v)) return v;
        if (looks_number(v) || looks_ident(v) || looks_duration(v)) return v;
        return "templated";
    }
}

size_t lint__subst_vars(const char *s, size_t len, const void *varsp, im_buf_t *out,
                        uint32_t (**ranges)[2], size_t *nranges)
{
    const tvars_t *vars = varsp;
    size_t cap = 0;
    *ranges = NULL;
    *nranges = 0;
    size_t i = 0;
    while (i < len) {
        size_t start = i, nb = 0, nl = 0, end = 0;
        bool var = false;
        if (s[i] == '$' && i + 1 < len && s[i + 1] == '{') {
            const char *close = memchr(s + i + 2, '}', len - i - 2);
            if (close) {
                nb = i + 2;
                size_t ce = (size_t)(close - s);
                const char *colon = memchr(s + nb, ':', ce - nb);
                nl = (colon ? (size_t)(colon - s) : ce) - nb;
                end = ce + 1;
                var = nl > 0;
            }
        } else if (s[i] == '$' && i + 1 < len &&
                   (isalpha((unsigned char)s[i + 1]) || s[i + 1] == '_')) {
            nb = i + 1;
            size_t j = nb;
            while (j < len && (isalnum((unsigned char)s[j]) || s[j] == '_')) j++;
            nl = j - nb;
            end = j;
            var = true;
        } else if (s[i] == '[' && i + 1 < len && s[i + 1] == '[') {
            const char *close = NULL;
            for (size_t j = i + 2; j + 1 < len; j++)
                if (s[j] == ']' && s[j + 1] == ']') {
                    close = s + j;
                    break;
                }
            if (close) {
                nb = i + 2;
                size_t ce = (size_t)(close - s);
                bool ok = ce > nb;
                for (size_t j = nb; j < ce && ok; j++)
                    ok = isalnum((unsigned char)s[j]) || s[j] == '_' || s[j] == ':';
                if (ok) {
                    const char *colon = memchr(s + nb, ':', ce - nb);
                    nl = (colon ? (size_t)(colon - s) : ce) - nb;
                    end = ce + 2;
                    var = nl > 0;
                }
            }
        }
        if (!var) {
            (void)im_buf_putc(out, s[i]);
            i++;
            continue;
        }
        /* Context is judged on the text written so far (already substituted). */
        ctx_kind_t ctx = context_at(out->data ? out->data : "", out->len);
        const char *v = plausible(vars, s + nb, nl, ctx);
        uint32_t rs = (uint32_t)out->len;
        (void)im_buf_puts(out, v);
        if (*nranges == cap) {
            cap = cap ? cap * 2 : 4;
            *ranges = im_realloc(*ranges, cap * sizeof(**ranges));
        }
        (*ranges)[*nranges][0] = rs;
        (*ranges)[*nranges][1] = (uint32_t)out->len;
        (*nranges)++;
        i = end;
        (void)start;
    }
    return *nranges;
}

static void collect_vars(json_t *dash, tvars_t *vars)
{
    json_t *list = json_object_get(json_object_get(dash, "templating"), "list");
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
    {
        if (vars->n >= MAX_VARS) break;
        const char *name = json_string_value(json_object_get(v, "name"));
        if (!name) continue;
        tvar_t *t = &vars->v[vars->n++];
        t->name = name;
        const char *type = json_string_value(json_object_get(v, "type"));
        t->interval = type && strcmp(type, "interval") == 0;
        json_t *cur = json_object_get(json_object_get(v, "current"), "value");
        if (json_is_array(cur)) cur = json_array_get(cur, 0);
        t->value = json_string_value(cur);
        if (!t->value || strcmp(t->value, "$__all") == 0 || !*t->value) {
            json_t *opt = json_array_get(json_object_get(v, "options"), 0);
            const char *ov = json_string_value(json_object_get(opt, "value"));
            t->value = ov && strcmp(ov, "$__all") != 0 ? ov : NULL;
        }
        if (!t->value && t->interval) {
            const char *qv = json_string_value(json_object_get(v, "query"));
            if (looks_duration(qv)) t->value = qv;
        }
        if (t->value && strcmp(t->value, "$__auto_interval") == 0) t->value = "1m";
    }
}

/* ---- Panels ---- */

#define MAX_DS_UIDS 32

typedef struct ds_uid {
    const char *uid; /* borrowed from the JSON */
    char *first;     /* owned: path of the first use */
    size_t uses;
} ds_uid_t;

typedef struct dctx {
    lint_run_t *r;
    const char *file;
    const char *prefix; /* location prefix of an embedded dashboard ("" = none) */
    int line, col;      /* of an embedded dashboard in its file (0 = unknown) */
    size_t nplace;      /* expressions holding a template placeholder */
    tvars_t vars;
    ds_uid_t uids[MAX_DS_UIDS];
    size_t nuids;
} dctx_t;

/* A Prometheus datasource given by a fixed uid rather than a variable: the
 * dashboard breaks on any other Grafana. Collected per uid, reported once. */
static void note_datasource(dctx_t *x, json_t *ds, const char *path)
{
    if (!json_is_object(ds)) return;
    const char *t = json_string_value(json_object_get(ds, "type"));
    const char *uid = json_string_value(json_object_get(ds, "uid"));
    if (!uid || !*uid || !t || strcmp(t, "prometheus") != 0) return;
    if (strchr(uid, '$') || uid[0] == '-' || strcmp(uid, "grafana") == 0) return;
    for (size_t i = 0; i < x->nuids; i++)
        if (strcmp(x->uids[i].uid, uid) == 0) {
            x->uids[i].uses++;
            return;
        }
    if (x->nuids >= MAX_DS_UIDS) return;
    x->uids[x->nuids].uid = uid;
    x->uids[x->nuids].first = im_strdup(path);
    x->uids[x->nuids].uses = 1;
    x->nuids++;
}

static bool non_prometheus(json_t *ds)
{
    if (!ds) return false;
    if (json_is_object(ds)) {
        const char *t = json_string_value(json_object_get(ds, "type"));
        return t && strcmp(t, "prometheus") != 0 && strcmp(t, "datasource") != 0 && t[0] != '$';
    }
    const char *s = json_string_value(ds);
    if (!s) return false;
    static const char *const others[] = {
        "loki",   "Loki",  "elasticsearch", "Elasticsearch", "influx",
        "Influx", "tempo", "Tempo",         "-- Grafana --", "-- Dashboard --"};
    for (size_t i = 0; i < IM_ARRAY_LEN(others); i++)
        if (strstr(s, others[i])) return true;
    return false;
}

static void lint_expr(dctx_t *x, lint_where_t *w, const char *expr, size_t len);

static void lint_target(dctx_t *x, const char *path, json_t *panel, json_t *t, bool heatmap)
{
    const char *expr = json_string_value(json_object_get(t, "expr"));
    /* Grafana's Google Cloud Monitoring data source: promQLQuery.expr. */
    bool gcm = false;
    if (!expr) {
        expr = json_string_value(json_object_get(json_object_get(t, "promQLQuery"), "expr"));
        gcm = expr != NULL;
    }
    if (!expr || !*expr) return;
    if (!gcm && non_prometheus(json_object_get(t, "datasource"))) return;
    if (!gcm && !json_object_get(t, "datasource") &&
        non_prometheus(json_object_get(panel, "datasource")))
        return;
    note_datasource(x, json_object_get(t, "datasource"), path);
    if (!json_object_get(t, "datasource"))
        note_datasource(x, json_object_get(panel, "datasource"), path);
    const char *fmt = json_string_value(json_object_get(t, "format"));
    lint_where_t w = lint__where(x->file, x->line, x->col, path);
    w.heatmap = heatmap || (fmt && strcmp(fmt, "heatmap") == 0);
    w.legend = json_string_value(json_object_get(t, "legendFormat"));
    lint_expr(x, &w, expr, strlen(expr));
}

/* Substitutes the dashboard's variables and lints; w->orig_expr defaults to expr. */
static void lint_expr(dctx_t *x, lint_where_t *wp, const char *expr, size_t len)
{
    if (lint__tmpl_placeholder(expr, len)) x->nplace++;
    lint_where_t w = *wp;
    if (!w.orig_expr) w.orig_expr = expr;
    im_buf_t sb;
    im_buf_init(&sb, 1u << 20);
    uint32_t(*rg)[2] = NULL;
    size_t nrg = 0;
    lint__subst_vars(expr, len, &x->vars, &sb, &rg, &nrg);
    if (nrg > 0) {
        w.subst = (const uint32_t(*)[2])rg;
        w.nsubst = nrg;
        lint_query(x->r, &w, sb.data ? sb.data : "", sb.len);
    } else {
        lint_query(x->r, &w, expr, len);
    }
    im_free(rg);
    im_buf_free(&sb);
}

static void walk_panels(dctx_t *x, json_t *panels, const char *prefix, const char *key, int depth);

static void walk_panel(dctx_t *x, json_t *p, const char *ppath, int depth)
{
    const char *type = json_string_value(json_object_get(p, "type"));
    json_t *lib = json_object_get(p, "libraryPanel");
    json_t *targets = json_object_get(p, "targets");
    if (lib && (!targets || json_array_size(targets) == 0)) {
        const char *ln = json_string_value(json_object_get(lib, "name"));
        const char *uid = json_string_value(json_object_get(lib, "uid"));
        lint_note(x->r, "library-panel", LINT_SEV_INFO, x->file, x->line, x->col, ppath,
                  "library panel \"%s\" (uid %s) skipped: its queries are stored in Grafana, not "
                  "in this file",
                  ln ? ln : "", uid ? uid : "?");
        return;
    }
    bool heatmap = type && strcmp(type, "heatmap") == 0;
    size_t i;
    json_t *t;
    json_array_foreach(targets, i, t)
    {
        char path[600];
        snprintf(path, sizeof path, "%s targets[%zu]", ppath, i);
        lint_target(x, path, p, t, heatmap);
    }
    /* Rows (collapsed rows keep their panels inside). */
    if (json_object_get(p, "panels"))
        walk_panels(x, json_object_get(p, "panels"), ppath, "panels", depth + 1);
}

static void walk_panels(dctx_t *x, json_t *panels, const char *prefix, const char *key, int depth)
{
    if (depth > MAX_PANEL_DEPTH || !json_is_array(panels)) return;
    size_t i;
    json_t *p;
    json_array_foreach(panels, i, p)
    {
        if (!json_is_object(p)) continue;
        const char *title = json_string_value(json_object_get(p, "title"));
        char path[500];
        snprintf(path, sizeof path, "%s%s%s[%zu] \"%s\"", prefix, prefix[0] ? " " : "", key, i,
                 title ? title : "");
        walk_panel(x, p, path, depth);
    }
}

/* ---- Template variables ---- */

static size_t skip_ws(const char *s, size_t i, size_t len)
{
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) i++;
    return i;
}

/* The end of a function call's argument list starting after '(' at i: the
 * index of the closing ')' at depth 0 (skipping strings), or len. *comma is the
 * last top-level comma (or len). */
static size_t call_end(const char *s, size_t i, size_t len, size_t *comma)
{
    int depth = 0;
    char quote = 0;
    *comma = len;
    for (; i < len; i++) {
        char c = s[i];
        if (quote) {
            if (c == '\\')
                i++;
            else if (c == quote)
                quote = 0;
            continue;
        }
        if (c == '"' || c == '\'' || c == '`')
            quote = c;
        else if (c == '(' || c == '{' || c == '[')
            depth++;
        else if (c == ')' || c == '}' || c == ']') {
            if (depth == 0) return i;
            depth--;
        } else if (c == ',' && depth == 0)
            *comma = i;
    }
    return len;
}

/* label_values(selector, label) and query_result(expr) in a query variable. */
static void lint_variable(dctx_t *x, json_t *v, size_t idx)
{
    const char *name = json_string_value(json_object_get(v, "name"));
    const char *type = json_string_value(json_object_get(v, "type"));
    if (!type || strcmp(type, "query") != 0) return;
    json_t *ds = json_object_get(v, "datasource");
    if (non_prometheus(ds)) return;
    json_t *qn = json_object_get(v, "query");
    const char *qs = json_string_value(qn);
    if (!qs && json_is_object(qn)) qs = json_string_value(json_object_get(qn, "query"));
    if (!qs) qs = json_string_value(json_object_get(v, "definition"));
    if (!qs) return;
    size_t len = strlen(qs);
    size_t i = skip_ws(qs, 0, len);
    static const char *const fns[] = {"label_values", "query_result"};
    for (size_t f = 0; f < IM_ARRAY_LEN(fns); f++) {
        size_t fl = strlen(fns[f]);
        if (len - i <= fl || memcmp(qs + i, fns[f], fl) != 0) continue;
        size_t open = skip_ws(qs, i + fl, len);
        if (open >= len || qs[open] != '(') return;
        size_t comma, end = call_end(qs, open + 1, len, &comma);
        if (end >= len) return;
        size_t as = open + 1, ae = end;
        char label[128] = "";
        if (f == 0) {
            if (comma == len) return; /* label_values(label): any series */
            size_t ls = skip_ws(qs, comma + 1, end), le = end;
            while (le > ls && (qs[le - 1] == ' ' || qs[le - 1] == '\t')) le--;
            if (le <= ls || le - ls >= sizeof label || memchr(qs + ls, '$', le - ls)) return;
            memcpy(label, qs + ls, le - ls);
            label[le - ls] = 0;
            ae = comma;
        }
        as = skip_ws(qs, as, ae);
        while (ae > as && (qs[ae - 1] == ' ' || qs[ae - 1] == '\t')) ae--;
        if (ae <= as) return;
        char path[300];
        snprintf(path, sizeof path, "%s%stemplating.list[%zu] \"%s\" %s", x->prefix,
                 x->prefix[0] ? "." : "", idx, name ? name : "", fns[f]);
        lint_where_t w = lint__where(x->file, x->line, x->col, path);
        w.orig_expr = qs;
        w.values_label = label[0] ? label : NULL;
        char *inner = im_strndup(qs + as, ae - as);
        /* orig_expr is the whole query text: --fix edits the name inside it. */
        lint_expr(x, &w, inner, ae - as);
        im_free(inner);
        return;
    }
}

static void lint_variables(dctx_t *x, json_t *dash)
{
    json_t *list = json_object_get(json_object_get(dash, "templating"), "list");
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) lint_variable(x, v, i);
}

/* ---- Google Cloud Monitoring dashboards (GMP): prometheusQuery fields ---- */

static void walk_gcm(dctx_t *x, json_t *n, const char *title, const char *path, int depth)
{
    if (depth > 24) return;
    char sub[600];
    if (json_is_object(n)) {
        const char *t = json_string_value(json_object_get(n, "title"));
        if (t) title = t;
        const char *key;
        json_t *val;
        json_object_foreach(n, key, val)
        {
            snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", key);
            if (strcmp(key, "prometheusQuery") == 0 && json_is_string(val)) {
                char loc[700];
                snprintf(loc, sizeof loc, "%s \"%s\"", sub, title ? title : "");
                lint_where_t w = lint__where(x->file, x->line, x->col, loc);
                const char *e = json_string_value(val);
                if (*e) lint_expr(x, &w, e, strlen(e));
            } else {
                walk_gcm(x, val, title, sub, depth + 1);
            }
        }
    } else if (json_is_array(n)) {
        size_t i;
        json_t *val;
        json_array_foreach(n, i, val)
        {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            walk_gcm(x, val, title, sub, depth + 1);
        }
    }
}

static size_t lint_dash_json(lint_run_t *r, const char *file, const char *prefix, int line, int col,
                             const char *buf, size_t len, bool templated)
{
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_ALLOW_NUL, &je);
    if (!root) {
        int el = line > 0 ? line + je.line - 1 : je.line;
        lint_note(r, "input", LINT_SEV_ERROR, file, el, line > 0 ? col : je.column,
                  prefix[0] ? prefix : NULL, "JSON: %s%s", je.text,
                  templated ? " (a Helm template even with its actions replaced: render it with "
                              "`helm template` and lint the output)"
                            : "");
        return 0;
    }
    json_t *dash = root;
    if (json_is_object(json_object_get(root, "dashboard")))
        dash = json_object_get(root, "dashboard");
    if (!json_is_object(dash)) {
        lint_note(r, "input", LINT_SEV_ERROR, file, line > 0 ? line : 1, line > 0 ? col : 1,
                  prefix[0] ? prefix : NULL,
                  "not a Grafana dashboard: the top level is not an object");
        json_decref(root);
        return 0;
    }
    dctx_t *x = im_calloc(1, sizeof(*x));
    x->r = r;
    x->file = file;
    x->prefix = prefix;
    x->line = line;
    x->col = col;
    collect_vars(dash, &x->vars);
    size_t mark = lint__dashboard_mark(r);
    walk_panels(x, json_object_get(dash, "panels"), prefix, "panels", 0);
    json_t *rows = json_object_get(dash, "rows");
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        const char *title = json_string_value(json_object_get(row, "title"));
        char path[300];
        snprintf(path, sizeof path, "%s%srows[%zu] \"%s\"", prefix, prefix[0] ? " " : "", i,
                 title ? title : "");
        walk_panels(x, json_object_get(row, "panels"), path, "panels", 1);
    }
    lint__dashboard_vars(r, mark, file, line, col);
    lint_variables(x, dash);
    if (json_object_get(dash, "mosaicLayout") || json_object_get(dash, "gridLayout") ||
        json_object_get(dash, "columnLayout") || json_object_get(dash, "rowLayout"))
        walk_gcm(x, dash, NULL, prefix, 0);
    /* the dashboard's own data source variable, if it has one */
    const char *dsvar = NULL;
    json_t *tl = json_object_get(json_object_get(dash, "templating"), "list"), *tv;
    json_array_foreach(tl, i, tv)
    {
        const char *ty = json_string_value(json_object_get(tv, "type"));
        const char *q = json_string_value(json_object_get(tv, "query"));
        if (!dsvar && ty && strcmp(ty, "datasource") == 0 && q && strcmp(q, "prometheus") == 0)
            dsvar = json_string_value(json_object_get(tv, "name"));
    }
    for (size_t u = 0; u < x->nuids; u++) {
        char use[200];
        if (dsvar)
            snprintf(use, sizeof use, "the dashboard's data source variable: ${%s}", dsvar);
        else
            snprintf(use, sizeof use,
                     "a data source variable (${datasource}, or ${DS_PROMETHEUS} with __inputs)");
        lint_note(r, "hardcoded-datasource", LINT_SEV_WARNING, file, line, col, x->uids[u].first,
                  "%zu quer%s use%s the Prometheus data source by its uid \"%s\": on any other "
                  "Grafana the panels show \"data source not found\"; use %s",
                  x->uids[u].uses, x->uids[u].uses == 1 ? "y" : "ies",
                  x->uids[u].uses == 1 ? "s" : "", x->uids[u].uid, use);
        im_free(x->uids[u].first);
    }
    size_t np = x->nplace;
    im_free(x);
    json_decref(root);
    return np;
}

im_rc lint__dashboard_at(lint_run_t *r, const char *file, const char *prefix, int line, int col,
                         const char *buf, size_t len)
{
    (void)lint_dash_json(r, file, prefix ? prefix : "", line, col, buf, len, false);
    return IM_OK;
}

im_rc lint_dashboard(lint_run_t *r, const char *file, const char *buf, size_t len)
{
    lint_tmpl_t t;
    if (lint__tmpl_prepare(file, buf, len, true, &t)) {
        size_t np = lint_dash_json(r, file, "", 0, 0, t.masked, len, true);
        lint__tmpl_note(r, file, buf, len, &t, np);
        lint__tmpl_free(&t);
        return IM_OK;
    }
    lint__tmpl_free(&t);
    (void)lint_dash_json(r, file, "", 0, 0, buf, len, false);
    return IM_OK;
}
