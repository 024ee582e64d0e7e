/* remote.c — the remote query backend: an HTTP client of a Prometheus-compatible
 * query API (Prometheus, VictoriaMetrics, Mimir, Thanos). Each request is one
 * curl transfer with the configured auth/TLS/proxy (config/http_client.h),
 * extra headers and tenant, a timeout and a body cap; the answer is checked to
 * be the API's JSON, kept as it came for relaying, and decoded when the caller
 * wants C values. Every error sentence starts with "backend <url>". */
#include "util/base.h"

#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <strings.h>

#include "config/yaml.h"
#include "labels/json.h"
#include "query/query_int.h"
#include "util/timeutil.h"

typedef struct remote {
    query_backend_t base;
    char *url; /* owned, without a trailing '/' */
    cfg_http_client_t http;
    char **hdr_lines; /* owned "Name: value" lines */
    size_t nhdr;
    char *tenant; /* owned, may be NULL */
    int64_t timeout_ms, max_bytes;
    const char *timeout_flag, *max_bytes_flag, *user_agent;
} remote_t;

/* ---- Configuration file ---- */

static const char *const file_keys[] = {"headers", "tenant", NULL};

void query_remote_file_free(query_remote_file_t *f)
{
    cfg_http_client_free(&f->http);
    cfg_strv_free(f->header_names, f->nheaders);
    cfg_strv_free(f->header_values, f->nheaders);
    im_free(f->tenant);
    memset(f, 0, sizeof *f);
}

im_rc query_remote_config_load(const char *path, query_remote_file_t *out, im_err_t *err)
{
    memset(out, 0, sizeof *out);
    cfg_http_client_init(&out->http);
    im_buf_t text;
    im_buf_init(&text, 1 << 20);
    int en = 0;
    im_rc rc = cfg_read_file(path, &text, &en);
    if (rc != IM_OK) {
        im_buf_free(&text);
        return im_err_set(err, rc, "--query.backend-config %s: %s", path,
                          rc == IM_ELIMIT ? "larger than 1 MiB"
                          : en            ? strerror(en)
                                          : "cannot be read");
    }
    cfg_node_t *root = NULL;
    rc = cfg_parse_yaml(text.data ? text.data : "", text.len, path, &root, err);
    im_buf_free(&text);
    if (rc != IM_OK) return rc;
    cfg_dec_t d = {.file = path, .err = err};
    const char *const *const lists[] = {cfg_http_client_keys, file_keys, NULL};
    if ((rc = cfg_check_map_lists(&d, root, "query backend config", lists)) == IM_OK &&
        (rc = cfg_http_client_decode(&d, root, &out->http)) == IM_OK &&
        (rc = cfg_get_str(&d, root, "tenant", &out->tenant)) == IM_OK)
        rc = cfg_get_strmap(&d, root, "headers", &out->header_names, &out->header_values,
                            &out->nheaders);
    for (size_t i = 0; rc == IM_OK && i < out->nheaders; i++) {
        const cfg_node_t *h = cfg_get(root, "headers");
        if (!strcasecmp(out->header_names[i], "authorization"))
            rc =
                cfg_fail(&d, h, "the Authorization header is set with basic_auth or authorization");
        else if (!*out->header_names[i] || strpbrk(out->header_names[i], ": \r\n") ||
                 strpbrk(out->header_values[i], "\r\n"))
            rc = cfg_fail(&d, h, "invalid header \"%s\"", out->header_names[i]);
    }
    cfg_node_free(root);
    if (rc != IM_OK) query_remote_file_free(out);
    return rc;
}

/* ---- Transfer ---- */

static size_t on_body(char *p, size_t size, size_t nmemb, void *user)
{
    im_buf_t *b = user;
    size_t n = size * nmemb;
    return im_buf_append(b, p, n) == IM_OK ? n : 0;
}

static void form_add(im_buf_t *f, CURL *c, const char *k, const char *v)
{
    char *e = curl_easy_escape(c, v, 0);
    (void)im_buf_printf(f, "%s%s=%s", f->len ? "&" : "", k, e ? e : "");
    curl_free(e);
}

static void form_time(im_buf_t *f, const char *k, int64_t ms)
{
    uint64_t a = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
    (void)im_buf_printf(f, "%s%s=%s%llu.%03llu", f->len ? "&" : "", k, ms < 0 ? "-" : "",
                        (unsigned long long)(a / 1000), (unsigned long long)(a % 1000));
}

/* The request's form (POST body, or GET query string) and its path. */
static void build(const remote_t *rb, const query_req_t *r, CURL *c, im_buf_t *url, im_buf_t *form,
                  bool *post)
{
    (void)im_buf_puts(url, rb->url);
    (void)im_buf_puts(url, "/api/v1/");
    *post = true;
    switch (r->op) {
    case QUERY_INSTANT:
    case QUERY_RANGE:
        (void)im_buf_puts(url, r->op == QUERY_INSTANT ? "query" : "query_range");
        form_add(form, c, "query", r->expr ? r->expr : "");
        if (r->op == QUERY_INSTANT) {
            form_time(form, "time", r->time_ms);
        } else {
            form_time(form, "start", r->start_ms);
            form_time(form, "end", r->end_ms);
            form_time(form, "step", r->step_ms);
        }
        break;
    case QUERY_SERIES:
    case QUERY_LABELS:
    case QUERY_LABEL_VALUES:
        if (r->op == QUERY_SERIES) {
            (void)im_buf_puts(url, "series");
        } else if (r->op == QUERY_LABELS) {
            (void)im_buf_puts(url, "labels");
        } else {
            char *e = curl_easy_escape(c, r->label ? r->label : "", 0);
            (void)im_buf_printf(url, "label/%s/values", e ? e : "");
            curl_free(e);
            *post = false; /* GET only in Prometheus */
        }
        for (size_t i = 0; i < r->nmatch; i++) form_add(form, c, "match[]", r->match[i]);
        if (r->has_start) form_time(form, "start", r->start_ms);
        if (r->has_end) form_time(form, "end", r->end_ms);
        if (r->limit > 0)
            (void)im_buf_printf(form, "%slimit=%lld", form->len ? "&" : "", (long long)r->limit);
        break;
    case QUERY_API_GET:
        (void)im_buf_puts(url, r->path ? r->path : "");
        for (size_t i = 0; i < r->nparams; i++)
            form_add(form, c, r->param_names[i], r->param_values[i]);
        *post = false;
        break;
    }
    if (!*post && form->len) {
        (void)im_buf_putc(url, '?');
        (void)im_buf_append(url, form->data, form->len);
    }
}

/* The first line of a non-JSON body, for messages. */
static void body_excerpt(const im_buf_t *b, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; b->data && i < b->len && n + 1 < cap && n < 200; i++) {
        char ch = b->data[i];
        if (ch == '\n' || ch == '\r') {
            if (n) break;
            continue;
        }
        out[n++] = (unsigned char)ch < 0x20 ? ' ' : ch;
    }
    out[n] = 0;
}

/* ---- Decoding ---- */

static bool json_time_ms(const json_t *t, int64_t *ms)
{
    if (!json_is_number(t)) return false;
    double s = json_number_value(t);
    if (!isfinite(s)) return false;
    *ms = (int64_t)llround(s * 1000.0);
    return true;
}

static bool json_val(const json_t *v, double *out)
{
    const char *s = json_string_value(v);
    return s && im_parse_go_float(s, out);
}

static bool point_of(const json_t *pair, promql_point_t *p)
{
    return json_is_array(pair) && json_array_size(pair) == 2 &&
           json_time_ms(json_array_get(pair, 0), &p->t_ms) &&
           json_val(json_array_get(pair, 1), &p->v);
}

static const im_labels_t *labels_of(const json_t *m, im_labels_builder_t *lb)
{
    if (!json_is_object(m)) return NULL;
    im_lb_reset(lb);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)m, k, v)
    {
        const char *s = json_string_value(v);
        if (!s) return NULL;
        im_lb_set(lb, k, strlen(k), s, json_string_length(v));
    }
    return im_lb_build(lb);
}

/* data of a query answer into res; false when it is not one. */
static bool decode_result(const json_t *data, promql_result_t *res)
{
    const char *type = json_string_value(json_object_get(data, "resultType"));
    const json_t *result = json_object_get(data, "result");
    if (!type || !result) return false;
    im_arena_init(&res->arena, 0, 0);
    if (!strcmp(type, "scalar") || !strcmp(type, "string")) {
        bool str = type[1] == 't';
        res->type = str ? PROMQL_RESULT_STRING : PROMQL_RESULT_SCALAR;
        if (!json_is_array(result) || json_array_size(result) != 2 ||
            !json_time_ms(json_array_get(result, 0), &res->scalar.t_ms))
            return false;
        const json_t *v = json_array_get(result, 1);
        if (str) {
            if (!json_is_string(v)) return false;
            res->str = im_arena_strndup(&res->arena, json_string_value(v), json_string_length(v));
            res->str_len = json_string_length(v);
            return true;
        }
        return json_val(v, &res->scalar.v);
    }
    bool matrix = !strcmp(type, "matrix");
    if (!matrix && strcmp(type, "vector")) return false;
    if (!json_is_array(result)) return false;
    res->type = matrix ? PROMQL_RESULT_MATRIX : PROMQL_RESULT_VECTOR;
    size_t n = json_array_size(result);
    res->series = im_arena_calloc(&res->arena, (n ? n : 1) * sizeof *res->series);
    im_labels_builder_t lb;
    im_lb_init(&lb);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const json_t *e = json_array_get(result, i);
        const im_labels_t *ls = labels_of(json_object_get(e, "metric"), &lb);
        if (!ls) {
            ok = false;
            break;
        }
        promql_series_t *s = &res->series[res->nseries++];
        s->labels = ls;
        if (matrix) {
            const json_t *vals = json_object_get(e, "values");
            size_t np = json_array_size(vals);
            s->points = im_arena_alloc(&res->arena, (np ? np : 1) * sizeof *s->points);
            for (size_t k = 0; k < np && ok; k++)
                ok = point_of(json_array_get(vals, k), &s->points[k]);
            s->npoints = np;
            /* native histograms ("histograms") are not decoded: their series keep no points */
        } else {
            s->points = im_arena_alloc(&res->arena, sizeof *s->points);
            s->npoints = 1;
            ok = point_of(json_object_get(e, "value"), &s->points[0]);
        }
    }
    im_lb_free(&lb);
    return ok;
}

/* Decodes data into a's typed form; false when data does not have the shape of
 * the answer to r. Applies the limit to arrays (json_t modified). */
static bool decode(const query_req_t *r, json_t *data, query_answer_t *a, bool *truncated)
{
    *truncated = false;
    if (r->op == QUERY_API_GET) return true;
    if (r->op == QUERY_INSTANT || r->op == QUERY_RANGE) {
        if (!json_is_object(data)) return false;
        if (!(r->want & QUERY_WANT_RESULT)) {
            const char *t = json_string_value(json_object_get(data, "resultType"));
            return t && json_object_get(data, "result");
        }
        return decode_result(data, &a->result);
    }
    if (!json_is_array(data)) return false;
    if (r->limit > 0 && json_array_size(data) > (size_t)r->limit) {
        while (json_array_size(data) > (size_t)r->limit)
            json_array_remove(data, json_array_size(data) - 1);
        *truncated = true;
    }
    size_t n = json_array_size(data);
    if (r->op == QUERY_SERIES) {
        im_labels_builder_t lb;
        im_lb_init(&lb);
        if (r->want & QUERY_WANT_RESULT) a->series = im_calloc(n ? n : 1, sizeof *a->series);
        bool ok = true;
        for (size_t i = 0; i < n && ok; i++) {
            const im_labels_t *ls = labels_of(json_array_get(data, i), &lb);
            if (!ls)
                ok = false;
            else if (r->want & QUERY_WANT_RESULT)
                a->series[a->nseries++] = ls;
            else
                im_labels_unref(ls);
        }
        im_lb_free(&lb);
        return ok;
    }
    if (r->want & QUERY_WANT_RESULT) a->strs = im_calloc(n ? n : 1, sizeof *a->strs);
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(data, i);
        if (!json_is_string(v)) return false;
        if (r->want & QUERY_WANT_RESULT)
            a->strs[a->nstrs++] = im_strndup(json_string_value(v), json_string_length(v));
    }
    return true;
}

/* ---- The request ---- */

/* libcurl's progress callback (at least once a second while a transfer waits):
 * a non-zero cancel flag (the client hung up) aborts the transfer. */
static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    const volatile int *cancel = ud;
    return __atomic_load_n(cancel, __ATOMIC_RELAXED) ? 1 : 0;
}

static im_rc remote_do(query_backend_t *b, const query_req_t *r, query_answer_t *a, im_err_t *err)
{
    remote_t *rb = (remote_t *)b;
    char msg[1400];
    if (r->op == QUERY_SERIES && r->nmatch == 0)
        return query__fail(a, r, IM_EINVAL, "bad_data", 400, "no match[] parameter provided");
    CURL *c = curl_easy_init();
    if (!c) {
        im_err_set(err, IM_EIO, "backend %s: cannot initialise libcurl", rb->url);
        return query__fail(a, r, IM_EIO, "internal", 500, err->msg);
    }
    int64_t to = rb->timeout_ms;
    if (r->timeout_ms > 0 && r->timeout_ms < to) to = r->timeout_ms;
    im_buf_t url, form, body;
    im_buf_init(&url, 0);
    im_buf_init(&form, 0);
    im_buf_init(&body, (size_t)rb->max_bytes);
    bool post;
    build(rb, r, c, &url, &form, &post);
    if ((r->op == QUERY_INSTANT || r->op == QUERY_RANGE)) form_time(&form, "timeout", to);
    char ebuf[CURL_ERROR_SIZE] = "";
    cfg_http_lists_t l = {curl_slist_append(NULL, "Accept: application/json"), NULL};
    for (size_t i = 0; i < rb->nhdr; i++) l.hdrs = curl_slist_append(l.hdrs, rb->hdr_lines[i]);
    if (rb->tenant) {
        char t[1024];
        snprintf(t, sizeof t, "X-Scope-OrgID: %s", rb->tenant);
        l.hdrs = curl_slist_append(l.hdrs, t);
    }
    im_rc rc = cfg_http_client_handle(&rb->http, &c, url.data, on_body, &body, ebuf, &l, err);
    long status = 0;
    CURLcode cc = CURLE_OK;
    if (rc == IM_OK) {
        if (post) {
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, form.data ? form.data : "");
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)form.len);
        }
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)to);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)IM_MIN(to, 10000));
        curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
        curl_easy_setopt(c, CURLOPT_USERAGENT, rb->user_agent);
        if (r->cancel) {
            curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
            curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)(uintptr_t)r->cancel);
            curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
        }
        cc = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    } else {
        im_err_prefix(err, "backend %s", rb->url);
    }
    cfg_http_lists_free(&l);
    curl_easy_cleanup(c);
    im_buf_free(&form);
    json_t *root = NULL;
    if (rc != IM_OK) {
        query__fail(a, r, rc, "internal", 500, err->msg);
        goto out;
    }
    if (cc != CURLE_OK) {
        if (cc == CURLE_WRITE_ERROR) {
            rc = im_err_set(err, IM_ELIMIT,
                            "backend %s: the answer is larger than %lld bytes; raise %s", rb->url,
                            (long long)rb->max_bytes, rb->max_bytes_flag);
            query__fail(a, r, rc, "execution", 422, err->msg);
        } else if (cc == CURLE_ABORTED_BY_CALLBACK) {
            rc = im_err_set(err, IM_ECANCELED,
                            "backend %s: the request was canceled (the client went away)", rb->url);
            query__fail(a, r, rc, "canceled", 503, err->msg);
        } else if (cc == CURLE_OPERATION_TIMEDOUT) {
            rc = im_err_set(err, IM_ETIMEOUT,
                            "backend %s did not answer within %lld ms; raise %s (or the "
                            "request's timeout=)",
                            rb->url, (long long)to, rb->timeout_flag);
            query__fail(a, r, rc, "timeout", 503, err->msg);
        } else {
            rc = im_err_set(err, IM_EIO, "backend %s is unavailable: %s", rb->url,
                            ebuf[0] ? ebuf : curl_easy_strerror(cc));
            query__fail(a, r, rc, "unavailable", 503, err->msg);
        }
        goto out;
    }
    json_error_t je;
    root = json_loadb(body.data ? body.data : "", body.len, JSON_ALLOW_NUL, &je);
    const char *st = json_string_value(json_object_get(root, "status"));
    if (!root || !st || (strcmp(st, "success") && strcmp(st, "error"))) {
        char ex[256];
        body_excerpt(&body, ex, sizeof ex);
        if (status >= 200 && status < 300) {
            rc = im_err_set(err, IM_EPARSE,
                            "backend %s: the answer to %s is not the Prometheus API's JSON (%s): "
                            "\"%s\"",
                            rb->url, url.data + strlen(rb->url), root ? "no status field" : je.text,
                            ex);
            query__fail(a, r, rc, "internal", 502, err->msg);
        } else {
            rc = im_err_set(err, IM_EIO, "backend %s answered HTTP %ld to %s: \"%s\"", rb->url,
                            status, url.data + strlen(rb->url), ex);
            query__fail(a, r, rc, "unavailable", status >= 500 ? 502 : 503, err->msg);
        }
        goto out;
    }
    if (!strcmp(st, "error")) {
        const char *et = json_string_value(json_object_get(root, "errorType"));
        const char *em = json_string_value(json_object_get(root, "error"));
        static const char *const types[] = {"bad_data", "execution",   "timeout",  "canceled",
                                            "internal", "unavailable", "not_found"};
        /* a type Prometheus does not have (VictoriaMetrics writes the status
         * code, "422") is named after the status code */
        const char *etype = status == 400   ? "bad_data"
                            : status == 422 ? "execution"
                            : status == 404 ? "not_found"
                            : status == 503 ? "unavailable"
                                            : "internal";
        for (size_t i = 0; et && i < IM_ARRAY_LEN(types); i++)
            if (!strcmp(et, types[i])) etype = types[i];
        im_rc erc = !strcmp(etype, "bad_data")    ? IM_EINVAL
                    : !strcmp(etype, "timeout")   ? IM_ETIMEOUT
                    : !strcmp(etype, "canceled")  ? IM_ECANCELED
                    : !strcmp(etype, "execution") ? IM_EEXEC
                                                  : IM_EIO;
        snprintf(msg, sizeof msg, "backend %s: %s", rb->url, em ? em : "(no message)");
        rc = im_err_set(err, erc, "%s", msg);
        query__fail(a, r, rc, etype, status >= 400 ? (unsigned)status : 0, msg);
        goto out;
    }
    json_t *data = json_object_get(root, "data");
    bool truncated = false;
    if (!data || !decode(r, data, a, &truncated)) {
        rc = im_err_set(err, IM_EPARSE,
                        "backend %s: the answer to %s does not have the shape of one (data)",
                        rb->url, url.data + strlen(rb->url));
        im_buf_t keep = a->json; /* the typed parts go, the buffer stays */
        im_buf_init(&a->json, 0);
        query_answer_free(a);
        a->json = keep;
        query__fail(a, r, rc, "internal", 502, err->msg);
        goto out;
    }
    if (r->want & QUERY_WANT_JSON) {
        if (truncated) {
            char *s = json_dumps(root, JSON_COMPACT);
            (void)im_buf_puts(&a->json, s ? s : "");
            free(s); /* checksrc: allow (jansson allocates with malloc) */
        } else {
            im_buf_free(&a->json);
            a->json = body;
            im_buf_init(&body, 0);
        }
    }
out:
    json_decref(root);
    im_buf_free(&body);
    im_buf_free(&url);
    return rc;
}

static const char *remote_describe(const query_backend_t *b)
{
    return ((const remote_t *)b)->url;
}

static void remote_status(const query_backend_t *b, im_buf_t *out)
{
    const remote_t *rb = (const remote_t *)b;
    (void)im_buf_puts(out, "{\"type\":\"remote\",\"url\":");
    im_json_string(out, rb->url, strlen(rb->url), IM_JSON_GO);
    (void)im_buf_puts(out, ",\"tenant\":");
    const char *t = rb->tenant ? rb->tenant : "";
    im_json_string(out, t, strlen(t), IM_JSON_GO);
    (void)im_buf_printf(out, ",\"timeoutSeconds\":%.3f,\"maxBytes\":%lld}",
                        (double)rb->timeout_ms / 1000.0, (long long)rb->max_bytes);
}

static void remote_free(query_backend_t *b)
{
    remote_t *rb = (remote_t *)b;
    im_free(rb->url);
    cfg_http_client_free(&rb->http);
    query_strs_free(rb->hdr_lines, rb->nhdr);
    im_free(rb->tenant);
    im_free(rb);
}

static const query_backend_vt_t remote_vt = {remote_do, remote_describe, remote_status,
                                             remote_free};

im_rc query_remote_new(const query_remote_opts_t *o, query_backend_t **out, im_err_t *err)
{
    *out = NULL;
    const char *u = o->url ? o->url : "";
    if (strncmp(u, "http://", 7) && strncmp(u, "https://", 8))
        return im_err_set(err, IM_EINVAL,
                          "query backend URL \"%s\" must start with http:// or https://", u);
    if (strpbrk(u, "?# \r\n"))
        return im_err_set(err, IM_EINVAL,
                          "query backend URL \"%s\": give the base URL (the part before "
                          "/api/v1), without a query string",
                          u);
    remote_t *rb = im_calloc(1, sizeof *rb);
    rb->base.vt = &remote_vt;
    size_t n = strlen(u);
    while (n > 0 && u[n - 1] == '/') n--;
    rb->url = im_strndup(u, n);
    cfg_http_client_copy(&rb->http, &o->http);
    rb->hdr_lines = im_calloc(o->nheaders + 1, sizeof *rb->hdr_lines);
    for (size_t i = 0; i < o->nheaders; i++) {
        im_buf_t l;
        im_buf_init(&l, 0);
        (void)im_buf_printf(&l, "%s: %s", o->header_names[i], o->header_values[i]);
        rb->hdr_lines[rb->nhdr++] = im_buf_steal(&l, NULL);
    }
    rb->tenant = o->tenant && *o->tenant ? im_strdup(o->tenant) : NULL;
    rb->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : QUERY_REMOTE_TIMEOUT_MS_DEFAULT;
    rb->max_bytes = o->max_bytes > 0 ? o->max_bytes : QUERY_REMOTE_MAX_BYTES_DEFAULT;
    rb->timeout_flag = o->timeout_flag ? o->timeout_flag : "--query.backend-timeout";
    rb->max_bytes_flag = o->max_bytes_flag ? o->max_bytes_flag : "--query.backend-max-bytes";
    rb->user_agent = o->user_agent ? o->user_agent : "infermon/query";
    *out = &rb->base;
    return IM_OK;
}
