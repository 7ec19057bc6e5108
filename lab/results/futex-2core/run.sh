#!/bin/sh
# The runs of this folder, as they were made (from the repository root, a
# Release build in build-futex/). Each numalock bench file is packed to
# JSON Lines with lab/results/jsonl.py.
set -eu
NL=build-futex/bin/numalock
OUT=${1:-/tmp/futex-2core}
mkdir -p "$OUT"
# perf bench futex hash: private hash x call x threads x futexes, 5 rounds
$NL bench futex-hash --threads 2,8 --futexes 1024,32768 --hash default,global,16,64,256,1024,4096 \
    --call futex,futex2,futex2-numa --repeat 5 --duration 1 --json "$OUT/futex-hash.json"
# wake, wake-parallel, requeue
for w in futex-wake futex-requeue; do
    $NL bench $w --threads 4,16 --hash default,global,1024 --call futex,futex2,futex2-numa --repeat 5 --json "$OUT/$w.json"
done
$NL bench futex-wake-parallel --threads 4,16 --wakers 2 --hash default,global,1024 --call futex,futex2,futex2-numa --repeat 5 \
    --json "$OUT/futex-wake-parallel.json"
# wake calls per release: every lock that can park, kvmap, 2 and 16 threads, 3 runs per policy
LOCKS=tas,ttas,ticket,mcs,clh,hemlock,reciprocating,reciprocating-numa,hbo,cna,cna-opt,qspinlock,qspinlock-cna,shfl
LOCKS=$LOCKS,shfl-block,c-bo-mcs,c-tkt-tkt,hmcs,hmcs-n,c-tkt-n,cst-mutex,cst-rwsem,futex-rwlock,sanl,fc
for run in 1 2 3; do
    for pol in adaptive park; do
        NUMALOCK_WAIT=$pol $NL bench kvmap --lock $LOCKS --threads 2,16 --duration 1 --json "$OUT/wakes-$pol-$run.json"
    done
done
# 8 threads over 4096 condition variables (tests/futex/cond.c), the default hash against 1024 slots, under
# the preload's condition variables and under glibc's (--lock pthread), 15 interleaved rounds
for run in $(seq 15); do
    for lock in hbo pthread; do
        for hash in default 1024; do
            opt=""; [ $hash = default ] || opt="--futex-hash $hash"
            printf '{"round": %d, "lock": "%s", "hash": "%s", "run": ' $run $lock $hash
            $NL run --lock $lock $opt -- build-futex/bin/futex_cond --threads 8 --condvars 4096 --seconds 2 |
                tr -d '\n'
            echo '}'
        done
    done
done >"$OUT/cond.jsonl"
