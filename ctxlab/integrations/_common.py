"""What both framework adapters share: grouping a framework's messages the way `ctxlab.load`
merges them, so that a message ctxlab left unchanged goes back as the framework's own object."""

from __future__ import annotations

from typing import Any

from ctxlab.io._transcript import Transcript

__all__ = ["MessageGroups", "originals_for"]

MessageGroups = list[list[Any]]


def originals_for(groups: MessageGroups, transcript: Transcript) -> dict[str, list[Any]]:
    """Content hash of each ctxlab message → the framework messages it came from (empty when the
    import merged or repaired differently from the grouping, so the mapping would be a guess)."""
    if len(groups) != len(transcript.messages):
        return {}
    return {m.content_hash: g for m, g in zip(transcript.messages, groups, strict=True)}
