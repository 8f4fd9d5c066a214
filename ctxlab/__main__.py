"""``python -m ctxlab demo``: run a demo session headless and print one row per preparation."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

from ctxlab.agent import CompactionEvent, ContextBuildEvent, Event, ReplyEvent
from ctxlab.demo import DEMO_PROMPT, demo_agent
from ctxlab.manifest import PLACEMENTS, step_row, transform_info
from ctxlab.models import AnthropicModel, DemoModel, Model


def _row(step: int, event: ContextBuildEvent, compactions: list[str]) -> str:
    row = step_row(event.manifest, step=step, call=event.call)
    kinds = ",".join(sorted({t.kind for t in event.manifest.transforms}))
    return (
        f"{step:>4} {row['purpose']:<10} "
        + " ".join(f"{row[c]:>7}" for c in PLACEMENTS)
        + f" {row['total']:>7}/{row['input_limit']:<7} {row['validation']:<8} "
        + (kinds or "-")
        + (f"  [{'; '.join(compactions)}]" if compactions else "")
    )


async def run_demo(prompt: str, workspace: str | None, model: Model) -> int:
    """Run one call of the demo agent and print the per-step table."""
    agent = demo_agent(workspace, model=model)
    print(f"workspace: {agent.workspace}\nmodel: {model.name} (window {model.context_window})\n")
    print(
        f"{'step':>4} {'purpose':<10} "
        + " ".join(f"{c[:7]:>7}" for c in PLACEMENTS)
        + f" {'total/limit':>15} {'valid':<8} transforms"
    )
    step = 0
    last: ContextBuildEvent | None = None
    compactions: list[str] = []
    reply = ""
    start = time.perf_counter()

    def flush() -> None:
        nonlocal last, compactions
        if last is not None:
            print(_row(step, last, compactions))
        last, compactions = None, []

    events: list[Event] = []
    async for event in agent.stream_events(prompt):
        events.append(event)
        if isinstance(event, ContextBuildEvent):
            flush()
            step += 1
            last = event
        elif isinstance(event, CompactionEvent):
            compactions.append(
                f"{event.trigger} {event.method} {event.tokens_before}->{event.tokens_after}"
            )
        elif isinstance(event, ReplyEvent):
            reply = event.text
    flush()
    seconds = time.perf_counter() - start
    offloads = sum(
        1
        for e in events
        if isinstance(e, ContextBuildEvent)
        for t in e.manifest.transforms
        if transform_info(t.kind).effect == "offload"
    )
    compacted = sum(1 for e in events if isinstance(e, CompactionEvent))
    print(f"\n{step} preparations, {offloads} offloads, {compacted} compactions, {seconds:.1f} s\n")
    print(reply)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ctxlab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the offline demo session and print its steps")
    demo.add_argument("--prompt", default=DEMO_PROMPT)
    demo.add_argument("--workspace", help="folder for the sample project (default: a temp dir)")
    demo.add_argument("--window", type=int, default=None, help="the demo model's context window")
    demo.add_argument(
        "--claude",
        metavar="MODEL",
        help="use Claude (e.g. claude-sonnet-4-6) instead of the demo model; needs ANTHROPIC_API_KEY",
    )
    args = parser.parse_args(argv)
    if args.claude:
        if not os.environ.get("ANTHROPIC_API_KEY"):
            print("--claude needs ANTHROPIC_API_KEY in the environment", file=sys.stderr)
            return 2
        model: Model = AnthropicModel(args.claude)
    else:
        model = DemoModel(context_window=args.window) if args.window else DemoModel()
    return asyncio.run(run_demo(args.prompt, args.workspace, model))


if __name__ == "__main__":
    sys.exit(main())
