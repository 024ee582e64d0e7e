/* common.c — helpers shared by the subcommands, and `infermon version`. */
#include "util/base.h"

#include <errno.h>
#include <stdio.h>

#include "cli/cli.h"
#include "promql/promql.h"
#include "query/query.h"
#include "tsdb/tsdb.h"

int cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    return 0;
}

bool cli_opt(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strcmp(a, name) == 0) {
        *val = *i + 1 < argc ? argv[++*i] : NULL;
        return true;
    }
    if (strncmp(a, name, n) == 0 && a[n] == '=') {
        *val = a + n + 1;
        return true;
    }
    return false;
}

im_rc cli_remote_open(const query_remote_opts_t *base, const char *config_path,
                      query_backend_t **qb, bool *in_config, im_err_t *err)
{
    query_remote_file_t pf;
    memset(&pf, 0, sizeof pf);
    cfg_http_client_init(&pf.http);
    im_rc rc = config_path ? query_remote_config_load(config_path, &pf, err) : IM_OK;
    if (in_config) *in_config = rc != IM_OK;
    if (rc == IM_OK) {
        query_remote_opts_t qo = *base;
        qo.http = pf.http;
        qo.header_names = pf.header_names;
        qo.header_values = pf.header_values;
        qo.nheaders = pf.nheaders;
        qo.tenant = pf.tenant;
        rc = query_remote_new(&qo, qb, err);
    }
    query_remote_file_free(&pf);
    return rc;
}

im_rc cli_store_open(const char *dir, cli_store_t *s, im_err_t *err)
{
    memset(s, 0, sizeof *s);
    tsdb_opts_t to = {.dir = dir, .no_background = true, .max_future_ms = -1};
    im_rc rc = tsdb_open(&to, &s->db, err);
    if (rc != IM_OK) return rc;
    s->eng = promql_engine_new(NULL);
    s->backend = query_local_new(tsdb_storage(s->db), s->eng);
    return IM_OK;
}

void cli_store_close(cli_store_t *s)
{
    query_backend_free(s->backend);
    promql_engine_free(s->eng);
    if (s->db) tsdb_close(s->db);
    memset(s, 0, sizeof *s);
}

int cli_read_file(const char *path, char **data, size_t *len, size_t max_bytes)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "infermon: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = im_malloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (cap >= max_bytes) {
                fprintf(stderr, "infermon: %s is larger than %zu bytes\n", path, max_bytes);
                im_free(buf);
                if (f != stdin) fclose(f);
                return -1;
            }
            cap = cap * 2 > max_bytes ? max_bytes : cap * 2;
            buf = im_realloc(buf, cap + 1);
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    int bad = ferror(f);
    if (f != stdin) fclose(f);
    if (bad) {
        fprintf(stderr, "infermon: error reading %s\n", path);
        im_free(buf);
        return -1;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

int cli_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("infermon, version %s\n", INFERMON_VERSION);
    return 0;
}
