"""The one commit point: a reply or message that would break the conversation is refused before
anything is committed or logged; usage lands on the request it answered; a compaction that does
not happen emits nothing; a stored state that is already broken can be repaired."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter, ContextConfig, SessionLog, WorkingState
from ctxlab.agent import Agent
from ctxlab.exceptions import ContextOverflowError, InvalidConversation
from ctxlab.manifest import ProviderUsage
from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.models import ModelResponse, ScriptedModel, tool_call

WINDOW = 2_000


def fetch(page: int) -> str:
    """Fetch a page of the log."""
    return f"page {page}\n" + "lorem ipsum " * 100


def make(model: ScriptedModel, log: SessionLog | None = None) -> Agent:
    return Agent(
        model=model,
        tools=[fetch],
        counter=ApproximateCounter(),
        session_log=log,
        session_id="s1",
    )


def snapshot(agent: Agent) -> tuple[object, ...]:
    log = agent.log.store
    logged = len(log.message_payloads(agent.log.key)) if log is not None else 0
    return (agent.context, agent.history, logged)


async def test_a_reply_with_a_duplicate_tool_call_id_is_refused_and_the_agent_goes_on(
    tmp_path: object,
) -> None:
    twice = AssistantMessage(
        content=(
            ToolUseBlock(id="dup", name="fetch", input={"page": 1}),
            ToolUseBlock(id="dup", name="fetch", input={"page": 2}),
        )
    )
    model = ScriptedModel(["hello", twice, "fine again"], context_window=WINDOW)
    log = SessionLog(f"{tmp_path}/log.sqlite")
    agent = make(model, log)
    await agent("first")
    before = snapshot(agent)
    events = []
    agent.subscribe(events.append)
    with pytest.raises(InvalidConversation, match="used twice") as caught:
        await agent("second")
    assert caught.value.problems
    # The call's own message was committed at its start; the bad reply left no trace.
    state, history, logged = snapshot(agent)
    assert history == (*before[1], UserMessage(content="second"))
    assert state.conversation == (*before[0].conversation, UserMessage(content="second"))
    assert logged == before[2] + 1
    assert not [e for e in events if e.type == "model_response"]
    # The next call works, also after resume from the log.
    reply = await agent("third")
    assert reply.content[0].text == "fine again"  # type: ignore[union-attr]
    resumed = make(ScriptedModel(["resumed fine"], context_window=WINDOW), log)
    assert (await resumed("fourth")).content[0].text == "resumed fine"  # type: ignore[union-attr]


async def test_a_user_message_with_an_orphan_result_is_refused_before_anything_is_kept(
    tmp_path: object,
) -> None:
    model = ScriptedModel(["hello", "still here"], context_window=WINDOW)
    log = SessionLog(f"{tmp_path}/log.sqlite")
    agent = make(model, log)
    await agent("first")
    before = snapshot(agent)
    orphan = UserMessage(
        content=(ToolResultBlock(tool_use_id="nobody", content="x"), TextBlock(text="hi"))
    )
    with pytest.raises(InvalidConversation, match="no tool_use"):
        await agent(orphan)
    assert snapshot(agent) == before
    assert len(model.requests) == 1  # nothing was sent
    assert (await agent("next")).content[0].text == "still here"  # type: ignore[union-attr]


async def test_an_empty_reply_is_refused() -> None:
    model = ScriptedModel(
        [ModelResponse(AssistantMessage(content=()), "end_turn", None), "ok"],
        context_window=WINDOW,
    )
    agent = make(model)
    with pytest.raises(InvalidConversation, match="empty"):
        await agent("first")
    assert all(m.content for m in agent.context.conversation)
    assert (await agent("again")).content[0].text == "ok"  # type: ignore[union-attr]


async def test_after_an_overflow_retry_the_usage_is_on_the_answered_request() -> None:
    from ctxlab.widgets import Lab

    overflow = ContextOverflowError("prompt is too long: 2100 tokens > 2000", status_code=400)
    answered = ModelResponse(AssistantMessage(content="recovered"), "end_turn", ProviderUsage(7, 3))
    replies = [*(tool_call("fetch", {"page": i}) for i in range(3)), "first", overflow, answered]
    agent = make(ScriptedModel(replies, context_window=WINDOW))
    lab = Lab(agent)
    await agent("Read three pages")
    events = [e async for e in agent.stream_events("And now?")]
    builds = [e.manifest for e in events if e.type == "context_build"]
    rejected, summary, recovery = builds
    assert summary.purpose == "summary"
    assert (rejected.purpose, recovery.purpose) == ("reasoning", "recovery")
    response = next(e for e in events if e.type == "model_response")
    assert response.request_id == recovery.request_id
    by_id = {m.request_id: m for m in agent.manifests}
    assert by_id[recovery.request_id].provider_usage == ProviderUsage(7, 3)
    assert by_id[rejected.request_id].provider_usage is None
    steps = lab.steps.set_index("request_id")
    assert steps.loc[recovery.request_id, "usage_input"] == 7
    assert steps.loc[rejected.request_id, "usage_input"] is None or (
        steps.loc[rejected.request_id, "usage_input"]
        != steps.loc[rejected.request_id, "usage_input"]
    )
    lab.close()


async def test_a_compaction_that_does_not_happen_emits_and_commits_nothing() -> None:
    agent = make(ScriptedModel(["hello"], context_window=WINDOW))
    await agent("first")
    state, manifests = agent.context, list(agent.manifests)
    events = []
    agent.subscribe(events.append)
    assert await agent.compress_context() is None
    assert events == [] and agent.manifests == manifests and agent.context is state


async def test_a_broken_stored_state_names_the_repair_and_the_repair_works(
    tmp_path: object,
) -> None:
    log = SessionLog(f"{tmp_path}/log.sqlite")
    agent = make(ScriptedModel(["hello"], context_window=WINDOW), log)
    await agent("first")
    # What an older ctxlab could have checkpointed: a result whose call is gone.
    broken = WorkingState.of(
        [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "hello"},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "gone", "content": "x"}],
            },
        ]
    )
    log.commit_turn(
        agent.log.key,
        events=[],
        messages=[],
        state=broken.model_dump_json(),
        task=agent.tasks.state.model_dump_json(),
    )
    resumed = make(ScriptedModel(["after repair"], context_window=WINDOW), log)
    with pytest.raises(InvalidConversation, match=r"repair_context\(\)"):
        await resumed("go on")
    notes = resumed.repair_context()
    assert notes and "gone" in notes[0]
    assert (await resumed("go on")).content[0].text == "after repair"  # type: ignore[union-attr]
    assert len(resumed.history) > 0  # the durable history is untouched by the repair


def test_repair_conversation_fixes_each_kind_of_break() -> None:
    from ctxlab.messages import find_tool_pair_problems, repair_conversation

    conversation = (
        UserMessage(content="go"),
        AssistantMessage(content=(ToolUseBlock(id="a", name="t", input={}),)),
        AssistantMessage(
            content=(
                ToolUseBlock(id="a", name="t", input={}),
                ToolUseBlock(id="b", name="t", input={}),
            )
        ),
        UserMessage(content=(ToolResultBlock(tool_use_id="zzz", content="?"),)),
    )
    assert find_tool_pair_problems(conversation)
    fixed, notes = repair_conversation(conversation)
    assert find_tool_pair_problems(fixed) == []
    assert any("repeated" in n for n in notes) and any("unknown id 'zzz'" in n for n in notes)
    assert any("unanswered tool_use 'a'" in n for n in notes)
    assert any("unanswered tool_use 'b'" in n for n in notes)
    assert repair_conversation(fixed) == (fixed, [])


async def test_the_config_in_force_gives_the_next_thresholds() -> None:
    agent = make(ScriptedModel([], context_window=WINDOW))
    lines = agent.next_thresholds()
    assert (lines.trigger_tokens, lines.notice_tokens, lines.input_limit) == (1600, 1200, 1710)
    agent.context_config = ContextConfig(trigger_ratio=0.5, context_buffer_ratio=0.1)
    assert agent.next_thresholds().trigger_tokens == 1000
    assert agent.next_thresholds().notice_tokens == 800


async def test_two_compactions_at_once_one_commits_the_other_is_a_state_conflict() -> None:
    import asyncio

    from ctxlab.exceptions import StateChanged

    class SlowSummaries(ScriptedModel):
        async def summarize(self, summary, *, context=None):  # type: ignore[no-untyped-def]
            await asyncio.sleep(0.01)  # both preparations are in flight at once
            return await super().summarize(summary, context=context)

    replies = [*(tool_call("fetch", {"page": i}) for i in range(3)), "done"]
    agent = make(SlowSummaries(replies, context_window=WINDOW))
    await agent("Read three pages")
    outcomes = await asyncio.gather(
        agent.compress_context(force=True),
        agent.compress_context(force=True),
        return_exceptions=True,
    )
    conflicts = [o for o in outcomes if isinstance(o, StateChanged)]
    records = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(conflicts) == 1 and len(records) == 1 and records[0] is not None
    assert conflicts[0].manifest is not None
    assert conflicts[0].manifest.validation == "state_conflict"
    assert agent.manifests[-1].validation == "state_conflict"
    # The committed compaction stands, and it is the only one applied.
    assert agent.context.summary is not None
    assert agent.context.summary.compacted_messages == records[0].messages_compacted


def test_the_validation_values_are_the_produced_ones() -> None:
    from typing import get_args

    from ctxlab.manifest import Validation

    # history_conflict is never produced (history changes only through the commit point).
    assert get_args(Validation) == (
        "passed",
        "budget_exceeded",
        "invalid_tool_pairs",
        "invalid_conversation",
        "state_conflict",
        "build_failed",
    )
