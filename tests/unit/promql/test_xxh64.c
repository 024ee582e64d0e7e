/* test_xxh64.c — util/xxh64.h, the XXH64 that limit_ratio uses to pick series
 * as Prometheus does (labels.Hash()): the specification's known values (seed 0
 * and 1, inputs under and over a 32-byte stripe), the streaming form split at
 * every point, and a differential check against libxxhash's XXH64 over lengths
 * 0…300 (every tail length and stripe count). */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <xxhash.h>

#include <cmocka.h>

#include "util/xxh64.h"

static const struct {
    const char *s;
    uint64_t h0, h1; /* seed 0, seed 1 */
} known[] = {
    {"", 0xef46db3751d8e999ULL, 0xd5afba1336a3be4bULL},
    {"a", 0xd24ec4f1a98c6e5bULL, 0xdec2bc81c3cd46c6ULL},
    {"abc", 0x44bc2cf5ad770999ULL, 0xbea9ca8199328908ULL},
    {"message digest", 0x066ed728fceeb3beULL, 0xcba434b6417dd0fdULL},
    {"abcdefghijklmnopqrstuvwxyz", 0xcfe1f278fa89835cULL, 0x58058c6ec112e95eULL},
    {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
     0xe04a477f19ee145dULL, 0x0b795e8b945f7051ULL},
};

static void test_known_values(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        size_t n = strlen(known[i].s);
        assert_true(im_xxh64(known[i].s, n, 0) == known[i].h0);
        assert_true(im_xxh64(known[i].s, n, 1) == known[i].h1);
    }
}

static void test_streaming_splits(void **state)
{
    (void)state;
    const char *s = known[5].s;
    size_t n = strlen(s);
    for (size_t a = 0; a <= n; a++)
        for (size_t b = a; b <= n; b += 7) {
            im_xxh64_state_t st;
            im_xxh64_init(&st, 0);
            im_xxh64_update(&st, s, a);
            im_xxh64_update(&st, s + a, b - a);
            im_xxh64_update(&st, s + b, n - b);
            assert_true(im_xxh64_digest(&st) == known[5].h0);
        }
}

static void test_against_libxxhash(void **state)
{
    (void)state;
    uint8_t buf[300];
    uint64_t x = 0x123456789abcdefULL;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        buf[i] = (uint8_t)(x >> 56);
    }
    for (size_t n = 0; n <= sizeof buf; n++) {
        assert_true(im_xxh64(buf, n, 0) == XXH64(buf, n, 0));
        assert_true(im_xxh64(buf, n, 0xdeadbeefULL) == XXH64(buf, n, 0xdeadbeefULL));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_streaming_splits),
        cmocka_unit_test(test_against_libxxhash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
