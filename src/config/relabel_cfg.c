/* relabel_cfg.c — relabel_config lists from YAML and back (see relabel_cfg.h). */
#include "util/base.h"

#include "config/relabel_cfg.h"

im_rc cfg_relabel_decode(cfg_dec_t *d, const cfg_node_t *seq, const char *key,
                         labels_relabel_t **out, size_t *nout)
{
    static const char *const keys[] = {"source_labels", "separator",   "target_label", "regex",
                                       "modulus",       "replacement", "action",       NULL};
    if (!seq) return IM_OK;
    if (seq->type != CFG_NODE_SEQ) return cfg_fail(d, seq, "%s must be a list", key);
    *out = im_realloc(*out, (*nout + seq->nkids + 1) * sizeof **out);
    for (size_t i = 0; i < seq->nkids; i++) {
        const cfg_node_t *n = seq->kids[i];
        labels_relabel_t *r = &(*out)[(*nout)++];
        memset(r, 0, sizeof *r);
        im_rc rc = cfg_check_map(d, n, "relabel_config", keys);
        if (rc) return rc;
        if ((rc = cfg_get_strlist(d, n, "source_labels", &r->source_labels, &r->nsource)))
            return rc;
        /* an explicitly empty separator/replacement is kept (not defaulted) */
        const cfg_node_t *sep = cfg_get(n, "separator");
        if (sep && sep->type == CFG_NODE_SCALAR) r->separator = im_strdup(sep->str);
        if ((rc = cfg_get_str(d, n, "target_label", &r->target_label))) return rc;
        if ((rc = cfg_get_str(d, n, "regex", &r->regex))) return rc;
        if ((rc = cfg_get_u64(d, n, "modulus", &r->modulus))) return rc;
        const cfg_node_t *rep = cfg_get_raw(n, "replacement");
        if (rep && rep->type == CFG_NODE_SCALAR) r->replacement = im_strdup(rep->str);
        labels_relabel_defaults(r);
        const cfg_node_t *a = cfg_get(n, "action");
        if (a) {
            bool found = false;
            for (int k = 0; k <= LABELS_RELABEL_UPPERCASE; k++)
                if (a->str && strcasecmp(a->str, labels_relabel_action_name(k)) == 0) {
                    r->action = k;
                    found = true;
                }
            if (!found)
                return cfg_fail(d, a, "unknown relabel action \"%s\"", a->str ? a->str : "");
        }
        im_err_t e;
        im_err_clear(&e);
        if (labels_relabel_compile(r, &e) != IM_OK) return cfg_fail(d, n, "%s", e.msg);
    }
    return IM_OK;
}

void cfg_relabel_free_all(labels_relabel_t *r, size_t n)
{
    for (size_t i = 0; i < n; i++) labels_relabel_clear(&r[i]);
    im_free(r);
}

void cfg_relabel_dump(im_buf_t *o, int ind, const char *key, const labels_relabel_t *r, size_t n)
{
    if (!n) return;
    (void)im_buf_printf(o, "%*s%s:\n", ind, "", key);
    for (size_t i = 0; i < n; i++) {
        int pfx = 0; /* 0: "- " still to write */
        if (r[i].nsource) {
            (void)im_buf_printf(o, "%*s- source_labels: [", ind, "");
            for (size_t s = 0; s < r[i].nsource; s++)
                (void)im_buf_printf(o, "%s%s", s ? ", " : "", r[i].source_labels[s]);
            (void)im_buf_puts(o, "]\n");
            pfx = 1;
        }
        if (pfx)
            cfg_emit_kv(o, ind + 2, "separator", r[i].separator);
        else {
            (void)im_buf_printf(o, "%*s- ", ind, "");
            cfg_emit_kv(o, 0, "separator", r[i].separator);
        }
        if (r[i].modulus)
            (void)im_buf_printf(o, "%*smodulus: %llu\n", ind + 2, "",
                                (unsigned long long)r[i].modulus);
        if (r[i].target_label) cfg_emit_kv(o, ind + 2, "target_label", r[i].target_label);
        cfg_emit_kv(o, ind + 2, "regex", r[i].regex);
        cfg_emit_kv(o, ind + 2, "replacement", r[i].replacement);
        cfg_emit_kv(o, ind + 2, "action", labels_relabel_action_name(r[i].action));
    }
}
