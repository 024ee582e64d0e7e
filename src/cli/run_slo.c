/* run_slo.c — the SLOs of `infermon run` (see run_slo.h): the SLOs of the
 * loaded configuration resolved against the daemon's own store (or its
 * --query.backend-url), re-resolved on a timer and at reloads; the rule file
 * they make, handed to the rule runner by a generator; GET /api/v1/llm/slos.
 *
 * Invariants (lock held for all of them):
 *  1. plans are the resolution of cfg->llm.slo (llm_slo_resolve_each with
 *     the backend), yaml their rule file, and gen changes exactly when yaml
 *     does — so the generator reloads the rules only when they changed.
 *  2. next_ms is the time of the next re-resolution: catalog_ms (15 s, or
 *     live_ms when shorter) after the last one while an SLO is on the
 *     catalog's bounds (its histogram not scraped yet), live_ms
 *     (--llm.slo-resolve-interval, 1 minute by default) otherwise;
 *     run_slo_set_config re-resolves at once. */
#include "util/base.h"

#include <assert.h>
#include <string.h>

#include "cli/run_slo.h"
#include "llm/slo.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/timeutil.h"

#define RESOLVE_CATALOG_MS (15 * IM_MS_PER_SECOND)
#define RESOLVE_LIVE_MS    IM_MS_PER_MINUTE /* --llm.slo-resolve-interval's default */

struct run_slo {
    query_backend_t *backend; /* borrowed or local_owned */
    query_backend_t *local_owned;
    int64_t live_ms, catalog_ms; /* invariant 2 */
    bool warned_backend;         /* the backend-mode warning was logged */
    pthread_mutex_t lock;        /* the fields below */
    scrape_config_t *cfg;        /* owned reference: the SLOs of plans */
    llm_slo_plans_t plans;       /* of cfg->llm.slo; borrow cfg */
    char *yaml;                  /* owned: the rule file of plans */
    size_t len;
    uint64_t gen;        /* bumped when yaml changes */
    int64_t next_ms;     /* the next re-resolution */
    int64_t resolved_ms; /* the last one ("resolved_at" of GET /api/v1/llm/slos) */
};

im_rc run_slo_validate(const scrape_config_t *cfg, int64_t retention_ms, im_err_t *err)
{
    const cfg_llm_slo_t *set = &cfg->llm.slo;
    if (!set->n) return IM_OK;
    im_rc rc = llm_slo_check_retention(set, retention_ms, "--storage.tsdb.retention.time", err);
    if (rc) return rc;
    /* A threshold the catalog's layout lacks is left to the live bounds (the
     * engine may be configured with other buckets); everything else is final. */
    llm_slo_plans_t p;
    llm_slo_resolve_each(set, NULL, &p);
    for (size_t i = 0; i < p.n && !rc; i++)
        if (p.v[i].error && !p.v[i].bound_refused)
            rc = im_err_set(err, IM_EINVAL, "%s", p.v[i].error);
    llm_slo_plans_free(&p);
    return rc;
}

/* The plan of the SLO named name in p, or NULL. */
static const llm_slo_plan_t *plan_named(const llm_slo_plans_t *p, const char *name)
{
    for (size_t i = 0; p && i < p->n; i++)
        if (strcmp(p->v[i].slo->name, name) == 0) return &p->v[i];
    return NULL;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Logs what changed for each SLO since prev (NULL: the first resolution). */
static void log_changes(const llm_slo_plans_t *prev, const llm_slo_plans_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        const llm_slo_plan_t *pl = &p->v[i], *old = plan_named(prev, pl->slo->name);
        if (old && old->bounds == pl->bounds && same_str(old->error, pl->error) &&
            same_str(old->metric, pl->metric))
            continue;
        const char *name = pl->slo->name, *b = llm_slo_bounds_name(pl->bounds);
        if (!pl->error)
            IM_INFO("SLO resolved", "slo=%s bounds=%s metric=%s", im_logq(name),
                    im_logq(b ? b : "none"), im_logq(pl->metric ? pl->metric : ""));
        else if (pl->bounds == LLM_SLO_BOUNDS_CATALOG && pl->bound_refused)
            IM_WARN("SLO makes no rules until its histogram is scraped: the catalog's bucket "
                    "layout lacks its threshold",
                    "slo=%s err=%s", im_logq(name), im_logq(pl->error));
        else
            IM_ERROR("SLO refused: it makes no rules", "slo=%s bounds=%s err=%s", im_logq(name),
                     im_logq(b ? b : "none"), im_logq(pl->error));
    }
}

/* Re-resolves (lock held), see invariants 1 and 2; logs what changed since
 * the current plans (all of it when log_all), then frees them. */
static void resolve_locked(run_slo_t *rs, bool log_all)
{
    llm_slo_plans_t p;
    llm_slo_resolve_each(&rs->cfg->llm.slo, rs->backend, &p);
    log_changes(log_all ? NULL : &rs->plans, &p);
    bool catalog = false;
    for (size_t i = 0; i < p.n; i++) catalog |= p.v[i].bounds == LLM_SLO_BOUNDS_CATALOG;
    im_buf_t y;
    im_buf_init(&y, 0);
    if (p.n) llm_slo_plans_yaml(&p, LLM_SLO_RULEFILE, &y);
    size_t len = 0;
    char *yaml = im_buf_steal(&y, &len);
    /* the rule file is len bytes, not a C string (an empty one has no NUL) */
    bool same = yaml && rs->yaml && len == rs->len && memcmp(yaml, rs->yaml, len) == 0;
    if (!same) {
        if (rs->yaml) IM_INFO("The SLO rules changed: reloading them", NULL);
        im_free(rs->yaml);
        rs->yaml = yaml;
        rs->len = len;
        rs->gen++;
    } else {
        im_free(yaml);
    }
    llm_slo_plans_free(&rs->plans);
    rs->plans = p;
    rs->resolved_ms = im_now_ms();
    rs->next_ms = rs->resolved_ms + (catalog ? rs->catalog_ms : rs->live_ms);
}

static void refresh_due_locked(run_slo_t *rs)
{
    if (rs->cfg->llm.slo.n && im_now_ms() >= rs->next_ms) resolve_locked(rs, false);
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
    pthread_mutex_lock(&rs->lock);
    refresh_due_locked(rs);
    im_rc rc = llm_slo_status_json(&rs->plans, rs->backend, at_ms, out, &err);
    int64_t resolved_ms = rs->resolved_ms;
    pthread_mutex_unlock(&rs->lock);
    if (rc != IM_OK) {
        im_buf_reset(out);
        (void)im_buf_puts(out, err.msg);
        return rc == IM_EINVAL || rc == IM_ENOTFOUND || rc == IM_ELIMIT ? "bad_data"
               : rc == IM_ETIMEOUT                                      ? "timeout"
                                                                        : "unavailable";
    }
    /* {"slos":[...],"goodput":[...]} gets "resolved_at" (Unix seconds; null
     * before the first resolution, i.e. without SLOs) */
    assert(out->len && out->data[out->len - 1] == '}');
    out->len--;
    if (resolved_ms)
        (void)im_buf_printf(out, ",\"resolved_at\":%lld.%03lld}", (long long)(resolved_ms / 1000),
                            (long long)(resolved_ms % 1000));
    else
        (void)im_buf_puts(out, ",\"resolved_at\":null}");
    return NULL;
}

/* --query.backend-url: no rule runner, so the SLO alerts are not evaluated
 * here (once per daemon, when there are SLOs). */
static void warn_backend_locked(run_slo_t *rs)
{
    if (rs->local_owned || rs->warned_backend || !rs->cfg->llm.slo.n) return;
    rs->warned_backend = true;
    IM_WARN("SLO alerts are not evaluated in query backend mode: GET /api/v1/llm/slos measures "
            "the SLOs over the backend, but no rule runs here; load the SLO rules into the "
            "store's own ruler (infermon export rules --config FILE, or infermon slo generate "
            "--config.file FILE) to get the burn-rate alerts",
            "slos=%zu", rs->cfg->llm.slo.n);
}

run_slo_t *run_slo_start(http_server_t *http, storage_t *storage, promql_engine_t *eng,
                         query_backend_t *backend, scrape_config_t *cfg, int64_t live_ms)
{
    run_slo_t *rs = im_calloc(1, sizeof *rs);
    pthread_mutex_init(&rs->lock, NULL);
    if (!backend) backend = rs->local_owned = query_local_new(storage, eng);
    rs->backend = backend;
    rs->live_ms = live_ms > 0 ? live_ms : RESOLVE_LIVE_MS;
    rs->catalog_ms = rs->live_ms < RESOLVE_CATALOG_MS ? rs->live_ms : RESOLVE_CATALOG_MS;
    rs->cfg = scrape_config_ref(cfg);
    pthread_mutex_lock(&rs->lock);
    warn_backend_locked(rs);
    if (rs->cfg->llm.slo.n) resolve_locked(rs, true);
    pthread_mutex_unlock(&rs->lock);
    http_server_set_slos(http, slos_http, rs);
    return rs;
}

void run_slo_set_config(run_slo_t *rs, scrape_config_t *cfg)
{
    if (!rs) return;
    pthread_mutex_lock(&rs->lock);
    scrape_config_t *old = rs->cfg; /* the current plans borrow it until resolve_locked */
    rs->cfg = scrape_config_ref(cfg);
    warn_backend_locked(rs);
    resolve_locked(rs, false);
    scrape_config_free(old);
    pthread_mutex_unlock(&rs->lock);
}

void run_slo_stop(run_slo_t *rs)
{
    if (!rs) return;
    llm_slo_plans_free(&rs->plans);
    im_free(rs->yaml);
    scrape_config_free(rs->cfg);
    pthread_mutex_destroy(&rs->lock);
    query_backend_free(rs->local_owned);
    im_free(rs);
}

/* ---- The generator: the wrapped one's files, then the SLO rule file ---- */

#define SLO_RULES_FILE "<builtin:llm-slo>"

typedef struct gen {
    rules_generator_t inner;
    run_slo_t *rs;       /* borrowed: outlives the rule runner */
    uint64_t loaded_gen; /* the rs->gen of the last load */
} gen_t;

static bool gen_load(void *ctx, storage_queryable_t *sq, rules_file_t ***files, size_t *n)
{
    gen_t *g = ctx;
    bool ok = g->inner.load ? g->inner.load(g->inner.ctx, sq, files, n) : true;
    run_slo_t *rs = g->rs;
    pthread_mutex_lock(&rs->lock);
    char *yaml = rs->yaml ? im_strndup(rs->yaml, rs->len) : NULL;
    size_t len = rs->len;
    g->loaded_gen = rs->gen;
    pthread_mutex_unlock(&rs->lock);
    if (!yaml) return ok;
    rules_errs_t errs = {0};
    rules_file_t *f = NULL;
    if (rules_file_parse(SLO_RULES_FILE, yaml, len, &f, &errs) == IM_OK) {
        *files = im_realloc(*files, (*n + 1) * sizeof **files);
        (*files)[(*n)++] = f;
    } else {
        for (size_t e = 0; e < errs.n; e++)
            IM_ERROR("SLO rules failed to load", "err=%s", im_logq(errs.v[e]));
        ok = false;
    }
    rules_errs_free(&errs);
    im_free(yaml);
    return ok;
}

static bool gen_changed(void *ctx, storage_queryable_t *sq)
{
    gen_t *g = ctx;
    bool inner = g->inner.changed && g->inner.changed(g->inner.ctx, sq);
    pthread_mutex_lock(&g->rs->lock);
    refresh_due_locked(g->rs);
    bool ours = g->rs->gen != g->loaded_gen;
    pthread_mutex_unlock(&g->rs->lock);
    return inner || ours;
}

static void gen_free(void *ctx)
{
    gen_t *g = ctx;
    if (g->inner.free) g->inner.free(g->inner.ctx);
    im_free(g);
}

void run_slo_rules_generator(run_slo_t *rs, rules_generator_t *gen)
{
    gen_t *g = im_calloc(1, sizeof *g);
    g->inner = *gen;
    g->rs = rs;
    /* checked at least as often as a re-resolution can fall due */
    int64_t recheck =
        gen->recheck_ms > 0 && gen->recheck_ms < rs->catalog_ms ? gen->recheck_ms : rs->catalog_ms;
    *gen = (rules_generator_t){gen_load, gen_changed, gen_free, g, recheck};
}
