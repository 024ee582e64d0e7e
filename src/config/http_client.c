/* http_client.c — decodes Prometheus' HTTP client keys and applies them to curl.
 *
 * Validation order and error texts follow common/config's Validate (2.42): the
 * "at most one of" checks, the basic-type refusal, cert/key pairing. Secret
 * files are read at each apply (they may be rotated), trimmed of surrounding
 * white space as Go's strings.TrimSpace does, and capped at CFG_SECRET_MAX. */
#include "util/base.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <strings.h>

#include "config/http_client.h"

#define CFG_SECRET_MAX (64u << 10)

const char *const cfg_http_client_keys[] = {
    "basic_auth", "authorization", "bearer_token",         "bearer_token_file", "oauth2",
    "tls_config", "proxy_url",     "proxy_connect_header", "follow_redirects",  "enable_http2",
    NULL};

void cfg_http_client_init(cfg_http_client_t *c)
{
    memset(c, 0, sizeof *c);
    c->follow_redirects = true;
    c->enable_http2 = true;
}

static im_rc dec_tls_version(cfg_dec_t *d, const cfg_node_t *t, const char *key,
                             cfg_tls_version_t *out)
{
    const cfg_node_t *n = cfg_get(t, key);
    if (!n) return IM_OK;
    static const char *const names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};
    for (size_t i = 0; n->type == CFG_NODE_SCALAR && i < IM_ARRAY_LEN(names); i++)
        if (strcmp(n->str, names[i]) == 0) {
            *out = (cfg_tls_version_t)(CFG_TLS10 + (int)i);
            return IM_OK;
        }
    return cfg_fail(d, n, "unknown TLS version: %s", n->type == CFG_NODE_SCALAR ? n->str : "");
}

static im_rc dec_tls(cfg_dec_t *d, const cfg_node_t *t, cfg_tls_t *o)
{
    static const char *const keys[] = {
        "ca_file",     "cert_file",   "key_file", "server_name", "insecure_skip_verify",
        "min_version", "max_version", "ca",       "cert",        "key",
        NULL};
    im_rc rc;
    if ((rc = cfg_check_map(d, t, "tls_config", keys))) return rc;
    if ((rc = cfg_get_str(d, t, "ca_file", &o->ca_file))) return rc;
    if ((rc = cfg_get_str(d, t, "ca", &o->ca))) return rc;
    if ((rc = cfg_get_str(d, t, "cert_file", &o->cert_file))) return rc;
    if ((rc = cfg_get_str(d, t, "cert", &o->cert))) return rc;
    if ((rc = cfg_get_str(d, t, "key_file", &o->key_file))) return rc;
    if ((rc = cfg_get_str(d, t, "key", &o->key))) return rc;
    if ((rc = cfg_get_str(d, t, "server_name", &o->server_name))) return rc;
    if ((rc = cfg_get_bool(d, t, "insecure_skip_verify", &o->insecure_skip_verify))) return rc;
    if ((rc = dec_tls_version(d, t, "min_version", &o->min_version))) return rc;
    if ((rc = dec_tls_version(d, t, "max_version", &o->max_version))) return rc;
    if (o->ca && o->ca_file)
        return cfg_fail(d, t, "at most one of ca and ca_file must be configured");
    if (o->cert && o->cert_file)
        return cfg_fail(d, t, "at most one of cert and cert_file must be configured");
    if (o->key && o->key_file)
        return cfg_fail(d, t, "at most one of key and key_file must be configured");
    bool has_cert = o->cert || o->cert_file, has_key = o->key || o->key_file;
    if (o->cert_file && !has_key)
        return cfg_fail(d, t, "client cert file and client key file must both be specified");
    if (has_key && !has_cert)
        return cfg_fail(d, t, "client cert file and client key file must both be specified");
    if (o->cert && !has_key)
        return cfg_fail(d, t, "client cert and client key must both be specified");
    if (o->min_version && o->max_version && o->max_version < o->min_version)
        return cfg_fail(d, t,
                        "tls_config max_version must be greater than or equal to "
                        "min_version");
    return IM_OK;
}

/* basic_auth {username, password, password_file} and authorization {type,
 * credentials, credentials_file}: a name and a secret given inline or in a file,
 * at most one of the two. keys = {name key, secret key, secret file key, NULL}. */
static im_rc dec_secret_map(cfg_dec_t *d, const cfg_node_t *n, const char *section,
                            const char *const keys[4], char **name, char **secret,
                            char **secret_file)
{
    im_rc rc;
    if ((rc = cfg_check_map(d, n, section, keys))) return rc;
    if ((rc = cfg_get_str(d, n, keys[0], name))) return rc;
    if ((rc = cfg_get_str(d, n, keys[1], secret))) return rc;
    if ((rc = cfg_get_str(d, n, keys[2], secret_file))) return rc;
    if (*secret && *secret_file)
        return cfg_fail(d, n, "at most one of %s %s & %s must be configured", section, keys[1],
                        keys[2]);
    return IM_OK;
}

im_rc cfg_http_client_decode(cfg_dec_t *d, const cfg_node_t *m, cfg_http_client_t *o)
{
    static const char *const bkeys[] = {"username", "password", "password_file", NULL};
    static const char *const akeys[] = {"type", "credentials", "credentials_file", NULL};
    im_rc rc;
    if ((rc = cfg_get_bool(d, m, "follow_redirects", &o->follow_redirects))) return rc;
    if ((rc = cfg_get_bool(d, m, "enable_http2", &o->enable_http2))) return rc;
    const cfg_node_t *oa = cfg_get(m, "oauth2");
    if (oa)
        return cfg_fail(d, oa,
                        "oauth2 is not supported by infermon; use authorization with "
                        "credentials_file holding a token refreshed outside infermon");
    const cfg_node_t *b = cfg_get(m, "basic_auth");
    if (b) {
        o->has_basic = true;
        if ((rc = dec_secret_map(d, b, "basic_auth", bkeys, &o->basic_user, &o->basic_pass,
                                 &o->basic_pass_file)))
            return rc;
    }
    const cfg_node_t *a = cfg_get(m, "authorization");
    if (a) {
        if ((rc = dec_secret_map(d, a, "authorization", akeys, &o->auth_type, &o->auth_cred,
                                 &o->auth_cred_file)))
            return rc;
        if (o->auth_type && strcasecmp(o->auth_type, "basic") == 0)
            return cfg_fail(
                d, a, "authorization type cannot be set to \"basic\", use \"basic_auth\" instead");
    }
    char *bt = NULL, *btf = NULL;
    if ((rc = cfg_get_str(d, m, "bearer_token", &bt)) ||
        (rc = cfg_get_str(d, m, "bearer_token_file", &btf))) {
        im_free(bt);
        im_free(btf);
        return rc;
    }
    if (bt || btf) {
        int nset = (b != NULL) + (a != NULL) + (bt && btf);
        im_free(o->auth_cred);
        im_free(o->auth_cred_file);
        o->auth_cred = bt;
        o->auth_cred_file = btf;
        if (nset)
            return cfg_fail(d, m,
                            "at most one of basic_auth, authorization, bearer_token & "
                            "bearer_token_file must be configured");
    }
    if (b && a)
        return cfg_fail(d, m,
                        "at most one of basic_auth, oauth2 & authorization must be configured");
    if ((o->auth_cred || o->auth_cred_file) && !o->auth_type) o->auth_type = im_strdup("Bearer");
    const cfg_node_t *t = cfg_get(m, "tls_config");
    if (t && (rc = dec_tls(d, t, &o->tls))) return rc;
    if ((rc = cfg_get_str(d, m, "proxy_url", &o->proxy_url))) return rc;
    const cfg_node_t *ph = cfg_get(m, "proxy_connect_header");
    if (ph) {
        if ((rc = cfg_get_listmap(d, m, "proxy_connect_header", &o->proxy_hdr_names,
                                  &o->proxy_hdr_values, &o->nproxy_hdr)))
            return rc;
        curl_slist_free_all(o->proxy_slist);
        o->proxy_slist = NULL;
        for (size_t i = 0; i < o->nproxy_hdr; i++) {
            const char *name = o->proxy_hdr_names[i], *val = o->proxy_hdr_values[i];
            if (!*name || strpbrk(name, ": \r\n") || strpbrk(val, "\r\n"))
                return cfg_fail(d, ph, "invalid proxy_connect_header \"%s\"", name);
            im_buf_t line;
            im_buf_init(&line, 0);
            (void)im_buf_printf(&line, "%s: %s", name, val);
            struct curl_slist *nl = curl_slist_append(o->proxy_slist, line.data);
            im_buf_free(&line);
            if (!nl) im_oom(0);
            o->proxy_slist = nl;
        }
        if (o->nproxy_hdr && !o->proxy_url)
            return cfg_fail(d, ph,
                            "if proxy_connect_header is configured proxy_url must also be "
                            "configured");
    }
    return IM_OK;
}

/* ---- Applying to curl ---- */

/* Reads a secret file (capped, trimmed). *out is owned by the caller. */
static im_rc read_secret(const char *path, const char *what, char **out, im_err_t *err)
{
    *out = NULL;
    im_buf_t b;
    im_buf_init(&b, CFG_SECRET_MAX);
    int se = 0;
    im_rc rc = cfg_read_file(path, &b, &se);
    if (rc) {
        im_buf_free(&b);
        if (rc == IM_ELIMIT)
            return im_err_set(err, IM_ELIMIT, "unable to read %s %s: larger than %u bytes", what,
                              path, CFG_SECRET_MAX);
        return im_err_set(err, IM_EIO, "unable to read %s %s: %s", what, path,
                          se ? strerror(se) : "read error");
    }
    const char *s = b.data ? b.data : "";
    size_t n = b.len;
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    *out = im_strndup(s, n);
    im_buf_free(&b);
    return IM_OK;
}

static void set_blob(CURL *h, CURLoption opt, const char *pem)
{
    struct curl_blob blob = {(void *)(uintptr_t)pem, strlen(pem), CURL_BLOB_COPY};
    curl_easy_setopt(h, opt, &blob);
}

static long tls_min(cfg_tls_version_t v)
{
    switch (v) {
    case CFG_TLS10: return CURL_SSLVERSION_TLSv1_0;
    case CFG_TLS11: return CURL_SSLVERSION_TLSv1_1;
    case CFG_TLS13: return CURL_SSLVERSION_TLSv1_3;
    case CFG_TLS12:
    case CFG_TLS_DEFAULT: break;
    }
    return CURL_SSLVERSION_TLSv1_2; /* Prometheus' default minimum */
}

static long tls_max(cfg_tls_version_t v)
{
    switch (v) {
    case CFG_TLS10: return CURL_SSLVERSION_MAX_TLSv1_0;
    case CFG_TLS11: return CURL_SSLVERSION_MAX_TLSv1_1;
    case CFG_TLS12: return CURL_SSLVERSION_MAX_TLSv1_2;
    case CFG_TLS13: return CURL_SSLVERSION_MAX_TLSv1_3;
    case CFG_TLS_DEFAULT: break;
    }
    return CURL_SSLVERSION_MAX_DEFAULT;
}

/* tls_config.server_name for an https URL whose host is another name: curl
 * sends the URL's host as SNI and verifies the certificate against it, so the
 * URL's host becomes server_name, the connection goes to the real host and port
 * (CURLOPT_CONNECT_TO) and the Host header carries the real authority, as Go's
 * client does (a followed redirect to another host drops that Host header). */
static im_rc set_url(const cfg_http_client_t *c, CURL *h, const char *url, struct curl_slist **hdrs,
                     struct curl_slist **conn_to, im_err_t *err)
{
    const char *sn = c->tls.server_name;
    CURLU *u = curl_url();
    if (!u) im_oom(0);
    char *scheme = NULL, *host = NULL, *port = NULL, *explicit_port = NULL, *nu = NULL;
    im_rc rc = IM_OK;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
        rc = im_err_set(err, IM_EINVAL, "cannot parse URL %s", url);
    } else if (!sn || !*sn || strcasecmp(scheme, "https") != 0 || strcasecmp(host, sn) == 0) {
        curl_easy_setopt(h, CURLOPT_URL, url);
    } else if (curl_url_set(u, CURLUPART_HOST, sn, 0) != CURLUE_OK ||
               curl_url_get(u, CURLUPART_URL, &nu, 0) != CURLUE_OK) {
        rc = im_err_set(err, IM_EINVAL, "tls_config.server_name \"%s\" is not a host name", sn);
    } else {
        (void)curl_url_get(u, CURLUPART_PORT, &explicit_port, 0);
        im_buf_t b;
        im_buf_init(&b, 0);
        (void)im_buf_printf(&b, "%s:%s:%s:%s", sn, port, host, port);
        *conn_to = curl_slist_append(*conn_to, b.data);
        b.len = 0;
        (void)im_buf_printf(&b, "Host: %s%s%s", host, explicit_port ? ":" : "",
                            explicit_port ? explicit_port : "");
        *hdrs = curl_slist_append(*hdrs, b.data);
        im_buf_free(&b);
        if (!*conn_to || !*hdrs) im_oom(0);
        curl_easy_setopt(h, CURLOPT_URL, nu);
        curl_easy_setopt(h, CURLOPT_CONNECT_TO, *conn_to);
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(explicit_port);
    curl_free(nu);
    curl_url_cleanup(u);
    return rc;
}

im_rc cfg_http_client_apply_url(const cfg_http_client_t *c, CURL *h, const char *url,
                                struct curl_slist **hdrs, struct curl_slist **conn_to,
                                im_err_t *err)
{
    im_rc rc = set_url(c, h, url, hdrs, conn_to, err);
    return rc ? rc : cfg_http_client_apply(c, h, hdrs, err);
}

void cfg_http_lists_free(cfg_http_lists_t *l)
{
    curl_slist_free_all(l->hdrs);
    curl_slist_free_all(l->conn_to);
    l->hdrs = l->conn_to = NULL;
}

im_rc cfg_http_client_handle(const cfg_http_client_t *c, CURL **h, const char *url,
                             curl_write_callback body, void *ud, char *errbuf, cfg_http_lists_t *l,
                             im_err_t *err)
{
    if (!*h) {
        *h = curl_easy_init();
        if (!*h) im_oom(0);
    } else {
        curl_easy_reset(*h);
    }
    curl_easy_setopt(*h, CURLOPT_URL, url); /* kept if apply_url cannot parse it */
    curl_easy_setopt(*h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(*h, CURLOPT_WRITEFUNCTION, body);
    curl_easy_setopt(*h, CURLOPT_WRITEDATA, ud);
    if (errbuf) curl_easy_setopt(*h, CURLOPT_ERRORBUFFER, errbuf);
    curl_slist_free_all(l->conn_to);
    l->conn_to = NULL;
    im_rc rc = c ? cfg_http_client_apply_url(c, *h, url, &l->hdrs, &l->conn_to, err) : IM_OK;
    curl_easy_setopt(*h, CURLOPT_HTTPHEADER, l->hdrs);
    return rc;
}

im_rc cfg_http_client_apply(const cfg_http_client_t *c, CURL *h, struct curl_slist **hdrs,
                            im_err_t *err)
{
    char *secret = NULL;
    im_rc rc;
    if (c->auth_type) {
        if (c->auth_cred_file) {
            if ((rc = read_secret(c->auth_cred_file, "authorization credentials file", &secret,
                                  err)))
                return rc;
        }
        im_buf_t hb;
        im_buf_init(&hb, 0);
        (void)im_buf_printf(&hb, "Authorization: %s %s", c->auth_type,
                            secret         ? secret
                            : c->auth_cred ? c->auth_cred
                                           : "");
        im_free(secret);
        secret = NULL;
        struct curl_slist *nl = curl_slist_append(*hdrs, hb.data);
        im_buf_free(&hb);
        if (!nl) im_oom(0);
        *hdrs = nl;
    }
    if (c->has_basic) {
        if (c->basic_pass_file &&
            (rc = read_secret(c->basic_pass_file, "basic auth password file", &secret, err)))
            return rc;
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
        curl_easy_setopt(h, CURLOPT_USERNAME, c->basic_user ? c->basic_user : "");
        curl_easy_setopt(h, CURLOPT_PASSWORD, secret ? secret : c->basic_pass ? c->basic_pass : "");
        im_free(secret); /* curl copies option strings */
        secret = NULL;
    }
    const cfg_tls_t *t = &c->tls;
    if (t->ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, t->ca_file);
    if (t->ca) set_blob(h, CURLOPT_CAINFO_BLOB, t->ca);
    if (t->cert_file) curl_easy_setopt(h, CURLOPT_SSLCERT, t->cert_file);
    if (t->cert) {
        set_blob(h, CURLOPT_SSLCERT_BLOB, t->cert);
        curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (t->key_file) curl_easy_setopt(h, CURLOPT_SSLKEY, t->key_file);
    if (t->key) {
        set_blob(h, CURLOPT_SSLKEY_BLOB, t->key);
        curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (t->insecure_skip_verify) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    curl_easy_setopt(h, CURLOPT_SSLVERSION, tls_min(t->min_version) | tls_max(t->max_version));
    /* Prometheus uses no proxy unless proxy_url is set (the environment is ignored). */
    curl_easy_setopt(h, CURLOPT_PROXY, c->proxy_url ? c->proxy_url : "");
    if (c->proxy_slist) {
        curl_easy_setopt(h, CURLOPT_HEADEROPT, CURLHEADER_SEPARATE);
        curl_easy_setopt(h, CURLOPT_PROXYHEADER, c->proxy_slist);
    }
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, c->follow_redirects ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L); /* Go's http.Client stops after 10 */
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION,
                     c->enable_http2 ? (long)CURL_HTTP_VERSION_2TLS : (long)CURL_HTTP_VERSION_1_1);
    return IM_OK;
}

/* ---- Lifetime, copy, dump ---- */

void cfg_http_client_free(cfg_http_client_t *c)
{
    if (!c) return;
    char **p[] = {&c->basic_user,      &c->basic_pass,     &c->basic_pass_file, &c->auth_type,
                  &c->auth_cred,       &c->auth_cred_file, &c->tls.ca_file,     &c->tls.ca,
                  &c->tls.cert_file,   &c->tls.cert,       &c->tls.key_file,    &c->tls.key,
                  &c->tls.server_name, &c->proxy_url};
    for (size_t i = 0; i < IM_ARRAY_LEN(p); i++) im_free(*p[i]);
    cfg_strv_free(c->proxy_hdr_names, c->nproxy_hdr);
    cfg_strv_free(c->proxy_hdr_values, c->nproxy_hdr);
    curl_slist_free_all(c->proxy_slist);
    memset(c, 0, sizeof *c);
}

static char *dup0(const char *s)
{
    return s ? im_strdup(s) : NULL;
}

void cfg_join_dir(const char *dir, char **path)
{
    const char *p = *path;
    if (!p || !*p || *p == '/' || !dir) return;
    im_buf_t j, o;
    im_buf_init(&j, 0);
    im_buf_init(&o, 0);
    (void)im_buf_printf(&j, "%s/%s", dir, p);
    bool abs = j.data[0] == '/';
    size_t nseg = 0, *seg = im_calloc(j.len + 1, sizeof *seg); /* segment starts in j */
    for (char *q = j.data; *q;) {
        while (*q == '/') *q++ = 0;
        if (!*q) break;
        char *e = q;
        while (*e && *e != '/') e++;
        bool dot = e - q == 1 && q[0] == '.', dotdot = e - q == 2 && q[0] == '.' && q[1] == '.';
        if (dotdot && nseg && strcmp(j.data + seg[nseg - 1], "..") != 0)
            nseg--;                        /* ".." cancels the segment before it */
        else if (!dot && !(dotdot && abs)) /* "/.." is "/" */
            seg[nseg++] = (size_t)(q - j.data);
        q = e;
    }
    (void)im_buf_puts(&o, abs ? "/" : "");
    for (size_t i = 0; i < nseg; i++) {
        if (i) (void)im_buf_putc(&o, '/');
        (void)im_buf_puts(&o, j.data + seg[i]);
    }
    if (!o.len) (void)im_buf_putc(&o, '.');
    im_free(seg);
    im_free(*path);
    *path = im_buf_steal(&o, NULL);
    im_buf_free(&j);
}

void cfg_http_client_set_dir(cfg_http_client_t *c, const char *dir)
{
    char **files[] = {&c->tls.ca_file, &c->tls.cert_file, &c->tls.key_file, &c->basic_pass_file,
                      &c->auth_cred_file};
    for (size_t i = 0; i < IM_ARRAY_LEN(files); i++) cfg_join_dir(dir, files[i]);
}

void cfg_http_client_copy(cfg_http_client_t *dst, const cfg_http_client_t *src)
{
    *dst = *src;
    char **p[] = {&dst->basic_user,      &dst->basic_pass,   &dst->basic_pass_file,
                  &dst->auth_type,       &dst->auth_cred,    &dst->auth_cred_file,
                  &dst->tls.ca_file,     &dst->tls.ca,       &dst->tls.cert_file,
                  &dst->tls.cert,        &dst->tls.key_file, &dst->tls.key,
                  &dst->tls.server_name, &dst->proxy_url};
    for (size_t i = 0; i < IM_ARRAY_LEN(p); i++) *p[i] = dup0(*p[i]);
    dst->proxy_hdr_names = im_calloc(src->nproxy_hdr + 1, sizeof(char *));
    dst->proxy_hdr_values = im_calloc(src->nproxy_hdr + 1, sizeof(char *));
    dst->proxy_slist = NULL;
    for (size_t i = 0; i < src->nproxy_hdr; i++) {
        dst->proxy_hdr_names[i] = im_strdup(src->proxy_hdr_names[i]);
        dst->proxy_hdr_values[i] = im_strdup(src->proxy_hdr_values[i]);
    }
    for (struct curl_slist *l = src->proxy_slist; l; l = l->next) {
        struct curl_slist *nl = curl_slist_append(dst->proxy_slist, l->data);
        if (!nl) im_oom(0);
        dst->proxy_slist = nl;
    }
}

static const char *tls_name(cfg_tls_version_t v)
{
    static const char *const names[] = {"", "TLS10", "TLS11", "TLS12", "TLS13"};
    return names[v];
}

void cfg_http_client_dump(const cfg_http_client_t *c, im_buf_t *o, int ind)
{
    int in2 = ind + 2;
    if (c->basic_user || c->basic_pass || c->basic_pass_file) {
        (void)im_buf_printf(o, "%*sbasic_auth:\n", ind, "");
        if (c->basic_user) cfg_emit_kv(o, in2, "username", c->basic_user);
        if (c->basic_pass) cfg_emit_kv(o, in2, "password", "<secret>");
        if (c->basic_pass_file) cfg_emit_kv(o, in2, "password_file", c->basic_pass_file);
    }
    if (c->auth_type) {
        (void)im_buf_printf(o, "%*sauthorization:\n", ind, "");
        cfg_emit_kv(o, in2, "type", c->auth_type);
        if (c->auth_cred) cfg_emit_kv(o, in2, "credentials", "<secret>");
        if (c->auth_cred_file) cfg_emit_kv(o, in2, "credentials_file", c->auth_cred_file);
    }
    const cfg_tls_t *t = &c->tls;
    if (t->ca_file || t->ca || t->cert_file || t->cert || t->server_name ||
        t->insecure_skip_verify || t->min_version || t->max_version) {
        (void)im_buf_printf(o, "%*stls_config:\n", ind, "");
        if (t->ca) cfg_emit_kv(o, in2, "ca", t->ca);
        if (t->cert) cfg_emit_kv(o, in2, "cert", t->cert);
        if (t->key) cfg_emit_kv(o, in2, "key", "<secret>");
        if (t->ca_file) cfg_emit_kv(o, in2, "ca_file", t->ca_file);
        if (t->cert_file) cfg_emit_kv(o, in2, "cert_file", t->cert_file);
        if (t->key_file) cfg_emit_kv(o, in2, "key_file", t->key_file);
        if (t->server_name) cfg_emit_kv(o, in2, "server_name", t->server_name);
        (void)im_buf_printf(o, "%*sinsecure_skip_verify: %s\n", in2, "",
                            t->insecure_skip_verify ? "true" : "false");
        if (t->min_version) cfg_emit_kv(o, in2, "min_version", tls_name(t->min_version));
        if (t->max_version) cfg_emit_kv(o, in2, "max_version", tls_name(t->max_version));
    }
    if (c->proxy_url) {
        (void)im_buf_printf(o, "%*sproxy_url: ", ind, "");
        cfg_emit_url(o, c->proxy_url);
        (void)im_buf_putc(o, '\n');
    }
    if (c->nproxy_hdr) {
        (void)im_buf_printf(o, "%*sproxy_connect_header:\n", ind, "");
        for (size_t p = 0; p < c->nproxy_hdr; p++) {
            bool first = true;
            for (size_t q = 0; q < p; q++)
                if (!strcmp(c->proxy_hdr_names[q], c->proxy_hdr_names[p])) first = false;
            if (!first) continue;
            (void)im_buf_printf(o, "%*s%s:\n", in2, "", c->proxy_hdr_names[p]);
            for (size_t q = p; q < c->nproxy_hdr; q++)
                if (!strcmp(c->proxy_hdr_names[q], c->proxy_hdr_names[p]))
                    (void)im_buf_printf(o, "%*s- <secret>\n", in2, "");
        }
    }
    (void)im_buf_printf(o, "%*sfollow_redirects: %s\n", ind, "",
                        c->follow_redirects ? "true" : "false");
    (void)im_buf_printf(o, "%*senable_http2: %s\n", ind, "", c->enable_http2 ? "true" : "false");
}
