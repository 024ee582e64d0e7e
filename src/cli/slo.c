/* slo.c — `infermon slo generate|check|status`: the SLO rules of an SLO file
 * (ours, Sloth's or OpenSLO's) or of a configuration's llm.slos, checked
 * against the histograms' bucket bounds of a live store or of the catalog, and
 * the SLOs measured now (llm/slo.h, docs/slo.md). Exit 0; 1 when an SLO is
 * refused (check, generate) or an alert would fire (status); 2 for usage and
 * runtime errors. */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "config/config.h"
#include "llm/slo.h"
#include "promql/promql.h"
#include "query/query.h"
#include "tsdb/tsdb.h"
#include "util/log.h"
#include "util/timeutil.h"

static int usage(FILE *f)
{
    fprintf(f,
            "usage: infermon slo generate|check|status (FILE | --config.file FILE)\n"
            "           [--prometheus URL | --url URL | --storage.tsdb.path DIR]\n"
            "           [--format rulefile|prometheusrule] [--output text|json] [--at T]\n"
            "           [--storage.tsdb.retention.time D]\n"
            "\n"
            "  generate   print the SLO rules (recording rules at 5m..3d, burn-rate alerts,\n"
            "             attainment, error budget, goodput)\n"
            "  check      validate the SLOs: fields, bucket bounds, window vs retention\n"
            "  status     attainment, budget left, burn rates now and the alerts that would\n"
            "             fire (needs a store)\n"
            "\n"
            "  FILE                 an SLO file: {slos: [...]}, Sloth prometheus/v1, OpenSLO v1\n"
            "  --config.file FILE   the SLOs of a configuration (llm.slos, llm.slo_files)\n"
            "  --prometheus URL     read names and le bounds from a Prometheus-compatible API\n"
            "  --url URL            ... from a running infermon\n"
            "  --storage.tsdb.path DIR  ... from a local store\n"
            "                       (none: the catalog's names and bucket layouts)\n"
            "  --format F           rulefile (default) or prometheusrule\n"
            "  --storage.tsdb.retention.time D  refuse windows longer than D (check)\n"
            "  --output F           status: text (default) or json\n"
            "  --at T               status: the evaluation time (default now)\n");
    return f == stderr ? 2 : 0;
}

int cli_slo(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return usage(argc < 2 ? stderr : stdout);
    const char *sub = argv[1];
    if (strcmp(sub, "generate") && strcmp(sub, "check") && strcmp(sub, "status")) {
        fprintf(stderr, "infermon slo: unknown subcommand %s\n", sub);
        return usage(stderr);
    }
    const char *file = NULL, *config = NULL, *prom = NULL, *url = NULL, *dir = NULL;
    const char *format = "rulefile", *output = "text", *at_s = NULL, *ret_s = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define OPT(name) cli_opt(argc, argv, &i, name, &val)
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return usage(stdout);
        const char **dst = OPT("--config.file")                   ? &config
                           : OPT("--config")                      ? &config
                           : OPT("--prometheus")                  ? &prom
                           : OPT("--url")                         ? &url
                           : OPT("--storage.tsdb.path")           ? &dir
                           : OPT("--format")                      ? &format
                           : OPT("--output")                      ? &output
                           : OPT("--at")                          ? &at_s
                           : OPT("--storage.tsdb.retention.time") ? &ret_s
                                                                  : NULL;
#undef OPT
        if (!dst) {
            if (a[0] != '-' && !file) {
                file = a;
                continue;
            }
            fprintf(stderr, "infermon slo: unknown argument %s\n", a);
            return usage(stderr);
        }
        if (!val) {
            fprintf(stderr, "infermon slo: %s needs a value\n", a);
            return 2;
        }
        *dst = val;
    }
    if ((file != NULL) + (config != NULL) != 1) {
        fprintf(stderr, "infermon slo %s: give an SLO FILE or --config.file FILE\n", sub);
        return 2;
    }
    if ((prom != NULL) + (url != NULL) + (dir != NULL) > 1) {
        fprintf(stderr,
                "infermon slo: give at most one of --prometheus, --url, --storage.tsdb.path\n");
        return 2;
    }
    llm_slo_format_t fmt = LLM_SLO_RULEFILE;
    if (strcmp(format, "prometheusrule") == 0)
        fmt = LLM_SLO_PROMETHEUSRULE;
    else if (strcmp(format, "rulefile") != 0) {
        fprintf(stderr, "infermon slo: --format must be rulefile or prometheusrule, not %s\n",
                format);
        return 2;
    }
    if (strcmp(output, "text") && strcmp(output, "json")) {
        fprintf(stderr, "infermon slo: --output must be text or json, not %s\n", output);
        return 2;
    }
    im_err_t err;
    im_err_clear(&err);
    int64_t at_ms = im_now_ms() / 1000 * 1000, ret_ms = 0;
    if (at_s && im_time_parse(at_s, strlen(at_s), &at_ms, &err) != IM_OK) {
        fprintf(stderr, "infermon slo: --at %s: %s\n", at_s, err.msg);
        return 2;
    }
    if (ret_s && (im_duration_parse(ret_s, strlen(ret_s), &ret_ms, NULL) != IM_OK || ret_ms <= 0)) {
        fprintf(stderr,
                "infermon slo: --storage.tsdb.retention.time needs a duration such as 15d\n");
        return 2;
    }
    if (strcmp(sub, "status") == 0 && !prom && !url && !dir) {
        fprintf(stderr, "infermon slo status: give a store: --prometheus, --url or "
                        "--storage.tsdb.path\n");
        return 2;
    }

    int rc = 2;
    scrape_config_t *cfg = NULL;
    cfg_llm_slo_t own;
    memset(&own, 0, sizeof own);
    const cfg_llm_slo_t *set = &own;
    cli_store_t store = {0};
    query_backend_t *qb = NULL;
    llm_slo_plans_t plans;
    memset(&plans, 0, sizeof plans);
    char eb[1200];
    if (config) {
        if (scrape_config_load_file(config, &cfg, &err) != IM_OK) {
            fprintf(stderr, "infermon slo: %s\n", im_err_format(&err, eb, sizeof eb));
            rc = strcmp(sub, "check") == 0 ? 1 : 2;
            goto done;
        }
        set = &cfg->llm.slo;
    } else {
        im_buf_t b;
        im_buf_init(&b, 4u << 20);
        int se = 0;
        if (cfg_read_file(file, &b, &se) != IM_OK) {
            fprintf(stderr, "infermon slo: cannot read %s: %s\n", file,
                    se ? strerror(se) : "read error or larger than 4 MiB");
            im_buf_free(&b);
            goto done;
        }
        im_rc prc = cfg_llm_slo_parse_file(&own, b.data ? b.data : "", b.len, file, &err);
        im_buf_free(&b);
        if (prc != IM_OK) {
            fprintf(stderr, "infermon slo: %s\n", im_err_format(&err, eb, sizeof eb));
            rc = 1;
            goto done;
        }
    }
    if (llm_slo_check_retention(set, ret_ms, "--storage.tsdb.retention.time", &err) != IM_OK) {
        fprintf(stderr, "infermon slo: %s\n", err.msg);
        rc = 1;
        goto done;
    }
    if (dir) {
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "infermon slo: %s is not a storage directory\n", dir);
            goto done;
        }
        im_log_set_level(IM_LOG_WARN);
        if (cli_store_open(dir, &store, &err) != IM_OK) {
            fprintf(stderr, "infermon slo: cannot open storage %s: %s\n", dir, err.msg);
            goto done;
        }
        qb = store.backend;
    } else if (prom || url) {
        query_remote_opts_t qo = {
            .url = prom ? prom : url, .user_agent = "infermon-slo", .timeout_flag = "--prometheus"};
        cfg_http_client_init(&qo.http);
        if (query_remote_new(&qo, &qb, &err) != IM_OK) {
            fprintf(stderr, "infermon slo: %s %s: %s\n", prom ? "--prometheus" : "--url",
                    prom ? prom : url, err.msg);
            goto done;
        }
    }
    im_rc r = llm_slo_resolve(set, qb, &plans, &err);
    for (size_t i = 0; i < plans.nnotes; i++)
        fprintf(stderr, "infermon slo: note: %s\n", plans.notes[i]);
    if (r != IM_OK) {
        fprintf(stderr, "infermon slo: %s\n", err.msg);
        rc = r == IM_EINVAL || r == IM_ENOTFOUND ? 1 : 2;
        goto done;
    }
    im_buf_t out;
    im_buf_init(&out, 0);
    rc = 0;
    if (strcmp(sub, "generate") == 0) {
        llm_slo_plans_yaml(&plans, fmt, &out);
    } else if (strcmp(sub, "check") == 0) {
        for (size_t i = 0; i < plans.n; i++)
            (void)im_buf_printf(&out, "%s: OK (%s%s%s)\n", plans.v[i].slo->name,
                                cfg_slo_sli_name(plans.v[i].slo->sli),
                                plans.v[i].metric ? " on " : "",
                                plans.v[i].metric ? plans.v[i].metric : "");
        (void)im_buf_printf(&out, "SUCCESS: %zu SLOs checked against %s\n", plans.n,
                            qb ? query_backend_describe(qb) : "the catalog's bucket layouts");
    } else {
        im_rc sr = strcmp(output, "json") == 0 ? llm_slo_status_json(&plans, qb, at_ms, &out, &err)
                                               : llm_slo_status_text(&plans, qb, at_ms, &out, &err);
        if (sr != IM_OK) {
            fprintf(stderr, "infermon slo status: %s\n", err.msg);
            rc = 2;
        } else if (strcmp(output, "json") == 0) {
            (void)im_buf_putc(&out, '\n');
        }
    }
    if (out.data) fwrite(out.data, 1, out.len, stdout);
    im_buf_free(&out);
done:
    llm_slo_plans_free(&plans);
    cfg_llm_slo_free(&own);
    if (qb != store.backend) query_backend_free(qb);
    cli_store_close(&store);
    scrape_config_free(cfg);
    return rc;
}
