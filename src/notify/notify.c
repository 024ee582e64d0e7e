/* notify.c — Alertmanager API v2 client: config parsing, the bounded alert
 * queue with drop counting, the sender thread with batching, retries and
 * back-off, and the JSON body (see notify.h for the contract).
 *
 * Queue invariants: q[head .. head+len) (ring of cap entries) holds owned
 * alerts in arrival order; len <= cap; every alert that leaves the queue is
 * either delivered (sent), or counted in dropped. The lock protects the queue,
 * the config and the stats; HTTP requests run without it. */
#include "util/base.h"

#include <curl/curl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "notify/notify.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "labels/json.h"

/* ---- queue and sender ---- */

typedef struct qalert {
    const im_labels_t *labels, *annotations; /* owned */
    int64_t starts_at, ends_at;
    char *generator_url; /* owned */
} qalert_t;

struct notify {
    notify_opts_t opts;
    notify_config_t *cfg; /* a reference; NULL = no Alertmanager */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool stop;
    qalert_t *q;
    size_t cap, head, len;
    int sending; /* alerts taken by the sender, not yet settled */
    notify_stats_t stats;
};

static void qalert_free(qalert_t *a)
{
    im_labels_unref(a->labels);
    im_labels_unref(a->annotations);
    im_free(a->generator_url);
}

/* Pushes at the tail, dropping the oldest when full. Lock held. */
static void q_push_tail(notify_t *n, qalert_t a)
{
    if (n->len == n->cap) {
        qalert_free(&n->q[n->head]);
        n->head = (n->head + 1) % n->cap;
        n->len--;
        n->stats.dropped++;
    }
    n->q[(n->head + n->len) % n->cap] = a;
    n->len++;
}

/* Puts a failed batch back at the head (oldest first), as far as it fits. */
static void q_push_head(notify_t *n, qalert_t *v, size_t cnt)
{
    for (size_t i = cnt; i-- > 0;) {
        if (n->len == n->cap) {
            qalert_free(&v[i]);
            n->stats.dropped++;
            continue;
        }
        n->head = (n->head + n->cap - 1) % n->cap;
        n->q[n->head] = v[i];
        n->len++;
    }
}

/* JSON strings and label sets: labels/json.h (plain). */
static void json_str(im_buf_t *b, const char *s, size_t n)
{
    im_json_string(b, s, n, IM_JSON_PLAIN);
}

static void json_labels(im_buf_t *b, const im_labels_t *ls)
{
    im_json_labels(b, ls, IM_JSON_PLAIN);
}

static void json_time(im_buf_t *b, int64_t ms)
{
    int64_t days = ms / IM_MS_PER_DAY, rem = ms % IM_MS_PER_DAY;
    if (rem < 0) {
        rem += IM_MS_PER_DAY;
        days--;
    }
    int64_t y;
    unsigned mo, d;
    im_civil_from_days(days, &y, &mo, &d);
    (void)im_buf_printf(b, "\"%04" PRId64 "-%02u-%02uT%02d:%02d:%02d.%03dZ\"", y, mo, d,
                        (int)(rem / 3600000), (int)(rem / 60000 % 60), (int)(rem / 1000 % 60),
                        (int)(rem % 1000));
}

static void alert_json(im_buf_t *b, const im_labels_t *labels, const im_labels_t *ann,
                       int64_t starts, int64_t ends, const char *url)
{
    (void)im_buf_puts(b, "{\"labels\":");
    json_labels(b, labels);
    (void)im_buf_puts(b, ",\"annotations\":");
    json_labels(b, ann);
    (void)im_buf_puts(b, ",\"startsAt\":");
    json_time(b, starts);
    (void)im_buf_puts(b, ",\"endsAt\":");
    json_time(b, ends);
    (void)im_buf_puts(b, ",\"generatorURL\":");
    json_str(b, url ? url : "", url ? strlen(url) : 0);
    (void)im_buf_putc(b, '}');
}

void notify_alerts_json(const rules_notify_alert_t *alerts, size_t n, im_buf_t *out)
{
    (void)im_buf_putc(out, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) (void)im_buf_putc(out, ',');
        alert_json(out, alerts[i].labels, alerts[i].annotations, alerts[i].starts_at_ms,
                   alerts[i].ends_at_ms, alerts[i].generator_url);
    }
    (void)im_buf_putc(out, ']');
}

static size_t discard(char *p, size_t sz, size_t nm, void *ud)
{
    (void)p;
    (void)ud;
    return sz * nm;
}

/* POSTs body to every target of am; true if one accepted (2xx). */
static bool post_am(const notify_am_t *am, const char *body, size_t len, uint64_t *errors)
{
    bool ok = false;
    for (size_t t = 0; t < am->ntargets; t++) {
        im_buf_t url;
        im_buf_init(&url, 0);
        const char *pp = am->path_prefix ? am->path_prefix : "";
        size_t ppl = strlen(pp);
        while (ppl && pp[ppl - 1] == '/') ppl--;
        (void)im_buf_printf(&url, "%s://%s%s%.*s/api/v2/alerts", am->scheme, am->targets[t],
                            ppl && pp[0] != '/' ? "/" : "", (int)ppl, pp);
        CURL *c = NULL;
        cfg_http_lists_t l = {0};
        l.hdrs = curl_slist_append(l.hdrs, "Content-Type: application/json");
        l.hdrs = curl_slist_append(l.hdrs, "User-Agent: infermon/0.1.0");
        im_err_t aerr;
        im_err_clear(&aerr);
        if (cfg_http_client_handle(&am->http, &c, url.data, discard, NULL, NULL, &l, &aerr) !=
            IM_OK) {
            (*errors)++;
            IM_WARN("Error sending alerts", "alertmanager=%s err=%s", im_logq(url.data),
                    im_logq(aerr.msg));
            cfg_http_lists_free(&l);
            curl_easy_cleanup(c);
            im_buf_free(&url);
            continue;
        }
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)len);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)am->timeout_ms);
        CURLcode cr = curl_easy_perform(c);
        long code = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
        if (cr == CURLE_OK && code / 100 == 2) {
            ok = true;
        } else {
            (*errors)++;
            IM_WARN("Error sending alerts", "alertmanager=%s err=%s status=%ld", im_logq(url.data),
                    im_logq(curl_easy_strerror(cr)), code);
        }
        cfg_http_lists_free(&l);
        curl_easy_cleanup(c);
        im_buf_free(&url);
    }
    return ok;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void *sender(void *arg)
{
    notify_t *n = arg;
    int64_t backoff = 0;
    pthread_mutex_lock(&n->mu);
    for (;;) {
        while (!n->stop && n->len == 0) pthread_cond_wait(&n->cv, &n->mu);
        if (n->len == 0 && n->stop) break;
        size_t cnt = IM_MIN(n->len, n->opts.max_batch);
        qalert_t *batch = im_malloc(cnt * sizeof *batch);
        for (size_t i = 0; i < cnt; i++) batch[i] = n->q[(n->head + i) % n->cap];
        n->head = (n->head + cnt) % n->cap;
        n->len -= cnt;
        n->sending = (int)cnt;
        /* snapshot of the config: the sender is the only one using it while
         * unlocked; set_config swaps under the lock between batches */
        const notify_config_t *cfg = n->cfg;
        im_buf_t body;
        im_buf_init(&body, 0);
        (void)im_buf_putc(&body, '[');
        for (size_t i = 0; i < cnt; i++) {
            if (i) (void)im_buf_putc(&body, ',');
            alert_json(&body, batch[i].labels, batch[i].annotations, batch[i].starts_at,
                       batch[i].ends_at, batch[i].generator_url);
        }
        (void)im_buf_putc(&body, ']');
        size_t nams = cfg ? cfg->nams : 0;
        notify_am_t *ams = cfg ? cfg->ams : NULL;
        bool stopping = n->stop;
        pthread_mutex_unlock(&n->mu);
        bool ok = false;
        uint64_t errors = 0;
        for (size_t i = 0; i < nams; i++) ok = post_am(&ams[i], body.data, body.len, &errors) || ok;
        im_buf_free(&body);
        pthread_mutex_lock(&n->mu);
        n->stats.errors += errors;
        n->sending = 0;
        if (ok || nams == 0) {
            if (ok)
                n->stats.sent += cnt;
            else
                n->stats.dropped += cnt;
            for (size_t i = 0; i < cnt; i++) qalert_free(&batch[i]);
            backoff = 0;
        } else if (stopping || n->stop) {
            /* shutting down and nobody listens: one try only, drop the rest */
            n->stats.dropped += cnt + n->len;
            for (size_t i = 0; i < cnt; i++) qalert_free(&batch[i]);
            for (size_t i = 0; i < n->len; i++) qalert_free(&n->q[(n->head + i) % n->cap]);
            n->len = 0;
        } else {
            q_push_head(n, batch, cnt);
            backoff = backoff ? IM_MIN(backoff * 2, 10000) : 500;
            int64_t until = im_mono_ns() + backoff * 1000000LL;
            while (!n->stop && im_mono_ns() < until) {
                pthread_mutex_unlock(&n->mu);
                sleep_ms(50);
                pthread_mutex_lock(&n->mu);
            }
        }
        im_free(batch);
        pthread_cond_broadcast(&n->cv);
    }
    pthread_mutex_unlock(&n->mu);
    return NULL;
}

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

notify_t *notify_new(const notify_opts_t *opts, notify_config_t *cfg)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, curl_init_once);
    notify_t *n = im_calloc(1, sizeof *n);
    n->opts = *opts;
    if (!n->opts.queue_capacity) n->opts.queue_capacity = 10000;
    if (!n->opts.max_batch) n->opts.max_batch = 64;
    n->cap = n->opts.queue_capacity;
    n->q = im_calloc(n->cap, sizeof *n->q);
    n->cfg = cfg_alerting_ref(cfg);
    pthread_mutex_init(&n->mu, NULL);
    pthread_cond_init(&n->cv, NULL);
    pthread_create(&n->thread, NULL, sender, n);
    return n;
}

void notify_set_config(notify_t *n, notify_config_t *cfg)
{
    pthread_mutex_lock(&n->mu);
    while (n->sending) pthread_cond_wait(&n->cv, &n->mu);
    cfg_alerting_unref(n->cfg);
    n->cfg = cfg_alerting_ref(cfg);
    pthread_mutex_unlock(&n->mu);
}

void notify_send(void *vn, const rules_notify_alert_t *alerts, size_t nalerts)
{
    notify_t *n = vn;
    im_labels_builder_t b;
    im_lb_init(&b);
    pthread_mutex_lock(&n->mu);
    for (size_t i = 0; i < nalerts; i++) {
        im_lb_load(&b, alerts[i].labels);
        const im_labels_t *el = n->opts.external_labels;
        for (uint32_t k = 0; el && k < el->n; k++)
            if (!im_lb_get(&b, el->l[k].name->s)) im_lb_set_istr(&b, el->l[k].name, el->l[k].value);
        if (n->cfg && n->cfg->nrelabel &&
            !labels_relabel_process(n->cfg->relabel, n->cfg->nrelabel, &b))
            continue;
        qalert_t a = {.labels = im_lb_build(&b),
                      .annotations = im_labels_ref(alerts[i].annotations),
                      .starts_at = alerts[i].starts_at_ms,
                      .ends_at = alerts[i].ends_at_ms,
                      .generator_url =
                          im_strdup(alerts[i].generator_url ? alerts[i].generator_url : "")};
        if (a.labels->n == 0) {
            qalert_free(&a);
            continue;
        }
        q_push_tail(n, a);
    }
    pthread_cond_broadcast(&n->cv);
    pthread_mutex_unlock(&n->mu);
    im_lb_free(&b);
}

bool notify_flush(notify_t *n, int64_t timeout_ms)
{
    int64_t until = im_mono_ns() + timeout_ms * 1000000LL;
    pthread_mutex_lock(&n->mu);
    while ((n->len || n->sending) && im_mono_ns() < until) {
        pthread_mutex_unlock(&n->mu);
        sleep_ms(20);
        pthread_mutex_lock(&n->mu);
    }
    bool empty = n->len == 0 && !n->sending;
    pthread_mutex_unlock(&n->mu);
    return empty;
}

void notify_free(notify_t *n)
{
    if (!n) return;
    pthread_mutex_lock(&n->mu);
    n->stop = true;
    pthread_cond_broadcast(&n->cv);
    pthread_mutex_unlock(&n->mu);
    pthread_join(n->thread, NULL);
    for (size_t i = 0; i < n->len; i++) qalert_free(&n->q[(n->head + i) % n->cap]);
    im_free(n->q);
    cfg_alerting_unref(n->cfg);
    pthread_mutex_destroy(&n->mu);
    pthread_cond_destroy(&n->cv);
    im_free(n);
}

void notify_get_stats(notify_t *n, notify_stats_t *out)
{
    pthread_mutex_lock(&n->mu);
    *out = n->stats;
    out->queue_length = n->len;
    out->queue_capacity = n->cap;
    size_t t = 0;
    for (size_t i = 0; n->cfg && i < n->cfg->nams; i++) t += n->cfg->ams[i].ntargets;
    out->alertmanagers = t;
    pthread_mutex_unlock(&n->mu);
}

void notify_metrics_text(notify_t *n, im_buf_t *out)
{
    notify_stats_t s;
    notify_get_stats(n, &s);
    (void)im_buf_printf(out,
                        "# HELP prometheus_notifications_sent_total Total number of alerts sent.\n"
                        "# TYPE prometheus_notifications_sent_total counter\n"
                        "prometheus_notifications_sent_total %" PRIu64 "\n"
                        "# HELP prometheus_notifications_errors_total Total number of errors "
                        "sending alert notifications.\n"
                        "# TYPE prometheus_notifications_errors_total counter\n"
                        "prometheus_notifications_errors_total %" PRIu64 "\n"
                        "# HELP prometheus_notifications_dropped_total Total number of alerts "
                        "dropped due to errors when sending to Alertmanager.\n"
                        "# TYPE prometheus_notifications_dropped_total counter\n"
                        "prometheus_notifications_dropped_total %" PRIu64 "\n"
                        "# HELP prometheus_notifications_queue_length The number of alert "
                        "notifications in the queue.\n"
                        "# TYPE prometheus_notifications_queue_length gauge\n"
                        "prometheus_notifications_queue_length %" PRIu64 "\n"
                        "# HELP prometheus_notifications_queue_capacity The capacity of the alert "
                        "notifications queue.\n"
                        "# TYPE prometheus_notifications_queue_capacity gauge\n"
                        "prometheus_notifications_queue_capacity %" PRIu64 "\n"
                        "# HELP prometheus_notifications_alertmanagers_discovered The number of "
                        "alertmanagers discovered and active.\n"
                        "# TYPE prometheus_notifications_alertmanagers_discovered gauge\n"
                        "prometheus_notifications_alertmanagers_discovered %" PRIu64 "\n",
                        s.sent, s.errors, s.dropped, s.queue_length, s.queue_capacity,
                        s.alertmanagers);
}
