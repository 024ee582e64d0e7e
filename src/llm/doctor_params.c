/* doctor_params.c — the parameters of a diagnosis as an HTTP client gives them
 * (GET /api/v1/llm/doctor?at=&window=&model=; see doctor.h). */
#include "util/base.h"

#include <string.h>

#include "llm/doctor.h"
#include "util/timeutil.h"

im_rc llm_doctor_params_parse(const char *at, const char *window, const char *model, int64_t now_ms,
                              const cfg_llm_doctor_t *dc, llm_doctor_params_t *out, im_err_t *err)
{
    memset(out, 0, sizeof *out);
    int64_t at_ms = now_ms, window_ms = 0;
    im_err_t e;
    im_err_clear(&e);
    if (at && *at && im_time_parse(at, strlen(at), &at_ms, &e) != IM_OK)
        return im_err_set(err, IM_EINVAL, "invalid parameter \"at\": %s", e.msg);
    if (at_ms < 0) return im_err_set(err, IM_EINVAL, "invalid parameter \"at\": before 1970");
    if (window && *window &&
        (im_duration_parse(window, strlen(window), &window_ms, NULL) != IM_OK || window_ms <= 0))
        return im_err_set(err, IM_EINVAL,
                          "invalid parameter \"window\": a positive duration such as 30m");
    at_ms -= at_ms % 1000;
    int64_t w = window_ms > 0 ? window_ms : dc->window_ms;
    int64_t step = dc->step_ms > 0 ? dc->step_ms : w / 60;
    if (step < 1000) step = 1000;
    step -= step % 1000;
    if (w / step + 1 > LLM_DOCTOR_MAX_POINTS)
        return im_err_set(err, IM_EINVAL,
                          "invalid parameter \"window\": %s at a %lld s step is over %d points "
                          "(raise llm.doctor.step or shorten the window)",
                          window, (long long)(step / 1000), LLM_DOCTOR_MAX_POINTS);
    if (w > at_ms)
        return im_err_set(err, IM_EINVAL,
                          "invalid parameter \"window\": it reaches before 1970 from \"at\"");
    out->at_ms = at_ms;
    out->window_ms = window_ms;
    out->model = model && *model ? model : NULL;
    return IM_OK;
}
