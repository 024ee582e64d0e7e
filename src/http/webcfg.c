/* webcfg.c — Prometheus' web configuration file (--web.config.file):
 * tls_server_config (cert_file, key_file) and basic_auth_users (user: bcrypt
 * hash). Passwords are checked with crypt(3) from libxcrypt, which implements
 * bcrypt ($2a$, $2b$, $2y$); it is loaded with dlopen so the binary does not need
 * it unless a web config with users is given. Unknown keys are errors. */
#include "util/base.h"

#include <crypt.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "http/http_int.h"

static char *slurp(const char *path, im_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        im_err_set(err, IM_EIO, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    im_buf_t b;
    im_buf_init(&b, 4u << 20);
    char tmp[8192];
    size_t n;
    bool ok = true;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
        if (im_buf_append(&b, tmp, n) != IM_OK) ok = false;
    fclose(f);
    if (!ok) {
        im_buf_free(&b);
        im_err_set(err, IM_ELIMIT, "%s is too large", path);
        return NULL;
    }
    if (!b.data) (void)im_buf_puts(&b, "");
    return im_buf_steal(&b, NULL);
}

static const scrape_cfg_node_t *mget(const scrape_cfg_node_t *m, const char *k)
{
    if (!m || m->type != SCRAPE_NODE_MAP) return NULL;
    for (size_t i = 0; i < m->nkids; i += 2)
        if (m->kids[i]->str && !strcmp(m->kids[i]->str, k)) return m->kids[i + 1];
    return NULL;
}

static im_rc check_keys(const scrape_cfg_node_t *m, const char *const *keys, const char *path,
                        im_err_t *err)
{
    if (!m || m->type != SCRAPE_NODE_MAP) return IM_OK;
    for (size_t i = 0; i < m->nkids; i += 2) {
        bool ok = false;
        for (size_t k = 0; keys[k]; k++)
            if (m->kids[i]->str && !strcmp(keys[k], m->kids[i]->str)) ok = true;
        if (!ok) {
            im_rc rc = im_err_setpos(err, IM_EPARSE, m->kids[i]->line, m->kids[i]->col,
                                     "field %s not found in web config", m->kids[i]->str);
            if (err) err->file = path;
            return rc;
        }
    }
    return IM_OK;
}

im_rc http__webcfg_load(const char *path, http__webcfg_t *w, im_err_t *err)
{
    static const char *const top[] = {"tls_server_config", "basic_auth_users", "http_server_config",
                                      NULL};
    static const char *const tlsk[] = {
        "cert_file",         "key_file",    "client_auth_type", "client_ca_file",
        "min_version",       "max_version", "cipher_suites",    "prefer_server_cipher_suites",
        "curve_preferences", NULL};
    memset(w, 0, sizeof *w);
    char *text = slurp(path, err);
    if (!text) return IM_EIO;
    scrape_cfg_node_t *root = NULL;
    im_rc rc = scrape_cfg_parse_yaml(text, strlen(text), path, &root, err);
    im_free(text);
    if (rc) return rc;
    if (root && root->type != SCRAPE_NODE_MAP) {
        scrape_cfg_node_free(root);
        return im_err_set(err, IM_EPARSE, "%s: web config must be a mapping", path);
    }
    if ((rc = check_keys(root, top, path, err))) goto done;
    const scrape_cfg_node_t *tls = mget(root, "tls_server_config");
    if (tls && tls->type == SCRAPE_NODE_MAP) {
        if ((rc = check_keys(tls, tlsk, path, err))) goto done;
        const scrape_cfg_node_t *c = mget(tls, "cert_file"), *k = mget(tls, "key_file");
        if (!c || !k || c->type != SCRAPE_NODE_SCALAR || k->type != SCRAPE_NODE_SCALAR) {
            rc = im_err_set(err, IM_EPARSE, "%s: tls_server_config needs cert_file and key_file",
                            path);
            goto done;
        }
        if (!(w->cert_pem = slurp(c->str, err)) || !(w->key_pem = slurp(k->str, err))) {
            rc = IM_EIO;
            goto done;
        }
    }
    const scrape_cfg_node_t *u = mget(root, "basic_auth_users");
    if (u && u->type == SCRAPE_NODE_MAP) {
        w->users = im_calloc(u->nkids / 2 + 1, sizeof(char *));
        w->hashes = im_calloc(u->nkids / 2 + 1, sizeof(char *));
        for (size_t i = 0; i < u->nkids; i += 2) {
            if (u->kids[i + 1]->type != SCRAPE_NODE_SCALAR) {
                rc = im_err_setpos(err, IM_EPARSE, u->kids[i]->line, u->kids[i]->col,
                                   "basic_auth_users values must be bcrypt hashes");
                goto done;
            }
            w->users[w->nusers] = im_strdup(u->kids[i]->str);
            w->hashes[w->nusers++] = im_strdup(u->kids[i + 1]->str);
        }
    }
done:
    scrape_cfg_node_free(root);
    if (rc) http__webcfg_free(w);
    return rc;
}

void http__webcfg_free(http__webcfg_t *w)
{
    im_free(w->cert_pem);
    im_free(w->key_pem);
    for (size_t i = 0; i < w->nusers; i++) {
        im_free(w->users[i]);
        im_free(w->hashes[i]);
    }
    im_free(w->users);
    im_free(w->hashes);
    memset(w, 0, sizeof *w);
}

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
    im_free(cd);
    return ok;
}
