#!/usr/bin/env bash
# "Why no device" (issue 12): a CUDA (PTX sm_90) image registered where no
# CUDA driver loads (OMPTARGET_RS_LIBCUDA points at a missing file): the
# construct falls back to the host (default policy) or aborts (mandatory),
# and ours says once, per registered image, why no device took it.
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
  local name=$1 want=$2
  shift 2
  env LD_PRELOAD="$LIB" OMPTARGET_RS_LIBCUDA=/nonexistent/libcuda.so.1 "$@" "$OUT/harness" >"$OUT/$name.out" 2>"$OUT/$name.err"
  local rc=$?
  local line='omptarget error: no device for image 0: CUDA image for sm_90: no CUDA device: '
  if [ "$rc" -ne "$want" ] || ! grep -qF "$line" "$OUT/$name.err" || [ "$(grep -c 'no device for image' "$OUT/$name.err")" -ne 1 ]; then
    echo "FAIL why-no-device [$name]: exit $rc (want $want)"; sed 's/^/    /' "$OUT/$name.err"; fail=1
  else
    echo "PASS why-no-device [$name]: $(grep 'no device for image' "$OUT/$name.err")"
  fi
}
check default 0
check mandatory 134 OMP_TARGET_OFFLOAD=mandatory
grep -q "fell back to the host" "$OUT/default.out" || { echo "FAIL why-no-device [default]: no fallback"; fail=1; }
exit $fail
