"""Per-block token cache: a step recounts only blocks it has not seen before.

Blocks are immutable and carry a content hash, so a count is keyed by (hash). A long session
prepares hundreds of requests over nearly the same conversation; with the cache, preparing step N
costs a dictionary look-up per message plus the tokenization of what is new.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlab.messages import (
    AssistantMessage,
    HintBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.tokens._counter import TokenCounter

__all__ = ["IMAGE_TOKENS", "MESSAGE_OVERHEAD", "TOOL_BLOCK_OVERHEAD", "TokenCache"]

IMAGE_TOKENS = 1600
"""Tokens assumed per image: Anthropic's figure for a ~1.15 megapixel image, its usual maximum."""
MESSAGE_OVERHEAD = 4
"""Tokens of framing assumed per message (role and separators)."""
TOOL_BLOCK_OVERHEAD = 8
"""Tokens of framing assumed per tool call or tool result (ids, tags)."""

_MAX_ENTRIES = 200_000


class TokenCache:
    """Counts blocks and messages with a `TokenCounter`, remembering every count by content hash.

    ``counted_blocks`` tells how many blocks were actually tokenized; ``hits`` how many counts
    were answered from the cache.
    """

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._blocks: dict[str, int] = {}
        self._messages: dict[str, int] = {}
        self._texts: dict[str, int] = {}
        self.counted_blocks = 0
        self.hits = 0

    @property
    def method(self) -> str:
        """The counting method of the underlying counter."""
        return self.counter.method

    @property
    def exact(self) -> bool:
        """Whether the underlying counter is exact."""
        return self.counter.exact

    def text(self, text: str) -> int:
        """Tokens of a standalone text (system parts, materials, schemas), cached by value."""
        cached = self._texts.get(text)
        if cached is not None:
            self.hits += 1
            return cached
        tokens = self.counter.count_text(text)
        self._remember(self._texts, text, tokens)
        return tokens

    def block(self, block: Any) -> int:
        """Tokens of one content block."""
        key: str = block.content_hash
        cached = self._blocks.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        tokens = self._count_block(block)
        self.counted_blocks += 1
        self._remember(self._blocks, key, tokens)
        return tokens

    def message(self, message: UserMessage | AssistantMessage) -> int:
        """Tokens of a whole message, framing included."""
        key = message.content_hash
        cached = self._messages.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        tokens = MESSAGE_OVERHEAD + sum(self.block(b) for b in message.content)
        self._remember(self._messages, key, tokens)
        return tokens

    def messages(self, messages: Iterable[UserMessage | AssistantMessage]) -> int:
        """Tokens of several messages."""
        return sum(self.message(m) for m in messages)

    def _count_block(self, block: Any) -> int:
        count = self.counter.count_text
        if isinstance(block, TextBlock):
            return count(block.text)
        if isinstance(block, HintBlock):
            return count(block.rendered)
        if isinstance(block, ToolUseBlock):
            return TOOL_BLOCK_OVERHEAD + count(block.name) + count(block.input_json)
        if isinstance(block, ToolResultBlock):
            return TOOL_BLOCK_OVERHEAD + count(block.text) + IMAGE_TOKENS * len(block.images)
        if isinstance(block, ImageBlock):
            return IMAGE_TOKENS
        msg = f"cannot count tokens of {type(block).__name__}"
        raise TypeError(msg)

    @staticmethod
    def _remember(table: dict[Any, int], key: Any, tokens: int) -> None:
        # A bounded cache: clearing is crude but keeps memory flat in endless sessions.
        if len(table) >= _MAX_ENTRIES:
            table.clear()
        table[key] = tokens
