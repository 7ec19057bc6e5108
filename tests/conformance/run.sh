#!/usr/bin/env bash
# make conformance: the Open POSIX Test Suite's pthread mutex, mutexattr,
# cond, condattr, rwlock and rwlockattr tests, under glibc and under the
# preload library (`numalock run`) with every interposable lock.
#
# Source: the archive open-posix-pthread-*.tar.gz (part of LTP's
# testcases/open_posix_testsuite): $OPTS_SRC, else the first one found beside
# the checkout (find .. -maxdepth 4, as .ci/run finds GenMC's). It is
# extracted to $BUILD/conformance/opts/, never copied into the repository.
# Without it the run fails, or with CONFORMANCE_OPTIONAL=1 says why it
# skipped and passes (CI).
#
# Build: each N-M.c test is compiled once (cc -std=c99
# -D_POSIX_C_SOURCE=200809L -D_XOPEN_SOURCE=700 -I include, lib/common.c,
# -lpthread -lrt) into $BUILD/conformance/bin/, and the same binary runs in
# every configuration; N-M.sh tests run as they are. The 30 tests that
# include "../testfrmw/testfrmw.{h,c}" (not in the archive) get our own shim,
# tests/conformance/testfrmw/, linked in as conformance/interfaces/testfrmw.
#
# Matrix: the configurations (names asked of `numalock run` at run time, so
# a new interposable lock or rwlock algorithm joins with no edit) and the
# tests each runs:
#   glibc             every test, no preload: the reference
#   pthread           every test, `numalock run --lock pthread`: glibc's
#                     mutexes, conds and rwlocks through the interposer
#   LOCK              the mutex, mutexattr, cond and condattr tests, `--lock
#                     LOCK`, for every other interposable lock
#   rwlock=built-in   the rwlock and rwlockattr tests, `numalock run` (the
#                     default lock, the preload's built-in rwlock)
#   rwlock=R          the same tests, `--rwlock R`, for each rwlock algorithm
# No rwlock test touches a mutex or condvar, and the rwlock code is the same
# under every lock but pthread, so the rwlock tests do not run again under
# each LOCK (CONFORMANCE_FULL=1 runs every test under every configuration;
# a pair LOCK+rwlock=R in CONFORMANCE_LOCKS runs every test too).
#
# Judgement: a test that exits 0 (PASS) in every glibc run is held against
# the others: any other outcome there (FAIL(rc), UNRESOLVED(2),
# UNSUPPORTED(4), UNTESTED(5), TIMEOUT after $CONFORMANCE_TIMEOUT s, SIGxxx)
# is a mismatch, printed as "TEST under CONFIG: glibc PASS, lock OUTCOME",
# and fails the run. A test that does not pass under glibc is listed and not
# held against anyone. A test that does not compile fails the run.
#
# Time: the tests mostly sleep, so 4 per CPU run at once (about 4 minutes on
# 2 cores). Some must not overlap, and their runs are chained into jobs of
# their own: the tests that use SCHED_FIFO run one at a time (another
# test's real-time threads would take their CPU); one that opens a shared
# memory object by a fixed name never runs beside itself; one that starts
# threads by the thousand (pthread_cond_broadcast_1-2: 7 s and 1.3 CPUs
# alone, past 20 s when 8 ran at once on 2 cores, up to 15 s under a spin
# lock in the full matrix) runs at most one copy per 2 CPUs at once, with
# twice the timeout (its own limit is 180 s). The longest jobs start first,
# by their time in the last run.
#
# Settings (environment):
#   CONFORMANCE_TESTS=REGEX   only the tests whose name matches (ERE), as
#                             'pthread_cond_broadcast_(1-2|2-3)$'
#   CONFORMANCE_LOCKS=a,b     only these configurations (glibc always runs)
#   CONFORMANCE_RUNS=N        each test N times in each configuration
#   CONFORMANCE_FULL=1        every test under every configuration
#   CONFORMANCE_JOBS=N        tests at a time (default 4 per CPU, at most 32)
#   CONFORMANCE_TIMEOUT=S     per test run (default 20; twice for a heavy one)
#   CONFORMANCE_OPTIONAL=1    no archive: say so and pass
# A test's name is FOLDER_N-M (pthread_cond_broadcast_1-2), FOLDER_speculative_N-M
# for the speculative/ ones.
# Output: one line per configuration and one per mismatch, also in
# $BUILD/conformance/summary.txt; each run's output in
# $BUILD/conformance/logs/CONFIG/TEST.RUN.log; one line per run
# (config test run status seconds) in $BUILD/conformance/results.txt.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SELF="$ROOT/tests/conformance/run.sh"
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
CONF="$BUILD/conformance"
OPTS="$CONF/opts"
BIN="$CONF/bin"
NUMALOCK="$BUILD/bin/numalock"
SHIM="$ROOT/tests/conformance/testfrmw"
TIMEOUT=${CONFORMANCE_TIMEOUT:-20}
export CONF OPTS BIN NUMALOCK SHIM TIMEOUT

say() { printf 'conformance: %s\n' "$*"; }
die() { say "$*" >&2; exit 2; }

now() { printf '%s\n' "${EPOCHREALTIME:-$(date +%s.%N)}"; }

# ---- one compile or one job: run through xargs as `run.sh --compile|--job`

# The lane of a test source: rt (runs one at a time with the other rt
# tests), solo-ID (never beside itself), heavy-ID (at most one copy of
# itself per 2 CPUs at once), or nothing.
lane_of() {
    if grep -qE 'SCHED_FIFO|SCHED_RR' "$OPTS/$2"; then
        echo rt
    elif grep -q shm_open "$OPTS/$2"; then
        echo "solo-$1"
    elif grep -q max_thread_children "$OPTS/$2"; then
        echo "heavy-$1"
    fi
}

# --compile ID SOURCE: SOURCE (N-M.c or N-M.sh under $OPTS) to $BIN/ID, and
# its lane to $BIN/ID.lane
compile_one() {
    local id=$1 src=$2 out="$BIN/$1"
    lane_of "$id" "$src" >"$out.lane"
    if [ "${src%.sh}" != "$src" ]; then
        cp "$OPTS/$src" "$out" && chmod +x "$out"
        return
    fi
    [ -e "$out" ] && [ "$out" -nt "$OPTS/$src" ] && [ "$out" -nt "$SHIM/testfrmw.h" ] &&
        [ "$out" -nt "$SHIM/testfrmw.c" ] && return 0
    ( cd "$OPTS" && ${CC:-cc} -std=c99 -D_POSIX_C_SOURCE=200809L -D_XOPEN_SOURCE=700 -I include \
        -o "$out.tmp" "$src" lib/common.c -lpthread -lrt ) >"$CONF/logs/compile/$id.log" 2>&1 &&
        mv "$out.tmp" "$out" && return 0
    rm -f "$out.tmp"
    say "$id does not compile: $CONF/logs/compile/$id.log"
    return 1
}

# The command before the test, one word a line, for a configuration:
# glibc, LOCK, rwlock=R, LOCK+rwlock=R (R = built-in: no --rwlock).
config_prefix() {
    local cfg=$1 lock rw=
    [ "$cfg" = glibc ] && return
    lock=${cfg%%+*}
    case $cfg in *rwlock=*) rw=${cfg##*rwlock=} ;; esac
    case $lock in rwlock=*) lock= ;; esac
    [ "$rw" = built-in ] && rw=
    printf '%s\n' "$NUMALOCK" run ${lock:+--lock "$lock"} ${rw:+--rwlock "$rw"} --
}

# One run of test ID in configuration CFG; "status seconds" into results/.
# A heavy test has twice the timeout.
run_one() {
    local cfg=$1 id=$2 n=$3 start end rc limit=$TIMEOUT
    local -a prefix
    mapfile -t prefix < <(config_prefix "$cfg")
    grep -q '^heavy-' "$BIN/$id.lane" 2>/dev/null && limit=$((2 * TIMEOUT))
    start=$(now)
    ( cd "$CONF/work" && ulimit -c 0 && exec timeout -k 5 "$limit" "${prefix[@]}" "$BIN/$id" ) \
        >"$CONF/logs/$cfg/$id.$n.log" 2>&1 </dev/null
    rc=$?
    end=$(now)
    echo "$rc $(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')" >"$CONF/results/$cfg/$id.$n"
}

# --job CONFIG ID RUN: one run; --job @FILE: the runs in FILE, in turn.
run_job() {
    local cfg id n
    if [ "${1#@}" = "$1" ]; then
        run_one "$@"
        return
    fi
    while read -r cfg id n; do run_one "$cfg" "$id" "$n"; done <"${1#@}"
}

case ${1:-} in
--compile) shift; compile_one "$@"; exit ;;
--job) shift; run_job "$@"; exit 0 ;;
esac

# ---- the driver

optional() { case ${CONFORMANCE_OPTIONAL:-} in '' | 0 | no | false) return 1 ;; esac; }

# The archive's absolute path, or nothing when there is none.
find_archive() {
    local f
    if [ -n "${OPTS_SRC:-}" ]; then
        [ -f "$OPTS_SRC" ] || die "OPTS_SRC=$OPTS_SRC is not a file"
        f=$OPTS_SRC
    else
        f=$(cd "$ROOT" && find .. -maxdepth 4 -name 'open-posix-pthread-*.tar.gz' -type f 2>/dev/null | sort | head -n 1)
        [ -n "$f" ] || return 0
        f="$ROOT/$f"
    fi
    printf '%s/%s\n' "$(cd "$(dirname "$f")" && pwd)" "$(basename "$f")"
}

no_archive() {
    local why
    why="no Open POSIX Test Suite archive (OPTS_SRC is unset and no open-posix-pthread-*.tar.gz lies within $(cd "$ROOT/.." && pwd), 4 levels down)"
    if optional; then
        say "skipped: $why."
        exit 0
    fi
    say "$why; CONFORMANCE_OPTIONAL=1 skips instead." >&2
    exit 1
}

# Extracts the archive into $OPTS unless done (same file, size and time);
# the shim goes in as conformance/interfaces/testfrmw.
extract() {
    local stamp
    stamp=$(stat -c '%n %s %Y' "$1") || exit 2
    if ! [ -f "$OPTS/.archive" ] || [ "$(cat "$OPTS/.archive")" != "$stamp" ]; then
        rm -rf "$OPTS" "$BIN"
        mkdir -p "$OPTS" || exit 2
        tar -xzf "$1" -C "$OPTS" --strip-components=1 || die "cannot extract $1"
        printf '%s\n' "$stamp" >"$OPTS/.archive"
    fi
    [ -d "$OPTS/conformance/interfaces" ] || die "$1 has no conformance/interfaces folder"
    ln -sfn "$SHIM" "$OPTS/conformance/interfaces/testfrmw"
}

# "ID SOURCE" for each test in the archive whose ID matches CONFORMANCE_TESTS.
list_tests() {
    (cd "$OPTS" && find conformance/interfaces -type f \( -name '[0-9]*-[0-9]*.c' -o -name '[0-9]*.sh' \)) | sort |
        awk '{ id = $0; sub(/^conformance\/interfaces\//, "", id); sub(/\.(c|sh)$/, "", id);
               gsub("/", "_", id); print id, $0 }' |
        awk '$1 ~ ENVIRON["CONFORMANCE_TESTS"]'
}

# Compiles the tests, JOBS at a time; fails when one does not compile.
compile_all() {
    mkdir -p "$BIN" "$CONF/logs/compile"
    xargs -r -P "$JOBS" -L 1 bash "$SELF" --compile <"$CONF/tests"
}

# The names `numalock run` accepts: interposable locks, rwlock algorithms.
interposable_locks() {
    "$NUMALOCK" run --lock / -- true 2>&1 | sed -n 's/.*valid locks are //p' | tr -d ' ' | tr ',' ' '
}
rwlock_algorithms() {
    "$NUMALOCK" run --rwlock / -- true 2>&1 | sed -n 's/.*; valid are \(.*\) (default.*/\1/p' | tr -d ' ' | tr ',' ' '
}

# Dies unless configuration $1 names a lock in $2 and an rwlock in $3.
check_config() {
    local l=${1%%+*} r=
    case $1 in *rwlock=*) r=${1##*rwlock=} ;; esac
    case $l in rwlock=*) l= ;; esac
    case $2 in *" $l "*) ;; *) [ -z "$l" ] || die "'$l' is not an interposable lock:$2" ;; esac
    case "$3 built-in " in *" $r "*) ;; *) [ -z "$r" ] || die "'$r' is not an rwlock algorithm:$3" ;; esac
}

# The configurations, glibc first (CONFORMANCE_LOCKS checked against the names).
configs() {
    local locks rws c
    locks=" $(interposable_locks) " rws=" $(rwlock_algorithms) "
    if [ "$locks" = "  " ] || [ "$rws" = "  " ]; then die "$NUMALOCK run did not list its locks"; fi
    if [ -z "${CONFORMANCE_LOCKS:-}" ]; then
        # shellcheck disable=SC2086 # the names, one a line
        printf '%s\n' glibc $locks rwlock=built-in
        for c in $rws; do echo "rwlock=$c"; done
        return
    fi
    echo glibc
    for c in $(echo "$CONFORMANCE_LOCKS" | tr ',' ' '); do
        [ "$c" = glibc ] && continue
        check_config "$c" "$locks" "$rws"
        echo "$c"
    done
}

# "CONFIG ID RUN" for each run of the matrix (see the header).
list_runs() {
    local n cfg
    for n in $(seq 1 "$RUNS"); do
        for cfg in $CONFIGS; do
            awk -v c="$cfg" -v n="$n" -v full="${CONFORMANCE_FULL:-}" '
                c == "glibc" || c ~ /^pthread(\+|$)/ || c ~ /\+/ || (full != "" && full != "0") { print c, $1, n; next }
                (c ~ /^rwlock=/) == ($1 ~ /^pthread_rwlock/) { print c, $1, n }' "$CONF/tests"
        done
    done
}

# The jobs, longest first (a test's time in the last run, 30 s unknown):
# "CONFIG ID RUN" for a run, "@FILE" for a lane's runs (FILE in lanes.d/;
# a heavy lane's runs dealt to one FILE per 2 CPUs).
list_jobs() {
    (cd "$BIN" && grep -H . -- *.lane 2>/dev/null) | sed 's/\.lane:/ /' >"$CONF/lanes"
    awk -v dir="$CONF/lanes.d" -v chains=$((CPUS > 3 ? CPUS / 2 : 1)) -f - "$CONF/durations" "$CONF/lanes" "$CONF/runs" <<'AWK' |
FILENAME == ARGV[1] { t[$1] = $2; next }
FILENAME == ARGV[2] { lane[$1] = $2; next }
{ d = $2 in t ? t[$2] : 30 }
!($2 in lane) { print d, $0; next }
{ f = dir "/" lane[$2] (lane[$2] ~ /^heavy-/ ? "." dealt[lane[$2]]++ % chains : "") }
{ print > f; sum[f] += d }
END { for (f in sum) print sum[f], "@" f }
AWK
        sort -k1,1 -rn -s | cut -d' ' -f2-
}

# results.txt from the runs' files; each test's mean time into durations.
collect() {
    grep -r '' "$CONF/results" | sed 's|.*/results/||; s|/| |; s|\.\([0-9]*\):| \1 |' |
        sort -k2,2 -k1,1 -k3,3n >"$CONF/results.txt"
    awk 'FILENAME == ARGV[1] { t[$1] = $2; next } { s[$2] += $5; c[$2]++ }
         END { for (i in s) t[i] = s[i] / c[i]; for (i in t) printf "%s %.2f\n", i, t[i] }' \
        "$CONF/durations" "$CONF/results.txt" >"$CONF/durations.new" && mv "$CONF/durations.new" "$CONF/durations"
}

# Differences that are the algorithm's, not a bug: CONFIG TEST (reported as
# "known", not held against the configuration). The registered read-write
# algorithms order readers and writers by their own rule (cst-rwsem:
# waiting writers first; futex-rwlock through its table: readers first), not
# by the threads' SCHED_FIFO priorities, which POSIX asks for only under the
# Thread Execution Scheduling option; glibc's rwlock and the preload's
# built-in one (the default) pass these tests. docs/PRELOAD.md "Limits".
KNOWN='rwlock=cst-rwsem pthread_rwlock_rdlock_2-3
rwlock=futex-rwlock pthread_rwlock_rdlock_2-1
rwlock=futex-rwlock pthread_rwlock_rdlock_2-2'

# The table and the mismatches from results.txt, the count of mismatches to
# stderr; status 1 on a mismatch.
summarize() {
    local sigs='' i
    for i in $(seq 1 31); do sigs="$sigs $i=$(kill -l "$i")"; done
    awk -v order="$CONFIGS" -v timeout="$TIMEOUT" -v sigs="$sigs" -v knownlist="$KNOWN" -f - "$CONF/results.txt" <<'AWK'
function outcome(rc, secs) {
    if (rc == 0) return "PASS"
    if (rc == 1) return "FAIL(1)"
    if (rc == 2) return "UNRESOLVED(2)"
    if (rc == 4) return "UNSUPPORTED(4)"
    if (rc == 5) return "UNTESTED(5)"
    if (rc == 124 || (rc == 137 && secs >= timeout)) return "TIMEOUT"  # 137: killed after -k
    if (rc > 128 && (rc - 128) in sig) return "SIG" sig[rc - 128]
    return "FAIL(" rc ")"
}
function kind(o) { return o == "PASS" ? "pass" : o ~ /^UN/ ? "other" : "fail" }
# "SIGSEGV", or "SIGSEGV x3, TIMEOUT x1 in 4 of 20 runs"
function describe(k, o, i, s) {
    if (runs[k] == 1) return list[k]
    for (i = split(list[k], o, ", "); i > 0; i--) s = o[i] " x" seen[k, o[i]] (s ? ", " s : "")
    return s " in " bad[k] " of " runs[k] " runs"
}
BEGIN {
    split(sigs, t, " "); for (i in t) { split(t[i], kv, "="); sig[kv[1]] = kv[2] }
    n = split(knownlist, kl, "\n"); for (i = 1; i <= n; i++) { split(kl[i], kv, " "); expected[kv[1], kv[2]] = 1 }
}
{
    o = outcome($4, $5); k = $1 SUBSEP $2
    if (!($2 in known)) { known[$2] = 1; ids[++nid] = $2 }
    count[$1, kind(o)]++; total[$1]++; secs[$1] += $5; runs[k]++
    if (o == "PASS") next
    bad[k]++
    if (!seen[k, o]++) list[k] = list[k] (list[k] ? ", " : "") o
}
END {
    nc = split(order, cfg, " ")
    for (c = 1; c <= nc; c++) if (total[cfg[c]])
        printf "  %-20s %5d runs: %4d pass, %3d fail, %3d other  (%.0f s of tests)\n", cfg[c], total[cfg[c]],
            count[cfg[c], "pass"], count[cfg[c], "fail"], count[cfg[c], "other"], secs[cfg[c]]
    for (i = 1; i <= nid; i++)
        if (bad["glibc", ids[i]])
            printf "  not held against the locks: %s under glibc: %s\n", ids[i], describe("glibc" SUBSEP ids[i])
    for (c = 2; c <= nc; c++) for (i = 1; i <= nid; i++) {
        k = cfg[c] SUBSEP ids[i]
        if (runs["glibc", ids[i]] && !bad["glibc", ids[i]] && bad[k]) {
            if ((cfg[c], ids[i]) in expected)
                printf "  known: %s under %s: glibc PASS, lock %s (the algorithm's order, not priorities)\n",
                    ids[i], cfg[c], describe(k)
            else {
                printf "  MISMATCH %s under %s: glibc PASS, lock %s\n", ids[i], cfg[c], describe(k); m++
            }
        }
    }
    print m + 0 > "/dev/stderr"
    exit (m > 0)
}
AWK
}

# Extracts, lists and compiles the tests; empties the last run's output.
prepare() {
    local archive
    archive=$(find_archive) || exit 2
    [ -n "$archive" ] || no_archive
    [ -x "$NUMALOCK" ] || die "$NUMALOCK is missing: make build first"
    command -v timeout >/dev/null || die "timeout (coreutils) is missing"
    mkdir -p "$CONF" && extract "$archive"
    list_tests >"$CONF/tests"
    NTESTS=$(wc -l <"$CONF/tests")
    [ "$NTESTS" -gt 0 ] || die "no test matches CONFORMANCE_TESTS='${CONFORMANCE_TESTS:-}'"
    rm -rf "$CONF/results" "$CONF/logs" "$CONF/work" "$CONF/lanes.d"
    mkdir -p "$CONF/work" "$CONF/logs/compile" "$CONF/lanes.d"
    say "$NTESTS tests from $(basename "$archive"); compiling"
    compile_all
}

# Runs every job of the matrix, JOBS at a time.
run_matrix() {
    local c
    for c in $CONFIGS; do mkdir -p "$CONF/results/$c" "$CONF/logs/$c"; done
    touch "$CONF/durations"
    list_runs >"$CONF/runs"
    list_jobs >"$CONF/jobs"
    [ -s "$CONF/jobs" ] || die "nothing to run"
    say "$(wc -l <"$CONF/runs") runs of $NTESTS tests ($RUNS each) under $CONFIGS; $JOBS at a time," \
        "${TIMEOUT} s timeout"
    xargs -r -P "$JOBS" -L 1 bash "$SELF" --job <"$CONF/jobs"
}

main() {
    local start rc=0 mism
    start=$(date +%s)
    CPUS=$(nproc 2>/dev/null || echo 2)
    JOBS=${CONFORMANCE_JOBS:-$((4 * CPUS > 32 ? 32 : 4 * CPUS))}
    RUNS=${CONFORMANCE_RUNS:-1}
    CONFIGS=$(configs) || exit 2
    CONFIGS=${CONFIGS//$'\n'/ }
    prepare || rc=1
    run_matrix
    collect
    summarize 2>"$CONF/mismatches" | tee "$CONF/summary.txt"
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
    mism=$(cat "$CONF/mismatches")
    say "$([ $rc = 0 ] && echo passed || echo FAILED): $mism mismatches, $(($(date +%s) - start)) s;" \
        "logs in $CONF/logs/CONFIG/TEST.RUN.log" | tee -a "$CONF/summary.txt"
    exit $rc
}

main "$@"
