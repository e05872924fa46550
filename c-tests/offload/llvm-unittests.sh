#!/usr/bin/env bash
# c-tests/offload/llvm-unittests.sh - LLVM's own OffloadAPI unit tests (gtest,
# llvm-project offload/unittests/OffloadAPI, the copies that match 22.1's API)
# on omptarget-rs's CPU devices.
#
# The test sources are not part of this repository. Point
# OFFLOAD_UNITTESTS_SRC at an llvm-project checkout or at its
# offload/unittests/OffloadAPI folder (default:
# ~/.cache/omptarget-rs/llvm-offload-unittests); without one this prints SKIP
# and exits 0. Every test folder (device/, memory/, queue/, ...) becomes one
# gtest program, as in LLVM's CMake, built with clang++-22 against 22.1's
# OffloadAPI.h and OffloadPrint.hpp, gtest and libLLVM (MemoryBuffer), with
# our own test environment (llvm-unittests/Environment.cpp: the devices under
# test are the non-HOST ones, our x86-64 CPU devices; CPU programs are
# llvm-unittests/kernels/<name>.c built as x86-64 shared objects) and
# llvm-unittests/compat.hpp force-included. Each program runs with our
# target/release first on the library path. Prints one line per program and
# "N passed, N failed (N expected on CPU devices), N skipped"; exit 1 when
# a test fails other than for launching more than one work item per group
# (CPU devices run one) or for a memory clock rate of 0 (unknown).
#
#   OFFLOAD_UNITTESTS_SRC=DIR  the sources
#   OFFLOAD_UNITTESTS_GROUPS="memory queue"  only these folders
#   OFFLOAD_UNITTESTS_ONE_WORK_ITEM=1  the launch tests with one work item
#                              per group and one group (CPU devices run no
#                              more), checking what they check for that item
#   GTEST_FILTER=...           passed on to every program
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
SRC=${OFFLOAD_UNITTESTS_SRC:-$HOME/.cache/omptarget-rs/llvm-offload-unittests}
[ -d "$SRC/offload/unittests/OffloadAPI" ] && SRC=$SRC/offload/unittests/OffloadAPI
INC=/usr/lib/llvm-22/include
LLVM_LIB=/usr/lib/llvm-22/lib
if [ ! -f "$SRC/common/Fixtures.hpp" ]; then
  echo "SKIP: no OffloadAPI unit test sources (set OFFLOAD_UNITTESTS_SRC)"
  exit 0
fi
if [ ! -f "$INC/offload/OffloadAPI.h" ] || ! command -v clang++-22 >/dev/null ||
  [ ! -f /usr/lib/x86_64-linux-gnu/libgtest.a ] && [ ! -f /usr/lib/libgtest.a ]; then
  echo "SKIP: needs liboffload-22-dev, llvm-22-dev, clang-22 and libgtest-dev"
  exit 0
fi
cargo build --release -q || exit 2
REL=$ROOT/target/release
[ -e "$REL/libLLVMOffload.so.22.1" ] || { echo "no $REL/libLLVMOffload.so.22.1" >&2; exit 2; }
S=$ROOT/c-tests/offload/llvm-unittests
O=$ROOT/target/offload-unittests
rm -rf "$O/src" && mkdir -p "$O/src/common" "$O/bin" "$O/device_code"
# The fixtures come from the sources, the environment is ours.
cp "$SRC/common/Fixtures.hpp" "$O/src/common/"
cp "$S/Environment.hpp" "$O/src/common/"
[ -f "$SRC/common/Properties.hpp" ] && cp "$SRC/common/Properties.hpp" "$O/src/common/"

for k in "$S"/kernels/*.c; do
  n=$(basename "$k" .c)
  clang-22 -O1 -shared -fPIC "$k" -o "$O/device_code/$n.x86_64.so" || exit 2
done

CXX="clang++-22 -std=c++17 -O1 -w -I$INC/offload -I$INC -I$O/src/common -include $S/compat.hpp"
LIBS="-L$LLVM_LIB -lLLVMOffload -lLLVM-22 -Wl,-rpath,$LLVM_LIB -lgtest_main -lgtest -lpthread"
clang++-22 -std=c++17 -O1 -c -I$INC/offload -I$INC -I"$O/src/common" \
  -DDEVICE_CODE_PATH="\"$O/device_code\"" "$S/Environment.cpp" -o "$O/env.o" || exit 2
clang++-22 -std=c++17 -O1 -c -I$INC/offload -I$INC -I"$O/src/common" -DDISABLE_WRAPPER \
  -DDEVICE_CODE_PATH="\"$O/device_code\"" "$S/Environment.cpp" -o "$O/env-nowrap.o" || exit 2

pass=0 fail=0 skip=0 broken=0 expected=0
for d in "$SRC"/*/; do
  g=$(basename "$d")
  case $g in common | device_code) continue ;; esac
  [ -n "${OFFLOAD_UNITTESTS_GROUPS:-}" ] && [[ " $OFFLOAD_UNITTESTS_GROUPS " != *" $g "* ]] && continue
  ls "$d"*.cpp >/dev/null 2>&1 || continue
  mkdir -p "$O/src/$g" && cp "$d"*.cpp "$O/src/$g/"
  if [ -n "${OFFLOAD_UNITTESTS_ONE_WORK_ITEM:-}" ]; then
    # Launch with the CPU devices' one work item (and one group) and check
    # what each test checks for that item; buffers keep their 64 entries.
    sed -i 's/LaunchArgs.GroupSize.x \* sizeof/64 * sizeof/
      s/GroupSize = {64, 1, 1};/GroupSize = {1, 1, 1};/; s/NumGroups.x = 4;/NumGroups.x = 1;/
      s/\([iI]\) < 64; \1++/\1 < LaunchArgs.GroupSize.x; \1++/' "$O/src/$g/"*.cpp
  fi
  cp "$d"*.hpp "$O/src/$g/" 2>/dev/null
  env=$O/env.o
  [ "$g" = init ] && env=$O/env-nowrap.o
  if ! $CXX "$O/src/$g/"*.cpp "$env" $LIBS -o "$O/bin/$g.unittests" 2>"$O/$g.build.err"; then
    echo "BUILD-FAIL $g (see $O/$g.build.err)"
    broken=$((broken + 1))
    continue
  fi
  LD_LIBRARY_PATH=$REL timeout 120 "$O/bin/$g.unittests" --gtest_color=no \
    ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER} >"$O/$g.out" 2>&1
  rc=$?
  p=$(grep -c '^\[       OK \]' "$O/$g.out")
  f=$(grep -c '^\[  FAILED  \] .* ms)$' "$O/$g.out")
  s=$(grep -c '^\[  SKIPPED \] .* ms)$' "$O/$g.out")
  if [ $rc -eq 124 ]; then
    echo "TIMEOUT $g (last: $(grep '^\[ RUN' "$O/$g.out" | tail -1))"
    f=$((f + 1))
  elif [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "CRASH $g (exit $rc; last: $(grep '^\[ RUN' "$O/$g.out" | tail -1))"
    f=$((f + 1))
  fi
  # A failure is expected on a CPU device when the test launched more than
  # one work item per group (refused: "a work group of [...] exceeds") or
  # wants a memory clock rate above 0 (CPU devices report 0 when unknown).
  x=$(awk '/^\[ RUN      \]/ { blk = "" } { blk = blk "\n" $0 }
    /^\[  FAILED  \] .* ms\)$/ {
      if (blk ~ /a work group of \[[0-9, ]*\] work items exceeds/ || $0 ~ /MemoryClockRate/) n++ }
    END { print n + 0 }' "$O/$g.out")
  echo "$g: $p passed, $f failed ($x expected on CPU devices), $s skipped"
  grep '^\[  FAILED  \] .* ms)$' "$O/$g.out" | sed 's/, where GetParam.*//; s/^\[  FAILED  \]/  FAILED/'
  pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s)) expected=$((expected + x))
done
echo "$pass passed, $fail failed ($expected expected on CPU devices), $skip skipped$([ $broken -gt 0 ] && echo ", $broken programs did not build")"
[ $fail -eq $expected ] && [ $broken -eq 0 ]
