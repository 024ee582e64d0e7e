/* remote_write.h — the typed `remote_write:` section (Prometheus 2.42's
 * RemoteWriteConfig, QueueConfig and MetadataConfig).
 *
 * Every key Prometheus 2.42 accepts is decoded and validated with its defaults;
 * an unknown key is refused with its line:column. sigv4 and oauth2 are refused
 * with a "not supported" error (infermon implements neither); azuread does not
 * exist in 2.42 and is an unknown key.
 *
 * Defaults (as Prometheus 2.42 fills them, checked against its
 * /api/v1/status/config):
 *   remote_timeout 30s; queue_config: capacity 2500, max_shards 200,
 *   min_shards 1, max_samples_per_send 500, batch_send_deadline 5s,
 *   min_backoff 30ms, max_backoff 5s, retry_on_http_429 false;
 *   metadata_config: send true, send_interval 1m, max_samples_per_send 500;
 *   send_exemplars false, send_native_histograms false; follow_redirects true,
 *   enable_http2 true.
 *
 * Validation (2.42): url required and absolute http(s); headers must not set
 * Authorization ("authorization header must be changed via the basic_auth,
 * authorization, oauth2, or sigv4 parameter") nor a reserved header; names must
 * be unique across remote_write entries; urls must be unique. */
#ifndef IM_CONFIG_REMOTE_WRITE_H
#define IM_CONFIG_REMOTE_WRITE_H

#include "config/http_client.h"
#include "config/yaml.h"
#include "labels/relabel.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct cfg_queue {
    int capacity;                   /* samples buffered per shard; default 2500 */
    int max_shards;                 /* default 200 */
    int min_shards;                 /* default 1 */
    int max_samples_per_send;       /* default 500 */
    int64_t batch_send_deadline_ms; /* default 5s */
    int64_t min_backoff_ms;         /* default 30ms */
    int64_t max_backoff_ms;         /* default 5s */
    bool retry_on_http_429;         /* default false */
} cfg_queue_t;

typedef struct cfg_metadata {
    bool send;                /* default true */
    int64_t send_interval_ms; /* default 1m */
    int max_samples_per_send; /* default 500 */
} cfg_metadata_t;

typedef struct cfg_remote_write {
    char *url;                 /* owned; absolute http(s) URL */
    char *name;                /* owned; NULL when not set (Prometheus then names the queue by a
                                  hash of the config) */
    int64_t remote_timeout_ms; /* default 30s */
    char **header_names, **header_values; /* owned, parallel, file order */
    size_t nheaders;
    labels_relabel_t *write_relabel; /* write_relabel_configs, compiled (owned) */
    size_t nwrite_relabel;
    bool send_exemplars;         /* default false */
    bool send_native_histograms; /* default false */
    cfg_http_client_t http;      /* basic_auth, authorization, tls_config, ... */
    cfg_queue_t queue;
    cfg_metadata_t metadata;
} cfg_remote_write_t;

/* The keys of one remote_write entry (NULL-terminated), excluding the HTTP
 * client keys (cfg_http_client_keys). */
extern const char *const cfg_remote_write_keys[];

/* Fills the defaults above into a zeroed entry. */
void cfg_remote_write_defaults(cfg_remote_write_t *rw);
/* Decodes the `remote_write:` sequence (seq may be NULL: nothing configured).
 * *out (owned array) and *nout are replaced; on error *out holds what was
 * decoded so far and must still be freed with cfg_remote_write_free_all. */
im_rc cfg_remote_write_decode(cfg_dec_t *d, const cfg_node_t *seq, cfg_remote_write_t **out,
                              size_t *nout);
void cfg_remote_write_free(cfg_remote_write_t *rw);
/* Frees n entries and the array. */
void cfg_remote_write_free_all(cfg_remote_write_t *rws, size_t n);
/* Appends "remote_write:\n- url: ..." (nothing when n == 0), defaults shown and
 * secrets as <secret>, in Prometheus' key order. */
void cfg_remote_write_dump(const cfg_remote_write_t *rws, size_t n, im_buf_t *out);

#endif
