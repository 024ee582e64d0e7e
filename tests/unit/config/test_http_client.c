/* test_http_client.c — the one HTTP client configuration (src/config/http_client.c):
 * decoding every key with Prometheus 2.42's validation texts, the dump with
 * secrets hidden, and cfg_http_client_apply onto a real curl handle against a
 * libmicrohttpd server on 127.0.0.1 started here: basic auth (inline and from a
 * file), a bearer token file rotated between requests, redirects followed or
 * not, TLS with the CA from a file and inline, insecure_skip_verify, and client
 * certificates from files and inline (keys made with openssl at test start). */
#include "util/base.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "config/http_client.h"
#include "util/buf.h"

static char tmpdir[256];

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    im_buf_t b;
    im_buf_init(&b, 0);
    char tmp[4096];
    size_t r;
    while ((r = fread(tmp, 1, sizeof tmp, f)) > 0) assert_int_equal(im_buf_append(&b, tmp, r), 0);
    fclose(f);
    char *s = im_strndup(b.data ? b.data : "", b.len);
    im_buf_free(&b);
    return s;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Decodes y (a mapping holding HTTP client keys); returns the rc, err filled. */
static im_rc decode(const char *y, cfg_http_client_t *c, im_err_t *e)
{
    cfg_node_t *root = NULL;
    im_err_clear(e);
    cfg_http_client_init(c);
    im_rc rc = cfg_parse_yaml(y, strlen(y), "t.yml", &root, e);
    if (rc) return rc;
    cfg_dec_t d = {"t.yml", e};
    const char *const *lists[] = {cfg_http_client_keys, NULL};
    rc = cfg_check_map_lists(&d, root, "scrape_config", lists);
    if (!rc) rc = cfg_http_client_decode(&d, root, c);
    cfg_node_free(root);
    return rc;
}

static void expect_err(const char *y, int line, int col, const char *msg)
{
    cfg_http_client_t c;
    im_err_t e;
    im_rc rc = decode(y, &c, &e);
    if (rc == IM_OK || strcmp(e.msg, msg) != 0 || e.line != line || e.col != col)
        fail_msg("%s: got %d:%d %s, want %d:%d %s", y, e.line, e.col, e.msg, line, col, msg);
    cfg_http_client_free(&c);
}

static void test_decode_errors(void **state)
{
    (void)state;
    expect_err("basic_auth: {username: a, password: b, password_file: c}\n", 1, 13,
               "at most one of basic_auth password & password_file must be configured");
    expect_err("basic_auth: {username: a, username_file: c}\n", 1, 27,
               "field username_file not found in basic_auth");
    expect_err("authorization: {credentials: a, credentials_file: b}\n", 1, 16,
               "at most one of authorization credentials & credentials_file must be configured");
    expect_err("authorization: {type: Basic, credentials: a}\n", 1, 16,
               "authorization type cannot be set to \"basic\", use \"basic_auth\" instead");
    expect_err("bearer_token: a\nbearer_token_file: b\n", 1, 1,
               "at most one of basic_auth, authorization, bearer_token & bearer_token_file must "
               "be configured");
    expect_err("basic_auth: {username: a}\nauthorization: {credentials: b}\n", 1, 1,
               "at most one of basic_auth, oauth2 & authorization must be configured");
    expect_err("tls_config: {cert_file: a}\n", 1, 13,
               "client cert file and client key file must both be specified");
    expect_err("tls_config: {ca: a, ca_file: b}\n", 1, 13,
               "at most one of ca and ca_file must be configured");
    expect_err("tls_config: {min_version: TLS14}\n", 1, 27, "unknown TLS version: TLS14");
    expect_err("tls_config: {min_verison: TLS12}\n", 1, 14,
               "field min_verison not found in tls_config");
    expect_err("tls_config:\n  min_version: TLS13\n  max_version: TLS12\n", 2, 3,
               "tls_config max_version must be greater than or equal to min_version");
    expect_err("proxy_connect_header: {X-A: [b]}\n", 1, 23,
               "if proxy_connect_header is configured proxy_url must also be configured");
    expect_err("oauth2: {client_id: a}\n", 1, 9,
               "oauth2 is not supported by infermon; use authorization with credentials_file "
               "holding a token refreshed outside infermon");
    expect_err("follow_redirects: maybe\n", 1, 19,
               "follow_redirects: cannot unmarshal \"maybe\" into a boolean");
    expect_err("enable_http2: true\nenable_http2: false\n", 2, 1,
               "mapping key \"enable_http2\" already defined at line 1");
    expect_err("no_proxy: localhost\n", 1, 1, "field no_proxy not found in scrape_config");
}

/* Relative file names joined to the configuration file's directory as Go's
 * filepath.Join does. */
static void test_join_dir(void **state)
{
    (void)state;
    static const char *const cases[][3] = {
        {"conf", "ca.pem", "conf/ca.pem"},
        {".", "rules.yml", "rules.yml"},
        {"../conf", "a/../b", "../conf/b"},
        {"/etc/p", "../x", "/etc/x"},
        {"/", "../../x", "/x"},
        {"a", "../../x", "../x"},
        {"./a//b/", "./c/./d", "a/b/c/d"},
        {"conf", "/abs/f", "/abs/f"},
        {"..", "..", "../.."},
        {"a", "..", "."},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(cases); i++) {
        char *p = im_strdup(cases[i][1]);
        cfg_join_dir(cases[i][0], &p);
        assert_string_equal(p, cases[i][2]);
        im_free(p);
    }
    char *p = NULL;
    cfg_join_dir("conf", &p);
    assert_null(p);
    p = im_strdup("");
    cfg_join_dir("conf", &p);
    assert_string_equal(p, "");
    im_free(p);
}

static void test_decode_dump(void **state)
{
    (void)state;
    cfg_http_client_t c;
    im_err_t e;
    assert_int_equal(decode("bearer_token_file: /t\n"
                            "tls_config: {ca: CA, cert: C, key: K, server_name: s,"
                            " min_version: TLS13, insecure_skip_verify: true}\n"
                            "proxy_url: http://u:pw@proxy:3128\n"
                            "proxy_connect_header: {X-A: [s1, s2]}\n"
                            "follow_redirects: false\nenable_http2: false\n",
                            &c, &e),
                     IM_OK);
    assert_string_equal(c.auth_type, "Bearer");
    assert_string_equal(c.auth_cred_file, "/t");
    assert_int_equal(c.tls.min_version, CFG_TLS13);
    assert_true(c.tls.insecure_skip_verify);
    assert_false(c.follow_redirects);
    assert_false(c.enable_http2);
    assert_int_equal(c.nproxy_hdr, 2);
    im_buf_t b;
    im_buf_init(&b, 0);
    cfg_http_client_dump(&c, &b, 2);
    assert_string_equal(b.data,
                        "  authorization:\n    type: Bearer\n    credentials_file: /t\n"
                        "  tls_config:\n    ca: CA\n    cert: C\n    key: <secret>\n"
                        "    server_name: s\n    insecure_skip_verify: true\n"
                        "    min_version: TLS13\n"
                        "  proxy_url: http://u:xxxxx@proxy:3128\n"
                        "  proxy_connect_header:\n    X-A:\n    - <secret>\n    - <secret>\n"
                        "  follow_redirects: false\n  enable_http2: false\n");
    cfg_http_client_t cp;
    cfg_http_client_copy(&cp, &c);
    im_buf_reset(&b);
    cfg_http_client_dump(&cp, &b, 2);
    assert_non_null(strstr(b.data, "key: <secret>"));
    cfg_http_client_free(&cp);
    cfg_http_client_free(&c);
    /* defaults */
    assert_int_equal(decode("basic_auth: {username: u, password: p}\n", &c, &e), IM_OK);
    im_buf_reset(&b);
    cfg_http_client_dump(&c, &b, 0);
    assert_string_equal(b.data, "basic_auth:\n  username: u\n  password: <secret>\n"
                                "follow_redirects: true\nenable_http2: true\n");
    cfg_http_client_free(&c);
    im_buf_free(&b);
}

/* ---- A server on 127.0.0.1 ---- */

static enum MHD_Result serve(void *cls, struct MHD_Connection *conn, const char *url,
                             const char *method, const char *version, const char *upload,
                             size_t *upload_len, void **ptr)
{
    (void)cls, (void)method, (void)version, (void)upload, (void)upload_len, (void)ptr;
    char body[1024];
    int code = 200;
    struct MHD_Response *r;
    if (strcmp(url, "/redir") == 0) {
        snprintf(body, sizeof body, "moved");
        code = 302;
    } else {
        const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        bool peer = false;
        if (ci && ci->tls_session) {
            unsigned n = 0;
            peer = gnutls_certificate_get_peers(ci->tls_session, &n) != NULL && n > 0;
        }
        snprintf(body, sizeof body, "auth=%s peer=%d", a ? a : "-", peer);
    }
    r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
    if (code == 302) MHD_add_response_header(r, "Location", "/echo");
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)code, r);
    MHD_destroy_response(r);
    return ret;
}

static struct MHD_Daemon *start(bool tls, const char *cert, const char *key, const char *trust,
                                unsigned *port)
{
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d;
    if (tls)
        d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS, 0, NULL, NULL, serve,
                             NULL, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_HTTPS_MEM_KEY, key,
                             MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_HTTPS_MEM_TRUST, trust,
                             MHD_OPTION_END);
    else
        d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, serve, NULL,
                             MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_END);
    assert_non_null(d);
    *port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    return d;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    (void)im_buf_append(ud, p, sz * n);
    return sz * n;
}

/* One request with the client config y; returns the curl code, *status and body. */
static CURLcode fetch(const char *y, const char *url, long *status, im_buf_t *body)
{
    cfg_http_client_t c;
    im_err_t e;
    if (decode(y, &c, &e) != IM_OK) fail_msg("%s: %s", y, e.msg);
    CURL *h = curl_easy_init();
    struct curl_slist *hdrs = NULL;
    im_buf_reset(body);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
    assert_int_equal(cfg_http_client_apply(&c, h, &hdrs, &e), IM_OK);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    CURLcode cc = curl_easy_perform(h);
    *status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    (void)im_buf_putc(body, 0);
    curl_easy_cleanup(h);
    curl_slist_free_all(hdrs);
    cfg_http_client_free(&c);
    return cc;
}

static void test_apply_auth_redirects(void **state)
{
    (void)state;
    unsigned port;
    struct MHD_Daemon *d = start(false, NULL, NULL, NULL, &port);
    char url[128], redir[128], y[512], tok[300];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/echo", port);
    snprintf(redir, sizeof redir, "http://127.0.0.1:%u/redir", port);
    im_buf_t b;
    im_buf_init(&b, 0);
    long st;
    /* basic auth inline: "u:p" */
    assert_int_equal(fetch("basic_auth: {username: u, password: p}\n", url, &st, &b), CURLE_OK);
    assert_string_equal(b.data, "auth=Basic dTpw peer=0");
    /* password file, trimmed */
    snprintf(tok, sizeof tok, "%s/pw", tmpdir);
    write_file(tok, "p\n");
    snprintf(y, sizeof y, "basic_auth: {username: u, password_file: %s}\n", tok);
    assert_int_equal(fetch(y, url, &st, &b), CURLE_OK);
    assert_string_equal(b.data, "auth=Basic dTpw peer=0");
    /* bearer token file, rotated between two applies of the same config */
    snprintf(tok, sizeof tok, "%s/token", tmpdir);
    write_file(tok, "first\n");
    snprintf(y, sizeof y, "bearer_token_file: %s\n", tok);
    assert_int_equal(fetch(y, url, &st, &b), CURLE_OK);
    assert_string_equal(b.data, "auth=Bearer first peer=0");
    write_file(tok, "second");
    assert_int_equal(fetch(y, url, &st, &b), CURLE_OK);
    assert_string_equal(b.data, "auth=Bearer second peer=0");
    assert_int_equal(fetch("authorization: {type: Token, credentials: xyz}\n", url, &st, &b),
                     CURLE_OK);
    assert_string_equal(b.data, "auth=Token xyz peer=0");
    /* a missing file fails apply */
    {
        cfg_http_client_t c;
        im_err_t e;
        assert_int_equal(decode("authorization: {credentials_file: /nonexistent/x}\n", &c, &e),
                         IM_OK);
        CURL *h = curl_easy_init();
        struct curl_slist *hdrs = NULL;
        assert_int_not_equal(cfg_http_client_apply(&c, h, &hdrs, &e), IM_OK);
        assert_non_null(strstr(e.msg, "unable to read authorization credentials file "
                                      "/nonexistent/x"));
        curl_easy_cleanup(h);
        curl_slist_free_all(hdrs);
        cfg_http_client_free(&c);
    }
    /* redirects: followed by default, not when follow_redirects is false */
    assert_int_equal(fetch("{}\n", redir, &st, &b), CURLE_OK);
    assert_int_equal(st, 200);
    assert_string_equal(b.data, "auth=- peer=0");
    assert_int_equal(fetch("follow_redirects: false\n", redir, &st, &b), CURLE_OK);
    assert_int_equal(st, 302);
    assert_string_equal(b.data, "moved");
    im_buf_free(&b);
    MHD_stop_daemon(d);
}

static void test_apply_tls(void **state)
{
    (void)state;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
             "-keyout ca.key -out ca.pem -subj /CN=test-ca -days 2 >/dev/null 2>&1 && "
             "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key "
             "-out srv.csr -subj /CN=127.0.0.1 >/dev/null 2>&1 && "
             "printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext && "
             "openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem "
             "-days 2 -extfile san.ext >/dev/null 2>&1 && "
             "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout cli.key "
             "-out cli.csr -subj /CN=client >/dev/null 2>&1 && "
             "openssl x509 -req -in cli.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cli.pem "
             "-days 2 >/dev/null 2>&1",
             tmpdir);
    assert_int_equal(system(cmd), 0);
    char p[512];
    snprintf(p, sizeof p, "%s/srv.pem", tmpdir);
    char *cert = slurp(p);
    snprintf(p, sizeof p, "%s/srv.key", tmpdir);
    char *key = slurp(p);
    snprintf(p, sizeof p, "%s/ca.pem", tmpdir);
    char *ca = slurp(p);
    snprintf(p, sizeof p, "%s/cli.pem", tmpdir);
    char *ccert = slurp(p);
    snprintf(p, sizeof p, "%s/cli.key", tmpdir);
    char *ckey = slurp(p);
    unsigned port;
    struct MHD_Daemon *d = start(true, cert, key, ca, &port);
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%u/echo", port);
    im_buf_t b, y;
    im_buf_init(&b, 0);
    im_buf_init(&y, 0);
    long st;
    /* without the CA: refused */
    assert_int_not_equal(fetch("{}\n", url, &st, &b), CURLE_OK);
    /* insecure_skip_verify */
    assert_int_equal(fetch("tls_config: {insecure_skip_verify: true}\n", url, &st, &b), CURLE_OK);
    assert_string_equal(b.data, "auth=- peer=0");
    /* ca_file */
    im_buf_reset(&y);
    (void)im_buf_printf(&y, "tls_config: {ca_file: %s/ca.pem}\n", tmpdir);
    assert_int_equal(fetch(y.data, url, &st, &b), CURLE_OK);
    assert_string_equal(b.data, "auth=- peer=0");
    /* client cert and key from files */
    im_buf_reset(&y);
    (void)im_buf_printf(&y,
                        "tls_config: {ca_file: %s/ca.pem, cert_file: %s/cli.pem, key_file: "
                        "%s/cli.key}\n",
                        tmpdir, tmpdir, tmpdir);
    assert_int_equal(fetch(y.data, url, &st, &b), CURLE_OK);
    assert_string_equal(b.data, "auth=- peer=1");
    /* everything inline (block scalars) */
    im_buf_reset(&y);
    (void)im_buf_puts(&y, "tls_config:\n");
    const char *names[] = {"ca", "cert", "key"};
    const char *pems[] = {ca, ccert, ckey};
    for (int i = 0; i < 3; i++) {
        (void)im_buf_printf(&y, "  %s: |\n", names[i]);
        for (const char *s = pems[i]; *s;) {
            size_t n = strcspn(s, "\n");
            (void)im_buf_printf(&y, "    %.*s\n", (int)n, s);
            s += n + (s[n] == '\n');
        }
    }
    assert_int_equal(fetch(y.data, url, &st, &b), CURLE_OK);
    assert_string_equal(b.data, "auth=- peer=1");
    /* max_version below what is possible with min TLS 1.3 is refused at decode;
     * TLS 1.2 only still works */
    assert_int_equal(
        fetch("tls_config: {insecure_skip_verify: true, max_version: TLS12}\n", url, &st, &b),
        CURLE_OK);
    MHD_stop_daemon(d);
    im_buf_free(&b);
    im_buf_free(&y);
    im_free(cert);
    im_free(key);
    im_free(ca);
    im_free(ccert);
    im_free(ckey);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/im_test_http_client.XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    curl_global_init(CURL_GLOBAL_ALL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_errors), cmocka_unit_test(test_join_dir),
        cmocka_unit_test(test_decode_dump),   cmocka_unit_test(test_apply_auth_redirects),
        cmocka_unit_test(test_apply_tls),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) rc = rc ? rc : 1;
    curl_global_cleanup();
    return rc;
}
