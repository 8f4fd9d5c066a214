"""Per-block token cache: a step recounts only blocks it has not seen before.

Blocks are immutable and carry a content hash, so a count is keyed by (hash). A long session
prepares hundreds of requests over nearly the same conversation; with the cache, preparing step N
costs a dictionary look-up per message plus the tokenization of what is new.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable
from typing import Any

from ctxlab.messages import (
    AssistantMessage,
    DocumentBlock,
    HintBlock,
    ImageBlock,
    ProviderBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.tokens._counter import TokenCounter

__all__ = [
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "PDF_PAGE_TOKENS",
    "TOOL_BLOCK_OVERHEAD",
    "TokenCache",
    "document_tokens",
]

IMAGE_TOKENS = 1600
"""Tokens assumed per image: Anthropic's figure for a ~1.15 megapixel image, its usual maximum."""
MESSAGE_OVERHEAD = 4
"""Tokens of framing assumed per message (role and separators)."""
TOOL_BLOCK_OVERHEAD = 8
"""Tokens of framing assumed per tool call or tool result (ids, tags)."""

PDF_PAGE_TOKENS = 2_250
"""Tokens assumed per PDF page: the middle of Anthropic's 1,500–3,000 per page (text and the page
image), from its PDF-support documentation."""

_MAX_ENTRIES = 200_000
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?!s)")


def document_tokens(block: DocumentBlock, count: Callable[[str], int]) -> int:
    """Estimated tokens of a document: its text when it carries text, ``PDF_PAGE_TOKENS`` per page
    of a base64 PDF (pages counted in the PDF's own page objects), the title and context too."""
    tokens = sum(count(t) for t in (block.title, block.context) if t)
    if block.text:
        return tokens + count(block.text)
    data = block.source.get("data")
    if block.source.get("type") == "base64" and isinstance(data, str):
        try:
            raw = base64.b64decode(data, validate=False)
        except ValueError:
            raw = b""
        pages = len(_PDF_PAGE.findall(raw))
        return tokens + PDF_PAGE_TOKENS * max(pages, 1)
    return tokens + PDF_PAGE_TOKENS  # a URL: at least one page


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
            tokens = TOOL_BLOCK_OVERHEAD + count(block.text) + IMAGE_TOKENS * len(block.images)
            return tokens + sum(self._count_block(p) for p in block.other_parts)
        if isinstance(block, ImageBlock):
            return IMAGE_TOKENS
        if isinstance(block, ThinkingBlock):
            # Counted although Anthropic drops earlier turns' thinking from the window: an
            # over-estimate is safe, an under-estimate overflows.
            return count(block.thinking)
        if isinstance(block, RedactedThinkingBlock):
            return len(block.data) // 4  # opaque: about what the reasoning it hides would cost
        if isinstance(block, DocumentBlock):
            return document_tokens(block, count)
        if isinstance(block, ProviderBlock):
            return TOOL_BLOCK_OVERHEAD + count(block.data_json)
        msg = f"cannot count tokens of {type(block).__name__}"
        raise TypeError(msg)

    @staticmethod
    def _remember(table: dict[Any, int], key: Any, tokens: int) -> None:
        # A bounded cache: clearing is crude but keeps memory flat in endless sessions.
        if len(table) >= _MAX_ENTRIES:
            table.clear()
        table[key] = tokens
