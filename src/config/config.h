/* config.h — the infermon configuration file: contract.
 *
 * The file is a superset of prometheus.yml (see docs/configuration.md): global,
 * scrape_configs, rule_files, alerting, remote_write, plus storage: and llm:.
 * scrape_config_load* parse YAML (config/yaml.h), fill Prometheus' defaults, and
 * validate everything; any unknown key or bad value is an error carrying
 * file:line:column (im_err_t). A loaded scrape_config_t is immutable and owned by
 * the caller; it is refcounted (scrape_config_ref / scrape_config_free drops one
 * reference) so the scrape manager and the HTTP API can share it and only read
 * it, so a reload builds a new one and swaps it in.
 *
 * The YAML tree and the strict getters are config/yaml.h; the HTTP client keys
 * of a scrape config are config/http_client.h; remote_write is typed
 * (config/remote_write.h), llm too (config/llm.h); relabelling is
 * labels/relabel.h; alerting is decoded once at load (config/alerting.h) and the
 * notifier keeps a reference to that typed section. */
#ifndef IM_CONFIG_CONFIG_H
#define IM_CONFIG_CONFIG_H

#include "config/alerting.h"
#include "config/http_client.h"
#include "config/k8s_monitors.h"
#include "config/k8s_sd.h"
#include "config/llm.h"
#include "config/remote_write.h"
#include "config/yaml.h"
#include "labels/labels.h"
#include "labels/relabel.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

/* ---- Scrape configs ---- */
typedef struct scrape_target_group {
    char **targets; /* owned */
    size_t ntargets;
    const im_labels_t *labels; /* owned reference */
    char *source;              /* owned: "0" for static, file path for file_sd */
} scrape_target_group_t;

typedef struct scrape_file_sd {
    char **files; /* owned glob patterns */
    size_t nfiles;
    int64_t refresh_ms; /* default 5m */
} scrape_file_sd_t;

/* The exposition formats of scrape_protocols and fallback_scrape_protocol, by
 * Prometheus' names. CFG_PROTO_NONE (0) = not set. */
typedef enum cfg_scrape_proto {
    CFG_PROTO_NONE = 0,
    CFG_PROTO_PROMETHEUS_PROTO,  /* PrometheusProto (refused: no protobuf parser) */
    CFG_PROTO_OPENMETRICS_0_0_1, /* OpenMetricsText0.0.1 */
    CFG_PROTO_OPENMETRICS_1_0_0, /* OpenMetricsText1.0.0 */
    CFG_PROTO_TEXT_0_0_4,        /* PrometheusText0.0.4 */
    CFG_PROTO_TEXT_1_0_0,        /* PrometheusText1.0.0 */
} cfg_scrape_proto_t;
#define CFG_PROTO_COUNT 5
/* The name as written in the config ("PrometheusText0.0.4"); "" for NONE. */
const char *cfg_scrape_proto_name(cfg_scrape_proto_t p);
/* The media type and version a protocol is negotiated with in Accept. */
const char *cfg_scrape_proto_media(cfg_scrape_proto_t p);

typedef struct scrape_job_cfg {
    char *job_name;
    int64_t interval_ms, timeout_ms;
    char *metrics_path;                 /* default /metrics */
    char *scheme;                       /* http | https */
    char **param_names, **param_values; /* owned, parallel; a name may repeat */
    size_t nparams;
    bool honor_labels, honor_timestamps;
    cfg_http_client_t http; /* basic_auth, authorization, tls_config, proxy, redirects */
    labels_relabel_t *relabel;
    size_t nrelabel;
    labels_relabel_t *metric_relabel;
    size_t nmetric_relabel;
    uint64_t sample_limit, target_limit, label_limit, label_name_length_limit,
        label_value_length_limit;
    int64_t body_size_limit; /* bytes, 0 = none */
    scrape_target_group_t *static_groups;
    size_t nstatic;
    scrape_file_sd_t *file_sd;
    size_t nfile_sd;
    k8s_sd_cfg_t *k8s_sd; /* kubernetes_sd_configs (owned) */
    size_t nk8s_sd;
    /* scrape_protocols, in preference order (the global list, or the default
     * OpenMetricsText1.0.0, OpenMetricsText0.0.1, PrometheusText1.0.0,
     * PrometheusText0.0.4, when the job sets none); builds the Accept header. */
    cfg_scrape_proto_t protocols[CFG_PROTO_COUNT];
    size_t nprotocols;
    bool protocols_set; /* written in the job (for the config dump) */
    /* fallback_scrape_protocol (Prometheus 3): the format of a response whose
     * Content-Type is missing, empty or not one infermon parses. NONE = such a
     * scrape fails under --promql.compat=3 (is read as text under 2). */
    cfg_scrape_proto_t fallback_protocol;
} scrape_job_cfg_t;

typedef enum scrape_fsync {
    SCRAPE_FSYNC_TIMER,
    SCRAPE_FSYNC_ALWAYS,
    SCRAPE_FSYNC_NEVER,
} scrape_fsync_t;

typedef struct scrape_config {
    int refs;       /* atomic; 1 after load */
    char *filename; /* owned, NULL for an embedded config */
    char *text;     /* owned: the source text */
    int64_t scrape_interval_ms, scrape_timeout_ms, evaluation_interval_ms;
    int64_t query_log_file_set;                           /* unused, reserved */
    const im_labels_t *external_labels;                   /* owned reference */
    cfg_scrape_proto_t scrape_protocols[CFG_PROTO_COUNT]; /* global.scrape_protocols */
    size_t nscrape_protocols;                             /* 0 = not set (the default) */
    scrape_job_cfg_t *jobs;
    size_t njobs;
    char **rule_files;
    size_t nrule_files;
    /* storage: (each 0/NULL when not set: command-line flags or defaults apply) */
    char *storage_path;
    int64_t retention_ms, retention_bytes;
    bool storage_fsync_set;
    scrape_fsync_t storage_fsync;
    int64_t storage_fsync_interval_ms;
    bool storage_frame_cache_set; /* storage.frame_cache_size given (0 = cache nothing) */
    int64_t storage_frame_cache_bytes;
    cfg_remote_write_t *remote_write; /* owned, typed (config/remote_write.h) */
    size_t nremote_write;
    cfg_llm_t llm;             /* the llm: section, typed (config/llm.h) */
    cfg_alerting_t *alerting;  /* typed, decoded once at load (config/alerting.h; a reference
                                  is what the notifier keeps); NULL when absent */
    cfg_node_t *alerting_yaml; /* the section as written, for the config dump only */
    /* kubernetes_monitors: (owned; NULL when absent): the daemon reads the monitors
     * at load and reload and adds their jobs (discovery/generate.h). */
    discovery_monitors_cfg_t *k8s_monitors;
} scrape_config_t;

/* Parses YAML text. name is used in error positions (may be NULL). */
im_rc scrape_config_parse(const char *text, size_t len, const char *name, scrape_config_t **out,
                          im_err_t *err);
/* Reads and parses a file (at most 16 MiB). */
im_rc scrape_config_load_file(const char *path, scrape_config_t **out, im_err_t *err);
/* Adds a reference; returns c. */
scrape_config_t *scrape_config_ref(scrape_config_t *c);
/* Drops a reference; frees on the last. NULL is allowed. */
void scrape_config_free(scrape_config_t *c);

/* The embedded default: vLLM at localhost:8000, dcgm-exporter at localhost:9400,
 * every 15 s, storage under ./data. */
extern const char scrape_default_config_yaml[];

/* Writes the loaded config back as YAML with defaults filled and secrets shown
 * as <secret> (for /api/v1/status/config). */
im_rc scrape_config_dump(const scrape_config_t *c, im_buf_t *out);

#endif
