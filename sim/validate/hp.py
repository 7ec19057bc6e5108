#!/usr/bin/env python3
"""The HP slides' cache-line contention tables on the simulated HP machines.

Every row of hp-slides.csv runs as `numalock sim contention` with the
library's ticket lock (its closest to the slides' Linux 3.0 ticket spinlock),
waiters that spin (NUMALOCK_WAIT=spin: kernel spin locks never sleep), empty
sections (--count 0), one thread per core on the row's sockets, filled first
or taken round-robin, the lock on the row's memory node. Prints each row with
the published and the predicted operations per second per core: the median
over seeds 1..N (--seeds, default 3), with their range. One seed is one
sample: which thread takes which ticket first is settled in the first
microseconds and then kept (each thread takes its next ticket as it
releases), and that order decides how many hand-overs cross sockets.

usage: hp.py NUMALOCK_SIM [--virtual-ms MS] [--seeds N] [--jobs N] [--json FILE] [--tables 4s,8s]
Exit status 1 if a row outside the calibration tables (1s, 2s*) is off by more
than 30 % or a fill-first row is not ahead of its round-robin row.
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CALIBRATION = ("1s", "2s", "2s-grow", "2s-rr")
CORES_PER_SOCKET = 15


def sockets(spec):
    a, _, b = spec.partition("-")
    return list(range(int(a), int(b or a) + 1))


def cpus(placement, socks, n):
    per = [[s * CORES_PER_SOCKET + k for k in range(CORES_PER_SOCKET)] for s in socks]
    if placement == "ff":
        order = [c for p in per for c in p]
    else:
        order = [p[k] for k in range(CORES_PER_SOCKET) for p in per]
    return order[:n]


def rows():
    with open(os.path.join(HERE, "hp-slides.csv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            t, m, pl, so, mem, n, pub = line.strip().split(",")
            yield {"table": t, "machine": m, "placement": pl, "sockets": so, "mem_node": int(mem),
                   "cores": int(n), "published": float(pub)}


def run_seed(sim, row, virtual_ms, machines, seed):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        cpu_list = ",".join(str(c) for c in cpus(row["placement"], sockets(row["sockets"]), row["cores"]))
        cmd = [sim, "contention", "--machine", row["machine"], "--lock", "ticket", "--threads", str(row["cores"]),
               "--cpus", cpu_list, "--mem-node", str(row["mem_node"]), "--count", "0",
               "--virtual-ms", str(virtual_ms), "--seed", str(seed), "--json", out, "--quiet"]
        if machines:
            cmd[2:2] = ["--machines-file", machines]
        env = dict(os.environ, NUMALOCK_WAIT="spin")
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError("%s: %s" % (" ".join(cmd), p.stderr.strip()))
        with open(out) as f:
            rec = json.load(f)["records"][0]
    return float(rec["ops_per_s_per_cpu"]), rec.get("sim_host_s"), "NUMALOCK_WAIT=spin " + " ".join(cmd[:-3])


def run(sim, row, virtual_ms, machines=None, seeds=3):
    """the row's predicted ops/s per core: the median over seeds 1..seeds"""
    got = [run_seed(sim, row, virtual_ms, machines, s) for s in range(1, seeds + 1)]
    each = [g[0] for g in got]
    return dict(row, predicted=statistics.median(each), low=min(each), high=max(each),
                host_s=sum(g[1] or 0 for g in got), command=got[0][2].replace("--seed 1", "--seed S"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sim")
    ap.add_argument("--virtual-ms", type=float, default=2)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json")
    ap.add_argument("--tables")
    a = ap.parse_args()
    todo = [r for r in rows() if not a.tables or r["table"] in a.tables.split(",")]
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        done = list(ex.map(lambda r: run(a.sim, r, a.virtual_ms, seeds=a.seeds), todo))
    bad = 0
    print("%-8s %-7s %-3s %-6s %4s %5s %12s %12s %7s  %s" % ("table", "machine", "cpu", "socks", "mem", "cores",
                                                           "published", "predicted", "ratio", "(seeds' range)"))
    for r in done:
        ratio = r["predicted"] / r["published"]
        cal = r["table"] in CALIBRATION
        off = not cal and abs(ratio - 1) > 0.30
        bad += off
        print("%-8s %-7s %-3s %-6s %4d %5d %12.0f %12.0f %7.2f  (%.2f-%.2f)%s" % (
            r["table"], r["machine"], r["placement"], r["sockets"], r["mem_node"], r["cores"], r["published"],
            r["predicted"], ratio, r["low"] / r["published"], r["high"] / r["published"],
            "  (calibration)" if cal else "  OFF BY MORE THAN 30 %" if off else ""))
    # fill-first ahead of round-robin wherever the slides put them side by side
    for t in sorted({r["table"] for r in done}):
        for r in done:
            if r["table"] == t and r["placement"] == "rr":
                ffs = [f for f in done if f["table"] == t and f["placement"] == "ff" and f["cores"] == r["cores"]]
                for f in ffs:
                    if f["published"] > r["published"] and not f["predicted"] > r["predicted"]:
                        bad += 1
                        print("fill-first not ahead of round-robin: %s, %d cores" % (t, r["cores"]))
    if a.json:
        with open(a.json, "w") as f:
            for r in done:
                f.write(json.dumps(r) + "\n")
    print("hp: %d rows, %s" % (len(done), "every row outside the calibration within 30 %, fill-first ahead"
                               if not bad else "%d problems" % bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
