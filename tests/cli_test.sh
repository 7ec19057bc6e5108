#!/usr/bin/env bash
# Command-line contract tests: list, topo, bench, bad input (one sentence,
# non-zero exit, nothing half-written).
set -u
NL=${1:?usage: cli_test.sh path/to/numalock}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok()   { pass=$((pass+1)); }
bad()  { fail=$((fail+1)); echo "FAIL: $*" >&2; }
py()   { python3 -c "$@"; }

# expect_err DESCRIPTION PATTERN -- command...: non-zero exit, one line on stderr matching PATTERN, empty stdout
expect_err() {
  local what=$1 pat=$2; shift 3
  "$@" >"$T/out" 2>"$T/err"; local rc=$?
  if [ $rc -eq 0 ]; then bad "$what: exit 0"; return; fi
  if [ "$(wc -l <"$T/err")" -ne 1 ]; then bad "$what: stderr is not one line: $(cat "$T/err")"; return; fi
  if ! grep -q -- "$pat" "$T/err"; then bad "$what: stderr '$(cat "$T/err")' lacks '$pat'"; return; fi
  if [ -s "$T/out" ]; then bad "$what: wrote to stdout"; return; fi
  ok
}

# list
"$NL" list >"$T/list" && grep -q '^mcs ' "$T/list" && ok || bad "list"
"$NL" list --json >"$T/list.json" && py "
import json,sys
d=json.load(open('$T/list.json'))
names={x['name'] for x in d}
assert {'mcs','ticket','tas','ttas','hbo','pthread'} <= names, names
for x in d:
    for k in ('name','bytes','bytes_at_nodes','fair','blocking','numa_aware','api'):
        assert k in x, (x['name'],k)
m=[x for x in d if x['name']=='mcs'][0]
assert m['bytes']==8 and m['fair'] and not m['blocking'], m
assert [x for x in d if x['name']=='hbo'][0]['numa_aware']
" && ok || bad "list --json"
expect_err "list bad flag" "'--bogus'" -- "$NL" list --bogus

# topo
"$NL" topo --json >"$T/topo.json" && py "
import json; d=json.load(open('$T/topo.json')); assert d['node_count']>=1 and len(d['nodes'])==d['node_count'] and d['nodes'][0]['cpus'], d" && ok || bad "topo --json"
"$NL" topo --topology virtual:4 --json >"$T/topo4.json" && py "
import json; d=json.load(open('$T/topo4.json')); assert d['node_count']==4 and d['kind']=='virtual' and len(d['nodes'])==4" && ok || bad "topo virtual:4"
"$NL" topo --topology cpus:0 --json >"$T/topoc.json" && py "
import json; d=json.load(open('$T/topoc.json')); assert d['kind']=='cpus' and 0 in d['nodes'][0]['cpus']" && ok || bad "topo cpus:0"
NUMALOCK_TOPOLOGY=virtual:3 "$NL" topo --json | py "import json,sys; assert json.load(sys.stdin)['node_count']==3" && ok || bad "NUMALOCK_TOPOLOGY"
expect_err "topo virtual:0" "virtual:0" -- "$NL" topo --topology virtual:0
expect_err "topo bogus" "valid forms" -- "$NL" topo --topology bogus
expect_err "topo absent cpu" "CPU 4000 is not present" -- "$NL" topo --topology cpus:0/4000
NUMALOCK_TOPOLOGY=bogus expect_err "env topology" "NUMALOCK_TOPOLOGY" -- "$NL" topo

# bad commands and flags
expect_err "unknown command" "valid commands" -- "$NL" frobnicate
expect_err "unknown workload" "unknown workload 'nope'" -- "$NL" bench nope
expect_err "unknown lock" "unknown lock 'nope': valid choices are all, pthread" -- "$NL" bench kvmap --lock mcs,nope --json "$T/x.json"
[ ! -e "$T/x.json" ] && [ ! -e "$T/x.json.tmp" ] && ok || bad "unknown lock left a file"
expect_err "bad threads" "bad thread list '0'" -- "$NL" bench kvmap --threads 0
expect_err "bad duration" "bad duration 'x'" -- "$NL" bench kvmap --duration x
expect_err "bad workload flag" "unknown option '--frob' for workload kvmap" -- "$NL" bench kvmap --frob 1
expect_err "bad workload value" "bad value '-3' for --key-range" -- "$NL" bench kvmap --key-range -3
expect_err "bad topology in bench" "virtual:0" -- "$NL" bench kvmap --topology virtual:0
expect_err "unwritable json" "cannot write JSON file" -- "$NL" bench kvmap --lock mcs --threads 1 --duration 0.1 --json "$T/no/such/dir/x.json"

# bench kvmap: JSON has every field, stats are consistent, remote hand-overs appear with virtual:2
"$NL" bench kvmap --lock mcs,ticket,pthread --threads 1,4 --duration 0.3 --topology virtual:2 --json "$T/kv.json" >"$T/kv.txt" && py "
import json
d=json.load(open('$T/kv.json'))
assert d['meta']['workload']=='kvmap' and 'numalock bench kvmap' in d['meta']['command']
recs=d['records']; assert len(recs)==6, len(recs)
for r in recs:
    for k in ('workload','lock','threads','topology','duration_s','ops','throughput_ops_per_s','per_thread_ops','fairness_factor','handovers','remote_handovers'):
        assert k in r, k
    assert r['topology']=='virtual:2' and len(r['per_thread_ops'])==r['threads'] and sum(r['per_thread_ops'])==r['ops']
    assert r['ops']>0 and r['acquisitions']>=r['handovers']>=r['remote_handovers']>=0
    if r['threads']==1: assert r['handovers']==0 and r['fairness_factor'] is None
    else: assert 0.5<=r['fairness_factor']<=1.0
    assert 'ratio_to_baseline' in r
m4=[r for r in recs if r['lock']=='mcs' and r['threads']==4][0]
assert m4['remote_handovers']>0, m4
" && ok || bad "bench kvmap json"

# latency: pthread always present, ratios against it
"$NL" bench latency --lock mcs --rounds 3 --pairs 20000 --json "$T/lat.json" >/dev/null && py "
import json
recs=json.load(open('$T/lat.json'))['records']
names=[r['lock'] for r in recs]; assert names==['mcs','pthread'], names
p=[r for r in recs if r['lock']=='pthread'][0]; assert abs(p['ratio_to_baseline']-1.0)<1e-9
assert all(r['ns_per_pair']>0 for r in recs)
# one ratio, one direction: above 1 is faster than pthread. The ratio is the median of the rounds' own
# ratios (paired), ns_per_pair each lock's median: where the two locks are within 10 % of each other (mcs
# and pthread uncontended: 24 ns each) the two medians may fall on either side of 1
m=recs[0]; q=p['ns_per_pair']/m['ns_per_pair']
assert 'ratio_to_pthread' not in m and (abs(q-1)<0.1 or (m['ratio_to_baseline']>1)==(q>1)), m
assert 0.5*q < m['ratio_to_baseline'] < 2*q, (m, q)
" && ok || bad "bench latency json"

# the console table: a labelled column per figure, no raw JSON, no column of '-' only
# (latency has no remote share or fairness), the parameters once above the table
out=$("$NL" bench latency --lock tas --rounds 3 --pairs 1000)
head=$(echo "$out" | sed -n 2p)
if ! echo "$out" | grep -q '"' && [ "$(echo "$out" | head -1)" = "every row: rounds 3, pairs_per_round 1000" ] &&
   echo "$head" | grep -q 'x pthread  ns_per_pair$' && ! echo "$head" | grep -q 'remote\|fairness'; then ok
else bad "bench table: $out"; fi

# instructions (callgrind): integer counts per pair, repeatable, pthread always present
if command -v valgrind >/dev/null; then
  "$NL" bench instructions --lock mcs --pairs 5000 --json "$T/ins.json" >/dev/null && \
  "$NL" bench instructions --lock mcs --pairs 5000 --json "$T/ins2.json" >/dev/null && py "
import json
a=json.load(open('$T/ins.json'))['records']; b=json.load(open('$T/ins2.json'))['records']
assert [r['lock'] for r in a]==['mcs','pthread']
for x,y in zip(a,b):
    assert x['instructions_per_pair']==y['instructions_per_pair']>0, (x,y)
# a count, not a rate; the ratio as everywhere: above 1 is fewer instructions than pthread
m,p=a
assert m['throughput_ops_per_s'] is None and 'instructions_ratio_to_pthread' not in m, m
assert abs(m['ratio_to_baseline']-p['instructions_per_pair']/m['instructions_per_pair'])<0.01, m
" && ok || bad "bench instructions"
fi

echo "cli: $pass passed, $fail failed"
[ $fail -eq 0 ]
