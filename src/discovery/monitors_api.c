/* monitors_api.c — the kubernetes_monitors: section: its strict decoding, and
 * reading the selected PodMonitors / ServiceMonitors (and the Secrets they
 * reference) from the API server with one List per kind and namespace, turned
 * into scrape_configs text by monitors.c. The daemon calls this when it loads
 * (or reloads) the configuration, and watches the same objects between reloads
 * (discovery_monitors_watch, on k8s_client.c's informers): when their
 * fingerprint differs from the one the last load read, it reloads. */
#include "util/base.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "discovery/generate.h"
#include "discovery/k8s.h"
#include "util/base64.h"
#include "util/log.h"

/* ---- Talking to the API server ---- */

typedef struct api {
    char base[1024];               /* https://host:port, no trailing slash */
    const cfg_http_client_t *http; /* borrowed */
    int64_t max;
    im_err_t *err;
    json_t *secrets; /* "NS/NAME" -> the Secret read, or null when it could not be */
} api_t;

typedef struct body {
    im_buf_t b;
    bool over;
} body_t;

static size_t on_body(char *p, size_t sz, size_t n, void *arg)
{
    body_t *b = arg;
    if (im_buf_append(&b->b, p, sz * n) != IM_OK) {
        b->over = true;
        return 0;
    }
    return sz * n;
}

/* GET base+path; *out (owned) is the body of a 200 answer. */
static im_rc api_get(api_t *a, const char *path, char **out, size_t *len, long *status)
{
    char url[4096];
    snprintf(url, sizeof url, "%s%s", a->base, path);
    CURL *h = NULL;
    body_t b = {.over = false};
    im_buf_init(&b.b, (size_t)a->max);
    cfg_http_lists_t l = {curl_slist_append(NULL, "Accept: application/json"), NULL};
    im_rc rc = cfg_http_client_handle(a->http, &h, url, on_body, &b, NULL, &l, a->err);
    if (rc == IM_OK) {
        curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
        CURLcode cc = curl_easy_perform(h);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
        if (b.over)
            rc = im_err_set(a->err, IM_ELIMIT,
                            "GET %s: answer larger than %lld bytes (kubernetes_monitors."
                            "max_response_bytes)",
                            url, (long long)a->max);
        else if (cc != CURLE_OK)
            rc = im_err_set(a->err, IM_EIO, "GET %s: %s", url, curl_easy_strerror(cc));
    }
    cfg_http_lists_free(&l);
    curl_easy_cleanup(h);
    if (rc != IM_OK) {
        im_buf_free(&b.b);
        return rc;
    }
    *out = im_buf_steal(&b.b, len);
    if (!*out) {
        *out = im_strdup("");
        *len = 0;
    }
    return IM_OK;
}

/* Secret data (base64) to an owned NUL-terminated string; NULL when malformed
 * or when the value holds a NUL byte. */
static char *b64decode(const char *s)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    size_t n = 0;
    if (im_base64_decode(s, strlen(s), &b) != IM_OK || memchr(b.data ? b.data : "", 0, b.len)) {
        im_buf_free(&b);
        return NULL;
    }
    char *o = im_buf_steal(&b, &n);
    return o ? o : im_strdup("");
}

/* GETs Secret ns/name once per fetch (a.secrets remembers it, read or not: the
 * watch follows every Secret referenced). */
static json_t *get_secret(api_t *a, const char *ns, const char *name, im_err_t *err)
{
    char key[600], path[1024];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    json_t *j = json_object_get(a->secrets, key);
    if (j) {
        if (json_is_null(j)) im_err_set(err, IM_ENOTFOUND, "Secret %s cannot be read", key);
        return json_is_null(j) ? NULL : j;
    }
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/secrets/%s", ns, name);
    char *body = NULL;
    size_t len = 0;
    long status = 0;
    im_err_t *saved = a->err;
    a->err = err;
    im_rc rc = api_get(a, path, &body, &len, &status);
    a->err = saved;
    if (rc == IM_OK && status != 200) {
        im_err_set(err, IM_ENOTFOUND, "GET %s: HTTP %ld", path, status);
    } else if (rc == IM_OK) {
        /* loaded apart from the test: json_is_object() is a macro that
         * evaluates its argument twice */
        j = json_loadb(body, len, 0, NULL);
        if (!json_is_object(j)) im_err_set(err, IM_EPARSE, "GET %s: not a JSON object", path);
    }
    if (!json_is_object(j)) {
        json_decref(j);
        j = NULL;
    }
    im_free(body);
    json_object_set_new(a->secrets, key, j ? j : json_null());
    return j;
}

static im_rc read_secret(void *ctx, const char *ns, const char *name, const char *key, char **value,
                         im_err_t *err)
{
    json_t *j = get_secret(ctx, ns, name, err);
    if (!j) return err && err->code ? err->code : IM_ENOTFOUND;
    json_t *v = json_object_get(json_object_get(j, "data"), key);
    if (!json_is_string(v))
        return im_err_set(err, IM_ENOTFOUND, "Secret %s/%s has no key %s", ns, name, key);
    if (!(*value = b64decode(json_string_value(v))))
        return im_err_set(err, IM_EPARSE, "Secret %s/%s key %s is not valid base64 text", ns, name,
                          key);
    return IM_OK;
}

/* The lines each generated kubernetes_sd_configs entry gets: how to reach the
 * same API server (nothing in-cluster: discovery does the same by itself). */
static void sd_extra(const discovery_monitors_cfg_t *c, im_buf_t *o)
{
    if (!c->api_server) return;
    const cfg_http_client_t *h = &c->http;
    im_buf_puts(o, "      api_server: ");
    cfg_emit_str(o, c->api_server);
    im_buf_puts(o, "\n");
    if (h->has_basic) {
        im_buf_puts(o, "      basic_auth:\n");
        if (h->basic_user) cfg_emit_kv(o, 8, "username", h->basic_user);
        if (h->basic_pass) cfg_emit_kv(o, 8, "password", h->basic_pass);
        if (h->basic_pass_file) cfg_emit_kv(o, 8, "password_file", h->basic_pass_file);
    } else if (h->auth_type) {
        im_buf_puts(o, "      authorization:\n");
        cfg_emit_kv(o, 8, "type", h->auth_type);
        if (h->auth_cred) cfg_emit_kv(o, 8, "credentials", h->auth_cred);
        if (h->auth_cred_file) cfg_emit_kv(o, 8, "credentials_file", h->auth_cred_file);
    }
    const cfg_tls_t *t = &h->tls;
    if (t->ca_file || t->cert_file || t->key_file || t->server_name || t->insecure_skip_verify ||
        t->ca || t->cert || t->key) {
        im_buf_puts(o, "      tls_config:\n");
        if (t->ca_file) cfg_emit_kv(o, 8, "ca_file", t->ca_file);
        if (t->ca) cfg_emit_kv(o, 8, "ca", t->ca);
        if (t->cert_file) cfg_emit_kv(o, 8, "cert_file", t->cert_file);
        if (t->cert) cfg_emit_kv(o, 8, "cert", t->cert);
        if (t->key_file) cfg_emit_kv(o, 8, "key_file", t->key_file);
        if (t->key) cfg_emit_kv(o, 8, "key", t->key);
        if (t->server_name) cfg_emit_kv(o, 8, "server_name", t->server_name);
        if (t->insecure_skip_verify) im_buf_puts(o, "        insecure_skip_verify: true\n");
    }
    if (h->proxy_url) cfg_emit_kv(o, 6, "proxy_url", h->proxy_url);
}

static void url_escape(im_buf_t *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.' || *p == '~')
            im_buf_putc(b, (char)*p);
        else
            im_buf_printf(b, "%%%02X", *p);
    }
}

/* Fills a's base URL and the HTTP settings to use (*incluster receives the
 * in-cluster defaults when there is no api_server; the caller frees it). */
static im_rc api_connect(const discovery_monitors_cfg_t *c, const char *sa, api_t *a,
                         cfg_http_client_t *incluster, im_err_t *err)
{
    if (c->api_server) {
        snprintf(a->base, sizeof a->base, "%s", c->api_server);
    } else {
        const char *h = getenv("KUBERNETES_SERVICE_HOST"), *p = getenv("KUBERNETES_SERVICE_PORT");
        if (!h || !*h)
            return im_err_set(err, IM_EINVAL,
                              "kubernetes_monitors: no api_server and not running in a cluster "
                              "(KUBERNETES_SERVICE_HOST is not set)");
        bool v6 = strchr(h, ':') != NULL;
        snprintf(a->base, sizeof a->base, "https://%s%s%s:%s", v6 ? "[" : "", h, v6 ? "]" : "",
                 p && *p ? p : "443");
        /* The pod's credentials unless the section gives its own. */
        cfg_http_client_copy(incluster, &c->http);
        char f[4200];
        if (!incluster->auth_type && !incluster->has_basic) {
            snprintf(f, sizeof f, "%s/token", sa);
            incluster->auth_type = im_strdup("Bearer");
            incluster->auth_cred_file = im_strdup(f);
        }
        if (!incluster->tls.ca_file && !incluster->tls.ca) {
            snprintf(f, sizeof f, "%s/ca.crt", sa);
            incluster->tls.ca_file = im_strdup(f);
        }
        a->http = incluster;
    }
    size_t len0 = a->base[0] ? strlen(a->base) : 0;
    while (len0 && a->base[len0 - 1] == '/') a->base[--len0] = 0;
    return IM_OK;
}

static const char *const g_res[2] = {"servicemonitors", "podmonitors"};

void discovery_monitors_seen_free(discovery_monitors_seen_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nsecrets; i++) im_free(s->secrets[i]);
    im_free(s->secrets);
    memset(s, 0, sizeof *s);
}

im_rc discovery_monitors_watch(const discovery_monitors_cfg_t *c, const char *sa_dir,
                               const discovery_monitors_seen_t *seen, k8s_discoverer_t **out,
                               im_err_t *err)
{
    *out = NULL;
    cfg_http_client_t incluster;
    cfg_http_client_init(&incluster);
    api_t a = {.http = &c->http, .max = c->max_response_bytes, .err = err};
    im_rc rc = api_connect(c, sa_dir ? sa_dir : DISCOVERY_SA_DIR, &a, &incluster, err);
    size_t nns = c->nnamespaces ? c->nnamespaces : 1, nsec = seen ? seen->nsecrets : 0;
    k8s_watch_spec_t *specs = im_calloc(2 * nns + nsec + 1, sizeof *specs);
    char **fsel = im_calloc(nsec + 1, sizeof *fsel), **nsv = im_calloc(nsec + 1, sizeof *nsv);
    size_t n = 0;
    for (int k = 0; k < 2; k++) {
        if ((k == 0 && !c->service_monitors) || (k == 1 && !c->pod_monitors)) continue;
        for (size_t i = 0; i < nns; i++)
            specs[n++] = (k8s_watch_spec_t){.group = "/apis/monitoring.coreos.com/v1",
                                            .resource = g_res[k],
                                            .ns = c->nnamespaces ? c->namespaces[i] : "",
                                            .label_selector = c->selector};
    }
    /* Each referenced Secret by name, so a rotated one reloads the jobs. */
    for (size_t i = 0; i < nsec; i++) {
        const char *s = seen->secrets[i], *slash = strchr(s, '/');
        if (!slash) continue;
        nsv[i] = im_strndup(s, (size_t)(slash - s));
        im_buf_t f;
        im_buf_init(&f, 0);
        im_buf_printf(&f, "metadata.name=%s", slash + 1);
        fsel[i] = im_buf_steal(&f, NULL);
        specs[n++] = (k8s_watch_spec_t){
            .group = "/api/v1", .resource = "secrets", .ns = nsv[i], .field_selector = fsel[i]};
    }
    if (rc == IM_OK && n) {
        k8s_sd_cfg_t conn;
        memset(&conn, 0, sizeof conn);
        conn.api_server = a.base;
        conn.http = *a.http; /* borrowed: the watcher copies conn */
        k8s_limits_t lim = {.max_list_page_bytes = (size_t)c->max_response_bytes,
                            .max_event_bytes = (size_t)c->max_response_bytes,
                            .list_setting = "kubernetes_monitors.max_response_bytes",
                            .event_setting = "kubernetes_monitors.max_response_bytes"};
        rc = k8s_watcher_start(&conn, "kubernetes_monitors", specs, n, &lim, out, err);
    }
    for (size_t i = 0; i < nsec; i++) {
        im_free(fsel[i]);
        im_free(nsv[i]);
    }
    im_free(fsel);
    im_free(nsv);
    im_free(specs);
    cfg_http_client_free(&incluster);
    return rc;
}

im_rc discovery_monitors_fetch(const discovery_monitors_cfg_t *c, const char *sa_dir, im_buf_t *out,
                               size_t *nmonitors, discovery_monitors_seen_t *seen, im_err_t *err)
{
    const char *sa = sa_dir ? sa_dir : DISCOVERY_SA_DIR;
    cfg_http_client_t incluster;
    cfg_http_client_init(&incluster);
    api_t a = {
        .http = &c->http, .max = c->max_response_bytes, .err = err, .secrets = json_object()};
    im_rc crc = api_connect(c, sa, &a, &incluster, err);
    if (crc) {
        cfg_http_client_free(&incluster);
        json_decref(a.secrets);
        return crc;
    }
    im_buf_t extra;
    im_buf_init(&extra, 0);
    sd_extra(c, &extra);
    discovery_monitor_opts_t mo = {
        .secret = read_secret, .secret_ctx = &a, .sd_extra_yaml = extra.len ? extra.data : NULL};
    size_t count = 0;
    uint64_t fp = 0;
    im_rc rc = IM_OK;
    const char *const *res = g_res;
    static const char *const kinds[2] = {"ServiceMonitor", "PodMonitor"};
    size_t nns = c->nnamespaces ? c->nnamespaces : 1;
    for (int k = 0; k < 2 && rc == IM_OK; k++) {
        if ((k == 0 && !c->service_monitors) || (k == 1 && !c->pod_monitors)) continue;
        for (size_t i = 0; i < nns && rc == IM_OK; i++) {
            im_buf_t path;
            im_buf_init(&path, 0);
            im_buf_puts(&path, "/apis/monitoring.coreos.com/v1");
            if (c->nnamespaces) {
                im_buf_puts(&path, "/namespaces/");
                url_escape(&path, c->namespaces[i]);
            }
            im_buf_printf(&path, "/%s", res[k]);
            if (c->selector && *c->selector) {
                im_buf_puts(&path, "?labelSelector=");
                url_escape(&path, c->selector);
            }
            char *body = NULL;
            size_t len = 0;
            long status = 0;
            rc = api_get(&a, path.data, &body, &len, &status);
            if (rc == IM_OK && status != 200)
                rc =
                    im_err_set(err, IM_EIO, "GET %s%s: HTTP %ld (the ClusterRole needs list on %s)",
                               a.base, path.data, status, res[k]);
            json_t *list = rc == IM_OK ? json_loadb(body, len, 0, NULL) : NULL;
            json_t *items = json_object_get(list, "items");
            if (rc == IM_OK && !json_is_array(items))
                rc = im_err_set(err, IM_EPARSE, "GET %s%s: not a List", a.base, path.data);
            if (rc != IM_OK) /* say which list: the log line names resource and namespace */
                im_err_prefix(err, "listing %s in %s%s", res[k],
                              c->nnamespaces ? "namespace " : "all namespaces",
                              c->nnamespaces ? c->namespaces[i] : "");
            size_t j;
            json_t *it;
            json_array_foreach(items, j, it)
            {
                if (rc) break;
                fp = k8s_fingerprint_add(fp, res[k], it);
                /* Items of a List may omit their kind. */
                json_object_set_new(it, "kind", json_string(kinds[k]));
                size_t tlen = json_dumpb(it, NULL, 0, JSON_COMPACT);
                char *txt = im_malloc(tlen + 1);
                tlen = json_dumpb(it, txt, tlen, JSON_COMPACT);
                size_t before = out->len;
                im_err_t me;
                im_err_clear(&me);
                im_rc mrc = discovery_monitor_scrape_configs(txt, tlen, &mo, out, NULL, &me);
                im_free(txt);
                if (mrc == IM_ELIMIT) {
                    rc = im_err_set(err, mrc, "%s", me.msg);
                } else if (mrc != IM_OK) {
                    out->len = before; /* drop the partial jobs of this monitor */
                    out->data[before] = 0;
                    IM_WARN("Skipping a monitor that cannot be translated", "err=%s",
                            im_logq(me.msg));
                } else {
                    count++;
                }
            }
            json_decref(list);
            im_free(body);
            im_buf_free(&path);
        }
    }
    im_buf_free(&extra);
    cfg_http_client_free(&incluster);
    if (nmonitors) *nmonitors = count;
    if (seen && rc == IM_OK) {
        discovery_monitors_seen_free(seen);
        const char *key;
        json_t *s;
        seen->secrets = im_calloc(json_object_size(a.secrets) + 1, sizeof(char *));
        json_object_foreach(a.secrets, key, s)
        {
            seen->secrets[seen->nsecrets++] = im_strdup(key);
            if (!json_is_null(s)) fp = k8s_fingerprint_add(fp, "secrets", s);
        }
        seen->fingerprint = fp;
    }
    json_decref(a.secrets);
    return rc;
}
