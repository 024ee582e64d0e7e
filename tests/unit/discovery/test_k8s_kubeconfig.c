/* test_k8s_kubeconfig.c — kubeconfig_file reading (src/discovery/k8s_kubeconfig.c,
 * on config/yaml.h): the current context's cluster and user as kubectl writes
 * them, keys it does not use ignored (preferences, extensions, proxy-url, ...),
 * relative paths against the file's folder, inline *-data decoded; errors: no
 * current context, exec plugins, bad base64, YAML syntax with its position. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "discovery/k8s_int.h"
#include "util/mem.h"

static char g_dir[] = "/tmp/test_k8s_kubeconfig.XXXXXX";

static const char *write_file(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void clear(struct k8s_discoverer *d)
{
    k8s_conn_clear(d);
    memset(d, 0, sizeof *d);
}

static void test_reads_current_context(void **state)
{
    (void)state;
    const char *p = write_file("kc", "apiVersion: v1\n"
                                     "kind: Config\n"
                                     "preferences: {colors: true}\n"
                                     "current-context: prod\n"
                                     "contexts:\n"
                                     "- name: dev\n"
                                     "  context: {cluster: devc, user: devu}\n"
                                     "- name: prod\n"
                                     "  context:\n"
                                     "    cluster: gpu\n"
                                     "    user: sd\n"
                                     "    namespace: llm\n"
                                     "    extensions: [{name: x, extension: {a: 1}}]\n"
                                     "clusters:\n"
                                     "- name: devc\n"
                                     "  cluster: {server: https://dev:6443}\n"
                                     "- name: gpu\n"
                                     "  cluster:\n"
                                     "    server: https://k8s.example:6443/\n"
                                     "    certificate-authority-data: Q0EtUEVN\n"
                                     "    proxy-url: http://proxy:3128\n"
                                     "    tls-server-name: k8s\n"
                                     "    insecure-skip-tls-verify: false\n"
                                     "users:\n"
                                     "- name: sd\n"
                                     "  user:\n"
                                     "    tokenFile: tok\n"
                                     "    client-certificate: certs/c.pem\n"
                                     "    client-key: /abs/k.pem\n"
                                     "    as-user-extra: {}\n");
    struct k8s_discoverer d;
    memset(&d, 0, sizeof d);
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(k8s_kubeconfig_load(&d, p, &err), IM_OK);
    assert_string_equal(d.base, "https://k8s.example:6443");
    assert_int_equal(d.ca_blob.len, 6);
    assert_memory_equal(d.ca_blob.data, "CA-PEM", 6);
    char want[600];
    snprintf(want, sizeof want, "%s/tok", g_dir);
    assert_string_equal(d.token_file, want);
    snprintf(want, sizeof want, "%s/certs/c.pem", g_dir);
    assert_string_equal(d.cert_file, want);
    assert_string_equal(d.key_file, "/abs/k.pem");
    assert_false(d.insecure);
    clear(&d);
}

static void expect_error(const char *text, const char *needle)
{
    const char *p = write_file("bad", text);
    struct k8s_discoverer d;
    memset(&d, 0, sizeof d);
    im_err_t err;
    im_err_clear(&err);
    char b[1200];
    if (k8s_kubeconfig_load(&d, p, &err) == IM_OK) fail_msg("accepted:\n%s", text);
    if (!strstr(im_err_format(&err, b, sizeof b), needle))
        fail_msg("message \"%s\" lacks \"%s\"", b, needle);
    clear(&d);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("current-context: none\ncontexts: []\n",
                 "no current-context with a cluster server");
    expect_error("current-context: a\n"
                 "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
                 "clusters: [{name: c, cluster: {server: 'https://x'}}]\n"
                 "users: [{name: u, user: {exec: {command: aws}}}]\n",
                 "exec and auth-provider plugins are not supported");
    expect_error("current-context: a\n"
                 "contexts: [{name: a, context: {cluster: c}}]\n"
                 "clusters: [{name: c, cluster: {server: 'https://x', "
                 "certificate-authority-data: '***'}}]\n",
                 "bad certificate-authority-data");
    expect_error("current-context: a\n"
                 "contexts: [{name: a, context: {cluster: c}}]\n"
                 "clusters: [{name: c, cluster: {server: 'https://x', "
                 "insecure-skip-tls-verify: maybe}}]\n",
                 "bad:3:");
    expect_error("current-context: [a\n", "bad:");
    struct k8s_discoverer d;
    memset(&d, 0, sizeof d);
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(k8s_kubeconfig_load(&d, "/nonexistent/kubeconfig", &err), IM_EIO);
    assert_non_null(strstr(err.msg, "cannot open kubeconfig_file /nonexistent/kubeconfig"));
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char p[600];
    snprintf(p, sizeof p, "%s/kc", g_dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/bad", g_dir);
    unlink(p);
    return rmdir(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_current_context),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
