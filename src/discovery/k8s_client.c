/* k8s_client.c — the running Kubernetes discoverer: connection settings
 * (api_server, kubeconfig_file or in-cluster), informers doing list + watch over
 * HTTP/1.1 with curl, the object stores, and the published target groups.
 *
 * Informer state machine (one thread each):
 *
 *     LIST --ok--> WATCH --stream ended--> WATCH (from the last resourceVersion)
 *      ^  \         |  \--410 (HTTP or ERROR event)--> LIST (no wait)
 *      |   error    |---other error--> backoff --> WATCH
 *      |    v       \---ERROR event (not 410)--> backoff --> LIST
 *      +--backoff
 *
 * backoff: 250 ms doubling to 30 s, reset by a successful list or a watch that
 * delivered an event; the wait is interruptible (stop). See k8s.h for the
 * invariants on when groups are rebuilt. */
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "discovery/k8s.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/timeutil.h"

#include "k8s_int.h"

const char *k8s_serviceaccount_dir(void)
{
    const char *e = getenv("INFERMON_K8S_SERVICEACCOUNT_DIR");
    return e && *e ? e : "/var/run/secrets/kubernetes.io/serviceaccount";
}

/* Reads a small file (a token, a namespace) with trailing white space cut. */
static char *read_small(const char *path, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *b = im_malloc(max + 1);
    size_t n = fread(b, 1, max, f);
    fclose(f);
    b[n] = 0;
    while (n && (b[n - 1] == '\n' || b[n - 1] == '\r' || b[n - 1] == ' ' || b[n - 1] == '\t'))
        b[--n] = 0;
    return b;
}

/* ---- the groups map: source -> group ---- */

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static k8s_group_t **gmap_slot(k8s_gmap_t *m, const char *src)
{
    if (!m->cap) return NULL;
    size_t i = str_hash(src) & (m->cap - 1);
    while (m->slots[i]) {
        if (!strcmp(m->slots[i]->source, src)) return &m->slots[i];
        i = (i + 1) & (m->cap - 1);
    }
    return &m->slots[i];
}

static void gmap_grow(k8s_gmap_t *m)
{
    size_t oc = m->cap;
    k8s_group_t **old = m->slots;
    m->cap = oc ? oc * 2 : 64;
    m->slots = im_calloc(m->cap, sizeof *m->slots);
    for (size_t i = 0; i < oc; i++)
        if (old[i]) *gmap_slot(m, old[i]->source) = old[i];
    im_free(old);
}

/* Puts g (taken) in place of the group of the same source; a group without
 * targets removes it. */
static void gmap_put(k8s_gmap_t *m, k8s_group_t *g)
{
    k8s_group_t **s = gmap_slot(m, g->source);
    if (s && *s) {
        /* linear probing: delete by re-inserting the rest of the cluster */
        k8s_group_clear(*s);
        im_free(*s);
        *s = NULL;
        m->n--;
        size_t i = (size_t)(s - m->slots);
        for (size_t j = (i + 1) & (m->cap - 1); m->slots[j]; j = (j + 1) & (m->cap - 1)) {
            k8s_group_t *x = m->slots[j];
            m->slots[j] = NULL;
            *gmap_slot(m, x->source) = x;
        }
    }
    if (!g->ntargets) {
        k8s_group_clear(g);
        return;
    }
    if ((m->n + 1) * 2 > m->cap) gmap_grow(m);
    k8s_group_t *ng = im_malloc(sizeof *ng);
    *ng = *g;
    memset(g, 0, sizeof *g);
    *gmap_slot(m, ng->source) = ng;
    m->n++;
}

static void gmap_free(k8s_gmap_t *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i]) {
            k8s_group_clear(m->slots[i]);
            im_free(m->slots[i]);
        }
    im_free(m->slots);
    memset(m, 0, sizeof *m);
}

/* ---- rebuilding groups (d->mu held) ---- */

static void cache_of(k8s_discoverer_t *d, k8s_cache_t *c)
{
    memset(c, 0, sizeof *c);
    for (int k = 0; k < K8S_NROLES; k++) {
        c->stores[k] = d->stores[k];
        c->nstores[k] = d->nstores[k];
    }
}

static void build_now(k8s_discoverer_t *d, const json_t *obj)
{
    k8s_cache_t c;
    cache_of(d, &c);
    k8s_group_t g;
    k8s_build(d->cfg.role, &c, d->cfg.attach_node, obj, &g);
    gmap_put(&d->groups, &g);
    d->gen++;
}

/* Queues obj's group for the builder thread, which rebuilds it a moment later
 * with the stores as they are then (Prometheus' work queue: a key queued twice
 * is built once, from the latest objects). */
static void rebuild(k8s_discoverer_t *d, const json_t *obj)
{
    char key[1200];
    json_t *md = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *name = json_string_value(json_object_get(md, "name"));
    if (!name) return;
    if (d->cfg.role == K8S_ROLE_NODE)
        snprintf(key, sizeof key, "%s", name);
    else
        snprintf(key, sizeof key, "%s/%s", ns ? ns : "", name);
    json_object_set_new(d->dirty, key, json_true());
    pthread_cond_broadcast(&d->cv);
}

static void remove_group(k8s_discoverer_t *d, k8s_kind_t kind, const char *key)
{
    (void)kind;
    k8s_group_t g = {0};
    char src[1200];
    if (d->cfg.role == K8S_ROLE_NODE)
        snprintf(src, sizeof src, "node/%s", key);
    else {
        static const char *const pre[K8S_NROLES] = {"pod",           "svc",  "endpoints",
                                                    "endpointslice", "node", "ingress"};
        snprintf(src, sizeof src, "%s/%s", pre[d->cfg.role], key);
    }
    g.source = im_strdup(src);
    gmap_put(&d->groups, &g);
    json_object_del(d->dirty, key);
    d->gen++;
}

static const char *sget(const json_t *o, const char *a, const char *b)
{
    const char *s = json_string_value(json_object_get(json_object_get(o, a), b));
    return s ? s : "";
}

/* Does obj (of the role's kind) sit on node name? */
static bool on_node(k8s_role_t role, const json_t *obj, const char *name)
{
    size_t i, j;
    json_t *x, *y;
    switch (role) {
    case K8S_ROLE_POD: return !strcmp(sget(obj, "spec", "nodeName"), name);
    case K8S_ROLE_ENDPOINTS:
        json_array_foreach(json_object_get(obj, "subsets"), i, x)
        {
            const char *lists[2] = {"addresses", "notReadyAddresses"};
            for (int l = 0; l < 2; l++) json_array_foreach(json_object_get(x, lists[l]), j, y)
                {
                    const char *nn = json_string_value(json_object_get(y, "nodeName"));
                    if (nn && !strcmp(nn, name)) return true;
                }
        }
        return false;
    case K8S_ROLE_ENDPOINTSLICE:
        json_array_foreach(json_object_get(obj, "endpoints"), i, x)
        {
            const char *nn = json_string_value(json_object_get(x, "nodeName"));
            if (nn && !strcmp(nn, name)) return true;
        }
        return false;
    default: return false;
    }
}

static void rebuild_all(k8s_discoverer_t *d)
{
    k8s_kind_t main = d->cfg.role;
    for (size_t s = 0; s < d->nstores[main]; s++) {
        const char *k;
        json_t *o;
        json_object_foreach(d->stores[main][s], k, o) rebuild(d, o);
    }
}

/* An object of kind changed (obj) or went away (obj NULL, key "NS/NAME"). */
static void on_change(k8s_discoverer_t *d, k8s_kind_t kind, const char *key, const json_t *obj)
{
    if (!d->synced) return; /* everything is built once all informers synced */
    if (d->watch_only) {    /* a watcher only counts changes */
        d->gen++;
        return;
    }
    k8s_role_t role = d->cfg.role;
    if (kind == role) {
        if (obj)
            rebuild(d, obj);
        else
            remove_group(d, kind, key);
        return;
    }
    if (kind == K8S_ROLE_SERVICE && role == K8S_ROLE_ENDPOINTS) {
        for (size_t s = 0; s < d->nstores[role]; s++) {
            json_t *o = json_object_get(d->stores[role][s], key);
            if (o) rebuild(d, o);
        }
        return;
    }
    if (kind == K8S_ROLE_SERVICE && role == K8S_ROLE_ENDPOINTSLICE) {
        const char *slash = strchr(key, '/');
        if (!slash) return;
        size_t nsl = (size_t)(slash - key);
        for (size_t s = 0; s < d->nstores[role]; s++) {
            const char *k;
            json_t *o;
            json_object_foreach(d->stores[role][s], k, o)
            {
                json_t *md = json_object_get(o, "metadata");
                const char *ns = json_string_value(json_object_get(md, "namespace"));
                const char *sn = json_string_value(
                    json_object_get(json_object_get(md, "labels"), "kubernetes.io/service-name"));
                if (ns && sn && strlen(ns) == nsl && !strncmp(ns, key, nsl) &&
                    !strcmp(sn, slash + 1))
                    rebuild(d, o);
            }
        }
        return;
    }
    if (kind == K8S_ROLE_NODE && d->cfg.attach_node) {
        for (size_t s = 0; s < d->nstores[role]; s++) {
            const char *k;
            json_t *o;
            json_object_foreach(d->stores[role][s], k, o)
            {
                if (on_node(role, o, key)) rebuild(d, o);
            }
        }
    }
    /* pods alone never rebuild endpoints or endpointslice groups (2.42) */
}

/* ---- HTTP ---- */

typedef struct xfer {
    informer_t *inf;
    long status;
    bool is_watch;
    im_buf_t body; /* list body, or an error answer's first bytes */
    k8s_watch_decoder_t dec;
    im_rc dec_rc;
    bool gone;       /* 410 seen */
    bool got_event;  /* the watch delivered something */
    char evmsg[300]; /* an ERROR event's message */
} xfer_t;

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t e)
{
    xfer_t *x = arg;
    return atomic_load(&x->inf->d->stop) ? 1 : 0;
}

static void apply_event(informer_t *inf, k8s_event_type_t t, json_t *obj);

static int on_event(void *arg, k8s_event_type_t t, json_t *obj)
{
    xfer_t *x = arg;
    if (t == K8S_EV_ERROR) {
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        const char *msg = json_string_value(json_object_get(obj, "message"));
        if (code == 410)
            x->gone = true;
        else
            snprintf(x->evmsg, sizeof x->evmsg, "watch ERROR event (code %lld): %s",
                     (long long)code, msg ? msg : "");
        if (!x->evmsg[0] && !x->gone) snprintf(x->evmsg, sizeof x->evmsg, "watch ERROR event");
        return 1;
    }
    x->got_event = true;
    apply_event(x->inf, t, obj);
    return 0;
}

static size_t on_data(char *p, size_t sz, size_t n, void *arg)
{
    xfer_t *x = arg;
    size_t len = sz * n;
    if (!x->status) curl_easy_getinfo(x->inf->easy, CURLINFO_RESPONSE_CODE, &x->status);
    if (x->is_watch && x->status == 200) {
        x->dec_rc = k8s_watch_decoder_feed(&x->dec, p, len);
        return x->dec_rc ? 0 : len;
    }
    if (x->status != 200) { /* keep the start of an error answer */
        size_t room = x->body.len < 4096 ? 4096 - x->body.len : 0;
        (void)im_buf_append(&x->body, p, IM_MIN(room, len));
        return len;
    }
    if (im_buf_append(&x->body, p, len) != IM_OK) return 0;
    return len;
}

/* The Authorization header, built per request: a rotating token file is re-read. */
static void auth_header(k8s_discoverer_t *d, struct curl_slist **hdrs)
{
    char *cred = NULL;
    if (d->token_file)
        cred = read_small(d->token_file, 65536);
    else if (d->token)
        cred = im_strdup(d->token);
    if (cred) {
        im_buf_t b;
        im_buf_init(&b, 0);
        (void)im_buf_printf(&b, "Authorization: Bearer %s", cred);
        *hdrs = curl_slist_append(*hdrs, b.data);
        im_buf_free(&b);
        im_free(cred);
    }
}

/* Prepares inf->easy for url. IM_OK, or an error (a secret file that cannot be
 * read) in msg. */
static im_rc setup(informer_t *inf, const char *url, xfer_t *x, long timeout_s, char *msg,
                   size_t cap)
{
    k8s_discoverer_t *d = inf->d;
    cfg_http_lists_free(&inf->lists);
    inf->lists.hdrs = curl_slist_append(NULL, "Accept: application/json, */*");
    im_err_t err;
    im_err_clear(&err);
    /* api_server: the job's HTTP client settings; else in-cluster or kubeconfig */
    if (cfg_http_client_handle(d->cfg.api_server ? &d->cfg.http : NULL, &inf->easy, url, on_data, x,
                               inf->errbuf, &inf->lists, &err) != IM_OK) {
        snprintf(msg, cap, "%s: %.400s", inf->path, err.msg);
        return IM_EIO;
    }
    CURL *c = inf->easy;
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
    curl_easy_setopt(c, CURLOPT_USERAGENT, "infermon/kubernetes-sd");
    if (!d->cfg.api_server) {
        curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
        curl_easy_setopt(c, CURLOPT_PROXY, "");
        curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
        auth_header(d, &inf->lists.hdrs);
        if (d->basic_user) {
            curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
            curl_easy_setopt(c, CURLOPT_USERNAME, d->basic_user);
            curl_easy_setopt(c, CURLOPT_PASSWORD, d->basic_pass ? d->basic_pass : "");
        }
        if (d->ca_file) curl_easy_setopt(c, CURLOPT_CAINFO, d->ca_file);
        if (d->ca_blob.len) {
            struct curl_blob b = {d->ca_blob.data, d->ca_blob.len, CURL_BLOB_COPY};
            curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &b);
        }
        if (d->cert_file) curl_easy_setopt(c, CURLOPT_SSLCERT, d->cert_file);
        if (d->key_file) curl_easy_setopt(c, CURLOPT_SSLKEY, d->key_file);
        if (d->cert_blob.len) {
            struct curl_blob b = {d->cert_blob.data, d->cert_blob.len, CURL_BLOB_COPY};
            curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &b);
        }
        if (d->key_blob.len) {
            struct curl_blob b = {d->key_blob.data, d->key_blob.len, CURL_BLOB_COPY};
            curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &b);
        }
        if (d->insecure) {
            curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
            curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
        }
    }
    curl_easy_setopt(c, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, inf->lists.hdrs);
    if (!x->is_watch) { /* a list that stalls for a minute is given up */
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
    }
    return IM_OK;
}

static void url_param(im_buf_t *u, bool *first, const char *k, const char *v)
{
    char *e = curl_easy_escape(NULL, v, 0);
    (void)im_buf_printf(u, "%c%s=%s", *first ? '?' : '&', k, e ? e : "");
    curl_free(e);
    *first = false;
}

/* Logs an informer's failure: a failure unlike the last one logged at once, the
 * same failure again at most once per 30 s per informer. */
static void inf_fail(informer_t *inf, const char *what)
{
    int64_t now = im_now_ms();
    atomic_fetch_add(&inf->d->errors, 1);
    uint64_t h = im_hash(what, strlen(what));
    if (inf->last_log_ms && h == inf->last_log_hash && now - inf->last_log_ms < 30000) return;
    inf->last_log_ms = now;
    inf->last_log_hash = h;
    IM_ERROR("Kubernetes discovery failed", "job=%s role=%s resource=%s namespace=%s err=%s",
             im_logq(inf->d->job), inf->d->watch_only ? "-" : k8s_role_name(inf->d->cfg.role),
             im_logq(inf->res), im_logq(inf->ns[0] ? inf->ns : "(all)"), im_logq(what));
}

/* Describes a non-200 answer or a transport error into msg. */
static void describe(informer_t *inf, CURLcode cc, xfer_t *x, char *msg, size_t cap)
{
    if (cc != CURLE_OK && x->status == 0) {
        snprintf(msg, cap, "%s: %s", inf->path,
                 inf->errbuf[0] ? inf->errbuf : curl_easy_strerror(cc));
        return;
    }
    const char *m = NULL;
    json_t *j = x->body.len ? json_loadb(x->body.data, x->body.len, 0, NULL) : NULL;
    if (j) m = json_string_value(json_object_get(j, "message"));
    snprintf(msg, cap, "%s: HTTP %ld%s%s", inf->path, x->status, m ? ": " : "", m ? m : "");
    json_decref(j);
}

static void strip_object(json_t *o)
{
    json_object_del(json_object_get(o, "metadata"), "managedFields");
}

static bool obj_key(k8s_kind_t kind, const json_t *o, char *key, size_t cap)
{
    json_t *md = json_object_get(o, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    if (!name || !*name) return false;
    if (kind == K8S_ROLE_NODE)
        snprintf(key, cap, "%s", name);
    else
        snprintf(key, cap, "%s/%s", ns ? ns : "", name);
    return true;
}

static void apply_event(informer_t *inf, k8s_event_type_t t, json_t *obj)
{
    k8s_discoverer_t *d = inf->d;
    const char *rv =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    pthread_mutex_lock(&d->mu);
    if (rv && *rv) snprintf(inf->rv, sizeof inf->rv, "%s", rv);
    char key[1200];
    if (t != K8S_EV_BOOKMARK && obj_key(inf->kind, obj, key, sizeof key)) {
        if (t == K8S_EV_DELETED) {
            json_object_del(inf->store, key);
            on_change(d, inf->kind, key, NULL);
        } else {
            strip_object(obj);
            json_object_set(inf->store, key, obj);
            on_change(d, inf->kind, key, obj);
        }
    }
    pthread_mutex_unlock(&d->mu);
}

/* Lists every page; on success replaces the store (invariant 3). */
static im_rc do_list(informer_t *inf, char *msg, size_t cap)
{
    k8s_discoverer_t *d = inf->d;
    json_t *fresh = json_object();
    char cont[4096] = "", rv[64] = "";
    const char *fs = inf->fsel, *ls = inf->lsel;
    im_rc rc = IM_OK;
    do {
        im_buf_t u;
        im_buf_init(&u, 0);
        bool first = true;
        (void)im_buf_printf(&u, "%s%s", d->base, inf->path);
        if (cont[0]) url_param(&u, &first, "continue", cont);
        if (fs) url_param(&u, &first, "fieldSelector", fs);
        if (ls) url_param(&u, &first, "labelSelector", ls);
        url_param(&u, &first, "limit", "500");
        if (!cont[0]) url_param(&u, &first, "resourceVersion", inf->rv[0] ? inf->rv : "0");
        xfer_t x = {.inf = inf};
        im_buf_init(&x.body, d->lim.max_list_page_bytes);
        inf->errbuf[0] = 0;
        if (setup(inf, u.data, &x, 600, msg, cap)) {
            im_buf_free(&u);
            im_buf_free(&x.body);
            rc = IM_EIO;
            break;
        }
        CURLcode cc = curl_easy_perform(inf->easy);
        im_buf_free(&u);
        if (!x.status) curl_easy_getinfo(inf->easy, CURLINFO_RESPONSE_CODE, &x.status);
        if (atomic_load(&d->stop))
            rc = IM_ECANCELED;
        else if (cc == CURLE_WRITE_ERROR && x.status == 200) {
            snprintf(msg, cap, "%s: a list page is larger than %zu bytes (raise %s)", inf->path,
                     d->lim.max_list_page_bytes, d->lim.list_setting);
            rc = IM_ELIMIT;
        } else if (cc != CURLE_OK || x.status != 200) {
            describe(inf, cc, &x, msg, cap);
            rc = x.status == 410 ? IM_ENOTFOUND : IM_EIO;
        } else {
            json_t *root, *items;
            const char *lrv, *lcont;
            im_err_t err;
            im_err_clear(&err);
            if (k8s_list_decode(x.body.data ? x.body.data : "", x.body.len, &root, &items, &lrv,
                                &lcont, &err)) {
                snprintf(msg, cap, "%s: %.400s", inf->path, err.msg);
                rc = IM_EPARSE;
            } else {
                size_t i, bad = 0;
                json_t *o;
                json_array_foreach(items, i, o)
                {
                    char key[1200];
                    if (!json_is_object(o) || !obj_key(inf->kind, o, key, sizeof key)) {
                        bad++;
                        continue;
                    }
                    strip_object(o);
                    json_object_set(fresh, key, o);
                }
                if (bad) {
                    char m[800];
                    snprintf(m, sizeof m, "%s: %zu listed objects without metadata.name skipped",
                             inf->path, bad);
                    inf_fail(inf, m);
                }
                snprintf(rv, sizeof rv, "%s", lrv);
                snprintf(cont, sizeof cont, "%s", lcont);
                json_decref(root);
            }
        }
        im_buf_free(&x.body);
    } while (!rc && cont[0]);
    if (rc) {
        json_decref(fresh);
        return rc;
    }
    pthread_mutex_lock(&d->mu);
    json_t *old = inf->store;
    inf->store = fresh;
    d->stores[inf->kind][inf->slot] = fresh;
    snprintf(inf->rv, sizeof inf->rv, "%s", rv);
    const char *k;
    json_t *o;
    json_object_foreach(old, k, o)
    {
        if (!json_object_get(fresh, k)) on_change(d, inf->kind, k, NULL);
    }
    if (!inf->synced) {
        inf->synced = true;
        d->nsynced++;
        if (d->nsynced == d->ninf) {
            d->synced = true;
            if (!d->watch_only) rebuild_all(d);
            d->gen++;
        }
    } else {
        json_object_foreach(fresh, k, o) on_change(d, inf->kind, k, o);
    }
    pthread_mutex_unlock(&d->mu);
    json_decref(old);
    return IM_OK;
}

/* One watch request. IM_OK: the stream ended (watch again); IM_ENOTFOUND: 410,
 * re-list; IM_EPARSE: an ERROR event or a bad stream (re-list after a wait);
 * other: transport error (watch again after a wait). */
static im_rc do_watch(informer_t *inf, bool *progressed, char *msg, size_t cap)
{
    k8s_discoverer_t *d = inf->d;
    const char *fs = inf->fsel, *ls = inf->lsel;
    int to = d->lim.watch_timeout_s;
    if (to <= 0) to = 300 + (int)((unsigned)rand() % 300);
    char tos[32];
    snprintf(tos, sizeof tos, "%d", to);
    im_buf_t u;
    im_buf_init(&u, 0);
    bool first = true;
    pthread_mutex_lock(&d->mu);
    char rv[64];
    snprintf(rv, sizeof rv, "%s", inf->rv);
    pthread_mutex_unlock(&d->mu);
    (void)im_buf_printf(&u, "%s%s", d->base, inf->path);
    url_param(&u, &first, "allowWatchBookmarks", "true");
    if (fs) url_param(&u, &first, "fieldSelector", fs);
    if (ls) url_param(&u, &first, "labelSelector", ls);
    url_param(&u, &first, "resourceVersion", rv);
    url_param(&u, &first, "timeoutSeconds", tos);
    url_param(&u, &first, "watch", "true");
    xfer_t x = {.inf = inf, .is_watch = true};
    im_buf_init(&x.body, 8192);
    k8s_watch_decoder_init(&x.dec, d->lim.max_event_bytes, on_event, &x);
    inf->errbuf[0] = 0;
    if (setup(inf, u.data, &x, to + 30, msg, cap)) {
        im_buf_free(&u);
        k8s_watch_decoder_free(&x.dec);
        im_buf_free(&x.body);
        return IM_EIO;
    }
    CURLcode cc = curl_easy_perform(inf->easy);
    im_buf_free(&u);
    if (!x.status) curl_easy_getinfo(inf->easy, CURLINFO_RESPONSE_CODE, &x.status);
    *progressed = x.got_event;
    im_rc rc = IM_OK;
    if (atomic_load(&d->stop))
        rc = IM_ECANCELED;
    else if (x.gone || x.status == 410)
        rc = IM_ENOTFOUND;
    else if (x.evmsg[0]) {
        snprintf(msg, cap, "%s: %s", inf->path, x.evmsg);
        rc = IM_EPARSE;
    } else if (x.dec_rc == IM_ELIMIT) {
        snprintf(msg, cap, "%s: %s (raise %s)", inf->path, x.dec.err, d->lim.event_setting);
        rc = IM_EPARSE;
    } else if (x.dec_rc && x.dec_rc != IM_ECANCELED) {
        snprintf(msg, cap, "%s: %s", inf->path, x.dec.err);
        rc = IM_EPARSE;
    } else if (x.status != 200 || (cc != CURLE_OK && cc != CURLE_OPERATION_TIMEDOUT)) {
        describe(inf, cc, &x, msg, cap);
        rc = IM_EIO;
    }
    k8s_watch_decoder_free(&x.dec);
    im_buf_free(&x.body);
    return rc;
}

/* Waits ms or until stop; returns false when stopping. */
static bool nap(k8s_discoverer_t *d, int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&d->mu);
    while (!atomic_load(&d->stop))
        if (pthread_cond_timedwait(&d->cv, &d->mu, &ts)) break;
    pthread_mutex_unlock(&d->mu);
    return !atomic_load(&d->stop);
}

/* Builds the queued groups: waits for work, lets related events of the same
 * change arrive (100 ms), then builds every queued key from the stores. */
static void *builder_thread(void *arg)
{
    k8s_discoverer_t *d = arg;
    pthread_mutex_lock(&d->mu);
    while (!atomic_load(&d->stop)) {
        if (!json_object_size(d->dirty)) {
            pthread_cond_wait(&d->cv, &d->mu);
            continue;
        }
        pthread_mutex_unlock(&d->mu);
        if (!nap(d, 100)) {
            pthread_mutex_lock(&d->mu);
            break;
        }
        pthread_mutex_lock(&d->mu);
        json_t *work = d->dirty;
        d->dirty = json_object();
        k8s_kind_t main = d->cfg.role;
        const char *k;
        json_t *v;
        json_object_foreach(work, k, v)
        {
            json_t *o = NULL;
            for (size_t s = 0; s < d->nstores[main] && !o; s++)
                o = json_object_get(d->stores[main][s], k);
            if (o) build_now(d, o);
        }
        json_decref(work);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

static void *inf_thread(void *arg)
{
    informer_t *inf = arg;
    k8s_discoverer_t *d = inf->d;
    int64_t backoff = 0;
    bool need_list = true;
    char msg[1024];
    while (!atomic_load(&d->stop)) {
        if (need_list) {
            msg[0] = 0;
            im_rc rc = do_list(inf, msg, sizeof msg);
            if (rc == IM_ECANCELED) break;
            if (rc) {
                inf_fail(inf, msg);
                backoff = backoff ? IM_MIN(backoff * 2, 30000) : 250;
                if (!nap(d, backoff)) break;
                continue;
            }
            atomic_fetch_add(&d->lists, 1);
            need_list = false;
            backoff = 0;
        }
        bool progressed = false;
        msg[0] = 0;
        im_rc rc = do_watch(inf, &progressed, msg, sizeof msg);
        if (rc == IM_ECANCELED) break;
        if (progressed) backoff = 0;
        if (rc == IM_OK) continue;
        if (rc == IM_ENOTFOUND) { /* 410 Gone: re-list from the last version seen */
            need_list = true;
            continue;
        }
        inf_fail(inf, msg);
        if (rc == IM_EPARSE) need_list = true;
        backoff = backoff ? IM_MIN(backoff * 2, 30000) : 250;
        if (!nap(d, backoff)) break;
    }
    return NULL;
}

/* ---- connection settings ---- */

static im_rc in_cluster(k8s_discoverer_t *d, im_err_t *err)
{
    const char *h = getenv("KUBERNETES_SERVICE_HOST"), *p = getenv("KUBERNETES_SERVICE_PORT");
    if (!h || !*h || !p || !*p)
        return im_err_set(err, IM_EINVAL,
                          "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST "
                          "and KUBERNETES_SERVICE_PORT must be defined (or set api_server or "
                          "kubeconfig_file)");
    char b[600];
    if (strchr(h, ':'))
        snprintf(b, sizeof b, "https://[%s]:%s", h, p);
    else
        snprintf(b, sizeof b, "https://%s:%s", h, p);
    d->base = im_strdup(b);
    const char *dir = k8s_serviceaccount_dir();
    snprintf(b, sizeof b, "%s/token", dir);
    d->token_file = im_strdup(b);
    char *t = read_small(b, 65536);
    if (!t) return im_err_set(err, IM_EIO, "cannot read the service-account token %s", b);
    im_free(t);
    snprintf(b, sizeof b, "%s/ca.crt", dir);
    d->ca_file = im_strdup(b);
    return IM_OK;
}

static const char *own_namespace(void)
{
    static char ns[256];
    char p[600];
    snprintf(p, sizeof p, "%s/namespace", k8s_serviceaccount_dir());
    char *s = read_small(p, sizeof ns - 1);
    snprintf(ns, sizeof ns, "%s", s ? s : "");
    im_free(s);
    return ns;
}

/* Adds an informer of kind (which decides the store's keys) on path; res names
 * it in log lines. */
static void add_informer_at(k8s_discoverer_t *d, k8s_kind_t kind, const char *ns, const char *path,
                            const char *res, const char *lsel, const char *fsel)
{
    informer_t *inf = im_calloc(1, sizeof *inf);
    inf->d = d;
    inf->kind = kind;
    snprintf(inf->ns, sizeof inf->ns, "%s", ns);
    snprintf(inf->path, sizeof inf->path, "%s", path);
    snprintf(inf->res, sizeof inf->res, "%s", res);
    inf->lsel = lsel;
    inf->fsel = fsel;
    inf->store = json_object();
    inf->slot = d->nstores[kind];
    d->stores[kind] = im_realloc(d->stores[kind], (d->nstores[kind] + 1) * sizeof(json_t *));
    d->stores[kind][d->nstores[kind]++] = inf->store;
    inf->easy = curl_easy_init();
    if (!inf->easy) im_oom(0);
    d->inf = im_realloc(d->inf, (d->ninf + 1) * sizeof *d->inf);
    d->inf[d->ninf++] = inf;
}

/* The collection path of resource res under group ("/api/v1", "/apis/G/V"), in
 * namespace ns ("" = all). */
static void collection_path(char *buf, size_t cap, const char *group, const char *ns,
                            const char *res)
{
    if (*ns)
        snprintf(buf, cap, "%s/namespaces/%.255s/%s", group, ns, res);
    else
        snprintf(buf, cap, "%s/%s", group, res);
}

static void add_informer(k8s_discoverer_t *d, k8s_kind_t kind, const char *ns)
{
    static const char *const groups[K8S_NROLES] = {"/api/v1", "/api/v1",
                                                   "/api/v1", "/apis/discovery.k8s.io/v1",
                                                   "/api/v1", "/apis/networking.k8s.io/v1"};
    static const char *const res[K8S_NROLES] = {"pods",           "services", "endpoints",
                                                "endpointslices", "nodes",    "ingresses"};
    char path[600];
    collection_path(path, sizeof path, groups[kind], ns, res[kind]);
    add_informer_at(d, kind, ns, path, k8s_role_name(kind), d->cfg.label_sel[kind],
                    d->cfg.field_sel[kind]);
}

/* A discoverer with its connection settings and no informer yet. */
static im_rc disc_new(const k8s_sd_cfg_t *cfg, const char *job, const k8s_limits_t *lim,
                      k8s_discoverer_t **out, im_err_t *err)
{
    im_rc rc = IM_OK;
    k8s_discoverer_t *d = im_calloc(1, sizeof *d);
    k8s_sd_cfg_copy(&d->cfg, cfg);
    d->job = im_strdup(job ? job : "");
    if (lim) d->lim = *lim;
    if (!d->lim.max_list_page_bytes) d->lim.max_list_page_bytes = K8S_DEFAULT_MAX_LIST_PAGE_BYTES;
    if (!d->lim.max_event_bytes) d->lim.max_event_bytes = K8S_DEFAULT_MAX_EVENT_BYTES;
    if (!d->lim.list_setting) d->lim.list_setting = "--discovery.kubernetes.max-list-page-bytes";
    if (!d->lim.event_setting) d->lim.event_setting = "--discovery.kubernetes.max-event-bytes";
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    d->dirty = json_object();
    if (cfg->api_server) {
        d->base = im_strdup(cfg->api_server);
        size_t n = strlen(d->base);
        while (n && d->base[n - 1] == '/') d->base[--n] = 0;
    } else if (cfg->kubeconfig_file) {
        rc = k8s_kubeconfig_load(d, cfg->kubeconfig_file, err);
    } else {
        rc = in_cluster(d, err);
    }
    if (rc) {
        k8s_discoverer_stop(d);
        return rc;
    }
    *out = d;
    return IM_OK;
}

/* Starts the builder (unless watch_only) and the informer threads. */
static void disc_run(k8s_discoverer_t *d)
{
    d->started = true;
    if (!d->watch_only && pthread_create(&d->builder, NULL, builder_thread, d) == 0)
        d->builder_running = true;
    for (size_t i = 0; i < d->ninf; i++)
        if (pthread_create(&d->inf[i]->thread, NULL, inf_thread, d->inf[i]) == 0)
            d->inf[i]->running = true;
}

im_rc k8s_discoverer_start(const k8s_sd_cfg_t *cfg, const char *job, const k8s_limits_t *lim,
                           k8s_discoverer_t **out, im_err_t *err)
{
    *out = NULL;
    im_rc rc = k8s_sd_cfg_validate(cfg, err);
    if (rc) return rc;
    k8s_discoverer_t *d;
    if ((rc = disc_new(cfg, job, lim, &d, err))) return rc;
    /* namespaces: names, own_namespace, or all */
    const char **nss = im_calloc(cfg->nnamespaces + 2, sizeof(char *));
    size_t nns = 0;
    for (size_t i = 0; i < cfg->nnamespaces; i++) nss[nns++] = cfg->namespaces[i];
    if (cfg->own_namespace) nss[nns++] = own_namespace();
    if (!nns) nss[nns++] = "";
    for (int k = 0; k < K8S_NROLES; k++) {
        if (k == K8S_ROLE_NODE || !k8s_role_watches(cfg->role, (k8s_kind_t)k)) continue;
        for (size_t i = 0; i < nns; i++) add_informer(d, (k8s_kind_t)k, nss[i]);
    }
    if (cfg->role == K8S_ROLE_NODE || (cfg->attach_node && k8s_attach_allowed(cfg->role)))
        add_informer(d, K8S_ROLE_NODE, "");
    im_free(nss);
    if (!k8s_attach_allowed(cfg->role)) d->cfg.attach_node = false;
    disc_run(d);
    *out = d;
    return IM_OK;
}

static char *opt_dup(const char *s)
{
    return s && *s ? im_strdup(s) : NULL;
}

im_rc k8s_watcher_start(const k8s_sd_cfg_t *conn, const char *what, const k8s_watch_spec_t *specs,
                        size_t nspecs, const k8s_limits_t *lim, k8s_discoverer_t **out,
                        im_err_t *err)
{
    *out = NULL;
    k8s_discoverer_t *d;
    im_rc rc = disc_new(conn, what, lim, &d, err);
    if (rc) return rc;
    d->watch_only = true;
    for (size_t i = 0; i < nspecs; i++) {
        const k8s_watch_spec_t *s = &specs[i];
        const char *ns = s->ns ? s->ns : "";
        char path[600];
        collection_path(path, sizeof path, s->group, ns, s->resource);
        char *ls = opt_dup(s->label_selector), *fs = opt_dup(s->field_selector);
        /* kind only decides the store keys ("NS/NAME"): any namespaced one */
        add_informer_at(d, K8S_ROLE_POD, ns, path, s->resource, ls, fs);
        d->inf[d->ninf - 1]->own_sel[0] = ls;
        d->inf[d->ninf - 1]->own_sel[1] = fs;
    }
    disc_run(d);
    *out = d;
    return IM_OK;
}

/* FNV-1a over s, continuing from h. */
static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

uint64_t k8s_fingerprint_add(uint64_t acc, const char *resource, const json_t *obj)
{
    json_t *c = json_deep_copy(obj);
    if (!c) return acc;
    json_object_del(c, "kind");
    json_object_del(c, "apiVersion");
    json_object_del(c, "status");
    json_t *md = json_object_get(c, "metadata");
    json_object_del(md, "resourceVersion");
    json_object_del(md, "managedFields");
    char *txt = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(c);
    uint64_t h = fnv(1469598103934665603ULL, resource, strlen(resource));
    h = fnv(h, "\n", 1);
    if (txt) h = fnv(h, txt, strlen(txt));
    free(txt); /* checksrc: allow (jansson's allocation) */
    /* mixed, then summed: the set's value does not depend on the order */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return acc + h;
}

bool k8s_watcher_fingerprint(k8s_discoverer_t *d, uint64_t *fp)
{
    pthread_mutex_lock(&d->mu);
    bool ok = d->synced;
    if (ok && d->fp_gen == d->gen + 1) { /* nothing changed since the last call */
        *fp = d->fp;
        pthread_mutex_unlock(&d->mu);
        return true;
    }
    uint64_t acc = 0;
    for (size_t i = 0; ok && i < d->ninf; i++) {
        const char *k;
        json_t *o;
        json_object_foreach(d->inf[i]->store, k, o) acc =
            k8s_fingerprint_add(acc, d->inf[i]->res, o);
    }
    if (ok) {
        d->fp = acc;
        d->fp_gen = d->gen + 1;
        *fp = acc;
    }
    pthread_mutex_unlock(&d->mu);
    return ok;
}

void k8s_conn_clear(struct k8s_discoverer *d)
{
    im_free(d->base);
    im_free(d->token);
    im_free(d->token_file);
    im_free(d->ca_file);
    im_free(d->cert_file);
    im_free(d->key_file);
    im_free(d->basic_user);
    im_free(d->basic_pass);
    im_buf_free(&d->ca_blob);
    im_buf_free(&d->cert_blob);
    im_buf_free(&d->key_blob);
    d->base = d->token = d->token_file = d->ca_file = d->cert_file = d->key_file = NULL;
    d->basic_user = d->basic_pass = NULL;
}

void k8s_discoverer_stop(k8s_discoverer_t *d)
{
    if (!d) return;
    pthread_mutex_lock(&d->mu);
    atomic_store(&d->stop, true);
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    for (size_t i = 0; i < d->ninf; i++) {
        informer_t *inf = d->inf[i];
        if (inf->running) pthread_join(inf->thread, NULL);
        curl_easy_cleanup(inf->easy);
        cfg_http_lists_free(&inf->lists);
        json_decref(inf->store);
        im_free(inf->own_sel[0]);
        im_free(inf->own_sel[1]);
        im_free(inf);
    }
    if (d->builder_running) pthread_join(d->builder, NULL);
    json_decref(d->dirty);
    im_free(d->inf);
    for (int k = 0; k < K8S_NROLES; k++) im_free(d->stores[k]);
    gmap_free(&d->groups);
    k8s_sd_cfg_clear(&d->cfg);
    im_free(d->job);
    k8s_conn_clear(d);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->cv);
    im_free(d);
}

uint64_t k8s_discoverer_generation(k8s_discoverer_t *d)
{
    pthread_mutex_lock(&d->mu);
    uint64_t g = d->gen;
    pthread_mutex_unlock(&d->mu);
    return g;
}

size_t k8s_discoverer_snapshot(k8s_discoverer_t *d, const im_labels_t ***out)
{
    pthread_mutex_lock(&d->mu);
    size_t n = 0;
    for (size_t i = 0; i < d->groups.cap; i++)
        if (d->groups.slots[i]) n += d->groups.slots[i]->ntargets;
    const im_labels_t **v = im_malloc((n + 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < d->groups.cap; i++) {
        k8s_group_t *g = d->groups.slots[i];
        for (size_t t = 0; g && t < g->ntargets; t++) v[k++] = im_labels_ref(g->targets[t]);
    }
    pthread_mutex_unlock(&d->mu);
    *out = v;
    return k;
}
