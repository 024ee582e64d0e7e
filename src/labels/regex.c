/* regex.c — Go's RE2 syntax and semantics on PCRE2 with a bounded cost per match.
 *
 * The contract, the choice of engine and the cost argument are in regex.h. This file
 * has four parts: Go's syntax check (which constructs Go rejects, with its texts),
 * the rewrite of the escapes whose meaning differs, compilation (a backtracking code,
 * JIT-compiled, and a code for pcre2_dfa_match), and matching with the fallback. */
#include "util/base.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "labels/regex.h"

/* Workspace of pcre2_dfa_match in ints (3 per live state, two state lists): caps the
 * DFA's cost per subject byte. 4096 keeps a 10k-byte pass under ~60 ms for the worst
 * patterns measured ((x+x+)+y); a pattern needing more live states gets IM_ELIMIT. */
#define DFA_WORKSPACE 4096

struct im_regex {
    pcre2_code *bt;  /* backtracking code, JIT-compiled when the platform allows (owned) */
    pcre2_code *dfa; /* the same language for pcre2_dfa_match, anchored (owned) */
    im_regex_mode_t mode;
    uint32_t ngroups; /* capture groups, not counting group 0 */
    char *pat;        /* owned copy of the pattern as written, NUL-terminated */
    size_t plen;
};

static struct {
    pthread_once_t once;
    im_regex_limits_t lim;
    pcre2_match_context *mctx; /* read-only while matching */
    pcre2_compile_context *cctx;
} g = {PTHREAD_ONCE_INIT, {0, 0}, NULL, NULL};

static void limits_apply(void)
{
    pcre2_set_match_limit(g.mctx, g.lim.match_limit);
    pcre2_set_depth_limit(g.mctx, g.lim.match_limit);
    pcre2_set_heap_limit(g.mctx, g.lim.heap_limit_kib);
}

static void g_init(void)
{
    g.mctx = pcre2_match_context_create(NULL);
    g.cctx = pcre2_compile_context_create(NULL);
    if (!g.mctx || !g.cctx) im_oom(sizeof(void *));
    pcre2_set_newline(g.cctx, PCRE2_NEWLINE_LF);
    pcre2_set_parens_nest_limit(g.cctx, 1000); /* Go's maximum nesting depth */
    if (!g.lim.match_limit) g.lim.match_limit = IM_REGEX_DEFAULT_MATCH_LIMIT;
    if (!g.lim.heap_limit_kib) g.lim.heap_limit_kib = IM_REGEX_DEFAULT_HEAP_LIMIT_KIB;
    limits_apply();
}

void im_regex_set_limits(const im_regex_limits_t *l)
{
    pthread_once(&g.once, g_init);
    g.lim.match_limit = l->match_limit ? l->match_limit : IM_REGEX_DEFAULT_MATCH_LIMIT;
    g.lim.heap_limit_kib = l->heap_limit_kib ? l->heap_limit_kib : IM_REGEX_DEFAULT_HEAP_LIMIT_KIB;
    limits_apply();
}

im_regex_limits_t im_regex_get_limits(void)
{
    pthread_once(&g.once, g_init);
    return g.lim;
}

/* One UTF-8 rune (U+FFFD and width 1 for a bad byte). */
static int32_t decode_rune(const char *str, size_t n, size_t *width)
{
    const unsigned char *s = (const unsigned char *)str;
    *width = n ? 1 : 0;
    if (n == 0) return -1;
    unsigned c = s[0];
    if (c < 0x80) return (int32_t)c;
    if (c < 0xC2 || c > 0xF4) return 0xFFFD;
    size_t need = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (n < need) return 0xFFFD;
    for (size_t i = 1; i < need; i++)
        if ((s[i] & 0xC0) != 0x80) return 0xFFFD;
    if (need == 2) {
        *width = 2;
        return (int32_t)(((c & 0x1F) << 6) | (s[1] & 0x3F));
    }
    if (need == 3) {
        if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F)) return 0xFFFD;
        *width = 3;
        return (int32_t)(((c & 0x0F) << 12) | ((s[1] & 0x3F) << 6) | (s[2] & 0x3F));
    }
    if ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F)) return 0xFFFD;
    *width = 4;
    return (int32_t)(((c & 0x07) << 18) | ((s[1] & 0x3F) << 12) | ((s[2] & 0x3F) << 6) |
                     (s[3] & 0x3F));
}

/* ---- Go's syntax check (moved here from promql/parser.c) ----
 *
 * Prometheus compiles matchers with Go's regexp (RE2 syntax). PCRE2 accepts a
 * superset; this scanner rejects the PCRE2-only constructs with Go's error
 * texts (lookaround, atomic groups, comments, recursion and callouts,
 * backreferences and PCRE-only escapes, possessive and nested quantifiers,
 * repeat counts over 1000) and finds the spots Go names in its messages. */

typedef struct re_scan {
    size_t unclosed_class; /* index of an unterminated '[', or SIZE_MAX */
    bool raw_unexpected;   /* `b)x(`: fine inside ^(?:...)$, but Go also parses the raw text */
} re_scan_t;

static bool re_is_quant_start(const char *re, size_t len, size_t i, size_t *qlen)
{
    char c = re[i];
    if (c == '*' || c == '+' || c == '?') {
        *qlen = 1;
        return true;
    }
    if (c != '{') return false;
    size_t j = i + 1;
    size_t d0 = j;
    while (j < len && re[j] >= '0' && re[j] <= '9') j++;
    if (j == d0) return false;
    if (j < len && re[j] == ',') {
        j++;
        while (j < len && re[j] >= '0' && re[j] <= '9') j++;
    }
    if (j >= len || re[j] != '}') return false;
    *qlen = j - i + 1;
    return true;
}

/* Value of a simple escape (after the backslash): \a \f \n \r \t \v, \xHH,
 * escaped punctuation; -1 for class escapes and others. *w = its width. */
static int32_t simple_escape_value(const char *s, size_t n, size_t *w)
{
    *w = 1;
    switch (s[0]) {
    case 'a': return 7;
    case 'f': return 12;
    case 'n': return 10;
    case 'r': return 13;
    case 't': return 9;
    case 'v': return 11;
    case 'x':
        if (n >= 3 && isxdigit((unsigned char)s[1]) && isxdigit((unsigned char)s[2])) {
            *w = 3;
            return (int32_t)strtol((char[]){s[1], s[2], 0}, NULL, 16);
        }
        return -1;
    default: break;
    }
    unsigned char c = (unsigned char)s[0];
    if (c < 0x80 && !isalnum(c)) return c;
    return -1;
}

/* Is the escape at re[i] == '\\' one that Go's regexp accepts? Sets *w to the
 * width of the escaped character (for the error text). */
static bool go_escape_ok(const char *re, size_t len, size_t i, bool in_class, size_t *w)
{
    unsigned char e = (unsigned char)re[i + 1];
    *w = 1;
    if (e >= 0x80) {
        decode_rune(re + i + 1, len - i - 1, w);
        return false;
    }
    bool alnum = (e >= '0' && e <= '9') || (e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z');
    if (!alnum) return true; /* escaped punctuation is a literal */
    if (e >= '1' && e <= '7') return i + 2 < len && re[i + 2] >= '0' && re[i + 2] <= '7';
    if (strchr("0dDsSwWpPxafnrtv", (int)e)) return true;
    if (!in_class && strchr("AbBzQ", (int)e)) return true;
    return false;
}

static bool re2_check(const char *re, size_t len, size_t raw_end, char *why, size_t cap,
                      re_scan_t *sc)
{
    bool in_class = false;
    bool can_repeat = false; /* is there an item before a quantifier? */
    size_t class_start = 0;
    long depth = 0;
    sc->unclosed_class = SIZE_MAX;
    sc->raw_unexpected = false;
    for (size_t i = 0; i < len; i++) {
        char c = re[i];
        if (in_class) {
            if (c == '\\') {
                size_t w;
                if (i + 1 < len && !go_escape_ok(re, len, i, true, &w)) {
                    snprintf(why, cap, "invalid escape sequence: `\\%.*s`", (int)w, re + i + 1);
                    return false;
                }
                i++;
                continue;
            }
            if (c == '[' && i + 1 < len && re[i + 1] == ':') {
                size_t j = i + 2;
                while (j + 1 < len && !(re[j] == ':' && re[j + 1] == ']')) j++;
                if (j + 1 < len) {
                    static const char *const names[] = {"alnum", "alpha", "ascii", "blank", "cntrl",
                                                        "digit", "graph", "lower", "print", "punct",
                                                        "space", "upper", "word",  "xdigit"};
                    size_t nl = j - (i + 2);
                    const char *nm = re + i + 2;
                    if (nl > 0 && nm[0] == '^') {
                        nm++;
                        nl--;
                    }
                    bool known = false;
                    for (size_t k = 0; k < IM_ARRAY_LEN(names); k++)
                        if (strlen(names[k]) == nl && memcmp(names[k], nm, nl) == 0) known = true;
                    if (!known) {
                        snprintf(why, cap, "invalid character class range: `%.*s`",
                                 (int)(j + 2 - i), re + i);
                        return false;
                    }
                    i = j + 1;
                    continue;
                }
            }
            if (c == ']' && i >= class_start) {
                in_class = false;
                can_repeat = true;
                continue;
            }
            /* lo-hi ranges, taken greedily left to right as Go does */
            size_t wl;
            int32_t lo = decode_rune(re + i, len - i, &wl);
            size_t h = i + wl;
            if (h + 1 < len && re[h] == '-' && re[h + 1] != ']') {
                size_t wh = 0;
                int32_t hi;
                if (re[h + 1] == '\\') {
                    hi = h + 2 < len ? simple_escape_value(re + h + 2, len - h - 2, &wh) : -1;
                    wh += 1;
                } else {
                    hi = decode_rune(re + h + 1, len - h - 1, &wh);
                }
                if (hi >= 0 && hi < lo) {
                    snprintf(why, cap, "invalid character class range: `%.*s`",
                             (int)(h + 1 + wh - i), re + i);
                    return false;
                }
                i = h + wh; /* the loop's i++ steps past hi */
                continue;
            }
            i += wl - 1;
            continue;
        }
        if (c == '\\') {
            if (i + 1 >= len) return true; /* PCRE2 reports it */
            char e = re[i + 1];
            size_t w;
            if (!go_escape_ok(re, len, i, false, &w)) {
                snprintf(why, cap, "invalid escape sequence: `\\%.*s`", (int)w, re + i + 1);
                return false;
            }
            if (e == 'Q') {
                size_t j = i + 2;
                while (j + 1 < len && !(re[j] == '\\' && re[j + 1] == 'E')) j++;
                i = j + 1;
                can_repeat = true;
                continue;
            }
            i++;
            can_repeat = !(e == 'b' || e == 'B' || e == 'A' || e == 'z');
            continue;
        }
        size_t ql;
        if (re_is_quant_start(re, len, i, &ql)) {
            if (!can_repeat) {
                snprintf(why, cap, "missing argument to repetition operator: `%.*s`", (int)ql,
                         re + i);
                return false;
            }
            if (re[i] == '{') {
                /* counts above 1000 or out of order */
                long a = strtol(re + i + 1, NULL, 10), b = a;
                const char *comma = memchr(re + i, ',', ql);
                if (comma && comma[1] != '}') b = strtol(comma + 1, NULL, 10);
                if (a > 1000 || b > 1000 || b < a) {
                    snprintf(why, cap, "invalid repeat count: `%.*s`", (int)ql, re + i);
                    return false;
                }
            }
            size_t j = i + ql;
            if (j < len && re[j] == '?') j++; /* lazy */
            size_t ql2;
            if (j < len && re_is_quant_start(re, len, j, &ql2)) {
                snprintf(why, cap, "invalid nested repetition operator: `%.*s`", (int)(j + ql2 - i),
                         re + i);
                return false;
            }
            i = j - 1;
            can_repeat = false;
            continue;
        }
        if (c == '[') {
            in_class = true;
            class_start = i + 1;
            sc->unclosed_class = i;
            if (i + 1 < len && re[i + 1] == '^') class_start++;
            /* a leading ']' is literal */
            if (class_start < len && re[class_start] == ']') class_start++;
            continue;
        }
        if (c == ')') {
            if (--depth < 0) {
                snprintf(why, cap, "unexpected ): `%.*s`", (int)len, re);
                return false;
            }
            if (depth == 0 && i < raw_end) sc->raw_unexpected = true;
            can_repeat = true;
            continue;
        }
        if (c == '(') {
            can_repeat = false;
            depth++;
            if (i + 1 < len && re[i + 1] == '?' && i + 2 < len &&
                (re[i + 2] == 'i' || re[i + 2] == 'm' || re[i + 2] == 's' || re[i + 2] == 'U' ||
                 re[i + 2] == '-')) {
                /* flags: [imsU]*(-[imsU]+)? then ':' or ')' */
                size_t j = i + 2;
                bool neg = false, saw = false, ok = false;
                for (; j < len; j++) {
                    char f = re[j];
                    if (f == 'i' || f == 'm' || f == 's' || f == 'U') {
                        saw = true;
                        continue;
                    }
                    if (f == '-' && !neg) {
                        neg = true;
                        saw = false;
                        continue;
                    }
                    if ((f == ':' || f == ')') && (!neg || saw)) ok = true;
                    break;
                }
                if (!ok) {
                    snprintf(why, cap, "invalid or unsupported Perl syntax: `%.*s`",
                             (int)(IM_MIN(j + 1, len) - i), re + i);
                    return false;
                }
                if (re[j] == ')') depth--;
                i = j;
                continue;
            }
            if (i + 1 < len && re[i + 1] == '?') {
                char d = i + 2 < len ? re[i + 2] : 0;
                bool ok = d == ':' || d == 'i' || d == 'm' || d == 's' || d == 'U' || d == '-' ||
                          d == ')';
                if (d == 'P' && i + 3 < len && re[i + 3] == '<') ok = true;
                /* (?<name>...) is RE2 since Go 1.22 (Prometheus 2.53) */
                if (d == '<' && i + 3 < len && re[i + 3] != '=' && re[i + 3] != '!') ok = true;
                if (!ok) {
                    snprintf(why, cap, "invalid or unsupported Perl syntax: `%.*s`",
                             (int)IM_MIN((size_t)3, len - i), re + i);
                    return false;
                }
                i++; /* the '?' is not a quantifier */
                if (d == ':') {
                    i++;
                } else if (d == 'P' || d == '<') {
                    /* named group: a name of word characters up to '>' */
                    const char *gt = memchr(re + i, '>', len - i);
                    size_t ns = i + (d == 'P' ? 3 : 2);
                    bool good = gt != NULL && (size_t)(gt - re) > ns;
                    for (size_t k = ns; good && k < (size_t)(gt - re); k++)
                        good = re[k] == '_' || (re[k] >= '0' && re[k] <= '9') ||
                               (re[k] >= 'a' && re[k] <= 'z') || (re[k] >= 'A' && re[k] <= 'Z');
                    if (!good) {
                        size_t end = gt ? (size_t)(gt - re) + 1 : len;
                        snprintf(why, cap, "invalid named capture: `%.*s`", (int)(end - (i - 1)),
                                 re + i - 1);
                        return false;
                    }
                    i = (size_t)(gt - re);
                }
            }
            continue;
        }
        can_repeat = c != '|';
    }
    if (in_class) {
        snprintf(why, cap, "missing closing ]: `%.*s`", (int)(len - sc->unclosed_class),
                 re + sc->unclosed_class);
        return false;
    }
    sc->unclosed_class = SIZE_MAX;
    if (depth > 0) {
        snprintf(why, cap, "missing closing ): `%.*s`", (int)len, re);
        return false;
    }
    return true;
}

bool im_regex_re2_check(const char *re, size_t len, size_t raw_end, char *why, size_t cap,
                        bool *raw_unexpected)
{
    re_scan_t sc = {SIZE_MAX, false};
    bool ok = re2_check(re, len, raw_end, why, cap, &sc);
    if (raw_unexpected) *raw_unexpected = sc.raw_unexpected;
    return ok;
}

/* ---- Rewrite of the escapes PCRE2 reads differently ----
 *
 * Runs on a pattern that passed re2_check. Outside a class: \s -> [\t\n\f\r ],
 * \S -> [^\t\n\f\r ]; inside: the members (\S as the ranges around them). \v -> \x0b.
 * Go's octal \0, \0N, \0NN, \NN, \NNN (first digit 1-7) -> \x{..}. \Q..\E is copied. */

static void put_octal(im_buf_t *o, const char *p, size_t n, size_t *used)
{
    /* p points after the backslash at an octal digit */
    unsigned v = (unsigned)(p[0] - '0');
    size_t k = 1;
    while (k < 3 && k < n && p[k] >= '0' && p[k] <= '7') v = v * 8 + (unsigned)(p[k++] - '0');
    (void)im_buf_printf(o, "\\x{%x}", v);
    *used = k;
}

static void translate(const char *p, size_t n, im_buf_t *o)
{
    bool in_class = false;
    size_t class_start = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '\\' && i + 1 < n) {
            char e = p[i + 1];
            if (!in_class && e == 'Q') {
                size_t j = i + 2;
                while (j + 1 < n && !(p[j] == '\\' && p[j + 1] == 'E')) j++;
                size_t end = j + 1 < n ? j + 2 : n;
                (void)im_buf_append(o, p + i, end - i);
                i = end - 1;
                continue;
            }
            if (e == 's') {
                (void)im_buf_puts(o, in_class ? "\\t\\n\\f\\r\\x20" : "[\\t\\n\\f\\r\\x20]");
            } else if (e == 'S') {
                (void)im_buf_puts(o, in_class ? "\\x00-\\x08\\x0b\\x0e-\\x1f\\x21-\\x{10ffff}"
                                              : "[^\\t\\n\\f\\r\\x20]");
            } else if (e == 'v') {
                (void)im_buf_puts(o, "\\x0b");
            } else if (e >= '0' && e <= '7') {
                size_t used;
                put_octal(o, p + i + 1, n - i - 1, &used);
                i += used;
                continue;
            } else {
                (void)im_buf_append(o, p + i, 2);
            }
            i++;
            continue;
        }
        if (in_class) {
            if (c == '[' && i + 1 < n && p[i + 1] == ':') {
                size_t j = i + 2;
                while (j + 1 < n && !(p[j] == ':' && p[j + 1] == ']')) j++;
                if (j + 1 < n) {
                    (void)im_buf_append(o, p + i, j + 2 - i);
                    i = j + 1;
                    continue;
                }
            }
            if (c == ']' && i >= class_start) in_class = false;
        } else if (c == '[') {
            in_class = true;
            class_start = i + 1;
            if (class_start < n && p[class_start] == '^') class_start++;
            if (class_start < n && p[class_start] == ']') class_start++;
        }
        (void)im_buf_putc(o, c);
    }
}

/* ---- Compilation ---- */

static pcre2_code *pcompile(const im_buf_t *b, uint32_t opts, int *ec, size_t *eo)
{
    PCRE2_SIZE off = 0;
    pcre2_code *c = pcre2_compile((PCRE2_SPTR)b->data, b->len, opts, ec, &off, g.cctx);
    *eo = off;
    return c;
}

im_rc im_regex_compile(const char *pat, size_t len, im_regex_mode_t mode, im_regex_t **out,
                       im_err_t *err)
{
    *out = NULL;
    pthread_once(&g.once, g_init);
    char why[600];
    bool full = mode == IM_REGEX_FULL || mode == IM_REGEX_FULL_DOTALL;
    bool raw_unexpected = false;
    /* Go's check sees what Go compiles: ^(?:raw)$ for FULL, the raw text otherwise. */
    im_buf_t w;
    im_buf_init(&w, 0);
    if (full) (void)im_buf_puts(&w, "^(?:");
    (void)im_buf_append(&w, pat, len);
    if (full) (void)im_buf_puts(&w, ")$");
    bool ok = im_regex_re2_check(w.data ? w.data : "", w.len, full ? len + 4 : 0, why, sizeof why,
                                 &raw_unexpected);
    im_buf_free(&w);
    if (!ok) return im_err_set(err, IM_EPARSE, "error parsing regexp: %s", why);

    im_buf_t tr, b;
    im_buf_init(&tr, 0);
    im_buf_init(&b, 0);
    translate(pat, len, &tr);
    if (full) (void)im_buf_puts(&b, "^(?:");
    (void)im_buf_append(&b, tr.data ? tr.data : "", tr.len);
    if (full) (void)im_buf_puts(&b, ")$");
    const uint32_t base = PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_BACKSLASH_C |
                          (mode == IM_REGEX_FULL_DOTALL ? PCRE2_DOTALL : 0u);
    int ec = 0;
    size_t eo = 0;
    pcre2_code *bt = pcompile(&b, base | PCRE2_MATCH_INVALID_UTF, &ec, &eo);
    if (!bt) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        const char *m = (const char *)msg;
        const char *pre = full ? "^(?:" : "", *post = full ? ")$" : "";
        im_buf_free(&tr);
        im_buf_free(&b);
        if (strstr(m, "missing closing parenthesis"))
            return im_err_set(err, IM_EPARSE, "error parsing regexp: missing closing ): `%s%.*s%s`",
                              pre, (int)len, pat, post);
        if (strstr(m, "unmatched closing parenthesis"))
            return im_err_set(err, IM_EPARSE, "error parsing regexp: unexpected ): `%s%.*s%s`", pre,
                              (int)len, pat, post);
        return im_err_set(err, IM_EPARSE, "error parsing regexp: %s: `%s%.*s%s`", m, pre, (int)len,
                          pat, post);
    }
    if (raw_unexpected) {
        pcre2_code_free(bt);
        im_buf_free(&tr);
        im_buf_free(&b);
        return im_err_set(err, IM_EPARSE, "error parsing regexp: unexpected ): `%.*s`", (int)len,
                          pat);
    }
    (void)pcre2_jit_compile(bt, PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
    /* The DFA code: same language, one anchored pass (SEARCH gets a lazy any-prefix so
     * that a single pass from the start offset finds a match anywhere after it). */
    im_buf_reset(&b);
    if (full) {
        (void)im_buf_puts(&b, "^(?:");
    } else {
        (void)im_buf_puts(&b, "(?s:.*?)(?:");
    }
    (void)im_buf_append(&b, tr.data ? tr.data : "", tr.len);
    (void)im_buf_puts(&b, full ? ")$" : ")");
    pcre2_code *dfa = pcompile(&b, base | PCRE2_ANCHORED, &ec, &eo);
    im_buf_free(&tr);
    im_buf_free(&b);
    if (!dfa) {
        pcre2_code_free(bt);
        return im_err_set(err, IM_EPARSE, "error parsing regexp: `%.*s`: pattern too complex",
                          (int)len, pat);
    }
    im_regex_t *re = im_calloc(1, sizeof *re);
    re->bt = bt;
    re->dfa = dfa;
    re->mode = mode;
    (void)pcre2_pattern_info(bt, PCRE2_INFO_CAPTURECOUNT, &re->ngroups);
    re->pat = im_strndup(pat, len);
    re->plen = len;
    *out = re;
    return IM_OK;
}

void im_regex_free(im_regex_t *re)
{
    if (!re) return;
    pcre2_code_free(re->bt);
    pcre2_code_free(re->dfa);
    im_free(re->pat);
    im_free(re);
}

const char *im_regex_pattern(const im_regex_t *re, size_t *len)
{
    if (len) *len = re->plen;
    return re->pat;
}

uint32_t im_regex_groups(const im_regex_t *re)
{
    return re->ngroups;
}

/* ---- Matching ---- */

static bool is_budget_error(int rc)
{
    return rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
           rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT ||
           rc == PCRE2_ERROR_NOMEMORY;
}

static im_rc limit_error(const im_regex_t *re, size_t len, im_err_t *err)
{
    return im_err_set(err, IM_ELIMIT,
                      "regex match limit exceeded: /%.*s/ against a %zu-byte value needs more than "
                      "%u backtracking steps and more DFA states than the fallback allows; raise "
                      "--regex.match-limit",
                      (int)IM_MIN(re->plen, (size_t)200), re->pat, len, g.lim.match_limit);
}

/* One DFA pass: 1 match, 0 no match, <0 the DFA could not decide. */
static int dfa_match(const im_regex_t *re, const char *s, size_t len, size_t start)
{
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md) im_oom(64);
    int *ws = im_malloc(DFA_WORKSPACE * sizeof *ws);
    int rc = pcre2_dfa_match(re->dfa, (PCRE2_SPTR)s, len, start, PCRE2_ANCHORED, md, g.mctx, ws,
                             DFA_WORKSPACE);
    im_free(ws);
    pcre2_match_data_free(md);
    if (rc >= 0) return 1;
    if (rc == PCRE2_ERROR_NOMATCH || rc == PCRE2_ERROR_PARTIAL) return 0;
    return -1;
}

int im_regex_match(const im_regex_t *re, const char *s, size_t len, im_err_t *err)
{
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    if (!md) im_oom(64);
    int rc = pcre2_match(re->bt, (PCRE2_SPTR)s, len, 0, 0, md, g.mctx);
    pcre2_match_data_free(md);
    if (rc >= 0) return 1;
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
    if (is_budget_error(rc)) {
        int d = dfa_match(re, s, len, 0);
        if (d >= 0) return d;
    }
    return limit_error(re, len, err);
}

int im_regex_exec(const im_regex_t *re, const char *s, size_t len, size_t start, size_t *ov,
                  im_err_t *err)
{
    if (re->mode != IM_REGEX_SEARCH) start = 0;
    if (start > len) return 0;
    pcre2_match_data *md = pcre2_match_data_create(re->ngroups + 1, NULL);
    if (!md) im_oom(64);
    int rc = pcre2_match(re->bt, (PCRE2_SPTR)s, len, start, 0, md, g.mctx);
    if (rc >= 0) {
        const PCRE2_SIZE *pv = pcre2_get_ovector_pointer(md);
        for (uint32_t i = 0; i < 2 * (re->ngroups + 1); i++)
            ov[i] = i < 2u * (uint32_t)rc ? pv[i] : IM_REGEX_UNSET;
        for (uint32_t i = 0; i < 2 * (re->ngroups + 1); i++)
            if (ov[i] == PCRE2_UNSET) ov[i] = IM_REGEX_UNSET;
        pcre2_match_data_free(md);
        return 1;
    }
    pcre2_match_data_free(md);
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
    /* Out of budget: only "no match at all" is exact without captures. */
    if (is_budget_error(rc) && dfa_match(re, s, len, start) == 0) return 0;
    return limit_error(re, len, err);
}

/* ---- Go's Regexp.Expand ---- */

static bool name_char(unsigned char c)
{
    return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

void im_regex_expand(const im_regex_t *re, const char *tpl, size_t tlen, const char *subj,
                     const size_t *ov, im_buf_t *out)
{
    for (size_t i = 0; i < tlen;) {
        if (tpl[i] != '$') {
            const char *q = memchr(tpl + i, '$', tlen - i);
            size_t n = q ? (size_t)(q - (tpl + i)) : tlen - i;
            (void)im_buf_append(out, tpl + i, n);
            i += n;
            continue;
        }
        if (i + 1 < tlen && tpl[i + 1] == '$') {
            (void)im_buf_putc(out, '$');
            i += 2;
            continue;
        }
        size_t ns, ne, next;
        bool brace = i + 1 < tlen && tpl[i + 1] == '{';
        ns = i + (brace ? 2 : 1);
        ne = ns;
        while (ne < tlen && name_char((unsigned char)tpl[ne])) ne++;
        if (ne == ns || (brace && (ne >= tlen || tpl[ne] != '}'))) {
            (void)im_buf_putc(out, '$'); /* malformed: the $ is text */
            i++;
            continue;
        }
        next = brace ? ne + 1 : ne;
        /* Go: all digits, below 1e8, no leading zero -> a group number; else a name */
        long num = 0;
        for (size_t j = ns; j < ne; j++) {
            if (tpl[j] < '0' || tpl[j] > '9' || num >= 100000000L) {
                num = -1;
                break;
            }
            num = num * 10 + (tpl[j] - '0');
        }
        if (num >= 0 && tpl[ns] == '0' && ne - ns > 1) num = -1;
        if (num < 0) {
            char nb[128];
            size_t nl = ne - ns;
            if (nl < sizeof nb) {
                memcpy(nb, tpl + ns, nl);
                nb[nl] = 0;
                int k = pcre2_substring_number_from_name(re->bt, (PCRE2_SPTR)nb);
                if (k > 0) num = k;
            }
        }
        if (num >= 0 && (uint64_t)num <= re->ngroups && ov[2 * num] != IM_REGEX_UNSET)
            (void)im_buf_append(out, subj + ov[2 * num], ov[2 * num + 1] - ov[2 * num]);
        i = next;
    }
}
