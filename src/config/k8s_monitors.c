/* k8s_monitors.c — strict decoding of the kubernetes_monitors: section. */
#include "util/base.h"

#include <string.h>

#include "config/k8s_monitors.h"
#include "config/k8s_selector.h"
#include "util/mem.h"

/* ---- Decoding ---- */

im_rc discovery_monitors_cfg_decode(cfg_dec_t *d, const cfg_node_t *n,
                                    discovery_monitors_cfg_t *out)
{
    static const char *const keys[] = {
        "api_server",   "namespaces",         "selector", "service_monitors",
        "pod_monitors", "max_response_bytes", NULL};
    static const char *const *const lists[] = {keys, cfg_http_client_keys, NULL};
    memset(out, 0, sizeof *out);
    cfg_http_client_init(&out->http);
    out->service_monitors = out->pod_monitors = true;
    out->max_response_bytes = 64 << 20;
    im_rc rc = cfg_check_map_lists(d, n, "kubernetes_monitors", lists);
    if (rc) return rc;
    if ((rc = cfg_get_str(d, n, "api_server", &out->api_server))) return rc;
    if (out->api_server && strncmp(out->api_server, "http://", 7) &&
        strncmp(out->api_server, "https://", 8))
        return cfg_fail(d, cfg_get(n, "api_server"), "api_server must be an http or https URL");
    const cfg_node_t *ns = cfg_get(n, "namespaces");
    if (ns) {
        if ((rc = cfg_check_map(d, ns, "kubernetes_monitors.namespaces",
                                (const char *const[]){"names", NULL})))
            return rc;
        if ((rc = cfg_get_strlist(d, ns, "names", &out->namespaces, &out->nnamespaces))) return rc;
        for (size_t i = 0; i < out->nnamespaces; i++)
            if (!*out->namespaces[i])
                return cfg_fail(d, cfg_get(ns, "names"), "a namespace name is empty");
    }
    if ((rc = cfg_get_str(d, n, "selector", &out->selector))) return rc;
    im_err_t se;
    im_err_clear(&se);
    if (k8s_label_selector_check(out->selector, &se))
        return cfg_fail(d, cfg_get(n, "selector"), "selector: %s", se.msg);
    if ((rc = cfg_get_bool(d, n, "service_monitors", &out->service_monitors))) return rc;
    if ((rc = cfg_get_bool(d, n, "pod_monitors", &out->pod_monitors))) return rc;
    if ((rc = cfg_get_bytes(d, n, "max_response_bytes", &out->max_response_bytes))) return rc;
    if (out->max_response_bytes <= 0)
        return cfg_fail(d, cfg_get(n, "max_response_bytes"), "max_response_bytes must be positive");
    if (!out->service_monitors && !out->pod_monitors)
        return cfg_fail(d, n, "service_monitors and pod_monitors are both false: nothing to read");
    return cfg_http_client_decode(d, n, &out->http);
}

void discovery_monitors_cfg_free(discovery_monitors_cfg_t *c)
{
    if (!c) return;
    im_free(c->api_server);
    cfg_strv_free(c->namespaces, c->nnamespaces);
    im_free(c->selector);
    cfg_http_client_free(&c->http);
    memset(c, 0, sizeof *c);
}
