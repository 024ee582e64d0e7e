/* llm_cost.h — the typed `llm.cost:` sub-section: GPU prices, the team mapping
 * and the recording-rule switch of `infermon cost` (docs/cost.md).
 *
 *   llm:
 *     cost:
 *       currency: USD                # a label for the figures (default USD)
 *       pricing: on_demand           # on_demand | reserved | spot: the column used
 *       prices:                      # per GPU-hour, one entry per flavor / GPU model
 *         - flavor: h100-80gb        # a Kueue ResourceFlavor (reservations)
 *           gpu_model: NVIDIA H100 80GB HBM3   # dcgm-exporter's modelName (allocations)
 *           on_demand: 4.10
 *           reserved: 2.60
 *           spot: 1.40
 *       energy_price_per_kwh: 0.12   # optional
 *       team_label: team             # kube_namespace_labels' label_<team_label>
 *       teams:                       # namespace: team (wins over team_label)
 *         llm-serving: search
 *       rules: true                  # load the cost recording rules (docs/cost.md)
 *
 * Every entry needs a flavor or a gpu_model (or both) and at least one price;
 * prices are finite and >= 0; a flavor or gpu_model appears at most once;
 * team_label is a label name. Unknown keys and bad values are errors with
 * line:column, as everywhere. All strings are owned by the section. */
#ifndef IM_CONFIG_LLM_COST_H
#define IM_CONFIG_LLM_COST_H

#include "config/yaml.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum cfg_cost_pricing {
    CFG_COST_ON_DEMAND = 0,
    CFG_COST_RESERVED,
    CFG_COST_SPOT,
    CFG_COST_NPRICING
} cfg_cost_pricing_t;

/* "on_demand", "reserved", "spot". */
const char *cfg_cost_pricing_name(cfg_cost_pricing_t p);

typedef struct cfg_cost_price {
    char *flavor;                    /* owned; NULL when not given */
    char *gpu_model;                 /* owned; NULL when not given */
    double price[CFG_COST_NPRICING]; /* per GPU-hour; NaN = not given */
} cfg_cost_price_t;

typedef struct cfg_llm_cost {
    bool present;
    char *currency; /* owned; NULL = "USD" */
    cfg_cost_pricing_t pricing;
    cfg_cost_price_t *prices; /* owned */
    size_t nprices;
    double energy_price_per_kwh;  /* NaN = not given */
    char *team_label;             /* owned; NULL = none */
    char **team_ns, **team_names; /* owned, parallel: namespace -> team */
    size_t nteams;
    bool rules;
} cfg_llm_cost_t;

/* Sets *out to the absent section (prices NaN). */
void cfg_llm_cost_init(cfg_llm_cost_t *out);
/* Decodes the `cost:` mapping of llm: (n NULL: absent). *out is initialised
 * here; free it with cfg_llm_cost_free also after an error. */
im_rc cfg_llm_cost_decode(cfg_dec_t *d, const cfg_node_t *n, cfg_llm_cost_t *out);
/* Appends "  cost:\n    ..." when the section was given (re-loadable). */
void cfg_llm_cost_dump(const cfg_llm_cost_t *c, im_buf_t *out);
void cfg_llm_cost_free(cfg_llm_cost_t *c);
/* A deep copy of src into dst (free it with cfg_llm_cost_free). */
void cfg_llm_cost_copy(cfg_llm_cost_t *dst, const cfg_llm_cost_t *src);

/* The price per GPU-hour of the configured pricing column for a Kueue flavor
 * (by_flavor) or a dcgm modelName; NaN when there is none. */
double cfg_llm_cost_price(const cfg_llm_cost_t *c, const char *key, bool by_flavor);
/* The explicit team of namespace ns, or NULL. */
const char *cfg_llm_cost_team(const cfg_llm_cost_t *c, const char *ns);

#endif
