"""Compact while idle: when the prompt cache has expired — the request comes after a pause
longer than the cache's lifetime — a compaction re-writes nothing a warm cache held, so it is
made then, from a lower line (``compaction.idle_ratio`` of the context size), rather than later
at the trigger, where it would break a warm cache. The caller knows the clock (a replay, the
recording's; an agent, the wall clock's) and passes the pause; this module says the line."""

from __future__ import annotations

import math
from collections.abc import Iterable

from ctxlab.config._config import ContextConfig
from ctxlab.manifest import Thresholds

__all__ = ["idle_threshold", "pauses"]


def pauses(times: Iterable[float | None]) -> list[float | None]:
    """The pause before each of a run's requests, from when each was sent (seconds, None:
    unknown): the time since the latest request before it, as the cost model's clock counts it
    — never negative (out of order: 0), and unknown (None) for a request without a time and
    for the one after it."""
    out: list[float | None] = []
    latest: float | None = None
    for at in times:
        if at is None or not math.isfinite(at):
            out.append(None)
            latest = None
            continue
        out.append(None if latest is None else max(at - latest, 0.0))
        latest = at if latest is None else max(at, latest)
    return out


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
