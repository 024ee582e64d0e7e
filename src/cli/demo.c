/* demo.c — `infermon demo`: the simulator and the daemon in one process.
 *
 * Starts a simulated fleet (src/sim) on a free loopback port, writes its targets
 * as a file_sd file into a working directory, and runs the daemon (run_daemon)
 * with a configuration that scrapes that file every 5 seconds, so a newcomer sees
 * a live fleet being scraped at once. Data go to a temporary directory unless
 * --storage.tsdb.path is given; the temporary directory is removed on exit.
 * With a temporary directory, the fleet's last hour (--backfill D; 0 = none) is
 * simulated first, one sample per scrape interval (at least 15s), and imported as blocks
 * (sim_history_write, then `tsdb import`), labelled as the scrapes label them.
 * The history steps the same fleet object that the simulator then serves, so
 * the live samples continue the same series from the same state (counters
 * never drop at the seam), and the charts are full from the first page view.
 * An imported block's range ends at its newest sample, so the live samples
 * that follow it are accepted at once. */
#include "util/base.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/run.h"
#include "util/buf.h"
#include "util/timeutil.h"
#include "sim/sim.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: infermon demo [flags]\n\n"
               "Runs the simulator (infermon simulate) and the daemon (infermon run) together:\n"
               "the daemon scrapes the simulated vLLM pods, dcgm-exporter nodes and Kueue, and\n"
               "prints the URL of the dashboard.\n\n"
               "  --scenario S                  healthy (default), traffic-spike, kv-pressure,\n"
               "                                deferred, memory-bound, cpu-bound,\n"
               "                                overprovisioned, errors, or a YAML file\n"
               "  --pods N                      vLLM pods (default 8)\n"
               "  --models LIST                 served model names, comma-separated\n"
               "  --vllm-version V              vLLM release to imitate (default 0.27.1)\n"
               "  --engine E                    vllm (default), sglang, or vllm,sglang (cycled\n"
               "                                over --models)\n"
               "  --speed X                     simulated seconds per wall second (default 1)\n"
               "  --seed N                      random seed (default 1)\n"
               "  --scrape-interval D           how often the daemon scrapes (default 5s)\n"
               "  --web.listen-address ADDR     the daemon's address (default :9470)\n"
               "  --storage.tsdb.path DIR       keep the data in DIR (default: a temporary\n"
               "                                directory, removed on exit)\n"
               "  --backfill D                  simulate and import the fleet's last D first\n"
               "                                (one sample per scrape interval, at least 15s)\n"
               "                                so charts start full (default 1h; 0 = off;\n"
               "                                temporary directory only)\n");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

typedef struct demo_ready {
    int sim_port;
    const char *scenario;
    int pods;
} demo_ready_t;

static void on_ready(void *ud, uint16_t port)
{
    demo_ready_t *r = ud;
    printf("infermon demo: scenario %s, %d simulated vLLM pods at http://127.0.0.1:%d/targets\n",
           r->scenario, r->pods, r->sim_port);
    printf("infermon demo: open http://localhost:%u/  (Ctrl-C to stop)\n", (unsigned)port);
    fflush(stdout);
}

int cli_demo(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    sim_options_t so;
    sim_options_default(&so);
    so.pods = 8;
    double speed = 1;
    const char *listen = NULL, *storage = NULL, *interval = "5s";
    int64_t backfill_ms = 3600000;
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *a = argv[i], *v = NULL;
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "infermon demo: unexpected argument \"%s\"\n", a);
            return 2;
        }
        const char *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        if (nl >= sizeof name) nl = sizeof name - 1;
        memcpy(name, a, nl);
        name[nl] = '\0';
        if (eq)
            v = eq + 1;
        else if (i + 1 < argc)
            v = argv[++i];
        if (!v) {
            fprintf(stderr, "infermon demo: %s needs a value\n", name);
            return 2;
        }
        char *end = NULL;
        if (strcmp(name, "--scenario") == 0)
            so.scenario = v;
        else if (strcmp(name, "--models") == 0)
            so.models = v;
        else if (strcmp(name, "--vllm-version") == 0)
            so.vllm_version = v;
        else if (strcmp(name, "--engine") == 0)
            so.engine = v;
        else if (strcmp(name, "--web.listen-address") == 0)
            listen = v;
        else if (strcmp(name, "--storage.tsdb.path") == 0)
            storage = v;
        else if (strcmp(name, "--scrape-interval") == 0)
            interval = v;
        else if (strcmp(name, "--backfill") == 0) {
            if (strcmp(v, "0") == 0)
                backfill_ms = 0;
            else if (im_duration_parse(v, strlen(v), &backfill_ms, NULL) != IM_OK) {
                fprintf(stderr, "infermon demo: --backfill: not a duration: \"%s\"\n", v);
                return 2;
            }
        } else if (strcmp(name, "--pods") == 0) {
            long n = strtol(v, &end, 10);
            if (*end || n < 1 || n > 10000) {
                fprintf(stderr, "infermon demo: --pods: expected 1..10000, got \"%s\"\n", v);
                return 2;
            }
            so.pods = (int)n;
        } else if (strcmp(name, "--seed") == 0) {
            long n = strtol(v, &end, 10);
            if (*end || n < 0) {
                fprintf(stderr, "infermon demo: --seed: expected a number, got \"%s\"\n", v);
                return 2;
            }
            so.seed = (uint64_t)n;
        } else if (strcmp(name, "--speed") == 0) {
            speed = strtod(v, &end);
            if (*end || !(speed > 0)) {
                fprintf(stderr, "infermon demo: --speed: expected a number > 0, got \"%s\"\n", v);
                return 2;
            }
        } else {
            fprintf(stderr, "infermon demo: unknown flag %s\n\n", name);
            usage(stderr);
            return 2;
        }
    }

    im_err_t err;
    im_err_clear(&err);
    int rc = 2;
    char dir[] = "/tmp/infermon-demo-XXXXXX";
    bool tmpdir = false;
    char path[1200], data[1200];
    sim_fleet_t *f = NULL;
    sim_server_t *srv = NULL;
    im_buf_t b;
    im_buf_init(&b, 0);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "infermon demo: cannot create a temporary directory: %s\n",
                strerror(errno));
        return 2;
    }
    tmpdir = true;
    snprintf(data, sizeof data, "%s/data", dir);
    if (storage) backfill_ms = 0; /* never write the past into an existing store */
    /* The history's step: the scrape interval, at least 15s (1h of 8 pods at
     * 15s is ~0.9 M samples, imported in a few seconds), at most 60s. */
    int64_t step_ms = 15000;
    if (im_duration_parse(interval, strlen(interval), &step_ms, NULL) != IM_OK) {
        fprintf(stderr, "infermon demo: --scrape-interval: not a duration: \"%s\"\n", interval);
        goto out;
    }
    if (step_ms < 15000) step_ms = 15000;
    if (step_ms > 60000) step_ms = 60000;
    int64_t now = im_now_ms();
    int64_t end = now - now % step_ms;
    if (backfill_ms > 0) so.start_ms = end - backfill_ms - (end - backfill_ms) % step_ms;
    if (sim_fleet_create(&so, &f, &err) != IM_OK) {
        fprintf(stderr, "infermon demo: %s\n", err.msg);
        goto out;
    }
    if (backfill_ms > 0) {
        snprintf(path, sizeof path, "%s/backfill.om", dir);
        FILE *hf = fopen(path, "wb");
        sim_history_stats_t st;
        im_rc hrc =
            hf ? sim_history_write(f, so.start_ms, end, step_ms, (size_t)2 << 30, hf, &st, &err)
               : IM_EIO;
        if (hf && fclose(hf) != 0) hrc = IM_EIO;
        if (hrc != IM_OK) {
            fprintf(stderr, "infermon demo: backfill: %s\n", hf ? err.msg : strerror(errno));
            goto out;
        }
        char *targv[] = {"tsdb", "import", "--format", "openmetrics", path, data, NULL};
        if (cli_tsdb(6, targv) != 0) {
            fprintf(stderr, "infermon demo: could not import the backfill\n");
            goto out;
        }
        remove(path);
        printf("infermon demo: backfilled the fleet's last %lld min (%lld samples)\n",
               (long long)(backfill_ms / 60000), (long long)st.samples);
    }
    sim_server_options_t sso = {.listen = "127.0.0.1:0", .speed = speed};
    if (sim_server_start(f, &sso, &srv, &err) != IM_OK) {
        fprintf(stderr, "infermon demo: %s\n", err.msg);
        goto out;
    }
    char hp[64];
    snprintf(hp, sizeof hp, "127.0.0.1:%d", sim_server_port(srv));
    sim_server_lock(srv);
    im_rc trc = sim_fleet_targets_json(f, hp, 0, &b);
    sim_server_unlock(srv);
    snprintf(path, sizeof path, "%s/targets.json", dir);
    FILE *fp = fopen(path, "wb");
    if (trc != IM_OK || !fp || fwrite(b.data, 1, b.len, fp) != b.len || fclose(fp) != 0) {
        fprintf(stderr, "infermon demo: cannot write %s\n", path);
        goto out;
    }
    im_buf_reset(&b);
    (void)im_buf_printf(&b,
                        "# infermon demo: the simulated fleet, discovered through file_sd.\n"
                        "global:\n"
                        "  scrape_interval: %s\n"
                        "  scrape_timeout: %s\n"
                        "  evaluation_interval: 15s\n"
                        "scrape_configs:\n"
                        "  - job_name: simulated-fleet\n"
                        "    file_sd_configs:\n"
                        "      - files: ['%s']\n",
                        interval, interval, path);
    run_opts_t ro;
    run_opts_defaults(&ro);
    ro.config_text = b.data;
    ro.storage_path = storage ? storage : data;
    ro.listen_address = listen;
    ro.handle_signals = true;
    demo_ready_t ready = {sim_server_port(srv), so.scenario, so.pods};
    ro.on_ready = on_ready;
    ro.on_ready_ud = &ready;
    static const char *const flags[] = {"web.listen-address", ":9470", "storage.tsdb.path",
                                        "(temporary)", NULL};
    ro.flags = flags;
    rc = run_daemon(&ro);
out:
    sim_server_stop(srv);
    sim_fleet_free(f);
    im_buf_free(&b);
    if (tmpdir) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
