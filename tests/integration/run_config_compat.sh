#!/usr/bin/env bash
# Configuration acceptance against the real Prometheus 2.42: every file of
# tests/integration/config_compat/ is checked by `promtool check config` and by
# `infermon check config`; both must give the same verdict, and the verdict must
# be the one the file name says (ok_* valid, bad_* invalid) so neither tool can
# drift unnoticed. Infermon-only sections (storage:, llm:) and the features
# infermon refuses on purpose (oauth2, sigv4) are not in this set: they are
# covered by tests/unit/config.
source "$IM_SOURCE_DIR/tests/lib/common.sh"
command -v promtool >/dev/null || fail "promtool (Prometheus 2.42) is needed"
dir="$IM_SOURCE_DIR/tests/integration/config_compat"
cp "$dir"/*.yml "$IM_TMP/"
cd "$IM_TMP"
files=$(cd "$dir" && ls ./*.yml | sed 's|^\./||')
# one run of each tool over all files (promtool takes ~0.5 s to start);
# both print "Checking F" followed by a SUCCESS or FAILED line per file
(promtool check config $files || true) >p.out 2>&1
("$IM_BINARY" check config $files || true) >i.out 2>&1
# verdicts FILE OUT: "ok" or "bad" for FILE in OUT
verdict() {
  awk -v f="$1" '$1 == "Checking" { cur = $2; next }
    cur == f && /SUCCESS/ { print "ok"; exit } cur == f && /FAILED/ { print "bad"; exit }' "$2"
}
n=0
for name in $files; do
  case "$name" in
    ok_*) want=ok ;;
    bad_*) want=bad ;;
    *) fail "$name: name it ok_* or bad_*" ;;
  esac
  p=$(verdict "$name" p.out); i=$(verdict "$name" i.out)
  [ "$p" = "$want" ] || { cat p.out; fail "$name: promtool says '$p', expected $want"; }
  [ "$i" = "$p" ] || { grep -A2 "Checking $name" i.out; fail "$name: infermon says '$i', promtool '$p'"; }
  n=$((n + 1))
done
[ "$n" -ge 30 ] || fail "only $n files checked"
# and a single bad file makes both exit 1
promtool check config bad_duration.yml >/dev/null 2>&1 && fail "promtool accepted bad_duration.yml"
"$IM_BINARY" check config bad_duration.yml >/dev/null 2>&1 && fail "infermon accepted bad_duration.yml"
echo "config compat: $n files, same verdict as promtool"
