#!/usr/bin/env python3
"""The local machine's kvmap ratios to tas, real (medians of kvmap-*.jsonl, min-max) beside simulated
(medians of sim-seed-*.jsonl, one per seed, else sim-local.jsonl), with hand-overs per operation:
python3 lab/results/sim-local/summary.py [DIR]
(DIR: a folder of the same files, e.g. host-b/; this folder by default)"""
import glob, json, os, statistics as st, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
here = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else here
from jsonl import unpack  # noqa: E402  (lab/results/jsonl.py: the one reader of these files)


def records(path):
    return unpack([json.loads(l) for l in open(path)])["records"]


def ratios(files):
    """per (lock, threads): each file's throughput ratio to tas, and its hand-overs per operation"""
    ratio, hand = {}, {}
    for f in files:
        r = {(x["lock"], x["threads"]): x for x in records(f)}
        for (lock, t), x in r.items():
            ratio.setdefault((lock, t), []).append(x["throughput_ops_per_s"] / r[("tas", t)]["throughput_ops_per_s"])
            hand.setdefault((lock, t), []).append(x["handovers"] / x["ops"])
    return ratio, hand


ratio, hand = ratios(sorted(glob.glob(os.path.join(here, "kvmap-*.jsonl"))))
# simulated: sim-seed-*.jsonl (one run per seed: the median and range), else sim-local.jsonl (one run)
sims = sorted(glob.glob(os.path.join(here, "sim-seed-*.jsonl"))) or [os.path.join(here, "sim-local.jsonl")]
sratio, shand = ratios(sims)
print("lock           threads  real (min-max)         simulated (min-max)    hand-overs/op real / simulated"
      "   (%d simulated run%s)" % (len(sims), "s" if len(sims) > 1 else ""))
for key in sorted(ratio):
    v, w = ratio[key], sratio[key]
    print(f"{key[0]:14} {key[1]:7}  {st.median(v):.3f} ({min(v):.2f}-{max(v):.2f})  {st.median(w):.3f} "
          f"({min(w):.2f}-{max(w):.2f})     {st.median(hand[key]):.3f} / {st.median(shand[key]):.3f}")
