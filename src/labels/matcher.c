/* matcher.c — label matchers (=, !=, =~, !~) with fully anchored regexes (labels/regex.h).
 *
 * Fast paths avoid the regex engine for the common shapes: ".*" (anything),
 * ".+" (non-empty), a literal without metacharacters (equality), "lit.*"
 * (prefix) and "a|b|c" of literals (set membership, also exposed to the index).
 * A match that exceeds the regex budget (regex.h) counts in the matcher's error
 * counter, which the caller checks after matching (im_matcher_errors). */
#include "util/base.h"

#include <stdatomic.h>
#include <stdio.h>

#include "labels/labels.h"
#include "labels/regex.h"

typedef enum re_kind {
    RE_GENERAL,
    RE_ANY,      /* .* */
    RE_NONEMPTY, /* .+ */
    RE_LITERAL,  /* no metacharacters */
    RE_PREFIX,   /* literal followed by .* */
    RE_SET,      /* lit|lit|lit */
} re_kind_t;

struct im_matcher {
    im_match_type_t type;
    const im_istr_t *name; /* interned, owned reference */
    char *value;           /* owned, NUL-terminated */
    size_t vlen;
    re_kind_t kind;
    char *lit; /* owned literal for RE_LITERAL / RE_PREFIX */
    size_t litlen;
    char **set; /* owned literals for RE_SET */
    size_t nset;
    im_regex_t *re; /* owned, IM_REGEX_FULL (or FULL_DOTALL) */
    bool dotall;    /* IM_MATCHER_DOTALL: `.` matches \n in the fast paths too */
    bool matches_empty;
    _Atomic uint64_t errors; /* matches that hit the regex limit */
};

static bool is_meta(char c)
{
    return strchr("\\^$.|?*+()[]{}", c) != NULL;
}

static bool all_literal(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (is_meta(s[i])) return false;
    return true;
}

static void classify(im_matcher_t *m)
{
    const char *v = m->value;
    size_t n = m->vlen;
    if (n == 2 && v[0] == '.' && v[1] == '*') {
        m->kind = RE_ANY;
        return;
    }
    if (n == 2 && v[0] == '.' && v[1] == '+') {
        m->kind = RE_NONEMPTY;
        return;
    }
    if (all_literal(v, n)) {
        m->kind = RE_LITERAL;
        m->lit = im_strndup(v, n);
        m->litlen = n;
        return;
    }
    if (n > 2 && v[n - 2] == '.' && v[n - 1] == '*' && all_literal(v, n - 2)) {
        m->kind = RE_PREFIX;
        m->lit = im_strndup(v, n - 2);
        m->litlen = n - 2;
        return;
    }
    /* a|b|c of literals (each non-empty; no nested groups). */
    size_t count = 1;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '|')
            count++;
        else if (is_meta(v[i]))
            return;
    }
    if (count < 2) return;
    m->set = im_calloc(count + 1, sizeof(char *));
    size_t start = 0, k = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || v[i] == '|') {
            m->set[k++] = im_strndup(v + start, i - start);
            start = i + 1;
        }
    }
    m->nset = k;
    m->kind = RE_SET;
}

im_rc im_matcher_new(im_match_type_t type, const char *name, size_t nlen, const char *value,
                     size_t vlen, im_matcher_t **out, im_err_t *err)
{
    return im_matcher_new_flags(type, name, nlen, value, vlen, 0, out, err);
}

im_rc im_matcher_new_flags(im_match_type_t type, const char *name, size_t nlen, const char *value,
                           size_t vlen, unsigned flags, im_matcher_t **out, im_err_t *err)
{
    im_matcher_t *m = im_calloc(1, sizeof *m);
    m->type = type;
    m->name = im_intern(name, nlen);
    m->value = im_strndup(value, vlen);
    m->vlen = vlen;
    if (type == IM_MATCH_RE || type == IM_MATCH_NRE) {
        /* Always compile, so syntax errors are reported even on fast paths. */
        im_err_t e;
        im_err_clear(&e);
        m->dotall = (flags & IM_MATCHER_DOTALL) != 0;
        im_regex_mode_t mode = m->dotall ? IM_REGEX_FULL_DOTALL : IM_REGEX_FULL;
        if (im_regex_compile(value, vlen, mode, &m->re, &e) != IM_OK) {
            im_err_set(err, IM_EPARSE, "invalid regular expression \"%.*s\": %s", (int)vlen, value,
                       e.msg);
            im_matcher_free(m);
            return IM_EPARSE;
        }
        classify(m);
    }
    m->matches_empty = false;
    m->matches_empty = im_matcher_matches(m, "", 0);
    *out = m;
    return IM_OK;
}

void im_matcher_free(im_matcher_t *m)
{
    if (!m) return;
    im_istr_unref(m->name);
    im_free(m->value);
    im_free(m->lit);
    for (size_t i = 0; i < m->nset; i++) im_free(m->set[i]);
    im_free(m->set);
    im_regex_free(m->re);
    im_free(m);
}

im_match_type_t im_matcher_type(const im_matcher_t *m)
{
    return m->type;
}

const im_istr_t *im_matcher_name(const im_matcher_t *m)
{
    return m->name;
}

const char *im_matcher_value(const im_matcher_t *m, size_t *len)
{
    if (len) *len = m->vlen;
    return m->value;
}

const char *const *im_matcher_set_values(const im_matcher_t *m, size_t *n)
{
    if (m->kind == RE_SET) {
        *n = m->nset;
        return (const char *const *)m->set;
    }
    if (m->kind == RE_LITERAL && (m->type == IM_MATCH_RE || m->type == IM_MATCH_NRE)) {
        *n = 1;
        return (const char *const *)&m->lit;
    }
    *n = 0;
    return NULL;
}

static bool re_match(const im_matcher_t *m, const char *v, size_t len)
{
    switch (m->kind) {
    case RE_ANY:
        /* '.' does not match '\n' in RE2 without (?s) (IM_MATCHER_DOTALL: it does) */
        return m->dotall || memchr(v, '\n', len) == NULL;
    case RE_NONEMPTY: return len > 0 && (m->dotall || memchr(v, '\n', len) == NULL);
    case RE_LITERAL: return len == m->litlen && memcmp(v, m->lit, len) == 0;
    case RE_PREFIX:
        return len >= m->litlen && memcmp(v, m->lit, m->litlen) == 0 &&
               (m->dotall || memchr(v + m->litlen, '\n', len - m->litlen) == NULL);
    case RE_SET:
        for (size_t i = 0; i < m->nset; i++)
            if (strlen(m->set[i]) == len && memcmp(m->set[i], v, len) == 0) return true;
        return false;
    case RE_GENERAL: break;
    }
    int rc = im_regex_match(m->re, v, len, NULL);
    if (rc < 0) {
        atomic_fetch_add_explicit(&((im_matcher_t *)m)->errors, 1, memory_order_relaxed);
        return m->type == IM_MATCH_NRE; /* selects nothing; the caller fails on the count */
    }
    return rc == 1;
}

uint64_t im_matcher_errors(const im_matcher_t *m)
{
    return atomic_load_explicit(&((im_matcher_t *)m)->errors, memory_order_relaxed);
}

bool im_matcher_matches(const im_matcher_t *m, const char *v, size_t len)
{
    switch (m->type) {
    case IM_MATCH_EQ: return len == m->vlen && memcmp(v, m->value, len) == 0;
    case IM_MATCH_NEQ: return !(len == m->vlen && memcmp(v, m->value, len) == 0);
    case IM_MATCH_RE: return re_match(m, v, len);
    case IM_MATCH_NRE: return !re_match(m, v, len);
    }
    return false;
}

bool im_matcher_matches_empty(const im_matcher_t *m)
{
    return m->matches_empty;
}

bool im_labels_match_all(const im_labels_t *ls, im_matcher_t *const *ms, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const im_istr_t *v = im_labels_get_istr(ls, ms[i]->name);
        if (v) {
            if (!im_matcher_matches(ms[i], v->s, v->len)) return false;
        } else if (!ms[i]->matches_empty) {
            return false;
        }
    }
    return true;
}

const char *im_match_type_str(im_match_type_t t)
{
    switch (t) {
    case IM_MATCH_EQ: return "=";
    case IM_MATCH_NEQ: return "!=";
    case IM_MATCH_RE: return "=~";
    case IM_MATCH_NRE: return "!~";
    }
    return "?";
}

im_rc im_matcher_format(const im_matcher_t *m, im_buf_t *out)
{
    im_rc rc = im_buf_append(out, m->name->s, m->name->len);
    if (rc == IM_OK) rc = im_buf_puts(out, im_match_type_str(m->type));
    if (rc == IM_OK) rc = im_quote_string(out, m->value, m->vlen);
    return rc;
}
