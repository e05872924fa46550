#!/usr/bin/env bash
# c-tests/record-replay/run.sh - kernel record/replay on the CUDA stand-in.
#   1. harness.sm_90 with LIBOMPTARGET_RECORD=1 (1 GiB block, save output) on
#      mock-cuda through our runtime: still 7/7, and every kernel leaves
#      <kernel>.json/.image/.memory/.globals/.original.output; the JSON parses
#      and names the kernel, its arguments and the block; launch_dims.json
#      has 22.1's x-only NumTeamsClause/ThreadLimitClause and our 3-D
#      NumTeamsClause3D/ThreadLimitClause3D; every .globals file reads, the
#      way 22.1's dumpGlobals writes it (name, NUL, u32 size, bytes), as
#      g_value and g_table with the device values before the launch.
#   2. LLVM's llvm-omp-kernel-replay-22 --verify replays all five kernels
#      through our runtime (library-path replacement) on mock-cuda: "Replay
#      device memory verified!" (the replayed output equals the recorded one),
#      launch_dims with its 3-D grid and read_global with the recorded
#      globals restored. Controls: launch_dims.json without the 3-D keys (22.1's
#      format) and read_global with an empty .globals do not verify.
#   2b. the same recording and replay of all five kernels on mock-hsa (AMDGPU plugin).
#   2c. differential: LLVM 22.1 records the gfx90a harness on mock-hsa too when
#      the stand-in reports a small pool (MOCK_HSA_POOL_MB=64; 22.1 reserves
#      the whole reported device memory): its .globals, .image, .memory and
#      .original.output equal ours byte for byte, and its JSON has our keys
#      and values except ArgPtrs (and the block's address) -- 22.1 records
#      the addresses of its argument slots (LaunchParams.Ptrs) instead of the
#      arguments, so its recordings replay with garbage pointers (a segfault
#      on the stand-in, under either runtime); ours records the arguments.
#   3. LIBOMPTARGET_RECORD=1 with the default 64 GiB block, which mock-cuda
#      cannot allocate: 22.1's warning, recording off, the harness still 7/7.
# LLVM 22.1's own runtime cannot record on mock-cuda (it reserves the whole
# reported device memory, 80 GiB).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
G=${1:-$ROOT/target/gpu-images}
LIB=$(readlink -f "${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}")
TOOL=${REPLAY_TOOL:-$(command -v llvm-omp-kernel-replay-22 || echo /usr/lib/llvm-22/bin/llvm-omp-kernel-replay)}
if [ ! -e "$G/bin/harness.sm_90" ] || [ ! -e "$G/mock-cuda/libcuda.so.1" ]; then
  echo "skipped: gpu-images not built (run c-tests/gpu-images.sh; looked in $G)"; exit 0
fi
[ -f "$LIB" ] || { echo "record-replay/run.sh: no runtime at $LIB" >&2; exit 2; }
W=$(mktemp -d /tmp/omptarget-rs-rr.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/shim" "$W/rec" "$W/off"
ln -s "$LIB" "$W/shim/libomptarget.so.22.1"
pass=0 fail=0
ok() { echo "PASS  $1"; pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); [ -n "${2:-}" ] && [ -f "$2" ] && sed 's/^/      | /' "$2" | tail -n 20; }
ENVS=(LD_LIBRARY_PATH="$W/shim:$G/mock-cuda" MOCK_CUDA_EMU="$G/kernels/kernels.emu.so")

# 1. record
(cd "$W/rec" && env "${ENVS[@]}" LIBOMPTARGET_RECORD=1 LIBOMPTARGET_RR_DEVMEM_SIZE=1 LIBOMPTARGET_RR_SAVE_OUTPUT=1 timeout 120 "$G/bin/harness.sm_90") >"$W/record.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$W/record.log"; then ok "harness.sm_90 recording on mock-cuda: 7 passed"
else bad "harness.sm_90 recording (exit $rc)" "$W/record.log"; fi
missing=""
for k in saxpy launch_dims read_global write_global many_args; do
  for ext in json image memory globals original.output; do [ -e "$W/rec/$k.$ext" ] || missing="$missing $k.$ext"; done
done
if [ -z "$missing" ]; then ok "every kernel left .json .image .memory .globals .original.output"
else bad "recorded files missing:$missing"; fi
if python3 - "$W/rec/saxpy.json" "$W/rec/saxpy.memory" "$W/rec/saxpy.image" "$G/kernels/kernels.sm_90.cubin" >"$W/json.log" 2>&1 <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1]))
assert j["Name"] == "saxpy" and j["NumArgs"] == 5 == len(j["ArgPtrs"]) == len(j["ArgOffsets"]), j
assert j["ArgPtrs"][0] == -1, "dyn_ptr first"
start, size = j["BumpAllocVAStart"], j["DeviceMemorySize"]
assert size == os.path.getsize(sys.argv[2]) > 0, (size, os.path.getsize(sys.argv[2]))
assert all(start <= p < start + size for p in j["ArgPtrs"][1:3]), "x and y lie in the block"
assert (j["NumTeamsClause"], j["ThreadLimitClause"]) == (64, 128), j
assert open(sys.argv[3], "rb").read() == open(sys.argv[4], "rb").read(), "image is the registered cubin"
print("ok")
PY
then ok "saxpy.json: 5 arguments (dyn_ptr, x and y in the block), 64x128, memory size = file, image = the cubin"
else bad "saxpy.json contents" "$W/json.log"; fi
check_globals() { # DIR: launch_dims.json's 3-D keys, every .globals in 22.1's layout
  python3 - "$1" <<'PY'
import json, struct, sys, os
d = sys.argv[1]
j = json.load(open(os.path.join(d, "launch_dims.json")))
t, n = j["NumTeamsClause3D"], j["ThreadLimitClause3D"]
assert len(t) == len(n) == 3 and (t[0], n[0]) == (j["NumTeamsClause"], j["ThreadLimitClause"]), j
assert t[1] * t[2] * n[1] * n[2] > 1, ("the last launch_dims launch is 3-D", j)
def read(path):
    b, out = open(path, "rb").read(), {}
    while b:
        name, b = b.split(b"\0", 1)
        (size,) = struct.unpack("<I", b[:4])
        out[name.decode()], b = b[4:4 + size], b[4 + size:]
        assert len(out[name.decode()]) == size, path
    return out
for k in ["saxpy", "launch_dims", "read_global", "write_global", "many_args"]:
    g = read(os.path.join(d, k + ".globals"))
    assert sorted(g) == ["g_table", "g_value"] and len(g["g_value"]) == 4 and len(g["g_table"]) == 16, (k, g)
g = read(os.path.join(d, "read_global.globals"))
v, tab = struct.unpack("<i", g["g_value"])[0], struct.unpack("<4i", g["g_table"])
print("read_global.globals: g_value", v, "g_table", tab, "; launch_dims", t, "x", n)
PY
}
if check_globals "$W/rec" >"$W/globals.log" 2>&1; then ok "launch_dims.json has the 3-D grid; .globals in 22.1's layout: $(tail -n1 "$W/globals.log")"
else bad ".globals / 3-D keys" "$W/globals.log"; fi

# 2. replay with LLVM's tool through our runtime
if [ -x "$TOOL" ]; then
  for k in saxpy many_args launch_dims read_global write_global; do
    (cd "$W/rec" && env "${ENVS[@]}" timeout 120 "$TOOL" --verify "$k.json") >"$W/replay.$k.log" 2>&1
    if grep -q 'Replay device memory verified!' "$W/replay.$k.log" && cmp -s "$W/rec/$k.original.output" "$W/rec/$k.replay.output"; then
      ok "$(basename "$TOOL") --verify $k.json through omptarget-rs: verified"
    else bad "$(basename "$TOOL") --verify $k.json" "$W/replay.$k.log"; fi
  done
  # Controls: what 22.1's files carry is not enough for these two.
  mkdir -p "$W/ctl"
  cp "$W/rec"/launch_dims.* "$W/rec"/read_global.* "$W/ctl/"
  sed -i 's/,"NumTeamsClause3D":\[[0-9,]*\]//; s/,"ThreadLimitClause3D":\[[0-9,]*\]//' "$W/ctl/launch_dims.json"
  : >"$W/ctl/read_global.globals"
  for k in launch_dims read_global; do
    (cd "$W/ctl" && env "${ENVS[@]}" timeout 120 "$TOOL" --verify "$k.json") >"$W/ctl.$k.log" 2>&1
  done
  if grep -q 'failed to verify' "$W/ctl.launch_dims.log" && grep -q 'failed to verify' "$W/ctl.read_global.log"; then
    ok "controls: launch_dims without the 3-D keys and read_global without its globals do not verify"
  else bad "controls verified without the 3-D grid or the globals" "$W/ctl.launch_dims.log"; fi
else echo "skipped: llvm-omp-kernel-replay not installed"; fi

# 2b. the same on mock-hsa (AMDGPU plugin), when amdgpu-images.sh built it
H=$G/amdgpu/mock-hsa
if [ -e "$H/libhsa-runtime64.so.1" ] && [ -e "$G/bin/harness.gfx90a" ] && [ -x "$TOOL" ]; then
  mkdir -p "$W/hsa"
  HENVS=(LD_LIBRARY_PATH="$W/shim:$H" MOCK_HSA_EMU="$G/kernels/kernels.emu.so")
  (cd "$W/hsa" && env "${HENVS[@]}" LIBOMPTARGET_RECORD=1 LIBOMPTARGET_RR_DEVMEM_SIZE=1 LIBOMPTARGET_RR_SAVE_OUTPUT=1 timeout 120 "$G/bin/harness.gfx90a" &&
     for k in saxpy many_args launch_dims read_global write_global; do env "${HENVS[@]}" timeout 120 "$TOOL" --verify $k.json; done) >"$W/hsa.log" 2>&1
  if grep -q '^7 passed, 0 failed' "$W/hsa.log" && [ "$(grep -c 'Replay device memory verified!' "$W/hsa.log")" = 5 ] && check_globals "$W/hsa" >>"$W/hsa.log" 2>&1; then
    ok "mock-hsa: harness.gfx90a recorded (7 passed), all 5 kernels replayed and verified by $(basename "$TOOL"), .globals and 3-D keys as on CUDA"
  else bad "record/replay on mock-hsa" "$W/hsa.log"; fi
else echo "skipped: record/replay on mock-hsa (c-tests/amdgpu-images.sh not run)"; fi

# 2c. LLVM 22.1's recording against ours on mock-hsa
if [ -e "$H/libhsa-runtime64.so.1" ] && [ -e "$G/bin/harness.gfx90a" ]; then
  mkdir -p "$W/h22" "$W/hrs"
  (cd "$W/h22" && env LD_LIBRARY_PATH="$H" MOCK_HSA_EMU="$G/kernels/kernels.emu.so" MOCK_HSA_POOL_MB=64 LIBOMPTARGET_RECORD=1 LIBOMPTARGET_RR_SAVE_OUTPUT=1 timeout 120 "$G/bin/harness.gfx90a") >"$W/h22.log" 2>&1
  (cd "$W/hrs" && env LD_LIBRARY_PATH="$W/shim:$H" MOCK_HSA_EMU="$G/kernels/kernels.emu.so" MOCK_HSA_POOL_MB=64 LIBOMPTARGET_RECORD=1 LIBOMPTARGET_RR_DEVMEM_SIZE=1 LIBOMPTARGET_RR_SAVE_OUTPUT=1 timeout 120 "$G/bin/harness.gfx90a") >>"$W/h22.log" 2>&1
  if python3 - "$W/h22" "$W/hrs" >>"$W/h22.log" 2>&1 <<'PY'
import json, os, sys
llvm, ours = sys.argv[1], sys.argv[2]
kernels = ["saxpy", "launch_dims", "read_global", "write_global", "many_args"]
for k in kernels:
    for ext in ["globals", "image", "memory", "original.output"]:
        a, b = (open(os.path.join(d, k + "." + ext), "rb").read() for d in (llvm, ours))
        assert a == b, (k, ext, len(a), len(b))
    jl, jo = (json.load(open(os.path.join(d, k + ".json"))) for d in (llvm, ours))
    extra = {"NumTeamsClause3D", "ThreadLimitClause3D"}
    assert set(jo) == set(jl) | extra and not extra & set(jl), (k, sorted(jl), sorted(jo))
    for key in set(jl) - {"ArgPtrs", "BumpAllocVAStart"}:
        assert jl[key] == jo[key], (k, key, jl[key], jo[key])
    start, size = jl["BumpAllocVAStart"], jl["DeviceMemorySize"]
    assert jo["ArgPtrs"][0] == -1 and jl["ArgPtrs"][0] != -1, (k, "dyn_ptr", jl["ArgPtrs"][0])
    assert not any(start <= p < start + size for p in jl["ArgPtrs"]), (k, "22.1's ArgPtrs point into its block?")
print("same files for", len(kernels), "kernels")
PY
  then ok "mock-hsa, LLVM 22.1 recording = ours: .globals .image .memory .original.output byte for byte, JSON but ArgPtrs (22.1 records its argument slots' addresses)"
  else bad "LLVM 22.1's recording on mock-hsa differs from ours" "$W/h22.log"; fi
fi

# 3. a block the device cannot give
(cd "$W/off" && env "${ENVS[@]}" LIBOMPTARGET_RECORD=1 timeout 120 "$G/bin/harness.sm_90") >"$W/off.log" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^7 passed, 0 failed' "$W/off.log" && grep -q 'WARNING RR did not initialize RR-properly with 68719476736 bytes' "$W/off.log" &&
   [ -z "$(ls "$W/off")" ]; then ok "64 GiB block refused: 22.1's warning, nothing recorded, harness 7/7"
else bad "refused block (exit $rc)" "$W/off.log"; fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
