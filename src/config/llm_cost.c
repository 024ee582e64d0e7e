/* llm_cost.c — decodes and dumps the `llm.cost:` sub-section (see llm_cost.h). */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/llm_cost.h"
#include "labels/labels.h"
#include "util/mem.h"

static const char *const pricing_names[CFG_COST_NPRICING] = {"on_demand", "reserved", "spot"};

const char *cfg_cost_pricing_name(cfg_cost_pricing_t p)
{
    return p < CFG_COST_NPRICING ? pricing_names[p] : "?";
}

void cfg_llm_cost_init(cfg_llm_cost_t *o)
{
    memset(o, 0, sizeof *o);
    o->energy_price_per_kwh = NAN;
}

void cfg_llm_cost_free(cfg_llm_cost_t *c)
{
    if (!c) return;
    im_free(c->currency);
    for (size_t i = 0; i < c->nprices; i++) {
        im_free(c->prices[i].flavor);
        im_free(c->prices[i].gpu_model);
    }
    im_free(c->prices);
    im_free(c->team_label);
    for (size_t i = 0; i < c->nteams; i++) {
        im_free(c->team_ns[i]);
        im_free(c->team_names[i]);
    }
    im_free(c->team_ns);
    im_free(c->team_names);
    cfg_llm_cost_init(c);
}

static char *dup_or_null(const char *s)
{
    return s ? im_strdup(s) : NULL;
}

void cfg_llm_cost_copy(cfg_llm_cost_t *dst, const cfg_llm_cost_t *src)
{
    *dst = *src;
    dst->currency = dup_or_null(src->currency);
    dst->team_label = dup_or_null(src->team_label);
    dst->prices = src->nprices ? im_calloc(src->nprices, sizeof *dst->prices) : NULL;
    for (size_t i = 0; i < src->nprices; i++) {
        dst->prices[i] = src->prices[i];
        dst->prices[i].flavor = dup_or_null(src->prices[i].flavor);
        dst->prices[i].gpu_model = dup_or_null(src->prices[i].gpu_model);
    }
    dst->team_ns = src->nteams ? im_calloc(src->nteams, sizeof(char *)) : NULL;
    dst->team_names = src->nteams ? im_calloc(src->nteams, sizeof(char *)) : NULL;
    for (size_t i = 0; i < src->nteams; i++) {
        dst->team_ns[i] = im_strdup(src->team_ns[i]);
        dst->team_names[i] = im_strdup(src->team_names[i]);
    }
}

static im_rc get_price(cfg_dec_t *d, const cfg_node_t *n, const char *key, const char *what,
                       double *out)
{
    const cfg_node_t *v = cfg_get(n, key);
    if (!v) return IM_OK;
    im_rc rc = cfg_get_float(d, n, key, out);
    if (rc) return rc;
    if (!isfinite(*out) || *out < 0)
        return cfg_fail(d, v, "%s.%s must be a price >= 0, not %g", what, key, *out);
    return IM_OK;
}

static im_rc decode_price(cfg_dec_t *d, const cfg_node_t *n, cfg_cost_price_t *p)
{
    static const char *const keys[] = {"flavor",   "gpu_model", "on_demand",
                                       "reserved", "spot",      NULL};
    for (int k = 0; k < CFG_COST_NPRICING; k++) p->price[k] = NAN;
    if (!n || n->type != CFG_NODE_MAP)
        return cfg_fail(d, n,
                        "llm.cost.prices entries must be mappings (flavor, gpu_model, "
                        "on_demand, reserved, spot)");
    im_rc rc;
    if ((rc = cfg_check_map(d, n, "llm.cost.prices entry", keys))) return rc;
    if ((rc = cfg_get_str(d, n, "flavor", &p->flavor))) return rc;
    if ((rc = cfg_get_str(d, n, "gpu_model", &p->gpu_model))) return rc;
    if ((!p->flavor || !*p->flavor) && (!p->gpu_model || !*p->gpu_model))
        return cfg_fail(d, n,
                        "llm.cost.prices entry needs a flavor (a Kueue ResourceFlavor) or "
                        "a gpu_model (dcgm-exporter's modelName)");
    bool any = false;
    for (int k = 0; k < CFG_COST_NPRICING; k++) {
        if ((rc = get_price(d, n, pricing_names[k], "llm.cost.prices", &p->price[k]))) return rc;
        any |= !isnan(p->price[k]);
    }
    if (!any)
        return cfg_fail(d, n,
                        "llm.cost.prices entry needs a price per GPU-hour: on_demand, "
                        "reserved or spot");
    return IM_OK;
}

static bool same(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

im_rc cfg_llm_cost_decode(cfg_dec_t *d, const cfg_node_t *n, cfg_llm_cost_t *o)
{
    static const char *const keys[] = {"currency",   "pricing", "prices", "energy_price_per_kwh",
                                       "team_label", "teams",   "rules",  NULL};
    cfg_llm_cost_init(o);
    if (!n) return IM_OK;
    o->present = true;
    im_rc rc;
    if ((rc = cfg_check_map(d, n, "llm.cost", keys))) return rc;
    if ((rc = cfg_get_str(d, n, "currency", &o->currency))) return rc;
    const cfg_node_t *v = cfg_get(n, "pricing");
    if (v) {
        bool found = false;
        for (int k = 0; v->type == CFG_NODE_SCALAR && k < CFG_COST_NPRICING; k++)
            if (strcmp(v->str, pricing_names[k]) == 0) {
                o->pricing = (cfg_cost_pricing_t)k;
                found = true;
            }
        if (!found)
            return cfg_fail(d, v,
                            "llm.cost.pricing must be one of on_demand, reserved, spot, "
                            "not \"%s\"",
                            v->type == CFG_NODE_SCALAR ? v->str : "");
    }
    v = cfg_get(n, "prices");
    if (v) {
        if (v->type != CFG_NODE_SEQ)
            return cfg_fail(d, v, "llm.cost.prices must be a list of price entries");
        o->prices = im_calloc(v->nkids ? v->nkids : 1, sizeof *o->prices);
        for (size_t i = 0; i < v->nkids; i++) {
            cfg_cost_price_t *p = &o->prices[o->nprices++];
            if ((rc = decode_price(d, v->kids[i], p))) return rc;
            for (size_t j = 0; j + 1 < o->nprices; j++) {
                if (same(o->prices[j].flavor, p->flavor))
                    return cfg_fail(d, v->kids[i], "llm.cost.prices: flavor \"%s\" is priced twice",
                                    p->flavor);
                if (same(o->prices[j].gpu_model, p->gpu_model))
                    return cfg_fail(d, v->kids[i],
                                    "llm.cost.prices: gpu_model \"%s\" is priced twice",
                                    p->gpu_model);
            }
        }
    }
    if ((rc = get_price(d, n, "energy_price_per_kwh", "llm.cost", &o->energy_price_per_kwh)))
        return rc;
    if ((rc = cfg_get_str(d, n, "team_label", &o->team_label))) return rc;
    if (o->team_label && !im_label_name_valid(o->team_label, strlen(o->team_label)))
        return cfg_fail(d, cfg_get(n, "team_label"),
                        "llm.cost.team_label \"%s\" is not a label name (kube_namespace_labels "
                        "has it as label_<team_label>)",
                        o->team_label);
    if ((rc = cfg_get_strmap(d, n, "teams", &o->team_ns, &o->team_names, &o->nteams))) return rc;
    for (size_t i = 0; i < o->nteams; i++)
        if (!*o->team_ns[i] || !*o->team_names[i])
            return cfg_fail(d, cfg_get(n, "teams"),
                            "llm.cost.teams maps a namespace to a team: neither may be empty");
    if ((rc = cfg_get_bool(d, n, "rules", &o->rules))) return rc;
    return IM_OK;
}

static void dump_str(im_buf_t *o, const char *s)
{
    /* double-quoted YAML: only \ and " (and control bytes) need escapes */
    (void)im_buf_putc(o, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            (void)im_buf_printf(o, "\\%c", *p);
        else if (*p < 0x20)
            (void)im_buf_printf(o, "\\x%02x", *p);
        else
            (void)im_buf_putc(o, (char)*p);
    }
    (void)im_buf_putc(o, '"');
}

static void dump_num(im_buf_t *o, double v)
{
    char b[32];
    for (int prec = 1; prec <= 17; prec++) { /* shortest text that reads back */
        snprintf(b, sizeof b, "%.*g", prec, v);
        if (strtod(b, NULL) == v) break;
    }
    (void)im_buf_puts(o, b);
}

void cfg_llm_cost_dump(const cfg_llm_cost_t *c, im_buf_t *o)
{
    if (!c->present) return;
    (void)im_buf_puts(o, "  cost:\n");
    if (c->currency) {
        (void)im_buf_puts(o, "    currency: ");
        dump_str(o, c->currency);
        (void)im_buf_putc(o, '\n');
    }
    (void)im_buf_printf(o, "    pricing: %s\n", pricing_names[c->pricing]);
    if (c->nprices) (void)im_buf_puts(o, "    prices:\n");
    for (size_t i = 0; i < c->nprices; i++) {
        const cfg_cost_price_t *p = &c->prices[i];
        const char *lead = "      - ";
        if (p->flavor) {
            (void)im_buf_printf(o, "%sflavor: ", lead);
            dump_str(o, p->flavor);
            (void)im_buf_putc(o, '\n');
            lead = "        ";
        }
        if (p->gpu_model) {
            (void)im_buf_printf(o, "%sgpu_model: ", lead);
            dump_str(o, p->gpu_model);
            (void)im_buf_putc(o, '\n');
            lead = "        ";
        }
        for (int k = 0; k < CFG_COST_NPRICING; k++)
            if (!isnan(p->price[k])) {
                (void)im_buf_printf(o, "%s%s: ", lead, pricing_names[k]);
                dump_num(o, p->price[k]);
                (void)im_buf_putc(o, '\n');
                lead = "        ";
            }
    }
    if (!isnan(c->energy_price_per_kwh)) {
        (void)im_buf_puts(o, "    energy_price_per_kwh: ");
        dump_num(o, c->energy_price_per_kwh);
        (void)im_buf_putc(o, '\n');
    }
    if (c->team_label) (void)im_buf_printf(o, "    team_label: %s\n", c->team_label);
    if (c->nteams) (void)im_buf_puts(o, "    teams:\n");
    for (size_t i = 0; i < c->nteams; i++) {
        (void)im_buf_puts(o, "      ");
        dump_str(o, c->team_ns[i]);
        (void)im_buf_puts(o, ": ");
        dump_str(o, c->team_names[i]);
        (void)im_buf_putc(o, '\n');
    }
    (void)im_buf_printf(o, "    rules: %s\n", c->rules ? "true" : "false");
}

double cfg_llm_cost_price(const cfg_llm_cost_t *c, const char *key, bool by_flavor)
{
    if (!c || !key) return NAN;
    for (size_t i = 0; i < c->nprices; i++) {
        const char *k = by_flavor ? c->prices[i].flavor : c->prices[i].gpu_model;
        if (k && strcmp(k, key) == 0) return c->prices[i].price[c->pricing];
    }
    return NAN;
}

const char *cfg_llm_cost_team(const cfg_llm_cost_t *c, const char *ns)
{
    if (!c || !ns) return NULL;
    for (size_t i = 0; i < c->nteams; i++)
        if (strcmp(c->team_ns[i], ns) == 0) return c->team_names[i];
    return NULL;
}
