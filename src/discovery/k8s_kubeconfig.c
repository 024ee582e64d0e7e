/* k8s_kubeconfig.c — reads a kubeconfig file (YAML, as kubectl writes it) for
 * kubernetes_sd_configs' kubeconfig_file: the current context's cluster (server,
 * certificate-authority[-data], insecure-skip-tls-verify) and user
 * (client-certificate[-data], client-key[-data], token, tokenFile,
 * username/password). Exec and auth-provider plugins are refused with a clear
 * error rather than ignored. */
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "k8s_int.h"
#include "util/mem.h"

/* YAML node -> JSON (scalars as strings). */
static json_t *to_json(yaml_document_t *doc, yaml_node_t *n, int depth)
{
    if (!n || depth > 64) return json_null();
    switch (n->type) {
    case YAML_SCALAR_NODE:
        return json_stringn((const char *)n->data.scalar.value, n->data.scalar.length);
    case YAML_SEQUENCE_NODE: {
        json_t *a = json_array();
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++)
            json_array_append_new(a, to_json(doc, yaml_document_get_node(doc, *it), depth + 1));
        return a;
    }
    case YAML_MAPPING_NODE: {
        json_t *o = json_object();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
            yaml_node_t *k = yaml_document_get_node(doc, p->key);
            if (!k || k->type != YAML_SCALAR_NODE) continue;
            char *ks = im_strndup((const char *)k->data.scalar.value, k->data.scalar.length);
            json_object_set_new(o, ks,
                                to_json(doc, yaml_document_get_node(doc, p->value), depth + 1));
            im_free(ks);
        }
        return o;
    }
    default: return json_null();
    }
}

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s && *s ? s : NULL;
}

/* The "name"d entry's inner object (contexts[].context, clusters[].cluster, ...). */
static json_t *named(const json_t *root, const char *list, const char *inner, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(root, list), i, e)
    {
        const char *n = str(e, "name");
        if (n && !strcmp(n, name)) return json_object_get(e, inner);
    }
    return NULL;
}

static int b64v(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

static im_rc b64_decode(const char *s, im_buf_t *out)
{
    uint32_t acc = 0;
    int bits = 0;
    for (; *s; s++) {
        if (*s == '=' || *s == '\n' || *s == '\r' || *s == ' ') continue;
        int v = b64v((unsigned char)*s);
        if (v < 0) return IM_EPARSE;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (im_buf_putc(out, (char)((acc >> bits) & 0xFF))) return IM_ELIMIT;
        }
    }
    return IM_OK;
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
    FILE *f = fopen(path, "rb");
    if (!f) return im_err_set(err, IM_EIO, "cannot open kubeconfig_file %s", path);
    yaml_parser_t p;
    yaml_document_t doc;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_file(&p, f);
    int ok = yaml_parser_load(&p, &doc);
    fclose(f);
    if (!ok) {
        im_rc rc = im_err_set(err, IM_EPARSE, "kubeconfig_file %s: %s at line %zu", path,
                              p.problem ? p.problem : "invalid YAML", p.problem_mark.line + 1);
        yaml_parser_delete(&p);
        return rc;
    }
    json_t *root = to_json(&doc, yaml_document_get_root_node(&doc), 0);
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    char *pc = im_strdup(path);
    char *dir = im_strdup(dirname(pc));
    im_free(pc);
    im_rc rc = IM_OK;
    const char *cur = str(root, "current-context");
    json_t *ctx = cur ? named(root, "contexts", "context", cur) : NULL;
    json_t *cl =
        ctx && str(ctx, "cluster") ? named(root, "clusters", "cluster", str(ctx, "cluster")) : NULL;
    json_t *user = ctx && str(ctx, "user") ? named(root, "users", "user", str(ctx, "user")) : NULL;
    if (!ctx || !cl || !str(cl, "server")) {
        rc = im_err_set(err, IM_EINVAL,
                        "kubeconfig_file %s: no current-context with a cluster server", path);
        goto out;
    }
    d->base = im_strdup(str(cl, "server"));
    size_t bl = strlen(d->base);
    while (bl && d->base[bl - 1] == '/') d->base[--bl] = 0;
    const char *v;
    if ((v = str(cl, "insecure-skip-tls-verify")) && !strcmp(v, "true")) d->insecure = true;
    if ((v = str(cl, "certificate-authority"))) d->ca_file = rel_path(dir, v);
    im_buf_init(&d->ca_blob, 1u << 20);
    im_buf_init(&d->cert_blob, 1u << 20);
    im_buf_init(&d->key_blob, 1u << 20);
    if ((v = str(cl, "certificate-authority-data")) && b64_decode(v, &d->ca_blob)) {
        rc = im_err_set(err, IM_EPARSE, "kubeconfig_file %s: bad certificate-authority-data", path);
        goto out;
    }
    if (user) {
        if (json_object_get(user, "exec") || json_object_get(user, "auth-provider")) {
            rc = im_err_set(err, IM_EUNSUPPORTED,
                            "kubeconfig_file %s: user exec and auth-provider plugins are not "
                            "supported (use a token, tokenFile or client certificate)",
                            path);
            goto out;
        }
        if ((v = str(user, "client-certificate"))) d->cert_file = rel_path(dir, v);
        if ((v = str(user, "client-key"))) d->key_file = rel_path(dir, v);
        if ((v = str(user, "client-certificate-data")) && b64_decode(v, &d->cert_blob)) {
            rc =
                im_err_set(err, IM_EPARSE, "kubeconfig_file %s: bad client-certificate-data", path);
            goto out;
        }
        if ((v = str(user, "client-key-data")) && b64_decode(v, &d->key_blob)) {
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
    json_decref(root);
    im_free(dir);
    return rc;
}
