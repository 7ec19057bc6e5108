#!/bin/sh
# Real programs under the preload library, output compared with a run without it.
#   run_programs.sh NUMALOCK_CLI LOCK TESTBIN_DIR
# Exit 77 (skipped) when LOCK cannot replace pthread mutexes.
set -u
cli=$1; lock=$2; bin=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! "$cli" run --lock "$lock" -- true 2>/dev/null; then
    echo "lock '$lock' is not interposable: skipped"; "$cli" run --lock "$lock" -- true; exit 77
fi
tmp=$(mktemp -d /tmp/nl-interpose.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# ~3 MB of deterministic, compressible input
{ seq 1 150000; head -c 1500000 "$cli"; seq 150000 -1 1; } > "$tmp/data"
fail=0; ran=0
# check NAME CMD...: stdout and exit status with the preload equal those without
check() {
    name=$1; shift
    "$@" > "$tmp/ref" 2>"$tmp/ref.err"; rs=$?
    t0=$(date +%s)
    # a program that hangs under the lock is reported as such (exit 124)
    timeout 100 "$cli" run --lock "$lock" -- "$@" > "$tmp/out" 2>"$tmp/out.err"; os=$?
    secs=$(( $(date +%s) - t0 ))
    ran=$((ran + 1))
    if [ $os -eq 124 ]; then
        echo "FAIL $name under $lock: still running after 100 s (killed)"
        fail=1
    elif [ $rs -ne $os ] || ! cmp -s "$tmp/ref" "$tmp/out"; then
        echo "FAIL $name under $lock: exit $os (reference $rs), stdout $(md5sum < "$tmp/out" | cut -c1-12) (reference $(md5sum < "$tmp/ref" | cut -c1-12))"
        head -5 "$tmp/out.err"
        fail=1
    else
        echo "ok   $name ($(wc -c < "$tmp/out") bytes of output, exit $os, ${secs}s)"
    fi
}
have() { command -v "$1" >/dev/null 2>&1 || { echo "skip $1: not installed (make deps)"; return 1; }; }

have pigz && check "pigz -p4 (cond)" pigz -p 4 -b 128 -c "$tmp/data"
have pigz && pigz -c "$tmp/data" > "$tmp/data.gz" && check "pigz -d" pigz -d -c "$tmp/data.gz"
have pbzip2 && check "pbzip2 -p4 (cond, timedwait)" pbzip2 -p4 -b1 -c "$tmp/data"
have lbzip2 && check "lbzip2 -n4 (cond)" lbzip2 -n 4 -c "$tmp/data"
have xz && check "xz -T4 (cond, monotonic timedwait)" xz -T4 --block-size=262144 -3 -c "$tmp/data"
have zstd && check "zstd -T4 (cond)" zstd -q -T4 -B524288 -3 -c "$tmp/data"
have sqlite3 && check "sqlite3 (recursive mutexes, trylock)" sqlite3 :memory: \
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<200000) SELECT count(*), sum(x*x%97), group_concat(x%10,'') LIKE '1234%' FROM c;"
[ -x /usr/bin/python3 ] && check "python3 threads (GIL: mutex, cond timedwait)" /usr/bin/python3 "$here/gil_threads.py"
have node && check "node worker threads (rwlock, trylock, cond)" node "$here/node_threads.js"
check "cross-thread unlock" "$bin/nl_cross_unlock"
check "c++ std::mutex/condition_variable timed waits" "$bin/nl_cxx_timed"
check "C11 mtx_t / cnd_t" "$bin/nl_c11_threads"
check "lock-bound program, 4 threads" "$bin/nl_lockbound" 4 50000
echo "$ran programs run under $lock"
exit $fail
