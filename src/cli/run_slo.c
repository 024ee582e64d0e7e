/* run_slo.c — the SLOs of `infermon run` (see run_slo.h). */
#include "util/base.h"

#include <string.h>

#include "cli/run_slo.h"
#include "llm/slo.h"
#include "util/timeutil.h"

struct run_slo {
    query_backend_t *backend; /* borrowed or local_owned */
    query_backend_t *local_owned;
    pthread_mutex_t *mu;
    scrape_config_t *const *cfg;
};

im_rc run_slo_validate(const scrape_config_t *cfg, int64_t retention_ms, im_err_t *err)
{
    const cfg_llm_slo_t *set = &cfg->llm.slo;
    if (!set->n) return IM_OK;
    im_rc rc = llm_slo_check_retention(set, retention_ms, "--storage.tsdb.retention.time", err);
    if (rc) return rc;
    llm_slo_plans_t p;
    rc = llm_slo_resolve(set, NULL, &p, err);
    llm_slo_plans_free(&p);
    return rc;
}

static const char *slos_http(void *ud, const char *at, const char *window, const char *model,
                             im_buf_t *out)
{
    (void)window;
    (void)model;
    run_slo_t *rs = ud;
    int64_t at_ms = im_now_ms();
    im_err_t err;
    im_err_clear(&err);
    if (at && im_time_parse(at, strlen(at), &at_ms, &err) != IM_OK) {
        (void)im_buf_printf(out, "invalid parameter \"at\": %s", err.msg);
        return "bad_data";
    }
    at_ms -= at_ms % 1000;
    pthread_mutex_lock(rs->mu);
    scrape_config_t *c = scrape_config_ref(*rs->cfg); /* outlives a reload */
    pthread_mutex_unlock(rs->mu);
    llm_slo_plans_t p;
    im_rc rc = llm_slo_resolve(&c->llm.slo, NULL, &p, &err);
    if (rc == IM_OK) rc = llm_slo_status_json(&p, rs->backend, at_ms, out, &err);
    llm_slo_plans_free(&p);
    scrape_config_free(c);
    if (rc != IM_OK) {
        im_buf_reset(out);
        (void)im_buf_puts(out, err.msg);
        return rc == IM_EINVAL || rc == IM_ENOTFOUND || rc == IM_ELIMIT ? "bad_data"
               : rc == IM_ETIMEOUT                                      ? "timeout"
                                                                        : "unavailable";
    }
    return NULL;
}

run_slo_t *run_slo_start(http_server_t *http, storage_t *storage, promql_engine_t *eng,
                         query_backend_t *backend, pthread_mutex_t *mu, scrape_config_t *const *cfg)
{
    run_slo_t *rs = im_calloc(1, sizeof *rs);
    rs->mu = mu;
    rs->cfg = cfg;
    if (!backend) backend = rs->local_owned = query_local_new(storage, eng);
    rs->backend = backend;
    http_server_set_slos(http, slos_http, rs);
    return rs;
}

void run_slo_stop(run_slo_t *rs)
{
    if (!rs) return;
    query_backend_free(rs->local_owned);
    im_free(rs);
}
