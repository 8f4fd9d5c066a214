"""Anthropic's server-side context editing reproduced on the request sent, on hand-made sessions
with known answers: what is cleared at which request, what ``keep``, ``exclude_tools``,
``clear_at_least``, ``clear_tool_inputs`` and the triggers do, the working state untouched, the
thinking of older turns removed — and the cost model's cached prefix breaking at the first
cleared block."""

from __future__ import annotations

from typing import Any

from ctxlab import ContextConfig
from ctxlab.analysis._cost import CacheRules, Price, request_costs, shape_of
from ctxlab.config import ClearThinking, ClearToolUses, ProviderEdits
from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from tests.config.histories import thinking_of
from tests.helpers import prepared

PLACEHOLDER = ClearToolUses().placeholder


def _session(calls: list[tuple[str, str]], size: int = 400) -> list[UserMessage | AssistantMessage]:
    """A user task, then one call a turn: (call id, tool name), each result ``size`` words."""
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Find the bug.")]
    for call, name in calls:
        use = ToolUseBlock(id=call, name=name, input={"path": f"/src/{call}.py"})
        messages.append(AssistantMessage(content=(TextBlock(text="Looking."), use)))
        result = ToolResultBlock(tool_use_id=call, content=f"{call} " + "line " * size)
        messages.append(UserMessage(content=(result,)))
    messages.append(AssistantMessage(content="Found it."))
    return messages[:-1]  # the request is for the next reply


def _config(**edit: Any) -> ContextConfig:
    return ContextConfig(
        compaction={"prune": None},
        provider_edits=ProviderEdits(clear_tool_uses=ClearToolUses(**edit)),
    )


def _sent(prep: Any) -> dict[str, Any]:
    """Call id → the block sent for it: each result (by its call) and each call (by its id, as
    ``"use:<id>"``)."""
    blocks: dict[str, Any] = {}
    for message in prep.request.messages:
        if isinstance(message, UserMessage):
            blocks.update({b.tool_use_id: b for b in message.tool_results})
        else:
            blocks.update({f"use:{b.id}": b for b in message.tool_uses})
    return blocks


def _results(prep: Any) -> dict[str, str]:
    return {call: b.text for call, b in _sent(prep).items() if not call.startswith("use:")}


CALLS = [(f"c{n}", "read" if n != 1 else "grep") for n in range(6)]


async def test_below_the_trigger_nothing_is_cleared() -> None:
    prep = await prepared(_session(CALLS), context_window=200_000, config=_config())
    assert PLACEHOLDER not in _results(prep).values()
    assert not [t for t in prep.manifest.transforms if t.kind == "provider_clear_tool_uses"]


async def test_past_the_trigger_all_but_the_latest_keep_are_cleared_oldest_first() -> None:
    prep = await prepared(
        _session(CALLS), context_window=200_000, config=_config(trigger_input_tokens=1_000)
    )
    results = _results(prep)
    assert [c for c, text in results.items() if text == PLACEHOLDER] == ["c0", "c1", "c2"]
    assert all(results[c].startswith(c) for c in ("c3", "c4", "c5"))
    cleared = [t.target for t in prep.manifest.transforms if t.kind == "provider_clear_tool_uses"]
    assert cleared == ["c0", "c1", "c2"]
    # The provider edits what is sent; the agent's own state keeps every result.
    kept = [
        b.text
        for m in prep.state.conversation
        if isinstance(m, UserMessage)
        for b in m.tool_results
    ]
    assert PLACEHOLDER not in kept
    # The calls stay, so every result still answers one.
    assert prep.manifest.validation == "passed"


async def test_excluded_tools_and_keep() -> None:
    prep = await prepared(
        _session(CALLS),
        context_window=200_000,
        config=_config(trigger_input_tokens=1_000, keep=1, exclude_tools=("grep",)),
    )
    results = _results(prep)
    assert [c for c, text in results.items() if text == PLACEHOLDER] == ["c0", "c2", "c3", "c4"]


async def test_clear_at_least_is_a_gate() -> None:
    session = _session(CALLS, size=100)  # three clearable results of about 100 tokens each
    low = await prepared(
        session,
        context_window=200_000,
        config=_config(trigger_input_tokens=500, clear_at_least=200),
    )
    assert list(_results(low).values()).count(PLACEHOLDER) == 3
    high = await prepared(
        session,
        context_window=200_000,
        config=_config(trigger_input_tokens=500, clear_at_least=5_000),
    )
    assert PLACEHOLDER not in _results(high).values()


async def test_tool_inputs_cleared_all_or_by_name() -> None:
    def inputs(prep: Any) -> dict[str, Any]:
        return {c[4:]: b.input for c, b in _sent(prep).items() if c.startswith("use:")}

    everything = await prepared(
        _session(CALLS),
        context_window=200_000,
        config=_config(trigger_input_tokens=1_000, clear_tool_inputs=True),
    )
    assert [c for c, i in inputs(everything).items() if i == {}] == ["c0", "c1", "c2"]
    named = await prepared(
        _session(CALLS),
        context_window=200_000,
        config=_config(trigger_input_tokens=1_000, clear_tool_inputs=("grep",)),
    )
    assert [c for c, i in inputs(named).items() if i == {}] == ["c1"]


async def test_a_tool_use_trigger() -> None:
    five = await prepared(
        _session(CALLS[:5]),
        context_window=200_000,
        config=_config(trigger_input_tokens=None, trigger_tool_uses=5),
    )
    assert PLACEHOLDER not in _results(five).values()  # 5 uses: not more than 5
    six = await prepared(
        _session(CALLS),
        context_window=200_000,
        config=_config(trigger_input_tokens=None, trigger_tool_uses=5),
    )
    assert list(_results(six).values()).count(PLACEHOLDER) == 3


async def test_older_turns_lose_their_thinking() -> None:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Plan.")]
    for n in range(3):
        messages.append(
            AssistantMessage(
                content=(
                    ThinkingBlock(thinking=f"idea {n}", signature="s"),
                    TextBlock(text=f"step {n}"),
                )
            )
        )
        messages.append(UserMessage(content=f"go on {n}"))
    config = ContextConfig(provider_edits=ProviderEdits(clear_thinking=ClearThinking()))
    prep = await prepared(messages, context_window=200_000, config=config)
    thinking = [
        [b.thinking for b in m.content if isinstance(b, ThinkingBlock)]
        for m in prep.request.messages
        if isinstance(m, AssistantMessage)
    ]
    assert thinking == [[], [], ["idea 2"]]
    keep_all = ContextConfig(
        provider_edits=ProviderEdits(clear_thinking=ClearThinking(keep_turns=None))
    )
    prep = await prepared(messages, context_window=200_000, config=keep_all)
    assert sum(isinstance(b, ThinkingBlock) for m in prep.request.messages for b in m.content) == 3


async def test_a_tool_loop_is_one_thinking_turn() -> None:
    # Two user turns; the latest is a tool loop of three assistant messages, each thinking
    # (interleaved thinking): keep=1 keeps all three, and clears the first turn's.
    def thinking_call(n: int) -> AssistantMessage:
        use = ToolUseBlock(id=f"t{n}", name="read", input={"n": n})
        return AssistantMessage(content=(ThinkingBlock(thinking=f"idea {n}", signature="s"), use))

    def result(n: int) -> UserMessage:
        return UserMessage(content=(ToolResultBlock(tool_use_id=f"t{n}", content=f"r{n}"),))

    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="First.")]
    messages += [thinking_call(0), result(0)]
    messages.append(AssistantMessage(content=(ThinkingBlock(thinking="done 0", signature="s"),)))
    messages.append(UserMessage(content="Second."))
    for n in (1, 2, 3):
        messages += [thinking_call(n), result(n)]
    config = ContextConfig(provider_edits=ProviderEdits(clear_thinking=ClearThinking()))
    prep = await prepared(messages, context_window=200_000, config=config)
    assert thinking_of(prep.request.messages) == ["idea 1", "idea 2", "idea 3"]
    cleared = [t.target for t in prep.manifest.transforms if t.kind == "provider_clear_thinking"]
    assert cleared == ["turn 1", "turn 1"]


async def test_a_clear_breaks_the_cached_prefix_at_the_first_cleared_block() -> None:
    # The agent's successive requests (0 to 5 calls); only the last passes the trigger, and
    # clears the first result (keep=4). Each request caches up to its end (Anthropic's
    # breakpoint on the last message), so the last reads only what precedes the cleared
    # block and an earlier request ended on: the task alone. Unedited (the control), it reads
    # the whole previous request.
    unedited = await prepared(_session(CALLS[:5]), context_window=200_000)
    trigger = unedited.manifest.estimated_input_tokens - 1
    price, rules = Price(3, 15, 3.75, 0.3), CacheRules.anthropic(min_tokens=1)

    async def costs(config: ContextConfig) -> tuple[list[Any], list[Any]]:
        preps = [
            await prepared(_session(CALLS[:n]), context_window=200_000, config=config)
            for n in range(6)
        ]
        return preps, request_costs([shape_of(p.manifest) for p in preps], price, rules)

    preps, edited = await costs(_config(trigger_input_tokens=trigger, keep=4))
    assert [list(_results(p).values()).count(PLACEHOLDER) for p in preps] == [0, 0, 0, 0, 0, 1]
    task = preps[0].manifest.items[0].tokens
    assert edited[5].cache_read == task
    control_preps, control = await costs(_config(trigger_input_tokens=10**9))
    assert control[5].cache_read == control_preps[4].manifest.estimated_input_tokens
    assert edited[5].cache_write > control[5].cache_write


async def test_an_absolute_trigger_compacts_below_the_ratio_line() -> None:
    session = _session(CALLS)  # about 2,500 tokens
    ratio_only = ContextConfig(compaction={"prune": None})
    assert (await prepared(session, context_window=200_000, config=ratio_only)).compaction is None
    absolute = ContextConfig(
        compaction={"prune": None, "trigger_tokens": 1_500, "keep_messages": 2}
    )
    prep = await prepared(session, context_window=200_000, config=absolute)
    assert prep.compaction is not None
    assert prep.manifest.thresholds is not None and prep.manifest.thresholds.trigger_tokens == 1_500
    # Above the ratio line the ratio applies: the lower of the two.
    big = ContextConfig(compaction={"prune": None, "trigger_tokens": 10**7})
    lines = (await prepared(session, context_window=200_000, config=big)).manifest.thresholds
    assert lines is not None and lines.trigger_tokens == round(0.8 * 200_000)


async def test_the_servers_compaction_keeps_only_the_latest_turns() -> None:
    config = ContextConfig.preset("anthropic_compaction").merge(
        compaction={
            **ContextConfig.preset("anthropic_compaction").compaction.model_dump(),
            "trigger_tokens": 1_500,
        }
    )
    prep = await prepared(_session(CALLS), context_window=200_000, config=config)
    assert prep.compaction is not None
    kept = prep.state.conversation
    # The summary replaces everything before the latest turn (the last call with its result,
    # which the pipeline always keeps whole): keep_messages=1 keeps no message more.
    calls = [u.id for m in kept if isinstance(m, AssistantMessage) for u in m.tool_uses]
    assert calls == ["c5"] and prep.state.summary is not None


def _conversation_with_turns() -> list[UserMessage | AssistantMessage]:
    """Three user turns, each a question then one call and its (long) result; the reply after
    each result."""
    messages: list[UserMessage | AssistantMessage] = []
    for turn in range(3):
        messages.append(UserMessage(content=f"Question {turn}."))
        use = ToolUseBlock(id=f"t{turn}", name="search" if turn else "read", input={"q": turn})
        messages.append(AssistantMessage(content=(use,)))
        messages.append(
            UserMessage(
                content=(ToolResultBlock(tool_use_id=f"t{turn}", content=f"r{turn} " + "x" * 800),)
            )
        )
        messages.append(AssistantMessage(content=f"Answer {turn}."))
    return messages


async def test_the_agents_sdk_trimmer_trims_outputs_before_the_recent_user_turns() -> None:
    # The expected texts are what openai-agents 0.24.0's own ToolOutputTrimmer returns for the
    # same items (checked by running it on their Responses form; the SDK is not a test extra).
    from ctxlab.config import TrimToolOutputs

    def config(**trim: Any) -> ContextConfig:
        return ContextConfig(
            provider_edits=ProviderEdits(trim_tool_outputs=TrimToolOutputs(**trim))
        )

    session = [*_conversation_with_turns(), UserMessage(content="Question 3.")]
    prep = await prepared(session, context_window=200_000, config=config())
    results = _results(prep)
    # Before the 2nd user message from the end ("Question 2."): t0 and t1; t2 is recent.
    assert (
        results["t0"]
        == "[Trimmed: read output — 803 chars → 200 char preview]\n"
        + ("r0 " + "x" * 800)[:200]
        + "..."
    )
    assert results["t1"].startswith("[Trimmed: search output — 803 chars")
    assert results["t2"].startswith("r2 ")
    assert [
        t.target for t in prep.manifest.transforms if t.kind == "provider_trim_tool_output"
    ] == ["t0", "t1"]
    # Only the named tools, only outputs over the limit, never the session's own copy.
    only = await prepared(
        session, context_window=200_000, config=config(trimmable_tools=("search",))
    )
    assert _results(only)["t0"].startswith("r0 ") and _results(only)["t1"].startswith("[Trimmed")
    short = await prepared(session, context_window=200_000, config=config(max_output_chars=900))
    assert all(text.startswith("r") for text in _results(short).values())
    assert all(
        b.text.startswith("r")
        for m in prep.state.conversation
        if isinstance(m, UserMessage)
        for b in m.tool_results
    )


async def test_with_one_user_message_the_trimmer_never_trims() -> None:
    from ctxlab.config import TrimToolOutputs

    config = ContextConfig(provider_edits=ProviderEdits(trim_tool_outputs=TrimToolOutputs()))
    prep = await prepared(_session(CALLS, size=400), context_window=200_000, config=config)
    assert not [t for t in prep.manifest.transforms if t.kind == "provider_trim_tool_output"]


async def test_openai_truncation_drops_the_oldest_whole_turns_until_the_request_fits() -> None:
    session = _session(CALLS, size=400)  # six calls of about 500 tokens each
    config = ContextConfig.preset("openai_truncation")
    whole = await prepared(session, context_window=200_000, config=config)
    assert not [t for t in whole.manifest.transforms if t.kind == "provider_truncation"]
    # An input limit that holds about two of the six turns.
    capped = config.merge(budget={"max_input_tokens": 1_500})
    prep = await prepared(session, context_window=200_000, config=capped)
    (cut,) = [t for t in prep.manifest.transforms if t.kind == "provider_truncation"]
    sent = prep.request.messages
    # A stand-in opens the request where the dropped turns were; no result without its call.
    assert sent[0].content[0].text.startswith("[the conversation before this point was dropped")
    assert prep.manifest.validation == "passed"
    assert prep.manifest.estimated_input_tokens <= prep.manifest.input_limit
    kept_calls = [u.id for m in sent if isinstance(m, AssistantMessage) for u in m.tool_uses]
    assert kept_calls == ["c4", "c5"] or kept_calls == ["c5"]
    assert cut.detail.endswith("(truncation: auto)")
    # Nothing is summarized, and the working state keeps every message.
    assert prep.compaction is None and len(prep.state.conversation) == len(session)


async def test_openai_truncation_replays_a_long_session_without_an_invalid_request() -> None:
    from ctxlab.analysis._replay import replay
    from ctxlab.tokens import ApproximateCounter

    session = [
        *_session([(f"c{n}", "read") for n in range(40)], size=300),
        AssistantMessage(content="Done."),
    ]
    steps = [
        step
        async for step in replay(
            session,
            context_window=12_000,
            counter=ApproximateCounter(),
            config=ContextConfig.preset("openai_truncation"),
        )
    ]
    assert [s.manifest.validation for s in steps] == ["passed"] * len(steps)
    assert max(s.manifest.estimated_input_tokens for s in steps) <= steps[0].manifest.input_limit
    assert any(t.kind == "provider_truncation" for s in steps for t in s.manifest.transforms)


def test_truncation_cuts_at_a_turn_for_any_room() -> None:
    from ctxlab.pipeline._provider_edits import TRUNCATED, truncate_oldest
    from ctxlab.tokens import ApproximateCounter, TokenCache

    cache = TokenCache(ApproximateCounter())
    session = tuple(_session(CALLS, size=150))
    total = cache.messages(session)
    for room in range(50, total + 200, 37):
        sent, done = truncate_oldest(session, cache, room)
        if not done:  # it fits as it is, or no cut could make it fit
            assert sent == session
            assert (
                room >= total
                or cache.messages((UserMessage(content=TRUNCATED), session[-2], session[-1])) > room
            )
            continue
        assert sent[0].content[0].text == TRUNCATED and isinstance(sent[1], AssistantMessage)
        assert cache.messages(sent) <= room
        calls = {u.id for m in sent if isinstance(m, AssistantMessage) for u in m.tool_uses}
        assert all(
            r.tool_use_id in calls
            for m in sent
            if isinstance(m, UserMessage)
            for r in m.tool_results
        )


async def test_in_the_boundary_message_only_the_results_before_the_users_words_are_old() -> None:
    from ctxlab.config import TrimToolOutputs

    def call(n: int) -> AssistantMessage:
        return AssistantMessage(content=(ToolUseBlock(id=f"b{n}", name="read", input={}),))

    def result(n: int) -> ToolResultBlock:
        return ToolResultBlock(tool_use_id=f"b{n}", content=f"b{n} " + "y" * 800)

    session: list[UserMessage | AssistantMessage] = [
        UserMessage(content="Question 1."),
        AssistantMessage(
            content=(
                ToolUseBlock(id="b0", name="read", input={}),
                ToolUseBlock(id="b1", name="read", input={}),
            )
        ),
        # One merged user turn (as some imports make): a result, the user's words, a result.
        UserMessage(content=(result(0), TextBlock(text="Question 2."), result(1))),
        call(2),
        UserMessage(content=(result(2),)),
        AssistantMessage(content="Read."),
        # So "Question 2." is the 2nd user message from the end: the boundary.
        UserMessage(content="Question 3."),
    ]
    config = ContextConfig(provider_edits=ProviderEdits(trim_tool_outputs=TrimToolOutputs()))
    prep = await prepared(session, context_window=200_000, config=config)
    results = _results(prep)
    assert results["b0"].startswith("[Trimmed: read output")
    assert results["b1"].startswith("b1 ") and results["b2"].startswith("b2 ")


def _questions_and_calls() -> list[UserMessage | AssistantMessage]:
    """Three user questions, each answered with a long tool result, then a fourth question."""
    messages: list[UserMessage | AssistantMessage] = []
    for turn in range(3):
        messages.append(UserMessage(content=f"Question {turn}: check item {turn * 7}."))
        use = ToolUseBlock(id=f"q{turn}", name="read", input={"n": turn})
        messages.append(AssistantMessage(content=(use,)))
        result = ToolResultBlock(tool_use_id=f"q{turn}", content=f"out{turn} " + "y " * 600)
        messages.append(UserMessage(content=(result,)))
        messages.append(AssistantMessage(content=f"Item {turn * 7} is fine."))
    messages.append(UserMessage(content="Question 3: and the last one?"))
    return messages


async def _compacted(name: str) -> Any:
    base = ContextConfig.preset(name)
    config = base.merge(compaction={**base.compaction.model_dump(), "trigger_tokens": 1_000})
    return await prepared(_questions_and_calls(), context_window=200_000, config=config)


async def test_openais_compaction_keeps_every_user_message_verbatim() -> None:
    prep = await _compacted("openai_compaction")
    assert prep.compaction is not None and prep.state.summary is not None
    text = prep.state.summary.text
    # Every question the user asked before the compaction is there word for word, in order, ...
    asked = [f"Question {t}: check item {t * 7}." for t in range(3)]
    assert [text.index(q) for q in asked] == sorted(text.index(q) for q in asked)
    # ... and no tool output (not the user's words) is.
    assert "out0 y" not in text and "out2 y" not in text
    # They left the conversation (only the latest turn stays whole): they are not sent twice.
    kept = [b.text for m in prep.state.conversation for b in m.content if isinstance(b, TextBlock)]
    assert kept == ["Item 14 is fine.", "Question 3: and the last one?"]


async def test_anthropics_compaction_pins_only_the_first_message() -> None:
    # The control: without pin_user_messages the later questions are left to the summary.
    prep = await _compacted("anthropic_compaction")
    assert prep.state.summary is not None
    assert "Question 0: check item 0." in prep.state.summary.text
    assert "Question 2: check item 14." not in prep.state.summary.text


async def test_a_turn_that_held_only_thinking_is_not_sent_as_an_empty_text() -> None:
    """The API refuses an empty text block: an old assistant message of thinking alone goes
    entirely, and the request stays valid (no empty block anywhere in it)."""
    messages: list[UserMessage | AssistantMessage] = [
        UserMessage(content="First."),
        AssistantMessage(content=(ThinkingBlock(thinking="only thought", signature="s"),)),
        UserMessage(content="Second."),
        AssistantMessage(content=(ThinkingBlock(thinking="kept", signature="s"),)),
        UserMessage(content="Third."),
    ]
    config = ContextConfig(provider_edits=ProviderEdits(clear_thinking=ClearThinking()))
    prep = await prepared(messages, context_window=200_000, config=config)
    sent = prep.request.messages
    assert [m.role for m in sent] == ["user", "user", "assistant", "user"]
    assert all(b.text.strip() for m in sent for b in m.content if isinstance(b, TextBlock)), (
        "an empty text block would be refused"
    )
    assert prep.manifest.validation == "passed"
    # The working state keeps the thinking: the edit is on what is sent.
    assert len(prep.state.conversation) == 5


def test_what_the_server_reported_clearing_is_cleared_oldest_first() -> None:
    from ctxlab.pipeline._reported_edits import as_reported

    messages = [*_session(CALLS, size=10)]
    messages.insert(2, AssistantMessage(content=(ThinkingBlock(thinking="t", signature="s"),)))
    edits = ProviderEdits(
        clear_tool_uses=ClearToolUses(exclude_tools=("grep",), clear_tool_inputs=("read",)),
        clear_thinking=ClearThinking(),
    )
    reported = [
        {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3},
        {"type": "clear_thinking_20251015", "cleared_thinking_turns": 1},
    ]
    edited = as_reported(messages, edits, reported)
    results = {
        r.tool_use_id: r.text for m in edited if isinstance(m, UserMessage) for r in m.tool_results
    }
    # c1 is grep (excluded): the three oldest clearable are c0, c2, c3.
    assert [c for c, text in results.items() if text == PLACEHOLDER] == ["c0", "c2", "c3"]
    inputs = {u.id: u.input for m in edited if isinstance(m, AssistantMessage) for u in m.tool_uses}
    assert inputs["c0"] == {} and inputs["c4"] != {}
    assert not any(isinstance(b, ThinkingBlock) for m in edited for b in m.content)
    assert len(edited) == len(messages) - 1  # the thinking-only message is not sent
    # Nothing reported, nothing cleared.
    assert as_reported(messages, edits, []) == tuple(messages)
