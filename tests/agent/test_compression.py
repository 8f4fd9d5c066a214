"""Manual, automatic and agentic compression, summary failures, and overflow recovery.

The model window is 2,000 tokens (approximate counting, 4 characters a token): trigger 1,600,
usage notice 1,200, input limit 1,710. Each ``fetch`` result is about 300 tokens.
"""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab import ApproximateCounter, ContextConfig, HintBlock
from ctxlab.agent import Agent
from ctxlab.exceptions import CompressionError, ContextOverflowError
from ctxlab.messages import UserMessage
from ctxlab.models import ScriptedModel, tool_call

WINDOW = 2_000


def fetch(page: int) -> str:
    """Fetch a page of the log."""
    return f"page {page} /var/log/app-{page}.log\n" + "lorem ipsum " * 100


def rounds(n: int, reply: str = "done") -> list[object]:
    return [*(tool_call("fetch", {"page": i}) for i in range(n)), reply]


def make(model: ScriptedModel, config: ContextConfig | None = None) -> Agent:
    return Agent(
        model=model,
        tools=[fetch],
        context_config=config,
        counter=ApproximateCounter(),
    )


def tokens(agent: Agent) -> int:
    return agent.manifests[-1].estimated_input_tokens


async def test_automatic_compaction_fires_above_the_trigger_and_keeps_pairs() -> None:
    model = ScriptedModel(rounds(7), context_window=WINDOW)
    agent = make(model)
    events = [e async for e in agent.stream_events("Read the logs of /var/log")]
    compactions = [e for e in events if e.type == "compaction"]
    assert compactions and compactions[0].kind == "automatic"
    assert compactions[0].tokens_after < compactions[0].tokens_before
    assert agent.context.summary is not None
    # The offline handover: the task verbatim beside it, each call whole with its outcome.
    assert "Read the logs of /var/log" in agent.context.summary.text
    assert '$ fetch {"page": 0}  → ok' in agent.context.summary.text
    # Every request fitted and passed validation; the durable history kept everything.
    builds = [
        e.manifest for e in events if e.type == "context_build" and e.manifest.purpose != "summary"
    ]
    summaries = [
        e.manifest for e in events if e.type == "context_build" and e.manifest.purpose == "summary"
    ]
    assert summaries and all(m.estimated_input_tokens > 0 for m in summaries)  # observable
    assert all(m.validation == "passed" for m in builds)
    assert all(m.estimated_input_tokens <= m.input_limit for m in builds)
    assert len(agent.history) == 16
    assert len(agent.context.conversation) < len(agent.history)


def big_fetch(page: int) -> str:
    """Fetch a long page of the log."""
    return f"page {page}\n" + "lorem ipsum " * 500  # about 1,500 tokens


async def _events(
    calls: list[Any], tool: Any, result_limit: int, prompt: str
) -> tuple[list[Any], ScriptedModel]:
    """The events of one call of an agent that makes ``calls`` in a 4,000-token window, and
    its model (which keeps the requests it was sent)."""
    model = ScriptedModel([*calls, "done"], context_window=4_000)
    agent = Agent(
        model=model,
        tools=[tool],
        counter=ApproximateCounter(),
        context_config=ContextConfig(tool_result_limit=result_limit),
    )
    return [e async for e in agent.stream_events(prompt)], model


async def test_summary_requests_through_the_agent_fit_the_window() -> None:
    # A 4,000-token window and ~1,500-token results: every summary request sent is validated
    # and within the window less its answer (the pieces: tests/pipeline/test_pipeline.py).
    calls = [tool_call("big_fetch", {"page": i}) for i in range(6)]
    events, model = await _events(calls, big_fetch, 2_000, "Read the long logs")
    summaries = [
        e.manifest for e in events if e.type == "context_build" and e.manifest.purpose == "summary"
    ]
    assert summaries
    assert all(m.validation == "passed" for m in summaries)
    assert all(m.estimated_input_tokens <= m.input_limit < 4_000 * 0.95 for m in summaries)
    assert all(r.input_limit is not None and r.input_limit < 4_000 for r in model.summary_requests)


async def test_a_summary_request_over_its_limit_is_reported_and_never_sent() -> None:
    from ctxlab.pipeline import SummaryRequest

    model = ScriptedModel(rounds(7), context_window=WINDOW)
    agent = make(model)
    await agent("Read the logs of /var/log")
    request = SummaryRequest(
        messages=tuple(agent.history),
        previous_summary=None,
        schema=ContextConfig().summary_schema,
        prompt="Summarize.",
        input_limit=500,
    )
    sent_before = len(model.summary_requests)
    with pytest.raises(ContextOverflowError, match="limit is 500"):
        await agent._preparer._summarize(request)
    assert agent.manifests[-1].purpose == "summary"
    assert agent.manifests[-1].validation == "budget_exceeded"
    assert len(model.summary_requests) == sent_before


async def test_manual_compression_is_a_noop_below_the_trigger() -> None:
    model = ScriptedModel(rounds(3), context_window=WINDOW)
    agent = make(model)
    await agent("Read three pages")
    assert 1_000 < tokens(agent) < 1_600
    before = agent.context
    assert await agent.compress_context() is None
    assert agent.context == before
    assert model.summary_requests == []


async def test_manual_compression_with_override_config_and_instructions() -> None:
    model = ScriptedModel(rounds(3), context_window=WINDOW)
    agent = make(model)
    await agent("Read three pages")
    seen = []
    agent.subscribe(seen.append)
    record = await agent.compress_context(
        context_config=ContextConfig(trigger_ratio=0.5, reserve_ratio=0.1),
        instructions=HintBlock(hint="Keep every log path."),
    )
    assert record is not None and record.messages_compacted > 0
    assert model.summary_requests[-1].instructions == "Keep every log path."
    assert [e.kind for e in seen if e.type == "compaction"] == ["manual"]
    # The override was for that call only.
    assert agent.context_config.trigger_ratio == 0.8


async def test_summary_failure_falls_back_to_truncation_by_default() -> None:
    failures = [RuntimeError("model down")] * 3
    model = ScriptedModel(rounds(7), context_window=WINDOW, summaries=failures)
    agent = make(model)
    kinds = [e.kind async for e in agent.stream_events("go") if e.type == "compaction"]
    assert kinds[0] == "fallback"
    assert agent.context.summary is not None
    assert agent.context.summary.kind == "truncation"
    assert len(model.summary_requests) == 3  # max_summary_attempts


async def test_summary_failure_without_fallback_raises_and_leaves_the_context() -> None:
    config = ContextConfig(compression_fallback_to_truncation=False)
    model = ScriptedModel(rounds(3), context_window=WINDOW, summaries=[ValueError("bad")] * 3)
    agent = make(model, config)
    await agent("Read three pages")
    before = agent.context
    with pytest.raises(CompressionError, match="left untouched"):
        await agent.compress_context(
            ContextConfig(
                trigger_ratio=0.5, reserve_ratio=0.1, compression_fallback_to_truncation=False
            )
        )
    assert agent.context == before
    # In the loop too: the failed preparation is reported and nothing is committed.
    model.replies.extend(rounds(4))
    events = []
    with pytest.raises(CompressionError):
        async for event in agent.stream_events("more"):
            events.append(event)
    assert events[-1].type == "error"
    assert all(e.type != "compaction" for e in events)
    assert agent.context.summary is None


async def test_agentic_compression_notice_and_tool() -> None:
    # The notice (and the tool's threshold) at (0.8 - 0.3) x 2,000 = 1,000 tokens.
    config = ContextConfig(compression_tool_enabled=True, context_buffer_ratio=0.3)
    script = [
        tool_call("CompressContext", {"instructions": "keep paths"}),  # too early: no effect
        *(tool_call("fetch", {"page": i}) for i in range(3)),
        tool_call("CompressContext", {"instructions": "keep paths"}),
        "done",
    ]
    model = ScriptedModel(script, context_window=WINDOW)
    agent = make(model, config)
    events = [e async for e in agent.stream_events("Read the logs")]
    assert any(t.name == "CompressContext" for t in model.requests[0].tools)
    results = [e.result.text for e in events if e.type == "tool_result"]
    assert results[0].startswith("Nothing to compress")
    assert results[-1].startswith("Compressed ")
    assert [e.kind for e in events if e.type == "compaction"] == ["agentic"]
    assert model.summary_requests[-1].instructions == "keep paths"
    # The usage notice is in exactly the requests whose input, without it, passed the line.
    built = [
        e.manifest
        for e in events
        if e.type == "context_build" and e.manifest.purpose == "reasoning"
    ]
    noticed = [any(i.id == "runtime/context_usage" for i in m.items) for m in built]
    passed = [
        m.estimated_input_tokens - sum(i.tokens for i in m.items if i.id == "runtime/context_usage")
        > m.thresholds.notice_tokens
        for m in built
        if m.thresholds is not None
    ]
    assert noticed == passed and True in noticed and False in noticed
    first = noticed.index(True)
    notice = model.requests[first].messages[-1]
    assert isinstance(notice, UserMessage)
    assert "CompressContext" in notice.content[0].text  # type: ignore[union-attr]


async def test_agentic_compression_failure_is_an_error_result_and_changes_nothing() -> None:
    config = ContextConfig(compression_tool_enabled=True, context_buffer_ratio=0.3)
    script = [
        *(tool_call("fetch", {"page": i}) for i in range(3)),
        tool_call("CompressContext"),
        "ok",
    ]
    model = ScriptedModel(script, context_window=WINDOW, summaries=[RuntimeError("x")] * 3)
    agent = make(model, config)
    events = [e async for e in agent.stream_events("go")]
    last = [e for e in events if e.type == "tool_result"][-1]
    assert last.result.is_error and "context is unchanged" in last.result.text
    assert agent.context.summary is None
    assert not [e for e in events if e.type == "compaction"]


async def test_overflow_recovery_compacts_and_retries_once() -> None:
    overflow = ContextOverflowError(
        "prompt is too long: 2100 tokens > 2000 maximum", status_code=400
    )
    model = ScriptedModel([*rounds(3, "first"), overflow, "recovered"], context_window=WINDOW)
    agent = make(model)
    await agent("Read three pages")
    events = [e async for e in agent.stream_events("And now?")]
    assert [e.kind for e in events if e.type == "compaction"] == ["overflow"]
    assert [e.manifest.purpose for e in events if e.type == "context_build"] == [
        "reasoning",
        "summary",
        "recovery",
    ]
    assert events[-1].type == "reply" and events[-1].text == "recovered"
    assert len(model.requests[-1].messages) < len(model.requests[-2].messages)


async def test_overflow_twice_propagates() -> None:
    overflow = ContextOverflowError("prompt is too long", status_code=400)
    model = ScriptedModel([*rounds(3, "first"), overflow, overflow], context_window=WINDOW)
    agent = make(model)
    await agent("Read three pages")
    with pytest.raises(ContextOverflowError):
        await agent("again")


async def test_overflow_with_nothing_to_reduce_propagates() -> None:
    model = ScriptedModel([ContextOverflowError("prompt is too long")], context_window=WINDOW)
    agent = make(model)
    with pytest.raises(ContextOverflowError):
        await agent("hi")
    disabled = make(
        ScriptedModel(
            [*rounds(3, "x"), ContextOverflowError("prompt is too long")], context_window=WINDOW
        ),
        ContextConfig(compaction={"enabled": False}),
    )
    await disabled("Read three pages")
    with pytest.raises(ContextOverflowError):
        await disabled("again")


async def test_compress_context_during_a_call_runs_at_the_next_boundary() -> None:
    agent: Agent
    records = []

    async def compress_now(page: int) -> str:
        """Asks for a compression while the call runs."""
        import asyncio

        task = asyncio.ensure_future(
            agent.compress_context(
                ContextConfig(trigger_ratio=0.3, reserve_ratio=0.1, context_buffer_ratio=0.1)
            )
        )
        records.append(task)
        await asyncio.sleep(0)  # the request is queued while the call runs
        return fetch(page)

    script = [
        *(tool_call("fetch", {"page": i}) for i in range(2)),
        tool_call("compress_now", {"page": 9}),
        "done",
    ]
    model = ScriptedModel(script, context_window=WINDOW)
    agent = Agent(model=model, tools=[fetch, compress_now], counter=ApproximateCounter())
    seen = []
    agent.subscribe(seen.append)
    await agent("go")
    assert await records[0] is not None
    kinds = [
        e.type if e.type != "compaction" else e.kind
        for e in seen
        if e.type != "context_build" or e.manifest.purpose != "summary"
    ]
    # Compressed at the boundary after the tool ran, before the next reasoning request.
    assert kinds[kinds.index("manual") - 2 : kinds.index("manual") + 2] == [
        "tool_result",
        "context_build",
        "manual",
        "context_build",
    ]
    assert agent.context.summary is not None


async def test_repeated_fallbacks_do_not_grow_the_note() -> None:
    failures = [RuntimeError("model down")] * 300
    model = ScriptedModel(rounds(40), context_window=WINDOW, summaries=failures)
    agent = Agent(model=model, tools=[fetch], counter=ApproximateCounter(), max_steps=60)
    kinds = [e.kind async for e in agent.stream_events("go") if e.type == "compaction"]
    assert kinds.count("fallback") >= 5
    assert agent.context.summary is not None
    assert len(agent.context.summary.text) < 600


def shell(command: str) -> str:
    """Run a shell command."""
    return "progress ...\n" * 400 + f"RuntimeError: {command} gave up"


async def test_a_live_compaction_is_graded_on_the_durable_history() -> None:
    # The failure sits past what the truncation keeps of each result: the working context
    # never held it, the durable history does, and retention is measured on the history.
    calls = [tool_call("shell", {"command": f"make step{i}"}) for i in range(16)]
    events, _ = await _events(calls, shell, 300, "Run the job")
    records = [e.record for e in events if e.type == "compaction"]
    assert records and all(r.retention is not None for r in records)
    first = records[0].retention
    assert first is not None
    assert first["task"].share == 1.0
    assert first["outcomes"].total > 0  # only the original results hold the RuntimeError lines
    assert first.control_share() is not None and first.control_share() < first.share()  # type: ignore[operator]
