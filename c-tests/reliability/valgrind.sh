#!/usr/bin/env bash
# c-tests/reliability/valgrind.sh [PROGRAM...] - part of the C
# differential suite (c-tests/omp) under valgrind memcheck, with our library
# replacing libomptarget.so.22.1 (run.sh's "replace" mode), on the host plugin
# and, with OMPTARGET_RS_HOST_QUEUES=2, its deferred queues. Each program must
# print its .expected output (.ours where it has one), valgrind must report no
# invalid access, no use of uninitialised memory and no mismatched free
# anywhere, and no definitely lost block allocated from our library. Noise
# from libomp, the loader and glibc is suppressed by valgrind.supp (each
# suppression says why). Default programs: mapping of structs and strided
# updates, nowait with taskwait and depend chains, user-defined mappers
# (nested too), declare-target globals, omp_target_alloc/llvm_omp_target_alloc_*,
# and reliability/update_release_race (a program named DIR/NAME is
# c-tests/DIR/NAME.c; its arguments come from ARGS below: a short mode,
# `target update` racing the last release of its mapping, where an update
# that copied into or out of a freed device block is an invalid access).
# Possibly-lost blocks (interior pointers of live hash tables and thread-local
# caches at exit) are not errors; definitely lost ones are.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
OUT=$ROOT/target/valgrind
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(mapper mapper_nested nowait_taskwait nowait_depend_pipeline declare_target_globals
                                 struct_members strided_update llvm_alloc reliability/update_release_race)
# Command-line arguments of a program (short modes; ~10 s each under valgrind).
declare -A ARGS=([reliability/update_release_race]="3000 2")
command -v valgrind >/dev/null || { echo "valgrind: not installed"; exit 1; }
[ -f "$LIB" ] || { echo "valgrind.sh: no runtime at $LIB (cargo build --release)" >&2; exit 2; }
mkdir -p "$OUT/shim"
ln -sf "$(readlink -f "$LIB")" "$OUT/shim/libomptarget.so.22.1"
# Seconds per run: the slowest program takes about 10 s under valgrind here.
LIMIT=${VALGRIND_LIMIT:-150}
pass=0 fail=0
for prog in "${progs[@]}"; do
  case $prog in
  */*) dir=$ROOT/c-tests/$(dirname "$prog") ;;
  *) dir=$ROOT/c-tests/omp ;;
  esac
  p=$(basename "$prog")
  read -r -a args <<<"${ARGS[$prog]:-}"
  src=$dir/$p.c
  exe=$OUT/$p
  if ! clang-22 -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -O2 -g -o "$exe" "$src" -lm -lpthread >"$OUT/$p.build" 2>&1; then
    echo "FAIL  $p: build (see $OUT/$p.build)"; fail=$((fail + 1)); continue
  fi
  want=$dir/$p.expected
  [ -f "$dir/$p.ours" ] && want=$dir/$p.ours
  for mode in direct queued; do
    log=$OUT/$p.$mode.vg
    env=(LD_LIBRARY_PATH="$OUT/shim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    [ $mode = queued ] && env+=(OMPTARGET_RS_HOST_QUEUES=2)
    # --fair-sched=yes: valgrind runs one thread at a time under one lock; its
    # default pipe lock is unfair on a machine with more cores, where a thread
    # that spins with sched_yield (libomp's waiting team and hidden-helper
    # threads, a copy-back waiting for its turn) takes the lock straight back
    # and starves the thread it waits for. CI saw the nowait programs make no
    # progress for 300 s that way (4 of 4 runs) while they take 3-10 s here; the
    # ticket lock hands the lock round in order.
    run_vg() { # run_vg [taskset -c 0]
      (cd "$OUT" && env "${env[@]}" timeout -k 5 "$LIMIT" "$@" valgrind --fair-sched=yes --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite --num-callers=40 \
        --suppressions="$HERE/valgrind.supp" --log-file="$log" "$exe" "${args[@]}" >"$OUT/$p.$mode.out" 2>"$OUT/$p.$mode.err" </dev/null)
    }
    run_vg
    rc=$?
    note=
    if [ $rc = 124 ] || [ $rc = 137 ]; then
      # A stall of valgrind's scheduler, or a real hang? The same program
      # without valgrind must finish; then one more valgrind run pinned to one
      # CPU (no other core for a yielding thread to take the lock back from).
      if (cd "$OUT" && env "${env[@]}" timeout -k 5 60 "$exe" "${args[@]}" >/dev/null 2>&1 </dev/null); then
        note="; stalled under valgrind after ${LIMIT} s, passed pinned to one CPU"
        run_vg taskset -c 0
        rc=$?
      else
        echo "FAIL  valgrind $p ($mode): hangs without valgrind too"; fail=$((fail + 1)); continue
      fi
    fi
    # libomp's own assertion (its task-team bookkeeping: "kmp_tasking.cpp:
    # task_team != NULL" in __kmpc_omp_task_with_deps, no frame of ours on
    # the stack: a target task created while the helper thread it goes to
    # runs a kernel with a teams or parallel construct gets no task team,
    # docs/reliability-libomp.md) aborted nowait_depend_pipeline once in CI
    # under valgrind's one-thread-at-a-time scheduling (0 of 8 runs here,
    # with 22.1's runtime or ours): one rerun. A second abort fails as any
    # other.
    if [ $rc = 134 ] && grep -q "OMP: Error #13: Assertion failure at kmp_" "$OUT/$p.$mode.err"; then
      assertion=$(grep -o "Assertion failure at kmp_[a-z_]*\.cpp([0-9]*)" "$OUT/$p.$mode.err" | head -n1)
      cp "$log" "$log.first"
      run_vg
      rc=$?
      note="$note; libomp's ${assertion:-assertion} in the first run (log: ${log#"$ROOT"/}.first), rerun"
    fi
    what=
    if [ $rc = 124 ] || [ $rc = 137 ]; then what="no exit after ${LIMIT} s under valgrind (exit $rc)"
    elif [ $rc != 0 ]; then what="exit $rc"
    elif ! cmp -s "$OUT/$p.$mode.out" "$want"; then what="output differs from ${want#$ROOT/}"
    elif grep -qE "Invalid (read|write|free)|uninitialised|Mismatched free|overlap" "$log"; then what="memory errors"
    # A definitely lost block whose allocation stack passes through our library.
    elif awk '/definitely lost in loss record/{rec=1; next} rec && /^==[0-9]+== $/{rec=0} rec && /omptarget_rs|libomptarget/{hit=1} END{exit !hit}' "$log"; then
      what="definite leak in our library"
    elif ! grep -q "ERROR SUMMARY: 0 errors" "$log"; then what="valgrind reported errors"
    fi
    if [ -z "$what" ]; then
      echo "PASS  valgrind $p ($mode; $(grep -o 'definitely lost: [0-9,]* bytes' "$log" | head -n1 || echo 'no leaks')$note)"
      pass=$((pass + 1))
    else
      echo "FAIL  valgrind $p ($mode): $what$note"; fail=$((fail + 1))
      grep -E "^==[0-9]+== (Invalid|Conditional|Use of|Mismatched|  +(at|by) )" "$log" | head -n 30 | sed 's/^/      | /'
      echo "      (full log: $log)"
    fi
  done
done
echo "valgrind: $pass passed, $fail failed"
[ $fail = 0 ]
