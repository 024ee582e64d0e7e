/* run_doctor.c — the doctor endpoint of `infermon run` (see run_doctor.h). */
#include "util/base.h"

#include <string.h>

#include "cli/run_doctor.h"
#include "llm/doctor.h"
#include "util/timeutil.h"

struct run_doctor {
    query_backend_t *backend; /* borrowed or local_owned */
    query_backend_t *local_owned;
    pthread_mutex_t *mu;
    scrape_config_t *const *cfg;
};

static const char *doctor_http(void *ud, const char *at, const char *window, const char *model,
                               im_buf_t *out)
{
    run_doctor_t *rd = ud;
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

run_doctor_t *run_doctor_start(http_server_t *http, storage_t *storage, promql_engine_t *eng,
                               query_backend_t *backend, pthread_mutex_t *mu,
                               scrape_config_t *const *cfg)
{
    run_doctor_t *rd = im_calloc(1, sizeof *rd);
    rd->mu = mu;
    rd->cfg = cfg;
    if (!backend) backend = rd->local_owned = query_local_new(storage, eng);
    rd->backend = backend;
    http_server_set_doctor(http, doctor_http, rd);
    return rd;
}

void run_doctor_stop(run_doctor_t *rd)
{
    if (!rd) return;
    query_backend_free(rd->local_owned);
    im_free(rd);
}
