/* run.c — `infermon run`: flags in Prometheus' style, then the daemon
 * (run_daemon): store, scrape manager, HTTP server, reload and shutdown. */
#include "util/base.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/flags.h"
#include "cli/run.h"
#include "cli/run_llm.h"
#include "cli/run_slo.h"
#include "cli/run_rules.h"
#include "discovery/generate.h"
#include "discovery/k8s.h"
#include "http/server.h"
#include "labels/regex.h"
#include "promql/promql.h"
#include "config/config.h"
#include "query/query.h"
#include "remote/remote.h"
#include "scrape/scrape.h"
#include "tsdb/tsdb.h"
#include "ui/ui.h"
#include "util/log.h"
#include "util/timeutil.h"

/* Copies the comma-separated list (may be NULL) into out (cap at least
 * strlen(list) + 1) without its `name` entries; whether there was one. */
static bool take_feature(const char *list, const char *name, char *out, size_t cap)
{
    bool found = false;
    size_t o = 0, nl = strlen(name);
    out[0] = 0;
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == nl && !memcmp(p, name, n))
            found = true;
        else if (n) /* cap >= strlen(list) + 1: the rest always fits */
            o += (size_t)snprintf(out + o, cap - o, "%s%.*s", o ? "," : "", (int)n, p);
        p += n + (e ? 1 : 0);
    }
    return found;
}

static volatile sig_atomic_t g_stop, g_reload;

void run_daemon_request_stop(void)
{
    g_stop = 1;
}

void run_daemon_request_reload(void)
{
    g_reload = 1;
}

void run_opts_defaults(run_opts_t *o)
{
    memset(o, 0, sizeof *o);
}

typedef struct daemon {
    const run_opts_t *o;
    pthread_mutex_t reload_mu;
    scrape_config_t *cfg;
    scrape_manager_t *sm;
    http_server_t *http;
    run_rules_t *rules;
    remote_storage_t *rs;     /* NULL with --storage.memory-only */
    run_llm_t *llm;           /* GET /api/v1/llm/doctor and /api/v1/llm/cost */
    run_slo_t *slo;           /* GET /api/v1/llm/slos */
    int64_t slo_retention_ms; /* the store's retention the SLO windows must fit */
    /* kubernetes_monitors (reload_mu): the watch of the monitors and their
     * Secrets; what the current jobs were generated from (mon_known: seen is
     * what the API holds; false while the monitors could not be read); the
     * generated jobs (kept when a later read fails); the reloads' pacing */
    k8s_discoverer_t *mon_watch;
    discovery_monitors_seen_t mon_seen;
    bool mon_known;
    char *mon_jobs;
    uint64_t mon_tried;
    int64_t mon_last_ms;
    int mon_fails;
} daemon_t;

/* One read of the monitors while loading: prev_jobs (in) the jobs text to keep
 * when the API cannot be read; the rest out. */
typedef struct mon_load {
    const char *prev_jobs;
    char *jobs;
    discovery_monitors_seen_t seen;
    bool ok;
} mon_load_t;

/* kubernetes_monitors: reads the selected PodMonitors / ServiceMonitors now and
 * appends the jobs they generate to c (with c's global interval and timeout). An
 * API that cannot be read is not fatal: the error is logged, the jobs of the last
 * successful read (none at start) are used, and the watch retries. */
static im_rc add_monitor_jobs(scrape_config_t *c, mon_load_t *ml, im_err_t *err)
{
    im_buf_t jobs, text;
    im_buf_init(&jobs, 0);
    im_buf_init(&text, 0);
    size_t n = 0;
    im_err_t ferr;
    im_err_clear(&ferr);
    im_rc rc = discovery_monitors_fetch(c->k8s_monitors, NULL, &jobs, &n, &ml->seen, &ferr);
    ml->ok = rc == IM_OK;
    if (rc == IM_EINVAL) { /* settings that cannot work: a configuration error */
        im_buf_free(&jobs);
        return im_err_set(err, rc, "%s", ferr.msg);
    }
    if (rc != IM_OK) {
        IM_ERROR("Cannot read the prometheus-operator monitors: keeping the jobs of the last "
                 "successful read, retrying with backoff",
                 "jobs_kept=%s err=%s", ml->prev_jobs && *ml->prev_jobs ? "yes" : "none",
                 im_logq(ferr.msg));
        im_buf_reset(&jobs);
        im_buf_puts(&jobs, ml->prev_jobs ? ml->prev_jobs : "");
        rc = IM_OK;
    }
    ml->jobs = im_strdup(jobs.len ? jobs.data : "");
    scrape_config_t *g = NULL;
    if (rc == IM_OK) {
        char iv[64], tv[64];
        im_duration_format(c->scrape_interval_ms, iv, sizeof iv);
        im_duration_format(c->scrape_timeout_ms, tv, sizeof tv);
        im_buf_printf(&text,
                      "global:\n  scrape_interval: %s\n  scrape_timeout: %s\nscrape_configs:\n", iv,
                      tv);
        im_buf_puts(&text, jobs.len ? jobs.data : "");
        rc = scrape_config_parse(text.data, text.len, "<kubernetes_monitors>", &g, err);
    }
    if (rc == IM_OK && g->njobs) {
        for (size_t i = 0; i < g->njobs && rc == IM_OK; i++)
            for (size_t k = 0; k < c->njobs; k++)
                if (!strcmp(c->jobs[k].job_name, g->jobs[i].job_name))
                    rc = im_err_set(err, IM_EINVAL,
                                    "kubernetes_monitors: job name \"%s\" is also in "
                                    "scrape_configs",
                                    g->jobs[i].job_name);
        if (rc == IM_OK) {
            c->jobs = im_realloc(c->jobs, (c->njobs + g->njobs) * sizeof *c->jobs);
            memcpy(c->jobs + c->njobs, g->jobs, g->njobs * sizeof *c->jobs);
            c->njobs += g->njobs;
            g->njobs = 0; /* moved */
        }
    }
    if (rc == IM_OK && ml->ok)
        IM_INFO("Read prometheus-operator monitors", "monitors=%zu secrets=%zu jobs=%zu", n,
                ml->seen.nsecrets, c->njobs);
    scrape_config_free(g);
    im_buf_free(&jobs);
    im_buf_free(&text);
    return rc;
}

/* What a configuration may not hold in this mode: remote_write needs a WAL;
 * agent mode has no rules, alerting or remote_read (as Prometheus' agent). */
static im_rc check_mode(const run_opts_t *o, const scrape_config_t *c, im_err_t *err)
{
    if (o->memory_only && c->nremote_write)
        return im_err_set(err, IM_EINVAL,
                          "remote_write reads the WAL, which --storage.memory-only does not keep: "
                          "drop one of them");
    if (o->backend_url) {
        /* --query.backend-url: the store answers every query; infermon keeps
         * nothing, so what would collect or derive data is refused. */
        const char *what = c->njobs           ? "scrape_configs"
                           : c->nrule_files   ? "rule_files"
                           : c->nremote_write ? "remote_write"
                           : c->k8s_monitors  ? "kubernetes_monitors"
                                              : NULL;
        if (what)
            return im_err_set(err, IM_EINVAL,
                              "%s is not allowed with --query.backend-url: infermon then stores "
                              "nothing and answers every query from the backend; let the store's "
                              "own Prometheus or agent scrape and evaluate rules, or drop the flag",
                              what);
        if (o->agent || o->enable_remote_write || o->enable_otlp)
            return im_err_set(err, IM_EINVAL,
                              "--query.backend-url keeps no local store: not with %s",
                              o->agent                 ? "--agent"
                              : o->enable_remote_write ? "--web.enable-remote-write-receiver"
                                                       : "--web.enable-otlp-receiver");
    }
    if (!o->agent) return IM_OK;
    if (c->nrule_files)
        return im_err_set(err, IM_EINVAL, "field rule_files is not allowed in agent mode");
    if (c->alerting)
        return im_err_set(err, IM_EINVAL, "field alerting is not allowed in agent mode");
    if (o->memory_only)
        return im_err_set(err, IM_EINVAL,
                          "--agent forwards from the WAL: not with "
                          "--storage.memory-only");
    return IM_OK;
}

static void md_fetch(void *ud, remote_metadata_t **out, size_t *n, void **keep)
{
    scrape_metadata_t *md = NULL;
    size_t nm = 0;
    scrape_manager_metadata(ud, &md, &nm);
    remote_metadata_t *r = im_calloc(nm ? nm : 1, sizeof *r);
    for (size_t i = 0; i < nm; i++)
        r[i] = (remote_metadata_t){md[i].metric, md[i].type, md[i].help, md[i].unit};
    void **k = im_malloc(2 * sizeof *k);
    k[0] = md;
    k[1] = (void *)(uintptr_t)nm;
    *out = r;
    *n = nm;
    *keep = k;
    r = NULL;
    (void)r;
}

static void md_free(void *ud, void *keep)
{
    (void)ud;
    void **k = keep;
    scrape_metadata_free(k[0], (size_t)(uintptr_t)k[1]);
    im_free(k);
}

static im_rc load_config(const run_opts_t *o, scrape_config_t **out, mon_load_t *ml, im_err_t *err)
{
    im_rc rc;
    if (o->config_file) {
        rc = scrape_config_load_file(o->config_file, out, err);
    } else if (o->backend_url && !o->config_text) { /* nothing to scrape */
        static const char none[] = "global: {}\n";
        rc = scrape_config_parse(none, sizeof none - 1, "<query backend>", out, err);
    } else {
        const char *t = o->config_text ? o->config_text : scrape_default_config_yaml;
        rc = scrape_config_parse(t, strlen(t), o->config_text ? "<config>" : "<embedded default>",
                                 out, err);
    }
    if (rc == IM_OK && (*out)->k8s_monitors && (rc = add_monitor_jobs(*out, ml, err)) != IM_OK) {
        scrape_config_free(*out);
        *out = NULL;
    }
    return rc;
}

static void mon_load_free(mon_load_t *ml)
{
    im_free(ml->jobs);
    discovery_monitors_seen_free(&ml->seen);
}

/* kubernetes_monitors: (re)starts the watch of the monitors the configuration
 * just loaded selects, and of the Secrets they reference; ml is what the load
 * read, moved into d (reload_mu held, or before any other thread runs). */
static void monitors_watch_restart(daemon_t *d, mon_load_t *ml)
{
    k8s_discoverer_stop(d->mon_watch);
    d->mon_watch = NULL;
    if (ml->jobs) {
        im_free(d->mon_jobs);
        d->mon_jobs = ml->jobs;
        ml->jobs = NULL;
    }
    if (ml->ok) {
        discovery_monitors_seen_free(&d->mon_seen);
        d->mon_seen = ml->seen;
        memset(&ml->seen, 0, sizeof ml->seen);
        d->mon_fails = 0;
    } else if (d->cfg->k8s_monitors) {
        d->mon_fails++;
    }
    d->mon_known = ml->ok;
    d->mon_tried = d->mon_seen.fingerprint;
    if (!d->cfg->k8s_monitors) return;
    im_err_t err;
    im_err_clear(&err);
    if (discovery_monitors_watch(d->cfg->k8s_monitors, NULL, ml->ok ? &d->mon_seen : NULL,
                                 &d->mon_watch, &err) != IM_OK)
        IM_ERROR("Cannot watch the prometheus-operator monitors: they are read at reloads only",
                 "err=%s", im_logq(err.msg));
}

static im_rc do_reload(void *ud, im_err_t *err);

/* Reloads when the watched monitors or Secrets differ from those the
 * configuration was generated from, or when the last read failed and the watch
 * now reaches the API: at most once a second (a burst of changes is one reload of
 * the latest state); a state whose reload failed is retried at the next change, a
 * SIGHUP, or after a backoff (2 s doubling to 30 s) — the previous jobs keep
 * running meanwhile. */
static void monitors_check(daemon_t *d)
{
    uint64_t fp = 0;
    pthread_mutex_lock(&d->reload_mu);
    int64_t now = im_now_ms();
    int64_t again = IM_MIN(30000, 1000LL << IM_MIN(IM_MAX(d->mon_fails, 1), 5));
    bool due = d->mon_watch && k8s_watcher_fingerprint(d->mon_watch, &fp) &&
               (!d->mon_known || fp != d->mon_seen.fingerprint) &&
               now - d->mon_last_ms >= (fp != d->mon_tried ? 1000 : again);
    if (due) {
        d->mon_tried = fp;
        d->mon_last_ms = now;
    }
    pthread_mutex_unlock(&d->reload_mu);
    if (!due) return;
    IM_INFO("The prometheus-operator monitors changed: reloading", NULL);
    im_err_t err;
    im_err_clear(&err);
    (void)do_reload(d, &err);
}

static im_rc do_reload(void *ud, im_err_t *err)
{
    daemon_t *d = ud;
    pthread_mutex_lock(&d->reload_mu);
    scrape_config_t *c = NULL;
    mon_load_t ml = {.prev_jobs = d->mon_jobs};
    im_rc rc = load_config(d->o, &c, &ml, err);
    if (rc != IM_OK) {
        mon_load_free(&ml);
        char b[1200];
        IM_ERROR("Error reloading config, keeping the previous one", "err=%s",
                 im_logq(im_err_format(err, b, sizeof b)));
        if (d->http) http_server_set_reload_status(d->http, false, im_now_ms());
        pthread_mutex_unlock(&d->reload_mu);
        return rc;
    }
    if (check_mode(d->o, c, err) != IM_OK ||
        run_slo_validate(c, d->slo_retention_ms, err) != IM_OK) {
        IM_ERROR("Error reloading config, keeping the previous one", "err=%s", im_logq(err->msg));
        if (d->http) http_server_set_reload_status(d->http, false, im_now_ms());
        scrape_config_free(c);
        mon_load_free(&ml);
        pthread_mutex_unlock(&d->reload_mu);
        return IM_EINVAL;
    }
    scrape_manager_apply(d->sm, c);
    if (d->rs) remote_storage_apply(d->rs, c);
    run_slo_set_config(d->slo, c); /* before the rules: they take its resolution */
    run_rules_reload(d->rules, c);
    if (d->http) {
        http_server_set_config(d->http, c);
        http_server_set_reload_status(d->http, true, im_now_ms());
    }
    scrape_config_free(d->cfg);
    d->cfg = c;
    monitors_watch_restart(d, &ml);
    mon_load_free(&ml);
    IM_INFO("Completed loading of configuration file", "filename=%s jobs=%zu",
            im_logq(d->o->config_file ? d->o->config_file : "<embedded>"), c->njobs);
    pthread_mutex_unlock(&d->reload_mu);
    return IM_OK;
}

static void do_quit(void *ud)
{
    (void)ud;
    g_stop = 1;
}

static bool ui_lookup(const char *path, http_asset_t *out)
{
    const ui_asset_t *a = ui_asset_lookup(path);
    if (!a) return false;
    out->content_type = a->content_type;
    out->etag = a->etag;
    out->cache_control = ui_asset_cache_control(a);
    out->data = a->data;
    out->len = a->len;
    return true;
}

static void die_now(int sig)
{
    (void)sig;
    static const char m[] = "second signal: exiting at once\n";
    ssize_t w = write(2, m, sizeof m - 1);
    (void)w;
    _exit(1);
}

/* Raises the soft limit on open files to the hard limit: every WAL segment,
 * block file, scrape connection and HTTP client holds one, and the common
 * default soft limit of 1024 is soon reached (segments then fail to open and
 * scraped data is dropped). Logs both limits, as Prometheus does at start. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        IM_WARN("Cannot read the file descriptor limit", "err=%s", im_logq(strerror(errno)));
        return;
    }
    rlim_t was = rl.rlim_cur;
    if (rl.rlim_cur != rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
            IM_WARN("Cannot raise the file descriptor soft limit to the hard limit",
                    "soft=%llu hard=%llu err=%s", (unsigned long long)was,
                    (unsigned long long)rl.rlim_max, im_logq(strerror(errno)));
            rl.rlim_cur = was;
        }
    }
    char soft[32], hard[32], prev[32];
    if (rl.rlim_cur == RLIM_INFINITY)
        snprintf(soft, sizeof soft, "unlimited");
    else
        snprintf(soft, sizeof soft, "%llu", (unsigned long long)rl.rlim_cur);
    if (rl.rlim_max == RLIM_INFINITY)
        snprintf(hard, sizeof hard, "unlimited");
    else
        snprintf(hard, sizeof hard, "%llu", (unsigned long long)rl.rlim_max);
    if (was == RLIM_INFINITY)
        snprintf(prev, sizeof prev, "unlimited");
    else
        snprintf(prev, sizeof prev, "%llu", (unsigned long long)was);
    IM_INFO("File descriptor limits", "fd_limits=\"(soft=%s, hard=%s)\" raised_from=%s", soft, hard,
            prev);
}

/* The remote query backend of --query.backend-url and its flags. */
static im_rc open_backend(const run_opts_t *o, query_backend_t **out, im_err_t *err)
{
    query_remote_file_t f;
    memset(&f, 0, sizeof f);
    cfg_http_client_init(&f.http);
    if (o->backend_config && query_remote_config_load(o->backend_config, &f, err) != IM_OK)
        return IM_EINVAL;
    query_remote_opts_t ro = {.url = o->backend_url,
                              .http = f.http,
                              .header_names = f.header_names,
                              .header_values = f.header_values,
                              .nheaders = f.nheaders,
                              .tenant = o->backend_tenant ? o->backend_tenant : f.tenant,
                              .timeout_ms = o->backend_timeout_ms,
                              .max_bytes = o->backend_max_bytes};
    im_rc rc = query_remote_new(&ro, out, err);
    if (rc != IM_OK) im_err_prefix(err, "--query.backend-url");
    query_remote_file_free(&f);
    return rc;
}

int run_daemon(const run_opts_t *o)
{
    daemon_t d;
    memset(&d, 0, sizeof d);
    d.o = o;
    pthread_mutex_init(&d.reload_mu, NULL);
    g_stop = g_reload = 0;
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (o->handle_signals) {
        signal(SIGPIPE, SIG_IGN);
        pthread_sigmask(SIG_BLOCK, &set, &old); /* threads started below inherit this */
    }
    im_err_t err;
    im_err_clear(&err);
    char eb[1200];
    int status = 2;
    tsdb_t *db = NULL;
    promql_engine_t *eng = NULL;
    raise_fd_limit();
    query_backend_t *backend = NULL;
    if (o->backend_url && open_backend(o, &backend, &err) != IM_OK) {
        IM_ERROR("Error opening the query backend", "err=%s",
                 im_logq(im_err_format(&err, eb, sizeof eb)));
        goto out;
    }
    if (!o->config_file && !o->backend_url)
        IM_INFO(o->config_text ? "Using the given configuration"
                               : "No --config.file given: using the embedded default (scrape vLLM "
                                 "at localhost:8000 and dcgm-exporter at localhost:9400 every 15s, "
                                 "store under ./data, serve on :9470)",
                NULL);
    mon_load_t ml0 = {0};
    if (load_config(o, &d.cfg, &ml0, &err) != IM_OK) {
        IM_ERROR("Error loading config", "err=%s", im_logq(im_err_format(&err, eb, sizeof eb)));
        goto out;
    }
    if (check_mode(o, d.cfg, &err) != IM_OK) {
        IM_ERROR("Error loading config", "err=%s", im_logq(err.msg));
        goto out;
    }
    tsdb_opts_t to;
    memset(&to, 0, sizeof to);
    to.dir = o->memory_only || backend ? NULL
             : o->storage_path         ? o->storage_path
             : d.cfg->storage_path     ? d.cfg->storage_path
                                       : "./data";
    to.retention_ms = o->retention_ms ? o->retention_ms : d.cfg->retention_ms;
    to.retention_bytes = o->retention_bytes ? o->retention_bytes : d.cfg->retention_bytes;
    d.slo_retention_ms = backend ? 0 : to.retention_ms ? to.retention_ms : 15 * IM_MS_PER_DAY;
    if (run_slo_validate(d.cfg, d.slo_retention_ms, &err) != IM_OK) { /* llm.slos */
        IM_ERROR("Error loading config", "err=%s", im_logq(err.msg));
        goto out;
    }
    const char *fs = o->wal_fsync;
    if (!fs && d.cfg->storage_fsync_set)
        fs = d.cfg->storage_fsync == SCRAPE_FSYNC_ALWAYS  ? "always"
             : d.cfg->storage_fsync == SCRAPE_FSYNC_NEVER ? "never"
                                                          : "timer";
    to.fsync = fs && !strcmp(fs, "always")  ? TSDB_FSYNC_ALWAYS
               : fs && !strcmp(fs, "never") ? TSDB_FSYNC_NEVER
                                            : TSDB_FSYNC_TIMER;
    to.fsync_interval_ms = d.cfg->storage_fsync_interval_ms;
    to.max_future_ms = o->tsdb_max_future_ms;
    {
        bool fc_set = o->frame_cache_set || d.cfg->storage_frame_cache_set;
        int64_t fc = o->frame_cache_set ? o->frame_cache_bytes : d.cfg->storage_frame_cache_bytes;
        to.frame_cache_bytes = !fc_set ? 0 : fc > 0 ? fc : -1;
    }
    to.limits = (tsdb_limits_t){o->tsdb_max_labels, o->tsdb_max_label_name_bytes,
                                o->tsdb_max_label_value_bytes, o->tsdb_max_series_bytes};
    if (to.dir) {
        remote_opts_t ro = {.storage_dir = to.dir,
                            .max_wal_retention_bytes = o->remote_max_wal_retention_bytes,
                            .user_agent = "infermon/remote-write",
                            .metadata = md_fetch,
                            .metadata_free = md_free};
        d.rs = remote_storage_new(&ro);
        to.wal_keep = remote_storage_wal_keep;
        to.wal_keep_ctx = d.rs;
    }
    to.agent = o->agent;
    if (o->agent) IM_INFO("Agent mode: scrape and forward only (no queries, no rules)", NULL);
    if (backend)
        IM_INFO("Query backend mode: every query is answered by the backend; nothing is scraped "
                "or stored",
                "backend=%s", im_logq(query_backend_describe(backend)));
    IM_INFO("Starting TSDB", "path=%s", im_logq(to.dir ? to.dir : "<memory>"));
    if (tsdb_open(&to, &db, &err) != IM_OK) {
        IM_ERROR("Opening storage failed", "err=%s", im_logq(im_err_format(&err, eb, sizeof eb)));
        goto out;
    }
    promql_engine_opts_t eo;
    memset(&eo, 0, sizeof eo);
    eo.lookback_delta_ms = o->lookback_delta_ms;
    eo.max_samples = o->query_max_samples;
    eo.timeout_ms = o->query_timeout_ms;
    eo.default_eval_interval_ms = d.cfg->evaluation_interval_ms;
    eng = promql_engine_new(&eo);
    scrape_manager_opts_t so;
    memset(&so, 0, sizeof so);
    so.storage = tsdb_storage(db);
    so.normalize_bucket_labels = promql_lang_default().compat >= 3;
    so.strict_content_type = promql_lang_default().compat >= 3;
    if (scrape_manager_new(&so, &d.sm, &err) != IM_OK ||
        scrape_manager_set_workers(d.sm, o->scrape_workers, &err) != IM_OK) {
        IM_ERROR("Starting the scrape manager failed", "err=%s", im_logq(err.msg));
        goto out;
    }
    k8s_limits_t k8s_lim = {.max_list_page_bytes = (size_t)o->k8s_max_list_page_bytes,
                            .max_event_bytes = (size_t)o->k8s_max_event_bytes};
    scrape_manager_set_k8s_limits(d.sm, &k8s_lim);
    IM_INFO("Scrape workers", "workers=%zu", scrape_manager_workers(d.sm));
    char ret_s[64];
    im_duration_format(to.retention_ms ? to.retention_ms : 15 * IM_MS_PER_DAY, ret_s, sizeof ret_s);
    http_server_opts_t ho;
    memset(&ho, 0, sizeof ho);
    ho.listen_address = o->listen_address ? o->listen_address : ":9470";
    ho.web_config_file = o->web_config_file;
    ho.bcrypt_max = o->bcrypt_max;
    ho.bcrypt_wait_ms = o->bcrypt_wait_ms;
    ho.storage = tsdb_storage(db);
    ho.engine = eng;
    ho.backend = backend;
    ho.scrape = d.sm;
    ho.enable_lifecycle = o->enable_lifecycle;
    ho.enable_remote_write = o->enable_remote_write;
    ho.enable_otlp = o->enable_otlp;
    ho.remote_write_max_bytes = o->remote_write_max_bytes;
    char rw_md_path[4200];
    if (to.dir) {
        snprintf(rw_md_path, sizeof rw_md_path, "%s/remote-write-metadata", to.dir);
        ho.rw_metadata_path = rw_md_path;
    }
    ho.rw_metadata_max = o->rw_metadata_max;
    ho.enable_search = o->enable_search;
    ho.search_max_limit = (int64_t)o->search_max_limit;
    ho.agent = o->agent;
    ho.max_request_body_bytes = o->max_request_body_bytes;
    ho.max_connections = (int)o->web_max_connections;
    ho.query_max_concurrency = (int)o->query_max_concurrency;
    ho.lifecycle.reload = do_reload;
    ho.lifecycle.quit = do_quit;
    ho.lifecycle.ud = &d;
    ho.flags = o->flags;
    ho.storage_retention = ret_s;
    if (http_server_start(&ho, &d.http, &err) != IM_OK) {
        IM_ERROR("Starting the web server failed", "err=%s",
                 im_logq(im_err_format(&err, eb, sizeof eb)));
        goto out;
    }
    http_server_set_asset_lookup(d.http, ui_lookup);
    http_server_set_config(d.http, d.cfg);
    if (!o->agent) {
        d.llm = run_llm_start(d.http, tsdb_storage(db), eng, backend, &d.reload_mu, &d.cfg);
        d.slo = run_slo_start(d.http, db ? tsdb_storage(db) : NULL, eng, backend, d.cfg,
                              o->slo_resolve_interval_ms);
    }
    run_rules_opts_t rro = {.external_url = o->external_url,
                            .outage_tolerance_ms = o->rules_outage_tolerance_ms,
                            .grace_period_ms = o->rules_grace_period_ms,
                            .resend_delay_ms = o->rules_resend_delay_ms,
                            .notify_queue_capacity = (size_t)o->notify_queue_capacity,
                            .slo = d.slo};
    if (!o->agent && !backend)
        d.rules = run_rules_start(d.cfg, tsdb_storage(db), eng, d.http, &rro);
    if (d.rs) {
        /* Before the first scrape: a new queue starts at the WAL's end. */
        remote_storage_set_metadata_ud(d.rs, d.sm);
        remote_storage_apply(d.rs, d.cfg);
        http_server_add_metrics_hook(d.http, remote_storage_metrics, d.rs);
        http_server_set_remote_status(d.http, remote_storage_status_json, d.rs);
    }
    scrape_manager_apply(d.sm, d.cfg);
    if (scrape_manager_start(d.sm, &err) != IM_OK) {
        IM_ERROR("Starting the scrape manager failed", "err=%s", im_logq(err.msg));
        goto out;
    }
    http_server_set_ready(d.http, true);
    IM_INFO("Server is ready to receive web requests.", "addr=%s port=%u",
            im_logq(ho.listen_address), (unsigned)http_server_port(d.http));
    if (o->on_ready) o->on_ready(o->on_ready_ud, http_server_port(d.http));
    pthread_mutex_lock(&d.reload_mu);
    if (!d.mon_watch) monitors_watch_restart(&d, &ml0); /* unless a reload started it */
    pthread_mutex_unlock(&d.reload_mu);
    while (!g_stop) {
        if (o->handle_signals) {
            struct timespec ts = {0, 200 * 1000 * 1000};
            int sig = sigtimedwait(&set, NULL, &ts);
            if (sig == SIGHUP)
                g_reload = 1;
            else if (sig == SIGTERM || sig == SIGINT) {
                IM_WARN("Received termination signal, exiting gracefully...", "signal=%d", sig);
                g_stop = 1;
            }
        } else {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (g_reload) {
            g_reload = 0;
            im_err_clear(&err);
            (void)do_reload(&d, &err);
        }
        monitors_check(&d);
    }
    if (o->handle_signals) { /* a second signal exits at once */
        signal(SIGTERM, die_now);
        signal(SIGINT, die_now);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    }
    http_server_set_ready(d.http, false);
    IM_INFO("Stopping scrape manager...", NULL);
    status = 0;
out:
    k8s_discoverer_stop(d.mon_watch);
    mon_load_free(&ml0);
    discovery_monitors_seen_free(&d.mon_seen);
    im_free(d.mon_jobs);
    if (d.sm) scrape_manager_stop(d.sm, false);
    if (d.http) http_server_stop(d.http);
    run_rules_stop(d.rules);
    run_llm_stop(d.llm);
    run_slo_stop(d.slo);
    IM_INFO("Stopping storage...", NULL);
    if (d.sm) scrape_manager_free(d.sm);
    if (db) tsdb_close(db);
    remote_storage_free(d.rs); /* after the store: its maintenance asks wal_keep */
    if (eng) promql_engine_free(eng);
    query_backend_free(backend);
    scrape_config_free(d.cfg);
    pthread_mutex_destroy(&d.reload_mu);
    if (status == 0) IM_INFO("See you next time!", NULL);
    if (o->handle_signals) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return status;
}

/* ---- `infermon run` ---- */

/* What the flags fill: the daemon's options and what cli_run applies itself. */
typedef struct run_cli {
    run_opts_t o;
    const char *log_level, *compat, *features;
    uint32_t regex_match_limit;
} run_cli_t;

#define F(field) CLI_FLAG_FIELD(run_cli_t, field)
#define POSITIVE 1, INT64_MAX
#define STR      CLI_FLAG_STR
#define BOOL     CLI_FLAG_BOOL
#define DUR      CLI_FLAG_DUR
#define SIZE     CLI_FLAG_SIZE
#define INT      CLI_FLAG_INT
#define ENUM     CLI_FLAG_ENUM

/* One row a flag, in the order of the help. */
static const cli_flag_t run_flags[] = {
    {"config.file", "FILE", "", STR, F(o.config_file),
     .help = "configuration (default: embedded: vLLM at\nlocalhost:8000, dcgm-exporter at "
             "localhost:9400)"},
    {"storage.tsdb.path", "DIR", "data/", STR, F(o.storage_path),
     .help = "data directory (default: storage.path, ./data)"},
    {"storage.tsdb.retention.time", "DUR", "0s", DUR, F(o.retention_ms),
     .help = "how long to keep samples (default 15d)"},
    {"storage.tsdb.retention.size", "SIZE", "0B", SIZE, F(o.retention_bytes),
     .help = "maximum bytes of blocks (e.g. 10GB; default none)"},
    {"storage.tsdb.wal-fsync", "POLICY", "timer", ENUM, F(o.wal_fsync),
     .choices = "timer|always|never", .help = "timer|always|never (default timer)"},
    {"storage.frame-cache-size", "SIZE", "256MiB", SIZE, F(o.frame_cache_bytes),
     .help =
         "decoded block frames kept for queries\n(default storage.frame_cache_size, 256MiB;\n0B: "
         "none)"},
    {"storage.memory-only", NULL, "false", BOOL, F(o.memory_only),
     .help = "keep everything in memory (no WAL, no blocks)"},
    {"storage.remote.max-wal-retention", "SIZE", "2GiB", SIZE, F(o.remote_max_wal_retention_bytes),
     POSITIVE,
     .help = "WAL kept for remote_write queues that\nhave not sent it (default 2GiB); past it "
             "the\noldest unsent data is given up (logged)"},
    {"agent", NULL, "false", BOOL, F(o.agent),
     .help = "agent mode: scrape, relabel and forward through\nremote_write only (no queries, "
             "no rules)"},
    {"web.listen-address", "ADDR", ":9470", STR, F(o.listen_address),
     .help = "listen address (default :9470)"},
    {"web.config.file", "FILE", "", STR, F(o.web_config_file),
     .help = "TLS and basic auth (Prometheus web-config format)"},
    {"web.basic-auth.bcrypt-concurrency", "N", "2", INT, F(o.bcrypt_max), 1, 1024,
     .hint = " (1..1024)", .help = "bcrypt password checks at once (default 2)"},
    {"web.basic-auth.bcrypt-wait", "DUR", "250ms", DUR, F(o.bcrypt_wait_ms),
     .opts = CLI_FLAG_ZERO_IS_NONE, .help = "longest wait for one before 503 (default 250ms)"},
    {"web.enable-lifecycle", NULL, "false", BOOL, F(o.enable_lifecycle),
     .help = "enable POST /-/reload and /-/quit"},
    {"web.enable-remote-write-receiver", NULL, "false", BOOL, F(o.enable_remote_write),
     .help = "accept remote write on /api/v1/write"},
    {"web.enable-otlp-receiver", NULL, "false", BOOL, F(o.enable_otlp),
     .help = "accept OTLP metrics on /api/v1/otlp/v1/metrics"},
    {"web.remote-write-max-bytes", "SIZE", "32MiB", SIZE, F(o.remote_write_max_bytes),
     .help = "largest remote-write request (default 32MiB)"},
    {"web.search.max-limit", "N", "10000", INT, F(o.search_max_limit), POSITIVE,
     .help = "largest limit of the /api/v1/search/* answers\n(--enable-feature=search-api)"},
    {"web.remote-write-max-metadata", "N", "100000", INT, F(o.rw_metadata_max), POSITIVE,
     .help = "metric names whose remote write 2.0 metadata is\nkept (default 100000)"},
    {"query.lookback-delta", "DUR", "5m", DUR, F(o.lookback_delta_ms),
     .help = "lookback for instant vectors (default 5m)"},
    {"query.max-samples", "N", "50000000", INT, F(o.query_max_samples), POSITIVE,
     .help = "samples a query may hold (default 50000000)"},
    {"query.timeout", "DUR", "2m", DUR, F(o.query_timeout_ms),
     .help = "query time limit (default 2m)"},
    {"log.level", "LEVEL", "info", ENUM, F(log_level), .choices = "debug|info|warn|error",
     .help = "debug|info|warn|error (default info)"},
    {"web.external-url", "URL", "", STR, F(o.external_url),
     .help = "URL under which infermon is reached (alerts'\ngeneratorURL; default "
             "http://<hostname>:<port>)"},
    {"rules.alert.for-outage-tolerance", "DUR", "1h", DUR, F(o.rules_outage_tolerance_ms), POSITIVE,
     .help = "max downtime for which `for` state is\nrestored (default 1h)"},
    {"rules.alert.for-grace-period", "DUR", "10m", DUR, F(o.rules_grace_period_ms), POSITIVE,
     .help = "minimum time between a restart and firing an\nalert whose `for` exceeds it "
             "(default 10m)"},
    {"rules.alert.resend-delay", "DUR", "1m", DUR, F(o.rules_resend_delay_ms), POSITIVE,
     .help = "resend firing alerts this often (default 1m)"},
    {"alertmanager.notification-queue-capacity", "N", "10000", INT, F(o.notify_queue_capacity),
     POSITIVE, .help = "alerts queued for Alertmanager\n(default 10000)"},
    {"storage.tsdb.max-future", "DUR", "10m", DUR, F(o.tsdb_max_future_ms), 0, INT64_MAX,
     .opts = CLI_FLAG_ZERO_IS_NONE,
     .help = "refuse samples further ahead of the clock\n(default 10m; 0s: no check)"},
    {"storage.tsdb.max-labels-per-series", "N", "4096", INT, F(o.tsdb_max_labels), 1, UINT32_MAX,
     .help = "labels a series may have (default and\nmost 4096)"},
    {"storage.tsdb.max-label-name-bytes", "SIZE", "0B", SIZE, F(o.tsdb_max_label_name_bytes), 1,
     UINT32_MAX, .help = "longest label name (default: no own\nlimit, the series limit bounds it)"},
    {"storage.tsdb.max-label-value-bytes", "SIZE", "0B", SIZE, F(o.tsdb_max_label_value_bytes), 1,
     UINT32_MAX, .help = "longest label value (default: as above)"},
    {"storage.tsdb.max-series-bytes", "SIZE", "1MiB", SIZE, F(o.tsdb_max_series_bytes), 1,
     UINT32_MAX,
     .help = "bytes of a series' label names and\nvalues (default 1MiB, at most 16MiB)"},
    {"query.max-concurrency", "N", "20", INT, F(o.query_max_concurrency), 1, 1000000,
     .help = "queries evaluated at once; more wait in a queue\nuntil their timeout (default 20)"},
    {"web.max-connections", "N", "512", INT, F(o.web_max_connections), 1, 1000000,
     .help = "simultaneous HTTP connections, one thread each\n(default 512)"},
    {"web.max-request-body-bytes", "SIZE", "16MiB", SIZE, F(o.max_request_body_bytes), POSITIVE,
     .help = "largest request body but remote write (forms;\ndefault 16MiB)"},
    {"scrape.workers", "N", NULL, INT, F(o.scrape_workers), 1, SCRAPE_MAX_WORKERS,
     .hint = " (must be 1 to 256)",
     .help = "threads parsing and storing scrapes, 1-256\n(default: CPUs online, at least 2, at "
             "most 8)"},
    {"promql.compat", "2|3", "3", STR, F(compat),
     .help = "PromQL language and semantics: 3 = Prometheus 3\n(default), 2 = Prometheus 2.53 "
             "(docs/promql.md)"},
    {"enable-feature", "LIST", "", STR, F(features),
     .help = "Prometheus 3 feature flags, comma-separated:\npromql-experimental-functions,\n"
             "promql-duration-expr (on by default), search-api"},
    {"query.backend-url", "URL", "", STR, F(o.backend_url),
     .help = "answer every query from this Prometheus-compatible\nstore (Prometheus, "
             "VictoriaMetrics, Mimir, Thanos):\nnothing is scraped or stored"},
    {"query.backend-config", "FILE", "", STR, F(o.backend_config),
     .help = "its HTTP client: basic_auth, authorization,\ntls_config, proxy_url, headers, "
             "tenant (YAML)"},
    {"query.backend-tenant", "ID", "", STR, F(o.backend_tenant),
     .help = "X-Scope-OrgID sent to it (Mimir, Cortex, Loki-style)"},
    {"query.backend-timeout", "DUR", "1m", DUR, F(o.backend_timeout_ms), POSITIVE,
     .help = "longest wait for one answer (default 1m)"},
    {"query.backend-max-bytes", "SIZE", "256MiB", SIZE, F(o.backend_max_bytes), POSITIVE,
     .help = "largest answer accepted (default 256MiB)"},
    {"llm.slo-resolve-interval", "DUR", "1m", DUR, F(o.slo_resolve_interval_ms), POSITIVE,
     .help = "re-resolve llm.slos against the live `le` bounds\nthis often once all are live "
             "(default 1m;\nat most 15s while one is on the catalog's)"},
    {"regex.match-limit", "N", "1000000", INT, F(regex_match_limit), 1, UINT32_MAX,
     .help = "backtracking steps per regex match before the\nDFA fallback; a match neither "
             "decides is an\nerror (default 1000000)"},
    {"discovery.kubernetes.max-list-page-bytes", "SIZE", "512MiB", SIZE,
     F(o.k8s_max_list_page_bytes), POSITIVE,
     .help = "largest page of a Kubernetes\nList answer (kubernetes_sd_configs; default\n512MiB; "
             "500 objects a page)"},
    {"discovery.kubernetes.max-event-bytes", "SIZE", "64MiB", SIZE, F(o.k8s_max_event_bytes),
     POSITIVE, .help = "largest Kubernetes watch event\n(default 64MiB)"},
};
#undef F
#undef POSITIVE
#undef STR
#undef BOOL
#undef DUR
#undef SIZE
#undef INT
#undef ENUM

static void usage(FILE *f);

static const cli_flagset_t run_flagset = {"run", run_flags, IM_ARRAY_LEN(run_flags), usage};

static void usage(FILE *f)
{
    fputs("usage: infermon run [flags]\n\n"
          "Scrapes targets, stores samples, answers PromQL over the Prometheus HTTP API.\n\n",
          f);
    cli_flags_usage(f, &run_flagset);
}

/* True when the flag was given. */
static bool given(const char *const *vals, const char *name)
{
    return vals[cli_flags_find(&run_flagset, name) - run_flags] != NULL;
}

int cli_run(int argc, char **argv)
{
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    run_cli_t c = {0};
    run_opts_t *o = &c.o;
    run_opts_defaults(o);
    const char *vals[IM_ARRAY_LEN(run_flags)];
    if (cli_flags_parse(&run_flagset, argc, argv, &c, vals)) return 2;
    o->handle_signals = true;
    o->frame_cache_set = given(vals, "storage.frame-cache-size");
    if (c.log_level) {
        im_log_level_t lvl;
        im_log_parse_level(c.log_level, &lvl); /* one of the row's choices */
        im_log_set_level(lvl);
    }
    if (c.regex_match_limit)
        im_regex_set_limits(&(im_regex_limits_t){.match_limit = c.regex_match_limit});
    /* the PromQL language level, for every parser and engine of the process */
    promql_lang_t lang;
    /* the features PromQL knows: c.features without search-api */
    size_t pcap = (c.features ? strlen(c.features) : 0) + 1;
    char *pfeat = im_malloc(pcap);
    o->enable_search = take_feature(c.features, "search-api", pfeat, pcap);
    bool lang_ok = cli_promql_lang("run", c.compat, c.features ? pfeat : NULL, &lang);
    im_free(pfeat);
    if (!lang_ok) return 2;
    promql_lang_set_default(&lang);
    if ((o->backend_config || o->backend_tenant || given(vals, "query.backend-timeout") ||
         given(vals, "query.backend-max-bytes")) &&
        !o->backend_url) {
        fprintf(stderr, "infermon run: the --query.backend-* flags need --query.backend-url\n");
        return 2;
    }
    /* flags for /api/v1/status/flags, with defaults shown */
    char workers_def[24];
    snprintf(workers_def, sizeof workers_def, "%zu", scrape_default_workers());
    const char *pairs[2 * IM_ARRAY_LEN(run_flags) + 1];
    cli_flags_pairs(&run_flagset, vals, pairs);
    for (size_t k = 0; pairs[k]; k += 2)
        if (!strcmp(pairs[k], "scrape.workers") && !vals[k / 2]) pairs[k + 1] = workers_def;
    o->flags = pairs;
    /* Inside a Kubernetes pod without --config.file: the in-cluster default
     * (discovery/generate.h; `infermon check config --in-cluster` prints it). */
    im_buf_t incluster;
    im_buf_init(&incluster, 0);
    if (!o->config_file && discovery_incluster_detect(NULL)) {
        if (discovery_incluster_config(NULL, &incluster, NULL) != IM_OK) {
            im_buf_free(&incluster);
            return 2;
        }
        IM_INFO("No --config.file given, running in a Kubernetes pod: using the in-cluster "
                "default (annotated pods, dcgm-exporter, Kueue; see `infermon check config "
                "--in-cluster`)",
                NULL);
        o->config_text = incluster.data;
    }
    int st = run_daemon(o);
    im_buf_free(&incluster);
    return st;
}
