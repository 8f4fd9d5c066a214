"""Compact while idle: when the prompt cache has expired — the request comes after a pause
longer than the cache's lifetime — a compaction re-writes nothing a warm cache held, so it is
made then, from a lower line (``compaction.idle_ratio`` of the context size), rather than later
at the trigger, where it would break a warm cache. The caller knows the clock (a replay, the
recording's; an agent, the wall clock's) and passes the pause; this module says the line."""

from __future__ import annotations

from ctxlab.config._config import ContextConfig
from ctxlab.manifest import Thresholds

__all__ = ["idle_threshold"]


def idle_threshold(
    config: ContextConfig, lines: Thresholds, gap: float | None, lifetime: float | None
) -> int | None:
    """The line a request compacts above when it comes ``gap`` seconds after the one before
    and the cache lives ``lifetime`` seconds: ``compaction.idle_ratio`` of the context size
    (never above the trigger) when the pause outlived the cache; None — the trigger as usual —
    when idle compaction is off, the pause or the lifetime is unknown, or the cache is warm."""
    ratio = config.compaction.idle_ratio
    if ratio is None or gap is None or lifetime is None or gap <= lifetime:
        return None
    return min(round(ratio * lines.context_size), lines.trigger_tokens)
