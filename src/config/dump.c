/* dump.c — writes a loaded configuration back as YAML, defaults filled
 * and secrets replaced by <secret> (URL passwords by xxxxx), the way
 * /api/v1/status/config shows it. */
#include "util/base.h"

#include <stdlib.h>

#include "config/relabel_cfg.h"
#include "config/config.h"
#include "util/timeutil.h"

static void klabels(im_buf_t *o, int ind, const char *k, const im_labels_t *ls)
{
    if (!ls || ls->n == 0) return;
    (void)im_buf_printf(o, "%*s%s:\n", ind, "", k);
    for (uint32_t i = 0; i < ls->n; i++)
        cfg_emit_kv(o, ind + 2, ls->l[i].name->s, ls->l[i].value->s);
}

/* "  - key:" and the strings as a list under it (an item of a list of mappings
 * at indentation 2). */
static void item_list(im_buf_t *o, const char *key, char *const *v, size_t n)
{
    (void)im_buf_printf(o, "  - %s:\n", key);
    for (size_t k = 0; k < n; k++) {
        (void)im_buf_puts(o, "    - ");
        cfg_emit_str(o, v[k]);
        (void)im_buf_putc(o, '\n');
    }
}

/* Emits n at indentation ind; the cursor is already positioned after "key:" or
 * "- " (inline) and the node decides whether to break the line. */
typedef enum { PLAIN, SECRET, URL } ctx_t;

static void node(im_buf_t *o, const cfg_node_t *n, int ind, ctx_t ctx, bool after_dash)
{
    if (n->type == CFG_NODE_SCALAR) {
        if (!after_dash) (void)im_buf_putc(o, ' ');
        if (ctx == URL)
            cfg_emit_url(o, n->str);
        else
            cfg_emit_str(o, ctx == SECRET ? "<secret>" : n->str);
        (void)im_buf_putc(o, '\n');
        return;
    }
    if (n->nkids == 0) {
        (void)im_buf_puts(o, n->type == CFG_NODE_MAP ? " {}\n" : " []\n");
        return;
    }
    if (n->type == CFG_NODE_SEQ) {
        (void)im_buf_putc(o, '\n');
        for (size_t i = 0; i < n->nkids; i++) {
            (void)im_buf_printf(o, "%*s- ", ind, "");
            node(o, n->kids[i], ind + 2, PLAIN, true);
        }
        return;
    }
    if (!after_dash) (void)im_buf_putc(o, '\n');
    for (size_t i = 0; i < n->nkids; i += 2) {
        const char *k = n->kids[i]->type == CFG_NODE_SCALAR ? n->kids[i]->str : "?";
        bool sec = !strcmp(k, "password") || !strcmp(k, "credentials") ||
                   !strcmp(k, "bearer_token") || !strcmp(k, "client_secret") || !strcmp(k, "key");
        bool url = !strcmp(k, "url") || !strcmp(k, "proxy_url");
        (void)im_buf_printf(o, "%*s%s:", (after_dash && i == 0) ? 0 : ind, "", k);
        node(o, n->kids[i + 1], ind + 2, sec ? SECRET : url ? URL : PLAIN, false);
    }
}

im_rc scrape_config_dump(const scrape_config_t *c, im_buf_t *o)
{
    (void)im_buf_puts(o, "global:\n");
    cfg_emit_dur(o, 2, "scrape_interval", c->scrape_interval_ms);
    cfg_emit_dur(o, 2, "scrape_timeout", c->scrape_timeout_ms);
    cfg_emit_dur(o, 2, "evaluation_interval", c->evaluation_interval_ms);
    klabels(o, 2, "external_labels", c->external_labels);
    if (c->nscrape_protocols) {
        (void)im_buf_puts(o, "  scrape_protocols:\n");
        for (size_t p = 0; p < c->nscrape_protocols; p++)
            (void)im_buf_printf(o, "  - %s\n", cfg_scrape_proto_name(c->scrape_protocols[p]));
    }
    if (c->alerting_yaml) {
        (void)im_buf_puts(o, "alerting:");
        node(o, c->alerting_yaml, 2, PLAIN, false);
    }
    if (c->nrule_files) {
        (void)im_buf_puts(o, "rule_files:\n");
        for (size_t i = 0; i < c->nrule_files; i++) {
            (void)im_buf_puts(o, "- ");
            cfg_emit_str(o, c->rule_files[i]);
            (void)im_buf_putc(o, '\n');
        }
    }
    if (c->njobs) (void)im_buf_puts(o, "scrape_configs:\n");
    for (size_t i = 0; i < c->njobs; i++) {
        const scrape_job_cfg_t *j = &c->jobs[i];
        (void)im_buf_puts(o, "- ");
        cfg_emit_kv(o, 0, "job_name", j->job_name);
        if (j->honor_labels) (void)im_buf_puts(o, "  honor_labels: true\n");
        (void)im_buf_printf(o, "  honor_timestamps: %s\n", j->honor_timestamps ? "true" : "false");
        if (j->nparams) {
            (void)im_buf_puts(o, "  params:\n");
            for (size_t p = 0; p < j->nparams; p++) {
                bool first = true;
                for (size_t q = 0; q < p; q++)
                    if (!strcmp(j->param_names[q], j->param_names[p])) first = false;
                if (!first) continue;
                (void)im_buf_printf(o, "    %s:\n", j->param_names[p]);
                for (size_t q = p; q < j->nparams; q++)
                    if (!strcmp(j->param_names[q], j->param_names[p])) {
                        (void)im_buf_puts(o, "    - ");
                        cfg_emit_str(o, j->param_values[q]);
                        (void)im_buf_putc(o, '\n');
                    }
            }
        }
        cfg_emit_dur(o, 2, "scrape_interval", j->interval_ms);
        cfg_emit_dur(o, 2, "scrape_timeout", j->timeout_ms);
        cfg_emit_kv(o, 2, "metrics_path", j->metrics_path);
        cfg_emit_kv(o, 2, "scheme", j->scheme);
        if (j->sample_limit)
            (void)im_buf_printf(o, "  sample_limit: %llu\n", (unsigned long long)j->sample_limit);
        if (j->label_limit)
            (void)im_buf_printf(o, "  label_limit: %llu\n", (unsigned long long)j->label_limit);
        if (j->label_name_length_limit)
            (void)im_buf_printf(o, "  label_name_length_limit: %llu\n",
                                (unsigned long long)j->label_name_length_limit);
        if (j->label_value_length_limit)
            (void)im_buf_printf(o, "  label_value_length_limit: %llu\n",
                                (unsigned long long)j->label_value_length_limit);
        if (j->body_size_limit)
            (void)im_buf_printf(o, "  body_size_limit: %lldB\n", (long long)j->body_size_limit);
        if (j->protocols_set) {
            (void)im_buf_puts(o, "  scrape_protocols:\n");
            for (size_t p = 0; p < j->nprotocols; p++)
                (void)im_buf_printf(o, "  - %s\n", cfg_scrape_proto_name(j->protocols[p]));
        }
        if (j->fallback_protocol)
            (void)im_buf_printf(o, "  fallback_scrape_protocol: %s\n",
                                cfg_scrape_proto_name(j->fallback_protocol));
        cfg_http_client_dump(&j->http, o, 2);
        cfg_relabel_dump(o, 2, "relabel_configs", j->relabel, j->nrelabel);
        cfg_relabel_dump(o, 2, "metric_relabel_configs", j->metric_relabel, j->nmetric_relabel);
        if (j->nfile_sd) {
            (void)im_buf_puts(o, "  file_sd_configs:\n");
            for (size_t f = 0; f < j->nfile_sd; f++) {
                item_list(o, "files", j->file_sd[f].files, j->file_sd[f].nfiles);
                cfg_emit_dur(o, 4, "refresh_interval", j->file_sd[f].refresh_ms);
            }
        }
        cfg_k8s_sd_dump(j->k8s_sd, j->nk8s_sd, o);
        if (j->nstatic) {
            (void)im_buf_puts(o, "  static_configs:\n");
            for (size_t g = 0; g < j->nstatic; g++) {
                item_list(o, "targets", j->static_groups[g].targets, j->static_groups[g].ntargets);
                klabels(o, 4, "labels", j->static_groups[g].labels);
            }
        }
    }
    cfg_remote_write_dump(c->remote_write, c->nremote_write, o);
    if (c->storage_path || c->retention_ms || c->retention_bytes) {
        (void)im_buf_puts(o, "storage:\n");
        if (c->storage_path) cfg_emit_kv(o, 2, "path", c->storage_path);
    }
    cfg_llm_dump(&c->llm, o);
    return IM_OK;
}
