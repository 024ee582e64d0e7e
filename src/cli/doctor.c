/* doctor.c — `infermon doctor`: why is serving slow, with the evidence
 * (llm/doctor.h). The store is a query backend: a Prometheus-compatible URL
 * (--prometheus, or --url for a running infermon), or a local storage
 * directory (--storage.tsdb.path) read through the PromQL engine. The
 * thresholds come from the llm: section of --config.file (llm.doctor:). */
#include "util/base.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "config/config.h"
#include "llm/doctor.h"
#include "promql/promql.h"
#include "query/query.h"
#include "tsdb/tsdb.h"
#include "util/timeutil.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: infermon doctor [--prometheus URL | --url URL | --storage.tsdb.path DIR]\n"
        "                       [--at TIME] [--window D] [--model M]\n"
        "                       [--output text|json|markdown] [--config.file F]\n"
        "\n"
        "Says why serving is slow, with the evidence: which cause (kv-saturation,\n"
        "traffic-surge, host-bound, ...), the queries and values behind it, the\n"
        "alternatives ruled out, and the engine flags to change (docs/doctor.md).\n"
        "\n"
        "  --prometheus URL        a Prometheus-compatible query API (Prometheus, Mimir,\n"
        "                          Thanos, VictoriaMetrics)\n"
        "  --url URL               a running infermon (its Prometheus API), e.g.\n"
        "                          http://infermon:9470\n"
        "  --prometheus.config F   the remote's HTTP client: basic_auth, authorization,\n"
        "                          tls_config, headers, tenant (as run's --query.backend-config)\n"
        "  --prometheus.timeout D  per query (default 30s)\n"
        "  --prometheus.max-bytes S  per answer (default 64MiB)\n"
        "  --storage.tsdb.path DIR a local storage directory (not one a daemon holds)\n"
        "  --at TIME               end of the window: RFC 3339 or Unix seconds (default now)\n"
        "  --window D              look-back (default llm.doctor.window, 30m)\n"
        "  --model M               only this model\n"
        "  --output FORMAT         text (default), json ({\"findings\":[...]}) or markdown\n"
        "  --config.file F         infermon.yml whose llm: section sets the thresholds\n"
        "\n"
        "Exit code: 0 nothing above info, 1 warning or critical findings, 2 error.\n");
}

int cli_doctor(int argc, char **argv)
{
    const char *prom = NULL, *url = NULL, *dir = NULL, *at_s = NULL, *win_s = NULL, *model = NULL,
               *outfmt = "text", *cfg_file = NULL, *prom_cfg = NULL;
    int64_t timeout_ms = 30000, max_bytes = 64 << 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define OPT(name) cli_opt(argc, argv, &i, name, &val)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (OPT("--prometheus")) {
            prom = val;
        } else if (OPT("--url")) {
            url = val;
        } else if (OPT("--prometheus.config")) {
            prom_cfg = val;
        } else if (OPT("--prometheus.timeout")) {
            if (!val || im_duration_parse(val, strlen(val), &timeout_ms, NULL) != IM_OK ||
                timeout_ms <= 0) {
                fprintf(stderr, "infermon doctor: --prometheus.timeout needs a duration such as "
                                "30s\n");
                return 2;
            }
            continue;
        } else if (OPT("--prometheus.max-bytes")) {
            if (!val || cfg_parse_bytes(val, &max_bytes) != IM_OK || max_bytes <= 0) {
                fprintf(stderr, "infermon doctor: --prometheus.max-bytes needs a size such as "
                                "64MiB\n");
                return 2;
            }
            continue;
        } else if (OPT("--storage.tsdb.path")) {
            dir = val;
        } else if (OPT("--at")) {
            at_s = val;
        } else if (OPT("--window")) {
            win_s = val;
        } else if (OPT("--model")) {
            model = val;
        } else if (OPT("--output")) {
            outfmt = val;
        } else if (OPT("--config.file")) {
            cfg_file = val;
        } else {
            fprintf(stderr, "infermon doctor: unknown argument %s\n", a);
            usage(stderr);
            return 2;
        }
        if (!val) {
            fprintf(stderr, "infermon doctor: %s needs a value\n", a);
            return 2;
        }
#undef OPT
    }
    if ((prom != NULL) + (url != NULL) + (dir != NULL) != 1) {
        fprintf(stderr, "infermon doctor: give one of --prometheus URL, --url URL or "
                        "--storage.tsdb.path DIR\n");
        usage(stderr);
        return 2;
    }
    if (strcmp(outfmt, "text") && strcmp(outfmt, "json") && strcmp(outfmt, "markdown")) {
        fprintf(stderr, "infermon doctor: --output must be text, json or markdown\n");
        return 2;
    }
    im_err_t err;
    im_err_clear(&err);
    int64_t at_ms = im_now_ms(), window_ms = 0;
    if (at_s && im_time_parse(at_s, strlen(at_s), &at_ms, &err) != IM_OK) {
        fprintf(stderr, "infermon doctor: --at %s is not a time (RFC 3339 or Unix seconds)\n",
                at_s);
        return 2;
    }
    if (win_s &&
        (im_duration_parse(win_s, strlen(win_s), &window_ms, NULL) != IM_OK || window_ms <= 0)) {
        fprintf(stderr, "infermon doctor: --window needs a positive duration such as 30m\n");
        return 2;
    }
    at_ms -= at_ms % 1000;
    int rc = 2;
    scrape_config_t *cfg = NULL;
    cli_store_t store = {0};
    query_backend_t *qb = NULL;
    llm_doctor_report_t rep;
    memset(&rep, 0, sizeof rep);
    im_buf_t out;
    im_buf_init(&out, 0);
    if (cfg_file && scrape_config_load_file(cfg_file, &cfg, &err) != IM_OK) {
        char eb[600];
        fprintf(stderr, "infermon doctor: --config.file %s: %s\n", cfg_file,
                im_err_format(&err, eb, sizeof eb));
        goto done;
    }
    if (dir) {
        if (access(dir, F_OK) != 0) {
            fprintf(stderr, "infermon doctor: %s is not a storage directory\n", dir);
            goto done;
        }
        if (cli_store_open(dir, &store, &err) != IM_OK) {
            fprintf(stderr, "infermon doctor: cannot open storage %s: %s\n", dir, err.msg);
            goto done;
        }
    } else {
        const char *u = prom ? prom : url;
        query_remote_opts_t qo = {.url = u,
                                  .timeout_ms = timeout_ms,
                                  .max_bytes = max_bytes,
                                  .timeout_flag = "--prometheus.timeout",
                                  .max_bytes_flag = "--prometheus.max-bytes",
                                  .user_agent = "infermon-doctor"};
        bool in_cfg;
        if (cli_remote_open(&qo, prom_cfg, &qb, &in_cfg, &err) != IM_OK) {
            if (in_cfg)
                fprintf(stderr, "infermon doctor: --prometheus.config %s: %s\n", prom_cfg, err.msg);
            else
                fprintf(stderr, "infermon doctor: %s: %s\n", u, err.msg);
            goto done;
        }
    }
    llm_doctor_opts_t dopt = {.backend = qb ? qb : store.backend,
                              .at_ms = at_ms,
                              .window_ms = window_ms,
                              .model = model,
                              .cfg = cfg ? &cfg->llm : NULL};
    im_err_clear(&err);
    if (llm_doctor_run(&dopt, &rep, &err) != IM_OK) {
        char eb[1200];
        fprintf(stderr, "infermon doctor: %s\n", im_err_format(&err, eb, sizeof eb));
        goto done;
    }
    if (!strcmp(outfmt, "json")) {
        llm_doctor_write_json(&rep, &out);
        (void)im_buf_putc(&out, '\n');
    } else if (!strcmp(outfmt, "markdown")) {
        llm_doctor_write_markdown(&rep, &out);
    } else {
        llm_doctor_write_text(&rep, &out, isatty(1));
    }
    fwrite(out.data ? out.data : "", 1, out.len, stdout);
    rc = llm_doctor_worst(&rep) > LLM_DOCTOR_INFO ? 1 : 0;
done:
    im_buf_free(&out);
    llm_doctor_report_free(&rep);
    query_backend_free(qb);
    cli_store_close(&store);
    scrape_config_free(cfg);
    return rc;
}
