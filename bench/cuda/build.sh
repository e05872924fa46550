#!/usr/bin/env bash
# build.sh [RUNTIME_SO] - builds target/bench-cuda/bench_cuda (no CUDA toolkit
# needed: libcuda is dlopen()ed at run time). The program links the runtime
# under test by its SONAME, libomptarget.so.22.1: run it with a folder holding
# that name first on LD_LIBRARY_PATH (scripts/gpu-check.sh and
# c-tests/cuda-mock.sh do).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RT=${1:-$ROOT/target/release/libomptarget_rs.so}
[ -f "$RT" ] || { echo "bench/cuda/build.sh: no runtime at $RT (cargo build --release)" >&2; exit 2; }
OUT=$ROOT/target/bench-cuda
mkdir -p "$OUT/lib"
ln -sf "$(readlink -f "$RT")" "$OUT/lib/libomptarget.so.22.1"
CC=${CC:-$(command -v clang-22 || command -v cc || command -v gcc)}
"$CC" -std=c11 -O2 -Wall -Wextra -Werror -o "$OUT/bench_cuda" "$ROOT/bench/cuda/bench_cuda.c" \
  -L"$OUT/lib" -l:libomptarget.so.22.1 -ldl
echo "built $OUT/bench_cuda"
