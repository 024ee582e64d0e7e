/* http_client.h — one HTTP client configuration (Prometheus' common/config
 * HTTPClientConfig) that decodes itself from YAML and applies itself to curl.
 *
 * Every outgoing HTTP client of infermon (scraping, the Alertmanager client,
 * remote write, Kubernetes discovery, the monitor API, the query backend,
 * lint's target fetch) sets its handle up with cfg_http_client_handle and
 * embeds the same keys in its section:
 *
 *   basic_auth: {username, password, password_file}
 *   authorization: {type (default Bearer), credentials, credentials_file}
 *   bearer_token, bearer_token_file   (legacy; mapped to authorization)
 *   oauth2                            (refused: not supported by infermon)
 *   tls_config: {ca, ca_file, cert, cert_file, key, key_file, server_name,
 *                insecure_skip_verify, min_version, max_version}
 *   proxy_url, proxy_connect_header
 *   follow_redirects (default true), enable_http2 (default true)
 *
 * as Prometheus 2.42 accepts them (username_file, no_proxy and
 * proxy_from_environment came later and are refused as unknown keys, as 2.42
 * does). Callers put cfg_http_client_keys in their cfg_check_map_lists key list
 * and call cfg_http_client_decode on the same mapping.
 *
 * Invariants after a successful decode:
 *   1. At most one of basic_auth, authorization (incl. bearer_token*) is set;
 *      auth_type is set (default "Bearer") iff credentials or a file is.
 *   2. At most one of password / password_file, credentials / credentials_file,
 *      ca / ca_file, cert / cert_file, key / key_file; a client cert comes with
 *      its key.
 *   3. Secret files are not read at decode time: cfg_http_client_apply reads
 *      them at each call, so a rotated token is used by the next request. */
#ifndef IM_CONFIG_HTTP_CLIENT_H
#define IM_CONFIG_HTTP_CLIENT_H

#include <curl/curl.h>

#include "config/yaml.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

/* TLS versions as tls_config min_version/max_version spell them. */
typedef enum cfg_tls_version {
    CFG_TLS_DEFAULT = 0, /* not set */
    CFG_TLS10,
    CFG_TLS11,
    CFG_TLS12,
    CFG_TLS13,
} cfg_tls_version_t;

typedef struct cfg_tls {
    char *ca_file, *ca;     /* owned, NULL when unset; ca is inline PEM */
    char *cert_file, *cert; /* owned */
    char *key_file, *key;   /* owned; key is a secret */
    char *server_name;      /* owned */
    bool insecure_skip_verify;
    cfg_tls_version_t min_version, max_version;
} cfg_tls_t;

typedef struct cfg_http_client {
    bool has_basic;                                  /* basic_auth: present */
    char *basic_user, *basic_pass, *basic_pass_file; /* owned */
    char *auth_type, *auth_cred, *auth_cred_file;    /* owned; bearer_token* map here */
    cfg_tls_t tls;
    char *proxy_url;         /* owned */
    char **proxy_hdr_names;  /* owned: proxy_connect_header names, may repeat */
    char **proxy_hdr_values; /* owned, parallel (secrets) */
    size_t nproxy_hdr;
    struct curl_slist *proxy_slist; /* owned: "Name: value" lines for CURLOPT_PROXYHEADER */
    bool follow_redirects;          /* default true */
    bool enable_http2;              /* default true */
} cfg_http_client_t;

/* The keys cfg_http_client_decode owns in the enclosing mapping (NULL-terminated). */
extern const char *const cfg_http_client_keys[];

/* Sets the defaults (follow_redirects and enable_http2 true) on a zeroed struct. */
void cfg_http_client_init(cfg_http_client_t *c);
/* Decodes the HTTP client keys of parent_map into *out (initialised with
 * cfg_http_client_init, or holding earlier values that are overwritten). Does
 * not check for unknown keys: the caller's cfg_check_map_lists does. On error
 * *out is still safe to free. */
im_rc cfg_http_client_decode(cfg_dec_t *d, const cfg_node_t *parent_map, cfg_http_client_t *out);
/* Applies the configuration to a curl handle: authentication (files read now),
 * TLS (inline PEM as blobs), proxy, redirects, HTTP version. The Authorization
 * and proxy headers are appended to *hdrs (the caller owns the list and sets
 * CURLOPT_HTTPHEADER after adding its own headers; the list must outlive the
 * transfer). Other options set by the caller are left as they are. On error
 * (a secret file that cannot be read) the handle must not be used for a request. */
im_rc cfg_http_client_apply(const cfg_http_client_t *c, CURL *h, struct curl_slist **hdrs,
                            im_err_t *err);
/* Sets CURLOPT_URL to url, then cfg_http_client_apply. With tls_config.server_name
 * and an https URL whose host is another name, server_name is the TLS SNI and the
 * name the certificate is verified against (as Prometheus): the request goes to
 * https://<server_name>:<port>/..., CURLOPT_CONNECT_TO (entries appended to
 * *conn_to, owned by the caller like *hdrs and kept until the transfer is done)
 * sends the connection to the URL's host and port, and a Host header with the
 * URL's authority is appended to *hdrs. cfg_http_client_apply alone leaves the
 * URL as the caller set it, so the certificate must then match the URL's host. */
im_rc cfg_http_client_apply_url(const cfg_http_client_t *c, CURL *h, const char *url,
                                struct curl_slist **hdrs, struct curl_slist **conn_to,
                                im_err_t *err);
/* The lists a handle points to (CURLOPT_HTTPHEADER, CURLOPT_CONNECT_TO): owned
 * by the caller and kept until the handle's transfers are done. */
typedef struct cfg_http_lists {
    struct curl_slist *hdrs;    /* request headers: the caller's, then Authorization, Host */
    struct curl_slist *conn_to; /* tls_config.server_name's connection (set by the client) */
} cfg_http_lists_t;

/* Frees both lists and sets them to NULL. */
void cfg_http_lists_free(cfg_http_lists_t *l);

/* Every client's set-up of a handle for the next request to url: *h made
 * (curl_easy_init; out of memory aborts) or reset for reuse (its connections
 * are kept), no signals, the body callback with ud, the error buffer errbuf
 * (CURL_ERROR_SIZE bytes; NULL = none); then, with a client configuration c
 * (NULL = none: the URL as it is), cfg_http_client_apply_url — so every client
 * honours tls_config.server_name alike — and CURLOPT_HTTPHEADER = l->hdrs.
 * l->hdrs holds the caller's own headers before the call (the previous list
 * freed by the caller; NULL = none); l->conn_to is freed and rebuilt. The
 * caller sets its other options after the call (a later CURLOPT_PROXY or
 * CURLOPT_HTTP_VERSION overrides the configuration's). On error (a secret file
 * that cannot be read, a URL that cannot be parsed) the handle must not be
 * used for a request. */
im_rc cfg_http_client_handle(const cfg_http_client_t *c, CURL **h, const char *url,
                             curl_write_callback body, void *ud, char *errbuf, cfg_http_lists_t *l,
                             im_err_t *err);
void cfg_http_client_free(cfg_http_client_t *c);
/* A relative, non-empty *path becomes dir/path, cleaned of "." and ".." segments
 * and repeated slashes (Go's filepath.Join); NULL, empty and absolute paths are
 * kept. How Prometheus resolves file names against the configuration file's
 * directory. */
void cfg_join_dir(const char *dir, char **path);
/* cfg_join_dir on every file of c: the TLS ca/cert/key files, the basic auth
 * password file and the authorization credentials (bearer token) file. */
void cfg_http_client_set_dir(cfg_http_client_t *c, const char *dir);
/* Deep copy. */
void cfg_http_client_copy(cfg_http_client_t *dst, const cfg_http_client_t *src);
/* Appends the keys as YAML at indentation ind (each line "<ind>key: value\n"),
 * with defaults shown and secrets written as <secret>. */
void cfg_http_client_dump(const cfg_http_client_t *c, im_buf_t *out, int ind);

#endif
