/* doctor_write.c — the report writers of doctor.h: JSON (the schema of
 * docs/doctor.md, shared by `infermon doctor --output json` and the HTTP
 * endpoint), text for a terminal and markdown for tickets. */
#include "util/base.h"

#include <math.h>
#include <stdio.h>

#include "labels/json.h"
#include "llm/doctor.h"
#include "util/timeutil.h"

/* ---- JSON ---- */

static void jstr(im_buf_t *b, const char *s)
{
    s = s ? s : "";
    im_json_string(b, s, strlen(s), IM_JSON_GO);
}

static void jnum(im_buf_t *b, double v)
{
    if (isnan(v) || isinf(v))
        (void)im_buf_puts(b, "null");
    else
        (void)im_buf_printf(b, "%.6g", v);
}

static void jtime(im_buf_t *b, int64_t ms)
{
    if (ms == 0) {
        (void)im_buf_puts(b, "null");
        return;
    }
    char t[64];
    im_time_format_rfc3339(ms, t, sizeof t);
    jstr(b, t);
}

static void jstrs(im_buf_t *b, char *const *v, size_t n)
{
    (void)im_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) (void)im_buf_putc(b, ',');
        jstr(b, v[i]);
    }
    (void)im_buf_putc(b, ']');
}

/* The dashboard link of a finding: the overview at its panel over [since, end]
 * (a tenth of the window before since, so the onset shows), for its model (the
 * hash parameters of web/app.js: panel, from, to, model); the Targets page for
 * target-down; none for a finding without a panel (lint, no-data). */
static void link_of(const llm_doctor_report_t *r, const llm_doctor_finding_t *f, char *buf,
                    size_t cap)
{
    buf[0] = 0;
    if (!f->panel || !*f->panel || !strcmp(f->panel, "lint")) return;
    if (!strcmp(f->panel, "targets")) {
        snprintf(buf, cap, "#/targets");
        return;
    }
    int64_t margin = (r->end_ms - r->start_ms) / 10;
    int64_t from = f->since_ms ? f->since_ms - margin : r->start_ms;
    if (from < r->start_ms) from = r->start_ms;
    im_buf_t b;
    im_buf_init(&b, 0);
    (void)im_buf_printf(&b, "#/overview?panel=%s&from=%lld&to=%lld", f->panel,
                        (long long)(from / 1000), (long long)((r->end_ms + 999) / 1000));
    if (f->model && *f->model) {
        (void)im_buf_puts(&b, "&model=");
        for (const char *p = f->model; *p; p++) {
            unsigned char c = (unsigned char)*p;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                strchr("-._~", c))
                (void)im_buf_putc(&b, (char)c);
            else
                (void)im_buf_printf(&b, "%%%02X", c);
        }
    }
    if (b.len < cap) snprintf(buf, cap, "%s", b.data ? b.data : "");
    im_buf_free(&b);
}

void llm_doctor_write_json(const llm_doctor_report_t *r, im_buf_t *b)
{
    char step[32];
    im_duration_format(r->step_ms, step, sizeof step);
    (void)im_buf_puts(b, "{\"findings\":[");
    for (size_t i = 0; i < r->nfindings; i++) {
        const llm_doctor_finding_t *f = &r->findings[i];
        if (i) (void)im_buf_putc(b, ',');
        (void)im_buf_puts(b, "{\"cause\":");
        jstr(b, f->cause);
        (void)im_buf_puts(b, ",\"severity\":");
        jstr(b, llm_doctor_severity_str(f->severity));
        (void)im_buf_puts(b, ",\"confidence\":");
        jnum(b, round(f->confidence * 100) / 100);
        (void)im_buf_puts(b, ",\"model\":");
        jstr(b, f->model);
        (void)im_buf_puts(b, ",\"engine\":");
        jstr(b, f->engine);
        (void)im_buf_puts(b, ",\"pods\":");
        jstrs(b, f->pods, f->npods);
        (void)im_buf_puts(b, ",\"nodes\":");
        jstrs(b, f->nodes, f->nnodes);
        (void)im_buf_puts(b, ",\"since\":");
        jtime(b, f->since_ms);
        (void)im_buf_printf(b, ",\"current\":%s,\"summary\":", f->current ? "true" : "false");
        jstr(b, f->summary);
        (void)im_buf_puts(b, ",\"impact\":{\"ttftP95Seconds\":");
        jnum(b, f->ttft_p95_s);
        (void)im_buf_puts(b, ",\"failedRatio\":");
        jnum(b, f->failed_ratio);
        (void)im_buf_puts(b, "},\"evidence\":[");
        for (size_t k = 0; k < f->nevidence; k++) {
            const llm_doctor_evidence_t *e = &f->evidence[k];
            if (k) (void)im_buf_putc(b, ',');
            (void)im_buf_puts(b, "{\"signal\":");
            jstr(b, e->signal);
            (void)im_buf_puts(b, ",\"metric\":");
            jstr(b, e->metric);
            (void)im_buf_puts(b, ",\"query\":");
            jstr(b, e->query);
            (void)im_buf_puts(b, ",\"unit\":");
            jstr(b, e->unit);
            (void)im_buf_puts(b, ",\"values\":{\"mean\":");
            jnum(b, e->mean);
            (void)im_buf_puts(b, ",\"max\":");
            jnum(b, e->max);
            (void)im_buf_puts(b, ",\"last\":");
            jnum(b, e->last);
            (void)im_buf_puts(b, "},\"threshold\":");
            jnum(b, e->threshold);
            (void)im_buf_puts(b, ",\"start\":");
            jtime(b, r->start_ms);
            (void)im_buf_puts(b, ",\"end\":");
            jtime(b, r->end_ms);
            (void)im_buf_puts(b, ",\"step\":");
            jstr(b, step);
            (void)im_buf_puts(b, ",\"text\":");
            jstr(b, e->text);
            (void)im_buf_puts(b, ",\"pods\":");
            jstrs(b, e->pods, e->npods);
            (void)im_buf_putc(b, '}');
        }
        (void)im_buf_puts(b, "],\"alternatives\":[");
        for (size_t k = 0; k < f->nalts; k++) {
            if (k) (void)im_buf_putc(b, ',');
            (void)im_buf_puts(b, "{\"cause\":");
            jstr(b, f->alts[k].cause);
            (void)im_buf_puts(b, ",\"why\":");
            jstr(b, f->alts[k].why);
            (void)im_buf_putc(b, '}');
        }
        (void)im_buf_puts(b, "],\"action\":{\"text\":");
        jstr(b, f->action);
        (void)im_buf_puts(b, ",\"expect\":");
        jstr(b, f->expect);
        (void)im_buf_puts(b, ",\"flags\":[");
        for (size_t k = 0; k < f->nflags; k++) {
            if (k) (void)im_buf_putc(b, ',');
            (void)im_buf_puts(b, "{\"engine\":");
            jstr(b, f->flags[k].engine);
            (void)im_buf_puts(b, ",\"flag\":");
            jstr(b, f->flags[k].flag);
            (void)im_buf_puts(b, ",\"advice\":");
            jstr(b, f->flags[k].advice);
            (void)im_buf_putc(b, '}');
        }
        (void)im_buf_puts(b, "]},\"panel\":");
        jstr(b, f->panel);
        char ln[2048];
        link_of(r, f, ln, sizeof ln);
        (void)im_buf_puts(b, ",\"link\":");
        jstr(b, ln);
        (void)im_buf_putc(b, '}');
    }
    (void)im_buf_puts(b, "],\"window\":{\"start\":");
    jtime(b, r->start_ms);
    (void)im_buf_puts(b, ",\"end\":");
    jtime(b, r->end_ms);
    (void)im_buf_puts(b, ",\"step\":");
    jstr(b, step);
    (void)im_buf_puts(b, "},\"backend\":");
    jstr(b, r->backend);
    (void)im_buf_puts(b, ",\"engines\":");
    jstrs(b, r->engines, r->nengines);
    (void)im_buf_puts(b, ",\"models\":");
    jstrs(b, r->models, r->nmodels);
    (void)im_buf_printf(b, ",\"queries\":%d,\"query_log\":", r->queries);
    jstrs(b, r->query_log, r->nquery_log);
    (void)im_buf_putc(b, '}');
}

/* ---- Text and markdown ---- */

static void fmt_num(double v, char *b, size_t cap)
{
    if (isnan(v))
        snprintf(b, cap, "-");
    else
        snprintf(b, cap, "%.3g", v);
}

static void header(const llm_doctor_report_t *r, im_buf_t *b, bool md)
{
    char s[64], e[64], st[32];
    im_time_format_rfc3339(r->start_ms, s, sizeof s);
    im_time_format_rfc3339(r->end_ms, e, sizeof e);
    im_duration_format(r->step_ms, st, sizeof st);
    (void)im_buf_printf(b, "%sinfermon doctor: %s .. %s (step %s) on %s\n", md ? "# " : "", s, e,
                        st, r->backend ? r->backend : "");
    if (md) (void)im_buf_putc(b, '\n');
    for (size_t i = 0; i < r->nengines; i++)
        (void)im_buf_printf(b, "%sengine %s\n", md ? "- " : "  ", r->engines[i]);
    (void)im_buf_printf(b, "%s%zu model%s:", md ? "- " : "  ", r->nmodels,
                        r->nmodels == 1 ? "" : "s");
    for (size_t i = 0; i < r->nmodels; i++)
        (void)im_buf_printf(b, "%s %s", i ? "," : "", r->models[i]);
    (void)im_buf_puts(b, "\n\n");
}

static const char *sev_color(llm_doctor_severity_t s)
{
    return s == LLM_DOCTOR_CRITICAL ? "\033[1;31m" : s == LLM_DOCTOR_WARNING ? "\033[33m" : "";
}

static void upper(const char *s, char *out, size_t cap)
{
    size_t i = 0;
    for (; s[i] && i + 1 < cap; i++) out[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
    out[i] = 0;
}

void llm_doctor_write_text(const llm_doctor_report_t *r, im_buf_t *b, bool color)
{
    header(r, b, false);
    bool above = false;
    for (size_t i = 0; i < r->nfindings; i++)
        if (r->findings[i].severity > LLM_DOCTOR_INFO) above = true;
    if (!above) (void)im_buf_puts(b, "No problem found: nothing above info in the window.\n\n");
    for (size_t i = 0; i < r->nfindings; i++) {
        const llm_doctor_finding_t *f = &r->findings[i];
        char sev[16], since[64] = "-";
        upper(llm_doctor_severity_str(f->severity), sev, sizeof sev);
        if (f->since_ms) im_time_format_rfc3339(f->since_ms, since, sizeof since);
        (void)im_buf_printf(b, "%zu. %s%s%s %s", i + 1, color ? sev_color(f->severity) : "", sev,
                            color && f->severity ? "\033[0m" : "", f->cause);
        if (*f->model) (void)im_buf_printf(b, "  model %s", f->model);
        (void)im_buf_printf(b, "  (confidence %.2f, since %s)\n", f->confidence, since);
        (void)im_buf_printf(b, "   %s\n", f->summary ? f->summary : "");
        if (f->npods) {
            (void)im_buf_puts(b, "   pods:");
            for (size_t k = 0; k < f->npods && k < 8; k++)
                (void)im_buf_printf(b, " %s", f->pods[k]);
            if (f->npods > 8) (void)im_buf_printf(b, " (+%zu)", f->npods - 8);
            (void)im_buf_putc(b, '\n');
        }
        if (f->nevidence) (void)im_buf_puts(b, "   evidence:\n");
        for (size_t k = 0; k < f->nevidence; k++) {
            const llm_doctor_evidence_t *e = &f->evidence[k];
            (void)im_buf_printf(b, "     - %s\n", e->text);
            if (*e->query) (void)im_buf_printf(b, "       %s\n", e->query);
        }
        if (f->nalts) (void)im_buf_puts(b, "   ruled out:\n");
        for (size_t k = 0; k < f->nalts; k++)
            (void)im_buf_printf(b, "     - %s: %s\n", f->alts[k].cause, f->alts[k].why);
        if (f->action && *f->action) (void)im_buf_printf(b, "   action: %s\n", f->action);
        for (size_t k = 0; k < f->nflags; k++)
            (void)im_buf_printf(b, "     %s %s: %s\n", f->flags[k].engine, f->flags[k].flag,
                                f->flags[k].advice);
        if (f->expect && *f->expect) (void)im_buf_printf(b, "   expect: %s\n", f->expect);
        (void)im_buf_putc(b, '\n');
    }
}

void llm_doctor_write_markdown(const llm_doctor_report_t *r, im_buf_t *b)
{
    header(r, b, true);
    if (r->nfindings == 0) (void)im_buf_puts(b, "No problem found.\n");
    for (size_t i = 0; i < r->nfindings; i++) {
        const llm_doctor_finding_t *f = &r->findings[i];
        char since[64] = "-";
        if (f->since_ms) im_time_format_rfc3339(f->since_ms, since, sizeof since);
        (void)im_buf_printf(b, "## %zu. `%s` (%s)%s%s\n\n", i + 1, f->cause,
                            llm_doctor_severity_str(f->severity), *f->model ? " — " : "", f->model);
        (void)im_buf_printf(b, "%s\n\nConfidence %.2f, since %s.\n\n", f->summary, f->confidence,
                            since);
        if (f->nevidence) {
            (void)im_buf_puts(b,
                              "| evidence | mean | max | last | query |\n|---|---|---|---|---|\n");
            for (size_t k = 0; k < f->nevidence; k++) {
                const llm_doctor_evidence_t *e = &f->evidence[k];
                char m1[32], m2[32], m3[32];
                fmt_num(e->mean, m1, sizeof m1);
                fmt_num(e->max, m2, sizeof m2);
                fmt_num(e->last, m3, sizeof m3);
                (void)im_buf_printf(b, "| %s | %s | %s | %s | `", e->text, m1, m2, m3);
                for (const char *q = e->query; *q; q++)
                    (void)(*q == '|' ? im_buf_puts(b, "\\|") : im_buf_putc(b, *q));
                (void)im_buf_puts(b, "` |\n");
            }
            (void)im_buf_putc(b, '\n');
        }
        if (f->nalts) {
            (void)im_buf_puts(b, "Ruled out:\n\n");
            for (size_t k = 0; k < f->nalts; k++)
                (void)im_buf_printf(b, "- `%s`: %s\n", f->alts[k].cause, f->alts[k].why);
            (void)im_buf_putc(b, '\n');
        }
        if (f->action && *f->action) (void)im_buf_printf(b, "**Action:** %s\n\n", f->action);
        for (size_t k = 0; k < f->nflags; k++)
            (void)im_buf_printf(b, "- %s `%s`: %s\n", f->flags[k].engine, f->flags[k].flag,
                                f->flags[k].advice);
        if (f->nflags) (void)im_buf_putc(b, '\n');
        if (f->expect && *f->expect) (void)im_buf_printf(b, "**Expect:** %s\n\n", f->expect);
    }
}
