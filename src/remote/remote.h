/* remote.h — the remote-write sender (Prometheus' storage/remote): contract.
 *
 * One queue per remote_write entry reads what it ships from the store's WAL
 * (tsdb.h, "WAL watcher"): series definitions get write_relabel_configs and the
 * external labels applied once; each commit's samples go to shards, a series
 * always to the same shard (hash of its labels modulo the shard count), so the
 * samples of one series are sent in WAL order. A shard sends a batch when it
 * holds max_samples_per_send samples or batch_send_deadline passed, as one
 * remote-write 1.0 request (protobuf WriteRequest, snappy block format, headers
 * Content-Encoding: snappy, Content-Type: application/x-protobuf, User-Agent,
 * X-Prometheus-Remote-Write-Version: 0.1.0, plus the configured ones).
 *
 * Delivery (at least once, order kept within a series):
 *  1. A 2xx acknowledges the batch. A 5xx, a 429 when retry_on_http_429, or a
 *     transport error (refused, reset, timeout after remote_timeout) is retried
 *     forever with exponential backoff min_backoff..max_backoff (Retry-After,
 *     when given, is the wait instead); any other status drops the batch and
 *     counts its samples in prometheus_remote_storage_samples_failed_total.
 *  2. Each shard has a position: the WAL position just after the last record
 *     all of whose samples for that shard are acknowledged or dropped, the
 *     count of its samples acknowledged after it (a batch may end inside a
 *     record) and the size of the batch in flight. They are saved in
 *     DIR/remote/<queue>.pos (overwritten in place, one write under a page)
 *     before each batch is sent and right after its 2xx; a restart, after a
 *     SIGKILL too, resumes each shard after its position with the same shard
 *     count, skips the counted samples and sends the batch that was in flight
 *     first and alone, so nothing acknowledged by the WAL is skipped, and what
 *     the receiver already holds is re-sent only for that batch (the counts
 *     need the same queue configuration; else the shard resends from the record
 *     boundary).
 *  3. The store keeps every WAL segment at or after the oldest position of any
 *     queue (remote_storage_wal_keep), unless that backlog exceeds
 *     max_wal_retention_bytes: then the oldest segments are given up (logged,
 *     their samples counted as dropped) so a dead receiver cannot fill the disk.
 *  4. Resharding (every 10 s, also while the reader waits on a full shard; from
 *     the WAL's input rate and backlog and the send time per sample, clamped to
 *     min_shards..max_shards) first drains every shard, so all positions are
 *     equal when the shard count changes.
 *
 * Threads: per queue one reader thread (WAL watcher, resharding, positions) and
 * one thread per shard (batching and sending). remote_storage_* calls come from
 * the daemon's main thread; the metrics and status writers from any thread. */
#ifndef IM_REMOTE_REMOTE_H
#define IM_REMOTE_REMOTE_H

#include "labels/labels.h"
#include "config/config.h"
#include "util/base.h"
#include "util/buf.h"
#include "util/err.h"

/* The configuration: cfg_remote_write_t (config/remote_write.h), decoded and
 * validated by the configuration loader. */
typedef cfg_remote_write_t remote_write_cfg_t;

/* ---- Wire format ---- */
typedef struct remote_series {
    const im_labels_t *labels; /* borrowed */
    const int64_t *t_ms;       /* borrowed, ascending */
    const double *v;
    size_t n;
} remote_series_t;
typedef struct remote_metadata {
    const char *family, *type, *help, *unit; /* borrowed; type as in the exposition */
} remote_metadata_t;
/* Appends a WriteRequest (protobuf, uncompressed) to out. */
void remote_encode_write_request(im_buf_t *out, const remote_series_t *s, size_t ns,
                                 const remote_metadata_t *md, size_t nmd);
/* Snappy block-compresses in into out (replacing its contents). */
im_rc remote_snappy(const im_buf_t *in, im_buf_t *out);

/* ---- The sender ---- */
typedef struct remote_storage remote_storage_t;

typedef void (*remote_metadata_fn)(void *ud, remote_metadata_t **out, size_t *n, void **keep);

typedef struct remote_opts {
    const char *storage_dir;         /* the store's directory (its WAL is read) */
    int64_t max_wal_retention_bytes; /* --storage.remote.max-wal-retention; 0 = 2 GiB */
    const char *user_agent;          /* borrowed */
    /* Metric metadata for metadata_config (NULL = none): fills *out (n entries)
     * and *keep, freed by metadata_free(ud, keep). */
    void (*metadata)(void *ud, remote_metadata_t **out, size_t *n, void **keep);
    void (*metadata_free)(void *ud, void *keep);
    void *metadata_ud;
} remote_opts_t;

remote_storage_t *remote_storage_new(const remote_opts_t *opts);
/* Sets opts.metadata_ud later (the scrape manager is made after the store);
 * before remote_storage_apply. */
void remote_storage_set_metadata_ud(remote_storage_t *rs, void *ud);
/* The tsdb_opts_t.wal_keep hook (ctx = the remote storage): the lowest WAL
 * segment a queue still needs, 0 = none. Safe before remote_storage_apply (it
 * reads the saved positions) and from any thread. */
uint32_t remote_storage_wal_keep(void *ctx);
/* Replaces the queues with cfg's remote_write entries (each queue is stopped,
 * its positions saved, and started again from them). global.external_labels are
 * added to every series that lacks the name, then write_relabel_configs run, as
 * Prometheus does. Takes a reference on cfg. */
void remote_storage_apply(remote_storage_t *rs, scrape_config_t *cfg);
/* Self-monitoring, Prometheus' names and labels (remote_name, url). */
void remote_storage_metrics(void *rs, im_buf_t *out);
/* The dashboard's view: a JSON array, one object per queue. */
void remote_storage_status_json(void *rs, im_buf_t *out);
/* True when every queue has sent everything the WAL held at the call. */
bool remote_storage_idle(remote_storage_t *rs);
/* Stops the queues (positions saved; unsent data stays in the WAL) and frees. */
void remote_storage_free(remote_storage_t *rs);

#endif
