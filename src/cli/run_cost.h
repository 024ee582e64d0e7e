/* run_cost.h — `infermon run`'s GET /api/v1/llm/cost: the cost report of
 * llm/cost.h over the daemon's own store (or its --query.backend-url), with
 * the prices and teams of the loaded configuration's llm.cost section. */
#ifndef IM_CLI_RUN_COST_H
#define IM_CLI_RUN_COST_H

#include <pthread.h>

#include "config/config.h"
#include "http/server.h"
#include "promql/promql.h"
#include "query/query.h"
#include "storage/storage.h"

typedef struct run_cost run_cost_t;

/* As run_doctor_start (cli/run_doctor.h): backend NULL = a local backend over
 * storage and eng; *cfg is read under mu; stop after the HTTP server. */
run_cost_t *run_cost_start(http_server_t *http, storage_t *storage, promql_engine_t *eng,
                           query_backend_t *backend, pthread_mutex_t *mu,
                           scrape_config_t *const *cfg);
void run_cost_stop(run_cost_t *c); /* NULL is fine */

#endif
