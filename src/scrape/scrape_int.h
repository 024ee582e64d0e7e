/* scrape_int.h — private to src/scrape. */
#ifndef IM_SCRAPE_SCRAPE_INT_H
#define IM_SCRAPE_SCRAPE_INT_H

#include "util/base.h"
#include "util/buf.h"

void scrape__md5(const void *data, size_t len, unsigned char out[16]);
/* Go regexp.Expand of tmpl against subject with PCRE2 ovector (pairs) of re. */
void scrape__expand(const void *re, const char *tmpl, const char *subj, const size_t *ov,
                    int nmatch, im_buf_t *out);

#endif
