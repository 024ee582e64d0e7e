/* monitors.c — prometheus-operator PodMonitor / ServiceMonitor objects
 * (monitoring.coreos.com/v1, JSON from the API server) turned into the
 * scrape_configs entries the operator generates for them (see generate.h and
 * docs/kubernetes.md): per endpoint i, a job "serviceMonitor/<ns>/<name>/<i>" or
 * "podMonitor/<ns>/<name>/<i>" with kubernetes_sd_configs (role endpoints or pod,
 * the namespaces of namespaceSelector) and, in the operator's order: the
 * __tmp_prometheus_job_name copy, the running-pod filter, keep/drop rules for
 * selector.matchLabels and matchExpressions, the port selection, the node/pod/
 * namespace/service/container labels, targetLabels and podTargetLabels, job and
 * endpoint, then the user's relabelings; metricRelabelings become
 * metric_relabel_configs. Left out on purpose: the hashmod sharding rules (one
 * infermon is one shard). Fields we cannot honour (oauth2, sigv4, TLS material
 * from ConfigMaps, ...) are errors naming the field, never ignored.
 *
 * Every string is written as a YAML double-quoted scalar, so no value from the
 * object can change the document's structure. */
#include "util/base.h"

#include <ctype.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "discovery/generate.h"

typedef struct gen {
    im_buf_t *b;
    const discovery_monitor_opts_t *o;
    im_err_t *err;
    discovery_monitor_kind_t kind;
    const char *kind_name; /* "ServiceMonitor" | "PodMonitor" (static) */
    const char *ns, *name; /* borrowed from the JSON document */
    im_rc rc;              /* first error (sticky) */
} gen_t;

static im_rc gfail(gen_t *g, const char *field, const char *fmt, ...) IM_PRINTF(3, 4);
static im_rc gfail(gen_t *g, const char *field, const char *fmt, ...)
{
    if (g->rc) return g->rc;
    char m[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    g->rc = im_err_set(g->err, IM_EINVAL, "%s %s/%s: %s: %s", g->kind_name, g->ns ? g->ns : "?",
                       g->name ? g->name : "?", field, m);
    return g->rc;
}

static void put(gen_t *g, const char *s)
{
    if (!g->rc && (g->rc = im_buf_puts(g->b, s)) != IM_OK)
        im_err_set(g->err, g->rc, "%s %s/%s: generated configuration too large", g->kind_name,
                   g->ns, g->name);
}

static void putf(gen_t *g, const char *fmt, ...) IM_PRINTF(2, 3);
static void putf(gen_t *g, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    put(g, tmp);
}

/* A YAML double-quoted scalar: JSON escaping is valid YAML. */
static void putq(gen_t *g, const char *s)
{
    if (g->rc) return;
    put(g, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p && !g->rc; p++) {
        if (*p == '"' || *p == '\\') {
            char e[3] = {'\\', (char)*p, 0};
            put(g, e);
        } else if (*p < 0x20 || *p == 0x7f) {
            putf(g, "\\u%04x", *p);
        } else {
            char c[2] = {(char)*p, 0};
            put(g, c);
        }
    }
    put(g, "\"");
}

/* Prometheus' label-name sanitising: every byte outside [a-zA-Z0-9_] becomes _. */
static void sanitize(const char *s, char *out, size_t cap)
{
    size_t i = 0;
    for (; s[i] && i + 1 < cap; i++)
        out[i] = (isalnum((unsigned char)s[i]) || s[i] == '_') ? s[i] : '_';
    out[i] = 0;
}

/* ---- Typed access to the object ---- */

static bool allowed(const char *k, const char *const *keys)
{
    for (; *keys; keys++)
        if (!strcmp(*keys, k)) return true;
    return false;
}

/* Every key of obj must be in keys; an unknown one is an error (a field the
 * operator would honour and we would not). */
static im_rc check_keys(gen_t *g, json_t *obj, const char *path, const char *const *keys)
{
    if (!obj) return IM_OK;
    if (!json_is_object(obj)) return gfail(g, path, "must be an object");
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        if (!allowed(k, keys)) {
            char f[256];
            snprintf(f, sizeof f, "%s.%s", path, k);
            return gfail(g, f, "field not supported by infermon");
        }
    }
    return IM_OK;
}

/* A string field or NULL when absent; another type is an error. */
static const char *sfield(gen_t *g, json_t *obj, const char *key, const char *path)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    if (!v || json_is_null(v)) return NULL;
    if (!json_is_string(v)) {
        char f[256];
        snprintf(f, sizeof f, "%s.%s", path, key);
        gfail(g, f, "must be a string");
        return NULL;
    }
    return json_string_value(v);
}

/* A boolean field: -1 absent, 0/1. */
static int bfield(gen_t *g, json_t *obj, const char *key, const char *path)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    if (!v || json_is_null(v)) return -1;
    if (!json_is_boolean(v)) {
        char f[256];
        snprintf(f, sizeof f, "%s.%s", path, key);
        gfail(g, f, "must be true or false");
        return -1;
    }
    return json_is_true(v);
}

/* A non-negative integer field: -1 absent. */
static long long ifield(gen_t *g, json_t *obj, const char *key, const char *path)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    if (!v || json_is_null(v)) return -1;
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        char f[256];
        snprintf(f, sizeof f, "%s.%s", path, key);
        gfail(g, f, "must be a non-negative integer");
        return -1;
    }
    return (long long)json_integer_value(v);
}

/* Reads the value of a SecretKeySelector {name, key} in the monitor's namespace.
 * Returns an owned string or NULL (error set). */
static char *secret(gen_t *g, json_t *sel, const char *path)
{
    static const char *const keys[] = {"name", "key", "optional", NULL};
    if (check_keys(g, sel, path, keys)) return NULL;
    const char *n = sfield(g, sel, "name", path), *k = sfield(g, sel, "key", path);
    if (g->rc) return NULL;
    if (!n || !*n || !k || !*k) {
        gfail(g, path, "a Secret reference needs name and key");
        return NULL;
    }
    if (!g->o || !g->o->secret) {
        gfail(g, path, "references Secret %s, but no Secret reader is configured", n);
        return NULL;
    }
    char *val = NULL;
    im_err_t e;
    im_err_clear(&e);
    if (g->o->secret(g->o->secret_ctx, g->ns, n, k, &val, &e) != IM_OK || !val) {
        char m[600];
        snprintf(m, sizeof m, "Secret %s key %s: %s", n, k, e.msg[0] ? e.msg : "cannot be read");
        gfail(g, path, "%s", m);
        im_free(val);
        return NULL;
    }
    return val;
}

/* ---- Relabel rules ---- */

typedef struct rule {
    const char *src[2];
    size_t nsrc;
    const char *sep, *target, *regex, *replacement, *action;
} rule_t;

static void put_rule(gen_t *g, const char *ind, const rule_t *r)
{
    const char *lead = "- ";
    if (r->nsrc) {
        putf(g, "%s%ssource_labels: [", ind, lead);
        for (size_t i = 0; i < r->nsrc; i++) {
            if (i) put(g, ", ");
            putq(g, r->src[i]);
        }
        put(g, "]\n");
        lead = "  ";
    }
#define FIELD(f, v)                                                                                \
    if (v) {                                                                                       \
        putf(g, "%s%s" f ": ", ind, lead);                                                         \
        putq(g, v);                                                                                \
        put(g, "\n");                                                                              \
        lead = "  ";                                                                               \
    }
    FIELD("separator", r->sep)
    FIELD("target_label", r->target)
    FIELD("regex", r->regex)
    FIELD("replacement", r->replacement)
    FIELD("action", r->action)
#undef FIELD
}

static void rule1(gen_t *g, const char *src, const char *target, const char *regex,
                  const char *repl, const char *action)
{
    rule_t r = {{src, NULL}, src ? 1 : 0, NULL, target, regex, repl, action};
    put_rule(g, "    ", &r);
}

/* The user's RelabelConfig list (CRD field names) as relabel_configs items. */
static im_rc user_rules(gen_t *g, json_t *arr, const char *path)
{
    static const char *const keys[] = {"sourceLabels", "separator",   "targetLabel", "regex",
                                       "modulus",      "replacement", "action",      NULL};
    if (!arr) return IM_OK;
    if (!json_is_array(arr)) return gfail(g, path, "must be a list");
    size_t i;
    json_t *r;
    json_array_foreach(arr, i, r)
    {
        char p[256];
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        if (check_keys(g, r, p, keys)) return g->rc;
        const char *lead = "- ";
        json_t *sl = json_object_get(r, "sourceLabels");
        if (sl && !json_is_null(sl)) {
            if (!json_is_array(sl)) return gfail(g, p, "sourceLabels must be a list");
            putf(g, "    %ssource_labels: [", lead);
            size_t k;
            json_t *s;
            json_array_foreach(sl, k, s)
            {
                if (!json_is_string(s))
                    return gfail(g, p, "sourceLabels must be a list of strings");
                if (k) put(g, ", ");
                putq(g, json_string_value(s));
            }
            put(g, "]\n");
            lead = "  ";
        }
        static const char *const sf[][2] = {{"separator", "separator"},
                                            {"targetLabel", "target_label"},
                                            {"regex", "regex"},
                                            {"replacement", "replacement"}};
        for (size_t k = 0; k < IM_ARRAY_LEN(sf); k++) {
            const char *v = sfield(g, r, sf[k][0], p);
            if (g->rc) return g->rc;
            if (!v) continue;
            putf(g, "    %s%s: ", lead, sf[k][1]);
            putq(g, v);
            put(g, "\n");
            lead = "  ";
        }
        long long mod = ifield(g, r, "modulus", p);
        if (mod >= 0) {
            putf(g, "    %smodulus: %lld\n", lead, mod);
            lead = "  ";
        }
        const char *a = sfield(g, r, "action", p);
        if (a) {
            char low[32];
            size_t n = 0;
            for (; a[n] && n + 1 < sizeof low; n++) low[n] = (char)tolower((unsigned char)a[n]);
            low[n] = 0;
            putf(g, "    %saction: ", lead);
            putq(g, low);
            put(g, "\n");
            lead = "  ";
        }
        if (!strcmp(lead, "- ")) put(g, "    - {}\n");
    }
    return g->rc;
}

/* keep/drop rules for a LabelSelector on the service's or the pod's labels. */
static im_rc selector_rules(gen_t *g, json_t *sel, const char *meta)
{
    static const char *const keys[] = {"matchLabels", "matchExpressions", NULL};
    static const char *const ekeys[] = {"key", "operator", "values", NULL};
    if (!sel || json_is_null(sel)) return IM_OK;
    if (check_keys(g, sel, "spec.selector", keys)) return g->rc;
    json_t *ml = json_object_get(sel, "matchLabels");
    if (ml && !json_is_null(ml)) {
        if (!json_is_object(ml)) return gfail(g, "spec.selector.matchLabels", "must be a map");
        /* Sorted by key, as the operator iterates Go maps. */
        size_t n = json_object_size(ml), k = 0;
        const char **names = im_calloc(n ? n : 1, sizeof *names);
        const char *key;
        json_t *v;
        json_object_foreach(ml, key, v) names[k++] = key;
        for (size_t a = 1; a < n; a++)
            for (size_t b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0; b--) {
                const char *t = names[b];
                names[b] = names[b - 1];
                names[b - 1] = t;
            }
        for (k = 0; k < n && !g->rc; k++) {
            json_t *val = json_object_get(ml, names[k]);
            if (!json_is_string(val)) {
                gfail(g, "spec.selector.matchLabels", "value of %s must be a string", names[k]);
                break;
            }
            char san[256], l1[320], l2[320], re[1024];
            sanitize(names[k], san, sizeof san);
            snprintf(l1, sizeof l1, "%s_label_%s", meta, san);
            snprintf(l2, sizeof l2, "%s_labelpresent_%s", meta, san);
            snprintf(re, sizeof re, "(%s);true", json_string_value(val));
            rule_t r = {{l1, l2}, 2, NULL, NULL, re, NULL, "keep"};
            put_rule(g, "    ", &r);
        }
        im_free(names);
        if (g->rc) return g->rc;
    }
    json_t *me = json_object_get(sel, "matchExpressions");
    if (!me || json_is_null(me)) return IM_OK;
    if (!json_is_array(me)) return gfail(g, "spec.selector.matchExpressions", "must be a list");
    size_t i;
    json_t *e;
    json_array_foreach(me, i, e)
    {
        char p[96];
        snprintf(p, sizeof p, "spec.selector.matchExpressions[%zu]", i);
        if (check_keys(g, e, p, ekeys)) return g->rc;
        const char *key = sfield(g, e, "key", p), *op = sfield(g, e, "operator", p);
        if (g->rc) return g->rc;
        if (!key || !op) return gfail(g, p, "needs key and operator");
        char san[256], l1[320], l2[320], re[2048];
        sanitize(key, san, sizeof san);
        snprintf(l1, sizeof l1, "%s_label_%s", meta, san);
        snprintf(l2, sizeof l2, "%s_labelpresent_%s", meta, san);
        if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
            json_t *vals = json_object_get(e, "values");
            if (!json_is_array(vals)) return gfail(g, p, "%s needs values", op);
            size_t len = 0, k;
            json_t *v;
            re[len++] = '(';
            json_array_foreach(vals, k, v)
            {
                if (!json_is_string(v)) return gfail(g, p, "values must be strings");
                int w =
                    snprintf(re + len, sizeof re - len, "%s%s", k ? "|" : "", json_string_value(v));
                if (w < 0 || (size_t)w >= sizeof re - len - 8)
                    return gfail(g, p, "values too long");
                len += (size_t)w;
            }
            snprintf(re + len, sizeof re - len, ");true");
            rule_t r = {{l1, l2}, 2, NULL, NULL, re, NULL, op[0] == 'I' ? "keep" : "drop"};
            put_rule(g, "    ", &r);
        } else if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
            rule_t r = {{l2, NULL}, 1, NULL, NULL, "true", NULL, op[0] == 'E' ? "keep" : "drop"};
            put_rule(g, "    ", &r);
        } else {
            return gfail(g, p, "unknown operator %s (In, NotIn, Exists, DoesNotExist)", op);
        }
    }
    return g->rc;
}

/* ---- One endpoint ---- */

static void put_kv_dur(gen_t *g, json_t *ep, const char *key, const char *yaml_key)
{
    const char *v = sfield(g, ep, key, "endpoint");
    if (v && *v) {
        putf(g, "  %s: ", yaml_key);
        putq(g, v);
        put(g, "\n");
    }
}

static im_rc endpoint_auth(gen_t *g, json_t *ep, const char *p)
{
    static const char *const bkeys[] = {"username", "password", NULL};
    static const char *const akeys[] = {"type", "credentials", NULL};
    static const char *const tkeys[] = {"caFile", "certFile",  "keyFile",    "ca",
                                        "cert",   "keySecret", "serverName", "insecureSkipVerify",
                                        NULL};
    char f[128];
    json_t *ba = json_object_get(ep, "basicAuth");
    if (ba && !json_is_null(ba)) {
        snprintf(f, sizeof f, "%s.basicAuth", p);
        if (check_keys(g, ba, f, bkeys)) return g->rc;
        char *u = secret(g, json_object_get(ba, "username"), "basicAuth.username");
        char *pw = u ? secret(g, json_object_get(ba, "password"), "basicAuth.password") : NULL;
        if (u && pw) {
            put(g, "  basic_auth:\n    username: ");
            putq(g, u);
            put(g, "\n    password: ");
            putq(g, pw);
            put(g, "\n");
        }
        im_free(u);
        im_free(pw);
        if (g->rc) return g->rc;
    }
    json_t *bts = json_object_get(ep, "bearerTokenSecret");
    const char *btf = sfield(g, ep, "bearerTokenFile", p);
    json_t *au = json_object_get(ep, "authorization");
    if (au && !json_is_null(au)) {
        snprintf(f, sizeof f, "%s.authorization", p);
        if (check_keys(g, au, f, akeys)) return g->rc;
        const char *type = sfield(g, au, "type", f);
        char *cred = secret(g, json_object_get(au, "credentials"), "authorization.credentials");
        if (!cred) return g->rc;
        put(g, "  authorization:\n    type: ");
        putq(g, type && *type ? type : "Bearer");
        put(g, "\n    credentials: ");
        putq(g, cred);
        put(g, "\n");
        im_free(cred);
    } else if (bts && !json_is_null(bts) && json_is_object(bts) &&
               json_string_length(json_object_get(bts, "name")) > 0) {
        char *tok = secret(g, bts, "bearerTokenSecret");
        if (!tok) return g->rc;
        put(g, "  authorization:\n    type: \"Bearer\"\n    credentials: ");
        putq(g, tok);
        put(g, "\n");
        im_free(tok);
    } else if (btf && *btf) {
        put(g, "  bearer_token_file: ");
        putq(g, btf);
        put(g, "\n");
    }
    json_t *tls = json_object_get(ep, "tlsConfig");
    if (tls && !json_is_null(tls)) {
        snprintf(f, sizeof f, "%s.tlsConfig", p);
        if (check_keys(g, tls, f, tkeys)) return g->rc;
        put(g, "  tls_config:\n");
        static const char *const m[][2] = {{"caFile", "ca_file"},
                                           {"certFile", "cert_file"},
                                           {"keyFile", "key_file"},
                                           {"serverName", "server_name"}};
        for (size_t k = 0; k < IM_ARRAY_LEN(m); k++) {
            const char *v = sfield(g, tls, m[k][0], f);
            if (v && *v) {
                putf(g, "    %s: ", m[k][1]);
                putq(g, v);
                put(g, "\n");
            }
        }
        /* ca and cert are SecretOrConfigMap, keySecret a SecretKeySelector: the
         * PEM text goes inline (tls_config ca, cert, key) */
        static const char *const inl[][2] = {{"ca", "ca"}, {"cert", "cert"}, {"keySecret", "key"}};
        for (size_t k = 0; k < IM_ARRAY_LEN(inl); k++) {
            json_t *ref = json_object_get(tls, inl[k][0]);
            if (!ref || json_is_null(ref)) continue;
            char rp[160];
            snprintf(rp, sizeof rp, "%s.%s", f, inl[k][0]);
            if (k < 2) {
                static const char *const sc[] = {"secret", "configMap", NULL};
                if (check_keys(g, ref, rp, sc)) return g->rc;
                json_t *cm = json_object_get(ref, "configMap");
                if (cm && !json_is_null(cm))
                    return gfail(g, rp, "ConfigMaps are not read (use a Secret or %sFile)",
                                 inl[k][0]);
                ref = json_object_get(ref, "secret");
                if (!ref || json_is_null(ref)) continue;
                snprintf(rp, sizeof rp, "%s.%s.secret", f, inl[k][0]);
            }
            char *pem = secret(g, ref, rp);
            if (!pem) return g->rc;
            putf(g, "    %s: ", inl[k][1]);
            putq(g, pem);
            put(g, "\n");
            im_free(pem);
        }
        int ins = bfield(g, tls, "insecureSkipVerify", f);
        putf(g, "    insecure_skip_verify: %s\n", ins == 1 ? "true" : "false");
    }
    return g->rc;
}

static im_rc endpoint(gen_t *g, json_t *spec, json_t *ep, size_t idx)
{
    static const char *const ekeys[] = {"port",
                                        "portNumber",
                                        "targetPort",
                                        "path",
                                        "scheme",
                                        "params",
                                        "interval",
                                        "scrapeTimeout",
                                        "honorLabels",
                                        "honorTimestamps",
                                        "proxyUrl",
                                        "followRedirects",
                                        "enableHttp2",
                                        "filterRunning",
                                        "basicAuth",
                                        "bearerTokenFile",
                                        "bearerTokenSecret",
                                        "authorization",
                                        "tlsConfig",
                                        "relabelings",
                                        "metricRelabelings",
                                        NULL};
    bool svc = g->kind == DISCOVERY_SERVICE_MONITOR;
    char p[64];
    snprintf(p, sizeof p, "spec.%s[%zu]", svc ? "endpoints" : "podMetricsEndpoints", idx);
    if (check_keys(g, ep, p, ekeys)) return g->rc;

    char jn[600];
    snprintf(jn, sizeof jn, "%s/%s/%s/%zu", svc ? "serviceMonitor" : "podMonitor", g->ns, g->name,
             idx);
    put(g, "- job_name: ");
    putq(g, jn);
    put(g, "\n");
    int hl = bfield(g, ep, "honorLabels", p);
    putf(g, "  honor_labels: %s\n", hl == 1 ? "true" : "false");
    int ht = bfield(g, ep, "honorTimestamps", p);
    if (ht >= 0) putf(g, "  honor_timestamps: %s\n", ht ? "true" : "false");
    put_kv_dur(g, ep, "interval", "scrape_interval");
    put_kv_dur(g, ep, "scrapeTimeout", "scrape_timeout");
    put_kv_dur(g, ep, "path", "metrics_path");
    put_kv_dur(g, ep, "proxyUrl", "proxy_url");
    int fr = bfield(g, ep, "followRedirects", p);
    if (fr >= 0) putf(g, "  follow_redirects: %s\n", fr ? "true" : "false");
    int h2 = bfield(g, ep, "enableHttp2", p);
    if (h2 >= 0) putf(g, "  enable_http2: %s\n", h2 ? "true" : "false");
    json_t *params = json_object_get(ep, "params");
    if (params && !json_is_null(params)) {
        if (!json_is_object(params)) return gfail(g, p, "params must be a map of lists");
        put(g, "  params:\n");
        const char *k;
        json_t *vals;
        json_object_foreach(params, k, vals)
        {
            if (!json_is_array(vals)) return gfail(g, p, "params.%s must be a list", k);
            put(g, "    ");
            putq(g, k);
            put(g, ": [");
            size_t i;
            json_t *v;
            json_array_foreach(vals, i, v)
            {
                if (!json_is_string(v)) return gfail(g, p, "params.%s must be strings", k);
                if (i) put(g, ", ");
                putq(g, json_string_value(v));
            }
            put(g, "]\n");
        }
    }
    const char *scheme = sfield(g, ep, "scheme", p);
    if (scheme && *scheme) {
        char low[16];
        size_t n = 0;
        for (; scheme[n] && n + 1 < sizeof low; n++)
            low[n] = (char)tolower((unsigned char)scheme[n]);
        low[n] = 0;
        put(g, "  scheme: ");
        putq(g, low);
        put(g, "\n");
    }
    static const char *const lim[][2] = {{"sampleLimit", "sample_limit"},
                                         {"targetLimit", "target_limit"},
                                         {"labelLimit", "label_limit"},
                                         {"labelNameLengthLimit", "label_name_length_limit"},
                                         {"labelValueLengthLimit", "label_value_length_limit"}};
    for (size_t k = 0; k < IM_ARRAY_LEN(lim); k++) {
        long long v = ifield(g, spec, lim[k][0], "spec");
        if (v >= 0) putf(g, "  %s: %lld\n", lim[k][1], v);
    }
    if (endpoint_auth(g, ep, p)) return g->rc;

    /* Discovery. */
    put(g, "  kubernetes_sd_configs:\n");
    putf(g, "    - role: %s\n", svc ? "endpoints" : "pod");
    json_t *nss = json_object_get(spec, "namespaceSelector");
    int any = bfield(g, nss, "any", "spec.namespaceSelector");
    json_t *names = nss ? json_object_get(nss, "matchNames") : NULL;
    if (any != 1) {
        put(g, "      namespaces:\n        names:\n");
        if (names && json_is_array(names) && json_array_size(names) > 0) {
            size_t i;
            json_t *n;
            json_array_foreach(names, i, n)
            {
                if (!json_is_string(n))
                    return gfail(g, "spec.namespaceSelector.matchNames", "must be strings");
                put(g, "          - ");
                putq(g, json_string_value(n));
                put(g, "\n");
            }
        } else {
            put(g, "          - ");
            putq(g, g->ns);
            put(g, "\n");
        }
    }
    json_t *am = json_object_get(spec, "attachMetadata");
    if (bfield(g, am, "node", "spec.attachMetadata") == 1)
        put(g, "      attach_metadata:\n        node: true\n");
    if (g->o && g->o->sd_extra_yaml) put(g, g->o->sd_extra_yaml);

    /* Relabelling, in the operator's order. */
    const char *meta = svc ? "__meta_kubernetes_service" : "__meta_kubernetes_pod";
    put(g, "  relabel_configs:\n");
    rule1(g, "job", "__tmp_prometheus_job_name", NULL, NULL, NULL);
    int running = bfield(g, ep, "filterRunning", p);
    if (!svc && running != 0)
        rule1(g, "__meta_kubernetes_pod_phase", NULL, "(Failed|Succeeded)", NULL, "drop");
    if (selector_rules(g, json_object_get(spec, "selector"), meta)) return g->rc;

    const char *port = sfield(g, ep, "port", p);
    long long portnum = ifield(g, ep, "portNumber", p);
    json_t *tp = json_object_get(ep, "targetPort");
    char tpbuf[32] = "";
    const char *tps = NULL;
    if (tp && json_is_string(tp))
        tps = json_string_value(tp);
    else if (tp && json_is_integer(tp)) {
        snprintf(tpbuf, sizeof tpbuf, "%lld", (long long)json_integer_value(tp));
        tps = tpbuf;
    } else if (tp && !json_is_null(tp))
        return gfail(g, p, "targetPort must be a name or a number");
    if (port && *port) {
        rule1(g,
              svc ? "__meta_kubernetes_endpoint_port_name"
                  : "__meta_kubernetes_pod_container_port_name",
              NULL, port, NULL, "keep");
    } else if (!svc && portnum >= 0) {
        char n[32];
        snprintf(n, sizeof n, "%lld", portnum);
        rule1(g, "__meta_kubernetes_pod_container_port_number", NULL, n, NULL, "keep");
    } else if (tps) {
        rule1(g,
              tpbuf[0] ? "__meta_kubernetes_pod_container_port_number"
                       : "__meta_kubernetes_pod_container_port_name",
              NULL, tps, NULL, "keep");
    }
    if (svc) {
        rule_t nr = {{"__meta_kubernetes_endpoint_address_target_kind",
                      "__meta_kubernetes_endpoint_address_target_name"},
                     2,
                     ";",
                     "node",
                     "Node;(.*)",
                     "${1}",
                     NULL};
        put_rule(g, "    ", &nr);
        rule_t pr = nr;
        pr.target = "pod";
        pr.regex = "Pod;(.*)";
        put_rule(g, "    ", &pr);
        rule1(g, "__meta_kubernetes_namespace", "namespace", NULL, NULL, NULL);
        rule1(g, "__meta_kubernetes_service_name", "service", NULL, NULL, NULL);
        rule1(g, "__meta_kubernetes_pod_name", "pod", NULL, NULL, NULL);
        rule1(g, "__meta_kubernetes_pod_container_name", "container", NULL, NULL, NULL);
        if (running != 0)
            rule1(g, "__meta_kubernetes_pod_phase", NULL, "(Failed|Succeeded)", NULL, "drop");
    } else {
        rule1(g, "__meta_kubernetes_namespace", "namespace", NULL, NULL, NULL);
        rule1(g, "__meta_kubernetes_pod_container_name", "container", NULL, NULL, NULL);
        rule1(g, "__meta_kubernetes_pod_name", "pod", NULL, NULL, NULL);
    }
    /* targetLabels (service labels), then podTargetLabels. */
    for (int pass = svc ? 0 : 1; pass < 2; pass++) {
        const char *field = pass ? "podTargetLabels" : "targetLabels";
        json_t *tl = json_object_get(spec, field);
        if (!tl || json_is_null(tl)) continue;
        if (!json_is_array(tl)) return gfail(g, field, "must be a list");
        size_t i;
        json_t *n;
        json_array_foreach(tl, i, n)
        {
            if (!json_is_string(n)) return gfail(g, field, "must be a list of strings");
            char san[256], src[320];
            sanitize(json_string_value(n), san, sizeof san);
            snprintf(src, sizeof src, "%s_label_%s",
                     pass ? "__meta_kubernetes_pod" : "__meta_kubernetes_service", san);
            rule1(g, src, san, "(.+)", "${1}", NULL);
        }
    }
    const char *jl = sfield(g, spec, "jobLabel", "spec");
    if (svc) {
        rule1(g, "__meta_kubernetes_service_name", "job", NULL, "${1}", NULL);
    } else {
        char def[600];
        snprintf(def, sizeof def, "%s/%s", g->ns, g->name);
        rule1(g, NULL, "job", NULL, def, NULL);
    }
    if (jl && *jl) {
        char san[256], src[320];
        sanitize(jl, san, sizeof san);
        snprintf(src, sizeof src, "%s_label_%s", meta, san);
        rule1(g, src, "job", "(.+)", "${1}", NULL);
    }
    if (port && *port)
        rule1(g, NULL, "endpoint", NULL, port, NULL);
    else if (tps)
        rule1(g, NULL, "endpoint", NULL, tps, NULL);
    char f[96];
    snprintf(f, sizeof f, "%s.relabelings", p);
    if (user_rules(g, json_object_get(ep, "relabelings"), f)) return g->rc;
    json_t *mr = json_object_get(ep, "metricRelabelings");
    if (mr && !json_is_null(mr) && json_array_size(mr) > 0) {
        put(g, "  metric_relabel_configs:\n");
        snprintf(f, sizeof f, "%s.metricRelabelings", p);
        if (user_rules(g, mr, f)) return g->rc;
    }
    return g->rc;
}

im_rc discovery_monitor_scrape_configs(const char *json, size_t len,
                                       const discovery_monitor_opts_t *opts, im_buf_t *out,
                                       discovery_monitor_kind_t *kind_out, im_err_t *err)
{
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return im_err_setpos(err, IM_EPARSE, je.line, je.column, "monitor object: %s", je.text);
    gen_t g = {.b = out, .o = opts, .err = err, .kind_name = "monitor"};
    static const char *const skeys_sm[] = {
        "jobLabel",   "targetLabels",         "podTargetLabels",       "endpoints",
        "selector",   "namespaceSelector",    "sampleLimit",           "targetLimit",
        "labelLimit", "labelNameLengthLimit", "labelValueLengthLimit", "attachMetadata",
        NULL};
    static const char *const skeys_pm[] = {"jobLabel",
                                           "podTargetLabels",
                                           "podMetricsEndpoints",
                                           "selector",
                                           "namespaceSelector",
                                           "sampleLimit",
                                           "targetLimit",
                                           "labelLimit",
                                           "labelNameLengthLimit",
                                           "labelValueLengthLimit",
                                           "attachMetadata",
                                           NULL};
    if (!json_is_object(root)) {
        gfail(&g, "object", "must be a JSON object");
        goto done;
    }
    const char *kind = sfield(&g, root, "kind", "object");
    if (kind && !strcmp(kind, "ServiceMonitor")) {
        g.kind = DISCOVERY_SERVICE_MONITOR;
        g.kind_name = "ServiceMonitor";
    } else if (kind && !strcmp(kind, "PodMonitor")) {
        g.kind = DISCOVERY_POD_MONITOR;
        g.kind_name = "PodMonitor";
    } else {
        gfail(&g, "kind", "must be ServiceMonitor or PodMonitor, not \"%s\"", kind ? kind : "");
        goto done;
    }
    if (kind_out) *kind_out = g.kind;
    json_t *md = json_object_get(root, "metadata");
    g.ns = sfield(&g, md, "namespace", "metadata");
    g.name = sfield(&g, md, "name", "metadata");
    if (g.rc) goto done;
    if (!g.ns || !*g.ns || !g.name || !*g.name) {
        gfail(&g, "metadata", "needs name and namespace");
        goto done;
    }
    json_t *spec = json_object_get(root, "spec");
    if (!json_is_object(spec)) {
        gfail(&g, "spec", "must be an object");
        goto done;
    }
    bool svc = g.kind == DISCOVERY_SERVICE_MONITOR;
    if (check_keys(&g, spec, "spec", svc ? skeys_sm : skeys_pm)) goto done;
    json_t *am = json_object_get(spec, "attachMetadata");
    if (check_keys(&g, am, "spec.attachMetadata", (const char *const[]){"node", NULL})) goto done;
    json_t *nss = json_object_get(spec, "namespaceSelector");
    if (check_keys(&g, nss, "spec.namespaceSelector",
                   (const char *const[]){"any", "matchNames", NULL}))
        goto done;
    json_t *eps = json_object_get(spec, svc ? "endpoints" : "podMetricsEndpoints");
    if (eps && !json_is_null(eps) && !json_is_array(eps)) {
        gfail(&g, svc ? "spec.endpoints" : "spec.podMetricsEndpoints", "must be a list");
        goto done;
    }
    /* The selector is checked even when there are no endpoints to use it. */
    im_buf_t scratch;
    im_buf_init(&scratch, 0);
    g.b = &scratch;
    (void)selector_rules(&g, json_object_get(spec, "selector"), "x");
    im_buf_free(&scratch);
    g.b = out;
    if (g.rc) goto done;
    size_t i;
    json_t *ep;
    json_array_foreach(eps, i, ep)
    {
        if (endpoint(&g, spec, ep, i)) break;
    }
done:
    json_decref(root);
    return g.rc;
}
