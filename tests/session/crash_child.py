"""A child process for the crash-safety test: an endless agent session on a session log.

Usage: python crash_child.py DB. Resumes the session (fixed ids) and runs one call of many tool
steps; prints ``COMMITTED <turn>`` (flushed) once each turn's transaction returned.
"""

from __future__ import annotations

import asyncio
import sys

from ctxlab import ApproximateCounter, extractive_summarizer
from ctxlab.agent import Agent
from ctxlab.models import FunctionModel, tool_call


def work(step: int) -> str:
    """Produce some output."""
    return f"step {step} output /src/module_{step}.py\n" + "data " * 50


def model(request, info):  # type: ignore[no-untyped-def]
    # Three parallel calls a step: every turn commits many events, so kills land inside commits.
    return [tool_call("work", {"step": info.index * 3 + k}) for k in range(3)]


async def main(path: str) -> None:
    agent = Agent(
        name="crash",
        model=FunctionModel(model, context_window=8_000, summarizer=extractive_summarizer),
        tools=[work],
        counter=ApproximateCounter(),
        session_log=path,
        user_id="u1",
        session_id="s1",
        max_steps=100_000,
    )

    def report(event) -> None:  # type: ignore[no-untyped-def]
        if event.type == "turn_committed":
            print(f"COMMITTED {event.turn}", flush=True)

    agent.subscribe(report)
    # Warm before READY: the first request would otherwise spend its time loading a tokenizer,
    # and the parent's kills would all land before any commit.
    agent.model.counter.count_text("warm up")
    print(f"READY {len(agent.history)}", flush=True)
    await agent("continue the work")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
