#!/usr/bin/env bash
# amdgpu-mock.sh - the AMDGPU plugin's whole path without an AMD GPU.
#
# Runs the gpu-images AMDGPU harnesses (harness.gfx90a*, harness.gfx942*:
# register, map, launch through the libomptarget ABI exactly like rustc's
# codegen) against OUR runtime in library-path replacement mode, with
# mock-hsa (c-tests/mock-hsa: a CPU stand-in for libhsa-runtime64 that loads
# the code object, checks every AQL packet and its kernarg segment, and runs
# a host build of the same kernels) as the HSA runtime; first the same
# harnesses against LLVM 22.1's own libomptarget on the mock, to show the mock
# behaves as LLVM's AMDGPU plugin expects. Then the no-runtime, failing
# hsa_init, wrong-library, Debian libhsa-runtime64-1 (hsa_init fails without
# /dev/kfd), incompatible-ISA, locked-copy, GPU-fault/trap (compared with
# 22.1's report) and deferred-completion paths.
#
#   c-tests/amdgpu-mock.sh [GPU_IMAGES_DIR]     (default target/gpu-images)
#
# Needs target/release/libomptarget_rs.so (cargo build --release; or
# $OMPTARGET_RS_LIB) and the images (c-tests/gpu-images.sh); builds mock-hsa
# and the extra code objects itself (c-tests/amdgpu-images.sh). Prints one
# PASS/FAIL line per check and "N passed, N failed"; exits 1 on failure.
# Without the images it prints "skipped: gpu-images not built" and exits 0.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
G=${1:-$ROOT/target/gpu-images}
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
TMO=${HARNESS_TIMEOUT:-120}
LLVM_LIB=${LLVM_LIBOMPTARGET:-/usr/lib/llvm-22/lib/libomptarget.so.22.1}

if [ ! -e "$G/bin/harness.gfx90a" ] || [ ! -e "$G/kernels/kernels.emu.so" ]; then
  echo "skipped: gpu-images not built (run c-tests/gpu-images.sh; looked in $G)"
  exit 0
fi
G=$(cd "$G" && pwd)
[ -f "$LIB" ] || { echo "amdgpu-mock.sh: no runtime at $LIB (cargo build --release)" >&2; exit 2; }
LIB=$(readlink -f "$LIB")
bash "$ROOT/c-tests/amdgpu-images.sh" "$G" >/dev/null || { echo "FAIL  c-tests/amdgpu-images.sh"; echo "0 passed, 1 failed"; exit 1; }

W=$(mktemp -d /tmp/omptarget-rs-amdgpu-mock.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/shim" "$W/logs" "$W/empty"
ln -s "$LIB" "$W/shim/libomptarget.so.22.1"
MOCK=$G/amdgpu/mock-hsa
K=$G/kernels

pass=0 fail=0
ok() { echo "PASS  $1"; pass=$((pass + 1)); }
bad() {
  echo "FAIL  $1: $2"; fail=$((fail + 1))
  [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/      | /' "$3" | tail -n 25
}
# run LOG ENV... -- CMD...
run() {
  local log=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  ( env "${envs[@]}" timeout "$TMO" "$@"; exit $? ) >"$log" 2>&1
}
summary() { grep -E '^[0-9]+ passed' "$1" || echo "no summary"; }
isa_of() { case $1 in gfx942*) echo "gfx942:sramecc+:xnack-" ;; *) echo "gfx90a:sramecc+:xnack-" ;; esac; }
emu_of() { case $1 in *nodyn*) echo "$K/kernels.emu.nodyn.so" ;; *) echo "$K/kernels.emu.so" ;; esac; }
HARNESSES=(gfx90a gfx90a.nodyn gfx942 gfx942.nodyn)

# --- 0. the mock under LLVM 22.1's own AMDGPU plugin (reference) -------------
if [ -f "$LLVM_LIB" ]; then
  for h in "${HARNESSES[@]}"; do
    log=$W/logs/llvm.$h.log
    run "$log" LD_LIBRARY_PATH="$(dirname "$LLVM_LIB"):$MOCK" MOCK_HSA_ISA="$(isa_of $h)" MOCK_HSA_EMU="$(emu_of $h)" -- "$G/bin/harness.$h"
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$log" && ! grep -q '\[mock-hsa\] WARNING' "$log"; then
      ok "reference: harness.$h on LLVM 22.1's libomptarget + mock-hsa: $(summary "$log")"
    else bad "reference: harness.$h on LLVM 22.1's libomptarget + mock-hsa" "exit $rc" "$log"; fi
  done
else
  echo "skipped: reference runs (no $LLVM_LIB)"
fi

# --- 1. the harnesses through our runtime, 7/7 each ---------------------------
for h in "${HARNESSES[@]}"; do
  variants=("")
  [ "$h" = gfx90a ] && variants+=("--rustc-init")
  for a in "${variants[@]}"; do
    log=$W/logs/$h$a.log
    run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_HSA_ISA="$(isa_of $h)" MOCK_HSA_EMU="$(emu_of $h)" LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.$h" $a
    rc=$?
    name="harness.$h $a (mock-hsa): $(summary "$log")"
    if [ $rc -ne 0 ] || ! grep -q '^7 passed, 0 failed' "$log"; then
      bad "$name" "exit $rc" "$log"
    elif ! grep -q "omptarget-rs debug: amdgpu: device 0: loaded ${h%%.*} code object v6" "$log"; then
      bad "$name" "our runtime's AMDGPU plugin did not serve it" "$log"
    elif grep -q '\[mock-hsa\] WARNING' "$log"; then
      bad "$name" "mock-hsa warned" "$log"
    else
      ok "$name"
    fi
  done
done

# --- 2. transfers through locked host memory (agent pointers) ----------------
log=$W/logs/locked.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_HSA_EMU="$K/kernels.emu.so" LIBOMPTARGET_AMDGPU_MAX_ASYNC_COPY_BYTES=1 MOCK_HSA_TRACE=1 -- "$G/bin/harness.gfx90a"
rc=$?
if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$log" && grep -q 'hsa_amd_memory_lock' "$log" && ! grep -q '\[mock-hsa\] WARNING' "$log"; then
  ok "every transfer through hsa_amd_memory_lock (MAX_ASYNC_COPY_BYTES=1): $(summary "$log")"
else bad "transfers through locked memory" "exit $rc" "$log"; fi

# --- 3. the library named by OMPTARGET_RS_LIBHSA, not on the library path -----
log=$W/logs/override.log
run "$log" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBHSA="$MOCK/libhsa-runtime64.so.1" MOCK_HSA_EMU="$K/kernels.emu.so" -- "$G/bin/harness.gfx90a"
rc=$?
if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$log"; then ok "OMPTARGET_RS_LIBHSA=mock-hsa: $(summary "$log")"
else bad "OMPTARGET_RS_LIBHSA=mock-hsa" "exit $rc" "$log"; fi

# --- 4. INFO launch lines and the dispatch log (bare: exactly the grid asked) --
log=$W/logs/info.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_HSA_EMU="$K/kernels.emu.so" MOCK_HSA_LOG="$W/logs/dispatch.txt" LIBOMPTARGET_INFO=16 -- "$G/bin/harness.gfx90a"
want='"PluginInterface" device 0 info: Launching kernel saxpy with [64,1,1] blocks and [128,1,1] threads in BARE mode'
if grep -qF "$want" "$log" && grep -qF 'Launching kernel launch_dims with [3,2,2] blocks and [8,4,2] threads in BARE mode' "$log" &&
   grep -qF '#Args: 5 Teams x Thrds:   64x 128 (MaxFlatWorkGroupSize: 1024)' "$log" &&
   grep -q '^launch saxpy grid=(64,1,1) block=(128,1,1) group=0 kernarg=296 args: 0xffffffffffffffff ' "$W/logs/dispatch.txt" &&
   grep -q '^launch launch_dims grid=(3,2,2) block=(8,4,2)' "$W/logs/dispatch.txt"; then
  ok "LIBOMPTARGET_INFO=16 launch lines and AQL dispatches (bare kernels: exactly the requested grid)"
else bad "INFO launch lines / dispatch log" "missing: $want" "$log"; fi

# --- 5. no HSA runtime: 0 AMDGPU devices, host plugin unaffected ---------------
log=$W/logs/nolib.log
run "$log" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBHSA=/nonexistent/libhsa-runtime64.so.1 LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.gfx90a"
rc=$?
if [ $rc -ne 134 ] && [ $rc -ne 139 ] && grep -q 'omp_get_num_devices()=0' "$log" &&
   [ "$(grep -c 'amdgpu: plugin unavailable, 0 AMDGPU devices: .*cannot open /nonexistent/libhsa-runtime64.so.1' "$log")" = 1 ]; then
  ok "no libhsa: gfx90a image registers on 0 devices, one debug line, no crash (exit $rc)"
else bad "no libhsa, gfx90a image" "exit $rc" "$log"; fi
for a in "" "--rustc-init"; do
  log=$W/logs/nolib-host$a.log
  run "$log" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBHSA=/nonexistent/libhsa-runtime64.so.1 -- "$G/bin/harness.x86_64" $a
  rc=$?
  if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$log"; then ok "no libhsa: harness.x86_64 $a (host plugin): $(summary "$log")"
  else bad "no libhsa: harness.x86_64 $a" "exit $rc" "$log"; fi
done

# --- 6. hsa_init fails (a machine without /dev/kfd) ----------------------------
log=$W/logs/initfail.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_HSA_INIT_FAIL=1 LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.gfx90a"
rc=$?
if [ $rc -ne 134 ] && grep -q 'omp_get_num_devices()=0' "$log" &&
   grep -q '0 AMDGPU devices: amdgpu: error in hsa_init: HSA_STATUS_ERROR_OUT_OF_RESOURCES' "$log"; then
  ok "failing hsa_init (mock): 0 AMDGPU devices, one debug line with hsa_status_string's text"
else bad "failing hsa_init (mock)" "exit $rc" "$log"; fi

# Debian's libhsa-runtime64-1 (ROCm 5.2) on this GPU-less machine: hsa_init fails.
SYS=$(ldconfig -p 2>/dev/null | awk '/libhsa-runtime64\.so\.1 .*x86-64/{print $NF; exit}')
if [ -n "$SYS" ]; then
  log=$W/logs/debian.log
  run "$log" LD_LIBRARY_PATH="$W/shim" LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.gfx90a"
  rc=$?
  if [ -e /dev/kfd ]; then
    echo "skipped: Debian libhsa-runtime64 check (this machine has /dev/kfd)"
  elif [ $rc -ne 134 ] && [ $rc -ne 139 ] && grep -q 'omp_get_num_devices()=0' "$log" &&
     grep -q 'amdgpu: opened libhsa-runtime64.so.1' "$log" && grep -q '0 AMDGPU devices: amdgpu: error in hsa_init: ' "$log"; then
    ok "Debian libhsa-runtime64-1 ($SYS): hsa_init fails, 0 AMDGPU devices, no crash (exit $rc)"
  else bad "Debian libhsa-runtime64-1" "exit $rc" "$log"; fi
  log=$W/logs/debian-host.log
  run "$log" LD_LIBRARY_PATH="$W/shim" -- "$G/bin/harness.x86_64" --rustc-init
  rc=$?
  if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$log"; then ok "Debian libhsa-runtime64-1 installed: harness.x86_64 --rustc-init: $(summary "$log")"
  else bad "Debian libhsa-runtime64-1 installed: harness.x86_64" "exit $rc" "$log"; fi
else
  echo "skipped: Debian libhsa-runtime64-1 not installed (apt-get install libhsa-runtime64-1)"
fi

# --- 7. a library without the runtime's symbols --------------------------------
libm=$(ldconfig -p 2>/dev/null | awk '/libm\.so\.6 .*x86-64/{print $NF; exit}')
log=$W/logs/nosymbols.log
run "$log" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBHSA="${libm:-libm.so.6}" LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.gfx90a"
rc=$?
if [ $rc -ne 134 ] && grep -q "0 AMDGPU devices: symbol 'hsa_init' not found" "$log" && grep -q 'omp_get_num_devices()=0' "$log"; then
  ok "library without the HSA symbols: 0 AMDGPU devices, one debug line"
else bad "library without the HSA symbols" "exit $rc" "$log"; fi

# --- 8. host-only programs never touch libhsa, even with one present ----------
log=$W/logs/host-untouched.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_HSA_TRACE=1 LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.x86_64" --rustc-init
rc=$?
if [ $rc -eq 0 ] && grep -q 'omp_get_num_devices()=4' "$log" && ! grep -q '\[mock-hsa\]' "$log" && ! grep -q 'amdgpu: trying' "$log"; then
  ok "host-only program with __tgt_init_all_rtls: 4 devices, libhsa never opened"
else bad "host-only program leaves libhsa alone" "exit $rc" "$log"; fi

# --- 9. no agent fits the image -------------------------------------------------
log=$W/logs/wrong-isa.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_HSA_ISA=gfx942:sramecc+:xnack- LIBOMPTARGET_DEBUG=1 -- "$G/bin/harness.gfx90a"
rc=$?
if [ $rc -ne 134 ] && grep -q 'omp_get_num_devices()=0' "$log" &&
   grep -q 'AMDGPU image for gfx90a (gfx90a code object v6) is not compatible with any AMDGPU device: device 0 is gfx942:sramecc+:xnack-' "$log"; then
  ok "gfx90a image on a gfx942 agent: 0 devices, message names both"
else bad "gfx90a image on a gfx942 agent" "exit $rc" "$log"; fi
log=$W/logs/xnack.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_HSA_ISA=gfx90a:sramecc+:xnack+ LIBOMPTARGET_DEBUG=1 MOCK_HSA_EMU="$K/kernels.emu.so" -- "$G/bin/harness.gfx90a"
rc=$?
if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$log"; then ok "xnack-any image on an xnack+ agent runs: $(summary "$log")"
else bad "xnack-any image on an xnack+ agent" "exit $rc" "$log"; fi
log=$W/logs/wrong-isa-mandatory.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_HSA_ISA=gfx942:sramecc+:xnack- OMP_TARGET_OFFLOAD=mandatory -- "$G/bin/harness.gfx90a"
rc=$?
if [ $rc -eq 134 ] && grep -q 'omptarget fatal error 1: failure of target construct while offloading is mandatory' "$log"; then
  ok "... and with OMP_TARGET_OFFLOAD=mandatory: aborts like LLVM (exit 134)"
else bad "gfx942 agent, mandatory offload" "exit $rc" "$log"; fi

# --- 10. GPU errors: 22.1's report and abort ---------------------------------
# A memory fault (the HSA system event) and a trap (a queue error without
# one) print exactly what LLVM 22.1 prints on the same mock, then abort.
for inj in FAULT:saxpy FAULT:read_global TRAP:many_args; do
  what=${inj%%:*} k=${inj#*:}
  log=$W/logs/gpu-error.$what.$k.log
  run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_HSA_EMU="$K/kernels.emu.so" "MOCK_HSA_${what}_KERNEL=$k" -- "$G/bin/harness.gfx90a"
  rc=$?
  grep -v '^\[PASS\]\|^\[INFO\]\|^\[mock-hsa\]\|amdgpu-mock.sh: line' "$log" > "$log.report"
  if [ -f "$LLVM_LIB" ]; then
    ref=$W/logs/gpu-error.$what.$k.llvm.log
    run "$ref" LD_LIBRARY_PATH="$(dirname "$LLVM_LIB"):$MOCK" MOCK_HSA_EMU="$K/kernels.emu.so" "MOCK_HSA_${what}_KERNEL=$k" -- "$G/bin/harness.gfx90a"
    rrc=$?
    grep -v '^\[PASS\]\|^\[INFO\]\|^\[mock-hsa\]\|amdgpu-mock.sh: line' "$ref" > "$ref.report"
    if [ $rc -eq 134 ] && [ $rrc -eq 134 ] && [ -s "$log.report" ] && cmp -s "$log.report" "$ref.report"; then
      ok "${what,,} in $k: LLVM 22.1's report, line for line, and abort (exit $rc)"
    else bad "${what,,} in $k: report as 22.1's" "exit $rc (22.1: $rrc); diff: $(diff "$ref.report" "$log.report" | head -5 | tr '\n' ' ')" "$log"; fi
  elif [ $rc -eq 134 ] && grep -q "Kernel '$k'" "$log.report"; then
    ok "${what,,} in $k: reported with the kernel's name, abort (exit $rc)"
  else bad "${what,,} in $k" "exit $rc" "$log"; fi
done
log=$W/logs/fault-noabort.log
run "$log" LD_LIBRARY_PATH="$W/shim:$MOCK" MOCK_HSA_EMU="$K/kernels.emu.so" MOCK_HSA_FAULT_KERNEL=saxpy OMPTARGET_RS_AMDGPU_ABORT_ON_GPU_ERROR=0 -- "$G/bin/harness.gfx90a"
rc=$?
if [ $rc -ne 124 ] && grep -q "memory access fault by GPU (agent 0x2000) at virtual address 0xdead000 while running kernel 'saxpy'. Reasons: Page not present" "$log"; then
  ok "OMPTARGET_RS_AMDGPU_ABORT_ON_GPU_ERROR=0: the fault is the launch's error, with the kernel name, no hang (exit $rc)"
else bad "memory fault in saxpy, no abort" "exit $rc" "$log"; fi

# --- 11. deferred completion (MOCK_HSA_DEFER=1: the mock completes work on a
# worker thread, after dependencies): 22.1 and ours still pass ----------------
for lib in llvm ours; do
  log=$W/logs/defer.$lib.log
  if [ $lib = llvm ]; then
    [ -f "$LLVM_LIB" ] || continue
    path="$(dirname "$LLVM_LIB"):$MOCK"
  else
    path="$W/shim:$MOCK"
  fi
  run "$log" LD_LIBRARY_PATH="$path" MOCK_HSA_DEFER=1 MOCK_HSA_EMU="$K/kernels.emu.so" LIBOMPTARGET_AMDGPU_MAX_ASYNC_COPY_BYTES=4096 -- "$G/bin/harness.gfx90a"
  rc=$?
  if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$log" && ! grep -q '\[mock-hsa\] WARNING' "$log"; then
    ok "deferred mock-hsa ($lib): $(summary "$log")"
  else bad "deferred mock-hsa ($lib)" "exit $rc" "$log"; fi
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
