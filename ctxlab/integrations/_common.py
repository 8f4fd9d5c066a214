"""What both framework adapters share: grouping a framework's messages the way `ctxlab.load`
merges them, so that a message ctxlab left unchanged goes back as the framework's own object."""

from __future__ import annotations

from typing import Any

from ctxlab.io._transcript import Transcript

__all__ = ["MessageGroups", "originals_for"]

MessageGroups = list[list[Any]]


def originals_for(groups: MessageGroups, transcript: Transcript) -> dict[str, list[Any]]:
    """Content hash of each ctxlab message → the framework messages it came from.

    Empty when the import changed the conversation — it merged differently from the grouping,
    repaired tool pairs (an orphan result dropped, an unanswered call answered), renamed ids or
    reordered results: a framework message sent as it was would then differ from what the
    manifest describes, so every message goes as ctxlab's own."""
    changed = ("repairs", "renamed_tool_ids", "results_without_call_id", "reordered_results")
    if len(groups) != len(transcript.messages) or any(transcript.meta.get(k) for k in changed):
        return {}
    return {m.content_hash: g for m, g in zip(transcript.messages, groups, strict=True)}
