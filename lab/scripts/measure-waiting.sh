#!/bin/sh
# The waiting design's figures on this machine (docs/ALGORITHMS.md "Waiting"):
# medians of RUNS (default 5) runs, kvmap virtual:2 unless said.
#   - 2 threads: each queue lock under the default policy against itself
#     under NUMALOCK_WAIT=spin, with the share of hand-overs to a parked waiter;
#   - 16 threads: each queue lock and cst-mutex against pthread, with fairness;
#   - rwhash 90 % reads, 10 threads: cst-rwsem against pthread-rwlock.
#   lab/scripts/measure-waiting.sh [RUNS] [NUMALOCK] > out.txt
set -eu
runs=${1:-5}; cli=${2:-build/bin/numalock}
ratio=$(dirname "$0")/../../scripts/median-ratio.sh
locks="mcs cna cna-opt qspinlock qspinlock-cna hmcs c-bo-mcs c-tkt-tkt ticket shfl shfl-block cst-mutex"
echo "# machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r); $(date -u +%FT%TZ); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "## 2 threads: default policy / spin policy ($runs runs)"
for l in $locks; do
    "$ratio" --wait adaptive,spin "$runs" "$cli" kvmap --lock "$l" --threads 2 --duration 1 --topology virtual:2 | tail -1
done
echo "## 16 threads: lock / pthread ($runs runs)"
for l in $locks; do
    "$ratio" "$runs" "$cli" kvmap --lock "$l,pthread" --threads 16 --duration 1 --topology virtual:2 | tail -1
done
echo "## rwhash 90 % reads, 10 threads: cst-rwsem / pthread-rwlock ($runs runs)"
"$ratio" "$runs" "$cli" rwhash --lock cst-rwsem,pthread-rwlock --read-pct 90 --threads 10 --duration 1 | tail -1
