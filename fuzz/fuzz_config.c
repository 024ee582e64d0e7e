/* fuzz_config.c — libFuzzer target for the configuration loader
 * (scrape_config_parse): any input must give a config or an error with a
 * position, never a crash, leak or hang; a loaded config must dump and re-load. */
#include "util/base.h"

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 16)) return 0;
    scrape_config_t *c = NULL;
    im_err_t err;
    im_err_clear(&err);
    if (scrape_config_parse((const char *)data, size, "fuzz.yml", &c, &err) == IM_OK) {
        im_buf_t b;
        im_buf_init(&b, 0);
        (void)scrape_config_dump(c, &b);
        scrape_config_t *c2 = NULL;
        if (scrape_config_parse(b.data ? b.data : "", b.len, "dump.yml", &c2, &err) == IM_OK)
            scrape_config_free(c2);
        im_buf_free(&b);
        scrape_config_free(c);
    }
    return 0;
}
