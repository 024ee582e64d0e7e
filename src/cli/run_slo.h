/* run_slo.h — `infermon run`'s SLOs: the check of llm.slos at (re)load (the
 * fields, the windows fit the retention); their resolution against the
 * daemon's own store (or its --query.backend-url): the `le` bounds as
 * scraped, the catalog's until the histogram has series (then re-resolved
 * every 15 s, else every --llm.slo-resolve-interval and at reloads); the SLO
 * rules as a rule
 * generator for the rule runner (reloaded when the resolution changes them);
 * and GET /api/v1/llm/slos, the status of llm/slo.h with each SLO's "bounds"
 * and, for an SLO that makes no rules, its "error" (docs/slo.md). */
#ifndef IM_CLI_RUN_SLO_H
#define IM_CLI_RUN_SLO_H

#include <pthread.h>

#include "config/config.h"
#include "http/server.h"
#include "promql/promql.h"
#include "query/query.h"
#include "rules/rules.h"
#include "storage/storage.h"

typedef struct run_slo run_slo_t;

/* IM_EINVAL naming the field when an SLO of cfg cannot be made into rules
 * whatever the store holds, or its window is longer than retention_ms (0:
 * not checked). A threshold that is no bound of the catalog's layout passes:
 * the live bounds decide. */
im_rc run_slo_validate(const scrape_config_t *cfg, int64_t retention_ms, im_err_t *err);

/* As run_llm_start (backend NULL: local over storage and eng); resolves
 * the SLOs of cfg (a reference is kept) now, then every live_ms once all are
 * live (0: a minute), every 15 s (or live_ms when shorter) while one is on
 * the catalog's bounds. With a backend (--query.backend-url) no rule runs:
 * a warning says the SLO alerts are not evaluated here. */
run_slo_t *run_slo_start(http_server_t *http, storage_t *storage, promql_engine_t *eng,
                         query_backend_t *backend, scrape_config_t *cfg, int64_t live_ms);
/* A reloaded configuration: its SLOs are resolved now (NULL s is fine). */
void run_slo_set_config(run_slo_t *s, scrape_config_t *cfg);
/* Wraps *gen so that it also loads the SLO rules of s's current resolution
 * and says `changed` when a re-resolution (due at each check) changed them.
 * s must outlive the rule runner. */
void run_slo_rules_generator(run_slo_t *s, rules_generator_t *gen);
void run_slo_stop(run_slo_t *s); /* NULL is fine */

#endif
