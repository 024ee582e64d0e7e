/* parse_int.h — the parser's state, shared by parse.c and check.c (private to
 * src/expo). */
#ifndef IM_EXPO_PARSE_INT_H
#define IM_EXPO_PARSE_INT_H

#include "expo/expo.h"

/* Things the parser accepts but Prometheus (or promtool) would not, or only
 * tolerates; expo_check turns them into problems. Lines are the first seen. */
typedef struct expo_parse_notes {
    int crlf_line;          /* a line ended with \r\n (text format) */
    bool no_final_newline;  /* the input does not end with \n (text format) */
    int missing_comma_line; /* labels without a comma between them (text) */
    int bad_escape_line;    /* a backslash escape other than \\ \" \n (text) */
    int bad_escape_col;
} expo_parse_notes_t;

struct expo_parser {
    expo_limits_t lim;
    const char *b; /* borrowed input */
    size_t n, i;   /* length, current position */
    expo_format_t fmt;
    int line;          /* current line, 1-based */
    size_t line_start; /* offset of the current line's first byte */
    int rc;            /* 0 running, 1 finished, < 0 sticky error */
    bool eof_seen;     /* OpenMetrics # EOF read */
    im_err_t err;      /* the sticky error */
    expo_label_t *lab; /* owned, lab_cap entries: the sample's labels */
    uint32_t *lab_off; /* owned: scratch offset + 1 of an unescaped value, or 0 */
    uint32_t lab_cap;
    expo_label_t *exl; /* owned: the exemplar's labels */
    uint32_t *exl_off;
    uint32_t exl_cap;
    char *scr; /* owned scratch for unescaped bytes of one entry */
    size_t scr_len, scr_cap;
    const char *fam; /* borrowed: family name of the last TYPE line */
    size_t fam_len;
    expo_type_t fam_type;
    expo_parse_notes_t notes;
};

const expo_parse_notes_t *expo__parser_notes(const expo_parser_t *p);

#endif
