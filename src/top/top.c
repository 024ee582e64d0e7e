/* top.c — fetch, store and compute for `infermon top` (contract in top.h). */
#include "util/base.h"

#include <curl/curl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/http_client.h"
#include "expo/expo.h"
#include "labels/labels.h"
#include "llm/serving.h"
#include "promql/parser.h"
#include "promql/promql.h"
#include "query/query.h"
#include "util/hash.h"
#include "util/timeutil.h"
#include "top/top.h"

/* ---- Signals: what top shows, from the serving model (llm/serving.h) ---- */

typedef enum top_sig {
    SIG_RUNNING = 0,
    SIG_WAITING,
    SIG_KV,
    SIG_PREEMPT,
    SIG_TOK_IN,
    SIG_TOK_OUT,
    SIG_PREFIX_HITS, /* hits / queries of the same preference rank */
    SIG_PREFIX_RATE, /* a gauge hit rate (SGLang, vLLM V0) */
    SIG_FAIL,
    SIG_TTFT,
    SIG_ITL,
    SIG_COUNT
} top_sig_t;

/* Each column and the serving-model signal it shows; the engine's mappings of
 * that signal, in the model's preference order, are its metric names. */
static const llm_signal_t top_sig_model[SIG_COUNT] = {
    [SIG_RUNNING] = LLM_SIG_RUNNING,
    [SIG_WAITING] = LLM_SIG_WAITING,
    [SIG_KV] = LLM_SIG_KV_USAGE,
    [SIG_PREEMPT] = LLM_SIG_PREEMPTIONS,
    [SIG_TOK_IN] = LLM_SIG_PROMPT_TOKENS,
    [SIG_TOK_OUT] = LLM_SIG_GENERATION_TOKENS,
    [SIG_PREFIX_HITS] = LLM_SIG_PREFIX_HITS,
    [SIG_PREFIX_RATE] = LLM_SIG_PREFIX_HIT_RATE,
    [SIG_FAIL] = LLM_SIG_REQUESTS_FAILED,
    [SIG_TTFT] = LLM_SIG_TTFT,
    [SIG_ITL] = LLM_SIG_ITL,
};

/* Engines that are not inference engines: a GPU source, and a quota layer. */
static bool engine_is_gpu(const llm_engine_info_t *ei)
{
    return strcmp(ei->id, "dcgm") == 0;
}

static bool engine_is_inference(const llm_engine_info_t *ei)
{
    return !engine_is_gpu(ei) && strcmp(ei->id, "kueue") != 0;
}

/* ---- State ---- */

typedef struct spark_hist {
    uint64_t key;
    double v[TOP_SPARK];
    int64_t last_t;
} spark_hist_t;

/* The store as a storage_t for the doctor's local query backend: read-only
 * (query_local only selects; no appender, no stats). */
typedef struct ms_storage {
    storage_t base;
    promql_memstore_t *ms;
} ms_storage_t;

static storage_queryable_t *ms_queryable(storage_t *s)
{
    return promql_memstore_queryable(((ms_storage_t *)(void *)s)->ms);
}

static const storage_vt_t ms_storage_vt = {NULL, ms_queryable, NULL, NULL, NULL};

struct top {
    top_opts_t o;
    top_endpoint_t *eps;
    size_t neps, capeps;
    promql_memstore_t *ms;
    promql_engine_t *eng;
    im_labels_builder_t lb;
    FILE *record;
    int scrapes;
    int64_t first_ms;
    const llm_serving_t *model;
    bool *names_seen;    /* per serving-model mapping: exposed by some endpoint */
    char last_name[256]; /* the last sample's name (families come in runs) */
    bool last_inference; /* ... is an inference engine's family */
    spark_hist_t *sparks;
    size_t nsparks;
    top_view_t view;
    /* the doctor */
    ms_storage_t st;
    query_backend_t *qb;
    cfg_llm_t dcfg;
    llm_doctor_report_t rep;
    top_doctor_t doc;
};

top_t *top_new(const top_opts_t *opts)
{
    top_t *t = im_calloc(1, sizeof *t);
    if (opts) t->o = *opts;
    if (t->o.interval_ms <= 0) t->o.interval_ms = 2000;
    if (t->o.short_ms <= 0)
        t->o.short_ms = t->o.interval_ms * 4 > 10000 ? t->o.interval_ms * 4 : 10000;
    if (t->o.long_ms <= 0) t->o.long_ms = 60000;
    if (t->o.timeout_ms <= 0) t->o.timeout_ms = t->o.interval_ms;
    if (t->o.max_body_bytes == 0) t->o.max_body_bytes = 64u << 20;
    t->ms = promql_memstore_new();
    promql_engine_opts_t eo = {0};
    eo.threads = 1;
    t->eng = promql_engine_new(&eo);
    im_lb_init(&t->lb);
    t->first_ms = -1;
    t->model = llm_serving_get();
    t->names_seen = im_calloc(llm_serving_map_count(t->model) + 1, sizeof *t->names_seen);
    if (t->o.doctor_interval_ms == 0) t->o.doctor_interval_ms = 10000;
    t->doc.enabled = t->o.doctor_interval_ms > 0;
    t->doc.window_ms = t->o.long_ms;
    t->doc.interval_ms = t->o.doctor_interval_ms;
    if (t->doc.enabled) {
        t->st.base.vt = &ms_storage_vt;
        t->st.ms = t->ms;
        t->qb = query_local_new(&t->st.base, t->eng);
        memset(&t->dcfg, 0, sizeof t->dcfg);
        cfg_llm_doctor_defaults(&t->dcfg.doctor);
        /* the window top holds, at its resolution, rates over the short window */
        t->dcfg.doctor.window_ms = t->o.long_ms;
        t->dcfg.doctor.step_ms = t->o.interval_ms < 1000 ? 1000 : t->o.interval_ms;
        t->dcfg.doctor.rate_window_ms = t->o.short_ms;
        t->dcfg.doctor.parallel = 1; /* on this thread, between scrapes */
    }
    return t;
}

static void view_clear(top_view_t *v)
{
    im_free(v->rows);
    im_free(v->gpus);
    v->rows = NULL;
    v->gpus = NULL;
    v->nrows = v->ngpus = 0;
}

void top_free(top_t *t)
{
    if (!t) return;
    if (t->record) {
        fputs("# EOF\n", t->record);
        fflush(t->record);
    }
    for (size_t i = 0; i < t->neps; i++) {
        im_free(t->eps[i].target);
        im_free(t->eps[i].url);
    }
    im_free(t->eps);
    promql_memstore_free(t->ms);
    promql_engine_free(t->eng);
    im_lb_free(&t->lb);
    im_free(t->sparks);
    im_free(t->names_seen);
    llm_doctor_report_free(&t->rep);
    query_backend_free(t->qb);
    view_clear(&t->view);
    im_free(t);
}

const top_opts_t *top_options(const top_t *t)
{
    return &t->o;
}

void top_set_record(top_t *t, FILE *f)
{
    t->record = f;
}

im_rc top_add_target(top_t *t, const char *target, bool probed, im_err_t *err)
{
    const char *hp = target;
    const char *scheme = "http://";
    const char *sep = strstr(target, "://");
    if (sep) {
        if (!(strncmp(target, "http://", 7) == 0 || strncmp(target, "https://", 8) == 0))
            return im_err_set(err, IM_EINVAL,
                              "target \"%s\": only http:// and https:// URLs (or host:port)",
                              target);
        scheme = target[4] == 's' ? "https://" : "http://";
        hp = sep + 3;
    }
    if (!*hp || *hp == '/' || *hp == ':')
        return im_err_set(err, IM_EINVAL, "target \"%s\": no host (give host:port or a URL)",
                          target);
    for (const char *c = hp; *c; c++)
        if (*c == ' ' || *c == '\t')
            return im_err_set(err, IM_EINVAL, "target \"%s\": spaces are not allowed", target);
    im_buf_t u;
    im_buf_init(&u, 0);
    (void)im_buf_printf(&u, "%s%s%s", scheme, hp, strchr(hp, '/') ? "" : "/metrics");
    if (t->neps == t->capeps) {
        t->capeps = t->capeps ? t->capeps * 2 : 8;
        t->eps = im_realloc(t->eps, t->capeps * sizeof *t->eps);
    }
    top_endpoint_t *e = &t->eps[t->neps++];
    memset(e, 0, sizeof *e);
    size_t hl = strlen(hp);
    if (hl > 8 && strcmp(hp + hl - 8, "/metrics") == 0) hl -= 8;
    e->target = im_strndup(hp, hl);
    e->url = im_buf_steal(&u, NULL);
    e->probed = probed;
    return IM_OK;
}

void top_add_probes(top_t *t)
{
    /* vLLM 8000 (and the next ports for more replicas), SGLang 30000,
     * dcgm-exporter 9400 */
    static const char *const ports[] = {"8000", "8001", "8002", "8003", "30000", "30001", "9400"};
    for (size_t i = 0; i < IM_ARRAY_LEN(ports); i++) {
        char hp[32];
        snprintf(hp, sizeof hp, "localhost:%s", ports[i]);
        im_rc rc = top_add_target(t, hp, true, NULL);
        (void)rc; /* a fixed, valid host:port */
    }
}

/* ---- Fetching: all endpoints at once ---- */

typedef struct fetch {
    CURL *h;
    struct curl_slist *hdrs;
    im_buf_t body;
    char ebuf[CURL_ERROR_SIZE];
    bool setup_failed, done;
    CURLcode cc;
} fetch_t;

static size_t on_body(char *p, size_t size, size_t nmemb, void *user)
{
    im_buf_t *b = user;
    size_t n = size * nmemb;
    return im_buf_append(b, p, n) == IM_OK ? n : 0;
}

/* ---- Ingest ---- */

typedef struct ingest {
    top_t *t;
    top_endpoint_t *ep;
    int64_t now_ms;
    bool engine, gpu;
    const char *kind;
} ingest_t;

static void record_sample(FILE *f, const im_labels_t *ls, double v, int64_t t_ms)
{
    const im_istr_t *name = im_labels_get(ls, IM_METRIC_NAME);
    fputs(name ? name->s : "unnamed", f);
    bool first = true;
    for (uint32_t i = 0; i < ls->n; i++) {
        if (strcmp(ls->l[i].name->s, IM_METRIC_NAME) == 0) continue;
        fputc(first ? '{' : ',', f);
        first = false;
        fprintf(f, "%s=\"", ls->l[i].name->s);
        for (const char *c = ls->l[i].value->s; *c; c++) {
            if (*c == '"' || *c == '\\')
                fputc('\\', f), fputc(*c, f);
            else if (*c == '\n')
                fputs("\\n", f);
            else
                fputc(*c, f);
        }
        fputc('"', f);
    }
    if (!first) fputc('}', f);
    if (isnan(v))
        fputs(" NaN", f);
    else if (isinf(v))
        fputs(v > 0 ? " +Inf" : " -Inf", f);
    else
        fprintf(f, " %.17g", v);
    fprintf(f, " %lld.%03lld\n", (long long)(t_ms / 1000), (long long)(t_ms % 1000));
}

/* Is name (a sample's) one of m's series: the name, or a histogram's parts? */
static bool map_names(const llm_signal_map_t *m, const char *name, size_t len)
{
    static const char *const sfx[] = {"_bucket", "_sum", "_count"};
    size_t ml = strlen(m->name);
    if (len < ml || memcmp(name, m->name, ml) != 0) return false;
    if (len == ml) return true;
    if (m->type != LLM_MTYPE_HISTOGRAM) return false;
    for (size_t k = 0; k < IM_ARRAY_LEN(sfx); k++)
        if (strlen(sfx[k]) == len - ml && memcmp(name + ml, sfx[k], len - ml) == 0) return true;
    return false;
}

static int on_sample(void *user, const expo_entry_t *e)
{
    ingest_t *x = user;
    top_t *t = x->t;
    if (e->name.len >= sizeof t->last_name || memcmp(t->last_name, e->name.p, e->name.len) != 0 ||
        t->last_name[e->name.len] != '\0') {
        /* a new family: which engine it is, and which mappings it exposes */
        size_t nl = IM_MIN(e->name.len, sizeof t->last_name - 1);
        memcpy(t->last_name, e->name.p, nl);
        t->last_name[nl] = '\0';
        int eng = llm_serving_engine_of(t->model, e->name.p, e->name.len);
        const llm_engine_info_t *ei = eng >= 0 ? llm_serving_engine(t->model, eng) : NULL;
        if (ei && !x->engine && engine_is_inference(ei)) {
            x->engine = true;
            x->kind = ei->id;
        }
        if (ei && engine_is_gpu(ei)) x->gpu = true;
        t->last_inference = ei && engine_is_inference(ei);
        if (ei)
            for (size_t i = 0; i < llm_serving_map_count(t->model); i++) {
                const llm_signal_map_t *m = llm_serving_map(t->model, i);
                if (!t->names_seen[i] && m->engine == eng && map_names(m, e->name.p, e->name.len))
                    t->names_seen[i] = true;
            }
    }
    const im_labels_t *ls = expo_entry_labels(e, &x->t->lb);
    /* the endpoint is the instance, as a scrape's target label would be, and
     * the pod of an engine's sample that names none (the doctor groups by pod) */
    bool add_pod = t->last_inference && im_labels_get(ls, "pod") == NULL;
    im_lb_load(&x->t->lb, ls);
    im_labels_unref(ls);
    im_lb_set(&x->t->lb, "instance", 8, x->ep->target, strlen(x->ep->target));
    if (add_pod) im_lb_set(&x->t->lb, "pod", 3, x->ep->target, strlen(x->ep->target));
    ls = im_lb_build(&x->t->lb);
    int64_t ts = x->now_ms;
    promql_memstore_add(x->t->ms, ls, ts, e->value);
    if (x->t->record) record_sample(x->t->record, ls, e->value, ts);
    im_labels_unref(ls);
    x->ep->samples++;
    return 0;
}

static void ingest(top_t *t, top_endpoint_t *ep, const char *body, size_t len, const char *ctype,
                   int64_t now_ms)
{
    ingest_t x = {t, ep, now_ms, false, false, NULL};
    ep->samples = 0;
    t->last_name[0] = '\0';
    expo_format_t f = ctype && strstr(ctype, "openmetrics") ? EXPO_OPENMETRICS_1 : EXPO_TEXT_004;
    expo_limits_t lim = {0};
    lim.max_body_bytes = t->o.max_body_bytes;
    im_err_t err;
    int rc = expo_parse(body, len, f, &(expo_callbacks_t){on_sample, NULL}, &x, &lim, &err);
    if (rc != IM_OK) {
        ep->state = TOP_EP_NOT_ENGINE;
        snprintf(ep->error, sizeof ep->error, "not a metrics exposition: line %d: %.180s", err.line,
                 err.msg);
        return;
    }
    if (x.engine) {
        ep->state = TOP_EP_ENGINE;
        ep->kind = x.kind;
        ep->error[0] = '\0';
    } else if (x.gpu) {
        ep->state = TOP_EP_GPU;
        ep->kind = "dcgm";
        ep->error[0] = '\0';
    } else {
        ep->state = TOP_EP_NOT_ENGINE;
        ep->kind = NULL;
        snprintf(ep->error, sizeof ep->error,
                 "not an inference engine: %zu samples, none of an engine the serving model "
                 "knows (vLLM, SGLang, ...; see docs/engines.md) nor dcgm-exporter's",
                 ep->samples);
    }
}

void top_scrape(top_t *t, int64_t now_ms)
{
    CURLM *m = curl_multi_init();
    fetch_t *fs = im_calloc(t->neps ? t->neps : 1, sizeof *fs);
    for (size_t i = 0; i < t->neps; i++) {
        fetch_t *f = &fs[i];
        im_buf_init(&f->body, t->o.max_body_bytes);
        f->h = curl_easy_init();
        if (!f->h) {
            f->setup_failed = true;
            snprintf(f->ebuf, sizeof f->ebuf, "cannot initialise libcurl");
            continue;
        }
        curl_easy_setopt(f->h, CURLOPT_URL, t->eps[i].url);
        curl_easy_setopt(f->h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(f->h, CURLOPT_WRITEDATA, &f->body);
        curl_easy_setopt(f->h, CURLOPT_TIMEOUT_MS, (long)t->o.timeout_ms);
        curl_easy_setopt(f->h, CURLOPT_ERRORBUFFER, f->ebuf);
        curl_easy_setopt(f->h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(f->h, CURLOPT_ACCEPT_ENCODING, "");
        curl_easy_setopt(f->h, CURLOPT_USERAGENT, "infermon-top");
        curl_easy_setopt(f->h, CURLOPT_PRIVATE, (void *)f);
        f->hdrs = curl_slist_append(NULL, "Accept: text/plain;version=0.0.4;q=1,*/*;q=0.1");
        cfg_http_client_t hc;
        cfg_http_client_init(&hc);
        im_err_t err;
        if (cfg_http_client_apply(&hc, f->h, &f->hdrs, &err) != IM_OK) {
            f->setup_failed = true;
            snprintf(f->ebuf, sizeof f->ebuf, "%.200s", err.msg);
        }
        cfg_http_client_free(&hc);
        curl_easy_setopt(f->h, CURLOPT_HTTPHEADER, f->hdrs);
        if (!f->setup_failed) curl_multi_add_handle(m, f->h);
    }
    int running = 1;
    while (running) {
        if (curl_multi_perform(m, &running) != CURLM_OK) break;
        if (running) curl_multi_poll(m, NULL, 0, 100, NULL);
    }
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(m, &left)))
        if (msg->msg == CURLMSG_DONE) {
            fetch_t *f = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&f);
            if (f) {
                f->done = true;
                f->cc = msg->data.result;
            }
        }
    for (size_t i = 0; i < t->neps; i++) {
        fetch_t *f = &fs[i];
        top_endpoint_t *ep = &t->eps[i];
        if (!f->h || f->setup_failed) {
            ep->state = TOP_EP_DOWN;
            snprintf(ep->error, sizeof ep->error, "%s", f->ebuf);
        } else {
            long status = 0;
            char *ct = NULL;
            double tt = 0;
            curl_easy_getinfo(f->h, CURLINFO_RESPONSE_CODE, &status);
            curl_easy_getinfo(f->h, CURLINFO_CONTENT_TYPE, &ct);
            curl_easy_getinfo(f->h, CURLINFO_TOTAL_TIME, &tt);
            ep->fetch_s = tt;
            CURLcode cc = f->done ? f->cc : CURLE_OPERATION_TIMEDOUT;
            if (cc == CURLE_WRITE_ERROR) {
                ep->state = TOP_EP_DOWN;
                snprintf(ep->error, sizeof ep->error,
                         "body larger than %zu bytes (raise --max-body-bytes)",
                         t->o.max_body_bytes);
            } else if (cc != CURLE_OK || f->ebuf[0]) {
                ep->state = TOP_EP_DOWN;
                snprintf(ep->error, sizeof ep->error, "%s",
                         f->ebuf[0] ? f->ebuf : curl_easy_strerror(cc));
            } else if (status < 200 || status > 299) {
                ep->state = TOP_EP_DOWN;
                snprintf(ep->error, sizeof ep->error, "HTTP status %ld from %s", status, ep->url);
            } else {
                ingest(t, ep, f->body.data ? f->body.data : "", f->body.len, ct, now_ms);
            }
            curl_multi_remove_handle(m, f->h);
        }
        if (f->h) curl_easy_cleanup(f->h);
        curl_slist_free_all(f->hdrs);
        im_buf_free(&f->body);
    }
    im_free(fs);
    curl_multi_cleanup(m);
    t->scrapes++;
    if (t->first_ms < 0) {
        t->first_ms = now_ms;
        t->doc.next_ms = now_ms + t->o.doctor_interval_ms;
    }
    promql_memstore_drop_before(t->ms, now_ms - t->o.long_ms - 2 * t->o.interval_ms);
    if (t->record) fflush(t->record);
}

/* ---- The doctor ---- */

void top_doctor_step(top_t *t, int64_t now_ms, bool force)
{
    if (!t->doc.enabled || t->first_ms < 0 || (!force && now_ms < t->doc.next_ms)) return;
    llm_doctor_report_free(&t->rep);
    t->doc.report = NULL;
    llm_doctor_opts_t o = {0};
    o.backend = t->qb;
    o.at_ms = now_ms;
    o.window_ms = t->o.long_ms;
    o.cfg = &t->dcfg;
    im_err_t err;
    im_err_clear(&err);
    int64_t t0 = im_mono_ns();
    im_rc rc = llm_doctor_run(&o, &t->rep, &err);
    t->doc.run_ms = (double)(im_mono_ns() - t0) / 1e6;
    t->doc.ran = true;
    t->doc.at_ms = now_ms;
    if (rc == IM_OK) {
        t->doc.error[0] = '\0';
        t->doc.report = &t->rep;
    } else {
        snprintf(t->doc.error, sizeof t->doc.error, "%s", err.msg[0] ? err.msg : im_rc_str(rc));
    }
    int64_t wait_ms = t->o.doctor_interval_ms;
    if (t->doc.run_ms * 20 > (double)wait_ms) wait_ms = (int64_t)(t->doc.run_ms * 20);
    t->doc.next_ms = now_ms + wait_ms;
}

/* ---- Queries ---- */

typedef void (*vec_fn)(void *u, const im_labels_t *ls, double v);

static void run_query(top_t *t, int64_t now, const char *expr, vec_fn fn, void *u)
{
    promql_expr_t *e = NULL;
    im_err_t err;
    if (promql_parse(expr, strlen(expr), &e, &err) != IM_OK) abort(); /* a bug in this file */
    promql_result_t r;
    if (promql_eval_instant(t->eng, promql_memstore_queryable(t->ms), e, now, &r, &err) == IM_OK) {
        if (r.type == PROMQL_RESULT_VECTOR)
            for (size_t i = 0; i < r.nseries; i++)
                if (r.series[i].npoints) fn(u, r.series[i].labels, r.series[i].points[0].v);
        promql_result_free(&r);
    }
    promql_expr_free(e);
}

static const char *lval(const im_labels_t *ls, const char *name)
{
    const im_istr_t *s = im_labels_get(ls, name);
    return s ? s->s : "";
}

typedef struct rows {
    top_row_t *r;
    size_t n, cap;
} rows_t;

static top_row_t *row_get(rows_t *rs, const char *model, const char *inst, const char *engine,
                          const char *kind)
{
    for (size_t i = 0; i < rs->n; i++)
        if (strcmp(rs->r[i].model, model) == 0 && strcmp(rs->r[i].kind, kind) == 0 &&
            strcmp(rs->r[i].instance, inst) == 0 && strcmp(rs->r[i].engine, engine) == 0)
            return &rs->r[i];
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? rs->cap * 2 : 16;
        rs->r = im_realloc(rs->r, rs->cap * sizeof *rs->r);
    }
    top_row_t *r = &rs->r[rs->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->model, sizeof r->model, "%s", model);
    snprintf(r->instance, sizeof r->instance, "%s", inst);
    snprintf(r->engine, sizeof r->engine, "%s", engine);
    r->kind = kind;
    double nan = NAN;
    r->running = r->waiting = r->kv = r->preempt_s = r->tok_in_s = r->tok_out_s = nan;
    r->prefix_hit = r->fail_s = nan;
    for (int w = 0; w < 2; w++) {
        r->ttft[w] = (top_pct_t){nan, nan, nan};
        r->itl[w] = (top_pct_t){nan, nan, nan};
    }
    for (int k = 0; k < TOP_SPARK; k++) r->spark[k] = nan;
    return r;
}

typedef struct qctx {
    rows_t *rs;
    const char *kind, *model_label;
    bool merged;
    top_sig_t sig;
    int slot; /* histograms: window * 3 + quantile index */
} qctx_t;

static double *field(top_row_t *r, top_sig_t s, int slot)
{
    switch (s) {
    case SIG_RUNNING: return &r->running;
    case SIG_WAITING: return &r->waiting;
    case SIG_KV: return &r->kv;
    case SIG_PREEMPT: return &r->preempt_s;
    case SIG_TOK_IN: return &r->tok_in_s;
    case SIG_TOK_OUT: return &r->tok_out_s;
    case SIG_PREFIX_HITS:
    case SIG_PREFIX_RATE: return &r->prefix_hit;
    case SIG_FAIL: return &r->fail_s;
    case SIG_TTFT:
    case SIG_ITL: {
        top_pct_t *p = s == SIG_TTFT ? &r->ttft[slot / 3] : &r->itl[slot / 3];
        return slot % 3 == 0 ? &p->p50 : slot % 3 == 1 ? &p->p95 : &p->p99;
    }
    default: return NULL;
    }
}

static void on_value(void *u, const im_labels_t *ls, double v)
{
    qctx_t *q = u;
    top_row_t *r = row_get(q->rs, lval(ls, q->model_label), q->merged ? "" : lval(ls, "instance"),
                           q->merged ? "" : lval(ls, "engine"), q->kind);
    double *f = field(r, q->sig, q->slot);
    if (f && isnan(*f)) *f = v; /* the first name in preference order wins */
}

/* The column sig of engine e from mapping m (one of its names that an
 * endpoint exposes); hits_of: for prefix hits, the queries mapping of the
 * same rank. */
static void query_map(top_t *t, int64_t now, rows_t *rs, const llm_engine_info_t *ei, top_sig_t sig,
                      const llm_signal_map_t *m, const llm_signal_map_t *queries, bool merged)
{
    char by[160], sel[256], expr[900];
    snprintf(by, sizeof by, merged ? "%s" : "%s, instance, engine", ei->model_label);
    snprintf(sel, sizeof sel, m->selector[0] ? "%s{%s}" : "%s", m->name, m->selector);
    long sw = (long)(t->o.short_ms / 1000), lw = (long)(t->o.long_ms / 1000);
    qctx_t q = {rs, ei->id, ei->model_label, merged, sig, 0};
    bool counter = m->type == LLM_MTYPE_COUNTER;
    switch (sig) {
    case SIG_RUNNING:
    case SIG_WAITING: snprintf(expr, sizeof expr, "sum by (%s) (%s)", by, sel); break;
    case SIG_KV:
        snprintf(expr, sizeof expr, "%s by (%s) (%s)", merged ? "max" : "avg", by, sel);
        break;
    case SIG_PREFIX_RATE: snprintf(expr, sizeof expr, "avg by (%s) (%s)", by, sel); break;
    case SIG_PREFIX_HITS:
        if (!queries || !counter) return;
        snprintf(expr, sizeof expr, "sum by (%s) (rate(%s[%lds])) / sum by (%s) (rate(%s[%lds]))",
                 by, sel, sw, by, queries->name, sw);
        break;
    case SIG_PREEMPT:
    case SIG_TOK_IN:
    case SIG_TOK_OUT:
    case SIG_FAIL:
        if (!counter) return; /* a per-second column needs a counter */
        snprintf(expr, sizeof expr, "sum by (%s) (rate(%s[%lds]))", by, sel, sw);
        break;
    case SIG_TTFT:
    case SIG_ITL: {
        static const char *const qs[3] = {"0.5", "0.95", "0.99"};
        if (m->type != LLM_MTYPE_HISTOGRAM) return;
        for (int w = 0; w < 2; w++)
            for (int k = 0; k < 3; k++) {
                /* merged buckets: rates summed by le across replicas, then one quantile */
                snprintf(expr, sizeof expr,
                         "histogram_quantile(%s, sum by (le, %s) (rate(%s_bucket[%lds])))", qs[k],
                         by, m->name, w ? lw : sw);
                q.slot = w * 3 + k;
                run_query(t, now, expr, on_value, &q);
            }
        return;
    }
    default: return;
    }
    run_query(t, now, expr, on_value, &q);
}

/* Is mapping m (a pointer into the model) exposed by some endpoint? */
static bool seen(const top_t *t, const llm_signal_map_t *m)
{
    for (size_t i = 0; i < llm_serving_map_count(t->model); i++)
        if (llm_serving_map(t->model, i) == m) return t->names_seen[i];
    return false;
}

/* Every column of every inference engine some endpoint is, each from the
 * first of the engine's names (in the model's preference order) exposed. */
static void query_engines(top_t *t, int64_t now, rows_t *rs, bool merged)
{
    for (int e = 0; e < llm_serving_engine_count(t->model); e++) {
        const llm_engine_info_t *ei = llm_serving_engine(t->model, e);
        bool present = false;
        for (size_t i = 0; i < t->neps && !present; i++)
            present = t->eps[i].state == TOP_EP_ENGINE && t->eps[i].kind &&
                      strcmp(t->eps[i].kind, ei->id) == 0;
        if (!present || !ei->model_label || !*ei->model_label) continue;
        for (int sig = 0; sig < SIG_COUNT; sig++) {
            const llm_signal_map_t *ms[8], *qs[8];
            size_t n = llm_serving_maps_for(t->model, e, top_sig_model[sig], ms, 8);
            size_t nq = sig == SIG_PREFIX_HITS
                            ? llm_serving_maps_for(t->model, e, LLM_SIG_PREFIX_QUERIES, qs, 8)
                            : 0;
            for (size_t k = 0; k < n && k < 8; k++)
                if (seen(t, ms[k]))
                    query_map(t, now, rs, ei, (top_sig_t)sig, ms[k],
                              k < nq && seen(t, qs[k]) ? qs[k] : NULL, merged);
        }
    }
}

/* ---- GPUs ---- */

typedef struct gctx {
    top_t *t;
    int field;
} gctx_t;

static top_gpu_t *gpu_get(top_view_t *v, size_t *cap, const im_labels_t *ls)
{
    const char *inst = lval(ls, "instance"), *gpu = lval(ls, "gpu");
    for (size_t i = 0; i < v->ngpus; i++)
        if (strcmp(v->gpus[i].instance, inst) == 0 && strcmp(v->gpus[i].gpu, gpu) == 0)
            return &v->gpus[i];
    if (v->ngpus == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        v->gpus = im_realloc(v->gpus, *cap * sizeof *v->gpus);
    }
    top_gpu_t *g = &v->gpus[v->ngpus++];
    memset(g, 0, sizeof *g);
    snprintf(g->instance, sizeof g->instance, "%s", inst);
    snprintf(g->gpu, sizeof g->gpu, "%s", gpu);
    snprintf(g->model, sizeof g->model, "%s", lval(ls, "modelName"));
    snprintf(g->pod, sizeof g->pod, "%s", lval(ls, "pod"));
    g->util = g->mem_copy = g->mem_used_ratio = g->power_w = g->temp_c = NAN;
    g->mem_used_bytes = g->mem_total_bytes = NAN;
    return g;
}

typedef struct gq {
    top_view_t *v;
    size_t *cap;
    int f;
} gq_t;

static void on_gpu(void *u, const im_labels_t *ls, double val)
{
    gq_t *q = u;
    top_gpu_t *g = gpu_get(q->v, q->cap, ls);
    double *d[] = {&g->util,    &g->mem_copy, &g->mem_used_bytes,
                   &g->power_w, &g->temp_c,   &g->mem_total_bytes};
    *d[q->f] = val;
}

static int gpu_cmp(const void *a, const void *b)
{
    const top_gpu_t *x = a, *y = b;
    int c = strcmp(x->instance, y->instance);
    if (c) return c;
    long gx = strtol(x->gpu, NULL, 10), gy = strtol(y->gpu, NULL, 10);
    return gx < gy ? -1 : gx > gy;
}

/* ---- Outliers: a replica far from the median of its peers ---- */

static double median(double *a, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && a[j] < a[j - 1]; j--) {
            double x = a[j];
            a[j] = a[j - 1];
            a[j - 1] = x;
        }
    return n ? (n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2) : NAN;
}

static void top_outlier(top_row_t *rows, size_t lo, size_t hi)
{
    size_t n = hi - lo;
    if (n < 3) return;
    double *peers = im_malloc(n * sizeof *peers);
    for (int what = 0; what < 3; what++) {
        for (size_t i = lo; i < hi; i++) {
            size_t k = 0;
            for (size_t j = lo; j < hi; j++) {
                if (j == i) continue;
                double x = what == 0   ? rows[j].ttft[1].p95
                           : what == 1 ? rows[j].waiting
                                       : rows[j].kv;
                if (!isnan(x)) peers[k++] = x;
            }
            double me = what == 0 ? rows[i].ttft[1].p95 : what == 1 ? rows[i].waiting : rows[i].kv;
            if (k < 2 || isnan(me) || rows[i].outlier[0]) continue;
            double md = median(peers, k);
            bool out = what == 0   ? me > 2 * md && me - md > 0.2
                       : what == 1 ? me > 2 * md + 10
                                   : me - md > 0.3;
            if (out)
                snprintf(rows[i].outlier, sizeof rows[i].outlier, "%s %.3g vs peers' median %.3g",
                         what == 0   ? "TTFT p95"
                         : what == 1 ? "waiting"
                                     : "KV use",
                         me, md);
        }
    }
    im_free(peers);
}

/* ---- The view ---- */

bool top_row_same_group(const top_row_t *a, const top_row_t *b)
{
    return strcmp(a->model, b->model) == 0 && strcmp(a->kind, b->kind) == 0;
}

static int row_cmp(const void *a, const void *b)
{
    const top_row_t *x = a, *y = b;
    int c = strcmp(x->model, y->model);
    if (c) return c;
    c = strcmp(x->kind, y->kind); /* a group is a model on one engine kind */
    if (c) return c;
    if (!x->instance[0] != !y->instance[0]) return x->instance[0] ? 1 : -1; /* merged first */
    c = strcmp(x->instance, y->instance);
    if (c) return c;
    if (strlen(x->engine) != strlen(y->engine))
        return strlen(x->engine) < strlen(y->engine) ? -1 : 1;
    return strcmp(x->engine, y->engine);
}

static void sparks_update(top_t *t, top_row_t *r, int64_t now)
{
    uint64_t key =
        im_hash(r->model, strlen(r->model)) ^ (im_hash(r->instance, strlen(r->instance)) * 31) ^
        (im_hash(r->engine, strlen(r->engine)) * 131) ^ (im_hash(r->kind, strlen(r->kind)) * 8191);
    spark_hist_t *h = NULL;
    for (size_t i = 0; i < t->nsparks; i++)
        if (t->sparks[i].key == key) h = &t->sparks[i];
    if (!h) {
        t->sparks = im_realloc(t->sparks, (t->nsparks + 1) * sizeof *t->sparks);
        h = &t->sparks[t->nsparks++];
        h->key = key;
        h->last_t = -1;
        for (int k = 0; k < TOP_SPARK; k++) h->v[k] = NAN;
    }
    if (h->last_t != now) { /* one point per computed view */
        memmove(h->v, h->v + 1, (TOP_SPARK - 1) * sizeof h->v[0]);
        h->v[TOP_SPARK - 1] = r->tok_out_s;
        h->last_t = now;
    }
    memcpy(r->spark, h->v, sizeof r->spark);
}

const top_view_t *top_compute(top_t *t, int64_t now_ms)
{
    top_view_t *v = &t->view;
    view_clear(v);
    rows_t rs = {0};
    for (int merged = 1; merged >= 0; merged--) query_engines(t, now_ms, &rs, merged != 0);
    /* a merged row exists only where a model has replicas */
    if (rs.n) qsort(rs.r, rs.n, sizeof *rs.r, row_cmp);
    for (size_t i = 0; i < rs.n;) {
        size_t j = i + 1;
        while (j < rs.n && top_row_same_group(&rs.r[j], &rs.r[i])) j++;
        size_t lo = rs.r[i].instance[0] ? i : i + 1;
        rs.r[i].replicas = (int)(j - lo);
        top_outlier(rs.r, lo, j);
        i = j;
    }
    for (size_t i = 0; i < rs.n; i++) sparks_update(t, &rs.r[i], now_ms);
    v->rows = rs.r;
    v->nrows = rs.n;
    /* GPUs from dcgm-exporter */
    static const char *const gq_exprs[] = {
        "avg by (instance, gpu, modelName, pod) (DCGM_FI_DEV_GPU_UTIL)",
        "avg by (instance, gpu, modelName, pod) (DCGM_FI_DEV_MEM_COPY_UTIL)",
        /* FB_USED and FB_FREE are MiB: bytes in the JSON */
        "sum by (instance, gpu, modelName, pod) (DCGM_FI_DEV_FB_USED) * 1048576",
        "avg by (instance, gpu, modelName, pod) (DCGM_FI_DEV_POWER_USAGE)",
        "avg by (instance, gpu, modelName, pod) (DCGM_FI_DEV_GPU_TEMP)",
        /* one literal in parentheses: the two lines are one expression */
        ("(sum by (instance, gpu, modelName, pod) (DCGM_FI_DEV_FB_USED) + sum by (instance, gpu, "
         "modelName, pod) (DCGM_FI_DEV_FB_FREE)) * 1048576"),
    };
    size_t gcap = 0;
    bool any_gpu = false;
    for (size_t i = 0; i < t->neps; i++) any_gpu |= t->eps[i].state == TOP_EP_GPU;
    if (any_gpu)
        for (int f = 0; f < (int)IM_ARRAY_LEN(gq_exprs); f++) {
            gq_t q = {v, &gcap, f};
            run_query(t, now_ms, gq_exprs[f], on_gpu, &q);
        }
    for (size_t i = 0; i < v->ngpus; i++) {
        top_gpu_t *g = &v->gpus[i];
        if (g->mem_total_bytes > 0) g->mem_used_ratio = g->mem_used_bytes / g->mem_total_bytes;
    }
    if (v->ngpus) qsort(v->gpus, v->ngpus, sizeof *v->gpus, gpu_cmp);
    v->t_ms = now_ms;
    v->short_ms = t->o.short_ms;
    v->long_ms = t->o.long_ms;
    v->span_ms = t->first_ms < 0 ? 0 : now_ms - t->first_ms;
    v->scrapes = t->scrapes;
    v->eps = t->eps;
    v->neps = t->neps;
    v->doctor = &t->doc;
    return v;
}
