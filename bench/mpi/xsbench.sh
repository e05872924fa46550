#!/usr/bin/env bash
# bench/mpi/xsbench.sh [--smoke] - XSBench event mode (bench/mpi/xsbench,
# built with -DXS_SPREAD) with its lookups spread in chunks over several
# OpenMP devices, remote devices of omptarget-rs-device MPI ranks among them,
# against one local device. Prints one table: median runtime and lookups/s
# of RUNS runs per configuration, the median time of the one-off mapping of
# the read-only data and of the lookups alone, each configuration's
# verification checksum (every run's must equal the unmodified build's on
# device 0) and the ratios to the one-local-device run. A run that fails
# (crash, timeout, no checksum) is counted in the table, left out of the
# medians, and makes the script exit 1. --smoke: one short run of each
# configuration.
#
# Settings: RUNS (default 5), LOOKUPS (default 1000000; "-s small", 240 MB
# of read-only data), XS_RT=dir with libomptarget.so.22.1,
# libomptarget_rs_remote.so and omptarget-rs-device (default: cargo build
# --release --workspace and target/release).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
if ! command -v mpirun >/dev/null; then
  echo "SKIP: mpirun not installed"
  exit 0
fi
RUNS=${RUNS:-5} LOOKUPS=${LOOKUPS:-1000000} T=300
if [ "${1:-}" = --smoke ]; then RUNS=1 LOOKUPS=200000 T=120; fi
O=$ROOT/target/mpi-bench/xsbench
mkdir -p "$O/lib"
if [ -n "${XS_RT:-}" ]; then
  LIB=$XS_RT SERVER=$XS_RT/omptarget-rs-device
else
  cargo build --release --workspace -q
  ln -sf "$ROOT/target/release/libomptarget_rs.so" "$O/lib/libomptarget.so.22.1"
  LIB=$O/lib SERVER=$ROOT/target/release/omptarget-rs-device
fi
CC=(clang-22 -std=gnu99 -O2 -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu)
SRC=(bench/mpi/xsbench/{Main,io,Simulation,GridInit,XSutils,Materials}.c)
"${CC[@]}" "${SRC[@]}" -lm -o "$O/xs-upstream" 2>"$O/build.log"
"${CC[@]}" -DXS_SPREAD "${SRC[@]}" -lm -o "$O/xs-spread" 2>>"$O/build.log"

export OMPI_MCA_btl=self,vader OMPI_MCA_mpi_yield_when_idle=1
ARGS=(-m event -s small -l "$LOOKUPS")
# run NAME BINARY DEVICES SERVER_RANKS DEVICES_PER_SERVER -> $O/NAME.N.out
# Rank 0 writes its output to the file itself: XSBench exits 1 when the
# checksum is not upstream's for the default size (always, with -l), mpirun
# then aborts the job and may drop forwarded output.
run() {
  local name=$1 bin=$2 devs=$3 ranks=$4 per=$5 i rc
  for i in $(seq "$RUNS"); do
    local out=$O/$name.$i.out
    rc=0
    if [ "$ranks" = 0 ]; then
      XS_DEVICES=$devs LD_LIBRARY_PATH=$LIB timeout $T "$bin" "${ARGS[@]}" >"$out" 2>&1 || rc=$?
    else
      XS_DEVICES=$devs XS_OUT=$out LD_LIBRARY_PATH=$LIB timeout $T mpirun --allow-run-as-root --oversubscribe \
        -x XS_DEVICES -x XS_OUT -x LD_LIBRARY_PATH \
        -np 1 sh -c 'exec "$0" "$@" >"$XS_OUT" 2>&1' "$bin" "${ARGS[@]}" \
        : -np "$ranks" "$SERVER" --devices "$per" >"$O/$name.$i.mpirun" 2>&1 || rc=$?
    fi
    # 0, or 1 for "not upstream's checksum" (compared below); not a timeout or
    # crash. A failed run is listed, left out of the medians and fails the script.
    if [ $rc -gt 1 ] || ! grep -q '^Verification checksum:' "$out"; then
      echo "FAIL: $name run $i exited $rc (log: $out, $O/$name.$i.mpirun)" | tee -a "$O/failures"
      grep -h -m2 -E 'signal|rror' "$out" "$O/$name.$i.mpirun" 2>/dev/null | tee -a "$O/failures" || true
    else
      echo "$i" >>"$O/$name.ok"
    fi
  done
}
CONFIGS=(
  "upstream|unmodified, local device 0|xs-upstream|0|0|0"
  "local1|local device 0|xs-spread|0|0|0"
  "remote1|1 remote device (1 server rank)|xs-spread|4|1|1"
  "remote2|2 remote devices (2 ranks x 1)|xs-spread|4,5|2|1"
  "remote4|4 remote devices (2 ranks x 2)|xs-spread|4,5,6,7|2|2"
  "local4|local devices 0-3|xs-spread|0,1,2,3|0|0"
)
rm -f "$O"/*.out "$O"/*.mpirun "$O"/*.ok "$O/failures"
for c in "${CONFIGS[@]}"; do
  IFS='|' read -r name _ bin devs ranks per <<<"$c"
  run "$name" "$O/$bin" "$devs" "$ranks" "$per"
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
ok_runs() { cat "$O/$1.ok" 2>/dev/null || true; }
field() { # field NAME AWK-PROGRAM -> median over the runs that worked
  local i
  for i in $(ok_runs "$1"); do awk "$2" "$O/$1.$i.out"; done | median
}
REF=$(for i in $(ok_runs upstream); do awk '/^Verification checksum:/ { print $3 }' "$O/upstream.$i.out"; done | awk 'NR == 1')
[ -n "$REF" ] || { echo "FAIL: the unmodified build gave no checksum"; exit 1; }
BASE=$(field local1 '/^Runtime:/ { print $2 }')
BASE_LK=$(field local1 '/^XS spread: map once/ { print $8 }')
bad=0
echo "XSBench event, -s small -l $LOOKUPS, median of $RUNS run(s) (of those that finished); reference checksum $REF (unmodified build, device 0)"
echo
echo "| configuration | devices | runtime s | lookups/s | map once s | lookups s | checksum | runtime / local 0 | lookups s / local 0 |"
echo "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |"
for c in "${CONFIGS[@]}"; do
  IFS='|' read -r name label _ devs _ _ <<<"$c"
  rt=$(field "$name" '/^Runtime:/ { print $2 }')
  lps=$(field "$name" '/^Lookups\/s:/ { gsub(",", "", $2); print $2 }')
  map=$(field "$name" '/^XS spread: map once/ { print $5 }')
  lk=$(field "$name" '/^XS spread: map once/ { print $8 }')
  sums=$(for i in $(ok_runs "$name"); do awk '/^Verification checksum:/ { print $3 }' "$O/$name.$i.out"; done | sort -u | tr '\n' ' ')
  n=$(ok_runs "$name" | wc -l)
  if [ "$sums" = "$REF " ]; then ok="$REF (same)"; else ok="MISMATCH: $sums"; bad=1; fi
  if [ "$n" -lt "$RUNS" ]; then ok="$ok; FAILED $((RUNS - n)) of $RUNS runs"; bad=1; fi
  [ "$n" = 0 ] && ok="FAILED $RUNS of $RUNS runs"
  r1=-; [ "$rt" != - ] && r1=$(awk -v a="$rt" -v b="$BASE" 'BEGIN { printf "%.2f", a / b }')
  r2=-; [ "$lk" != - ] && r2=$(awk -v a="$lk" -v b="$BASE_LK" 'BEGIN { printf "%.2f", a / b }')
  [ "$name" = upstream ] && devs="0 (default)"
  echo "| $label | $devs | $rt | $lps | $map | $lk | $ok | $r1 | $r2 |"
done
echo
echo "(runtime: XSBench's own timer, the mapping included; map once: target enter"
echo "data of the read-only data to every device at once; lookups: the chunks.)"
if [ $bad = 1 ]; then
  echo "FAIL: a run failed or its checksum differs from the unmodified build's"
  cat "$O/failures" 2>/dev/null || true
  exit 1
fi
echo "PASS: every run finished and its checksum equals the unmodified build's"
