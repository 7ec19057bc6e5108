#!/usr/bin/env python3
"""Which memory orders do the GenMC checks show to be needed?

    verify/wmm/audit.py GENMC [FILE...]

For every acquire, release, acq_rel and seq_cst order in the files under
src/ and include/ that the checks of checks.sh compile (or in those named),
one at a time: a copy of the sources with that one order made relaxed, and
the checks that compile its file (each with its own flags, bound, models
and thread counts, as run.sh runs it), until one fails. Prints per order "needed" with the first
failing check, or "not shown needed": no check failed, which says only
that these checks (2 or 3 threads, one round each) do not exercise what the
order is for; it proves nothing weaker enough. A run over its time limit
counts as inconclusive ("timeout"), not as needed."""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
ORDER = re.compile(r'memory_order_(acquire|release|acq_rel|seq_cst)\b|__ATOMIC_(ACQUIRE|RELEASE|ACQ_REL|SEQ_CST)\b')
LLVM = os.environ.get('LLVM_BIN', '/usr/lib/llvm-15/bin')


def checks():
    """The passing checks of checks.sh: (name, file, bound, runs, cflags),
    runs a list of (model, threads, park) as run.sh runs them."""
    text = open(os.path.join(HERE, 'checks.sh')).read().replace('\\\n', ' ')
    out = []
    for line in text.split('\n'):
        if not line.startswith('check '):  # (broken variants span lines)
            continue
        words = shlex.split(line, comments=True)
        name, _, file = words[1].partition(':')
        args, bound, models3, threads, cflags = words[2:], '--check-liveness', 'rc11 rc11/park imm imm/park', [], []
        if args[:1] == ['-u']:
            bound, args = f'--unroll={args[1]}', args[2:]
        if args[:1] == ['-l']:
            bound, args = bound + ' --check-liveness', args[1:]
        if args[:1] == ['-3']:
            # $(full RUN...): RUN with VERIFY_WMM_FULL=1 only, as run.sh reads it
            models3 = re.sub(r'\$\(full ([^)]*)\)', r'\1' if os.environ.get('VERIFY_WMM_FULL') else '', args[1])
            args = args[2:]
        while args and args[0] != '--':
            threads.append(int(args.pop(0)))
        cflags = args[1:]
        runs = []
        for model in ('rc11', 'imm'):
            for nt in threads or [2, 3]:
                allowed = models3.split() if nt >= 3 else [model, model + '/park']
                runs += [(model, nt, park) for park in (False, True)
                         if (model + ('/park' if park else '')) in allowed]
        out.append((name, file or name, bound, sorted(runs, key=lambda r: r[1]), cflags))
    return out


def sources(inc, check):
    """The files under src/ and include/ that a check's program compiles."""
    name, file, bound, runs, cflags = check
    r = subprocess.run([os.path.join(LLVM, 'clang'), '-MM', '-w', '-D__CONFIG_GENMC_INODE_DATA_SIZE=64',
                        f'-I{inc}', f'-I{TOP}/include', f'-I{TOP}/src'] + cflags
                       + [os.path.join(HERE, file + '.c')], capture_output=True, text=True)
    deps = r.stdout.replace('\\\n', ' ').split()[1:]
    return {os.path.relpath(os.path.realpath(d), TOP) for d in deps
            if os.path.realpath(d).startswith(os.path.join(TOP, 'src') + os.sep)
            or os.path.realpath(d).startswith(os.path.join(TOP, 'include') + os.sep)}


def run(genmc, inc, root, check, model, nt, park, work):
    name, file, bound, runs, cflags = check
    bc = os.path.join(work, 'in.bc')
    flags = [f'-DNL_THREADS={nt}'] + (['-DNL_VERIFY_PARK'] if park else []) + cflags
    if subprocess.run(['sh', os.path.join(HERE, 'compile.sh'), inc, root, os.path.join(HERE, file + '.c'), bc]
                      + flags, capture_output=True).returncode:
        return 'does not compile'
    try:
        r = subprocess.run([genmc, f'--{model}'] + bound.split() + ['--input-from-bitcode-file', bc],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return 'timeout'
    out = r.stdout + r.stderr
    m = re.search(r'complete executions explored: (\d+)', out)
    return 'pass' if 'No errors were detected' in out and m and int(m.group(1)) > 0 else 'fail'


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    genmc = os.path.abspath(sys.argv[1])
    inc = os.path.join(os.path.dirname(os.path.dirname(genmc)), 'include', 'genmc')
    users = {}  # file -> the checks that compile it
    for c in checks():
        for f in sorted(sources(inc, c)):
            users.setdefault(f, []).append(c)
    files = sys.argv[2:] or sorted(f for f in users if ORDER.search(open(os.path.join(TOP, f)).read()))
    for f in files:
        if f not in users:
            sys.exit(f"audit: '{f}' is not a file the checks compile; valid: {', '.join(sorted(users))}")
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
                for check in users[f]:
                    for model, nt, park in check[3]:
                        v = run(genmc, inc, root, check, model, nt, park, work)
                        if v == 'timeout':
                            inconclusive = True
                        elif v != 'pass':
                            verdict = f'needed ({check[0]} {model} {nt}T{" park" if park else ""}: {v})'
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
