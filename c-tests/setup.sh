#!/usr/bin/env bash
# c-tests/setup.sh [--example] - installs what the README's two commands need
# on a fresh Debian machine; both call it (c-tests/example/run.sh with
# --example, c-tests/test-all.sh without), and so does .ci/run through
# test-all.sh. Idempotent: when everything is present it only checks (well
# under a second) and prints nothing.
#
#   apt packages (as root, or through sudo): clang-22 lld-22 llvm-22
#     libomp-22-dev liboffload-22 liboffload-22-dev (compiling, LLVM's
#     runtime for comparison, the GPU images' linker and wrappers),
#     libhsa-runtime64-1 (the AMDGPU no-driver test), valgrind, gdb
#     (reliability checks), build-essential (cc, nm), python3 and
#     python3-pip (c-tests/gpu-images.sh downloads ptxas wheels with pip),
#     curl and ca-certificates (rustup, pip), openmpi-bin, libopenmpi-dev
#     and libclang-dev (remote devices over MPI: c-tests/mpi, the remote/
#     workspace crate, whose mpi-sys runs bindgen);
#   the Rust toolchain: rustup with the default (stable) toolchain, rustfmt
#     and clippy, installed with rustup's installer when cargo is missing;
#     the nightly toolchain with miri and rust-src (c-tests/reliability/
#     miri.sh, tests/fuzz); cargo-fuzz 0.13.2 (tests/fuzz/run.sh).
#
# --example: only what c-tests/example/run.sh needs (clang-22, lld-22,
#   libomp-22-dev, liboffload-22 and -dev, and cargo).
#
# cargo lands in ${CARGO_HOME:-~/.cargo}/bin; a caller whose PATH lacks it
# adds it after running this script (both README commands do).
set -euo pipefail

example=0
case "${1:-}" in
  --example) example=1 ;;
  "") ;;
  *) echo "usage: c-tests/setup.sh [--example]" >&2; exit 2 ;;
esac

say() { echo "setup: $*"; }

# --- apt packages ---
pkgs=(clang-22 lld-22 llvm-22 libomp-22-dev liboffload-22 liboffload-22-dev)
[ $example = 1 ] || pkgs+=(libhsa-runtime64-1 valgrind gdb build-essential python3 python3-pip curl ca-certificates
  openmpi-bin libopenmpi-dev libclang-dev)
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${pkgs[@]}" 2>/dev/null | awk '$NF == "installed" {print $1}' || true)
missing=()
for p in "${pkgs[@]}"; do
  grep -qx "$p" <<<"$installed" || missing+=("$p")
done
# cargo's installer needs curl even for the example.
if [ $example = 1 ] && ! command -v cargo >/dev/null && [ ! -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]; then
  command -v curl >/dev/null || missing+=(curl ca-certificates)
fi
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  sudo_=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { say "not root and no sudo: install ${missing[*]} with apt-get" >&2; exit 1; }
    sudo_=(sudo)
  fi
  "${sudo_[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# --- Rust ---
cargo_bin=${CARGO_HOME:-$HOME/.cargo}/bin
if ! command -v cargo >/dev/null; then
  if [ ! -x "$cargo_bin/cargo" ]; then
    say "installing rustup and the stable toolchain (static.rust-lang.org)"
    # rustup's installer binary from its distribution server (what the
    # sh.rustup.rs script downloads; some networks reach only this host).
    # It must be called rustup-init (rustup tells its roles by file name).
    init_dir=$(mktemp -d)
    curl --proto '=https' --tlsv1.2 -sSf -o "$init_dir/rustup-init" \
      "https://static.rust-lang.org/rustup/dist/$(uname -m)-unknown-linux-gnu/rustup-init"
    chmod +x "$init_dir/rustup-init"
    "$init_dir/rustup-init" -y --no-modify-path --profile minimal --component rustfmt,clippy >/dev/null
    rm -rf "$init_dir"
  fi
  export PATH="$cargo_bin:$PATH"
fi
if command -v rustup >/dev/null; then
  # The default toolchain's rustfmt and clippy (test-all.sh runs both).
  have=$(rustup component list --installed 2>/dev/null || true)
  for c in rustfmt clippy; do
    grep -q "^$c" <<<"$have" || { say "adding $c"; rustup component add "$c" >/dev/null; }
  done
  [ $example = 1 ] && exit 0
  if ! rustup toolchain list | grep -q '^nightly'; then
    say "installing the nightly toolchain"
    rustup toolchain install nightly --profile minimal >/dev/null
  fi
  have=$(rustup component list --toolchain nightly --installed 2>/dev/null || true)
  for c in miri rust-src; do
    grep -q "^$c" <<<"$have" || { say "adding $c to nightly"; rustup component add "$c" --toolchain nightly >/dev/null; }
  done
else
  [ $example = 1 ] && exit 0
  # cargo without rustup (a distribution's package): no nightly to add.
  say "cargo without rustup: install rustup (https://rustup.rs) for the nightly toolchain, miri and cargo-fuzz" >&2
  exit 1
fi
if ! cargo fuzz --version 2>/dev/null | grep -q '0\.13\.2'; then
  say "installing cargo-fuzz 0.13.2"
  cargo install cargo-fuzz --version 0.13.2 --locked --quiet
fi
