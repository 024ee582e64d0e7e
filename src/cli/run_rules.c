/* run_rules.c — the daemon's rules and alerting (see run_rules.h): rule file
 * globbing relative to the config file, the built-in rules with thresholds from
 * `llm:`, a tsdb-backed rules_storage_t (one appender per rule, committed so the
 * next rule sees it), the evaluation thread, the notifier, and the HTTP hooks. */
#include "util/base.h"

#include <glob.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli/run_rules.h"
#include "notify/notify.h"
#include "rules/builtin.h"
#include "rules/rules.h"
#include "util/log.h"
#include "util/timeutil.h"

struct run_rules {
    tsdb_t *db;
    tsdb_appender_t *app;
    tsdb_queryable_t *q;
    promql_engine_t *eng;
    rules_manager_t *m;
    notify_t *notify;
    const im_labels_t *ext_labels;
    char *external_url;
    pthread_t thread;
    pthread_mutex_t mu;
    bool stop;
    scrape_config_t *cfg; /* reference to the config in force (for re-detection) */
    rules_names_t names;  /* names the built-in rules were generated for */
    bool names_auto;      /* built-ins loaded with vllm_names auto */
    int64_t next_detect_ms;
};

static im_rc st_append(void *ctx, const im_labels_t *ls, int64_t t, double v)
{
    run_rules_t *r = ctx;
    if (!r->app) r->app = tsdb_appender(r->db);
    im_rc rc = tsdb_appender_add(r->app, 0, ls, t, v, NULL);
    if (rc == IM_ELIMIT) /* a storage limit (tsdb/limits.h): say which */
        IM_WARN("Rule sample appending failed", "err=%s", im_logq(tsdb_appender_error(r->app)));
    return rc;
}

static im_rc st_commit(void *ctx)
{
    run_rules_t *r = ctx;
    if (!r->app) return IM_OK;
    im_err_t err;
    im_rc rc = tsdb_appender_commit(r->app, &err);
    r->app = NULL;
    if (rc != IM_OK) IM_WARN("Rule evaluation result discarded", "err=%s", im_logq(err.msg));
    return rc;
}

static const cfg_node_t *node_get(const cfg_node_t *m, const char *key)
{
    if (!m || m->type != CFG_NODE_MAP) return NULL;
    for (size_t i = 0; i + 1 < m->nkids; i += 2)
        if (m->kids[i]->str && strcmp(m->kids[i]->str, key) == 0) return m->kids[i + 1];
    return NULL;
}

static double node_num(const cfg_node_t *m, const char *key)
{
    const cfg_node_t *v = node_get(m, key);
    return v && v->str ? strtod(v->str, NULL) : 0;
}

/* Loads the rule files of cfg (or the built-ins) into files; false if a file
 * failed (errors logged). */
/* Which KV-cache metric name do the scraped vLLM targets expose (last hour)?
 * Only one of them: that one; both or none: AUTO (the rule reads either). */
static rules_names_t detect_vllm_names(tsdb_queryable_t *q)
{
    if (!q) return RULES_NAMES_AUTO;
    tsdb_strlist_t names = {0};
    im_err_t err;
    int64_t now = im_now_ms();
    if (q->vt->label_values(q, IM_METRIC_NAME, now - IM_MS_PER_HOUR, now, NULL, 0, &names, &err) !=
        IM_OK)
        return RULES_NAMES_AUTO;
    bool has_new = false, has_old = false;
    for (size_t i = 0; i < names.n; i++) {
        if (strcmp(names.v[i]->s, "vllm:kv_cache_usage_perc") == 0) has_new = true;
        if (strcmp(names.v[i]->s, "vllm:gpu_cache_usage_perc") == 0) has_old = true;
    }
    tsdb_strlist_free(&names);
    return has_new && !has_old   ? RULES_NAMES_NEW
           : has_old && !has_new ? RULES_NAMES_OLD
                                 : RULES_NAMES_AUTO;
}

static bool load_rules(const scrape_config_t *cfg, tsdb_queryable_t *q, rules_file_t ***out,
                       size_t *nout, rules_names_t *names_used, bool *names_auto)
{
    rules_file_t **files = NULL;
    size_t n = 0;
    bool ok = true;
    *names_auto = false;
    *names_used = RULES_NAMES_AUTO;
    char *dircopy = cfg->filename ? im_strdup(cfg->filename) : im_strdup(".");
    const char *dir = cfg->filename ? dirname(dircopy) : ".";
    for (size_t i = 0; i < cfg->nrule_files; i++) {
        im_buf_t p;
        im_buf_init(&p, 0);
        if (cfg->rule_files[i][0] == '/')
            (void)im_buf_puts(&p, cfg->rule_files[i]);
        else
            (void)im_buf_printf(&p, "%s/%s", dir, cfg->rule_files[i]);
        glob_t gl;
        memset(&gl, 0, sizeof gl);
        if (glob(p.data, 0, NULL, &gl) == 0) {
            for (size_t k = 0; k < gl.gl_pathc; k++) {
                rules_errs_t errs = {0};
                rules_file_t *f = NULL;
                if (rules_file_load(gl.gl_pathv[k], &f, &errs) != IM_OK) {
                    for (size_t e = 0; e < errs.n; e++)
                        IM_ERROR("Loading rule file failed", "err=%s", im_logq(errs.v[e]));
                    ok = false;
                } else {
                    files = im_realloc(files, (n + 1) * sizeof *files);
                    files[n++] = f;
                }
                rules_errs_free(&errs);
            }
        }
        globfree(&gl);
        im_buf_free(&p);
    }
    im_free(dircopy);
    const cfg_node_t *bn = node_get(cfg->llm, "builtin_rules");
    bool builtin = bn && bn->str ? strcmp(bn->str, "true") == 0 : cfg->nrule_files == 0;
    if (builtin) {
        rules_builtin_opts_t bo = {
            .ttft_p95_target_seconds = node_num(cfg->llm, "ttft_p95_target_seconds"),
            .failure_ratio = node_num(cfg->llm, "failure_ratio"),
            .queue_waiting_threshold = node_num(cfg->llm, "queue_waiting_threshold"),
            .kv_cache_threshold = node_num(cfg->llm, "kv_cache_threshold"),
        };
        const cfg_node_t *nn = node_get(cfg->llm, "vllm_names");
        if (nn && nn->str && strcmp(nn->str, "old") == 0)
            bo.names = RULES_NAMES_OLD;
        else if (nn && nn->str && strcmp(nn->str, "new") == 0)
            bo.names = RULES_NAMES_NEW;
        else if (nn && nn->str && strcmp(nn->str, "both") == 0)
            bo.names = RULES_NAMES_AUTO;
        else { /* auto: what the scraped targets expose */
            bo.names = detect_vllm_names(q);
            *names_auto = true;
        }
        *names_used = bo.names;
        im_buf_t b;
        im_buf_init(&b, 0);
        rules_builtin_yaml(&bo, &b);
        rules_errs_t errs = {0};
        rules_file_t *f = NULL;
        if (rules_file_parse(RULES_BUILTIN_FILE, b.data, b.len, &f, &errs) == IM_OK) {
            files = im_realloc(files, (n + 1) * sizeof *files);
            files[n++] = f;
        } else {
            for (size_t e = 0; e < errs.n; e++)
                IM_ERROR("Built-in rules failed to load", "err=%s", im_logq(errs.v[e]));
        }
        rules_errs_free(&errs);
        im_buf_free(&b);
    }
    *out = files;
    *nout = n;
    return ok;
}

static void *loop(void *arg)
{
    run_rules_t *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        if (r->stop) {
            pthread_mutex_unlock(&r->mu);
            break;
        }
        int64_t now = im_now_ms();
        /* r->mu guards cfg/names against run_rules_reload */
        if (r->names_auto && now >= r->next_detect_ms) {
            /* the targets' vLLM version may show only now: regenerate the
             * built-ins for the names they expose (alert state is kept) */
            r->next_detect_ms = now + 15 * IM_MS_PER_SECOND;
            if (detect_vllm_names(r->q) != r->names) {
                rules_file_t **files = NULL;
                size_t n = 0;
                bool aut;
                if (load_rules(r->cfg, r->q, &files, &n, &r->names, &aut)) {
                    rules_manager_set_files(r->m, files, n);
                    IM_INFO("Built-in rules regenerated for the vLLM metric names seen", NULL);
                } else {
                    for (size_t i = 0; i < n; i++) rules_file_free(files[i]);
                }
                im_free(files);
            }
        }
        pthread_mutex_unlock(&r->mu);
        (void)rules_manager_tick(r->m, now);
        int64_t wait = rules_manager_next_ms(r->m, im_now_ms());
        if (wait > 200) wait = 200;
        if (wait < 1) wait = 1;
        struct timespec ts = {wait / 1000, (wait % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static im_rc hook_rules(void *ud, const char *type, im_buf_t *out)
{
    run_rules_t *r = ud;
    return rules_manager_rules_json(r->m, type && type[0] ? type : NULL, out);
}

static im_rc hook_alerts(void *ud, im_buf_t *out)
{
    run_rules_t *r = ud;
    return rules_manager_alerts_json(r->m, out);
}

static void metrics_hook(void *ud, im_buf_t *out)
{
    run_rules_t *r = ud;
    rules_stats_t s;
    rules_manager_stats(r->m, &s);
    (void)im_buf_printf(out,
                        "# HELP prometheus_rule_evaluations_total The total number of rule "
                        "evaluations.\n# TYPE prometheus_rule_evaluations_total counter\n"
                        "prometheus_rule_evaluations_total %" PRIu64 "\n"
                        "# HELP prometheus_rule_evaluation_failures_total The total number of rule "
                        "evaluation failures.\n# TYPE prometheus_rule_evaluation_failures_total "
                        "counter\nprometheus_rule_evaluation_failures_total %" PRIu64 "\n"
                        "# HELP prometheus_rule_group_iterations_missed_total The total number of "
                        "rule group evaluations missed due to slow rule group evaluation.\n"
                        "# TYPE prometheus_rule_group_iterations_missed_total counter\n"
                        "prometheus_rule_group_iterations_missed_total %" PRIu64 "\n"
                        "# HELP prometheus_template_text_expansion_failures_total The total "
                        "number of template text expansion failures.\n"
                        "# TYPE prometheus_template_text_expansion_failures_total counter\n"
                        "prometheus_template_text_expansion_failures_total %" PRIu64 "\n",
                        s.evaluations, s.evaluation_failures, s.iterations_missed,
                        s.template_failures);
    notify_metrics_text(r->notify, out);
}

run_rules_t *run_rules_start(const scrape_config_t *cfg, tsdb_t *db, promql_engine_t *eng,
                             http_server_t *http, const run_rules_opts_t *o)
{
    run_rules_opts_t none;
    memset(&none, 0, sizeof none);
    if (!o) o = &none;
    const char *external_url = o->external_url;
    run_rules_t *r = im_calloc(1, sizeof *r);
    r->db = db;
    r->eng = eng;
    r->q = tsdb_queryable(db);
    r->ext_labels = im_labels_ref(cfg->external_labels ? cfg->external_labels : im_labels_empty());
    if (external_url) {
        r->external_url = im_strdup(external_url);
    } else {
        char hn[256] = "localhost";
        (void)gethostname(hn, sizeof hn - 1);
        im_buf_t b;
        im_buf_init(&b, 0);
        (void)im_buf_printf(&b, "http://%s:%u", hn,
                            (unsigned)(http ? http_server_port(http) : 9470));
        r->external_url = im_buf_steal(&b, NULL);
    }
    pthread_mutex_init(&r->mu, NULL);
    notify_config_t nc;
    im_err_t err;
    im_err_clear(&err);
    if (notify_config_parse(cfg->alerting, &nc, &err) != IM_OK) {
        IM_ERROR("Invalid alerting configuration, not sending alerts", "err=%s", im_logq(err.msg));
        memset(&nc, 0, sizeof nc);
    }
    notify_opts_t no = {.external_labels = r->ext_labels,
                        .queue_capacity = o->notify_queue_capacity};
    r->notify = notify_new(&no, &nc);
    rules_opts_t ro = {.engine = eng,
                       .storage = {r->q, st_append, st_commit, r},
                       .eval_interval_ms = cfg->evaluation_interval_ms,
                       .external_labels = r->ext_labels,
                       .external_url = r->external_url,
                       .restore_for_state = true,
                       .outage_tolerance_ms = o->outage_tolerance_ms,
                       .grace_period_ms = o->grace_period_ms,
                       .resend_delay_ms = o->resend_delay_ms,
                       .notify = notify_send,
                       .notify_ctx = r->notify};
    r->m = rules_manager_new(&ro);
    rules_file_t **files = NULL;
    size_t n = 0;
    r->cfg = scrape_config_ref((scrape_config_t *)cfg);
    (void)load_rules(cfg, r->q, &files, &n, &r->names, &r->names_auto);
    r->next_detect_ms = im_now_ms() + 15 * IM_MS_PER_SECOND;
    rules_manager_set_files(r->m, files, n);
    im_free(files);
    IM_INFO("Rule manager started", "groups=%zu external_url=%s", rules_manager_ngroups(r->m),
            im_logq(r->external_url));
    if (http) {
        http_rules_hook_t h = {hook_rules, hook_alerts, r};
        http_server_set_rules_hook(http, &h);
        http_server_add_metrics_hook(http, metrics_hook, r);
    }
    pthread_create(&r->thread, NULL, loop, r);
    return r;
}

void run_rules_reload(run_rules_t *r, const scrape_config_t *cfg)
{
    if (!r) return;
    rules_file_t **files = NULL;
    size_t n = 0;
    rules_names_t names;
    bool aut;
    pthread_mutex_lock(&r->mu);
    if (r->stop) {
        pthread_mutex_unlock(&r->mu);
        return;
    }
    if (!load_rules(cfg, r->q, &files, &n, &names, &aut)) {
        IM_ERROR("Keeping the previous rules: a rule file did not load", NULL);
        for (size_t i = 0; i < n; i++) rules_file_free(files[i]);
        im_free(files);
    } else {
        rules_manager_set_files(r->m, files, n);
        im_free(files);
        r->names = names;
        r->names_auto = aut;
        scrape_config_t *old = r->cfg;
        r->cfg = scrape_config_ref((scrape_config_t *)cfg);
        scrape_config_free(old);
    }
    pthread_mutex_unlock(&r->mu);
    notify_config_t nc;
    im_err_t err;
    if (notify_config_parse(cfg->alerting, &nc, &err) == IM_OK)
        notify_set_config(r->notify, &nc);
    else
        IM_ERROR("Keeping the previous alerting configuration", "err=%s", im_logq(err.msg));
}

void run_rules_stop(run_rules_t *r)
{
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    (void)notify_flush(r->notify, 2000);
    notify_free(r->notify);
    rules_manager_free(r->m);
    if (r->app) tsdb_appender_rollback(r->app);
    if (r->q) r->q->vt->close(r->q);
    im_labels_unref(r->ext_labels);
    im_free(r->external_url);
    scrape_config_free(r->cfg);
    pthread_mutex_destroy(&r->mu);
    im_free(r);
}
