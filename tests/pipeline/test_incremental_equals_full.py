"""The incremental path equals the full one (issue 54, item 3): a preparer that keeps its
`PreparationMemo` processes only what each step appends, and every request, manifest and
candidate state it builds is the one a preparation from scratch builds — on random sessions and
configs (compaction lines, truncation, eviction to an offloader, a provider's own edits). A
control breaks the incremental path by one count and the check must see it."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxlab.pipeline._scan as scan_module
from ctxlab import (
    ApproximateCounter,
    ContextConfig,
    TokenCache,
    WorkingState,
    WorkspaceOffloader,
    extractive_summarizer,
    prepare,
)
from ctxlab.config._sections import ClearToolUses, ProviderEdits
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.pipeline import PreparationMemo
from tests.helpers import session


async def _walk(
    messages: list[UserMessage | AssistantMessage], window: int, config: ContextConfig, **more: Any
) -> tuple[int, set[str]]:
    """Every boundary prepared twice, with one kept memo and from scratch, committing the kept
    state as a replay does; asserts they agree. Returns how many steps compacted, and the kinds
    of transform seen."""
    memo, shared = PreparationMemo(), TokenCache(ApproximateCounter())
    state, compactions = WorkingState(), 0
    pending: list[UserMessage | AssistantMessage] = []
    kinds: set[str] = set()
    options = dict(context_window=window, config=config, summarizer=extractive_summarizer, **more)
    for number, message in enumerate(messages):
        if isinstance(message, UserMessage):
            pending.append(message)
            continue
        state, pending = state.append(*pending), []
        kept = await prepare(state, counter=shared, memo=memo, request_id=f"{number}", **options)
        fresh = await prepare(
            state, counter=TokenCache(ApproximateCounter()), request_id=f"{number}", **options
        )
        assert kept.request == fresh.request, number
        assert kept.manifest == fresh.manifest, number
        assert kept.state == fresh.state, number
        assert kept.compaction == fresh.compaction, number
        compactions += kept.compaction is not None
        kinds.update(t.kind for t in kept.manifest.transforms)
        state = kept.state
        pending.append(message)
    return compactions, kinds


CONFIGS = st.fixed_dictionaries(
    {
        "trigger_ratio": st.sampled_from([0.6, 0.8, 0.9]),
        "reserve_ratio": st.sampled_from([0.1, 0.3]),
        "tool_result_limit": st.sampled_from([40, 300, 8_000]),
    }
)


@settings(max_examples=20, deadline=None, database=None)
@given(
    turns=st.integers(4, 24),
    output=st.integers(20, 2_000),
    window=st.sampled_from([3_000, 6_000, 20_000]),
    lines=CONFIGS,
    evicted=st.booleans(),
    edited=st.booleans(),
)
async def test_the_kept_memo_prepares_what_a_preparation_from_scratch_does(
    turns: int, output: int, window: int, lines: dict[str, Any], evicted: bool, edited: bool
) -> None:
    config = ContextConfig(**lines)
    if edited:  # the provider clears old tool results itself, from a low trigger
        clear = ClearToolUses(trigger_input_tokens=window // 4)
        config = config.merge(provider_edits=ProviderEdits(clear_tool_uses=clear))
    messages = session(turns, output_chars=output)
    with tempfile.TemporaryDirectory() as folder:
        more: dict[str, Any] = {}
        if evicted:  # results over 500 characters go to the workspace
            config = config.merge(
                tool_result_eviction={"max_result_chars": 500, "preview_chars": 100}
            )
            more["offloader"] = WorkspaceOffloader(Path(folder))
        await _walk(messages, window, config, **more)


async def test_a_long_session_compacts_and_still_agrees() -> None:
    # The walk sees compactions (the reduced conversation rescanned) and steps between them.
    compactions, _ = await _walk(session(40, output_chars=600), 3_000, ContextConfig())
    assert compactions >= 3


async def test_eviction_truncation_and_the_providers_edits_are_walked() -> None:
    # What the random configs reach, reached here for sure: results offloaded, cut, and cleared
    # by the provider's edit on what is sent.
    clear = ClearToolUses(trigger_input_tokens=300)
    config = ContextConfig(
        tool_result_limit=40,
        provider_edits=ProviderEdits(clear_tool_uses=clear),
        tool_result_eviction={"max_result_chars": 1_000, "preview_chars": 100},
    )
    messages = session(10, output_chars=1_500)
    with tempfile.TemporaryDirectory() as folder:
        offloader = WorkspaceOffloader(Path(folder))
        _, kinds = await _walk(messages, 20_000, config, offloader=offloader)
    assert {"tool_result_offload", "tool_result_truncation", "provider_clear_tool_uses"} <= kinds


async def test_the_control_a_wrong_extension_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    # The incremental path broken by one token on what it appends: the walk must fail.
    # (`_grown`: what a scan that goes on from the last one appends, on either path.)
    real = scan_module._grown

    def off_by_one(base, suffix, counts):  # type: ignore[no-untyped-def]
        seen, items, pairs = real(base, suffix, counts)
        if items:
            items[-1] = dataclasses.replace(items[-1], tokens=items[-1].tokens + 1)
        return seen, items, pairs

    monkeypatch.setattr(scan_module, "_grown", off_by_one)
    with pytest.raises(AssertionError):
        await _walk(session(8, output_chars=300), 20_000, ContextConfig())
