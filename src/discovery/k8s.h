/* k8s.h — Kubernetes service discovery (Prometheus 2.42's discovery/kubernetes): contract.
 *
 * A discoverer serves one kubernetes_sd_config of one scrape job. It lists and
 * watches the API server (one informer per resource and namespace: list
 * `?limit=500&resourceVersion=0` with continue tokens, then watch
 * `?allowWatchBookmarks=true&resourceVersion=N&timeoutSeconds=T&watch=true`),
 * keeps the objects it saw, and turns them into target groups, one per object,
 * named by source ("pod/NS/NAME", "svc/NS/NAME", "endpoints/NS/NAME",
 * "endpointslice/NS/NAME", "node/NAME", "ingress/NS/NAME") exactly as Prometheus
 * 2.42 does, with its __meta_kubernetes_* labels.
 *
 * Invariants:
 *  1. A group is rebuilt only when Prometheus 2.42 would rebuild it: on an event of
 *     the role's own resource (and, for endpoints/endpointslice, of the service of
 *     the same name; with attach_metadata.node, of a node the targets sit on; for
 *     the pod role, of the pod's node). A pod event alone does not rebuild an
 *     endpoints group: the pod's new labels appear at the next re-list (a 2.42
 *     behaviour matched on purpose).
 *  2. No group is published before every informer of the discoverer finished its
 *     first list (Prometheus waits for the caches to sync).
 *  3. A re-list (after a 410 Gone, as HTTP status or as an ERROR event) replaces
 *     the informer's objects: objects gone are deleted, every other object counts
 *     as updated (rebuilt).
 *  4. Errors never stop the discoverer: it logs one line naming the job, role,
 *     resource and namespace (at most one per informer per 30 s), backs off
 *     exponentially (250 ms doubling to 30 s) and starts over; groups already
 *     published stay.
 *
 * Threads: each informer has its own thread doing blocking HTTP with curl; all of
 * them share the discoverer's mutex for the object stores and the groups. The
 * scrape manager only calls k8s_discoverer_generation/snapshot, which take the
 * mutex briefly; nothing here runs on the scrape thread.
 *
 * The pure part (k8s_build_*, k8s_watch_decoder_*) is used by the unit tests and
 * the fuzz targets. */
#ifndef IM_DISCOVERY_K8S_H
#define IM_DISCOVERY_K8S_H

#include <jansson.h>

#include "config/k8s_sd.h"
#include "labels/labels.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

/* ---- Pure: objects to target groups ---- */

/* The objects the builders look things up in: per resource, the JSON objects of
 * every informer of that resource, each a JSON object mapping "NS/NAME" (nodes:
 * "NAME") to the Kubernetes object. Not owned. */
typedef struct k8s_cache {
    json_t *const *stores[K8S_NROLES];
    size_t nstores[K8S_NROLES];
} k8s_cache_t;

/* Looks key up in every store of kind; NULL when absent. */
json_t *k8s_cache_get(const k8s_cache_t *c, k8s_kind_t kind, const char *key);

/* One target group: every target is the full label set (group labels merged in,
 * target labels first, as Prometheus' targetsFromGroup does). */
typedef struct k8s_group {
    char *source;                /* owned */
    const im_labels_t **targets; /* owned references */
    size_t ntargets;
} k8s_group_t;

void k8s_group_clear(k8s_group_t *g);
/* The source of the group obj belongs to in role r (e.g. "pod/llm/vllm-0"). */
void k8s_source(k8s_role_t r, const json_t *obj, char *buf, size_t cap);
/* Builds the group of obj (a Pod for the pod role, ...). A malformed object gives
 * a group without targets. attach_node adds the node labels where the role
 * supports it. Never fails; out is overwritten. */
void k8s_build(k8s_role_t r, const k8s_cache_t *c, bool attach_node, const json_t *obj,
               k8s_group_t *out);
/* Prometheus' strutil.SanitizeLabelName: every UTF-8 character outside
 * [a-zA-Z0-9_] becomes one '_'. Writes at most cap-1 bytes and a NUL. */
void k8s_sanitize(const char *s, char *out, size_t cap);

/* ---- Pure: the watch stream ---- */
typedef enum k8s_event_type {
    K8S_EV_ADDED,
    K8S_EV_MODIFIED,
    K8S_EV_DELETED,
    K8S_EV_BOOKMARK,
    K8S_EV_ERROR,
} k8s_event_type_t;

/* Called once per event; obj is borrowed for the call. Return non-zero to stop. */
typedef int (*k8s_event_fn)(void *arg, k8s_event_type_t type, json_t *obj);

typedef struct k8s_watch_decoder {
    char *line; /* owned partial line */
    size_t len, cap, max_line;
    k8s_event_fn fn;
    void *arg;
    char err[256]; /* set when feed fails */
} k8s_watch_decoder_t;

/* max_line: the largest event accepted (bytes). */
void k8s_watch_decoder_init(k8s_watch_decoder_t *d, size_t max_line, k8s_event_fn fn, void *arg);
void k8s_watch_decoder_free(k8s_watch_decoder_t *d);
/* Feeds bytes (any split). Returns IM_OK, IM_EPARSE (malformed event, d->err says
 * why), IM_ELIMIT (an event over max_line) or IM_ECANCELED (the callback stopped). */
im_rc k8s_watch_decoder_feed(k8s_watch_decoder_t *d, const char *p, size_t n);

/* Decodes a List answer: items (borrowed from *root, which the caller frees),
 * metadata.resourceVersion and metadata.continue (borrowed, may be ""). */
im_rc k8s_list_decode(const char *body, size_t len, json_t **root, json_t **items, const char **rv,
                      const char **cont, im_err_t *err);

/* ---- The running discoverer ---- */
typedef struct k8s_discoverer k8s_discoverer_t;

typedef struct k8s_limits {
    size_t max_list_page_bytes; /* one list page; default 512 MiB */
    size_t max_event_bytes;     /* one watch event; default 64 MiB */
    int watch_timeout_s;        /* server-side watch timeout; default random 5-10 min */
    /* What sets the two sizes, named in the error when one is exceeded (static
     * text); NULL: the flags --discovery.kubernetes.max-list-page-bytes and
     * --discovery.kubernetes.max-event-bytes. */
    const char *list_setting, *event_setting;
} k8s_limits_t;

#define K8S_DEFAULT_MAX_LIST_PAGE_BYTES ((size_t)512 << 20)
#define K8S_DEFAULT_MAX_EVENT_BYTES     ((size_t)64 << 20)

/* Starts the informer threads. job is used in log lines. The config is copied. */
im_rc k8s_discoverer_start(const k8s_sd_cfg_t *cfg, const char *job, const k8s_limits_t *lim,
                           k8s_discoverer_t **out, im_err_t *err);
/* Stops and joins every thread, frees everything. NULL is allowed. */
void k8s_discoverer_stop(k8s_discoverer_t *d);
/* Increases whenever the published groups change. */
uint64_t k8s_discoverer_generation(k8s_discoverer_t *d);
/* Copies every published target (label sets, one reference each) into *out
 * (im_malloc'd array the caller frees after unref'ing each); returns the count. */
size_t k8s_discoverer_snapshot(k8s_discoverer_t *d, const im_labels_t ***out);

/* ---- Watching other resources (kubernetes_monitors) ---- */

/* One collection a watcher lists and watches. */
typedef struct k8s_watch_spec {
    const char *group;    /* "/api/v1" or "/apis/G/V" */
    const char *resource; /* e.g. "servicemonitors", "secrets"; names it in log lines */
    const char *ns;       /* "" or NULL = all namespaces */
    const char *label_selector, *field_selector; /* NULL or "" = none */
} k8s_watch_spec_t;

/* Starts list+watch informers (the same state machine, backoff and 410 handling
 * as a discoverer), one per spec (copied), reaching the API server as conn says
 * (api_server, kubeconfig_file or in-cluster; conn->http; conn's namespaces and
 * selectors are not used). The objects are only kept: no groups, snapshot is
 * empty. what names the watcher in log lines (the job= field). Stop it with
 * k8s_discoverer_stop; k8s_discoverer_generation increases on every change. */
im_rc k8s_watcher_start(const k8s_sd_cfg_t *conn, const char *what, const k8s_watch_spec_t *specs,
                        size_t nspecs, const k8s_limits_t *lim, k8s_discoverer_t **out,
                        im_err_t *err);
/* The fingerprint of every object the watcher holds (k8s_fingerprint_add over
 * each, with its resource); false until every informer finished its first list. */
bool k8s_watcher_fingerprint(k8s_discoverer_t *d, uint64_t *fp);
/* Adds obj of resource to a set fingerprint acc (start at 0). Order does not
 * matter; kind, apiVersion, status, metadata.resourceVersion and managedFields
 * are ignored, so a List item and the same object from a watch count equal. */
uint64_t k8s_fingerprint_add(uint64_t acc, const char *resource, const json_t *obj);

/* The service-account directory (token, ca.crt, namespace):
 * $INFERMON_K8S_SERVICEACCOUNT_DIR when set (tests), else
 * /var/run/secrets/kubernetes.io/serviceaccount. */
const char *k8s_serviceaccount_dir(void);

#endif
