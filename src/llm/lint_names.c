/* lint_names.c — the known-name table of `infermon lint`: what the sources
 * expose (an exposition scraped once or read from a file, a Prometheus server's
 * name/series/metadata/config APIs, recording rules, or the catalog for a vLLM
 * version), with types, label names and values, bucket bounds and scrape
 * intervals. */
#include "util/base.h"

#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "config/http_client.h"
#include "config/yaml.h"

#include "expo/expo.h"
#include "llm/lint_int.h"
#include "util/buf.h"
#include "util/fmtfloat.h"
#include "util/hash.h"
#include "util/timeutil.h"

#define HTTP_MAX_BYTES (64u << 20)
#define MAX_NAMES      (1u << 20)

/* ---- Table ---- */

lint_names_t *lint_names_new(void)
{
    lint_names_t *n = im_calloc(1, sizeof(*n));
    n->cap = 1024;
    n->slots = im_calloc(n->cap, sizeof(*n->slots));
    return n;
}

static void lname_free(lname_t *e)
{
    for (uint32_t i = 0; i < e->nlabels; i++) {
        for (uint32_t k = 0; k < e->labels[i].nvalues; k++) im_free(e->labels[i].values[k]);
        im_free(e->labels[i].values);
        im_free(e->labels[i].name);
    }
    im_free(e->labels);
    im_free(e->le);
    im_free(e->record_expr);
    im_free(e->name);
    im_free(e);
}

void lint_names_free(lint_names_t *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->cap; i++)
        if (n->slots[i]) lname_free(n->slots[i]);
    im_free(n->slots);
    for (size_t i = 0; i < n->nsources; i++) im_free(n->source_names[i]);
    im_free(n->source_names);
    im_free(n);
}

lname_t *lint__names_get(const lint_names_t *n, const char *name, size_t len)
{
    uint64_t h = im_hash(name, len);
    for (size_t i = 0; i < n->cap; i++) {
        lname_t *e = n->slots[(h + i) & (n->cap - 1)];
        if (!e) return NULL;
        if (e->len == len && memcmp(e->name, name, len) == 0) return e;
    }
    return NULL;
}

static void grow(lint_names_t *n)
{
    size_t ncap = n->cap * 2;
    lname_t **ns = im_calloc(ncap, sizeof(*ns));
    for (size_t i = 0; i < n->cap; i++) {
        lname_t *e = n->slots[i];
        if (!e) continue;
        uint64_t h = im_hash(e->name, e->len);
        size_t k = h & (ncap - 1);
        while (ns[k]) k = (k + 1) & (ncap - 1);
        ns[k] = e;
    }
    im_free(n->slots);
    n->slots = ns;
    n->cap = ncap;
}

lname_t *lint__names_put(lint_names_t *n, const char *name, size_t len)
{
    lname_t *e = lint__names_get(n, name, len);
    if (e) return e;
    if (n->count >= MAX_NAMES) return NULL;
    if ((n->count + 1) * 2 > n->cap) grow(n);
    e = im_calloc(1, sizeof(*e));
    e->name = im_strndup(name, len);
    e->len = len;
    uint64_t h = im_hash(name, len);
    size_t k = h & (n->cap - 1);
    while (n->slots[k]) k = (k + 1) & (n->cap - 1);
    n->slots[k] = e;
    n->count++;
    return e;
}

lname_label_t *lint__lname_label(lname_t *e, const char *name, size_t len, bool create)
{
    for (uint32_t i = 0; i < e->nlabels; i++)
        if (strlen(e->labels[i].name) == len && memcmp(e->labels[i].name, name, len) == 0)
            return &e->labels[i];
    if (!create) return NULL;
    if (e->nlabels == e->lcap) {
        e->lcap = e->lcap ? e->lcap * 2 : 4;
        e->labels = im_realloc(e->labels, e->lcap * sizeof(*e->labels));
    }
    lname_label_t *l = &e->labels[e->nlabels++];
    memset(l, 0, sizeof(*l));
    l->name = im_strndup(name, len);
    return l;
}

void lint__lname_add_value(lname_label_t *l, const char *v, size_t len)
{
    l->values_known = true;
    for (uint32_t i = 0; i < l->nvalues; i++)
        if (strlen(l->values[i]) == len && memcmp(l->values[i], v, len) == 0) return;
    if (l->nvalues >= LINT_MAX_VALUES_PER_LABEL) {
        l->overflow = true;
        return;
    }
    if (l->nvalues == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->values = im_realloc(l->values, l->cap * sizeof(*l->values));
    }
    l->values[l->nvalues++] = im_strndup(v, len);
}

void lint__lname_add_le(lname_t *e, double le)
{
    if (!isfinite(le)) return;
    uint32_t i = 0;
    while (i < e->nle && e->le[i] < le) i++;
    if (i < e->nle && e->le[i] == le) return;
    if (e->nle >= 512) return;
    if (e->nle == e->lecap) {
        e->lecap = e->lecap ? e->lecap * 2 : 16;
        e->le = im_realloc(e->le, e->lecap * sizeof(*e->le));
    }
    memmove(e->le + i + 1, e->le + i, (e->nle - i) * sizeof(*e->le));
    e->le[i] = le;
    e->nle++;
}

llm_suffix_t lint__suffix_from(const char *name, size_t len, size_t family_len)
{
    if (family_len >= len) return LLM_SUFFIX_NONE;
    const char *s = name + family_len;
    size_t n = len - family_len;
#define SUF(lit, v)                                                                                \
    if (n == sizeof(lit) - 1 && memcmp(s, lit, n) == 0) return v
    SUF("_total", LLM_SUFFIX_TOTAL);
    SUF("_bucket", LLM_SUFFIX_BUCKET);
    SUF("_sum", LLM_SUFFIX_SUM);
    SUF("_count", LLM_SUFFIX_COUNT);
    SUF("_created", LLM_SUFFIX_CREATED);
#undef SUF
    return LLM_SUFFIX_NONE;
}

static int add_source(lint_names_t *n, const char *name)
{
    n->source_names = im_realloc(n->source_names, (n->nsources + 1) * sizeof(char *));
    n->source_names[n->nsources] = im_strdup(name);
    return (int)n->nsources++;
}

static void note_exporter(lint_names_t *n, const char *name, size_t len)
{
    const llm_family_t *f = llm_catalog_lookup(llm_catalog_get(), name, len, NULL, NULL);
    llm_exporter_t e;
    if (f)
        n->exporters_seen[f->exporter] = true;
    else if (llm_exporter_by_prefix(name, len, &e))
        n->exporters_seen[e] = true;
}

/* ---- Expositions ---- */

static llm_mtype_t mtype_from_expo(expo_type_t t)
{
    switch (t) {
    case EXPO_TYPE_COUNTER: return LLM_MTYPE_COUNTER;
    case EXPO_TYPE_GAUGE: return LLM_MTYPE_GAUGE;
    case EXPO_TYPE_HISTOGRAM:
    case EXPO_TYPE_GAUGEHISTOGRAM: return LLM_MTYPE_HISTOGRAM;
    case EXPO_TYPE_SUMMARY: return LLM_MTYPE_SUMMARY;
    case EXPO_TYPE_INFO: return LLM_MTYPE_INFO;
    default: return LLM_MTYPE_UNKNOWN;
    }
}

typedef struct expo_ctx {
    lint_names_t *n;
    uint32_t bit;
} expo_ctx_t;

static int on_sample(void *user, const expo_entry_t *e)
{
    expo_ctx_t *x = user;
    lname_t *ent = lint__names_put(x->n, e->name.p, e->name.len);
    if (!ent) return 0;
    ent->sources |= x->bit;
    if (e->type != EXPO_TYPE_UNKNOWN) {
        ent->type = mtype_from_expo(e->type);
        ent->suffix = lint__suffix_from(e->name.p, e->name.len, e->family_len);
    }
    for (uint32_t i = 0; i < e->nlabels; i++) {
        const expo_label_t *l = &e->labels[i];
        if (l->name.len == 2 && memcmp(l->name.p, "le", 2) == 0) {
            double v;
            if (im_parse_float(l->value.p, l->value.len, &v)) lint__lname_add_le(ent, v);
        }
        lname_label_t *ll = lint__lname_label(ent, l->name.p, l->name.len, true);
        lint__lname_add_value(ll, l->value.p, l->value.len);
    }
    note_exporter(x->n, e->name.p, e->name.len);
    return 0;
}

im_rc lint_names_add_exposition(lint_names_t *n, const char *buf, size_t len, const char *source,
                                im_err_t *err)
{
    int idx = add_source(n, source);
    expo_ctx_t x = {n, idx < 32 ? (1u << idx) : 0};
    expo_callbacks_t cb = {on_sample, NULL};
    expo_format_t f = EXPO_TEXT_004;
    if (len >= 5 && memmem(buf, len, "# EOF", 5)) f = EXPO_OPENMETRICS_1;
    im_rc rc = expo_parse(buf, len, f, &cb, &x, NULL, err);
    if (rc != IM_OK) {
        if (err) im_err_prefix(err, "%s", source);
        return rc;
    }
    n->live = true;
    if (n->kind == LINT_SOURCE_CATALOG) n->kind = LINT_SOURCE_EXPOSITION;
    return IM_OK;
}

/* ---- HTTP ---- */

static size_t on_body(char *p, size_t size, size_t nmemb, void *user)
{
    im_buf_t *b = user;
    size_t n = size * nmemb;
    if (im_buf_append(b, p, n) != IM_OK) return 0;
    return n;
}

static im_rc http_get(const char *url, im_buf_t *body, char *ctype, size_t ctype_cap, im_err_t *err)
{
    CURL *c = NULL;
    char ebuf[CURL_ERROR_SIZE] = "";
    cfg_http_lists_t l = {curl_slist_append(NULL, "Accept: text/plain;version=0.0.4;q=1,*/*;q=0.1"),
                          NULL};
    /* Prometheus' HTTP client defaults (config/http_client.h): redirects
     * followed, TLS 1.2 at least, no proxy unless configured. */
    cfg_http_client_t hc;
    cfg_http_client_init(&hc);
    im_rc arc = cfg_http_client_handle(&hc, &c, url, on_body, body, ebuf, &l, err);
    cfg_http_client_free(&hc);
    if (arc != IM_OK) {
        cfg_http_lists_free(&l);
        curl_easy_cleanup(c);
        return arc;
    }
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 5L);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(c, CURLOPT_USERAGENT, "infermon-lint");
    CURLcode cc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (ctype && ctype_cap) {
        char *ct = NULL;
        curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
        snprintf(ctype, ctype_cap, "%s", ct ? ct : "");
    }
    cfg_http_lists_free(&l);
    curl_easy_cleanup(c);
    if (cc != CURLE_OK)
        return im_err_set(err, cc == CURLE_WRITE_ERROR ? IM_ELIMIT : IM_EIO, "GET %s: %s", url,
                          ebuf[0] ? ebuf : curl_easy_strerror(cc));
    if (status < 200 || status > 299)
        return im_err_set(err, IM_EIO, "GET %s: HTTP status %ld", url, status);
    return IM_OK;
}

static bool has_scheme(const char *s)
{
    return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0;
}

im_rc lint_names_add_target(lint_names_t *n, const char *url, im_err_t *err)
{
    im_buf_t b;
    im_buf_init(&b, HTTP_MAX_BYTES);
    im_rc rc;
    if (has_scheme(url)) {
        rc = http_get(url, &b, NULL, 0, err);
    } else {
        FILE *f = fopen(url, "rb");
        if (!f) {
            im_buf_free(&b);
            return im_err_set(err, IM_EIO, "cannot open %s", url);
        }
        char tmp[65536];
        size_t r;
        rc = IM_OK;
        while ((r = fread(tmp, 1, sizeof tmp, f)) > 0)
            if ((rc = im_buf_append(&b, tmp, r)) != IM_OK) {
                im_err_set(err, rc, "%s is larger than 64 MiB", url);
                break;
            }
        fclose(f);
    }
    if (rc == IM_OK) rc = lint_names_add_exposition(n, b.data ? b.data : "", b.len, url, err);
    im_buf_free(&b);
    return rc;
}

/* ---- Prometheus ---- */

/* One API answer's `data` through the query backend (query/query.h): the same
 * seam the dashboard's --query.backend-url and the commands to come use. */
static im_rc api_get(query_backend_t *b, query_req_t *r, json_t **data, im_err_t *err)
{
    r->want = QUERY_WANT_JSON;
    query_answer_t a;
    im_rc rc = query_backend_do(b, r, &a, err);
    if (rc == IM_OK) {
        json_error_t je;
        json_t *root = json_loadb(a.json.data ? a.json.data : "", a.json.len, 0, &je);
        json_t *d = json_object_get(root, "data");
        if (d)
            *data = json_incref(d);
        else
            rc = im_err_set(err, IM_EPARSE, "backend %s: an answer without data",
                            query_backend_describe(b));
        json_decref(root);
    }
    query_answer_free(&a);
    return rc;
}

static llm_mtype_t mtype_from_str(const char *s)
{
    if (!s) return LLM_MTYPE_UNKNOWN;
    if (strcmp(s, "counter") == 0) return LLM_MTYPE_COUNTER;
    if (strcmp(s, "gauge") == 0) return LLM_MTYPE_GAUGE;
    if (strcmp(s, "histogram") == 0 || strcmp(s, "gaugehistogram") == 0) return LLM_MTYPE_HISTOGRAM;
    if (strcmp(s, "summary") == 0) return LLM_MTYPE_SUMMARY;
    if (strcmp(s, "info") == 0) return LLM_MTYPE_INFO;
    return LLM_MTYPE_UNKNOWN;
}

typedef struct job_interval {
    char *job;
    int64_t ms;
} job_interval_t;

static int64_t node_duration(const cfg_node_t *map, const char *key)
{
    const cfg_node_t *v = cfg_get(map, key);
    int64_t ms = 0;
    if (v && v->type == CFG_NODE_SCALAR &&
        im_duration_parse(v->str, strlen(v->str), &ms, NULL) == IM_OK)
        return ms;
    return 0;
}

/* Scrape intervals per job from a prometheus.yml tree. */
static size_t config_intervals(const cfg_node_t *root, job_interval_t **out, int64_t *global_ms)
{
    *out = NULL;
    *global_ms = 60000; /* Prometheus' default */
    size_t n = 0;
    int64_t g = node_duration(cfg_get(root, "global"), "scrape_interval");
    if (g > 0) *global_ms = g;
    const cfg_node_t *sc = cfg_get(root, "scrape_configs");
    for (size_t i = 0; sc && sc->type == CFG_NODE_SEQ && i < sc->nkids; i++) {
        const cfg_node_t *job = sc->kids[i];
        const cfg_node_t *name = cfg_get_raw(job, "job_name");
        if (!name || name->type != CFG_NODE_SCALAR) continue;
        int64_t ms = node_duration(job, "scrape_interval");
        *out = im_realloc(*out, (n + 1) * sizeof(**out));
        (*out)[n].job = im_strdup(name->str);
        (*out)[n].ms = ms > 0 ? ms : *global_ms;
        n++;
    }
    return n;
}

im_rc lint_names_load_config(lint_names_t *n, const char *yml, size_t len, im_err_t *err)
{
    cfg_node_t *root = NULL;
    im_err_t perr;
    cfg_yaml_problem_t prob;
    im_err_clear(&perr);
    if (cfg_parse_yaml_ex(yml, len, NULL, &root, &perr, &prob) != IM_OK) {
        if (prob.syntax)
            return im_err_setpos(err, IM_EPARSE, prob.line, prob.col, "not YAML: %s",
                                 prob.problem[0] ? prob.problem : "parse error");
        return im_err_set(err, perr.code, "%s", perr.msg);
    }
    job_interval_t *jobs = NULL;
    int64_t global_ms = 0;
    size_t nj = config_intervals(root, &jobs, &global_ms);
    cfg_node_free(root);
    int64_t best = nj ? 0 : global_ms;
    for (size_t j = 0; j < nj; j++) {
        if (best == 0 || jobs[j].ms < best) best = jobs[j].ms;
        im_free(jobs[j].job);
    }
    im_free(jobs);
    if (best > 0) n->default_interval_ms = best;
    return IM_OK;
}

im_rc lint_names_add_prometheus(lint_names_t *n, const char *base, im_err_t *err)
{
    query_remote_opts_t o = {.url = base,
                             .timeout_ms = 10000,
                             .max_bytes = HTTP_MAX_BYTES,
                             .timeout_flag = "--prometheus.timeout",
                             .max_bytes_flag = "--prometheus.max-bytes",
                             .user_agent = "infermon-lint"};
    cfg_http_client_init(&o.http);
    query_backend_t *b = NULL;
    im_rc rc = query_remote_new(&o, &b, err);
    cfg_http_client_free(&o.http);
    if (rc == IM_OK) rc = lint_names_add_backend(n, b, err);
    query_backend_free(b);
    return rc;
}

im_rc lint_names_add_backend(lint_names_t *n, query_backend_t *qb, im_err_t *err)
{
    int idx = add_source(n, query_backend_describe(qb));
    uint32_t bit = idx < 32 ? (1u << idx) : 0;
    json_t *names = NULL, *meta = NULL, *series = NULL, *cfg = NULL;
    query_req_t rq = {.op = QUERY_LABEL_VALUES, .label = "__name__"};
    im_rc rc = api_get(qb, &rq, &names, err);
    if (rc != IM_OK) return rc;
    size_t i;
    json_t *v;
    json_array_foreach(names, i, v)
    {
        const char *s = json_string_value(v);
        if (!s) continue;
        lname_t *e = lint__names_put(n, s, strlen(s));
        if (e) e->sources |= bit;
        note_exporter(n, s, strlen(s));
    }
    json_decref(names);
    /* Types: metadata is keyed by family name. */
    rq = (query_req_t){.op = QUERY_API_GET, .path = "metadata"};
    if (api_get(qb, &rq, &meta, NULL) == IM_OK && json_is_object(meta)) {
        for (size_t k = 0; k < n->cap; k++) {
            lname_t *e = n->slots[k];
            if (!e || !(e->sources & bit)) continue;
            static const char *const sufs[] = {"",     "_total", "_bucket",
                                               "_sum", "_count", "_created"};
            for (size_t s = 0; s < IM_ARRAY_LEN(sufs); s++) {
                size_t sl = strlen(sufs[s]);
                if (e->len <= sl || memcmp(e->name + e->len - sl, sufs[s], sl) != 0) continue;
                char fam[512];
                snprintf(fam, sizeof fam, "%.*s", (int)(e->len - sl), e->name);
                json_t *arr = json_object_get(meta, fam);
                json_t *m0 = json_array_get(arr, 0);
                if (!m0) continue;
                llm_mtype_t t = mtype_from_str(json_string_value(json_object_get(m0, "type")));
                if (t == LLM_MTYPE_UNKNOWN) continue;
                if (s > 0 && t == LLM_MTYPE_GAUGE)
                    continue; /* x_total of a gauge family x? keep looking */
                e->type = t;
                e->suffix = (llm_suffix_t)s;
                break;
            }
        }
    }
    json_decref(meta);
    /* Scrape intervals per job. */
    job_interval_t *jobs = NULL;
    size_t njobs = 0;
    int64_t global_ms = 0;
    rq = (query_req_t){.op = QUERY_API_GET, .path = "status/config"};
    if (api_get(qb, &rq, &cfg, NULL) == IM_OK) {
        const char *y = json_string_value(json_object_get(cfg, "yaml"));
        cfg_node_t *root = NULL;
        if (y && cfg_parse_yaml(y, strlen(y), NULL, &root, NULL) == IM_OK) {
            njobs = config_intervals(root, &jobs, &global_ms);
            cfg_node_free(root);
        }
    }
    json_decref(cfg);
    if (global_ms > 0 && n->default_interval_ms == 0) n->default_interval_ms = global_ms;
    /* Series of the last 10 minutes: label names and values per metric, asked for
     * by exact names in batches (a match[] of {__name__=~".+"} is both heavy and,
     * on a fresh head, sometimes empty). */
    int64_t now_s = im_now_ms() / 1000;
    size_t nnames = 0;
    char **list = NULL;
    for (size_t k = 0; k < n->cap; k++) {
        lname_t *e = n->slots[k];
        if (!e || !(e->sources & bit) || nnames >= 20000) continue;
        list = im_realloc(list, (nnames + 1) * sizeof(*list));
        list[nnames++] = e->name;
    }
    for (size_t b = 0; b < nnames; b += 40) {
        rq = (query_req_t){.op = QUERY_SERIES,
                           .has_start = true,
                           .has_end = true,
                           .start_ms = (now_s - 600) * 1000,
                           .end_ms = (now_s + 60) * 1000,
                           .match = (const char *const *)list + b,
                           .nmatch = IM_MIN(nnames - b, (size_t)40)};
        if (api_get(qb, &rq, &series, NULL) != IM_OK) continue;
        json_array_foreach(series, i, v)
        {
            const char *name = json_string_value(json_object_get(v, "__name__"));
            if (!name) continue;
            lname_t *e = lint__names_put(n, name, strlen(name));
            if (!e) continue;
            e->sources |= bit;
            e->labels_exact = true;
            const char *key;
            json_t *val;
            json_object_foreach(v, key, val)
            {
                const char *sv = json_string_value(val);
                if (!sv || strcmp(key, "__name__") == 0) continue;
                lname_label_t *l = lint__lname_label(e, key, strlen(key), true);
                lint__lname_add_value(l, sv, strlen(sv));
                if (strcmp(key, "le") == 0) {
                    double d;
                    if (im_parse_float(sv, strlen(sv), &d)) lint__lname_add_le(e, d);
                }
                if (strcmp(key, "job") == 0) {
                    for (size_t jx = 0; jx < njobs; jx++)
                        if (strcmp(jobs[jx].job, sv) == 0 && jobs[jx].ms > e->interval_ms)
                            e->interval_ms = jobs[jx].ms;
                }
            }
        }
        json_decref(series);
        series = NULL;
    }
    im_free(list);
    for (size_t j = 0; j < njobs; j++) im_free(jobs[j].job);
    im_free(jobs);
    n->live = true;
    n->kind = LINT_SOURCE_PROMETHEUS;
    return IM_OK;
}

/* ---- Recording rules, catalog ---- */

void lint_names_add_record(lint_names_t *n, const char *name, size_t len)
{
    lname_t *e = lint__names_put(n, name, len);
    if (e && !e->sources && !e->catalog) e->record = true;
}

void lint_names_add_record_expr(lint_names_t *n, const char *name, size_t len, const char *expr,
                                size_t elen)
{
    lname_t *e = lint__names_put(n, name, len);
    if (!e || e->sources || e->catalog) return;
    e->record = true;
    if (expr && !e->record_expr) e->record_expr = im_strndup(expr, elen);
}

void lint_names_use_catalog(lint_names_t *n, const llm_version_t *v)
{
    const llm_catalog_t *c = llm_catalog_get();
    n->catalog_version = *v;
    for (size_t i = 0; i < llm_catalog_count(c); i++) {
        const llm_family_t *f = llm_catalog_family(c, i);
        llm_status_t st = llm_family_status(f, v);
        if (st != LLM_STATUS_CURRENT && st != LLM_STATUS_DEPRECATED) continue;
        for (int s = 0; s < f->nsamples; s++) {
            size_t sl = strlen(f->samples[s]);
            lname_t *e = lint__names_put(n, f->samples[s], sl);
            if (!e) continue;
            e->catalog = true;
            e->record = false;
            e->type = f->type;
            e->suffix =
                lint__suffix_from(f->samples[s], sl, strlen(f->base) <= sl ? strlen(f->base) : sl);
            if (f->type == LLM_MTYPE_COUNTER && e->suffix != LLM_SUFFIX_TOTAL &&
                e->suffix != LLM_SUFFIX_CREATED)
                e->suffix = LLM_SUFFIX_NONE;
            for (int k = 0; k < f->nlabels; k++)
                lint__lname_label(e, f->labels[k], strlen(f->labels[k]), true);
            for (int k = 0; k < f->nenums; k++) {
                lname_label_t *l =
                    lint__lname_label(e, f->enums[k].label, strlen(f->enums[k].label), true);
                for (int j = 0; f->enums[k].values[j]; j++)
                    lint__lname_add_value(l, f->enums[k].values[j], strlen(f->enums[k].values[j]));
            }
            if (e->suffix == LLM_SUFFIX_BUCKET)
                for (int k = 0; k < f->nbuckets; k++) lint__lname_add_le(e, f->buckets[k]);
        }
        n->exporters_seen[f->exporter] = true;
    }
}

void lint_names_set_scrape_interval(lint_names_t *n, int64_t ms)
{
    n->default_interval_ms = ms;
}

lint_source_kind_t lint_names_kind(const lint_names_t *n)
{
    return n->kind;
}

bool lint_names_has(const lint_names_t *n, const char *name, size_t len)
{
    return lint__names_get(n, name, len) != NULL;
}

size_t lint_names_sources(const lint_names_t *n, const char *const **out)
{
    *out = (const char *const *)n->source_names;
    return n->nsources;
}

llm_version_t lint_names_vllm_version(const lint_names_t *n)
{
    if (!n->live) return n->catalog_version;
    llm_version_t best = {0};
    const llm_catalog_t *c = llm_catalog_get();
    for (size_t i = 0; i < n->cap; i++) {
        const lname_t *e = n->slots[i];
        if (!e || e->record || e->catalog) continue;
        const llm_family_t *f = llm_catalog_lookup(c, e->name, e->len, NULL, NULL);
        if (!f || f->exporter != LLM_EXP_VLLM || !f->first.known) continue;
        if (f->first.unreleased) continue; /* main-only families say little about releases */
        if (!best.known || llm_version_cmp(&f->first, &best) > 0) best = f->first;
    }
    return best;
}
