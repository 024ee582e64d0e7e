/* fuzz_expo_proto.c — the protobuf exposition decoder (expo/proto.h) on
 * arbitrary bytes (an exact-size copy: a read past the input is caught by ASan),
 * with a small arena cap so the limit path runs too; a decoded histogram's
 * spans must account for its bucket counts; the samples a scrape would take
 * from it (expo_pb_samples) are walked in the three option settings. */
#include "util/base.h"

#include <stdlib.h>
#include <string.h>

#include "expo/proto.h"
#include "util/mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool sink(void *ctx, const expo_pb_sample_t *s)
{
    size_t *n = ctx;
    if (s->name_len == 0 || s->name[s->name_len] != 0) abort();
    return ++*n < 100000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    uint8_t *b = im_malloc(size ? size : 1);
    if (size) memcpy(b, data, size);
    im_arena_t a;
    im_arena_init(&a, 4096, size & 1 ? 1u << 16 : 0);
    expo_pb_family_t *f;
    size_t n;
    im_err_t err = {0};
    if (expo_pb_parse(b, size, &a, &f, &n, &err) == IM_OK) {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < f[i].nmetrics; j++) {
                const expo_pb_hist_t *h = &f[i].metrics[j].hist;
                uint64_t lp = 0;
                for (size_t k = 0; k < h->npspan; k++) lp += h->pspan[k].length;
                if (lp != h->npos) abort();
                if (f[i].name.len == 0) abort();
            }
        size_t cnt = 0;
        (void)expo_pb_samples(f, n, (size & 2) != 0, (size & 4) != 0, sink, &cnt);
    }
    im_arena_free(&a);
    im_free(b);
    return 0;
}
