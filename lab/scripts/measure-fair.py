#!/usr/bin/env python3
"""Fairness beside busy programs: kvmap virtual:2, each queue lock paired
with pthread in the same run, beside 0, 1 or 2 busy loops (sh -c 'while :;
do :; done'), RUNS runs interleaved (run outermost), medians per lock and
thread count.

One run of a lock is one process (numalock bench kvmap) for every thread
count, its DURATION seconds per lock cut into SLICES slices, the lock and
pthread alternating (L,P,P,L,L,P,...: neither always first), each slice on
new threads. Beside busy loops where the threads land decides a slice (both
workers on one CPU, or each beside a busy loop: twofold apart), and the
kernel draws that again for new threads; a run of one slice per lock
compared two draws, slices average several. The run's throughput is its
slices' operations over their time, its fairness factor their mean.

Pass rule (per busy count, thread count and lock): the median over the runs
of the lock's fairness factor minus pthread's in the same run is <= 0.05,
and the median of throughput(lock) / throughput(pthread) is >= 0.8.

  lab/scripts/measure-fair.py [--runs 5] [--numalock build/bin/numalock]
      [--busy 1,2] [--threads 2,4,8,16] [--locks L,M|queue] [--duration 1]
      [--slices 4] [--out lab/results/fair/NAME.jsonl] [--tag TEXT]
Raw records go to --out as JSON lines (one per lock, thread count and run),
the summary to stdout.
"""
import argparse, json, os, platform, statistics, subprocess, sys, tempfile, time

QUEUE = ("mcs clh hemlock reciprocating reciprocating-numa qspinlock qspinlock-cna cna cna-opt shfl shfl-block "
         "hbo hmcs hmcs-n c-tkt-n c-bo-mcs c-tkt-tkt cst-mutex ticket").split()


def machine():
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs, {model}, {platform.release()}"


def hogs_start(n):
    return [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]


def hogs_stop(ps):
    for p in ps:
        p.kill()
        p.wait()


def pair(cli, lock, threads, duration, slices, tmp):
    """{threads: (lock's record, pthread's record)}, each over its slices (operations and time summed, fairness the mean)."""
    out = os.path.join(tmp, "r.json")
    order = [(lock, "pthread"), ("pthread", lock)]
    names = [n for i in range(slices) for n in order[i % 2]]
    cmd = [cli, "bench", "kvmap", "--lock", ",".join(names), "--threads", ",".join(map(str, threads)),
           "--duration", str(duration / slices), "--topology", "virtual:2", "--quiet", "--json", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    recs = json.load(open(out))["records"]

    def total(name, t):
        rs = [r for r in recs if r["lock"] == name and r["threads"] == t]
        assert len(rs) == slices, (name, t, len(rs))
        ops = sum(r["ops"] for r in rs)
        secs = sum(r["duration_s"] for r in rs)
        return dict(throughput_ops_per_s=ops / secs if secs else 0,
                    fairness_factor=statistics.mean(r["fairness_factor"] for r in rs),
                    slices_tp=[r["throughput_ops_per_s"] for r in rs],
                    per_thread_ops=[sum(v) for v in zip(*(r["per_thread_ops"] for r in rs))],
                    **{k: sum(r.get(k) or 0 for r in rs) for k in ("gate_waits", "parks", "handovers_to_parked",
                                                                   "handovers")})

    return {t: (total(lock, t), total("pthread", t)) for t in threads}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--numalock", default="build/bin/numalock",
                    help="the command; LABEL=PATH,LABEL=PATH: builds interleaved lock by lock (before/after)")
    ap.add_argument("--busy", default="1,2")
    ap.add_argument("--threads", default="2,4,8,16")
    ap.add_argument("--locks", default="queue")
    ap.add_argument("--duration", type=float, default=1.0, help="seconds per lock and run")
    ap.add_argument("--slices", type=int, default=4)
    ap.add_argument("--out", default=None)
    ap.add_argument("--tag", default="")
    a = ap.parse_args()
    locks = QUEUE if a.locks == "queue" else a.locks.split(",")
    clis = [c.split("=", 1) if "=" in c else ["", c] for c in a.numalock.split(",")]
    busys = [int(x) for x in a.busy.split(",")]
    threads = [int(x) for x in a.threads.split(",")]
    out = open(a.out, "a") if a.out else None
    head = dict(machine=machine(), date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), tag=a.tag,
                commit=subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                      text=True).stdout.strip())
    print(f"# {head['machine']}; {head['date']}; commit {head['commit']}; {a.tag}", flush=True)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for busy in busys:
            hogs = hogs_start(busy)
            try:
                for run in range(1, a.runs + 1):
                    for lock, (label, cli) in ((l, c) for l in locks for c in clis):
                        res = pair(cli, lock, threads, a.duration, a.slices, tmp)
                        load = open("/proc/loadavg").read().split()[0]
                        for t, (x, p) in res.items():
                            rec = dict(head, busy=busy, run=run, threads=t, lock=lock, build=label, loadavg=float(load),
                                       slices=a.slices, duration=a.duration,
                                       tp=x["throughput_ops_per_s"], tp_pthread=p["throughput_ops_per_s"],
                                       slices_tp=x["slices_tp"], slices_tp_pthread=p["slices_tp"],
                                       ff=x.get("fairness_factor"), ff_pthread=p.get("fairness_factor"),
                                       per_thread=x.get("per_thread_ops"), per_thread_pthread=p.get("per_thread_ops"),
                                       gate_waits=x.get("gate_waits"), parks=x.get("parks"),
                                       to_parked=x.get("handovers_to_parked"), handovers=x.get("handovers"))
                            rows.setdefault((busy, t, lock + (":" + label if label else "")), []).append(rec)
                            if out:
                                out.write(json.dumps(rec, separators=(",", ":")) + "\n")
                                out.flush()
            finally:
                hogs_stop(hogs)
    fails = 0
    print("busy thr lock               ratio(min-max)        ff     ff_pth  d_ff(med)  pass")
    for (busy, t, lock), rs in rows.items():
        ratio = [r["tp"] / r["tp_pthread"] for r in rs if r["tp_pthread"]]
        ff = [r["ff"] for r in rs]
        ffp = [r["ff_pthread"] for r in rs]
        d = [r["ff"] - r["ff_pthread"] for r in rs]
        ok = statistics.median(d) <= 0.05 and statistics.median(ratio) >= 0.8
        fails += not ok
        print(f"{busy:<4} {t:<3} {lock:<18} {statistics.median(ratio):5.2f}x ({min(ratio):.2f}-{max(ratio):.2f})"
              f"   {statistics.median(ff):.3f}  {statistics.median(ffp):.3f}  {statistics.median(d):+.3f}"
              f"     {'ok' if ok else 'FAIL'}", flush=True)
    print(f"# {fails} of {len(rows)} cells fail")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
