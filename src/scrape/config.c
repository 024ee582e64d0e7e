/* config.c — loads the infermon configuration (a superset of prometheus.yml).
 *
 * libyaml's document API gives a node graph with marks; we copy it into our own
 * small tree (scrape_cfg_node_t, capped at IM_CFG_MAX_NODES so alias bombs are
 * refused), then decode that tree strictly: every mapping key must be known,
 * duplicated keys are errors, and every error names file:line:column. Defaults
 * and validation follow Prometheus 2.x (config.go's rules, in our words). */
#include "util/base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <yaml.h>

#include "scrape/config.h"
#include "scrape/scrape_int.h"
#include "util/timeutil.h"

#define IM_CFG_MAX_NODES 1000000
#define IM_CFG_MAX_BYTES (16u << 20)

/* ---- YAML -> tree ---- */

void scrape_cfg_node_free(scrape_cfg_node_t *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->nkids; i++) scrape_cfg_node_free(n->kids[i]);
    im_free(n->kids);
    im_free(n->str);
    im_free(n);
}

typedef struct conv {
    yaml_document_t *doc;
    size_t count;
    int depth;
} conv_t;

static scrape_cfg_node_t *convert(conv_t *c, yaml_node_t *yn)
{
    if (!yn || ++c->count > IM_CFG_MAX_NODES || c->depth > 200) return NULL;
    scrape_cfg_node_t *n = im_calloc(1, sizeof *n);
    n->line = (int)yn->start_mark.line + 1;
    n->col = (int)yn->start_mark.column + 1;
    c->depth++;
    bool ok = true;
    switch (yn->type) {
    case YAML_SCALAR_NODE:
        n->type = SCRAPE_NODE_SCALAR;
        n->str = im_strndup((const char *)yn->data.scalar.value, yn->data.scalar.length);
        n->plain = yn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        break;
    case YAML_SEQUENCE_NODE: {
        n->type = SCRAPE_NODE_SEQ;
        size_t k = (size_t)(yn->data.sequence.items.top - yn->data.sequence.items.start);
        n->kids = im_calloc(k ? k : 1, sizeof *n->kids);
        for (size_t i = 0; i < k && ok; i++) {
            n->kids[i] =
                convert(c, yaml_document_get_node(c->doc, yn->data.sequence.items.start[i]));
            if (!n->kids[i])
                ok = false;
            else
                n->nkids++;
        }
        break;
    }
    case YAML_MAPPING_NODE: {
        n->type = SCRAPE_NODE_MAP;
        size_t k = (size_t)(yn->data.mapping.pairs.top - yn->data.mapping.pairs.start);
        n->kids = im_calloc(k ? 2 * k : 1, sizeof *n->kids);
        for (size_t i = 0; i < k && ok; i++) {
            yaml_node_pair_t *p = &yn->data.mapping.pairs.start[i];
            scrape_cfg_node_t *key = convert(c, yaml_document_get_node(c->doc, p->key));
            if (!key) {
                ok = false;
                break;
            }
            n->kids[n->nkids++] = key;
            scrape_cfg_node_t *val = convert(c, yaml_document_get_node(c->doc, p->value));
            if (!val) {
                ok = false;
                break;
            }
            n->kids[n->nkids++] = val;
        }
        break;
    }
    default: ok = false;
    }
    c->depth--;
    if (!ok) {
        scrape_cfg_node_free(n);
        return NULL;
    }
    return n;
}

/* ---- Decoding helpers ---- */

typedef struct dec {
    const char *file;
    im_err_t *err;
} dec_t;

static im_rc fail(dec_t *d, const scrape_cfg_node_t *n, const char *fmt, ...) IM_PRINTF(3, 4);
static im_rc fail(dec_t *d, const scrape_cfg_node_t *n, const char *fmt, ...)
{
    char msg[IM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    im_err_setpos(d->err, IM_EPARSE, n ? n->line : 0, n ? n->col : 0, "%s", msg);
    if (d->err) d->err->file = d->file;
    return IM_EPARSE;
}

static bool is_null(const scrape_cfg_node_t *n)
{
    return !n || (n->type == SCRAPE_NODE_SCALAR && n->plain &&
                  (n->str[0] == 0 || strcmp(n->str, "~") == 0 || strcmp(n->str, "null") == 0 ||
                   strcmp(n->str, "Null") == 0 || strcmp(n->str, "NULL") == 0));
}

static const char *type_name(const scrape_cfg_node_t *n)
{
    return n->type == SCRAPE_NODE_MAP   ? "a mapping"
           : n->type == SCRAPE_NODE_SEQ ? "a sequence"
                                        : "a scalar";
}

/* Checks n is a mapping whose keys are all in `known` (NULL-terminated) and
 * unique. A null node is an empty mapping. */
static im_rc check_map(dec_t *d, const scrape_cfg_node_t *n, const char *what,
                       const char *const *known)
{
    if (is_null(n)) return IM_OK;
    if (n->type != SCRAPE_NODE_MAP)
        return fail(d, n, "%s must be a mapping, not %s", what, type_name(n));
    for (size_t i = 0; i < n->nkids; i += 2) {
        const scrape_cfg_node_t *k = n->kids[i];
        if (k->type != SCRAPE_NODE_SCALAR)
            return fail(d, k, "mapping keys in %s must be strings", what);
        bool ok = known == NULL;
        for (size_t j = 0; known && known[j]; j++)
            if (strcmp(known[j], k->str) == 0) ok = true;
        if (!ok) return fail(d, k, "field %s not found in %s", k->str, what);
        for (size_t j = 0; j < i; j += 2)
            if (strcmp(n->kids[j]->str, k->str) == 0)
                return fail(d, k, "mapping key \"%s\" already defined at line %d", k->str,
                            n->kids[j]->line);
    }
    return IM_OK;
}

static const scrape_cfg_node_t *get(const scrape_cfg_node_t *m, const char *key)
{
    if (is_null(m) || m->type != SCRAPE_NODE_MAP) return NULL;
    for (size_t i = 0; i < m->nkids; i += 2)
        if (strcmp(m->kids[i]->str, key) == 0)
            return is_null(m->kids[i + 1]) ? NULL : m->kids[i + 1];
    return NULL;
}

static im_rc get_str(dec_t *d, const scrape_cfg_node_t *m, const char *key, char **out)
{
    const scrape_cfg_node_t *n = get(m, key);
    if (!n) return IM_OK;
    if (n->type != SCRAPE_NODE_SCALAR)
        return fail(d, n, "%s must be a string, not %s", key, type_name(n));
    im_free(*out);
    *out = im_strdup(n->str);
    return IM_OK;
}

static im_rc get_bool(dec_t *d, const scrape_cfg_node_t *m, const char *key, bool *out)
{
    const scrape_cfg_node_t *n = get(m, key);
    if (!n) return IM_OK;
    if (n->type == SCRAPE_NODE_SCALAR) {
        const char *s = n->str;
        if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE") || !strcmp(s, "yes") ||
            !strcmp(s, "on")) {
            *out = true;
            return IM_OK;
        }
        if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE") || !strcmp(s, "no") ||
            !strcmp(s, "off")) {
            *out = false;
            return IM_OK;
        }
    }
    return fail(d, n, "%s: cannot unmarshal \"%s\" into a boolean", key, n->str ? n->str : "");
}

static im_rc get_dur(dec_t *d, const scrape_cfg_node_t *m, const char *key, int64_t *out)
{
    const scrape_cfg_node_t *n = get(m, key);
    if (!n) return IM_OK;
    if (n->type != SCRAPE_NODE_SCALAR)
        return fail(d, n, "%s must be a duration, not %s", key, type_name(n));
    im_err_t e;
    im_err_clear(&e);
    if (im_duration_parse(n->str, strlen(n->str), out, &e) != IM_OK)
        return fail(d, n, "%s: not a valid duration string: \"%s\"", key, n->str);
    return IM_OK;
}

static im_rc get_u64(dec_t *d, const scrape_cfg_node_t *m, const char *key, uint64_t *out)
{
    const scrape_cfg_node_t *n = get(m, key);
    if (!n) return IM_OK;
    const char *s = n->type == SCRAPE_NODE_SCALAR ? n->str : "";
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || errno || s[0] == '-' || s[0] == '+')
        return fail(d, n, "%s: cannot unmarshal \"%s\" into an unsigned integer", key, s);
    *out = v;
    return IM_OK;
}

im_rc scrape_parse_bytes(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-' || *s == '+') return IM_EINVAL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return IM_EINVAL;
    if (end == s) return IM_EINVAL;
    static const struct {
        const char *u;
        int shift;
    } units[] = {{"", 0},     {"B", 0},    {"KB", 10},  {"KiB", 10}, {"MB", 20},
                 {"MiB", 20}, {"GB", 30},  {"GiB", 30}, {"TB", 40},  {"TiB", 40},
                 {"PB", 50},  {"PiB", 50}, {"EB", 60},  {"EiB", 60}};
    for (size_t i = 0; i < IM_ARRAY_LEN(units); i++) {
        if (strcmp(end, units[i].u) == 0) {
            if (units[i].u[0] == 0 && v != 0) return IM_EINVAL; /* a unit is required */
            if (units[i].shift && v > (unsigned long long)(INT64_MAX >> units[i].shift))
                return IM_EINVAL;
            *out = (int64_t)(v << units[i].shift);
            return IM_OK;
        }
    }
    return IM_EINVAL;
}

static im_rc get_bytes(dec_t *d, const scrape_cfg_node_t *m, const char *key, int64_t *out)
{
    const scrape_cfg_node_t *n = get(m, key);
    if (!n) return IM_OK;
    if (n->type != SCRAPE_NODE_SCALAR || scrape_parse_bytes(n->str, out) != IM_OK)
        return fail(d, n, "%s: invalid size \"%s\" (use e.g. 10MB, 512KiB)", key,
                    n->type == SCRAPE_NODE_SCALAR ? n->str : "");
    return IM_OK;
}

static im_rc get_strlist(dec_t *d, const scrape_cfg_node_t *m, const char *key, char ***out,
                         size_t *nout)
{
    const scrape_cfg_node_t *n = get(m, key);
    if (!n) return IM_OK;
    if (n->type != SCRAPE_NODE_SEQ) return fail(d, n, "%s must be a list of strings", key);
    *out = im_calloc(n->nkids ? n->nkids : 1, sizeof(char *));
    for (size_t i = 0; i < n->nkids; i++) {
        if (n->kids[i]->type != SCRAPE_NODE_SCALAR)
            return fail(d, n->kids[i], "%s must be a list of strings", key);
        (*out)[(*nout)++] = im_strdup(n->kids[i]->str);
    }
    return IM_OK;
}

static im_rc get_labels(dec_t *d, const scrape_cfg_node_t *m, const char *key,
                        const im_labels_t **out)
{
    const scrape_cfg_node_t *n = get(m, key);
    if (!n) return IM_OK;
    im_rc rc = check_map(d, n, key, NULL);
    if (rc) return rc;
    im_labels_builder_t lb;
    im_lb_init(&lb);
    for (size_t i = 0; i < n->nkids; i += 2) {
        const scrape_cfg_node_t *k = n->kids[i], *v = n->kids[i + 1];
        if (!im_label_name_valid(k->str, strlen(k->str))) {
            im_lb_free(&lb);
            return fail(d, k, "\"%s\" is not a valid label name", k->str);
        }
        if (v->type != SCRAPE_NODE_SCALAR) {
            im_lb_free(&lb);
            return fail(d, v, "label value for \"%s\" must be a string", k->str);
        }
        if (!im_utf8_valid(v->str, strlen(v->str))) {
            im_lb_free(&lb);
            return fail(d, v, "\"%s\" is not a valid label value", v->str);
        }
        im_lb_set(&lb, k->str, strlen(k->str), v->str, is_null(v) ? 0 : strlen(v->str));
    }
    if (*out) im_labels_unref(*out);
    *out = im_lb_build(&lb);
    im_lb_free(&lb);
    return IM_OK;
}

/* ---- Sections ---- */

static im_rc dec_relabel(dec_t *d, const scrape_cfg_node_t *seq, const char *key,
                         scrape_relabel_t **out, size_t *nout)
{
    static const char *const keys[] = {"source_labels", "separator",   "target_label", "regex",
                                       "modulus",       "replacement", "action",       NULL};
    if (!seq) return IM_OK;
    if (seq->type != SCRAPE_NODE_SEQ) return fail(d, seq, "%s must be a list", key);
    *out = im_calloc(seq->nkids ? seq->nkids : 1, sizeof **out);
    for (size_t i = 0; i < seq->nkids; i++) {
        const scrape_cfg_node_t *n = seq->kids[i];
        scrape_relabel_t *r = &(*out)[(*nout)++];
        im_rc rc = check_map(d, n, "relabel_config", keys);
        if (rc) return rc;
        if ((rc = get_strlist(d, n, "source_labels", &r->source_labels, &r->nsource))) return rc;
        /* an explicitly empty separator/replacement is kept (not defaulted) */
        const scrape_cfg_node_t *sep = get(n, "separator");
        if (sep && sep->type == SCRAPE_NODE_SCALAR) r->separator = im_strdup(sep->str);
        if ((rc = get_str(d, n, "target_label", &r->target_label))) return rc;
        if ((rc = get_str(d, n, "regex", &r->regex))) return rc;
        if ((rc = get_u64(d, n, "modulus", &r->modulus))) return rc;
        for (size_t k = 0; !is_null(n) && k < n->nkids; k += 2)
            if (!strcmp(n->kids[k]->str, "replacement") &&
                n->kids[k + 1]->type == SCRAPE_NODE_SCALAR)
                r->replacement = im_strdup(n->kids[k + 1]->str);
        scrape_relabel_defaults(r);
        const scrape_cfg_node_t *a = get(n, "action");
        if (a) {
            bool found = false;
            for (int k = 0; k <= SCRAPE_RELABEL_UPPERCASE; k++)
                if (a->str && strcasecmp(a->str, scrape_relabel_action_name(k)) == 0) {
                    r->action = k;
                    found = true;
                }
            if (!found) return fail(d, a, "unknown relabel action \"%s\"", a->str ? a->str : "");
        }
        im_err_t e;
        im_err_clear(&e);
        if (scrape_relabel_compile(r, &e) != IM_OK) return fail(d, n, "%s", e.msg);
    }
    return IM_OK;
}

static im_rc dec_auth(dec_t *d, const scrape_cfg_node_t *job, scrape_job_cfg_t *j)
{
    static const char *const bkeys[] = {"username", "password", "password_file", NULL};
    static const char *const akeys[] = {"type", "credentials", "credentials_file", NULL};
    static const char *const tkeys[] = {
        "ca_file",     "cert_file", "key_file", "server_name", "insecure_skip_verify",
        "min_version", "ca",        "cert",     "key",         NULL};
    im_rc rc;
    const scrape_cfg_node_t *b = get(job, "basic_auth");
    if (b) {
        if ((rc = check_map(d, b, "basic_auth", bkeys))) return rc;
        if ((rc = get_str(d, b, "username", &j->basic_user))) return rc;
        if ((rc = get_str(d, b, "password", &j->basic_pass))) return rc;
        if ((rc = get_str(d, b, "password_file", &j->basic_pass_file))) return rc;
        if (j->basic_pass && j->basic_pass_file)
            return fail(d, b,
                        "at most one of basic_auth password & password_file must be configured");
    }
    const scrape_cfg_node_t *a = get(job, "authorization");
    if (a) {
        if ((rc = check_map(d, a, "authorization", akeys))) return rc;
        if ((rc = get_str(d, a, "type", &j->auth_type))) return rc;
        if ((rc = get_str(d, a, "credentials", &j->auth_cred))) return rc;
        if ((rc = get_str(d, a, "credentials_file", &j->auth_cred_file))) return rc;
        if (j->auth_cred && j->auth_cred_file)
            return fail(
                d, a,
                "at most one of authorization credentials & credentials_file must be configured");
        if (j->auth_type && strcasecmp(j->auth_type, "basic") == 0)
            return fail(
                d, a, "authorization type cannot be set to \"basic\", use \"basic_auth\" instead");
    }
    char *bt = NULL, *btf = NULL;
    if ((rc = get_str(d, job, "bearer_token", &bt)) ||
        (rc = get_str(d, job, "bearer_token_file", &btf))) {
        im_free(bt);
        im_free(btf);
        return rc;
    }
    if (bt || btf) {
        int nset = (b != NULL) + (a != NULL) + (bt && btf);
        im_free(j->auth_cred);
        im_free(j->auth_cred_file);
        j->auth_cred = bt;
        j->auth_cred_file = btf;
        if (nset)
            return fail(d, job,
                        "at most one of basic_auth, authorization, bearer_token & "
                        "bearer_token_file must be configured");
    }
    if (b && a)
        return fail(d, job, "at most one of basic_auth, oauth2 & authorization must be configured");
    if ((j->auth_cred || j->auth_cred_file) && !j->auth_type) j->auth_type = im_strdup("Bearer");
    const scrape_cfg_node_t *t = get(job, "tls_config");
    if (t) {
        if ((rc = check_map(d, t, "tls_config", tkeys))) return rc;
        if ((rc = get_str(d, t, "ca_file", &j->tls_ca_file))) return rc;
        if ((rc = get_str(d, t, "cert_file", &j->tls_cert_file))) return rc;
        if ((rc = get_str(d, t, "key_file", &j->tls_key_file))) return rc;
        if ((rc = get_str(d, t, "server_name", &j->tls_server_name))) return rc;
        if ((rc = get_bool(d, t, "insecure_skip_verify", &j->tls_insecure))) return rc;
        if (!!j->tls_cert_file != !!j->tls_key_file)
            return fail(d, t, "client cert file and client key file must both be specified");
    }
    return IM_OK;
}

static im_rc dec_target_groups(dec_t *d, const scrape_cfg_node_t *seq, scrape_job_cfg_t *j)
{
    static const char *const keys[] = {"targets", "labels", NULL};
    if (!seq) return IM_OK;
    if (seq->type != SCRAPE_NODE_SEQ) return fail(d, seq, "static_configs must be a list");
    j->static_groups = im_calloc(seq->nkids ? seq->nkids : 1, sizeof *j->static_groups);
    for (size_t i = 0; i < seq->nkids; i++) {
        const scrape_cfg_node_t *n = seq->kids[i];
        scrape_target_group_t *g = &j->static_groups[j->nstatic++];
        char nb[32];
        snprintf(nb, sizeof nb, "%zu", i);
        g->source = im_strdup(nb);
        im_rc rc = check_map(d, n, "static_config", keys);
        if (rc) return rc;
        if ((rc = get_strlist(d, n, "targets", &g->targets, &g->ntargets))) return rc;
        for (size_t k = 0; k < g->ntargets; k++)
            if (strchr(g->targets[k], '/'))
                return fail(d, get(n, "targets"), "\"%s\" is not a valid hostname", g->targets[k]);
        if ((rc = get_labels(d, n, "labels", &g->labels))) return rc;
        if (!g->labels) g->labels = im_labels_empty();
    }
    return IM_OK;
}

static im_rc dec_file_sd(dec_t *d, const scrape_cfg_node_t *seq, scrape_job_cfg_t *j)
{
    static const char *const keys[] = {"files", "refresh_interval", NULL};
    if (!seq) return IM_OK;
    if (seq->type != SCRAPE_NODE_SEQ) return fail(d, seq, "file_sd_configs must be a list");
    j->file_sd = im_calloc(seq->nkids ? seq->nkids : 1, sizeof *j->file_sd);
    for (size_t i = 0; i < seq->nkids; i++) {
        const scrape_cfg_node_t *n = seq->kids[i];
        scrape_file_sd_t *f = &j->file_sd[j->nfile_sd++];
        f->refresh_ms = 5 * IM_MS_PER_MINUTE;
        im_rc rc = check_map(d, n, "file_sd_config", keys);
        if (rc) return rc;
        if ((rc = get_strlist(d, n, "files", &f->files, &f->nfiles))) return rc;
        if ((rc = get_dur(d, n, "refresh_interval", &f->refresh_ms))) return rc;
        if (f->nfiles == 0)
            return fail(d, n, "file service discovery config must contain at least one path name");
        for (size_t k = 0; k < f->nfiles; k++) {
            const char *p = f->files[k], *b = strrchr(p, '/');
            b = b ? b + 1 : p;
            size_t bl = strlen(b);
            bool ok = (bl > 5 && !strcmp(b + bl - 5, ".json")) ||
                      (bl > 4 && !strcmp(b + bl - 4, ".yml")) ||
                      (bl > 5 && !strcmp(b + bl - 5, ".yaml"));
            if (!ok)
                return fail(d, get(n, "files"), "path name %s is not valid for file discovery", p);
        }
        if (f->refresh_ms <= 0) f->refresh_ms = 5 * IM_MS_PER_MINUTE;
    }
    return IM_OK;
}

static void job_free(scrape_job_cfg_t *j);

static im_rc dec_job(dec_t *d, const scrape_cfg_node_t *n, const scrape_config_t *c,
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
                                       "relabel_configs",
                                       "metric_relabel_configs",
                                       "basic_auth",
                                       "authorization",
                                       "bearer_token",
                                       "bearer_token_file",
                                       "tls_config",
                                       "proxy_url",
                                       "follow_redirects",
                                       "enable_http2",
                                       NULL};
    im_rc rc = check_map(d, n, "scrape_config", keys);
    if (rc) return rc;
    if (is_null(n)) return fail(d, n, "empty or null scrape config section");
    j->interval_ms = c->scrape_interval_ms;
    j->timeout_ms = -1;
    j->honor_timestamps = true;
    j->follow_redirects = true;
    if ((rc = get_str(d, n, "job_name", &j->job_name))) return rc;
    if (!j->job_name || !*j->job_name) return fail(d, n, "job_name is empty");
    if ((rc = get_bool(d, n, "honor_labels", &j->honor_labels))) return rc;
    if ((rc = get_bool(d, n, "honor_timestamps", &j->honor_timestamps))) return rc;
    if ((rc = get_bool(d, n, "follow_redirects", &j->follow_redirects))) return rc;
    bool h2 = true;
    if ((rc = get_bool(d, n, "enable_http2", &h2))) return rc;
    if ((rc = get_dur(d, n, "scrape_interval", &j->interval_ms))) return rc;
    if ((rc = get_dur(d, n, "scrape_timeout", &j->timeout_ms))) return rc;
    if (j->interval_ms <= 0)
        return fail(d, get(n, "scrape_interval"), "scrape_interval must be positive");
    if (j->timeout_ms < 0) {
        j->timeout_ms = c->scrape_timeout_ms;
        if (j->timeout_ms > j->interval_ms) j->timeout_ms = j->interval_ms;
    } else if (j->timeout_ms > j->interval_ms) {
        return fail(
            d, n,
            "scrape timeout greater than scrape interval for scrape config with job name \"%s\"",
            j->job_name);
    }
    if (j->timeout_ms == 0)
        return fail(d, get(n, "scrape_timeout"), "scrape_timeout must be positive");
    if ((rc = get_str(d, n, "metrics_path", &j->metrics_path))) return rc;
    if (!j->metrics_path) j->metrics_path = im_strdup("/metrics");
    if ((rc = get_str(d, n, "scheme", &j->scheme))) return rc;
    if (!j->scheme) j->scheme = im_strdup("http");
    if (strcmp(j->scheme, "http") && strcmp(j->scheme, "https"))
        return fail(d, get(n, "scheme"), "unknown scrape config scheme \"%s\" (http or https)",
                    j->scheme);
    if ((rc = get_str(d, n, "proxy_url", &j->proxy_url))) return rc;
    const scrape_cfg_node_t *p = get(n, "params");
    if (p) {
        if ((rc = check_map(d, p, "params", NULL))) return rc;
        size_t total = 0;
        for (size_t i = 1; i < p->nkids; i += 2) {
            if (p->kids[i]->type != SCRAPE_NODE_SEQ)
                return fail(d, p->kids[i], "params values must be lists of strings");
            total += p->kids[i]->nkids;
        }
        j->param_names = im_calloc(total + 1, sizeof(char *));
        j->param_values = im_calloc(total + 1, sizeof(char *));
        for (size_t i = 0; i < p->nkids; i += 2)
            for (size_t k = 0; k < p->kids[i + 1]->nkids; k++) {
                const scrape_cfg_node_t *v = p->kids[i + 1]->kids[k];
                if (v->type != SCRAPE_NODE_SCALAR)
                    return fail(d, v, "params values must be lists of strings");
                j->param_names[j->nparams] = im_strdup(p->kids[i]->str);
                j->param_values[j->nparams++] = im_strdup(v->str);
            }
    }
    if ((rc = get_u64(d, n, "sample_limit", &j->sample_limit))) return rc;
    if ((rc = get_u64(d, n, "target_limit", &j->target_limit))) return rc;
    if ((rc = get_u64(d, n, "label_limit", &j->label_limit))) return rc;
    if ((rc = get_u64(d, n, "label_name_length_limit", &j->label_name_length_limit))) return rc;
    if ((rc = get_u64(d, n, "label_value_length_limit", &j->label_value_length_limit))) return rc;
    if ((rc = get_bytes(d, n, "body_size_limit", &j->body_size_limit))) return rc;
    if ((rc = dec_auth(d, n, j))) return rc;
    if ((rc = dec_target_groups(d, get(n, "static_configs"), j))) return rc;
    if ((rc = dec_file_sd(d, get(n, "file_sd_configs"), j))) return rc;
    if ((rc = dec_relabel(d, get(n, "relabel_configs"), "relabel_configs", &j->relabel,
                          &j->nrelabel)))
        return rc;
    if ((rc = dec_relabel(d, get(n, "metric_relabel_configs"), "metric_relabel_configs",
                          &j->metric_relabel, &j->nmetric_relabel)))
        return rc;
    return IM_OK;
}

static im_rc dec_storage(dec_t *d, const scrape_cfg_node_t *n, scrape_config_t *c)
{
    static const char *const keys[] = {"path", "retention", "wal", "tsdb", "exemplars", NULL};
    static const char *const rkeys[] = {"time", "size", NULL};
    static const char *const wkeys[] = {"fsync", "fsync_interval", NULL};
    im_rc rc = check_map(d, n, "storage", keys);
    if (rc) return rc;
    if ((rc = get_str(d, n, "path", &c->storage_path))) return rc;
    const scrape_cfg_node_t *r = get(n, "retention");
    if (r) {
        if ((rc = check_map(d, r, "storage.retention", rkeys))) return rc;
        if ((rc = get_dur(d, r, "time", &c->retention_ms))) return rc;
        if ((rc = get_bytes(d, r, "size", &c->retention_bytes))) return rc;
    }
    const scrape_cfg_node_t *w = get(n, "wal");
    if (w) {
        if ((rc = check_map(d, w, "storage.wal", wkeys))) return rc;
        const scrape_cfg_node_t *f = get(w, "fsync");
        if (f) {
            c->storage_fsync_set = true;
            if (f->type == SCRAPE_NODE_SCALAR && !strcmp(f->str, "timer"))
                c->storage_fsync = SCRAPE_FSYNC_TIMER;
            else if (f->type == SCRAPE_NODE_SCALAR && !strcmp(f->str, "always"))
                c->storage_fsync = SCRAPE_FSYNC_ALWAYS;
            else if (f->type == SCRAPE_NODE_SCALAR && !strcmp(f->str, "never"))
                c->storage_fsync = SCRAPE_FSYNC_NEVER;
            else
                return fail(d, f, "storage.wal.fsync must be one of timer, always, never");
        }
        if ((rc = get_dur(d, w, "fsync_interval", &c->storage_fsync_interval_ms))) return rc;
    }
    return IM_OK;
}

/* ---- remote_write ---- */

static void node_text(im_buf_t *b, const scrape_cfg_node_t *n)
{
    if (n->str) (void)im_buf_printf(b, "%d:%s;", (int)n->type, n->str);
    for (size_t i = 0; i < n->nkids; i++) node_text(b, n->kids[i]);
    (void)im_buf_putc(b, '/');
}

static im_rc get_pos_int(dec_t *d, const scrape_cfg_node_t *m, const char *key, int64_t *out)
{
    uint64_t v = (uint64_t)*out;
    im_rc rc = get_u64(d, m, key, &v);
    if (rc) return rc;
    if (v > INT32_MAX) return fail(d, get(m, key), "%s is too large (at most %d)", key, INT32_MAX);
    *out = (int64_t)v;
    return IM_OK;
}

static im_rc dec_remote_write(dec_t *d, const scrape_cfg_node_t *n, scrape_remote_write_t *w)
{
    static const char *const keys[] = {"url",
                                       "name",
                                       "remote_timeout",
                                       "headers",
                                       "write_relabel_configs",
                                       "send_exemplars",
                                       "send_native_histograms",
                                       "queue_config",
                                       "metadata_config",
                                       "basic_auth",
                                       "authorization",
                                       "bearer_token",
                                       "bearer_token_file",
                                       "tls_config",
                                       "proxy_url",
                                       "follow_redirects",
                                       "enable_http2",
                                       "oauth2",
                                       "sigv4",
                                       "azuread",
                                       NULL};
    static const char *const qkeys[] = {"capacity",
                                        "max_shards",
                                        "min_shards",
                                        "max_samples_per_send",
                                        "batch_send_deadline",
                                        "min_backoff",
                                        "max_backoff",
                                        "retry_on_http_429",
                                        NULL};
    static const char *const mkeys[] = {"send", "send_interval", "max_samples_per_send", NULL};
    im_rc rc = check_map(d, n, "remote_write", keys);
    if (rc) return rc;
    w->remote_timeout_ms = 30 * IM_MS_PER_SECOND;
    w->follow_redirects = w->enable_http2 = true;
    w->capacity = 2500;
    w->min_shards = 1;
    w->max_shards = 200;
    w->max_samples_per_send = 500;
    w->batch_send_deadline_ms = 5 * IM_MS_PER_SECOND;
    w->min_backoff_ms = 30;
    w->max_backoff_ms = 5 * IM_MS_PER_SECOND;
    w->md_send = true;
    w->md_send_interval_ms = IM_MS_PER_MINUTE;
    w->md_max_samples_per_send = 500;
    if (!get(n, "url")) return fail(d, n, "url for remote_write is empty");
    if ((rc = get_str(d, n, "url", &w->url))) return rc;
    if (strncmp(w->url, "http://", 7) != 0 && strncmp(w->url, "https://", 8) != 0)
        return fail(d, get(n, "url"), "unsupported scheme in remote_write url \"%s\"", w->url);
    if ((rc = get_str(d, n, "name", &w->name))) return rc;
    if ((rc = get_dur(d, n, "remote_timeout", &w->remote_timeout_ms))) return rc;
    static const char *const refused[] = {"oauth2", "sigv4", "azuread", NULL};
    for (size_t i = 0; refused[i]; i++)
        if (get(n, refused[i]))
            return fail(d, get(n, refused[i]),
                        "remote_write %s is not supported by infermon (use basic_auth, "
                        "authorization or a proxy)",
                        refused[i]);
    const scrape_cfg_node_t *h = get(n, "headers");
    if (h) {
        if ((rc = check_map(d, h, "remote_write headers", NULL))) return rc;
        w->hdr_names = im_calloc(h->nkids / 2 + 1, sizeof *w->hdr_names);
        w->hdr_values = im_calloc(h->nkids / 2 + 1, sizeof *w->hdr_values);
        for (size_t i = 0; i < h->nkids; i += 2) {
            const char *k = h->kids[i]->str;
            static const char *const reserved[] = {"Authorization",
                                                   "Host",
                                                   "Content-Encoding",
                                                   "Content-Length",
                                                   "Content-Type",
                                                   "User-Agent",
                                                   "Connection",
                                                   "Keep-Alive",
                                                   "Proxy-Authenticate",
                                                   "Proxy-Authorization",
                                                   "Www-Authenticate",
                                                   "Accept-Encoding",
                                                   "X-Prometheus-Remote-Write-Version",
                                                   "X-Prometheus-Remote-Read-Version",
                                                   "X-Prometheus-Scrape-Timeout-Seconds",
                                                   NULL};
            for (size_t r = 0; reserved[r]; r++)
                if (strcasecmp(k, reserved[r]) == 0)
                    return fail(d, h->kids[i], "%s is a reserved header. It must not be changed",
                                k);
            if (h->kids[i + 1]->type != SCRAPE_NODE_SCALAR)
                return fail(d, h->kids[i + 1], "header %s must be a string", k);
            w->hdr_names[w->nhdr] = im_strdup(k);
            w->hdr_values[w->nhdr++] = im_strdup(h->kids[i + 1]->str);
        }
    }
    if ((rc = dec_relabel(d, get(n, "write_relabel_configs"), "write_relabel_configs", &w->relabel,
                          &w->nrelabel)))
        return rc;
    if ((rc = get_bool(d, n, "send_exemplars", &w->send_exemplars))) return rc;
    if ((rc = get_bool(d, n, "send_native_histograms", &w->send_native_histograms))) return rc;
    scrape_job_cfg_t j;
    memset(&j, 0, sizeof j);
    rc = dec_auth(d, n, &j);
    if (rc == IM_OK) rc = get_str(d, n, "proxy_url", &j.proxy_url);
    w->basic_user = j.basic_user;
    w->basic_pass = j.basic_pass;
    w->basic_pass_file = j.basic_pass_file;
    w->auth_type = j.auth_type;
    w->auth_cred = j.auth_cred;
    w->auth_cred_file = j.auth_cred_file;
    w->tls_ca_file = j.tls_ca_file;
    w->tls_cert_file = j.tls_cert_file;
    w->tls_key_file = j.tls_key_file;
    w->tls_server_name = j.tls_server_name;
    w->tls_insecure = j.tls_insecure;
    w->proxy_url = j.proxy_url;
    if (rc) return rc;
    if ((rc = get_bool(d, n, "follow_redirects", &w->follow_redirects))) return rc;
    if ((rc = get_bool(d, n, "enable_http2", &w->enable_http2))) return rc;
    const scrape_cfg_node_t *q = get(n, "queue_config");
    if (q) {
        if ((rc = check_map(d, q, "queue_config", qkeys))) return rc;
        if ((rc = get_pos_int(d, q, "capacity", &w->capacity)) ||
            (rc = get_pos_int(d, q, "max_shards", &w->max_shards)) ||
            (rc = get_pos_int(d, q, "min_shards", &w->min_shards)) ||
            (rc = get_pos_int(d, q, "max_samples_per_send", &w->max_samples_per_send)) ||
            (rc = get_dur(d, q, "batch_send_deadline", &w->batch_send_deadline_ms)) ||
            (rc = get_dur(d, q, "min_backoff", &w->min_backoff_ms)) ||
            (rc = get_dur(d, q, "max_backoff", &w->max_backoff_ms)) ||
            (rc = get_bool(d, q, "retry_on_http_429", &w->retry_on_http_429)))
            return rc;
        if (w->max_shards < 1) return fail(d, q, "queue_config max_shards must be at least 1");
        if (w->min_shards < 1) return fail(d, q, "queue_config min_shards must be at least 1");
        if (w->min_shards > w->max_shards)
            return fail(d, q, "queue_config min_shards (%lld) is above max_shards (%lld)",
                        (long long)w->min_shards, (long long)w->max_shards);
        if (w->max_samples_per_send < 1)
            return fail(d, q, "queue_config max_samples_per_send must be at least 1");
        if (w->capacity < w->max_samples_per_send)
            w->capacity = w->max_samples_per_send; /* a batch must fit a shard's queue */
        if (w->batch_send_deadline_ms <= 0)
            return fail(d, q, "queue_config batch_send_deadline must be positive");
        if (w->min_backoff_ms <= 0 || w->max_backoff_ms < w->min_backoff_ms)
            return fail(d, q, "queue_config needs 0 < min_backoff <= max_backoff");
    }
    const scrape_cfg_node_t *m = get(n, "metadata_config");
    if (m) {
        if ((rc = check_map(d, m, "metadata_config", mkeys))) return rc;
        if ((rc = get_bool(d, m, "send", &w->md_send)) ||
            (rc = get_dur(d, m, "send_interval", &w->md_send_interval_ms)) ||
            (rc = get_pos_int(d, m, "max_samples_per_send", &w->md_max_samples_per_send)))
            return rc;
        if (w->md_send_interval_ms <= 0)
            return fail(d, m, "metadata_config send_interval must be positive");
        if (w->md_max_samples_per_send < 1)
            return fail(d, m, "metadata_config max_samples_per_send must be at least 1");
    }
    if (w->name) {
        snprintf(w->queue_name, sizeof w->queue_name, "%s", w->name);
    } else {
        im_buf_t b;
        im_buf_init(&b, 0);
        node_text(&b, n);
        unsigned char md[16];
        scrape__md5(b.data ? b.data : "", b.len, md);
        im_buf_free(&b);
        snprintf(w->queue_name, sizeof w->queue_name, "%02x%02x%02x", md[0], md[1], md[2]);
    }
    return IM_OK;
}

void scrape_remote_write_clear(scrape_remote_write_t *w)
{
    im_free(w->url);
    im_free(w->name);
    for (size_t i = 0; i < w->nhdr; i++) {
        im_free(w->hdr_names[i]);
        im_free(w->hdr_values[i]);
    }
    im_free(w->hdr_names);
    im_free(w->hdr_values);
    for (size_t i = 0; i < w->nrelabel; i++) scrape_relabel_clear(&w->relabel[i]);
    im_free(w->relabel);
    char **strs[] = {&w->basic_user,   &w->basic_pass,      &w->basic_pass_file, &w->auth_type,
                     &w->auth_cred,    &w->auth_cred_file,  &w->tls_ca_file,     &w->tls_cert_file,
                     &w->tls_key_file, &w->tls_server_name, &w->proxy_url};
    for (size_t i = 0; i < IM_ARRAY_LEN(strs); i++) im_free(*strs[i]);
    memset(w, 0, sizeof *w);
}

static scrape_cfg_node_t *node_clone(const scrape_cfg_node_t *n)
{
    scrape_cfg_node_t *c = im_calloc(1, sizeof *c);
    *c = *n;
    c->str = n->str ? im_strdup(n->str) : NULL;
    c->kids = im_calloc(n->nkids ? n->nkids : 1, sizeof *c->kids);
    for (size_t i = 0; i < n->nkids; i++) c->kids[i] = node_clone(n->kids[i]);
    return c;
}

static im_rc decode(dec_t *d, const scrape_cfg_node_t *root, scrape_config_t *c)
{
    static const char *const keys[] = {"global",
                                       "scrape_configs",
                                       "rule_files",
                                       "alerting",
                                       "remote_write",
                                       "remote_read",
                                       "storage",
                                       "llm",
                                       "scrape_config_files",
                                       "tracing",
                                       NULL};
    static const char *const gkeys[] = {"scrape_interval", "scrape_timeout", "evaluation_interval",
                                        "external_labels", "query_log_file", NULL};
    im_rc rc = check_map(d, root, "config", keys);
    if (rc) return rc;
    c->scrape_interval_ms = IM_MS_PER_MINUTE;
    c->scrape_timeout_ms = 10 * IM_MS_PER_SECOND;
    c->evaluation_interval_ms = IM_MS_PER_MINUTE;
    const scrape_cfg_node_t *g = get(root, "global");
    if (g) {
        if ((rc = check_map(d, g, "global", gkeys))) return rc;
        if ((rc = get_dur(d, g, "scrape_interval", &c->scrape_interval_ms))) return rc;
        bool tset = get(g, "scrape_timeout") != NULL;
        if ((rc = get_dur(d, g, "scrape_timeout", &c->scrape_timeout_ms))) return rc;
        if ((rc = get_dur(d, g, "evaluation_interval", &c->evaluation_interval_ms))) return rc;
        if (c->scrape_interval_ms <= 0)
            return fail(d, get(g, "scrape_interval"), "scrape_interval must be positive");
        if (c->scrape_timeout_ms > c->scrape_interval_ms) {
            if (tset) return fail(d, g, "global scrape timeout greater than scrape interval");
            c->scrape_timeout_ms = c->scrape_interval_ms;
        }
        if ((rc = get_labels(d, g, "external_labels", &c->external_labels))) return rc;
    }
    if (!c->external_labels) c->external_labels = im_labels_empty();
    if ((rc = get_strlist(d, root, "rule_files", &c->rule_files, &c->nrule_files))) return rc;
    const scrape_cfg_node_t *sc = get(root, "scrape_configs");
    if (sc) {
        if (sc->type != SCRAPE_NODE_SEQ) return fail(d, sc, "scrape_configs must be a list");
        c->jobs = im_calloc(sc->nkids ? sc->nkids : 1, sizeof *c->jobs);
        for (size_t i = 0; i < sc->nkids; i++) {
            scrape_job_cfg_t *j = &c->jobs[c->njobs++];
            if ((rc = dec_job(d, sc->kids[i], c, j))) return rc;
            for (size_t k = 0; k + 1 < c->njobs; k++)
                if (!strcmp(c->jobs[k].job_name, j->job_name))
                    return fail(d, sc->kids[i],
                                "found multiple scrape configs with job name \"%s\"", j->job_name);
        }
    }
    const scrape_cfg_node_t *st = get(root, "storage");
    if (st && (rc = dec_storage(d, st, c))) return rc;
    const scrape_cfg_node_t *x;
    if ((x = get(root, "alerting"))) {
        if ((rc = check_map(d, x, "alerting",
                            (const char *const[]){"alertmanagers", "alert_relabel_configs", NULL})))
            return rc;
        c->alerting = node_clone(x);
    }
    if ((x = get(root, "remote_write"))) {
        if (x->type != SCRAPE_NODE_SEQ) return fail(d, x, "remote_write must be a list");
        c->remote_writes = im_calloc(x->nkids ? x->nkids : 1, sizeof *c->remote_writes);
        for (size_t i = 0; i < x->nkids; i++) {
            if ((rc = dec_remote_write(d, x->kids[i], &c->remote_writes[c->nremote_writes++])))
                return rc;
            for (size_t k = 0; k < i; k++)
                if (!strcmp(c->remote_writes[k].queue_name, c->remote_writes[i].queue_name))
                    return fail(d, x->kids[i],
                                "found multiple remote write configs with job name "
                                "\"%s\"",
                                c->remote_writes[i].queue_name);
        }
        c->remote_write = node_clone(x);
    }
    if ((x = get(root, "llm"))) {
        if ((rc = check_map(d, x, "llm", NULL))) return rc;
        c->llm = node_clone(x);
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
    char **strs[] = {&j->basic_user,   &j->basic_pass,      &j->basic_pass_file, &j->auth_type,
                     &j->auth_cred,    &j->auth_cred_file,  &j->tls_ca_file,     &j->tls_cert_file,
                     &j->tls_key_file, &j->tls_server_name, &j->proxy_url};
    for (size_t i = 0; i < IM_ARRAY_LEN(strs); i++) im_free(*strs[i]);
    for (size_t i = 0; i < j->nrelabel; i++) scrape_relabel_clear(&j->relabel[i]);
    im_free(j->relabel);
    for (size_t i = 0; i < j->nmetric_relabel; i++) scrape_relabel_clear(&j->metric_relabel[i]);
    im_free(j->metric_relabel);
    for (size_t i = 0; i < j->nstatic; i++) group_free(&j->static_groups[i]);
    im_free(j->static_groups);
    for (size_t i = 0; i < j->nfile_sd; i++) {
        for (size_t k = 0; k < j->file_sd[i].nfiles; k++) im_free(j->file_sd[i].files[k]);
        im_free(j->file_sd[i].files);
    }
    im_free(j->file_sd);
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
    scrape_cfg_node_free(c->alerting);
    scrape_cfg_node_free(c->remote_write);
    for (size_t i = 0; i < c->nremote_writes; i++) scrape_remote_write_clear(&c->remote_writes[i]);
    im_free(c->remote_writes);
    scrape_cfg_node_free(c->llm);
    im_free(c->filename);
    im_free(c->text);
    im_free(c);
}

im_rc scrape_cfg_parse_yaml(const char *text, size_t len, const char *name,
                            scrape_cfg_node_t **root, im_err_t *err)
{
    *root = NULL;
    yaml_parser_t p;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&p)) im_oom(sizeof p);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &doc)) {
        im_rc rc = im_err_setpos(err, IM_EPARSE, (int)p.problem_mark.line + 1,
                                 (int)p.problem_mark.column + 1, "yaml: %s%s%s",
                                 p.problem ? p.problem : "syntax error", p.context ? " " : "",
                                 p.context ? p.context : "");
        if (err) err->file = name;
        yaml_parser_delete(&p);
        return rc;
    }
    yaml_node_t *r = yaml_document_get_root_node(&doc);
    im_rc rc = IM_OK;
    if (r) {
        conv_t c = {&doc, 0, 0};
        *root = convert(&c, r);
        if (!*root) {
            rc = im_err_set(
                err, IM_ELIMIT,
                "yaml: document too large or too deeply nested (more than %d nodes or 200 levels)",
                IM_CFG_MAX_NODES);
            if (err) err->file = name;
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&p);
    return rc;
}

im_rc scrape_config_parse(const char *text, size_t len, const char *name, scrape_config_t **out,
                          im_err_t *err)
{
    *out = NULL;
    scrape_cfg_node_t *root;
    im_rc rc = scrape_cfg_parse_yaml(text, len, name, &root, err);
    if (rc) return rc;
    scrape_config_t *c = im_calloc(1, sizeof *c);
    c->refs = 1;
    c->filename = name ? im_strdup(name) : NULL;
    c->text = im_strndup(text, len);
    dec_t d = {name, err};
    rc = decode(&d, root, c);
    scrape_cfg_node_free(root);
    if (rc) {
        if (err) err->file = name; /* borrowed from the caller */
        scrape_config_free(c);
        return rc;
    }
    *out = c;
    return IM_OK;
}

im_rc scrape_config_load_file(const char *path, scrape_config_t **out, im_err_t *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return im_err_set(err, IM_EIO, "cannot open %s: %s", path, strerror(errno));
    im_buf_t b;
    im_buf_init(&b, IM_CFG_MAX_BYTES);
    char tmp[65536];
    size_t r;
    im_rc rc = IM_OK;
    while ((r = fread(tmp, 1, sizeof tmp, f)) > 0)
        if (im_buf_append(&b, tmp, r) != IM_OK) {
            rc = im_err_set(err, IM_ELIMIT, "%s is larger than %u bytes", path, IM_CFG_MAX_BYTES);
            break;
        }
    if (!rc && ferror(f)) rc = im_err_set(err, IM_EIO, "error reading %s", path);
    fclose(f);
    if (!rc) rc = scrape_config_parse(b.data ? b.data : "", b.len, path, out, err);
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
