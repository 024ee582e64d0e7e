/* cache.c — a target's series cache: the raw series key of a scraped sample
 * (its name and labels as written) -> the series' final labels and storage
 * reference, so a steady-state scrape neither builds label sets nor looks series
 * up in the head.
 *
 * No copy of the key is kept. An entry holds the two halves of a 128-bit hash
 * of it (XXH3-128, seeded per cache at random): the low half places it in the
 * index, the high half is checked; a lookup hits when both match. The seed is
 * secret, so a target cannot aim at a collision, and a false hit needs the
 * 128-bit hashes of two different keys of the same target to collide (about
 * 2^-128 per pair). Entries live in one array (no allocation per series, freed slots on a
 * free list), found through an open-addressing index of 32-bit slots (linear
 * probing, tombstones, rebuilt when they pile up). The array shrinks when most
 * of it is unused (scrape__cache_compact). */
#include "util/base.h"

#include <xxhash.h>

#include "scrape/scrape_int.h"
#include "util/timeutil.h"

#define IDX_EMPTY 0u
#define IDX_DEAD  1u
#define NONE      UINT32_MAX

uint64_t scrape__cache_hash_mask = UINT64_MAX;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void scrape__cache_init(scrape__cache_t *c)
{
    memset(c, 0, sizeof *c);
    c->free = NONE;
    uint64_t s = (uint64_t)im_mono_ns() ^ ((uint64_t)(uintptr_t)c << 17);
    s ^= (uint64_t)im_now_ms() * 0x2545f4914f6cdd1dULL;
    c->seed = splitmix(&s);
}

void scrape__cache_free(scrape__cache_t *c)
{
    for (uint32_t i = 0; i < c->nents; i++)
        if (c->ents[i].used && c->ents[i].ls) im_labels_unref(c->ents[i].ls);
    if (c->ents) im_free_tag(IM_MEM_SCRAPE, c->ents, (size_t)c->capents * sizeof *c->ents);
    if (c->idx) im_free_tag(IM_MEM_SCRAPE, c->idx, (size_t)c->capidx * sizeof *c->idx);
    uint64_t seed = c->seed;
    memset(c, 0, sizeof *c);
    c->free = NONE;
    c->seed = seed;
}

/* A fresh index of cap slots (a power of two) holding every live entry. */
static void idx_rebuild(scrape__cache_t *c, uint32_t cap)
{
    if (c->idx) im_free_tag(IM_MEM_SCRAPE, c->idx, (size_t)c->capidx * sizeof *c->idx);
    c->idx = im_calloc_tag(IM_MEM_SCRAPE, cap, sizeof *c->idx);
    c->capidx = cap;
    c->nidx = 0;
    for (uint32_t i = 0; i < c->nents; i++) {
        if (!c->ents[i].used) continue;
        uint32_t s = (uint32_t)c->ents[i].hash & (cap - 1);
        while (c->idx[s] != IDX_EMPTY) s = (s + 1) & (cap - 1);
        c->idx[s] = i + 2;
        c->nidx++;
    }
}

static uint32_t pow2_at_least(uint32_t n)
{
    uint32_t c = 16;
    while (c < n) c *= 2;
    return c;
}

void scrape__cache_key_hash(const scrape__cache_t *c, const char *key, size_t klen, uint64_t *h,
                            uint64_t *check)
{
    XXH128_hash_t x = XXH3_128bits_withSeed(key, klen, c->seed);
    *h = x.low64 & scrape__cache_hash_mask;
    *check = x.high64;
}

scrape__sent_t *scrape__cache_get(scrape__cache_t *c, const char *key, size_t klen, bool *created)
{
    uint64_t h, ck;
    scrape__cache_key_hash(c, key, klen, &h, &ck);
    *created = false;
    uint32_t dead = NONE;
    if (c->capidx) {
        uint32_t mask = c->capidx - 1;
        for (uint32_t s = (uint32_t)h & mask;; s = (s + 1) & mask) {
            uint32_t v = c->idx[s];
            if (v == IDX_EMPTY) break;
            if (v == IDX_DEAD) {
                if (dead == NONE) dead = s;
                continue;
            }
            scrape__sent_t *e = &c->ents[v - 2];
            if (e->hash == h && e->check == ck) return e;
        }
    }
    /* miss: a slot in the array, then one in the index */
    uint32_t i;
    if (c->free != NONE) {
        i = c->free;
        c->free = (uint32_t)c->ents[i].ref;
        c->nfree--;
    } else {
        if (c->nents == c->capents) {
            if (c->capents >= (1u << 30)) im_oom(SIZE_MAX);
            uint32_t nc = c->capents ? c->capents * 2 : 16;
            c->ents = im_realloc_tag(IM_MEM_SCRAPE, c->ents, (size_t)c->capents * sizeof *c->ents,
                                     (size_t)nc * sizeof *c->ents);
            c->capents = nc;
        }
        i = c->nents++;
    }
    scrape__sent_t *e = &c->ents[i];
    memset(e, 0, sizeof *e);
    e->hash = h;
    e->check = ck;
    e->used = 1;
    c->count++;
    if (dead != NONE) {
        c->idx[dead] = i + 2; /* re-uses a tombstone: nidx unchanged */
    } else if ((c->nidx + 1) * 4 > c->capidx * 3) {
        /* grows when live entries fill half of it, else only drops the tombstones */
        uint32_t cap = c->capidx ? c->capidx : 16;
        if ((uint64_t)c->count * 2 > cap) cap *= 2;
        idx_rebuild(c, cap); /* includes the new entry */
    } else {
        uint32_t mask = c->capidx - 1, s = (uint32_t)h & mask;
        while (c->idx[s] != IDX_EMPTY) s = (s + 1) & mask;
        c->idx[s] = i + 2;
        c->nidx++;
    }
    *created = true;
    return e;
}

void scrape__cache_remove(scrape__cache_t *c, scrape__sent_t *e)
{
    uint32_t i = (uint32_t)(e - c->ents), mask = c->capidx - 1;
    uint32_t s = (uint32_t)e->hash & mask;
    while (c->idx[s] != i + 2) s = (s + 1) & mask;
    c->idx[s] = IDX_DEAD;
    if (e->ls) im_labels_unref(e->ls);
    memset(e, 0, sizeof *e);
    e->ref = c->free;
    c->free = i;
    c->nfree++;
    c->count--;
}

void scrape__cache_compact(scrape__cache_t *c)
{
    if (c->count == 0) {
        scrape__cache_free(c);
        return;
    }
    if (c->capents > 64 && c->count < c->capents / 4) {
        uint32_t cap = pow2_at_least(c->count * 2);
        scrape__sent_t *ne = im_malloc_tag(IM_MEM_SCRAPE, (size_t)cap * sizeof *ne);
        uint32_t n = 0;
        for (uint32_t i = 0; i < c->nents; i++)
            if (c->ents[i].used) ne[n++] = c->ents[i];
        im_free_tag(IM_MEM_SCRAPE, c->ents, (size_t)c->capents * sizeof *c->ents);
        c->ents = ne;
        c->capents = cap;
        c->nents = n;
        c->free = NONE;
        c->nfree = 0;
        idx_rebuild(c, pow2_at_least(n * 2));
    } else if (c->capidx > 64 && (uint64_t)c->count * 8 < c->capidx) {
        idx_rebuild(c, pow2_at_least(c->count * 2));
    }
}
