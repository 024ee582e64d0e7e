/* arena.h — bump allocator for request- or query-lived memory.
 *
 * Allocations are freed all at once by im_arena_reset/im_arena_free. An arena
 * may have a byte cap (max_bytes, 0 = none): past it, im_arena_alloc returns
 * NULL and the caller reports a limit error. Not thread-safe. */
#ifndef IM_UTIL_ARENA_H
#define IM_UTIL_ARENA_H

#include "util/base.h"

typedef struct im_arena_block im_arena_block_t;

typedef struct im_arena {
    im_arena_block_t *head; /* owned list of blocks, newest first */
    size_t used_bytes;      /* bytes handed out */
    size_t total_bytes;     /* bytes held in blocks */
    size_t max_bytes;       /* 0 = no cap */
    size_t block_size;      /* default block size */
} im_arena_t;

void im_arena_init(im_arena_t *a, size_t block_size, size_t max_bytes);
void im_arena_free(im_arena_t *a);
void im_arena_reset(im_arena_t *a); /* frees all but the newest block */
/* 16-byte aligned memory valid until reset/free; NULL only when the cap is hit. */
void *im_arena_alloc(im_arena_t *a, size_t n);
void *im_arena_calloc(im_arena_t *a, size_t n);
char *im_arena_strndup(im_arena_t *a, const char *s, size_t n);

#endif
