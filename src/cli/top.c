/* top.c — `infermon top`: the terminal around libim_top (keys, screen, --once). */
#include "util/base.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "cli/cli.h"
#include "top/top.h"
#include "util/timeutil.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: infermon top [URL|host:port ...] [flags]\n\n"
               "A live view of inference engines (vLLM, SGLang) and dcgm-exporter, straight\n"
               "from their /metrics: no storage, no daemon. One row per replica (data-parallel\n"
               "engines split by their `engine` label), grouped by model; percentiles come\n"
               "from the buckets merged across replicas (histogram_quantile), never averaged.\n"
               "With no target it probes localhost's usual ports (vLLM 8000-8003, SGLang\n"
               "30000-30001, dcgm-exporter 9400).\n\n"
               "  --discover           also probe localhost's usual ports when targets are given\n"
               "  --interval D         between fetches (default 2s)\n"
               "  --short-window D     the short window of rates and percentiles (default\n"
               "                       max(4 x interval, 10s); at least 2 x interval)\n"
               "  --long-window D      the long window (default 1m)\n"
               "  --timeout D          per fetch (default: the interval)\n"
               "  --max-body-bytes N   per endpoint (default 64 MiB)\n"
               "  --doctor-interval D  run the doctor over the fetched data every D (default\n"
               "                       10s; 0 = never): its worst finding on a status line\n"
               "  --once               fetch across the short window, print once, exit\n"
               "                       (exit 1 when no inference engine answered)\n"
               "  --collect D          with --once: fetch for D instead (e.g. to give the\n"
               "                       long window or the doctor data)\n"
               "  --output text|json   what --once prints (default text)\n"
               "  --record FILE        also write every sample fetched to FILE (OpenMetrics\n"
               "                       with timestamps: infermon promql-eval / tsdb import)\n\n"
               "keys: s cycles the sort (model, waiting, KV, TTFT p95, tokens/s), / filters by\n"
               "model (Enter applies, Esc cancels, empty = all), p pauses, q quits.\n");
}

static volatile sig_atomic_t g_stop, g_winch;
static void on_signal(int sig)
{
    if (sig == SIGWINCH)
        g_winch = 1;
    else
        g_stop = 1;
}

static bool dur_arg(const char *flag, const char *v, int64_t *out)
{
    if (!v || im_duration_parse(v, strlen(v), out, NULL) != IM_OK || *out <= 0) {
        fprintf(stderr, "infermon top: %s: not a positive duration: \"%s\" (e.g. 2s, 500ms)\n",
                flag, v ? v : "");
        return false;
    }
    return true;
}

static void term_size(int *w, int *h)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
        *w = ws.ws_col;
        *h = ws.ws_row;
    } else {
        *w = 160;
        *h = 50;
    }
}

static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(STDOUT_FILENO, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

static int run_once(top_t *t, bool json, int64_t collect_ms)
{
    const top_opts_t *o = top_options(t);
    int n = (int)((collect_ms > 0 ? collect_ms : o->short_ms) / o->interval_ms) + 1;
    int64_t now = 0;
    for (int i = 0; i < n && !g_stop; i++) {
        int64_t start = im_mono_ns();
        now = im_now_ms();
        top_scrape(t, now);
        if (i + 1 < n) (void)top_compute(t, now); /* a sparkline point per fetch */
        if (i + 1 < n) {
            int64_t left_ms = o->interval_ms - (im_mono_ns() - start) / 1000000;
            if (left_ms > 0) poll(NULL, 0, (int)left_ms);
        }
    }
    top_doctor_step(t, now, true); /* over everything fetched */
    const top_view_t *v = top_compute(t, now);
    im_buf_t out;
    im_buf_init(&out, 0);
    if (json) {
        top_json(v, &out);
    } else {
        top_screen_t sc = {0};
        term_size(&sc.width, &sc.height);
        sc.height = 100000;
        sc.plain = true;
        top_render(v, &sc, &out);
    }
    write_all(out.data ? out.data : "", out.len);
    im_buf_free(&out);
    for (size_t i = 0; i < v->neps; i++)
        if (v->eps[i].state == TOP_EP_ENGINE) return 0;
    fprintf(stderr, "infermon top: no inference engine answered\n");
    return 1;
}

static int run_live(top_t *t)
{
    struct termios saved, raw;
    bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
    if (tty) {
        raw = saved;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    }
    write_all("\033[?1049h\033[?25l\033[2J", 19);
    top_screen_t sc = {0};
    sc.filter = "";
    char filter[128] = "", typing[128];
    bool prompting = false;
    size_t tlen = 0;
    const top_opts_t *o = top_options(t);
    int64_t next_scrape = 0, last_scrape_ms = im_now_ms();
    const top_view_t *v = NULL;
    im_buf_t out;
    im_buf_init(&out, 0);
    bool dirty = true;
    while (!g_stop) {
        int64_t mono = im_mono_ns() / 1000000;
        if (!sc.paused && mono >= next_scrape) {
            last_scrape_ms = im_now_ms();
            top_scrape(t, last_scrape_ms);
            next_scrape = mono + o->interval_ms;
            top_doctor_step(t, last_scrape_ms, false); /* when due */
            v = top_compute(t, last_scrape_ms);
            dirty = true;
        }
        if (g_winch) {
            g_winch = 0;
            write_all("\033[2J", 4);
            dirty = true;
        }
        if (dirty && v) {
            term_size(&sc.width, &sc.height);
            sc.filter = filter;
            sc.prompt = prompting ? typing : NULL;
            im_buf_reset(&out);
            top_render(v, &sc, &out);
            write_all(out.data, out.len);
            dirty = false;
        }
        int wait_ms = sc.paused ? 1000 : (int)(next_scrape - im_mono_ns() / 1000000);
        if (wait_ms < 0) wait_ms = 0;
        struct pollfd pf = {STDIN_FILENO, POLLIN, 0};
        if (poll(&pf, 1, wait_ms) <= 0 || !(pf.revents & (POLLIN | POLLHUP))) continue;
        char keys[64];
        ssize_t nk = read(STDIN_FILENO, keys, sizeof keys);
        if (nk <= 0) {
            if (!tty) poll(NULL, 0, wait_ms); /* stdin closed: keep showing */
            continue;
        }
        for (ssize_t i = 0; i < nk; i++) {
            char c = keys[i];
            dirty = true;
            if (prompting) {
                if (c == '\r' || c == '\n') {
                    typing[tlen] = '\0';
                    snprintf(filter, sizeof filter, "%s", typing);
                    prompting = false;
                } else if (c == 27) {
                    prompting = false;
                } else if ((c == 127 || c == 8) && tlen > 0) {
                    typing[--tlen] = '\0';
                } else if ((unsigned char)c >= 32 && tlen + 1 < sizeof typing) {
                    typing[tlen++] = c;
                    typing[tlen] = '\0';
                }
                continue;
            }
            if (c == 'q' || c == 'Q' || c == 3) g_stop = 1;
            if (c == 's') sc.sort = (top_sort_t)((sc.sort + 1) % TOP_SORT_COUNT);
            if (c == 'p' || c == ' ') {
                sc.paused = !sc.paused;
                if (!sc.paused) next_scrape = 0;
            }
            if (c == '/') {
                prompting = true;
                tlen = 0;
                typing[0] = '\0';
            }
        }
    }
    im_buf_free(&out);
    write_all("\033[?25h\033[?1049l", 15);
    if (tty) tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    return 0;
}

int cli_top(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    top_opts_t o = {0};
    bool discover = false, once = false, json = false;
    const char *record = NULL;
    int64_t collect_ms = 0;
    const char **targets = im_calloc((size_t)argc, sizeof *targets);
    int ntargets = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (strcmp(a, "--discover") == 0)
            discover = true;
        else if (strcmp(a, "--once") == 0)
            once = true;
        else if (strcmp(a, "--interval") == 0)
            ok = dur_arg(a, v, &o.interval_ms), i++;
        else if (strcmp(a, "--short-window") == 0)
            ok = dur_arg(a, v, &o.short_ms), i++;
        else if (strcmp(a, "--long-window") == 0)
            ok = dur_arg(a, v, &o.long_ms), i++;
        else if (strcmp(a, "--timeout") == 0)
            ok = dur_arg(a, v, &o.timeout_ms), i++;
        else if (strcmp(a, "--collect") == 0)
            ok = dur_arg(a, v, &collect_ms), i++;
        else if (strcmp(a, "--doctor-interval") == 0) {
            if (v && strcmp(v, "0") == 0)
                o.doctor_interval_ms = -1; /* never */
            else
                ok = dur_arg(a, v, &o.doctor_interval_ms);
            i++;
        } else if (strcmp(a, "--max-body-bytes") == 0) {
            char *end = NULL;
            long long n = v ? strtoll(v, &end, 10) : 0;
            if (!v || *end || n <= 0) {
                fprintf(stderr, "infermon top: --max-body-bytes: not a positive number\n");
                ok = false;
            }
            o.max_body_bytes = (size_t)n;
            i++;
        } else if (strcmp(a, "--output") == 0) {
            if (v && strcmp(v, "json") == 0)
                json = true;
            else if (!(v && strcmp(v, "text") == 0)) {
                fprintf(stderr, "infermon top: --output: text or json, not \"%s\"\n", v ? v : "");
                ok = false;
            }
            i++;
        } else if (strcmp(a, "--record") == 0) {
            record = v;
            if (!v) {
                fprintf(stderr, "infermon top: --record needs a file\n");
                ok = false;
            }
            i++;
        } else if (a[0] == '-') {
            fprintf(stderr, "infermon top: unknown flag %s (see infermon top --help)\n", a);
            ok = false;
        } else {
            targets[ntargets++] = a;
        }
        if (!ok) {
            im_free(targets);
            return 2;
        }
    }
    if (collect_ms && !once) {
        fprintf(stderr, "infermon top: --collect needs --once (the live view keeps fetching)\n");
        im_free(targets);
        return 2;
    }
    if (json && !once) {
        fprintf(stderr, "infermon top: --output json needs --once (the live view is a screen)\n");
        im_free(targets);
        return 2;
    }
    int64_t interval = o.interval_ms ? o.interval_ms : 2000;
    if (o.short_ms && o.short_ms < 2 * interval) {
        fprintf(stderr,
                "infermon top: --short-window must be at least 2 x --interval (a rate needs two "
                "samples): raise --short-window or lower --interval\n");
        im_free(targets);
        return 2;
    }
    top_t *t = top_new(&o);
    if (collect_ms && collect_ms < top_options(t)->short_ms) {
        fprintf(stderr, "infermon top: --collect is shorter than the short window (a rate needs "
                        "it): raise --collect or lower --short-window\n");
        top_free(t);
        im_free(targets);
        return 2;
    }
    if (top_options(t)->long_ms < top_options(t)->short_ms) {
        fprintf(stderr, "infermon top: --long-window is shorter than the short window\n");
        top_free(t);
        im_free(targets);
        return 2;
    }
    for (int i = 0; i < ntargets; i++) {
        im_err_t err;
        if (top_add_target(t, targets[i], false, &err) != IM_OK) {
            fprintf(stderr, "infermon top: %s\n", err.msg);
            top_free(t);
            im_free(targets);
            return 2;
        }
    }
    im_free(targets);
    if (ntargets == 0 || discover) top_add_probes(t);
    FILE *rf = NULL;
    if (record) {
        rf = fopen(record, "w");
        if (!rf) {
            fprintf(stderr, "infermon top: --record %s: %s\n", record, strerror(errno));
            top_free(t);
            return 2;
        }
        top_set_record(t, rf);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGWINCH, &sa, NULL);
    int rc = once ? run_once(t, json, collect_ms) : run_live(t);
    top_free(t);
    if (rf) fclose(rf);
    return rc;
}
