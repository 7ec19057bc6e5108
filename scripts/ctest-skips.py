#!/usr/bin/env python3
"""The skipped tests of a CTest run, each with the reason its output gives.

Usage: ctest-skips.py JUNIT_XML

JUNIT_XML is what `ctest --output-junit FILE` wrote (relative to the build
folder, where this runs). A test skipped by its SKIP_REGULAR_EXPRESSION
gives the output line that matched it (the expressions come from
`ctest --show-only=json-v1`), one skipped by its SKIP_RETURN_CODE its last
line that says "skip", else its last line. Tests whose names and reasons
differ only in a name the reason quotes (a lock's, as most do) are said
together:
  interpose.rwlock.* (20: tas, ttas, ...): numalock run: unknown rwlock algorithm '*': ...
Prints nothing when no test was skipped; exits 2 with one sentence when the
file cannot be read.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET


def skip_expressions() -> dict[str, list[str]]:
    """test name -> its SKIP_REGULAR_EXPRESSION list (empty when ctest cannot say)."""
    try:
        out = subprocess.run(["ctest", "--show-only=json-v1"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    found: dict[str, list[str]] = {}
    for test in json.loads(out).get("tests", []):
        for prop in test.get("properties", []):
            if prop.get("name") == "SKIP_REGULAR_EXPRESSION":
                found[test["name"]] = list(prop.get("value") or [])
    return found


def reason(output: str, expressions: list[str]) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for expr in expressions:
        for line in lines:
            if re.search(expr, line):
                return line
    for line in reversed(lines):
        if "skip" in line.lower():
            return line
    return lines[-1] if lines else "(no output)"


def grouped(skips: list[tuple[str, str]]) -> list[str]:
    """One line per (name pattern, reason pattern): the parts of a test's name
    that its reason names are replaced by '*' in both."""
    groups: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for name, why in skips:
        parts, varied, pattern = name.split("."), [], why
        for i, part in enumerate(parts[1:], start=1):
            word = r"(?<![\w-])" + re.escape(part) + r"(?![\w-])"
            if f"'{part}'" in pattern or f'"{part}"' in pattern:  # a name the reason quotes
                pattern = re.sub(word, "*", pattern)
                parts[i] = "*"
                varied.append(part)
        groups.setdefault((".".join(parts), pattern), []).append((".".join(varied), name, why))
    lines = []
    for (names, pattern), members in groups.items():
        if len(members) == 1:
            lines.append(f"  {members[0][1]}: {members[0][2]}")
        else:
            lines.append(f"  {names} ({len(members)}: {', '.join(m[0] for m in members)}): {pattern}")
    return lines


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: ctest-skips.py JUNIT_XML", file=sys.stderr)
        return 2
    try:
        root = ET.parse(argv[1]).getroot()
    except (OSError, ET.ParseError) as exc:
        print(f"ctest-skips.py: cannot read the JUnit file {argv[1]} ({exc}).", file=sys.stderr)
        return 2
    skipped = [case for case in root.iter("testcase") if case.find("skipped") is not None]
    if not skipped:
        return 0
    expressions = skip_expressions()
    skips = [(case.get("name", "?"), reason(case.findtext("system-out") or "", expressions.get(case.get("name"), [])))
             for case in skipped]
    print(f"skipped: {len(skips)} test(s), why (from each one's output):")
    print("\n".join(grouped(skips)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
