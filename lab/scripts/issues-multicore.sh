#!/bin/bash
# The many-core figures of the ShflLocks and the delegation locks, on a
# machine with 16 or more cores. Run from the project root, with a
# .multicore-bundle/ directory holding cache_bench and its libraries (bin/,
# libs/), else the cache_bench on PATH is used, if any:
#   bash lab/scripts/issues-multicore.sh [RUNS]
# Writes into $OUT (default results/multicore-issues-<UTC time>):
#   machine.txt
#   delegation-I.json     16 threads, 5 lines, interval I = 100, 1000,
#                         10000, 1000000: sanl, fc, qspinlock-cna, mcs, pthread
#   kvmap-shfl.json       4, 8, 16, 32, 64 threads, virtual:2:
#                         shfl-block, shfl, hbo, qspinlock-cna, pthread
#   cache_bench.txt       2, 4, 8, 16 threads, medians of RUNS (default 3)
#                         interleaved runs of glibc, hbo, shfl-block,
#                         qspinlock-cna under the preload, with ratios to glibc
# About 6 minutes on 16 cores. Every figure carries its command (JSON
# records) or the command line printed above it.
set -u
cd "$(dirname "$0")/../.."
RUNS=${1:-3}
case $RUNS in ''|*[!0-9]*|0) echo "$0: RUNS must be a positive number, not '$RUNS'" >&2; exit 2;; esac
OUT=${OUT:-results/multicore-issues-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
B=build-multicore
if [ ! -x $B/bin/numalock ]; then
    cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build $B -j "$(nproc)" >"$OUT/build.log" 2>&1 ||
        { echo "build failed: $OUT/build.log"; exit 1; }
fi
N=$B/bin/numalock
PRELOAD=$(pwd)/$B/lib/libnumalock-preload.so
{ git log --oneline -1 2>/dev/null; uname -a; nproc; lscpu 2>/dev/null | grep -E 'Model name|Socket|Core|NUMA'; } >"$OUT/machine.txt"
cat "$OUT/machine.txt"

for I in 100 1000 10000 1000000; do
    $N bench delegation --lock sanl,fc,qspinlock-cna,mcs,pthread --threads 16 --lines 5 --interval $I \
        --duration 1 --json "$OUT/delegation-$I.json"
done
$N bench kvmap --lock shfl-block,shfl,hbo,qspinlock-cna,pthread --threads 4,8,16,32,64 --duration 1 \
    --topology virtual:2 --json "$OUT/kvmap-shfl.json"

CB=""
if [ -x .multicore-bundle/bin/cache_bench ]; then
    CB=.multicore-bundle/bin/cache_bench
    export LD_LIBRARY_PATH=$(pwd)/.multicore-bundle/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
elif command -v cache_bench >/dev/null; then
    CB=$(command -v cache_bench)
fi
if [ -z "$CB" ]; then
    echo "no cache_bench (install rocksdb-tools, or put it in .multicore-bundle/bin)" | tee "$OUT/cache_bench.txt"
else
    tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
    # the rate cache_bench prints; 0 when it failed
    cb() { local r; r=$(timeout 120 env "$@" "$CB" -threads="$T" -ops_per_thread=200000 -num_shard_bits=0 \
                          -populate_cache=false 2>&1 | awk '/Rough parallel ops\/sec/ {print $NF}'); echo "${r:-0}"; }
    median() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
    {
        echo "# cache_bench -threads=T -ops_per_thread=200000 -num_shard_bits=0 -populate_cache=false"
        echo "# median of $RUNS interleaved runs of Rough parallel ops/sec; locks under LD_PRELOAD=$PRELOAD NUMALOCK_LOCK=L"
        for T in 2 4 8 16; do
            rm -f "$tmp"/*
            for r in $(seq "$RUNS"); do
                cb NUMALOCK_UNUSED=1 >>"$tmp/glibc"
                for L in hbo shfl-block qspinlock-cna; do cb LD_PRELOAD="$PRELOAD" NUMALOCK_LOCK=$L >>"$tmp/$L"; done
            done
            base=$(median "$tmp/glibc")
            line="threads=$T glibc=$base"
            for L in hbo shfl-block qspinlock-cna; do
                m=$(median "$tmp/$L")
                line="$line $L=$m ($(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'))"
            done
            echo "$line"
        done
    } | tee "$OUT/cache_bench.txt"
fi
echo "files in $OUT"
