/* fuzz_tsdb_block.c — fuzzes the block reader with the loader's own code: the
 * input is a whole block file. tsdb__block_validate (the deep validator the
 * loader runs) must reject or accept without crashing; an accepted image is
 * opened through tsdb__block_open (from a memfd) and every series decoded with
 * tsdb__block_read, whose column decoders must stay in bounds too. Random bytes
 * rarely pass the checksums, so the input is also fed straight to the column
 * decoders (timestamps, then values), as a mutated frame would reach them. */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tsdb/tsdb_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t *ts;
    size_t nts, used;
    if (tsdb__ts_decode(data, size, &used, &ts, &nts)) {
        if (used > size) abort();
        double *vs = im_malloc((nts ? nts : 1) * sizeof *vs);
        (void)tsdb__vals_decode(data + used, size - used, NULL, vs, nts);
        im_free(vs);
        im_free(ts);
    }
    if (tsdb__block_validate(data, size, NULL) != IM_OK) return 0;
    int fd = memfd_create("blk", 0);
    if (fd < 0) return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    tsdb__block_t *b;
    if (tsdb__block_open(path, &b, NULL) != IM_OK) abort(); /* validated: must open */
    tsdb__fcache_t c = {0};
    for (uint64_t i = 0; i < b->nseries; i++) {
        int64_t *t;
        double *v;
        size_t n;
        (void)tsdb__block_read(b, (uint32_t)i, &c, INT64_MIN, INT64_MAX, &t, &v, &n);
        im_free(t);
        im_free(v);
    }
    tsdb__fcache_free(&c);
    tsdb__block_unref(b);
    close(fd);
    return 0;
}
