"""The offline summarizer: a handover an agent can continue from, written without a model.

It fills the five fields of the summary schema from what the span *did*, deterministically:

- ``task_overview``: the task (when the pipeline keeps the first user message verbatim beside
  the summary, a pointer to it; otherwise the message whole, cut at a line end only when it
  alone would exceed half the budget), then every later user instruction verbatim;
- ``current_state``: the files changed and what changed (``old → new``, one short line each),
  the plan (the latest todo list), the last action and its outcome;
- ``important_discoveries``: the errors met, each with whether a later run got past it;
- ``next_steps``: the agent's last stated intent (whole sentences), then the open todo items;
- ``context_to_preserve``: the commands run, whole, each with its outcome; the files read; the
  numbers and names the agent wrote.

What does not fit the budget goes in a stated order (the oldest commands and the names first;
instructions, edits and the plan last); nothing is cut mid-word, directory listings and rulers
are never quoted. An earlier summary's lines are carried forward behind the new span's. This
module reads messages with its own rules: it shares no code with `ctxlab.retention`, which
grades it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    UserMessage,
)
from ctxlab.pipeline._span import TAGS, Span, flat, read_span
from ctxlab.pipeline._summary import SummaryRequest

__all__ = ["extractive_summarizer"]

Message = UserMessage | AssistantMessage
Count = Callable[[str], int]

_DEFAULT_BUDGET = 2_000
_TEMPLATE_TOKENS = 60  # the template's headings
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_INTENT = re.compile(
    r"\b(?:next|now|then|I'll|I will|let me|let's|need to|should|will|going to|todo|remaining)\b",
    re.IGNORECASE,
)
_HEADING = "User instructions since, verbatim:"
_INSTRUCTION_SHARE = 0.4  # of the budget, for the user's later lines before anything else
_POINTER = "The task: the user's first message, quoted below."
_VALUES_PER_LINE = 12
_LONG_COMMAND = 1_500  # characters: a longer command (a whole file in a heredoc) goes last


@dataclass
class _Unit:
    """A line of the summary: the field it goes in, its rank when the budget is short (lower
    goes first), and its position (lines are written in the order they happened)."""

    field: str
    text: str
    rank: int
    order: int = 0


def _fixed(error: str, command: str, commands: list[tuple[str, str]]) -> str:
    # Fixed when the same command ran again later and that run no longer showed the error.
    later = [o for c, o in commands if c == command]
    if len(later) > 1 and error[:60] not in later[-1]:
        return "fixed (a later run of the same command passed it)"
    return "not yet fixed"


def _intent(text: str) -> list[str]:
    sentences = [flat(s) for s in _SENTENCE.findall(text) if len(flat(s)) > 8]
    wanted = [s for s in sentences if _INTENT.search(s)]
    return (wanted or sentences)[-2:]


def _task_units(
    request: SummaryRequest, span: Span, old: dict[str, str], count: Count, budget: int
) -> list[_Unit]:
    units: list[_Unit] = []
    # task_overview: the task, then every later user line verbatim.
    users = span.users
    if request.pinned_task is not None:
        units.append(_Unit("task_overview", _POINTER, 0))
        pinned = flat(request.pinned_task)
        users = [u for u in users if u not in pinned]
        carried = old.get("task_overview", "").splitlines()
        units.extend(_Unit("task_overview", ln, 0) for ln in carried if ln and ln != _POINTER)
    elif old.get("task_overview"):
        units.extend(_Unit("task_overview", ln, 0) for ln in old["task_overview"].splitlines())
    elif users:
        task = _task_text(request, count, budget // 2)
        units.append(_Unit("task_overview", task, 0))
        users = users[len(task.splitlines()) :] if task else users
    said = {u.text for u in units}
    later = [u for u in dict.fromkeys(users) if f"- {u}" not in said and u not in said]
    if later:
        if _HEADING not in said:
            units.append(_Unit("task_overview", _HEADING, 0))
        # The user's words come first, up to a share of the budget: a pasted log must not
        # push out everything else; what is past the share is kept if room remains.
        used = 0
        for line in later:
            used += count(line) + 3
            rank = 0 if used <= budget * _INSTRUCTION_SHARE else 5
            units.append(_Unit("task_overview", f"- {line}", rank))
    units.extend(_Unit("important_discoveries", line, 9) for line in span.recorded)
    return units


def _units(request: SummaryRequest, span: Span, count: Count, budget: int) -> list[_Unit]:
    previous = request.previous_summary
    old = previous.fields if previous is not None else {}
    units = _task_units(request, span, old, count, budget)
    # current_state: files changed, the plan, the last action.
    for path, changes in span.edits.items():
        units.append(_Unit("current_state", f"Changed {path}: {'; '.join(changes[-3:])}", 1))
    for line in span.todos:
        units.append(_Unit("current_state", f"Plan {line}", 1))
    if span.last_action:
        units.append(_Unit("current_state", f"Last action: {span.last_action}", 1))
    _carry(units, old, "current_state", 5, keep=lambda ln: ln.startswith("Changed "))
    # important_discoveries: errors met and whether they were fixed.
    for error, command in dict.fromkeys(span.errors):
        state = _fixed(error, command, span.commands)
        units.append(_Unit("important_discoveries", f"{error} — {state}", 3))
    _carry(units, old, "important_discoveries", 6)
    # next_steps: the agent's last stated intent, then open todo items.
    for sentence in _intent(span.last_text):
        units.append(_Unit("next_steps", sentence, 2))
    units.extend(
        _Unit("next_steps", f"Open: {t}", 2) for t in span.todos if not t.startswith("[completed]")
    )
    if not any(u.field == "next_steps" for u in units) and span.last_action:
        units.append(_Unit("next_steps", f"Continue after: {span.last_action}", 2))
    # context_to_preserve: commands with outcomes (recent first), files read, values written.
    for index, (command, outcome) in enumerate(span.commands):
        recent = len(span.commands) - index
        rank = 8 if len(command) > _LONG_COMMAND else 4 + min(recent // 15, 2)
        units.append(_Unit("context_to_preserve", f"$ {command}  → {outcome}", rank))
    _carry(units, old, "context_to_preserve", 7, keep=lambda ln: ln.startswith("$ "))
    written = " ".join(u.text for u in units)
    reads = [p for p in dict.fromkeys(span.reads) if p not in written]
    if reads:
        units.append(_Unit("context_to_preserve", "Files read: " + ", ".join(reads), 6))
    written += " " + " ".join(reads)
    # Already written as a word of its own (inside a longer name it is not written).
    values = [v for v in dict.fromkeys(span.values) if not _written_as_word(written, v)]
    if values:
        # In lines of a few: what does not fit goes a line at a time, the oldest first.
        for start in range(0, len(values), _VALUES_PER_LINE):
            chunk = ", ".join(values[start : start + _VALUES_PER_LINE])
            units.append(_Unit("context_to_preserve", f"Values and names: {chunk}", 5))
    _carry(units, old, "context_to_preserve", 9, keep=lambda ln: not ln.startswith("$ "))
    for order, unit in enumerate(units):
        unit.order = order
    return units


_NAME = re.compile(r"[\w.]+")


def _written_as_word(text: str, value: str) -> bool:
    """Whether ``value`` is one of ``text``'s words: a run of word characters and dots, its
    dots at either end left out. Found with `str.find` and the characters around each hit: a
    value is a few of the span's names, the text the whole summary (splitting it into a set of
    words cost more than the finds)."""
    if not value:  # a run of dots alone is the empty word
        return any(not w.strip(".") for w in _NAME.findall(text))
    if value[0] == "." or value[-1] == "." or not _NAME.fullmatch(value):
        return False  # never what a word is, its end dots left out
    size = len(text)
    start = text.find(value)
    while start != -1:
        before, after = start, start + len(value)
        while before > 0 and text[before - 1] == ".":
            before -= 1
        while after < size and text[after] == ".":
            after += 1
        if not (before > 0 and _word(text[before - 1])) and not (
            after < size and _word(text[after])
        ):
            return True
        start = text.find(value, start + 1)
    return False


def _word(char: str) -> bool:
    # What ``\w`` matches in a str pattern: str.isalnum() and the underscore.
    return char.isalnum() or char == "_"


def _carry(
    units: list[_Unit],
    old: dict[str, str],
    name: str,
    rank: int,
    keep: Callable[[str], bool] = lambda _: True,
) -> None:
    """An earlier summary's lines of ``name``, behind this span's, unless already said."""
    said = {u.text for u in units}
    carried = [ln for ln in old.get(name, "").splitlines() if ln.strip() and keep(ln)]
    units[0:0] = [_Unit(name, ln, rank) for ln in carried if ln not in said]


def _task_text(request: SummaryRequest, count: Count, budget: int) -> str:
    first = next(
        (m for m in request.messages if isinstance(m, UserMessage) and not m.tool_results), None
    )
    if first is None:
        return ""
    lines = [
        ln
        for ln in TAGS.sub(
            " ", "\n".join(b.text for b in first.content if isinstance(b, TextBlock))
        ).splitlines()
        if ln.strip()
    ]
    kept: list[str] = []
    used = 0
    for line in lines:
        used += count(line) + 1
        if used > budget:
            kept.append(f"[the task continues for {len(lines) - len(kept)} more lines]")
            break
        kept.append(line)
    return "\n".join(kept)


def _fit(units: list[_Unit], budget: int, count: Count) -> list[_Unit]:
    """The units that fit ``budget``: taken by rank, the most recent first within a rank;
    a unit too large for what is left is skipped (smaller ones may still fit)."""
    chosen: list[_Unit] = []
    used = 0
    for unit in sorted(units, key=lambda u: (u.rank, -u.order)):
        tokens = count(unit.text) + 1
        if used + tokens <= budget:
            chosen.append(unit)
            used += tokens
    return sorted(chosen, key=lambda u: u.order)


async def extractive_summarizer(request: SummaryRequest) -> dict[str, str]:
    """A deterministic handover summary within the request's budget (see the module's
    documentation for what each field holds and what goes first when space is short)."""
    count = request.count or (lambda text: len(text) // 4 + 1)
    budget = request.budget_tokens or _DEFAULT_BUDGET
    span = read_span(request.messages)
    units = _fit(_units(request, span, count, budget), budget - _TEMPLATE_TOKENS, count)
    fields = {
        name: "\n".join(u.text for u in units if u.field == name)
        for name in (
            "task_overview",
            "current_state",
            "important_discoveries",
            "next_steps",
            "context_to_preserve",
        )
    }
    if request.instructions:
        fields["current_state"] += f"\nCaller's instructions: {request.instructions}"
    return {name: text or "none recorded" for name, text in fields.items()}
