/* run_llm.h — `infermon run`'s LLM report endpoints over the daemon's own store
 * (or its --query.backend-url): GET /api/v1/llm/doctor, the diagnosis of
 * llm/doctor.h with the thresholds of the loaded configuration's llm: section,
 * and GET /api/v1/llm/cost, the cost report of llm/cost.h with the prices and
 * teams of its llm.cost section. */
#ifndef IM_CLI_RUN_LLM_H
#define IM_CLI_RUN_LLM_H

#include <pthread.h>

#include "config/config.h"
#include "http/server.h"
#include "promql/promql.h"
#include "query/query.h"
#include "storage/storage.h"

typedef struct run_llm run_llm_t;

/* Installs both endpoints. backend NULL: a local backend over storage and eng
 * (all borrowed; they and *cfg, read under mu, must outlive the hooks: call
 * run_llm_stop after the HTTP server stopped). */
run_llm_t *run_llm_start(http_server_t *http, storage_t *storage, promql_engine_t *eng,
                         query_backend_t *backend, pthread_mutex_t *mu,
                         scrape_config_t *const *cfg);
void run_llm_stop(run_llm_t *l); /* NULL is fine */

#endif
