"""`ContextConfig.from_` names every setting it cannot honour, whatever else the setting holds:
each field of Anthropic's ``compact_20260112`` and of LangChain's ``SummarizationMiddleware``
made unreadable alone, in pairs and all at once (Hypothesis), and the error must name exactly
those — never one field where another is the one that matters, never a field that reads well.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig
from ctxlab.exceptions import UsageError

COMPACT_FIELDS = {
    # field: (a value ctxlab reads, a value it refuses)
    "pause_after_compaction": (False, True),
    "trigger": ({"type": "input_tokens", "value": 80_000}, {"type": "input_tokens", "value": 9}),
    "instructions": ("Summarize the work so far.", "   "),
}


def _named(message: str, where: str, fields: list[str]) -> set[str]:
    return {f for f in fields if f"{where}.{f}" in message}


@settings(max_examples=60, deadline=None)
@given(
    st.sets(st.sampled_from(sorted(COMPACT_FIELDS)), min_size=1),
    st.sets(st.sampled_from(sorted(COMPACT_FIELDS))),
)
def test_compact_names_every_field_it_refuses_and_no_other(bad: set[str], given_: set[str]) -> None:
    edit: dict[str, Any] = {"type": "compact_20260112"}
    for field in sorted(given_ | bad):
        edit[field] = COMPACT_FIELDS[field][1 if field in bad else 0]
    with pytest.raises(UsageError) as caught:
        ContextConfig.from_({"edits": [edit]})
    assert _named(str(caught.value), "edits[0]", list(COMPACT_FIELDS)) == bad


def test_compact_instructions_alone_are_read_as_the_summary_prompt() -> None:
    edit = {"type": "compact_20260112", "instructions": "Keep every path.", "trigger": None}
    read = ContextConfig.from_({"edits": [edit]})
    assert read.compression_prompt == "Keep every path."
    assert read.compaction.trigger_tokens == 150_000


def test_refusals_in_two_edits_are_both_named() -> None:
    edits = [
        {"type": "clear_tool_uses_20250919", "keep": {"type": "tool_uses", "value": -1}},
        {"type": "compact_20260112", "pause_after_compaction": True},
    ]
    with pytest.raises(UsageError, match=r"^2 settings cannot be read: \(1\) edits\[0\]\.keep"):
        ContextConfig.from_({"edits": edits})
    with pytest.raises(UsageError, match=r"\(2\) edits\[1\]\.pause_after_compaction=true"):
        ContextConfig.from_({"edits": edits})


TOOL_USES_FIELDS = {
    "trigger": ({"type": "tool_uses", "value": 4}, {"type": "turns", "value": 4}),
    "keep": ({"type": "tool_uses", "value": 2}, {"type": "tool_uses", "value": 1.5}),
    "clear_at_least": ({"type": "input_tokens", "value": 5_000}, {"type": "input_tokens"}),
    "exclude_tools": (["memory"], "memory"),
    "clear_tool_inputs": (True, "yes"),
}


@settings(max_examples=60, deadline=None)
@given(st.sets(st.sampled_from(sorted(TOOL_USES_FIELDS)), min_size=1))
def test_clear_tool_uses_names_every_field_it_refuses(bad: set[str]) -> None:
    edit: dict[str, Any] = {"type": "clear_tool_uses_20250919"}
    for field, (good, wrong) in TOOL_USES_FIELDS.items():
        edit[field] = wrong if field in bad else good
    with pytest.raises(UsageError) as caught:
        ContextConfig.from_({"edits": [edit]})
    assert _named(str(caught.value), "edits[0]", list(TOOL_USES_FIELDS)) == bad


# LangChain's own middleware objects: its defaults are the ones a user meets.
LANGCHAIN_FIELDS = ("trim_tokens_to_summarize", "trigger", "keep", "summary_prompt")


def _summarizer(bad: set[str]) -> Any:
    pytest.importorskip("langchain.agents")
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.messages import AIMessage

    from tests.integrations.test_langchain import _Model

    model = _Model(messages=iter([AIMessage(content="s")]), sent=[])  # no profile
    return SummarizationMiddleware(
        model,
        # LangChain's default trim (4,000 tokens) is the unreadable value.
        trim_tokens_to_summarize=4_000 if "trim_tokens_to_summarize" in bad else None,
        trigger={"tokens": 90_000, "messages": 50} if "trigger" in bad else ("tokens", 90_000),
        keep=("tokens", 15_000) if "keep" in bad else ("messages", 12),
        summary_prompt="Summarize it." if "summary_prompt" in bad else "Sum up:\n{messages}",
    )


@settings(max_examples=40, deadline=None)
@given(st.sets(st.sampled_from(LANGCHAIN_FIELDS), min_size=1))
def test_summarization_names_every_field_it_refuses_and_no_other(bad: set[str]) -> None:
    item = _summarizer(bad)
    with pytest.raises(UsageError) as caught:
        ContextConfig.from_([item], "langchain")
    assert _named(str(caught.value), "middleware 0", list(LANGCHAIN_FIELDS)) == bad
    # Told the window, the kept tail of tokens reads; every other refusal stays.
    if bad == {"keep"}:
        read = ContextConfig.from_([item], "langchain", context_window=100_000)
        assert read.thresholds(100_000)["reserve_tokens"] == 15_000
        return
    with pytest.raises(UsageError) as again:
        ContextConfig.from_([item], "langchain", context_window=100_000)
    assert _named(str(again.value), "middleware 0", list(LANGCHAIN_FIELDS)) == bad - {"keep"}


def test_a_summary_prompt_without_messages_is_named_beside_the_default_trim() -> None:
    """The report of the issue: a prompt LangChain cannot use was refused over the trim."""
    item = _summarizer({"trim_tokens_to_summarize", "summary_prompt"})
    with pytest.raises(
        UsageError,
        match=r"trim_tokens_to_summarize=4000 has no ctxlab equivalent.*\(2\) middleware 0\."
        r"summary_prompt has no \{messages\}",
    ):
        ContextConfig.from_([item], "langchain")


def test_a_kept_tail_the_ratios_refuse_names_the_langchain_fields() -> None:
    pytest.importorskip("langchain.agents")
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.messages import AIMessage

    from tests.integrations.test_langchain import _Model

    model = _Model(
        messages=iter([AIMessage(content="s")]), sent=[], profile={"max_input_tokens": 16_000}
    )
    item = SummarizationMiddleware(
        model, trigger=("fraction", 0.8), keep=("tokens", 13_600), trim_tokens_to_summarize=None
    )
    with pytest.raises(
        UsageError,
        match=r"middleware 0\.trigger=\('fraction', 0\.8\) as trigger_ratio=0\.8, middleware "
        r"0\.keep=\('tokens', 13600\) as reserve_ratio=0\.85 cannot be honoured: "
        r"config: .*reserve_ratio \(0\.85\) must be smaller than trigger_ratio \(0\.8\)",
    ):
        ContextConfig.from_([item], "langchain")
