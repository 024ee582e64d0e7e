/* scrape_int.h — private to src/scrape. */
#ifndef IM_SCRAPE_SCRAPE_INT_H
#define IM_SCRAPE_SCRAPE_INT_H

#include "util/base.h"
#include "labels/labels.h"
#include "tsdb/tsdb.h"
#include "util/buf.h"

/* ---- A target's series cache (cache.c) ----
 * raw series key (name \xff label \xfe value ..., as written) -> final labels
 * and storage reference. Keys are not stored: an entry is found by a 128-bit
 * hash of its key (secret per-cache seed), in two halves; see cache.c. */
typedef struct scrape__sent {
    uint64_t hash, check;  /* the key's hash: low half (places it), high half */
    const im_labels_t *ls; /* owned; NULL = dropped by metric relabelling */
    tsdb_ref_t ref;        /* free entries: the next free index */
    uint64_t seen, cur;    /* iterations: last committed with it (0 = never), last parsed */
    uint32_t gen;          /* target->gen when ls was computed */
    uint8_t over_limit;    /* ls breaks a label limit: every scrape with it fails */
    uint8_t used;          /* 0 = a free slot of the array */
} scrape__sent_t;

typedef struct scrape__cache {
    scrape__sent_t *ents;    /* owned; [0, nents) in use or free */
    uint32_t nents, capents; /* high-water mark, allocated */
    uint32_t free, nfree;    /* free list through ents[i].ref (UINT32_MAX = none) */
    uint32_t *idx;           /* owned; 0 = empty, 1 = deleted, i + 2 = ents[i] */
    uint32_t capidx, nidx;   /* power of two; slots not empty */
    uint32_t count;          /* live entries */
    uint64_t seed;
} scrape__cache_t;

/* Test hook: ANDed into every primary hash (default all ones); a test sets it
 * to 0 so that every key collides on it and only the check hash tells them apart. */
extern uint64_t scrape__cache_hash_mask;

void scrape__cache_init(scrape__cache_t *c);
/* Drops every entry (references released); the cache stays usable. */
void scrape__cache_free(scrape__cache_t *c);
/* The entry for key, created zeroed (hash, check and used set) when absent.
 * The pointer is valid until the next get, remove or compact. */
scrape__sent_t *scrape__cache_get(scrape__cache_t *c, const char *key, size_t klen, bool *created);
/* Removes e (its labels released). Other entries do not move, so a caller may
 * remove while walking ents[0, nents) (skipping !used). */
void scrape__cache_remove(scrape__cache_t *c, scrape__sent_t *e);
/* After a walk that removed entries: shrinks the array and index when mostly free. */
void scrape__cache_compact(scrape__cache_t *c);
/* The two halves of a key's hash, as an entry holds them (exposed for tests). */
void scrape__cache_key_hash(const scrape__cache_t *c, const char *key, size_t klen, uint64_t *h,
                            uint64_t *check);

#endif
