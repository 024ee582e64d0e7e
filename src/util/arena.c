/* arena.c — bump allocator (see arena.h). */
#include "util/base.h"

#include "util/arena.h"

struct im_arena_block {
    im_arena_block_t *next;
    size_t size;
    size_t used;
    _Alignas(16) unsigned char data[];
};

void im_arena_init(im_arena_t *a, size_t block_size, size_t max_bytes)
{
    a->head = NULL;
    a->used_bytes = 0;
    a->total_bytes = 0;
    a->max_bytes = max_bytes;
    a->block_size = block_size ? block_size : 64 * 1024;
}

static void free_blocks(im_arena_block_t *b)
{
    while (b) {
        im_arena_block_t *n = b->next;
        im_free(b);
        b = n;
    }
}

void im_arena_free(im_arena_t *a)
{
    free_blocks(a->head);
    a->head = NULL;
    a->used_bytes = a->total_bytes = 0;
}

void im_arena_reset(im_arena_t *a)
{
    if (!a->head) return;
    im_arena_block_t *keep = a->head;
    free_blocks(keep->next);
    keep->next = NULL;
    keep->used = 0;
    a->used_bytes = 0;
    a->total_bytes = keep->size;
}

void *im_arena_alloc(im_arena_t *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (a->max_bytes && a->used_bytes + n > a->max_bytes) return NULL;
    im_arena_block_t *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t sz = n > a->block_size ? n : a->block_size;
        b = im_malloc(sizeof *b + sz);
        b->size = sz;
        b->used = 0;
        b->next = a->head;
        a->head = b;
        a->total_bytes += sz;
    }
    void *p = b->data + b->used;
    b->used += n;
    a->used_bytes += n;
    return p;
}

void *im_arena_calloc(im_arena_t *a, size_t n)
{
    void *p = im_arena_alloc(a, n);
    if (p) memset(p, 0, n);
    return p;
}

char *im_arena_strndup(im_arena_t *a, const char *s, size_t n)
{
    char *d = im_arena_alloc(a, n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = '\0';
    return d;
}
