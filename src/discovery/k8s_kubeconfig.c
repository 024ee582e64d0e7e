/* k8s_kubeconfig.c — reads a kubeconfig file (YAML, as kubectl writes it) for
 * kubernetes_sd_configs' kubeconfig_file: the current context's cluster (server,
 * certificate-authority[-data], insecure-skip-tls-verify) and user
 * (client-certificate[-data], client-key[-data], token, tokenFile,
 * username/password). Exec and auth-provider plugins are refused with a clear
 * error rather than ignored. Parsed with config/yaml.h, the one YAML decoder;
 * keys it does not use are ignored, as kubectl ignores unknown fields. */
#include "util/base.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include "config/yaml.h"
#include "k8s_int.h"
#include "util/base64.h"
#include "util/mem.h"

/* A string value of mapping m (NULL when absent, null, empty or not a scalar):
 * kubectl ignores keys it does not know, so only these are looked at. */
static const char *str(const cfg_node_t *m, const char *k)
{
    const cfg_node_t *v = cfg_get(m, k);
    return v && v->type == CFG_NODE_SCALAR && *v->str ? v->str : NULL;
}

/* The "name"d entry's inner mapping (contexts[].context, clusters[].cluster, ...). */
static const cfg_node_t *named(const cfg_node_t *root, const char *list, const char *inner,
                               const char *name)
{
    const cfg_node_t *l = cfg_get(root, list);
    for (size_t i = 0; l && l->type == CFG_NODE_SEQ && i < l->nkids; i++) {
        const char *n = str(l->kids[i], "name");
        if (n && !strcmp(n, name)) return cfg_get(l->kids[i], inner);
    }
    return NULL;
}

static char *rel_path(const char *dir, const char *p)
{
    if (p[0] == '/') return im_strdup(p);
    size_t n = strlen(dir) + strlen(p) + 2;
    char *r = im_malloc(n);
    snprintf(r, n, "%s/%s", dir, p);
    return r;
}

im_rc k8s_kubeconfig_load(struct k8s_discoverer *d, const char *path, im_err_t *err)
{
    im_buf_t text;
    im_buf_init(&text, 16u << 20);
    int sys = 0;
    im_rc rc = cfg_read_file(path, &text, &sys);
    if (rc) {
        im_buf_free(&text);
        return rc == IM_ELIMIT ? im_err_set(err, rc, "kubeconfig_file %s: larger than 16MiB", path)
                               : im_err_set(err, IM_EIO, "cannot open kubeconfig_file %s: %s", path,
                                            strerror(sys ? sys : EIO));
    }
    cfg_node_t *root = NULL;
    rc = cfg_parse_yaml(text.data ? text.data : "", text.len, path, &root, err);
    im_buf_free(&text);
    if (rc) {
        im_err_prefix(err, "kubeconfig_file");
        return rc;
    }
    char *pc = im_strdup(path);
    char *dir = im_strdup(dirname(pc));
    im_free(pc);
    cfg_dec_t dec = {.file = path, .err = err};
    const char *cur = str(root, "current-context");
    const cfg_node_t *ctx = cur ? named(root, "contexts", "context", cur) : NULL;
    const cfg_node_t *cl =
        ctx && str(ctx, "cluster") ? named(root, "clusters", "cluster", str(ctx, "cluster")) : NULL;
    const cfg_node_t *user =
        ctx && str(ctx, "user") ? named(root, "users", "user", str(ctx, "user")) : NULL;
    if (!ctx || !cl || !str(cl, "server")) {
        rc = im_err_set(err, IM_EINVAL,
                        "kubeconfig_file %s: no current-context with a cluster server", path);
        goto out;
    }
    d->base = im_strdup(str(cl, "server"));
    size_t bl = strlen(d->base);
    while (bl && d->base[bl - 1] == '/') d->base[--bl] = 0;
    const char *v;
    if ((rc = cfg_get_bool(&dec, cl, "insecure-skip-tls-verify", &d->insecure))) goto out;
    if ((v = str(cl, "certificate-authority"))) d->ca_file = rel_path(dir, v);
    im_buf_init(&d->ca_blob, 1u << 20);
    im_buf_init(&d->cert_blob, 1u << 20);
    im_buf_init(&d->key_blob, 1u << 20);
    if ((v = str(cl, "certificate-authority-data")) &&
        im_base64_decode(v, strlen(v), &d->ca_blob)) {
        rc = im_err_set(err, IM_EPARSE, "kubeconfig_file %s: bad certificate-authority-data", path);
        goto out;
    }
    if (user) {
        if (cfg_get(user, "exec") || cfg_get(user, "auth-provider")) {
            rc = im_err_set(err, IM_EUNSUPPORTED,
                            "kubeconfig_file %s: user exec and auth-provider plugins are not "
                            "supported (use a token, tokenFile or client certificate)",
                            path);
            goto out;
        }
        if ((v = str(user, "client-certificate"))) d->cert_file = rel_path(dir, v);
        if ((v = str(user, "client-key"))) d->key_file = rel_path(dir, v);
        if ((v = str(user, "client-certificate-data")) &&
            im_base64_decode(v, strlen(v), &d->cert_blob)) {
            rc =
                im_err_set(err, IM_EPARSE, "kubeconfig_file %s: bad client-certificate-data", path);
            goto out;
        }
        if ((v = str(user, "client-key-data")) && im_base64_decode(v, strlen(v), &d->key_blob)) {
            rc = im_err_set(err, IM_EPARSE, "kubeconfig_file %s: bad client-key-data", path);
            goto out;
        }
        if ((v = str(user, "token"))) d->token = im_strdup(v);
        if ((v = str(user, "tokenFile"))) d->token_file = rel_path(dir, v);
        if (str(user, "username")) {
            d->basic_user = im_strdup(str(user, "username"));
            if ((v = str(user, "password"))) d->basic_pass = im_strdup(v);
        }
    }
out:
    cfg_node_free(root);
    im_free(dir);
    return rc;
}
