/* promql_test.c — `infermon promql-test FILE…` (Prometheus' PromQL test scripts)
 * and the hidden `infermon promql-eval` used by the differential test and the
 * benchmark: loads an OpenMetrics file into the in-memory store and evaluates
 * queries, printing one Prometheus-API-shaped JSON object per query. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "promql/parser.h"
#include "promql/promql.h"
#include "tsdb/tsdb.h"
#include "util/fmtfloat.h"
#include "util/timeutil.h"

#define MAX_SCRIPT_BYTES (64u << 20)
#define MAX_DATA_BYTES   (4096ull << 20)

/* --promql.compat / --enable-feature values into a language level (shared by run,
 * promql-test and promql-eval); prints the error and returns false on a bad one. */
bool cli_promql_lang(const char *cmd, const char *compat, const char *features, promql_lang_t *out)
{
    memset(out, 0, sizeof *out);
    out->compat = 3;
    if (compat && strcmp(compat, "2") == 0)
        out->compat = 2;
    else if (compat && strcmp(compat, "3") != 0) {
        fprintf(stderr, "infermon %s: --promql.compat must be 2 or 3, not \"%s\"\n", cmd, compat);
        return false;
    }
    char why[256];
    if (features && !promql_lang_enable_features(out, features, why, sizeof why)) {
        fprintf(stderr, "infermon %s: %s\n", cmd, why);
        return false;
    }
    return true;
}

int cli_promql_test(int argc, char **argv)
{
    if (cli_wants_help(argc, argv) || argc < 2) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: infermon promql-test [--parallel] [--promql.compat=2|3] FILE...\n\n"
                "Runs PromQL test scripts (Prometheus' promqltest language: load,\n"
                "load_with_nhcb, clear, eval instant at, eval range from/to/step, eval_fail,\n"
                "eval_ordered, eval_warn, eval_info and 3.x's `expect ...` lines).\n"
                "Prints each failing eval with file:line, expected and got, then\n"
                "\"N passed, N failed[, N skipped (reason: N, ...)]\". Exit code 1 when any\n"
                "eval failed.\n"
                "--promql.compat=3 (default) runs them as Prometheus 3's test engine does:\n"
                "with the experimental functions enabled; =2 as Prometheus 2.53.\n"
                "--parallel evaluates every range function over two or more series on\n"
                "three threads (as large queries are), to check that path.\n");
        return argc < 2 ? 2 : 0;
    }
    promql_test_stats_t st = {0};
    promql_engine_opts_t opts;
    memset(&opts, 0, sizeof opts);
    int bad = 0, first = 1;
    const char *compat = NULL;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
        if (strcmp(argv[first], "--parallel") == 0) {
            opts.threads = 3;
            opts.parallel_min_work = 1;
        } else if (strncmp(argv[first], "--promql.compat=", 16) == 0) {
            compat = argv[first] + 16;
        } else {
            fprintf(stderr, "infermon promql-test: unknown option %s\n", argv[first]);
            return 2;
        }
    }
    if (!cli_promql_lang("promql-test", compat, NULL, &opts.lang)) return 2;
    /* Prometheus' test engine enables the experimental functions */
    opts.lang.experimental_functions = true;
    opts.lang.binop_fill_modifiers = true;
    opts.lang.extended_range_selectors = true;
    opts.lang.type_and_unit_labels = true;
    opts.lang.delayed_name_removal = true; /* EnableDelayedNameRemoval in promqltest */
    for (int i = first; i < argc; i++) {
        char *data;
        size_t len;
        if (cli_read_file(argv[i], &data, &len, MAX_SCRIPT_BYTES) != 0) {
            bad = 1;
            continue;
        }
        im_err_t err;
        im_err_clear(&err);
        if (promql_test_run_opts(argv[i], data, len, stdout, &opts, &st, &err) != IM_OK) {
            fprintf(stdout, "%s\n", err.msg);
            st.failed++;
        }
        im_free(data);
    }
    printf("%d passed, %d failed", st.passed, st.failed);
    if (st.skipped) {
        printf(", %d skipped (", st.skipped);
        const char *sep = "";
        for (int k = 0; k < PROMQL_SKIP_N; k++) {
            if (!st.skipped_by[k]) continue;
            printf("%s%s: %d", sep, promql_skip_reason_str((promql_skip_reason_t)k),
                   st.skipped_by[k]);
            sep = ", ";
        }
        printf(")");
    }
    printf("\n");
    if (bad) return 2;
    return st.failed ? 1 : 0;
}

/* ---- promql-eval ---- */

/* Parses one OpenMetrics/text sample line: name{l="v",…} value [timestamp]. */
static int parse_sample_line(const char *p, const char *end, const im_labels_t **ls, double *v,
                             int64_t *t, bool *has_t)
{
    im_labels_builder_t b;
    im_lb_init(&b);
    const char *s = p;
    while (p < end && *p != '{' && *p != ' ') p++;
    im_lb_set(&b, IM_METRIC_NAME, 8, s, (size_t)(p - s));
    if (p < end && *p == '{') {
        p++;
        while (p < end && *p != '}') {
            const char *ns = p;
            while (p < end && *p != '=') p++;
            size_t nl = (size_t)(p - ns);
            if (p + 1 >= end || p[1] != '"') goto fail;
            p += 2;
            im_buf_t val;
            im_buf_init(&val, 0);
            while (p < end && *p != '"') {
                if (*p == '\\' && p + 1 < end) {
                    p++;
                    (void)im_buf_putc(&val, *p == 'n' ? '\n' : *p);
                    p++;
                    continue;
                }
                (void)im_buf_putc(&val, *p++);
            }
            if (p >= end) {
                im_buf_free(&val);
                goto fail;
            }
            p++;
            im_lb_set(&b, ns, nl, val.data ? val.data : "", val.len);
            im_buf_free(&val);
            if (p < end && *p == ',') p++;
        }
        if (p >= end) goto fail;
        p++;
    }
    while (p < end && *p == ' ') p++;
    const char *vs = p;
    while (p < end && *p != ' ') p++;
    if (!im_parse_float(vs, (size_t)(p - vs), v)) goto fail;
    while (p < end && *p == ' ') p++;
    *has_t = false;
    if (p < end) {
        double ts;
        const char *ts0 = p;
        while (p < end && *p != ' ') p++;
        if (!im_parse_float(ts0, (size_t)(p - ts0), &ts)) goto fail;
        *t = (int64_t)llround(ts * 1000.0);
        *has_t = true;
    }
    *ls = im_lb_build(&b);
    im_lb_free(&b);
    return 0;
fail:
    im_lb_free(&b);
    return -1;
}

typedef struct loader {
    promql_memstore_t *ms; /* one of the two */
    tsdb_t *db;
    tsdb_appender_t *app;
    size_t batch;
} loader_t;

static int load_sample(loader_t *l, const im_labels_t *ls, int64_t t, double v)
{
    if (l->ms) {
        promql_memstore_add(l->ms, ls, t, v);
        return 0;
    }
    if (!l->app) l->app = tsdb_appender(l->db);
    im_rc rc = tsdb_appender_add(l->app, 0, ls, t, v, NULL);
    if (rc != IM_OK && rc != IM_EOUTOFORDER && rc != IM_EDUPLICATE) {
        fprintf(stderr, "infermon: tsdb append: %s\n", im_rc_str(rc));
        return -1;
    }
    if (++l->batch == 10000) {
        im_err_t err;
        if (tsdb_appender_commit(l->app, &err) != IM_OK) {
            fprintf(stderr, "infermon: tsdb commit: %s\n", err.msg);
            l->app = NULL;
            return -1;
        }
        l->app = NULL;
        l->batch = 0;
    }
    return 0;
}

static int load_om(loader_t *ld, const char *path)
{
    char *data;
    size_t len;
    if (cli_read_file(path, &data, &len, MAX_DATA_BYTES) != 0) return -1;
    const char *p = data, *end = data + len;
    size_t lineno = 0;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        lineno++;
        if (e > p && *p != '#') {
            const im_labels_t *ls;
            double v;
            int64_t t = 0;
            bool has_t;
            if (parse_sample_line(p, e, &ls, &v, &t, &has_t) != 0 || !has_t) {
                fprintf(stderr, "infermon: %s:%zu: cannot parse sample line\n", path, lineno);
                im_free(data);
                return -1;
            }
            int r = load_sample(ld, ls, t, v);
            im_labels_unref(ls);
            if (r != 0) {
                im_free(data);
                return -1;
            }
        }
        p = e + 1;
    }
    im_free(data);
    if (ld->app) {
        im_err_t err;
        im_rc rc = tsdb_appender_commit(ld->app, &err);
        ld->app = NULL;
        if (rc != IM_OK) {
            fprintf(stderr, "infermon: tsdb commit: %s\n", err.msg);
            return -1;
        }
    }
    return 0;
}

static int parse_time_arg(const char *s, int64_t *out)
{
    im_err_t err;
    if (im_time_parse(s, strlen(s), out, &err) != IM_OK) {
        fprintf(stderr, "infermon: bad time \"%s\": %s\n", s, err.msg);
        return -1;
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int eval_one(promql_engine_t *eng, tsdb_queryable_t *qy, const char *q, size_t qlen,
                    bool range, int64_t t0, int64_t t1, int64_t step, int repeat, im_buf_t *out)
{
    im_err_t err;
    im_err_clear(&err);
    promql_expr_t *ast = NULL;
    im_rc rc = promql_parse(q, qlen, &ast, &err);
    int64_t best = 0;
    promql_result_t res;
    memset(&res, 0, sizeof res);
    if (rc == IM_OK) {
        int64_t *lat = im_malloc((size_t)(repeat > 0 ? repeat : 1) * sizeof *lat);
        for (int i = 0; i < (repeat > 0 ? repeat : 1); i++) {
            promql_result_free(&res);
            int64_t a = im_mono_ns();
            if (range)
                rc = promql_eval_range(eng, qy, ast, t0, t1, step, &res, &err);
            else
                rc = promql_eval_instant(eng, qy, ast, t0, &res, &err);
            if (rc == IM_OK && repeat > 0) { /* encoding is part of answering a query */
                im_buf_reset(out);
                (void)promql_result_to_json(&res, out);
            }
            lat[i] = im_mono_ns() - a;
            if (rc != IM_OK) break;
        }
        if (repeat > 0 && rc == IM_OK) {
            qsort(lat, (size_t)repeat, sizeof *lat, cmp_i64);
            best = lat[repeat / 2];
        }
        im_free(lat);
    }
    im_buf_reset(out);
    if (rc == IM_OK) {
        (void)im_buf_puts(out, "{\"status\":\"success\",\"data\":");
        (void)promql_result_to_json(&res, out);
        if (repeat > 0) (void)im_buf_printf(out, ",\"median_ns\":%lld", (long long)best);
        (void)im_buf_puts(out, "}");
    } else {
        (void)im_buf_printf(out, "{\"status\":\"error\",\"errorType\":\"%s\",\"error\":\"",
                            rc == IM_EPARSE ? "bad_data" : promql_error_type(rc));
        for (const char *c = err.msg; *c; c++) {
            if (*c == '"' || *c == '\\') (void)im_buf_putc(out, '\\');
            if ((unsigned char)*c < 0x20)
                (void)im_buf_printf(out, "\\u%04x", (unsigned char)*c);
            else
                (void)im_buf_putc(out, *c);
        }
        (void)im_buf_puts(out, "\"}");
    }
    promql_result_free(&res);
    promql_expr_free(ast);
    return 0;
}

int cli_promql_eval(int argc, char **argv)
{
    const char *data = NULL, *query = NULL, *queries = NULL;
    const char *tstr = NULL, *sstr = NULL, *estr = NULL, *stepstr = NULL, *store = "mem";
    int repeat = 0;
    promql_engine_opts_t opts;
    memset(&opts, 0, sizeof opts);
    const char *compat = NULL, *features = NULL;
    if (cli_wants_help(argc, argv)) {
        printf("usage: infermon promql-eval --data FILE.om (--query Q | --queries FILE)\n"
               "         (--time T | --start S --end E --step D) [--repeat N]\n"
               "         [--max-samples N] [--lookback D] [--store mem|tsdb]\n"
               "         [--threads N] [--parallel-min-work N] [--promql.compat 2|3]\n"
               "         [--enable-feature LIST]\n\n"
               "Internal: loads OpenMetrics samples (with timestamps) into memory and prints\n"
               "one Prometheus-API JSON object per query (one per line for --queries).\n"
               "--repeat N runs each query N times and adds the median latency (evaluation\n"
               "and JSON encoding). --store tsdb loads into the real store (memory mode).\n");
        return 0;
    }
    for (int i = 1; i < argc; i += 2) { /* every option takes a value */
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "infermon promql-eval: %s needs a value\n", a);
            return 2;
        }
        if (strcmp(a, "--data") == 0)
            data = v;
        else if (strcmp(a, "--query") == 0)
            query = v;
        else if (strcmp(a, "--queries") == 0)
            queries = v;
        else if (strcmp(a, "--time") == 0)
            tstr = v;
        else if (strcmp(a, "--start") == 0)
            sstr = v;
        else if (strcmp(a, "--end") == 0)
            estr = v;
        else if (strcmp(a, "--step") == 0)
            stepstr = v;
        else if (strcmp(a, "--store") == 0)
            store = v;
        else if (strcmp(a, "--repeat") == 0)
            repeat = (int)strtol(v, NULL, 10);
        else if (strcmp(a, "--max-samples") == 0)
            opts.max_samples = strtoll(v, NULL, 10);
        else if (strcmp(a, "--threads") == 0)
            opts.threads = (int)strtol(v, NULL, 10);
        else if (strcmp(a, "--parallel-min-work") == 0)
            opts.parallel_min_work = strtoll(v, NULL, 10);
        else if (strcmp(a, "--promql.compat") == 0)
            compat = v;
        else if (strcmp(a, "--enable-feature") == 0)
            features = v;
        else if (strcmp(a, "--lookback") == 0) {
            if (im_duration_parse(v, strlen(v), &opts.lookback_delta_ms, NULL) != IM_OK) {
                fprintf(stderr, "infermon promql-eval: bad --lookback\n");
                return 2;
            }
        } else {
            fprintf(stderr, "infermon promql-eval: unknown option %s\n", a);
            return 2;
        }
    }
    if (!cli_promql_lang("promql-eval", compat, features, &opts.lang)) return 2;
    promql_lang_set_default(&opts.lang); /* for the parser */
    bool range = sstr || estr || stepstr;
    if (!data || (!query && !queries) || (range ? !(sstr && estr && stepstr) : !tstr)) {
        fprintf(stderr, "infermon promql-eval: need --data, --query/--queries and "
                        "--time or --start/--end/--step (see --help)\n");
        return 2;
    }
    int64_t t0 = 0, t1 = 0, step = 0;
    if (range) {
        if (parse_time_arg(sstr, &t0) || parse_time_arg(estr, &t1)) return 2;
        double st = strtod(stepstr, NULL);
        if (im_duration_parse(stepstr, strlen(stepstr), &step, NULL) != IM_OK)
            step = (int64_t)llround(st * 1000);
    } else if (parse_time_arg(tstr, &t0)) {
        return 2;
    }
    loader_t ld = {0};
    tsdb_queryable_t *qy;
    if (strcmp(store, "tsdb") == 0) {
        /* synthetic time: no wall-clock bound on the loaded samples */
        tsdb_opts_t to = {.dir = NULL, .no_background = true, .max_future_ms = -1};
        im_err_t err;
        if (tsdb_open(&to, &ld.db, &err) != IM_OK) {
            fprintf(stderr, "infermon promql-eval: tsdb: %s\n", err.msg);
            return 2;
        }
    } else {
        ld.ms = promql_memstore_new();
    }
    int64_t load_start = im_mono_ns();
    if (load_om(&ld, data) != 0) {
        promql_memstore_free(ld.ms);
        if (ld.db) tsdb_close(ld.db);
        return 2;
    }
    if (repeat > 0)
        fprintf(stderr, "loaded %s in %.1f s\n", data, (double)(im_mono_ns() - load_start) / 1e9);
    qy = ld.ms ? promql_memstore_queryable(ld.ms) : tsdb_queryable(ld.db);
    promql_engine_t *eng = promql_engine_new(&opts);
    im_buf_t out;
    im_buf_init(&out, 0);
    int rc = 0;
    if (query) {
        eval_one(eng, qy, query, strlen(query), range, t0, t1, step, repeat, &out);
        printf("%s\n", out.data);
    } else {
        char *qs;
        size_t ql;
        if (cli_read_file(queries, &qs, &ql, 64u << 20) != 0) {
            rc = 2;
        } else {
            const char *p = qs, *end = qs + ql;
            while (p < end) {
                const char *e = memchr(p, '\n', (size_t)(end - p));
                if (!e) e = end;
                if (e > p) {
                    eval_one(eng, qy, p, (size_t)(e - p), range, t0, t1, step, repeat, &out);
                    printf("%s\n", out.data);
                }
                p = e + 1;
            }
            im_free(qs);
        }
    }
    im_buf_free(&out);
    promql_engine_free(eng);
    if (ld.db) {
        qy->vt->close(qy);
        tsdb_close(ld.db);
    }
    promql_memstore_free(ld.ms);
    return rc;
}
