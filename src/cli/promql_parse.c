/* promql_parse.c — `infermon promql-parse [--format] EXPR`: parse a PromQL
 * expression and print its canonical form (as Prometheus prints it), or the
 * parse error exactly as Prometheus words it. Exit 0 when it parses, 2 on a
 * parse error or bad usage. With --format (the default) the canonical text is
 * printed; with --type the result type is printed after it; with --check
 * nothing is printed on success. Reads the expression from stdin with `-`
 * (after `--` an argument is always the expression itself). */
#include "util/base.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "promql/ast.h"
#include "promql/parser.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: infermon promql-parse [--promql.compat=2|3] [--format|--check|--type] "
               "EXPR|-\n"
               "  Parses a PromQL expression (Prometheus 3 syntax, or 2.53's with\n"
               "  --promql.compat=2) and prints its\n"
               "  canonical form, or the parse error as Prometheus reports it.\n"
               "  --format  print the canonical form (default)\n"
               "  --check   print nothing on success\n"
               "  --type    print the canonical form and the result type\n"
               "  exit code: 0 parsed, 2 parse error or usage error\n");
}

int cli_promql_parse(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    bool check_only = false, show_type = false, literal = false;
    const char *expr = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--format") == 0)
            continue;
        else if (strncmp(argv[i], "--promql.compat=", 16) == 0 && !expr) {
            promql_lang_t l;
            if (!cli_promql_lang("promql-parse", argv[i] + 16, NULL, &l)) return 2;
            promql_lang_set_default(&l);
        } else if (strcmp(argv[i], "--check") == 0)
            check_only = true;
        else if (strcmp(argv[i], "--type") == 0)
            show_type = true;
        else if (strcmp(argv[i], "--") == 0 && i + 1 < argc && !expr) {
            expr = argv[++i];
            literal = true; /* `-- -` is the query "-", not stdin */
        } else if (argv[i][0] == '-' && argv[i][1] == '-' && !expr) {
            fprintf(stderr, "promql-parse: unknown flag %s\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (!expr)
            expr = argv[i];
        else {
            usage(stderr);
            return 2;
        }
    }
    if (!expr) {
        usage(stderr);
        return 2;
    }
    char *data = NULL;
    size_t len;
    if (!literal && strcmp(expr, "-") == 0) {
        if (cli_read_file("-", &data, &len, PROMQL_MAX_QUERY_BYTES + 1) != 0) return 2;
        /* a trailing newline from `echo` is whitespace to PromQL */
    } else {
        len = strlen(expr);
    }
    promql_expr_t *e = NULL;
    im_err_t err;
    im_rc rc = promql_parse(data ? data : expr, len, &e, &err);
    im_free(data);
    if (rc != IM_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    int ret = 0;
    if (!check_only) {
        im_buf_t b;
        im_buf_init(&b, 0);
        if (promql_format(e, &b) != IM_OK) {
            fprintf(stderr, "promql-parse: cannot format the expression\n");
            ret = 2;
        } else {
            fwrite(b.data ? b.data : "", 1, b.len, stdout);
            if (show_type) printf("\t%s", promql_value_type_str(promql_expr_type(e)));
            putchar('\n');
        }
        im_buf_free(&b);
    }
    promql_expr_free(e);
    return ret;
}
