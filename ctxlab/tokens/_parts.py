"""ctxlab's counting rules: a block's count as fixed tokens (framing, images, pages, opaque
reasoning) plus the counts of its texts (`block_parts`), which lets the texts of many blocks be
counted in one batch. `TokenCache` counts by them; a stored count made under other rules
(`COUNT_RULES`) is not reused.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from ctxlab.messages import (
    DocumentBlock,
    HintBlock,
    ImageBlock,
    ProviderBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = [
    "COUNT_RULES",
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "PDF_PAGE_TOKENS",
    "TOOL_BLOCK_OVERHEAD",
    "block_parts",
    "document_parts",
    "encrypted_reasoning_tokens",
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

COUNT_RULES = "blocks-2"
"""The version of how a block's count is made of its texts (`block_parts`); a stored count made
under other rules is not reused."""

_PDF_PAGE = re.compile(rb"/Type\s*/Page(?!s)")


def document_parts(block: DocumentBlock) -> tuple[int, tuple[str, ...]]:
    """A document's count as fixed tokens plus the counts of its texts: its text when it carries
    text, ``PDF_PAGE_TOKENS`` per page of a base64 PDF (pages counted in the PDF's own page
    objects), the title and context too."""
    texts = tuple(t for t in (block.title, block.context) if t)
    if block.text:
        return 0, (*texts, block.text)
    data = block.source.get("data")
    if block.source.get("type") == "base64" and isinstance(data, str):
        try:
            raw = base64.b64decode(data, validate=False)
        except ValueError:
            raw = b""
        pages = len(_PDF_PAGE.findall(raw))
        return PDF_PAGE_TOKENS * max(pages, 1), texts
    return PDF_PAGE_TOKENS, texts  # a URL: at least one page


_FERNET = "gAAAAA"
"""How an OpenAI encrypted reasoning item starts: a Fernet token (its version byte 0x80,
base64url)."""


def encrypted_reasoning_tokens(data: str) -> int:
    """The tokens of reasoning sent back encrypted: for OpenAI's (a Fernet token) as Codex sizes
    it — decoded bytes (¾ of the base64) less 650 bytes of envelope, 4 bytes a token
    (openai/codex ``codex-rs/core/src/context_manager/history.rs``, ``estimate_reasoning_length``
    and ``approx_tokens_from_byte_count``); for another provider's, a quarter of its length
    (opaque: about what the reasoning it hides would cost)."""
    if data.startswith(_FERNET):
        return -(-max(len(data) * 3 // 4 - 650, 0) // 4)
    return len(data) // 4


def block_parts(block: Any) -> tuple[int, tuple[str, ...]]:
    """A block's count as fixed tokens (framing, images, pages) plus the counts of its texts:
    what lets the texts of many blocks be counted in one batch."""
    if isinstance(block, TextBlock):
        return 0, (block.text,)
    if isinstance(block, HintBlock):
        return 0, (block.rendered,)
    if isinstance(block, ToolUseBlock):
        return TOOL_BLOCK_OVERHEAD, (block.name, block.input_json)
    if isinstance(block, ToolResultBlock):
        fixed, texts = TOOL_BLOCK_OVERHEAD + IMAGE_TOKENS * len(block.images), [block.text]
        for part in block.other_parts:
            more, inner = block_parts(part)
            fixed += more
            texts.extend(inner)
        return fixed, tuple(texts)
    if isinstance(block, ImageBlock):
        return IMAGE_TOKENS, ()
    if isinstance(block, ThinkingBlock):
        # Counted although Anthropic drops earlier turns' thinking from the window: an
        # over-estimate is safe, an under-estimate overflows.
        return 0, (block.thinking,)
    if isinstance(block, RedactedThinkingBlock):
        return encrypted_reasoning_tokens(block.data), ()
    if isinstance(block, DocumentBlock):
        return document_parts(block)
    if isinstance(block, ProviderBlock):
        return TOOL_BLOCK_OVERHEAD, (block.data_json,)
    msg = f"cannot count tokens of {type(block).__name__}"
    raise TypeError(msg)
