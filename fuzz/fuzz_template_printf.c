/* fuzz_template_printf.c — fuzzes the formatting stage of the template engine on
 * its own (template/template_int.h, fmt.c): the input is a Go format string for
 * Sprintf over a fixed list of values of every kind (the first byte picks how
 * many), then Sprint, Sprintln and strconv.Quote of it. Output is capped as
 * printf's in a template is; nothing may crash or run past its buffer. */
#include "util/base.h"

#include "template/template_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > 4096) return 0;
    static const tmap_entry_t entries[] = {
        {{"a", 1}, {.k = TV_STRING, .u.s = {"x y", 3}}},
        {{"b", 1}, {.k = TV_STRING, .u.s = {"", 0}}},
    };
    static const tmap_t map = {IM_ARRAY_LEN(entries), (tmap_entry_t *)entries};
    static const tsample_t smp = {{IM_ARRAY_LEN(entries), (tmap_entry_t *)entries}, 2.5};
    const tv_t all[] = {
        {.k = TV_INT, .u.i = -42},
        {.k = TV_FLOAT, .u.f = 1234.5678},
        {.k = TV_STRING, .u.s = {"h\"é\x01", 5}},
        {.k = TV_BOOL, .u.b = true},
        {.k = TV_INVALID},
        {.k = TV_NILIF},
        {.k = TV_HTML, .u.s = {"<b>", 3}},
        {.k = TV_DURATION, .u.i = 90061000000000},
        {.k = TV_TIME, .u.f = 1.5e9},
        {.k = TV_STRMAP, .u.m = &map},
        {.k = TV_SAMPLE, .u.smp = &smp},
        {.k = TV_FLOAT, .u.f = -0.0},
    };
    size_t nargs = data[0] % (IM_ARRAY_LEN(all) + 1);
    const char *f = (const char *)data + 1;
    size_t flen = size - 1;
    im_buf_t out;
    im_buf_init(&out, TMPL_MAX_OUTPUT);
    tmpl__sprintf(&out, f, flen, all, nargs);
    tmpl__sprint(&out, all, nargs, data[0] & 1);
    tmpl__quote(&out, f, flen);
    for (size_t i = 0; i < nargs; i++) tmpl__print_value(&out, &all[i]);
    im_buf_free(&out);
    return 0;
}
