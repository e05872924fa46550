#!/usr/bin/env bash
# run.sh [GPU_IMAGES_DIR] - the asynchronous launch path of OUR runtime end to
# end on a CUDA device (__tgt_async_info_create, __tgt_target_kernel_async,
# __tgt_async_info_synchronize, __tgt_async_info_destroy; see
# async_harness.c for the checks a) to e)).
#
# Builds async_harness.c (cc, no CUDA headers) with the sm_90 cubin of the
# gpu-images (default target/gpu-images, built by c-tests/gpu-images.sh)
# embedded, into target/gpu-async/, and runs it in library-path replacement
# mode (a temp dir with libomptarget.so.22.1 -> target/release/libomptarget_rs.so,
# or $OMPTARGET_RS_LIB, on LD_LIBRARY_PATH):
#
#   stand-in mode (no real libcuda, or OMPTARGET_RS_LIBCUDA set):
#     1. on c-tests/mock-cuda-async (stream work deferred until waited for),
#        with the "nothing landed before synchronize" checks (--deferred);
#     2. on plain mock-cuda (stream work runs at once): same results;
#     3. on mock-cuda-async with MOCK_ASYNC_FAIL_KERNEL=saxpy (--fail, its own
#        process): a queued kernel failure makes synchronize return non-zero.
#   GPU mode (OMPTARGET_RS_LIBCUDA unset and libcuda.so.1 on the system):
#     a) to d) on device 0; the stand-in-only checks print "skipped: ...".
#   GPU_ASYNC_MODE=gpu|stand-in forces a mode.
#
# Prints one PASS/FAIL line per check and "N passed, N failed"; exits 1 on a
# failure. Without the images: "skipped: gpu-images not built", exit 0.
# Without a C compiler, a harness built before in target/gpu-async is used.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
G=${1:-$ROOT/target/gpu-images}
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
TMO=${HARNESS_TIMEOUT:-120}
OUTDIR=${GPU_ASYNC_OUT:-$ROOT/target/gpu-async}

IMAGE=$G/kernels/kernels.sm_90.cubin
if [ ! -e "$IMAGE" ]; then
  echo "skipped: gpu-images not built (run c-tests/gpu-images.sh; looked in $G)"
  exit 0
fi
G=$(cd "$G" && pwd)
IMAGE=$G/kernels/kernels.sm_90.cubin
[ -f "$LIB" ] || { echo "gpu-async/run.sh: no runtime at $LIB (cargo build --release)" >&2; exit 2; }
LIB=$(readlink -f "$LIB")

# Which driver: a real one only when the caller did not name one (a
# libcuda.so.1 that is mock-cuda, e.g. on LD_LIBRARY_PATH, does not count).
has_real_libcuda() {
  local d f
  IFS=: read -r -a dirs <<<"${LD_LIBRARY_PATH:-}"
  for f in $(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF}'); do
    grep -qa '\[mock-cuda' "$f" 2>/dev/null || return 0
  done
  for d in "${dirs[@]}" /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/nvidia/lib64; do
    f=$d/libcuda.so.1
    [ -n "$d" ] && [ -e "$f" ] && ! grep -qa '\[mock-cuda' "$f" && return 0
  done
  return 1
}
MODE=stand-in
if [ -z "${OMPTARGET_RS_LIBCUDA:-}" ] && has_real_libcuda; then MODE=gpu; fi
case ${GPU_ASYNC_MODE:-} in gpu | stand-in) MODE=$GPU_ASYNC_MODE ;; esac
MOCK=$G/mock-cuda
EMU=$G/kernels/kernels.emu.so
if [ $MODE = stand-in ] && { [ ! -e "$MOCK/libcuda.so.1" ] || [ ! -e "$EMU" ]; }; then
  echo "skipped: gpu-images not built (no mock-cuda or kernels.emu.so in $G, and no real libcuda)"
  exit 0
fi

W=$(mktemp -d /tmp/omptarget-rs-gpu-async.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/shim" "$W/logs"
ln -s "$LIB" "$W/shim/libomptarget.so.22.1"

pass=0 fail=0
ok() { echo "PASS  $1"; pass=$((pass + 1)); }
bad() {
  echo "FAIL  $1${2:+: $2}"; fail=$((fail + 1))
  [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/      | /' "$3" | tail -n 25
}

# --- build ---------------------------------------------------------------------
H=$OUTDIR/async_harness
CC=${CC:-$(command -v cc || command -v gcc || command -v clang-22 || command -v clang || true)}
if [ -n "$CC" ]; then
  if "$CC" -O2 -Wall -Wextra -DIMAGE_FILE="\"$IMAGE\"" "$HERE/async_harness.c" -o "$W/async_harness" \
       -L"$W/shim" -l:libomptarget.so.22.1 -ldl >"$W/logs/build.log" 2>&1; then
    H=$W/async_harness
    # kept for a later run without a compiler (best effort)
    mkdir -p "$OUTDIR" 2>/dev/null && cp -f "$H" "$OUTDIR/async_harness.tmp.$$" 2>/dev/null &&
      mv -f "$OUTDIR/async_harness.tmp.$$" "$OUTDIR/async_harness"
    if [ -s "$W/logs/build.log" ]; then bad "async_harness.c builds warnings-clean ($CC -Wall -Wextra)" "warnings" "$W/logs/build.log"
    else ok "async_harness.c builds warnings-clean ($CC -Wall -Wextra), $IMAGE embedded"; fi
  else
    bad "async_harness.c build" "$CC failed" "$W/logs/build.log"
    echo "$pass passed, $fail failed"
    exit 1
  fi
elif [ -x "$H" ]; then
  echo "(no C compiler: using the harness built before, $H)"
else
  echo "skipped: gpu-async (no C compiler and no harness built before in $OUTDIR)"
  exit 0
fi

# run NAME LOG ENV... -- ARGS...: runs the harness with our runtime first on the
# library path; relays its [PASS]/[FAIL] lines; checks its exit status and summary.
# Sets RC.
run() {
  local name=$1 log=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  ( env "${envs[@]}" timeout "$TMO" "$H" "$@"; exit $? ) >"$log" 2>&1
  RC=$?
  local line
  while IFS= read -r line; do
    case $line in
      "[PASS] "*) ok "$name: ${line#\[PASS\] }" ;;
      "[FAIL] "*) bad "$name: ${line#\[FAIL\] }" "" ;;
    esac
  done < <(grep -aE '^\[(PASS|FAIL)\] ' "$log")
  local summary
  summary=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$log" || echo "no summary")
  if [ $RC -eq 0 ] && [[ $summary == *" 0 failed" ]]; then
    ok "$name: harness exit 0 ($summary)"
  else
    bad "$name: harness exit $RC ($summary)" "see log" "$log"
  fi
}

# Debug line of our CUDA plugin: the image was loaded by OUR runtime.
served() { grep -q 'omptarget-rs debug: cuda: device 0: loaded sm_90 cubin' "$1"; }

if [ $MODE = stand-in ]; then
  A=$W/async
  have_async=0
  if bash "$ROOT/c-tests/mock-cuda-async/build.sh" "$A" "$MOCK/libcuda.so.1" >"$W/logs/async-build.log" 2>&1; then
    have_async=1
  elif grep -q 'no C compiler' "$W/logs/async-build.log"; then
    echo "skipped: mock-cuda-async runs (no C compiler to build the deferring stand-in)"
  else
    bad "mock-cuda-async build" "failed" "$W/logs/async-build.log"
  fi

  if [ $have_async = 1 ]; then
    # 1. the deferring stand-in: a) to d), with the "not landed yet" checks
    log=$W/logs/deferred.log
    run "mock-cuda-async" "$log" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBCUDA="$A/libcuda-async.so" \
      MOCK_CUDA_EMU="$EMU" LIBOMPTARGET_DEBUG=1 -- --deferred
    if grep -q "cuda: opened $A/libcuda-async.so" "$log" && served "$log"; then
      ok "mock-cuda-async: our runtime's CUDA plugin ran it on the deferring stand-in"
    else bad "mock-cuda-async: driver" "our CUDA plugin did not open libcuda-async.so / load the cubin" "$log"; fi
    if grep -q 'WARNING' "$log"; then
      bad "mock-cuda-async: no stand-in warnings" "a buffer freed while queued work used it, or no context" "$log"
    else ok "mock-cuda-async: no stand-in warnings (no buffer freed under queued work)"; fi
  fi

  # 2. plain mock-cuda: stream work runs at once; the same results
  log=$W/logs/plain.log
  run "mock-cuda" "$log" LD_LIBRARY_PATH="$W/shim" OMPTARGET_RS_LIBCUDA="$MOCK/libcuda.so.1" \
    MOCK_CUDA_EMU="$EMU" LIBOMPTARGET_DEBUG=1 --
  if grep -q "cuda: opened $MOCK/libcuda.so.1" "$log" && served "$log"; then
    ok "mock-cuda: our runtime's CUDA plugin ran it on plain mock-cuda"
  else bad "mock-cuda: driver" "our CUDA plugin did not open mock-cuda / load the cubin" "$log"; fi
  if grep -q 'WARNING' "$log"; then bad "mock-cuda: no stand-in warnings" "warned" "$log"
  else ok "mock-cuda: no stand-in warnings"; fi

  if [ $have_async = 1 ]; then
    # 3. a queued kernel failure, in its own process
    log=$W/logs/fail.log
    run "mock-cuda-async, MOCK_ASYNC_FAIL_KERNEL=saxpy" "$log" LD_LIBRARY_PATH="$W/shim" \
      OMPTARGET_RS_LIBCUDA="$A/libcuda-async.so" MOCK_CUDA_EMU="$EMU" MOCK_ASYNC_FAIL_KERNEL=saxpy -- --fail
    if grep -q 'omptarget error: .*CUDA error 719' "$log"; then
      ok "mock-cuda-async, MOCK_ASYNC_FAIL_KERNEL=saxpy: the runtime reports the launch failure (CUDA error 719)"
    else
      bad "mock-cuda-async, MOCK_ASYNC_FAIL_KERNEL=saxpy: error message" "no 'omptarget error: ... CUDA error 719' line" "$log"
    fi
    grep -a '^\[INFO\] e:' "$log" | sed 's/^/      /'
  fi
else
  # GPU mode: the system's libcuda.so.1, our runtime.
  log=$W/logs/gpu.log
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/(gpu) /'
  run "gpu" "$log" LD_LIBRARY_PATH="$W/shim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LIBOMPTARGET_DEBUG=1 --
  if served "$log"; then ok "gpu: our runtime's CUDA plugin loaded the sm_90 cubin"
  else bad "gpu: driver" "our CUDA plugin did not load the cubin" "$log"; fi
  echo "skipped: a)-c) 'host buffer unchanged before synchronize' checks (deferring stand-in only)"
  echo "skipped: e) queued kernel failure (MOCK_ASYNC_FAIL_KERNEL: stand-in only)"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
