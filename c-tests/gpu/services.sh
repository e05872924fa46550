#!/usr/bin/env bash
# services.sh - device-to-host services of GPU programs on the CPU stand-ins
# of the GPU drivers: the RPC server (LLVM 22.1's protocol,
# docs/rpc.md) on mock-cuda, mock-cuda-async and mock-hsa, then every part
# script in c-tests/gpu/services.d/*.sh.
#
#   bash c-tests/gpu/services.sh [GPU_IMAGES_DIR]     (default target/gpu-images)
#
# Builds, into target/gpu-services/: services/rpc_kernels.cu (with our own
# device-side client, services/rpc_client.h) as an sm_90 cubin (clang-22 +
# the wheel's ptxas), a gfx90a code object and the CPU emulation the
# stand-ins run (warp 32 for CUDA, wavefront 64 for AMDGPU), and the host
# program services/rpc_host.c (liboffload generation 23). Each check runs
# rpc_host on one stand-in with our runtime (target/release, or
# $OMPTARGET_RS_LIB's folder) and looks at its output and exit status.
#
# Output: one "PASS name" / "FAIL name: why" / "SKIP name: why" line per
# check (part scripts print the same; their lines are counted too), then
# "N passed, M failed" (skips are listed, never counted as passed). Exit 1
# if anything failed. Without the gpu-images (c-tests/gpu-images.sh) the
# stand-in checks print SKIP.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
G=${1:-${GPU_IMAGES:-$ROOT/target/gpu-images}}
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
OUT=${GPU_SERVICES_OUT:-$ROOT/target/gpu-services}
TMO=${HARNESS_TIMEOUT:-60}
S=$HERE/services
CLANG=${CLANG:-clang-22}

pass=0 fail=0 skip=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() {
  echo "FAIL $1: $2"; fail=$((fail + 1))
  [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/      | /' "$3" | tail -n 20
  return 0
}
skp() { echo "SKIP $1: $2"; skip=$((skip + 1)); }

rpc_checks() {
  if [ ! -e "$G/kernels/kernels.emu.so" ] || [ ! -e "$G/mock-cuda/libcuda.so.1" ]; then
    skp "rpc on the stand-ins" "gpu-images not built (c-tests/gpu-images.sh; looked in $G)"
    return
  fi
  G=$(cd "$G" && pwd)
  [ -f "$LIB" ] || { bad "runtime" "no $LIB (cargo build --release)"; return; }
  local rel
  rel=$(dirname "$(readlink -f "$LIB")")
  [ -e "$rel/libLLVMOffload.so.23.0git" ] || { bad "runtime" "no $rel/libLLVMOffload.so.23.0git (cargo build --release makes it)"; return; }
  command -v "$CLANG" >/dev/null || { skp "rpc on the stand-ins" "no $CLANG to build the test kernels"; return; }
  local ptxas
  ptxas=$(ls "$G"/tools/ptxas-13*/ptxas 2>/dev/null | head -n1)
  [ -n "$ptxas" ] || { skp "rpc on the stand-ins" "no ptxas under $G/tools (c-tests/gpu-images.sh)"; return; }
  mkdir -p "$OUT"
  bash "$ROOT/c-tests/amdgpu-images.sh" "$G" >/dev/null 2>&1 || true
  local inc=(-I"$S" -I"$ROOT/c-tests/gpu/images/src")
  local log=$OUT/build.log
  : >"$log"
  # --- build: the images (real sm_90 / gfx90a code, the emulations) and the host program
  if ! { "$CLANG" -x cuda --cuda-gpu-arch=sm_90 --cuda-device-only -nocudainc -nocudalib --cuda-feature=+ptx80 \
           -O2 "${inc[@]}" -S "$S/rpc_kernels.cu" -o "$OUT/rpc.sm_90.ptx" &&
         "$ptxas" -arch=sm_90 -O3 "$OUT/rpc.sm_90.ptx" -o "$OUT/rpc.sm_90.cubin" &&
         "$CLANG" -x hip --offload-arch=gfx90a --cuda-device-only --no-gpu-bundle-output -nogpulib -nogpuinc \
           -O2 "${inc[@]}" "$S/rpc_kernels.cu" -o "$OUT/rpc.gfx90a.hsaco" &&
         "$CLANG" -x c++ -O2 -fPIC -shared -DOFFLOAD_EMULATE_GRID -DRPC_LANES=32 "${inc[@]}" "$S/rpc_kernels.cu" -o "$OUT/rpc.emu32.so" &&
         "$CLANG" -x c++ -O2 -fPIC -shared -DOFFLOAD_EMULATE_GRID -DRPC_LANES=64 "${inc[@]}" "$S/rpc_kernels.cu" -o "$OUT/rpc.emu64.so" &&
         "$CLANG" -O2 -Wall -Wextra -Werror -I"$ROOT/include/liboffload-23" "$S/rpc_host.c" \
           -L"$rel" -l:libLLVMOffload.so.23.0git -Wl,-rpath,"$rel" -o "$OUT/rpc_host" &&
         bash "$ROOT/c-tests/mock-cuda-async/build.sh" "$OUT/mock-cuda-async" "$G/mock-cuda/libcuda.so.1"; } >>"$log" 2>&1; then
    bad "build the RPC test images and host program" "see $log" "$log"
    return
  fi
  ok "build: rpc_kernels.cu as sm_90 cubin, gfx90a code object, CPU emulations (warp 32 and 64); rpc_host"
  # --- the real images carry the client object the runtime looks for
  local rd=/usr/lib/llvm-22/bin/llvm-readelf
  for img in rpc.sm_90.cubin rpc.gfx90a.hsaco; do
    # grep reads to the end (no -q): under pipefail an early exit would fail
    # the pipeline with readelf's SIGPIPE.
    if "$rd" -s "$OUT/$img" 2>/dev/null | grep -E 'OBJECT +GLOBAL .* __llvm_rpc_client$' >/dev/null &&
       [ "$("$rd" -s "$OUT/$img" | awk '$NF=="__llvm_rpc_client"{print $3; exit}')" = 552 ]; then
      ok "$img defines __llvm_rpc_client (552 bytes, LLVM's rpc::Client)"
    else
      bad "$img defines __llvm_rpc_client" "$("$rd" -s "$OUT/$img" 2>&1 | grep rpc_client | head -3)"
    fi
  done
  if "$rd" -s "$G/kernels/kernels.sm_90.cubin" | grep __llvm_rpc_client >/dev/null; then
    bad "gpu-images' kernels have no client" "kernels.sm_90.cubin defines __llvm_rpc_client"
  fi

  local A=$OUT/mock-cuda-async/libcuda-async.so
  local HSA=$G/amdgpu/mock-hsa/libhsa-runtime64.so.1
  local stand_ins=(mock-cuda mock-cuda-async mock-hsa)
  [ -e "$HSA" ] || { skp "mock-hsa checks" "no $HSA (c-tests/amdgpu-images.sh)"; stand_ins=(mock-cuda mock-cuda-async); }
  local W
  W=$(mktemp -d /tmp/omptarget-rs-services.XXXXXX)
  # shellcheck disable=SC2064
  trap "rm -rf '$W'" RETURN
  local si
  for si in "${stand_ins[@]}"; do
    local img env_rpc env_plain
    case $si in
      mock-cuda) img=$OUT/rpc.sm_90.cubin
        env_rpc=(OMPTARGET_RS_LIBCUDA="$G/mock-cuda/libcuda.so.1" MOCK_CUDA_EMU="$OUT/rpc.emu32.so")
        env_plain=(OMPTARGET_RS_LIBCUDA="$G/mock-cuda/libcuda.so.1" MOCK_CUDA_EMU="$G/kernels/kernels.emu.so")
        plain=$G/kernels/kernels.sm_90.cubin ;;
      mock-cuda-async) img=$OUT/rpc.sm_90.cubin
        env_rpc=(OMPTARGET_RS_LIBCUDA="$A" MOCK_CUDA_EMU="$OUT/rpc.emu32.so")
        env_plain=(OMPTARGET_RS_LIBCUDA="$A" MOCK_CUDA_EMU="$G/kernels/kernels.emu.so")
        plain=$G/kernels/kernels.sm_90.cubin ;;
      mock-hsa) img=$OUT/rpc.gfx90a.hsaco
        env_rpc=(OMPTARGET_RS_LIBHSA="$HSA" MOCK_HSA_EMU="$OUT/rpc.emu64.so" MOCK_HSA_ISA=gfx90a)
        env_plain=(OMPTARGET_RS_LIBHSA="$HSA" MOCK_HSA_EMU="$G/kernels/kernels.emu.so" MOCK_HSA_ISA=gfx90a)
        plain=$G/kernels/kernels.gfx90a.hsaco ;;
    esac
    # r MODE: runs rpc_host; $W/$si.MODE.{out,err}, status in rc
    r() {
      local m=$1; shift
      # A subshell, so the shell's "Aborted" notice of the abort check stays out of the output.
      ( env "${env_rpc[@]}" LIBOMPTARGET_DEBUG=1 timeout "$TMO" "$OUT/rpc_host" "$img" "$m" "$@"; exit $? ) \
        >"$W/$si.$m.out" 2>"$W/$si.$m.err"
      rc=$?
    }
    local o e rc n
    # 1. printf from 4 teams x 8 threads: every line complete and right, in launch order
    r hello; o=$W/$si.hello.out
    : >"$W/expect"
    for t in 0 1 2 3; do for th in 0 1 2 3 4 5 6 7; do
      gid=$((t * 8 + th))
      printf 'hello team %u thread %2u gid %d x=%.1f [a string that is long enough to need a second packet of the port 0123] tag 7\n' \
        $t $th $gid "$(awk "BEGIN{printf \"%.1f\", $gid*0.5}")" >>"$W/expect"
    done; done
    if [ $rc = 0 ] && diff <(grep '^hello' "$o") "$W/expect" >/dev/null && [ "$(grep -c . "$o")" = 37 ]; then
      ok "$si: printf from 4 teams x 8 threads: 32 complete lines, each exactly as printf formats it"
    else bad "$si: printf from 4 teams x 8 threads" "exit $rc, $(grep -c '^hello' "$o") hello lines" "$o"; fi
    if grep -q 'rpc threads before load: 0' "$o" && grep -q 'rpc threads after load: 1' "$o" &&
       grep -q 'rpc threads after the kernel: 1' "$o" && grep -q 'rpc threads after unload: 0' "$o" &&
       grep -q 'rpc: server thread started' "$W/$si.hello.err"; then
      ok "$si: one server thread while the image with a client is loaded, none before or after"
    else bad "$si: server thread's life" "$(grep 'rpc threads' "$o" | tr '\n' ' ')" "$W/$si.hello.err"; fi
    # 2. puts (write to stdout with a newline) from every thread
    r puts; o=$W/$si.puts.out
    n=$(grep -cE '^puts team [0-3] thread [0-7] tag 7$' "$o")
    if [ $rc = 0 ] && [ "$n" = 32 ] && [ "$(grep -c '^puts' "$o")" = 32 ]; then
      ok "$si: puts from 32 threads: 32 whole lines"
    else bad "$si: puts from 32 threads" "exit $rc, $n good lines" "$o"; fi
    # 3. stderr: fwrite and a packed printf, none of it on stdout
    r stderr; e=$W/$si.stderr.err; o=$W/$si.stderr.out
    if [ $rc = 0 ] && [ "$(grep -cE '^stderr write team [0-3]$' "$e")" = 4 ] &&
       [ "$(grep -cE '^stderr printf team [0-3] value -7 packed$' "$e")" = 4 ] && ! grep -q '^stderr' "$o"; then
      ok "$si: stderr: 4 writes and 4 packed printfs on stderr, nothing on stdout"
    else bad "$si: stderr" "exit $rc" "$e"; fi
    # 4. malloc/free round trips, and a free of a pointer malloc never returned
    r heap; o=$W/$si.heap.out; e=$W/$si.heap.err
    if [ $rc = 0 ] && grep -q 'host: heap round trips ok: 32 of 32' "$o"; then
      ok "$si: malloc/free: 32 threads allocate 100 bytes, write, read back, free"
    else bad "$si: malloc/free round trips" "exit $rc" "$o"; fi
    if [ $rc = 0 ] && grep -q 'free(0x1234560): not a pointer the device.s malloc returned; ignored' "$e" && grep -q 'host: done' "$o"; then
      ok "$si: free of a pointer malloc never returned: refused with a message, the program goes on"
    else bad "$si: bogus free" "exit $rc" "$e"; fi
    # 5. exit(42) from a kernel ends the process with status 42, output flushed
    r exit; o=$W/$si.exit.out
    if [ $rc = 42 ] && grep -q 'rpc threads after load: 1' "$o" && ! grep -q 'after the kernel' "$o"; then
      ok "$si: exit(42) in a kernel: the process exits with 42 (output before it flushed)"
    else bad "$si: exit from a kernel" "exit $rc (want 42)" "$o"; fi
    # 6. abort()
    r abort; e=$W/$si.abort.err
    if [ $rc = 134 ] && grep -q 'called abort()' "$e"; then
      ok "$si: abort() in a kernel: the process aborts (134) saying so"
    else bad "$si: abort from a kernel" "exit $rc (want 134)" "$e"; fi
    # 7. an opcode nobody serves: a clear error, and the kernel finishes
    r unknown; o=$W/$si.unknown.out; e=$W/$si.unknown.err
    if [ $rc = 0 ] && grep -q 'host: unknown opcode call returned 5' "$o" && grep -q 'host: done' "$o" &&
       grep -q "unhandled or invalid RPC opcode 0x7a7a0001" "$e"; then
      ok "$si: unknown opcode 0x7a7a0001: clear error per call, no hang, the program ends normally"
    else bad "$si: unknown opcode" "exit $rc" "$e"; fi
    # 8. a user opcode served by the callback registered with olPlatformRegisterRPCCallback
    r user; o=$W/$si.user.out
    if [ $rc = 0 ] && grep -q 'host: user opcode answers ok: 32 of 32 (callback calls 32)' "$o"; then
      ok "$si: user opcode through olPlatformRegisterRPCCallback (rpc::Port layout): 32 of 32 answers"
    else bad "$si: user opcode callback" "exit $rc" "$o"; fi
    # 9. a client that stops in the middle of a call: the server gives up after the timeout
    OMPTARGET_RS_RPC_TIMEOUT=1 r stall; o=$W/$si.stall.out; e=$W/$si.stall.err
    if [ $rc = 0 ] && grep -q 'the device stopped answering for 1.0 s; this image is no longer served' "$e" &&
       grep -q 'host: done' "$o" && ! grep -q 'never printed' "$o"; then
      ok "$si: a client that stops mid-call: the server gives up after OMPTARGET_RS_RPC_TIMEOUT=1, no hang"
    else bad "$si: stalled client" "exit $rc" "$e"; fi
    # 10. an image without a client: no buffer, no thread
    env "${env_plain[@]}" LIBOMPTARGET_DEBUG=1 timeout "$TMO" "$OUT/rpc_host" "$plain" quiet >"$W/$si.quiet.out" 2>"$W/$si.quiet.err"
    rc=$?; o=$W/$si.quiet.out
    if [ $rc = 0 ] && grep -q 'rpc threads after load: 0' "$o" && grep -q 'rpc threads after the kernel: 0' "$o" &&
       ! grep -q 'rpc:' "$W/$si.quiet.err"; then
      ok "$si: a kernel of an image without a client: no RPC buffer, no server thread"
    else bad "$si: image without a client" "exit $rc" "$o"; fi
  done
}

rpc_checks

# --- part scripts: each prints PASS/FAIL/SKIP lines -----------------------------
shopt -s nullglob
for part in "$HERE"/services.d/*.sh; do
  plog=$(mktemp /tmp/omptarget-rs-services-part.XXXXXX)
  GPU_IMAGES=$G bash "$part" "$G" >"$plog" 2>&1
  prc=$?
  cat "$plog"
  p=$(grep -c '^PASS' "$plog"); f=$(grep -c '^FAIL' "$plog"); s=$(grep -c '^SKIP' "$plog")
  pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
  if [ $prc -ne 0 ] && [ "$f" = 0 ]; then
    echo "FAIL $(basename "$part"): exit $prc without a FAIL line"; fail=$((fail + 1))
  fi
  rm -f "$plog"
done

# What scripts/gpu-check.sh runs on a real GPU, in one folder to carry:
# the RPC programs are here already, the fatbin harnesses join them.
if [ -d "$G/fatbin" ]; then
  rm -rf "$ROOT/target/gpu-services/fatbin"
  mkdir -p "$ROOT/target/gpu-services" && cp -r "$G/fatbin" "$ROOT/target/gpu-services/fatbin"
fi

[ $skip -gt 0 ] && echo "($skip skipped)"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
