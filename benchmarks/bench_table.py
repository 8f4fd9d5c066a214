"""`make bench` in one sitting: every benchmark script run in turn, the machine's load beside
each, and the table of their figures — each a ratio measured in the same run (a contender
against its baseline, its floor or its target) — printed at the end and kept in
``benchmarks/results/bench_table.txt`` (the last table, written after each step: a sitting
stopped midway keeps what it measured; the scripts' whole output beside it in
``bench_table.log``).

    python benchmarks/bench_table.py [--only lab-open sessions ...] [--out FILE]

A script's figures are the lines of its output that state a ratio (``÷``, ``×``, ``1.23x``,
"ratio", "target") and the rows of a table whose header does. Each step's row says the load
(1-minute average) before and after it, its wall and CPU seconds (its processes' own) and its
exit status: a script that fails is said, the others still run. Ratios are comparable within
one table, never across tables (the load differs).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent

STEPS: dict[str, list[str]] = {
    "prepare": ["prepare_bench.py"],
    "compaction": ["compaction_bench.py"],
    "loop": ["loop_bench.py"],
    "lab-1k": ["lab_bench.py", "--steps", "1000"],
    "lab-10k": ["lab_bench.py", "--steps", "10000"],
    "lab-open": ["lab_bench.py", "--open", "5000"],
    "scale": ["scale_bench.py"],
    "sessions": ["sessions_bench.py"],
    "whatif-slider": ["whatif_slider_bench.py"],
}
"""Every step of ``make bench``, in order: name → the script and its arguments."""

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


def run(step: Step, log: list[str]) -> None:
    """Run ``step``'s script, its output shown as it comes and kept in ``log``."""
    step.load_before = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, str(HERE / step.command[0]), *step.command[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])},
    )
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        print(line, end="", flush=True)
        lines.append(line.rstrip("\n"))
    step.status = process.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    step.wall = time.perf_counter() - started
    step.cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    step.load_after = os.getloadavg()[0]
    step.figures = figures_of(lines)
    log.extend([f"$ {' '.join(step.command)}", *lines, ""])


def table(steps: list[Step]) -> str:
    """The figures of every step, each under its load, times and status."""
    head = (
        f"# make bench, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, "
        f"git {_commit()}; ratios compare within this table only"
    )
    out = [head]
    for step in steps:
        said = "ok" if step.status == 0 else f"FAILED (exit {step.status})"
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(STEPS), help="these steps only")
    parser.add_argument("--out", default=str(HERE / "results" / "bench_table.txt"))
    args = parser.parse_args()
    steps = [Step(name, STEPS[name]) for name in (args.only or STEPS)]
    log: list[str] = []
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for done, step in enumerate(steps, 1):
        run(step, log)
        # Written after each step: a sitting stopped midway keeps the figures it measured.
        text = table(steps[:done]) + ("" if done == len(steps) else "\n(still running)\n")
        out.write_text(text, encoding="utf-8")
        out.with_suffix(".log").write_text("\n".join(log) + "\n", encoding="utf-8")
    print("\n" + table(steps), end="")
    return max((s.status for s in steps), default=0)


if __name__ == "__main__":
    sys.exit(main())
