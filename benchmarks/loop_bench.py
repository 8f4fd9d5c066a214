"""ctxlab's own overhead per reasoning step of the agent loop, against AgentScope 2.0.11.

A long recorded session (the largest corpus transcript, or a synthetic one when the corpus is
absent) is played through each framework's real agent loop: a stub model answers each reasoning
request with the recorded assistant turn reduced to one tool call, and the tool returns the
recorded output. Time spent inside the model and the tool is subtracted, so what remains is the
framework's own work per step: preparing the request (counting, truncation, compaction checks,
the manifest), running the tool call machinery, and bookkeeping.

ctxlab counts with its default counter (cl100k_base: toktok-rs when installed, tiktoken's counts);
AgentScope estimates (bytes / 4).

Usage: python benchmarks/loop_bench.py [--window 200000] [--steps N]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time
from typing import Any

from ctxlab import ContextConfig
from ctxlab.agent import Agent
from ctxlab.io._transcript import corpus_dir, load_transcript
from ctxlab.manifest import ProviderUsage
from ctxlab.messages import AssistantMessage, TextBlock, ToolUseBlock, UserMessage
from ctxlab.models import FunctionModel, ModelResponse
from ctxlab.tokens import default_counter, load_encoding


def workload(limit: int) -> tuple[str, list[tuple[str, str]]]:
    """(name, [(assistant text, tool output)]) from the longest transcript, or synthetic."""
    files = sorted((corpus_dir() / "norm").glob("*.jsonl"), key=lambda p: p.read_text().count("\n"))
    if not files:
        steps = [
            (f"step {i}: reading", f"file_{i}.py\n" + "x = 1\n" * (50 + i % 200))
            for i in range(limit)
        ]
        return "synthetic", steps
    transcript = load_transcript(files[-1])
    steps: list[tuple[str, str]] = []
    messages = transcript.messages
    for index, message in enumerate(messages[:-1]):
        following = messages[index + 1]
        if isinstance(message, AssistantMessage) and isinstance(following, UserMessage):
            text = " ".join(b.text for b in message.content if isinstance(b, TextBlock))
            output = "\n".join(r.text for r in following.tool_results)
            if output:
                steps.append((text or "working", output))
    return transcript.name, steps[:limit]


class Timer:
    """Accumulates the time spent inside the model and the tool."""

    def __init__(self) -> None:
        self.outside = 0.0

    def add(self, start: float) -> None:
        self.outside += time.perf_counter() - start


async def run_ctxlab(steps: list[tuple[str, str]], window: int) -> tuple[float, int]:
    timer = Timer()
    replies: list[ModelResponse] = []
    for i, (text, _) in enumerate(steps):
        message = AssistantMessage(
            content=(
                TextBlock(text=text),
                ToolUseBlock(id=f"call_{i}", name="run", input={"step": i}),
            )
        )
        replies.append(ModelResponse(message, "tool_use", ProviderUsage(1000, 50)))
    replies.append(
        ModelResponse(AssistantMessage(content="done"), "end_turn", ProviderUsage(1000, 5))
    )
    position = 0

    def model(request: Any, info: Any) -> ModelResponse:
        nonlocal position
        start = time.perf_counter()
        reply = replies[position]
        position += 1
        timer.add(start)
        return reply

    async def run(step: int) -> str:
        """Run a recorded step."""
        start = time.perf_counter()
        output = steps[step][1]
        timer.add(start)
        return output

    agent = Agent(
        system_prompt="You are a coding agent.",
        model=FunctionModel(model, context_window=window),
        tools=[run],
        context_config=ContextConfig(),
        counter=default_counter(),
        max_steps=len(steps) + 5,
    )
    start = time.perf_counter()
    await agent("Work through the recorded session.")
    total = time.perf_counter() - start
    return total - timer.outside, len(agent.manifests)


async def run_agentscope(steps: list[tuple[str, str]], window: int) -> tuple[float, int]:
    import json

    from agentscope.agent import Agent as AsAgent
    from agentscope.agent import ContextConfig as AsConfig
    from agentscope.agent._config import ReActConfig
    from agentscope.credential import CredentialBase
    from agentscope.message import TextBlock as AsText
    from agentscope.message import UserMsg
    from agentscope.message._block import ToolCallBlock
    from agentscope.model import ChatModelBase
    from agentscope.model._model_response import ChatResponse, FinishedReason
    from agentscope.permission import PermissionBehavior, PermissionDecision
    from agentscope.tool import FunctionTool, Toolkit
    from pydantic import BaseModel

    timer = Timer()
    position = 0
    calls = 0

    class Params(BaseModel):
        pass

    class Summary:
        def __init__(self) -> None:
            self.content = dict.fromkeys(
                [
                    "task_overview",
                    "current_state",
                    "important_discoveries",
                    "next_steps",
                    "context_to_preserve",
                ],
                "summary",
            )
            self.finished_reason = FinishedReason.COMPLETED

    from agentscope.formatter import AnthropicChatFormatter

    class StubModel(ChatModelBase):
        # Like the real Anthropic model; formatting the request is left out on both sides.
        formatter = AnthropicChatFormatter()

        async def _call_api(self, *args: Any, **kwargs: Any) -> Any:
            nonlocal position, calls
            start = time.perf_counter()
            calls += 1
            if position < len(steps):
                text = steps[position][0]
                content: list[Any] = [
                    AsText(text=text),
                    ToolCallBlock(
                        id=f"call_{position}", name="run", input=json.dumps({"step": position})
                    ),
                ]
            else:
                content = [AsText(text="done")]
            position += 1
            timer.add(start)
            return ChatResponse(content=content, is_last=True)

        async def generate_structured_output(self, *args: Any, **kwargs: Any) -> Any:
            return Summary()

    async def run(step: int) -> str:
        """Run a recorded step.

        Args:
            step: The step.
        """
        start = time.perf_counter()
        output = steps[step][1]
        timer.add(start)
        return output

    allow = PermissionDecision(behavior=PermissionBehavior.ALLOW, message="benchmark")
    agent = AsAgent(
        name="bench",
        system_prompt="You are a coding agent.",
        model=StubModel(
            credential=CredentialBase(), model="stub", parameters=Params(), context_size=window
        ),
        toolkit=Toolkit(tools=[FunctionTool(run, permission=allow)]),
        context_config=AsConfig(),
        react_config=ReActConfig(max_iters=len(steps) + 5),
    )
    start = time.perf_counter()
    await agent.reply(UserMsg(name="user", content="Work through the recorded session."))
    total = time.perf_counter() - start
    return total - timer.outside, calls


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=200_000)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("agentscope").setLevel(logging.ERROR)
    load_encoding("cl100k_base")
    name, steps = workload(args.steps)
    print(
        f"session: {name}, {len(steps)} tool steps, window {args.window} tokens; best of {args.repeat}"
    )
    ours = [await run_ctxlab(steps, args.window) for _ in range(args.repeat)]
    best, requests = min(ours)
    print(
        f"ctxlab      {requests:5d} requests  {best * 1000:9.1f} ms  {best / requests * 1e6:8.1f} µs/step"
    )
    try:
        theirs = [await run_agentscope(steps, args.window) for _ in range(args.repeat)]
    except ImportError as exc:
        print(f"AgentScope not installed ({exc}); pip install agentscope==2.0.11 to compare")
        return
    as_best, as_requests = min(theirs)
    print(
        f"AgentScope  {as_requests:5d} requests  {as_best * 1000:9.1f} ms  "
        f"{as_best / as_requests * 1e6:8.1f} µs/step"
    )
    ratio = (as_best / as_requests) / (best / requests)
    print(f"AgentScope µs/step ÷ ctxlab µs/step: {ratio:.2f} (>1: ctxlab is faster)")


if __name__ == "__main__":
    asyncio.run(main())
