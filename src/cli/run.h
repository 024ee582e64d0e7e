/* run.h — the infermon daemon as a library call, for `infermon run` and for
 * `infermon demo` (which starts its simulator first, then the daemon in the same
 * process).
 *
 * run_daemon opens the store, starts the scrape manager and the HTTP server,
 * and blocks until SIGTERM/SIGINT, POST /-/quit or run_daemon_request_stop; it
 * then stops scraping, closes the HTTP server and flushes and closes the store.
 * SIGHUP and POST /-/reload reload the configuration file, keeping the old
 * configuration when the new one is invalid. A second SIGTERM/SIGINT during
 * shutdown exits at once (status 1). Returns the process exit status (0 = clean
 * shutdown, 2 = could not start). Only one daemon per process. */
#ifndef IM_CLI_RUN_H
#define IM_CLI_RUN_H

#include "util/base.h"

typedef struct run_opts {
    const char *config_file;    /* NULL = config_text, or the embedded default */
    const char *config_text;    /* used when config_file is NULL; NULL = embedded default */
    const char *storage_path;   /* NULL = config storage.path, else ./data */
    bool memory_only;           /* no WAL/blocks (tests, demo) */
    int64_t retention_ms;       /* 0 = config, else 15d */
    int64_t retention_bytes;    /* 0 = config, else none */
    const char *wal_fsync;      /* "timer" | "always" | "never"; NULL = config/timer */
    const char *listen_address; /* NULL = ":9470" */
    const char *web_config_file;
    int bcrypt_max;         /* --web.basic-auth.bcrypt-concurrency; 0 = 2 */
    int64_t bcrypt_wait_ms; /* --web.basic-auth.bcrypt-wait; 0 = 250 ms, < 0 = none */
    bool enable_lifecycle;
    bool enable_remote_write;
    bool enable_otlp;
    int64_t remote_write_max_bytes;
    bool enable_search;             /* --enable-feature=search-api */
    size_t search_max_limit;        /* --web.search.max-limit */
    int64_t max_request_body_bytes; /* 0 = 16 MiB */
    int64_t query_max_concurrency;  /* 0 = 20 */
    int64_t web_max_connections;    /* 0 = 512 */
    int64_t lookback_delta_ms, query_max_samples, query_timeout_ms;
    /* rules and notifications (Prometheus' flags; 0/NULL = its defaults) */
    const char *external_url;
    int64_t rules_outage_tolerance_ms, rules_grace_period_ms, rules_resend_delay_ms;
    int64_t notify_queue_capacity;
    /* storage limits (tsdb/limits.h; 0 = defaults); max_future_ms < 0 = no check */
    int64_t tsdb_max_future_ms;
    /* --storage.frame-cache-size (when frame_cache_set; else storage.frame_cache_size) */
    bool frame_cache_set;
    int64_t frame_cache_bytes;
    uint32_t tsdb_max_labels, tsdb_max_label_name_bytes, tsdb_max_label_value_bytes,
        tsdb_max_series_bytes;
    bool handle_signals; /* true for `infermon run` */
    /* Called once the server listens (port = the bound port). */
    void (*on_ready)(void *ud, uint16_t port);
    void *on_ready_ud;
    /* For /api/v1/status/flags: name/value pairs, NULL-terminated. */
    const char *const *flags;
    size_t scrape_workers; /* threads parsing and committing scrapes; 0 = default */
    bool agent;            /* --agent: scrape and forward only (remote/remote.h) */
    int64_t remote_max_wal_retention_bytes; /* --storage.remote.max-wal-retention; 0 = 2 GiB */
    /* --discovery.kubernetes.max-list-page-bytes / max-event-bytes; 0 = defaults */
    int64_t k8s_max_list_page_bytes, k8s_max_event_bytes;
    size_t rw_metadata_max; /* --web.remote-write-max-metadata; 0 = 100000 */
    /* --query.backend-*: every query answered by a Prometheus-compatible store
     * (query/query.h); nothing scraped or stored. NULL url = the local store. */
    const char *backend_url;
    const char *backend_config;                    /* YAML: HTTP client keys, headers, tenant */
    const char *backend_tenant;                    /* X-Scope-OrgID (overrides the file's tenant) */
    int64_t backend_timeout_ms, backend_max_bytes; /* 0 = query/query.h defaults */
    int64_t slo_resolve_interval_ms;               /* --llm.slo-resolve-interval; 0 = 1 minute */
} run_opts_t;

void run_opts_defaults(run_opts_t *o);
int run_daemon(const run_opts_t *o);
/* Asks a running daemon to shut down (any thread, async-signal-safe). */
void run_daemon_request_stop(void);
/* Asks a running daemon to reload its configuration (async-signal-safe). */
void run_daemon_request_reload(void);

#endif
