/* incluster.c — the configuration `infermon run` uses inside a Kubernetes pod
 * when no --config.file is given: plain scrape_configs with kubernetes_sd_configs
 * (role pod) and relabel rules, written out as YAML so the loader reads it as any
 * file and `infermon check config --in-cluster` can print it. The rules are
 * explained line by line in docs/kubernetes.md; tests/unit/scrape/
 * test_incluster.c runs them over sample pods with our relabel engine. */
#include "util/base.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "discovery/generate.h"

bool discovery_incluster_detect(const char *sa_dir)
{
    const char *h = getenv("KUBERNETES_SERVICE_HOST");
    if (!h || !*h) return false;
    char p[4096];
    snprintf(p, sizeof p, "%s/token", sa_dir ? sa_dir : DISCOVERY_SA_DIR);
    return access(p, R_OK) == 0;
}

/* The rules shared by every job: finished or not yet started pods serve nothing. */
static const char phase_drop[] =
    "      # Pending (still pulling images), Succeeded and Failed pods serve nothing.\n"
    "      - source_labels: [__meta_kubernetes_pod_phase]\n"
    "        regex: Pending|Succeeded|Failed\n"
    "        action: drop\n";

/* namespace, pod and node from the pod that serves the target. */
static const char pod_labels[] = "      - source_labels: [__meta_kubernetes_namespace]\n"
                                 "        target_label: namespace\n"
                                 "      - source_labels: [__meta_kubernetes_pod_name]\n"
                                 "        target_label: pod\n"
                                 "      - source_labels: [__meta_kubernetes_pod_node_name]\n"
                                 "        target_label: node\n";

/* __address__ = the pod's IP with port `port_src` ("$1" or a fixed number): an
 * IPv4 address as is, an IPv6 one in brackets. */
static im_rc put_address(im_buf_t *b, const char *src_first, const char *port)
{
    const char *ip_grp = src_first ? "$2" : "$1";
    const char *pre = src_first ? "(\\d+);" : "";
    const char *src = src_first ? src_first : "";
    const char *sep = src_first ? ", " : "";
    return im_buf_printf(b,
                         "      - source_labels: [%s%s__meta_kubernetes_pod_ip]\n"
                         "        regex: '%s([^:]+)'\n"
                         "        replacement: '%s:%s'\n"
                         "        target_label: __address__\n"
                         "      - source_labels: [%s%s__meta_kubernetes_pod_ip]\n"
                         "        regex: '%s(.*:.*)'\n"
                         "        replacement: '[%s]:%s'\n"
                         "        target_label: __address__\n",
                         src, sep, pre, ip_grp, port, src, sep, pre, ip_grp, port);
}

im_rc discovery_incluster_config(const char *sa_dir, im_buf_t *out, im_err_t *err)
{
    const char *sa = sa_dir ? sa_dir : DISCOVERY_SA_DIR;
    im_buf_t *b = out;
    im_rc rc = IM_OK;
#define PUT(s)                                                                                     \
    do {                                                                                           \
        if ((rc = im_buf_puts(b, (s))) != IM_OK) goto fail;                                        \
    } while (0)
    PUT("# infermon's in-cluster default configuration: used by `infermon run` without\n"
        "# --config.file inside a Kubernetes pod. Copy it into a file to change it.\n"
        "global:\n"
        "  scrape_interval: 15s\n"
        "  scrape_timeout: 10s\n"
        "  evaluation_interval: 15s\n"
        "scrape_configs:\n");

    /* 1. The annotation convention. */
    PUT("  # Pods annotated prometheus.io/scrape: \"true\"; prometheus.io/port, /path,\n"
        "  # /scheme and /param_<name> choose where and how.\n"
        "  - job_name: kubernetes-pods\n"
        "    kubernetes_sd_configs:\n"
        "      - role: pod\n"
        "    relabel_configs:\n"
        "      - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_scrape]\n"
        "        regex: 'true'\n"
        "        action: keep\n"
        "      # dcgm-exporter and Kueue have jobs of their own below.\n"
        "      - source_labels: [__meta_kubernetes_pod_label_app_kubernetes_io_name, "
        "__meta_kubernetes_pod_label_app]\n"
        "        regex: 'dcgm-exporter;.*|.*;nvidia-dcgm-exporter'\n"
        "        action: drop\n"
        "      - source_labels: [__meta_kubernetes_pod_label_app_kubernetes_io_name, "
        "__meta_kubernetes_pod_label_control_plane]\n"
        "        regex: 'kueue;controller-manager'\n"
        "        action: drop\n");
    PUT(phase_drop);
    PUT("      - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_scheme]\n"
        "        regex: '(https?)'\n"
        "        target_label: __scheme__\n"
        "      - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_path]\n"
        "        regex: '(.+)'\n"
        "        target_label: __metrics_path__\n"
        "      # prometheus.io/port: every target of the pod becomes <pod IP>:<port> (and\n"
        "      # they collapse into one); without it, each declared container port is a\n"
        "      # target of its own.\n");
    if ((rc = put_address(b, "__meta_kubernetes_pod_annotation_prometheus_io_port", "$1")))
        goto fail;
    PUT("      - action: labelmap\n"
        "        regex: '__meta_kubernetes_pod_annotation_prometheus_io_param_(.+)'\n"
        "        replacement: '__param_$1'\n");
    PUT(pod_labels);
    PUT("      # container: when the target is one container's declared port (no\n"
        "      # prometheus.io/port annotation).\n"
        "      - source_labels: [__meta_kubernetes_pod_annotation_prometheus_io_port, "
        "__meta_kubernetes_pod_container_name]\n"
        "        regex: ';(.+)'\n"
        "        target_label: container\n");

    /* 2. dcgm-exporter. */
    PUT("  # dcgm-exporter (Helm chart: app.kubernetes.io/name=dcgm-exporter; GPU operator:\n"
        "  # app=nvidia-dcgm-exporter) on port 9400. Only node is added: the exporter\n"
        "  # labels each GPU with the namespace, pod and container using it.\n"
        "  - job_name: dcgm-exporter\n"
        "    kubernetes_sd_configs:\n"
        "      - role: pod\n"
        "    relabel_configs:\n"
        "      - source_labels: [__meta_kubernetes_pod_label_app_kubernetes_io_name, "
        "__meta_kubernetes_pod_label_app]\n"
        "        regex: 'dcgm-exporter;.*|.*;nvidia-dcgm-exporter'\n"
        "        action: keep\n");
    PUT(phase_drop);
    PUT("      # The declared port 9400, or a container that declares none.\n"
        "      - source_labels: [__meta_kubernetes_pod_container_port_number]\n"
        "        regex: '9400|'\n"
        "        action: keep\n");
    if ((rc = put_address(b, NULL, "9400"))) goto fail;
    PUT("      - source_labels: [__meta_kubernetes_pod_node_name]\n"
        "        target_label: node\n");

    /* 3. Kueue. */
    PUT("  # Kueue's controller-manager (app.kubernetes.io/name=kueue,\n"
        "  # control-plane=controller-manager): https on 8443 with a self-signed\n"
        "  # certificate, authorised by this pod's service-account token (the\n"
        "  # ClusterRole needs nonResourceURLs /metrics get).\n"
        "  - job_name: kueue\n"
        "    scheme: https\n");
    if ((rc = im_buf_printf(b,
                            "    authorization:\n"
                            "      credentials_file: %s/token\n"
                            "    tls_config:\n"
                            "      insecure_skip_verify: true\n",
                            sa)))
        goto fail;
    PUT("    kubernetes_sd_configs:\n"
        "      - role: pod\n"
        "    relabel_configs:\n"
        "      - source_labels: [__meta_kubernetes_pod_label_app_kubernetes_io_name, "
        "__meta_kubernetes_pod_label_control_plane]\n"
        "        regex: 'kueue;controller-manager'\n"
        "        action: keep\n");
    PUT(phase_drop);
    PUT("      - source_labels: [__meta_kubernetes_pod_container_port_name, "
        "__meta_kubernetes_pod_container_port_number]\n"
        "        regex: '(metrics|https);8443'\n"
        "        action: keep\n");
    PUT(pod_labels);
    PUT("      - source_labels: [__meta_kubernetes_pod_container_name]\n"
        "        target_label: container\n");
#undef PUT
    return IM_OK;
fail:
    return im_err_set(err, rc, "in-cluster configuration: %s", im_rc_str(rc));
}
