/* test_tsdb_crash.c — crash safety: a child process ingests continuously (with
 * the background fsync timer, periodic tsdb_sync and maintenance persisting the
 * head into blocks and compacting them) and is SIGKILLed at a random moment, 24
 * rounds. After each kill the store is reopened and checked: every sample
 * acknowledged before the child's last completed tsdb_sync is there, bit-exact;
 * commits are atomic (every series has the same number of samples, since each
 * commit writes all of them); nothing is corrupt (no block skipped). */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tsdb/tsdb.h"
#include "util/log.h"

#define NSER   16
#define STEP   1000
#define ROUNDS 24

static char dir[256];

static tsdb_t *open_db(void)
{
    tsdb_opts_t o = {0};
    o.dir = dir;
    o.block_range_ms = 200 * STEP;
    o.fsync = TSDB_FSYNC_TIMER;
    o.fsync_interval_ms = 20;
    o.wal_segment_bytes = 32 << 10;
    tsdb_t *db = NULL;
    im_err_t err;
    if (tsdb_open(&o, &db, &err) != IM_OK) fail_msg("open: %s", err.msg);
    return db;
}

static double value(int s, int64_t k)
{
    return s % 2 ? (double)(k * (s + 1)) : (double)k / 8.0 + s;
}

static const im_labels_t *lbl(int s)
{
    char b[16];
    snprintf(b, sizeof b, "%d", s);
    return im_labels_from_strs("__name__", "crash", "s", b, NULL);
}

/* Child: ingest from k0 on, reporting each completed sync on fd. Never returns. */
static void child(int fd, int64_t k0)
{
    tsdb_t *db = open_db();
    const im_labels_t *ls[NSER];
    tsdb_ref_t refs[NSER] = {0};
    for (int s = 0; s < NSER; s++) ls[s] = lbl(s);
    for (int64_t k = k0;; k++) {
        tsdb_appender_t *a = tsdb_appender(db);
        for (int s = 0; s < NSER; s++)
            if (tsdb_appender_add(a, refs[s], refs[s] ? NULL : ls[s], k * STEP, value(s, k),
                                  &refs[s]) != IM_OK)
                _exit(3);
        if (tsdb_appender_commit(a, NULL) != IM_OK) _exit(4);
        if (k % 7 == 0) {
            if (tsdb_sync(db, NULL) != IM_OK) _exit(5);
            if (write(fd, &k, sizeof k) != sizeof k) _exit(6);
        }
        if (k % 150 == 0 && tsdb_maintain(db, NULL) != IM_OK) _exit(7);
    }
}

/* Returns the number of samples per series after checking consistency. */
static int64_t check_store(int64_t acked)
{
    tsdb_t *db = open_db();
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_int_equal(st.blocks_corrupt, 0);
    im_matcher_t *m;
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "__name__", 8, "crash", 5, &m, NULL), IM_OK);
    tsdb_queryable_t *q = tsdb_queryable(db);
    tsdb_series_set_t *set;
    assert_int_equal(q->vt->select(q, INT64_MIN, INT64_MAX, &m, 1, NULL, &set, NULL), IM_OK);
    int64_t count = -1;
    if (acked >= 0) assert_int_equal(set->n, NSER);
    for (size_t i = 0; i < set->n; i++) {
        int s = (int)strtol(im_labels_get(set->series[i].labels, "s")->s, NULL, 10);
        tsdb_iter_t *it = set->vt->iter(set, i);
        int64_t k = 0, t;
        double v;
        while (it->vt->next(it)) {
            it->vt->at(it, &t, &v);
            assert_int_equal(t, k * STEP);
            if (v != value(s, k)) fail_msg("series %d sample %lld wrong", s, (long long)k);
            k++;
        }
        it->vt->free(it);
        if (count < 0) count = k;
        if (k != count)
            fail_msg("commit not atomic: series %d has %lld samples, another %lld", s, (long long)k,
                     (long long)count);
    }
    if (count < 0) count = 0;
    if (count <= acked)
        fail_msg("acknowledged sample %lld lost (have %lld)", (long long)acked, (long long)count);
    set->vt->free(set);
    q->vt->close(q);
    im_matcher_free(m);
    tsdb_close(db);
    return count;
}

static void test_crash(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/im-tsdb-crash-XXXXXX");
    assert_non_null(mkdtemp(dir));
    im_log_set_level(IM_LOG_ERROR);
    srand((unsigned)time(NULL));
    int64_t have = 0, acked = -1;
    for (int round = 0; round < ROUNDS; round++) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(p[0]);
            child(p[1], have);
        }
        close(p[1]);
        /* Let it run 30..250 ms, reading acknowledgements meanwhile. */
        usleep((useconds_t)(30000 + rand() % 220000));
        kill(pid, SIGKILL);
        int64_t k;
        while (read(p[0], &k, sizeof k) == sizeof k) acked = k;
        close(p[0]);
        int status;
        waitpid(pid, &status, 0);
        assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        have = check_store(acked);
    }
    print_message("crash: %d rounds, %lld samples per series survived, last acknowledged %lld\n",
                  ROUNDS, (long long)have, (long long)acked);
    assert_true(acked > 20); /* something was acknowledged, even on a loaded machine */
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_crash)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
