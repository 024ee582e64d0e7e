/* flags.c — the declarative flag tables of the subcommands (cli/flags.h):
 * argv scanning, conversion into the destination struct, status pairs, help. */
#include "util/base.h"

#include <assert.h>
#include <stdlib.h>

#include "cli/flags.h"
#include "config/yaml.h"
#include "util/timeutil.h"

#define HELP_COLUMN 37

static const char *const kind_noun[] = {
    [CLI_FLAG_DUR] = "duration", [CLI_FLAG_SIZE] = "size", [CLI_FLAG_INT] = "number"};

const cli_flag_t *cli_flags_find(const cli_flagset_t *s, const char *name)
{
    for (size_t k = 0; k < s->n; k++)
        if (!strcmp(s->flags[k].name, name)) return &s->flags[k];
    return NULL;
}

/* Scans argv into vals; 0 or 2 (message printed). */
static int scan(const cli_flagset_t *s, int argc, char **argv, const char **vals)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "infermon %s: unexpected argument \"%s\"\n", s->cmd, a);
            if (s->usage) s->usage(stderr);
            return 2;
        }
        a += 2;
        const char *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a) : strlen(a), k;
        for (k = 0; k < s->n; k++)
            if (strlen(s->flags[k].name) == nl && !strncmp(s->flags[k].name, a, nl)) break;
        if (k == s->n) {
            fprintf(stderr, "infermon %s: unknown flag --%.*s\n", s->cmd, (int)nl, a);
            return 2;
        }
        if (s->flags[k].kind == CLI_FLAG_BOOL)
            vals[k] = eq ? eq + 1 : "true";
        else if (eq)
            vals[k] = eq + 1;
        else if (i + 1 < argc)
            vals[k] = argv[++i];
        else {
            fprintf(stderr, "infermon %s: flag --%s needs a value\n", s->cmd, s->flags[k].name);
            return 2;
        }
    }
    return 0;
}

static void store_int(void *field, size_t size, int64_t x)
{
    if (size == sizeof(int64_t)) {
        memcpy(field, &x, sizeof x);
    } else {
        assert(size == sizeof(int32_t));
        uint32_t u = (uint32_t)x; /* the range check keeps x within the field */
        memcpy(field, &u, sizeof u);
    }
}

/* "a|b|c" → "a, b or c" on f. */
static void print_choices(FILE *f, const char *choices)
{
    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        fprintf(f, "%.*s", (int)len, p);
        if (!bar) break;
        p = bar + 1;
        fputs(strchr(p, '|') ? ", " : " or ", f);
    }
}

static bool is_choice(const char *choices, const char *v)
{
    size_t vl = strlen(v);
    for (const char *p = choices;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == vl && !strncmp(p, v, vl)) return true;
        if (!bar) return false;
        p = bar + 1;
    }
}

/* Converts the value v of row f into its field; 0 or 2 (message printed). */
static int convert(const char *cmd, const cli_flag_t *f, const char *v, char *base)
{
    void *field = base + f->off;
    int64_t x = 0;
    bool ok = true;
    switch (f->kind) {
    case CLI_FLAG_STR: memcpy(field, &v, sizeof v); return 0;
    case CLI_FLAG_BOOL: {
        bool b = strcmp(v, "false") != 0;
        memcpy(field, &b, sizeof b);
        return 0;
    }
    case CLI_FLAG_ENUM:
        if (!is_choice(f->choices, v)) {
            fprintf(stderr, "infermon %s: --%s must be ", cmd, f->name);
            print_choices(stderr, f->choices);
            fputc('\n', stderr);
            return 2;
        }
        memcpy(field, &v, sizeof v);
        return 0;
    case CLI_FLAG_DUR: ok = im_duration_parse(v, strlen(v), &x, NULL) == IM_OK; break;
    case CLI_FLAG_SIZE: ok = cfg_parse_bytes(v, &x) == IM_OK; break;
    case CLI_FLAG_INT: {
        char *end;
        x = strtoll(v, &end, 10);
        ok = end != v && !*end;
        break;
    }
    }
    if (!ok || (f->hi && (x < f->lo || x > f->hi))) {
        fprintf(stderr, "infermon %s: --%s: bad %s \"%s\"%s\n", cmd, f->name, kind_noun[f->kind], v,
                f->hint ? f->hint : "");
        return 2;
    }
    if (x == 0 && (f->opts & CLI_FLAG_ZERO_IS_NONE)) x = -1;
    store_int(field, f->size, x);
    return 0;
}

int cli_flags_parse(const cli_flagset_t *s, int argc, char **argv, void *dst, const char **vals)
{
    for (size_t k = 0; k < s->n; k++) vals[k] = NULL;
    int st = scan(s, argc, argv, vals);
    for (size_t k = 0; k < s->n && !st; k++)
        if (vals[k]) st = convert(s->cmd, &s->flags[k], vals[k], dst);
    return st;
}

void cli_flags_pairs(const cli_flagset_t *s, const char *const *vals, const char **pairs)
{
    size_t np = 0;
    for (size_t k = 0; k < s->n; k++) {
        pairs[np++] = s->flags[k].name;
        pairs[np++] = vals[k] ? vals[k] : s->flags[k].def ? s->flags[k].def : "";
    }
    pairs[np] = NULL;
}

void cli_flags_usage(FILE *f, const cli_flagset_t *s)
{
    for (size_t k = 0; k < s->n; k++) {
        const cli_flag_t *fl = &s->flags[k];
        int w = fprintf(f, "  --%s%s%s", fl->name, fl->arg ? "=" : "", fl->arg ? fl->arg : "");
        fprintf(f, "%*s", w < HELP_COLUMN ? HELP_COLUMN - w : 2, "");
        for (const char *p = fl->help; *p; p++)
            if (*p == '\n')
                fprintf(f, "\n%*s", HELP_COLUMN, "");
            else
                fputc(*p, f);
        fputc('\n', f);
    }
}
