#!/usr/bin/env bash
# tests/fuzz/run.sh [--runs N | --time S] [TARGET...] - builds the cargo-fuzz
# targets of tests/fuzz and runs each one, seeded with real images
# built from this repository, for N executions (--runs) or S seconds (--time;
# both: whichever comes first; default 30 s). Prints one line per target (executions, exec/s, coverage,
# features, corpus) and exits non-zero if any target crashes, leaks, times out
# or runs out of memory; the input that did it is in tests/fuzz/artifacts/TARGET.
#
# ol_calls runs random sequences of ol* calls (live, stale and made-up handles,
# sizes and pointers) on the CPU devices.
# Needs the nightly toolchain and cargo-fuzz (c-tests/setup.sh installs both), clang-22,
# llvm-22 and python3. Seeds: c-tests/gpu-images.sh and c-tests/amdgpu-images.sh
# outputs (cubins, PTX, AMDGPU code objects, host images, OffloadBinary
# containers, built if missing), the offload-entry table and embedded
# container of a clang-compiled c-tests/omp program, the AMDGPU metadata
# notes' msgpack, and kernel-arguments structs of versions 1-3.
# Corpora grow in tests/fuzz/corpus/TARGET (not committed).
set -euo pipefail
FUZZ=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$FUZZ/../.." && pwd)
cd "$ROOT"

mode=()
while [ $# -gt 0 ]; do
  case $1 in
    --runs) mode+=(-runs="$2"); shift 2 ;;
    --time) mode+=(-max_total_time="$2"); shift 2 ;;
    *) break ;;
  esac
done
[ ${#mode[@]} -gt 0 ] || mode=(-max_total_time=30)
all=(offload_binary elf entries cuda_image cuda_fatbin amdgpu_image amdgpu_msgpack program_image kernel_args mapper_components ol_calls)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

command -v cargo-fuzz >/dev/null || { echo "fuzz: cargo-fuzz not installed (bash c-tests/setup.sh installs it)" >&2; exit 1; }
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-22/bin}
G=$ROOT/target/gpu-images
[ -e "$G/kernels/kernels.sm_90.cubin" ] || bash c-tests/gpu-images.sh "$G" >/dev/null
[ -e "$G/amdgpu/kernels.gfx90a.cov5.hsaco" ] || bash c-tests/amdgpu-images.sh "$G" >/dev/null

# --- seeds (rebuilt each run; small) ---
S=$ROOT/target/fuzz-seeds
rm -rf "$S"
for t in "${all[@]}"; do mkdir -p "$S/$t"; done
seed() { # seed TARGET FILE...
  local t=$1; shift
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$S/$t/$(basename "$f")"; done
  return 0
}
cubins=("$G"/kernels/*.cubin "$G"/kernels/*.ptx "$G"/extra/*.cubin "$G"/extra/*.ptx)
hsacos=("$G"/kernels/*.hsaco "$G"/amdgpu/*.hsaco)
hosts=("$G"/kernels/kernels.x86_64*.so)
offbins=("$G"/offload/*.offbin)
# A clang-compiled OpenMP program with kernels and declare-target globals:
# its entry table and its embedded OffloadBinary (the host image inside).
prog=$S/declare_target
clang-22 -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -fno-pie -no-pie -O1 -o "$prog" c-tests/omp/declare_target_globals.c
"$LLVM_BIN/llvm-objcopy" --dump-section llvm_offload_entries="$S/entries/declare_target.entries" \
  --dump-section .llvm.offloading="$S/offload_binary/declare_target.offloading" "$prog" "$S/stripped"
rm -f "$prog" "$S/stripped"
seed offload_binary "${offbins[@]}"
seed elf "${cubins[@]}" "${hsacos[@]}" "${hosts[@]}"
seed cuda_image "${cubins[@]}"
# Fatbins: several cubins + PTX, plain, LZ4- and zstd-compressed (fatbinary from the CUDA wheel).
FB=$(ls "$G"/tools/ptxas-13*/fatbinary 2>/dev/null | head -n1 || true)
if [ -n "$FB" ]; then
  c=$G/kernels/kernels.sm_90.cubin p=$G/kernels/kernels.sm_90.ptx
  "$FB" -64 --compress=false --create="$S/cuda_fatbin/plain.fatbin" --image3=kind=elf,sm=90,file="$c" --image3=kind=ptx,sm=90,file="$p"
  "$FB" -64 --compress-all --compress-mode=speed --create="$S/cuda_fatbin/lz4.fatbin" --image3=kind=elf,sm=90,file="$c" --image3=kind=ptx,sm=90,file="$p"
  "$FB" -64 --compress-all --create="$S/cuda_fatbin/zstd.fatbin" --image3=kind=elf,sm=90,file="$c"
fi
seed amdgpu_image "${hsacos[@]}"
seed program_image "${offbins[@]}" "${cubins[@]}" "${hsacos[@]}" "${hosts[@]}" "$S/offload_binary/declare_target.offloading"
python3 - "$S" "${hsacos[@]}" <<'EOF'
import os, struct, sys
S = sys.argv[1]
# AMDGPU metadata: the desc of each NT_AMDGPU_METADATA (32) note, msgpack.
for path in sys.argv[2:]:
    b = open(path, 'rb').read()
    phoff, = struct.unpack_from('<Q', b, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', b, 0x36)
    for i in range(phnum):
        p_type, _, off, _, _, filesz = struct.unpack_from('<IIQQQQ', b, phoff + i * phentsize)
        if p_type != 4:  # PT_NOTE
            continue
        at, end = off, off + filesz
        while at + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from('<III', b, at)
            desc = at + 12 + ((namesz + 3) & ~3)
            if ntype == 32:
                open(os.path.join(S, 'amdgpu_msgpack', os.path.basename(path) + '.msgpack'), 'wb').write(b[desc:desc + descsz])
            at = desc + ((descsz + 3) & ~3)
# Offload-entry tables: the legacy 32-byte layout (the current one comes
# from the compiled program above).
legacy = b''.join(struct.pack('<QQQii', 0x401000 + 16 * k, 0x402000 + 16 * k, 4 * k, 0, 0) for k in range(3))
open(os.path.join(S, 'entries', 'legacy.entries'), 'wb').write(legacy)
# Kernel-arguments structs, versions 1-3, with 0, 1 and 3 arguments: the
# 104-byte struct (pointer fields 0: "point at the arrays") and the arrays.
for version in (1, 2, 3):
    for n in (0, 1, 3):
        head = struct.pack('<II6QQQ3I3II', version, n, 0, 0, 0, 0, 0, 0, 1000, 1 if version == 3 else 0,
                           4, 1, 1, 128, 1, 1, 0)
        head += b'\0' * (104 - len(head))
        arrays = b''.join(struct.pack('<Q', 0x7f0000001000 + 8 * i) for i in range(n))
        arrays += b''.join(struct.pack('<Q', 0x7f0000001000 + 8 * i) for i in range(n))
        arrays += b''.join(struct.pack('<q', 8) for i in range(n))
        arrays += b''.join(struct.pack('<q', 0x23) for i in range(n))  # TO | FROM | TARGET_PARAM
        open(os.path.join(S, 'kernel_args', f'v{version}.n{n}'), 'wb').write(head + arrays)
# Mapper component vectors: capacity, length, mode, pushes.
for cap, n, mode, pushes in ((0, 0, 0, 3), (4, 2, 0, 5), (8, 8, 0, 1), (3, 1, 1, 2), (5, 2, 2, 0), (2, 2, 4, 1)):
    open(os.path.join(S, 'mapper_components', f'c{cap}.n{n}.m{mode}'), 'wb').write(bytes([cap, n, mode, pushes]))
EOF

# ol* call sequences: a CPU-device program to load, and a few call programs.
clang-22 -O1 -shared -fPIC c-tests/offload/kernel.c -o "$S/kernel.so"
export OMPTARGET_RS_FUZZ_PROGRAM=$S/kernel.so
python3 - "$S/ol_calls" <<'EOF'
import os, random, sys
r = random.Random(7)
for i in range(16):
    open(os.path.join(sys.argv[1], f'seq{i}'), 'wb').write(bytes(r.randrange(256) for _ in range(48 + 16 * i)))
# alloc, queue, copy in, event, host function, program, symbol, launch, sync
open(os.path.join(sys.argv[1], 'plain'), 'wb').write(bytes([0, 0, 1, 100, 5, 0, 2, 0, 0, 64, 0, 0, 8, 0, 12, 0, 15, 0, 0, 17, 0, 0, 0, 18, 0, 1, 1, 1, 1, 0, 0, 0, 7, 0, 1, 0]))
# program, symbol vadd, launch with 4096 argument bytes (accepted: the harness's buffer must hold them)
open(os.path.join(sys.argv[1], 'large_args'), 'wb').write(bytes([15, 0, 0, 17, 4, 0, 0, 18, 0, 1, 1, 1, 201, 200, 0]))
EOF

# --- build and run ---
cargo +nightly fuzz build --fuzz-dir tests/fuzz
fail=0
for t in "${targets[@]}"; do
  mkdir -p "$FUZZ/corpus/$t" "$FUZZ/artifacts/$t"
  log=$ROOT/target/fuzz-$t.log
  start=$(date +%s)
  # ol_calls keeps process-wide state across inputs on purpose (the device
  # list, interned error records, idle queue threads): LeakSanitizer's
  # per-input check would count it; memory errors are still caught.
  extra=()
  [ "$t" = ol_calls ] && extra=(-detect_leaks=0)
  # One job, 10 s per input at most, 2 GiB; -max_len fits the largest seed image.
  if cargo +nightly fuzz run --fuzz-dir tests/fuzz "$t" "$FUZZ/corpus/$t" "$S/$t" -- \
      "${mode[@]}" "${extra[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1 \
      -artifact_prefix="$FUZZ/artifacts/$t/" >"$log" 2>&1; then
    status=ok
  else
    status=CRASH; fail=1
  fi
  secs=$(( $(date +%s) - start ))
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -n1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p' <<<"$last")
  printf 'fuzz %-18s %-5s runs %s in %ss, %s exec/s, cov %s, ft %s, corpus %s, seeds %s\n' \
    "$t" "$status" "${runs:-?}" "$secs" "${eps:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$(ls "$S/$t" | wc -l)"
  if [ $status != ok ]; then
    grep -E 'ERROR|panicked|SUMMARY|Test unit written' "$log" | head -n 8 | sed 's/^/  /'
    echo "  (full log: $log)"
  fi
done
[ $fail = 0 ] && echo "fuzz: ${#targets[@]} targets, no crash" || echo "fuzz: FAILED"
exit $fail
