/* cli.h — the subcommands of the infermon binary.
 *
 * Each subcommand is `int cli_<name>(int argc, char **argv)` where argv[0] is the
 * subcommand's name. Exit codes: 0 ok, 1 findings (problems found, tests failed),
 * 2 usage or runtime error. Every subcommand answers --help. */
#ifndef IM_CLI_CLI_H
#define IM_CLI_CLI_H

#include "util/err.h"

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command_t;

/* The table, terminated by a {NULL} entry (defined in cli/commands.c). */
extern const cli_command_t cli_commands[];

int cli_check(int argc, char **argv);
int cli_check_config(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_check_metrics(int argc, char **argv);
int cli_check_rules(int argc, char **argv);
int cli_test(int argc, char **argv);
int cli_version(int argc, char **argv);
int cli_debug(int argc, char **argv);
int cli_lint(int argc, char **argv);
int cli_doctor(int argc, char **argv);
int cli_promql_parse(int argc, char **argv);
int cli_tsdb(int argc, char **argv);
int cli_promql_test(int argc, char **argv);
int cli_promql_eval(int argc, char **argv);
int cli_simulate(int argc, char **argv);
int cli_demo(int argc, char **argv);
int cli_top(int argc, char **argv);
int cli_cost(int argc, char **argv);
int cli_export(int argc, char **argv);
int cli_slo(int argc, char **argv);

/* Shared helpers for subcommands. */
/* True if argv[i] is --help or -h. */
int cli_wants_help(int argc, char **argv);
/* Reads a whole file ("-" = stdin) into a new buffer (caller frees with im_free),
 * refusing files larger than max_bytes. Returns 0 or -1 with a message on stderr. */
int cli_read_file(const char *path, char **data, size_t *len, size_t max_bytes);

/* Matches argv[*i] against the flag name, given as "name VALUE" or "name=VALUE":
 * true on a match, with *val the value (NULL when the next argument is missing)
 * and *i moved past a value taken from the next argument. */
bool cli_opt(int argc, char **argv, int *i, const char *name, const char **val);

/* The query backend of a --prometheus or --url flag (query/query.h): *base's URL,
 * limits, flag names and user agent, with the HTTP client, headers and tenant of
 * the --prometheus.config file config_path (NULL = none; read, used and freed
 * here). On failure *in_config (if not NULL) says whether the file was at fault. */
struct query_backend;
struct query_remote_opts;
im_rc cli_remote_open(const struct query_remote_opts *base, const char *config_path,
                      struct query_backend **qb, bool *in_config, im_err_t *err);

/* A local data directory opened for a one-shot command: no background work,
 * samples at any time accepted, a PromQL engine and a query backend over it. */
typedef struct cli_store {
    struct tsdb *db;               /* owned */
    struct promql_engine *eng;     /* owned */
    struct query_backend *backend; /* owned */
} cli_store_t;
/* Opens dir into *s (zeroed on failure). cli_store_close frees what is open. */
im_rc cli_store_open(const char *dir, cli_store_t *s, im_err_t *err);
void cli_store_close(cli_store_t *s);

/* --promql.compat (NULL = 3) and --enable-feature (NULL = none) into *out
 * (promql/ast.h); false with a message on stderr for a bad value. */
struct promql_lang;
bool cli_promql_lang(const char *cmd, const char *compat, const char *features,
                     struct promql_lang *out);

#define INFERMON_VERSION "0.1.0"

#endif
