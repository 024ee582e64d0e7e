/* config.h — the infermon configuration file and relabelling: contract.
 *
 * The file is a superset of prometheus.yml (see docs/configuration.md): global,
 * scrape_configs, rule_files, alerting, remote_write, plus storage: and llm:.
 * scrape_config_load* parse YAML with libyaml, fill Prometheus' defaults, and
 * validate everything; any unknown key or bad value is an error carrying
 * file:line:column (im_err_t). A loaded scrape_config_t is immutable and owned by
 * the caller; it is refcounted (scrape_config_ref / scrape_config_free drops one
 * reference) so the scrape manager and the HTTP API can share it and only read
 * it, so a reload builds a new one and swaps it in.
 *
 * Sections infermon does not interpret yet (alerting, remote_write, llm) are kept
 * as generic YAML trees (scrape_cfg_node_t) for the subsystems that will.
 *
 * Relabelling follows Prometheus 2.x exactly: regexes are fully anchored,
 * `$1`/`${1}`/`$name` expand as Go's regexp.Expand does (so `$1x` is the empty
 * group "1x"), hashmod takes the last 8 bytes of the MD5 of the joined source
 * values as a big-endian integer modulo `modulus`, lowercase/uppercase are ASCII. */
#ifndef IM_SCRAPE_CONFIG_H
#define IM_SCRAPE_CONFIG_H

#include "labels/labels.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

/* ---- Generic YAML tree (kept sections) ---- */
typedef enum scrape_cfg_node_type {
    SCRAPE_NODE_SCALAR,
    SCRAPE_NODE_SEQ,
    SCRAPE_NODE_MAP, /* kids alternate key, value */
} scrape_cfg_node_type_t;

typedef struct scrape_cfg_node {
    scrape_cfg_node_type_t type;
    char *str;  /* owned; scalars only */
    bool plain; /* scalar was unquoted (null/bool detection) */
    int line, col;
    struct scrape_cfg_node **kids; /* owned */
    size_t nkids;
} scrape_cfg_node_t;

void scrape_cfg_node_free(scrape_cfg_node_t *n);
/* Parses any YAML (or JSON) text into a tree; *root is NULL for an empty
 * document. Errors carry line:column. Used for file_sd files and web configs. */
im_rc scrape_cfg_parse_yaml(const char *text, size_t len, const char *name,
                            scrape_cfg_node_t **root, im_err_t *err);

/* ---- Relabelling ---- */
typedef enum scrape_relabel_action {
    SCRAPE_RELABEL_REPLACE,
    SCRAPE_RELABEL_KEEP,
    SCRAPE_RELABEL_DROP,
    SCRAPE_RELABEL_KEEPEQUAL,
    SCRAPE_RELABEL_DROPEQUAL,
    SCRAPE_RELABEL_HASHMOD,
    SCRAPE_RELABEL_LABELMAP,
    SCRAPE_RELABEL_LABELDROP,
    SCRAPE_RELABEL_LABELKEEP,
    SCRAPE_RELABEL_LOWERCASE,
    SCRAPE_RELABEL_UPPERCASE,
} scrape_relabel_action_t;

typedef struct scrape_relabel {
    scrape_relabel_action_t action;
    char **source_labels; /* owned array of owned strings */
    size_t nsource;
    char *separator;    /* owned, default ";" */
    char *target_label; /* owned, may be NULL */
    char *regex;        /* owned, default "(.*)" (unanchored text as written) */
    char *replacement;  /* owned, default "$1" */
    uint64_t modulus;
    struct im_regex *re; /* compiled, IM_REGEX_FULL (labels/regex.h; owned) */
} scrape_relabel_t;

const char *scrape_relabel_action_name(scrape_relabel_action_t a);
/* Fills defaults for a zeroed rule (action replace, separator ";", ...). */
void scrape_relabel_defaults(scrape_relabel_t *r);
/* Validates as Prometheus does and compiles the regex. */
im_rc scrape_relabel_compile(scrape_relabel_t *r, im_err_t *err);
void scrape_relabel_clear(scrape_relabel_t *r);
/* Applies rules in order to the builder. Returns 1 to keep, 0 when a keep/drop rule
 * drops the label set, or IM_ELIMIT (err filled) when a regex exceeded the regex
 * limit (labels/regex.h); after 0 or an error the builder is in an unspecified
 * state. Thread-safe (the compiled rules are only read). */
int scrape_relabel_apply(const scrape_relabel_t *rules, size_t n, im_labels_builder_t *lb,
                         im_err_t *err);
/* scrape_relabel_apply, with an error logged (rate-limited) and treated as a drop:
 * returns false when the label set is dropped. */
bool scrape_relabel_process(const scrape_relabel_t *rules, size_t n, im_labels_builder_t *lb);

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

typedef struct scrape_job_cfg {
    char *job_name;
    int64_t interval_ms, timeout_ms;
    char *metrics_path;                 /* default /metrics */
    char *scheme;                       /* http | https */
    char **param_names, **param_values; /* owned, parallel; a name may repeat */
    size_t nparams;
    bool honor_labels, honor_timestamps;
    bool follow_redirects; /* accepted; redirects are never followed */
    char *basic_user, *basic_pass, *basic_pass_file;
    char *auth_type, *auth_cred, *auth_cred_file; /* bearer_token(_file) maps here */
    char *tls_ca_file, *tls_cert_file, *tls_key_file, *tls_server_name;
    bool tls_insecure;
    char *proxy_url;
    scrape_relabel_t *relabel;
    size_t nrelabel;
    scrape_relabel_t *metric_relabel;
    size_t nmetric_relabel;
    uint64_t sample_limit, target_limit, label_limit, label_name_length_limit,
        label_value_length_limit;
    int64_t body_size_limit; /* bytes, 0 = none */
    scrape_target_group_t *static_groups;
    size_t nstatic;
    scrape_file_sd_t *file_sd;
    size_t nfile_sd;
} scrape_job_cfg_t;

/* One remote_write entry, every key of Prometheus 2.42 with its defaults (the
 * sender is src/remote). */
typedef struct scrape_remote_write {
    char *url;                      /* owned */
    char *name;                     /* owned; NULL = unnamed */
    int64_t remote_timeout_ms;      /* 30s */
    char **hdr_names, **hdr_values; /* owned, parallel */
    size_t nhdr;
    scrape_relabel_t *relabel; /* write_relabel_configs, owned */
    size_t nrelabel;
    bool send_exemplars, send_native_histograms; /* infermon stores neither: nothing to send */
    /* HTTP client (as a scrape job's) */
    char *basic_user, *basic_pass, *basic_pass_file;
    char *auth_type, *auth_cred, *auth_cred_file;
    char *tls_ca_file, *tls_cert_file, *tls_key_file, *tls_server_name;
    bool tls_insecure;
    char *proxy_url;
    bool follow_redirects, enable_http2;
    /* queue_config (defaults 2500, 1, 200, 500, 5s, 30ms, 5s, false) */
    int64_t capacity, min_shards, max_shards, max_samples_per_send;
    int64_t batch_send_deadline_ms, min_backoff_ms, max_backoff_ms;
    bool retry_on_http_429;
    /* metadata_config (defaults true, 1m, 500) */
    bool md_send;
    int64_t md_send_interval_ms, md_max_samples_per_send;
    /* remote_name: name, else the first 6 hex digits of a hash of the entry */
    char queue_name[64];
} scrape_remote_write_t;
void scrape_remote_write_clear(scrape_remote_write_t *w);

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
    int64_t query_log_file_set;         /* unused, reserved */
    const im_labels_t *external_labels; /* owned reference */
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
    scrape_remote_write_t *remote_writes; /* remote_write, decoded */
    size_t nremote_writes;
    /* Kept for other subsystems (NULL when absent). */
    scrape_cfg_node_t *alerting, *remote_write, *llm;
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

/* Parses a size with Go units' base-2 suffixes ("512KB", "10MiB", "1GB", "0"). */
im_rc scrape_parse_bytes(const char *s, int64_t *out);

#endif
