#!/usr/bin/env bash
# c-tests/mpi/run.sh - remote devices over MPI.
#
# Builds the workspace (cargo build --release --workspace: the runtime, the
# remote library and target/release/omptarget-rs-device), compiles the
# programs here and some of c-tests/omp with clang-22, and runs them as
# rank 0 of MPMD jobs
#   mpirun --allow-run-as-root --oversubscribe -np 1 PROG : -np N omptarget-rs-device
# with our runtime first on the library path (libomptarget.so.22.1 and
# libLLVMOffload.so.22.1 -> target/release/libomptarget_rs.so):
#   basic.c     every device, local and remote, computes (regions, a global,
#               omp_target_alloc/memcpy both ways and on the device): 2 server
#               ranks with 4 devices each, then with 2 each (--devices 2)
#   c-tests/omp programs that use the default device, with OMP_DEFAULT_DEVICE
#               set to the first remote device: same stdout as their .expected
#               (LLVM 22.1's output on a local device)
#   ol.c        ol* on every remote CPU device (program, memory, queue, kernels,
#               a global)
#   unshareable.c, requires_usm, declare_target_indirect
#               what a remote device cannot offer (host or shared memory,
#               host pointers or host functions in kernels): NULL, or the
#               program runs without remote devices and says why
#   queues.c    (c-tests/offload) ol* queue semantics on a remote device
#   ol_abuse.c  bad ol* calls on a remote device: errors, nothing changed, the
#               server keeps serving
#   shared.c    (c-tests/offload) OpenMP and ol* in one process on one remote
#               device: each API's memory used by the other
#   threads.c   8 threads offloading to 8 remote devices at once
#   copies.c    40 MiB + 3 bytes there and back on every remote device (in
#               pieces), chains of device-to-device copies through every
#               remote device both ways (straight between servers), 8
#               threads mapping one array to one remote device at once
#   struct_threads.c
#               4 threads map one struct's pointer members to 4 remote
#               devices of 2 servers at once, 20 rounds
#   ol_copies.c the same copies through ol*, with the CUDA stand-in
#               (target/gpu-images/mock-cuda, built by c-tests/gpu-images.sh)
#               on the servers: their GPU devices stage through host memory
#   rpc         device printf of a GPU image (c-tests/gpu/services) on a
#               remote device of the CUDA stand-in: served on the server
#   exit_inflight.c
#               exit (return and exit()) with nowait regions in flight on a
#               remote device: a clean end
#   kill.c      a server killed mid-run (--die-after) in a copy from the
#               host, in a copy to another server and in one from it: a
#               clear error naming its rank within the timeout, the local
#               devices and the other server keep working (mpirun --enable-recovery, without which
#               Open MPI ends the whole job when a rank dies)
#   plain runs  the program without mpirun, and alone in an mpirun, sees only
#               its local devices
# Prints PASS/FAIL per check and "N passed, M failed"; exit 1 on failure.
# Prints SKIP and exits 0 when mpirun or Open MPI's headers are missing.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
  echo "SKIP: mpirun/mpicc not installed (apt-get install openmpi-bin libopenmpi-dev)"
  exit 0
fi
cargo build --release --workspace -q || exit 2
REL=$ROOT/target/release
SERVER=$REL/omptarget-rs-device
O=$ROOT/target/mpi-tests
S=$ROOT/c-tests/mpi
mkdir -p "$O/lib"
ln -sf "$REL/libomptarget_rs.so" "$O/lib/libomptarget.so.22.1"
ln -sf "$REL/libomptarget_rs.so" "$O/lib/libLLVMOffload.so.22.1"
export LD_LIBRARY_PATH=$O/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# Quiet and quick on one machine: shared memory only, no idle spinning.
export OMPI_MCA_btl=self,vader OMPI_MCA_mpi_yield_when_idle=1
MPIRUN=(timeout 120 mpirun --allow-run-as-root --oversubscribe)
OFFLOAD=(-fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu)
# Programs a remote CPU device cannot run (it shares no memory and no code with the program).
UNRUNNABLE=(requires_usm:unified_shared_memory declare_target_indirect:"declare target indirect")
DIFF=(always_delete_release array_section attach_through_param_pointer enter_exit_data hold implicit_map
  pointer_attach target_data zero_length_sections refcount_steps nowait_shared_input_release nowait_taskwait)

set -e
for p in basic threads kill copies struct_threads unshareable exit_inflight; do
  clang-22 -O2 -Wall "${OFFLOAD[@]}" "$S/$p.c" -o "$O/$p"
done
for p in "${DIFF[@]}" "${UNRUNNABLE[@]%%:*}"; do
  clang-22 -O2 -g -Wall -Wno-unknown-pragmas "${OFFLOAD[@]}" "$ROOT/c-tests/omp/$p.c" -o "$O/$p"
done
HAVE_OL=0
if [ -f /usr/lib/llvm-22/include/offload/OffloadAPI.h ]; then
  clang-22 -O1 -shared -fPIC "$ROOT/c-tests/offload/kernel.c" -o "$O/kernel.so"
  clang-22 -Wall -Wextra -Werror -I/usr/lib/llvm-22/include "$S/ol.c" -L/usr/lib/llvm-22/lib -lLLVMOffload -o "$O/ol"
  clang-22 -Wall -Wextra -Werror -I/usr/lib/llvm-22/include "$S/ol_copies.c" -L/usr/lib/llvm-22/lib -lLLVMOffload -o "$O/ol_copies"
  clang-22 -Wall -Wextra -Werror -I/usr/lib/llvm-22/include "$S/ol_abuse.c" -L/usr/lib/llvm-22/lib -lLLVMOffload -o "$O/ol_abuse"
  clang-22 -Wall -Wextra -Werror -I/usr/lib/llvm-22/include "$ROOT/c-tests/offload/queues.c" -L/usr/lib/llvm-22/lib -lLLVMOffload -lpthread -o "$O/queues"
  clang-22 -Wall "${OFFLOAD[@]}" -I/usr/lib/llvm-22/include "$ROOT/c-tests/offload/shared.c" -L/usr/lib/llvm-22/lib -lLLVMOffload -ldl -o "$O/shared"
  HAVE_OL=1
fi
set +e

pass=0 fail=0
ok() { echo "PASS  $1"; pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); [ -f "${2:-}" ] && sed 's/^/      | /' "$2" | tail -n 25; }
has() { grep -qF -- "$2" "$1"; }

# 1. basic.c: 2 servers x 4 devices (the host plugin's), then x 2.
"${MPIRUN[@]}" -np 1 "$O/basic" : -np 2 "$SERVER" >"$O/basic.out" 2>&1
rc=$?
if [ $rc = 0 ] && has "$O/basic.out" "devices 12" && [ "$(grep -c "^device .*: ok$" "$O/basic.out")" = 12 ] && [ "$(tail -n 1 "$O/basic.out")" = ok ]; then
  ok "basic.c: 4 local + 2 server ranks x 4 devices, every device computes"
else bad "basic.c, 2 servers x 4 devices (exit $rc)" "$O/basic.out"; fi
"${MPIRUN[@]}" -np 1 "$O/basic" : -np 2 "$SERVER" --devices 2 >"$O/basic2.out" 2>&1
rc=$?
if [ $rc = 0 ] && has "$O/basic2.out" "devices 8" && [ "$(grep -c "^device .*: ok$" "$O/basic2.out")" = 8 ]; then
  ok "basic.c: 2 server ranks x 2 devices (--devices 2)"
else bad "basic.c, 2 servers x 2 devices (exit $rc)" "$O/basic2.out"; fi

# 2. the differential programs on a remote device (device 4, rank 1's first).
for p in "${DIFF[@]}"; do
  OMP_DEFAULT_DEVICE=4 "${MPIRUN[@]}" -x OMP_DEFAULT_DEVICE -np 1 "$O/$p" : -np 1 "$SERVER" --devices 1 >"$O/$p.out" 2>"$O/$p.err"
  rc=$?
  if [ $rc = "$(cat "$ROOT/c-tests/omp/$p.exit" 2>/dev/null || echo 0)" ] && diff -q "$O/$p.out" "$ROOT/c-tests/omp/$p.expected" >/dev/null; then
    ok "$p on remote device 4: same output as LLVM 22.1 locally"
  else
    diff "$O/$p.out" "$ROOT/c-tests/omp/$p.expected" >"$O/$p.diff" 2>&1
    cat "$O/$p.err" >>"$O/$p.diff"
    bad "$p on remote device 4 (exit $rc)" "$O/$p.diff"
  fi
done

# What remote devices cannot offer: host/shared memory is refused (NULL),
# programs needing shared memory or code run without the remote devices
# and say why (before: the server crashed on a host pointer, then the job hung).
"${MPIRUN[@]}" -np 1 "$O/unshareable" 4 : -np 1 "$SERVER" --devices 1 >"$O/unshareable.out" 2>&1
rc=$?
if [ $rc = 0 ] && has "$O/unshareable.out" "host NULL, shared NULL, host memory space NULL" && [ "$(tail -n 1 "$O/unshareable.out")" = ok ]; then
  ok "unshareable.c: host and shared allocations on a remote device are NULL, device memory works"
else bad "unshareable.c (exit $rc)" "$O/unshareable.out"; fi
for u in "${UNRUNNABLE[@]}"; do
  p=${u%%:*} why=${u#*:}
  start=$(date +%s)
  OMP_DEFAULT_DEVICE=4 "${MPIRUN[@]}" -x OMP_DEFAULT_DEVICE -np 1 "$O/$p" : -np 1 "$SERVER" --devices 1 >"$O/$p.out" 2>"$O/$p.err"
  rc=$?
  took=$(($(date +%s) - start))
  if [ $rc = 0 ] && grep -q "omptarget message: remote.* $why.*the program runs without them" "$O/$p.err" && [ $took -lt 20 ] &&
    [ "$(wc -l <"$O/$p.out")" = "$(wc -l <"$ROOT/c-tests/omp/$p.expected")" ]; then
    ok "$p with a server: runs without the remote devices, says why, ends in ${took} s"
  else
    cat "$O/$p.err" >>"$O/$p.out"
    bad "$p with a server (exit $rc, ${took} s)" "$O/$p.out"
  fi
done

# 3. ol* on the remote CPU devices.
if [ $HAVE_OL = 1 ]; then
  "${MPIRUN[@]}" -np 1 "$O/ol" "$O/kernel.so" : -np 2 "$SERVER" --devices 2 >"$O/ol.out" 2>&1
  rc=$?
  if [ $rc = 0 ] && has "$O/ol.out" "remote devices 4" && has "$O/ol.out" "name has rank: yes" && [ "$(tail -n 1 "$O/ol.out")" = ok ]; then
    ok "ol.c: ol* program, memory, queue, kernels and a global on 4 remote CPU devices"
  else bad "ol.c (exit $rc)" "$O/ol.out"; fi
  "${MPIRUN[@]}" -np 1 "$O/ol_abuse" "$O/kernel.so" : -np 1 "$SERVER" --devices 1 >"$O/ol_abuse.out" 2>&1
  rc=$?
  if [ $rc = 0 ] && grep -q "^ok [0-9]* checks$" "$O/ol_abuse.out"; then
    ok "ol_abuse.c: bad ranges, sizes, images, symbols and frees on a remote device fail, change nothing, the server serves on"
  else bad "ol_abuse.c (exit $rc)" "$O/ol_abuse.out"; fi
  OL_TEST_PLATFORM=remote "${MPIRUN[@]}" -x OL_TEST_PLATFORM -np 1 "$O/queues" "$O/kernel.so" 100000 : -np 1 "$SERVER" --devices 1 >"$O/queues.out" 2>&1
  rc=$?
  if [ $rc = 0 ] && grep -qE '^ok [0-9]+ checks' "$O/queues.out"; then
    ok "queues.c (c-tests/offload) on a remote device: blocked host functions, events, waits, 8 threads, frees, shutdown"
  else bad "queues.c on a remote device (exit $rc)" "$O/queues.out"; fi
  # Both APIs in one process on one remote device: OpenMP device 4 is ol*'s mpi-rank-1:x86_64-0.
  "${MPIRUN[@]}" -np 1 "$O/shared" "$O/kernel.so" 4 mpi-rank-1:x86_64-0 : -np 1 "$SERVER" --devices 1 >"$O/shared.out" 2>&1
  rc=$?
  if [ $rc = 0 ] && has "$O/shared.out" "region on the device: yes" && has "$O/shared.out" "shared-device test passed"; then
    ok "shared.c on remote device 4: olMemAlloc memory in OpenMP, omp_target_alloc memory in ol* launches"
  else bad "shared.c on remote device 4 (exit $rc)" "$O/shared.out"; fi
else
  echo "SKIP  ol.c, shared.c: liboffload-22-dev not installed"
fi

# 4. 8 threads at once on the 8 remote devices.
"${MPIRUN[@]}" -np 1 "$O/threads" 4 8 : -np 2 "$SERVER" >"$O/threads.out" 2>&1
rc=$?
if [ $rc = 0 ] && [ "$(tail -n 1 "$O/threads.out")" = ok ]; then
  ok "threads.c: 8 threads x 40 regions on 8 remote devices at once"
else bad "threads.c (exit $rc)" "$O/threads.out"; fi

# 5. large copies, device to device between servers, one array mapped by 8 threads.
"${MPIRUN[@]}" -np 1 "$O/copies" 4 4 : -np 2 "$SERVER" --devices 2 >"$O/copies.out" 2>&1
rc=$?
if [ $rc = 0 ] && [ "$(grep -c ": ok$" "$O/copies.out")" = 7 ] && [ "$(tail -n 1 "$O/copies.out")" = ok ]; then
  ok "copies.c: 40 MiB + 3 on 4 remote devices, chains between servers both ways, 8 threads map one array"
else bad "copies.c (exit $rc)" "$O/copies.out"; fi
"${MPIRUN[@]}" -np 1 "$O/struct_threads" 4 : -np 2 "$SERVER" --devices 2 >"$O/struct_threads.out" 2>&1
rc=$?
if [ $rc = 0 ] && [ "$(tail -n 1 "$O/struct_threads.out")" = ok ]; then
  ok "struct_threads.c: 4 threads map one struct's pointer members to 4 remote devices at once, 20 rounds"
else bad "struct_threads.c (exit $rc)" "$O/struct_threads.out"; fi
if [ $HAVE_OL = 1 ]; then
  MOCK=$ROOT/target/gpu-images/mock-cuda/libcuda.so.1
  if [ -e "$MOCK" ]; then
    "${MPIRUN[@]}" -np 1 "$O/ol_copies" : -np 2 env OMPTARGET_RS_LIBCUDA="$MOCK" "$SERVER" >"$O/ol_copies.out" 2>&1
    rc=$?
    if [ $rc = 0 ] && has "$O/ol_copies.out" "gpus 2" && [ "$(tail -n 1 "$O/ol_copies.out")" = ok ]; then
      ok "ol_copies.c: every remote device, CPU and staged GPU (CUDA stand-in), there and back and through all"
    else bad "ol_copies.c with the CUDA stand-in (exit $rc)" "$O/ol_copies.out"; fi
  else
    "${MPIRUN[@]}" -np 1 "$O/ol_copies" : -np 2 "$SERVER" >"$O/ol_copies.out" 2>&1
    rc=$?
    if [ $rc = 0 ] && [ "$(tail -n 1 "$O/ol_copies.out")" = ok ]; then
      ok "ol_copies.c: every remote CPU device (no $MOCK: c-tests/gpu-images.sh builds the GPU stand-in)"
    else bad "ol_copies.c (exit $rc)" "$O/ol_copies.out"; fi
  fi
fi

# Device printf from a GPU image on a GPU server (the CUDA stand-in): its RPC
# client is served on the server (c-tests/gpu/services.sh builds the image,
# its CPU emulation and the generation-23 host program's source is there).
SV=$ROOT/target/gpu-services MOCK=$ROOT/target/gpu-images/mock-cuda/libcuda.so.1
if [ -e "$SV/rpc.sm_90.cubin" ] && [ -e "$SV/rpc.emu32.so" ] && [ -e "$MOCK" ] && [ -e "$REL/libLLVMOffload.so.23.0git" ]; then
  if clang-22 -O2 -Wall -I"$ROOT/include/liboffload-23" "$ROOT/c-tests/gpu/services/rpc_host.c" -L"$REL" -l:libLLVMOffload.so.23.0git \
    -o "$O/rpc_host" 2>"$O/rpc_host.build"; then
    LD_LIBRARY_PATH=$REL "${MPIRUN[@]}" -np 1 "$O/rpc_host" "$SV/rpc.sm_90.cubin" hello : \
      -np 1 env OMPTARGET_RS_LIBCUDA="$MOCK" MOCK_CUDA_EMU="$SV/rpc.emu32.so" "$SERVER" >"$O/rpc.out" 2>&1
    rc=$?
    if [ $rc = 0 ] && [ "$(grep -c '^hello team' "$O/rpc.out")" = 32 ] && has "$O/rpc.out" "host: done"; then
      ok "rpc: printf of 4 teams x 8 threads of a GPU image on a remote GPU device, served on its server"
    else bad "rpc on a remote GPU device (exit $rc)" "$O/rpc.out"; fi
  else bad "rpc_host build" "$O/rpc_host.build"; fi
else
  echo "SKIP  rpc on a remote GPU device: no $SV/rpc.sm_90.cubin (c-tests/gpu/services.sh builds it)"
fi

# 6. a server killed mid-run: in a copy to the other server (12), in one
# from it (13), in a copy from the host (14).
for k in 12 13 14; do
  start=$(date +%s)
  OMPTARGET_RS_REMOTE_TIMEOUT=2 OMPTARGET_RS_REMOTE_PING=0.2 "${MPIRUN[@]}" --enable-recovery -x OMPTARGET_RS_REMOTE_TIMEOUT -x OMPTARGET_RS_REMOTE_PING \
    -np 1 "$O/kill" 4 : -np 1 "$SERVER" --devices 1 : -np 1 "$SERVER" --devices 1 --die-after $k >"$O/kill$k.out" 2>&1
  rc=$?
  took=$(($(date +%s) - start))
  if has "$O/kill$k.out" "dying server: failed with an error" && grep -qE "rank 2 did not (answer|take part)" "$O/kill$k.out" &&
    has "$O/kill$k.out" "again: refused" && has "$O/kill$k.out" "rank 1 copies: ok" && has "$O/kill$k.out" "local device 0: ok" &&
    has "$O/kill$k.out" "remote device 4 (rank 1): ok" && [ $took -lt 60 ]; then
    ok "kill.c --die-after $k: server rank 2 killed mid-run: error naming rank 2 after ${took} s, local and rank 1 devices keep working"
  else bad "kill.c --die-after $k (exit $rc, ${took} s)" "$O/kill$k.out"; fi
done

# Exit with nowait regions in flight on a remote device, returning from main
# and calling exit(): a clean end (before: Open MPI aborted the process, a
# helper thread had called MPI_Test after MPI_Finalize), three times each.
n_ok=0
for run in 1 2 3; do
  for how in "" exit; do
    "${MPIRUN[@]}" -np 1 "$O/exit_inflight" 4 $how : -np 1 "$SERVER" --devices 1 >"$O/exit_inflight.out" 2>&1
    rc=$?
    if [ $rc = 0 ] && [ "$(grep -v '^ *$' "$O/exit_inflight.out")" = "exiting with work in flight" ]; then n_ok=$((n_ok + 1)); else break 2; fi
  done
done
if [ $n_ok = 6 ]; then
  ok "exit_inflight.c: exit with 16 nowait regions in flight on a remote device ends cleanly (6 runs)"
else bad "exit_inflight.c (run $((n_ok + 1)), exit $rc)" "$O/exit_inflight.out"; fi

# 7. no servers: only the local devices (without mpirun, and alone in mpirun).
"$O/basic" >"$O/plain.out" 2>&1
rc=$?
"${MPIRUN[@]}" -np 1 "$O/basic" >"$O/alone.out" 2>&1
rc2=$?
if [ $rc = 0 ] && [ $rc2 = 0 ] && has "$O/plain.out" "devices 4" && has "$O/alone.out" "devices 4"; then
  ok "no servers: the local devices only, with and without mpirun"
else bad "no servers (exit $rc, $rc2)" "$O/plain.out"; cat "$O/alone.out"; fi

echo "$pass passed, $fail failed"
[ $fail = 0 ]
