/* generate.h — scrape configuration generated from the cluster: contract.
 *
 * Two producers of plain scrape_configs YAML text, which the configuration
 * loader then reads like any file (so `infermon check config` can show it and
 * nothing is hidden):
 *
 * 1. The in-cluster default (incluster.c). `infermon run` without
 *    --config.file, inside a Kubernetes pod (KUBERNETES_SERVICE_HOST set and the
 *    service-account token readable), uses this configuration instead of the
 *    localhost default: pods annotated prometheus.io/scrape (port, path, scheme,
 *    param_* from the other annotations), dcgm-exporter pods by their usual
 *    labels on port 9400, and Kueue's controller-manager on its https metrics
 *    port 8443 with the service-account token. Series get namespace, pod, node
 *    (and container where a target is one container's port). docs/kubernetes.md
 *    explains every rule.
 *
 * 2. prometheus-operator monitors (monitors.c). A PodMonitor or ServiceMonitor
 *    (monitoring.coreos.com/v1) object, as JSON from the API server, becomes the
 *    scrape_configs entries the operator would generate for it: one job per
 *    endpoint, named serviceMonitor/<ns>/<name>/<i> or podMonitor/<ns>/<name>/<i>,
 *    with the operator's relabelling, then the user's relabelings and
 *    metricRelabelings. Secrets referenced by basicAuth, bearerTokenSecret,
 *    authorization and tlsConfig (ca, cert, keySecret) are resolved by a
 *    callback (the caller reads them through the API); the values are written
 *    inline into the YAML.
 *
 * Both are pure text generators: no I/O except what the caller passes in
 * (the secret callback, the service-account directory for detection). The
 * output is appended to a caller-owned im_buf_t; on error the buffer holds a
 * partial document the caller discards. */
#ifndef IM_DISCOVERY_GENERATE_H
#define IM_DISCOVERY_GENERATE_H

#include "config/k8s_monitors.h"
#include "config/http_client.h"
#include "config/yaml.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

/* Where the kubelet mounts a pod's service-account credentials. */
#define DISCOVERY_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* ---- In-cluster default ---- */

/* True when this process runs in a Kubernetes pod: KUBERNETES_SERVICE_HOST is set
 * and non-empty, and <sa_dir>/token is a readable file (sa_dir NULL =
 * DISCOVERY_SA_DIR). */
bool discovery_incluster_detect(const char *sa_dir);

/* Appends the in-cluster default configuration (a whole config file: global and
 * scrape_configs, valid for Prometheus too; the store stays at ./data) to out. sa_dir (NULL =
 * DISCOVERY_SA_DIR) is where the Kueue job reads its bearer token from. Fails only when out's cap
 * is hit. */
im_rc discovery_incluster_config(const char *sa_dir, im_buf_t *out, im_err_t *err);

/* ---- prometheus-operator monitors ---- */

typedef enum discovery_monitor_kind {
    DISCOVERY_SERVICE_MONITOR,
    DISCOVERY_POD_MONITOR,
} discovery_monitor_kind_t;

/* Resolves key `key` of Secret `ns/name`. Returns IM_OK with *value (owned by the
 * caller, im_free) or an error (err filled: not found, forbidden, ...). */
typedef im_rc (*discovery_secret_fn)(void *ctx, const char *ns, const char *name, const char *key,
                                     char **value, im_err_t *err);

typedef struct discovery_monitor_opts {
    discovery_secret_fn secret; /* NULL: any secret reference is an error */
    void *secret_ctx;
    /* Each job's kubernetes_sd_configs entry gets these lines appended verbatim
     * (already indented by the caller for the sd config level, e.g. api_server or
     * tls_config of kubernetes_monitors:); NULL = in-cluster. */
    const char *sd_extra_yaml;
} discovery_monitor_opts_t;

/* Appends one scrape_configs list item per endpoint of the monitor object (the
 * JSON of one PodMonitor or ServiceMonitor, as the API server returns it; kind
 * taken from its "kind") to out, each starting with "- job_name:" at column 0.
 * An object with no endpoints appends nothing. Errors (err filled, naming the
 * object and the field): malformed JSON, a field of the wrong type, an unknown
 * selector operator, a secret that cannot be resolved. *kind_out may be NULL. */
im_rc discovery_monitor_scrape_configs(const char *json, size_t len,
                                       const discovery_monitor_opts_t *opts, im_buf_t *out,
                                       discovery_monitor_kind_t *kind_out, im_err_t *err);

/* ---- The kubernetes_monitors: section ---- */

/* What a fetch read: the daemon compares the watch with it, and the watch
 * follows the Secrets in it. */
typedef struct discovery_monitors_seen {
    uint64_t fingerprint; /* k8s_fingerprint_add of every listed monitor ("servicemonitors",
                           * "podmonitors") and every Secret read ("secrets") */
    char **secrets;       /* "NS/NAME" of every Secret referenced, read or not (owned) */
    size_t nsecrets;
} discovery_monitors_seen_t;

void discovery_monitors_seen_free(discovery_monitors_seen_t *s);

/* Lists the selected ServiceMonitors and PodMonitors from the API server
 * (GET /apis/monitoring.coreos.com/v1[/namespaces/NS]/{servicemonitors,podmonitors}),
 * reads the Secrets they reference (GET /api/v1/namespaces/NS/secrets/NAME, each
 * once), and appends their scrape_configs items to out
 * (discovery_monitor_scrape_configs; each job's kubernetes_sd_configs gets the
 * section's api_server and credentials). sa_dir (NULL = DISCOVERY_SA_DIR) is used
 * in-cluster. A monitor that cannot be translated is skipped with a warning
 * naming it (the others are kept). Errors: IM_EINVAL when the section cannot
 * reach any API server (no api_server outside a cluster: a settings error);
 * otherwise a failed List (err names the resource, the namespace and the URL).
 * *nmonitors (may be NULL) receives the number of monitors translated; *seen
 * (may be NULL; replaced on success) what was read. */
im_rc discovery_monitors_fetch(const discovery_monitors_cfg_t *c, const char *sa_dir, im_buf_t *out,
                               size_t *nmonitors, discovery_monitors_seen_t *seen, im_err_t *err);

/* Watches the same monitors (list+watch of servicemonitors / podmonitors per
 * selected namespace, with the selector) and each Secret of seen (may be NULL; a
 * list+watch with fieldSelector metadata.name) until k8s_discoverer_stop. The
 * daemon compares k8s_watcher_fingerprint with seen->fingerprint and reloads
 * when they differ. Errors only for settings that cannot work (no api_server
 * outside a cluster); API errors are retried by the informers (k8s.h invariant 4). */
struct k8s_discoverer;
im_rc discovery_monitors_watch(const discovery_monitors_cfg_t *c, const char *sa_dir,
                               const discovery_monitors_seen_t *seen, struct k8s_discoverer **out,
                               im_err_t *err);

#endif
