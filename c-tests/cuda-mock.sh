#!/usr/bin/env bash
# cuda-mock.sh - the CUDA plugin's whole path without a GPU.
#
# Runs the gpu-images CUDA harnesses (harness.sm_90*: register, map, launch
# through the libomptarget ABI exactly like rustc's codegen) against OUR
# runtime in library-path replacement mode, with mock-cuda (a CPU stand-in
# for libcuda.so.1 that runs the cubin's kernels on the CPU) as the driver,
# plus the no-driver, wrong-driver, failing-cuInit and incompatible-device
# paths, the harnesses again on mock-cuda-async (a layer that defers stream
# work until it is waited for), and a smoke run of the CUDA benchmark (built
# here by bench/cuda/build.sh).
#
#   c-tests/cuda-mock.sh [GPU_IMAGES_DIR]     (default target/gpu-images)
#
# Needs target/release/libomptarget_rs.so (cargo build --release; or
# $OMPTARGET_RS_LIB) and the images (c-tests/gpu-images.sh). Prints one
# PASS/FAIL line per check and "N passed, N failed"; exits 1 on failure.
# Without the images it prints "skipped: gpu-images not built" and exits 0.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
G=${1:-$ROOT/target/gpu-images}
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
TMO=${HARNESS_TIMEOUT:-120}

if [ ! -e "$G/bin/harness.sm_90" ] || [ ! -e "$G/mock-cuda/libcuda.so.1" ]; then
  echo "skipped: gpu-images not built (run c-tests/gpu-images.sh; looked in $G)"
  exit 0
fi
G=$(cd "$G" && pwd)
[ -f "$LIB" ] || { echo "cuda-mock.sh: no runtime at $LIB (cargo build --release)" >&2; exit 2; }
LIB=$(readlink -f "$LIB")

W=$(mktemp -d /tmp/omptarget-rs-cuda-mock.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/shim" "$W/logs"
ln -s "$LIB" "$W/shim/libomptarget.so.22.1"
MOCK=$G/mock-cuda
K=$G/kernels

pass=0 fail=0
ok() { echo "PASS  $1"; pass=$((pass + 1)); }
bad() {
  echo "FAIL  $1: $2"; fail=$((fail + 1))
  [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/      | /' "$3" | tail -n 25
}

# run LOG ENV... -- CMD...: runs with our runtime first on the library path.
run() {
  local log=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  # A subshell, so the shell's "Aborted" notice for expected aborts lands in the log.
  ( env "${envs[@]}" timeout "$TMO" "$@"; exit $? ) >"$log" 2>&1
}
summary() { grep -E '^[0-9]+ passed' "$1" || echo "no summary"; }

# --- 1. the harnesses, 7/7 each, as with LLVM's runtime ----------------------
for h in sm_90 sm_90.cuda12 sm_90.nodyn sm_90.nodyn.cuda12 sm_90.manual; do
  [ -e "$G/bin/harness.$h" ] || { bad "harness.$h" "not built"; continue; }
  emu=$K/kernels.emu.so
  [[ $h == *nodyn* ]] && emu=$K/kernels.emu.nodyn.so
  variants=("")
  [ "$h" = sm_90 ] && variants+=("--rustc-init")
  for a in "${variants[@]}"; do
    log=$W/logs/$h$a.log
    run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_CUDA_EMU="$emu" LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.$h" $a
    rc=$?
    name="harness.$h $a (mock-cuda): $(summary "$log")"
    if [ $rc -ne 0 ] || ! grep -q '^7 passed, 0 failed' "$log"; then
      bad "$name" "exit $rc" "$log"
    elif ! grep -q 'omptarget-rs debug: cuda: device 0: loaded sm_90 cubin' "$log"; then
      bad "$name" "our runtime's CUDA plugin did not serve it" "$log"
    elif grep -q '\[mock-cuda\] WARNING' "$log"; then
      bad "$name" "mock-cuda warned" "$log"
    else
      ok "$name"
    fi
  done
done

# Our runtime also unwraps a whole OffloadBinary handed to __tgt_register_lib.
log=$W/logs/container.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_CUDA_EMU="$K/kernels.emu.so" HARNESS_PASS_CONTAINER=1 -- "$G/bin/harness.sm_90.manual"
rc=$?
if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$log"; then ok "harness.sm_90.manual, whole OffloadBinary registered: $(summary "$log")"
else bad "harness.sm_90.manual, whole OffloadBinary registered" "exit $rc" "$log"; fi

# --- 2. the driver named by OMPTARGET_RS_LIBCUDA, not on the library path -----
log=$W/logs/override.log
run "$log" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBCUDA="$MOCK/libcuda.so.1" MOCK_CUDA_EMU="$K/kernels.emu.so" -- "$G/bin/harness.sm_90"
rc=$?
if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$log"; then ok "OMPTARGET_RS_LIBCUDA=mock-cuda: $(summary "$log")"
else bad "OMPTARGET_RS_LIBCUDA=mock-cuda" "exit $rc" "$log"; fi

# --- 3. INFO launch lines in LLVM's format ------------------------------------
log=$W/logs/info.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_CUDA_EMU="$K/kernels.emu.so" LIBOMPTARGET_INFO=16 -- "$G/bin/harness.sm_90"
want='"PluginInterface" device 0 info: Launching kernel saxpy with [64,1,1] blocks and [128,1,1] threads in BARE mode'
if grep -qF "$want" "$log" && grep -qF 'Launching kernel launch_dims with [3,2,2] blocks and [8,4,2] threads in BARE mode' "$log"; then
  ok "LIBOMPTARGET_INFO=16 launch lines (bare kernels: exactly the requested grid)"
else bad "LIBOMPTARGET_INFO=16 launch lines" "missing: $want" "$log"; fi

# --- 4. no driver: 0 CUDA devices, host plugin unaffected ---------------------
log=$W/logs/nodriver-cuda.log
run "$log" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBCUDA=/nonexistent/libcuda.so.1 LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.sm_90"
rc=$?
if [ $rc -ne 134 ] && [ $rc -ne 139 ] && grep -q 'omp_get_num_devices()=0' "$log" &&
   grep -q 'cuda: plugin unavailable, 0 CUDA devices: .*cannot open /nonexistent/libcuda.so.1' "$log"; then
  ok "no libcuda: sm_90 image registers on 0 devices, one debug line, no crash (exit $rc)"
else bad "no libcuda, sm_90 image" "exit $rc" "$log"; fi
for a in "" "--rustc-init"; do
  log=$W/logs/nodriver-host$a.log
  run "$log" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBCUDA=/nonexistent/libcuda.so.1 -- "$G/bin/harness.x86_64" $a
  rc=$?
  if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$log"; then ok "no libcuda: harness.x86_64 $a (host plugin): $(summary "$log")"
  else bad "no libcuda: harness.x86_64 $a" "exit $rc" "$log"; fi
done

# --- 5. host-only programs never touch libcuda, even with one present ---------
log=$W/logs/host-untouched.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_CUDA_TRACE=1 LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.x86_64" --rustc-init
rc=$?
if [ $rc -eq 0 ] && grep -q 'omp_get_num_devices()=4' "$log" && ! grep -q '\[mock-cuda\]' "$log" && ! grep -q 'cuda: trying' "$log"; then
  ok "host-only program with __tgt_init_all_rtls: 4 devices, libcuda never opened"
else bad "host-only program leaves libcuda alone" "exit $rc" "$log"; fi

# --- 6. a library without the driver's symbols --------------------------------
libm=$(ldconfig -p 2>/dev/null | awk '/libm\.so\.6 .*x86-64/{print $NF; exit}')
log=$W/logs/nosymbols.log
run "$log" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBCUDA="${libm:-libm.so.6}" LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.sm_90"
rc=$?
if [ $rc -ne 134 ] && grep -q "0 CUDA devices: symbol 'cuInit' not found" "$log" && grep -q 'omp_get_num_devices()=0' "$log"; then
  ok "driver without required symbols: 0 CUDA devices, one debug line"
else bad "driver without required symbols" "exit $rc" "$log"; fi

# --- 7. a driver whose cuInit fails -------------------------------------------
CC=${CC:-$(command -v clang-22 || command -v cc || command -v gcc)}
stub_ok=0
if [ -n "$CC" ]; then
  {
    echo 'int cuInit(unsigned f) { (void)f; return 100; /* CUDA_ERROR_NO_DEVICE */ }'
    echo 'const char *omptarget_rs_stub;'
    for s in cuDeviceGet cuDeviceGetCount cuDeviceGetAttribute cuDevicePrimaryCtxRetain cuCtxSetCurrent \
             cuModuleLoadDataEx cuModuleGetFunction cuModuleGetGlobal_v2 cuLaunchKernel cuStreamCreate \
             cuStreamSynchronize cuMemAlloc_v2 cuMemAllocHost_v2 cuMemFree_v2 cuMemFreeHost \
             cuMemcpyHtoDAsync_v2 cuMemcpyDtoHAsync_v2 cuMemcpyDtoDAsync_v2 cuMemsetD8Async; do
      echo "int $s(void) { return 999; }"
    done
  } > "$W/stub.c"
  "$CC" -shared -fPIC -o "$W/libcuda-failing.so" "$W/stub.c" 2>"$W/logs/stub-build.log" && stub_ok=1
fi
if [ $stub_ok = 1 ]; then
  log=$W/logs/cuinit.log
  run "$log" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBCUDA="$W/libcuda-failing.so" LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.sm_90"
  rc=$?
  if [ $rc -ne 134 ] && grep -q '0 CUDA devices: cuda: error in cuInit: CUDA_ERROR_NO_DEVICE: CUDA error 100' "$log"; then
    ok "failing cuInit: 0 CUDA devices, one debug line"
  else bad "failing cuInit" "exit $rc" "$log"; fi
else
  bad "failing cuInit" "could not build the stub driver" "$W/logs/stub-build.log"
fi

# --- 8. no device fits the image ----------------------------------------------
log=$W/logs/sm80.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_CUDA_SM=80 LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.sm_90"
rc=$?
if [ $rc -ne 134 ] && grep -q 'omp_get_num_devices()=0' "$log" &&
   grep -q 'CUDA image for sm_90 (sm_90 cubin (ELF ABI v2)) is not compatible with any CUDA device: device 0 is sm_80 (compute capability 8.0)' "$log"; then
  ok "sm_90 image on an sm_80 device: 0 devices, message names both archs"
else bad "sm_90 image on an sm_80 device" "exit $rc" "$log"; fi
log=$W/logs/sm80-mandatory.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_CUDA_SM=80 OMP_TARGET_OFFLOAD=mandatory -- "$G/bin/harness.sm_90"
rc=$?
if [ $rc -eq 134 ] && grep -q 'omptarget fatal error 1: failure of target construct while offloading is mandatory' "$log"; then
  ok "... and with OMP_TARGET_OFFLOAD=mandatory: aborts like LLVM (exit 134)"
else bad "sm_80 device, mandatory offload" "exit $rc" "$log"; fi

# --- 9. a driver that defers stream work until it is waited for --------------
# c-tests/mock-cuda-async over mock-cuda: copies, fills, launches and event
# waits run only at stream/event/context synchronisation or cuStreamQuery, so
# a missing synchronisation in the plugin or the runtime loses data here.
A=$W/async
if bash "$ROOT/c-tests/mock-cuda-async/build.sh" "$A" "$MOCK/libcuda.so.1" >"$W/logs/async-build.log" 2>&1; then
  if "$A/lookup_check" "$A/libcuda-async.so" "$MOCK/libcuda.so.1" >"$W/logs/async-lookup.log" 2>&1; then
    ok "mock-cuda-async lookup order: its overrides first, the rest (and RTLD_NEXT) from mock-cuda"
  else bad "mock-cuda-async lookup order" "wrong" "$W/logs/async-lookup.log"; fi
  for h in sm_90 sm_90.cuda12 sm_90.nodyn sm_90.manual; do
    [ -e "$G/bin/harness.$h" ] || continue
    emu=$K/kernels.emu.so
    [[ $h == *nodyn* ]] && emu=$K/kernels.emu.nodyn.so
    for nr in 0 3; do
      log=$W/logs/async-$h-$nr.log
      run "$log" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBCUDA="$A/libcuda-async.so" MOCK_CUDA_EMU="$emu" MOCK_ASYNC_NOT_READY=$nr LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.$h"
      rc=$?
      name="harness.$h on mock-cuda-async (MOCK_ASYNC_NOT_READY=$nr): $(summary "$log")"
      if [ $rc -ne 0 ] || ! grep -q '^7 passed, 0 failed' "$log"; then bad "$name" "exit $rc" "$log"
      elif ! grep -q "cuda: opened $A/libcuda-async.so" "$log"; then bad "$name" "the deferring driver was not used" "$log"
      elif grep -q 'WARNING' "$log"; then bad "$name" "a stand-in warned" "$log"
      else ok "$name"; fi
    done
  done
elif grep -q 'no C compiler' "$W/logs/async-build.log"; then
  echo "skipped: mock-cuda-async (no C compiler)"
else
  bad "mock-cuda-async build" "failed" "$W/logs/async-build.log"
fi

# --- 10. the CUDA benchmark, smoke run on the mock ----------------------------
B=$ROOT/target/bench-cuda/bench_cuda
if [ ! -x "$B" ] || [ "$ROOT/bench/cuda/bench_cuda.c" -nt "$B" ]; then
  bash "$ROOT/bench/cuda/build.sh" "$LIB" >"$W/logs/bench-build.log" 2>&1 || bad "bench/cuda/build.sh" "build failed" "$W/logs/bench-build.log"
fi
if [ -x "$B" ] && [ -e "$G/extra/empty.sm_90.cubin" ]; then
  log=$W/logs/bench.log
  run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" BENCH_CUDA_QUICK=1 -- "$B" --image "$G/extra/empty.sm_90.cubin"
  rc=$?
  if [ $rc -eq 0 ] && grep -q '^launch' "$log" && grep -q 'H2D pinned' "$log"; then ok "bench_cuda smoke run on mock-cuda"
  else bad "bench_cuda smoke run on mock-cuda" "exit $rc" "$log"; fi
else
  echo "skipped: bench_cuda smoke (not built, or no extra/empty.sm_90.cubin)"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
