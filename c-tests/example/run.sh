#!/usr/bin/env bash
# Sets up a fresh Debian machine (clang-22 and LLVM's offload runtime from
# apt, for compiling and for comparison), builds omptarget-rs, and runs an
# OpenMP program offloaded through it in library-path replacement mode.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
# clang-22, LLVM's OpenMP and offload runtime, lld-22 and cargo, if missing.
bash "$repo/c-tests/setup.sh" --example
command -v cargo >/dev/null || export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
cd "$repo"
cargo build --release --quiet
out=target/example
mkdir -p "$out"
ln -sf "$repo/target/release/libomptarget_rs.so" "$out/libomptarget.so.22.1"
clang-22 -O2 -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu c-tests/example/saxpy.c -o "$out/saxpy"
echo "\$ LD_LIBRARY_PATH=$out $out/saxpy"
LD_LIBRARY_PATH="$out" "$out/saxpy"
# Show who served the launch: the program's binding of __tgt_target_kernel.
binding=$(LD_LIBRARY_PATH="$out" LD_DEBUG=bindings "$out/saxpy" 2>&1 >/dev/null | grep "binding file $out/saxpy .*__tgt_target_kernel" || true)
runtime=$(echo "$binding" | sed -n 's/.* to \([^ ]*\) \[0\]: .*/\1/p')
echo "__tgt_target_kernel bound to $runtime -> $(readlink -f "$runtime")"
