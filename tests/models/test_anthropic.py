"""AnthropicModel through the real anthropic SDK against a local Messages API server."""

from __future__ import annotations

import json

import pytest

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.agent import Agent
from ctxlab.exceptions import (
    ContextOverflowError,
    ModelError,
    OverloadedError,
    RateLimitError,
    UsageError,
)
from ctxlab.models import AnthropicModel
from tests.models.messages_api import MessagesAPI, error, message


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def fetch(page: int) -> str:
    """Fetch a page of the log."""
    return f"page {page} /var/log/app-{page}.log\n" + "lorem ipsum " * 100


def model_for(api: MessagesAPI, **kwargs: object) -> AnthropicModel:
    return AnthropicModel(
        "claude-sonnet-4-6",
        api_key="test-key",
        base_url=api.url,
        max_retries=0,
        **kwargs,  # type: ignore[arg-type]
    )


def tool_use(id: str, name: str, **input: object) -> dict[str, object]:
    return {"type": "tool_use", "id": id, "name": name, "input": input}


@pytest.mark.parametrize("stream", [False, True])
async def test_tool_loop_through_the_sdk(stream: bool) -> None:
    script = [
        message(
            [{"type": "text", "text": "Adding."}, tool_use("toolu_1", "add", a=2, b=3)],
            input_tokens=120,
            cache_creation_input_tokens=80,
        ),
        message("The sum is 5.", input_tokens=20, cache_read_input_tokens=180, output_tokens=7),
    ]
    with MessagesAPI(script) as api:
        agent = Agent(
            system_prompt="Be brief.",
            model=model_for(api, stream=stream),
            tools=[add],
            counter=ApproximateCounter(),
        )
        events = [e async for e in agent.stream_events("What is 2 + 3?")]
    reply = events[-1]
    assert reply.type == "reply" and reply.text == "The sum is 5."
    first, second = api.requests
    assert first["model"] == "claude-sonnet-4-6" and first.get("stream", False) is stream
    assert first["tools"][0]["name"] == "add"
    assert first["tools"][0]["input_schema"]["required"] == ["a", "b"]
    # Prompt-cache breakpoints: after System, and on the latest message.
    assert first["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert second["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert second["messages"][-1]["content"][-1]["type"] == "tool_result"
    assert second["messages"][-1]["content"][-1]["content"] == "5"
    # Usage with cache fields lands in the events and the manifests.
    usages = [e.usage for e in events if e.type == "model_response"]
    assert usages[0].cache_creation_input_tokens == 80
    assert usages[1].cache_read_input_tokens == 180
    assert usages[1].total_input_tokens == 200
    assert agent.manifests[-1].provider_usage == usages[1]
    deltas = "".join(e.text for e in events if e.type == "text_delta")
    assert deltas == "Adding.The sum is 5."
    assert api.headers[0]["authorization"] == "Bearer test-key"


async def test_count_tokens_is_exact_from_the_api() -> None:
    with MessagesAPI() as api:
        model = model_for(api)
        agent = Agent(model=model, tools=[add], counter=ApproximateCounter())
        from ctxlab.messages import UserMessage
        from ctxlab.messages._request import ModelRequest

        request = ModelRequest(
            system="s", messages=(UserMessage(content="hello"),), tools=agent.tool_schemas()
        )
        counted = await model.count_tokens(request)
    assert api.requests[0]["messages"][0]["role"] == "user"
    assert counted == len(__import__("json").dumps(api.requests[0])) // 4


@pytest.mark.parametrize(
    ("answer", "raised", "status"),
    [
        (error(429, "rate_limit_error", "slow down"), RateLimitError, 429),
        (error(529, "overloaded_error", "Overloaded"), OverloadedError, 529),
        (error(400, "invalid_request_error", "messages: roles must alternate"), ModelError, 400),
        (
            error(
                400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
            ),
            ContextOverflowError,
            400,
        ),
    ],
)
async def test_errors_are_mapped_with_their_cause(
    answer: object, raised: type, status: int
) -> None:
    import anthropic

    with MessagesAPI([answer, answer]) as api:
        agent = Agent(model=model_for(api), counter=ApproximateCounter())
        with pytest.raises(raised) as info:
            await agent("hi")
    assert info.value.status_code == status
    assert isinstance(info.value.__cause__, anthropic.APIStatusError)
    assert type(info.value) is raised


async def test_overflow_recovery_through_the_sdk() -> None:
    too_long = error(400, "invalid_request_error", "prompt is too long: 2100 tokens > 2000 maximum")
    summary = dict.fromkeys(
        ["task_overview", "current_state", "important_discoveries", "next_steps"], "x"
    ) | {"context_to_preserve": "/var/log/app-0.log"}
    script = [
        *(message([tool_use(f"toolu_{i}", "fetch", page=i)]) for i in range(3)),
        message("first"),
        too_long,
        message(__import__("json").dumps(summary)),
        message("recovered"),
    ]
    with MessagesAPI(script) as api:
        model = model_for(api, context_window=2_000, max_tokens=200)
        agent = Agent(model=model, tools=[fetch], counter=ApproximateCounter())
        await agent("Read three pages")
        events = [e async for e in agent.stream_events("And now?")]
    assert [e.kind for e in events if e.type == "compaction"] == ["overflow"]
    assert events[-1].text == "recovered"
    assert "JSON Schema" in str(api.requests[-2]["messages"][-1])  # the summary request
    assert len(api.requests[-1]["messages"]) < len(api.requests[-3]["messages"])
    assert agent.context.summary is not None
    assert "/var/log/app-0.log" in agent.context.summary.text


async def test_summary_requests_reuse_the_prefix_and_parse_json() -> None:
    summary = {
        "task_overview": "read logs",
        "current_state": "three pages read",
        "important_discoveries": "/var/log/app-1.log",
        "next_steps": "answer",
        "context_to_preserve": "/var/log/app-0.log",
    }
    import json

    script = [
        *(message([tool_use(f"toolu_{i}", "fetch", page=i)]) for i in range(3)),
        message("first"),
        message("Here it is: " + json.dumps(summary)),
    ]
    with MessagesAPI(script) as api:
        agent = Agent(
            system_prompt="Be brief.",
            model=model_for(api, context_window=2_000, max_tokens=200),
            tools=[fetch],
            counter=ApproximateCounter(),
        )
        await agent("Read three pages")
        record = await agent.compress_context(ContextConfig(trigger_ratio=0.5, reserve_ratio=0.1))
    assert record is not None and record.kind == "summary"
    ask = api.requests[-1]
    assert ask["system"][0]["text"] == api.requests[-2]["system"][0]["text"] == "Be brief."
    assert ask["tools"] == api.requests[-2]["tools"]
    # The summary call starts with the last request's messages as they were sent (cache marks
    # aside): the provider reads them from its cache instead of billing the span again.
    previous = api.requests[-2]["messages"]

    def unmarked(messages: list[dict[str, object]]) -> str:
        return json.dumps(messages).replace(', "cache_control": {"type": "ephemeral"}', "")

    assert unmarked(ask["messages"][: len(previous)]) == unmarked(previous)
    assert "task_overview" in json.dumps(ask["messages"][-1])
    assert "except its last" in json.dumps(ask["messages"][-1])
    assert agent.context.summary is not None
    assert "/var/log/app-1.log" in agent.context.summary.text


def test_missing_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY"):
        AnthropicModel()


def test_context_windows_of_current_models() -> None:
    assert AnthropicModel("claude-opus-4-5-20251101", api_key="k").context_window == 200_000
    assert (
        AnthropicModel("claude-haiku-4-5", api_key="k", context_window=50_000).context_window
        == 50_000
    )


def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


@pytest.mark.parametrize("stream", [False, True])
async def test_parallel_calls_errors_and_denials_through_the_sdk(stream: bool) -> None:
    script = [
        message(
            [
                tool_use("toolu_a", "add", a=1, b=2),
                tool_use("toolu_b", "explode", reason="disk full"),
                tool_use("toolu_c", "fetch", page=3),
            ]
        ),
        message("Handled all three."),
    ]

    def hook(use):  # type: ignore[no-untyped-def]
        return ("deny", "no fetching") if use.name == "fetch" else "allow"

    with MessagesAPI(script) as api:
        agent = Agent(
            model=model_for(api, stream=stream),
            tools=[add, explode, fetch],
            permission=hook,
            counter=ApproximateCounter(),
        )
        reply = await agent("Do three things at once")
    assert reply.content[0].text == "Handled all three."  # type: ignore[union-attr]
    results = api.requests[1]["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_a", "toolu_b", "toolu_c"]
    assert results[0]["content"] == "3" and not results[0].get("is_error")
    assert results[1]["is_error"] is True and "disk full" in results[1]["content"]
    assert results[2]["is_error"] is True and "no fetching" in results[2]["content"]


async def test_a_large_max_tokens_reserves_its_room_and_streams_by_itself() -> None:
    from ctxlab import WorkingState, prepare
    from ctxlab.widgets import Lab

    with MessagesAPI([message("Done.", input_tokens=30, output_tokens=2)]) as api:
        model = model_for(api, max_tokens=64_000)  # stream=False: the SDK would refuse it
        agent = Agent(model=model, counter=ApproximateCounter())
        lines = agent.next_thresholds()
        # 000: a larger explicit output request reserves more space.
        assert lines.output_reservation == 64_000
        assert lines.input_limit == 200_000 - 64_000 - 4_000
        reply = await agent("hi")
    assert reply.content[0].text == "Done."  # type: ignore[union-attr]
    assert api.requests[0]["stream"] is True and api.requests[0]["max_tokens"] == 64_000
    assert agent.manifests[-1].input_limit == lines.input_limit
    lab = Lab(agent)
    assert lab.budget.trace("input limit")["y"][-1] == lines.input_limit
    lab.close()
    # The same rule in a bare preparation and in a replay.
    state = WorkingState.of([{"role": "user", "content": "hi"}])
    prep = await prepare(
        state, context_window=200_000, counter=ApproximateCounter(), max_output_tokens=64_000
    )
    assert prep.manifest.input_limit == lines.input_limit


def test_an_output_reservation_larger_than_the_window_is_refused_when_the_agent_is_built() -> None:
    model = AnthropicModel(
        "claude-haiku-4-5", api_key="k", context_window=50_000, max_tokens=64_000
    )
    with pytest.raises(UsageError, match="no room for input"):
        Agent(model=model)
    agent = Agent(model=AnthropicModel("claude-haiku-4-5", api_key="k", context_window=50_000))
    with pytest.raises(UsageError, match="no room for input"):
        agent.context_config = ContextConfig().merge(budget={"output_reservation": 60_000})


async def test_replay_reserves_the_recorded_output_size() -> None:
    from ctxlab import compare_configs
    from ctxlab.messages import AssistantMessage, UserMessage

    messages = [UserMessage(content="hi"), AssistantMessage(content="hello")]
    frame = await compare_configs(
        messages,
        {"default": ContextConfig()},
        context_window=200_000,
        counter=ApproximateCounter(),
        max_output_tokens=64_000,
    )
    assert list(frame["input_limit"]) == [200_000 - 64_000 - 4_000]


async def test_request_parameters_pass_through_and_clashes_are_refused() -> None:
    with MessagesAPI([message("ok")]) as api:
        model = model_for(
            api, temperature=0.2, tool_choice={"type": "auto"}, metadata={"user_id": "u1"}
        )
        agent = Agent(model=model, tools=[add], counter=ApproximateCounter())
        await agent("hi")
    sent = api.requests[0]
    assert sent["temperature"] == 0.2 and sent["tool_choice"] == {"type": "auto"}
    assert sent["metadata"] == {"user_id": "u1"}
    with pytest.raises(UsageError, match="messages"):
        AnthropicModel(api_key="k", messages=[])


@pytest.mark.parametrize("stream", [False, True])
async def test_thinking_and_server_tool_blocks_go_back_as_they_came(stream: bool) -> None:
    thinking = {"type": "thinking", "thinking": "2 + 3 needs the tool.", "signature": "sig=="}
    redacted = {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"}
    search = {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": "sum"},
    }
    found = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [{"type": "web_search_result", "url": "https://example.org", "title": "Sums"}],
    }
    script = [
        message([thinking, redacted, search, found, tool_use("toolu_1", "add", a=2, b=3)]),
        message("5."),
    ]
    with MessagesAPI(script) as api:
        agent = Agent(
            model=model_for(
                api, stream=stream, thinking={"type": "enabled", "budget_tokens": 1024}
            ),
            tools=[add],
            counter=ApproximateCounter(),
        )
        await agent("What is 2 + 3?")
    second = api.requests[1]
    assert second["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    sent = second["messages"][1]["content"]
    # Signed thinking, redacted thinking and the server tool blocks, unchanged, before the call.
    assert sent[:4] == [thinking, redacted, search, found]
    assert sent[4]["type"] == "tool_use"
    # The Context counts them: the thinking text is in the step's conversation tokens.
    history = agent.context.conversation[1]
    assert [b.type for b in history.content] == [
        "thinking",
        "redacted_thinking",
        "provider",
        "provider",
        "tool_use",
    ]


async def test_the_context_window_comes_from_the_models_api() -> None:
    with MessagesAPI([message("hi"), message("hi")]) as api:
        api.models["claude-sonnet-4-6"] = {
            "type": "model",
            "id": "claude-sonnet-4-6",
            "display_name": "Claude Sonnet 4.6",
            "created_at": "2026-01-01T00:00:00Z",
            "max_input_tokens": 1_000_000,
            "max_tokens": 64_000,
        }
        model = model_for(api)
        assert (model.context_window, model.limits_source) == (200_000, "table")
        agent = Agent(model=model, counter=ApproximateCounter())
        await agent("hi")
        assert (model.context_window, model.limits_source) == (1_000_000, "models_api")
        assert agent.manifests[-1].context_size == 1_000_000
        # An explicit window wins and the API is not asked.
        fixed = model_for(api, context_window=150_000)
        await Agent(model=fixed, counter=ApproximateCounter())("hi")
        assert (fixed.context_window, fixed.limits_source) == (150_000, "argument")
    # Unreachable (the route answers 404): the table stands.
    with MessagesAPI([message("hi")]) as api:
        model = model_for(api)
        await Agent(model=model, counter=ApproximateCounter())("hi")
        assert (model.context_window, model.limits_source) == (200_000, "table")


async def test_exact_counts_go_on_the_manifest_and_catch_an_underestimate() -> None:
    script = [
        message([tool_use("toolu_1", "fetch", page=1)]),
        message([tool_use("toolu_2", "fetch", page=2)]),
        message("Both pages read."),
    ]
    with MessagesAPI(script) as api:
        model = model_for(api, exact_counts=True, context_window=12_000, max_tokens=1024)
        events: list[object] = []
        agent = Agent(model=model, tools=[fetch], counter=ApproximateCounter())
        agent.subscribe(events.append)
        await agent("Read pages 1 and 2.")
        counted = [r for r in api.requests if "max_tokens" not in r]
        sent = [r for r in api.requests if "max_tokens" in r]
        assert len(counted) == len(sent) == 3
        exact = [m.exact_input_tokens for m in agent.manifests if m.purpose == "reasoning"]
        assert exact == [len(json.dumps(r)) // 4 for r in counted]
        assert not any(e.type == "compaction" for e in events)  # type: ignore[attr-defined]

    # A provider that counts far more than the estimate: the last request is compacted first
    # (the model writes the summary).
    summary = {
        "task_overview": "read pages 1 and 2",
        "current_state": "both read",
        "important_discoveries": "/var/log/app-1.log",
        "next_steps": "answer",
        "context_to_preserve": "/var/log/app-2.log",
    }
    with MessagesAPI([*script[:2], message(json.dumps(summary)), script[2]]) as api:
        api.count_factor = 4.0
        model = model_for(api, exact_counts=True, context_window=3_500, max_tokens=512)
        events = []
        agent = Agent(model=model, tools=[fetch], counter=ApproximateCounter())
        agent.subscribe(events.append)
        await agent("Read pages 1 and 2.")
        compactions = [e for e in events if e.type == "compaction"]  # type: ignore[attr-defined]
        assert compactions
        last = agent.manifests[-1]
        # The estimate alone would have sent it: the exact count was over the limit.
        assert last.estimated_input_tokens < last.input_limit
        assert last.exact_input_tokens is not None
        assert last.exact_input_tokens <= last.input_limit
        assert "summary" in json.dumps(api.requests[-1]["messages"][0]).lower()


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("stream", [False, True])
async def test_a_reply_nested_too_deeply_is_a_model_error_and_the_agent_goes_on(
    stream: bool,
) -> None:
    from ctxlab.exceptions import MalformedReply

    deep = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": _nested(600)}
    with MessagesAPI([message([deep]), message("Fine now.")]) as api:
        agent = Agent(
            model=model_for(api, stream=stream), tools=[add], counter=ApproximateCounter()
        )
        with pytest.raises(MalformedReply, match="reply could not be read") as info:
            await agent("go")
        assert len(str(info.value)) < 400  # the SDK's quote of the whole JSON is cut
        # Nothing of the unreadable reply entered the session; the next call works.
        assert not any(m.role == "assistant" for m in agent.context.conversation)
        assert (await agent("again")).content[0].text == "Fine now."


@pytest.mark.parametrize("stream", [False, True])
async def test_the_providers_context_editing_is_sent_and_what_it_did_lands_on_the_manifest(
    stream: bool,
) -> None:
    config = ContextConfig.preset("anthropic_context_editing")
    reply = message("Done.", input_tokens=900)
    reply["context_management"] = {
        "applied_edits": [
            {
                "type": "clear_tool_uses_20250919",
                "cleared_tool_uses": 3,
                "cleared_input_tokens": 41_200,
            }
        ]
    }
    with MessagesAPI([reply]) as api:
        model = model_for(api, stream=stream, context_management=config)
        agent = Agent(model=model, counter=ApproximateCounter())
        await agent("Go.")
    (sent,) = api.requests
    # Without thinking, the config's thinking edit is left out (the API would refuse it).
    exported = config.export("anthropic").value["edits"]
    assert sent["context_management"] == {"edits": exported[1:]}
    assert exported[0]["type"] == "clear_thinking_20251015"
    assert "context-management-2025-06-27" in api.headers[0]["anthropic-beta"]
    (edit,) = [t for t in agent.manifests[-1].transforms if t.kind == "provider_applied_edit"]
    assert edit.target == "clear_tool_uses_20250919"
    assert edit.detail == "3 tool uses, 41,200 tokens"
    assert agent.manifests[-1].provider_usage is not None


def test_a_context_management_that_is_not_one_is_refused() -> None:
    with MessagesAPI() as api, pytest.raises(UsageError, match="context_management must be"):
        model_for(api, context_management={"clear": True})


COMPACTION_BLOCK = {
    "type": "compaction",
    "content": "Summary: the user asked for pages 1-3; page 2 was wrong.",
    "encrypted_content": "Zm9vYmFy+/==\u00e9opaque",
}


async def test_a_server_compaction_block_is_sent_back_verbatim_and_what_it_replaced_is_not() -> (
    None
):
    first = message([COMPACTION_BLOCK, {"type": "text", "text": "Page 3 is done."}])
    first["usage"]["iterations"] = [
        {
            "type": "compaction",
            "input_tokens": 152_000,
            "output_tokens": 2_100,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        },
        {"type": "message", "input_tokens": 2_400, "output_tokens": 10},
    ]
    edits = {"edits": [{"type": "compact_20260112"}]}
    with MessagesAPI([first, message("And page 4.")]) as api:
        agent = Agent(model=model_for(api, context_management=edits), counter=ApproximateCounter())
        await agent("Do pages 1 to 3.")
        (compaction,) = [
            t for t in agent.manifests[-1].transforms if t.target == "compact_20260112"
        ]
        assert compaction.detail == (
            "the server's compaction call: 152,000 input, 0 cache read, 0 cache write, "
            "2,100 output tokens, billed beside the request"
        )
        await agent("Now page 4.")
    betas = api.headers[0]["anthropic-beta"].split(",")
    assert {"context-management-2025-06-27", "compact-2026-01-12"} <= set(betas)
    second = api.requests[1]["messages"]
    # The block goes back exactly as it came; the first request, which it replaced, does not.
    assert second[1]["role"] == "assistant" and second[1]["content"][0] == COMPACTION_BLOCK
    assert "Do pages 1 to 3." not in json.dumps(second)
    assert second[-1]["content"][-1]["text"] == "Now page 4."
    (cut,) = [t for t in agent.manifests[-1].transforms if t.kind == "provider_compaction"]
    assert cut.target == "1 messages"
    # The session keeps everything; only what is sent starts at the block.
    assert agent.context.conversation[0].content[0].text == "Do pages 1 to 3."


async def test_an_edit_the_model_does_not_support_is_a_model_error_naming_it() -> None:
    refusal = error(
        400,
        "invalid_request_error",
        "context_management: clear_thinking_20251015 is not supported for this model",
    )
    edits = {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}
    thinking = {"type": "enabled", "budget_tokens": 1024}
    with MessagesAPI([refusal]) as api:
        model = model_for(api, context_management=edits, thinking=thinking)
        agent = Agent(model=model, counter=ApproximateCounter())
        with pytest.raises(ModelError, match="clear_thinking_20251015 is not supported") as info:
            await agent("Go.")
    assert info.value.status_code == 400
    assert not any(m.role == "assistant" for m in agent.context.conversation)


async def test_with_context_management_the_exact_count_is_the_request_as_sent() -> None:
    edits = {"edits": [{"type": "clear_tool_uses_20250919"}]}
    with MessagesAPI([message("Done.")]) as api:
        model = model_for(api, context_management=edits, exact_counts=True)
        agent = Agent(model=model, counter=ApproximateCounter())
        await agent("Go.")
    counted = next(b for b in api.requests if "max_tokens" not in b)
    # The local server halves input_tokens (its "edits") and reports the original.
    assert agent.manifests[-1].exact_input_tokens == len(json.dumps(counted)) // 4


async def test_a_pause_after_the_servers_compaction_is_not_the_reply() -> None:
    """``pause_after_compaction``: the response holds the compaction block alone (stop reason
    ``compaction``); the agent sends the conversation back with it and returns the reply that
    follows — not an empty one."""
    paused = message([COMPACTION_BLOCK], stop="compaction")
    edits = {"edits": [{"type": "compact_20260112", "pause_after_compaction": True}]}
    events: list[object] = []
    with MessagesAPI([paused, message("Pages 1 to 3 are done.")]) as api:
        agent = Agent(model=model_for(api, context_management=edits), counter=ApproximateCounter())
        agent.subscribe(events.append)
        reply = await agent("Do pages 1 to 3.")
    assert reply.content[0].text == "Pages 1 to 3 are done."
    assert len(api.requests) == 2
    second = api.requests[1]["messages"]
    # Sent back from the block on, the block as it came and last; it carries no cache mark.
    assert second[-1]["role"] == "assistant"
    assert second[-1]["content"] == [COMPACTION_BLOCK]
    from ctxlab.events import ReplyEvent

    assert [e.message.content[0].text for e in events if isinstance(e, ReplyEvent)] == [
        "Pages 1 to 3 are done."
    ]


def test_a_thinking_edit_without_thinking_is_refused_or_left_out() -> None:
    edits = {"edits": [{"type": "clear_thinking_20251015"}]}
    with MessagesAPI() as api:
        with pytest.raises(UsageError, match="only with extended thinking on"):
            model_for(api, context_management=edits)
        # A config's export: the thinking edit left out (no thinking, none to clear).
        config = ContextConfig.preset("anthropic_context_editing")
        model = model_for(api, context_management=config)
        sent = model.parameters["context_management"]["edits"]
        assert [e["type"] for e in sent] == ["clear_tool_uses_20250919"]
        assert model.server_edits is not None and model.server_edits.clear_thinking is None
        thinking = {"type": "enabled", "budget_tokens": 2048}
        on = model_for(api, context_management=config, thinking=thinking)
        assert [e["type"] for e in on.parameters["context_management"]["edits"]] == [
            "clear_thinking_20251015",
            "clear_tool_uses_20250919",
        ]
