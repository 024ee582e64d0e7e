/* limits.h — the one table of what the store holds: the caps of its formats
 * and the settings a user may lower below them, with the check every writer
 * and reader applies.
 *
 * Why one table. A series is written to three formats (the WAL commit record,
 * the WAL checkpoint, the block's symbol and series tables) and read back from
 * each. If the appender accepts something a reader rejects, the data is
 * acknowledged and then lost (a replay stops at the record, a block fails to
 * validate after it was written). So:
 *  1. The appender (head_append.c) checks every new series with
 *     tsdb_limits_check against the store's settings, which are never above
 *     the format caps (tsdb_open refuses settings above them).
 *  2. The block writer checks again against the format caps (a second line of
 *     defence: a series over a cap is refused before a byte of it is written).
 *  3. The WAL reader and the block reader use the format caps, never the user
 *     settings, so lowering a setting never makes stored data unreadable; a
 *     WAL series over a cap (written by an older version) is skipped with a
 *     warning, the rest of its record and of the WAL is kept.
 *
 *   format cap                 value    checked by
 *   TSDB_FMT_MAX_LABELS        4096     labels per series: appender, block writer,
 *                                       WAL replay, block reader
 *   TSDB_FMT_MAX_SERIES_BYTES  16 MiB   bytes of all names and values of one series
 *                                       (so one label name or value too): same
 *   TSDB_FMT_MAX_WAL_RECORD    64 MiB   one physical WAL record (wal.c writer and
 *                                       reader); a longer logical record (a huge
 *                                       commit) is fragmented by wal.c, and the
 *                                       checkpoint of one series is split into
 *                                       records of at most about
 *                                       TSDB_FMT_WAL_RECORD_TARGET (head_append.c)
 *
 *   setting (tsdb_limits_t)    default  flag of `infermon run`
 *   max_labels                 4096     --storage.tsdb.max-labels-per-series
 *   max_label_name_bytes       none     --storage.tsdb.max-label-name-bytes
 *   max_label_value_bytes      none     --storage.tsdb.max-label-value-bytes
 *   max_series_bytes           1 MiB    --storage.tsdb.max-series-bytes
 *   (max_future_ms, tsdb.h)    10m      --storage.tsdb.max-future
 * ("none": only the series' total bounds it.)
 *
 * A series at the caps needs at most 16 MiB + 4096 * 2 * 10 bytes of length
 * prefixes in a record, well below one WAL record. The old 4096-label reader
 * limit is unchanged, so every store an older version could read back is
 * read the same way (but for a series of over 16 MiB of labels, skipped). */
#ifndef IM_TSDB_LIMITS_H
#define IM_TSDB_LIMITS_H

#include "labels/labels.h"
#include "storage/storage.h"
#include "util/base.h"
#include "util/err.h"

#define TSDB_FMT_MAX_LABELS        STORAGE_FMT_MAX_LABELS
#define TSDB_FMT_MAX_SERIES_BYTES  (16u << 20)
#define TSDB_FMT_MAX_WAL_RECORD    (64u << 20)
#define TSDB_FMT_WAL_RECORD_TARGET (16u << 20)

#define TSDB_DEFAULT_MAX_SERIES_BYTES (1u << 20)
/* Default of tsdb_opts_t.max_future_ms: how far ahead of the wall clock a
 * sample may be (distributed stores call it the creation grace period). */
#define TSDB_DEFAULT_MAX_FUTURE_MS (10 * 60 * 1000)

/* The settings (tsdb_opts_t.limits). 0 = the default above; a value above the
 * format cap is an error at tsdb_open. */
typedef struct tsdb_limits {
    uint32_t max_labels;            /* labels per series */
    uint32_t max_label_name_bytes;  /* bytes of one label name */
    uint32_t max_label_value_bytes; /* bytes of one label value */
    uint32_t max_series_bytes;      /* bytes of all names and values */
} tsdb_limits_t;

/* The format caps as a limits value. */
tsdb_limits_t tsdb_limits_format(void);
/* Fills the zero fields of *l with the defaults; IM_EINVAL (and a sentence
 * naming the flag) when a field is above its cap. */
im_rc tsdb_limits_resolve(tsdb_limits_t *l, im_err_t *err);
/* IM_OK, or IM_ELIMIT with a sentence naming the series (its name and its
 * first labels), the limit, and the flag to change. l must be resolved. */
im_rc tsdb_limits_check(const tsdb_limits_t *l, const im_labels_t *ls, im_err_t *err);
/* The format caps on raw counts (readers, before building a label set). */
bool tsdb_limits_ok_raw(uint64_t nlabels, uint64_t total_bytes);

#endif
