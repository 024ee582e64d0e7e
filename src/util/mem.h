/* mem.h — the one allocation wrapper.
 *
 * Every heap allocation in infermon goes through im_malloc/im_calloc/im_realloc/
 * im_free (scripts/checksrc enforces it). Out of memory is not an input error: the
 * wrapper aborts with the size asked for. Input-driven growth must be capped by
 * the caller (see util/buf.h) and reported as an error before it gets here.
 *
 * Bytes are counted per subsystem tag (IM_MEM_*), for /metrics
 * (infermon_memory_bytes{subsystem}): only the tagged calls count, so a tag exists
 * only for a subsystem whose large, long-lived structures use them (label sets,
 * parser tables, the head, scrape caches); untagged allocations are not counted.
 * The counters are approximate (they count requested bytes) and updated
 * atomically. */
#ifndef IM_UTIL_MEM_H
#define IM_UTIL_MEM_H

#include <stddef.h>
#include <stdint.h>

typedef enum im_mem_tag {
    IM_MEM_LABELS = 0,
    IM_MEM_EXPO,
    IM_MEM_TSDB,
    IM_MEM_SCRAPE,
    IM_MEM_TAG_COUNT
} im_mem_tag_t;

void *im_malloc(size_t n);
void *im_calloc(size_t count, size_t size);
void *im_realloc(void *p, size_t n);
void im_free(void *p);
char *im_strdup(const char *s);
char *im_strndup(const char *s, size_t n);

/* Tagged variants: the size must be given back on free for the accounting. */
void *im_malloc_tag(im_mem_tag_t tag, size_t n);
void *im_calloc_tag(im_mem_tag_t tag, size_t count, size_t size);
void *im_realloc_tag(im_mem_tag_t tag, void *p, size_t old_n, size_t new_n);
void im_free_tag(im_mem_tag_t tag, void *p, size_t n);

/* Bytes currently accounted to a tag. */
int64_t im_mem_bytes(im_mem_tag_t tag);
const char *im_mem_tag_name(im_mem_tag_t tag);

/* Aborts the process: out of memory for n bytes. */
_Noreturn void im_oom(size_t n);

#endif
