/* test_scrape_workers.c — the scrape manager's worker pool under concurrency
 * (src/scrape/manager.c): many targets scraped every 100 ms by several workers
 * while two threads read the targets, metadata and stats snapshots the HTTP API
 * serves, and the configuration is reloaded over and over (targets removed while
 * a worker processes them, a job renamed, metric relabelling added). Meant to
 * run under ThreadSanitizer as well (a data race fails it there); here it checks
 * that every scrape is reported, the last configuration's targets end up, that
 * removed targets get their staleness markers, and the worker count setting. */
#include "util/base.h"

#include <microhttpd.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <cmocka.h>

#include "scrape/scrape.h"
#include "tsdb/tsdb.h"

#define NTARGETS 6
#define NLINES   3000 /* series per target: a few ms of parsing each */

static char *big_body;
static size_t big_len;

static enum MHD_Result serve(void *cls, struct MHD_Connection *conn, const char *url,
                             const char *method, const char *version, const char *upload,
                             size_t *upload_size, void **con_cls)
{
    (void)cls, (void)url, (void)method, (void)version, (void)upload, (void)upload_size;
    (void)con_cls;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(big_len, big_body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4");
    enum MHD_Result ret = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static scrape_config_t *cfg(const char *y)
{
    scrape_config_t *c = NULL;
    im_err_t e;
    im_err_clear(&e);
    if (scrape_config_parse(y, strlen(y), "t.yml", &c, &e) != IM_OK) fprintf(stderr, "%s\n", e.msg);
    assert_non_null(c);
    return c;
}

/* Configuration variant v: 0 = job "w" with all targets, 1 = job "w" with the
 * first two only, 2 = job "w2" (renamed) with all targets and a metric relabel. */
static scrape_config_t *variant(unsigned port, int v)
{
    int nt = v == 1 ? 2 : NTARGETS;
    char y[2048];
    /* targets differ by a label (the same address): each is its own target */
    size_t k = (size_t)snprintf(y, sizeof y,
                                "global: {scrape_interval: 100ms, scrape_timeout: 100ms}\n"
                                "scrape_configs:\n  - job_name: %s\n    static_configs:\n",
                                v == 2 ? "w2" : "w");
    for (int i = 0; i < nt; i++)
        k += (size_t)snprintf(y + k, sizeof y - k,
                              "      - {targets: ['127.0.0.1:%u'], labels: {t: '%d'}}\n", port, i);
    if (v == 2)
        k += (size_t)snprintf(y + k, sizeof y - k,
                              "    metric_relabel_configs:\n"
                              "      - {source_labels: [__name__], regex: 'x', action: drop}\n");
    return cfg(y);
}

typedef struct reader {
    scrape_manager_t *m;
    atomic_bool stop;
    atomic_ulong rounds;
} reader_t;

static void *reader_thread(void *arg)
{
    reader_t *r = arg;
    while (!atomic_load(&r->stop)) {
        scrape_targets_t t;
        scrape_manager_targets(r->m, &t);
        for (size_t i = 0; i < t.nactive; i++) {
            assert_non_null(t.active[i].job);
            assert_non_null(t.active[i].last_error);
        }
        scrape_targets_free(&t);
        scrape_metadata_t *md;
        size_t n;
        scrape_manager_metadata(r->m, &md, &n);
        scrape_metadata_free(md, n);
        scrape_stats_t st;
        scrape_manager_stats(r->m, &st);
        atomic_fetch_add(&r->rounds, 1);
    }
    return NULL;
}

static uint64_t scrapes(scrape_manager_t *m)
{
    scrape_stats_t st;
    scrape_manager_stats(m, &st);
    return st.scrapes_total;
}

/* Number of series {__name__=name, job=job} whose newest sample is stale (or not). */
static size_t count_series(tsdb_t *db, const char *name, const char *job, bool stale)
{
    tsdb_queryable_t *q = tsdb_queryable(db);
    im_matcher_t *ms[2];
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "__name__", 8, name, strlen(name), &ms[0], NULL),
                     IM_OK);
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "job", 3, job, strlen(job), &ms[1], NULL), IM_OK);
    tsdb_series_set_t *set = NULL;
    size_t cnt = 0;
    if (q->vt->select(q, 0, INT64_MAX / 2, ms, 2, NULL, &set, NULL) == IM_OK) {
        for (size_t s = 0; s < set->n; s++) {
            tsdb_iter_t *it = set->vt->iter(set, s);
            int64_t t;
            double v = 0;
            bool any = false;
            while (it->vt->next(it)) {
                it->vt->at(it, &t, &v);
                any = true;
            }
            it->vt->free(it);
            if (any && tsdb_is_stale(v) == stale) cnt++;
        }
        set->vt->free(set);
    }
    im_matcher_free(ms[0]);
    im_matcher_free(ms[1]);
    q->vt->close(q);
    return cnt;
}

static void test_workers_concurrency(void **state)
{
    (void)state;
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_printf(&b, "# HELP w_metric Things.\n# TYPE w_metric gauge\n");
    for (int i = 0; i < NLINES; i++) (void)im_buf_printf(&b, "w_metric{i=\"%d\"} %d\n", i, i);
    big_len = b.len;
    big_body = im_buf_steal(&b, NULL);
    struct MHD_Daemon *d =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL,
                         NULL, serve, NULL, MHD_OPTION_END);
    assert_non_null(d);
    unsigned port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    tsdb_opts_t to;
    memset(&to, 0, sizeof to);
    to.no_background = true;
    tsdb_t *db;
    assert_int_equal(tsdb_open(&to, &db, NULL), IM_OK);
    scrape_manager_opts_t so;
    memset(&so, 0, sizeof so);
    so.storage = tsdb_storage(db);
    scrape_manager_t *m;
    assert_int_equal(scrape_manager_new(&so, &m, NULL), IM_OK);
    im_err_t e;
    im_err_clear(&e);
    assert_int_equal(scrape_manager_set_workers(m, SCRAPE_MAX_WORKERS + 1, &e), IM_EINVAL);
    assert_non_null(strstr(e.msg, "at most 256"));
    assert_int_equal(scrape_manager_set_workers(m, 0, NULL), IM_OK);
    assert_int_equal(scrape_manager_workers(m), scrape_default_workers());
    assert_true(scrape_default_workers() >= 2 && scrape_default_workers() <= 8);
    assert_int_equal(scrape_manager_set_workers(m, 4, NULL), IM_OK);
    assert_int_equal(scrape_manager_workers(m), 4);
    scrape_config_t *c = variant(port, 0);
    scrape_manager_apply(m, c);
    scrape_config_free(c);
    assert_int_equal(scrape_manager_start(m, NULL), IM_OK);
    assert_int_equal(scrape_manager_set_workers(m, 2, &e), IM_EINVAL); /* running */
    reader_t r = {.m = m};
    atomic_init(&r.stop, false);
    atomic_init(&r.rounds, 0);
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, reader_thread, &r), 0);
    /* reloads: each after a few more scrapes, so some land while workers process */
    int nreload = 24;
    for (int k = 1; k <= nreload; k++) {
        uint64_t s0 = scrapes(m);
        for (int i = 0; i < 400 && scrapes(m) < s0 + 3; i++) sleep_ms(5);
        /* the last w2 phase lasts until every w2 target has been scraped once: a
         * target whose slot fell outside each short phase has no series to end */
        for (int i = 0; k == nreload && i < 400 && count_series(db, "up", "w2", false) < NTARGETS;
             i++)
            sleep_ms(25);
        c = variant(port, k % 3);
        scrape_manager_apply(m, c);
        scrape_config_free(c);
    }
    /* the last one (24 % 3 = 0: job w, every target) takes effect */
    for (int i = 0; i < 400; i++) {
        scrape_stats_t st;
        scrape_manager_stats(m, &st);
        if (st.reloads >= 1 && st.targets_active == NTARGETS &&
            count_series(db, "up", "w", false) == NTARGETS)
            break;
        sleep_ms(25);
    }
    uint64_t s0 = scrapes(m);
    for (int i = 0; i < 400 && scrapes(m) < s0 + 2 * NTARGETS; i++) sleep_ms(5);
    for (int i = 0; i < 400; i++) { /* a loaded machine may time a scrape out: until all up */
        scrape_targets_t t;
        scrape_manager_targets(m, &t);
        size_t up = 0;
        for (size_t k = 0; k < t.nactive; k++) up += t.active[k].health == SCRAPE_HEALTH_UP;
        scrape_targets_free(&t);
        if (up == NTARGETS) break;
        sleep_ms(25);
    }
    atomic_store(&r.stop, true);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    assert_true(atomic_load(&r.rounds) > 0);

    scrape_targets_t t;
    scrape_manager_targets(m, &t);
    assert_int_equal(t.nactive, NTARGETS);
    for (size_t i = 0; i < t.nactive; i++) {
        assert_string_equal(t.active[i].job, "w");
        assert_int_equal(t.active[i].health, SCRAPE_HEALTH_UP);
        assert_string_equal(t.active[i].last_error, "");
    }
    scrape_targets_free(&t);
    scrape_metadata_t *md;
    size_t nmd;
    scrape_manager_metadata(m, &md, &nmd);
    size_t nw = 0;
    for (size_t i = 0; i < nmd; i++)
        if (!strcmp(md[i].metric, "w_metric") && !strcmp(md[i].help, "Things.")) nw++;
    assert_int_equal(nw, NTARGETS);
    scrape_metadata_free(md, nmd);
    scrape_stats_t st;
    scrape_manager_stats(m, &st);
    assert_true(st.scrapes_total > st.scrapes_failed);
    assert_true(st.samples_appended >= (uint64_t)NTARGETS * NLINES);
    /* job w2 is gone from the configuration: all its targets' up series ended stale */
    assert_int_equal(count_series(db, "up", "w2", false), 0);
    assert_int_equal(count_series(db, "up", "w2", true), NTARGETS);
    scrape_manager_stop(m, true);
    /* a stop with markers: every series of job w ends stale */
    assert_int_equal(count_series(db, "up", "w", false), 0);
    assert_int_equal(count_series(db, "w_metric", "w", false), 0);
    scrape_manager_free(m);
    tsdb_close(db);
    MHD_stop_daemon(d);
    im_free(big_body);
}

/* One worker: still every target scraped and reported. */
static void test_one_worker(void **state)
{
    (void)state;
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_printf(&b, "one 1\n");
    big_len = b.len;
    big_body = im_buf_steal(&b, NULL);
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, serve,
                                            NULL, MHD_OPTION_END);
    assert_non_null(d);
    unsigned port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    tsdb_opts_t to;
    memset(&to, 0, sizeof to);
    to.no_background = true;
    tsdb_t *db;
    assert_int_equal(tsdb_open(&to, &db, NULL), IM_OK);
    scrape_manager_opts_t so;
    memset(&so, 0, sizeof so);
    so.storage = tsdb_storage(db);
    scrape_manager_t *m;
    assert_int_equal(scrape_manager_new(&so, &m, NULL), IM_OK);
    assert_int_equal(scrape_manager_set_workers(m, 1, NULL), IM_OK);
    scrape_config_t *c = variant(port, 0);
    scrape_manager_apply(m, c);
    scrape_config_free(c);
    assert_int_equal(scrape_manager_start(m, NULL), IM_OK);
    for (int i = 0; i < 400 && count_series(db, "up", "w", false) < NTARGETS; i++) sleep_ms(25);
    assert_int_equal(count_series(db, "up", "w", false), NTARGETS);
    assert_int_equal(count_series(db, "one", "w", false), NTARGETS);
    scrape_manager_stop(m, false);
    scrape_manager_free(m);
    tsdb_close(db);
    MHD_stop_daemon(d);
    im_free(big_body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workers_concurrency),
        cmocka_unit_test(test_one_worker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
