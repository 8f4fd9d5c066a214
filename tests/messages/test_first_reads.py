"""A message's first reads, made without generators (issue 54: every scan reads them once per
message): each equals what the former code gave, on generated turns of every block kind."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.messages._blocks import DocumentBlock, HintBlock, ImageBlock, ProviderBlock
from ctxlab.pipeline._provider_edits import has_compaction_block
from tests.strategies import SETTINGS

_IMAGE = ImageBlock(source={"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})
_DOCUMENT = DocumentBlock(source={"type": "text", "data": "a document"})
_provider = st.sampled_from(["compaction", "web_search", "compaction_x"]).map(
    lambda kind: ProviderBlock(data={"type": kind, "content": "c"})
)
_part = st.sampled_from([TextBlock(text="out"), _IMAGE, _DOCUMENT]) | _provider
_result = st.builds(
    lambda i, content: ToolResultBlock(tool_use_id=f"c{i}", content=content),
    st.integers(0, 3),
    st.text(max_size=5) | st.lists(_part, max_size=4),
)
_user_block = (
    st.sampled_from([TextBlock(text="hi"), _IMAGE, _DOCUMENT, HintBlock(hint="h")])
    | _result
    | _provider
)
_assistant_block = (
    st.sampled_from([TextBlock(text="ok")])
    | st.builds(lambda i: ToolUseBlock(id=f"c{i}", name="Read", input={}), st.integers(0, 3))
    | _provider
)
_user = st.lists(_user_block, min_size=1, max_size=6).map(
    lambda blocks: UserMessage(content=tuple(blocks))
)
_assistant = st.lists(_assistant_block, min_size=1, max_size=6).map(
    lambda blocks: AssistantMessage(content=tuple(blocks))
)


# The former code of each read, as it was (the oracle).
def _old_tool_results(message: UserMessage) -> tuple[Any, ...]:
    return tuple(b for b in message.content if isinstance(b, ToolResultBlock))


def _old_image_count(message: UserMessage) -> int:
    direct = sum(1 for b in message.content if isinstance(b, ImageBlock))
    return direct + sum(len(r.images) for r in _old_tool_results(message))


def _old_tool_uses(message: AssistantMessage) -> tuple[Any, ...]:
    return tuple(b for b in message.content if isinstance(b, ToolUseBlock))


def _old_has_compaction_block(message: Any) -> bool:
    return isinstance(message, AssistantMessage) and any(
        isinstance(b, ProviderBlock) and b.kind == "compaction" for b in message.content
    )


@SETTINGS
@given(user=_user, assistant=_assistant)
def test_first_reads_equal_the_former_code(user: UserMessage, assistant: AssistantMessage) -> None:
    assert user.image_count == _old_image_count(user)
    assert type(user.image_count) is int
    assert user.tool_results == _old_tool_results(user)
    assert type(user.tool_results) is tuple
    assert all(a is b for a, b in zip(user.tool_results, _old_tool_results(user), strict=True))
    assert assistant.tool_uses == _old_tool_uses(assistant)
    assert type(assistant.tool_uses) is tuple
    for message in (user, assistant):
        assert has_compaction_block(message) is _old_has_compaction_block(message)


def test_the_reads_by_value() -> None:
    # Two direct images, one inside a result (beside its text), none in a text-only result.
    result = ToolResultBlock(tool_use_id="c1", content=[TextBlock(text="shot"), _IMAGE])
    plain = ToolResultBlock(tool_use_id="c2", content="text")
    user = UserMessage(content=(_IMAGE, result, TextBlock(text="see"), _IMAGE, plain))
    assert user.image_count == 3
    assert user.tool_results == (result, plain)
    assert UserMessage(content="no images").image_count == 0
    compacted = ProviderBlock(data={"type": "compaction", "content": "so far"})
    other = ProviderBlock(data={"type": "web_search"})
    assert has_compaction_block(AssistantMessage(content=(TextBlock(text="a"), compacted)))
    assert not has_compaction_block(AssistantMessage(content=(other,)))
    # A user turn never holds the server's block for this check (it is the assistant's).
    assert not has_compaction_block(UserMessage(content=(compacted,)))
    call = ToolUseBlock(id="c1", name="Read", input={})
    assert AssistantMessage(content=(TextBlock(text="a"), call)).tool_uses == (call,)
