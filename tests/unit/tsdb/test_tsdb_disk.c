/* test_tsdb_disk.c — the on-disk store: WAL replay (with checkpoints), torn and
 * corrupt WAL tails, persisting the head into blocks, compaction, retention by
 * time and size, corrupt blocks skipped while the rest is served, and every
 * sample read back bit-exact from blocks and head. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"
#include "tsdb_test.h"
#include "util/log.h"

#define NSER 24
#define STEP 15000

static const im_labels_t *series_labels(int i)
{
    char pod[16], kind[8];
    snprintf(pod, sizeof pod, "pod-%d", i / 4);
    snprintf(kind, sizeof kind, "k%d", i % 4);
    return im_labels_from_strs("__name__", "metric", "pod", pod, "kind", kind, NULL);
}

/* The expected value of series i at sample index k. */
static double expect(int i, int64_t k)
{
    switch (i % 4) {
    case 0: return (double)(k * 3 + i);                      /* counter */
    case 1: return (double)((k * 7919) % 100) / 100.0;       /* decimal gauge */
    case 2: return k % 97 == 96 ? tsdb_stale_nan() : sin(k); /* float with stale NaNs */
    default: return 5.0;                                     /* constant */
    }
}

static int series_index(const im_labels_t *ls)
{
    return (int)strtol(im_labels_get(ls, "pod")->s + 4, NULL, 10) * 4 +
           (im_labels_get(ls, "kind")->s[1] - '0');
}

static const tt_series_t fx = {"metric", NSER, STEP, series_labels, expect, series_index};

static size_t count_files(const char *sub, const char *suffix)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tt_dir, sub);
    DIR *d = opendir(p);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name), sl = strlen(suffix);
        if (de->d_name[0] != '.' && l >= sl && strcmp(de->d_name + l - sl, suffix) == 0) n++;
    }
    closedir(d);
    return n;
}

/* Returns the path of the n-th file (sorted) in tt_dir/sub with suffix. */
static void nth_file(const char *sub, const char *suffix, size_t n, char *out, size_t cap)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tt_dir, sub);
    struct dirent **list;
    int cnt = scandir(p, &list, NULL, alphasort);
    assert_true(cnt > 0);
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; i < cnt; i++) {
        size_t l = strlen(list[i]->d_name), sl = strlen(suffix);
        if (list[i]->d_name[0] != '.' && l >= sl && strcmp(list[i]->d_name + l - sl, suffix) == 0 &&
            k++ == n)
            snprintf(out, cap, "%s/%s", p, list[i]->d_name);
        free(list[i]); /* checksrc: allow (scandir's allocation) */
    }
    free(list); /* checksrc: allow (scandir's allocation) */
    assert_true(out[0] != 0);
}

static void flip_byte(const char *path, long off_from_start)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    uint8_t b;
    assert_int_equal(pread(fd, &b, 1, off_from_start), 1);
    b ^= 0x5a;
    assert_int_equal(pwrite(fd, &b, 1, off_from_start), 1);
    close(fd);
}

static long file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (long)st.st_size;
}

static void test_wal_replay(void **state)
{
    (void)state;
    tsdb_t *db = tt_open(0, 0, 0);
    tt_ingest(db, &fx, 0, 400);
    tsdb_close(db);
    assert_true(count_files("wal", "") >= 2); /* several 64 KiB segments */
    db = tt_open(0, 0, 0);
    tt_verify(db, &fx, 0, 400, 0);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_int_equal(st.head_series, NSER);
    assert_int_equal(st.wal_corruptions, 0);
    /* appends continue after a replay, with order enforced */
    tt_ingest(db, &fx, 400, 450);
    tsdb_appender_t *a = tsdb_appender(db);
    const im_labels_t *ls = series_labels(0);
    assert_int_equal(tsdb_appender_add(a, 0, ls, 10 * STEP, 1, NULL), IM_EOUTOFORDER);
    im_labels_unref(ls);
    tsdb_appender_rollback(a);
    tsdb_close(db);
    db = tt_open(0, 0, 0);
    tt_verify(db, &fx, 0, 450, 0);
    tsdb_close(db);
}

static void test_wal_torn_and_corrupt(void **state)
{
    (void)state;
    tsdb_t *db = tt_open(0, 0, 0);
    tt_ingest(db, &fx, 0, 300);
    tsdb_close(db);
    /* A torn tail: the last segment loses its last bytes. */
    char seg[1200];
    size_t nseg = count_files("wal", "");
    nth_file("wal", "", nseg - 1, seg, sizeof seg);
    long sz = file_size(seg);
    if (sz <= 8) { /* the newest segment may be empty: use the one before */
        nth_file("wal", "", nseg - 2, seg, sizeof seg);
        sz = file_size(seg);
    }
    assert_int_equal(truncate(seg, sz - 5), 0);
    db = tt_open(0, 0, 0);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_int_equal(st.wal_corruptions, 1);
    tt_verify(db, &fx, 0, 299, 0); /* the last commit is gone, the rest intact */
    tsdb_close(db);
    /* A flipped byte in the middle of the first segment: cut there, later
     * segments dropped, the store starts and serves what precedes. */
    nth_file("wal", "", 0, seg, sizeof seg);
    flip_byte(seg, file_size(seg) / 2);
    db = tt_open(0, 0, 0);
    tsdb_get_stats(db, &st);
    assert_int_equal(st.wal_corruptions, 1);
    assert_true(st.head_samples > 0);
    assert_true(st.head_samples < 299 * NSER);
    assert_int_equal(st.head_samples % NSER, 0); /* commits are all or nothing */
    int64_t n = (int64_t)(st.head_samples / NSER);
    tt_verify(db, &fx, 0, n, 0);
    tt_ingest(db, &fx, n, n + 10); /* and it keeps working */
    tsdb_close(db);
    db = tt_open(0, 0, 0);
    tt_verify(db, &fx, 0, n + 10, 0);
    tsdb_close(db);
}

static void test_blocks_compaction_retention(void **state)
{
    (void)state;
    const int64_t R = 20 * STEP; /* 20 samples per block range */
    tsdb_t *db = tt_open(R, 0, 0);
    tt_ingest(db, &fx, 0, 200);
    assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_true(st.blocks >= 1);
    assert_true(st.compactions >= 1);
    assert_true(st.head_samples < 200 * NSER);
    tt_verify(db, &fx, 0, 200, 0);
    tt_verify(db, &fx, 37, 151, 0);
    /* older than the persisted range: out of bounds */
    tsdb_appender_t *a = tsdb_appender(db);
    const im_labels_t *ls = series_labels(1);
    assert_int_equal(tsdb_appender_add(a, 0, ls, 5 * STEP, 1, NULL), IM_EOUTOFBOUNDS);
    tsdb_appender_rollback(a);
    im_labels_unref(ls);
    tsdb_close(db);
    /* Reopen: blocks + checkpoint + WAL give the same data. */
    db = tt_open(R, 0, 0);
    tt_verify(db, &fx, 0, 200, 0);
    tt_ingest(db, &fx, 200, 260);
    assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    tt_verify(db, &fx, 0, 260, 0);
    tsdb_close(db);
    db = tt_open(R, 0, 0);
    tt_verify(db, &fx, 0, 260, 0);
    tsdb_get_stats(db, &st);
    uint64_t before = st.blocks;
    tsdb_close(db);
    /* Time retention: keep about 50 samples; whole blocks go (the compacted
     * [0, 180) one ends before newest - 50). */
    db = tt_open(R, 50 * STEP, 0);
    assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    tsdb_get_stats(db, &st);
    assert_true(st.blocks < before);
    tt_verify(db, &fx, 180, 260, 0);
    /* Size retention: a tiny cap leaves no blocks, the head still serves. */
    tsdb_close(db);
    db = tt_open(R, 0, 1);
    assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    tsdb_get_stats(db, &st);
    assert_int_equal(st.blocks, 0);
    tsdb_close(db);
}

static void test_corrupt_block(void **state)
{
    (void)state;
    const int64_t R = 20 * STEP;
    tsdb_t *db = tt_open(R, 0, 0);
    tt_ingest(db, &fx, 0, 70);
    assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    size_t nb = st.blocks;
    assert_true(nb >= 2);
    tsdb_close(db);
    char blk[1200];
    nth_file("blocks", ".imb", 0, blk, sizeof blk);
    flip_byte(blk, file_size(blk) / 3);
    db = tt_open(R, 0, 0);
    tsdb_get_stats(db, &st);
    assert_int_equal(st.blocks_corrupt, 1);
    assert_int_equal(st.blocks, nb - 1);
    tt_verify(db, &fx, 20, 70, 0); /* the first block's range is gone, the rest served */
    tsdb_close(db);
    /* A truncated block and garbage files are reported too. */
    nth_file("blocks", ".imb", 0, blk, sizeof blk);
    assert_int_equal(truncate(blk, 100), 0);
    db = tt_open(R, 0, 0);
    tsdb_get_stats(db, &st);
    assert_int_equal(st.blocks_corrupt, 1); /* counted per open */
    tsdb_close(db);
}

/* Readers running while the head is persisted, compacted and truncated never
 * see a gap or a partial commit: each select returns every series with the
 * samples 0..n-1 for one n. */
typedef struct rctx {
    tsdb_t *db;
    volatile int *stop;
    int bad, selects;
} rctx_t;

static void *reader(void *arg)
{
    rctx_t *c = arg;
    im_matcher_t *m;
    if (im_matcher_new(IM_MATCH_EQ, "__name__", 8, "metric", 6, &m, NULL) != IM_OK) abort();
    tsdb_queryable_t *q = tsdb_queryable(c->db);
    while (!*c->stop) {
        tsdb_series_set_t *set;
        if (q->vt->select(q, INT64_MIN, INT64_MAX, &m, 1, NULL, &set, NULL) != IM_OK) abort();
        int64_t first = -1;
        for (size_t i = 0; i < set->n; i++) {
            tsdb_iter_t *it = set->vt->iter(set, i);
            int64_t k = 0, t;
            double v;
            while (it->vt->next(it)) {
                it->vt->at(it, &t, &v);
                if (t != k * STEP) c->bad++;
                k++;
            }
            it->vt->free(it);
            if (first < 0) first = k;
            if (k != first) c->bad++;
        }
        if (set->n != 0 && set->n != NSER) c->bad++;
        set->vt->free(set);
        c->selects++;
    }
    q->vt->close(q);
    im_matcher_free(m);
    return NULL;
}

static void test_read_while_persisting(void **state)
{
    (void)state;
    const int64_t R = 20 * STEP;
    tsdb_t *db = tt_open(R, 0, 0);
    volatile int stop = 0;
    rctx_t rc[2] = {{db, &stop, 0, 0}, {db, &stop, 0, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, reader, &rc[i]);
    for (int64_t k = 0; k < 300; k += 10) {
        tt_ingest(db, &fx, k, k + 10);
        assert_int_equal(tsdb_maintain(db, NULL), IM_OK);
    }
    stop = 1;
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(rc[i].bad, 0);
        assert_true(rc[i].selects > 0);
    }
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_true(st.compactions > 0);
    tt_verify(db, &fx, 0, 300, 0);
    tsdb_close(db);
}

/* A WAL write that fails (here: the file size limit) fails the commit with
 * IM_EIO, the batch is not visible, the segment keeps no partial record, and
 * after a restart exactly the acknowledged commits are there. Runs in a child
 * so the limit does not leak into the test process. */
static void test_wal_write_error(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        tsdb_t *db = tt_open(0, 0, 0);
        struct rlimit rl = {40000, 40000};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(10);
        const im_labels_t *ls = series_labels(0);
        int64_t ok = 0;
        im_rc rc = IM_OK;
        for (int64_t k = 0; k < 100000 && rc == IM_OK; k++) {
            tsdb_appender_t *a = tsdb_appender(db);
            for (int j = 0; j < 10; j++)
                if (tsdb_appender_add(a, 0, ls, (k * 10 + j) * STEP, (double)j, NULL) != IM_OK)
                    _exit(11);
            rc = tsdb_appender_commit(a, NULL);
            if (rc == IM_OK) ok++;
        }
        if (rc != IM_EIO) _exit(12);
        /* Sticky: the store refuses further commits, naming the first error. */
        tsdb_appender_t *a = tsdb_appender(db);
        if (tsdb_appender_add(a, 0, ls, (int64_t)1000000 * STEP, 1.0, NULL) != IM_OK) _exit(15);
        im_err_t e;
        if (tsdb_appender_commit(a, &e) != IM_EIO || !strstr(e.msg, "failed state") ||
            !strstr(e.msg, "File too large"))
            _exit(16);
        if (tsdb_sync(db, NULL) != IM_EIO || tsdb_maintain(db, NULL) != IM_EIO) _exit(17);
        tsdb_stats_t st;
        tsdb_get_stats(db, &st);
        if (st.head_samples != (uint64_t)ok * 10) _exit(13); /* failed batch invisible */
        im_labels_unref(ls);
        tsdb_close(db);
        rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
        setrlimit(RLIMIT_FSIZE, &rl); /* may fail unprivileged: then reopen in the parent */
        _exit(ok > 0 && ok < 100000 ? (int)(ok % 200) + 20 : 14);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    int code = WEXITSTATUS(status);
    if (code < 20) fail_msg("child failed with %d", code);
    tsdb_t *db = tt_open(0, 0, 0);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    /* The partial record was left as it was (never undone or retried) and the
     * reopen cut it as a torn tail of the last segment. */
    assert_int_equal(st.wal_corruptions, 1);
    assert_int_equal(st.head_samples % 10, 0);
    assert_int_equal((st.head_samples / 10) % 200, (uint64_t)(code - 20));
    tsdb_close(db);
}

/* One COMMIT record: series (id, labels) first seen, then samples of it. */
static void commit_record(im_buf_t *seg, uint32_t id, const char *job, int64_t t0, int n)
{
    im_buf_t r;
    im_buf_init(&r, 0);
    (void)im_buf_putc(&r, 1);
    tsdb__put_uvarint(&r, 1);
    tsdb__put_uvarint(&r, id);
    tsdb__put_uvarint(&r, 2);
    const char *kv[4] = {"__name__", "metric", "job", job};
    for (int i = 0; i < 4; i++) {
        tsdb__put_uvarint(&r, strlen(kv[i]));
        (void)im_buf_puts(&r, kv[i]);
    }
    tsdb__put_uvarint(&r, (uint64_t)n);
    tsdb__put_varint(&r, t0);
    for (int i = 0; i < n; i++) {
        tsdb__put_uvarint(&r, id);
        tsdb__put_varint(&r, i * STEP);
        uint8_t b[8];
        double v = (double)(t0 + i * STEP);
        uint64_t bits;
        memcpy(&bits, &v, 8);
        tsdb__put_u64(b, bits);
        (void)im_buf_append(&r, b, 8);
    }
    tsdb__wal_frame(seg, (const uint8_t *)r.data, r.len);
    im_buf_free(&r);
}

/* A crash after the head dropped a series but before the checkpoint replaced the
 * old segments leaves the same labels under two ids in the WAL: the replay
 * joins them (aliases) instead of losing the newer samples. */
static void test_wal_replay_alias(void **state)
{
    (void)state;
    char p[512];
    snprintf(p, sizeof p, "%s/wal", tt_dir);
    assert_int_equal(mkdir(p, 0755), 0);
    im_buf_t seg;
    im_buf_init(&seg, 0);
    (void)im_buf_append(&seg, "IMWAL\0\0\1", 8);
    commit_record(&seg, 1, "a", 0, 3);
    commit_record(&seg, 2, "b", 0, 3);
    commit_record(&seg, 7, "a", 10 * STEP, 3); /* job a again, new id */
    snprintf(p, sizeof p, "%s/wal/00000001", tt_dir);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(seg.data, 1, seg.len, f), seg.len);
    fclose(f);
    im_buf_free(&seg);
    tsdb_t *db = tt_open(0, 0, 0);
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    assert_int_equal(st.head_series, 2);
    assert_int_equal(st.head_samples, 9);
    assert_int_equal(st.wal_corruptions, 0);
    tsdb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_wal_replay, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_wal_torn_and_corrupt, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_blocks_compaction_retention, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_block, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_read_while_persisting, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_wal_write_error, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_wal_replay_alias, tt_setup, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
