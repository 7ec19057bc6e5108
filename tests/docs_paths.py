#!/usr/bin/env python3
"""Every file and symbol the documentation names exists.

Usage: docs_paths.py [--root DIR] [FILE.md...]     (default: README.md docs/*.md)

Checked, in each Markdown file:
  - paths whose first folder is a top folder of the checkout (src/wait/wait.h,
    lab/results/, tools/report.py): the file or folder exists (a '*' matches
    as in a shell; a path with a placeholder such as <time> or LOCK is skipped);
  - bare file names of sources (wait.h, report.py, numa-test.sh): some file of
    the checkout has that name;
  - names of the library's and the preload's symbols and variables in backticks
    (`nl_wait_begin`, `NLP_STATS_STACKS_MAX`, `NUMALOCK_LOCK`): some source file
    has that word.
Prints one line per name that is not found ("FILE:LINE: what") and exits 1,
else prints how many names it checked and exits 0.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
from pathlib import Path

SOURCE_EXT = r"(?:c|h|hpp|cpp|py|sh|cmake|def|pml|java|txt|md|jsonl|json|patch|config)"
PATH_RE = re.compile(r"(?<![\w./<$-])((?:\.?[A-Za-z0-9_.*-]+/)+(?:[A-Za-z0-9_.*-]+)?)")
BARE_RE = re.compile(r"(?<![\w./<$-])([A-Za-z0-9_][A-Za-z0-9_-]*\." + SOURCE_EXT + r")(?![\w/-])")
SYMBOL_RE = re.compile(r"`((?:nl|nlp|NL|NLP|NUMALOCK)_[A-Za-z0-9_]+)(?:\(\))?`")
PLACEHOLDER = re.compile(r"[A-Z]{3,}|<|\{")  # OUTDIR/java.json, results/<time>/, LOCK
# names that are not files of the checkout: what a run writes, a placeholder,
# words of a quoted message
NOT_FILES = {"report.md", "locks.md", "java.md", "file.c", "java/javac"}
# paths of another tree: the Linux kernel's (kernel/locking/, its src/)
OTHER_TREE = {"KERNEL.md": ("kernel/locking/", "src/")}


def tracked(root: Path) -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=root,
                             capture_output=True, text=True, check=True).stdout
        return out.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts]


def is_output(root: Path, path: str) -> bool:
    """The path is one that git ignores: what a build writes, absent from a fresh clone."""
    try:
        return subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=root,
                              capture_output=True).returncode == 0
    except OSError:
        return False


def words_of(root: Path, files: list[str]) -> set[str]:
    """Every identifier in the sources (where a symbol may be defined or used)."""
    words: set[str] = set()
    for name in files:
        if name.startswith(("lab/", "docs/")) or not re.search(r"\.(c|h|hpp|cpp|py|sh|cmake|def|java|txt)$|"
                                                              r"(^|/)(Makefile|CMakeLists.txt)$", name):
            continue
        try:
            words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", (root / name).read_text(errors="replace")))
        except OSError:
            pass
    return words


def check_file(md: Path, root: Path, tops: set[str], basenames: set[str], words: set[str]) -> tuple[int, list[str]]:
    problems: list[str] = []
    checked = 0
    fence = False
    other = OTHER_TREE.get(md.name, ())
    for lineno, line in enumerate(md.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fence = not fence
        where = f"{md.relative_to(root) if md.is_relative_to(root) else md}:{lineno}"
        for path in PATH_RE.findall(line):
            path = path.rstrip(".")
            first = path.split("/")[0]
            if first not in tops or PLACEHOLDER.search(path) or path in NOT_FILES or path.startswith(other) \
                    or "://" in line and f"//{path}" in line:
                continue
            if is_output(root, path):
                continue  # a build's output (java/bench/target/): not there in a fresh clone
            checked += 1
            if not glob.glob(str(root / path)):
                problems.append(f"{where}: no such file or folder: {path}")
        if fence:
            continue  # commands and trees: their bare names are often outputs
        for name in BARE_RE.findall(line):
            if PLACEHOLDER.search(name) or name in NOT_FILES:
                continue
            checked += 1
            if name not in basenames:
                problems.append(f"{where}: no file of this name: {name}")
        for symbol in SYMBOL_RE.findall(line):
            checked += 1
            if symbol not in words:
                problems.append(f"{where}: no source has the symbol: {symbol}")
    return checked, problems


def main(argv: list[str]) -> int:
    args = argv[1:]
    root = Path(__file__).resolve().parents[1]
    if args[:1] == ["--root"] and len(args) > 1:
        root, args = Path(args[1]).resolve(), args[2:]
    files = tracked(root)
    tops = {f.split("/")[0] for f in files if "/" in f}
    basenames = {os.path.basename(f) for f in files}
    mds = [Path(a).resolve() for a in args] or [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    words = words_of(root, files)
    total, problems = 0, []
    for md in mds:
        checked, found = check_file(md, root, tops, basenames, words)
        total += checked
        problems += found
    for problem in problems:
        print(problem)
    if problems:
        print(f"docs_paths: {len(problems)} of {total} names in {len(mds)} files not found")
        return 1
    print(f"docs_paths: all {total} names in {len(mds)} files found")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
