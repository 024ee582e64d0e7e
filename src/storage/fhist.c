/* fhist.c — layout and bucket bounds of native-histogram values (fhist.h). */
#include "storage/fhist.h"

#include <math.h>

#include "util/mem.h"

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

size_t storage_fh_size(uint32_t npos, uint32_t nneg, uint32_t ncustom)
{
    return align8(sizeof(storage_fh_t)) + ((size_t)npos + nneg + ncustom) * sizeof(double);
}

storage_fh_t *storage_fh_place(void *mem, uint32_t npos, uint32_t nneg, uint32_t ncustom)
{
    storage_fh_t *h = mem;
    memset(h, 0, storage_fh_size(npos, nneg, ncustom));
    double *a = (double *)((char *)mem + align8(sizeof(storage_fh_t)));
    h->npos = npos;
    h->nneg = nneg;
    h->ncustom = ncustom;
    h->pos = a;
    h->neg = a + npos;
    h->custom = a + npos + nneg;
    return h;
}

size_t storage_fh_bytes(const storage_fh_t *h)
{
    return storage_fh_size(h->npos, h->nneg, h->ncustom);
}

storage_fh_t *storage_fh_copy_to(void *mem, const storage_fh_t *h)
{
    storage_fh_t *c = storage_fh_place(mem, h->npos, h->nneg, h->ncustom);
    double *pos = c->pos, *neg = c->neg, *custom = c->custom;
    *c = *h;
    c->pos = pos;
    c->neg = neg;
    c->custom = custom;
    if (h->npos) memcpy(pos, h->pos, h->npos * sizeof(double));
    if (h->nneg) memcpy(neg, h->neg, h->nneg * sizeof(double));
    if (h->ncustom) memcpy(custom, h->custom, h->ncustom * sizeof(double));
    return c;
}

storage_fh_t *storage_fh_clone(const storage_fh_t *h)
{
    return storage_fh_copy_to(im_malloc(storage_fh_bytes(h)), h);
}

double storage_fh_upper(int32_t schema, int32_t idx, const storage_fh_t *h)
{
    if (schema == STORAGE_FH_CUSTOM) {
        if (idx < 0) return -INFINITY;
        if ((uint32_t)idx >= h->ncustom) return INFINITY;
        return h->custom[idx];
    }
    /* base^idx with base = 2^(2^-schema): exact for integer powers of two */
    if (schema <= 0) {
        double e = (double)idx * ldexp(1.0, -schema);
        if (e > 1024) return INFINITY;
        if (e < -1075) return 0;
        return ldexp(1.0, (int)e);
    }
    int frac_bits = 1 << schema;
    int q = idx >= 0 ? idx / frac_bits : -((-idx + frac_bits - 1) / frac_bits);
    int r = idx - q * frac_bits;
    if (q > 1024) return INFINITY;
    return ldexp(exp2((double)r / frac_bits), q);
}

double storage_fh_lower(int32_t schema, int32_t idx, const storage_fh_t *h)
{
    if (schema == STORAGE_FH_CUSTOM && idx == 0) return -INFINITY;
    return storage_fh_upper(schema, idx - 1, h);
}
