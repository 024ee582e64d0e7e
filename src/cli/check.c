/* check.c — `infermon check metrics|config|rules`, like promtool check. */
#include "util/base.h"

#include <stdio.h>

#include "cli/cli.h"

/* Sub-checks; each is implemented in cli/check_<what>.c. */
static const struct {
    const char *what;
    int (*run)(int argc, char **argv);
} checks[] = {
    {"config", cli_check_config},
    {"metrics", cli_check_metrics},
    {"rules", cli_check_rules},
    {NULL, NULL},
};

int cli_check(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: infermon check metrics [FILE|-] [--output text|json]\n");
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; checks[i].what; i++)
        if (strcmp(argv[1], checks[i].what) == 0) return checks[i].run(argc - 1, argv + 1);
    fprintf(stderr, "infermon check: unknown or not yet available check \"%s\"\n", argv[1]);
    return 2;
}
