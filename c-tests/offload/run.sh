#!/usr/bin/env bash
# c-tests/offload/run.sh - liboffload (the ol* API) on omptarget-rs.
#
# Every program here is compiled against LLVM 22.1's own offload/OffloadAPI.h
# and linked against LLVM's libLLVMOffload.so.22.1, then run with ours first
# on the library path under that name (target/release/libLLVMOffload.so.22.1,
# the symlink cargo build leaves):
#   api.c     success and documented errors of every entry-point family on the
#             CPU devices and the virtual host device (kernel.c is its program)
#   diff.c    the calls 22.1 answers without a GPU, run on LLVM's library and
#             on ours: the outputs must be identical
#   shared.c  OpenMP and ol* in one process on the same devices and memory
#   queues.c  asynchronous in-order queues: blocked host functions, events,
#             olWaitEvents, 10^6 self-enqueuing host functions, 8 threads
#   abuse.c   bad ranges, sizes and symbols refused; one allocation table
#             for both APIs (also under valgrind: no error, no leak)
#   gen21.c, gen23.c  the other generations of the API, compiled against our
#             headers of them (include/liboffload-21, include/liboffload-23)
#             and linked against the shims cargo build leaves
#             (libLLVMOffload.so.21.1, .so.23.1/.so.23.0git)
#   shared_gen.c  OpenMP and generation 21 or 23 in one process: one runtime
# plus OFFLOAD_TRACE=1 lines and llvm-offload-device-info-22 listing our
# devices. Prints PASS/FAIL per check and "N passed, N failed"; exit 1 on failure.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
INC=/usr/lib/llvm-22/include
LLVM_LIB=/usr/lib/llvm-22/lib
if [ ! -f "$INC/offload/OffloadAPI.h" ] || [ ! -f "$LLVM_LIB/libLLVMOffload.so.22.1" ]; then
  echo "skipped: liboffload-22-dev not installed"
  exit 0
fi
cargo build --release -q || exit 2
REL=$ROOT/target/release
[ -e "$REL/libLLVMOffload.so.22.1" ] || { echo "no $REL/libLLVMOffload.so.22.1 after cargo build" >&2; exit 2; }
O=$ROOT/target/offload-tests
mkdir -p "$O/lib"
# Both names in one folder, for the program that uses OpenMP and ol* together.
ln -sf "$REL/libomptarget_rs.so" "$O/lib/libomptarget.so.22.1"
ln -sf "$REL/libomptarget_rs.so" "$O/lib/libLLVMOffload.so.22.1"
# The generations' shims need the runtime by its file name next to them.
ln -sf "$REL/libomptarget_rs.so" "$O/lib/libomptarget_rs.so"
ln -sf "$REL/libomptarget_rs.so" "$O/lib/libomptarget.so"
for g in libLLVMOffload.so.21.1 libLLVMOffload.so.23.1 libLLVMOffload.so.23.0git; do
  [ -e "$REL/$g" ] || { echo "no $REL/$g after cargo build" >&2; exit 2; }
  ln -sf "$REL/$g" "$O/lib/$g"
done
S=$ROOT/c-tests/offload
set -e
clang-22 -O1 -shared -fPIC "$S/kernel.c" -o "$O/kernel.so"
for p in api diff; do
  clang-22 -Wall -Wextra -Werror -I"$INC" "$S/$p.c" -L"$LLVM_LIB" -lLLVMOffload -ldl -o "$O/$p"
done
clang-22 -Wall -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -I"$INC" "$S/shared.c" -L"$LLVM_LIB" -lLLVMOffload -ldl -o "$O/shared"
clang-22 -Wall -Wextra -Werror -I"$INC" "$S/queues.c" -L"$LLVM_LIB" -lLLVMOffload -lpthread -o "$O/queues"
clang-22 -Wall -Wextra -Werror -fopenmp -I"$INC" "$S/abuse.c" -L"$LLVM_LIB" -lLLVMOffload -lomptarget -o "$O/abuse"
# The generations: our header, our shim (23 under main's name, as a program
# built on LLVM's main branch records it). The OpenMP programs link against
# our libomptarget too: the shim's runtime must be the one the link sees.
clang-22 -Wall -Wextra -Werror -I"$ROOT/include/liboffload-21" "$S/gen21.c" -L"$REL" -l:libLLVMOffload.so.21.1 -o "$O/gen21"
clang-22 -Wall -Wextra -Werror -I"$ROOT/include/liboffload-23" "$S/gen23.c" -L"$REL" -l:libLLVMOffload.so.23.0git -lpthread -o "$O/gen23"
for g in 21 23; do
  clang-22 -Wall -DGEN=$g -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -I"$ROOT/include/liboffload-$g" "$S/shared_gen.c" \
    -L"$O/lib" -l:libLLVMOffload.so.$g.1 -ldl -o "$O/shared$g"
done
set +e

pass=0 fail=0
ok() { echo "PASS  $1"; pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); [ -f "${2:-}" ] && sed 's/^/      | /' "$2" | tail -n 20; }
has() { grep -qF -- "$2" "$1"; }

# 1. every family, success and errors, on our library.
LD_LIBRARY_PATH=$REL timeout 60 "$O/api" "$O/kernel.so" >"$O/api.out" 2>&1
rc=$?
if [ $rc = 0 ] && has "$O/api.out" "olInit from omptarget-rs" && grep -qE '^ok [0-9]+ checks' "$O/api.out"; then
  ok "api.c on omptarget-rs: $(grep -E '^ok' "$O/api.out")"
else bad "api.c on omptarget-rs (exit $rc)" "$O/api.out"; fi

# 2. OFFLOAD_TRACE=1 prints every call as 22.1 does.
OFFLOAD_TRACE=1 LD_LIBRARY_PATH=$REL timeout 60 "$O/api" "$O/kernel.so" >/dev/null 2>"$O/trace.err"
if has "$O/trace.err" "---> olInit()-> OL_SUCCESS" \
  && has "$O/trace.err" "---> olMemFree(.Address = nullptr)-> OL_ERRC_INVALID_NULL_POINTER" \
  && has "$O/trace.err" "     *Error Details* validation failure: NULL == Address " \
  && has "$O/trace.err" ".PropName = OL_DEVICE_INFO_TYPE, .PropSize = 4, .PropValue = 0x" \
  && grep -qE '^---> olLaunchKernel\(.Queue = 0x[0-9a-f]+, .Device = 0x[0-9a-f]+, .Kernel = 0x[0-9a-f]+, .ArgumentsData = 0x[0-9a-f]+, .ArgumentsSize = 32, .LaunchSizeArgs = 0x[0-9a-f]+\)-> OL_SUCCESS' "$O/trace.err"; then
  ok "OFFLOAD_TRACE=1 lines ($(grep -c '^--->' "$O/trace.err") calls)"
else bad "OFFLOAD_TRACE=1 lines" "$O/trace.err"; fi

# 3. differential: LLVM 22.1's library vs ours.
timeout 60 "$O/diff" >"$O/diff.llvm" 2>&1
LD_LIBRARY_PATH=$REL timeout 60 "$O/diff" >"$O/diff.ours" 2>&1
if diff "$O/diff.llvm" "$O/diff.ours" >"$O/diff.delta"; then
  ok "diff.c: same output on LLVM 22.1's liboffload and ours ($(wc -l <"$O/diff.ours") lines)"
else bad "diff.c differs from LLVM 22.1" "$O/diff.delta"; fi

# 4. OpenMP and ol* on one device layer.
LD_LIBRARY_PATH=$O/lib timeout 60 "$O/shared" "$O/kernel.so" >"$O/shared.out" 2>&1
rc=$?
if [ $rc = 0 ] && has "$O/shared.out" "one library serves ol* and __tgt_*: yes" && has "$O/shared.out" "shared-device test passed"; then
  ok "shared.c: olMemAlloc memory in OpenMP, omp_target_alloc memory in ol*"
else bad "shared.c (exit $rc)" "$O/shared.out"; fi

# 4b. Asynchronous in-order queues on the CPU devices.
LD_LIBRARY_PATH=$REL timeout 120 "$O/queues" "$O/kernel.so" >"$O/queues.out" 2>&1
rc=$?
if [ $rc = 0 ] && grep -qE '^ok [0-9]+ checks' "$O/queues.out"; then
  ok "queues.c: host functions, events and waits in order, 10^6 chained host functions, 8 threads ($(grep -E '^ok' "$O/queues.out"))"
else bad "queues.c (exit $rc)" "$O/queues.out"; fi
# The same on deferring queues (the host plugin's test mode: device work runs
# at synchronisation, as on a GPU stream): a host function that blocks until
# the main thread frees memory must not hold up the free.
OMPTARGET_RS_HOST_QUEUES=2 LD_LIBRARY_PATH=$REL timeout 120 "$O/queues" "$O/kernel.so" 100000 >"$O/queues-deferred.out" 2>&1
rc=$?
if [ $rc = 0 ] && grep -qE '^ok [0-9]+ checks' "$O/queues-deferred.out"; then
  ok "queues.c on deferring plugin queues (OMPTARGET_RS_HOST_QUEUES=2)"
else bad "queues.c on deferring plugin queues (exit $rc)" "$O/queues-deferred.out"; fi

# 4c. Abuse: every bad range, size or symbol refused; the APIs free each other's memory once.
LD_LIBRARY_PATH=$O/lib timeout 60 "$O/abuse" "$O/kernel.so" >"$O/abuse.out" 2>&1
rc=$?
if [ $rc = 0 ] && grep -qE '^ok [0-9]+ checks' "$O/abuse.out"; then
  ok "abuse.c: bad ranges, sizes and symbols refused, one allocation table ($(grep -E '^ok' "$O/abuse.out"))"
else bad "abuse.c (exit $rc)" "$O/abuse.out"; fi
if command -v valgrind >/dev/null; then
  LD_LIBRARY_PATH=$O/lib timeout 300 valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite \
    --suppressions="$ROOT/c-tests/reliability/valgrind.supp" "$O/abuse" "$O/kernel.so" >"$O/abuse.vg" 2>&1
  rc=$?
  if [ $rc = 0 ] && grep -qE '^ok [0-9]+ checks' "$O/abuse.vg"; then
    ok "abuse.c under valgrind: no memory error, nothing definitely lost"
  else bad "abuse.c under valgrind (exit $rc)" "$O/abuse.vg"; fi
  LD_LIBRARY_PATH=$REL timeout 300 valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite \
    --suppressions="$ROOT/c-tests/reliability/valgrind.supp" "$O/queues" "$O/kernel.so" 20000 >"$O/queues.vg" 2>&1
  rc=$?
  if [ $rc = 0 ] && grep -qE '^ok [0-9]+ checks' "$O/queues.vg"; then
    ok "queues.c under valgrind: no memory error, nothing definitely lost"
  else bad "queues.c under valgrind (exit $rc)" "$O/queues.vg"; fi
else
  echo "skipped: valgrind not installed (abuse.c and queues.c under memcheck)"
fi

# 4d. The other generations, each under its own file name, on the one runtime.
for g in 21 23; do
  LD_LIBRARY_PATH=$O/lib timeout 60 "$O/gen$g" "$O/kernel.so" >"$O/gen$g.out" 2>&1
  rc=$?
  if [ $rc = 0 ] && grep -qE '^ok [0-9]+ checks' "$O/gen$g.out"; then
    ok "gen$g.c: LLVM $g's API through its shim ($(grep -E '^ok' "$O/gen$g.out"))"
  else bad "gen$g.c (exit $rc)" "$O/gen$g.out"; fi
  LD_LIBRARY_PATH=$O/lib timeout 60 "$O/shared$g" "$O/kernel.so" >"$O/shared$g.out" 2>&1
  rc=$?
  if [ $rc = 0 ] && has "$O/shared$g.out" "one runtime serves ol* $g and OpenMP: yes" && has "$O/shared$g.out" "shared-device test passed"; then
    ok "shared_gen.c GEN=$g: OpenMP and ol* $g share devices and memory"
  else bad "shared_gen.c GEN=$g (exit $rc)" "$O/shared$g.out"; fi
done
# 21 and 23 trace when OFFLOAD_TRACE is set at all (22.1: not for empty or 0).
OFFLOAD_TRACE=0 LD_LIBRARY_PATH=$O/lib timeout 60 "$O/gen23" "$O/kernel.so" >/dev/null 2>"$O/trace23.err"
OFFLOAD_TRACE=0 LD_LIBRARY_PATH=$O/lib timeout 60 "$O/gen21" "$O/kernel.so" >/dev/null 2>"$O/trace21.err"
if grep -qE '^---> olInit\(.InitArgs = 0x[0-9a-f]+\)-> OL_ERRC_INVALID_SIZE' "$O/trace23.err" \
  && has "$O/trace23.err" "     *Error Details* ol_init_args_t Size field is too small " \
  && grep -qE '^---> olGetEventElapsedTime\(.StartEvent = 0x[0-9a-f]+, .EndEvent = 0x[0-9a-f]+, .ElapsedTime = 0x[0-9a-f]+ \([0-9.]+\)\)-> OL_SUCCESS' "$O/trace23.err" \
  && has "$O/trace23.err" ".PropName = OL_DEVICE_INFO_HALF_FP_SUPPORT, .PropSize = 1, .PropValue = 0x" \
  && grep -qE '^---> olQueryQueue\(.Queue = 0x[0-9a-f]+, .IsQueueWorkCompleted = 0x[0-9a-f]+ \((true|false)\)\)-> OL_SUCCESS' "$O/trace23.err" \
  && grep -qE '^---> olGetKernel\(.Program = 0x[0-9a-f]+, .KernelName = 0x[0-9a-f]+, .Kernel = 0x[0-9a-f]+ \(0x[0-9a-f]+\)\)-> OL_SUCCESS' "$O/trace21.err" \
  && has "$O/trace21.err" ".PropName = OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE, .PropSize = 12, .PropValue = 0x" \
  && ! (OFFLOAD_TRACE=0 LD_LIBRARY_PATH=$REL timeout 60 "$O/api" "$O/kernel.so" 2>&1 >/dev/null | grep '^--->' >/dev/null); then
  ok "OFFLOAD_TRACE=0 traces 21 ($(grep -c '^--->' "$O/trace21.err") calls) and 23 ($(grep -c '^--->' "$O/trace23.err") calls), not 22.1"
else bad "OFFLOAD_TRACE for 21 and 23" "$O/trace23.err"; fi
if command -v valgrind >/dev/null; then
  for g in 21 23; do
    LD_LIBRARY_PATH=$O/lib timeout 300 valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite \
      --suppressions="$ROOT/c-tests/reliability/valgrind.supp" "$O/gen$g" "$O/kernel.so" >"$O/gen$g.vg" 2>&1
    rc=$?
    if [ $rc = 0 ] && grep -qE '^ok [0-9]+ checks' "$O/gen$g.vg"; then
      ok "gen$g.c under valgrind: no memory error, nothing definitely lost"
    else bad "gen$g.c under valgrind (exit $rc)" "$O/gen$g.vg"; fi
  done
fi

# 5. LLVM's device-info tool lists our devices.
if command -v llvm-offload-device-info-22 >/dev/null; then
  LD_LIBRARY_PATH=$REL timeout 60 llvm-offload-device-info-22 >"$O/device-info.out" 2>&1
  rc=$?
  ncpu=$(grep -c '^Type: CPU' "$O/device-info.out")
  if [ $rc = 0 ] && [ "$ncpu" -ge 4 ] && has "$O/device-info.out" "[Virtual Host Device]" && has "$O/device-info.out" "UID: x86_64-3"; then
    ok "llvm-offload-device-info-22 on ours: $(grep '^Num Devices' "$O/device-info.out"), $ncpu CPU"
  else bad "llvm-offload-device-info-22 on ours (exit $rc)" "$O/device-info.out"; fi
else
  echo "skipped: llvm-offload-device-info-22 not installed"
fi

# 6. The same ol* program on the CPU device and on the CUDA stand-in
#    (gpu-images' kernels as x86-64 .so and sm_90 cubin; mock-cuda as libcuda).
G=${GPU_IMAGES:-$ROOT/target/gpu-images}
if [ -e "$G/mock-cuda/libcuda.so.1" ] && [ -e "$G/kernels/kernels.sm_90.cubin" ]; then
  clang-22 -Wall -Wextra -Werror -I"$INC" "$S/gpu.c" -L"$LLVM_LIB" -lLLVMOffload -o "$O/gpu"
  CUDA_ENV=(OMPTARGET_RS_LIBCUDA="$G/mock-cuda/libcuda.so.1" MOCK_CUDA_EMU="$G/kernels/kernels.emu.so" LD_LIBRARY_PATH="$REL")
  env "${CUDA_ENV[@]}" timeout 60 "$O/gpu" "$G/kernels/kernels.x86_64.so" "$G/kernels/kernels.sm_90.cubin" "$G/kernels/kernels.sm_90.ptx" >"$O/gpu.out" 2>&1
  rc=$?
  lines=$(grep -c '^device: ' "$O/gpu.out")
  distinct=$(grep '^device: ' "$O/gpu.out" | sort -u | wc -l)
  if [ $rc = 0 ] && [ "$lines" = 2 ] && [ "$distinct" = 1 ] && has "$O/gpu.out" "saxpy sum 1000000.0" && has "$O/gpu.out" "PTX valid on the CUDA device: 1" && has "$O/gpu.out" "3-D launch on the GPU: 96 work items"; then
    ok "gpu.c: same results on the CPU device and the CUDA stand-in ($(grep -m1 '^device: ' "$O/gpu.out" | cut -c9-60)...)"
  else bad "gpu.c on CPU device vs CUDA stand-in (exit $rc)" "$O/gpu.out"; fi
  env "${CUDA_ENV[@]}" timeout 60 llvm-offload-device-info-22 >"$O/device-info-cuda.out" 2>&1
  rc=$?
  if [ $rc = 0 ] && has "$O/device-info-cuda.out" "Platform Backend: CUDA" && has "$O/device-info-cuda.out" "Type: GPU"; then
    ok "llvm-offload-device-info-22 lists the CUDA stand-in's device"
  else bad "llvm-offload-device-info-22 with mock-cuda (exit $rc)" "$O/device-info-cuda.out"; fi
else
  echo "skipped: gpu-images not built (c-tests/gpu-images.sh): no CUDA stand-in check"
fi

# 7. The same on the AMDGPU stand-in (mock-hsa; gfx90a code object).
MOCK_HSA=$G/amdgpu/mock-hsa/libhsa-runtime64.so.1
[ -e "$MOCK_HSA" ] || bash "$ROOT/c-tests/amdgpu-images.sh" "$G" >/dev/null 2>&1
if [ -e "$MOCK_HSA" ] && [ -e "$G/kernels/kernels.gfx90a.hsaco" ] && [ -e "$O/gpu" ]; then
  HSA_ENV=(OMPTARGET_RS_LIBHSA="$MOCK_HSA" MOCK_HSA_EMU="$G/kernels/kernels.emu.so" LD_LIBRARY_PATH="$REL")
  env "${HSA_ENV[@]}" timeout 60 "$O/gpu" "$G/kernels/kernels.x86_64.so" "$G/kernels/kernels.gfx90a.hsaco" >"$O/gpu-amd.out" 2>&1
  rc=$?
  lines=$(grep -c '^device: ' "$O/gpu-amd.out")
  distinct=$(grep '^device: ' "$O/gpu-amd.out" | sort -u | wc -l)
  if [ $rc = 0 ] && [ "$lines" = 2 ] && [ "$distinct" = 1 ] && has "$O/gpu-amd.out" "saxpy sum 1000000.0" && has "$O/gpu-amd.out" "3-D launch on the GPU: 96 work items"; then
    ok "gpu.c: same results on the CPU device and the AMDGPU stand-in"
  else bad "gpu.c on CPU device vs AMDGPU stand-in (exit $rc)" "$O/gpu-amd.out"; fi
  env "${HSA_ENV[@]}" timeout 60 llvm-offload-device-info-22 >"$O/device-info-amd.out" 2>&1
  rc=$?
  if [ $rc = 0 ] && has "$O/device-info-amd.out" "Platform Backend: AMDGPU"; then
    ok "llvm-offload-device-info-22 lists the AMDGPU stand-in's device"
  else bad "llvm-offload-device-info-22 with mock-hsa (exit $rc)" "$O/device-info-amd.out"; fi
else
  echo "skipped: AMDGPU stand-in not built: no AMDGPU check"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
