#!/bin/sh
# Time the lock-bound program with and without the preload library.
#   measure.sh NUMALOCK_CLI LOCKBOUND_BIN "LOCK LOCK ..." RUNS THREADS ITERS
# Prints, per lock, the median wall time of RUNS runs and its ratio of
# speed to glibc (glibc time / lock time: above 1 is faster than glibc).
# The preload library is set with LD_PRELOAD directly (no `numalock run`
# process in the timing); "pthread" is glibc's mutex behind the interposer.
set -u
cli=$1; lb=$2
lib=$(cd "$(dirname "$cli")/../lib" && pwd)/libnumalock-preload.so; locks=$3; runs=$4; threads=$5; iters=$6
t() { s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(for r in $(seq "$runs"); do t "$lb" "$threads" "$iters"; done | median)
echo "lockbound $threads threads x $iters, median of $runs runs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "  %-14s %10.3f s  %6s\n" glibc "$(echo "$base / 1000000" | bc -l)" "1.00x"
for l in $locks; do
    m=$(for r in $(seq "$runs"); do LD_PRELOAD=$lib NUMALOCK_LOCK=$l t "$lb" "$threads" "$iters"; done | median)
    printf "  %-14s %10.3f s  %5.2fx\n" "$l" "$(echo "$m / 1000000" | bc -l)" "$(echo "$base / $m" | bc -l)"
done
