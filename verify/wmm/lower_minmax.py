#!/usr/bin/env python3
"""Rewrite LLVM's integer min/max intrinsics (which the optimiser makes of
compare-and-select, and which GenMC 0.9 does not interpret) back into a
compare and a select, in textual IR: lower_minmax.py IN.ll OUT.ll"""
import re
import sys

CALL = re.compile(r'^(\s*)(%[\w.]+) = (?:tail )?call (i\d+) @llvm\.([us])(max|min)\.i\d+\((i\d+) (?:noundef )?([^,]+), (i\d+) (?:noundef )?([^)]+)\)(.*)$')
PRED = {('u', 'max'): 'ugt', ('u', 'min'): 'ult', ('s', 'max'): 'sgt', ('s', 'min'): 'slt'}

out = []
n = 0
for line in open(sys.argv[1]):
    m = CALL.match(line.rstrip('\n'))
    if not m:
        out.append(line)
        continue
    ind, res, ty, sign, kind, _, a, _, b, _ = m.groups()
    n += 1
    out.append(f'{ind}%nl.minmax.{n} = icmp {PRED[(sign, kind)]} {ty} {a}, {b}\n')
    out.append(f'{ind}{res} = select i1 %nl.minmax.{n}, {ty} {a}, {ty} {b}\n')
open(sys.argv[2], 'w').write(''.join(out))
