#!/usr/bin/env bash
# LIBOMPTARGET_PROFILE test (issue 12): runs c-tests/profile/known.c under
# LLVM 22.1 and under ours with LIBOMPTARGET_PROFILE_GRANULARITY=0 and
# validates our file with c-tests/profile/check.py (JSON, nesting per thread,
# event counts, device track, totals, construct counts equal to LLVM's);
# then checks that the default granularity (500 us) leaves short events out.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
LIB=${OMPTARGET_RS_LIB:-$ROOT/target/release/libomptarget_rs.so}
OUT=$HERE/build/profile
mkdir -p "$OUT"
[ -f "$LIB" ] || { echo "profile.sh: $LIB missing (cargo build --release)"; exit 1; }
cd "$ROOT" || exit 1
clang-22 -fopenmp -fopenmp-targets=x86_64-unknown-linux-gnu -O2 -g c-tests/profile/known.c -o "$OUT/known" || exit 1
rm -f "$OUT"/*.json
LIBOMPTARGET_PROFILE_GRANULARITY=0 LIBOMPTARGET_PROFILE=$OUT/llvm.json "$OUT/known" >/dev/null || exit 1
LD_PRELOAD=$LIB LIBOMPTARGET_PROFILE_GRANULARITY=0 LIBOMPTARGET_PROFILE=$OUT/ours.json "$OUT/known" >/dev/null || exit 1
python3 "$HERE/profile/check.py" "$OUT/ours.json" "$OUT/llvm.json" || exit 1
LD_PRELOAD=$LIB LIBOMPTARGET_PROFILE=$OUT/coarse.json "$OUT/known" >/dev/null || exit 1
python3 - "$OUT/coarse.json" <<'PY' || exit 1
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
short = [e for e in ev if e.get("ph") == "X" and e["ts"] != 0 and e["dur"] < 500
         and not e["name"].startswith(("copy ", "kernel ")) and e["tid"] < 0x7fff0000]
totals = [e for e in ev if e["name"] == "Total Runtime: target exe"]
if short or not totals or totals[0]["args"]["count"] != 2:
    print("FAIL granularity: short events %s, totals %s" % (short[:3], totals)); sys.exit(1)
print("PASS profile granularity: short host events left out, totals kept")
PY
