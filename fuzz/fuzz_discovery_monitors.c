/* fuzz_discovery_monitors.c — libFuzzer target for the PodMonitor /
 * ServiceMonitor translator (discovery_monitor_scrape_configs): any input gives
 * scrape_configs text or an error, never a crash, leak or hang; text it
 * generates must parse as YAML into a list of mappings each with a job_name, so
 * no value of the object can change the document's structure. */
#include "util/base.h"

#include <stdlib.h>

#include "config/yaml.h"
#include "discovery/generate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static im_rc secret(void *ctx, const char *ns, const char *name, const char *key, char **value,
                    im_err_t *err)
{
    (void)ctx;
    (void)ns;
    if (!strcmp(name, "missing")) return im_err_set(err, IM_ENOTFOUND, "not found");
    size_t n = strlen(name) + strlen(key) + 8;
    *value = im_malloc(n);
    snprintf(*value, n, "%s\n\"%s", name, key);
    return IM_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 16)) return 0;
    discovery_monitor_opts_t o = {.secret = secret};
    im_buf_t b;
    im_buf_init(&b, 1u << 24);
    im_err_t err;
    im_err_clear(&err);
    if (discovery_monitor_scrape_configs((const char *)data, size, &o, &b, NULL, &err) == IM_OK &&
        b.len) {
        cfg_node_t *root = NULL;
        if (cfg_parse_yaml(b.data, b.len, "gen.yml", &root, &err) != IM_OK || !root ||
            root->type != CFG_NODE_SEQ)
            abort();
        for (size_t i = 0; i < root->nkids; i++)
            if (root->kids[i]->type != CFG_NODE_MAP || !cfg_get(root->kids[i], "job_name")) abort();
        cfg_node_free(root);
    }
    im_buf_free(&b);
    return 0;
}
