/* test_scrape.c — unit tests for the scrape manager (src/scrape/manager.c,
 * target.c): target labels as Prometheus computes them, and real scrapes of a
 * small HTTP server in the test (libmicrohttpd) into a memory-only store: up and
 * the report series, label conflicts (exported_*), honor_labels, metric
 * relabelling, staleness when a series disappears, limits failing a scrape whole,
 * HTTP errors and garbage bodies; series churn (leaving and coming back) with
 * every series cache key forced onto one primary hash. */
#include "util/base.h"

#include <math.h>
#include <microhttpd.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <cmocka.h>

#include "scrape/scrape.h"
#include "scrape/scrape_int.h"
#include "tsdb/tsdb.h"
#include "util/gzip.h"

/* ---- target labels ---- */

static scrape_config_t *cfg(const char *y)
{
    scrape_config_t *c = NULL;
    im_err_t e;
    im_err_clear(&e);
    if (scrape_config_parse(y, strlen(y), "t.yml", &c, &e) != IM_OK) fprintf(stderr, "%s\n", e.msg);
    assert_non_null(c);
    return c;
}

static void test_target_labels(void **state)
{
    (void)state;
    scrape_config_t *c =
        cfg("scrape_configs:\n"
            "  - job_name: j\n    scheme: https\n    params: {module: [m1], x: ['a b']}\n"
            "    relabel_configs:\n"
            "      - source_labels: [__address__]\n        regex: 'drop.*'\n"
            "        action: drop\n"
            "      - source_labels: [__meta_x]\n        target_label: from_meta\n");
    const im_labels_t *disc = im_labels_from_strs("__address__", "host", "__meta_x", "mx", NULL);
    const im_labels_t *ls;
    char *url;
    assert_int_equal(scrape_target_labels(&c->jobs[0], disc, &ls, &url, NULL), IM_OK);
    assert_non_null(ls);
    assert_string_equal(url, "https://host:443/metrics?module=m1&x=a+b");
    assert_string_equal(im_labels_get(ls, "instance")->s, "host:443");
    assert_string_equal(im_labels_get(ls, "job")->s, "j");
    assert_string_equal(im_labels_get(ls, "from_meta")->s, "mx");
    assert_null(im_labels_get(ls, "__meta_x"));
    assert_null(im_labels_get(ls, "__address__"));
    assert_int_equal(ls->n, 3);
    im_labels_unref(ls);
    im_free(url);
    im_labels_unref(disc);
    disc = im_labels_from_strs("__address__", "drop-me:1", NULL);
    assert_int_equal(scrape_target_labels(&c->jobs[0], disc, &ls, &url, NULL), IM_OK);
    assert_null(ls);
    im_labels_unref(disc);
    disc =
        im_labels_from_strs("__address__", "h:9", "instance", "mine", "__param_module", "m2", NULL);
    assert_int_equal(scrape_target_labels(&c->jobs[0], disc, &ls, &url, NULL), IM_OK);
    assert_string_equal(im_labels_get(ls, "instance")->s, "mine");
    assert_string_equal(url, "https://h:9/metrics?module=m2&x=a+b");
    im_labels_unref(ls);
    im_free(url);
    im_labels_unref(disc);
    disc = im_labels_from_strs("foo", "bar", NULL);
    im_err_t e;
    im_err_clear(&e);
    assert_int_not_equal(scrape_target_labels(&c->jobs[0], disc, &ls, &url, &e), IM_OK);
    assert_string_equal(e.msg, "no address");
    im_labels_unref(disc);
    scrape_config_free(c);
}

/* ---- a tiny exporter ---- */

/* A gzip answer (Content-Encoding: gzip) for the /gz* paths, NULL for others:
 * /gz two gzip members (each a part of the body) when the scraper asked for
 * gzip, else a plain body without the g series; /gzbad a corrupt stream;
 * /gzbig 2,000 bytes inflated from a few dozen. */
static struct MHD_Response *gzip_answer(struct MHD_Connection *conn, const char *url)
{
    const char *ae = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept-Encoding");
    bool wants = ae && strstr(ae, "gzip");
    im_buf_t z;
    im_buf_init(&z, 0);
    if (!strcmp(url, "/gz")) {
        if (!wants) {
            const char *plain = "nogzip 1\n";
            return MHD_create_response_from_buffer(strlen(plain), (void *)plain,
                                                   MHD_RESPMEM_MUST_COPY);
        }
        const char *p1 = "g{i=\"1\"} 1\n", *p2 = "g{i=\"2\"} 2\n";
        im_buf_t z2;
        im_buf_init(&z2, 0);
        assert_true(im_gzip(p1, strlen(p1), 6, &z));
        assert_true(im_gzip(p2, strlen(p2), 6, &z2));
        assert_int_equal(im_buf_append(&z, z2.data, z2.len), IM_OK);
        im_buf_free(&z2);
    } else if (!strcmp(url, "/gzbad")) {
        const char *p = "g 1\n";
        assert_true(im_gzip(p, strlen(p), 6, &z));
        for (size_t i = 10; i < z.len - 8; i++) z.data[i] = (char)0xff;
    } else if (!strcmp(url, "/gzbig")) {
        char big[2001];
        memset(big, '#', 2000);
        big[0] = '\n';
        big[2000] = 0;
        for (size_t i = 1; i < 2000; i += 100) big[i] = '#';
        big[1999] = '\n';
        assert_true(im_gzip(big, 2000, 6, &z));
    } else {
        return NULL;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(z.len, z.data, MHD_RESPMEM_MUST_COPY);
    im_buf_free(&z);
    MHD_add_response_header(r, "Content-Encoding", "gzip");
    return r;
}

static pthread_mutex_t body_mu = PTHREAD_MUTEX_INITIALIZER;
static char body_a[4096];
static char body_churn[4096];

static enum MHD_Result serve(void *cls, struct MHD_Connection *conn, const char *url,
                             const char *method, const char *version, const char *upload,
                             size_t *upload_size, void **con_cls)
{
    (void)cls, (void)method, (void)version, (void)upload, (void)upload_size, (void)con_cls;
    const char *body = "";
    unsigned code = 200;
    char tmp[4096];
    if (!strcmp(url, "/a")) {
        pthread_mutex_lock(&body_mu);
        snprintf(tmp, sizeof tmp, "%s", body_a);
        pthread_mutex_unlock(&body_mu);
        body = tmp;
    } else if (!strcmp(url, "/churn")) {
        pthread_mutex_lock(&body_mu);
        snprintf(tmp, sizeof tmp, "%s", body_churn);
        pthread_mutex_unlock(&body_mu);
        body = tmp;
    } else if (!strcmp(url, "/garbage")) {
        body = "this is { not an exposition\n";
    } else if (!strcmp(url, "/many")) {
        body = "m{i=\"1\"} 1\nm{i=\"2\"} 2\nm{i=\"3\"} 3\n";
    } else if (!strcmp(url, "/long")) {
        body = "m{v=\"0123456789abcdef\"} 1\n";
    } else if (!strncmp(url, "/gz", 3)) {
        body = ""; /* gzip_answer */
    } else {
        code = 404;
        body = "not found\n";
    }
    struct MHD_Response *r = gzip_answer(conn, url);
    if (r)
        code = 200;
    else
        r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4");
    enum MHD_Result ret = MHD_queue_response(conn, code, r);
    MHD_destroy_response(r);
    return ret;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Newest sample of the one series matching {name=..., extra=val}; false if none. */
static bool last_sample(tsdb_t *db, const char *name, const char *ln, const char *lv, double *v,
                        size_t *nseries)
{
    tsdb_queryable_t *q = tsdb_queryable(db);
    im_matcher_t *ms[2];
    size_t n = 0;
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "__name__", 8, name, strlen(name), &ms[n++], NULL),
                     IM_OK);
    if (ln)
        assert_int_equal(
            im_matcher_new(IM_MATCH_EQ, ln, strlen(ln), lv, strlen(lv), &ms[n++], NULL), IM_OK);
    tsdb_series_set_t *set = NULL;
    bool found = false;
    if (q->vt->select(q, 0, INT64_MAX / 2, ms, n, NULL, &set, NULL) == IM_OK) {
        *nseries = set->n;
        if (set->n > 0) {
            tsdb_iter_t *it = set->vt->iter(set, 0);
            int64_t t;
            while (it->vt->next(it)) {
                it->vt->at(it, &t, v);
                found = true;
            }
            it->vt->free(it);
        }
        set->vt->free(set);
    }
    for (size_t i = 0; i < n; i++) im_matcher_free(ms[i]);
    q->vt->close(q);
    return found;
}

static bool has_series(tsdb_t *db, const char *name, const char *ln, const char *lv)
{
    double v;
    size_t n = 0;
    return last_sample(db, name, ln, lv, &v, &n) && n > 0;
}

static void test_scrapes(void **state)
{
    (void)state;
    snprintf(body_a, sizeof body_a,
             "# HELP a_total Things.\n# TYPE a_total counter\n"
             "a_total{job=\"inner\"} 1\ngone 5\nkept_only 1\ndropme 1\n");
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, serve,
                                            NULL, MHD_OPTION_END);
    assert_non_null(d);
    unsigned port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    char y[4096];
    snprintf(y, sizeof y,
             "global: {scrape_interval: 100ms, scrape_timeout: 100ms}\n"
             "scrape_configs:\n"
             "  - job_name: a\n    metrics_path: /a\n"
             "    static_configs: [{targets: ['127.0.0.1:%u'], labels: {team: x}}]\n"
             "    metric_relabel_configs:\n"
             "      - source_labels: [__name__]\n        regex: dropme\n        action: drop\n"
             "  - job_name: honor\n    metrics_path: /a\n    honor_labels: true\n"
             "    static_configs: [{targets: ['127.0.0.1:%u']}]\n"
             "  - job_name: missing\n    metrics_path: /nope\n"
             "    static_configs: [{targets: ['127.0.0.1:%u']}]\n"
             "  - job_name: garbage\n    metrics_path: /garbage\n"
             "    static_configs: [{targets: ['127.0.0.1:%u']}]\n"
             "  - job_name: limited\n    metrics_path: /many\n    sample_limit: 2\n"
             "    static_configs: [{targets: ['127.0.0.1:%u']}]\n"
             "  - job_name: lvlimit\n    metrics_path: /long\n    label_value_length_limit: 8\n"
             "    static_configs: [{targets: ['127.0.0.1:%u']}]\n"
             "  - job_name: bodylimit\n    metrics_path: /many\n    body_size_limit: 10B\n"
             "    static_configs: [{targets: ['127.0.0.1:%u']}]\n"
             "  - job_name: tlimit\n    metrics_path: /many\n    target_limit: 1\n"
             "    static_configs: [{targets: ['127.0.0.1:%u', 'localhost:%u']}]\n"
             "  - job_name: gz\n    metrics_path: /gz\n"
             "    static_configs: [{targets: ['127.0.0.1:%u']}]\n"
             "  - job_name: gzbad\n    metrics_path: /gzbad\n"
             "    static_configs: [{targets: ['127.0.0.1:%u']}]\n"
             "  - job_name: gzbig\n    metrics_path: /gzbig\n    body_size_limit: 1000B\n"
             "    static_configs: [{targets: ['127.0.0.1:%u']}]\n",
             port, port, port, port, port, port, port, port, port, port, port, port);
    scrape_config_t *c = cfg(y);
    tsdb_opts_t to;
    memset(&to, 0, sizeof to);
    to.no_background = true;
    tsdb_t *db;
    assert_int_equal(tsdb_open(&to, &db, NULL), IM_OK);
    scrape_manager_opts_t so = {.storage = tsdb_storage(db)};
    scrape_manager_t *m;
    assert_int_equal(scrape_manager_new(&so, &m, NULL), IM_OK);
    scrape_manager_apply(m, c);
    assert_int_equal(scrape_manager_start(m, NULL), IM_OK);
    /* wait (up to 20 s on a loaded machine) for every target to be scraped twice */
    for (int i = 0; i < 200; i++) {
        scrape_stats_t st0;
        scrape_manager_stats(m, &st0);
        if (st0.scrapes_total >= 24) break;
        sleep_ms(100);
    }
    sleep_ms(150);

    double v;
    size_t n;
    assert_true(last_sample(db, "up", "job", "a", &v, &n));
    assert_true(v == 1);
    assert_true(last_sample(db, "scrape_samples_scraped", "job", "a", &v, &n));
    assert_true(v == 4);
    assert_true(last_sample(db, "scrape_samples_post_metric_relabeling", "job", "a", &v, &n));
    assert_true(v == 3);
    assert_true(last_sample(db, "scrape_duration_seconds", "job", "a", &v, &n));
    /* conflicting job label -> exported_job; target labels added */
    assert_true(has_series(db, "a_total", "exported_job", "inner"));
    assert_true(has_series(db, "a_total", "team", "x"));
    assert_false(has_series(db, "dropme", "job", "a"));
    /* honor_labels keeps the scraped job */
    assert_true(has_series(db, "a_total", "job", "inner"));
    assert_true(last_sample(db, "up", "job", "missing", &v, &n));
    assert_true(v == 0);
    assert_true(last_sample(db, "up", "job", "garbage", &v, &n));
    assert_true(v == 0);
    assert_true(last_sample(db, "up", "job", "limited", &v, &n));
    assert_true(v == 0);
    assert_false(has_series(db, "m", "job", "limited")); /* nothing partial */
    assert_true(last_sample(db, "up", "job", "lvlimit", &v, &n));
    assert_true(v == 0);
    assert_true(last_sample(db, "up", "job", "bodylimit", &v, &n));
    assert_true(v == 0);
    assert_true(last_sample(db, "up", "job", "tlimit", &v, &n));
    assert_true(v == 0);
    assert_false(has_series(db, "m", "job", "tlimit"));
    /* gzip bodies: asked for, every member inflated; corrupt or too big: down */
    assert_true(last_sample(db, "up", "job", "gz", &v, &n));
    assert_true(v == 1);
    assert_true(last_sample(db, "g", "i", "1", &v, &n));
    assert_true(v == 1);
    assert_true(last_sample(db, "g", "i", "2", &v, &n));
    assert_true(v == 2);
    assert_false(has_series(db, "nogzip", "job", "gz"));
    assert_true(last_sample(db, "up", "job", "gzbad", &v, &n));
    assert_true(v == 0);
    assert_true(last_sample(db, "up", "job", "gzbig", &v, &n));
    assert_true(v == 0);

    scrape_targets_t t;
    scrape_manager_targets(m, &t);
    assert_int_equal(t.nactive, 12);
    for (size_t i = 0; i < t.nactive; i++) {
        const char *j = t.active[i].job, *e = t.active[i].last_error;
        if (!strcmp(j, "missing"))
            assert_string_equal(e, "server returned HTTP status 404 Not Found");
        if (!strcmp(j, "limited")) assert_string_equal(e, "sample limit exceeded");
        if (!strcmp(j, "bodylimit")) assert_string_equal(e, "body size limit exceeded");
        if (!strcmp(j, "tlimit"))
            assert_string_equal(e, "target_limit exceeded (number of targets: 2, limit: 1)");
        if (!strcmp(j, "lvlimit")) assert_non_null(strstr(e, "label_value_length_limit exceeded"));
        if (!strcmp(j, "a")) {
            assert_string_equal(e, "");
            assert_int_equal(t.active[i].health, SCRAPE_HEALTH_UP);
        }
        if (!strcmp(j, "garbage")) assert_true(strlen(e) > 0);
        if (!strcmp(j, "gz")) assert_string_equal(e, "");
        if (!strcmp(j, "gzbad")) assert_string_equal(e, "gzip: invalid compressed data");
        if (!strcmp(j, "gzbig")) assert_string_equal(e, "body size limit exceeded");
    }
    scrape_targets_free(&t);
    scrape_metadata_t *md;
    size_t nmd;
    scrape_manager_metadata(m, &md, &nmd);
    bool seen = false;
    for (size_t i = 0; i < nmd; i++)
        if (!strcmp(md[i].metric, "a_total") && !strcmp(md[i].type, "counter") &&
            !strcmp(md[i].help, "Things."))
            seen = true;
    assert_true(seen);
    scrape_metadata_free(md, nmd);

    /* a series leaves the target: staleness marker */
    pthread_mutex_lock(&body_mu);
    snprintf(body_a, sizeof body_a, "a_total{job=\"inner\"} 2\nkept_only 1\n");
    pthread_mutex_unlock(&body_mu);
    for (int i = 0; i < 200; i++) {
        if (last_sample(db, "gone", "job", "a", &v, &n) && tsdb_is_stale(v)) break;
        sleep_ms(100);
    }
    assert_true(last_sample(db, "gone", "job", "a", &v, &n));
    assert_true(tsdb_is_stale(v));
    assert_true(last_sample(db, "kept_only", "job", "a", &v, &n));
    assert_true(v == 1);

    /* metadata across scrapes: an unchanged HELP is kept, a changed one
     * replaced, a new family added, a family without metadata gone */
    for (int round = 0; round < 2; round++) {
        pthread_mutex_lock(&body_mu);
        snprintf(body_a, sizeof body_a,
                 "# HELP a_total %s\n# TYPE a_total counter\na_total{job=\"inner\"} 3\n"
                 "# HELP kept_only Kept v%d.\n# TYPE kept_only gauge\nkept_only 1\n",
                 round ? "Things." : "Other things.", round + 2);
        pthread_mutex_unlock(&body_mu);
        char want_kept[32];
        snprintf(want_kept, sizeof want_kept, "Kept v%d.", round + 2);
        bool ok = false;
        for (int i = 0; i < 200 && !ok; i++) {
            sleep_ms(100);
            scrape_manager_metadata(m, &md, &nmd);
            bool a_ok = false, k_ok = false;
            for (size_t k = 0; k < nmd; k++) {
                if (!strcmp(md[k].metric, "a_total") && !strcmp(md[k].type, "counter") &&
                    !strcmp(md[k].help, round ? "Things." : "Other things."))
                    a_ok = true;
                if (!strcmp(md[k].metric, "kept_only") && !strcmp(md[k].type, "gauge") &&
                    !strcmp(md[k].help, want_kept) && !strcmp(md[k].unit, ""))
                    k_ok = true;
            }
            ok = a_ok && k_ok;
            scrape_metadata_free(md, nmd);
        }
        assert_true(ok);
        sleep_ms(300); /* a few more scrapes of the same body reuse the texts */
        scrape_manager_metadata(m, &md, &nmd);
        size_t na = 0;
        for (size_t k = 0; k < nmd; k++)
            if (!strcmp(md[k].metric, "a_total")) {
                na++;
                assert_string_equal(md[k].help, round ? "Things." : "Other things.");
            }
        assert_int_equal(na, 2); /* jobs a and honor both scrape /a */
        scrape_metadata_free(md, nmd);
    }

    /* the target leaves the config: markers for all its series */
    scrape_config_t *c2 = cfg("scrape_configs: []\n");
    scrape_manager_apply(m, c2);
    scrape_config_free(c2);
    for (int i = 0; i < 200; i++) {
        if (last_sample(db, "up", "job", "a", &v, &n) && tsdb_is_stale(v)) break;
        sleep_ms(100);
    }
    assert_true(last_sample(db, "kept_only", "job", "a", &v, &n));
    assert_true(tsdb_is_stale(v));
    assert_true(last_sample(db, "up", "job", "a", &v, &n));
    assert_true(tsdb_is_stale(v));
    scrape_stats_t st;
    scrape_manager_stats(m, &st);
    assert_true(st.scrapes_total > 7);
    assert_true(st.limit_failures > 0);

    scrape_manager_stop(m, false);
    scrape_manager_free(m);
    scrape_config_free(c);
    tsdb_close(db);
    MHD_stop_daemon(d);
}

/* The churn body: series c{i="lo".."hi-1"} with value i * 100 + round. */
static void set_churn(unsigned lo, unsigned hi, unsigned round)
{
    pthread_mutex_lock(&body_mu);
    size_t n = 0;
    body_churn[0] = 0;
    for (unsigned i = lo; i < hi; i++)
        n += (size_t)snprintf(body_churn + n, sizeof body_churn - n, "c{i=\"%u\",k=\"v\"} %u\n", i,
                              i * 100 + round);
    pthread_mutex_unlock(&body_mu);
}

/* Every series i in [lo, hi) has its newest value i * 100 + round (stale if round < 0). */
static bool churn_ok(tsdb_t *db, unsigned lo, unsigned hi, int round)
{
    for (unsigned i = lo; i < hi; i++) {
        char lv[16];
        snprintf(lv, sizeof lv, "%u", i);
        double v;
        size_t n = 0;
        if (!last_sample(db, "c", "i", lv, &v, &n) || n != 1) return false;
        if (round < 0 ? !tsdb_is_stale(v) : v != (double)(i * 100 + (unsigned)round)) return false;
    }
    return true;
}

static bool wait_churn(tsdb_t *db, unsigned lo, unsigned hi, int round)
{
    for (int k = 0; k < 200; k++) {
        if (churn_ok(db, lo, hi, round)) return true;
        sleep_ms(100);
    }
    return false;
}

static void test_churn_collisions(void **state)
{
    (void)state;
    scrape__cache_hash_mask = 0; /* every raw key collides on the primary hash */
    set_churn(0, 40, 1);
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, serve,
                                            NULL, MHD_OPTION_END);
    assert_non_null(d);
    unsigned port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    char y[1024];
    snprintf(y, sizeof y,
             "global: {scrape_interval: 100ms, scrape_timeout: 100ms}\n"
             "scrape_configs:\n"
             "  - job_name: churn\n    metrics_path: /churn\n"
             "    static_configs: [{targets: ['127.0.0.1:%u']}]\n",
             port);
    scrape_config_t *c = cfg(y);
    tsdb_opts_t to;
    memset(&to, 0, sizeof to);
    to.no_background = true;
    tsdb_t *db;
    assert_int_equal(tsdb_open(&to, &db, NULL), IM_OK);
    scrape_manager_opts_t so = {.storage = tsdb_storage(db)};
    scrape_manager_t *m;
    assert_int_equal(scrape_manager_new(&so, &m, NULL), IM_OK);
    scrape_manager_apply(m, c);
    assert_int_equal(scrape_manager_start(m, NULL), IM_OK);
    /* 40 series, each with its own value: a mixed-up cache entry would show */
    assert_true(wait_churn(db, 0, 40, 1));
    /* half of them leave: staleness markers for those, the others go on */
    set_churn(0, 20, 2);
    assert_true(wait_churn(db, 20, 40, -1));
    assert_true(wait_churn(db, 0, 20, 2));
    /* they come back (new cache entries among the old ones' tombstones) */
    set_churn(0, 40, 3);
    assert_true(wait_churn(db, 0, 40, 3));
    /* all but a few leave for longer than the cache keeps them, then return */
    set_churn(38, 40, 4);
    assert_true(wait_churn(db, 0, 38, -1));
    sleep_ms(1500); /* > 10 scrapes: the entries are dropped, the cache shrinks */
    assert_true(churn_ok(db, 38, 40, 4));
    set_churn(0, 40, 5);
    assert_true(wait_churn(db, 0, 40, 5));
    double v;
    size_t n;
    assert_true(last_sample(db, "up", "job", "churn", &v, &n));
    assert_true(v == 1);
    /* many families with metadata (more than the first metadata table holds,
     * not a power of two), scraped again and again */
    pthread_mutex_lock(&body_mu);
    size_t len = 0;
    for (unsigned i = 0; i < 45; i++)
        len += (size_t)snprintf(body_churn + len, sizeof body_churn - len,
                                "# HELP f%u_total Family %u.\n# TYPE f%u_total counter\n"
                                "f%u_total 1\n",
                                i, i, i, i);
    pthread_mutex_unlock(&body_mu);
    scrape_stats_t st0, st1;
    bool ok = false;
    for (int k = 0; k < 200 && !ok; k++) {
        sleep_ms(100);
        scrape_metadata_t *md;
        size_t nmd, nf = 0;
        scrape_manager_metadata(m, &md, &nmd);
        for (size_t i = 0; i < nmd; i++)
            if (md[i].metric[0] == 'f' && !strcmp(md[i].type, "counter") &&
                !strncmp(md[i].help, "Family ", 7))
                nf++;
        scrape_metadata_free(md, nmd);
        ok = nf == 45;
    }
    assert_true(ok);
    scrape_manager_stats(m, &st0);
    sleep_ms(500);
    scrape_manager_stats(m, &st1);
    assert_true(st1.scrapes_total >= st0.scrapes_total + 2); /* still scraping */
    assert_true(last_sample(db, "f44_total", NULL, NULL, &v, &n));
    assert_true(v == 1);
    scrape_manager_stop(m, false);
    scrape_manager_free(m);
    scrape_config_free(c);
    tsdb_close(db);
    MHD_stop_daemon(d);
    scrape__cache_hash_mask = UINT64_MAX;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_labels),
        cmocka_unit_test(test_scrapes),
        cmocka_unit_test(test_churn_collisions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
