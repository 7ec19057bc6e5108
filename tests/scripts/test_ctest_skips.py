#!/usr/bin/env python3
"""Tests for scripts/ctest-skips.py: the skipped tests of a JUnit file with their reasons.

Run as: python3 tests/scripts/test_ctest_skips.py [-v]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ctest-skips.py"

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="t" tests="5" failures="0" disabled="0" skipped="4">
  <testcase name="numa.quick" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/>
    <system-out>booting
numa-test: skipped: no /dev/kvm and no qemu-system-x86_64
</system-out></testcase>
  <testcase name="interpose.semantics.mcs" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>numalock run: lock 'mcs' cannot replace pthread mutexes: it must be released by its owner
</system-out></testcase>
  <testcase name="interpose.semantics.cna" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>numalock run: lock 'cna' cannot replace pthread mutexes: it must be released by its owner
</system-out></testcase>
  <testcase name="interpose.semantics.sanl" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>numalock run: lock 'sanl' cannot replace pthread mutexes: it is a delegation lock
</system-out></testcase>
  <testcase name="cli" status="run"><system-out>cli: 24 passed, 0 failed
</system-out></testcase>
</testsuite>
"""


def run(*args: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=60)


class CtestSkips(unittest.TestCase):
    def test_reasons_grouped_by_lock(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "ctest.xml").write_text(JUNIT, encoding="utf-8")
            proc = run("ctest.xml", cwd=tmp)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[0], "skipped: 4 test(s), why (from each one's output):")
        self.assertIn("  numa.quick: numa-test: skipped: no /dev/kvm and no qemu-system-x86_64", lines)
        self.assertIn("  interpose.semantics.* (2: mcs, cna): numalock run: lock '*' cannot replace pthread "
                      "mutexes: it must be released by its owner", lines)
        self.assertIn("  interpose.semantics.sanl: numalock run: lock 'sanl' cannot replace pthread mutexes: "
                      "it is a delegation lock", lines)
        self.assertEqual(len(lines), 4, lines)

    def test_nothing_skipped_says_nothing(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "ctest.xml").write_text('<testsuite><testcase name="a" status="run"/></testsuite>')
            proc = run("ctest.xml", cwd=tmp)
        self.assertEqual((proc.returncode, proc.stdout), (0, ""))

    def test_missing_file_one_sentence(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            proc = run("absent.xml", cwd=tmp)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("cannot read the JUnit file absent.xml", proc.stderr)
        self.assertEqual(len(proc.stderr.strip().splitlines()), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
