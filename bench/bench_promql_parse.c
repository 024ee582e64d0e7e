/* bench_promql_parse.c — PromQL parser and printer throughput.
 *
 * usage: bench_promql_parse [QUERIES_FILE] [SECONDS]
 *
 * Reads one query per line (default tests/promql/parse_errors.txt relative to
 * the working directory; lines that do not parse are dropped) plus the
 * LLM-serving queries of DOMAIN.md built in, then times, on CPU time:
 *   - promql_parse + promql_expr_free of every query, round after round;
 *   - promql_format of the parsed trees;
 * and prints queries/s, µs per query and MB/s of query text for each. There is
 * no peer figure: Prometheus' parser is Go code with no command-line entry. */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "promql/parser.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *const domain[] = {
    "sum by (model_name) (vllm:num_requests_running)",
    "sum by (model_name) (rate(vllm:prefix_cache_hits_total[10m])) / sum by (model_name) "
    "(rate(vllm:prefix_cache_queries_total[10m]))",
    "histogram_quantile(0.95, sum by (le, model_name) "
    "(rate(vllm:time_to_first_token_seconds_bucket[5m])))",
    "sum by (model_name) (rate(vllm:request_queue_time_seconds_sum[5m])) / sum by (model_name) "
    "(rate(vllm:e2e_request_latency_seconds_sum[5m]))",
    "sum by (namespace) (kueue_local_queue_resource_reservation{resource=\"nvidia.com/gpu\"})",
    "avg by (gpu, Hostname) (DCGM_FI_DEV_GPU_UTIL{namespace=~\"team-.*\"}) > 90",
};

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "tests/promql/parse_errors.txt";
    double secs = argc > 2 ? strtod(argv[2], NULL) : 2.0;
    size_t cap = 1024, n = 0;
    char **qs = im_malloc(cap * sizeof *qs);
    size_t *lens = im_malloc(cap * sizeof *lens);
    for (size_t i = 0; i < IM_ARRAY_LEN(domain); i++) {
        qs[n] = im_strdup(domain[i]);
        lens[n++] = strlen(domain[i]);
    }
    FILE *f = fopen(path, "r");
    if (f) {
        char line[8192];
        while (fgets(line, sizeof line, f) && n < cap) {
            size_t l = strlen(line);
            while (l && (line[l - 1] == '\n' || line[l - 1] == '\r')) line[--l] = 0;
            promql_expr_t *e;
            if (l == 0 || promql_parse(line, l, &e, NULL) != IM_OK) continue;
            promql_expr_free(e);
            qs[n] = im_strdup(line);
            lens[n++] = l;
        }
        fclose(f);
    }
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += lens[i];

    size_t rounds = 0;
    double t0 = now_s(), t1;
    do {
        for (size_t i = 0; i < n; i++) {
            promql_expr_t *e;
            if (promql_parse(qs[i], lens[i], &e, NULL) != IM_OK) abort();
            promql_expr_free(e);
        }
        rounds++;
        t1 = now_s();
    } while (t1 - t0 < secs);
    double per = (t1 - t0) / (double)(rounds * n);
    printf("parse+free: %zu queries (%zu bytes) x %zu rounds: %.0f queries/s, %.2f us/query, "
           "%.1f MB/s\n",
           n, bytes, rounds, 1 / per, per * 1e6, (double)(bytes * rounds) / (t1 - t0) / 1e6);

    promql_expr_t **trees = im_malloc(n * sizeof *trees);
    for (size_t i = 0; i < n; i++)
        if (promql_parse(qs[i], lens[i], &trees[i], NULL) != IM_OK) abort();
    im_buf_t b;
    im_buf_init(&b, 0);
    rounds = 0;
    t0 = now_s();
    do {
        for (size_t i = 0; i < n; i++) {
            im_buf_reset(&b);
            if (promql_format(trees[i], &b) != IM_OK) abort();
        }
        rounds++;
        t1 = now_s();
    } while (t1 - t0 < secs);
    per = (t1 - t0) / (double)(rounds * n);
    printf("format:     %.0f queries/s, %.2f us/query\n", 1 / per, per * 1e6);
    im_buf_free(&b);
    for (size_t i = 0; i < n; i++) {
        promql_expr_free(trees[i]);
        im_free(qs[i]);
    }
    im_free(trees);
    im_free(qs);
    im_free(lens);
    return 0;
}
