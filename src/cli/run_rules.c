/* run_rules.c — wiring of the daemon's rules and alerting (see run_rules.h):
 * the rule runner (rules/rules.h, rules_manager_start) over the store, the
 * built-in LLM rules from llm/builtin.h with thresholds from `llm:`, the
 * notifier, and the HTTP hooks. */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/run_rules.h"
#include "llm/builtin.h"
#include "llm/cost.h"
#include "llm/slo.h"
#include "notify/notify.h"
#include "rules/rules.h"
#include "util/log.h"

struct run_rules {
    rules_manager_t *m;
    notify_t *notify;
    const im_labels_t *ext_labels;
    char *external_url;
    run_slo_t *slo; /* borrowed; NULL = the SLOs from the catalog */
};

/* The rule runner's view of cfg: rule_files (the configuration resolved them
 * against its own directory at load), and the built-in rules (llm.builtin_rules;
 * default: when there are no rule files) as a generator. */
static rules_run_config_t run_config(const scrape_config_t *cfg, run_slo_t *slo)
{
    rules_run_config_t rc = {
        .base_dir = ".", .rule_files = cfg->rule_files, .nrule_files = cfg->nrule_files};
    const cfg_llm_t *llm = &cfg->llm;
    bool builtin = llm->builtin_rules_set ? llm->builtin_rules : cfg->nrule_files == 0;
    if (builtin) {
        llm_builtin_opts_t bo = {
            .ttft_p95_target_seconds = llm->ttft_p95_target_seconds,
            .failure_ratio = llm->failure_ratio,
            .queue_waiting_threshold = llm->queue_waiting_threshold,
            .kv_cache_threshold = llm->kv_cache_threshold,
        };
        bool detect = false;
        if (llm->vllm_names == CFG_LLM_NAMES_OLD)
            bo.names = LLM_NAMES_OLD;
        else if (llm->vllm_names == CFG_LLM_NAMES_NEW)
            bo.names = LLM_NAMES_NEW;
        else if (llm->vllm_names == CFG_LLM_NAMES_BOTH)
            bo.names = LLM_NAMES_AUTO;
        else /* auto: what the scraped targets expose */
            detect = true;
        llm_builtin_generator(&bo, detect, &rc.gen);
    }
    /* llm.cost.rules: the cost recording rules after the built-in ones */
    if (llm->cost.rules) llm_cost_rules_generator(&llm->cost, &rc.gen);
    /* llm.slos: the SLO rules, resolved against the store (run_slo.h) */
    if (llm->slo.n && slo) {
        run_slo_rules_generator(slo, &rc.gen);
    } else if (llm->slo.n) {
        llm_slo_plans_t p;
        llm_slo_resolve_each(&llm->slo, NULL, &p);
        for (size_t i = 0; i < p.n; i++)
            if (p.v[i].error)
                IM_ERROR("SLO refused: it makes no rules", "slo=%s err=%s",
                         im_logq(p.v[i].slo->name), im_logq(p.v[i].error));
        llm_slo_rules_generator(&p, &rc.gen);
        llm_slo_plans_free(&p);
    }
    return rc;
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
    rules_manager_metrics_text(r->m, out);
    notify_metrics_text(r->notify, out);
}

run_rules_t *run_rules_start(const scrape_config_t *cfg, storage_t *store, promql_engine_t *eng,
                             http_server_t *http, const run_rules_opts_t *o)
{
    run_rules_opts_t none;
    memset(&none, 0, sizeof none);
    if (!o) o = &none;
    const char *external_url = o->external_url;
    run_rules_t *r = im_calloc(1, sizeof *r);
    r->slo = o->slo;
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
    notify_opts_t no = {.external_labels = r->ext_labels,
                        .queue_capacity = o->notify_queue_capacity};
    r->notify = notify_new(&no, cfg->alerting);
    rules_opts_t ro = {.engine = eng,
                       .eval_interval_ms = cfg->evaluation_interval_ms,
                       .external_labels = r->ext_labels,
                       .external_url = r->external_url,
                       .restore_for_state = true,
                       .outage_tolerance_ms = o->outage_tolerance_ms,
                       .grace_period_ms = o->grace_period_ms,
                       .resend_delay_ms = o->resend_delay_ms,
                       .notify = notify_send,
                       .notify_ctx = r->notify};
    rules_run_config_t rc = run_config(cfg, r->slo);
    r->m = rules_manager_start(&ro, store, &rc);
    if (http) {
        http_rules_hook_t h = {hook_rules, hook_alerts, r};
        http_server_set_rules_hook(http, &h);
        http_server_add_metrics_hook(http, metrics_hook, r);
    }
    return r;
}

void run_rules_reload(run_rules_t *r, const scrape_config_t *cfg)
{
    if (!r) return;
    rules_run_config_t rc = run_config(cfg, r->slo);
    if (!rules_manager_reload(r->m, &rc))
        IM_ERROR("Keeping the previous rules: a rule file did not load", NULL);
    notify_set_config(r->notify, cfg->alerting);
}

void run_rules_stop(run_rules_t *r)
{
    if (!r) return;
    rules_manager_stop(r->m); /* no evaluation, hence no notification, after this */
    (void)notify_flush(r->notify, 2000);
    notify_free(r->notify);
    im_labels_unref(r->ext_labels);
    im_free(r->external_url);
    im_free(r);
}
