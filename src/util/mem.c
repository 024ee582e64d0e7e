/* mem.c — allocation wrapper with per-subsystem byte counters (see mem.h). */
#include "util/base.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static _Atomic int64_t tag_bytes[IM_MEM_TAG_COUNT];

static const char *const tag_names[IM_MEM_TAG_COUNT] = {
    "labels",
    "expo",
    "tsdb",
    "scrape",
};

_Noreturn void im_oom(size_t n)
{
    fprintf(stderr, "infermon: out of memory allocating %zu bytes\n", n);
    abort();
}

void *im_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) im_oom(n);
    return p;
}

void *im_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) im_oom(count * size);
    return p;
}

void *im_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) im_oom(n);
    return q;
}

void im_free(void *p)
{
    free(p);
}

char *im_strndup(const char *s, size_t n)
{
    char *d = im_malloc(n + 1);
    if (n) memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *im_strdup(const char *s)
{
    return im_strndup(s, strlen(s));
}

void *im_malloc_tag(im_mem_tag_t tag, size_t n)
{
    atomic_fetch_add_explicit(&tag_bytes[tag], (int64_t)n, memory_order_relaxed);
    return im_malloc(n);
}

void *im_calloc_tag(im_mem_tag_t tag, size_t count, size_t size)
{
    atomic_fetch_add_explicit(&tag_bytes[tag], (int64_t)(count * size), memory_order_relaxed);
    return im_calloc(count, size);
}

void *im_realloc_tag(im_mem_tag_t tag, void *p, size_t old_n, size_t new_n)
{
    atomic_fetch_add_explicit(&tag_bytes[tag], (int64_t)new_n - (int64_t)old_n,
                              memory_order_relaxed);
    return im_realloc(p, new_n);
}

void im_free_tag(im_mem_tag_t tag, void *p, size_t n)
{
    if (!p) return;
    atomic_fetch_sub_explicit(&tag_bytes[tag], (int64_t)n, memory_order_relaxed);
    free(p);
}

int64_t im_mem_bytes(im_mem_tag_t tag)
{
    return atomic_load_explicit(&tag_bytes[tag], memory_order_relaxed);
}

const char *im_mem_tag_name(im_mem_tag_t tag)
{
    return (unsigned)tag < IM_MEM_TAG_COUNT ? tag_names[tag] : "unknown";
}
