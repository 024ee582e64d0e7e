/* fuzz_expo.c — libFuzzer target for the exposition parsers, validator and
 * writers. The first byte picks the format (bit 0: OpenMetrics) and small limits
 * (bit 1); the rest is the input. Every input goes through expo_check (the
 * validator) and the iterator; inputs the parser accepts are written back with
 * the writer of the same format and parsed again, and the two entry sequences
 * must be identical (names, labels, values bit for bit with NaN = NaN,
 * timestamps, exemplars, HELP/TYPE/UNIT). The text parser's fast path
 * (structural masks) is checked against its general path in lockstep: same
 * entries, same error with the same line:col message. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "expo/expo.h"
#include "expo/parse_int.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void no_report(void *user, const expo_problem_t *pr)
{
    size_t *n = user;
    if (!pr->message || pr->line < 0 || pr->col < 0) abort();
    (*n)++;
}

static bool same_double(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

static bool same_labels(const expo_label_t *a, const expo_label_t *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!im_sv_eq(a[i].name, b[i].name) || !im_sv_eq(a[i].value, b[i].value)) return false;
    return true;
}

/* Writes one entry. */
static void write_entry(expo_writer_t *w, const expo_entry_t *e)
{
    switch (e->kind) {
    case EXPO_ENTRY_SAMPLE:
        (void)expo_write_sample(w, e->name, e->labels, e->nlabels, e->value, e->has_ts, e->t_ms,
                                e->has_exemplar ? &e->exemplar : NULL);
        break;
    case EXPO_ENTRY_HELP: (void)expo_write_help(w, e->name, e->text); break;
    case EXPO_ENTRY_TYPE: (void)expo_write_type(w, e->name, e->type); break;
    case EXPO_ENTRY_UNIT: (void)expo_write_unit(w, e->name, e->text); break;
    case EXPO_ENTRY_EOF: (void)expo_write_eof(w); break;
    }
}

static void compare(const expo_entry_t *a, const expo_entry_t *b)
{
    bool ok = a->kind == b->kind && im_sv_eq(a->name, b->name);
    if (ok && a->kind == EXPO_ENTRY_SAMPLE) {
        ok = a->nlabels == b->nlabels && same_labels(a->labels, b->labels, a->nlabels) &&
             same_double(a->value, b->value) && a->has_ts == b->has_ts &&
             (!a->has_ts || a->t_ms == b->t_ms) && a->has_exemplar == b->has_exemplar;
        if (ok && a->has_exemplar)
            ok = a->exemplar.nlabels == b->exemplar.nlabels &&
                 same_labels(a->exemplar.labels, b->exemplar.labels, a->exemplar.nlabels) &&
                 same_double(a->exemplar.value, b->exemplar.value) &&
                 a->exemplar.has_ts == b->exemplar.has_ts &&
                 (!a->exemplar.has_ts || a->exemplar.t_ms == b->exemplar.t_ms);
    } else if (ok && (a->kind == EXPO_ENTRY_HELP || a->kind == EXPO_ENTRY_UNIT)) {
        /* Text format cannot carry a HELP text ending in \r (it reads as CRLF). */
        im_sv_t x = a->text, y = b->text;
        while (x.len && x.p[x.len - 1] == '\r') x.len--;
        while (y.len && y.p[y.len - 1] == '\r') y.len--;
        ok = im_sv_eq(x, y);
    } else if (ok && a->kind == EXPO_ENTRY_TYPE) {
        ok = a->type == b->type;
    }
    if (!ok) {
        fprintf(stderr, "round trip changed the entry at line %d (kind %d, %.*s)\n", a->line,
                a->kind, (int)a->name.len, a->name.p);
        abort();
    }
}

/* Fast path (default) and general path only, in lockstep on the same input. */
static void fast_vs_general(const char *in, size_t len, expo_format_t f, const expo_limits_t *lim)
{
    expo_parser_t *a = expo_parser_new(lim), *g = expo_parser_new(lim);
    g->fast = EXPO_FAST_OFF;
    if (expo_parser_reset(a, in, len, f, NULL) != IM_OK) abort();
    if (expo_parser_reset(g, in, len, f, NULL) != IM_OK) abort();
    expo_entry_t x, y;
    im_err_t ea, eg;
    for (;;) {
        int ra = expo_parser_next(a, &x, &ea), rg = expo_parser_next(g, &y, &eg);
        if (ra != rg) {
            fprintf(stderr, "fast path returned %d, general path %d\n", ra, rg);
            abort();
        }
        if (ra < 0) {
            if (ea.line != eg.line || ea.col != eg.col || strcmp(ea.msg, eg.msg) != 0) {
                fprintf(stderr, "fast path error %d:%d: %s\ngeneral path error %d:%d: %s\n",
                        ea.line, ea.col, ea.msg, eg.line, eg.col, eg.msg);
                abort();
            }
            break;
        }
        if (ra == 0) break;
        compare(&x, &y);
        if (x.line != y.line || x.type != y.type || x.family_len != y.family_len ||
            x.name.p != y.name.p) {
            fprintf(stderr, "fast path entry differs at line %d\n", y.line);
            abort();
        }
    }
    const expo_parse_notes_t *na = expo__parser_notes(a), *ng = expo__parser_notes(g);
    if (na->crlf_line != ng->crlf_line || na->no_final_newline != ng->no_final_newline ||
        na->missing_comma_line != ng->missing_comma_line ||
        na->bad_escape_line != ng->bad_escape_line || na->bad_escape_col != ng->bad_escape_col)
        abort();
    expo_parser_free(a);
    expo_parser_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    expo_format_t f = (data[0] & 1) ? EXPO_OPENMETRICS_1 : EXPO_TEXT_004;
    expo_limits_t lim = {0};
    if (data[0] & 2) {
        lim.max_line_bytes = 64;
        lim.max_labels = 3;
    }
    const char *in = (const char *)data + 1;
    size_t len = size - 1;

    /* The validator. */
    size_t nprob = 0;
    expo_check_stats_t st;
    expo_check_opts_t opts = {.limits = lim, .lint = true};
    im_rc crc = expo_check(in, len, f, &opts, no_report, &nprob, &st);
    if (nprob != st.errors + st.warnings || (crc == IM_OK) != (st.errors == 0)) abort();
    if (st.series > st.samples) abort();
    fast_vs_general(in, len, f, &lim);

    /* Parse, write back. */
    expo_parser_t *p = expo_parser_new(&lim);
    im_buf_t out;
    im_buf_init(&out, 0);
    expo_writer_t w;
    expo_writer_init(&w, &out, f);
    expo_entry_t e;
    int r;
    size_t n = 0;
    if (expo_parser_reset(p, in, len, f, NULL) != IM_OK) abort();
    while ((r = expo_parser_next(p, &e, NULL)) > 0) {
        write_entry(&w, &e);
        n++;
    }
    if (r == 0 && w.rc == IM_OK) {
        /* Accepted: the written text must parse to the same entries. Parse the
         * original again in lockstep (entries are only valid until next). */
        expo_limits_t big = {.max_line_bytes = (size_t)1 << 30, .max_labels = 1u << 20};
        expo_parser_t *p1 = expo_parser_new(&lim);
        expo_parser_t *p2 = expo_parser_new(&big);
        if (expo_parser_reset(p1, in, len, f, NULL) != IM_OK) abort();
        if (expo_parser_reset(p2, out.data ? out.data : "", out.len, f, NULL) != IM_OK) abort();
        expo_entry_t a, b;
        im_err_t err;
        for (size_t i = 0; i < n; i++) {
            if (expo_parser_next(p1, &a, NULL) != 1) abort();
            if (expo_parser_next(p2, &b, &err) != 1) {
                fprintf(stderr, "written output does not parse: %d:%d: %s\n%s\n", err.line, err.col,
                        err.msg, out.data);
                abort();
            }
            compare(&a, &b);
        }
        if (expo_parser_next(p2, &b, NULL) != 0) abort();
        expo_parser_free(p1);
        expo_parser_free(p2);
    }
    im_buf_free(&out);
    expo_parser_free(p);
    return 0;
}
