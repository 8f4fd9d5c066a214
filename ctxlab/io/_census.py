"""The census of a load: what an importer read from the file, what of it became the transcript,
what it skipped and why — a count that adds up, so nothing a file holds is dropped unsaid.

How an importer reports into it (every reader of ``ctxlab.load`` does; a new one must):

1. Name its unit once: ``ConversationBuilder(where, unit="line")`` ("line", "event", "span",
   "message", "record", ...).
2. For each record of the file — a line, an event, a span, a message — call
   ``builder.record(kind)`` first, with the record's kind in the format's own words
   (``"response_item message"``, ``"event_msg token_count"``, ``"progress"``); several records
   handled as one: ``builder.record(kind, count)``.
3. Then the record is *used* or *skipped*, exactly one of them:

   - used when it becomes part of the transcript: ``builder.add`` / ``text`` / ``add_to`` with
     something kept, usage placed by ``usage_of_last_reply``, or ``builder.use()`` for a record
     read for the transcript's metadata, System text, usage or ordering;
   - skipped, with the reason, when it is not: ``builder.skip("reasoning")``;
   - a part of a used record that is not kept (a thought, an image without data, a block type
     ctxlab does not model) is ``builder.leave_out(reason)``: the record stays used. A record
     that keeps nothing is skipped once, for its first part left out (not also for the reason
     the importer gives, "empty message": one thing lost, counted once).

   A record whose handling may keep nothing (every block of it dropped, an empty text) ends
   with ``builder.settle(reason)``: skipped for ``reason`` unless something of it was used.
   A record that ends neither used nor skipped is *unaccounted* — a silent loss, which the
   census reports and the tests refuse.
4. `ConversationBuilder.finish` closes the count and adds what the transcript holds: messages,
   replies, tool calls, blocks by type, and every usage the importer handed over — placed on a
   reply, or lost and why (a later usage replaced it, the reply it belonged to was emptied).

The result is ``Transcript.meta["census"]`` (plain data, saved with the transcript), read back as
a `Census` by ``Transcript.census``; ``str(census)`` is its one line. ``meta["skipped"]`` keeps
every skip and left-out part by reason, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.util._json import plain_copy

__all__ = ["Census", "holdings"]


def _add(counts: dict[str, int], key: str, count: int) -> None:
    if count > 0:
        counts[key] = counts.get(key, 0) + count


def _total(counts: Mapping[str, int]) -> int:
    return sum(counts.values())


def _plural(noun: str) -> str:
    """English plural of a unit or count noun: an entry, two entries; a box, two boxes."""
    if noun.endswith("y") and noun[-2:-1] not in ("", "a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def _counted(count: int, noun: str) -> str:
    """``count`` with its noun, singular for exactly one: "1 entry", "2 entries", "0 lines"."""
    return f"{count:,} {noun if count == 1 else _plural(noun)}"


@dataclass(frozen=True)
class Census:
    """What one load read, used and skipped, and what the transcript holds (see the module)."""

    unit: str
    """What a record of this format is: a line, an event, a span, a message."""
    read: dict[str, int]
    """Records read, by kind."""
    used: dict[str, int]
    """Records that became part of the transcript (messages, usage, System text, metadata), by
    kind."""
    skipped: dict[str, int]
    """Records not used, by reason."""
    left_out: dict[str, int] = field(default_factory=dict)
    """Parts of used records not kept (thoughts, blocks ctxlab does not model), by reason."""
    unaccounted: dict[str, int] = field(default_factory=dict)
    """Silent losses: records neither used nor skipped, by kind; and what the file holds that
    the reader neither placed nor set aside, as ``"<kind> at <JSON path>"`` (an importer's bug
    either way)."""
    messages: int = 0
    """Messages of the transcript."""
    replies: int = 0
    """Assistant messages (each one request when replayed)."""
    tool_calls: int = 0
    """Tool calls of the transcript."""
    blocks: dict[str, int] = field(default_factory=dict)
    """The transcript's content blocks, by type."""
    usage_read: int = 0
    """Usage reports the importer read (one per billed request)."""
    usage_placed: int = 0
    """Replies with the provider's usage."""
    usage_lost: dict[str, int] = field(default_factory=dict)
    """Usage reports read but on no reply, by reason."""
    held: dict[str, int] = field(default_factory=dict)
    """What the file holds, by kind (usage, tool call, reasoning, reply), counted by a walk of
    the raw file that knows no format (`ctxlab.io._inventory`); empty when no walk was taken (a
    Markdown history, a transcript built in code)."""
    set_aside: dict[str, int] = field(default_factory=dict)
    """Of what the file holds, what the reader deliberately did not place (inside records it
    skipped, or parts it named with ``builder.set_aside``), as ``"<kind>: <reason>"`` →
    count."""
    aside_keys: dict[str, list[str]] = field(default_factory=dict)
    """The inventory's keys of what was set aside, by kind (what `unaccounted` is taken
    against)."""

    @property
    def adds_up(self) -> bool:
        """Whether every record read is used or skipped, and every usage read placed or its
        loss explained."""
        return not self.problems()

    @property
    def whole(self) -> bool:
        """Whether the census adds up and nothing the file holds is unaccounted: a census that
        adds up while the file's inventory finds usage, tool calls, reasoning or replies the
        reader neither placed nor set aside is not whole (`unplaced`)."""
        return self.adds_up and not self.unplaced()

    def problems(self) -> list[str]:
        """What does not add up, in words (empty when the census adds up)."""
        found: list[str] = []
        read, used, skipped = _total(self.read), _total(self.used), _total(self.skipped)
        records = self.unaccounted_records()
        if read != used + skipped:
            found.append(
                f"{_counted(read, self.unit)} read but {used:,} used and {skipped:,} skipped"
                + (f" ({_listed(records)} unaccounted)" if records else "")
            )
        lost = _total(self.usage_lost)
        if self.usage_read != self.usage_placed + lost:
            found.append(
                f"{_counted(self.usage_read, 'usage report')} read but {self.usage_placed:,} "
                f"placed and {lost:,} lost"
            )
        return found

    def unaccounted_records(self) -> dict[str, int]:
        """The records neither used nor skipped, by kind (of `unaccounted`)."""
        return {k: n for k, n in self.unaccounted.items() if _finding_kind(k) is None}

    def unplaced(self) -> dict[str, int]:
        """What the file holds that the reader neither placed nor set aside, by kind (usage,
        tool call, reasoning, reply; of `unaccounted`, whose keys also say where)."""
        found: dict[str, int] = {}
        for key, count in self.unaccounted.items():
            kind = _finding_kind(key)
            if kind is not None:
                found[kind] = found.get(kind, 0) + count
        return found

    def unplaced_line(self) -> str:
        """What the file holds that the transcript lacks, in a few words ("unaccounted: 6 usage
        fields, 3 reasoning texts" — "6 usage fields at $.data"); empty when nothing is."""
        unplaced = self.unplaced()
        if not unplaced:
            return ""
        where = sorted(
            # The findings' own paths: a record's kind (the format's word) may hold " at $" too.
            ((n, k.partition(" at ")[2]) for k, n in self.unaccounted.items() if _finding_kind(k)),
            key=lambda item: (-item[0], item[1]),
        )
        paths = ", ".join(path for _, path in where[:2]) + (", …" if len(where) > 2 else "")
        return f"unaccounted: {_kinds(unplaced)} (at {paths})"

    def summary(self) -> str:
        """One line: read, used, skipped (the largest reasons), what the transcript holds."""
        read = _total(self.read)
        line = f"read {_counted(read, self.unit)}: {_total(self.used):,} used"
        skipped = _total(self.skipped)
        if skipped:
            line += f", {skipped:,} skipped ({_listed(self.skipped)})"
        line += (
            f" → {_counted(self.messages, 'message')}, {_counted(self.tool_calls, 'tool call')}, "
            f"usage on {self.usage_placed:,} of {_counted(self.replies, 'reply')}"
        )
        if self.left_out:
            line += f"; parts left out: {_listed(self.left_out)}"
        if self.usage_lost:
            line += f"; usage lost: {_listed(self.usage_lost)}"
        if self.unaccounted:
            line += f"; UNACCOUNTED: {_listed(self.unaccounted)}"
        return line

    def __str__(self) -> str:
        return self.summary()

    def as_meta(self) -> dict[str, Any]:
        """The census as plain data, for ``Transcript.meta["census"]``: `dataclasses.asdict`'s
        copy, without its call for each of the thousands of keys set aside (`plain_copy`)."""
        return {name: plain_copy(getattr(self, name)) for name in _FIELDS}

    @classmethod
    def from_meta(cls, value: Any) -> Census | None:
        """The census stored in a transcript's meta; None when there is none (or it is not one)."""
        if not isinstance(value, Mapping) or not isinstance(value.get("read"), Mapping):
            return None

        def counts(name: str) -> dict[str, int]:
            return {str(k): int(v) for k, v in (value.get(name) or {}).items()}

        def number(name: str) -> int:
            return int(value.get(name) or 0)

        try:
            return cls(
                unit=str(value.get("unit") or "record"),
                read=counts("read"),
                used=counts("used"),
                skipped=counts("skipped"),
                left_out=counts("left_out"),
                unaccounted=counts("unaccounted"),
                messages=number("messages"),
                replies=number("replies"),
                tool_calls=number("tool_calls"),
                blocks=counts("blocks"),
                usage_read=number("usage_read"),
                usage_placed=number("usage_placed"),
                usage_lost=counts("usage_lost"),
                held=counts("held"),
                set_aside=counts("set_aside"),
                aside_keys={
                    str(k): [str(x) for x in v]
                    for k, v in (value.get("aside_keys") or {}).items()
                    if isinstance(v, list)
                },
            )
        except (TypeError, ValueError, AttributeError):
            return None


_FIELDS = tuple(f.name for f in fields(Census))

_NOUNS = {
    "usage": "usage field",
    "tool call": "tool call",
    "reasoning": "reasoning text",
    "reply": "model reply",
}
"""How the kinds of the inventory are said in a sentence."""


def _finding_kind(key: str) -> str | None:
    # An inventory finding's key is "<kind> at <JSON path>"; a record's kind is the format's word.
    kind, at, path = key.partition(" at ")
    return kind if at and kind in _NOUNS and path.startswith("$") else None


def _kinds(counts: Mapping[str, int]) -> str:
    return ", ".join(_counted(counts[k], _NOUNS[k]) for k in _NOUNS if counts.get(k))


def holdings(messages: Sequence[UserMessage | AssistantMessage]) -> dict[str, Any]:
    """What a transcript of ``messages`` holds, as `Census` fields: messages, replies, tool
    calls and blocks by type."""
    blocks: dict[str, int] = {}
    for message in messages:
        for block in message.content:
            blocks[block.type] = blocks.get(block.type, 0) + 1
    return {
        "messages": len(messages),
        "replies": sum(isinstance(m, AssistantMessage) for m in messages),
        "tool_calls": blocks.get("tool_use", 0),
        "blocks": blocks,
    }


def _listed(counts: Mapping[str, int], most: int = 3) -> str:
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{n:,} {kind}" for kind, n in ranked[:most])
    return text + (f", {_counted(len(ranked) - most, 'more kind')}" if len(ranked) > most else "")
