#!/usr/bin/env bash
# Sets up a fresh Debian machine (clang-22 and LLVM's offload runtime from
# apt, for compiling and for comparison), builds omptarget-rs, and runs an
# OpenMP program offloaded through it in library-path replacement mode.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
need=()
command -v clang-22 >/dev/null || need+=(clang-22)
[ -e /usr/lib/llvm-22/lib/libomp.so ] || need+=(libomp-22-dev)
[ -e /usr/lib/llvm-22/lib/libomptarget.so.22.1 ] || need+=(liboffload-22)
[ -e /usr/lib/llvm-22/lib/libomptarget.so ] || need+=(liboffload-22-dev)
[ -e /usr/lib/llvm-22/bin/ld.lld ] || need+=(lld-22)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  sudo_=""; [ "$(id -u)" -eq 0 ] || sudo_=sudo
  $sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}" >/dev/null
fi
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
