/* check_config.c — `infermon check config FILE...`: loads each configuration
 * file as `infermon run` would and reports the first error with file:line:column,
 * like promtool check config. */
#include "util/base.h"

#include <stdio.h>

#include "cli/cli.h"
#include "config/config.h"

int cli_check_config(int argc, char **argv)
{
    if (argc < 2 || cli_wants_help(argc, argv)) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: infermon check config FILE...\n"
                "Checks infermon / prometheus.yml configuration files.\n");
        return argc < 2 ? 2 : 0;
    }
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        scrape_config_t *c;
        im_err_t err;
        im_err_clear(&err);
        printf("Checking %s\n", argv[i]);
        if (scrape_config_load_file(argv[i], &c, &err) != IM_OK) {
            char b[1024];
            printf("  FAILED: %s\n\n", im_err_format(&err, b, sizeof b));
            bad = 1;
            continue;
        }
        size_t ntargets = 0;
        for (size_t j = 0; j < c->njobs; j++)
            for (size_t g = 0; g < c->jobs[j].nstatic; g++)
                ntargets += c->jobs[j].static_groups[g].ntargets;
        printf("  SUCCESS: %zu scrape configs, %zu static targets, %zu rule files found\n\n",
               c->njobs, ntargets, c->nrule_files);
        scrape_config_free(c);
    }
    return bad;
}
