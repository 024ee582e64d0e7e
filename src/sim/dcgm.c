/* dcgm.c — simulated dcgm-exporter nodes (8 GPUs each) driven by the vLLM pods.
 *
 * Each node serves the default counters in DCGM field-id order, with the
 * exporter's fixed label order (gpu, UUID, pci_bus_id, device, modelName,
 * Hostname, DCGM_FI_DRIVER_VERSION, then container/namespace/pod when a pod holds
 * the GPU) and its value formats (INT64 fields as integers, DOUBLE fields with
 * %f). GPU activity follows the owning pod's engine over the last tick: kernel
 * busy time, the compute and memory shares of each step, framebuffer held by
 * the KV cache preallocation, power and temperature with thermal lag.
 *
 * Faults come from the owning pod's knobs: an XID error (the gauge keeps the
 * last code, with err_code/err_msg labels as the exporter prints them, so the
 * series changes with the code), a failed row remapping, a GPU missing from the
 * output, clock throttling (SM clock down, power or temperature up, and the
 * violation counters with --dcgm-violations). */
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
    GQ_XID,
    GQ_ROW_REMAP_FAIL,
    GQ_UNCORR_ROWS,
    GQ_POWER_VIOL,
    GQ_THERMAL_VIOL,
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
        {"DCGM_FI_DEV_XID_ERRORS", GQ_XID},
        {"DCGM_FI_DEV_ROW_REMAP_FAILURE", GQ_ROW_REMAP_FAIL},
        {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", GQ_UNCORR_ROWS},
        {"DCGM_FI_DEV_POWER_VIOLATION", GQ_POWER_VIOL},
        {"DCGM_FI_DEV_THERMAL_VIOLATION", GQ_THERMAL_VIOL},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(map); i++)
        if (strcmp(map[i].n, name) == 0) return map[i].q;
    return GQ_ZERO;
}

/* XID descriptions for err_msg (NVIDIA's XID catalog names; codes outside the
 * table print "Unknown Error"). */
static const char *xid_msg(int code)
{
    static const struct {
        int code;
        const char *msg;
    } t[] = {
        {0, "No Error"},
        {13, "Graphics Engine Exception"},
        {31, "GPU memory page fault"},
        {43, "GPU stopped processing"},
        {45, "Preemptive cleanup, due to previous errors"},
        {48, "Double Bit ECC Error"},
        {63, "ECC page retirement or row remapping recording event"},
        {64, "ECC page retirement or row remapper recording failure"},
        {74, "NVLINK Error"},
        {79, "GPU has fallen off the bus"},
        {92, "High single-bit ECC error rate"},
        {94, "Contained ECC error"},
        {95, "Uncontained ECC error"},
        {119, "GSP RPC Timeout"},
    };
    for (size_t i = 0; i < IM_ARRAY_LEN(t); i++)
        if (t[i].code == code) return t[i].msg;
    return "Unknown Error";
}

static void add_code(sim_fleet_t *f, double v)
{
    int c = (int)v;
    if (c <= 0) return;
    for (int i = 0; i < f->nxid; i++)
        if (f->xid_codes[i] == c) return;
    if (f->nxid < SIM_MAX_XID) f->xid_codes[f->nxid++] = c;
}

/* The XID codes the scenario can raise (each gets its own series variant). */
static void collect_xid_codes(sim_fleet_t *f)
{
    f->nxid = 0;
    f->xid_codes[f->nxid++] = 0;
    add_code(f, f->sc.base.xid_code);
    for (int i = 0; i < f->sc.nevents; i++) {
        const sim_event_t *e = &f->sc.events[i];
        if (e->preset[0]) {
            sim_knobs_t k;
            sim__scenario_preset(e->preset, &k);
            add_code(f, k.xid_code);
        }
        for (int j = 0; j < e->nset; j++)
            if (strcmp(e->names[j], "xid_code") == 0) add_code(f, e->values[j]);
    }
}

/* A family the exporter serves, and its help: from the compiled catalog, or
 * (the violation counters, commented out in default-counters.csv) from the
 * embedded dcgm-metrics.tsv. */
static char *tsv_help(const char *name)
{
    const char *p = (const char *)llm__tsv_dcgm_metrics, *end = p + llm__tsv_dcgm_metrics_len;
    size_t n = strlen(name);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        if ((size_t)(nl - p) > n && memcmp(p, name, n) == 0 && p[n] == '\t') {
            const char *c = p;
            for (int col = 0; col < 3 && c; col++)
                c = memchr(c, '\t', (size_t)(nl - c)), c = c ? c + 1 : NULL;
            if (!c) return NULL;
            const char *ce = memchr(c, '\t', (size_t)(nl - c));
            return im_strndup(c, (size_t)((ce ? ce : nl) - c));
        }
        p = nl + 1;
    }
    return NULL;
}

static void add_fam(sim_fleet_t *f, const char *name, char *help_owned, const char *help, bool ctr,
                    bool is_int)
{
    f->dfams = im_realloc(f->dfams, sizeof *f->dfams * (size_t)(f->ndfams + 1));
    sim_dcgm_fam_t *d = &f->dfams[f->ndfams++];
    d->name = name;
    d->help_owned = help_owned;
    d->help = help_owned ? help_owned : help;
    d->counter = ctr;
    d->is_int = is_int;
    d->q = field_quantity(name);
}

/* The families in field-id order: the default counters, the DCP fields with
 * --dcgm-profiling, the violation counters (ids 240, 241) with --dcgm-violations. */
static void list_families(sim_fleet_t *f)
{
    static const char *const viol[2] = {"DCGM_FI_DEV_POWER_VIOLATION",
                                        "DCGM_FI_DEV_THERMAL_VIOLATION"};
    bool viol_done = !f->o.dcgm_violations;
    for (int fi = 0; fi < llm_cat_dcgm_len; fi++) {
        const llm_cat_family_t *c = &llm_cat_dcgm[fi];
        if (!viol_done && c->field_id > 241) {
            for (int v = 0; v < 2; v++) {
                char *h = tsv_help(viol[v]);
                if (h) add_fam(f, viol[v], h, NULL, true, true);
            }
            viol_done = true;
        }
        if (!(c->flags & LLM_CF_DEFAULT) && !f->o.dcgm_profiling) continue;
        add_fam(f, c->name, NULL, c->help, c->type == LLM_CT_COUNTER,
                (c->flags & LLM_CF_DCGM_INT) != 0);
    }
}

void sim__dcgm_build(sim_fleet_t *f)
{
    collect_xid_codes(f);
    list_families(f);
    f->dtpl = im_calloc((size_t)f->nnodes, sizeof *f->dtpl);
    f->dv = im_calloc((size_t)f->nnodes, sizeof *f->dv);
    for (int n = 0; n < f->nnodes; n++) {
        sim_tpl_t *t = &f->dtpl[n];
        sim__tpl_init(t, false);
        /* presence values: a GPU's series (and each XID variant) are printed while 1 */
        for (int g = 0; g < f->gpus_per_node; g++) {
            sim_gpu_t *gpu = &f->gpus[n * f->gpus_per_node + g];
            gpu->pres_vidx = sim__tpl_value(t);
            for (int x = 0; x < f->nxid; x++) gpu->xid_pres_vidx[x] = sim__tpl_value(t);
        }
        for (int fi = 0; fi < f->ndfams; fi++) {
            const sim_dcgm_fam_t *c = &f->dfams[fi];
            sim__tpl_family(t, c->name, c->counter ? "counter" : "gauge", c->help, c->name,
                            c->counter ? "unknown" : "gauge",
                            c->is_int ? SIM_FMT_DCGM_INT : SIM_FMT_DCGM_F);
            for (int g = 0; g < f->gpus_per_node; g++) {
                sim_gpu_t *gpu = &f->gpus[n * f->gpus_per_node + g];
                char gs[16], dev[32], code[16];
                snprintf(gs, sizeof gs, "%d", g);
                snprintf(dev, sizeof dev, "nvidia%d", g);
                sim_label_t ls[12] = {
                    {"gpu", gs},
                    {"UUID", gpu->uuid},
                    {"pci_bus_id", pci_ids[g % 8]},
                    {"device", dev},
                    {"modelName", "NVIDIA H100 80GB HBM3"},
                    {"Hostname", f->node_names[n]},
                    {"DCGM_FI_DRIVER_VERSION", "580.95.05"},
                };
                int nl = 7;
                bool xid = c->q == GQ_XID;
                int nvar = xid ? f->nxid : 1;
                for (int x = 0; x < nvar; x++) {
                    /* the exporter's k8s attributes and the XID's err_code/err_msg,
                     * sorted by name */
                    int m = nl;
                    if (gpu->pod >= 0) ls[m++] = (sim_label_t){"container", "vllm"};
                    if (xid) {
                        snprintf(code, sizeof code, "%d", f->xid_codes[x]);
                        ls[m++] = (sim_label_t){"err_code", code};
                        ls[m++] = (sim_label_t){"err_msg", xid_msg(f->xid_codes[x])};
                    }
                    if (gpu->pod >= 0) {
                        ls[m++] = (sim_label_t){"namespace", f->teams[f->pods[gpu->pod].team]};
                        ls[m++] = (sim_label_t){"pod", f->pod_names[gpu->pod]};
                    }
                    sim__tpl_series(t, c->name, ls, m, -1,
                                    xid ? gpu->xid_pres_vidx[x] : gpu->pres_vidx);
                }
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
    for (int i = 0; i < f->ndfams; i++) im_free(f->dfams[i].help_owned);
    im_free(f->dfams);
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
        /* faults and throttling from the owning pod's knobs */
        const sim_knobs_t *k = g->pod >= 0 ? &f->pods[g->pod].k : NULL;
        int throttle = k && util > 0.5 ? (int)k->throttle : 0;
        if (k) {
            const sim_pod_t *p = &f->pods[g->pod];
            int gi = (int)k->gpu_index;
            if (gi < 0 || gi >= f->o.gpus_per_pod) gi = 0;
            bool hit = i == p->gpu0 + gi;
            g->lost = hit && k->gpu_lost > 0;
            if (hit && k->xid_code > 0) g->xid = floor(k->xid_code);
            if (hit && k->row_remap_failure > 0 && !g->remap_failed) {
                g->remap_failed = true;
                g->uncorr_rows += 1;
            }
        }
        if (throttle == 1) target = POWER_MAX; /* held at the power limit */
        g->power += (target - g->power) * (dt >= 5 ? 1 : 0.5);
        g->power = floor(g->power * 1000) / 1000;
        double ttarget = 27 + 0.055 * g->power;
        if (throttle == 2) ttarget = 88; /* cooling cannot keep up: the slowdown limit */
        double a = 1 - exp(-dt / 60.0);
        g->temp += (ttarget - g->temp) * a;
        g->mem_temp += (ttarget + 6 - g->mem_temp) * a;
        g->energy_mj += g->power * dt * 1000;
        g->pcie_tx = floor(140000 + tok * 900 + 2000 * sim__rng_unif(&f->rng));
        g->pcie_rx = floor(120000 + ptok * 60 + 2000 * sim__rng_unif(&f->rng));
        if (f->o.gpus_per_pod > 1 && g->pod >= 0) g->nvlink += floor((tok + ptok) * 16384 * dt);
        g->sm_clock = util > 0.5 ? 1980 : 345;
        if (throttle) {
            g->sm_clock = floor(k->throttle_clock);
            /* violation counters: ns spent throttled */
            if (throttle == 1) g->power_viol += floor(dt * 1e9);
            if (throttle == 2 && g->temp >= 85) g->thermal_viol += floor(dt * 1e9);
        }
    }
}

/* The value of quantity q on a (physical) GPU. */
static double gpu_value(const sim_gpu_t *g, int q)
{
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
    case GQ_XID: x = g->xid; break;
    case GQ_ROW_REMAP_FAIL: x = g->remap_failed; break;
    case GQ_UNCORR_ROWS: x = g->uncorr_rows; break;
    case GQ_POWER_VIOL: x = g->power_viol; break;
    case GQ_THERMAL_VIOL: x = g->thermal_viol; break;
    default: x = 0;
    }
    return x;
}

void sim__dcgm_publish(sim_fleet_t *f)
{
    for (int n = 0; n < f->nnodes; n++) {
        const sim_tpl_t *t = &f->dtpl[n];
        double *v = f->dv[n];
        int k = 0;
        for (int gi = 0; gi < f->gpus_per_node; gi++) {
            const sim_gpu_t *g = &f->gpus[n * f->gpus_per_node + gi];
            v[g->pres_vidx] = g->lost ? 0 : 1;
            for (int x = 0; x < f->nxid; x++)
                v[g->xid_pres_vidx[x]] = !g->lost && g->xid == f->xid_codes[x];
        }
        for (int fi = 0; fi < t->nfams; fi++) {
            int q = f->dfams[fi].q;
            int nvar = q == GQ_XID ? f->nxid : 1;
            for (int gi = 0; gi < f->gpus_per_node; gi++) {
                const sim_gpu_t *g = &f->gpus[n * f->gpus_per_node + gi];
                double x = gpu_value(g, q);
                for (int var = 0; var < nvar; var++) v[t->series[k++].vidx] = x;
            }
        }
    }
}

/* ---- MIG nodes ----
 *
 * --mig-nodes N adds N nodes whose eight H100s are partitioned into MIG
 * instances of one profile, held by teams' notebook pods (every fourth
 * instance idle). The exporter prints the fields that exist per GPU instance
 * (framebuffer, the DCP activity ratios) once per instance with GPU_I_PROFILE
 * and GPU_I_ID after modelName and the pod holding it; the device-level fields
 * (clocks, temperatures, power, energy, errors, PCIe, NVLink) once per physical
 * GPU without instance or pod labels; GPU_UTIL and MEM_COPY_UTIL, which NVML
 * does not report in MIG mode, not at all. */

typedef struct mig_profile {
    const char *name;
    int per_gpu, slices, mem_eighths, first_id;
} mig_profile_t;

static const mig_profile_t mig_profiles[] = {
    {"1g.10gb", 7, 1, 1, 7},
    {"2g.20gb", 3, 2, 2, 3},
    {"3g.40gb", 2, 3, 4, 1},
    {"7g.80gb", 1, 7, 8, 0},
};

static const mig_profile_t *mig_find(const char *name)
{
    for (size_t i = 0; i < IM_ARRAY_LEN(mig_profiles); i++)
        if (strcmp(mig_profiles[i].name, name) == 0) return &mig_profiles[i];
    return NULL;
}

bool sim__mig_profile_ok(const char *name)
{
    return mig_find(name) != NULL;
}

static bool per_instance(int q)
{
    return q == GQ_FB_FREE || q == GQ_FB_USED || q == GQ_FB_RESERVED || q == GQ_GR_ACTIVE ||
           q == GQ_TENSOR || q == GQ_DRAM || q == GQ_SM_ACTIVE || q == GQ_SM_OCC || q == GQ_FP16 ||
           q == GQ_FP32;
}

static bool mig_unsupported(int q)
{
    return q == GQ_UTIL || q == GQ_MEM_UTIL;
}

void sim__mig_build(sim_fleet_t *f)
{
    if (f->o.mig_nodes <= 0) return;
    const mig_profile_t *pr = mig_find(f->mig_profile);
    f->nmig = f->o.mig_nodes;
    f->mig_per_gpu = pr->per_gpu;
    f->mig_frac = pr->slices / 7.0;
    f->mig_fb_mib = floor(FB_TOTAL_MIB * pr->mem_eighths / 8);
    int ngpu = f->nmig * 8, ninst = ngpu * pr->per_gpu;
    f->mgpus = im_calloc((size_t)ngpu, sizeof *f->mgpus);
    f->minst = im_calloc((size_t)ninst, sizeof *f->minst);
    f->mig_node_names = im_calloc((size_t)f->nmig, sizeof *f->mig_node_names);
    sim__rng_seed(&f->mig_rng, f->o.seed ^ 0x3167);
    for (int i = 0; i < ngpu; i++) {
        sim_gpu_t *g = &f->mgpus[i];
        g->pod = -1;
        uint64_t a = sim__rng_next(&f->mig_rng), b = sim__rng_next(&f->mig_rng);
        snprintf(g->uuid, sizeof g->uuid, "GPU-%08x-%04x-%04x-%04x-%012llx", (unsigned)(a >> 32),
                 (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xffff, (unsigned)(b >> 48),
                 (unsigned long long)(b & 0xffffffffffffULL));
        g->power = POWER_IDLE;
        g->temp = 30;
        g->mem_temp = 36;
        g->energy_mj = 9e10 + sim__rng_unif(&f->mig_rng) * 3e10;
        g->sm_clock = 345;
    }
    for (int j = 0; j < ninst; j++) {
        sim_mig_t *m = &f->minst[j];
        m->gpu = j / pr->per_gpu;
        m->gi_id = pr->first_id + j % pr->per_gpu;
        m->team = j % 4 == 3 ? -1 : (j - j / 4) % f->nteams;
        if (m->team >= 0) {
            static const char alpha[] = "bcdfghjklmnpqrstvwxz2456789";
            char sfx[6];
            for (int c = 0; c < 5; c++)
                sfx[c] = alpha[sim__rng_next(&f->mig_rng) % (sizeof alpha - 1)];
            sfx[5] = '\0';
            snprintf(m->pod, sizeof m->pod, "notebook-%s-%s", f->teams[m->team], sfx);
        }
        m->target = 0.2 + 0.6 * sim__rng_unif(&f->mig_rng);
    }
    f->mtpl = im_calloc((size_t)f->nmig, sizeof *f->mtpl);
    f->mv = im_calloc((size_t)f->nmig, sizeof *f->mv);
    for (int n = 0; n < f->nmig; n++) {
        char nm[64];
        snprintf(nm, sizeof nm, "gpu-node-h100-mig-%02d", n + 1);
        f->mig_node_names[n] = im_strdup(nm);
        sim_tpl_t *t = &f->mtpl[n];
        sim__tpl_init(t, false);
        for (int fi = 0; fi < f->ndfams; fi++) {
            const sim_dcgm_fam_t *c = &f->dfams[fi];
            sim__tpl_family(t, c->name, c->counter ? "counter" : "gauge", c->help, c->name,
                            c->counter ? "unknown" : "gauge",
                            c->is_int ? SIM_FMT_DCGM_INT : SIM_FMT_DCGM_F);
            if (mig_unsupported(c->q)) continue;
            for (int g = 0; g < 8; g++) {
                const sim_gpu_t *gpu = &f->mgpus[n * 8 + g];
                char gs[16], dev[32], gi[16];
                snprintf(gs, sizeof gs, "%d", g);
                snprintf(dev, sizeof dev, "nvidia%d", g);
                sim_label_t ls[14] = {
                    {"gpu", gs},
                    {"UUID", gpu->uuid},
                    {"pci_bus_id", pci_ids[g]},
                    {"device", dev},
                    {"modelName", "NVIDIA H100 80GB HBM3"},
                };
                if (!per_instance(c->q)) {
                    ls[5] = (sim_label_t){"Hostname", nm};
                    ls[6] = (sim_label_t){"DCGM_FI_DRIVER_VERSION", "580.95.05"};
                    int m = 7;
                    if (c->q == GQ_XID) {
                        ls[m++] = (sim_label_t){"err_code", "0"};
                        ls[m++] = (sim_label_t){"err_msg", "No Error"};
                    }
                    sim__tpl_series(t, c->name, ls, m, -1, -1);
                    continue;
                }
                for (int x = 0; x < pr->per_gpu; x++) {
                    const sim_mig_t *mi = &f->minst[(n * 8 + g) * pr->per_gpu + x];
                    snprintf(gi, sizeof gi, "%d", mi->gi_id);
                    int m = 5;
                    ls[m++] = (sim_label_t){"GPU_I_PROFILE", pr->name};
                    ls[m++] = (sim_label_t){"GPU_I_ID", gi};
                    ls[m++] = (sim_label_t){"Hostname", nm};
                    ls[m++] = (sim_label_t){"DCGM_FI_DRIVER_VERSION", "580.95.05"};
                    if (mi->team >= 0) {
                        ls[m++] = (sim_label_t){"container", "notebook"};
                        ls[m++] = (sim_label_t){"namespace", f->teams[mi->team]};
                        ls[m++] = (sim_label_t){"pod", mi->pod};
                    }
                    sim__tpl_series(t, c->name, ls, m, -1, -1);
                }
            }
        }
        f->mv[n] = im_calloc((size_t)t->nvalues, sizeof(double));
    }
    sim__mig_publish(f);
}

void sim__mig_free(sim_fleet_t *f)
{
    for (int n = 0; n < f->nmig; n++) {
        if (f->mtpl) sim__tpl_free(&f->mtpl[n]);
        if (f->mv) im_free(f->mv[n]);
        if (f->mig_node_names) im_free(f->mig_node_names[n]);
    }
    im_free(f->mtpl);
    im_free(f->mv);
    im_free(f->mig_node_names);
    im_free(f->mgpus);
    im_free(f->minst);
}

/* Notebook activity drifts towards a target that changes every few minutes. */
void sim__mig_tick(sim_fleet_t *f, double dt)
{
    int ngpu = f->nmig * 8;
    for (int i = 0; i < ngpu; i++) {
        sim_gpu_t *g = &f->mgpus[i];
        double load = 0;
        for (int x = 0; x < f->mig_per_gpu; x++) {
            sim_mig_t *m = &f->minst[i * f->mig_per_gpu + x];
            if (m->team < 0) continue;
            if (sim__rng_unif(&f->mig_rng) < dt / 300.0)
                m->target =
                    sim__rng_unif(&f->mig_rng) < 0.3 ? 0 : 0.1 + 0.8 * sim__rng_unif(&f->mig_rng);
            double a = m->act + (m->target - m->act) * fmin(1, 0.05 * dt) +
                       0.02 * (sim__rng_unif(&f->mig_rng) - 0.5);
            m->act = floor(fmin(1, fmax(0, a)) * 1e6) / 1e6;
            load += m->act * f->mig_frac;
        }
        double target = POWER_IDLE + (POWER_MAX - POWER_IDLE) * 0.8 * load;
        g->power += (target - g->power) * (dt >= 5 ? 1 : 0.5);
        g->power = floor(g->power * 1000) / 1000;
        double ttarget = 27 + 0.055 * g->power, a = 1 - exp(-dt / 60.0);
        g->temp += (ttarget - g->temp) * a;
        g->mem_temp += (ttarget + 6 - g->mem_temp) * a;
        g->energy_mj += g->power * dt * 1000;
        g->sm_clock = load > 0.005 ? 1980 : 345;
        g->pcie_tx = floor(90000 + 2000 * sim__rng_unif(&f->mig_rng));
        g->pcie_rx = floor(80000 + 2000 * sim__rng_unif(&f->mig_rng));
    }
}

void sim__mig_publish(sim_fleet_t *f)
{
    for (int n = 0; n < f->nmig; n++) {
        const sim_tpl_t *t = &f->mtpl[n];
        double *v = f->mv[n];
        int k = 0;
        for (int fi = 0; fi < t->nfams; fi++) {
            int q = f->dfams[fi].q;
            if (mig_unsupported(q)) continue;
            for (int gi = 0; gi < 8; gi++) {
                const sim_gpu_t *g = &f->mgpus[n * 8 + gi];
                if (!per_instance(q)) {
                    v[t->series[k++].vidx] = gpu_value(g, q);
                    continue;
                }
                for (int x = 0; x < f->mig_per_gpu; x++) {
                    const sim_mig_t *m = &f->minst[(n * 8 + gi) * f->mig_per_gpu + x];
                    double fb = m->team >= 0 ? floor(f->mig_fb_mib * (0.3 + 0.5 * m->act)) : 0;
                    double y = 0;
                    switch (q) {
                    case GQ_FB_USED: y = fb; break;
                    case GQ_FB_FREE: y = f->mig_fb_mib - fb; break;
                    case GQ_GR_ACTIVE: y = m->act; break;
                    case GQ_TENSOR: y = m->act * 0.6; break;
                    case GQ_DRAM: y = m->act * 0.3; break;
                    case GQ_SM_ACTIVE: y = m->act * 0.93; break;
                    case GQ_SM_OCC: y = m->act * 0.41; break;
                    case GQ_FP16: y = m->act * 0.07; break;
                    case GQ_FP32: y = m->act * 0.05; break;
                    default: y = 0;
                    }
                    v[t->series[k++].vidx] = y;
                }
            }
        }
    }
}

/* Ground truth of the MIG instances: a team holds its instances' fraction of a
 * GPU; the GPU's energy is split by the compute slices each instance holds (an
 * estimate, as any per-instance energy is). */
void sim__mig_truth(sim_fleet_t *f, double dt)
{
    int ngpu = f->nmig * 8;
    for (int i = 0; i < ngpu; i++) {
        const sim_gpu_t *g = &f->mgpus[i];
        double used = 0;
        for (int x = 0; x < f->mig_per_gpu; x++) {
            const sim_mig_t *m = &f->minst[i * f->mig_per_gpu + x];
            sim_truth_team_t *t = m->team >= 0 ? &f->truth_mig[m->team] : &f->truth_mig_idle;
            t->allocated_s += f->mig_frac * dt;
            t->busy_s += m->act * f->mig_frac * dt;
            t->energy_j += g->power * f->mig_frac * dt;
            used += f->mig_frac;
        }
        /* slices no instance holds (2g.20gb, 3g.40gb leave one) */
        f->truth_mig_idle.energy_j += g->power * fmax(0, 1 - used) * dt;
    }
}
