"""The LangChain export run in LangChain, differentially: the exported middleware, given a
generated history in LangChain's own message types (Hypothesis), keeps what ctxlab's policy keeps
on the same history — the tool results it clears, the calls whose inputs it empties, the tail a
summary leaves verbatim — and where LangChain cannot do what ctxlab does, the difference is the
one `dropped` names."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.config import ClearToolUses, ProviderEdits
from ctxlab.pipeline import CompactionOrder, extractive_summarizer
from ctxlab.pipeline._provider_edits import apply_provider_edits
from ctxlab.tokens import TokenCache
from tests.config.histories import Message, histories, to_langchain, tool_use_clears
from tests.helpers import prepared, results_of

pytest.importorskip("langchain.agents", reason="the export is LangChain's own middleware")

CACHE = TokenCache(ApproximateCounter())

clearing = tool_use_clears(
    st.sampled_from([0, 0, 0, 500, 5_000]),
    placeholder=st.sampled_from(["[gone]", ClearToolUses().placeholder]),
)


def _run_clearing(middleware: Any, messages: list[Any]) -> list[Any]:
    """The middleware's own ``wrap_model_call``: the messages its handler is given."""
    from langchain.agents.middleware.types import ModelRequest
    from langchain_core.messages import AIMessage

    from tests.integrations.test_langchain import _Model

    seen: list[list[Any]] = []

    def handler(request: Any) -> Any:
        seen.append(list(request.messages))
        return AIMessage(content="ok")

    model = _Model(messages=iter([AIMessage(content="ok")]), sent=[])
    middleware.wrap_model_call(ModelRequest(model=model, messages=messages), handler)
    (sent,) = seen
    return sent


@settings(max_examples=120, deadline=None)
@given(histories(thinking=False), clearing, st.integers(0, 40_000))
def test_the_clearing_keeps_what_ctxlab_keeps(
    messages: list[Message], edit: ClearToolUses, tokens: int
) -> None:
    from langchain_core.messages import AIMessage, ToolMessage

    config = ContextConfig(provider_edits=ProviderEdits(clear_tool_uses=edit))
    exported = config.export("langchain")
    (middleware,) = exported.value
    # LangChain counts the messages with its own counter; ctxlab the whole request. The count
    # is given to both (`dropped` names the difference), so the test compares what each keeps.
    assert any(d.startswith("the trigger: LangChain compares") for d in exported.dropped)
    middleware.token_counter = lambda _messages: tokens
    sent_lc = _run_clearing(middleware, to_langchain(messages))
    cleared_lc = {
        m.tool_call_id
        for m in sent_lc
        if isinstance(m, ToolMessage) and m.content == edit.placeholder
    }
    emptied_lc = {
        c["id"]
        for m in sent_lc
        if isinstance(m, AIMessage)
        for c in m.tool_calls
        if c["args"] == {}
    }
    sent, _ = apply_provider_edits(messages, ProviderEdits(clear_tool_uses=edit), CACHE, tokens)
    cleared = {call for call, text in results_of(sent).items() if text == edit.placeholder}
    emptied = {u.id for m in sent if m.role == "assistant" for u in m.tool_uses if u.input == {}}  # type: ignore[union-attr]
    if edit.clear_at_least:
        # Exported as 0: LangChain clears whenever it fires; ctxlab only when that many can go.
        assert any(d.startswith("clear_at_least=") for d in exported.dropped)
        assert cleared <= cleared_lc
        if cleared:
            assert cleared == cleared_lc
    else:
        assert cleared_lc == cleared
    if isinstance(edit.clear_tool_inputs, tuple):
        assert emptied_lc == set() and any("by tool name" in d for d in exported.dropped)
    elif edit.clear_tool_inputs and not edit.clear_at_least:
        assert emptied_lc == emptied == cleared


def test_a_tool_use_trigger_is_named_not_lost() -> None:
    config = ContextConfig(
        provider_edits=ProviderEdits(clear_tool_uses=ClearToolUses(trigger_tool_uses=8))
    )
    exported = config.export("langchain")
    (middleware,) = exported.value
    assert middleware.edits[0].trigger == 100_000
    assert any(d.startswith("trigger_tool_uses=8") for d in exported.dropped)


def _summarizer() -> Any:
    from langchain_core.messages import AIMessage

    from tests.integrations.test_langchain import _Model

    return _Model(messages=iter([AIMessage(content="What happened so far.")] * 50), sent=[])


@settings(max_examples=40, deadline=None)
@given(histories(max_calls=1, thinking=False), st.integers(2, 12))
async def test_the_summary_keeps_the_tail_ctxlab_keeps(messages: list[Message], keep: int) -> None:
    """One result a turn (LangChain counts each result as a message, ctxlab a turn's results
    as one: `dropped` says so), a summary forced on both: the messages left verbatim after it."""
    from langchain_core.messages import HumanMessage

    config = ContextConfig.preset("langchain").merge(
        compaction={"keep_messages": keep, "prune": None, "flush_before_compact": False}
    )
    exported = config.export("langchain", model=_summarizer(), context_window=200_000)
    (summarizing,) = exported.value
    assert summarizing.trim_tokens_to_summarize is None
    assert any(d.startswith("keep_messages:") for d in exported.dropped)
    summarizing.token_counter = lambda _messages: 10**9  # past any trigger: it summarizes
    lc = to_langchain(messages)
    for n, message in enumerate(lc):
        message.id = f"m{n}"
    update = summarizing.before_model({"messages": lc}, None)
    prep = await prepared(
        messages,
        context_window=200_000,
        config=config,
        compaction=CompactionOrder(force=True),
        summarizer=extractive_summarizer,
    )
    if update is None:  # nothing LangChain can cut: ctxlab keeps all too
        assert prep.compaction is None
        return
    kept_lc = [m.id for m in update["messages"][2:]]  # after the removal and the summary
    assert isinstance(update["messages"][1], HumanMessage)
    assert prep.compaction is not None
    tail = prep.state.conversation
    # The same messages, by position from the end.
    assert kept_lc == [f"m{n}" for n in range(len(lc) - len(tail), len(lc))]


def test_the_summary_middleware_summarizes_the_whole_span() -> None:
    """LangChain's default keeps 4,000 tokens of the span for the summary and writes "Previous
    conversation was too long to summarize." when no user message starts within them; the export
    turns that off, so LangChain summarizes what ctxlab does."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    config = ContextConfig.preset("langchain")
    (summarizing,) = config.export("langchain", model=_summarizer(), context_window=200_000).value
    long_span: list[Any] = [HumanMessage(content="Read the logs.", id="h")]
    for n in range(30):
        call = {"id": f"c{n}", "name": "read", "args": {}}
        long_span.append(AIMessage(content="", tool_calls=[call], id=f"a{n}"))
        long_span.append(ToolMessage(content="log line\n" * 200, tool_call_id=f"c{n}", id=f"t{n}"))
    summarizing.token_counter = lambda _messages: 10**9
    update = summarizing.before_model({"messages": long_span}, None)
    assert update is not None
    summary = update["messages"][1].content
    assert "too long to summarize" not in summary
    assert "What happened so far." in summary


def test_a_langchain_kept_tail_of_tokens_reads_with_the_window() -> None:
    from langchain.agents.middleware import SummarizationMiddleware

    middleware = SummarizationMiddleware(
        _summarizer(),
        trigger=("tokens", 150_000),
        keep=("tokens", 15_000),
        trim_tokens_to_summarize=None,
        summary_prompt="Summarize: {messages} and {{keep braces}}",
    )
    with pytest.raises(Exception, match="pass context_window="):
        ContextConfig.from_([middleware], "langchain")
    read = ContextConfig.from_([middleware], "langchain", context_window=200_000)
    assert read.reserve_ratio == 0.075 and read.compaction.keep_messages is None
    # LangChain summarizes at 150,000, ctxlab above its line: 149,999.
    assert read.compaction.trigger_tokens == 149_999
    assert read.compaction.summary_prompt == "Summarize: {messages} and {keep braces}"
    again = read.export("langchain", model=_summarizer(), context_window=200_000).value
    assert again[0].keep == ("tokens", 15_000)
    assert again[0].trigger == ("tokens", 150_000)
    assert again[0].summary_prompt == "Summarize: {messages} and {{keep braces}}"


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda m: m.SummarizationMiddleware(_summarizer(), trigger=("tokens", 9)), "trim_tokens"),
        (
            lambda m: m.ContextEditingMiddleware(edits=[m.ClearToolUsesEdit(clear_at_least=500)]),
            r"clear_at_least=500 has no ctxlab equivalent",
        ),
        (
            lambda m: m.ContextEditingMiddleware(edits=[m.ClearToolUsesEdit(exclude_tools="bash")]),
            r"exclude_tools must be a list",
        ),
        (
            lambda m: m.ContextEditingMiddleware(edits=[m.ClearToolUsesEdit(trigger=-5)]),
            r"trigger must be a whole number from 1",
        ),
        (
            lambda m: m.ContextEditingMiddleware(
                edits=[m.ClearToolUsesEdit(clear_tool_inputs="false")]
            ),
            r"clear_tool_inputs must be true or false",
        ),
        (
            lambda m: m.SummarizationMiddleware(
                _summarizer(), trigger={"tokens": 9, "messages": 3}, trim_tokens_to_summarize=None
            ),
            r"not when several are at once",
        ),
    ],
)
def test_what_ctxlab_cannot_do_is_refused_by_name(make: Any, match: str) -> None:
    import langchain.agents.middleware as middleware

    from ctxlab.exceptions import UsageError

    with pytest.raises(UsageError, match=match):
        ContextConfig.from_([make(middleware)], "langchain", context_window=200_000)
