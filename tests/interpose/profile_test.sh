#!/bin/sh
# The lock profile names code: nl_profiled (profiled.c, built with -g) under
# `numalock run --stats` shows its own functions (with libdw: and
# profiled.c:LINE), --stats-stacks N the caller below, --stats-format json one
# parseable line per process (profile_check.py); a stripped Debian program
# gets symbol names or object(+0x...) and runs as without the profile; bad
# values are refused with one line. Counts are checked, never times.
#   profile_test.sh NUMALOCK_CLI TESTBIN_DIR SYMBOLS
# SYMBOLS: libdw when the preload library names code with libdw, else dladdr
# (nl_profiled is linked with -rdynamic, so dladdr names its functions too).
set -u
cli=$1; bin=$2; symbols=$3
here=$(cd "$(dirname "$0")" && pwd)
src=$here/profiled.c
prog=$bin/nl_profiled
tmp=$(mktemp -d /tmp/nl-profile.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
line_of() { grep -n "$1" "$src" | head -1 | cut -d: -f1; }
hot=$(line_of 'profiled: hot lock')
cold=$(line_of 'profiled: cold lock')
call_contend=$(line_of '    profiled_contend(iters);')
call_setup=$(line_of '    profiled_setup(id);')
# the site as the text profile prints it
if [ "$symbols" = libdw ]; then
    at() { echo "$1 (profiled.c:$2)"; }
else
    at() { echo "$1"; }
fi
threads=8 iters=50

# --stats: the contended mutex first, named by the function that locked it
"$cli" run --lock hbo --stats -- "$prog" $threads $iters > "$tmp/out" 2> "$tmp/err"; st=$?
[ $st -eq 0 ] || no "--stats run: exit $st"
grep -qx "profiled: $threads threads, hot $((threads * iters)), cold $((threads * 32))" "$tmp/out" || no "stdout: $(cat "$tmp/out")"
want=$(at profiled_contend "$hot")
if grep -q "^numalock: *1 0x[0-9a-f]* *mutex *$((threads * iters)) .*  $want\$" "$tmp/err"; then
    echo "ok   --stats: rank 1 first locked at $want"
else
    no "--stats: no rank-1 row for the hot mutex at '$want'"; cat "$tmp/err"
fi
grep -q "#[0-9]" "$tmp/err" && no "--stats without --stats-stacks printed a stack"

# nothing contended: the most acquired objects, the cold mutexes, each at its own site
"$cli" run --lock hbo --stats -- "$prog" 4 0 > "$tmp/out" 2> "$tmp/err"
want=$(at profiled_setup "$cold")
n=$(grep -c "^numalock: *[0-9]* 0x[0-9a-f]* *mutex *1 .*  $want\$" "$tmp/err")
if [ "$n" -eq 20 ] && ! grep -q profiled_contend "$tmp/err"; then
    echo "ok   --stats: 20 rows of cold mutexes at $want"
else
    no "--stats, nothing contended: $n rows at '$want' (expected 20, and no profiled_contend)"; cat "$tmp/err"
fi

# --stats-stacks 4: under each row the stack, the site first, its caller next
"$cli" run --lock ticket --stats-stacks 4 -- "$prog" 16 20 > "$tmp/out" 2> "$tmp/err"; st=$?
[ $st -eq 0 ] || no "--stats-stacks run: exit $st"
if grep -A2 "^numalock: *1 0x" "$tmp/err" | grep -q "^numalock: *#0 *$(at profiled_contend "$hot")\$" &&
   grep -A2 "^numalock: *1 0x" "$tmp/err" | grep -q "^numalock: *#1 *$(at profiled_worker "$call_contend")\$"; then
    echo "ok   --stats-stacks 4: #0 $(at profiled_contend "$hot"), #1 $(at profiled_worker "$call_contend")"
else
    no "--stats-stacks 4: the hot mutex's stack lacks profiled_contend / profiled_worker"; cat "$tmp/err"
fi
nf=$(awk '/^numalock: *1 0x/ { on = 1; next } on && /^numalock: *#/ { n++; next } { on = 0 } END { print n + 0 }' "$tmp/err")
[ "$nf" -ge 2 ] && [ "$nf" -le 4 ] || no "--stats-stacks 4: $nf frames under rank 1"
# the same with glibc's mutexes (locks recorded after they are taken), cold mutexes' stacks
"$cli" run --lock pthread --stats-stacks 3 -- "$prog" 4 0 > "$tmp/out" 2> "$tmp/err"
if grep -q "^numalock: *#1 *$(at profiled_worker "$call_setup")\$" "$tmp/err"; then
    echo "ok   --lock pthread --stats-stacks 3: profiled_setup called from $(at profiled_worker "$call_setup")"
else
    no "--lock pthread --stats-stacks 3: no frame of profiled_worker"; cat "$tmp/err"
fi

# unwind tables registered with libgcc (as a JIT does): every walk takes
# libgcc's mutex, through the preload; no recursion, no deadlock (timeout)
for lock in pthread hbo; do
    timeout 60 "$cli" run --lock $lock --stats-stacks 8 -- "$prog" 16 20 register-frames > "$tmp/out" 2> "$tmp/err"; st=$?
    if [ $st -ne 0 ] || ! grep -q "^numalock: *#1 *$(at profiled_worker "$call_contend")\$" "$tmp/err"; then
        no "register-frames under $lock: exit $st (124: hung), or no stack"; tail -20 "$tmp/err"
    else
        echo "ok   register-frames under $lock: $(grep -c '^numalock: *#' "$tmp/err") frames printed"
    fi
done

# --stats-format json: one line, the documented keys, counts that add up
"$cli" run --lock hbo --stats-format json --stats-stacks 4 -- "$prog" $threads $iters > "$tmp/out" 2> "$tmp/err"; st=$?
[ $st -eq 0 ] || no "--stats-format json run: exit $st"
[ "$(wc -l < "$tmp/err")" -eq 1 ] || no "--stats-format json: $(wc -l < "$tmp/err") lines on stderr, expected 1"
python3 "$here/profile_check.py" "$tmp/err" profiled "$hot" "$call_contend" $threads $iters "$symbols" || fail=1
# one line per process, appended to one file; names that need escaping
weird="$tmp/pro\"fi\\led é"
cp "$prog" "$weird"
"$cli" run --stats-format json -- sh -c "'$weird' 2 5 >/dev/null; '$weird' 2 5 >/dev/null" 2> "$tmp/err"
python3 "$here/profile_check.py" "$tmp/err" processes 2 "$weird" || fail=1
bytes="$tmp/bad-$(printf '\377\376')-name"
cp "$prog" "$bytes"
NUMALOCK_STATS=1 NUMALOCK_STATS_FORMAT=json NUMALOCK_STATS_FILE="$tmp/bytes.json" \
    LD_PRELOAD="$(dirname "$cli")/../lib/libnumalock-preload.so" "$bytes" 2 5 > /dev/null
python3 "$here/profile_check.py" "$tmp/bytes.json" any || fail=1

# a stripped Debian program: a profile whose sites are names or object(+0x...),
# output and status as without the preload
if command -v xz > /dev/null 2>&1; then
    set -- xz -T2 --block-size=131072 -3 -c "$tmp/data"; what="xz -T2"
else
    set -- sort --parallel=2 -S 4M "$tmp/data"; what="sort --parallel=2"
fi
{ seq 1 60000; head -c 600000 "$cli"; seq 60000 -1 1; } > "$tmp/data"
"$@" > "$tmp/ref"; rs=$?
for fmt in text json; do
    "$cli" run --stats-stacks 8 --stats-format $fmt -- "$@" > "$tmp/out" 2> "$tmp/err"; st=$?
    if [ $st -ne $rs ] || ! cmp -s "$tmp/ref" "$tmp/out"; then
        no "$what --stats-format $fmt: exit $st (reference $rs), or its output differs"; head -5 "$tmp/err"
    elif [ $fmt = json ]; then
        python3 "$here/profile_check.py" "$tmp/err" any || fail=1
    else
        sites=$(sed -n 's/^numalock: *[0-9][0-9]* 0x[0-9a-f]* .*  \([^ ].*\)$/\1/p; s/^numalock: *#[0-9]* *//p' "$tmp/err")
        bad=$(echo "$sites" | grep -v -E '^([A-Za-z_][^ ]*( \([^ ]+:[0-9]+(, inlined in [^ ]+)?\))?|[^ ]+\(\+0x[0-9a-f]+\))$')
        if [ -z "$sites" ] || [ -n "$bad" ]; then
            no "$what: sites that are neither names nor object(+0x...): ${bad:-none listed}"; cat "$tmp/err"
        else
            echo "ok   $what: $(echo "$sites" | wc -l) sites named, e.g. $(echo "$sites" | head -1)"
        fi
    fi
done

# bad values: one line naming the value and the valid range, exit 2
for args in "--stats-stacks 65" "--stats-stacks -1" "--stats-stacks x" "--stats-format xml"; do
    "$cli" run $args -- true > "$tmp/out" 2> "$tmp/err"; st=$?
    opt=${args% *}; val=${args#* }
    if [ $st -ne 2 ] || [ "$(wc -l < "$tmp/err")" -ne 1 ] || ! grep -q -e "$opt '$val' is not valid: .*\(0 (none) to 64\|text and json\)" "$tmp/err"; then
        no "numalock run $args: exit $st, stderr: $(cat "$tmp/err")"
    else
        echo "ok   numalock run $args: $(cat "$tmp/err")"
    fi
done
exit $fail
