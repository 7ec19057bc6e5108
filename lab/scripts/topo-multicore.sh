#!/bin/bash
# Topology by measurement on a many-core machine: the core-to-core
# matrix compared with a reference c2c.txt, and the contention
# table for every lock at 1..N threads (N = CPUs, up to 16). Run from the
# project root; writes into $OUT (default results/multicore-topo-<UTC time>).
#   bash lab/scripts/topo-multicore.sh [REFERENCE_C2C_TXT]
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-results/multicore-topo-$(date -u +%Y%m%dT%H%M%SZ)}
REF=${1:-lab/results/16core-park/c2c.txt}
mkdir -p "$OUT"
B=build-multicore
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build $B -j "$(nproc)" >"$OUT/build.log" 2>&1 ||
    { echo "build failed: $OUT/build.log"; exit 1; }
N=$B/bin/numalock
{ uname -a; nproc; lscpu 2>/dev/null | head -20; } >"$OUT/machine.txt"
NUMALOCK_TOPOLOGY_FILE="$OUT/measured-topology" $N topo --measure --budget 60 --json "$OUT/c2c.json" | tee "$OUT/c2c.txt"
[ -f "$REF" ] && python3 lab/scripts/c2c-compare.py "$OUT/c2c.json" "$REF" >"$OUT/compare.txt"; tail -1 "$OUT/compare.txt" 2>/dev/null
n=$(nproc); [ "$n" -gt 16 ] && n=16
threads=$(seq -s, 1 "$n")
$N bench contention --lock all --threads "$threads" --cpus fill --duration 0.5 --json "$OUT/contention.json" | tee "$OUT/contention.txt"
NUMALOCK_TOPOLOGY_FILE="$OUT/measured-topology" $N bench contention --lock all --threads "$threads" --cpus rr \
    --topology measured --duration 0.5 --json "$OUT/contention-measured-rr.json" >"$OUT/contention-measured-rr.txt"
echo "files in $OUT"
