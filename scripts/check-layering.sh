#!/usr/bin/env bash
# check-layering.sh — enforces the subsystem layering (ARCHITECTURE.md): a
# library may use only the subsystems its IM_DEPS_<sub> entry in CMakeLists.txt
# allows. Static libraries do not fail on undefined symbols, so this looks at
# them: for each library, every symbol it leaves undefined that some other
# libim_* defines must be defined by an allowed one (or by itself); anything
# else is an upward (or sideways) dependency and fails, naming the symbol, the
# object that uses it and the subsystem that defines it.
#
# With --src DIR first, it also checks the includes: a file in DIR/src/<sub>/ may
# include headers of <sub> and of its allowed subsystems only (so a type or an
# inline function from above is caught too, not only a call).
#
# usage: check-layering.sh [--src DIR] SUB=LIB.a=DEP1,DEP2 ...   (CMake passes one per library)
set -euo pipefail
declare -A lib deps
order=()
src=""
if [ "${1:-}" = --src ]; then src=$2; shift 2; fi
for a in "$@"; do
  sub=${a%%=*}; rest=${a#*=}
  lib[$sub]=${rest%%=*}; deps[$sub]=${rest#*=}
  order+=("$sub")
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# defined global symbols per subsystem, and one "symbol subsystem" table of all
for sub in "${order[@]}"; do
  nm -g --defined-only "${lib[$sub]}" 2>/dev/null | awk 'NF == 3 {print $3}' | sort -u > "$work/$sub.def"
  sed "s/\$/ $sub/" "$work/$sub.def" >> "$work/all"
done
sort -u -k1,1 "$work/all" > "$work/owners"
bad=0
for sub in "${order[@]}"; do
  ok=" $sub ${deps[$sub]//,/ } "
  # "object symbol" for each undefined symbol of the library's objects
  nm -A -u "${lib[$sub]}" 2>/dev/null | awk '{n = split($1, p, ":"); print $NF, p[n-1]}' |
    sort -k1,1 > "$work/$sub.undef"
  while read -r sym obj owner; do
    case "$ok" in *" $owner "*) continue ;; esac
    echo "layering: $sub uses $sym (defined in $owner) from $obj; $sub may use only:${deps[$sub]:- nothing} (IM_DEPS_$sub in CMakeLists.txt)"
    bad=1
  done < <(join "$work/$sub.undef" "$work/owners")
done
if [ -n "$src" ]; then
  for sub in "${order[@]}"; do
    ok=" $sub ${deps[$sub]//,/ } "
    while IFS=: read -r file inc; do
      case "$ok" in *" $inc "*) continue ;; esac
      echo "layering: ${file#"$src"/} includes a header of $inc; $sub may use only:${deps[$sub]:- nothing} (IM_DEPS_$sub in CMakeLists.txt)"
      bad=1
    done < <(grep -HoE '^#include "[a-z_]+/' "$src/src/$sub"/*.[ch] 2>/dev/null |
      sed -E 's/#include "([a-z_]+)\//\1/' | sort -u)
  done
fi
if [ $bad = 1 ]; then
  echo "layering: upward dependencies found (see ARCHITECTURE.md, 'Layering')" >&2
  exit 1
fi
