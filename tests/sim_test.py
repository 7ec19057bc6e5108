#!/usr/bin/env python3
"""The simulator's tests (tests/sim.cmake), each one that can fail:
  determinism  two runs with one seed give the same records (less the host
               seconds), also with environments of other sizes and another
               working directory; another seed gives other figures
  ratio        kvmap 80/20 on cna-2s, 64 threads, 10 ms: CNA at least 1.25x MCS,
               its remote hand-overs below 5 %, MCS's above 20 %
  keep         tas at 2 threads on one socket of cna-2s: the releasing core
               keeps the lock's line until the waiter's request arrives and
               takes the lock again first, so fewer than 0.62 hand-overs an
               operation (0.68 when the line changed hands at the request)
  inflight     the ticket lock's contention test, 24 threads round-robin over the
               8 sockets of hp-8s: a copy on its way to a cache serves nobody
               before it arrives (a socket's other spinners wait for the first
               one's copy), so at least 7.8 off-socket misses an operation
               (7.2 when the copy served at once)
  home         the same test, 8 threads round-robin over hp-4s's 4 sockets: a
               read of a copy from another socket goes through the line's home,
               one request at a time, so at least 450 ns an operation (373 when
               such reads go out back to back); and one thread on each of
               hp-8s's 8 sockets at most 2,000 ns (3,090 when the reads through
               the node controllers also wait at the home)
  every_lock   every registered lock runs kvmap at 8 threads on cna-2s (2 ms):
               a record with operations for each (the NUMA-aware ones may
               leave a thread of the other node waiting that long)
  refusals     a bad machine, workload, placement or seed is one sentence and exit 2

usage: sim_test.py NUMALOCK TEST
"""
import json
import os
import subprocess
import sys
import tempfile


def sim(numalock, args, env=None, cwd=None):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        p = subprocess.run([numalock, "sim"] + args + ["--json", out, "--quiet"], capture_output=True, text=True,
                           env=env, cwd=cwd)
        if p.returncode:
            sys.exit("FAIL: numalock sim %s: %s" % (" ".join(args), p.stderr.strip()))
        with open(out) as f:
            return json.load(f)["records"]


def strip(records):
    return [{k: v for k, v in r.items() if k != "sim_host_s"} for r in records]


def determinism(numalock):
    args = ["kvmap", "--machine", "cna-2s", "--lock", "mcs,cna", "--threads", "16", "--virtual-ms", "2"]
    a, b = sim(numalock, args), sim(numalock, args)
    c = sim(numalock, args + ["--seed", "2"])
    if strip(a) != strip(b):
        return "two runs with seed 1 differ"
    # the environment's size moves the initial stack: it must not move the figures
    for pad in (1000, 3000, 3200, 5000):
        env = dict(os.environ, SIM_TEST_PAD="x" * pad)
        if strip(sim(numalock, args, env=env, cwd=tempfile.gettempdir())) != strip(a):
            return "seed 1 with %d bytes more environment gave other records" % pad
    if [r["ops"] for r in a] == [r["ops"] for r in c]:
        return "seed 2 gave the very same operation counts as seed 1"
    print("determinism: ops %s with seed 1 twice, %s with seed 2" % ([r["ops"] for r in a], [r["ops"] for r in c]))
    return None


def ratio(numalock):
    recs = sim(numalock, ["kvmap", "--machine", "cna-2s", "--lock", "mcs,cna", "--threads", "64",
                          "--virtual-ms", "10"])
    by = {r["lock"]: r for r in recs}
    q = by["cna"]["throughput_ops_per_s"] / by["mcs"]["throughput_ops_per_s"]
    print("ratio: CNA/MCS %.2f, remote share CNA %.3f MCS %.3f" % (q, by["cna"]["remote_share"],
                                                                   by["mcs"]["remote_share"]))
    if q < 1.25:
        return "CNA/MCS %.2f below 1.25" % q
    if not (by["cna"]["remote_share"] < 0.05 and by["mcs"]["remote_share"] > 0.2):
        return "remote shares: CNA %.3f, MCS %.3f" % (by["cna"]["remote_share"], by["mcs"]["remote_share"])
    return None


def keep(numalock):
    r = sim(numalock, ["kvmap", "--machine", "cna-2s", "--lock", "tas", "--threads", "2", "--placement", "fill",
                       "--virtual-ms", "10"])[0]
    h = r["handovers"] / r["ops"]
    print("keep: tas at 2 threads on one socket, %.3f hand-overs an operation" % h)
    return "tas hands over %.3f of its operations (>= 0.62)" % h if h >= 0.62 else None


def contention(numalock, machine, sockets, per_socket):
    """the ticket lock's HP contention test, per_socket threads on each socket, round-robin"""
    cpus = ",".join(str(s * 15 + k) for k in range(per_socket) for s in range(sockets))
    env = dict(os.environ, NUMALOCK_WAIT="spin")
    return sim(numalock, ["contention", "--machine", machine, "--lock", "ticket", "--threads",
                          str(sockets * per_socket), "--cpus", cpus, "--mem-node", "1", "--count", "0",
                          "--virtual-ms", "2"], env=env)[0]


def inflight(numalock):
    m = contention(numalock, "hp-8s", 8, 3)["sim_llc_misses_per_op"]
    print("inflight: %.2f off-socket misses an operation" % m)
    return "%.2f off-socket misses an operation (< 7.8)" % m if m < 7.8 else None


def home(numalock):
    r4, r8 = contention(numalock, "hp-4s", 4, 2), contention(numalock, "hp-8s", 8, 1)
    ns4, ns8 = (1e9 / (r["ops_per_s_per_cpu"] * r["threads"]) for r in (r4, r8))
    print("home: %.0f ns an operation on hp-4s's 4 sockets, %.0f on hp-8s's 8" % (ns4, ns8))
    if ns4 < 450:
        return "%.0f ns an operation on 4 sockets (< 450)" % ns4
    return "%.0f ns an operation on 8 sockets (> 2000)" % ns8 if ns8 > 2000 else None


def every_lock(numalock):
    names = [x["name"] for x in json.loads(subprocess.run([numalock, "list", "--json"], capture_output=True,
                                                          text=True, check=True).stdout)]
    recs = sim(numalock, ["kvmap", "--machine", "cna-2s", "--lock", ",".join(names), "--threads", "8",
                          "--virtual-ms", "2"])
    bad = [r["lock"] for r in recs if r["ops"] < 100]
    missing = set(names) - {r["lock"] for r in recs}
    print("every_lock: %d locks ran" % len(recs))
    return ("no records for %s" % sorted(missing)) if missing else ("fewer than 100 operations under %s" % bad
                                                                      if bad else None)


def refusals(numalock):
    cases = [(["kvmap", "--machine", "nope"], "unknown machine 'nope'"),
             (["latency", "--machine", "cna-2s"], "workload 'latency' is not simulated"),
             (["kvmap", "--machine", "cna-2s", "--placement", "x"], "unknown placement 'x'"),
             (["kvmap", "--machine", "cna-2s", "--seed", "z"], "bad value 'z' for --seed"),
             (["kvmap", "--machine", "cna-2s", "--duration", "1"], "--duration is not an option")]
    for args, want in cases:
        p = subprocess.run([numalock, "sim"] + args, capture_output=True, text=True)
        if p.returncode != 2 or want not in p.stderr or p.stderr.count("\n") != 1:
            return "numalock sim %s: exit %d, %r" % (" ".join(args), p.returncode, p.stderr)
    print("refusals: %d cases" % len(cases))
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    fail = globals()[sys.argv[2]](sys.argv[1])
    if fail:
        print("FAIL: " + fail)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
