#!/usr/bin/env bash
# Instructions per `target nowait` region (callgrind), LLVM 22.1 vs ours, split
# by thread (the issuing thread vs libomp's other threads: hidden helpers or
# team workers) and by object (libomp, the offload runtime, libc and ld.so).
#
# Usage: bench/nowait-cg.sh [--lib PATH] [--n1 N] [--n2 N] [KIND...]
#   KIND: nomap tofrom dep floor floordep (default: all five)
#
# Each configuration (runtime x hidden helpers on/off x one thread or
# parallel+single x kind) runs `nowait cg KIND CTX N` under
# `valgrind --tool=callgrind --separate-threads=yes` for N = n1 and N = n2
# (default 200 and 1000); per-region cost = (Ir(n2) - Ir(n1)) / (n2 - n1), per
# thread group (the initial thread, libomp's other threads; with
# parallel+single either may be the one issuing) and object, so start-up and
# warm-up cancel. KMP_BLOCKTIME=0
# keeps idle libomp threads from spinning (spinning would count instructions
# in proportion to wall time, not to work); it applies to both runtimes.
# Libomp's threads still spin and yield while they wait for work (the
# taskwait, the hidden helpers' idle loop): the totals include that waiting.
# The last two columns count work only: issue() is the issuing loop on the
# issuing thread (task allocation and hand-off; with hidden helpers off and
# one thread it also runs the regions, inline), task bodies the outlined
# target tasks (the offload runtime's work and the region) on any thread.
# bench/run.sh builds bench/build/nowait; this script builds it if missing.
set -u -o pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
BUILD=$HERE/build
LIB=${OMPTARGET_RS_LIB:-$REPO/target/release/libomptarget_rs.so}
N1=200
N2=1000
KINDS=()
while [ $# -gt 0 ]; do
  case "$1" in
  --lib) LIB=$2; shift 2 ;;
  --n1) N1=$2; shift 2 ;;
  --n2) N2=$2; shift 2 ;;
  -h | --help) sed -n '2,/^set/{/^set/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
  nomap | tofrom | dep | floor | floordep) KINDS+=("$1"); shift ;;
  *) echo "nowait-cg.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ ${#KINDS[@]} -gt 0 ] || KINDS=(nomap tofrom dep floor floordep)
command -v valgrind >/dev/null || { echo "nowait-cg.sh: valgrind not found" >&2; exit 2; }
[ -f "$LIB" ] || { echo "nowait-cg.sh: $LIB not found" >&2; exit 2; }

mkdir -p "$BUILD/replace-cg" "$BUILD/nowait-cg"
PROG=$BUILD/nowait
if [ ! -x "$PROG" ] || [ "$PROG" -ot "$HERE/src/nowait.c" ]; then
  clang-22 -O2 -g -Wall -Wno-unknown-pragmas -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu \
    -o "$PROG" "$HERE/src/nowait.c" || exit 1
fi
cp -f "$LIB" "$BUILD/replace-cg/libomptarget_rs.so"
ln -sfn libomptarget_rs.so "$BUILD/replace-cg/libomptarget.so.22.1"
OUT=$BUILD/nowait-cg
unset LD_PRELOAD OMP_TARGET_OFFLOAD OMP_DEFAULT_DEVICE

# sums <files...>: "main <obj-class> Ir" and "other <obj-class> Ir" lines (self
# cost; main is the initial thread, other libomp's other threads),
# and "x issue Ir" / "x body Ir" (inclusive cost of issue() and of the tasks).
sums() {
  awk '
    FNR == 1 { grp = (FILENAME ~ /-01$/) ? "main" : "other"; skip = 0; cls = "prog" }
    /^ob=/ {
      o = substr($0, 4)
      if (o ~ /libomp\.so/) cls = "libomp"
      else if (o ~ /libomptarget|libLLVM|libffi|libz|libedit|libxml/) cls = "target"
      else if (o ~ /libc\.so|libm\.so|libstdc|libgcc|ld-linux|libpthread|vgpreload/) cls = "libc"
      else cls = "prog"
      next
    }
    /^cfn=/ { callee = substr($0, 5); next }
    /^calls=/ { skip = 1; next }
    /^[0-9+*-]/ {
      if (skip) {
        # Inclusive cost of a call: the program'"'"'s issue() and task bodies.
        skip = 0
        if (callee ~ /^issue( |$)/) c["x issue"] += $2
        else if (callee ~ /omp_task_entry/) c["x body"] += $2
        next
      }
      if (NF >= 2) c[grp " " cls] += $2
      next
    }
    END { for (k in c) print k, c[k] }' "$@"
}

printf '| runtime | hh | ctx | kind | total | initial thread | other threads | libomp | offload runtime | libc+ld.so | program | issue() | task bodies |\n'
printf '|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for hh in 1 0; do
  for ctx in 1t ps; do
    for kind in "${KINDS[@]}"; do
      for rt in llvm ours; do
        for n in "$N1" "$N2"; do
          f=$OUT/$rt.hh$hh.$ctx.$kind.$n
          rm -f "$f" "$f"-*
          if [ "$rt" = ours ]; then lp=$BUILD/replace-cg; else lp=; fi
          if ! env LD_LIBRARY_PATH="$lp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" KMP_BLOCKTIME=0 \
            LIBOMP_USE_HIDDEN_HELPER_TASK=$hh timeout 600 valgrind --tool=callgrind \
            --separate-threads=yes --compress-strings=no --callgrind-out-file="$f" \
            "$PROG" cg "$kind" "$ctx" "$n" >"$f.log" 2>&1; then
            echo "nowait-cg.sh: $rt $hh $ctx $kind $n failed (see $f.log)" >&2
            exit 1
          fi
          sums "$f"-* >"$f.sums"
        done
        awk -v n1="$N1" -v n2="$N2" -v rt="$rt" -v hh="$hh" -v ctx="$ctx" -v kind="$kind" '
          FNR == 1 { sign = (++nf == 1) ? -1 : 1 }
          { d = sign * $3 / (n2 - n1) }
          $1 == "x" { x[$2] += d; next }
          { g[$1] += d; o[$2] += d; t += d }
          END {
            printf "| %s | %s | %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |\n",
              rt, hh, ctx, kind, t, g["main"], g["other"], o["libomp"], o["target"], o["libc"], o["prog"], x["issue"], x["body"]
          }' "$OUT/$rt.hh$hh.$ctx.$kind.$N1.sums" "$OUT/$rt.hh$hh.$ctx.$kind.$N2.sums"
      done
    done
  done
done
