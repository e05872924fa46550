#!/usr/bin/env bash
# Runs every test: Rust unit and integration tests, the C harnesses and the
# differential OpenMP suite (LLVM's runtime vs ours, in LD_PRELOAD and
# library-path replacement modes), and a smoke pass of the benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
cargo test --release
bash c-tests/run.sh
bash bench/run.sh --smoke
