"""Token counting: a protocol, an offline tiktoken counter, an approximation, and a cache."""

from ctxlab.tokens._cache import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    PDF_PAGE_TOKENS,
    TOOL_BLOCK_OVERHEAD,
    TokenCache,
)
from ctxlab.tokens._counter import ApproximateCounter, TokenCount, TokenCounter
from ctxlab.tokens._head import head_within
from ctxlab.tokens._tiktoken import ENCODINGS, TiktokenCounter, load_encoding

__all__ = [
    "ENCODINGS",
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "PDF_PAGE_TOKENS",
    "TOOL_BLOCK_OVERHEAD",
    "ApproximateCounter",
    "TiktokenCounter",
    "TokenCache",
    "TokenCount",
    "TokenCounter",
    "head_within",
    "load_encoding",
]
