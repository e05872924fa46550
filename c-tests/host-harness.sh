#!/usr/bin/env bash
# The gpu-images x86-64 harnesses (rustc's call sequences against a
# host-plugin image) through omptarget-rs in library-path replacement mode,
# each variant also with --rustc-init. Needs c-tests/gpu-images.sh first.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
lib=${OMPTARGET_RS_LIB:-$repo/target/release/libomptarget_rs.so}
bin=$repo/target/gpu-images/bin
if [ ! -x "$bin/harness.x86_64" ]; then
  echo "skipped: gpu-images not built (run c-tests/gpu-images.sh)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ln -s "$lib" "$dir/libomptarget.so.22.1"
pass=0 fail=0
for h in harness.x86_64 harness.x86_64.nodyn harness.x86_64.manual; do
  for opt in "" --rustc-init; do
    out=$(LD_LIBRARY_PATH="$dir" LD_DEBUG=libs "$bin/$h" $opt 2>"$dir/err")
    rc=$?
    ours=$(grep -c "calling init: $dir/libomptarget.so.22.1" "$dir/err")
    if [ $rc -eq 0 ] && [ "$ours" -ge 1 ] && echo "$out" | grep -q '^7 passed, 0 failed$'; then
      echo "PASS $h $opt"
      pass=$((pass + 1))
    else
      echo "FAIL $h $opt (exit $rc, our library loaded: $ours)"
      echo "$out" | tail -5
      fail=$((fail + 1))
    fi
  done
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
