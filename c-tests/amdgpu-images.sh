#!/usr/bin/env bash
# amdgpu-images.sh [GPU_IMAGES_DIR] - builds the AMDGPU test inputs
# into GPU_IMAGES_DIR/amdgpu (default target/gpu-images/amdgpu), next to what
# c-tests/gpu-images.sh built:
#
#   mock-hsa/libhsa-runtime64.so.1 (+ libhsa-runtime64.so)  CPU stand-in for the HSA runtime
#   kernels.gfx90a.cov5.hsaco          gpu-images' kernels as code object v5
#   kernels.gfx90a.xnack_off.hsaco     ... for gfx90a:xnack- (a pinned target-id feature)
#   kernels.gfx942.sramecc_on.xnack_on.hsaco
#   env_kernels.gfx90a.hsaco + env_kernels.emu.so   kernel/device environments
#   ctor_kernels.gfx90a.hsaco + ctor_kernels.emu.so amdgcn.device.init/fini
#
# Needs cc (the mock) and clang-22 with lld (the code objects; skipped with a
# message when clang-22 is absent). Rebuilds only what is older than its
# source. Exits non-zero when a build fails.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
G=${1:-$ROOT/target/gpu-images}
OUT=$G/amdgpu
mkdir -p "$OUT/mock-hsa"
CC=${CC:-$(command -v cc || command -v gcc || command -v clang-22)}
CLANG=${CLANG:-$(command -v clang-22 || true)}
SRC=${GPU_IMAGES_SRC:-$ROOT/c-tests/gpu/images}

stale() { [ ! -e "$1" ] || [ "$2" -nt "$1" ]; }

M=$ROOT/c-tests/mock-hsa/mock_hsa.c
if stale "$OUT/mock-hsa/libhsa-runtime64.so.1" "$M"; then
  "$CC" -shared -fPIC -O1 -g -Wall -Wno-unused-parameter -o "$OUT/mock-hsa/libhsa-runtime64.so.1" "$M" -ldl -lpthread
  ln -sf libhsa-runtime64.so.1 "$OUT/mock-hsa/libhsa-runtime64.so"
fi

if [ -z "$CLANG" ]; then
  echo "amdgpu-images: mock-hsa built; code objects skipped (no clang-22)"
  exit 0
fi
E=$ROOT/c-tests/amdgpu/env_kernels.c
if stale "$OUT/env_kernels.gfx90a.hsaco" "$E"; then
  "$CLANG" --target=amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O2 "$E" -o "$OUT/env_kernels.gfx90a.hsaco"
fi
if stale "$OUT/env_kernels.emu.so" "$E"; then
  "$CLANG" -shared -fPIC -O2 -DOFFLOAD_EMULATE_GRID "$E" -o "$OUT/env_kernels.emu.so"
fi
C=$ROOT/c-tests/amdgpu/ctor_kernels.c
if stale "$OUT/ctor_kernels.gfx90a.hsaco" "$C"; then
  "$CLANG" --target=amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -O2 "$C" -o "$OUT/ctor_kernels.gfx90a.hsaco"
fi
if stale "$OUT/ctor_kernels.emu.so" "$C"; then
  "$CLANG" -shared -fPIC -O2 -DOFFLOAD_EMULATE_GRID "$C" -o "$OUT/ctor_kernels.emu.so"
fi
K=$SRC/src/kernels.cu
if [ -f "$K" ]; then
  hip() { "$CLANG" -x hip --cuda-device-only --no-gpu-bundle-output -nogpulib -nogpuinc -O2 "$@" "$K"; }
  stale "$OUT/kernels.gfx90a.cov5.hsaco" "$K" && hip --offload-arch=gfx90a -mcode-object-version=5 -o "$OUT/kernels.gfx90a.cov5.hsaco"
  stale "$OUT/kernels.gfx90a.xnack_off.hsaco" "$K" && hip --offload-arch=gfx90a:xnack- -o "$OUT/kernels.gfx90a.xnack_off.hsaco"
  stale "$OUT/kernels.gfx942.sramecc_on.xnack_on.hsaco" "$K" && hip --offload-arch=gfx942:sramecc+:xnack+ -o "$OUT/kernels.gfx942.sramecc_on.xnack_on.hsaco"
else
  echo "amdgpu-images: no $K" >&2; exit 1
fi
echo "amdgpu-images: $OUT: $(cd "$OUT" && ls | tr '\n' ' ')"
