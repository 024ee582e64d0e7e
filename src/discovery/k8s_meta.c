/* k8s_meta.c — Kubernetes objects to target groups, per role, with the
 * __meta_kubernetes_* labels named and valued as Prometheus 2.42 does.
 *
 * Every builder reads the object as the API server's JSON (fields absent or of
 * the wrong type read as empty), so a malformed object gives fewer labels or no
 * targets, never a crash. Empty label values are dropped by the label builder,
 * which is what Prometheus' targets API shows too. */
#include <stdio.h>
#include <string.h>

#include "discovery/k8s.h"
#include "util/mem.h"

#define P "__meta_kubernetes_"

json_t *k8s_cache_get(const k8s_cache_t *c, k8s_kind_t kind, const char *key)
{
    if (!c) return NULL;
    for (size_t i = 0; i < c->nstores[kind]; i++) {
        json_t *o = json_object_get(c->stores[kind][i], key);
        if (o) return o;
    }
    return NULL;
}

void k8s_group_clear(k8s_group_t *g)
{
    for (size_t i = 0; i < g->ntargets; i++) im_labels_unref(g->targets[i]);
    im_free(g->targets);
    im_free(g->source);
    memset(g, 0, sizeof *g);
}

void k8s_sanitize(const char *s, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; s[i] && o + 1 < cap;) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '_') {
            out[o++] = (char)c;
            i++;
            continue;
        }
        /* one '_' per UTF-8 character; an invalid byte is a character of its own */
        size_t n = 1;
        if (c >= 0xC2 && c <= 0xDF)
            n = 2;
        else if (c >= 0xE0 && c <= 0xEF)
            n = 3;
        else if (c >= 0xF0 && c <= 0xF4)
            n = 4;
        size_t k = 1;
        while (k < n && ((unsigned char)s[i + k] & 0xC0) == 0x80) k++;
        if (k < n) n = 1; /* truncated sequence: the lead byte alone */
        out[o++] = '_';
        i += n;
    }
    out[o] = 0;
}

/* ---- JSON access: absent or mistyped reads as empty ---- */

static json_t *jget(const json_t *o, const char *k)
{
    return json_is_object(o) ? json_object_get(o, k) : NULL;
}

static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(jget(o, k));
    return s ? s : "";
}

static json_t *jarr(const json_t *o, const char *k)
{
    json_t *a = jget(o, k);
    return json_is_array(a) ? a : NULL;
}

static bool jhas_str(const json_t *o, const char *k)
{
    return json_is_string(jget(o, k));
}

static json_t *meta_of(const json_t *o)
{
    return jget(o, "metadata");
}

/* ---- Label building ---- */

static void put(im_labels_builder_t *lb, const char *name, const char *val)
{
    im_lb_set(lb, name, strlen(name), val, strlen(val));
}

static void put_u(im_labels_builder_t *lb, const char *name, json_int_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", (unsigned long long)(uint32_t)v);
    put(lb, name, b);
}

/* <prefix>label_<k> = v and <prefix>labelpresent_<k> = "true" for a string map. */
static void put_map(im_labels_builder_t *lb, const char *prefix, const char *what, const json_t *m)
{
    if (!json_is_object(m)) return;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)m, k, v)
    {
        if (!json_is_string(v)) continue;
        char san[1024], n[1200];
        k8s_sanitize(k, san, sizeof san);
        snprintf(n, sizeof n, "%s%s_%s", prefix, what, san);
        put(lb, n, json_string_value(v));
        snprintf(n, sizeof n, "%s%spresent_%s", prefix, what, san);
        put(lb, n, "true");
    }
}

static void put_meta_maps(im_labels_builder_t *lb, const char *prefix, const json_t *obj,
                          bool annotations)
{
    json_t *md = meta_of(obj);
    put_map(lb, prefix, "label", jget(md, "labels"));
    if (annotations) put_map(lb, prefix, "annotation", jget(md, "annotations"));
}

static void join_host_port(const char *host, json_int_t port, char *out, size_t cap)
{
    unsigned long long p = (unsigned long long)(uint32_t)port;
    if (strchr(host, ':'))
        snprintf(out, cap, "[%s]:%llu", host, p);
    else
        snprintf(out, cap, "%s:%llu", host, p);
}

static void add_target(k8s_group_t *g, im_labels_builder_t *lb)
{
    g->targets = im_realloc(g->targets, (g->ntargets + 1) * sizeof *g->targets);
    g->targets[g->ntargets++] = im_lb_build(lb);
}

/* Group labels under target labels: a name the target has keeps its value. */
static void merge_under(im_labels_builder_t *t, const im_labels_t *group)
{
    for (uint32_t i = 0; group && i < group->n; i++)
        if (!im_lb_get(t, group->l[i].name->s))
            im_lb_set_istr(t, group->l[i].name, group->l[i].value);
}

/* Pod labels shared by the pod, endpoints and endpointslice roles (podLabels). */
static void pod_labels(im_labels_builder_t *lb, const json_t *pod)
{
    json_t *md = meta_of(pod), *spec = jget(pod, "spec"), *st = jget(pod, "status");
    put(lb, P "pod_name", jstr(md, "name"));
    put(lb, P "pod_ip", jstr(st, "podIP"));
    const char *ready = "unknown";
    json_t *conds = jarr(st, "conditions"), *c;
    size_t i;
    json_array_foreach(conds, i, c)
    {
        if (!strcmp(jstr(c, "type"), "Ready")) {
            ready = jstr(c, "status");
            break;
        }
    }
    char rl[64];
    size_t k = 0;
    for (; ready[k] && k + 1 < sizeof rl; k++)
        rl[k] = (char)((ready[k] >= 'A' && ready[k] <= 'Z') ? ready[k] + 32 : ready[k]);
    rl[k] = 0;
    put(lb, P "pod_ready", rl);
    put(lb, P "pod_phase", jstr(st, "phase"));
    put(lb, P "pod_node_name", jstr(spec, "nodeName"));
    put(lb, P "pod_host_ip", jstr(st, "hostIP"));
    put(lb, P "pod_uid", jstr(md, "uid"));
    put_meta_maps(lb, P "pod_", pod, true);
    json_t *owners = jarr(md, "ownerReferences"), *o;
    json_array_foreach(owners, i, o)
    {
        if (json_is_true(jget(o, "controller"))) {
            put(lb, P "pod_controller_kind", jstr(o, "kind"));
            put(lb, P "pod_controller_name", jstr(o, "name"));
            break;
        }
    }
}

/* addNodeLabels: the node's name and labels, when the node is known. */
static void node_meta(im_labels_builder_t *lb, const k8s_cache_t *c, const json_t *node_name)
{
    const char *nn = json_string_value(node_name);
    if (!nn) return;
    json_t *node = k8s_cache_get(c, K8S_ROLE_NODE, nn);
    if (!node) return;
    put(lb, P "node_name", nn);
    put_map(lb, P "node_", "label", jget(meta_of(node), "labels"));
}

static void service_labels(im_labels_builder_t *lb, const json_t *svc)
{
    put(lb, P "service_name", jstr(meta_of(svc), "name"));
    put(lb, P "namespace", jstr(meta_of(svc), "namespace"));
    put_meta_maps(lb, P "service_", svc, true);
}

static void container_port_labels(im_labels_builder_t *lb, const json_t *c, const json_t *cport,
                                  json_int_t port, const char *proto)
{
    put(lb, P "pod_container_name", jstr(c, "name"));
    put(lb, P "pod_container_image", jstr(c, "image"));
    put(lb, P "pod_container_port_name", jstr(cport, "name"));
    put_u(lb, P "pod_container_port_number", port);
    put(lb, P "pod_container_port_protocol", proto);
}

static json_int_t jint(const json_t *o, const char *k)
{
    return json_integer_value(jget(o, k));
}

/* ---- pod ---- */

static void build_pod(const k8s_cache_t *c, bool attach, const json_t *pod, k8s_group_t *g)
{
    json_t *st = jget(pod, "status"), *spec = jget(pod, "spec");
    const char *ip = jstr(st, "podIP");
    if (!*ip) return; /* starting or evicted */
    im_labels_builder_t lb;
    im_lb_init(&lb);
    pod_labels(&lb, pod);
    put(&lb, P "namespace", jstr(meta_of(pod), "namespace"));
    if (attach) node_meta(&lb, c, jget(spec, "nodeName"));
    const im_labels_t *group = im_lb_build(&lb);
    const char *lists[2] = {"containers", "initContainers"};
    for (int li = 0; li < 2; li++) {
        json_t *cs = jarr(spec, lists[li]), *ct;
        size_t i;
        json_array_foreach(cs, i, ct)
        {
            json_t *ports = jarr(ct, "ports");
            const char *init = li ? "true" : "false";
            if (!ports || !json_array_size(ports)) {
                im_lb_reset(&lb);
                put(&lb, "__address__", ip);
                put(&lb, P "pod_container_name", jstr(ct, "name"));
                put(&lb, P "pod_container_image", jstr(ct, "image"));
                put(&lb, P "pod_container_init", init);
                merge_under(&lb, group);
                add_target(g, &lb);
                continue;
            }
            json_t *pt;
            size_t pi;
            json_array_foreach(ports, pi, pt)
            {
                char addr[600];
                json_int_t pn = jint(pt, "containerPort");
                join_host_port(ip, pn, addr, sizeof addr);
                im_lb_reset(&lb);
                put(&lb, "__address__", addr);
                container_port_labels(&lb, ct, pt, pn, jstr(pt, "protocol"));
                put(&lb, P "pod_container_init", init);
                merge_under(&lb, group);
                add_target(g, &lb);
            }
        }
    }
    im_labels_unref(group);
    im_lb_free(&lb);
}

/* ---- service ---- */

static void build_service(const json_t *svc, k8s_group_t *g)
{
    im_labels_builder_t lb;
    im_lb_init(&lb);
    service_labels(&lb, svc);
    const im_labels_t *group = im_lb_build(&lb);
    json_t *md = meta_of(svc), *spec = jget(svc, "spec"), *pt;
    const char *type = jstr(spec, "type");
    size_t i;
    json_array_foreach(jarr(spec, "ports"), i, pt)
    {
        char host[600], addr[700], num[32];
        snprintf(host, sizeof host, "%s.%s.svc", jstr(md, "name"), jstr(md, "namespace"));
        join_host_port(host, jint(pt, "port"), addr, sizeof addr);
        snprintf(num, sizeof num, "%lld", (long long)(int32_t)jint(pt, "port"));
        im_lb_reset(&lb);
        put(&lb, "__address__", addr);
        put(&lb, P "service_port_name", jstr(pt, "name"));
        put(&lb, P "service_port_number", num);
        put(&lb, P "service_port_protocol", jstr(pt, "protocol"));
        put(&lb, P "service_type", type);
        if (!strcmp(type, "ExternalName"))
            put(&lb, P "service_external_name", jstr(spec, "externalName"));
        else
            put(&lb, P "service_cluster_ip", jstr(spec, "clusterIP"));
        merge_under(&lb, group);
        add_target(g, &lb);
    }
    im_labels_unref(group);
    im_lb_free(&lb);
}

/* ---- endpoints and endpointslice: pods seen behind the addresses ---- */

typedef struct seen_pod {
    const json_t *pod;
    json_int_t *ports;
    size_t nports;
} seen_pod_t;

typedef struct seen {
    seen_pod_t *p;
    size_t n;
} seen_t;

static void seen_add(seen_t *s, const json_t *pod, json_int_t port, bool has_port)
{
    seen_pod_t *e = NULL;
    for (size_t i = 0; i < s->n; i++)
        if (s->p[i].pod == pod) e = &s->p[i];
    if (!e) {
        s->p = im_realloc(s->p, (s->n + 1) * sizeof *s->p);
        e = &s->p[s->n++];
        memset(e, 0, sizeof *e);
        e->pod = pod;
    }
    if (!has_port) return;
    e->ports = im_realloc(e->ports, (e->nports + 1) * sizeof *e->ports);
    e->ports[e->nports++] = port;
}

/* Targets for the container ports of seen pods no address covered. */
static void seen_flush(seen_t *s, const im_labels_t *group, im_labels_builder_t *lb, k8s_group_t *g)
{
    for (size_t i = 0; i < s->n; i++) {
        const json_t *pod = s->p[i].pod, *ct;
        const char *ip = jstr(jget(pod, "status"), "podIP");
        size_t ci;
        json_array_foreach(jarr(jget(pod, "spec"), "containers"), ci, ct)
        {
            json_t *pt;
            size_t pi;
            json_array_foreach(jarr(ct, "ports"), pi, pt)
            {
                json_int_t pn = jint(pt, "containerPort");
                bool covered = false;
                for (size_t k = 0; k < s->p[i].nports; k++)
                    if ((uint32_t)s->p[i].ports[k] == (uint32_t)pn) covered = true;
                if (covered) continue;
                char addr[600];
                join_host_port(ip, pn, addr, sizeof addr);
                im_lb_reset(lb);
                put(lb, "__address__", addr);
                container_port_labels(lb, ct, pt, pn, jstr(pt, "protocol"));
                pod_labels(lb, pod);
                merge_under(lb, group);
                add_target(g, lb);
            }
        }
        im_free(s->p[i].ports);
    }
    im_free(s->p);
    s->p = NULL;
    s->n = 0;
}

/* The pod a targetRef names, when it is a pod the discoverer knows. */
static const json_t *resolve_pod(const k8s_cache_t *c, const json_t *ref)
{
    if (!json_is_object(ref) || strcmp(jstr(ref, "kind"), "Pod")) return NULL;
    char key[600];
    snprintf(key, sizeof key, "%s/%s", jstr(ref, "namespace"), jstr(ref, "name"));
    return k8s_cache_get(c, K8S_ROLE_POD, key);
}

static void add_service_by_name(im_labels_builder_t *lb, const k8s_cache_t *c, const char *ns,
                                const char *name)
{
    char key[600];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    json_t *svc = k8s_cache_get(c, K8S_ROLE_SERVICE, key);
    if (svc) service_labels(lb, svc);
}

/* The container labels of the port numbered pn of the endpoint's pod: in each
 * container the first port with that number (Prometheus breaks out of the port
 * loop only, so a later container's match overwrites an earlier one's). proto:
 * the protocol label to use (the endpoints role takes the endpoint port's), NULL
 * for the container port's own (endpointslice). */
static void pod_port_labels(im_labels_builder_t *lb, const json_t *pod, json_int_t pn,
                            const char *proto)
{
    json_t *ct;
    size_t ci;
    json_array_foreach(jarr(jget(pod, "spec"), "containers"), ci, ct)
    {
        json_t *pt;
        size_t pi;
        json_array_foreach(jarr(ct, "ports"), pi, pt)
        {
            if ((uint32_t)jint(pt, "containerPort") == (uint32_t)pn) {
                container_port_labels(lb, ct, pt, pn, proto ? proto : jstr(pt, "protocol"));
                break;
            }
        }
    }
}

/* ---- endpoints ---- */

static void ep_add(const k8s_cache_t *c, bool attach, const json_t *addr, const json_t *port,
                   const char *ready, const im_labels_t *group, seen_t *seen,
                   im_labels_builder_t *lb, k8s_group_t *g)
{
    char a[600];
    json_int_t pn = jint(port, "port");
    join_host_port(jstr(addr, "ip"), pn, a, sizeof a);
    im_lb_reset(lb);
    put(lb, "__address__", a);
    put(lb, P "endpoint_port_name", jstr(port, "name"));
    put(lb, P "endpoint_port_protocol", jstr(port, "protocol"));
    put(lb, P "endpoint_ready", ready);
    json_t *ref = jget(addr, "targetRef");
    if (json_is_object(ref)) {
        put(lb, P "endpoint_address_target_kind", jstr(ref, "kind"));
        put(lb, P "endpoint_address_target_name", jstr(ref, "name"));
    }
    if (jhas_str(addr, "nodeName")) put(lb, P "endpoint_node_name", jstr(addr, "nodeName"));
    put(lb, P "endpoint_hostname", jstr(addr, "hostname"));
    if (attach) node_meta(lb, c, jget(addr, "nodeName"));
    const json_t *pod = resolve_pod(c, ref);
    if (pod) {
        seen_add(seen, pod, pn, true);
        pod_labels(lb, pod);
        pod_port_labels(lb, pod, pn, jstr(port, "protocol"));
    }
    merge_under(lb, group);
    add_target(g, lb);
}

/* The start of an endpoints or endpointslice group: lb initialised with the
 * namespace and the object's name under name_label; returns its metadata. */
static json_t *eps_begin(im_labels_builder_t *lb, const json_t *obj, const char *name_label)
{
    json_t *md = meta_of(obj);
    im_lb_init(lb);
    put(lb, P "namespace", jstr(md, "namespace"));
    put(lb, name_label, jstr(md, "name"));
    return md;
}

/* Its end: the targets of the pods' ports no endpoint named, then cleanup. */
static void eps_end(seen_t *seen, const im_labels_t *group, im_labels_builder_t *lb, k8s_group_t *g)
{
    seen_flush(seen, group, lb, g);
    im_labels_unref(group);
    im_lb_free(lb);
}

static void build_endpoints(const k8s_cache_t *c, bool attach, const json_t *eps, k8s_group_t *g)
{
    im_labels_builder_t lb;
    json_t *md = eps_begin(&lb, eps, P "endpoints_name");
    add_service_by_name(&lb, c, jstr(md, "namespace"), jstr(md, "name"));
    put_map(&lb, P "endpoints_", "label", jget(md, "labels"));
    const im_labels_t *group = im_lb_build(&lb);
    seen_t seen = {0};
    json_t *ss;
    size_t si;
    json_array_foreach(jarr(eps, "subsets"), si, ss)
    {
        json_t *port;
        size_t pi;
        json_array_foreach(jarr(ss, "ports"), pi, port)
        {
            json_t *addr;
            size_t ai;
            json_array_foreach(jarr(ss, "addresses"), ai, addr)
                ep_add(c, attach, addr, port, "true", group, &seen, &lb, g);
            json_array_foreach(jarr(ss, "notReadyAddresses"), ai, addr)
                ep_add(c, attach, addr, port, "false", group, &seen, &lb, g);
        }
    }
    eps_end(&seen, group, &lb, g);
}

/* ---- endpointslice (discovery.k8s.io/v1) ---- */

static void put_bool(im_labels_builder_t *lb, const char *name, const json_t *v)
{
    if (json_is_boolean(v)) put(lb, name, json_is_true(v) ? "true" : "false");
}

static void eps_add(const k8s_cache_t *c, bool attach, const char *addr, const json_t *ep,
                    const json_t *port, const im_labels_t *group, seen_t *seen,
                    im_labels_builder_t *lb, k8s_group_t *g)
{
    json_t *pnum = jget(port, "port");
    bool has_port = json_is_integer(pnum);
    json_int_t pn = json_integer_value(pnum);
    char a[600];
    if (has_port)
        join_host_port(addr, pn, a, sizeof a);
    else
        snprintf(a, sizeof a, "%s", addr);
    im_lb_reset(lb);
    put(lb, "__address__", a);
    if (jhas_str(port, "name")) put(lb, P "endpointslice_port_name", jstr(port, "name"));
    if (jhas_str(port, "protocol"))
        put(lb, P "endpointslice_port_protocol", jstr(port, "protocol"));
    if (has_port) put_u(lb, P "endpointslice_port", pn);
    if (jhas_str(port, "appProtocol"))
        put(lb, P "endpointslice_port_app_protocol", jstr(port, "appProtocol"));
    json_t *conds = jget(ep, "conditions");
    put_bool(lb, P "endpointslice_endpoint_conditions_ready", jget(conds, "ready"));
    put_bool(lb, P "endpointslice_endpoint_conditions_serving", jget(conds, "serving"));
    put_bool(lb, P "endpointslice_endpoint_conditions_terminating", jget(conds, "terminating"));
    if (jhas_str(ep, "hostname"))
        put(lb, P "endpointslice_endpoint_hostname", jstr(ep, "hostname"));
    json_t *ref = jget(ep, "targetRef");
    if (json_is_object(ref)) {
        put(lb, P "endpointslice_address_target_kind", jstr(ref, "kind"));
        put(lb, P "endpointslice_address_target_name", jstr(ref, "name"));
    }
    json_t *topo = jget(ep, "deprecatedTopology");
    if (json_is_object(topo)) {
        const char *k;
        json_t *v;
        json_object_foreach(topo, k, v)
        {
            if (!json_is_string(v)) continue;
            char san[1024], n[1200];
            k8s_sanitize(k, san, sizeof san);
            snprintf(n, sizeof n, P "endpointslice_endpoint_topology_%s", san);
            put(lb, n, json_string_value(v));
            snprintf(n, sizeof n, P "endpointslice_endpoint_topology_present_%s", san);
            put(lb, n, "true");
        }
    }
    if (attach) node_meta(lb, c, jget(ep, "nodeName"));
    const json_t *pod = resolve_pod(c, ref);
    if (pod) {
        seen_add(seen, pod, pn, has_port);
        pod_labels(lb, pod);
        if (has_port) pod_port_labels(lb, pod, pn, NULL);
    }
    merge_under(lb, group);
    add_target(g, lb);
}

static void build_endpointslice(const k8s_cache_t *c, bool attach, const json_t *es, k8s_group_t *g)
{
    im_labels_builder_t lb;
    json_t *md = eps_begin(&lb, es, P "endpointslice_name");
    put(&lb, P "endpointslice_address_type", jstr(es, "addressType"));
    json_t *svcname = jget(jget(md, "labels"), "kubernetes.io/service-name");
    if (json_is_string(svcname))
        add_service_by_name(&lb, c, jstr(md, "namespace"), json_string_value(svcname));
    const im_labels_t *group = im_lb_build(&lb);
    seen_t seen = {0};
    json_t *port;
    size_t pi;
    json_array_foreach(jarr(es, "ports"), pi, port)
    {
        json_t *ep;
        size_t ei;
        json_array_foreach(jarr(es, "endpoints"), ei, ep)
        {
            json_t *a;
            size_t ai;
            json_array_foreach(jarr(ep, "addresses"), ai, a)
            {
                if (json_is_string(a))
                    eps_add(c, attach, json_string_value(a), ep, port, group, &seen, &lb, g);
            }
        }
    }
    eps_end(&seen, group, &lb, g);
}

/* ---- node ---- */

static void build_node(const json_t *node, k8s_group_t *g)
{
    json_t *md = meta_of(node), *st = jget(node, "status");
    im_labels_builder_t lb;
    im_lb_init(&lb);
    put(&lb, P "node_name", jstr(md, "name"));
    put(&lb, P "node_provider_id", jstr(jget(node, "spec"), "providerID"));
    put_meta_maps(&lb, P "node_", node, true);
    const im_labels_t *group = im_lb_build(&lb);
    im_lb_reset(&lb);
    static const char *const order[] = {"InternalIP",  "InternalDNS",  "ExternalIP",
                                        "ExternalDNS", "LegacyHostIP", "Hostname"};
    json_t *addrs = jarr(st, "addresses"), *a;
    const char *best = NULL;
    for (size_t o = 0; o < IM_ARRAY_LEN(order) && !best; o++) {
        size_t i;
        json_array_foreach(addrs, i, a)
        {
            if (!strcmp(jstr(a, "type"), order[o])) {
                best = jstr(a, "address");
                break;
            }
        }
    }
    if (best) {
        char addr[600];
        join_host_port(best, jint(jget(jget(st, "daemonEndpoints"), "kubeletEndpoint"), "Port"),
                       addr, sizeof addr);
        put(&lb, "__address__", addr);
        put(&lb, "instance", jstr(md, "name"));
        size_t i;
        json_array_foreach(addrs, i, a)
        {
            char san[512], n[600];
            k8s_sanitize(jstr(a, "type"), san, sizeof san);
            snprintf(n, sizeof n, P "node_address_%s", san);
            if (!im_lb_get(&lb, n)) put(&lb, n, jstr(a, "address"));
        }
        merge_under(&lb, group);
        add_target(g, &lb);
    }
    im_labels_unref(group);
    im_lb_free(&lb);
}

/* ---- ingress (networking.k8s.io/v1) ---- */

static bool host_matches(const char *pattern, const char *host)
{
    if (!strcmp(pattern, host)) return true;
    if (strncmp(pattern, "*.", 2) != 0 && strcmp(pattern, "*") != 0) return false;
    /* same number of dot-separated parts, equal after the first */
    const char *pd = strchr(pattern, '.'), *hd = strchr(host, '.');
    if (!pd) return !hd && !strcmp(pattern, "*");
    if (!hd) return false;
    return !strcmp(pd, hd);
}

static void build_ingress(const json_t *ing, k8s_group_t *g)
{
    json_t *md = meta_of(ing), *spec = jget(ing, "spec");
    im_labels_builder_t lb;
    im_lb_init(&lb);
    put(&lb, P "namespace", jstr(md, "namespace"));
    put(&lb, P "ingress_name", jstr(md, "name"));
    put_meta_maps(&lb, P "ingress_", ing, true);
    if (jhas_str(spec, "ingressClassName"))
        put(&lb, P "ingress_class_name", jstr(spec, "ingressClassName"));
    const im_labels_t *group = im_lb_build(&lb);
    json_t *rule;
    size_t ri;
    json_array_foreach(jarr(spec, "rules"), ri, rule)
    {
        const char *host = jstr(rule, "host");
        const char *scheme = "http";
        json_t *tls;
        size_t ti;
        json_array_foreach(jarr(spec, "tls"), ti, tls)
        {
            json_t *h;
            size_t hi;
            json_array_foreach(jarr(tls, "hosts"), hi, h)
            {
                if (json_is_string(h) && host_matches(json_string_value(h), host)) scheme = "https";
            }
        }
        json_t *http = jget(rule, "http");
        json_t *paths = jarr(http, "paths");
        size_t np = json_is_object(http) ? json_array_size(paths) : 0;
        for (size_t pi = 0; pi < (np ? np : 1); pi++) {
            const char *path = np ? jstr(json_array_get(paths, pi), "path") : "";
            im_lb_reset(&lb);
            put(&lb, "__address__", host);
            put(&lb, P "ingress_scheme", scheme);
            put(&lb, P "ingress_host", host);
            put(&lb, P "ingress_path", *path ? path : "/");
            merge_under(&lb, group);
            add_target(g, &lb);
        }
    }
    im_labels_unref(group);
    im_lb_free(&lb);
}

void k8s_source(k8s_role_t r, const json_t *obj, char *buf, size_t cap)
{
    static const char *const pre[K8S_NROLES] = {"pod",           "svc",  "endpoints",
                                                "endpointslice", "node", "ingress"};
    json_t *md = meta_of(obj);
    if (r == K8S_ROLE_NODE)
        snprintf(buf, cap, "node/%s", jstr(md, "name"));
    else
        snprintf(buf, cap, "%s/%s/%s", pre[r], jstr(md, "namespace"), jstr(md, "name"));
}

void k8s_build(k8s_role_t r, const k8s_cache_t *c, bool attach_node, const json_t *obj,
               k8s_group_t *out)
{
    memset(out, 0, sizeof *out);
    char src[1200];
    k8s_source(r, obj, src, sizeof src);
    out->source = im_strdup(src);
    if (!json_is_object(obj)) return;
    switch (r) {
    case K8S_ROLE_POD: build_pod(c, attach_node, obj, out); break;
    case K8S_ROLE_SERVICE: build_service(obj, out); break;
    case K8S_ROLE_ENDPOINTS: build_endpoints(c, attach_node, obj, out); break;
    case K8S_ROLE_ENDPOINTSLICE: build_endpointslice(c, attach_node, obj, out); break;
    case K8S_ROLE_NODE: build_node(obj, out); break;
    case K8S_ROLE_INGRESS: build_ingress(obj, out); break;
    default: break;
    }
}
