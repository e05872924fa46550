#!/usr/bin/env bash
# run.sh [GPU_IMAGES_DIR] - differential test of the indirect-call table
# (abi-reference sections 7.1 and 7.9): the same harness (harness.c, with the
# cubin of indirect.ptx embedded) runs on mock-cuda under LLVM 22.1's
# libomptarget and under ours (library-path replacement: a temp dir with
# libomptarget.so.22.1 -> target/release/libomptarget_rs.so, or
# $OMPTARGET_RS_LIB, first on LD_LIBRARY_PATH), and their outputs must match.
#
# Builds into target/cuda-indirect/ (or $CUDA_INDIRECT_OUT): indirect.sm_90.cubin
# (ptxas 13 of the gpu-images tools), indirect.emu.so (emu.c, the emulation
# library mock-cuda keeps the device globals in) and harness.
# Checks: the C files build warnings-clean; under LLVM's runtime the table is
# the expected one (5 pairs sorted by host address: validates the fixture);
# under ours the harness exits 0 and prints exactly what it printed under LLVM's.
# Prints both outputs, one PASS/FAIL line per check and "N passed, N failed";
# exits 1 on a failure. Without the mock or ptxas: "skipped: gpu-images not
# built", exit 0.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
G=${1:-$ROOT/target/gpu-images}
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
LLVMLIB=${LLVM_OMPTARGET_DIR:-/usr/lib/llvm-22/lib}
TMO=${HARNESS_TIMEOUT:-60}
OUT=${CUDA_INDIRECT_OUT:-$ROOT/target/cuda-indirect}

MOCK=$G/mock-cuda
PTXAS=$(ls "$G"/tools/ptxas-13*/ptxas 2>/dev/null | head -n1 || true)
if [ ! -e "$MOCK/libcuda.so.1" ] || [ -z "$PTXAS" ]; then
  echo "skipped: gpu-images not built (no mock-cuda or ptxas 13 in $G; run c-tests/gpu-images.sh)"
  exit 0
fi
MOCK=$(cd "$MOCK" && pwd)
if [ ! -e "$LLVMLIB/libomptarget.so.22.1" ]; then
  echo "skipped: LLVM 22.1's libomptarget not found in $LLVMLIB"
  exit 0
fi
[ -f "$LIB" ] || { echo "cuda-indirect/run.sh: no runtime at $LIB (cargo build --release)" >&2; exit 2; }
LIB=$(readlink -f "$LIB")
CC=${CC:-$(command -v cc || command -v gcc || command -v clang || true)}
[ -n "$CC" ] || { echo "skipped: no C compiler"; exit 0; }

W=$(mktemp -d /tmp/omptarget-rs-cuda-indirect.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/shim" "$OUT"
ln -s "$LIB" "$W/shim/libomptarget.so.22.1"

pass=0 fail=0
ok() { echo "PASS  $1"; pass=$((pass + 1)); }
bad() {
  echo "FAIL  $1${2:+: $2}"; fail=$((fail + 1))
  [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/      | /' "$3" | tail -n 25
}
finish() { echo "$pass passed, $fail failed"; [ "$fail" = 0 ]; exit $?; }

# --- build ---------------------------------------------------------------------
CUBIN=$OUT/indirect.sm_90.cubin EMU=$OUT/indirect.emu.so H=$OUT/harness
if ! "$PTXAS" -arch=sm_90 -O3 "$HERE/indirect.ptx" -o "$CUBIN" >"$W/ptxas.log" 2>&1; then
  bad "indirect.ptx assembles ($PTXAS)" "" "$W/ptxas.log"; finish
fi
"$CC" -shared -fPIC -O2 -Wall -Wextra "$HERE/emu.c" -o "$EMU" >"$W/build.log" 2>&1 &&
  "$CC" -O2 -Wall -Wextra -DIMAGE_FILE="\"$CUBIN\"" "$HERE/harness.c" -o "$H" \
    -L"$LLVMLIB" -lomptarget -ldl >>"$W/build.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then bad "build (emu.c, harness.c)" "$CC failed" "$W/build.log"; finish; fi
if [ -s "$W/build.log" ]; then bad "emu.c, harness.c build warnings-clean ($CC -Wall -Wextra)" "warnings" "$W/build.log"
else ok "indirect.ptx assembled, emu.c and harness.c build warnings-clean ($CC -Wall -Wextra)"; fi

# --- run under both runtimes ------------------------------------------------------
# run NAME LIBDIR: stdout -> $W/NAME.out, stderr -> $W/NAME.err; sets RC.
run() {
  ( env LD_LIBRARY_PATH="$2:$MOCK" MOCK_CUDA_EMU="$EMU" timeout "$TMO" "$H"; exit $? ) \
    >"$W/$1.out" 2>"$W/$1.err"
  RC=$?
  echo "--- output under $3 (exit $RC) ---"
  cat "$W/$1.out"
  [ -s "$W/$1.err" ] && sed 's/^/  stderr| /' "$W/$1.err" | tail -n 15
}

run llvm "$LLVMLIB" "LLVM 22.1's libomptarget ($LLVMLIB)"
llvm_rc=$RC
run ours "$W/shim" "ours ($LIB)"
ours_rc=$RC
echo "---"

if [ $llvm_rc -eq 0 ] && grep -q '^IndirectCallTableSize: 5$' "$W/llvm.out" &&
   grep -q '^verdict: expected table$' "$W/llvm.out"; then
  ok "LLVM 22.1: the fixture yields the expected table (5 pairs sorted by host address)"
else
  bad "LLVM 22.1: the fixture yields the expected table" "exit $llvm_rc; see its output above"
fi

if [ $ours_rc -eq 0 ] && cmp -s "$W/llvm.out" "$W/ours.out"; then
  ok "ours: same output as LLVM 22.1 (indirect-call table size, address, pairs)"
else
  diff -u --label llvm --label ours "$W/llvm.out" "$W/ours.out" >"$W/diff" 2>&1
  bad "ours: same output as LLVM 22.1" "exit $ours_rc; diff llvm -> ours" "$W/diff"
fi

finish
