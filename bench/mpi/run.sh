#!/usr/bin/env bash
# bench/mpi/run.sh [--smoke] - remote devices over MPI against a
# local device and against raw MPI point-to-point of the same bytes (the
# floor), in one run on this machine's ranks: one program rank, one server
# rank with one device (shared memory transport, as for ranks of one node).
# Prints a table of median times and the ratios remote/local and
# remote/floor.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
if ! command -v mpirun >/dev/null || ! command -v mpicc >/dev/null; then
  echo "SKIP: mpirun/mpicc not installed"
  exit 0
fi
if [ "${1:-}" = --smoke ]; then export REPS=50 COPIES=2; fi
cargo build --release --workspace -q
O=$ROOT/target/mpi-bench
mkdir -p "$O/lib"
ln -sf "$ROOT/target/release/libomptarget_rs.so" "$O/lib/libomptarget.so.22.1"
clang-22 -O2 -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu bench/mpi/remote_bench.c -o "$O/remote_bench"
mpicc -O2 bench/mpi/mpi_floor.c -o "$O/mpi_floor"
export OMPI_MCA_btl=self,vader
MPIRUN=(timeout 300 mpirun --allow-run-as-root --oversubscribe -x REPS -x COPIES)
export REPS=${REPS:-2000} COPIES=${COPIES:-10}
# Device 0: the host plugin's first device; device 4: the server's.
LD_LIBRARY_PATH=$O/lib "${MPIRUN[@]}" -np 1 "$O/remote_bench" 0 4 : -np 1 target/release/omptarget-rs-device --devices 1 >"$O/omp.out"
# Device to device, 64 MiB: two local devices; two servers' devices (4, 5),
# straight between the servers and relayed through the program rank.
LD_LIBRARY_PATH=$O/lib "${MPIRUN[@]}" -np 1 "$O/remote_bench" 0:1 4:5 : -np 2 target/release/omptarget-rs-device --devices 1 >"$O/d2d.out"
LD_LIBRARY_PATH=$O/lib OMPTARGET_RS_REMOTE_RELAY=1 "${MPIRUN[@]}" -x OMPTARGET_RS_REMOTE_RELAY -np 1 "$O/remote_bench" 4:5 : -np 2 target/release/omptarget-rs-device --devices 1 >"$O/d2d-relay.out"
"${MPIRUN[@]}" -np 2 "$O/mpi_floor" >"$O/floor.out"
awk '
  FNR == NR && $1 == "floor" { floor[$2] = $3; next }
  $1 == 0 { local[$2] = $3 } $1 == 4 { remote[$2] = $3 }
  END {
    printf "%-8s %12s %12s %12s %14s %14s\n", "op", "local us", "remote us", "MPI floor us", "remote/local", "remote/floor"
    n = split("empty scalar copy64", ops, " ")
    for (i = 1; i <= n; i++) {
      o = ops[i]; f = (o == "scalar") ? floor["empty"] : floor[o]
      printf "%-8s %12.2f %12.2f %12.2f %14.1f %14.2f\n", o, local[o], remote[o], f, remote[o] / local[o], remote[o] / f
    }
  }' "$O/floor.out" "$O/omp.out"
awk '
  FNR == NR && $1 == "floor" { floor[$2] = $3; next }
  FILENAME ~ /relay/ { relayed = 1 }
  $1 == "0:1" { local = $3 } $1 == "4:5" && !relayed { direct = $3 } $1 == "4:5" && relayed { relay = $3 }
  END {
    printf "\n%-24s %12s %12s %12s %14s %14s\n", "64 MiB device to device", "local us", "remote us", "MPI floor us", "remote/local", "remote/floor"
    printf "%-24s %12.0f %12.0f %12.0f %14.1f %14.2f\n", "between two servers", local, direct, floor["copy64"], direct / local, direct / floor["copy64"]
    printf "%-24s %12.0f %12.0f %12.0f %14.1f %14.2f\n", "relayed through rank 0", local, relay, floor["copy64"], relay / local, relay / floor["copy64"]
  }' "$O/floor.out" "$O/d2d.out" "$O/d2d-relay.out"
