"""Preparation where compaction happens: ctxlab against AgentScope at 200k, 32k and 16k windows.

Every session is fed as a live one: at each reasoning boundary the new messages arrive and one
request is prepared. Contenders, in the same run, on the same inputs:

- **ctxlab prepare**: `prepare` at every boundary, committing its candidate state (the loop of
  `replay` without what a replay adds for analysis), exact counts (the default counter, a cold
  `TokenCache`), the summary answered at once by a stub summarizer — preparation against
  preparation;
- **ctxlab replay**: `replay` with every compaction's retention read (preparation plus the
  grading of every compaction) and then pricing every request (`costs_of_manifests`): what an
  analysis of the session costs;
- **AgentScope 2.0.11**: its `compress_context()` at every boundary with a stub model answering
  the summary at once (`_agentscope_peer`), so its compression path really runs;
- **the id-and-count floor**: the least any preparation with ctxlab's figures must do, and
  nothing else — every message's id (its content hash) and every text counted exactly once (one
  batch, one thread), one `ManifestItem` per message, and a `ModelRequest` and `ContextManifest`
  per step over a shared view (no copy, no budget, no truncation, no compaction, no
  validation). ``floor÷AS`` is how far below AgentScope's estimate (bytes / 4) exact counts and
  ids alone already are: no preparation of these sessions can be faster than this ratio.

Sessions: the corpus (``$CTXLAB_CORPUS/norm/*.jsonl``) and **stitched** long sessions (corpus
sessions concatenated until ``--stitch`` messages). The corpus is split by name into a tuned
part (the sessions profiled while making the pipeline faster) and a **held-out** part (never
profiled), and stitched sessions are built within each part: the four groups are reported apart.

Every repeat is cold for every contender (the transcript re-read from disk: fresh message
objects, no cached hash or count; fresh caches, a fresh AgentScope agent); contenders are
interleaved within each repeat (their order rotates); the fastest repeat of each is kept.

Usage: python benchmarks/compaction_bench.py [--windows 200000,32000,16000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from _agentscope_peer import AgentScopePeer  # benchmarks/ is on sys.path when run as a script
from _corpus_args import Messages, Session, chosen_sessions, corpus_args, windows_of

from ctxlab import AssistantMessage, UserMessage
from ctxlab.analysis._cost import costs_of_manifests
from ctxlab.analysis._prices import price_for
from ctxlab.analysis._replay import ReplayStep, replay
from ctxlab.manifest import ContextManifest, ManifestItem
from ctxlab.messages import ModelRequest, request_start
from ctxlab.pipeline import SummaryRequest
from ctxlab.tokens import TokenCache, default_counter, load_encoding
from ctxlab.tokens._parts import block_parts


async def stub_summarizer(request: SummaryRequest) -> Mapping[str, Any]:
    """Every field of the schema, answered at once (as AgentScope's stub model answers)."""
    return {name: f"{name} (stub)" for name in request.schema["properties"]}


def cold_replay(
    messages: Messages,
    system: str,
    window: int,
    *,
    grade: bool = True,
    counter: TokenCache | None = None,
) -> AsyncIterator[ReplayStep]:
    """`replay` with cold exact counts (a fresh `TokenCache`, unless ``counter`` is given: the
    counts an earlier run kept) and the stub summarizer."""
    return replay(
        messages,
        context_window=window,
        counter=TokenCache(default_counter()) if counter is None else counter,
        system=system,
        summarizer=stub_summarizer,
        grade=grade,
    )


async def ctxlab_prepare(
    messages: Messages, system: str, window: int, counter: TokenCache | None = None
) -> tuple[float, float]:
    """Seconds to prepare every request (`replay` with ``grade=False``: nothing graded or
    priced): wall clock and the process's CPU time (both counting threads included).
    ``counter``: a `TokenCache` an earlier run filled (counts kept across runs), else cold."""
    start, start_cpu = time.perf_counter(), time.process_time()
    async for _ in cold_replay(messages, system, window, grade=False, counter=counter):
        pass
    return time.perf_counter() - start, time.process_time() - start_cpu


def id_count_floor(
    messages: Messages, system: str, window: int, known: Mapping[str, int] | None = None
) -> tuple[float, float]:
    """Seconds (wall, CPU) of the id-and-count floor (see the module's docstring) over the
    steps a replay prepares; its own code, sharing nothing with the pipeline but the counting
    rules (`block_parts`) and the ids (`content_hash`) that define ctxlab's figures.

    ``known``: counts kept by content from an earlier run (`known_counts`: a block's texts'
    count by its content hash, the System prompt's by its text) — the floor when counts are
    made once per content across runs: every id still computed, nothing tokenized."""
    start, start_cpu = time.perf_counter(), time.process_time()
    counter = default_counter()
    content = messages[request_start(messages) :]
    # What `replay` counts: every message before the last assistant turn (that turn is a
    # request's boundary, never sent itself).
    last = max((i for i, m in enumerate(content) if isinstance(m, AssistantMessage)), default=0)
    total, counts = _floor_counts(content[:last], system, counter, known)
    items: list[ManifestItem] = []
    sent: list[UserMessage | AssistantMessage] = []
    for number, message in enumerate(content[: last + 1]):
        if isinstance(message, AssistantMessage) and sent:
            ModelRequest(system, sent)
            ContextManifest(
                request_id=f"step-{number}",
                purpose="reasoning",
                model="",
                estimated_input_tokens=total,
                input_limit=window,
                counting_method=counter.method,
                exact=True,
                items=items,
                transforms=(),
                validation="passed",
                context_size=window,
            )
        if number == last:
            break
        tokens = counts[number]
        total += tokens
        digest = message.content_hash
        items.append(
            ManifestItem(
                f"message/{digest}", "message", "conversation", tokens, digest, role=message.role
            )
        )
        sent.append(message)
    return time.perf_counter() - start, time.process_time() - start_cpu


def _floor_counts(
    sent: Messages, system: str, counter: Any, known: Mapping[str, int] | None
) -> tuple[int, list[int]]:
    """The System prompt's count and each message's: its texts counted in one batch, or looked
    up by content in ``known``."""
    if known is not None:
        return known[system], [sum(known[b.content_hash] for b in m.content) for m in sent]
    texts, widths = [system], []
    for message in sent:
        parts = [text for block in message.content for text in block_parts(block)[1]]
        widths.append(len(parts))
        texts.extend(parts)
    counts = iter(counter.count_many(texts))
    system_count = next(counts)
    return system_count, [sum(next(counts) for _ in range(width)) for width in widths]


def known_counts(messages: Messages, system: str) -> dict[str, int]:
    """What `id_count_floor` looks up when counts are kept by content: each block's texts'
    count by the block's content hash, the System prompt's by its text (made untimed, as an
    earlier run would have)."""
    counter = default_counter()
    known = {system: counter.count_text(system)}
    for message in messages:
        for block in message.content:
            known[block.content_hash] = sum(map(counter.count_text, block_parts(block)[1]))
    return known


async def replayed(messages: Messages, system: str, window: int) -> list[ReplayStep]:
    """Every step of `replay` (cold counts, the stub summarizer), every compaction graded (a
    replay grades a compaction when its retention is read: read here, as an analysis does)."""
    done = [step async for step in cold_replay(messages, system, window)]
    for step in done:
        if step.compaction is not None:
            step.compaction.retention  # noqa: B018 - graded on first read
    return done


async def ctxlab_replay(messages: Messages, system: str, window: int) -> tuple[float, float]:
    """Seconds of `replay` (preparation and retention grading) and of pricing its requests."""
    start = time.perf_counter()
    manifests = [step.manifest for step in await replayed(messages, system, window)]
    graded = time.perf_counter()
    costs = costs_of_manifests(manifests, price_for("claude-sonnet-4-5"))
    assert len(costs) == len(manifests)
    return graded - start, time.perf_counter() - graded


async def measure(session: Session, window: int, repeat: int, peer: Any) -> dict[str, Any]:
    best: dict[str, float] = {}

    def keep(name: str, seconds: float) -> None:
        best[name] = min(best.get(name, float("inf")), seconds)

    async def prep() -> None:
        messages, system = session.load()
        wall, cpu = await ctxlab_prepare(messages, system, window)
        keep("prepare", wall)
        keep("prepare_cpu", cpu)

    async def analysed() -> None:
        messages, system = session.load()
        graded, priced = await ctxlab_replay(messages, system, window)
        keep("replay", graded)
        keep("pricing", priced)
        keep("analysis", graded + priced)

    async def floor() -> None:
        messages, system = session.load()
        wall, cpu = id_count_floor(messages, system, window)
        keep("floor", wall)
        keep("floor_cpu", cpu)

    async def theirs() -> None:
        messages, system = session.load()
        keep("agentscope", sum(await peer.run(messages, system)))
        keep("agentscope_cpu", peer.cpu)

    contenders: list[Callable[[], Awaitable[None]]] = [prep, analysed, floor]
    if peer is not None:
        contenders.append(theirs)
    for turn in range(repeat):
        for k in range(len(contenders)):  # interleaved, the order rotating each repeat
            await contenders[(turn + k) % len(contenders)]()
    messages, system = session.load()
    before = peer.summaries if peer is not None else 0
    if peer is not None:
        await peer.run(messages, system)
    steps = await replayed(messages, system, window)  # untimed: its compactions are said
    return {
        "session": session.name,
        "group": session.group,
        "window": window,
        "messages": len(messages),
        "steps": len(steps),
        "compactions": sum(s.compaction is not None for s in steps),
        "as_compressions": (peer.summaries - before) if peer is not None else 0,
        **{f"{k}_ms": v * 1000 for k, v in best.items()},
    }


def summarize(rows: list[dict[str, Any]], windows: list[int]) -> None:
    groups = ["corpus/tuned", "corpus/held-out", "stitched/tuned", "stitched/held-out"]
    print()
    print(
        f"{'window':>7} {'group':18} {'n':>3} {'steps':>6} {'compact':>7} {'AS cmp':>6} |"
        f" {'prepare':>8} {'replay':>8} {'pricing':>7} {'floor':>7} {'AS':>8} |"
        f" {'prep÷AS':>7} {'cpu÷AS':>7} {'anal÷AS':>7} {'floor÷AS':>8} {'fl cpu':>6}"
    )
    for window in windows:
        for group in groups:
            chosen = [r for r in rows if r["window"] == window and r["group"] == group]
            if not chosen:
                continue
            total = {
                k: sum(r[k] for r in chosen)
                for k in ("steps", "compactions", "as_compressions", "prepare_ms", "replay_ms")
            }
            total["pricing_ms"] = sum(r["pricing_ms"] for r in chosen)
            theirs = sum(r.get("agentscope_ms", float("nan")) for r in chosen)
            theirs_cpu = sum(r.get("agentscope_cpu_ms", float("nan")) for r in chosen)
            cpu = sum(r["prepare_cpu_ms"] for r in chosen) / theirs_cpu
            floor = sum(r["floor_ms"] for r in chosen)
            floor_cpu = sum(r["floor_cpu_ms"] for r in chosen) / theirs_cpu
            print(
                f"{window:7d} {group:18} {len(chosen):3d} {total['steps']:6d}"
                f" {total['compactions']:7d} {total['as_compressions']:6d} |"
                f" {total['prepare_ms']:8.0f} {total['replay_ms']:8.0f}"
                f" {total['pricing_ms']:7.0f} {floor:7.0f} {theirs:8.0f} |"
                f" {total['prepare_ms'] / theirs:7.2f} {cpu:7.2f}"
                f" {(total['replay_ms'] + total['pricing_ms']) / theirs:7.2f}"
                f" {floor / theirs:8.2f} {floor_cpu:6.2f}"
            )


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    corpus_args(parser, windows="200000,32000,16000", group="", stitched_only=True)
    parser.add_argument("--out", default="benchmarks/results/compaction_bench.json")
    args = parser.parse_args()
    windows = windows_of(args)
    chosen = chosen_sessions(args)
    if not chosen:
        return 2
    load_encoding("cl100k_base")
    try:
        AgentScopePeer(windows[0])
    except ImportError as exc:
        print(f"AgentScope not installed ({exc}); pip install agentscope==2.0.11 to compare")
        return 2
    # Warm-up, untimed: imports and first-use caches of every path.
    warm = chosen[0]
    for window in windows:
        messages, system = warm.load()
        await ctxlab_prepare(messages, system, window)
        await ctxlab_replay(messages, system, window)
        id_count_floor(messages, system, window)
        await AgentScopePeer(window).run(messages, system)
    print(
        f"counts: {default_counter().method} (exact); summaries answered at once by a stub on "
        f"both sides; best of {args.repeat} cold, interleaved repeats; times in ms"
    )
    rows = []
    for window in windows:
        peer = AgentScopePeer(window)
        for session in chosen:
            row = await measure(session, window, args.repeat, peer)
            rows.append(row)
            print(
                f"{window:7d} {row['group']:18} {row['session'][:40]:40} {row['messages']:5d}"
                f" {row['steps']:5d} c{row['compactions']:<3d} as{row['as_compressions']:<3d} "
                f"prep {row['prepare_ms']:8.1f} replay {row['replay_ms']:8.1f} "
                f"price {row['pricing_ms']:6.1f} floor {row['floor_ms']:6.1f} "
                f"AS {row['agentscope_ms']:8.1f} "
                f"prep÷AS {row['prepare_ms'] / row['agentscope_ms']:5.2f}",
                flush=True,
            )
    summarize(rows, windows)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
