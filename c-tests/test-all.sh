#!/usr/bin/env bash
# Runs every test: Rust unit and integration tests, the C harnesses and the
# differential OpenMP suite (LLVM's runtime vs ours, in LD_PRELOAD and
# library-path replacement modes), and a smoke pass of the benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
# Everything below needs (apt packages, the nightly toolchain with miri,
# cargo-fuzz): installed if missing, a quick check otherwise.
bash c-tests/setup.sh
command -v cargo >/dev/null || export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
cargo fmt --check
cargo build --release
cargo clippy --release --all-targets -- -D warnings
# Real cubins, PTX and AMDGPU code objects plus their harnesses, built from
# c-tests/gpu/images (downloads ptxas from PyPI once, into ~/.cache/omptarget-rs).
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
# Device-to-host services (LLVM's RPC protocol: printf, puts, stderr,
# malloc/free, exit/abort, unknown and user opcodes) on mock-cuda,
# mock-cuda-async and mock-hsa, plus the c-tests/gpu/services.d parts (~30 s).
bash c-tests/gpu/services.sh
bash bench/run.sh --smoke
# Concurrent map/unmap of one variable, 200 runs x 8 threads x 10^4 regions (and 50 on deferred queues).
bash c-tests/stress/map-race.sh 200 50
# Liboffload (the ol* API, libLLVMOffload.so.22.1) on our devices,
# compiled against LLVM 22.1's OffloadAPI.h; differential against its library.
bash c-tests/offload/run.sh
bash bench/offload/run.sh --smoke
# Remote devices over MPI (the remote/ workspace crate): OpenMP and ol*
# programs as rank 0 of MPMD jobs with omptarget-rs-device server ranks.
cargo clippy --release --workspace --all-targets -- -D warnings
bash c-tests/mpi/run.sh
# Interop objects and kernel-language launches on the stand-ins.
bash c-tests/interop/run.sh
# Kernel record/replay on mock-cuda, replayed with llvm-omp-kernel-replay-22.
bash c-tests/record-replay/run.sh
# Reliability: fork with threads offloading, gdb on an offloading
# program, bad input, dlopen/dlclose cycles, teardown with work in flight,
# thread stress (short CI modes; --long for the full figures).
bash c-tests/reliability/run.sh
# The GPU differential suite: the c-tests/omp programs built by clang-22
# for sm_90 and gfx90a with the test-only device runtime c-tests/gpu/rt (no
# DeviceRTL), every image checked, then run through our CUDA and AMDGPU plugins
# on the stand-ins against their host-offload .expected (c-tests/gpu/README.md).
bash c-tests/gpu/omp-suite.sh
# Tool interfaces ---
# OMPT callback sequences of a printing tool, LLVM 22.1 versus ours.
bash c-tests/ompt.sh
# LIBOMPTARGET_PROFILE: JSON, nesting, event counts, device track, totals.
bash c-tests/profile.sh
# "Why no device": one line per registered image that no device took.
bash c-tests/why-no-device.sh
# A kernel missing from its image fails only its own launch.
bash c-tests/missing-kernel.sh
# Device tracing
# OMPT device tracing (ompt_start_trace ... ompt_translate_time) on the CUDA
# and AMDGPU stand-ins; the host plugin offers none, as LLVM 22.1.
bash c-tests/ompt-trace.sh
# The OMPT tool's callbacks over the whole differential suite, LLVM 22.1
# versus ours (c-tests/ompt/suite.divergence lists the differences; ~70 s).
bash c-tests/ompt-suite.sh
# Fuzz, valgrind, miri
# Each cargo-fuzz target (tests/fuzz) for 20 s from the repository's images,
# fails on any crash; --runs 10000000 for the closing note's figures.
bash tests/fuzz/run.sh --time 20
# Part of the differential suite under valgrind memcheck, our library replacing 22.1's.
bash c-tests/reliability/valgrind.sh
# libomp's task_team assertion with target nowait (docs/reliability-libomp.md):
# rates under ours and 22.1's, and the workaround (no hidden helpers) must hold.
bash c-tests/reliability/libomp-rate.sh 10
# The pure modules' unit tests (parsers, mapping table, fuzz harnesses) under miri.
bash c-tests/reliability/miri.sh
