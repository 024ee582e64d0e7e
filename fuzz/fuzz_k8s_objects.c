/* fuzz_k8s_objects.c — fuzzes Kubernetes objects to target groups
 * (discovery/k8s_meta.c): the input is one JSON object, built in every role with
 * itself in every store (so pod, service and node look-ups find it). Every
 * target must carry an __address__ label except the ingress role's, whose
 * address is the rule's host and may be empty. */
#include "util/base.h"

#include <stdlib.h>

#include "discovery/k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj = json_loadb((const char *)data, size, 0, NULL);
    if (!obj) return 0;
    json_t *store = json_object();
    const char *keys[] = {"", "/", "llm/vllm-0", "gpu-node-a"};
    for (size_t i = 0; i < IM_ARRAY_LEN(keys); i++) json_object_set(store, keys[i], obj);
    json_t *const stores[1] = {store};
    k8s_cache_t c = {0};
    for (int k = 0; k < K8S_NROLES; k++) {
        c.stores[k] = stores;
        c.nstores[k] = 1;
    }
    for (int r = 0; r < K8S_NROLES; r++)
        for (int attach = 0; attach < 2; attach++) {
            k8s_group_t g;
            k8s_build((k8s_role_t)r, &c, attach, obj, &g);
            if (!g.source) abort();
            for (size_t t = 0; t < g.ntargets; t++)
                if (r != K8S_ROLE_INGRESS && !im_labels_get(g.targets[t], "__address__")) abort();
            k8s_group_clear(&g);
        }
    json_decref(store);
    json_decref(obj);
    return 0;
}
