/* metrics.c — infermon's own metrics on /metrics in the Prometheus text format:
 * HTTP requests by handler and code, query durations, scrape counters and
 * durations, store (head series/chunks, samples, WAL fsyncs), remote-write
 * receiver counters, memory by subsystem, process figures. */
#include "util/base.h"

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "http/http_int.h"
#include "util/fmtfloat.h"
#include "util/intern.h"
#include "util/timeutil.h"

static void fam(im_buf_t *b, const char *name, const char *type, const char *help)
{
    (void)im_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void val(im_buf_t *b, const char *name, const char *labels, double v)
{
    char f[IM_FLOAT_BUF];
    im_fmt_float_expo(v, f, sizeof f);
    (void)im_buf_printf(b, "%s%s%s%s %s\n", name, labels ? "{" : "", labels ? labels : "",
                        labels ? "}" : "", f);
}

/* A family with one unlabelled sample. */
static void one(im_buf_t *b, const char *name, const char *type, const char *help, double v)
{
    fam(b, name, type, help);
    val(b, name, NULL, v);
}

static int64_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    long pages = 0, rss = 0;
    if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    fclose(f);
    return (int64_t)rss * sysconf(_SC_PAGESIZE);
}

enum MHD_Result http__metrics(http_server_t *s, http__req_t *r)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    char lb[256];
    fam(&b, "infermon_build_info", "gauge",
        "A metric with a constant '1' value labeled by version.");
    val(&b, "infermon_build_info", "version=\"0.1.0\"", 1);

    pthread_mutex_lock(&s->mu);
    fam(&b, "infermon_http_requests_total", "counter", "Counter of HTTP requests.");
    for (size_t i = 0; i < s->ncounters; i++) {
        if (!strncmp(s->counters[i].handler, "engine:", 7)) continue;
        snprintf(lb, sizeof lb, "code=\"%u\",handler=\"%s\"", s->counters[i].code,
                 s->counters[i].handler);
        val(&b, "infermon_http_requests_total", lb, (double)s->counters[i].count);
    }
    fam(&b, "infermon_http_request_duration_seconds", "summary",
        "Time spent answering HTTP requests, by handler.");
    for (size_t i = 0; i < s->ncounters; i++) {
        if (!strncmp(s->counters[i].handler, "engine:", 7)) continue;
        snprintf(lb, sizeof lb, "code=\"%u\",handler=\"%s\"", s->counters[i].code,
                 s->counters[i].handler);
        val(&b, "infermon_http_request_duration_seconds_sum", lb, s->counters[i].seconds);
        val(&b, "infermon_http_request_duration_seconds_count", lb, (double)s->counters[i].count);
    }
    fam(&b, "infermon_engine_query_duration_seconds", "summary",
        "Query evaluation time, by handler and outcome.");
    for (size_t i = 0; i < s->ncounters; i++) {
        if (strncmp(s->counters[i].handler, "engine:", 7)) continue;
        snprintf(lb, sizeof lb, "handler=\"%s\",outcome=\"%s\"", s->counters[i].handler + 7,
                 s->counters[i].code ? "error" : "success");
        val(&b, "infermon_engine_query_duration_seconds_sum", lb, s->counters[i].seconds);
        val(&b, "infermon_engine_query_duration_seconds_count", lb, (double)s->counters[i].count);
    }
    one(&b, "infermon_remote_write_requests_total", "counter", "Remote-write requests received.",
        (double)s->rw_requests);
    one(&b, "infermon_remote_write_requests_failed_total", "counter",
        "Remote-write requests refused (malformed, out of order, too large, storage errors).",
        (double)s->rw_failures);
    one(&b, "infermon_remote_write_samples_received_total", "counter",
        "Samples appended from remote-write requests.", (double)s->rw_samples);
    one(&b, "infermon_remote_write_v2_requests_total", "counter",
        "Remote-write 2.0 requests received (part of infermon_remote_write_requests_total).",
        (double)s->rw2_requests);
    one(&b, "infermon_remote_write_v2_exemplars_dropped_total", "counter",
        "Valid remote-write 2.0 exemplars not stored (infermon has no exemplar storage).",
        (double)s->rw2_exemplars_dropped);
    one(&b, "infermon_remote_write_v2_histograms_refused_total", "counter",
        "Remote-write 2.0 native histogram samples refused (native histograms are disabled).",
        (double)s->rw2_histograms_refused);
    one(&b, "infermon_otlp_requests_total", "counter", "OTLP metrics requests received.",
        (double)s->otlp_requests);
    one(&b, "infermon_otlp_requests_failed_total", "counter",
        "OTLP metrics requests refused whole (4xx/5xx).", (double)s->otlp_failures);
    one(&b, "infermon_otlp_samples_received_total", "counter",
        "Samples appended from OTLP metrics requests.", (double)s->otlp_samples);
    one(&b, "infermon_otlp_data_points_rejected_total", "counter",
        "OTLP data points not written (partial success).", (double)s->otlp_rejected);
    one(&b, "infermon_config_last_reload_successful", "gauge",
        "Whether the last configuration reload attempt was successful.", s->reload_ok ? 1 : 0);
    one(&b, "infermon_config_last_reload_success_timestamp_seconds", "gauge",
        "Timestamp of the last successful configuration reload.", (double)s->reload_ms / 1000.0);
    double start_s = (double)s->start_ms / 1000.0;
    pthread_mutex_unlock(&s->mu);

    pthread_mutex_lock(&s->qmu);
    int qrun = s->qrunning, qwait = s->qwaiting, qmax = s->qmax;
    uint64_t qgone = s->q_client_gone, qto = s->q_queue_timeouts;
    pthread_mutex_unlock(&s->qmu);
    one(&b, "infermon_engine_queries", "gauge",
        "The current number of queries being executed or waiting.", (double)(qrun + qwait));
    one(&b, "infermon_engine_queries_waiting", "gauge",
        "Queries waiting in the queue for an evaluation slot (--query.max-concurrency).",
        (double)qwait);
    one(&b, "infermon_engine_queries_concurrent_max", "gauge",
        "The max number of concurrent queries (--query.max-concurrency).", (double)qmax);
    one(&b, "infermon_engine_queries_client_gone_total", "counter",
        "Queries canceled because their client closed the connection.", (double)qgone);
    one(&b, "infermon_engine_queue_timeouts_total", "counter",
        "Queries that timed out waiting in the queue.", (double)qto);

    if (s->opts.scrape) {
        scrape_stats_t st;
        scrape_manager_stats(s->opts.scrape, &st);
        one(&b, "infermon_scrapes_total", "counter", "Scrapes attempted.",
            (double)st.scrapes_total);
        one(&b, "infermon_scrapes_failed_total", "counter", "Scrapes that failed (up == 0).",
            (double)st.scrapes_failed);
        one(&b, "infermon_scrapes_limit_exceeded_total", "counter",
            "Scrapes failed because a sample, label or body size limit was exceeded.",
            (double)st.limit_failures);
        one(&b, "infermon_scrape_samples_appended_total", "counter",
            "Samples appended by successful scrapes.", (double)st.samples_appended);
        one(&b, "infermon_scrape_samples_out_of_order_total", "counter",
            "Scraped samples rejected as out of order or out of bounds.",
            (double)st.samples_out_of_order);
        one(&b, "infermon_scrape_samples_duplicate_total", "counter",
            "Scraped samples rejected as duplicates.", (double)st.samples_duplicate);
        fam(&b, "infermon_scrape_duration_seconds", "histogram", "Duration of scrapes.");
        for (int i = 0; i < 10; i++) {
            char f[IM_FLOAT_BUF];
            im_fmt_float_expo(scrape_duration_bucket_bounds[i], f, sizeof f);
            im_buf_t l;
            im_buf_init(&l, 0);
            (void)im_buf_printf(&l, "le=\"%s\"", f);
            snprintf(lb, sizeof lb, "%.250s", l.data);
            im_buf_free(&l);
            val(&b, "infermon_scrape_duration_seconds_bucket", lb, (double)st.duration_buckets[i]);
        }
        val(&b, "infermon_scrape_duration_seconds_bucket", "le=\"+Inf\"", (double)st.scrapes_total);
        val(&b, "infermon_scrape_duration_seconds_sum", NULL, st.duration_seconds_sum);
        val(&b, "infermon_scrape_duration_seconds_count", NULL, (double)st.scrapes_total);
        fam(&b, "infermon_scrape_targets", "gauge", "Targets by state.");
        val(&b, "infermon_scrape_targets", "state=\"active\"", (double)st.targets_active);
        val(&b, "infermon_scrape_targets", "state=\"dropped\"", (double)st.targets_dropped);
        one(&b, "infermon_sd_file_reads_total", "counter", "file_sd files read.",
            (double)st.sd_file_reads);
        one(&b, "infermon_sd_file_read_errors_total", "counter",
            "file_sd files that failed to read.", (double)st.sd_file_errors);
    }

    storage_stats_t ts;
    memset(&ts, 0, sizeof ts);
    storage_get_stats(s->opts.storage, &ts);
    one(&b, "infermon_tsdb_head_series", "gauge", "Series in the head block.",
        (double)ts.head_series);
    one(&b, "infermon_tsdb_head_chunks", "gauge", "Chunks in the head block.",
        (double)ts.head_chunks);
    one(&b, "infermon_tsdb_head_samples", "gauge", "Samples in the head block.",
        (double)ts.head_samples);
    one(&b, "infermon_tsdb_head_bytes", "gauge", "Memory held by the head block.",
        (double)ts.head_bytes);
    one(&b, "infermon_tsdb_samples_appended_total", "counter", "Samples committed to the store.",
        (double)ts.samples_appended);
    one(&b, "infermon_tsdb_out_of_order_samples_total", "counter",
        "Samples rejected as out of order.", (double)ts.out_of_order);
    one(&b, "infermon_tsdb_out_of_bounds_samples_total", "counter",
        "Samples rejected as out of bounds (older than the head, or too far ahead of the clock).",
        (double)ts.out_of_bounds);
    one(&b, "infermon_tsdb_too_far_future_samples_total", "counter",
        "Samples rejected as further ahead of the clock than --storage.tsdb.max-future.",
        (double)ts.too_far_future);
    one(&b, "infermon_tsdb_series_over_limits_total", "counter",
        "New series refused by the storage limits (--storage.tsdb.max-labels-per-series, ...).",
        (double)ts.over_limits);
    fam(&b, "infermon_tsdb_wal_fsync_duration_seconds", "summary", "WAL fsync durations.");
    val(&b, "infermon_tsdb_wal_fsync_duration_seconds_sum", NULL, ts.wal_fsync_seconds_total);
    val(&b, "infermon_tsdb_wal_fsync_duration_seconds_count", NULL, (double)ts.wal_fsyncs);
    one(&b, "infermon_tsdb_wal_corruptions_total", "counter",
        "Torn or corrupt WAL tails cut at replay.", (double)ts.wal_corruptions);
    one(&b, "infermon_tsdb_blocks_loaded", "gauge", "Persisted blocks.", (double)ts.blocks);
    one(&b, "infermon_tsdb_storage_blocks_bytes", "gauge", "Bytes of persisted blocks.",
        (double)ts.block_bytes);
    one(&b, "infermon_tsdb_compactions_total", "counter", "Compactions run.",
        (double)ts.compactions);
    one(&b, "infermon_tsdb_frame_cache_hits_total", "counter",
        "Block frames a query found decoded in the frame cache.", (double)ts.frame_cache_hits);
    one(&b, "infermon_tsdb_frame_cache_misses_total", "counter",
        "Block frames a query had to decompress.", (double)ts.frame_cache_misses);
    one(&b, "infermon_tsdb_frame_cache_evictions_total", "counter",
        "Decoded frames evicted to stay within --storage.frame-cache-size.",
        (double)ts.frame_cache_evictions);
    one(&b, "infermon_tsdb_frame_cache_bytes", "gauge", "Bytes of decoded frames cached.",
        (double)ts.frame_cache_bytes);
    one(&b, "infermon_tsdb_frame_cache_limit_bytes", "gauge",
        "The frame cache's limit (storage.frame_cache_size).", (double)ts.frame_cache_limit_bytes);

    fam(&b, "infermon_memory_bytes", "gauge", "Heap bytes accounted per subsystem.");
    for (int t = 0; t < IM_MEM_TAG_COUNT; t++) {
        snprintf(lb, sizeof lb, "subsystem=\"%s\"", im_mem_tag_name((im_mem_tag_t)t));
        val(&b, "infermon_memory_bytes", lb, (double)im_mem_bytes((im_mem_tag_t)t));
    }
    size_t ni, nb;
    im_intern_stats(&ni, &nb);
    one(&b, "infermon_interned_strings", "gauge", "Distinct interned strings.", (double)ni);
    one(&b, "infermon_interned_string_bytes", "gauge", "Bytes of interned strings.", (double)nb);

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    one(&b, "process_cpu_seconds_total", "counter",
        "Total user and system CPU time spent in seconds.",
        (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
    one(&b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
        (double)rss_bytes());
    one(&b, "process_max_resident_memory_bytes", "gauge", "Peak resident memory size in bytes.",
        (double)ru.ru_maxrss * 1024.0);
    one(&b, "process_start_time_seconds", "gauge",
        "Start time of the process since unix epoch in seconds.", start_s);

    pthread_mutex_lock(&s->mu);
    size_t nh = s->nmhooks;
    __typeof__(s->mhooks[0]) hooks[IM_ARRAY_LEN(s->mhooks)];
    memcpy(hooks, s->mhooks, sizeof hooks);
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < nh; i++) hooks[i].fn(hooks[i].ud, &b);
    return http__send(s, r, 200, "text/plain; version=0.0.4; charset=utf-8", &b);
}
