/* config_dump.c — writes a loaded configuration back as YAML, defaults filled
 * and secrets replaced by <secret> (URL passwords by xxxxx), the way
 * /api/v1/status/config shows it. */
#include "util/base.h"

#include <stdlib.h>

#include "scrape/config.h"
#include "util/timeutil.h"

static void put_str(im_buf_t *o, const char *s)
{
    size_t n = strlen(s);
    bool plain = n > 0 && !strchr("-?:,[]{}#&*!|>'\"%@` ", s[0]) && s[n - 1] != ' ' &&
                 !strstr(s, ": ") && !strstr(s, " #") && !strchr(s, '\n') && !strchr(s, '\t') &&
                 !strchr(s, '\\') && s[n - 1] != ':' && strcmp(s, "true") && strcmp(s, "false") &&
                 strcmp(s, "null") && strcmp(s, "~") && strcmp(s, "yes") && strcmp(s, "no") &&
                 strcmp(s, "on") && strcmp(s, "off");
    if (plain) {
        char *end;
        (void)strtod(s, &end);
        if (*end == 0) plain = false; /* looks like a number */
    }
    if (plain) {
        (void)im_buf_puts(o, s);
        return;
    }
    (void)im_buf_putc(o, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"' || *p == '\\') (void)im_buf_putc(o, '\\');
        if (*p == '\n') {
            (void)im_buf_puts(o, "\\n");
            continue;
        }
        (void)im_buf_putc(o, *p);
    }
    (void)im_buf_putc(o, '"');
}

/* Writes a URL with its userinfo password replaced by "xxxxx", as Go's
 * URL.Redacted (Prometheus prints config URLs that way):
 * "http://u:pw@h/p" -> "http://u:xxxxx@h/p". */
static void put_url(im_buf_t *o, const char *u)
{
    const char *sch = strstr(u, "://");
    const char *auth = sch ? sch + 3 : u;
    size_t alen = strcspn(auth, "/?#");
    const char *at = NULL;
    for (const char *p = auth; p < auth + alen; p++)
        if (*p == '@') at = p;
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (!colon) {
        put_str(o, u);
        return;
    }
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_append(&b, u, (size_t)(colon - u));
    (void)im_buf_puts(&b, ":xxxxx");
    (void)im_buf_puts(&b, at);
    put_str(o, b.data);
    im_buf_free(&b);
}

static void kv(im_buf_t *o, int ind, const char *k, const char *v)
{
    (void)im_buf_printf(o, "%*s%s: ", ind, "", k);
    put_str(o, v);
    (void)im_buf_putc(o, '\n');
}

static void kdur(im_buf_t *o, int ind, const char *k, int64_t ms)
{
    char b[64];
    im_duration_format(ms, b, sizeof b);
    (void)im_buf_printf(o, "%*s%s: %s\n", ind, "", k, b);
}

static void klabels(im_buf_t *o, int ind, const char *k, const im_labels_t *ls)
{
    if (!ls || ls->n == 0) return;
    (void)im_buf_printf(o, "%*s%s:\n", ind, "", k);
    for (uint32_t i = 0; i < ls->n; i++) kv(o, ind + 2, ls->l[i].name->s, ls->l[i].value->s);
}

static void relabels(im_buf_t *o, const char *k, const scrape_relabel_t *r, size_t n)
{
    if (!n) return;
    (void)im_buf_printf(o, "  %s:\n", k);
    for (size_t i = 0; i < n; i++) {
        const char *pfx = "  - ";
        if (r[i].nsource) {
            (void)im_buf_printf(o, "%ssource_labels: [", pfx);
            for (size_t s = 0; s < r[i].nsource; s++)
                (void)im_buf_printf(o, "%s%s", s ? ", " : "", r[i].source_labels[s]);
            (void)im_buf_puts(o, "]\n");
            pfx = "    ";
        }
        (void)im_buf_puts(o, pfx);
        kv(o, 0, "separator", r[i].separator);
        pfx = "    ";
        if (r[i].modulus)
            (void)im_buf_printf(o, "    modulus: %llu\n", (unsigned long long)r[i].modulus);
        if (r[i].target_label) kv(o, 4, "target_label", r[i].target_label);
        kv(o, 4, "regex", r[i].regex);
        kv(o, 4, "replacement", r[i].replacement);
        kv(o, 4, "action", scrape_relabel_action_name(r[i].action));
    }
}

/* Emits n at indentation ind; the cursor is already positioned after "key:" or
 * "- " (inline) and the node decides whether to break the line. */
typedef enum { PLAIN, SECRET, URL } ctx_t;

static void node(im_buf_t *o, const scrape_cfg_node_t *n, int ind, ctx_t ctx, bool after_dash)
{
    if (n->type == SCRAPE_NODE_SCALAR) {
        if (!after_dash) (void)im_buf_putc(o, ' ');
        if (ctx == URL)
            put_url(o, n->str);
        else
            put_str(o, ctx == SECRET ? "<secret>" : n->str);
        (void)im_buf_putc(o, '\n');
        return;
    }
    if (n->nkids == 0) {
        (void)im_buf_puts(o, n->type == SCRAPE_NODE_MAP ? " {}\n" : " []\n");
        return;
    }
    if (n->type == SCRAPE_NODE_SEQ) {
        (void)im_buf_putc(o, '\n');
        for (size_t i = 0; i < n->nkids; i++) {
            (void)im_buf_printf(o, "%*s- ", ind, "");
            node(o, n->kids[i], ind + 2, PLAIN, true);
        }
        return;
    }
    if (!after_dash) (void)im_buf_putc(o, '\n');
    for (size_t i = 0; i < n->nkids; i += 2) {
        const char *k = n->kids[i]->type == SCRAPE_NODE_SCALAR ? n->kids[i]->str : "?";
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
    kdur(o, 2, "scrape_interval", c->scrape_interval_ms);
    kdur(o, 2, "scrape_timeout", c->scrape_timeout_ms);
    kdur(o, 2, "evaluation_interval", c->evaluation_interval_ms);
    klabels(o, 2, "external_labels", c->external_labels);
    if (c->alerting) {
        (void)im_buf_puts(o, "alerting:");
        node(o, c->alerting, 2, PLAIN, false);
    }
    if (c->nrule_files) {
        (void)im_buf_puts(o, "rule_files:\n");
        for (size_t i = 0; i < c->nrule_files; i++) {
            (void)im_buf_puts(o, "- ");
            put_str(o, c->rule_files[i]);
            (void)im_buf_putc(o, '\n');
        }
    }
    if (c->njobs) (void)im_buf_puts(o, "scrape_configs:\n");
    for (size_t i = 0; i < c->njobs; i++) {
        const scrape_job_cfg_t *j = &c->jobs[i];
        (void)im_buf_puts(o, "- ");
        kv(o, 0, "job_name", j->job_name);
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
                        put_str(o, j->param_values[q]);
                        (void)im_buf_putc(o, '\n');
                    }
            }
        }
        kdur(o, 2, "scrape_interval", j->interval_ms);
        kdur(o, 2, "scrape_timeout", j->timeout_ms);
        kv(o, 2, "metrics_path", j->metrics_path);
        kv(o, 2, "scheme", j->scheme);
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
        if (j->basic_user || j->basic_pass || j->basic_pass_file) {
            (void)im_buf_puts(o, "  basic_auth:\n");
            if (j->basic_user) kv(o, 4, "username", j->basic_user);
            if (j->basic_pass) kv(o, 4, "password", "<secret>");
            if (j->basic_pass_file) kv(o, 4, "password_file", j->basic_pass_file);
        }
        if (j->auth_type) {
            (void)im_buf_puts(o, "  authorization:\n");
            kv(o, 4, "type", j->auth_type);
            if (j->auth_cred) kv(o, 4, "credentials", "<secret>");
            if (j->auth_cred_file) kv(o, 4, "credentials_file", j->auth_cred_file);
        }
        if (j->tls_ca_file || j->tls_cert_file || j->tls_server_name || j->tls_insecure) {
            (void)im_buf_puts(o, "  tls_config:\n");
            if (j->tls_ca_file) kv(o, 4, "ca_file", j->tls_ca_file);
            if (j->tls_cert_file) kv(o, 4, "cert_file", j->tls_cert_file);
            if (j->tls_key_file) kv(o, 4, "key_file", j->tls_key_file);
            if (j->tls_server_name) kv(o, 4, "server_name", j->tls_server_name);
            (void)im_buf_printf(o, "    insecure_skip_verify: %s\n",
                                j->tls_insecure ? "true" : "false");
        }
        if (j->proxy_url) {
            (void)im_buf_puts(o, "  proxy_url: ");
            put_url(o, j->proxy_url);
            (void)im_buf_putc(o, '\n');
        }
        (void)im_buf_printf(o, "  follow_redirects: %s\n", j->follow_redirects ? "true" : "false");
        relabels(o, "relabel_configs", j->relabel, j->nrelabel);
        relabels(o, "metric_relabel_configs", j->metric_relabel, j->nmetric_relabel);
        if (j->nfile_sd) {
            (void)im_buf_puts(o, "  file_sd_configs:\n");
            for (size_t f = 0; f < j->nfile_sd; f++) {
                (void)im_buf_puts(o, "  - files:\n");
                for (size_t k = 0; k < j->file_sd[f].nfiles; k++) {
                    (void)im_buf_puts(o, "    - ");
                    put_str(o, j->file_sd[f].files[k]);
                    (void)im_buf_putc(o, '\n');
                }
                kdur(o, 4, "refresh_interval", j->file_sd[f].refresh_ms);
            }
        }
        if (j->nstatic) {
            (void)im_buf_puts(o, "  static_configs:\n");
            for (size_t g = 0; g < j->nstatic; g++) {
                (void)im_buf_puts(o, "  - targets:\n");
                for (size_t k = 0; k < j->static_groups[g].ntargets; k++) {
                    (void)im_buf_puts(o, "    - ");
                    put_str(o, j->static_groups[g].targets[k]);
                    (void)im_buf_putc(o, '\n');
                }
                klabels(o, 4, "labels", j->static_groups[g].labels);
            }
        }
    }
    if (c->remote_write) {
        (void)im_buf_puts(o, "remote_write:");
        node(o, c->remote_write, 0, PLAIN, false);
    }
    if (c->storage_path || c->retention_ms || c->retention_bytes) {
        (void)im_buf_puts(o, "storage:\n");
        if (c->storage_path) kv(o, 2, "path", c->storage_path);
    }
    if (c->llm) {
        (void)im_buf_puts(o, "llm:");
        node(o, c->llm, 2, PLAIN, false);
    }
    return IM_OK;
}
