#!/bin/sh
# Repeat a two-lock benchmark and print the median ratio of the first lock's
# throughput to the second's, with the first lock's remote hand-over share,
# fairness factor and share of hand-overs to a parked waiter per run: wall-time ratios on a shared machine move by tens of
# percent from run to run, their median over several runs much less.
#   scripts/median-ratio.sh RUNS NUMALOCK WORKLOAD --lock A,B [bench options...]
# Example:
#   scripts/median-ratio.sh 7 build/bin/numalock kvmap --lock cst-mutex,pthread \
#       --threads 16 --duration 1 --topology virtual:2
set -eu
if [ $# -lt 4 ]; then
    echo "usage: $0 RUNS NUMALOCK WORKLOAD --lock A,B [bench options...]" >&2
    exit 2
fi
runs=$1; cli=$2; shift 2
case $runs in ''|*[!0-9]*) echo "$0: RUNS must be a positive number, not '$runs'" >&2; exit 2;; esac
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
i=0
while [ "$i" -lt "$runs" ]; do
    i=$((i + 1))
    "$cli" bench "$@" --quiet --json "$tmp/run$i.json" >/dev/null
done
python3 - "$tmp" "$runs" <<'PY'
import json, sys, statistics
tmp, runs = sys.argv[1], int(sys.argv[2])
rows = []
for i in range(1, runs + 1):
    recs = json.load(open(f"{tmp}/run{i}.json"))["records"]
    if len(recs) < 2:
        sys.exit("median-ratio: the benchmark must compare two locks (--lock A,B)")
    a, b = recs[0], recs[1]
    ho = a.get("handovers", 0) or 0
    rows.append((a["throughput_ops_per_s"] / b["throughput_ops_per_s"],
                 (a.get("remote_handovers") or 0) / ho if ho else 0.0,
                 a.get("fairness_factor", 0.0), a["lock"], b["lock"],
                 (a.get("handovers_to_parked") or 0) / ho if ho else 0.0,
                 b.get("fairness_factor", 0.0)))
for r, rem, ff, la, lb, parked, ffb in rows:
    print(f"  {la}/{lb} {r:.3f}x  remote {100 * rem:.1f}%  fairness {ff:.3f} ({lb} {ffb:.3f})"
          f"  to parked {100 * parked:.2f}%")
print(f"median {rows[0][3]}/{rows[0][4]}: {statistics.median(r[0] for r in rows):.3f}x "
      f"(min {min(r[0] for r in rows):.3f}, max {max(r[0] for r in rows):.3f}); "
      f"remote share median {100 * statistics.median(r[1] for r in rows):.1f}%, "
      f"max {100 * max(r[1] for r in rows):.1f}%; fairness median {statistics.median(r[2] for r in rows):.3f}, "
      f"max {max(r[2] for r in rows):.3f}; hand-overs to a parked waiter max {100 * max(r[5] for r in rows):.2f}%")
PY
