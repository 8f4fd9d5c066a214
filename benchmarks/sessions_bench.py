"""`ctxlab.sessions` over a folder of 1,000 session files, against loading each file in turn.

    python benchmarks/sessions_bench.py [--files 1000] [--repeat 3]

The folder is the corpus's raw session files (Claude Code with its subagents, mini-SWE-agent,
SWE-agent, tau-bench: the files `sessions` reads, by suffix) copied round-robin under new names until it holds ``--files`` of them, in a temporary folder.
Each repeat is cold for both contenders (a fresh process each: nothing imported or read before)
on the same folder: ``sessions(folder)`` with its default workers, ``sessions(folder,
workers=1)``, and the baseline — a loop of ``ctxlab.load`` over the same files, which is what a
user would write without it. Printed: seconds, files per second, the ratio to the baseline,
and the number of rows and of problems (every file must be a row).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ctxlab.io._folder import SUFFIXES
from ctxlab.io._transcript import corpus_dir

CONTENDERS = {
    "sessions(folder)": "import ctxlab; f = ctxlab.sessions(FOLDER, progress=False)",
    "sessions(folder, workers=1)": (
        "import ctxlab; f = ctxlab.sessions(FOLDER, workers=1, progress=False)"
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
}

TIMED = """
import time
FOLDER = {folder!r}
started = time.perf_counter()
{code}
seconds = time.perf_counter() - started
problems = getattr(f, "problems", None)
if problems is None:
    problems = int(f["problem"].notna().sum())
print(seconds, f.shape[0], problems)
"""


def folder_of(count: int) -> Path:
    raw = sorted(
        p for p in (corpus_dir() / "raw").rglob("*") if p.is_file() and p.name.endswith(SUFFIXES)
    )
    if not raw:
        sys.exit(f"no corpus at {corpus_dir()}: set CTXLAB_CORPUS")
    target = Path(tempfile.mkdtemp(prefix="ctxlab-sessions-"))
    for n in range(count):
        source = raw[n % len(raw)]
        folder = target / source.parent.name
        folder.mkdir(exist_ok=True)
        shutil.copyfile(source, folder / f"{n:04d}-{source.name}")
    return target


def run(code: str, folder: Path) -> tuple[float, int, int]:
    out = subprocess.run(
        [sys.executable, "-c", TIMED.format(folder=str(folder), code=code)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), int(out[1]), int(out[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = folder_of(args.files)
    try:
        results = {
            name: [run(code, folder) for _ in range(args.repeat)]
            for name, code in CONTENDERS.items()
        }
    finally:
        shutil.rmtree(folder)
    baseline = statistics.median(r[0] for r in results["load() each file (baseline)"])
    print(f"{args.files:,} files, median of {args.repeat} cold runs each")
    print(
        f"{'contender':<30} {'seconds':>8} {'files/s':>8} {'ratio':>6} {'rows':>6} {'problems':>8}"
    )
    for name, runs in results.items():
        seconds = statistics.median(r[0] for r in runs)
        rows, problems = runs[0][1], runs[0][2]
        print(
            f"{name:<30} {seconds:>8.2f} {args.files / seconds:>8.0f} "
            f"{seconds / baseline:>6.2f} {rows:>6} {problems:>8}"
        )


if __name__ == "__main__":
    main()
