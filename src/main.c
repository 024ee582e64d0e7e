/* main.c — the infermon binary: dispatches to a subcommand (src/cli/). */
#include "util/base.h"

#include <stdio.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: infermon <command> [options]\n\n"
               "infermon watches LLM inference serving (vLLM, dcgm-exporter, Kueue).\n\n"
               "commands:\n");
    for (const cli_command_t *c = cli_commands; c->name; c++)
        fprintf(f, "  %-12s %s\n", c->name, c->summary);
    fprintf(f, "\nRun 'infermon <command> --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) return cli_version(argc - 1, argv + 1);
    for (const cli_command_t *c = cli_commands; c->name; c++)
        if (strcmp(argv[1], c->name) == 0) return c->run(argc - 1, argv + 1);
    fprintf(stderr, "infermon: unknown command \"%s\"\n\n", argv[1]);
    usage(stderr);
    return 2;
}
