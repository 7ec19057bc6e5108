#!/usr/bin/env python3
"""Compare a measured core-to-core latency matrix with a reference one.

Usage: c2c-compare.py MEASURED REFERENCE [--tolerance 0.2]

Each file is either `numalock topo --measure --json` output or a text matrix
as `numalock topo --measure` prints it (and docs/measurements/*/c2c.txt
holds it: a header "cpu ID ID ...", then "ID v v ..." rows, '-' on the
diagonal). An asymmetric matrix is averaged per pair. Prints, per pair, the
ratio measured / reference, then the median ratio, the median deviation and
the share of pairs within the tolerance; exits 0 when the median deviation
is within the tolerance, 1 when not, 2 on bad input (one sentence).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys


def load(path: str) -> tuple[list[int], list[list[float | None]]]:
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as exc:
        raise SystemExit(f"c2c-compare.py: cannot read {path} ({exc.strerror}).") from None
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
            rec = next(r for r in doc["records"] if r.get("workload") == "c2c")
            return list(rec["cpus"]), rec["matrix_ns"]
        except (ValueError, KeyError, StopIteration, TypeError):
            raise SystemExit(f"c2c-compare.py: {path} is not `numalock topo --measure --json` output.") from None
    rows = [line.split() for line in text.splitlines() if line.strip()]
    try:
        rows = rows[next(i for i, r in enumerate(rows) if r[0] == "cpu"):]
        cpus = [int(x) for x in rows[0][1:]]
        matrix = []
        for row, cpu in zip(rows[1:len(cpus) + 1], cpus):
            if int(row[0]) != cpu or len(row) != len(cpus) + 1:
                raise ValueError
            matrix.append([None if v == "-" else float(v) for v in row[1:]])
        if len(matrix) != len(cpus):
            raise ValueError
    except (ValueError, StopIteration, IndexError):
        raise SystemExit(f"c2c-compare.py: {path} is not a matrix ('cpu ID ...' header, one row per CPU).") from None
    return cpus, matrix


def pair(m: list[list[float | None]], i: int, j: int) -> float | None:
    vals = [v for v in (m[i][j], m[j][i]) if v is not None]
    return sum(vals) / len(vals) if vals else None


def main() -> int:
    ap = argparse.ArgumentParser(description="Compare two core-to-core latency matrices.")
    ap.add_argument("measured")
    ap.add_argument("reference")
    ap.add_argument("--tolerance", type=float, default=0.2)
    a = ap.parse_args()
    try:
        cm, mm = load(a.measured)
        cr, mr = load(a.reference)
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    common = [c for c in cm if c in cr]
    if len(common) < 2:
        print(f"c2c-compare.py: the matrices share {len(common)} CPU(s); at least 2 are needed.", file=sys.stderr)
        return 2
    ratios = []
    print("cpu  cpu  measured  reference  ratio")
    for x in range(len(common)):
        for y in range(x + 1, len(common)):
            a_, b_ = common[x], common[y]
            m = pair(mm, cm.index(a_), cm.index(b_))
            r = pair(mr, cr.index(a_), cr.index(b_))
            if m is None or r is None or r <= 0:
                continue
            ratios.append(m / r)
            print(f"{a_:3d}  {b_:3d}  {m:8.1f}  {r:9.1f}  {m / r:5.2f}")
    dev = statistics.median(abs(q - 1) for q in ratios)
    within = sum(abs(q - 1) <= a.tolerance for q in ratios) / len(ratios)
    ok = dev <= a.tolerance
    print(f"{len(ratios)} pairs: median ratio {statistics.median(ratios):.2f}, median deviation {dev:.1%}, "
          f"{within:.0%} of pairs within {a.tolerance:.0%}: {'agrees' if ok else 'does not agree'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
