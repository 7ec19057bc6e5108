#!/usr/bin/env python3
"""Calibration of the HP machines' coherence costs on the slides' 1- and
2-socket rows (and on nothing else: the 4-, 8- and 16-socket rows validate).

The published latencies of the Xeon E7 v2 are few (sim/machines.txt says
which are derived), and the library's ticket lock is not the slides' kernel
spinlock (it tries a compare-and-swap before it takes a ticket). So two
parameters of the E7 v2 are set here, each by bisection until the
geometric mean of predicted/published over its rows (each the median of
hp.py's seeds) is 1:
  - c2c_domain_ns (= c2c_socket_ns), on the 1-socket rows (table 1s);
  - remote1_ns, on the rows that cross sockets in the 2-socket tables (2s,
    the round-robin rows of 2s-rr, the rows of 2s-grow past 15 cores).
Prints the values to put into sim/machines.txt for every hp-* machine.

usage: calibrate_hp.py NUMALOCK_SIM [--virtual-ms MS] [--seeds N] [--jobs N]
"""
import argparse
import concurrent.futures
import math
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hp  # noqa: E402

MACHINES = os.path.join(os.path.dirname(hp.HERE), "machines.txt")


def with_params(values):
    """machines.txt with `values` ({key: ns}) in every hp-* section"""
    out, section = [], None
    with open(MACHINES) as f:
        for line in f:
            m = re.match(r"\[(\S+)\]", line)
            if m:
                section = m.group(1)
            k = re.match(r"(\w+)\s*=", line)
            if section and section.startswith("hp-") and k and k.group(1) in values:
                line = "%s = %.2f\n" % (k.group(1), values[k.group(1)])
            out.append(line)
    return "".join(out)


def geomean_ratio(a, rows, values):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(with_params(values))
        path = f.name
    try:
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            done = list(ex.map(lambda r: hp.run(a.sim, r, a.virtual_ms, path, a.seeds), rows))
    finally:
        os.unlink(path)
    return math.exp(sum(math.log(r["predicted"] / r["published"]) for r in done) / len(done))


def bisect(a, rows, fixed, keys, lo, hi, steps=9):
    """the value v of keys (each key = v * its factor) where the geometric mean is 1"""
    for _ in range(steps):
        mid = (lo + hi) / 2
        values = dict(fixed, **{k: mid * f for k, f in keys.items()})
        g = geomean_ratio(a, rows, values)
        print("  %s = %.2f: predicted/published %.3f" % ("/".join(keys), mid, g), flush=True)
        if g > 1:  # too fast: costs too low
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sim")
    ap.add_argument("--virtual-ms", type=float, default=1)
    ap.add_argument("--seeds", type=int, default=3, help="each row the median over seeds 1..N (hp.py's)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    rows = list(hp.rows())
    one = [r for r in rows if r["table"] == "1s"]
    cross = [r for r in rows if r["table"] == "2s" or (r["table"] == "2s-rr" and r["placement"] == "rr") or
             (r["table"] == "2s-grow" and r["cores"] > 15)]
    print("c2c_domain_ns on the 1-socket rows:")
    c2c = bisect(a, one, {}, {"c2c_domain_ns": 1, "c2c_socket_ns": 1}, 5, 80)
    print("remote1_ns on the rows that cross sockets:")
    fixed = {"c2c_domain_ns": c2c, "c2c_socket_ns": c2c}
    rem = bisect(a, cross, fixed, {"remote1_ns": 1}, 20, 300)
    print("calibrated: c2c_domain_ns = c2c_socket_ns = %.1f, remote1_ns = %.1f" % (c2c, rem))
    return 0


if __name__ == "__main__":
    sys.exit(main())
