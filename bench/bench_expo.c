/* bench_expo.c — exposition parsing throughput.
 *
 * usage: bench_expo CATALOG_PROM OUT_FILE [TARGET_MB [PASSES]]
 *
 * Builds a large, valid Prometheus text exposition (≈100 MB by default) from the
 * shapes in a sample scrape (catalog/vllm-sample.prom): every family once with
 * its HELP and TYPE, then its sample lines repeated for many vLLM pods (a pod
 * and an instance label added, values kept), as a federation endpoint serves
 * it. Writes it to OUT_FILE (for promtool in bench/expo.sh), then, in the same
 * run and on the same buffer, times
 *   - a bare memchr newline scan (the upper bound for any line-based parser),
 *   - expo_parser_next over the whole buffer (best of PASSES passes, default 5;
 *     more passes give steadier figures on a busy machine),
 * and prints MB/s, samples/s and the parse/memchr ratio. It also checks that
 * the timed parse allocates nothing (the parser's byte count does not move). */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/cli.h"
#include "expo/expo.h"
#include "util/buf.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct family {
    const char *meta; /* HELP/TYPE lines */
    size_t meta_len;
    const char *samples; /* sample lines */
    size_t samples_len;
} family_t;

/* Appends the sample lines with pod/instance labels inserted. */
static void add_pod(im_buf_t *out, const char *s, size_t n, int pod)
{
    char lab[96];
    int ll =
        snprintf(lab, sizeof lab, "pod=\"vllm-llama-3-1-8b-%05d\",instance=\"10.%d.%d.%d:8000\"",
                 pod, pod / 65536, (pod / 256) % 256, pod % 256);
    size_t i = 0;
    while (i < n) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t e = nl ? (size_t)(nl - s) : n;
        const char *line = s + i;
        size_t len = e - i;
        const char *brace = memchr(line, '{', len);
        const char *sp = memchr(line, ' ', len);
        if (brace && (!sp || brace < sp)) {
            size_t pre = (size_t)(brace - line) + 1;
            (void)!im_buf_append(out, line, pre);
            (void)!im_buf_append(out, lab, (size_t)ll);
            if (line[pre] != '}') (void)!im_buf_putc(out, ',');
            (void)!im_buf_append(out, line + pre, len - pre);
        } else if (sp) {
            size_t pre = (size_t)(sp - line);
            (void)!im_buf_append(out, line, pre);
            (void)!im_buf_putc(out, '{');
            (void)!im_buf_append(out, lab, (size_t)ll);
            (void)!im_buf_putc(out, '}');
            (void)!im_buf_append(out, line + pre, len - pre);
        }
        (void)!im_buf_putc(out, '\n');
        i = e + 1;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_expo CATALOG_PROM OUT_FILE [TARGET_MB [PASSES]]\n");
        return 2;
    }
    size_t target = (size_t)(argc > 3 ? strtoul(argv[3], NULL, 10) : 100) << 20;
    int passes = argc > 4 ? (int)strtol(argv[4], NULL, 10) : 5;
    if (passes < 2) passes = 2;
    char *src;
    size_t srclen;
    if (cli_read_file(argv[1], &src, &srclen, (size_t)1 << 30) != 0) return 2;

    /* Split the sample into families: a run of # lines, then its sample lines. */
    family_t fams[4096];
    size_t nf = 0, i = 0;
    while (i < srclen && nf < IM_ARRAY_LEN(fams)) {
        family_t *f = &fams[nf++];
        f->meta = src + i;
        while (i < srclen && src[i] == '#') {
            const char *nl = memchr(src + i, '\n', srclen - i);
            i = nl ? (size_t)(nl - src) + 1 : srclen;
        }
        f->meta_len = (size_t)(src + i - f->meta);
        f->samples = src + i;
        while (i < srclen && src[i] != '#') {
            const char *nl = memchr(src + i, '\n', srclen - i);
            i = nl ? (size_t)(nl - src) + 1 : srclen;
        }
        f->samples_len = (size_t)(src + i - f->samples);
    }
    im_buf_t one;
    im_buf_init(&one, 0);
    for (size_t k = 0; k < nf; k++) add_pod(&one, fams[k].samples, fams[k].samples_len, 12345);
    int pods = (int)(target / one.len) + 1;
    im_buf_free(&one);

    im_buf_t buf;
    im_buf_init(&buf, 0);
    for (size_t k = 0; k < nf; k++) {
        (void)!im_buf_append(&buf, fams[k].meta, fams[k].meta_len);
        for (int p = 0; p < pods; p++) add_pod(&buf, fams[k].samples, fams[k].samples_len, p);
    }
    FILE *fo = fopen(argv[2], "wb");
    if (!fo || fwrite(buf.data, 1, buf.len, fo) != buf.len || fclose(fo) != 0) {
        fprintf(stderr, "bench_expo: cannot write %s\n", argv[2]);
        return 2;
    }
    double mb = (double)buf.len / 1e6;

    /* memchr newline scan. */
    double best_scan = 1e9;
    size_t lines = 0;
    for (int r = 0; r < passes; r++) {
        double t0 = now_s();
        size_t n = 0;
        const char *p = buf.data, *end = buf.data + buf.len;
        while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) n++, p++;
        double t = now_s() - t0;
        if (t < best_scan) best_scan = t;
        lines = n;
    }

    /* Parser. */
    expo_parser_t *ps = expo_parser_new(NULL);
    double best_parse = 1e9, sum = 0;
    size_t samples = 0;
    int64_t mem_before = 0, mem_after = 0;
    for (int r = 0; r < passes; r++) {
        if (r == 1) mem_before = im_mem_bytes(IM_MEM_EXPO); /* after the warm-up pass */
        im_err_t err;
        if (expo_parser_reset(ps, buf.data, buf.len, EXPO_TEXT_004, &err) != IM_OK) return 2;
        expo_entry_t e;
        size_t n = 0;
        int rc;
        double t0 = now_s();
        while ((rc = expo_parser_next(ps, &e, &err)) > 0) {
            if (e.kind == EXPO_ENTRY_SAMPLE) {
                n++;
                sum += e.value;
            }
        }
        double t = now_s() - t0;
        if (rc < 0) {
            fprintf(stderr, "bench_expo: parse error %d:%d: %s\n", err.line, err.col, err.msg);
            return 2;
        }
        if (t < best_parse) best_parse = t;
        samples = n;
    }
    mem_after = im_mem_bytes(IM_MEM_EXPO);
    expo_parser_free(ps);

    /* Validator (what `infermon check metrics` runs). */
    expo_check_opts_t o = {.lint = true};
    expo_check_stats_t st;
    double t0 = now_s();
    (void)expo_check(buf.data, buf.len, EXPO_TEXT_004, &o, NULL, NULL, &st);
    double t_check = now_s() - t0;

    printf("input: %.1f MB, %zu lines, %zu samples, %zu families, %d pods (from %s)\n", mb, lines,
           samples, nf, pods, argv[1]);
    printf("memchr newline scan: %8.1f MB/s\n", mb / best_scan);
    printf(
        "expo parse (text):   %8.1f MB/s  %6.2f M samples/s  = %.1f%% of memchr (goal >= 30%%)\n",
        mb / best_parse, (double)samples / best_parse / 1e6, 100.0 * best_scan / best_parse);
    printf("expo check (lints):  %8.1f MB/s  %6.2f M samples/s  (%zu series, %zu problems)\n",
           mb / t_check, (double)samples / t_check / 1e6, st.series, st.errors + st.warnings);
    printf("bytes allocated by the parser during timed passes: %lld (checksum %g)\n",
           (long long)(mem_after - mem_before), sum);
    printf("PARSE_SECONDS=%.6f CHECK_SECONDS=%.6f SCAN_SECONDS=%.6f\n", best_parse, t_check,
           best_scan);
    im_buf_free(&buf);
    im_free(src);
    return 0;
}
