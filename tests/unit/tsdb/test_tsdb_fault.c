/* test_tsdb_fault.c — storage I/O faults (io.c fault points), SQLite style.
 *
 *  - test_fault_loop: a fixed workload (commits, syncs, maintenance persisting
 *    the head into blocks, compacting and checkpointing the WAL, a close and
 *    reopen in the middle, a final flush) is run once clean to count its I/O
 *    calls of each kind; then for every kind and k = 1..N it is run again with
 *    the k-th call of that kind failing (EIO, ENOSPC, a short write, a short
 *    read). After each run the store is reopened without faults and checked
 *    against the model (also the live store just before its close):
 *      - every acknowledged commit (commit returned IM_OK) is there, bit-exact;
 *      - the commit that hit the failure (its error is not the "failed state"
 *        refusal) may be there, but then whole (it may have reached the WAL
 *        before its fsync failed);
 *      - nothing else: no refused commit, no sample that was never written;
 *      - once a session has failed, no later commit of it is acknowledged;
 *      - no block is corrupt.
 *  - test_read_errors: an EIO, a short read or a failing open on a WAL segment
 *    (also in the middle of a segment larger than one read) refuses the open
 *    and changes no file; a real torn tail is cut.
 *  - test_fragments: a commit split into many WAL fragments replays whole; cut
 *    in the middle of its fragments (torn) or with a flipped byte in one, none
 *    of it is replayed and everything before it is intact.
 *  - test_big_commit: a commit whose WAL record is larger than 64 MiB is
 *    acknowledged and survives SIGKILL of the process. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tsdb/io.h"
#include "tsdb/tsdb.h"
#include "tsdb/tsdb_int.h"
#include "tsdb_test.h"
#include "util/log.h"

#define FNSER   6
#define FSTEP   1000
#define FK      60 /* commits in the workload */
#define FREOPEN 30 /* the workload closes and reopens the store before this commit */

enum { ST_NONE, ST_ACKED, ST_MAYBE, ST_REFUSED };

static char run_dir[512];

static tsdb_t *open_at(const char *dir, tsdb_fsync_policy_t pol, size_t seg, im_rc *rc,
                       im_err_t *err)
{
    tsdb_opts_t o = {0};
    o.dir = dir;
    o.no_background = true;
    o.block_range_ms = 10 * FSTEP;
    o.fsync = pol;
    o.wal_segment_bytes = seg;
    tsdb_t *db = NULL;
    *rc = tsdb_open(&o, &db, err);
    return db;
}

static const im_labels_t *flabels(int s)
{
    char b[16];
    snprintf(b, sizeof b, "%d", s);
    return im_labels_from_strs("__name__", "f", "s", b, NULL);
}

static double fvalue(int s, int64_t k)
{
    return s % 2 ? (double)(k * 31 + s) : (double)k / 4.0 - s;
}

/* Every query answer equals the model: see the file comment. */
static void check_store(tsdb_t *db, const uint8_t *st)
{
    uint8_t have[FK][FNSER];
    memset(have, 0, sizeof have);
    im_matcher_t *m;
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "__name__", 8, "f", 1, &m, NULL), IM_OK);
    tsdb_queryable_t *q = tsdb_queryable(db);
    tsdb_series_set_t *set;
    assert_int_equal(q->vt->select(q, INT64_MIN, INT64_MAX, &m, 1, NULL, &set, NULL), IM_OK);
    for (size_t i = 0; i < set->n; i++) {
        int s = (int)strtol(im_labels_get(set->series[i].labels, "s")->s, NULL, 10);
        assert_true(s >= 0 && s < FNSER);
        tsdb_iter_t *it = set->vt->iter(set, i);
        int64_t t, prev = INT64_MIN;
        double v;
        while (it->vt->next(it)) {
            it->vt->at(it, &t, &v);
            if (t <= prev) fail_msg("series %d: samples out of order at %lld", s, (long long)t);
            prev = t;
            int64_t k = t / FSTEP;
            if (t % FSTEP || k < 0 || k >= FK)
                fail_msg("series %d: foreign t %lld", s, (long long)t);
            if (tt_dbits(v) != tt_dbits(fvalue(s, k)))
                fail_msg("series %d: wrong value at commit %lld", s, (long long)k);
            have[k][s] = 1;
        }
        it->vt->free(it);
    }
    set->vt->free(set);
    q->vt->close(q);
    im_matcher_free(m);
    for (int k = 0; k < FK; k++) {
        int n = 0;
        for (int s = 0; s < FNSER; s++) n += have[k][s];
        if (st[k] == ST_ACKED && n != FNSER)
            fail_msg("acknowledged commit %d lost (%d of %d series)", k, n, FNSER);
        if (st[k] == ST_MAYBE && n != 0 && n != FNSER)
            fail_msg("failed commit %d half there (%d of %d series)", k, n, FNSER);
        if ((st[k] == ST_NONE || st[k] == ST_REFUSED) && n != 0)
            fail_msg("commit %d (state %d) never written, yet served", k, st[k]);
    }
}

/* The workload; st[k] gets what became of commit k. */
static void workload(tsdb_fsync_policy_t pol, uint8_t *st)
{
    memset(st, ST_NONE, FK);
    im_rc rc;
    im_err_t err;
    tsdb_t *db = open_at(run_dir, pol, 2048, &rc, &err);
    if (!db) return;
    const im_labels_t *ls[FNSER];
    for (int s = 0; s < FNSER; s++) ls[s] = flabels(s);
    bool failed = false; /* this session has seen a failed commit */
    for (int64_t k = 0; k < FK; k++) {
        if (k == FREOPEN) {
            tsdb_close(db);
            failed = false;
            db = open_at(run_dir, pol, 2048, &rc, &err);
            if (!db) break;
        }
        tsdb_appender_t *a = tsdb_appender(db);
        for (int s = 0; s < FNSER; s++)
            assert_int_equal(tsdb_appender_add(a, 0, ls[s], k * FSTEP, fvalue(s, k), NULL), IM_OK);
        im_err_clear(&err);
        rc = tsdb_appender_commit(a, &err);
        if (rc == IM_OK) {
            if (failed) fail_msg("commit %lld acknowledged after a failure", (long long)k);
            st[k] = ST_ACKED;
        } else {
            assert_int_equal(rc, IM_EIO);
            st[k] = strstr(err.msg, "failed state") ? ST_REFUSED : ST_MAYBE;
            failed = true;
        }
        if (k % 5 == 4 && tsdb_sync(db, NULL) != IM_OK) failed = true;
        if (k % 20 == 19 && tsdb_maintain(db, NULL) != IM_OK) failed = true;
    }
    if (db) {
        (void)tsdb_flush_head(db, NULL);
        check_store(db, st); /* the live store, as served right now */
        tsdb_close(db);
    }
    for (int s = 0; s < FNSER; s++) im_labels_unref(ls[s]);
}

/* Removes a store directory (two levels: DIR/wal, DIR/blocks). */
static void rm_rf(const char *d)
{
    DIR *dd = opendir(d);
    if (!dd) return;
    struct dirent *de;
    while ((de = readdir(dd))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", d, de->d_name);
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
            rm_rf(p);
        else
            assert_int_equal(unlink(p), 0);
    }
    closedir(dd);
    assert_int_equal(rmdir(d), 0);
}

typedef struct fault_case {
    tsdb__io_op_t op;
    tsdb__io_fault_t kind;
    tsdb_fsync_policy_t pol;
    bool sticky;    /* a dead disk: that call and every later one of the kind fail */
    uint64_t every; /* fail calls 1, 1 + every, ... (1: each one) */
} fault_case_t;

static void test_fault_loop(void **state)
{
    (void)state;
    static const fault_case_t cases[] = {
        {TSDB__IO_WRITE, TSDB__FAULT_EIO, TSDB_FSYNC_NEVER, false, 1},
        {TSDB__IO_WRITE, TSDB__FAULT_SHORT, TSDB_FSYNC_NEVER, false, 1},
        {TSDB__IO_WRITE, TSDB__FAULT_ENOSPC, TSDB_FSYNC_NEVER, true, 7},
        {TSDB__IO_FSYNC, TSDB__FAULT_EIO, TSDB_FSYNC_NEVER, false, 1},
        {TSDB__IO_FSYNC, TSDB__FAULT_EIO, TSDB_FSYNC_ALWAYS, false, 1},
        {TSDB__IO_FSYNC, TSDB__FAULT_EIO, TSDB_FSYNC_ALWAYS, true, 5},
        {TSDB__IO_RENAME, TSDB__FAULT_EIO, TSDB_FSYNC_NEVER, false, 1},
        {TSDB__IO_DIRSYNC, TSDB__FAULT_EIO, TSDB_FSYNC_NEVER, false, 1},
        {TSDB__IO_OPEN, TSDB__FAULT_ENOSPC, TSDB_FSYNC_NEVER, false, 1},
        {TSDB__IO_READ, TSDB__FAULT_EIO, TSDB_FSYNC_NEVER, false, 1},
        {TSDB__IO_READ, TSDB__FAULT_SHORT, TSDB_FSYNC_NEVER, false, 1},
        {TSDB__IO_ROPEN, TSDB__FAULT_EIO, TSDB_FSYNC_NEVER, false, 1},
        {TSDB__IO_UNLINK, TSDB__FAULT_EIO, TSDB_FSYNC_NEVER, false, 1},
    };
    int devnull = open("/dev/null", O_WRONLY);
    assert_true(devnull >= 0);
    im_log_set_fd(devnull);
    /* The faults are injected, so real fsyncs buy nothing here: on tmpfs they
     * are free (the loop makes thousands). */
    char base[300];
    snprintf(base, sizeof base, "/dev/shm/im-tsdb-fault-XXXXXX");
    if (!mkdtemp(base)) snprintf(base, sizeof base, "%s", tt_dir);
    uint8_t st[FK];
    int runs = 0, maybe_seen = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const fault_case_t *fc = &cases[c];
        snprintf(run_dir, sizeof run_dir, "%s/clean", base);
        tsdb__io_fault_reset();
        workload(fc->pol, st);
        uint64_t n = tsdb__io_calls(fc->op);
        for (int k = 0; k < FK; k++) assert_int_equal(st[k], ST_ACKED);
        rm_rf(run_dir);
        assert_true(n > 0);
        print_message("fault loop: %s %s%s (fsync %d): %llu calls\n", tsdb__io_op_name(fc->op),
                      fc->kind == TSDB__FAULT_SHORT ? "short"
                      : fc->kind == TSDB__FAULT_EIO ? "EIO"
                                                    : "ENOSPC",
                      fc->sticky ? " from then on" : "", (int)fc->pol, (unsigned long long)n);
        for (uint64_t k = 1; k <= n; k += fc->every) {
            snprintf(run_dir, sizeof run_dir, "%s/run", base);
            tsdb__io_fault_arm(fc->op, k, fc->kind, fc->sticky);
            workload(fc->pol, st);
            if (fc->sticky ? tsdb__io_faults() < 1 : tsdb__io_faults() != 1)
                fail_msg("%s fault %llu of %llu did not fire", tsdb__io_op_name(fc->op),
                         (unsigned long long)k, (unsigned long long)n);
            tsdb__io_fault_reset();
            im_rc rc;
            im_err_t err;
            tsdb_t *db = open_at(run_dir, fc->pol, 2048, &rc, &err);
            if (!db)
                fail_msg("%s fault %llu: clean reopen failed: %s", tsdb__io_op_name(fc->op),
                         (unsigned long long)k, err.msg);
            tsdb_stats_t sst;
            tsdb_get_stats(db, &sst);
            assert_int_equal(sst.blocks_corrupt, 0);
            check_store(db, st);
            for (int i = 0; i < FK; i++) maybe_seen += st[i] == ST_MAYBE;
            tsdb_close(db);
            rm_rf(run_dir);
            runs++;
        }
    }
    im_log_set_fd(2);
    close(devnull);
    if (strcmp(base, tt_dir) != 0) assert_int_equal(rmdir(base), 0);
    print_message("fault loop: %d runs, %d commits failed by the fault itself\n", runs, maybe_seen);
    assert_true(runs > 100);
}

/* ---- Read errors vs corruption ---- */

static void file_sizes(const char *dir, char names[][256], long *sizes, int *n)
{
    struct dirent **list;
    int cnt = scandir(dir, &list, NULL, alphasort);
    assert_true(cnt > 0);
    *n = 0;
    for (int i = 0; i < cnt; i++) {
        if (list[i]->d_name[0] != '.') {
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", dir, list[i]->d_name);
            struct stat sb;
            assert_int_equal(stat(p, &sb), 0);
            snprintf(names[*n], 256, "%s", list[i]->d_name);
            sizes[(*n)++] = (long)sb.st_size;
        }
        free(list[i]); /* checksrc: allow (scandir's allocation) */
    }
    free(list); /* checksrc: allow (scandir's allocation) */
}

/* Commits [k0, k1) of FNSER series with a 2 KiB label each (big records). */
static void ingest_wide(tsdb_t *db, int64_t k0, int64_t k1)
{
    for (int64_t k = k0; k < k1; k++) {
        tsdb_appender_t *a = tsdb_appender(db);
        for (int s = 0; s < FNSER; s++) {
            char pad[2100];
            memset(pad, 'a' + (int)(k % 26), 2048);
            snprintf(pad + 2048, 40, "-%lld-%d", (long long)k, s);
            char sb[16];
            snprintf(sb, sizeof sb, "%d", s);
            const im_labels_t *ls = im_labels_from_strs("__name__", "f", "s", sb, "pad", pad, NULL);
            assert_int_equal(tsdb_appender_add(a, 0, ls, k * FSTEP, fvalue(s, k), NULL), IM_OK);
            im_labels_unref(ls);
        }
        assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
    }
}

static uint64_t head_samples(tsdb_t *db)
{
    tsdb_stats_t s;
    tsdb_get_stats(db, &s);
    return s.head_samples;
}

static void expect_refused(const char *dir, size_t seg, tsdb__io_op_t op, uint64_t nth,
                           tsdb__io_fault_t kind, const char *want)
{
    char wal[600], names[64][256], names2[64][256];
    long sizes[64], sizes2[64];
    int n, n2;
    snprintf(wal, sizeof wal, "%s/wal", dir);
    file_sizes(wal, names, sizes, &n);
    tsdb__io_fault_arm(op, nth, kind, false);
    im_rc rc;
    im_err_t err;
    tsdb_t *db = open_at(dir, TSDB_FSYNC_NEVER, seg, &rc, &err);
    assert_int_equal(tsdb__io_faults(), 1);
    tsdb__io_fault_reset();
    assert_null(db);
    assert_int_equal(rc, IM_EIO);
    if (!strstr(err.msg, want) || !strstr(err.msg, "nothing was cut"))
        fail_msg("unexpected error: %s", err.msg);
    file_sizes(wal, names2, sizes2, &n2);
    assert_int_equal(n, n2);
    for (int i = 0; i < n; i++) {
        assert_string_equal(names[i], names2[i]);
        assert_int_equal(sizes[i], sizes2[i]);
    }
}

static void test_read_errors(void **state)
{
    (void)state;
    im_rc rc;
    im_err_t err;
    /* Three segments of a few records each. */
    tsdb_t *db = open_at(tt_dir, TSDB_FSYNC_NEVER, 40 << 10, &rc, &err);
    assert_non_null(db);
    ingest_wide(db, 0, 9);
    tsdb_close(db);
    expect_refused(tt_dir, 40 << 10, TSDB__IO_READ, 2, TSDB__FAULT_EIO, "Input/output error");
    expect_refused(tt_dir, 40 << 10, TSDB__IO_READ, 2, TSDB__FAULT_SHORT, "short read");
    expect_refused(tt_dir, 40 << 10, TSDB__IO_ROPEN, 3, TSDB__FAULT_EIO, "cannot read WAL segment");
    db = open_at(tt_dir, TSDB_FSYNC_NEVER, 40 << 10, &rc, &err);
    assert_non_null(db);
    assert_int_equal(head_samples(db), 9 * FNSER);
    tsdb_stats_t s;
    tsdb_get_stats(db, &s);
    assert_int_equal(s.wal_corruptions, 0);
    tsdb_close(db);
    /* One segment larger than a read (1 MiB): the EIO in its middle. */
    char big[300];
    snprintf(big, sizeof big, "%s/big", tt_dir);
    db = open_at(big, TSDB_FSYNC_NEVER, 8 << 20, &rc, &err);
    assert_non_null(db);
    ingest_wide(db, 0, 100);
    tsdb_close(db);
    char dirw[600], names[64][256];
    long sizes[64];
    int n;
    snprintf(dirw, sizeof dirw, "%s/wal", big);
    file_sizes(dirw, names, sizes, &n);
    assert_int_equal(n, 1);
    assert_true(sizes[0] > (1 << 20)); /* two reads */
    expect_refused(big, 8 << 20, TSDB__IO_READ, 2, TSDB__FAULT_EIO, "Input/output error");
    expect_refused(big, 8 << 20, TSDB__IO_READ, 2, TSDB__FAULT_SHORT, "short read");
    /* A real torn tail of the last segment is cut, the rest served. */
    char last[1000];
    snprintf(last, sizeof last, "%s/%s", dirw, names[0]);
    assert_int_equal(truncate(last, sizes[0] - 7), 0);
    db = open_at(big, TSDB_FSYNC_NEVER, 8 << 20, &rc, &err);
    assert_non_null(db);
    tsdb_get_stats(db, &s);
    assert_int_equal(s.wal_corruptions, 1);
    assert_int_equal(head_samples(db), 99 * FNSER);
    tsdb_close(db);
    struct stat sb;
    assert_int_equal(stat(last, &sb), 0);
    assert_true(sb.st_size < sizes[0] - 7); /* cut at the last good record */
}

/* ---- Fragments ---- */

static void commit_many(tsdb_t *db, int64_t k, int nser, const char *tag)
{
    tsdb_appender_t *a = tsdb_appender(db);
    for (int s = 0; s < nser; s++) {
        char sb[16];
        snprintf(sb, sizeof sb, "%d", s);
        const im_labels_t *ls = im_labels_from_strs("__name__", tag, "s", sb, NULL);
        assert_int_equal(tsdb_appender_add(a, 0, ls, k * FSTEP, (double)(k + s), NULL), IM_OK);
        im_labels_unref(ls);
    }
    assert_int_equal(tsdb_appender_commit(a, NULL), IM_OK);
}

static uint64_t count_metric(tsdb_t *db, const char *name)
{
    im_matcher_t *m;
    assert_int_equal(im_matcher_new(IM_MATCH_EQ, "__name__", 8, name, strlen(name), &m, NULL),
                     IM_OK);
    tsdb_queryable_t *q = tsdb_queryable(db);
    tsdb_series_set_t *set;
    assert_int_equal(q->vt->select(q, INT64_MIN, INT64_MAX, &m, 1, NULL, &set, NULL), IM_OK);
    uint64_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        tsdb_iter_t *it = set->vt->iter(set, i);
        while (it->vt->next(it)) n++;
        it->vt->free(it);
    }
    set->vt->free(set);
    q->vt->close(q);
    im_matcher_free(m);
    return n;
}

static void test_fragments(void **state)
{
    (void)state;
    im_rc rc;
    im_err_t err;
    tsdb__wal_set_frag_bytes(512);
    tsdb_t *db = open_at(tt_dir, TSDB_FSYNC_NEVER, 16 << 20, &rc, &err);
    assert_non_null(db);
    commit_many(db, 1, 3, "small");  /* one physical record */
    commit_many(db, 2, 2000, "big"); /* ~40 KiB: about 80 fragments */
    tsdb_close(db);
    char dirw[600], names[64][256], seg[1000];
    long sizes[64];
    int n;
    snprintf(dirw, sizeof dirw, "%s/wal", tt_dir);
    file_sizes(dirw, names, sizes, &n);
    assert_int_equal(n, 1);
    snprintf(seg, sizeof seg, "%s/%s", dirw, names[0]);
    /* Whole: both replayed. */
    char copy[2100];
    snprintf(copy, sizeof copy, "cp %s %s.orig", seg, seg);
    assert_int_equal(system(copy), 0);
    db = open_at(tt_dir, TSDB_FSYNC_NEVER, 16 << 20, &rc, &err);
    assert_non_null(db);
    assert_int_equal(count_metric(db, "small"), 3);
    assert_int_equal(count_metric(db, "big"), 2000);
    tsdb_close(db);
    /* Torn in the middle of the fragments: none of it, the earlier commit intact. */
    for (int round = 0; round < 2; round++) {
        snprintf(copy, sizeof copy, "cp %s.orig %s", seg, seg);
        assert_int_equal(system(copy), 0);
        long sz = sizes[0];
        if (round == 0) {
            assert_int_equal(truncate(seg, sz / 2), 0);
        } else {
            int fd = open(seg, O_RDWR);
            assert_true(fd >= 0);
            uint8_t b;
            assert_int_equal(pread(fd, &b, 1, sz * 2 / 3), 1);
            b ^= 0x21;
            assert_int_equal(pwrite(fd, &b, 1, sz * 2 / 3), 1);
            close(fd);
        }
        /* Only the segment: the newest (empty) ones from the reopen above go. */
        DIR *d = opendir(dirw);
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.' || strcmp(de->d_name, names[0]) == 0 ||
                strstr(de->d_name, ".orig"))
                continue;
            char p[1200];
            snprintf(p, sizeof p, "%s/%s", dirw, de->d_name);
            unlink(p);
        }
        closedir(d);
        db = open_at(tt_dir, TSDB_FSYNC_NEVER, 16 << 20, &rc, &err);
        assert_non_null(db);
        tsdb_stats_t s;
        tsdb_get_stats(db, &s);
        assert_int_equal(s.wal_corruptions, 1);
        assert_int_equal(count_metric(db, "small"), 3);
        assert_int_equal(count_metric(db, "big"), 0);
        /* The store goes on: a new big commit after the cut replays. */
        commit_many(db, 3, 2000, "big");
        tsdb_close(db);
        db = open_at(tt_dir, TSDB_FSYNC_NEVER, 16 << 20, &rc, &err);
        assert_non_null(db);
        assert_int_equal(count_metric(db, "big"), 2000);
        assert_int_equal(count_metric(db, "small"), 3);
        tsdb_close(db);
    }
    tsdb__wal_set_frag_bytes(0);
}

/* ---- A commit larger than 64 MiB ---- */

#define BIG_NSER 66000
#define BIG_PAD  1024

static void test_big_commit(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        im_rc rc;
        im_err_t err;
        tsdb_t *db = open_at(tt_dir, TSDB_FSYNC_NEVER, 0, &rc, &err);
        if (!db) _exit(2);
        tsdb_appender_t *a = tsdb_appender(db);
        char *pad = im_malloc(BIG_PAD + 32);
        memset(pad, 'p', BIG_PAD);
        for (int s = 0; s < BIG_NSER; s++) {
            snprintf(pad + BIG_PAD, 32, "%d", s);
            const im_labels_t *ls = im_labels_from_strs("__name__", "big", "pad", pad, NULL);
            if (tsdb_appender_add(a, 0, ls, 5000, (double)s, NULL) != IM_OK) _exit(3);
            im_labels_unref(ls);
        }
        if (tsdb_appender_commit(a, &err) != IM_OK) {
            fprintf(stderr, "commit: %s\n", err.msg);
            _exit(4);
        }
        char ok = 1;
        if (write(p[1], &ok, 1) != 1) _exit(5);
        pause(); /* SIGKILLed here, no close */
        _exit(6);
    }
    close(p[1]);
    char ok = 0;
    ssize_t r = read(p[0], &ok, 1);
    close(p[0]);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    if (r != 1) fail_msg("child did not acknowledge the commit (status %d)", status);
    assert_true(WIFSIGNALED(status));
    char dirw[600], names[64][256];
    long sizes[64];
    int n;
    snprintf(dirw, sizeof dirw, "%s/wal", tt_dir);
    file_sizes(dirw, names, sizes, &n);
    assert_true(sizes[n - 1] > (64L << 20)); /* the record is over the old cap */
    im_rc rc;
    im_err_t err;
    tsdb_t *db = open_at(tt_dir, TSDB_FSYNC_NEVER, 0, &rc, &err);
    assert_non_null(db);
    tsdb_stats_t s;
    tsdb_get_stats(db, &s);
    assert_int_equal(s.wal_corruptions, 0);
    assert_int_equal(s.head_series, BIG_NSER);
    assert_int_equal(s.head_samples, BIG_NSER);
    tsdb_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fault_loop, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_read_errors, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_fragments, tt_setup, tt_teardown),
        cmocka_unit_test_setup_teardown(test_big_commit, tt_setup, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
