"""Preparation against the id-and-count floor and AgentScope 2.0.11, and its Python calls a step.

The prepare, floor and AgentScope contenders of `replay_user_bench.py` alone (the same
functions: `compaction_bench.ctxlab_prepare`, `compaction_bench.id_count_floor`, the
`_agentscope_peer` with a stub model), on the held-out groups, CPU time of the process, every
contender cold (the transcript read again, fresh caches, ctxlab's process-wide memos
forgotten), interleaved with the order rotating each repeat, best of ``--repeat``.

``--calls``: instead of timing, the Python calls a step of a warm replay makes (cProfile's
total count: deterministic, the machine's load does not move it; stub summarizer, counts known
from an earlier run of the same session) — and, when the tree has the common step's fast path
(`ctxlab.pipeline._common_step`), the share of steps that took it.

Run it against any tree with ``PYTHONPATH=<tree>`` (a before and an after, interleaved).

Usage: python benchmarks/prepare_floor_bench.py [--windows 16000,32000,200000] [--repeat 2]
       [--calls] [--label after]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import sys
from typing import Any

from _agentscope_peer import AgentScopePeer  # benchmarks/ is on sys.path when run as a script
from _corpus_args import Messages, Session, chosen_sessions, corpus_args, forget_memos, windows_of
from compaction_bench import ctxlab_prepare, id_count_floor, stub_summarizer

import ctxlab
from ctxlab.tokens import TokenCache, default_counter, load_encoding


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}"


async def timed(session: Session, window: int, repeat: int, peer: Any) -> dict[str, float]:
    """The best CPU seconds of prepare, floor and AgentScope on ``session``, cold, rotated."""
    best: dict[str, float] = {}

    async def prepare() -> float:
        return (await ctxlab_prepare(*session.load(), window))[1]

    async def floor() -> float:
        return id_count_floor(*session.load(), window)[1]

    async def theirs() -> float:
        await peer.run(*session.load())
        return float(peer.cpu)

    runs = [("prepare", prepare), ("floor", floor), ("agentscope", theirs)]
    for turn in range(repeat):
        for k in range(len(runs)):
            name, run = runs[(turn + k) % len(runs)]
            forget_memos()
            seconds = await run()
            best[name] = min(best.get(name, float("inf")), seconds)
    return best


async def replayed(
    loaded: tuple[Messages, str], window: int, counter: TokenCache, profile: cProfile.Profile
) -> int:
    """Steps of a replay of the ``loaded`` session (stub summarizer, nothing graded), profiled
    by ``profile`` (the reading of the transcript is not)."""
    messages, system = loaded
    steps = 0
    profile.enable()
    async for _ in ctxlab.replay(
        messages,
        context_window=window,
        counter=counter,
        system=system,
        summarizer=stub_summarizer,
        grade=False,
    ):
        steps += 1
    profile.disable()
    return steps


async def calls(chosen: list[Session], window: int) -> tuple[int, int, int]:
    """(Python calls, steps, common steps) of warm replays of ``chosen`` at ``window``."""
    taken = _count_common()
    total = steps = common = 0
    for session in chosen:
        cache = TokenCache(default_counter())
        await replayed(session.load(), window, cache, cProfile.Profile())  # the counts made
        loaded = session.load()
        forget_memos()
        if taken is not None:
            taken[0] = 0  # the profiled replay's alone
        profile = cProfile.Profile()
        steps += await replayed(loaded, window, cache, profile)
        total += pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
        common += taken[0] if taken is not None else 0
    return total, steps, common if taken is not None else -1


def _count_common() -> list[int] | None:
    # The share of steps the fast path took, counted by wrapping its builder (absent before).
    try:
        from ctxlab.pipeline import _common_step, _prepare
    except ImportError:
        return None
    taken = [0]
    build = _common_step.common_result

    def counted(*args: Any, **kwargs: Any) -> Any:
        result = build(*args, **kwargs)
        taken[0] += result is not None
        return result

    _prepare.common_result = counted  # type: ignore[attr-defined]
    return taken


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    corpus_args(parser, windows="16000,32000,200000", group="held-out")
    parser.add_argument("--calls", action="store_true", help="count calls a step, not time")
    parser.add_argument("--label", default=os.path.basename(os.environ.get("PYTHONPATH", "")))
    args = parser.parse_args()
    chosen = chosen_sessions(args)
    if not chosen:
        return 2
    load_encoding("cl100k_base")
    print(f"# ctxlab from {ctxlab.__file__}")
    for window in windows_of(args):
        if args.calls:
            total, steps, common = await calls(chosen, window)
            share = f"{common / steps:.1%} common ({common})" if common >= 0 else "no fast path"
            print(
                f"{args.label:8} {window:7d} calls {total:9,} steps {steps:5} "
                f"= {total / steps:6.1f} a step; {share}",
                flush=True,
            )
            continue
        peer = AgentScopePeer(window)
        await ctxlab_prepare(*chosen[0].load(), window)  # untimed: imports, first-use caches
        await peer.run(*chosen[0].load())
        before = load()
        groups: dict[str, dict[str, float]] = {}
        for session in chosen:
            best = await timed(session, window, args.repeat, peer)
            group = groups.setdefault(session.group, {})
            for name, seconds in best.items():
                group[name] = group.get(name, 0.0) + seconds
        total = {n: sum(g[n] for g in groups.values()) * 1000 for n in ("prepare", "floor")}
        total["agentscope"] = sum(g["agentscope"] for g in groups.values()) * 1000
        print(
            f"{args.label:8} {window:7d} | prepare {total['prepare']:6.0f} floor "
            f"{total['floor']:5.0f} AS {total['agentscope']:6.0f} | prep/floor "
            f"{total['prepare'] / total['floor']:5.2f} prep/AS "
            f"{total['prepare'] / total['agentscope']:5.2f} floor/AS "
            f"{total['floor'] / total['agentscope']:5.2f} ({before} -> {load()})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
