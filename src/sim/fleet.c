/* fleet.c — the simulated fleet: pods, nodes and Kueue advanced together in ticks.
 *
 * Creation lays out the fleet (pods round-robin over models and teams, pods
 * packed onto 8-GPU nodes by tensor-parallel size), builds one exposition
 * template per served model, per node and for Kueue, and loads the scenario.
 * sim_fleet_advance() applies due scenario events, then runs one tick of every
 * pod's engine, the GPUs, and Kueue, in that order, so that the three layers
 * describe the same moment. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/timeutil.h"
#include "sim/vllm_int.h"

void sim_options_default(sim_options_t *o)
{
    memset(o, 0, sizeof *o);
    o->pods = 4;
    o->models = "meta-llama/Llama-3.1-8B-Instruct";
    o->gpus_per_pod = 1;
    o->teams = "llm-serving,research";
    o->scenario = "healthy";
    o->vllm_version = "0.27.1";
    o->engine = "vllm";
    o->mig_profile = "1g.10gb";
    o->seed = 1;
    o->tick_ms = 1000;
}

static int split_list(char *s, char ***out)
{
    int n = 0, cap = 8;
    char **v = im_malloc(sizeof *v * (size_t)cap);
    char *p = s;
    while (p && *p) {
        char *c = strchr(p, ',');
        if (c) *c = '\0';
        while (*p == ' ') p++;
        if (*p) {
            if (n == cap) {
                cap *= 2;
                v = im_realloc(v, sizeof *v * (size_t)cap);
            }
            v[n++] = p;
        }
        p = c ? c + 1 : NULL;
    }
    *out = v;
    return n;
}

static void model_spec(const char *name, int tp, sim_model_spec_t *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    double b = 8;
    for (const char *p = name; *p; p++) {
        if ((*p >= '0' && *p <= '9') &&
            (p == name || p[-1] == '-' || p[-1] == '_' || p[-1] == '/')) {
            char *end;
            double x = strtod(p, &end);
            if ((*end == 'B' || *end == 'b') && x > 0 && x < 2000) {
                b = x;
                break;
            }
        }
    }
    int layers = b <= 10 ? 32 : b <= 20 ? 40 : b <= 40 ? 64 : 80;
    m->params = b * 1e9;
    m->weight_bytes = 2 * m->params;
    m->kv_bytes_per_tok = 2.0 * layers * 8 * 128 * 2;
    m->max_model_len = strstr(name, "Llama-3") ? 131072 : strstr(name, "Qwen3") ? 40960 : 32768;
    double mem = 0.9 * 85899345920.0 * tp - m->weight_bytes - 2.5e9 * tp;
    double blocks = mem / (m->kv_bytes_per_tok * 16);
    m->num_gpu_blocks = blocks < 512 ? 512 : (int)blocks;
}

static void slug(const char *model, char *out, size_t cap)
{
    const char *s = strrchr(model, '/');
    s = s ? s + 1 : model;
    size_t n = 0;
    for (; *s && n + 1 < cap && n < 40; s++) {
        char c = *s;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) c = '-';
        if (c == '-' && (n == 0 || out[n - 1] == '-')) continue;
        out[n++] = c;
    }
    while (n > 0 && out[n - 1] == '-') n--;
    out[n] = '\0';
}

static void k8s_suffix(sim_rng_t *r, char *out, int n)
{
    static const char alpha[] = "bcdfghjklmnpqrstvwxz2456789";
    for (int i = 0; i < n; i++) out[i] = alpha[sim__rng_next(r) % (sizeof alpha - 1)];
    out[n] = '\0';
}

static void add_ep(sim_fleet_t *f, sim_ep_kind_t kind, int index, const char *path, const char *ns,
                   const char *pod, const char *model, const char *node)
{
    f->eps = im_realloc(f->eps, sizeof *f->eps * (size_t)(f->neps + 1));
    sim_endpoint_t *e = &f->eps[f->neps++];
    e->kind = kind;
    e->index = index;
    e->path = im_strdup(path);
    e->namespace_ = ns;
    e->pod = pod;
    e->model = model;
    e->node = node;
    e->engine = NULL;
}

static void build_b125(sim_fleet_t *f)
{
    /* build_1_2_5_buckets(max_model_len) of the first model (one per fleet). */
    int max = f->specs[0].max_model_len;
    f->b125 = im_malloc(sizeof *f->b125 * 64);
    f->nb125 = 0;
    for (double e = 1; f->nb125 < 60; e *= 10) {
        static const double mant[3] = {1, 2, 5};
        int stop = 0;
        for (int i = 0; i < 3; i++) {
            double v = mant[i] * e;
            if (v > max) {
                stop = 1;
                break;
            }
            f->b125[f->nb125++] = v;
        }
        if (stop) break;
    }
}

static bool event_selects(const sim_fleet_t *f, const sim_event_t *e, const sim_pod_t *p)
{
    int i = p->index;
    if (e->pod_lo >= 0 && (i < e->pod_lo || i > e->pod_hi)) return false;
    if (e->model[0] && strcmp(e->model, f->models[p->model]) != 0) return false;
    if (e->team[0] && strcmp(e->team, f->teams[p->team]) != 0) return false;
    if (e->team_idx >= 0 && p->team != e->team_idx) return false;
    return true;
}

/* Event selectors must name served models and teams. */
static im_rc check_events(const sim_fleet_t *f, im_err_t *err)
{
    for (int j = 0; j < f->sc.nevents; j++) {
        const sim_event_t *e = &f->sc.events[j];
        bool ok = !e->model[0];
        for (int i = 0; i < f->nmodels && !ok; i++) ok = strcmp(f->models[i], e->model) == 0;
        if (!ok)
            return im_err_set(err, IM_EINVAL,
                              "scenario event at %llds: model \"%s\" is not served (--models %s)",
                              (long long)(e->at_ms / 1000), e->model, f->o.models);
        ok = !e->team[0];
        for (int i = 0; i < f->nteams && !ok; i++) ok = strcmp(f->teams[i], e->team) == 0;
        if (!ok)
            return im_err_set(err, IM_EINVAL,
                              "scenario event at %llds: team \"%s\" is not one of --teams %s",
                              (long long)(e->at_ms / 1000), e->team, f->o.teams);
    }
    return IM_OK;
}

im_rc sim_fleet_create(const sim_options_t *o, sim_fleet_t **out, im_err_t *err)
{
    *out = NULL;
    sim_options_t def;
    sim_options_default(&def);
    sim_fleet_t *f = im_calloc(1, sizeof *f);
    f->o = *o;
    if (!f->o.models || !*f->o.models) f->o.models = def.models;
    if (!f->o.teams || !*f->o.teams) f->o.teams = def.teams;
    if (f->o.tick_ms <= 0) f->o.tick_ms = 1000;
    if (f->o.gpus_per_pod <= 0) f->o.gpus_per_pod = 1;
    im_rc rc = IM_OK;
    if (f->o.pods < 0 || f->o.pods > 100000) {
        rc = im_err_set(err, IM_EINVAL, "--pods must be between 0 and 100000");
        goto fail;
    }
    if (f->o.gpus_per_pod > 8) {
        rc = im_err_set(err, IM_EINVAL, "--gpus-per-pod must be at most 8 (one node)");
        goto fail;
    }
    if (!sim__parse_version(f->o.vllm_version, &f->version)) {
        rc = im_err_set(err, IM_EINVAL, "--vllm-version: cannot parse \"%s\" (e.g. 0.27.1, 0.6.3)",
                        f->o.vllm_version);
        goto fail;
    }
    if (f->version < LLM_V(0, 3, 1)) {
        rc = im_err_set(err, IM_EINVAL, "--vllm-version: versions before 0.3.1 are not simulated");
        goto fail;
    }
    if (!f->o.mig_profile || !*f->o.mig_profile) f->o.mig_profile = def.mig_profile;
    if (f->o.mig_nodes < 0 || f->o.mig_nodes > 1000) {
        rc = im_err_set(err, IM_EINVAL, "--mig-nodes must be between 0 and 1000");
        goto fail;
    }
    if (!sim__mig_profile_ok(f->o.mig_profile)) {
        rc = im_err_set(err, IM_EINVAL,
                        "--mig-profile: unknown profile \"%s\" (1g.10gb, 2g.20gb, 3g.40gb, "
                        "7g.80gb)",
                        f->o.mig_profile);
        goto fail;
    }
    f->mig_profile = f->o.mig_profile;
    f->models_s = im_strdup(f->o.models);
    f->teams_s = im_strdup(f->o.teams);
    f->nmodels = split_list(f->models_s, &f->models);
    f->nteams = split_list(f->teams_s, &f->teams);
    if (f->nmodels == 0 || f->nteams == 0) {
        rc = im_err_set(err, IM_EINVAL, "--models and --teams need at least one name each");
        goto fail;
    }
    char bad[64];
    if (!sim__engines_parse(f, f->o.engine, bad, sizeof bad)) {
        rc = im_err_set(err, IM_EINVAL,
                        "--engine: unknown engine \"%s\" (vllm, sglang, or a comma list such as "
                        "vllm,sglang, cycled over --models)",
                        bad);
        goto fail;
    }
    if ((rc = sim__scenario_load(f->o.scenario, &f->sc, err)) != IM_OK) goto fail;
    if ((rc = check_events(f, err)) != IM_OK) goto fail;
    f->t0_ms = f->o.start_ms ? f->o.start_ms : im_now_ms() / 1000 * 1000;
    f->now_ms = f->t0_ms;
    f->tick_ms = f->o.tick_ms;
    sim__rng_seed(&f->rng, f->o.seed);

    f->specs = im_calloc((size_t)f->nmodels, sizeof *f->specs);
    for (int i = 0; i < f->nmodels; i++) model_spec(f->models[i], f->o.gpus_per_pod, &f->specs[i]);
    build_b125(f);

    /* Layout: pods round-robin over models and teams, packed on 8-GPU nodes. */
    f->npods = f->o.pods;
    f->gpus_per_node = 8;
    int per_node = 8 / f->o.gpus_per_pod;
    f->nnodes = f->npods == 0 ? 1 : (f->npods + per_node - 1) / per_node;
    f->gpus = im_calloc((size_t)f->nnodes * 8, sizeof *f->gpus);
    f->pods = im_calloc((size_t)(f->npods ? f->npods : 1), sizeof *f->pods);
    f->pod_names = im_calloc((size_t)(f->npods ? f->npods : 1), sizeof *f->pod_names);
    f->node_names = im_calloc((size_t)f->nnodes, sizeof *f->node_names);
    sim_rng_t nr;
    sim__rng_seed(&nr, f->o.seed ^ 0x5eed);
    for (int i = 0; i < f->nnodes * 8; i++) {
        sim_gpu_t *g = &f->gpus[i];
        g->pod = -1;
        uint64_t a = sim__rng_next(&nr), b = sim__rng_next(&nr);
        snprintf(g->uuid, sizeof g->uuid, "GPU-%08x-%04x-%04x-%04x-%012llx", (unsigned)(a >> 32),
                 (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xffff, (unsigned)(b >> 48),
                 (unsigned long long)(b & 0xffffffffffffULL));
        g->power = 70.0;
        g->temp = 30;
        g->mem_temp = 36;
        g->energy_mj = 9e10 + sim__rng_unif(&nr) * 3e10;
        g->sm_clock = 345;
    }
    for (int n = 0; n < f->nnodes; n++) {
        char nm[64];
        snprintf(nm, sizeof nm, "gpu-node-h100-%02d", n + 1);
        f->node_names[n] = im_strdup(nm);
    }
    /* Deployment hashes: one per (model, team). */
    for (int i = 0; i < f->npods; i++) {
        sim_pod_t *p = &f->pods[i];
        p->index = i;
        p->model = i % f->nmodels;
        p->team = (i / f->nmodels) % f->nteams;
        p->node = i / per_node;
        p->gpu0 = p->node * 8 + (i % per_node) * f->o.gpus_per_pod;
        for (int j = 0; j < f->o.gpus_per_pod; j++) f->gpus[p->gpu0 + j].pod = i;
        char s[64], h[16], sfx[8], nm[128];
        slug(f->models[p->model], s, sizeof s);
        sim_rng_t hr;
        sim__rng_seed(&hr, f->o.seed * 131 + (uint64_t)(p->model * 17 + p->team));
        k8s_suffix(&hr, h, 9);
        k8s_suffix(&nr, sfx, 5);
        snprintf(nm, sizeof nm, "%s-%s-%s", s, h, sfx);
        f->pod_names[i] = im_strdup(nm);
    }

    /* Templates: one per served model (pods of a model share it). */
    f->vtpl = im_calloc((size_t)f->nmodels, sizeof *f->vtpl);
    for (int i = 0; i < f->nmodels; i++) {
        sim__tpl_init(&f->vtpl[i], true);
        if (f->model_engine[i] == SIM_ENGINE_SGLANG)
            sim__sglang_build(f, &f->vtpl[i], &f->specs[i]);
        else
            sim__vllm_build(&f->vtpl[i], &f->lay, f->version, &f->specs[i], f->o.gpus_per_pod,
                            f->b125, f->nb125);
    }
    for (int i = 0; i < f->npods; i++) sim__pod_init(f, &f->pods[i]);
    sim__dcgm_build(f);
    sim__mig_build(f);
    sim__kueue_build(f);
    f->truth = im_calloc((size_t)f->nteams, sizeof *f->truth);
    f->truth_mig = im_calloc((size_t)f->nteams, sizeof *f->truth_mig);

    char path[64];
    for (int i = 0; i < f->npods; i++) {
        snprintf(path, sizeof path, "/pods/%d/metrics", i);
        add_ep(f, SIM_EP_VLLM, i, path, f->teams[f->pods[i].team], f->pod_names[i],
               f->models[f->pods[i].model], f->node_names[f->pods[i].node]);
        f->eps[f->neps - 1].engine = sim__pod_sglang(f, &f->pods[i]) ? "sglang" : "vllm";
    }
    for (int n = 0; n < f->nnodes; n++) {
        snprintf(path, sizeof path, "/nodes/%d/metrics", n);
        add_ep(f, SIM_EP_DCGM, n, path, "gpu-operator", NULL, NULL, f->node_names[n]);
    }
    for (int n = 0; n < f->nmig; n++) {
        snprintf(path, sizeof path, "/nodes/%d/metrics", f->nnodes + n);
        add_ep(f, SIM_EP_DCGM, f->nnodes + n, path, "gpu-operator", NULL, NULL,
               f->mig_node_names[n]);
    }
    add_ep(f, SIM_EP_KUEUE, 0, "/kueue/metrics", "kueue-system",
           "kueue-controller-manager-6d9c8f7b5-x2k4q", NULL, f->node_names[0]);
    /* dcgm-exporter pod names (DaemonSet: one per node) */
    for (int i = 0; i < f->neps; i++) {
        if (f->eps[i].kind != SIM_EP_DCGM) continue;
        char nm[64], sfx[8];
        k8s_suffix(&nr, sfx, 5);
        snprintf(nm, sizeof nm, "nvidia-dcgm-exporter-%s", sfx);
        f->eps[i].pod = im_strdup(nm);
    }
    *out = f;
    return IM_OK;
fail:
    sim_fleet_free(f);
    return rc;
}

void sim_fleet_free(sim_fleet_t *f)
{
    if (!f) return;
    for (int i = 0; i < f->neps; i++) {
        im_free((char *)f->eps[i].path);
        if (f->eps[i].kind == SIM_EP_DCGM) im_free((char *)f->eps[i].pod);
    }
    im_free(f->eps);
    sim__kueue_free(f);
    sim__dcgm_free(f);
    sim__mig_free(f);
    im_free(f->truth);
    im_free(f->truth_mig);
    if (f->pods)
        for (int i = 0; i < f->npods; i++) sim__pod_free(&f->pods[i]);
    if (f->vtpl)
        for (int i = 0; i < f->nmodels; i++) sim__tpl_free(&f->vtpl[i]);
    im_free(f->vtpl);
    sim__vllm_layout_free(&f->lay);
    sim__vllm_layout_free(&f->slay);
    im_free(f->model_engine);
    if (f->pod_names)
        for (int i = 0; i < f->npods; i++) im_free(f->pod_names[i]);
    im_free(f->pod_names);
    if (f->node_names)
        for (int i = 0; i < f->nnodes; i++) im_free(f->node_names[i]);
    im_free(f->node_names);
    im_free(f->pods);
    im_free(f->gpus);
    im_free(f->specs);
    im_free(f->b125);
    im_free(f->models);
    im_free(f->teams);
    im_free(f->models_s);
    im_free(f->teams_s);
    sim__scenario_free(&f->sc);
    im_free(f);
}

static void apply_event(sim_fleet_t *f, const sim_event_t *e)
{
    for (int i = 0; i < f->npods; i++) {
        sim_pod_t *p = &f->pods[i];
        if (!event_selects(f, e, p)) continue;
        if (e->preset[0]) sim__scenario_preset(e->preset, &p->k);
        for (int j = 0; j < e->nset; j++) sim__knob_set(&p->k, e->names[j], e->values[j]);
        int blocks = (int)(f->specs[p->model].num_gpu_blocks * p->k.kv_factor);
        p->blocks_total = blocks < 64 ? 64 : blocks;
    }
}

void sim_fleet_advance(sim_fleet_t *f, int64_t t_ms)
{
    bool any = false;
    while (f->now_ms + f->tick_ms <= t_ms) {
        int64_t off = f->now_ms - f->t0_ms;
        if (f->sc.loop_ms > 0 && off > 0 && off % f->sc.loop_ms == 0) {
            /* a new cycle: back to the base knobs, events from the start */
            sim_event_t reset = {.pod_lo = -1, .pod_hi = -1, .team_idx = -1};
            for (int i = 0; i < f->npods; i++) f->pods[i].k = f->sc.base;
            apply_event(f, &reset);
            f->next_event = 0;
        }
        int64_t cyc = f->sc.loop_ms > 0 ? off % f->sc.loop_ms : off;
        while (f->next_event < f->sc.nevents && f->sc.events[f->next_event].at_ms <= cyc)
            apply_event(f, &f->sc.events[f->next_event++]);
        double t0 = (double)f->now_ms / 1000.0, dt = (double)f->tick_ms / 1000.0;
        for (int i = 0; i < f->npods; i++) sim__pod_tick(f, &f->pods[i], t0, dt);
        sim__dcgm_tick(f, dt);
        if (f->nmig > 0) sim__mig_tick(f, dt);
        sim__kueue_tick(f, t0, dt);
        sim__truth_tick(f, dt);
        f->now_ms += f->tick_ms;
        any = true;
    }
    if (any) {
        for (int i = 0; i < f->npods; i++) sim__pod_publish(f, &f->pods[i]);
        sim__dcgm_publish(f);
        sim__mig_publish(f);
        sim__kueue_publish(f);
    }
}

int64_t sim_fleet_now_ms(const sim_fleet_t *f)
{
    return f->now_ms;
}

int sim_fleet_endpoint_count(const sim_fleet_t *f)
{
    return f->neps;
}

const sim_endpoint_t *sim_fleet_endpoint(const sim_fleet_t *f, int i)
{
    return i >= 0 && i < f->neps ? &f->eps[i] : NULL;
}

int sim_fleet_count(const sim_fleet_t *f, sim_ep_kind_t kind)
{
    switch (kind) {
    case SIM_EP_VLLM: return f->npods;
    case SIM_EP_DCGM: return f->nnodes + f->nmig;
    case SIM_EP_KUEUE: return 1;
    }
    return 0;
}

bool sim_fleet_endpoint_up(const sim_fleet_t *f, sim_ep_kind_t kind, int index)
{
    if (index < 0 || index >= sim_fleet_count(f, kind)) return false;
    if (kind == SIM_EP_VLLM) return f->pods[index].k.down == 0;
    if (kind == SIM_EP_DCGM)
        for (int i = 0; i < f->npods; i++)
            if (f->pods[i].node == index && f->pods[i].k.dcgm_down != 0) return false;
    return true;
}

im_rc sim_fleet_render(sim_fleet_t *f, sim_ep_kind_t kind, int index, im_buf_t *out)
{
    if (index < 0 || index >= sim_fleet_count(f, kind)) return IM_ENOTFOUND;
    size_t before = out->len;
    switch (kind) {
    case SIM_EP_VLLM: {
        const sim_pod_t *p = &f->pods[index];
        sim__render_text(&f->vtpl[p->model], p->v, out);
        break;
    }
    case SIM_EP_DCGM:
        if (index < f->nnodes)
            sim__render_text(&f->dtpl[index], f->dv[index], out);
        else
            sim__render_text(&f->mtpl[index - f->nnodes], f->mv[index - f->nnodes], out);
        break;
    case SIM_EP_KUEUE: sim__render_text(sim__kueue_tpl(f), sim__kueue_values(f), out); break;
    }
    return out->len > before ? IM_OK : IM_ELIMIT;
}

void sim__json_str(im_buf_t *b, const char *s)
{
    (void)im_buf_putc(b, '"');
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\')
            (void)im_buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            (void)im_buf_printf(b, "\\u%04x", c);
        else
            (void)im_buf_putc(b, (char)c);
    }
    (void)im_buf_putc(b, '"');
}

int sim__target_labels(const sim_fleet_t *f, int i, sim_label_t *out, char *buf, size_t cap)
{
    static const char *const jobs[3] = {"vllm", "dcgm", "kueue"};
    const sim_endpoint_t *e = &f->eps[i];
    int n = 0;
    bool sgl = e->engine && strcmp(e->engine, "sglang") == 0;
    out[n++] = (sim_label_t){"job", sgl ? "sglang" : jobs[e->kind]};
    /* the instance a Kubernetes-discovered scrape would have: the pod's (or
     * node's, or service's) address, so that targets stay distinct */
    if (e->kind == SIM_EP_VLLM)
        snprintf(buf, cap, "%s:8000", e->pod);
    else if (e->kind == SIM_EP_DCGM)
        snprintf(buf, cap, "%s:9400", e->node);
    else
        snprintf(buf, cap, "kueue-controller-manager-metrics-service:8443");
    out[n++] = (sim_label_t){"instance", buf};
    out[n++] = (sim_label_t){"namespace", e->namespace_};
    if (e->pod) out[n++] = (sim_label_t){"pod", e->pod};
    if (e->kind == SIM_EP_VLLM) out[n++] = (sim_label_t){"container", sgl ? "sglang" : "vllm"};
    if (e->model) out[n++] = (sim_label_t){"model", e->model};
    out[n++] = (sim_label_t){"node", e->node};
    return n;
}

im_rc sim_fleet_targets_json(const sim_fleet_t *f, const char *host_port, int port_per_pod_base,
                             im_buf_t *out)
{
    const char *colon = strrchr(host_port, ':');
    size_t hostlen = colon ? (size_t)(colon - host_port) : strlen(host_port);
    (void)im_buf_puts(out, "[\n");
    for (int i = 0; i < f->neps; i++) {
        const sim_endpoint_t *e = &f->eps[i];
        char target[300], path[64], inst[300];
        if (e->kind == SIM_EP_VLLM && port_per_pod_base > 0) {
            snprintf(target, sizeof target, "%.*s:%d", (int)hostlen, host_port,
                     port_per_pod_base + e->index);
            snprintf(path, sizeof path, "/metrics");
        } else {
            snprintf(target, sizeof target, "%s", host_port);
            snprintf(path, sizeof path, "%s", e->path);
        }
        (void)im_buf_puts(out, "  {\"targets\": [");
        sim__json_str(out, target);
        (void)im_buf_puts(out, "], \"labels\": {\"__metrics_path__\": ");
        sim__json_str(out, path);
        sim_label_t ls[8];
        int n = sim__target_labels(f, i, ls, inst, sizeof inst);
        for (int k = 0; k < n; k++) {
            (void)im_buf_puts(out, ", ");
            sim__json_str(out, ls[k].name);
            (void)im_buf_puts(out, ": ");
            sim__json_str(out, ls[k].value);
        }
        (void)im_buf_puts(out, i + 1 < f->neps ? "}},\n" : "}}\n");
    }
    return im_buf_puts(out, "]\n");
}

void sim_fleet_pod_stats(const sim_fleet_t *f, int pod, sim_pod_stats_t *s)
{
    memset(s, 0, sizeof *s);
    if (pod < 0 || pod >= f->npods) return;
    const sim_pod_t *p = &f->pods[pod];
    s->running = p->nrun;
    s->waiting = p->nwait;
    s->waiting_deferred = (int)p->q[Q_WAIT_DEF];
    s->max_num_seqs = (int)p->k.max_num_seqs;
    s->kv_usage = p->q[Q_KV_USAGE];
    s->preemptions = p->q[Q_PREEMPT];
    s->finished[0] = p->q[Q_FIN_STOP];
    s->finished[1] = p->q[Q_FIN_LENGTH];
    s->finished[2] = p->q[Q_FIN_ABORT];
    s->finished[3] = p->q[Q_FIN_ERROR];
    s->finished[4] = p->q[Q_FIN_REP];
    double u = 0, m = 0;
    for (int j = 0; j < f->o.gpus_per_pod; j++) {
        u += f->gpus[p->gpu0 + j].util;
        m += f->gpus[p->gpu0 + j].mem_util;
    }
    s->gpu_util = u / f->o.gpus_per_pod;
    s->mem_copy_util = m / f->o.gpus_per_pod;
    s->prompt_tokens = p->q[Q_PROMPT];
    s->generation_tokens = p->q[Q_GEN];
    s->prefix_hits = p->q[Q_PREFIX_HITS];
    s->prefix_queries = p->q[Q_PREFIX_QUERIES];
}
