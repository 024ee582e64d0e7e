/* check_metrics.c — `infermon check metrics [FILE|-]`: validates an exposition
 * like `promtool check metrics` (syntax errors, semantic errors and promtool's
 * lints, all through expo_check) and prints one problem per line
 * (`LINE:COL: severity: message`) or, with --output json, one JSON object with
 * the counts and the problems. --dump prints every parsed sample in a canonical
 * form (labels sorted, value as %.17g) for the peer-comparison tests. Exit 0
 * clean, 1 problems found, 2 unreadable input or usage error. */
#include "util/base.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "expo/expo.h"
#include "util/buf.h"

#define MAX_INPUT_BYTES ((size_t)1 << 30)

static void usage(FILE *f)
{
    fprintf(f, "usage: infermon check metrics [FILE|-] [--output text|json]\n"
               "                              [--format auto|text|openmetrics] [--dump]\n"
               "                              [--no-lint] [--max-line-bytes N] [--max-labels N]\n"
               "                              [--max-body-bytes N]\n"
               "Reads an exposition (Prometheus text 0.0.4 or OpenMetrics 1.0; auto: OpenMetrics\n"
               "when the input ends with \"# EOF\") from FILE or stdin and reports syntax errors,\n"
               "semantic errors and the lints promtool check metrics prints.\n"
               "Exit status: 0 clean, 1 problems found, 2 unreadable input.\n");
}

typedef struct ctx {
    bool json;
    size_t n;
    im_buf_t out;
} ctx_t;

static void json_str(im_buf_t *b, const char *s)
{
    (void)!im_buf_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            (void)!im_buf_putc(b, '\\');
            (void)!im_buf_putc(b, (char)c);
        } else if (c < 0x20) {
            (void)!im_buf_printf(b, "\\u%04x", c);
        } else {
            (void)!im_buf_putc(b, (char)c);
        }
    }
    (void)!im_buf_putc(b, '"');
}

static void on_problem(void *user, const expo_problem_t *pr)
{
    ctx_t *c = user;
    const char *sev = pr->severity == EXPO_SEV_ERROR ? "error" : "warning";
    if (c->json) {
        (void)!im_buf_printf(&c->out,
                             "%s{\"line\":%d,\"column\":%d,\"severity\":\"%s\",\"message\":",
                             c->n ? "," : "", pr->line, pr->col, sev);
        json_str(&c->out, pr->message);
        (void)!im_buf_putc(&c->out, '}');
    } else {
        (void)!im_buf_printf(&c->out, "%d:%d: %s: %s\n", pr->line, pr->col, sev, pr->message);
    }
    c->n++;
}

static void dump_sv(im_buf_t *b, im_sv_t s)
{
    for (size_t i = 0; i < s.len; i++) {
        char c = s.p[i];
        if (c == '\\')
            (void)!im_buf_append(b, "\\\\", 2);
        else if (c == '"')
            (void)!im_buf_append(b, "\\\"", 2);
        else if (c == '\n')
            (void)!im_buf_append(b, "\\n", 2);
        else
            (void)!im_buf_putc(b, c);
    }
}

static void dump_labels(im_buf_t *b, const expo_label_t *l, uint32_t n)
{
    /* Sorted by name (insertion sort of indices; label sets are small). */
    uint32_t stack[64];
    uint32_t *idx = n <= 64 ? stack : im_malloc(n * sizeof *idx);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = i;
        while (j > 0) {
            im_sv_t a = l[idx[j - 1]].name, x = l[i].name;
            int r = memcmp(a.p, x.p, IM_MIN(a.len, x.len));
            if (r < 0 || (r == 0 && a.len <= x.len)) break;
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = i;
    }
    (void)!im_buf_putc(b, '{');
    for (uint32_t k = 0; k < n; k++) {
        const expo_label_t *x = &l[idx[k]];
        if (k) (void)!im_buf_putc(b, ',');
        (void)!im_buf_append(b, x->name.p, x->name.len);
        (void)!im_buf_append(b, "=\"", 2);
        dump_sv(b, x->value);
        (void)!im_buf_putc(b, '"');
    }
    (void)!im_buf_putc(b, '}');
    if (idx != stack) im_free(idx);
}

static void dump_value(im_buf_t *b, double v)
{
    if (isnan(v))
        (void)!im_buf_puts(b, " NaN");
    else if (isinf(v))
        (void)!im_buf_puts(b, v > 0 ? " +Inf" : " -Inf");
    else if (v == 0)
        (void)!im_buf_puts(b, " 0"); /* -0 too: not every peer keeps the sign */
    else
        (void)!im_buf_printf(b, " %.17g", v);
}

static void on_sample(void *user, const expo_entry_t *e)
{
    im_buf_t *b = user;
    (void)!im_buf_append(b, e->name.p, e->name.len);
    dump_labels(b, e->labels, e->nlabels);
    dump_value(b, e->value);
    if (e->has_ts) (void)!im_buf_printf(b, " %" PRId64, e->t_ms);
    if (e->has_exemplar) {
        (void)!im_buf_append(b, " # ", 3);
        dump_labels(b, e->exemplar.labels, e->exemplar.nlabels);
        dump_value(b, e->exemplar.value);
        if (e->exemplar.has_ts) (void)!im_buf_printf(b, " %" PRId64, e->exemplar.t_ms);
    }
    (void)!im_buf_putc(b, '\n');
    if (b->len > (1 << 20)) {
        fwrite(b->data, 1, b->len, stdout);
        im_buf_reset(b);
    }
}

static bool ends_with_eof(const char *d, size_t n)
{
    while (n > 0 && (d[n - 1] == '\n' || d[n - 1] == '\r' || d[n - 1] == ' ')) n--;
    return n >= 5 && memcmp(d + n - 5, "# EOF", 5) == 0 && (n == 5 || d[n - 6] == '\n');
}

int cli_check_metrics(int argc, char **argv)
{
    const char *path = "-";
    const char *format = "auto";
    bool json = false, dump = false, lint = true;
    size_t max_line = 0, max_body = 0;
    uint32_t max_labels = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((strcmp(a, "--output") == 0 || strcmp(a, "-o") == 0) && i + 1 < argc) {
            const char *o = argv[++i];
            if (strcmp(o, "json") == 0)
                json = true;
            else if (strcmp(o, "text") != 0) {
                fprintf(stderr, "infermon check metrics: --output must be text or json\n");
                return 2;
            }
        } else if (strncmp(a, "--output=", 9) == 0) {
            json = strcmp(a + 9, "json") == 0;
            if (!json && strcmp(a + 9, "text") != 0) {
                fprintf(stderr, "infermon check metrics: --output must be text or json\n");
                return 2;
            }
        } else if (strcmp(a, "--format") == 0 && i + 1 < argc) {
            format = argv[++i];
        } else if (strcmp(a, "--dump") == 0) {
            dump = true;
        } else if (strcmp(a, "--no-lint") == 0) {
            lint = false;
        } else if ((strcmp(a, "--max-line-bytes") == 0 || strcmp(a, "--max-labels") == 0 ||
                    strcmp(a, "--max-body-bytes") == 0) &&
                   i + 1 < argc) {
            char *end;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (*end || v == 0 || (a[6] == 'l' && a[7] == 'a' && v > UINT32_MAX)) {
                fprintf(stderr, "infermon check metrics: bad value for %s\n", a);
                return 2;
            }
            if (strcmp(a, "--max-line-bytes") == 0)
                max_line = (size_t)v;
            else if (strcmp(a, "--max-labels") == 0)
                max_labels = (uint32_t)v;
            else
                max_body = (size_t)v;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "infermon check metrics: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else {
            path = a;
        }
    }
    char *data;
    size_t len;
    if (cli_read_file(path, &data, &len, MAX_INPUT_BYTES) != 0) return 2;
    expo_format_t f;
    if (strcmp(format, "text") == 0)
        f = EXPO_TEXT_004;
    else if (strcmp(format, "openmetrics") == 0)
        f = EXPO_OPENMETRICS_1;
    else if (strcmp(format, "auto") == 0)
        f = ends_with_eof(data, len) ? EXPO_OPENMETRICS_1 : EXPO_TEXT_004;
    else {
        fprintf(stderr, "infermon check metrics: --format must be auto, text or openmetrics\n");
        im_free(data);
        return 2;
    }
    ctx_t c = {.json = json};
    im_buf_init(&c.out, 0);
    im_buf_t dumpbuf;
    im_buf_init(&dumpbuf, 0);
    expo_check_opts_t opts = {.limits = {.max_line_bytes = max_line,
                                         .max_body_bytes = max_body,
                                         .max_labels = max_labels},
                              .lint = lint};
    if (dump) {
        opts.on_sample = on_sample;
        opts.on_sample_user = &dumpbuf;
    }
    if (json) (void)!im_buf_puts(&c.out, "");
    expo_check_stats_t st;
    (void)expo_check(data, len, f, &opts, on_problem, &c, &st);
    if (dump) fwrite(dumpbuf.data ? dumpbuf.data : "", 1, dumpbuf.len, stdout);
    FILE *out = dump ? stderr : stdout;
    if (json) {
        fprintf(out, "{\"families\":%zu,\"series\":%zu,\"samples\":%zu,\"problems\":[", st.families,
                st.series, st.samples);
        fwrite(c.out.data ? c.out.data : "", 1, c.out.len, out);
        fputs("]}\n", out);
    } else {
        fwrite(c.out.data ? c.out.data : "", 1, c.out.len, out);
    }
    size_t n = c.n;
    im_buf_free(&c.out);
    im_buf_free(&dumpbuf);
    im_free(data);
    return n ? 1 : 0;
}
