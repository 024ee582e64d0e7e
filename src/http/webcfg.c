/* webcfg.c — Prometheus' web configuration file (--web.config.file), the
 * exporter-toolkit format: tls_server_config, http_server_config, basic_auth_users
 * and rate_limit. Every key of that format is either implemented or refused with
 * an error saying why; unknown keys are errors with line:column.
 *
 * Life of a configuration. A loaded file is an immutable, refcounted snapshot
 * (http__webcfg_t) holding its own GnuTLS credentials (certificate, key, client
 * CA trust) and priority cache. The holder (http__web_t) keeps the current one.
 * exporter-toolkit re-reads the file on every request and the certificates on
 * every handshake; we get the same effect cheaper: on each new connection and each
 * request the holder stat()s the web config and the files it names (size, inode,
 * mtime and ctime with nanoseconds) and reloads only when one changed. A file that
 * fails to load is logged once (per change) and the previous snapshot stays in
 * use — unlike exporter-toolkit, which answers 500 while the file is broken.
 * Switching between TLS and plain HTTP needs a restart (as in Prometheus, which
 * decides it when it starts listening).
 *
 * TLS. Every connection gets, before its handshake, the credentials and
 * priorities of the current snapshot (http__web_conn_start). Client certificates
 * are checked during the handshake by a GnuTLS verify callback, so a client that
 * does not satisfy client_auth_type never reaches a handler:
 *   NoClientCert                 certificate not asked for
 *   RequestClientCert            asked for, not required, not verified
 *   RequireAnyClientCert         required, not verified
 *   VerifyClientCertIfGiven      asked for; verified against the client CA if sent
 *   RequireAndVerifyClientCert   required and verified against the client CA
 * Verification checks the chain, validity dates and (as Go) the TLS client
 * purpose when the certificate has an extended key usage. client_allowed_sans is
 * matched exactly against the DNS, e-mail, IP and URI SANs of the leaf.
 * cipher_suites take Go's names; GnuTLS priorities are made from them and the
 * negotiated suite is checked against the exact list at ServerHello (GnuTLS
 * enables kx x cipher x mac products, which could allow a suite not listed). As in
 * Go, the list only governs TLS 1.2 and below.
 *
 * Basic auth. Users are compared in constant time (SHA-256 of the names, no early
 * exit) and an unknown user costs one bcrypt with the first user's hash, so timing
 * does not tell valid names. bcrypt runs through a bounded pool (at most
 * `bcrypt_max` at once; a request waits at most `bcrypt_wait_ms` for a place, then
 * gets 503). Successes are cached by SHA-256(user, password, hash), so a changed
 * hash never matches an old entry. Passwords are checked with crypt(3) from
 * libxcrypt ($2a$, $2b$, $2y$), loaded with dlopen. */
#include "util/base.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <crypt.h>
#include <dlfcn.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "config/yaml.h"
#include "http/http_int.h"
#include "util/log.h"
#include "util/timeutil.h"

#define MAX_FILES   4 /* the web config, cert_file, key_file, client_ca_file */
#define CACHE_SLOTS 64
#define MAX_SANS    256
#define MAX_USERS   4096

typedef struct fsig {
    bool exists;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
} fsig_t;

typedef struct suite {
    const char *go;      /* Go's name (crypto/tls CipherSuites()) */
    unsigned char id[2]; /* IANA id */
    bool tls13;          /* TLS 1.3 suite: listed in Go's table, not configurable */
} suite_t;

enum { HDR_CSP, HDR_XFO, HDR_XCTO, HDR_XXSS, HDR_HSTS, NHDR };
static const char *const hdr_names[NHDR] = {"Content-Security-Policy", "X-Frame-Options",
                                            "X-Content-Type-Options", "X-XSS-Protection",
                                            "Strict-Transport-Security"};

struct http__webcfg {
    atomic_int refs;
    http__web_t *owner; /* borrowed: the holder outlives its snapshots */
    bool tls;
    http__client_auth_t client_auth;
    char *cert_pem, *key_pem;               /* owned (also handed to MHD at start) */
    gnutls_certificate_credentials_t xcred; /* owned */
    gnutls_priority_t prio;                 /* owned */
    char **sans;                            /* owned, client_allowed_sans */
    size_t nsans;
    uint16_t *suites;       /* owned: IANA ids of the allowed TLS <= 1.2 suites */
    size_t nsuites;         /* 0 = no list (GnuTLS defaults); (size_t)-1 = none allowed */
    char **users, **hashes; /* owned */
    unsigned char (*user_sha)[32];
    size_t nusers;
    char *hdr[NHDR]; /* owned values, NULL = unset */
    int64_t rl_interval_ms;
    int64_t rl_burst;
    char *paths[MAX_FILES]; /* owned: files whose change triggers a reload */
    fsig_t sigs[MAX_FILES];
    size_t nfiles;
};

struct http__web {
    char *path; /* owned */
    http__web_limits_t lim;
    bool tls;           /* fixed at start */
    pthread_mutex_t mu; /* guards cur, bad, cache, bucket */
    http__webcfg_t *cur;
    fsig_t bad[MAX_FILES]; /* signatures of the last failed attempt */
    bool have_bad;
    unsigned char cache[CACHE_SLOTS][32];
    bool cache_used[CACHE_SLOTS];
    size_t cache_next;
    double tokens;
    int64_t bucket_ns;
    pthread_mutex_t reload_mu; /* one reload at a time */
    pthread_mutex_t pmu;       /* bcrypt pool */
    pthread_cond_t pcv;
    int inflight, inflight_peak;
    atomic_uint_fast64_t n_bcrypt, n_busy, n_cache_hits, n_rate_limited, n_reload_ok, n_reload_fail,
        n_tls_refused;
    atomic_bool last_ok;
};

/* ---- Snapshot registry: from a session's credentials back to its snapshot ---- */

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static http__webcfg_t **reg;
static size_t nreg, reg_cap;

static void reg_add(http__webcfg_t *c)
{
    pthread_mutex_lock(&reg_mu);
    if (nreg == reg_cap) {
        reg_cap = reg_cap ? reg_cap * 2 : 8;
        reg = im_realloc(reg, reg_cap * sizeof *reg);
    }
    reg[nreg++] = c;
    pthread_mutex_unlock(&reg_mu);
}

static void reg_del(http__webcfg_t *c)
{
    pthread_mutex_lock(&reg_mu);
    for (size_t i = 0; i < nreg; i++)
        if (reg[i] == c) {
            reg[i] = reg[--nreg];
            break;
        }
    if (nreg == 0) {
        im_free(reg);
        reg = NULL;
        reg_cap = 0;
    }
    pthread_mutex_unlock(&reg_mu);
}

/* The snapshot whose credentials the session uses (the session holds a reference
 * on it through its connection), or NULL. */
static http__webcfg_t *reg_find(gnutls_session_t s)
{
    void *cred = NULL;
    if (gnutls_credentials_get(s, GNUTLS_CRD_CERTIFICATE, &cred) < 0 || !cred) return NULL;
    http__webcfg_t *found = NULL;
    pthread_mutex_lock(&reg_mu);
    for (size_t i = 0; i < nreg; i++)
        if ((void *)reg[i]->xcred == cred) found = reg[i];
    pthread_mutex_unlock(&reg_mu);
    return found;
}

/* ---- Loading ---- */

static char *slurp(const char *path, const char *what, im_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        im_err_set(err, IM_EIO, "%s \"%s\": cannot read: %s", what, path, strerror(errno));
        return NULL;
    }
    im_buf_t b;
    im_buf_init(&b, 4u << 20);
    char tmp[8192];
    size_t n;
    bool ok = true;
    while (ok && (n = fread(tmp, 1, sizeof tmp, f)) > 0)
        if (im_buf_append(&b, tmp, n) != IM_OK) ok = false; /* stop: a device never ends */
    bool rerr = ferror(f);
    int e = errno;
    fclose(f);
    if (rerr) {
        im_buf_free(&b);
        im_err_set(err, IM_EIO, "%s \"%s\": cannot read: %s", what, path, strerror(e));
        return NULL;
    }
    if (!ok) {
        im_buf_free(&b);
        im_err_set(err, IM_ELIMIT, "%s \"%s\" is larger than 4 MiB", what, path);
        return NULL;
    }
    if (!b.data) (void)im_buf_puts(&b, "");
    return im_buf_steal(&b, NULL);
}

static fsig_t sig_of(const char *path)
{
    fsig_t s;
    memset(&s, 0, sizeof s);
    struct stat st;
    if (stat(path, &st) != 0) return s;
    s.exists = true;
    s.dev = st.st_dev;
    s.ino = st.st_ino;
    s.size = st.st_size;
    s.mtime = st.st_mtim;
    s.ctime = st.st_ctim;
    return s;
}

static bool sig_eq(const fsig_t *a, const fsig_t *b)
{
    return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
           a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* The loader's decoding context: the web config's path (errors and relative
 * paths) and the caller's error; decoding helpers are config/yaml.h's. */
typedef cfg_dec_t ld_t;

/* exporter-toolkit's strict YAML wording: "field K not found in type web.X". */
static im_rc check_keys(ld_t *l, const cfg_node_t *m, const char *section, const char *const *keys)
{
    char what[64];
    snprintf(what, sizeof what, "type %s", section);
    return cfg_check_map(l, m, what, keys);
}

/* A string value (NULL when unset); a non-scalar is an error. */
static im_rc get_str(ld_t *l, const cfg_node_t *m, const char *k, const char **out)
{
    const cfg_node_t *n = cfg_get_raw(m, k);
    *out = NULL;
    if (cfg_is_null(n)) return IM_OK;
    if (n->type != CFG_NODE_SCALAR) return cfg_fail(l, n, "%s must be a string", k);
    *out = n->str;
    return IM_OK;
}

static im_rc get_list(ld_t *l, const cfg_node_t *m, const char *k, const cfg_node_t **out)
{
    const cfg_node_t *n = cfg_get_raw(m, k);
    *out = NULL;
    if (cfg_is_null(n)) return IM_OK;
    if (n->type != CFG_NODE_SEQ) return cfg_fail(l, n, "%s must be a list of strings", k);
    for (size_t i = 0; i < n->nkids; i++)
        if (n->kids[i]->type != CFG_NODE_SCALAR)
            return cfg_fail(l, n->kids[i], "%s must be a list of strings", k);
    *out = n;
    return IM_OK;
}

static im_rc get_bool(ld_t *l, const cfg_node_t *m, const char *k, bool *out)
{
    const cfg_node_t *n = cfg_get_raw(m, k);
    if (cfg_is_null(n)) return IM_OK;
    if (n->type == CFG_NODE_SCALAR && n->plain) {
        if (!strcmp(n->str, "true") || !strcmp(n->str, "True") || !strcmp(n->str, "TRUE")) {
            *out = true;
            return IM_OK;
        }
        if (!strcmp(n->str, "false") || !strcmp(n->str, "False") || !strcmp(n->str, "FALSE")) {
            *out = false;
            return IM_OK;
        }
    }
    return cfg_fail(l, n, "%s must be true or false", k);
}

/* Relative paths are relative to the web config file's directory (as
 * exporter-toolkit's SetDirectory). */
static char *join_dir(const char *cfgpath, const char *p)
{
    if (p[0] == '/') return im_strdup(p);
    const char *slash = strrchr(cfgpath, '/');
    if (!slash) return im_strdup(p);
    size_t dl = (size_t)(slash - cfgpath);
    char *o = im_malloc(dl + 1 + strlen(p) + 1);
    memcpy(o, cfgpath, dl);
    o[dl] = '/';
    memcpy(o + dl + 1, p, strlen(p) + 1);
    return o;
}

static int tls_version(const char *s)
{
    static const char *const names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

static const suite_t suites[] = {
    {"TLS_RSA_WITH_AES_128_CBC_SHA", {0x00, 0x2f}, false},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", {0x00, 0x35}, false},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", {0x00, 0x9c}, false},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", {0x00, 0x9d}, false},
    {"TLS_AES_128_GCM_SHA256", {0x13, 0x01}, true},
    {"TLS_AES_256_GCM_SHA384", {0x13, 0x02}, true},
    {"TLS_CHACHA20_POLY1305_SHA256", {0x13, 0x03}, true},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", {0xc0, 0x09}, false},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", {0xc0, 0x0a}, false},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", {0xc0, 0x13}, false},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", {0xc0, 0x14}, false},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", {0xc0, 0x2b}, false},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", {0xc0, 0x2c}, false},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", {0xc0, 0x2f}, false},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", {0xc0, 0x30}, false},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", {0xcc, 0xa8}, false},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", {0xcc, 0xa9}, false},
};

/* Appends the GnuTLS priority items of a suite ("+KX:+CIPHER:+MAC"); false if
 * this GnuTLS does not have it. */
static bool suite_prio(const suite_t *su, im_buf_t *prio)
{
    unsigned char id[2];
    gnutls_kx_algorithm_t kx;
    gnutls_cipher_algorithm_t c;
    gnutls_mac_algorithm_t m;
    gnutls_protocol_t v;
    for (size_t i = 0;; i++) {
        const char *n = gnutls_cipher_suite_info(i, id, &kx, &c, &m, &v);
        if (!n) return false;
        if (id[0] != su->id[0] || id[1] != su->id[1]) continue;
        if (!su->tls13) {
            (void)im_buf_puts(prio, ":+");
            (void)im_buf_puts(prio, gnutls_kx_get_name(kx));
        }
        (void)im_buf_puts(prio, ":+");
        (void)im_buf_puts(prio, gnutls_cipher_get_name(c));
        (void)im_buf_puts(prio, ":+");
        (void)im_buf_puts(prio, gnutls_mac_get_name(m));
        return true;
    }
}

static void cfg_free(http__webcfg_t *c)
{
    if (!c) return;
    if (c->xcred) {
        reg_del(c);
        gnutls_certificate_free_credentials(c->xcred);
    }
    if (c->prio) gnutls_priority_deinit(c->prio);
    im_free(c->cert_pem);
    if (c->key_pem) {
        memset(c->key_pem, 0, strlen(c->key_pem));
        im_free(c->key_pem);
    }
    for (size_t i = 0; i < c->nsans; i++) im_free(c->sans[i]);
    im_free(c->sans);
    im_free(c->suites);
    for (size_t i = 0; i < c->nusers; i++) {
        im_free(c->users[i]);
        im_free(c->hashes[i]);
    }
    im_free(c->users);
    im_free(c->hashes);
    im_free(c->user_sha);
    for (int i = 0; i < NHDR; i++) im_free(c->hdr[i]);
    for (size_t i = 0; i < c->nfiles; i++) im_free(c->paths[i]);
    im_free(c);
}

static void add_file(http__webcfg_t *c, const char *path)
{
    if (c->nfiles >= MAX_FILES) return;
    c->paths[c->nfiles] = im_strdup(path);
    c->sigs[c->nfiles++] = sig_of(path);
}

static int verify_cb(gnutls_session_t s);
static int hello_hook(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
                      const gnutls_datum_t *msg);

/* Loads a PEM value (inline or from a file) for `key`/`file_key`. */
static im_rc pem_value(ld_t *l, http__webcfg_t *c, const cfg_node_t *t, const char *key,
                       const char *file_key, char **out, char **from)
{
    const char *inl, *file;
    im_rc rc;
    *out = NULL;
    *from = NULL;
    if ((rc = get_str(l, t, key, &inl)) || (rc = get_str(l, t, file_key, &file))) return rc;
    if (inl && file)
        return cfg_fail(l, cfg_get_raw(t, key),
                        "tls_server_config: %s and %s are both set; use one", key, file_key);
    if (inl) {
        *out = im_strdup(inl);
        *from = im_strdup(key);
        return IM_OK;
    }
    if (!file) return IM_OK;
    char *p = join_dir(l->file, file);
    char what[64];
    snprintf(what, sizeof what, "tls_server_config.%s", file_key);
    add_file(c, p);
    *out = slurp(p, what, l->err);
    size_t n = strlen(what) + strlen(p) + 4;
    *from = im_malloc(n);
    snprintf(*from, n, "%s \"%s\"", what, p);
    im_free(p);
    if (!*out) {
        im_free(*from);
        *from = NULL;
        if (l->err) l->err->file = l->file;
        return IM_EIO;
    }
    return IM_OK;
}

static im_rc load_tls(ld_t *l, http__webcfg_t *c, const cfg_node_t *t)
{
    static const char *const keys[] = {"cert",
                                       "key",
                                       "client_ca",
                                       "cert_file",
                                       "key_file",
                                       "client_auth_type",
                                       "client_ca_file",
                                       "client_allowed_sans",
                                       "min_version",
                                       "max_version",
                                       "cipher_suites",
                                       "prefer_server_cipher_suites",
                                       "curve_preferences",
                                       NULL};
    im_rc rc;
    char *cert_from = NULL, *key_from = NULL, *ca_from = NULL, *ca = NULL;
    im_buf_t prio;
    im_buf_init(&prio, 0);
    gnutls_x509_crt_t *crts = NULL;
    unsigned ncrts = 0;
    gnutls_x509_privkey_t pk = NULL;
    if ((rc = check_keys(l, t, "web.TLSConfig", keys))) goto done;
    const char *auth;
    if ((rc = get_str(l, t, "client_auth_type", &auth))) goto done;
    if ((rc = pem_value(l, c, t, "cert", "cert_file", &c->cert_pem, &cert_from))) goto done;
    if ((rc = pem_value(l, c, t, "key", "key_file", &c->key_pem, &key_from))) goto done;
    if ((rc = pem_value(l, c, t, "client_ca", "client_ca_file", &ca, &ca_from))) goto done;
    if (!c->cert_pem && !c->key_pem && !ca && !auth) goto done; /* no TLS */
    c->tls = true;
    if (!c->cert_pem) {
        rc = cfg_fail(l, t, "tls_server_config: missing one of cert or cert_file");
        goto done;
    }
    if (!c->key_pem) {
        rc = cfg_fail(l, t, "tls_server_config: missing one of key or key_file");
        goto done;
    }
    /* Certificate and key: parse each, then check they belong together. */
    gnutls_datum_t d = {(unsigned char *)c->cert_pem, (unsigned)strlen(c->cert_pem)};
    int g;
    if (!strstr(c->cert_pem, "-----BEGIN")) {
        rc = cfg_fail(l, NULL, "%s: not PEM (no -----BEGIN line)", cert_from);
        goto done;
    }
    if ((g = gnutls_x509_crt_list_import2(&crts, &ncrts, &d, GNUTLS_X509_FMT_PEM, 0)) < 0 ||
        ncrts == 0) {
        rc = cfg_fail(l, NULL, "%s: no valid PEM certificate: %s", cert_from,
                      g < 0 ? gnutls_strerror(g) : "none found");
        goto done;
    }
    gnutls_datum_t kd = {(unsigned char *)c->key_pem, (unsigned)strlen(c->key_pem)};
    if (!strstr(c->key_pem, "-----BEGIN")) {
        rc = cfg_fail(l, NULL, "%s: not PEM (no -----BEGIN line)", key_from);
        goto done;
    }
    if ((g = gnutls_x509_privkey_init(&pk)) < 0 ||
        (g = gnutls_x509_privkey_import2(pk, &kd, GNUTLS_X509_FMT_PEM, NULL, GNUTLS_PKCS_PLAIN)) <
            0) {
        rc = cfg_fail(l, NULL, "%s: no valid unencrypted PEM private key: %s", key_from,
                      gnutls_strerror(g));
        goto done;
    }
    if ((g = gnutls_certificate_allocate_credentials(&c->xcred)) < 0) {
        rc = cfg_fail(l, NULL, "cannot allocate TLS credentials: %s", gnutls_strerror(g));
        goto done;
    }
    reg_add(c);
    g = gnutls_certificate_set_x509_key_mem2(c->xcred, &d, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (g < 0) {
        if (g == GNUTLS_E_CERTIFICATE_KEY_MISMATCH)
            rc = cfg_fail(l, NULL, "%s does not match %s (the key is not the certificate's)",
                          key_from, cert_from);
        else
            rc = cfg_fail(l, NULL, "%s with %s: %s", cert_from, key_from, gnutls_strerror(g));
        goto done;
    }
    /* Client authentication. */
    static const struct {
        const char *name;
        http__client_auth_t v;
    } auths[] = {{"NoClientCert", HTTP__CLIENT_NONE},
                 {"RequestClientCert", HTTP__CLIENT_REQUEST},
                 {"RequireAnyClientCert", HTTP__CLIENT_REQUIRE_ANY},
                 {"RequireClientCert", HTTP__CLIENT_REQUIRE_ANY},
                 {"VerifyClientCertIfGiven", HTTP__CLIENT_VERIFY_IF_GIVEN},
                 {"RequireAndVerifyClientCert", HTTP__CLIENT_REQUIRE_VERIFY}};
    c->client_auth = HTTP__CLIENT_NONE;
    if (auth && auth[0]) {
        size_t i;
        for (i = 0; i < IM_ARRAY_LEN(auths); i++)
            if (!strcmp(auth, auths[i].name)) break;
        if (i == IM_ARRAY_LEN(auths)) {
            rc = cfg_fail(l, cfg_get_raw(t, "client_auth_type"),
                          "invalid client_auth_type \"%s\" (NoClientCert, RequestClientCert, "
                          "RequireAnyClientCert, VerifyClientCertIfGiven or "
                          "RequireAndVerifyClientCert)",
                          auth);
            goto done;
        }
        c->client_auth = auths[i].v;
    }
    if (ca && c->client_auth == HTTP__CLIENT_NONE) {
        rc = cfg_fail(l, cfg_get_raw(t, "client_auth_type"),
                      "client CA's have been configured without a client_auth_type");
        goto done;
    }
    bool verifies = c->client_auth == HTTP__CLIENT_VERIFY_IF_GIVEN ||
                    c->client_auth == HTTP__CLIENT_REQUIRE_VERIFY;
    if (verifies && !ca) {
        rc = cfg_fail(l, cfg_get_raw(t, "client_auth_type"),
                      "client_auth_type %s needs client_ca_file (or client_ca): infermon does not "
                      "fall back to the system's CA roots as Go does",
                      auth);
        goto done;
    }
    if (ca) {
        gnutls_datum_t cd = {(unsigned char *)ca, (unsigned)strlen(ca)};
        g = gnutls_certificate_set_x509_trust_mem(c->xcred, &cd, GNUTLS_X509_FMT_PEM);
        if (g <= 0) {
            rc = cfg_fail(l, NULL, "%s: no valid PEM CA certificate: %s", ca_from,
                          g < 0 ? gnutls_strerror(g) : "none found");
            goto done;
        }
    }
    gnutls_certificate_set_verify_function(c->xcred, verify_cb);
    const cfg_node_t *sans;
    if ((rc = get_list(l, t, "client_allowed_sans", &sans))) goto done;
    if (sans) {
        if (c->client_auth != HTTP__CLIENT_REQUIRE_ANY &&
            c->client_auth != HTTP__CLIENT_REQUIRE_VERIFY) {
            rc = cfg_fail(l, cfg_get_raw(t, "client_allowed_sans"),
                          "client_allowed_sans requires client_auth_type to be one of "
                          "RequireAnyClientCert or RequireAndVerifyClientCert");
            goto done;
        }
        if (sans->nkids > MAX_SANS) {
            rc = cfg_fail(l, sans, "client_allowed_sans: more than %d entries", MAX_SANS);
            goto done;
        }
        c->sans = im_calloc(sans->nkids + 1, sizeof *c->sans);
        for (size_t i = 0; i < sans->nkids; i++)
            c->sans[c->nsans++] = im_strdup(sans->kids[i]->str);
    }
    /* Versions, suites, curves -> GnuTLS priorities. */
    const char *vmin, *vmax;
    if ((rc = get_str(l, t, "min_version", &vmin)) || (rc = get_str(l, t, "max_version", &vmax)))
        goto done;
    int lo = vmin ? tls_version(vmin) : 2, hi = vmax ? tls_version(vmax) : 3;
    if (lo < 0 || hi < 0) {
        const char *which = lo < 0 ? "min_version" : "max_version";
        rc = cfg_fail(l, cfg_get_raw(t, which),
                      "unknown TLS version: %s (TLS10, TLS11, TLS12 or TLS13)",
                      lo < 0 ? vmin : vmax);
        goto done;
    }
    if (lo > hi) {
        rc = cfg_fail(l, cfg_get_raw(t, "min_version"), "min_version %s is above max_version %s",
                      vmin, vmax ? vmax : "TLS13");
        goto done;
    }
    (void)im_buf_puts(&prio, "NORMAL:-VERS-ALL");
    static const char *const vers[] = {"+VERS-TLS1.0", "+VERS-TLS1.1", "+VERS-TLS1.2",
                                       "+VERS-TLS1.3"};
    for (int v = lo; v <= hi; v++) {
        (void)im_buf_putc(&prio, ':');
        (void)im_buf_puts(&prio, vers[v]);
    }
    const cfg_node_t *cs;
    if ((rc = get_list(l, t, "cipher_suites", &cs))) goto done;
    if (cs && cs->nkids) {
        (void)im_buf_puts(&prio, ":-CIPHER-ALL:-MAC-ALL:-KX-ALL");
        c->suites = im_calloc(cs->nkids + 1, sizeof *c->suites);
        for (size_t i = 0; i < cs->nkids; i++) {
            size_t k;
            for (k = 0; k < IM_ARRAY_LEN(suites); k++)
                if (!strcmp(suites[k].go, cs->kids[i]->str)) break;
            if (k == IM_ARRAY_LEN(suites)) {
                rc = cfg_fail(l, cs->kids[i], "unknown cipher: %s", cs->kids[i]->str);
                goto done;
            }
            if (!suite_prio(&suites[k], &prio)) {
                rc = cfg_fail(l, cs->kids[i], "cipher %s is not available in this GnuTLS",
                              cs->kids[i]->str);
                goto done;
            }
            if (!suites[k].tls13)
                c->suites[c->nsuites++] = (uint16_t)(suites[k].id[0] << 8 | suites[k].id[1]);
        }
        /* As in Go, TLS 1.3 suites are not governed by the list. */
        if (hi == 3)
            (void)im_buf_puts(&prio, ":+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:+AEAD");
        if (c->nsuites == 0) c->nsuites = (size_t)-1; /* a list without a TLS <= 1.2 suite */
    }
    const cfg_node_t *cv;
    if ((rc = get_list(l, t, "curve_preferences", &cv))) goto done;
    if (cv && cv->nkids) {
        static const char *const curves[][2] = {{"CurveP256", "GROUP-SECP256R1"},
                                                {"CurveP384", "GROUP-SECP384R1"},
                                                {"CurveP521", "GROUP-SECP521R1"},
                                                {"X25519", "GROUP-X25519"}};
        (void)im_buf_puts(&prio, ":-GROUP-ALL");
        for (size_t i = 0; i < cv->nkids; i++) {
            size_t k;
            for (k = 0; k < IM_ARRAY_LEN(curves); k++)
                if (!strcmp(curves[k][0], cv->kids[i]->str)) break;
            if (k == IM_ARRAY_LEN(curves)) {
                rc = cfg_fail(l, cv->kids[i],
                              "unknown curve: %s (CurveP256, CurveP384, CurveP521 or "
                              "X25519)",
                              cv->kids[i]->str);
                goto done;
            }
            (void)im_buf_puts(&prio, ":+");
            (void)im_buf_puts(&prio, curves[k][1]);
        }
    }
    bool prefer_server = true;
    if ((rc = get_bool(l, t, "prefer_server_cipher_suites", &prefer_server))) goto done;
    if (prefer_server) (void)im_buf_puts(&prio, ":%SERVER_PRECEDENCE");
    const char *epos = NULL;
    if ((g = gnutls_priority_init(&c->prio, prio.data, &epos)) < 0) {
        c->prio = NULL;
        rc = cfg_fail(l, t,
                      "tls_server_config: GnuTLS refuses the priorities \"%s\" (at \"%s\"): %s",
                      prio.data, epos ? epos : "", gnutls_strerror(g));
        goto done;
    }
    IM_DEBUG("web config TLS priorities", "file=%s prio=%s", im_logq(l->file), im_logq(prio.data));
done:
    if (crts) {
        for (unsigned i = 0; i < ncrts; i++) gnutls_x509_crt_deinit(crts[i]);
        gnutls_free(crts);
    }
    if (pk) gnutls_x509_privkey_deinit(pk);
    im_free(cert_from);
    im_free(key_from);
    im_free(ca_from);
    im_free(ca);
    im_buf_free(&prio);
    return rc;
}

/* Go's bcrypt.Cost accepts $2$, $2a$, $2b$, $2y$ with a two-digit cost 4..31. */
static bool bcrypt_hash_ok(const char *h)
{
    if (h[0] != '$' || h[1] != '2') return false;
    size_t p = 2;
    if (h[p] != '$') {
        if (!h[p]) return false; /* "$2": the string ends here */
        p++;
    }
    if (h[p] != '$' || !isdigit((unsigned char)h[p + 1]) || !isdigit((unsigned char)h[p + 2]) ||
        h[p + 3] != '$')
        return false;
    int cost = (h[p + 1] - '0') * 10 + (h[p + 2] - '0');
    if (cost < 4 || cost > 31) return false;
    const char *rest = h + p + 4;
    if (strlen(rest) != 53) return false;
    for (; *rest; rest++)
        if (!isalnum((unsigned char)*rest) && *rest != '.' && *rest != '/') return false;
    return true;
}

static void sha256(const void *a, size_t n, unsigned char out[32])
{
    if (gnutls_hash_fast(GNUTLS_DIG_SHA256, a, n, out) < 0) im_oom(n);
}

static im_rc load(http__web_t *w, const char *path, http__webcfg_t **out, im_err_t *err)
{
    static const char *const top[] = {"tls_server_config", "http_server_config", "basic_auth_users",
                                      "rate_limit", NULL};
    *out = NULL;
    ld_t l = {path, err};
    http__webcfg_t *c = im_calloc(1, sizeof *c);
    atomic_init(&c->refs, 1);
    c->owner = w;
    add_file(c, path);
    char *text = slurp(path, "web config file", err);
    if (!text) {
        cfg_free(c);
        return IM_EIO;
    }
    cfg_node_t *root = NULL;
    im_rc rc = cfg_parse_yaml(text, strlen(text), path, &root, err);
    im_free(text);
    if (rc) {
        cfg_free(c);
        return rc;
    }
    if (root && root->type != CFG_NODE_MAP) {
        rc = cfg_fail(&l, root, "web config must be a mapping");
        goto done;
    }
    if ((rc = check_keys(&l, root, "web.Config", top))) goto done;
    const cfg_node_t *t = cfg_get_raw(root, "tls_server_config");
    if (!cfg_is_null(t) && (rc = load_tls(&l, c, t))) goto done;

    const cfg_node_t *h = cfg_get_raw(root, "http_server_config");
    static const char *const hkeys[] = {"http2", "headers", NULL};
    if ((rc = check_keys(&l, h, "web.HTTPConfig", hkeys))) goto done;
    bool http2 = false;
    if ((rc = get_bool(&l, h, "http2", &http2))) goto done;
    if (http2) {
        rc = cfg_fail(&l, cfg_get_raw(h, "http2"),
                      "http_server_config.http2: true is not supported: infermon serves HTTP/1.1 "
                      "only; remove the key or set it to false");
        goto done;
    }
    const cfg_node_t *hd = cfg_get_raw(h, "headers");
    if (!cfg_is_null(hd)) {
        if (hd->type != CFG_NODE_MAP) {
            rc = cfg_fail(&l, hd, "http_server_config.headers must be a mapping");
            goto done;
        }
        for (size_t i = 0; i + 1 < hd->nkids; i += 2) {
            const cfg_node_t *k = hd->kids[i], *v = hd->kids[i + 1];
            int x;
            for (x = 0; x < NHDR; x++)
                if (k->str && !strcmp(k->str, hdr_names[x])) break;
            if (x == NHDR) {
                rc = cfg_fail(&l, k, "HTTP header \"%s\" can not be configured", k->str);
                goto done;
            }
            if (v->type != CFG_NODE_SCALAR) {
                rc = cfg_fail(&l, v, "HTTP header %s must be a string", k->str);
                goto done;
            }
            if (x == HDR_XCTO && strcmp(v->str, "nosniff")) {
                rc = cfg_fail(&l, v,
                              "invalid value for %s. Expected one of: [\"nosniff\"], but got: "
                              "\"%s\"",
                              k->str, v->str);
                goto done;
            }
            if (x == HDR_XFO && strcmp(v->str, "deny") && strcmp(v->str, "sameorigin")) {
                rc = cfg_fail(&l, v,
                              "invalid value for %s. Expected one of: [\"deny\" "
                              "\"sameorigin\"], but got: \"%s\"",
                              k->str, v->str);
                goto done;
            }
            for (size_t p = 0; v->str[p]; p++)
                if ((unsigned char)v->str[p] < 0x20 && v->str[p] != '\t') {
                    rc = cfg_fail(&l, v, "HTTP header %s: control characters are not allowed",
                                  k->str);
                    goto done;
                }
            im_free(c->hdr[x]);
            c->hdr[x] = v->str[0] ? im_strdup(v->str) : NULL;
        }
    }

    const cfg_node_t *rl = cfg_get_raw(root, "rate_limit");
    static const char *const rkeys[] = {"interval", "burst", NULL};
    if ((rc = check_keys(&l, rl, "web.RateLimiterConfig", rkeys))) goto done;
    const char *iv, *bu;
    if ((rc = get_str(&l, rl, "interval", &iv)) || (rc = get_str(&l, rl, "burst", &bu))) goto done;
    if (iv && strcmp(iv, "0") &&
        (im_duration_parse(iv, strlen(iv), &c->rl_interval_ms, NULL) != IM_OK ||
         c->rl_interval_ms < 0)) {
        rc = cfg_fail(&l, cfg_get_raw(rl, "interval"), "rate_limit.interval: bad duration \"%s\"",
                      iv);
        goto done;
    }
    if (bu) {
        char *end;
        errno = 0;
        c->rl_burst = strtoll(bu, &end, 10);
        if (*end || errno || c->rl_burst < 0) {
            rc = cfg_fail(&l, cfg_get_raw(rl, "burst"), "rate_limit.burst: bad number \"%s\"", bu);
            goto done;
        }
    }

    const cfg_node_t *u = cfg_get_raw(root, "basic_auth_users");
    if (!cfg_is_null(u)) {
        if (u->type != CFG_NODE_MAP) {
            rc = cfg_fail(&l, u,
                          "basic_auth_users must be a mapping of user names to bcrypt hashes");
            goto done;
        }
        size_t n = u->nkids / 2;
        if (n > MAX_USERS) {
            rc = cfg_fail(&l, u, "basic_auth_users: more than %d users", MAX_USERS);
            goto done;
        }
        c->users = im_calloc(n + 1, sizeof(char *));
        c->hashes = im_calloc(n + 1, sizeof(char *));
        c->user_sha = im_calloc(n + 1, sizeof *c->user_sha);
        for (size_t i = 0; i + 1 < u->nkids; i += 2) {
            const cfg_node_t *v = u->kids[i + 1];
            if (v->type != CFG_NODE_SCALAR || !bcrypt_hash_ok(v->str)) {
                rc = cfg_fail(&l, v,
                              "basic_auth_users: the password of \"%s\" is not a bcrypt hash "
                              "($2y$10$ followed by 53 characters, e.g. from htpasswd -nBC 10)",
                              u->kids[i]->str);
                goto done;
            }
            c->users[c->nusers] = im_strdup(u->kids[i]->str);
            c->hashes[c->nusers] = im_strdup(v->str);
            sha256(c->users[c->nusers], strlen(c->users[c->nusers]), c->user_sha[c->nusers]);
            c->nusers++;
        }
    }
done:
    cfg_node_free(root);
    if (rc) {
        if (err && !err->file) err->file = path;
        cfg_free(c);
        return rc;
    }
    *out = c;
    return IM_OK;
}

static void cfg_ref(http__webcfg_t *c)
{
    atomic_fetch_add(&c->refs, 1);
}

void http__webcfg_release(http__webcfg_t *c)
{
    if (c && atomic_fetch_sub(&c->refs, 1) == 1) cfg_free(c);
}

/* ---- The holder ---- */

im_rc http__web_open(const char *path, const http__web_limits_t *lim, http__web_t **out,
                     im_err_t *err)
{
    *out = NULL;
    http__web_t *w = im_calloc(1, sizeof *w);
    w->path = im_strdup(path);
    w->lim = *lim;
    if (w->lim.bcrypt_max <= 0) w->lim.bcrypt_max = HTTP__BCRYPT_MAX_DEFAULT;
    if (w->lim.bcrypt_wait_ms == 0) w->lim.bcrypt_wait_ms = HTTP__BCRYPT_WAIT_MS_DEFAULT;
    if (w->lim.bcrypt_wait_ms < 0) w->lim.bcrypt_wait_ms = 0; /* no waiting */
    pthread_mutex_init(&w->mu, NULL);
    pthread_mutex_init(&w->reload_mu, NULL);
    pthread_mutex_init(&w->pmu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->pcv, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&w->last_ok, true);
    im_rc rc = load(w, path, &w->cur, err);
    if (rc) {
        http__web_close(w);
        return rc;
    }
    w->tls = w->cur->tls;
    w->tokens = (double)w->cur->rl_burst;
    w->bucket_ns = im_mono_ns();
    *out = w;
    return IM_OK;
}

void http__web_close(http__web_t *w)
{
    if (!w) return;
    http__webcfg_release(w->cur);
    pthread_mutex_destroy(&w->mu);
    pthread_mutex_destroy(&w->reload_mu);
    pthread_mutex_destroy(&w->pmu);
    pthread_cond_destroy(&w->pcv);
    im_free(w->path);
    im_free(w);
}

bool http__web_tls(const http__web_t *w)
{
    return w && w->tls;
}

const char *http__web_cert_pem(const http__web_t *w)
{
    return w->cur->cert_pem;
}

const char *http__web_key_pem(const http__web_t *w)
{
    return w->cur->key_pem;
}

/* Reloads if a watched file changed. Called with nothing locked. */
static void maybe_reload(http__web_t *w)
{
    pthread_mutex_lock(&w->mu);
    http__webcfg_t *c = w->cur;
    cfg_ref(c);
    pthread_mutex_unlock(&w->mu);
    fsig_t now[MAX_FILES];
    bool same = true, same_bad;
    for (size_t i = 0; i < c->nfiles; i++) {
        now[i] = sig_of(c->paths[i]);
        if (!sig_eq(&now[i], &c->sigs[i])) same = false;
    }
    if (same) {
        http__webcfg_release(c);
        return;
    }
    pthread_mutex_lock(&w->mu);
    same_bad = w->have_bad && w->cur == c;
    for (size_t i = 0; same_bad && i < c->nfiles; i++)
        if (!sig_eq(&now[i], &w->bad[i])) same_bad = false;
    pthread_mutex_unlock(&w->mu);
    if (same_bad) { /* already tried and failed; wait for the next change */
        http__webcfg_release(c);
        return;
    }
    pthread_mutex_lock(&w->reload_mu);
    bool changed;
    pthread_mutex_lock(&w->mu);
    changed = w->cur != c; /* someone else reloaded meanwhile */
    pthread_mutex_unlock(&w->mu);
    if (!changed) {
        im_err_t err;
        im_err_clear(&err);
        http__webcfg_t *n = NULL;
        im_rc rc = load(w, w->path, &n, &err);
        if (rc == IM_OK && n->tls != w->tls) {
            rc = im_err_set(&err, IM_EINVAL,
                            "%s: TLS was %s when infermon started; switching between TLS and "
                            "plain HTTP needs a restart",
                            w->path, w->tls ? "on" : "off");
            http__webcfg_release(n);
            n = NULL;
        }
        pthread_mutex_lock(&w->mu);
        if (rc == IM_OK) {
            http__webcfg_t *old = w->cur;
            w->cur = n;
            w->have_bad = false;
            memset(w->cache_used, 0, sizeof w->cache_used);
            w->tokens = (double)n->rl_burst;
            w->bucket_ns = im_mono_ns();
            pthread_mutex_unlock(&w->mu);
            http__webcfg_release(old);
            atomic_fetch_add(&w->n_reload_ok, 1);
            atomic_store(&w->last_ok, true);
            IM_INFO("Web config reloaded", "file=%s tls=%s users=%zu", im_logq(w->path),
                    n->tls ? "true" : "false", n->nusers);
        } else {
            memcpy(w->bad, now, sizeof now);
            w->have_bad = true;
            pthread_mutex_unlock(&w->mu);
            atomic_fetch_add(&w->n_reload_fail, 1);
            atomic_store(&w->last_ok, false);
            char b[1200];
            IM_ERROR("Web config reload failed; the previous one stays in use", "file=%s err=%s",
                     im_logq(w->path), im_logq(im_err_format(&err, b, sizeof b)));
        }
    }
    pthread_mutex_unlock(&w->reload_mu);
    http__webcfg_release(c);
}

http__webcfg_t *http__web_acquire(http__web_t *w)
{
    maybe_reload(w);
    pthread_mutex_lock(&w->mu);
    http__webcfg_t *c = w->cur;
    cfg_ref(c);
    pthread_mutex_unlock(&w->mu);
    return c;
}

/* ---- TLS sessions ---- */

static bool san_allowed(const http__webcfg_t *c, gnutls_x509_crt_t crt)
{
    for (unsigned i = 0;; i++) {
        char buf[1024];
        size_t n = sizeof buf - 1;
        unsigned type = 0, critical = 0;
        int g = gnutls_x509_crt_get_subject_alt_name2(crt, i, buf, &n, &type, &critical);
        if (g == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE) return false;
        if (g == GNUTLS_E_SHORT_MEMORY_BUFFER) continue;
        if (g < 0) return false;
        char ip[INET6_ADDRSTRLEN];
        const char *v = NULL;
        if (g == GNUTLS_SAN_DNSNAME || g == GNUTLS_SAN_RFC822NAME || g == GNUTLS_SAN_URI) {
            buf[n] = 0;
            v = buf;
        } else if (g == GNUTLS_SAN_IPADDRESS && (n == 4 || n == 16)) {
            if (inet_ntop(n == 4 ? AF_INET : AF_INET6, buf, ip, sizeof ip)) v = ip;
        }
        if (!v) continue;
        for (size_t k = 0; k < c->nsans; k++)
            if (!strcmp(c->sans[k], v)) return true;
    }
}

static int refuse(const http__webcfg_t *c, gnutls_session_t s, const char *why)
{
    (void)s;
    if (c) atomic_fetch_add(&c->owner->n_tls_refused, 1);
    IM_WARN("TLS client certificate refused", "reason=%s", im_logq(why));
    return GNUTLS_E_CERTIFICATE_ERROR;
}

/* Runs in the handshake when the client's Certificate message arrives (also
 * when it is empty). Non-zero aborts the handshake. */
static int verify_cb(gnutls_session_t s)
{
    http__webcfg_t *c = reg_find(s);
    if (!c) return refuse(NULL, s, "no web config for this session");
    unsigned n = 0;
    const gnutls_datum_t *peers = gnutls_certificate_get_peers(s, &n);
    bool required =
        c->client_auth == HTTP__CLIENT_REQUIRE_ANY || c->client_auth == HTTP__CLIENT_REQUIRE_VERIFY;
    if (!peers || n == 0) return required ? refuse(c, s, "no client certificate sent") : 0;
    if (c->client_auth == HTTP__CLIENT_VERIFY_IF_GIVEN ||
        c->client_auth == HTTP__CLIENT_REQUIRE_VERIFY) {
        gnutls_typed_vdata_st vd = {GNUTLS_DT_KEY_PURPOSE_OID,
                                    (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT, 0};
        unsigned status = 0;
        int g = gnutls_certificate_verify_peers(s, &vd, 1, &status);
        if (g < 0) return refuse(c, s, gnutls_strerror(g));
        if (status) {
            gnutls_datum_t out = {NULL, 0};
            char why[512];
            if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out, 0) >=
                0) {
                snprintf(why, sizeof why, "%s", (const char *)out.data);
                gnutls_free(out.data);
            } else {
                snprintf(why, sizeof why, "verification status 0x%x", status);
            }
            return refuse(c, s, why);
        }
    }
    if (c->nsans) {
        gnutls_x509_crt_t crt;
        if (gnutls_x509_crt_init(&crt) < 0) return refuse(c, s, "out of memory");
        bool ok =
            gnutls_x509_crt_import(crt, &peers[0], GNUTLS_X509_FMT_DER) >= 0 && san_allowed(c, crt);
        gnutls_x509_crt_deinit(crt);
        if (!ok) return refuse(c, s, "no SAN of the client certificate is in client_allowed_sans");
    }
    return 0;
}

/* After the ServerHello is written: the suite GnuTLS picked (read from the
 * message: version 2, random 32, session id 1+n, then the suite) must be one of
 * cipher_suites. TLS 1.3 suites (0x13xx) are not governed by the list, as in Go. */
static int hello_hook(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
                      const gnutls_datum_t *msg)
{
    (void)htype;
    (void)when;
    (void)incoming;
    http__webcfg_t *c = reg_find(s);
    if (!c) return GNUTLS_E_INTERNAL_ERROR;
    if (c->nsuites == 0) return 0;
    if (!msg || msg->size < 35 || msg->size < 35u + msg->data[34] + 2u)
        return GNUTLS_E_UNEXPECTED_PACKET_LENGTH;
    size_t off = 35u + msg->data[34];
    uint16_t got = (uint16_t)(msg->data[off] << 8 | msg->data[off + 1]);
    if ((got >> 8) == 0x13) return 0;
    if (c->nsuites != (size_t)-1)
        for (size_t i = 0; i < c->nsuites; i++)
            if (c->suites[i] == got) return 0;
    IM_WARN("TLS handshake refused: cipher suite not in cipher_suites", "suite=0x%04x", got);
    return GNUTLS_E_NO_CIPHER_SUITES;
}

static int always_fail_hook(gnutls_session_t s, unsigned htype, unsigned when, unsigned incoming,
                            const gnutls_datum_t *msg)
{
    (void)s;
    (void)htype;
    (void)when;
    (void)incoming;
    (void)msg;
    return GNUTLS_E_INTERNAL_ERROR;
}

void *http__web_conn_start(http__web_t *w, void *session)
{
    gnutls_session_t s = session;
    if (!w || !s) return NULL;
    http__webcfg_t *c = http__web_acquire(w);
    int g = GNUTLS_E_INVALID_REQUEST;
    if (c->tls && c->xcred && c->prio)
        g = gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, c->xcred);
    if (g >= 0) g = gnutls_priority_set(s, c->prio);
    if (g < 0) {
        IM_ERROR("TLS session set-up failed; refusing the handshake", "err=%s",
                 im_logq(gnutls_strerror(g)));
        gnutls_handshake_set_hook_function(s, GNUTLS_HANDSHAKE_ANY, GNUTLS_HOOK_PRE,
                                           always_fail_hook);
        return c;
    }
    gnutls_certificate_request_t req = GNUTLS_CERT_IGNORE;
    switch (c->client_auth) {
    case HTTP__CLIENT_NONE: req = GNUTLS_CERT_IGNORE; break;
    case HTTP__CLIENT_REQUEST:
    case HTTP__CLIENT_VERIFY_IF_GIVEN: req = GNUTLS_CERT_REQUEST; break;
    case HTTP__CLIENT_REQUIRE_ANY:
    case HTTP__CLIENT_REQUIRE_VERIFY: req = GNUTLS_CERT_REQUIRE; break;
    }
    gnutls_certificate_server_set_request(s, req);
    if (c->nsuites)
        gnutls_handshake_set_hook_function(s, GNUTLS_HANDSHAKE_SERVER_HELLO, GNUTLS_HOOK_POST,
                                           hello_hook);
    return c;
}

void http__web_conn_end(void *ctx)
{
    http__webcfg_release(ctx);
}

/* ---- Response headers ---- */

void http__web_headers(http__web_t *w, struct MHD_Response *resp)
{
    if (!w) return;
    pthread_mutex_lock(&w->mu);
    for (int i = 0; i < NHDR; i++)
        if (w->cur->hdr[i]) MHD_add_response_header(resp, hdr_names[i], w->cur->hdr[i]);
    pthread_mutex_unlock(&w->mu);
}

/* ---- Basic auth ---- */

typedef char *(*crypt_r_fn)(const char *, const char *, struct crypt_data *);
static crypt_r_fn crypt_r_ptr;

static void load_crypt(void)
{
    void *h = dlopen("libcrypt.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libcrypt.so", RTLD_NOW | RTLD_LOCAL);
    if (h) *(void **)&crypt_r_ptr = dlsym(h, "crypt_r");
}

bool http__password_ok(const char *password, const char *hash)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load_crypt);
    if (!crypt_r_ptr || !hash || !*hash) return false;
    struct crypt_data *cd = im_calloc(1, sizeof *cd);
    const char *out = crypt_r_ptr(password, hash, cd);
    bool ok = out && out[0] != '*' && strlen(out) == strlen(hash);
    if (ok) {
        unsigned char diff = 0; /* constant time */
        for (size_t i = 0; hash[i]; i++) diff |= (unsigned char)(out[i] ^ hash[i]);
        ok = diff == 0;
    }
    memset(cd, 0, sizeof *cd);
    im_free(cd);
    return ok;
}

static bool ct_eq32(const unsigned char *a, const unsigned char *b)
{
    unsigned char d = 0;
    for (int i = 0; i < 32; i++) d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

/* Takes a place in the bcrypt pool, waiting at most bcrypt_wait_ms. */
static bool pool_enter(http__web_t *w)
{
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    int64_t ns = dl.tv_nsec + (w->lim.bcrypt_wait_ms % 1000) * 1000000;
    dl.tv_sec += (time_t)(w->lim.bcrypt_wait_ms / 1000 + ns / 1000000000);
    dl.tv_nsec = (long)(ns % 1000000000);
    pthread_mutex_lock(&w->pmu);
    while (w->inflight >= w->lim.bcrypt_max) {
        if (pthread_cond_timedwait(&w->pcv, &w->pmu, &dl) == ETIMEDOUT &&
            w->inflight >= w->lim.bcrypt_max) {
            pthread_mutex_unlock(&w->pmu);
            atomic_fetch_add(&w->n_busy, 1);
            return false;
        }
    }
    w->inflight++;
    if (w->inflight > w->inflight_peak) w->inflight_peak = w->inflight;
    pthread_mutex_unlock(&w->pmu);
    atomic_fetch_add(&w->n_bcrypt, 1);
    return true;
}

static void pool_leave(http__web_t *w)
{
    pthread_mutex_lock(&w->pmu);
    w->inflight--;
    pthread_cond_signal(&w->pcv);
    pthread_mutex_unlock(&w->pmu);
}

/* Token bucket as Go's rate.Limiter(Every(interval), burst).Allow(). */
static bool rate_allow(http__web_t *w, const http__webcfg_t *c)
{
    if (c->rl_interval_ms <= 0) return true;
    pthread_mutex_lock(&w->mu);
    int64_t now = im_mono_ns();
    double add = (double)(now - w->bucket_ns) / ((double)c->rl_interval_ms * 1e6);
    w->bucket_ns = now;
    w->tokens += add;
    if (w->tokens > (double)c->rl_burst) w->tokens = (double)c->rl_burst;
    bool ok = w->tokens >= 1.0;
    if (ok) w->tokens -= 1.0;
    pthread_mutex_unlock(&w->mu);
    if (!ok) atomic_fetch_add(&w->n_rate_limited, 1);
    return ok;
}

static const signed char b64v[256] = {
    ['A'] = 1,  ['B'] = 2,  ['C'] = 3,  ['D'] = 4,  ['E'] = 5,  ['F'] = 6,  ['G'] = 7,  ['H'] = 8,
    ['I'] = 9,  ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14, ['O'] = 15, ['P'] = 16,
    ['Q'] = 17, ['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21, ['V'] = 22, ['W'] = 23, ['X'] = 24,
    ['Y'] = 25, ['Z'] = 26, ['a'] = 27, ['b'] = 28, ['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32,
    ['g'] = 33, ['h'] = 34, ['i'] = 35, ['j'] = 36, ['k'] = 37, ['l'] = 38, ['m'] = 39, ['n'] = 40,
    ['o'] = 41, ['p'] = 42, ['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48,
    ['w'] = 49, ['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56,
    ['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['+'] = 63, ['/'] = 64};

static size_t b64_decode(const char *s, char *out, size_t cap)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t n = 0;
    for (; *s && *s != '='; s++) {
        int v = b64v[(unsigned char)*s] - 1;
        if (v < 0) return (size_t)-1;
        acc = acc << 6 | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n + 1 >= cap) return (size_t)-1;
            out[n++] = (char)(acc >> bits);
        }
    }
    out[n] = 0;
    return n;
}

http__auth_t http__web_authorize(http__web_t *w, const char *authorization)
{
    if (!w) return HTTP__AUTH_OK;
    http__webcfg_t *c = http__web_acquire(w);
    http__auth_t res = HTTP__AUTH_UNAUTHORIZED;
    char dec[1024];
    if (!rate_allow(w, c)) {
        res = HTTP__AUTH_RATE_LIMITED;
        goto out;
    }
    if (c->nusers == 0) {
        res = HTTP__AUTH_OK;
        goto out;
    }
    if (!authorization || strncasecmp(authorization, "Basic ", 6) != 0) goto out;
    const char *b = authorization + 6;
    while (*b == ' ') b++;
    size_t n = b64_decode(b, dec, sizeof dec);
    if (n == (size_t)-1) goto out;
    char *colon = memchr(dec, ':', n);
    if (!colon) goto out;
    size_t ulen = (size_t)(colon - dec);
    const char *pw = colon + 1;
    size_t pwlen = n - ulen - 1;
    /* Constant-time lookup: every name is compared, no early exit. */
    unsigned char us[32];
    sha256(dec, ulen, us);
    size_t idx = 0;
    unsigned found = 0;
    for (size_t i = 0; i < c->nusers; i++) {
        unsigned eq = ct_eq32(us, c->user_sha[i]);
        size_t mask = (size_t)0 - (size_t)(eq & ~found);
        idx = (idx & ~mask) | (i & mask);
        found |= eq;
    }
    /* Unknown user: the first user's hash, so it costs the same bcrypt. */
    const char *hash = c->hashes[idx];
    unsigned char key[32];
    {
        gnutls_hash_hd_t hh;
        if (gnutls_hash_init(&hh, GNUTLS_DIG_SHA256) < 0) im_oom(32);
        (void)gnutls_hash(hh, dec, ulen);
        (void)gnutls_hash(hh, "\0", 1);
        (void)gnutls_hash(hh, pw, pwlen);
        (void)gnutls_hash(hh, "\0", 1);
        (void)gnutls_hash(hh, hash, strlen(hash));
        gnutls_hash_deinit(hh, key);
    }
    bool hit = false;
    pthread_mutex_lock(&w->mu);
    if (w->cur == c)
        for (size_t i = 0; i < CACHE_SLOTS; i++)
            if (w->cache_used[i] && ct_eq32(w->cache[i], key)) hit = true;
    pthread_mutex_unlock(&w->mu);
    if (hit && found) {
        atomic_fetch_add(&w->n_cache_hits, 1);
        res = HTTP__AUTH_OK;
        goto out;
    }
    if (!pool_enter(w)) {
        res = HTTP__AUTH_BUSY;
        goto out;
    }
    bool ok = http__password_ok(pw, hash);
    pool_leave(w);
    if (ok && found) {
        pthread_mutex_lock(&w->mu);
        if (w->cur == c) {
            memcpy(w->cache[w->cache_next], key, 32);
            w->cache_used[w->cache_next] = true;
            w->cache_next = (w->cache_next + 1) % CACHE_SLOTS;
        }
        pthread_mutex_unlock(&w->mu);
        res = HTTP__AUTH_OK;
    }
out:
    memset(dec, 0, sizeof dec);
    http__webcfg_release(c);
    return res;
}

int http__web_bcrypt_max(const http__web_t *w)
{
    return w->lim.bcrypt_max;
}

/* ---- Metrics ---- */

void http__web_metrics(void *ud, im_buf_t *out)
{
    http__web_t *w = ud;
    pthread_mutex_lock(&w->pmu);
    int infl = w->inflight, peak = w->inflight_peak;
    pthread_mutex_unlock(&w->pmu);
    char b[2048];
    snprintf(
        b, sizeof b,
        "# HELP infermon_web_basic_auth_bcrypt_total bcrypt password verifications run.\n"
        "# TYPE infermon_web_basic_auth_bcrypt_total counter\n"
        "infermon_web_basic_auth_bcrypt_total %llu\n"
        "# HELP infermon_web_basic_auth_bcrypt_inflight bcrypt verifications running now.\n"
        "# TYPE infermon_web_basic_auth_bcrypt_inflight gauge\n"
        "infermon_web_basic_auth_bcrypt_inflight %d\n"
        "# HELP infermon_web_basic_auth_bcrypt_inflight_max Most bcrypt verifications seen at "
        "once (bounded by --web.basic-auth.bcrypt-concurrency).\n"
        "# TYPE infermon_web_basic_auth_bcrypt_inflight_max gauge\n"
        "infermon_web_basic_auth_bcrypt_inflight_max %d\n"
        "# HELP infermon_web_basic_auth_busy_total Requests refused with 503 because the bcrypt "
        "pool stayed full for --web.basic-auth.bcrypt-wait.\n"
        "# TYPE infermon_web_basic_auth_busy_total counter\n"
        "infermon_web_basic_auth_busy_total %llu\n"
        "# HELP infermon_web_basic_auth_cache_hits_total Requests authenticated from the cache of "
        "recent successes.\n"
        "# TYPE infermon_web_basic_auth_cache_hits_total counter\n"
        "infermon_web_basic_auth_cache_hits_total %llu\n"
        "# HELP infermon_web_rate_limited_total Requests refused by rate_limit (429).\n"
        "# TYPE infermon_web_rate_limited_total counter\n"
        "infermon_web_rate_limited_total %llu\n"
        "# HELP infermon_web_tls_client_refused_total TLS handshakes refused for the client "
        "certificate.\n"
        "# TYPE infermon_web_tls_client_refused_total counter\n"
        "infermon_web_tls_client_refused_total %llu\n"
        "# HELP infermon_web_config_reloads_total Reloads of the web config file.\n"
        "# TYPE infermon_web_config_reloads_total counter\n"
        "infermon_web_config_reloads_total{result=\"success\"} %llu\n"
        "infermon_web_config_reloads_total{result=\"failure\"} %llu\n"
        "# HELP infermon_web_config_last_reload_successful Whether the last web config reload "
        "succeeded.\n"
        "# TYPE infermon_web_config_last_reload_successful gauge\n"
        "infermon_web_config_last_reload_successful %d\n",
        (unsigned long long)atomic_load(&w->n_bcrypt), infl, peak,
        (unsigned long long)atomic_load(&w->n_busy),
        (unsigned long long)atomic_load(&w->n_cache_hits),
        (unsigned long long)atomic_load(&w->n_rate_limited),
        (unsigned long long)atomic_load(&w->n_tls_refused),
        (unsigned long long)atomic_load(&w->n_reload_ok),
        (unsigned long long)atomic_load(&w->n_reload_fail), atomic_load(&w->last_ok) ? 1 : 0);
    (void)im_buf_puts(out, b);
}
