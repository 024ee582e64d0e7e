/* run_doctor.h — `infermon run`'s GET /api/v1/llm/doctor: the diagnosis of
 * llm/doctor.h over the daemon's own store (or its --query.backend-url), with
 * the thresholds of the loaded configuration's llm: section. */
#ifndef IM_CLI_RUN_DOCTOR_H
#define IM_CLI_RUN_DOCTOR_H

#include <pthread.h>

#include "config/config.h"
#include "http/server.h"
#include "promql/promql.h"
#include "query/query.h"
#include "storage/storage.h"

typedef struct run_doctor run_doctor_t;

/* backend NULL: a local backend over storage and eng (all borrowed; they and
 * *cfg, read under mu, must outlive the hook: call run_doctor_stop after the
 * HTTP server stopped). */
run_doctor_t *run_doctor_start(http_server_t *http, storage_t *storage, promql_engine_t *eng,
                               query_backend_t *backend, pthread_mutex_t *mu,
                               scrape_config_t *const *cfg);
void run_doctor_stop(run_doctor_t *d); /* NULL is fine */

#endif
