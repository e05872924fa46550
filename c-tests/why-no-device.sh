#!/usr/bin/env bash
# "Why no device": a CUDA (PTX sm_90) image registered where no
# device takes it: the construct falls back to the host (default policy) or
# aborts (mandatory), and ours says once, per registered image, why:
#   - no CUDA driver loads (OMPTARGET_RS_LIBCUDA points at a missing file);
#   - cuInit fails (mock-cuda with MOCK_CUDA_INIT_ERROR=100 / 999): its name;
#   - the device is sm_80 (mock-cuda with MOCK_CUDA_SM=80, 1 and 2 devices);
#   - OMP_TARGET_OFFLOAD=disabled: nothing, as LLVM 22.1 (the user asked for
#     the host; c-tests/omp/abort_disabled_device.stderr-same pins 22.1's
#     stderr), and the construct runs on the host.
# The mock-cuda cases need c-tests/gpu-images.sh (else "skipped").
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
OUT=$HERE/build/why-no-device
mkdir -p "$OUT"
[ -f "$LIB" ] || { echo "why-no-device.sh: $LIB missing (cargo build --release)"; exit 1; }
cc -std=c11 -Wall -Wextra -Werror "$HERE/why-no-device/harness.c" -o "$OUT/harness" -L/usr/lib/llvm-22/lib -lomptarget \
  -Wl,-rpath,/usr/lib/llvm-22/lib || exit 1
fail=0
check() { # name, expected exit, env...
  check_line "$1" "$2" 'omptarget error: no device for image 0: CUDA image for sm_90: no CUDA device: ' \
    OMPTARGET_RS_LIBCUDA=/nonexistent/libcuda.so.1 "${@:3}"
}
check_line() { # name, expected exit, expected line, env...
  local name=$1 want=$2 line=$3
  shift 3
  # A subshell: the shell's "Aborted" notice of an expected abort lands in the .err file.
  (env LD_PRELOAD="$LIB" "$@" "$OUT/harness"; exit $?) >"$OUT/$name.out" 2>"$OUT/$name.err"
  local rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qF "$line" "$OUT/$name.err" || [ "$(grep -c 'no device for image' "$OUT/$name.err")" -ne 1 ]; then
    echo "FAIL why-no-device [$name]: exit $rc (want $want)"; sed 's/^/    /' "$OUT/$name.err"; fail=1
  else
    echo "PASS why-no-device [$name]: $(grep 'no device for image' "$OUT/$name.err")"
  fi
}
check default 0
check mandatory 134 OMP_TARGET_OFFLOAD=mandatory
grep -q "fell back to the host" "$OUT/default.out" || { echo "FAIL why-no-device [default]: no fallback"; fail=1; }

# Offloading disabled: no line (22.1 prints nothing either), the host runs it.
for who in llvm ours; do
  pre=(); [ $who = ours ] && pre=(LD_PRELOAD="$LIB")
  env "${pre[@]}" OMP_TARGET_OFFLOAD=disabled "$OUT/harness" >"$OUT/disabled.$who.out" 2>"$OUT/disabled.$who.err"
  echo "exit=$?" >>"$OUT/disabled.$who.out"
done
if cmp -s "$OUT/disabled.llvm.out" "$OUT/disabled.ours.out" && cmp -s "$OUT/disabled.llvm.err" "$OUT/disabled.ours.err" &&
   [ ! -s "$OUT/disabled.ours.err" ] && grep -q "fell back to the host" "$OUT/disabled.ours.out"; then
  echo "PASS why-no-device [disabled]: nothing said, runs on the host, as LLVM 22.1"
else
  echo "FAIL why-no-device [disabled]: differs from LLVM 22.1"; diff "$OUT/disabled.llvm.err" "$OUT/disabled.ours.err" | sed 's/^/    /'; fail=1
fi

G=${GPU_IMAGES_DIR:-$ROOT/target/gpu-images}
if [ ! -e "$G/mock-cuda/libcuda.so.1" ]; then
  echo "skipped: why-no-device on mock-cuda (c-tests/gpu-images.sh not run)"
  exit $fail
fi
M=(LD_LIBRARY_PATH="$G/mock-cuda")
init='omptarget error: no device for image 0: CUDA image for sm_90: no CUDA device: cuda: error in cuInit: '
check_line cuinit-100 0 "${init}CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected (CUDA error 100)" "${M[@]}" MOCK_CUDA_INIT_ERROR=100
check_line cuinit-100-mandatory 134 "${init}CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected (CUDA error 100)" "${M[@]}" \
  MOCK_CUDA_INIT_ERROR=100 OMP_TARGET_OFFLOAD=mandatory
check_line cuinit-999 0 "${init}CUDA_ERROR_UNKNOWN: unknown error (CUDA error 999)" "${M[@]}" MOCK_CUDA_INIT_ERROR=999
arch='omptarget error: no device for image 0: CUDA image for sm_90 (sm_90 PTX) is not compatible with any CUDA device: '
check_line sm80 0 "${arch}device 0 is sm_80 (compute capability 8.0)" "${M[@]}" MOCK_CUDA_SM=80
check_line sm80-2-devices-mandatory 134 "${arch}device 0 is sm_80 (compute capability 8.0), device 1 is sm_80 (compute capability 8.0)" \
  "${M[@]}" MOCK_CUDA_SM=80 MOCK_CUDA_DEVICES=2 OMP_TARGET_OFFLOAD=mandatory
exit $fail
