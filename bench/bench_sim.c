/* bench_sim.c — simulator costs, each with a baseline measured in the same run.
 *
 *  serve:   1,000 pods (plus their 125 dcgm nodes and Kueue): one 15 s scrape
 *           interval = 15 model ticks + rendering every endpoint + gzip level 1
 *           (Prometheus asks for gzip). Reported as the fraction of one core.
 *           Baseline: memcpy of the same bytes, and gzip alone.
 *  history: --history 6h --step 15s of a 16-pod fleet written to /dev/null, in
 *           samples per second (simulation included). Baseline: the same number
 *           of lines of the same length written with fprintf("%s %.17g %lld\n").
 *
 * usage: bench_sim [pods] [history_pods] */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zlib.h>

#include "util/buf.h"
#include "sim/sim.h"

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t gz(const char *in, size_t n, unsigned char *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    size_t r = z.total_out;
    deflateEnd(&z);
    return r;
}

int main(int argc, char **argv)
{
    int pods = argc > 1 ? atoi(argv[1]) : 1000; /* checksrc: allow (bench argument) */
    int hpods = argc > 2 ? atoi(argv[2]) : 16;  /* checksrc: allow (bench argument) */
    const int64_t t0 = 1787650000000LL;
    sim_options_t o;
    sim_options_default(&o);
    o.pods = pods;
    o.start_ms = t0;
    sim_fleet_t *f;
    im_err_t err;
    if (sim_fleet_create(&o, &f, &err) != IM_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    sim_fleet_advance(f, t0 + 300 * 1000); /* warm up: 5 minutes of traffic */
    int nep = sim_fleet_endpoint_count(f);
    im_buf_t b;
    im_buf_init(&b, 0);
    size_t zcap = 4 << 20;
    unsigned char *zbuf = im_malloc(zcap);
    const int rounds = 4;
    double c_tick = 0, c_render = 0, c_gzip = 0;
    size_t bytes = 0, zbytes = 0;
    char **bodies = im_calloc((size_t)nep, sizeof *bodies);
    size_t *lens = im_calloc((size_t)nep, sizeof *lens);
    for (int r = 1; r <= rounds; r++) {
        double a = cpu_s();
        sim_fleet_advance(f, t0 + (300 + 15 * r) * 1000LL);
        double bb = cpu_s();
        for (int i = 0; i < nep; i++) {
            const sim_endpoint_t *e = sim_fleet_endpoint(f, i);
            im_buf_reset(&b);
            if (sim_fleet_render(f, e->kind, e->index, &b) != IM_OK) return 1;
            bytes += b.len;
            if (r == rounds) {
                bodies[i] = im_strndup(b.data, b.len);
                lens[i] = b.len;
            }
        }
        double c = cpu_s();
        for (int i = 0; r == rounds && i < nep; i++) zbytes += gz(bodies[i], lens[i], zbuf, zcap);
        double d = cpu_s();
        c_tick += bb - a;
        c_render += c - bb;
        if (r == rounds) c_gzip = d - c;
    }
    /* baseline: copying the same bytes once per round */
    char *dst = im_malloc(4 << 20);
    double a = cpu_s();
    volatile size_t sink = 0;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < nep; i++) {
            memcpy(dst, bodies[i], lens[i]);
            sink += (size_t)dst[lens[i] / 2];
        }
    double c_memcpy = cpu_s() - a;
    double per_round = (c_tick + c_render) / rounds + c_gzip;
    printf("serve: %d pods, %d endpoints, %.1f MB per scrape round (%.1f MB gzipped)\n", pods, nep,
           (double)bytes / rounds / 1e6, (double)zbytes / 1e6);
    printf("  model ticks   %.3f s CPU per 15 s\n", c_tick / rounds);
    printf("  render        %.3f s CPU per 15 s\n", c_render / rounds);
    printf("  gzip level 1  %.3f s CPU per 15 s (baseline: compressing the same bytes)\n", c_gzip);
    printf("  memcpy        %.4f s CPU per 15 s (baseline: copying the same bytes)\n",
           c_memcpy / rounds);
    printf("  total         %.3f s CPU per 15 s = %.1f%% of one core; render/memcpy = %.0fx\n",
           per_round, per_round / 15 * 100, c_render / (c_memcpy > 0 ? c_memcpy : 1e-9));
    for (int i = 0; i < nep; i++) im_free(bodies[i]);
    im_free(bodies);
    im_free(lens);
    sim_fleet_free(f);

    /* history */
    o.pods = hpods;
    const int64_t hist = 6 * 3600 * 1000LL, end = t0 + hist;
    o.start_ms = t0;
    if (sim_fleet_create(&o, &f, &err) != IM_OK) return 1;
    FILE *null = fopen("/dev/null", "wb");
    sim_history_stats_t st;
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    double h0 = cpu_s();
    if (sim_history_write(f, t0, end, 15000, (size_t)8 << 30, null, &st, &err) != IM_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double hc = cpu_s() - h0;
    clock_gettime(CLOCK_MONOTONIC, &w1);
    double hw = (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) / 1e9;
    sim_fleet_free(f);
    /* baseline: the same number of sample lines (same average length) written
     * with stdio formatting, "%s %.17g %lld\n", to /dev/null */
    size_t avg = st.samples ? (size_t)(st.bytes / st.samples) : 100;
    size_t plen = avg > 40 ? avg - 40 : 8;
    char *mem = im_malloc(plen + 1);
    memset(mem, 'x', plen);
    mem[plen] = '\0';
    double f0 = cpu_s();
    for (int64_t i = 0; i < st.samples; i++)
        fprintf(null, "%s %.17g %lld\n", mem, (double)(i % 977) * 0.25, (long long)(t0 / 1000 + i));
    double fc = cpu_s() - f0;
    fclose(null);
    printf("history: 6h at 15s, %d pods: %lld samples, %lld series, %.0f MB\n", hpods,
           (long long)st.samples, (long long)st.series, (double)st.bytes / 1e6);
    printf("  infermon simulate --history  %.2f s CPU (%.2f s wall) = %.2f M samples/s CPU, %.2f "
           "M samples/s wall\n",
           hc, hw, (double)st.samples / hc / 1e6, (double)st.samples / hw / 1e6);
    printf("  baseline fprintf same lines  %.2f s CPU = %.2f M lines/s; history/fprintf = %.2fx "
           "the time\n",
           fc, (double)st.samples / (fc > 0 ? fc : 1e-9) / 1e6, hc / (fc > 0 ? fc : 1e-9));
    im_free(mem);
    im_free(dst);
    im_free(zbuf);
    im_buf_free(&b);
    (void)sink;
    return 0;
}
