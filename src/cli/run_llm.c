/* run_llm.c — the doctor and cost endpoints of `infermon run` (see run_llm.h).
 * Their parameters are those of `infermon doctor` (llm_doctor_params_parse) and
 * `infermon cost` (llm_cost_params_parse); their data is the JSON that
 * `--output json` of those commands prints. */
#include "util/base.h"

#include <string.h>

#include "cli/run_llm.h"
#include "llm/cost.h"
#include "llm/doctor.h"
#include "util/timeutil.h"

struct run_llm {
    query_backend_t *backend; /* borrowed or local_owned */
    query_backend_t *local_owned;
    pthread_mutex_t *mu;
    scrape_config_t *const *cfg;
};

static const char *doctor_http(void *ud, const char *at, const char *window, const char *model,
                               im_buf_t *out)
{
    run_llm_t *rd = ud;
    im_err_t err;
    im_err_clear(&err);
    cfg_llm_t llm;
    pthread_mutex_lock(rd->mu);
    llm = (*rd->cfg)->llm; /* plain values: a copy outlives a reload */
    pthread_mutex_unlock(rd->mu);
    llm_doctor_params_t pa;
    if (llm_doctor_params_parse(at, window, model, im_now_ms(), &llm.doctor, &pa, &err) != IM_OK) {
        (void)im_buf_puts(out, err.msg);
        return "bad_data";
    }
    llm_doctor_opts_t o = {.backend = rd->backend,
                           .at_ms = pa.at_ms,
                           .window_ms = pa.window_ms,
                           .model = pa.model,
                           .cfg = &llm};
    llm_doctor_report_t rep;
    im_rc rc = llm_doctor_run(&o, &rep, &err);
    if (rc != IM_OK) {
        (void)im_buf_puts(out, err.msg);
        return rc == IM_EINVAL || rc == IM_ELIMIT ? "bad_data"
               : rc == IM_ETIMEOUT                ? "timeout"
                                                  : "unavailable";
    }
    llm_doctor_write_json(&rep, out);
    llm_doctor_report_free(&rep);
    return NULL;
}

static const char *cost_http(void *ud, http_param_fn param, const void *req, im_buf_t *out)
{
    run_llm_t *rc_ = ud;
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

run_llm_t *run_llm_start(http_server_t *http, storage_t *storage, promql_engine_t *eng,
                         query_backend_t *backend, pthread_mutex_t *mu, scrape_config_t *const *cfg)
{
    run_llm_t *l = im_calloc(1, sizeof *l);
    l->mu = mu;
    l->cfg = cfg;
    if (!backend) backend = l->local_owned = query_local_new(storage, eng);
    l->backend = backend;
    http_server_set_doctor(http, doctor_http, l);
    http_server_set_cost(http, cost_http, l);
    return l;
}

void run_llm_stop(run_llm_t *l)
{
    if (!l) return;
    query_backend_free(l->local_owned);
    im_free(l);
}
