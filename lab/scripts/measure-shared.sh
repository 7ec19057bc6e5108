#!/bin/sh
# The waiting design on a shared machine (docs/ALGORITHMS.md "Waiting"):
# medians of RUNS (default 5) runs, kvmap virtual:2, each lock against
# pthread in the same run (scripts/median-ratio.sh), in the regimes a user
# meets besides the quiet machine:
#   busy   one busy loop per CPU beside the benchmark: 2, 8, 16 threads,
#          every queue lock;
#   cpu0   the benchmark bound to CPU 0 (taskset -c 0): 2, 4, 8 threads,
#          every lock;
#   cache  RocksDB's cache_bench (one shard: one hot mutex) bound to CPU 0
#          under the preload library: 2 and 4 threads, every interposable
#          lock against glibc's mutex, medians of RUNS interleaved runs.
#   lab/scripts/measure-shared.sh [RUNS] [NUMALOCK] [busy,cpu0,cache] > out.txt
set -eu
runs=${1:-5}; cli=${2:-build/bin/numalock}; what=${3:-busy,cpu0,cache}
case $runs in ''|*[!0-9]*|0) echo "$0: RUNS must be a positive number, not '$runs'" >&2; exit 2;; esac
ratio=$(dirname "$0")/../../scripts/median-ratio.sh
queue="mcs cna cna-opt qspinlock qspinlock-cna hmcs c-bo-mcs c-tkt-tkt ticket shfl shfl-block cst-mutex"
every="$queue tas ttas hbo"
interposable="hbo tas ttas ticket qspinlock qspinlock-cna shfl shfl-block"
echo "# machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r); $(date -u +%FT%TZ); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

hogs=""
start_hogs() {
    i=0
    while [ "$i" -lt "$(nproc)" ]; do
        sh -c 'while :; do :; done' & hogs="$hogs $!"
        i=$((i + 1))
    done
}
stop_hogs() { [ -z "$hogs" ] || kill $hogs 2>/dev/null || true; hogs=""; }
trap stop_hogs EXIT INT TERM

case ",$what," in *,busy,*)
    echo "## busy: $(nproc) busy loops beside it; lock / pthread ($runs runs)"
    start_hogs
    for t in 2 8 16; do
        for l in $queue; do
            printf '%-3s ' "$t"
            "$ratio" "$runs" "$cli" kvmap --lock "$l,pthread" --threads "$t" --duration 1 \
                --topology virtual:2 | tail -1
        done
    done
    stop_hogs ;;
esac

case ",$what," in *,cpu0,*)
    echo "## cpu0: taskset -c 0; lock / pthread ($runs runs)"
    for t in 2 4 8; do
        for l in $every; do
            printf '%-3s ' "$t"
            taskset -c 0 "$ratio" "$runs" "$cli" kvmap --lock "$l,pthread" --threads "$t" \
                --duration 1 --topology virtual:2 | tail -1
        done
    done ;;
esac

case ",$what," in *,cache,*)
    if ! command -v cache_bench >/dev/null; then
        echo "## cache: no cache_bench (apt-get install rocksdb-tools)"
        exit 0
    fi
    echo "## cache: taskset -c 0 cache_bench -threads=T -ops_per_thread=200000 -num_shard_bits=0 -populate_cache=false"
    echo "## median of $runs interleaved runs of 'Rough parallel ops/sec'; locks under numalock run --lock L"
    tmp=$(mktemp -d)
    for t in 2 4; do
        for r in $(seq "$runs"); do
            for l in glibc $interposable; do
                if [ "$l" = glibc ]; then pre=""; else pre="$cli run --lock $l --"; fi
                v=$(timeout 120 taskset -c 0 $pre cache_bench -threads="$t" -ops_per_thread=200000 \
                        -num_shard_bits=0 -populate_cache=false 2>&1 | awk '/Rough parallel ops\/sec/ {print $NF}')
                echo "${v:-0}" >> "$tmp/$t-$l"
            done
        done
        line="threads=$t"
        g=$(sort -n "$tmp/$t-glibc" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
        line="$line glibc=$g"
        for l in $interposable; do
            m=$(sort -n "$tmp/$t-$l" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
            lo=$(sort -n "$tmp/$t-$l" | head -1); hi=$(sort -n "$tmp/$t-$l" | tail -1)
            line="$line $l=$(awk -v a="$m" -v b="$g" 'BEGIN{printf "%.2fx", b ? a / b : 0}')[$lo-$hi]"
        done
        echo "$line"
    done
    rm -rf "$tmp" ;;
esac
