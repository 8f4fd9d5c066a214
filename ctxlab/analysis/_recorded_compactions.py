"""A recording's own compactions (not ctxlab's): what its source noted of each, read with every
figure checked (`recorded_compactions`), and the request each falls before."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxlab.io._arguments import checked_transcript
from ctxlab.messages._usage import count_or_none

if TYPE_CHECKING:
    from ctxlab.io._transcript import Transcript

__all__ = ["RecordedCompaction", "compactions_by_request", "recorded_compactions"]


@dataclass(frozen=True)
class RecordedCompaction:
    """One of the recorded session's own compactions (not ctxlab's)."""

    index: int
    """The message holding the summary: the recorded conversation restarts there."""
    block: int
    """The summary's first block in that message (earlier blocks are results from before)."""
    trigger: str
    """``manual`` (``/compact``), ``auto``, or what the recording called it."""
    pre_tokens: int | None
    """The context size the recording says it had before (Claude Code's ``preTokens``)."""
    replies_before: int
    """Replies (assistant messages) recorded before it: the requests it falls between."""
    kind: str = "compact"
    """``compact`` (a summary replaces the conversation, which restarts from it) or
    ``microcompact`` (old tool results cleared in place: ``tool_ids``)."""
    tool_ids: tuple[str, ...] = ()
    """For a microcompact: the calls whose results the requests after it no longer hold."""
    tokens_saved: int | None = None
    """For a microcompact: what the recording says it saved."""
    version: str | None = None
    """The version of the tool that wrote it (Claude Code's line ``version``), if recorded."""

    @property
    def detail(self) -> str:
        """How a manifest names it: the trigger (``manual``, ``auto``), with ``microcompact``
        for one."""
        return self.trigger if self.kind == "compact" else f"{self.trigger} microcompact"


def recorded_compactions(transcript: Transcript) -> tuple[RecordedCompaction, ...]:
    """The recorded session's own compactions, in order (from ``transcript.meta``; empty when
    the source records none)."""
    checked_transcript(transcript, "recorded_compactions")
    out: list[RecordedCompaction] = []
    records = transcript.meta.get("compactions")
    for record in records if isinstance(records, list) else ():
        if not isinstance(record, Mapping) or "summary_index" not in record:
            continue
        # A file's figures are checked here: a NaN or infinite preTokens, an index that is
        # text, costs that figure (or that compaction), never the Lab over the file.
        index = count_or_none(record["summary_index"])
        if index is None or not index < len(transcript.messages):
            continue
        tool_ids = record.get("tool_ids")
        out.append(
            RecordedCompaction(
                index=index,
                block=count_or_none(record.get("summary_block")) or 0,
                trigger=str(record.get("trigger") or "unknown"),
                pre_tokens=count_or_none(record.get("pre_tokens")),
                replies_before=count_or_none(record.get("replies_before")) or 0,
                kind="microcompact" if record.get("kind") == "microcompact" else "compact",
                tool_ids=tuple(str(i) for i in tool_ids) if isinstance(tool_ids, list) else (),
                tokens_saved=count_or_none(record.get("tokens_saved")),
                version=version if isinstance(version := record.get("version"), str) else None,
            )
        )
    return tuple(sorted(out, key=lambda c: c.replies_before))


def compactions_by_request(
    compactions: Sequence[RecordedCompaction], first: int
) -> dict[int, list[RecordedCompaction]]:
    """The recorded compactions by the rank of the reply of the first request after them;
    ``first`` is the rank of the first request (replies before the first user message are no
    requests): a compaction before it is marked on it, not lost."""
    out: dict[int, list[RecordedCompaction]] = {}
    for compaction in compactions:
        out.setdefault(max(compaction.replies_before, first), []).append(compaction)
    return out
