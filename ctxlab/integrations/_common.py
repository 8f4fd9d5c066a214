"""What both framework adapters share: grouping a framework's messages the way `ctxlab.load`
merges them, so that a message ctxlab left unchanged goes back as the framework's own object."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxlab.io._transcript import Transcript
from ctxlab.messages import AssistantMessage, UserMessage

__all__ = ["MessageGroups", "originals_for"]

MessageGroups = list[list[Any]]


def originals_for(
    groups: MessageGroups,
    transcript: Transcript,
    sent: Sequence[UserMessage | AssistantMessage],
) -> list[list[Any] | None]:
    """For each message of ``sent``, the framework messages it came from (None: ctxlab's own).

    Two messages of the same content (a repeated "Go on.") are told apart by their place: ctxlab
    keeps the end of a conversation, so ``sent`` is matched to the framework's messages from the
    end, each framework message given at most once (never one object twice in a request).

    Nothing is matched when the import changed the conversation — it merged differently from the
    grouping, repaired tool pairs (an orphan result dropped, an unanswered call answered), renamed
    ids or reordered results: a framework message sent as it was would then differ from what the
    manifest describes, so every message goes as ctxlab's own."""
    changed = ("repairs", "renamed_tool_ids", "results_without_call_id", "reordered_results")
    if len(groups) != len(transcript.messages) or any(transcript.meta.get(k) for k in changed):
        return [None] * len(sent)
    pools: dict[str, list[list[Any]]] = {}
    for message, group in zip(transcript.messages, groups, strict=True):
        pools.setdefault(message.content_hash, []).append(group)
    matched: list[list[Any] | None] = [None] * len(sent)
    for index in range(len(sent) - 1, -1, -1):
        pool = pools.get(sent[index].content_hash)
        if pool:
            matched[index] = pool.pop()
    return matched
