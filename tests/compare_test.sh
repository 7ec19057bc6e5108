#!/usr/bin/env bash
# `numalock compare`: the table, the JSON and the plot of a small run, the
# metric and {threads}/--threads-env, bad input (one sentence, status 2,
# nothing written), a program that fails under one lock only, --same-output,
# an interrupt (the program killed, no file left), a compare line in a
# report suite, report.py's section for the JSON, and the installed command.
# Never asserts on timing.
#   compare_test.sh NUMALOCK_CLI LOCKBOUND BUILD_DIR
set -u
NL=${1:?usage: compare_test.sh NUMALOCK_CLI LOCKBOUND BUILD_DIR}
LB=${2:?}
BUILD=${3:?}
T=$(mktemp -d /tmp/nl-compare.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "ok   $*"; }
bad() { fail=$((fail+1)); echo "FAIL: $*" >&2; }
DATA=$(dirname "$NL")/../share/numalock
# the python the command runs compare.py with (tools/numalock.c python_path)
PY=python3
if [ -n "${NUMALOCK_PYTHON:-}" ]; then PY=$NUMALOCK_PYTHON
elif [ -x "$DATA/python3" ]; then PY=$(readlink "$DATA/python3" || echo "$DATA/python3"); fi

# expect_bad WHAT PATTERN ARGS...: status 2, one line on stderr matching
# PATTERN, nothing on stdout, no JSON file
expect_bad() {
    local what=$1 pat=$2; shift 2
    rm -f "$T/bad.json"
    "$NL" compare "$@" >"$T/out" 2>"$T/err"; local rc=$?
    if [ $rc -ne 2 ]; then bad "$what: exit $rc, expected 2 ($(cat "$T/err"))"; return; fi
    if [ "$(wc -l <"$T/err")" -ne 1 ]; then bad "$what: stderr is not one line: $(cat "$T/err")"; return; fi
    if ! grep -q -- "$pat" "$T/err"; then bad "$what: stderr '$(cat "$T/err")' lacks '$pat'"; return; fi
    if [ -s "$T/out" ]; then bad "$what: wrote to stdout"; return; fi
    if ls -a "$T" | grep -q 'bad\.json'; then bad "$what: left a JSON file"; return; fi
    ok "$what: $(cat "$T/err")"
}

# ---- a small run: 2 locks, 2 runs, 2 thread counts ----------------------------
plot=(--plot "$T/lb.png")
"$NL" compare --lock glibc,hbo --runs 2 --threads 1,2 --same-output --json "$T/lb.json" "${plot[@]}" \
    -- "$LB" {threads} 20000 >"$T/lb.out" 2>"$T/lb.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "needs matplotlib" "$T/lb.err"; then
    echo "note: $(cat "$T/lb.err"): the plot checks are skipped"
    plot=()
    "$NL" compare --lock glibc,hbo --runs 2 --threads 1,2 --same-output --json "$T/lb.json" \
        -- "$LB" {threads} 20000 >"$T/lb.out" 2>"$T/lb.err"
    rc=$?
fi
[ $rc -eq 0 ] && ok "lockbound: exit 0" || bad "lockbound: exit $rc: $(cat "$T/lb.err")"
for pat in '^numalock compare: nl_lockbound {threads} 20000: wall time' '^threads 1:' '^threads 2:' \
           '^  lock  *median (s)  *min-max  *x glibc  *cpu (s)  *contended  *remote  *status' \
           '^  glibc  .*  1\.00  .*  ok$' '^  hbo  .*  ok$' '^  recommendation (threads 2): '; do
    [ "$(grep -c -- "$pat" "$T/lb.out")" -ge 1 ] && ok "table has '$pat'" || bad "table lacks '$pat': $(cat "$T/lb.out")"
done
[ "$(grep -c '^  glibc ' "$T/lb.out")" -eq 2 ] && ok "one glibc row per thread count" || bad "glibc rows: $(cat "$T/lb.out")"
grep -q '^compare: round 2/2, threads 2' "$T/lb.err" && ok "progress on stderr" || bad "no progress line: $(cat "$T/lb.err")"
# does this preload library write the JSON profile? (NUMALOCK_STATS_FORMAT=json)
LD_PRELOAD=$BUILD/lib/libnumalock-preload.so NUMALOCK_LOCK=hbo NUMALOCK_STATS=1 NUMALOCK_STATS_FORMAT=json \
    NUMALOCK_STATS_FILE=$T/probe "$LB" 2 1000 >/dev/null 2>&1
JSON_PROFILE=0
$PY -c "import json,sys; [json.loads(l) for l in open(sys.argv[1]) if l.strip()]" "$T/probe" 2>/dev/null && JSON_PROFILE=1
$PY - "$T/lb.json" "$JSON_PROFILE" <<'EOF' && ok "JSON: meta, 4 records of 2 runs, summaries, profile ($JSON_PROFILE)" || bad "JSON contents"
import json, sys
d = json.load(open(sys.argv[1]))
json_profile = sys.argv[2] == "1"
assert d["meta"]["tool"] == "numalock compare" and "--lock glibc,hbo" in d["meta"]["command"], d["meta"]
assert d["meta"]["params"]["runs"] == 2 and d["meta"]["params"]["same_output"] is True
recs = d["records"]
assert [(r["lock"], r["threads"]) for r in recs] == [("glibc", 1), ("hbo", 1), ("glibc", 2), ("hbo", 2)], recs
for r in recs:
    for k in ("workload", "label", "median", "min", "max", "ratio_to_glibc", "cpu_median_s", "runs", "status",
              "contended_share", "remote_share", "acquisitions", "contended", "handovers", "remote_handovers",
              "recommendation", "argv", "profile_run"):
        assert k in r, (k, r)
    assert r["workload"] == "compare" and r["status"] == "ok" and len(r["runs"]) == 2, r
    assert r["min"] <= r["median"] <= r["max"], r
    assert all(run["status"] == "ok" and run["exit"] == 0 and run["wall_s"] > 0 for run in r["runs"]), r
    assert sorted(run["round"] for run in r["runs"]) == [1, 2], r
    assert r["argv"][1] == str(r["threads"]), r
    if json_profile:
        # lockbound takes its one mutex threads x 20000 times, plus the preload's own
        assert r["acquisitions"] >= r["threads"] * 20000, r
        assert 0 <= r["contended_share"] <= 1, r
    else:
        assert r["contended_share"] is None and "not JSON" in r["profile_note"], r
glibc = [r for r in recs if r["lock"] == "glibc"]
assert all(r["ratio_to_glibc"] == 1.0 for r in glibc), glibc
assert [s["threads"] for s in d["summary"]] == [1, 2] and all(s["text"] for s in d["summary"]), d["summary"]
EOF
if [ ${#plot[@]} -gt 0 ]; then
    [ "$(head -c 8 "$T/lb.png" | od -An -c | tr -d ' ')" = '211PNG\r\n032\n' ] && ok "plot is a PNG" ||
        bad "no PNG at $T/lb.png"
fi
ls -a "$T" | grep -q '\.tmp' && bad "temporary files left: $(ls -a "$T")" || ok "no temporary files left"

# ---- the metric, --threads-env, and the JSON profile parser ------------------
cat >"$T/echo.sh" <<'EOF'
#!/bin/sh
# prints its thread count as the metric; stdout is the same under every lock
echo "work done"
echo "value = $NLT_THREADS" >&2
EOF
chmod +x "$T/echo.sh"
"$NL" compare --lock glibc,tas --runs 2 --threads-env NLT_THREADS=1,3 --metric 'value = ([0-9]+)' --same-output \
    --no-profile --json "$T/m.json" -- "$T/echo.sh" >"$T/m.out" 2>"$T/m.err"
rc=$?
[ $rc -eq 0 ] && grep -q '^threads 3 (NLT_THREADS=3):' "$T/m.out" && ok "--threads-env and --metric: exit 0" ||
    bad "--threads-env and --metric: exit $rc: $(cat "$T/m.out" "$T/m.err")"
$PY - "$T/m.json" <<'EOF' && ok "metric values from stderr, per thread value" || bad "metric values"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["records"]:
    assert r["median"] == r["threads"] and [x["value"] for x in r["runs"]] == [r["threads"]] * 2, r
    assert r["higher_better"] is True and r["threads_env"] == "NLT_THREADS", r
EOF
$PY - "$DATA/compare.py" "$T" <<'EOF' && ok "profile parser: JSON lines summed, text is unknown" || bad "profile parser"
import importlib.util, json, pathlib, sys
spec = importlib.util.spec_from_file_location("compare", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
sys.modules["compare"] = mod  # its dataclasses look their module up there
spec.loader.exec_module(mod)
d = pathlib.Path(sys.argv[2])
(d / "p1").write_text(json.dumps({"acquisitions": 10, "contended": 4, "handovers": 5, "remote_handovers": 1}) + "\n"
                      + json.dumps({"acquisitions": 30, "contended": 6, "handovers": 5, "remote_handovers": 3}) + "\n")
sums, note = mod.parse_profile(d / "p1")
assert sums == {"acquisitions": 40, "contended": 10, "handovers": 10, "remote_handovers": 4} and note is None, sums
(d / "p2").write_text("numalock: lock profile of pid 1\n")
sums, note = mod.parse_profile(d / "p2")
assert sums is None and "not JSON" in note, note
EOF

# timing runs have the preload's statistics off, whatever the caller set
printf '#!/bin/sh\necho "stats=${NUMALOCK_STATS:-0}${NUMALOCK_STATS_FILE:+1}${NUMALOCK_STATS_FORMAT:+1}"\n' >"$T/stats.sh"
chmod +x "$T/stats.sh"
NUMALOCK_STATS=1 NUMALOCK_STATS_FILE=$T/caller-stats NUMALOCK_STATS_FORMAT=text "$NL" compare --lock glibc,hbo \
    --runs 2 --metric 'stats=([0-9]+)' --json "$T/st.json" -- "$T/stats.sh" >"$T/st.out" 2>&1
rc=$?
$PY -c "
import json,sys; d=json.load(open(sys.argv[1]))
v=[x['value'] for r in d['records'] for x in r['runs']]; assert v == [0, 0, 0, 0], v" "$T/st.json" &&
    [ $rc -eq 0 ] && ok "timing runs have statistics off" || bad "statistics in timing runs: exit $rc: $(cat "$T/st.out")"

# ---- bad input ---------------------------------------------------------------
J=(--json "$T/bad.json")
expect_bad "unknown lock" "unknown lock 'nope': valid locks are all, glibc, pthread, .*hbo" --lock glibc,nope "${J[@]}" -- "$LB"
expect_bad "lock that cannot replace a mutex" "lock 'mcs' cannot replace pthread mutexes: .*; valid locks are" \
    --lock mcs "${J[@]}" -- "$LB"
expect_bad "bad regex" "bad --metric regex '(x'" --lock hbo --metric '(x' "${J[@]}" -- "$LB"
expect_bad "regex without a group" "regex 'ops' has 0 capture groups: it needs exactly one" --lock hbo --metric ops "${J[@]}" -- "$LB"
expect_bad "regex with two groups" "has 2 capture groups" --lock hbo --metric '(a)(b)' "${J[@]}" -- "$LB"
expect_bad "program not found" "program 'no-such-program-x' not found in PATH" --lock hbo "${J[@]}" -- no-such-program-x
expect_bad "missing program with its package" "it comes with the Debian package zz" --lock hbo --package 'the Debian package zz' -- no-such-program-x
expect_bad "no program" "no program given" --lock hbo "${J[@]}"
expect_bad "bad runs" "bad --runs 'x': give a whole number" --lock hbo --runs x "${J[@]}" -- "$LB"
expect_bad "zero runs" "bad --runs '0'" --lock hbo --runs 0 "${J[@]}" -- "$LB"
expect_bad "bad threads-env" "bad --threads-env 'THREADS': give VAR=LIST" --lock hbo --threads-env THREADS "${J[@]}" -- "$LB"
expect_bad "bad threads-env list" "bad --threads-env list '1,x'" --lock hbo --threads-env T=1,x "${J[@]}" -- "$LB"
expect_bad "{threads} without values" "use {threads} but no --threads" --lock hbo "${J[@]}" -- "$LB" {threads}
expect_bad "unknown option" "unknown option '--frob'" --lock hbo --frob "${J[@]}" -- "$LB"
expect_bad "no --lock" "no --lock given" "${J[@]}" -- "$LB"
expect_bad "bad JSON folder" "the folder '$T/none' does not exist" --lock hbo --json "$T/none/x.json" -- "$LB"

# ---- a program that fails under one lock only ---------------------------------
cat >"$T/fail_hbo.sh" <<'EOF'
#!/bin/sh
[ "${NUMALOCK_LOCK:-}" = hbo ] && exit 3
exit 0
EOF
chmod +x "$T/fail_hbo.sh"
"$NL" compare --lock glibc,hbo,tas --runs 2 --json "$T/f.json" -- "$T/fail_hbo.sh" >"$T/f.out" 2>"$T/f.err"
rc=$?
[ $rc -eq 1 ] && ok "failure under one lock: exit 1" || bad "failure under one lock: exit $rc"
grep -q '^  hbo .*FAILED: round 1: exit status 3$' "$T/f.out" && ok "the failing lock is named with its exit status" ||
    bad "no FAILED row for hbo: $(cat "$T/f.out")"
grep -q '^  glibc .* ok$' "$T/f.out" && grep -q '^  tas .* ok$' "$T/f.out" && ok "the other locks are reported" ||
    bad "glibc and tas not reported: $(cat "$T/f.out")"
grep -q "failed under hbo: round 1: exit status 3" "$T/f.err" && ok "stderr names the failure" || bad "stderr: $(cat "$T/f.err")"
$PY -c "
import json,sys; d=json.load(open(sys.argv[1])); s={r['lock']: r['status'] for r in d['records']}
assert s == {'glibc': 'ok', 'hbo': 'failed', 'tas': 'ok'}, s
h=[r for r in d['records'] if r['lock']=='hbo'][0]; assert len(h['runs'])==1 and h['runs'][0]['exit']==3, h" "$T/f.json" &&
    ok "JSON written, the failure recorded" || bad "failure JSON"
"$NL" compare --lock glibc,tas --runs 1 --metric 'never printed ([0-9]+)' -- /bin/true >"$T/nm.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q 'FAILED: round 1: metric not found' "$T/nm.out" && ok "a missing metric fails the run" ||
    bad "missing metric: exit $rc: $(cat "$T/nm.out")"
cat >"$T/which.sh" <<'EOF'
#!/bin/sh
echo "lock ${NUMALOCK_LOCK:-glibc}"
EOF
chmod +x "$T/which.sh"
"$NL" compare --lock glibc,tas --runs 1 --same-output --no-profile -- "$T/which.sh" >"$T/so.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "^  tas .*FAILED: round 1: stdout differs from the first run's" "$T/so.out" &&
    ok "--same-output catches another stdout" || bad "--same-output: exit $rc: $(cat "$T/so.out")"

# ---- an interrupt: the program killed, no file written -------------------------
cat >"$T/slow.sh" <<'EOF'
#!/bin/sh
echo $$ >"$1.$NUMALOCK_LOCK"
exec sleep 60
EOF
chmod +x "$T/slow.sh"
"$NL" compare --lock hbo --runs 1 --json "$T/int.json" -- "$T/slow.sh" "$T/pid" >"$T/int.out" 2>"$T/int.err" &
cpid=$!
for _ in $(seq 100); do ls "$T"/pid.* >/dev/null 2>&1 && break; sleep 0.1; done
sleep 0.3
kill -INT $cpid
for _ in $(seq 100); do kill -0 $cpid 2>/dev/null || break; sleep 0.1; done
if kill -0 $cpid 2>/dev/null; then
    bad "SIGINT: compare still runs"; kill -KILL $cpid
fi
wait $cpid; rc=$?
[ $rc -eq 130 ] && ok "SIGINT: exit 130" || bad "SIGINT: exit $rc: $(cat "$T/int.err")"
ls -a "$T" | grep -q 'int\.json' && bad "SIGINT left a JSON file: $(ls -a "$T")" || ok "SIGINT: no JSON file"
spid=$(cat "$T"/pid.* 2>/dev/null | head -1)
if [ -n "$spid" ] && kill -0 "$spid" 2>/dev/null; then
    bad "SIGINT: the program ($spid) still runs"; kill -KILL "$spid"
else
    ok "SIGINT: the program was killed"
fi

# ---- a compare line in a report suite, and report.py's section ----------------
cat >"$T/suite.txt" <<EOF
# a quoted word keeps its blanks
compare --label tiny --lock glibc,tas --runs 2 --no-profile --metric 'value = ([0-9]+)' --json tiny.json -- sh -c 'echo value = 7'
EOF
"$NL" report --suite "$T/suite.txt" --out "$T/r" --no-render >"$T/r.out" 2>"$T/r.err"
rc=$?
[ $rc -eq 0 ] && [ -s "$T/r/tiny.json" ] && ok "report suite with a compare line" ||
    bad "report suite: exit $rc: $(cat "$T/r.err")"
$PY -c "
import json,sys; d=json.load(open(sys.argv[1])); assert [r['median'] for r in d['records']] == [7, 7], d" "$T/r/tiny.json" &&
    ok "the quoted words reached the program" || bad "tiny.json values"
if [ ${#plot[@]} -gt 0 ]; then
    cp "$T/lb.json" "$T/r/"
    $PY "$DATA/report.py" "$T/r" >/dev/null 2>"$T/rp.err"
    if grep -q '^## Applications' "$T/r/report.md" 2>/dev/null && grep -q '^### tiny' "$T/r/report.md" &&
        grep -q '^### nl_lockbound {threads} 20000' "$T/r/report.md" && [ -s "$T/r/compare_tiny.png" ]; then
        ok "report.py: the Applications section with a plot per comparison"
    else
        bad "report.py section: $(cat "$T/rp.err")"
    fi
fi

# ---- the installed command finds its script and the preload library -----------
if cmake --install "$BUILD" --prefix "$T/inst" >/dev/null 2>&1; then
    (cd "$T" && "$T/inst/bin/numalock" compare --lock glibc,hbo --runs 1 -- /bin/true) >"$T/inst.out" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -q '^  hbo .* ok$' "$T/inst.out" && ok "installed: numalock compare runs" ||
        bad "installed compare: exit $rc: $(cat "$T/inst.out")"
else
    bad "cmake --install into $T/inst failed"
fi

echo "compare_test: $pass passed, $fail failed"
[ $fail -eq 0 ]
