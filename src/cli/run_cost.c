/* run_cost.c — the cost endpoint of `infermon run` (see run_cost.h). The
 * parameters are those of `infermon cost` (llm_cost_params_parse); the data is
 * the JSON `infermon cost --output json` prints. */
#include "util/base.h"

#include <string.h>

#include "cli/run_cost.h"
#include "llm/cost.h"
#include "util/timeutil.h"

struct run_cost {
    query_backend_t *backend; /* borrowed or local_owned */
    query_backend_t *local_owned;
    pthread_mutex_t *mu;
    scrape_config_t *const *cfg;
};

static const char *cost_http(void *ud, http_param_fn param, const void *req, im_buf_t *out)
{
    run_cost_t *rc_ = ud;
    llm_cost_params_t p = {.from = param(req, "from"),
                           .to = param(req, "to"),
                           .range = param(req, "range"),
                           .month = param(req, "month"),
                           .step = param(req, "step"),
                           .by = param(req, "by"),
                           .team = param(req, "team")};
    llm_cost_opts_t o;
    memset(&o, 0, sizeof o);
    im_err_t err;
    im_err_clear(&err);
    if (llm_cost_params_parse(&p, im_now_ms(), false, &o, &err) != IM_OK) {
        (void)im_buf_puts(out, err.msg);
        return "bad_data";
    }
    cfg_llm_cost_t cost;
    pthread_mutex_lock(rc_->mu);
    cfg_llm_cost_copy(&cost, &(*rc_->cfg)->llm.cost); /* outlives a reload */
    pthread_mutex_unlock(rc_->mu);
    o.cfg = &cost;
    llm_cost_report_t rep;
    im_rc rc = llm_cost_compute(rc_->backend, &o, &rep, &err);
    const char *et = NULL;
    if (rc != IM_OK) {
        (void)im_buf_puts(out, err.msg);
        et = rc == IM_EINVAL || rc == IM_ELIMIT ? "bad_data"
             : rc == IM_ENOTFOUND               ? "not_found"
             : rc == IM_ETIMEOUT                ? "timeout"
                                                : "unavailable";
    } else {
        llm_cost_report_json(&rep, out);
        if (out->len && out->data[out->len - 1] == '\n') out->data[--out->len] = '\0';
    }
    llm_cost_report_free(&rep);
    cfg_llm_cost_free(&cost);
    return et;
}

run_cost_t *run_cost_start(http_server_t *http, storage_t *storage, promql_engine_t *eng,
                           query_backend_t *backend, pthread_mutex_t *mu,
                           scrape_config_t *const *cfg)
{
    run_cost_t *c = im_calloc(1, sizeof *c);
    c->mu = mu;
    c->cfg = cfg;
    if (!backend) backend = c->local_owned = query_local_new(storage, eng);
    c->backend = backend;
    http_server_set_cost(http, cost_http, c);
    return c;
}

void run_cost_stop(run_cost_t *c)
{
    if (!c) return;
    query_backend_free(c->local_owned);
    im_free(c);
}
