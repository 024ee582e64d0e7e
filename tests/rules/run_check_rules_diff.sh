#!/usr/bin/env bash
# Differential test: `infermon check rules` and the real `promtool check rules`
# must print the same stdout and stderr and exit with the same code on every
# file of tests/rules/check/ (valid files, lint findings and many kinds of
# errors). Skipped (exit 0 with a note) when promtool is not installed.
set -euo pipefail
: "${IM_BINARY:?}" "${IM_SOURCE_DIR:?}"
if ! command -v promtool >/dev/null; then
  echo "SKIP: promtool not installed"; exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$IM_SOURCE_DIR/tests/rules/check"
fail=0; n=0
for f in *.yml; do
  n=$((n + 1))
  set +e
  promtool check rules "$f" >"$tmp/p.out" 2>"$tmp/p.err"; prc=$?
  "$IM_BINARY" check rules "$f" >"$tmp/i.out" 2>"$tmp/i.err"; irc=$?
  set -e
  if ! cmp -s "$tmp/p.out" "$tmp/i.out" || ! cmp -s "$tmp/p.err" "$tmp/i.err" || [ $prc != $irc ]; then
    echo "DIFF $f (promtool rc=$prc, infermon rc=$irc)"
    diff "$tmp/p.out" "$tmp/i.out" || true
    diff "$tmp/p.err" "$tmp/i.err" || true
    fail=$((fail + 1))
  fi
done
# Several files at once: same verdict.
set +e
promtool check rules ok_basic.yml bad_template.yml ok_full.yml >/dev/null 2>&1; prc=$?
"$IM_BINARY" check rules ok_basic.yml bad_template.yml ok_full.yml >/dev/null 2>&1; irc=$?
set -e
[ $prc = $irc ] || { echo "DIFF multi-file exit code: promtool $prc infermon $irc"; fail=$((fail + 1)); }
echo "check rules: $((n - fail))/$n files identical to promtool"
[ $fail = 0 ]
