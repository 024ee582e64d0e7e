/* lint_report.c — output of `infermon lint`: a human text report, the stable
 * JSON document (schema "infermon-lint/v1", see docs/lint.md) and GitHub Actions
 * workflow annotations; and --fix: the mechanical edits applied to the input's
 * text at the expressions' positions, with a line diff. */
#include "util/base.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "llm/lint_int.h"

static const char *kind_name(lint_source_kind_t k)
{
    switch (k) {
    case LINT_SOURCE_EXPOSITION: return "exposition";
    case LINT_SOURCE_PROMETHEUS: return "prometheus";
    default: return "catalog";
    }
}

static void location(const lint_finding_t *f, im_buf_t *out)
{
    (void)im_buf_puts(out, f->file ? f->file : "-");
    if (f->line > 0) {
        (void)im_buf_printf(out, ":%d", f->line);
        if (f->col > 0) (void)im_buf_printf(out, ":%d", f->col);
    }
    if (f->path && strncmp(f->path, "line ", 5) != 0) (void)im_buf_printf(out, ": %s", f->path);
}

static im_rc report_text(const lint_run_t *r, const lint_names_t *names, im_buf_t *out)
{
    const lint_finding_t *fs;
    size_t n = lint_run_findings(r, &fs);
    if (lint_names_kind(names) == LINT_SOURCE_CATALOG) {
        char vb[40];
        llm_version_t v = names->catalog_version;
        llm_version_format(&v, vb, sizeof vb);
        (void)im_buf_printf(out,
                            "note: no --target or --prometheus given: names checked against the "
                            "catalog for vLLM %s, "
                            "dcgm-exporter, Kueue and common join exporters\n",
                            vb);
    }
    for (size_t i = 0; i < n; i++) {
        const lint_finding_t *f = &fs[i];
        location(f, out);
        (void)im_buf_printf(out, ": %s[%s]: %s\n", lint_severity_name(f->severity), f->check,
                            f->message);
        if (f->expr) {
            /* The expression on one line, with a caret under the range. */
            (void)im_buf_puts(out, "    ");
            size_t el = strlen(f->expr);
            for (size_t k = 0; k < el; k++)
                (void)im_buf_putc(out, f->expr[k] == '\n' || f->expr[k] == '\t' ? ' ' : f->expr[k]);
            (void)im_buf_puts(out, "\n    ");
            size_t s = f->expr_start <= el ? f->expr_start : el,
                   e = f->expr_end <= el ? f->expr_end : el;
            for (size_t k = 0; k < s; k++) {
                unsigned char c = (unsigned char)f->expr[k];
                if ((c & 0xC0) != 0x80) (void)im_buf_putc(out, ' ');
            }
            if (e <= s) e = s + 1;
            for (size_t k = s; k < e; k++) {
                unsigned char c = k < el ? (unsigned char)f->expr[k] : ' ';
                if ((c & 0xC0) != 0x80) (void)im_buf_putc(out, '^');
            }
            (void)im_buf_putc(out, '\n');
        }
        if (f->fix) (void)im_buf_printf(out, "    fix: %s\n", f->fix);
    }
    (void)im_buf_printf(
        out, "%zu error%s, %zu warning%s, %zu info in %zu quer%s\n",
        lint_run_count(r, LINT_SEV_ERROR), lint_run_count(r, LINT_SEV_ERROR) == 1 ? "" : "s",
        lint_run_count(r, LINT_SEV_WARNING), lint_run_count(r, LINT_SEV_WARNING) == 1 ? "" : "s",
        lint_run_count(r, LINT_SEV_INFO), lint_run_queries(r),
        lint_run_queries(r) == 1 ? "y" : "ies");
    return out->max && out->len >= out->max ? IM_ELIMIT : IM_OK;
}

static json_t *jstr(const char *s)
{
    return s ? json_string(s) : json_null();
}

static im_rc report_json(const lint_run_t *r, const lint_names_t *names, im_buf_t *out)
{
    json_t *root = json_object();
    json_object_set_new(root, "schema", json_string("infermon-lint/v1"));
    json_t *src = json_object();
    json_object_set_new(src, "kind", json_string(kind_name(lint_names_kind(names))));
    const char *const *sn;
    size_t ns = lint_names_sources(names, &sn);
    json_t *arr = json_array();
    for (size_t i = 0; i < ns; i++) json_array_append_new(arr, json_string(sn[i]));
    json_object_set_new(src, "names", arr);
    llm_version_t v = lint_names_vllm_version(names);
    char vb[40];
    if (v.known) llm_version_format(&v, vb, sizeof vb);
    json_object_set_new(src, "vllm_version", v.known ? json_string(vb) : json_null());
    json_object_set_new(root, "sources", src);
    json_object_set_new(root, "queries", json_integer((json_int_t)lint_run_queries(r)));
    const lint_finding_t *fs;
    size_t n = lint_run_findings(r, &fs);
    json_t *fa = json_array();
    for (size_t i = 0; i < n; i++) {
        const lint_finding_t *f = &fs[i];
        json_t *o = json_object();
        json_object_set_new(o, "check", json_string(f->check));
        json_object_set_new(o, "severity", json_string(lint_severity_name(f->severity)));
        json_object_set_new(o, "file", jstr(f->file));
        json_object_set_new(o, "line", f->line > 0 ? json_integer(f->line) : json_null());
        json_object_set_new(o, "column", f->col > 0 ? json_integer(f->col) : json_null());
        json_object_set_new(o, "location", jstr(f->path));
        json_object_set_new(o, "expr", jstr(f->expr));
        json_object_set_new(o, "start", f->expr ? json_integer(f->expr_start) : json_null());
        json_object_set_new(o, "end", f->expr ? json_integer(f->expr_end) : json_null());
        json_object_set_new(o, "message", json_string(f->message ? f->message : ""));
        json_object_set_new(o, "fix", jstr(f->fix));
        json_object_set_new(o, "fixed_expr", jstr(f->fixed_expr));
        json_array_append_new(fa, o);
    }
    json_object_set_new(root, "findings", fa);
    json_t *sum = json_object();
    json_object_set_new(sum, "error", json_integer((json_int_t)lint_run_count(r, LINT_SEV_ERROR)));
    json_object_set_new(sum, "warning",
                        json_integer((json_int_t)lint_run_count(r, LINT_SEV_WARNING)));
    json_object_set_new(sum, "info", json_integer((json_int_t)lint_run_count(r, LINT_SEV_INFO)));
    json_object_set_new(root, "summary", sum);
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    json_decref(root);
    if (!s) return IM_ERR;
    im_rc rc = im_buf_puts(out, s);
    if (rc == IM_OK) rc = im_buf_putc(out, '\n');
    free(s); /* checksrc: allow (jansson's allocation) */
    return rc;
}

static void gh_escape(im_buf_t *out, const char *s, bool property)
{
    for (; s && *s; s++) {
        if (*s == '%')
            (void)im_buf_puts(out, "%25");
        else if (*s == '\r')
            (void)im_buf_puts(out, "%0D");
        else if (*s == '\n')
            (void)im_buf_puts(out, "%0A");
        else if (property && *s == ':')
            (void)im_buf_puts(out, "%3A");
        else if (property && *s == ',')
            (void)im_buf_puts(out, "%2C");
        else
            (void)im_buf_putc(out, *s);
    }
}

static im_rc report_github(const lint_run_t *r, im_buf_t *out)
{
    const lint_finding_t *fs;
    size_t n = lint_run_findings(r, &fs);
    for (size_t i = 0; i < n; i++) {
        const lint_finding_t *f = &fs[i];
        const char *lvl = f->severity == LINT_SEV_ERROR     ? "error"
                          : f->severity == LINT_SEV_WARNING ? "warning"
                                                            : "notice";
        (void)im_buf_printf(out, "::%s file=", lvl);
        gh_escape(out, f->file ? f->file : "", true);
        if (f->line > 0) (void)im_buf_printf(out, ",line=%d", f->line);
        if (f->col > 0) (void)im_buf_printf(out, ",col=%d", f->col);
        (void)im_buf_puts(out, ",title=");
        char title[128];
        snprintf(title, sizeof title, "infermon lint %s", f->check);
        gh_escape(out, title, true);
        (void)im_buf_puts(out, "::");
        if (f->path) {
            gh_escape(out, f->path, false);
            (void)im_buf_puts(out, ": ");
        }
        gh_escape(out, f->message, false);
        if (f->fix) {
            (void)im_buf_puts(out, " (fix: ");
            gh_escape(out, f->fix, false);
            (void)im_buf_putc(out, ')');
        }
        (void)im_buf_putc(out, '\n');
    }
    return IM_OK;
}

im_rc lint_report(const lint_run_t *r, const lint_names_t *names, lint_output_t fmt, im_buf_t *out)
{
    switch (fmt) {
    case LINT_OUT_JSON: return report_json(r, names, out);
    case LINT_OUT_GITHUB: return report_github(r, out);
    default: return report_text(r, names, out);
    }
}

/* ---- --fix ---- */

static bool ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == ':';
}

/* Offset of the k-th (0-based) identifier-bounded occurrence of w in [s, s+n), or -1. */
static long nth_occurrence(const char *s, size_t n, const char *w, size_t wl, size_t k)
{
    if (wl == 0) return -1;
    for (size_t i = 0; i + wl <= n; i++) {
        if (memcmp(s + i, w, wl) != 0) continue;
        if (i > 0 && ident_char(s[i - 1])) continue;
        if (i + wl < n && ident_char(s[i + wl])) continue;
        if (k == 0) return (long)i;
        k--;
    }
    return -1;
}

static size_t count_before(const char *s, size_t pos, const char *w, size_t wl)
{
    size_t c = 0;
    for (size_t k = 0;; k++) {
        long o = nth_occurrence(s, pos + wl <= strlen(s) ? pos + wl : strlen(s), w, wl, k);
        if (o < 0 || (size_t)o >= pos) break;
        c++;
    }
    return c;
}

typedef struct edit {
    size_t at, len;
    const char *text;
} edit_t;

static int edit_cmp(const void *a, const void *b)
{
    const edit_t *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at ? 1 : 0;
}

static void add_edit(edit_t **e, size_t *n, size_t *cap, size_t at, size_t len, const char *text)
{
    for (size_t i = 0; i < *n; i++)
        if ((*e)[i].at == at) return;
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *e = im_realloc(*e, *cap * sizeof(**e));
    }
    (*e)[(*n)++] = (edit_t){at, len, text};
}

im_rc lint_fix_apply(const lint_run_t *r, const char *file, lint_input_kind_t kind, const char *buf,
                     size_t len, im_buf_t *out, size_t *nfixed)
{
    const lint_finding_t *fs;
    size_t n = lint_run_findings(r, &fs);
    edit_t *ed = NULL;
    size_t ne = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        const lint_finding_t *f = &fs[i];
        if (!f->edit_text || !f->file || strcmp(f->file, file) != 0 || !f->expr) continue;
        const char *old = f->expr + f->edit_start;
        size_t ol = f->edit_end - f->edit_start;
        char *oldw = im_strndup(old, ol);
        size_t k = count_before(f->expr, f->edit_start, oldw, ol);
        if (f->has_raw && kind != LINT_INPUT_DASHBOARD) {
            size_t rs = f->raw_start, re = f->raw_end <= len ? f->raw_end : len;
            if (rs < re) {
                long o = nth_occurrence(buf + rs, re - rs, oldw, ol, k);
                if (o >= 0) add_edit(&ed, &ne, &cap, rs + (size_t)o, ol, f->edit_text);
            }
        } else {
            /* JSON: find the expression's encoded string wherever it occurs, as
             * JavaScript writes it (Grafana's UI export) and as Go does (the HTTP
             * API: <, > and & as \u003c, \u003e, \u0026). */
            const char *target = f->orig_expr ? f->orig_expr : f->expr;
            json_t *js = json_string(target);
            char *es = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
            json_decref(js);
            if (es) {
                im_buf_t go;
                im_buf_init(&go, 0);
                for (const char *c = es; *c; c++) {
                    if (*c == '<')
                        (void)im_buf_puts(&go, "\\u003c");
                    else if (*c == '>')
                        (void)im_buf_puts(&go, "\\u003e");
                    else if (*c == '&')
                        (void)im_buf_puts(&go, "\\u0026");
                    else
                        (void)im_buf_putc(&go, *c);
                }
                const char *forms[2] = {es, go.data};
                for (int fi = 0; fi < 2; fi++) {
                    if (!forms[fi] || (fi == 1 && strcmp(forms[0], forms[1]) == 0)) continue;
                    size_t el = strlen(forms[fi]);
                    const char *p = buf;
                    while ((p = memmem(p, len - (size_t)(p - buf), forms[fi], el)) != NULL) {
                        long o = nth_occurrence(p, el, oldw, ol, k);
                        if (o >= 0)
                            add_edit(&ed, &ne, &cap, (size_t)(p - buf) + (size_t)o, ol,
                                     f->edit_text);
                        p += el;
                    }
                }
                im_buf_free(&go);
                free(es); /* checksrc: allow (jansson's allocation) */
            }
        }
        im_free(oldw);
    }
    if (ne > 1) qsort(ed, ne, sizeof(*ed), edit_cmp);
    size_t pos = 0, applied = 0;
    im_rc rc = IM_OK;
    for (size_t i = 0; i < ne && rc == IM_OK; i++) {
        if (ed[i].at < pos) continue; /* overlapping */
        rc = im_buf_append(out, buf + pos, ed[i].at - pos);
        if (rc == IM_OK) rc = im_buf_puts(out, ed[i].text);
        pos = ed[i].at + ed[i].len;
        applied++;
    }
    if (rc == IM_OK) rc = im_buf_append(out, buf + pos, len - pos);
    im_free(ed);
    if (nfixed) *nfixed = applied;
    return rc;
}

im_rc lint_diff(const char *file, const char *a, size_t alen, const char *b, size_t blen,
                im_buf_t *out)
{
    bool header = false;
    size_t ia = 0, ib = 0;
    int line = 1;
    while (ia < alen || ib < blen) {
        const char *na = memchr(a + ia, '\n', alen - ia);
        const char *nb = memchr(b + ib, '\n', blen - ib);
        size_t ea = na ? (size_t)(na - a) : alen, eb = nb ? (size_t)(nb - b) : blen;
        if (ea - ia != eb - ib || memcmp(a + ia, b + ib, ea - ia) != 0) {
            if (!header) {
                (void)im_buf_printf(out, "--- a/%s\n+++ b/%s\n", file, file);
                header = true;
            }
            (void)im_buf_printf(out, "@@ -%d +%d @@\n-%.*s\n+%.*s\n", line, line, (int)(ea - ia),
                                a + ia, (int)(eb - ib), b + ib);
        }
        ia = na ? ea + 1 : alen;
        ib = nb ? eb + 1 : blen;
        line++;
    }
    return IM_OK;
}
