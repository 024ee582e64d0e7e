/* run_rules.h — rules and alerting inside the daemon (`infermon run`): loads
 * the config's rule_files (or the built-in LLM rules, llm.builtin_rules), runs
 * the rule manager on its own thread against the store, sends alerts to the
 * configured Alertmanagers, answers /api/v1/rules and /api/v1/alerts through
 * the HTTP server's hook and adds rule and notifier metrics to /metrics.
 * Called by run.c: start after the HTTP server, reload with the config, stop
 * before the store closes. */
#ifndef IM_CLI_RUN_RULES_H
#define IM_CLI_RUN_RULES_H

#include "http/server.h"
#include "promql/promql.h"
#include "scrape/config.h"
#include "tsdb/tsdb.h"

typedef struct run_rules run_rules_t;

/* external_url: NULL = http://<hostname>:<port>. Never fails: problems with
 * rule files are logged and the rest runs. */
run_rules_t *run_rules_start(const scrape_config_t *cfg, tsdb_t *db, promql_engine_t *eng,
                             http_server_t *http, const char *external_url);
/* Applies a new configuration (rule files, alerting, llm thresholds); keeps the
 * previous rules if a rule file does not load. */
void run_rules_reload(run_rules_t *r, const scrape_config_t *cfg);
void run_rules_stop(run_rules_t *r);

#endif
