/* dcgm.c — simulated dcgm-exporter nodes (8 GPUs each) driven by the vLLM pods.
 *
 * Each node serves the default counters in DCGM field-id order, with the
 * exporter's fixed label order (gpu, UUID, pci_bus_id, device, modelName,
 * Hostname, DCGM_FI_DRIVER_VERSION, then container/namespace/pod when a pod holds
 * the GPU) and its value formats (INT64 fields as integers, DOUBLE fields with
 * %f). GPU activity follows the owning pod's engine over the last tick: kernel
 * busy time, the compute and memory shares of each step, framebuffer held by
 * the KV cache preallocation, power and temperature with thermal lag. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>

#include "sim/vllm_int.h"

#define FB_TOTAL_MIB    81559.0
#define FB_RESERVED_MIB 596.0
#define POWER_IDLE      70.0
#define POWER_MAX       700.0

static const char *const pci_ids[8] = {"00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0",
                                       "00000000:5D:00.0", "00000000:9A:00.0", "00000000:AB:00.0",
                                       "00000000:BA:00.0", "00000000:DB:00.0"};

enum gq {
    GQ_SM_CLOCK,
    GQ_MEM_CLOCK,
    GQ_MEM_TEMP,
    GQ_TEMP,
    GQ_POWER,
    GQ_ENERGY,
    GQ_ZERO,
    GQ_UTIL,
    GQ_MEM_UTIL,
    GQ_FB_FREE,
    GQ_FB_USED,
    GQ_FB_RESERVED,
    GQ_NVLINK,
    GQ_GR_ACTIVE,
    GQ_TENSOR,
    GQ_DRAM,
    GQ_PCIE_TX,
    GQ_PCIE_RX,
    GQ_SM_ACTIVE,
    GQ_SM_OCC,
    GQ_FP16,
    GQ_FP32,
};

static int field_quantity(const char *name)
{
    static const struct {
        const char *n;
        int q;
    } map[] = {
        {"DCGM_FI_DEV_SM_CLOCK", GQ_SM_CLOCK},
        {"DCGM_FI_DEV_MEM_CLOCK", GQ_MEM_CLOCK},
        {"DCGM_FI_DEV_MEMORY_TEMP", GQ_MEM_TEMP},
        {"DCGM_FI_DEV_GPU_TEMP", GQ_TEMP},
        {"DCGM_FI_DEV_POWER_USAGE", GQ_POWER},
        {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", GQ_ENERGY},
        {"DCGM_FI_DEV_GPU_UTIL", GQ_UTIL},
        {"DCGM_FI_DEV_MEM_COPY_UTIL", GQ_MEM_UTIL},
        {"DCGM_FI_DEV_FB_FREE", GQ_FB_FREE},
        {"DCGM_FI_DEV_FB_USED", GQ_FB_USED},
        {"DCGM_FI_DEV_FB_RESERVED", GQ_FB_RESERVED},
        {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", GQ_NVLINK},
        {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", GQ_GR_ACTIVE},
        {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", GQ_TENSOR},
        {"DCGM_FI_PROF_DRAM_ACTIVE", GQ_DRAM},
        {"DCGM_FI_PROF_PCIE_TX_BYTES", GQ_PCIE_TX},
        {"DCGM_FI_PROF_PCIE_RX_BYTES", GQ_PCIE_RX},
        {"DCGM_FI_PROF_SM_ACTIVE", GQ_SM_ACTIVE},
        {"DCGM_FI_PROF_SM_OCCUPANCY", GQ_SM_OCC},
        {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", GQ_FP16},
        {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", GQ_FP32},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(map); i++)
        if (strcmp(map[i].n, name) == 0) return map[i].q;
    return GQ_ZERO;
}

void sim__dcgm_build(sim_fleet_t *f)
{
    f->dtpl = im_calloc((size_t)f->nnodes, sizeof *f->dtpl);
    f->dv = im_calloc((size_t)f->nnodes, sizeof *f->dv);
    for (int n = 0; n < f->nnodes; n++) {
        sim_tpl_t *t = &f->dtpl[n];
        sim__tpl_init(t, false);
        for (int fi = 0; fi < llm_cat_dcgm_len; fi++) {
            const llm_cat_family_t *c = &llm_cat_dcgm[fi];
            if (!(c->flags & LLM_CF_DEFAULT) && !f->o.dcgm_profiling) continue;
            bool ctr = c->type == LLM_CT_COUNTER;
            sim__tpl_family(t, c->name, ctr ? "counter" : "gauge", c->help, c->name,
                            ctr ? "unknown" : "gauge",
                            (c->flags & LLM_CF_DCGM_INT) ? SIM_FMT_DCGM_INT : SIM_FMT_DCGM_F);
            for (int g = 0; g < f->gpus_per_node; g++) {
                sim_gpu_t *gpu = &f->gpus[n * f->gpus_per_node + g];
                char gs[16], dev[32];
                snprintf(gs, sizeof gs, "%d", g);
                snprintf(dev, sizeof dev, "nvidia%d", g);
                sim_label_t ls[10] = {
                    {"gpu", gs},
                    {"UUID", gpu->uuid},
                    {"pci_bus_id", pci_ids[g % 8]},
                    {"device", dev},
                    {"modelName", "NVIDIA H100 80GB HBM3"},
                    {"Hostname", f->node_names[n]},
                    {"DCGM_FI_DRIVER_VERSION", "580.95.05"},
                };
                int nl = 7;
                if (gpu->pod >= 0) {
                    ls[nl++] = (sim_label_t){"container", "vllm"};
                    ls[nl++] = (sim_label_t){"namespace", f->teams[f->pods[gpu->pod].team]};
                    ls[nl++] = (sim_label_t){"pod", f->pod_names[gpu->pod]};
                }
                sim__tpl_series(t, c->name, ls, nl, -1, -1);
            }
        }
        f->dv[n] = im_calloc((size_t)t->nvalues, sizeof(double));
    }
    sim__dcgm_publish(f);
}

void sim__dcgm_free(sim_fleet_t *f)
{
    for (int n = 0; n < f->nnodes; n++) {
        if (f->dtpl) sim__tpl_free(&f->dtpl[n]);
        if (f->dv) im_free(f->dv[n]);
    }
    im_free(f->dtpl);
    im_free(f->dv);
}

void sim__dcgm_tick(sim_fleet_t *f, double dt)
{
    int ngpus = f->nnodes * f->gpus_per_node;
    for (int i = 0; i < ngpus; i++) {
        sim_gpu_t *g = &f->gpus[i];
        double util = 0, mem = 0, sm = 0, tensor = 0, dram = 0, fb = 0, tok = 0, ptok = 0;
        if (g->pod >= 0) {
            const sim_pod_t *p = &f->pods[g->pod];
            double jit = 0.97 + 0.06 * sim__rng_unif(&f->rng);
            util = p->gpu_util * jit;
            mem = p->mem_util * jit;
            sm = p->sm_active * jit;
            tensor = p->tensor_active * jit;
            dram = p->dram_active * jit;
            /* vLLM preallocates gpu_memory_utilization (0.9) of the GPU for weights
             * and KV cache; activations grow a little with the batch. */
            fb = 0.9 * FB_TOTAL_MIB - 0.9 * FB_RESERVED_MIB + p->nrun * 1.5;
            tok = p->tokens_s;
            ptok = p->prefill_tok_s;
        }
        if (util > 100) util = 100;
        if (mem > 100) mem = 100;
        if (sm > 1) sm = 1;
        g->util = floor(util);
        g->mem_util = floor(mem);
        g->sm_active = sm;
        g->tensor = tensor;
        g->dram = dram;
        g->fb_used = floor(fb);
        double load = 0.6 * util / 100 + 0.4 * mem / 100;
        double target = POWER_IDLE + (POWER_MAX - POWER_IDLE) * load;
        g->power += (target - g->power) * (dt >= 5 ? 1 : 0.5);
        g->power = floor(g->power * 1000) / 1000;
        double ttarget = 27 + 0.055 * g->power;
        double a = 1 - exp(-dt / 60.0);
        g->temp += (ttarget - g->temp) * a;
        g->mem_temp += (ttarget + 6 - g->mem_temp) * a;
        g->energy_mj += g->power * dt * 1000;
        g->pcie_tx = floor(140000 + tok * 900 + 2000 * sim__rng_unif(&f->rng));
        g->pcie_rx = floor(120000 + ptok * 60 + 2000 * sim__rng_unif(&f->rng));
        if (f->o.gpus_per_pod > 1 && g->pod >= 0) g->nvlink += floor((tok + ptok) * 16384 * dt);
        g->sm_clock = util > 0.5 ? 1980 : 345;
    }
}

void sim__dcgm_publish(sim_fleet_t *f)
{
    for (int n = 0; n < f->nnodes; n++) {
        const sim_tpl_t *t = &f->dtpl[n];
        double *v = f->dv[n];
        int k = 0;
        int ci = 0;
        for (int fi = 0; fi < t->nfams; fi++, ci++) {
            while (!(llm_cat_dcgm[ci].flags & LLM_CF_DEFAULT) && !f->o.dcgm_profiling) ci++;
            int q = field_quantity(llm_cat_dcgm[ci].name);
            for (int gi = 0; gi < f->gpus_per_node; gi++) {
                const sim_gpu_t *g = &f->gpus[n * f->gpus_per_node + gi];
                double x = 0;
                switch (q) {
                case GQ_SM_CLOCK: x = g->sm_clock; break;
                case GQ_MEM_CLOCK: x = 2619; break;
                case GQ_MEM_TEMP: x = floor(g->mem_temp); break;
                case GQ_TEMP: x = floor(g->temp); break;
                case GQ_POWER: x = g->power; break;
                case GQ_ENERGY: x = floor(g->energy_mj); break;
                case GQ_UTIL: x = g->util; break;
                case GQ_MEM_UTIL: x = g->mem_util; break;
                case GQ_FB_USED: x = g->fb_used; break;
                case GQ_FB_RESERVED: x = FB_RESERVED_MIB; break;
                case GQ_FB_FREE: x = FB_TOTAL_MIB - FB_RESERVED_MIB - g->fb_used; break;
                case GQ_NVLINK: x = g->nvlink; break;
                case GQ_GR_ACTIVE: x = g->sm_active; break;
                case GQ_TENSOR: x = g->tensor; break;
                case GQ_DRAM: x = g->dram; break;
                case GQ_PCIE_TX: x = g->pcie_tx; break;
                case GQ_PCIE_RX: x = g->pcie_rx; break;
                /* SM activity tracks the engine-busy ratio a little below it; the
                 * half-precision pipe carries the matmuls next to the tensor cores */
                case GQ_SM_ACTIVE: x = g->sm_active * 0.93; break;
                case GQ_SM_OCC: x = g->sm_active * 0.41; break;
                case GQ_FP16: x = g->tensor * 0.12; break;
                case GQ_FP32: x = g->sm_active * 0.05; break;
                default: x = 0;
                }
                v[t->series[k++].vidx] = x;
            }
        }
    }
}
