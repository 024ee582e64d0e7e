/* remote_write.c — decodes, frees and dumps the `remote_write:` section
 * (see remote_write.h for the defaults and the validation rules). */
#include "util/base.h"

#include <stdio.h>

#include "util/timeutil.h"

#include "config/relabel_cfg.h"
#include "config/remote_write.h"

const char *const cfg_remote_write_keys[] = {"url",
                                             "name",
                                             "remote_timeout",
                                             "headers",
                                             "write_relabel_configs",
                                             "send_exemplars",
                                             "send_native_histograms",
                                             "queue_config",
                                             "metadata_config",
                                             "sigv4",
                                             NULL};

/* Headers Prometheus 2.42 does not let remote_write.headers set (Authorization
 * has its own message). */
static const char *const reserved_headers[] = {"host",
                                               "content-encoding",
                                               "content-length",
                                               "content-type",
                                               "user-agent",
                                               "connection",
                                               "keep-alive",
                                               "proxy-authenticate",
                                               "proxy-authorization",
                                               "www-authenticate",
                                               "accept-encoding",
                                               "x-prometheus-remote-write-version",
                                               "x-prometheus-remote-read-version",
                                               "x-amz-date",
                                               "x-amz-security-token",
                                               "x-amz-content-sha256",
                                               NULL};

void cfg_remote_write_defaults(cfg_remote_write_t *rw)
{
    memset(rw, 0, sizeof *rw);
    rw->remote_timeout_ms = 30 * IM_MS_PER_SECOND;
    cfg_http_client_init(&rw->http);
    rw->queue = (cfg_queue_t){.capacity = 2500,
                              .max_shards = 200,
                              .min_shards = 1,
                              .max_samples_per_send = 500,
                              .batch_send_deadline_ms = 5 * IM_MS_PER_SECOND,
                              .min_backoff_ms = 30,
                              .max_backoff_ms = 5 * IM_MS_PER_SECOND};
    rw->metadata = (cfg_metadata_t){
        .send = true, .send_interval_ms = IM_MS_PER_MINUTE, .max_samples_per_send = 500};
}

static im_rc dec_queue(cfg_dec_t *d, const cfg_node_t *q, cfg_queue_t *o)
{
    static const char *const keys[] = {"capacity",
                                       "max_shards",
                                       "min_shards",
                                       "max_samples_per_send",
                                       "batch_send_deadline",
                                       "min_backoff",
                                       "max_backoff",
                                       "retry_on_http_429",
                                       NULL};
    im_rc rc;
    if ((rc = cfg_check_map(d, q, "queue_config", keys))) return rc;
    if ((rc = cfg_get_int(d, q, "capacity", &o->capacity))) return rc;
    if ((rc = cfg_get_int(d, q, "max_shards", &o->max_shards))) return rc;
    if ((rc = cfg_get_int(d, q, "min_shards", &o->min_shards))) return rc;
    if ((rc = cfg_get_int(d, q, "max_samples_per_send", &o->max_samples_per_send))) return rc;
    if ((rc = cfg_get_dur(d, q, "batch_send_deadline", &o->batch_send_deadline_ms))) return rc;
    if ((rc = cfg_get_dur(d, q, "min_backoff", &o->min_backoff_ms))) return rc;
    if ((rc = cfg_get_dur(d, q, "max_backoff", &o->max_backoff_ms))) return rc;
    return cfg_get_bool(d, q, "retry_on_http_429", &o->retry_on_http_429);
}

static im_rc dec_metadata(cfg_dec_t *d, const cfg_node_t *m, cfg_metadata_t *o)
{
    static const char *const keys[] = {"send", "send_interval", "max_samples_per_send", NULL};
    im_rc rc;
    if ((rc = cfg_check_map(d, m, "metadata_config", keys))) return rc;
    if ((rc = cfg_get_bool(d, m, "send", &o->send))) return rc;
    if ((rc = cfg_get_dur(d, m, "send_interval", &o->send_interval_ms))) return rc;
    return cfg_get_int(d, m, "max_samples_per_send", &o->max_samples_per_send);
}

static im_rc dec_one(cfg_dec_t *d, const cfg_node_t *n, cfg_remote_write_t *rw)
{
    const char *const *lists[] = {cfg_remote_write_keys, cfg_http_client_keys, NULL};
    im_rc rc;
    if (cfg_is_null(n)) return cfg_fail(d, n, "empty or null remote write config section");
    if ((rc = cfg_check_map_lists(d, n, "remote_write", lists))) return rc;
    const cfg_node_t *s4 = cfg_get(n, "sigv4");
    if (s4)
        return cfg_fail(d, s4,
                        "sigv4 is not supported by infermon; sign requests with a proxy "
                        "(proxy_url) or use basic_auth / authorization");
    if ((rc = cfg_get_str(d, n, "url", &rw->url))) return rc;
    if (!rw->url || !*rw->url) return cfg_fail(d, n, "url for remote_write is empty");
    if ((rc = cfg_get_str(d, n, "name", &rw->name))) return rc;
    if ((rc = cfg_get_dur(d, n, "remote_timeout", &rw->remote_timeout_ms))) return rc;
    if ((rc =
             cfg_get_strmap(d, n, "headers", &rw->header_names, &rw->header_values, &rw->nheaders)))
        return rc;
    for (size_t i = 0; i < rw->nheaders; i++) {
        const cfg_node_t *h = cfg_get(n, "headers");
        if (strcasecmp(rw->header_names[i], "authorization") == 0)
            return cfg_fail(d, h,
                            "authorization header must be changed via the basic_auth, "
                            "authorization, oauth2, or sigv4 parameter");
        for (size_t k = 0; reserved_headers[k]; k++)
            if (strcasecmp(rw->header_names[i], reserved_headers[k]) == 0)
                return cfg_fail(d, h, "%s is a reserved header. It must not be changed",
                                rw->header_names[i]);
        if (!*rw->header_names[i] || strpbrk(rw->header_names[i], ": \r\n") ||
            strpbrk(rw->header_values[i], "\r\n"))
            return cfg_fail(d, h, "invalid header \"%s\"", rw->header_names[i]);
    }
    if ((rc = cfg_relabel_decode(d, cfg_get(n, "write_relabel_configs"), "write_relabel_configs",
                                 &rw->write_relabel, &rw->nwrite_relabel)))
        return rc;
    if ((rc = cfg_get_bool(d, n, "send_exemplars", &rw->send_exemplars))) return rc;
    if ((rc = cfg_get_bool(d, n, "send_native_histograms", &rw->send_native_histograms))) return rc;
    const cfg_node_t *q = cfg_get(n, "queue_config");
    if (q && (rc = dec_queue(d, q, &rw->queue))) return rc;
    const cfg_node_t *m = cfg_get(n, "metadata_config");
    if (m && (rc = dec_metadata(d, m, &rw->metadata))) return rc;
    return cfg_http_client_decode(d, n, &rw->http);
}

im_rc cfg_remote_write_decode(cfg_dec_t *d, const cfg_node_t *seq, cfg_remote_write_t **out,
                              size_t *nout)
{
    cfg_remote_write_free_all(*out, *nout);
    *out = NULL;
    *nout = 0;
    if (cfg_is_null(seq)) return IM_OK;
    if (seq->type != CFG_NODE_SEQ) return cfg_fail(d, seq, "remote_write must be a list");
    *out = im_calloc(seq->nkids + 1, sizeof **out);
    for (size_t i = 0; i < seq->nkids; i++) {
        cfg_remote_write_t *rw = &(*out)[(*nout)++];
        cfg_remote_write_defaults(rw);
        im_rc rc = dec_one(d, seq->kids[i], rw);
        if (rc) return rc;
        for (size_t k = 0; rw->name && *rw->name && k + 1 < *nout; k++)
            if ((*out)[k].name && strcmp((*out)[k].name, rw->name) == 0)
                return cfg_fail(d, seq->kids[i],
                                "found multiple remote write configs with job name \"%s\"",
                                rw->name);
    }
    return IM_OK;
}

void cfg_remote_write_free(cfg_remote_write_t *rw)
{
    if (!rw) return;
    im_free(rw->url);
    im_free(rw->name);
    cfg_strv_free(rw->header_names, rw->nheaders);
    cfg_strv_free(rw->header_values, rw->nheaders);
    cfg_relabel_free_all(rw->write_relabel, rw->nwrite_relabel);
    cfg_http_client_free(&rw->http);
    memset(rw, 0, sizeof *rw);
}

void cfg_remote_write_free_all(cfg_remote_write_t *rws, size_t n)
{
    for (size_t i = 0; i < n; i++) cfg_remote_write_free(&rws[i]);
    im_free(rws);
}

void cfg_remote_write_dump(const cfg_remote_write_t *rws, size_t n, im_buf_t *o)
{
    if (!n) return;
    (void)im_buf_puts(o, "remote_write:\n");
    for (size_t i = 0; i < n; i++) {
        const cfg_remote_write_t *rw = &rws[i];
        (void)im_buf_puts(o, "- url: ");
        cfg_emit_url(o, rw->url);
        (void)im_buf_putc(o, '\n');
        cfg_emit_dur(o, 2, "remote_timeout", rw->remote_timeout_ms);
        if (rw->nheaders) {
            (void)im_buf_puts(o, "  headers:\n");
            for (size_t h = 0; h < rw->nheaders; h++)
                cfg_emit_kv(o, 4, rw->header_names[h], rw->header_values[h]);
        }
        if (rw->name) cfg_emit_kv(o, 2, "name", rw->name);
        cfg_relabel_dump(o, 2, "write_relabel_configs", rw->write_relabel, rw->nwrite_relabel);
        if (rw->send_exemplars) (void)im_buf_puts(o, "  send_exemplars: true\n");
        if (rw->send_native_histograms) (void)im_buf_puts(o, "  send_native_histograms: true\n");
        cfg_http_client_dump(&rw->http, o, 2);
        const cfg_queue_t *q = &rw->queue;
        (void)im_buf_printf(o,
                            "  queue_config:\n    capacity: %d\n    max_shards: %d\n"
                            "    min_shards: %d\n    max_samples_per_send: %d\n",
                            q->capacity, q->max_shards, q->min_shards, q->max_samples_per_send);
        cfg_emit_dur(o, 4, "batch_send_deadline", q->batch_send_deadline_ms);
        cfg_emit_dur(o, 4, "min_backoff", q->min_backoff_ms);
        cfg_emit_dur(o, 4, "max_backoff", q->max_backoff_ms);
        if (q->retry_on_http_429) (void)im_buf_puts(o, "    retry_on_http_429: true\n");
        (void)im_buf_printf(o, "  metadata_config:\n    send: %s\n",
                            rw->metadata.send ? "true" : "false");
        cfg_emit_dur(o, 4, "send_interval", rw->metadata.send_interval_ms);
        (void)im_buf_printf(o, "    max_samples_per_send: %d\n", rw->metadata.max_samples_per_send);
    }
}
