#!/usr/bin/env bash
# rustc.sh - the newest rustc's offload call sequence (seed 000, rustc's
# gpu_offload.rs) on the host plugin and on both GPU stand-ins
# (mock-cuda, mock-cuda-async, mock-hsa), through OUR runtime.
#
# The gpu-images harness with --rustc-exact makes every launch exactly the
# seed's shape: __tgt_target_data_begin_mapper on device -1 with the begin map
# types (TO|LITERAL|IMPLICIT bits), __tgt_target_kernel on the user-chosen
# device (--kernel-device=N) with TARGET_PARAM(|LITERAL|IMPLICIT) types, a
# scalar's value in its base pointer and a stack slot's address in its
# pointer, Flags = 1<<6, 3-D NumTeams/ThreadLimit with num_teams/thread_limit
# their products, DynCGroupMem != 0, then __tgt_target_data_end_mapper on
# device -1 with the end types (FROM bits, 0 for inputs and scalars). Its 7
# kernels (saxpy, 1-D and 3-D launch_dims, globals, many_args with an f64
# scalar) plus an f16 scalar: 8 checks per run. Then the kernel on another
# device than the mappers' one: a clear error naming the argument and both
# devices. The older seed (001) is replayed by tests/rustc_offload.rs on the
# host plugin (its kernels take pointers only; the gpu-images kernels do not).
#
#   c-tests/gpu/services.d/rustc.sh [GPU_IMAGES_DIR]   (default target/gpu-images)
#
# Prints `PASS name` / `FAIL name` / `SKIP name` lines and "N passed, M
# failed"; exits 1 on a failure. Needs target/release/libomptarget_rs.so
# ($OMPTARGET_RS_LIB) and the images (c-tests/gpu-images.sh,
# c-tests/amdgpu-images.sh); what is missing says SKIP.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
G=${1:-${GPU_IMAGES:-$ROOT/target/gpu-images}}
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
TMO=${HARNESS_TIMEOUT:-120}

pass=0 fail=0 skip=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() {
  echo "FAIL $1: $2"; fail=$((fail + 1))
  [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/      | /' "$3" | tail -n 20
}
skipped() { echo "SKIP $1: $2"; skip=$((skip + 1)); }
finish() { echo "rustc: $pass passed, $fail failed, $skip skipped"; [ "$fail" = 0 ]; exit $?; }

K=$G/kernels
MOCK=$G/mock-cuda
HSA=$G/amdgpu/mock-hsa
if [ ! -f "$LIB" ] || [ ! -e "$G/bin/harness.x86_64" ]; then
  why="no runtime at $LIB or gpu-images not built (cargo build --release; c-tests/gpu-images.sh)"
  for c in host host.other-device mock-cuda mock-cuda.other-device mock-cuda-async mock-hsa mock-hsa.other-device; do
    skipped "rustc.$c" "$why"
  done
  finish
fi
if ! "$G/bin/harness.x86_64" --rustc-exact --help 2>&1 | grep -- '--kernel-device' >/dev/null; then
  # An image build older than --rustc-exact: rebuild it.
  bash "$ROOT/c-tests/gpu-images.sh" "$G" >/dev/null 2>&1
fi
LIB=$(readlink -f "$LIB")
W=$(mktemp -d /tmp/omptarget-rs-rustc.XXXXXX)
[ -n "${KEEP:-}" ] && echo "rustc: work files in $W" || trap 'rm -rf "$W"' EXIT
mkdir -p "$W/shim"
ln -s "$LIB" "$W/shim/libomptarget.so.22.1"

run() { # run LOG ENV... -- CMD...
  local log=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  ( env LIBOMPTARGET_DEBUG=1 "${envs[@]}" timeout "$TMO" "$@"; exit $? ) >"$log" 2>&1
}
# exact NAME SERVED-BY ENV... -- HARNESS: 8/8 in the seed's shape, served by our plugin.
exact() {
  local name=$1 served=$2; shift 2
  local log=$W/$name.log
  run "$log" "$@" --rustc-exact --kernel-device=0 --dyn-cgroup-mem=64
  local rc=$?
  if [ $rc -ne 0 ] || ! grep -q '^8 passed, 0 failed' "$log"; then bad "rustc.$name" "exit $rc, not 8/8" "$log"
  elif ! grep -q "$served" "$log"; then bad "rustc.$name" "no '$served': not our runtime's plugin?" "$log"
  elif ! grep -q "rustc-exact: mappers on device -1, kernel on device 0, Flags 1<<6, DynCGroupMem 64" "$log" ||
       ! grep -q "__tgt_target_kernel: region .* on device 0, version 3, .*teams \[3, 2, 2\], threads \[8, 4, 2\]" "$log"; then
    bad "rustc.$name" "not the seed's shape (harness without --rustc-exact, or no 3-D launch)" "$log"
  else ok "rustc.$name: seed 000's sequence, 8/8 (mappers on -1, kernel on device 0, Flags 1<<6, 3-D, DynCGroupMem 64, f64/f16 scalars)"; fi
}
# other_device NAME ENV... -- HARNESS: the kernel on device 1 (2), the data on 0: a clear error.
other_device() {
  local name=$1 dev=$2; shift 2
  local log=$W/$name.log
  run "$log" "$@" --rustc-exact --kernel-device="$dev"
  local rc=$?
  if [ $rc -eq 0 ]; then bad "rustc.$name" "ran although the data is on another device" "$log"
  elif ! grep -q "kernel argument 0 (host 0x[0-9a-f]*, [0-9]* bytes) is mapped on device 0, where the data mappers put it, but the kernel runs on device $dev" "$log"; then
    bad "rustc.$name" "no clear error naming the argument and the devices" "$log"
  else ok "rustc.$name: kernel on device $dev, data on device 0: $(grep -o 'kernel argument 0 .*device [0-9]*:' "$log" | head -n1 | cut -c1-60)..."; fi
}

# --- host plugin (4 devices) ----------------------------------------------------
exact host "host plugin: loaded image" LD_LIBRARY_PATH="$W/shim" -- "$G/bin/harness.x86_64"
other_device host.other-device 2 LD_LIBRARY_PATH="$W/shim" -- "$G/bin/harness.x86_64"

# --- mock-cuda ---------------------------------------------------------------------
if [ -e "$MOCK/libcuda.so.1" ] && [ -e "$G/bin/harness.sm_90" ]; then
  exact mock-cuda "cuda: device 0: loaded sm_90 cubin" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_CUDA_EMU="$K/kernels.emu.so" -- "$G/bin/harness.sm_90"
  other_device mock-cuda.other-device 1 LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_CUDA_EMU="$K/kernels.emu.so" MOCK_CUDA_DEVICES=2 -- "$G/bin/harness.sm_90"
  A=$W/async
  if bash "$ROOT/c-tests/mock-cuda-async/build.sh" "$A" "$MOCK/libcuda.so.1" >"$W/async-build.log" 2>&1; then
    exact mock-cuda-async "cuda: opened $A/libcuda-async.so" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBCUDA="$A/libcuda-async.so" \
      MOCK_CUDA_EMU="$K/kernels.emu.so" -- "$G/bin/harness.sm_90"
  else skipped rustc.mock-cuda-async "mock-cuda-async did not build"; fi
else
  for c in mock-cuda mock-cuda.other-device mock-cuda-async; do skipped "rustc.$c" "mock-cuda not built (c-tests/gpu-images.sh)"; done
fi

# --- mock-hsa ----------------------------------------------------------------------
if [ -e "$HSA/libhsa-runtime64.so.1" ] && [ -e "$G/bin/harness.gfx90a" ]; then
  HENV=(LD_LIBRARY_PATH="$W/shim:$HSA" MOCK_HSA_ISA="gfx90a:sramecc+:xnack-" MOCK_HSA_EMU="$K/kernels.emu.so")
  exact mock-hsa "amdgpu: device 0" "${HENV[@]}" -- "$G/bin/harness.gfx90a"
  other_device mock-hsa.other-device 1 "${HENV[@]}" MOCK_HSA_GPUS=2 -- "$G/bin/harness.gfx90a"
else
  for c in mock-hsa mock-hsa.other-device; do skipped "rustc.$c" "mock-hsa not built (c-tests/amdgpu-images.sh)"; done
fi
finish
