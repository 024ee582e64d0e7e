/* gzip.c — one-shot gzip compression into a buffer (util/gzip.h): the HTTP
 * server's compressed answers and the simulator's /metrics. */
#include "util/base.h"

#include <zlib.h>

#include "util/gzip.h"

bool im_gzip(const char *in, size_t n, int level, im_buf_t *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
    size_t cap = deflateBound(&z, (uLong)n) + 32;
    if (im_buf_reserve(out, cap) != IM_OK) {
        deflateEnd(&z);
        return false;
    }
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)out->data;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    out->len = z.total_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END;
}
