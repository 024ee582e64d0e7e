/* routes.c — the table of /api/v1 endpoints and the OpenAPI document made from
 * it (GET /api/v1/openapi.yaml, as Prometheus 3 serves its own).
 *
 * http__routes lists every endpoint under /api/v1 the router answers: its path
 * (a `{name}` segment is a path parameter), methods, a one-line summary and its
 * query parameters. The router takes its /metrics handler labels from it
 * (http__route_find), and tests/http/run_openapi.sh checks both directions: every
 * path of the document answers (not the router's 404), and every path literal
 * the router in src/http compares against is in the document. The document is
 * OpenAPI 3.1.0, paths relative to the server URL /api/v1, as Prometheus'.
 * Responses are described by their envelope only (no per-endpoint schemas). */
#include "util/base.h"

#include <stdio.h>
#include <string.h>

#include "http/http_int.h"

#define G  HTTP__GET
#define P  HTTP__POST
#define GP (HTTP__GET | HTTP__POST)

/* Parameter lists: space-separated names; a trailing '!' = required, "[]" repeated. */
#define TIMES "start end"
#define SEARCH                                                                                     \
    "match[] search[] fuzz_threshold fuzz_alg case_sensitive sort_by sort_dir include_score "      \
    "limit batch_size " TIMES

const http__route_t http__routes[] = {
    {"/api/v1/query", GP, "query", "Evaluates an instant query", "query! time timeout limit"},
    {"/api/v1/query_range", GP, "query", "Evaluates a range query",
     "query! start! end! step! timeout limit"},
    {"/api/v1/query_exemplars", GP, "query", "Exemplars of a query (none are stored)",
     "query! " TIMES},
    {"/api/v1/format_query", GP, "query", "Formats a PromQL expression", "query!"},
    {"/api/v1/parse_query", GP, "query", "Parses a PromQL expression into its syntax tree",
     "query!"},
    {"/api/v1/series", GP, "series", "Series matching selectors", "match[]! " TIMES " limit"},
    {"/api/v1/labels", GP, "labels", "Label names", "match[] " TIMES " limit"},
    {"/api/v1/label/{name}/values", G, "labels", "Values of a label", "match[] " TIMES " limit"},
    {"/api/v1/search/metric_names", GP, "labels",
     "Searches metric names (--enable-feature=search-api; NDJSON)", SEARCH " include_metadata"},
    {"/api/v1/search/label_names", GP, "labels",
     "Searches label names (--enable-feature=search-api; NDJSON)", SEARCH},
    {"/api/v1/search/label_values", GP, "labels",
     "Searches the values of a label (--enable-feature=search-api; NDJSON)", "label! " SEARCH},
    {"/api/v1/metadata", G, "metadata", "Metric metadata from the scrapes", "metric limit"},
    {"/api/v1/targets", G, "targets", "Scrape targets", "state scrapePool"},
    {"/api/v1/targets/metadata", G, "targets", "Metadata per target", "match_target metric limit"},
    {"/api/v1/scrape_pools", G, "targets", "Scrape pool names", ""},
    {"/api/v1/rules", G, "rules", "Recording and alerting rules", "type"},
    {"/api/v1/alerts", G, "alerts", "Active alerts", ""},
    {"/api/v1/status/buildinfo", G, "status", "Build information", ""},
    {"/api/v1/status/config", G, "status", "The loaded configuration", ""},
    {"/api/v1/status/flags", G, "status", "Command-line flags", ""},
    {"/api/v1/status/runtimeinfo", G, "status", "Runtime information", ""},
    {"/api/v1/status/tsdb", G, "status", "Head block statistics", "limit"},
    {"/api/v1/status/walreplay", G, "status", "WAL replay progress", ""},
    {"/api/v1/status/query_backend", G, "status", "Which store answers queries (infermon)", ""},
    {"/api/v1/status/remote_write", G, "status", "Remote-write queues (infermon)", ""},
    {"/api/v1/notifications", G, "notifications", "Server notifications", ""},
    {"/api/v1/features", G, "features", "Enabled features", ""},
    {"/api/v1/write", P, "remote", "Remote-write receiver (--web.enable-remote-write-receiver)",
     ""},
    {"/api/v1/otlp/v1/metrics", P, "remote", "OTLP metrics receiver (--web.enable-otlp-receiver)",
     ""},
    {"/api/v1/llm/doctor", G, "llm", "Serving diagnosis (infermon doctor)", "at window model"},
    {"/api/v1/llm/cost", G, "llm", "GPU cost report (infermon cost)",
     "from to range month by team step"},
    {"/api/v1/llm/slos", G, "llm", "SLO status (llm.slos)", "at"},
    {"/api/v1/openapi.yaml", G, "meta", "This document", ""},
};
const size_t http__nroutes = IM_ARRAY_LEN(http__routes);

const http__route_t *http__route_find(const char *path)
{
    for (size_t i = 0; i < http__nroutes; i++) {
        const char *t = http__routes[i].path, *p = path;
        /* a {name} segment matches one non-empty segment */
        while (*t && *p) {
            if (*t == '{') {
                while (*t && *t != '}') t++;
                if (*t) t++;
                const char *s = p;
                while (*p && *p != '/') p++;
                if (p == s) break;
                continue;
            }
            if (*t != *p) break;
            t++, p++;
        }
        if (!*t && !*p) return &http__routes[i];
    }
    return NULL;
}

/* ---- The document ---- */

static void yaml_str(im_buf_t *b, const char *s)
{
    (void)im_buf_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'') (void)im_buf_putc(b, '\'');
        (void)im_buf_putc(b, *s);
    }
    (void)im_buf_putc(b, '\'');
}

static void operation(im_buf_t *b, const http__route_t *rt, const char *method)
{
    (void)im_buf_printf(b, "    %s:\n      tags: [%s]\n      summary: ", method, rt->tag);
    yaml_str(b, rt->summary);
    (void)im_buf_printf(b, "\n      operationId: %s", method);
    for (const char *c = rt->path + 7; *c; c++) /* after /api/v1 */
        (void)im_buf_putc(b, (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ? *c : '_');
    (void)im_buf_puts(b, "\n      parameters:");
    size_t n = 0;
    for (const char *t = strchr(rt->path, '{'); t; t = strchr(t + 1, '{')) {
        const char *e = strchr(t, '}');
        if (!e) break;
        (void)im_buf_printf(b,
                            "\n      - name: %.*s\n        in: path\n        required: true\n"
                            "        schema: {type: string}",
                            (int)(e - t - 1), t + 1);
        n++;
    }
    for (const char *p = rt->params; *p;) {
        while (*p == ' ') p++;
        const char *e = p;
        while (*e && *e != ' ') e++;
        if (e == p) break;
        bool req = e[-1] == '!';
        size_t len = (size_t)(e - p) - (req ? 1 : 0);
        bool rep = len > 2 && p[len - 2] == '[' && p[len - 1] == ']';
        (void)im_buf_printf(b, "\n      - name: '%.*s'\n        in: query\n        required: %s\n",
                            (int)len, p, req ? "true" : "false");
        if (rep)
            (void)im_buf_puts(b, "        schema: {type: array, items: {type: string}}\n"
                                 "        style: form\n        explode: true");
        else
            (void)im_buf_puts(b, "        schema: {type: string}");
        n++;
        p = e;
    }
    if (!n) (void)im_buf_puts(b, " []");
    (void)im_buf_puts(b, "\n      responses:\n");
    bool ndjson = strstr(rt->path, "/search/") != NULL, yaml = strstr(rt->path, ".yaml") != NULL;
    (void)im_buf_printf(b,
                        "        '200':\n          description: Success\n          content:\n"
                        "            %s:\n              schema:\n",
                        ndjson ? "application/x-ndjson"
                        : yaml ? "application/yaml"
                               : "application/json");
    (void)im_buf_puts(b, ndjson || yaml
                             ? "                type: string\n"
                             : "                $ref: '#/components/schemas/Envelope'\n");
    static const char *const errs[][2] = {{"400", "Bad parameters (errorType bad_data)"},
                                          {"422", "The expression cannot be executed"},
                                          {"503", "Timeout, cancellation or unavailable"}};
    for (size_t i = 0; i < IM_ARRAY_LEN(errs); i++)
        (void)im_buf_printf(b,
                            "        '%s':\n          description: %s\n          content:\n"
                            "            application/json:\n              schema:\n"
                            "                $ref: '#/components/schemas/Envelope'\n",
                            errs[i][0], errs[i][1]);
}

void http__openapi_yaml(im_buf_t *b, const char *version)
{
    (void)im_buf_puts(b, "openapi: 3.1.0\ninfo:\n  title: infermon API\n  version: ");
    yaml_str(b, version);
    (void)im_buf_puts(b, "\n  description: The Prometheus-compatible HTTP API of infermon "
                         "(docs/api.md).\nservers:\n- url: /api/v1\npaths:\n");
    for (size_t i = 0; i < http__nroutes; i++) {
        const http__route_t *rt = &http__routes[i];
        (void)im_buf_printf(b, "  %s:\n", rt->path + 7);
        if (rt->methods & HTTP__GET) operation(b, rt, "get");
        if (rt->methods & HTTP__POST) operation(b, rt, "post");
    }
    (void)im_buf_puts(b,
                      "components:\n  schemas:\n    Envelope:\n      type: object\n"
                      "      required: [status]\n      properties:\n"
                      "        status: {type: string, enum: [success, error]}\n        data: {}\n"
                      "        errorType: {type: string}\n        error: {type: string}\n"
                      "        warnings: {type: array, items: {type: string}}\n"
                      "        infos: {type: array, items: {type: string}}\n");
}
