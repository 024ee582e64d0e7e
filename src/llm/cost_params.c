/* cost_params.c — the period and grouping of a cost report from text (see
 * cost.h): the flags of `infermon cost` and the query parameters of GET
 * /api/v1/llm/cost share this, so both accept and refuse the same values. */
#include "util/base.h"

#include <stdio.h>

#include "llm/cost.h"
#include "util/timeutil.h"

/* "--from" for flags, "parameter \"from\"" for the API. */
static const char *pname(char *b, size_t cap, bool flags, const char *name)
{
    snprintf(b, cap, flags ? "--%s" : "parameter \"%s\"", name);
    return b;
}

/* YYYY-MM: that calendar month in UTC. */
static bool month_period(const char *s, int64_t *from, int64_t *to)
{
    if (strlen(s) != 7 || s[4] != '-') return false;
    for (int i = 0; i < 7; i++)
        if (i != 4 && (s[i] < '0' || s[i] > '9')) return false;
    int y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    int m = (s[5] - '0') * 10 + (s[6] - '0');
    if (m < 1 || m > 12 || y < 1970) return false;
    char a[40], b[40];
    snprintf(a, sizeof a, "%04d-%02d-01T00:00:00Z", y, m);
    snprintf(b, sizeof b, "%04d-%02d-01T00:00:00Z", m == 12 ? y + 1 : y, m == 12 ? 1 : m + 1);
    return im_time_parse_rfc3339(a, strlen(a), from) == IM_OK &&
           im_time_parse_rfc3339(b, strlen(b), to) == IM_OK;
}

static bool given(const char *s)
{
    return s && *s;
}

im_rc llm_cost_params_parse(const llm_cost_params_t *p, int64_t now_ms, bool flags,
                            llm_cost_opts_t *o, im_err_t *err)
{
    char n[48];
    im_err_t e;
    im_err_clear(&e);
    o->by = LLM_COST_BY_TEAM;
    if (given(p->by)) {
        o->by = llm_cost_by_parse(p->by);
        if (o->by == LLM_COST_NBY)
            return im_err_set(err, IM_EINVAL,
                              "%s must be team, namespace, model, cluster_queue or flavor, not "
                              "\"%.64s\"",
                              pname(n, sizeof n, flags, "by"), p->by);
    }
    o->group = given(p->team) ? p->team : NULL;
    if ((given(p->from) || given(p->to)) + given(p->range) + given(p->month) > 1 &&
        !(given(p->to) && given(p->range) && !given(p->from)))
        return im_err_set(err, IM_EINVAL,
                          flags ? "give --from/--to, --range (with an optional --to) or --month"
                                : "give from and to, range (with an optional to) or month");
    if (given(p->month)) {
        if (!month_period(p->month, &o->from_ms, &o->to_ms))
            return im_err_set(err, IM_EINVAL, "%s: \"%.64s\" is not a month such as 2026-11",
                              pname(n, sizeof n, flags, "month"), p->month);
    } else {
        o->to_ms = now_ms - now_ms % 1000;
        if (given(p->to) && im_time_parse(p->to, strlen(p->to), &o->to_ms, &e) != IM_OK)
            return im_err_set(err, IM_EINVAL, "%s: %s", pname(n, sizeof n, flags, "to"), e.msg);
        if (given(p->from)) {
            if (!given(p->to))
                return im_err_set(err, IM_EINVAL, "%s needs %s", pname(n, sizeof n, flags, "from"),
                                  flags ? "--to" : "parameter \"to\"");
            if (im_time_parse(p->from, strlen(p->from), &o->from_ms, &e) != IM_OK)
                return im_err_set(err, IM_EINVAL, "%s: %s", pname(n, sizeof n, flags, "from"),
                                  e.msg);
        } else {
            int64_t r = 24 * 3600 * 1000LL;
            if (given(p->range) &&
                (im_duration_parse(p->range, strlen(p->range), &r, NULL) != IM_OK || r <= 0))
                return im_err_set(err, IM_EINVAL,
                                  "%s: \"%.64s\" is not a positive duration such as 30d",
                                  pname(n, sizeof n, flags, "range"), p->range);
            if (r > o->to_ms)
                return im_err_set(err, IM_EINVAL, "%s: the period would start before 1970",
                                  pname(n, sizeof n, flags, "range"));
            o->from_ms = o->to_ms - r;
        }
    }
    if (o->from_ms < 0 || o->to_ms < 0)
        return im_err_set(err, IM_EINVAL, "the period must be after 1970-01-01");
    if (o->to_ms <= o->from_ms)
        return im_err_set(err, IM_EINVAL, "the period is empty: %s must be after %s",
                          flags ? "--to" : "to", flags ? "--from" : "from");
    o->step_ms = 0;
    if (given(p->step) &&
        (im_duration_parse(p->step, strlen(p->step), &o->step_ms, NULL) != IM_OK ||
         o->step_ms <= 0))
        return im_err_set(err, IM_EINVAL, "%s: \"%.64s\" is not a positive duration such as 15s",
                          pname(n, sizeof n, flags, "step"), p->step);
    return IM_OK;
}
