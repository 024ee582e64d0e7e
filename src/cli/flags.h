/* flags.h — a subcommand's flags as one declarative table.
 *
 * Each row names a flag, its default (as /api/v1/status/flags shows it), how
 * its value is read, where it is stored and its help text, so adding a flag is
 * adding one row. cli_flags_parse reads `--name=value`, `--name value` and (for
 * booleans) `--name` / `--name=false`, then converts every given value in table
 * order into the destination struct; cli_flags_usage prints the help column.
 *
 * Messages (stderr, "infermon <cmd>: " first):
 *   unexpected argument "X"   (then the command's usage)
 *   unknown flag --X
 *   flag --X needs a value
 *   --X: bad duration|size|number "V"<hint>
 *   --X must be a, b or c     (CLI_FLAG_ENUM) */
#ifndef IM_CLI_FLAGS_H
#define IM_CLI_FLAGS_H

#include <stdio.h>

#include "util/base.h"

typedef enum cli_flag_kind {
    CLI_FLAG_STR,  /* const char *: the argv string (borrowed) */
    CLI_FLAG_BOOL, /* bool: `--x` or `--x=V` with V anything but "false" */
    CLI_FLAG_DUR,  /* int64_t milliseconds, a Prometheus duration */
    CLI_FLAG_SIZE, /* an integer field: bytes with Go units (cfg_parse_bytes) */
    CLI_FLAG_INT,  /* an integer field: a decimal number */
    CLI_FLAG_ENUM, /* const char *: one of `choices` */
} cli_flag_kind_t;

/* A given 0 is stored as -1: the field's "none" (0 there means the default). */
#define CLI_FLAG_ZERO_IS_NONE 1u

typedef struct cli_flag {
    const char *name; /* without the leading "--" */
    const char *arg;  /* the value's placeholder in the help ("FILE"); NULL for a boolean */
    const char *def;  /* the default shown in /api/v1/status/flags; NULL = the caller's */
    cli_flag_kind_t kind;
    size_t off, size; /* the destination field: offsetof and sizeof (CLI_FLAG_FIELD) */
    /* DUR/SIZE/INT: the accepted range, inclusive; hi == 0 = any value */
    int64_t lo, hi;
    unsigned opts;       /* CLI_FLAG_ZERO_IS_NONE */
    const char *choices; /* ENUM: "a|b|c" */
    const char *hint;    /* appended to the bad-value message, e.g. " (1..1024)" */
    const char *help;    /* the help text; '\n' continues on the next line */
} cli_flag_t;

/* The offset and size of a field of struct type T, for cli_flag_t.off/size. */
#define CLI_FLAG_FIELD(T, field) offsetof(T, field), sizeof(((T *)0)->field)

typedef struct cli_flagset {
    const char *cmd; /* "run": messages start "infermon run: " */
    const cli_flag_t *flags;
    size_t n;
    void (*usage)(FILE *f); /* printed to stderr after an unexpected argument */
} cli_flagset_t;

/* Parses argv[1..argc) into dst (the struct the rows' offsets point into);
 * vals[k] (OUT, n entries) is the string given for row k, NULL if not given.
 * Returns 0, or 2 with the message on stderr. */
int cli_flags_parse(const cli_flagset_t *s, int argc, char **argv, void *dst, const char **vals);

/* The row named name, or NULL. */
const cli_flag_t *cli_flags_find(const cli_flagset_t *s, const char *name);

/* Name/value pairs for /api/v1/status/flags into pairs (2n+1 entries, NULL
 * terminated): the given value, else the row's default ("" for a NULL one). */
void cli_flags_pairs(const cli_flagset_t *s, const char *const *vals, const char **pairs);

/* The help column: "  --name=ARG" padded to column 37 (two blanks when longer),
 * the help text, continuation lines indented to that column. */
void cli_flags_usage(FILE *f, const cli_flagset_t *s);

#endif
