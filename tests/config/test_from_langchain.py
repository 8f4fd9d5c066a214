"""`ContextConfig.from_(middleware, "langchain")` field by field, on LangChain's own middleware
objects: each trigger kind, the kept tail, the prompt's braces, the tool-result clearing's
fields — and each setting ctxlab has no equivalent for refused with the reason and what to
write instead (the values named as given)."""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab import ContextConfig
from ctxlab.config import ClearToolUses
from ctxlab.exceptions import UsageError

pytest.importorskip("langchain.agents")

from langchain.agents.middleware import (
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    SummarizationMiddleware,
)
from langchain_core.messages import AIMessage

from tests.integrations.test_langchain import _Model

PROMPT = "Summarize {{carefully}}:\n{messages}\nDone."


def _summarizer(**options: Any) -> SummarizationMiddleware:
    # A profile: LangChain refuses a fractional trigger or tail for a model without one.
    model = _Model(
        messages=iter([AIMessage(content="s")]), sent=[], profile={"max_input_tokens": 200_000}
    )
    options.setdefault("trim_tokens_to_summarize", None)
    options.setdefault("summary_prompt", PROMPT)
    return SummarizationMiddleware(model, **options)


def _unprofiled(**options: Any) -> SummarizationMiddleware:
    model = _Model(messages=iter([AIMessage(content="s")]), sent=[])
    options.setdefault("trim_tokens_to_summarize", None)
    return SummarizationMiddleware(model, **options)


def _read(*middleware: Any, window: int | None = None) -> ContextConfig:
    if window is None:
        return ContextConfig.from_(list(middleware), "langchain")
    return ContextConfig.from_(list(middleware), "langchain", context_window=window)


def test_each_trigger_kind_and_the_lowest_of_several() -> None:
    by_fraction = _read(_summarizer(trigger=("fraction", 0.7), keep=("messages", 8)))
    assert by_fraction.trigger_ratio == 0.7
    assert by_fraction.compaction.keep_messages == 8
    several = _read(
        _summarizer(
            trigger=[("tokens", 90_000), ("tokens", 60_000), ("messages", 40), ("messages", 30)]
        )
    )
    # LangChain summarizes at 60,000, ctxlab above its line: 59,999.
    assert (several.compaction.trigger_tokens, several.compaction.trigger_messages) == (
        59_999,
        30,
    )
    # No trigger: LangChain never summarizes, nor does the config read from it.
    assert _read(_summarizer(trigger=None)).compaction.enabled is False
    assert _read(_summarizer(trigger=("tokens", 5_000))).compaction.enabled is True


def test_the_kept_tail_and_the_prompt() -> None:
    assert (
        _read(_summarizer(trigger=("tokens", 9_000), keep=("fraction", 0.25))).reserve_ratio == 0.25
    )
    tail = _read(_summarizer(trigger=("tokens", 9_000), keep=("tokens", 3_000)), window=20_000)
    assert tail.reserve_ratio == 0.15
    # Without context_window, the window LangChain itself sizes by: the model's profile.
    by_profile = _read(_summarizer(trigger=("tokens", 9_000), keep=("tokens", 3_000)))
    assert by_profile.reserve_ratio == 3_000 / 200_000
    with pytest.raises(
        UsageError,
        match=r"middleware 0.keep=\('tokens', 3000\) is a tail of tokens.*no max_input_tokens"
        r".*pass context_window=",
    ):
        _read(_unprofiled(trigger=("tokens", 9_000), keep=("tokens", 3_000)))
    # str.format's doubled braces read as one; {messages} is where the history goes.
    read = _read(_summarizer(trigger=("tokens", 9_000)))
    assert read.compaction.summary_prompt == "Summarize {carefully}:\n{messages}\nDone."
    with pytest.raises(UsageError, match=r"middleware 0.summary_prompt has no \{messages\}"):
        _read(_summarizer(trigger=("tokens", 9_000), summary_prompt="Summarize it."))


def test_settings_without_an_equivalent_are_refused_with_what_to_write() -> None:
    with pytest.raises(
        UsageError,
        match=r"middleware 1.trim_tokens_to_summarize=4000 has no ctxlab equivalent: .*read it "
        r"with trim_tokens_to_summarize=None",
    ):
        _read(ContextEditingMiddleware(edits=[]), _summarizer(trim_tokens_to_summarize=4000))
    with pytest.raises(
        UsageError,
        match=r"middleware 0.edits\[0\].clear_at_least=2,500 has no ctxlab equivalent: .*read "
        r"it with clear_at_least=0",
    ):
        _read(ContextEditingMiddleware(edits=[ClearToolUsesEdit(clear_at_least=2_500)]))
    with pytest.raises(UsageError, match=r"middleware 0.edits\[1\]: a second tool-result clearing"):
        _read(ContextEditingMiddleware(edits=[ClearToolUsesEdit(), ClearToolUsesEdit()]))

    class OtherEdit:
        pass

    with pytest.raises(
        UsageError, match=r"middleware 0.edits\[0\]: edit OtherEdit has no ctxlab equivalent"
    ):
        _read(ContextEditingMiddleware(edits=[OtherEdit()]))  # type: ignore[list-item]
    with pytest.raises(
        UsageError, match=r"middleware 0.trigger \{'tokens': 10, 'messages': 5\} has no ctxlab"
    ):
        _read(_summarizer(trigger={"tokens": 10, "messages": 5}))


def test_the_clearing_edit_field_by_field() -> None:
    edit = ClearToolUsesEdit(
        trigger=42_000,
        keep=4,
        clear_tool_inputs=True,
        exclude_tools=("memory", "todo"),
        placeholder="[gone]",
    )
    read = _read(ContextEditingMiddleware(edits=[edit]))
    assert read.provider_edits is not None
    assert read.provider_edits.clear_tool_uses == ClearToolUses(
        trigger_input_tokens=42_000,
        keep=4,
        clear_tool_inputs=True,
        exclude_tools=("memory", "todo"),
        placeholder="[gone]",
    )
    with pytest.raises(UsageError, match=r"middleware 0.edits\[0\].trigger"):
        _read(ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=0)]))
