/* cost_report.c — the cost report's three outputs (see cost.h): JSON (the
 * API's and --output json), CSV with FinOps FOCUS column names, and the text
 * table. A null figure is null / an empty cell / "-", never 0. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "labels/json.h"
#include "llm/cost.h"
#include "util/timeutil.h"

static void num(im_buf_t *o, double v, const char *null)
{
    if (isnan(v) || isinf(v)) {
        (void)im_buf_puts(o, null);
        return;
    }
    char b[40];
    if (v == floor(v) && fabs(v) < 1e15) { /* counts and whole hours as integers */
        (void)im_buf_printf(o, "%.0f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) { /* shortest text that reads back */
        snprintf(b, sizeof b, "%.*g", prec, v);
        if (strtod(b, NULL) == v) break;
    }
    (void)im_buf_puts(o, b);
}

static void jstr(im_buf_t *o, const char *s)
{
    if (!s) {
        (void)im_buf_puts(o, "null");
        return;
    }
    im_json_string(o, s, strlen(s), IM_JSON_UTF8);
}

static void rfc(im_buf_t *o, int64_t ms)
{
    char b[40];
    im_time_format_rfc3339(ms, b, sizeof b);
    (void)im_buf_puts(o, b);
}

static const char *currency(const llm_cost_report_t *r)
{
    return r->cfg && r->cfg->currency ? r->cfg->currency : "USD";
}

static void json_row(im_buf_t *o, const llm_cost_row_t *row)
{
    (void)im_buf_puts(o, "{\"group\":");
    jstr(o, row->group);
    for (int k = 0; k < LLM_COST_NFIELDS; k++) {
        (void)im_buf_printf(o, ",\"%s\":", llm_cost_field_key((llm_cost_field_t)k));
        num(o, row->f[k], "null");
    }
    (void)im_buf_puts(o, ",\"cost_basis\":");
    jstr(o, row->basis);
    (void)im_buf_putc(o, '}');
}

void llm_cost_report_json(const llm_cost_report_t *r, im_buf_t *o)
{
    (void)im_buf_puts(o, "{\"period\":{\"from\":\"");
    rfc(o, r->from_ms);
    (void)im_buf_puts(o, "\",\"to\":\"");
    rfc(o, r->to_ms);
    (void)im_buf_printf(o, "\",\"step_seconds\":");
    num(o, (double)r->step_ms / 1000, "null");
    (void)im_buf_printf(o, "},\"by\":\"%s\",\"backend\":", llm_cost_by_name(r->by));
    jstr(o, r->backend);
    (void)im_buf_puts(o, ",\"busy_source\":");
    jstr(o, r->busy_source);
    (void)im_buf_puts(o, ",\"allocation_source\":");
    jstr(o, r->alloc_source);
    (void)im_buf_puts(o, ",\"prices\":{\"currency\":");
    jstr(o, currency(r));
    (void)im_buf_printf(o, ",\"pricing\":\"%s\",\"unit\":\"GPU-hour\",\"energy_price_per_kwh\":",
                        cfg_cost_pricing_name(r->cfg ? r->cfg->pricing : CFG_COST_ON_DEMAND));
    num(o, r->cfg ? r->cfg->energy_price_per_kwh : NAN, "null");
    (void)im_buf_puts(o, ",\"table\":[");
    for (size_t i = 0; r->cfg && i < r->cfg->nprices; i++) {
        const cfg_cost_price_t *p = &r->cfg->prices[i];
        (void)im_buf_puts(o, i ? ",{\"flavor\":" : "{\"flavor\":");
        jstr(o, p->flavor);
        (void)im_buf_puts(o, ",\"gpu_model\":");
        jstr(o, p->gpu_model);
        for (int k = 0; k < CFG_COST_NPRICING; k++) {
            (void)im_buf_printf(o, ",\"%s\":", cfg_cost_pricing_name((cfg_cost_pricing_t)k));
            num(o, p->price[k], "null");
        }
        (void)im_buf_putc(o, '}');
    }
    (void)im_buf_puts(o, "]},\"rows\":[");
    for (size_t i = 0; i < r->nrows; i++) {
        if (i) (void)im_buf_putc(o, ',');
        json_row(o, &r->rows[i]);
    }
    (void)im_buf_puts(o, "],\"total\":");
    json_row(o, &r->total);
    const llm_cost_unattributed_t *u = &r->un;
    (void)im_buf_puts(o, ",\"unattributed\":{\"gpu_hours_no_pod\":");
    num(o, u->gpu_hours_no_pod, "null");
    (void)im_buf_puts(o, ",\"gpu_hours_busy_no_pod\":");
    num(o, u->gpu_hours_busy_no_pod, "null");
    (void)im_buf_puts(o, ",\"energy_kwh_no_pod\":");
    num(o, u->energy_kwh_no_pod, "null");
    (void)im_buf_puts(o, ",\"gpu_hours_reserved_no_group\":");
    num(o, u->gpu_hours_reserved_no_group, "null");
    (void)im_buf_puts(o, ",\"gpu_hours_allocated_no_group\":");
    num(o, u->gpu_hours_allocated_no_group, "null");
    (void)im_buf_puts(o, ",\"output_tokens_no_group\":");
    num(o, u->output_tokens_no_group, "null");
    (void)im_buf_puts(o, ",\"not_attributed\":[");
    for (size_t i = 0; i < u->nnames; i++) {
        if (i) (void)im_buf_putc(o, ',');
        jstr(o, u->names[i]);
    }
    (void)im_buf_puts(o, "]},\"problems\":[");
    for (size_t i = 0; i < r->nproblems; i++) {
        if (i) (void)im_buf_putc(o, ',');
        jstr(o, r->problems[i]);
    }
    (void)im_buf_puts(o, "]}\n");
}

/* ---- CSV (FOCUS) ---- */

static void csv_str(im_buf_t *o, const char *s)
{
    if (!s) return;
    if (!strpbrk(s, ",\"\n\r")) {
        (void)im_buf_puts(o, s);
        return;
    }
    (void)im_buf_putc(o, '"');
    for (; *s; s++) {
        if (*s == '"') (void)im_buf_putc(o, '"');
        (void)im_buf_putc(o, *s);
    }
    (void)im_buf_putc(o, '"');
}

/* FOCUS 1.x PricingCategory for the configured price column. */
static const char *pricing_category(const llm_cost_report_t *r)
{
    cfg_cost_pricing_t p = r->cfg ? r->cfg->pricing : CFG_COST_ON_DEMAND;
    return p == CFG_COST_RESERVED ? "Committed" : p == CFG_COST_SPOT ? "Dynamic" : "Standard";
}

void llm_cost_report_csv(const llm_cost_report_t *r, im_buf_t *o)
{
    /* the x_ columns: every field but the cost, which is BilledCost */
    (void)im_buf_puts(o, "BillingPeriodStart,BillingPeriodEnd,ChargePeriodStart,ChargePeriodEnd,"
                         "ChargeCategory,ChargeDescription,BillingCurrency,BilledCost,"
                         "EffectiveCost,ListCost,ListUnitPrice,ConsumedQuantity,ConsumedUnit,"
                         "PricingQuantity,PricingUnit,PricingCategory,ResourceId,ResourceName,"
                         "ResourceType,ServiceCategory,ServiceName,Tags,x_Grouping,x_CostBasis,"
                         "x_BusySource");
    for (int i = 0; i < LLM_COST_NFIELDS; i++) {
        if (i == LLM_COST_COST) continue;
        /* x_GpuHoursReserved style from the JSON key */
        (void)im_buf_puts(o, ",x_");
        const char *k = llm_cost_field_key((llm_cost_field_t)i);
        bool up = true;
        for (; *k; k++) {
            if (*k == '_') {
                up = true;
                continue;
            }
            (void)im_buf_putc(o, up && *k >= 'a' && *k <= 'z' ? (char)(*k - 32) : *k);
            up = false;
        }
    }
    (void)im_buf_puts(o, "\n");
    char from[40], to[40];
    im_time_format_rfc3339(r->from_ms, from, sizeof from);
    im_time_format_rfc3339(r->to_ms, to, sizeof to);
    for (size_t i = 0; i < r->nrows; i++) {
        const llm_cost_row_t *row = &r->rows[i];
        const double *f = row->f;
        double qty = !row->basis                           ? NAN
                     : strcmp(row->basis, "reserved") == 0 ? f[LLM_COST_RESERVED]
                                                           : f[LLM_COST_ALLOCATED];
        double unit = isnan(qty) || qty <= 0 ? NAN : f[LLM_COST_COST] / qty;
        (void)im_buf_printf(o, "%s,%s,%s,%s,Usage,", from, to, from, to);
        char desc[300];
        snprintf(desc, sizeof desc, "GPU-hours %s by %s %s", row->basis ? row->basis : "held",
                 llm_cost_by_name(r->by), row->group);
        csv_str(o, desc);
        (void)im_buf_putc(o, ',');
        csv_str(o, currency(r));
        for (int k = 0; k < 3; k++) { /* BilledCost, EffectiveCost, ListCost */
            (void)im_buf_putc(o, ',');
            num(o, f[LLM_COST_COST], "");
        }
        (void)im_buf_putc(o, ',');
        num(o, unit, "");
        (void)im_buf_putc(o, ',');
        num(o, qty, "");
        (void)im_buf_puts(o, ",GPU-Hours,");
        num(o, qty, "");
        (void)im_buf_printf(o, ",GPU-Hours,%s,", pricing_category(r));
        char id[300];
        snprintf(id, sizeof id, "%s/%s", llm_cost_by_name(r->by), row->group);
        csv_str(o, id);
        (void)im_buf_putc(o, ',');
        csv_str(o, row->group);
        (void)im_buf_puts(o, r->by == LLM_COST_BY_CLUSTER_QUEUE ? ",Kueue ClusterQueue"
                             : r->by == LLM_COST_BY_FLAVOR      ? ",Kueue ResourceFlavor"
                             : r->by == LLM_COST_BY_MODEL       ? ",Served model"
                             : r->by == LLM_COST_BY_NAMESPACE   ? ",Kubernetes namespace"
                                                                : ",Team");
        (void)im_buf_puts(o, ",AI and Machine Learning,GPU inference,");
        im_buf_t tags;
        im_buf_init(&tags, 0);
        (void)im_buf_printf(&tags, "{\"%s\":", llm_cost_by_name(r->by));
        jstr(&tags, row->group);
        (void)im_buf_putc(&tags, '}');
        csv_str(o, tags.data);
        im_buf_free(&tags);
        (void)im_buf_printf(o, ",%s,%s,%s", llm_cost_by_name(r->by), row->basis ? row->basis : "",
                            r->busy_source ? r->busy_source : "");
        for (int k = 0; k < LLM_COST_NFIELDS; k++) {
            if (k == LLM_COST_COST) continue;
            (void)im_buf_putc(o, ',');
            num(o, f[k], "");
        }
        (void)im_buf_putc(o, '\n');
    }
}

/* ---- Text ---- */

static void cell(im_buf_t *o, double v, int width, int prec)
{
    char b[48];
    if (isnan(v))
        snprintf(b, sizeof b, "-");
    else if (fabs(v) >= 1e7)
        snprintf(b, sizeof b, "%.3g", v);
    else
        snprintf(b, sizeof b, "%.*f", prec, v);
    (void)im_buf_printf(o, " %*s", width, b);
}

static void text_row(im_buf_t *o, const llm_cost_row_t *row)
{
    const double *f = row->f;
    (void)im_buf_printf(o, "%-24.24s", row->group);
    cell(o, f[LLM_COST_RESERVED], 9, 2);
    cell(o, f[LLM_COST_ALLOCATED], 9, 2);
    cell(o, f[LLM_COST_BUSY], 9, 2);
    cell(o, f[LLM_COST_COST], 10, 2);
    cell(o, f[LLM_COST_IDLE_COST], 10, 2);
    cell(o, f[LLM_COST_ENERGY_KWH], 8, 2);
    cell(o, f[LLM_COST_OUTPUT_TOKENS], 12, 0);
    cell(o, f[LLM_COST_TOKENS_PER_GPU_HOUR], 10, 0);
    cell(o, f[LLM_COST_PER_M_OUTPUT], 9, 3);
    if (!isnan(f[LLM_COST_BORROWED]) || !isnan(f[LLM_COST_LENT])) {
        cell(o, f[LLM_COST_BORROWED], 9, 2);
        cell(o, f[LLM_COST_LENT], 9, 2);
    }
    (void)im_buf_putc(o, '\n');
}

void llm_cost_report_text(const llm_cost_report_t *r, im_buf_t *o)
{
    (void)im_buf_puts(o, "period    ");
    rfc(o, r->from_ms);
    (void)im_buf_puts(o, " .. ");
    rfc(o, r->to_ms);
    (void)im_buf_printf(o, " (step %gs), by %s, from %s\n", (double)r->step_ms / 1000,
                        llm_cost_by_name(r->by), r->backend);
    (void)im_buf_printf(o, "busy      %s\n",
                        r->busy_source ? r->busy_source : "- (no dcgm-exporter activity metric)");
    (void)im_buf_printf(o, "prices    %s per GPU-hour, %s", currency(r),
                        cfg_cost_pricing_name(r->cfg ? r->cfg->pricing : CFG_COST_ON_DEMAND));
    if (r->cfg && !isnan(r->cfg->energy_price_per_kwh)) {
        (void)im_buf_puts(o, "; energy ");
        num(o, r->cfg->energy_price_per_kwh, "-");
        (void)im_buf_puts(o, " per kWh");
    }
    (void)im_buf_putc(o, '\n');
    for (size_t i = 0; r->cfg && i < r->cfg->nprices; i++) {
        const cfg_cost_price_t *p = &r->cfg->prices[i];
        (void)im_buf_printf(o, "          %s%s%s", p->flavor ? "flavor " : "",
                            p->flavor ? p->flavor : "", p->flavor && p->gpu_model ? ", " : "");
        if (p->gpu_model) (void)im_buf_printf(o, "gpu_model %s", p->gpu_model);
        for (int k = 0; k < CFG_COST_NPRICING; k++) {
            (void)im_buf_printf(o, "  %s ", cfg_cost_pricing_name((cfg_cost_pricing_t)k));
            num(o, p->price[k], "-");
        }
        (void)im_buf_putc(o, '\n');
    }
    (void)im_buf_printf(o, "\n%-24s %9s %9s %9s %10s %10s %8s %12s %10s %9s%s\n",
                        llm_cost_by_name(r->by), "reserved", "allocated", "busy", "cost",
                        "idle cost", "kWh", "out tokens", "tok/GPU-h", "per 1M",
                        r->by == LLM_COST_BY_CLUSTER_QUEUE ? "  borrowed      lent" : "");
    for (size_t i = 0; i < r->nrows; i++) text_row(o, &r->rows[i]);
    text_row(o, &r->total);
    const llm_cost_unattributed_t *u = &r->un;
    (void)im_buf_puts(o, "\nunattributed: GPU-hours held by no pod ");
    num(o, u->gpu_hours_no_pod, "-");
    (void)im_buf_puts(o, " (busy ");
    num(o, u->gpu_hours_busy_no_pod, "-");
    (void)im_buf_puts(o, "); reserved with no group ");
    num(o, u->gpu_hours_reserved_no_group, "-");
    (void)im_buf_puts(o, "; allocated with no group ");
    num(o, u->gpu_hours_allocated_no_group, "-");
    (void)im_buf_puts(o, "; output tokens with no group ");
    num(o, u->output_tokens_no_group, "-");
    (void)im_buf_putc(o, '\n');
    for (size_t i = 0; i < u->nnames; i++) (void)im_buf_printf(o, "  %s\n", u->names[i]);
    for (size_t i = 0; i < r->nproblems; i++) (void)im_buf_printf(o, "note: %s\n", r->problems[i]);
}
