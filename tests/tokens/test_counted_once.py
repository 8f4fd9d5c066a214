"""The shortcuts of the token cache give the counts and the bookkeeping of the long way.

`TokenCache.count_ahead` assigns one batch of counts to many blocks (tool calls have two
texts, results with documents several); `TokenCache.messages` sums counted messages without
calling `message` for each; `truncate_results` takes a result's text count from the block's
count instead of tokenizing the text again. Each is checked here against the plain
definition, on generated conversations.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import (
    ApproximateCounter,
    AssistantMessage,
    TextBlock,
    TiktokenCounter,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.messages import DocumentBlock, ImageBlock
from ctxlab.pipeline._results import (
    _MARKER_SAMPLE,
    head_within,
    truncate_results,
    truncation_notice,
)
from ctxlab.tokens import TokenCache
from ctxlab.tokens._parts import MESSAGE_OVERHEAD, block_parts
from tests.helpers import CountingCounter

words = st.text(alphabet="abc xyz\né✓0123456789{}", max_size=300)
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="


def image() -> ImageBlock:
    return ImageBlock(source={"type": "base64", "media_type": "image/png", "data": PNG})


def document(text: str) -> DocumentBlock:
    return DocumentBlock(
        source={"type": "text", "media_type": "text/plain", "data": text}, title="t"
    )


@st.composite
def conversations(draw: Any) -> list[UserMessage | AssistantMessage]:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content=draw(words) or "go")]
    for n in range(draw(st.integers(1, 8))):
        call = f"c{n}"
        args = {"cmd": draw(words), "n": draw(st.integers())}
        messages.append(
            AssistantMessage(
                content=(
                    TextBlock(text=draw(words) or "."),
                    ToolUseBlock(id=call, name="sh", input=args),
                )
            )
        )
        parts: list[Any] = [TextBlock(text=draw(words))]
        if draw(st.booleans()):
            parts.append(image())
        if draw(st.booleans()):
            parts.append(document(draw(words) or "doc"))
        content: Any = tuple(parts) if draw(st.booleans()) else draw(words)
        messages.append(UserMessage(content=(ToolResultBlock(tool_use_id=call, content=content),)))
    return messages


def by_definition(block: Any, counter: Any) -> int:
    fixed, texts = block_parts(block)
    return fixed + sum(counter.count_text(t) for t in texts)


@settings(max_examples=40, deadline=None)
@given(conversations())
def test_counting_ahead_gives_each_block_its_own_count(messages: list[Any]) -> None:
    counter = TiktokenCounter()
    ahead = TokenCache(counter)
    ahead.count_ahead(messages * 2)  # repeated messages: counted once, assigned to each
    for message in messages:
        for block in message.content:
            assert ahead.block(block) == by_definition(block, counter)
        assert ahead.message(message) == MESSAGE_OVERHEAD + sum(
            by_definition(b, counter) for b in message.content
        )


@settings(max_examples=40, deadline=None)
@given(conversations(), st.integers(0, 3))
def test_summing_messages_keeps_counts_and_hits(messages: list[Any], counted: int) -> None:
    fast, slow = TokenCache(ApproximateCounter()), TokenCache(ApproximateCounter())
    for cache in (fast, slow):  # some messages counted before, some not
        for message in messages[:counted]:
            cache.message(message)
    assert fast.messages(messages) == sum(slow.message(m) for m in messages)
    assert (fast.hits, fast.counted_blocks) == (slow.hits, slow.counted_blocks)


def test_a_result_with_images_and_documents_is_cut_as_if_its_text_were_counted_again() -> None:
    counter = TiktokenCounter()
    text = "\n".join(f"line {i}: ✓ value {i * 7}" for i in range(400))
    result = ToolResultBlock(
        tool_use_id="c1",
        content=(
            TextBlock(text=text),
            image(),
            document("a document " * 30),
        ),
    )
    messages = [
        AssistantMessage(content=(ToolUseBlock(id="c1", name="sh", input={}),)),
        UserMessage(content=(result,)),
    ]
    cache = TokenCache(counter)
    # The long way, as before: the text tokenized again, the rest of the block what it leaves.
    others = cache.block(result) - counter.count_text(text)
    assert others == by_definition(result, counter) - counter.count_text(text) > 1_000
    limit = others + 700
    out, transforms = truncate_results(messages, limit, None, cache)
    cut = out[1].content[0]
    budget = limit - (cache.text(_MARKER_SAMPLE) + 2) - others
    expected = head_within(text, budget, counter.count_text)
    assert cut.text == f"{expected}\n{truncation_notice(None)}" and len(expected) > 100
    # The images stay; the document goes with the cut text (`with_text`, as it always did).
    assert cut.images == result.images and cut.other_parts == ()
    assert [t.kind for t in transforms] == ["tool_result_truncation"]
    assert transforms[0].tokens_before == by_definition(result, counter)
    assert transforms[0].tokens_after == cache.block(cut) <= limit


@settings(max_examples=60, deadline=None)
@given(text=words, budgets=st.lists(st.integers(0, 120), min_size=1, max_size=4))
def test_a_head_kept_by_text_and_budget_is_the_head_cut_anew(text: str, budgets: list[int]) -> None:
    # `TokenCache.head` keeps what `head_within` cuts (a what-if cuts a result to the same limit
    # under config after config): each budget's own head, in any order, and once kept the
    # counter is not asked again.
    counter = CountingCounter()
    cache = TokenCache(counter)
    plain = ApproximateCounter().count_text
    for budget in budgets:
        assert cache.head(text, budget) == head_within(text, budget, plain)
    asked = len(counter.calls)
    for budget in reversed(budgets):
        assert cache.head(text, budget) == head_within(text, budget, plain)
    assert len(counter.calls) == asked
