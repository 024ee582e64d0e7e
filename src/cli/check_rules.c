/* check_rules.c — `infermon check rules FILE…`, like `promtool check rules`:
 * "Checking FILE" on stdout, then "  SUCCESS: N rules found" or "  FAILED:" and
 * one line per problem on stderr (promtool's texts, see rules/rules.h), and the
 * duplicate-rules lint. Exit 0 when every file is valid (lint findings alone
 * exit 0 unless --lint-fatal), 1 when a file has errors, 2 on usage errors. */
#include "util/base.h"

#include <stdio.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "rules/rules.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: infermon check rules [--lint=duplicate-rules|none] [--lint-fatal] FILE...\n"
               "Checks rule files as promtool check rules does.\n");
}

int cli_check_rules(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    bool lint = true, lint_fatal = false;
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--lint=none") == 0) {
            lint = false;
        } else if (strcmp(argv[i], "--lint=duplicate-rules") == 0) {
            lint = true;
        } else if (strcmp(argv[i], "--lint-fatal") == 0) {
            lint_fatal = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "infermon check rules: unknown flag %s\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            struct stat st;
            if (stat(argv[i], &st) != 0) {
                fprintf(stderr, "infermon: error: path '%s' does not exist, try --help\n", argv[i]);
                return 2;
            }
            nfiles++;
        }
    }
    if (nfiles == 0) {
        usage(stderr);
        return 2;
    }
    bool failed = false, has_errors = false;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) continue;
        printf("Checking %s\n", argv[i]);
        fflush(stdout);
        rules_errs_t errs = {0};
        rules_file_t *f = NULL;
        im_rc rc = rules_file_load(argv[i], &f, &errs);
        if (rc == IM_OK && lint) rules_file_lint_duplicates(f, &errs);
        if (errs.n) {
            fprintf(stderr, "  FAILED:\n");
            for (size_t k = 0; k < errs.n; k++) fprintf(stderr, "%s\n", errs.v[k]);
            fflush(stderr);
            failed = true;
            if (rc != IM_OK) has_errors = true;
        } else {
            printf("  SUCCESS: %zu rules found\n", rules_file_count(f));
        }
        printf("\n");
        fflush(stdout);
        rules_errs_free(&errs);
        rules_file_free(f);
    }
    if (failed && has_errors) return 1;
    if (failed && lint_fatal) return 3;
    return 0;
}
