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
# --- issue 12: tool interfaces ---
# OMPT callback sequences of a printing tool, LLVM 22.1 versus ours.
bash c-tests/ompt.sh
# LIBOMPTARGET_PROFILE: JSON, nesting, event counts, device track, totals.
bash c-tests/profile.sh
# "Why no device": one line per registered image that no device took.
bash c-tests/why-no-device.sh
