#!/bin/sh
# Model-check verify/cna.pml with Spin: mutual exclusion, no lost waiter,
# progress (all threads finish), empty queues at the end.
#   verify/run.sh              the model of src/locks/cna.c: must pass
#   verify/run.sh --broken     each deliberately broken variant: must fail
# Exit status 0 when every run gave the expected verdict.
set -u
here=$(cd "$(dirname "$0")" && pwd)
command -v spin >/dev/null 2>&1 || { echo "verify: spin is not installed (scripts/deps.d/spin.sh)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

check() { # $1 = extra -D flags, prints the verdict line, returns 0 if no error found
    spin -a $1 "$here/cna.pml" >spin.log 2>&1 || { cat spin.log; return 2; }
    cc -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c >cc.log 2>&1 || { cat cc.log; return 2; }
    ./pan -m100000 >pan.log 2>&1   # invalid end states (lost waiters) are checked by default
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | head -1)
    states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log | head -1)
    what=$(grep -E "assertion violated|invalid end state \(|max search depth too small" pan.log | head -1)
    echo "  $1: errors=$errors states=$states ${what:+($what)}"
    [ "$errors" = 0 ]
}

# quick (CTest): 4 threads x 1 round (secondary queue of two, both unlock CAS
# cases) and 3 threads x 2 rounds (re-entry behind a secondary queue);
# --full adds 4 threads x 2 rounds (about 2.4e8 states, ~10 minutes here)
rc=0
case "${1:-}" in
--broken)
    for b in 1 2 3; do
        if check "-DBROKEN=$b -DN=4 -DROUNDS=1"; then echo "verify: FAIL: broken variant $b was not caught"; rc=1
        else echo "verify: broken variant $b caught (counterexample found)"; fi
    done ;;
*)
    configs="-DN=4@-DROUNDS=1 -DN=3@-DROUNDS=2"
    [ "${1:-}" = "--full" ] && configs="$configs -DN=4@-DROUNDS=2"
    for c in $configs; do
        flags=$(echo "$c" | tr @ ' ')
        if check "$flags"; then echo "verify: PASS cna.pml $flags"
        else echo "verify: FAIL cna.pml $flags"; rc=1; fi
    done ;;
esac
exit $rc
