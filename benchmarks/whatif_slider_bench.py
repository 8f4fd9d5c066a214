"""The what-if lab's slider, driven through the widget: how long after a move the plot's lines
and the headline figures show the new config, and how long until its retention and cost are
filled in — at 500 and 5,000 requests (corpus sessions stitched end to end, tool ids renamed;
the corpus is repeated for the longer one), with the full re-replay measured in the same run as
the baseline: the config replayed from its first request, graded and priced, and the whole lab
redrawn (what a move cost before the slider answered at once).

    python benchmarks/whatif_slider_bench.py [--steps 500 5000] [--window 32000] [--moves N]
        [--baselines N] [--cold]

How many moves each size measures (`MOVES`: 4 at 500 requests, 2 at 5,000 — the first values
of the same list) and how many of them are also replayed from scratch as the baseline
(`BASELINES`: every move at 500, the first at 5,000, where one baseline is 30–50 s under load);
``--moves`` and ``--baselines`` set both for every size. Each line says its counts. At 5,000
requests a mode takes about three minutes under load 11 (the lab opened, 50–70 s; each move
filled in 25–40 s; the baseline): with every move and baseline, ``make bench``'s slider step
ran past its 20-minute timeout and printed nothing.

Each move sets the trigger slider of the ``ctxlab`` preset (ctxlab's three presets are open) as a
user does and polls the event loop until the plot's traces and the table changed ("lines"), then
until its filling is done ("filled"); the baseline replays the same config from scratch and
redraws (no summary taken from the what-if's kept ones, the recording's next-use text built
again). The figures the widget then shows are checked equal to the baseline's (exactness in the
same run). Medians over the moves. Targets: lines within 150 ms at 500 requests, 1 s at
5,000. Works on a checkout without the at-once slider too (then "lines" is the whole move).

Needs the corpus (``$CTXLAB_CORPUS``, default ``../shared/corpus``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from whatif_bench import sessions, stitched

from ctxlab.analysis._config_run import ConfigRun
from ctxlab.messages import AssistantMessage
from ctxlab.retention import _before
from ctxlab.widgets import WhatIfLab

TARGETS = {500: 150.0, 5_000: 1_000.0}
"""Milliseconds from a move to its lines and headline figures, by session length."""
MOVES = {500: 4, 5_000: 2}
"""Moves measured, by session length (4 for any other)."""
BASELINES = {5_000: 1}
"""Moves also replayed from scratch as the baseline, by session length (every move for any
other)."""


class _Tokenized:
    """Characters the what-if's counter tokenizes while ``on``: work the load does not move
    (counted around the counter, apart from what it counts)."""

    def __init__(self, lab: WhatIfLab) -> None:
        self.on, self.chars = False, 0
        counter = lab.what.cache.counter
        one, many = counter.count_text, getattr(counter, "count_many", None)

        def count_text(text: str) -> int:
            self.chars += len(text) if self.on else 0
            return one(text)

        def count_many(texts: list[str]) -> list[int]:
            self.chars += sum(map(len, texts)) if self.on else 0
            return many(texts)  # type: ignore[misc]

        counter.count_text = count_text  # type: ignore[method-assign]
        if many is not None:
            counter.count_many = count_many  # type: ignore[attr-defined]


async def _move(
    lab: WhatIfLab, value: float, tokenized: _Tokenized
) -> tuple[float, float, float, float, int]:
    """Move the trigger slider; (ms until the plot and table changed, ms until filled, the
    process's CPU ms until the lines: on a shared machine the wall clock counts others' work;
    ms until the first visible change: anything the widget shows; characters tokenized until
    the lines)."""
    plot = [list(t["y"]) for t in lab.plot.data]
    table, status = lab.table.value, lab.status.value
    tokenized.on, tokenized.chars = True, 0
    started, cpu = time.perf_counter(), time.process_time()
    lab.sliders["trigger_ratio"].value = value
    first = None
    while [list(t["y"]) for t in lab.plot.data] == plot or lab.table.value == table:
        if first is None and lab.status.value != status:
            first = time.perf_counter() - started
        await asyncio.sleep(0)
    lines, lines_cpu = time.perf_counter() - started, time.process_time() - cpu
    tokenized.on = False
    if lab.task is not None:
        await lab.task
    filled = (time.perf_counter() - started) * 1000
    first_ms = (lines if first is None else first) * 1000
    return lines * 1000, filled, lines_cpu * 1000, first_ms, tokenized.chars


async def _baseline(lab: WhatIfLab, name: str) -> float:
    """The config replayed from scratch, graded, priced and the lab redrawn: ms."""
    what = lab.what
    # From the first request, no earlier run to reuse, no summary or next-use text kept.
    kept, what.kept.summaries = what.kept.summaries, None
    texts = list(_before._kept)
    _before._kept.clear()
    started = time.perf_counter()
    run = ConfigRun(name, what.runs[name].config)
    await what._replay(run)
    what.runs[name] = run
    lab.redraw()
    spent = (time.perf_counter() - started) * 1000
    what.kept.summaries = kept
    _before._kept[:] = texts
    return spent


def _row(lab: WhatIfLab, name: str) -> Any:
    frame = lab.what.table().drop(columns=["replay_ms"])
    return frame.loc[name].tolist()


async def bench(
    steps: int, window: int, moves: int, *, ahead: bool = True, baselines: int | None = None
) -> dict[str, Any]:
    corpus = sessions()
    session = stitched(corpus * (1 + steps // 2_000), steps)
    replies = sum(isinstance(m, AssistantMessage) for m in session.messages)
    started = time.perf_counter()
    lab = await WhatIfLab.open(session, context_window=window)
    opened = (time.perf_counter() - started) * 1000
    if not ahead:
        # Cold: every move replays (nothing computed ahead, no run kept from before).
        lab.runner.enabled = False
        lab.runner.stop()
        lab.what.kept.limit = 0
    lab.config_picker.value = "ctxlab"
    values = [0.7, 0.75, 0.65, 0.8, 0.6, 0.85][:moves]
    lines, filled, baseline, reused, same, cpu, firsts = [], [], [], [], True, [], []
    tokenized, chars = _Tokenized(lab), []
    for value in values:
        at_once, done, at_once_cpu, first, counted = await _move(lab, value, tokenized)
        chars.append(counted)
        lines.append(at_once)
        cpu.append(at_once_cpu)
        firsts.append(first)
        filled.append(done)
        reused.append(getattr(lab.what.runs["ctxlab"], "reused", 0))
        if baselines is not None and len(baseline) >= baselines:
            continue
        shown = _row(lab, "ctxlab")
        baseline.append(await _baseline(lab, "ctxlab"))
        # The same figures either way (compared as printed, every digit: NaN and NA alike).
        same = same and repr(shown) == repr(_row(lab, "ctxlab"))
    return {
        "requests": replies,
        "window": window,
        "open_ms": opened,
        "lines_ms": statistics.median(lines),
        "lines_cpu_ms": statistics.median(cpu),
        "first_ms": statistics.median(firsts),
        "tokenized_chars": statistics.median(chars),
        "taken": lab.what.kept.taken,
        "ahead": ahead,
        "filled_ms": statistics.median(filled),
        "baseline_ms": statistics.median(baseline) if baseline else float("nan"),
        "lines_all": lines,
        "baseline_all": baseline,
        "reused": reused,
        "same_figures": same,
        "moves": len(lines),
        "baselines": len(baseline),
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, nargs="+", default=[500, 5_000])
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--moves", type=int, help="moves at every size (default: MOVES)")
    parser.add_argument(
        "--baselines", type=int, help="baselines at every size (default: BASELINES)"
    )
    parser.add_argument(
        "--cold", action="store_true", help="also every move replayed (nothing ahead or kept)"
    )
    args = parser.parse_args()
    for steps, ahead in [(s, a) for s in args.steps for a in (True, False)[: 1 + args.cold]]:
        moves = args.moves or MOVES.get(steps, 4)
        baselines = args.baselines if args.baselines is not None else BASELINES.get(steps)
        r = await bench(steps, args.window, moves, ahead=ahead, baselines=baselines)
        target = TARGETS.get(steps)
        verdict = f" (target {target:.0f} ms: {r['lines_ms'] / target:.2f}x)" if target else ""
        print(
            f"{'ahead and kept' if ahead else 'cold'}: "
            f"{r['requests']} requests at {r['window']:,} tokens: lines and headline "
            f"{r['lines_ms']:.0f} ms{verdict} (CPU {r['lines_cpu_ms']:.0f} ms; median of "
            f"{r['moves']} moves); retention and cost filled {r['filled_ms']:.0f} ms; "
            f"baseline (full re-replay, graded, priced, redrawn; median of {r['baselines']}) "
            f"{r['baseline_ms']:.0f} ms "
            f"({r['baseline_ms'] / r['lines_ms']:.1f}x); first visible change {r['first_ms']:.0f} "
            f"ms; tokenized until the lines {r['tokenized_chars'] / 1e3:,.0f}k characters "
            f"(median); runs taken as kept {r['taken']}; steps reused {r['reused']}; same "
            f"figures as the baseline: {r['same_figures']}; opened in {r['open_ms']:.0f} ms"
        )
        print(
            f"    lines {[round(x) for x in r['lines_all']]} baseline "
            f"{[round(x) for x in r['baseline_all']]}; load {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
