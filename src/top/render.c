/* render.c — the terminal frame and the JSON of a top view (top.h). */
#include "util/base.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "top/top.h"

const char *top_sort_name(top_sort_t s)
{
    static const char *const names[] = {"model", "waiting", "kv", "ttft", "tokens"};
    return s < TOP_SORT_COUNT ? names[s] : "?";
}

/* ---- Formatting ---- */

static void fmt_num(char *b, size_t cap, double v)
{
    double a = fabs(v);
    if (isnan(v))
        snprintf(b, cap, "-");
    else if (a >= 1e6)
        snprintf(b, cap, "%.1fM", v / 1e6);
    else if (a >= 1e4)
        snprintf(b, cap, "%.1fk", v / 1e3);
    else if (a >= 100 || v == floor(v))
        snprintf(b, cap, "%.0f", v);
    else
        snprintf(b, cap, "%.1f", v);
}

static void fmt_pct(char *b, size_t cap, double v)
{
    if (isnan(v))
        snprintf(b, cap, "-");
    else
        snprintf(b, cap, "%.0f%%", v * 100);
}

/* durations as a person reads them: 850ms, 2.4s, 3.5m */
static void fmt_dur(char *b, size_t cap, double v)
{
    if (isnan(v))
        snprintf(b, cap, "-");
    else if (isinf(v))
        snprintf(b, cap, ">max");
    else if (v < 0.001)
        snprintf(b, cap, "%.0fus", v * 1e6);
    else if (v < 1)
        snprintf(b, cap, "%.0fms", v * 1000);
    else if (v < 60)
        snprintf(b, cap, "%.1fs", v);
    else if (v < 3600)
        snprintf(b, cap, "%.1fm", v / 60);
    else
        snprintf(b, cap, "%.1fh", v / 3600);
}

static void spark(im_buf_t *out, const double *v, int n)
{
    static const char *const bars[] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
                                       "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
                                       "\xe2\x96\x87", "\xe2\x96\x88"};
    double mx = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]) && v[i] > mx) mx = v[i];
    for (int i = 0; i < n; i++) {
        if (isnan(v[i])) {
            im_buf_putc(out, ' ');
            continue;
        }
        int k = mx > 0 ? (int)(v[i] / mx * 7.999) : 0;
        im_buf_puts(out, bars[k < 0 ? 0 : k > 7 ? 7 : k]);
    }
}

/* ---- Lines cut at the terminal width (counting UTF-8 code points) ---- */

typedef struct screen {
    im_buf_t *out;
    int width, height, lines;
    bool plain;
} screen_t;

static void line(screen_t *s, const char *pre, const char *text, const char *post)
{
    if (s->lines >= s->height) return;
    if (!s->plain) im_buf_puts(s->out, pre);
    int cols = 0;
    for (const char *c = text; *c; c++) {
        if ((*c & 0xc0) != 0x80) {
            if (cols == s->width) break;
            cols++;
        }
        im_buf_putc(s->out, *c);
    }
    if (!s->plain) {
        im_buf_puts(s->out, post);
        im_buf_puts(s->out, "\033[K\r");
    }
    im_buf_putc(s->out, '\n');
    s->lines++;
}

static void clock_str(char *b, size_t cap, int64_t t_ms)
{
    time_t secs = (time_t)(t_ms / 1000);
    struct tm tmv;
    gmtime_r(&secs, &tmv);
    strftime(b, cap, "%H:%M:%S", &tmv);
}

/* The doctor's status line: its top finding (ranked first: the worst), or
 * that it found nothing, failed, or has not run yet. */
static void doctor_line(screen_t *s, const top_doctor_t *d, im_buf_t *b)
{
    if (!d || !d->enabled) return;
    char ts[16];
    const char *pre = "";
    im_buf_reset(b);
    if (!d->ran) {
        clock_str(ts, sizeof ts, d->next_ms);
        im_buf_printf(b, "doctor: first diagnosis at %s (every %llds, over the last %llds)", ts,
                      (long long)(d->interval_ms / 1000), (long long)(d->window_ms / 1000));
    } else if (!d->report) {
        pre = "\033[31m";
        im_buf_printf(b, "doctor: failed: %s", d->error);
    } else if (d->report->nfindings == 0) {
        clock_str(ts, sizeof ts, d->at_ms);
        im_buf_printf(b, "doctor: no findings (last %llds at %s, %.1f ms)",
                      (long long)(d->window_ms / 1000), ts, d->run_ms);
    } else {
        const llm_doctor_finding_t *f = &d->report->findings[0];
        char sev[16];
        snprintf(sev, sizeof sev, "%s", llm_doctor_severity_str(f->severity));
        for (char *c = sev; *c; c++) *c = (char)(*c - (*c >= 'a' && *c <= 'z' ? 32 : 0));
        pre = f->severity == LLM_DOCTOR_CRITICAL  ? "\033[1;31m"
              : f->severity == LLM_DOCTOR_WARNING ? "\033[1;33m"
                                                  : "";
        clock_str(ts, sizeof ts, d->at_ms);
        im_buf_printf(b, "doctor: %s %s (%s) [%zu finding%s at %s, %.1f ms]: %s", sev, f->cause,
                      f->model && f->model[0] ? f->model : "fleet", d->report->nfindings,
                      d->report->nfindings == 1 ? "" : "s", ts, d->run_ms,
                      f->summary ? f->summary : "");
    }
    line(s, pre, b->data, pre[0] ? "\033[0m" : "");
}

static double sort_key(const top_row_t *r, top_sort_t k)
{
    double v = k == TOP_SORT_WAITING ? r->waiting
               : k == TOP_SORT_KV    ? r->kv
               : k == TOP_SORT_TTFT  ? r->ttft[0].p95
                                     : r->tok_out_s;
    return isnan(v) ? -1 : v;
}

static top_sort_t g_sort;
static int group_cmp(const void *a, const void *b)
{
    const top_row_t *const *x = a, *const *y = b;
    if (g_sort == TOP_SORT_NAME) return (int)(*x - *y); /* table order: by name */
    double kx = sort_key(*x, g_sort), ky = sort_key(*y, g_sort);
    if (kx != ky) return kx > ky ? -1 : 1;
    return (int)(*x - *y);
}

static void row_text(im_buf_t *b, const top_row_t *r, bool merged)
{
    char run[16], wait[16], kv[16], pre[16], tin[16], tout[16], hit[16], fail[16];
    char t[6][16], it[3][16];
    fmt_num(run, sizeof run, r->running);
    fmt_num(wait, sizeof wait, r->waiting);
    fmt_pct(kv, sizeof kv, r->kv);
    fmt_num(pre, sizeof pre, r->preempt_s);
    fmt_num(tin, sizeof tin, r->tok_in_s);
    fmt_num(tout, sizeof tout, r->tok_out_s);
    fmt_pct(hit, sizeof hit, r->prefix_hit);
    fmt_num(fail, sizeof fail, r->fail_s);
    const top_pct_t *ps[6] = {&r->ttft[0], &r->ttft[0], &r->ttft[0],
                              &r->ttft[1], &r->ttft[1], &r->ttft[1]};
    for (int k = 0; k < 6; k++)
        fmt_dur(t[k], sizeof t[k], k % 3 == 0 ? ps[k]->p50 : k % 3 == 1 ? ps[k]->p95 : ps[k]->p99);
    fmt_dur(it[0], sizeof it[0], r->itl[0].p50);
    fmt_dur(it[1], sizeof it[1], r->itl[0].p95);
    fmt_dur(it[2], sizeof it[2], r->itl[0].p99);
    char name[72];
    if (merged) { /* the model cut so that its engine kind and count stay in the column */
        char sfx[40];
        snprintf(sfx, sizeof sfx, " [%.12s] (%d)", r->kind, r->replicas);
        snprintf(name, sizeof name, "%.*s%s", (int)(36 - strlen(sfx)), r->model, sfx);
    } else {
        snprintf(name, sizeof name, " %s %.40s%s%.10s", r->outlier[0] ? "!" : " ", r->instance,
                 r->engine[0] ? "#" : "", r->engine);
    }
    im_buf_printf(b,
                  "%-36.36s %5s %6s %4s %6s %7s %7s %4s %5s %6s/%6s/%6s %6s/%6s/%6s %5s/%5s/%5s ",
                  name, run, wait, kv, pre, tin, tout, hit, fail, t[0], t[1], t[2], t[3], t[4],
                  t[5], it[0], it[1], it[2]);
    spark(b, r->spark, TOP_SPARK);
}

void top_render(const top_view_t *v, const top_screen_t *sc, im_buf_t *out)
{
    screen_t s = {out, sc->width > 20 ? sc->width : 120, sc->height > 5 ? sc->height : 40, 0,
                  sc->plain};
    im_buf_t b;
    im_buf_init(&b, 0);
    if (!s.plain) im_buf_puts(out, "\033[H");
    char ts[32];
    time_t secs = (time_t)(v->t_ms / 1000);
    struct tm tmv;
    gmtime_r(&secs, &tmv);
    strftime(ts, sizeof ts, "%H:%M:%S UTC", &tmv);
    size_t up = 0, eng = 0, gpu = 0;
    for (size_t i = 0; i < v->neps; i++) {
        up += v->eps[i].state >= TOP_EP_NOT_ENGINE;
        eng += v->eps[i].state == TOP_EP_ENGINE;
        gpu += v->eps[i].state == TOP_EP_GPU;
    }
    im_buf_printf(
        &b,
        "infermon top  %s  %zu/%zu endpoints answer (%zu engines, %zu GPU)  windows %llds "
        "and %llds (%llds of data)  sort: %s%s%s%s",
        ts, up, v->neps, eng, gpu, (long long)(v->short_ms / 1000), (long long)(v->long_ms / 1000),
        (long long)(v->span_ms / 1000), top_sort_name(sc->sort),
        sc->filter && sc->filter[0] ? "  model filter: " : "", sc->filter ? sc->filter : "",
        sc->paused ? "  [PAUSED]" : "");
    line(&s, "\033[1m", b.data, "\033[0m");
    doctor_line(&s, v->doctor, &b);
    im_buf_reset(&b);
    im_buf_printf(&b, "%-36s %5s %6s %4s %6s %7s %7s %4s %5s %-20s %-20s %-17s %s",
                  "MODEL / REPLICA", "RUN", "WAIT", "KV", "PRE/s", "TOKin/s", "TOKout/s", "HIT",
                  "ERR/s", " TTFT p50/p95/p99", "  TTFT 1m p50/95/99", "   ITL p50/95/99",
                  "tokens out/s");
    line(&s, "\033[7m", b.data, "\033[0m");
    /* groups: a merged row and its replicas; sorted by the key of the group */
    size_t ng = 0;
    const top_row_t **groups = im_malloc((v->nrows + 1) * sizeof *groups);
    for (size_t i = 0; i < v->nrows; i++) {
        if (i > 0 && top_row_same_group(&v->rows[i], &v->rows[i - 1])) continue;
        if (sc->filter && sc->filter[0] && !strstr(v->rows[i].model, sc->filter)) continue;
        groups[ng++] = &v->rows[i];
    }
    g_sort = sc->sort;
    qsort(groups, ng, sizeof *groups, group_cmp);
    for (size_t g = 0; g < ng; g++) {
        const top_row_t *r = groups[g];
        const top_row_t *end = v->rows + v->nrows;
        const top_row_t *x = r;
        if (r->instance[0] == '\0') { /* the model's merged row */
            im_buf_reset(&b);
            row_text(&b, r, true);
            line(&s, "\033[1m", b.data, "\033[0m");
            x++;
        }
        /* replicas, sorted by the same key */
        size_t nrep = 0;
        const top_row_t **reps = im_malloc((size_t)(end - x + 1) * sizeof *reps);
        for (; x < end && top_row_same_group(x, r); x++) reps[nrep++] = x;
        qsort(reps, nrep, sizeof *reps, group_cmp);
        for (size_t k = 0; k < nrep; k++) {
            im_buf_reset(&b);
            row_text(&b, reps[k], false);
            line(&s, reps[k]->outlier[0] ? "\033[33m" : "", b.data,
                 reps[k]->outlier[0] ? "\033[0m" : "");
        }
        for (size_t k = 0; k < nrep; k++)
            if (reps[k]->outlier[0]) {
                im_buf_reset(&b);
                im_buf_printf(&b, "   ! %s: %s", reps[k]->instance, reps[k]->outlier);
                line(&s, "\033[33m", b.data, "\033[0m");
            }
        im_free(reps);
    }
    if (ng == 0) {
        line(&s, "",
             v->nrows ? "no model matches the filter (press / to change it)"
                      : "no inference engine answers yet (see the endpoints below)",
             "");
    }
    im_free(groups);
    if (v->ngpus) {
        line(&s, "", "", "");
        im_buf_reset(&b);
        im_buf_printf(&b, "%-34s %-4s %-22s %5s %5s %5s %6s %5s", "GPU (dcgm-exporter)", "gpu",
                      "model", "util", "copy", "fb", "power", "temp");
        line(&s, "\033[7m", b.data, "\033[0m");
        for (size_t i = 0; i < v->ngpus; i++) {
            const top_gpu_t *g = &v->gpus[i];
            char u[16], c[16], fb[16], pw[16], tc[16];
            fmt_num(u, sizeof u, g->util);
            fmt_num(c, sizeof c, g->mem_copy);
            fmt_pct(fb, sizeof fb, g->mem_used_ratio);
            fmt_num(pw, sizeof pw, g->power_w);
            fmt_num(tc, sizeof tc, g->temp_c);
            im_buf_reset(&b);
            im_buf_printf(&b, "%-34.34s %-4s %-22.22s %4s%% %4s%% %5s %5sW %4sC",
                          g->pod[0] ? g->pod : g->instance, g->gpu, g->model, u, c, fb, pw, tc);
            line(&s, "", b.data, "");
        }
    }
    /* endpoints that do not serve: say why */
    bool hdr = false;
    for (size_t i = 0; i < v->neps; i++) {
        const top_endpoint_t *e = &v->eps[i];
        if (e->state == TOP_EP_ENGINE || e->state == TOP_EP_GPU || e->state == TOP_EP_UNKNOWN)
            continue;
        if (e->probed && e->state == TOP_EP_DOWN) continue;
        if (!hdr) line(&s, "", "", "");
        hdr = true;
        im_buf_reset(&b);
        im_buf_printf(&b, "%-7s %s: %s", e->state == TOP_EP_DOWN ? "DOWN" : "IGNORED", e->target,
                      e->error);
        line(&s, e->state == TOP_EP_DOWN ? "\033[31m" : "\033[33m", b.data, "\033[0m");
    }
    if (s.plain) {
        im_buf_free(&b);
        return;
    }
    while (s.lines < s.height - 1) line(&s, "", "", "");
    if (sc->prompt) {
        im_buf_reset(&b);
        im_buf_printf(&b, "filter by model: %s_  (Enter applies, Esc cancels)", sc->prompt);
    } else {
        im_buf_reset(&b);
        im_buf_puts(&b, "keys: s sort  / filter by model  p pause  q quit   "
                        "(! = replica far from its peers)");
    }
    s.height++;
    if (s.lines < s.height) {
        im_buf_puts(out, "\033[7m");
        int cols = 0;
        for (const char *c = b.data; *c && cols < s.width; c++, cols++) im_buf_putc(out, *c);
        im_buf_puts(out, "\033[0m\033[K");
    }
    im_buf_free(&b);
}

/* ---- JSON: one table of {key, offset, kind} per record type ---- */

typedef enum jkind {
    J_CHARS,      /* char[] */
    J_CHARS_NULL, /* char[], null when empty */
    J_PTR,        /* const char * ("" when NULL) */
    J_PTR_NULL,   /* const char *, null when NULL */
    J_NUM,        /* double, null when NaN or infinite */
    J_INT,        /* int */
    J_SIZE,       /* size_t */
    J_BOOL,       /* bool */
    J_PCT2,       /* top_pct_t[2]: {"short": {p50, p95, p99}, "long": ...} */
    J_STATE,      /* top_ep_state_t */
} jkind_t;

enum { J_ALL = 0, J_MERGED = 1, J_REPLICA = 2 }; /* rows: which rows have the key */

typedef struct jfield {
    const char *key;
    size_t off;
    jkind_t kind;
    int rows;
} jfield_t;

#define JF(t, key, member, kind, rows)                                                             \
    {                                                                                              \
        key, offsetof(t, member), kind, rows                                                       \
    }

static const jfield_t g_ep_fields[] = {
    JF(top_endpoint_t, "target", target, J_PTR, J_ALL),
    JF(top_endpoint_t, "url", url, J_PTR, J_ALL),
    JF(top_endpoint_t, "state", state, J_STATE, J_ALL),
    JF(top_endpoint_t, "probed", probed, J_BOOL, J_ALL),
    JF(top_endpoint_t, "kind", kind, J_PTR_NULL, J_ALL),
    JF(top_endpoint_t, "samples", samples, J_SIZE, J_ALL),
    JF(top_endpoint_t, "error", error, J_CHARS_NULL, J_ALL),
};

static const jfield_t g_row_fields[] = {
    JF(top_row_t, "model", model, J_CHARS, J_ALL),
    JF(top_row_t, "instance", instance, J_CHARS, J_REPLICA),
    JF(top_row_t, "engine", engine, J_CHARS, J_REPLICA),
    JF(top_row_t, "outlier", outlier, J_CHARS_NULL, J_REPLICA),
    JF(top_row_t, "replicas", replicas, J_INT, J_MERGED),
    JF(top_row_t, "kind", kind, J_PTR, J_ALL),
    JF(top_row_t, "running", running, J_NUM, J_ALL),
    JF(top_row_t, "waiting", waiting, J_NUM, J_ALL),
    JF(top_row_t, "kv_usage", kv, J_NUM, J_ALL),
    JF(top_row_t, "preemptions_per_s", preempt_s, J_NUM, J_ALL),
    JF(top_row_t, "prompt_tokens_per_s", tok_in_s, J_NUM, J_ALL),
    JF(top_row_t, "generation_tokens_per_s", tok_out_s, J_NUM, J_ALL),
    JF(top_row_t, "prefix_hit_rate", prefix_hit, J_NUM, J_ALL),
    JF(top_row_t, "failed_per_s", fail_s, J_NUM, J_ALL),
    JF(top_row_t, "ttft_seconds", ttft, J_PCT2, J_ALL),
    JF(top_row_t, "itl_seconds", itl, J_PCT2, J_ALL),
};

static const jfield_t g_gpu_fields[] = {
    JF(top_gpu_t, "instance", instance, J_CHARS, J_ALL),
    JF(top_gpu_t, "gpu", gpu, J_CHARS, J_ALL),
    JF(top_gpu_t, "model", model, J_CHARS, J_ALL),
    JF(top_gpu_t, "pod", pod, J_CHARS, J_ALL),
    JF(top_gpu_t, "util_percent", util, J_NUM, J_ALL),
    JF(top_gpu_t, "mem_copy_percent", mem_copy, J_NUM, J_ALL),
    JF(top_gpu_t, "memory_used_bytes", mem_used_bytes, J_NUM, J_ALL),
    JF(top_gpu_t, "memory_total_bytes", mem_total_bytes, J_NUM, J_ALL),
    JF(top_gpu_t, "memory_used_ratio", mem_used_ratio, J_NUM, J_ALL),
    JF(top_gpu_t, "power_watts", power_w, J_NUM, J_ALL),
    JF(top_gpu_t, "temperature_celsius", temp_c, J_NUM, J_ALL),
};

static json_t *jnum(double v)
{
    return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *jpct(const top_pct_t *p)
{
    return json_pack("{s:o,s:o,s:o}", "p50", jnum(p->p50), "p95", jnum(p->p95), "p99",
                     jnum(p->p99));
}

static json_t *jvalue(const void *rec, const jfield_t *f)
{
    static const char *const st[] = {"unknown", "down", "not_engine", "engine", "gpu"};
    const char *p = (const char *)rec + f->off;
    const char *str =
        f->kind == J_PTR || f->kind == J_PTR_NULL ? *(const char *const *)(const void *)p : NULL;
    switch (f->kind) {
    case J_CHARS: return json_string(p);
    case J_CHARS_NULL: return *p ? json_string(p) : json_null();
    case J_PTR: return json_string(str ? str : "");
    case J_PTR_NULL: return str ? json_string(str) : json_null();
    case J_NUM: return jnum(*(const double *)(const void *)p);
    case J_INT: return json_integer(*(const int *)(const void *)p);
    case J_SIZE: return json_integer((json_int_t) * (const size_t *)(const void *)p);
    case J_BOOL: return json_boolean(*(const bool *)(const void *)p);
    case J_PCT2: {
        const top_pct_t *w = (const top_pct_t *)(const void *)p;
        return json_pack("{s:o,s:o}", "short", jpct(&w[0]), "long", jpct(&w[1]));
    }
    case J_STATE: return json_string(st[*(const top_ep_state_t *)(const void *)p]);
    }
    return json_null();
}

/* One record as an object: the fields of the table that apply to `rows`. */
static json_t *jrecord(const void *rec, const jfield_t *fs, size_t n, int rows)
{
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++)
        if (fs[i].rows == J_ALL || fs[i].rows == rows)
            json_object_set_new(o, fs[i].key, jvalue(rec, &fs[i]));
    return o;
}

static json_t *jrow(const top_row_t *r)
{
    return jrecord(r, g_row_fields, IM_ARRAY_LEN(g_row_fields),
                   r->instance[0] ? J_REPLICA : J_MERGED);
}

/* "doctor": null when off; else the last run: its worst finding ("finding",
 * the first of the ranked "findings", in the doctor's JSON schema of
 * docs/doctor.md) or null, and "error" when it failed. */
static json_t *jdoctor(const top_doctor_t *d)
{
    if (!d || !d->enabled) return json_null();
    json_t *fs = NULL;
    if (d->report) {
        im_buf_t b;
        im_buf_init(&b, 0);
        llm_doctor_write_json(d->report, &b);
        json_t *r = json_loadb(b.data ? b.data : "", b.len, 0, NULL);
        im_buf_free(&b);
        json_t *a = r ? json_object_get(r, "findings") : NULL;
        if (json_is_array(a)) fs = json_incref(a);
        json_decref(r);
    }
    json_t *first = fs && json_array_size(fs) ? json_incref(json_array_get(fs, 0)) : json_null();
    return json_pack("{s:b,s:I,s:f,s:f,s:I,s:o,s:o,s:o}", "ran", d->ran, "at_ms",
                     (json_int_t)(d->ran ? d->at_ms : 0), "window_s", d->window_ms / 1000.0,
                     "run_ms", d->ran ? d->run_ms : 0.0, "next_ms", (json_int_t)d->next_ms, "error",
                     d->error[0] ? json_string(d->error) : json_null(), "finding", first,
                     "findings", fs ? fs : json_array());
}

void top_json(const top_view_t *v, im_buf_t *o)
{
    json_t *eps = json_array(), *models = json_array(), *gpus = json_array();
    for (size_t i = 0; i < v->neps; i++)
        json_array_append_new(eps,
                              jrecord(&v->eps[i], g_ep_fields, IM_ARRAY_LEN(g_ep_fields), J_ALL));
    for (size_t i = 0; i < v->nrows;) {
        size_t j = i;
        /* one object per group (model, kind), both keys always there */
        json_t *m = v->rows[i].instance[0]
                        ? json_pack("{s:s,s:s}", "model", v->rows[i].model, "kind", v->rows[i].kind)
                        : jrow(&v->rows[j++]);
        json_t *reps = json_array();
        for (; j < v->nrows && top_row_same_group(&v->rows[j], &v->rows[i]); j++)
            json_array_append_new(reps, jrow(&v->rows[j]));
        json_object_set_new(m, "replica_rows", reps);
        json_array_append_new(models, m);
        i = j;
    }
    for (size_t i = 0; i < v->ngpus; i++)
        json_array_append_new(
            gpus, jrecord(&v->gpus[i], g_gpu_fields, IM_ARRAY_LEN(g_gpu_fields), J_ALL));
    json_t *root =
        json_pack("{s:I,s:{s:f,s:f},s:f,s:i,s:o,s:o,s:o,s:o}", "time_ms", (json_int_t)v->t_ms,
                  "windows", "short_s", v->short_ms / 1000.0, "long_s", v->long_ms / 1000.0,
                  "data_span_s", v->span_ms / 1000.0, "scrapes", v->scrapes, "endpoints", eps,
                  "models", models, "gpus", gpus, "doctor", jdoctor(v->doctor));
    char *txt = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(17));
    im_buf_puts(o, txt ? txt : "{}");
    im_buf_putc(o, '\n');
    free(txt); /* checksrc: allow (jansson's allocation) */
    json_decref(root);
}
