"""What the file's inventory costs a load: the walk beside the JSON decoding it follows, and a
whole `ctxlab.load` with it against the same load without it.

    python benchmarks/inventory_bench.py [--repeat 5]

Over the corpus's raw session files (``$CTXLAB_CORPUS/raw``: Claude Code, mini-SWE-agent,
SWE-agent, tau-bench). Each contender runs on the same decoded values or the same files, in the
same process, each repeat after the others (nothing cached between repeats: the inventory keeps
nothing across loads); the best of ``--repeat`` is kept (2 shared cores: the minimum is the
least disturbed). Printed per format: megabytes, decoding (the baseline, ``json.loads`` of every
record), the walk alone and its ratio to decoding, ``load`` without the inventory and with it,
and the ratio of the two.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

from ctxlab.exceptions import CtxlabError
from ctxlab.io import _load
from ctxlab.io._inventory import inventory_of
from ctxlab.io._transcript import corpus_dir

SUFFIXES = (".jsonl", ".json", ".traj")


def _values(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    try:
        return [json.loads(text)]
    except ValueError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def _best(call: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best


def _loads(paths: list[Path]) -> None:
    for path in paths:
        _load.read(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    raw = corpus_dir() / "raw"
    if not raw.is_dir():
        sys.exit(f"no corpus at {corpus_dir()}: set CTXLAB_CORPUS")
    groups: dict[str, list[Path]] = {}
    for path in sorted(raw.rglob("*")):
        if path.is_file() and path.name.endswith(SUFFIXES) and "subagents" not in path.parts:
            try:
                _load.read(path)
            except CtxlabError:  # not a session (a results summary beside them)
                continue
            groups.setdefault(path.relative_to(raw).parts[0], []).append(path)
    print(f"best of {args.repeat}; seconds over every file of the format")
    print(
        f"{'format':<16} {'files':>5} {'MB':>6} {'decode':>7} {'walk':>7} {'ratio':>6} "
        f"{'load -inv':>9} {'load':>7} {'ratio':>6}"
    )
    for name, paths in groups.items():
        size = sum(p.stat().st_size for p in paths) / 1e6
        values = [v for p in paths for v in _values(p)]
        decode = _best(lambda paths=paths: [_values(p) for p in paths], args.repeat)
        walk = _best(lambda values=values: inventory_of(values), args.repeat)
        with mock.patch.object(_load, "account_for", lambda transcript, values: transcript):
            bare = _best(lambda paths=paths: _loads(paths), args.repeat)
        whole = _best(lambda paths=paths: _loads(paths), args.repeat)
        print(
            f"{name:<16} {len(paths):>5} {size:>6.1f} {decode:>7.3f} {walk:>7.3f} "
            f"{walk / decode:>6.2f} {bare:>9.3f} {whole:>7.3f} {whole / bare:>6.2f}"
        )


if __name__ == "__main__":
    main()
