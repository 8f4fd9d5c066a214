"""`ctxlab.sessions` over a folder of 1,000 session files, against loading each file in turn.

    python benchmarks/sessions_bench.py [--files 1000] [--repeat 3]

The folder is the corpus's raw session files (Claude Code with its subagents, mini-SWE-agent,
SWE-agent, tau-bench: the files `sessions` reads, by suffix) copied round-robin under new names,
each with its own folder as it lies on disk (a Claude Code session's ``<id>/subagents/``), until
it holds ``--files`` of them, in a temporary folder. Each repeat is cold for every contender (a
fresh process each: nothing imported or read before) on the same folder: ``sessions(folder)``
with its default workers, ``sessions(folder, workers=1)``, ``sessions(folder)`` asked again
in the same process with no file changed (timed: the second call), asked again after a line
was appended to one file (what a user feels while a tool writes its live session: the file
just written; it grows by a line in each repeat), ``sessions(folder)`` in a
new process after another process read the folder (the table kept on disk), the baseline — a
loop of ``ctxlab.load`` over the same files, which is what a user would write without it — and
the floor: decoding every file's JSON (one process), which any reader of these files pays. Two
more say where the first contender's seconds go (they are parts, not ways to call it): the
imports a first call pays, and ``sessions(folder)`` with the census's walks switched off (the
walk of every value of every file that the ``unaccounted`` column comes from). Every run
gets an empty folder for the tables `sessions` keeps on disk (``CTXLAB_SESSIONS_CACHE``): cold
but for what a contender's own earlier call kept. Printed:
seconds (wall, and CPU with the worker processes'), files and MB per second, the ratios to the
baseline, to the floor and to the 5 s target of issue 54, the rows and the problems (every file
must be a row), and the machine's load. ``--only NAME ...`` runs some contenders. To time
another ctxlab (``PYTHONPATH=<its tree>``), run this from outside any ctxlab checkout: each
contender runs as ``python -c``, which puts the working folder first on ``sys.path``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ctxlab.io._listing import session_suffixes
from ctxlab.io._transcript import corpus_dir

CONTENDERS = {
    "sessions(folder)": "import ctxlab; f = ctxlab.sessions(FOLDER, progress=False)",
    "sessions(folder, workers=1)": (
        "import ctxlab; f = ctxlab.sessions(FOLDER, workers=1, progress=False)"
    ),
    "sessions(folder) asked again": (
        "# SETUP: import ctxlab; ctxlab.sessions(FOLDER, progress=False)\n"
        "f = ctxlab.sessions(FOLDER, progress=False)"
    ),
    "sessions(folder), one file appended to": (
        "# SETUP: import ctxlab, pathlib; ctxlab.sessions(FOLDER, progress=False); "
        "open(sorted(pathlib.Path(FOLDER).rglob('*.jsonl'))[0], 'a').write('{}\\n')\n"
        "f = ctxlab.sessions(FOLDER, progress=False)"
    ),
    "sessions(folder), a new process": (
        "# BEFORE: import ctxlab; ctxlab.sessions(FOLDER, progress=False)\n"
        "import ctxlab; f = ctxlab.sessions(FOLDER, progress=False)"
    ),
    "load() each file (baseline)": (
        "import ctxlab, pathlib\n"
        "rows = []\n"
        "for p in sorted(pathlib.Path(FOLDER).rglob('*')):\n"
        "    if p.is_file():\n"
        "        try: rows.append(len(ctxlab.load(p).messages))\n"
        "        except ctxlab.CtxlabError: rows.append(None)\n"
        "class F: pass\n"
        "f = F(); f.shape = (len(rows),); f.problems = sum(r is None for r in rows)"
    ),
    # Two parts of the first contender, to see where its seconds go (not ways to call it):
    # the imports a user's first call pays, and the read with the census's walks switched off
    # (every value of every file walked by `ctxlab.io._inventory`: the `unaccounted` column).
    "imports alone (ctxlab, pandas, tqdm)": (
        "import ctxlab, pandas, tqdm.auto\nclass F: pass\nf = F(); f.shape = (0,); f.problems = 0"
    ),
    "sessions(folder), census walks off": (
        "import ctxlab, ctxlab.io._load as L, ctxlab.io._tally as T, ctxlab.io._inventory as I\n"
        "L.account_for = lambda transcript, values: transcript\n"
        "T.inventory_of = lambda values, last=False, read=False: I.Inventory()\n"
        "f = ctxlab.sessions(FOLDER, progress=False)"
    ),
    "JSON decode of each file (floor)": (
        "import json, pathlib\n"
        "n = 0\n"
        "for p in sorted(pathlib.Path(FOLDER).rglob('*')):\n"
        "    if not p.is_file(): continue\n"
        "    data = p.read_bytes(); n += 1\n"
        "    try: json.loads(data)\n"
        "    except ValueError:\n"
        "        for line in data.splitlines():\n"
        "            try: json.loads(line)\n"
        "            except ValueError: pass\n"
        "class F: pass\n"
        "f = F(); f.shape = (n,); f.problems = 0"
    ),
}
TARGET = 5.0
"""Seconds for `sessions` on 1,000 files (issue 54)."""
BASELINE = "load() each file (baseline)"
FLOOR = "JSON decode of each file (floor)"

TIMED = """
import resource, time
FOLDER = {folder!r}
{setup}
children = resource.getrusage(resource.RUSAGE_CHILDREN)
before = children.ru_utime + children.ru_stime
started, cpu = time.perf_counter(), time.process_time()
{code}
seconds = time.perf_counter() - started
children = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = time.process_time() - cpu + children.ru_utime + children.ru_stime - before
problems = getattr(f, "problems", None)
if problems is None:
    problems = int(f["problem"].notna().sum())
print(seconds, f.shape[0], problems, cpu)
"""


def _units(raw: Path) -> list[list[Path]]:
    """The corpus's sessions as they lie on disk: each file that `sessions` reads, with the
    folder of the same name beside it when there is one (a Claude Code session's
    ``<id>/subagents/agent-*.jsonl``: its subagents are found there, not re-read from it)."""
    files = [
        p for p in sorted(raw.rglob("*")) if p.is_file() and p.name.endswith(session_suffixes())
    ]
    own = {p.with_suffix("") for p in files if p.with_suffix("").is_dir()}
    return [
        [path, *sorted(f for f in path.with_suffix("").rglob("*") if f.is_file())]
        for path in files
        if not own.intersection(path.parents)  # inside a session's own folder: copied with it
    ]


def folder_of(count: int) -> Path:
    """A temporary folder of ``count`` session files: the corpus's raw sessions copied
    round-robin under new names, each with its own folder (as they lie on disk), with their
    times (a folder where a file changed in the last two seconds is not kept by `sessions`)."""
    raw = corpus_dir() / "raw"
    units = _units(raw)
    if not units:
        sys.exit(f"no corpus at {corpus_dir()}: set CTXLAB_CORPUS")
    target = Path(tempfile.mkdtemp(prefix="ctxlab-sessions-"))
    copied, n = 0, 0
    while copied < count:
        session, *inside = units[n % len(units)]
        folder = target / session.parent.name
        new = f"{n:04d}-{session.name}"
        folder.mkdir(exist_ok=True)
        shutil.copy2(session, folder / new)
        for part in inside[: count - copied - 1]:
            place = folder / Path(new).with_suffix("") / part.relative_to(session.with_suffix(""))
            place.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(part, place)
        copied += 1 + min(len(inside), count - copied - 1)
        n += 1
    return target


def _line(code: str, mark: str) -> str:
    # What a contender does before it is timed: its ``# SETUP:`` line in the same process (the
    # first call of one asked again), its ``# BEFORE:`` line in a process of its own.
    first = code.splitlines()[0]
    return first.removeprefix(mark) if first.startswith(mark) else ""


def run(code: str, folder: Path) -> tuple[float, int, int, float]:
    """One cold run of ``code`` in a new process, with an empty folder for the tables
    `sessions` keeps on disk (only a ``# BEFORE:`` process of its own fills it first)."""
    with tempfile.TemporaryDirectory(prefix="ctxlab-sessions-cache-") as kept:
        env = {**os.environ, "CTXLAB_SESSIONS_CACHE": kept}
        before = _line(code, "# BEFORE: ")
        if before:
            script = f"FOLDER = {str(folder)!r}\n{before}"
            subprocess.run([sys.executable, "-c", script], env=env, check=True)
        timed = TIMED.format(folder=str(folder), code=code, setup=_line(code, "# SETUP: "))
        out = subprocess.run(
            [sys.executable, "-c", timed], capture_output=True, text=True, check=True, env=env
        ).stdout.split()
    return float(out[0]), int(out[1]), int(out[2]), float(out[3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--only", nargs="+", default=list(CONTENDERS), help="contenders to run (names)"
    )
    args = parser.parse_args()
    unknown = sorted(set(args.only) - set(CONTENDERS))
    if unknown:
        sys.exit(f"no contender {unknown}: choose among {sorted(CONTENDERS)}")
    folder = folder_of(args.files)
    megabytes = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6
    loads = [os.getloadavg()[0]]
    try:
        # Interleaved: each repeat runs every contender once, so drift hits them alike.
        runs: dict[str, list[tuple[float, int, int, float]]] = {name: [] for name in args.only}
        for _ in range(args.repeat):
            for name in args.only:
                runs[name].append(run(CONTENDERS[name], folder))
                loads.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(folder)
    table(runs, args.files, megabytes, loads)


def table(
    runs: dict[str, list[tuple[float, int, int, float]]],
    files: int,
    megabytes: float,
    loads: list[float],
) -> None:
    """Print each contender's median against the baseline, the floor and the target."""
    median = {name: statistics.median(r[0] for r in results) for name, results in runs.items()}
    cpu = {name: statistics.median(r[3] for r in results) for name, results in runs.items()}
    repeats = len(next(iter(runs.values())))
    nan = float("nan")  # (a ratio to a contender not run)
    print(
        f"{files:,} files ({megabytes:,.0f} MB), median of {repeats} cold runs each, "
        f"interleaved; load {min(loads):.1f}–{max(loads):.1f} (1-minute average)"
    )
    print(
        f"{'contender':<34} {'seconds':>8} {'CPU s':>7} {'files/s':>8} {'MB/s':>6} "
        f"{'÷ load()':>8} {'÷ floor':>8} {'÷ target':>8} {'rows':>6} {'problems':>8}"
    )
    for name, results in runs.items():
        seconds = median[name]
        rows, problems = results[0][1], results[0][2]
        print(
            f"{name:<34} {seconds:>8.2f} {cpu[name]:>7.2f} {files / seconds:>8.0f} "
            f"{megabytes / seconds:>6.1f} {seconds / median.get(BASELINE, nan):>8.2f} "
            f"{seconds / median.get(FLOOR, nan):>8.2f} {seconds / TARGET:>8.2f} {rows:>6} "
            f"{problems:>8}"
        )


if __name__ == "__main__":
    main()
