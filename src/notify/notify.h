/* notify.h — the Alertmanager client (contract of src/notify/).
 *
 * Alerts from the rule manager (rules/rules.h, rules_notify_alert_t) are
 * enqueued with notify_send: external labels are added (never overriding the
 * alert's own labels), alert_relabel_configs applied (an alert they drop is
 * gone), and the result copied into a bounded queue (capacity, default 10000).
 * When the queue is full the oldest alerts are dropped and counted
 * (notify_stats.dropped), as Prometheus' notifier does.
 *
 * One sender thread takes up to max_batch (64) alerts at a time and POSTs them
 * as JSON to every configured Alertmanager (`<scheme>://<target><path_prefix>
 * /api/v2/alerts`, with the HTTP client configuration of config/http_client.h —
 * auth, TLS, proxy, redirects — and a per-request timeout). A batch that reached at least one
 * Alertmanager is done. Unlike Prometheus, which drops a batch no Alertmanager accepted, the batch
 * is put back at the head of the queue (if it still fits, else the overflow is counted as dropped)
 * and retried with a back-off (0.5 s doubling to 10 s): an Alertmanager that is down loses nothing
 * that fits in the queue.
 *
 * JSON per alert: {"labels":{…},"annotations":{…},"startsAt":"…","endsAt":"…",
 * "generatorURL":"…"} with RFC 3339 times (milliseconds), as Prometheus sends. */
#ifndef IM_NOTIFY_NOTIFY_H
#define IM_NOTIFY_NOTIFY_H

#include "rules/rules.h"
#include "config/alerting.h"
#include "config/yaml.h"
#include "labels/relabel.h"
#include "util/base.h"
#include "util/err.h"

/* An Alertmanager and the notifier's configuration: the typed config section
 * (config/alerting.h) — scheme, path_prefix, targets, timeout and the HTTP client
 * configuration applied to every POST; alert_relabel_configs. */
typedef cfg_alertmanager_t notify_am_t;
typedef cfg_alerting_t notify_config_t;

/* The notifier never decodes: it is given the section the configuration
 * decoded at load (scrape_config_t.alerting) and keeps a reference to it. */

typedef struct notify_opts {
    size_t queue_capacity;              /* --alertmanager.notification-queue-capacity; 0 = 10000 */
    size_t max_batch;                   /* 0 = 64 */
    const im_labels_t *external_labels; /* borrowed for the notifier's life; may be NULL */
} notify_opts_t;

typedef struct notify_stats {
    uint64_t sent;    /* alerts delivered to at least one Alertmanager */
    uint64_t errors;  /* failed POSTs */
    uint64_t dropped; /* alerts dropped (queue overflow) */
    uint64_t queue_length;
    uint64_t queue_capacity;
    uint64_t alertmanagers;
} notify_stats_t;

typedef struct notify notify_t;

/* Starts the sender thread. The notifier takes a reference to cfg (NULL = no
 * Alertmanager); the caller keeps its own. */
notify_t *notify_new(const notify_opts_t *opts, notify_config_t *cfg);
/* Replaces the Alertmanager configuration (reload); a reference is taken as above. */
void notify_set_config(notify_t *n, notify_config_t *cfg);
/* Enqueues alerts (rules_notify_fn-compatible: ctx = the notifier). */
void notify_send(void *n, const rules_notify_alert_t *alerts, size_t nalerts);
/* Waits up to timeout_ms for the queue to drain; true when empty. */
bool notify_flush(notify_t *n, int64_t timeout_ms);
/* Stops the thread (tries one last send of what is queued) and frees. */
void notify_free(notify_t *n);
void notify_get_stats(notify_t *n, notify_stats_t *out);
/* Prometheus-named metrics (prometheus_notifications_*) for /metrics. */
void notify_metrics_text(notify_t *n, im_buf_t *out);
/* The JSON body for a batch (exposed for tests). */
void notify_alerts_json(const rules_notify_alert_t *alerts, size_t n, im_buf_t *out);

#endif
