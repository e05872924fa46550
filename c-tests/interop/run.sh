#!/usr/bin/env bash
# c-tests/interop/run.sh - interop objects and kernel-language launches on the
# CUDA and HSA stand-ins. Needs target/release/libomptarget_rs.so
# and the gpu-images (c-tests/gpu-images.sh; c-tests/amdgpu-images.sh builds
# mock-hsa). Without them it prints "skipped". Checks:
#   1. interop_gpu table on mock-cuda and mock-hsa: identical under LLVM 22.1
#      and ours (every property's value class and return code), except the
#      AMDGPU targetsync object, which 22.1 leaves omp_interop_none and ours
#      gives an HSA queue: that part must equal table-hsa-targetsync.ours;
#   2. interop_gpu order on mock-cuda-async: work queued on the targetsync
#      stream is complete after `interop use` / `destroy`, callbacks run
#      (ours; 22.1 aborts at use/destroy of a CUDA targetsync object);
#   2b. interop_gpu order-hsa on mock-hsa with deferred completion: the
#      targetsync property is a real hsa_queue_t of the stand-in; AQL packets
#      the program publishes there are complete after `interop use` and
#      `destroy` (their completion handlers write device memory), `depend`
#      is waited for, `nowait` leaves the work queued, callbacks run (ours);
#   3. kernel-lang/scale.cu built with clang-22 -foffload-via-llvm for sm_90
#      (ptxas from the gpu-images wheel) runs on mock-cuda under LLVM and ours;
#      ours launches the whole <<<>>> configuration (shmem included).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
G=${1:-$ROOT/target/gpu-images}
LIB=$(readlink -f "${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}")
LLVM_DIR=/usr/lib/llvm-22/lib
if [ ! -e "$G/offload/wrap.sm_90.o" ] || [ ! -e "$G/mock-cuda/libcuda.so.1" ]; then
  echo "skipped: gpu-images not built (run c-tests/gpu-images.sh; looked in $G)"; exit 0
fi
[ -f "$LIB" ] || { echo "interop/run.sh: no runtime at $LIB" >&2; exit 2; }
W=$(mktemp -d /tmp/omptarget-rs-interop.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/shim"
ln -s "$LIB" "$W/shim/libomptarget.so.22.1"
pass=0 fail=0
ok() { echo "PASS  $1"; pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); [ -n "${2:-}" ] && [ -f "$2" ] && sed 's/^/      | /' "$2" | tail -n 20; }
S=$ROOT/c-tests/interop
for a in sm_90 gfx90a; do
  clang-22 -O1 -fopenmp "$S/interop_gpu.c" "$G/offload/wrap.$a.o" -o "$W/ig.$a" -ldl -lpthread -L$LLVM_DIR -lomptarget -Wl,-rpath,$LLVM_DIR 2>"$W/build.$a.log" || bad "build interop_gpu.$a" "$W/build.$a.log"
done
# 1. property tables
check_table() { # NAME MOCKDIR BIN ENV...
  local name=$1 mock=$2 bin=$3; shift 3
  env LD_LIBRARY_PATH="$mock" "$@" timeout 60 "$bin" table >"$W/$name.llvm" 2>&1
  env LD_LIBRARY_PATH="$W/shim:$mock" "$@" timeout 60 "$bin" table >"$W/$name.ours" 2>&1
  if [ -n "${SYNC_OURS:-}" ]; then
    # 22.1 gives no targetsync object here: compare the target part with it,
    # and ours' targetsync part with the recorded table.
    sed -n '/^targetsync:/,$p' "$W/$name.ours" >"$W/$name.sync"
    sed -i '/^targetsync:/,$d' "$W/$name.ours"
    grep -q '^targetsync: none$' "$W/$name.llvm" && sed -i '/^targetsync:/,$d' "$W/$name.llvm"
    if ! diff "$SYNC_OURS" "$W/$name.sync" >"$W/$name.sync.diff"; then bad "$name: targetsync object differs from ${SYNC_OURS#"$ROOT"/}" "$W/$name.sync.diff"; return; fi
  fi
  if ! grep -q '^target: object' "$W/$name.ours"; then bad "$name: no interop object" "$W/$name.ours"
  elif diff "$W/$name.llvm" "$W/$name.ours" >"$W/$name.diff"; then ok "$name: every property as LLVM 22.1 ($(grep -c property "$W/$name.ours") queries)${SYNC_OURS:+, targetsync as recorded}"
  else bad "$name: differs from LLVM 22.1" "$W/$name.diff"; fi
}
[ -x "$W/ig.sm_90" ] && check_table "interop table, mock-cuda" "$G/mock-cuda" "$W/ig.sm_90"
if [ -e "$G/amdgpu/mock-hsa/libhsa-runtime64.so.1" ] && [ -x "$W/ig.gfx90a" ]; then
  SYNC_OURS=$S/table-hsa-targetsync.ours check_table "interop table, mock-hsa" "$G/amdgpu/mock-hsa" "$W/ig.gfx90a" MOCK_HSA_EMU="$G/kernels/kernels.emu.so"
  LD_LIBRARY_PATH="$W/shim:$G/amdgpu/mock-hsa" MOCK_HSA_EMU="$G/kernels/kernels.emu.so" MOCK_HSA_DEFER=1 timeout 60 "$W/ig.gfx90a" order-hsa >"$W/order-hsa.log" 2>&1
  if [ $? -eq 0 ] && grep -q '^PASS' "$W/order-hsa.log" && ! grep -q WARNING "$W/order-hsa.log"; then
    ok "targetsync HSA queue on deferred mock-hsa: program's AQL packets done at use/destroy, depend waited, nowait left queued, 2 callbacks"
  else bad "targetsync ordering on mock-hsa" "$W/order-hsa.log"; fi
else echo "skipped: mock-hsa not built (c-tests/amdgpu-images.sh)"; fi
# 2. ordering on the deferring driver
A=$W/async
if [ -x "$W/ig.sm_90" ] && bash "$ROOT/c-tests/mock-cuda-async/build.sh" "$A" "$G/mock-cuda/libcuda.so.1" >"$W/async-build.log" 2>&1; then
  LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBCUDA="$A/libcuda-async.so" LIBCUDA="$A/libcuda-async.so" MOCK_ASYNC_NOT_READY=2 timeout 60 "$W/ig.sm_90" order >"$W/order.log" 2>&1
  if [ $? -eq 0 ] && grep -q '^PASS' "$W/order.log"; then ok "targetsync stream on mock-cuda-async: program's work done at use/destroy, 2 callbacks"
  else bad "targetsync ordering on mock-cuda-async" "$W/order.log"; fi
else echo "skipped: mock-cuda-async (build failed)"; fi
# 3. kernel-language launches
PTXAS=$(ls "$G"/tools/ptxas-13*/ptxas 2>/dev/null | head -n1)
K=$ROOT/c-tests/kernel-lang
if [ -n "$PTXAS" ] && PATH=$(dirname "$PTXAS"):$PATH clang-22 -x cuda --offload-arch=sm_90 -foffload-via-llvm -nogpulib --cuda-feature=+ptx80 \
     -fuse-ld=lld "$K/scale.cu" -o "$W/scale" -fopenmp -Wl,-rpath,$LLVM_DIR >"$W/kl-build.log" 2>&1 &&
   clang-22 -shared -fPIC -O1 "$K/scale_emu.c" -o "$W/scale_emu.so" >>"$W/kl-build.log" 2>&1; then
  ok "clang-22 -foffload-via-llvm builds scale.cu for sm_90 (ptxas $(basename "$(dirname "$PTXAS")"))"
  for who in llvm ours; do
    lp=$G/mock-cuda; [ $who = ours ] && lp=$W/shim:$lp
    LD_LIBRARY_PATH=$lp MOCK_CUDA_EMU="$W/scale_emu.so" MOCK_CUDA_LOG="$W/kl.$who.launches" timeout 60 "$W/scale" >"$W/kl.$who" 2>&1
    echo "rc $?" >>"$W/kl.$who"
  done
  if grep -q '^PASS' "$W/kl.ours" && diff "$W/kl.llvm" "$W/kl.ours" >/dev/null; then ok "scale.cu on mock-cuda: same output and exit as LLVM 22.1: $(head -n1 "$W/kl.ours")"
  else bad "scale.cu on mock-cuda differs from LLVM 22.1" "$W/kl.ours"; fi
  if grep -q 'launch kl_scale grid=(4,1,1) block=(32,1,1) shmem=0 params(extra buffer)=24B: 0x64 0x[0-9a-f]* 0x3$' "$W/kl.ours.launches" &&
     grep -q 'launch kl_mixed grid=(1,1,1) block=(1,1,1) shmem=64 params(extra buffer)=16B: 0x4000000000000007 ' "$W/kl.ours.launches"; then
    ok "kernel-language launches: grid, block, shmem and the packed argument buffer reach cuLaunchKernel"
  else bad "kernel-language launch lines" "$W/kl.ours.launches"; fi
else
  bad "build scale.cu with -foffload-via-llvm" "$W/kl-build.log"
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
