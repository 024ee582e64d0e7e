/* cost.c — `infermon cost`: GPU cost per team, model and token over a period
 * (llm/cost.h) from the local store (--storage.tsdb.path), a Prometheus-
 * compatible server (--prometheus) or a running infermon (--url), with the
 * prices and teams of --config.file's llm.cost section. Exit 0, 1 when a cost
 * is null for want of a price, 2 for usage, runtime or no-data errors. */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "config/config.h"
#include "llm/cost.h"
#include "promql/promql.h"
#include "query/query.h"
#include "tsdb/tsdb.h"
#include "util/log.h"
#include "util/timeutil.h"

static int usage(FILE *f)
{
    fprintf(f,
            "usage: infermon cost [--prometheus URL | --storage.tsdb.path DIR | --url URL]\n"
            "                     [--from T --to T | --range D | --month YYYY-MM] [--step D]\n"
            "                     [--by team|namespace|model|cluster_queue|flavor] [--team NAME]\n"
            "                     [--config.file FILE] [--output text|json|csv]\n"
            "\n"
            "GPU-hours reserved (Kueue), allocated (dcgm-exporter's pod attribution) and busy,\n"
            "their cost and idle cost, energy, tokens and cost per 1M output tokens, per group\n"
            "over a period (docs/cost.md).\n"
            "\n"
            "  --prometheus URL      a Prometheus-compatible query API (Prometheus, Mimir, ...)\n"
            "  --prometheus.config F its HTTP client: basic_auth, authorization, tls_config,\n"
            "                        headers, tenant (as --query.backend-config of run)\n"
            "  --prometheus.timeout D  per query (default 2m)\n"
            "  --storage.tsdb.path DIR the local store (an infermon data directory)\n"
            "  --url URL             a running infermon (its Prometheus API)\n"
            "  --config.file FILE    llm.cost: prices, teams (default: none, costs are null)\n"
            "  --from T, --to T      the period (from, to]: Unix seconds or RFC 3339\n"
            "  --range D             the last D up to --to (default now); default 1d\n"
            "  --month YYYY-MM       that calendar month (UTC)\n"
            "  --step D              the resolution (default 15s, coarser for long periods)\n"
            "  --by G                the grouping (default team)\n"
            "  --team NAME           only that group\n"
            "  --output F            text (default), json, csv (FinOps FOCUS columns)\n"
            "  --explain             print the PromQL instant queries sent (to stderr)\n");
    return f == stderr ? 2 : 0;
}

int cli_cost(int argc, char **argv)
{
    const char *prom = NULL, *prom_cfg = NULL, *dir = NULL, *url = NULL, *config = NULL;
    const char *from_s = NULL, *to_s = NULL, *range_s = NULL, *month = NULL, *step_s = NULL;
    const char *by_s = "team", *team = NULL, *outfmt = "text";
    int64_t timeout_ms = 120000;
    bool explain = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define OPT(name) cli_opt(argc, argv, &i, name, &val)
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return usage(stdout);
        if (strcmp(a, "--explain") == 0) {
            explain = true;
            continue;
        }
        const char **dst = OPT("--prometheus")          ? &prom
                           : OPT("--prometheus.config") ? &prom_cfg
                           : OPT("--storage.tsdb.path") ? &dir
                           : OPT("--url")               ? &url
                           : OPT("--config.file")       ? &config
                           : OPT("--from")              ? &from_s
                           : OPT("--to")                ? &to_s
                           : OPT("--range")             ? &range_s
                           : OPT("--month")             ? &month
                           : OPT("--step")              ? &step_s
                           : OPT("--by")                ? &by_s
                           : OPT("--team")              ? &team
                           : OPT("--output")            ? &outfmt
                                                        : NULL;
        if (!dst && OPT("--prometheus.timeout")) {
            if (!val || im_duration_parse(val, strlen(val), &timeout_ms, NULL) != IM_OK ||
                timeout_ms <= 0) {
                fprintf(stderr, "infermon cost: --prometheus.timeout needs a duration such as "
                                "2m\n");
                return 2;
            }
            continue;
        }
#undef OPT
        if (!dst) {
            fprintf(stderr, "infermon cost: unknown argument %s\n", a);
            return usage(stderr);
        }
        if (!val) {
            fprintf(stderr, "infermon cost: %s needs a value\n", a);
            return 2;
        }
        *dst = val;
    }
    if ((prom != NULL) + (dir != NULL) + (url != NULL) != 1) {
        fprintf(stderr, "infermon cost: give one of --prometheus, --storage.tsdb.path, --url\n");
        return 2;
    }
    if (strcmp(outfmt, "text") && strcmp(outfmt, "json") && strcmp(outfmt, "csv")) {
        fprintf(stderr, "infermon cost: --output must be text, json or csv\n");
        return 2;
    }
    llm_cost_opts_t o;
    memset(&o, 0, sizeof o);
    im_err_t err;
    im_err_clear(&err);
    llm_cost_params_t pp = {.from = from_s,
                            .to = to_s,
                            .range = range_s,
                            .month = month,
                            .step = step_s,
                            .by = by_s,
                            .team = team};
    if (llm_cost_params_parse(&pp, im_now_ms(), true, &o, &err) != IM_OK) {
        fprintf(stderr, "infermon cost: %s\n", err.msg);
        return 2;
    }
    o.timeout_ms = timeout_ms;

    int rc = 2;
    scrape_config_t *cfg = NULL;
    cli_store_t store = {0};
    query_backend_t *qb = NULL;
    llm_cost_report_t rep;
    memset(&rep, 0, sizeof rep);
    if (config) {
        if (scrape_config_load_file(config, &cfg, &err) != IM_OK) {
            char eb[600];
            fprintf(stderr, "infermon cost: --config.file %s: %s\n", config,
                    im_err_format(&err, eb, sizeof eb));
            goto done;
        }
        o.cfg = &cfg->llm.cost;
    }
    if (dir) {
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "infermon cost: %s is not a storage directory\n", dir);
            goto done;
        }
        im_log_set_level(IM_LOG_WARN); /* not the store's start-up lines */
        if (cli_store_open(dir, &store, &err) != IM_OK) {
            fprintf(stderr, "infermon cost: cannot open storage %s: %s\n", dir, err.msg);
            goto done;
        }
    } else {
        const char *u = prom ? prom : url;
        query_remote_opts_t qo = {.url = u,
                                  .timeout_ms = timeout_ms,
                                  .timeout_flag = "--prometheus.timeout",
                                  .user_agent = "infermon-cost"};
        bool in_cfg;
        if (cli_remote_open(&qo, prom_cfg, &qb, &in_cfg, &err) != IM_OK) {
            if (in_cfg)
                fprintf(stderr, "infermon cost: --prometheus.config %s: %s\n", prom_cfg, err.msg);
            else
                fprintf(stderr, "infermon cost: %s %s: %s\n", prom ? "--prometheus" : "--url", u,
                        err.msg);
            goto done;
        }
    }
    im_rc crc = llm_cost_compute(qb ? qb : store.backend, &o, &rep, &err);
    for (size_t i = 0; explain && i < rep.nqueries; i++) {
        char t[40];
        im_time_format_rfc3339(rep.query_ms[i], t, sizeof t);
        fprintf(stderr, "infermon cost: query at %s: %s\n", t, rep.queries[i]);
    }
    if (crc != IM_OK) {
        fprintf(stderr, "infermon cost: %s\n", err.msg);
        goto done;
    }
    im_buf_t out;
    im_buf_init(&out, 0);
    if (strcmp(outfmt, "json") == 0)
        llm_cost_report_json(&rep, &out);
    else if (strcmp(outfmt, "csv") == 0)
        llm_cost_report_csv(&rep, &out);
    else
        llm_cost_report_text(&rep, &out);
    fwrite(out.data, 1, out.len, stdout);
    im_buf_free(&out);
    if (strcmp(outfmt, "text") != 0)
        for (size_t i = 0; i < rep.nproblems; i++)
            fprintf(stderr, "infermon cost: note: %s\n", rep.problems[i]);
    rc = rep.missing_price ? 1 : 0;
done:
    llm_cost_report_free(&rep);
    query_backend_free(qb);
    cli_store_close(&store);
    scrape_config_free(cfg);
    return rc;
}
