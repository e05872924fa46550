#!/usr/bin/env bash
# omp-suite.sh [options] [FILTER...] - the GPU differential suite: the
# programs of c-tests/omp, compiled by clang-22 for sm_90 and gfx90a without
# LLVM's DeviceRTL (ordinary target regions link our test-only device runtime
# c-tests/gpu/rt/omprt.c), each image checked, then run through our CUDA and
# AMDGPU plugins on the CPU stand-ins (mock-cuda, mock-hsa) and compared with
# the program's host-offload .expected / .exit / .stderr-contains.
#
# How a stand-in runs clang's GPU kernels: the same program is also built for
# the x86-64 host-offload target; clang gives its kernels and globals the same
# names as in the GPU image (__omp_offloading_<dev>_<file>_<fn>_l<line>). Its
# host image (a shared object) is handed to the stand-in as the emulation
# library (MOCK_CUDA_EMU / MOCK_HSA_EMU, no ok_emu_ids): the plugin loads the
# real cubin / code object, reads its kernel environments and globals and
# launches the kernel with the GPU launch ABI (parameter buffer, kernarg
# segment); the stand-in then calls the host kernel of that name once with
# the same 8-byte argument slots, and it runs its teams and threads on
# libomp. Device memory is host memory, so what is checked is the plugin's
# whole path (image, environments, globals, argument layout, grid, copies),
# not the GPU code itself (that needs scripts/gpu-check.sh on a GPU).
#
# c-tests/gpu/suite.txt lists the programs that are not expected to build or
# to run, with the reason (see there); a program with a .divergence (a known
# difference of ours from LLVM 22.1's .expected) is treated as "norun".
# Everything else must pass.
#
# Options:
#   --build-only        build and check the images, do not run
#   --targets LIST      sm_90,gfx90a (default both)
#   --out DIR           build folder (default target/gpu-omp)
#   --lib PATH          our runtime (default $OMPTARGET_RS_LIB or target/release/libomptarget_rs.so)
#   --list              print the status table of suite.txt and exit
#   -j N                parallel builds (default 2)
#   -v                  show logs of failures in full
#   FILTER              only programs whose name contains FILTER
# Output: one line per program and step, a table, then
# "N passed, N failed, N skipped"; exit 1 if anything failed.
set -u -o pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OMP=$ROOT/c-tests/omp
OUT=$ROOT/target/gpu-omp
G=${GPU_IMAGES_DIR:-$ROOT/target/gpu-images}
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
TARGETS=(sm_90 gfx90a)
BUILD_ONLY=0 JOBS=${JOBS:-2} VERBOSE=0 LIST=0 FILTERS=()
TIMEOUT=${TIMEOUT:-60}
while [ $# -gt 0 ]; do
  case $1 in
  --build-only) BUILD_ONLY=1 ;;
  --targets) IFS=, read -r -a TARGETS <<<"$2"; shift ;;
  --out) OUT=$2; shift ;;
  --lib) LIB=$2; shift ;;
  --list) LIST=1 ;;
  -j) JOBS=$2; shift ;;
  -v) VERBOSE=1 ;;
  -h | --help) sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
  -*) echo "omp-suite: unknown option $1" >&2; exit 2 ;;
  *) FILTERS+=("$1") ;;
  esac
  shift
done
SUITE=$HERE/suite.txt
# suite.txt: "<program> <target|*> <nobuild|norun|skiprun> <reason...>"
expect() { # program target -> "nobuild reason" / "norun reason" / ""
  awk -v p="$1" -v t="$2" '!/^#/ && NF >= 3 && $1 == p && ($2 == t || $2 == "*") {
    r = $3; $1 = $2 = $3 = ""; sub(/^ +/, ""); print r " " $0; exit }' "$SUITE"
}
if [ "$LIST" = 1 ]; then grep -v '^#' "$SUITE" | grep .; exit 0; fi

export PATH=$LLVM_BIN:$PATH
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
# ptxas/nvlink (wheel) and the stand-ins come from c-tests/gpu-images.sh.
bash "$ROOT/c-tests/gpu-images.sh" "$G" >/dev/null || { echo "omp-suite: c-tests/gpu-images.sh failed" >&2; exit 1; }
bash "$ROOT/c-tests/amdgpu-images.sh" "$G" >/dev/null || { echo "omp-suite: c-tests/amdgpu-images.sh failed" >&2; exit 1; }
PTXAS_DIR=$(dirname "$(ls "$G"/tools/ptxas-13*/ptxas | head -n1)")
[ -x "$PTXAS_DIR/nvlink" ] || { echo "omp-suite: no nvlink beside $PTXAS_DIR/ptxas" >&2; exit 1; }

# ------------------------------------------------------- device runtime ----
RT=$OUT/rt
mkdir -p "$RT"
RTC=(-fopenmp -fopenmp-cuda-mode --offload-device-only -nogpulib -O2 -Wall -Werror -Wno-incompatible-library-redeclaration)
if [ ! -e "$RT/omprt-sm_90.o" ] || [ -n "$(find "$HERE/rt" -newer "$RT/omprt-sm_90.o" -type f | head -n1)" ]; then
  PATH=$PTXAS_DIR:$PATH clang "${RTC[@]}" --offload-arch=sm_90 --cuda-feature=+ptx80 -c "$HERE/rt/omprt.c" -o "$RT/omprt-sm_90.o" || exit 1
  clang "${RTC[@]}" --offload-arch=gfx90a -emit-llvm -c "$HERE/rt/omprt.c" -o "$RT/omprt-gfx90a.bc" || exit 1
  clang -O1 -Wall -Werror "$HERE/rt/test/sched_test.c" -o "$RT/sched_test" || exit 1
fi

# ------------------------------------------------------------- programs ----
PROGS=()
declare -A SRC=()
# Single-file programs, and directory programs whose files are all linked
# into the executable (no dl_*/so_* offloading libraries: a stand-in takes one
# host image per process).
for f in "$OMP"/*.c "$OMP"/*.cpp "$OMP"/*/ "$HERE"/programs/*.c; do
  f=${f%/}
  [ -e "$f" ] || continue
  if [ -d "$f" ]; then ls "$f" | grep -qE '^(dl|so)_' && continue; fi
  n=$(basename "$f"); n=${n%.*}
  if [ ${#FILTERS[@]} -gt 0 ]; then
    m=0; for x in "${FILTERS[@]}"; do [[ $n == *$x* ]] && m=1; done
    [ $m = 1 ] || continue
  fi
  PROGS+=("$n"); SRC[$n]=$f
done
# sidecar NAME EXT: the program's .expected/.exit/... beside its source.
sidecar() { base_of "${SRC[$1]}" | sed "s/\$/.$2/"; }
base_of() { if [ -d "$1" ]; then echo "$1"; else echo "${1%.*}"; fi; }
lines() { [ -f "$1" ] && grep -v '^[[:space:]]*#' "$1" | grep -v '^[[:space:]]*$' || true; }

# build_one NAME VARIANT: x86 (host-offload, the stand-ins' emulation image),
# sm_90 or gfx90a. Leaves $OUT/NAME/NAME.VARIANT (+ .img.*) or a build log.
build_one() {
  local n=$1 v=$2 s=$3 d exe cc flags=()
  d=$OUT/$n; exe=$d/$n.$v
  local b; b=$(base_of "$s")
  local srcs=("$s")
  [ -d "$s" ] && srcs=($(ls "$s"/*.c "$s"/*.cpp 2>/dev/null))
  mkdir -p "$d"
  local stamp=$d/.ok.$v
  if [ -e "$stamp" ] && [ "$(cat "$stamp")" = "$RECIPE" ] && [ -z "$(find "${srcs[@]}" -newer "$stamp")" ] &&
     [ "$stamp" -nt "$RT/omprt-sm_90.o" ] && { [ ! -f "$b.flags" ] || [ "$stamp" -nt "$b.flags" ]; }; then return 0; fi
  rm -f "$stamp" "$d/fail.$v"
  cc=clang; [[ " ${srcs[*]}" == *.cpp* ]] && cc=clang++
  read -r -a flags <<<"$(lines "$b.flags" | tr '\n' ' ')"
  local common=(-O2 -gline-tables-only -Wno-unknown-pragmas -Wno-pass-failed "${flags[@]}")
  case $v in
  x86) "$cc" -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu "${common[@]}" "${srcs[@]}" -o "$exe" -ldl ;;
  sm_90) PATH=$PTXAS_DIR:$PATH "$cc" -fopenmp --offload-arch=sm_90 -nogpulib --cuda-feature=+ptx80 \
           -Xoffload-linker "$RT/omprt-sm_90.o" "${common[@]}" "${srcs[@]}" -o "$exe" -ldl ;;
  gfx90a) "$cc" -fopenmp --offload-arch=gfx90a -nogpulib -Xoffload-linker "$RT/omprt-gfx90a.bc" \
            "${common[@]}" "${srcs[@]}" -o "$exe" -ldl ;;
  esac >"$d/build.$v.log" 2>&1 || { touch "$d/fail.$v"; return 0; }
  # The device image (raw cubin / code object / x86-64 shared object).
  llvm-objcopy --dump-section .llvm.offloading="$d/$v.offbin" "$exe" /dev/null 2>>"$d/build.$v.log" &&
    local ext=so && case $v in sm_90) ext=cubin ;; gfx90a) ext=hsaco ;; esac &&
    llvm-offload-binary "$d/$v.offbin" --image=file="$d/$n.$v.img.$ext" >>"$d/build.$v.log" 2>&1 ||
    { echo "no device image" >>"$d/build.$v.log"; touch "$d/fail.$v"; return 0; }
  # Entry names (kernels and globals) the host side registers.
  llvm-objcopy --dump-section .llvm.rodata.offloading="$d/$v.names" "$exe" /dev/null 2>/dev/null || : >"$d/$v.names"
  echo "$RECIPE" >"$stamp"
}
export -f build_one lines base_of
# Change RECIPE when build_one changes: every program is rebuilt.
RECIPE="1 -O2 -gline-tables-only"
export OUT OMP HERE RT PTXAS_DIR PATH RECIPE

VARIANTS=(x86 "${TARGETS[@]}")
{ for n in "${PROGS[@]}"; do for v in "${VARIANTS[@]}"; do printf '%s\0%s\0%s\0' "$n" "$v" "${SRC[$n]}"; done; done; } |
  xargs -0 -P "$JOBS" -n 3 bash -c 'build_one "$0" "$1" "$2"'

# check_image NAME TARGET: every registered entry is in the image; kernels
# have their kernel environment; the code object has no undefined symbols.
check_image() {
  local n=$1 v=$2 d=$OUT/$1 img syms k=0 e=0 b=0 g=0 bad=""
  img=$(ls "$d/$n.$v".img.* 2>/dev/null | head -n1)
  case $v in
  sm_90) syms=$(llvm-readelf -s "$img") ;;
  *) syms=$(llvm-readelf --dyn-syms "$img") ;;
  esac
  local und
  # Columns: Num Value Size Type Bind Vis [<other: ..>] Ndx Name
  syms=$(awk '$1 ~ /^[0-9]+:$/ && NF >= 8 {print $4, $(NF-1), $NF}' <<<"$syms")
  und=$(awk '$2 == "UND" && $3 != ".nv.reservedSmem.offset0" {print $3}' <<<"$syms" | sort -u | tr '\n' ' ')
  [ -n "$und" ] && bad="undefined: $und"
  while IFS= read -r name; do
    case $name in "" | .*) continue ;; esac # .requires: the requires-flags entry
    local type
    type=$(awk -v s="$name" '$3 == s && $2 != "UND" {print $1; exit}' <<<"$syms")
    case $type in
    FUNC)
      k=$((k + 1))
      # ompx_bare kernels have no kernel environment (the plugin launches
      # them with exactly num_teams x thread_limit).
      if awk -v s="${name}_kernel_environment" '$3 == s && $2 != "UND" {f=1} END {exit !f}' <<<"$syms"; then e=$((e + 1))
      else b=$((b + 1)); fi ;;
    OBJECT) g=$((g + 1)) ;;
    *) bad="$bad missing $name" ;;
    esac
  done < <(tr '\0' '\n' <"$d/$v.names")
  if [ "$b" -gt 0 ] && ! grep -rq ompx_bare "${SRC[$n]}"; then bad="$bad $b kernel(s) without a kernel environment"; fi
  echo "kernels=$k (kernel environments $e, bare $b) globals=$g $(stat -c %s "$img")B${bad:+ BAD:$bad}"
  [ -z "$bad" ]
}

# ----------------------------------------------------------------- runs ----
SHIM=$OUT/shim
if [ "$BUILD_ONLY" = 0 ]; then
  [ -e "$LIB" ] || { echo "omp-suite: $LIB missing (cargo build --release)" >&2; exit 1; }
  mkdir -p "$SHIM"
  ln -sf "$(readlink -f "$LIB")" "$SHIM/libomptarget.so.22.1"
fi
MOCKCUDA=$G/mock-cuda
MOCKHSA=$G/amdgpu/mock-hsa

# run_one NAME TARGET: run through our plugin on the stand-in, compare.
run_one() {
  local n=$1 v=$2 d=$OUT/$1 exe rc want=0 envs=() emu
  exe=$d/$n.$v
  emu=$(ls "$d/$n.x86".img.* 2>/dev/null | head -n1)
  [ -n "$emu" ] || { echo "no x86 host image for the stand-in"; return 1; }
  while IFS= read -r l; do envs+=("$l"); done < <(lines "$(sidecar "$n" env)")
  [ -f "$(sidecar "$n" exit)" ] && want=$(lines "$(sidecar "$n" exit)" | head -n1)
  local ld
  case $v in
  sm_90) ld=$SHIM:$MOCKCUDA; envs+=(MOCK_CUDA_EMU="$emu" MOCK_CUDA_DEVICES=4) ;;
  gfx90a) ld=$SHIM:$MOCKHSA; envs+=(MOCK_HSA_EMU="$emu" MOCK_HSA_GPUS=4) ;;
  esac
  (cd "$d" && env LD_LIBRARY_PATH="$ld" OMP_NUM_THREADS=4 "${envs[@]}" timeout "$TIMEOUT" "$exe" \
     >"$d/run.$v.out" 2>"$d/run.$v.err") 2>/dev/null # (no "Aborted" job notices)
  rc=$?
  local why=""
  [ "$rc" = "$want" ] || why="exit $rc, want $want"
  local exp; exp=$(sidecar "$n" expected)
  if [ -f "$exp" ] && ! cmp -s "$exp" "$d/run.$v.out"; then why="${why:+$why; }stdout differs"; fi
  while IFS= read -r l; do grep -qF -- "$l" "$d/run.$v.err" || why="${why:+$why; }stderr lacks '$l'"; done < <(lines "$(sidecar "$n" stderr-contains)")
  while IFS= read -r l; do grep -qE -- "$l" "$d/run.$v.err" || why="${why:+$why; }stderr does not match '$l'"; done < <(lines "$(sidecar "$n" stderr-regex)")
  if grep -q "WARNING" "$d/run.$v.err"; then why="${why:+$why; }stand-in warning"; fi
  # Proof that the GPU path served the kernels: the stand-in saw a launch.
  if [ -z "$why" ]; then echo "exit $rc, output = .expected"; return 0; fi
  echo "$why"
  return 1
}

PLUGIN_sm_90=cuda PLUGIN_gfx90a=amdgpu
np=0 nf=0 ns=0
FAILS=()
# The device runtime's schedule arithmetic, on the host.
if msg=$("$RT/sched_test" 2>&1 | tail -n1) && [[ $msg == *" 0 failed"* || $msg == *"passed"* ]]; then
  echo "PASS  rt/test/sched_test: $msg"; np=$((np + 1))
else
  echo "FAIL  rt/test/sched_test: $msg"; nf=$((nf + 1)); FAILS+=("rt/test/sched_test")
fi

# What scripts/gpu-check.sh runs on a GPU: the sm_90 builds, their list
# ("name source-relative-to-the-repository") and the host OpenMP runtime.
CARRY=$OUT/carry
if [[ " ${TARGETS[*]} " == *" sm_90 "* ]] && [ ${#FILTERS[@]} = 0 ]; then # only for the whole suite
  rm -rf "$CARRY"; mkdir -p "$CARRY"
  for n in "${PROGS[@]}"; do
    [ -e "$OUT/$n/$n.sm_90" ] && [ ! -e "$OUT/$n/fail.sm_90" ] || continue
    ln "$OUT/$n/$n.sm_90" "$CARRY/$n.sm_90" 2>/dev/null || cp "$OUT/$n/$n.sm_90" "$CARRY/"
    echo "$n ${SRC[$n]#$ROOT/}" >>"$CARRY/programs.txt"
  done
  libomp=$(ldconfig -p | awk '/libomp\.so\.5 .*x86-64/{print $NF; exit}')
  [ -n "$libomp" ] && cp -L "$libomp" "$CARRY/libomp.so.5"
fi
TABLE=()
for n in "${PROGS[@]}"; do
  row="$n"
  for v in "${TARGETS[@]}"; do
    d=$OUT/$n
    ex=$(expect "$n" "$v"); exk=${ex%% *}; exr=${ex#* }
    # A known divergence of ours from LLVM 22.1 (whose output is the .expected).
    if [ -z "$exk" ] && [ -f "$(sidecar "$n" divergence)" ]; then
      exk=norun; exr="known divergence: $(lines "$(sidecar "$n" divergence)" | head -n1)"
    fi
    plugin=PLUGIN_$v; plugin=${!plugin}
    # build
    if [ -e "$d/fail.$v" ] || [ -e "$d/fail.x86" ]; then
      if [ "$exk" = nobuild ]; then
        echo "SKIP  $n [$v build]: does not build: $exr"; ns=$((ns + 1)); row="$row|no build|-"; continue
      fi
      local_log=$d/build.$v.log; [ -e "$d/fail.x86" ] && local_log=$d/build.x86.log
      echo "FAIL  $n [$v build]: $(grep -m1 -E 'error' "$local_log" || tail -n1 "$local_log")"
      [ "$VERBOSE" = 1 ] && sed 's/^/      | /' "$local_log"
      nf=$((nf + 1)); FAILS+=("$n [$v build]"); row="$row|FAIL|-"; continue
    fi
    if [ "$exk" = nobuild ]; then
      echo "FAIL  $n [$v build]: builds now, but suite.txt says it does not ($exr): update suite.txt"
      nf=$((nf + 1)); FAILS+=("$n [$v build]"); row="$row|FAIL|-"; continue
    fi
    if msg=$(check_image "$n" "$v"); then
      echo "PASS  $n [$v image]: $msg"; np=$((np + 1)); cell="built"
    else
      echo "FAIL  $n [$v image]: $msg"; nf=$((nf + 1)); FAILS+=("$n [$v image]"); row="$row|BAD IMAGE|-"; continue
    fi
    # run
    if [ "$BUILD_ONLY" = 1 ]; then row="$row|$cell|-"; continue; fi
    if [ "$exk" = skiprun ]; then
      echo "SKIP  $n [$v $plugin]: not run: $exr"; ns=$((ns + 1)); row="$row|$cell|skip"; continue
    fi
    if msg=$(run_one "$n" "$v"); then
      if [ "$exk" = norun ]; then
        echo "FAIL  $n [$v $plugin]: passes now, but suite.txt says it does not ($exr): update suite.txt"
        nf=$((nf + 1)); FAILS+=("$n [$v $plugin]"); row="$row|$cell|FAIL"
      else
        echo "PASS  $n [$v $plugin]: $msg"; np=$((np + 1)); row="$row|$cell|PASS"
      fi
    elif [ "$exk" = norun ]; then
      echo "SKIP  $n [$v $plugin]: $exr"; ns=$((ns + 1)); row="$row|$cell|skip"
    else
      echo "FAIL  $n [$v $plugin]: $msg"
      { if [ "$VERBOSE" = 1 ]; then diff "$(sidecar "$n" expected)" "$d/run.$v.out"; cat "$d/run.$v.err"; else
          diff "$(sidecar "$n" expected)" "$d/run.$v.out" | head -n 8; tail -n 5 "$d/run.$v.err"; fi; } 2>/dev/null | sed 's/^/      | /'
      nf=$((nf + 1)); FAILS+=("$n [$v $plugin]"); row="$row|$cell|FAIL"
    fi
  done
  TABLE+=("$row")
done
echo
hdr="program"; for v in "${TARGETS[@]}"; do p=PLUGIN_$v; hdr="$hdr|$v|${!p} stand-in"; done
{ echo "$hdr"; printf '%s\n' "${TABLE[@]}"; } | column -t -s '|'
[ ${#FAILS[@]} -gt 0 ] && { echo; echo "failed:"; printf '  %s\n' "${FAILS[@]}"; }
echo "$np passed, $nf failed, $ns skipped"
[ "$nf" = 0 ]
