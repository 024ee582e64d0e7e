/* k8s_int.h — the discoverer's internals shared by k8s_client.c and
 * k8s_kubeconfig.c (not a public contract). */
#ifndef IM_DISCOVERY_K8S_INT_H
#define IM_DISCOVERY_K8S_INT_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>

#include "discovery/k8s.h"
#include "util/buf.h"

typedef struct k8s_gmap { /* open addressing, linear probing; cap a power of two */
    k8s_group_t **slots;
    size_t cap, n;
} k8s_gmap_t;

typedef struct informer {
    struct k8s_discoverer *d;
    k8s_kind_t kind;
    char ns[256];            /* "" = all namespaces */
    char path[600];          /* e.g. /api/v1/namespaces/llm/pods */
    char res[64];            /* the resource in log lines: a role name, or e.g. servicemonitors */
    const char *lsel, *fsel; /* selectors sent (borrowed from d or own_sel), NULL = none */
    char *own_sel[2];        /* k8s_watcher_start's copies of lsel, fsel */
    json_t *store;           /* "NS/NAME" -> object; replaced by a list (d->mu) */
    size_t slot;             /* index in d->stores[kind] */
    char rv[64];             /* last resourceVersion seen (d->mu) */
    bool synced;
    CURL *easy;
    cfg_http_lists_t lists; /* the handle's headers and server_name connection */
    char errbuf[CURL_ERROR_SIZE];
    int64_t last_log_ms;
    uint64_t last_log_hash; /* of the failure last logged (inf_fail) */
    pthread_t thread;
    bool running;
} informer_t;

struct k8s_discoverer {
    k8s_sd_cfg_t cfg; /* owned copy */
    char *job;
    k8s_limits_t lim;
    bool watch_only;     /* k8s_watcher_start: objects kept, no groups built */
    uint64_t fp, fp_gen; /* k8s_watcher_fingerprint's last answer, of generation fp_gen + 1 */
    /* connection */
    char *base; /* scheme://host:port, no trailing '/' */
    char *token, *token_file, *ca_file, *cert_file, *key_file; /* in-cluster, kubeconfig */
    char *basic_user, *basic_pass;                             /* kubeconfig */
    im_buf_t ca_blob, cert_blob, key_blob;                     /* kubeconfig *-data, decoded */
    bool insecure;
    /* state, under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_bool stop;
    informer_t **inf;
    size_t ninf, nsynced;
    bool synced, started;
    json_t **stores[K8S_NROLES];
    size_t nstores[K8S_NROLES];
    k8s_gmap_t groups;
    json_t *dirty; /* "NS/NAME" of the role's objects to rebuild (builder thread) */
    pthread_t builder;
    bool builder_running;
    uint64_t gen;
    atomic_uint_fast64_t errors, lists;
};

/* Frees the connection settings (base, token, CA, client cert/key, basic auth)
 * and clears them. */
void k8s_conn_clear(struct k8s_discoverer *d);

/* Reads the kubeconfig's current context into d (base, CA, client cert/key,
 * token). Relative paths are relative to the kubeconfig file's folder. */
im_rc k8s_kubeconfig_load(struct k8s_discoverer *d, const char *path, im_err_t *err);

#endif
