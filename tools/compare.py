#!/usr/bin/env python3
"""`numalock compare`: an unmodified program under glibc and under numalock's locks.

Started by the numalock command (tools/numalock.c), which passes, as the first
argument, a JSON object with what only it knows: the preload library's path,
every registered lock with the reason it cannot replace a pthread mutex (null
when it can), the command's own path and version, and the command line. The
other arguments are the user's (see HELP).

Exit status: 0 when every run succeeded, 1 when a run failed (the failures
are named, everything else is reported and written), 2 on bad input (one
sentence on stderr, nothing run or written), 130 when interrupted (the
running program is killed, nothing written).
"""

from __future__ import annotations

import json
import math
import os
import platform
import re
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROG = "numalock compare"
GLIBC = "glibc"
# glibc's profiled run: glibc's own mutex under the interposer, which counts
# contended acquisitions like every other lock (the timing runs of glibc have
# no preload library at all)
GLIBC_PROFILE_LOCK = "pthread"
DEFAULT_RUNS = 5
MAX_RUNS = 1000
MAX_THREADS = 4096
THREADS_FIELD = "{threads}"
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
PROFILE_KEYS = ("acquisitions", "contended", "handovers", "remote_handovers")
# the preload library's variables of its statistics: never set in a timing
# run, whatever the caller's environment holds
STATS_ENV = ("NUMALOCK_STATS", "NUMALOCK_STATS_FILE", "NUMALOCK_STATS_FORMAT", "NUMALOCK_STATS_TOP",
             "NUMALOCK_STATS_STACKS")
# the requests to stop that kill the running program (on_signal)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

HELP = """\
usage: numalock compare --lock LIST [--runs N] [--metric REGEX [--lower-better]]
                        [--threads-env VAR=LIST | --threads LIST] [--same-output]
                        [--timeout S] [--no-profile] [--json FILE] [--plot FILE.png]
                        [--label NAME] [--package TEXT] -- PROGRAM [ARGS...]

Runs PROGRAM under glibc (no preload library) and under each lock of LIST
(through libnumalock-preload.so, as `numalock run --lock NAME` does), in
interleaved rounds: round r runs every lock once, in an order rotated by r,
so a slow spell of the machine falls on every lock alike.

  --lock LIST        locks, comma-separated: glibc and the locks that can
                     replace a pthread mutex (`numalock run` names them);
                     `all` is glibc and every one of them but pthread (glibc's
                     own mutex under the interposer: name it to measure the
                     interposer's cost). glibc is always measured, as the
                     baseline, even when LIST leaves it out.
  --runs N           timing runs per lock (default 5)
  --metric REGEX     the figure is the number the program prints: REGEX has
                     exactly one capture group around it and is searched in
                     stdout and stderr (the last match counts; commas in the
                     number are ignored). Higher is better unless
                     --lower-better. Without --metric the figure is the wall
                     time (lower is better).
  --threads-env VAR=LIST
                     repeat the whole comparison for each value of LIST
                     (e.g. THREADS=1,2,4), with VAR set to it in the program's
                     environment and {threads} in ARGS replaced by it
  --threads LIST     the same, with {threads} in ARGS only (-t={threads})
  --same-output      every run's stdout must equal the first run's (glibc's
                     in round 1) for the same thread value; with --metric the
                     metric's matches are removed from stdout first
  --timeout S        a run still going after S seconds is killed and fails
  --no-profile       skip the profiled runs (contended and remote shares)
  --json FILE        every run and the summaries, as JSON (report.py reads it)
  --plot FILE.png    each lock's figure relative to glibc's (against threads
                     with --threads-env/--threads); needs matplotlib
  --label NAME       the comparison's name in the JSON and the plot
  --package TEXT     what provides PROGRAM (e.g. "the Debian package pigz"),
                     named when PROGRAM is missing

PROGRAM is a path, a name in PATH, or a program installed beside the numalock
command. Every run's exit status is checked; a run fails when it is not 0,
when the program is killed, when the metric is missing, or when --same-output
finds another stdout. A lock whose run failed is named with the reason and
not run again for that thread value; the other locks are still reported, and
the command exits 1. Timing runs have the preload's statistics off. After the
rounds, one more run per lock (glibc's under the interposer with pthread, its
own mutex) keeps a lock profile (NUMALOCK_STATS=1, NUMALOCK_STATS_FORMAT=json)
for the contended share (contended acquisitions / acquisitions) and the remote
share (hand-overs to another NUMA node / hand-overs); a preload library that
writes no JSON profile leaves them unknown.

For each lock: the median of its runs, their range (min-max), the ratio to
glibc's median (above 1: better than glibc, for times and throughputs alike)
and the median CPU time (user+sys of the program and its children).
Recommendation rule: the lock with the best median is recommended when its
whole range is better than glibc's whole range (its worst run beats glibc's
best run); when the ranges overlap the difference is inside the noise and
glibc is kept. One run per lock gives no recommendation; use 3 runs or more
for the ranges to mean anything.

Exit status: 0 all runs succeeded; 1 a run failed; 2 bad input (nothing run);
130 interrupted (the running program is killed, no file is written).
"""


class BadInput(Exception):
    """One sentence on stderr, status 2, nothing run or written."""


class Interrupted(Exception):
    pass


# --------------------------------------------------------------------------
# options
# --------------------------------------------------------------------------

VALUE_OPTS = ("--lock", "--runs", "--metric", "--threads-env", "--threads", "--timeout", "--json", "--plot",
              "--label", "--package")
FLAG_OPTS = ("--lower-better", "--same-output", "--no-profile")


@dataclass
class Options:
    locks: list[str]
    runs: int
    metric: re.Pattern[str] | None
    metric_text: str | None
    lower_better: bool
    threads_var: str | None
    threads: list[int | None]
    same_output: bool
    timeout: float | None
    profile: bool
    json_path: Path | None
    plot_path: Path | None
    label: str
    program: str
    program_path: str
    args: list[str]


def split_args(argv: list[str]) -> tuple[dict[str, Any], list[str]]:
    """Options up to '--' or the first word that is no option; the program after."""
    given: dict[str, Any] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return given, argv[i + 1:]
        if not arg.startswith("-") or arg == "-":
            return given, argv[i:]
        name, eq, value = arg.partition("=")
        if name in ("-h", "--help"):
            given["--help"] = True
        elif name in FLAG_OPTS and not eq:
            given[name] = True
        elif name in VALUE_OPTS:
            if not eq:
                if i + 1 >= len(argv):
                    raise BadInput(f"option {name} needs a value")
                i += 1
                value = argv[i]
            if name in given:
                raise BadInput(f"option {name} is given twice")
            given[name] = value
        else:
            raise BadInput(f"unknown option '{arg}': the options are {', '.join(VALUE_OPTS + FLAG_OPTS)} "
                           f"(see numalock compare --help)")
        i += 1
    return given, []


def parse_count_list(text: str, what: str) -> list[int]:
    values: list[int] = []
    for item in text.split(","):
        if not re.fullmatch(r"[0-9]+", item) or not 1 <= int(item) <= MAX_THREADS:
            raise BadInput(f"bad {what} '{text}': give whole numbers from 1 to {MAX_THREADS}, "
                           f"comma-separated, e.g. 1,2,4")
        if int(item) not in values:
            values.append(int(item))
    return values


def valid_lock_names(ctx: dict[str, Any]) -> list[str]:
    return [GLIBC] + [name for name, why in ctx["locks"].items() if why is None]


def parse_locks(text: str, ctx: dict[str, Any]) -> list[str]:
    valid = valid_lock_names(ctx)
    valid_text = ", ".join(["all"] + valid)
    chosen: list[str] = []
    for name in text.split(","):
        if not name:
            raise BadInput(f"bad lock list '{text}': an empty name; valid locks are {valid_text}")
        if name == "all":
            names = [n for n in valid if n != GLIBC_PROFILE_LOCK]
        elif name in valid:
            names = [name]
        elif name in ctx["locks"]:
            raise BadInput(f"lock '{name}' cannot replace pthread mutexes: {ctx['locks'][name]}; "
                           f"valid locks are {valid_text}")
        else:
            raise BadInput(f"unknown lock '{name}': valid locks are {valid_text}")
        chosen += [n for n in names if n not in chosen]
    if GLIBC in chosen:
        chosen.remove(GLIBC)
    return [GLIBC] + chosen


def find_program(name: str, ctx: dict[str, Any], package: str | None) -> str:
    hint = f": it comes with {package}" if package else ""
    if "/" in name:
        if os.path.isfile(name) and os.access(name, os.X_OK):
            return name
        why = "is not an executable file" if os.path.exists(name) else "does not exist"
        raise BadInput(f"program '{name}' {why}{hint}")
    found = shutil.which(name)
    if found:
        return found
    bindir = os.path.dirname(ctx.get("numalock") or "")
    beside = os.path.join(bindir, name)
    if bindir and os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    raise BadInput(f"program '{name}' not found in PATH nor beside the numalock command{hint}")


def check_output_path(text: str, option: str, suffix: str | None) -> Path:
    path = Path(text)
    if suffix and path.suffix.lower() != suffix:
        raise BadInput(f"bad {option} '{text}': the file name must end in {suffix}")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise BadInput(f"bad {option} '{text}': the folder '{folder}' does not exist")
    if not os.access(folder, os.W_OK):
        raise BadInput(f"bad {option} '{text}': the folder '{folder}' is not writable")
    if path.is_dir():
        raise BadInput(f"bad {option} '{text}': it is a folder")
    return path


def parse_options(argv: list[str], ctx: dict[str, Any]) -> Options | None:
    given, command = split_args(argv)
    if given.get("--help"):
        return None
    if "--lock" not in given:
        raise BadInput(f"no --lock given: name the locks to compare, e.g. --lock glibc,hbo "
                       f"(valid locks are {', '.join(['all'] + valid_lock_names(ctx))})")
    locks = parse_locks(given["--lock"], ctx)

    runs_text = given.get("--runs", str(DEFAULT_RUNS))
    if not re.fullmatch(r"[0-9]+", runs_text) or not 1 <= int(runs_text) <= MAX_RUNS:
        raise BadInput(f"bad --runs '{runs_text}': give a whole number of runs from 1 to {MAX_RUNS}")

    metric = None
    metric_text = given.get("--metric")
    if metric_text is not None:
        try:
            metric = re.compile(metric_text)
        except re.error as exc:
            raise BadInput(f"bad --metric regex '{metric_text}': {exc}") from None
        if metric.groups != 1:
            raise BadInput(f"the --metric regex '{metric_text}' has {metric.groups} capture groups: it needs "
                           f"exactly one, around the number, e.g. 'ops/sec = ([0-9.]+)'")
    if given.get("--lower-better") and metric is None:
        raise BadInput("--lower-better needs --metric: the wall time is always lower-better")

    if "--threads-env" in given and "--threads" in given:
        raise BadInput("give --threads-env VAR=LIST or --threads LIST, not both")
    threads_var = None
    threads: list[int | None] = [None]
    if "--threads-env" in given:
        text = given["--threads-env"]
        var, eq, values = text.partition("=")
        if not eq or not ENV_NAME.match(var) or not values:
            raise BadInput(f"bad --threads-env '{text}': give VAR=LIST, an environment variable's name and "
                           f"whole numbers, e.g. THREADS=1,2,4")
        threads_var = var
        threads = list(parse_count_list(values, "--threads-env list"))
    elif "--threads" in given:
        threads = list(parse_count_list(given["--threads"], "--threads"))

    timeout = None
    if "--timeout" in given:
        try:
            timeout = float(given["--timeout"])
        except ValueError:
            timeout = -1.0
        if not (math.isfinite(timeout) and timeout > 0):
            raise BadInput(f"bad --timeout '{given['--timeout']}': give the seconds a run may take, above 0")

    if not command:
        raise BadInput("no program given: put it after '--', e.g. numalock compare --lock glibc,hbo -- ./prog")
    uses_field = any(THREADS_FIELD in a for a in command[1:])
    if uses_field and threads == [None]:
        raise BadInput(f"the program's arguments use {THREADS_FIELD} but no --threads or --threads-env gives "
                       f"its values")
    if "--threads" in given and not uses_field:
        raise BadInput(f"--threads needs {THREADS_FIELD} in the program's arguments (or use --threads-env "
                       f"VAR=LIST for a program that reads a variable)")

    json_path = check_output_path(given["--json"], "--json", None) if "--json" in given else None
    plot_path = check_output_path(given["--plot"], "--plot", ".png") if "--plot" in given else None
    if plot_path is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise BadInput(f"--plot needs matplotlib, which {sys.executable} lacks: run `make venv`, or set "
                           f"NUMALOCK_PYTHON to a python3 that has it") from None

    program_path = find_program(command[0], ctx, given.get("--package"))
    if (len(locks) > 1 or not given.get("--no-profile")) and not ctx.get("preload"):
        raise BadInput(f"cannot find the preload library '{ctx.get('preload_looked', '?')}': build or "
                       f"install it with the command")
    label = given.get("--label") or " ".join([os.path.basename(command[0])] + command[1:])
    return Options(locks=locks, runs=int(runs_text), metric=metric, metric_text=metric_text,
                   lower_better=bool(given.get("--lower-better")), threads_var=threads_var, threads=threads,
                   same_output=bool(given.get("--same-output")), timeout=timeout,
                   profile=not given.get("--no-profile"), json_path=json_path, plot_path=plot_path,
                   label=label, program=command[0], program_path=program_path, args=command[1:])


# --------------------------------------------------------------------------
# running the program
# --------------------------------------------------------------------------

@dataclass
class RunResult:
    lock: str
    threads: int | None
    round: int  # 0-based; -1 for the profiled run
    position: int
    wall_s: float
    user_s: float
    sys_s: float
    exit: int | None
    signal: int | None
    value: float | None = None
    failure: str | None = None
    stdout: bytes = b""

    def record(self) -> dict[str, Any]:
        return {"round": self.round + 1 if self.round >= 0 else None, "position": self.position,
                "value": self.value, "wall_s": self.wall_s, "cpu_s": self.user_s + self.sys_s,
                "user_s": self.user_s, "sys_s": self.sys_s, "exit": self.exit, "signal": self.signal,
                "status": "ok" if self.failure is None else self.failure}


class Runner:
    """Starts one program at a time in its own process group, so that an
    interrupt can kill it with everything it started."""

    def __init__(self, opts: Options, ctx: dict[str, Any], tmp: Path):
        self.opts = opts
        self.ctx = ctx
        self.tmp = tmp
        self.child: int | None = None
        base = dict(os.environ)
        for key in STATS_ENV:
            base.pop(key, None)
        self.base_env = base

    def environment(self, lock: str, threads: int | None, stats_file: Path | None) -> dict[str, str]:
        env = dict(self.base_env)
        if self.opts.threads_var and threads is not None:
            env[self.opts.threads_var] = str(threads)
        name = GLIBC_PROFILE_LOCK if lock == GLIBC and stats_file else lock
        if name != GLIBC:
            old = env.get("LD_PRELOAD")
            env["LD_PRELOAD"] = self.ctx["preload"] + (":" + old if old else "")
            env["NUMALOCK_LOCK"] = name
        if stats_file:
            env["NUMALOCK_STATS"] = "1"
            env["NUMALOCK_STATS_FORMAT"] = "json"
            env["NUMALOCK_STATS_FILE"] = str(stats_file)
        return env

    def argv(self, threads: int | None) -> list[str]:
        args = self.opts.args
        if threads is not None:
            args = [a.replace(THREADS_FIELD, str(threads)) for a in args]
        return [self.opts.program] + args

    def run(self, lock: str, threads: int | None, rnd: int, position: int,
            stats_file: Path | None = None) -> RunResult:
        out_path, err_path = self.tmp / "stdout", self.tmp / "stderr"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                       (os.POSIX_SPAWN_DUP2, out.fileno(), 1), (os.POSIX_SPAWN_DUP2, err.fileno(), 2)]
            env = self.environment(lock, threads, stats_file)
            timer = None
            timed_out = threading.Event()
            # the stop signals wait until the child is recorded, so that an
            # interrupt always finds the program it must kill; the child
            # starts with none of them blocked
            signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
            try:
                start = time.perf_counter()
                pid = os.posix_spawn(self.opts.program_path, self.argv(threads), env, file_actions=actions,
                                     setpgroup=0, setsigmask=())
                self.child = pid
            except OSError as exc:
                return RunResult(lock=lock, threads=threads, round=rnd, position=position, wall_s=0.0,
                                 user_s=0.0, sys_s=0.0, exit=None, signal=None,
                                 failure=f"cannot start: {exc.strerror or exc}")
            finally:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
            if self.opts.timeout:
                def expire() -> None:
                    timed_out.set()
                    self.kill()
                timer = threading.Timer(self.opts.timeout, expire)
                timer.daemon = True
                timer.start()
            try:
                _, status, usage = os.wait4(pid, 0)
            finally:
                if timer:
                    timer.cancel()
            wall = time.perf_counter() - start
            self.child = None
        stdout = out_path.read_bytes()
        stderr = err_path.read_bytes()
        res = RunResult(lock=lock, threads=threads, round=rnd, position=position, wall_s=wall,
                        user_s=usage.ru_utime, sys_s=usage.ru_stime,
                        exit=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                        signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None, stdout=stdout)
        if timed_out.is_set():
            res.failure = f"timed out after {self.opts.timeout:g} s"
        elif res.signal is not None:
            res.failure = f"killed by signal {res.signal} ({signal_name(res.signal)})"
        elif res.exit != 0:
            res.failure = f"exit status {res.exit}"
        elif self.opts.metric is not None and stats_file is None:
            res.value, res.failure = find_metric(self.opts.metric, stdout, stderr)
        else:
            res.value = wall if self.opts.metric is None else None
        return res

    def kill(self) -> None:
        pid = self.child
        if pid is not None:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def reap(self) -> None:
        """After an interrupt: the running program killed and waited for."""
        pid = self.child
        if pid is None:
            return
        self.kill()
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        self.child = None


def signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return "unknown"


def text_of(data: bytes) -> str:
    return data.decode("utf-8", errors="surrogateescape")


def find_metric(pattern: re.Pattern[str], stdout: bytes, stderr: bytes) -> tuple[float | None, str | None]:
    matches = list(pattern.finditer(text_of(stdout) + "\n" + text_of(stderr)))
    if not matches:
        return None, "metric not found"
    raw = matches[-1].group(1)
    if raw is None:
        return None, "metric not found (its group matched nothing)"
    try:
        value = float(raw.replace(",", ""))
    except ValueError:
        return None, f"metric '{raw[:40]}' is not a number"
    if not math.isfinite(value):
        return None, f"metric '{raw[:40]}' is not a finite number"
    return value, None


def comparable_stdout(data: bytes, opts: Options) -> bytes:
    if opts.metric is None:
        return data
    return opts.metric.sub("", text_of(data)).encode("utf-8", errors="surrogateescape")


def parse_profile(path: Path) -> tuple[dict[str, int] | None, str | None]:
    """The preload's JSON profile, one object per process per line, summed;
    or None and why it is unknown."""
    unwritten = "no profile written (the program took no pthread lock, or exited without exit handlers)"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None, unwritten
    except OSError as exc:
        return None, f"no profile ({exc.strerror or exc})"
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return None, unwritten
    sums = dict.fromkeys(PROFILE_KEYS, 0)
    for line in lines:
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            return None, "the profile is not JSON (this preload library lacks NUMALOCK_STATS_FORMAT=json)"
        if not isinstance(obj, dict):
            return None, "the profile is not one JSON object per line"
        for key in PROFILE_KEYS:
            value = obj.get(key, 0)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                return None, f"the profile's \"{key}\" is not a number"
            sums[key] += int(value)
    return sums, None


def share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


# --------------------------------------------------------------------------
# summaries
# --------------------------------------------------------------------------

@dataclass
class Summary:
    lock: str
    threads: int | None
    runs: list[RunResult] = field(default_factory=list)
    profile_run: RunResult | None = None
    profile: dict[str, int] | None = None
    profile_note: str | None = None
    failure: str | None = None
    median: float | None = None
    lo: float | None = None
    hi: float | None = None
    cpu_median: float | None = None
    ratio: float | None = None
    ratio_lo: float | None = None
    ratio_hi: float | None = None

    def finish(self) -> None:
        values = [r.value for r in self.runs if r.failure is None and r.value is not None]
        if self.failure is None and values:
            self.median = statistics.median(values)
            self.lo, self.hi = min(values), max(values)
            self.cpu_median = statistics.median(r.user_s + r.sys_s for r in self.runs)


def speedup(value: float | None, base: float | None, higher_better: bool) -> float | None:
    """Above 1: better than the baseline, whichever way the figure points."""
    if value is None or base is None or value <= 0 or base <= 0:
        return None
    return value / base if higher_better else base / value


def recommend(summaries: list[Summary], higher_better: bool, runs: int) -> dict[str, Any]:
    glibc = summaries[0]
    others = [s for s in summaries[1:] if s.median is not None]
    note = " (2 runs: the ranges say little about the noise)" if runs < 3 else ""
    if glibc.median is None:
        return {"verdict": "none", "best": None, "ratio": None,
                "text": f"no recommendation: glibc's runs failed ({glibc.failure})"}
    if not others:
        return {"verdict": "none", "best": None, "ratio": None,
                "text": "no recommendation: no other lock finished its runs"}
    if runs < 2:
        return {"verdict": "none", "best": None, "ratio": None,
                "text": "no recommendation: one run per lock has no spread to tell a difference from the noise"}
    best = max(others, key=lambda s: s.median if higher_better else -s.median)
    better = best.median > glibc.median if higher_better else best.median < glibc.median
    clear = best.lo > glibc.hi if higher_better else best.hi < glibc.lo
    worse_clear = best.hi < glibc.lo if higher_better else best.lo > glibc.hi
    ratio = best.ratio
    # a ratio needs medians above 0 (a figure of 0 has none)
    times = "an unknown multiple of" if ratio is None else f"{ratio:.2f}x"
    if better and clear:
        return {"verdict": "better", "best": best.lock, "ratio": ratio,
                "text": f"use {best.lock}: {times} glibc's median, and its worst run beat glibc's best{note}"}
    if worse_clear:
        return {"verdict": "worse", "best": best.lock, "ratio": ratio,
                "text": f"keep glibc: every lock is worse; the best, {best.lock}, reached {times} glibc's "
                        f"median and its best run fell short of glibc's worst{note}"}
    return {"verdict": "noise", "best": best.lock, "ratio": ratio,
            "text": f"keep glibc: the differences are inside the noise; the best, {best.lock} at {times} "
                    f"glibc's median, has a range that overlaps glibc's{note}"}


def fmt_num(value: float | None) -> str:
    if value is None:
        return "-"
    if value == 0:
        return "0"
    mag = abs(value)
    if mag >= 1e5:
        return f"{value:,.0f}"
    digits = max(0, 3 - int(math.floor(math.log10(mag))))
    return f"{value:.{digits}f}"


def fmt_share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def table(summaries: list[Summary], unit: str) -> list[str]:
    rows = [["lock", f"median{unit}", "min-max", "x glibc", "cpu (s)", "contended", "remote", "status"]]
    for s in summaries:
        prof = s.profile
        rows.append([s.lock, fmt_num(s.median),
                     "-" if s.lo is None else f"{fmt_num(s.lo)}-{fmt_num(s.hi)}",
                     "-" if s.ratio is None else f"{s.ratio:.2f}", fmt_num(s.cpu_median),
                     fmt_share(share(prof["contended"], prof["acquisitions"])) if prof else "?",
                     fmt_share(share(prof["remote_handovers"], prof["handovers"])) if prof else "?",
                     "ok" if s.failure is None else f"FAILED: {s.failure}"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return ["  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
            + "  " + r[-1] for r in rows]


# --------------------------------------------------------------------------
# output files
# --------------------------------------------------------------------------

def report_module() -> Any:
    """tools/report.py, installed beside this script: its atomic writes and plots."""
    here = os.path.dirname(os.path.realpath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import report
    return report


def real_nodes() -> int:
    try:
        return sum(1 for n in os.listdir("/sys/devices/system/node") if re.fullmatch(r"node[0-9]+", n))
    except OSError:
        return 0


def cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def build_doc(opts: Options, ctx: dict[str, Any], started: str, elapsed: float,
              results: dict[int | None, list[Summary]], advice: dict[int | None, dict[str, Any]],
              runner: Runner) -> dict[str, Any]:
    higher = opts.metric is not None and not opts.lower_better
    records = []
    for threads, summaries in results.items():
        for s in summaries:
            prof = s.profile
            rec: dict[str, Any] = {
                "workload": "compare", "label": opts.label, "lock": s.lock, "threads": threads,
                "threads_env": opts.threads_var,
                "metric": opts.metric_text if opts.metric else "wall_s", "higher_better": higher,
                "status": "ok" if s.failure is None else "failed", "failure": s.failure,
                "median": s.median, "min": s.lo, "max": s.hi, "cpu_median_s": s.cpu_median,
                "ratio_to_glibc": s.ratio, "ratio_min": s.ratio_lo, "ratio_max": s.ratio_hi,
                "runs": [r.record() for r in s.runs],
                "profile_run": s.profile_run.record() if s.profile_run else None,
                "profile_note": s.profile_note,
                "contended_share": share(prof["contended"], prof["acquisitions"]) if prof else None,
                "remote_share": share(prof["remote_handovers"], prof["handovers"]) if prof else None,
                "recommendation": advice[threads]["text"],
                "argv": runner.argv(threads),
            }
            for key in PROFILE_KEYS:
                rec[key] = prof[key] if prof else None
            records.append(rec)
    meta = {"tool": "numalock compare", "version": ctx.get("version"), "command": ctx.get("command"),
            "started_utc": started, "elapsed_s": round(elapsed, 3), "host": platform.node(),
            "online_cpus": os.cpu_count(), "real_nodes": real_nodes(), "kernel": platform.release(),
            "cpu_model": cpu_model(), "workload": "compare",
            "params": {"label": opts.label, "program": opts.program, "args": opts.args,
                       "locks": ",".join(opts.locks), "runs": opts.runs,
                       "metric": opts.metric_text if opts.metric else "wall_s", "higher_better": higher,
                       "threads_env": opts.threads_var,
                       "threads": ",".join(str(t) for t in opts.threads if t is not None) or None,
                       "same_output": opts.same_output, "timeout_s": opts.timeout, "profile": opts.profile}}
    summary = [dict(a, threads=t) for t, a in advice.items()]
    return {"meta": meta, "records": records, "summary": summary}


def write_outputs(opts: Options, doc: dict[str, Any]) -> None:
    """The plot and the JSON go to temporary files beside their targets and
    are renamed only when both are complete: an interrupt or an error leaves
    neither a half-written file nor one of the two."""
    report = report_module()
    pending: list[tuple[Path, Path]] = []
    try:
        if opts.plot_path:
            tmp = opts.plot_path.with_name(f".{opts.plot_path.name}.{os.getpid()}.tmp.png")
            pending.append((tmp, opts.plot_path))
            report.plot_compare(doc["records"], tmp, opts.label)
        if opts.json_path:
            tmp = opts.json_path.with_name(f".{opts.json_path.name}.{os.getpid()}.tmp")
            pending.append((tmp, opts.json_path))
            text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
            report.atomic_write(tmp, lambda fh: fh.write(text), binary=False)
        for tmp, final in pending:
            os.replace(tmp, final)
    except BaseException:
        for tmp, _ in pending:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        raise


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

class Progress:
    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.shown = False

    def show(self, text: str, every_run: bool) -> None:
        if self.tty:
            sys.stderr.write("\r\033[K" + text)
            self.shown = True
        elif not every_run:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def clear(self) -> None:
        if self.tty and self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self.shown = False


_interrupted = False


def on_signal(signum: int, _frame: Any) -> None:
    """The first request to stop raises Interrupted; later ones (a terminal's
    Ctrl-C reaches this process and `numalock report` forwards it too) must
    not break the cleanup that the first one started."""
    global _interrupted
    if not _interrupted:
        _interrupted = True
        raise Interrupted()


def compare(opts: Options, ctx: dict[str, Any]) -> int:
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t0 = time.monotonic()
    higher = opts.metric is not None and not opts.lower_better
    unit = "" if opts.metric else " (s)"
    what = (f"metric '{opts.metric_text}' ({'higher' if higher else 'lower'} is better)" if opts.metric
            else "wall time in seconds (lower is better)")
    progress = Progress()
    results: dict[int | None, list[Summary]] = {}
    advice: dict[int | None, dict[str, Any]] = {}
    failed = False
    tmp = Path(tempfile.mkdtemp(prefix="numalock-compare."))
    runner = Runner(opts, ctx, tmp)
    try:
        print(f"numalock compare: {opts.label}: {what}; {opts.runs} run{'s' if opts.runs > 1 else ''} per lock "
              f"in interleaved rounds; x glibc above 1 is better than glibc", flush=True)
        nlocks = len(opts.locks)
        for threads in opts.threads:
            summaries = [Summary(lock, threads) for lock in opts.locks]
            by_lock = {s.lock: s for s in summaries}
            reference: bytes | None = None
            tlabel = "" if threads is None else f", threads {threads}"
            for rnd in range(opts.runs):
                order = opts.locks[rnd % nlocks:] + opts.locks[:rnd % nlocks]
                progress.show(f"compare: round {rnd + 1}/{opts.runs}{tlabel} ...", every_run=False)
                for pos, lock in enumerate(order):
                    s = by_lock[lock]
                    if s.failure:
                        continue
                    progress.show(f"compare: round {rnd + 1}/{opts.runs}, lock {lock}{tlabel} ...", every_run=True)
                    res = runner.run(lock, threads, rnd, pos)
                    if res.failure is None and opts.same_output:
                        out = comparable_stdout(res.stdout, opts)
                        if reference is None:
                            reference = out
                        elif out != reference:
                            res.failure = "stdout differs from the first run's"
                    s.runs.append(res)
                    if res.failure:
                        s.failure = f"round {rnd + 1}: {res.failure}"
                        failed = True
            if opts.profile:
                for pos, s in enumerate(summaries):
                    if s.failure:
                        continue
                    progress.show(f"compare: profiled run, lock {s.lock}{tlabel} ...", every_run=True)
                    stats = tmp / "profile.json"
                    stats.unlink(missing_ok=True)
                    res = runner.run(s.lock, threads, -1, pos, stats_file=stats)
                    s.profile_run = res
                    if res.failure:
                        s.failure = f"profiled run: {res.failure}"
                        s.profile_note = s.failure
                        failed = True
                    else:
                        s.profile, s.profile_note = parse_profile(stats)
            else:
                for s in summaries:
                    s.profile_note = "not profiled (--no-profile)"
            for s in summaries:
                s.finish()
            base = summaries[0].median
            for s in summaries:
                s.ratio = speedup(s.median, base, higher)
                worse_end, better_end = (s.lo, s.hi) if higher else (s.hi, s.lo)
                s.ratio_lo = speedup(worse_end, base, higher)
                s.ratio_hi = speedup(better_end, base, higher)
            results[threads] = summaries
            advice[threads] = recommend(summaries, higher, opts.runs)
            progress.clear()
            head = "" if threads is None else (
                f"threads {threads}" + (f" ({opts.threads_var}={threads})" if opts.threads_var else "") + ":")
            if head:
                print(head)
            for line in table(summaries, unit):
                print(line)
            notes = sorted({s.profile_note for s in summaries if s.profile is None and s.profile_note
                            and s.failure is None})
            for note in notes:
                print(f"  contended/remote unknown: {note}")
            print(f"  recommendation{'' if threads is None else f' (threads {threads})'}: {advice[threads]['text']}",
                  flush=True)
        failures = [(t, s) for t, ss in results.items() for s in ss if s.failure]
        for t, s in failures:
            where = "" if t is None else f" with {t} threads"
            print(f"numalock compare: {opts.program} failed under {s.lock}{where}: {s.failure}", file=sys.stderr)
        elapsed = time.monotonic() - t0
        if opts.json_path or opts.plot_path:
            write_outputs(opts, build_doc(opts, ctx, started, elapsed, results, advice, runner))
        return 1 if failed else 0
    except Interrupted:
        runner.reap()
        progress.clear()
        print(f"{PROG}: interrupted: the running program was killed and no file was written", file=sys.stderr)
        return 130
    finally:
        runner.reap()
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    for sig in STOP_SIGNALS:
        signal.signal(sig, on_signal)
    if len(argv) < 2:
        print(f"{PROG}: started without the numalock command's context: run it as `numalock compare`",
              file=sys.stderr)
        return 2
    try:
        ctx = json.loads(argv[1])
        if not isinstance(ctx, dict) or not isinstance(ctx.get("locks"), dict):
            raise ValueError
    except ValueError:
        print(f"{PROG}: the first argument is not the numalock command's context: run it as `numalock compare`",
              file=sys.stderr)
        return 2
    try:
        opts = parse_options(argv[2:], ctx)
        if opts is None:
            sys.stdout.write(HELP)
            return 0
        return compare(opts, ctx)
    except BadInput as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except Interrupted:
        print(f"{PROG}: interrupted: no file was written", file=sys.stderr)
        return 130
    except OSError as exc:
        print(f"{PROG}: {exc.filename or ''}{': ' if exc.filename else ''}{exc.strerror or exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
