#!/bin/sh
# Time pthread spin locks (tests/interpose/spin.c) with glibc and under the
# preload library with each NUMALOCK_SPIN, runs interleaved; prints per lock
# the median wall time in ms and every run's time.
#   measure_spin.sh BUILD_DIR RUNS THREADS ITERS LOCK...
set -u
B=$1; runs=$2; t=$3; it=$4; shift 4
L=$(cd "$B/lib" && pwd)/libnumalock-preload.so
tm() { s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "nl_spin $t threads x $it, median of $runs (ms), load $(cut -d' ' -f1-3 /proc/loadavg)"
all="glibc $*"
for l in $all; do eval "r_$(echo "$l" | tr - _)=''"; done
for r in $(seq "$runs"); do
    for l in $all; do
        if [ "$l" = glibc ]; then v=$(tm "$B/bin/nl_spin" "$t" "$it")
        else v=$(LD_PRELOAD=$L NUMALOCK_SPIN=$l tm "$B/bin/nl_spin" "$t" "$it"); fi
        k=r_$(echo "$l" | tr - _); eval "$k=\"\$$k $v\""
    done
done
for l in $all; do k=r_$(echo "$l" | tr - _); eval "v=\$$k"; echo "  $l: $(echo $v | med)  ($v)"; done
