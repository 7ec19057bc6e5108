#!/usr/bin/env python3
"""Tests for tools/report.py: run it on a small fixture and on bad input.

Run as: .venv/bin/python tests/scripts/test_report.py [-v]
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "tools" / "report.py"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def meta(workload: str, command: str, **params: object) -> dict:
    return {"tool": "numalock", "version": "0.1.0", "command": command,
            "started_utc": "2026-11-22T17:00:00Z", "host": "testhost", "online_cpus": 2,
            "real_nodes": 1, "workload": workload, "params": params}


def tput(workload: str, lock: str, threads: int, topology: str, ops: int, **extra: object) -> dict:
    half = ops // 2
    rec = {"workload": workload, "lock": lock, "threads": threads, "topology": topology,
           "duration_s": 1.0, "ops": ops, "throughput_ops_per_s": float(ops),
           "per_thread_ops": [ops // threads] * threads, "fairness_factor": 0.5 + threads / 100,
           "acquisitions": ops, "contended": half, "handovers": half,
           "remote_handovers": half // 3, "remote_share": 0.33, "ratio_to_baseline": 1.0,
           "baseline": "pthread"}
    rec.update(extra)
    return rec


def write_json(path: Path, doc: object) -> None:
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def build_fixture(d: Path) -> None:
    """Two throughput files (two topologies), latency, footprint; one record full of nulls."""
    kv = [tput("kvmap", lock, t, "virtual:2", 100000 * t * (2 if lock == "mcs" else 1))
          for lock in ("mcs", "cna", "pthread") for t in (1, 2, 4)]
    # A one-thread run has no hand-overs: remote share, fairness and ratio are null.
    kv[0].update({"handovers": 0, "remote_handovers": 0, "remote_share": None,
                  "fairness_factor": None, "ratio_to_baseline": None})
    write_json(d / "kvmap-virtual2.json",
               {"meta": meta("kvmap", "numalock bench kvmap --lock mcs,cna,pthread --threads 1,2,4 "
                                      "--topology virtual:2 --json kvmap-virtual2.json",
                             key_range=1024, update_pct=20, external_work=0),
                "records": kv})
    rw = [tput("rwhash", lock, t, "virtual:4", 50000 * t, read_pct=pct)
          for lock in ("cst-rw", "pthread-rw") for t in (2, 8) for pct in (50, 90)]
    for rec in rw:
        rec.pop("ratio_to_baseline")
        rec.pop("baseline")
    write_json(d / "rwhash-virtual4.json",
               {"meta": meta("rwhash", "numalock bench rwhash --lock cst-rw,pthread-rw --threads 2,8 "
                                       "--topology virtual:4 --json rwhash-virtual4.json"),
                "records": rw})
    lat = []
    for lock, ns in (("pthread", 20.0), ("tas", 9.5), ("mcs", 14.2), ("cna", 15.1), ("hmcs", None)):
        lat.append({"workload": "latency", "lock": lock, "threads": 1, "topology": "auto",
                    "duration_s": 1.0, "ops": 1000, "throughput_ops_per_s": None if ns is None else 1e9 / ns,
                    "ns_per_pair": ns, "ratio_to_baseline": None if ns is None else 20.0 / ns})
    lat[3]["ratio_to_pthread"] = lat[3].pop("ratio_to_baseline") and 15.1 / 20.0  # a file of an earlier version
    # the command as `make run` gives it: the files in a folder renamed at the end
    write_json(d / "latency.json",
               {"meta": meta("latency", "numalock bench latency --lock pthread,tas,mcs,cna,hmcs "
                                        f"--json {d}/latency.json"),
                "records": lat})
    ins = [{"workload": "instructions", "lock": lock, "threads": 1, "topology": "auto", "duration_s": None,
            "ops": 20000, "throughput_ops_per_s": None, "per_thread_ops": [20000], "fairness_factor": None,
            "acquisitions": None, "ratio_to_baseline": 92 / n, "baseline": "pthread", "instructions_per_pair": n,
            **({"inline_instructions_per_pair": i} if i else {})}
           for lock, n, i in (("tas", 38.0, 8.0), ("mcs", 88.0, 13.0), ("pthread", 92.0, None))]
    write_json(d / "instructions.json",
               {"meta": meta("instructions", "numalock bench instructions --lock tas,mcs --json instructions.json"),
                "records": ins})
    fp = []
    for lock, per_node in (("mcs", 0), ("cna", 0), ("cohort-bo-mcs", 64), ("hmcs", 128)):
        for nodes in (1, 2, 4, 8):
            fp.append({"workload": "footprint", "lock": lock, "threads": None, "topology": "auto",
                       "nodes_used": nodes, "bytes": 8 + per_node * nodes, "throughput_ops_per_s": None,
                       "fairness_factor": None})
    write_json(d / "footprint.json",
               {"meta": meta("footprint", "numalock bench footprint --lock mcs,cna,cohort-bo-mcs,hmcs "
                                          "--json footprint.json"),
                "records": fp})


def run_report(d: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, MPLBACKEND="Agg")
    env.setdefault("MPLCONFIGDIR", str(d / ".mplconfig"))
    return subprocess.run([sys.executable, str(REPORT), str(d), *args], capture_output=True,
                          text=True, env=env, timeout=300)


def one_sentence(text: str) -> bool:
    text = text.strip()
    return "\n" not in text and text.endswith(".") and "Traceback" not in text


class ReportOnFixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="numalock-report-")
        cls.dir = Path(cls.tmp.name)
        build_fixture(cls.dir)
        java = cls.dir / "java"
        java.mkdir()
        (java / "java.md").write_text("# VNA results\n\nVNA beat ReentrantLock.\n\n![plot](vna.png)\n",
                                      encoding="utf-8")
        cls.proc = run_report(cls.dir, "--title", "Fixture report")
        cls.md = (cls.dir / "report.md").read_text(encoding="utf-8") if (cls.dir / "report.md").exists() else ""

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def test_exit_status(self) -> None:
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)

    def test_report_written(self) -> None:
        self.assertTrue(self.md.startswith("# Fixture report\n"), self.md[:200])
        self.assertIn("## How to read this", self.md)
        self.assertIn("testhost", self.md)

    def test_pngs_exist_and_are_referenced(self) -> None:
        pngs = sorted(p.name for p in self.dir.glob("*.png"))
        # kvmap and rwhash: 3 plots each; latency: 1; footprint: 1.
        self.assertEqual(len(pngs), 8, pngs)
        for name in pngs:
            data = (self.dir / name).read_bytes()
            self.assertTrue(data.startswith(PNG_MAGIC), name)
            self.assertGreater(len(data), 5000, name)
            self.assertIn(f"]({name})", self.md, name)
        referenced = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", self.md)
        for name in referenced:
            if not name.startswith("java/"):
                self.assertTrue((self.dir / name).is_file(), name)

    def test_lock_names_and_commands(self) -> None:
        for lock in ("mcs", "cna", "pthread", "cst-rw", "pthread-rw", "tas", "hmcs", "cohort-bo-mcs"):
            self.assertIn(f"| {lock} |", self.md, lock)
        self.assertIn("numalock bench kvmap --lock mcs,cna,pthread --threads 1,2,4", self.md)
        self.assertIn("numalock bench footprint", self.md)

    def test_groups_by_workload_and_topology(self) -> None:
        self.assertIn("kvmap \u2014 topology `virtual:2`", self.md)
        self.assertIn("rwhash \u2014 topology `virtual:4`", self.md)
        self.assertIn("| read % |", self.md)

    def test_nulls_rendered_as_dash(self) -> None:
        row = next(line for line in self.md.splitlines() if line.startswith("| mcs | 1 |"))
        self.assertEqual(row.count("\u2013"), 3, row)  # ratio, remote share, fairness
        self.assertTrue(any(line.startswith("| hmcs | \u2013 |") for line in self.md.splitlines()))

    def test_one_direction_for_ratios(self) -> None:
        """Latency: pthread's time over the lock's, above 1 faster (an earlier file's
        time ratio turned round); instructions: pthread's count over the lock's."""
        self.assertIn("| tas | 9.5 | 2.11\u00d7 |", self.md)
        self.assertIn("| cna | 15.1 | 1.32\u00d7 |", self.md)
        self.assertIn("| tas | 38 | 8 | 2.42\u00d7 |", self.md)

    def test_instructions_compact(self) -> None:
        """A row per lock, the counts and the ratio; no column that is all null or 0,
        no bookkeeping column."""
        self.assertIn("| lock | instructions per pair | inline API | ratio to pthread |", self.md)
        self.assertIn("| pthread | 92 | \u2013 | 1.00\u00d7 |", self.md)
        for word in ("duration_s", "throughput_ops_per_s", "_command", "| read side |"):
            self.assertNotIn(word, self.md)

    def test_commands_relative_to_the_folder(self) -> None:
        self.assertIn("--lock pthread,tas,mcs,cna,hmcs --json latency.json\n", self.md)
        self.assertNotIn(str(self.dir), self.md)

    def test_java_section(self) -> None:
        self.assertIn("## Java (virtual threads)", self.md)
        self.assertIn("VNA beat ReentrantLock.", self.md)
        self.assertIn("](java/vna.png)", self.md)

    def test_no_temporary_files_left(self) -> None:
        leftovers = [p.name for p in self.dir.iterdir() if p.name.endswith(".tmp")]
        self.assertEqual(leftovers, [])


class ReportOnBadInput(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="numalock-report-bad-")
        self.dir = Path(self.tmp.name)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def assert_fails(self, *needles: str) -> str:
        proc = run_report(self.dir)
        self.assertNotEqual(proc.returncode, 0)
        self.assertTrue(one_sentence(proc.stderr), repr(proc.stderr))
        for needle in needles:
            self.assertIn(needle, proc.stderr)
        self.assertFalse((self.dir / "report.md").exists())
        self.assertEqual(list(self.dir.glob("*.png")), [])
        self.assertEqual([p for p in self.dir.iterdir() if p.name.endswith(".tmp")], [])
        return proc.stderr

    def test_empty_dir(self) -> None:
        self.assert_fails(str(self.dir), "no .json files")

    def test_missing_dir(self) -> None:
        proc = run_report(self.dir / "nope")
        self.assertNotEqual(proc.returncode, 0)
        self.assertTrue(one_sentence(proc.stderr), repr(proc.stderr))
        self.assertIn("not a directory", proc.stderr)

    def test_malformed_json(self) -> None:
        build_fixture(self.dir)
        (self.dir / "broken.json").write_text('{"meta": {}, "records": [', encoding="utf-8")
        self.assert_fails("broken.json", "not valid JSON")

    def test_wrong_shape(self) -> None:
        write_json(self.dir / "shape.json", {"meta": meta("kvmap", "x"), "records": {"lock": "mcs"}})
        self.assert_fails("shape.json", "\"records\" list")

    def test_non_numeric_field(self) -> None:
        rec = tput("kvmap", "mcs", 2, "virtual:2", 1000)
        rec["throughput_ops_per_s"] = "fast"
        write_json(self.dir / "typed.json", {"meta": meta("kvmap", "x"), "records": [rec]})
        self.assert_fails("typed.json", "record 1", "throughput_ops_per_s")

    def test_failure_keeps_previous_report(self) -> None:
        build_fixture(self.dir)
        self.assertEqual(run_report(self.dir).returncode, 0)
        before = (self.dir / "report.md").read_bytes()
        (self.dir / "zzz.json").write_text("not json", encoding="utf-8")
        proc = run_report(self.dir)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("zzz.json", proc.stderr)
        self.assertEqual((self.dir / "report.md").read_bytes(), before)


class UnknownWorkload(unittest.TestCase):
    def test_generic_table(self) -> None:
        with tempfile.TemporaryDirectory(prefix="numalock-report-gen-") as tmp:
            d = Path(tmp)
            write_json(d / "odd.json", {"meta": meta("mystery", "numalock bench mystery --lock mcs"),
                                        "records": [{"workload": "mystery", "lock": "mcs", "threads": 2,
                                                     "topology": None, "widgets": 7, "speed": None}]})
            proc = run_report(d)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            md = (d / "report.md").read_text(encoding="utf-8")
            self.assertIn("mystery", md)
            self.assertIn("| widgets |", md)
            self.assertIn("| mcs | 2 | 7 |\n", md)  # speed: null in every row, left out
            self.assertNotIn("speed", md)
            self.assertNotIn("_command", md)


class Hierarchy(unittest.TestCase):
    def test_crossing_columns_and_plot(self) -> None:
        """Records of a topology with levels: a column and a plot per level
        other than the nodes (the node level is the remote share)."""
        with tempfile.TemporaryDirectory(prefix="numalock-report-lv-") as tmp:
            d = Path(tmp)
            recs = [tput("kvmap", lock, t, "virtual:2x2", 100000 * t,
                         crossings={"cache": 0.25 * t / 4, "node": 0.01})
                    for lock in ("cna", "c-tkt-n") for t in (4, 16)]
            write_json(d / "kv.json", {"meta": meta("kvmap", "numalock bench kvmap --topology virtual:2x2"),
                                       "records": recs})
            proc = run_report(d)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            md = (d / "report.md").read_text(encoding="utf-8")
            self.assertIn("| crossed cache |", md)
            self.assertNotIn("| crossed node |", md)
            self.assertIn("| cna | 16 | 1,600,000 | 1.00\u00d7 | 33.0% | 100.0% | 0.66 |", md)
            png = d / "kvmap_virtual-2x2_crossed_cache.png"
            self.assertTrue(png.exists() and png.read_bytes().startswith(PNG_MAGIC))
            self.assertIn(png.name, md)


class ManyLocks(unittest.TestCase):
    def test_split_into_panels(self) -> None:
        """More than 8 locks: stacked panels of at most 8 lines, each with the
        baseline (a taller image), and distinct colours within a panel."""
        import struct
        with tempfile.TemporaryDirectory(prefix="numalock-report-many-") as tmp:
            d = Path(tmp)
            locks = [f"lock{i}" for i in range(13)] + ["pthread"]
            recs = [tput("kvmap", lock, t, "virtual:2", 1000 * (i + 1) * t)
                    for i, lock in enumerate(locks) for t in (1, 2, 4)]
            write_json(d / "kv.json", {"meta": meta("kvmap", "numalock bench kvmap --lock all"), "records": recs})
            proc = run_report(d)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            png = (d / "kvmap_virtual-2_throughput.png").read_bytes()
            width, height = struct.unpack(">II", png[16:24])
            self.assertEqual(width, 1000)
            self.assertGreater(height, 1.5 * 560, "13 locks and the baseline in one panel")


if __name__ == "__main__":
    unittest.main(verbosity=2)
