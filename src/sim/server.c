/* server.c — serves a simulated fleet over HTTP (libmicrohttpd).
 *
 * One MHD daemon with its internal polling thread answers /pods/<i>/metrics,
 * /nodes/<j>/metrics, /kueue/metrics, /targets (Prometheus file-SD JSON),
 * /ground-truth (the fleet's exact totals, JSON) and /.
 * With a per-pod port base, an acceptor thread listens on base+i for every pod
 * and hands accepted sockets to the same daemon; the handler tells them apart
 * by the connection's local port. A clock thread advances the fleet to
 * start + (wall time elapsed) x speed. One mutex serialises the clock thread and
 * the renderers; rendering a pod holds it for tens of microseconds.
 * Responses are gzip-compressed when the client accepts gzip. */
#include "util/base.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/gzip.h"
#include "sim/sim.h"
#include "util/log.h"
#include "util/timeutil.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct sim_server {
    sim_fleet_t *f;
    sim_server_options_t o;
    struct MHD_Daemon *d;
    int port;
    pthread_mutex_t mu;
    pthread_t clock, acceptor;
    bool clock_started, acceptor_started;
    atomic_int stop;
    int *pod_fds; /* owned: per-pod listening sockets */
    int npod_fds;
    int64_t wall0_ms, sim0_ms;
    char host_port[128];
};

void sim_server_lock(sim_server_t *s)
{
    pthread_mutex_lock(&s->mu);
}

void sim_server_unlock(sim_server_t *s)
{
    pthread_mutex_unlock(&s->mu);
}

int sim_server_port(const sim_server_t *s)
{
    return s->port;
}

static void *clock_main(void *arg)
{
    sim_server_t *s = arg;
    while (!s->stop) {
        int64_t wall = im_now_ms();
        int64_t target = s->sim0_ms + (int64_t)((double)(wall - s->wall0_ms) * s->o.speed);
        pthread_mutex_lock(&s->mu);
        sim_fleet_advance(s->f, target);
        pthread_mutex_unlock(&s->mu);
        usleep(50 * 1000);
    }
    return NULL;
}

static void *acceptor_main(void *arg)
{
    sim_server_t *s = arg;
    struct pollfd *p = im_calloc((size_t)s->npod_fds, sizeof *p);
    for (int i = 0; i < s->npod_fds; i++) {
        p[i].fd = s->pod_fds[i];
        p[i].events = POLLIN;
    }
    while (!s->stop) {
        int n = poll(p, (nfds_t)s->npod_fds, 100);
        if (n <= 0) continue;
        for (int i = 0; i < s->npod_fds; i++) {
            if (!(p[i].revents & POLLIN)) continue;
            struct sockaddr_storage ss;
            socklen_t sl = sizeof ss;
            int c = accept(p[i].fd, (struct sockaddr *)&ss, &sl);
            if (c < 0) continue;
            if (MHD_add_connection(s->d, c, (struct sockaddr *)&ss, sl) != MHD_YES) close(c);
        }
    }
    im_free(p);
    return NULL;
}

static void free_cb(void *p)
{
    im_free(p);
}

static bool accepts_gzip(struct MHD_Connection *c)
{
    const char *ae =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    return ae && strstr(ae, "gzip") != NULL;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *ctype,
                             im_buf_t *body, bool gz)
{
    im_buf_t z;
    im_buf_init(&z, 0);
    bool zipped = gz && body->len > 256 && im_gzip(body->data, body->len, 1, &z);
    im_buf_t *use = zipped ? &z : body;
    size_t len;
    char *data = im_buf_steal(use, &len);
    if (!data) data = im_strdup("");
    im_buf_free(zipped ? body : &z);
    struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(len, data, free_cb);
    if (!r) {
        im_free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (zipped) MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static int local_port(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return -1;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(ci->connect_fd, (struct sockaddr *)&ss, &sl) != 0) return -1;
    if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

/* Parses "/<prefix>/<n>/metrics"; returns n or -1. */
static int path_index(const char *url, const char *prefix)
{
    size_t pl = strlen(prefix);
    if (strncmp(url, prefix, pl) != 0) return -1;
    const char *p = url + pl;
    if (*p < '0' || *p > '9') return -1;
    char *end;
    long n = strtol(p, &end, 10);
    if (strcmp(end, "/metrics") != 0 || n > 1000000) return -1;
    return (int)n;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **req_cls)
{
    (void)version;
    (void)upload;
    sim_server_t *s = cls;
    /* Answer on the second call: a response queued on the first one (before
     * libmicrohttpd has looked at the body) makes it close the connection. */
    static int seen;
    if (*req_cls == NULL) {
        *req_cls = &seen;
        return MHD_YES;
    }
    if (*upload_size != 0) {
        *upload_size = 0; /* ignore any body */
        return MHD_YES;
    }
    im_buf_t b;
    im_buf_init(&b, 0);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        (void)im_buf_puts(&b, "method not allowed\n");
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", &b, false);
    }
    bool gz = accepts_gzip(c);
    sim_ep_kind_t kind = SIM_EP_VLLM;
    int idx = -1;
    if (s->o.port_per_pod_base > 0) {
        int lp = local_port(c);
        if (lp != s->port && lp >= s->o.port_per_pod_base &&
            lp < s->o.port_per_pod_base + s->npod_fds) {
            if (strcmp(url, "/metrics") != 0) {
                (void)im_buf_puts(&b, "not found: this port serves /metrics\n");
                return reply(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", &b, false);
            }
            idx = lp - s->o.port_per_pod_base;
            kind = SIM_EP_VLLM;
            goto render;
        }
    }
    if ((idx = path_index(url, "/pods/")) >= 0)
        kind = SIM_EP_VLLM;
    else if ((idx = path_index(url, "/nodes/")) >= 0)
        kind = SIM_EP_DCGM;
    else if (strcmp(url, "/kueue/metrics") == 0) {
        kind = SIM_EP_KUEUE;
        idx = 0;
    } else if (strcmp(url, "/targets") == 0) {
        pthread_mutex_lock(&s->mu);
        im_rc rc = sim_fleet_targets_json(s->f, s->host_port, s->o.port_per_pod_base, &b);
        pthread_mutex_unlock(&s->mu);
        (void)rc;
        return reply(c, MHD_HTTP_OK, "application/json", &b, gz);
    } else if (strcmp(url, "/ground-truth") == 0) {
        pthread_mutex_lock(&s->mu);
        im_rc rc = sim_fleet_ground_truth_json(s->f, &b);
        pthread_mutex_unlock(&s->mu);
        (void)rc;
        return reply(c, MHD_HTTP_OK, "application/json", &b, gz);
    } else if (strcmp(url, "/") == 0) {
        pthread_mutex_lock(&s->mu);
        (void)im_buf_puts(&b, "infermon simulate\n\n/targets  Prometheus file-SD JSON\n"
                              "/ground-truth  exact totals since the start (JSON)\n");
        for (int i = 0; i < sim_fleet_endpoint_count(s->f); i++) {
            const sim_endpoint_t *e = sim_fleet_endpoint(s->f, i);
            (void)im_buf_printf(&b, "%s  %s\n", e->path, e->pod ? e->pod : "");
        }
        pthread_mutex_unlock(&s->mu);
        return reply(c, MHD_HTTP_OK, "text/plain; charset=utf-8", &b, gz);
    }
render:
    if (idx >= 0) {
        pthread_mutex_lock(&s->mu);
        bool up = idx < sim_fleet_count(s->f, kind) && sim_fleet_endpoint_up(s->f, kind, idx);
        im_rc rc = up ? sim_fleet_render(s->f, kind, idx, &b) : IM_ENOTFOUND;
        pthread_mutex_unlock(&s->mu);
        if (!up && idx < sim_fleet_count(s->f, kind)) {
            /* the scenario takes this target down (knobs down, dcgm_down) */
            (void)im_buf_puts(&b, "503 service unavailable (simulated scrape failure)\n");
            return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", &b, false);
        }
        if (rc == IM_OK) return reply(c, MHD_HTTP_OK, CONTENT_TYPE, &b, gz);
    }
    im_buf_reset(&b);
    (void)im_buf_puts(&b, "404 page not found\n");
    return reply(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", &b, false);
}

static bool parse_listen(const char *listen, struct sockaddr_in *sa, im_err_t *err)
{
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    const char *colon = strrchr(listen, ':');
    const char *ports = colon ? colon + 1 : listen;
    char host[64] = "";
    if (colon) {
        size_t hl = (size_t)(colon - listen);
        if (hl >= sizeof host) hl = sizeof host - 1;
        memcpy(host, listen, hl);
        host[hl] = '\0';
    }
    char *end;
    long port = strtol(ports, &end, 10);
    if (*ports == '\0' || *end != '\0' || port < 0 || port > 65535) {
        im_err_set(err, IM_EINVAL, "--listen: bad port in \"%s\"", listen);
        return false;
    }
    sa->sin_port = htons((uint16_t)port);
    if (host[0] == '\0' || strcmp(host, "0.0.0.0") == 0)
        sa->sin_addr.s_addr = htonl(INADDR_ANY);
    else if (strcmp(host, "localhost") == 0)
        sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    else if (inet_pton(AF_INET, host, &sa->sin_addr) != 1) {
        im_err_set(err, IM_EINVAL, "--listen: \"%s\" is not an IPv4 address", host);
        return false;
    }
    return true;
}

im_rc sim_server_start(sim_fleet_t *f, const sim_server_options_t *o, sim_server_t **out,
                       im_err_t *err)
{
    *out = NULL;
    struct sockaddr_in sa;
    if (!parse_listen(o->listen ? o->listen : "127.0.0.1:9400", &sa, err)) return IM_EINVAL;
    sim_server_t *s = im_calloc(1, sizeof *s);
    s->f = f;
    s->o = *o;
    if (s->o.speed <= 0) s->o.speed = 1;
    pthread_mutex_init(&s->mu, NULL);
    s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_AUTO, 0, NULL,
                            NULL, handler, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30, MHD_OPTION_END);
    if (!s->d) {
        sim_server_stop(s);
        return im_err_set(err, IM_EIO, "cannot listen on %s (port in use?)",
                          o->listen ? o->listen : "127.0.0.1:9400");
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : ntohs(sa.sin_port);
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
    if (sa.sin_addr.s_addr == htonl(INADDR_ANY)) snprintf(ip, sizeof ip, "127.0.0.1");
    snprintf(s->host_port, sizeof s->host_port, "%s:%d", ip, s->port);
    if (o->port_per_pod_base > 0) {
        int n = sim_fleet_count(f, SIM_EP_VLLM);
        /* one listening socket per pod: raise the descriptor limit to the hard limit */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max &&
            rl.rlim_cur < (rlim_t)n + 256) {
            rl.rlim_cur = rl.rlim_max;
            (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
        s->pod_fds = im_calloc((size_t)(n ? n : 1), sizeof *s->pod_fds);
        for (int i = 0; i < n; i++) {
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            int one = 1;
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            struct sockaddr_in pa = sa;
            pa.sin_port = htons((uint16_t)(o->port_per_pod_base + i));
            if (fd < 0 || bind(fd, (struct sockaddr *)&pa, sizeof pa) != 0 || listen(fd, 64) != 0) {
                int e = errno;
                if (fd >= 0) close(fd);
                sim_server_stop(s);
                return im_err_set(err, IM_EIO, "cannot listen on port %d for pod %d: %s",
                                  o->port_per_pod_base + i, i, strerror(e));
            }
            s->pod_fds[s->npod_fds++] = fd;
        }
        if (pthread_create(&s->acceptor, NULL, acceptor_main, s) == 0) s->acceptor_started = true;
    }
    s->wall0_ms = im_now_ms();
    s->sim0_ms = sim_fleet_now_ms(f);
    if (pthread_create(&s->clock, NULL, clock_main, s) == 0) s->clock_started = true;
    *out = s;
    return IM_OK;
}

void sim_server_stop(sim_server_t *s)
{
    if (!s) return;
    s->stop = 1;
    if (s->clock_started) pthread_join(s->clock, NULL);
    if (s->acceptor_started) pthread_join(s->acceptor, NULL);
    if (s->d) MHD_stop_daemon(s->d);
    for (int i = 0; i < s->npod_fds; i++) close(s->pod_fds[i]);
    im_free(s->pod_fds);
    pthread_mutex_destroy(&s->mu);
    im_free(s);
}
