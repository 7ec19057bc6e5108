#!/usr/bin/env python3
"""Turn `numalock bench ... --json FILE` output into PNG plots and a Markdown report.

Usage: report.py DIR [--title TITLE]

Reads every DIR/*.json file, writes one PNG per plot into DIR and DIR/report.md,
which embeds the plots by relative path and adds a table per section.  Every
output is written to a temporary file in DIR and renamed into place, so an
interrupted run never leaves a half-written file.  On bad input (no JSON files,
a file that is not valid JSON or does not follow the contract) the script prints
one sentence naming the file and the problem on stderr and exits with status 1
before anything is written.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

PROG = "report.py"

# Workloads whose records are throughput records (lock x threads -> ops/s).
THROUGHPUT_WORKLOADS = ("kvmap", "rwhash", "contention", "delegation")
LATENCY_WORKLOAD = "latency"
INSTRUCTIONS_WORKLOAD = "instructions"
FOOTPRINT_WORKLOAD = "footprint"
C2C_WORKLOAD = "c2c"  # `numalock topo --measure --json`: one latency matrix per record
COMPARE_WORKLOAD = "compare"  # `numalock compare --json`: a program under glibc and each lock
# perf bench futex's experiments (bench/futex.c): the kernel's futex hash and wakes, no lock
FUTEX_WORKLOADS = ("futex-hash", "futex-wake", "futex-wake-parallel", "futex-requeue")
WORKLOAD_ORDER = THROUGHPUT_WORKLOADS + (LATENCY_WORKLOAD, INSTRUCTIONS_WORKLOAD, FOOTPRINT_WORKLOAD)
SIMULATED = "simulated "  # a group's topology for `numalock sim` records: "simulated MACHINE"

# Numeric fields that, when present and not null, must be numbers.
NUMERIC_FIELDS = (
    "threads", "duration_s", "ops", "throughput_ops_per_s", "fairness_factor",
    "acquisitions", "contended", "handovers", "remote_handovers", "remote_share",
    "ratio_to_baseline", "ns_per_pair", "ratio_to_pthread", "nodes_used", "bytes",
    "read_pct",
)

DASH = "\u2013"  # shown for null / missing values

# Figure geometry: 10 x 5.6 inches at 100 dpi = 1000 x 560 pixels.
FIG_SIZE = (10.0, 5.6)
FIG_DPI = 100
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*", "h", "p")
LINESTYLES = ("-", "--", "-.", ":")
# More series than this and the legend moves outside the axes, to the right.
LEGEND_INSIDE_MAX = 6
# More series than this and a plot of a metric against threads is split into panels.
PANEL_MAX = 8
# Line colours: tab10 without its grey (C7), which is the baseline's in a split plot.
PALETTE = ("C0", "C1", "C2", "C3", "C4", "C5", "C6", "C8", "C9")
# More bars than this and the latency chart turns horizontal.
VERTICAL_BARS_MAX = 8


class ReportError(Exception):
    """An input or output problem, described in one sentence."""


# --------------------------------------------------------------------------
# Loading and validation
# --------------------------------------------------------------------------

@dataclass
class Run:
    """One JSON file."""
    path: Path
    meta: dict[str, Any]
    records: list[dict[str, Any]]


@dataclass
class Group:
    """All records of one (workload, topology), possibly from several files."""
    workload: str
    topology: str
    records: list[dict[str, Any]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _clean_number(value: Any) -> Any:
    """NaN and infinities (accepted by Python's json) count as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def load_run(path: Path) -> Run:
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ReportError(f"{name} is not UTF-8 text.") from None
    except OSError as exc:
        raise ReportError(f"{name} cannot be read ({exc.strerror or exc}).") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(
            f"{name} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})."
        ) from None
    if not isinstance(doc, dict):
        raise ReportError(f"{name} must hold a JSON object with \"meta\" and \"records\", "
                          f"not a {type(doc).__name__}.")
    meta = doc.get("meta")
    if not isinstance(meta, dict):
        raise ReportError(f"{name} has no \"meta\" object.")
    records = doc.get("records")
    if not isinstance(records, list):
        raise ReportError(f"{name} has no \"records\" list.")
    cleaned: list[dict[str, Any]] = []
    for index, rec in enumerate(records, start=1):
        where = f"{name} record {index}"
        if not isinstance(rec, dict):
            raise ReportError(f"{where} is a {type(rec).__name__}, not a JSON object.")
        rec = dict(rec)
        workload = rec.get("workload", meta.get("workload"))
        if not isinstance(workload, str) or not workload:
            raise ReportError(f"{where} has no \"workload\" name.")
        rec["workload"] = workload
        lock = rec.get("lock")
        if not isinstance(lock, str) or not lock:
            raise ReportError(f"{where} has no \"lock\" name.")
        topology = rec.get("topology")
        if topology is not None and not isinstance(topology, str):
            raise ReportError(f"{where} has a \"topology\" that is not a string ({topology!r}).")
        for key in NUMERIC_FIELDS:
            if key in rec and rec[key] is not None:
                if not _is_number(rec[key]):
                    raise ReportError(f"{where} has a non-numeric \"{key}\" ({rec[key]!r}).")
                rec[key] = _clean_number(rec[key])
        pto = rec.get("per_thread_ops")
        if pto is not None and not (isinstance(pto, list) and all(_is_number(v) for v in pto)):
            raise ReportError(f"{where} has a \"per_thread_ops\" that is not a list of numbers.")
        baseline = rec.get("baseline")
        if baseline is not None and not isinstance(baseline, str):
            raise ReportError(f"{where} has a \"baseline\" that is not a string ({baseline!r}).")
        cleaned.append(rec)
    return Run(path=path, meta=meta, records=cleaned)


def load_dir(directory: Path) -> list[Run]:
    if not directory.is_dir():
        raise ReportError(f"{directory} is not a directory.")
    paths = sorted(p for p in directory.glob("*.json") if p.is_file())
    if not paths:
        raise ReportError(f"{directory} holds no .json files from `numalock bench --json`.")
    runs = [load_run(p) for p in paths]
    if not any(run.records for run in runs):
        raise ReportError(f"{directory} holds JSON files but none of them has any records.")
    return runs


def group_runs(runs: list[Run]) -> list[Group]:
    groups: dict[tuple[str, str], Group] = {}
    for run in runs:
        for rec in run.records:
            topo = rec.get("topology") or "default"
            if rec.get("machine"):  # `numalock sim`: one group per simulated machine
                topo = SIMULATED + str(rec["machine"])
            key = (rec["workload"], topo)
            grp = groups.get(key)
            if grp is None:
                grp = groups[key] = Group(workload=key[0], topology=key[1])
            grp.records.append(rec)
            if run.path.name not in grp.files:
                grp.files.append(run.path.name)
            rec["_file"] = run.path.name
            rec["_command"] = run.meta.get("command")
            rec["_started"] = str(run.meta.get("started_utc") or "")

    def order(key: tuple[str, str]) -> tuple[int, str, str]:
        workload, topo = key
        rank = WORKLOAD_ORDER.index(workload) if workload in WORKLOAD_ORDER else len(WORKLOAD_ORDER)
        return (rank, workload, topo)

    return [groups[k] for k in sorted(groups, key=order)]


# --------------------------------------------------------------------------
# Atomic output
# --------------------------------------------------------------------------

def atomic_write(path: Path, write: Callable[[Any], None], binary: bool) -> None:
    """Call write(fileobj) on a temporary file beside path, then rename it to path."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


# --------------------------------------------------------------------------
# Formatting helpers
# --------------------------------------------------------------------------

def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


def md_cell(value: Any) -> str:
    text = str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def fmt_int(value: Any) -> str:
    if value is None:
        return DASH
    return f"{round(value):,}"


def fmt_float(value: Any, digits: int = 2) -> str:
    if value is None:
        return DASH
    return f"{value:.{digits}f}"


def fmt_pct(value: Any) -> str:
    """A share (0-1) as a percentage, as the console prints it."""
    return DASH if not _is_number(value) else f"{100 * value:.1f}%"


def fmt_ratio(value: Any) -> str:
    if value is None:
        return DASH
    return f"{value:.2f}\u00d7"


def fmt_bytes(value: Any) -> str:
    if value is None:
        return DASH
    value = int(value)
    if value >= 1 << 20:
        return f"{value:,} ({value / (1 << 20):.1f} MiB)"
    if value >= 1 << 10:
        return f"{value:,} ({value / (1 << 10):.1f} KiB)"
    return f"{value:,}"


def fmt_generic(value: Any) -> str:
    if value is None:
        return DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value.is_integer() and abs(value) >= 1000:
            return f"{int(value):,}"
        return f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, list):
        if len(value) <= 8:
            return ", ".join(fmt_generic(v) for v in value)
        return f"{len(value)} values"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _empty_or_zero(text: str) -> bool:
    """A cell that says nothing: "–", "" or a zero (0, 0.00, 0.0%, 0.00×)."""
    text = text.strip().rstrip("%×").replace(",", "")
    if text in ("", DASH):
        return True
    try:
        return float(text.split(" ")[0]) == 0
    except ValueError:
        return False


def md_table(headers: list[str], rows: list[list[str]], keep: int = 1) -> list[str]:
    """A Markdown table; the columns after the first `keep` that are empty or
    zero in every row are left out."""
    cols = [i for i in range(len(headers))
            if i < keep or not rows or not all(_empty_or_zero(str(r[i])) for r in rows)]
    headers = [headers[i] for i in cols]
    rows = [[r[i] for i in cols] for r in rows]
    lines = ["| " + " | ".join(md_cell(h) for h in headers) + " |",
             "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(md_cell(c) for c in row) + " |")
    return lines


def si_formatter(value: float, _pos: Any = None) -> str:
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:g}{suffix}"
    return f"{value:g}"


def median_or_none(values: Iterable[Any]) -> Any:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


# --------------------------------------------------------------------------
# Plotting
# --------------------------------------------------------------------------

def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({
        "font.size": 12,
        "axes.titlesize": 14,
        "axes.labelsize": 12,
        "legend.fontsize": 11,
        "axes.grid": True,
        "grid.alpha": 0.3,
    })
    return plt


def save_figure(fig: Any, path: Path) -> None:
    plt = _pyplot()
    try:
        fig.tight_layout()
        atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=FIG_DPI), binary=True)
    finally:
        plt.close(fig)


def _series_style(index: int) -> dict[str, Any]:
    """Colour, marker and line style all vary; earlier series are drawn larger, so a
    series hidden under a later one with equal values still shows around its edge."""
    style = {"marker": MARKERS[index % len(MARKERS)], "color": PALETTE[index % len(PALETTE)],
             "linestyle": LINESTYLES[index % len(LINESTYLES)],
             "linewidth": max(1.2, 2.6 - 0.15 * index), "markersize": max(5.0, 12.0 - 0.8 * index)}
    if index % 2:
        style.update(markerfacecolor="none", markeredgewidth=2)  # hollow: shows what is beneath
    return style


def _legend(ax: Any, count: int, title: str = "lock") -> None:
    if count > LEGEND_INSIDE_MAX:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), title=title,
                  fontsize=10, borderaxespad=0)
    else:
        ax.legend(loc="best", title=title)


def _threads_axis(ax: Any, threads: list[int]) -> None:
    ax.set_xlabel("threads")
    if not threads:
        return
    lo, hi = min(threads), max(threads)
    if lo > 0 and hi / lo >= 8:
        ax.set_xscale("log", base=2)
    ax.set_xticks(threads)
    ax.set_xticklabels([str(t) for t in threads])
    ax.minorticks_off()


def _no_data(ax: Any) -> None:
    ax.text(0.5, 0.5, "no data (all values are null)", transform=ax.transAxes,
            ha="center", va="center", fontsize=13, color="0.4")


def _series_key(rec: dict[str, Any], split_read_pct: bool) -> str:
    if split_read_pct and rec.get("read_pct") is not None:
        return f"{rec['lock']} ({fmt_generic(rec['read_pct'])}% reads)"
    return rec["lock"]


def metric_value(rec: dict[str, Any], metric: str) -> Any:
    """A record's field, or with 'crossed:LEVEL' its share of hand-overs that
    crossed that level of the topology's hierarchy."""
    if metric.startswith("crossed:"):
        crossings = rec.get("crossings")
        value = crossings.get(metric[8:]) if isinstance(crossings, dict) else None
        return value if isinstance(value, (int, float)) else None
    return rec.get(metric)


def crossing_levels(grp: Group) -> list[str]:
    """The hierarchy's levels other than the nodes (remote share) that the
    group's records count crossings of, finest first."""
    levels: list[str] = []
    for rec in grp.records:
        crossings = rec.get("crossings")
        if isinstance(crossings, dict):
            for name in crossings:
                if name != "node" and name not in levels:
                    levels.append(name)
    return levels


def throughput_series(grp: Group, metric: str) -> tuple[dict[str, list[tuple[int, float]]], list[int]]:
    """label -> sorted [(threads, median value)], plus every thread count seen."""
    split = len({r.get("read_pct") for r in grp.records}) > 1
    raw: dict[str, dict[int, list[float]]] = {}
    threads_seen: set[int] = set()
    for rec in grp.records:
        label = _series_key(rec, split)
        per_label = raw.setdefault(label, {})
        threads = rec.get("threads")
        if threads is None:
            continue
        threads_seen.add(int(threads))
        value = metric_value(rec, metric)
        if value is None:
            continue
        per_label.setdefault(int(threads), []).append(value)
    series = {label: sorted((t, statistics.median(v)) for t, v in pts.items())
              for label, pts in raw.items()}
    return series, sorted(threads_seen)


def panel_groups(series: dict[str, list[tuple[int, float]]], baselines: set[str]) -> list[list[str]]:
    """The series split over panels of at most PANEL_MAX lines, in their order,
    the baseline's in every panel: many locks in one plot repeat colours and
    hide each other."""
    labels = [label for label, pts in series.items() if pts]
    base = [label for label in labels if label in baselines]
    others = [label for label in labels if label not in baselines]
    if len(labels) <= PANEL_MAX or not others:
        return [labels]
    per = PANEL_MAX - len(base) if len(base) < PANEL_MAX - 1 else PANEL_MAX
    count = math.ceil(len(others) / per)
    size = math.ceil(len(others) / count)
    return [others[k * size:(k + 1) * size] + base for k in range(count)]


def _metric_axis(ax: Any, metric: str, values: list[float]) -> None:
    """The y axis of a throughput plot's metric."""
    if metric == "throughput_ops_per_s":
        ax.set_ylabel("throughput (operations/s)")
        positive = [v for v in values if v > 0]
        if positive and max(positive) / min(positive) >= 20:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
        from matplotlib.ticker import FuncFormatter
        ax.yaxis.set_major_formatter(FuncFormatter(si_formatter))
    elif metric == "remote_share" or metric.startswith("crossed:"):
        what = "node" if metric == "remote_share" else f"{metric[8:]} domain"
        ax.set_ylabel(f"hand-overs to another {what} (%)")
        ax.set_ylim(-2, 102)
    elif metric == "fairness_factor":
        ax.set_ylabel("ops share of the busier half (0.5 = fair)")
        ax.axhline(0.5, color="0.3", linestyle=(0, (6, 3)), linewidth=1, label="0.5 = fair", zorder=1)
        ax.set_ylim(0.45, 1.02)


METRIC_TITLES = {"throughput_ops_per_s": "Throughput vs threads", "remote_share": "Remote hand-over share vs threads",
                 "fairness_factor": "Fairness factor vs threads"}


def plot_throughput_metric(grp: Group, metric: str, path: Path) -> None:
    """One metric against threads, a line per lock; more than PANEL_MAX locks
    are drawn in panels stacked under one another, each with the baseline."""
    plt = _pyplot()
    series, threads = throughput_series(grp, metric)
    if metric == "remote_share" or metric.startswith("crossed:"):  # in percent, as the tables
        series = {label: [(t, 100 * v) for t, v in pts] for label, pts in series.items()}
    base_locks = {r["baseline"] for r in grp.records if r.get("baseline")}
    baselines = {label for label in series if label.split(" (")[0] in base_locks}
    title = METRIC_TITLES.get(metric, f"Hand-overs that crossed a {metric[8:]} domain vs threads")
    values = [v for pts in series.values() for _, v in pts]
    save_figure(line_panels(plt, series, baselines, threads, f"{title} ({grp.workload}, topology {grp.topology})",
                            lambda ax: _metric_axis(ax, metric, values), metric == "fairness_factor"), path)


def line_panels(plt: Any, series: dict[str, list[tuple[int, float]]], baselines: set[str], threads: list[int],
                title: str, axis: Callable[[Any], None], extra_legend: int = 0) -> Any:
    """A line per series against threads, in one panel or, past PANEL_MAX
    series, in panels stacked under one another, each with the baselines
    (grey, dashed); axis(ax) sets up each panel's y axis."""
    panels = panel_groups(series, baselines)
    fig, axes = plt.subplots(len(panels), 1, figsize=(FIG_SIZE[0], FIG_SIZE[1] + 4.2 * (len(panels) - 1)),
                             sharex=True, sharey=True, squeeze=False)
    axes[0][0].set_title(title)
    for panel, labels in zip(axes, panels):
        ax = panel[0]
        for index, label in enumerate(labels):
            style = _series_style(index)
            if label in baselines and len(panels) > 1:
                style.update(color="0.35", marker="o", linestyle="--", markerfacecolor="0.35")
            pts = series[label]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label, **style)
        _threads_axis(ax, threads)
        axis(ax)
        if labels:  # outside the axes when the plot is split: the panels then look alike
            _legend(ax, LEGEND_INSIDE_MAX + 1 if len(panels) > 1 else len(labels) + extra_legend)
        else:
            _no_data(ax)
    return fig


def speed_ratio(rec: dict[str, Any]) -> Any:
    """A latency record's ratio to pthread, above 1 when faster (files of
    earlier versions hold only ratio_to_pthread, the time ratio)."""
    if rec.get("ratio_to_baseline") is not None:
        return rec["ratio_to_baseline"]
    old = rec.get("ratio_to_pthread")
    return 1 / old if _is_number(old) and old > 0 else None


def plot_latency(grp: Group, path: Path) -> None:
    plt = _pyplot()
    ns: dict[str, list[float]] = {}
    ratio: dict[str, list[float]] = {}
    for rec in grp.records:
        ns.setdefault(rec["lock"], [])
        ratio.setdefault(rec["lock"], [])
        if rec.get("ns_per_pair") is not None:
            ns[rec["lock"]].append(rec["ns_per_pair"])
        if speed_ratio(rec) is not None:
            ratio[rec["lock"]].append(speed_ratio(rec))
    bars = [(lock, statistics.median(v), median_or_none(ratio[lock])) for lock, v in ns.items() if v]
    bars.sort(key=lambda b: b[1])
    horizontal = len(bars) > VERTICAL_BARS_MAX
    size = (FIG_SIZE[0], max(FIG_SIZE[1], 1.2 + 0.42 * len(bars))) if horizontal else FIG_SIZE
    fig, ax = plt.subplots(figsize=size)
    ax.set_title(f"Uncontended lock+unlock cost, 1 thread (topology {grp.topology}; "
                 f"\u00d7 pthread: above 1 is faster)")
    value_label = "time per lock+unlock pair (ns)"
    if not bars:
        ax.set_ylabel(value_label)
        _no_data(ax)
        save_figure(fig, path)
        return
    positions = list(range(len(bars)))
    palette = [f"C{i}" for i in range(10) if i != 7]  # C7 is grey, kept for pthread
    colors = ["0.55" if b[0] == "pthread" else palette[i % len(palette)] for i, b in enumerate(bars)]
    values = [b[1] for b in bars]
    names = [b[0] for b in bars]
    ratio_text = [f"{b[2]:.2f}\u00d7 pthread" if b[2] is not None else f"{DASH} pthread" for b in bars]
    if horizontal:
        rects = ax.barh(positions, values, color=colors)
        ax.set_yticks(positions)
        ax.set_yticklabels(names)
        ax.invert_yaxis()  # cheapest on top
        ax.set_xlabel(value_label)
        ax.set_ylabel("lock")
        ax.grid(axis="y", visible=False)
        labels = [f"{v:.1f} ns ({r})" for v, r in zip(values, ratio_text)]
        ax.bar_label(rects, labels=labels, padding=4, fontsize=10)
        ax.set_xlim(0, max(values) * 1.35)
    else:
        rects = ax.bar(positions, values, color=colors)
        ax.set_xticks(positions)
        ax.set_xticklabels(names)
        ax.set_ylabel(value_label)
        ax.set_xlabel("lock")
        ax.grid(axis="x", visible=False)
        labels = [f"{v:.1f} ns\n{r}" for v, r in zip(values, ratio_text)]
        ax.bar_label(rects, labels=labels, padding=3, fontsize=10)
        ax.set_ylim(0, max(values) * 1.25)
    save_figure(fig, path)


def plot_footprint(grp: Group, path: Path) -> None:
    plt = _pyplot()
    raw: dict[str, dict[int, list[float]]] = {}
    nodes_seen: set[int] = set()
    for rec in grp.records:
        per_lock = raw.setdefault(rec["lock"], {})
        if rec.get("nodes_used") is None:
            continue
        nodes_seen.add(int(rec["nodes_used"]))
        if rec.get("bytes") is None:
            continue
        per_lock.setdefault(int(rec["nodes_used"]), []).append(rec["bytes"])
    fig, ax = plt.subplots(figsize=FIG_SIZE)
    ax.set_title(f"Lock memory footprint vs NUMA nodes used (topology {grp.topology})")
    ax.set_xlabel("NUMA nodes used")
    ax.set_ylabel("bytes per lock")
    values: list[float] = []
    any_points = False
    for index, (lock, pts) in enumerate(raw.items()):
        if not pts:
            continue
        any_points = True
        xy = sorted((n, statistics.median(v)) for n, v in pts.items())
        values.extend(y for _, y in xy)
        ax.plot([p[0] for p in xy], [p[1] for p in xy], label=lock, **_series_style(index))
    if nodes_seen:
        ticks = sorted(nodes_seen)
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(t) for t in ticks])
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) >= 50:
        ax.set_yscale("log", base=2)
        from matplotlib.ticker import FuncFormatter
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: _bytes_tick(v)))
    elif values:
        ax.set_ylim(bottom=0)
    if any_points:
        _legend(ax, LEGEND_INSIDE_MAX + 1)  # always outside: equal footprints overlap a lot
    else:
        _no_data(ax)
    save_figure(fig, path)


def plot_compare(records: list[dict[str, Any]], path: Path, title: str) -> None:
    """`numalock compare`: each lock's figure relative to glibc's median (above 1:
    better), against threads when the comparison had several thread values, else
    one bar per lock with its runs' range as whiskers."""
    plt = _pyplot()
    locks = list(dict.fromkeys(r["lock"] for r in records))
    threads = sorted({int(r["threads"]) for r in records if _is_number(r.get("threads"))})
    if len(threads) > 1:
        series = {lock: sorted((int(r["threads"]), r["ratio_to_glibc"]) for r in records
                               if r["lock"] == lock and _is_number(r.get("threads"))
                               and _is_number(r.get("ratio_to_glibc")))
                  for lock in locks if lock != "glibc"}

        def axis(ax: Any) -> None:
            ax.axhline(1.0, color="0.3", linestyle=(0, (6, 3)), linewidth=1, zorder=1, label="glibc = 1")
            ax.set_ylabel("median relative to glibc's (\u00d7)")

        save_figure(line_panels(plt, series, set(), threads, f"{title}: relative to glibc (above 1: better)", axis,
                                1), path)
        return
    fig, ax = plt.subplots(figsize=FIG_SIZE)
    ax.set_title(f"{title}: relative to glibc (above 1: better)")
    drawn = 0
    ax.axhline(1.0, color="0.3", linestyle=(0, (6, 3)), linewidth=1, zorder=1)
    bars = [r for r in records if _is_number(r.get("ratio_to_glibc"))]
    positions = list(range(len(bars)))
    values = [r["ratio_to_glibc"] for r in bars]
    low = [max(0.0, v - r["ratio_min"]) if _is_number(r.get("ratio_min")) else 0.0
           for v, r in zip(values, bars)]
    high = [max(0.0, r["ratio_max"] - v) if _is_number(r.get("ratio_max")) else 0.0
            for v, r in zip(values, bars)]
    colors = ["0.55" if r["lock"] == "glibc" else f"C{i % 10}" for i, r in enumerate(bars)]
    if bars:
        rects = ax.bar(positions, values, color=colors, yerr=[low, high], capsize=4, ecolor="0.2")
        ax.bar_label(rects, labels=[f"{v:.2f}\u00d7" for v in values], padding=3, fontsize=10)
        ax.set_xticks(positions)
        ax.set_xticklabels([r["lock"] for r in bars], rotation=30 if len(bars) > 6 else 0, ha="right"
                           if len(bars) > 6 else "center")
        ax.set_ylim(0, max(v + h for v, h in zip(values, high)) * 1.2)
        drawn = len(bars)
    ax.set_xlabel("lock (whiskers: the runs' range)")
    ax.set_ylabel("median relative to glibc's (\u00d7)")
    ax.grid(axis="x", visible=False)
    if not drawn:
        _no_data(ax)
    save_figure(fig, path)


def _bytes_tick(value: float) -> str:
    if value >= 1 << 20:
        return f"{value / (1 << 20):g} MiB"
    if value >= 1 << 10:
        return f"{value / (1 << 10):g} KiB"
    return f"{value:g} B"


# --------------------------------------------------------------------------
# Report sections
# --------------------------------------------------------------------------

HOW_TO_READ = (
    "**Remote share** is the share (in percent) of lock hand-overs whose new holder runs on another "
    "(virtual) NUMA node than the previous holder: lower means the lock keeps its data "
    "on one node longer, which is what NUMA-aware locks aim for (it is empty when a run "
    "had no hand-overs). On a topology with levels around the nodes (`virtual:NxM`, or the "
    "cache domains and packages sysfs shows), **crossed LEVEL** is the same share for the "
    "domains of that level (a cache domain: the lock's data left that cache). The **fairness factor** is the share of all operations done by "
    "the busier half of the threads (CNA paper, section 7.1.1): 0.5 means every thread "
    "got the same share, 1.0 means one half of the threads did all the work. **Ratios** "
    "are against a baseline lock measured in the same run (named in each table), because "
    "absolute timings on a two-core shared machine are noisy; every ratio is above 1 when the lock "
    "does better (more operations per second, less time, fewer instructions), here, on the console "
    "and in the JSON (`ratio_to_baseline`). Compare ratios and shapes rather than absolute numbers. A \u201c" + DASH + "\u201d marks a value the benchmark "
    "did not report (null); such points are left out of the plots, and a column with no value "
    "other than that or 0 is left out of its table."
)


def _image(lines: list[str], alt: str, name: str) -> None:
    lines.append(f"![{alt}]({name})")
    lines.append("")


def section_throughput(grp: Group, directory: Path, written: list[Path]) -> list[str]:
    base = f"{slug(grp.workload)}_{slug(grp.topology)}"
    simulated = grp.topology.startswith(SIMULATED)
    if simulated:
        machine = grp.topology[len(SIMULATED):]
        lines = [f"## Simulated machines: {grp.workload} on `{machine}`", "",
                 f"The library's own lock code on the simulator's model of `{machine}`, in virtual time "
                 "(`numalock sim`; the model, its parameters and sources: docs/SIMULATION.md). The same "
                 "workload on the machine that ran this report has its own section; the simulated figures "
                 "are what the locks are for: hand-overs between sockets cost what they cost there.", ""]
    else:
        lines = [f"## {grp.workload} \u2014 topology `{grp.topology}`", ""]
    if len(grp.files) > 1:
        lines += [f"From {len(grp.files)} files: " + ", ".join(f"`{f}`" for f in grp.files) + ".", ""]
    levels = crossing_levels(grp)
    plots = (("throughput_ops_per_s", "throughput", "Throughput vs threads"),
             ("remote_share", "remote_share", "Remote hand-over share vs threads"),
             *((f"crossed:{lv}", f"crossed_{slug(lv)}", f"Share of hand-overs crossing a {lv} domain vs threads")
               for lv in levels),
             ("fairness_factor", "fairness", "Fairness factor vs threads"))
    for metric, suffix, alt in plots:
        path = directory / f"{base}_{suffix}.png"
        plot_throughput_metric(grp, metric, path)
        written.append(path)
        _image(lines, f"{alt} for {grp.workload} ({grp.topology})", path.name)

    baselines = {r.get("baseline") for r in grp.records if r.get("ratio_to_baseline") is not None}
    baselines.discard(None)
    if len(baselines) == 1:
        ratio_head = f"ratio to {next(iter(baselines))}"
    else:
        ratio_head = "ratio to baseline"
    has_read_pct = any(r.get("read_pct") is not None for r in grp.records)
    multi_file = len(grp.files) > 1
    headers = ["lock", "threads"]
    if has_read_pct:
        headers.append("read %")
    headers += ["throughput (ops/s)", ratio_head, "remote share"]
    headers += [f"crossed {lv}" for lv in levels]
    headers += ["fairness", "hand-overs"]
    if simulated:
        headers += ["misses/op", "remote misses/op"]
    if multi_file:
        headers.append("file")

    def sort_key(rec: dict[str, Any]) -> tuple[Any, ...]:
        locks = list(dict.fromkeys(r["lock"] for r in grp.records))
        return (locks.index(rec["lock"]),
                rec.get("read_pct") if rec.get("read_pct") is not None else -1,
                rec.get("threads") if rec.get("threads") is not None else -1)

    rows = []
    for rec in sorted(grp.records, key=sort_key):
        ratio = fmt_ratio(rec.get("ratio_to_baseline"))
        if len(baselines) > 1 and rec.get("ratio_to_baseline") is not None and rec.get("baseline"):
            ratio += f" {rec['baseline']}"
        row = [rec["lock"], fmt_generic(rec.get("threads"))]
        if has_read_pct:
            row.append(fmt_generic(rec.get("read_pct")))
        row += [fmt_int(rec.get("throughput_ops_per_s")), ratio, fmt_pct(rec.get("remote_share"))]
        row += [fmt_pct(metric_value(rec, f"crossed:{lv}")) for lv in levels]
        row += [fmt_float(rec.get("fairness_factor")), fmt_int(rec.get("handovers"))]
        if simulated:
            row += [fmt_float(rec.get("sim_misses_per_op")), fmt_float(rec.get("sim_llc_misses_per_op"))]
        if multi_file:
            row.append(rec["_file"])
        rows.append(row)
    lines += md_table(headers, rows, keep=3 if has_read_pct else 2)
    lines.append("")
    return lines


def plot_delegation(grp: Group, path: Path, threads: Any, lines_n: Any) -> None:
    """Execution time (cycles per critical section) against the interval, one curve
    per lock: the figure of the RCL and SANL papers (SANL sec. 4.2, figs. 11-14)."""
    plt = _pyplot()
    raw: dict[str, dict[float, list[float]]] = {}
    for rec in grp.records:
        if rec.get("threads") != threads or rec.get("lines") != lines_n:
            continue
        iv, cyc = rec.get("interval_cycles"), rec.get("cycles_per_cs")
        per_lock = raw.setdefault(rec["lock"], {})
        if _is_number(iv) and _is_number(cyc) and iv > 0 and cyc > 0:
            per_lock.setdefault(float(iv), []).append(float(cyc))
    fig, ax = plt.subplots(figsize=FIG_SIZE)
    drawn = 0
    for index, (lock, pts) in enumerate(raw.items()):
        if not pts:
            continue
        xs = sorted(pts)
        ax.plot(xs, [statistics.median(pts[x]) for x in xs], label=lock, **_series_style(index))
        drawn += 1
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("interval between critical sections (cycles)")
    ax.set_ylabel("execution time (cycles per critical section)")
    ax.set_title(f"Execution time vs interval ({fmt_generic(threads)} threads, "
                 f"{fmt_generic(lines_n)} shared lines, topology {grp.topology})")
    if drawn:
        _legend(ax, drawn)
    else:
        _no_data(ax)
    save_figure(fig, path)


def section_delegation(grp: Group, directory: Path, written: list[Path]) -> list[str]:
    """Execution time against interval per (threads, lines), and every record."""
    lines = [f"## {grp.workload} \u2014 topology `{grp.topology}`", "",
             "The RCL/SANL microbenchmark: a critical section writing shared cache lines, run as a "
             "function (`nl_lock_execute`), then an interval of local work; shorter intervals are "
             "higher contention. Execution time is the machine's wall time per critical section.", ""]
    combos = sorted({(r.get("threads"), r.get("lines")) for r in grp.records
                     if _is_number(r.get("threads")) and _is_number(r.get("lines"))})
    for threads, lines_n in combos:
        path = directory / (f"{slug(grp.workload)}_{slug(grp.topology)}_t{fmt_generic(threads)}"
                            f"_l{fmt_generic(lines_n)}_cycles.png")
        plot_delegation(grp, path, threads, lines_n)
        written.append(path)
        _image(lines, f"Execution time vs interval, {fmt_generic(threads)} threads, "
                      f"{fmt_generic(lines_n)} lines ({grp.topology})", path.name)
    rows = []
    for rec in sorted(grp.records, key=lambda r: (r.get("threads") or 0, r.get("lines") or 0,
                                                 r.get("interval_cycles") or 0, r["lock"])):
        rows.append([rec["lock"], fmt_generic(rec.get("threads")), fmt_generic(rec.get("lines")),
                     fmt_int(rec.get("interval_cycles")), fmt_int(rec.get("throughput_ops_per_s")),
                     fmt_ratio(rec.get("ratio_to_baseline")), fmt_float(rec.get("cycles_per_cs"), 0),
                     fmt_pct(rec.get("server_share")), fmt_int(rec.get("mode_switches")),
                     fmt_pct(rec.get("remote_share")), fmt_float(rec.get("fairness_factor"))])
    if rows:
        bases = {r.get("baseline") for r in grp.records if r.get("baseline")}
        ratio_head = f"ratio to {bases.pop()}" if len(bases) == 1 else "ratio to baseline"
        lines += md_table(["lock", "threads", "lines", "interval (cycles)", "throughput (ops/s)",
                           ratio_head, "cycles per CS", "server share", "mode switches",
                           "remote share", "fairness"], rows, keep=4)
        lines.append("")
    return lines


def section_latency(grp: Group, directory: Path, written: list[Path]) -> list[str]:
    path = directory / f"{slug(grp.workload)}_{slug(grp.topology)}_ns_per_pair.png"
    plot_latency(grp, path)
    written.append(path)
    lines = [f"## latency \u2014 topology `{grp.topology}`", "",
             "One thread, no contention: the cost of one acquire+release pair, "
             "and its ratio to glibc's pthread mutex measured in the same run (pthread's time over the "
             "lock's: above 1 is faster).", ""]
    _image(lines, f"Lock+unlock cost per lock ({grp.topology})", path.name)
    headers = ["lock", "ns per lock+unlock", "ratio to pthread", "throughput (pairs/s)"]
    if len(grp.files) > 1:
        headers.append("file")
    recs = sorted(grp.records, key=lambda r: (r.get("ns_per_pair") is None, r.get("ns_per_pair") or 0))
    rows = []
    for rec in recs:
        row = [rec["lock"], fmt_float(rec.get("ns_per_pair"), 1), fmt_ratio(speed_ratio(rec)),
               fmt_int(rec.get("throughput_ops_per_s"))]
        if len(grp.files) > 1:
            row.append(rec["_file"])
        rows.append(row)
    lines += md_table(headers, rows)
    lines.append("")
    return lines


def section_instructions(grp: Group) -> list[str]:
    """`numalock bench instructions`: counts per pair, a row per lock."""
    lines = [f"## instructions \u2014 topology `{grp.topology}`", "",
             "Instructions per uncontended acquire+release pair, counted by callgrind: through the generic "
             "handle (`nl_lock`), through the lock's inline explicit API where it has one, and a read-write "
             "lock's read side; the ratio is pthread's count over the lock's (above 1: fewer).", ""]
    multi = len(grp.files) > 1
    headers = ["lock", "instructions per pair", "inline API", "read side", "ratio to pthread"]
    rows = []
    for rec in grp.records:
        count = [rec.get(k) for k in ("instructions_per_pair", "inline_instructions_per_pair",
                                      "read_instructions_per_pair")]
        rows.append([rec["lock"]] + [DASH if v is None else f"{v:.2f}".rstrip("0").rstrip(".") for v in count]
                    + [fmt_ratio(rec.get("ratio_to_baseline"))]
                    + ([rec["_file"]] if multi else []))
    lines += md_table(headers + (["file"] if multi else []), rows)
    lines.append("")
    return lines


def section_footprint(grp: Group, directory: Path, written: list[Path]) -> list[str]:
    path = directory / f"{slug(grp.workload)}_{slug(grp.topology)}_bytes.png"
    plot_footprint(grp, path)
    written.append(path)
    lines = [f"## footprint \u2014 topology `{grp.topology}`", "",
             "Memory one lock occupies, by the number of NUMA nodes it is used from.", ""]
    _image(lines, f"Bytes per lock vs nodes used ({grp.topology})", path.name)
    headers = ["lock", "nodes used", "bytes"]
    if len(grp.files) > 1:
        headers.append("file")
    locks = list(dict.fromkeys(r["lock"] for r in grp.records))
    recs = sorted(grp.records, key=lambda r: (locks.index(r["lock"]),
                                             r.get("nodes_used") if r.get("nodes_used") is not None else -1))
    rows = []
    for rec in recs:
        row = [rec["lock"], fmt_generic(rec.get("nodes_used")), fmt_bytes(rec.get("bytes"))]
        if len(grp.files) > 1:
            row.append(rec["_file"])
        rows.append(row)
    lines += md_table(headers, rows)
    lines.append("")
    return lines


def plot_c2c(rec: dict[str, Any], path: Path) -> None:
    """Heat map of a core-to-core latency matrix (`numalock topo --measure --json`)."""
    plt = _pyplot()
    cpus = rec["cpus"]
    n = len(cpus)
    grid = [[float("nan") if v is None else float(v) for v in row] for row in rec["matrix_ns"]]
    side = min(12.0, max(5.0, 0.45 * n + 2.5))
    fig, ax = plt.subplots(figsize=(side + 1.5, side), dpi=FIG_DPI)
    ax.grid(False)
    image = ax.imshow(grid, cmap="viridis", interpolation="nearest")
    fig.colorbar(image, ax=ax, label="one-way latency (ns)")
    step = max(1, n // 32)
    ticks = list(range(0, n, step))
    ax.set_xticks(ticks)
    ax.set_yticks(ticks)
    ax.set_xticklabels([str(cpus[i]) for i in ticks], rotation=90 if n > 16 else 0)
    ax.set_yticklabels([str(cpus[i]) for i in ticks])
    ax.set_xlabel("CPU")
    ax.set_ylabel("CPU")
    if n <= 16:
        finite = [v for row in grid for v in row if math.isfinite(v)]
        mid = (min(finite) + max(finite)) / 2 if finite else 0
        for i in range(n):
            for j in range(n):
                if math.isfinite(grid[i][j]):
                    ax.text(j, i, f"{grid[i][j]:.0f}", ha="center", va="center", fontsize=8,
                            color="white" if grid[i][j] < mid else "black")
    labels = rec.get("labels")
    if isinstance(labels, list) and len(labels) == n and len(set(labels)) > 1:
        for i in range(1, n):  # cluster boundaries where neighbouring CPUs change cluster
            if labels[i] != labels[i - 1]:
                ax.axhline(i - 0.5, color="red", linewidth=1)
                ax.axvline(i - 0.5, color="red", linewidth=1)
    if rec.get("method") == "file":
        ax.set_title("Core-to-core latency (a saved matrix)")
    else:
        ax.set_title(f"Core-to-core latency ({rec.get('method', '?')}, best of {rec.get('rounds', '?')} rounds)")
    save_figure(fig, path)


def section_c2c(grp: Group, directory: Path, written: list[Path]) -> list[str]:
    lines = ["## Core-to-core latency", "",
             "One-way latency between every CPU pair (two threads pinned to the pair bounce one cache "
             "line; best of several rounds), from `numalock topo --measure --json`, and the clusters "
             "it implies.", ""]
    for index, rec in enumerate(grp.records):
        cpus, matrix = rec.get("cpus"), rec.get("matrix_ns")
        if not (isinstance(cpus, list) and isinstance(matrix, list) and len(matrix) == len(cpus)
                and all(isinstance(r, list) and len(r) == len(cpus) for r in matrix)):
            raise ReportError(f"{rec['_file']} has a c2c record without a square \"matrix_ns\" "
                              f"over its \"cpus\".")
        path = directory / f"c2c_{slug(Path(rec['_file']).stem)}_{index}.png"
        plot_c2c(rec, path)
        written.append(path)
        _image(lines, f"Core-to-core latency heat map ({len(cpus)} CPUs)", path.name)
        lines += md_table(["what", "value"], keep=2, rows=[
            ["verdict", md_cell(rec.get("verdict", DASH))],
            ["spec", f"`{rec.get('spec', DASH)}`"],
            ["median within / between clusters (ns)",
             f"{fmt_float(rec.get('within_ns'), 0)} / {fmt_float(rec.get('between_ns'), 0)}"],
            ["clarity (between / within)", fmt_ratio(rec.get("clarity"))],
            ["method, rounds", "a saved matrix (--matrix)" if rec.get("method") == "file"
             else f"{rec.get('method', DASH)}, best of {fmt_generic(rec.get('rounds'))}"],
            ["file", rec["_file"]],
        ])
        lines.append("")
    return lines


def section_compare(grp: Group, directory: Path, written: list[Path]) -> list[str]:
    """One subsection per `numalock compare` run (its label): the plot, the
    command, a row per lock and thread value, the recommendation."""
    lines = ["## Applications", "",
             "Unmodified programs under glibc's mutex (no preload library) and under each lock that "
             "can replace it (`numalock compare`): interleaved rounds, the median of the runs, their "
             "range, and the ratio to glibc's median (above 1: better, whether the figure is a time or "
             "a throughput). The contended and remote shares come from one more run per lock with the "
             "lock profile on (glibc's: its own mutex under the interposer); a \u201c" + DASH + "\u201d "
             "marks a share the profile did not give. A lock is recommended only when its worst run beat "
             "glibc's best; otherwise the differences are inside the noise.", ""]
    # in the order they ran (a suite's order), not the files' names
    ordered = sorted(grp.records, key=lambda r: r["_started"])
    labels = list(dict.fromkeys(str(r.get("label") or r["_file"]) for r in ordered))
    for label in labels:
        recs = [r for r in grp.records if str(r.get("label") or r["_file"]) == label]
        first = recs[0]
        higher = bool(first.get("higher_better"))
        figure = "wall time (s)" if first.get("metric") in (None, "wall_s") else f"`{first['metric']}`"
        lines += [f"### {label}", "",
                  f"Figure: {figure}, {'higher' if higher else 'lower'} is better. Command:", "",
                  "```sh", relative_command(first.get("_command") or DASH, directory), "```", ""]
        path = directory / f"compare_{slug(label)}.png"
        plot_compare(recs, path, label)
        written.append(path)
        _image(lines, f"{label}: each lock relative to glibc", path.name)
        has_threads = any(_is_number(r.get("threads")) for r in recs)
        headers = ["lock"] + (["threads"] if has_threads else []) + [
            "median", "min\u2013max", "\u00d7 glibc", "CPU (s)", "contended", "remote", "status"]
        rows = []
        for rec in sorted(recs, key=lambda r: (r.get("threads") if _is_number(r.get("threads")) else -1)):
            spread = DASH if rec.get("min") is None else \
                f"{fmt_generic(rec.get('min'))}\u2013{fmt_generic(rec.get('max'))}"
            status = "ok" if rec.get("status") == "ok" else f"failed: {rec.get('failure') or '?'}"
            rows.append([rec["lock"]] + ([fmt_generic(rec.get("threads"))] if has_threads else []) + [
                fmt_generic(rec.get("median")), spread, fmt_ratio(rec.get("ratio_to_glibc")),
                fmt_float(rec.get("cpu_median_s"), 3), fmt_pct(rec.get("contended_share")),
                fmt_pct(rec.get("remote_share")), status])
        lines += md_table(headers, rows)
        lines.append("")
        advice = dict.fromkeys((r.get("threads"), r.get("recommendation")) for r in recs
                               if r.get("recommendation"))
        for threads, text in advice:
            where = f"{fmt_generic(threads)} threads: " if threads is not None else ""
            lines.append(f"- {where}{text}")
        if advice:
            lines.append("")
    return lines


FUTEX_METRICS = {"total_ops_per_s": "total operations per second", "wake_all_ms": "ms to wake every sleeper",
                 "requeue_all_ms": "ms to requeue every sleeper", "waker_us": "us per waker's call"}


def _hash_order(label: str) -> tuple[int, int]:
    return (0, 0) if label == "default" else (1, 0) if label == "global" else (2, int(label))


def _num3(value: Any) -> str:
    """Three significant digits, with k/M/G above a thousand."""
    if not _is_number(value):
        return DASH
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g}{suffix}"
    return f"{value:.3g}"


def _spread(rec: dict[str, Any]) -> str:
    return f"{_num3(rec.get('median'))} ({_num3(rec.get('min'))}{DASH}{_num3(rec.get('max'))})"


def plot_futex(grp: Group, path: Path, metric: str) -> None:
    """futex-hash: the metric against the hash (a line per threads x futexes x call);
    the others: against threads (a line per hash x call). Whiskers: the rounds' range."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=FIG_SIZE)
    by_hash = grp.workload == "futex-hash"
    xs = sorted({str(r.get("hash")) for r in grp.records}, key=_hash_order) if by_hash else \
        sorted({r["threads"] for r in grp.records})
    series: dict[str, list[dict[str, Any]]] = {}
    for rec in grp.records:
        key = (f"{rec['threads']} threads x {rec.get('futexes')} futexes, {rec.get('call')}" if by_hash
               else f"hash {rec.get('hash')}, {rec.get('call')}")
        series.setdefault(key, []).append(rec)
    for i, (name, recs) in enumerate(series.items()):
        pts = sorted(((xs.index(str(r.get("hash")) if by_hash else r["threads"]), r) for r in recs),
                     key=lambda p: p[0])
        med = [p[1].get("median") for p in pts]
        err = [[m - p[1].get("min", m) for m, p in zip(med, pts)], [p[1].get("max", m) - m for m, p in zip(med, pts)]]
        ax.errorbar([p[0] for p in pts], med, yerr=err, label=name, capsize=3, **_series_style(i))
    ax.set_xticks(range(len(xs)) if by_hash else xs)
    ax.set_xticklabels([str(x) for x in xs])
    ax.set_xlabel("private futex hash (slots; default: the kernel's choice)" if by_hash else "threads")
    ax.set_ylabel(FUTEX_METRICS.get(metric, metric) + " (median)")
    ax.yaxis.set_major_formatter(si_formatter)
    ax.set_ylim(bottom=0)
    _legend(ax, len(series), title="")
    save_figure(fig, path)


def section_futex(grp: Group, directory: Path, written: list[Path]) -> list[str]:
    metric = str(grp.records[0].get("metric"))
    lines = [f"## {grp.workload} \u2014 the kernel's futexes", "",
             f"perf bench futex's experiment (bench/futex.c): {FUTEX_METRICS.get(metric, metric)}, the median of "
             "the rounds with their range, each round in a process of its own. **hash**: the process's private "
             "futex hash (default: the kernel's choice, its slots in brackets; global: the system's table); "
             "**call**: futex, the classic call; futex2, futex_wait/futex_wake on the same words; futex2-numa, "
             "FUTEX2_NUMA futexes, which live in their node's part of the global table whatever the private "
             "hash.", ""]
    path = directory / f"{slug(grp.workload)}_{slug(grp.topology)}.png"
    plot_futex(grp, path, metric)
    written.append(path)
    _image(lines, f"{grp.workload}: {FUTEX_METRICS.get(metric, metric)}", path.name)
    hashes = sorted({str(r.get("hash")) for r in grp.records}, key=_hash_order)
    rows: dict[tuple[Any, ...], list[str]] = {}
    for rec in sorted(grp.records, key=lambda r: (r["threads"], r.get("futexes") or 0, str(r.get("call")))):
        key = (rec["threads"], rec.get("futexes"), rec.get("call"))
        row = rows.setdefault(key, [fmt_generic(rec["threads"]), fmt_generic(rec.get("futexes")),
                                    str(rec.get("call"))] + [DASH] * len(hashes))
        row[3 + hashes.index(str(rec.get("hash")))] = _spread(rec)
        if str(rec.get("hash")) == "default" and _is_number(rec.get("slots")) and rec["slots"] > 0:
            row[3 + hashes.index("default")] += f" [{rec['slots']}]"
    lines += md_table(["threads", "futexes", "call"] + [f"hash {h}" for h in hashes], list(rows.values()), keep=3)
    lines.append("")
    return lines


def section_generic(grp: Group) -> list[str]:
    lines = [f"## {grp.workload} \u2014 topology `{grp.topology}`", "",
             "A workload this report has no plots for; all fields as recorded.", ""]
    headers: list[str] = []
    for rec in grp.records:
        for key in rec:
            if key not in headers and key not in ("workload", "topology", "_file", "_command", "_started"):
                headers.append(key)
    if len(grp.files) > 1:
        headers.append("_file")
    rows = [[fmt_generic(rec.get(h)) for h in headers] for rec in grp.records]
    lines += md_table(["file" if h == "_file" else h for h in headers], rows)
    lines.append("")
    return lines


def relative_command(command: Any, directory: Path) -> str:
    """A recorded command with the output folder's path taken off its files
    (`make run` builds the folder under another name and renames it)."""
    text = str(command)
    for prefix in {str(directory).rstrip("/") + "/", os.path.abspath(directory) + "/"}:
        text = re.sub(r"(?<=[\s=])" + re.escape(prefix), "", text)
    return text


def section_meta(runs: list[Run], directory: Path) -> list[str]:
    def distinct(key: str) -> str:
        vals = list(dict.fromkeys(fmt_generic(r.meta.get(key)) for r in runs))
        return ", ".join(vals) if vals else DASH

    starts = sorted(str(r.meta["started_utc"]) for r in runs if r.meta.get("started_utc"))
    when = DASH if not starts else (starts[0] if starts[0] == starts[-1] else f"{starts[0]} to {starts[-1]}")
    lines = ["## Runs", ""]
    lines += md_table(["what", "value"], keep=2, rows=[
        ["host", distinct("host")],
        ["online CPUs", distinct("online_cpus")],
        ["real NUMA nodes", distinct("real_nodes")],
        ["started (UTC)", when],
        ["tool", ", ".join(dict.fromkeys(
            f"{r.meta.get('tool') or 'numalock'} {r.meta.get('version') or ''}".strip() for r in runs))],
        ["files", str(len(runs))],
    ])
    lines.append("")
    rows = []
    for run in runs:
        params = run.meta.get("params")
        if isinstance(params, dict) and params:
            ptext = ", ".join(f"{k}={v if isinstance(v, (int, float, str)) else json.dumps(v)}"
                              for k, v in params.items())
        else:
            ptext = DASH
        workloads = ", ".join(dict.fromkeys(r["workload"] for r in run.records)) or \
            fmt_generic(run.meta.get("workload"))
        rows.append([run.path.name, workloads, fmt_generic(run.meta.get("started_utc")),
                     str(len(run.records)), ptext])
    lines += md_table(["file", "workload", "started (UTC)", "records", "parameters"], rows, keep=5)
    lines += ["", "Commands as run, their files named relative to this folder:", "", "```sh"]
    for run in runs:
        command = run.meta.get("command")
        lines.append(relative_command(command, directory) if command
                     else f"# {run.path.name}: command not recorded")
    lines += ["```", ""]
    return lines


_MD_LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)")


def section_java(java_md: Path) -> list[str]:
    try:
        text = java_md.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return ["## Java (virtual threads)", "",
                f"See [java/java.md](java/java.md) (it could not be included: {exc}).", ""]

    def relink(match: re.Match[str]) -> str:
        target = match.group(2)
        if re.match(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|/|#)", target):
            return match.group(0)
        return match.group(1) + "java/" + target

    lines = ["## Java (virtual threads)", "",
             "Included from [java/java.md](java/java.md).", ""]
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            lines.append(line)
            continue
        if in_fence:
            lines.append(line)
            continue
        if line.startswith("#"):
            line = "##" + line  # keep the included headings below this section's
        lines.append(_MD_LINK.sub(relink, line))
    lines.append("")
    return lines


def build_report(directory: Path, title: str) -> tuple[Path, list[Path]]:
    runs = load_dir(directory)
    groups = group_runs(runs)
    written: list[Path] = []
    lines = [f"# {title}", ""]
    lines += section_meta(runs, directory)
    lines += ["## How to read this", "", HOW_TO_READ, ""]
    locks_md = directory / "locks.md"  # `numalock list --markdown`, written by `numalock report`
    if locks_md.is_file():
        lines += ["## The locks", "", "The registered locks (`numalock list --markdown`): sizes, properties and "
                  "papers; docs/ALGORITHMS.md has each one's invariants and deviations.", "",
                  locks_md.read_text().rstrip("\n"), ""]
    for grp in groups:
        if grp.workload == "delegation":
            lines += section_delegation(grp, directory, written)
        elif grp.workload in THROUGHPUT_WORKLOADS:
            lines += section_throughput(grp, directory, written)
        elif grp.workload == LATENCY_WORKLOAD:
            lines += section_latency(grp, directory, written)
        elif grp.workload == INSTRUCTIONS_WORKLOAD:
            lines += section_instructions(grp)
        elif grp.workload == FOOTPRINT_WORKLOAD:
            lines += section_footprint(grp, directory, written)
        elif grp.workload == C2C_WORKLOAD:
            lines += section_c2c(grp, directory, written)
        elif grp.workload == COMPARE_WORKLOAD:
            lines += section_compare(grp, directory, written)
        elif grp.workload in FUTEX_WORKLOADS:
            lines += section_futex(grp, directory, written)
        else:
            lines += section_generic(grp)
    java_md = directory / "java" / "java.md"
    if java_md.is_file():
        lines += section_java(java_md)
    report = directory / "report.md"
    text = "\n".join(lines).rstrip("\n") + "\n"
    atomic_write(report, lambda fh: fh.write(text), binary=False)
    return report, written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Write PNG plots and report.md from numalock bench JSON files in DIR.")
    parser.add_argument("dir", metavar="DIR", help="directory holding the *.json files; outputs go here too")
    parser.add_argument("--title", default="numalock benchmark report", help="title of report.md")
    args = parser.parse_args(argv)
    directory = Path(args.dir)
    try:
        report, written = build_report(directory, args.title)
    except ReportError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        target = exc.filename or args.dir
        print(f"{PROG}: cannot write into {target} ({exc.strerror or exc}).", file=sys.stderr)
        return 1
    print(f"{PROG}: wrote {report} and {len(written)} plot(s).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
