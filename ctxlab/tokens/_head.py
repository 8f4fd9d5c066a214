"""Cutting a text to a token budget without tokenizing every candidate prefix."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["head_within"]


def head_within(
    text: str, max_tokens: int, count: Callable[[str], int], total: int | None = None
) -> str:
    """The longest prefix of ``text`` (cut at a line end when one is near) with ≤ ``max_tokens``.

    Guesses the cut from the text's characters per token and corrects it in a few counts,
    instead of tokenizing every candidate prefix. ``total`` is ``count(text)`` when the caller
    knows it already (a block's count in the cache): the text is then not tokenized again.
    """
    if max_tokens <= 0 or not text:
        return ""
    if total is None:
        total = count(text)
    if total <= max_tokens:
        return text
    cut = int(len(text) * max_tokens / total)
    head = text[:cut]
    tokens = count(head)
    while tokens > max_tokens and cut > 0:
        cut = int(cut * max_tokens / tokens * 0.97)
        head = text[:cut]
        tokens = count(head)
    newline = head.rfind("\n")
    if newline > len(head) * 0.8:
        head = head[: newline + 1]
    return head
