"""Operations on tool-result text shared by stage 3 (tool results) and stage 5 (the latest turn
a compaction keeps): cutting a text to a token budget, the truncation marker, replacing results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ctxlab.exceptions import OffloadError
from ctxlab.manifest import Transform
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, UserMessage
from ctxlab.pipeline._offload import Offloader, offload_name
from ctxlab.tokens import TokenCache, head_within
from ctxlab.tokens._parts import block_parts

__all__ = [
    "TRUNCATION_MARKER",
    "head_within",
    "replace_results",
    "truncate_results",
    "truncation_notice",
    "with_text",
]

TRUNCATION_MARKER = "<<<TRUNCATED>>>"
_REMINDER = "The remaining content has been omitted for limited context."
_REMINDER_PATH = " You can refer to the file in '{path}' for the truncated content if needed."

Conversation = tuple[UserMessage | AssistantMessage, ...]


def truncation_notice(path: str | None) -> str:
    """The marker and system-reminder appended to a truncated result."""
    reminder = _REMINDER + (_REMINDER_PATH.format(path=path) if path else "")
    return f"{TRUNCATION_MARKER}\n<system-reminder>{reminder}</system-reminder>"


def with_text(result: ToolResultBlock, text: str) -> ToolResultBlock:
    if isinstance(result.content, str):
        return result.evolve(content=text)
    return result.evolve(content=(TextBlock(text=text), *result.images))


def replace_results(
    message: UserMessage, replace: Callable[[ToolResultBlock], ToolResultBlock]
) -> UserMessage:
    blocks: list[Any] = [
        replace(b) if isinstance(b, ToolResultBlock) else b for b in message.content
    ]
    if all(new is old for new, old in zip(blocks, message.content, strict=True)):
        return message
    return UserMessage(content=tuple(blocks))


# The marker as it reads with a long offload path: what a truncated result's tail is allowed,
# whatever the path it names — so that a result is cut alike wherever its file was written (two
# branches of a fork, in folders of their own, send the same head; a path longer than the
# sample's costs its extra tokens beyond the limit).
_MARKER_SAMPLE = truncation_notice("/" + "x" * 120)


def _beside_text(result: ToolResultBlock, cache: TokenCache) -> int:
    """What a result's count holds besides its text: the block's framing, its images and
    other parts (a block's count is its fixed part plus its texts' counts, `block_parts`, the
    result's text first: the rest is known without tokenizing that long text again)."""
    fixed, texts = block_parts(result)
    return fixed + sum(map(cache.counter.count_text, texts[1:]))


def _marker_tokens(cache: TokenCache) -> int:
    """What a cut result's tail is allowed: the sample notice, and two tokens for the newline
    joining it and how the head's end tokenizes with it."""
    return cache.text(_MARKER_SAMPLE) + 2


def truncate_results(
    conversation: Sequence[UserMessage | AssistantMessage],
    limit: int,
    offloader: Offloader | None,
    cache: TokenCache,
) -> tuple[Conversation, list[Transform]]:
    """Cut results over ``limit`` tokens to a head plus the truncation marker."""
    transforms: list[Transform] = []

    def replace(result: ToolResultBlock) -> ToolResultBlock:
        before = cache.block(result)
        if before <= limit:
            return result
        text = result.text
        cut = text.rfind(TRUNCATION_MARKER)
        if cut >= 0 and text.endswith("</system-reminder>"):
            return _cut_further(result, text, cut, before, limit, cache, transforms)
        return _cut(result, text, before, limit, offloader, cache, transforms)

    out = tuple(
        replace_results(m, replace)
        if isinstance(m, UserMessage) and m.tool_results and cache.message(m) > limit
        else m
        for m in conversation
    )
    return out, transforms


def _cut_further(
    result: ToolResultBlock,
    text: str,
    cut: int,
    before: int,
    limit: int,
    cache: TokenCache,
    transforms: list[Transform],
) -> ToolResultBlock:
    """A result truncated before (``cut``: where its notice starts), under a smaller budget now
    (the latest turn at compaction): its head is cut further; the notice, and the file it
    points to, stay as they were."""
    notice = text[cut:]
    budget = limit - _marker_tokens(cache) - _beside_text(result, cache)
    # Only the newline joining head and notice is taken off: a head cut at a line end
    # keeps its own, so a head that fits is left byte for byte (a result cut once is
    # not cut again because its notice names a longer path than before).
    kept = text[:cut].removesuffix("\n")
    head = cache.head(kept, budget)
    if head == kept:
        return result  # cut under this budget already, or only the notice is left
    new = with_text(result, f"{head}\n{notice}" if head else notice)
    transforms.append(
        Transform("tool_result_truncation", result.tool_use_id, "", before, cache.block(new))
    )
    return new


def _cut(
    result: ToolResultBlock,
    text: str,
    before: int,
    limit: int,
    offloader: Offloader | None,
    cache: TokenCache,
    transforms: list[Transform],
) -> ToolResultBlock:
    """A result cut for the first time: its whole text offloaded (when an offloader is given),
    a head within the limit kept, the notice (pointing to the file) after it."""
    path: str | None = None
    if offloader is not None:
        try:
            data = text.encode()
            name = offload_name(result.tool_use_id, data)
            path = offloader.write(f"context_offload/tool_result-{name}.txt", data)
        except OffloadError as exc:
            # The head is kept without a pointer: never a path to a missing file.
            transforms.append(Transform("offload_failed", result.tool_use_id, str(exc)))
    images = _beside_text(result, cache)
    budget = max(limit - _marker_tokens(cache) - max(images, 0), 0)
    head = cache.head(text, budget, total=before - images)
    new = with_text(
        result, f"{head}\n{truncation_notice(path)}" if head else truncation_notice(path)
    )
    transforms.append(
        Transform(
            "tool_result_truncation", result.tool_use_id, path or "", before, cache.block(new)
        )
    )
    return new
