/* test_k8s_selector.c — label and field selector syntax (src/config/k8s_selector.c)
 * against the answers of Prometheus 2.42 with Kubernetes discovery
 * (../shared/tools/prometheus-2.42.0-k8s): each row is a selector put in a
 * kubernetes_sd_configs selectors entry and the load error that Prometheus
 * printed for it (without its "parsing YAML file F: " prefix), "" where it
 * accepted the selector. Then the same through the configuration loader, with
 * the position, for kubernetes_sd_configs and kubernetes_monitors. */
#include "util/base.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <cmocka.h>

#include "config/config.h"
#include "config/k8s_selector.h"

static const struct {
    bool label;
    const char *sel, *want;
} cases[] = {
    {true, "a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"},
    {true, "x in (a", "unable to parse requirement: found '', expected: ',' or ')'"},
    {true, "x in a", "unable to parse requirement: found 'a' expected: '('"},
    {true, "x=", ""},
    {true, "x==y", ""},
    {true, "!x", ""},
    {true, "!x=y", "found '=', expected: ',' or 'end of string'"},
    {true, "x,", "found '', expected: identifier after ','"},
    {true, ",x", "found ',', expected: !, identifier, or 'end of string'"},
    {true, "x=a b", "found 'b', expected: ',' or 'end of string'"},
    {true, "a$b",
     "unable to parse requirement: <nil>: Invalid value: \"a$b\": name part must consist of "
     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
     "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
    {true, "x=a$",
     "unable to parse requirement: values[0][x]: Invalid value: \"a$\": a valid label must be an "
     "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
     "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
     "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
    {true, "x gt 5",
     "unable to parse requirement: found 'gt', expected: in, notin, =, ==, !=, gt, lt"},
    {true, "x>5", ""},
    {true, "x>a",
     "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the "
     "value must be an integer"},
    {true, "x in (a,b)", ""},
    {true, "x notin ()", ""},
    {true, "=a", "found '=', expected: !, identifier, or 'end of string'"},
    {true, "x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"},
    {true, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "unable to parse requirement: <nil>: Invalid value: "
     "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": name part must be no "
     "more than 63 characters"},
    {true, "a/b/c",
     "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name must consist "
     "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
     "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
     "(e.g. 'example.com/MyName')"},
    {true, "x=(a)", "unable to parse requirement: found '(', expected: identifier"},
    {true, "x in (,a)", ""},
    {true, "a=b=c", "found '=', expected: ',' or 'end of string'"},
    {true, "x<",
     "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, the "
     "value must be an integer"},
    {true, "!", "unable to parse requirement: found '', expected: identifier"},
    {true, "x!", "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"},
    {true, "!=a", "found '!=', expected: !, identifier, or 'end of string'"},
    {true, "Example.com/a=b",
     "unable to parse requirement: <nil>: Invalid value: \"Example.com/a\": prefix part a "
     "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
     "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
     "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
    {true, "-a",
     "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of "
     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
     "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
    {true, "x=-a",
     "unable to parse requirement: values[0][x]: Invalid value: \"-a\": a valid label must be an "
     "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
     "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
     "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
    {true, "x=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
     "unable to parse requirement: values[0][x]: Invalid value: "
     "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": must be no more than "
     "63 characters"},
    {true, "x in (a$)",
     "unable to parse requirement: values[0][x]: Invalid value: \"a$\": a valid label must be an "
     "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
     "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
     "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
    {true, "x>1,y", ""},
    {true, "/a",
     "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part must be non-empty"},
    {true, "a/",
     "unable to parse requirement: <nil>: Invalid value: \"a/\": name part must be non-empty; name "
     "part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
     "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
     "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
    {true, "in", ""},
    {true, "x in (in)", ""},
    {true, "x=in", ""},
    {true, "x notin", "unable to parse requirement: found '' expected: '('"},
    {true, "x,,y", "found ',', expected: identifier after ','"},
    {true, "x in (a,)", ""},
    {true, "x gt",
     "unable to parse requirement: found 'gt', expected: in, notin, =, ==, !=, gt, lt"},
    {true, "x>a$",
     "unable to parse requirement: [values[0]: Invalid value: \"a$\": for 'Gt', 'Lt' operators, "
     "the value must be an integer, values[0][x]: Invalid value: \"a$\": a valid label must be an "
     "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
     "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
     "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]"},
    {true, "x in (b$,a,c$)",
     "unable to parse requirement: [values[1][x]: Invalid value: \"b$\": a valid label must be an "
     "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
     "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
     "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), values[2][x]: Invalid value: "
     "\"c$\": a valid label must be an empty string or consist of alphanumeric characters, '-', "
     "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
     "'my_value',  or '12345', regex used for validation is "
     "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]"},
    {true, "x=a\"b",
     "unable to parse requirement: values[0][x]: Invalid value: \"a\\\"b\": a valid label must be "
     "an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
     "end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
     "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
    {true, "app.kubernetes.io/name in (vllm,dcgm-exporter),tier!=dev,!canary", ""},
    {true, "x>99999999999999999999",
     "unable to parse requirement: values[0]: Invalid value: \"99999999999999999999\": for 'Gt', "
     "'Lt' operators, the value must be an integer"},
    {true, "x<-5",
     "unable to parse requirement: values[0][x]: Invalid value: \"-5\": a valid label must be an "
     "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
     "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
     "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
    {true, "x in (a,,b)", ""},
    {true, "x in ()", ""},
    {true, "a_b.c-d/e",
     "unable to parse requirement: <nil>: Invalid value: \"a_b.c-d/e\": prefix part a lowercase "
     "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
     "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
     "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
    {true, "x  =  y , y", ""},
    {true, "x in (a),", "found '', expected: identifier after ','"},
    {true, "x=a,!", "unable to parse requirement: found '', expected: identifier"},
    {true, "k8s.io/a=b", ""},
    {true, "ab.-c/x",
     "unable to parse requirement: <nil>: Invalid value: \"ab.-c/x\": prefix part a lowercase RFC "
     "1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
     "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
     "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
    {false, "a", "invalid selector: 'a'; can't understand 'a'"},
    {false, "b,a", "invalid selector: 'b,a'; can't understand 'a'"},
    {false, "a=b", ""},
    {false, "a==b", ""},
    {false, "a!=b", ""},
    {false, "a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"},
    {false, "a=b=c", "invalid field selector: unescaped character in value: 61"},
    {false, "a=b\\x", "invalid field selector: invalid escape sequence: \\x"},
    {false, "a=b\\", "invalid field selector: invalid escape sequence: \\"},
    {false, "a=b\\,c", ""},
    {false, "a=b\\=c", ""},
    {false, "=b", ""},
    {false, "a=", ""},
    {false, ",", ""},
    {false, "a=b,,c=d", ""},
    {false, " a = b ", ""},
    {false, "z,y=1", "invalid selector: 'z,y=1'; can't understand 'z'"},
    {false, "a=b\\\\", ""},
    {false, "x!=a=b", "invalid field selector: unescaped character in value: 61"},
    {false, "metadata.name=vllm-0,status.phase!=Failed", ""},
    {false, "spec.nodeName==gpu-1", ""},
};

static void test_against_prometheus(void **state)
{
    (void)state;
    size_t bad = 0;
    for (size_t i = 0; i < IM_ARRAY_LEN(cases); i++) {
        im_err_t err;
        im_err_clear(&err);
        im_rc rc = cases[i].label ? k8s_label_selector_check(cases[i].sel, &err)
                                  : k8s_field_selector_check(cases[i].sel, &err);
        const char *got = rc == IM_OK ? "" : err.msg;
        /* an error value holds IM_ERR_MSG_MAX - 1 bytes: longer texts are cut there */
        if (strncmp(got, cases[i].want, IM_ERR_MSG_MAX - 1) ||
            (strlen(cases[i].want) < IM_ERR_MSG_MAX - 1 && strcmp(got, cases[i].want))) {
            fprintf(stderr, "%s selector [%s]\n  got  %s\n  want %s\n",
                    cases[i].label ? "label" : "field", cases[i].sel, got, cases[i].want);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
    /* NULL is the empty selector */
    assert_int_equal(k8s_label_selector_check(NULL, NULL), IM_OK);
    assert_int_equal(k8s_field_selector_check(NULL, NULL), IM_OK);
}

static void expect_load_error(const char *yml, const char *needle)
{
    scrape_config_t *c = NULL;
    im_err_t err;
    im_err_clear(&err);
    im_rc rc = scrape_config_parse(yml, strlen(yml), "t.yml", &c, &err);
    char b[1200];
    if (rc == IM_OK) fail_msg("accepted:\n%s", yml);
    if (!strstr(im_err_format(&err, b, sizeof b), needle))
        fail_msg("message \"%s\" lacks \"%s\"", b, needle);
}

static void test_config_load(void **state)
{
    (void)state;
    expect_load_error(
        "scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n"
        "      - role: pod\n        api_server: http://127.0.0.1:1\n"
        "        selectors:\n          - role: pod\n            label: \"app in (a\"\n",
        "t.yml:7:13: unable to parse requirement: found '', expected: ',' or ')'");
    /* the field selector is checked first, as Prometheus does */
    expect_load_error("scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n"
                      "      - role: pod\n        api_server: http://127.0.0.1:1\n"
                      "        selectors:\n          - role: pod\n            label: \"a b\"\n"
                      "            field: spec.nodeName\n",
                      "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'");
    expect_load_error("kubernetes_monitors:\n  api_server: http://127.0.0.1:1\n"
                      "  selector: \"tier!=\"\n  service_monitors: true\n"
                      "  namespaces:\n    names: [a]\n  selector2: x\n",
                      "field selector2 not found");
    expect_load_error("kubernetes_monitors:\n  api_server: http://127.0.0.1:1\n"
                      "  selector: \"app.kubernetes.io/part-of=llm,=x\"\n",
                      "t.yml:3:13: selector: found '=', expected: identifier after ','");
    /* valid ones load */
    const char *ok = "scrape_configs:\n  - job_name: a\n    kubernetes_sd_configs:\n"
                     "      - role: endpoints\n        api_server: http://127.0.0.1:1\n"
                     "        selectors:\n          - role: service\n"
                     "            label: \"app in (vllm, dcgm-exporter),!canary\"\n"
                     "            field: metadata.name!=kubernetes\n";
    scrape_config_t *c = NULL;
    im_err_t err;
    im_err_clear(&err);
    assert_int_equal(scrape_config_parse(ok, strlen(ok), "t.yml", &c, &err), IM_OK);
    scrape_config_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_prometheus),
        cmocka_unit_test(test_config_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
