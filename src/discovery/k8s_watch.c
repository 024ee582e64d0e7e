/* k8s_watch.c — decoders for the API server's answers: the watch stream (one
 * JSON event per line, {"type": ..., "object": {...}}, split anywhere by the
 * transport) and List pages. Both are fed untrusted bytes: every size is capped,
 * every field is type-checked, and the fuzz targets call exactly these. */
#include <string.h>

#include "discovery/k8s.h"
#include "util/mem.h"

void k8s_watch_decoder_init(k8s_watch_decoder_t *d, size_t max_line, k8s_event_fn fn, void *arg)
{
    memset(d, 0, sizeof *d);
    d->max_line = max_line;
    d->fn = fn;
    d->arg = arg;
}

void k8s_watch_decoder_free(k8s_watch_decoder_t *d)
{
    im_free(d->line);
    d->line = NULL;
    d->len = d->cap = 0;
}

static im_rc event(k8s_watch_decoder_t *d, const char *p, size_t n)
{
    while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
    if (!n) return IM_OK;
    json_error_t je;
    json_t *ev = json_loadb(p, n, JSON_REJECT_DUPLICATES, &je);
    if (!ev) {
        snprintf(d->err, sizeof d->err, "malformed watch event: %s", je.text);
        return IM_EPARSE;
    }
    const char *type = json_string_value(json_object_get(ev, "type"));
    json_t *obj = json_object_get(ev, "object");
    im_rc rc = IM_OK;
    k8s_event_type_t t = K8S_EV_ADDED;
    if (!type || !json_is_object(obj)) {
        snprintf(d->err, sizeof d->err, "watch event without type or object");
        rc = IM_EPARSE;
    } else if (!strcmp(type, "ADDED"))
        t = K8S_EV_ADDED;
    else if (!strcmp(type, "MODIFIED"))
        t = K8S_EV_MODIFIED;
    else if (!strcmp(type, "DELETED"))
        t = K8S_EV_DELETED;
    else if (!strcmp(type, "BOOKMARK"))
        t = K8S_EV_BOOKMARK;
    else if (!strcmp(type, "ERROR"))
        t = K8S_EV_ERROR;
    else {
        snprintf(d->err, sizeof d->err, "unknown watch event type \"%.64s\"", type);
        rc = IM_EPARSE;
    }
    if (!rc && t != K8S_EV_ERROR && !json_is_object(json_object_get(obj, "metadata"))) {
        snprintf(d->err, sizeof d->err, "watch event object without metadata");
        rc = IM_EPARSE;
    }
    if (!rc && d->fn(d->arg, t, obj)) rc = IM_ECANCELED;
    json_decref(ev);
    return rc;
}

im_rc k8s_watch_decoder_feed(k8s_watch_decoder_t *d, const char *p, size_t n)
{
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (d->len + take > d->max_line) {
            snprintf(d->err, sizeof d->err, "watch event larger than %zu bytes", d->max_line);
            return IM_ELIMIT;
        }
        if (d->len + take + 1 > d->cap) {
            size_t nc = d->cap ? d->cap : 4096;
            while (nc < d->len + take + 1) nc *= 2;
            d->line = im_realloc(d->line, nc);
            d->cap = nc;
        }
        memcpy(d->line + d->len, p, take);
        d->len += take;
        if (!nl) return IM_OK;
        im_rc rc = event(d, d->line, d->len);
        d->len = 0;
        if (rc) return rc;
        p += take + 1;
        n -= take + 1;
    }
    return IM_OK;
}

im_rc k8s_list_decode(const char *body, size_t len, json_t **root, json_t **items, const char **rv,
                      const char **cont, im_err_t *err)
{
    *root = NULL;
    json_error_t je;
    json_t *r = json_loadb(body, len, 0, &je);
    if (!r) return im_err_set(err, IM_EPARSE, "malformed list answer: %s", je.text);
    json_t *md = json_object_get(r, "metadata");
    json_t *it = json_object_get(r, "items");
    if (!json_is_object(r) || !json_is_object(md) || !(json_is_array(it) || json_is_null(it))) {
        json_decref(r);
        return im_err_set(err, IM_EPARSE, "list answer without metadata or items");
    }
    const char *v = json_string_value(json_object_get(md, "resourceVersion"));
    const char *c = json_string_value(json_object_get(md, "continue"));
    *root = r;
    *items = json_is_array(it) ? it : NULL;
    *rv = v ? v : "";
    *cont = c ? c : "";
    return IM_OK;
}
