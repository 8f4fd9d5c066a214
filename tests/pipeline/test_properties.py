"""Property tests: random conversations and configs keep the pipeline's promises."""

from __future__ import annotations

import asyncio
import base64
import tempfile
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ctxlab import (
    ApproximateCounter,
    AssistantMessage,
    ContextBlock,
    ContextBudgetExceeded,
    ContextConfig,
    ImageBlock,
    InvalidToolPairs,
    Material,
    Materials,
    Summary,
    SystemPart,
    TextBlock,
    TiktokenCounter,
    TokenCache,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    WorkingState,
    WorkspaceOffloader,
    extractive_summarizer,
    prepare,
)
from ctxlab.messages import find_tool_pair_problems
from ctxlab.pipeline import TRUNCATION_MARKER, CompactionOrder
from ctxlab.tokens import IMAGE_TOKENS

WORDS = st.sampled_from(
    ["error", "src/app.py", "def", "return", "pytest", "42", "\n", "ok", "Traceback", "x" * 30]
)


def text(min_words: int = 1, max_words: int = 40) -> st.SearchStrategy[str]:
    return st.lists(WORDS, min_size=min_words, max_size=max_words).map(" ".join)


huge_text = st.integers(1_000, 60_000).map(lambda n: ("line of output " * (n // 15 + 1))[:n])


def image(n: int) -> ImageBlock:
    return ImageBlock(
        source={
            "type": "base64",
            "media_type": "image/png",
            "data": base64.b64encode(f"img{n}".encode()).decode(),
        }
    )


@st.composite
def conversations(draw: st.DrawFn) -> tuple[list[Any], bool]:
    messages: list[Any] = [UserMessage(content=draw(text()))]
    counter = 0
    for _ in range(draw(st.integers(0, 25))):
        calls = draw(st.integers(0, 3))
        blocks: list[Any] = []
        if calls == 0 or draw(st.booleans()):
            # Sometimes a long assistant turn too, so splits land everywhere, not only at results.
            blocks.append(TextBlock(text=draw(st.one_of(text(), text(), huge_text))))
        ids = []
        for _ in range(calls):
            counter += 1
            ids.append(f"call_{counter}")
            blocks.append(
                ToolUseBlock(
                    id=ids[-1],
                    name=draw(st.sampled_from(["bash", "read"])),
                    input={"arg": draw(text(1, 5))},
                )
            )
        messages.append(AssistantMessage(content=tuple(blocks)))
        if ids:
            results = []
            for call_id in ids:
                content: Any = (
                    draw(st.one_of(text(), huge_text))
                    if draw(st.integers(0, 5))
                    else (TextBlock(text=draw(text())), image(counter))
                )
                results.append(ToolResultBlock(tool_use_id=call_id, content=content))
            if draw(st.integers(0, 4)) == 0:
                results.append(image(counter + 1000))
            messages.append(UserMessage(content=tuple(results)))
        else:
            messages.append(UserMessage(content=draw(text())))
    unfinished = draw(st.integers(0, 5)) == 0
    if unfinished:
        messages.append(AssistantMessage(content=(ToolUseBlock(id="pending", name="bash"),)))
        if draw(st.booleans()):
            # The unfinished call is not last: a user turn follows without its result.
            messages.append(UserMessage(content=draw(text())))
    elif draw(st.integers(0, 8)) == 0:
        # An orphan result: answers a call nobody made.
        messages.append(UserMessage(content=(ToolResultBlock(tool_use_id="ghost", content="?"),)))
        unfinished = True  # invalid either way: InvalidToolPairs is the only right outcome
    return messages, unfinished


@st.composite
def configs(draw: st.DrawFn) -> ContextConfig:
    trigger = draw(st.floats(0.3, 0.9))
    buffer = draw(st.floats(0.0, trigger - 0.05))
    reserve = draw(st.floats(0.02, trigger - 0.05))
    passes: dict[str, Any] = {}
    if draw(st.booleans()):
        passes["trigger_messages"] = draw(st.integers(4, 30))
    if draw(st.booleans()):
        passes["keep_messages"] = draw(st.integers(1, 9))
    if draw(st.booleans()):
        passes["truncate_args"] = {"trigger_messages": draw(st.integers(2, 20)), "keep_messages": 2}
    return ContextConfig(
        trigger_ratio=trigger,
        context_buffer_ratio=buffer,
        reserve_ratio=reserve,
        tool_result_limit=draw(st.integers(50, 8_000)),
        max_image_num=draw(st.integers(0, 5)),
        compression_fallback_to_truncation=True,
        compaction=passes,
    )


@st.composite
def situations(draw: st.DrawFn) -> tuple[Summary | None, bool, bool]:
    """(an earlier summary, a forced compaction, a summarizer that fails)."""
    earlier = None
    if draw(st.integers(0, 3)) == 0:
        earlier = Summary(
            fields={"task_overview": "fix"}, text=draw(text(1, 300)), compacted_messages=4
        )
    return earlier, draw(st.integers(0, 4)) == 0, draw(st.integers(0, 4)) == 0


@st.composite
def materials(draw: st.DrawFn) -> Materials:
    blocks = []
    for i in range(draw(st.integers(0, 4))):
        make = draw(st.sampled_from([ContextBlock.runtime, ContextBlock.reference]))
        block = make(f"b{i}", draw(text(1, 200))).with_priority(draw(st.integers(0, 3)))
        if draw(st.integers(0, 3)) == 0:
            block = block.required()
        category = draw(st.sampled_from(["memory", "knowledge", "source"]))
        blocks.append(Material(f"{category}/b{i}", category, category, block))
    return Materials(system=(SystemPart("system_prompt", draw(text(1, 60))),), blocks=tuple(blocks))


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def failing_summarizer(request: Any) -> Any:
    raise RuntimeError("the summary model is down")


async def attempt(
    messages: list[Any],
    config: ContextConfig,
    window: int,
    mats: Materials,
    counter: Any,
    offload_dir: str,
    situation: tuple[Summary | None, bool, bool] = (None, False, False),
) -> Any:
    earlier, force, failing = situation
    try:
        return await prepare(
            WorkingState(conversation=tuple(messages), summary=earlier),
            context_window=window,
            counter=counter,
            config=config,
            materials=mats,
            summarizer=failing_summarizer if failing else extractive_summarizer,
            offloader=WorkspaceOffloader(offload_dir),
            request_id="fixed",
            compaction=CompactionOrder(force=force),
        )
    except (ContextBudgetExceeded, InvalidToolPairs) as exc:
        return exc


def tool_use_ids(messages: Any) -> list[str]:
    return [b.id for m in messages if isinstance(m, AssistantMessage) for b in m.tool_uses]


def check(
    messages: list[Any],
    unfinished: bool,
    config: ContextConfig,
    window: int,
    mats: Materials,
    counter: Any,
    situation: tuple[Summary | None, bool, bool] = (None, False, False),
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        outcome = run(attempt(messages, config, window, mats, counter, folder, situation))
        again = run(attempt(messages, config, window, mats, counter, folder, situation))
    event(type(outcome).__name__)
    if unfinished:
        assert isinstance(outcome, InvalidToolPairs)
        assert outcome.manifest is not None and outcome.manifest.validation == "invalid_tool_pairs"
        return
    if isinstance(outcome, ContextBudgetExceeded):
        failed = outcome.manifest
        assert failed is not None and failed.validation == "budget_exceeded"
        assert outcome.estimated_tokens > outcome.input_limit
        assert isinstance(again, ContextBudgetExceeded)
        # Only when nothing reducible is left: no optional material, and the conversation cut
        # down to its latest turn (the last assistant message and what follows it).
        optional = {m.item_id for m in mats.blocks if not m.block.is_required}
        assert not optional & {i.id for i in failed.items}
        latest = len(messages) - max(
            i for i, m in enumerate(messages) if isinstance(m, AssistantMessage) or i == 0
        )
        assert sum(1 for i in failed.items if i.placement == "conversation") <= latest + 1
        return
    manifest = outcome.manifest
    event(f"compaction={outcome.compaction.method if outcome.compaction else None}")
    event(f"transforms>0={bool(manifest.transforms)}")
    assert manifest.validation == "passed"
    # It fits.
    assert manifest.estimated_input_tokens <= manifest.input_limit
    # Every tool_use has its result and no result lacks its call, in the request itself.
    conversation = outcome.state.conversation
    assert find_tool_pair_problems(conversation) == []
    assert find_tool_pair_problems(outcome.request.messages) == []
    # Order preserved: what is kept is the most recent calls, in their order.
    kept = tool_use_ids(conversation)
    assert kept == tool_use_ids(messages)[len(tool_use_ids(messages)) - len(kept) :]
    # System first, in its own field; placements in layout order.
    assert outcome.request.system == mats.system[0].text
    order = ["system", "tools", "summary", "conversation", "transient", "references"]
    placements = [order.index(i.placement) for i in manifest.items]
    assert placements == sorted(placements)
    # Required material is never omitted.
    ids = {i.id for i in manifest.items}
    assert {m.item_id for m in mats.blocks if m.block.is_required} <= ids
    # Every result fits tool_result_limit; a cut one ends with the marker and the reminder.
    cache = TokenCache(counter)
    for message in conversation:
        for result in getattr(message, "tool_results", ()):
            if TRUNCATION_MARKER in result.text:
                assert result.text.endswith("</system-reminder>")
                assert "<<<TRUNCATED>>>\n<system-reminder>The remaining content" in result.text
            text_tokens = cache.block(result) - IMAGE_TOKENS * len(result.images)
            assert text_tokens <= max(config.tool_result_limit, 120) + 16
    # Images within the limit.
    images = sum(m.image_count for m in conversation if isinstance(m, UserMessage))
    assert images <= config.max_image_num
    # Deterministic.
    assert [i.content_hash for i in manifest.items] == [
        i.content_hash for i in again.manifest.items
    ]
    assert manifest.transform_codes == again.manifest.transform_codes


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example],
)
@given(conversations(), configs(), st.integers(3_000, 60_000), materials(), situations())
def test_pipeline_promises_approximate(
    conv: tuple[list[Any], bool],
    config: ContextConfig,
    window: int,
    mats: Materials,
    situation: tuple[Summary | None, bool, bool],
) -> None:
    messages, unfinished = conv
    check(messages, unfinished, config, window, mats, ApproximateCounter(), situation)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example],
)
@given(conversations(), configs(), st.integers(3_000, 60_000), materials())
def test_pipeline_promises_tiktoken(
    conv: tuple[list[Any], bool], config: ContextConfig, window: int, mats: Materials
) -> None:
    messages, unfinished = conv
    check(messages, unfinished, config, window, mats, COUNTER)


COUNTER = TiktokenCounter()
