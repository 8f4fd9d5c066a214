"""OpenAIModel through the real openai SDK against a local Chat Completions server."""

from __future__ import annotations

import pytest

pytest.importorskip("openai")

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.exceptions import ContextOverflowError, ModelError, RateLimitError
from ctxlab.models import OpenAIModel, ScriptedModel
from tests.models.chat_api import ChatAPI, completion, error


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def model_for(api: ChatAPI, **kwargs: object) -> OpenAIModel:
    return OpenAIModel("local-model", base_url=api.url, max_retries=0, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("stream", [False, True])
async def test_tool_loop_through_the_sdk(stream: bool) -> None:
    script = [
        completion(
            "Adding.", [("call_1", "add", {"a": 2, "b": 3})], prompt_tokens=120, cached_tokens=80
        ),
        completion("The sum is 5.", prompt_tokens=150, completion_tokens=7),
    ]
    with ChatAPI(script) as api:
        agent = Agent(
            system_prompt="Be brief.",
            model=model_for(api, stream=stream, temperature=0),
            tools=[add],
            counter=ApproximateCounter(),
        )
        events = [e async for e in agent.stream_events("What is 2 + 3?")]
    assert events[-1].type == "reply" and events[-1].text == "The sum is 5."
    first, second = api.requests
    assert first["model"] == "local-model" and first["temperature"] == 0
    assert first["messages"][0] == {"role": "system", "content": "Be brief."}
    assert first["tools"][0]["function"]["name"] == "add"
    assert first.get("stream", False) is stream
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "add"
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "5"}
    usages = [e.usage for e in events if e.type == "model_response"]
    # OpenAI's prompt tokens include the cached ones; ctxlab keeps them apart.
    assert (usages[0].input_tokens, usages[0].cache_read_input_tokens) == (40, 80)
    assert usages[0].total_input_tokens == 120
    assert agent.manifests[-1].provider_usage == usages[1]
    if stream:
        assert "".join(e.text for e in events if e.type == "text_delta").endswith("The sum is 5.")


async def test_errors_are_typed_and_an_overflow_is_recovered() -> None:
    overflow = error(
        400, "context_length_exceeded", "This model's maximum context length is 4096 tokens"
    )

    def fetch(page: int) -> str:
        """Fetch a page."""
        return f"page {page} " + "text " * 300

    calls = [completion(None, [(f"c{i}", "fetch", {"page": i})]) for i in range(3)]
    with ChatAPI([*calls, completion("read"), overflow, completion("recovered")]) as api:
        model = model_for(api, context_window=4_000, max_tokens=200)
        # Summaries by a local extractive model: the server's script holds reasoning answers only.
        agent = Agent(
            model=model,
            tools=[fetch],
            counter=ApproximateCounter(),
            summary_model=ScriptedModel([]),
        )
        await agent("read three pages")
        events = [e async for e in agent.stream_events("and now?")]
    assert [e.trigger for e in events if e.type == "compaction"] == ["overflow"]
    assert events[-1].type == "reply" and events[-1].text == "recovered"
    with ChatAPI([error(429, "rate_limit", "slow down"), error(400, "bad", "nope")]) as api:
        agent = Agent(model=model_for(api), counter=ApproximateCounter())
        with pytest.raises(RateLimitError):
            await agent("hi")
        with pytest.raises(ModelError, match="rejected") as caught:
            await agent("again")
    assert not isinstance(caught.value, ContextOverflowError)
    assert caught.value.__cause__ is not None


@pytest.mark.parametrize("stream", [False, True])
async def test_a_reply_nested_too_deeply_is_a_model_error_and_the_agent_goes_on(
    stream: bool,
) -> None:
    from ctxlab.exceptions import MalformedReply

    deep: object = 1
    for _ in range(600):
        deep = {"a": deep}
    script = [completion("", [("call_1", "add", deep)]), completion("Fine now.")]
    with ChatAPI(script) as api:
        agent = Agent(
            model=model_for(api, stream=stream), tools=[add], counter=ApproximateCounter()
        )
        with pytest.raises(MalformedReply, match="nested more than 100 levels"):
            await agent("go")
        assert not any(m.role == "assistant" for m in agent.context.conversation)
        assert (await agent("again")).content[0].text == "Fine now."
