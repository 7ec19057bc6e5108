#!/usr/bin/env python3
"""Which memory orders do the GenMC checks show to be needed?

    verify/wmm/audit.py GENMC [FILE...]

For every acquire, release, acq_rel and seq_cst order in the lock files the
checks of verify/wmm compile (FILES below, or those named), one at a time:
a copy of the sources with that one order made relaxed, and the checks that
compile its file (RC11 and IMM, waiters spinning and parking, the thread
counts below), until one fails. Prints per order "needed" with the first
failing check, or "not shown needed": no check failed, which says only
that these checks (2 or 3 threads, one round each) do not exercise what the
order is for; it proves nothing weaker enough. A run over its time limit
counts as inconclusive ("timeout"), not as needed."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

# check file -> thread counts (the cohort checks' 3-thread runs take minutes)
THREADS = {'tas': (2, 3), 'ttas': (2, 3), 'ticket': (2, 3), 'hbo': (2,), 'mcs': (2, 3), 'cna': (2, 3),
           'cohort': (2,), 'hmcs': (2,), 'qspinlock': (2, 3)}
# how GenMC bounds a check (checks.sh): termination, or loops unrolled
BOUND = {'qspinlock': '--unroll=3'}
FILES = {
    'include/numalock/spinlocks.h': ['tas', 'ttas', 'ticket', 'hbo', 'mcs'],
    'include/numalock/cna.h': ['cna', 'qspinlock'],
    'src/locks/tas.c': ['tas'], 'src/locks/ttas.c': ['ttas'], 'src/locks/hbo.c': ['hbo'],
    'src/locks/ticket_impl.h': ['ticket', 'cohort'],
    'src/locks/mcs_queue.h': ['mcs', 'cohort', 'hmcs'], 'src/locks/queue.h': ['mcs', 'cna'],
    'src/locks/cna.c': ['cna'], 'src/locks/cna_impl.h': ['cna', 'qspinlock'],
    'src/locks/qspinlock.c': ['qspinlock'], 'src/locks/tail_nodes.h': ['qspinlock'],
    'src/locks/cohort.h': ['cohort', 'hmcs'], 'src/locks/cohort.c': ['cohort'],
    'src/wait/grant.c': ['mcs', 'cna'], 'src/wait/wait.h': ['mcs', 'cna'],
}
ORDER = re.compile(r'memory_order_(acquire|release|acq_rel|seq_cst)\b|__ATOMIC_(ACQUIRE|RELEASE|ACQ_REL|SEQ_CST)\b')


def run(genmc, inc, root, check, model, nt, park, work):
    bc = os.path.join(work, 'in.bc')
    flags = [f'-DNL_THREADS={nt}'] + (['-DNL_VERIFY_PARK'] if park else [])
    if subprocess.run(['sh', os.path.join(HERE, 'compile.sh'), inc, root, os.path.join(HERE, check + '.c'), bc]
                      + flags, capture_output=True).returncode:
        return 'does not compile'
    try:
        r = subprocess.run([genmc, f'--{model}', BOUND.get(check, '--check-liveness'), '--input-from-bitcode-file', bc],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return 'timeout'
    return 'pass' if 'No errors were detected' in r.stdout + r.stderr else 'fail'


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    genmc = os.path.abspath(sys.argv[1])
    inc = os.path.join(os.path.dirname(os.path.dirname(genmc)), 'include', 'genmc')
    files = sys.argv[2:] or list(FILES)
    for f in files:
        if f not in FILES:
            sys.exit(f"audit: '{f}' is not a file the checks compile; valid: {', '.join(FILES)}")
    work = tempfile.mkdtemp()
    try:
        for f in files:
            text = open(os.path.join(TOP, f)).read()
            for m in ORDER.finditer(text):
                line = text.count('\n', 0, m.start()) + 1
                root = os.path.join(work, 'src-copy')
                shutil.rmtree(root, ignore_errors=True)
                shutil.copytree(os.path.join(TOP, 'src'), os.path.join(root, 'src'))
                shutil.copytree(os.path.join(TOP, 'include'), os.path.join(root, 'include'))
                weak = 'memory_order_relaxed' if m.group(0).startswith('memory') else '__ATOMIC_RELAXED'
                open(os.path.join(root, f), 'w').write(text[:m.start()] + weak + text[m.end():])
                verdict, inconclusive = 'not shown needed', False
                for check in FILES[f]:
                    for model in ('rc11', 'imm'):
                        for nt in THREADS[check]:
                            for park in (False, True):
                                v = run(genmc, inc, root, check, model, nt, park, work)
                                if v == 'timeout':
                                    inconclusive = True
                                elif v != 'pass':
                                    verdict = f'needed ({check} {model} {nt}T{" park" if park else ""}: {v})'
                                    break
                            if verdict != 'not shown needed':
                                break
                        if verdict != 'not shown needed':
                            break
                    if verdict != 'not shown needed':
                        break
                if verdict == 'not shown needed' and inconclusive:
                    verdict += ' (some runs timed out)'
                src = text.split('\n')[line - 1].strip()
                print(f'{f}:{line}: {m.group(0)}: {verdict}  | {src[:80]}', flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
