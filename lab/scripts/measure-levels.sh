#!/bin/sh
# The hierarchy's figures (docs/ALGORITHMS.md "Hierarchies"): kvmap on a
# virtual hierarchy, medians of RUNS runs per lock and thread count: ops/s,
# the share of hand-overs that crossed each level, the fairness factor.
#   lab/scripts/measure-levels.sh [RUNS] [NUMALOCK] [TOPOLOGY] [LOCKS] [THREADS] > out.txt
# Defaults: 5 runs, build/bin/numalock, virtual:2x2, "hmcs hmcs-n cna qspinlock-cna mcs", "4 16".
set -eu
runs=${1:-5}; cli=${2:-build/bin/numalock}; topo=${3:-virtual:2x2}
locks=${4:-hmcs hmcs-n cna qspinlock-cna mcs}; threads=${5:-4 16}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "# machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r); $(date -u +%FT%TZ); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "# kvmap --topology $topo --duration 1, medians of $runs runs (min-max)"
for t in $threads; do
    for l in $locks; do
        i=0
        while [ "$i" -lt "$runs" ]; do
            i=$((i + 1))
            "$cli" bench kvmap --lock "$l" --threads "$t" --duration 1 --topology "$topo" --quiet \
                --json "$tmp/$l.$t.$i.json" >/dev/null
        done
        python3 - "$tmp" "$l" "$t" "$runs" <<'PY'
import json, statistics, sys
tmp, lock, t, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
recs = [json.load(open(f"{tmp}/{lock}.{t}.{i}.json"))["records"][0] for i in range(1, runs + 1)]
def med(xs):
    xs = [x for x in xs if x is not None]
    return (statistics.median(xs), min(xs), max(xs)) if xs else (float("nan"),) * 3
ops = med([r["throughput_ops_per_s"] for r in recs])
fair = med([r["fairness_factor"] for r in recs])
levels = list(recs[0].get("crossings", {}).keys())
cross = " ".join(f"{name} {100*m:.1f}% ({100*a:.1f}-{100*b:.1f})" for name in levels
                 for m, a, b in [med([r["crossings"][name] for r in recs])])
print(f"{lock:14s} {t:>3s} threads: {ops[0]/1e6:6.2f} M ops/s ({ops[1]/1e6:.2f}-{ops[2]/1e6:.2f}); "
      f"crossed: {cross}; fairness {fair[0]:.3f} (max {fair[2]:.3f})")
PY
    done
done
