#!/bin/sh
# Model-check the locks' own C code under weak memory with GenMC: every
# check (verify/wmm/<check>.c: one lock's source file, the verification
# environment env.c and the client client.h, one translation unit) under
# RC11 and IMM with 2 and 3 threads (more where a check asks), each with
# waiters that spin and with waiters that park (NL_VERIFY_PARK), and every
# broken variant (the same source with one memory order weakened, below),
# which must fail.
#   verify/wmm/run.sh GENMC [CHECK...]    GENMC: the genmc binary
# Prints one line per run: verdict, executions explored, time. Exit status 0
# when every run gave the expected verdict.
set -u
genmc=${1:?usage: verify/wmm/run.sh GENMC [CHECK...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
genmc_inc=$(cd "$(dirname "$genmc")/../include/genmc" 2>/dev/null && pwd) ||
    { echo "verify-wmm: no GenMC headers beside $genmc (its prefix's include/genmc)" >&2; exit 2; }
only=" $* "
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0 runs=0 t_all=$(date +%s)

want() { [ "$only" = "  " ] || case "$only" in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# Runs go in parallel, VERIFY_WMM_JOBS at once (default: the CPUs); each
# prints its line when it ends, so lines come in the order runs end.
jobs=${VERIFY_WMM_JOBS:-$(nproc 2>/dev/null || echo 1)}
case "$jobs" in ''|*[!0-9]*|0) echo "verify-wmm: VERIFY_WMM_JOBS='$jobs' is not a positive number of parallel runs" >&2; exit 2 ;; esac
pending="" nrun=0

# reap [N]: print and count the runs that ended, until fewer than N run
reap() {
    local limit=${1:-1} left e id pid n
    while :; do
        left="" n=0
        for e in $pending; do
            id=${e%%:*} pid=${e#*:}
            if kill -0 "$pid" 2>/dev/null; then left="$left $e"; n=$((n + 1)); continue; fi
            wait "$pid"
            cat "$work/res.$id"
            runs=$((runs + 1))
            [ -f "$work/wrong.$id" ] && failed=1
        done
        pending=$left
        [ "$n" -lt "$limit" ] && return
        sleep 0.2
    done
}

# genmc_run LABEL EXPECT(pass|fail) SRCROOT CHECK MODEL THREADS [CFLAGS...]
# The checks are read twice: the runs of 3 threads and more start in the
# first pass (pass=long), the others in the second, so that the long runs
# do not end the whole run alone on one CPU.
genmc_run() {
    case $pass in
    long) [ "$6" -ge 3 ] || return 0 ;;
    *) [ "$6" -lt 3 ] || return 0 ;;
    esac
    reap "$jobs"
    nrun=$((nrun + 1))
    genmc_one "$nrun" "$@" >"$work/res.$nrun" 2>&1 &
    pending="$pending $nrun:$!"
}

genmc_one() {
    local id=$1 label=$2 expect=$3 root=$4 file=$5 model=$6 nt=$7 t0 t1 rc execs got verdict what
    shift 7
    local out="$work/out.$id" bc="$work/in.$id.bc"
    t0=$(date +%s.%N)
    if sh "$here/compile.sh" "$genmc_inc" "$root" "$here/$file.c" "$bc" -DNL_THREADS="$nt" "$@" \
            >"$out" 2>&1; then
        "$genmc" "--$model" $bound --input-from-bitcode-file "$bc" >"$out" 2>&1
        rc=$?
    else
        rc=99
    fi
    t1=$(date +%s.%N)
    execs=$(sed -n 's/^Number of complete executions explored: //p' "$out")
    # a pass explored at least one complete execution (every execution
    # blocked is a check that checked nothing)
    if grep -q '^No errors were detected' "$out" && [ $rc = 0 ] && [ "${execs:-0}" -gt 0 ]; then got=pass
    elif grep -qE '^Error detected|violation|Non-terminating|Assertion|race' "$out"; then got=fail
    else got=broken; fi
    verdict=ok
    if [ "$got" != "$expect" ]; then verdict=WRONG; : >"$work/wrong.$id"; fi
    what=$(grep -m1 -E '^Error detected|Non-terminating|Assertion|race' "$out" | cut -c1-70)
    printf '%-5s %-24s %-4s %dT %-8s %-6s %8s execs %6.1fs  %s\n' "$verdict" "$label" "$model" "$nt" \
        "$(echo "$bound" | sed 's/--unroll=/unroll/; s/ *--check-liveness/+live/; s/^+//')" "$got" \
        "${execs:-?}" "$(echo "$t1 - $t0" | bc)" "$what"
    if [ "$verdict" != ok ]; then tail -25 "$out" | sed 's/^/    /'; fi
    rm -f "$out" "$bc"
}

# check NAME[:FILE] [-u N] [-3 MODELS] [THREADS...] [-- CFLAGS...]: verify/wmm/FILE.c
# (FILE defaults to NAME) must pass under RC11 and
# IMM. -u N: every loop unrolled N times, safety only (for loops GenMC
# cannot read as awaits: executions that need more iterations are cut, and
# termination is not checked); otherwise termination is checked too
# (--check-liveness: a waiter that spins for ever is an error). -u N -l:
# unrolled, and termination checked within the bound too. -3 RUNS:
# the 3-thread runs, where all four take too long: a list of MODEL
# (waiters spin) and MODEL/park (waiters park), e.g. "rc11 rc11/park".
bound=--check-liveness
check() {
    local name=${1%%:*} file=${1#*:} threads="" m t
    shift
    checked="$checked$name "
    want "$name" || return 0
    bound=--check-liveness
    local models3="rc11 rc11/park imm imm/park"
    if [ "${1:-}" = -u ]; then bound="--unroll=$2"; shift 2; fi
    if [ "${1:-}" = -l ]; then bound="$bound --check-liveness"; shift; fi
    if [ "${1:-}" = -3 ]; then models3=$2; shift 2; fi
    while [ $# -gt 0 ] && [ "$1" != -- ]; do threads="$threads $1"; shift; done
    [ $# -gt 0 ] && shift
    for m in rc11 imm; do
        for t in ${threads:-2 3}; do
            runs3=" $(if [ "$t" -ge 3 ]; then echo "$models3"; else echo "$m $m/park"; fi) "
            case "$runs3" in *" $m "*) genmc_run "$name" pass "$top" "$file" $m "$t" "$@" ;; esac
            case "$runs3" in
            *" $m/park "*) genmc_run "$name/park" pass "$top" "$file" $m "$t" -DNL_VERIFY_PARK "$@" ;;
            esac
        done
    done
}

# broken NAME CHECK FILE 'FROM' 'TO' [-u N [-l]] [THREADS] [-- CFLAGS...]: the check
# on a copy of the sources whose FILE (under the top) has FROM (a fixed
# string, once) replaced by TO must fail under both models.
broken() {
    local name=$1 ck=$2 f=$3 from=$4 to=$5 t=2 root n m
    shift 5
    want "$ck" || want "$name" || return 0
    bound=--check-liveness
    if [ "${1:-}" = -u ]; then bound="--unroll=$2"; shift 2; fi
    if [ "${1:-}" = -l ]; then bound="$bound --check-liveness"; shift; fi
    if [ $# -gt 0 ] && [ "$1" != -- ]; then t=$1; shift; fi
    [ $# -gt 0 ] && shift
    root="$work/src-$name"
    # the copy is made once, in the first pass
    if [ ! -d "$root" ]; then
        mkdir -p "$root"; cp -R "$top/src" "$top/include" "$root/"
        n=$(FROM=$from python3 -c 'import os,sys; print(open(sys.argv[1]).read().count(os.environ["FROM"]))' "$root/$f")
        if [ "$n" != 1 ]; then
            echo "WRONG broken:$name: '$from' occurs $n times in $f (must be once)"; failed=1
            : >"$root.bad"
        else
            FROM=$from TO=$to python3 -c 'import os,sys; p=sys.argv[1]; s=open(p).read(); open(p,"w").write(s.replace(os.environ["FROM"], os.environ["TO"]))' "$root/$f"
        fi
    fi
    [ -f "$root.bad" ] && return
    for m in rc11 imm; do genmc_run "broken:$name" fail "$root" "$ck" $m "$t" "$@"; done
}

for pass in long short; do
    checked=" "
    . "$here/checks.sh"

    # every registered lock (src/locks/registry.def) without a check of its
    # own gets the generic one (generic.c: its operations table under the
    # client); the locks that wrap glibc's own objects (src/locks/pthread_*.c)
    # are not the library's code and have none
    while read -r sym name; do
        case "$checked" in *" $name "*) continue ;; esac
        file=$(grep -l "nl_ops_$sym\b" "$top"/src/locks/*.c | head -n 1)
        case "$file" in ""|*/pthread_*) continue ;; esac
        check "$name:generic" -- -DNL_GENERIC_FILE="\"locks/$(basename "$file")\"" -DNL_GENERIC_OPS="nl_ops_$sym"
    done <<EOF2
$(sed -n 's/^NL_LOCK(\([a-z0-9_]*\), *"\([^"]*\)").*/\1 \2/p' "$top/src/locks/registry.def")
EOF2
done

reap 1
echo "verify-wmm: $runs runs in $(( $(date +%s) - t_all )) s: $( [ $failed = 0 ] && echo 'every verdict as expected' || echo 'SOME VERDICTS WRONG')"
exit $failed
