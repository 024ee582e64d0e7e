/* parse.c — the streaming, zero-copy parsers for Prometheus text 0.0.4 and
 * OpenMetrics 1.0 text (contract in expo.h).
 *
 * One hand-written scanner per format walks the caller's buffer byte by byte
 * with a character-class table; an entry's views point into the buffer, or into
 * the parser's scratch when escapes had to be resolved. Label views are kept in a
 * reusable array; because the scratch may move when it grows, unescaped values
 * are recorded as offsets and turned into pointers when the entry is complete.
 * The accepted syntax follows Prometheus 2.x's model/textparse lexers (see
 * docs/exposition.md for the few deliberate differences). The parser also keeps
 * "notes" on things Prometheus tolerates or rejects that only expo_check reports
 * (CRLF, a missing final newline, missing commas, unknown escapes). Text-format
 * sample lines of the common shape first take a fast path driven by bit masks
 * of the input (scan.c); it hands anything unusual, and every error, to the
 * general scanner, so results and messages do not depend on which path ran. */
#include "util/base.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "expo/expo.h"
#include "expo/expo_int.h"
#include "expo/parse_int.h"

#define CLS(c) (expo__cls[(unsigned char)(c)])

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- Scanning helpers (SSE2, 16 bytes at a time, with scalar tails) ---- */

/* End of a name starting at i: metric names [a-zA-Z0-9_:], label names
 * [a-zA-Z0-9_] (the first character is checked by the caller). */
static inline size_t scan_name(const char *b, size_t i, size_t n, bool metric)
{
#ifdef __SSE2__
    const __m128i x20 = _mm_set1_epi8(0x20), alo = _mm_set1_epi8((char)(0x80 - 'a'));
    const __m128i alim = _mm_set1_epi8((char)(-128 + 26)), dlo = _mm_set1_epi8((char)(0x80 - '0'));
    const __m128i dlim = _mm_set1_epi8((char)(-128 + (metric ? 11 : 10)));
    const __m128i us = _mm_set1_epi8('_');
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
        __m128i al = _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(v, x20), alo), alim);
        __m128i dg = _mm_cmplt_epi8(_mm_add_epi8(v, dlo), dlim);
        __m128i ok = _mm_or_si128(_mm_or_si128(al, dg), _mm_cmpeq_epi8(v, us));
        unsigned bad = ~(unsigned)_mm_movemask_epi8(ok) & 0xffffu;
        if (bad) return i + (size_t)__builtin_ctz(bad);
        i += 16;
    }
#endif
    uint8_t cls = metric ? EXPO_C_NAME : EXPO_C_LNAME;
    while (i < n && (CLS(b[i]) & cls)) i++;
    return i;
}

/* Next position >= j holding '"', '\\' or '\n' (n if none); sets *high when a
 * byte >= 0x80 may lie before it. */
static inline size_t scan_lvalue_fast(const char *b, size_t j, size_t n, bool *high)
{
#ifdef __SSE2__
    const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), nl = _mm_set1_epi8('\n');
    __m128i acc = _mm_setzero_si128(); /* OR of the blocks looked at: their high bits */
    while (j + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + j));
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, q), _mm_cmpeq_epi8(v, bs)),
                                 _mm_cmpeq_epi8(v, nl));
        unsigned sp = (unsigned)_mm_movemask_epi8(m);
        acc = _mm_or_si128(acc, v);
        if (sp) {
            if (_mm_movemask_epi8(acc)) *high = true;
            return j + (size_t)__builtin_ctz(sp);
        }
        j += 16;
    }
    if (_mm_movemask_epi8(acc)) *high = true;
#endif
    for (; j < n; j++) {
        unsigned char c = (unsigned char)b[j];
        if (c == '"' || c == '\\' || c == '\n') return j;
        if (c >= 0x80) *high = true;
    }
    return n;
}

/* ---- Formats and types ---- */

expo_format_t expo_format_from_content_type(const char *ct, size_t len)
{
    static const char om[] = "application/openmetrics-text";
    size_t i = 0;
    while (i < len && (ct[i] == ' ' || ct[i] == '\t')) i++;
    size_t j = i;
    while (j < len && ct[j] != ';') j++;
    while (j > i && (ct[j - 1] == ' ' || ct[j - 1] == '\t')) j--;
    if (j - i != sizeof om - 1) return EXPO_TEXT_004;
    for (size_t k = 0; k < j - i; k++) {
        char c = ct[i + k];
        if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
        if (c != om[k]) return EXPO_TEXT_004;
    }
    return EXPO_OPENMETRICS_1;
}

const char *expo_format_content_type(expo_format_t f)
{
    return f == EXPO_OPENMETRICS_1 ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                   : "text/plain; version=0.0.4; charset=utf-8";
}

const char *expo_format_name(expo_format_t f)
{
    return f == EXPO_OPENMETRICS_1 ? "openmetrics" : "text";
}

const char *expo_type_name(expo_type_t t, expo_format_t f)
{
    switch (t) {
    case EXPO_TYPE_COUNTER: return "counter";
    case EXPO_TYPE_GAUGE: return "gauge";
    case EXPO_TYPE_HISTOGRAM: return "histogram";
    case EXPO_TYPE_GAUGEHISTOGRAM: return "gaugehistogram";
    case EXPO_TYPE_SUMMARY: return "summary";
    case EXPO_TYPE_INFO: return "info";
    case EXPO_TYPE_STATESET: return "stateset";
    case EXPO_TYPE_UNKNOWN: break;
    }
    return f == EXPO_OPENMETRICS_1 ? "unknown" : "untyped";
}

static bool type_from_text(const char *s, size_t n, expo_format_t f, expo_type_t *out)
{
    static const struct {
        const char *name;
        expo_type_t t;
        bool om_only, text_only;
    } tab[] = {
        {"counter", EXPO_TYPE_COUNTER, false, false},
        {"gauge", EXPO_TYPE_GAUGE, false, false},
        {"histogram", EXPO_TYPE_HISTOGRAM, false, false},
        {"summary", EXPO_TYPE_SUMMARY, false, false},
        {"untyped", EXPO_TYPE_UNKNOWN, false, true},
        {"gaugehistogram", EXPO_TYPE_GAUGEHISTOGRAM, true, false},
        {"info", EXPO_TYPE_INFO, true, false},
        {"stateset", EXPO_TYPE_STATESET, true, false},
        {"unknown", EXPO_TYPE_UNKNOWN, true, false},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(tab); i++) {
        if (tab[i].om_only && f != EXPO_OPENMETRICS_1) continue;
        if (tab[i].text_only && f != EXPO_TEXT_004) continue;
        if (strlen(tab[i].name) == n && memcmp(tab[i].name, s, n) == 0) {
            *out = tab[i].t;
            return true;
        }
    }
    return false;
}

/* ---- Parser state ---- */

void expo_parser_set_limits(expo_parser_t *p, const expo_limits_t *limits)
{
    memset(&p->lim, 0, sizeof p->lim);
    if (limits) p->lim = *limits;
    if (p->lim.max_line_bytes == 0) p->lim.max_line_bytes = EXPO_DEFAULT_MAX_LINE_BYTES;
    if (p->lim.max_labels == 0) p->lim.max_labels = EXPO_DEFAULT_MAX_LABELS;
    if (!p->lim.line_setting)
        p->lim.line_setting = "expo_limits_t.max_line_bytes; --max-line-bytes";
    if (!p->lim.labels_setting) p->lim.labels_setting = "expo_limits_t.max_labels; --max-labels";
}

expo_parser_t *expo_parser_new(const expo_limits_t *limits)
{
    expo_parser_t *p = im_calloc_tag(IM_MEM_EXPO, 1, sizeof *p);
    expo_parser_set_limits(p, limits);
    p->rc = 1;
    return p;
}

void expo_parser_free(expo_parser_t *p)
{
    if (!p) return;
    im_free_tag(IM_MEM_EXPO, p->lab, p->lab_cap * sizeof *p->lab);
    im_free_tag(IM_MEM_EXPO, p->lab_off, p->lab_cap * sizeof *p->lab_off);
    im_free_tag(IM_MEM_EXPO, p->exl, p->exl_cap * sizeof *p->exl);
    im_free_tag(IM_MEM_EXPO, p->exl_off, p->exl_cap * sizeof *p->exl_off);
    im_free_tag(IM_MEM_EXPO, p->scr, p->scr_cap);
    im_free_tag(IM_MEM_EXPO, p->win, (EXPO_WIN_BLKS + 1) * sizeof *p->win);
    im_free_tag(IM_MEM_EXPO, p, sizeof *p);
}

im_rc expo_parser_reset(expo_parser_t *p, const char *buf, size_t len, expo_format_t f,
                        im_err_t *err)
{
    p->b = buf;
    p->n = len;
    p->i = 0;
    p->fmt = f;
    p->line = 1;
    p->line_start = 0;
    p->rc = 0;
    p->eof_seen = false;
    p->fam = NULL;
    p->fam_len = 0;
    p->fam_type = EXPO_TYPE_UNKNOWN;
    p->wbase = p->wend = p->wnblk = 0;
    p->fast_skip = SIZE_MAX;
    p->tc_len = 0;
    memset(&p->notes, 0, sizeof p->notes);
    im_err_clear(&p->err);
    if (p->lim.max_body_bytes && len > p->lim.max_body_bytes) {
        p->rc = im_err_setpos(&p->err, IM_ELIMIT, 1, 1,
                              "input is %zu bytes, more than the limit of %zu bytes "
                              "(expo_limits_t.max_body_bytes; --max-body-bytes)",
                              len, p->lim.max_body_bytes);
        if (err) *err = p->err;
        return IM_ELIMIT;
    }
    return IM_OK;
}

void expo_parser_pos(const expo_parser_t *p, int *line, int *col)
{
    if (p->rc < 0) {
        *line = p->err.line;
        *col = p->err.col;
        return;
    }
    *line = p->line;
    *col = (int)(p->i - p->line_start) + 1;
}

const expo_parse_notes_t *expo__parser_notes(const expo_parser_t *p)
{
    return &p->notes;
}

/* Describes the byte at position at for "got ..." in messages. */
static const char *got(const expo_parser_t *p, size_t at, char buf[24])
{
    if (at >= p->n) return "end of input";
    unsigned char c = (unsigned char)p->b[at];
    if (c == '\n') return "end of line";
    if (c == '\r') return "carriage return";
    if (c >= 0x21 && c < 0x7f) {
        snprintf(buf, 24, "'%c'", c);
        return buf;
    }
    if (c == ' ') return "' '";
    if (c == '\t') return "tab";
    snprintf(buf, 24, "byte 0x%02x", c);
    return buf;
}

/* Sets the sticky error at byte position at (on the current line). */
static int perr(expo_parser_t *p, im_rc code, size_t at, const char *fmt, ...) IM_PRINTF(4, 5);
static int perr(expo_parser_t *p, im_rc code, size_t at, const char *fmt, ...)
{
    char msg[IM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int col = at >= p->line_start ? (int)(at - p->line_start) + 1 : 1;
    p->rc = im_err_setpos(&p->err, code, p->line, col, "%s", msg);
    return p->rc;
}

static int limit_err(expo_parser_t *p, size_t start)
{
    return perr(p, IM_ELIMIT, start, "line is longer than the limit of %zu bytes (%s)",
                p->lim.max_line_bytes, p->lim.line_setting);
}

/* Scratch: makes room for extra bytes; returns the write position. */
static char *scr_room(expo_parser_t *p, size_t extra)
{
    if (p->scr_len + extra > p->scr_cap) {
        size_t nc = p->scr_cap ? p->scr_cap : 256;
        while (nc < p->scr_len + extra) nc *= 2;
        p->scr = im_realloc_tag(IM_MEM_EXPO, p->scr, p->scr_cap, nc);
        p->scr_cap = nc;
    }
    return p->scr + p->scr_len;
}

/* Unescapes [s, s+n) into the scratch; om selects \" handling for HELP (label
 * values always resolve \"). Returns the offset in the scratch. Unknown escapes
 * keep the backslash. */
static size_t unescape(expo_parser_t *p, const char *s, size_t n, bool quote, size_t *outlen)
{
    char *w = scr_room(p, n);
    size_t off = p->scr_len, k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\' && i + 1 < n) {
            char e = s[i + 1];
            if (e == '\\') {
                w[k++] = '\\';
                i++;
                continue;
            }
            if (e == 'n') {
                w[k++] = '\n';
                i++;
                continue;
            }
            if (e == '"' && quote) {
                w[k++] = '"';
                i++;
                continue;
            }
        }
        w[k++] = c;
    }
    p->scr_len += k;
    *outlen = k;
    return off;
}

static bool grow_labels(expo_parser_t *p, bool ex)
{
    expo_label_t **arr = ex ? &p->exl : &p->lab;
    uint32_t **offs = ex ? &p->exl_off : &p->lab_off;
    uint32_t *cap = ex ? &p->exl_cap : &p->lab_cap;
    uint32_t nc = *cap ? *cap * 2 : 16;
    *arr = im_realloc_tag(IM_MEM_EXPO, *arr, *cap * sizeof **arr, nc * sizeof **arr);
    *offs = im_realloc_tag(IM_MEM_EXPO, *offs, *cap * sizeof **offs, nc * sizeof **offs);
    *cap = nc;
    return true;
}

static void note_line(int *slot, int line)
{
    if (*slot == 0) *slot = line;
}

/* Consumes a line end at p->i. Text: end of input counts as one (a missing final
 * newline); CRLF accepted and noted. Returns 0 or an error. */
static int eol(expo_parser_t *p, const char *what)
{
    char g[24];
    size_t i = p->i;
    if (i < p->n && p->b[i] == '\n') {
        p->i = i + 1;
        p->line++;
        p->line_start = p->i;
        return 0;
    }
    if (p->fmt == EXPO_TEXT_004) {
        if (i >= p->n) {
            p->notes.no_final_newline = true;
            return 0;
        }
        if (p->b[i] == '\r' && i + 1 < p->n && p->b[i + 1] == '\n') {
            note_line(&p->notes.crlf_line, p->line);
            p->i = i + 2;
            p->line++;
            p->line_start = p->i;
            return 0;
        }
    } else if (i < p->n && p->b[i] == '\r') {
        return perr(p, IM_EPARSE, i,
                    "carriage return before the newline: OpenMetrics lines end with a "
                    "bare \\n");
    }
    return perr(p, IM_EPARSE, i, "expected %s, got %s", what, got(p, i, g));
}

static inline void skip_ws(expo_parser_t *p)
{
    const char *b = p->b;
    size_t i = p->i, n = p->n;
    while (i < n && (b[i] == ' ' || b[i] == '\t')) i++;
    p->i = i;
}

/* Scans a quoted label value starting at the opening quote p->i. Fills *lab and
 * *off (0 or scratch offset + 1). */
static int scan_lvalue(expo_parser_t *p, size_t entry_start, expo_label_t *lab, uint32_t *off)
{
    const char *b = p->b;
    size_t n = p->n;
    size_t start = p->i + 1, j = start;
    bool esc = false, high = false;
    int line0 = p->line;
    size_t ls0 = p->line_start;
    for (;;) {
        j = scan_lvalue_fast(b, j, n, &high);
        if (IM_UNLIKELY(j >= n)) goto unterminated;
        unsigned char c = (unsigned char)b[j];
        if (c == '"') break;
        if (c == '\\') {
            if (j + 1 >= n) goto unterminated;
            char e = b[j + 1];
            if (e == '\n') {
                /* Prometheus' lexer does not take "\<newline>" as an escape. */
                p->i = j;
                return perr(p, IM_EPARSE, j, "backslash before a newline in label value");
            }
            if (e != '\\' && e != '"' && e != 'n' && p->fmt == EXPO_TEXT_004 &&
                p->notes.bad_escape_line == 0) {
                p->notes.bad_escape_line = p->line;
                p->notes.bad_escape_col = (int)(j - p->line_start) + 1;
            }
            if ((unsigned char)e >= 0x80) high = true;
            esc = true;
            j += 2;
            continue;
        }
        if (c == '\n') {
            if (p->fmt == EXPO_OPENMETRICS_1) {
                p->i = j;
                return perr(p, IM_EPARSE, j,
                            "newline in label value (write it as \\n), or missing closing '\"'");
            }
            p->line++;
            p->line_start = j + 1;
        } else if (c >= 0x80) {
            high = true;
        }
        j++;
    }
    if (IM_UNLIKELY(j - entry_start > p->lim.max_line_bytes)) return limit_err(p, entry_start);
    if (high && !im_utf8_valid(b + start, j - start)) {
        /* Report on the value's first line. */
        p->line = line0;
        p->line_start = ls0;
        return perr(p, IM_EPARSE, start, "invalid UTF-8 in label value \"%.*s\"",
                    (int)lab->name.len, lab->name.p);
    }
    if (esc) {
        size_t ul;
        size_t o = unescape(p, b + start, j - start, true, &ul);
        lab->value.p = NULL;
        lab->value.len = ul;
        *off = (uint32_t)o + 1;
    } else {
        lab->value.p = b + start;
        lab->value.len = j - start;
        *off = 0;
    }
    p->i = j + 1;
    return 0;

unterminated:
    p->line = line0;
    p->line_start = ls0;
    return perr(p, IM_EPARSE, start - 1, "unterminated label value: missing closing '\"'");
}

/* Label set after '{' (p->i is past the brace). ex selects the exemplar arrays. */
static int parse_labels(expo_parser_t *p, size_t entry_start, bool ex, uint32_t *nout)
{
    char g[24];
    const char *b = p->b;
    bool om = p->fmt == EXPO_OPENMETRICS_1;
    uint32_t nl = 0;
    bool first = true;
    for (;;) {
        if (!om) skip_ws(p);
        size_t i = p->i;
        char c = i < p->n ? b[i] : 0;
        if (c == '}') {
            p->i = i + 1;
            break;
        }
        if (om && !first) {
            if (c != ',')
                return perr(p, IM_EPARSE, i, "expected ',' or '}' after a label, got %s",
                            got(p, i, g));
            i++;
            c = i < p->n ? b[i] : 0;
            if (!(CLS(c) & EXPO_C_LNAME1))
                return perr(p, IM_EPARSE, i, "expected a label name after ',', got %s",
                            got(p, i, g));
        } else if (!(CLS(c) & EXPO_C_LNAME1)) {
            return perr(p, IM_EPARSE, i, "expected a label name or '}', got %s", got(p, i, g));
        }
        first = false;
        size_t ns = i;
        i++;
        i = scan_name(b, i, p->n, false);
        uint32_t cap = ex ? p->exl_cap : p->lab_cap;
        if (nl >= p->lim.max_labels)
            return perr(p, IM_ELIMIT, ns, "more than %u labels in one sample (%s)",
                        p->lim.max_labels, p->lim.labels_setting);
        if (nl >= cap) grow_labels(p, ex);
        expo_label_t *lab = ex ? &p->exl[nl] : &p->lab[nl];
        uint32_t *off = ex ? &p->exl_off[nl] : &p->lab_off[nl];
        lab->name.p = b + ns;
        lab->name.len = i - ns;
        p->i = i;
        if (!om) skip_ws(p);
        i = p->i;
        if (i >= p->n || b[i] != '=')
            return perr(p, IM_EPARSE, i, "expected '=' after label name \"%.*s\", got %s",
                        (int)lab->name.len, lab->name.p, got(p, i, g));
        p->i = ++i;
        if (!om) skip_ws(p);
        i = p->i;
        if (i >= p->n || b[i] != '"')
            return perr(p, IM_EPARSE, i,
                        "expected '\"' to start the value of label \"%.*s\", got %s",
                        (int)lab->name.len, lab->name.p, got(p, i, g));
        int rc = scan_lvalue(p, entry_start, lab, off);
        if (rc) return rc;
        nl++;
        if (!om) {
            skip_ws(p);
            if (p->i < p->n && b[p->i] == ',') {
                p->i++;
            } else if (p->i < p->n && b[p->i] != '}') {
                /* Prometheus' text parser takes "a=\"1\" b=\"2\"" without the comma. */
                note_line(&p->notes.missing_comma_line, p->line);
            }
        }
    }
    /* Turn scratch offsets into pointers now that the scratch will not move. */
    expo_label_t *arr = ex ? p->exl : p->lab;
    uint32_t *offs = ex ? p->exl_off : p->lab_off;
    for (uint32_t k = 0; k < nl; k++)
        if (offs[k]) arr[k].value.p = p->scr + offs[k] - 1;
    *nout = nl;
    return 0;
}

/* Text-format fast path for a label set (p->i past the '{'): the common shape
 * name="value",name="value"} with no whitespace, escapes, raw newlines, missing
 * commas or limits in reach. Touches no parser state but the label array (and
 * its capacity); returns false at the first thing it does not handle, and the
 * caller then parses the same label set again with parse_labels, which gives
 * the exact errors and notes. On success sets *end past the '}'. */
static bool labels_text_fast(expo_parser_t *p, size_t entry_start, uint32_t *nout, size_t *end)
{
    const char *b = p->b;
    size_t n = p->n, i = p->i;
    const size_t max_line = p->lim.max_line_bytes;
    const uint32_t max_labels = p->lim.max_labels;
    uint32_t nl = 0, cap = p->lab_cap;
    expo_label_t *labs = p->lab;
    for (;;) {
        if (IM_UNLIKELY(i >= n)) return false;
        unsigned char c = (unsigned char)b[i];
        if (c == '}') break;
        if (IM_UNLIKELY(!(CLS(c) & EXPO_C_LNAME1))) return false;
        size_t ns = i;
        i = scan_name(b, i + 1, n, false);
        if (IM_UNLIKELY(i + 1 >= n || b[i] != '=' || b[i + 1] != '"')) return false;
        size_t vs = i + 2;
        bool high = false;
        size_t j = scan_lvalue_fast(b, vs, n, &high);
        if (IM_UNLIKELY(j >= n || b[j] != '"')) return false;
        if (IM_UNLIKELY(j - entry_start > max_line)) return false;
        if (IM_UNLIKELY(high) && !im_utf8_valid(b + vs, j - vs)) return false;
        if (IM_UNLIKELY(nl >= max_labels)) return false;
        if (IM_UNLIKELY(nl >= cap)) {
            grow_labels(p, false);
            cap = p->lab_cap;
            labs = p->lab;
        }
        expo_label_t *lab = &labs[nl++];
        lab->name.p = b + ns;
        lab->name.len = i - ns;
        lab->value.p = b + vs;
        lab->value.len = j - vs;
        i = j + 1;
        if (IM_UNLIKELY(i >= n)) return false;
        c = (unsigned char)b[i];
        if (c == ',') {
            i++;
            continue;
        }
        if (IM_UNLIKELY(c != '}')) return false;
        break;
    }
    *nout = nl;
    *end = i + 1;
    return true;
}

/* Family type of a sample name (see expo_entry_t.type). */
static expo_type_t sample_type(const expo_parser_t *p, const char *name, size_t len, size_t *famlen)
{
    *famlen = len;
    if (p->fam_len == 0 || p->fam_type == EXPO_TYPE_UNKNOWN) return EXPO_TYPE_UNKNOWN;
    if (len < p->fam_len || memcmp(name, p->fam, p->fam_len) != 0) return EXPO_TYPE_UNKNOWN;
    if (len == p->fam_len) return p->fam_type;
    const char *s = name + p->fam_len;
    size_t sl = len - p->fam_len;
#define SUF(lit) (sl == sizeof(lit) - 1 && memcmp(s, lit, sl) == 0)
    bool ok = false;
    switch (p->fam_type) {
    case EXPO_TYPE_COUNTER: ok = SUF("_total") || SUF("_created"); break;
    case EXPO_TYPE_HISTOGRAM:
        ok = SUF("_bucket") || SUF("_sum") || SUF("_count") || SUF("_created");
        break;
    case EXPO_TYPE_GAUGEHISTOGRAM: ok = SUF("_bucket") || SUF("_gsum") || SUF("_gcount"); break;
    case EXPO_TYPE_SUMMARY: ok = SUF("_sum") || SUF("_count") || SUF("_created"); break;
    case EXPO_TYPE_INFO: ok = SUF("_info"); break;
    default: break;
    }
#undef SUF
    if (!ok) return EXPO_TYPE_UNKNOWN;
    *famlen = p->fam_len;
    return p->fam_type;
}

/* Seconds (OpenMetrics timestamp) to ms: exact for plain decimals, otherwise as
 * Go's int64(ts*1000). */
static bool om_ts(const char *s, size_t n, int64_t *ms)
{
    size_t i = 0;
    bool neg = false;
    if (n && (s[0] == '-' || s[0] == '+')) neg = s[i++] == '-';
    uint64_t ip = 0;
    size_t di = 0, j = i;
    while (j < n && s[j] >= '0' && s[j] <= '9' && ip <= UINT64_C(9223372036854775))
        ip = ip * 10 + (uint64_t)(s[j++] - '0'), di++;
    size_t k = j;
    uint64_t frac = 0;
    if (di > 0 && k < n && s[k] == '.') {
        int fd = 0;
        for (k++; k < n && s[k] >= '0' && s[k] <= '9'; k++, fd++)
            if (fd < 3) frac = frac * 10 + (uint64_t)(s[k] - '0');
        while (fd < 3) frac *= 10, fd++;
    }
    if (di > 0 && k == n && ip <= UINT64_C(9223372036854775)) {
        /* Exact: a plain decimal, truncated below 1 ms. */
        uint64_t v = ip * 1000 + frac;
        if (neg ? v > UINT64_C(9223372036854775808) : v > UINT64_C(9223372036854775807))
            return false;
        *ms = neg ? (int64_t)(0 - v) : (int64_t)v;
        return true;
    }
    double d;
    if (!expo__parse_float(s, n, &d) || !isfinite(d)) return false;
    d *= 1000;
    if (!(d > -9.2e18 && d < 9.2e18)) return false;
    *ms = (int64_t)d;
    return true;
}

/* Text 0.0.4 timestamp: [0-9]+ as int64 ms. */
static bool text_ts(const char *s, size_t n, int64_t *ms)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_C(9223372036854775807) - d) / 10) return false;
        v = v * 10 + d;
    }
    *ms = (int64_t)v;
    return true;
}

static int bad_value(expo_parser_t *p, size_t vs, size_t ve)
{
    return perr(p, IM_EPARSE, vs,
                "invalid value \"%.*s\": expected a float such as 1, -2.5e3, NaN or +Inf",
                (int)IM_MIN(ve - vs, 64), p->b + vs);
}

/* OpenMetrics exemplar after " # {" (p->i at the '{'). */
static int om_exemplar(expo_parser_t *p, size_t es, expo_entry_t *e)
{
    char g[24];
    p->i++;
    uint32_t nl;
    int rc = parse_labels(p, es, true, &nl);
    if (rc) return rc;
    size_t i = p->i;
    if (i >= p->n || p->b[i] != ' ')
        return perr(p, IM_EPARSE, i, "expected ' ' and the exemplar value, got %s", got(p, i, g));
    size_t vs = ++i;
    while (i < p->n && p->b[i] != ' ' && p->b[i] != '\n') i++;
    if (i == vs)
        return perr(p, IM_EPARSE, vs, "expected the exemplar value, got %s", got(p, vs, g));
    if (!expo__parse_float(p->b + vs, i - vs, &e->exemplar.value)) return bad_value(p, vs, i);
    e->exemplar.has_ts = false;
    if (i < p->n && p->b[i] == ' ') {
        size_t ts = ++i;
        while (i < p->n && p->b[i] != ' ' && p->b[i] != '\n') i++;
        if (i == ts || !om_ts(p->b + ts, i - ts, &e->exemplar.t_ms))
            return perr(p, IM_EPARSE, ts,
                        "invalid exemplar timestamp \"%.*s\": expected seconds since the epoch",
                        (int)IM_MIN(i - ts, 64), p->b + ts);
        e->exemplar.has_ts = true;
    }
    e->exemplar.labels = p->exl;
    e->exemplar.nlabels = nl;
    e->has_exemplar = true;
    p->i = i;
    return 0;
}

/* ---- Text-format fast path (structural masks) ----
 *
 * For the common line shape
 *     name[{l="v",...}] value[ timestamp]\n
 * with no whitespace but the single spaces shown, no backslash, carriage
 * return or byte >= 0x80 anywhere on the line, metric names under 56 bytes,
 * label names under 48, a line within the 16 KiB window and nothing in reach
 * of a limit. Lines, names, label values and the value are cut with tzcnt on
 * the masks of a window of classified input (scan.c). Anything else — and
 * every error — makes sample_fast return false having changed no parser state
 * but the window, the type cache and the label array's capacity; the general
 * code then parses the line, which gives the exact results, notes and
 * line:col messages. */

/* Mask bits of the window from byte r on: bit 0 = byte r, and at least 56
 * valid bits (the load may reach the zeroed word after the last block). */
IM_EXPO_INLINE uint64_t wbits(const uint64_t *arr, size_t r)
{
    uint64_t x;
    memcpy(&x, (const char *)arr + (r >> 3), 8);
    return x >> (r & 7);
}
#define W56 ((UINT64_C(1) << 56) - 1)

static void win_fill(expo_parser_t *p, size_t at)
{
    if (!p->win) p->win = im_malloc_tag(IM_MEM_EXPO, sizeof *p->win);
    size_t mis = (size_t)((uintptr_t)(p->b + at) & 63); /* aligned loads */
    if (mis <= at) at -= mis;
    p->wbase = at;
    p->wnblk = expo__classify(p->b + at, p->n - at, p->win, EXPO_WIN_BLKS, p->fast);
    p->wend = IM_MIN(p->n, at + 64 * p->wnblk);
}

/* First set bit of arr at or after window offset r, or SIZE_MAX when the
 * window has none. */
IM_EXPO_INLINE size_t win_next(const expo_parser_t *p, const uint64_t *arr, size_t r)
{
    size_t k = r >> 6;
    uint64_t m = arr[k] & (~UINT64_C(0) << (r & 63));
    while (!m) {
        if (++k >= p->wnblk) return SIZE_MAX;
        m = arr[k];
    }
    return 64 * k + (size_t)__builtin_ctzll(m);
}

/* a[0..n) == b[0..n), 8 bytes at a time (the last word overlapping), without
 * a call: names are short and mostly equal to the previous one. */
IM_EXPO_INLINE bool name_eq(const char *a, const char *b, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        if (expo__load8(a + i) != expo__load8(b + i)) return false;
    if (i == n) return true;
    if (n >= 8) return expo__load8(a + n - 8) == expo__load8(b + n - 8);
    return memcmp(a + i, b + i, n - i) == 0;
}

/* Window offset of the first line end (or other special byte) at or after r,
 * or SIZE_MAX: lines under 168 bytes without a branch on their length. */
IM_EXPO_INLINE size_t win_line_end(const expo_parser_t *p, size_t r)
{
    const uint64_t *e = p->win->e, top = UINT64_C(1) << 56;
    size_t t0 = (size_t)__builtin_ctzll((wbits(e, r) & W56) | top);
    size_t t1 = (size_t)__builtin_ctzll((wbits(e, r + 56) & W56) | top);
    size_t t2 = (size_t)__builtin_ctzll((wbits(e, r + 112) & W56) | top);
    size_t off = t0 < 56 ? t0 : t1 < 56 ? 56 + t1 : 112 + t2;
    if (IM_LIKELY(off < 168)) return r + off;
    return win_next(p, e, r + 168);
}

/* With GCC on x86-64, expo_parser_next (with the fast path inlined) is built
 * twice, the second copy for CPUs with BMI2 and AVX2 (x86-64-v3: shifts
 * without %cl, tzcnt, blsr), chosen once at load time. Not under ThreadSanitizer:
 * the resolver runs before the TSan runtime is initialised and crashes. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define FAST_CLONES __attribute__((target_clones("default", "arch=x86-64-v3")))
#else
#define FAST_CLONES
#endif

IM_EXPO_INLINE bool sample_fast(expo_parser_t *p, expo_entry_t *e)
{
    const char *b = p->b;
    const size_t ls = p->i;
    if (IM_UNLIKELY(ls < p->wbase || ls >= p->wend)) win_fill(p, ls);
    const expo_win_t *w = p->win;
    size_t le = win_line_end(p, ls - p->wbase);
    if (IM_UNLIKELY(le == SIZE_MAX)) {
        if (p->wend >= p->n || p->wbase == ls) return false;
        win_fill(p, ls); /* the line runs past the window: start one at it */
        le = win_line_end(p, ls - p->wbase);
        if (le == SIZE_MAX) return false;
    }
    const size_t base = p->wbase;
    le += base;
    if (IM_UNLIKELY(b[le] != '\n' || le - ls > p->lim.max_line_bytes)) return false;

    /* Metric name: the caller saw a valid first byte. */
    size_t nlen = (size_t)__builtin_ctzll(~wbits(w->nm, ls - base) | ~W56);
    size_t i = ls + nlen;
    uint32_t nl = 0;
    if (b[i] == '{') {
        size_t s = i + 1;
        expo_label_t *lab = p->lab, *lab_end = lab ? lab + p->lab_cap : NULL;
        /* The quotes of the label set, 56 at a time from qb on: popping them
         * keeps the labels' dependency chain at one blsr each. */
        size_t qb = ls; /* the metric name holds no quote */
        uint64_t q = wbits(w->q, qb - base) & W56;
        for (;;) {
            if (b[s] == '}') {
                i = s + 1;
                break;
            }
            while (IM_UNLIKELY(!q)) {
                if ((qb += 56) > le) return false;
                q = wbits(w->q, qb - base) & W56;
            }
            size_t open = qb + (size_t)__builtin_ctzll(q);
            q &= q - 1;
            while (IM_UNLIKELY(!q)) {
                if ((qb += 56) > le) return false;
                q = wbits(w->q, qb - base) & W56;
            }
            size_t close = qb + (size_t)__builtin_ctzll(q);
            q &= q - 1;
            /* name = [s, s+k) (1 to 47 bytes), '=' at s+k, value = (open, close) */
            size_t k = open - 1 - s;
            uint64_t need = (UINT64_C(1) << (k & 63)) - 1;
            if (IM_UNLIKELY(close >= le || k - 1 >= 47 || b[open - 1] != '=' ||
                            (wbits(w->ln, s - base) & need) != need ||
                            !(CLS(b[s]) & EXPO_C_LNAME1)))
                return false;
            if (IM_UNLIKELY(lab == lab_end)) {
                nl = lab ? (uint32_t)(lab - p->lab) : 0;
                if (nl >= p->lim.max_labels) return false;
                grow_labels(p, false);
                lab = p->lab + nl;
                lab_end = p->lab + p->lab_cap;
            }
            lab->name.p = b + s;
            lab->name.len = k;
            lab->value.p = b + open + 1;
            lab->value.len = close - (open + 1);
            lab++;
            char c = b[close + 1];
            s = close + 2;
            if (c == ',') continue;
            if (IM_UNLIKELY(c != '}')) return false;
            i = s;
            break;
        }
        nl = lab ? (uint32_t)(lab - p->lab) : 0;
        if (IM_UNLIKELY(nl > p->lim.max_labels)) return false;
    }
    if (IM_UNLIKELY(b[i] != ' ')) return false;
    size_t vs = i + 1;
    uint64_t sp = wbits(w->sp, vs - base) & W56;
    size_t ve = vs + (size_t)__builtin_ctzll(sp | ~W56);
    if (IM_UNLIKELY(ve > le))
        ve = le;
    else if (IM_UNLIKELY(!sp && le - vs > 56))
        return false;
    if (IM_UNLIKELY(ve == vs)) return false;
    if (IM_LIKELY(ve + 16 <= p->n)) {
        if (IM_UNLIKELY(!expo__parse_float_fast(b + vs, ve - vs, &e->value))) return false;
    } else if (!expo__parse_float(b + vs, ve - vs, &e->value)) {
        return false;
    }
    e->has_ts = false;
    if (IM_UNLIKELY(ve != le)) {
        /* " timestamp" up to the line end */
        size_t ts = ve + 1, j = ts;
        while ((unsigned char)(b[j] - '0') < 10) j++;
        if (b[ve] != ' ' || j == ts || j != le || !text_ts(b + ts, j - ts, &e->t_ms)) return false;
        e->has_ts = true;
    }
    e->kind = EXPO_ENTRY_SAMPLE;
    e->line = p->line;
    e->name.p = b + ls;
    e->name.len = nlen;
    if (nlen == p->tc_len && name_eq(e->name.p, p->tc_name, nlen)) {
        e->type = p->tc_type;
        e->family_len = p->tc_famlen;
    } else {
        e->type = p->tc_type = sample_type(p, e->name.p, nlen, &e->family_len);
        p->tc_name = e->name.p;
        p->tc_len = nlen;
        p->tc_famlen = e->family_len;
    }
    e->text.p = NULL;
    e->text.len = 0;
    e->has_exemplar = false;
    e->labels = p->lab;
    e->nlabels = nl;
    p->scr_len = 0;
    p->i = le + 1;
    p->line++;
    p->line_start = le + 1;
    return true;
}

/* Bytes that may end a text-format value: ' ', '\t', '\n', '{', and '\r' (only
 * before '\n'). */
static const bool value_stop[256] = {
    [' '] = true, ['\t'] = true, ['\n'] = true, ['{'] = true, ['\r'] = true};

static int sample(expo_parser_t *p, expo_entry_t *e)
{
    char g[24];
    const char *b = p->b;
    size_t n = p->n;
    size_t es = p->i, i = p->i + 1;
    bool om = p->fmt == EXPO_OPENMETRICS_1;
    if (!om && p->fast != EXPO_FAST_OFF && es != p->fast_skip && sample_fast(p, e)) return 0;
    i = scan_name(b, i, n, true);
    e->kind = EXPO_ENTRY_SAMPLE;
    e->line = p->line;
    e->name.p = b + es;
    e->name.len = i - es;
    e->type = sample_type(p, e->name.p, e->name.len, &e->family_len);
    e->text.p = NULL;
    e->text.len = 0;
    e->has_exemplar = false;
    e->has_ts = false;
    e->nlabels = 0;
    e->labels = p->lab;
    p->scr_len = 0;
    p->i = i;
    if (!om) skip_ws(p);
    if (p->i < n && b[p->i] == '{') {
        p->i++;
        size_t end;
        if (!om && labels_text_fast(p, es, &e->nlabels, &end)) {
            p->i = end;
        } else {
            int rc = parse_labels(p, es, false, &e->nlabels);
            if (rc) return rc;
        }
        e->labels = p->lab;
        if (!om) skip_ws(p);
    }
    i = p->i;
    size_t vs;
    if (om) {
        if (i >= n || b[i] != ' ')
            return perr(p, IM_EPARSE, i, "expected ' ' and a value after the metric, got %s",
                        got(p, i, g));
        vs = ++i;
        while (i < n && b[i] != ' ' && b[i] != '\n') i++;
    } else {
        vs = i;
        while (i < n) {
            unsigned char c = (unsigned char)b[i];
            if (IM_UNLIKELY(value_stop[c])) {
                if (c != '\r' || (i + 1 < n && b[i + 1] == '\n')) break;
            }
            i++;
        }
    }
    if (i == vs)
        return perr(p, IM_EPARSE, vs, "expected a value after the metric%s, got %s",
                    e->nlabels || (vs > 0 && b[vs - 1] == '}') ? " labels" : " name",
                    got(p, vs, g));
    if (IM_UNLIKELY(!expo__parse_float(b + vs, i - vs, &e->value))) {
        if (om && b[i - 1] == '\r') {
            p->i = i - 1;
            return eol(p, "");
        }
        return bad_value(p, vs, i);
    }
    p->i = i;
    if (om) {
        if (i < n && b[i] == ' ') {
            if (i + 3 < n && b[i + 1] == '#' && b[i + 2] == ' ' && b[i + 3] == '{') {
                p->i = i + 3;
                int rc = om_exemplar(p, es, e);
                if (rc) return rc;
            } else {
                size_t ts = ++i;
                while (i < n && b[i] != ' ' && b[i] != '\n') i++;
                if (i == ts || !om_ts(b + ts, i - ts, &e->t_ms))
                    return perr(p, IM_EPARSE, ts,
                                "invalid timestamp \"%.*s\": expected seconds since the epoch "
                                "such as 1700000000.123",
                                (int)IM_MIN(i - ts, 64), b + ts);
                e->has_ts = true;
                p->i = i;
                if (i + 3 < n && b[i] == ' ' && b[i + 1] == '#' && b[i + 2] == ' ' &&
                    b[i + 3] == '{') {
                    p->i = i + 3;
                    int rc = om_exemplar(p, es, e);
                    if (rc) return rc;
                }
            }
        }
        if (p->i - es > p->lim.max_line_bytes) return limit_err(p, es);
        return eol(p, "end of line after the sample (or ' # {' and an exemplar)");
    }
    skip_ws(p);
    i = p->i;
    if (i < n && b[i] >= '0' && b[i] <= '9') {
        size_t ts = i;
        while (i < n && b[i] >= '0' && b[i] <= '9') i++;
        if (!text_ts(b + ts, i - ts, &e->t_ms))
            return perr(p, IM_EPARSE, ts, "timestamp \"%.*s\" is out of range (int64 ms)",
                        (int)IM_MIN(i - ts, 64), b + ts);
        e->has_ts = true;
        p->i = i;
        skip_ws(p);
        if (p->i - es > p->lim.max_line_bytes) return limit_err(p, es);
        return eol(p, "end of line after the timestamp");
    }
    if (p->i - es > p->lim.max_line_bytes) return limit_err(p, es);
    return eol(p, "a timestamp (integer milliseconds) or end of line");
}

/* Finds the end of the current line from i: returns the index of '\n' or n. */
static size_t line_end(const expo_parser_t *p, size_t i)
{
    const char *nl = i < p->n ? memchr(p->b + i, '\n', p->n - i) : NULL;
    return nl ? (size_t)(nl - p->b) : p->n;
}

/* HELP/TYPE/UNIT after the keyword and its separator (p->i at the name). */
static int meta(expo_parser_t *p, expo_entry_kind_t kind, size_t es, expo_entry_t *e)
{
    char g[24];
    bool om = p->fmt == EXPO_OPENMETRICS_1;
    static const char *const kw[] = {"", "", "HELP", "TYPE", "UNIT"};
    const char *b = p->b;
    size_t i = p->i;
    if (!om) {
        skip_ws(p);
        i = p->i;
    }
    if (i >= p->n || !(CLS(b[i]) & EXPO_C_NAME1))
        return perr(p, IM_EPARSE, i, "expected a metric name after %s, got %s", kw[kind],
                    got(p, i, g));
    size_t ns = i++;
    i = scan_name(b, i, p->n, true);
    e->kind = kind;
    e->line = p->line;
    e->name.p = b + ns;
    e->name.len = i - ns;
    e->nlabels = 0;
    e->labels = NULL;
    e->has_ts = e->has_exemplar = false;
    e->type = EXPO_TYPE_UNKNOWN;
    e->family_len = e->name.len;
    size_t le = line_end(p, i);
    if (le - es > p->lim.max_line_bytes) return limit_err(p, es);
    size_t ts;
    if (om) {
        if (i >= p->n || b[i] != ' ')
            return perr(p, IM_EPARSE, i, "expected ' ' after the metric name in %s, got %s",
                        kw[kind], got(p, i, g));
        if (le >= p->n)
            return perr(p, IM_EPARSE, le, "expected end of line after %s, got end of input",
                        kw[kind]);
        ts = i + 1;
    } else {
        if (i < le && b[i] != ' ' && b[i] != '\t' && !(b[i] == '\r' && i + 1 == le))
            return perr(p, IM_EPARSE, i, "expected whitespace after the metric name in %s, got %s",
                        kw[kind], got(p, i, g));
        ts = i < le ? i + 1 : i;
    }
    size_t te = le;
    if (!om && te > ts && b[te - 1] == '\r') {
        te--;
        note_line(&p->notes.crlf_line, p->line);
    }
    if (om && te > ts && b[te - 1] == '\r') {
        p->i = te - 1;
        return eol(p, "");
    }
    if (te < ts) te = ts;
    e->text.p = b + ts;
    e->text.len = te - ts;
    p->scr_len = 0;
    if (kind == EXPO_ENTRY_HELP) {
        if (!im_utf8_valid(e->text.p, e->text.len))
            return perr(p, IM_EPARSE, ts, "invalid UTF-8 in HELP text");
        if (memchr(e->text.p, '\\', e->text.len)) {
            size_t ul, o = unescape(p, e->text.p, e->text.len, om, &ul);
            e->text.p = p->scr + o;
            e->text.len = ul;
        }
    } else if (kind == EXPO_ENTRY_TYPE) {
        if (!type_from_text(e->text.p, e->text.len, p->fmt, &e->type))
            return perr(p, IM_EPARSE, ts, "invalid metric type \"%.*s\" (expected %s)",
                        (int)IM_MIN(e->text.len, 64), e->text.p,
                        om ? "counter, gauge, histogram, gaugehistogram, summary, info, "
                             "stateset or unknown"
                           : "counter, gauge, histogram, summary or untyped");
        p->fam = e->name.p;
        p->fam_len = e->name.len;
        p->fam_type = e->type;
        p->tc_len = 0;
    } else if (kind == EXPO_ENTRY_UNIT) {
        size_t ul = e->text.len, nl = e->name.len;
        if (ul > 0 && (nl < ul + 1 || memcmp(e->name.p + nl - ul, e->text.p, ul) != 0 ||
                       e->name.p[nl - ul - 1] != '_'))
            return perr(p, IM_EPARSE, ts,
                        "unit \"%.*s\" is not a suffix of the metric name \"%.*s\" "
                        "(expected the name to end in \"_%.*s\")",
                        (int)IM_MIN(ul, 64), e->text.p, (int)IM_MIN(nl, 128), e->name.p,
                        (int)IM_MIN(ul, 64), e->text.p);
    }
    p->i = le;
    if (le >= p->n) {
        p->notes.no_final_newline = true;
        return 0;
    }
    p->i = le + 1;
    p->line++;
    p->line_start = p->i;
    return 0;
}

static int next_text(expo_parser_t *p, expo_entry_t *e)
{
    char g[24];
    const char *b = p->b;
    for (;;) {
        skip_ws(p);
        size_t i = p->i;
        if (i >= p->n) {
            p->rc = 1;
            return 0;
        }
        char c = b[i];
        if (IM_LIKELY(CLS(c) & EXPO_C_NAME1)) {
            int rc = sample(p, e);
            return rc ? rc : 1;
        }
        if (c == '\n' || (c == '\r' && i + 1 < p->n && b[i + 1] == '\n')) {
            int rc = eol(p, "end of line");
            if (rc) return rc;
            continue;
        }
        if (c == '#') {
            size_t j = i + 1;
            if (j < p->n && (b[j] == ' ' || b[j] == '\t')) {
                while (j < p->n && (b[j] == ' ' || b[j] == '\t')) j++;
                expo_entry_kind_t kind = 0;
                if (j + 4 < p->n && (b[j + 4] == ' ' || b[j + 4] == '\t')) {
                    if (memcmp(b + j, "HELP", 4) == 0) kind = EXPO_ENTRY_HELP;
                    if (memcmp(b + j, "TYPE", 4) == 0) kind = EXPO_ENTRY_TYPE;
                }
                if (kind) {
                    p->i = j + 5;
                    int rc = meta(p, kind, i, e);
                    return rc ? rc : 1;
                }
            }
            /* A free comment. */
            size_t le = line_end(p, j);
            if (le - i > p->lim.max_line_bytes) return limit_err(p, i);
            if (le > i && b[le - 1] == '\r' && le < p->n) note_line(&p->notes.crlf_line, p->line);
            p->i = le;
            if (le >= p->n) {
                p->notes.no_final_newline = true;
                continue;
            }
            p->i = le + 1;
            p->line++;
            p->line_start = p->i;
            continue;
        }
        return perr(p, IM_EPARSE, i, "expected a metric name, a comment or end of line, got %s",
                    got(p, i, g));
    }
}

static int next_om(expo_parser_t *p, expo_entry_t *e)
{
    char g[24];
    const char *b = p->b;
    size_t i = p->i;
    if (i >= p->n) {
        if (p->eof_seen) {
            p->rc = 1;
            return 0;
        }
        return perr(p, IM_EPARSE, i, "expected \"# EOF\" as the last line of OpenMetrics input");
    }
    char c = b[i];
    if (IM_LIKELY(CLS(c) & EXPO_C_NAME1)) {
        int rc = sample(p, e);
        return rc ? rc : 1;
    }
    if (c == '#') {
        if (i + 1 < p->n && b[i + 1] == ' ') {
            const char *k = b + i + 2;
            size_t rest = p->n - (i + 2);
            expo_entry_kind_t kind = 0;
            if (rest >= 5 && k[4] == ' ') {
                if (memcmp(k, "HELP", 4) == 0) kind = EXPO_ENTRY_HELP;
                if (memcmp(k, "TYPE", 4) == 0) kind = EXPO_ENTRY_TYPE;
                if (memcmp(k, "UNIT", 4) == 0) kind = EXPO_ENTRY_UNIT;
            }
            if (kind) {
                p->i = i + 7;
                int rc = meta(p, kind, i, e);
                return rc ? rc : 1;
            }
            if (rest >= 3 && memcmp(k, "EOF", 3) == 0 && (rest == 3 || k[3] == '\n')) {
                memset(e, 0, sizeof *e);
                e->kind = EXPO_ENTRY_EOF;
                e->line = p->line;
                size_t j = i + 5;
                if (j < p->n) {
                    j++;
                    p->line++;
                    p->line_start = j;
                }
                if (j < p->n) {
                    p->i = j;
                    return perr(p, IM_EPARSE, j, "unexpected data after \"# EOF\"");
                }
                p->i = j;
                p->eof_seen = true;
                return 1;
            }
        }
        return perr(p, IM_EPARSE, i,
                    "expected \"# HELP\", \"# TYPE\", \"# UNIT\" or \"# EOF\" (OpenMetrics has "
                    "no other comments)");
    }
    if (c == '\n')
        return perr(p, IM_EPARSE, i, "unexpected empty line (not allowed in OpenMetrics)");
    return perr(p, IM_EPARSE, i, "expected a metric name or \"#\", got %s", got(p, i, g));
}

FAST_CLONES int expo_parser_next(expo_parser_t *p, expo_entry_t *e, im_err_t *err)
{
    if (IM_UNLIKELY(p->rc != 0)) {
        if (p->rc < 0 && err) *err = p->err;
        return p->rc < 0 ? p->rc : 0;
    }
    if (p->fmt == EXPO_TEXT_004 && IM_LIKELY(p->fast != EXPO_FAST_OFF)) {
        /* The common case first: a sample line for the fast path. */
        size_t i = p->i;
        if (IM_LIKELY(i < p->n && (CLS(p->b[i]) & EXPO_C_NAME1))) {
            if (IM_LIKELY(sample_fast(p, e))) return 1;
            p->fast_skip = i;
        }
    }
    int rc = p->fmt == EXPO_OPENMETRICS_1 ? next_om(p, e) : next_text(p, e);
    if (IM_UNLIKELY(rc < 0) && err) *err = p->err;
    return rc;
}

int expo_parse(const char *buf, size_t len, expo_format_t f, const expo_callbacks_t *cb, void *user,
               const expo_limits_t *limits, im_err_t *err)
{
    expo_parser_t *p = expo_parser_new(limits);
    int rc = expo_parser_reset(p, buf, len, f, err);
    expo_entry_t e;
    while (rc == IM_OK) {
        int r = expo_parser_next(p, &e, err);
        if (r <= 0) {
            rc = r;
            break;
        }
        if (e.kind == EXPO_ENTRY_SAMPLE) {
            if (cb && cb->sample) rc = cb->sample(user, &e);
        } else if (cb && cb->meta) {
            rc = cb->meta(user, &e);
        }
    }
    expo_parser_free(p);
    return rc;
}

const im_labels_t *expo_entry_labels(const expo_entry_t *e, im_labels_builder_t *lb)
{
    im_lb_reset(lb);
    for (uint32_t i = 0; i < e->nlabels; i++)
        im_lb_set(lb, e->labels[i].name.p, e->labels[i].name.len, e->labels[i].value.p,
                  e->labels[i].value.len);
    im_lb_set(lb, IM_METRIC_NAME, sizeof IM_METRIC_NAME - 1, e->name.p, e->name.len);
    return im_lb_build(lb);
}
