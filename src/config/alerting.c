/* alerting.c — decodes the `alerting:` section strictly (see alerting.h). */
#include "util/base.h"

#include "config/alerting.h"
#include "config/relabel_cfg.h"
#include "util/timeutil.h"

static const char *const am_keys[] = {
    "scheme",         "path_prefix",     "timeout",         "api_version",
    "static_configs", "relabel_configs", "file_sd_configs", NULL};

static im_rc dec_am(cfg_dec_t *d, const cfg_node_t *m, cfg_alertmanager_t *a)
{
    const char *const *lists[] = {am_keys, cfg_http_client_keys, NULL};
    im_rc rc;
    cfg_http_client_init(&a->http);
    a->timeout_ms = 10 * IM_MS_PER_SECOND;
    if ((rc = cfg_check_map_lists(d, m, "alertmanager_config", lists))) return rc;
    static const char *const unsupported[] = {"relabel_configs", "file_sd_configs", NULL};
    for (size_t i = 0; unsupported[i]; i++) {
        const cfg_node_t *x = cfg_get(m, unsupported[i]);
        if (x)
            return cfg_fail(d, x,
                            "%s in alertmanagers is not supported by infermon (use "
                            "static_configs)",
                            unsupported[i]);
    }
    if ((rc = cfg_get_str(d, m, "scheme", &a->scheme))) return rc;
    if (!a->scheme) a->scheme = im_strdup("http");
    if (strcmp(a->scheme, "http") && strcmp(a->scheme, "https"))
        return cfg_fail(d, cfg_get(m, "scheme"),
                        "unknown alertmanager config scheme \"%s\" (http or https)", a->scheme);
    if ((rc = cfg_get_str(d, m, "path_prefix", &a->path_prefix))) return rc;
    if (!a->path_prefix) a->path_prefix = im_strdup("");
    if ((rc = cfg_get_dur(d, m, "timeout", &a->timeout_ms))) return rc;
    const cfg_node_t *v = cfg_get(m, "api_version");
    if (v && (v->type != CFG_NODE_SCALAR || strcmp(v->str, "v2") != 0))
        return cfg_fail(d, v, "unsupported Alertmanager api_version %s (only v2)",
                        v->type == CFG_NODE_SCALAR ? v->str : "");
    const cfg_node_t *sc = cfg_get(m, "static_configs");
    if (sc) {
        static const char *const skeys[] = {"targets", "labels", NULL};
        if (sc->type != CFG_NODE_SEQ) return cfg_fail(d, sc, "static_configs must be a list");
        for (size_t k = 0; k < sc->nkids; k++) {
            if ((rc = cfg_check_map(d, sc->kids[k], "static_config", skeys))) return rc;
            const im_labels_t *ls = NULL;
            rc = cfg_get_labels(d, sc->kids[k], "labels", &ls);
            if (ls) im_labels_unref(ls);
            if (rc) return rc;
            if ((rc = cfg_get_strlist(d, sc->kids[k], "targets", &a->targets, &a->ntargets)))
                return rc;
        }
    }
    return cfg_http_client_decode(d, m, &a->http);
}

static void alerting_free(cfg_alerting_t *a);

static im_rc dec_alerting(cfg_dec_t *d, const cfg_node_t *n, cfg_alerting_t *out)
{
    static const char *const keys[] = {"alertmanagers", "alert_relabel_configs", NULL};
    if (cfg_is_null(n)) return IM_OK;
    im_rc rc;
    if ((rc = cfg_check_map(d, n, "alerting", keys))) return rc;
    if ((rc = cfg_relabel_decode(d, cfg_get(n, "alert_relabel_configs"), "alert_relabel_configs",
                                 &out->relabel, &out->nrelabel)))
        return rc;
    const cfg_node_t *ams = cfg_get(n, "alertmanagers");
    if (!ams) return IM_OK;
    if (ams->type != CFG_NODE_SEQ) return cfg_fail(d, ams, "alertmanagers must be a list");
    out->ams = im_calloc(ams->nkids + 1, sizeof *out->ams);
    for (size_t i = 0; i < ams->nkids; i++)
        if ((rc = dec_am(d, ams->kids[i], &out->ams[out->nams++]))) return rc;
    return IM_OK;
}

im_rc cfg_alerting_decode(cfg_dec_t *d, const cfg_node_t *n, cfg_alerting_t **out)
{
    cfg_alerting_t *a = im_calloc(1, sizeof *a);
    a->refs = 1;
    im_rc rc = dec_alerting(d, n, a);
    if (rc) {
        alerting_free(a);
        a = NULL;
    }
    *out = a;
    return rc;
}

cfg_alerting_t *cfg_alerting_ref(cfg_alerting_t *a)
{
    if (a) __atomic_add_fetch(&a->refs, 1, __ATOMIC_RELAXED);
    return a;
}

void cfg_alerting_unref(cfg_alerting_t *a)
{
    if (a && __atomic_sub_fetch(&a->refs, 1, __ATOMIC_ACQ_REL) == 0) alerting_free(a);
}

static void alerting_free(cfg_alerting_t *a)
{
    for (size_t i = 0; i < a->nams; i++) {
        cfg_alertmanager_t *m = &a->ams[i];
        im_free(m->scheme);
        im_free(m->path_prefix);
        cfg_strv_free(m->targets, m->ntargets);
        cfg_http_client_free(&m->http);
    }
    im_free(a->ams);
    cfg_relabel_free_all(a->relabel, a->nrelabel);
    im_free(a);
}
