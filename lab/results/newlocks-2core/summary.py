#!/usr/bin/env python3
"""Medians (min-max) over the kvmap runs of run.sh: each lock's throughput over mcs's in the same run,
its remote hand-over share and fairness factor; then the simulator's records.
   python3 lab/results/newlocks-2core/summary.py DIR   (DIR: run.sh's OUTDIR, or this folder's .jsonl)"""
import glob, json, os, statistics, sys

def records(path):
    if path.endswith(".jsonl"):
        return [json.loads(l)["record"] for l in open(path) if '"record"' in l[:12]]
    return json.load(open(path))["records"]

def med(xs):
    return statistics.median(xs), min(xs), max(xs)

d = sys.argv[1]
ext = "jsonl" if glob.glob(os.path.join(d, "kvmap-1.jsonl")) else "json"
runs = sorted(glob.glob(os.path.join(d, f"kvmap-[0-9].{ext}")))
cells = {}
for f in runs:
    recs = records(f)
    base = {r["threads"]: r["throughput_ops_per_s"] for r in recs if r["lock"] == "mcs"}
    for r in recs:
        c = cells.setdefault((r["lock"], r["threads"]), {"ratio": [], "remote": [], "fair": [], "ops": []})
        c["ratio"].append(r["throughput_ops_per_s"] / base[r["threads"]])
        c["remote"].append(100.0 * (r.get("remote_share") or 0))
        c["fair"].append(r["fairness_factor"] if r["fairness_factor"] is not None else float("nan"))
        c["ops"].append(r["throughput_ops_per_s"] / 1e6)
print(f"kvmap virtual:2, {len(runs)} runs: / mcs median (min-max), Mops/s, remote %, fairness (medians)")
for (lock, t), c in sorted(cells.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    m, lo, hi = med(c["ratio"])
    print(f"{lock:20s} {t:3d}  {m:.3f} ({lo:.3f}-{hi:.3f})  {statistics.median(c['ops']):6.2f}"
          f"  {statistics.median(c['remote']):5.1f}  {statistics.median(c['fair']):.3f}")
sim = glob.glob(os.path.join(d, f"sim-cna-2s.{ext}"))
if sim:
    recs = records(sim[0])
    base = {r["threads"]: r["throughput_ops_per_s"] for r in recs if r["lock"] == "mcs"}
    print("sim cna-2s kvmap: Mops/s, / mcs, remote %, fairness")
    for r in sorted(recs, key=lambda r: (r["threads"], r["lock"])):
        print(f"{r['lock']:20s} {r['threads']:3d}  {r['throughput_ops_per_s']/1e6:7.2f}"
              f"  {r['throughput_ops_per_s']/base[r['threads']]:.3f}  {100*(r.get('remote_share') or 0):5.1f}"
              f"  {r['fairness_factor'] if r['fairness_factor'] is not None else float('nan'):.3f}")
