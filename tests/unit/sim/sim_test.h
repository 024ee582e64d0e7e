/* sim_test.h — helpers shared by the simulator's unit tests (cmocka). */
#ifndef IM_TESTS_SIM_TEST_H
#define IM_TESTS_SIM_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim/sim.h"

/* A fleet from o; fails the test when it cannot be created. */
static inline sim_fleet_t *simt_fleet(const sim_options_t *o)
{
    sim_fleet_t *f = NULL;
    im_err_t err;
    im_rc rc = sim_fleet_create(o, &f, &err);
    if (rc != IM_OK) fprintf(stderr, "create: %s\n", err.msg);
    assert_int_equal(rc, IM_OK);
    return f;
}

/* One endpoint's exposition (owned by the caller). */
static inline char *simt_render(sim_fleet_t *f, sim_ep_kind_t k, int i)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    assert_int_equal(sim_fleet_render(f, k, i, &b), IM_OK);
    return im_buf_steal(&b, NULL);
}

/* Sum of the values of the sample lines starting with prefix and containing
 * has1 and has2 (either may be NULL). */
static inline double simt_sum(const char *text, const char *prefix, const char *has1,
                              const char *has2)
{
    size_t n = strlen(prefix);
    double s = 0;
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (strncmp(p, prefix, n) == 0 && (!has1 || memmem(p, len, has1, strlen(has1))) &&
            (!has2 || memmem(p, len, has2, strlen(has2)))) {
            const char *q = p + len;
            while (q > p && q[-1] != ' ') q--;
            s += strtod(q, NULL);
        }
        p = nl ? nl + 1 : NULL;
    }
    return s;
}

/* Writes text to a new temporary file; returns its path (static storage). */
static inline char *simt_tmp_yaml(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/im-sim-test-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

#endif
