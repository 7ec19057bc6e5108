#!/bin/sh
# `numalock topo --measure` and `--topology measured` from the command line.
# usage: topo_cli_test.sh NUMALOCK_BINARY
set -u
B="$1"
T="${TMPDIR:-/tmp}/numalock-topo-cli.$$"
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
fail=0
check() { # description, then a command that must succeed
    d="$1"; shift
    if "$@"; then :; else echo "FAIL: $d"; fail=1; fi
}
export NUMALOCK_TOPOLOGY_FILE="$T/stored"

# a measurement of this machine: matrix, verdict, spec, stored file, JSON
"$B" topo --measure --budget 5 --json "$T/c2c.json" >"$T/out" 2>"$T/err"
check "topo --measure exits 0" test $? -eq 0
check "prints a verdict" grep -q '^verdict: ' "$T/out"
check "prints a cpus: spec" grep -q '^spec: cpus:' "$T/out"
check "stores the measurement" grep -q '^spec cpus:' "$T/stored"
check "JSON has the matrix" grep -q '"matrix_ns"' "$T/c2c.json"
check "JSON has the verdict" grep -q '"verdict"' "$T/c2c.json"
[ "$(nproc)" -lt 4 ] && check "fewer than 4 CPUs: one node" grep -q 'no clear clusters: one node' "$T/out"

# --topology measured reads the stored file (a spec no measurement gives here)
cpus=$(sed -n 's/^cpus //p' "$T/stored")
if [ "$(nproc)" -ge 2 ]; then
    printf 'numalock measured topology 1\ncpus %s\nspec cpus:0/1\n' "$cpus" >"$T/stored"
    "$B" topo --topology measured >"$T/out2" 2>&1
    check "topo --topology measured: 2 nodes from the stored file" grep -q 'measured (cpus), 2 nodes' "$T/out2"
    NUMALOCK_TOPOLOGY=measured "$B" topo >"$T/out3" 2>&1
    check "NUMALOCK_TOPOLOGY=measured too" grep -q 'measured (cpus), 2 nodes' "$T/out3"
fi

# a matrix from a file: two clear clusters, and a flat one
{
    echo "cpu 0 1 2 3 4 5"
    for i in 0 1 2 3 4 5; do
        printf '%d' $i
        for j in 0 1 2 3 4 5; do
            if [ $i -eq $j ]; then printf ' -'
            elif [ $((i / 3)) -eq $((j / 3)) ]; then printf ' %d' $((70 + i + j))
            else printf ' %d' $((190 + i - j)); fi
        done
        echo
    done
} >"$T/two.txt"
"$B" topo --measure --matrix "$T/two.txt" >"$T/out4" 2>&1
check "matrix file: 2 clusters" grep -q '^verdict: 2 clusters (2.*x apart): use --topology cpus:0-2/3-5' "$T/out4"
sed -E "s/ 1[89][0-9]/ 75/g" "$T/two.txt" >"$T/flat.txt"
"$B" topo --measure --matrix "$T/flat.txt" >"$T/out5" 2>&1
check "flat matrix file: one node" grep -q '^verdict: no clear clusters: one node' "$T/out5"

# bad input: one sentence naming the value, non-zero exit, nothing written
for args in "--method xchg" "--rounds 0" "--budget -1" "--cpus 9999" "--cpus 1,1" "--bogus" "--rounds" \
            "--matrix $T/nonexistent"; do
    # shellcheck disable=SC2086
    "$B" topo --measure $args --json "$T/bad.json" >"$T/o" 2>"$T/e"
    rc=$?
    check "bad '$args' fails" test $rc -ne 0
    check "bad '$args' says one line" test "$(wc -l <"$T/e")" -eq 1
    check "bad '$args' writes no JSON" test ! -e "$T/bad.json"
done
"$B" topo --topology measure >"$T/o" 2>"$T/e"
check "unknown spec lists measured" grep -q 'measured' "$T/e"

[ $fail -eq 0 ] && echo "topo cli: ok"
exit $fail
