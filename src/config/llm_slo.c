/* llm_slo.c — decodes and dumps llm.slos / llm.slo_files, and reads SLO files
 * in our format, Sloth's prometheus/v1 spec and OpenSLO v1 (see llm_slo.h). */
#include "util/base.h"

#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/llm_slo.h"
#include "labels/labels.h"
#include "util/mem.h"
#include "util/timeutil.h"

#define SLO_MAX_FILE_BYTES (4u << 20)

static const char *const win_names[CFG_SLO_NWINDOWS] = {"5m", "30m", "1h", "2h", "6h", "1d", "3d"};
static const int64_t win_ms[CFG_SLO_NWINDOWS] = {
    5 * 60000LL, 30 * 60000LL, 3600000LL, 2 * 3600000LL, 6 * 3600000LL, 86400000LL, 3 * 86400000LL};

const char *cfg_slo_window_name(int i)
{
    return i >= 0 && i < CFG_SLO_NWINDOWS ? win_names[i] : "?";
}

int64_t cfg_slo_window_ms(int i)
{
    return i >= 0 && i < CFG_SLO_NWINDOWS ? win_ms[i] : 0;
}

int cfg_slo_window_index(int64_t ms)
{
    for (int i = 0; i < CFG_SLO_NWINDOWS; i++)
        if (win_ms[i] == ms) return i;
    return -1;
}

const char *cfg_slo_sli_name(cfg_slo_sli_t s)
{
    return s == CFG_SLO_LATENCY ? "latency" : s == CFG_SLO_EVENTS ? "events" : "availability";
}

const char *cfg_slo_signal_name(cfg_slo_signal_t s)
{
    return s == CFG_SLO_SIG_TTFT  ? "ttft"
           : s == CFG_SLO_SIG_ITL ? "itl"
           : s == CFG_SLO_SIG_E2E ? "e2e"
                                  : NULL;
}

void cfg_slo_default_burns(cfg_slo_t *o)
{
    /* The SRE workbook's multiwindow, multi-burn-rate table (chapter 5). */
    o->npage = 2;
    o->page[0] = (cfg_slo_burn_t){14.4, 2, 0};
    o->page[1] = (cfg_slo_burn_t){6, 4, 1};
    o->nticket = 2;
    o->ticket[0] = (cfg_slo_burn_t){3, 5, 3};
    o->ticket[1] = (cfg_slo_burn_t){1, 6, 4};
}

bool cfg_slo_parse_seconds(const char *s, double *out)
{
    if (!s || !*s) return false;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v)) return false;
    double mul = 1;
    if (strcmp(end, "s") == 0 || *end == '\0')
        mul = 1;
    else if (strcmp(end, "ms") == 0)
        mul = 1e-3;
    else if (strcmp(end, "m") == 0)
        mul = 60;
    else
        return false;
    *out = v * mul;
    return true;
}

static void kv_free(cfg_slo_kv_t *kv)
{
    cfg_strv_free(kv->k, kv->n);
    cfg_strv_free(kv->v, kv->n);
}

/* key: a map of label (or annotation) names to strings, appended to kv (a key
 * already there takes the new value). */
static im_rc get_kv(cfg_dec_t *d, const cfg_node_t *m, const char *key, const char *what,
                    cfg_slo_kv_t *kv)
{
    char **k = NULL, **v = NULL;
    size_t n = 0;
    im_rc rc = cfg_get_strmap(d, m, key, &k, &v, &n);
    if (rc) return rc;
    for (size_t i = 0; i < n && !rc; i++)
        if (!im_label_name_valid(k[i], strlen(k[i])))
            rc = cfg_fail(d, cfg_get(m, key), "%s.%s: \"%s\" is not a label name", what, key, k[i]);
    for (size_t i = 0; i < n && !rc; i++) {
        size_t j = 0;
        while (j < kv->n && strcmp(kv->k[j], k[i]) != 0) j++;
        if (j < kv->n) {
            im_free(kv->v[j]);
            kv->v[j] = v[i];
            im_free(k[i]);
        } else {
            kv->k = im_realloc(kv->k, (kv->n + 1) * sizeof *kv->k);
            kv->v = im_realloc(kv->v, (kv->n + 1) * sizeof *kv->v);
            kv->k[kv->n] = k[i];
            kv->v[kv->n++] = v[i];
        }
        k[i] = v[i] = NULL;
    }
    cfg_strv_free(k, n);
    cfg_strv_free(v, n);
    return rc;
}

static void slo_free1(cfg_slo_t *o)
{
    kv_free(&o->rule_labels);
    kv_free(&o->alert_labels);
    kv_free(&o->page_labels);
    kv_free(&o->ticket_labels);
    kv_free(&o->alert_annots);
    kv_free(&o->page_annots);
    kv_free(&o->ticket_annots);
    im_free(o->name);
    im_free(o->model);
    cfg_strv_free(o->label_names, o->nlabels);
    cfg_strv_free(o->label_vals, o->nlabels);
    im_free(o->engine);
    im_free(o->metric);
    im_free(o->error_query);
    im_free(o->total_query);
    im_free(o->alert_name);
    im_free(o->origin);
    memset(o, 0, sizeof *o);
}

void cfg_llm_slo_free(cfg_llm_slo_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) slo_free1(&s->v[i]);
    im_free(s->v);
    cfg_strv_free(s->files, s->nfiles);
    memset(s, 0, sizeof *s);
}

static cfg_slo_t *slo_add(cfg_llm_slo_t *s)
{
    s->v = im_realloc(s->v, (s->n + 1) * sizeof *s->v);
    cfg_slo_t *o = &s->v[s->n++];
    memset(o, 0, sizeof *o);
    cfg_slo_default_burns(o);
    return o;
}

static char *fmt_origin(const char *file, const cfg_node_t *n, const char *what)
{
    char b[600];
    if (file)
        snprintf(b, sizeof b, "%s:%d:%d: %s", file, n ? n->line : 0, n ? n->col : 0, what);
    else
        snprintf(b, sizeof b, "%s", what);
    return im_strdup(b);
}

static bool name_ok(const char *s)
{
    if (!s || !*s) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

static bool metric_name_ok(const char *s)
{
    if (!s || !*s || (*s >= '0' && *s <= '9')) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == ':'))
            return false;
    return true;
}

/* objective: a percent in (0, 100), or "pNN < DUR" / "pNN <= DUR". */
static im_rc get_objective(cfg_dec_t *d, const cfg_node_t *n, const char *what, cfg_slo_t *o,
                           bool *shorthand)
{
    const cfg_node_t *v = cfg_get(n, "objective");
    *shorthand = false;
    if (!v) return cfg_fail(d, n, "%s.objective is required (a percent such as 99.5)", what);
    if (v->type == CFG_NODE_SCALAR && (v->str[0] == 'p' || v->str[0] == 'P')) {
        char *end = NULL;
        double p = strtod(v->str + 1, &end);
        while (end && *end == ' ') end++;
        if (!end || end == v->str + 1 || *end != '<')
            return cfg_fail(d, v, "%s.objective \"%s\" is not \"pNN < DURATION\" (e.g. p95 < 2s)",
                            what, v->str);
        end++;
        if (*end == '=') end++;
        while (*end == ' ') end++;
        double thr;
        if (!cfg_slo_parse_seconds(end, &thr) || !(thr > 0))
            return cfg_fail(d, v, "%s.objective \"%s\": \"%s\" is not a latency such as 2s", what,
                            v->str, end);
        if (!(p > 0 && p < 100))
            return cfg_fail(d, v, "%s.objective \"%s\": the percentile must be in (0, 100)", what,
                            v->str);
        o->objective = p / 100;
        o->threshold_s = thr;
        *shorthand = true;
        return IM_OK;
    }
    double p;
    im_rc rc = cfg_get_float(d, n, "objective", &p);
    if (rc) return rc;
    if (!(p > 0 && p < 100))
        return cfg_fail(d, v,
                        "%s.objective must be a percent above 0 and below 100 (100 %% leaves no "
                        "error budget), not %g",
                        what, p);
    o->objective = p / 100;
    return IM_OK;
}

static im_rc get_window(cfg_dec_t *d, const cfg_node_t *n, const char *what, cfg_slo_t *o)
{
    const cfg_node_t *v = cfg_get(n, "window");
    if (!v) {
        o->window_ms = 30 * 86400000LL;
        return IM_OK;
    }
    if (v->type == CFG_NODE_MAP) {
        static const char *const keys[] = {"calendar", NULL};
        char wb[400];
        snprintf(wb, sizeof wb, "%s.window", what);
        im_rc rc = cfg_check_map(d, v, wb, keys);
        if (rc) return rc;
        const cfg_node_t *c = cfg_get(v, "calendar");
        if (!c || c->type != CFG_NODE_SCALAR || strcmp(c->str, "month") != 0)
            return cfg_fail(d, c ? c : v, "%s.window.calendar must be \"month\"", what);
        o->calendar_month = true;
        return IM_OK;
    }
    int64_t ms = 0;
    if (v->type != CFG_NODE_SCALAR ||
        im_duration_parse(v->str, strlen(v->str), &ms, NULL) != IM_OK || ms <= 0)
        return cfg_fail(
            d, v, "%s.window must be a duration such as 30d (rolling) or {calendar: month}", what);
    if (ms < 3 * 86400000LL)
        return cfg_fail(d, v,
                        "%s.window %s is shorter than the longest burn-rate window (3d): use at "
                        "least 3d",
                        what, v->str);
    o->window_ms = ms;
    return IM_OK;
}

static im_rc get_burns(cfg_dec_t *d, const cfg_node_t *n, const char *what, cfg_slo_t *o)
{
    const cfg_node_t *b = cfg_get(n, "burn_rates");
    if (!b) return IM_OK;
    static const char *const keys[] = {"page", "ticket", NULL};
    char wb[400];
    snprintf(wb, sizeof wb, "%s.burn_rates", what);
    im_rc rc = cfg_check_map(d, b, wb, keys);
    if (rc) return rc;
    for (int sev = 0; sev < 2; sev++) {
        const char *sk = sev ? "ticket" : "page";
        const cfg_node_t *l = cfg_get(b, sk);
        if (!l) continue;
        cfg_slo_burn_t *dst = sev ? o->ticket : o->page;
        int *nd = sev ? &o->nticket : &o->npage;
        if (l->type != CFG_NODE_SEQ || l->nkids > CFG_SLO_MAX_BURNS)
            return cfg_fail(d, l,
                            "%s.burn_rates.%s must be a list of 0 to %d {factor, long, short} "
                            "entries",
                            what, sk, CFG_SLO_MAX_BURNS);
        *nd = 0;
        for (size_t i = 0; i < l->nkids; i++) {
            const cfg_node_t *e = l->kids[i];
            static const char *const ek[] = {"factor", "long", "short", NULL};
            char eb[600];
            snprintf(eb, sizeof eb, "%s.burn_rates.%s[%zu]", what, sk, i);
            if (e->type != CFG_NODE_MAP)
                return cfg_fail(d, e, "%s must be a mapping (factor, long, short)", eb);
            if ((rc = cfg_check_map(d, e, eb, ek))) return rc;
            cfg_slo_burn_t *x = &dst[(*nd)++];
            x->factor = NAN;
            if ((rc = cfg_get_float(d, e, "factor", &x->factor))) return rc;
            if (!(x->factor > 0) || !isfinite(x->factor))
                return cfg_fail(d, e, "%s.factor must be a burn rate > 0 (e.g. 14.4)", eb);
            const char *wk[2] = {"long", "short"};
            for (int k = 0; k < 2; k++) {
                int64_t ms = 0;
                const cfg_node_t *wv = cfg_get(e, wk[k]);
                if (!wv) return cfg_fail(d, e, "%s.%s is required (a recorded window)", eb, wk[k]);
                if ((rc = cfg_get_dur(d, e, wk[k], &ms))) return rc;
                int idx = cfg_slo_window_index(ms);
                if (idx < 0)
                    return cfg_fail(d, wv,
                                    "%s.%s must be one of the recorded windows 5m, 30m, 1h, 2h, "
                                    "6h, 1d, 3d, not %s",
                                    eb, wk[k], wv->str ? wv->str : "?");
                if (k == 0)
                    x->long_w = idx;
                else
                    x->short_w = idx;
            }
            if (x->short_w >= x->long_w)
                return cfg_fail(d, e, "%s.short must be shorter than %s.long", eb, eb);
        }
    }
    return IM_OK;
}

static void kv_put(cfg_slo_kv_t *kv, const char *k, char *v);

/* The string at m.key, if any, as the alert annotation name (a description:
 * documentation, carried to the alerts rather than dropped). */
static im_rc doc_annot(cfg_dec_t *d, const cfg_node_t *m, const char *key, const char *name,
                       cfg_slo_kv_t *kv)
{
    char *v = NULL;
    im_rc rc = cfg_get_str(d, m, key, &v);
    if (rc == IM_OK && v) kv_put(kv, name, v);
    return rc;
}

static im_rc decode_ours(cfg_dec_t *d, const cfg_node_t *n, const char *what, cfg_slo_t *o)
{
    static const char *const keys[] = {
        "name",      "model",     "labels", "engine",     "sli",        "signal",      "metric",
        "threshold", "objective", "window", "alert_name", "burn_rates", "description", NULL};
    if (!n || n->type != CFG_NODE_MAP)
        return cfg_fail(d, n, "%s must be a mapping (name, model, sli, objective, ...)", what);
    im_rc rc;
    if ((rc = cfg_check_map(d, n, what, keys))) return rc;
    o->origin = fmt_origin(NULL, n, what);
    if ((rc = cfg_get_str(d, n, "name", &o->name))) return rc;
    if ((rc = doc_annot(d, n, "description", "slo_description", &o->alert_annots))) return rc;
    if (!o->name) return cfg_fail(d, n, "%s.name is required", what);
    if (!name_ok(o->name))
        return cfg_fail(d, cfg_get(n, "name"),
                        "%s.name \"%s\" may only use letters, digits, '_', '-' and '.'", what,
                        o->name);
    if ((rc = cfg_get_str(d, n, "model", &o->model))) return rc;
    if ((rc = cfg_get_strmap(d, n, "labels", &o->label_names, &o->label_vals, &o->nlabels)))
        return rc;
    for (size_t i = 0; i < o->nlabels; i++)
        if (!im_label_name_valid(o->label_names[i], strlen(o->label_names[i])))
            return cfg_fail(d, cfg_get(n, "labels"), "%s.labels: \"%s\" is not a label name", what,
                            o->label_names[i]);
    if ((rc = cfg_get_str(d, n, "engine", &o->engine))) return rc;
    if (o->engine && !name_ok(o->engine))
        return cfg_fail(d, cfg_get(n, "engine"), "%s.engine \"%s\" is not an engine id", what,
                        o->engine);
    const cfg_node_t *v = cfg_get(n, "sli");
    bool shorthand;
    if ((rc = get_objective(d, n, what, o, &shorthand))) return rc;
    bool lat_keys = cfg_get(n, "signal") || cfg_get(n, "metric") || cfg_get(n, "threshold");
    if (!v && !shorthand && !lat_keys)
        return cfg_fail(d, n, "%s.sli is required: latency or availability", what);
    if (!v)
        o->sli = CFG_SLO_LATENCY;
    else if (v->type == CFG_NODE_SCALAR && strcmp(v->str, "latency") == 0)
        o->sli = CFG_SLO_LATENCY;
    else if (v->type == CFG_NODE_SCALAR && strcmp(v->str, "availability") == 0)
        o->sli = CFG_SLO_AVAILABILITY;
    else
        return cfg_fail(d, v, "%s.sli must be latency or availability, not \"%s\"", what,
                        v->type == CFG_NODE_SCALAR ? v->str : cfg_type_name(v));
    const cfg_node_t *sg = cfg_get(n, "signal"), *th = cfg_get(n, "threshold"),
                     *me = cfg_get(n, "metric");
    if (o->sli == CFG_SLO_AVAILABILITY) {
        const cfg_node_t *bad = shorthand ? cfg_get(n, "objective") : sg ? sg : th ? th : me;
        if (bad)
            return cfg_fail(d, bad,
                            "%s: an availability SLO has no signal, metric or threshold (those "
                            "are for sli: latency)",
                            what);
    } else {
        if (sg) {
            if (sg->type == CFG_NODE_SCALAR && strcmp(sg->str, "ttft") == 0)
                o->signal = CFG_SLO_SIG_TTFT;
            else if (sg->type == CFG_NODE_SCALAR && strcmp(sg->str, "itl") == 0)
                o->signal = CFG_SLO_SIG_ITL;
            else if (sg->type == CFG_NODE_SCALAR && strcmp(sg->str, "e2e") == 0)
                o->signal = CFG_SLO_SIG_E2E;
            else
                return cfg_fail(d, sg, "%s.signal must be ttft, itl or e2e, not \"%s\"", what,
                                sg->type == CFG_NODE_SCALAR ? sg->str : cfg_type_name(sg));
        }
        if ((rc = cfg_get_str(d, n, "metric", &o->metric))) return rc;
        if (o->metric && !metric_name_ok(o->metric))
            return cfg_fail(d, me, "%s.metric \"%s\" is not a metric name", what, o->metric);
        if (!o->metric == !o->signal)
            return cfg_fail(d, n,
                            "%s: a latency SLO needs exactly one of signal (ttft, itl, e2e) or "
                            "metric (a histogram family)",
                            what);
        if (th && shorthand)
            return cfg_fail(d, th, "%s.threshold is given twice (objective \"pNN < D\" sets it)",
                            what);
        if (th) {
            if (th->type != CFG_NODE_SCALAR || !cfg_slo_parse_seconds(th->str, &o->threshold_s))
                return cfg_fail(d, th, "%s.threshold must be a latency such as 2s or 500ms", what);
        } else if (!shorthand) {
            return cfg_fail(d, n, "%s.threshold is required for a latency SLO (e.g. 2.5s)", what);
        }
        if (!(o->threshold_s > 0))
            return cfg_fail(d, th ? th : cfg_get(n, "objective"), "%s.threshold must be above 0",
                            what);
    }
    if ((rc = get_window(d, n, what, o))) return rc;
    if ((rc = cfg_get_str(d, n, "alert_name", &o->alert_name))) return rc;
    if (o->alert_name && !metric_name_ok(o->alert_name))
        return cfg_fail(d, cfg_get(n, "alert_name"), "%s.alert_name \"%s\" is not a valid name",
                        what, o->alert_name);
    return get_burns(d, n, what, o);
}

static im_rc check_unique(cfg_dec_t *d, const cfg_llm_slo_t *s, const cfg_node_t *at)
{
    const cfg_slo_t *last = &s->v[s->n - 1];
    for (size_t i = 0; i + 1 < s->n; i++)
        if (strcmp(s->v[i].name, last->name) == 0)
            return cfg_fail(d, at, "SLO name \"%s\" is defined twice (also at %s)", last->name,
                            s->v[i].origin);
    return IM_OK;
}

static im_rc decode_list(cfg_dec_t *d, const cfg_node_t *l, const char *what, cfg_llm_slo_t *s)
{
    if (l->type != CFG_NODE_SEQ) return cfg_fail(d, l, "%s must be a list of SLOs", what);
    for (size_t i = 0; i < l->nkids; i++) {
        char wb[300];
        snprintf(wb, sizeof wb, "%s[%zu]", what, i);
        cfg_slo_t *o = slo_add(s);
        im_rc rc = decode_ours(d, l->kids[i], wb, o);
        if (rc) return rc;
        if (d->file) {
            im_free(o->origin);
            o->origin = fmt_origin(d->file, l->kids[i], wb);
        }
        if ((rc = check_unique(d, s, l->kids[i]))) return rc;
    }
    return IM_OK;
}

im_rc cfg_llm_slo_decode(cfg_dec_t *d, const cfg_node_t *slos, const cfg_node_t *files,
                         cfg_llm_slo_t *out)
{
    memset(out, 0, sizeof *out);
    im_rc rc;
    if (slos && !cfg_is_null(slos) && (rc = decode_list(d, slos, "llm.slos", out))) return rc;
    out->ninline = out->n;
    if (files && !cfg_is_null(files)) {
        if (files->type != CFG_NODE_SEQ)
            return cfg_fail(d, files, "llm.slo_files must be a list of file globs");
        for (size_t i = 0; i < files->nkids; i++)
            if (files->kids[i]->type != CFG_NODE_SCALAR || !*files->kids[i]->str)
                return cfg_fail(d, files->kids[i], "llm.slo_files[%zu] must be a file glob", i);
        out->files = im_calloc(files->nkids, sizeof *out->files);
        for (size_t i = 0; i < files->nkids; i++)
            out->files[out->nfiles++] = im_strdup(files->kids[i]->str);
    }
    return IM_OK;
}

/* ---- Sloth: version prometheus/v1 ---- */

static char *dup_window_template(const char *q)
{
    return im_strdup(q);
}

static im_rc decode_sloth(cfg_dec_t *d, const cfg_node_t *root, cfg_llm_slo_t *s)
{
    static const char *const keys[] = {"version", "service", "labels", "slos", NULL};
    im_rc rc;
    if ((rc = cfg_check_map(d, root, "Sloth spec", keys))) return rc;
    const cfg_node_t *v = cfg_get(root, "version");
    if (!v || v->type != CFG_NODE_SCALAR || strcmp(v->str, "prometheus/v1") != 0)
        return cfg_fail(d, v ? v : root, "Sloth spec: version must be \"prometheus/v1\"");
    char *service = NULL;
    if ((rc = cfg_get_str(d, root, "service", &service))) return rc;
    if (!service || !*service) {
        im_free(service);
        return cfg_fail(d, root, "Sloth spec: service is required");
    }
    const cfg_node_t *l = cfg_get(root, "slos");
    if (!l || l->type != CFG_NODE_SEQ) {
        im_free(service);
        return cfg_fail(d, l ? l : root, "Sloth spec: slos must be a list");
    }
    for (size_t i = 0; i < l->nkids && !rc; i++) {
        const cfg_node_t *e = l->kids[i];
        char wb[100];
        snprintf(wb, sizeof wb, "Sloth slos[%zu]", i);
        static const char *const ek[] = {"name", "objective", "description", "labels",
                                         "sli",  "alerting",  NULL};
        if (e->type != CFG_NODE_MAP) {
            rc = cfg_fail(d, e, "%s must be a mapping", wb);
            break;
        }
        if ((rc = cfg_check_map(d, e, wb, ek))) break;
        cfg_slo_t *o = slo_add(s);
        o->origin = fmt_origin(d->file, e, wb);
        char *n = NULL;
        if ((rc = cfg_get_str(d, e, "name", &n))) break;
        if (!n || !name_ok(n)) {
            im_free(n);
            rc = cfg_fail(d, e, "%s.name is required ([a-zA-Z0-9_.-]+)", wb);
            break;
        }
        size_t nl = strlen(service) + strlen(n) + 2;
        o->name = im_malloc(nl);
        snprintf(o->name, nl, "%s-%s", service, n);
        im_free(n);
        if ((rc = doc_annot(d, e, "description", "slo_description", &o->alert_annots))) break;
        if ((rc = get_kv(d, root, "labels", "Sloth spec", &o->rule_labels))) break;
        if ((rc = get_kv(d, e, "labels", wb, &o->rule_labels))) break;
        bool sh;
        if ((rc = get_objective(d, e, wb, o, &sh))) break;
        if (sh) {
            rc = cfg_fail(d, cfg_get(e, "objective"), "%s.objective must be a percent", wb);
            break;
        }
        o->window_ms = 30 * 86400000LL; /* Sloth's default time window */
        o->sli = CFG_SLO_EVENTS;
        const cfg_node_t *sli = cfg_get(e, "sli");
        static const char *const sk[] = {"events", "raw", "plugin", NULL};
        char sb[140];
        snprintf(sb, sizeof sb, "%s.sli", wb);
        if (!sli) {
            rc = cfg_fail(d, e, "%s.sli is required", wb);
            break;
        }
        if ((rc = cfg_check_map(d, sli, sb, sk))) break;
        if (cfg_get(sli, "plugin")) {
            rc = cfg_fail(d, cfg_get(sli, "plugin"),
                          "%s.plugin: Sloth SLI plugins are not supported (write the events "
                          "queries, or use sli: latency/availability in our format)",
                          sb);
            break;
        }
        const cfg_node_t *ev = cfg_get(sli, "events"), *raw = cfg_get(sli, "raw");
        if (ev) {
            static const char *const evk[] = {"error_query", "errorQuery", "total_query",
                                              "totalQuery", NULL};
            char eb[160];
            snprintf(eb, sizeof eb, "%s.events", sb);
            if ((rc = cfg_check_map(d, ev, eb, evk))) break;
            char *eq = NULL, *tq = NULL;
            if ((rc = cfg_get_str(d, ev, "error_query", &eq))) break;
            if (!eq && (rc = cfg_get_str(d, ev, "errorQuery", &eq))) break;
            if ((rc = cfg_get_str(d, ev, "total_query", &tq))) {
                im_free(eq);
                break;
            }
            if (!tq && (rc = cfg_get_str(d, ev, "totalQuery", &tq))) {
                im_free(eq);
                break;
            }
            o->error_query = eq;
            o->total_query = tq;
            if (!eq || !tq) {
                rc = cfg_fail(d, ev, "%s needs error_query and total_query", eb);
                break;
            }
        } else if (raw) {
            static const char *const rk[] = {"error_ratio_query", "errorRatioQuery", NULL};
            char rb[160];
            snprintf(rb, sizeof rb, "%s.raw", sb);
            if ((rc = cfg_check_map(d, raw, rb, rk))) break;
            char *q = NULL;
            if ((rc = cfg_get_str(d, raw, "error_ratio_query", &q))) break;
            if (!q && (rc = cfg_get_str(d, raw, "errorRatioQuery", &q))) break;
            if (!q) {
                rc = cfg_fail(d, raw, "%s needs error_ratio_query", rb);
                break;
            }
            o->error_query = dup_window_template(q);
            im_free(q);
            o->total_query = im_strdup("1");
        } else {
            rc = cfg_fail(d, sli, "%s needs events (error_query, total_query) or raw", sb);
            break;
        }
        const cfg_node_t *al = cfg_get(e, "alerting");
        if (al) {
            static const char *const ak[] = {
                "name",         "labels",    "annotations", "page_alert",
                "ticket_alert", "pageAlert", "ticketAlert", NULL};
            char ab[140];
            snprintf(ab, sizeof ab, "%s.alerting", wb);
            if ((rc = cfg_check_map(d, al, ab, ak))) break;
            if ((rc = cfg_get_str(d, al, "name", &o->alert_name))) break;
            if (o->alert_name && !metric_name_ok(o->alert_name)) {
                rc = cfg_fail(d, cfg_get(al, "name"), "%s.name \"%s\" is not a valid alert name",
                              ab, o->alert_name);
                break;
            }
            if ((rc = get_kv(d, al, "labels", ab, &o->alert_labels))) break;
            if ((rc = get_kv(d, al, "annotations", ab, &o->alert_annots))) break;
            const char *const pk[4] = {"page_alert", "pageAlert", "ticket_alert", "ticketAlert"};
            for (int k = 0; k < 4 && !rc; k++) {
                const cfg_node_t *pa = cfg_get(al, pk[k]);
                if (!pa) continue;
                static const char *const pak[] = {"labels", "annotations", "disable", NULL};
                char pb[180];
                snprintf(pb, sizeof pb, "%s.%s", ab, pk[k]);
                if ((rc = cfg_check_map(d, pa, pb, pak))) break;
                if ((rc = get_kv(d, pa, "labels", pb, k < 2 ? &o->page_labels : &o->ticket_labels)))
                    break;
                if ((rc = get_kv(d, pa, "annotations", pb,
                                 k < 2 ? &o->page_annots : &o->ticket_annots)))
                    break;
                bool dis = false;
                if ((rc = cfg_get_bool(d, pa, "disable", &dis))) break;
                if (dis) {
                    if (k < 2)
                        o->npage = 0;
                    else
                        o->nticket = 0;
                }
            }
            if (rc) break;
        }
        if ((rc = check_unique(d, s, e))) break;
    }
    im_free(service);
    return rc;
}

/* ---- OpenSLO v1 kind: SLO ---- */

/* A plain series selector: name{...} or {...}; what the wrapper can rate(). */
static bool is_selector(const char *q)
{
    while (*q == ' ' || *q == '\n') q++;
    const char *p = q;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
           *p == '_' || *p == ':')
        p++;
    if (p == q && *p != '{') return false;
    if (*p == '{') {
        const char *c = strrchr(p, '}');
        if (!c) return false;
        p = c + 1;
    }
    while (*p == ' ' || *p == '\n') p++;
    return *p == '\0';
}

/* A metricSource {type: Prometheus, spec: {query: ...}} under m; *out owned.
 * metricSourceRef (a DataSource object: connection details) does not map:
 * infermon queries its own store, or the one it is pointed at. */
static im_rc openslo_query(cfg_dec_t *d, const cfg_node_t *m, const char *what, char **out)
{
    static const char *const mk[] = {"metricSource", NULL};
    static const char *const msk[] = {"metricSourceRef", "type", "spec", NULL};
    static const char *const sk[] = {"query", NULL};
    char b[200];
    im_rc rc;
    if ((rc = cfg_check_map(d, m, what, mk))) return rc;
    const cfg_node_t *ms = cfg_get(m, "metricSource");
    if (!ms) return cfg_fail(d, m, "%s.metricSource is required", what);
    snprintf(b, sizeof b, "%s.metricSource", what);
    if ((rc = cfg_check_map(d, ms, b, msk))) return rc;
    if (cfg_get(ms, "metricSourceRef"))
        return cfg_fail(d, cfg_get(ms, "metricSourceRef"),
                        "%s.metricSourceRef: DataSource objects do not map (infermon queries its "
                        "own store or the one given with --prometheus/--query.backend-url); "
                        "write type: Prometheus and spec.query",
                        what);
    const cfg_node_t *t = cfg_get(ms, "type");
    if (!t || t->type != CFG_NODE_SCALAR || strcasecmp(t->str, "prometheus") != 0)
        return cfg_fail(d, t ? t : ms, "%s.metricSource.type must be Prometheus", what);
    const cfg_node_t *sp = cfg_get(ms, "spec");
    if (!sp) return cfg_fail(d, ms, "%s.metricSource.spec.query is required", what);
    snprintf(b, sizeof b, "%s.metricSource.spec", what);
    if ((rc = cfg_check_map(d, sp, b, sk))) return rc;
    rc = cfg_get_str(d, sp, "query", out);
    if (rc) return rc;
    if (!*out) return cfg_fail(d, sp, "%s.metricSource.spec.query is required", what);
    return IM_OK;
}

static char *wrap_rate(const char *sel)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    while (*sel == ' ' || *sel == '\n') sel++;
    size_t n = strlen(sel);
    while (n && (sel[n - 1] == ' ' || sel[n - 1] == '\n')) n--;
    (void)im_buf_printf(&b, "sum(rate(%.*s[{{.window}}]))", (int)n, sel);
    return im_buf_steal(&b, NULL);
}

/* Sets k to v (owned by the call) in kv; a key already there takes v. */
static void kv_put(cfg_slo_kv_t *kv, const char *k, char *v)
{
    for (size_t j = 0; j < kv->n; j++)
        if (strcmp(kv->k[j], k) == 0) {
            im_free(kv->v[j]);
            kv->v[j] = v;
            return;
        }
    kv->k = im_realloc(kv->k, (kv->n + 1) * sizeof *kv->k);
    kv->v = im_realloc(kv->v, (kv->n + 1) * sizeof *kv->v);
    kv->k[kv->n] = im_strdup(k);
    kv->v[kv->n++] = v;
}

/* OpenSLO metadata.labels: label name -> a string or a list of strings (the
 * list joined with ","), onto every rule of the SLO (as Sloth's labels). */
static im_rc openslo_labels(cfg_dec_t *d, const cfg_node_t *md, cfg_slo_kv_t *kv)
{
    const cfg_node_t *l = cfg_get(md, "labels");
    if (!l) return IM_OK;
    if (l->type != CFG_NODE_MAP)
        return cfg_fail(d, l, "OpenSLO metadata.labels must be a mapping of label names");
    for (size_t i = 0; i + 1 < l->nkids; i += 2) {
        const cfg_node_t *k = l->kids[i], *v = l->kids[i + 1];
        if (k->type != CFG_NODE_SCALAR || !im_label_name_valid(k->str, strlen(k->str)))
            return cfg_fail(d, k,
                            "OpenSLO metadata.labels: \"%s\" is not a Prometheus label name "
                            "([a-zA-Z_][a-zA-Z0-9_]*): it goes on the generated rules",
                            k->type == CFG_NODE_SCALAR ? k->str : "?");
        for (size_t j = 0; j < i; j += 2)
            if (strcmp(l->kids[j]->str, k->str) == 0)
                return cfg_fail(d, k, "mapping key \"%s\" already defined at line %d", k->str,
                                l->kids[j]->line);
        im_buf_t b;
        im_buf_init(&b, 0);
        if (v->type == CFG_NODE_SCALAR) {
            (void)im_buf_puts(&b, v->str);
        } else if (v->type == CFG_NODE_SEQ && v->nkids) {
            for (size_t j = 0; j < v->nkids; j++) {
                if (v->kids[j]->type != CFG_NODE_SCALAR) {
                    im_buf_free(&b);
                    return cfg_fail(d, v->kids[j],
                                    "OpenSLO metadata.labels.%s: a list of strings, not %s", k->str,
                                    cfg_type_name(v->kids[j]));
                }
                if (j) (void)im_buf_putc(&b, ',');
                (void)im_buf_puts(&b, v->kids[j]->str);
            }
        } else {
            im_buf_free(&b);
            return cfg_fail(
                d, v, "OpenSLO metadata.labels.%s must be a string or a list of strings", k->str);
        }
        char *val = im_buf_steal(&b, NULL);
        kv_put(kv, k->str, val ? val : im_strdup(""));
    }
    return IM_OK;
}

/* A documentation string at m.key, if any, as the alert annotation name. */

/* "YYYY-MM-01 00:00:00" (or with T): the start of a calendar month. */
static bool month_aligned(const char *t)
{
    int y, mo, dd, h, mi, se;
    if (strlen(t) != 19) return false;
    for (int i = 0; i < 19; i++) {
        bool digit = t[i] >= '0' && t[i] <= '9';
        if ((i == 4 || i == 7)     ? t[i] != '-'
            : i == 10              ? (t[i] != ' ' && t[i] != 'T')
            : (i == 13 || i == 16) ? t[i] != ':'
                                   : !digit)
            return false;
    }
    y = (t[0] - '0') * 1000 + (t[1] - '0') * 100 + (t[2] - '0') * 10 + (t[3] - '0');
    mo = (t[5] - '0') * 10 + (t[6] - '0');
    dd = (t[8] - '0') * 10 + (t[9] - '0');
    h = (t[11] - '0') * 10 + (t[12] - '0');
    mi = (t[14] - '0') * 10 + (t[15] - '0');
    se = (t[17] - '0') * 10 + (t[18] - '0');
    return y > 0 && mo >= 1 && mo <= 12 && dd == 1 && h == 0 && mi == 0 && se == 0;
}

/* spec.timeWindow: a list of one {duration, isRolling, calendar}. */
static im_rc openslo_window(cfg_dec_t *d, const cfg_node_t *tw, cfg_slo_t *o)
{
    static const char *const wk[] = {"duration", "isRolling", "calendar", NULL};
    static const char *const ck[] = {"startTime", "timeZone", NULL};
    im_rc rc;
    if (tw->type != CFG_NODE_SEQ || tw->nkids != 1)
        return cfg_fail(d, tw, "OpenSLO spec.timeWindow must be a list of one window");
    const cfg_node_t *w = tw->kids[0];
    if ((rc = cfg_check_map(d, w, "OpenSLO spec.timeWindow[0]", wk))) return rc;
    const cfg_node_t *du = cfg_get(w, "duration"), *cal = cfg_get(w, "calendar");
    if (!du || du->type != CFG_NODE_SCALAR)
        return cfg_fail(d, w, "OpenSLO spec.timeWindow[0].duration is required");
    bool has_rolling = cfg_get(w, "isRolling") != NULL, rolling = !cal;
    if ((rc = cfg_get_bool(d, w, "isRolling", &rolling))) return rc;
    if (!has_rolling) rolling = !cal && strcmp(du->str, "1M") != 0;
    if (rolling && cal)
        return cfg_fail(d, cfg_get(w, "isRolling"),
                        "OpenSLO spec.timeWindow[0]: isRolling: true with a calendar: a window "
                        "is rolling or calendar-aligned");
    if (!rolling) {
        if (strcmp(du->str, "1M") != 0)
            return cfg_fail(d, du,
                            "OpenSLO spec.timeWindow[0].duration: a calendar window maps only as "
                            "1M (the calendar month, UTC), not %s",
                            du->str);
        if (cal) {
            if ((rc = cfg_check_map(d, cal, "OpenSLO spec.timeWindow[0].calendar", ck))) return rc;
            const cfg_node_t *tz = cfg_get(cal, "timeZone"), *st = cfg_get(cal, "startTime");
            if (tz && (tz->type != CFG_NODE_SCALAR ||
                       (strcmp(tz->str, "UTC") != 0 && strcmp(tz->str, "Etc/UTC") != 0)))
                return cfg_fail(d, tz,
                                "OpenSLO spec.timeWindow[0].calendar.timeZone: infermon's "
                                "calendar months are UTC; only UTC maps, not %s",
                                tz->type == CFG_NODE_SCALAR ? tz->str : "a non-string");
            if (st && (st->type != CFG_NODE_SCALAR || !month_aligned(st->str)))
                return cfg_fail(d, st,
                                "OpenSLO spec.timeWindow[0].calendar.startTime: the window is "
                                "the calendar month, so the start must be the first of a month "
                                "at 00:00:00 (e.g. \"2026-01-01 00:00:00\"), not %s",
                                st->type == CFG_NODE_SCALAR ? st->str : "a non-string");
        }
        o->calendar_month = true;
        o->window_ms = 0;
        return IM_OK;
    }
    int64_t ms;
    if (strcmp(du->str, "1M") == 0)
        return cfg_fail(d, du,
                        "OpenSLO spec.timeWindow[0].duration: a rolling 1M has no fixed length; "
                        "write 30d (or 4w), or a calendar month (isRolling: false)");
    if (im_duration_parse(du->str, strlen(du->str), &ms, NULL) != IM_OK || ms < 3 * 86400000LL)
        return cfg_fail(d, du,
                        "OpenSLO spec.timeWindow[0].duration must be a duration of at least 3d, "
                        "not %s",
                        du->str);
    o->window_ms = ms;
    return IM_OK;
}

/* An OpenSLO v1 document (kind SLO; Service is skipped, other kinds refused).
 * Every key OpenSLO defines is either honoured or refused with the field
 * named; see docs/slo.md (OpenSLO import) for the mapping. */
static im_rc decode_openslo(cfg_dec_t *d, const cfg_node_t *root, cfg_llm_slo_t *s)
{
    const cfg_node_t *k = cfg_get(root, "kind");
    const cfg_node_t *av = cfg_get(root, "apiVersion");
    if (!av || av->type != CFG_NODE_SCALAR || strcmp(av->str, "openslo/v1") != 0)
        return cfg_fail(d, av ? av : root, "OpenSLO: apiVersion must be openslo/v1");
    static const char *const keys[] = {"apiVersion", "kind", "metadata", "spec", NULL};
    static const char *const mdk[] = {"name", "displayName", "labels", "annotations", NULL};
    im_rc rc;
    if (k && k->type == CFG_NODE_SCALAR && strcmp(k->str, "Service") == 0) {
        /* no SLO in it: it names the service the SLOs name in spec.service
         * (their label service); labels there would be expected on rules */
        static const char *const svk[] = {"description", NULL};
        static const char *const smk[] = {"name", "displayName", "labels", "annotations", NULL};
        if ((rc = cfg_check_map(d, root, "OpenSLO Service", keys))) return rc;
        const cfg_node_t *smd = cfg_get(root, "metadata");
        if ((rc = cfg_check_map(d, smd, "OpenSLO Service metadata", smk))) return rc;
        for (int i = 2; i < 4; i++)
            if (cfg_get(smd, smk[i]))
                return cfg_fail(d, cfg_get(smd, smk[i]),
                                "OpenSLO Service metadata.%s: a Service makes no rules; put the "
                                "%s on its SLOs' metadata",
                                smk[i], smk[i]);
        return cfg_check_map(d, cfg_get(root, "spec"), "OpenSLO Service spec", svk);
    }
    if (!k || k->type != CFG_NODE_SCALAR || strcmp(k->str, "SLO") != 0)
        return cfg_fail(d, k ? k : root,
                        "OpenSLO: kind %s does not map to an infermon SLO (SLO and Service do)",
                        k && k->type == CFG_NODE_SCALAR ? k->str : "(none)");
    if ((rc = cfg_check_map(d, root, "OpenSLO SLO", keys))) return rc;
    const cfg_node_t *md = cfg_get(root, "metadata"), *sp = cfg_get(root, "spec");
    if (!md || !sp) return cfg_fail(d, root, "OpenSLO SLO: metadata and spec are required");
    if ((rc = cfg_check_map(d, md, "OpenSLO metadata", mdk))) return rc;
    cfg_slo_t *o = slo_add(s);
    o->origin = fmt_origin(d->file, root, "OpenSLO SLO");
    if ((rc = cfg_get_str(d, md, "name", &o->name))) return rc;
    if (!o->name || !name_ok(o->name))
        return cfg_fail(d, md, "OpenSLO metadata.name is required ([a-zA-Z0-9_.-]+)");
    static const char *const spk[] = {"description",  "service",       "indicator",
                                      "indicatorRef", "timeWindow",    "budgetingMethod",
                                      "objectives",   "alertPolicies", NULL};
    if ((rc = cfg_check_map(d, sp, "OpenSLO spec", spk))) return rc;
    /* labels: spec.service as `service`, then metadata.labels (win on a clash) */
    char *svc = NULL;
    if ((rc = cfg_get_str(d, sp, "service", &svc))) return rc;
    if (svc) kv_put(&o->rule_labels, "service", svc);
    if ((rc = openslo_labels(d, md, &o->rule_labels))) return rc;
    /* metadata.annotations on both alerts, as Sloth's alerting.annotations */
    if ((rc = get_kv(d, md, "annotations", "OpenSLO metadata", &o->alert_annots))) return rc;
    if ((rc = doc_annot(d, md, "displayName", "openslo_display_name", &o->alert_annots)) ||
        (rc = doc_annot(d, sp, "description", "openslo_description", &o->alert_annots)))
        return rc;
    if (cfg_get(sp, "indicatorRef"))
        return cfg_fail(d, cfg_get(sp, "indicatorRef"),
                        "OpenSLO spec.indicatorRef: inline the SLI as spec.indicator");
    if (cfg_get(sp, "alertPolicies"))
        return cfg_fail(d, cfg_get(sp, "alertPolicies"),
                        "OpenSLO spec.alertPolicies: alert policies do not map; infermon writes "
                        "its multiwindow, multi-burn-rate alerts (drop alertPolicies, or tune "
                        "burn_rates in infermon's SLO format)");
    const cfg_node_t *bm = cfg_get(sp, "budgetingMethod");
    if (bm && (bm->type != CFG_NODE_SCALAR || strcmp(bm->str, "Occurrences") != 0))
        return cfg_fail(d, bm,
                        "OpenSLO spec.budgetingMethod: only Occurrences maps (request-based "
                        "SLIs)");
    const cfg_node_t *tw = cfg_get(sp, "timeWindow");
    o->window_ms = 30 * 86400000LL;
    if (tw && (rc = openslo_window(d, tw, o))) return rc;
    /* objectives: one */
    const cfg_node_t *ob = cfg_get(sp, "objectives");
    if (!ob || ob->type != CFG_NODE_SEQ || ob->nkids != 1)
        return cfg_fail(d, ob ? ob : sp, "OpenSLO spec.objectives must be a list of one objective");
    const cfg_node_t *o0 = ob->kids[0];
    static const char *const ok[] = {"displayName",
                                     "op",
                                     "value",
                                     "target",
                                     "targetPercent",
                                     "timeSliceTarget",
                                     "timeSliceWindow",
                                     "compositeWeight",
                                     NULL};
    if ((rc = cfg_check_map(d, o0, "OpenSLO spec.objectives[0]", ok))) return rc;
    static const char *const nomap[] = {"timeSliceTarget", "timeSliceWindow", "compositeWeight"};
    for (int i = 0; i < 3; i++)
        if (cfg_get(o0, nomap[i]))
            return cfg_fail(d, cfg_get(o0, nomap[i]),
                            "OpenSLO spec.objectives[0].%s does not map (%s): infermon's SLOs "
                            "are request-based (Occurrences), one objective each",
                            nomap[i], i < 2 ? "Timeslices budgeting" : "composite SLOs");
    if ((rc = doc_annot(d, o0, "displayName", "openslo_objective_display_name", &o->alert_annots)))
        return rc;
    double target = NAN, tp = NAN, value = NAN;
    if ((rc = cfg_get_float(d, o0, "target", &target))) return rc;
    if ((rc = cfg_get_float(d, o0, "targetPercent", &tp))) return rc;
    if ((rc = cfg_get_float(d, o0, "value", &value))) return rc;
    if (!isnan(tp) && !isnan(target))
        return cfg_fail(d, o0, "OpenSLO spec.objectives[0]: target or targetPercent, not both");
    if (!isnan(tp)) target = tp / 100;
    if (!(target > 0 && target < 1))
        return cfg_fail(d, o0,
                        "OpenSLO spec.objectives[0].target must be in (0, 1) "
                        "(or targetPercent in (0, 100))");
    o->objective = target;
    /* indicator */
    const cfg_node_t *ind = cfg_get(sp, "indicator");
    static const char *const ik[] = {"metadata", "spec", NULL};
    static const char *const imk[] = {"name", "displayName", NULL};
    static const char *const isk[] = {"description", "ratioMetric", "thresholdMetric", NULL};
    if (ind && (rc = cfg_check_map(d, ind, "OpenSLO spec.indicator", ik))) return rc;
    const cfg_node_t *imd = ind ? cfg_get(ind, "metadata") : NULL;
    if (imd && ((rc = cfg_check_map(d, imd, "OpenSLO spec.indicator.metadata", imk)) ||
                (rc = doc_annot(d, imd, "name", "openslo_indicator", &o->alert_annots)) ||
                (rc = doc_annot(d, imd, "displayName", "openslo_indicator_display_name",
                                &o->alert_annots))))
        return rc;
    const cfg_node_t *is = ind ? cfg_get(ind, "spec") : NULL;
    if (!is) return cfg_fail(d, ind ? ind : sp, "OpenSLO spec.indicator.spec is required");
    if ((rc = cfg_check_map(d, is, "OpenSLO spec.indicator.spec", isk)) ||
        (rc = doc_annot(d, is, "description", "openslo_indicator_description", &o->alert_annots)))
        return rc;
    const cfg_node_t *rm = cfg_get(is, "ratioMetric"), *tm = cfg_get(is, "thresholdMetric");
    const cfg_node_t *op = cfg_get(o0, "op");
    if (rm && tm)
        return cfg_fail(d, is,
                        "OpenSLO spec.indicator.spec: ratioMetric or thresholdMetric, "
                        "not both");
    if (rm) {
        static const char *const rk[] = {"counter", "good", "bad", "total", "raw", "rawType", NULL};
        if ((rc = cfg_check_map(d, rm, "OpenSLO ratioMetric", rk))) return rc;
        if (cfg_get(rm, "raw") || cfg_get(rm, "rawType"))
            return cfg_fail(d, cfg_get(rm, "raw") ? cfg_get(rm, "raw") : cfg_get(rm, "rawType"),
                            "OpenSLO ratioMetric.raw: a precomputed ratio does not map (the "
                            "burn-rate windows need counts); give good or bad, and total");
        bool counter = true;
        if ((rc = cfg_get_bool(d, rm, "counter", &counter))) return rc;
        if (!counter)
            return cfg_fail(d, cfg_get(rm, "counter"),
                            "OpenSLO ratioMetric.counter: false does not map: infermon rates the "
                            "good/bad and total series, which must be counters");
        if (op || !isnan(value))
            return cfg_fail(d, op ? op : o0,
                            "OpenSLO spec.objectives[0].%s is for a thresholdMetric, not a "
                            "ratioMetric",
                            op ? "op" : "value");
        const cfg_node_t *good = cfg_get(rm, "good"), *bad = cfg_get(rm, "bad"),
                         *total = cfg_get(rm, "total");
        if (!total || (!good == !bad))
            return cfg_fail(d, rm,
                            "OpenSLO spec.indicator.spec.ratioMetric needs total and one of good "
                            "or bad");
        char *tq = NULL, *gq = NULL;
        if ((rc = openslo_query(d, total, "OpenSLO ratioMetric.total", &tq))) return rc;
        if ((rc = openslo_query(d, good ? good : bad,
                                good ? "OpenSLO ratioMetric.good" : "OpenSLO ratioMetric.bad",
                                &gq))) {
            im_free(tq);
            return rc;
        }
        if (!is_selector(tq) || !is_selector(gq)) {
            im_free(tq);
            im_free(gq);
            return cfg_fail(d, rm,
                            "OpenSLO ratioMetric queries must be series selectors of counters "
                            "(e.g. requests_total{code!~\"5..\"}): infermon rates them");
        }
        o->sli = CFG_SLO_EVENTS;
        o->total_query = wrap_rate(tq);
        char *g = wrap_rate(gq);
        if (good) {
            im_buf_t b;
            im_buf_init(&b, 0);
            (void)im_buf_printf(&b, "(%s - %s)", o->total_query, g);
            o->error_query = im_buf_steal(&b, NULL);
            im_free(g);
        } else {
            o->error_query = g;
        }
        im_free(tq);
        im_free(gq);
    } else if (tm) {
        char *q = NULL;
        if ((rc = openslo_query(d, tm, "OpenSLO thresholdMetric", &q))) return rc;
        size_t n = strlen(q);
        while (n && (q[n - 1] == ' ' || q[n - 1] == '\n')) q[--n] = '\0';
        if (n > 7 && strcmp(q + n - 7, "_bucket") == 0) q[n - 7] = '\0';
        if (!metric_name_ok(q)) {
            rc = cfg_fail(d, tm,
                          "OpenSLO thresholdMetric: the query must name a latency histogram "
                          "family (e.g. vllm:time_to_first_token_seconds), not \"%s\"",
                          q);
            im_free(q);
            return rc;
        }
        if (op && (op->type != CFG_NODE_SCALAR ||
                   (strcmp(op->str, "lt") != 0 && strcmp(op->str, "lte") != 0))) {
            im_free(q);
            return cfg_fail(d, op,
                            "OpenSLO spec.objectives[0].op: a latency objective is lt or lte");
        }
        if (!(value > 0)) {
            im_free(q);
            return cfg_fail(d, o0,
                            "OpenSLO spec.objectives[0].value (the latency threshold, seconds) "
                            "must be above 0");
        }
        o->sli = CFG_SLO_LATENCY;
        o->metric = q;
        o->threshold_s = value;
    } else {
        return cfg_fail(d, is, "OpenSLO indicator: only ratioMetric and thresholdMetric map");
    }
    return check_unique(d, s, root);
}

/* ---- Files ---- */

static im_rc decode_doc(cfg_dec_t *d, const cfg_node_t *root, cfg_llm_slo_t *s)
{
    if (!root || root->type != CFG_NODE_MAP)
        return cfg_fail(d, root,
                        "an SLO file is a mapping: {slos: [...]} (infermon), Sloth's "
                        "version: prometheus/v1, or OpenSLO's apiVersion: openslo/v1");
    if (cfg_get(root, "version")) return decode_sloth(d, root, s);
    if (cfg_get(root, "apiVersion")) return decode_openslo(d, root, s);
    static const char *const keys[] = {"slos", NULL};
    im_rc rc = cfg_check_map(d, root, "SLO file", keys);
    if (rc) return rc;
    const cfg_node_t *l = cfg_get(root, "slos");
    if (!l) return cfg_fail(d, root, "SLO file: slos is required");
    return decode_list(d, l, "slos", s);
}

im_rc cfg_llm_slo_parse_file(cfg_llm_slo_t *s, const char *text, size_t len, const char *name,
                             im_err_t *err)
{
    cfg_node_t *root = NULL;
    im_rc rc = cfg_parse_yaml(text, len, name, &root, err);
    if (rc) return rc;
    cfg_dec_t d = {name, err};
    if (root && root->type == CFG_NODE_SEQ) { /* a list of OpenSLO documents */
        for (size_t i = 0; i < root->nkids && !rc; i++) rc = decode_doc(&d, root->kids[i], s);
    } else {
        rc = decode_doc(&d, root, s);
    }
    cfg_node_free(root);
    if (rc && err) err->file = name;
    return rc;
}

im_rc cfg_llm_slo_load_files(cfg_llm_slo_t *s, const char *dir, im_err_t *err)
{
    for (size_t i = 0; i < s->nfiles; i++) {
        char pat[4096];
        const char *g = s->files[i];
        if (g[0] != '/' && dir && *dir)
            snprintf(pat, sizeof pat, "%s/%s", dir, g);
        else
            snprintf(pat, sizeof pat, "%s", g);
        glob_t gl;
        memset(&gl, 0, sizeof gl);
        int grc = glob(pat, 0, NULL, &gl);
        if (grc != 0 || gl.gl_pathc == 0) {
            globfree(&gl);
            return im_err_set(err, IM_EINVAL, "llm.slo_files[%zu]: \"%s\" matches no file", i, g);
        }
        for (size_t f = 0; f < gl.gl_pathc; f++) {
            const char *path = gl.gl_pathv[f];
            im_buf_t b;
            im_buf_init(&b, SLO_MAX_FILE_BYTES);
            int se = 0;
            im_rc rc = cfg_read_file(path, &b, &se);
            if (rc) {
                im_buf_free(&b);
                globfree(&gl);
                return im_err_set(err, rc == IM_ELIMIT ? IM_ELIMIT : IM_EIO,
                                  "llm.slo_files[%zu]: cannot read %s: %s", i, path,
                                  rc == IM_ELIMIT ? "larger than 4 MiB"
                                  : se            ? strerror(se)
                                                  : "read error");
            }
            char *pname = im_strdup(path);
            rc = cfg_llm_slo_parse_file(s, b.data ? b.data : "", b.len, pname, err);
            im_buf_free(&b);
            if (rc) {
                /* the error's file must outlive this call: keep the name in the glob list */
                char eb[800];
                snprintf(eb, sizeof eb, "%s", err ? err->msg : "");
                int line = err ? err->line : 0, col = err ? err->col : 0;
                im_err_set(err, rc, "llm.slo_files[%zu]: %s:%d:%d: %s", i, pname, line, col, eb);
                if (err) err->file = NULL;
                im_free(pname);
                globfree(&gl);
                return rc;
            }
            im_free(pname);
        }
        globfree(&gl);
    }
    return IM_OK;
}

/* ---- Dump ---- */

static void dump_num(im_buf_t *o, double v)
{
    char b[32];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(b, sizeof b, "%.*g", prec, v);
        if (strtod(b, NULL) == v) break;
    }
    (void)im_buf_puts(o, b);
}

void cfg_llm_slo_dump(const cfg_llm_slo_t *s, im_buf_t *o)
{
    if (s->ninline) (void)im_buf_puts(o, "  slos:\n");
    for (size_t i = 0; i < s->ninline; i++) {
        const cfg_slo_t *x = &s->v[i];
        (void)im_buf_puts(o, "    - ");
        cfg_emit_kv(o, 0, "name", x->name);
        if (x->model) cfg_emit_kv(o, 6, "model", x->model);
        if (x->nlabels) (void)im_buf_puts(o, "      labels:\n");
        for (size_t k = 0; k < x->nlabels; k++)
            cfg_emit_kv(o, 8, x->label_names[k], x->label_vals[k]);
        if (x->engine) cfg_emit_kv(o, 6, "engine", x->engine);
        (void)im_buf_printf(o, "      sli: %s\n", cfg_slo_sli_name(x->sli));
        if (x->signal) (void)im_buf_printf(o, "      signal: %s\n", cfg_slo_signal_name(x->signal));
        if (x->metric) cfg_emit_kv(o, 6, "metric", x->metric);
        if (x->sli == CFG_SLO_LATENCY) {
            (void)im_buf_puts(o, "      threshold: ");
            dump_num(o, x->threshold_s);
            (void)im_buf_puts(o, "s\n");
        }
        (void)im_buf_puts(o, "      objective: ");
        dump_num(o, x->objective * 100);
        (void)im_buf_putc(o, '\n');
        if (x->calendar_month)
            (void)im_buf_puts(o, "      window: {calendar: month}\n");
        else
            cfg_emit_dur(o, 6, "window", x->window_ms);
        if (x->alert_name) cfg_emit_kv(o, 6, "alert_name", x->alert_name);
        (void)im_buf_puts(o, "      burn_rates:\n");
        for (int sev = 0; sev < 2; sev++) {
            const cfg_slo_burn_t *b = sev ? x->ticket : x->page;
            int n = sev ? x->nticket : x->npage;
            (void)im_buf_printf(o, "        %s:%s\n", sev ? "ticket" : "page", n ? "" : " []");
            for (int k = 0; k < n; k++) {
                (void)im_buf_puts(o, "          - factor: ");
                dump_num(o, b[k].factor);
                (void)im_buf_printf(o, "\n            long: %s\n            short: %s\n",
                                    win_names[b[k].long_w], win_names[b[k].short_w]);
            }
        }
    }
    if (s->nfiles) (void)im_buf_puts(o, "  slo_files:\n");
    for (size_t i = 0; i < s->nfiles; i++) {
        (void)im_buf_puts(o, "    - ");
        cfg_emit_str(o, s->files[i]);
        (void)im_buf_putc(o, '\n');
    }
}
