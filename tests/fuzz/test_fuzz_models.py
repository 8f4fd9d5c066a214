"""The model adapters against a local server answering with hostile bodies — a Messages API
reply or a Chat Completions one with values no provider sends, its event stream damaged, an error
body of any shape under any status, bytes that are not JSON — through the real SDKs and an agent
that uses the reply: a reply, or a documented error (a `ModelError` keeps the session as it was),
in bounded time (see `tests.fuzz.contract`)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from tests.fuzz.contract import EXAMPLES, FUZZ, holds
from tests.fuzz.mutations import damaged_bytes, mutated_value
from tests.models._local_server import RawServer
from tests.models.chat_api import completion
from tests.models.messages_api import _sse, message

Answer = tuple[int, str, bytes]
"""(status, content type, body) the server sends to every request."""


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _events(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """The (event, data) of the stream the Messages API sends for ``body``."""
    pairs = []
    for chunk in _sse(body):
        name, data = chunk.decode().strip().split("\n", 1)
        pairs.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return pairs


def _stream(pairs: Any) -> bytes:
    """The events as a stream; a pair a mutation broke is sent whole as an event's data."""
    out = []
    for pair in pairs if isinstance(pairs, list) else [pairs]:
        good = isinstance(pair, list | tuple) and len(pair) == 2 and isinstance(pair[0], str)
        name, data = pair if good else ("message_delta", pair)
        out.append(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
    return b"".join(out)


SOUND = message(
    [
        {"type": "text", "text": "Adding."},
        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}},
    ]
)


@st.composite
def anthropic_answers(draw: st.DrawFn) -> tuple[bool, Answer]:
    """(stream?, answer): a hostile reply as JSON or as a stream, or an error of any shape."""
    kind = draw(st.sampled_from(["json", "stream", "error", "bytes"]))
    status = draw(st.sampled_from([200, 400, 401, 404, 413, 429, 500, 503, 529]))
    if kind == "json":
        body = json.dumps(draw(mutated_value(json.loads(json.dumps(SOUND))))).encode()
        return False, (200, "application/json", draw(damaged_bytes(body)))
    if kind == "stream":
        pairs = draw(mutated_value(_events(json.loads(json.dumps(SOUND)))))
        events = _stream(pairs)
        return True, (200, "text/event-stream", draw(damaged_bytes(events)))
    if kind == "error":
        error = {"type": "error", "error": {"type": "api_error", "message": "prompt is too long"}}
        body = json.dumps(draw(mutated_value(error))).encode()
        return draw(st.booleans()), (status, "application/json", body)
    return draw(st.booleans()), (status, "application/json", draw(st.binary(max_size=300)))


async def _ask(model: Any) -> None:
    from ctxlab.messages import find_tool_pair_problems

    agent = Agent(model=model, tools=[add], counter=ApproximateCounter(), max_steps=3)
    try:
        await agent("2 + 3?")
    finally:
        # Whatever failed, the session holds no half reply: every call it holds is answered.
        assert find_tool_pair_problems(agent.context.conversation) == []


def _run(make_model: Any, answer: Answer) -> None:
    with RawServer(answer) as server:
        holds(lambda: asyncio.run(_ask(make_model(server.url))))


# The SDK warns as it copies a value of the wrong type: its warning, not ctxlab's (an error
# under the suite's ``filterwarnings = error``).
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@settings(FUZZ, max_examples=max(EXAMPLES // 2, 5))
@given(anthropic_answers())
def test_a_hostile_messages_api(case: tuple[bool, Answer]) -> None:
    import anthropic

    from ctxlab.models import AnthropicModel

    stream, answer = case

    def make(url: str) -> AnthropicModel:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=url, max_retries=0, timeout=10)
        # No retries: an error status is answered at once (the retries and their waits are
        # tests/models/test_retries.py's), so every example ends in bounded time.
        return AnthropicModel("claude-sonnet-4-6", client=client, stream=stream, max_retries=0)

    _run(make, answer)


@st.composite
def chat_answers(draw: st.DrawFn) -> Answer:
    sound = completion("Adding.", [("call_1", "add", {"a": 2, "b": 3})])
    if draw(st.booleans()):
        body = json.dumps(draw(mutated_value(sound))).encode()
        return 200, "application/json", draw(damaged_bytes(body))
    status = draw(st.sampled_from([200, 400, 429, 500]))
    error = {"error": {"message": "context_length_exceeded", "type": "invalid_request_error"}}
    return status, "application/json", json.dumps(draw(mutated_value(error))).encode()


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@settings(FUZZ, max_examples=max(EXAMPLES // 2, 5))
@given(chat_answers())
def test_a_hostile_chat_completions_api(answer: Answer) -> None:
    openai = pytest.importorskip("openai", reason="OpenAIModel needs the openai extra")

    from ctxlab.models import OpenAIModel

    def make(url: str) -> OpenAIModel:
        client = openai.AsyncOpenAI(api_key="k", base_url=url, max_retries=0, timeout=10)
        return OpenAIModel("local-model", client=client, max_retries=0)

    _run(make, answer)
