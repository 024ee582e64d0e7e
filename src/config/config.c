/* config.c — loads the infermon configuration (a superset of prometheus.yml).
 *
 * The text is parsed into a cfg_node_t tree (config/yaml.h) and decoded
 * strictly: every mapping key must be known, duplicated keys are errors, and
 * every error names file:line:column. Defaults and validation follow
 * Prometheus 2.x (config.go's rules, in our words). */
#include "util/base.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/alerting.h"
#include "config/relabel_cfg.h"
#include "config/config.h"
#include "util/timeutil.h"

#define IM_CFG_MAX_BYTES (16u << 20)

/* ---- Sections ---- */

static im_rc dec_target_groups(cfg_dec_t *d, const cfg_node_t *seq, scrape_job_cfg_t *j)
{
    static const char *const keys[] = {"targets", "labels", NULL};
    if (!seq) return IM_OK;
    if (seq->type != CFG_NODE_SEQ) return cfg_fail(d, seq, "static_configs must be a list");
    j->static_groups = im_calloc(seq->nkids ? seq->nkids : 1, sizeof *j->static_groups);
    for (size_t i = 0; i < seq->nkids; i++) {
        const cfg_node_t *n = seq->kids[i];
        scrape_target_group_t *g = &j->static_groups[j->nstatic++];
        char nb[32];
        snprintf(nb, sizeof nb, "%zu", i);
        g->source = im_strdup(nb);
        im_rc rc = cfg_check_map(d, n, "static_config", keys);
        if (rc) return rc;
        if ((rc = cfg_get_strlist(d, n, "targets", &g->targets, &g->ntargets))) return rc;
        for (size_t k = 0; k < g->ntargets; k++)
            if (strchr(g->targets[k], '/'))
                return cfg_fail(d, cfg_get(n, "targets"), "\"%s\" is not a valid hostname",
                                g->targets[k]);
        if ((rc = cfg_get_labels(d, n, "labels", &g->labels))) return rc;
        if (!g->labels) g->labels = im_labels_empty();
    }
    return IM_OK;
}

static im_rc dec_file_sd(cfg_dec_t *d, const cfg_node_t *seq, scrape_job_cfg_t *j)
{
    static const char *const keys[] = {"files", "refresh_interval", NULL};
    if (!seq) return IM_OK;
    if (seq->type != CFG_NODE_SEQ) return cfg_fail(d, seq, "file_sd_configs must be a list");
    j->file_sd = im_calloc(seq->nkids ? seq->nkids : 1, sizeof *j->file_sd);
    for (size_t i = 0; i < seq->nkids; i++) {
        const cfg_node_t *n = seq->kids[i];
        scrape_file_sd_t *f = &j->file_sd[j->nfile_sd++];
        f->refresh_ms = 5 * IM_MS_PER_MINUTE;
        im_rc rc = cfg_check_map(d, n, "file_sd_config", keys);
        if (rc) return rc;
        if ((rc = cfg_get_strlist(d, n, "files", &f->files, &f->nfiles))) return rc;
        if ((rc = cfg_get_dur(d, n, "refresh_interval", &f->refresh_ms))) return rc;
        if (f->nfiles == 0)
            return cfg_fail(d, n,
                            "file service discovery config must contain at least one path name");
        for (size_t k = 0; k < f->nfiles; k++) {
            const char *p = f->files[k], *b = strrchr(p, '/');
            b = b ? b + 1 : p;
            size_t bl = strlen(b);
            bool ok = (bl > 5 && !strcmp(b + bl - 5, ".json")) ||
                      (bl > 4 && !strcmp(b + bl - 4, ".yml")) ||
                      (bl > 5 && !strcmp(b + bl - 5, ".yaml"));
            if (!ok)
                return cfg_fail(d, cfg_get(n, "files"),
                                "path name %s is not valid for file discovery", p);
        }
        if (f->refresh_ms <= 0) f->refresh_ms = 5 * IM_MS_PER_MINUTE;
    }
    return IM_OK;
}

/* ---- scrape_protocols, fallback_scrape_protocol ---- */

static const struct {
    cfg_scrape_proto_t p;
    const char *name, *media;
} protos[] = {
    {CFG_PROTO_PROMETHEUS_PROTO, "PrometheusProto",
     "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"},
    {CFG_PROTO_OPENMETRICS_0_0_1, "OpenMetricsText0.0.1",
     "application/openmetrics-text;version=0.0.1"},
    {CFG_PROTO_OPENMETRICS_1_0_0, "OpenMetricsText1.0.0",
     "application/openmetrics-text;version=1.0.0"},
    {CFG_PROTO_TEXT_0_0_4, "PrometheusText0.0.4", "text/plain;version=0.0.4"},
    {CFG_PROTO_TEXT_1_0_0, "PrometheusText1.0.0", "text/plain;version=1.0.0"},
};

const char *cfg_scrape_proto_name(cfg_scrape_proto_t p)
{
    for (size_t i = 0; i < IM_ARRAY_LEN(protos); i++)
        if (protos[i].p == p) return protos[i].name;
    return "";
}

const char *cfg_scrape_proto_media(cfg_scrape_proto_t p)
{
    for (size_t i = 0; i < IM_ARRAY_LEN(protos); i++)
        if (protos[i].p == p) return protos[i].media;
    return "";
}

/* One protocol name (case sensitive, as Prometheus). PrometheusProto is known
 * but refused: infermon has no protobuf exposition parser, and accepting it
 * would negotiate a format the scrape then cannot read. */
static im_rc dec_proto(cfg_dec_t *d, const cfg_node_t *n, const char *key, const char *job,
                       cfg_scrape_proto_t *out)
{
    if (n->type != CFG_NODE_SCALAR) return cfg_fail(d, n, "%s must be a string", key);
    for (size_t i = 0; i < IM_ARRAY_LEN(protos); i++) {
        if (strcmp(n->str, protos[i].name)) continue;
        if (protos[i].p == CFG_PROTO_PROMETHEUS_PROTO)
            return cfg_fail(d, n,
                            "%s: PrometheusProto is not supported yet: scrapes read the text "
                            "and OpenMetrics formats only",
                            key);
        *out = protos[i].p;
        return IM_OK;
    }
    char sup[160];
    size_t o = 0;
    for (size_t i = 0; i < IM_ARRAY_LEN(protos); i++)
        o += (size_t)snprintf(sup + o, sizeof sup - o, "%s%s", i ? ", " : "", protos[i].name);
    if (job)
        return cfg_fail(d, n,
                        "invalid %s for scrape config with job name \"%s\": unknown scrape "
                        "protocol %s, supported: [%s]",
                        key, job, n->str, sup);
    return cfg_fail(d, n, "invalid %s: unknown scrape protocol %s, supported: [%s]", key, n->str,
                    sup);
}

/* scrape_protocols: a non-empty list of distinct protocol names. */
static im_rc dec_protos(cfg_dec_t *d, const cfg_node_t *m, const char *job, cfg_scrape_proto_t *out,
                        size_t *nout)
{
    const cfg_node_t *n = cfg_get(m, "scrape_protocols");
    if (!n) return IM_OK;
    if (n->type != CFG_NODE_SEQ) return cfg_fail(d, n, "scrape_protocols must be a list");
    if (n->nkids == 0) return cfg_fail(d, n, "scrape_protocols must not be empty");
    size_t k = 0;
    for (size_t i = 0; i < n->nkids; i++) {
        cfg_scrape_proto_t p;
        im_rc rc = dec_proto(d, n->kids[i], "scrape_protocols", job, &p);
        if (rc) return rc;
        for (size_t q = 0; q < k; q++)
            if (out[q] == p)
                return cfg_fail(d, n->kids[i], "duplicated protocol in scrape_protocols: %s",
                                n->kids[i]->str);
        out[k++] = p;
    }
    *nout = k;
    return IM_OK;
}

static void job_free(scrape_job_cfg_t *j);

static im_rc dec_job(cfg_dec_t *d, const cfg_node_t *n, const scrape_config_t *c,
                     scrape_job_cfg_t *j)
{
    static const char *const keys[] = {"job_name",
                                       "honor_labels",
                                       "honor_timestamps",
                                       "params",
                                       "scrape_interval",
                                       "scrape_timeout",
                                       "metrics_path",
                                       "scheme",
                                       "sample_limit",
                                       "target_limit",
                                       "label_limit",
                                       "label_name_length_limit",
                                       "label_value_length_limit",
                                       "body_size_limit",
                                       "static_configs",
                                       "file_sd_configs",
                                       "kubernetes_sd_configs",
                                       "relabel_configs",
                                       "metric_relabel_configs",
                                       "scrape_protocols",
                                       "fallback_scrape_protocol",
                                       NULL};
    const char *const *lists[] = {keys, cfg_http_client_keys, NULL};
    im_rc rc = cfg_check_map_lists(d, n, "scrape_config", lists);
    if (rc) return rc;
    if (cfg_is_null(n)) return cfg_fail(d, n, "empty or null scrape config section");
    j->interval_ms = c->scrape_interval_ms;
    j->timeout_ms = -1;
    j->honor_timestamps = true;
    cfg_http_client_init(&j->http);
    if ((rc = cfg_get_str(d, n, "job_name", &j->job_name))) return rc;
    if (!j->job_name || !*j->job_name) return cfg_fail(d, n, "job_name is empty");
    if ((rc = cfg_get_bool(d, n, "honor_labels", &j->honor_labels))) return rc;
    if ((rc = cfg_get_bool(d, n, "honor_timestamps", &j->honor_timestamps))) return rc;
    if ((rc = cfg_get_dur(d, n, "scrape_interval", &j->interval_ms))) return rc;
    if ((rc = cfg_get_dur(d, n, "scrape_timeout", &j->timeout_ms))) return rc;
    if (j->interval_ms <= 0)
        return cfg_fail(d, cfg_get(n, "scrape_interval"), "scrape_interval must be positive");
    if (j->timeout_ms < 0) {
        j->timeout_ms = c->scrape_timeout_ms;
        if (j->timeout_ms > j->interval_ms) j->timeout_ms = j->interval_ms;
    } else if (j->timeout_ms > j->interval_ms) {
        return cfg_fail(
            d, n,
            "scrape timeout greater than scrape interval for scrape config with job name \"%s\"",
            j->job_name);
    }
    if (j->timeout_ms == 0)
        return cfg_fail(d, cfg_get(n, "scrape_timeout"), "scrape_timeout must be positive");
    if ((rc = cfg_get_str(d, n, "metrics_path", &j->metrics_path))) return rc;
    if (!j->metrics_path) j->metrics_path = im_strdup("/metrics");
    if ((rc = cfg_get_str(d, n, "scheme", &j->scheme))) return rc;
    if (!j->scheme) j->scheme = im_strdup("http");
    if (strcmp(j->scheme, "http") && strcmp(j->scheme, "https"))
        return cfg_fail(d, cfg_get(n, "scheme"),
                        "unknown scrape config scheme \"%s\" (http or https)", j->scheme);
    if ((rc = cfg_get_listmap(d, n, "params", &j->param_names, &j->param_values, &j->nparams)))
        return rc;
    if ((rc = cfg_get_u64(d, n, "sample_limit", &j->sample_limit))) return rc;
    if ((rc = cfg_get_u64(d, n, "target_limit", &j->target_limit))) return rc;
    if ((rc = cfg_get_u64(d, n, "label_limit", &j->label_limit))) return rc;
    if ((rc = cfg_get_u64(d, n, "label_name_length_limit", &j->label_name_length_limit))) return rc;
    if ((rc = cfg_get_u64(d, n, "label_value_length_limit", &j->label_value_length_limit)))
        return rc;
    if ((rc = cfg_get_bytes(d, n, "body_size_limit", &j->body_size_limit))) return rc;
    if ((rc = dec_protos(d, n, j->job_name, j->protocols, &j->nprotocols))) return rc;
    j->protocols_set = j->nprotocols > 0;
    if (!j->nprotocols) {
        static const cfg_scrape_proto_t def[] = {CFG_PROTO_OPENMETRICS_1_0_0,
                                                 CFG_PROTO_OPENMETRICS_0_0_1, CFG_PROTO_TEXT_1_0_0,
                                                 CFG_PROTO_TEXT_0_0_4};
        const cfg_scrape_proto_t *src = c->nscrape_protocols ? c->scrape_protocols : def;
        j->nprotocols = c->nscrape_protocols ? c->nscrape_protocols : IM_ARRAY_LEN(def);
        memcpy(j->protocols, src, j->nprotocols * sizeof *src);
    }
    const cfg_node_t *fb = cfg_get(n, "fallback_scrape_protocol");
    if (fb &&
        (rc = dec_proto(d, fb, "fallback_scrape_protocol", j->job_name, &j->fallback_protocol)))
        return rc;
    if ((rc = cfg_http_client_decode(d, n, &j->http))) return rc;
    if ((rc = dec_target_groups(d, cfg_get(n, "static_configs"), j))) return rc;
    if ((rc = dec_file_sd(d, cfg_get(n, "file_sd_configs"), j))) return rc;
    if ((rc = cfg_k8s_sd_decode(d, cfg_get(n, "kubernetes_sd_configs"), &j->k8s_sd, &j->nk8s_sd)))
        return rc;
    if ((rc = cfg_relabel_decode(d, cfg_get(n, "relabel_configs"), "relabel_configs", &j->relabel,
                                 &j->nrelabel)))
        return rc;
    if ((rc = cfg_relabel_decode(d, cfg_get(n, "metric_relabel_configs"), "metric_relabel_configs",
                                 &j->metric_relabel, &j->nmetric_relabel)))
        return rc;
    return IM_OK;
}

static im_rc dec_storage(cfg_dec_t *d, const cfg_node_t *n, scrape_config_t *c)
{
    static const char *const keys[] = {"path",      "retention",        "wal", "tsdb",
                                       "exemplars", "frame_cache_size", NULL};
    static const char *const rkeys[] = {"time", "size", NULL};
    static const char *const wkeys[] = {"fsync", "fsync_interval", NULL};
    im_rc rc = cfg_check_map(d, n, "storage", keys);
    if (rc) return rc;
    if ((rc = cfg_get_str(d, n, "path", &c->storage_path))) return rc;
    c->storage_frame_cache_set = cfg_get(n, "frame_cache_size") != NULL;
    if ((rc = cfg_get_bytes(d, n, "frame_cache_size", &c->storage_frame_cache_bytes))) return rc;
    const cfg_node_t *r = cfg_get(n, "retention");
    if (r) {
        if ((rc = cfg_check_map(d, r, "storage.retention", rkeys))) return rc;
        if ((rc = cfg_get_dur(d, r, "time", &c->retention_ms))) return rc;
        if ((rc = cfg_get_bytes(d, r, "size", &c->retention_bytes))) return rc;
    }
    const cfg_node_t *w = cfg_get(n, "wal");
    if (w) {
        if ((rc = cfg_check_map(d, w, "storage.wal", wkeys))) return rc;
        const cfg_node_t *f = cfg_get(w, "fsync");
        if (f) {
            c->storage_fsync_set = true;
            if (f->type == CFG_NODE_SCALAR && !strcmp(f->str, "timer"))
                c->storage_fsync = SCRAPE_FSYNC_TIMER;
            else if (f->type == CFG_NODE_SCALAR && !strcmp(f->str, "always"))
                c->storage_fsync = SCRAPE_FSYNC_ALWAYS;
            else if (f->type == CFG_NODE_SCALAR && !strcmp(f->str, "never"))
                c->storage_fsync = SCRAPE_FSYNC_NEVER;
            else
                return cfg_fail(d, f, "storage.wal.fsync must be one of timer, always, never");
        }
        if ((rc = cfg_get_dur(d, w, "fsync_interval", &c->storage_fsync_interval_ms))) return rc;
    }
    return IM_OK;
}

static im_rc decode(cfg_dec_t *d, const cfg_node_t *root, scrape_config_t *c)
{
    static const char *const keys[] = {"global",
                                       "scrape_configs",
                                       "rule_files",
                                       "alerting",
                                       "remote_write",
                                       "remote_read",
                                       "storage",
                                       "llm",
                                       "kubernetes_monitors",
                                       "scrape_config_files",
                                       "tracing",
                                       NULL};
    static const char *const gkeys[] = {"scrape_interval",
                                        "scrape_timeout",
                                        "evaluation_interval",
                                        "external_labels",
                                        "query_log_file",
                                        "scrape_protocols",
                                        NULL};
    im_rc rc = cfg_check_map(d, root, "config", keys);
    if (rc) return rc;
    c->scrape_interval_ms = IM_MS_PER_MINUTE;
    c->scrape_timeout_ms = 10 * IM_MS_PER_SECOND;
    c->evaluation_interval_ms = IM_MS_PER_MINUTE;
    const cfg_node_t *g = cfg_get(root, "global");
    if (g) {
        if ((rc = cfg_check_map(d, g, "global", gkeys))) return rc;
        if ((rc = cfg_get_dur(d, g, "scrape_interval", &c->scrape_interval_ms))) return rc;
        bool tset = cfg_get(g, "scrape_timeout") != NULL;
        if ((rc = cfg_get_dur(d, g, "scrape_timeout", &c->scrape_timeout_ms))) return rc;
        if ((rc = cfg_get_dur(d, g, "evaluation_interval", &c->evaluation_interval_ms))) return rc;
        if (c->scrape_interval_ms <= 0)
            return cfg_fail(d, cfg_get(g, "scrape_interval"), "scrape_interval must be positive");
        if (c->scrape_timeout_ms > c->scrape_interval_ms) {
            if (tset) return cfg_fail(d, g, "global scrape timeout greater than scrape interval");
            c->scrape_timeout_ms = c->scrape_interval_ms;
        }
        if ((rc = cfg_get_labels(d, g, "external_labels", &c->external_labels))) return rc;
        if ((rc = dec_protos(d, g, NULL, c->scrape_protocols, &c->nscrape_protocols))) return rc;
    }
    if (!c->external_labels) c->external_labels = im_labels_empty();
    if ((rc = cfg_get_strlist(d, root, "rule_files", &c->rule_files, &c->nrule_files))) return rc;
    const cfg_node_t *sc = cfg_get(root, "scrape_configs");
    if (sc) {
        if (sc->type != CFG_NODE_SEQ) return cfg_fail(d, sc, "scrape_configs must be a list");
        c->jobs = im_calloc(sc->nkids ? sc->nkids : 1, sizeof *c->jobs);
        for (size_t i = 0; i < sc->nkids; i++) {
            scrape_job_cfg_t *j = &c->jobs[c->njobs++];
            if ((rc = dec_job(d, sc->kids[i], c, j))) return rc;
            for (size_t k = 0; k + 1 < c->njobs; k++)
                if (!strcmp(c->jobs[k].job_name, j->job_name))
                    return cfg_fail(d, sc->kids[i],
                                    "found multiple scrape configs with job name \"%s\"",
                                    j->job_name);
        }
    }
    const cfg_node_t *st = cfg_get(root, "storage");
    if (st && (rc = dec_storage(d, st, c))) return rc;
    const cfg_node_t *x;
    if ((x = cfg_get(root, "alerting"))) {
        if ((rc = cfg_alerting_decode(d, x, &c->alerting))) return rc;
        c->alerting_yaml = cfg_node_clone(x);
    }
    if ((rc = cfg_remote_write_decode(d, cfg_get(root, "remote_write"), &c->remote_write,
                                      &c->nremote_write)))
        return rc;
    if ((rc = cfg_llm_decode(d, cfg_get_raw(root, "llm"), &c->llm))) return rc;
    if ((x = cfg_get(root, "kubernetes_monitors"))) {
        c->k8s_monitors = im_calloc(1, sizeof *c->k8s_monitors);
        if ((rc = discovery_monitors_cfg_decode(d, x, c->k8s_monitors))) return rc;
    }
    return IM_OK;
}

static void group_free(scrape_target_group_t *g)
{
    for (size_t i = 0; i < g->ntargets; i++) im_free(g->targets[i]);
    im_free(g->targets);
    if (g->labels) im_labels_unref(g->labels);
    im_free(g->source);
}

static void job_free(scrape_job_cfg_t *j)
{
    im_free(j->job_name);
    im_free(j->metrics_path);
    im_free(j->scheme);
    for (size_t i = 0; i < j->nparams; i++) {
        im_free(j->param_names[i]);
        im_free(j->param_values[i]);
    }
    im_free(j->param_names);
    im_free(j->param_values);
    cfg_http_client_free(&j->http);
    for (size_t i = 0; i < j->nrelabel; i++) labels_relabel_clear(&j->relabel[i]);
    im_free(j->relabel);
    for (size_t i = 0; i < j->nmetric_relabel; i++) labels_relabel_clear(&j->metric_relabel[i]);
    im_free(j->metric_relabel);
    for (size_t i = 0; i < j->nstatic; i++) group_free(&j->static_groups[i]);
    im_free(j->static_groups);
    for (size_t i = 0; i < j->nfile_sd; i++) {
        for (size_t k = 0; k < j->file_sd[i].nfiles; k++) im_free(j->file_sd[i].files[k]);
        im_free(j->file_sd[i].files);
    }
    im_free(j->file_sd);
    for (size_t i = 0; i < j->nk8s_sd; i++) k8s_sd_cfg_clear(&j->k8s_sd[i]);
    im_free(j->k8s_sd);
}

scrape_config_t *scrape_config_ref(scrape_config_t *c)
{
    __atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
    return c;
}

void scrape_config_free(scrape_config_t *c)
{
    if (!c) return;
    if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    for (size_t i = 0; i < c->njobs; i++) job_free(&c->jobs[i]);
    im_free(c->jobs);
    for (size_t i = 0; i < c->nrule_files; i++) im_free(c->rule_files[i]);
    im_free(c->rule_files);
    if (c->external_labels) im_labels_unref(c->external_labels);
    im_free(c->storage_path);
    cfg_alerting_unref(c->alerting);
    cfg_node_free(c->alerting_yaml);
    cfg_remote_write_free_all(c->remote_write, c->nremote_write);
    discovery_monitors_cfg_free(c->k8s_monitors);
    im_free(c->k8s_monitors);
    cfg_llm_cost_free(&c->llm.cost);
    cfg_llm_slo_free(&c->llm.slo);
    im_free(c->filename);
    im_free(c->text);
    im_free(c);
}

im_rc scrape_config_parse(const char *text, size_t len, const char *name, scrape_config_t **out,
                          im_err_t *err)
{
    *out = NULL;
    cfg_node_t *root;
    im_rc rc = cfg_parse_yaml(text, len, name, &root, err);
    if (rc) return rc;
    scrape_config_t *c = im_calloc(1, sizeof *c);
    c->refs = 1;
    c->filename = name ? im_strdup(name) : NULL;
    c->text = im_strndup(text, len);
    cfg_dec_t d = {name, err};
    rc = decode(&d, root, c);
    cfg_node_free(root);
    if (!rc && c->llm.slo.nfiles) { /* llm.slo_files, relative to the file's directory */
        char *pc = im_strdup(name ? name : ".");
        rc = cfg_llm_slo_load_files(&c->llm.slo, strchr(pc, '/') ? dirname(pc) : ".", err);
        im_free(pc);
    }
    if (rc) {
        if (err) err->file = name; /* borrowed from the caller */
        scrape_config_free(c);
        return rc;
    }
    *out = c;
    return IM_OK;
}

/* Every file name of c relative to dir, the configuration file's directory (as
 * Prometheus' SetDirectory): rule_files, file_sd files, kubeconfig_file and the
 * files of each HTTP client configuration. */
static void set_dir(scrape_config_t *c, const char *dir)
{
    for (size_t i = 0; i < c->nrule_files; i++) cfg_join_dir(dir, &c->rule_files[i]);
    for (size_t i = 0; i < c->njobs; i++) {
        scrape_job_cfg_t *j = &c->jobs[i];
        cfg_http_client_set_dir(&j->http, dir);
        for (size_t f = 0; f < j->nfile_sd; f++)
            for (size_t k = 0; k < j->file_sd[f].nfiles; k++)
                cfg_join_dir(dir, &j->file_sd[f].files[k]);
        for (size_t k = 0; k < j->nk8s_sd; k++) {
            cfg_join_dir(dir, &j->k8s_sd[k].kubeconfig_file);
            cfg_http_client_set_dir(&j->k8s_sd[k].http, dir);
        }
    }
    for (size_t i = 0; c->alerting && i < c->alerting->nams; i++)
        cfg_http_client_set_dir(&c->alerting->ams[i].http, dir);
    for (size_t i = 0; i < c->nremote_write; i++)
        cfg_http_client_set_dir(&c->remote_write[i].http, dir);
    if (c->k8s_monitors) cfg_http_client_set_dir(&c->k8s_monitors->http, dir);
}

im_rc scrape_config_load_file(const char *path, scrape_config_t **out, im_err_t *err)
{
    *out = NULL;
    im_buf_t b;
    im_buf_init(&b, IM_CFG_MAX_BYTES);
    int se = 0;
    im_rc rc = cfg_read_file(path, &b, &se);
    if (rc == IM_EIO && se) {
        im_buf_free(&b);
        return im_err_set(err, IM_EIO, "cannot open %s: %s", path, strerror(se));
    }
    if (rc == IM_ELIMIT)
        rc = im_err_set(err, IM_ELIMIT, "%s is larger than %u bytes", path, IM_CFG_MAX_BYTES);
    else if (rc)
        rc = im_err_set(err, IM_EIO, "error reading %s", path);
    if (!rc) rc = scrape_config_parse(b.data ? b.data : "", b.len, path, out, err);
    if (!rc) {
        char *pc = im_strdup(path);
        set_dir(*out, dirname(pc));
        im_free(pc);
    }
    if (rc && err && !err->file) err->file = path;
    im_buf_free(&b);
    return rc;
}

const char scrape_default_config_yaml[] = "# infermon's embedded default configuration.\n"
                                          "global:\n"
                                          "  scrape_interval: 15s\n"
                                          "  scrape_timeout: 10s\n"
                                          "  evaluation_interval: 15s\n"
                                          "scrape_configs:\n"
                                          "  - job_name: vllm\n"
                                          "    static_configs:\n"
                                          "      - targets: ['localhost:8000']\n"
                                          "  - job_name: dcgm-exporter\n"
                                          "    static_configs:\n"
                                          "      - targets: ['localhost:9400']\n"
                                          "storage:\n"
                                          "  path: ./data\n";
