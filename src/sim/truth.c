/* truth.c — the fleet's ground truth: exact totals since the start, for
 * checking reports computed from scrapes (cost per team, SLO attainment).
 *
 * Every tick, after the pods, GPUs and Kueue have advanced, the values they
 * expose are integrated over the tick: a team's Kueue GPU reservation and
 * nominal quota, the GPUs its pods hold (a MIG instance as its fraction of a
 * GPU), their activity (DCGM_FI_PROF_GR_ENGINE_ACTIVE and DCGM_FI_DEV_GPU_UTIL
 * as exposed after the tick, held over it) and the energy they used (power x
 * tick, the increments of DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION). Request and
 * token counts are the pods' own counters; the latency thresholds are the
 * histograms' buckets summed over a model's pods. The JSON is documented in
 * docs/simulator.md ("Ground truth"). */
#include "util/base.h"

#include <math.h>
#include <stdio.h>

#include "sim/vllm_int.h"

void sim__truth_tick(sim_fleet_t *f, double dt)
{
    f->truth_s += dt;
    int ngpus = f->nnodes * f->gpus_per_node;
    for (int i = 0; i < ngpus; i++) {
        const sim_gpu_t *g = &f->gpus[i];
        sim_truth_team_t *t = g->pod >= 0 ? &f->truth[f->pods[g->pod].team] : &f->truth_idle;
        t->allocated_s += dt;
        t->busy_s += g->sm_active * dt;
        t->busy_util_s += g->util / 100 * dt;
        t->energy_j += g->power * dt;
    }
    if (f->nmig > 0) sim__mig_truth(f, dt);
    sim__kueue_truth(f, dt);
}

static void num(im_buf_t *b, double v)
{
    char tmp[64];
    size_t n = sim__fmt(v, SIM_FMT_GO, tmp);
    (void)im_buf_append(b, tmp, n);
}

static void key_num(im_buf_t *b, const char *k, double v, bool last)
{
    sim__json_str(b, k);
    (void)im_buf_puts(b, ": ");
    num(b, v);
    if (!last) (void)im_buf_puts(b, ", ");
}

/* MIG instances have no DCGM_FI_DEV_GPU_UTIL: no busy_gpu_seconds_util. */
static void usage_fields(im_buf_t *b, const sim_truth_team_t *t, bool mig)
{
    key_num(b, "allocated_gpu_seconds", t->allocated_s, false);
    key_num(b, "busy_gpu_seconds", t->busy_s, false);
    if (!mig) key_num(b, "busy_gpu_seconds_util", t->busy_util_s, false);
    key_num(b, "energy_joules", t->energy_j, true);
}

/* A histogram's cumulative buckets summed over the pods of model m. */
static void thresholds(im_buf_t *b, const sim_fleet_t *f, int m, int hid)
{
    const sim_hist_t *h0 = NULL;
    (void)im_buf_puts(b, "[");
    for (int i = 0; i < f->npods && !h0; i++) {
        const sim_pod_t *p = &f->pods[i];
        const sim_vllm_layout_t *lay = sim__pod_lay((sim_fleet_t *)f, p);
        if (p->model == m && lay->nhist[hid] > 0) h0 = &lay->hist[hid][0];
    }
    for (int j = 0; h0 && j <= h0->nb; j++) {
        double n = 0;
        for (int i = 0; i < f->npods; i++) {
            const sim_pod_t *p = &f->pods[i];
            if (p->model == m) n += p->v[sim__pod_lay((sim_fleet_t *)f, p)->hist[hid][0].base + j];
        }
        (void)im_buf_puts(b, j ? ", {\"le\": " : "{\"le\": ");
        if (j < h0->nb)
            num(b, h0->bounds[j]);
        else
            (void)im_buf_puts(b, "\"+Inf\"");
        (void)im_buf_puts(b, ", \"count\": ");
        num(b, n);
        (void)im_buf_puts(b, "}");
    }
    (void)im_buf_puts(b, "]");
}

im_rc sim_fleet_ground_truth_json(const sim_fleet_t *f, im_buf_t *b)
{
    (void)im_buf_printf(b, "{\"start_ms\": %lld, \"time_ms\": %lld, \"seconds\": ",
                        (long long)f->t0_ms, (long long)f->now_ms);
    num(b, f->truth_s);
    (void)im_buf_puts(b, ",\n \"teams\": [");
    for (int i = 0; i < f->nteams; i++) {
        const sim_truth_team_t *t = &f->truth[i];
        (void)im_buf_puts(b, i ? ",\n  {" : "\n  {");
        (void)im_buf_puts(b, "\"team\": ");
        sim__json_str(b, f->teams[i]);
        (void)im_buf_puts(b, ", \"local_queue\": ");
        char q[96];
        snprintf(q, sizeof q, "lq-%s", f->teams[i]);
        sim__json_str(b, q);
        snprintf(q, sizeof q, "cq-%s", f->teams[i]);
        (void)im_buf_puts(b, ", \"cluster_queue\": ");
        sim__json_str(b, q);
        (void)im_buf_puts(b, ", \"flavors\": [{\"flavor\": \"h100-80gb\", ");
        key_num(b, "reserved_gpu_seconds", t->reserved_s, false);
        key_num(b, "nominal_gpu_seconds", t->nominal_s, false);
        key_num(b, "borrowed_gpu_seconds", t->borrowed_s, false);
        key_num(b, "lent_gpu_seconds", t->lent_s, false);
        /* serving pods hold whole H100s */
        usage_fields(b, t, false);
        (void)im_buf_puts(b, "}");
        if (f->nmig > 0) {
            (void)im_buf_puts(b, ", {\"flavor\": ");
            sim__json_str(b, f->mig_profile);
            (void)im_buf_puts(b, ", ");
            usage_fields(b, &f->truth_mig[i], true);
            (void)im_buf_puts(b, "}");
        }
        (void)im_buf_puts(b, "]}");
    }
    (void)im_buf_puts(b, "\n ],\n \"unattributed\": [{\"flavor\": \"h100-80gb\", ");
    usage_fields(b, &f->truth_idle, false);
    (void)im_buf_puts(b, "}");
    if (f->nmig > 0) {
        (void)im_buf_puts(b, ", {\"flavor\": ");
        sim__json_str(b, f->mig_profile);
        (void)im_buf_puts(b, ", ");
        usage_fields(b, &f->truth_mig_idle, true);
        (void)im_buf_puts(b, "}");
    }
    (void)im_buf_puts(b, "],\n \"pods\": [");
    for (int i = 0; i < f->npods; i++) {
        const sim_pod_t *p = &f->pods[i];
        bool sgl = sim__pod_sglang(f, p);
        (void)im_buf_puts(b, i ? ",\n  {\"pod\": " : "\n  {\"pod\": ");
        sim__json_str(b, f->pod_names[i]);
        (void)im_buf_puts(b, ", \"namespace\": ");
        sim__json_str(b, f->teams[p->team]);
        (void)im_buf_puts(b, ", \"model\": ");
        sim__json_str(b, f->models[p->model]);
        (void)im_buf_puts(b, ", \"engine\": ");
        sim__json_str(b, sgl ? "sglang" : "vllm");
        (void)im_buf_puts(b, ", \"requests\": {");
        key_num(b, "stop", p->q[Q_FIN_STOP], false);
        key_num(b, "length", p->q[Q_FIN_LENGTH], false);
        key_num(b, "abort", p->q[Q_FIN_ABORT], false);
        key_num(b, "error", p->q[Q_FIN_ERROR], false);
        key_num(b, "repetition", p->q[Q_FIN_REP], true);
        (void)im_buf_puts(b, "}, ");
        key_num(b, "prompt_tokens", p->q[sgl ? Q_SGL_PROMPT : Q_PROMPT], false);
        key_num(b, "generation_tokens", p->q[sgl ? Q_SGL_GEN : Q_GEN], false);
        key_num(b, "cached_tokens", p->q[sgl ? Q_SGL_CACHED : Q_CACHED], true);
        (void)im_buf_puts(b, "}");
    }
    (void)im_buf_puts(b, "\n ],\n \"models\": [");
    for (int m = 0; m < f->nmodels; m++) {
        double fin = 0;
        for (int i = 0; i < f->npods; i++)
            if (f->pods[i].model == m)
                fin += f->pods[i].q[Q_FIN_STOP] + f->pods[i].q[Q_FIN_LENGTH] +
                       f->pods[i].q[Q_FIN_ABORT] + f->pods[i].q[Q_FIN_ERROR] +
                       f->pods[i].q[Q_FIN_REP];
        (void)im_buf_puts(b, m ? ",\n  {\"model\": " : "\n  {\"model\": ");
        sim__json_str(b, f->models[m]);
        (void)im_buf_puts(b, ", ");
        key_num(b, "finished", fin, false);
        (void)im_buf_puts(b, "\"ttft_seconds\": ");
        thresholds(b, f, m, H_TTFT);
        (void)im_buf_puts(b, ", \"itl_seconds\": ");
        thresholds(b, f, m, H_ITL);
        (void)im_buf_puts(b, ", \"e2e_seconds\": ");
        thresholds(b, f, m, H_E2E);
        (void)im_buf_puts(b, "}");
    }
    return im_buf_puts(b, "\n ]\n}\n");
}
