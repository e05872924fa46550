#!/usr/bin/env bash
# run.sh [--long] [CHECK...] - reliability checks of OUR runtime
# that the differential suite cannot hold, because LLVM 22.1 hangs or
# crashes on them. Programs are built with clang-22 into target/reliability/
# and run in library-path replacement mode (a shim folder with
# libomptarget.so.22.1 -> target/release/libomptarget_rs.so, or
# $OMPTARGET_RS_LIB, on LD_LIBRARY_PATH), each under a timeout, so a hang
# fails the check instead of the run.
#
#   fork     fork_offload.c: 4 parent threads offload while the main thread
#            forks (60 times; 600 with --long); every child offloads and
#            checks results within 10 s. Also in the queued host mode, with
#            children that offload from 4 threads at once ("threads") and
#            through target nowait tasks ("nowait"). fork_ol.c: the same with
#            liboffload: 4 parent threads use ol* (olMemAlloc, olMemcpy,
#            olLaunchKernel, queues, events, olCreateProgram/olDestroyProgram)
#            on the CPU devices; every child uses ol* and checks (skipped
#            without liboffload-22-dev's OffloadAPI.h).
#   gdb      `gdb -batch -ex run -ex bt --args` on an offloading program
#            completes (the images' link-map paths are openable by gdb).
#   bad      bad_input.c (an ABI harness, cc): a truncated device image, a
#            NULL host pointer with a size, a negative size, 2^21 kernel
#            arguments, program-header corruptions that crashed dlopen (the
#            dynamic segment's address, the last segment's p_memsz, RELRO past
#            its segment), an image whose dependency is missing (the message
#            names it): each reported clearly, never a crash.
#            bad_image.c: the same images through olCreateProgram (ol*): each
#            refused with error details naming the problem, then the valid
#            image still loads and runs (skipped without liboffload-22-dev).
#   dlopen   dlopen_cycles.c: 1,000 dlopen/offload/dlclose cycles (10,000
#            with --long) of a library with a target region and a
#            declare-target global: RSS growth < 2 MiB, no fd or maps growth.
#            Also built without offloading of its own ("indirect"), so the
#            runtime is loaded by the library's first dlopen.
#   teardown teardown_nowait.c: 8 target nowait regions outstanding when main
#            returns (5 runs; 20 with --long), and exit(0) from a parallel
#            region while the other threads offload (10 runs; 50): exit 0.
#            teardown_dl.c: the same for a dlopen'd library still open at
#            exit (teardown_dl_lib.so: 8 nowait regions and a ninth that
#            checks their results) when main returns (status 0), calls
#            exit(3), or a thread that never offloaded calls exit(4) (5 runs
#            each; 20): that status and "results ok".
#   stress   thread_stress.c: 8 threads x 10^4 mixed constructs (10^5, 50
#            runs with --long), exact results, reference counts back to 0.
#   update   update_release_race.c: one thread enters and exits mappings of
#            its arrays (every exit the last release) and maps canary arrays
#            of the same sizes in between, 3 threads `target update` the
#            arrays to and from all the while: no wrong byte in the arrays
#            or canaries (an update never copies into or out of a freed
#            block), nothing left mapped. 5 runs of 20,000 iterations, and 3
#            on deferred queues (100 and 30 with --long).
#   memory   map_memory.c: distinct mappings (`target enter data map(to:
#            a[i:1])`, every 1000th used by a region, then `exit data
#            map(from:)`) of array elements and of separate malloc blocks;
#            after malloc_trim, resident memory must have grown by less than
#            40 MiB: 10^6 array elements and 2*10^5 blocks (10^6 of both with
#            --long). The printed results (values, presence) must equal LLVM
#            22.1's for 2*10^4 of each (10^5 with --long), which keeps
#            866 MiB after 10^6.
#   valgrind dlopen_cycles (30 cycles), the bad-input cases that return
#            (NULL host pointer, negative size) and bad_image (corrupt images
#            and a missing dependency refused by olCreateProgram, then a
#            valid one loaded) under valgrind memcheck: exit 0, no invalid
#            access, no definite leak from our library. Needs the dlopen and
#            bad checks' builds (runs after them by default).
#
# Prints one PASS/FAIL line per check and "N passed, N failed"; exit 1 on a failure.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
OUT=$ROOT/target/reliability
LONG=0
if [ "${1:-}" = --long ]; then LONG=1; shift; fi
CHECKS=("$@")
[ ${#CHECKS[@]} -gt 0 ] || CHECKS=(fork gdb bad dlopen teardown stress update memory valgrind)
[ -f "$LIB" ] || { echo "reliability/run.sh: no runtime at $LIB (cargo build --release)" >&2; exit 2; }
LIB=$(readlink -f "$LIB")
mkdir -p "$OUT/shim" "$OUT/logs"
ln -sf "$LIB" "$OUT/shim/libomptarget.so.22.1"
ln -sf "$LIB" "$OUT/shim/libLLVMOffload.so.22.1"
export LD_LIBRARY_PATH=$OUT/shim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
CC=${CC_OMP:-clang-22}
OMPFLAGS=(-fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -O2 -g)

pass=0 fail=0
ok() { echo "PASS  $1${2:+ ($2)}"; pass=$((pass + 1)); }
bad() {
  echo "FAIL  $1${2:+: $2}"; fail=$((fail + 1))
  [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/      | /' "$3" | tail -n 25
}
# build NAME [extra flags...]: c-tests/reliability/NAME.c -> $OUT/NAME
build() {
  local name=$1; shift
  if ! "$CC" "${OMPFLAGS[@]}" "$HERE/$name.c" -o "$OUT/$name" "$@" >"$OUT/logs/$name.build" 2>&1; then
    bad "build $name" "" "$OUT/logs/$name.build"
    return 1
  fi
}

check_fork() {
  build fork_offload -lpthread || return
  local forks=60
  [ $LONG = 1 ] && forks=600
  local mode log child
  for mode in direct queued threads nowait; do
    log=$OUT/logs/fork.$mode.log
    child=plain
    case $mode in threads | nowait) child=$mode ;; esac
    if [ $mode = queued ]; then
      OMPTARGET_RS_HOST_QUEUES=2 timeout -k 5 300 "$OUT/fork_offload" $forks >"$log" 2>&1
    else
      timeout -k 5 300 "$OUT/fork_offload" $forks $child >"$log" 2>&1
    fi
    local rc=$?
    if [ $rc = 0 ] && grep -q "^fork_offload: $forks children ok, 0 failed" "$log"; then
      ok "fork [$mode]" "$(grep '^fork_offload:' "$log")"
    else
      bad "fork [$mode]" "exit $rc" "$log"
    fi
  done
  # liboffload: the ol* API in the parent threads and in every child.
  local inc=/usr/lib/llvm-22/include llvm_lib=/usr/lib/llvm-22/lib
  if [ ! -f "$inc/offload/OffloadAPI.h" ] || [ ! -f "$llvm_lib/libLLVMOffload.so.22.1" ]; then
    echo "SKIP  fork [ol*]: liboffload-22-dev not installed"
    return
  fi
  log=$OUT/logs/fork_ol.build
  if ! clang-22 -O1 -shared -fPIC "$HERE/../offload/kernel.c" -o "$OUT/ol_kernel.so" >"$log" 2>&1 ||
    ! clang-22 -Wall -Wextra -Werror -O2 -g -I"$inc" "$HERE/fork_ol.c" -L"$llvm_lib" -lLLVMOffload -lpthread \
      -o "$OUT/fork_ol" >>"$log" 2>&1; then
    bad "build fork_ol" "" "$log"
    return
  fi
  for mode in direct queued; do
    log=$OUT/logs/fork_ol.$mode.log
    if [ $mode = queued ]; then
      OMPTARGET_RS_HOST_QUEUES=2 timeout -k 5 300 "$OUT/fork_ol" "$OUT/ol_kernel.so" $forks >"$log" 2>&1
    else
      timeout -k 5 300 "$OUT/fork_ol" "$OUT/ol_kernel.so" $forks >"$log" 2>&1
    fi
    local rc=$?
    # Every child either works or, forked while the parent's threads kept
    # the runtime busy, gets a clear error (refused): none hangs or crashes.
    local okn refn
    okn=$(sed -n 's/^fork_ol: \([0-9]*\) children ok, \([0-9]*\) refused.*, 0 failed.*/\1/p' "$log")
    refn=$(sed -n 's/^fork_ol: \([0-9]*\) children ok, \([0-9]*\) refused.*, 0 failed.*/\2/p' "$log")
    if [ $rc = 0 ] && [ -n "$okn" ] && [ $((okn + refn)) = "$forks" ]; then
      ok "fork [ol* $mode]" "$(grep '^fork_ol:' "$log")"
    else
      bad "fork [ol* $mode]" "exit $rc" "$log"
    fi
  done
}

check_gdb() {
  command -v gdb >/dev/null || { echo "SKIP  gdb: gdb not installed"; return; }
  build gdb_offload || return
  local log=$OUT/logs/gdb.log
  timeout -k 5 60 gdb -nx -batch -ex run -ex bt --args "$OUT/gdb_offload" </dev/null >"$log" 2>&1
  local rc=$?
  if [ $rc = 124 ]; then
    bad "gdb run+bt" "gdb hung (killed after 60 s)" "$log"
  elif grep -q "gdb_offload: 64 on device" "$log" && grep -q "exited normally" "$log"; then
    ok "gdb run+bt"
  else
    bad "gdb run+bt" "gdb exit $rc" "$log"
  fi
  # Stopped inside a kernel: gdb must have read the image's symbols.
  log=$OUT/logs/gdb-break.log
  timeout -k 5 60 gdb -nx -batch -ex 'set breakpoint pending on' -ex 'break gdb_kernel_body' -ex run -ex bt -ex continue \
    --args "$OUT/gdb_offload" </dev/null >"$log" 2>&1
  rc=$?
  if [ $rc = 124 ]; then
    bad "gdb break in kernel" "gdb hung (killed after 60 s)" "$log"
  elif grep -q "gdb_kernel_body" "$log" && grep -q "^#0 .*gdb_kernel_body" "$log" && grep -q "exited normally" "$log"; then
    ok "gdb break in kernel"
  else
    bad "gdb break in kernel" "gdb exit $rc" "$log"
  fi
}

check_bad() {
  local log=$OUT/logs/bad_input.build
  if ! cc -shared -fPIC -O2 "$HERE/../abi/devimg/devimg.c" -o "$OUT/devimg.so" >"$log" 2>&1 ||
    ! cc -std=c11 -Wall -Wextra -Werror -O1 "$HERE/bad_input.c" -o "$OUT/bad_input" \
      -L/usr/lib/llvm-22/lib -lomptarget -Wl,-rpath,/usr/lib/llvm-22/lib >>"$log" 2>&1; then
    bad "build bad_input" "" "$log"
    return
  fi
  # The device image built against a library that is then removed: loading
  # it must fail with the loader's reason, which names the library.
  mkdir -p "$OUT/missing"
  echo 'int omptarget_rs_missing_dep_fn(void) { return 1; }' >"$OUT/missing/dep.c"
  if ! cc -shared -fPIC "$OUT/missing/dep.c" -o "$OUT/missing/libomptarget_rs_missing_dep.so" >>"$log" 2>&1 ||
    ! cc -shared -fPIC -O2 "$HERE/../abi/devimg/devimg.c" -o "$OUT/devimg_missing_dep.so" \
      -L"$OUT/missing" -Wl,--no-as-needed -lomptarget_rs_missing_dep >>"$log" 2>&1 ||
    ! cc -shared -fPIC -O1 "$HERE/../offload/kernel.c" -o "$OUT/ol_kernel_missing_dep.so" \
      -L"$OUT/missing" -Wl,--no-as-needed -lomptarget_rs_missing_dep >>"$log" 2>&1; then
    bad "build the images with a missing dependency" "" "$log"
    return
  fi
  rm -f "$OUT/missing/libomptarget_rs_missing_dep.so"
  # case, image, expected exit status, a line stdout must end with, a stderr substring
  local spec
  for spec in "truncated|devimg|134|launching on a truncated image|truncated or malformed ELF image" \
    "null|devimg|0|done|argument 0 maps 64 bytes at host address NULL" \
    "negative|devimg|0|done|argument 0 has a negative size -8" \
    "manyargs|devimg|134|launching with 2097152 arguments|2093057 more than the host plugin's limit of 4096" \
    "dynamic|devimg|134|launching on a corrupted image|(PT_DYNAMIC) (0x8000" \
    "memsz|devimg|134|launching on a corrupted image|p_filesz 0x" \
    "relro|devimg|134|launching on a corrupted image|(PT_GNU_RELRO) at 0x" \
    "launch|devimg_missing_dep|134|launching on a given image|libomptarget_rs_missing_dep.so: cannot open shared object file"; do
    local c img want last msg
    IFS='|' read -r c img want last msg <<<"$spec"
    log=$OUT/logs/bad_input.$c
    # (The subshell keeps bash's "Aborted" job message out of the output.)
    (
      timeout -k 5 60 "$OUT/bad_input" "$OUT/$img.so" "$c" >"$log.out" 2>"$log.err"
      echo $? >"$log.rc"
    ) 2>/dev/null
    local rc
    rc=$(cat "$log.rc")
    if [ $rc = "$want" ] && [ "$(tail -n 1 "$log.out")" = "$last" ] && grep -qF "$msg" "$log.err"; then
      ok "bad input: $c" "exit $rc"
    else
      cat "$log.out" "$log.err" >"$log.all"
      bad "bad input: $c" "exit $rc (want $want, stdout ending '$last', stderr with '$msg')" "$log.all"
    fi
  done
  # The same images through olCreateProgram.
  local inc=/usr/lib/llvm-22/include llvm_lib=/usr/lib/llvm-22/lib
  if [ ! -f "$inc/offload/OffloadAPI.h" ] || [ ! -f "$llvm_lib/libLLVMOffload.so.22.1" ]; then
    echo "SKIP  bad image [ol*]: liboffload-22-dev not installed"
    return
  fi
  log=$OUT/logs/bad_image.build
  if ! cc -shared -fPIC -O1 "$HERE/../offload/kernel.c" -o "$OUT/ol_kernel.so" >"$log" 2>&1 ||
    ! clang-22 -Wall -Wextra -Werror -O1 -g -I"$inc" "$HERE/bad_image.c" -L"$llvm_lib" -lLLVMOffload \
      -o "$OUT/bad_image" >>"$log" 2>&1; then
    bad "build bad_image" "" "$log"
    return
  fi
  log=$OUT/logs/bad_image.log
  (
    timeout -k 5 60 "$OUT/bad_image" "$OUT/ol_kernel.so" "$OUT/ol_kernel_missing_dep.so" >"$log" 2>&1
    echo $? >"$log.rc"
  ) 2>/dev/null
  local rc
  rc=$(cat "$log.rc")
  if [ "$rc" = 0 ] && grep -q "^bad_image: 4 of 4 refused, valid image ok" "$log"; then
    ok "bad image [ol*]" "$(tail -n 1 "$log")"
  else
    bad "bad image [ol*]" "exit $rc" "$log"
  fi
}

check_dlopen() {
  local log=$OUT/logs/dl_cycle_lib.build
  if ! "$CC" "${OMPFLAGS[@]}" -shared -fPIC "$HERE/dl_cycle_lib.c" -o "$OUT/dl_cycle_lib.so" >"$log" 2>&1; then
    bad "build dl_cycle_lib" "" "$log"
    return
  fi
  build dlopen_cycles -ldl || return
  # The same program without offloading of its own: the runtime is loaded
  # by the first dlopen of the library (not with the program).
  log=$OUT/logs/dlopen_cycles_indirect.build
  if ! "$CC" -fopenmp -O2 -g "$HERE/dlopen_cycles.c" -o "$OUT/dlopen_cycles_indirect" -ldl >"$log" 2>&1; then
    bad "build dlopen_cycles (indirect)" "" "$log"
    return
  fi
  local cycles=1000 mode prog
  [ $LONG = 1 ] && cycles=10000
  for mode in direct queued indirect; do
    log=$OUT/logs/dlopen.$mode.log
    prog=$OUT/dlopen_cycles
    [ $mode = indirect ] && prog=$OUT/dlopen_cycles_indirect
    if [ $mode = queued ]; then
      OMPTARGET_RS_HOST_QUEUES=2 timeout -k 5 300 "$prog" "$OUT/dl_cycle_lib.so" $cycles >"$log" 2>&1
    else
      timeout -k 5 300 "$prog" "$OUT/dl_cycle_lib.so" $cycles >"$log" 2>&1
    fi
    local rc=$?
    if [ $rc = 0 ]; then
      ok "dlopen cycles [$mode]" "$(grep '^dlopen_cycles:' "$log")"
    else
      bad "dlopen cycles [$mode]" "exit $rc" "$log"
    fi
  done
}

# repeat NAME RUNS COMMAND...: runs COMMAND RUNS times (10 min limit each),
# all must exit 0; the last failing run's output is shown.
repeat() {
  local name=$1 runs=$2 i rc failed=0 log=$OUT/logs/$1.log
  shift 2
  for ((i = 0; i < runs; i++)); do
    (
      timeout -k 5 600 "$@" >"$log.run" 2>&1
      echo $? >"$log.rc"
    ) 2>/dev/null
    rc=$(cat "$log.rc")
    if [ "$rc" != 0 ]; then
      failed=$((failed + 1))
      { echo "run $i: exit $rc"; cat "$log.run"; } >"$log"
    fi
  done
  if [ $failed = 0 ]; then
    ok "$name" "$runs runs, exit 0; $(tail -n 1 "$log.run")"
  else
    bad "$name" "$failed of $runs runs failed" "$log"
  fi
}

check_teardown() {
  build teardown_nowait || return
  local n1=5 n2=10
  [ $LONG = 1 ] && n1=20 n2=50
  repeat "teardown: nowait at return" $n1 "$OUT/teardown_nowait"
  repeat "teardown: exit in parallel" $n2 "$OUT/teardown_nowait" exit
  # A dlopen'd library still open at exit.
  local log=$OUT/logs/teardown_dl_lib.build
  if ! "$CC" "${OMPFLAGS[@]}" -shared -fPIC "$HERE/teardown_dl_lib.c" -o "$OUT/teardown_dl_lib.so" >"$log" 2>&1; then
    bad "build teardown_dl_lib" "" "$log"
    return
  fi
  build teardown_dl -ldl -lpthread || return
  local how want i rc failed
  for how in return exit thread-exit; do
    want=0
    [ $how = exit ] && want=3
    [ $how = thread-exit ] && want=4
    failed=0
    log=$OUT/logs/teardown_dl.$how.log
    for ((i = 0; i < n1; i++)); do
      (
        timeout -k 5 600 "$OUT/teardown_dl" "$OUT/teardown_dl_lib.so" $how >"$log.run" 2>&1
        echo $? >"$log.rc"
      ) 2>/dev/null
      rc=$(cat "$log.rc")
      if [ "$rc" != $want ] || ! grep -q "^teardown_dl: 8 regions complete, results ok" "$log.run"; then
        failed=$((failed + 1))
        { echo "run $i: exit $rc (want $want)"; cat "$log.run"; } >"$log"
      fi
    done
    if [ $failed = 0 ]; then
      ok "teardown: dlopen'd library, nowait at $how" "$n1 runs, exit $want, results ok"
    else
      bad "teardown: dlopen'd library, nowait at $how" "$failed of $n1 runs failed" "$log"
    fi
  done
}

check_stress() {
  build thread_stress -lpthread || return
  if [ $LONG = 1 ]; then
    repeat "thread stress" 50 "$OUT/thread_stress" 100000
  else
    repeat "thread stress" 1 "$OUT/thread_stress" 10000
    OMPTARGET_RS_HOST_QUEUES=2 repeat "thread stress [queued]" 1 "$OUT/thread_stress" 10000
  fi
}

check_update() {
  build update_release_race -lpthread || return
  local n=5 nq=3
  [ $LONG = 1 ] && n=100 nq=30
  repeat "update racing the last release" $n "$OUT/update_release_race"
  OMPTARGET_RS_HOST_QUEUES=2 repeat "update racing the last release [queued]" $nq "$OUT/update_release_race"
}

check_memory() {
  build map_memory || return
  local n_array=1000000 n_blocks=200000 n_diff=20000
  [ $LONG = 1 ] && n_blocks=1000000 n_diff=100000
  local what n log rc
  for what in array blocks; do
    n=$n_array
    [ $what = blocks ] && n=$n_blocks
    log=$OUT/logs/memory.$what
    timeout -k 5 300 "$OUT/map_memory" $n $what 40 >"$log.out" 2>"$log.err"
    rc=$?
    if [ $rc = 0 ] && grep -q "^map_memory: $n mappings ($what) entered and exited" "$log.out"; then
      ok "memory after $n mappings [$what]" "$(grep -o 'resident .*' "$log.err")"
    else
      cat "$log.out" "$log.err" >"$log.all"
      bad "memory after $n mappings [$what]" "exit $rc" "$log.all"
    fi
    # The same results as LLVM 22.1 (its runtime first on the library path).
    local llvm_lib=/usr/lib/llvm-22/lib
    if [ ! -f "$llvm_lib/libomptarget.so.22.1" ]; then
      echo "SKIP  memory [$what] against LLVM 22.1: liboffload-22 not installed"
      continue
    fi
    log=$OUT/logs/memory.$what.diff
    timeout -k 5 300 "$OUT/map_memory" $n_diff $what >"$log.ours" 2>/dev/null
    LD_LIBRARY_PATH=$llvm_lib timeout -k 5 300 "$OUT/map_memory" $n_diff $what >"$log.llvm" 2>/dev/null
    if [ -s "$log.llvm" ] && cmp -s "$log.ours" "$log.llvm"; then
      ok "memory [$what] results as LLVM 22.1" "$n_diff mappings"
    else
      diff "$log.llvm" "$log.ours" >"$log.all" 2>&1
      bad "memory [$what] results as LLVM 22.1" "$n_diff mappings differ" "$log.all"
    fi
  done
}

check_valgrind() {
  command -v valgrind >/dev/null || { echo "SKIP  valgrind: valgrind not installed"; return; }
  local what log name
  # "label|program args...": the label names the run and its log.
  for what in "30|dlopen_cycles $OUT/dl_cycle_lib.so 30" "null|bad_input $OUT/devimg.so null" \
    "negative|bad_input $OUT/devimg.so negative" \
    "ol|bad_image $OUT/ol_kernel.so $OUT/ol_kernel_missing_dep.so load-only"; do
    IFS='|' read -r label what <<<"$what"
    read -r -a cmd <<<"$what"
    name="${cmd[0]} $label"
    log=$OUT/logs/valgrind.${cmd[0]}.$label
    if [ "${cmd[0]}" = bad_image ] && [ ! -x "$OUT/bad_image" ]; then
      echo "SKIP  valgrind $name: not built (liboffload-22-dev missing)"
      continue
    fi
    [ -x "$OUT/${cmd[0]}" ] || { bad "valgrind $name" "not built (run the dlopen and bad checks)"; continue; }
    timeout -k 5 600 valgrind --leak-check=full --num-callers=40 "$OUT/${cmd[0]}" "${cmd[@]:1}" >"$log" 2>&1
    local rc=$?
    # Invalid accesses anywhere, or a definitely lost block allocated under our library.
    if grep -qE "Invalid (read|write|free)|uninitialised|Mismatched free" "$log"; then
      bad "valgrind $name" "memory errors" "$log"
    elif awk '/definitely lost in loss record/{rec=1; next} rec && /^==[0-9]+== $/{rec=0} rec && /omptarget_rs|libomptarget/{hit=1} END{exit !hit}' "$log"; then
      bad "valgrind $name" "definite leak in our library" "$log"
    elif [ $rc != 0 ]; then
      bad "valgrind $name" "exit $rc" "$log"
    elif grep -q "ERROR SUMMARY" "$log"; then
      ok "valgrind $name" "$(grep -o 'definitely lost: .*' "$log" | head -n 1) (the harness's own image buffer, if any)"
    else
      bad "valgrind $name" "valgrind did not finish" "$log"
    fi
  done
}

for c in "${CHECKS[@]}"; do
  "check_$c"
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
