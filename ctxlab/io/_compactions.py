"""Where a recording's own compactions fall in its final messages.

An importer notes each compaction while reading — the replies recorded before it, the opening
words of its summary — because the repairs that follow may move message indexes, never the order
of replies. `place_compactions` turns those notes into the summary's message and block.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.messages._usage import count_or_none

__all__ = ["place_compactions"]

Message = UserMessage | AssistantMessage


def place_compactions(meta: dict[str, Any], messages: Sequence[Message]) -> None:
    """Give each of ``meta['compactions']`` its ``summary_index`` and ``summary_block`` in the
    final ``messages`` (an importer records ``replies_before`` and the summary's opening words
    while reading; repairs may move message indexes afterwards, never the order of replies)."""
    compactions = meta.get("compactions")
    if not isinstance(compactions, list):
        return
    replies = [i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    for record in compactions:
        if not isinstance(record, dict) or "replies_before" not in record:
            continue
        rank = count_or_none(record["replies_before"])
        if rank is None:
            continue  # (an odd figure in a file's meta: this compaction is not placed)
        # The summary sits in the user message just before the first reply after the boundary
        # (the last message when the session ended right after compacting).
        after = replies[rank] if rank < len(replies) else len(messages)
        index = after - 1
        while index > 0 and not isinstance(messages[index], UserMessage):
            index -= 1
        head = str(record.get("summary_head") or "")
        block = 0
        if index >= 0 and head:
            texts = [getattr(b, "text", None) for b in messages[index].content]
            block = next(
                (k for k, t in enumerate(texts) if isinstance(t, str) and t.startswith(head[:80])),
                0,
            )
        record["summary_index"] = max(index, 0)
        record["summary_block"] = block
