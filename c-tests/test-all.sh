#!/usr/bin/env bash
# Runs every test: Rust unit and integration tests, the C harnesses and the
# differential OpenMP suite (LLVM's runtime vs ours, in LD_PRELOAD and
# library-path replacement modes), and a smoke pass of the benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --check
cargo build --release
cargo clippy --release --all-targets -- -D warnings
# Real cubins, PTX and AMDGPU code objects plus their harnesses, built from
# ../shared/gpu-images (downloads ptxas from PyPI once; skipped if absent).
bash c-tests/gpu-images.sh
cargo test --release
bash c-tests/run.sh
# rustc's call sequences from the gpu-images x86-64 harnesses, on our runtime.
bash c-tests/host-harness.sh
# The CUDA plugin end to end against the CPU stand-in for libcuda.
bash c-tests/cuda-mock.sh
# The asynchronous launch path end to end on the deferring CUDA stand-in.
bash c-tests/gpu-async/run.sh
# The indirect-call table in the device environment, against LLVM 22.1's on the stand-in.
bash c-tests/cuda-indirect/run.sh
# The AMDGPU plugin end to end against the CPU stand-in for the HSA runtime.
bash c-tests/amdgpu-mock.sh
bash bench/run.sh --smoke
# Issue 11: concurrent map/unmap of one variable, 200 runs x 8 threads x 10^4 regions (and 50 on deferred queues).
bash c-tests/stress/map-race.sh 200 50
# Issue 11 items 5 and 7: a kernel missing from its image fails only its own launch.
bash c-tests/missing-kernel.sh
