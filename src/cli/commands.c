/* commands.c — the table of subcommands; one line per subcommand. */
#include "util/base.h"

#include "cli/cli.h"

const cli_command_t cli_commands[] = {
    {"check", cli_check, "check metrics|config|rules: validate inputs like promtool check"},
    {"version", cli_version, "print the version"},
    {"debug", cli_debug, "internal tools for peer tests (float formatting, durations)"},
    {NULL, NULL, NULL},
};
