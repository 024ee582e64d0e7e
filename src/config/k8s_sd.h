/* k8s_sd.h — kubernetes_sd_configs, the configuration (Prometheus 2.42's
 * kubernetes_sd_config): role, api_server, kubeconfig_file, namespaces (names,
 * own_namespace), selectors (role, label, field), attach_metadata.node and the
 * HTTP client keys of config/http_client.h. The discovery itself is
 * discovery/k8s.h. */
#ifndef IM_CONFIG_K8S_SD_H
#define IM_CONFIG_K8S_SD_H

#include "config/http_client.h"
#include "config/yaml.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum k8s_role {
    K8S_ROLE_POD,
    K8S_ROLE_SERVICE,
    K8S_ROLE_ENDPOINTS,
    K8S_ROLE_ENDPOINTSLICE,
    K8S_ROLE_NODE,
    K8S_ROLE_INGRESS,
    K8S_NROLES,
} k8s_role_t;

/* Resources have the same numbering as roles (pod, service, endpoints, ...). */
typedef k8s_role_t k8s_kind_t;

const char *k8s_role_name(k8s_role_t r);
/* Returns false for an unknown name. */
bool k8s_role_parse(const char *s, k8s_role_t *out);

typedef struct k8s_sd_cfg {
    k8s_role_t role;
    char *api_server;      /* NULL: in-cluster or kubeconfig */
    char *kubeconfig_file; /* NULL unless set */
    char **namespaces;     /* owned; none = all namespaces */
    size_t nnamespaces;
    bool own_namespace;
    char *label_sel[K8S_NROLES], *field_sel[K8S_NROLES]; /* selectors per role; NULL unset */
    bool attach_node;
    cfg_http_client_t http; /* basic_auth, authorization, tls_config, proxy, redirects */
} k8s_sd_cfg_t;

void k8s_sd_cfg_clear(k8s_sd_cfg_t *c);
void k8s_sd_cfg_copy(k8s_sd_cfg_t *dst, const k8s_sd_cfg_t *src);
/* The resources a role lists and watches (besides nodes for attach_metadata):
 * endpoints and endpointslice also watch services and pods. */
bool k8s_role_watches(k8s_role_t role, k8s_kind_t kind);
/* attach_metadata.node applies to pod, endpoints and endpointslice. */
bool k8s_attach_allowed(k8s_role_t role);
/* Appends a text that is equal for two configs exactly when they are equal. */
void k8s_sd_cfg_key(const k8s_sd_cfg_t *c, im_buf_t *out);
/* Checks what Prometheus checks when loading (selectors allowed for the role,
 * api_server vs kubeconfig_file vs HTTP settings); err names the problem. */
im_rc k8s_sd_cfg_validate(const k8s_sd_cfg_t *c, im_err_t *err);

/* Decodes a kubernetes_sd_configs list (NULL seq: none) into *out (owned array,
 * *n entries), validating as k8s_sd_cfg_validate does. */
im_rc cfg_k8s_sd_decode(cfg_dec_t *d, const cfg_node_t *seq, k8s_sd_cfg_t **out, size_t *n);
/* Appends the list as YAML (for /api/v1/status/config), secrets as <secret>. */
void cfg_k8s_sd_dump(const k8s_sd_cfg_t *v, size_t n, im_buf_t *out);

#endif
