#!/usr/bin/env bash
# gpu-check.sh - one prepared command for a machine with an NVIDIA GPU (made
# for an H200: sm_90) that has only the NVIDIA driver (libcuda.so.1), no
# network and no toolkit or clang: it checks omptarget-rs's CUDA plugin on the
# real device and prints one table.
#
#   scripts/gpu-check.sh [--lib SO] [--images DIR] [--bench BIN] [--suite DIR] [--mock]
#
# Defaults (all built on the development machine, then carried over):
#   --lib     target/release/libomptarget_rs.so      (cargo build --release)
#   --images  target/gpu-images   (c-tests/gpu-images.sh; bin/, extra/ and kernels/ are used)
#   target/gpu-async/async_harness                  (c-tests/gpu-async/run.sh builds it)
#   --bench   target/bench-cuda/bench_cuda            (bench/cuda/build.sh)
#   --suite   target/gpu-omp/carry   (c-tests/gpu/omp-suite.sh: the sm_90 builds of
#             the GPU differential suite, its list and libomp.so.5)
#
# What runs, each under a timeout (HARNESS_TIMEOUT, default 120 s):
#   * every harness.sm_90* of gpu-images against our library in library-path
#     replacement mode (a folder with libomptarget.so.22.1 -> the library first
#     on LD_LIBRARY_PATH); harness.sm_90 also with --rustc-init. Each must
#     print "7 passed, 0 failed" and our runtime must have served it;
#   * c-tests/gpu-async/run.sh in GPU mode: the asynchronous launch path
#     (__tgt_target_kernel_async on streams, two ordered launches on one
#     handle, synchronize/destroy, the synchronous path for comparison);
#   * the benchmark with the empty-kernel cubin: launch+sync and 1 MB / 64 MB /
#     1 GB pinned and pageable H2D/D2H, raw driver vs. omptarget-rs (goals:
#     launch <= 1.10x raw time, transfers >= 0.95x raw bandwidth);
#   * the benchmark once more in --quick mode with its embedded PTX, which
#     exercises the PTX -> driver JIT path of the plugin;
#   * fatbins (target/gpu-services/fatbin: c-tests/gpu/services.sh gathers them):
#     the best cubin chosen, PTX through the driver's JIT, LZ4/zstd entries, no
#     fitting arch -> clear error; rustc's newest sequence (harness.sm_90
#     --rustc-exact; with two GPUs also the kernel on device 1, data on 0);
#   * the RPC services (target/gpu-services from c-tests/gpu/services.sh): the
#     real sm_90 image with the test client, printf/user opcode/malloc/unknown;
#   * the GPU differential suite: every c-tests/omp program clang-22 built for
#     sm_90 (with the test-only device runtime c-tests/gpu/rt), through our
#     runtime in library-path mode, stdout and exit status compared with the
#     program's host-offload .expected/.exit (LLVM's libomptarget needs the
#     150 MB libLLVM and is not carried). A program that asks for a device
#     number the machine lacks (the suite was written for the host plugin's
#     4 devices) is reported as skipped, and so is a failing program that
#     c-tests/gpu/suite.txt lists as a known difference from the host
#     plugin's output (or that has a .divergence from LLVM 22.1). With --mock they run on mock-cuda with 4 devices and
#     the programs' host images as the emulation.
# --mock runs the same table against gpu-images' mock-cuda (a CPU stand-in for
# the driver; needs DIR/mock-cuda and DIR/kernels) to test this script without
# a GPU: the header then says MOCK-CUDA and nothing in it is a GPU result.
# Output: one table, "RESULT TEST TIME DETAIL" with RESULT PASS, FAIL, MISS (a
# performance goal missed) or skipped (no GPU, or an input was not carried),
# then "N passed, N failed, N missed, N skipped". Exit status 1 if anything
# FAILed (or, with STRICT_PERF=1, MISSed). Without a GPU every test prints
# "skipped", never "passed".
#
# With the device tool of this project, from the repository root:
#   run  carry: ["target/release/libomptarget_rs.so", "target/gpu-images/bin",
#                "target/gpu-images/extra", "target/gpu-images/kernels", "target/gpu-services",
#                "target/bench-cuda", "target/gpu-async", "target/gpu-omp/carry"]
#        command: bash scripts/gpu-check.sh      timeout_s: 480
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LIB=$ROOT/target/release/libomptarget_rs.so
G=$ROOT/target/gpu-images
BENCH=$ROOT/target/bench-cuda/bench_cuda
SUITE=$ROOT/target/gpu-omp/carry
MOCK=0
while [ $# -gt 0 ]; do
  case $1 in
    --lib) LIB=$2; shift 2 ;;
    --images) G=$2; shift 2 ;;
    --bench) BENCH=$2; shift 2 ;;
    --suite) SUITE=$2; shift 2 ;;
    --mock) MOCK=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d;s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
TMO=${HARNESS_TIMEOUT:-120}

W=$(mktemp -d /tmp/omptarget-rs-gpu-check.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/shim" "$W/logs"

rows=()
np=0 nf=0 nm=0 ns=0
add() { # RESULT TEST TIME DETAIL
  rows+=("$(printf '%-7s %-44s %8s  %s' "$1" "$2" "$3" "$4")")
  case $1 in PASS) np=$((np + 1)) ;; FAIL) nf=$((nf + 1)) ;; MISS) nm=$((nm + 1)) ;; *) ns=$((ns + 1)) ;; esac
}
show_log() { sed 's/^/      | /' "$1" | tail -n 30 >&2; }

HARNESSES=()
if [ -d "$G/bin" ]; then
  for h in "$G"/bin/harness.sm_90*; do [ -x "$h" ] && HARNESSES+=("$(basename "$h")"); done
fi
[ ${#HARNESSES[@]} -gt 0 ] || HARNESSES=(harness.sm_90 harness.sm_90.cuda12 harness.sm_90.nodyn harness.sm_90.nodyn.cuda12 harness.sm_90.manual)

# ---- is there a GPU? ----------------------------------------------------------
gpu=""
libcuda=""
if [ "$MOCK" = 1 ]; then
  [ -e "$G/mock-cuda/libcuda.so.1" ] && { gpu="MOCK-CUDA (CPU stand-in, not a GPU result)"; libcuda=$G/mock-cuda/libcuda.so.1; }
else
  if command -v nvidia-smi >/dev/null 2>&1; then
    gpu=$(nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>/dev/null | head -n1)
  fi
  libcuda=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/{print $NF; exit}')
fi
if [ -z "$gpu" ] || [ -z "$libcuda" ]; then
  why="no NVIDIA GPU or driver (nvidia-smi: ${gpu:-none}, libcuda.so.1: ${libcuda:-none})"
  for h in "${HARNESSES[@]}"; do add skipped "$h" - "$why"; done
  add skipped "harness.sm_90 --rustc-init" - "$why"
  add skipped "async launches (gpu-async)" - "$why"
  add skipped "bench launch+sync, H2D/D2H" - "$why"
  add skipped "bench --quick (PTX JIT path)" - "$why"
  add skipped "GPU differential suite (c-tests/gpu)" - "$why"
  for f in multi ptx-only lz4 zstd no-arch; do add skipped "fatbin $f" - "$why"; done
  add skipped "rustc seed 000 (--rustc-exact)" - "$why"
  add skipped "rustc kernel on device 1, data on 0" - "$why"
  add skipped "RPC services (c-tests/gpu/services)" - "$why"
  echo "== omptarget-rs GPU check: skipped: $why"
  printf '%-7s %-44s %8s  %s\n' RESULT TEST TIME DETAIL
  printf '%s\n' "${rows[@]}"
  echo "$np passed, $nf failed, $nm missed, $ns skipped"
  exit 0
fi

if [ ! -f "$LIB" ]; then
  echo "gpu-check.sh: no runtime at $LIB (build it with cargo build --release and carry it)" >&2
  exit 2
fi
LIB=$(readlink -f "$LIB")
ln -s "$LIB" "$W/shim/libomptarget.so.22.1"
export LD_LIBRARY_PATH="$W/shim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset LD_PRELOAD OMP_TARGET_OFFLOAD OMP_DEFAULT_DEVICE OMPTARGET_RS_LIBCUDA MOCK_CUDA_EMU
[ "$MOCK" = 1 ] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$G/mock-cuda" BENCH_CUDA_QUICK=1
echo "== omptarget-rs GPU check: $gpu; libcuda $libcuda; runtime $LIB ($(date -u '+%Y-%m-%d %H:%M UTC'))"

# ---- harnesses ------------------------------------------------------------------
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fs", b - a }'; }
for h in "${HARNESSES[@]}"; do
  variants=("")
  [ "$h" = harness.sm_90 ] && variants+=("--rustc-init")
  for a in "${variants[@]}"; do
    name="$h${a:+ $a}"
    if [ ! -x "$G/bin/$h" ]; then add skipped "$name" - "not carried ($G/bin/$h)"; continue; fi
    log=$W/logs/$h$a.log
    t0=$(date +%s.%N)
    emu=()
    if [ "$MOCK" = 1 ]; then
      emu=(MOCK_CUDA_EMU="$G/kernels/kernels.emu.so")
      [[ $h == *nodyn* ]] && emu=(MOCK_CUDA_EMU="$G/kernels/kernels.emu.nodyn.so")
    fi
    env "${emu[@]}" LIBOMPTARGET_DEBUG=1 timeout "$TMO" "$G/bin/$h" $a >"$log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    sum=$(grep -E '^[0-9]+ passed' "$log" || echo "no summary")
    dyn=$(grep -h '^\[INFO\] many_args' "$log" | sed 's/.*saw //;s/ (.*//')
    if [ $rc -eq 124 ]; then
      add FAIL "$name" "$(secs "$t0" "$t1")" "timed out after ${TMO}s"; show_log "$log"
    elif [ $rc -ne 0 ] || ! grep -q '^7 passed, 0 failed' "$log"; then
      add FAIL "$name" "$(secs "$t0" "$t1")" "exit $rc, $sum"; show_log "$log"
    elif ! grep -q 'omptarget-rs debug: cuda: device 0: loaded sm_90' "$log"; then
      add FAIL "$name" "$(secs "$t0" "$t1")" "$sum, but omptarget-rs's CUDA plugin did not run it"; show_log "$log"
    else
      add PASS "$name" "$(secs "$t0" "$t1")" "$sum${dyn:+, $dyn}"
    fi
  done
done

# ---- fatbinaries (built by c-tests/gpu/services.d/fatbin.sh) ----------------------
# Harnesses with a CUDA fatbin as their registered image: cubins for sm_80,
# sm_86, sm_90 + sm_80 PTX (the newest cubin the GPU runs must be chosen),
# PTX only (the driver's JIT), LZ4 and Zstandard entries, and no fitting arch
# (sm_80/sm_86 cubins only: a clear error on sm_90).
# c-tests/gpu/services.sh gathers them in target/gpu-services/fatbin (one
# folder to carry with the RPC programs).
FB=${GPU_FATBIN:-$ROOT/target/gpu-services/fatbin}
[ -d "$FB" ] || FB=$G/fatbin
for f in multi ptx-only lz4 zstd no-arch; do
  h=$FB/harness.$f
  if [ ! -x "$h" ]; then add skipped "fatbin $f" - "not carried ($h; run c-tests/gpu/services.d/fatbin.sh)"; continue; fi
  log=$W/logs/fatbin-$f.log
  t0=$(date +%s.%N)
  fenv=()
  if [ "$MOCK" = 1 ]; then
    fenv=(MOCK_CUDA_EMU="$G/kernels/kernels.emu.so")
    p=$(ls "$G"/tools/ptxas-13*/ptxas 2>/dev/null | head -n1)
    [ -n "$p" ] && fenv+=(MOCK_CUDA_PTXAS="$p")
  fi
  ( env "${fenv[@]}" LIBOMPTARGET_DEBUG=1 timeout "$TMO" "$h"; exit $? ) >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  chose=$(grep -o -m1 'loading its sm_[0-9a-z]* [a-zA-Z]*' "$log")
  if [ "$f" = no-arch ]; then
    if [ $rc -ne 0 ] && grep -q 'CUDA fatbinary has no image for' "$log"; then
      add PASS "fatbin $f" "$(secs "$t0" "$t1")" "$(grep -o -m1 'CUDA fatbinary has no image for[^;]*' "$log" | cut -c1-70)"
    else add FAIL "fatbin $f" "$(secs "$t0" "$t1")" "exit $rc, no clear error"; show_log "$log"; fi
  elif [ $rc -ne 0 ] || ! grep -q '^7 passed, 0 failed' "$log"; then
    add FAIL "fatbin $f" "$(secs "$t0" "$t1")" "exit $rc, $(grep -E '^[0-9]+ passed' "$log" || echo 'no summary')"; show_log "$log"
  elif [ "$f" = ptx-only ] && [[ $chose != *PTX ]]; then
    add FAIL "fatbin $f" "$(secs "$t0" "$t1")" "7/7 but not through the PTX ($chose)"; show_log "$log"
  elif [ "$f" != ptx-only ] && [[ $chose != *cubin ]]; then
    add FAIL "fatbin $f" "$(secs "$t0" "$t1")" "7/7 but no cubin chosen ($chose)"; show_log "$log"
  else
    add PASS "fatbin $f" "$(secs "$t0" "$t1")" "7 passed, $chose"
  fi
done

# ---- rustc's newest sequence (seed 000) ---------------------------------------
# harness.sm_90 --rustc-exact: mappers on device -1, the kernel on device 0,
# Flags 1<<6, 3-D grids, DynCGroupMem, f64/f16 scalars (8 checks); with two
# GPUs, the kernel on device 1 while the data is on device 0: a clear error.
if [ -x "$G/bin/harness.sm_90" ]; then
  renv=()
  [ "$MOCK" = 1 ] && renv=(MOCK_CUDA_EMU="$G/kernels/kernels.emu.so")
  log=$W/logs/rustc-exact.log
  t0=$(date +%s.%N)
  env "${renv[@]}" timeout "$TMO" "$G/bin/harness.sm_90" --rustc-exact --kernel-device=0 --dyn-cgroup-mem=64 >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  if [ $rc -eq 0 ] && grep -q '^8 passed, 0 failed' "$log"; then add PASS "rustc seed 000 (--rustc-exact)" "$(secs "$t0" "$t1")" "8 passed"
  else add FAIL "rustc seed 000 (--rustc-exact)" "$(secs "$t0" "$t1")" "exit $rc, $(grep -E '^[0-9]+ passed' "$log" || echo 'no summary')"; show_log "$log"; fi
  ngpu=1
  if [ "$MOCK" = 1 ]; then renv+=(MOCK_CUDA_DEVICES=2); ngpu=2
  elif command -v nvidia-smi >/dev/null 2>&1; then ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU'); fi
  if [ "${ngpu:-1}" -ge 2 ]; then
    log=$W/logs/rustc-other.log
    t0=$(date +%s.%N)
    # A subshell: the shell's "Aborted" notice of the expected abort lands in the log.
    ( env "${renv[@]}" timeout "$TMO" "$G/bin/harness.sm_90" --rustc-exact --kernel-device=1; exit $? ) >"$log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    if [ $rc -ne 0 ] && grep -q 'is mapped on device 0, where the data mappers put it, but the kernel runs on device 1' "$log"; then
      add PASS "rustc kernel on device 1, data on 0" "$(secs "$t0" "$t1")" "clear error naming argument and devices"
    else add FAIL "rustc kernel on device 1, data on 0" "$(secs "$t0" "$t1")" "exit $rc, no clear error"; show_log "$log"; fi
  else add skipped "rustc kernel on device 1, data on 0" - "one GPU only"; fi
else
  add skipped "rustc seed 000 (--rustc-exact)" - "not carried ($G/bin/harness.sm_90)"
fi

# ---- asynchronous path (c-tests/gpu-async) ----------------------------------------
# __tgt_async_info_create / __tgt_target_kernel_async / _synchronize / _destroy
# through our runtime: queued launches on streams, ordering, completion.
if [ -e "$G/kernels/kernels.sm_90.cubin" ] && [ -f "$ROOT/c-tests/gpu-async/run.sh" ]; then
  log=$W/logs/gpu-async.log
  t0=$(date +%s.%N)
  mode=gpu
  [ "$MOCK" = 1 ] && mode=stand-in
  GPU_ASYNC_MODE=$mode OMPTARGET_RS_LIB="$LIB" timeout "$TMO" bash "$ROOT/c-tests/gpu-async/run.sh" "$G" >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  sum=$(grep -E '^[0-9]+ passed' "$log" | tail -n1)
  if [ $rc -eq 0 ] && [ -n "$sum" ]; then
    add PASS "async launches (gpu-async)" "$(secs "$t0" "$t1")" "$sum"
  else
    add FAIL "async launches (gpu-async)" "$(secs "$t0" "$t1")" "exit $rc, ${sum:-no summary}"; show_log "$log"
  fi
else
  add skipped "async launches (gpu-async)" - "not carried ($G/kernels/kernels.sm_90.cubin, c-tests/gpu-async)"
fi

# ---- benchmark ------------------------------------------------------------------
bench_rows() { # LOG PREFIX: one table row per measurement line
  while IFS= read -r line; do
    case $line in
      *" ratio "*" goal "*)
        test=$(echo "$line" | sed -E 's/ +raw .*//')
        detail=$(echo "$line" | sed -E 's/^.* raw +/raw /;s/ +(OK|MISS)$//;s/  +/ /g')
        if [[ $line == *" OK" ]]; then add PASS "$2 $test" - "$detail"; else add MISS "$2 $test" - "$detail"; fi
        ;;
    esac
  done < "$1"
}
if [ -x "$BENCH" ] && [ -e "$G/extra/empty.sm_90.cubin" ]; then
  log=$W/logs/bench.log
  t0=$(date +%s.%N)
  timeout 300 "$BENCH" --image "$G/extra/empty.sm_90.cubin" >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  if [ $rc -eq 0 ]; then
    add PASS "bench (cubin): ran" "$(secs "$t0" "$t1")" "$(head -n1 "$log")"
    bench_rows "$log" bench
  else
    add FAIL "bench (cubin)" "$(secs "$t0" "$t1")" "exit $rc"; show_log "$log"
  fi
else
  add skipped "bench (cubin)" - "not carried ($BENCH, $G/extra/empty.sm_90.cubin)"
fi
if [ "$MOCK" = 1 ]; then
  add skipped "bench --quick (PTX JIT path)" - "mock-cuda has no PTX JIT"
elif [ -x "$BENCH" ]; then
  log=$W/logs/bench-ptx.log
  t0=$(date +%s.%N)
  timeout 120 "$BENCH" --quick >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  if [ $rc -eq 0 ] && grep -q '^launch+sync' "$log"; then
    add PASS "bench --quick (PTX JIT path)" "$(secs "$t0" "$t1")" "$(grep '^launch+sync' "$log" | sed -E 's/^launch\+sync \(empty kernel\) +//;s/  +/ /g')"
  else
    add FAIL "bench --quick (PTX JIT path)" "$(secs "$t0" "$t1")" "exit $rc"; show_log "$log"
  fi
else
  add skipped "bench --quick (PTX JIT path)" - "not carried ($BENCH)"
fi

# ---- GPU differential suite (c-tests/gpu/omp-suite.sh) --------------------------
lines() { [ -f "$1" ] && grep -v '^[[:space:]]*#' "$1" | grep -v '^[[:space:]]*$' || true; }
if [ -f "$SUITE/programs.txt" ]; then
  # The programs need libomp.so.5; the carried copy only where the machine has none.
  if ! ldconfig -p 2>/dev/null | grep 'libomp\.so\.5 ' >/dev/null && [ -f "$SUITE/libomp.so.5" ]; then
    ln -sf "$(readlink -f "$SUITE/libomp.so.5")" "$W/shim/libomp.so.5"
  fi
  while read -r n src; do
    [ -n "$n" ] || continue
    exe=$SUITE/$n.sm_90
    if [ ! -x "$exe" ]; then add skipped "omp/$n" - "not carried ($exe)"; continue; fi
    sd=$(dirname "$ROOT/$src"); base=${src##*/}; base=${base%.*}
    envs=()
    while IFS= read -r l; do envs+=("$l"); done < <(lines "$sd/$base.env")
    want=0; [ -f "$sd/$base.exit" ] && want=$(lines "$sd/$base.exit" | head -n1)
    if [ "$MOCK" = 1 ]; then
      emu=$ROOT/target/gpu-omp/$n/$n.x86.img.so
      [ -f "$emu" ] || { add skipped "omp/$n" - "no host image $emu for mock-cuda"; continue; }
      envs+=(MOCK_CUDA_EMU="$emu" MOCK_CUDA_DEVICES=4)
    fi
    log=$W/logs/omp.$n
    mkdir -p "$log.d"
    t0=$(date +%s.%N)
    (cd "$log.d" && env "${envs[@]}" timeout "${SUITE_TIMEOUT:-60}" "$exe" >"$log.out" 2>"$log.err") 2>/dev/null
    rc=$?
    t1=$(date +%s.%N)
    why=""
    [ "$rc" = "$want" ] || why="exit $rc, want $want"
    if [ -f "$sd/$base.expected" ] && ! cmp -s "$sd/$base.expected" "$log.out"; then why="${why:+$why; }stdout differs from $base.expected"; fi
    while IFS= read -r l; do grep -qF -- "$l" "$log.err" || why="${why:+$why; }stderr lacks '$l'"; done < <(lines "$sd/$base.stderr-contains")
    # A known difference from the host plugin's .expected (c-tests/gpu/suite.txt, norun).
    known=$(awk -v p="$n" '!/^#/ && NF >= 3 && $1 == p && ($2 == "sm_90" || $2 == "*") && $3 == "norun" {
      $1 = $2 = $3 = ""; sub(/^ +/, ""); print "known difference (c-tests/gpu/suite.txt): " $0; exit }' "$ROOT/c-tests/gpu/suite.txt" 2>/dev/null)
    [ -z "$known" ] && [ -f "$sd/$base.divergence" ] && known="known divergence from LLVM 22.1 ($base.divergence): $(lines "$sd/$base.divergence" | head -n1)"
    if [ -z "$why" ]; then
      add PASS "omp/$n" "$(secs "$t0" "$t1")" "exit $rc, output = .expected"
    elif [ -n "$known" ]; then
      add skipped "omp/$n" "$(secs "$t0" "$t1")" "$known"
    elif d=$(grep -o -m1 "device number '[0-9]*' out of range, only [0-9]* devices available" "$log.err"); then
      add skipped "omp/$n" "$(secs "$t0" "$t1")" "needs more devices than this machine has ($d)"
    else
      add FAIL "omp/$n" "$(secs "$t0" "$t1")" "$why"
      { diff "$sd/$base.expected" "$log.out" | head -n 10; tail -n 10 "$log.err"; } > "$log.show" 2>/dev/null; show_log "$log.show"
    fi
  done < "$SUITE/programs.txt"
else
  add skipped "GPU differential suite (c-tests/gpu)" - "not carried ($SUITE/programs.txt; run c-tests/gpu/omp-suite.sh)"
fi

# ---- RPC services (c-tests/gpu/services.sh builds target/gpu-services) -------------
# The real sm_90 image with our test client: printf from 4x8 threads, a user
# opcode through olPlatformRegisterRPCCallback, malloc/free, an unknown opcode.
RS=${GPU_SERVICES:-$ROOT/target/gpu-services}
if [ -x "$RS/rpc_host" ] && [ -e "$RS/rpc.sm_90.cubin" ]; then
  ln -sf "$LIB" "$W/shim/libLLVMOffload.so.23.0git"
  for m in hello user heap unknown; do
    log=$W/logs/rpc.$m
    t0=$(date +%s.%N)
    timeout "$TMO" "$RS/rpc_host" "$RS/rpc.sm_90.cubin" "$m" >"$log.out" 2>"$log.err"
    rc=$?
    t1=$(date +%s.%N)
    case $m in
      hello) good=$([ "$(grep -c '^hello team' "$log.out")" = 32 ] && echo 1) ;;
      user) good=$(grep -q 'answers ok: 32 of 32' "$log.out" && echo 1) ;;
      heap) good=$(grep -q 'round trips ok: 32 of 32' "$log.out" && echo 1) ;;
      unknown) good=$(grep -q 'unhandled or invalid RPC opcode' "$log.err" && echo 1) ;;
    esac
    if [ $rc = 0 ] && [ "${good:-}" = 1 ]; then add PASS "rpc $m (services, sm_90)" "$(secs "$t0" "$t1")" ""
    else add FAIL "rpc $m (services, sm_90)" "$(secs "$t0" "$t1")" "exit $rc"; cat "$log.out" "$log.err" > "$log.show"; show_log "$log.show"; fi
  done
else
  add skipped "RPC services (c-tests/gpu/services)" - "not carried ($RS/rpc_host; run c-tests/gpu/services.sh)"
fi

printf '%-7s %-44s %8s  %s\n' RESULT TEST TIME DETAIL
printf '%s\n' "${rows[@]}"
echo "$np passed, $nf failed, $nm missed, $ns skipped"
[ "$nf" = 0 ] || exit 1
[ "${STRICT_PERF:-0}" = 1 ] && [ "$nm" != 0 ] && exit 1
exit 0
