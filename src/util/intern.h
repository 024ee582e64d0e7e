/* intern.h — process-wide table of interned, refcounted strings.
 *
 * An interned string exists once per process: two interned strings are equal iff
 * their pointers are equal. im_intern returns a new reference that the caller
 * owns and releases with im_istr_unref; im_istr_ref adds one. The table is
 * sharded and mutex-protected, so any thread may intern and release; im_istr_ref
 * and an unref that is not the last take no lock (atomic counts).
 *
 * The bytes are NUL-terminated (s[len] == 0) and may contain any byte value,
 * including NUL inside (len is authoritative). */
#ifndef IM_UTIL_INTERN_H
#define IM_UTIL_INTERN_H

#include "util/base.h"

typedef struct im_istr {
    struct im_istr *next; /* hash chain, owned by the table */
    uint64_t hash;        /* im_hash of the bytes */
    uint32_t refs;        /* atomic (__atomic builtins); the last unref takes the shard lock */
    uint32_t len;
    char s[]; /* NUL-terminated */
} im_istr_t;

const im_istr_t *im_intern(const char *s, size_t len);
const im_istr_t *im_intern_cstr(const char *s);
const im_istr_t *im_istr_ref(const im_istr_t *s);
void im_istr_unref(const im_istr_t *s);

/* Number of distinct strings and their bytes, for /metrics. */
void im_intern_stats(size_t *count, size_t *bytes);

static inline im_sv_t im_istr_sv(const im_istr_t *s)
{
    return (im_sv_t){s->s, s->len};
}

#endif
