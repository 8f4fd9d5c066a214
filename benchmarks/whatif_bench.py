"""What-if benchmark: replay latency after the first load, retention over the corpus, and the
cost of each preset relative to a baseline that can run and to never compacting — in one run.

    python benchmarks/whatif_bench.py [--window 32000] [--repeat 5] [--out results.json]

1. **Latency**: a 500-step session (real corpus sessions stitched end to end, tool ids renamed)
   replayed by `WhatIf` at a 32k window with tiktoken. First load (cold token cache), then a
   new trigger ratio re-replayed `--repeat` times (counts reused); the baseline measured in the
   same run is the same re-replay from a cold cache (a fresh `WhatIf` each time). Budget: 200 ms.
2. **Retention** (`ctxlab.retention`, measured on the original messages): every compaction of
   every corpus session, per preset and category (task lines, user instructions, files, edits,
   whole commands, outcomes, numbers the agent wrote, output-only paths): the share the next
   request holds, the share in the summary, and the control — the kept tail alone.
3. **Cost**: per preset, summed over the corpus at one price (Claude Sonnet's) under the same
   cache model (Anthropic, 5-minute TTL), relative to the feasible baseline (no summary, the
   oldest turns dropped to fit the window) — all-in, the input side, offline summaries (no
   summary calls), the per-session range — and to never compacting (the whole session at
   every step, which passes the window: how many requests is printed).

Needs the corpus (``$CTXLAB_CORPUS``, default ``../shared/corpus``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from ctxlab import ContextConfig, TiktokenCounter, Transcript, load_transcript
from ctxlab.analysis._cost import PRICES
from ctxlab.analysis._whatif import WhatIf
from ctxlab.io._transcript import corpus_dir
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.retention import CATEGORIES, measure_retention

PRESETS = ("ctxlab", "agentscope", "harness", "langchain", "observation_masking")


def sessions() -> list[Transcript]:
    folder = corpus_dir() / "norm"
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        sys.exit(f"no corpus at {folder}: set CTXLAB_CORPUS")
    return [load_transcript(f) for f in files]


def stitched(transcripts: list[Transcript], steps: int = 500) -> Transcript:
    """Sessions end to end until ``steps`` replies, tool ids made unique per session."""
    messages: list[UserMessage | AssistantMessage] = []
    replies = 0
    for number, transcript in enumerate(transcripts):
        for message in transcript.messages:
            if isinstance(message, AssistantMessage):
                if replies == steps:
                    return Transcript("stitched", {}, "", tuple(messages))
                replies += 1
            blocks: list[Any] = []
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    block = block.evolve(id=f"{block.id}-{number}")
                elif isinstance(block, ToolResultBlock):
                    block = block.evolve(tool_use_id=f"{block.tool_use_id}-{number}")
                blocks.append(block)
            if messages and messages[-1].role == message.role:
                merged = (*messages[-1].content, *blocks)
                messages[-1] = type(message)(content=merged)  # type: ignore[arg-type]
            else:
                messages.append(type(message)(content=tuple(blocks)))  # type: ignore[arg-type]
    return Transcript("stitched", {}, "", tuple(messages))


async def latency(session: Transcript, window: int, repeat: int) -> dict[str, float]:
    what = WhatIf(session, {"tuned": ContextConfig()}, context_window=window)
    started = time.perf_counter()
    await what.run()
    first = (time.perf_counter() - started) * 1000
    warm, cold = [], []
    for n in range(repeat):
        config = ContextConfig(trigger_ratio=0.5 + 0.05 * n)
        started = time.perf_counter()
        await what.set_config("tuned", config)
        warm.append((time.perf_counter() - started) * 1000)
        fresh = WhatIf(session, {"tuned": config}, context_window=window, counter=TiktokenCounter())
        started = time.perf_counter()
        await fresh.run()
        cold.append((time.perf_counter() - started) * 1000)
    return {
        "steps": sum(isinstance(m, AssistantMessage) for m in session.messages),
        "first_load_ms": first,
        "re_replay_ms": statistics.median(warm),
        "cold_replay_ms": statistics.median(cold),
    }


async def corpus_figures(transcripts: list[Transcript], window: int) -> dict[str, Any]:
    price = PRICES["claude-sonnet-4-6"]
    # Per preset and category: items, kept (summary, pinned task or tail), in the summary's own
    # text, in the pinned task, in the tail alone.
    sums = {p: {c: [0, 0, 0, 0, 0] for c in CATEGORIES} for p in PRESETS}
    worst = dict.fromkeys(PRESETS, 1.0)
    compactions = dict.fromkeys(PRESETS, 0)
    # Sums over the corpus (USD): each preset with model summaries, its input side, and the
    # offline variant (no summary calls); the two references; per-session ratios for ranges.
    cost = {p: {"all": 0.0, "input": 0.0, "offline": 0.0} for p in PRESETS}
    refs = {r: {"all": 0.0, "input": 0.0, "unsent": 0} for r in ("baseline", "unlimited")}
    ratios: dict[str, list[float]] = {p: [] for p in PRESETS}
    failed = dict.fromkeys(PRESETS, 0)
    counter = TiktokenCounter()
    for transcript in transcripts:
        configs = {p: ContextConfig.preset(p) for p in PRESETS}
        what = WhatIf(transcript, configs, context_window=window, counter=counter, price=price)
        await what.run()
        references = what.references()
        for key, row in zip(("baseline", "unlimited"), references.itertuples(), strict=True):
            refs[key]["all"] += row.cost
            refs[key]["input"] += row.input_cost
            refs[key]["unsent"] += row.over_limit
        feasible = float(references["cost"].iloc[0]) or 1.0
        for name, run in what.runs.items():
            failed[name] += 1 if run.error else 0
            ratios[name].append(run.cost / feasible)
            for step in run.steps:
                record = step.compaction
                if record is None or record.retention is None:
                    continue
                compactions[name] += 1
                for category in CATEGORIES:
                    r = record.retention[category]
                    row = sums[name][category]
                    row[0] += r.total
                    row[1] += r.kept
                    row[2] += r.in_summary
                    row[3] += r.in_pinned
                    row[4] += r.in_tail
                core = record.retention.core
                worst[name] = min(worst[name], core if core is not None else 1.0)
            outputs = sum(c.output for c in run.costs) * price.output / 1e6
            summary_cost = sum(c.cost for c in run.costs if c.purpose == "summary")
            cost[name]["all"] += run.cost
            cost[name]["input"] += run.cost - outputs
            cost[name]["offline"] += run.cost - summary_cost
    out: dict[str, Any] = {}
    for name in PRESETS:
        by_category = {
            c: {
                "items": t,
                "kept": k / t,
                "in_summary": m / t,
                "in_pinned": p / t,
                "control": a / t,
            }
            for c, (t, k, m, p, a) in sums[name].items()
            if t
        }
        out[name] = {
            "compactions": compactions[name],
            "retention": by_category,
            "retention_worst": worst[name],
            "all_vs_baseline": cost[name]["all"] / refs["baseline"]["all"],
            "input_vs_baseline": cost[name]["input"] / refs["baseline"]["input"],
            "offline_all_vs_baseline": cost[name]["offline"] / refs["baseline"]["all"],
            "all_vs_never_compact": cost[name]["all"] / refs["unlimited"]["all"],
            "session_range_vs_baseline": (min(ratios[name]), max(ratios[name])),
            "replays_failed": failed[name],
        }
    out["references"] = refs
    return out


async def model_summaries() -> list[dict[str, Any]]:
    """Claude Code's own compaction summaries (written by Claude) in the corpus's raw sessions,
    against the offline summarizer given the same span and the same number of tokens."""
    from ctxlab import load
    from ctxlab.pipeline import SummaryRequest, extractive_summarizer, render_summary

    counter = TiktokenCounter()
    config = ContextConfig()
    rows: list[dict[str, Any]] = []
    for path in sorted((corpus_dir() / "raw" / "claude_code").glob("*.jsonl")):
        transcript = load(path)
        start = 0
        for compaction in transcript.meta.get("compactions", []):
            index = compaction.get("summary_index")
            if index is None:
                continue
            summary = " ".join(
                b.text
                for b in transcript.messages[index].content
                if isinstance(b, TextBlock) and "summar" in b.text.lower()
            )
            span = transcript.messages[start:index]
            start = index
            if not summary or not span:
                continue
            budget = counter.count_text(summary)
            request = SummaryRequest(
                span,
                None,
                config.summary_schema,
                config.compression_prompt,
                budget_tokens=budget,
                count=counter.count_text,
            )
            ours = render_summary(await extractive_summarizer(request), config)
            model = measure_retention(span, summary, ())
            offline = measure_retention(span, ours, ())
            rows.append(
                {
                    "session": path.stem[:8],
                    "span_messages": len(span),
                    "summary_tokens": budget,
                    "offline_tokens": counter.count_text(ours),
                    "model": {k: model.share(k) for k in CATEGORIES},
                    "model_core": model.core,
                    "offline": {k: offline.share(k) for k in CATEGORIES},
                    "offline_core": offline.core,
                }
            )
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    transcripts = sessions()
    timing = await latency(stitched(transcripts), args.window, args.repeat)
    print(
        f"latency: {timing['steps']} steps; first load {timing['first_load_ms']:.0f} ms; "
        f"re-replay {timing['re_replay_ms']:.0f} ms (budget 200 ms: "
        f"{timing['re_replay_ms'] / 200:.2f}x); cold replay {timing['cold_replay_ms']:.0f} ms "
        f"(re-replay / cold {timing['re_replay_ms'] / timing['cold_replay_ms']:.2f})"
    )
    figures = await corpus_figures(transcripts, args.window)
    print(
        "retention by category: kept (in the summary's own text / in the pinned task / the kept "
        "tail alone = control)"
    )
    for name in PRESETS:
        row = figures[name]
        print(f"{name:20} compactions {row['compactions']:3}  worst {row['retention_worst']:.3f}")
        for category, r in row["retention"].items():
            print(
                f"{'':22}{category:13} {r['kept']:.3f} ({r['in_summary']:.3f} / pinned "
                f"{r['in_pinned']:.3f} / control {r['control']:.3f}) of {r['items']}"
            )
        low, high = row["session_range_vs_baseline"]
        print(
            f"{'':22}cost vs the feasible baseline: all-in {row['all_vs_baseline']:.3f} "
            f"(sessions {low:.2f}-{high:.2f}), input {row['input_vs_baseline']:.3f}, offline "
            f"summaries {row['offline_all_vs_baseline']:.3f}; vs never compacting (unlimited "
            f"window) {row['all_vs_never_compact']:.3f}; replays failed {row['replays_failed']}"
        )
    refs = figures["references"]
    print(
        f"references: drop-oldest baseline ${refs['baseline']['all']:.2f} "
        f"({refs['baseline']['unsent']} requests had their latest turn cut to fit); never compacting "
        f"${refs['unlimited']['all']:.2f} ({refs['unlimited']['unsent']} requests over the limit)"
    )
    summaries = await model_summaries()
    for row in summaries:
        print(
            f"Claude Code summary {row['session']} ({row['span_messages']} messages, "
            f"{row['summary_tokens']} tokens): model keeps {row['model_core'] or 0:.3f} "
            f"(retention over the target categories); the offline summary in as many tokens "
            f"({row['offline_tokens']}) {row['offline_core'] or 0:.3f}"
        )
    if args.out:
        payload = {"latency": timing, "corpus": figures, "model_summaries": summaries}
        args.out.write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
