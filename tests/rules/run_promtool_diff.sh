#!/usr/bin/env bash
# Differential test of rule unit tests: every tests/rules/unit/{pass,fail}_*.yml
# runs under `promtool test rules` (Debian's 2.42) and `infermon test rules`;
# the verdict (exit code) must agree with the file's name and between the two,
# and the report (stdout and stderr, without infermon's final "N passed, N
# failed" line) must be identical. Without promtool only the verdicts are checked.
set -euo pipefail
: "${IM_BINARY:?}" "${IM_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$IM_SOURCE_DIR/tests/rules/unit"
have_promtool=1; command -v promtool >/dev/null || have_promtool=0
fail=0; n=0
for f in pass_*.yml fail_*.yml; do
  n=$((n + 1))
  want=0; case "$f" in fail_*) want=1;; esac
  set +e
  "$IM_BINARY" test rules --promql.compat=2 "$f" >"$tmp/i.out" 2>"$tmp/i.err"; irc=$?
  set -e
  grep -v '^[0-9]* passed, [0-9]* failed$' "$tmp/i.out" >"$tmp/i.out2" || true
  if [ $irc != $want ]; then
    echo "VERDICT $f: infermon exit $irc, expected $want"; cat "$tmp/i.out" "$tmp/i.err"
    fail=$((fail + 1)); continue
  fi
  [ $have_promtool = 1 ] || continue
  set +e
  promtool test rules "$f" >"$tmp/p.out" 2>"$tmp/p.err"; prc=$?
  set -e
  if [ $prc != $irc ] || ! cmp -s "$tmp/p.out" "$tmp/i.out2" || ! cmp -s "$tmp/p.err" "$tmp/i.err"; then
    echo "DIFF $f (promtool rc=$prc, infermon rc=$irc)"
    diff "$tmp/p.out" "$tmp/i.out2" || true
    diff "$tmp/p.err" "$tmp/i.err" || true
    fail=$((fail + 1))
  fi
done
# Several files in one run: the summary line counts them.
set +e
"$IM_BINARY" test rules --promql.compat=2 pass_basic.yml fail_basic.yml pass_order.yml >"$tmp/m.out" 2>/dev/null; mrc=$?
set -e
tail -1 "$tmp/m.out" | grep -qx '2 passed, 1 failed' || { echo "summary line wrong: $(tail -1 "$tmp/m.out")"; fail=$((fail + 1)); }
[ $mrc = 1 ] || { echo "multi-file exit $mrc, want 1"; fail=$((fail + 1)); }
echo "test rules: $((n - fail))/$n files identical to promtool (promtool present: $have_promtool)"
[ $fail = 0 ]
