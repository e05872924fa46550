#!/usr/bin/env bash
# OMPT differential suite: every program in c-tests/ompt/ runs
# under LLVM 22.1's libomptarget and under ours (LD_PRELOAD), with the tool
# c-tests/ompt/tool.c attached through OMP_TOOL_LIBRARIES, once per
# registration mode (EMI callbacks, non-EMI callbacks, both). The callback
# sequences (addresses masked, ids renumbered by the tool) and the program's
# output must be equal.
#   <name>.divergence   a known difference, first line = the reason: a
#                       differing run is SKIP, a matching one FAILs.
#   <name>.unordered    callbacks of several threads interleave: compared
#                       as sorted lists with ids masked.
# Usage: c-tests/ompt.sh [filter]   (OMPTARGET_RS_LIB overrides the library)
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
OUT=$HERE/build/ompt
mkdir -p "$OUT"
[ -f "$LIB" ] || { echo "ompt.sh: $LIB missing (cargo build --release)"; exit 1; }
CC=${CC_OMP:-clang-22}
"$CC" -shared -fPIC -O1 -Wall -Werror "$HERE/ompt/tool.c" -o "$OUT/tool.so" || exit 1
pass=0 fail=0 skip=0
for src in "$HERE"/ompt/*.c; do
  name=$(basename "$src" .c)
  [ "$name" = tool ] && continue
  [ -n "${1:-}" ] && [[ "$name" != *$1* ]] && continue
  exe=$OUT/$name
  if [ ! -x "$exe" ] || [ "$src" -nt "$exe" ]; then
    "$CC" -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -O2 "$src" -o "$exe" || { echo "FAIL $name: build"; fail=$((fail + 1)); continue; }
  fi
  for mode in emi noemi both; do
    run() { OMPT_TOOL_MODE=$mode OMP_TOOL_LIBRARIES=$OUT/tool.so timeout 60 "$@" "$exe" 2>&1; echo "exit=$?"; }
    run env >"$OUT/$name.$mode.llvm"
    run env LD_PRELOAD="$LIB" >"$OUT/$name.$mode.ours"
    if [ -f "$HERE/ompt/$name.unordered" ]; then
      for f in llvm ours; do sed -E 's/#[0-9]+/#N/g' "$OUT/$name.$mode.$f" | LC_ALL=C sort >"$OUT/$name.$mode.$f.cmp"; done
    else
      for f in llvm ours; do cp "$OUT/$name.$mode.$f" "$OUT/$name.$mode.$f.cmp"; done
    fi
    div=$HERE/ompt/$name.divergence
    if diff -u "$OUT/$name.$mode.llvm.cmp" "$OUT/$name.$mode.ours.cmp" >"$OUT/$name.$mode.diff"; then
      if [ -f "$div" ]; then
        echo "FAIL $name [$mode]: matches LLVM now but ompt/$name.divergence lists a divergence"; fail=$((fail + 1))
      else
        echo "PASS $name [$mode]"; pass=$((pass + 1))
      fi
    elif [ -f "$div" ] && [ -f "$HERE/ompt/$name.$mode.ours" ]; then
      # A known divergence whose trace of ours is pinned: it must match.
      if cmp -s "$HERE/ompt/$name.$mode.ours" "$OUT/$name.$mode.ours.cmp"; then
        echo "PASS $name [$mode] (the trace of ompt/$name.$mode.ours, a known divergence from LLVM 22.1)"; pass=$((pass + 1))
      else
        echo "FAIL $name [$mode]: known divergence, but not the trace of ompt/$name.$mode.ours"; fail=$((fail + 1))
        diff -u "$HERE/ompt/$name.$mode.ours" "$OUT/$name.$mode.ours.cmp" | head -n 40 | sed 's/^/    /'
      fi
    elif [ -f "$div" ]; then
      echo "SKIP $name [$mode]: known divergence ($(grep -v '^#' "$div" | head -n1))"; skip=$((skip + 1))
    else
      echo "FAIL $name [$mode]:"; sed 's/^/    /' "$OUT/$name.$mode.diff" | head -40; fail=$((fail + 1))
    fi
  done
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
