/* labels.c — immutable, interned, sorted label sets and their builder. */
#include "util/base.h"

#include <assert.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "labels/labels.h"
#include "util/hash.h"

static im_labels_t empty_set = {.hash = 0, .refs = 0, .n = 0};

const im_labels_t *im_labels_empty(void)
{
    return &empty_set;
}

const im_labels_t *im_labels_ref(const im_labels_t *ls)
{
    if (ls && ls != &empty_set)
        atomic_fetch_add_explicit((_Atomic uint32_t *)&((im_labels_t *)ls)->refs, 1,
                                  memory_order_relaxed);
    return ls;
}

void im_labels_unref(const im_labels_t *cls)
{
    if (!cls || cls == &empty_set) return;
    im_labels_t *ls = (im_labels_t *)cls;
    if (atomic_fetch_sub_explicit((_Atomic uint32_t *)&ls->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (uint32_t i = 0; i < ls->n; i++) {
        im_istr_unref(ls->l[i].name);
        im_istr_unref(ls->l[i].value);
    }
    im_free_tag(IM_MEM_LABELS, ls, sizeof *ls + ls->n * sizeof(im_label_t));
}

static int cmp_istr(const im_istr_t *a, const im_istr_t *b)
{
    if (a == b) return 0;
    size_t n = IM_MIN(a->len, b->len);
    int c = memcmp(a->s, b->s, n);
    if (c) return c;
    return a->len < b->len ? -1 : (a->len > b->len);
}

static uint64_t hash_pairs(const im_label_t *l, uint32_t n)
{
    /* Hash name\xff value\xff ... like Prometheus, but with XXH3 over the bytes. */
    uint64_t h = 0x84222325cbf29ce4ULL;
    for (uint32_t i = 0; i < n; i++) {
        h = im_hash_mix(h, l[i].name->hash);
        h = im_hash_mix(h, l[i].value->hash);
    }
    return h;
}

static const im_labels_t *make_set(const im_label_t *l, uint32_t n)
{
    if (n == 0) return &empty_set;
    im_labels_t *ls = im_malloc_tag(IM_MEM_LABELS, sizeof *ls + n * sizeof(im_label_t));
    ls->refs = 1;
    ls->n = n;
    for (uint32_t i = 0; i < n; i++) {
        /* the header's invariants: sorted by name, names unique, no empty value */
        assert(i == 0 || cmp_istr(l[i - 1].name, l[i].name) < 0);
        assert(l[i].value->len > 0);
        ls->l[i].name = im_istr_ref(l[i].name);
        ls->l[i].value = im_istr_ref(l[i].value);
    }
    ls->hash = hash_pairs(ls->l, n);
    return ls;
}

const im_labels_t *im_labels_without(const im_labels_t *ls, const im_istr_t *name)
{
    uint32_t at = ls->n;
    for (uint32_t i = 0; i < ls->n && at == ls->n; i++)
        if (ls->l[i].name == name) at = i;
    if (at == ls->n) return im_labels_ref(ls);
    uint32_t n = ls->n - 1;
    if (n == 0) return &empty_set;
    im_labels_t *r = im_malloc_tag(IM_MEM_LABELS, sizeof *r + n * sizeof(im_label_t));
    r->refs = 1;
    r->n = n;
    for (uint32_t i = 0, w = 0; i < ls->n; i++) {
        if (i == at) continue;
        r->l[w].name = im_istr_ref(ls->l[i].name);
        r->l[w].value = im_istr_ref(ls->l[i].value);
        w++;
    }
    r->hash = hash_pairs(r->l, n);
    return r;
}

const im_labels_t *im_labels_from_strs(const char *name, ...)
{
    im_labels_builder_t b;
    im_lb_init(&b);
    va_list ap;
    va_start(ap, name);
    for (const char *nm = name; nm; nm = va_arg(ap, const char *)) {
        const char *v = va_arg(ap, const char *);
        im_lb_set(&b, nm, strlen(nm), v, strlen(v));
    }
    va_end(ap);
    const im_labels_t *ls = im_lb_build(&b);
    im_lb_free(&b);
    return ls;
}

const im_istr_t *im_labels_get_istr(const im_labels_t *ls, const im_istr_t *name)
{
    for (uint32_t i = 0; i < ls->n; i++)
        if (ls->l[i].name == name) return ls->l[i].value;
    return NULL;
}

const im_istr_t *im_labels_get(const im_labels_t *ls, const char *name)
{
    size_t len = strlen(name);
    /* binary search by bytes */
    uint32_t lo = 0, hi = ls->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        const im_istr_t *nm = ls->l[mid].name;
        size_t n = IM_MIN(nm->len, len);
        int c = memcmp(nm->s, name, n);
        if (c == 0) c = nm->len < len ? -1 : (nm->len > len);
        if (c == 0) return ls->l[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

bool im_labels_equal(const im_labels_t *a, const im_labels_t *b)
{
    if (a == b) return true;
    if (a->hash != b->hash || a->n != b->n) return false;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->l[i].name != b->l[i].name || a->l[i].value != b->l[i].value) return false;
    return true;
}

int im_labels_compare(const im_labels_t *a, const im_labels_t *b)
{
    uint32_t n = IM_MIN(a->n, b->n);
    for (uint32_t i = 0; i < n; i++) {
        int c = cmp_istr(a->l[i].name, b->l[i].name);
        if (c) return c;
        c = cmp_istr(a->l[i].value, b->l[i].value);
        if (c) return c;
    }
    return a->n < b->n ? -1 : (a->n > b->n);
}

uint64_t im_labels_hash_subset(const im_labels_t *ls, const im_istr_t *const *names, size_t nnames,
                               bool on, bool drop_name)
{
    uint64_t h = 0x84222325cbf29ce4ULL;
    for (uint32_t i = 0; i < ls->n; i++) {
        const im_istr_t *nm = ls->l[i].name;
        bool listed = false;
        for (size_t k = 0; k < nnames; k++)
            if (names[k] == nm) {
                listed = true;
                break;
            }
        if (on ? !listed : listed) continue;
        if (drop_name && !on && nm->len == 8 && memcmp(nm->s, IM_METRIC_NAME, 8) == 0) continue;
        h = im_hash_mix(h, nm->hash);
        h = im_hash_mix(h, ls->l[i].value->hash);
    }
    return h;
}

im_rc im_quote_string(im_buf_t *out, const char *s, size_t len)
{
    im_rc rc = im_buf_putc(out, '"');
    for (size_t i = 0; i < len && rc == IM_OK; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': rc = im_buf_append(out, "\\\"", 2); break;
        case '\\': rc = im_buf_append(out, "\\\\", 2); break;
        case '\n': rc = im_buf_append(out, "\\n", 2); break;
        case '\t': rc = im_buf_append(out, "\\t", 2); break;
        case '\r': rc = im_buf_append(out, "\\r", 2); break;
        default:
            if (c < 0x20 || c == 0x7f)
                rc = im_buf_printf(out, "\\x%02x", c);
            else
                rc = im_buf_putc(out, (char)c);
        }
    }
    if (rc == IM_OK) rc = im_buf_putc(out, '"');
    return rc;
}

im_rc im_labels_format(const im_labels_t *ls, im_buf_t *out)
{
    const im_istr_t *name = im_labels_get(ls, IM_METRIC_NAME);
    im_rc rc = IM_OK;
    if (name) rc = im_buf_append(out, name->s, name->len);
    if (rc) return rc;
    uint32_t shown = ls->n - (name ? 1 : 0);
    if (name && shown == 0) return IM_OK;
    rc = im_buf_putc(out, '{');
    bool first = true;
    for (uint32_t i = 0; i < ls->n && rc == IM_OK; i++) {
        if (ls->l[i].name->len == 8 && memcmp(ls->l[i].name->s, IM_METRIC_NAME, 8) == 0) continue;
        if (!first) rc = im_buf_append(out, ", ", 2);
        first = false;
        if (rc == IM_OK) rc = im_buf_append(out, ls->l[i].name->s, ls->l[i].name->len);
        if (rc == IM_OK) rc = im_buf_putc(out, '=');
        if (rc == IM_OK) rc = im_quote_string(out, ls->l[i].value->s, ls->l[i].value->len);
    }
    if (rc == IM_OK) rc = im_buf_putc(out, '}');
    return rc;
}

/* ---- Builder ---- */

void im_lb_init(im_labels_builder_t *b)
{
    b->l = NULL;
    b->n = b->cap = 0;
}

void im_lb_reset(im_labels_builder_t *b)
{
    for (uint32_t i = 0; i < b->n; i++) {
        im_istr_unref(b->l[i].name);
        im_istr_unref(b->l[i].value);
    }
    b->n = 0;
}

void im_lb_free(im_labels_builder_t *b)
{
    im_lb_reset(b);
    im_free(b->l);
    b->l = NULL;
    b->cap = 0;
}

void im_lb_load(im_labels_builder_t *b, const im_labels_t *ls)
{
    im_lb_reset(b);
    for (uint32_t i = 0; i < ls->n; i++) im_lb_set_istr(b, ls->l[i].name, ls->l[i].value);
}

/* Index of the first label with name >= key; *found says equality. */
static uint32_t lb_find(const im_labels_builder_t *b, const char *name, size_t len, bool *found)
{
    uint32_t lo = 0, hi = b->n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        const im_istr_t *nm = b->l[mid].name;
        size_t n = IM_MIN(nm->len, len);
        int c = n ? memcmp(nm->s, name, n) : 0;
        if (c == 0) c = nm->len < len ? -1 : (nm->len > len);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

void im_lb_set_istr(im_labels_builder_t *b, const im_istr_t *name, const im_istr_t *val)
{
    bool found;
    uint32_t i = lb_find(b, name->s, name->len, &found);
    if (found) {
        if (val->len == 0) {
            im_istr_unref(b->l[i].name);
            im_istr_unref(b->l[i].value);
            memmove(&b->l[i], &b->l[i + 1], (b->n - i - 1) * sizeof b->l[0]);
            b->n--;
            return;
        }
        im_istr_unref(b->l[i].value);
        b->l[i].value = im_istr_ref(val);
        return;
    }
    if (val->len == 0) return;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 8;
        b->l = im_realloc(b->l, b->cap * sizeof b->l[0]);
    }
    memmove(&b->l[i + 1], &b->l[i], (b->n - i) * sizeof b->l[0]);
    b->l[i].name = im_istr_ref(name);
    b->l[i].value = im_istr_ref(val);
    b->n++;
}

void im_lb_set(im_labels_builder_t *b, const char *name, size_t nlen, const char *val, size_t vlen)
{
    if (vlen == 0) {
        bool found;
        uint32_t i = lb_find(b, name, nlen, &found);
        if (found) {
            im_istr_unref(b->l[i].name);
            im_istr_unref(b->l[i].value);
            memmove(&b->l[i], &b->l[i + 1], (b->n - i - 1) * sizeof b->l[0]);
            b->n--;
        }
        return;
    }
    const im_istr_t *n = im_intern(name, nlen);
    const im_istr_t *v = im_intern(val, vlen);
    im_lb_set_istr(b, n, v);
    im_istr_unref(n);
    im_istr_unref(v);
}

void im_lb_del(im_labels_builder_t *b, const char *name)
{
    im_lb_set(b, name, strlen(name), "", 0);
}

const im_istr_t *im_lb_get(const im_labels_builder_t *b, const char *name)
{
    bool found;
    uint32_t i = lb_find(b, name, strlen(name), &found);
    return found ? b->l[i].value : NULL;
}

const im_labels_t *im_lb_build(im_labels_builder_t *b)
{
    return make_set(b->l, b->n);
}

/* ---- Validity ---- */

bool im_label_name_valid(const char *s, size_t len)
{
    if (len == 0) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

bool im_metric_name_valid(const char *s, size_t len)
{
    if (len == 0) return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

bool im_utf8_valid(const char *cs, size_t len)
{
    const unsigned char *s = (const unsigned char *)cs;
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        uint32_t cp;
        if ((c & 0xe0) == 0xc0) {
            n = 1;
            cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2;
            cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        for (size_t k = 1; k <= n; k++) {
            if (i + k >= len || (s[i + k] & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += n + 1;
    }
    return true;
}
