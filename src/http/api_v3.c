/* api_v3.c — the endpoints Prometheus 3 added to /api/v1 that clients probe:
 * features, format_query, parse_query, query_exemplars, targets/metadata,
 * scrape_pools, status/walreplay, notifications; and buildinfo's version.
 *
 * Each answers in the API's envelope ({"status":"success","data":…}). They read
 * only what the server already has (the config, the scrape manager's targets
 * and metadata, the PromQL language level); nothing here keeps state. What
 * infermon does not have is answered as Prometheus answers when it is off:
 * query_exemplars is an empty list (no exemplar storage), walreplay reports the
 * replay done (the store is open before the server starts). */
#include "util/base.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_int.h"
#include "labels/json.h"
#include "promql/parser.h"
#include "promql/promql.h"
#include "util/fmtfloat.h"
#include "util/timeutil.h"

/* The version /api/v1/status/buildinfo reports. Under compat 3 a Prometheus 3
 * version with infermon's own as semver build metadata (ignored in version
 * comparisons, so Grafana enables what it enables for 3.14); under compat 2
 * infermon's own, as before. */
const char *http__build_version(void)
{
    return promql_lang_default().compat >= 3 ? "3.14.0+infermon.0.1.0" : "0.1.0";
}

/* ---- features ---- */

static void put_bool_map_entry(im_buf_t *b, bool *first, const char *name, bool on)
{
    if (!*first) (void)im_buf_putc(b, ',');
    *first = false;
    im_json_string(b, name, strlen(name), IM_JSON_GO);
    (void)im_buf_puts(b, on ? ":true" : ":false");
}

static enum MHD_Result do_features(http_server_t *s, http__req_t *r)
{
    promql_lang_t l = promql_lang_default();
    bool v3 = l.compat >= 3;
    im_buf_t b;
    im_buf_init(&b, 0);
    bool first = true;
    (void)im_buf_puts(&b, "{\"api\":{");
    static const char *const api[] = {"query_exemplars",  "format_query", "parse_query",
                                      "targets_metadata", "scrape_pools", "notifications"};
    for (size_t i = 0; i < IM_ARRAY_LEN(api); i++) put_bool_map_entry(&b, &first, api[i], true);
    put_bool_map_entry(&b, &first, "remote_write_receiver", s->opts.enable_remote_write);
    put_bool_map_entry(&b, &first, "lifecycle", s->opts.enable_lifecycle);
    put_bool_map_entry(&b, &first, "search", s->opts.enable_search);
    (void)im_buf_puts(&b, "},\"promql\":{");
    first = true;
    put_bool_map_entry(&b, &first, "at_modifier", true);
    put_bool_map_entry(&b, &first, "negative_offset", true);
    put_bool_map_entry(&b, &first, "duration_expr", v3);
    put_bool_map_entry(&b, &first, "left_open_range_selectors", v3);
    put_bool_map_entry(&b, &first, "regex_dot_matches_newline", v3);
    put_bool_map_entry(&b, &first, "experimental_functions", !v3 || l.experimental_functions);
    put_bool_map_entry(&b, &first, "delayed_name_removal", v3 && l.delayed_name_removal);
    put_bool_map_entry(&b, &first, "extended_range_selectors", v3 && l.extended_range_selectors);
    put_bool_map_entry(&b, &first, "binop_fill_modifiers", v3 && l.binop_fill_modifiers);
    put_bool_map_entry(&b, &first, "native_histograms", false);
    (void)im_buf_puts(&b, "},\"promql_functions\":{");
    first = true;
    for (size_t i = 0; i < promql_functions_count; i++) {
        const promql_function_t *f = &promql_functions[i];
        if (f->only_compat && f->only_compat != l.compat) continue;
        put_bool_map_entry(&b, &first, f->name, promql_function_usable(f, &l) == 0);
    }
    (void)im_buf_puts(&b, "},\"promql_operators\":{");
    first = true;
    static const char *const ops[] = {
        "+", "-",  "*",  "/",   "%",  "^",      "==",    "!=",     ">",
        "<", ">=", "<=", "and", "or", "unless", "atan2", "offset", "@"};
    for (size_t i = 0; i < IM_ARRAY_LEN(ops); i++) put_bool_map_entry(&b, &first, ops[i], true);
    static const char *const aggs[] = {"sum",  "avg",     "count",        "min",
                                       "max",  "group",   "stddev",       "stdvar",
                                       "topk", "bottomk", "count_values", "quantile"};
    for (size_t i = 0; i < IM_ARRAY_LEN(aggs); i++) put_bool_map_entry(&b, &first, aggs[i], true);
    put_bool_map_entry(&b, &first, "limitk", v3 && l.experimental_functions);
    put_bool_map_entry(&b, &first, "limit_ratio", v3 && l.experimental_functions);
    (void)im_buf_puts(&b, "},\"service_discovery_providers\":{");
    first = true;
    put_bool_map_entry(&b, &first, "static", true);
    put_bool_map_entry(&b, &first, "file", true);
    put_bool_map_entry(&b, &first, "kubernetes", true);
    (void)im_buf_puts(&b, "}}");
    return http__send_data(s, r, &b);
}

/* ---- format_query / parse_query ---- */

static bool parse_query_param(http_server_t *s, http__req_t *r, promql_expr_t **e,
                              enum MHD_Result *ret)
{
    const char *q = http__param(r, "query");
    im_err_t err;
    im_err_clear(&err);
    if (!q) q = "";
    if (promql_parse(q, strlen(q), e, &err) != IM_OK) {
        char m[IM_ERR_MSG_MAX + 64];
        snprintf(m, sizeof m, "invalid parameter \"query\": %s", err.msg);
        *ret = http__send_error(s, r, "bad_data", m);
        return false;
    }
    return true;
}

static enum MHD_Result do_format_query(http_server_t *s, http__req_t *r)
{
    promql_expr_t *e;
    enum MHD_Result ret;
    if (!parse_query_param(s, r, &e, &ret)) return ret;
    im_buf_t f, b;
    im_buf_init(&f, 0);
    im_buf_init(&b, 0);
    (void)promql_format(e, &f);
    im_json_string(&b, f.data ? f.data : "", f.len, IM_JSON_GO);
    im_buf_free(&f);
    promql_expr_free(e);
    return http__send_data(s, r, &b);
}

static void put_str(im_buf_t *b, const char *s, size_t n)
{
    im_json_string(b, s, n, IM_JSON_GO);
}

static void put_names(im_buf_t *b, const im_istr_t *const *names, size_t n)
{
    (void)im_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) (void)im_buf_putc(b, ',');
        put_str(b, names[i]->s, names[i]->len);
    }
    (void)im_buf_putc(b, ']');
}

static void put_at(im_buf_t *b, promql_at_kind_t at, int64_t at_ms)
{
    (void)im_buf_puts(b, ",\"timestamp\":");
    if (at == PROMQL_AT_TIMESTAMP)
        (void)im_buf_printf(b, "%lld", (long long)at_ms);
    else
        (void)im_buf_puts(b, "null");
    (void)im_buf_puts(b, ",\"startOrEnd\":");
    (void)im_buf_puts(b, at == PROMQL_AT_START ? "\"start\""
                         : at == PROMQL_AT_END ? "\"end\""
                                               : "null");
}

static const char *match_str(im_match_type_t t)
{
    switch (t) {
    case IM_MATCH_EQ: return "=";
    case IM_MATCH_NEQ: return "!=";
    case IM_MATCH_RE: return "=~";
    default: return "!~";
    }
}

static void put_vs(im_buf_t *b, const promql_vector_selector_t *vs, int64_t offset_ms)
{
    (void)im_buf_puts(b, "{\"type\":\"vectorSelector\",\"name\":");
    if (vs->name)
        put_str(b, vs->name->s, vs->name->len);
    else
        (void)im_buf_puts(b, "\"\"");
    (void)im_buf_puts(b, ",\"matchers\":[");
    for (size_t i = 0; i < vs->nmatchers; i++) {
        const im_matcher_t *m = vs->matchers[i];
        size_t vl;
        const char *v = im_matcher_value(m, &vl);
        if (i) (void)im_buf_putc(b, ',');
        (void)im_buf_printf(b, "{\"type\":\"%s\",\"name\":", match_str(im_matcher_type(m)));
        put_str(b, im_matcher_name(m)->s, im_matcher_name(m)->len);
        (void)im_buf_puts(b, ",\"value\":");
        put_str(b, v, vl);
        (void)im_buf_putc(b, '}');
    }
    (void)im_buf_printf(b, "],\"offset\":%lld", (long long)offset_ms);
    put_at(b, vs->at, vs->at_ms);
    (void)im_buf_putc(b, '}');
}

static const char *type_word(promql_value_type_t t)
{
    return promql_value_type_api_str(t);
}

/* The tree as Prometheus 3's parse_query answers it (the form PromLens and the
 * "Explain" tab read). Durations are ms; a duration expression that needs the
 * query (step(), range()) is given as 0 and its text in "rangeExpr"/"offsetExpr". */
static void put_ast(im_buf_t *b, const promql_expr_t *e)
{
    char num[64];
    switch (e->kind) {
    case PROMQL_NODE_NUMBER:
        im_fmt_float_api(e->u.number.value, num, sizeof num);
        (void)im_buf_printf(b, "{\"type\":\"numberLiteral\",\"val\":\"%s\"}", num);
        return;
    case PROMQL_NODE_STRING:
        (void)im_buf_puts(b, "{\"type\":\"stringLiteral\",\"val\":");
        put_str(b, e->u.string.s, e->u.string.len);
        (void)im_buf_putc(b, '}');
        return;
    case PROMQL_NODE_VECTOR_SELECTOR: put_vs(b, &e->u.vs, e->u.vs.offset_ms); return;
    case PROMQL_NODE_MATRIX_SELECTOR:
        (void)im_buf_printf(b, "{\"type\":\"matrixSelector\",\"range\":%lld,\"vectorSelector\":",
                            (long long)e->u.ms.range_ms);
        put_vs(b, &e->u.ms.vs->u.vs, e->u.ms.vs->u.vs.offset_ms);
        (void)im_buf_putc(b, '}');
        return;
    case PROMQL_NODE_SUBQUERY:
        (void)im_buf_puts(b, "{\"type\":\"subquery\",\"expr\":");
        put_ast(b, e->u.sq.expr);
        (void)im_buf_printf(b, ",\"range\":%lld,\"offset\":%lld,\"step\":%lld",
                            (long long)e->u.sq.range_ms, (long long)e->u.sq.offset_ms,
                            (long long)e->u.sq.step_ms);
        put_at(b, e->u.sq.at, e->u.sq.at_ms);
        (void)im_buf_putc(b, '}');
        return;
    case PROMQL_NODE_CALL: {
        const promql_function_t *f = e->u.call.func;
        (void)im_buf_printf(b, "{\"type\":\"call\",\"func\":{\"name\":\"%s\",\"argTypes\":[",
                            f->name);
        for (int i = 0; i < f->nargs; i++)
            (void)im_buf_printf(b, "%s\"%s\"", i ? "," : "", type_word(f->arg_types[i]));
        (void)im_buf_printf(b, "],\"variadic\":%d,\"returnType\":\"%s\"},\"args\":[", f->variadic,
                            type_word(f->return_type));
        for (size_t i = 0; i < e->u.call.nargs; i++) {
            if (i) (void)im_buf_putc(b, ',');
            put_ast(b, e->u.call.args[i]);
        }
        (void)im_buf_puts(b, "]}");
        return;
    }
    case PROMQL_NODE_AGGREGATE:
        (void)im_buf_printf(
            b, "{\"type\":\"aggregation\",\"op\":\"%s\",\"expr\":", promql_aggop_str(e->u.agg.op));
        put_ast(b, e->u.agg.expr);
        (void)im_buf_puts(b, ",\"param\":");
        if (e->u.agg.param)
            put_ast(b, e->u.agg.param);
        else
            (void)im_buf_puts(b, "null");
        (void)im_buf_puts(b, ",\"grouping\":");
        put_names(b, e->u.agg.grouping, e->u.agg.ngrouping);
        (void)im_buf_printf(b, ",\"without\":%s}", e->u.agg.without ? "true" : "false");
        return;
    case PROMQL_NODE_BINARY: {
        const promql_binary_t *x = &e->u.bin;
        (void)im_buf_printf(
            b, "{\"type\":\"binaryExpr\",\"op\":\"%s\",\"lhs\":", promql_binop_str(x->op));
        put_ast(b, x->lhs);
        (void)im_buf_puts(b, ",\"rhs\":");
        put_ast(b, x->rhs);
        (void)im_buf_puts(b, ",\"matching\":");
        if (x->matching) {
            static const char *const card[] = {"one-to-one", "many-to-one", "one-to-many",
                                               "many-to-many"};
            (void)im_buf_printf(b, "{\"card\":\"%s\",\"labels\":", card[x->matching->card]);
            put_names(b, x->matching->matching_labels, x->matching->nmatching_labels);
            (void)im_buf_printf(b, ",\"on\":%s,\"include\":", x->matching->on ? "true" : "false");
            put_names(b, x->matching->include_labels, x->matching->ninclude_labels);
            (void)im_buf_putc(b, '}');
        } else {
            (void)im_buf_puts(b, "null");
        }
        (void)im_buf_printf(b, ",\"bool\":%s}", x->return_bool ? "true" : "false");
        return;
    }
    case PROMQL_NODE_UNARY:
        (void)im_buf_printf(b, "{\"type\":\"unaryExpr\",\"op\":\"%s\",\"expr\":",
                            e->u.unary.op == PROMQL_UNARY_MINUS ? "-" : "+");
        put_ast(b, e->u.unary.expr);
        (void)im_buf_putc(b, '}');
        return;
    case PROMQL_NODE_PAREN:
        (void)im_buf_puts(b, "{\"type\":\"parenExpr\",\"expr\":");
        put_ast(b, e->u.paren.expr);
        (void)im_buf_putc(b, '}');
        return;
    case PROMQL_NODE_STEP_INVARIANT: put_ast(b, e->u.si.expr); return;
    }
}

static enum MHD_Result do_parse_query(http_server_t *s, http__req_t *r)
{
    promql_expr_t *e;
    enum MHD_Result ret;
    if (!parse_query_param(s, r, &e, &ret)) return ret;
    im_buf_t b;
    im_buf_init(&b, 0);
    put_ast(&b, e);
    promql_expr_free(e);
    return http__send_data(s, r, &b);
}

/* ---- query_exemplars: no exemplar storage, so none; the query is still checked ---- */

static enum MHD_Result do_query_exemplars(http_server_t *s, http__req_t *r)
{
    promql_expr_t *e;
    enum MHD_Result ret;
    if (!parse_query_param(s, r, &e, &ret)) return ret;
    promql_expr_free(e);
    const char *names[] = {"start", "end"};
    for (size_t i = 0; i < 2; i++) {
        const char *v = http__param(r, names[i]);
        int64_t t;
        if (v && *v && im_time_parse(v, strlen(v), &t, NULL) != IM_OK) {
            char m[700];
            snprintf(m, sizeof m,
                     "invalid parameter \"%s\": Invalid time value for '%s': cannot parse "
                     "\"%.500s\" to a valid timestamp",
                     names[i], names[i], v);
            return http__send_error(s, r, "bad_data", m);
        }
    }
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_puts(&b, "[]");
    return http__send_data(s, r, &b);
}

/* ---- targets/metadata, scrape_pools ---- */

static enum MHD_Result do_targets_metadata(http_server_t *s, http__req_t *r)
{
    const char *metric = http__param(r, "metric");
    const char *limit_s = http__param(r, "limit");
    long long limit = -1;
    if (limit_s && *limit_s) {
        char *end;
        limit = strtoll(limit_s, &end, 10);
        if (*end) return http__send_error(s, r, "bad_data", "limit must be a number");
    }
    /* match_target: one selector over the target's labels (job and instance here) */
    im_matcher_t **ms = NULL;
    size_t nms = 0;
    const char *mt = http__param(r, "match_target");
    if (mt && *mt) {
        im_err_t err;
        if (promql_parse_metric_selector(mt, strlen(mt), &ms, &nms, &err) != IM_OK) {
            char m[IM_ERR_MSG_MAX + 64];
            snprintf(m, sizeof m, "invalid parameter \"match_target\": %s", err.msg);
            return http__send_error(s, r, "bad_data", m);
        }
    }
    scrape_metadata_t *md = NULL;
    size_t n = 0;
    if (s->opts.scrape) scrape_manager_metadata(s->opts.scrape, &md, &n);
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_putc(&b, '[');
    long long out = 0;
    for (size_t i = 0; i < n && (limit < 0 || out < limit); i++) {
        if (metric && *metric && strcmp(metric, md[i].metric)) continue;
        bool ok = true;
        for (size_t k = 0; k < nms && ok; k++) {
            const char *ln = im_matcher_name(ms[k])->s;
            const char *v = !strcmp(ln, "job")        ? md[i].target_job
                            : !strcmp(ln, "instance") ? md[i].target_instance
                                                      : "";
            ok = im_matcher_matches(ms[k], v, strlen(v));
        }
        if (!ok) continue;
        if (out++) (void)im_buf_putc(&b, ',');
        (void)im_buf_puts(&b, "{\"target\":{\"instance\":");
        put_str(&b, md[i].target_instance, strlen(md[i].target_instance));
        (void)im_buf_puts(&b, ",\"job\":");
        put_str(&b, md[i].target_job, strlen(md[i].target_job));
        (void)im_buf_puts(&b, "},\"metric\":");
        put_str(&b, md[i].metric, strlen(md[i].metric));
        (void)im_buf_puts(&b, ",\"type\":");
        put_str(&b, md[i].type, strlen(md[i].type));
        (void)im_buf_puts(&b, ",\"help\":");
        put_str(&b, md[i].help, strlen(md[i].help));
        (void)im_buf_puts(&b, ",\"unit\":");
        put_str(&b, md[i].unit, strlen(md[i].unit));
        (void)im_buf_putc(&b, '}');
    }
    (void)im_buf_putc(&b, ']');
    scrape_metadata_free(md, n);
    promql_matchers_free(ms, nms);
    return http__send_data(s, r, &b);
}

static enum MHD_Result do_scrape_pools(http_server_t *s, http__req_t *r)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_puts(&b, "{\"scrapePools\":[");
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; s->cfg && i < s->cfg->njobs; i++) {
        if (i) (void)im_buf_putc(&b, ',');
        const char *j = s->cfg->jobs[i].job_name ? s->cfg->jobs[i].job_name : "";
        put_str(&b, j, strlen(j));
    }
    pthread_mutex_unlock(&s->mu);
    (void)im_buf_puts(&b, "]}");
    return http__send_data(s, r, &b);
}

/* ---- status/walreplay, notifications ---- */

static enum MHD_Result do_walreplay(http_server_t *s, http__req_t *r)
{
    /* The store replays its WAL in tsdb_open, before the server starts: by the
     * time this can be asked the replay is done (Prometheus reports min = max =
     * current once it has finished). */
    pthread_mutex_lock(&s->mu);
    bool ready = s->ready;
    pthread_mutex_unlock(&s->mu);
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_printf(&b, "{\"min\":0,\"max\":%d,\"current\":%d}", ready ? 1 : 0, ready ? 1 : 0);
    return http__send_data(s, r, &b);
}

static enum MHD_Result do_notifications(http_server_t *s, http__req_t *r)
{
    pthread_mutex_lock(&s->mu);
    bool failed = !s->reload_ok && s->reload_ms != 0;
    int64_t when = s->reload_ms;
    pthread_mutex_unlock(&s->mu);
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_putc(&b, '[');
    if (failed) {
        char ts[64];
        im_time_format_rfc3339(when, ts, sizeof ts);
        (void)im_buf_printf(&b,
                            "{\"text\":\"Configuration reload has failed.\",\"date\":\"%s\","
                            "\"active\":true}",
                            ts);
    }
    (void)im_buf_putc(&b, ']');
    return http__send_data(s, r, &b);
}

enum MHD_Result http__api_v3(http_server_t *s, http__req_t *r, const char *path, bool *handled)
{
    *handled = true;
    if (!strcmp(path, "/features")) return do_features(s, r);
    if (!strcmp(path, "/format_query")) return do_format_query(s, r);
    if (!strcmp(path, "/parse_query")) return do_parse_query(s, r);
    if (!strcmp(path, "/query_exemplars")) return do_query_exemplars(s, r);
    if (!strcmp(path, "/targets/metadata")) return do_targets_metadata(s, r);
    if (!strcmp(path, "/scrape_pools")) return do_scrape_pools(s, r);
    if (!strcmp(path, "/status/walreplay")) return do_walreplay(s, r);
    if (!strcmp(path, "/notifications")) return do_notifications(s, r);
    *handled = false;
    return MHD_NO;
}
