/* catalog.c — parses the embedded catalog TSVs (vLLM, dcgm-exporter, Kueue, the
 * vLLM rename table) into the read-only family table of catalog.h, adds the small
 * table of join families from other exporters, and answers lookups by exposed
 * sample name, by family name, and by vLLM version. */
#include "util/base.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "llm/catalog.h"
#include "catalog/catalog_data.h"
#include "util/fmtfloat.h"
#include "util/hash.h"

#define MAX_FAMILIES 1024
#define MAX_RENAMES  128
#define MAX_EVENTS   512

typedef struct event {
    const char *name;
    bool added;
    llm_version_t version;
} event_t;

typedef struct rename {
    const char *old_name;
    const char *replacement; /* NULL for "(none)" */
    llm_version_t deprecated, hidden, removed;
} rename_t;

typedef struct index_slot {
    const char *key; /* NULL = empty */
    size_t len;
    uint16_t fam;
    uint8_t form;   /* llm_form_t */
    uint8_t suffix; /* llm_suffix_t */
} index_slot_t;

#define INDEX_SLOTS 8192 /* power of two, > 4 * samples */

struct llm_catalog {
    llm_family_t fam[MAX_FAMILIES];
    size_t nfam;
    rename_t renames[MAX_RENAMES];
    size_t nrenames;
    index_slot_t index[INDEX_SLOTS];
    event_t events[MAX_EVENTS];
    size_t nevents;
    char *text[10]; /* owned copies of the TSVs, split in place */
};

/* ---- Names of enums ---- */

const char *llm_mtype_name(llm_mtype_t t)
{
    switch (t) {
    case LLM_MTYPE_COUNTER: return "counter";
    case LLM_MTYPE_GAUGE: return "gauge";
    case LLM_MTYPE_HISTOGRAM: return "histogram";
    case LLM_MTYPE_SUMMARY: return "summary";
    case LLM_MTYPE_INFO: return "info";
    default: return "unknown";
    }
}

const char *llm_exporter_name(llm_exporter_t e)
{
    static const char *const names[LLM_EXP_COUNT] = {"vLLM",
                                                     "vLLM (prometheus-fastapi-instrumentator)",
                                                     "dcgm-exporter",
                                                     "Kueue",
                                                     "kube-state-metrics",
                                                     "node_exporter",
                                                     "Prometheus",
                                                     "cAdvisor",
                                                     "EPP (gateway API inference extension)",
                                                     "vLLM production-stack router",
                                                     "Ray",
                                                     "SGLang",
                                                     "serving engine"};
    return e < LLM_EXP_COUNT ? names[e] : "?";
}

bool llm_exporter_complete(llm_exporter_t e)
{
    return e == LLM_EXP_VLLM || e == LLM_EXP_DCGM || e == LLM_EXP_KUEUE;
}

bool llm_exporter_by_prefix(const char *name, size_t len, llm_exporter_t *out)
{
    static const struct {
        const char *prefix;
        llm_exporter_t e;
    } tab[] = {{"vllm:", LLM_EXP_VLLM},
               {"DCGM_", LLM_EXP_DCGM},
               {"dcgm_", LLM_EXP_DCGM},
               {"kueue_", LLM_EXP_KUEUE},
               {"multikueue_", LLM_EXP_KUEUE},
               {"kube_", LLM_EXP_KSM},
               {"node_", LLM_EXP_NODE},
               {"container_", LLM_EXP_CADVISOR},
               {"machine_", LLM_EXP_CADVISOR},
               {"inference_pool_", LLM_EXP_EPP},
               {"inference_model_", LLM_EXP_EPP},
               {"inference_objective_", LLM_EXP_EPP},
               {"inference_extension_", LLM_EXP_EPP},
               {"llm_d_epp_", LLM_EXP_EPP},
               {"sglang:", LLM_EXP_SGLANG},
               {"ray_serve_", LLM_EXP_RAY},
               {"ray_node_", LLM_EXP_RAY},
               {"ray_cluster_", LLM_EXP_RAY}};
    for (size_t i = 0; i < IM_ARRAY_LEN(tab); i++) {
        size_t pl = strlen(tab[i].prefix);
        if (len > pl && memcmp(name, tab[i].prefix, pl) == 0) {
            *out = tab[i].e;
            return true;
        }
    }
    return false;
}

const char *llm_unit_name(llm_unit_t u)
{
    static const char *const names[] = {"",         "seconds", "milliseconds", "bytes", "tokens",
                                        "requests", "ratio",   "percent",      "items"};
    return (size_t)u < IM_ARRAY_LEN(names) ? names[u] : "";
}

const char *llm_suffix_str(llm_suffix_t s)
{
    static const char *const names[] = {"", "_total", "_bucket", "_sum", "_count", "_created"};
    return (size_t)s < IM_ARRAY_LEN(names) ? names[s] : "";
}

/* ---- Versions ---- */

bool llm_version_parse(const char *s, size_t len, llm_version_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!s) return false;
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t')) i++;
    if (len - i >= 4 && (memcmp(s + i, "main", 4) == 0 || memcmp(s + i, "unre", 4) == 0)) {
        out->known = true;
        out->unreleased = true;
        out->approx = true;
        return true;
    }
    for (; i < len; i++) {
        bool tilde = i > 0 && s[i - 1] == '~';
        size_t j = i;
        if (s[j] == 'v')
            j++;
        else if (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '.'))
            continue;
        if (j >= len || !isdigit((unsigned char)s[j])) continue;
        int part[3] = {0, 0, 0}, np = 0;
        bool x = false;
        while (j < len && np < 3) {
            if (s[j] == 'x' && np > 0) {
                x = true;
                j++;
                np++;
                break;
            }
            if (!isdigit((unsigned char)s[j])) break;
            int n = 0;
            while (j < len && isdigit((unsigned char)s[j]) && n < 100000)
                n = n * 10 + (s[j++] - '0');
            part[np++] = n;
            if (j < len && s[j] == '.' && j + 1 < len &&
                (isdigit((unsigned char)s[j + 1]) || s[j + 1] == 'x'))
                j++;
            else
                break;
        }
        if (np < 2) continue; /* a bare number is not a version */
        out->known = true;
        out->major = part[0];
        out->minor = part[1];
        out->patch = part[2];
        out->approx = tilde || x || (j < len && s[j] == '/');
        return true;
    }
    return false;
}

int llm_version_cmp(const llm_version_t *a, const llm_version_t *b)
{
    if (a->unreleased || b->unreleased) return (int)a->unreleased - (int)b->unreleased;
    if (a->major != b->major) return a->major < b->major ? -1 : 1;
    if (a->minor != b->minor) return a->minor < b->minor ? -1 : 1;
    if (a->patch != b->patch) return a->patch < b->patch ? -1 : 1;
    return 0;
}

size_t llm_version_format(const llm_version_t *v, char *buf, size_t cap)
{
    int n;
    if (!v->known)
        n = snprintf(buf, cap, "unknown version");
    else if (v->unreleased)
        n = snprintf(buf, cap, "main (unreleased)");
    else
        n = snprintf(buf, cap, "%sv%d.%d.%d", v->approx ? "~" : "", v->major, v->minor, v->patch);
    return n < 0 ? 0 : (size_t)n;
}

/* ---- TSV helpers ---- */

/* Splits text into rows (lines) and calls fn with the columns of each data row
 * (the header is skipped). Columns are NUL-terminated in place. */
typedef void (*row_fn)(llm_catalog_t *c, char **cols, int ncols);

typedef struct tramp {
    llm_catalog_t *c;
    row_fn fn;
} tramp_t;

static void tramp(void *ctx, char **cols, int ncols)
{
    tramp_t *t = ctx;
    t->fn(t->c, cols, ncols);
}

static void tsv_each(llm_catalog_t *c, char *text, row_fn fn)
{
    tramp_t t = {c, fn};
    llm__tsv_each(text, tramp, &t);
}

void llm__tsv_each(char *text, void (*fn)(void *ctx, char **cols, int ncols), void *ctx)
{
    char *line = text;
    bool header = true;
    while (line && *line) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        char *cols[16];
        int n = 0;
        char *p = line;
        cols[n++] = p;
        while ((p = strchr(p, '\t')) != NULL && n < 16) {
            *p++ = '\0';
            cols[n++] = p;
        }
        if (!header && cols[0][0]) fn(ctx, cols, n);
        header = false;
        line = nl ? nl + 1 : NULL;
    }
}

static char *copy_tsv(const unsigned char *data, size_t len)
{
    char *s = im_malloc(len + 1);
    memcpy(s, data, len);
    s[len] = '\0';
    return s;
}

static bool is_ident_start(char ch)
{
    return isalpha((unsigned char)ch) || ch == '_';
}
static bool is_ident(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

/* Label names in a catalog label column, skipping parenthesised remarks and
 * bracketed condition words ("[GPU_I_PROFILE,GPU_I_ID if MIG]" keeps the names). */
static void parse_labels(llm_family_t *f, const char *s)
{
    if (strstr(s, "one label per")) f->labels_open = true;
    int depth = 0;
    for (const char *p = s; *p;) {
        if (*p == '(') {
            depth++;
            p++;
            continue;
        }
        if (*p == ')') {
            if (depth > 0) depth--;
            p++;
            continue;
        }
        if (depth == 0 && is_ident_start(*p) && (p == s || !is_ident(p[-1]))) {
            const char *q = p;
            while (is_ident(*q)) q++;
            size_t n = (size_t)(q - p);
            bool skip =
                (n == 2 && memcmp(p, "if", 2) == 0) || (n == 3 && memcmp(p, "MIG", 3) == 0) ||
                (n == 3 && memcmp(p, "k8s", 3) == 0) || (n == 4 && memcmp(p, "none", 4) == 0);
            if (!skip && f->nlabels < LLM_FAMILY_MAX_LABELS) {
                bool dup = false;
                for (int i = 0; i < f->nlabels; i++)
                    if (strlen(f->labels[i]) == n && memcmp(f->labels[i], p, n) == 0) dup = true;
                if (!dup) f->labels[f->nlabels++] = im_strndup(p, n);
            }
            p = q;
            continue;
        }
        p++;
    }
}

static void parse_buckets(llm_family_t *f, const char *s)
{
    if (strncmp(s, "build_", 6) == 0 || strstr(s, "request_latency_buckets") == s) {
        f->buckets_vary = true;
        return;
    }
    const char *p = s;
    while (*p && f->nbuckets < LLM_FAMILY_MAX_BUCKETS) {
        if (*p == '+' && strncmp(p, "+Inf", 4) == 0) break;
        char *end = NULL;
        double v = strtod(p, &end);
        if (end == p) break;
        f->buckets[f->nbuckets++] = v;
        p = end;
        if (*p != ',') break;
        p++;
    }
}

/* "reason in {capacity, deferred}" -> enum; "+error since" adds to the last one. */
static void parse_enums(llm_family_t *f, const char *cond)
{
    const char *p = cond;
    while ((p = strstr(p, " in {")) != NULL && f->nenums < IM_ARRAY_LEN(f->enums)) {
        const char *ne = p;
        while (ne > cond && is_ident(ne[-1])) ne--;
        if (ne == p) {
            p += 5;
            continue;
        }
        llm_label_values_t *lv = &f->enums[f->nenums];
        memset(lv, 0, sizeof(*lv));
        lv->label = im_strndup(ne, (size_t)(p - ne));
        const char *q = p + 5;
        int nv = 0;
        while (*q && *q != '}' && nv < 7) {
            while (*q == ' ' || *q == ',') q++;
            const char *v = q;
            while (*q && *q != ',' && *q != '}') q++;
            const char *ve = q;
            while (ve > v && ve[-1] == ' ') ve--;
            if (ve > v) lv->values[nv++] = im_strndup(v, (size_t)(ve - v));
        }
        /* Values added later: "(+error since ~v0.13.0 ..., +repetition since ...)". */
        const char *r = q;
        while ((r = strstr(r, "+")) != NULL && nv < 7) {
            const char *w = r + 1;
            const char *we = w;
            while (is_ident(*we)) we++;
            if (we > w && strncmp(we, " since", 6) == 0)
                lv->values[nv++] = im_strndup(w, (size_t)(we - w));
            r = we > w ? we : r + 1;
        }
        f->nenums++;
        p = q;
    }
}

static llm_mtype_t parse_type(const char *s)
{
    if (strncmp(s, "counter", 7) == 0) return LLM_MTYPE_COUNTER;
    if (strncmp(s, "gauge", 5) == 0) return LLM_MTYPE_GAUGE;
    if (strncmp(s, "histogram", 9) == 0) return LLM_MTYPE_HISTOGRAM;
    if (strncmp(s, "summary", 7) == 0) return LLM_MTYPE_SUMMARY;
    if (strncmp(s, "info", 4) == 0) return LLM_MTYPE_INFO;
    return LLM_MTYPE_UNKNOWN;
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && memcmp(s + a - b, suf, b) == 0;
}

static llm_unit_t guess_unit(const llm_family_t *f)
{
    const char *n = f->name;
    if (strstr(n, "_milliseconds")) return LLM_UNIT_MILLISECONDS;
    if (strstr(n, "_seconds") || strstr(n, "_time_") || ends_with(n, "_time"))
        return LLM_UNIT_SECONDS;
    if (strstr(n, "_bytes")) return LLM_UNIT_BYTES;
    if (ends_with(n, "_perc") || strstr(n, "_ACTIVE") || strstr(n, "weighted_share"))
        return LLM_UNIT_RATIO;
    if (ends_with(n, "_UTIL")) return LLM_UNIT_PERCENT;
    if (strstr(f->condition, "unit = tokens") || strstr(n, "tokens")) return LLM_UNIT_TOKENS;
    if ((strstr(n, "prefix_cache_hits") || strstr(n, "prefix_cache_queries")) &&
        f->type == LLM_MTYPE_COUNTER)
        return LLM_UNIT_TOKENS;
    if (strstr(f->condition, "unit = items")) return LLM_UNIT_ITEMS;
    if (strstr(n, "request_success") || strstr(n, "num_preemptions") ||
        strcmp(n, "http_requests") == 0 || strstr(n, "corrupted_requests"))
        return LLM_UNIT_REQUESTS;
    return LLM_UNIT_NONE;
}

static llm_family_t *new_family(llm_catalog_t *c)
{
    if (c->nfam >= MAX_FAMILIES) {
        fprintf(stderr, "infermon: catalog: more than %d families\n", MAX_FAMILIES);
        abort();
    }
    llm_family_t *f = &c->fam[c->nfam++];
    memset(f, 0, sizeof(*f));
    f->condition = "";
    f->help = "";
    return f;
}

static void add_sample(llm_family_t *f, const char *s, size_t n)
{
    if (f->nsamples < LLM_FAMILY_MAX_SAMPLES) f->samples[f->nsamples++] = im_strndup(s, n);
}

/* "a_total; a_created*" or "x_bucket{le}; x_count; x_sum" */
static void parse_samples(llm_family_t *f, const char *s)
{
    const char *p = s;
    while (*p) {
        while (*p == ' ' || *p == ';') p++;
        const char *q = p;
        while (*q && *q != ';' && *q != '{' && *q != '*' && *q != ' ') q++;
        if (q > p) add_sample(f, p, (size_t)(q - p));
        if (*q == '*') f->created_default_registry_only = true;
        while (*q && *q != ';') q++;
        p = q;
    }
}

static void compute_base(llm_family_t *f)
{
    f->base = f->name;
    if (f->type == LLM_MTYPE_COUNTER && ends_with(f->name, "_total"))
        f->base = im_strndup(f->name, strlen(f->name) - 6);
}

/* ---- vLLM ---- */

static const char *conditional_option(const char *cond)
{
    if (strncmp(cond, "only ", 5) != 0) return NULL;
    const char *semi = strchr(cond, ';');
    return semi ? im_strndup(cond, (size_t)(semi - cond)) : cond;
}

static void vllm_row(llm_catalog_t *c, char **col, int n)
{
    if (n < 11) return;
    llm_family_t *f = new_family(c);
    f->name = col[0];
    f->type = parse_type(col[1]);
    f->exporter = strncmp(col[0], "http_", 5) == 0 ? LLM_EXP_VLLM_HTTP : LLM_EXP_VLLM;
    parse_samples(f, col[2]);
    parse_labels(f, col[3]);
    parse_buckets(f, col[4]);
    f->condition = col[5];
    f->option = conditional_option(col[5]);
    parse_enums(f, col[5]);
    llm_version_parse(col[6], strlen(col[6]), &f->first);
    llm_version_parse(col[7], strlen(col[7]), &f->deprecated);
    llm_version_parse(col[8], strlen(col[8]), &f->removed);
    if (strstr(col[5], "hidden from v0.11.0") || strstr(col[7], "hidden from v0.11.0") ||
        strstr(col[8], "hidden from v0.11.0"))
        llm_version_parse("v0.11.0", 7, &f->hidden);
    else if (strstr(col[5], "hidden v0.8.3+"))
        llm_version_parse("v0.8.3", 6, &f->hidden);
    else if (strstr(col[5], "hidden in v0.12"))
        llm_version_parse("v0.12.0", 7, &f->hidden);
    if (col[9][0] && strncmp(col[9], "(none", 5) != 0) f->replacement = col[9];
    f->help = col[10];
    compute_base(f);
    if (f->type == LLM_MTYPE_COUNTER && f->base == f->name && f->nsamples == 0) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s_total", f->name);
        add_sample(f, buf, strlen(buf));
    }
    f->unit = guess_unit(f);
}

/* sglang-metrics.tsv has vllm-metrics.tsv's columns. */
static void sglang_row(llm_catalog_t *c, char **col, int n)
{
    size_t before = c->nfam;
    vllm_row(c, col, n);
    if (c->nfam > before) c->fam[before].exporter = LLM_EXP_SGLANG;
}

/* serving-signals.tsv: a family for each name of an engine the per-exporter
 * TSVs do not cover (type "=catalog" rows are theirs), once per name. */
static void serving_row(llm_catalog_t *c, char **col, int n)
{
    if (n < 11 || col[0][0] == '_' || strcmp(col[3], "=catalog") == 0) return;
    char base[256];
    size_t bl = strlen(col[2]);
    /* "x_sum" rows name a histogram's sample: the family is x */
    if (bl > 4 && bl < sizeof base && strcmp(col[2] + bl - 4, "_sum") == 0) bl -= 4;
    if (bl >= sizeof base) return;
    memcpy(base, col[2], bl);
    base[bl] = '\0';
    for (size_t i = 0; i < c->nfam; i++)
        if (strcmp(c->fam[i].name, base) == 0) return;
    llm_family_t *f = new_family(c);
    f->name = im_strndup(base, bl);
    f->type = parse_type(col[3]);
    f->exporter = LLM_EXP_ENGINE;
    char samples[4 * sizeof base + 40];
    if (f->type == LLM_MTYPE_HISTOGRAM)
        snprintf(samples, sizeof samples, "%s_bucket{le}; %s_count; %s_sum", base, base, base);
    else
        snprintf(samples, sizeof samples, "%s", base);
    parse_samples(f, samples);
    parse_labels(f, col[5]);
    if (strchr(col[5], '[')) f->labels_open = true; /* optional labels */
    parse_buckets(f, col[6]);
    f->condition = col[10];
    f->help = col[9]; /* the source, for lint's explanations */
    compute_base(f);
    f->unit = guess_unit(f);
}

static void rename_row(llm_catalog_t *c, char **col, int n)
{
    if (n < 5 || c->nrenames >= MAX_RENAMES) return;
    rename_t *r = &c->renames[c->nrenames];
    r->old_name = col[0];
    if (strncmp(col[1], "(same as above)", 15) == 0 && c->nrenames > 0)
        r->replacement = c->renames[c->nrenames - 1].replacement;
    else if (col[1][0] && strncmp(col[1], "(none)", 6) != 0)
        r->replacement = col[1];
    llm_version_parse(col[2], strlen(col[2]), &r->deprecated);
    llm_version_parse(col[3], strlen(col[3]), &r->hidden);
    llm_version_parse(col[4], strlen(col[4]), &r->removed);
    c->nrenames++;
}

static void event_row(llm_catalog_t *c, char **col, int n)
{
    if (n < 7 || c->nevents >= MAX_EVENTS) return;
    event_t *e = &c->events[c->nevents];
    e->name = col[0];
    e->added = strcmp(col[1], "added") == 0;
    if (!llm_version_parse(col[5], strlen(col[5]), &e->version)) {
        llm_version_parse(col[6], strlen(col[6]), &e->version);
        if (e->version.known) e->version.approx = true;
    }
    c->nevents++;
}

/* ---- dcgm-exporter ---- */

static void dcgm_row(llm_catalog_t *c, char **col, int n)
{
    if (n < 9) return;
    llm_mtype_t t = parse_type(col[2]);
    if (strcmp(col[2], "label") == 0 || t == LLM_MTYPE_UNKNOWN) return; /* a label, not a metric */
    llm_family_t *f = new_family(c);
    f->name = col[0];
    f->type = t;
    f->exporter = LLM_EXP_DCGM;
    f->help = col[3];
    add_sample(f, col[0], strlen(col[0])); /* dcgm-exporter adds no _total */
    static const char *const labels[] = {"gpu",           "UUID",
                                         "pci_bus_id",    "device",
                                         "modelName",     "GPU_I_PROFILE",
                                         "GPU_I_ID",      "Hostname",
                                         "hostname",      "DCGM_FI_DRIVER_VERSION",
                                         "container",     "namespace",
                                         "pod",           "pod_uid",
                                         "uuid",          "pod_name",
                                         "pod_namespace", "container_name",
                                         "vgpu",          "DCGM_FI_PROCESS_NAME"};
    for (size_t i = 0; i < IM_ARRAY_LEN(labels); i++) f->labels[f->nlabels++] = labels[i];
    if (strcmp(col[0], "DCGM_FI_DEV_XID_ERRORS") == 0) {
        f->labels[f->nlabels++] = "err_code";
        f->labels[f->nlabels++] = "err_msg";
    }
    f->labels_open = true; /* dra_* and other attributes depend on the deployment */
    if (strcmp(col[4], "enabled") != 0) {
        char buf[300];
        snprintf(buf, sizeof buf,
                 "it is enabled in dcgm-exporter's counters CSV (-f / DCGM_EXPORTER_COLLECTORS); "
                 "the default etc/default-counters.csv %s %s%s",
                 strcmp(col[4], "absent") == 0 ? "does not list" : "has", col[0],
                 strcmp(col[4], "absent") == 0 ? " at all" : " commented out");
        f->option = im_strdup(buf);
        f->condition = f->option;
    }
    compute_base(f);
    f->unit = guess_unit(f);
}

/* ---- Kueue ---- */

static const char *kueue_option(const char *cond)
{
    /* The first clause that makes the family conditional. */
    const char *keys[] = {"registered only with feature gate", "series only when",
                          "only with feature gate",
                          "feature gate MetricForWorkloadCreationLatency"};
    for (size_t k = 0; k < IM_ARRAY_LEN(keys); k++) {
        const char *p = strstr(cond, keys[k]);
        if (!p) continue;
        const char *e = strchr(p, ';');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        return im_strndup(p, n);
    }
    return NULL;
}

static void kueue_row(llm_catalog_t *c, char **col, int n)
{
    if (n < 9) return;
    llm_family_t *f = new_family(c);
    f->name = col[0];
    f->type = parse_type(col[1]);
    f->exporter = LLM_EXP_KUEUE;
    parse_samples(f, col[2]);
    parse_labels(f, col[3]);
    parse_buckets(f, col[4]);
    f->condition = col[6];
    f->option = kueue_option(col[6]);
    parse_enums(f, col[6]);
    f->help = n > 8 ? col[8] : "";
    compute_base(f);
    f->unit = guess_unit(f);
}

/* ---- Families of other exporters that queries join with ---- */

typedef struct join_family {
    const char *name;
    llm_mtype_t type;
    llm_exporter_t exp;
    const char *labels; /* comma-separated */
    bool open;
} join_family_t;

static const join_family_t join_families[] = {
    {"kube_namespace_labels", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "namespace", true},
    {"kube_namespace_annotations", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "namespace", true},
    {"kube_namespace_status_phase", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "namespace,phase", false},
    {"kube_pod_labels", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "namespace,pod,uid", true},
    {"kube_pod_annotations", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "namespace,pod,uid", true},
    {"kube_pod_info", LLM_MTYPE_GAUGE, LLM_EXP_KSM,
     "namespace,pod,uid,host_ip,pod_ip,node,created_by_kind,created_by_name,priority_class,host_"
     "network",
     false},
    {"kube_pod_owner", LLM_MTYPE_GAUGE, LLM_EXP_KSM,
     "namespace,pod,uid,owner_kind,owner_name,owner_is_controller", false},
    {"kube_pod_status_phase", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "namespace,pod,uid,phase", false},
    {"kube_pod_status_ready", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "namespace,pod,uid,condition", false},
    {"kube_pod_container_info", LLM_MTYPE_GAUGE, LLM_EXP_KSM,
     "namespace,pod,uid,container,container_id,image,image_id,image_spec", false},
    {"kube_pod_container_resource_requests", LLM_MTYPE_GAUGE, LLM_EXP_KSM,
     "namespace,pod,uid,container,node,resource,unit", false},
    {"kube_pod_container_resource_limits", LLM_MTYPE_GAUGE, LLM_EXP_KSM,
     "namespace,pod,uid,container,node,resource,unit", false},
    {"kube_pod_container_status_restarts_total", LLM_MTYPE_COUNTER, LLM_EXP_KSM,
     "namespace,pod,uid,container", false},
    {"kube_pod_container_status_ready", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "namespace,pod,uid,container",
     false},
    {"kube_deployment_spec_replicas", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "namespace,deployment", false},
    {"kube_deployment_status_replicas", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "namespace,deployment",
     false},
    {"kube_deployment_status_replicas_available", LLM_MTYPE_GAUGE, LLM_EXP_KSM,
     "namespace,deployment", false},
    {"kube_node_info", LLM_MTYPE_GAUGE, LLM_EXP_KSM,
     "node,kernel_version,os_image,container_runtime_version,kubelet_version,kubeproxy_version,"
     "provider_id,pod_cidr,"
     "internal_ip,system_uuid",
     false},
    {"kube_node_labels", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "node", true},
    {"kube_node_status_capacity", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "node,resource,unit", false},
    {"kube_node_status_allocatable", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "node,resource,unit", false},
    {"kube_node_status_condition", LLM_MTYPE_GAUGE, LLM_EXP_KSM, "node,condition,status", false},
    {"node_cpu_seconds_total", LLM_MTYPE_COUNTER, LLM_EXP_NODE, "cpu,mode", false},
    {"node_memory_MemAvailable_bytes", LLM_MTYPE_GAUGE, LLM_EXP_NODE, "", false},
    {"node_memory_MemTotal_bytes", LLM_MTYPE_GAUGE, LLM_EXP_NODE, "", false},
    {"node_load1", LLM_MTYPE_GAUGE, LLM_EXP_NODE, "", false},
    {"node_load5", LLM_MTYPE_GAUGE, LLM_EXP_NODE, "", false},
    {"node_load15", LLM_MTYPE_GAUGE, LLM_EXP_NODE, "", false},
    {"node_filesystem_avail_bytes", LLM_MTYPE_GAUGE, LLM_EXP_NODE, "device,fstype,mountpoint",
     false},
    {"node_filesystem_size_bytes", LLM_MTYPE_GAUGE, LLM_EXP_NODE, "device,fstype,mountpoint",
     false},
    {"node_network_receive_bytes_total", LLM_MTYPE_COUNTER, LLM_EXP_NODE, "device", false},
    {"node_network_transmit_bytes_total", LLM_MTYPE_COUNTER, LLM_EXP_NODE, "device", false},
    {"node_disk_io_time_seconds_total", LLM_MTYPE_COUNTER, LLM_EXP_NODE, "device", false},
    {"node_uname_info", LLM_MTYPE_GAUGE, LLM_EXP_NODE,
     "domainname,machine,nodename,release,sysname,version", false},
    {"up", LLM_MTYPE_GAUGE, LLM_EXP_PROMETHEUS, "", false},
    {"scrape_duration_seconds", LLM_MTYPE_GAUGE, LLM_EXP_PROMETHEUS, "", false},
    {"scrape_samples_scraped", LLM_MTYPE_GAUGE, LLM_EXP_PROMETHEUS, "", false},
    {"scrape_samples_post_metric_relabeling", LLM_MTYPE_GAUGE, LLM_EXP_PROMETHEUS, "", false},
    {"scrape_series_added", LLM_MTYPE_GAUGE, LLM_EXP_PROMETHEUS, "", false},
    {"ALERTS", LLM_MTYPE_GAUGE, LLM_EXP_PROMETHEUS, "alertname,alertstate", true},
    {"ALERTS_FOR_STATE", LLM_MTYPE_GAUGE, LLM_EXP_PROMETHEUS, "alertname", true},
};

static void add_join_families(llm_catalog_t *c)
{
    for (size_t i = 0; i < IM_ARRAY_LEN(join_families); i++) {
        const join_family_t *j = &join_families[i];
        llm_family_t *f = new_family(c);
        f->name = j->name;
        f->type = j->type;
        f->exporter = j->exp;
        f->labels_open = j->open;
        add_sample(f, j->name, strlen(j->name));
        parse_labels(f, j->labels);
        compute_base(f);
        f->unit = guess_unit(f);
    }
}

/* ---- Neighbours (neighbour-metrics.tsv) ---- */

static llm_exporter_t exporter_named(const char *s)
{
    for (int e = 0; e < LLM_EXP_COUNT; e++)
        if (strcmp(llm_exporter_name((llm_exporter_t)e), s) == 0) return (llm_exporter_t)e;
    return LLM_EXP_COUNT;
}

static bool sample_known(const llm_catalog_t *c, const char *name)
{
    for (size_t i = 0; i < c->nfam; i++)
        if (llm_family_has_sample(&c->fam[i], name, strlen(name))) return true;
    return false;
}

/* name, type, exporter, labels, label_set (open|fixed), source */
static void neighbour_row(llm_catalog_t *c, char **col, int n)
{
    if (n < 6) return;
    llm_exporter_t e = exporter_named(col[2]);
    llm_mtype_t t = parse_type(col[1]);
    if (e == LLM_EXP_COUNT || t == LLM_MTYPE_UNKNOWN) return;
    char sb[256];
    if (t == LLM_MTYPE_HISTOGRAM) {
        snprintf(sb, sizeof sb, "%s_bucket", col[0]);
        if (sample_known(c, sb)) return;
    } else if (sample_known(c, col[0])) {
        return; /* the router's vllm:num_requests_running is vLLM's name too */
    }
    llm_family_t *f = new_family(c);
    f->name = col[0];
    f->type = t;
    f->exporter = e;
    f->labels_open = strcmp(col[4], "open") == 0;
    if (t == LLM_MTYPE_HISTOGRAM) {
        static const char *const sufs[] = {"_bucket", "_sum", "_count"};
        for (size_t i = 0; i < IM_ARRAY_LEN(sufs); i++) {
            snprintf(sb, sizeof sb, "%s%s", col[0], sufs[i]);
            add_sample(f, sb, strlen(sb));
        }
    } else {
        add_sample(f, col[0], strlen(col[0]));
    }
    parse_labels(f, col[3]);
    f->condition = col[5];
    compute_base(f);
    f->unit = guess_unit(f);
}

/* dcgm-renames.tsv: old_name, replacement, source */
static void dcgm_rename_row(llm_catalog_t *c, char **col, int n)
{
    if (n < 3 || c->nrenames >= MAX_RENAMES) return;
    rename_t *r = &c->renames[c->nrenames++];
    memset(r, 0, sizeof(*r));
    r->old_name = col[0];
    r->replacement = col[1];
}

/* ---- Index ---- */

static void index_put(llm_catalog_t *c, const char *key, size_t len, size_t fam, llm_form_t form,
                      llm_suffix_t suf)
{
    uint64_t h = im_hash(key, len);
    for (size_t i = 0; i < INDEX_SLOTS; i++) {
        index_slot_t *s = &c->index[(h + i) & (INDEX_SLOTS - 1)];
        if (s->key && s->len == len && memcmp(s->key, key, len) == 0) {
            /* First writer wins, except that an exact sample beats a near miss and a
             * current family beats a removed one. */
            if (s->form != LLM_FORM_SAMPLE && form == LLM_FORM_SAMPLE) goto set;
            if (s->form == form && c->fam[s->fam].removed.known && !c->fam[fam].removed.known)
                goto set;
            return;
        }
        if (!s->key) {
        set:
            s->key = key;
            s->len = len;
            s->fam = (uint16_t)fam;
            s->form = (uint8_t)form;
            s->suffix = (uint8_t)suf;
            return;
        }
    }
}

static llm_suffix_t suffix_of(const char *sample, const char *base)
{
    size_t bl = strlen(base);
    if (strncmp(sample, base, bl) != 0) return LLM_SUFFIX_NONE;
    const char *s = sample + bl;
    if (strcmp(s, "_total") == 0) return LLM_SUFFIX_TOTAL;
    if (strcmp(s, "_bucket") == 0) return LLM_SUFFIX_BUCKET;
    if (strcmp(s, "_sum") == 0) return LLM_SUFFIX_SUM;
    if (strcmp(s, "_count") == 0) return LLM_SUFFIX_COUNT;
    if (strcmp(s, "_created") == 0) return LLM_SUFFIX_CREATED;
    return LLM_SUFFIX_NONE;
}

static void build_index(llm_catalog_t *c)
{
    for (size_t i = 0; i < c->nfam; i++) {
        llm_family_t *f = &c->fam[i];
        for (int k = 0; k < f->nsamples; k++)
            index_put(c, f->samples[k], strlen(f->samples[k]), i, LLM_FORM_SAMPLE,
                      suffix_of(f->samples[k], f->base));
    }
    for (size_t i = 0; i < c->nfam; i++) {
        llm_family_t *f = &c->fam[i];
        if (f->type == LLM_MTYPE_COUNTER && !llm_family_has_sample(f, f->base, strlen(f->base)))
            index_put(c, f->base, strlen(f->base), i, LLM_FORM_COUNTER_BARE, LLM_SUFFIX_NONE);
        if ((f->type == LLM_MTYPE_HISTOGRAM || f->type == LLM_MTYPE_SUMMARY) &&
            !llm_family_has_sample(f, f->base, strlen(f->base)))
            index_put(c, f->base, strlen(f->base), i, LLM_FORM_HISTOGRAM_BARE, LLM_SUFFIX_NONE);
    }
}

/* ---- Public ---- */

static llm_catalog_t *g_catalog;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void catalog_init(void)
{
    llm_catalog_t *c = im_calloc(1, sizeof(*c));
    c->text[0] = copy_tsv(llm__tsv_vllm_metrics, llm__tsv_vllm_metrics_len);
    c->text[1] = copy_tsv(llm__tsv_vllm_renames, llm__tsv_vllm_renames_len);
    c->text[2] = copy_tsv(llm__tsv_dcgm_metrics, llm__tsv_dcgm_metrics_len);
    c->text[3] = copy_tsv(llm__tsv_kueue_metrics, llm__tsv_kueue_metrics_len);
    tsv_each(c, c->text[0], vllm_row);
    tsv_each(c, c->text[1], rename_row);
    tsv_each(c, c->text[2], dcgm_row);
    tsv_each(c, c->text[3], kueue_row);
    c->text[4] = copy_tsv(llm__tsv_vllm_metric_events, llm__tsv_vllm_metric_events_len);
    tsv_each(c, c->text[4], event_row);
    add_join_families(c);
    /* The neighbours first: their EPP families name the EPP, not "serving engine". */
    c->text[7] = copy_tsv(llm__tsv_neighbour_metrics, llm__tsv_neighbour_metrics_len);
    tsv_each(c, c->text[7], neighbour_row);
    c->text[8] = copy_tsv(llm__tsv_dcgm_renames, llm__tsv_dcgm_renames_len);
    tsv_each(c, c->text[8], dcgm_rename_row);
    c->text[5] = copy_tsv(llm__tsv_sglang_metrics, llm__tsv_sglang_metrics_len);
    tsv_each(c, c->text[5], sglang_row);
    c->text[6] = copy_tsv(llm__tsv_serving_signals, llm__tsv_serving_signals_len);
    tsv_each(c, c->text[6], serving_row);
    /* Hidden versions from the rename table. */
    for (size_t r = 0; r < c->nrenames; r++) {
        for (size_t i = 0; i < c->nfam; i++) {
            llm_family_t *f = &c->fam[i];
            if (f->exporter != LLM_EXP_VLLM) continue;
            if (!llm_family_has_sample(f, c->renames[r].old_name, strlen(c->renames[r].old_name)) &&
                strcmp(f->name, c->renames[r].old_name) != 0)
                continue;
            if (c->renames[r].hidden.known && !f->hidden.known) f->hidden = c->renames[r].hidden;
            if (c->renames[r].deprecated.known && !f->deprecated.known)
                f->deprecated = c->renames[r].deprecated;
        }
    }
    build_index(c);
    g_catalog = c;
}

const llm_catalog_t *llm_catalog_get(void)
{
    pthread_once(&g_once, catalog_init);
    return g_catalog;
}

size_t llm_catalog_count(const llm_catalog_t *c)
{
    return c->nfam;
}

const llm_family_t *llm_catalog_family(const llm_catalog_t *c, size_t i)
{
    return i < c->nfam ? &c->fam[i] : NULL;
}

const llm_family_t *llm_catalog_lookup(const llm_catalog_t *c, const char *name, size_t len,
                                       llm_form_t *form, llm_suffix_t *suffix)
{
    uint64_t h = im_hash(name, len);
    for (size_t i = 0; i < INDEX_SLOTS; i++) {
        const index_slot_t *s = &c->index[(h + i) & (INDEX_SLOTS - 1)];
        if (!s->key) break;
        if (s->len == len && memcmp(s->key, name, len) == 0) {
            if (form) *form = (llm_form_t)s->form;
            if (suffix) *suffix = (llm_suffix_t)s->suffix;
            return &c->fam[s->fam];
        }
    }
    return NULL;
}

const llm_family_t *llm_catalog_by_family(const llm_catalog_t *c, const char *name, size_t len)
{
    for (size_t i = 0; i < c->nfam; i++)
        if (strlen(c->fam[i].name) == len && memcmp(c->fam[i].name, name, len) == 0)
            return &c->fam[i];
    return NULL;
}

const char *llm_catalog_renamed_to(const llm_catalog_t *c, const char *name, size_t len)
{
    for (size_t r = 0; r < c->nrenames; r++)
        if (strlen(c->renames[r].old_name) == len && memcmp(c->renames[r].old_name, name, len) == 0)
            return c->renames[r].replacement;
    return NULL;
}

bool llm_catalog_history(const llm_catalog_t *c, const char *name, size_t len, llm_version_t *added,
                         llm_version_t *removed)
{
    memset(added, 0, sizeof(*added));
    memset(removed, 0, sizeof(*removed));
    const event_t *last = NULL;
    for (size_t i = 0; i < c->nevents; i++) {
        const event_t *e = &c->events[i];
        if (strlen(e->name) != len || memcmp(e->name, name, len) != 0) continue;
        if (e->added && e->version.known &&
            (!added->known || llm_version_cmp(&e->version, added) < 0))
            *added = e->version;
        /* Rows are in commit order: the last one with the newest version decides. */
        if (!last || !last->version.known ||
            (e->version.known && llm_version_cmp(&e->version, &last->version) >= 0))
            last = e;
    }
    if (last && !last->added) *removed = last->version;
    return last != NULL;
}

llm_status_t llm_family_status(const llm_family_t *f, const llm_version_t *v)
{
    if (f->exporter != LLM_EXP_VLLM || !v || !v->known) return LLM_STATUS_CURRENT;
    if (f->removed.known && llm_version_cmp(v, &f->removed) >= 0) return LLM_STATUS_REMOVED;
    if (f->hidden.known && llm_version_cmp(v, &f->hidden) >= 0) return LLM_STATUS_HIDDEN;
    if (f->deprecated.known && llm_version_cmp(v, &f->deprecated) >= 0)
        return LLM_STATUS_DEPRECATED;
    if (f->first.known && llm_version_cmp(v, &f->first) < 0) return LLM_STATUS_NOT_YET;
    return LLM_STATUS_CURRENT;
}

bool llm_family_has_sample(const llm_family_t *f, const char *name, size_t len)
{
    for (int i = 0; i < f->nsamples; i++)
        if (strlen(f->samples[i]) == len && memcmp(f->samples[i], name, len) == 0) return true;
    return false;
}

bool llm_family_has_label(const llm_family_t *f, const char *label, size_t len)
{
    for (int i = 0; i < f->nlabels; i++)
        if (strlen(f->labels[i]) == len && memcmp(f->labels[i], label, len) == 0) return true;
    if (f->exporter == LLM_EXP_KUEUE && len > 7 && memcmp(label, "custom_", 7) == 0) return true;
    if (f->exporter == LLM_EXP_KSM && len > 6 && memcmp(label, "label_", 6) == 0) return true;
    if (f->exporter == LLM_EXP_KSM && len > 11 && memcmp(label, "annotation_", 11) == 0)
        return true;
    if (f->exporter == LLM_EXP_DCGM && len > 4 && memcmp(label, "dra_", 4) == 0) return true;
    return false;
}

size_t llm_family_sample_name(const llm_family_t *f, llm_suffix_t s, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s%s", f->base, llm_suffix_str(s));
    return n < 0 ? 0 : (size_t)n;
}
