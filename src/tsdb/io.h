/* io.h — private to src/tsdb: the one file-I/O layer of the store, with fault
 * points for tests.
 *
 * Every write, fsync, rename, directory fsync, read, unlink and truncate that the
 * WAL (wal.c), the block writer and reader (block.c) and the store (db.c) do goes
 * through these wrappers, so that
 *  - short writes and EINTR are handled in one place (a write is completed or
 *    fails; the caller never retries a partial write: it enters its sticky
 *    failed state, see wal.c and db.c);
 *  - a read tells an I/O error (IM_EIO) from a file shorter than it said it was
 *    (IM_ESHORT); only the caller's validator can say "corrupt" (IM_ECORRUPT);
 *  - tests can make the Nth call of a kind fail (tsdb__io_fault_arm).
 *
 * Fault points are compiled into every build and inert unless armed: an unarmed
 * call costs one relaxed atomic load. They are process-global (one store under
 * test at a time) and meant for single-threaded tests (no_background). Calls are
 * counted per kind whether armed or not (tsdb__io_calls), so a test can first
 * run a workload to learn how many calls of each kind it makes, then fail each
 * one in turn.
 *
 * Return values: the fd-returning calls return -1 with errno set; the others
 * return IM_OK or IM_EIO / IM_ESHORT with errno set (a faulted call sets errno to
 * the injected error), so callers can say strerror(errno) in their message. */
#ifndef IM_TSDB_IO_H
#define IM_TSDB_IO_H

#include "util/base.h"

#include <sys/types.h>
#include <sys/uio.h>

#include "util/err.h"

typedef enum tsdb__io_op {
    TSDB__IO_OPEN,     /* open(2) of a file for writing (create) */
    TSDB__IO_WRITE,    /* one write/writev of a whole buffer */
    TSDB__IO_FSYNC,    /* fsync/fdatasync of a file */
    TSDB__IO_RENAME,   /* rename(2) */
    TSDB__IO_DIRSYNC,  /* fsync of a directory */
    TSDB__IO_READ,     /* one read(2) call of a file being read whole */
    TSDB__IO_UNLINK,   /* unlink(2) */
    TSDB__IO_TRUNCATE, /* truncate of a file to a length */
    TSDB__IO_ROPEN,    /* open(2) of a file for reading */
    TSDB__IO_NOPS
} tsdb__io_op_t;

typedef enum tsdb__io_fault {
    TSDB__FAULT_EIO,    /* the call fails with EIO, nothing done */
    TSDB__FAULT_ENOSPC, /* the call fails with ENOSPC, nothing done */
    TSDB__FAULT_SHORT,  /* write: half the bytes are written, then ENOSPC;
                           read: half the bytes are returned, then end of file */
} tsdb__io_fault_t;

/* Test hook: makes the nth (1-based, counted from now) call of op fail as kind;
 * with sticky, that call and every later call of op fail. Replaces any armed
 * fault and resets the counters. */
void tsdb__io_fault_arm(tsdb__io_op_t op, uint64_t nth, tsdb__io_fault_t kind, bool sticky);
/* Disarms and resets the counters. */
void tsdb__io_fault_reset(void);
/* Calls of op since the last arm/reset; faults injected since then. */
uint64_t tsdb__io_calls(tsdb__io_op_t op);
uint64_t tsdb__io_faults(void);
const char *tsdb__io_op_name(tsdb__io_op_t op);

/* open(2) for writing (flags must include O_WRONLY or O_RDWR) / for reading. */
int tsdb__io_open_w(const char *path, int flags, mode_t mode);
int tsdb__io_open_r(const char *path);
/* Writes all of p[0..n) (or the iovecs) at the file offset, looping over short
 * writes and EINTR. *done (may be NULL) = bytes written, also on failure. */
im_rc tsdb__io_write_all(int fd, const void *p, size_t n, size_t *done);
im_rc tsdb__io_writev_all(int fd, struct iovec *iov, int iovcnt, size_t *done);
im_rc tsdb__io_fsync(int fd);
im_rc tsdb__io_fdatasync(int fd);
im_rc tsdb__io_rename(const char *from, const char *to);
/* fsync of the directory dir (makes creates, renames and unlinks in it durable). */
im_rc tsdb__io_fsync_dir(const char *dir);
/* fsync of the directory holding path. */
im_rc tsdb__io_fsync_parent(const char *path);
/* Reads the whole file: IM_OK with *data (owned by the caller, im_free; one spare
 * NUL byte after it) and *len; IM_EIO when open/fstat/read fails; IM_ESHORT when
 * the file ends before its size said (changed underneath, or a short read). */
im_rc tsdb__io_read_file(const char *path, uint8_t **data, size_t *len);
/* unlink(2); a missing file is not an error. */
im_rc tsdb__io_unlink(const char *path);
/* Truncates path to len and fsyncs it. */
im_rc tsdb__io_truncate(const char *path, uint64_t len);

#endif
