/* run_rules.h — wiring of rules and alerting inside the daemon (`infermon
 * run`): starts the rule runner (rules/rules.h, rules_manager_start) on the
 * config's rule_files and the built-in LLM rules (llm/builtin.h,
 * llm.builtin_rules) against the store, sends alerts to the configured
 * Alertmanagers, answers /api/v1/rules and /api/v1/alerts through the HTTP
 * server's hook and adds rule and notifier metrics to /metrics.
 * Called by run.c: start after the HTTP server, reload with the config, stop
 * before the store closes. */
#ifndef IM_CLI_RUN_RULES_H
#define IM_CLI_RUN_RULES_H

#include "cli/run_slo.h"
#include "http/server.h"
#include "promql/promql.h"
#include "config/config.h"
#include "storage/storage.h"

typedef struct run_rules run_rules_t;

/* The flags Prometheus has for rules and notifications; 0/NULL = its default. */
typedef struct run_rules_opts {
    const char *external_url;     /* --web.external-url; NULL = http://<hostname>:<port> */
    int64_t outage_tolerance_ms;  /* --rules.alert.for-outage-tolerance (1h) */
    int64_t grace_period_ms;      /* --rules.alert.for-grace-period (10m) */
    int64_t resend_delay_ms;      /* --rules.alert.resend-delay (1m) */
    size_t notify_queue_capacity; /* --alertmanager.notification-queue-capacity (10000) */
    run_slo_t *slo; /* llm.slos resolved live (borrowed, outlives the rules); NULL = catalog */
} run_rules_opts_t;

/* Never fails: problems with rule files are logged and the rest runs. o may be NULL. */
run_rules_t *run_rules_start(const scrape_config_t *cfg, storage_t *store, promql_engine_t *eng,
                             http_server_t *http, const run_rules_opts_t *o);
/* Applies a new configuration (rule files, alerting, llm thresholds); keeps the
 * previous rules if a rule file does not load. */
void run_rules_reload(run_rules_t *r, const scrape_config_t *cfg);
void run_rules_stop(run_rules_t *r);

#endif
