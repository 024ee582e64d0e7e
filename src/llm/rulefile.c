/* rulefile.c — the Prometheus rule-file walker of `infermon lint`: reads the
 * YAML with config/yaml.h (keeping line and column marks), hands every alerting and
 * recording rule's expr to lint_query with its file position, its byte span in
 * the file (for --fix) and the alert's `for`, and collects recording-rule names
 * as known names. Text files of queries (one per line) are walked here too. */
#include "util/base.h"

#include <stdio.h>

#include <jansson.h>

#include "config/yaml.h"
#include "llm/lint_int.h"
#include "promql/parser.h"
#include "util/timeutil.h"

lint_input_kind_t lint_input_detect(const char *file, const char *buf, size_t len)
{
    size_t fl = file ? strlen(file) : 0;
    if (fl > 5 && strcmp(file + fl - 5, ".json") == 0) return LINT_INPUT_DASHBOARD;
    if ((fl > 4 && strcmp(file + fl - 4, ".yml") == 0) ||
        (fl > 5 && strcmp(file + fl - 5, ".yaml") == 0))
        return LINT_INPUT_RULES;
    size_t i = 0;
    while (i < len && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t')) i++;
    if (i < len && buf[i] == '{') return LINT_INPUT_DASHBOARD;
    if (len >= 7 && memmem(buf, len, "groups:", 7)) return LINT_INPUT_RULES;
    if (len >= 20 && memmem(buf, len, "kind: PrometheusRule", 20)) return LINT_INPUT_RULES;
    return LINT_INPUT_TEXT;
}

/* Byte offset of a node position (1-based line, column in characters), with
 * the file's line starts computed once (lines[i] = offset of line i). */
static size_t mark_offset(const char *buf, size_t len, const size_t *lines, size_t nlines, int line,
                          int col)
{
    if (line < 1 || (size_t)(line - 1) >= nlines) return len;
    size_t off = lines[line - 1];
    for (int c = 1; c < col && off < len && buf[off] != '\n'; c++) {
        unsigned char ch = (unsigned char)buf[off];
        size_t w = ch < 0x80 ? 1 : ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : ch >= 0xC0 ? 2 : 1;
        off += w;
    }
    return off > len ? len : off;
}

static const char *scalar(const cfg_node_t *n)
{
    return n && n->type == CFG_NODE_SCALAR ? n->str : NULL;
}

typedef void (*rule_fn)(void *user, const char *prefix, const cfg_node_t *group, size_t gi,
                        const cfg_node_t *rule, size_t ri);

#define MAX_RULE_DEPTH 8

static void shift_lines(cfg_node_t *n, int by)
{
    if (!n || by == 0) return;
    n->line += by;
    n->end_line += by;
    for (size_t i = 0; i < n->nkids; i++) shift_lines(n->kids[i], by);
}

static bool is_rule_list(const cfg_node_t *rules)
{
    if (!rules || rules->type != CFG_NODE_SEQ || rules->nkids == 0) return false;
    for (size_t i = 0; i < rules->nkids; i++) {
        const cfg_node_t *r = rules->kids[i];
        if (r->type != CFG_NODE_MAP) return false;
        if (!cfg_get_raw(r, "expr") && !cfg_get_raw(r, "alert") && !cfg_get_raw(r, "record"))
            return false;
    }
    return true;
}

static bool is_group_list(const cfg_node_t *groups)
{
    if (!groups || groups->type != CFG_NODE_SEQ) return false;
    for (size_t i = 0; i < groups->nkids; i++)
        if (groups->kids[i]->type != CFG_NODE_MAP || !cfg_get_raw(groups->kids[i], "rules"))
            return false;
    return true;
}

/* A dashboard embedded in a Kubernetes object: path is its location prefix. */
typedef void (*dash_fn)(void *user, const char *path, const cfg_node_t *val);
/* A GrafanaDashboard whose JSON lives elsewhere (url, configMapRef, …). */
typedef void (*ext_fn)(void *user, const char *path, const cfg_node_t *val, const char *field);

typedef struct walk {
    rule_fn fn;
    void *user;
    size_t ngroups; /* group lists found */
    dash_fn dfn;    /* NULL: embedded dashboards are not visited */
    ext_fn xfn;
    size_t ndash; /* embedded dashboards found */
} walk_t;

static bool looks_dashboard(const char *key, const char *v)
{
    if (!v) return false;
    while (*v == ' ' || *v == '\n' || *v == '\t' || *v == '\r') v++;
    if (*v != '{') return false;
    bool json_key = key && strlen(key) > 5 && strcmp(key + strlen(key) - 5, ".json") == 0;
    bool shape = strstr(v, "\"panels\"") || strstr(v, "\"rows\"") ||
                 strstr(v, "\"mosaicLayout\"") || strstr(v, "\"templating\"");
    return shape || (json_key && strstr(v, "\"dashboard\""));
}

/* ConfigMaps holding dashboard JSON in data (the Grafana sidecar's
 * grafana_dashboard label, or any *.json key that is a dashboard) and
 * grafana-operator GrafanaDashboard objects (spec.json). */
static void find_dashboards(walk_t *w, const cfg_node_t *root, const char *prefix)
{
    if (!w->dfn || !root || root->type != CFG_NODE_MAP) return;
    const char *kind = scalar(cfg_get_raw(root, "kind"));
    if (!kind) return;
    char sub[600];
    const char *pre = prefix && prefix[0] ? prefix : "";
    if (strcmp(kind, "ConfigMap") == 0) {
        const cfg_node_t *data = cfg_get_raw(root, "data");
        if (!data || data->type != CFG_NODE_MAP) return;
        for (size_t i = 0; i + 1 < data->nkids; i += 2) {
            const char *k = scalar(data->kids[i]);
            const cfg_node_t *v = data->kids[i + 1];
            if (!looks_dashboard(k, scalar(v))) continue;
            snprintf(sub, sizeof sub, "%s%sdata[\"%s\"]", pre, pre[0] ? "." : "", k ? k : "?");
            w->ndash++;
            w->dfn(w->user, sub, v);
        }
    } else if (strcmp(kind, "GrafanaDashboard") == 0) {
        const cfg_node_t *spec = cfg_get_raw(root, "spec");
        if (!spec || spec->type != CFG_NODE_MAP) return;
        const cfg_node_t *js = cfg_get_raw(spec, "json");
        if (scalar(js)) {
            snprintf(sub, sizeof sub, "%s%sspec.json", pre, pre[0] ? "." : "");
            w->ndash++;
            w->dfn(w->user, sub, js);
            return;
        }
        static const char *const ext[] = {"gzipJson",   "url",     "configMapRef",
                                          "grafanaCom", "jsonnet", "jsonnetLib"};
        for (size_t i = 0; i < IM_ARRAY_LEN(ext); i++) {
            const cfg_node_t *v = cfg_get_raw(spec, ext[i]);
            if (!v) continue;
            snprintf(sub, sizeof sub, "%s%sspec.%s", pre, pre[0] ? "." : "", ext[i]);
            w->ndash++;
            if (w->xfn) w->xfn(w->user, sub, v, ext[i]);
            return;
        }
    }
}

static void walk_groups(walk_t *w, const char *prefix, const cfg_node_t *groups)
{
    w->ngroups++;
    for (size_t gi = 0; gi < groups->nkids; gi++) {
        const cfg_node_t *g = groups->kids[gi];
        const cfg_node_t *rules = cfg_get_raw(g, "rules");
        if (!rules || rules->type != CFG_NODE_SEQ) continue;
        for (size_t ri = 0; ri < rules->nkids; ri++)
            w->fn(w->user, prefix, g, gi, rules->kids[ri], ri);
    }
}

/* Finds the rule groups wherever a wrapper keeps them: the top of a rule file,
 * a PrometheusRule's spec, Helm values (additionalPrometheusRules lists,
 * additionalPrometheusRulesMap maps, a chart's prometheusRule.rules). */
static void find_groups(walk_t *w, const cfg_node_t *n, const char *path, int depth)
{
    if (!n || depth > MAX_RULE_DEPTH) return;
    char sub[512];
    if (n->type == CFG_NODE_MAP) {
        const cfg_node_t *groups = cfg_get_raw(n, "groups");
        if (is_group_list(groups)) {
            snprintf(sub, sizeof sub, "%s%sgroups", path, path[0] ? "." : "");
            walk_groups(w, sub, groups);
            return;
        }
        const cfg_node_t *rules = cfg_get_raw(n, "rules");
        if (is_rule_list(rules) && depth > 0) {
            /* A group-less rule list (Helm chart values): the mapping is the group. */
            cfg_node_t one = {0};
            const cfg_node_t *kid[1] = {n};
            one.type = CFG_NODE_SEQ;
            one.kids = (cfg_node_t **)kid;
            one.nkids = 1;
            snprintf(sub, sizeof sub, "%s", path);
            walk_groups(w, sub, &one);
            return;
        }
        for (size_t i = 0; i + 1 < n->nkids; i += 2) {
            const char *k = n->kids[i]->type == CFG_NODE_SCALAR ? n->kids[i]->str : "?";
            snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", k);
            find_groups(w, n->kids[i + 1], sub, depth + 1);
        }
    } else if (n->type == CFG_NODE_SEQ) {
        for (size_t i = 0; i < n->nkids; i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            find_groups(w, n->kids[i], sub, depth + 1);
        }
    }
}

/* Start of the next document marker line ("---" at column 1) at or after off. */
static size_t next_doc(const char *buf, size_t len, size_t off, size_t *after)
{
    size_t i = off;
    while (i < len) {
        if ((i == 0 || buf[i - 1] == '\n') && len - i >= 3 && memcmp(buf + i, "---", 3) == 0 &&
            (len - i == 3 || buf[i + 3] == '\n' || buf[i + 3] == ' ' || buf[i + 3] == '\r' ||
             buf[i + 3] == '\t')) {
            const char *nl = memchr(buf + i, '\n', len - i);
            *after = nl ? (size_t)(nl - buf) + 1 : len;
            return i;
        }
        const char *nl = memchr(buf + i, '\n', len - i);
        if (!nl) break;
        i = (size_t)(nl - buf) + 1;
    }
    *after = len;
    return len;
}

static bool walk_rules(const char *buf, size_t len, rule_fn fn, dash_fn dfn, ext_fn xfn, void *user,
                       char *errbuf, size_t errcap, int *eline, int *ecol)
{
    walk_t w = {fn, user, 0, dfn, xfn, 0};
    size_t off = 0, ndocs = 0, nempty = 0;
    int line0 = 1;
    int first_line = 1;
    bool multi = false;
    {
        /* A leading "---" opens the first document: only a second one makes the
         * file multi-document (and its locations doc[i]…). */
        size_t a, m = next_doc(buf, len, 0, &a);
        if (m == 0) m = next_doc(buf, len, a, &a);
        bool rest = false; /* anything but blanks after that marker */
        for (size_t i = a; m < len && i < len && !rest; i++)
            rest = !(buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t');
        multi = m < len && rest;
    }
    while (off <= len) {
        size_t after;
        size_t end = next_doc(buf, len, off, &after);
        /* A marker at the very start opens the first document. */
        if (end == off && off == 0 && end < len) {
            for (size_t i = 0; i < after; i++)
                if (buf[i] == '\n') line0++;
            off = after;
            continue;
        }
        cfg_node_t *root = NULL;
        im_err_t err;
        cfg_yaml_problem_t prob;
        im_err_clear(&err);
        if (cfg_parse_yaml_ex(buf + off, end - off, NULL, &root, &err, &prob) != IM_OK) {
            im_buf_t b;
            im_buf_init(&b, 0);
            if (prob.syntax) {
                (void)im_buf_printf(&b, "YAML: %s%s%s",
                                    prob.problem[0] ? prob.problem : "parse error",
                                    prob.context[0] ? " " : "", prob.context);
                *eline = prob.line + line0 - 1;
                *ecol = prob.col;
            } else {
                (void)im_buf_puts(&b, err.msg);
                *eline = line0;
                *ecol = 1;
            }
            snprintf(errbuf, errcap, "%.*s", (int)(errcap - 1), b.data ? b.data : "");
            im_buf_free(&b);
            return false;
        }
        if (root) {
            shift_lines(root, line0 - 1);
            char prefix[64] = "";
            if (multi) snprintf(prefix, sizeof prefix, "doc[%zu]", ndocs);
            if (ndocs == 0) first_line = root->line;
            size_t before = w.ngroups;
            const cfg_node_t *groups = cfg_get_raw(root, "groups");
            if (groups && groups->type == CFG_NODE_SEQ && !multi) {
                /* A plain rule file: locations stay groups[i]. */
                w.ngroups++;
                for (size_t gi = 0; gi < groups->nkids; gi++) {
                    const cfg_node_t *g = groups->kids[gi];
                    const cfg_node_t *rules = cfg_get_raw(g, "rules");
                    if (!rules || rules->type != CFG_NODE_SEQ) continue;
                    for (size_t ri = 0; ri < rules->nkids; ri++)
                        fn(user, NULL, g, gi, rules->kids[ri], ri);
                }
            } else {
                find_groups(&w, root, prefix, 0);
            }
            if (w.ngroups == before) find_dashboards(&w, root, prefix);
            cfg_node_free(root);
        } else {
            nempty++;
        }
        ndocs++;
        if (end >= len) break;
        for (size_t i = off; i < after; i++)
            if (buf[i] == '\n') line0++;
        off = after;
    }
    if (w.ngroups == 0 && w.ndash == 0 && ndocs > nempty) {
        snprintf(errbuf, errcap,
                 "not a rule file: no groups: list at the top, in a PrometheusRule's spec or in "
                 "Helm values (additionalPrometheusRules), and no dashboard in a ConfigMap's data "
                 "or a GrafanaDashboard's spec.json");
        *eline = first_line;
        *ecol = 1;
        return false;
    }
    return true;
}

static void record_fn(void *user, const char *prefix, const cfg_node_t *g, size_t gi,
                      const cfg_node_t *rule, size_t ri)
{
    (void)prefix;
    (void)g;
    (void)gi;
    (void)ri;
    const char *rec = scalar(cfg_get_raw(rule, "record"));
    const char *ex = scalar(cfg_get_raw(rule, "expr"));
    if (rec) lint_names_add_record_expr(user, rec, strlen(rec), ex, ex ? strlen(ex) : 0);
}

void lint_rulefile_records(lint_names_t *names, const char *buf, size_t len)
{
    char eb[256];
    int l, c;
    lint_tmpl_t t;
    bool tm = lint__tmpl_prepare(NULL, buf, len, false, &t);
    (void)walk_rules(tm ? t.masked : buf, len, record_fn, NULL, NULL, names, eb, sizeof eb, &l, &c);
    lint__tmpl_free(&t);
}

typedef struct rule_ctx {
    lint_run_t *r;
    const char *file;
    const char *buf;
    size_t len;
    size_t *lines; /* owned: offsets of line starts */
    size_t nlines;
    const lint_tmpl_t *tmpl; /* the file is a Helm template (NULL = not) */
    size_t nplace;           /* expressions holding a template placeholder */
} rule_ctx_t;

static void dash_cb(void *user, const char *path, const cfg_node_t *v)
{
    rule_ctx_t *x = user;
    int line = v->line, col = v->col;
    size_t off = mark_offset(x->buf, x->len, x->lines, x->nlines, v->line, v->col);
    if (off < x->len && (x->buf[off] == '|' || x->buf[off] == '>')) {
        /* A block scalar: its text starts on the next line, indented. */
        line++;
        col = 1;
        if ((size_t)line - 1 < x->nlines) {
            size_t o = x->lines[line - 1];
            while (o < x->len && x->buf[o] == ' ') {
                o++;
                col++;
            }
        }
    }
    const lint_finding_t *fs;
    size_t before = lint_run_findings(x->r, &fs);
    (void)lint__dashboard_at(x->r, x->file, path, line, col, v->str, strlen(v->str));
    /* Each finding at its expression's line when the JSON text is in the file
     * as written (a literal or folded block, a plain line). */
    size_t n = lint_run_findings(x->r, &fs);
    size_t from = off;
    size_t to = mark_offset(x->buf, x->len, x->lines, x->nlines, v->end_line, v->end_col);
    if (to > x->len || to < from) return;
    for (size_t i = before; i < n; i++) {
        const char *target = fs[i].orig_expr ? fs[i].orig_expr : fs[i].expr;
        if (!target) continue;
        json_t *js = json_string(target);
        char *es = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
        json_decref(js);
        if (!es) continue;
        const char *p = memmem(x->buf + from, to - from, es, strlen(es));
        free(es); /* checksrc: allow (jansson's allocation) */
        if (!p) continue;
        size_t at = (size_t)(p - x->buf) + 1; /* past the opening quote */
        size_t lo = 0, hi = x->nlines;        /* last line start <= at */
        while (hi - lo > 1) {
            size_t mid = (lo + hi) / 2;
            if (x->lines[mid] <= at)
                lo = mid;
            else
                hi = mid;
        }
        int c = 1;
        for (size_t o = x->lines[lo]; o < at; o++)
            if (((unsigned char)x->buf[o] & 0xC0) != 0x80) c++;
        lint__finding_move(x->r, i, (int)lo + 1, c);
    }
}

static void ext_cb(void *user, const char *path, const cfg_node_t *v, const char *field)
{
    rule_ctx_t *x = user;
    lint_note(x->r, "external-dashboard", LINT_SEV_INFO, x->file, v->line, v->col, path,
              "the GrafanaDashboard takes its JSON from %s: not in this file, not checked; lint "
              "that dashboard's JSON itself",
              field);
}

static void lint_fn(void *user, const char *prefix, const cfg_node_t *g, size_t gi,
                    const cfg_node_t *rule, size_t ri)
{
    rule_ctx_t *x = user;
    const cfg_node_t *exprn = cfg_get_raw(rule, "expr");
    const char *expr = scalar(exprn);
    const char *alert = scalar(cfg_get_raw(rule, "alert"));
    const char *record = scalar(cfg_get_raw(rule, "record"));
    const char *gname = scalar(cfg_get_raw(g, "name"));
    if (x->tmpl) {
        /* Names a Helm action gives read as such, not as `_` runs. */
        if (gname && lint__tmpl_placeholder(gname, strlen(gname))) gname = "{{…}}";
        if (alert && lint__tmpl_placeholder(alert, strlen(alert))) alert = "{{…}}";
        if (record && lint__tmpl_placeholder(record, strlen(record))) record = "{{…}}";
    }
    char path[512];
    snprintf(path, sizeof path, "%s%s[%zu] \"%s\" rules[%zu] %s %s", prefix ? prefix : "groups",
             prefix && !strstr(prefix, "groups") ? " group" : "", gi, gname ? gname : "", ri,
             alert ? "alert" : "record",
             alert    ? alert
             : record ? record
                      : "?");
    if (!expr) {
        lint_note(x->r, "input", LINT_SEV_ERROR, x->file, rule ? rule->line : 0,
                  rule ? rule->col : 0, path, "rule without an expr");
        return;
    }
    lint_where_t w = lint__where(x->file, exprn->line, exprn->col, path);
    w.is_alert = alert != NULL;
    w.is_record = record != NULL;
    w.has_raw = true;
    w.raw_start = mark_offset(x->buf, x->len, x->lines, x->nlines, exprn->line, exprn->col);
    w.raw_end = mark_offset(x->buf, x->len, x->lines, x->nlines, exprn->end_line, exprn->end_col);
    const char *fr = scalar(cfg_get_raw(rule, "for"));
    if (fr) {
        int64_t ms = 0;
        if (im_duration_parse(fr, strlen(fr), &ms, NULL) == IM_OK) w.for_ms = ms;
        /* A templated for: its value is unknown; short-for must not guess. */
        if (x->tmpl && lint__tmpl_placeholder(fr, strlen(fr))) w.for_ms = INT64_MAX / 4;
    }
    if (x->tmpl && lint__tmpl_placeholder(expr, strlen(expr))) {
        x->nplace++;
        promql_expr_t *root = NULL;
        im_err_t err;
        im_err_clear(&err);
        if (promql_parse(expr, strlen(expr), &root, &err) != IM_OK) {
            lint_note(x->r, "template", LINT_SEV_INFO, x->file, w.line, w.col, path,
                      "expression not checked: a template action stands where PromQL needs "
                      "syntax (%s with the action replaced); lint the `helm template` output",
                      err.msg);
            return;
        }
        promql_expr_free(root);
    }
    lint_query(x->r, &w, expr, strlen(expr));
}

im_rc lint_rulefile(lint_run_t *r, lint_names_t *names, const char *file, const char *buf,
                    size_t len)
{
    if (names) lint_rulefile_records(names, buf, len);
    lint_tmpl_t t;
    const char *orig = buf;
    if (lint__tmpl_prepare(file, buf, len, false, &t)) buf = t.masked;
    rule_ctx_t x = {r, file, buf, len, NULL, 0, t.templated ? &t : NULL, 0};
    size_t cap = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == 0 || buf[i - 1] == '\n') {
            if (x.nlines == cap) {
                cap = cap ? cap * 2 : 256;
                x.lines = im_realloc(x.lines, cap * sizeof(*x.lines));
            }
            x.lines[x.nlines++] = i;
        }
    }
    char eb[300];
    int l = 0, c = 0;
    if (!walk_rules(buf, len, lint_fn, dash_cb, ext_cb, &x, eb, sizeof eb, &l, &c))
        lint_note(r, "input", LINT_SEV_ERROR, file, l, c, NULL, "%s%s", eb,
                  t.templated ? " — the file is a Helm template and cannot be read even with its "
                                "actions replaced: render it first (`helm template CHART > "
                                "out.yaml`) and lint the output"
                              : "");
    if (t.templated) lint__tmpl_note(r, file, orig, len, &t, x.nplace);
    im_free(x.lines);
    lint__tmpl_free(&t);
    return IM_OK;
}

/* ---- Text files: one query per line ---- */

size_t lint__subst_vars(const char *expr, size_t len, const void *vars, im_buf_t *out,
                        uint32_t (**ranges)[2], size_t *nranges);

im_rc lint_textfile(lint_run_t *r, const char *file, const char *buf, size_t len)
{
    size_t off = 0;
    int line = 0;
    while (off < len) {
        const char *nl = memchr(buf + off, '\n', len - off);
        size_t end = nl ? (size_t)(nl - buf) : len;
        line++;
        size_t s = off, e = end;
        while (s < e && (buf[s] == ' ' || buf[s] == '\t')) s++;
        while (e > s && (buf[e - 1] == ' ' || buf[e - 1] == '\t' || buf[e - 1] == '\r')) e--;
        if (e > s && buf[s] != '#' && !(e - s >= 2 && buf[s] == '/' && buf[s + 1] == '/')) {
            char path[32];
            snprintf(path, sizeof path, "line %d", line);
            lint_where_t w = lint__where(file, line, (int)(s - off) + 1, path);
            w.has_raw = true;
            w.raw_start = s;
            w.raw_end = e;
            im_buf_t sb;
            im_buf_init(&sb, 1u << 20);
            uint32_t(*rg)[2] = NULL;
            size_t nrg = 0;
            lint__subst_vars(buf + s, e - s, NULL, &sb, &rg, &nrg);
            if (nrg > 0) {
                char *orig = im_strndup(buf + s, e - s);
                w.orig_expr = orig;
                w.subst = (const uint32_t(*)[2])rg;
                w.nsubst = nrg;
                lint_query(r, &w, sb.data ? sb.data : "", sb.len);
                im_free(orig);
            } else {
                lint_query(r, &w, buf + s, e - s);
            }
            im_free(rg);
            im_buf_free(&sb);
        }
        off = end + 1;
    }
    return IM_OK;
}
