#!/bin/sh
# `numalock run`: refusals, exit status, --stats profile, stdout left alone.
#   run_cli.sh NUMALOCK_CLI TESTBIN_DIR
set -u
cli=$1; bin=$2; fail=0
tmp=$(mktemp -d /tmp/nl-runcli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
expect() { # expect WHAT STATUS GOT
    if [ "$2" != "$3" ]; then echo "FAIL: $1: exit $3, expected $2"; fail=1; else echo "ok   $1"; fi
}
"$cli" run --lock no-such-lock -- true 2>"$tmp/err"; expect "unknown lock refused" 2 $?
grep -q "unknown lock 'no-such-lock': valid locks are .*tas" "$tmp/err" || { echo "FAIL: message: $(cat "$tmp/err")"; fail=1; }
[ "$(wc -l < "$tmp/err")" -eq 1 ] || { echo "FAIL: more than one line: $(cat "$tmp/err")"; fail=1; }
"$cli" run --lock mcs -- true 2>"$tmp/err"; expect "non-interposable lock refused" 2 $?
grep -q "cannot replace pthread mutexes" "$tmp/err" || { echo "FAIL: message: $(cat "$tmp/err")"; fail=1; }
"$cli" run --lock tas --topology virtual:0 -- true 2>"$tmp/err"; expect "bad topology refused" 2 $?
grep -q "virtual:0" "$tmp/err" || { echo "FAIL: message: $(cat "$tmp/err")"; fail=1; }
# a missing option value is named the same way by every subcommand (tools/opts.c)
for cmd in "run --lock" "run --lock -- true" "run --spin" "run --topology" "topo --topology" "report --out" \
    "report --suite" "bench kvmap --lock" "bench kvmap --threads" "bench kvmap --key-range"; do
    opt=$(echo "$cmd" | awk '{print $NF == "true" ? $(NF-2) : $NF}')
    "$cli" $cmd >"$tmp/out" 2>"$tmp/err"; st=$?
    if [ $st -ne 2 ] || [ -s "$tmp/out" ] || [ "$(grep -vc '^walk' "$tmp/err")" -ne 1 ] || \
        ! grep -q "^numalock [a-z]*: option '$opt' needs a value: [A-Z0-9]" "$tmp/err"; then
        echo "FAIL: numalock $cmd: exit $st, stderr: $(cat "$tmp/err")"; fail=1
    else
        echo "ok   numalock $cmd: $(grep needs "$tmp/err")"
    fi
done
"$cli" run --stats=yes -- true 2>"$tmp/err"; expect "value given to a flag refused" 2 $?
grep -q "option '--stats' takes no value" "$tmp/err" || { echo "FAIL: message: $(cat "$tmp/err")"; fail=1; }
"$cli" run --lock=tas --topology=virtual:2 -- true; expect "--opt=value form" 0 $?
"$cli" run --spin ticket -- true 2>"$tmp/err"; expect "spin lock that does not fit refused" 2 $?
grep -q "does not fit a pthread_spinlock_t" "$tmp/err" || { echo "FAIL: message: $(cat "$tmp/err")"; fail=1; }
"$cli" run --lock tas -- sh -c 'exit 7'; expect "exit status returned" 7 $?
"$cli" run --lock tas -- /nonexistent/program 2>/dev/null; expect "missing program" 127 $?
"$cli" run --lock tas -- sh -c 'kill -TERM $$'; expect "signal status" 143 $?
timeout 2 "$cli" run --lock tas -- sleep 30; expect "SIGTERM forwarded to the program" 124 $?

# --stats: the profile goes to stderr, the program's stdout is unchanged
"$bin/nl_lockbound" 4 300000 > "$tmp/ref"
"$cli" run --lock hbo --topology virtual:2 --stats -- "$bin/nl_lockbound" 4 300000 > "$tmp/out" 2>"$tmp/err"
expect "--stats run" 0 $?
cmp -s "$tmp/ref" "$tmp/out" || { echo "FAIL: stdout changed under --stats"; fail=1; }
grep -q "^numalock: lock profile of pid [0-9]* (.*nl_lockbound), lock hbo, topology virtual:2 (2 nodes)" "$tmp/err" \
    || { echo "FAIL: no profile header"; cat "$tmp/err"; fail=1; }
# first locked in lockbound.c's worker: named with libdw, an offset in nl_lockbound with dladdr
grep -q -E "^numalock: *1 0x[0-9a-f]* *mutex *1200000 .*  (worker \(lockbound\.c:[0-9]+\)|nl_lockbound\(\+0x[0-9a-f]+\))$" "$tmp/err" \
    || { echo "FAIL: no profile row for the lock-bound mutex (1200000 acquisitions, first locked in nl_lockbound)"; cat "$tmp/err"; fail=1; }
grep -q "handovers  remote%" "$tmp/err" || { echo "FAIL: profile columns"; fail=1; }
# the profile by LD_PRELOAD alone goes to stderr too, never stdout
LD_PRELOAD=$(dirname "$cli")/../lib/libnumalock-preload.so NUMALOCK_STATS=1 "$bin/nl_lockbound" 2 10000 > "$tmp/out" 2>"$tmp/err"
grep -q numalock "$tmp/out" && { echo "FAIL: profile on stdout"; fail=1; }
grep -q "lock profile" "$tmp/err" || { echo "FAIL: no profile on stderr"; fail=1; }
echo "ok   profile on stderr only"
# semantics program: identical stdout under the preload with stats on
"$bin/nl_semantics" > "$tmp/ref" 2>/dev/null
"$cli" run --lock ttas --stats -- "$bin/nl_semantics" > "$tmp/out" 2>/dev/null
cmp -s "$tmp/ref" "$tmp/out" && echo "ok   no stdout pollution" || { echo "FAIL: stdout differs"; diff "$tmp/ref" "$tmp/out" | head; fail=1; }
exit $fail
