/* alerting.h — the typed `alerting:` section: alertmanagers (each with its HTTP
 * client configuration, config/http_client.h) and alert_relabel_configs.
 *
 * Keys of an alertmanager entry (Prometheus 2.42, the ones infermon
 * implements): scheme (http|https, default http), path_prefix (default ""),
 * timeout (default 10s), api_version (v2; v1 is refused), static_configs
 * (targets, labels), and the HTTP client keys. Service discovery other than
 * static_configs, and relabel_configs of alertmanager targets, are refused by
 * name ("... is not supported"), not silently ignored. */
#ifndef IM_CONFIG_ALERTING_H
#define IM_CONFIG_ALERTING_H

#include "config/http_client.h"
#include "config/yaml.h"
#include "labels/relabel.h"
#include "util/base.h"
#include "util/err.h"

typedef struct cfg_alertmanager {
    char *scheme;      /* "http" | "https" (owned) */
    char *path_prefix; /* owned, "" or "/prefix" */
    char **targets;    /* owned host:port list (all static_configs) */
    size_t ntargets;
    int64_t timeout_ms;     /* default 10s */
    cfg_http_client_t http; /* basic_auth, authorization, tls_config, proxy, redirects */
} cfg_alertmanager_t;

typedef struct cfg_alerting {
    cfg_alertmanager_t *ams; /* owned */
    size_t nams;
    labels_relabel_t *relabel; /* alert_relabel_configs, compiled (owned) */
    size_t nrelabel;
    int refs; /* atomic; immutable once decoded, shared by the config and the notifier */
} cfg_alerting_t;

/* Decodes the `alerting:` mapping (NULL: none, an empty section) into a new
 * section with one reference (*out; NULL on error, nothing leaks). */
im_rc cfg_alerting_decode(cfg_dec_t *d, const cfg_node_t *alerting, cfg_alerting_t **out);
cfg_alerting_t *cfg_alerting_ref(cfg_alerting_t *a);
/* Drops one reference (NULL is a no-op); the last one frees. */
void cfg_alerting_unref(cfg_alerting_t *a);

#endif
