"""Which of a span's items the request after a compaction still holds, split by where: in the
summary, in the pinned text beside it (the user's first message, kept verbatim), in the kept
tail — and the control, what the kept tail alone would keep (no summary).

Matching is on the text a model reads (texts, tool inputs and outputs), white space collapsed
on both sides, at word boundaries: ``view`` is not found inside "Overview". A path counts as
kept when the request holds it, or its last two components (summaries write relative paths).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ctxlab.exceptions import UsageError
from ctxlab.messages import (
    AssistantMessage,
    HintBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.retention._extract import _SPLIT, CATEGORIES, TARGETS, Inventory, collapse, inventory
from ctxlab.retention._holds import HeldText, holds, occurrence_end, parts_words, short_path
from ctxlab.retention._users import UserLines
from ctxlab.util._checks import instance_of, sequence_of, shown
from ctxlab.util._memo import Memo
from ctxlab.util._views import Later

if TYPE_CHECKING:
    from ctxlab.messages._state import WorkingState

__all__ = [
    "CategoryRetention",
    "Retention",
    "compaction_retention",
    "holds",
    "measure_retention",
    "message_parts",
    "occurrence_end",
    "request_parts",
    "request_text",
    "retention_columns",
    "short_path",
]

Message = UserMessage | AssistantMessage
_PATH_CATEGORIES = ("files", "edits")


@dataclass(frozen=True)
class CategoryRetention:
    """One category's items after a compaction."""

    total: int = 0
    kept: int = 0
    """In the next request at all (the summary, the pinned text or the tail)."""
    in_summary: int = 0
    """In the summary's own text (not the pinned text beside it)."""
    in_pinned: int = 0
    """In the pinned text: the user's first message the pipeline keeps verbatim beside the
    summary (so ``task`` in the summary and ``task`` pinned are told apart)."""
    in_tail: int = 0
    """In the kept tail: what the control (no summary) keeps."""
    lost: tuple[str, ...] = ()

    @property
    def share(self) -> float | None:
        """The share kept; None without items."""
        return self.kept / self.total if self.total else None

    @property
    def control(self) -> float | None:
        """The share the kept tail alone holds (the control: no summary)."""
        return self.in_tail / self.total if self.total else None


@dataclass(frozen=True)
class Retention:
    """What a compaction kept of its span, by category (see `ctxlab.retention`)."""

    categories: Mapping[str, CategoryRetention] = field(default_factory=dict)

    def __getitem__(self, category: str) -> CategoryRetention:
        return self.categories.get(category, CategoryRetention())

    def share(self, *categories: str) -> float | None:
        """The mean of the categories' shares (`TARGETS` when none are named), over those that
        have items; None when none has."""
        return _mean(self[c].share for c in categories or TARGETS)

    def control_share(self, *categories: str) -> float | None:
        """The same mean for the kept tail alone (no summary): the figure the summary must beat."""
        return _mean(self[c].control for c in categories or TARGETS)

    @property
    def core(self) -> float | None:
        """The headline figure: `share` over `TARGETS`."""
        return self.share()

    @property
    def lost(self) -> dict[str, tuple[str, ...]]:
        """The items no longer in the request, by category."""
        return {c: r.lost for c, r in self.categories.items() if r.lost}

    def rows(self) -> list[dict[str, Any]]:
        """One row per category: total, kept, in summary, pinned, in tail, share, control."""
        return [
            {
                "category": c,
                "total": r.total,
                "kept": r.kept,
                "in_summary": r.in_summary,
                "in_pinned": r.in_pinned,
                "in_tail": r.in_tail,
                "share": r.share,
                "control": r.control,
            }
            for c in CATEGORIES
            if (r := self[c]).total
        ]


def _mean(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def request_text(messages: Iterable[Message], *extra: str) -> str:
    """Everything the model can read in ``messages`` (and ``extra``), white space collapsed."""
    # Collapsed part by part (the same text: no word spans two parts, and a part that holds
    # none adds none), each part's kept: a what-if grades the same kept messages under config
    # after config, and collapsing a tail of tool output was a tenth of a re-replay.
    return " ".join(request_parts(messages, *extra))


def request_parts(messages: Iterable[Message], *extra: str) -> list[str]:
    """The parts `request_text` joins with a space, each collapsed, empty ones left out."""
    parts = [c for p in extra if (c := _collapse_part(p))]
    for message in messages:
        parts.extend(message_parts(message))
    return parts


def message_parts(message: Message) -> list[str]:
    """What the model can read in ``message``, part by part, each collapsed, empty ones left
    out: `request_text` joins them with a space."""
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, HintBlock):
            parts.append(block.hint)
        elif isinstance(block, ToolUseBlock):
            parts.extend(_strings(block.input))
        elif isinstance(block, ToolResultBlock):
            parts.append(block.text)
    return [c for p in parts if (c := _collapse_part(p))]


def _collapse_part(text: str) -> str:
    def collapsed() -> str:
        once = collapse(text)
        return text if once == text else once  # one string kept, not two equal ones

    return _collapsed.get(text, collapsed)


_collapsed: Memo[str, str] = Memo(5_000)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def measure_retention(
    span: Sequence[Message],
    summary: str,
    tail: Sequence[Message],
    *,
    pinned: str = "",
    users: Sequence[Message] | None = None,
    reader: UserLines | None = None,
) -> Retention:
    """What the request after a compaction keeps of ``span`` (the *original* messages it
    compacted): ``summary`` is the summary's own text, ``pinned`` the text kept verbatim beside
    it (graded apart), ``tail`` the messages it kept, as sent. ``users`` are the messages whose
    user lines are targets (default ``span``; pass every message before the tail to hold the
    task and instructions at every compaction); ``reader`` a `UserLines` kept across the
    compactions of one session (it reads each message once)."""
    span, tail = _messages(span, "span"), _messages(tail, "tail")
    users = None if users is None else _messages(users, "users")
    for text, name in ((summary, "summary"), (pinned, "pinned")):
        if not isinstance(text, str):
            msg = f"{name} must be the text kept of the span, got {shown(text)}"
            raise UsageError(msg)
    if reader is not None:
        instance_of(reader, UserLines, "reader", "a UserLines kept across a session, or None")
    found = inventory(span, users=users, reader=reader)
    return _measure(found, collapse(summary), collapse(pinned), tail)


_KINDS = frozenset({UserMessage, AssistantMessage})


def _messages(value: object, name: str) -> tuple[Message, ...]:
    # A compaction's grade passes every message before its tail: checked item by item in
    # Python, that was the square of the session's length (a fifth of a 5,000-request what-if's
    # grading); a list or tuple of exactly these classes is taken at C speed, the rest checked.
    if isinstance(value, tuple | list):
        items = tuple(value)
        if _KINDS.issuperset(map(type, items)):
            return items
    return sequence_of(
        value, (UserMessage, AssistantMessage), name, "a list of UserMessage and AssistantMessage"
    )


def _words(text: str) -> set[str]:
    # ``src/a.py:12:`` and ``path=src/a.py`` hold the word ``src/a.py``.
    words = set(_SPLIT.split(text))
    words |= {w.rstrip(".") for w in words}
    # A path is also held by a longer path ending with it: ``/testbed/src/a.py`` holds
    # ``src/a.py`` (as word-boundary matching finds it).
    suffixes = {w[i + 1 :] for w in words if "/" in w for i, c in enumerate(w) if c == "/"}
    return words | suffixes


def _in_words(words: set[str], item: str) -> bool:
    if item in words:
        return True
    parts = [p for p in item.split("/") if p not in ("", ".")]
    return len(parts) >= 2 and "/".join(parts[-2:]) in words


def _measure(found: Inventory, summary: str, pinned: str, kept: Sequence[Message]) -> Retention:
    out: dict[str, CategoryRetention] = {}
    parts = request_parts(kept)
    # Each text with its words: most items are not in the tail, and are found so by their words.
    tail = HeldText(" ".join(parts), parts_words(parts))
    said, beside = HeldText(summary), HeldText(pinned)
    for category in CATEGORIES:
        if category != "output_only" and (items := found.of(category)):
            path = category in _PATH_CATEGORIES
            out[category] = _category(
                items,
                [said.holds(i, path=path) for i in items],
                [tail.holds(i, path=path) for i in items],
                [bool(pinned) and beside.holds(i, path=path) for i in items],
            )
    # ``output_only`` is measured when a view reads it (`Later`): the headline figure does not,
    # and it is the costliest (a scan of every tool output). It holds the messages, not their
    # text: a what-if keeps a record per compaction.
    return Retention(Later(out, "output_only", lambda: _output_only(found, summary, pinned, kept)))


def _output_only(
    found: Inventory, summary: str, pinned: str, kept: Sequence[Message]
) -> CategoryRetention | None:
    # Reported, not a target, and by far the largest category (thousands of items): matched
    # as whole words of the text, which is what a path or number in it is.
    items = found.of("output_only")
    if not items:
        return None
    summary_words, tail_words = _words(summary), _words(request_text(kept))
    pinned_words = _words(pinned) if pinned else set()
    return _category(
        items,
        [_in_words(summary_words, i) for i in items],
        [_in_words(tail_words, i) for i in items],
        [_in_words(pinned_words, i) for i in items],
    )


def _category(
    items: Sequence[str],
    in_summary: Sequence[bool],
    in_tail: Sequence[bool],
    in_pinned: Sequence[bool],
) -> CategoryRetention:
    lost = tuple(
        i
        for i, s, t, p in zip(items, in_summary, in_tail, in_pinned, strict=True)
        if not (s or t or p)
    )
    return CategoryRetention(
        total=len(items),
        kept=len(items) - len(lost),
        in_summary=sum(in_summary),
        in_pinned=sum(in_pinned),
        in_tail=sum(in_tail),
        lost=lost,
    )


def _same_turn(a: Message, b: Message) -> bool:
    # The tail as sent may be cut (truncated results), never reordered: role and tool ids
    # identify a turn.
    if a.role != b.role:
        return False
    if isinstance(a, AssistantMessage) and isinstance(b, AssistantMessage):
        return [u.id for u in a.tool_uses] == [u.id for u in b.tool_uses]
    if isinstance(a, UserMessage) and isinstance(b, UserMessage):
        return [r.tool_use_id for r in a.tool_results] == [r.tool_use_id for r in b.tool_results]
    return False


def compaction_retention(
    originals: Sequence[Message],
    before: WorkingState,
    after: WorkingState,
    *,
    reader: UserLines | None = None,
) -> Retention | None:
    """The retention of the compaction that turned working state ``before`` into ``after``,
    from the session's *original* messages: ``originals`` are the messages the working
    conversation was built from, in order. None when ``after`` holds no summary, or its tail
    does not line up with ``originals`` (a state not built from them)."""
    summary = after.summary
    if summary is None:
        return None
    earlier = before.summary.compacted_messages if before.summary is not None else 0
    compacted, tail = summary.compacted_messages, after.conversation
    if compacted > len(originals) or earlier > compacted:
        return None
    if tail and (compacted >= len(originals) or not _same_turn(originals[compacted], tail[0])):
        return None
    own, pinned = _split_pinned(summary.text, summary.task)
    return measure_retention(
        originals[earlier:compacted],
        own,
        tail,
        pinned=pinned,
        users=originals[:compacted],
        reader=reader,
    )


def _split_pinned(text: str, task: str) -> tuple[str, str]:
    """A summary message's text as (the summary's own text, the pinned text): the pinned task
    is the summary's ``task``, set after the summary's fields in ``text`` (the grader finds it
    there itself rather than asking the pipeline how it was laid out)."""
    at = text.rfind(task) if task else -1
    if at == -1:
        return text, ""
    return text[:at] + text[at + len(task) :], task


class _HasRetention(Protocol):
    @property
    def retention(self) -> Retention | None: ...


def retention_columns(record: _HasRetention | None) -> dict[str, float | None]:
    """A compaction record's ``retention`` and ``retention_control`` step-table columns."""
    kept = record.retention if record is not None else None
    if kept is None:
        return {"retention": None, "retention_control": None}
    return {"retention": kept.core, "retention_control": kept.control_share()}
