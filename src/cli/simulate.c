/* simulate.c — `infermon simulate`: serve a simulated vLLM / dcgm-exporter / Kueue
 * fleet over HTTP, or write its past as OpenMetrics (--history). */
#include "util/base.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/cli.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "sim/sim.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: infermon simulate [options]\n\n"
        "Serves a simulated LLM-serving fleet: vLLM pods at /pods/<i>/metrics, one\n"
        "dcgm-exporter per 8-GPU node at /nodes/<j>/metrics, Kueue at /kueue/metrics,\n"
        "and /targets (Prometheus file-SD JSON listing them all).\n\n"
        "  --pods N              vLLM pods (default 4)\n"
        "  --models LIST         served model names, comma-separated, assigned round-robin\n"
        "                        (default meta-llama/Llama-3.1-8B-Instruct)\n"
        "  --gpus-per-pod N      tensor-parallel size, 1..8 (default 1)\n"
        "  --teams LIST          team namespaces, comma-separated (default "
        "llm-serving,research)\n"
        "  --scenario S          healthy, traffic-spike, kv-pressure, deferred, memory-bound,\n"
        "                        cpu-bound, overprovisioned, errors, prefill-heavy,\n"
        "                        scheduler-stall, slow-replica, xid-errors, gpu-throttle,\n"
        "                        quota-starved, target-down, or a YAML file\n"
        "                        (docs/simulator.md); default healthy\n"
        "  --vllm-version V      vLLM release whose metrics to expose (default 0.27.1;\n"
        "                        versions before 0.8.0 use the V0 engine's metrics)\n"
        "  --engine E            vllm (default), sglang, or a comma list cycled over\n"
        "                        --models (vllm,sglang: a mixed fleet; docs/engines.md)\n"
        "  --listen ADDR         host:port to serve on (default 127.0.0.1:9400; port 0 = any)\n"
        "  --port-per-pod BASE   also serve pod i at BASE+i on /metrics\n"
        "  --seed N              random seed (default 1); same seed, same fleet\n"
        "  --dcgm-profiling      also serve the DCP fields dcgm-exporter's default counters\n"
        "                        comment out (SM activity and occupancy, FP pipes)\n"
        "  --dcgm-violations     also serve the throttling counters DCGM_FI_DEV_POWER_VIOLATION\n"
        "                        and DCGM_FI_DEV_THERMAL_VIOLATION (also commented out)\n"
        "  --mig-nodes N         also N nodes whose GPUs are partitioned into MIG instances,\n"
        "                        held by the teams' notebook pods (default 0)\n"
        "  --mig-profile P       their profile: 1g.10gb (default), 2g.20gb, 3g.40gb, 7g.80gb\n"
        "  --speed X             simulated seconds per wall second (default 1)\n"
        "  --tick D              model step (default 1s)\n"
        "  --duration D          exit after D of wall time (default: run until signalled)\n"
        "  --history D           write the last D of the fleet's past instead of serving\n"
        "  --step D              sample interval for --history (default 15s)\n"
        "  --end T               end of --history (unix seconds or RFC 3339; default now)\n"
        "  --out FILE            --history output (default stdout)\n"
        "  --history-max-bytes N memory cap for --history (default 4294967296)\n"
        "  --ground-truth FILE   with --history: write the exact totals at its end (JSON,\n"
        "                        as /ground-truth serves them; docs/simulator.md)\n");
}

static volatile sig_atomic_t g_stop;
static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

static int parse_int(const char *flag, const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || end == v || x < lo || x > hi) {
        fprintf(stderr, "infermon simulate: %s: expected an integer in [%ld, %ld], got \"%s\"\n",
                flag, lo, hi, v);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_dur(const char *flag, const char *v, int64_t *out)
{
    im_err_t e;
    if (im_duration_parse(v, strlen(v), out, &e) != IM_OK || *out <= 0) {
        fprintf(stderr, "infermon simulate: %s: not a positive duration: \"%s\"\n", flag, v);
        return -1;
    }
    return 0;
}

int cli_simulate(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    sim_options_t o;
    sim_options_default(&o);
    sim_server_options_t so = {.listen = "127.0.0.1:9400", .speed = 1};
    int64_t history_ms = 0, step_ms = 15000, end_ms = 0, duration_ms = 0;
    const char *outpath = NULL, *truthpath = NULL;
    size_t max_bytes = (size_t)4 << 30;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
#define NEEDV                                                                                      \
    do {                                                                                           \
        if (!v) {                                                                                  \
            fprintf(stderr, "infermon simulate: %s needs a value\n", a);                           \
            return 2;                                                                              \
        }                                                                                          \
        i++;                                                                                       \
    } while (0)
        if (strcmp(a, "--pods") == 0) {
            NEEDV;
            if (parse_int(a, v, 0, 100000, &n)) return 2;
            o.pods = (int)n;
        } else if (strcmp(a, "--models") == 0) {
            NEEDV;
            o.models = v;
        } else if (strcmp(a, "--gpus-per-pod") == 0) {
            NEEDV;
            if (parse_int(a, v, 1, 8, &n)) return 2;
            o.gpus_per_pod = (int)n;
        } else if (strcmp(a, "--teams") == 0) {
            NEEDV;
            o.teams = v;
        } else if (strcmp(a, "--scenario") == 0) {
            NEEDV;
            o.scenario = v;
        } else if (strcmp(a, "--vllm-version") == 0) {
            NEEDV;
            o.vllm_version = v;
        } else if (strcmp(a, "--engine") == 0) {
            NEEDV;
            o.engine = v;
        } else if (strcmp(a, "--listen") == 0) {
            NEEDV;
            so.listen = v;
        } else if (strcmp(a, "--port-per-pod") == 0) {
            NEEDV;
            if (parse_int(a, v, 1, 65535, &n)) return 2;
            so.port_per_pod_base = (int)n;
        } else if (strcmp(a, "--dcgm-profiling") == 0) {
            o.dcgm_profiling = true;
        } else if (strcmp(a, "--dcgm-violations") == 0) {
            o.dcgm_violations = true;
        } else if (strcmp(a, "--mig-nodes") == 0) {
            NEEDV;
            if (parse_int(a, v, 0, 1000, &n)) return 2;
            o.mig_nodes = (int)n;
        } else if (strcmp(a, "--mig-profile") == 0) {
            NEEDV;
            o.mig_profile = v;
        } else if (strcmp(a, "--ground-truth") == 0) {
            NEEDV;
            truthpath = v;
        } else if (strcmp(a, "--seed") == 0) {
            NEEDV;
            if (parse_int(a, v, 0, 2147483647, &n)) return 2;
            o.seed = (uint64_t)n;
        } else if (strcmp(a, "--speed") == 0) {
            NEEDV;
            char *end;
            so.speed = strtod(v, &end);
            if (*end || !(so.speed > 0) || so.speed > 1e6) {
                fprintf(stderr, "infermon simulate: --speed: expected a number > 0, got \"%s\"\n",
                        v);
                return 2;
            }
        } else if (strcmp(a, "--tick") == 0) {
            NEEDV;
            if (parse_dur(a, v, &o.tick_ms)) return 2;
        } else if (strcmp(a, "--duration") == 0) {
            NEEDV;
            if (parse_dur(a, v, &duration_ms)) return 2;
        } else if (strcmp(a, "--history") == 0) {
            NEEDV;
            if (parse_dur(a, v, &history_ms)) return 2;
        } else if (strcmp(a, "--step") == 0) {
            NEEDV;
            if (parse_dur(a, v, &step_ms)) return 2;
        } else if (strcmp(a, "--end") == 0) {
            NEEDV;
            im_err_t e;
            if (im_time_parse(v, strlen(v), &end_ms, &e) != IM_OK) {
                fprintf(stderr, "infermon simulate: --end: %s\n", e.msg);
                return 2;
            }
        } else if (strcmp(a, "--out") == 0) {
            NEEDV;
            outpath = v;
        } else if (strcmp(a, "--history-max-bytes") == 0) {
            NEEDV;
            if (parse_int(a, v, 1, 2147483647L, &n)) return 2;
            max_bytes = (size_t)n;
        } else {
            fprintf(stderr, "infermon simulate: unknown option \"%s\"\n\n", a);
            usage(stderr);
            return 2;
        }
#undef NEEDV
    }

    im_err_t err;
    im_err_clear(&err);
    if (history_ms > 0) {
        if (end_ms == 0) end_ms = im_now_ms();
        end_ms -= end_ms % step_ms;
        int64_t start_ms = end_ms - history_ms;
        start_ms -= start_ms % o.tick_ms;
        o.start_ms = start_ms;
        sim_fleet_t *f;
        if (sim_fleet_create(&o, &f, &err) != IM_OK) {
            fprintf(stderr, "infermon simulate: %s\n", err.msg);
            return 2;
        }
        FILE *out = outpath ? fopen(outpath, "wb") : stdout;
        if (!out) {
            fprintf(stderr, "infermon simulate: cannot open %s: %s\n", outpath, strerror(errno));
            sim_fleet_free(f);
            return 2;
        }
        sim_history_stats_t st;
        int64_t t0 = im_mono_ns();
        im_rc rc = sim_history_write(f, start_ms, end_ms, step_ms, max_bytes, out, &st, &err);
        double secs = (double)(im_mono_ns() - t0) / 1e9;
        if (out == stdout) {
            if (fflush(stdout) != 0 && rc == IM_OK)
                rc = im_err_set(&err, IM_EIO, "cannot write the history to stdout");
        } else if (fclose(out) != 0 && rc == IM_OK) {
            rc = im_err_set(&err, IM_EIO, "cannot write %s", outpath);
        }
        if (rc == IM_OK && truthpath) {
            im_buf_t tb;
            im_buf_init(&tb, 0);
            FILE *tf = fopen(truthpath, "wb");
            if (!tf || sim_fleet_ground_truth_json(f, &tb) != IM_OK ||
                fwrite(tb.data, 1, tb.len, tf) != tb.len)
                rc = im_err_set(&err, IM_EIO, "cannot write %s: %s", truthpath, strerror(errno));
            if (tf && fclose(tf) != 0 && rc == IM_OK)
                rc = im_err_set(&err, IM_EIO, "cannot write %s", truthpath);
            im_buf_free(&tb);
        }
        sim_fleet_free(f);
        if (rc != IM_OK) {
            fprintf(stderr, "infermon simulate: %s\n", err.msg);
            return 2;
        }
        fprintf(stderr,
                "infermon simulate: wrote %lld samples of %lld series over %lld steps (%lld "
                "bytes) in %.2fs: %.2f M samples/s\n",
                (long long)st.samples, (long long)st.series, (long long)st.steps,
                (long long)st.bytes, secs, secs > 0 ? (double)st.samples / secs / 1e6 : 0.0);
        return 0;
    }

    if (truthpath) {
        fprintf(stderr, "infermon simulate: --ground-truth goes with --history (a running "
                        "simulator serves /ground-truth)\n");
        return 2;
    }
    sim_fleet_t *f;
    if (sim_fleet_create(&o, &f, &err) != IM_OK) {
        fprintf(stderr, "infermon simulate: %s\n", err.msg);
        return 2;
    }
    sim_server_t *s;
    if (sim_server_start(f, &so, &s, &err) != IM_OK) {
        fprintf(stderr, "infermon simulate: %s\n", err.msg);
        sim_fleet_free(f);
        return 2;
    }
    int port = sim_server_port(s);
    const char *colon = strrchr(so.listen, ':');
    char host[64];
    size_t hl = colon ? (size_t)(colon - so.listen) : 0;
    if (hl == 0 || hl >= sizeof host || strncmp(so.listen, "0.0.0.0", hl) == 0)
        snprintf(host, sizeof host, "127.0.0.1");
    else
        snprintf(host, sizeof host, "%.*s", (int)hl, so.listen);
    int npods = sim_fleet_count(f, SIM_EP_VLLM), nnodes = sim_fleet_count(f, SIM_EP_DCGM);
    printf("infermon simulate: listening on %s:%d\n", host, port);
    if (!o.engine || strcmp(o.engine, "vllm") == 0)
        printf("  fleet     %d vLLM pod%s (%s, vLLM %s), %d dcgm-exporter node%s, Kueue; scenario "
               "%s\n",
               npods, npods == 1 ? "" : "s", o.models, o.vllm_version, nnodes,
               nnodes == 1 ? "" : "s", o.scenario);
    else
        printf("  fleet     %d serving pod%s (%s on engines %s, vLLM %s), %d dcgm-exporter node%s, "
               "Kueue; scenario %s\n",
               npods, npods == 1 ? "" : "s", o.models, o.engine, o.vllm_version, nnodes,
               nnodes == 1 ? "" : "s", o.scenario);
    printf("  targets   http://%s:%d/targets   (Prometheus file_sd_configs JSON)\n", host, port);
    if (npods > 0)
        printf("  vLLM      http://%s:%d/pods/0/metrics .. /pods/%d/metrics\n", host, port,
               npods - 1);
    if (so.port_per_pod_base > 0)
        printf("            http://%s:%d/metrics .. :%d/metrics (one port per pod)\n", host,
               so.port_per_pod_base, so.port_per_pod_base + npods - 1);
    printf("  dcgm      http://%s:%d/nodes/0/metrics .. /nodes/%d/metrics\n", host, port,
           nnodes - 1);
    if (o.mig_nodes > 0)
        printf("            (the last %d: MIG %s nodes)\n", o.mig_nodes, o.mig_profile);
    printf("  Kueue     http://%s:%d/kueue/metrics\n", host, port);
    printf("  truth     http://%s:%d/ground-truth\n", host, port);
    printf("  speed     %gx simulated time, seed %llu\n", so.speed, (unsigned long long)o.seed);
    fflush(stdout);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int64_t t0 = im_now_ms();
    while (!g_stop) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (duration_ms > 0 && im_now_ms() - t0 >= duration_ms) break;
    }
    sim_server_stop(s);
    sim_fleet_free(f);
    return 0;
}
