"""The docs' next-use retention figures (docs/concepts/compaction.md): the presets ``ctxlab``,
``langchain`` and ``observation_masking`` replayed on every corpus session at one window, each
config's mean share per session, and the differences paired by session over the sessions where
all three compact.

    python -m tests.analysis.next_use_figures 32000
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import sys

from ctxlab import ContextConfig, WhatIf
from ctxlab.analysis._grading import next_use_of
from ctxlab.io._transcript import load_transcript
from ctxlab.retention._next_use import next_use_columns
from tests.conftest import corpus_files

PRESETS = ("ctxlab", "langchain", "observation_masking")


def session_figures(window: int) -> list[dict[str, tuple[float, float]]]:
    """Per corpus session where all three presets compact: preset → (share, floor)."""
    out = []
    for path in corpus_files():
        transcript = load_transcript(path)
        configs = {p: ContextConfig.preset(p) for p in PRESETS}
        what = WhatIf(transcript, configs, context_window=window)
        asyncio.run(what.run())
        row = {}
        for name in PRESETS:
            graded = next_use_of(what.runs[name].prepared, transcript.messages, transcript.system)
            columns = next_use_columns(graded)
            share, floor = columns["next_use_retention"], columns["next_use_floor"]
            if share is not None and floor is not None:
                row[name] = (share, floor)
        if len(row) == len(PRESETS):
            out.append(row)
    return out


def main(window: int) -> None:
    rows = session_figures(window)
    print(f"{len(rows)} sessions where all three compact at {window:,}")
    for name in PRESETS:
        shares = [r[name][0] for r in rows]
        floors = [r[name][1] for r in rows]
        print(
            f"{name}: {statistics.mean(shares):.3f} ± {statistics.stdev(shares):.3f}"
            f" (floor {statistics.mean(floors):.3f})"
        )
    for a, b in itertools.combinations(PRESETS, 2):
        diff = [r[a][0] - r[b][0] for r in rows]
        error = statistics.stdev(diff) / len(diff) ** 0.5
        higher, lower = sum(d > 0 for d in diff), sum(d < 0 for d in diff)
        print(
            f"{a} - {b}: {statistics.mean(diff):+.3f} (standard error {error:.3f});"
            f" higher in {higher}, lower in {lower}"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]))
