#!/bin/sh
# The four newest queue locks (clh, hemlock, reciprocating, reciprocating-numa) beside mcs, cna,
# qspinlock-cna and pthread: kvmap on virtual:2, the simulated cna-2s machine, instructions per pair.
#   sh lab/results/newlocks-2core/run.sh NUMALOCK OUTDIR     (e.g. build/bin/numalock)
# kvmap: 5 runs, each one process with every lock at 1, 2, 4, 16 threads, the lock order rotated
# from run to run (interleaved); medians by summary.py.
set -eu
cli=$1; out=$2; mkdir -p "$out"
locks="mcs cna qspinlock-cna clh hemlock reciprocating reciprocating-numa pthread"
for i in 1 2 3 4 5; do
    set -- $locks; r=$(( (i - 1) % $# )); j=0; order=""
    for l in "$@"; do j=$((j + 1)); [ $j -gt $r ] && order="$order,$l"; done
    j=0; for l in "$@"; do j=$((j + 1)); [ $j -le $r ] && order="$order,$l"; done
    "$cli" bench kvmap --lock "${order#,}" --threads 1,2,4,16 --duration 1 --topology virtual:2 \
        --quiet --json "$out/kvmap-$i.json"
done
"$cli" sim kvmap --machine cna-2s --lock mcs,cna,qspinlock-cna,clh,hemlock,reciprocating,reciprocating-numa \
    --threads 1,2,4,8,16,36,70 --virtual-ms 10 --quiet --json "$out/sim-cna-2s.json"
"$cli" bench instructions --lock mcs,qspinlock,clh,hemlock,reciprocating,reciprocating-numa,pthread \
    --quiet --json "$out/instructions.json"
# Waiters that queue in the lock (park at once), 16 threads: the locks' own remote shares (the gate decides above)
for i in 1 2 3 4 5; do
    case $i in 1|5) o=mcs,cna,reciprocating,reciprocating-numa ;; 2) o=cna,reciprocating,reciprocating-numa,mcs ;;
        3) o=reciprocating,reciprocating-numa,mcs,cna ;; 4) o=reciprocating-numa,mcs,cna,reciprocating ;; esac
    NUMALOCK_WAIT=park "$cli" bench kvmap --lock $o --threads 16 --duration 1 --topology virtual:2 \
        --quiet --json "$out/park16-$i.json"
done
# One socket (both threads on socket 0): the walk's and the hand-over's cost without NUMA
"$cli" sim kvmap --machine cna-2s --lock mcs,reciprocating,reciprocating-numa --threads 2,3 --virtual-ms 10 \
    --placement fill --quiet --json "$out/sim-cna-2s-fill.json"
# The .json files were packed into this folder's .jsonl (lab/results/jsonl.py pack); medians: summary.py
