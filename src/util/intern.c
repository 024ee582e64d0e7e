/* intern.c — sharded string-interning table (see intern.h).
 *
 * Invariants:
 *  1. A string is in exactly one shard's table (chosen by hash) while refs > 0.
 *  2. refs is atomic. Taking a reference of a string one holds, and dropping
 *     one that is not the last, need no lock (the hot path: the PromQL engine
 *     refs and unrefs label names per series and step). The last reference is
 *     dropped under the shard's mutex, and the entry is unlinked and freed in
 *     the same critical section when refs reaches 0; im_intern finds entries
 *     and increments refs under that mutex only, so it never resurrects a
 *     freed entry, and a string whose refs fell to 0 is never referenced
 *     again (nobody else held it). */
#include "util/base.h"

#include <pthread.h>

#include "util/hash.h"
#include "util/intern.h"

#define SHARDS 64

typedef struct shard {
    pthread_mutex_t mu;
    im_istr_t **tab;
    size_t nbuckets;
    size_t count;
    size_t bytes;
} shard_t;

static shard_t shards[SHARDS];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_shards(void)
{
    for (int i = 0; i < SHARDS; i++) {
        pthread_mutex_init(&shards[i].mu, NULL);
        shards[i].nbuckets = 256;
        shards[i].tab = im_calloc(shards[i].nbuckets, sizeof(im_istr_t *));
    }
}

static void grow(shard_t *sh)
{
    size_t nb = sh->nbuckets * 2;
    im_istr_t **nt = im_calloc(nb, sizeof *nt);
    for (size_t i = 0; i < sh->nbuckets; i++) {
        im_istr_t *e = sh->tab[i];
        while (e) {
            im_istr_t *next = e->next;
            size_t b = (e->hash >> 6) & (nb - 1);
            e->next = nt[b];
            nt[b] = e;
            e = next;
        }
    }
    im_free(sh->tab);
    sh->tab = nt;
    sh->nbuckets = nb;
}

const im_istr_t *im_intern(const char *s, size_t len)
{
    pthread_once(&once, init_shards);
    uint64_t h = im_hash(s, len);
    shard_t *sh = &shards[h & (SHARDS - 1)];
    pthread_mutex_lock(&sh->mu);
    size_t b = (h >> 6) & (sh->nbuckets - 1);
    for (im_istr_t *e = sh->tab[b]; e; e = e->next) {
        if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0) {
            __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
            pthread_mutex_unlock(&sh->mu);
            return e;
        }
    }
    im_istr_t *e = im_malloc_tag(IM_MEM_LABELS, sizeof *e + len + 1);
    e->hash = h;
    __atomic_store_n(&e->refs, 1, __ATOMIC_RELAXED);
    e->len = (uint32_t)len;
    if (len) memcpy(e->s, s, len);
    e->s[len] = '\0';
    e->next = sh->tab[b];
    sh->tab[b] = e;
    sh->count++;
    sh->bytes += sizeof *e + len + 1;
    if (sh->count > sh->nbuckets) grow(sh);
    pthread_mutex_unlock(&sh->mu);
    return e;
}

const im_istr_t *im_intern_cstr(const char *s)
{
    return im_intern(s, strlen(s));
}

const im_istr_t *im_istr_ref(const im_istr_t *cs)
{
    im_istr_t *s = (im_istr_t *)cs;
    __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED); /* the caller holds one */
    return s;
}

void im_istr_unref(const im_istr_t *cs)
{
    if (!cs) return;
    im_istr_t *s = (im_istr_t *)cs;
    /* not the last reference: drop it without the lock */
    uint32_t r = __atomic_load_n(&s->refs, __ATOMIC_RELAXED);
    while (r > 1)
        if (__atomic_compare_exchange_n(&s->refs, &r, r - 1, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return;
    shard_t *sh = &shards[s->hash & (SHARDS - 1)];
    pthread_mutex_lock(&sh->mu);
    if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        size_t b = (s->hash >> 6) & (sh->nbuckets - 1);
        im_istr_t **pp = &sh->tab[b];
        while (*pp != s) pp = &(*pp)->next;
        *pp = s->next;
        sh->count--;
        sh->bytes -= sizeof *s + s->len + 1;
        im_free_tag(IM_MEM_LABELS, s, sizeof *s + s->len + 1);
    }
    pthread_mutex_unlock(&sh->mu);
}

void im_intern_stats(size_t *count, size_t *bytes)
{
    pthread_once(&once, init_shards);
    size_t c = 0, by = 0;
    for (int i = 0; i < SHARDS; i++) {
        pthread_mutex_lock(&shards[i].mu);
        c += shards[i].count;
        by += shards[i].bytes;
        pthread_mutex_unlock(&shards[i].mu);
    }
    if (count) *count = c;
    if (bytes) *bytes = by;
}
