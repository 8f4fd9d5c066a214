"""The Lab's Python-side cost per reasoning step on a long session (target: under 20 ms at 1,000).

Real manifests are produced by replaying corpus transcripts through the pipeline (or a synthetic
session without the corpus); their events are then fed to a `Lab` one step at a time, as the
agent would, and each update (step table, budget figure, selection, context map, the visible
manifest tab) is timed. Baselines measured in the same run: feeding the same events to the
`StepLog` alone, and rebuilding the whole `steps` DataFrame at every step.

``--open N``: instead, a recording of N requests (corpus sessions stitched end to end, tool ids
renamed, as the what-if slider's benchmark makes them) opened with `Lab.open` at a 32k window, as
recorded (the view it opens in), until its plot holds every request: wall and CPU seconds against
the 2 s target, and against the step source alone reading the same recording in the same run
(`ReplaySession.run`, no Lab) — what the Lab adds. The machine's load is printed beside them.

Usage: python benchmarks/lab_bench.py [--steps 1000] [--open 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

import numpy as np

from ctxlab import ContextConfig, TiktokenCounter, TokenCache, extractive_summarizer
from ctxlab.agent import Agent, ContextBuildEvent, ModelResponseEvent
from ctxlab.analysis._replay import replay
from ctxlab.io._transcript import corpus_dir, load_transcript
from ctxlab.manifest import ProviderUsage
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.models import ScriptedModel
from ctxlab.sources import ReplaySession
from ctxlab.widgets import Lab, StepLog

OPEN_TARGET = 2.0
"""Seconds for a 5,000-request recording to open in the Lab with its plot drawn (issue 54)."""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def events(count: int) -> list[object]:
    """``count`` reasoning steps' events from real transcripts, replayed back to back."""
    files = sorted((corpus_dir() / "norm").glob("*.jsonl"), key=lambda p: -p.stat().st_size)
    out: list[object] = []
    if not files:
        messages: list[UserMessage | AssistantMessage] = [UserMessage(content="task")]
        for i in range(count):
            messages.append(AssistantMessage(content=f"step {i}"))
            messages.append(UserMessage(content="output " * (50 + i % 300)))
        sources = [("synthetic", tuple(messages), "")]
    else:
        sources = []
        for path in files:
            transcript = load_transcript(path)
            sources.append((transcript.name, transcript.messages, transcript.system))
    cache = TokenCache(TiktokenCounter())
    while len(out) < 2 * count:
        for _, messages, system in sources:
            async for step in replay(
                messages,
                context_window=32_000,
                counter=cache,
                config=ContextConfig(),
                system=system,
                summarizer=extractive_summarizer,
            ):
                manifest = step.manifest
                out.append(ContextBuildEvent(manifest, "bench", None))
                out.append(
                    ModelResponseEvent(
                        AssistantMessage(content="ok"),
                        "end_turn",
                        ProviderUsage(manifest.estimated_input_tokens, 10),
                        manifest.call_id,
                        "bench",
                    )
                )
                if len(out) >= 2 * count:
                    return out
    return out


def _timed() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


async def opening(requests: int, window: int = 32_000) -> None:
    """Print how long `Lab.open` takes on a stitched recording of ``requests`` requests."""
    sys.path.insert(0, str(Path(__file__).parent))
    from whatif_bench import sessions, stitched

    session = stitched(sessions() * (1 + requests // 2_000), requests)
    load = os.getloadavg()[0]
    first, alone, opened = (0.0, 0.0), (1e9, 1e9), (1e9, 1e9)
    # Interleaved, the Lab first: its first run is cold (it builds the counter's vocabulary
    # and counts every text); the best of two of each is beside it.
    for attempt in range(2):
        wall, cpu = _timed()
        lab = await Lab.open(session, context_window=window)
        x = lab.budget.plot.view.data[0]["x"]  # what the view holds: one x per request
        drawn = x["buffer"].nbytes // np.dtype(x["dtype"]).itemsize
        took = (time.perf_counter() - wall, time.process_time() - cpu)
        first = took if attempt == 0 else first
        opened = min(opened, took)
        lab.close()
        wall, cpu = _timed()
        source = ReplaySession(session, context_window=window, view="recorded")
        await source.run()
        alone = min(alone, (time.perf_counter() - wall, time.process_time() - cpu))
    load = max(load, os.getloadavg()[0])
    print(
        f"Lab.open of a {len(lab.log):,}-request recording ({window:,} window, as recorded, "
        f"{drawn:,} requests on the plot), first (cold): {first[0]:.2f} s wall, {first[1]:.2f} s "
        f"CPU; ÷ target {OPEN_TARGET:.0f} s: {first[0] / OPEN_TARGET:.2f} wall, "
        f"{first[1] / OPEN_TARGET:.2f} CPU; best of 2: {opened[1]:.2f} s CPU; ÷ the step source "
        f"alone (best of 2: {alone[1]:.2f} s CPU): {opened[1] / alone[1]:.2f}; load {load:.1f}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--open", type=int, default=0, help="time Lab.open at N requests")
    args = parser.parse_args()
    if args.open:
        await opening(args.open)
        return
    stream = await events(args.steps)
    agent = Agent(model=ScriptedModel([], context_window=32_000))
    lab = Lab(agent)
    per_step: list[float] = []
    for index in range(0, len(stream), 2):
        start = time.perf_counter()
        lab._on_event(stream[index])  # type: ignore[arg-type]
        lab._on_event(stream[index + 1])  # type: ignore[arg-type]
        per_step.append(time.perf_counter() - start)
    log = StepLog()
    log_only: list[float] = []
    rebuild: list[float] = []
    for index in range(0, len(stream), 2):
        start = time.perf_counter()
        log.feed(stream[index])  # type: ignore[arg-type]
        log.feed(stream[index + 1])  # type: ignore[arg-type]
        log_only.append(time.perf_counter() - start)
        if index // 2 % 50 == 0:  # sampled: rebuilding at every step would take minutes
            start = time.perf_counter()
            log._frame = None
            log.frame()
            rebuild.append(time.perf_counter() - start)
    last = per_step[-100:]
    ms = 1000
    print(f"{len(per_step)} steps fed to a Lab (Python side, no front end)")
    print(
        f"Lab update, last 100 steps: p50 {percentile(last, 0.5) * ms:.2f} ms, "
        f"p99 {percentile(last, 0.99) * ms:.2f} ms, max {max(last) * ms:.2f} ms (target ≤ 5 ms p50)"
    )
    print(f"Lab update, first 100 steps: p50 {percentile(per_step[:100], 0.5) * ms:.2f} ms")
    print(f"StepLog alone, last 100: p50 {percentile(log_only[-100:], 0.5) * ms:.3f} ms")
    print(
        f"steps DataFrame rebuild at ~{len(per_step)} rows: {rebuild[-1] * ms:.2f} ms "
        f"(done only when lab.steps is read)"
    )
    print(
        f"Lab p50 ÷ StepLog p50 (last 100): "
        f"{percentile(last, 0.5) / max(percentile(log_only[-100:], 0.5), 1e-9):.0f}×"
    )


if __name__ == "__main__":
    asyncio.run(main())
