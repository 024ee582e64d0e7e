/* common.c — helpers shared by the subcommands, and `infermon version`. */
#include "util/base.h"

#include <errno.h>
#include <stdio.h>

#include "cli/cli.h"

int cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    return 0;
}

int cli_read_file(const char *path, char **data, size_t *len, size_t max_bytes)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "infermon: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = im_malloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (cap >= max_bytes) {
                fprintf(stderr, "infermon: %s is larger than %zu bytes\n", path, max_bytes);
                im_free(buf);
                if (f != stdin) fclose(f);
                return -1;
            }
            cap = cap * 2 > max_bytes ? max_bytes : cap * 2;
            buf = im_realloc(buf, cap + 1);
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    int bad = ferror(f);
    if (f != stdin) fclose(f);
    if (bad) {
        fprintf(stderr, "infermon: error reading %s\n", path);
        im_free(buf);
        return -1;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

int cli_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("infermon, version %s\n", INFERMON_VERSION);
    return 0;
}
