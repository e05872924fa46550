#!/usr/bin/env bash
# OMPT device tracing: c-tests/ompt-trace/program.c, built for
# sm_90, gfx90a and the x86-64 host-offload target, runs with the tracing
# tool c-tests/ompt-trace/tool.c attached (OMP_TOOL_LIBRARIES):
#   - on our CUDA plugin over mock-cuda and over mock-cuda-async (deferred
#     streams), and on our AMDGPU plugin over mock-hsa: tracing starts on
#     every device, the tool's checks pass (records of the right types,
#     start <= end, times non-decreasing, translate_time against
#     omp_get_wtime, flush and stop deliver exactly the operations the EMI
#     callbacks saw, nothing after stop), and the record counts are these
#     (per device, after the flush / after the stop):
#       target 2 / 12, data_op 4 / 14, submit 1 / 3
#   - on the host plugin, under LLVM 22.1 and ours: no tracing entry points
#     (22.1's host plugin has none), same output.
# The GPU runs need the stand-ins (c-tests/gpu-images.sh, amdgpu-images.sh,
# and the test device runtime of c-tests/gpu/omp-suite.sh); without them
# they say "skipped".
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
G=${GPU_IMAGES_DIR:-$ROOT/target/gpu-images}
OUT=$ROOT/target/ompt-trace
mkdir -p "$OUT"
[ -f "$LIB" ] || { echo "ompt-trace.sh: $LIB missing (cargo build --release)"; exit 1; }
export PATH=/usr/lib/llvm-22/bin:$PATH
S=$HERE/ompt-trace
pass=0 fail=0 skip=0
ok() { echo "PASS  ompt-trace [$1]"; pass=$((pass + 1)); }
bad() { echo "FAIL  ompt-trace [$1]: $2"; [ -e "${3:-}" ] && sed 's/^/      | /' "$3" | tail -n 30; fail=$((fail + 1)); }
clang -shared -fPIC -O1 -Wall -Werror "$S/tool.c" -o "$OUT/tool.so" || exit 1
clang -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -O2 "$S/program.c" -o "$OUT/program.x86" -ldl || exit 1

# --- host plugin: no tracing entry points, as in 22.1 ----------------------
for who in llvm ours; do
  pre=(); [ $who = ours ] && pre=(LD_PRELOAD="$LIB")
  env "${pre[@]}" OMP_TOOL_LIBRARIES="$OUT/tool.so" OMP_NUM_THREADS=2 timeout 60 "$OUT/program.x86" >"$OUT/host.$who" 2>/dev/null
  echo "exit=$?" >>"$OUT/host.$who"
done
if ! grep -q "no device tracing entry points" "$OUT/host.llvm"; then bad host "22.1's host plugin offers tracing?" "$OUT/host.llvm"
elif cmp -s "$OUT/host.llvm" "$OUT/host.ours"; then ok "host plugin: no tracing entry points, as LLVM 22.1"
else bad host "differs from LLVM 22.1" <(diff "$OUT/host.llvm" "$OUT/host.ours"); fi

# --- GPU plugins on the stand-ins ------------------------------------------
RT=$ROOT/target/gpu-omp/rt
PTXAS=$(ls "$G"/tools/ptxas-13*/ptxas 2>/dev/null | head -n1)
if [ ! -e "$G/mock-cuda/libcuda.so.1" ] || [ ! -e "$G/amdgpu/mock-hsa/libhsa-runtime64.so.1" ] || [ -z "$PTXAS" ]; then
  echo "skipped: GPU stand-ins not built (c-tests/gpu-images.sh, c-tests/amdgpu-images.sh)"; skip=$((skip + 1))
else
  [ -e "$RT/omprt-sm_90.o" ] || bash "$ROOT/c-tests/gpu/omp-suite.sh" --build-only zzz_build_the_runtime_only >/dev/null
  PATH=$(dirname "$PTXAS"):$PATH clang -fopenmp --offload-arch=sm_90 -nogpulib --cuda-feature=+ptx80 -Xoffload-linker "$RT/omprt-sm_90.o" \
    -O2 "$S/program.c" -o "$OUT/program.sm_90" -ldl || exit 1
  clang -fopenmp --offload-arch=gfx90a -nogpulib -Xoffload-linker "$RT/omprt-gfx90a.bc" -O2 "$S/program.c" -o "$OUT/program.gfx90a" -ldl || exit 1
  # The stand-ins run the kernels of the host-offload build's image.
  llvm-objcopy --dump-section .llvm.offloading="$OUT/x86.offbin" "$OUT/program.x86" /dev/null
  llvm-offload-binary "$OUT/x86.offbin" --image=file="$OUT/emu.so"
  mkdir -p "$OUT/shim" "$OUT/async"
  ln -sf "$(readlink -f "$LIB")" "$OUT/shim/libomptarget.so.22.1"
  bash "$HERE/mock-cuda-async/build.sh" "$OUT/async" "$G/mock-cuda/libcuda.so.1" >/dev/null
  ln -sf libcuda-async.so "$OUT/async/libcuda.so.1"
  want="records target=2 data_op=4 submit=1 (callbacks 2 4 1) h2d=8000 d2h=8000 bytes
records target=12 data_op=14 submit=3 (callbacks 12 14 3) h2d=24000 d2h=24000 bytes
records target=12 data_op=14 submit=3 (callbacks 12 14 3) h2d=24000 d2h=24000 bytes"
  run_gpu() { # name exe ld env...
    local name=$1 exe=$2 ld=$3 log=$OUT/$1.log
    shift 3
    (env LD_LIBRARY_PATH="$OUT/shim:$ld" OMP_TOOL_LIBRARIES="$OUT/tool.so" OMP_NUM_THREADS=2 "$@" timeout 60 "$exe" >"$log" 2>&1)
    local rc=$?
    local got; got=$(grep -E '^trace: (after|at).*: device 0: ' "$log" | sed 's/^trace: [a-z ]*: device 0: //')
    if [ $rc -ne 0 ]; then bad "$name" "exit $rc" "$log"
    elif grep -q "FAIL" "$log" || ! grep -q "trace: all checks passed" "$log"; then bad "$name" "a check failed" "$log"
    elif ! grep -q "^trace: device 0 (.*): tracing started" "$log"; then bad "$name" "no trace on device 0" "$log"
    elif [ "$got" != "$want" ]; then bad "$name" "record counts differ" <(diff <(echo "$want") <(echo "$got"))
    elif ! grep -q "^a\[10\]=20 b\[10\]=21$" "$log"; then bad "$name" "wrong result" "$log"
    else ok "$name: $(grep -c 'tracing started' "$log") device(s) traced, $(grep '^trace: at the end: device 0' "$log" | sed 's/.*device 0: //')"; fi
  }
  run_gpu cuda "$OUT/program.sm_90" "$G/mock-cuda" MOCK_CUDA_EMU="$OUT/emu.so" MOCK_CUDA_DEVICES=2
  run_gpu cuda-async "$OUT/program.sm_90" "$OUT/async" MOCK_CUDA_EMU="$OUT/emu.so"
  run_gpu amdgpu "$OUT/program.gfx90a" "$G/amdgpu/mock-hsa" MOCK_HSA_EMU="$OUT/emu.so" MOCK_HSA_GPUS=2
  # Buffers of one record: one buffer-complete per record.
  run_gpu cuda-1-record-buffers "$OUT/program.sm_90" "$G/mock-cuda" MOCK_CUDA_EMU="$OUT/emu.so" TRACE_BUFFER_RECORDS=1
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
