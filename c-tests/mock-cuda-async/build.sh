#!/usr/bin/env bash
# build.sh OUTDIR MOCK_LIBCUDA - builds the deferring CUDA stand-in
# (OUTDIR/libcuda-async.so, DT_NEEDED on MOCK_LIBCUDA, the gpu-images
# mock-cuda/libcuda.so.1) and OUTDIR/lookup_check. Exits 3 without a C
# compiler (callers print "skipped: ...").
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=$1
MOCK=$(readlink -f "$2")
CC=${CC:-$(command -v cc || command -v gcc || command -v clang-22 || true)}
[ -n "$CC" ] || { echo "no C compiler"; exit 3; }
mkdir -p "$OUT"
# The mock has no SONAME: naming the file records its absolute path as DT_NEEDED
# (--no-as-needed: nothing here links to it directly, every call goes through dlsym).
"$CC" -shared -fPIC -O1 -Wall -o "$OUT/libcuda-async.so" "$HERE/mock_cuda_async.c" -Wl,--no-as-needed "$MOCK" -Wl,--as-needed -ldl -lpthread
"$CC" -O1 -Wall -o "$OUT/lookup_check" "$HERE/lookup_check.c" -ldl
