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

#define EXPO_WIN_BLKS 256 /* the window of classified input: 16 KiB */

/* The structural masks of a window of input (bit k of word j = byte 64j + k),
 * made by expo__classify (scan.c) for the text-format fast path in parse.c.
 * One array per class so that 64 bits at any byte offset are one unaligned
 * load; each has three zeroed words after the last classified block. */
typedef struct expo_win {
    uint64_t q[EXPO_WIN_BLKS + 4];  /* '"' */
    uint64_t ln[EXPO_WIN_BLKS + 4]; /* label-name characters [a-zA-Z0-9_] */
    uint64_t nm[EXPO_WIN_BLKS + 4]; /* metric-name characters [a-zA-Z0-9_:] */
    uint64_t sp[EXPO_WIN_BLKS + 4]; /* ' ' */
    uint64_t e[EXPO_WIN_BLKS + 4];  /* what a fast line cannot hold: '\\' '\n' '\r' >= 0x80 */
} expo_win_t;

/* expo_parser.fast: which sample path the text parser takes (tests compare them). */
enum {
    EXPO_FAST_AUTO = 0, /* fast path, best classifier for the CPU */
    EXPO_FAST_OFF,      /* general path only */
    EXPO_FAST_SCALAR,   /* fast path, portable scalar classifier */
    EXPO_FAST_SSE2,     /* fast path, SSE2 classifier (x86-64; scalar elsewhere) */
    EXPO_FAST_AVX2,     /* fast path, AVX2 classifier if the CPU has it, else SSE2 */
};

/* Classifies min(max_blk, ceil(len / 64)) blocks of b into out (a partial last
 * block is padded with bytes of no class) and zeroes three words after them;
 * returns the number of blocks (max_blk <= EXPO_WIN_BLKS). */
size_t expo__classify(const char *b, size_t len, expo_win_t *out, size_t max_blk, int mode);

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
    int fast;            /* EXPO_FAST_* */
    expo_win_t *win;     /* owned, allocated on first use */
    size_t wbase;        /* input offset of win[0] */
    size_t wend;         /* input offset after the last classified byte */
    size_t wnblk;        /* classified blocks */
    size_t fast_skip;    /* the fast path failed on the sample at this offset */
    const char *tc_name; /* borrowed: the last fast-path sample name, and its */
    size_t tc_len;       /* type and family length (0 = none; reset by TYPE) */
    size_t tc_famlen;
    expo_type_t tc_type;
};

const expo_parse_notes_t *expo__parser_notes(const expo_parser_t *p);

#endif
