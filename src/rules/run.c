/* run.c — the daemon's rule evaluation (rules.h, "Running"): rule-file globbing
 * relative to the config's directory, generated files (the built-in LLM rules)
 * re-made when their generator says the input changed, a storage-backed
 * rules_storage_t (one appender per rule, committed so that the next rule sees
 * its output), the evaluation thread, and the manager's /metrics families. */
#include "util/base.h"

#include <glob.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rules/rules.h"
#include "rules/rules_int.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/timeutil.h"

struct rules__run {
    storage_t *store;        /* borrowed */
    storage_queryable_t *q;  /* owned */
    storage_appender_t *app; /* the open batch, or NULL */
    pthread_t thread;
    pthread_mutex_t mu; /* guards stop, gen, files, next_check_ms */
    bool stop;
    rules_generator_t gen; /* owned */
    char *base_dir;        /* owned */
    char **patterns;       /* owned copies of cfg->rule_files */
    size_t npatterns;
    int64_t next_check_ms;
};

/* ---- rules_storage_t over a storage_t ---- */

static im_rc st_append(void *ctx, const im_labels_t *ls, int64_t t, double v)
{
    rules__run_t *r = ctx;
    if (!r->app) r->app = storage_appender(r->store);
    im_rc rc = storage_appender_add(r->app, 0, ls, t, v, NULL);
    if (rc == IM_ELIMIT) /* a storage limit: say which */
        IM_WARN("Rule sample appending failed", "err=%s", im_logq(storage_appender_error(r->app)));
    return rc;
}

static im_rc st_commit(void *ctx)
{
    rules__run_t *r = ctx;
    if (!r->app) return IM_OK;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = storage_appender_commit(r->app, &err);
    r->app = NULL;
    if (rc != IM_OK) IM_WARN("Rule evaluation result discarded", "err=%s", im_logq(err.msg));
    return rc;
}

/* ---- Loading ---- */

static void push_file(rules_file_t ***files, size_t *n, rules_file_t *f)
{
    *files = im_realloc(*files, (*n + 1) * sizeof **files);
    (*files)[(*n)++] = f;
}

/* Loads the files the patterns match, then the generator's; false if a file
 * failed (errors logged; what loaded is still returned). */
static bool load_all(const char *base_dir, char *const *patterns, size_t npatterns,
                     const rules_generator_t *gen, storage_queryable_t *q, rules_file_t ***out,
                     size_t *nout)
{
    rules_file_t **files = NULL;
    size_t n = 0;
    bool ok = true;
    const char *dir = base_dir ? base_dir : ".";
    for (size_t i = 0; i < npatterns; i++) {
        im_buf_t p;
        im_buf_init(&p, 0);
        if (patterns[i][0] == '/')
            (void)im_buf_puts(&p, patterns[i]);
        else
            (void)im_buf_printf(&p, "%s/%s", dir, patterns[i]);
        glob_t gl;
        memset(&gl, 0, sizeof gl);
        if (glob(p.data, 0, NULL, &gl) == 0) {
            for (size_t k = 0; k < gl.gl_pathc; k++) {
                rules_errs_t errs = {0};
                rules_file_t *f = NULL;
                if (rules_file_load(gl.gl_pathv[k], &f, &errs) != IM_OK) {
                    for (size_t e = 0; e < errs.n; e++)
                        IM_ERROR("Loading rule file failed", "err=%s", im_logq(errs.v[e]));
                    ok = false;
                } else {
                    push_file(&files, &n, f);
                }
                rules_errs_free(&errs);
            }
        }
        globfree(&gl);
        im_buf_free(&p);
    }
    if (gen->load && !gen->load(gen->ctx, q, &files, &n)) ok = false;
    *out = files;
    *nout = n;
    return ok;
}

static void free_files(rules_file_t **files, size_t n)
{
    for (size_t i = 0; i < n; i++) rules_file_free(files[i]);
    im_free(files);
}

static void gen_free(rules_generator_t *g)
{
    if (g->free) g->free(g->ctx);
    memset(g, 0, sizeof *g);
}

/* Replaces the run's copy of cfg (base dir, patterns, generator). */
static void take_config(rules__run_t *r, const rules_run_config_t *cfg)
{
    im_free(r->base_dir);
    for (size_t i = 0; i < r->npatterns; i++) im_free(r->patterns[i]);
    im_free(r->patterns);
    r->base_dir = cfg->base_dir ? im_strdup(cfg->base_dir) : NULL;
    r->npatterns = cfg->nrule_files;
    r->patterns = cfg->nrule_files ? im_calloc(cfg->nrule_files, sizeof *r->patterns) : NULL;
    for (size_t i = 0; i < cfg->nrule_files; i++) r->patterns[i] = im_strdup(cfg->rule_files[i]);
    gen_free(&r->gen);
    r->gen = cfg->gen;
    if (r->gen.recheck_ms <= 0) r->gen.recheck_ms = 15 * IM_MS_PER_SECOND;
}

/* ---- The thread ---- */

static void *loop(void *arg)
{
    rules_manager_t *m = arg;
    rules__run_t *r = *rules__run_slot(m);
    for (;;) {
        pthread_mutex_lock(&r->mu);
        if (r->stop) {
            pthread_mutex_unlock(&r->mu);
            break;
        }
        int64_t now = im_now_ms();
        /* generated files (the built-ins) may depend on what the targets expose
         * only now: re-make everything when the generator says so */
        if (r->gen.changed && now >= r->next_check_ms) {
            r->next_check_ms = now + r->gen.recheck_ms;
            if (r->gen.changed(r->gen.ctx, r->q)) {
                rules_file_t **files = NULL;
                size_t n = 0;
                if (load_all(r->base_dir, r->patterns, r->npatterns, &r->gen, r->q, &files, &n)) {
                    rules_manager_set_files(m, files, n);
                    im_free(files);
                    IM_INFO("Generated rules re-made for what the targets expose now", NULL);
                } else {
                    free_files(files, n);
                }
            }
        }
        pthread_mutex_unlock(&r->mu);
        (void)rules_manager_tick(m, now);
        int64_t wait = rules_manager_next_ms(m, im_now_ms());
        if (wait > 200) wait = 200;
        if (wait < 1) wait = 1;
        struct timespec ts = {wait / 1000, (wait % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

rules_manager_t *rules_manager_start(const rules_opts_t *opts, storage_t *store,
                                     const rules_run_config_t *cfg)
{
    rules__run_t *r = im_calloc(1, sizeof *r);
    r->store = store;
    r->q = storage_queryable(store);
    pthread_mutex_init(&r->mu, NULL);
    rules_opts_t o = *opts;
    o.storage = (rules_storage_t){r->q, st_append, st_commit, r};
    rules_manager_t *m = rules_manager_new(&o);
    *rules__run_slot(m) = r;
    take_config(r, cfg);
    rules_file_t **files = NULL;
    size_t n = 0;
    (void)load_all(r->base_dir, r->patterns, r->npatterns, &r->gen, r->q, &files, &n);
    r->next_check_ms = im_now_ms() + r->gen.recheck_ms;
    rules_manager_set_files(m, files, n);
    im_free(files);
    IM_INFO("Rule manager started", "groups=%zu external_url=%s", rules_manager_ngroups(m),
            im_logq(o.external_url ? o.external_url : ""));
    if (pthread_create(&r->thread, NULL, loop, m) != 0) {
        IM_ERROR("Cannot start the rule evaluation thread", NULL);
        abort();
    }
    return m;
}

bool rules_manager_reload(rules_manager_t *m, const rules_run_config_t *cfg)
{
    rules__run_t *r = m ? *rules__run_slot(m) : NULL;
    if (!r) {
        rules_generator_t g = cfg->gen;
        gen_free(&g);
        return false;
    }
    pthread_mutex_lock(&r->mu);
    rules_file_t **files = NULL;
    size_t n = 0;
    bool ok = !r->stop && load_all(cfg->base_dir, cfg->rule_files, cfg->nrule_files, &cfg->gen,
                                   r->q, &files, &n);
    if (ok) {
        rules_manager_set_files(m, files, n);
        im_free(files);
        take_config(r, cfg);
    } else {
        free_files(files, n);
        rules_generator_t g = cfg->gen;
        gen_free(&g);
    }
    pthread_mutex_unlock(&r->mu);
    return ok;
}

void rules__run_end(rules_manager_t *m)
{
    rules__run_t *r = *rules__run_slot(m);
    pthread_mutex_lock(&r->mu);
    r->stop = true;
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    if (r->app) storage_appender_rollback(r->app);
    if (r->q) r->q->vt->close(r->q);
    gen_free(&r->gen);
    im_free(r->base_dir);
    for (size_t i = 0; i < r->npatterns; i++) im_free(r->patterns[i]);
    im_free(r->patterns);
    pthread_mutex_destroy(&r->mu);
    im_free(r);
    *rules__run_slot(m) = NULL;
}

void rules_manager_stop(rules_manager_t *m)
{
    rules_manager_free(m); /* ends the thread first */
}

void rules_manager_metrics_text(rules_manager_t *m, im_buf_t *out)
{
    rules_stats_t s;
    rules_manager_stats(m, &s);
    (void)im_buf_printf(out,
                        "# HELP prometheus_rule_evaluations_total The total number of rule "
                        "evaluations.\n# TYPE prometheus_rule_evaluations_total counter\n"
                        "prometheus_rule_evaluations_total %" PRIu64 "\n"
                        "# HELP prometheus_rule_evaluation_failures_total The total number of rule "
                        "evaluation failures.\n# TYPE prometheus_rule_evaluation_failures_total "
                        "counter\nprometheus_rule_evaluation_failures_total %" PRIu64 "\n"
                        "# HELP prometheus_rule_group_iterations_missed_total The total number of "
                        "rule group evaluations missed due to slow rule group evaluation.\n"
                        "# TYPE prometheus_rule_group_iterations_missed_total counter\n"
                        "prometheus_rule_group_iterations_missed_total %" PRIu64 "\n"
                        "# HELP prometheus_template_text_expansion_failures_total The total "
                        "number of template text expansion failures.\n"
                        "# TYPE prometheus_template_text_expansion_failures_total counter\n"
                        "prometheus_template_text_expansion_failures_total %" PRIu64 "\n",
                        s.evaluations, s.evaluation_failures, s.iterations_missed,
                        s.template_failures);
}
