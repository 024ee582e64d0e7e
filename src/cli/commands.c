/* commands.c — the table of subcommands; one line per subcommand. */
#include "util/base.h"

#include "cli/cli.h"

const cli_command_t cli_commands[] = {
    {"demo", cli_demo, "the simulator and the daemon together: a live fleet being scraped"},
    {"run", cli_run, "run the daemon: scrape, store, answer PromQL (Prometheus HTTP API)"},
    {"check", cli_check, "check metrics|config|rules: validate inputs like promtool check"},
    {"test", cli_test, "test rules FILE...: run rule unit tests (promtool test rules format)"},
    {"tsdb", cli_tsdb, "tsdb analyze|dump|import: inspect, export and backfill the storage"},
    {"doctor", cli_doctor, "say why serving is slow, with the evidence (kv-saturation, ...)"},
    {"lint", cli_lint, "lint queries, rules and dashboards against the names the targets expose"},
    {"promql-parse", cli_promql_parse, "parse a PromQL expression: canonical form or the error"},
    {"promql-test", cli_promql_test, "run PromQL test scripts (Prometheus' promqltest language)"},
    {"promql-eval", cli_promql_eval,
     "internal: evaluate PromQL over an OpenMetrics file (tests, bench)"},
    {"cost", cli_cost, "GPU cost per team, model and token over a period (reserved, used, busy)"},
    {"export", cli_export, "export dashboard|rules: a Grafana dashboard and rules for your stack"},
    {"slo", cli_slo, "slo generate|check|status: SLO burn-rate rules, bucket checks, attainment"},
    {"top", cli_top, "a live terminal view of inference engines' /metrics (no storage)"},
    {"simulate", cli_simulate, "serve a simulated vLLM, dcgm-exporter and Kueue fleet"},
    {"version", cli_version, "print the version"},
    {"debug", cli_debug, "internal tools for peer tests (float formatting, durations)"},
    {NULL, NULL, NULL},
};
