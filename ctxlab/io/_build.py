"""Building a valid conversation out of another tool's records.

Importers hand over blocks in the Anthropic shape (dicts) role by role; the builder merges
consecutive turns of one role (one API response spread over several records, parallel results
recorded one by one), renames repeated tool-call ids, and finally repairs what is left (every
call answered, every result with its call) — counting each repair for the transcript's meta.
It also keeps the load's census (`ctxlab.io._census`): each record the importer names with
`ConversationBuilder.record` is used or skipped, and every usage placed or its loss counted —
and the recording's clock: when each reply was recorded (`ConversationBuilder.reply_time`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._block_shapes import (
    KEPT_BLOCKS,
    anthropic_block,
    as_mapping,
    has_data,
    image_block,
    text_parts,
    tool_result,
)
from ctxlab.io._cache_split import split_notes
from ctxlab.io._census import Census, holdings
from ctxlab.io._clock import TimeUnit, posix_seconds
from ctxlab.io._findings import field_of
from ctxlab.io._tally import Tally
from ctxlab.messages import (
    NOT_IN_ROLE,
    AssistantMessage,
    ProviderUsage,
    UserMessage,
    parse_messages,
    repair_conversation,
)

__all__ = [
    "EMPTY_USAGE",
    "ConversationBuilder",
    "anthropic_block",
    "as_mapping",
    "image_block",
    "text_parts",
    "tool_result",
]

_T = TypeVar("_T")

EMPTY_USAGE = "empty usage (no token counted: no bill)"
"""Why a usage a file records with every count zero (``{}``, all zeros) is placed on no reply:
it is no bill (a synthetic, failed or unbilled reply), and a bill of 0 would read as one."""


class ConversationBuilder:
    """Accumulates turns; `finish` returns valid messages, what was repaired, and the census
    (how an importer reports into it: `ctxlab.io._census`)."""

    def __init__(self, where: str, *, unit: str = "record") -> None:
        self.where = where
        self.tally = Tally(unit)
        """The census being taken (records read, used, skipped; usage read and lost)."""
        self.turns: list[dict[str, Any]] = []
        self.usage: dict[int, ProviderUsage] = {}
        self.times: dict[int, float] = {}
        """When each reply turn was recorded (POSIX seconds), by turn (`reply_time`)."""
        self._splits: dict[int, tuple[ProviderUsage, bool]] = {}
        self.dropped: dict[str, int] = {}
        self.notes: dict[str, Any] = {}
        """What an importer learned or did on the way, for the transcript's meta."""
        self.renamed = 0
        self._seen: set[str] = set()
        self._rename: dict[str, str] = {}

    @property
    def skipped(self) -> dict[str, int]:
        """What of the source did not become messages, by reason (`skip`, `leave_out`): each
        record and part once (a record skipped with parts left out: once, for their reason)."""
        return self.tally.by_reason

    def add(
        self, role: str, blocks: Iterable[Mapping[str, Any]], usage: ProviderUsage | None = None
    ) -> bool:
        """Add blocks of ``role`` (merged into the previous turn when it has the same role);
        whether any was kept (when none is, the record is not used by it)."""
        kept = self._kept(role, blocks)
        if usage is not None:
            self.tally.usage_read += 1
            if usage.empty:
                self._lose_usage(EMPTY_USAGE)
                usage = None
        if not kept:
            if usage is not None:
                self._lose_usage("on a reply with nothing kept")
            return False
        self.tally.use()
        if self.turns and self.turns[-1]["role"] == role:
            self.turns[-1]["content"].extend(kept)
        else:
            self.turns.append({"role": role, "content": kept})
        if usage is not None:
            if role != "assistant":
                self._lose_usage("on a user turn")
            else:
                self._place_usage(len(self.turns) - 1, usage, "replaced: replies merged in a turn")
        return True

    def _kept(self, role: str, blocks: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        # The blocks a turn of ``role`` can hold; each one left out is counted.
        kept: list[dict[str, Any]] = []
        for block in blocks:
            kind = block.get("type")
            if kind not in KEPT_BLOCKS:
                self.dropped[str(kind)] = self.dropped.get(str(kind), 0) + 1
                self.leave_out(f"{kind} block (not modelled)")
                continue
            if kind == "tool_result" and not (
                isinstance(block.get("tool_use_id"), str) and block["tool_use_id"]
            ):
                # A result that names no call is an orphan: left out and counted, not a reason
                # to refuse the whole file.
                self.leave_out("tool result without a call id")
                continue
            if kind in NOT_IN_ROLE.get(role, ()):
                block = {"type": "provider", "data": dict(block)}
            elif kind == "image" and not has_data(block):
                self.leave_out("image without data")
                continue
            elif kind == "tool_result" and isinstance(block.get("content"), list):
                block = {**block, "content": self._result_parts(block["content"])}
            kept.append(self._ids(dict(block)))
        return kept

    def _result_parts(self, parts: list[Any]) -> list[Any]:
        # A result's images without their bytes are left out and counted, like a message's.
        kept = [
            p
            for p in parts
            if not (isinstance(p, Mapping) and p.get("type") == "image" and not has_data(p))
        ]
        self.leave_out("image without data", len(parts) - len(kept))
        return kept

    def usage_of_last_reply(self, usage: ProviderUsage) -> None:
        """Put ``usage`` on the latest assistant turn (a tool that reports a call's usage after
        its reply); counted as lost when there is no reply yet. The record is used either way
        (read for its usage)."""
        self.tally.usage_read += 1
        self.tally.use()
        if usage.empty:
            self._lose_usage(EMPTY_USAGE)
            return
        for index in range(len(self.turns) - 1, -1, -1):
            if self.turns[index]["role"] == "assistant":
                self._place_usage(index, usage, "replaced by a later usage of the same reply")
                return
        self._lose_usage("before any reply")

    def place_usage(self, index: int, usage: ProviderUsage) -> None:
        """Put ``usage`` on turn ``index`` (usage aligned with replies once the file is read);
        counted read, and lost when the turn is not a reply or already has usage."""
        self.tally.usage_read += 1
        if usage.empty:
            self._lose_usage(EMPTY_USAGE)
            return
        if not 0 <= index < len(self.turns) or self.turns[index]["role"] != "assistant":
            self._lose_usage("on a turn that is not a reply")
            return
        self._place_usage(index, usage, "replaced by a later usage of the same reply")

    def _place_usage(self, index: int, usage: ProviderUsage, replaced: str) -> None:
        if index in self.usage:
            self._lose_usage(replaced)
        self.usage[index] = usage

    def reply_time(
        self, value: Any, unit: TimeUnit = "iso", *, turn: int | None = None, replace: bool = False
    ) -> None:
        """Record when reply ``turn`` (None: the latest turn, if it is a reply) was recorded:
        ``value`` as the file writes it — ISO 8601 text (``unit="iso"``), or a number in
        ``unit`` (`ctxlab.io._clock`). What is no time (missing, unparseable, NaN, negative)
        leaves the reply without one. The first time a turn gets stands — a reply spread over
        several records is dated by its first — unless ``replace`` (a later response merged
        into the turn, whose usage stands, dates it)."""
        if turn is None:
            turn = len(self.turns) - 1
        if not 0 <= turn < len(self.turns) or self.turns[turn]["role"] != "assistant":
            return
        if turn in self.times and not replace:
            return
        seconds = posix_seconds(value, unit)
        if seconds is not None:
            self.times[turn] = seconds
        elif replace:
            self.times.pop(turn, None)

    def cache_split(self, usage: ProviderUsage, trusted: bool | None) -> None:
        """Whether ``usage`` recorded the 1-hour/5-minute split of its cache writes (None: it
        did not) and whether that split adds up to its total (`ctxlab.io._cache_split`):
        wherever the usage is placed, its reply is counted in ``meta["cache_split_recorded"]``
        and, when the split does not add up, listed in ``meta["cache_split_flagged"]``."""
        if trusted is not None:
            self._splits[id(usage)] = (usage, trusted)

    def lose_usage(self, reason: str, count: int = 1) -> None:
        """``count`` usage reports read that land on no reply: counted lost, for ``reason``
        (the open record, if undecided, is used: read for its usage)."""
        if count > 0:
            self.tally.usage_read += count
            self.tally.use()
            self._lose_usage(reason, count)

    def _lose_usage(self, reason: str, count: int = 1) -> None:
        self.tally.usage_lost[reason] = self.tally.usage_lost.get(reason, 0) + count

    def record(self, kind: str, count: int = 1, *, raw: Any = None) -> None:
        """Start the census's next record (``count`` records handled as one) of ``kind``: it
        must end used (`add`, `text`, `use`, ...) or skipped (`skip`). ``raw``: the record as
        the file holds it (a list for a group), given where a skip is expected — what it holds
        (tool calls, usage, reasoning, replies) is then set aside with it, not unaccounted."""
        self.tally.record(kind, count, raw)

    def use(self) -> None:
        """The current record is used though it adds no block: read for the transcript's
        metadata, System text, usage or the order of what follows."""
        self.tally.use()

    def skip(self, reason: str, count: int = 1) -> None:
        """The current record (all ``count`` of `record`) is not used, for ``reason``
        (``meta["skipped"]``: nothing a file holds is dropped without saying so) — or, when
        parts of it were left out (`leave_out`), for the first one's reason: it is skipped
        once, for what it held. Outside a record, ``count`` records of their own; in a record
        already used, ``count`` parts of it (as `leave_out`)."""
        if count > 0:
            self.tally.skip(reason, count)

    def settle(self, reason: str) -> None:
        """Skip the current record for ``reason`` unless it is used or skipped already."""
        self.tally.settle(reason)

    def leave_out(self, reason: str, count: int = 1, *, raw: Any = None) -> None:
        """``count`` parts of the current record are not kept (thoughts, blocks ctxlab does not
        model), for ``reason``; the record itself may still be used — if it is not (`skip`,
        `settle`), it is skipped for this reason instead, and the parts are not counted apart.
        ``raw``: the parts as the file holds them — what the file's inventory finds in them is
        set aside, not unaccounted (`set_aside`)."""
        self.tally.leave_out(reason, count, raw)

    def set_aside(self, value: Any, reason: str) -> None:
        """Set aside, for ``reason``, everything the file's inventory finds in ``value`` (usage,
        tool calls, reasoning, replies): part of a record that the transcript deliberately does
        not carry — a tool's own copy of its result, a session's totals, a request's input
        repeating earlier replies. The census's ``set_aside``; what the file holds that is
        neither placed nor set aside is unaccounted (`ctxlab.io._inventory`)."""
        self.tally.set_aside_in(value, reason)

    def set_aside_field(self, holder: Mapping[str, Any], key: str, reason: str) -> None:
        """`set_aside` of ``holder[key]``, known as the file knows it: by the name it sits under
        and the id of what holds it (a message's ``tokens`` beside its id)."""
        if key in holder:
            self.tally.set_aside_in(field_of(holder, key), reason)

    def add_to(self, index: int, blocks: Iterable[Mapping[str, Any]]) -> None:
        """Add blocks to the earlier turn ``index`` (one response recorded in pieces, with the
        results of its first calls already in between)."""
        kept = self._kept(self.turns[index]["role"], blocks)
        if kept:
            self.tally.use()
        self.turns[index]["content"].extend(kept)

    def text(self, role: str, text: str, usage: ProviderUsage | None = None) -> bool:
        """Add a plain text turn; whether it was kept (nothing when empty: then the record is
        not used by it)."""
        if text.strip():
            return self.add(role, [{"type": "text", "text": text}], usage)
        if usage is not None:
            self.lose_usage(EMPTY_USAGE if usage.empty else "on a reply with nothing kept")
        return False

    def _ids(self, block: dict[str, Any]) -> dict[str, Any]:
        # A repeated tool-call id would make the conversation invalid: the later call gets a
        # __dupN suffix, and the results that follow it are re-pointed.
        if block["type"] == "tool_use":
            original = str(block.get("id") or "")
            new = original or f"call_{len(self._seen) + 1}"
            number = 1
            while new in self._seen:
                number += 1
                new = f"{original}__dup{number}"
            if new != original:
                self.renamed += 1
            self._seen.add(new)
            self._rename[original] = new
            block["id"] = new
        elif block["type"] == "tool_result":
            if not isinstance(block.get("tool_use_id"), str) or not block["tool_use_id"]:
                # A result that names no call: an orphan the repair drops and counts, not a
                # reason to refuse the whole file.
                block["tool_use_id"] = ""
                self.notes["results_without_call_id"] = (
                    self.notes.get("results_without_call_id", 0) + 1
                )
            block["tool_use_id"] = self._rename.get(
                str(block.get("tool_use_id")), block.get("tool_use_id")
            )
        return block

    def _order_results(self) -> None:
        # Results recorded as they finished are put in the order of their calls (as a provider
        # expects them, and as the other importers write them).
        for before, turn in zip(self.turns, self.turns[1:], strict=False):
            if before["role"] != "assistant" or turn["role"] != "user":
                continue
            order = {
                b.get("id"): i for i, b in enumerate(before["content"]) if b["type"] == "tool_use"
            }
            results = [b for b in turn["content"] if b["type"] == "tool_result"]
            if len(results) > 1:
                before_sort = list(results)
                results.sort(key=lambda b: order.get(b.get("tool_use_id"), len(order)))
                if results != before_sort:
                    self.notes["reordered_results"] = self.notes.get("reordered_results", 0) + 1
                rest = [b for b in turn["content"] if b["type"] != "tool_result"]
                turn["content"] = [*results, *rest]

    def finish(
        self,
    ) -> tuple[
        list[UserMessage | AssistantMessage],
        dict[str, Any],
        dict[int, ProviderUsage],
        dict[int, float],
    ]:
        """The messages (repaired), notes on what was done (the census in ``notes["census"]``,
        the replies whose cache split is not trusted in ``notes["cache_split_flagged"]``),
        usage by message index, and times by message index (`reply_time`)."""
        self.tally.close()
        self._order_results()
        try:
            messages = parse_messages(self.turns)
        except MessageFormatError as exc:
            msg = f"{self.where}: {exc}"
            raise MessageFormatError(msg) from exc
        fixed, repairs = repair_conversation(tuple(messages))
        notes: dict[str, Any] = dict(self.notes)
        if self.dropped:
            notes["dropped_blocks"] = dict(self.dropped)
        if self.skipped:
            notes["skipped"] = dict(self.skipped)
        if self.renamed:
            notes["renamed_tool_ids"] = self.renamed
        if repairs:
            notes["repairs"] = repairs
            notes["synthesized_results"] = sum("added an error result" in r for r in repairs)
        usage = _moved(self.usage, messages, fixed)
        if len(usage) < len(self.usage):
            self._lose_usage("the repair removed a reply", len(self.usage) - len(usage))
        notes.update(split_notes(usage, self._splits))
        notes["census"] = self.census(fixed, usage).as_meta()
        return list(fixed), notes, usage, _moved(self.times, messages, fixed)

    def census(
        self, messages: Sequence[UserMessage | AssistantMessage], usage: Mapping[int, Any]
    ) -> Census:
        """The census of what was read so far, and of ``messages`` as the transcript."""
        tally = self.tally
        return Census(
            unit=tally.unit,
            read=dict(tally.read),
            used=dict(tally.used),
            skipped=dict(tally.skipped),
            left_out=dict(tally.left_out),
            unaccounted=dict(tally.unaccounted),
            usage_read=tally.usage_read,
            usage_placed=len(usage),
            usage_lost=dict(tally.usage_lost),
            set_aside=dict(tally.set_aside),
            aside_keys={kind: sorted(keys) for kind, keys in tally.aside_keys.items()},
            **holdings(messages),
        )


def _moved(
    by_turn: dict[int, _T],
    before: Sequence[UserMessage | AssistantMessage],
    after: Sequence[UserMessage | AssistantMessage],
) -> dict[int, _T]:
    # Repairs add or drop user turns (error results, emptied messages), which shifts indexes:
    # usage and times follow their reply by the reply's rank, as long as no reply was removed.
    old = [i for i, m in enumerate(before) if isinstance(m, AssistantMessage)]
    new = [i for i, m in enumerate(after) if isinstance(m, AssistantMessage)]
    if len(old) != len(new):
        return {}
    moved = dict(zip(old, new, strict=True))
    return {moved[i]: u for i, u in by_turn.items() if i in moved}
