#!/usr/bin/env python3
"""Checks the JSON lock profile (NUMALOCK_STATS_FORMAT=json) that profile_test.sh
collected: every line one JSON object with the documented keys and sane
numbers. Prints one line per failed check; exit 1 if any.

  profile_check.py FILE MODE [ARGS...]
    MODE profiled HOT_LINE CALL_LINE THREADS ITERS SYMBOLS
        one process of nl_profiled: its hot mutex first, contended, acquired
        THREADS*ITERS times, first locked in profiled_contend (with SYMBOLS
        "libdw": at profiled.c:HOT_LINE) and called from profiled_worker
        (with libdw: profiled.c:CALL_LINE)
    MODE processes N PROGRAM
        N lines or more, each a process of PROGRAM, pids all different
    MODE any
        every line a profile (a stripped program: sites named somehow)
"""
import json
import sys

TOP_KEYS = ["pid", "program", "lock", "topology", "nodes", "levels", "objects", "acquisitions",
            "contended", "wait_ns", "handovers", "remote_handovers", "locks"]
LOCK_KEYS = ["rank", "address", "type", "acquired", "reads", "contended", "wait_ns", "handovers",
             "remote_handovers", "crossings", "parks", "gated", "handovers_to_parked", "site"]
SITE_KEYS = ["pc", "object", "function", "file", "line", "text"]
TOTALS = ["contended", "wait_ns", "handovers", "remote_handovers"]

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def check_site(where, site):
    missing = [k for k in SITE_KEYS if k not in site]
    if missing:
        fail("%s: site keys missing: %s" % (where, missing))
        return
    if not isinstance(site["text"], str) or not site["text"]:
        fail("%s: site without text: %r" % (where, site))
    if site["line"] is not None and (not isinstance(site["line"], int) or site["line"] <= 0):
        fail("%s: bad line %r" % (where, site["line"]))
    if site["pc"] is not None and not site["pc"].startswith("0x"):
        fail("%s: bad pc %r" % (where, site["pc"]))


def check_profile(n, p):
    where = "line %d (pid %s)" % (n, p.get("pid"))
    missing = [k for k in TOP_KEYS if k not in p]
    if missing:
        fail("%s: keys missing: %s" % (where, missing))
        return
    if p["nodes"] < 1 or not p["levels"] or "node" not in p["levels"]:
        fail("%s: nodes %r, levels %r" % (where, p["nodes"], p["levels"]))
    if not p["locks"] or p["objects"] < len(p["locks"]):
        fail("%s: %d objects, %d locks listed" % (where, p["objects"], len(p["locks"])))
    for i, lk in enumerate(p["locks"]):
        lw = "%s lock %d" % (where, i + 1)
        missing = [k for k in LOCK_KEYS if k not in lk]
        if missing:
            fail("%s: keys missing: %s" % (lw, missing))
            continue
        if lk["rank"] != i + 1 or lk["type"] not in ("mutex", "rwlock", "spin"):
            fail("%s: rank %r type %r" % (lw, lk["rank"], lk["type"]))
        if lk["contended"] > lk["acquired"] + lk["reads"] or lk["remote_handovers"] > lk["handovers"]:
            fail("%s: counts out of order: %r" % (lw, lk))
        if sorted(lk["crossings"]) != sorted(p["levels"]):
            fail("%s: crossings %r for levels %r" % (lw, lk["crossings"], p["levels"]))
        check_site(lw, lk["site"])
        for j, fr in enumerate(lk.get("stack", [])):
            check_site("%s frame %d" % (lw, j), fr)
    # the totals are over all objects, the listed ones among them
    if p["acquisitions"] < sum(lk["acquired"] + lk["reads"] for lk in p["locks"]):
        fail("%s: acquisitions %d below the listed locks' sum" % (where, p["acquisitions"]))
    for k in TOTALS:
        if p[k] < sum(lk[k] for lk in p["locks"]):
            fail("%s: total %s %d below the listed locks' sum" % (where, k, p[k]))


def main():
    path, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(path, "rb") as f:
        raw = f.read()
    profiles = []
    for n, line in enumerate(raw.split(b"\n"), 1):
        if not line.startswith(b"{"):
            continue
        try:
            profiles.append(json.loads(line.decode("utf-8")))
        except (UnicodeDecodeError, ValueError) as e:
            fail("line %d is not JSON: %s: %r" % (n, e, line[:200]))
            continue
        check_profile(n, profiles[-1])
    if not profiles:
        fail("no JSON profile in %s" % path)
    elif mode == "profiled":
        hot_line, call_line, threads, iters = (int(a) for a in args[:4])
        libdw = args[4] == "libdw"
        if len(profiles) != 1:
            fail("%d profiles, expected 1" % len(profiles))
        p = profiles[0]
        hot = p["locks"][0]
        if hot["acquired"] != threads * iters or hot["type"] != "mutex":
            fail("hot mutex: acquired %d (expected %d), type %s" % (hot["acquired"], threads * iters, hot["type"]))
        if hot["contended"] <= 0 or p["contended"] < hot["contended"]:
            fail("hot mutex: contended %d, total %d" % (hot["contended"], p["contended"]))
        if p["objects"] < 1 + threads * 32 or p["acquisitions"] < threads * iters + threads * 32:
            fail("objects %d, acquisitions %d: fewer than the program locked" % (p["objects"], p["acquisitions"]))
        want = [("profiled_contend", hot_line), ("profiled_worker", call_line)]
        frames = [hot["site"]] + hot.get("stack", [])[1:2]
        if len(hot.get("stack", [])) < 2 or hot["stack"][0] != hot["site"]:
            fail("hot mutex: stack %r does not start at the site %r" % (hot.get("stack"), hot["site"]))
        for (fn, line), fr in zip(want, frames):
            if fr["function"] != fn:
                fail("hot mutex: function %r, expected %s" % (fr["function"], fn))
            if libdw and (not (fr["file"] or "").endswith("profiled.c") or fr["line"] != line):
                fail("hot mutex: %s at %r:%r, expected profiled.c:%d" % (fn, fr["file"], fr["line"], line))
            if libdw and fr["text"] != "%s (profiled.c:%d)" % (fn, line):
                fail("hot mutex: text %r" % fr["text"])
            if not fr["object"] or "nl_profiled" not in fr["object"]:
                fail("hot mutex: object %r" % fr["object"])
    elif mode == "processes":
        want, program = int(args[0]), args[1]
        pids = [p["pid"] for p in profiles]
        if len(profiles) < want or len(set(pids)) != len(pids):
            fail("%d profiles (pids %r), expected %d or more, one per process" % (len(profiles), pids, want))
        for p in profiles:
            if p["program"] != program:
                fail("program %r, expected %r" % (p["program"], program))
    if not failures:
        print("ok   %d JSON profile(s) in %s" % (len(profiles), path))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
