/* k8s_sd.c — kubernetes_sd_configs: decoding, validation as Prometheus 2.42
 * does it at load time, copying, a comparison key, and the dump. */
#include <string.h>

#include "config/k8s_sd.h"
#include "config/k8s_selector.h"
#include "util/mem.h"

static const char *const role_names[K8S_NROLES] = {"pod",           "service", "endpoints",
                                                   "endpointslice", "node",    "ingress"};

const char *k8s_role_name(k8s_role_t r)
{
    return r < K8S_NROLES ? role_names[r] : "?";
}

bool k8s_role_parse(const char *s, k8s_role_t *out)
{
    for (int i = 0; i < K8S_NROLES; i++)
        if (!strcmp(s, role_names[i])) {
            *out = (k8s_role_t)i;
            return true;
        }
    return false;
}

bool k8s_role_watches(k8s_role_t role, k8s_kind_t k)
{
    switch (role) {
    case K8S_ROLE_ENDPOINTS:
        return k == K8S_ROLE_ENDPOINTS || k == K8S_ROLE_SERVICE || k == K8S_ROLE_POD;
    case K8S_ROLE_ENDPOINTSLICE:
        return k == K8S_ROLE_ENDPOINTSLICE || k == K8S_ROLE_SERVICE || k == K8S_ROLE_POD;
    default: return k == role;
    }
}

bool k8s_attach_allowed(k8s_role_t r)
{
    return r == K8S_ROLE_POD || r == K8S_ROLE_ENDPOINTS || r == K8S_ROLE_ENDPOINTSLICE;
}

void k8s_sd_cfg_clear(k8s_sd_cfg_t *c)
{
    im_free(c->api_server);
    im_free(c->kubeconfig_file);
    cfg_strv_free(c->namespaces, c->nnamespaces);
    for (int i = 0; i < K8S_NROLES; i++) {
        im_free(c->label_sel[i]);
        im_free(c->field_sel[i]);
    }
    cfg_http_client_free(&c->http);
    memset(c, 0, sizeof *c);
}

static char *dup0(const char *s)
{
    return s ? im_strdup(s) : NULL;
}

void k8s_sd_cfg_copy(k8s_sd_cfg_t *d, const k8s_sd_cfg_t *s)
{
    *d = *s;
    d->api_server = dup0(s->api_server);
    d->kubeconfig_file = dup0(s->kubeconfig_file);
    d->namespaces = im_calloc(s->nnamespaces + 1, sizeof(char *));
    for (size_t i = 0; i < s->nnamespaces; i++) d->namespaces[i] = im_strdup(s->namespaces[i]);
    for (int i = 0; i < K8S_NROLES; i++) {
        d->label_sel[i] = dup0(s->label_sel[i]);
        d->field_sel[i] = dup0(s->field_sel[i]);
    }
    cfg_http_client_copy(&d->http, &s->http);
}

static void key_str(im_buf_t *o, const char *s)
{
    if (s)
        (void)im_buf_printf(o, "%zu:%s;", strlen(s), s);
    else
        (void)im_buf_puts(o, "-;");
}

void k8s_sd_cfg_key(const k8s_sd_cfg_t *c, im_buf_t *o)
{
    (void)im_buf_printf(o, "%d;%d;%d;", (int)c->role, c->own_namespace, c->attach_node);
    key_str(o, c->api_server);
    key_str(o, c->kubeconfig_file);
    for (size_t i = 0; i < c->nnamespaces; i++) key_str(o, c->namespaces[i]);
    (void)im_buf_puts(o, "|");
    for (int i = 0; i < K8S_NROLES; i++) {
        key_str(o, c->label_sel[i]);
        key_str(o, c->field_sel[i]);
    }
    /* the HTTP client settings as their dump shows them, secrets included */
    const cfg_http_client_t *h = &c->http;
    const char *s[] = {h->basic_user,      h->basic_pass,     h->basic_pass_file, h->auth_type,
                       h->auth_cred,       h->auth_cred_file, h->tls.ca_file,     h->tls.ca,
                       h->tls.cert_file,   h->tls.cert,       h->tls.key_file,    h->tls.key,
                       h->tls.server_name, h->proxy_url};
    for (size_t i = 0; i < IM_ARRAY_LEN(s); i++) key_str(o, s[i]);
    for (size_t i = 0; i < h->nproxy_hdr; i++) {
        key_str(o, h->proxy_hdr_names[i]);
        key_str(o, h->proxy_hdr_values[i]);
    }
    (void)im_buf_printf(o, "%d;%d;%d;%d;%d;%d", h->has_basic, h->tls.insecure_skip_verify,
                        (int)h->tls.min_version, (int)h->tls.max_version, h->follow_redirects,
                        h->enable_http2);
}

static bool custom_http(const cfg_http_client_t *h)
{
    return h->has_basic || h->auth_type || h->tls.ca_file || h->tls.ca || h->tls.cert_file ||
           h->tls.cert || h->tls.key_file || h->tls.key || h->tls.server_name ||
           h->tls.insecure_skip_verify || h->proxy_url || h->nproxy_hdr;
}

im_rc k8s_sd_cfg_validate(const k8s_sd_cfg_t *c, im_err_t *err)
{
    for (int k = 0; k < K8S_NROLES; k++)
        if ((c->label_sel[k] || c->field_sel[k]) && !k8s_role_watches(c->role, (k8s_kind_t)k))
            return im_err_set(err, IM_EINVAL, "%s role supports only %s selectors",
                              k8s_role_name(c->role),
                              c->role == K8S_ROLE_ENDPOINTS       ? "pod, service, endpoints"
                              : c->role == K8S_ROLE_ENDPOINTSLICE ? "pod, service, endpointslice"
                                                                  : k8s_role_name(c->role));
    if (c->api_server && c->kubeconfig_file)
        return im_err_set(err, IM_EINVAL,
                          "cannot use 'kubeconfig_file' and 'api_server' simultaneously");
    if (c->kubeconfig_file && custom_http(&c->http))
        return im_err_set(err, IM_EINVAL,
                          "cannot use a custom HTTP client configuration together with "
                          "'kubeconfig_file'");
    if (!c->api_server && !c->kubeconfig_file && custom_http(&c->http))
        return im_err_set(err, IM_EINVAL,
                          "to use custom HTTP client configuration please provide the "
                          "'api_server' URL explicitly");
    if (c->api_server && strncmp(c->api_server, "http://", 7) &&
        strncmp(c->api_server, "https://", 8))
        return im_err_set(err, IM_EINVAL, "api_server %s: scheme must be http or https",
                          c->api_server);
    return IM_OK;
}

static const char *const keys[] = {
    "role", "api_server", "kubeconfig_file", "namespaces", "selectors", "attach_metadata", NULL};

im_rc cfg_k8s_sd_decode(cfg_dec_t *d, const cfg_node_t *seq, k8s_sd_cfg_t **out, size_t *nout)
{
    static const char *const nkeys[] = {"names", "own_namespace", NULL};
    static const char *const skeys[] = {"role", "label", "field", NULL};
    static const char *const akeys[] = {"node", NULL};
    const char *const *lists[] = {keys, cfg_http_client_keys, NULL};
    if (!seq) return IM_OK;
    if (seq->type != CFG_NODE_SEQ) return cfg_fail(d, seq, "kubernetes_sd_configs must be a list");
    *out = im_calloc(seq->nkids ? seq->nkids : 1, sizeof **out);
    for (size_t i = 0; i < seq->nkids; i++) {
        const cfg_node_t *n = seq->kids[i];
        k8s_sd_cfg_t *k = &(*out)[(*nout)++];
        cfg_http_client_init(&k->http);
        im_rc rc = cfg_check_map_lists(d, n, "kubernetes_sd_config", lists);
        if (rc) return rc;
        char *role = NULL;
        if ((rc = cfg_get_str(d, n, "role", &role))) return rc;
        bool ok = role && k8s_role_parse(role, &k->role);
        im_free(role);
        if (!ok)
            return cfg_fail(d, cfg_get(n, "role") ? cfg_get(n, "role") : n,
                            "role missing or unknown (one of: pod, service, endpoints, "
                            "endpointslice, node, ingress)");
        if ((rc = cfg_get_str(d, n, "api_server", &k->api_server))) return rc;
        if ((rc = cfg_get_str(d, n, "kubeconfig_file", &k->kubeconfig_file))) return rc;
        if (k->api_server && !*k->api_server) {
            im_free(k->api_server);
            k->api_server = NULL;
        }
        const cfg_node_t *ns = cfg_get(n, "namespaces");
        if (ns) {
            if ((rc = cfg_check_map(d, ns, "namespaces", nkeys))) return rc;
            if ((rc = cfg_get_strlist(d, ns, "names", &k->namespaces, &k->nnamespaces))) return rc;
            if ((rc = cfg_get_bool(d, ns, "own_namespace", &k->own_namespace))) return rc;
        }
        const cfg_node_t *am = cfg_get(n, "attach_metadata");
        if (am) {
            if ((rc = cfg_check_map(d, am, "attach_metadata", akeys))) return rc;
            if ((rc = cfg_get_bool(d, am, "node", &k->attach_node))) return rc;
        }
        const cfg_node_t *sels = cfg_get(n, "selectors");
        if (sels && sels->type != CFG_NODE_SEQ)
            return cfg_fail(d, sels, "selectors must be a list");
        for (size_t s = 0; sels && s < sels->nkids; s++) {
            const cfg_node_t *sn = sels->kids[s];
            if ((rc = cfg_check_map(d, sn, "selector", skeys))) return rc;
            char *sr = NULL;
            k8s_role_t r;
            if ((rc = cfg_get_str(d, sn, "role", &sr))) return rc;
            ok = sr && k8s_role_parse(sr, &r);
            im_free(sr);
            if (!ok) return cfg_fail(d, sn, "selector role missing or unknown");
            if (k->label_sel[r] || k->field_sel[r])
                return cfg_fail(d, sn, "duplicated selector role: %s", k8s_role_name(r));
            if ((rc = cfg_get_str(d, sn, "label", &k->label_sel[r]))) return rc;
            if ((rc = cfg_get_str(d, sn, "field", &k->field_sel[r]))) return rc;
            /* the syntax, as Prometheus checks it at load (field first) */
            im_err_t se;
            im_err_clear(&se);
            if (k8s_field_selector_check(k->field_sel[r], &se) ||
                k8s_label_selector_check(k->label_sel[r], &se))
                return cfg_fail(d, sn, "%s", se.msg);
            if (!k->label_sel[r] && !k->field_sel[r]) k->label_sel[r] = im_strdup("");
        }
        if ((rc = cfg_http_client_decode(d, n, &k->http))) return rc;
        im_err_t e;
        im_err_clear(&e);
        if (k8s_sd_cfg_validate(k, &e)) return cfg_fail(d, n, "%s", e.msg);
    }
    return IM_OK;
}

void cfg_k8s_sd_dump(const k8s_sd_cfg_t *v, size_t n, im_buf_t *o)
{
    if (!n) return;
    (void)im_buf_puts(o, "  kubernetes_sd_configs:\n");
    for (size_t i = 0; i < n; i++) {
        const k8s_sd_cfg_t *k = &v[i];
        (void)im_buf_printf(o, "  - role: %s\n", k8s_role_name(k->role));
        if (k->api_server) {
            (void)im_buf_puts(o, "    api_server: ");
            cfg_emit_url(o, k->api_server);
            (void)im_buf_putc(o, '\n');
        }
        if (k->kubeconfig_file) cfg_emit_kv(o, 4, "kubeconfig_file", k->kubeconfig_file);
        (void)im_buf_puts(o, "    namespaces:\n");
        (void)im_buf_printf(o, "      own_namespace: %s\n", k->own_namespace ? "true" : "false");
        if (k->nnamespaces) {
            (void)im_buf_puts(o, "      names:\n");
            for (size_t s = 0; s < k->nnamespaces; s++) {
                (void)im_buf_puts(o, "      - ");
                cfg_emit_str(o, k->namespaces[s]);
                (void)im_buf_putc(o, '\n');
            }
        }
        bool any = false;
        for (int r = 0; r < K8S_NROLES; r++) {
            if (!k->label_sel[r] && !k->field_sel[r]) continue;
            if (!any) (void)im_buf_puts(o, "    selectors:\n");
            any = true;
            (void)im_buf_printf(o, "    - role: %s\n", k8s_role_name((k8s_role_t)r));
            if (k->label_sel[r] && *k->label_sel[r]) cfg_emit_kv(o, 6, "label", k->label_sel[r]);
            if (k->field_sel[r]) cfg_emit_kv(o, 6, "field", k->field_sel[r]);
        }
        cfg_http_client_dump(&k->http, o, 4);
        if (k->attach_node) (void)im_buf_puts(o, "    attach_metadata:\n      node: true\n");
    }
}
