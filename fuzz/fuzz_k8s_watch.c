/* fuzz_k8s_watch.c — fuzzes the Kubernetes watch-stream decoder and the List
 * decoder (discovery/k8s_watch.c). The stream is fed in two pieces split where
 * the first byte says, so events cut anywhere by the transport are covered; the
 * same events fed whole must give the same count. */
#include "util/base.h"

#include <stdlib.h>

#include "discovery/k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(void *arg, k8s_event_type_t t, json_t *obj)
{
    (void)t;
    (void)obj;
    (*(size_t *)arg)++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    size_t split = data[0] % size;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    if (split > n) split = n;
    size_t a = 0, b = 0;
    k8s_watch_decoder_t d1, d2;
    k8s_watch_decoder_init(&d1, 4096, count, &a);
    k8s_watch_decoder_init(&d2, 4096, count, &b);
    im_rc r1 = k8s_watch_decoder_feed(&d1, p, split);
    if (!r1) r1 = k8s_watch_decoder_feed(&d1, p + split, n - split);
    im_rc r2 = k8s_watch_decoder_feed(&d2, p, n);
    if (r1 != r2 || a != b) abort();
    k8s_watch_decoder_free(&d1);
    k8s_watch_decoder_free(&d2);
    json_t *root, *items;
    const char *rv, *cont;
    im_err_t e;
    im_err_clear(&e);
    if (k8s_list_decode(p, n, &root, &items, &rv, &cont, &e) == IM_OK) {
        if (!rv || !cont) abort();
        json_decref(root);
    }
    return 0;
}
