#!/bin/sh
# Model-check the Spin models in verify/ (each .pml's header says what it
# models and checks).
#   verify/run.sh [cna]                  verify/cna.pml, the model of src/locks/cna.c
#                                        (mutual exclusion, no lost waiter, progress,
#                                        empty queues at the end): must pass
#   verify/run.sh [cna] --broken         each deliberately broken variant: must fail
#   verify/run.sh [cna] --full           adds 4 threads x 2 rounds (~10 minutes)
#   verify/run.sh qspinlock              verify/qspinlock.pml, the lock word of
#                                        src/locks/qspinlock.c (safety as above, no
#                                        starved pending waiter, no starved thread):
#                                        must pass
#   verify/run.sh qspinlock --broken     each deliberately broken variant, and the
#                                        first version without each of its four
#                                        fixes: must fail
#   verify/run.sh sanl                   verify/sanl.pml, SANL's mode switch and server
#                                        hand-over (src/locks/sanl_impl.h): mutual
#                                        exclusion, exactly-once, no lost request
#   verify/run.sh sanl --broken          its three broken variants: must fail
#   verify/run.sh shfl                   verify/shfl.pml, ShflLock's lock word, queue,
#                                        shuffle pass and hand-over (src/locks/shfl.c):
#                                        mutual exclusion, one shuffle pass at a time,
#                                        no lost waiter; --full adds 3 threads x 2
#                                        rounds (5e7 states, ~4 minutes)
#   verify/run.sh shfl --broken          its three broken variants: must fail
# Exit status 0 when every run gave the expected verdict.
set -u
here=$(cd "$(dirname "$0")" && pwd)
command -v spin >/dev/null 2>&1 || { echo "verify: spin is not installed (scripts/deps.d/spin.sh)"; exit 77; }
model=cna
case "${1:-}" in
cna|qspinlock|sanl|shfl) model=$1; shift ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# $1 = -D flags, $2 = safety (default) or liveness; prints the verdict line,
# returns 0 if no error found, 1 if one was, 2 if spin, cc or pan failed.
# safety: assertions and invalid end states (lost waiters); liveness:
# non-progress cycles under weak fairness. Sets `incomplete` when the search
# was cut short (depth limit).
check() {
    incomplete=
    spin -a $1 "$here/$model.pml" >spin.log 2>&1 || { cat spin.log; return 2; }
    if [ "${2:-safety}" = liveness ]; then
        cc -O2 -w -DNP -DCOLLAPSE -o pan pan.c >cc.log 2>&1 || { cat cc.log; return 2; }
        ./pan -m3000000 -l -f >pan.log 2>&1
    else
        cc -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c >cc.log 2>&1 || { cat cc.log; return 2; }
        ./pan -m100000 >pan.log 2>&1   # invalid end states (lost waiters) are checked by default
    fi
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | head -1)
    states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log | head -1)
    secs=$(sed -n 's/^pan: elapsed time \([0-9.e+]*\) seconds.*/\1/p' pan.log | head -1)
    what=$(grep -E "assertion violated|invalid end state \(|non-progress cycle \(|max search depth too small" pan.log | head -1)
    grep -q "max search depth too small" pan.log && incomplete=1
    mode=; [ "${2:-safety}" = liveness ] && mode=" (liveness)"
    echo "  $1$mode: errors=$errors states=$states time=${secs}s ${what:+($what)}"
    case "$errors" in
    0) return 0 ;;
    [1-9]*) return 1 ;;
    *) tail -5 pan.log; return 2 ;;
    esac
}

# $1 = configurations (flags joined by @), $2 = safety or liveness: each must pass
must_pass() {
    for c in $1; do
        flags=$(echo "$c" | tr @ ' ')
        if check "$flags" "$2" && [ -z "$incomplete" ]; then echo "verify: PASS $model.pml $flags"
        else echo "verify: FAIL $model.pml $flags"; rc=1; fi
    done
}

# $1 = broken variant, $2 = flags, $3 = safety or liveness: must yield a counterexample
must_fail() {
    check "-DBROKEN=$1 $2" "$3"
    if [ $? = 1 ]; then echo "verify: broken variant $1 caught (counterexample found)"
    else echo "verify: FAIL: broken variant $1 was not caught"; rc=1; fi
}

rc=0
case "$model" in
cna)
    # quick (CTest): 4 threads x 1 round (secondary queue of two, both unlock CAS
    # cases) and 3 threads x 2 rounds (re-entry behind a secondary queue);
    # --full adds 4 threads x 2 rounds (about 2.4e8 states, ~10 minutes here)
    case "${1:-}" in
    --broken)
        for b in 1 2 3; do must_fail $b "-DN=4 -DROUNDS=1" safety; done ;;
    *)
        configs="-DN=4@-DROUNDS=1 -DN=3@-DROUNDS=2"
        [ "${1:-}" = "--full" ] && configs="$configs -DN=4@-DROUNDS=2"
        must_pass "$configs" safety ;;
    esac ;;
qspinlock)
    # safety: 4 threads x 1 round and 3 threads x 3 rounds; liveness: 3
    # threads acquiring forever, the pending waiter not starved, and no
    # thread starved (thread 0 watched, the threads are symmetric). 4 threads
    # are out of reach for liveness here (over 1e8 states before the fairness
    # copies).
    live="-DFOREVER@-DN=3"
    case "${1:-}" in
    --broken)
        # the protocol's guards: 1-5 (see verify/qspinlock.pml)
        for b in 1 2; do must_fail $b "$(echo "$live" | tr @ ' ')" liveness; done
        for b in 3 4 5; do must_fail $b "-DN=3 -DROUNDS=2" safety; done
        # each fix of the first version is needed: without it a thread starves
        for f in COUNT_LOST_CLAIM HEAD_LOST_CLAIM_NOSTEAL XCHG_TAIL ONE_TRY; do
            check "-DFOREVER -DN=3 -DWATCH=0 -D$f=0" liveness
            if [ $? = 1 ]; then echo "verify: without $f: starvation found (as expected)"
            else echo "verify: FAIL: without $f no starvation was found"; rc=1; fi
        done ;;
    *)
        must_pass "-DN=4@-DROUNDS=1 -DN=3@-DROUNDS=3" safety
        must_pass "$live $live@-DWATCH=0" liveness ;;
    esac ;;
sanl)
    # 3 threads x 2 rounds and 2 threads x 3 rounds, every mode mix
    case "${1:-}" in
    --broken)
        for b in 1 2 3; do must_fail $b "-DN=3 -DROUNDS=1" safety; done ;;
    *)
        must_pass "-DN=3@-DROUNDS=2 -DN=2@-DROUNDS=3" safety ;;
    esac ;;
shfl)
    # quick (CTest): 3 and 4 threads x 1 round (two nodes, a shuffle that
    # moves waiters, stealing, patience); --full adds 3 threads x 2 rounds
    case "${1:-}" in
    --broken)
        for b in 1 2 3; do must_fail $b "-DN=4 -DROUNDS=1" safety; done ;;
    *)
        configs="-DN=3@-DROUNDS=1 -DN=4@-DROUNDS=1"
        [ "${1:-}" = "--full" ] && configs="$configs -DN=3@-DROUNDS=2"
        must_pass "$configs" safety ;;
    esac ;;
esac
exit $rc
