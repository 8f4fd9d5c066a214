"""`make bench` in one sitting: issue 54's figures, each a ratio measured in the same run (a
contender against its baseline, its floor or its target), with the machine's load beside every
step — printed at the end and kept in ``benchmarks/results/bench_table.txt`` (the last table,
written after each step: a sitting stopped midway keeps what it measured; the scripts' whole
output beside it in ``bench_table.log``).

    python benchmarks/bench_table.py [--quick] [--all] [--only STEP ...] [--timeout S] [--out FILE]

The steps (`STEPS`): ``replay`` as a user calls it and preparation against the id-and-count
floor and AgentScope 2.0.11 at 16k, 32k and 200k (`replay_user_bench.py`), the what-if slider
through the widget at 500 and 5,000 requests, ahead-and-kept and cold (`whatif_slider_bench.py`),
a 5,000-request recording opened in the Lab (`lab_bench.py --open`), and ``sessions()`` on 1,000
corpus files (`sessions_bench.py`). ``--quick`` runs each at a smaller size (`QUICK`: one
repeat, 500 requests, 200 files) for a check in a few minutes; ``--all`` adds the benchmarks of
earlier issues (`EARLIER`). A step running past ``--timeout`` seconds is stopped and said: the
sitting is bounded.

A script's figures are the lines of its output that state a ratio (``÷``, ``×``, ``1.23x``,
"ratio", "target") and the rows of a table whose header does. Each step's row says the load
(1-minute average) before and after it, its wall and CPU seconds (its processes' own) and its
exit status: a script that fails is said, the others still run. Ratios are comparable within
one table, never across tables (the load differs).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent

STEPS: dict[str, list[str]] = {
    "replay-user": ["replay_user_bench.py", "--out", os.devnull],
    "whatif-slider": ["whatif_slider_bench.py", "--cold"],
    "lab-open": ["lab_bench.py", "--open", "5000"],
    "sessions": ["sessions_bench.py"],
}
"""Issue 54's steps of ``make bench``, in order: name → the script and its arguments."""

QUICK: dict[str, list[str]] = {
    "replay-user": [
        "replay_user_bench.py",
        "--out",
        os.devnull,
        "--repeat",
        "1",
        "--stitched",
        "1",
    ],
    "whatif-slider": ["whatif_slider_bench.py", "--steps", "500", "--moves", "2", "--cold"],
    "lab-open": ["lab_bench.py", "--open", "5000"],
    "sessions": ["sessions_bench.py", "--files", "200", "--repeat", "1"],
}
"""The same steps at a size that runs in minutes (``--quick``)."""

EARLIER: dict[str, list[str]] = {
    "prepare": ["prepare_bench.py", "--out", os.devnull],
    "compaction": ["compaction_bench.py", "--out", os.devnull],
    "loop": ["loop_bench.py"],
    "lab-1k": ["lab_bench.py", "--steps", "1000"],
    "lab-10k": ["lab_bench.py", "--steps", "10000"],
    "scale": ["scale_bench.py"],
}
"""The benchmarks of earlier issues (``--all``)."""

FIGURE = re.compile(r"÷|×|\b\d+(?:\.\d+)?x\b|\bratio\b|\btarget\b", re.IGNORECASE)
"""A line that states a ratio."""


@dataclass
class Step:
    """One script's run: its figures and what the machine was doing meanwhile."""

    name: str
    command: list[str]
    load_before: float = 0.0
    load_after: float = 0.0
    wall: float = 0.0
    cpu: float = 0.0
    status: int = 0
    figures: list[str] = field(default_factory=list)
    timed_out: bool = False


def figures_of(lines: list[str]) -> list[str]:
    """The lines that state a ratio, and the rows under a table header that does (to the
    next blank line)."""
    out: list[str] = []
    in_table = False
    for line in lines:
        if not line.strip():
            in_table = False
            continue
        if FIGURE.search(line):
            out.append(line)
            # A header: several columns, one of them a ratio; its rows follow.
            in_table = len(line.split()) >= 4 and not any(c.isdigit() for c in line.split()[0])
        elif in_table:
            out.append(line)
    return out


def run(step: Step, log: list[str], timeout: float | None = None) -> None:
    """Run ``step``'s script, its output shown as it comes and kept in ``log``; stopped (its
    process group) past ``timeout`` seconds."""
    step.load_before = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, str(HERE / step.command[0]), *step.command[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])},
        start_new_session=True,  # its own group: stopping it stops what it started
    )
    timer = threading.Timer(timeout, _stop, (process, step)) if timeout else None
    if timer is not None:
        timer.start()
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        print(line, end="", flush=True)
        lines.append(line.rstrip("\n"))
    process.stdout.close()
    step.status = process.wait()
    if timer is not None:
        timer.cancel()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    step.wall = time.perf_counter() - started
    step.cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    step.load_after = os.getloadavg()[0]
    step.figures = figures_of(lines)
    log.extend([f"$ {' '.join(step.command)}", *lines, ""])


def _stop(process: subprocess.Popen[str], step: Step) -> None:
    step.timed_out = True
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)


def table(steps: list[Step], *, quick: bool = False, wall: float | None = None) -> str:
    """The figures of every step, each under its load, times and status."""
    size = " --quick" if quick else ""
    took = f", {wall / 60:.1f} min in all" if wall is not None else ""
    head = (
        f"# make bench{size}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
        f"git {_commit()}{took}; ratios compare within this table only"
    )
    out = [head]
    for step in steps:
        said = (
            "STOPPED at the timeout"
            if step.timed_out
            else "ok"
            if step.status == 0
            else f"FAILED (exit {step.status})"
        )
        out.append(
            f"\n## {' '.join(step.command)} — load {step.load_before:.1f} → "
            f"{step.load_after:.1f}, {step.wall:.0f} s wall, {step.cpu:.0f} s CPU, {said}"
        )
        out.extend(f"  {line}" for line in step.figures or ["(no ratio in its output)"])
    return "\n".join(out) + "\n"


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def chosen(quick: bool = False, every: bool = False, only: list[str] | None = None) -> list[Step]:
    """The steps of a sitting: issue 54's (at the quick size), with the earlier ones."""
    known = {**(QUICK if quick else STEPS), **(EARLIER if every or only else {})}
    return [Step(name, known[name]) for name in (only or known)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps_known = [*STEPS, *EARLIER]
    parser.add_argument("--only", nargs="+", choices=steps_known, help="these steps only")
    parser.add_argument("--quick", action="store_true", help="each step at a smaller size")
    parser.add_argument("--all", action="store_true", help="the earlier issues' steps too")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds a step may run")
    parser.add_argument("--out", default=str(HERE / "results" / "bench_table.txt"))
    args = parser.parse_args()
    steps = chosen(args.quick, args.all, args.only)
    log: list[str] = []
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    for done, step in enumerate(steps, 1):
        run(step, log, args.timeout)
        # Written after each step: a sitting stopped midway keeps the figures it measured.
        text = table(steps[:done], quick=args.quick, wall=time.perf_counter() - started)
        text += "" if done == len(steps) else "\n(still running)\n"
        out.write_text(text, encoding="utf-8")
        out.with_suffix(".log").write_text("\n".join(log) + "\n", encoding="utf-8")
    print("\n" + table(steps, quick=args.quick, wall=time.perf_counter() - started), end="")
    return exit_status(steps)


def exit_status(steps: list[Step]) -> int:
    """The sitting's exit status: 1 when a step failed or was stopped at the timeout (its
    status is then the signal's, negative), else 0."""
    return int(any(s.status != 0 or s.timed_out for s in steps))


if __name__ == "__main__":
    sys.exit(main())
