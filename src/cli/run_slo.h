/* run_slo.h — `infermon run`'s SLOs: the check of llm.slos at (re)load (the
 * rules resolve offline, the windows fit the retention) and GET
 * /api/v1/llm/slos, the status of llm/slo.h over the daemon's own store (or
 * its --query.backend-url) with the loaded configuration's SLOs. */
#ifndef IM_CLI_RUN_SLO_H
#define IM_CLI_RUN_SLO_H

#include <pthread.h>

#include "config/config.h"
#include "http/server.h"
#include "promql/promql.h"
#include "query/query.h"
#include "storage/storage.h"

typedef struct run_slo run_slo_t;

/* IM_EINVAL/IM_ENOTFOUND naming the field when an SLO of cfg cannot be made
 * into rules or its window is longer than retention_ms (0: not checked). */
im_rc run_slo_validate(const scrape_config_t *cfg, int64_t retention_ms, im_err_t *err);

/* As run_doctor_start (backend NULL: local over storage and eng). */
run_slo_t *run_slo_start(http_server_t *http, storage_t *storage, promql_engine_t *eng,
                         query_backend_t *backend, pthread_mutex_t *mu,
                         scrape_config_t *const *cfg);
void run_slo_stop(run_slo_t *s); /* NULL is fine */

#endif
