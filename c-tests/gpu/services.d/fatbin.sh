#!/usr/bin/env bash
# fatbin.sh - CUDA fatbinaries on the CUDA stand-in: fatbins built
# here with NVIDIA's `fatbinary` (from the CUDA wheel c-tests/gpu-images.sh
# unpacks) holding cubins for several SMs and PTX, loaded by OUR runtime's
# CUDA plugin through the libomptarget ABI (the gpu-images harness with the
# fatbin as its registered image) and through liboffload's olCreateProgram
# (c-tests/offload/gpu.c), with mock-cuda (and mock-cuda-async) as libcuda:
#
#   - several cubins: the best one for the device's compute capability is
#     loaded (sm_90 on 9.0, sm_86 on 8.6 and 8.9, sm_80 on 8.0);
#   - no cubin for the device, PTX present: the PTX is JIT-compiled (the
#     stand-in's JIT is ptxas, MOCK_CUDA_PTXAS);
#   - LZ4- and Zstandard-compressed entries;
#   - no fitting architecture: a clear error listing the fatbin's archs and
#     the device's; a corrupt fatbin: a clear error.
#
#   c-tests/gpu/services.d/fatbin.sh [GPU_IMAGES_DIR]   (default target/gpu-images)
#
# Prints `PASS name` / `FAIL name` / `SKIP name` lines and "N passed, M
# failed"; exits 1 on a failure. Needs target/release/libomptarget_rs.so
# ($OMPTARGET_RS_LIB) and the images (c-tests/gpu-images.sh); without them
# every check says SKIP.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
G=${1:-${GPU_IMAGES:-$ROOT/target/gpu-images}}
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
TMO=${HARNESS_TIMEOUT:-120}
CLANG=${CLANG:-clang-22}

pass=0 fail=0 skip=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() {
  echo "FAIL $1: $2"; fail=$((fail + 1))
  [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/      | /' "$3" | tail -n 20
}
skipped() { echo "SKIP $1: $2"; skip=$((skip + 1)); }
finish() { echo "fatbin: $pass passed, $fail failed, $skip skipped"; [ "$fail" = 0 ]; exit $?; }

CHECKS=(multi.sm_90 multi.sm_86 multi.sm_89 multi.sm_80 multi.async ptx-only.jit multi.sm_100.jit lz4 zstd no-arch corrupt
        olCreateProgram.multi olCreateProgram.no-arch)
FATBINARY=$(ls "$G"/tools/ptxas-13*/fatbinary 2>/dev/null | head -n1 || true)
PTXAS=$(ls "$G"/tools/ptxas-13*/ptxas 2>/dev/null | head -n1 || true)
K=$G/kernels
why=""
[ -e "$G/mock-cuda/libcuda.so.1" ] && [ -e "$K/kernels.sm_90.ptx" ] && [ -e "$K/kernels.emu.so" ] || why="gpu-images not built (c-tests/gpu-images.sh)"
[ -z "$why" ] && { [ -n "$FATBINARY" ] && [ -n "$PTXAS" ] || why="no fatbinary/ptxas under $G/tools"; }
[ -z "$why" ] && { [ -f "$LIB" ] || why="no runtime at $LIB (cargo build --release)"; }
[ -z "$why" ] && { command -v "$CLANG" >/dev/null || why="no $CLANG"; }
if [ -n "$why" ]; then
  for c in "${CHECKS[@]}"; do skipped "fatbin.$c" "$why"; done
  finish
fi
LIB=$(readlink -f "$LIB")
W=$(mktemp -d /tmp/omptarget-rs-fatbin.XXXXXX)
[ -n "${KEEP:-}" ] && echo "fatbin: work files in $W" || trap 'rm -rf "$W"' EXIT
mkdir -p "$W/shim"
ln -s "$LIB" "$W/shim/libomptarget.so.22.1"
MOCK=$G/mock-cuda
SRC=$ROOT/c-tests/gpu/images/src

# --- the fatbins ---------------------------------------------------------------
# The test kernels' PTX retargeted to sm_80 (the kernels use nothing newer),
# cubins for sm_80, sm_86 and sm_90 from it.
sed 's/^\.target sm_90/.target sm_80/' "$K/kernels.sm_90.ptx" >"$W/k80.ptx"
for a in 80 86 90; do
  "$PTXAS" -arch=sm_$a -O3 "$W/k80.ptx" -o "$W/k$a.cubin" || { bad "fatbin.build" "ptxas sm_$a failed"; finish; }
done
fb() { local out=$1; shift; "$FATBINARY" -64 --create="$W/$out" "$@" >"$W/$out.log" 2>&1; }
cub() { echo "--image3=kind=elf,sm=$1,file=$W/k$1.cubin"; }
ptx="--image3=kind=ptx,sm=80,file=$W/k80.ptx"
fb multi.fatbin --compress=false "$(cub 80)" "$(cub 86)" "$(cub 90)" "$ptx" &&
  fb ptx-only.fatbin "$ptx" &&
  fb lz4.fatbin --compress-all --compress-mode=speed "$(cub 80)" "$(cub 90)" "$ptx" &&
  fb zstd.fatbin --compress-all "$(cub 86)" "$(cub 90)" "$ptx" &&
  fb no-arch.fatbin "$(cub 80)" "$(cub 86)" || { bad "fatbin.build" "fatbinary failed"; finish; }
# Corrupt: the multi fatbin with its second entry's payload size made to run past the end.
python3 - "$W/multi.fatbin" "$W/corrupt.fatbin" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
first = 16 + struct.unpack_from('<I', b, 16 + 4)[0] + struct.unpack_from('<Q', b, 16 + 8)[0]
struct.pack_into('<Q', b, first + 8, 1 << 40)
open(sys.argv[2], 'wb').write(b)
EOF

# --- one harness per fatbin (hand-written registration of the raw fatbin) ------
harness() { # harness NAME: bin/harness.NAME registering $W/NAME.fatbin
  $CLANG -c -DIMAGE_FILE="\"$W/$1.fatbin\"" "$SRC/embed_image.S" -o "$W/embed.$1.o" &&
    $CLANG -O1 -w -DHARNESS_MANUAL_REGISTRATION "$SRC/harness.c" "$W/embed.$1.o" -o "$W/harness.$1" \
      -L"$W/shim" -l:libomptarget.so.22.1 -Wl,-rpath,"$W/shim"
}
for f in multi ptx-only lz4 zstd no-arch corrupt; do
  harness "$f" >"$W/build.$f.log" 2>&1 || { bad "fatbin.build" "harness for $f" "$W/build.$f.log"; finish; }
done

# scripts/gpu-check.sh runs these harnesses on a real GPU (no toolkit there):
# they are kept in $G/fatbin (carry target/gpu-images/fatbin).
mkdir -p "$G/fatbin" && for f in multi ptx-only lz4 zstd no-arch; do cp -f "$W/harness.$f" "$G/fatbin/"; done

run() { # run LOG ENV... -- CMD...
  local log=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  ( env LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_CUDA_EMU="$K/kernels.emu.so" LIBOMPTARGET_DEBUG=1 "${envs[@]}" timeout "$TMO" "$@"; exit $? ) >"$log" 2>&1
}
# expect_run NAME FATBIN WANT-LINE ENV...: the harness passes 7/7 and the debug log says WANT-LINE.
expect_run() {
  local name=$1 f=$2 want=$3; shift 3
  local log=$W/$name.log
  run "$log" "$@" -- "$W/harness.$f"
  local rc=$?
  if [ $rc -ne 0 ] || ! grep -q '^7 passed, 0 failed' "$log"; then bad "fatbin.$name" "exit $rc, harness did not pass 7/7" "$log"
  elif ! grep -q "$want" "$log"; then bad "fatbin.$name" "no '$want' in the debug log" "$log"
  elif grep -q '\[mock-cuda\] WARNING' "$log"; then bad "fatbin.$name" "mock-cuda warned" "$log"
  else ok "fatbin.$name: $want"; fi
}
expect_run multi.sm_90 multi "loading its sm_90 cubin"
expect_run multi.sm_86 multi "loading its sm_86 cubin" MOCK_CUDA_SM=86
expect_run multi.sm_89 multi "loading its sm_86 cubin" MOCK_CUDA_SM=89
expect_run multi.sm_80 multi "loading its sm_80 cubin" MOCK_CUDA_SM=80
# mock-cuda-async: the same choice through the deferring driver layer.
A=$W/async
if bash "$ROOT/c-tests/mock-cuda-async/build.sh" "$A" "$MOCK/libcuda.so.1" >"$W/async-build.log" 2>&1; then
  expect_run multi.async multi "loading its sm_90 cubin" OMPTARGET_RS_LIBCUDA="$A/libcuda-async.so"
else skipped "fatbin.multi.async" "mock-cuda-async did not build"; fi
expect_run ptx-only.jit ptx-only "loading its sm_80 PTX" MOCK_CUDA_PTXAS="$PTXAS"
expect_run multi.sm_100.jit multi "loading its sm_80 PTX" MOCK_CUDA_PTXAS="$PTXAS" MOCK_CUDA_SM=100
expect_run lz4 lz4 "loading its sm_90 cubin"
expect_run zstd zstd "loading its sm_90 cubin"

# expect_error NAME FATBIN WANT ENV...: the program fails and says WANT.
expect_error() {
  local name=$1 f=$2 want=$3; shift 3
  local log=$W/$name.log
  run "$log" "$@" -- "$W/harness.$f"
  local rc=$?
  if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$log"; then bad "fatbin.$name" "ran although it should not" "$log"
  elif ! grep -qF "$want" "$log"; then bad "fatbin.$name" "no '$want' in the output" "$log"
  else ok "fatbin.$name: $want"; fi
}
expect_error no-arch no-arch "CUDA fatbinary has no image for sm_90 (compute capability 9.0): cubins for sm_80, sm_86; PTX for none"
expect_error corrupt corrupt "CUDA fatbinary: entry at offset"

# --- liboffload: olCreateProgram of a fatbin ---------------------------------------
# Built against LLVM's liboffload, run with ours under its name (as c-tests/offload/run.sh does).
LLVM_INC=/usr/lib/llvm-22/include LLVM_LIB=/usr/lib/llvm-22/lib
ln -s "$LIB" "$W/shim/libLLVMOffload.so.22.1"
if [ -e "$K/kernels.x86_64.so" ] && [ -f "$LLVM_INC/offload/OffloadAPI.h" ] &&
   $CLANG -Wall -Wextra -Werror -I"$LLVM_INC" "$ROOT/c-tests/offload/gpu.c" -L"$LLVM_LIB" -lLLVMOffload \
     -o "$W/gpu" >"$W/gpu-build.log" 2>&1; then
  log=$W/ol-multi.log
  env LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBCUDA="$MOCK/libcuda.so.1" MOCK_CUDA_EMU="$K/kernels.emu.so" LIBOMPTARGET_DEBUG=1 MOCK_CUDA_SM=86 \
    timeout 60 "$W/gpu" "$K/kernels.x86_64.so" "$W/multi.fatbin" "$W/k80.ptx" >"$log" 2>&1
  rc=$?
  lines=$(grep -c '^device: ' "$log"); distinct=$(grep '^device: ' "$log" | sort -u | wc -l)
  if [ $rc = 0 ] && [ "$lines" = 2 ] && [ "$distinct" = 1 ] && grep -q "loading its sm_86 cubin" "$log"; then
    ok "fatbin.olCreateProgram.multi: same results on the CPU device and the sm_86 stand-in from its sm_86 cubin"
  else bad "fatbin.olCreateProgram.multi" "exit $rc" "$log"; fi
  # olIsValidBinary says no, olCreateProgram's error names the archs.
  cat >"$W/ol_create.c" <<'EOF'
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <offload/OffloadAPI.h>
static ol_device_handle_t gpu;
static bool pick(ol_device_handle_t d, void *ud) {
  (void)ud;
  ol_device_type_t t;
  if (!olGetDeviceInfo(d, OL_DEVICE_INFO_TYPE, sizeof t, &t) && t == OL_DEVICE_TYPE_GPU && !gpu) gpu = d;
  return true;
}
int main(int argc, char **argv) {
  if (argc < 2 || olInit() || olIterateDevices(pick, NULL) || !gpu) return 2;
  FILE *f = fopen(argv[1], "rb");
  static char buf[1 << 20];
  size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
  bool valid = true;
  ol_result_t r = olIsValidBinary(gpu, buf, n, &valid);
  printf("olIsValidBinary: %s, valid %d\n", r ? r->Details : "success", valid);
  ol_program_handle_t p;
  r = olCreateProgram(gpu, buf, n, &p);
  printf("olCreateProgram: %s\n", r ? r->Details : "success");
  return r ? 1 : 0;
}
EOF
  log=$W/ol-no-arch.log
  if $CLANG -Wall -Werror -I"$LLVM_INC" "$W/ol_create.c" -L"$LLVM_LIB" -lLLVMOffload -o "$W/ol_create" >"$log" 2>&1; then
    env LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBCUDA="$MOCK/libcuda.so.1" timeout 60 "$W/ol_create" "$W/no-arch.fatbin" >"$log" 2>&1
    rc=$?
    if [ $rc = 1 ] && grep -q "olIsValidBinary: success, valid 0" "$log" &&
       grep -qF "olCreateProgram: " "$log" && grep -qF "cubins for sm_80, sm_86" "$log" && grep -qF "sm_90" "$log"; then
      ok "fatbin.olCreateProgram.no-arch: olIsValidBinary false, olCreateProgram fails naming the archs found and the device's"
    else bad "fatbin.olCreateProgram.no-arch" "exit $rc" "$log"; fi
  else bad "fatbin.olCreateProgram.no-arch" "ol_create.c did not build" "$log"; fi
else
  skipped "fatbin.olCreateProgram.multi" "c-tests/offload/gpu.c did not build or no host kernels"
  skipped "fatbin.olCreateProgram.no-arch" "c-tests/offload/gpu.c did not build or no host kernels"
fi
finish
