/* manager.c — the scrape manager: targets, the scrape thread, the scrape
 * workers, scrape loops.
 *
 * Threads: one scrape thread schedules every target and drives the HTTP
 * transfers through one curl multi handle; a finished transfer is handed to a
 * pool of scrape workers (scrape_manager_set_workers) that parse the body,
 * append and commit, then hand the target back. So a huge or slow target's
 * parse and commit occupy one worker and never hold up another target's
 * transfer or processing. A target's life:
 *
 *     IDLE --start_scrape--> FETCH --transfer done / forced error--> PROCESS
 *       ^                                          (dispatch: onto the work queue)
 *       +------drain_done (worker put it on the done list)-----------+
 *
 * Invariants:
 *  1. In IDLE and FETCH only the scrape thread touches a target's curl handle,
 *     series cache, body buffer and report state; in PROCESS only the one worker
 *     that took it from the queue does (the queue mutex orders the hand-overs).
 *     The manager mutex protects the target list, each target's job pointer,
 *     labels and reported state (last error, health, metadata), the stats and the
 *     pending config.
 *  2. A worker reads only the scrape's snapshot (target->w: job, gen, transfer
 *     result), taken at dispatch, and holds a reference on the configuration the
 *     job belongs to, so a reload while it works frees nothing under it; sync
 *     never frees a target in PROCESS (it becomes an orphan, ended and freed
 *     when it comes back).
 *  3. A scrape appends through exactly one appender that is committed or rolled
 *     back whole; a good scrape's report series (up, ...) and staleness markers
 *     are committed with it. After a failed scrape (or a failed commit), a second
 *     appender writes staleness markers for the previous scrape's series and the
 *     report with up = 0, so up = 0 is always recorded.
 *  4. Series cache entries: `seen` = the last iteration whose scrape committed
 *     with this series (0 = never), `cur` = the iteration that last parsed it.
 *     After scrape k (success or failure), every entry with seen == prev (the
 *     previous iteration) that was not committed in k gets a staleness marker.
 *
 * Scheduling: a target's scrapes happen at offset + n * interval (wall clock),
 * offset = hash(target) mod interval, as Prometheus spreads its scrapes. */
#include "util/base.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <curl/curl.h>
#include <glob.h>
#include <jansson.h>
#include <libdeflate.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "expo/expo.h"
#include "scrape/scrape.h"
#include "scrape/scrape_int.h"
#include "util/fmtfloat.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/timeutil.h"

#define DEFAULT_BODY_CAP (256LL << 20)
/* Body buffers kept for re-use between transfers: a target's buffer goes back
 * to the pool when its scrape is parsed, so memory follows the transfers in
 * flight, not the number of targets. */
#define BODY_POOL 8

const double scrape_duration_bucket_bounds[10] = {0.005, 0.01, 0.025, 0.05, 0.1,
                                                  0.25,  0.5,  1,     2.5,  10};

/* One family's metadata. type always points to a static name; metric, help
 * and unit are owned when their bit in `owned` is set, otherwise they point
 * to a static "" or are on loan from the previous scrape's entry (an unchanged
 * text is kept, not copied again: see meta_set). */
enum { META_METRIC = 1, META_HELP = 2, META_UNIT = 4 };
typedef struct meta_ent {
    const char *metric, *type, *help, *unit;
    uint32_t mlen, hlen, ulen; /* lengths of metric, help, unit */
    uint8_t owned;             /* META_* bits */
} meta_ent_t;

enum { REP_UP, REP_DUR, REP_SCRAPED, REP_POST, REP_ADDED, REP_N };
static const char *const rep_names[REP_N] = {
    "up", "scrape_duration_seconds", "scrape_samples_scraped",
    "scrape_samples_post_metric_relabeling", "scrape_series_added"};

typedef enum target_state { T_IDLE, T_FETCH, T_PROCESS } target_state_t;

/* What a worker needs of one scrape, taken by the scrape thread at dispatch. */
typedef struct scrape_work {
    scrape_config_t *cfg; /* reference: job points into it */
    const scrape_job_cfg_t *job;
    uint32_t gen; /* target->gen at dispatch */
    CURLcode cc;  /* transfer result */
    long code;    /* HTTP status */
    char *ct;     /* owned: Content-Type, NULL when none */
    double dur_s; /* the transfer's duration (until it finished) */
    bool forced;  /* forced_err: fail with it (target_limit) */
    char forced_err[128];
} scrape_work_t;

typedef struct target {
    struct target *next;   /* m->targets or m->orphans */
    struct target *qnext;  /* work queue or done list (under qmu) */
    size_t job_idx;        /* index in the current config */
    scrape_job_cfg_t *job; /* borrowed from m->cfg */
    const im_labels_t *labels, *discovered;
    char *url;
    uint64_t id;
    int64_t interval_ms, timeout_ms;
    int64_t next_ms;
    bool alive;           /* still in the desired set (sync) */
    char forced_err[128]; /* non-empty: every scrape fails with this (target_limit) */
    /* scrape thread, or the worker while in PROCESS (invariant 1) */
    target_state_t state; /* written by the scrape thread only */
    bool removed;         /* an orphan: end and free when processed */
    bool needs_setup;     /* the job changed while not idle: redo the curl setup */
    scrape_work_t w;
    CURL *easy;
    cfg_http_lists_t lists; /* the handle's headers and server_name connection */
    char errbuf[CURL_ERROR_SIZE];
    im_buf_t body;
    bool body_over;
    int64_t start_ms, start_ns;
    scrape__cache_t cache;
    uint64_t iter, prev;
    uint32_t gen; /* bumped when the job's config changes: cached labels are recomputed */
    const im_labels_t *rep_ls[REP_N];
    storage_ref_t rep_ref[REP_N];
    bool reported; /* at least one report written */
    /* under m->mu */
    char *last_error;
    int64_t last_scrape_ms, last_scrape_ns;
    double last_dur;
    scrape_health_t health;
    meta_ent_t *meta;
    size_t nmeta;
} target_t;

typedef struct dropped {
    char *job;
    const im_labels_t *discovered;
} dropped_t;

typedef struct fsd_file {
    char *path;
    int64_t mtime_ns;
    off_t size;
    scrape_target_group_t *groups;
    size_t ngroups;
} fsd_file_t;

typedef struct fsd_state {
    fsd_file_t *files;
    size_t nfiles;
    int64_t next_refresh_ms;
} fsd_state_t;

/* One kubernetes_sd_config's discoverer and the targets last taken from it. */
typedef struct ksd {
    char *key;           /* job name and the config, to keep a discoverer across reloads */
    k8s_discoverer_t *d; /* NULL when it could not start (logged) */
    uint64_t gen;
    const im_labels_t **snap; /* owned references */
    size_t nsnap;
} ksd_t;

typedef struct ksd_job {
    ksd_t *v;
    size_t n;
} ksd_job_t;

/* A scrape worker: its own parser and label builders. */
typedef struct worker {
    scrape_manager_t *m;
    pthread_t thread;
    expo_parser_t *parser;
    im_labels_builder_t lb, lb2;
    struct libdeflate_decompressor *inflater; /* gzip bodies (libdeflate: whole buffer) */
    im_buf_t gz;                              /* the inflated body, swapped with t->body */
} worker_t;

struct scrape_manager {
    scrape_manager_opts_t opts;
    char *user_agent;
    pthread_mutex_t mu;
    pthread_t thread;
    bool started;
    worker_t *workers; /* owned, nworkers */
    size_t nworkers, nstarted;
    pthread_mutex_t qmu;     /* the work queue and the done list */
    pthread_cond_t qcv;      /* work queued, or qstop */
    target_t *qhead, *qtail; /* under qmu: targets in PROCESS not yet taken */
    target_t *done;          /* under qmu: processed, back to the scrape thread */
    bool qstop;              /* under qmu: workers exit */
    size_t nprocessing;      /* scrape thread: targets in PROCESS */
    target_t *orphans;       /* scrape thread: removed while in PROCESS */
    bool stop;
    bool stop_mark_stale;
    scrape_config_t *cfg;     /* current (owned reference), scrape thread's */
    scrape_config_t *pending; /* under mu */
    target_t *targets;        /* under mu for list changes */
    dropped_t *dropped;
    size_t ndropped;
    fsd_state_t *fsd; /* one per job of cfg */
    int64_t next_fsd_check_ms;
    ksd_job_t *ksd; /* one per job of cfg: Kubernetes discoverers */
    k8s_limits_t k8s_limits;
    int64_t next_due_ms; /* scrape thread: no idle target is due before (0 = look again) */
    CURLM *multi;
    im_buf_t bodypool[BODY_POOL]; /* scrape thread only: empty buffers with memory */
    size_t nbodypool;
    scrape_stats_t stats; /* under mu */
};

/* ---- Series cache ---- */

/* One pass after a scrape: marks the entries the scrape committed (when it did),
 * and drops entries not committed for many iterations (and ones never committed). */
static void cache_after(target_t *t, bool committed)
{
    scrape__cache_t *c = &t->cache;
    bool removed = false;
    for (uint32_t i = 0; i < c->nents; i++) {
        scrape__sent_t *e = &c->ents[i];
        if (!e->used) continue;
        if (committed && e->cur == t->iter && e->ls) e->seen = t->iter;
        if ((e->seen == 0 && e->cur + 1 < t->iter) || (e->seen && e->seen + 10 < t->iter)) {
            scrape__cache_remove(c, e);
            removed = true;
        }
    }
    if (removed) scrape__cache_compact(c);
}

/* ---- Appending helpers ---- */

static im_rc app_add(storage_appender_t *a, storage_ref_t *ref, const im_labels_t *ls, int64_t t,
                     double v)
{
    im_rc rc = IM_ENOTFOUND;
    if (*ref) rc = storage_appender_add(a, *ref, NULL, t, v, ref);
    if (rc == IM_ENOTFOUND) rc = storage_appender_add(a, 0, ls, t, v, ref);
    return rc;
}

static void mark_stale_prev(scrape_manager_t *m, target_t *t, storage_appender_t *a, int64_t ts,
                            bool only_uncommitted_now)
{
    (void)m;
    const scrape__cache_t *c = &t->cache;
    for (uint32_t i = 0; i < c->nents; i++) {
        scrape__sent_t *e = &c->ents[i];
        if (!e->used || !e->ls || e->seen == 0 || e->seen != t->prev) continue;
        if (only_uncommitted_now && e->cur == t->iter) continue;
        (void)app_add(a, &e->ref, e->ls, ts, storage_stale_nan());
    }
}

/* ---- Labels of scraped samples ---- */

static bool has_label(const im_labels_t *ls, const char *n)
{
    return ls && im_labels_get(ls, n) != NULL;
}

/* Target labels onto the sample (honor_labels or exported_ renaming), then
 * metric_relabel_configs. Returns NULL when dropped. */
static const im_labels_t *mutate(im_labels_builder_t *lb, const scrape_job_cfg_t *job,
                                 const target_t *t, const im_labels_t *ls)
{
    im_lb_load(lb, ls);
    const im_labels_t *tl = t->labels;
    if (job->honor_labels) {
        for (uint32_t i = 0; i < tl->n; i++)
            if (!im_lb_get(lb, tl->l[i].name->s)) im_lb_set_istr(lb, tl->l[i].name, tl->l[i].value);
    } else {
        const im_istr_t *cn[64], *cv[64];
        size_t nc = 0;
        for (uint32_t i = 0; i < tl->n; i++) {
            const im_istr_t *ex = im_labels_get_istr(ls, tl->l[i].name);
            if (ex && nc < 64) {
                cn[nc] = tl->l[i].name;
                cv[nc++] = ex;
            }
            im_lb_set_istr(lb, tl->l[i].name, tl->l[i].value);
        }
        char done[64][256];
        for (size_t i = 0; i < nc; i++) {
            char nm[256];
            snprintf(nm, sizeof nm, "%s", cn[i]->s);
            for (int guard = 0; guard < 8; guard++) {
                char tmp[256];
                size_t nl = strlen(nm);
                if (nl + 9 >= sizeof tmp) break;
                memcpy(tmp, "exported_", 9);
                memcpy(tmp + 9, nm, nl + 1);
                memcpy(nm, tmp, nl + 10);
                bool clash = has_label(ls, nm) || has_label(tl, nm);
                for (size_t k = 0; k < i; k++)
                    if (!strcmp(done[k], nm)) clash = true;
                if (!clash) break;
            }
            snprintf(done[i], sizeof done[i], "%s", nm);
            im_lb_set(lb, nm, strlen(nm), cv[i]->s, cv[i]->len);
        }
    }
    if (!labels_relabel_process(job->metric_relabel, job->nmetric_relabel, lb)) return NULL;
    if (lb->n == 0) return NULL;
    return im_lb_build(lb);
}

static bool check_label_limits(const scrape_job_cfg_t *j, const im_labels_t *ls, char *err,
                               size_t cap)
{
    const im_istr_t *nm = im_labels_get(ls, IM_METRIC_NAME);
    const char *name = nm ? nm->s : "";
    if (j->label_limit && ls->n > j->label_limit) {
        snprintf(err, cap,
                 "label_limit exceeded (metric: %.50s, number of labels: %u, limit: %llu)", name,
                 ls->n, (unsigned long long)j->label_limit);
        return false;
    }
    for (uint32_t i = 0; i < ls->n; i++) {
        if (j->label_name_length_limit && ls->l[i].name->len > j->label_name_length_limit) {
            snprintf(err, cap,
                     "label_name_length_limit exceeded (metric: %.50s, label name: %.50s, length: "
                     "%u, limit: %llu)",
                     name, ls->l[i].name->s, ls->l[i].name->len,
                     (unsigned long long)j->label_name_length_limit);
            return false;
        }
        if (j->label_value_length_limit && ls->l[i].value->len > j->label_value_length_limit) {
            snprintf(err, cap,
                     "label_value_length_limit exceeded (metric: %.50s, label name: %.50s, value: "
                     "\"%.50s\", length: %u, limit: %llu)",
                     name, ls->l[i].name->s, ls->l[i].value->s, ls->l[i].value->len,
                     (unsigned long long)j->label_value_length_limit);
            return false;
        }
    }
    return true;
}

/* ---- One scrape's body -> appender ---- */

typedef struct meta_src {
    uint32_t prev; /* index in the previous scrape's metadata + 1; 0 = none */
    uint8_t lent;  /* META_* bits on loan from that entry */
} meta_src_t;

typedef struct scrape_result {
    uint64_t scraped, post, added;
    char err[600];
    bool limit;
    meta_ent_t *meta;
    meta_src_t *src;            /* parallel to meta */
    const meta_ent_t *prevmeta; /* the target's metadata from the last good scrape */
    size_t nmeta, metacap, nprev;
    uint32_t *mtab; /* index of meta by family name: i + 1, 0 = empty */
    size_t mtabcap; /* a power of two >= 2 * metacap */
    uint64_t ooo, dup;
} scrape_result_t;

/* Sets one text field of r->meta[i]: borrows the previous scrape's copy when
 * the text is unchanged, copies otherwise. */
static void meta_set(scrape_result_t *r, size_t i, uint8_t bit, im_sv_t v)
{
    meta_ent_t *me = &r->meta[i];
    meta_src_t *src = &r->src[i];
    const char **f = bit == META_METRIC ? &me->metric : bit == META_HELP ? &me->help : &me->unit;
    uint32_t *fl = bit == META_METRIC ? &me->mlen : bit == META_HELP ? &me->hlen : &me->ulen;
    if (me->owned & bit) im_free((char *)*f);
    me->owned &= (uint8_t)~bit;
    src->lent &= (uint8_t)~bit;
    if (src->prev) {
        const meta_ent_t *pe = &r->prevmeta[src->prev - 1];
        const char *pv = bit == META_METRIC ? pe->metric : bit == META_HELP ? pe->help : pe->unit;
        uint32_t pl = bit == META_METRIC ? pe->mlen : bit == META_HELP ? pe->hlen : pe->ulen;
        if ((pe->owned & bit) && pl == v.len && memcmp(pv, v.p, v.len) == 0) {
            *f = pv;
            *fl = pl;
            src->lent |= bit;
            return;
        }
    }
    if (v.len == 0) {
        *f = "";
        *fl = 0;
        return;
    }
    *f = im_strndup(v.p, v.len);
    *fl = (uint32_t)strlen(*f); /* as a C string (an embedded NUL ends it) */
    me->owned |= bit;
}

static bool meta_name_eq(const meta_ent_t *me, im_sv_t b)
{
    return me->mlen == b.len && memcmp(me->metric, b.p, b.len) == 0;
}

/* The slot of r->mtab for a family name: its entry or the empty slot to fill. */
static uint32_t *meta_slot(scrape_result_t *r, im_sv_t name)
{
    size_t mask = r->mtabcap - 1;
    for (size_t s = im_hash(name.p, name.len) & mask;; s = (s + 1) & mask) {
        uint32_t v = r->mtab[s];
        if (v == 0 || meta_name_eq(&r->meta[v - 1], name)) return &r->mtab[s];
    }
}

static void meta_upsert(scrape_result_t *r, const expo_entry_t *e)
{
    size_t i = r->nmeta;
    uint32_t *slot = NULL;
    /* HELP/TYPE/UNIT of one family come together: try the last entry first */
    if (i > 0 && meta_name_eq(&r->meta[i - 1], e->name)) {
        i--;
    } else if (r->metacap) {
        slot = meta_slot(r, e->name);
        if (*slot) i = *slot - 1;
    }
    if (i == r->nmeta) {
        if (r->nmeta >= 100000) return; /* bounded */
        if (r->nmeta == r->metacap) {
            r->metacap = r->metacap ? r->metacap * 2 : (r->nprev > 32 ? r->nprev : 32);
            r->meta = im_realloc(r->meta, r->metacap * sizeof *r->meta);
            r->src = im_realloc(r->src, r->metacap * sizeof *r->src);
            im_free(r->mtab);
            r->mtabcap = 64;
            while (r->mtabcap < r->metacap * 2) r->mtabcap *= 2;
            r->mtab = im_calloc(r->mtabcap, sizeof *r->mtab);
            for (size_t k = 0; k < r->nmeta; k++) {
                im_sv_t nm = {r->meta[k].metric, r->meta[k].mlen};
                *meta_slot(r, nm) = (uint32_t)k + 1;
            }
            slot = NULL;
        }
        memset(&r->meta[i], 0, sizeof r->meta[i]);
        memset(&r->src[i], 0, sizeof r->src[i]);
        /* the same family in the last scrape: usually at the same position */
        size_t j = i;
        if (j >= r->nprev || !meta_name_eq(&r->prevmeta[j], e->name))
            for (j = 0; j < r->nprev; j++)
                if (meta_name_eq(&r->prevmeta[j], e->name)) break;
        if (j < r->nprev) r->src[i].prev = (uint32_t)j + 1;
        r->meta[i].type = "unknown";
        r->meta[i].help = "";
        r->meta[i].unit = "";
        r->meta[i].metric = "";
        r->nmeta++;
        meta_set(r, i, META_METRIC, e->name);
        if (!slot) slot = meta_slot(r, e->name);
        *slot = (uint32_t)i + 1;
    }
    meta_ent_t *me = &r->meta[i];
    if (e->kind == EXPO_ENTRY_TYPE) {
        me->type =
            e->type == EXPO_TYPE_UNKNOWN ? "unknown" : expo_type_name(e->type, EXPO_OPENMETRICS_1);
    } else if (e->kind == EXPO_ENTRY_HELP) {
        meta_set(r, i, META_HELP, e->text);
    } else if (e->kind == EXPO_ENTRY_UNIT) {
        meta_set(r, i, META_UNIT, e->text);
    }
}

/* Frees the owned texts of n entries and the array. */
static void meta_free(meta_ent_t *me, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (me[i].owned & META_METRIC) im_free((char *)me[i].metric);
        if (me[i].owned & META_HELP) im_free((char *)me[i].help);
        if (me[i].owned & META_UNIT) im_free((char *)me[i].unit);
    }
    im_free(me);
}

/* Makes r's metadata self-owned: the texts on loan from prev move to r (prev
 * loses them). Call under m->mu right before prev is freed. */
static void meta_take_loans(scrape_result_t *r, meta_ent_t *prev)
{
    for (size_t i = 0; i < r->nmeta; i++) {
        if (!r->src[i].lent) continue;
        prev[r->src[i].prev - 1].owned &= (uint8_t)~r->src[i].lent;
        r->meta[i].owned |= r->src[i].lent;
        r->src[i].lent = 0;
    }
}

/* The most a scrape of job j reads: body_size_limit, else the manager's
 * default. */
static int64_t body_cap(const scrape_manager_t *m, const scrape_job_cfg_t *j)
{
    return j->body_size_limit > 0
               ? j->body_size_limit
               : (m->opts.default_body_cap > 0 ? m->opts.default_body_cap : DEFAULT_BODY_CAP);
}

/* The parser's limits for a scrape of job j come from the job's settings, as
 * Prometheus has them: no line limit of its own (a line is at most the body,
 * which body_size_limit caps), and labels per sample only under label_limit
 * (one more than it, so that the check after relabelling reports
 * "label_limit exceeded" as Prometheus does; 0 = no limit). */
static void job_parse_limits(const scrape_manager_t *m, const scrape_job_cfg_t *j,
                             expo_limits_t *lim)
{
    memset(lim, 0, sizeof *lim);
    lim->max_line_bytes = (size_t)body_cap(m, j);
    lim->max_labels = j->label_limit > 0 && j->label_limit < UINT32_MAX - 1
                          ? (uint32_t)j->label_limit + 1
                          : UINT32_MAX;
    lim->line_setting = "body_size_limit in the scrape config";
    lim->labels_setting = "label_limit in the scrape config";
}

/* Prometheus 3's float form of a bucket bound or quantile: Go's shortest 'g'
 * with ".0" added when it has neither '.' nor an exponent; false when v is not
 * a float (then it is kept as written). */
static bool float_label_form(const char *v, size_t n, char *out, size_t cap)
{
    double f;
    if (!im_parse_float(v, n, &f)) return false;
    if (isnan(f)) return snprintf(out, cap, "NaN") > 0;
    if (isinf(f)) return snprintf(out, cap, "%s", f > 0 ? "+Inf" : "-Inf") > 0;
    size_t l = im_fmt_float_go(f, 'g', out, cap - 3);
    if (!memchr(out, '.', l) && !memchr(out, 'e', l)) memcpy(out + l, ".0", 3);
    return true;
}

/* raw with its le/quantile label in the float form (scrape_manager_opts_t
 * normalize_bucket_labels); raw itself when nothing changes. Takes over raw. */
static const im_labels_t *normalize_bucket_label(im_labels_builder_t *lb, const expo_entry_t *e,
                                                 const im_labels_t *raw)
{
    const char *ln = e->type == EXPO_TYPE_SUMMARY ? "quantile"
                     : (e->type == EXPO_TYPE_HISTOGRAM || e->type == EXPO_TYPE_GAUGEHISTOGRAM)
                         ? "le"
                         : NULL;
    if (!ln) return raw;
    const im_istr_t *v = im_labels_get(raw, ln);
    char f[64];
    if (!v || !float_label_form(v->s, v->len, f, sizeof f)) return raw;
    if (strlen(f) == v->len && memcmp(f, v->s, v->len) == 0) return raw;
    im_lb_load(lb, raw);
    im_lb_set(lb, ln, strlen(ln), f, strlen(f));
    const im_labels_t *n = im_lb_build(lb);
    im_labels_unref(raw);
    return n;
}

static bool parse_and_append(worker_t *w, target_t *t, expo_format_t fmt, storage_appender_t *a,
                             int64_t ts, scrape_result_t *r)
{
    const scrape_job_cfg_t *j = t->w.job;
    uint32_t gen = t->w.gen;
    im_err_t err;
    im_err_clear(&err);
    expo_limits_t lim;
    job_parse_limits(w->m, j, &lim);
    expo_parser_set_limits(w->parser, &lim);
    if (expo_parser_reset(w->parser, t->body.data ? t->body.data : "", t->body.len, fmt, &err) !=
        IM_OK) {
        snprintf(r->err, sizeof r->err, "%s", err.msg);
        return false;
    }
    im_buf_t key;
    im_buf_init(&key, 0);
    expo_entry_t e;
    int rc;
    bool ok = true;
    while ((rc = expo_parser_next(w->parser, &e, &err)) == 1) {
        if (e.kind != EXPO_ENTRY_SAMPLE) {
            if (e.kind != EXPO_ENTRY_EOF) meta_upsert(r, &e);
            continue;
        }
        r->scraped++;
        /* the raw series key: name, then \xff name \xfe value per label (one copy, no checks) */
        size_t klen = e.name.len;
        for (uint32_t i = 0; i < e.nlabels; i++)
            klen += 2 + e.labels[i].name.len + e.labels[i].value.len;
        key.len = 0;
        if (key.cap < klen + 2 && im_buf_reserve(&key, klen + 1) != IM_OK) im_oom(klen);
        char *kp = key.data;
        memcpy(kp, e.name.p, e.name.len);
        kp += e.name.len;
        for (uint32_t i = 0; i < e.nlabels; i++) {
            *kp++ = '\xff';
            memcpy(kp, e.labels[i].name.p, e.labels[i].name.len);
            kp += e.labels[i].name.len;
            *kp++ = '\xfe';
            memcpy(kp, e.labels[i].value.p, e.labels[i].value.len);
            kp += e.labels[i].value.len;
        }
        key.len = klen;
        bool created;
        scrape__sent_t *se = scrape__cache_get(&t->cache, key.data, key.len, &created);
        if (created || se->gen != gen) {
            const im_labels_t *raw = expo_entry_labels(&e, &w->lb2);
            if (w->m->opts.normalize_bucket_labels) raw = normalize_bucket_label(&w->lb2, &e, raw);
            if (se->ls) im_labels_unref(se->ls);
            se->ls = mutate(&w->lb, j, t, raw);
            im_labels_unref(raw);
            se->gen = gen;
            se->over_limit = 0;
            if (se->ls &&
                (j->label_limit || j->label_name_length_limit || j->label_value_length_limit))
                se->over_limit = !check_label_limits(j, se->ls, r->err, sizeof r->err);
        } else if (se->cur == t->iter) {
            r->dup++;
            continue; /* the same series twice in one scrape */
        }
        se->cur = t->iter;
        if (!se->ls) continue; /* dropped by metric_relabel_configs */
        if (se->over_limit) {
            if (!r->err[0]) check_label_limits(j, se->ls, r->err, sizeof r->err);
            r->limit = true;
            ok = false;
            break;
        }
        r->post++;
        if (j->sample_limit && r->post > j->sample_limit) {
            snprintf(r->err, sizeof r->err, "sample limit exceeded");
            r->limit = true;
            ok = false;
            break;
        }
        int64_t st = (e.has_ts && j->honor_timestamps) ? e.t_ms : ts;
        if (se->seen == 0 && created) r->added++;
        im_rc arc = app_add(a, &se->ref, se->ls, st, e.value);
        if (arc == IM_ELIMIT) { /* a storage limit (tsdb/limits.h): fails the scrape */
            snprintf(r->err, sizeof r->err, "%s", storage_appender_error(a));
            r->limit = true;
            ok = false;
            break;
        }
        if (arc == IM_EOUTOFORDER || arc == IM_EOUTOFBOUNDS)
            r->ooo++;
        else if (arc == IM_EDUPLICATE)
            r->dup++;
    }
    if (ok && rc < 0) {
        snprintf(r->err, sizeof r->err, "%s", err.msg[0] ? err.msg : "parse error");
        ok = false;
    }
    im_buf_free(&key);
    return ok;
}

static const char *http_reason(long code)
{
    switch (code) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
    }
}

/* Adds the report series (up, scrape_duration_seconds, ...) to a. */
static void report_add(target_t *t, storage_appender_t *a, int64_t ts, bool up, double dur,
                       const scrape_result_t *r)
{
    double v[REP_N] = {up ? 1 : 0, dur, (double)r->scraped, (double)r->post, (double)r->added};
    for (int i = 0; i < REP_N; i++) (void)app_add(a, &t->rep_ref[i], t->rep_ls[i], ts, v[i]);
}

/* The target's body buffer goes back to the pool (or is freed). */
static void body_release(scrape_manager_t *m, target_t *t)
{
    size_t max = t->body.max;
    im_buf_reset(&t->body);
    if (t->body.data && t->body.cap <= (8u << 20) && m->nbodypool < BODY_POOL) {
        m->bodypool[m->nbodypool++] = t->body; /* do not keep huge buffers */
        im_buf_init(&t->body, max);
    } else {
        im_buf_free(&t->body);
    }
}

/* Sets r's error to the body size limit's (the job's, or the default's). */
static void body_limit_error(scrape_manager_t *m, target_t *t, scrape_result_t *r)
{
    if (t->w.job->body_size_limit > 0) /* Prometheus' text */
        snprintf(r->err, sizeof r->err, "body size limit exceeded");
    else
        snprintf(r->err, sizeof r->err,
                 "body size limit exceeded (the default of %lld bytes; set "
                 "body_size_limit in the scrape config)",
                 (long long)body_cap(m, t->w.job));
    r->limit = true;
}

/* A gzip body (Content-Encoding: gzip; we ask for it and inflate it ourselves
 * with libdeflate, which needs the whole body and is about twice as fast as
 * zlib) is replaced by its inflated bytes, every member of it, within the body
 * size limit. Identity bodies (text never starts with 0x1f 0x8b) are left
 * alone. False with r's error set on a bad or too large body. */
static bool inflate_body(worker_t *w, target_t *t, scrape_result_t *r)
{
    const uint8_t *in = (const uint8_t *)t->body.data;
    size_t n = t->body.len;
    if (n < 2 || in[0] != 0x1f || in[1] != 0x8b) return true;
    size_t cap = (size_t)body_cap(w->m, t->w.job);
    if (!w->inflater) w->inflater = libdeflate_alloc_decompressor();
    if (!w->inflater) {
        snprintf(r->err, sizeof r->err, "gzip: out of memory");
        return false;
    }
    im_buf_reset(&w->gz);
    w->gz.max = 0;
    /* ISIZE (the last member's size mod 2^32) as the first guess */
    size_t guess = n >= 18 ? (size_t)in[n - 4] | (size_t)in[n - 3] << 8 | (size_t)in[n - 2] << 16 |
                                 (size_t)in[n - 1] << 24
                           : 4096;
    if (guess < n) guess = n * 4;
    size_t off = 0;
    while (off < n) {
        if (n - off < 2 || in[off] != 0x1f || in[off + 1] != 0x8b) {
            snprintf(r->err, sizeof r->err, "gzip: invalid data after member at byte %zu", off);
            return false;
        }
        for (;;) {
            size_t room = w->gz.cap > w->gz.len ? w->gz.cap - w->gz.len - 1 : 0;
            if (room < guess) {
                if (w->gz.len + guess > cap + 1) guess = cap + 1 - w->gz.len;
                if (im_buf_reserve(&w->gz, guess + 1) != IM_OK) {
                    snprintf(r->err, sizeof r->err, "gzip: out of memory");
                    return false;
                }
                room = w->gz.cap - w->gz.len - 1;
            }
            size_t used = 0, got = 0;
            enum libdeflate_result rc = libdeflate_gzip_decompress_ex(
                w->inflater, in + off, n - off, w->gz.data + w->gz.len, room, &used, &got);
            if (rc == LIBDEFLATE_SUCCESS) {
                w->gz.len += got;
                off += used;
                break;
            }
            if (rc != LIBDEFLATE_INSUFFICIENT_SPACE) {
                snprintf(r->err, sizeof r->err, "gzip: invalid compressed data");
                return false;
            }
            if (w->gz.len + room > cap) {
                body_limit_error(w->m, t, r);
                return false;
            }
            guess = room * 2;
        }
        if (w->gz.len > cap) {
            body_limit_error(w->m, t, r);
            return false;
        }
    }
    w->gz.data[w->gz.len] = 0;
    im_buf_t tmp = t->body; /* the target keeps its limit; the worker the other buffer */
    size_t max = t->body.max;
    t->body = w->gz;
    t->body.max = max;
    w->gz = tmp;
    return true;
}

/* ---- Content-Type ---- */

/* The format a response is parsed as. Content-Type "text/plain" and
 * "application/openmetrics-text" (media type only, any case and parameters) say
 * it. A missing, blank or other type: the job's fallback_scrape_protocol when
 * set; else, under strict_content_type (Prometheus 3), the scrape fails with
 * msg saying why and naming the key; else (2.x) the text format. */
static bool scrape_format(const scrape_manager_t *m, const scrape_job_cfg_t *j, const char *ct,
                          expo_format_t *fmt, char *msg, size_t msz)
{
    size_t len = ct ? strlen(ct) : 0, i = 0;
    while (i < len && (ct[i] == ' ' || ct[i] == '\t')) i++;
    size_t e = i;
    while (e < len && ct[e] != ';') e++;
    while (e > i && (ct[e - 1] == ' ' || ct[e - 1] == '\t')) e--;
    static const char om[] = "application/openmetrics-text", txt[] = "text/plain";
    if (e - i == sizeof om - 1 && !strncasecmp(ct + i, om, e - i)) {
        *fmt = EXPO_OPENMETRICS_1;
        return true;
    }
    if (e - i == sizeof txt - 1 && !strncasecmp(ct + i, txt, e - i)) {
        *fmt = EXPO_TEXT_004;
        return true;
    }
    cfg_scrape_proto_t fb = j->fallback_protocol;
    if (fb != CFG_PROTO_NONE) {
        *fmt = fb == CFG_PROTO_OPENMETRICS_0_0_1 || fb == CFG_PROTO_OPENMETRICS_1_0_0
                   ? EXPO_OPENMETRICS_1
                   : EXPO_TEXT_004;
        return true;
    }
    if (!m->opts.strict_content_type) {
        *fmt = EXPO_TEXT_004;
        return true;
    }
    if (e == i)
        snprintf(msg, msz,
                 "non-compliant scrape target sending blank Content-Type and no "
                 "fallback_scrape_protocol specified for target");
    else
        snprintf(msg, msz,
                 "received unsupported Content-Type \"%.200s\" and no fallback_scrape_protocol "
                 "specified for target",
                 ct);
    return false;
}

/* Processes t's finished scrape (on a worker, t in PROCESS): the transfer's
 * result and duration are in t->w. */
static void finish_scrape(worker_t *w, target_t *t)
{
    scrape_manager_t *m = w->m;
    int64_t ts = t->start_ms;
    double dur = t->w.dur_s;
    scrape_result_t r;
    memset(&r, 0, sizeof r);
    r.prevmeta = t->meta; /* only the target's processing changes t->meta */
    r.nprev = t->nmeta;
    CURLcode cc = t->w.cc;
    long code = t->w.code;
    t->iter++;
    bool ok = false;
    if (t->w.forced) {
        snprintf(r.err, sizeof r.err, "%s", t->w.forced_err);
        r.limit = true;
    } else if (cc != CURLE_OK) {
        if (t->body_over) {
            body_limit_error(m, t, &r);
        } else if (cc == CURLE_OPERATION_TIMEDOUT) {
            snprintf(r.err, sizeof r.err, "Get \"%s\": context deadline exceeded", t->url);
        } else {
            snprintf(r.err, sizeof r.err, "Get \"%s\": %s", t->url,
                     t->errbuf[0] ? t->errbuf : curl_easy_strerror(cc));
        }
    } else if (code != 200) {
        snprintf(r.err, sizeof r.err, "server returned HTTP status %ld %s", code,
                 http_reason(code));
    } else if (!inflate_body(w, t, &r)) {
        /* r.err (and r.limit) set */
    } else {
        expo_format_t fmt;
        ok = scrape_format(m, t->w.job, t->w.ct, &fmt, r.err, sizeof r.err);
        storage_appender_t *a = storage_appender(m->opts.storage);
        if (ok) ok = parse_and_append(w, t, fmt, a, ts, &r);
        if (ok) {
            /* one commit: the samples, the markers of series gone, the report */
            mark_stale_prev(m, t, a, ts, true);
            report_add(t, a, ts, true, dur, &r);
            im_err_t err;
            im_err_clear(&err);
            if (storage_appender_commit(a, &err) != IM_OK) {
                ok = false;
                snprintf(r.err, sizeof r.err, "appending to storage failed: %s", err.msg);
            }
        } else {
            storage_appender_rollback(a);
        }
    }
    if (!ok) {
        /* nothing of the scrape is stored: markers for the last one's series, up = 0 */
        storage_appender_t *a = storage_appender(m->opts.storage);
        mark_stale_prev(m, t, a, ts, false);
        report_add(t, a, ts, false, dur, &r);
        im_err_t err;
        im_err_clear(&err);
        if (storage_appender_commit(a, &err) != IM_OK)
            IM_WARN("Appending scrape report failed", "target=%s err=%s", im_logq(t->url),
                    im_logq(err.msg));
    }
    t->reported = true;
    cache_after(t, ok);
    t->prev = t->iter;
    pthread_mutex_lock(&m->mu);
    im_free(t->last_error);
    t->last_error = im_strdup(ok ? "" : r.err);
    t->last_scrape_ms = ts;
    t->last_scrape_ns = 0;
    t->last_dur = dur;
    t->health = ok ? SCRAPE_HEALTH_UP : SCRAPE_HEALTH_DOWN;
    if (ok) {
        meta_take_loans(&r, t->meta);
        meta_free(t->meta, t->nmeta);
        t->meta = r.meta;
        t->nmeta = r.nmeta;
        r.meta = NULL;
        r.nmeta = 0;
    }
    scrape_stats_t *s = &m->stats;
    s->scrapes_total++;
    if (!ok) s->scrapes_failed++;
    if (r.limit) s->limit_failures++;
    if (ok) s->samples_appended += r.post;
    s->samples_out_of_order += r.ooo;
    s->samples_duplicate += r.dup;
    s->duration_seconds_sum += dur;
    for (int i = 0; i < 10; i++)
        if (dur <= scrape_duration_bucket_bounds[i]) s->duration_buckets[i]++;
    pthread_mutex_unlock(&m->mu);
    meta_free(r.meta, r.nmeta); /* failed scrape: loans are not owned, so not freed */
    im_free(r.src);
    im_free(r.mtab);
    if (!ok) IM_DEBUG("Scrape failed", "target=%s err=%s", im_logq(t->url), im_logq(r.err));
}

/* ---- Transfers ---- */

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    target_t *t = ud;
    size_t len = sz * n;
    if (im_buf_append(&t->body, p, len) != IM_OK) {
        t->body_over = true;
        return 0;
    }
    return len;
}

/* The Accept header of a job's scrapes: its scrape_protocols in order, each
 * with a lower weight than the one before, then anything at the lowest. */
static void accept_header(const scrape_job_cfg_t *j, char *h, size_t hsz)
{
    static const cfg_scrape_proto_t def[] = {CFG_PROTO_OPENMETRICS_1_0_0,
                                             CFG_PROTO_OPENMETRICS_0_0_1, CFG_PROTO_TEXT_1_0_0,
                                             CFG_PROTO_TEXT_0_0_4};
    const cfg_scrape_proto_t *p = j->nprotocols ? j->protocols : def;
    size_t n = j->nprotocols ? j->nprotocols : IM_ARRAY_LEN(def);
    size_t o = (size_t)snprintf(h, hsz, "Accept: ");
    for (size_t i = 0; i < n && o < hsz; i++) {
        int q = 10 - (int)i; /* tenths: 1.0, 0.9, ... (at most 5 protocols) */
        if (q == 10)
            o += (size_t)snprintf(h + o, hsz - o, "%s,", cfg_scrape_proto_media(p[i]));
        else
            o += (size_t)snprintf(h + o, hsz - o, "%s;q=0.%d,", cfg_scrape_proto_media(p[i]), q);
    }
    if (o < hsz) snprintf(h + o, hsz - o, "*/*;q=0.1");
}

/* Sets the handle up for t's job. The HTTP client configuration (auth, TLS,
 * proxy, redirects) comes from config/http_client.h; it reads secret files, so
 * a job with password_file / credentials_file is set up again before every
 * scrape (rotated secrets are used at once). Returns false with msg filled
 * when the set-up failed (the scrape then fails with msg). */
static bool target_setup_curl(scrape_manager_t *m, target_t *t, char *msg, size_t msgcap)
{
    const scrape_job_cfg_t *j = t->job;
    cfg_http_lists_free(&t->lists);
    struct curl_slist **hdrs = &t->lists.hdrs;
    char h[512];
    accept_header(j, h, sizeof h);
    *hdrs = curl_slist_append(*hdrs, h);
    snprintf(h, sizeof h, "X-Prometheus-Scrape-Timeout-Seconds: %g",
             (double)t->timeout_ms / 1000.0);
    *hdrs = curl_slist_append(*hdrs, h);
    im_err_t err;
    im_err_clear(&err);
    bool ok = cfg_http_client_handle(&j->http, &t->easy, t->url, on_body, t, t->errbuf, &t->lists,
                                     &err) == IM_OK;
    if (!ok && msg) snprintf(msg, msgcap, "%.*s", (int)(msgcap - 1), err.msg);
    CURL *c = t->easy;
    curl_easy_setopt(c, CURLOPT_PRIVATE, t);
    /* gzip asked for by hand and inflated by inflate_body (libdeflate), not by curl */
    *hdrs = curl_slist_append(*hdrs, "Accept-Encoding: gzip");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, *hdrs);
    curl_easy_setopt(c, CURLOPT_HTTP_CONTENT_DECODING, 0L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, m->user_agent);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)t->timeout_ms);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    t->body.max = (size_t)body_cap(m, j);
    return ok;
}

static void dispatch(scrape_manager_t *m, target_t *t, CURLcode cc, const char *forced);

static void start_scrape(scrape_manager_t *m, target_t *t, int64_t now)
{
    const cfg_http_client_t *hc = &t->job->http;
    char msg[128];
    if ((!t->easy || hc->auth_cred_file || hc->basic_pass_file) &&
        !target_setup_curl(m, t, msg, sizeof msg)) {
        t->start_ms = now;
        t->start_ns = im_mono_ns();
        dispatch(m, t, CURLE_OK, msg);
        return;
    }
    t->errbuf[0] = 0;
    t->body_over = false;
    if (!t->body.data && m->nbodypool) {
        size_t max = t->body.max;
        t->body = m->bodypool[--m->nbodypool];
        t->body.max = max;
    }
    im_buf_reset(&t->body);
    t->start_ms = now;
    t->start_ns = im_mono_ns();
    t->state = T_FETCH;
    curl_multi_add_handle(m->multi, t->easy);
}

/* ---- The work queue ---- */

/* Hands t's finished scrape to the workers (scrape thread). cc: the transfer's
 * result; forced (non-NULL): fail with this message instead (no transfer). */
static void dispatch(scrape_manager_t *m, target_t *t, CURLcode cc, const char *forced)
{
    scrape_work_t *w = &t->w;
    w->cfg = scrape_config_ref(m->cfg);
    w->job = t->job;
    w->gen = t->gen;
    w->cc = cc;
    w->code = 0;
    w->ct = NULL;
    w->dur_s = (double)(im_mono_ns() - t->start_ns) / 1e9;
    w->forced = forced != NULL;
    w->forced_err[0] = 0;
    if (forced) {
        snprintf(w->forced_err, sizeof w->forced_err, "%s", forced);
    } else {
        char *ct = NULL;
        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &w->code);
        curl_easy_getinfo(t->easy, CURLINFO_CONTENT_TYPE, &ct);
        if (ct) w->ct = im_strdup(ct);
    }
    t->state = T_PROCESS;
    m->nprocessing++;
    pthread_mutex_lock(&m->qmu);
    t->qnext = NULL;
    if (m->qtail)
        m->qtail->qnext = t;
    else
        m->qhead = t;
    m->qtail = t;
    pthread_cond_signal(&m->qcv);
    pthread_mutex_unlock(&m->qmu);
}

static void *worker_thread(void *arg)
{
    worker_t *w = arg;
    scrape_manager_t *m = w->m;
    pthread_mutex_lock(&m->qmu);
    for (;;) {
        while (!m->qhead && !m->qstop) pthread_cond_wait(&m->qcv, &m->qmu);
        if (!m->qhead) break; /* qstop, nothing left */
        target_t *t = m->qhead;
        m->qhead = t->qnext;
        if (!m->qhead) m->qtail = NULL;
        pthread_mutex_unlock(&m->qmu);
        finish_scrape(w, t);
        pthread_mutex_lock(&m->qmu);
        t->qnext = m->done;
        m->done = t;
        curl_multi_wakeup(m->multi);
    }
    pthread_mutex_unlock(&m->qmu);
    return NULL;
}

static void target_free(target_t *t);
static void target_end_staleness(scrape_manager_t *m, target_t *t);

/* Takes back the targets the workers processed (scrape thread); returns true if any. */
static bool drain_done(scrape_manager_t *m)
{
    pthread_mutex_lock(&m->qmu);
    target_t *list = m->done;
    m->done = NULL;
    pthread_mutex_unlock(&m->qmu);
    bool any = list != NULL;
    while (list) {
        target_t *t = list;
        list = t->qnext;
        t->qnext = NULL;
        t->state = T_IDLE;
        m->nprocessing--;
        body_release(m, t);
        im_free(t->w.ct);
        t->w.ct = NULL;
        scrape_config_free(t->w.cfg);
        t->w.cfg = NULL;
        t->w.job = NULL;
        if (t->removed) {
            target_t **pp = &m->orphans;
            while (*pp != t) pp = &(*pp)->next;
            *pp = t->next;
            target_end_staleness(m, t);
            target_free(t);
            continue;
        }
        if (t->needs_setup && t->easy) (void)target_setup_curl(m, t, NULL, 0);
        t->needs_setup = false;
    }
    return any;
}

/* ---- Targets ---- */

static void target_free(target_t *t)
{
    scrape__cache_free(&t->cache);
    if (t->easy) curl_easy_cleanup(t->easy);
    cfg_http_lists_free(&t->lists);
    im_buf_free(&t->body);
    if (t->labels) im_labels_unref(t->labels);
    if (t->discovered) im_labels_unref(t->discovered);
    for (int i = 0; i < REP_N; i++)
        if (t->rep_ls[i]) im_labels_unref(t->rep_ls[i]);
    im_free(t->url);
    im_free(t->last_error);
    meta_free(t->meta, t->nmeta);
    im_free(t);
}

/* Staleness markers for everything the target wrote last (removal, shutdown). */
static void target_end_staleness(scrape_manager_t *m, target_t *t)
{
    if (!t->reported) return;
    int64_t now = im_now_ms();
    storage_appender_t *a = storage_appender(m->opts.storage);
    mark_stale_prev(m, t, a, now, false);
    for (int i = 0; i < REP_N; i++)
        (void)app_add(a, &t->rep_ref[i], t->rep_ls[i], now, storage_stale_nan());
    (void)storage_appender_commit(a, NULL);
}

static int64_t first_slot(uint64_t id, int64_t interval, int64_t now)
{
    int64_t off = (int64_t)(id % (uint64_t)interval);
    int64_t base = now - now % interval;
    int64_t t = base + off;
    if (t < now) t += interval;
    return t;
}

/* Turns one discovered label set (taken) into a target of job ji on the new list:
 * relabelled, deduplicated (collapse: a duplicate's discovered labels replace the
 * first's, as Prometheus' scrape pool does; Kubernetes SD), kept alive when it
 * already existed. */
static void add_one(scrape_manager_t *m, size_t ji, const im_labels_t *disc, bool collapse,
                    target_t **newlist)
{
    scrape_job_cfg_t *j = &m->cfg->jobs[ji];
    const im_labels_t *ls;
    char *url;
    im_err_t err;
    im_err_clear(&err);
    if (scrape_target_labels(j, disc, &ls, &url, &err) != IM_OK) {
        IM_WARN("Creating target failed", "job=%s err=%s", im_logq(j->job_name), im_logq(err.msg));
        im_labels_unref(disc);
        return;
    }
    /* the discovered labels as Prometheus shows them: with the job defaults */
    im_labels_builder_t db;
    im_lb_init(&db);
    im_lb_load(&db, disc);
    char iv[64], tv[64];
    im_duration_format(j->interval_ms, iv, sizeof iv);
    im_duration_format(j->timeout_ms, tv, sizeof tv);
    const char *defs[][2] = {{"job", j->job_name},
                             {"__scrape_interval__", iv},
                             {"__scrape_timeout__", tv},
                             {"__metrics_path__", j->metrics_path},
                             {"__scheme__", j->scheme}};
    for (size_t d = 0; d < IM_ARRAY_LEN(defs); d++)
        if (!im_lb_get(&db, defs[d][0]))
            im_lb_set(&db, defs[d][0], strlen(defs[d][0]), defs[d][1], strlen(defs[d][1]));
    for (size_t p = 0; p < j->nparams; p++) {
        char pn[512];
        snprintf(pn, sizeof pn, "__param_%s", j->param_names[p]);
        if (!im_lb_get(&db, pn))
            im_lb_set(&db, pn, strlen(pn), j->param_values[p], strlen(j->param_values[p]));
    }
    im_labels_unref(disc);
    disc = im_lb_build(&db);
    im_lb_free(&db);
    if (!ls) {
        m->dropped = im_realloc(m->dropped, (m->ndropped + 1) * sizeof *m->dropped);
        m->dropped[m->ndropped].job = im_strdup(j->job_name);
        m->dropped[m->ndropped++].discovered = disc;
        return;
    }
    uint64_t id = im_hash_mix(ls->hash, im_hash(url, strlen(url)));
    /* already in the new list (duplicate target)? */
    bool dup = false;
    for (target_t *x = *newlist; x; x = x->next)
        if (x->id == id) dup = true;
    target_t *t = NULL;
    if (!dup) {
        target_t **pp = &m->targets;
        while (*pp) {
            if ((*pp)->id == id) {
                t = *pp;
                *pp = t->next;
                break;
            }
            pp = &(*pp)->next;
        }
    }
    if (dup && collapse) {
        for (target_t *x = *newlist; x; x = x->next)
            if (x->id == id) {
                im_labels_unref(x->discovered);
                x->discovered = disc;
                disc = NULL;
                break;
            }
    }
    if (dup) {
        im_labels_unref(ls);
        im_labels_unref(disc);
        im_free(url);
        return;
    }
    if (t) {
        im_labels_unref(ls);
        im_free(url);
        im_labels_unref(t->discovered);
        t->discovered = disc;
        if (t->job != j) t->gen++;
        t->job = j;
        t->job_idx = ji;
        if (t->state != T_IDLE)
            t->needs_setup = true; /* not under a transfer or a worker */
        else if (t->easy)
            (void)target_setup_curl(m, t, NULL, 0);
    } else {
        t = im_calloc(1, sizeof *t);
        t->labels = ls;
        t->discovered = disc;
        t->url = url;
        t->id = id;
        t->job = j;
        t->job_idx = ji;
        t->last_error = im_strdup("");
        im_buf_init(&t->body, 0);
        scrape__cache_init(&t->cache);
        for (int i = 0; i < REP_N; i++) {
            im_labels_builder_t rb;
            im_lb_init(&rb);
            im_lb_load(&rb, ls);
            im_lb_set(&rb, IM_METRIC_NAME, 8, rep_names[i], strlen(rep_names[i]));
            t->rep_ls[i] = im_lb_build(&rb);
            im_lb_free(&rb);
        }
    }
    /* interval/timeout may come from relabelled __scrape_* labels */
    const im_istr_t *iv2 = im_labels_get(t->discovered, "__scrape_interval__");
    int64_t ims = j->interval_ms, tms = j->timeout_ms;
    (void)iv2;
    if (t->interval_ms != ims || t->next_ms == 0) {
        t->interval_ms = ims;
        t->next_ms = first_slot(t->id, ims, im_now_ms());
    }
    t->timeout_ms = tms;
    t->alive = true;
    t->next = *newlist;
    *newlist = t;
}

static void add_groups(scrape_manager_t *m, size_t ji, const scrape_target_group_t *groups,
                       size_t ng, bool is_file, target_t **newlist)
{
    for (size_t g = 0; g < ng; g++) {
        const scrape_target_group_t *grp = &groups[g];
        for (size_t k = 0; k < grp->ntargets; k++) {
            im_labels_builder_t lb;
            im_lb_init(&lb);
            im_lb_load(&lb, grp->labels);
            im_lb_set(&lb, "__address__", 11, grp->targets[k], strlen(grp->targets[k]));
            if (is_file) im_lb_set(&lb, "__meta_filepath", 15, grp->source, strlen(grp->source));
            const im_labels_t *disc = im_lb_build(&lb);
            im_lb_free(&lb);
            add_one(m, ji, disc, false, newlist);
        }
    }
}

static void sync_targets(scrape_manager_t *m)
{
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->ndropped; i++) {
        im_free(m->dropped[i].job);
        im_labels_unref(m->dropped[i].discovered);
    }
    im_free(m->dropped);
    m->dropped = NULL;
    m->ndropped = 0;
    target_t *newlist = NULL;
    for (size_t ji = 0; m->cfg && ji < m->cfg->njobs; ji++) {
        scrape_job_cfg_t *j = &m->cfg->jobs[ji];
        add_groups(m, ji, j->static_groups, j->nstatic, false, &newlist);
        if (m->fsd)
            for (size_t f = 0; f < m->fsd[ji].nfiles; f++)
                add_groups(m, ji, m->fsd[ji].files[f].groups, m->fsd[ji].files[f].ngroups, true,
                           &newlist);
        for (size_t k = 0; m->ksd && k < m->ksd[ji].n; k++) {
            ksd_t *s = &m->ksd[ji].v[k];
            for (size_t t = 0; t < s->nsnap; t++)
                add_one(m, ji, im_labels_ref(s->snap[t]), true, &newlist);
        }
    }
    target_t *old = m->targets;
    /* reverse to keep config order */
    target_t *rev = NULL;
    while (newlist) {
        target_t *n = newlist->next;
        newlist->next = rev;
        rev = newlist;
        newlist = n;
    }
    m->targets = rev;
    /* target_limit: every target of a job over its limit fails, as in Prometheus */
    for (target_t *t = rev; t; t = t->next) {
        size_t cnt = 0;
        for (target_t *u = rev; u; u = u->next)
            if (u->job == t->job) cnt++;
        t->forced_err[0] = 0;
        if (t->job->target_limit && cnt > t->job->target_limit)
            snprintf(t->forced_err, sizeof t->forced_err,
                     "target_limit exceeded (number of targets: %zu, limit: %llu)", cnt,
                     (unsigned long long)t->job->target_limit);
    }
    uint64_t na = 0;
    for (target_t *t = rev; t; t = t->next) na++;
    m->stats.targets_active = na;
    m->stats.targets_dropped = m->ndropped;
    pthread_mutex_unlock(&m->mu);
    while (old) {
        target_t *n = old->next;
        if (old->state == T_PROCESS) { /* a worker has it: ended when it comes back */
            old->removed = true;
            old->next = m->orphans;
            m->orphans = old;
            old = n;
            continue;
        }
        if (old->state == T_FETCH) {
            curl_multi_remove_handle(m->multi, old->easy);
            old->state = T_IDLE;
        }
        target_end_staleness(m, old);
        target_free(old);
        old = n;
    }
}

/* ---- file_sd ---- */

static void fsd_free(fsd_state_t *s)
{
    for (size_t i = 0; i < s->nfiles; i++) {
        for (size_t g = 0; g < s->files[i].ngroups; g++) {
            scrape_target_group_t *grp = &s->files[i].groups[g];
            for (size_t k = 0; k < grp->ntargets; k++) im_free(grp->targets[k]);
            im_free(grp->targets);
            if (grp->labels) im_labels_unref(grp->labels);
            im_free(grp->source);
        }
        im_free(s->files[i].groups);
        im_free(s->files[i].path);
    }
    im_free(s->files);
    s->files = NULL;
    s->nfiles = 0;
}

/* Reads one SD file (JSON or YAML list of {targets, labels}). */
static im_rc fsd_read(const char *path, scrape_target_group_t **out, size_t *nout, im_err_t *err)
{
    *out = NULL;
    *nout = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return im_err_set(err, IM_EIO, "cannot open %s", path);
    im_buf_t b;
    im_buf_init(&b, 64u << 20);
    char tmp[65536];
    size_t r;
    im_rc rc = IM_OK;
    while ((r = fread(tmp, 1, sizeof tmp, f)) > 0)
        if (im_buf_append(&b, tmp, r) != IM_OK) {
            rc = im_err_set(err, IM_ELIMIT, "%s is too large", path);
            break;
        }
    fclose(f);
    cfg_node_t *root = NULL;
    /* JSON is YAML, so the YAML parser reads both */
    if (!rc) rc = cfg_parse_yaml(b.data ? b.data : "", b.len, path, &root, err);
    im_buf_free(&b);
    if (rc) return rc;
    if (!root) return IM_OK;
    if (root->type != CFG_NODE_SEQ) {
        cfg_node_free(root);
        return im_err_set(err, IM_EPARSE, "%s: expected a list of target groups", path);
    }
    scrape_target_group_t *gs = im_calloc(root->nkids ? root->nkids : 1, sizeof *gs);
    size_t ng = 0;
    for (size_t i = 0; i < root->nkids && !rc; i++) {
        cfg_node_t *g = root->kids[i];
        scrape_target_group_t *grp = &gs[ng++];
        grp->source = im_strdup(path);
        grp->labels = im_labels_empty();
        if (g->type != CFG_NODE_MAP) {
            rc = im_err_setpos(err, IM_EPARSE, g->line, g->col, "target group must be a mapping");
            break;
        }
        for (size_t k = 0; k < g->nkids && !rc; k += 2) {
            const char *key = g->kids[k]->str;
            cfg_node_t *v = g->kids[k + 1];
            if (key && !strcmp(key, "targets") && v->type == CFG_NODE_SEQ) {
                grp->targets = im_calloc(v->nkids ? v->nkids : 1, sizeof(char *));
                for (size_t t = 0; t < v->nkids; t++)
                    if (v->kids[t]->type == CFG_NODE_SCALAR)
                        grp->targets[grp->ntargets++] = im_strdup(v->kids[t]->str);
            } else if (key && !strcmp(key, "labels") && v->type == CFG_NODE_MAP) {
                im_labels_builder_t lb;
                im_lb_init(&lb);
                for (size_t t = 0; t < v->nkids; t += 2) {
                    const char *ln = v->kids[t]->str, *lv = v->kids[t + 1]->str;
                    if (!ln || !lv || !im_label_name_valid(ln, strlen(ln))) {
                        rc = im_err_setpos(err, IM_EPARSE, v->kids[t]->line, v->kids[t]->col,
                                           "invalid label in target group");
                        break;
                    }
                    im_lb_set(&lb, ln, strlen(ln), lv, strlen(lv));
                }
                grp->labels = im_lb_build(&lb);
                im_lb_free(&lb);
            } else if (!(v->type == CFG_NODE_SCALAR && v->plain && v->str[0] == 0)) {
                rc = im_err_setpos(err, IM_EPARSE, g->kids[k]->line, g->kids[k]->col,
                                   "unknown field %s in target group", key ? key : "?");
            }
        }
    }
    cfg_node_free(root);
    if (rc) {
        for (size_t g = 0; g < ng; g++) {
            for (size_t k = 0; k < gs[g].ntargets; k++) im_free(gs[g].targets[k]);
            im_free(gs[g].targets);
            if (gs[g].labels) im_labels_unref(gs[g].labels);
            im_free(gs[g].source);
        }
        im_free(gs);
        return rc;
    }
    *out = gs;
    *nout = ng;
    return IM_OK;
}

/* Re-globs and re-reads changed files; returns true if anything changed. */
static bool fsd_refresh(scrape_manager_t *m, bool force)
{
    bool changed = false;
    int64_t now = im_now_ms();
    for (size_t ji = 0; m->cfg && ji < m->cfg->njobs; ji++) {
        scrape_job_cfg_t *j = &m->cfg->jobs[ji];
        if (!j->nfile_sd) continue;
        fsd_state_t *st = &m->fsd[ji];
        bool due = force || now >= st->next_refresh_ms;
        if (due) {
            int64_t r = j->file_sd[0].refresh_ms;
            st->next_refresh_ms = now + r;
        }
        /* the current set of paths */
        glob_t gl;
        memset(&gl, 0, sizeof gl);
        for (size_t f = 0; f < j->nfile_sd; f++)
            for (size_t p = 0; p < j->file_sd[f].nfiles; p++)
                glob(j->file_sd[f].files[p], GLOB_NOSORT | (gl.gl_pathc ? GLOB_APPEND : 0), NULL,
                     &gl);
        fsd_state_t ns = {im_calloc(gl.gl_pathc + 1, sizeof(fsd_file_t)), 0, st->next_refresh_ms};
        for (size_t p = 0; p < gl.gl_pathc; p++) {
            const char *path = gl.gl_pathv[p];
            bool seen = false;
            for (size_t q = 0; q < ns.nfiles; q++)
                if (!strcmp(ns.files[q].path, path)) seen = true;
            if (seen) continue;
            struct stat sb;
            if (stat(path, &sb) != 0) continue;
            int64_t mt = (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
            fsd_file_t *old = NULL;
            for (size_t q = 0; q < st->nfiles; q++)
                if (!strcmp(st->files[q].path, path)) old = &st->files[q];
            fsd_file_t *nf = &ns.files[ns.nfiles++];
            nf->path = im_strdup(path);
            if (old && !due && old->mtime_ns == mt && old->size == sb.st_size) {
                nf->mtime_ns = old->mtime_ns;
                nf->size = old->size;
                nf->groups = old->groups;
                nf->ngroups = old->ngroups;
                old->groups = NULL;
                old->ngroups = 0;
                continue;
            }
            im_err_t err;
            im_err_clear(&err);
            pthread_mutex_lock(&m->mu);
            m->stats.sd_file_reads++;
            pthread_mutex_unlock(&m->mu);
            if (fsd_read(path, &nf->groups, &nf->ngroups, &err) != IM_OK) {
                char eb[700];
                IM_ERROR("Error reading file_sd file", "file=%s err=%s", im_logq(path),
                         im_logq(im_err_format(&err, eb, sizeof eb)));
                pthread_mutex_lock(&m->mu);
                m->stats.sd_file_errors++;
                pthread_mutex_unlock(&m->mu);
                if (old) { /* keep the last good groups */
                    nf->groups = old->groups;
                    nf->ngroups = old->ngroups;
                    old->groups = NULL;
                    old->ngroups = 0;
                }
            }
            nf->mtime_ns = mt;
            nf->size = sb.st_size;
            changed = true;
        }
        if (ns.nfiles != st->nfiles) changed = true;
        globfree(&gl);
        fsd_free(st);
        *st = ns;
    }
    return changed;
}

/* ---- kubernetes_sd ---- */

static void ksd_clear(ksd_t *s)
{
    k8s_discoverer_stop(s->d);
    for (size_t i = 0; i < s->nsnap; i++) im_labels_unref(s->snap[i]);
    im_free(s->snap);
    im_free(s->key);
    memset(s, 0, sizeof *s);
}

static void ksd_free_all(ksd_job_t *v, size_t njobs)
{
    for (size_t j = 0; v && j < njobs; j++) {
        for (size_t k = 0; k < v[j].n; k++) ksd_clear(&v[j].v[k]);
        im_free(v[j].v);
    }
    im_free(v);
}

/* Discoverers for the jobs of cfg: an unchanged config keeps its running
 * discoverer (and its targets) from old; the rest of old is stopped. */
static ksd_job_t *ksd_start(scrape_manager_t *m, const scrape_config_t *cfg, ksd_job_t *old,
                            size_t nold)
{
    ksd_job_t *v = im_calloc(cfg->njobs + 1, sizeof *v);
    for (size_t ji = 0; ji < cfg->njobs; ji++) {
        const scrape_job_cfg_t *j = &cfg->jobs[ji];
        v[ji].v = im_calloc(j->nk8s_sd + 1, sizeof(ksd_t));
        for (size_t k = 0; k < j->nk8s_sd; k++) {
            im_buf_t kb;
            im_buf_init(&kb, 0);
            (void)im_buf_printf(&kb, "%s\x1f%zu\x1f", j->job_name, k);
            k8s_sd_cfg_key(&j->k8s_sd[k], &kb);
            ksd_t *s = &v[ji].v[v[ji].n++];
            for (size_t oj = 0; old && oj < nold && !s->key; oj++)
                for (size_t ok = 0; ok < old[oj].n; ok++)
                    if (old[oj].v[ok].key && old[oj].v[ok].d &&
                        !strcmp(old[oj].v[ok].key, kb.data)) {
                        *s = old[oj].v[ok];
                        memset(&old[oj].v[ok], 0, sizeof old[oj].v[ok]);
                        break;
                    }
            if (s->key) {
                im_buf_free(&kb);
                continue;
            }
            s->key = im_buf_steal(&kb, NULL);
            im_err_t err;
            im_err_clear(&err);
            if (k8s_discoverer_start(&j->k8s_sd[k], j->job_name, &m->k8s_limits, &s->d, &err) !=
                IM_OK)
                IM_ERROR("Cannot start Kubernetes discovery", "job=%s role=%s err=%s",
                         im_logq(j->job_name), k8s_role_name(j->k8s_sd[k].role), im_logq(err.msg));
        }
    }
    ksd_free_all(old, nold);
    return v;
}

/* Takes the targets of discoverers whose groups changed; true if any did. */
static bool ksd_refresh(scrape_manager_t *m)
{
    bool changed = false;
    for (size_t ji = 0; m->ksd && m->cfg && ji < m->cfg->njobs; ji++)
        for (size_t k = 0; k < m->ksd[ji].n; k++) {
            ksd_t *s = &m->ksd[ji].v[k];
            if (!s->d) continue;
            uint64_t g = k8s_discoverer_generation(s->d);
            if (g == s->gen) continue;
            for (size_t i = 0; i < s->nsnap; i++) im_labels_unref(s->snap[i]);
            im_free(s->snap);
            s->nsnap = k8s_discoverer_snapshot(s->d, &s->snap);
            s->gen = g;
            changed = true;
        }
    return changed;
}

/* ---- The thread ---- */

static void take_pending(scrape_manager_t *m)
{
    pthread_mutex_lock(&m->mu);
    scrape_config_t *p = m->pending;
    m->pending = NULL;
    pthread_mutex_unlock(&m->mu);
    if (!p) return;
    scrape_config_t *old = m->cfg;
    fsd_state_t *oldfsd = m->fsd;
    size_t oldn = old ? old->njobs : 0;
    m->cfg = p;
    m->fsd = im_calloc(p->njobs + 1, sizeof *m->fsd);
    fsd_refresh(m, true);
    m->ksd = ksd_start(m, p, m->ksd, oldn);
    (void)ksd_refresh(m);
    /* targets still point at old jobs until sync replaces them */
    sync_targets(m);
    for (size_t i = 0; oldfsd && i < oldn; i++) fsd_free(&oldfsd[i]);
    im_free(oldfsd);
    scrape_config_free(old);
    pthread_mutex_lock(&m->mu);
    m->stats.reloads++;
    pthread_mutex_unlock(&m->mu);
}

static void *scrape_thread(void *arg)
{
    scrape_manager_t *m = arg;
    for (;;) {
        pthread_mutex_lock(&m->mu);
        bool stop = m->stop;
        bool pend = m->pending != NULL;
        pthread_mutex_unlock(&m->mu);
        if (stop) break;
        if (drain_done(m)) m->next_due_ms = 0; /* targets idle again */
        if (pend) {
            take_pending(m);
            m->next_due_ms = 0;
        }
        int64_t now = im_now_ms();
        if (now >= m->next_fsd_check_ms) {
            m->next_fsd_check_ms = now + 1000;
            bool fch = m->cfg && fsd_refresh(m, false);
            bool kch = m->cfg && ksd_refresh(m);
            if (fch || kch) sync_targets(m);
            m->next_due_ms = 0;
        }
        /* the walk over the targets only when one may be due (or one finished) */
        int64_t wait = 1000;
        bool walk = now >= m->next_due_ms;
        for (target_t *t = walk ? m->targets : NULL; t; t = t->next) {
            if (t->state != T_IDLE) continue;
            if (t->next_ms <= now && t->forced_err[0]) {
                t->start_ms = now;
                t->start_ns = im_mono_ns();
                dispatch(m, t, CURLE_OK, t->forced_err);
                while (t->next_ms <= now) t->next_ms += t->interval_ms;
            } else if (t->next_ms <= now) {
                start_scrape(m, t, now);
                /* next slot strictly in the future, skipping missed ones */
                while (t->next_ms <= now) t->next_ms += t->interval_ms;
            }
            wait = IM_MIN(wait, t->next_ms - now);
        }
        if (walk)
            m->next_due_ms = now + wait;
        else
            wait = m->next_due_ms - now;
        if (wait < 0) wait = 0;
        int running = 0;
        curl_multi_perform(m->multi, &running);
        CURLMsg *msg;
        int left;
        bool any = false;
        while ((msg = curl_multi_info_read(m->multi, &left))) {
            if (msg->msg != CURLMSG_DONE) continue;
            target_t *t = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
            CURLcode cc = msg->data.result;
            curl_multi_remove_handle(m->multi, msg->easy_handle);
            dispatch(m, t, cc, NULL);
            any = true;
        }
        if (any) continue;
        curl_multi_poll(m->multi, NULL, 0, (int)IM_MIN(wait, 1000), NULL);
    }
    /* shutdown: cancel transfers, take back what the workers have, staleness */
    for (target_t *t = m->targets; t; t = t->next)
        if (t->state == T_FETCH) {
            curl_multi_remove_handle(m->multi, t->easy);
            t->state = T_IDLE;
        }
    while (m->nprocessing) {
        if (!drain_done(m)) curl_multi_poll(m->multi, NULL, 0, 100, NULL);
    }
    if (m->stop_mark_stale)
        for (target_t *t = m->targets; t; t = t->next) target_end_staleness(m, t);
    return NULL;
}

/* ---- Public ---- */

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_ALL);
}

im_rc scrape_manager_new(const scrape_manager_opts_t *opts, scrape_manager_t **out, im_err_t *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, curl_init_once);
    scrape_manager_t *m = im_calloc(1, sizeof *m);
    m->opts = *opts;
    m->user_agent = im_strdup(opts->user_agent ? opts->user_agent : "infermon/0.1.0");
    pthread_mutex_init(&m->mu, NULL);
    m->multi = curl_multi_init();
    if (!m->multi) {
        im_free(m->user_agent);
        im_free(m);
        return im_err_set(err, IM_ERR, "curl_multi_init failed");
    }
    curl_multi_setopt(m->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
    pthread_mutex_init(&m->qmu, NULL);
    pthread_cond_init(&m->qcv, NULL);
    m->nworkers = scrape_default_workers();
    *out = m;
    return IM_OK;
}

static void workers_stop(scrape_manager_t *m)
{
    pthread_mutex_lock(&m->qmu);
    m->qstop = true;
    pthread_cond_broadcast(&m->qcv);
    pthread_mutex_unlock(&m->qmu);
    for (size_t i = 0; i < m->nstarted; i++) pthread_join(m->workers[i].thread, NULL);
    m->nstarted = 0;
}

im_rc scrape_manager_set_workers(scrape_manager_t *m, size_t n, im_err_t *err)
{
    if (m->started || m->workers)
        return im_err_set(err, IM_EINVAL, "the scrape workers are already running");
    if (n > SCRAPE_MAX_WORKERS)
        return im_err_set(err, IM_EINVAL, "%zu scrape workers: at most %d", n, SCRAPE_MAX_WORKERS);
    m->nworkers = n ? n : scrape_default_workers();
    return IM_OK;
}

im_rc scrape_manager_start(scrape_manager_t *m, im_err_t *err)
{
    if (m->started) return IM_OK;
    if (!m->workers) {
        m->workers = im_calloc(m->nworkers, sizeof *m->workers);
        for (size_t i = 0; i < m->nworkers; i++) {
            worker_t *w = &m->workers[i];
            w->m = m;
            w->parser = expo_parser_new(NULL);
            im_lb_init(&w->lb);
            im_lb_init(&w->lb2);
        }
    }
    m->qstop = false;
    for (; m->nstarted < m->nworkers; m->nstarted++)
        if (pthread_create(&m->workers[m->nstarted].thread, NULL, worker_thread,
                           &m->workers[m->nstarted]) != 0) {
            size_t k = m->nstarted + 1;
            workers_stop(m);
            return im_err_set(err, IM_ERR,
                              "cannot start scrape worker %zu of %zu; lower --scrape.workers", k,
                              m->nworkers);
        }
    if (pthread_create(&m->thread, NULL, scrape_thread, m) != 0) {
        workers_stop(m);
        return im_err_set(err, IM_ERR, "cannot start the scrape thread");
    }
    m->started = true;
    return IM_OK;
}

size_t scrape_default_workers(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    /* at least 2: one huge target's parse never holds up the others, even on one CPU */
    if (n < 2) n = 2;
    if (n > 8) n = 8;
    return (size_t)n;
}

size_t scrape_manager_workers(const scrape_manager_t *m)
{
    return m->nworkers;
}

void scrape_manager_apply(scrape_manager_t *m, scrape_config_t *cfg)
{
    scrape_config_ref(cfg);
    pthread_mutex_lock(&m->mu);
    scrape_config_t *old = m->pending;
    m->pending = cfg;
    pthread_mutex_unlock(&m->mu);
    scrape_config_free(old);
    curl_multi_wakeup(m->multi);
}

void scrape_manager_set_k8s_limits(scrape_manager_t *m, const k8s_limits_t *lim)
{
    m->k8s_limits = *lim;
}

void scrape_manager_stop(scrape_manager_t *m, bool mark_stale)
{
    if (!m->started) return;
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    m->stop_mark_stale = mark_stale;
    pthread_mutex_unlock(&m->mu);
    curl_multi_wakeup(m->multi);
    pthread_join(m->thread, NULL);
    workers_stop(m); /* the scrape thread took back every target in PROCESS */
    m->started = false;
}

void scrape_manager_free(scrape_manager_t *m)
{
    if (!m) return;
    scrape_manager_stop(m, false);
    for (target_t *t = m->targets, *n; t; t = n) {
        n = t->next;
        if (t->state == T_FETCH) curl_multi_remove_handle(m->multi, t->easy);
        target_free(t);
    }
    for (target_t *t = m->orphans, *n; t; t = n) { /* none after a stop */
        n = t->next;
        target_free(t);
    }
    for (size_t i = 0; i < m->ndropped; i++) {
        im_free(m->dropped[i].job);
        im_labels_unref(m->dropped[i].discovered);
    }
    im_free(m->dropped);
    for (size_t i = 0; m->fsd && m->cfg && i < m->cfg->njobs; i++) fsd_free(&m->fsd[i]);
    im_free(m->fsd);
    ksd_free_all(m->ksd, m->cfg ? m->cfg->njobs : 0);
    scrape_config_free(m->cfg);
    scrape_config_free(m->pending);
    curl_multi_cleanup(m->multi);
    for (size_t i = 0; m->workers && i < m->nworkers; i++) {
        expo_parser_free(m->workers[i].parser);
        libdeflate_free_decompressor(m->workers[i].inflater);
        im_buf_free(&m->workers[i].gz);
        im_lb_free(&m->workers[i].lb);
        im_lb_free(&m->workers[i].lb2);
    }
    im_free(m->workers);
    for (size_t i = 0; i < m->nbodypool; i++) im_buf_free(&m->bodypool[i]);
    pthread_cond_destroy(&m->qcv);
    pthread_mutex_destroy(&m->qmu);
    pthread_mutex_destroy(&m->mu);
    im_free(m->user_agent);
    im_free(m);
}

void scrape_manager_targets(scrape_manager_t *m, scrape_targets_t *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&m->mu);
    size_t n = 0;
    for (target_t *t = m->targets; t; t = t->next) n++;
    out->active = im_calloc(n + 1, sizeof *out->active);
    for (target_t *t = m->targets; t; t = t->next) {
        scrape_target_info_t *i = &out->active[out->nactive++];
        i->job = im_strdup(t->job->job_name);
        i->url = im_strdup(t->url);
        i->discovered_labels = im_labels_ref(t->discovered);
        i->labels = im_labels_ref(t->labels);
        i->last_error = im_strdup(t->last_error ? t->last_error : "");
        i->last_scrape_ms = t->last_scrape_ms;
        i->last_scrape_ns = t->last_scrape_ns;
        i->last_duration_s = t->last_dur;
        i->health = t->health;
        i->interval_ms = t->interval_ms;
        i->timeout_ms = t->timeout_ms;
    }
    out->dropped = im_calloc(m->ndropped + 1, sizeof *out->dropped);
    for (size_t k = 0; k < m->ndropped; k++) {
        scrape_target_info_t *i = &out->dropped[out->ndropped++];
        i->job = im_strdup(m->dropped[k].job);
        i->url = im_strdup("");
        i->discovered_labels = im_labels_ref(m->dropped[k].discovered);
        i->last_error = im_strdup("");
    }
    pthread_mutex_unlock(&m->mu);
}

void scrape_targets_free(scrape_targets_t *t)
{
    scrape_target_info_t *lists[2] = {t->active, t->dropped};
    size_t ns[2] = {t->nactive, t->ndropped};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < ns[l]; i++) {
            scrape_target_info_t *x = &lists[l][i];
            im_free(x->job);
            im_free(x->url);
            im_free(x->last_error);
            if (x->discovered_labels) im_labels_unref(x->discovered_labels);
            if (x->labels) im_labels_unref(x->labels);
        }
        im_free(lists[l]);
    }
    memset(t, 0, sizeof *t);
}

void scrape_manager_metadata(scrape_manager_t *m, scrape_metadata_t **out, size_t *n)
{
    pthread_mutex_lock(&m->mu);
    size_t total = 0;
    for (target_t *t = m->targets; t; t = t->next) total += t->nmeta;
    scrape_metadata_t *md = im_calloc(total + 1, sizeof *md);
    size_t k = 0;
    for (target_t *t = m->targets; t; t = t->next) {
        const im_istr_t *inst = im_labels_get(t->labels, "instance");
        for (size_t i = 0; i < t->nmeta; i++) {
            md[k].target_job = im_strdup(t->job->job_name);
            md[k].target_instance = im_strdup(inst ? inst->s : "");
            md[k].metric = im_strdup(t->meta[i].metric);
            md[k].type = im_strdup(t->meta[i].type);
            md[k].help = im_strdup(t->meta[i].help);
            md[k].unit = im_strdup(t->meta[i].unit);
            k++;
        }
    }
    pthread_mutex_unlock(&m->mu);
    *out = md;
    *n = k;
}

void scrape_metadata_free(scrape_metadata_t *md, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        im_free(md[i].target_job);
        im_free(md[i].target_instance);
        im_free(md[i].metric);
        im_free(md[i].type);
        im_free(md[i].help);
        im_free(md[i].unit);
    }
    im_free(md);
}

void scrape_manager_stats(scrape_manager_t *m, scrape_stats_t *out)
{
    pthread_mutex_lock(&m->mu);
    *out = m->stats;
    pthread_mutex_unlock(&m->mu);
}
