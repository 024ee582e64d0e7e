/* scrape.h — the scrape manager: contract.
 *
 * One manager owns every target of the loaded configuration, one thread that
 * schedules them and drives all HTTP transfers through a single libcurl multi
 * handle, and a pool of scrape workers (opts.workers). Each target is scraped
 * every scrape_interval at a stable offset inside the interval (a hash of the
 * target), so a fleet's scrapes are spread evenly. A finished transfer goes to a
 * worker, which parses it (expo) and appends it with one storage appender per
 * scrape, so a huge or slow target's parse and commit take one worker and never
 * delay another target's scrape: the scrape is committed whole, or — when a limit is breached, the
 * body does not parse, or the transfer fails — rolled back whole, followed by staleness markers for
 * every series of the previous scrape, and up = 0.
 *
 * Per target and scrape, as Prometheus: up, scrape_duration_seconds,
 * scrape_samples_scraped, scrape_samples_post_metric_relabeling and
 * scrape_series_added, with the target's labels. A series that was in the last
 * scrape but not in this one gets a staleness marker at this scrape's time; a
 * target removed from the configuration gets markers for all its series.
 *
 * Configuration: scrape_manager_apply hands in a configuration (the manager takes
 * a reference); targets whose identity (labels and URL) is unchanged keep their
 * state. file_sd files are re-read when they change (checked every second) and
 * every refresh_interval.
 *
 * Thread-safety: every function may be called from any thread. Snapshots are
 * deep copies owned by the caller. */
#ifndef IM_SCRAPE_SCRAPE_H
#define IM_SCRAPE_SCRAPE_H

#include "config/config.h"
#include "discovery/k8s.h"
#include "storage/storage.h"
#include "util/base.h"
#include "util/err.h"

typedef struct scrape_manager scrape_manager_t;

typedef struct scrape_manager_opts {
    storage_t *storage;     /* borrowed; must outlive the manager */
    const char *user_agent; /* NULL = "infermon/<version>" */
    /* Hard cap on a scrape body when the job sets no body_size_limit. 0 = 256 MiB. */
    int64_t default_body_cap;
    /* Prometheus 3 (--promql.compat=3): the `le` of histogram buckets and the
     * `quantile` of summaries are stored in one float form, so `le="1"` and
     * `le="1.0"` are the same series and exact matchers work across exporters:
     * a value that parses as a float is rewritten as OpenMetrics prints floats
     * ("1" -> "1.0", "0.50" -> "0.5", "+Inf"); other values are kept. Applies to
     * families whose TYPE is histogram, gaugehistogram (le) or summary (quantile). */
    bool normalize_bucket_labels;
    /* Prometheus 3 (--promql.compat=3): a response whose Content-Type is missing,
     * blank or neither text/plain nor application/openmetrics-text fails the
     * scrape (up = 0, the target's lastError says why) unless the job sets
     * fallback_scrape_protocol. false (2.x): such a response is read as text. */
    bool strict_content_type;
} scrape_manager_opts_t;

/* The default number of scrape workers: the CPUs online, at least 2, at most 8. */
size_t scrape_default_workers(void);

im_rc scrape_manager_new(const scrape_manager_opts_t *opts, scrape_manager_t **out, im_err_t *err);
/* Sets the number of threads that parse and commit scrapes (--scrape.workers,
 * 1 to SCRAPE_MAX_WORKERS; 0 = scrape_default_workers(), the default). Only
 * before scrape_manager_start; returns IM_EINVAL (err filled) otherwise or when
 * n is out of range. */
#define SCRAPE_MAX_WORKERS 256
im_rc scrape_manager_set_workers(scrape_manager_t *m, size_t n, im_err_t *err);
/* Limits of the kubernetes_sd_configs discoverers (each 0 = the default, see
 * discovery/k8s.h). Only before scrape_manager_start. */
void scrape_manager_set_k8s_limits(scrape_manager_t *m, const k8s_limits_t *lim);
/* Starts the scrape thread and the workers. */
im_rc scrape_manager_start(scrape_manager_t *m, im_err_t *err);
/* Replaces the configuration (takes a reference on cfg). */
void scrape_manager_apply(scrape_manager_t *m, scrape_config_t *cfg);
/* Stops scraping: pending transfers are cancelled, staleness markers written for
 * every target when mark_stale, the thread joined. */
void scrape_manager_stop(scrape_manager_t *m, bool mark_stale);
void scrape_manager_free(scrape_manager_t *m);
/* The number of scrape workers the manager runs. */
size_t scrape_manager_workers(const scrape_manager_t *m);

/* ---- Snapshots for the HTTP API ---- */
typedef enum scrape_health {
    SCRAPE_HEALTH_UNKNOWN,
    SCRAPE_HEALTH_UP,
    SCRAPE_HEALTH_DOWN,
} scrape_health_t;

typedef struct scrape_target_info {
    char *job;                            /* owned */
    char *url;                            /* owned */
    const im_labels_t *discovered_labels; /* owned reference */
    const im_labels_t *labels;            /* owned reference (NULL for dropped targets) */
    char *last_error;                     /* owned, "" when none */
    int64_t last_scrape_ms;               /* 0 = never */
    int64_t last_scrape_ns;               /* sub-ms part for RFC 3339 with ns */
    double last_duration_s;
    scrape_health_t health;
    int64_t interval_ms, timeout_ms;
} scrape_target_info_t;

typedef struct scrape_targets {
    scrape_target_info_t *active;
    size_t nactive;
    scrape_target_info_t *dropped;
    size_t ndropped;
} scrape_targets_t;

void scrape_manager_targets(scrape_manager_t *m, scrape_targets_t *out);
void scrape_targets_free(scrape_targets_t *t);

/* Metric metadata seen in the last scrapes (one entry per target and family). */
typedef struct scrape_metadata {
    char *target_job, *target_instance; /* owned */
    char *metric, *type, *help, *unit;  /* owned */
} scrape_metadata_t;
void scrape_manager_metadata(scrape_manager_t *m, scrape_metadata_t **out, size_t *n);
void scrape_metadata_free(scrape_metadata_t *md, size_t n);

/* Counters for /metrics. */
typedef struct scrape_stats {
    uint64_t scrapes_total, scrapes_failed;
    uint64_t samples_appended, samples_out_of_order, samples_duplicate;
    uint64_t limit_failures; /* scrapes failed on a sample/label/body limit */
    double duration_seconds_sum;
    uint64_t duration_buckets[10]; /* le 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 10 */
    uint64_t targets_active, targets_dropped;
    uint64_t reloads, sd_file_reads, sd_file_errors;
} scrape_stats_t;
extern const double scrape_duration_bucket_bounds[10];
void scrape_manager_stats(scrape_manager_t *m, scrape_stats_t *out);

/* ---- Pieces exposed for tests ---- */

/* Computes a target's labels from discovered labels as Prometheus does (job and
 * __scrape_* defaults, relabel_configs, default port, instance, __meta_ removal).
 * Returns IM_OK with *out (owned) or NULL when dropped by relabelling; an error
 * (no address, bad address) fills err. *url receives the scrape URL (owned). */
im_rc scrape_target_labels(const scrape_job_cfg_t *job, const im_labels_t *discovered,
                           const im_labels_t **out, char **url, im_err_t *err);

#endif
