#!/usr/bin/env python3
"""kernel/parse.py LOG --mode on|off|auto --nodes N [--debug] [--json OUT]

Reads the serial log of one kernel/boot.sh run and says PASS or FAIL:
  - the kernel chose the slow path asked for (boot line "numa_spinlock: CNA
    slow path" or "MCS slow path"; debugfs agrees) and saw N NUMA nodes;
  - locktorture ran to its end ("End of test: SUCCESS" when /init unloads
    it), its last Writes line has Fail: 0 and Min > 0 (every writer got the
    lock);
  - no oops, warning, lockdep or spin lock debug report, RCU stall or panic;
  - with --debug, lockdep was running;
  - the CNA counters (debugfs numa_spinlock/stats) were printed before and
    after the torture: the run's figures are the difference.
Exit status 0 on PASS, 1 on FAIL. One summary line on stdout (and the
reasons of a FAIL); with --json the figures go to OUT too.
"""
import argparse
import json
import re
import sys

BAD = [
    r"BUG:", r"WARNING:", r"Kernel panic", r"Oops", r"general protection fault",
    r"possible recursive locking detected", r"inconsistent lock state",
    r"possible circular locking dependency", r"DEBUG_LOCKS_WARN_ON",
    r"INFO: lockdep is turned off",
    r"spinlock .*(bad magic|already unlocked|wrong owner|recursion)",
    r"INFO: rcu_.* detected stalls", r"rcu: INFO: .* detected stalls",
    r"soft lockup", r"hard LOCKUP", r"End of test: FAILURE",
]
WRITES = re.compile(r"Writes:\s+Total:\s+(\d+)\s+Max/Min:\s+(-?\d+)/(-?\d+)\s*(\?\?\?)?\s+Fail:\s+(\d+)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("log")
    ap.add_argument("--mode", choices=["on", "off", "auto"], required=True)
    ap.add_argument("--nodes", type=int, required=True)
    ap.add_argument("--debug", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    try:
        text = open(a.log, errors="replace").read()
    except OSError as e:
        print(f"FAIL {a.label}: cannot read {a.log}: {e.strerror}")
        return 1
    fails = []
    r = {"label": a.label, "log": a.log}

    m = re.search(r"numa_spinlock: (CNA|MCS) slow path \(numa_spinlock=(\w+), (\d+) NUMA nodes", text)
    if not m:
        fails.append("no numa_spinlock boot line (patch not applied?)")
    else:
        path, nodes = m.group(1), int(m.group(3))
        r["path"], r["nodes"] = path, nodes
        want = "CNA" if a.mode == "on" or (a.mode == "auto" and a.nodes > 1) else "MCS"
        if path != want:
            fails.append(f"slow path {path}, expected {want}")
        if nodes != a.nodes:
            fails.append(f"kernel saw {nodes} NUMA nodes, expected {a.nodes}")

    if "End of test: SUCCESS" not in text:
        fails.append("locktorture did not finish (no 'End of test: SUCCESS': hang, crash or timeout)")
    w = WRITES.findall(text)
    if not w:
        fails.append("no locktorture Writes line")
    else:
        total, mx, mn, _, fail = w[-1]
        r.update(writes=int(total), writes_max=int(mx), writes_min=int(mn), torture_fail=int(fail))
        if int(fail):
            fails.append(f"locktorture Fail: {fail}")
        if int(mn) <= 0:
            fails.append(f"a writer never got the lock (Max/Min {mx}/{mn})")
    for pat in BAD:
        mm = re.search(pat, text)
        if mm:
            line = text[text.rfind("\n", 0, mm.start()) + 1:text.find("\n", mm.start())]
            fails.append(f"log: {line.strip()[:160]}")
    if a.debug:
        if "Lock dependency validator" not in text:
            fails.append("debug variant without lockdep")
        r["lockdep"] = True

    # the counters just before the torture and just after it: the run's own
    # kernel messages can land in the middle of a line /init is writing on
    # the same serial console: cut them out of those lines first
    clean = re.sub(r"(?<=[^\n])\[\s*\d+\.\d+\] [^\n]*\n", "", text.replace("\r", ""))
    blocks = dict(re.findall(r"nltest-stats-begin (\w+)\n(.*?)nltest-stats-end", clean, re.S))

    def counters(body):
        return {k: int(v) if v.isdigit() else v for k, v in re.findall(r"nltest-stat (\w+) (\S+)", body)}

    if "before" not in blocks or "after" not in blocks:
        fails.append("numa_spinlock/stats not printed before and after the torture")
    else:
        b, e = counters(blocks["before"]), counters(blocks["after"])
        st = {k: e[k] - b.get(k, 0) if isinstance(e[k], int) and k not in ("nodes", "threshold", "reduce") else e[k]
              for k in e}
        r["stats"] = st
        loc, rem = st.get("handover_local", 0), st.get("handover_remote", 0)
        r["remote_share"] = rem / (loc + rem) if loc + rem else None
        if loc + rem == 0:
            fails.append("no queue hand-over counted (no contention?)")
        want = "cna" if r.get("path") == "CNA" else "mcs"
        if st.get("mode") != want:
            fails.append(f"debugfs says mode {st.get('mode')}, expected {want}")

    r["pass"] = not fails
    r["fails"] = fails
    s = r.get("stats", {})
    share = r.get("remote_share")
    summary = (f"writes {r.get('writes', '?')} (max/min {r.get('writes_max', '?')}/{r.get('writes_min', '?')}, "
               f"fail {r.get('torture_fail', '?')}); hand-overs local {s.get('handover_local', '?')} "
               f"remote {s.get('handover_remote', '?')} (remote share "
               f"{'?' if share is None else f'{100 * share:.1f}%'}), flushes {s.get('flushes', '?')}, "
               f"moves {s.get('moves', '?')}")
    print(f"{'PASS' if not fails else 'FAIL'} {a.label}: {summary}")
    for f in fails:
        print(f"    - {f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(r, f, indent=1)
    return 0 if not fails else 1


if __name__ == "__main__":
    sys.exit(main())
