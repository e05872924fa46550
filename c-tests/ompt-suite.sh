#!/usr/bin/env bash
# OMPT over the whole differential suite: every c-tests/omp
# program (as c-tests/run.sh builds it, into c-tests/build/omp/) runs under
# LLVM 22.1's libomptarget and under ours (LD_PRELOAD) with the printing
# tool c-tests/ompt/tool.c attached (EMI registrations; OMPT_SUITE_MODES
# lists others: emi,noemi,both), with the program's .env. The "[ompt]" lines
# (addresses masked, ids renumbered by the tool) are compared:
#   PASS           equal, line for line
#   PASS (sorted)  equal as sorted lists with ids masked: threads or tasks
#                  interleave differently from run to run
#   PASS (pinned)  differs, as a known divergence says (below), and equals
#                  the callbacks of ours pinned in c-tests/ompt/suite/
#                  <name>.<mode>.ours (any other result FAILs)
#   SKIP           differs, and c-tests/ompt/suite.divergence names the
#                  program with the reason, or the program has a
#                  c-tests/omp/<name>.divergence (it behaves differently
#                  already); a program listed in suite.divergence that
#                  matches now FAILs, so the list stays true (except
#                  "race:" entries: differences that come and go)
#   FAIL           differs, not listed
# Usage: c-tests/ompt-suite.sh [FILTER]   (builds what run.sh has not built)
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
OUT=$HERE/build/ompt-suite
DIV=$HERE/ompt/suite.divergence
# Callbacks of ours pinned for known, deterministic divergences (not races).
PINNED=$HERE/ompt/suite
mkdir -p "$OUT"
[ -f "$LIB" ] || { echo "ompt-suite.sh: $LIB missing (cargo build --release)"; exit 1; }
clang-22 -shared -fPIC -O1 -Wall -Werror "$HERE/ompt/tool.c" -o "$OUT/tool.so" || exit 1
IFS=, read -r -a MODES <<<"${OMPT_SUITE_MODES:-emi}"
tests=$(bash "$HERE/run.sh" --list "omp/${1:-}" | grep '^omp/')
# Build what is missing (run.sh skips what is up to date).
bash "$HERE/run.sh" --build-only "omp/${1:-}" >/dev/null 2>&1
lines() { [ -f "$1" ] && grep -v '^[[:space:]]*#' "$1" | grep -v '^[[:space:]]*$' || true; }
listed() { awk -v p="$1" '!/^#/ && $1 == p {$1 = ""; sub(/^ +/, ""); print; f = 1; exit} END {exit !f}' "$DIV"; }
pass=0 sorted=0 fail=0 skip=0
for t in $tests; do
  name=${t#omp/}
  exe=$HERE/build/omp/$name/$name
  [ -x "$exe" ] || { echo "FAIL  $name: not built"; fail=$((fail + 1)); continue; }
  base=$HERE/omp/$name
  envs=()
  while IFS= read -r l; do envs+=("$l"); done < <(lines "$base.env")
  for mode in "${MODES[@]}"; do
    for who in llvm ours; do
      pre=(); [ $who = ours ] && pre=(LD_PRELOAD="$LIB")
      (cd "$(dirname "$exe")" && env "${pre[@]}" "${envs[@]}" OMPT_TOOL_MODE=$mode OMP_TOOL_LIBRARIES="$OUT/tool.so" \
        timeout 60 "$exe" 2>/dev/null; exit $?) 2>/dev/null | grep '^\[ompt\]' >"$OUT/$name.$mode.$who"
      sed -E 's/#[0-9]+/#N/g' "$OUT/$name.$mode.$who" | LC_ALL=C sort >"$OUT/$name.$mode.$who.sorted"
    done
    tag="$name [$mode]"
    why=$(listed "$name") && known=1 || known=0
    prog_div=0
    [ -f "$base.divergence" ] && prog_div=1
    if cmp -s "$OUT/$name.$mode.llvm" "$OUT/$name.$mode.ours"; then res=equal
    elif cmp -s "$OUT/$name.$mode.llvm.sorted" "$OUT/$name.$mode.ours.sorted"; then res=sorted
    else res=differs; fi
    if [ $res != differs ] && [ $known = 1 ] && [[ $why == race:* ]]; then
      echo "PASS  $tag (this time): $(wc -l <"$OUT/$name.$mode.ours") callbacks"; sorted=$((sorted + 1))
    elif [ $res != differs ] && [ $known = 1 ]; then
      echo "FAIL  $tag: matches LLVM 22.1 now, but ompt/suite.divergence lists it ($why)"; fail=$((fail + 1))
    elif [ $res = equal ]; then echo "PASS  $tag: $(wc -l <"$OUT/$name.$mode.ours") callbacks"; pass=$((pass + 1))
    elif [ $res = sorted ]; then echo "PASS  $tag (sorted): $(wc -l <"$OUT/$name.$mode.ours") callbacks"; sorted=$((sorted + 1))
    elif [ -f "$PINNED/$name.$mode.ours" ] && { [ $known = 1 ] || [ $prog_div = 1 ]; }; then
      # A known difference whose callbacks of ours are pinned: they must match.
      if cmp -s "$PINNED/$name.$mode.ours" "$OUT/$name.$mode.ours"; then
        echo "PASS  $tag (the callbacks of ompt/suite/$name.$mode.ours, a known divergence from LLVM 22.1)"; pass=$((pass + 1))
      elif cmp -s <(sed -E 's/#[0-9]+/#N/g' "$PINNED/$name.$mode.ours" | LC_ALL=C sort) "$OUT/$name.$mode.ours.sorted"; then
        echo "PASS  $tag (sorted: the callbacks of ompt/suite/$name.$mode.ours, a known divergence from LLVM 22.1)"; sorted=$((sorted + 1))
      else
        echo "FAIL  $tag: a known divergence, but not the callbacks of ompt/suite/$name.$mode.ours:"
        diff -u "$PINNED/$name.$mode.ours" "$OUT/$name.$mode.ours" | sed 's/^/      /' | head -30; fail=$((fail + 1))
      fi
    elif [ $known = 1 ]; then echo "SKIP  $tag: $why"; skip=$((skip + 1))
    elif [ $prog_div = 1 ]; then echo "SKIP  $tag: the program diverges (omp/$name.divergence: $(lines "$base.divergence" | head -n1))"; skip=$((skip + 1))
    else
      echo "FAIL  $tag:"; diff -u "$OUT/$name.$mode.llvm" "$OUT/$name.$mode.ours" | sed 's/^/      /' | head -30; fail=$((fail + 1))
    fi
  done
done
echo "$pass passed, $sorted passed as sorted lists, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
