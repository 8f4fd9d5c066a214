"""Summary requests through the real agent loop: every corpus session played back by `Agent`
(recorded answers, recorded tool results; `ctxlab.agent.play`) at 32k, 16k and 8k windows, and
every summary request it built measured against the window.

    python benchmarks/agent_fit_bench.py [--windows 32000 16000 8000]

Prints, per window: sessions played (and stopped early, with why), compactions, summary
requests, and how many exceed the window less 5 % (the target is 0) or their own input limit;
the largest summary request as a share of the window."""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter

from ctxlab import TiktokenCounter, load_transcript
from ctxlab.agent import Agent, play, recorded_model, recorded_tools
from ctxlab.io._transcript import corpus_dir


async def one(path, window: int, counter: TiktokenCounter) -> dict[str, object]:
    transcript = load_transcript(path)
    messages = transcript.messages
    agent = Agent(
        model=recorded_model(messages, context_window=window),
        tools=recorded_tools(messages),
        system_prompt=transcript.system,
        counter=counter,
        max_steps=10_000,
    )
    done = await play(agent, messages)
    summaries = [m for m in agent.manifests if m.purpose == "summary"]
    return {
        "error": done.error,
        "compactions": sum(
            1 for m in agent.manifests for t in m.transforms if t.kind == "history_compaction"
        ),
        "summaries": len(summaries),
        "over_window": sum(1 for m in summaries if m.estimated_input_tokens > window * 0.95),
        "over_limit": sum(1 for m in summaries if m.validation != "passed"),
        "largest": max((m.estimated_input_tokens for m in summaries), default=0),
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--windows", type=int, nargs="+", default=[32_000, 16_000, 8_000])
    args = parser.parse_args()
    counter = TiktokenCounter()
    paths = sorted((corpus_dir() / "norm").glob("*.jsonl"))
    for window in args.windows:
        totals: Counter[str] = Counter()
        largest = 0
        errors: list[str] = []
        for path in paths:
            row = await one(path, window, counter)
            for key in ("compactions", "summaries", "over_window", "over_limit"):
                totals[key] += int(row[key])  # type: ignore[call-overload]
            largest = max(largest, int(row["largest"]))  # type: ignore[call-overload]
            if row["error"]:
                errors.append(f"{path.stem[:40]}: {str(row['error'])[:120]}")
        print(
            f"window {window:>6}: {len(paths)} sessions ({len(errors)} stopped early), "
            f"{totals['compactions']} compactions, {totals['summaries']} summary requests, "
            f"{totals['over_window']} over the window less 5 %, {totals['over_limit']} over "
            f"their limit (not sent); largest {largest} = {largest / window:.2f} of the window"
        )
        for error in errors:
            print(f"    stopped: {error}")


if __name__ == "__main__":
    asyncio.run(main())
