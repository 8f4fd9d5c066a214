"""Claude Code's compactions as it records them: the ``compact_boundary`` and
``microcompact_boundary`` system lines, and the summary message (``isCompactSummary``) that
follows a compaction, turned into the records `ctxlab.io._compactions.place_compactions` places."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["boundary", "mark_summary"]


def boundary(record: Mapping[str, Any], replies: int) -> dict[str, Any] | None:
    """A compaction record of a ``compact_boundary`` or ``microcompact_boundary`` system line
    (None for other system lines), placed by the ``replies`` recorded before it: repairs after
    import shift message indexes, never the order of replies (see `place_compactions`)."""
    subtype = record.get("subtype")
    if subtype == "compact_boundary":
        data = record.get("compactMetadata") or {}
        return {
            "kind": "compact",
            "trigger": data.get("trigger"),
            "pre_tokens": data.get("preTokens"),
            "replies_before": replies,
            # The version that wrote it, when the line says: where it fired is read against
            # that version's documented threshold (`ctxlab.io._compaction_thresholds`).
            **({"version": v} if isinstance(v := record.get("version"), str) else {}),
        }
    if subtype == "microcompact_boundary":
        # Old tool results cleared in place (no summary): the requests after it carry a
        # placeholder for each of ``compactedToolIds``.
        data = record.get("microcompactMetadata") or {}
        ids = data.get("compactedToolIds")
        return {
            "kind": "microcompact",
            "trigger": data.get("trigger"),
            "pre_tokens": data.get("preTokens"),
            "tokens_saved": data.get("tokensSaved"),
            "tool_ids": [str(i) for i in ids] if isinstance(ids, list) else [],
            "replies_before": replies,
        }
    return None


def mark_summary(
    compactions: list[dict[str, Any]], blocks: list[dict[str, Any]], replies: int
) -> None:
    """Mark the summary message that opens with ``blocks`` on the latest compaction record (or
    a new one, for a summary without its boundary)."""
    last = compactions[-1] if compactions else None
    if last is None or last.get("kind") != "compact" or "summary_head" in last:
        # A summary without its boundary (a session continued in a new file, an older Claude
        # Code): the compaction is known from the summary alone.
        compactions.append(
            {"kind": "compact", "trigger": None, "pre_tokens": None, "replies_before": replies}
        )
    # A summary that arrives after tool results joins their turn: where it starts is found
    # again by its opening words.
    compactions[-1]["summary_head"] = str(blocks[0].get("text", ""))[:200]
