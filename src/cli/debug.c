/* debug.c — `infermon debug …`: small hidden tools the peer tests use to compare
 * our building blocks with the real Prometheus (float formatting, durations,
 * timestamps). Not part of the user-facing command list. */
#include "util/base.h"

#include <stdio.h>

#include "cli/cli.h"
#include "util/fmtfloat.h"
#include "util/timeutil.h"

static int debug_float(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        double v;
        if (!im_parse_float(argv[i], strlen(argv[i]), &v)) {
            fprintf(stderr, "infermon debug float: not a number: %s\n", argv[i]);
            return 2;
        }
        char api[IM_FLOAT_BUF], expo[IM_FLOAT_BUF];
        im_fmt_float_api(v, api, sizeof api);
        im_fmt_float_expo(v, expo, sizeof expo);
        printf("%s\t%s\t%s\n", argv[i], api, expo);
    }
    return 0;
}

static int debug_duration(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        int64_t ms;
        im_err_t err;
        im_err_clear(&err);
        if (im_duration_parse(argv[i], strlen(argv[i]), &ms, &err) != IM_OK) {
            printf("%s\terror\t%s\n", argv[i], err.msg);
            rc = 1;
            continue;
        }
        char buf[64];
        im_duration_format(ms, buf, sizeof buf);
        printf("%s\t%lld\t%s\n", argv[i], (long long)ms, buf);
    }
    return rc;
}

int cli_debug(int argc, char **argv)
{
    if (argc < 2 || cli_wants_help(argc, argv)) {
        printf("usage: infermon debug float VALUE… | duration DUR…\n"
               "Prints how infermon formats values (API and exposition) and parses durations.\n");
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "float") == 0) return debug_float(argc - 1, argv + 1);
    if (strcmp(argv[1], "duration") == 0) return debug_duration(argc - 1, argv + 1);
    fprintf(stderr, "infermon debug: unknown tool \"%s\"\n", argv[1]);
    return 2;
}
