#!/usr/bin/env bash
# run_tools.sh — `infermon tsdb import|dump|analyze` end to end: an OpenMetrics
# file with counters, gauges, a NaN and a staleness-free history over 9 hours is
# imported (blocks + compaction), dumped back (every sample identical, as text),
# dumped with --match and a time range, and analyzed.
set -euo pipefail
: "${IM_BINARY:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
awk 'BEGIN {
  print "# TYPE req counter"
  for (p = 0; p < 4; p++) for (k = 0; k < 2200; k++)
    printf "req_total{code=\"200\",pod=\"p%d\"} %d %d\n", p, k * 3 + p, 1700000000 + k * 15
  print "# TYPE temp gauge"
  for (p = 0; p < 4; p++) for (k = 0; k < 2200; k++)
    printf "temp{pod=\"p%d\"} %s %d\n", p, (k % 50 == 7) ? "NaN" : 40 + (k % 17) / 4, 1700000000 + k * 15
  print "# EOF"
}' > in.om
"$IM_BINARY" tsdb import in.om data 2> import.log || { cat import.log; exit 1; }
grep -q "imported 17600 samples (0 rejected" import.log || { cat import.log; exit 1; }
ls data/blocks/*.imb > /dev/null
"$IM_BINARY" tsdb dump data 2>/dev/null > out.om
tail -1 out.om | grep -qx '# EOF'
grep -v '^#' in.om | sort > a
grep -v '^#' out.om | sort > b
if ! cmp -s a b; then echo "dump differs from the import:"; diff a b | head; exit 1; fi
"$IM_BINARY" tsdb dump data --match 'temp{pod=~"p1|p3"}' --min-time 1700000000 --max-time 1700000150 2>/dev/null > sel.om
[ "$(grep -c '^temp' sel.om)" = 22 ] || { cat sel.om; exit 1; }
grep -q 'pod="p2"' sel.om && exit 1
"$IM_BINARY" tsdb analyze data 2>/dev/null > an.txt
grep -q '^Series: 8$' an.txt || { cat an.txt; exit 1; }
grep -q '^Samples: 17600 ' an.txt || { cat an.txt; exit 1; }
grep -q 'Bytes per sample' an.txt
# usage errors exit 2
set +e
"$IM_BINARY" tsdb dump > /dev/null 2>&1; [ $? = 2 ] || exit 1
"$IM_BINARY" tsdb dump data --match 'bad{' > /dev/null 2>&1; [ $? = 2 ] || exit 1
"$IM_BINARY" tsdb analyze "$work/none" > /dev/null 2>&1; [ $? = 2 ] && [ ! -e "$work/none" ] || exit 1
echo "tsdb tools: ok"
