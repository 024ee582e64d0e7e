/* k8s_selector.h — Kubernetes label and field selector syntax, checked when the
 * configuration loads (kubernetes_sd_configs.selectors, kubernetes_monitors.selector)
 * so a mistake is reported with the file position instead of by the API server
 * later. The grammar and the error texts are those of the Kubernetes client
 * library Prometheus 2.42 uses (apimachinery 0.26: labels.Parse and
 * fields.ParseSelector), so the messages equal Prometheus' own:
 *
 *   label: requirement {"," requirement}; requirement: ["!"] KEY
 *          [("in"|"notin") "(" [VALUE {"," VALUE}] ")" | ("="|"=="|"!="|">"|"<") VALUE]
 *          KEY a qualified name ([DNS subdomain "/"] name of at most 63 characters),
 *          VALUE a label value (at most 63 characters, [A-Za-z0-9] at both ends,
 *          "-", "_", "." inside); ">" and "<" take an integer. Blanks separate.
 *   field: term {"," term}; term: KEY ("="|"=="|"!=") VALUE; "\" escapes "\", ","
 *          and "=" in a value, which may not hold them unescaped.
 *
 * Pure functions, no state. */
#ifndef IM_CONFIG_K8S_SELECTOR_H
#define IM_CONFIG_K8S_SELECTOR_H

#include "util/base.h"
#include "util/err.h"

/* IM_OK, or IM_EINVAL with err's message as Prometheus prints it. NULL or "" is
 * the empty selector (valid). */
im_rc k8s_label_selector_check(const char *s, im_err_t *err);
im_rc k8s_field_selector_check(const char *s, im_err_t *err);

#endif
