#!/usr/bin/env bash
# The doctor's top finding on top's status line (issue 19): the simulator runs
# kv-pressure (KV cache full, preemptions, a queue; --speed 20), and top runs
# the doctor over the samples it fetched itself (its in-memory store, a window
# no longer than the data it holds). `top --once --output json --collect 20s`
# must give a "doctor" object whose worst finding is kv-saturation (critical,
# with its evidence), within top's window, in a few milliseconds; with
# --doctor-interval 0 the object is null. On the terminal (tmux) the status line
# names the finding; against a healthy fleet it says there is nothing to report
# above info.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v tmux >/dev/null || fail "tmux is required"
sport=$(free_port)
bg "$IM_BINARY" simulate --listen "127.0.0.1:$sport" --pods 3 --scenario kv-pressure --speed 20 \
  >"$IM_TMP/sim.log" 2>&1
wait_http "http://127.0.0.1:$sport/targets" 30 || fail "simulator did not start"
S=127.0.0.1:$sport
pods="$S/pods/0/metrics $S/pods/1/metrics $S/pods/2/metrics $S/nodes/0/metrics"
# the KV cache fills within a few simulated minutes: poll with a deadline (4 tries)
for i in 1 2 3 4; do
  echo "try $i"
  "$IM_BINARY" top --once --output json --interval 1s --short-window 4s --long-window 20s \
    --collect 20s $pods >"$IM_TMP/top.json" 2>"$IM_TMP/top.err" || { cat "$IM_TMP/top.err"; fail "top --once"; }
  grep -q '"finding":{"cause":"kv-saturation"' "$IM_TMP/top.json" && break
done
$PY - "$IM_TMP/top.json" <<'PY' || fail "the doctor in top --once --output json"
import json, sys
top = json.load(open(sys.argv[1]))
d = top["doctor"]
def want(cond, what):
    if not cond:
        print("FAIL", what); print(json.dumps(d)[:3000]); sys.exit(1)
    print("ok  ", what)
want(d is not None and d["ran"] and d["error"] is None, "the doctor ran without error")
want(d["window_s"] == top["windows"]["long_s"] == 20 and d["at_ms"] == top["time_ms"],
     "over top's long window, ending at top's last fetch")
f = d["finding"]
want(f is not None and f["cause"] == "kv-saturation" and f["severity"] == "critical",
     "worst finding: critical kv-saturation (%s)" % (f and f["cause"]))
want(f == d["findings"][0], "the finding is the first of the ranked findings")
sev = {"critical": 2, "warning": 1, "info": 0}
want(all(sev[x["severity"]] <= sev[f["severity"]] for x in d["findings"]), "no finding ranks above it")
sig = {e["signal"] for e in f["evidence"]}
want({"kv_usage", "preemptions"} <= sig, "evidence: KV use and preemptions (%s)" % sorted(sig))
want(any(e["metric"] == "vllm:kv_cache_usage_perc" for e in f["evidence"]), "read through vLLM's names")
from datetime import datetime
def ms(s): return round(datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp() * 1000)
lo, hi = top["time_ms"] - 20000, top["time_ms"]
want(all(lo <= ms(e["start"]) < ms(e["end"]) == hi for e in f["evidence"]),
     "evidence over top's window: %s" % sorted({(e["start"], e["end"]) for e in f["evidence"]}))
targets = sorted(e["target"] for e in top["endpoints"] if e["state"] == "engine")
want(sorted(f["pods"]) == targets, "its pods are top's replicas (pod = the target): %s" % f["pods"])
want(0 < d["run_ms"] < 1000, "a run takes %.1f ms" % d["run_ms"])
PY
# off: "doctor": null
"$IM_BINARY" top --once --output json --interval 1s --short-window 2s --doctor-interval 0 $pods \
  >"$IM_TMP/off.json" 2>/dev/null || fail "top --once --doctor-interval 0"
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["doctor"] is None, d["doctor"]' "$IM_TMP/off.json" ||
  fail "--doctor-interval 0 still ran the doctor"
echo "ok   --doctor-interval 0: no doctor"

# the screen: the status line names the worst finding, refreshed every interval
T=(tmux -S "$IM_TMP/tmux.sock" -f /dev/null)
"${T[@]}" new-session -d -s top -x 200 -y 30 \
  "$IM_BINARY top --interval 1s --short-window 4s --long-window 20s --doctor-interval 2s $pods; echo TOP-EXITED rc=\$?; sleep 60"
IM_PIDS+=("$("${T[@]}" display-message -p '#{pid}')")
wait_screen() { # ERE [SECONDS]
  for i in $(seq $((${2:-30} * 10))); do
    "${T[@]}" capture-pane -p -t top >"$IM_TMP/screen.txt"
    grep -Eq -- "$1" "$IM_TMP/screen.txt" && return 0
    sleep 0.1
  done
  cat "$IM_TMP/screen.txt"; fail "the screen never showed /$1/"
}
wait_screen '^doctor: first diagnosis at [0-9:]+ \(every 2s, over the last 20s\)' 10
wait_screen '^doctor: CRITICAL kv-saturation \(meta-llama/Llama-3\.1-8B-Instruct\) \[[0-9]+ findings? at [0-9:]+, [0-9.]+ ms\]: the KV cache ' 60
echo "ok   the status line shows the worst finding"
"${T[@]}" send-keys -t top q
wait_screen 'TOP-EXITED rc=0' 10
"${T[@]}" kill-server 2>/dev/null || true

# a healthy fleet: nothing above info on the status line
hport=$(free_port)
bg "$IM_BINARY" simulate --listen "127.0.0.1:$hport" --pods 3 --speed 5 >"$IM_TMP/sim2.log" 2>&1
wait_http "http://127.0.0.1:$hport/targets" 30 || fail "healthy simulator did not start"
H=127.0.0.1:$hport
"$IM_BINARY" top --once --interval 1s --short-window 3s --long-window 10s --collect 6s \
  "$H/pods/0/metrics" "$H/pods/1/metrics" "$H/pods/2/metrics" >"$IM_TMP/healthy.txt" 2>&1 || fail "top --once (healthy)"
grep -Eq '^doctor: (no findings|INFO )' "$IM_TMP/healthy.txt" || { cat "$IM_TMP/healthy.txt"; fail "healthy fleet: the status line is not info"; }
echo "top doctor: ok"
