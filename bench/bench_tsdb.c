/* bench_tsdb.c — storage benchmark driver (bench/tsdb.sh runs it).
 *
 * Builds a realistic LLM-serving history from the vendored catalog samples
 * (catalog/vllm-sample.prom, catalog/dcgm-sample.prom): every series of one vLLM
 * pod and its 8 GPUs, cloned for N pods, evolving every 15 s as real ones do —
 * histograms fed by lognormal observations (buckets, _count, _sum consistent),
 * integer and float counters with occasional pod restarts (resets), ratio
 * gauges (used/total), integer gauges as bounded random walks, 3-decimal power
 * readings, clocks that rarely move, constant info and _created series.
 *
 *   bench_tsdb gen  CATALOG_DIR PODS HOURS OM_FILE TEXT_FILE
 *       writes the history as OpenMetrics (seconds) and as Prometheus text with
 *       millisecond timestamps (VictoriaMetrics' import format), series by series
 *   bench_tsdb load CATALOG_DIR PODS HOURS DIR
 *       appends the same history scrape by scrape (one commit per pod and step,
 *       cached refs, as the scraper does) into infermon's store at DIR, then
 *       persists and compacts it, and prints key=value figures: ingest CPU and
 *       rate, memory per active series, bytes per sample on disk, read-back time.
 * Deterministic: the same arguments give the same data. */
#include "util/base.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "expo/expo.h"
#include "labels/labels.h"
#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"
#include "util/fmtfloat.h"
#include "util/log.h"
#include "util/timeutil.h"

#define STEP_MS  15000
#define START_MS 1700006400000LL /* 6 h aligned: 6 h histories compact */

/* ---- Random numbers ---- */

static uint64_t rng_state = 0x243f6a8885a308d3ULL;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double urand(void)
{
    return (double)(rnd() >> 11) / 9007199254740992.0;
}
static double gauss(void)
{
    double u = urand() + 1e-12, v = urand();
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}
static uint64_t poisson(double l)
{
    if (l <= 0) return 0;
    if (l > 30) {
        double x = l + sqrt(l) * gauss();
        return x < 0 ? 0 : (uint64_t)llround(x);
    }
    double L = exp(-l), p = 1;
    uint64_t k = 0;
    do {
        k++;
        p *= urand();
    } while (p > L);
    return k - 1;
}

/* ---- Templates from the catalog ---- */

enum kind {
    K_CONST,
    K_COUNTER_INT,
    K_COUNTER_FLOAT,
    K_GAUGE_INT,
    K_GAUGE_RATIO,
    K_GAUGE_DEC,
    K_GAUGE_FLOAT,
    K_HIST_BUCKET,
    K_HIST_SUM,
    K_HIST_COUNT,
    K_CLOCK
};

typedef struct tmpl {
    const im_labels_t *ls; /* with __name__ */
    enum kind kind;
    double base;
    int decimals;
    bool dcgm;
    int hist;  /* histogram instance index (bucket/sum/count) */
    double le; /* bucket bound */
} tmpl_t;

typedef struct hist {
    char *key;
    double *les; /* sorted bounds */
    size_t nles;
} hist_t;

static tmpl_t *tm;
static size_t ntm;
static hist_t *hs;
static size_t nhs;

typedef struct pctx {
    bool dcgm;
    expo_type_t last_type;
    im_labels_builder_t lb;
} pctx_t;

static int decimals_of(double v)
{
    for (int k = 0; k <= 6; k++) {
        double s = pow(10, k);
        if (round(v * s) / s == v) return k;
    }
    return -1;
}

static int hist_index(const char *key)
{
    for (size_t i = 0; i < nhs; i++)
        if (strcmp(hs[i].key, key) == 0) return (int)i;
    hs = im_realloc(hs, (nhs + 1) * sizeof *hs);
    hs[nhs] = (hist_t){im_strdup(key), NULL, 0};
    return (int)nhs++;
}

static bool ends_with(im_sv_t s, const char *suf)
{
    size_t n = strlen(suf);
    return s.len >= n && memcmp(s.p + s.len - n, suf, n) == 0;
}

static int on_sample(void *user, const expo_entry_t *e)
{
    pctx_t *c = user;
    const im_labels_t *ls = expo_entry_labels(e, &c->lb);
    tmpl_t t = {ls, K_CONST, e->value, decimals_of(e->value), c->dcgm, -1, 0};
    im_sv_t name = e->name;
    if (ends_with(name, "_created") || ends_with(name, "_info") ||
        ends_with(name, "_start_time_seconds")) {
        t.kind = K_CONST;
    } else if (e->type == EXPO_TYPE_HISTOGRAM || e->type == EXPO_TYPE_SUMMARY) {
        /* instance key: family + labels without le/quantile */
        im_labels_builder_t b;
        im_lb_init(&b);
        im_lb_load(&b, ls);
        im_lb_del(&b, "le");
        im_lb_del(&b, "quantile");
        im_lb_set(&b, "__name__", 8, e->name.p, e->family_len);
        const im_labels_t *k = im_lb_build(&b);
        im_buf_t kb;
        im_buf_init(&kb, 0);
        (void)im_labels_format(k, &kb);
        im_labels_unref(k);
        im_lb_free(&b);
        t.hist = hist_index(kb.data);
        im_buf_free(&kb);
        if (ends_with(name, "_bucket")) {
            const im_istr_t *le = im_labels_get(ls, "le");
            t.le = le ? strtod(le->s, NULL) : INFINITY;
            if (le && strcmp(le->s, "+Inf") == 0) t.le = INFINITY;
            t.kind = K_HIST_BUCKET;
            hist_t *h = &hs[t.hist];
            h->les = im_realloc(h->les, (h->nles + 1) * sizeof *h->les);
            h->les[h->nles++] = t.le;
        } else if (ends_with(name, "_sum")) {
            t.kind = K_HIST_SUM;
        } else if (ends_with(name, "_count")) {
            t.kind = K_HIST_COUNT;
        } else {
            t.kind = K_GAUGE_FLOAT; /* summary quantiles */
        }
    } else if (e->type == EXPO_TYPE_COUNTER || ends_with(name, "_total") ||
               strstr(name.p, "ENERGY") == name.p + 0 || (c->dcgm && ends_with(name, "_BYTES")) ||
               (c->dcgm && ends_with(name, "_CONSUMPTION"))) {
        t.kind = t.decimals == 0 ? K_COUNTER_INT : K_COUNTER_FLOAT;
    } else if (c->dcgm && ends_with(name, "_CLOCK")) {
        t.kind = K_CLOCK;
    } else if (t.decimals == 0) {
        t.kind = (e->value == 0 || e->value == 1) && urand() < 0.5 ? K_CONST : K_GAUGE_INT;
    } else if (e->value >= 0 && e->value <= 1) {
        t.kind = K_GAUGE_RATIO;
    } else if (t.decimals > 0) {
        t.kind = K_GAUGE_DEC;
    } else {
        t.kind = K_GAUGE_FLOAT;
    }
    tm = im_realloc(tm, (ntm + 1) * sizeof *tm);
    tm[ntm++] = t;
    return 0;
}

static void load_catalog(const char *dir)
{
    const char *files[] = {"vllm-sample.prom", "dcgm-sample.prom"};
    for (int f = 0; f < 2; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        FILE *fp = fopen(path, "rb");
        if (!fp) {
            fprintf(stderr, "bench_tsdb: cannot open %s\n", path);
            exit(2);
        }
        im_buf_t b;
        im_buf_init(&b, 0);
        char tmp[65536];
        size_t n;
        while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0) (void)im_buf_append(&b, tmp, n);
        fclose(fp);
        pctx_t c = {0};
        c.dcgm = f == 1;
        im_lb_init(&c.lb);
        expo_callbacks_t cb = {on_sample, NULL};
        im_err_t err;
        if (expo_parse(b.data, b.len, EXPO_TEXT_004, &cb, &c, NULL, &err) != IM_OK) {
            fprintf(stderr, "bench_tsdb: %s: %s\n", path, err.msg);
            exit(2);
        }
        im_lb_free(&c.lb);
        im_buf_free(&b);
    }
}

/* ---- The history ---- */

typedef struct series {
    const im_labels_t *ls;
    int pod;
    double *v; /* [nsteps] */
} series_t;

static series_t *ser;
static size_t nser;
static size_t nsteps;

static const im_labels_t *pod_labels(const tmpl_t *t, int p)
{
    im_labels_builder_t b;
    im_lb_init(&b);
    im_lb_load(&b, t->ls);
    char pod[64], inst[64], host[64];
    snprintf(pod, sizeof pod, "llama-3-1-70b-instruct-5c7d9f6b8d-%05d", p);
    snprintf(host, sizeof host, "gpu-node-h100-%03d", p);
    if (t->dcgm) {
        snprintf(inst, sizeof inst, "10.1.%d.%d:9400", p / 250, p % 250);
        im_lb_set(&b, "Hostname", 8, host, strlen(host));
        im_lb_set(&b, "job", 3, "dcgm-exporter", 13);
    } else {
        snprintf(inst, sizeof inst, "10.0.%d.%d:8000", p / 250, p % 250);
        im_lb_set(&b, "job", 3, "vllm", 4);
        im_lb_set(&b, "namespace", 9, "llm-serving", 11);
    }
    im_lb_set(&b, "pod", 3, pod, strlen(pod));
    im_lb_set(&b, "instance", 8, inst, strlen(inst));
    const im_labels_t *ls = im_lb_build(&b);
    im_lb_free(&b);
    return ls;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double round_dec(double v, int d)
{
    if (d < 0) return v;
    double s = pow(10, d);
    return round(v * s) / s;
}

static void generate(int pods, double hours)
{
    nsteps = (size_t)(hours * 3600 * 1000 / STEP_MS);
    for (size_t h = 0; h < nhs; h++) qsort(hs[h].les, hs[h].nles, sizeof(double), cmp_d);
    nser = (size_t)pods * ntm;
    ser = im_calloc(nser, sizeof *ser);
    /* per pod, per histogram instance state */
    double *bcount = NULL; /* cumulative per bucket */
    size_t maxles = 1;
    for (size_t h = 0; h < nhs; h++) maxles = IM_MAX(maxles, hs[h].nles);
    bcount = im_malloc(nhs * maxles * sizeof *bcount);
    double *hsum = im_malloc(nhs * sizeof *hsum), *hcnt = im_malloc(nhs * sizeof *hcnt);
    double *mu = im_malloc(nhs * sizeof *mu), *lam = im_malloc(nhs * sizeof *lam);
    double *state = im_malloc(ntm * sizeof *state);
    size_t si = 0;
    for (int p = 0; p < pods; p++) {
        long restart = urand() < 0.15 ? (long)(urand() * (double)nsteps) : -1;
        double load = 0.5 + urand(); /* this pod's traffic level */
        for (size_t h = 0; h < nhs; h++) {
            double lo = 1e300, hi = 0;
            for (size_t j = 0; j < hs[h].nles; j++)
                if (isfinite(hs[h].les[j]))
                    lo = fmin(lo, hs[h].les[j]), hi = fmax(hi, hs[h].les[j]);
            if (lo > hi) lo = hi = 1;
            mu[h] = log(sqrt(lo * hi) + 1e-9) + 0.5 * gauss();
            lam[h] = load * (2 + 10 * urand());
            double warm = 500 + urand() * 5000;
            hcnt[h] = floor(lam[h] * warm);
            hsum[h] = hcnt[h] * exp(mu[h] + 0.5);
            for (size_t j = 0; j < hs[h].nles; j++) {
                double z = (log(hs[h].les[j]) - mu[h]);
                double cdf = isinf(hs[h].les[j]) ? 1 : 0.5 * erfc(-z / sqrt(2));
                bcount[h * maxles + j] = floor(hcnt[h] * cdf);
            }
            bcount[h * maxles + hs[h].nles - 1] = hcnt[h];
        }
        for (size_t i = 0; i < ntm; i++) {
            ser[si + i].ls = pod_labels(&tm[i], p);
            ser[si + i].pod = p;
            ser[si + i].v = im_malloc(nsteps * sizeof(double));
            state[i] = tm[i].base;
        }
        for (size_t k = 0; k < nsteps; k++) {
            bool reset = (long)k == restart;
            double diurnal = 1 + 0.3 * sin((double)k / 240.0 + p);
            /* histogram observations of this step */
            for (size_t h = 0; h < nhs; h++) {
                if (reset) {
                    hcnt[h] = hsum[h] = 0;
                    for (size_t j = 0; j < hs[h].nles; j++) bcount[h * maxles + j] = 0;
                }
                uint64_t n = poisson(lam[h] * diurnal);
                for (uint64_t o = 0; o < n; o++) {
                    double x = exp(mu[h] + gauss());
                    hsum[h] += x;
                    for (size_t j = 0; j < hs[h].nles; j++)
                        if (x <= hs[h].les[j]) bcount[h * maxles + j] += 1;
                }
                hcnt[h] += (double)n;
            }
            for (size_t i = 0; i < ntm; i++) {
                const tmpl_t *t = &tm[i];
                double *s = &state[i], v = *s;
                switch (t->kind) {
                case K_CONST: v = t->base; break;
                case K_COUNTER_INT:
                    if (reset) *s = 0;
                    *s += (double)poisson(fmax(0.05, fabs(t->base) / 20000.0) * diurnal * load);
                    v = *s;
                    break;
                case K_COUNTER_FLOAT:
                    if (reset) *s = 0;
                    *s = round_dec(*s + fabs(gauss()) * fmax(0.01, fabs(t->base) / 20000.0),
                                   t->decimals < 0 ? 2 : t->decimals);
                    v = *s;
                    break;
                case K_GAUGE_INT:
                    if (urand() < 0.3) *s = fmax(0, *s + (double)((int)(rnd() % 5) - 2));
                    v = *s;
                    break;
                case K_GAUGE_RATIO: {
                    double total = 12000;
                    double used = round(fmin(1, fmax(0, *s + 0.02 * gauss())) * total);
                    *s = used / total;
                    v = *s;
                    break;
                }
                case K_GAUGE_DEC:
                    *s = fmax(0, t->base * (1 + 0.1 * sin((double)k / 40.0)) +
                                     0.02 * t->base * gauss());
                    v = round_dec(*s, t->decimals);
                    break;
                case K_GAUGE_FLOAT: v = t->base * (1 + 0.05 * gauss()); break;
                case K_CLOCK:
                    if (urand() < 0.01) *s = t->base - 15 * (double)(rnd() % 8);
                    v = *s;
                    break;
                case K_HIST_BUCKET: {
                    const hist_t *h = &hs[t->hist];
                    size_t j = 0;
                    while (j < h->nles && h->les[j] != t->le) j++;
                    v = bcount[(size_t)t->hist * maxles + (j < h->nles ? j : 0)];
                    break;
                }
                case K_HIST_SUM: v = hsum[t->hist]; break;
                case K_HIST_COUNT: v = hcnt[t->hist]; break;
                }
                ser[si + i].v[k] = v;
            }
        }
        si += ntm;
    }
    im_free(bcount);
    im_free(hsum);
    im_free(hcnt);
    im_free(mu);
    im_free(lam);
    im_free(state);
}

/* ---- gen ---- */

static int cmd_gen(const char *om, const char *text)
{
    FILE *fo = fopen(om, "w"), *ft = fopen(text, "w");
    if (!fo || !ft) {
        fprintf(stderr, "bench_tsdb: cannot create output files\n");
        return 2;
    }
    im_buf_t bo, bt, name;
    im_buf_init(&bo, 0);
    im_buf_init(&bt, 0);
    im_buf_init(&name, 0);
    for (size_t s = 0; s < nser; s++) {
        im_buf_reset(&name);
        (void)im_labels_format(ser[s].ls, &name);
        /* im_labels_format puts ", " between labels; exposition wants "," */
        size_t w = 0;
        for (size_t i = 0; i < name.len; i++) {
            if (name.data[i] == ',' && i + 1 < name.len && name.data[i + 1] == ' ') {
                name.data[w++] = ',';
                i++;
                continue;
            }
            name.data[w++] = name.data[i];
        }
        name.len = w;
        for (size_t k = 0; k < nsteps; k++) {
            char vb[64];
            im_fmt_float_expo(ser[s].v[k], vb, sizeof vb);
            int64_t t = START_MS + (int64_t)k * STEP_MS;
            (void)im_buf_append(&bo, name.data, name.len);
            (void)im_buf_printf(&bo, " %s %" PRId64 "\n", vb, t / 1000);
            (void)im_buf_append(&bt, name.data, name.len);
            (void)im_buf_printf(&bt, " %s %" PRId64 "\n", vb, t);
        }
        if (bo.len > (4u << 20)) {
            fwrite(bo.data, 1, bo.len, fo);
            fwrite(bt.data, 1, bt.len, ft);
            im_buf_reset(&bo);
            im_buf_reset(&bt);
        }
    }
    (void)im_buf_puts(&bo, "# EOF\n");
    fwrite(bo.data, 1, bo.len, fo);
    fwrite(bt.data, 1, bt.len, ft);
    fclose(fo);
    fclose(ft);
    im_buf_free(&bo);
    im_buf_free(&bt);
    im_buf_free(&name);
    printf("series=%zu samples=%zu\n", nser, nser * nsteps);
    return 0;
}

/* ---- load ---- */

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kb = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kb;
}

static uint64_t dir_bytes(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return 0;
    uint64_t n = 0;
    struct dirent *de;
    char p[2048];
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", path, de->d_name);
        struct stat st;
        if (stat(p, &st) != 0) continue;
        n += S_ISDIR(st.st_mode) ? dir_bytes(p) : (uint64_t)st.st_size;
    }
    closedir(d);
    return n;
}

static int cmd_load(const char *dir, int pods)
{
    tsdb_opts_t o = {0};
    o.dir = dir;
    o.no_background = true;
    o.fsync = TSDB_FSYNC_NEVER;
    tsdb_t *db;
    im_err_t err;
    if (tsdb_open(&o, &db, &err) != IM_OK) {
        fprintf(stderr, "bench_tsdb: %s\n", err.msg);
        return 2;
    }
    long rss0 = rss_kb();
    tsdb_ref_t *refs = im_calloc(nser, sizeof *refs);
    double c0 = cpu_seconds();
    int64_t w0 = im_mono_ns();
    size_t per_pod = nser / (size_t)pods;
    long rss25 = 0;
    for (size_t k = 0; k < nsteps; k++) {
        if (k == 25) rss25 = rss_kb();
        for (int p = 0; p < pods; p++) {
            tsdb_appender_t *a = tsdb_appender(db);
            for (size_t s = (size_t)p * per_pod; s < (size_t)(p + 1) * per_pod; s++) {
                im_rc rc =
                    tsdb_appender_add(a, refs[s], refs[s] ? NULL : ser[s].ls,
                                      START_MS + (int64_t)k * STEP_MS, ser[s].v[k], &refs[s]);
                if (rc != IM_OK) {
                    fprintf(stderr, "bench_tsdb: add: %s\n", im_rc_str(rc));
                    return 2;
                }
            }
            if (tsdb_appender_commit(a, &err) != IM_OK) {
                fprintf(stderr, "bench_tsdb: commit: %s\n", err.msg);
                return 2;
            }
        }
    }
    double ingest_cpu = cpu_seconds() - c0;
    double ingest_wall = (double)(im_mono_ns() - w0) / 1e9;
    long rss1 = rss_kb();
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    size_t samples = nser * nsteps;
    printf("series=%zu samples=%zu\n", nser, samples);
    printf("ingest_cpu_s=%.3f ingest_wall_s=%.3f ingest_samples_per_cpu_s=%.0f\n", ingest_cpu,
           ingest_wall, (double)samples / ingest_cpu);
    printf("head_bytes=%" PRIu64 " head_bytes_per_series=%.0f rss_delta_per_series=%.0f "
           "rss_delta_per_series_25=%.0f\n",
           st.head_bytes, (double)st.head_bytes / (double)st.head_series,
           (double)(rss1 - rss0) * 1024.0 / (double)nser,
           (double)(rss25 - rss0) * 1024.0 / (double)nser);
    c0 = cpu_seconds();
    if (tsdb_flush_head(db, &err) != IM_OK || tsdb_maintain(db, &err) != IM_OK) {
        fprintf(stderr, "bench_tsdb: flush: %s\n", err.msg);
        return 2;
    }
    printf("persist_cpu_s=%.3f\n", cpu_seconds() - c0);
    tsdb_close(db);
    char bd[2048];
    snprintf(bd, sizeof bd, "%s/blocks", dir);
    uint64_t bytes = dir_bytes(bd), all = dir_bytes(dir);
    printf("disk_bytes=%" PRIu64 " blocks_bytes=%" PRIu64 " bytes_per_sample=%.4f\n", all, bytes,
           (double)all / (double)samples);
    /* read back everything from the blocks */
    if (tsdb_open(&o, &db, &err) != IM_OK) return 2;
    w0 = im_mono_ns();
    tsdb_queryable_t *q = tsdb_queryable(db);
    im_matcher_t *m;
    (void)im_matcher_new(IM_MATCH_RE, "__name__", 8, ".+", 2, &m, NULL);
    tsdb_series_set_t *set;
    size_t got = 0;
    uint64_t mism = 0;
    if (q->vt->select(q, INT64_MIN, INT64_MAX, &m, 1, NULL, &set, &err) == IM_OK) {
        for (size_t i = 0; i < set->n; i++) {
            tsdb_iter_t *it = set->vt->iter(set, i);
            int64_t t;
            double v;
            while (it->vt->next(it)) {
                it->vt->at(it, &t, &v);
                got++;
            }
            it->vt->free(it);
        }
        set->vt->free(set);
    }
    double read_s = (double)(im_mono_ns() - w0) / 1e9;
    /* exactness: every value bit-identical */
    for (size_t s = 0; s < nser && s < 2000; s++) {
        im_matcher_t *ms[64];
        size_t nm = 0;
        for (uint32_t j = 0; j < ser[s].ls->n && nm < 64; j++)
            (void)im_matcher_new(IM_MATCH_EQ, ser[s].ls->l[j].name->s, ser[s].ls->l[j].name->len,
                                 ser[s].ls->l[j].value->s, ser[s].ls->l[j].value->len, &ms[nm++],
                                 NULL);
        if (q->vt->select(q, INT64_MIN, INT64_MAX, ms, nm, NULL, &set, &err) == IM_OK) {
            for (size_t i = 0; i < set->n; i++) {
                if (!im_labels_equal(set->series[i].labels, ser[s].ls)) continue;
                tsdb_iter_t *it = set->vt->iter(set, i);
                int64_t t;
                double v;
                size_t k = 0;
                while (it->vt->next(it)) {
                    it->vt->at(it, &t, &v);
                    if (k >= nsteps || memcmp(&v, &ser[s].v[k], 8) != 0) mism++;
                    k++;
                }
                if (k != nsteps) mism++;
                it->vt->free(it);
            }
            set->vt->free(set);
        }
        for (size_t j = 0; j < nm; j++) im_matcher_free(ms[j]);
    }
    printf("read_all_s=%.3f read_samples=%zu exact_mismatches=%" PRIu64 "\n", read_s, got, mism);
    im_matcher_free(m);
    q->vt->close(q);
    tsdb_close(db);
    im_free(refs);
    return got == samples && mism == 0 ? 0 : 1;
}

/* ---- codec: where the bytes go, per kind of series (before zstd) ---- */

static int cmd_codec(void)
{
    static const char *names[] = {"const",       "counter_int", "counter_float", "gauge_int",
                                  "gauge_ratio", "gauge_dec",   "gauge_float",   "hist_bucket",
                                  "hist_sum",    "hist_count",  "clock"};
    double bytes[16] = {0}, n[16] = {0};
    im_buf_t b;
    im_buf_init(&b, 0);
    for (size_t s = 0; s < nser; s++) {
        int k = (int)tm[s % ntm].kind;
        im_buf_reset(&b);
        tsdb__vals_encode(&b, ser[s].v, nsteps);
        bytes[k] += (double)b.len;
        n[k] += (double)nsteps;
    }
    double tb = 0, tn = 0;
    for (int k = 0; k < 11; k++) {
        if (!n[k]) continue;
        printf("%-14s series=%6.0f bytes/sample=%.3f\n", names[k], n[k] / (double)nsteps,
               bytes[k] / n[k]);
        tb += bytes[k];
        tn += n[k];
    }
    for (int k = 0; k < 11; k++)
        if (n[k]) printf("%-14s share of value bytes %.1f%%\n", names[k], 100 * bytes[k] / tb);
    printf("total value bytes/sample before zstd %.3f\n", tb / tn);
    im_buf_free(&b);
    return 0;
}

int main(int argc, char **argv)
{
    im_log_set_level(IM_LOG_WARN);
    if (argc < 5) {
        fprintf(stderr, "usage: bench_tsdb gen CATALOG PODS HOURS OM_FILE TEXT_FILE\n"
                        "       bench_tsdb load CATALOG PODS HOURS DIR\n");
        return 2;
    }
    load_catalog(argv[2]);
    int pods = (int)strtol(argv[3], NULL, 10);
    double hours = strtod(argv[4], NULL);
    generate(pods, hours);
    if (strcmp(argv[1], "gen") == 0 && argc >= 7) return cmd_gen(argv[5], argv[6]);
    if (strcmp(argv[1], "load") == 0 && argc >= 6) return cmd_load(argv[5], pods);
    if (strcmp(argv[1], "codec") == 0) return cmd_codec();
    fprintf(stderr, "bench_tsdb: bad arguments\n");
    return 2;
}
