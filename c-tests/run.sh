#!/usr/bin/env bash
# C test suite runner for omptarget-rs.
#
# Builds every program under c-tests/omp (clang-22 OpenMP offload programs)
# and c-tests/abi (hand-written harnesses calling the libomptarget ABI) into
# c-tests/build/, then runs each one in up to three modes:
#
#   llvm     plain run: LLVM's libomptarget.so.22.1
#   preload  LD_PRELOAD=$LIB
#   replace  LD_LIBRARY_PATH=<dir with libomptarget.so.22.1 -> $LIB>
#   queued   as replace, with OMPTARGET_RS_HOST_QUEUES=2: the host plugin
#            defers every copy and launch to queues (answering "not ready"
#            twice per query), so the runtime's asynchronous path (nowait
#            parked in tasks, events, clean-up after completion) must give
#            LLVM's results too
#
# $LIB is $OMPTARGET_RS_LIB, default <repo>/target/release/libomptarget_rs.so.
# See c-tests/README.md for the test conventions and sidecar files.
#
# Usage: c-tests/run.sh [options] [FILTER...]
#   --llvm-only         run only the llvm mode (validates the programs themselves)
#   --modes LIST        comma-separated subset of llvm,preload,replace,queued
#   --update-expected   (re)write <name>.expected from the llvm run
#   --build-only        build, do not run
#   --list              print the test names and exit
#   --clean             remove c-tests/build first
#   --repeat N          run every test/mode N times (flakiness hunting)
#   -j, --jobs N        parallel compile jobs (default 2)
#   --timeout S         per-run time limit in seconds (default 60)
#   --keep-tmpfiles     keep the /tmp/tmpfile_* images LLVM's host plugin leaves behind
#   -v, --verbose       print stderr of failing runs in full
#   FILTER              run tests whose name contains FILTER (or matches it as a
#                       glob when it contains * ? or [); several filters = union
#
# Output: one line per test and mode, "PASS name [mode]" or
# "FAIL name [mode]: reason" (with a stdout diff / stderr tail indented below),
# then a final line "N passed, N failed[, N skipped]". Exit status 1 if any failed.

set -u -o pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
BUILD=$HERE/build
LIB=${OMPTARGET_RS_LIB:-$REPO/target/release/libomptarget_rs.so}

OMP_CC=${OMP_CC:-clang-22}
OMP_CXX=${OMP_CXX:-clang++-22}
ABI_CC=${ABI_CC:-cc}
OFFLOAD_FLAGS=(-fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu)
OMP_CFLAGS=(-O2 -g -Wall -Wno-unknown-pragmas)
ABI_CFLAGS=(-std=c11 -Wall -Wextra -Werror -O1 -g)
ABI_LIBS=(-L/usr/lib/llvm-22/lib -lomptarget)
LLVM_LIBDIR=/usr/lib/llvm-22/lib

MODES=(llvm preload replace queued)
UPDATE_EXPECTED=0
BUILD_ONLY=0
LIST_ONLY=0
CLEAN=0
REPEAT=1
JOBS=${JOBS:-2}
TIMEOUT=60
KEEP_TMPFILES=0
VERBOSE=0
FILTERS=()

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

while [ $# -gt 0 ]; do
  case "$1" in
  --llvm-only) MODES=(llvm) ;;
  --modes) IFS=, read -r -a MODES <<<"$2"; shift ;;
  --modes=*) IFS=, read -r -a MODES <<<"${1#*=}" ;;
  --update-expected) UPDATE_EXPECTED=1 ;;
  --build-only) BUILD_ONLY=1 ;;
  --list) LIST_ONLY=1 ;;
  --clean) CLEAN=1 ;;
  --repeat) REPEAT=$2; shift ;;
  --repeat=*) REPEAT=${1#*=} ;;
  -j | --jobs) JOBS=$2; shift ;;
  -j*) JOBS=${1#-j} ;;
  --jobs=*) JOBS=${1#*=} ;;
  --timeout) TIMEOUT=$2; shift ;;
  --timeout=*) TIMEOUT=${1#*=} ;;
  --keep-tmpfiles) KEEP_TMPFILES=1 ;;
  -v | --verbose) VERBOSE=1 ;;
  -h | --help) usage; exit 0 ;;
  -*) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  *) FILTERS+=("$1") ;;
  esac
  shift
done

for m in "${MODES[@]}"; do
  case "$m" in llvm | preload | replace | queued) ;; *) echo "run.sh: unknown mode '$m'" >&2; exit 2 ;; esac
done
if [ "$UPDATE_EXPECTED" = 1 ] && [[ " ${MODES[*]} " != *" llvm "* ]]; then
  echo "run.sh: --update-expected needs the llvm mode" >&2
  exit 2
fi

has_mode() { [[ " ${MODES[*]} " == *" $1 "* ]]; }
needs_lib() { has_mode preload || has_mode replace || has_mode queued; }

# ---------------------------------------------------------------- discovery
# A test is "kind/name" with kind omp or abi. Sources and sidecars live in
# c-tests/<kind>/; sidecars are <kind>/<name>.<ext>.
TESTS=()
discover() {
  local f n
  for f in "$HERE"/omp/*.c "$HERE"/omp/*.cpp; do
    [ -f "$f" ] || continue
    n=$(basename "$f"); n=${n%.*}
    TESTS+=("omp/$n")
  done
  for f in "$HERE"/omp/*/; do
    [ -d "$f" ] || continue
    n=$(basename "$f")
    TESTS+=("omp/$n")
  done
  for f in "$HERE"/abi/*.c; do
    [ -f "$f" ] || continue
    n=$(basename "$f" .c)
    TESTS+=("abi/$n")
  done
  local IFS=$'\n'
  # shellcheck disable=SC2207
  TESTS=($(printf '%s\n' "${TESTS[@]}" | LC_ALL=C sort -u))
}

selected() {
  local t=$1 f
  [ ${#FILTERS[@]} -eq 0 ] && return 0
  for f in "${FILTERS[@]}"; do
    if [[ "$f" == *[\*\?\[]* ]]; then
      # shellcheck disable=SC2053
      [[ "$t" == $f || "${t#*/}" == $f ]] && return 0
    else
      [[ "$t" == *"$f"* ]] && return 0
    fi
  done
  return 1
}

discover
SEL=()
for t in "${TESTS[@]}"; do selected "$t" && SEL+=("$t"); done

if [ "$LIST_ONLY" = 1 ]; then
  printf '%s\n' "${SEL[@]}"
  exit 0
fi
if [ ${#SEL[@]} -eq 0 ]; then
  echo "run.sh: no test matches ${FILTERS[*]}" >&2
  exit 2
fi

if [ "$BUILD_ONLY" = 0 ] && needs_lib && [ ! -f "$LIB" ]; then
  echo "run.sh: library not found: $LIB" >&2
  echo "run.sh: build it (cargo build --release), set OMPTARGET_RS_LIB, or use --llvm-only" >&2
  exit 2
fi

# One runner at a time per checkout (they share build/ and build/run/): lock
# this script file itself.
exec 9<"${BASH_SOURCE[0]}"
if ! flock -n 9; then
  echo "run.sh: waiting for another run.sh of this checkout to finish" >&2
  flock 9
fi

[ "$CLEAN" = 1 ] && rm -rf "$BUILD"
mkdir -p "$BUILD"

# ---------------------------------------------------------------- sidecars
src_dir() { echo "$HERE/${1%%/*}"; }  # c-tests/omp or c-tests/abi
sidecar() { echo "$(src_dir "$1")/${1#*/}.$2"; }
out_dir() { echo "$BUILD/$1"; }
exe_of() { echo "$BUILD/$1/${1#*/}"; }

# Lines of a sidecar file without comments (# ...) and blank lines.
sidecar_lines() {
  local f
  f=$(sidecar "$1" "$2")
  [ -f "$f" ] || return 0
  sed -e 's/^[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d' "$f"
}

expected_exit() {
  local v
  v=$(sidecar_lines "$1" exit | head -n1 | tr -d '[:space:]')
  echo "${v:-0}"
}

# ---------------------------------------------------------------- building
# Every build writes $out/build.log and, on success, $out/.ok. A build is
# skipped when .ok is newer than every input (sources, .flags, run.sh).
inputs_of() {
  local t=$1 d
  d=$(src_dir "$t")
  case "$t" in
  omp/*)
    if [ -d "$d/${t#*/}" ]; then
      find "$d/${t#*/}" -type f
    else
      ls "$d/${t#*/}".c "$d/${t#*/}".cpp 2>/dev/null
    fi
    ;;
  abi/*) echo "$d/${t#*/}.c"; ls "$d"/*.h 2>/dev/null ;;
  esac
  local fl
  fl=$(sidecar "$t" flags)
  [ -f "$fl" ] && echo "$fl"
  echo "${BASH_SOURCE[0]}"
}

up_to_date() {
  local t=$1 ok f
  ok="$(out_dir "$t")/.ok"
  [ -f "$ok" ] || return 1
  while IFS= read -r f; do
    [ "$f" -nt "$ok" ] && return 1
  done < <(inputs_of "$t")
  return 0
}

# Runs a command, logging it; fails the build on error.
logrun() {
  printf '+ %s\n' "$*" >>"$LOG"
  "$@" >>"$LOG" 2>&1
}

build_omp() {
  local t=$1 name=${1#*/} d out exe
  d=$(src_dir "$t")
  out=$(out_dir "$t")
  exe=$(exe_of "$t")
  local -a flags=()
  local fl
  fl=$(sidecar "$t" flags)
  # shellcheck disable=SC2207
  [ -f "$fl" ] && flags=($(sidecar_lines "$t" flags))
  if [ -f "$d/$name.c" ]; then
    logrun "$OMP_CC" "${OFFLOAD_FLAGS[@]}" "${OMP_CFLAGS[@]}" "${flags[@]}" "$d/$name.c" -o "$exe" || return 1
  elif [ -f "$d/$name.cpp" ]; then
    logrun "$OMP_CXX" "${OFFLOAD_FLAGS[@]}" "${OMP_CFLAGS[@]}" "${flags[@]}" "$d/$name.cpp" -o "$exe" || return 1
  else
    # directory test: dl_*.c(pp) -> dl_*.so (for dlopen, not linked),
    # so_*.c(pp) -> libso_*.so (linked, rpath $ORIGIN), the rest -> objects of the program.
    local src base linker=$OMP_CC cc
    local -a objs=() libs=()
    for src in "$d/$name"/*.c "$d/$name"/*.cpp; do
      [ -f "$src" ] || continue
      base=$(basename "$src"); base=${base%.*}
      cc=$OMP_CC
      [[ "$src" == *.cpp ]] && cc=$OMP_CXX && linker=$OMP_CXX
      case "$base" in
      dl_* | so_*) ;;
      *)
        logrun "$cc" "${OFFLOAD_FLAGS[@]}" "${OMP_CFLAGS[@]}" "${flags[@]}" -c "$src" -o "$out/$base.o" || return 1
        objs+=("$out/$base.o")
        ;;
      esac
    done
    for src in "$d/$name"/dl_*.c "$d/$name"/dl_*.cpp "$d/$name"/so_*.c "$d/$name"/so_*.cpp; do
      [ -f "$src" ] || continue
      base=$(basename "$src"); base=${base%.*}
      cc=$OMP_CC
      [[ "$src" == *.cpp ]] && cc=$OMP_CXX
      case "$base" in
      dl_*) logrun "$cc" "${OFFLOAD_FLAGS[@]}" "${OMP_CFLAGS[@]}" "${flags[@]}" -shared -fPIC "$src" -o "$out/$base.so" || return 1 ;;
      so_*)
        logrun "$cc" "${OFFLOAD_FLAGS[@]}" "${OMP_CFLAGS[@]}" "${flags[@]}" -shared -fPIC "$src" -o "$out/lib$base.so" || return 1
        libs+=("-l$base")
        ;;
      esac
    done
    [ ${#objs[@]} -gt 0 ] || { echo "no program sources in $d/$name" >>"$LOG"; return 1; }
    local -a linkextra=()
    [ ${#libs[@]} -gt 0 ] && linkextra=(-L"$out" "${libs[@]}" '-Wl,-rpath,$ORIGIN')
    logrun "$linker" "${OFFLOAD_FLAGS[@]}" "${OMP_CFLAGS[@]}" "${flags[@]}" "${objs[@]}" "${linkextra[@]}" -ldl -o "$exe" || return 1
  fi
}

build_abi() {
  local t=$1 name=${1#*/} d exe
  d=$(src_dir "$t")
  exe=$(exe_of "$t")
  local -a flags=()
  # shellcheck disable=SC2207
  flags=($(sidecar_lines "$t" flags))
  logrun "$ABI_CC" "${ABI_CFLAGS[@]}" "${flags[@]}" "$d/$name.c" -o "$exe" "${ABI_LIBS[@]}" -ldl || return 1
}

# The tiny x86-64 "device image" every ABI harness registers (argv[1]).
DEVIMG=$BUILD/abi/devimg/devimg.so
build_devimg() {
  local src=$HERE/abi/devimg/devimg.c
  mkdir -p "$(dirname "$DEVIMG")"
  if [ ! -f "$DEVIMG" ] || [ "$src" -nt "$DEVIMG" ] || [ "${BASH_SOURCE[0]}" -nt "$DEVIMG" ]; then
    LOG=$BUILD/abi/devimg/build.log
    : >"$LOG"
    if ! logrun "$ABI_CC" -std=c11 -Wall -Wextra -Werror -O1 -shared -fPIC "$src" -o "$DEVIMG"; then
      rm -f "$DEVIMG"
      echo "run.sh: building the ABI device image failed:" >&2
      sed 's/^/    /' "$LOG" >&2
    fi
  fi
}

build_one() {
  local t=$1 out
  out=$(out_dir "$t")
  up_to_date "$t" && return 0
  rm -rf "$out"
  mkdir -p "$out"
  LOG=$out/build.log
  : >"$LOG"
  case "$t" in
  omp/*) build_omp "$t" ;;
  abi/*) build_abi "$t" ;;
  esac && touch "$out/.ok"
}

build_all() {
  local t running=0
  for t in "${SEL[@]}"; do
    if [[ "$t" == abi/* ]]; then build_devimg; break; fi
  done
  for t in "${SEL[@]}"; do
    build_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
      wait -n
      running=$((running - 1))
    fi
  done
  wait
}

# ---------------------------------------------------------------- running
SHIM=$BUILD/shim
make_shim() {
  mkdir -p "$SHIM"
  ln -sfn "$(readlink -f "$LIB")" "$SHIM/libomptarget.so.22.1"
}

RUNDIR=$BUILD/run

# run_one TEST MODE -> $RUNDIR/TEST/MODE.{out,err,rc}
run_one() {
  local t=$1 mode=$2 res exe cwd
  res=$RUNDIR/$t
  mkdir -p "$res"
  exe=$(exe_of "$t")
  cwd=$(out_dir "$t")
  local -a envv=() args=()
  local line
  while IFS= read -r line; do envv+=("$line"); done < <(sidecar_lines "$t" env)
  case "$t" in
  abi/*) args=("$DEVIMG") ;;
  esac
  while IFS= read -r line; do args+=("$line"); done < <(sidecar_lines "$t" args)
  case "$mode" in
  llvm) ;;
  preload) envv+=("LD_PRELOAD=$LIB") ;;
  replace)
    rm -f "$res"/lddebug.*
    envv+=("LD_LIBRARY_PATH=$SHIM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "LD_DEBUG=files"
      "LD_DEBUG_OUTPUT=$res/lddebug")
    ;;
  queued) envv+=("LD_LIBRARY_PATH=$SHIM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "OMPTARGET_RS_HOST_QUEUES=2") ;;
  esac
  local rc
  {
    (cd "$cwd" && exec env "${envv[@]}" timeout -k 5 "$TIMEOUT" "$exe" "${args[@]}") \
      >"$res/$mode.out" 2>"$res/$mode.err" </dev/null
    rc=$?
  } 2>/dev/null
  echo "$rc" >"$res/$mode.rc"
}

PASSED=0
FAILED=0
SKIPPED=0
FAILED_LIST=()

indent() { sed 's/^/    /'; }

# stderr normalisation for .stderr-same: mask hex numbers (addresses) and end
# every line with a newline (LLVM's fatal messages end without one).
mask_stderr() { awk '{ gsub(/0x[0-9a-fA-F]+/, "0x?"); print }'; }

stderr_tail() {
  local f=$1
  [ -s "$f" ] || return 0
  echo "    --- stderr (last lines) ---"
  if [ "$VERBOSE" = 1 ]; then indent <"$f"; else tail -n 12 "$f" | cut -c1-300 | indent; fi
}

describe_rc() {
  case "$1" in
  124) echo "124 (timed out after ${TIMEOUT}s)" ;;
  134) echo "134 (SIGABRT)" ;;
  137) echo "137 (SIGKILL)" ;;
  139) echo "139 (SIGSEGV)" ;;
  *) echo "$1" ;;
  esac
}

# check_one TEST MODE -> prints PASS/FAIL line, returns 0 on pass.
# Failure details are accumulated in $DETAIL.
check_one() {
  local t=$1 mode=$2 res rc want llvm_rc reasons=() detail="" stderr_shown=0
  res=$RUNDIR/$t
  rc=$(cat "$res/$mode.rc")
  want=$(expected_exit "$t")
  local expf
  expf=$(sidecar "$t" expected)

  if [ "$mode" = llvm ]; then
    if [ "$rc" != "$want" ]; then
      reasons+=("exit status $(describe_rc "$rc"), expected $want")
    fi
    if [ "$UPDATE_EXPECTED" = 1 ] && [ "$rc" = "$want" ]; then
      if ! [ -f "$expf" ] || ! cmp -s "$expf" "$res/llvm.out"; then
        cp "$res/llvm.out" "$expf"
        echo "note: wrote ${expf#"$REPO"/}" >&2
      fi
    fi
    if [ -f "$expf" ]; then
      if ! cmp -s "$expf" "$res/llvm.out"; then
        reasons+=("stdout differs from ${expf#"$HERE"/}")
        detail+=$(diff -u --label expected --label "llvm" "$expf" "$res/llvm.out" | head -n 40 | indent)$'\n'
      fi
    else
      reasons+=("no ${expf#"$HERE"/} (create it with --update-expected)")
    fi
  else
    if [ ! -f "$res/llvm.rc" ]; then
      # llvm mode not run in this invocation: compare with the .expected file
      llvm_rc=$want
      if [ -f "$expf" ]; then cp "$expf" "$res/llvm.out"; else : >"$res/llvm.out"; fi
      echo "$want" >"$res/llvm.rc"
    fi
    llvm_rc=$(cat "$res/llvm.rc")
    if [ "$rc" != "$llvm_rc" ]; then
      reasons+=("exit status $(describe_rc "$rc"), llvm: $llvm_rc")
    elif [ "$rc" != "$want" ]; then
      reasons+=("exit status $(describe_rc "$rc"), expected $want")
    fi
    if ! cmp -s "$res/llvm.out" "$res/$mode.out"; then
      reasons+=("stdout differs from the llvm run")
      detail+=$(diff -u --label llvm --label "$mode" "$res/llvm.out" "$res/$mode.out" | head -n 40 | indent)$'\n'
    fi
    if [ "$mode" = replace ]; then
      if grep -q 'no version information available' "$res/$mode.err"; then
        reasons+=("ld.so: 'no version information available'")
      fi
      local dbg loaded
      dbg=$(cat "$res"/lddebug.* 2>/dev/null)
      if [ -z "$dbg" ]; then
        reasons+=("no LD_DEBUG output captured")
      else
        loaded=$(printf '%s\n' "$dbg" | grep -oE '(/[^ ]*)?lib(LLVM|omptarget)[^ ]*' | grep -v "^$SHIM/" |
          grep -E 'libLLVM|^/' | sort -u | head -n 5)
        if [ -n "$loaded" ]; then
          reasons+=("LLVM libraries loaded in replace mode: $(echo $loaded)")
        fi
        # (grep the files: 'printf | grep -q' can fail with SIGPIPE under pipefail)
        if ! grep -qF "$SHIM/libomptarget.so.22.1" "$res"/lddebug.*; then
          reasons+=("the shim $SHIM/libomptarget.so.22.1 was not loaded")
        fi
      fi
    fi
  fi
  # expected stderr substrings / regular expressions (every mode)
  local line
  while IFS= read -r line; do
    if ! grep -qF -- "$line" "$res/$mode.err"; then
      reasons+=("stderr lacks: $line")
    fi
  done < <(sidecar_lines "$t" stderr-contains)
  while IFS= read -r line; do
    if ! grep -qE -- "$line" "$res/$mode.err"; then
      reasons+=("stderr has no line matching: $line")
    fi
  done < <(sidecar_lines "$t" stderr-regex)
  # whole stderr equal to the llvm run's, hex numbers masked (our modes)
  if [ "$mode" != llvm ] && [ -f "$(sidecar "$t" stderr-same)" ] && [ -f "$res/llvm.err" ]; then
    if ! cmp -s <(mask_stderr <"$res/llvm.err") <(mask_stderr <"$res/$mode.err"); then
      reasons+=("stderr differs from the llvm run (hex masked)")
      stderr_shown=1
      detail+=$(diff -u --label llvm --label "$mode" <(mask_stderr <"$res/llvm.err") <(mask_stderr <"$res/$mode.err") |
        head -n 40 | indent)$'\n'
    fi
  fi

  if [ ${#reasons[@]} -eq 0 ]; then
    return 0
  fi
  DETAIL=$(
    local r
    for r in "${reasons[@]:1}"; do echo "    also: $r"; done
    [ -n "$detail" ] && printf '%s' "$detail"
    [ "$stderr_shown" = 1 ] || stderr_tail "$res/$mode.err"
  )
  REASON=${reasons[0]}
  return 1
}

report() {
  local status=$1 t=$2 mode=$3 msg=${4:-}
  case "$status" in
  PASS) PASSED=$((PASSED + 1)); echo "PASS $t [$mode]${msg:+ ($msg)}" ;;
  SKIP) SKIPPED=$((SKIPPED + 1)); echo "SKIP $t [$mode]: $msg" ;;
  FAIL)
    FAILED=$((FAILED + 1))
    FAILED_LIST+=("$t [$mode]")
    echo "FAIL $t [$mode]: $msg"
    [ -n "${DETAIL:-}" ] && printf '%s\n' "$DETAIL"
    ;;
  esac
  DETAIL=""
}

cleanup_tmpfiles() {
  [ "$KEEP_TMPFILES" = 1 ] && return 0
  # LLVM 22.1's host plugin writes every loaded image to /tmp/tmpfile_XXXXXX
  # and never removes it; remove the ones created during this run, except
  # those some live process (not ours: another program running at the same
  # time) still has open or mapped.
  local in_use f
  in_use=$( {
    cat /proc/[0-9]*/maps 2>/dev/null
    ls -l /proc/[0-9]*/fd 2>/dev/null
  } | grep -o '/tmp/tmpfile_[A-Za-z0-9]\{6\}' | sort -u)
  while IFS= read -r f; do
    [ -n "$f" ] || continue
    grep -qxF -- "$f" <<<"$in_use" || rm -f -- "$f"
  done < <(find /tmp -maxdepth 1 -type f -name 'tmpfile_??????' -user "$(id -u)" -newer "$STAMP" 2>/dev/null)
  rm -f "$STAMP"
}

# ---------------------------------------------------------------- main
ulimit -c 0
STAMP=$(mktemp "$BUILD/.stamp.XXXXXX")
trap cleanup_tmpfiles EXIT

build_all

if [ "$BUILD_ONLY" = 1 ]; then
  nfail=0
  for t in "${SEL[@]}"; do
    if [ ! -f "$(out_dir "$t")/.ok" ]; then
      echo "FAIL $t [build]"
      indent <"$(out_dir "$t")/build.log" | tail -n 30
      nfail=$((nfail + 1))
    fi
  done
  echo "built $((${#SEL[@]} - nfail)) of ${#SEL[@]}"
  [ "$nfail" -eq 0 ]
  exit
fi

needs_lib && make_shim

for t in "${SEL[@]}"; do
  rm -rf "${RUNDIR:?}/$t"
  skipf=$(sidecar "$t" skip)
  if [ -f "$skipf" ]; then
    why=$(sidecar_lines "$t" skip | head -n1)
    for mode in "${MODES[@]}"; do report SKIP "$t" "$mode" "${why:-skipped}"; done
    continue
  fi
  if [ ! -f "$(out_dir "$t")/.ok" ] || { [[ "$t" == abi/* ]] && [ ! -f "$DEVIMG" ]; }; then
    DETAIL=$(tail -n 30 "$(out_dir "$t")/build.log" 2>/dev/null | indent)
    for mode in "${MODES[@]}"; do report FAIL "$t" "$mode" "build failed"; done
    continue
  fi
  for mode in "${MODES[@]}"; do
    ok=1
    REASON=""
    for ((i = 1; i <= REPEAT; i++)); do
      run_one "$t" "$mode"
      if ! check_one "$t" "$mode"; then
        ok=0
        [ "$REPEAT" -gt 1 ] && REASON="run $i of $REPEAT: $REASON"
        break
      fi
    done
    divf=$(sidecar "$t" divergence)
    if [ "$mode" != llvm ] && [ -f "$divf" ]; then
      # a known, accepted difference from LLVM: must still differ
      oursf=$(sidecar "$t" ours)
      if [ "$ok" = 1 ]; then
        DETAIL=""
        report FAIL "$t" "$mode" "matches LLVM now but ${divf#"$HERE"/} lists a divergence: remove that file"
      elif [ -f "$oursf" ] && ! { [ "$(cat "$RUNDIR/$t/$mode.rc")" = 0 ] && cmp -s "$oursf" "$RUNDIR/$t/$mode.out"; }; then
        # A divergence with a .ours file must give exactly that stdout, exit 0
        DETAIL=$(diff -u --label "${oursf#"$HERE"/}" --label "$mode" "$oursf" "$RUNDIR/$t/$mode.out" | head -n 40 | indent)
        report FAIL "$t" "$mode" "known divergence, but not the output of ${oursf#"$HERE"/} (exit $(cat "$RUNDIR/$t/$mode.rc"))"
      elif [ -f "$oursf" ]; then
        # Its stdout is exactly what the .ours file says: a checked result.
        DETAIL=""
        report PASS "$t" "$mode" "the output of ${oursf#"$HERE"/}, a known divergence from LLVM 22.1"
      else
        DETAIL=""
        report SKIP "$t" "$mode" "known divergence ($(sidecar_lines "$t" divergence | head -n1)); now: $REASON"
      fi
    elif [ "$ok" = 1 ]; then
      report PASS "$t" "$mode"
    else
      report FAIL "$t" "$mode" "$REASON"
    fi
  done
done

if [ "$FAILED" -gt 0 ]; then
  echo "failed:"
  printf '  %s\n' "${FAILED_LIST[@]}"
fi
summary="$PASSED passed, $FAILED failed"
[ "$SKIPPED" -gt 0 ] && summary+=", $SKIPPED skipped"
echo "$summary"
[ "$FAILED" -eq 0 ]
