#!/usr/bin/env bash
# gpu-images.sh [OUTDIR] - builds the GPU test images the CUDA tests use
# (tests/cuda_*.rs, c-tests/cuda-mock.sh, scripts/gpu-check.sh) into OUTDIR
# (default target/gpu-images), without a GPU:
#
#   1. c-tests/gpu/images/build.sh OUTDIR: sm_90 cubins (ptxas 13 = ELF ABI v2,
#      ptxas 12.9 = v1) and PTX of five test kernels, the harness.sm_90*
#      binaries, and mock-cuda (a CPU stand-in for libcuda.so.1). Needs
#      clang-22/lld-22/llvm-22 and, the first time, PyPI (two ~40 MB wheels
#      with ptxas, kept in $OMPTARGET_RS_WHEELS, default
#      ~/.cache/omptarget-rs/wheels, so other checkouts reuse them). Skipped
#      when OUTDIR already holds its outputs, newer than every source.
#   2. OUTDIR/extra: c-tests/cuda/*.ptx assembled with both ptxas versions
#      (<name>.sm_90.cubin, <name>.sm_90.cuda12.cubin) plus the PTX itself:
#      kernels with OpenMP kernel environments, and the benchmark's empty kernel.
#
# The sources are ours, in c-tests/gpu/images ($GPU_IMAGES_SRC overrides it).
# FORCE=1 rebuilds step 1.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:-$ROOT/target/gpu-images}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

SRC=${GPU_IMAGES_SRC:-$ROOT/c-tests/gpu/images}
[ -x "$SRC/build.sh" ] || { echo "gpu-images: no build.sh in $SRC" >&2; exit 1; }
SRC=$(cd "$SRC" && pwd)
export WHEEL_DIR=${OMPTARGET_RS_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/omptarget-rs/wheels}
# Wheels an older checkout downloaded into its OUTDIR are reused too.
export WHEEL_SEARCH="$OUT/wheels ${WHEEL_SEARCH:-}"

outputs=(bin/harness.sm_90 bin/harness.sm_90.cuda12 bin/harness.sm_90.nodyn bin/harness.sm_90.manual
         kernels/kernels.sm_90.cubin kernels/kernels.sm_90.cuda12.cubin kernels/kernels.sm_90.ptx
         kernels/kernels.emu.so kernels/kernels.emu.nodyn.so mock-cuda/libcuda.so.1)
have_all() { for f in "${outputs[@]}"; do [ -e "$OUT/$f" ] || return 1; done; }
# Up to date: every output exists and the stamp is newer than every source.
fresh() { have_all && [ -e "$OUT/.stamp" ] && [ -z "$(find "$SRC" -newer "$OUT/.stamp" -type f | head -n1)" ]; }
if [ "${FORCE:-0}" = 1 ] || ! fresh; then
  echo "gpu-images: building $SRC into $OUT"
  rm -f "$OUT/.stamp"
  bash "$SRC/build.sh" "$OUT"
  have_all || { echo "gpu-images: build.sh did not produce every expected output" >&2; exit 1; }
  touch "$OUT/.stamp"
else
  echo "gpu-images: $OUT is up to date"
fi

# Step 2: our own fixtures, with the ptxas build.sh extracted.
E=$OUT/extra
mkdir -p "$E"
ptxas13=$(ls "$OUT"/tools/ptxas-13*/ptxas 2>/dev/null | head -n1 || true)
ptxas12=$(ls "$OUT"/tools/ptxas-12*/ptxas 2>/dev/null | head -n1 || true)
[ -n "$ptxas13" ] || { echo "gpu-images: no ptxas under $OUT/tools" >&2; exit 1; }
for ptx in "$ROOT"/c-tests/cuda/*.ptx; do
  name=$(basename "$ptx" .ptx)
  cp "$ptx" "$E/$name.sm_90.ptx"
  if [ ! -e "$E/$name.sm_90.cubin" ] || [ "$ptx" -nt "$E/$name.sm_90.cubin" ]; then
    "$ptxas13" -arch=sm_90 -O3 "$ptx" -o "$E/$name.sm_90.cubin"
  fi
  if [ -n "$ptxas12" ] && { [ ! -e "$E/$name.sm_90.cuda12.cubin" ] || [ "$ptx" -nt "$E/$name.sm_90.cuda12.cubin" ]; }; then
    "$ptxas12" -arch=sm_90 -O3 "$ptx" -o "$E/$name.sm_90.cuda12.cubin"
  fi
done
echo "gpu-images: fixtures in $E: $(cd "$E" && ls | tr '\n' ' ')"
