"""What both framework adapters share: grouping a framework's messages the way `ctxlab.load`
merges them, so that a message ctxlab left unchanged goes back as the framework's own object."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any, TypeVar

from ctxlab._replay import Transcript

__all__ = ["MessageGroups", "originals_for", "run_sync"]

T = TypeVar("T")
MessageGroups = list[list[Any]]


def originals_for(groups: MessageGroups, transcript: Transcript) -> dict[str, list[Any]]:
    """Content hash of each ctxlab message → the framework messages it came from (empty when the
    import merged or repaired differently from the grouping, so the mapping would be a guess)."""
    if len(groups) != len(transcript.messages):
        return {}
    return {m.content_hash: g for m, g in zip(transcript.messages, groups, strict=True)}


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from synchronous framework code, also where an event loop is already
    running in this thread (a notebook cell calling ``agent.invoke``)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
