#!/bin/sh
# `numalock bench contention`: every lock at 1 and 2 threads, the
# per-CPU figures in the JSON, the CPU orders, and bad input.
# usage: contention_test.sh NUMALOCK_BINARY
set -u
B="$1"
T="${TMPDIR:-/tmp}/numalock-contention.$$"
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
fail=0
check() { d="$1"; shift; if "$@"; then :; else echo "FAIL: $d"; fail=1; fi; }
threads=1; [ "$(nproc)" -ge 2 ] && threads=1,2

"$B" bench contention --lock all --threads $threads --duration 0.1 --json "$T/all.json" >"$T/out" 2>"$T/err"
check "every lock runs (exit 0)" test $? -eq 0
check "the slides' table is printed" grep -q 'ops/s per cpu' "$T/out"
python3 - "$T/all.json" "$threads" "$("$B" list | tail -n +2 | wc -l)" <<'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
threads = [int(t) for t in sys.argv[2].split(",")]
nlocks = int(sys.argv[3])
recs = doc["records"]
bad = []
if len(recs) != nlocks * len(threads):
    bad.append(f"{len(recs)} records, expected {nlocks} locks x {len(threads)} thread counts")
for r in recs:
    t = r["threads"]
    if r["workload"] != "contention": bad.append(f"{r['lock']}: workload {r['workload']}")
    if len(r["per_cpu_ops_per_s"]) != t or len(r["cpus"]) != t: bad.append(f"{r['lock']}@{t}: per-CPU lists")
    if len(set(r["cpus"])) != t: bad.append(f"{r['lock']}@{t}: a CPU used twice")
    # an unfair lock may starve a CPU for a short run: spread is then null
    if not sum(r["per_cpu_ops_per_s"]) > 0: bad.append(f"{r['lock']}@{t}: no CPU made progress")
    if min(r["per_cpu_ops_per_s"]) > 0 and not r["spread"] >= 1: bad.append(f"{r['lock']}@{t}: spread {r['spread']}")
    if min(r["per_cpu_ops_per_s"]) == 0 and r["spread"] is not None: bad.append(f"{r['lock']}@{t}: spread of a starved CPU")
    if abs(sum(r["per_cpu_ops_per_s"]) - r["throughput_ops_per_s"]) > 0.01 * r["throughput_ops_per_s"]:
        bad.append(f"{r['lock']}@{t}: total is not the sum of the CPUs")
    if r["lock_node"] is None and doc["meta"]["real_nodes"] == 1: bad.append(f"{r['lock']}@{t}: lock node unknown")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# orders: rr and an explicit list run; the list's order is kept
"$B" bench contention --lock mcs --threads 1 --duration 0.05 --cpus rr --quiet >/dev/null 2>&1
check "--cpus rr runs" test $? -eq 0
last=$(($(nproc) - 1))
"$B" bench contention --lock mcs --threads 1 --duration 0.05 --cpus $last --mem-node 0 --lines 3 \
    --json "$T/list.json" --quiet >/dev/null 2>&1
check "--cpus LIST --mem-node 0 --lines 3 runs" test $? -eq 0
check "the listed CPU is used" grep -q "\"cpus\": \[$last\]" "$T/list.json"

# bad input: one sentence naming the value, non-zero exit, no JSON
for args in "--cpus 0,0" "--cpus fil" "--cpus 99999" "--mem-node 999" "--mem-node x" "--lines 1000" \
            "--threads $(($(nproc) + 1))"; do
    # shellcheck disable=SC2086
    "$B" bench contention --lock mcs --duration 0.05 $args --json "$T/bad.json" >"$T/o" 2>"$T/e"
    rc=$?
    check "bad '$args' fails" test $rc -ne 0
    check "bad '$args' says why in one line" test "$(grep -c 'numalock bench:' "$T/e")" -eq 1
    check "bad '$args' writes no JSON" test ! -e "$T/bad.json"
done
[ $fail -eq 0 ] && echo "contention: ok"
exit $fail
