"""What the Anthropic adapter knows of its models before the first call: each one's standard
context window (by name prefix) and when the SDK requires streaming."""

from __future__ import annotations

__all__ = ["CONTEXT_WINDOWS", "context_window_of", "needs_streaming"]

CONTEXT_WINDOWS: dict[str, int] = dict.fromkeys(
    (
        "claude-opus-5-5",
        "claude-sonnet-5-5",
        "claude-haiku-5-5",
        "claude-opus-5",
        "claude-sonnet-5",
        "claude-opus-4-8",
        "claude-opus-4-7",
        "claude-opus-4-6",
        "claude-sonnet-4-6",
        "claude-opus-4-5",
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
    ),
    200_000,
)
"""Standard context windows of current Claude models, by name prefix (dated snapshots match).

Larger beta windows (1M tokens on some models) need ``context_window=...`` explicitly."""


def needs_streaming(model: str, max_tokens: int) -> bool:
    """Whether the SDK refuses ``max_tokens`` without streaming ("Streaming is required for
    operations that may take longer than 10 minutes": above 21,333 tokens, or a model's own
    non-streaming cap)."""
    from anthropic._constants import MODEL_NONSTREAMING_TOKENS

    cap = MODEL_NONSTREAMING_TOKENS.get(model)
    return 3600 * max_tokens / 128_000 > 600 or (cap is not None and max_tokens > cap)


def context_window_of(model: str) -> int:
    """The context window of ``model`` (200,000 for unknown Claude models)."""
    for prefix in sorted(CONTEXT_WINDOWS, key=len, reverse=True):
        if model.startswith(prefix):
            return CONTEXT_WINDOWS[prefix]
    return 200_000
