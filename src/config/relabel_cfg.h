/* relabel_cfg.h — decoding and dumping lists of relabel_config (labels/relabel.h)
 * from YAML, for relabel_configs, metric_relabel_configs, alert_relabel_configs
 * and write_relabel_configs. */
#ifndef IM_CONFIG_RELABEL_CFG_H
#define IM_CONFIG_RELABEL_CFG_H

#include "config/yaml.h"
#include "labels/relabel.h"
#include "util/base.h"
#include "util/buf.h"

/* Decodes the sequence seq (NULL: nothing) named key into *out / *nout
 * (appended; each rule validated and compiled). On error the rules decoded so
 * far stay in *out for the caller to free with cfg_relabel_free_all. */
im_rc cfg_relabel_decode(cfg_dec_t *d, const cfg_node_t *seq, const char *key,
                         labels_relabel_t **out, size_t *nout);
void cfg_relabel_free_all(labels_relabel_t *r, size_t n);
/* Appends "<ind>key:\n<ind>- source_labels: [...]\n..." (nothing when n == 0). */
void cfg_relabel_dump(im_buf_t *o, int ind, const char *key, const labels_relabel_t *r, size_t n);

#endif
