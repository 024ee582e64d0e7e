/* bench_hist_chunk.c — compression of native-histogram chunks (tsdb/chunk_hist.h)
 * against the classic layout, on a vLLM-like fleet: P pods (default 100), each
 * with vLLM's three latency histograms at their real bucket bounds (TTFT 22,
 * e2e 21, TPOT 19 bounds), scraped every 15 s for 2 h, requests arriving at
 * about 0.2/s per pod with log-normal latencies. The same observations are
 * encoded twice:
 *   classic: every _bucket{le} series (bounds + 1 for +Inf), _count and _sum as
 *            Gorilla XOR chunks of 120 samples (the head's chunk format)
 *   NHCB:    one custom-bucket histogram series per histogram, chunks of 120
 *            samples in the native-histogram codec
 * and the chunk bytes compared (series, bytes per scraped histogram, bytes per
 * bucket value), with the decode time of both. Chunk bytes only: the index and
 * block framing come on top (docs/storage.md).
 *
 *   bench_hist_chunk [PODS] [--seed FILE]   (--seed writes one NHCB chunk, a
 *                                           fuzz corpus seed) */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tsdb/chunk_hist.h"
#include "util/mem.h"

#define STEPS 480 /* 2 h at 15 s */
#define CHUNK 120

static const double ttft[] = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                              0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                              20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
static const double e2e[] = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                             5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                             60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
static const double tpot[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                              0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};

typedef struct hdef {
    const double *b;
    uint32_t n;
    double mu, sigma; /* log-normal latency (seconds) */
} hdef_t;

static uint64_t rs = 0x9e3779b97f4a7c15ULL;
static double urand(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) / 9007199254740992.0;
}

static int poisson(double mean)
{
    double l = exp(-mean), p = 1;
    int k = 0;
    do {
        k++;
        p *= urand();
    } while (p > l);
    return k - 1;
}

static double normal(void)
{
    double u = urand(), v = urand();
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int pods = 100;
    const char *seed = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = argv[++i];
        else
            pods = (int)strtol(argv[i], NULL, 10);
    }
    if (pods <= 0) pods = 100;
    const hdef_t defs[] = {{ttft, IM_ARRAY_LEN(ttft), log(0.15), 1.0},
                           {e2e, IM_ARRAY_LEN(e2e), log(4.0), 0.8},
                           {tpot, IM_ARRAY_LEN(tpot), log(0.03), 0.5}};
    uint64_t classic_bytes = 0, nhcb_bytes = 0, classic_series = 0, nhcb_series = 0;
    uint64_t hist_samples = 0, bucket_values = 0;
    double classic_dec = 0, nhcb_dec = 0;
    bool seeded = false;
    for (int p = 0; p < pods; p++) {
        for (size_t d = 0; d < IM_ARRAY_LEN(defs); d++) {
            const hdef_t *hd = &defs[d];
            uint32_t nb = hd->n + 1;
            double *cum = im_calloc(nb, sizeof(double)); /* per bucket, not cumulative */
            double sum = 0;
            /* classic: nb bucket series + _count + _sum */
            size_t ncl = nb + 2;
            tsdb__xor_enc_t *xe = im_calloc(ncl, sizeof *xe);
            tsdb__bw_t *xw = im_calloc(ncl, sizeof *xw);
            tsdb__hist_enc_t he;
            bool hopen = false;
            classic_series += ncl;
            nhcb_series += 1;
            for (int s = 0; s < STEPS; s++) {
                int64_t t = 1700000000000 + (int64_t)s * 15000 + (int64_t)(urand() * 20);
                for (int r = poisson(3.0); r > 0; r--) {
                    double x = exp(hd->mu + hd->sigma * normal());
                    uint32_t k = 0;
                    while (k < hd->n && x > hd->b[k]) k++;
                    cum[k]++;
                    sum += x;
                }
                storage_fh_t *h =
                    storage_fh_place(im_malloc(storage_fh_size(nb, 0, hd->n)), nb, 0, hd->n);
                h->schema = STORAGE_FH_CUSTOM;
                memcpy(h->custom, hd->b, hd->n * sizeof(double));
                double c = 0, run = 0;
                for (uint32_t k = 0; k < nb; k++) {
                    h->pos[k] = cum[k];
                    c += cum[k];
                }
                h->count = c;
                h->sum = sum;
                if (s % CHUNK == 0) {
                    if (s) {
                        for (size_t i = 0; i < ncl; i++) {
                            classic_bytes += (xw[i].nbits + 7) / 8;
                            tsdb__bw_free(&xw[i]);
                        }
                        im_buf_t b;
                        im_buf_init(&b, 0);
                        tsdb__hist_chunk_bytes(&he, &b);
                        nhcb_bytes += b.len;
                        im_buf_free(&b);
                        tsdb__hist_enc_free(&he);
                    }
                    for (size_t i = 0; i < ncl; i++) tsdb__xor_enc_init(&xe[i]);
                    tsdb__hist_enc_start(&he, h);
                    hopen = true;
                }
                for (uint32_t k = 0; k < nb; k++) {
                    run += cum[k];
                    tsdb__xor_append(&xe[k], &xw[k], t, run);
                }
                tsdb__xor_append(&xe[nb], &xw[nb], t, c);
                tsdb__xor_append(&xe[nb + 1], &xw[nb + 1], t, sum);
                tsdb__hist_append(&he, t, h);
                hist_samples++;
                bucket_values += nb;
                im_free(h);
                if (s == STEPS - 1 && hopen) {
                    /* decode timing on the last chunk of each, then account */
                    double t0 = now_s();
                    for (size_t i = 0; i < ncl; i++) {
                        tsdb__xor_dec_t dd;
                        tsdb__xor_dec_init(&dd, xw[i].b, xw[i].nbits, xe[i].n);
                        int64_t tt;
                        double vv;
                        while (tsdb__xor_next(&dd, &tt, &vv)) {
                        }
                    }
                    double t1 = now_s();
                    im_buf_t b;
                    im_buf_init(&b, 0);
                    tsdb__hist_chunk_bytes(&he, &b);
                    int64_t *dt;
                    storage_fh_t **dh;
                    size_t dn;
                    double t2 = now_s();
                    if (tsdb__hist_decode((const uint8_t *)b.data, b.len, &dt, &dh, &dn))
                        tsdb__hist_decoded_free(dt, dh, dn);
                    double t3 = now_s();
                    classic_dec += t1 - t0;
                    nhcb_dec += t3 - t2;
                    if (seed && !seeded) {
                        FILE *f = fopen(seed, "wb");
                        if (f) {
                            fwrite(b.data, 1, b.len, f);
                            fclose(f);
                        }
                        seeded = true;
                    }
                    nhcb_bytes += b.len;
                    im_buf_free(&b);
                    tsdb__hist_enc_free(&he);
                    for (size_t i = 0; i < ncl; i++) {
                        classic_bytes += (xw[i].nbits + 7) / 8;
                        tsdb__bw_free(&xw[i]);
                    }
                }
            }
            im_free(cum);
            im_free(xe);
            im_free(xw);
        }
    }
    printf("fleet: %d pods x 3 vLLM histograms (22/21/19 bounds), %d scrapes (2 h at 15 s)\n", pods,
           STEPS);
    printf("classic: %llu series, %llu chunk bytes, %.2f bytes/histogram sample, %.3f "
           "bytes/bucket value, decode %.1f ns/histogram sample\n",
           (unsigned long long)classic_series, (unsigned long long)classic_bytes,
           (double)classic_bytes / (double)hist_samples,
           (double)classic_bytes / (double)bucket_values,
           classic_dec * 1e9 / ((double)pods * 3 * CHUNK));
    printf("nhcb:    %llu series, %llu chunk bytes, %.2f bytes/histogram sample, %.3f "
           "bytes/bucket value, decode %.1f ns/histogram sample\n",
           (unsigned long long)nhcb_series, (unsigned long long)nhcb_bytes,
           (double)nhcb_bytes / (double)hist_samples, (double)nhcb_bytes / (double)bucket_values,
           nhcb_dec * 1e9 / ((double)pods * 3 * CHUNK));
    printf("nhcb/classic bytes: %.3f, series: %.3f\n", (double)nhcb_bytes / (double)classic_bytes,
           (double)nhcb_series / (double)classic_series);
    return 0;
}
