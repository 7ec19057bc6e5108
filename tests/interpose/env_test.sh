#!/bin/sh
# Every environment variable of the preload library with a bad value: one
# line on stderr naming the variable and the valid forms, and the program
# runs on the default with the same output and exit status as without the
# preload. An unwritable NUMALOCK_STATS_FILE: one line, the profile on stderr.
#   env_test.sh LIBNUMALOCK_PRELOAD LOCK TESTBIN_DIR
# Exit 77 (skipped) when LOCK cannot replace pthread mutexes.
set -u
lib=$1; lock=$2; bin=$3; fail=0
tmp=$(mktemp -d /tmp/nl-env.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prog="$bin/nl_lockbound 2 20000"
$prog > "$tmp/ref" 2>/dev/null; rs=$?
LD_PRELOAD=$lib NUMALOCK_LOCK=$lock $prog > "$tmp/out" 2>"$tmp/err"
if grep -q "using glibc.s mutexes" "$tmp/err"; then
    echo "lock '$lock' is not interposable: skipped"; exit 77
fi
# bad VAR=VALUE [EXTRA-ENV...]: the run must print exactly one line naming VAR
bad() {
    var=${1%%=*}; shift 0
    env LD_PRELOAD="$lib" NUMALOCK_LOCK="$lock" "$@" $prog > "$tmp/out" 2>"$tmp/err"; os=$?
    n=$(grep -c "$var" "$tmp/err")
    if [ $os -ne $rs ] || ! cmp -s "$tmp/ref" "$tmp/out"; then
        echo "FAIL $*: exit $os (reference $rs) or stdout differs"; fail=1
    elif [ "$n" -ne 1 ] || ! grep "$var" "$tmp/err" | grep -q -i "valid"; then
        echo "FAIL $*: expected one line naming $var and the valid forms, got:"; cat "$tmp/err"; fail=1
    elif [ "$(grep -vc '^numalock:' "$tmp/err")" -ne 1 ]; then
        echo "FAIL $*: other lines on stderr:"; cat "$tmp/err"; fail=1
    else
        echo "ok   $* -> $(grep "$var" "$tmp/err")"
    fi
}
bad NUMALOCK_WAIT=nonsense
bad NUMALOCK_WAIT=park:x:y
bad NUMALOCK_WAIT=park:-1:-1
bad NUMALOCK_STATS=yes
bad NUMALOCK_STATS_TOP=-5 NUMALOCK_STATS=1
bad NUMALOCK_STATS_TOP=ten NUMALOCK_STATS=1
bad NUMALOCK_STATS_STACKS=65 NUMALOCK_STATS=1
bad NUMALOCK_STATS_STACKS=-2 NUMALOCK_STATS=1
bad NUMALOCK_STATS_FORMAT=xml NUMALOCK_STATS=1
bad NUMALOCK_SPIN=no-such-lock
bad NUMALOCK_SPIN=ticket
bad NUMALOCK_RWLOCK=no-such-lock
bad NUMALOCK_RWLOCK=tas
bad NUMALOCK_TOPOLOGY=virtual:0
bad NUMALOCK_CNA_FAIRNESS=sometimes
bad NUMALOCK_PRELOAD_EXTERNAL=2
# with stats on, the profile is on stderr beside the one line
grep -q "lock profile" "$tmp/err" || true
# an unwritable stats file: one line naming it, then the profile on stderr
env LD_PRELOAD="$lib" NUMALOCK_LOCK="$lock" NUMALOCK_STATS=1 NUMALOCK_STATS_FILE=/nonexistent/dir/profile \
    $prog > "$tmp/out" 2>"$tmp/err"; os=$?
if [ $os -ne $rs ] || ! cmp -s "$tmp/ref" "$tmp/out"; then
    echo "FAIL unwritable stats file: exit $os or stdout differs"; fail=1
elif [ "$(grep -c NUMALOCK_STATS_FILE "$tmp/err")" -ne 1 ] || ! grep -q "numalock: lock profile of pid" "$tmp/err"; then
    echo "FAIL unwritable stats file: expected one line and the profile on stderr, got:"; cat "$tmp/err"; fail=1
else
    echo "ok   unwritable NUMALOCK_STATS_FILE -> $(grep NUMALOCK_STATS_FILE "$tmp/err")"
fi
# a good stats file gets the profile, stderr stays empty
env LD_PRELOAD="$lib" NUMALOCK_LOCK="$lock" NUMALOCK_STATS=1 NUMALOCK_STATS_FILE="$tmp/profile" \
    $prog > "$tmp/out" 2>"$tmp/err"
if [ -s "$tmp/err" ] || ! grep -q "lock profile" "$tmp/profile"; then
    echo "FAIL writable stats file: stderr not empty or no profile in the file"; cat "$tmp/err"; fail=1
else
    echo "ok   NUMALOCK_STATS_FILE written, stderr empty"
fi
# good values print nothing
env LD_PRELOAD="$lib" NUMALOCK_LOCK="$lock" NUMALOCK_WAIT=park:10:2 NUMALOCK_STATS_TOP=5 NUMALOCK_SPIN=tas \
    NUMALOCK_CNA_FAIRNESS=random:64 NUMALOCK_STATS_STACKS=4 NUMALOCK_STATS_FORMAT=json NUMALOCK_STATS=0 $prog > "$tmp/out" 2>"$tmp/err"
if [ -s "$tmp/err" ] || ! cmp -s "$tmp/ref" "$tmp/out"; then
    echo "FAIL good values: stderr not empty or stdout differs"; cat "$tmp/err"; fail=1
else
    echo "ok   good values print nothing"
fi
exit $fail
