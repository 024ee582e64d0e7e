/* lint.c — `infermon lint`: checks the PromQL of rule files, Grafana dashboards
 * and query lists against the names the sources expose (--target, --prometheus)
 * or the catalog, prints findings as text, JSON or GitHub annotations, and with
 * --fix rewrites renames and suffixes in place and prints the diff. Exit codes:
 * 0 clean (warnings and info allowed), 1 findings at error level, 2 lint could
 * not run (usage, an unreachable source, an unreadable file). */
#include "util/base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "config/yaml.h"
#include "llm/lint.h"
#include "util/buf.h"
#include "util/timeutil.h"

#define MAX_INPUT_BYTES (64u << 20)
#define MAX_SOURCES     64
#define MAX_FILES       4096

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: infermon lint [--target URL|FILE]... [--prometheus URL] [--vllm-version V]\n"
        "                     [--config prometheus.yml] [--scrape-interval D] [--output "
        "text|json|github]\n"
        "                     [--fix] FILE...\n\n"
        "Checks the PromQL in Prometheus rule files (.yml/.yaml), Grafana dashboards (.json)\n"
        "and text files of queries (one per line) against the metric names the sources expose.\n\n"
        "  --target URL|FILE     an endpoint scraped once, or a saved exposition (repeatable)\n"
        "  --prometheus URL      a Prometheus server: names, series, metadata, scrape intervals\n"
        "                        (or VictoriaMetrics, Mimir, Thanos: any Prometheus query API)\n"
        "  --prometheus.config F its HTTP client: basic_auth, authorization, tls_config,\n"
        "                        headers, tenant (YAML, as run's --query.backend-config)\n"
        "  --prometheus.timeout D, --prometheus.max-bytes S  per answer (default 10s, 64MiB)\n"
        "  --vllm-version V      the vLLM version for the catalog and version checks (default:\n"
        "                        detected from the sources, else the newest, " LLM_VLLM_NEWEST ")\n"
        "  --config FILE         prometheus.yml / infermon.yml: range-too-short assumes the "
        "shortest\n"
        "                        scrape interval of its jobs (a Prometheus source's own win)\n"
        "  --scrape-interval D   scrape interval for range-too-short (overrides --config)\n"
        "  --output FMT          text (default), json (schema in docs/lint.md), github\n"
        "  --fix                 rewrite renamed names and missing suffixes in place, print a "
        "diff\n\n"
        "Without --target or --prometheus the names come from the catalog for --vllm-version.\n"
        "Exit: 0 clean, 1 findings at error level, 2 lint could not run.\n");
}

typedef struct input {
    const char *path;
    char *data;
    size_t len;
    lint_input_kind_t kind;
} input_t;

static void lint_all(lint_run_t *run, lint_names_t *names, input_t *in, size_t nin)
{
    for (size_t i = 0; i < nin; i++) {
        switch (in[i].kind) {
        case LINT_INPUT_RULES:
            (void)lint_rulefile(run, names, in[i].path, in[i].data, in[i].len);
            break;
        case LINT_INPUT_DASHBOARD:
            (void)lint_dashboard(run, in[i].path, in[i].data, in[i].len);
            break;
        default: (void)lint_textfile(run, in[i].path, in[i].data, in[i].len); break;
        }
    }
}

static int write_file(const char *path, const char *data, size_t len)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.infermon-fix.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        fprintf(stderr, "infermon lint: cannot write %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    bool ok = fwrite(data, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        fprintf(stderr, "infermon lint: cannot write %s\n", path);
        unlink(tmp);
        return -1;
    }
    return 0;
}

int cli_lint(int argc, char **argv)
{
    const char *targets[MAX_SOURCES];
    size_t ntargets = 0;
    const char *prom = NULL, *version = NULL, *outfmt = "text", *config = NULL;
    const char *prom_cfg = NULL; /* --prometheus.config: its auth/TLS/headers/tenant */
    int64_t prom_timeout_ms = 10000, prom_max_bytes = 64 << 20;
    int64_t scrape_ms = 0;
    bool fix = false;
    input_t *in = im_calloc(MAX_FILES, sizeof(*in));
    size_t nin = 0;
    int rc = 2;
    lint_names_t *names = NULL;
    lint_run_t *run = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define OPT(name) cli_opt(argc, argv, &i, name, &val)
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            rc = 0;
            goto done;
        } else if (strcmp(a, "--fix") == 0) {
            fix = true;
        } else if (OPT("--target")) {
            if (!val || ntargets >= MAX_SOURCES) goto bad;
            targets[ntargets++] = val;
        } else if (OPT("--prometheus")) {
            if (!val) goto bad;
            prom = val;
        } else if (OPT("--prometheus.config")) {
            if (!val) goto bad;
            prom_cfg = val;
        } else if (OPT("--prometheus.timeout")) {
            if (!val || im_duration_parse(val, strlen(val), &prom_timeout_ms, NULL) != IM_OK ||
                prom_timeout_ms <= 0) {
                fprintf(stderr,
                        "infermon lint: --prometheus.timeout needs a duration such as 30s\n");
                goto done;
            }
        } else if (OPT("--prometheus.max-bytes")) {
            if (!val || cfg_parse_bytes(val, &prom_max_bytes) != IM_OK || prom_max_bytes <= 0) {
                fprintf(stderr,
                        "infermon lint: --prometheus.max-bytes needs a size such as 64MiB\n");
                goto done;
            }
        } else if (OPT("--vllm-version")) {
            if (!val) goto bad;
            version = val;
        } else if (OPT("--output")) {
            if (!val) goto bad;
            outfmt = val;
        } else if (OPT("--config")) {
            if (!val) goto bad;
            config = val;
        } else if (OPT("--scrape-interval")) {
            if (!val || im_duration_parse(val, strlen(val), &scrape_ms, NULL) != IM_OK) {
                fprintf(stderr, "infermon lint: --scrape-interval needs a duration such as 15s\n");
                goto done;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "infermon lint: unknown flag %s\n", a);
            usage(stderr);
            goto done;
        } else {
            if (nin >= MAX_FILES) goto bad;
            in[nin++].path = a;
        }
#undef OPT
    }
    if (nin == 0) {
        fprintf(stderr, "infermon lint: no input file\n");
        usage(stderr);
        goto done;
    }
    lint_output_t out_kind;
    if (strcmp(outfmt, "text") == 0)
        out_kind = LINT_OUT_TEXT;
    else if (strcmp(outfmt, "json") == 0)
        out_kind = LINT_OUT_JSON;
    else if (strcmp(outfmt, "github") == 0)
        out_kind = LINT_OUT_GITHUB;
    else {
        fprintf(stderr, "infermon lint: --output must be text, json or github\n");
        goto done;
    }
    lint_opts_t opts;
    memset(&opts, 0, sizeof(opts));
    if (version && !llm_version_parse(version, strlen(version), &opts.vllm_version)) {
        fprintf(stderr, "infermon lint: --vllm-version %s is not a version such as 0.11.0\n",
                version);
        goto done;
    }

    for (size_t i = 0; i < nin; i++) {
        if (cli_read_file(in[i].path, &in[i].data, &in[i].len, MAX_INPUT_BYTES) != 0) goto done;
        in[i].kind = lint_input_detect(in[i].path, in[i].data, in[i].len);
    }

    names = lint_names_new();
    im_err_t err;
    for (size_t i = 0; i < ntargets; i++) {
        im_err_clear(&err);
        if (lint_names_add_target(names, targets[i], &err) != IM_OK) {
            fprintf(stderr, "infermon lint: --target %s: %s\n", targets[i], err.msg);
            goto done;
        }
    }
    if (prom) {
        im_err_clear(&err);
        /* the query backend (query/query.h) that `run --query.backend-url` uses too */
        query_backend_t *qb = NULL;
        query_remote_opts_t qo = {.url = prom,
                                  .timeout_ms = prom_timeout_ms,
                                  .max_bytes = prom_max_bytes,
                                  .timeout_flag = "--prometheus.timeout",
                                  .max_bytes_flag = "--prometheus.max-bytes",
                                  .user_agent = "infermon-lint"};
        im_rc prc = cli_remote_open(&qo, prom_cfg, &qb, NULL, &err);
        if (prc == IM_OK) prc = lint_names_add_backend(names, qb, &err);
        query_backend_free(qb);
        if (prc != IM_OK) {
            fprintf(stderr, "infermon lint: --prometheus %s: %s\n", prom, err.msg);
            goto done;
        }
    }
    if (ntargets == 0 && !prom) {
        llm_version_t v = opts.vllm_version;
        if (!v.known) llm_version_parse(LLM_VLLM_NEWEST, strlen(LLM_VLLM_NEWEST), &v);
        lint_names_use_catalog(names, &v);
    }
    if (config) {
        char *cy = NULL;
        size_t cl = 0;
        if (cli_read_file(config, &cy, &cl, MAX_INPUT_BYTES) != 0) goto done;
        im_err_clear(&err);
        im_rc crc = lint_names_load_config(names, cy, cl, &err);
        im_free(cy);
        if (crc != IM_OK) {
            char eb[600];
            fprintf(stderr, "infermon lint: --config %s: %s\n", config,
                    im_err_format(&err, eb, sizeof eb));
            goto done;
        }
    }
    if (scrape_ms > 0) lint_names_set_scrape_interval(names, scrape_ms);
    /* Recording rules of every file are known names for all of them. */
    for (size_t i = 0; i < nin; i++)
        if (in[i].kind == LINT_INPUT_RULES) lint_rulefile_records(names, in[i].data, in[i].len);

    run = lint_run_new(names, &opts);
    lint_all(run, names, in, nin);

    if (fix) {
        im_buf_t diff;
        im_buf_init(&diff, 0);
        size_t total = 0;
        for (size_t i = 0; i < nin; i++) {
            if (strcmp(in[i].path, "-") == 0) continue;
            im_buf_t nb;
            im_buf_init(&nb, MAX_INPUT_BYTES * 2u);
            size_t nf = 0;
            if (lint_fix_apply(run, in[i].path, in[i].kind, in[i].data, in[i].len, &nb, &nf) ==
                    IM_OK &&
                nf > 0) {
                (void)lint_diff(in[i].path, in[i].data, in[i].len, nb.data, nb.len, &diff);
                if (write_file(in[i].path, nb.data, nb.len) != 0) {
                    im_buf_free(&nb);
                    im_buf_free(&diff);
                    goto done;
                }
                im_free(in[i].data);
                in[i].data = im_buf_steal(&nb, &in[i].len);
                total += nf;
            }
            im_buf_free(&nb);
        }
        if (out_kind == LINT_OUT_TEXT) {
            fwrite(diff.data ? diff.data : "", 1, diff.len, stdout);
            printf("fixed %zu name%s\n", total, total == 1 ? "" : "s");
        } else if (diff.len) {
            fwrite(diff.data, 1, diff.len, stderr);
        }
        im_buf_free(&diff);
        /* Report what is left. */
        lint_run_free(run);
        run = lint_run_new(names, &opts);
        lint_all(run, names, in, nin);
    }

    im_buf_t out;
    im_buf_init(&out, 0);
    (void)lint_report(run, names, out_kind, &out);
    fwrite(out.data ? out.data : "", 1, out.len, stdout);
    im_buf_free(&out);
    rc = lint_run_count(run, LINT_SEV_ERROR) > 0 ? 1 : 0;
    goto done;
bad:
    fprintf(stderr, "infermon lint: bad or missing flag value\n");
    usage(stderr);
    rc = 2;
done:
    lint_run_free(run);
    lint_names_free(names);
    for (size_t i = 0; i < nin; i++) im_free(in[i].data);
    im_free(in);
    return rc;
}
