#!/usr/bin/env bash
# Stress test: concurrent map/unmap of one variable.
# Builds c-tests/omp/map_race_tofrom.c and runs it RUNS times (default 200)
# as separate processes, each 8 threads x 10^4 `target map(tofrom:)` regions
# on one shared counter (plus enter/exit pairs), through our library in
# library-path replacement mode, then the same with the host plugin's
# deferred queues (OMPTARGET_RS_HOST_QUEUES=2, QRUNS runs, default 50).
# Every run must end with the exact count.
#
# Usage: c-tests/stress/map-race.sh [RUNS [QRUNS]]
# Prints one line per mode and "N passed, N failed".
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
LIB=${OMPTARGET_RS_LIB:-$REPO/target/release/libomptarget_rs.so}
RUNS=${1:-200}
QRUNS=${2:-50}
OUT=$REPO/target/stress
mkdir -p "$OUT/shim"
ln -sf "$LIB" "$OUT/shim/libomptarget.so.22.1"
clang-22 -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -O2 "$REPO/c-tests/omp/map_race_tofrom.c" -o "$OUT/map_race" || exit 1

passed=0 failed=0
run_mode() { # name runs env...
  local name=$1 runs=$2
  shift 2
  local wrong=0 crashed=0 i rc
  local t0=$SECONDS
  for ((i = 0; i < runs; i++)); do
    env "$@" LD_LIBRARY_PATH="$OUT/shim" timeout 120 "$OUT/map_race" 10000 1 8 >"$OUT/last.out" 2>"$OUT/last.err"
    rc=$?
    if [ $rc -eq 1 ]; then
      wrong=$((wrong + 1))
      [ $wrong -le 3 ] && sed 's/^/    /' "$OUT/last.out"
    elif [ $rc -ne 0 ]; then
      crashed=$((crashed + 1))
      [ $crashed -le 3 ] && { echo "    exit $rc"; tail -3 "$OUT/last.err" | sed 's/^/    /'; }
    fi
  done
  if [ $wrong -eq 0 ] && [ $crashed -eq 0 ]; then
    echo "PASS map-race [$name]: $runs runs x 8 threads x 10^4 regions, 0 wrong ($((SECONDS - t0)) s)"
    passed=$((passed + 1))
  else
    echo "FAIL map-race [$name]: $wrong of $runs runs wrong, $crashed crashed"
    failed=$((failed + 1))
  fi
}
run_mode replace "$RUNS"
run_mode queued "$QRUNS" OMPTARGET_RS_HOST_QUEUES=2
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
