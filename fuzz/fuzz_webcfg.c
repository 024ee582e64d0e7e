/* fuzz_webcfg.c — libFuzzer target for the --web.config.file loader
 * (src/http/webcfg.c): YAML text to a parsed web config, certificates and keys
 * given inline (cert:, key:, client_ca:) or as files next to it, no TLS
 * handshake. Each input is written as web.yml in a scratch directory that also
 * holds cert.pem and key.pem (a self-signed pair made at start with GnuTLS) and
 * loaded with http__web_open: it must load or be refused with an error
 * message, never crash, leak or read out of bounds. A loaded config is then
 * used as the server would without a connection: its TLS switch and PEMs, a
 * snapshot acquired and released, its headers added to a response. Seeds in
 * fuzz/corpus/fuzz_webcfg. */
#include "util/base.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "http/http_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_dir[64];
static char g_cfg[128];

static void put_file(const char *name, const void *p, size_t n)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) abort();
    fclose(f);
}

/* A self-signed certificate and its key (EC P-256), as PEM files. */
static void make_pair(void)
{
    gnutls_x509_privkey_t key;
    gnutls_x509_crt_t crt;
    if (gnutls_x509_privkey_init(&key) ||
        gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
                                     GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) ||
        gnutls_x509_crt_init(&crt))
        abort();
    unsigned char serial[1] = {1};
    gnutls_x509_crt_set_version(crt, 3);
    gnutls_x509_crt_set_serial(crt, serial, sizeof serial);
    gnutls_x509_crt_set_activation_time(crt, time(NULL) - 3600);
    gnutls_x509_crt_set_expiration_time(crt, time(NULL) + 86400);
    gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, "localhost", 9);
    gnutls_x509_crt_set_key(crt, key);
    if (gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0)) abort();
    gnutls_datum_t out;
    if (gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &out)) abort();
    put_file("cert.pem", out.data, out.size);
    put_file("ca.pem", out.data, out.size);
    gnutls_free(out.data);
    if (gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &out)) abort();
    put_file("key.pem", out.data, out.size);
    gnutls_free(out.data);
    gnutls_x509_crt_deinit(crt);
    gnutls_x509_privkey_deinit(key);
}

static void cleanup(void)
{
    const char *names[] = {"web.yml", "cert.pem", "key.pem", "ca.pem"};
    char path[160];
    for (size_t i = 0; i < IM_ARRAY_LEN(names); i++) {
        snprintf(path, sizeof path, "%s/%s", g_dir, names[i]);
        unlink(path);
    }
    rmdir(g_dir);
}

static void init(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/fuzz_webcfg.XXXXXX");
    if (!mkdtemp(g_dir)) abort();
    snprintf(g_cfg, sizeof g_cfg, "%s/web.yml", g_dir);
    make_pair();
    atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_dir[0]) init();
    put_file("web.yml", data, size);
    http__web_limits_t lim = {0, 0};
    http__web_t *w = NULL;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = http__web_open(g_cfg, &lim, &w, &err);
    if (rc != IM_OK) {
        if (!err.msg[0]) abort(); /* a refusal says why */
        return 0;
    }
    if (http__web_tls(w) && (!http__web_cert_pem(w) || !http__web_key_pem(w))) abort();
    http__webcfg_release(http__web_acquire(w));
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    http__web_headers(w, resp);
    MHD_destroy_response(resp);
    http__web_close(w);
    return 0;
}
