/* test_scrape_cache.c — unit tests for a target's series cache
 * (src/scrape/cache.c): keys found again, removal while walking, tombstone
 * re-use and compaction, churn against a reference model, and forced hash
 * collisions (scrape__cache_hash_mask = 0 or 7: every key shares a few primary
 * hashes, only the check hash tells them apart). */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

#include "scrape/scrape_int.h"

static size_t key_of(unsigned id, char *buf)
{
    /* raw-key-like: name \xff label \xfe value */
    return (size_t)snprintf(buf, 128, "metric_%u\xffpod\xfepod-%u\xffle\xfe%u", id % 7, id, id * 3);
}

static scrape__sent_t *get(scrape__cache_t *c, unsigned id, bool *created)
{
    char k[128];
    size_t n = key_of(id, k);
    return scrape__cache_get(c, k, n, created);
}

static void basic(uint64_t mask)
{
    scrape__cache_hash_mask = mask;
    scrape__cache_t c;
    scrape__cache_init(&c);
    bool created;
    for (unsigned i = 0; i < 500; i++) {
        scrape__sent_t *e = get(&c, i, &created);
        assert_true(created);
        assert_int_equal(e->used, 1);
        e->ref = 1000 + i;
        e->ls = im_labels_from_strs("i", "x", NULL);
    }
    assert_int_equal(c.count, 500);
    for (unsigned i = 0; i < 500; i++) {
        scrape__sent_t *e = get(&c, i, &created);
        assert_false(created);
        assert_int_equal(e->ref, 1000 + i);
    }
    /* remove the odd ones while walking */
    for (uint32_t i = 0; i < c.nents; i++)
        if (c.ents[i].used && c.ents[i].ref % 2) scrape__cache_remove(&c, &c.ents[i]);
    scrape__cache_compact(&c);
    assert_int_equal(c.count, 250);
    for (unsigned i = 0; i < 500; i++) {
        scrape__sent_t *e = get(&c, i, &created);
        assert_int_equal(created, i % 2 == 1);
        if (created)
            e->ref = 5000 + i;
        else
            assert_int_equal(e->ref, 1000 + i);
    }
    assert_int_equal(c.count, 500);
    /* almost everything goes: the array and index shrink, the rest is found */
    for (uint32_t i = 0; i < c.nents; i++)
        if (c.ents[i].used && c.ents[i].ref != 1000 && c.ents[i].ref != 5001)
            scrape__cache_remove(&c, &c.ents[i]);
    scrape__cache_compact(&c);
    assert_int_equal(c.count, 2);
    assert_true(c.capents <= 64);
    assert_true(c.capidx <= 64);
    assert_int_equal(get(&c, 0, &created)->ref, 1000);
    assert_false(created);
    assert_int_equal(get(&c, 1, &created)->ref, 5001);
    assert_false(created);
    scrape__cache_free(&c);
    assert_int_equal(c.count, 0);
    get(&c, 3, &created); /* usable after free */
    assert_true(created);
    scrape__cache_free(&c);
    scrape__cache_hash_mask = UINT64_MAX;
}

static void test_basic(void **state)
{
    (void)state;
    basic(UINT64_MAX);
}

static void test_collisions(void **state)
{
    (void)state;
    basic(0); /* every key in one probe chain */
    basic(7);
    /* the hook really collides the primary hashes; the check hashes differ */
    scrape__cache_hash_mask = 0;
    scrape__cache_t c;
    scrape__cache_init(&c);
    uint64_t h1, c1, h2, c2;
    scrape__cache_key_hash(&c, "a", 1, &h1, &c1);
    scrape__cache_key_hash(&c, "b", 1, &h2, &c2);
    assert_true(h1 == h2);
    assert_true(c1 != c2);
    scrape__cache_hash_mask = UINT64_MAX;
    scrape__cache_key_hash(&c, "a", 1, &h1, &c1);
    scrape__cache_key_hash(&c, "b", 1, &h2, &c2);
    assert_true(h1 != h2);
    /* keys that differ only in length or in one byte */
    bool created;
    scrape__cache_hash_mask = 0;
    scrape__sent_t *e = scrape__cache_get(&c, "ab", 2, &created);
    e->ref = 1;
    e = scrape__cache_get(&c, "ab\0", 3, &created);
    assert_true(created);
    e->ref = 2;
    e = scrape__cache_get(&c, "ac", 2, &created);
    assert_true(created);
    e->ref = 3;
    assert_int_equal(scrape__cache_get(&c, "ab", 2, &created)->ref, 1);
    assert_int_equal(scrape__cache_get(&c, "ab\0", 3, &created)->ref, 2);
    assert_int_equal(scrape__cache_get(&c, "ac", 2, &created)->ref, 3);
    assert_false(created);
    scrape__cache_free(&c);
    scrape__cache_hash_mask = UINT64_MAX;
}

/* Random inserts and removals against a model, with and without collisions. */
static void churn(uint64_t mask, unsigned nkeys, unsigned rounds)
{
    scrape__cache_hash_mask = mask;
    scrape__cache_t c;
    scrape__cache_init(&c);
    bool *present = im_calloc(nkeys, 1);
    uint64_t rnd = 12345;
    for (unsigned r = 0; r < rounds; r++) {
        /* a "scrape": a random subset of keys, then drop what was not in it */
        unsigned lo = (unsigned)(rnd % nkeys), span = (unsigned)((rnd >> 20) % nkeys) + 1;
        rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
        for (unsigned k = 0; k < span; k++) {
            unsigned id = (lo + k) % nkeys;
            bool created;
            scrape__sent_t *e = get(&c, id, &created);
            assert_int_equal(created, !present[id]);
            if (created) e->ref = id + 1;
            assert_int_equal(e->ref, id + 1);
            e->cur = r + 1;
            present[id] = true;
        }
        for (uint32_t i = 0; i < c.nents; i++) {
            scrape__sent_t *e = &c.ents[i];
            if (!e->used || e->cur == r + 1) continue;
            present[e->ref - 1] = false;
            scrape__cache_remove(&c, e);
        }
        scrape__cache_compact(&c);
        unsigned n = 0;
        for (unsigned k = 0; k < nkeys; k++) n += present[k];
        assert_int_equal(c.count, n);
        assert_true(c.nidx <= c.capidx * 3 / 4 + 1);
    }
    im_free(present);
    scrape__cache_free(&c);
    scrape__cache_hash_mask = UINT64_MAX;
}

static void test_churn(void **state)
{
    (void)state;
    churn(UINT64_MAX, 3000, 300);
    churn(0xff, 3000, 100);
    churn(0, 300, 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_collisions),
        cmocka_unit_test(test_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
