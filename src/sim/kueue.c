/* kueue.c — a simulated Kueue controller: one LocalQueue and ClusterQueue per team.
 *
 * Every team namespace has LocalQueue lq-<team> feeding ClusterQueue cq-<team>;
 * all ClusterQueues share the cohort "gpu-pool" and the flavor "h100-80gb", with
 * a nominal GPU quota of the fleet's GPUs split evenly across teams. The vLLM
 * pods of a team are long-running high-priority workloads admitted at start;
 * batch Jobs arrive per team (Poisson), ask for 1-8 GPUs for a log-normal time,
 * and are admitted FIFO when the ClusterQueue's quota (plus what it can borrow
 * from the cohort's unused quota) allows, otherwise they stay pending. The
 * exposition is client_golang's: families sorted by name, labels sorted, series
 * sorted by label values, histograms as buckets, _sum, _count, values as Go %g. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/fmtfloat.h"
#include "sim/vllm_int.h"

#define MAXJOBS 512
#define GIB     1073741824.0

typedef struct kjob {
    double arrive, start, dur;
    int gpus;
    bool inadmissible;
} kjob_t;

typedef struct kteam {
    char cq[96], lq[96];
    const char *ns;
    /* [0] batch (priority_class ""), [1] inference ("high-priority") */
    double admitted[2], reserved_total[2], finished_total[2];
    double active_inf, active_batch;           /* admitted workloads currently running */
    double finished_now;                       /* finished workloads kept (gauge) */
    double res[3], nominal[3], pending_res[3]; /* cpu, memory, gpu */
    double pending_active, pending_inadm;
    double status_active, one, zero, inf;
    double weighted_share;
    double evicted;
    int team;                          /* index in f->teams (the array is sorted by cq name) */
    double borrow_lim[3], lend_lim[3]; /* +Inf when unset */
    kjob_t pend[MAXJOBS];
    int npend;
    kjob_t run[MAXJOBS];
    int nrun;
    sim_hist_t h_admit_wait[2], h_qr_wait[2], h_lq_admit_wait[2], h_lq_qr_wait[2];
} kteam_t;

typedef struct sim_kueue {
    sim_tpl_t tpl;
    double *v;
    struct {
        const double *src;
        int vidx;
    } * map;
    int nmap, capmap;
    kteam_t *teams; /* sorted by cq name */
    int nteams;
    double attempts_ok, attempts_bad;
    double cohort_admitted[2], cohort_active, cohort_quota[3], cohort_res[3];
    double zero, one;
    sim_hist_t h_attempt_ok, h_attempt_bad, h_create_job, h_create_lws;
    sim_rng_t rng;
} sim_kueue_t;

static const char *const res_names[3] = {"cpu", "memory", "nvidia.com/gpu"};
static const char *const pcs[2] = {"", "high-priority"};

static void kmap(sim_kueue_t *k, const double *src, int vidx)
{
    if (k->nmap == k->capmap) {
        k->capmap = k->capmap ? k->capmap * 2 : 256;
        k->map = im_realloc(k->map, sizeof *k->map * (size_t)k->capmap);
    }
    k->map[k->nmap].src = src;
    k->map[k->nmap].vidx = vidx;
    k->nmap++;
}

static void ser(sim_kueue_t *k, const char *name, const sim_label_t *ls, int n, const double *src,
                bool lazy)
{
    int vidx = sim__tpl_series(&k->tpl, name, ls, n, -1, -1);
    if (lazy) k->tpl.series[k->tpl.nseries - 1].present_idx = vidx;
    kmap(k, src, vidx);
}

static sim_hist_t khist(sim_kueue_t *k, const char *name, const llm_cat_family_t *c,
                        const sim_label_t *ls, int n, bool lazy)
{
    char bn[128], sn[128], cn[128], le[64];
    snprintf(bn, sizeof bn, "%s_bucket", name);
    snprintf(sn, sizeof sn, "%s_sum", name);
    snprintf(cn, sizeof cn, "%s_count", name);
    sim_hist_t h = {.nb = c->nbuckets, .bounds = c->buckets};
    h.base = k->tpl.nvalues;
    for (int i = 0; i <= h.nb + 1; i++) sim__tpl_value(&k->tpl);
    int pres = lazy ? h.base + h.nb : -1;
    sim_label_t l2[12];
    for (int i = 0; i <= h.nb; i++) {
        memcpy(l2, ls, sizeof *ls * (size_t)n);
        if (i < h.nb)
            (void)im_fmt_float_expo(c->buckets[i], le, sizeof le);
        else
            memcpy(le, "+Inf", 5);
        l2[n] = (sim_label_t){"le", le};
        /* client_golang writes le last, after the sorted labels */
        int vi = sim__tpl_series(&k->tpl, bn, l2, n + 1, h.base + i, pres);
        (void)vi;
    }
    sim__tpl_series(&k->tpl, sn, ls, n, h.base + h.nb + 1, pres);
    sim__tpl_series(&k->tpl, cn, ls, n, h.base + h.nb, pres);
    sim__tpl_group(&k->tpl, h.nb + 3);
    return h;
}

static int team_cmp(const void *a, const void *b)
{
    return strcmp(((const kteam_t *)a)->cq, ((const kteam_t *)b)->cq);
}

static void build_family(sim_fleet_t *f, sim_kueue_t *k, const llm_cat_family_t *c)
{
    const char *n = c->name;
    const char *type = c->type == LLM_CT_COUNTER     ? "counter"
                       : c->type == LLM_CT_HISTOGRAM ? "histogram"
                                                     : "gauge";
    char om[128];
    snprintf(om, sizeof om, "%s", n);
    size_t ln = strlen(om);
    if (c->type == LLM_CT_COUNTER && ln > 6 && strcmp(om + ln - 6, "_total") == 0) om[ln - 6] = 0;
    sim__tpl_family(&k->tpl, n, type, c->help, om, type, SIM_FMT_GO);
    sim_label_t ls[12];
    bool hist = c->type == LLM_CT_HISTOGRAM;
#define RR                                                                                         \
    (sim_label_t)                                                                                  \
    {                                                                                              \
        "replica_role", "leader"                                                                   \
    }
    if (strcmp(n, "kueue_build_info") == 0) {
        sim_label_t b[] = {{"build_date", "2026-08-20T15:02:11Z"},
                           {"compiler", "gc"},
                           {"git_commit", "8eab68778fc1b52affe165fdf5af29d1e9b4f3cb"},
                           {"git_version", "v0.19.2"},
                           {"go_version", "go1.26.0"},
                           {"platform", "linux/amd64"}};
        ser(k, n, b, 6, &k->one, false);
    } else if (strcmp(n, "kueue_admission_attempts_total") == 0) {
        ls[0] = RR;
        ls[1] = (sim_label_t){"result", "inadmissible"};
        ser(k, n, ls, 2, &k->attempts_bad, true);
        ls[1] = (sim_label_t){"result", "success"};
        ser(k, n, ls, 2, &k->attempts_ok, true);
    } else if (strcmp(n, "kueue_admission_attempt_duration_seconds") == 0) {
        ls[0] = RR;
        ls[1] = (sim_label_t){"result", "inadmissible"};
        k->h_attempt_bad = khist(k, n, c, ls, 2, true);
        ls[1] = (sim_label_t){"result", "success"};
        k->h_attempt_ok = khist(k, n, c, ls, 2, true);
    } else if (strcmp(n, "kueue_workload_creation_latency_seconds") == 0) {
        ls[0] = (sim_label_t){"job_kind", "Job"};
        ls[1] = RR;
        k->h_create_job = khist(k, n, c, ls, 2, true);
        ls[0] = (sim_label_t){"job_kind", "LeaderWorkerSet"};
        k->h_create_lws = khist(k, n, c, ls, 2, true);
    } else if (strncmp(n, "kueue_cohort_", 13) == 0) {
        ls[0] = (sim_label_t){"cohort", "gpu-pool"};
        ls[1] = RR;
        if (strcmp(n, "kueue_cohort_info") == 0) {
            ls[2] = (sim_label_t){"parent_cohort", ""};
            ls[3] = (sim_label_t){"root_cohort", "gpu-pool"};
            ser(k, n, ls, 4, &k->one, false);
        } else if (strcmp(n, "kueue_cohort_subtree_admitted_active_workloads") == 0) {
            ser(k, n, ls, 2, &k->cohort_active, false);
        } else if (strcmp(n, "kueue_cohort_subtree_admitted_workloads_total") == 0) {
            for (int p = 0; p < 2; p++) {
                ls[2] = (sim_label_t){"priority_class", pcs[p]};
                ser(k, n, ls, 3, &k->cohort_admitted[p], true);
            }
        } else if (strcmp(n, "kueue_cohort_weighted_share") == 0) {
            ser(k, n, ls, 2, &k->zero, false);
        } else {
            bool quota = strcmp(n, "kueue_cohort_subtree_quota") == 0;
            ls[2] = (sim_label_t){"flavor", "h100-80gb"};
            for (int r = 0; r < 3; r++) {
                ls[3] = (sim_label_t){"resource", res_names[r]};
                ser(k, n, ls, 4, quota ? &k->cohort_quota[r] : &k->cohort_res[r], false);
            }
        }
        sim__tpl_sort_family(&k->tpl);
    } else {
        bool lq = strncmp(n, "kueue_local_queue_", 18) == 0;
        for (int ti = 0; ti < k->nteams; ti++) {
            kteam_t *t = &k->teams[ti];
            int nl = 0;
            if (lq) {
                ls[nl++] = (sim_label_t){"name", t->lq};
                ls[nl++] = (sim_label_t){"namespace", t->ns};
            } else if (strcmp(n, "kueue_preempted_workloads_total") == 0) {
                ls[nl++] = (sim_label_t){"preempting_cluster_queue", t->cq};
            } else {
                ls[nl++] = (sim_label_t){"cluster_queue", t->cq};
            }
            ls[nl++] = RR;
            const char *s = lq ? n + 18 : n + 6;
            if (hist) {
                for (int p = 0; p < 2; p++) {
                    ls[nl] = (sim_label_t){"priority_class", pcs[p]};
                    sim_hist_t h = khist(k, n, c, ls, nl + 1, true);
                    if (strstr(s, "admission_wait_time")) {
                        if (lq)
                            t->h_lq_admit_wait[p] = h;
                        else
                            t->h_admit_wait[p] = h;
                    } else if (strstr(s, "quota_reserved_wait_time")) {
                        if (lq)
                            t->h_lq_qr_wait[p] = h;
                        else
                            t->h_qr_wait[p] = h;
                    }
                }
                continue;
            }
            if (strstr(s, "admitted_workloads_total") ||
                strstr(s, "quota_reserved_workloads_total") ||
                strstr(s, "finished_workloads_total")) {
                const double *arr = strstr(s, "admitted") ? t->admitted
                                    : strstr(s, "quota")  ? t->reserved_total
                                                          : t->finished_total;
                for (int p = 0; p < 2; p++) {
                    ls[nl] = (sim_label_t){"priority_class", pcs[p]};
                    ser(k, n, ls, nl + 1, &arr[p], true);
                }
            } else if (strstr(s, "evicted_workloads")) {
                ls[nl] = (sim_label_t){"priority_class", ""};
                ls[nl + 1] = (sim_label_t){"reason", "Preempted"};
                ls[nl + 2] = (sim_label_t){"underlying_cause", ""};
                ser(k, n, ls, nl + 3, &t->evicted, true);
            } else if (strcmp(n, "kueue_preempted_workloads_total") == 0) {
                ls[nl] = (sim_label_t){"reason", "InClusterQueue"};
                ser(k, n, ls, nl + 1, &t->evicted, true);
            } else if (strstr(s, "admitted_active_workloads") ||
                       strstr(s, "reserving_active_workloads")) {
                ser(k, n, ls, nl, &t->active_batch, false);
            } else if (strcmp(s, "finished_workloads") == 0) {
                ser(k, n, ls, nl, &t->finished_now, false);
            } else if (strstr(s, "pending_workloads")) {
                ls[nl] = (sim_label_t){"status", "active"};
                ser(k, n, ls, nl + 1, &t->pending_active, false);
                ls[nl] = (sim_label_t){"status", "inadmissible"};
                ser(k, n, ls, nl + 1, &t->pending_inadm, false);
            } else if (strcmp(n, "kueue_cluster_queue_status") == 0) {
                static const char *const st[3] = {"active", "pending", "terminating"};
                for (int i = 0; i < 3; i++) {
                    ls[nl] = (sim_label_t){"status", st[i]};
                    ser(k, n, ls, nl + 1, i == 0 ? &t->one : &t->zero, false);
                }
            } else if (strcmp(n, "kueue_local_queue_status") == 0) {
                static const char *const st[3] = {"False", "True", "Unknown"};
                for (int i = 0; i < 3; i++) {
                    ls[nl] = (sim_label_t){"active", st[i]};
                    ser(k, n, ls, nl + 1, i == 1 ? &t->one : &t->zero, false);
                }
            } else if (strcmp(n, "kueue_cluster_queue_info") == 0) {
                ls[nl] = (sim_label_t){"parent_cohort", "gpu-pool"};
                ls[nl + 1] = (sim_label_t){"root_cohort", "gpu-pool"};
                ser(k, n, ls, nl + 2, &t->one, false);
            } else if (strcmp(n, "kueue_cluster_queue_weighted_share") == 0) {
                ls[nl] = (sim_label_t){"cohort", "gpu-pool"};
                ser(k, n, ls, nl + 1, &t->weighted_share, false);
            } else if (strcmp(n, "kueue_admission_cycle_preemption_skips") == 0) {
                ser(k, n, ls, nl, &t->zero, false);
            } else if (strcmp(n, "kueue_cluster_queue_resource_pending") == 0) {
                for (int r = 0; r < 3; r++) {
                    ls[nl] = (sim_label_t){"resource", res_names[r]};
                    ser(k, n, ls, nl + 1, &t->pending_res[r], false);
                }
            } else if (strstr(s, "resource_reservation") || strstr(s, "resource_usage") ||
                       strstr(s, "nominal_quota") || strstr(s, "borrowing_limit") ||
                       strstr(s, "lending_limit")) {
                int base = nl;
                if (!lq) ls[nl++] = (sim_label_t){"cohort", "gpu-pool"};
                ls[nl++] = (sim_label_t){"flavor", "h100-80gb"};
                for (int r = 0; r < 3; r++) {
                    ls[nl] = (sim_label_t){"resource", res_names[r]};
                    const double *src = strstr(s, "nominal")           ? &t->nominal[r]
                                        : strstr(s, "borrowing_limit") ? &t->borrow_lim[r]
                                        : strstr(s, "lending_limit")   ? &t->lend_lim[r]
                                                                       : &t->res[r];
                    ser(k, n, ls, nl + 1, src, false);
                }
                nl = base;
            }
        }
        if (!hist) sim__tpl_sort_family(&k->tpl);
    }
#undef RR
}

void sim__kueue_build(sim_fleet_t *f)
{
    sim_kueue_t *k = im_calloc(1, sizeof *k);
    f->kq = k;
    sim__rng_seed(&k->rng, f->o.seed * 31 + 5);
    sim__tpl_init(&k->tpl, true);
    k->tpl.le_last = true;
    k->one = 1;
    k->nteams = f->nteams;
    k->teams = im_calloc((size_t)f->nteams, sizeof *k->teams);
    int total_gpus = f->nnodes * f->gpus_per_node;
    for (int i = 0; i < f->nteams; i++) {
        kteam_t *t = &k->teams[i];
        snprintf(t->cq, sizeof t->cq, "cq-%s", f->teams[i]);
        snprintf(t->lq, sizeof t->lq, "lq-%s", f->teams[i]);
        t->ns = f->teams[i];
        t->one = 1;
        t->inf = INFINITY;
        t->team = i;
        for (int r = 0; r < 3; r++) t->borrow_lim[r] = t->lend_lim[r] = INFINITY;
        double gpus = floor((double)total_gpus / f->nteams);
        if (i == f->nteams - 1) gpus = total_gpus - gpus * (f->nteams - 1);
        t->nominal[0] = 24 * gpus;
        t->nominal[1] = 256 * GIB * gpus;
        t->nominal[2] = gpus;
    }
    /* Inference pods: admitted workloads of their team from the start. */
    for (int p = 0; p < f->npods; p++) {
        kteam_t *t = &k->teams[f->pods[p].team];
        int g = f->o.gpus_per_pod;
        t->res[0] += 12 * g;
        t->res[1] += 128 * GIB * g;
        t->res[2] += g;
        t->admitted[1] += 1;
        t->reserved_total[1] += 1;
        t->active_inf += 1;
    }
    /* Keep the team order for the pods, sort a copy for the exposition. */
    qsort(k->teams, (size_t)k->nteams, sizeof *k->teams, team_cmp);
    for (int i = 0; i < llm_cat_kueue_len; i++)
        if (llm_cat_kueue[i].flags & LLM_CF_IN_SAMPLE) build_family(f, k, &llm_cat_kueue[i]);
    k->v = im_calloc((size_t)k->tpl.nvalues, sizeof *k->v);
    for (int i = 0; i < k->nteams; i++) {
        kteam_t *t = &k->teams[i];
        for (int j = 0; j < (int)t->admitted[1]; j++) {
            double w = 3 + sim__rng_exp(&k->rng, 20);
            sim__hist_observe(k->v, &t->h_admit_wait[1], w, 1);
            sim__hist_observe(k->v, &t->h_qr_wait[1], w * 0.8, 1);
            sim__hist_observe(k->v, &t->h_lq_admit_wait[1], w, 1);
            sim__hist_observe(k->v, &t->h_lq_qr_wait[1], w * 0.8, 1);
            sim__hist_observe(k->v, &k->h_create_lws, 0.05 + sim__rng_exp(&k->rng, 0.05), 1);
        }
    }
    sim__kueue_publish(f);
}

void sim__kueue_free(sim_fleet_t *f)
{
    sim_kueue_t *k = f->kq;
    if (!k) return;
    sim__tpl_free(&k->tpl);
    im_free(k->v);
    im_free(k->map);
    im_free(k->teams);
    im_free(k);
    f->kq = NULL;
}

/* A team's Kueue knobs: those of its first pod (events select pods, so a
 * `team:` selector reaches its ClusterQueue), else the scenario's base. */
static const sim_knobs_t *team_knobs(const sim_fleet_t *f, int team)
{
    for (int i = 0; i < f->npods; i++)
        if (f->pods[i].team == team) return &f->pods[i].k;
    return &f->sc.base;
}

/* Quota and limits from the knobs (quota_gpus, borrowing_limit, lending_limit). */
static void team_quota(const sim_fleet_t *f, kteam_t *t, const sim_knobs_t *kn)
{
    int total_gpus = f->nnodes * f->gpus_per_node;
    double gpus = floor((double)total_gpus / f->nteams);
    if (t->team == f->nteams - 1) gpus = total_gpus - gpus * (f->nteams - 1);
    if (kn->quota_gpus >= 0) gpus = floor(kn->quota_gpus);
    t->nominal[0] = 24 * gpus;
    t->nominal[1] = 256 * GIB * gpus;
    t->nominal[2] = gpus;
    t->borrow_lim[2] = kn->borrowing_limit >= 0 ? floor(kn->borrowing_limit) : INFINITY;
    t->lend_lim[2] = kn->lending_limit >= 0 ? floor(kn->lending_limit) : INFINITY;
}

/* GPUs the other ClusterQueues of the cohort can still lend: their unused
 * quota, at most their lending limits, less what is borrowed already. */
static double lendable(const sim_kueue_t *k, const kteam_t *self)
{
    double sum = 0;
    for (int i = 0; i < k->nteams; i++) {
        const kteam_t *u = &k->teams[i];
        sum -= fmax(0, u->res[2] - u->nominal[2]);
        if (u == self) continue;
        double unused = fmax(0, u->nominal[2] - u->res[2]);
        sum += fmin(unused, u->lend_lim[2]);
    }
    return sum;
}

void sim__kueue_tick(sim_fleet_t *f, double t, double dt)
{
    sim_kueue_t *k = f->kq;
    bool limits = false;
    for (int i = 0; i < k->nteams; i++) {
        kteam_t *tm = &k->teams[i];
        const sim_knobs_t *kn = team_knobs(f, tm->team);
        team_quota(f, tm, kn);
        limits = limits || isfinite(tm->borrow_lim[2]) || isfinite(tm->lend_lim[2]);
    }
    double cohort_nominal = 0, cohort_used = 0;
    for (int i = 0; i < k->nteams; i++) {
        cohort_nominal += k->teams[i].nominal[2];
        cohort_used += k->teams[i].res[2];
    }
    bool attempted = false, admitted_any = false;
    for (int i = 0; i < k->nteams; i++) {
        kteam_t *tm = &k->teams[i];
        /* finished batch jobs release quota */
        for (int j = 0; j < tm->nrun;) {
            kjob_t *jb = &tm->run[j];
            if (jb->start + jb->dur <= t) {
                tm->res[2] -= jb->gpus;
                tm->res[0] -= 8 * jb->gpus;
                tm->res[1] -= 64 * GIB * jb->gpus;
                cohort_used -= jb->gpus;
                tm->finished_total[0] += 1;
                tm->finished_now += 1;
                tm->run[j] = tm->run[--tm->nrun];
                continue;
            }
            j++;
        }
        const sim_knobs_t *kn = team_knobs(f, tm->team);
        /* evictions, back to the queue: workloads beyond the quota plus the
         * borrowing limit (the lenders reclaim), and at evict_per_h (preempted
         * by higher-priority work) */
        while (tm->nrun > 0 && tm->npend < MAXJOBS &&
               ((isfinite(tm->borrow_lim[2]) && tm->res[2] > tm->nominal[2] + tm->borrow_lim[2] &&
                 tm->res[2] > tm->active_inf) ||
                (kn->evict_per_h > 0 && sim__rng_unif(&k->rng) < kn->evict_per_h * dt / 3600.0))) {
            kjob_t jb = tm->run[--tm->nrun];
            tm->res[2] -= jb.gpus;
            tm->res[0] -= 8 * jb.gpus;
            tm->res[1] -= 64 * GIB * jb.gpus;
            cohort_used -= jb.gpus;
            tm->evicted += 1;
            jb.arrive = t;
            jb.inadmissible = false;
            tm->pend[tm->npend++] = jb;
        }
        double rate = kn->batch_jobs_per_h;
        int64_t n = sim__rng_poisson(&k->rng, rate * dt / 3600.0);
        for (int64_t j = 0; j < n && tm->npend < MAXJOBS; j++) {
            kjob_t *jb = &tm->pend[tm->npend++];
            static const int sizes[4] = {1, 2, 4, 8};
            jb->gpus = sizes[sim__rng_next(&k->rng) % 4];
            jb->dur = sim__rng_lognormal(&k->rng, 1200, 0.8);
            jb->arrive = t;
            jb->inadmissible = false;
            sim__hist_observe(k->v, &k->h_create_job, 0.02 + sim__rng_exp(&k->rng, 0.03), 1);
        }
        /* FIFO admission within nominal quota plus the cohort's unused quota.
         * With quota limits set (borrowing_limit, lending_limit), Kueue's
         * default BestEffortFIFO: an inadmissible head does not block the
         * workloads behind it (the first 16 are tried). */
        int head = 0;
        while (tm->npend > head && tm->nrun < MAXJOBS) {
            kjob_t *jb = &tm->pend[head];
            attempted = true;
            double borrow = cohort_nominal - cohort_used;
            bool fits = tm->res[2] + jb->gpus <= tm->nominal[2] || jb->gpus <= borrow - 0;
            if (fits && limits) {
                /* beyond its own quota it borrows, within its borrowing limit and
                 * what the others lend */
                double need = jb->gpus - fmax(0, tm->nominal[2] - tm->res[2]);
                if (need > 0 && (tm->res[2] + jb->gpus - tm->nominal[2] > tm->borrow_lim[2] ||
                                 need > lendable(k, tm)))
                    fits = false;
            }
            if (!fits || cohort_used + jb->gpus > cohort_nominal) {
                if (limits && head < 15) {
                    jb->inadmissible = true;
                    head++;
                    continue;
                }
                for (int q = 0; q < tm->npend; q++) tm->pend[q].inadmissible = true;
                break;
            }
            double wait = t - jb->arrive + sim__rng_unif(&k->rng) * dt;
            sim__hist_observe(k->v, &tm->h_admit_wait[0], wait, 1);
            sim__hist_observe(k->v, &tm->h_qr_wait[0], wait, 1);
            sim__hist_observe(k->v, &tm->h_lq_admit_wait[0], wait, 1);
            sim__hist_observe(k->v, &tm->h_lq_qr_wait[0], wait, 1);
            tm->res[2] += jb->gpus;
            tm->res[0] += 8 * jb->gpus;
            tm->res[1] += 64 * GIB * jb->gpus;
            cohort_used += jb->gpus;
            jb->start = t;
            tm->run[tm->nrun++] = *jb;
            memmove(&tm->pend[head], &tm->pend[head + 1],
                    sizeof *tm->pend * (size_t)(tm->npend - 1 - head));
            tm->npend--;
            tm->admitted[0] += 1;
            tm->reserved_total[0] += 1;
            admitted_any = true;
        }
    }
    if (attempted) {
        double d = 0.003 + sim__rng_exp(&k->rng, 0.004);
        if (admitted_any) {
            k->attempts_ok += 1;
            sim__hist_observe(k->v, &k->h_attempt_ok, d, 1);
        } else {
            k->attempts_bad += 1;
            sim__hist_observe(k->v, &k->h_attempt_bad, d, 1);
        }
    }
}

void sim__kueue_publish(sim_fleet_t *f)
{
    sim_kueue_t *k = f->kq;
    k->cohort_active = 0;
    for (int r = 0; r < 3; r++) k->cohort_quota[r] = k->cohort_res[r] = 0;
    k->cohort_admitted[0] = k->cohort_admitted[1] = 0;
    for (int i = 0; i < k->nteams; i++) {
        kteam_t *t = &k->teams[i];
        t->active_batch = t->nrun + t->active_inf;
        t->pending_active = t->pending_inadm = 0;
        for (int r = 0; r < 3; r++) t->pending_res[r] = 0;
        for (int j = 0; j < t->npend; j++) {
            if (t->pend[j].inadmissible)
                t->pending_inadm += 1;
            else
                t->pending_active += 1;
            t->pending_res[0] += 8 * t->pend[j].gpus;
            t->pending_res[1] += 64 * GIB * t->pend[j].gpus;
            t->pending_res[2] += t->pend[j].gpus;
        }
        t->weighted_share = t->res[2] > t->nominal[2]
                                ? floor((t->res[2] - t->nominal[2]) * 1000 / t->nominal[2])
                                : 0;
        k->cohort_active += t->active_batch;
        for (int r = 0; r < 3; r++) {
            k->cohort_quota[r] += t->nominal[r];
            k->cohort_res[r] += t->res[r];
        }
        k->cohort_admitted[0] += t->admitted[0];
        k->cohort_admitted[1] += t->admitted[1];
    }
    for (int i = 0; i < k->nmap; i++) k->v[k->map[i].vidx] = *k->map[i].src;
}

/* Ground truth: each team's reservation, quota, borrowing over the tick. Kueue
 * does not say which ClusterQueue lent: what the borrowers use beyond their
 * quotas is attributed to the lenders in proportion to their lendable unused
 * quota. */
void sim__kueue_truth(sim_fleet_t *f, double dt)
{
    sim_kueue_t *k = f->kq;
    double borrowed = 0, unused = 0;
    for (int i = 0; i < k->nteams; i++) {
        const kteam_t *t = &k->teams[i];
        borrowed += fmax(0, t->res[2] - t->nominal[2]);
        unused += fmin(fmax(0, t->nominal[2] - t->res[2]), t->lend_lim[2]);
    }
    for (int i = 0; i < k->nteams; i++) {
        const kteam_t *t = &k->teams[i];
        sim_truth_team_t *g = &f->truth[t->team];
        g->reserved_s += t->res[2] * dt;
        g->nominal_s += t->nominal[2] * dt;
        g->borrowed_s += fmax(0, t->res[2] - t->nominal[2]) * dt;
        double mine = fmin(fmax(0, t->nominal[2] - t->res[2]), t->lend_lim[2]);
        if (unused > 0) g->lent_s += borrowed * mine / unused * dt;
    }
}

const sim_tpl_t *sim__kueue_tpl(const sim_fleet_t *f)
{
    return &f->kq->tpl;
}

const double *sim__kueue_values(const sim_fleet_t *f)
{
    return f->kq->v;
}
