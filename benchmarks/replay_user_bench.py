"""`replay` as a user calls it, against the id-and-count floor and AgentScope 2.0.11 (CPU time).

Issue 54 asks for preparation close to the floor: ≤ 1.3× the id-and-count floor at every
window, and against AgentScope really compressing ≤ 1.0× at 16k, ≤ 0.5× at 32k, ≤ 0.3× at 200k.
Contenders, in the same run, on the held-out groups of `compaction_bench` (corpus sessions never
profiled, and long sessions stitched from them):

- **user**: ``ctxlab.replay(messages, context_window=W, counter=default_counter(),
  system=...)`` as a user calls it — the default (extractive) summarizer, a cold cache, the
  steps iterated and nothing read from them (a replay grades a compaction only when its
  retention is read);
- **user, stub**: the same call with ``summarizer=stub_summarizer`` — a summarizer of the
  AgentScope peer's cost (every field answered at once, as its stub model answers): the like
  for like comparison. AgentScope compressing calls its model for the summary; the peer's stub
  model costs nothing, while ctxlab's default summarizer is an offline summarizer that reads
  the span and writes the handover itself (a model's work, done on the CPU). Both are reported:
  ``user÷AS`` is ctxlab with that work against AgentScope without it, ``stub÷AS`` both sides
  answering the summary at once;
- **prepare**: `compaction_bench.ctxlab_prepare` — the same replay with the stub summarizer that
  AgentScope's peer has too, and ``grade=False``: preparation against preparation;
- **floor**: `compaction_bench.id_count_floor` — every message's id and every text counted once,
  a manifest and a request per step, nothing else;
- **AgentScope**: `compress_context()` at every boundary with a stub model answering the
  summary at once (`_agentscope_peer`);
- **known** (the floor when counts are made once per content across runs): the floor with every
  block's count looked up by its content hash in a table an earlier run made
  (`compaction_bench.known_counts`, untimed): every id still computed, nothing tokenized;
- **stored**: ``user`` with its counts kept across runs by ctxlab's own `CountStore`
  (``counter=TokenCache(default_counter(), store=...)``, the store filled by an untimed run of
  the same session): fresh objects, every id computed again, the counts read from the store;
- **kept**: ``user`` with its counts kept across runs in memory — the `TokenCache` of an
  untimed earlier run of the same session passed again as ``counter`` (fresh objects, every id
  computed again, every count a look-up by content hash).
  ``kn÷fl`` is how far the floor falls when counts are kept; ``st÷kn`` and ``kp÷kn`` ctxlab
  against that floor, its counts kept on disk and in memory;
- **prep kept**: ``prepare`` with its counts kept across runs in memory (the `TokenCache` of an
  untimed earlier ``prepare`` of the same session): preparation when the floor falls, as issue 54
  asks to show (a what-if or a sweep prepares one session under many configs, every count made
  once per content). ``pk÷kn`` against the floor with counts kept, ``pk÷AS`` against AgentScope.

CPU seconds of the process (``time.process_time``: both counting threads included); every
contender cold (the transcript read again: fresh objects, fresh caches, ctxlab's process-wide
memos emptied: `_corpus_args.forget_memos` — before issue 54's i54-floor they were not, and the
summarizer's scans of a session's results, kept by text, served its later repeats),
interleaved with the order rotating each repeat, the best of ``--repeat`` kept. The machine's load is printed beside
every table (the machines are shared: compare only ratios of the same run).

Usage: python benchmarks/replay_user_bench.py [--windows 16000,32000,200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _agentscope_peer import AgentScopePeer  # benchmarks/ is on sys.path when run as a script
from _corpus_args import (
    Messages,
    Session,
    chosen_sessions,
    corpus_args,
    forget_memos,
    windows_of,
)
from compaction_bench import ctxlab_prepare, id_count_floor, known_counts, stub_summarizer

import ctxlab
from ctxlab.tokens import CountStore, TokenCache, default_counter, load_encoding

CONTENDERS = (
    "user",
    "stub",
    "prepare",
    "floor",
    "agentscope",
    "known",
    "stored",
    "kept",
    "prep kept",
)


async def user_replay(messages: Messages, system: str, window: int, **options: Any) -> float:
    """CPU seconds of `ctxlab.replay` as a user calls it, every step iterated (``options``:
    the summarizer of the like for like contender, the counter with a store)."""
    counter = options.pop("counter", None) or default_counter()
    start = time.process_time()
    async for _ in ctxlab.replay(
        messages, context_window=window, counter=counter, system=system, **options
    ):
        pass
    return time.process_time() - start


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f} (1 min) {five:.2f} (5 min), {os.cpu_count()} cores"


async def measure(
    session: Session, window: int, repeat: int, peer: Any, store: CountStore
) -> dict[str, float]:
    """The best CPU seconds of each contender on ``session``, interleaved and cold (but for
    the counts ``known`` and ``stored`` read, made by an untimed run first)."""
    best: dict[str, float] = {}
    known = known_counts(*session.load())
    await user_replay(*session.load(), window, counter=TokenCache(default_counter(), store=store))
    kept = TokenCache(default_counter())
    await user_replay(*session.load(), window, counter=kept)
    kept_prepare = TokenCache(default_counter())
    await ctxlab_prepare(*session.load(), window, kept_prepare)

    def keep(name: str, seconds: float) -> None:
        best[name] = min(best.get(name, float("inf")), seconds)

    async def user() -> None:
        keep("user", await user_replay(*session.load(), window))

    async def stub() -> None:
        keep("stub", await user_replay(*session.load(), window, summarizer=stub_summarizer))

    async def prepare() -> None:
        keep("prepare", (await ctxlab_prepare(*session.load(), window))[1])

    async def floor() -> None:
        keep("floor", id_count_floor(*session.load(), window)[1])

    async def theirs() -> None:
        await peer.run(*session.load())
        keep("agentscope", peer.cpu)

    async def floor_known() -> None:
        keep("known", id_count_floor(*session.load(), window, known)[1])

    async def stored() -> None:
        cache = TokenCache(default_counter(), store=store)
        keep("stored", await user_replay(*session.load(), window, counter=cache))

    async def kept_counts() -> None:
        keep("kept", await user_replay(*session.load(), window, counter=kept))

    async def prepare_kept() -> None:
        keep("prep kept", (await ctxlab_prepare(*session.load(), window, kept_prepare))[1])

    runs: list[Callable[[], Awaitable[None]]] = [
        user,
        stub,
        prepare,
        floor,
        theirs,
        floor_known,
        stored,
        kept_counts,
        prepare_kept,
    ]
    for turn in range(repeat):
        for k in range(len(runs)):
            forget_memos()  # cold: no scan kept from the run before
            await runs[(turn + k) % len(runs)]()
    return best


def table(rows: list[dict[str, Any]], window: int) -> list[str]:
    lines = []
    for group in sorted({r["group"] for r in rows if r["window"] == window}):
        chosen = [r for r in rows if r["window"] == window and r["group"] == group]
        total = {name: sum(r[name] for r in chosen) * 1000 for name in CONTENDERS}
        lines.append(
            f"{window:7d} {group:18} {len(chosen):3d} |"
            + "".join(f" {total[n]:9.0f}" for n in CONTENDERS)
            + f" | {total['user'] / total['floor']:9.2f} {total['prepare'] / total['floor']:9.2f}"
            f" {total['user'] / total['agentscope']:8.2f}"
            f" {total['stub'] / total['agentscope']:8.2f}"
            f" {total['prepare'] / total['agentscope']:8.2f}"
            f" {total['floor'] / total['agentscope']:8.2f}"
            f" {total['known'] / total['floor']:6.2f} {total['stored'] / total['known']:6.2f}"
            f" {total['kept'] / total['known']:6.2f}"
            f" {total['prep kept'] / total['known']:6.2f}"
            f" {total['prep kept'] / total['agentscope']:6.2f}"
        )
    return lines


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    corpus_args(parser, windows="16000,32000,200000", group="held-out")
    parser.add_argument("--out", default="benchmarks/results/replay_user_bench.json")
    args = parser.parse_args()
    windows = windows_of(args)
    chosen = chosen_sessions(args)
    if not chosen:
        return 2
    load_encoding("cl100k_base")
    rows: list[dict[str, Any]] = []
    header = (
        f"{'window':>7} {'group':18} {'n':>3} |"
        + "".join(f" {n[:9]:>9}" for n in CONTENDERS)
        + f" | {'user÷fl':>9} {'prep÷fl':>9} {'user÷AS':>8} {'stub÷AS':>8} {'prep÷AS':>8}"
        f" {'fl÷AS':>8} {'kn÷fl':>6} {'st÷kn':>6} {'kp÷kn':>6} {'pk÷kn':>6} {'pk÷AS':>6}"
    )
    print(f"CPU ms, best of {args.repeat} cold interleaved repeats; {load()}")
    folder = tempfile.TemporaryDirectory()
    store = CountStore(Path(folder.name) / "counts.sqlite")
    for window in windows:
        peer = AgentScopePeer(window)
        warm = chosen[0]  # untimed: imports and first-use caches of every path
        await user_replay(*warm.load(), window)
        await user_replay(*warm.load(), window, summarizer=stub_summarizer)
        await ctxlab_prepare(*warm.load(), window)
        await peer.run(*warm.load())
        for session in chosen:
            best = await measure(session, window, args.repeat, peer, store)
            rows.append({"session": session.name, "group": session.group, "window": window, **best})
        print(header)
        print("\n".join(table(rows, window)))
        print(f"  ({load()})", flush=True)
    store.close()
    folder.cleanup()
    Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
