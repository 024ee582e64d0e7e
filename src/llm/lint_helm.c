/* lint_helm.c — Helm-templated inputs of `infermon lint`: a rule file or a
 * dashboard inside a chart (`templates/` next to a Chart.yaml) or with Helm
 * actions (`{{ .Values.x }}`, `{{- include … }}`, `{{ toYaml … | nindent 4 }}`).
 * Every `{{ … }}` action is replaced by neutral text of the same length (newlines
 * kept), so line:column positions and --fix offsets stay those of the file:
 * spaces when the action stands alone on its line (control flow, included
 * blocks), `_` runs inside a YAML value or a JSON string, `0` and spaces where
 * JSON needs a value. Prometheus' own alert templates (`{{ $labels.pod }}`,
 * `{{ $value | humanize }}`) do not make a plain rule file a template. */
#include "util/base.h"

#include <stdio.h>
#include <sys/stat.h>

#include "llm/lint_int.h"

/* An action's text between the delimiters, trimmed of `-` and blanks. */
static bool helm_words(const char *s, size_t n)
{
    while (n > 0 && (*s == '-' || *s == ' ' || *s == '\t' || *s == '\n')) {
        s++;
        n--;
    }
    static const char *const starts[] = {
        ".Values",  ".Release",  ".Chart",  ".Capabilities", ".Files", ".Template",
        "$.Values", "$.Release", "include", "toYaml",        "tpl ",   "template \"",
        "\"{{\"",   "\"}}\"",    "`{{",     "define ",       "/*",     "required"};
    for (size_t i = 0; i < IM_ARRAY_LEN(starts); i++) {
        size_t l = strlen(starts[i]);
        if (n >= l && memcmp(s, starts[i], l) == 0) return true;
    }
    static const char *const inside[] = {".Values.", ".Release.", ".Chart.",   "nindent",
                                         "toYaml",   "| indent",  "include \""};
    for (size_t i = 0; i < IM_ARRAY_LEN(inside); i++)
        if (n >= strlen(inside[i]) && memmem(s, n, inside[i], strlen(inside[i]))) return true;
    return false;
}

/* The end (just past "}}") of the action opening at i, skipping Go strings
 * ("…", `…`, '…'), or 0 when it does not close. */
static size_t action_end(const char *b, size_t len, size_t i)
{
    size_t j = i + 2;
    char q = 0;
    for (; j < len; j++) {
        char c = b[j];
        if (q) {
            if (c == '\\' && q != '`')
                j++;
            else if (c == q)
                q = 0;
            continue;
        }
        if (c == '"' || c == '`' || c == '\'')
            q = c;
        else if (c == '}' && j + 1 < len && b[j + 1] == '}')
            return j + 2;
    }
    return 0;
}

/* A chart: the file sits under a templates/ directory whose parent holds a
 * Chart.yaml. */
static bool chart_markers(const char *file)
{
    if (!file) return false;
    const char *t = NULL;
    for (const char *p = file; (p = strstr(p, "templates/")) != NULL; p++)
        if (p == file || p[-1] == '/') t = p;
    if (!t) return false;
    char path[4096];
    int n = snprintf(path, sizeof path, "%.*sChart.yaml", (int)(t - file), file);
    if (n <= 0 || (size_t)n >= sizeof path) return false;
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void add_act(lint_tmpl_t *t, size_t s, size_t e, size_t *cap)
{
    if (t->nacts == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        t->acts = im_realloc(t->acts, *cap * sizeof(*t->acts));
    }
    t->acts[t->nacts][0] = (uint32_t)s;
    t->acts[t->nacts][1] = (uint32_t)e;
    t->nacts++;
}

/* Whether the line around [s, e) holds nothing but actions and blanks. */
static bool alone_on_line(const char *b, size_t len, const lint_tmpl_t *t, size_t s, size_t e)
{
    size_t ls = s, le = e;
    while (ls > 0 && b[ls - 1] != '\n') ls--;
    while (le < len && b[le] != '\n') le++;
    size_t k = 0;
    for (size_t i = ls; i < le;) {
        while (k < t->nacts && t->acts[k][1] <= i) k++;
        if (k < t->nacts && t->acts[k][0] <= i) {
            i = t->acts[k][1];
            continue;
        }
        if (b[i] != ' ' && b[i] != '\t' && b[i] != '\r') return false;
        i++;
    }
    return true;
}

bool lint__tmpl_prepare(const char *file, const char *buf, size_t len, bool json, lint_tmpl_t *t)
{
    memset(t, 0, sizeof(*t));
    if (len >= UINT32_MAX || !memmem(buf, len, "{{", 2)) {
        t->chart = chart_markers(file);
        return false;
    }
    size_t cap = 0;
    for (size_t i = 0; i + 1 < len; i++) {
        if (buf[i] != '{' || buf[i + 1] != '{') continue;
        size_t e = action_end(buf, len, i);
        if (!e) {
            t->unclosed++;
            break;
        }
        if (helm_words(buf + i + 2, e - i - 4)) t->nhelm++;
        add_act(t, i, e, &cap);
        i = e - 1;
    }
    t->chart = chart_markers(file);
    t->templated = t->nacts > 0 && (t->chart || t->nhelm > 0);
    if (!t->templated) {
        im_free(t->acts);
        t->acts = NULL;
        t->nacts = 0;
        return false;
    }
    t->masked = im_malloc(len + 1);
    memcpy(t->masked, buf, len);
    t->masked[len] = '\0';
    /* JSON: whether each action sits inside a string (the text outside the
     * actions decides). */
    bool in_str = false;
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        if (k < t->nacts && t->acts[k][0] == i) {
            size_t s = t->acts[k][0], e = t->acts[k][1];
            bool alone = alone_on_line(buf, len, t, s, e);
            char fill = alone ? ' ' : (json && !in_str) ? ' ' : '_';
            for (size_t j = s; j < e; j++)
                if (buf[j] != '\n') t->masked[j] = fill;
            if (json && !in_str && !alone) t->masked[s] = '0';
            /* A range's duration (`[{{ .Values.window }}]`): a plausible one. */
            size_t pb = s, na = e;
            while (pb > 0 && buf[pb - 1] == ' ') pb--;
            while (na < len && buf[na] == ' ') na++;
            if (!alone && pb > 0 && (buf[pb - 1] == '[' || buf[pb - 1] == ':') && na < len &&
                (buf[na] == ']' || buf[na] == ':')) {
                t->masked[s] = '5';
                t->masked[s + 1] = 'm';
                for (size_t j = s + 2; j < e; j++)
                    if (buf[j] != '\n') t->masked[j] = ' ';
            }
            if (alone) t->nalone++;
            k++;
            i = e;
            continue;
        }
        if (json) {
            if (in_str && buf[i] == '\\')
                i++;
            else if (buf[i] == '"')
                in_str = !in_str;
        }
        i++;
    }
    return true;
}

bool lint__tmpl_overlaps(const lint_tmpl_t *t, size_t s, size_t e)
{
    for (size_t i = 0; i < t->nacts; i++)
        if (t->acts[i][0] < e && t->acts[i][1] > s) return true;
    return false;
}

bool lint__tmpl_placeholder(const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        run = s[i] == '_' ? run + 1 : 0;
        if (run >= 5) return true;
    }
    return false;
}

static int line_of(const char *b, size_t off)
{
    int l = 1;
    for (size_t i = 0; i < off; i++)
        if (b[i] == '\n') l++;
    return l;
}

void lint__tmpl_note(lint_run_t *r, const char *file, const char *buf, size_t len,
                     const lint_tmpl_t *t, size_t nexprs)
{
    (void)len;
    im_buf_t lines;
    im_buf_init(&lines, 0);
    int last = 0, shown = 0;
    size_t nincl = 0;
    for (size_t i = 0; i < t->nacts; i++) {
        const char *a = buf + t->acts[i][0];
        size_t al = t->acts[i][1] - t->acts[i][0];
        if (memmem(a, al, "toYaml", 6) || memmem(a, al, "include", 7) ||
            memmem(a, al, ".Files", 6) || memmem(a, al, "tpl", 3))
            nincl++;
        int l = line_of(buf, t->acts[i][0]);
        if (l == last) continue;
        last = l;
        if (shown < 12) (void)im_buf_printf(&lines, "%s%d", shown ? ", " : "", l);
        shown++;
    }
    if (shown > 12) (void)im_buf_printf(&lines, ", … (%d lines)", shown);
    lint_note(
        r, "template", LINT_SEV_INFO, file, line_of(buf, t->nacts ? t->acts[0][0] : 0), 1, NULL,
        "a Helm template (%s): %zu template action%s (line%s %s) replaced by placeholders "
        "and the rest linted; not checked: the values they stand for (%zu expression%s "
        "hold%s one), content they include (%zu toYaml/include/.Files action%s), and which "
        "if/range branches helm renders (every branch is linted as written). Lint the "
        "output of `helm template` to check the rendered file",
        t->chart ? "under templates/ next to a Chart.yaml" : "{{ … }} actions of Helm", t->nacts,
        t->nacts == 1 ? "" : "s", shown == 1 ? "" : "s", lines.data ? lines.data : "", nexprs,
        nexprs == 1 ? "" : "s", nexprs == 1 ? "s" : "", nincl, nincl == 1 ? "" : "s");
    im_buf_free(&lines);
}

void lint__tmpl_free(lint_tmpl_t *t)
{
    im_free(t->masked);
    im_free(t->acts);
    memset(t, 0, sizeof(*t));
}
