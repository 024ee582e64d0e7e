/* check_config.c — `infermon check config FILE...`: loads each configuration
 * file as `infermon run` would and reports the first error with file:line:column,
 * like promtool check config. `--in-cluster` (or no FILE inside a Kubernetes pod)
 * prints the in-cluster default `infermon run` would use there, as explicit
 * scrape_configs on stdout, and checks it (the verdict on stderr, so the output
 * can be redirected into a file and edited); the files a configuration names are
 * resolved against its directory and checked as promtool does (a scrape job's
 * credentials file, client cert and key, a Kubernetes SD's client cert and key
 * must exist; a file_sd pattern matching nothing is a warning); `--kubernetes-monitors FILE` does
 * the same for the jobs FILE's kubernetes_monitors: section reads from the API. */
#include "util/base.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "config/config.h"
#include "discovery/generate.h"

/* A file the configuration names must exist (what promtool check config checks,
 * after the paths were resolved against the configuration file's directory). */
static bool file_ok(FILE *f, const char *what, const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) == 0) return true;
    char e[128];
    snprintf(e, sizeof e, "%s", strerror(errno));
    e[0] = (char)tolower((unsigned char)e[0]); /* Go's error text: "no such file or directory" */
    fprintf(f, "  FAILED: error checking %s \"%s\": stat %s: %s\n\n", what, path, path, e);
    return false;
}

static bool tls_files_ok(FILE *f, const cfg_http_client_t *h)
{
    return file_ok(f, "client cert file", h->tls.cert_file) &&
           file_ok(f, "client key file", h->tls.key_file);
}

static bool files_ok(FILE *f, const scrape_config_t *c)
{
    for (size_t i = 0; i < c->njobs; i++) {
        const scrape_job_cfg_t *j = &c->jobs[i];
        if (!file_ok(f, "authorization credentials or bearer token file", j->http.auth_cred_file) ||
            !tls_files_ok(f, &j->http))
            return false;
        for (size_t k = 0; k < j->nk8s_sd; k++)
            if (!tls_files_ok(f, &j->k8s_sd[k].http)) return false;
        for (size_t s = 0; s < j->nfile_sd; s++)
            for (size_t k = 0; k < j->file_sd[s].nfiles; k++) {
                glob_t gl;
                if (glob(j->file_sd[s].files[k], 0, NULL, &gl) != 0)
                    fprintf(
                        f,
                        "  WARNING: file \"%s\" for file_sd in scrape job \"%s\" does not exist\n",
                        j->file_sd[s].files[k], j->job_name);
                globfree(&gl);
            }
    }
    return true; /* promtool checks no file of alertmanagers but their file_sd */
}

static int check_one(FILE *f, const char *name, const char *text)
{
    scrape_config_t *c;
    im_err_t err;
    im_err_clear(&err);
    fprintf(f, "Checking %s\n", name);
    im_rc rc = text ? scrape_config_parse(text, strlen(text), name, &c, &err)
                    : scrape_config_load_file(name, &c, &err);
    if (rc != IM_OK) {
        char b[1024];
        fprintf(f, "  FAILED: %s\n\n", im_err_format(&err, b, sizeof b));
        return 1;
    }
    if (!files_ok(f, c)) {
        scrape_config_free(c);
        return 1;
    }
    size_t ntargets = 0;
    for (size_t j = 0; j < c->njobs; j++)
        for (size_t g = 0; g < c->jobs[j].nstatic; g++)
            ntargets += c->jobs[j].static_groups[g].ntargets;
    fprintf(f, "  SUCCESS: %zu scrape configs, %zu static targets, %zu rule files found\n\n",
            c->njobs, ntargets, c->nrule_files);
    scrape_config_free(c);
    return 0;
}

static int check_in_cluster(void)
{
    im_buf_t b;
    im_buf_init(&b, 0);
    im_err_t err;
    im_err_clear(&err);
    if (discovery_incluster_config(NULL, &b, &err) != IM_OK) {
        fprintf(stderr, "infermon check config: %s\n", err.msg);
        im_buf_free(&b);
        return 2;
    }
    fputs(b.data, stdout);
    fflush(stdout);
    int bad = check_one(stderr, "<in-cluster default>", b.data);
    im_buf_free(&b);
    return bad;
}

/* Loads FILE, reads the monitors its kubernetes_monitors: section selects, prints
 * the scrape_configs they generate (stdout) and checks them (stderr). */
static int check_monitors(const char *file)
{
    scrape_config_t *c = NULL;
    im_err_t err;
    im_err_clear(&err);
    char eb[1024];
    if (scrape_config_load_file(file, &c, &err) != IM_OK) {
        fprintf(stderr, "infermon check config: %s\n", im_err_format(&err, eb, sizeof eb));
        return 1;
    }
    if (!c->k8s_monitors) {
        fprintf(stderr, "infermon check config: %s has no kubernetes_monitors: section\n", file);
        scrape_config_free(c);
        return 2;
    }
    im_buf_t jobs, text;
    im_buf_init(&jobs, 0);
    im_buf_init(&text, 0);
    size_t n = 0;
    int bad = 0;
    if (discovery_monitors_fetch(c->k8s_monitors, NULL, &jobs, &n, NULL, &err) != IM_OK) {
        fprintf(stderr, "infermon check config: %s\n", im_err_format(&err, eb, sizeof eb));
        bad = 1;
    } else {
        im_buf_printf(&text, "# %zu monitors read through kubernetes_monitors: of %s\n", n, file);
        im_buf_puts(&text, "scrape_configs:\n");
        for (const char *p = jobs.data ? jobs.data : ""; *p;) {
            const char *e = strchr(p, '\n');
            size_t l = e ? (size_t)(e - p) + 1 : strlen(p);
            im_buf_puts(&text, "  ");
            im_buf_append(&text, p, l);
            p += l;
        }
        fputs(text.data, stdout);
        fflush(stdout);
        bad = check_one(stderr, "<kubernetes_monitors>", text.data);
    }
    im_buf_free(&jobs);
    im_buf_free(&text);
    scrape_config_free(c);
    return bad;
}

int cli_check_config(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--kubernetes-monitors")) return check_monitors(argv[2]);
    bool in_cluster = argc == 2 && !strcmp(argv[1], "--in-cluster");
    if (argc < 2 && discovery_incluster_detect(NULL)) in_cluster = true;
    if ((argc < 2 && !in_cluster) || cli_wants_help(argc, argv)) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: infermon check config FILE...\n"
                "       infermon check config --in-cluster\n"
                "       infermon check config --kubernetes-monitors FILE\n"
                "Checks infermon / prometheus.yml configuration files. --in-cluster (the\n"
                "default with no FILE inside a Kubernetes pod) prints the configuration\n"
                "`infermon run` uses in a pod without --config.file, then checks it.\n"
                "--kubernetes-monitors reads the PodMonitors and ServiceMonitors FILE's\n"
                "kubernetes_monitors: section selects and prints their scrape_configs.\n");
        return argc < 2 ? 2 : 0;
    }
    if (in_cluster) return check_in_cluster();
    int bad = 0;
    for (int i = 1; i < argc; i++) bad |= check_one(stdout, argv[i], NULL);
    return bad;
}
