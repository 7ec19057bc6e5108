#!/bin/sh
# pthread spin locks on LOCK (NUMALOCK_SPIN) at 1..32 threads: mutual
# exclusion counted by tests/interpose/spin.c, output and exit status equal to
# a run without the preload; a lock that does not fit a pthread_spinlock_t is
# refused by `numalock run --spin` with one sentence (skipped, 77).
#   spin_test.sh NUMALOCK_CLI LOCK TESTBIN_DIR
set -u
cli=$1; lock=$2; bin=$3; fail=0
if ! "$cli" run --spin "$lock" -- true 2>/dev/null; then
    echo "lock '$lock' cannot replace pthread spin locks: skipped"; "$cli" run --spin "$lock" -- true; exit 77
fi
tmp=$(mktemp -d /tmp/nl-spin.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for t in 1 2 4 8 16 32; do
    n=$((64000 / t))
    "$bin/nl_spin" $t $n > "$tmp/ref" 2>&1; rs=$?
    timeout 200 "$cli" run --spin "$lock" -- "$bin/nl_spin" $t $n > "$tmp/out" 2>"$tmp/err"; os=$?
    if [ $rs -ne 0 ] || [ $os -ne $rs ] || ! cmp -s "$tmp/ref" "$tmp/out"; then
        echo "FAIL $t threads x $n under $lock: exit $os (reference $rs)"; cat "$tmp/out" "$tmp/err" | head -5; fail=1
    else
        echo "ok   $t threads x $n: $(head -1 "$tmp/out")"
    fi
done
# --stats profiles spin locks
"$cli" run --spin "$lock" --stats -- "$bin/nl_spin" 2 5000 > /dev/null 2>"$tmp/err"
if [ "$lock" != pthread ] && ! grep -q "^numalock: .* spin " "$tmp/err"; then
    echo "FAIL --stats: no spin lock row in the profile"; cat "$tmp/err"; fail=1
else
    echo "ok   --stats profiles the spin lock"
fi
exit $fail
