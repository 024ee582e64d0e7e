/* target.c — a target's labels and scrape URL from its discovered labels, as
 * Prometheus computes them: job/__scrape_interval__/__scrape_timeout__/
 * __metrics_path__/__scheme__ and __param_* defaults, relabel_configs, a default
 * port for the scheme, address and interval checks, __meta_* removal, and
 * instance defaulting to the address. */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>

#include "scrape/scrape.h"
#include "util/timeutil.h"

static void set_if_missing(im_labels_builder_t *lb, const char *n, const char *v)
{
    if (!im_lb_get(lb, n)) im_lb_set(lb, n, strlen(n), v, strlen(v));
}

/* Does s already carry a port ("host:port" or "[v6]:port")? */
static bool has_port(const char *s)
{
    if (s[0] == '[') {
        const char *e = strchr(s, ']');
        return e && e[1] == ':';
    }
    const char *c = strrchr(s, ':');
    if (!c) return false;
    return strchr(s, ':') == c; /* exactly one colon */
}

static void url_escape(im_buf_t *b, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.' || *p == '~')
            (void)im_buf_putc(b, (char)*p);
        else if (*p == ' ')
            (void)im_buf_putc(b, '+');
        else
            (void)im_buf_printf(b, "%%%02X", *p);
    }
}

typedef struct qparam {
    const char *k, *v;
} qparam_t;

/* The duration in label name of lb (__scrape_interval__, __scrape_timeout__),
 * which must be there and not 0; what names it in the error. */
static im_rc label_duration(const im_labels_builder_t *lb, const char *name, const char *what,
                            int64_t *out, im_err_t *err)
{
    const im_istr_t *x = im_lb_get(lb, name);
    if (x && im_duration_parse(x->s, x->len, out, NULL) != IM_OK)
        return im_err_set(err, IM_EINVAL,
                          "error parsing scrape %s: not a valid duration string: \"%s\"", what,
                          x->s);
    if (*out == 0) return im_err_set(err, IM_EINVAL, "scrape %s cannot be 0", what);
    return IM_OK;
}

static int qcmp(const void *a, const void *b)
{
    return strcmp(((const qparam_t *)a)->k, ((const qparam_t *)b)->k);
}

im_rc scrape_target_labels(const scrape_job_cfg_t *job, const im_labels_t *discovered,
                           const im_labels_t **out, char **url, im_err_t *err)
{
    *out = NULL;
    *url = NULL;
    im_labels_builder_t lb;
    im_lb_init(&lb);
    im_lb_load(&lb, discovered);
    char iv[64], tv[64];
    im_duration_format(job->interval_ms, iv, sizeof iv);
    im_duration_format(job->timeout_ms, tv, sizeof tv);
    set_if_missing(&lb, "job", job->job_name);
    set_if_missing(&lb, "__scrape_interval__", iv);
    set_if_missing(&lb, "__scrape_timeout__", tv);
    set_if_missing(&lb, "__metrics_path__", job->metrics_path);
    set_if_missing(&lb, "__scheme__", job->scheme);
    for (size_t i = 0; i < job->nparams; i++) {
        char n[512];
        snprintf(n, sizeof n, "__param_%s", job->param_names[i]);
        set_if_missing(&lb, n, job->param_values[i]);
    }
    im_rc rc = IM_OK;
    if (!labels_relabel_process(job->relabel, job->nrelabel, &lb)) goto done; /* dropped */
    const im_istr_t *a = im_lb_get(&lb, "__address__");
    if (!a) {
        rc = im_err_set(err, IM_EINVAL, "no address");
        goto done;
    }
    char addr[1024];
    snprintf(addr, sizeof addr, "%s", a->s);
    const im_istr_t *sch = im_lb_get(&lb, "__scheme__");
    const char *scheme = sch ? sch->s : "http";
    if (!has_port(addr) && !strchr(addr, '/')) {
        const char *port;
        if (!strcmp(scheme, "http") || !*scheme)
            port = "80";
        else if (!strcmp(scheme, "https"))
            port = "443";
        else {
            rc = im_err_set(err, IM_EINVAL, "invalid scheme: \"%s\"", scheme);
            goto done;
        }
        size_t l = strlen(addr);
        snprintf(addr + l, sizeof addr - l, ":%s", port);
        im_lb_set(&lb, "__address__", 11, addr, strlen(addr));
    }
    if (strchr(addr, '/')) {
        rc = im_err_set(err, IM_EINVAL, "\"%s\" is not a valid hostname", addr);
        goto done;
    }
    int64_t ims = 0, tms = 0;
    if ((rc = label_duration(&lb, "__scrape_interval__", "interval", &ims, err)) ||
        (rc = label_duration(&lb, "__scrape_timeout__", "timeout", &tms, err)))
        goto done;
    if (tms > ims) {
        rc = im_err_set(err, IM_EINVAL, "scrape timeout cannot be greater than scrape interval");
        goto done;
    }
    /* URL, before __ labels go */
    im_buf_t u;
    im_buf_init(&u, 0);
    const im_istr_t *mp = im_lb_get(&lb, "__metrics_path__");
    (void)im_buf_printf(&u, "%s://%s%s", scheme, addr, mp ? mp->s : "");
    size_t nq = 0;
    qparam_t *q = im_calloc(job->nparams + lb.n + 1, sizeof *q);
    for (size_t i = 0; i < job->nparams; i++) {
        bool first = true;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(job->param_names[k], job->param_names[i])) first = false;
        char n[512];
        snprintf(n, sizeof n, "__param_%s", job->param_names[i]);
        const im_istr_t *pv = first ? im_lb_get(&lb, n) : NULL;
        q[nq].k = job->param_names[i];
        q[nq++].v = pv ? pv->s : job->param_values[i];
    }
    for (uint32_t i = 0; i < lb.n; i++) {
        const char *n = lb.l[i].name->s;
        if (strncmp(n, "__param_", 8) != 0) continue;
        bool known = false;
        for (size_t k = 0; k < job->nparams; k++)
            if (!strcmp(job->param_names[k], n + 8)) known = true;
        if (!known) {
            q[nq].k = n + 8;
            q[nq++].v = lb.l[i].value->s;
        }
    }
    qsort(q, nq, sizeof *q,
          qcmp); /* stable enough: equal keys keep config order in glibc's merge sort */
    for (size_t i = 0; i < nq; i++) {
        (void)im_buf_putc(&u, i ? '&' : '?');
        url_escape(&u, q[i].k);
        (void)im_buf_putc(&u, '=');
        url_escape(&u, q[i].v);
    }
    im_free(q);
    *url = im_buf_steal(&u, NULL);
    /* drop __meta_*, default instance, keep only non-reserved labels */
    for (uint32_t i = 0; i < lb.n;) {
        const im_istr_t *n = lb.l[i].name;
        if (n->len >= 2 && n->s[0] == '_' && n->s[1] == '_') {
            im_lb_set(&lb, n->s, n->len, "", 0);
            continue;
        }
        i++;
    }
    set_if_missing(&lb, "instance", addr);
    for (uint32_t i = 0; i < lb.n; i++)
        if (!im_utf8_valid(lb.l[i].value->s, lb.l[i].value->len)) {
            rc = im_err_set(err, IM_EINVAL, "invalid label value for \"%s\"", lb.l[i].name->s);
            im_free(*url);
            *url = NULL;
            goto done;
        }
    *out = im_lb_build(&lb);
done:
    im_lb_free(&lb);
    return rc;
}
