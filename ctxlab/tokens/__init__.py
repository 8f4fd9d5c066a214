"""Token counting: a protocol, offline BPE counters (tiktoken's, and toktok-rs's identical and
faster one when installed: `default_counter`), the counter of each model's text (its own
encoding where one is public: `counter_for`), an approximation, a cache and a store of counts
kept across runs."""

from ctxlab.tokens._cache import TokenCache
from ctxlab.tokens._counter import ApproximateCounter, TokenCount, TokenCounter
from ctxlab.tokens._head import head_within
from ctxlab.tokens._models import counter_for, counting_note, encoding_for
from ctxlab.tokens._parts import (
    COUNT_RULES,
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    PDF_PAGE_TOKENS,
    TOOL_BLOCK_OVERHEAD,
)
from ctxlab.tokens._store import CountStore
from ctxlab.tokens._tiktoken import ENCODINGS, TiktokenCounter, load_encoding
from ctxlab.tokens._toktok import ToktokCounter, default_counter, preload, toktok_available

__all__ = [
    "COUNT_RULES",
    "ENCODINGS",
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "PDF_PAGE_TOKENS",
    "TOOL_BLOCK_OVERHEAD",
    "ApproximateCounter",
    "CountStore",
    "TiktokenCounter",
    "TokenCache",
    "TokenCount",
    "TokenCounter",
    "ToktokCounter",
    "counter_for",
    "counting_note",
    "default_counter",
    "encoding_for",
    "head_within",
    "load_encoding",
    "preload",
    "toktok_available",
]
