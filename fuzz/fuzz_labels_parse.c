/* fuzz_util_parse.c — fuzzes the small parsers behind HTTP parameters and config
 * values: durations, timestamps, floats, and regex matchers. Each accepted value
 * must format and re-parse to the same thing. */
#include "util/base.h"

#include <math.h>
#include <stdlib.h>

#include "labels/labels.h"
#include "util/fmtfloat.h"
#include "util/timeutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    int64_t ms;
    if (im_duration_parse(s, size, &ms, NULL) == IM_OK && ms >= 0) {
        char buf[128];
        im_duration_format(ms, buf, sizeof buf);
        int64_t back;
        if (im_duration_parse(buf, strlen(buf), &back, NULL) != IM_OK || back != ms) abort();
    }
    (void)im_time_parse(s, size, &ms, NULL);
    double v;
    if (im_parse_float(s, size, &v) && !isnan(v)) {
        char buf[IM_FLOAT_BUF];
        im_fmt_float_api(v, buf, sizeof buf);
        double back;
        if (!im_parse_float(buf, strlen(buf), &back) || back != v) abort();
        im_fmt_float_expo(v, buf, sizeof buf);
        if (!im_parse_float(buf, strlen(buf), &back) || back != v) abort();
    }
    if (size < 256) {
        im_matcher_t *m;
        if (im_matcher_new(IM_MATCH_RE, "l", 1, s, size, &m, NULL) == IM_OK) {
            (void)im_matcher_matches(m, "abc", 3);
            (void)im_matcher_matches(m, s, size);
            im_matcher_free(m);
        }
    }
    return 0;
}
