/* relabel.c — Prometheus relabelling (relabel_configs, metric_relabel_configs).
 *
 * Behaviour follows Prometheus 2.x's documented semantics: the source label
 * values (missing = "") are joined with the separator and matched against the
 * fully anchored regex; replace expands target_label and replacement Go-style
 * and deletes the target when the result is empty; hashmod uses MD5 (the last 8
 * bytes, big-endian) modulo `modulus`; keepequal/dropequal compare the joined
 * value with target_label's value; labelmap/labeldrop/labelkeep match label
 * names. Validation mirrors Prometheus' config errors. */
#include "util/base.h"

#include <stdatomic.h>
#include <stdio.h>

#include "labels/regex.h"
#include "labels/relabel.h"
#include "labels/labels_int.h"
#include "util/log.h"

static const char *const action_names[] = {
    "replace",  "keep",      "drop",      "keepequal", "dropequal", "hashmod",
    "labelmap", "labeldrop", "labelkeep", "lowercase", "uppercase",
};

const char *labels_relabel_action_name(labels_relabel_action_t a)
{
    return (size_t)a < IM_ARRAY_LEN(action_names) ? action_names[a] : "?";
}

void labels_relabel_defaults(labels_relabel_t *r)
{
    r->action = LABELS_RELABEL_REPLACE;
    if (!r->separator) r->separator = im_strdup(";");
    if (!r->regex) r->regex = im_strdup("(.*)");
    if (!r->replacement) r->replacement = im_strdup("$1");
}

void labels_relabel_clear(labels_relabel_t *r)
{
    for (size_t i = 0; i < r->nsource; i++) im_free(r->source_labels[i]);
    im_free(r->source_labels);
    im_free(r->separator);
    im_free(r->target_label);
    im_free(r->regex);
    im_free(r->replacement);
    im_regex_free(r->re);
    memset(r, 0, sizeof *r);
}

/* Prometheus' relabelTarget: a label name possibly holding $1 / ${name} parts. */
static bool target_template_ok(const char *s)
{
    if (!*s) return false;
    while (*s) {
        if (*s == '$') {
            s++;
            if (*s == '{') {
                s++;
                const char *b = s;
                while (*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                       (*s >= '0' && *s <= '9'))
                    s++;
                if (s == b || *s != '}') return false;
                s++;
            } else {
                const char *b = s;
                while (*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                       (*s >= '0' && *s <= '9'))
                    s++;
                if (s == b) return false;
            }
        } else if (*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                   (*s >= '0' && *s <= '9')) {
            s++;
        } else {
            return false;
        }
    }
    return true;
}

static bool is_default(const char *s, const char *def)
{
    return s && strcmp(s, def) == 0;
}

im_rc labels_relabel_compile(labels_relabel_t *r, im_err_t *err)
{
    const char *an = labels_relabel_action_name(r->action);
    labels_relabel_action_t a = r->action;
    if (a == LABELS_RELABEL_HASHMOD && r->modulus == 0)
        return im_err_set(err, IM_EINVAL,
                          "relabel configuration for hashmod requires non-zero modulus");
    if ((a == LABELS_RELABEL_REPLACE || a == LABELS_RELABEL_HASHMOD ||
         a == LABELS_RELABEL_LOWERCASE || a == LABELS_RELABEL_UPPERCASE ||
         a == LABELS_RELABEL_KEEPEQUAL || a == LABELS_RELABEL_DROPEQUAL) &&
        (!r->target_label || !*r->target_label))
        return im_err_set(err, IM_EINVAL,
                          "relabel configuration for %s action requires 'target_label' value", an);
    if ((a == LABELS_RELABEL_REPLACE) && !target_template_ok(r->target_label))
        return im_err_set(err, IM_EINVAL, "\"%s\" is invalid 'target_label' for %s action",
                          r->target_label, an);
    if ((a == LABELS_RELABEL_HASHMOD || a == LABELS_RELABEL_LOWERCASE ||
         a == LABELS_RELABEL_UPPERCASE || a == LABELS_RELABEL_KEEPEQUAL ||
         a == LABELS_RELABEL_DROPEQUAL) &&
        !im_label_name_valid(r->target_label, strlen(r->target_label)))
        return im_err_set(err, IM_EINVAL, "\"%s\" is invalid 'target_label' for %s action",
                          r->target_label, an);
    if (a == LABELS_RELABEL_LABELMAP && !target_template_ok(r->replacement))
        return im_err_set(err, IM_EINVAL, "\"%s\" is invalid 'replacement' for %s action",
                          r->replacement, an);
    if ((a == LABELS_RELABEL_LOWERCASE || a == LABELS_RELABEL_UPPERCASE ||
         a == LABELS_RELABEL_KEEPEQUAL || a == LABELS_RELABEL_DROPEQUAL) &&
        !is_default(r->replacement, "$1"))
        return im_err_set(err, IM_EINVAL, "'replacement' can not be set for %s action", an);
    if (a == LABELS_RELABEL_LABELDROP || a == LABELS_RELABEL_LABELKEEP) {
        if (r->nsource > 0 || !is_default(r->separator, ";") || r->modulus != 0 ||
            (r->target_label && *r->target_label) || !is_default(r->replacement, "$1"))
            return im_err_set(err, IM_EINVAL,
                              "%s action requires only 'regex', and no other fields", an);
    }
    if (a == LABELS_RELABEL_KEEPEQUAL || a == LABELS_RELABEL_DROPEQUAL) {
        if (r->nsource == 0 || !is_default(r->regex, "(.*)") || r->modulus != 0 ||
            !is_default(r->replacement, "$1"))
            return im_err_set(err, IM_EINVAL,
                              "%s action requires only 'source_labels' and `target_label`, and "
                              "no other fields",
                              an);
    }
    for (size_t i = 0; i < r->nsource; i++)
        if (!im_label_name_valid(r->source_labels[i], strlen(r->source_labels[i])))
            return im_err_set(err, IM_EINVAL, "\"%s\" is not a valid label name",
                              r->source_labels[i]);
    /* Go's syntax, ^(?:re)$, bounded cost (labels/regex.h). */
    im_regex_t *re = NULL;
    im_err_t e;
    im_err_clear(&e);
    if (im_regex_compile(r->regex, strlen(r->regex), IM_REGEX_FULL, &re, &e) != IM_OK)
        return im_err_set(err, IM_EPARSE, "%s", e.msg);
    im_regex_free(r->re);
    r->re = re;
    return IM_OK;
}

static void buf_clear(im_buf_t *b)
{
    im_buf_reset(b);
    if (im_buf_reserve(b, 1) != IM_OK) im_oom(1);
}

static const char *lb_val(const im_labels_builder_t *lb, const char *name, size_t *len)
{
    const im_istr_t *v = im_lb_get(lb, name);
    *len = v ? v->len : 0;
    return v ? v->s : "";
}

int labels_relabel_apply(const labels_relabel_t *rules, size_t n, im_labels_builder_t *lb,
                         im_err_t *err)
{
    if (n == 0) return 1;
    im_buf_t val, tmp, tgt;
    im_buf_init(&val, 0);
    im_buf_init(&tmp, 0);
    im_buf_init(&tgt, 0);
    size_t *ov = NULL, ovcap = 0;
    bool keep = true;
    int rc = 0;
    for (size_t i = 0; i < n && keep && rc >= 0; i++) {
        const labels_relabel_t *r = &rules[i];
        const im_regex_t *re = r->re;
        size_t need = 2 * ((size_t)im_regex_groups(re) + 1);
        if (need > ovcap) {
            ov = im_realloc(ov, need * sizeof *ov);
            ovcap = need;
        }
        buf_clear(&val);
        for (size_t k = 0; k < r->nsource; k++) {
            if (k) (void)im_buf_puts(&val, r->separator);
            size_t vl;
            const char *v = lb_val(lb, r->source_labels[k], &vl);
            (void)im_buf_append(&val, v, vl);
        }
        switch (r->action) {
        case LABELS_RELABEL_DROP:
            if ((rc = im_regex_match(re, val.data, val.len, err)) == 1) keep = false;
            break;
        case LABELS_RELABEL_KEEP:
            if ((rc = im_regex_match(re, val.data, val.len, err)) == 0) keep = false;
            break;
        case LABELS_RELABEL_DROPEQUAL:
        case LABELS_RELABEL_KEEPEQUAL: {
            size_t tl;
            const char *tv = lb_val(lb, r->target_label, &tl);
            bool eq = tl == val.len && memcmp(tv, val.data, tl) == 0;
            if (eq == (r->action == LABELS_RELABEL_DROPEQUAL)) keep = false;
            break;
        }
        case LABELS_RELABEL_REPLACE: {
            if ((rc = im_regex_exec(re, val.data, val.len, 0, ov, err)) <= 0) break;
            buf_clear(&tgt);
            im_regex_expand(re, r->target_label, strlen(r->target_label), val.data, ov, &tgt);
            if (!im_label_name_valid(tgt.data, tgt.len)) {
                im_lb_del(lb, r->target_label);
                break;
            }
            buf_clear(&tmp);
            im_regex_expand(re, r->replacement, strlen(r->replacement), val.data, ov, &tmp);
            if (tmp.len == 0) {
                im_lb_del(lb, r->target_label);
                break;
            }
            im_lb_set(lb, tgt.data, tgt.len, tmp.data, tmp.len);
            break;
        }
        case LABELS_RELABEL_LOWERCASE:
        case LABELS_RELABEL_UPPERCASE:
            for (size_t k = 0; k < val.len; k++) {
                char c = val.data[k];
                if (r->action == LABELS_RELABEL_LOWERCASE && c >= 'A' && c <= 'Z') c += 32;
                if (r->action == LABELS_RELABEL_UPPERCASE && c >= 'a' && c <= 'z') c -= 32;
                val.data[k] = c;
            }
            im_lb_set(lb, r->target_label, strlen(r->target_label), val.data, val.len);
            break;
        case LABELS_RELABEL_HASHMOD: {
            unsigned char d[16];
            labels__md5(val.data, val.len, d);
            uint64_t h = 0;
            for (int k = 8; k < 16; k++) h = h << 8 | d[k];
            char nb[32];
            int nl = snprintf(nb, sizeof nb, "%llu", (unsigned long long)(h % r->modulus));
            im_lb_set(lb, r->target_label, strlen(r->target_label), nb, (size_t)nl);
            break;
        }
        case LABELS_RELABEL_LABELMAP: {
            /* Snapshot: renames must see the labels as they were. */
            uint32_t cnt = lb->n;
            im_label_t *snap = im_malloc(sizeof(im_label_t) * (cnt ? cnt : 1));
            for (uint32_t k = 0; k < cnt; k++) {
                snap[k].name = im_istr_ref(lb->l[k].name);
                snap[k].value = im_istr_ref(lb->l[k].value);
            }
            for (uint32_t k = 0; k < cnt && rc >= 0; k++) {
                rc = im_regex_exec(re, snap[k].name->s, snap[k].name->len, 0, ov, err);
                if (rc <= 0) continue;
                buf_clear(&tmp);
                im_regex_expand(re, r->replacement, strlen(r->replacement), snap[k].name->s, ov,
                                &tmp);
                im_lb_set(lb, tmp.data, tmp.len, snap[k].value->s, snap[k].value->len);
            }
            for (uint32_t k = 0; k < cnt; k++) {
                im_istr_unref(snap[k].name);
                im_istr_unref(snap[k].value);
            }
            im_free(snap);
            break;
        }
        case LABELS_RELABEL_LABELDROP:
        case LABELS_RELABEL_LABELKEEP:
            for (uint32_t k = 0; k < lb->n;) {
                const im_istr_t *nm = lb->l[k].name;
                if ((rc = im_regex_match(re, nm->s, nm->len, err)) < 0) break;
                bool m = rc == 1;
                if (m == (r->action == LABELS_RELABEL_LABELDROP)) {
                    im_lb_set(lb, nm->s, nm->len, "", 0);
                    continue;
                }
                k++;
            }
            break;
        }
    }
    im_free(ov);
    im_buf_free(&val);
    im_buf_free(&tmp);
    im_buf_free(&tgt);
    if (rc < 0) return rc;
    return keep ? 1 : 0;
}

bool labels_relabel_process(const labels_relabel_t *rules, size_t n, im_labels_builder_t *lb)
{
    im_err_t err;
    im_err_clear(&err);
    int rc = labels_relabel_apply(rules, n, lb, &err);
    if (rc >= 0) return rc == 1;
    /* Never silent: the label set is dropped and said so (every 1000th after the first
     * ten, so that a pathological regex over many samples does not flood the log). */
    static _Atomic uint64_t failures;
    uint64_t k = atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed);
    if (k < 10 || k % 1000 == 0)
        IM_ERROR("relabelling failed, label set dropped", "err=%s failures=%llu", im_logq(err.msg),
                 (unsigned long long)(k + 1));
    return false;
}
