#!/usr/bin/env python3
"""Validates a LIBOMPTARGET_PROFILE file of c-tests/profile/known.c.

usage: check.py ours.json [llvm.json]
       check.py --gpu [--sleep-us N] [--extra-us N] ours.json
Checks: the file parses as JSON; complete events nest properly per thread;
the host-side event counts are the expected ones (and, given LLVM 22.1's
file, equal to LLVM's for the names both write); the device track holds
every copy with direction, bytes, variable and GB/s, and every kernel with
its grid (teams and threads per team, x/y/z) and the clauses' values; the
totals per kernel and per variable are present. Every device-track event
says which clock timed it: "host" on the host plugin; with --gpu (a GPU
plugin on a stand-in) "device", and the device times are checked: in issue
order each operation starts after the previous one ended, each lies inside
the construct that issued it, the sleeping kernel (the plain `target`) takes
at least N us (--sleep-us) plus what the stand-in adds to every operation
(--extra-us), the copies at least that addition and less than N us.
"""
import argparse
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


def check_device_times(opt, host, dev, kernels, copies):
    """Device times of a GPU stand-in run (events in file order = issue order)."""
    prev = None
    for e in dev:
        if e["dur"] < 0 or e["ts"] <= 0:
            fail("device event with a bad time: %s" % e)
        # Rounded to us (start down, end up): adjacent operations may share 1 us.
        if prev and e["ts"] < prev["ts"] + prev["dur"] - 1:
            fail("device times not monotonic: %r at %d starts before %r (%d+%d) ended"
                 % (e["name"], e["ts"], prev["name"], prev["ts"], prev["dur"]))
        prev = e
    # Each kernel inside its construct: after "Kernel Target" was issued,
    # done before "Runtime: target exe" returned.
    issue = sorted((e for e in host if e["name"] == "Kernel Target"), key=lambda e: e["ts"])
    exe = sorted((e for e in host if e["name"] == "Runtime: target exe"), key=lambda e: e["ts"])
    for k, i, x in zip(kernels, issue, exe):
        if k["ts"] + 1 < i["ts"] or k["ts"] + k["dur"] > x["ts"] + x["dur"] + 1:
            fail("kernel %r at [%d, %d] outside its construct (issued %d, construct ends %d)"
                 % (k["name"], k["ts"], k["ts"] + k["dur"], i["ts"], x["ts"] + x["dur"]))
    lo = min(e["ts"] for e in host)
    hi = max(e["ts"] + e["dur"] for e in host)
    for c in copies:
        if c["ts"] + 1 < lo or c["ts"] + c["dur"] > hi + 1:
            fail("copy %r at [%d, %d] outside the program's constructs [%d, %d]"
                 % (c["name"], c["ts"], c["ts"] + c["dur"], lo, hi))
    # Durations: the plain `target` sleeps; the rest takes what the stand-in adds.
    slow = [k for k in kernels if k["args"]["num_teams"][0] == 1]
    fast = [k for k in kernels if k["args"]["num_teams"][0] == 2]
    least = opt.sleep_us + opt.extra_us
    if len(slow) != 1 or not least <= slow[0]["dur"] < least + 1000000:
        fail("the sleeping kernel took %s us on the device, expected %d us to %d us"
             % ([k["dur"] for k in slow], least, least + 1000000))
    # The teams kernel's first run starts the host team threads (the
    # stand-ins run the host build's kernels): only bounded loosely.
    for e, most in [(k, 1000000) for k in fast] + [(c, opt.sleep_us) for c in copies]:
        if not opt.extra_us <= e["dur"] < most:
            fail("%r took %d us on the device, expected %d us to %d us" % (e["name"], e["dur"], opt.extra_us, most))
    if fast and fast[0]["args"]["teams"][0] != 2:
        fail("num_teams(2) kernel launched with %s teams" % fast[0]["args"]["teams"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--sleep-us", type=int, default=20000)
    ap.add_argument("--extra-us", type=int, default=0)
    ap.add_argument("ours")
    ap.add_argument("llvm", nargs="?")
    opt = ap.parse_args()
    d = load(opt.ours)
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
        if opt.gpu and n == "Runtime: synchronize":
            c = counts[n] if counts[n] >= 4 else 4  # at least one wait per construct (queued work)
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
    teams = sorted(k["args"]["num_teams"][0] for k in kernels)
    if teams != [1, 2]:
        fail("kernel num_teams %s, expected [1, 2]" % teams)
    for k in kernels:
        a = k["args"]
        for key in ("teams", "threads", "num_teams", "thread_limit"):
            if len(a.get(key, [])) != 3:
                fail("kernel event without a 3-dimensional %s: %s" % (key, k))
        if min(a["teams"] + a["threads"]) < 1:
            fail("kernel grid with a 0 dimension: %s" % k)
    want_clock = "device" if opt.gpu else "host"
    for e in dev:
        if e["args"].get("clock") != want_clock:
            fail("device-track event timed by %r, expected %r: %s" % (e["args"].get("clock"), want_clock, e))
    if opt.gpu:
        check_device_times(opt, host, dev, kernels, copies)
    totals = {e["name"] for e in ev if e["name"].startswith("Total ")}
    for n in ["Total Runtime: target exe", "Total variable a[0:1000]", "Total variable b[0:10]"]:
        if n not in totals:
            fail("missing %r" % n)
    if sum(1 for n in totals if n.startswith("Total kernel ")) != 2:
        fail("expected 2 per-kernel totals: %s" % sorted(totals))
    if opt.llvm:
        ll = load(opt.llvm)["traceEvents"]
        lc = collections.Counter(e["name"] for e in ll if e.get("ph") == "X" and not e["name"].startswith("Total "))
        # 22.1 opens "HostToDev"/"DevToHost" around code blocks (also for
        # present data that is not copied, and not for `update from`); ours
        # around the copies made. Compared: the construct-level names.
        for n in ("Runtime: Data Copy", "Runtime: target exe", "Kernel Target"):
            if lc[n] != counts[n]:
                fail("%r: LLVM 22.1 writes %d, ours %d" % (n, lc[n], counts[n]))
    extra = ""
    if opt.gpu:
        extra = "; device times: kernels %s us, copies %s us" % (
            [k["dur"] for k in kernels], [c["dur"] for c in copies])
    print("PASS profile: %d events, counts %s%s" % (len(ev), dict(sorted(counts.items())), extra))


main()
