/* queue.c — remote-write queues: a WAL watcher per queue feeding shards, each
 * shard batching and sending its series in order, positions persisted per
 * shard, dynamic resharding, and the self-monitoring (remote.h has the
 * contract and the delivery rules).
 *
 * Shard ring entries are samples (ls != NULL) or markers (ls == NULL): after
 * each WAL record the reader appends a marker holding the record's end position
 * to every shard (or moves that shard's last marker forward when nothing came
 * after it). A batch that took a marker acknowledges that position for its shard
 * once it is sent or dropped: every sample of the shard before the marker is in
 * that batch or an earlier one.
 *
 * Locks: rs->mu (the queue list) > q->pos_mu (positions and the file) >
 * sh->mu (one shard's ring). The reader waits on a shard's cv for space. */
#include "util/base.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "remote/remote.h"
#include "tsdb/tsdb.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/timeutil.h"

#define RESHARD_EVERY_MS 10000
#define POLL_MS          50
#define RESP_MAX         4096
#define DEFAULT_MAX_WAL  (2LL << 30)

static const double batch_buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                       2.5,   5,    10,    25,   60,  120,  300};
#define NBUCKETS (sizeof batch_buckets / sizeof batch_buckets[0])

typedef struct rq_ent {
    const im_labels_t *ls; /* borrowed from the queue's series table; NULL = marker */
    int64_t t;             /* sample time, or the marker's segment */
    union {
        double v;
        uint64_t off; /* marker's offset */
    } u;
} rq_ent_t;

typedef struct queue queue_t;

typedef struct shard {
    queue_t *q;
    size_t idx;
    pthread_t th;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;  /* data for the shard, or stop */
    pthread_cond_t spc; /* space for the reader */
    rq_ent_t *ring;     /* owned, cap entries */
    size_t cap, head, n, nsamples;
    int64_t first_ns;    /* when the oldest unsent sample came in */
    bool stop, busy;     /* busy: a batch is being sent */
    tsdb_wal_pos_t pos;  /* acknowledged position (under q->pos_mu) */
    tsdb_wal_pos_t skip; /* resume: samples of records ending at or before it were sent */
    /* Saved with pos (under q->pos_mu): samples acknowledged after pos (a batch
     * that ended inside a record), and the samples of the batch being sent. */
    uint64_t acked_n, inflight_n;
    uint64_t skip_n;    /* reader, at resume: samples after skip acknowledged before */
    uint64_t first_max; /* shard, at resume: the batch in flight at the stop, sent alone */
    CURL *easy;
    cfg_http_lists_t lists; /* the handle's headers (NULL = not set up), server_name */
    im_buf_t raw, comp, resp;
    char errbuf[CURL_ERROR_SIZE];
    int64_t retry_after_ms;
} shard_t;

struct remote_storage;

/* Resharding's smoothed rates (reader thread). */
typedef struct rate {
    uint64_t last_in, last_out;
    uint64_t last_ns;
    double in, out, ns_per_sample, last_pending;
    bool init;
} rate_t;

struct queue {
    struct remote_storage *rs;
    const cfg_remote_write_t *cfg; /* borrowed from rs->cfg */
    const im_labels_t *ext;        /* borrowed from rs->cfg */
    cfg_queue_t qc;                /* cfg->queue with values the sender can use */
    char name[64];                 /* remote_name: cfg->name, else a hash of the entry */
    char posfile[4200];
    uint64_t cfg_hash; /* of the entry and the external labels: a saved skip count holds for it */
    int posfd;         /* the positions file, open for in-place saves; -1 = none */
    size_t pos_nsh;    /* shard count the file was laid out for */
    im_buf_t posbuf;   /* (under pos_mu) */
    char *url;         /* owned: cfg->url with a password replaced by xxxxx (labels, logs) */
    pthread_t th;
    bool started;
    _Atomic bool stop;
    /* series table: by WAL id; DROPPED when write_relabel dropped it */
    const im_labels_t **ser;
    size_t capser;
    const im_labels_t **grave; /* replaced definitions, freed at the end */
    size_t ngrave, capgrave;
    /* shards */
    shard_t **sh;
    size_t nsh;
    pthread_mutex_t pos_mu;
    tsdb_wal_pos_t oldest; /* min shard position (under pos_mu), for wal_keep */
    bool have_oldest;
    bool pos_dirty;       /* a position moved since the last save (under pos_mu) */
    int64_t pos_saved_ns; /* when the file was last written (under pos_mu) */
    tsdb_wal_watcher_t *w;
    /* reader thread only: WAL bytes and samples read (same-segment records) */
    tsdb_wal_pos_t last_end;
    uint64_t read_bytes, read_samples;
    rate_t rate;
    int64_t last_reshard_ms;
    /* metrics */
    _Atomic uint64_t samples_total, samples_failed, samples_retried, samples_dropped;
    _Atomic uint64_t enqueue_retries, bytes_total, md_total, md_failed, md_retried, md_bytes;
    _Atomic uint64_t samples_in, rec_samples, rec_series, decode_failures, batches_ok;
    _Atomic uint64_t send_ns_total;
    _Atomic int64_t highest_sent_ms, highest_in_ms, last_ok_ms, last_err_ms;
    _Atomic uint64_t hist[NBUCKETS + 1];
    _Atomic uint64_t hist_count, hist_sum_ns;
    _Atomic int64_t desired;
    _Atomic uint64_t cur_seg;
    pthread_mutex_t err_mu;
    char last_err[256];
};

#define DROPPED ((const im_labels_t *)1)

struct remote_storage {
    remote_opts_t opts;
    char *dir;
    pthread_mutex_t mu;
    scrape_config_t *cfg;
    queue_t **q;
    size_t nq;
    uint32_t giveup_below; /* segments below were given up (max retention) */
    _Atomic int64_t highest_in_ms;
    _Atomic uint64_t samples_in;
};

static int64_t now_ms(void)
{
    return im_now_ms();
}

/* ---- Positions file ---- */

/* Format: "infermon-remote-positions 2\n<nshards> <config hash>\n" then per
 * shard "<seg> <off> <acked> <inflight>", each line padded with spaces to a
 * fixed width, so the file has one size for a shard count (version 1, read too,
 * has "<seg> <off>" lines and no hash). A new shard count (or the first save)
 * writes .tmp and renames it; every later save overwrites the file in place
 * with one pwrite of less than a page (a SIGKILL cannot tear it: the kernel
 * finishes a one-page write it started, so the file holds the old or the new
 * positions). Larger files (more than ~70 shards) always take the rename. */
static void pos_save_locked(queue_t *q)
{
    im_buf_t *b = &q->posbuf;
    im_buf_reset(b);
    (void)im_buf_printf(b, "infermon-remote-positions 2\n%zu %016llx\n", q->nsh,
                        (unsigned long long)q->cfg_hash);
    tsdb_wal_pos_t mn = {0, 0};
    for (size_t i = 0; i < q->nsh; i++) {
        const shard_t *sh = q->sh[i];
        (void)im_buf_printf(b, "%-10u %-20llu %-10llu %-10llu\n", sh->pos.seg,
                            (unsigned long long)sh->pos.off, (unsigned long long)sh->acked_n,
                            (unsigned long long)sh->inflight_n);
        if (i == 0 || tsdb_wal_pos_cmp(sh->pos, mn) < 0) mn = sh->pos;
    }
    bool ok;
    if (q->posfd >= 0 && q->pos_nsh == q->nsh && b->len < 4096) {
        ok = pwrite(q->posfd, b->data, b->len, 0) == (ssize_t)b->len;
    } else {
        char tmp[4300];
        snprintf(tmp, sizeof tmp, "%s.tmp", q->posfile);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ok = fd >= 0 && write(fd, b->data, b->len) == (ssize_t)b->len;
        if (fd >= 0) ok = close(fd) == 0 && ok;
        ok = ok && rename(tmp, q->posfile) == 0;
        if (q->posfd >= 0) close(q->posfd);
        q->posfd = ok ? open(q->posfile, O_WRONLY | O_CLOEXEC) : -1;
        q->pos_nsh = q->nsh;
    }
    if (!ok)
        IM_ERROR("cannot write the remote-write position file", "file=%s err=%s",
                 im_logq(q->posfile), im_logq(strerror(errno)));
    q->oldest = mn;
    q->have_oldest = true;
    q->pos_dirty = false;
    q->pos_saved_ns = im_mono_ns();
}

/* Saves now when samples were acknowledged (delivery 2: before the shard's next
 * batch); a move over records without samples for the shard is saved within
 * POS_LAZY_MS (resending nothing if lost). Caller holds pos_mu. */
#define POS_LAZY_MS 200
static void pos_maybe_save_locked(queue_t *q, bool acked_samples)
{
    q->pos_dirty = true;
    if (acked_samples || im_mono_ns() - q->pos_saved_ns >= (int64_t)POS_LAZY_MS * 1000000)
        pos_save_locked(q);
}

typedef struct pos_rec {
    tsdb_wal_pos_t p;
    uint64_t acked, inflight;
} pos_rec_t;

/* Reads the saved positions (*hash: the queue configuration's, 0 for version
 * 1); false when there are none. */
static bool pos_load(const char *path, pos_rec_t **out, size_t *n, uint64_t *hash)
{
    FILE *f = fopen(path, "r");
    if (!f) return false;
    char magic[64];
    unsigned ver;
    size_t ns;
    unsigned long long h = 0;
    bool ok = fscanf(f, "%63s %u %zu", magic, &ver, &ns) == 3 &&
              !strcmp(magic, "infermon-remote-positions") && (ver == 1 || ver == 2) && ns > 0 &&
              ns < 100000;
    if (ok && ver == 2) ok = fscanf(f, "%llx", &h) == 1;
    pos_rec_t *p = ok ? im_calloc(ns, sizeof *p) : NULL;
    for (size_t i = 0; ok && i < ns; i++) {
        unsigned seg;
        unsigned long long off, acked = 0, inflight = 0;
        if (fscanf(f, "%u %llu", &seg, &off) != 2 ||
            (ver == 2 && fscanf(f, "%llu %llu", &acked, &inflight) != 2))
            ok = false;
        else
            p[i] = (pos_rec_t){{seg, off}, acked, inflight};
    }
    fclose(f);
    if (!ok) {
        im_free(p);
        IM_WARN("remote-write position file unreadable; the queue starts at the WAL's end",
                "file=%s", im_logq(path));
        return false;
    }
    *out = p;
    *n = ns;
    *hash = h;
    return true;
}

/* ---- Series ---- */

static void on_series(void *ctx, uint32_t id, const im_labels_t *ls)
{
    queue_t *q = ctx;
    atomic_fetch_add(&q->rec_series, 1);
    if (id >= q->capser) {
        size_t nc = q->capser ? q->capser : 1024;
        while (nc <= id) nc *= 2;
        q->ser = im_realloc(q->ser, nc * sizeof *q->ser);
        memset(q->ser + q->capser, 0, (nc - q->capser) * sizeof *q->ser);
        q->capser = nc;
    }
    im_labels_builder_t lb;
    im_lb_init(&lb);
    im_lb_load(&lb, ls);
    const im_labels_t *ext = q->ext;
    for (uint32_t i = 0; ext && i < ext->n; i++)
        if (!im_labels_get_istr(ls, ext->l[i].name))
            im_lb_set_istr(&lb, ext->l[i].name, ext->l[i].value);
    const im_labels_t *out = DROPPED;
    if (labels_relabel_process(q->cfg->write_relabel, q->cfg->nwrite_relabel, &lb)) {
        out = im_lb_build(&lb);
        if (out->n == 0) {
            im_labels_unref(out);
            out = DROPPED;
        }
    }
    im_lb_free(&lb);
    const im_labels_t *old = q->ser[id];
    if (old && old != DROPPED) {
        /* Entries in the rings may still point at it: freed at the end. */
        if (q->ngrave == q->capgrave) {
            q->capgrave = q->capgrave ? q->capgrave * 2 : 64;
            q->grave = im_realloc(q->grave, q->capgrave * sizeof *q->grave);
        }
        q->grave[q->ngrave++] = old;
    }
    q->ser[id] = out;
}

static void on_gap(void *ctx, uint32_t from, uint32_t to)
{
    queue_t *q = ctx;
    IM_WARN("remote-write queue lost WAL segments it had not sent (deleted past "
            "--storage.remote.max-wal-retention, or by hand)",
            "remote_name=%s from=%u to=%u", im_logq(q->name), from, to);
}

/* ---- Shards ---- */

static shard_t *shard_new(queue_t *q, size_t idx, tsdb_wal_pos_t pos)
{
    shard_t *s = im_calloc(1, sizeof *s);
    s->q = q;
    s->idx = idx;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_cond_init(&s->spc, NULL);
    s->cap = (size_t)q->qc.capacity + 1; /* +1: a marker always fits */
    s->ring = im_malloc(s->cap * sizeof *s->ring);
    s->pos = s->skip = pos;
    im_buf_init(&s->raw, 0);
    im_buf_init(&s->comp, 0);
    im_buf_init(&s->resp, 0);
    return s;
}

static void shard_free(shard_t *s)
{
    if (s->easy) curl_easy_cleanup(s->easy);
    cfg_http_lists_free(&s->lists);
    im_buf_free(&s->raw);
    im_buf_free(&s->comp);
    im_buf_free(&s->resp);
    im_free(s->ring);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    pthread_cond_destroy(&s->spc);
    im_free(s);
}

static void abs_after(struct timespec *ts, int64_t ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    int64_t ns = ts->tv_nsec + (ms % 1000) * 1000000LL;
    ts->tv_sec += ms / 1000 + ns / 1000000000LL;
    ts->tv_nsec = ns % 1000000000LL;
}

static size_t on_resp(char *p, size_t sz, size_t nm, void *ud)
{
    shard_t *s = ud;
    size_t n = sz * nm;
    if (s->resp.len < RESP_MAX) (void)im_buf_append(&s->resp, p, n < RESP_MAX ? n : RESP_MAX);
    return n;
}

static size_t on_header(char *p, size_t sz, size_t nm, void *ud)
{
    shard_t *s = ud;
    size_t n = sz * nm;
    if (n > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
        char v[64];
        size_t l = n - 12 < sizeof v - 1 ? n - 12 : sizeof v - 1;
        memcpy(v, p + 12, l);
        v[l] = 0;
        char *e;
        long secs = strtol(v, &e, 10);
        if (e != v && secs >= 0) {
            s->retry_after_ms = secs * 1000;
        } else {
            /* An HTTP date. */
            struct tm tm;
            memset(&tm, 0, sizeof tm);
            const char *q = v;
            while (*q == ' ') q++;
            if (strptime(q, "%a, %d %b %Y %H:%M:%S GMT", &tm)) {
                int64_t at = (int64_t)timegm(&tm) * 1000;
                s->retry_after_ms = at > now_ms() ? at - now_ms() : 0;
            }
        }
    }
    return n;
}

static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)a, (void)b, (void)c, (void)d;
    shard_t *s = ud;
    return atomic_load(&s->q->stop) || s->stop;
}

static void set_err(queue_t *q, const char *fmt, ...) IM_PRINTF(2, 3);
static void set_err(queue_t *q, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&q->err_mu);
    vsnprintf(q->last_err, sizeof q->last_err, fmt, ap);
    pthread_mutex_unlock(&q->err_mu);
    va_end(ap);
    atomic_store(&q->last_err_ms, now_ms());
}

/* Sets s->easy up for the next requests (s->lists rebuilt). */
static void setup_curl(shard_t *s)
{
    const cfg_remote_write_t *c = s->q->cfg;
    cfg_http_lists_free(&s->lists);
    struct curl_slist *h = NULL;
    h = curl_slist_append(h, "Content-Encoding: snappy");
    h = curl_slist_append(h, "Content-Type: application/x-protobuf");
    h = curl_slist_append(h, "X-Prometheus-Remote-Write-Version: 0.1.0");
    h = curl_slist_append(h, "Expect:");
    im_buf_t hb;
    im_buf_init(&hb, 0);
    for (size_t i = 0; i < c->nheaders; i++) {
        im_buf_reset(&hb);
        (void)im_buf_printf(&hb, "%s: %s", c->header_names[i], c->header_values[i]);
        h = curl_slist_append(h, hb.data);
    }
    im_buf_free(&hb);
    s->lists.hdrs = h;
    im_err_t err;
    im_err_clear(&err);
    if (cfg_http_client_handle(&c->http, &s->easy, c->url, on_resp, s, s->errbuf, &s->lists,
                               &err) != IM_OK)
        IM_WARN("remote write: HTTP client setup failed", "remote_name=%s err=%s",
                im_logq(s->q->name), im_logq(err.msg));
    CURL *e = s->easy;
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, s);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, s);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)c->remote_timeout_ms);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_USERAGENT, s->q->rs->opts.user_agent);
}

static void observe(queue_t *q, int64_t ns)
{
    double secs = (double)ns / 1e9;
    size_t b = 0;
    while (b < NBUCKETS && secs > batch_buckets[b]) b++;
    atomic_fetch_add(&q->hist[b], 1);
    atomic_fetch_add(&q->hist_count, 1);
    atomic_fetch_add(&q->hist_sum_ns, (uint64_t)ns);
}

typedef enum send_result { SENT, DROP, RETRY } send_result_t;

/* One attempt: the request in s->comp. */
static send_result_t attempt(shard_t *s, size_t nsamples, bool metadata)
{
    queue_t *q = s->q;
    im_buf_reset(&s->resp);
    s->errbuf[0] = 0;
    s->retry_after_ms = -1;
    /* The handle is set up once per shard (the connection is kept); again
     * before every request when a secret file must be re-read (rotation). */
    const cfg_http_client_t *hc = &q->cfg->http;
    if (!s->lists.hdrs || hc->basic_pass_file || hc->auth_cred_file) setup_curl(s);
    curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, s->comp.data);
    curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)s->comp.len);
    int64_t t0 = im_mono_ns();
    CURLcode cc = curl_easy_perform(s->easy);
    int64_t dt = im_mono_ns() - t0;
    long code = 0;
    curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
    if (metadata) {
        atomic_fetch_add(&q->md_total, nsamples);
        atomic_fetch_add(&q->md_bytes, s->comp.len);
    } else {
        atomic_fetch_add(&q->samples_total, nsamples);
        atomic_fetch_add(&q->bytes_total, s->comp.len);
        observe(q, dt);
        atomic_fetch_add(&q->send_ns_total, (uint64_t)dt);
    }
    if (cc == CURLE_OK && code / 100 == 2) {
        atomic_store(&q->last_ok_ms, now_ms());
        return SENT;
    }
    if (cc != CURLE_OK) {
        if (cc == CURLE_ABORTED_BY_CALLBACK) return RETRY;
        set_err(q, "%s", s->errbuf[0] ? s->errbuf : curl_easy_strerror(cc));
        return RETRY;
    }
    /* Trim the answer for the log. */
    char body[256];
    size_t bl = s->resp.len < sizeof body - 1 ? s->resp.len : sizeof body - 1;
    memcpy(body, s->resp.data ? s->resp.data : "", bl);
    body[bl] = 0;
    for (size_t i = 0; i < bl; i++)
        if (body[i] == '\n' || body[i] == '\r') body[i] = ' ';
    set_err(q, "server returned HTTP status %ld: %s", code, body);
    if (code / 100 == 5 || (code == 429 && q->qc.retry_on_http_429)) return RETRY;
    IM_ERROR("non-recoverable error sending to remote storage; batch dropped",
             "remote_name=%s "
             "url=%s count=%zu status=%ld err=%s",
             im_logq(q->name), im_logq(q->url), nsamples, code, im_logq(body));
    return DROP;
}

/* Sends s->comp until acknowledged or dropped; false when stopped first. */
static bool send_with_backoff(shard_t *s, size_t nsamples, bool metadata)
{
    queue_t *q = s->q;
    int64_t backoff = q->qc.min_backoff_ms;
    for (;;) {
        send_result_t r = attempt(s, nsamples, metadata);
        if (r == SENT) return true;
        if (r == DROP) {
            atomic_fetch_add(metadata ? &q->md_failed : &q->samples_failed, nsamples);
            return true;
        }
        if (atomic_load(&q->stop) || s->stop) return false;
        atomic_fetch_add(metadata ? &q->md_retried : &q->samples_retried, nsamples);
        int64_t wait = s->retry_after_ms >= 0 ? s->retry_after_ms : backoff;
        backoff = backoff * 2 > q->qc.max_backoff_ms ? q->qc.max_backoff_ms : backoff * 2;
        int64_t until = im_mono_ns() + wait * 1000000;
        while (im_mono_ns() < until) {
            if (atomic_load(&q->stop) || s->stop) return false;
            int64_t left = (until - im_mono_ns()) / 1000000;
            struct timespec ts = {0, (left > 50 ? 50 : left < 1 ? 1 : left) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
}

/* One batch's samples (in ring order) grouped into one TimeSeries per series,
 * the groups in order of first appearance and each series' samples in order
 * (so its labels are encoded, compressed and stored once per request). */
typedef struct batch {
    const im_labels_t **ls; /* per sample */
    int64_t *et, *t;        /* per sample: in ring order, grouped */
    double *ev, *v;
    size_t *start; /* per group: its first sample in t/v */
    remote_series_t *series;
    uint32_t *grp, *ht; /* group of each sample; hash table of group index + 1 */
    size_t hcap;
    void *mem; /* owned: one block holding every array */
} batch_t;

static void batch_init(batch_t *b, size_t maxn)
{
    for (b->hcap = 16; b->hcap < 2 * maxn; b->hcap *= 2) {
    }
    /* (8-byte members first, then the 4-byte ones: every array stays aligned) */
    size_t sz = maxn * (sizeof *b->ls + 2 * sizeof *b->et + 2 * sizeof *b->ev + sizeof *b->start +
                        sizeof *b->series + sizeof *b->grp) +
                b->hcap * sizeof *b->ht;
    char *m = b->mem = im_malloc(sz);
    b->ls = (const im_labels_t **)m, m += maxn * sizeof *b->ls;
    b->et = (int64_t *)m, m += maxn * sizeof *b->et;
    b->t = (int64_t *)m, m += maxn * sizeof *b->t;
    b->ev = (double *)m, m += maxn * sizeof *b->ev;
    b->v = (double *)m, m += maxn * sizeof *b->v;
    b->start = (size_t *)m, m += maxn * sizeof *b->start;
    b->series = (remote_series_t *)m, m += maxn * sizeof *b->series;
    b->grp = (uint32_t *)m, m += maxn * sizeof *b->grp;
    b->ht = (uint32_t *)m;
}

/* Groups the first k samples; returns the number of series. */
static size_t batch_group(batch_t *b, size_t k)
{
    memset(b->ht, 0, b->hcap * sizeof *b->ht);
    size_t ng = 0, mask = b->hcap - 1;
    for (size_t i = 0; i < k; i++) {
        /* (mixed: a shard's series share their hash modulo the shard count) */
        size_t h = (size_t)((b->ls[i]->hash * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
        while (b->ht[h] && b->series[b->ht[h] - 1].labels != b->ls[i]) h = (h + 1) & mask;
        if (!b->ht[h]) {
            b->series[ng] = (remote_series_t){b->ls[i], NULL, NULL, 0};
            b->ht[h] = (uint32_t)++ng;
        }
        b->grp[i] = b->ht[h] - 1;
        b->series[b->grp[i]].n++;
    }
    size_t off = 0;
    for (size_t g = 0; g < ng; g++) {
        b->start[g] = off;
        b->series[g].t_ms = &b->t[off];
        b->series[g].v = &b->v[off];
        off += b->series[g].n;
        b->series[g].n = 0;
    }
    for (size_t i = 0; i < k; i++) {
        remote_series_t *g = &b->series[b->grp[i]];
        b->t[b->start[b->grp[i]] + g->n] = b->et[i];
        b->v[b->start[b->grp[i]] + g->n] = b->ev[i];
        g->n++;
    }
    return ng;
}

static void *shard_main(void *arg)
{
    shard_t *s = arg;
    queue_t *q = s->q;
    size_t maxn = (size_t)q->qc.max_samples_per_send;
    int64_t deadline_ns = q->qc.batch_send_deadline_ms * 1000000;
    batch_t bt;
    batch_init(&bt, maxn);
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop) {
            int64_t now = im_mono_ns();
            bool only_markers = s->n > 0 && s->nsamples == 0;
            size_t lim = s->first_max && s->first_max < maxn ? (size_t)s->first_max : maxn;
            if (s->nsamples >= lim || only_markers ||
                (s->nsamples > 0 && now - s->first_ns >= deadline_ns))
                break;
            struct timespec ts;
            int64_t wait_ms = s->nsamples ? (deadline_ns - (now - s->first_ns)) / 1000000 + 1 : 100;
            abs_after(&ts, wait_ms > 100 ? 100 : wait_ms);
            pthread_cond_timedwait(&s->cv, &s->mu, &ts);
        }
        if (s->stop) break;
        size_t k = 0, after_mark = 0;
        size_t lim = s->first_max && s->first_max < maxn ? (size_t)s->first_max : maxn;
        bool mark = false;
        tsdb_wal_pos_t mpos = {0, 0};
        int64_t maxt = INT64_MIN;
        while (s->n > 0) {
            rq_ent_t *e = &s->ring[s->head];
            if (e->ls) {
                if (k == lim) break;
                after_mark++;
                bt.ls[k] = e->ls;
                bt.et[k] = e->t;
                bt.ev[k] = e->u.v;
                if (e->t > maxt) maxt = e->t;
                k++;
                s->nsamples--;
            } else {
                mark = true;
                after_mark = 0;
                mpos = (tsdb_wal_pos_t){(uint32_t)e->t, e->u.off};
            }
            s->head = (s->head + 1) % s->cap;
            s->n--;
        }
        s->first_ns = im_mono_ns();
        s->busy = true;
        pthread_cond_broadcast(&s->spc);
        pthread_mutex_unlock(&s->mu);
        bool done = true;
        if (k > 0) {
            /* The batch's size is saved before it is sent: a restart after a
             * kill sends exactly this batch again first, alone (so a receiver
             * that refuses a duplicate with 400 refuses only samples it has). */
            pthread_mutex_lock(&q->pos_mu);
            s->inflight_n = k;
            pos_save_locked(q);
            pthread_mutex_unlock(&q->pos_mu);
            im_buf_reset(&s->raw);
            size_t ng = batch_group(&bt, k);
            remote_encode_write_request(&s->raw, bt.series, ng, NULL, 0);
            if (remote_snappy(&s->raw, &s->comp) != IM_OK) im_oom(s->raw.len);
            done = send_with_backoff(s, k, false);
            if (done && maxt > atomic_load(&q->highest_sent_ms))
                atomic_store(&q->highest_sent_ms, maxt);
            if (done) atomic_fetch_add(&q->batches_ok, 1);
        }
        if (done && (mark || k > 0)) {
            /* Saved at once after the 2xx (remote.h, delivery 2). */
            pthread_mutex_lock(&q->pos_mu);
            if (mark) {
                s->pos = mpos;
                s->acked_n = after_mark;
            } else {
                s->acked_n += k;
            }
            s->inflight_n = 0;
            pos_maybe_save_locked(q, k > 0);
            pthread_mutex_unlock(&q->pos_mu);
        }
        if (done) s->first_max -= k < s->first_max ? k : s->first_max;
        pthread_mutex_lock(&s->mu);
        s->busy = false;
        pthread_cond_broadcast(&s->spc);
        if (!done) break;
    }
    pthread_mutex_unlock(&s->mu);
    im_free(bt.mem);
    return NULL;
}

static void shards_start(queue_t *q)
{
    for (size_t i = 0; i < q->nsh; i++)
        if (pthread_create(&q->sh[i]->th, NULL, shard_main, q->sh[i]) == 0)
            q->sh[i]->started = true;
}

static void shards_stop(queue_t *q)
{
    for (size_t i = 0; i < q->nsh; i++) {
        shard_t *s = q->sh[i];
        pthread_mutex_lock(&s->mu);
        s->stop = true;
        pthread_cond_broadcast(&s->cv);
        pthread_cond_broadcast(&s->spc);
        pthread_mutex_unlock(&s->mu);
    }
    for (size_t i = 0; i < q->nsh; i++)
        if (q->sh[i]->started) pthread_join(q->sh[i]->th, NULL);
}

/* ---- Reader side ---- */

typedef enum push_result { PUSHED, PUSH_STOP, PUSH_RESHARD } push_result_t;

/* Appends e to shard s, waiting for space. PUSH_STOP when the queue stops;
 * PUSH_RESHARD (nothing pushed) when a sample waits while resharding is due: a
 * reader held back by a full shard must still reshard (the backlog is when it
 * matters), so on_samples reshards and pushes again. */
static push_result_t push(queue_t *q, shard_t *s, const rq_ent_t *e)
{
    pthread_mutex_lock(&s->mu);
    bool waited = false;
    while (s->n + 1 >= s->cap && e->ls) {
        if (atomic_load(&q->stop)) {
            pthread_mutex_unlock(&s->mu);
            return PUSH_STOP;
        }
        if (now_ms() - q->last_reshard_ms >= RESHARD_EVERY_MS) {
            pthread_mutex_unlock(&s->mu);
            return PUSH_RESHARD;
        }
        if (!waited) atomic_fetch_add(&q->enqueue_retries, 1);
        waited = true;
        struct timespec ts;
        abs_after(&ts, 100);
        pthread_cond_timedwait(&s->spc, &s->mu, &ts);
    }
    if (!e->ls && s->n > 0) {
        rq_ent_t *last = &s->ring[(s->head + s->n - 1) % s->cap];
        if (!last->ls) { /* coalesce markers */
            *last = *e;
            pthread_mutex_unlock(&s->mu);
            return PUSHED;
        }
    }
    if (!e->ls && s->n + 1 > s->cap) { /* cannot happen: cap keeps one slot */
        pthread_mutex_unlock(&s->mu);
        return PUSHED;
    }
    if (e->ls && s->nsamples == 0) s->first_ns = im_mono_ns();
    s->ring[(s->head + s->n) % s->cap] = *e;
    s->n++;
    if (e->ls) s->nsamples++;
    if (s->nsamples >= (size_t)q->qc.max_samples_per_send || !e->ls) pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return PUSHED;
}

static void reshard_tick(queue_t *q);

static bool on_samples(void *ctx, const tsdb_wal_sample_t *smp, size_t n, tsdb_wal_pos_t end)
{
    queue_t *q = ctx;
    int64_t hi = INT64_MIN;
    size_t in = 0;
    for (size_t i = 0; i < n; i++) {
        const im_labels_t *ls = smp[i].id < q->capser ? q->ser[smp[i].id] : NULL;
        if (smp[i].t_ms > hi) hi = smp[i].t_ms;
        if (!ls || ls == DROPPED) {
            atomic_fetch_add(&q->samples_dropped, 1);
            continue;
        }
        rq_ent_t e = {ls, smp[i].t_ms, {.v = smp[i].v}};
        push_result_t r;
        do {
            shard_t *s = q->sh[ls->hash % q->nsh];          /* (again after a reshard) */
            if (tsdb_wal_pos_cmp(end, s->skip) <= 0) break; /* sent before the restart */
            if (s->skip_n) { /* acknowledged before the restart, inside this record */
                s->skip_n--;
                break;
            }
            r = push(q, s, &e);
            if (r == PUSH_STOP) return false;
            if (r == PUSH_RESHARD)
                reshard_tick(q);
            else
                in++;
        } while (r == PUSH_RESHARD);
    }
    atomic_fetch_add(&q->rec_samples, 1);
    /* WAL bytes per sample read, for the backlog estimate of resharding. */
    if (end.seg == q->last_end.seg && end.off > q->last_end.off) {
        q->read_bytes += end.off - q->last_end.off;
        q->read_samples += n;
    }
    q->last_end = end;
    atomic_fetch_add(&q->samples_in, in);
    atomic_fetch_add(&q->rs->samples_in, in);
    if (hi > atomic_load(&q->highest_in_ms)) atomic_store(&q->highest_in_ms, hi);
    if (hi > atomic_load(&q->rs->highest_in_ms)) atomic_store(&q->rs->highest_in_ms, hi);
    rq_ent_t m = {NULL, (int64_t)end.seg, {.off = end.off}};
    for (size_t k = 0; k < q->nsh; k++)
        if (tsdb_wal_pos_cmp(end, q->sh[k]->skip) > 0) (void)push(q, q->sh[k], &m);
    return true;
}

static const tsdb_wal_watch_cb_t watch_cb = {on_series, on_samples, on_gap};

static bool drained(queue_t *q)
{
    for (size_t i = 0; i < q->nsh; i++) {
        shard_t *s = q->sh[i];
        pthread_mutex_lock(&s->mu);
        bool idle = s->nsamples == 0 && !s->busy;
        pthread_mutex_unlock(&s->mu);
        if (!idle) return false;
    }
    return true;
}

/* Resharding (remote.h, delivery 4). The input rate and the backlog are the
 * WAL's, not the reader's: a reader held back by full shards reads only as fast
 * as they send, so the samples not read yet are estimated from the WAL bytes
 * after the reader's position (at the bytes per sample read so far) plus those
 * waiting in the shards, and the input rate is the rate read plus the backlog's
 * growth. */

static size_t pending(queue_t *q);

static double backlog_samples(queue_t *q)
{
    tsdb_wal_pos_t p = tsdb_wal_watcher_pos(q->w);
    uint64_t from = tsdb_wal_bytes_from(q->rs->dir, p.seg);
    double behind = from > p.off ? (double)(from - p.off) : 0;
    double bps = q->read_samples ? (double)q->read_bytes / (double)q->read_samples : 0;
    return (bps > 0 ? behind / bps : 0) + (double)pending(q);
}

static void reshard(queue_t *q, rate_t *r)
{
    uint64_t in = atomic_load(&q->samples_in), out = atomic_load(&q->samples_total);
    uint64_t ns = atomic_load(&q->send_ns_total);
    double dt = RESHARD_EVERY_MS / 1000.0;
    double pend = backlog_samples(q);
    double rin = (double)(in - r->last_in) / dt + (pend - r->last_pending) / dt;
    if (rin < 0) rin = 0;
    double rout = (double)(out - r->last_out) / dt;
    double nsps = out > r->last_out ? (double)(ns - r->last_ns) / (double)(out - r->last_out) : 0;
    r->last_in = in;
    r->last_out = out;
    r->last_ns = ns;
    r->last_pending = pend;
    if (!r->init) {
        r->in = rin;
        r->out = rout;
        r->ns_per_sample = nsps;
        r->init = true;
    } else {
        r->in = 0.2 * rin + 0.8 * r->in;
        r->out = 0.2 * rout + 0.8 * r->out;
        if (nsps > 0) r->ns_per_sample = 0.2 * nsps + 0.8 * r->ns_per_sample;
    }
    /* Enough shards for the input plus 5 % of the backlog every second. */
    double want = r->ns_per_sample / 1e9 * (r->in + 0.05 * pend);
    int64_t desired = (int64_t)ceil(want);
    int64_t cur = (int64_t)q->nsh;
    if (want > 0.7 * (double)cur && want < 1.3 * (double)cur) desired = cur;
    if (desired < q->qc.min_shards) desired = q->qc.min_shards;
    if (desired > q->qc.max_shards) desired = q->qc.max_shards;
    atomic_store(&q->desired, desired);
    if (desired == cur) return;
    /* Only with a healthy receiver: scaling up against a failing one adds load. */
    if (now_ms() - atomic_load(&q->last_ok_ms) > 2 * q->qc.batch_send_deadline_ms + 10000) return;
    while (!drained(q)) {
        if (atomic_load(&q->stop)) return;
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    shards_stop(q);
    tsdb_wal_pos_t p = tsdb_wal_watcher_pos(q->w);
    pthread_mutex_lock(&q->rs->mu);
    pthread_mutex_lock(&q->pos_mu);
    for (size_t i = 0; i < q->nsh; i++) shard_free(q->sh[i]);
    q->sh = im_realloc(q->sh, (size_t)desired * sizeof *q->sh);
    q->nsh = (size_t)desired;
    for (size_t i = 0; i < q->nsh; i++) q->sh[i] = shard_new(q, i, p);
    pos_save_locked(q);
    pthread_mutex_unlock(&q->pos_mu);
    pthread_mutex_unlock(&q->rs->mu);
    IM_INFO("remote storage resharded", "remote_name=%s from=%" PRId64 " to=%" PRId64,
            im_logq(q->name), cur, desired);
    shards_start(q);
}

/* Every RESHARD_EVERY_MS, from the reader thread: between polls, or inside
 * one while a sample waits for space (then in the middle of a WAL record: the
 * new shards start at the position before it, so a kill before its end resends
 * the record's samples already sent, and loses none). */
static void reshard_tick(queue_t *q)
{
    q->last_reshard_ms = now_ms();
    reshard(q, &q->rate);
}

static void send_metadata(queue_t *q, shard_t *s)
{
    remote_opts_t *o = &q->rs->opts;
    if (!o->metadata || !o->metadata_ud || !q->cfg->metadata.send) return;
    remote_metadata_t *md = NULL;
    size_t n = 0;
    void *keep = NULL;
    o->metadata(o->metadata_ud, &md, &n, &keep);
    for (size_t off = 0; off < n && !atomic_load(&q->stop);) {
        size_t k = n - off < (size_t)q->cfg->metadata.max_samples_per_send
                       ? n - off
                       : (size_t)q->cfg->metadata.max_samples_per_send;
        im_buf_reset(&s->raw);
        remote_encode_write_request(&s->raw, NULL, 0, md + off, k);
        if (remote_snappy(&s->raw, &s->comp) != IM_OK) im_oom(s->raw.len);
        if (!send_with_backoff(s, k, true)) break;
        off += k;
    }
    if (o->metadata_free) o->metadata_free(o->metadata_ud, keep);
}

static void *queue_main(void *arg)
{
    queue_t *q = arg;
    int64_t last_md = 0;
    q->last_reshard_ms = now_ms();
    shard_t *mds = shard_new(q, 0, (tsdb_wal_pos_t){0, 0}); /* metadata's own client */
    while (!atomic_load(&q->stop)) {
        size_t nrec = 0;
        im_err_t e;
        im_err_clear(&e);
        if (tsdb_wal_watcher_poll(q->w, &nrec, &e) != IM_OK) {
            atomic_fetch_add(&q->decode_failures, 1);
            IM_ERROR("remote-write WAL watcher failed", "remote_name=%s err=%s", im_logq(q->name),
                     im_logq(e.msg));
        }
        atomic_store(&q->cur_seg, tsdb_wal_watcher_pos(q->w).seg);
        pthread_mutex_lock(&q->pos_mu);
        if (q->pos_dirty && im_mono_ns() - q->pos_saved_ns >= (int64_t)POS_LAZY_MS * 1000000)
            pos_save_locked(q);
        pthread_mutex_unlock(&q->pos_mu);
        int64_t now = now_ms();
        if (now - q->last_reshard_ms >= RESHARD_EVERY_MS) reshard_tick(q);
        if (q->cfg->metadata.send && now - last_md >= q->cfg->metadata.send_interval_ms) {
            last_md = now;
            send_metadata(q, mds);
        }
        if (nrec == 0) {
            struct timespec ts = {0, POLL_MS * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    shard_free(mds);
    return NULL;
}

/* ---- Queue life ---- */

/* The URL with the password of its userinfo replaced, as Go's URL.Redacted. */
static char *redact(const char *url)
{
    const char *s = strstr(url, "://");
    if (!s) return im_strdup(url);
    s += 3;
    const char *end = s + strcspn(s, "/?#");
    const char *at = NULL;
    for (const char *p = s; p < end; p++)
        if (*p == '@') at = p;
    const char *colon = at ? memchr(s, ':', (size_t)(at - s)) : NULL;
    if (!colon) return im_strdup(url);
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_append(&b, url, (size_t)(colon + 1 - url));
    (void)im_buf_puts(&b, "xxxxx");
    (void)im_buf_puts(&b, at);
    return im_buf_steal(&b, NULL);
}

/* The queue parameters the sender runs with: cfg->queue with each count at
 * least 1 and max_shards at least min_shards (Prometheus' loader accepts any
 * integers there); and the queue's name: cfg->name, else the first 6 hex digits
 * of a hash of the entry as dumped (as Prometheus names unnamed queues by a hash
 * of their configuration). */
static void queue_params(const cfg_remote_write_t *cfg, cfg_queue_t *qc, char *name, size_t cap)
{
    *qc = cfg->queue;
    if (qc->capacity < 1) qc->capacity = 1;
    if (qc->min_shards < 1) qc->min_shards = 1;
    if (qc->max_shards < qc->min_shards) qc->max_shards = qc->min_shards;
    if (qc->max_samples_per_send < 1) qc->max_samples_per_send = 1;
    if (qc->min_backoff_ms < 1) qc->min_backoff_ms = 1;
    if (qc->max_backoff_ms < qc->min_backoff_ms) qc->max_backoff_ms = qc->min_backoff_ms;
    if (qc->batch_send_deadline_ms < 1) qc->batch_send_deadline_ms = 1;
    if (cfg->name) {
        snprintf(name, cap, "%s", cfg->name);
        return;
    }
    im_buf_t b;
    im_buf_init(&b, 0);
    cfg_remote_write_dump(cfg, 1, &b);
    uint64_t h = im_hash(b.data ? b.data : "", b.len);
    im_buf_free(&b);
    snprintf(name, cap, "%06" PRIx64, h >> 40);
}

static queue_t *queue_new(remote_storage_t *rs, const cfg_remote_write_t *cfg,
                          const im_labels_t *ext)
{
    queue_t *q = im_calloc(1, sizeof *q);
    q->url = redact(cfg->url);
    q->rs = rs;
    q->cfg = cfg;
    q->ext = ext;
    queue_params(cfg, &q->qc, q->name, sizeof q->name);
    im_buf_t dump;
    im_buf_init(&dump, 0);
    cfg_remote_write_dump(cfg, 1, &dump);
    q->cfg_hash = im_hash(dump.data ? dump.data : "", dump.len) ^ (ext ? ext->hash : 0);
    im_buf_free(&dump);
    pthread_mutex_init(&q->pos_mu, NULL);
    q->posfd = -1;
    im_buf_init(&q->posbuf, 0);
    pthread_mutex_init(&q->err_mu, NULL);
    char safe[64];
    snprintf(safe, sizeof safe, "%s", q->name);
    for (char *p = safe; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_'))
            *p = '_';
    snprintf(q->posfile, sizeof q->posfile, "%s/remote/%s.pos", rs->dir, safe);
    pos_rec_t *saved = NULL;
    size_t nsaved = 0;
    uint64_t saved_hash = 0;
    bool have = pos_load(q->posfile, &saved, &nsaved, &saved_hash);
    size_t nsh = have ? nsaved : (size_t)q->qc.min_shards;
    tsdb_wal_pos_t mn = {0, 0};
    for (size_t i = 0; have && i < nsaved; i++)
        if (i == 0 || tsdb_wal_pos_cmp(saved[i].p, mn) < 0) mn = saved[i].p;
    bool counts = have && saved_hash == q->cfg_hash;
    if (nsh < (size_t)q->qc.min_shards || nsh > (size_t)q->qc.max_shards) {
        /* The series would map to other shards: resume all from the oldest. */
        nsh = nsh < (size_t)q->qc.min_shards ? (size_t)q->qc.min_shards : (size_t)q->qc.max_shards;
        for (size_t i = 0; i < nsaved; i++) saved[i].p = mn;
        counts = false;
    }
    q->sh = im_calloc(nsh, sizeof *q->sh);
    q->nsh = nsh;
    for (size_t i = 0; i < nsh; i++) {
        q->sh[i] = shard_new(q, i, have ? (i < nsaved ? saved[i].p : mn) : (tsdb_wal_pos_t){0, 0});
        /* The counts of samples hold only for the same series-to-shard mapping
         * (same configuration, same shard count); else more is resent. */
        if (counts && i < nsaved) {
            q->sh[i]->acked_n = q->sh[i]->skip_n = saved[i].acked;
            q->sh[i]->first_max = saved[i].inflight;
        }
    }
    im_free(saved);
    atomic_store(&q->desired, (int64_t)nsh);
    im_err_t e;
    im_err_clear(&e);
    if (tsdb_wal_watcher_open(rs->dir, have ? &mn : NULL, &watch_cb, q, &q->w, &e) != IM_OK)
        IM_ERROR("cannot read the WAL for remote write", "remote_name=%s err=%s", im_logq(q->name),
                 im_logq(e.msg));
    if (!have && q->w) {
        /* A new queue starts at the WAL's end: read the series up to it. */
        (void)tsdb_wal_watcher_poll(q->w, NULL, &e);
        tsdb_wal_pos_t p = tsdb_wal_watcher_pos(q->w);
        for (size_t i = 0; i < nsh; i++) q->sh[i]->pos = q->sh[i]->skip = p;
    }
    pthread_mutex_lock(&q->pos_mu);
    pos_save_locked(q);
    pthread_mutex_unlock(&q->pos_mu);
    if (q->w) {
        shards_start(q);
        if (pthread_create(&q->th, NULL, queue_main, q) == 0) q->started = true;
    }
    IM_INFO("remote write queue started", "remote_name=%s url=%s shards=%zu resume=%s",
            im_logq(q->name), im_logq(q->url), nsh, have ? "saved position" : "WAL end");
    return q;
}

static void queue_free(queue_t *q)
{
    atomic_store(&q->stop, true);
    if (q->started) pthread_join(q->th, NULL);
    shards_stop(q);
    pthread_mutex_lock(&q->pos_mu);
    pos_save_locked(q);
    pthread_mutex_unlock(&q->pos_mu);
    for (size_t i = 0; i < q->nsh; i++) shard_free(q->sh[i]);
    im_free(q->sh);
    tsdb_wal_watcher_close(q->w);
    for (size_t i = 0; i < q->capser; i++)
        if (q->ser[i] && q->ser[i] != DROPPED) im_labels_unref(q->ser[i]);
    im_free(q->ser);
    for (size_t i = 0; i < q->ngrave; i++) im_labels_unref(q->grave[i]);
    im_free(q->grave);
    if (q->posfd >= 0) close(q->posfd);
    im_buf_free(&q->posbuf);
    pthread_mutex_destroy(&q->pos_mu);
    pthread_mutex_destroy(&q->err_mu);
    im_free(q->url);
    im_free(q);
}

/* ---- The storage ---- */

remote_storage_t *remote_storage_new(const remote_opts_t *opts)
{
    remote_storage_t *rs = im_calloc(1, sizeof *rs);
    rs->opts = *opts;
    if (rs->opts.max_wal_retention_bytes <= 0) rs->opts.max_wal_retention_bytes = DEFAULT_MAX_WAL;
    if (!rs->opts.user_agent) rs->opts.user_agent = "infermon";
    rs->dir = im_strdup(opts->storage_dir);
    pthread_mutex_init(&rs->mu, NULL);
    char p[4200];
    snprintf(p, sizeof p, "%s/remote", rs->dir);
    (void)mkdir(rs->dir, 0755);
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        IM_ERROR("cannot create the remote-write directory", "dir=%s err=%s", im_logq(p),
                 im_logq(strerror(errno)));
    return rs;
}

void remote_storage_set_metadata_ud(remote_storage_t *rs, void *ud)
{
    rs->opts.metadata_ud = ud;
}

void remote_storage_apply(remote_storage_t *rs, scrape_config_t *cfg)
{
    pthread_mutex_lock(&rs->mu);
    queue_t **old = rs->q;
    size_t nold = rs->nq;
    rs->q = NULL;
    rs->nq = 0;
    pthread_mutex_unlock(&rs->mu);
    for (size_t i = 0; i < nold; i++) queue_free(old[i]);
    im_free(old);
    pthread_mutex_lock(&rs->mu);
    scrape_config_free(rs->cfg);
    rs->cfg = cfg ? scrape_config_ref(cfg) : NULL;
    if (cfg && cfg->nremote_write) {
        rs->q = im_calloc(cfg->nremote_write, sizeof *rs->q);
        for (size_t i = 0; i < cfg->nremote_write; i++)
            rs->q[rs->nq++] = queue_new(rs, &cfg->remote_write[i], cfg->external_labels);
    }
    pthread_mutex_unlock(&rs->mu);
}

uint32_t remote_storage_wal_keep(void *ctx)
{
    remote_storage_t *rs = ctx;
    pthread_mutex_lock(&rs->mu);
    uint32_t keep = 0;
    bool any = false;
    for (size_t i = 0; i < rs->nq; i++) {
        queue_t *q = rs->q[i];
        pthread_mutex_lock(&q->pos_mu);
        if (q->have_oldest && (!any || q->oldest.seg < keep)) keep = q->oldest.seg;
        any = any || q->have_oldest;
        pthread_mutex_unlock(&q->pos_mu);
    }
    if (!any && rs->nq == 0 && !rs->cfg) {
        /* Before the first apply (the store's open): the saved positions. */
        char p[4200];
        snprintf(p, sizeof p, "%s/remote", rs->dir);
        DIR *d = opendir(p);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            size_t l = strlen(de->d_name);
            if (l < 5 || strcmp(de->d_name + l - 4, ".pos")) continue;
            char f[4500];
            snprintf(f, sizeof f, "%s/%s", p, de->d_name);
            pos_rec_t *sv;
            size_t n;
            uint64_t h;
            if (!pos_load(f, &sv, &n, &h)) continue;
            for (size_t k = 0; k < n; k++)
                if (!any || sv[k].p.seg < keep) {
                    keep = sv[k].p.seg;
                    any = true;
                }
            im_free(sv);
        }
        if (d) closedir(d);
    }
    if (any && keep > 0) {
        /* Bounded (remote.h, delivery 3): give up the oldest segments past the cap. */
        uint32_t k = keep;
        while (tsdb_wal_bytes_from(rs->dir, k) > (uint64_t)rs->opts.max_wal_retention_bytes) k++;
        if (k != keep && k > rs->giveup_below) {
            IM_ERROR("remote-write queues are behind by more than --storage.remote.max-wal-"
                     "retention; the oldest WAL segments are given up and their unsent samples "
                     "lost to the receivers",
                     "keep_from=%u was=%u max_wal_retention=%" PRId64 "B", k, keep,
                     rs->opts.max_wal_retention_bytes);
            rs->giveup_below = k;
        }
        keep = k;
    }
    pthread_mutex_unlock(&rs->mu);
    return any ? (keep ? keep : 1) : 0;
}

bool remote_storage_idle(remote_storage_t *rs)
{
    pthread_mutex_lock(&rs->mu);
    bool idle = true;
    for (size_t i = 0; i < rs->nq && idle; i++) idle = drained(rs->q[i]);
    pthread_mutex_unlock(&rs->mu);
    return idle;
}

void remote_storage_free(remote_storage_t *rs)
{
    if (!rs) return;
    remote_storage_apply(rs, NULL);
    pthread_mutex_destroy(&rs->mu);
    im_free(rs->dir);
    im_free(rs);
}

/* ---- Self-monitoring ---- */

static void lbl(im_buf_t *b, const queue_t *q)
{
    (void)im_buf_puts(b, "{remote_name=");
    (void)im_quote_string(b, q->name, strlen(q->name));
    (void)im_buf_puts(b, ",url=");
    (void)im_quote_string(b, q->url, strlen(q->url));
    (void)im_buf_puts(b, "}");
}

static size_t pending(queue_t *q)
{
    size_t n = 0;
    for (size_t i = 0; i < q->nsh; i++) {
        pthread_mutex_lock(&q->sh[i]->mu);
        n += q->sh[i]->nsamples;
        pthread_mutex_unlock(&q->sh[i]->mu);
    }
    return n;
}

typedef enum mkind { CTR, GAUGE } mkind_t;

static void fam(im_buf_t *b, const char *name, mkind_t k, const char *help)
{
    (void)im_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
                        k == CTR ? "counter" : "gauge");
}

static void num(im_buf_t *b, double v)
{
    char t[64];
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(t, sizeof t, "%.0f", v);
    else
        snprintf(t, sizeof t, "%.17g", v);
    (void)im_buf_printf(b, " %s\n", t);
}

/* One line per queue: NAME{consumer="<queue>"EXTRA} and the _Atomic uint64_t
 * at offset off of its queue_t. */
static void per_consumer(im_buf_t *b, remote_storage_t *rs, const char *name, const char *extra,
                         size_t off)
{
    for (size_t i = 0; i < rs->nq; i++) {
        const queue_t *q = rs->q[i];
        (void)im_buf_printf(b, "%s{consumer=", name);
        (void)im_quote_string(b, q->name, strlen(q->name));
        (void)im_buf_printf(b, "%s}", extra);
        num(b, (double)atomic_load((_Atomic uint64_t *)((char *)q + off)));
    }
}

void remote_storage_metrics(void *ctx, im_buf_t *b)
{
    remote_storage_t *rs = ctx;
    pthread_mutex_lock(&rs->mu);
    fam(b, "prometheus_remote_storage_highest_timestamp_in_seconds", GAUGE,
        "Newest sample timestamp read from the WAL by the remote-write queues (seconds).");
    (void)im_buf_puts(b, "prometheus_remote_storage_highest_timestamp_in_seconds");
    int64_t hi = atomic_load(&rs->highest_in_ms);
    num(b, hi == 0 ? 0 : (double)hi / 1e3);
    fam(b, "prometheus_remote_storage_samples_in_total", CTR,
        "Samples read from the WAL for remote write (to compare with what was sent).");
    (void)im_buf_puts(b, "prometheus_remote_storage_samples_in_total");
    num(b, (double)atomic_load(&rs->samples_in));
    struct {
        const char *name;
        mkind_t k;
        const char *help;
        size_t off; /* of an _Atomic uint64_t in queue_t, or SIZE_MAX for computed */
        int which;
    } ms[] = {
        {"prometheus_remote_storage_samples_total", CTR,
         "Samples sent to the remote storage (each attempt counts).",
         offsetof(queue_t, samples_total), 0},
        {"prometheus_remote_storage_samples_failed_total", CTR,
         "Samples of batches the remote storage refused for good (non-recoverable).",
         offsetof(queue_t, samples_failed), 0},
        {"prometheus_remote_storage_samples_retried_total", CTR,
         "Samples of batches sent again after a recoverable error.",
         offsetof(queue_t, samples_retried), 0},
        {"prometheus_remote_storage_samples_dropped_total", CTR,
         "Samples read from the WAL and not sent: dropped by write_relabel_configs or of an "
         "unknown series.",
         offsetof(queue_t, samples_dropped), 0},
        {"prometheus_remote_storage_enqueue_retries_total", CTR,
         "Times the WAL reader waited because a shard's queue was full.",
         offsetof(queue_t, enqueue_retries), 0},
        {"prometheus_remote_storage_bytes_total", CTR,
         "Bytes of samples requests sent, after compression.", offsetof(queue_t, bytes_total), 0},
        {"prometheus_remote_storage_metadata_total", CTR, "Metadata entries sent.",
         offsetof(queue_t, md_total), 0},
        {"prometheus_remote_storage_metadata_failed_total", CTR,
         "Metadata entries refused for good by the remote storage.", offsetof(queue_t, md_failed),
         0},
        {"prometheus_remote_storage_metadata_retried_total", CTR,
         "Metadata entries sent again after a recoverable error.", offsetof(queue_t, md_retried),
         0},
        {"prometheus_remote_storage_metadata_bytes_total", CTR,
         "Bytes of metadata requests sent, after compression.", offsetof(queue_t, md_bytes), 0},
        {"prometheus_remote_storage_samples_pending", GAUGE,
         "Samples waiting in the shards' queues.", SIZE_MAX, 1},
        {"prometheus_remote_storage_shards", GAUGE, "Shards sending in parallel now.", SIZE_MAX, 2},
        {"prometheus_remote_storage_shards_min", GAUGE, "queue_config min_shards.", SIZE_MAX, 3},
        {"prometheus_remote_storage_shards_max", GAUGE, "queue_config max_shards.", SIZE_MAX, 4},
        {"prometheus_remote_storage_shards_desired", GAUGE,
         "Shards the resharding computed from the rates in and out and the backlog.", SIZE_MAX, 5},
        {"prometheus_remote_storage_shard_capacity", GAUGE, "queue_config capacity (per shard).",
         SIZE_MAX, 6},
        {"prometheus_remote_storage_max_samples_per_send", GAUGE,
         "queue_config max_samples_per_send.", SIZE_MAX, 7},
        {"prometheus_remote_storage_queue_highest_sent_timestamp_seconds", GAUGE,
         "Newest sample timestamp acknowledged by the remote storage (seconds).", SIZE_MAX, 8},
    };
    for (size_t m = 0; m < IM_ARRAY_LEN(ms); m++) {
        if (rs->nq) fam(b, ms[m].name, ms[m].k, ms[m].help);
        for (size_t i = 0; i < rs->nq; i++) {
            queue_t *q = rs->q[i];
            double v = 0;
            switch (ms[m].which) {
            case 0: v = (double)atomic_load((_Atomic uint64_t *)((char *)q + ms[m].off)); break;
            case 1: v = (double)pending(q); break;
            case 2: v = (double)q->nsh; break;
            case 3: v = (double)q->qc.min_shards; break;
            case 4: v = (double)q->qc.max_shards; break;
            case 5: v = (double)atomic_load(&q->desired); break;
            case 6: v = (double)q->qc.capacity; break;
            case 7: v = (double)q->qc.max_samples_per_send; break;
            case 8: v = (double)atomic_load(&q->highest_sent_ms) / 1e3; break;
            }
            if (ms[m].which == 8 && atomic_load(&q->highest_sent_ms) <= 0) v = 0;
            (void)im_buf_puts(b, ms[m].name);
            lbl(b, q);
            num(b, v);
        }
    }
    if (rs->nq) {
        const char *h = "prometheus_remote_storage_sent_batch_duration_seconds";
        (void)im_buf_printf(b,
                            "# HELP %s Duration of each send to the remote storage.\n# TYPE %s "
                            "histogram\n",
                            h, h);
        for (size_t i = 0; i < rs->nq; i++) {
            queue_t *q = rs->q[i];
            uint64_t cum = 0;
            for (size_t k = 0; k <= NBUCKETS; k++) {
                cum += atomic_load(&q->hist[k]);
                char le[32];
                if (k < NBUCKETS)
                    snprintf(le, sizeof le, "%g", batch_buckets[k]);
                else
                    snprintf(le, sizeof le, "+Inf");
                (void)im_buf_printf(b, "%s_bucket{remote_name=", h);
                (void)im_quote_string(b, q->name, strlen(q->name));
                (void)im_buf_puts(b, ",url=");
                (void)im_quote_string(b, q->url, strlen(q->url));
                (void)im_buf_printf(b, ",le=\"%s\"}", le);
                num(b, (double)cum);
            }
            (void)im_buf_printf(b, "%s_sum", h);
            lbl(b, q);
            num(b, (double)atomic_load(&q->hist_sum_ns) / 1e9);
            (void)im_buf_printf(b, "%s_count", h);
            lbl(b, q);
            num(b, (double)atomic_load(&q->hist_count));
        }
        fam(b, "prometheus_wal_watcher_current_segment", GAUGE,
            "WAL segment the remote-write queue reads.");
        per_consumer(b, rs, "prometheus_wal_watcher_current_segment", "",
                     offsetof(queue_t, cur_seg));
        fam(b, "prometheus_wal_watcher_records_read_total", CTR,
            "WAL records read by the remote-write queue, by type.");
        per_consumer(b, rs, "prometheus_wal_watcher_records_read_total", ",type=\"samples\"",
                     offsetof(queue_t, rec_samples));
        per_consumer(b, rs, "prometheus_wal_watcher_records_read_total", ",type=\"series\"",
                     offsetof(queue_t, rec_series));
        fam(b, "prometheus_wal_watcher_record_decode_failures_total", CTR,
            "WAL records the remote-write queue could not decode.");
        per_consumer(b, rs, "prometheus_wal_watcher_record_decode_failures_total", "",
                     offsetof(queue_t, decode_failures));
        fam(b, "infermon_remote_storage_wal_backlog_bytes", GAUGE,
            "Bytes of WAL segments from the queue's oldest unsent position on.");
        for (size_t i = 0; i < rs->nq; i++) {
            queue_t *q = rs->q[i];
            pthread_mutex_lock(&q->pos_mu);
            uint32_t seg = q->oldest.seg;
            pthread_mutex_unlock(&q->pos_mu);
            (void)im_buf_puts(b, "infermon_remote_storage_wal_backlog_bytes");
            lbl(b, q);
            num(b, (double)tsdb_wal_bytes_from(rs->dir, seg ? seg : 1));
        }
    }
    pthread_mutex_unlock(&rs->mu);
}

void remote_storage_status_json(void *ctx, im_buf_t *b)
{
    remote_storage_t *rs = ctx;
    pthread_mutex_lock(&rs->mu);
    (void)im_buf_putc(b, '[');
    for (size_t i = 0; i < rs->nq; i++) {
        queue_t *q = rs->q[i];
        if (i) (void)im_buf_putc(b, ',');
        int64_t hi = atomic_load(&q->highest_in_ms), hs = atomic_load(&q->highest_sent_ms);
        pthread_mutex_lock(&q->err_mu);
        char err[sizeof q->last_err];
        memcpy(err, q->last_err, sizeof err);
        pthread_mutex_unlock(&q->err_mu);
        (void)im_buf_puts(b, "{\"name\":");
        (void)im_quote_string(b, q->name, strlen(q->name));
        (void)im_buf_puts(b, ",\"url\":");
        (void)im_quote_string(b, q->url, strlen(q->url));
        (void)im_buf_printf(b,
                            ",\"shards\":%zu,\"desiredShards\":%" PRId64 ",\"pendingSamples\":%zu,"
                            "\"lagSeconds\":%.3f,\"sentSamples\":%" PRIu64
                            ",\"failedSamples\":%" PRIu64 ",\"retriedSamples\":%" PRIu64
                            ",\"droppedSamples\":%" PRIu64 ",\"lastSuccessMs\":%" PRId64
                            ",\"lastErrorMs\":%" PRId64 ",\"lastError\":",
                            q->nsh, atomic_load(&q->desired), pending(q),
                            hs > 0 && hi > hs ? (double)(hi - hs) / 1e3 : 0.0,
                            atomic_load(&q->samples_total), atomic_load(&q->samples_failed),
                            atomic_load(&q->samples_retried), atomic_load(&q->samples_dropped),
                            atomic_load(&q->last_ok_ms), atomic_load(&q->last_err_ms));
        (void)im_quote_string(b, err, strlen(err));
        (void)im_buf_putc(b, '}');
    }
    (void)im_buf_putc(b, ']');
    pthread_mutex_unlock(&rs->mu);
}
