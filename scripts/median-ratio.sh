#!/bin/sh
# Repeat a benchmark RUNS times and print the median throughput ratio with
# its min and max: wall-time ratios on a shared machine move by tens of
# percent from run to run, their median over several runs much less.
#   scripts/median-ratio.sh [--wait A,B | --env VAR=A,B] RUNS NUMALOCK WORKLOAD --lock L[,M] [bench options...]
# Two locks in one run (--lock A,B): the first lock's throughput over the
# second's, with the first lock's remote hand-over share, fairness factor and
# share of hand-overs to a parked waiter per run.
# --env VAR=A,B: RUNS interleaved pairs of runs, VAR=A then VAR=B, and the
# ratio of the first lock's throughput under A to under B, with its share of
# hand-overs to a parked waiter and fairness factor under A. --wait A,B is
# --env NUMALOCK_WAIT=A,B (one lock under two waiting policies).
# Examples:
#   scripts/median-ratio.sh 7 build/bin/numalock kvmap --lock cst-mutex,pthread \
#       --threads 16 --duration 1 --topology virtual:2
#   scripts/median-ratio.sh --wait adaptive,spin 5 build/bin/numalock kvmap --lock mcs \
#       --threads 2 --duration 1 --topology virtual:2
set -eu
usage="usage: $0 [--wait A,B | --env VAR=A,B] RUNS NUMALOCK WORKLOAD --lock L[,M] [bench options...]"
var=""; va=""; vb=""
case ${1:-} in
    -h|--help) echo "$usage"; exit 0 ;;
    --wait|--env)
        [ $# -ge 2 ] || { echo "$0: $1 needs a value (A,B)" >&2; exit 2; }
        if [ "$1" = --wait ]; then spec="NUMALOCK_WAIT=$2"; else spec=$2; fi
        var=${spec%%=*}; pair=${spec#*=}; va=${pair%%,*}; vb=${pair#*,}
        case $var in ''|*[!A-Za-z0-9_]*) var="" ;; esac
        if [ -z "$var" ] || [ "$spec" = "$pair" ] || [ "$pair" = "$va" ] || [ -z "$va" ] || [ -z "$vb" ]; then
            echo "$0: $1 '$2' is not valid: give two values A,B (--wait A,B or --env VAR=A,B)" >&2; exit 2
        fi
        shift 2 ;;
esac
if [ $# -lt 4 ]; then echo "$usage" >&2; exit 2; fi
runs=$1; cli=$2; shift 2
case $runs in ''|0|*[!0-9]*) echo "$0: RUNS must be a positive number, not '$runs'" >&2; exit 2;; esac
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
i=0
while [ "$i" -lt "$runs" ]; do
    i=$((i + 1))
    if [ -z "$var" ]; then
        "$cli" bench "$@" --quiet --json "$tmp/a$i.json" >/dev/null
    else
        env "$var=$va" "$cli" bench "$@" --quiet --json "$tmp/a$i.json" >/dev/null
        env "$var=$vb" "$cli" bench "$@" --quiet --json "$tmp/b$i.json" >/dev/null
    fi
done
python3 - "$tmp" "$runs" "$va" "$vb" <<'PY'
import json, os, sys, statistics
tmp, runs, va, vb = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
pairs = bool(va)
def load(name):
    return json.load(open(os.path.join(tmp, name)))["records"]
def share(rec, key):
    ho = rec.get("handovers") or 0
    return (rec.get(key) or 0) / ho if ho else 0.0
rows = []
for i in range(1, runs + 1):
    recs = load(f"a{i}.json")
    a = recs[0]
    b = load(f"b{i}.json")[0] if pairs else next((r for r in recs[1:] if r["lock"] != a["lock"]
                                                  and r.get("threads") == a.get("threads")), None)
    if b is None:
        sys.exit("median-ratio: the benchmark must compare two locks (--lock A,B) at one thread count, "
                 "or one lock under --wait A,B / --env VAR=A,B")
    if not b.get("throughput_ops_per_s"):
        sys.exit(f"median-ratio: the workload gives no throughput to compare ({b['lock']}: 0 ops/s)")
    rows.append(dict(r=a["throughput_ops_per_s"] / b["throughput_ops_per_s"], la=a["lock"], lb=b["lock"],
                     remote=share(a, "remote_handovers"), parked=share(a, "handovers_to_parked"),
                     ff=a.get("fairness_factor") or 0.0, ffb=b.get("fairness_factor") or 0.0))
rs = [r["r"] for r in rows]
ratio = f"{statistics.median(rs):.3f}x (min {min(rs):.3f}, max {max(rs):.3f})"
parked = f"hand-overs to a parked waiter max {100 * max(r['parked'] for r in rows):.2f}%"
if pairs:
    for r in rows:
        print(f"  {r['la']} {va}/{vb} {r['r']:.3f}x  to parked {100 * r['parked']:.2f}%  fairness {r['ff']:.3f}")
    print(f"median {rows[0]['la']} {va}/{vb}: {ratio}; {parked}")
    sys.exit(0)
for r in rows:
    print(f"  {r['la']}/{r['lb']} {r['r']:.3f}x  remote {100 * r['remote']:.1f}%  fairness {r['ff']:.3f}"
          f" ({r['lb']} {r['ffb']:.3f})  to parked {100 * r['parked']:.2f}%")
med = statistics.median
print(f"median {rows[0]['la']}/{rows[0]['lb']}: {ratio}; "
      f"remote share median {100 * med(r['remote'] for r in rows):.1f}%, max {100 * max(r['remote'] for r in rows):.1f}%; "
      f"fairness median {med(r['ff'] for r in rows):.3f}, max {max(r['ff'] for r in rows):.3f}; {parked}")
PY
