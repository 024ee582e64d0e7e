/* test_rules.c — `infermon test rules [--promql.compat=2|3] [--enable-feature=LIST] FILE…`:
 * promtool's rule unit tests, evaluated at the given PromQL language level
 * (default 3, as `run`; 2 to compare with a promtool 2.x).
 * Output as `promtool test rules` ("Unit Testing:  FILE", "  SUCCESS" or
 * "  FAILED:" with the failures), then a final "N passed, N failed" line
 * (files). Exit 0 when all passed, 1 when a test failed, 2 on usage errors. */
#include "util/base.h"

#include <stdio.h>

#include "cli/cli.h"
#include "promql/promql.h"
#include "rules/unittest.h"
#include "util/log.h"

int cli_test(int argc, char **argv)
{
    if (argc < 2 || cli_wants_help(argc, argv) || strcmp(argv[1], "rules") != 0) {
        FILE *f = cli_wants_help(argc, argv) ? stdout : stderr;
        fprintf(f, "usage: infermon test rules [--promql.compat=2|3] [--enable-feature=LIST] "
                   "FILE...\n"
                   "Runs rule unit tests in promtool's format.\n");
        return cli_wants_help(argc, argv) ? 0 : 2;
    }
    const char *compat = NULL, *features = NULL;
    int first = 2;
    for (; first < argc; first++) {
        if (!strncmp(argv[first], "--promql.compat=", 16))
            compat = argv[first] + 16;
        else if (!strncmp(argv[first], "--enable-feature=", 17))
            features = argv[first] + 17;
        else
            break;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: infermon test rules [--promql.compat=2|3] FILE...\n");
        return 2;
    }
    promql_lang_t lang;
    if (!cli_promql_lang("test rules", compat, features, &lang)) return 2;
    promql_lang_set_default(&lang);
    /* promtool evaluates with a no-op logger: failures are in the report */
    im_log_set_level(IM_LOG_ERROR);
    int passed = 0, failed = 0;
    for (int i = first; i < argc; i++) {
        printf("Unit Testing:  %s\n", argv[i]);
        fflush(stdout);
        rules_errs_t errs = {0};
        if (rules_unittest_file(argv[i], &errs, stderr) != IM_OK || errs.n) {
            fprintf(stderr, "  FAILED:\n");
            for (size_t k = 0; k < errs.n; k++) {
                fprintf(stderr, "%s\n", errs.v[k]);
                fflush(stderr);
                printf("\n");
                fflush(stdout);
            }
            failed++;
        } else {
            printf("  SUCCESS\n");
            passed++;
        }
        printf("\n");
        fflush(stdout);
        rules_errs_free(&errs);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
