/* api_search.c — Prometheus 3's search API (--enable-feature=search-api):
 * /api/v1/search/metric_names, /api/v1/search/label_names and
 * /api/v1/search/label_values (label=), GET or POST.
 *
 * Each reads the names or values of the series match[] selects over
 * [start, end] (default the last hour), keeps those a search[] term accepts
 * (any term; all without search[]), orders them (sort_by alpha, the default, or
 * score) and answers NDJSON (application/x-ndjson): batches of batch_size
 * results, `{"results":[{"name":…}]}` (`value` for label values, `score` with
 * include_score, `type`/`help`/`unit` with include_metadata on metric names),
 * at least one batch even when empty, then the trailer
 * `{"status":"success","has_more":B}`, B saying whether limit cut results off.
 * Bad parameters are a 400 in the API's JSON error envelope before any line.
 *
 * Matching (case_sensitive, default true; ASCII case folding):
 * - fuzz_alg=subsequence (default): a value starting with the term scores 1;
 *   otherwise every character of the term must appear in the value in order;
 *   the score (0, 0.9] rewards a tight match (term length over the shortest
 *   window holding it) and a term covering much of the value; accepted when it
 *   reaches fuzz_threshold/100.
 * - fuzz_alg=jarowinkler: a value starting with the term scores 1, one
 *   containing it 0.9; else, when fuzz_threshold > 0, its Jaro-Winkler
 *   similarity to the term (prefix scale 0.1, up to 4 characters) is the score,
 *   accepted when it reaches fuzz_threshold/100.
 * The two strategies are Prometheus'; the subsequence score is our own formula
 * (Prometheus documents only its shape), so scores of non-prefix matches differ
 * from Prometheus' while what matches at threshold 0 does not.
 *
 * The whole answer is built before it is sent (limit, capped by
 * --web.search.max-limit, bounds it). */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_int.h"
#include "scrape/scrape.h"
#include "util/fmtfloat.h"
#include "util/mem.h"
#include "util/timeutil.h"

#define SEARCH_MAX_TERMS        100 /* search[] terms in one request */
#define SEARCH_DEFAULT_LIMIT    100
#define SEARCH_DEFAULT_BATCH    100
#define SEARCH_MAX_LIMIT_DEF    10000
#define SEARCH_JW_MAX_LEN       1024 /* longer values are compared on their first 1024 bytes */
#define SEARCH_DEFAULT_RANGE_MS (60 * IM_MS_PER_MINUTE)

typedef enum { ALG_SUBSEQUENCE, ALG_JAROWINKLER } search_alg_t;

typedef struct search_params {
    const char *terms[SEARCH_MAX_TERMS]; /* borrowed from the request */
    size_t nterms;
    int threshold; /* 0..100 */
    search_alg_t alg;
    bool case_sensitive, include_score, include_metadata;
    bool by_score, desc;
    int64_t limit, batch;
    int64_t start, end;
} search_params_t;

typedef struct hit {
    const im_istr_t *s; /* owned reference */
    double score;
} hit_t;

/* ---- Parameters ---- */

/* Go's strconv.ParseBool words. */
static bool parse_bool(const char *v, bool *out)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < IM_ARRAY_LEN(t); i++) {
        if (!strcmp(v, t[i])) return *out = true;
        if (!strcmp(v, f[i])) return !(*out = false);
    }
    return false;
}

static bool parse_int(const char *v, int64_t *out)
{
    if (!*v) return false;
    char *e;
    long long x = strtoll(v, &e, 10);
    if (*e || x < -1000000000000LL || x > 1000000000000LL) return false;
    *out = x;
    return true;
}

/* Fills p from the request; NULL, or the 400 message in msg. */
static const char *parse_params(http_server_t *s, http__req_t *r, bool metric_names,
                                search_params_t *p, char *msg, size_t msz)
{
    memset(p, 0, sizeof *p);
    p->case_sensitive = true;
    p->limit = SEARCH_DEFAULT_LIMIT;
    p->batch = SEARCH_DEFAULT_BATCH;
    for (size_t i = 0; i < r->nparams; i++) {
        if (strcmp(r->params[i].k, "search[]")) continue;
        if (p->nterms == SEARCH_MAX_TERMS) {
            snprintf(msg, msz, "too many search[] terms: at most %d", SEARCH_MAX_TERMS);
            return msg;
        }
        p->terms[p->nterms++] = r->params[i].v;
    }
    const char *v;
    int64_t x;
    if ((v = http__param(r, "fuzz_threshold")) && *v) {
        if (!parse_int(v, &x) || x < 0 || x > 100) {
            snprintf(msg, msz, "invalid fuzz_threshold \"%.200s\": must be 0-100", v);
            return msg;
        }
        p->threshold = (int)x;
    }
    if ((v = http__param(r, "fuzz_alg")) && *v) {
        if (!strcmp(v, "subsequence"))
            p->alg = ALG_SUBSEQUENCE;
        else if (!strcmp(v, "jarowinkler"))
            p->alg = ALG_JAROWINKLER;
        else {
            snprintf(msg, msz,
                     "unsupported fuzz_alg \"%.200s\": must be one of [subsequence jarowinkler]",
                     v);
            return msg;
        }
    }
    static const char *const bools[] = {"case_sensitive", "include_score", "include_metadata"};
    bool *dst[] = {&p->case_sensitive, &p->include_score, &p->include_metadata};
    for (size_t i = 0; i < IM_ARRAY_LEN(bools); i++) {
        if (i == 2 && !metric_names) break; /* include_metadata: metric names only */
        if ((v = http__param(r, bools[i])) && *v && !parse_bool(v, dst[i])) {
            snprintf(msg, msz, "invalid %s \"%.200s\": must be boolean", bools[i], v);
            return msg;
        }
    }
    const char *sort_by = http__param(r, "sort_by"), *sort_dir = http__param(r, "sort_dir");
    if (sort_by && !*sort_by) sort_by = NULL;
    if (sort_dir && !*sort_dir) sort_dir = NULL;
    if (sort_by && strcmp(sort_by, "alpha") && strcmp(sort_by, "score")) {
        snprintf(msg, msz, "invalid sort_by \"%.200s\": must be \"alpha\" or \"score\"", sort_by);
        return msg;
    }
    if (sort_dir && !sort_by) return "sort_dir is only valid when sort_by is set";
    p->by_score = sort_by && !strcmp(sort_by, "score");
    if (sort_dir && p->by_score) return "sort_dir is not supported for sort_by=score";
    if (sort_dir && strcmp(sort_dir, "asc") && strcmp(sort_dir, "dsc")) {
        snprintf(msg, msz, "invalid sort_dir \"%.200s\": must be \"asc\" or \"dsc\"", sort_dir);
        return msg;
    }
    p->desc = sort_dir && !strcmp(sort_dir, "dsc");
    if (p->by_score && p->nterms == 0) return "sort_by=score requires search[] to be set";
    if ((v = http__param(r, "limit")) && *v) {
        if (!parse_int(v, &x) || x < 0) {
            snprintf(msg, msz, "invalid limit \"%.200s\": must be a non-negative integer", v);
            return msg;
        }
        if (x > 0) p->limit = x;
    }
    int64_t cap = s->opts.search_max_limit > 0 ? s->opts.search_max_limit : SEARCH_MAX_LIMIT_DEF;
    if (p->limit > cap) p->limit = cap;
    if ((v = http__param(r, "batch_size")) && *v) {
        if (!parse_int(v, &x) || x < 0) {
            snprintf(msg, msz, "invalid batch_size \"%.200s\": must be a non-negative integer", v);
            return msg;
        }
        if (x > 0) p->batch = x;
    }
    return NULL;
}

/* ---- Matching ---- */

static char fold(char c, bool cs)
{
    return !cs && c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

static bool has_prefix(const char *v, size_t vl, const char *t, size_t tl, bool cs)
{
    if (tl > vl) return false;
    for (size_t i = 0; i < tl; i++)
        if (fold(v[i], cs) != fold(t[i], cs)) return false;
    return true;
}

static bool contains(const char *v, size_t vl, const char *t, size_t tl, bool cs)
{
    for (size_t i = 0; i + tl <= vl; i++)
        if (has_prefix(v + i, vl - i, t, tl, cs)) return true;
    return false;
}

/* The subsequence score (see the top of the file); 0 = not a subsequence. */
static double subsequence_score(const char *v, size_t vl, const char *t, size_t tl, bool cs)
{
    size_t best = 0; /* shortest window holding t in order */
    for (size_t st = 0; st < vl; st++) {
        if (fold(v[st], cs) != fold(t[0], cs)) continue;
        size_t k = 1, i = st + 1;
        for (; i < vl && k < tl; i++)
            if (fold(v[i], cs) == fold(t[k], cs)) k++;
        if (k < tl) break; /* no later start can do better: it has fewer characters left */
        size_t w = i - st;
        if (!best || w < best) best = w;
    }
    if (!best) return 0;
    double tight = (double)tl / (double)best, cover = (double)tl / (double)vl;
    return 0.9 * tight * (0.5 + 0.5 * cover);
}

/* Jaro-Winkler similarity of a and b (each at most SEARCH_JW_MAX_LEN bytes). */
static double jaro_winkler(const char *a, size_t al, const char *b, size_t bl, bool cs)
{
    if (al > SEARCH_JW_MAX_LEN) al = SEARCH_JW_MAX_LEN;
    if (bl > SEARCH_JW_MAX_LEN) bl = SEARCH_JW_MAX_LEN;
    if (!al && !bl) return 1;
    if (!al || !bl) return 0;
    bool am[SEARCH_JW_MAX_LEN], bm[SEARCH_JW_MAX_LEN];
    memset(am, 0, al);
    memset(bm, 0, bl);
    size_t win = IM_MAX(al, bl) / 2;
    win = win ? win - 1 : 0;
    size_t m = 0;
    for (size_t i = 0; i < al; i++) {
        size_t lo = i > win ? i - win : 0, hi = IM_MIN(i + win + 1, bl);
        for (size_t j = lo; j < hi; j++) {
            if (bm[j] || fold(a[i], cs) != fold(b[j], cs)) continue;
            am[i] = bm[j] = true;
            m++;
            break;
        }
    }
    if (!m) return 0;
    size_t tr = 0, j = 0;
    for (size_t i = 0; i < al; i++) {
        if (!am[i]) continue;
        while (!bm[j]) j++;
        if (fold(a[i], cs) != fold(b[j], cs)) tr++;
        j++;
    }
    double md = (double)m;
    double jaro = (md / (double)al + md / (double)bl + (md - (double)tr / 2.0) / md) / 3.0;
    size_t pre = 0;
    while (pre < 4 && pre < al && pre < bl && fold(a[pre], cs) == fold(b[pre], cs)) pre++;
    return jaro + (double)pre * 0.1 * (1.0 - jaro);
}

/* Whether the value is accepted, and its score (the best of the terms). */
static bool term_accept(const search_params_t *p, const char *v, size_t vl, double *score)
{
    if (p->nterms == 0) {
        *score = 1;
        return true;
    }
    bool ok = false;
    double best = 0, th = (double)p->threshold / 100.0;
    for (size_t i = 0; i < p->nterms; i++) {
        const char *t = p->terms[i];
        size_t tl = strlen(t);
        double sc = 0;
        bool hit = false;
        if (tl == 0 || has_prefix(v, vl, t, tl, p->case_sensitive)) {
            sc = 1, hit = true;
        } else if (p->alg == ALG_SUBSEQUENCE) {
            sc = subsequence_score(v, vl, t, tl, p->case_sensitive);
            hit = sc > 0 && sc >= th;
        } else if (contains(v, vl, t, tl, p->case_sensitive)) {
            sc = 0.9, hit = true;
        } else if (p->threshold > 0) {
            sc = jaro_winkler(t, tl, v, vl, p->case_sensitive);
            hit = sc >= th;
        }
        if (hit) {
            ok = true;
            if (sc > best) best = sc;
        }
    }
    *score = best;
    return ok;
}

static int cmp_str(const im_istr_t *x, const im_istr_t *y)
{
    size_t n = IM_MIN(x->len, y->len);
    int c = memcmp(x->s, y->s, n);
    return c ? c : (x->len < y->len ? -1 : x->len > y->len);
}

static int cmp_score(const void *a, const void *b)
{
    const hit_t *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return cmp_str(x->s, y->s);
}

static int cmp_desc(const void *a, const void *b)
{
    return cmp_str(((const hit_t *)b)->s, ((const hit_t *)a)->s);
}

/* ---- The endpoints ---- */

static const scrape_metadata_t *find_meta(const scrape_metadata_t *md, size_t n, const im_istr_t *s)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(md[i].metric) == s->len && !memcmp(md[i].metric, s->s, s->len)) return &md[i];
    return NULL;
}

static enum MHD_Result do_search(http_server_t *s, http__req_t *r, int kind)
{
    enum { METRICS, NAMES, VALUES };
    if (!s->opts.enable_search) return http__send_error(s, r, "unavailable", "search API disabled");
    if (s->opts.agent)
        return http__send_error(s, r, "execution", "unavailable with Prometheus Agent");
    if (s->opts.backend)
        return http__send_error(s, r, "unavailable",
                                "search API: not available with --query.backend-url (it reads "
                                "the local store)");
    search_params_t p;
    char msg[400];
    const char *bad = parse_params(s, r, kind == METRICS, &p, msg, sizeof msg);
    if (bad) return http__send_error(s, r, "bad_data", bad);
    const char *label = NULL;
    if (kind == VALUES) {
        label = http__param(r, "label");
        if (!label || !*label)
            return http__send_error(s, r, "bad_data", "missing required parameter \"label\"");
    } else if (kind == METRICS) {
        label = "__name__";
    }
    enum MHD_Result ret = MHD_NO;
    int64_t now = im_now_ms();
    if (!http__get_time(s, r, "start", now - SEARCH_DEFAULT_RANGE_MS, &p.start, &ret)) return ret;
    if (!http__get_time(s, r, "end", now, &p.end, &ret)) return ret;
    const im_istr_t **all;
    size_t nall;
    if (!http__label_strings(s, r, label, p.start, p.end, &all, &nall, &ret)) return ret;
    hit_t *hits = im_malloc((nall ? nall : 1) * sizeof *hits);
    size_t nh = 0;
    for (size_t i = 0; i < nall; i++) {
        double sc;
        if (term_accept(&p, all[i]->s, all[i]->len, &sc)) {
            hits[nh].s = all[i];
            hits[nh++].score = sc;
        } else {
            im_istr_unref(all[i]);
        }
    }
    im_free(all);
    /* all[] came sorted ascending */
    if (p.by_score && nh > 1) qsort(hits, nh, sizeof *hits, cmp_score);
    if (p.desc && nh > 1) qsort(hits, nh, sizeof *hits, cmp_desc);
    size_t emit = nh < (size_t)p.limit ? nh : (size_t)p.limit;
    scrape_metadata_t *md = NULL;
    size_t nmd = 0;
    if (p.include_metadata && s->opts.scrape) scrape_manager_metadata(s->opts.scrape, &md, &nmd);
    im_buf_t b;
    im_buf_init(&b, 0);
    const char *key = kind == VALUES ? "{\"value\":" : "{\"name\":";
    for (size_t i = 0; i == 0 || i < emit; i += (size_t)p.batch) {
        (void)im_buf_puts(&b, "{\"results\":[");
        for (size_t k = i; k < emit && k < i + (size_t)p.batch; k++) {
            if (k > i) (void)im_buf_putc(&b, ',');
            (void)im_buf_puts(&b, key);
            im_json_string(&b, hits[k].s->s, hits[k].s->len, IM_JSON_GO);
            if (p.include_score) {
                char num[40];
                im_fmt_float_api(hits[k].score, num, sizeof num);
                (void)im_buf_printf(&b, ",\"score\":%s", num);
            }
            const scrape_metadata_t *m = md ? find_meta(md, nmd, hits[k].s) : NULL;
            const char *f[][2] = {
                {"type", m ? m->type : ""}, {"help", m ? m->help : ""}, {"unit", m ? m->unit : ""}};
            for (size_t j = 0; m && j < IM_ARRAY_LEN(f); j++) {
                if (!*f[j][1]) continue;
                (void)im_buf_printf(&b, ",\"%s\":", f[j][0]);
                im_json_string(&b, f[j][1], strlen(f[j][1]), IM_JSON_GO);
            }
            (void)im_buf_putc(&b, '}');
        }
        (void)im_buf_puts(&b, "]}\n");
        if (emit == 0) break;
    }
    (void)im_buf_printf(&b, "{\"status\":\"success\",\"has_more\":%s}\n",
                        nh > emit ? "true" : "false");
    for (size_t i = 0; i < nh; i++) im_istr_unref(hits[i].s);
    im_free(hits);
    scrape_metadata_free(md, nmd);
    return http__send(s, r, 200, "application/x-ndjson; charset=utf-8", &b);
}

enum MHD_Result http__api_search(http_server_t *s, http__req_t *r, const char *path, bool *handled)
{
    *handled = true;
    if (!strcmp(path, "/search/metric_names")) return do_search(s, r, 0);
    if (!strcmp(path, "/search/label_names")) return do_search(s, r, 1);
    if (!strcmp(path, "/search/label_values")) return do_search(s, r, 2);
    *handled = false;
    return MHD_NO;
}
