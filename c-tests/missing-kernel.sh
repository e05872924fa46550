#!/usr/bin/env bash
# Launching a kernel that its device image lacks. The
# differential part is abi/missing_kernel (the image loads, the rest runs, the
# same "Failed to load kernel" lines as 22.1). 22.1 crashes (SIGSEGV) when the
# missing kernel is launched; ours must fail that launch with exit 134 and a
# message naming the kernel, after the earlier output.
set -euo pipefail
cd "$(dirname "$0")/.."
LIB=${OMPTARGET_RS_LIB:-$PWD/target/release/libomptarget_rs.so}
bash c-tests/run.sh --build-only abi/missing_kernel >/dev/null
dir=c-tests/build/abi/missing_kernel
out=$(mktemp) err=$(mktemp)
out=$(realpath "$out") err=$(realpath "$err")
trap 'rm -f "$out" "$err"' EXIT
# (the outer redirection keeps bash's "Aborted" job notice out of the log)
rc=$( (cd "$dir" && LD_PRELOAD="$LIB" ./missing_kernel ../devimg/devimg.so launch-missing >"$out" 2>"$err"; echo $?) 2>/dev/null)
fail() { echo "FAIL missing-kernel: $*"; sed 's/^/    /' "$err"; exit 1; }
[ "$rc" = 134 ] || fail "exit status $rc, expected 134"
grep -q '^k3_count on dev1 rc=0 out=12$' "$out" || fail "output before the launch missing"
grep -q 'missing kernel rc=' "$out" && fail "the launch of the missing kernel returned"
grep -qF 'omptarget error: Failed to load kernel k3_not_in_the_image: the image loaded on device 0 does not contain it' "$err" ||
  fail "no launch error naming the kernel"
grep -qF 'omptarget fatal error 1: failure of target construct while offloading is mandatory' "$err" || fail "no fatal line"
echo "PASS missing-kernel [launch of the missing kernel on ours]"
