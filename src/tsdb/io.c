/* io.c — the store's file-I/O wrappers and their fault points (contract in io.h).
 *
 * A fault is armed for one kind of call (op): the call whose count reaches nth
 * fails as the fault kind says, and with sticky every later one too. The check
 * is one relaxed load of `armed` when nothing is armed. */
#include "util/base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tsdb/io.h"

#define READ_CHUNK (1u << 20) /* bytes per read(2) of a file read whole */

static _Atomic bool armed;
static _Atomic int f_op;
static _Atomic uint64_t f_nth;
static _Atomic int f_kind;
static _Atomic bool f_sticky;
static _Atomic uint64_t calls[TSDB__IO_NOPS];
static _Atomic uint64_t nfaults;

static const char *const op_names[TSDB__IO_NOPS] = {
    "open", "write", "fsync", "rename", "dirsync", "read", "unlink", "truncate", "ropen",
};

const char *tsdb__io_op_name(tsdb__io_op_t op)
{
    return (unsigned)op < TSDB__IO_NOPS ? op_names[op] : "?";
}

void tsdb__io_fault_reset(void)
{
    atomic_store(&armed, false);
    for (int i = 0; i < TSDB__IO_NOPS; i++) atomic_store(&calls[i], 0);
    atomic_store(&nfaults, 0);
}

void tsdb__io_fault_arm(tsdb__io_op_t op, uint64_t nth, tsdb__io_fault_t kind, bool sticky)
{
    tsdb__io_fault_reset();
    atomic_store(&f_op, (int)op);
    atomic_store(&f_nth, nth);
    atomic_store(&f_kind, (int)kind);
    atomic_store(&f_sticky, sticky);
    atomic_store(&armed, true);
}

uint64_t tsdb__io_calls(tsdb__io_op_t op)
{
    return (unsigned)op < TSDB__IO_NOPS ? atomic_load(&calls[op]) : 0;
}

uint64_t tsdb__io_faults(void)
{
    return atomic_load(&nfaults);
}

/* Counts a call of op; returns true if it is to fail, with *kind set. */
static bool fault(tsdb__io_op_t op, tsdb__io_fault_t *kind)
{
    uint64_t n = atomic_fetch_add_explicit(&calls[op], 1, memory_order_relaxed) + 1;
    if (!atomic_load_explicit(&armed, memory_order_relaxed)) return false;
    if (atomic_load(&f_op) != (int)op) return false;
    uint64_t nth = atomic_load(&f_nth);
    if (n != nth && !(atomic_load(&f_sticky) && n > nth)) return false;
    *kind = (tsdb__io_fault_t)atomic_load(&f_kind);
    atomic_fetch_add(&nfaults, 1);
    return true;
}

static int fault_errno(tsdb__io_fault_t kind)
{
    return kind == TSDB__FAULT_EIO ? EIO : ENOSPC;
}

int tsdb__io_open_w(const char *path, int flags, mode_t mode)
{
    tsdb__io_fault_t k;
    if (fault(TSDB__IO_OPEN, &k)) {
        errno = fault_errno(k);
        return -1;
    }
    int fd;
    do fd = open(path, flags | O_CLOEXEC, mode);
    while (fd < 0 && errno == EINTR);
    return fd;
}

int tsdb__io_open_r(const char *path)
{
    tsdb__io_fault_t k;
    if (fault(TSDB__IO_ROPEN, &k)) {
        errno = EIO;
        return -1;
    }
    int fd;
    do fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    return fd;
}

im_rc tsdb__io_writev_all(int fd, struct iovec *iov, int iovcnt, size_t *done)
{
    size_t total = 0, wrote = 0;
    for (int i = 0; i < iovcnt; i++) total += iov[i].iov_len;
    if (done) *done = 0;
    tsdb__io_fault_t k;
    if (fault(TSDB__IO_WRITE, &k)) {
        if (k != TSDB__FAULT_SHORT || total < 2) {
            errno = fault_errno(k);
            return IM_EIO;
        }
        /* Write a prefix for real, then report the disk full. */
        size_t want = total / 2;
        for (int i = 0; i < iovcnt && want; i++) {
            size_t n = iov[i].iov_len < want ? iov[i].iov_len : want;
            size_t d = 0;
            while (d < n) {
                ssize_t r = write(fd, (const uint8_t *)iov[i].iov_base + d, n - d);
                if (r < 0 && errno == EINTR) continue;
                if (r <= 0) break;
                d += (size_t)r;
            }
            wrote += d;
            want -= n;
            if (d < n) break;
        }
        if (done) *done = wrote;
        errno = ENOSPC;
        return IM_EIO;
    }
    while (iovcnt > 0) {
        ssize_t r = writev(fd, iov, iovcnt > IOV_MAX ? IOV_MAX : iovcnt);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            if (done) *done = wrote;
            return IM_EIO;
        }
        if (r == 0) { /* no progress and no error: treat as a full disk */
            if (done) *done = wrote;
            errno = ENOSPC;
            return IM_EIO;
        }
        wrote += (size_t)r;
        size_t adv = (size_t)r;
        while (iovcnt > 0 && adv >= iov[0].iov_len) {
            adv -= iov[0].iov_len;
            iov++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            iov[0].iov_base = (uint8_t *)iov[0].iov_base + adv;
            iov[0].iov_len -= adv;
        }
    }
    if (done) *done = wrote;
    return IM_OK;
}

im_rc tsdb__io_write_all(int fd, const void *p, size_t n, size_t *done)
{
    struct iovec iov = {(void *)p, n};
    return tsdb__io_writev_all(fd, &iov, 1, done);
}

/* fsync and fdatasync share the fault point TSDB__IO_FSYNC. */
static im_rc sync_fd(int fd, int (*sync_fn)(int))
{
    tsdb__io_fault_t k;
    if (fault(TSDB__IO_FSYNC, &k)) {
        errno = fault_errno(k);
        return IM_EIO;
    }
    return sync_fn(fd) == 0 ? IM_OK : IM_EIO;
}

im_rc tsdb__io_fsync(int fd)
{
    return sync_fd(fd, fsync);
}

im_rc tsdb__io_fdatasync(int fd)
{
    return sync_fd(fd, fdatasync);
}

im_rc tsdb__io_rename(const char *from, const char *to)
{
    tsdb__io_fault_t k;
    if (fault(TSDB__IO_RENAME, &k)) {
        errno = fault_errno(k);
        return IM_EIO;
    }
    return rename(from, to) == 0 ? IM_OK : IM_EIO;
}

im_rc tsdb__io_fsync_dir(const char *dir)
{
    tsdb__io_fault_t k;
    if (fault(TSDB__IO_DIRSYNC, &k)) {
        errno = fault_errno(k);
        return IM_EIO;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return IM_EIO;
    int r = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return r == 0 ? IM_OK : IM_EIO;
}

im_rc tsdb__io_fsync_parent(const char *path)
{
    const char *sl = strrchr(path, '/');
    if (!sl) return tsdb__io_fsync_dir(".");
    size_t n = (size_t)(sl - path);
    char *d = im_malloc(n + 2);
    memcpy(d, path, n ? n : 1);
    d[n ? n : 1] = 0;
    im_rc rc = tsdb__io_fsync_dir(d);
    int e = errno;
    im_free(d);
    errno = e;
    return rc;
}

im_rc tsdb__io_read_file(const char *path, uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    int fd = tsdb__io_open_r(path);
    if (fd < 0) return IM_EIO;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return IM_EIO;
    }
    size_t n = (size_t)st.st_size, got = 0;
    uint8_t *b = im_malloc(n + 1);
    im_rc rc = IM_OK;
    while (got < n) {
        size_t want = n - got < READ_CHUNK ? n - got : READ_CHUNK;
        tsdb__io_fault_t k;
        ssize_t r;
        if (fault(TSDB__IO_READ, &k)) {
            if (k == TSDB__FAULT_SHORT) {
                do r = read(fd, b + got, want / 2);
                while (r < 0 && errno == EINTR);
                if (r > 0) got += (size_t)r;
                rc = IM_ESHORT;
            } else {
                errno = fault_errno(k);
                rc = IM_EIO;
            }
            break;
        }
        r = read(fd, b + got, want);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            rc = IM_EIO;
            break;
        }
        if (r == 0) {
            rc = IM_ESHORT;
            break;
        }
        got += (size_t)r;
    }
    int e = errno;
    close(fd);
    if (rc != IM_OK) {
        im_free(b);
        errno = rc == IM_ESHORT ? 0 : e;
        return rc;
    }
    b[n] = 0;
    *data = b;
    *len = n;
    return IM_OK;
}

im_rc tsdb__io_unlink(const char *path)
{
    tsdb__io_fault_t k;
    if (fault(TSDB__IO_UNLINK, &k)) {
        errno = fault_errno(k);
        return IM_EIO;
    }
    return unlink(path) == 0 || errno == ENOENT ? IM_OK : IM_EIO;
}

im_rc tsdb__io_truncate(const char *path, uint64_t len)
{
    tsdb__io_fault_t k;
    if (fault(TSDB__IO_TRUNCATE, &k)) {
        errno = fault_errno(k);
        return IM_EIO;
    }
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return IM_EIO;
    im_rc rc = ftruncate(fd, (off_t)len) == 0 && fsync(fd) == 0 ? IM_OK : IM_EIO;
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}
