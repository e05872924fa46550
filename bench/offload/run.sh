#!/usr/bin/env bash
# bench/offload/run.sh - ol* costs on the CPU device: instructions
# per operation from callgrind (the loop function only, divided by N) and ns per
# operation, for olLaunchKernel(empty)+olSyncQueue, olMemcpy 8 B and 64 MiB,
# olMemAlloc+olMemFree; beside the OpenMP path of the same runtime and the
# physical floor (a call through a pointer, memcpy, malloc+free).
#   bench/offload/run.sh [--smoke]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
INC=/usr/lib/llvm-22/include
[ -f "$INC/offload/OffloadAPI.h" ] || { echo "skipped: liboffload-22-dev not installed"; exit 0; }
SMOKE=0; [ "${1:-}" = --smoke ] && SMOKE=1
cargo build --release -q
B=$ROOT/target/bench-offload
mkdir -p "$B/lib"
cp -f target/release/libomptarget_rs.so "$B/lib/libomptarget_rs.so"
ln -sf libomptarget_rs.so "$B/lib/libomptarget.so.22.1"
ln -sf libomptarget_rs.so "$B/lib/libLLVMOffload.so.22.1"
clang-22 -O1 -shared -fPIC c-tests/offload/kernel.c -o "$B/kernel.so"
clang-22 -O2 -g -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -I"$INC" bench/offload/ol_bench.c \
  -L/usr/lib/llvm-22/lib -lLLVMOffload -o "$B/ol_bench"
run() { LD_LIBRARY_PATH=$B/lib "$B/ol_bench" "$@" "$B/kernel.so"; }

per_op() { # per_op MODE -> instructions per operation, the measured loop only
  local n=20000 out=$B/cg.$1
  [ $SMOKE = 1 ] && n=1000
  LD_LIBRARY_PATH=$B/lib valgrind --tool=callgrind --toggle-collect=ol_bench_loop --callgrind-out-file="$out" \
    "$B/ol_bench" "$1" $n "$B/kernel.so" >/dev/null 2>&1
  grep -E '^summary:' "$out" | awk -v n=$n '{ printf "%.1f", $2 / n }'
}
ns() { # ns MODE N -> median of 5 runs
  local r=5; [ $SMOKE = 1 ] && r=1
  for _ in $(seq $r); do run "$1" "$2" | awk '{print $3}'; done | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
}
N=200000; NBIG=20
[ $SMOKE = 1 ] && N=2000 NBIG=2
have_vg=1; command -v valgrind >/dev/null || { have_vg=0; echo "warning: valgrind missing, no instruction counts"; }
printf '| operation | ol* instr | OpenMP (ours) instr | floor instr | ol* ns | OpenMP ns | floor ns |\n|---|---:|---:|---:|---:|---:|---:|\n'
row() { # row LABEL OL OMP FLOOR
  local i1=- i2=- i3=-
  if [ $have_vg = 1 ]; then i1=$(per_op "$2"); i2=$(per_op "$3"); i3=$(per_op "$4"); fi
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$i1" "$i2" "$i3" "$(ns "$2" $N)" "$(ns "$3" $N)" "$(ns "$4" $N)"
}
row "empty kernel launch + sync" ol_launch omp_region floor_call
row "copy 8 B host to device" ol_memcpy8 omp_memcpy8 floor_memcpy8
row "alloc + free 64 B" ol_alloc omp_alloc floor_malloc
# 64 MiB: olMemcpy and memcpy interleaved in each process; medians over the runs.
r=5; [ $SMOKE = 1 ] && r=1
for _ in $(seq $r); do run xfer64m $NBIG; done >"$B/xfer.out"
med() { grep "^ns $1 " "$B/xfer.out" | awk '{print $3}' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
a=$(med ol_memcpy64m); f=$(med floor_memcpy64m)
awk -v a="$a" -v f="$f" 'BEGIN { s = 64 * 1048576 / 1e9; printf "| copy 64 MiB host to device | GB/s: ol* %.2f, memcpy %.2f, ratio %.3f (goal >= 0.95) |\n", s / (a / 1e9), s / (f / 1e9), f / a }'
