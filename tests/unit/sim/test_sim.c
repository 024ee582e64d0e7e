/* test_sim.c — unit tests for src/sim: number formats, fidelity against the
 * catalog's sample expositions, V0/V1 names, determinism, invariants over long
 * runs (counters grow, buckets cumulative, _count = +Inf), every scenario's
 * signature within bounded simulated time, and the YAML scenario format. */
#include "util/base.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "sim/sim.h"
#include "sim/sim_int.h"

#define T0_MS 1787650000000LL /* 2026-08-25T11:26:40Z */

static sim_fleet_t *mk(const char *scenario, const char *version, int pods, uint64_t seed)
{
    sim_options_t o;
    sim_options_default(&o);
    o.pods = pods;
    o.seed = seed;
    o.start_ms = T0_MS;
    if (scenario) o.scenario = scenario;
    if (version) o.vllm_version = version;
    sim_fleet_t *f = NULL;
    im_err_t err;
    im_rc rc = sim_fleet_create(&o, &f, &err);
    if (rc != IM_OK) fprintf(stderr, "create: %s\n", err.msg);
    assert_int_equal(rc, IM_OK);
    return f;
}

static char *render(sim_fleet_t *f, sim_ep_kind_t k, int i)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(sim_fleet_render(f, k, i, &b), IM_OK);
    return im_buf_steal(&b, NULL);
}

static char *read_catalog(const char *name)
{
    const char *src = getenv("IM_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/catalog/%s", src ? src : "..", name);
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *buf = im_malloc(1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

/* ---- formats ---- */

static void check_fmt(double v, sim_fmt_t f, const char *want)
{
    char buf[80];
    size_t n = sim__fmt(v, f, buf);
    buf[n] = '\0';
    if (strcmp(buf, want) != 0) fprintf(stderr, "fmt %.17g: got %s want %s\n", v, buf, want);
    assert_string_equal(buf, want);
}

static void test_formats(void **state)
{
    (void)state;
    check_fmt(1, SIM_FMT_PY, "1.0");
    check_fmt(0, SIM_FMT_PY, "0.0");
    check_fmt(0.001, SIM_FMT_PY, "0.001");
    check_fmt(12, SIM_FMT_PY, "12.0");
    check_fmt(100000, SIM_FMT_PY, "100000.0");
    check_fmt(846336, SIM_FMT_PY, "846336.0");
    check_fmt(2093283, SIM_FMT_PY, "2.093283e+06");
    check_fmt(1048576, SIM_FMT_PY, "1.048576e+06");
    check_fmt(10000000, SIM_FMT_PY, "1e+07");
    check_fmt(1787649975.3185596, SIM_FMT_PY, "1.7876499753185596e+09");
    check_fmt(1.78764993412e9, SIM_FMT_PY, "1.78764993412e+09");
    check_fmt(25374449664.0, SIM_FMT_PY, "2.5374449664e+010");
    check_fmt(0.06473698630136986, SIM_FMT_PY, "0.06473698630136986");
    check_fmt(294.46979357613213, SIM_FMT_PY, "294.46979357613213");
    check_fmt(1e-05, SIM_FMT_PY, "1e-05");
    check_fmt(0.0001, SIM_FMT_PY, "0.0001");
    check_fmt(1e16, SIM_FMT_PY, "1e+16");
    check_fmt(INFINITY, SIM_FMT_PY, "+Inf");
    check_fmt(2560, SIM_FMT_PY, "2560.0");
    check_fmt(1, SIM_FMT_GO, "1");
    check_fmt(192, SIM_FMT_GO, "192");
    check_fmt(2.06158430208e12, SIM_FMT_GO, "2.06158430208e+12");
    check_fmt(13.209960514519263, SIM_FMT_GO, "13.209960514519263");
    check_fmt(INFINITY, SIM_FMT_GO, "+Inf");
    check_fmt(0.005, SIM_FMT_GO, "0.005");
    check_fmt(1234567, SIM_FMT_GO, "1.234567e+06");
    check_fmt(67.351, SIM_FMT_DCGM_F, "67.351000");
    check_fmt(0, SIM_FMT_DCGM_F, "0.000000");
    check_fmt(94423943363.0, SIM_FMT_DCGM_INT, "94423943363");
    check_fmt(0, SIM_FMT_DCGM_INT, "0");
}

/* ---- fidelity against the catalog samples ---- */

/* Next line of s into out (without newline); returns the rest or NULL. */
static const char *next_line(const char *s, char *out, size_t cap)
{
    if (!s || !*s) return NULL;
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    if (n >= cap) n = cap - 1;
    memcpy(out, s, n);
    out[n] = '\0';
    return nl ? nl + 1 : s + strlen(s);
}

/* A sample line's name and label names (values dropped), for shape comparison. */
static void shape(const char *line, char *out, size_t cap)
{
    size_t o = 0;
    bool inq = false, inlabels = false;
    for (const char *p = line; *p && o + 2 < cap; p++) {
        if (!inlabels && *p == ' ') break;
        if (inq) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                inq = false;
            continue;
        }
        if (*p == '"') {
            inq = true;
            continue;
        }
        if (*p == '{') inlabels = true;
        if (*p == '}') inlabels = false;
        out[o++] = *p;
    }
    out[o] = '\0';
}

/* Compares the two expositions family by family: HELP and TYPE lines must be
 * identical; sample lines must have the same shape (name and label names) in
 * the same order when `series_too`. Families of `ours` missing from `want` and
 * vice versa fail. */
static void compare_shape(const char *ours, const char *want, bool series_too, bool le_values)
{
    const char *a = ours, *b = want;
    char la[4096], lb[4096], sa[4096], sb[4096];
    int line = 0;
    for (;;) {
        a = next_line(a, la, sizeof la);
        /* skip lines of ours that the sample lacks only when not comparing series */
        if (!series_too)
            while (a && la[0] != '#') a = next_line(a, la, sizeof la);
        b = next_line(b, lb, sizeof lb);
        if (!series_too)
            while (b && lb[0] != '#') b = next_line(b, lb, sizeof lb);
        line++;
        if (!a || !b) {
            if (a || b)
                fprintf(stderr, "line %d: ours=%s want=%s\n", line, a ? la : "EOF", b ? lb : "EOF");
            assert_true(!a && !b);
            return;
        }
        if (la[0] == '#' || lb[0] == '#') {
            if (strcmp(la, lb) != 0)
                fprintf(stderr, "line %d:\n ours=%s\n want=%s\n", line, la, lb);
            assert_string_equal(la, lb);
            continue;
        }
        if (le_values) {
            /* keep le values: compare the text before the value, minus other values */
            const char *lea = strstr(la, "le=\""), *leb = strstr(lb, "le=\"");
            if (lea || leb) {
                assert_non_null(lea);
                assert_non_null(leb);
                const char *ea = strchr(lea + 4, '"'), *eb = strchr(leb + 4, '"');
                if (ea - lea != eb - leb)
                    fprintf(stderr, "line %d:\n ours=%s\n want=%s\n", line, la, lb);
                assert_int_equal(ea - lea, eb - leb);
                assert_memory_equal(lea, leb, (size_t)(ea - lea));
            }
        }
        shape(la, sa, sizeof sa);
        shape(lb, sb, sizeof sb);
        if (strcmp(sa, sb) != 0) fprintf(stderr, "line %d:\n ours=%s\n want=%s\n", line, la, lb);
        assert_string_equal(sa, sb);
    }
}

static void test_vllm_matches_sample(void **state)
{
    (void)state;
    char *want = read_catalog("vllm-sample.prom");
    if (!want) skip();
    /* no engine errors: the sample has no 4xx/5xx series */
    char path[] = "/tmp/im-sim-noerr-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *y = "set: {error_frac: 0}\n";
    assert_int_equal(write(fd, y, strlen(y)), (ssize_t)strlen(y));
    close(fd);
    sim_fleet_t *f = mk(path, "0.27.1", 1, 1);
    unlink(path);
    sim_fleet_advance(f, T0_MS + 300 * 1000);
    char *ours = render(f, SIM_EP_VLLM, 0);
    compare_shape(ours, want, true, true);
    im_free(ours);
    im_free(want);
    sim_fleet_free(f);
}

static void test_dcgm_kueue_match_sample(void **state)
{
    (void)state;
    char *want = read_catalog("dcgm-sample.prom");
    if (!want) skip();
    /* 3 pods with 2 GPUs each plus one on 1 GPU would be the sample; families and
     * help/type lines are what must match whatever the layout. */
    sim_fleet_t *f = mk("healthy", NULL, 3, 1);
    sim_fleet_advance(f, T0_MS + 60 * 1000);
    char *ours = render(f, SIM_EP_DCGM, 0);
    compare_shape(ours, want, false, false);
    /* label order of a GPU with a pod and of an idle GPU, as in the sample */
    assert_non_null(strstr(ours, "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-"));
    assert_non_null(strstr(ours,
                           "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"gpu-node-h100-01\","
                           "DCGM_FI_DRIVER_VERSION=\"580.95.05\",container=\"vllm\",namespace=\""));
    assert_non_null(strstr(ours, "DCGM_FI_DRIVER_VERSION=\"580.95.05\"} "));
    im_free(ours);
    im_free(want);
    want = read_catalog("kueue-sample.prom");
    ours = render(f, SIM_EP_KUEUE, 0);
    compare_shape(ours, want, false, false);
    assert_non_null(strstr(
        ours,
        "kueue_local_queue_resource_reservation{flavor=\"h100-80gb\",name=\"lq-llm-serving\","
        "namespace=\"llm-serving\",replica_role=\"leader\",resource=\"nvidia.com/gpu\"} 2\n"));
    assert_non_null(strstr(ours, "_bucket{cluster_queue=\"cq-llm-serving\",priority_class=\"high-"
                                 "priority\",replica_role=\"leader\",le=\"1\"}"));
    im_free(ours);
    im_free(want);
    sim_fleet_free(f);
}

/* --dcgm-profiling adds the DCP fields default-counters.csv comments out, in
 * field-id order; they follow the GPU's activity. */
static void test_dcgm_profiling(void **state)
{
    (void)state;
    sim_options_t o;
    sim_options_default(&o);
    o.pods = 8;
    o.start_ms = T0_MS;
    sim_fleet_t *f;
    assert_int_equal(sim_fleet_create(&o, &f, NULL), IM_OK);
    char *plain = render(f, SIM_EP_DCGM, 0);
    assert_null(strstr(plain, "DCGM_FI_PROF_SM_ACTIVE"));
    sim_fleet_free(f);
    o.dcgm_profiling = true;
    assert_int_equal(sim_fleet_create(&o, &f, NULL), IM_OK);
    sim_fleet_advance(f, T0_MS + 120 * 1000);
    char *t = render(f, SIM_EP_DCGM, 0);
    const char *gr = strstr(t, "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge");
    const char *sm = strstr(t, "# TYPE DCGM_FI_PROF_SM_ACTIVE gauge");
    const char *occ = strstr(t, "# TYPE DCGM_FI_PROF_SM_OCCUPANCY gauge");
    const char *tc = strstr(t, "# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge");
    const char *f16 = strstr(t, "# TYPE DCGM_FI_PROF_PIPE_FP16_ACTIVE gauge");
    const char *tx = strstr(t, "# TYPE DCGM_FI_PROF_PCIE_TX_BYTES gauge");
    assert_true(gr && sm && occ && tc && f16 && tx);
    assert_true(gr < sm && sm < occ && occ < tc && tc < f16 && f16 < tx);
    /* a busy GPU shows SM activity, printed with %f */
    const char *line = strstr(sm, "\nDCGM_FI_PROF_SM_ACTIVE{gpu=\"0\"");
    assert_non_null(line);
    const char *val = strchr(strchr(line, '}'), ' ') + 1;
    double x = strtod(val, NULL);
    assert_true(x > 0.05 && x < 1);
    assert_int_equal(strchr(val, '\n') - strchr(val, '.'), 7);
    im_free(t);
    im_free(plain);
    sim_fleet_free(f);
}

/* ---- versions ---- */

static bool has_family(const char *text, const char *fam)
{
    char pat[256];
    snprintf(pat, sizeof pat, "# TYPE %s ", fam);
    return strstr(text, pat) != NULL;
}

static void test_versions(void **state)
{
    (void)state;
    sim_fleet_t *f = mk("healthy", "0.6.6", 1, 1);
    sim_fleet_advance(f, T0_MS + 120 * 1000);
    char *t = render(f, SIM_EP_VLLM, 0);
    static const char *const v0[] = {"vllm:gpu_cache_usage_perc",
                                     "vllm:num_requests_swapped",
                                     "vllm:cpu_cache_usage_perc",
                                     "vllm:time_in_queue_requests",
                                     "vllm:time_per_output_token_seconds",
                                     "vllm:num_preemptions_total",
                                     "vllm:avg_prompt_throughput_toks_per_s",
                                     "vllm:num_requests_running",
                                     "vllm:request_success_total"};
    for (size_t i = 0; i < IM_ARRAY_LEN(v0); i++) {
        if (!has_family(t, v0[i])) fprintf(stderr, "V0 lacks %s\n", v0[i]);
        assert_true(has_family(t, v0[i]));
    }
    assert_false(has_family(t, "vllm:kv_cache_usage_perc"));
    assert_false(has_family(t, "vllm:inter_token_latency_seconds"));
    assert_false(has_family(t, "vllm:num_requests_waiting_by_reason"));
    assert_null(strstr(t, "engine=\""));
    assert_non_null(strstr(
        t, "# HELP vllm:num_requests_running Number of requests currently running on GPU.\n"));
    assert_non_null(strstr(
        t, "# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.\n"));
    /* TTFT ended at 10.0 before 0.8.4 */
    assert_null(strstr(t, "vllm:time_to_first_token_seconds_bucket{le=\"20.0\""));
    assert_non_null(strstr(t, "vllm:time_to_first_token_seconds_bucket{le=\"10.0\",model_name="));
    im_free(t);
    sim_fleet_free(f);

    f = mk("healthy", "0.10.0", 1, 1);
    t = render(f, SIM_EP_VLLM, 0);
    assert_true(has_family(t, "vllm:gpu_cache_usage_perc"));
    assert_true(has_family(t, "vllm:kv_cache_usage_perc"));
    assert_true(has_family(t, "vllm:time_per_output_token_seconds"));
    assert_true(has_family(t, "vllm:gpu_prefix_cache_queries_total"));
    assert_false(has_family(t, "vllm:num_requests_swapped"));
    assert_non_null(strstr(t, "GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use "
                              "vllm:kv_cache_usage_perc instead.\n"));
    assert_non_null(strstr(t, "engine=\"0\""));
    assert_null(strstr(t, "finished_reason=\"error\""));
    im_free(t);
    sim_fleet_free(f);

    f = mk("healthy", NULL, 1, 1);
    t = render(f, SIM_EP_VLLM, 0);
    assert_false(has_family(t, "vllm:gpu_cache_usage_perc"));
    assert_false(has_family(t, "vllm:time_per_output_token_seconds"));
    assert_true(has_family(t, "vllm:num_requests_waiting_by_reason"));
    assert_non_null(strstr(t, "finished_reason=\"repetition\""));
    im_free(t);
    sim_fleet_free(f);

    sim_options_t o;
    sim_options_default(&o);
    o.vllm_version = "banana";
    sim_fleet_t *bad = NULL;
    im_err_t err;
    assert_int_equal(sim_fleet_create(&o, &bad, &err), IM_EINVAL);
    assert_null(bad);
}

/* ---- determinism ---- */

static void test_determinism(void **state)
{
    (void)state;
    sim_fleet_t *a = mk("healthy", NULL, 3, 7), *b = mk("healthy", NULL, 3, 7),
                *c = mk("healthy", NULL, 3, 8);
    for (int s = 1; s <= 4; s++) {
        int64_t t = T0_MS + s * 15000;
        sim_fleet_advance(a, t);
        sim_fleet_advance(b, t);
        sim_fleet_advance(c, t);
    }
    for (int k = 0; k < 3; k++) {
        char *x = render(a, (sim_ep_kind_t)k, 0), *y = render(b, (sim_ep_kind_t)k, 0);
        assert_string_equal(x, y);
        im_free(x);
        im_free(y);
    }
    char *x = render(a, SIM_EP_VLLM, 1), *z = render(c, SIM_EP_VLLM, 1);
    assert_string_not_equal(x, z);
    im_free(x);
    im_free(z);
    sim_fleet_free(a);
    sim_fleet_free(b);
    sim_fleet_free(c);
}

/* ---- invariants over long runs ---- */

typedef struct kv {
    char *key;
    double v;
} kv_t;

typedef struct smap {
    kv_t *e;
    size_t cap, n;
} smap_t;

static uint64_t fnv(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static kv_t *smap_get(smap_t *m, const char *k, size_t n, bool create)
{
    if (m->cap == 0) {
        m->cap = 1 << 16;
        m->e = im_calloc(m->cap, sizeof *m->e);
    }
    size_t i = fnv(k, n) & (m->cap - 1);
    while (m->e[i].key) {
        if (strlen(m->e[i].key) == n && memcmp(m->e[i].key, k, n) == 0) return &m->e[i];
        i = (i + 1) & (m->cap - 1);
    }
    if (!create) return NULL;
    assert_true(m->n < m->cap / 2);
    m->e[i].key = im_strndup(k, n);
    m->n++;
    return &m->e[i];
}

static void smap_free(smap_t *m)
{
    for (size_t i = 0; i < m->cap; i++) im_free(m->e[i].key);
    im_free(m->e);
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
    size_t l = strlen(suf);
    return n >= l && memcmp(s + n - l, suf, l) == 0;
}

/* Checks one exposition against the previous values and its own structure. */
static int check_invariants(const char *text, smap_t *prev, bool go_style)
{
    int nsamples = 0;
    const char *p = text;
    char last_bucket_series[2048] = "";
    double last_bucket = -1, inf_bucket = -1;
    while (*p) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);
        if (*p != '#') {
            const char *sp = nl;
            while (sp > p && sp[-1] != ' ') sp--;
            size_t klen = (size_t)(sp - 1 - p);
            double v = strtod(sp, NULL);
            const char *brace = memchr(p, '{', klen);
            size_t nlen = brace ? (size_t)(brace - p) : klen;
            bool counter = ends_with(p, nlen, "_total") || ends_with(p, nlen, "_count") ||
                           ends_with(p, nlen, "_bucket") || ends_with(p, nlen, "_sum") ||
                           ends_with(p, nlen, "_created") ||
                           (nlen > 5 && memcmp(p, "DCGM_FI_DEV_TOTAL_ENERGY", 24) == 0);
            if (memmem(p, nlen, "cache_usage_perc", 16) && !(v >= 0 && v <= 1)) {
                fprintf(stderr, "KV use outside [0, 1]: %.*s\n", (int)(nl - p), p);
                fail();
            }
            kv_t *e = smap_get(prev, p, klen, true);
            if (counter && e->v > v && !isnan(v)) {
                fprintf(stderr, "counter went down: %.*s %g -> %g\n", (int)klen, p, e->v, v);
                fail();
            }
            e->v = v;
            if (ends_with(p, nlen, "_bucket")) {
                /* series identity without le */
                char id[2048];
                size_t o = 0;
                const char *le = memmem(p, klen, ",le=\"", 5);
                if (!le) le = memmem(p, klen, "{le=\"", 5);
                if (le) le++;
                if (!(le && le < sp)) fprintf(stderr, "no le: %.*s\n", (int)(nl - p), p);
                assert_true(le && le < sp);
                const char *le_end = strchr(le + 4, '"') + 1;
                o = (size_t)(le - p);
                memcpy(id, p, o);
                size_t rest = (size_t)(sp - 1 - le_end);
                memcpy(id + o, le_end, rest);
                id[o + rest] = '\0';
                if (strcmp(id, last_bucket_series) == 0) {
                    assert_true(v >= last_bucket);
                } else {
                    snprintf(last_bucket_series, sizeof last_bucket_series, "%s", id);
                }
                last_bucket = v;
                if (strncmp(le, "le=\"+Inf\"", 9) == 0) inf_bucket = v;
            } else if (ends_with(p, nlen, "_count") && last_bucket_series[0] &&
                       memcmp(p, last_bucket_series, nlen - 6) == 0 &&
                       memcmp(last_bucket_series + nlen - 6, "_bucket", 7) == 0) {
                if (v != inf_bucket)
                    fprintf(stderr, "_count %g != +Inf bucket %g: %.*s\n", v, inf_bucket, (int)klen,
                            p);
                assert_true(v == inf_bucket);
            }
            nsamples++;
        }
        p = nl + 1;
    }
    (void)go_style;
    return nsamples;
}

static void test_invariants_long_run(void **state)
{
    (void)state;
    static const char *const scen[] = {"healthy", "kv-pressure", "errors", "traffic-spike"};
    for (size_t s = 0; s < IM_ARRAY_LEN(scen); s++) {
        sim_fleet_t *f = mk(scen[s], s == 2 ? "0.6.3" : NULL, 2, 3 + s);
        smap_t prev[4] = {{0}};
        int checks = 0;
        for (int step = 1; step <= 240; step++) { /* 1 h at a 15 s scrape interval */
            sim_fleet_advance(f, T0_MS + (int64_t)step * 15000);
            for (int k = 0; k < 4; k++) {
                sim_ep_kind_t kind = k < 2 ? SIM_EP_VLLM : k == 2 ? SIM_EP_DCGM : SIM_EP_KUEUE;
                char *t = render(f, kind, k < 2 ? k : 0);
                checks += check_invariants(t, &prev[k], kind == SIM_EP_KUEUE);
                im_free(t);
            }
        }
        assert_true(checks > 100000);
        for (int k = 0; k < 4; k++) smap_free(&prev[k]);
        sim_pod_stats_t st;
        sim_fleet_pod_stats(f, 0, &st);
        assert_true(st.finished[0] > 0);
        /* prefix-cache hits are a subset of queries, counted in tokens */
        assert_true(st.prefix_hits <= st.prefix_queries);
        sim_fleet_free(f);
    }
}

/* ---- scenario signatures ---- */

typedef struct obs {
    double kv_max, kv_min, waiting_max, preempt, gpu_util, mem_util, waiting_first, waiting_last,
        running_min, running_max, deferred_max, errors, aborts, finished;
    int n;
} obs_t;

/* Runs `scenario` with 2 pods; observes pod 0 every 15 s in [from_s, to_s]. */
static obs_t run_scenario(const char *scenario, int from_s, int to_s)
{
    sim_fleet_t *f = mk(scenario, NULL, 2, 11);
    obs_t o = {.running_min = 1e9, .kv_min = 1e9};
    for (int t = 15; t <= to_s; t += 15) {
        sim_fleet_advance(f, T0_MS + (int64_t)t * 1000);
        if (t < from_s) continue;
        sim_pod_stats_t s;
        sim_fleet_pod_stats(f, 0, &s);
        if (o.n == 0) o.waiting_first = s.waiting;
        o.waiting_last = s.waiting;
        o.kv_max = fmax(o.kv_max, s.kv_usage);
        o.kv_min = fmin(o.kv_min, s.kv_usage);
        o.waiting_max = fmax(o.waiting_max, s.waiting);
        o.preempt = s.preemptions;
        o.gpu_util += s.gpu_util;
        o.mem_util += s.mem_copy_util;
        o.running_min = fmin(o.running_min, s.running);
        o.running_max = fmax(o.running_max, s.running);
        o.deferred_max = fmax(o.deferred_max, s.waiting_deferred);
        o.errors = s.finished[3];
        o.aborts = s.finished[2];
        o.finished = s.finished[0] + s.finished[1] + s.finished[2] + s.finished[3];
        o.n++;
    }
    o.gpu_util /= o.n;
    o.mem_util /= o.n;
    fprintf(stderr,
            "%-16s kv_max=%.3f preempt=%g util=%.1f mem=%.1f waiting %g->%g running [%g,%g] "
            "deferred=%g errors=%g aborts=%g finished=%g\n",
            scenario, o.kv_max, o.preempt, o.gpu_util, o.mem_util, o.waiting_first, o.waiting_last,
            o.running_min, o.running_max, o.deferred_max, o.errors, o.aborts, o.finished);
    sim_fleet_free(f);
    return o;
}

static void test_scenarios(void **state)
{
    (void)state;
    obs_t o = run_scenario("healthy", 300, 1800);
    assert_true(o.gpu_util > 10 && o.gpu_util < 90);
    assert_true(o.waiting_last < 20);
    assert_true(o.kv_max < 0.9);

    o = run_scenario("kv-pressure", 600, 1800);
    assert_true(o.kv_max >= 0.95);
    assert_true(o.preempt > 0);
    /* KV use is a share of blocks: never outside [0, 1] */
    assert_true(o.kv_min >= 0 && o.kv_max <= 1);
    /* clients give up: aborts bound the queue (1.6 arrivals/s, a 300 s timeout) */
    assert_true(o.aborts > 0.1 * o.finished);
    assert_true(o.waiting_max < 1.6 * 300);
    /* and the queue stays bounded later on, not only in the first half hour */
    o = run_scenario("kv-pressure", 2700, 3600);
    assert_true(o.waiting_max < 1.6 * 300 && o.waiting_last < 1.6 * 300);
    assert_true(o.kv_min >= 0 && o.kv_max <= 1);

    /* The spike starts at 2 min; the batch fills to its limit and the queue grows. */
    o = run_scenario("traffic-spike", 900, 1500);
    assert_true(o.running_min >= 0.95 * 256 && o.running_max == 256);
    assert_true(o.waiting_last > o.waiting_first + 100);

    o = run_scenario("deferred", 600, 1200);
    assert_true(o.deferred_max > 0);
    assert_true(o.gpu_util < 15);

    o = run_scenario("memory-bound", 600, 1800);
    assert_true(o.mem_util >= 60);
    assert_true(o.gpu_util <= 40);

    o = run_scenario("cpu-bound", 300, 1200);
    assert_true(o.gpu_util < 25 && o.mem_util < 25);
    assert_true(o.waiting_last > o.waiting_first);

    o = run_scenario("overprovisioned", 300, 1800);
    assert_true(o.gpu_util < 5);
    assert_true(o.waiting_last == 0);

    o = run_scenario("errors", 300, 1200);
    assert_true(o.errors > 0.08 * o.finished);
    assert_true(o.aborts > 0);
}

/* ---- YAML ---- */

static void test_yaml(void **state)
{
    (void)state;
    const char *ok = "name: drill\nbase: healthy\nset:\n  rate: 2\nloop: 1h\nevents:\n"
                     "  - at: 10m\n    scenario: kv-pressure\n"
                     "  - at: 5m\n    set: {error_frac: 0.2, abort_frac: 0.1}\n    pods: 0-1\n";
    sim_scenario_t sc;
    im_err_t err;
    assert_int_equal(sim__scenario_parse_yaml(ok, strlen(ok), &sc, &err), IM_OK);
    assert_string_equal(sc.name, "drill");
    assert_true(sc.base.rate == 2);
    assert_int_equal(sc.loop_ms, 3600000);
    assert_int_equal(sc.nevents, 2);
    assert_int_equal(sc.events[0].at_ms, 300000); /* sorted */
    assert_int_equal(sc.events[0].nset, 2);
    assert_int_equal(sc.events[0].pod_hi, 1);
    assert_string_equal(sc.events[1].preset, "kv-pressure");
    sim__scenario_free(&sc);

    const char *bad[] = {"set:\n  warp: 9\n",
                         "events:\n  - scenario: healthy\n",
                         "events:\n  - at: soon\n",
                         "base: nope\n",
                         "set: [1, 2]\n",
                         "events: {a: 1}\n",
                         "foo: 1\n",
                         "set:\n  rate: fast\n",
                         "a: [\n"};
    for (size_t i = 0; i < IM_ARRAY_LEN(bad); i++) {
        im_err_clear(&err);
        im_rc rc = sim__scenario_parse_yaml(bad[i], strlen(bad[i]), &sc, &err);
        assert_int_equal(rc, IM_EPARSE);
        assert_true(err.line >= 1);
        assert_true(strlen(err.msg) > 5);
    }
}

/* A scenario file drives changes over time in the fleet. */
static void test_yaml_schedule(void **state)
{
    (void)state;
    char path[] = "/tmp/im-sim-scenario-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *y = "base: overprovisioned\nevents:\n  - at: 5m\n    scenario: traffic-spike\n";
    assert_int_equal(write(fd, y, strlen(y)), (ssize_t)strlen(y));
    close(fd);
    sim_fleet_t *f = mk(path, NULL, 1, 5);
    sim_fleet_advance(f, T0_MS + 290 * 1000);
    sim_pod_stats_t s;
    sim_fleet_pod_stats(f, 0, &s);
    assert_true(s.running < 5);
    sim_fleet_advance(f, T0_MS + 900 * 1000);
    sim_fleet_pod_stats(f, 0, &s);
    assert_true(s.running >= 240);
    sim_fleet_free(f);
    unlink(path);
}

/* Events can target a pod range, and `loop` starts the schedule over. */
static void test_yaml_loop_and_pods(void **state)
{
    (void)state;
    char path[] = "/tmp/im-sim-loop-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *y = "set: {rate: 0.01, burst_prob: 0}\nloop: 10m\nevents:\n"
                    "  - at: 1m\n    set: {max_num_seqs: 4, rate: 40}\n    pods: 1\n";
    assert_int_equal(write(fd, y, strlen(y)), (ssize_t)strlen(y));
    close(fd);
    sim_fleet_t *f = mk(path, NULL, 2, 5);
    unlink(path);
    sim_pod_stats_t s0, s1;
    sim_fleet_advance(f, T0_MS + 180 * 1000);
    sim_fleet_pod_stats(f, 0, &s0);
    sim_fleet_pod_stats(f, 1, &s1);
    assert_int_equal(s1.max_num_seqs, 4);
    assert_int_equal(s1.running, 4);
    assert_true(s1.waiting > 1000);
    assert_int_equal(s0.max_num_seqs, 256);
    assert_true(s0.running <= 2 && s0.waiting == 0);
    /* after 10 minutes the base knobs are back: the batch limit is 256 again */
    sim_fleet_advance(f, T0_MS + 630 * 1000);
    sim_fleet_pod_stats(f, 1, &s1);
    assert_int_equal(s1.max_num_seqs, 256);
    assert_true(s1.running > 4);
    sim_fleet_free(f);
}

/* The file-SD JSON lists every endpoint with its job. */
static void test_targets(void **state)
{
    (void)state;
    sim_fleet_t *f = mk("healthy", NULL, 10, 1);
    assert_int_equal(sim_fleet_count(f, SIM_EP_DCGM), 2);
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(sim_fleet_targets_json(f, "127.0.0.1:9400", 0, &b), IM_OK);
    assert_non_null(strstr(b.data, "\"__metrics_path__\": \"/pods/9/metrics\", \"job\": \"vllm\""));
    assert_non_null(strstr(b.data, "\"/nodes/1/metrics\", \"job\": \"dcgm\""));
    assert_non_null(strstr(b.data, "\"/kueue/metrics\", \"job\": \"kueue\""));
    im_buf_reset(&b);
    assert_int_equal(sim_fleet_targets_json(f, "127.0.0.1:9400", 20000, &b), IM_OK);
    assert_non_null(strstr(b.data, "\"127.0.0.1:20009\""));
    im_buf_free(&b);
    sim_fleet_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_vllm_matches_sample),
        cmocka_unit_test(test_dcgm_kueue_match_sample),
        cmocka_unit_test(test_dcgm_profiling),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_invariants_long_run),
        cmocka_unit_test(test_scenarios),
        cmocka_unit_test(test_yaml),
        cmocka_unit_test(test_yaml_schedule),
        cmocka_unit_test(test_yaml_loop_and_pods),
        cmocka_unit_test(test_targets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
