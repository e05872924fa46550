#!/usr/bin/env bash
# c-tests/reliability/miri.sh - the unit tests of the pure modules
# (offload-entry tables, OffloadBinary/ELF checks, the mapping table, the ABI
# readers, AMDGPU msgpack/metadata/kernargs, CUDA image and grid rules, and
# the fuzz harnesses, which drive the kernel-arguments reader and the mapper
# vector) under miri, which reports undefined behaviour: out-of-bounds or
# misaligned reads, use after free, invalid values, data races. Needs the
# nightly toolchain with the miri component (c-tests/setup.sh adds it). Tests that
# read files are ignored under miri (#[cfg_attr(miri, ignore)]).
# Pointers from C are integers turned into pointers (exposed provenance):
# -Zmiri-permissive-provenance accepts that without a warning per cast.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
modules=(openmp::entries device::image base::elf openmp::mapping abi:: plugins::amdgpu::msgpack plugins::amdgpu::image plugins::gpu::grid
         plugins::amdgpu::kernargs plugins::cuda::image plugins::cuda::fatbin fuzzing::)
log=target/miri.log
mkdir -p target
start=$(date +%s)
if MIRIFLAGS="-Zmiri-permissive-provenance ${MIRIFLAGS:-}" cargo +nightly miri test --lib -- "${modules[@]}" >"$log" 2>&1; then
  echo "miri: $(grep -E '^test result' "$log" | tail -n1) ($(( $(date +%s) - start )) s)"
else
  grep -E 'Undefined Behavior|^error|FAILED|panicked' "$log" | head -n 20
  echo "miri: FAILED (full log: $log)"
  exit 1
fi
