#!/usr/bin/env python3
"""Validates a LIBOMPTARGET_PROFILE file of c-tests/profile/known.c.

usage: check.py ours.json [llvm.json]
Checks: the file parses as JSON; complete events nest properly per thread;
the host-side event counts are the expected ones (and, given LLVM 22.1's
file, equal to LLVM's for the names both write); the device track holds
every copy with direction, bytes, variable and GB/s, and every kernel; the
totals per kernel and per variable are present.
"""
import collections
import json
import sys

EXPECTED = {  # 22.1's names, for known.c with LIBOMPTARGET_PROFILE_GRANULARITY=0
    "Runtime: Data Copy": 3,   # data begin, update, data end
    "Runtime: target exe": 2,
    "Kernel Target": 2,
    "Runtime: synchronize": 0,  # ours: only where work was queued (none on the host plugin)
    "HostToDev": 2,            # a and b at data begin
    "DevToHost": 2,            # a at update and at data end
}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    d = load(sys.argv[1])
    ev = d["traceEvents"]
    if not isinstance(d.get("beginningOfTime"), int):
        fail("no beginningOfTime")
    names = {e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
    dev_tracks = {e["tid"] for e in ev if e.get("ph") == "M" and e["args"]["name"].startswith("device ")}
    if not dev_tracks:
        fail("no device track (thread names: %s)" % sorted(names))
    host = [e for e in ev if e.get("ph") == "X" and e["ts"] != 0 and e["tid"] not in dev_tracks
            and not e["name"].startswith("Total ")]
    counts = collections.Counter(e["name"] for e in host)
    for n, c in EXPECTED.items():
        if counts[n] != c:
            fail("%d %r events, expected %d (all: %s)" % (counts[n], n, c, dict(counts)))
    # Nesting per thread: every event lies inside the one enclosing it.
    by_tid = collections.defaultdict(list)
    for e in host:
        by_tid[e["tid"]].append(e)
    for tid, es in by_tid.items():
        es.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in es:
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] and not (
                    stack[-1]["ts"] == e["ts"] and stack[-1]["dur"] == 0):
                stack.pop()
            if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"]:
                fail("thread %s: %r overlaps %r without nesting" % (tid, e["name"], stack[-1]["name"]))
            stack.append(e)
    dev = [e for e in ev if e.get("ph") == "X" and e["tid"] in dev_tracks]
    copies = [e for e in dev if e["name"].startswith("copy ")]
    kernels = [e for e in dev if e["name"].startswith("kernel ")]
    if len(copies) != 4 or len(kernels) != 2:
        fail("device track: %d copies, %d kernels (expected 4, 2)" % (len(copies), len(kernels)))
    for c in copies:
        a = c["args"]
        for k in ("direction", "bytes", "variable", "GB/s"):
            if k not in a:
                fail("copy event without %s: %s" % (k, c))
    vs = sorted((c["args"]["variable"], c["args"]["direction"], c["args"]["bytes"]) for c in copies)
    want = [("a[0:1000]", "device to host", 4000), ("a[0:1000]", "device to host", 4000),
            ("a[0:1000]", "host to device", 4000), ("b[0:10]", "host to device", 40)]
    if vs != want:
        fail("copies %s, expected %s" % (vs, want))
    teams = sorted(k["args"]["teams"][0] for k in kernels)
    if teams != [1, 2]:
        fail("kernel teams %s, expected [1, 2]" % teams)
    totals = {e["name"] for e in ev if e["name"].startswith("Total ")}
    for n in ["Total Runtime: target exe", "Total variable a[0:1000]", "Total variable b[0:10]"]:
        if n not in totals:
            fail("missing %r" % n)
    if sum(1 for n in totals if n.startswith("Total kernel ")) != 2:
        fail("expected 2 per-kernel totals: %s" % sorted(totals))
    if len(sys.argv) > 2:
        ll = load(sys.argv[2])["traceEvents"]
        lc = collections.Counter(e["name"] for e in ll if e.get("ph") == "X" and not e["name"].startswith("Total "))
        # 22.1 opens "HostToDev"/"DevToHost" around code blocks (also for
        # present data that is not copied, and not for `update from`); ours
        # around the copies made. Compared: the construct-level names.
        for n in ("Runtime: Data Copy", "Runtime: target exe", "Kernel Target"):
            if lc[n] != counts[n]:
                fail("%r: LLVM 22.1 writes %d, ours %d" % (n, lc[n], counts[n]))
    print("PASS profile: %d events, counts %s" % (len(ev), dict(sorted(counts.items()))))


main()
