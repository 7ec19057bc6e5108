#!/bin/sh
# numalock run --futex-hash N: the program's private futex hash has N slots
# (the program asks the kernel); on a kernel without private hashes (here
# emulated: futex_nohash answers prctl(PR_FUTEX_HASH) with EINVAL, as a
# kernel without the option does) one sentence says so and the program runs
# unchanged; a bad N is refused before the program starts.
#   hash_test.sh NUMALOCK FUTEX_COND FUTEX_NOHASH
set -u
cli=$1 prog=$2 nohash=$3
fail() { echo "FAIL: $*"; exit 1; }
run="$prog --seconds 0.2 --condvars 64"

if "$prog" --seconds 0.05 --condvars 8 | grep -q '"slots": -1'; then
    echo "note: this kernel has no private futex hash: the sizing itself not checked"
else
    out=$("$cli" run --futex-hash 1024 -- $run --expect-slots 1024) || fail "--futex-hash 1024: $out"
    out=$(NUMALOCK_FUTEX_HASH=64 "$cli" run --lock pthread -- $run --expect-slots 64) ||
        fail "NUMALOCK_FUTEX_HASH=64 under glibc's locks: $out"
    echo "sized: 1024 and 64 slots"
fi

out=$("$nohash" "$cli" run --futex-hash 1024 -- $run 2>&1) || fail "on a kernel without private hashes: $out"
n=$(printf '%s\n' "$out" | grep -c "NUMALOCK_FUTEX_HASH=1024: this kernel does not size a process's private futex hash")
[ "$n" = 1 ] || fail "one sentence expected without private hashes, $n lines: $out"
printf '%s\n' "$out" | grep -q '"passes_per_s"' || fail "the program did not run to its end: $out"
echo "without private hashes: $(printf '%s\n' "$out" | grep NUMALOCK_FUTEX_HASH)"

out=$("$cli" run --futex-hash 1000 -- $run 2>&1)
[ $? = 2 ] && printf '%s\n' "$out" | grep -q "^numalock run: --futex-hash '1000' is not valid" ||
    fail "--futex-hash 1000 not refused: $out"
echo PASS
