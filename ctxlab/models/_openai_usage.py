"""The usage of a Chat Completions reply, read whole, as ctxlab's `ProviderUsage`.

``prompt_tokens`` counts every input token, the cached ones among them (OpenAI's
``CompletionUsage``, openai 3.63 ``types/completion_usage.py``); ctxlab keeps cache reads and
writes apart from the rest, as Anthropic reports them. Cache reads are
``prompt_tokens_details.cached_tokens`` (OpenAI, vLLM, OpenRouter), else DeepSeek's
``prompt_cache_hit_tokens``. Cache writes are ``prompt_tokens_details.cache_write_tokens``,
which OpenRouter reports for providers that bill writes (its "Usage Accounting" page); OpenAI
itself bills none. ``completion_tokens`` includes the reasoning tokens
(``completion_tokens_details.reasoning_tokens``): they are output, billed as output, and stay in
``output_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.messages import ProviderUsage

__all__ = ["chat_usage"]


def chat_usage(usage: Any) -> ProviderUsage | None:
    """``usage`` (a mapping, or the SDK's ``CompletionUsage``) as ctxlab's; None when there is
    none. `ValueError` naming the field for a count that is none (negative, NaN, text)."""
    if usage is not None and not isinstance(usage, Mapping) and hasattr(usage, "model_dump"):
        # Python mode: a NaN stays a NaN and is refused, where JSON mode would make it null.
        usage = usage.model_dump(warnings=False)
    if not isinstance(usage, Mapping):
        return None
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    read = details.get("cached_tokens")
    if read is None:
        read = usage.get("prompt_cache_hit_tokens")
    return ProviderUsage.with_cache_inside(
        usage.get("prompt_tokens"),
        usage.get("completion_tokens"),
        read,
        details.get("cache_write_tokens"),
    )
