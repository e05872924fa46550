#!/usr/bin/env bash
# Benchmark suite: omptarget-rs versus LLVM 22.1's libomptarget (host plugin).
#
# Builds the programs under bench/src (clang-22 OpenMP offload programs) into
# bench/build/, runs each of them alternately on LLVM's runtime and on ours
# (A/B/A/B, several rounds), and prints a markdown table with the medians,
# the ratio ours/LLVM, the target and whether it is met. See bench/README.md.
#
# Usage: bench/run.sh [options]
#   --smoke          tiny iteration counts (< 1 min); for CI: keeps the suite
#                    working, exits 0 even when targets are missed
#   --lib PATH       our library (default: $OMPTARGET_RS_LIB or
#                    <repo>/target/release/libomptarget_rs.so); it is copied
#                    to bench/build/ first, so a rebuild cannot disturb a run
#   --rounds N       A/B rounds per benchmark (default 7; --smoke: 1)
#   --only LIST      comma-separated subset of
#                    lat,callgrind,scale,conc,xfer,nowait,startup,mem
#   --no-callgrind   same as leaving callgrind out of --only
#   --profile        also print, for every latency metric, the functions in
#                    which our runtime spends its instructions (callgrind)
#   -h, --help       this text
#
# Exit status: 0 when every benchmark program ran and agreed between the two
# runtimes (missed targets do not fail the run); 1 when a program failed,
# crashed, timed out or its results differ between LLVM and ours; 2 on a
# usage or set-up error.
#
# Outputs (bench/build/results/): samples.txt (every sample: runtime metric
# value), medians.txt, table.md, logs/ (stdout and stderr of every run) and
# callgrind/ (raw dumps, and a per-operation profile per metric and runtime).

set -u -o pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
BUILD=$HERE/build
SRC=$HERE/src
RES=$BUILD/results
LIB=${OMPTARGET_RS_LIB:-$REPO/target/release/libomptarget_rs.so}
CC_OMP=${OMP_CC:-clang-22}
CC_PLAIN=${CC:-cc}
LLVM_LIB=/usr/lib/llvm-22/lib/libomptarget.so.22.1
OFFLOAD=(-fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu)
CFLAGS=(-O2 -g -Wall -Wno-unknown-pragmas)

SMOKE=0
ROUNDS=
ONLY=lat,callgrind,scale,conc,xfer,nowait,startup,mem
PROFILE=0

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

while [ $# -gt 0 ]; do
  case "$1" in
  --smoke) SMOKE=1 ;;
  --lib) [ $# -ge 2 ] || { usage >&2; exit 2; }; LIB=$2; shift ;;
  --lib=*) LIB=${1#*=} ;;
  --rounds) [ $# -ge 2 ] || { usage >&2; exit 2; }; ROUNDS=$2; shift ;;
  --rounds=*) ROUNDS=${1#*=} ;;
  --only) [ $# -ge 2 ] || { usage >&2; exit 2; }; ONLY=$2; shift ;;
  --only=*) ONLY=${1#*=} ;;
  --no-callgrind) ONLY=$(echo ",$ONLY," | sed 's/,callgrind,/,/; s/^,//; s/,$//') ;;
  --profile) PROFILE=1 ;;
  -h | --help) usage; exit 0 ;;
  *) echo "run.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
for b in ${ONLY//,/ }; do
  case "$b" in lat | callgrind | scale | conc | xfer | nowait | startup | mem) ;;
  *) echo "run.sh: unknown benchmark '$b' in --only" >&2; exit 2 ;; esac
done
want() { [[ ",$ONLY," == *",$1,"* ]]; }

# ------------------------------------------------------------- parameters
if [ "$SMOKE" = 1 ]; then
  : "${ROUNDS:=1}"
  LAT_ARGS=(200 1)            # iterations per sample, samples per run
  CG_N=(2 12)                 # callgrind: the two iteration counts
  SCALE_ARGS=(100 1 1000 10000 100000)
  CONC_ARGS=(20 1 1 2 4 8)    # ms per sample, samples per run, threads...
  XFER_ARGS=(1 1 64)          # samples per run, sizes in MiB...
  NOWAIT_ARGS=(100 1)         # regions per sample, samples per run
  START_ROUNDS=2
  MEM_FRESH=(8 2)             # MiB per buffer, iterations
  MEM_HASH=(4 4)              # MiB per buffer, buffers
  MEM_TABLE=(16 100000)       # MiB of the large table, lookups per kernel
  MEM_STREAM=(18 2)           # log2 of the array length, iterations
  TIMEOUT=60
else
  : "${ROUNDS:=7}"
  LAT_ARGS=(10000 5)
  CG_N=(100 1100)
  SCALE_ARGS=(5000 5 1000 10000 100000)
  CONC_ARGS=(200 2 1 2 4 8)
  XFER_ARGS=(5 1 64 512)
  NOWAIT_ARGS=(2000 5)
  START_ROUNDS=$((ROUNDS * 4))
  MEM_FRESH=(64 5)
  MEM_HASH=(16 16)
  MEM_TABLE=(192 4000000)
  MEM_STREAM=(25 20)
  TIMEOUT=300
fi
case "$ROUNDS" in '' | *[!0-9]* | 0) echo "run.sh: bad --rounds" >&2; exit 2 ;; esac
XFER_ROUNDS=$(((ROUNDS + 1) / 2)) # the transfer runs are the slowest ones

# ------------------------------------------------------------- preflight
die() { echo "run.sh: $*" >&2; exit 2; }
command -v "$CC_OMP" >/dev/null || die "$CC_OMP not found"
command -v "$CC_PLAIN" >/dev/null || die "$CC_PLAIN not found"
[ -e "$LLVM_LIB" ] || die "LLVM's runtime $LLVM_LIB not found"
[ -f "$LIB" ] || die "our library $LIB not found (build it, or pass --lib)"
HAVE_CG=0
if want callgrind; then
  if command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null; then
    HAVE_CG=1
  else
    echo "run.sh: valgrind/callgrind_annotate not found: skipping instruction counts" >&2
  fi
fi

# A clean environment for both runtimes.
unset LD_PRELOAD OMP_TARGET_OFFLOAD OMP_DEFAULT_DEVICE
for v in $(env | sed -n 's/^\(LIBOMPTARGET_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

mkdir -p "$BUILD" "$RES"
rm -rf "$RES" && mkdir -p "$RES/logs" "$RES/callgrind"

# Our library: private copy + replacement directory.
OURS=$BUILD/libomptarget_rs.so
REPL=$BUILD/replace
cp -f "$LIB" "$OURS.tmp" && mv -f "$OURS.tmp" "$OURS" || die "cannot copy $LIB"
mkdir -p "$REPL"
ln -sfn ../libomptarget_rs.so "$REPL/libomptarget.so.22.1"
OURS_LDPATH=$REPL${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# LLVM 22.1's host plugin writes every image to /tmp/tmpfile_XXXXXX and never
# removes it. Remove ours at exit: files made since the start of the run and
# older than a few seconds (so that a concurrent process that has just written
# one but not yet loaded it keeps it).
STAMP=$(mktemp "${TMPDIR:-/tmp}/omptarget-rs-bench.XXXXXX")
cleanup() {
  find /tmp -maxdepth 1 -type f -name 'tmpfile_??????' -user "$(id -u)" \
    -newer "$STAMP" ! -newermt '-3 seconds' -delete 2>/dev/null || true
  rm -f "$STAMP"
}
trap cleanup EXIT

# ------------------------------------------------------------- build
echo "== building bench programs into bench/build" >&2
build() { # build <out> <src> <flags...>: rebuilds when out of date
  local out=$BUILD/$1 src=$SRC/$2
  shift 2
  if [ "$out" -nt "$src" ] && [ "$out" -nt "$SRC/bench.h" ] && [ "$out" -nt "$HERE/run.sh" ]; then
    return 0
  fi
  "$@" -o "$out.tmp" "$src" && mv -f "$out.tmp" "$out" || {
    echo "run.sh: failed to build $1" >&2
    exit 1
  }
}
build lat lat.c "$CC_OMP" "${CFLAGS[@]}" "${OFFLOAD[@]}"
build scale scale.c "$CC_OMP" "${CFLAGS[@]}" "${OFFLOAD[@]}"
build conc conc.c "$CC_OMP" "${CFLAGS[@]}" "${OFFLOAD[@]}" -pthread
build xfer xfer.c "$CC_OMP" "${CFLAGS[@]}" "${OFFLOAD[@]}"
build nowait nowait.c "$CC_OMP" "${CFLAGS[@]}" "${OFFLOAD[@]}"
build startup startup.c "$CC_OMP" "${CFLAGS[@]}" "${OFFLOAD[@]}"
build startup_plain startup.c "$CC_OMP" "${CFLAGS[@]}" -fopenmp
build mem mem.c "$CC_OMP" "${CFLAGS[@]}" "${OFFLOAD[@]}"
build stream stream.c "$CC_OMP" "${CFLAGS[@]}" "${OFFLOAD[@]}" -lm
build launch launch.c "$CC_PLAIN" -O2 -Wall
build floor floor.c "$CC_PLAIN" -O2 -g -Wall

# ------------------------------------------------------------- running
SAMPLES=$RES/samples.txt
: >"$SAMPLES"
FAILURES=()
fail() { FAILURES+=("$*"); echo "FAIL: $*" >&2; }

# run_one <runtime> <name> <cmd...>: runs a bench program on llvm or ours,
# appends its samples, keeps its check lines in $RES/<name>.<runtime>.check.
# Returns non-zero (and records a failure) when the program fails.
RUN_SEQ=0
run_one() {
  local rt=$1 name=$2 out log rc
  shift 2
  RUN_SEQ=$((RUN_SEQ + 1))
  out=$RES/logs/$RUN_SEQ.$name.$rt.out
  log=$RES/logs/$RUN_SEQ.$name.$rt.err
  case "$rt" in
  llvm | floor) timeout -k 5 "$TIMEOUT" "$@" >"$out" 2>"$log" ;;
  ours) LD_LIBRARY_PATH=$OURS_LDPATH timeout -k 5 "$TIMEOUT" "$@" >"$out" 2>"$log" ;;
  esac
  rc=$?
  if [ $rc -ne 0 ]; then
    local why="exit status $rc"
    [ $rc -eq 124 ] && why="timed out after ${TIMEOUT}s"
    [ $rc -gt 128 ] && why="killed by signal $((rc - 128))"
    fail "$name on $rt: $why (stderr: $log)"
    grep -v '^==[0-9]*==' "$log" | tail -n 5 | sed 's/^/    /' >&2
    return 1
  fi
  awk -v rt="$rt" '$1 == "sample" && NF == 3 { print rt, $2, $3 }' "$out" >>"$SAMPLES"
  grep '^check ' "$out" | sort >"$RES/$name.$rt.check.new"
  if [ -f "$RES/$name.$rt.check" ] && ! cmp -s "$RES/$name.$rt.check" "$RES/$name.$rt.check.new"; then
    fail "$name on $rt: results differ between runs"
  fi
  mv -f "$RES/$name.$rt.check.new" "$RES/$name.$rt.check"
  return 0
}

# ab <name> <rounds> <cmd...>: A/B/A/B rounds, then compares the check lines.
ab() {
  local name=$1 rounds=$2 r t0
  shift 2
  t0=$SECONDS
  printf '== %-8s %d round(s) A/B ...' "$name" "$rounds" >&2
  for ((r = 0; r < rounds; r++)); do
    run_one llvm "$name" "$@" || break
    run_one ours "$name" "$@" || break
  done
  printf ' %ds\n' $((SECONDS - t0)) >&2
  if [ -f "$RES/$name.llvm.check" ] && [ -f "$RES/$name.ours.check" ] &&
    ! cmp -s "$RES/$name.llvm.check" "$RES/$name.ours.check"; then
    fail "$name: results differ between LLVM and ours:"
    diff "$RES/$name.llvm.check" "$RES/$name.ours.check" | sed 's/^/    /' >&2
  fi
}

T_START=$SECONDS
want lat && ab lat "$ROUNDS" "$BUILD/lat" "${LAT_ARGS[@]}"
want scale && ab scale "$ROUNDS" "$BUILD/scale" "${SCALE_ARGS[@]}"
want conc && ab conc "$ROUNDS" "$BUILD/conc" "${CONC_ARGS[@]}"
want xfer && ab xfer "$XFER_ROUNDS" "$BUILD/xfer" "${XFER_ARGS[@]}"
# nowait: libomp's hidden helper threads on (its default) and off.
if want nowait; then
  ab nowait_hh1 "$ROUNDS" env LIBOMP_USE_HIDDEN_HELPER_TASK=1 "$BUILD/nowait" "${NOWAIT_ARGS[@]}"
  ab nowait_hh0 "$ROUNDS" env LIBOMP_USE_HIDDEN_HELPER_TASK=0 "$BUILD/nowait" "${NOWAIT_ARGS[@]}"
fi

# Start-up: four configurations, interleaved round by round.
if want startup; then
  t0=$SECONDS
  printf '== %-8s %d round(s) llvm/preload/replace/plain ...' startup "$START_ROUNDS" >&2
  for ((r = 0; r < START_ROUNDS; r++)); do
    for cfg in llvm preload replace plain; do
      case $cfg in
      llvm) rt=llvm; prefix=startup; env=(); prog=$BUILD/startup ;;
      preload) rt=ours; prefix=startup_preload; env=("LD_PRELOAD=$OURS"); prog=$BUILD/startup ;;
      replace) rt=ours; prefix=startup; env=("LD_LIBRARY_PATH=$OURS_LDPATH"); prog=$BUILD/startup ;;
      plain) rt=plain; prefix=startup; env=(); prog=$BUILD/startup_plain ;;
      esac
      log=$RES/logs/startup.$cfg.err
      if ! timeout -k 5 "$TIMEOUT" "$BUILD/launch" "$prefix" 1 "${env[@]}" -- "$prog" \
        2>>"$log" | awk -v rt="$rt" '$1 == "sample" { print rt, $2, $3 }' >>"$SAMPLES"; then
        fail "startup ($cfg): program failed (stderr: $log)"
        break 2
      fi
    done
  done
  printf ' %ds\n' $((SECONDS - t0)) >&2
fi

# Device memory: the three patterns, each in a fresh process (A/B), then the
# BabelStream-like program as a whole process (launch), LLVM and ours in turn.
if want mem; then
  ab mem_fresh "$ROUNDS" "$BUILD/mem" fresh "${MEM_FRESH[@]}"
  ab mem_hash "$ROUNDS" "$BUILD/mem" hash "${MEM_HASH[@]}"
  ab mem_table "$ROUNDS" "$BUILD/mem" table "${MEM_TABLE[@]}"
  t0=$SECONDS
  printf '== %-8s %d round(s) A/B, whole process ...' mem_stream "$ROUNDS" >&2
  for ((r = 0; r < ROUNDS; r++)); do
    for rt in llvm ours; do
      env=()
      [ "$rt" = ours ] && env=("LD_LIBRARY_PATH=$OURS_LDPATH")
      log=$RES/logs/mem_stream.$rt.err
      if ! timeout -k 5 "$TIMEOUT" "$BUILD/launch" mem_stream 1 "${env[@]}" -- "$BUILD/stream" "${MEM_STREAM[@]}" \
        2>>"$log" | awk -v rt="$rt" '$1 == "sample" { print rt, $2, $3 }' >>"$SAMPLES"; then
        fail "mem_stream on $rt: program failed (stderr: $log)"
        break 2
      fi
    done
  done
  printf ' %ds\n' $((SECONDS - t0)) >&2
fi

# Instruction counts: one callgrind run per runtime; lat (cg mode) dumps the
# counters after a loop of n1 and after a loop of n2 operations per metric.
CG=$RES/callgrind
if [ "$HAVE_CG" = 1 ]; then
  t0=$SECONDS
  printf '== %-8s n1=%d n2=%d ...' callgrind "${CG_N[0]}" "${CG_N[1]}" >&2
  for rt in llvm ours; do
    run_one "$rt" callgrind valgrind --tool=callgrind --compress-strings=no \
      --callgrind-out-file="$CG/$rt.out" \
      "$BUILD/lat" cg "${CG_N[@]}" || continue
    for f in "$CG/$rt.out".*; do
      # "desc: Trigger: Client Request: lat_x/N" and "summary: IR"
      awk -v rt="$rt" '
        /^desc: Trigger: Client Request: / { split($NF, p, "/"); m = p[1]; n = p[2] }
        /^summary: / { ir = $2 }
        END { if (m != "") print rt, m, n, ir, FILENAME }' "$f"
    done >"$CG/$rt.counts"
    # Per-op instruction count: (Ir(n2) - Ir(n1)) / (n2 - n1).
    awk -v n1="${CG_N[0]}" -v n2="${CG_N[1]}" '
      $3 == n1 { a[$2] = $4 } $3 == n2 { b[$2] = $4; rt = $1; file[$2] = $5 }
      END { for (m in b) if (m in a) printf "%s %s_ir %.1f\n", rt, m, (b[m] - a[m]) / (n2 - n1) }
    ' "$CG/$rt.counts" >>"$SAMPLES"
    # Per-operation profile of every metric from its n1 and n2 dumps.
    awk '{ print $2, $3, $5 }' "$CG/$rt.counts" | sort |
      awk -v n1="${CG_N[0]}" -v n2="${CG_N[1]}" '
        $2 == n1 { f1[$1] = $3 } $2 == n2 { f2[$1] = $3 }
        END { for (m in f2) if (m in f1) print m, f1[m], f2[m] }' |
      while read -r m f1 f2; do
        awk -v n1="${CG_N[0]}" -v n2="${CG_N[1]}" -v top=30 -f "$HERE/cgprof.awk" \
          "$f1" "$f2" >"$CG/$rt.$m.profile.txt"
      done
  done
  # The floor: the unavoidable work of each operation, plain C.
  if run_one floor floor valgrind --tool=callgrind --compress-strings=no \
    --callgrind-out-file="$CG/floor.out" "$BUILD/floor" cg "${CG_N[@]}"; then
    for f in "$CG/floor.out".*; do
      awk '
        /^desc: Trigger: Client Request: / { split($NF, p, "/"); m = p[1]; n = p[2] }
        /^summary: / { ir = $2 }
        END { if (m != "") print m, n, ir }' "$f"
    done | awk -v n1="${CG_N[0]}" -v n2="${CG_N[1]}" '
      $2 == n1 { a[$1] = $3 } $2 == n2 { b[$1] = $3 }
      END { for (m in b) if (m in a) printf "floor %s_ir %.1f\n", m, (b[m] - a[m]) / (n2 - n1) }
    ' >>"$SAMPLES"
  fi
  printf ' %ds\n' $((SECONDS - t0)) >&2
  if [ -f "$RES/callgrind.llvm.check" ] && [ -f "$RES/callgrind.ours.check" ] &&
    ! cmp -s "$RES/callgrind.llvm.check" "$RES/callgrind.ours.check"; then
    fail "callgrind: results differ between LLVM and ours"
  fi
fi
echo "== total $((SECONDS - T_START))s" >&2

# ------------------------------------------------------------- medians
MED=$RES/medians.txt
sort -k1,1 -k2,2 -k3,3g "$SAMPLES" | awk '
  function flush() {
    if (n == 0) return
    med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    print key, med, n
  }
  { k = $1 " " $2; if (k != key) { flush(); key = k; n = 0 } v[++n] = $3 }
  END { flush() }' >"$MED"

# ------------------------------------------------------------- table
# Row kinds (fields separated by |):
#   H|title                               section heading
#   cmp|label|L|O|unit|target             LLVM column = median of L, ours = O
#                                         (rt:metric); ratio = ours/LLVM;
#                                         target applies to the ratio
#   self|label|A|B|unit|target            per runtime A/B (metrics); target
#                                         applies to ours' value
# unit: ns, ir, kops (value/1000), ms, mib, x (plain ratio), bw:<MiB> (GB/s
# from ns per transfer). target: <=X, >=X or -.
ROWS=$RES/rows.txt
{
  echo "H|Latency per operation (ns, timed in-process; lower is better)"
  echo "cmp|region, no maps|llvm:lat_region_nomap|ours:lat_region_nomap|ns|<=0.10"
  echo "cmp|region, 1 firstprivate scalar|llvm:lat_region_fp|ours:lat_region_fp|ns|-"
  echo "cmp|region, 1 tofrom scalar|llvm:lat_region_tofrom|ours:lat_region_tofrom|ns|<=0.10"
  echo "cmp|region, 8 arrays already present|llvm:lat_region_present8|ours:lat_region_present8|ns|-"
  echo "cmp|enter+exit data pair, present data|llvm:lat_enter_exit|ours:lat_enter_exit|ns|<=0.10"
  echo "cmp|target update to, 8 B|llvm:lat_update8|ours:lat_update8|ns|-"
  echo "cmp|omp_target_alloc+free, 64 B|llvm:lat_alloc_free|ours:lat_alloc_free|ns|-"
  echo "cmp|omp_target_memcpy, 8 B|llvm:lat_memcpy8|ours:lat_memcpy8|ns|-"
  echo "cmp|omp_target_is_present|llvm:lat_is_present|ours:lat_is_present|ns|-"
  echo "cmp|omp_target_is_present, not mapped|llvm:lat_is_present_miss|ours:lat_is_present_miss|ns|-"
  echo "H|Instructions per operation (callgrind, (Ir(n2)-Ir(n1))/(n2-n1))"
  echo "cmp|region, no maps|llvm:lat_region_nomap_ir|ours:lat_region_nomap_ir|ir|<=0.10"
  echo "cmp|region, 1 firstprivate scalar|llvm:lat_region_fp_ir|ours:lat_region_fp_ir|ir|-"
  echo "cmp|region, 1 tofrom scalar|llvm:lat_region_tofrom_ir|ours:lat_region_tofrom_ir|ir|<=0.10"
  echo "cmp|region, 8 arrays already present|llvm:lat_region_present8_ir|ours:lat_region_present8_ir|ir|-"
  echo "cmp|enter+exit data pair, present data|llvm:lat_enter_exit_ir|ours:lat_enter_exit_ir|ir|<=0.10"
  echo "cmp|target update to, 8 B|llvm:lat_update8_ir|ours:lat_update8_ir|ir|-"
  echo "cmp|omp_target_alloc+free, 64 B|llvm:lat_alloc_free_ir|ours:lat_alloc_free_ir|ir|-"
  echo "cmp|omp_target_memcpy, 8 B|llvm:lat_memcpy8_ir|ours:lat_memcpy8_ir|ir|-"
  echo "cmp|omp_target_is_present|llvm:lat_is_present_ir|ours:lat_is_present_ir|ir|-"
  echo "cmp|omp_target_is_present, not mapped|llvm:lat_is_present_miss_ir|ours:lat_is_present_miss_ir|ir|-"
  echo "H|Mapping-table scaling (ns per operation with L live mappings)"
  for l in 1k 10k 100k; do
    echo "cmp|region hitting an existing mapping, L=$l|llvm:scale_region_$l|ours:scale_region_$l|ns|-"
  done
  for l in 1k 10k 100k; do
    echo "cmp|enter+exit of a fresh buffer, L=$l|llvm:scale_enterexit_$l|ours:scale_enterexit_$l|ns|-"
  done
  echo "self|region cost at 100k / at 1k|scale_region_100k|scale_region_1k|x|<=1.20"
  echo "self|enter+exit cost at 100k / at 1k|scale_enterexit_100k|scale_enterexit_1k|x|<=1.20"
  echo "H|Concurrency (total throughput, kops/s; higher is better)"
  for t in 1 2 4 8; do
    echo "cmp|regions (tofrom private scalar), $t thread(s)|llvm:conc_region_${t}t|ours:conc_region_${t}t|kops|-"
  done
  for t in 1 2 4 8; do
    echo "cmp|enter+exit pairs (private buffer), $t thread(s)|llvm:conc_enterexit_${t}t|ours:conc_enterexit_${t}t|kops|-"
  done
  for t in 1 2 8; do
    echo "cmp|reference: CPU-only loop, no runtime call, $t thread(s)|llvm:conc_cpu_${t}t|ours:conc_cpu_${t}t|kops|-"
  done
  echo "self|reference: CPU-only loop, 2 threads / 1 thread|conc_cpu_2t|conc_cpu_1t|x|-"
  echo "self|regions: 2 threads / 1 thread|conc_region_2t|conc_region_1t|x|>=1.80"
  echo "self|regions: 8 threads / 2 threads|conc_region_8t|conc_region_2t|x|>=0.95"
  echo "self|enter+exit: 2 threads / 1 thread|conc_enterexit_2t|conc_enterexit_1t|x|>=1.80"
  echo "self|enter+exit: 8 threads / 2 threads|conc_enterexit_8t|conc_enterexit_2t|x|>=0.95"
  echo "H|Transfers (GB/s; higher is better)"
  for s in ${XFER_ARGS[@]:1}; do
    echo "cmp|target update to, $s MiB|llvm:xfer_to_${s}M|ours:xfer_to_${s}M|bw:$s|-"
    echo "cmp|target update from, $s MiB|llvm:xfer_from_${s}M|ours:xfer_from_${s}M|bw:$s|-"
    echo "cmp|plain memcpy, $s MiB (same program)|llvm:xfer_memcpy_${s}M|ours:xfer_memcpy_${s}M|bw:$s|-"
    echo "cmp|region map(to:) of unmapped data, $s MiB (region_map_to)|llvm:region_map_to_${s}M|ours:region_map_to_${s}M|bw:$s|-"
  done
  for s in ${XFER_ARGS[@]:1}; do
    echo "self|update to / memcpy bandwidth, $s MiB|xfer_memcpy_${s}M|xfer_to_${s}M|x|>=0.95"
    echo "self|update from / memcpy bandwidth, $s MiB|xfer_memcpy_${s}M|xfer_from_${s}M|x|>=0.95"
  done
  for s in ${XFER_ARGS[@]:1}; do
    # The 64 MiB row is the target; the others are shown for reference.
    t=-; [ "$s" = 64 ] && t=">=0.80"
    echo "self|region map(to:) / memcpy bandwidth, $s MiB (region_map_to)|xfer_memcpy_${s}M|region_map_to_${s}M|x|$t"
  done
  echo "H|nowait (ns per region: N target nowait + taskwait; hh: libomp's hidden helpers)"
  for hh in 1 0; do
    for ctx in 1t ps; do
      case $ctx in 1t) where="one thread" ;; *) where="parallel+single" ;; esac
      echo "cmp|no maps, $where, hh=$hh|llvm:nowait_nomap_${ctx}_hh$hh|ours:nowait_nomap_${ctx}_hh$hh|ns|<=0.50"
      echo "cmp|map(tofrom: a[i]), $where, hh=$hh|llvm:nowait_tofrom_${ctx}_hh$hh|ours:nowait_tofrom_${ctx}_hh$hh|ns|<=0.50"
      echo "cmp|depend(inout) chain, $where, hh=$hh|llvm:nowait_dep_${ctx}_hh$hh|ours:nowait_dep_${ctx}_hh$hh|ns|<=0.50"
      # The floor: libomp's target tasks with an empty body, no offload call
      # (measured in our process): the best ratio any offload runtime can reach.
      echo "cmp|floor (libomp alone) / LLVM's no-map row, $where, hh=$hh|llvm:nowait_nomap_${ctx}_hh$hh|ours:nowait_floor_${ctx}_hh$hh|ns|-"
      echo "cmp|floor (libomp alone) / LLVM's depend row, $where, hh=$hh|llvm:nowait_dep_${ctx}_hh$hh|ours:nowait_floordep_${ctx}_hh$hh|ns|-"
    done
  done
  echo "H|Start-up of a trivial offload program (whole process)"
  echo "cmp|wall, library-path replacement mode (ms)|llvm:startup_wall|ours:startup_wall|ms|<=0.15"
  echo "cmp|peak RSS, library-path replacement mode (MiB)|llvm:startup_rss|ours:startup_rss|mib|<=0.30"
  echo "cmp|wall, LD_PRELOAD mode (ms)|llvm:startup_wall|ours:startup_preload_wall|ms|-"
  echo "cmp|peak RSS, LD_PRELOAD mode (MiB)|llvm:startup_rss|ours:startup_preload_rss|mib|-"
  echo "cmp|wall, no-offload build (plain -fopenmp) in ours column (ms)|llvm:startup_wall|plain:startup_wall|ms|-"
  echo "cmp|peak RSS, no-offload build in ours column (MiB)|llvm:startup_rss|plain:startup_rss|mib|-"
  echo "H|Device memory (ms per pattern, first mapping to last unmapping, in-process; lower is better)"
  f="${MEM_FRESH[0]} MiB"; h="${MEM_HASH[1]} x ${MEM_HASH[0]} MiB"; tb="${MEM_TABLE[0]} + $((MEM_TABLE[0] / 8)) MiB"
  echo "cmp|fresh buffers written once: 1st iteration (3 x $f, fresh memory)|llvm:mem_fresh_first|ours:mem_fresh_first|ms|<=1.00"
  echo "cmp|fresh buffers written once: ${MEM_FRESH[1]} iterations|llvm:mem_fresh_total|ours:mem_fresh_total|ms|<=1.00"
  echo "cmp|many fresh buffers hashed once ($h)|llvm:mem_hash_total|ours:mem_hash_total|ms|<=1.00"
  echo "cmp|read-mostly lookup tables ($tb, 4 x ${MEM_TABLE[1]} lookups)|llvm:mem_table_total|ours:mem_table_total|ms|<=1.00"
  echo "cmp|lookup tables: the 4 lookup kernels alone|llvm:mem_table_lookup|ours:mem_table_lookup|ms|-"
  for p in fresh hash table; do
    echo "cmp|system CPU time (page faults, zeroing): $p|llvm:mem_${p}_sys|ours:mem_${p}_sys|ms|-"
  done
  echo "H|BabelStream-like program, whole process (3 x 2^${MEM_STREAM[0]} doubles, ${MEM_STREAM[1]} iterations)"
  echo "cmp|wall (ms)|llvm:mem_stream_wall|ours:mem_stream_wall|ms|<=1.00"
  echo "cmp|user CPU (ms)|llvm:mem_stream_user|ours:mem_stream_user|ms|-"
  echo "cmp|system CPU (ms)|llvm:mem_stream_sys|ours:mem_stream_sys|ms|-"
  echo "cmp|peak RSS (MiB)|llvm:mem_stream_rss|ours:mem_stream_rss|mib|-"
} >"$ROWS"

TABLE=$RES/table.md
awk -F'|' -v medfile="$MED" '
  BEGIN {
    while ((getline line < medfile) > 0) { split(line, f, " "); med[f[1] ":" f[2]] = f[3] }
    print "| metric | LLVM | ours | ours/LLVM | target | met? |"
    print "|---|---:|---:|---:|---|---|"
  }
  function fmt(x) {
    if (x == "") return "n/a"
    ax = x < 0 ? -x : x
    if (ax >= 1000) return sprintf("%.0f", x)
    if (ax >= 100) return sprintf("%.1f", x)
    if (ax >= 10) return sprintf("%.2f", x)
    return sprintf("%.3f", x)
  }
  function conv(x, unit) {
    if (x == "") return ""
    if (unit == "kops") return x / 1000
    if (unit ~ /^bw:/) { mib = substr(unit, 4); return x > 0 ? mib * 1048576 / x : "" }
    return x
  }
  function get(spec) { return (spec in med) ? med[spec] : "" }
  function verdict(v, t) {
    if (t == "-") return "-"
    if (v == "") return "n/a"
    op = substr(t, 1, 2); lim = substr(t, 3) + 0
    if (op == "<=") return (v <= lim) ? "met" : "**not met**"
    return (v >= lim) ? "met" : "**not met**"
  }
  function pretty(t, who) {
    if (t == "-") return "-"
    return who " " (substr(t, 1, 2) == "<=" ? "≤ " : "≥ ") substr(t, 3)
  }
  $1 == "H" { printf "| **%s** | | | | | |\n", $2; next }
  $1 == "cmp" {
    l = conv(get($3), $5); o = conv(get($4), $5)
    r = (l != "" && o != "" && l != 0) ? o / l : ""
    printf "| %s | %s | %s | %s | %s | %s |\n", $2, fmt(l), fmt(o),
      (r == "" ? "n/a" : sprintf(r < 0.1 ? "%.3f" : "%.2f", r)), pretty($6, "ratio"), verdict(r, $6)
    next
  }
  $1 == "self" {
    la = get("llvm:" $3); lb = get("llvm:" $4); oa = get("ours:" $3); ob = get("ours:" $4)
    l = (la != "" && lb != "" && lb != 0) ? la / lb : ""
    o = (oa != "" && ob != "" && ob != 0) ? oa / ob : ""
    r = (l != "" && o != "" && l != 0) ? o / l : ""
    printf "| %s | %s | %s | %s | %s | %s |\n", $2,
      (l == "" ? "n/a" : sprintf("%.3f", l)), (o == "" ? "n/a" : sprintf("%.3f", o)),
      (r == "" ? "n/a" : sprintf("%.2f", r)), pretty($6, "ours"), verdict(o, $6)
  }' "$ROWS" >"$TABLE"

# Instructions per operation against the floor (bench/src/floor.c)
# and the absolute goals.
FLOOR_TABLE=$RES/floor.md
awk -v medfile="$MED" '
  BEGIN {
    while ((getline line < medfile) > 0) { split(line, f, " "); med[f[1] ":" f[2]] = f[3] }
    print "| operation (instructions) | LLVM | ours | floor | ours/floor | goal | met? |"
    print "|---|---:|---:|---:|---:|---:|---|"
  }
  function v(k) { return (k in med) ? sprintf("%.0f", med[k]) : "n/a" }
  {
    m = $1 "_ir"; goal = $2; label = $0; sub(/^[^ ]+ [^ ]+ /, "", label)
    o = ("ours:" m in med) ? med["ours:" m] : ""
    fl = ("floor:" m in med) ? med["floor:" m] : ""
    r = (o != "" && fl != "" && fl > 0) ? sprintf("%.1f", o / fl) : "n/a"
    met = (o == "") ? "n/a" : (o <= goal ? "met" : "**not met**")
    printf "| %s | %s | %s | %s | %s | ≤ %d | %s |\n", label, v("llvm:" m), v("ours:" m), v("floor:" m), r, goal, met
  }' <<'ROWS' >"$FLOOR_TABLE"
lat_region_nomap 200 empty target region, no maps
lat_region_tofrom 1000 region with one tofrom scalar, not present
lat_region_present8 1500 region mapping 8 present arrays
lat_enter_exit 500 enter+exit pair on present data
lat_update8 300 target update of 8 B
lat_alloc_free 200 omp_target_alloc + free, 64 B
lat_is_present 150 omp_target_is_present, hit
lat_is_present_miss 150 omp_target_is_present, miss
ROWS

echo
if [ "$SMOKE" = 1 ]; then
  echo "(smoke run: tiny iteration counts, the numbers are not meaningful)"
  echo
fi
echo "omptarget-rs vs LLVM 22.1 libomptarget, host plugin; medians over all samples"
echo "($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, rounds=$ROUNDS, lib=$LIB)"
echo
cat "$TABLE"
if [ "$HAVE_CG" = 1 ]; then
  echo
  echo "Instructions per operation against the floor (bench/src/floor.c) and the goals:"
  echo
  cat "$FLOOR_TABLE"
fi

if [ "$PROFILE" = 1 ] && [ "$HAVE_CG" = 1 ]; then
  echo
  echo "## Where our runtime spends its instructions (callgrind, per operation)"
  echo
  echo "Top functions by self cost and top call edges, per operation; the full"
  echo "lists (also by inclusive cost, and for LLVM's runtime) are in"
  echo "${CG#"$REPO"/}/<runtime>.<metric>.profile.txt."
  for f in "$CG"/ours.*.profile.txt; do
    [ -f "$f" ] || continue
    m=${f#"$CG"/ours.}; m=${m%.profile.txt}
    echo
    echo "### $m"
    echo '```'
    # total; top functions by self cost; top call edges (sections 0, 1, 3)
    awk 'NF == 0 { sec++; k = 0; if (sec == 3) print ""; next }
         sec == 0 || (sec == 1 && ++k <= 13) || (sec == 3 && ++k <= 15) { print }' "$f" | cut -c1-170
    echo '```'
  done
fi

MISSED=$(grep -c 'not met' "$TABLE" || true)
echo
echo "targets missed: $MISSED; results in ${RES#"$REPO"/}/"
if [ ${#FAILURES[@]} -gt 0 ]; then
  echo
  echo "FAILED (${#FAILURES[@]}):"
  printf '  %s\n' "${FAILURES[@]}"
  exit 1
fi
exit 0
