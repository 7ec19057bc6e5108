#!/bin/sh
# RocksDB's cache_bench (one shard: one hot mutex) under the preload library:
# RUNS interleaved rounds of glibc and each lock, the median of "Rough
# parallel ops/sec" and its ratio to glibc's median (above 1: faster).
#   measure_cache_bench.sh NUMALOCK_CLI "LOCK LOCK ..." RUNS THREADS OPS_PER_THREAD
# cache_bench comes from Debian's rocksdb-tools.
set -u
cli=$1; locks=$2; runs=$3; threads=$4; ops=$5
command -v cache_bench >/dev/null || { echo "cache_bench is not installed (apt-get install rocksdb-tools)" >&2; exit 77; }
lib=$(cd "$(dirname "$cli")/../lib" && pwd)/libnumalock-preload.so
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cb() { cache_bench -num_shard_bits=0 -threads="$threads" -ops_per_thread="$ops" -populate_cache=false 2>&1 |
       awk '/Rough parallel ops\/sec/ {print $NF}'; }
for r in $(seq "$runs"); do
    cb >>"$tmp/glibc"
    for l in $locks; do LD_PRELOAD=$lib NUMALOCK_LOCK=$l cb >>"$tmp/$l"; done
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(median "$tmp/glibc")
echo "cache_bench one shard, $threads threads x $ops ops, median of $runs interleaved runs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "  %-14s %12s ops/s  %6s\n" glibc "$base" "1.00x"
for l in $locks; do
    m=$(median "$tmp/$l")
    printf "  %-14s %12s ops/s  %5.2fx\n" "$l" "$m" "$(echo "$m / $base" | bc -l)"
done
