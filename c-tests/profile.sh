#!/usr/bin/env bash
# LIBOMPTARGET_PROFILE test: runs c-tests/profile/known.c under
# LLVM 22.1 and under ours with LIBOMPTARGET_PROFILE_GRANULARITY=0 and
# validates our file with c-tests/profile/check.py (JSON, nesting per thread,
# event counts, device track, totals, construct counts equal to LLVM's);
# then checks that the default granularity (500 us) leaves short events out.
# Then, where the GPU stand-ins are built (c-tests/gpu-images.sh,
# c-tests/amdgpu-images.sh), known.c built for sm_90 and gfx90a runs on our
# CUDA plugin over mock-cuda and mock-cuda-async and on our AMDGPU plugin
# over mock-hsa (immediate and deferred completion), and check.py --gpu
# checks the device track: every copy and kernel timed on the device
# ("clock":"device"), times monotonic in issue order and inside the
# program's run, the grid launched, and the sleeping kernel's duration
# (KERNEL_SLEEP_US of known.c, plus what the stand-in adds); and
# c-tests/profile/async.c (nowait regions, synchronous omp_target_memcpy)
# on mock-cuda-async and deferred mock-hsa: every copy and kernel is there,
# timed on the device.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
OUT=$HERE/build/profile
mkdir -p "$OUT"
[ -f "$LIB" ] || { echo "profile.sh: $LIB missing (cargo build --release)"; exit 1; }
cd "$ROOT" || exit 1
clang-22 -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -O2 -g c-tests/profile/known.c -o "$OUT/known" || exit 1
rm -f "$OUT"/*.json
LIBOMPTARGET_PROFILE_GRANULARITY=0 LIBOMPTARGET_PROFILE=$OUT/llvm.json "$OUT/known" >/dev/null || exit 1
LD_PRELOAD=$LIB LIBOMPTARGET_PROFILE_GRANULARITY=0 LIBOMPTARGET_PROFILE=$OUT/ours.json "$OUT/known" >/dev/null || exit 1
python3 "$HERE/profile/check.py" "$OUT/ours.json" "$OUT/llvm.json" || exit 1
LD_PRELOAD=$LIB LIBOMPTARGET_PROFILE=$OUT/coarse.json "$OUT/known" >/dev/null || exit 1
python3 - "$OUT/coarse.json" <<'PY' || exit 1
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
short = [e for e in ev if e.get("ph") == "X" and e["ts"] != 0 and e["dur"] < 500
         and not e["name"].startswith(("copy ", "kernel ")) and e["tid"] < 0x7fff0000]
totals = [e for e in ev if e["name"] == "Total Runtime: target exe"]
if short or not totals or totals[0]["args"]["count"] != 2:
    print("FAIL granularity: short events %s, totals %s" % (short[:3], totals)); sys.exit(1)
print("PASS profile granularity: short host events left out, totals kept")
PY

# --- GPU plugins on the stand-ins: device times ---------------------------
G=${GPU_IMAGES_DIR:-$ROOT/target/gpu-images}
RT=$ROOT/target/gpu-omp/rt
PTXAS=$(ls "$G"/tools/ptxas-13*/ptxas 2>/dev/null | head -n1)
if [ ! -e "$G/mock-cuda/libcuda.so.1" ] || [ ! -e "$G/amdgpu/mock-hsa/libhsa-runtime64.so.1" ] || [ -z "$PTXAS" ]; then
  echo "skipped: GPU stand-ins not built (c-tests/gpu-images.sh, c-tests/amdgpu-images.sh)"
  exit 0
fi
export PATH=/usr/lib/llvm-22/bin:$PATH
[ -e "$RT/omprt-sm_90.o" ] || bash "$ROOT/c-tests/gpu/omp-suite.sh" --build-only zzz_build_the_runtime_only >/dev/null
PATH=$(dirname "$PTXAS"):$PATH clang -fopenmp --offload-arch=sm_90 -nogpulib --cuda-feature=+ptx80 -Xoffload-linker "$RT/omprt-sm_90.o" \
  -O2 -g c-tests/profile/known.c -o "$OUT/known.sm_90" || exit 1
clang -fopenmp --offload-arch=gfx90a -nogpulib -Xoffload-linker "$RT/omprt-gfx90a.bc" -O2 -g c-tests/profile/known.c -o "$OUT/known.gfx90a" || exit 1
# The stand-ins run the kernels of the host-offload build's image.
llvm-objcopy --dump-section .llvm.offloading="$OUT/x86.offbin" "$OUT/known" /dev/null
llvm-offload-binary "$OUT/x86.offbin" --image=file="$OUT/emu.so"
mkdir -p "$OUT/shim" "$OUT/async"
ln -sf "$(readlink -f "$LIB")" "$OUT/shim/libomptarget.so.22.1"
bash "$HERE/mock-cuda-async/build.sh" "$OUT/async" "$G/mock-cuda/libcuda.so.1" >/dev/null || exit 1
ln -sf libcuda-async.so "$OUT/async/libcuda.so.1"
fail=0
run_gpu() { # name exe ld-path min-extra-us env...
  local name=$1 exe=$2 ld=$3 extra=$4 log=$OUT/$1.log
  shift 4
  rm -f "$OUT/$name.json"
  if ! env LD_LIBRARY_PATH="$OUT/shim:$ld" LIBOMPTARGET_PROFILE_GRANULARITY=0 LIBOMPTARGET_PROFILE="$OUT/$name.json" "$@" \
      timeout 60 "$exe" >"$log" 2>&1 || ! grep -q "^a\[999\]=2000$" "$log" || grep -q WARNING "$log"; then
    echo "FAIL profile [$name]: the program failed"; sed 's/^/      | /' "$log" | tail -n 20; fail=1; return
  fi
  printf '[%s] ' "$name"
  python3 "$HERE/profile/check.py" --gpu --sleep-us 20000 --extra-us "$extra" "$OUT/$name.json" || fail=1
}
run_gpu cuda "$OUT/known.sm_90" "$G/mock-cuda" 0 MOCK_CUDA_EMU="$OUT/emu.so"
run_gpu cuda-async "$OUT/known.sm_90" "$OUT/async" 0 MOCK_CUDA_EMU="$OUT/emu.so"
run_gpu amdgpu "$OUT/known.gfx90a" "$G/amdgpu/mock-hsa" 0 MOCK_HSA_EMU="$OUT/emu.so"
# Deferred completion: every operation takes MOCK_HSA_DEFER_US (3 ms) more.
run_gpu amdgpu-deferred "$OUT/known.gfx90a" "$G/amdgpu/mock-hsa" 3000 MOCK_HSA_EMU="$OUT/emu.so" MOCK_HSA_DEFER=1 MOCK_HSA_DEFER_US=3000
# nowait regions (written when the task's query finds them done) and
# synchronous omp_target_memcpy (queued between timing marks and waited for).
clang -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -O2 -g c-tests/profile/async.c -o "$OUT/async.x86" || exit 1
PATH=$(dirname "$PTXAS"):$PATH clang -fopenmp --offload-arch=sm_90 -nogpulib --cuda-feature=+ptx80 -Xoffload-linker "$RT/omprt-sm_90.o" \
  -O2 -g c-tests/profile/async.c -o "$OUT/async.sm_90" || exit 1
clang -fopenmp --offload-arch=gfx90a -nogpulib -Xoffload-linker "$RT/omprt-gfx90a.bc" -O2 -g c-tests/profile/async.c -o "$OUT/async.gfx90a" || exit 1
llvm-objcopy --dump-section .llvm.offloading="$OUT/async.offbin" "$OUT/async.x86" /dev/null
llvm-offload-binary "$OUT/async.offbin" --image=file="$OUT/async-emu.so"
run_async() { # name exe ld-path env...
  local name=$1 exe=$2 ld=$3 log=$OUT/$1.log
  shift 3
  rm -f "$OUT/$name.json"
  if ! env LD_LIBRARY_PATH="$OUT/shim:$ld" LIBOMPTARGET_PROFILE_GRANULARITY=0 LIBOMPTARGET_PROFILE="$OUT/$name.json" "$@" \
      timeout 60 "$exe" >"$log" 2>&1 || ! grep -q "^a\[9\]=10 b\[9\]=10$" "$log" || grep -q WARNING "$log"; then
    echo "FAIL profile [$name]: the program failed"; sed 's/^/      | /' "$log" | tail -n 20; fail=1; return
  fi
  python3 - "$OUT/$name.json" "$name" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
dev = [e for e in d["traceEvents"] if e.get("ph") == "X" and e["ts"] != 0 and 0x7fff0000 <= e["tid"] < 0x7fff8000]
copies = sorted(e["args"]["variable"] + " " + e["args"]["direction"] for e in dev if e["name"].startswith("copy "))
kernels = [e for e in dev if e["name"].startswith("kernel ")]
want = sorted(["a[0:1000] host to device", "a[0:1000] device to host", "b[0:1000] host to device",
               "b[0:1000] device to host", "(runtime) host to device", "(runtime) device to host"])
bad = [e for e in dev if e["args"].get("clock") != "device" or e["dur"] < 0]
slow = sorted(e["dur"] for e in kernels)
if copies != want or len(kernels) != 2 or bad or slow[-1] < 5000:
    print("FAIL profile [%s]: copies %s, kernels %s us, not device-timed %s" % (sys.argv[2], copies, slow, bad[:2]))
    sys.exit(1)
print("PASS profile [%s]: nowait regions and omp_target_memcpy timed on the device: %d copies, kernels %s us"
      % (sys.argv[2], len(copies), slow))
PY
}
run_async async-cuda "$OUT/async.sm_90" "$OUT/async" MOCK_CUDA_EMU="$OUT/async-emu.so"
run_async async-amdgpu "$OUT/async.gfx90a" "$G/amdgpu/mock-hsa" MOCK_HSA_EMU="$OUT/async-emu.so" MOCK_HSA_DEFER=1
exit $fail
