/* k8s_monitors.h — the kubernetes_monitors: section (PodMonitor / ServiceMonitor
 * selection, docs/kubernetes.md): its typed form and strict decoding. Reading the
 * selected objects and generating scrape configs from them is discovery/generate.h. */
#ifndef IM_CONFIG_K8S_MONITORS_H
#define IM_CONFIG_K8S_MONITORS_H

#include "config/http_client.h"
#include "config/yaml.h"
#include "util/base.h"

/* kubernetes_monitors:
 *   api_server: URL            # absent: in-cluster (KUBERNETES_SERVICE_HOST/PORT,
 *                              # the service-account token and CA)
 *   namespaces: {names: [..]}  # where to read monitors; absent = all namespaces
 *   selector: "k=v,k2 in (a)"  # labelSelector on the monitor objects
 *   service_monitors: true     # read ServiceMonitors (default true)
 *   pod_monitors: true         # read PodMonitors (default true)
 *   max_response_bytes: 64MiB  # largest List or Secret answer accepted
 *   <HTTP client keys>         # config/http_client.h, for the API server
 * Decoded strictly: unknown keys are errors with line:column. */
typedef struct discovery_monitors_cfg {
    char *api_server;  /* owned; NULL = in-cluster */
    char **namespaces; /* owned; none = all */
    size_t nnamespaces;
    char *selector; /* owned; NULL = every monitor */
    bool service_monitors, pod_monitors;
    int64_t max_response_bytes;
    cfg_http_client_t http;
} discovery_monitors_cfg_t;

im_rc discovery_monitors_cfg_decode(cfg_dec_t *d, const cfg_node_t *n,
                                    discovery_monitors_cfg_t *out);
void discovery_monitors_cfg_free(discovery_monitors_cfg_t *c);

#endif
