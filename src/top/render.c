/* render.c — the terminal frame and the JSON of a top view (top.h). */
#include "util/base.h"

#include <math.h>
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
    if (merged)
        snprintf(name, sizeof name, "%.50s (%d)", r->model, r->replicas);
    else
        snprintf(name, sizeof name, " %s %.40s%s%.10s", r->outlier[0] ? "!" : " ", r->instance,
                 r->engine[0] ? "#" : "", r->engine);
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
        if (i > 0 && strcmp(v->rows[i].model, v->rows[i - 1].model) == 0) continue;
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
        for (; x < end && strcmp(x->model, r->model) == 0; x++) reps[nrep++] = x;
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
            fmt_pct(fb, sizeof fb, g->fb_used);
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

/* ---- JSON ---- */

static void jnum(im_buf_t *o, double v)
{
    if (isnan(v) || isinf(v))
        im_buf_puts(o, "null");
    else
        im_buf_printf(o, "%.17g", v);
}

static void jstr(im_buf_t *o, const char *s)
{
    im_buf_putc(o, '"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            im_buf_printf(o, "\\%c", *c);
        else if (*c < 0x20)
            im_buf_printf(o, "\\u%04x", *c);
        else
            im_buf_putc(o, (char)*c);
    }
    im_buf_putc(o, '"');
}

static void jpct(im_buf_t *o, const top_pct_t *p)
{
    im_buf_puts(o, "{\"p50\":");
    jnum(o, p->p50);
    im_buf_puts(o, ",\"p95\":");
    jnum(o, p->p95);
    im_buf_puts(o, ",\"p99\":");
    jnum(o, p->p99);
    im_buf_putc(o, '}');
}

static void jrow(im_buf_t *o, const top_row_t *r)
{
    im_buf_puts(o, "{\"model\":");
    jstr(o, r->model);
    if (r->instance[0]) {
        im_buf_puts(o, ",\"instance\":");
        jstr(o, r->instance);
        im_buf_puts(o, ",\"engine\":");
        jstr(o, r->engine);
        im_buf_puts(o, ",\"outlier\":");
        if (r->outlier[0])
            jstr(o, r->outlier);
        else
            im_buf_puts(o, "null");
    } else {
        im_buf_printf(o, ",\"replicas\":%d", r->replicas);
    }
    im_buf_puts(o, ",\"kind\":");
    jstr(o, r->kind ? r->kind : "");
    const char *names[] = {"running",
                           "waiting",
                           "kv_usage",
                           "preemptions_per_s",
                           "prompt_tokens_per_s",
                           "generation_tokens_per_s",
                           "prefix_hit_rate",
                           "failed_per_s"};
    double vals[] = {r->running,  r->waiting,   r->kv,         r->preempt_s,
                     r->tok_in_s, r->tok_out_s, r->prefix_hit, r->fail_s};
    for (size_t i = 0; i < IM_ARRAY_LEN(names); i++) {
        im_buf_printf(o, ",\"%s\":", names[i]);
        jnum(o, vals[i]);
    }
    im_buf_puts(o, ",\"ttft_seconds\":{\"short\":");
    jpct(o, &r->ttft[0]);
    im_buf_puts(o, ",\"long\":");
    jpct(o, &r->ttft[1]);
    im_buf_puts(o, "},\"itl_seconds\":{\"short\":");
    jpct(o, &r->itl[0]);
    im_buf_puts(o, ",\"long\":");
    jpct(o, &r->itl[1]);
    im_buf_puts(o, "}}");
}

void top_json(const top_view_t *v, im_buf_t *o)
{
    static const char *const st[] = {"unknown", "down", "not_engine", "engine", "gpu"};
    im_buf_printf(o,
                  "{\"time_ms\":%lld,\"windows\":{\"short_s\":%g,\"long_s\":%g},\"data_span_s\":%g,"
                  "\"scrapes\":%d,\"endpoints\":[",
                  (long long)v->t_ms, v->short_ms / 1000.0, v->long_ms / 1000.0,
                  v->span_ms / 1000.0, v->scrapes);
    for (size_t i = 0; i < v->neps; i++) {
        const top_endpoint_t *e = &v->eps[i];
        im_buf_puts(o, i ? ",{\"target\":" : "{\"target\":");
        jstr(o, e->target);
        im_buf_puts(o, ",\"url\":");
        jstr(o, e->url);
        im_buf_printf(o, ",\"state\":\"%s\",\"probed\":%s,\"kind\":", st[e->state],
                      e->probed ? "true" : "false");
        if (e->kind)
            jstr(o, e->kind);
        else
            im_buf_puts(o, "null");
        im_buf_printf(o, ",\"samples\":%zu,\"error\":", e->samples);
        if (e->error[0])
            jstr(o, e->error);
        else
            im_buf_puts(o, "null");
        im_buf_putc(o, '}');
    }
    im_buf_puts(o, "],\"models\":[");
    bool firstm = true;
    for (size_t i = 0; i < v->nrows;) {
        size_t j = i;
        const top_row_t *m = v->rows[i].instance[0] ? NULL : &v->rows[j++];
        im_buf_puts(o, firstm ? "" : ",");
        firstm = false;
        if (m) {
            jrow(o, m);
            o->data[--o->len] = '\0'; /* reopen the object for its replicas */
        } else {
            im_buf_puts(o, "{\"model\":");
            jstr(o, v->rows[i].model);
        }
        im_buf_puts(o, ",\"replica_rows\":[");
        bool first = true;
        for (; j < v->nrows && strcmp(v->rows[j].model, v->rows[i].model) == 0; j++) {
            if (!first) im_buf_putc(o, ',');
            first = false;
            jrow(o, &v->rows[j]);
        }
        im_buf_puts(o, "]}");
        i = j;
    }
    im_buf_puts(o, "],\"gpus\":[");
    for (size_t i = 0; i < v->ngpus; i++) {
        const top_gpu_t *g = &v->gpus[i];
        im_buf_puts(o, i ? ",{\"instance\":" : "{\"instance\":");
        jstr(o, g->instance);
        im_buf_puts(o, ",\"gpu\":");
        jstr(o, g->gpu);
        im_buf_puts(o, ",\"model\":");
        jstr(o, g->model);
        im_buf_puts(o, ",\"pod\":");
        jstr(o, g->pod);
        im_buf_puts(o, ",\"util_percent\":");
        jnum(o, g->util);
        im_buf_puts(o, ",\"mem_copy_percent\":");
        jnum(o, g->mem_copy);
        im_buf_puts(o, ",\"fb_used\":");
        jnum(o, g->fb_used);
        im_buf_puts(o, ",\"power_w\":");
        jnum(o, g->power_w);
        im_buf_puts(o, ",\"temp_c\":");
        jnum(o, g->temp_c);
        im_buf_putc(o, '}');
    }
    im_buf_puts(o, "]}\n");
}
