#!/bin/sh
# Compare one lock under two waiting policies: RUNS interleaved pairs of runs
# (NUMALOCK_WAIT=A, then NUMALOCK_WAIT=B, same benchmark), and the median
# ratio of A's throughput to B's, with A's share of hand-overs to a parked
# waiter and fairness factor per run.
#   scripts/policy-ratio.sh RUNS NUMALOCK A B WORKLOAD --lock L [bench options...]
# Example (the default policy against pure spinning, 2 threads):
#   scripts/policy-ratio.sh 5 build/bin/numalock adaptive spin kvmap --lock mcs \
#       --threads 2 --duration 1 --topology virtual:2
set -eu
if [ $# -lt 6 ]; then
    echo "usage: $0 RUNS NUMALOCK POLICY_A POLICY_B WORKLOAD --lock L [bench options...]" >&2
    exit 2
fi
runs=$1; cli=$2; pa=$3; pb=$4; shift 4
case $runs in ''|*[!0-9]*) echo "$0: RUNS must be a positive number, not '$runs'" >&2; exit 2;; esac
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
i=0
while [ "$i" -lt "$runs" ]; do
    i=$((i + 1))
    NUMALOCK_WAIT=$pa "$cli" bench "$@" --quiet --json "$tmp/a$i.json" >/dev/null
    NUMALOCK_WAIT=$pb "$cli" bench "$@" --quiet --json "$tmp/b$i.json" >/dev/null
done
python3 - "$tmp" "$runs" "$pa" "$pb" <<'PY'
import json, sys, statistics
tmp, runs, pa, pb = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rows = []
for i in range(1, runs + 1):
    a = json.load(open(f"{tmp}/a{i}.json"))["records"][0]
    b = json.load(open(f"{tmp}/b{i}.json"))["records"][0]
    ho = a.get("handovers") or 0
    rows.append((a["throughput_ops_per_s"] / b["throughput_ops_per_s"],
                 (a.get("handovers_to_parked") or 0) / ho if ho else 0.0,
                 a.get("fairness_factor", 0.0), a["lock"]))
for r, parked, ff, lock in rows:
    print(f"  {lock} {pa}/{pb} {r:.3f}x  to parked {100 * parked:.2f}%  fairness {ff:.3f}")
rs = [r[0] for r in rows]
print(f"median {rows[0][3]} {pa}/{pb}: {statistics.median(rs):.3f}x (min {min(rs):.3f}, max {max(rs):.3f}); "
      f"hand-overs to a parked waiter max {100 * max(r[1] for r in rows):.2f}%")
PY
