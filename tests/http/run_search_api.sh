#!/usr/bin/env bash
# The search API of Prometheus 3 (--enable-feature=search-api):
# /api/v1/search/{metric_names,label_names,label_values} over a scraped
# exporter: NDJSON batches then the trailer, prefix/substring/subsequence and
# Jaro-Winkler matching, case_sensitive, sort_by, limit and has_more (capped by
# --web.search.max-limit), match[] scoping, include_metadata, batch_size, the
# feature in /api/v1/features, 400s naming the bad parameter, and 503 when off.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
eport=$(free_port)
cat >"$IM_TMP/exp.py" <<'PY'
import http.server, sys
body = b"""# HELP vllm:num_requests_running Requests running.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model="llama-3-8b"} 3
vllm:num_requests_running{model="mistral-7b"} 1
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model="llama-3-8b"} 0
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 5
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",modelName="H100"} 80
"""
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
bg $PY "$IM_TMP/exp.py" "$eport"
wait_http "http://127.0.0.1:$eport/metrics" 30
cat >"$IM_TMP/cfg.yml" <<YML
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: e
    static_configs: [{targets: ['127.0.0.1:$eport']}]
YML
start() {
  port=$(free_port)
  bg "$IM_BINARY" run "$@" --config.file="$IM_TMP/cfg.yml" --storage.memory-only \
    --web.listen-address="127.0.0.1:$port" >>"$IM_TMP/im.log" 2>&1
  IPID=$!
  wait_http "http://127.0.0.1:$port/-/ready" 30
}
# s ENDPOINT ARGS...: the answer as "status|names...|has_more|lines" (checks the NDJSON shape)
s() {
  local ep=$1; shift
  local args=()
  for a in "$@"; do args+=(--data-urlencode "$a"); done
  curl -sS -o "$IM_TMP/out" -w '%{http_code} %{content_type}' -G "http://127.0.0.1:$port/api/v1/search/$ep" "${args[@]}" >"$IM_TMP/code"
  $PY - "$IM_TMP/out" "$IM_TMP/code" <<'PY'
import json, sys
code, ctype = open(sys.argv[2]).read().split(" ", 1)
raw = open(sys.argv[1]).read()
if code != "200":
    e = json.loads(raw)
    assert e["status"] == "error", raw
    print("%s|%s|%s" % (code, e["errorType"], e["error"]))
    sys.exit(0)
assert ctype.startswith("application/x-ndjson"), ctype
lines = raw.split("\n")
assert lines[-1] == "", "answer must end with a newline"
objs = [json.loads(l) for l in lines[:-1]]
trailer = objs[-1]
assert trailer["status"] == "success" and set(trailer) == {"status", "has_more"}, trailer
batches = objs[:-1]
assert batches and all(set(b) == {"results"} for b in batches), objs
out = []
for b in batches:
    for r in b["results"]:
        k = "value" if "value" in r else "name"
        out.append(r[k] + ("@%.3f" % r["score"] if "score" in r else "") +
                   ("[%s]" % r.get("type", "") if "type" in r or "help" in r else ""))
print("200|%s|%s|%d" % (",".join(out), str(trailer["has_more"]).lower(), len(batches)))
PY
}
eq() { [ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"; }

# ---- off by default ----
start
r=$(s metric_names); eq "$r" "503|unavailable|search API disabled" "feature off"
curl -fsS "http://127.0.0.1:$port/api/v1/features" | grep -q '"search":false' || fail "features: search not false when off"
kill "$IPID"; wait "$IPID" 2>/dev/null || true

start --enable-feature=search-api --web.search.max-limit=3
curl -fsS "http://127.0.0.1:$port/api/v1/features" | grep -q '"search":true' || fail "features: search not listed when on"
i=0
until [ "$(s metric_names 'search[]=DCGM' | cut -d'|' -f2)" = "DCGM_FI_DEV_GPU_UTIL" ]; do
  i=$((i + 1)); [ $i -lt 300 ] || fail "exporter series never searchable"; sleep 0.1
done
# all names (alpha), limit capped at 3 by --web.search.max-limit -> has_more
eq "$(s metric_names 'match[]={job="e"}')" \
  "200|DCGM_FI_DEV_GPU_UTIL,node_cpu_seconds_total,scrape_duration_seconds|true|1" "max-limit caps"
eq "$(s metric_names 'match[]={job="e"}' limit=2)" "200|DCGM_FI_DEV_GPU_UTIL,node_cpu_seconds_total|true|1" "limit 2"
# prefix and subsequence (default alg); case sensitive by default
eq "$(s metric_names 'search[]=vllm:num')" "200|vllm:num_requests_running,vllm:num_requests_waiting|false|1" "prefix"
eq "$(s metric_names 'search[]=vnrw')" "200|vllm:num_requests_waiting|false|1" "subsequence"
eq "$(s metric_names 'search[]=dcgm')" "200||false|1" "case sensitive: no match, one empty batch"
eq "$(s metric_names 'search[]=dcgm' case_sensitive=false)" "200|DCGM_FI_DEV_GPU_UTIL|false|1" "case insensitive"
# search[] terms are ORed; sort_by=score puts the prefix match (1.0) first
eq "$(s metric_names 'search[]=vnrr' 'search[]=node' sort_by=score include_score=true)" \
  "200|node_cpu_seconds_total@1.000,vllm:num_requests_running@0.110|false|1" "OR + score"
# a high threshold drops the loose subsequence match, keeps the prefix match
eq "$(s metric_names 'search[]=vnrr' 'search[]=node' fuzz_threshold=60)" "200|node_cpu_seconds_total|false|1" "threshold"
# jarowinkler: substring scores 0.9, a typo passes only with a threshold
eq "$(s metric_names 'search[]=requests_running' fuzz_alg=jarowinkler include_score=true)" \
  "200|vllm:num_requests_running@0.900|false|1" "jw substring"
eq "$(s label_values label=model 'search[]=mistrl-7b' fuzz_alg=jarowinkler)" "200||false|1" "jw no threshold"
eq "$(s label_values label=model 'search[]=mistrl-7b' fuzz_alg=jarowinkler fuzz_threshold=90)" \
  "200|mistral-7b|false|1" "jw typo"
# label names, scoped by match[]; sort_dir
eq "$(s label_names 'match[]=node_cpu_seconds_total' limit=3)" "200|__name__,cpu,instance|true|1" "label names scoped"
eq "$(s label_names 'match[]=DCGM_FI_DEV_GPU_UTIL' 'search[]=model')" "200|modelName|false|1" "label names search"
eq "$(s label_values label=model sort_by=alpha sort_dir=dsc)" "200|mistral-7b,llama-3-8b|false|1" "values dsc"
eq "$(s label_values label=model 'match[]=vllm:num_requests_waiting')" "200|llama-3-8b|false|1" "values scoped"
# batches of batch_size, include_metadata from the scrape
eq "$(s label_values label=model batch_size=1)" "200|llama-3-8b,mistral-7b|false|2" "batch_size"
eq "$(s metric_names 'search[]=vllm:num_requests_r' include_metadata=true)" \
  "200|vllm:num_requests_running[gauge]|false|1" "include_metadata"
# a time range before any data: nothing
eq "$(s metric_names start=1000 end=2000)" "200||false|1" "start/end"

# ---- bad parameters: 400 bad_data naming the parameter ----
bad() { local want=$1; shift; local r; r=$(s "$@"); eq "$r" "400|bad_data|$want" "bad $*"; }
bad 'missing required parameter "label"' label_values
bad 'invalid fuzz_threshold "101": must be 0-100' metric_names fuzz_threshold=101
bad 'unsupported fuzz_alg "levenshtein": must be one of [subsequence jarowinkler]' metric_names fuzz_alg=levenshtein
bad 'invalid case_sensitive "yes": must be boolean' metric_names case_sensitive=yes
bad 'invalid sort_by "frequency": must be "alpha" or "score"' label_names sort_by=frequency
bad 'sort_dir is only valid when sort_by is set' label_names sort_dir=asc
bad 'sort_dir is not supported for sort_by=score' metric_names sort_by=score sort_dir=dsc 'search[]=a'
bad 'sort_by=score requires search[] to be set' metric_names sort_by=score
bad 'invalid limit "-1": must be a non-negative integer' metric_names limit=-1
bad 'invalid batch_size "x": must be a non-negative integer' metric_names batch_size=x
r=$(s metric_names 'match[]={')
case "$r" in "400|bad_data|"*) ;; *) fail "bad match[]: $r" ;; esac
r=$(s metric_names start=yesterday)
case "$r" in "400|bad_data|"*"start"*) ;; *) fail "bad start: $r" ;; esac
# POST works as GET
curl -fsS "http://127.0.0.1:$port/api/v1/search/label_values" --data-urlencode label=model \
  --data-urlencode 'search[]=llama' | head -1 | grep -qx '{"results":\[{"value":"llama-3-8b"}\]}' || fail "POST"
echo "search API: matching, ordering, limits, scoping and errors as Prometheus 3"
