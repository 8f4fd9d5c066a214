"""The memo after a reduction: a committed compaction (or a masked, pruned conversation) is
scanned once, and the steps that follow process only what they append — with the same requests
and manifests a preparation without a memo builds."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

import ctxlab.pipeline._common_step as common_step
import ctxlab.pipeline._preparation_memo as memo_module
import ctxlab.pipeline._prepare as prepare_module
from ctxlab import (
    ApproximateCounter,
    ContextConfig,
    TokenCache,
    WorkingState,
    extractive_summarizer,
    prepare,
)
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.pipeline import PreparationMemo, scan_conversation
from tests.helpers import session
from tests.pipeline.test_properties import image


async def _walk(
    messages: list[UserMessage | AssistantMessage],
    window: int,
    config: ContextConfig,
    scanned: list[int],
) -> int:
    """Prepare at every boundary as a replay does (committing each state), once with one memo
    and once without; assert both give the same request and manifest. Returns compactions."""
    memo, shared = PreparationMemo(), TokenCache(ApproximateCounter())
    state, pending, compactions = WorkingState(), [], 0
    for message in messages:
        if isinstance(message, UserMessage):
            pending.append(message)
            continue
        state = state.append(*pending)
        pending = []
        options: dict[str, Any] = dict(
            context_window=window,
            config=config,
            summarizer=extractive_summarizer,
            request_id="r",
        )
        scanned.clear()
        kept = await prepare(state, counter=shared, memo=memo, **options)
        fresh = await prepare(state, counter=TokenCache(ApproximateCounter()), **options)
        assert kept.request == fresh.request
        assert kept.manifest.items == fresh.manifest.items
        assert kept.manifest.transforms == fresh.manifest.transforms
        assert kept.manifest.estimated_input_tokens == fresh.manifest.estimated_input_tokens
        assert kept.state.conversation == fresh.state.conversation
        compactions += kept.compaction is not None
        state = kept.state
        pending.append(message)
    return compactions


@settings(max_examples=25, deadline=None, database=None)
@given(
    turns=st.integers(8, 36),
    output=st.integers(50, 1_500),
    window=st.sampled_from([2_500, 4_000, 8_000, 12_000]),
    limit=st.sampled_from([60, 300, 8_000]),
    masked=st.booleans(),
    images=st.sampled_from([None, 0, 2, 5]),
    every=st.sampled_from([2, 4]),
)
# Images in the tail a compaction keeps, and more arriving after it: the limit is reached later.
@example(turns=30, output=600, window=8_000, limit=8_000, masked=False, images=2, every=2)
async def test_a_memo_after_compactions_gives_what_no_memo_gives(
    turns: int, output: int, window: int, limit: int, masked: bool, images: int | None, every: int
) -> None:
    config = ContextConfig(tool_result_limit=limit)
    messages = session(turns, output_chars=output)
    if images is not None:
        # Every first or second result turn carries a screenshot, the image limit set: a
        # scan's image count decides when the oldest images go.
        config = config.merge(max_image_num=images)
        messages = [
            UserMessage(content=(image(i), *m.content)) if i and i % every == 0 else m
            for i, m in enumerate(messages)
        ]
    if masked:
        config = config.merge(compaction={"mask": {}})
    await _walk(messages, window, config, [])


async def test_after_a_compaction_the_next_step_scans_only_what_it_appends(monkeypatch) -> None:
    # The messages each step's scan processes (its ``suffix``), counted at `message_items`.
    scanned: list[int] = []
    real = scan_conversation

    def counting(conversation, config, offloader, cache, previous=None):  # type: ignore[no-untyped-def]
        done = len(previous.conversation) if previous is not None else 0
        same = previous is not None and conversation[:done] == previous.conversation
        scanned.append(len(conversation) - done if same else len(conversation))
        return real(conversation, config, offloader, cache, previous)

    monkeypatch.setattr(prepare_module, "scan_conversation", counting)
    # The stage's own reuse is what is counted: the common step's path scans without it.
    monkeypatch.setattr(common_step, "ENABLED", False)
    counts: list[int] = []
    messages = session(40, output_chars=600)

    class Tally(list):  # the per-step counts, kept whole (``_walk`` clears its list per step)
        def clear(self) -> None:
            counts.extend(scanned)
            scanned.clear()

    compactions = await _walk(messages, 3_000, ContextConfig(), Tally())
    counts.extend(scanned)
    assert compactions >= 3
    # Two preparations a step (with the memo, then without): the memo's are the even ones.
    with_memo = counts[0::2]
    # The first step scans the prompt and the first call's result (the replay appends the
    # user turn and the reply's result together); every later one the two messages it appends.
    assert with_memo[0] == 1 and set(with_memo[1:]) == {2}, with_memo


def test_a_scan_extended_once_is_copied_when_extended_again() -> None:
    # A memo's scan is handed on by extending it in place; scanning from it a second time (a
    # caller that kept it) must not see the first extension's items or tool ids.
    c, config = TokenCache(ApproximateCounter()), ContextConfig()
    messages = tuple(session(4, output_chars=80))
    base, _ = scan_conversation(messages[:5], config, None, c)
    first, _ = scan_conversation(messages[:7], config, None, c, base)
    again, _ = scan_conversation(messages[:9], config, None, c, base)
    full, _ = scan_conversation(messages[:9], config, None, TokenCache(ApproximateCounter()))
    assert base.spent and len(first.items) == 7
    assert again.items == full.items and len(again.items) == 9
    assert again.seen == full.seen and again.pairs.finish() == full.pairs.finish() == []
    assert first.items is not again.items and len(first.items) == 7


async def test_a_preparation_given_no_config_checks_the_default_once_per_memo(monkeypatch) -> None:
    # A new default config per call would miss the memo (it knows a config by identity) and be
    # validated, its lines computed, at every step of a replay.
    checks: list[object] = []
    real = memo_module.require_config

    def counting(config):  # type: ignore[no-untyped-def]
        checks.append(config)
        return real(config)

    monkeypatch.setattr(memo_module, "require_config", counting)
    memo, cache = PreparationMemo(), TokenCache(ApproximateCounter())
    messages = session(3, output_chars=40)
    for end in (1, 3, 5):
        state = WorkingState(conversation=tuple(messages[:end]))
        await prepare(state, context_window=8_000, counter=cache, memo=memo)
    assert len(checks) == 1 and checks[0] == ContextConfig()
