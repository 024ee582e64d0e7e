/* tsdb.c — `infermon tsdb analyze|dump|import`: the storage tools, like promtool's
 * tsdb commands. analyze prints series, samples, bytes per sample and the label
 * cardinality top-N; dump writes the selected samples as OpenMetrics; import
 * backfills an OpenMetrics (or text) file with timestamps into a storage
 * directory, through the normal appender, then persists and compacts it into
 * blocks. All three open the directory like the daemon does (lock, WAL replay). */
#include "util/base.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "expo/expo.h"
#include "promql/parser.h"
#include "tsdb/tsdb.h"
#include "util/log.h"
#include "util/timeutil.h"

static int usage(FILE *f)
{
    fprintf(f, "usage: infermon tsdb analyze DIR [--limit N]\n"
               "       infermon tsdb dump DIR [--match SELECTOR]... [--min-time T] [--max-time T]\n"
               "       infermon tsdb import [--format openmetrics|text] FILE DIR\n"
               "\n"
               "analyze  series, samples, bytes per sample, label cardinality top-N\n"
               "dump     samples as OpenMetrics on stdout (times: RFC 3339 or Unix seconds)\n"
               "import   backfill FILE (samples must carry timestamps) into DIR as blocks;\n"
               "         a progress bar is shown when stderr is a terminal\n");
    return f == stderr ? 2 : 0;
}

static im_rc open_db(const char *dir, bool must_exist, tsdb_t **db)
{
    struct stat st;
    if (must_exist && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        fprintf(stderr, "infermon: %s is not a storage directory\n", dir);
        return IM_ENOTFOUND;
    }
    tsdb_opts_t o = {0};
    o.dir = dir;
    o.no_background = true;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = tsdb_open(&o, db, &err);
    if (rc != IM_OK) fprintf(stderr, "infermon: cannot open storage %s: %s\n", dir, err.msg);
    return rc;
}

static void push_matcher(im_matcher_t ***ms, size_t *n, im_matcher_t *m)
{
    *ms = im_realloc(*ms, (*n + 1) * sizeof **ms);
    (*ms)[(*n)++] = m;
}

/* --match takes a PromQL series selector, parsed by the PromQL parser. */
static int parse_selector(const char *s, im_matcher_t ***ms, size_t *n)
{
    im_err_t err;
    im_err_clear(&err);
    im_matcher_t **pm = NULL;
    size_t pn = 0;
    if (promql_parse_metric_selector(s, strlen(s), &pm, &pn, &err) != IM_OK) {
        fprintf(stderr, "infermon: bad --match selector %s: %s\n", s, err.msg);
        return -1;
    }
    /* Own copies, so they are freed like the default matcher. */
    for (size_t i = 0; i < pn; i++) {
        size_t vl;
        const char *v = im_matcher_value(pm[i], &vl);
        const im_istr_t *nm = im_matcher_name(pm[i]);
        im_matcher_t *m;
        if (im_matcher_new(im_matcher_type(pm[i]), nm->s, nm->len, v, vl, &m, &err) != IM_OK) {
            fprintf(stderr, "infermon: bad --match selector %s: %s\n", s, err.msg);
            promql_matchers_free(pm, pn);
            return -1;
        }
        push_matcher(ms, n, m);
    }
    promql_matchers_free(pm, pn);
    return 0;
}

static void free_matchers(im_matcher_t **ms, size_t n)
{
    for (size_t i = 0; i < n; i++) im_matcher_free(ms[i]);
    im_free(ms);
}

static im_matcher_t *all_matcher(void)
{
    im_matcher_t *m = NULL;
    if (im_matcher_new(IM_MATCH_RE, IM_METRIC_NAME, 8, ".+", 2, &m, NULL) != IM_OK) return NULL;
    return m;
}

/* ---- analyze ---- */

typedef struct kv {
    const char *k; /* borrowed */
    uint64_t n;
} kv_t;

static int cmp_kv(const void *a, const void *b)
{
    const kv_t *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? 1 : -1;
    return strcmp(x->k, y->k);
}

static int cmd_analyze(int argc, char **argv)
{
    const char *dir = NULL;
    long limit = 20;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc)
            limit = strtol(argv[++i], NULL, 10);
        else if (!dir)
            dir = argv[i];
        else
            return usage(stderr);
    }
    if (!dir) return usage(stderr);
    tsdb_t *db;
    if (open_db(dir, true, &db) != IM_OK) return 2;
    tsdb_stats_t st;
    tsdb_get_stats(db, &st);
    tsdb_queryable_t *q = tsdb_queryable(db);
    im_matcher_t *m = all_matcher();
    tsdb_series_set_t *set;
    im_err_t err;
    if (q->vt->select(q, INT64_MIN, INT64_MAX, &m, 1, NULL, &set, &err) != IM_OK) {
        fprintf(stderr, "infermon: select failed: %s\n", err.msg);
        im_matcher_free(m);
        q->vt->close(q);
        tsdb_close(db);
        return 2;
    }
    uint64_t samples = 0;
    int64_t mint = INT64_MAX, maxt = INT64_MIN;
    kv_t *metrics = NULL;
    size_t nmetrics = 0;
    for (size_t i = 0; i < set->n; i++) {
        tsdb_iter_t *it = set->vt->iter(set, i);
        int64_t t;
        double v;
        while (it->vt->next(it)) {
            it->vt->at(it, &t, &v);
            if (t < mint) mint = t;
            if (t > maxt) maxt = t;
            samples++;
        }
        it->vt->free(it);
        const im_istr_t *name = im_labels_get(set->series[i].labels, IM_METRIC_NAME);
        const char *ns = name ? name->s : "";
        if (nmetrics && strcmp(metrics[nmetrics - 1].k, ns) == 0) {
            metrics[nmetrics - 1].n++;
        } else {
            metrics = im_realloc(metrics, (nmetrics + 1) * sizeof *metrics);
            metrics[nmetrics++] = (kv_t){ns, 1};
        }
    }
    char a[64], b[64];
    printf("Storage: %s\n", dir);
    if (samples) {
        im_time_format_rfc3339(mint, a, sizeof a);
        im_time_format_rfc3339(maxt, b, sizeof b);
        printf("Time range: %s .. %s (%.1f h)\n", a, b, (double)(maxt - mint) / 3.6e6);
    }
    printf("Series: %zu\nSamples: %" PRIu64 " (head %" PRIu64 ", blocks %" PRIu64 ")\n", set->n,
           samples, st.head_samples, samples - st.head_samples);
    printf("Blocks: %" PRIu64 " (%" PRIu64 " bytes, %" PRIu64 " corrupt and skipped)\n", st.blocks,
           st.block_bytes, st.blocks_corrupt);
    if (samples > st.head_samples)
        printf("Bytes per sample (blocks): %.3f\n",
               (double)st.block_bytes / (double)(samples - st.head_samples));
    printf("Head: %" PRIu64 " series, %" PRIu64 " chunks, %" PRIu64 " bytes in memory\n",
           st.head_series, st.head_chunks, st.head_bytes);
    qsort(metrics, nmetrics, sizeof *metrics, cmp_kv);
    printf("\nHighest cardinality metric names:\n");
    for (size_t i = 0; i < nmetrics && (long)i < limit; i++)
        printf("%" PRIu64 " %s\n", metrics[i].n, metrics[i].k);
    tsdb_strlist_t names, vals;
    if (q->vt->label_names(q, INT64_MIN, INT64_MAX, NULL, 0, &names, &err) == IM_OK) {
        kv_t *card = im_calloc(names.n + 1, sizeof *card);
        for (size_t i = 0; i < names.n; i++) {
            card[i].k = names.v[i]->s;
            if (q->vt->label_values(q, names.v[i]->s, INT64_MIN, INT64_MAX, NULL, 0, &vals, &err) ==
                IM_OK) {
                card[i].n = vals.n;
                tsdb_strlist_free(&vals);
            }
        }
        qsort(card, names.n, sizeof *card, cmp_kv);
        printf("\nHighest cardinality labels (distinct values):\n");
        for (size_t i = 0; i < names.n && (long)i < limit; i++)
            printf("%" PRIu64 " %s\n", card[i].n, card[i].k);
        im_free(card);
        tsdb_strlist_free(&names);
    }
    im_free(metrics);
    set->vt->free(set);
    im_matcher_free(m);
    q->vt->close(q);
    tsdb_close(db);
    return 0;
}

/* ---- dump ---- */

static int parse_time_arg(const char *s, int64_t *out)
{
    im_err_t err;
    if (im_time_parse(s, strlen(s), out, &err) != IM_OK) {
        fprintf(stderr, "infermon: bad time %s: %s\n", s, err.msg);
        return -1;
    }
    return 0;
}

static int flush_out(im_buf_t *b)
{
    if (b->len && fwrite(b->data, 1, b->len, stdout) != b->len) return -1;
    im_buf_reset(b);
    return 0;
}

/* Keeps a copy of the series prefix of a dump line in b; returns b's data. */
static char *series_prefix_buf(im_buf_t *b, const char *p, size_t n)
{
    im_buf_reset(b);
    (void)im_buf_append(b, p, n);
    return b->data;
}

static int cmd_dump(int argc, char **argv)
{
    const char *dir = NULL;
    int64_t mint = INT64_MIN, maxt = INT64_MAX;
    im_matcher_t **ms = NULL;
    size_t nms = 0;
    const char **sels = NULL;
    size_t nsels = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--match") == 0 && i + 1 < argc) {
            sels = im_realloc(sels, (nsels + 1) * sizeof *sels);
            sels[nsels++] = argv[++i];
        } else if (strcmp(argv[i], "--min-time") == 0 && i + 1 < argc) {
            if (parse_time_arg(argv[++i], &mint)) goto usage_err;
        } else if (strcmp(argv[i], "--max-time") == 0 && i + 1 < argc) {
            if (parse_time_arg(argv[++i], &maxt)) goto usage_err;
        } else if (!dir && argv[i][0] != '-') {
            dir = argv[i];
        } else {
            goto usage_err;
        }
    }
    if (!dir) goto usage_err;
    for (size_t i = 0; i < nsels; i++) { /* check every selector before starting */
        im_matcher_t **tm = NULL;
        size_t tn = 0;
        int bad = parse_selector(sels[i], &tm, &tn);
        free_matchers(tm, tn);
        if (bad) {
            im_free(sels);
            return 2;
        }
    }
    tsdb_t *db;
    if (open_db(dir, true, &db) != IM_OK) {
        im_free(sels);
        return 2;
    }
    tsdb_queryable_t *q = tsdb_queryable(db);
    im_buf_t out, pre;
    im_buf_init(&out, 0);
    im_buf_init(&pre, 0);
    expo_writer_t w;
    expo_writer_init(&w, &out, EXPO_OPENMETRICS_1);
    int rcode = 0;
    /* Each --match is one selector; series matched by several are printed once
     * per selector, as promtool does. */
    for (size_t s = 0; s < (nsels ? nsels : 1) && rcode == 0; s++) {
        nms = 0;
        ms = NULL;
        if (nsels) {
            if (parse_selector(sels[s], &ms, &nms) != 0) {
                rcode = 2;
                break;
            }
        } else {
            push_matcher(&ms, &nms, all_matcher());
        }
        tsdb_series_set_t *set;
        im_err_t err;
        if (q->vt->select(q, mint, maxt, ms, nms, NULL, &set, &err) != IM_OK) {
            fprintf(stderr, "infermon: select failed: %s\n", err.msg);
            rcode = 2;
        } else {
            for (size_t i = 0; i < set->n && rcode == 0; i++) {
                tsdb_iter_t *it = set->vt->iter(set, i);
                int64_t t;
                double v;
                /* The series part of the line is formatted once: the writer's
                 * line minus what it writes for " value timestamp\n" alone. */
                size_t prefix = 0;
                while (it->vt->next(it)) {
                    it->vt->at(it, &t, &v);
                    size_t before = out.len;
                    if (prefix == 0) {
                        expo_write_sample_ls(&w, set->series[i].labels, v, true, t);
                        size_t full = out.len - before;
                        expo_write_sample(&w, (im_sv_t){"", 0}, NULL, 0, v, true, t, NULL);
                        size_t tail = out.len - before - full;
                        out.len = before + full;
                        out.data[out.len] = 0;
                        prefix = full - tail;
                        (void)series_prefix_buf(&pre, out.data + before, prefix);
                    } else {
                        (void)im_buf_append(&out, pre.data, pre.len);
                        expo_write_sample(&w, (im_sv_t){"", 0}, NULL, 0, v, true, t, NULL);
                    }
                    if (out.len > (1 << 20) && flush_out(&out)) rcode = 2;
                }
                it->vt->free(it);
            }
            set->vt->free(set);
        }
        free_matchers(ms, nms);
    }
    expo_write_eof(&w);
    if (flush_out(&out)) rcode = 2;
    im_buf_free(&out);
    im_buf_free(&pre);
    q->vt->close(q);
    tsdb_close(db);
    im_free(sels);
    return rcode;
usage_err:
    im_free(sels);
    return usage(stderr);
}

/* ---- import ---- */

static void progress(size_t done, size_t total, uint64_t samples, int *last)
{
    int pct = total ? (int)(done * 100 / total) : 100;
    if (pct == *last) return;
    *last = pct;
    char bar[41];
    int fill = pct * 40 / 100;
    for (int i = 0; i < 40; i++) bar[i] = i < fill ? '#' : ' ';
    bar[40] = 0;
    fprintf(stderr, "\r[%s] %3d%% %" PRIu64 " samples", bar, pct, samples);
    fflush(stderr);
}

static int cmd_import(int argc, char **argv)
{
    const char *file = NULL, *dir = NULL;
    expo_format_t fmt = EXPO_OPENMETRICS_1;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "text") == 0)
                fmt = EXPO_TEXT_004;
            else if (strcmp(argv[i], "openmetrics") != 0)
                return usage(stderr);
        } else if (!file) {
            file = argv[i];
        } else if (!dir) {
            dir = argv[i];
        } else {
            return usage(stderr);
        }
    }
    if (!file || !dir) return usage(stderr);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "infermon: cannot open %s: %s\n", file, strerror(errno));
        if (fd >= 0) close(fd);
        return 2;
    }
    size_t len = (size_t)st.st_size;
    const char *data = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : "";
    close(fd);
    if (data == MAP_FAILED) {
        fprintf(stderr, "infermon: cannot map %s: %s\n", file, strerror(errno));
        return 2;
    }
    size_t lines = 0;
    for (const char *p = data; (p = memchr(p, '\n', (size_t)(data + len - p))); p++) lines++;
    tsdb_t *db;
    if (open_db(dir, false, &db) != IM_OK) {
        if (len) munmap((void *)data, len);
        return 2;
    }
    bool tty = isatty(2);
    expo_limits_t lim = {0};
    expo_parser_t *ps = expo_parser_new(&lim);
    im_err_t err;
    im_err_clear(&err);
    int rcode = 0;
    if (expo_parser_reset(ps, data, len, fmt, &err) != IM_OK) rcode = 2;
    im_labels_builder_t lb;
    im_lb_init(&lb);
    im_buf_t key, prevkey;
    im_buf_init(&key, 0);
    im_buf_init(&prevkey, 0);
    tsdb_ref_t ref = 0;
    tsdb_appender_t *a = tsdb_appender(db);
    size_t inbatch = 0;
    uint64_t samples = 0, rejected = 0;
    int last = -1;
    int64_t t0 = im_mono_ns();
    expo_entry_t e;
    int r;
    while (rcode == 0 && (r = expo_parser_next(ps, &e, &err)) > 0) {
        if (e.kind != EXPO_ENTRY_SAMPLE) continue;
        if (!e.has_ts) {
            fprintf(stderr, "infermon: %s:%d: sample without a timestamp cannot be imported\n",
                    file, e.line);
            rcode = 1;
            break;
        }
        /* Files are usually grouped by series: when the series is the previous
         * sample's, reuse its ref instead of building and interning labels. */
        im_buf_reset(&key);
        (void)im_buf_append(&key, e.name.p, e.name.len);
        for (uint32_t i = 0; i < e.nlabels; i++) {
            (void)im_buf_putc(&key, '\xff');
            (void)im_buf_append(&key, e.labels[i].name.p, e.labels[i].name.len);
            (void)im_buf_putc(&key, '\xfe');
            (void)im_buf_append(&key, e.labels[i].value.p, e.labels[i].value.len);
        }
        im_rc rc = IM_ENOTFOUND;
        if (ref && key.len == prevkey.len && memcmp(key.data, prevkey.data, key.len) == 0)
            rc = tsdb_appender_add(a, ref, NULL, e.t_ms, e.value, NULL);
        if (rc == IM_ENOTFOUND) {
            const im_labels_t *ls = expo_entry_labels(&e, &lb);
            rc = tsdb_appender_add(a, 0, ls, e.t_ms, e.value, &ref);
            im_labels_unref(ls);
            im_buf_t t = prevkey;
            prevkey = key;
            key = t;
        }
        if (rc == IM_OK) {
            samples++;
        } else {
            /* the first few reasons (which limit, what to change), not only a count */
            if (rejected < 5)
                fprintf(stderr, "infermon: %s:%d: sample rejected: %s\n", file, e.line,
                        tsdb_appender_error(a));
            rejected++;
        }
        if (++inbatch >= 50000) {
            if (tsdb_appender_commit(a, &err) != IM_OK) {
                fprintf(stderr, "infermon: commit failed: %s\n", err.msg);
                rcode = 2;
                a = NULL;
                break;
            }
            a = tsdb_appender(db);
            inbatch = 0;
            if (tty) progress((size_t)e.line, lines, samples, &last);
        }
    }
    if (rcode == 0 && r < 0) {
        char eb[700];
        fprintf(stderr, "\ninfermon: %s: %s\n", file, im_err_format(&err, eb, sizeof eb));
        rcode = 1;
    }
    if (a) {
        if (rcode == 0) {
            if (tsdb_appender_commit(a, &err) != IM_OK) {
                fprintf(stderr, "infermon: commit failed: %s\n", err.msg);
                rcode = 2;
            }
        } else {
            tsdb_appender_rollback(a);
        }
    }
    if (tty) progress(lines, lines, samples, &last), fputc('\n', stderr);
    im_lb_free(&lb);
    im_buf_free(&key);
    im_buf_free(&prevkey);
    expo_parser_free(ps);
    if (len) munmap((void *)data, len);
    if (rcode == 0 && (tsdb_flush_head(db, &err) != IM_OK || tsdb_maintain(db, &err) != IM_OK)) {
        fprintf(stderr, "infermon: writing blocks failed: %s\n", err.msg);
        rcode = 2;
    }
    tsdb_stats_t s;
    tsdb_get_stats(db, &s);
    double secs = (double)(im_mono_ns() - t0) / 1e9;
    fprintf(stderr,
            "imported %" PRIu64 " samples (%" PRIu64 " rejected: out of order, duplicate, out "
            "of bounds or over a storage limit) in %.2fs; %" PRIu64 " blocks, %" PRIu64 " bytes\n",
            samples, rejected, secs, s.blocks, s.block_bytes);
    tsdb_close(db);
    return rcode;
}

int cli_tsdb(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return usage(argc < 2 ? stderr : stdout);
    if (cli_wants_help(argc, argv)) return usage(stdout);
    if (strcmp(argv[1], "analyze") == 0) return cmd_analyze(argc, argv);
    if (strcmp(argv[1], "dump") == 0) return cmd_dump(argc, argv);
    if (strcmp(argv[1], "import") == 0) return cmd_import(argc, argv);
    fprintf(stderr, "infermon tsdb: unknown command %s\n", argv[1]);
    return usage(stderr);
}
