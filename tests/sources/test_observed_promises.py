"""What `ObservedSession` promises a framework adapter, on the values the framework and the Lab
read: what goes out in each mode, how new messages are found (ctxlab's list, the framework's, or
ctxlab's with the framework's own copy of the last request) and when the state restarts, the
reply's usage on the request it answered, the System prompt, tools, model and output reserve on
every request, ctxlab's compactions as events graded on the framework's history, failures in
"observe" mode, and the transcript of everything the agent said and did."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter, ContextConfig, ObservedSession, ToolSchema
from ctxlab.agent import CompactionEvent, ContextBuildEvent, ModelResponseEvent
from ctxlab.events import ErrorEvent
from ctxlab.exceptions import ContextBudgetExceeded, UsageError
from ctxlab.messages import AssistantMessage, ProviderUsage, TextBlock, UserMessage
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from tests.helpers import exchange

TOOL = ToolSchema(
    name="ls",
    description="List the files of a folder.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
)
LISTING = "src/module_file.py\n" * 200  # 3,800 characters: cut under a limit of 50 tokens


def _session(mode: str = "manage", **kwargs: object) -> ObservedSession:
    kwargs.setdefault("context_window", 8_000)
    kwargs.setdefault("counter", ApproximateCounter())
    return ObservedSession(mode=mode, **kwargs)  # type: ignore[arg-type]


def _call() -> list[UserMessage | AssistantMessage]:
    return [
        UserMessage(content="List the files."),
        *exchange("t1", "ls", LISTING, path="."),
    ]


def _reply(text: str) -> AssistantMessage:
    return AssistantMessage(content=(TextBlock(text=text),))


def _events(session: ObservedSession) -> list[object]:
    events: list[object] = []
    session.subscribe(events.append)
    return events


async def test_manage_mode_sends_ctxlabs_request_and_observe_mode_the_frameworks() -> None:
    config = ContextConfig(tool_result_limit=50)
    managed = _session("manage", config=config)
    sent = await managed.prepare(_call())
    assert sent[:2] == _call()[:2] and sent[2] != _call()[2]  # the listing cut
    assert len(sent[2].content[0].content) < len(LISTING) // 4  # type: ignore[union-attr]
    observed = _session("observe", config=config)
    assert await observed.prepare(_call()) == _call()
    # Both show what ctxlab sends: the cut, on the manifest.
    for session in (managed, observed):
        [manifest] = session.manifests
        assert [t.kind for t in manifest.transforms] == ["tool_result_truncation"]
        assert session.material_messages == 0  # nothing per-request for an adapter to drop


async def test_a_session_manages_by_default_and_refuses_an_unknown_mode() -> None:
    assert _session(mode="manage").mode == "manage"
    assert ObservedSession(context_window=8_000).mode == "manage"
    with pytest.raises(UsageError) as caught:
        _session("watch")
    assert str(caught.value) == "mode must be 'manage' or 'observe', got 'watch'"


async def test_new_messages_are_found_after_what_ctxlab_returned() -> None:
    # A framework that keeps the processed history (pydantic-ai): ctxlab's list comes back.
    session = _session(config=ContextConfig(tool_result_limit=50))
    sent = await session.prepare(_call())
    more = [*sent, _reply("Many files."), UserMessage(content="Which is largest?")]
    assert await session.prepare(more) == more
    assert session.resyncs == 0
    assert [m.request_id for m in session.manifests] == ["step-0", "step-1"]


async def test_new_messages_are_found_after_ctxlabs_list_with_the_frameworks_last_request() -> None:
    # pydantic-ai's history holds ctxlab's messages, but its own copy of the request it was
    # sending when the processor ran: here both listings are cut by ctxlab, and the framework
    # comes back with the first cut and the second whole — neither list it was given or sent.
    session = _session(config=ContextConfig(tool_result_limit=50))
    given = [*_call(), *exchange("t2", "ls", LISTING)]
    sent = await session.prepare(given)
    assert sent[2] != given[2] and sent[4] != given[4]  # both cut
    more = [*sent[:-1], given[-1], _reply("Many files."), UserMessage(content="Largest?")]
    await session.prepare(more)
    assert session.resyncs == 0
    # The state went on: the reply and the question follow the two calls.
    assert [m.role for m in session.transcript().messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert len(session.manifests[-1].diff.added) == 2  # type: ignore[union-attr]


async def test_new_messages_are_found_after_what_the_framework_sent() -> None:
    # A framework that keeps its own history (a LangChain middleware): its list comes back.
    session = _session(config=ContextConfig(tool_result_limit=50))
    await session.prepare(_call())
    more = [*_call(), _reply("Many files."), UserMessage(content="Which is largest?")]
    await session.prepare(more)
    assert session.resyncs == 0
    assert len(session.transcript().messages) == 5


async def test_a_rewritten_history_restarts_the_state_and_is_counted() -> None:
    session = _session()
    await session.prepare([UserMessage(content="first task")])
    rewritten = [UserMessage(content="another task entirely")]
    assert await session.prepare(rewritten) == rewritten
    assert session.resyncs == 1
    manifest = session.manifests[-1]
    assert [i.placement for i in manifest.items] == ["conversation"]  # the old task is gone
    await session.prepare([UserMessage(content="a third")])
    assert session.resyncs == 2
    assert session.transcript().meta == {"source": "observed", "resyncs": 2}


async def test_the_replys_usage_goes_on_the_request_it_answered() -> None:
    session = _session()
    events = _events(session)
    first = [UserMessage(content="Hello.")]
    await session.prepare(first)
    usage = ProviderUsage(input_tokens=321, output_tokens=4)
    earlier = ProviderUsage(input_tokens=1, output_tokens=1)
    reply = _reply("Hi.")
    second = [*first, reply, UserMessage(content="Bye.")]
    await session.prepare(second, usage={1: usage, 0: earlier})
    answers = [e for e in events if isinstance(e, ModelResponseEvent)]
    assert [(a.request_id, a.usage, a.message, a.stop_reason, a.call) for a in answers] == [
        ("step-0", usage, reply, "end_turn", "observed")
    ]
    # Usage for another message than the newest reply is not this request's.
    third = [*second, _reply("Bye."), UserMessage(content="Wait.")]
    await session.prepare(third, usage={1: usage})
    assert len([e for e in events if isinstance(e, ModelResponseEvent)]) == 1


async def test_the_newest_of_several_new_replies_carries_the_usage() -> None:
    session = _session()
    events = _events(session)
    await session.prepare([UserMessage(content="Start.")])
    new = [_reply("one"), UserMessage(content="go on"), _reply("two"), UserMessage(content="and")]
    messages = [UserMessage(content="Start."), *new]
    usage = ProviderUsage(input_tokens=50, output_tokens=3)
    await session.prepare(messages, usage={3: usage})
    [answer] = [e for e in events if isinstance(e, ModelResponseEvent)]
    assert answer.message == new[2] and answer.usage == usage


async def test_every_request_carries_the_system_prompt_tools_model_and_output_reserve() -> None:
    counter = ApproximateCounter()
    session = _session(model="claude-sonnet-4-6", max_output_tokens=2_000, counter=counter)
    events = _events(session)
    assert session.model.name == "claude-sonnet-4-6" and session.model.max_output_tokens == 2_000
    await session.prepare([UserMessage(content="Hello.")], system="Be brief.", tools=[TOOL])
    [build] = [e for e in events if isinstance(e, ContextBuildEvent)]
    assert build.call == "observed"
    assert build.request is not None
    assert build.request.system == "Be brief." and build.request.tools == (TOOL,)
    manifest = build.manifest
    assert manifest is session.manifests[0]
    assert manifest.model == "claude-sonnet-4-6"
    assert [i.id for i in manifest.items if i.placement == "system"] == ["system/system_prompt"]
    assert manifest.totals["system"] == counter.count("Be brief.").tokens + 4
    assert manifest.totals["tools"] > 0
    unnamed = _session()
    assert unnamed.model.name == "unknown model" and unnamed.name == "observed agent"
    await unnamed.prepare([UserMessage(content="Hello.")])
    assert unnamed.manifests[0].model == ""
    # The response's reserve comes off the input limit.
    larger = _session(max_output_tokens=3_000)
    await larger.prepare([UserMessage(content="Hello.")])
    assert manifest.input_limit - larger.manifests[0].input_limit == 1_000
    assert unnamed.manifests[0].input_limit > manifest.input_limit
    assert unnamed.manifests[0].totals["system"] == 0


async def test_each_request_says_what_changed_since_the_one_before() -> None:
    session = _session()
    await session.prepare([UserMessage(content="Hello.")])
    second = [UserMessage(content="Hello."), _reply("Hi."), UserMessage(content="Bye.")]
    await session.prepare(second)
    assert session.manifests[0].diff is None
    diff = session.manifests[1].diff
    assert diff is not None and len(diff.added) == 2 and diff.removed == ()


async def test_a_finished_turn_is_not_a_request() -> None:
    session = _session()
    events = _events(session)
    done = [UserMessage(content="Hello."), _reply("Hi.")]
    assert await session.prepare(done) == done
    assert session.manifests == [] and events == []
    # The next call continues after it (nothing restarted).
    assert await session.prepare([*done, UserMessage(content="Bye.")])
    assert session.resyncs == 0 and len(session.manifests) == 1
    assert await session.prepare([]) == [] and len(session.manifests) == 1


async def test_running_is_true_while_a_request_is_prepared() -> None:
    session = _session()
    assert session.running is False and session.sources == {}  # nothing to edit in a Lab
    seen: list[bool] = []
    session.subscribe(lambda _event: seen.append(session.running))
    await session.prepare([UserMessage(content="Hello.")])
    assert seen == [True] and session.running is False


async def test_a_compaction_is_an_event_graded_on_the_frameworks_history() -> None:
    calls: list[int] = []

    async def summarizer(request: SummaryRequest) -> dict[str, str]:
        calls.append(len(request.messages))
        return await extractive_summarizer(request)

    session = _session(context_window=3_000, summarizer=summarizer)
    events = _events(session)
    history: list[UserMessage | AssistantMessage] = []
    for n in range(12):
        history.append(UserMessage(content=f"Step {n}: check the file src/part_{n}.py " * 20))
        await session.prepare(history)
        history.append(_reply(f"Checked src/part_{n}.py: fine."))
    compactions = [e for e in events if isinstance(e, CompactionEvent)]
    assert compactions and calls  # the summarizer given is the one called
    event = compactions[0]
    assert (event.trigger, event.call) == ("automatic", "observed")
    assert event.record.method == "summary" and event.record.retention is not None
    # It comes right after the build of the request that compacted.
    build = events[events.index(event) - 1]
    assert isinstance(build, ContextBuildEvent)
    assert any(t.kind == "history_compaction" for t in build.manifest.transforms)
    # The transcript is the framework's whole history, not the compacted state.
    assert len(session.transcript().messages) == len(history) - 1


async def test_observe_mode_records_a_failure_and_goes_on_from_the_frameworks_list() -> None:
    session = _session("observe", context_window=2_000)
    events = _events(session)
    huge = [UserMessage(content="pasted log line\n" * 5_000)]
    assert await session.prepare(huge) == huge
    assert isinstance(session.last_error, ContextBudgetExceeded)
    builds = [e for e in events if isinstance(e, ContextBuildEvent)]
    assert [(b.call, b.manifest.validation, b.request) for b in builds] == [
        ("observed", "budget_exceeded", None)
    ]
    [error] = [e for e in events if isinstance(e, ErrorEvent)]
    assert error.error is session.last_error and error.call == "observed"
    assert session.running is False and session.material_messages == 0
    # The state was dropped: the next list is taken whole, as given.
    fine = [UserMessage(content="short")]
    assert await session.prepare(fine) == fine
    assert session.manifests[-1].validation == "passed"
    assert [i.placement for i in session.manifests[-1].items] == ["conversation"]


async def test_the_transcript_is_everything_the_agent_said_and_did() -> None:
    session = _session(name="support bot", config=ContextConfig(tool_result_limit=50))
    sent = await session.prepare(_call(), system="Be brief.", tools=[TOOL])
    more = [*sent, _reply("Many files."), UserMessage(content="Thanks.")]
    await session.prepare(more, system="Be brief.", tools=[TOOL])
    transcript = session.transcript()
    assert transcript.name == "support bot"
    assert transcript.system == "Be brief." and transcript.tools == (TOOL,)
    assert transcript.meta == {"source": "observed", "resyncs": 0}
    # The framework's own messages: the listing whole, not ctxlab's cut.
    assert transcript.messages[2] == _call()[2]
    assert len(transcript.messages) == 5


async def test_a_response_before_any_request_is_ignored() -> None:
    session = _session()
    events = _events(session)
    session.record_response(_reply("stray"), ProviderUsage(input_tokens=1, output_tokens=1))
    assert events == []


async def test_a_new_config_applies_from_the_next_request() -> None:
    session = _session(config=ContextConfig(tool_result_limit=50))
    assert session.context_config == ContextConfig(tool_result_limit=50)
    await session.prepare([UserMessage(content="Hello.")])
    session.context_config = ContextConfig(tool_result_limit=5_000)
    sent = await session.prepare(
        [UserMessage(content="Hello."), *_call()[1:]]  # a call and its listing, whole
    )
    assert sent[-1] == _call()[-1]  # not cut under the new limit


async def test_the_next_thresholds_are_the_lines_the_next_request_is_prepared_under() -> None:
    session = _session(max_output_tokens=2_000, config=ContextConfig(trigger_ratio=0.5))
    ahead = session.next_thresholds()
    assert (ahead.context_size, ahead.trigger_tokens, ahead.output_reservation) == (
        8_000,
        4_000,
        2_000,
    )
    await session.prepare([UserMessage(content="Hello.")])
    assert session.manifests[0].thresholds == ahead
    session.context_config = ContextConfig(trigger_ratio=0.25)
    assert session.next_thresholds().trigger_tokens == 2_000
