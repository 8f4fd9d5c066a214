"""The offline summarizer: a handover an agent can continue from, written without a model.

It fills the five fields of the summary schema from what the span *did*, deterministically:

- ``task_overview``: the task (when the pipeline keeps the first user message verbatim beside
  the summary, a pointer to it; otherwise the message, cut at a line end only when it alone
  would exceed half the budget — the cut said), then every later user instruction verbatim;
  the task goes in first, whatever else must give way;
- ``current_state``: the files changed and what changed — the part of each edit that differs,
  before → after (`_changes.py`): a file's last two edits and a count of the earlier ones —
  the plan (the latest todo list), the last action and its outcome;
- ``important_discoveries``: every command that failed, once, fixed or not yet fixed with its
  last run's failure lines and how many more were left out (`_discoveries.py`);
- ``next_steps``: when the span's last run failed, that failure first; the agent's last stated
  intent as whole sentences (`_intent.py`), never its self-assessment when the last run
  contradicts it (`_next_steps.py`), then the open todo items;
- ``context_to_preserve``: the commands run, whole, each with its outcome; the files read; the
  numbers and names the agent wrote.

What does not fit the budget goes in a stated order (the oldest commands and the names first;
the task, instructions, edits and the plan last); nothing is cut mid-word, directory listings
and rulers are never quoted. An earlier summary's lines are carried forward behind the new
span's (what it said of a command this span ran again is superseded). This module reads
messages with its own rules: it shares no code with `ctxlab.retention`, which grades it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter

from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    UserMessage,
)
from ctxlab.pipeline._discoveries import DETAIL, OTHERS_BELOW, discoveries
from ctxlab.pipeline._next_steps import next_steps
from ctxlab.pipeline._span import TAGS, Span, flat, read_span
from ctxlab.pipeline._summary import SummaryRequest
from ctxlab.pipeline._written import unwritten
from ctxlab.util._checks import instance_of
from ctxlab.util._memo import Memo

__all__ = ["extractive_summarizer"]

Message = UserMessage | AssistantMessage
Count = Callable[[str], int]

_DEFAULT_BUDGET = 2_000
_TEMPLATE_TOKENS = 60  # the template's headings
_HEADING = "User instructions since, verbatim:"
_INSTRUCTION_SHARE = 0.4  # of the budget, for the user's later lines before anything else
_POINTER = "The task: the user's first message, quoted below."
_VALUES_PER_LINE = 12
_LONG_COMMAND = 1_500  # characters: a longer command (a whole file in a heredoc) goes last
_NOT_STARTED = "Start on the task: no action was taken before this summary."
_NOTHING = ("none recorded", "(not recorded)")  # what an empty field says: never carried
_CUT_NOTE = re.compile(r"^\[the (?:task|first message) continues for (\d+) (?:more )?lines\]$")


@dataclass
class _Unit:
    """A line of the summary: the field it goes in, its rank when the budget is short (lower
    goes first), and its position (lines are written in the order they happened)."""

    field: str
    text: str
    rank: float
    order: int = 0


def _task_units(
    request: SummaryRequest, span: Span, old: dict[str, str], count: Count, budget: int
) -> list[_Unit]:
    """The task first (rank -1: whatever else gives way), then the user's later lines."""
    units: list[_Unit] = []
    users = span.users
    carried_task, carried = _split_overview(old.get("task_overview", ""))
    previous = request.previous_summary
    if previous is None and span.first_lines > 0:
        # The span opens the conversation: its first message is the task (pinned or stated
        # below, whole or cut), not an instruction since.
        users = users[span.first_lines :]
    if request.pinned_task is not None:
        units.append(_Unit("task_overview", _POINTER, -1))
        # What an earlier summary said of the task besides the pointer (a model's one-line goal).
        units.extend(_Unit("task_overview", ln, 0) for ln in carried_task if ln != _POINTER)
        pinned = _flat_tasks.keyed(request.pinned_task, flat)
        users = [u for u in users if u not in pinned]
    else:
        # The summary states the task: the earlier summary's pinned copy (when it can no
        # longer be pinned), the task the earlier summary stated, or the span's first message.
        if previous is not None and previous.task:
            lines = previous.task.splitlines()
        elif carried_task and carried_task != [_POINTER]:
            lines = [ln for ln in carried_task if ln != _POINTER]
        else:  # the span opens the conversation (or no earlier summary said the task)
            lines = _first_message(request) if previous is None else []
        task = _cut_task(lines, count, budget // 2)
        if task:
            units.append(_Unit("task_overview", task, -1))
    units.extend(_Unit("task_overview", ln, 0) for ln in carried)
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


_flat_tasks: Memo[str, str] = Memo(1_000)
"""The pinned task flattened, by its text: every summary of a session is asked with the same
task, and flattening it each time was 2 % of the summarizer in the held-out replays (i68-summ)."""


def _split_overview(text: str) -> tuple[list[str], list[str]]:
    """An earlier ``task_overview``: its task lines, and the user's later lines (the heading
    and what follows it)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and ln not in _NOTHING]
    if _HEADING in lines:
        at = lines.index(_HEADING)
        return lines[:at], lines[at:]
    return lines, []


def _first_message(request: SummaryRequest) -> list[str]:
    first = next(
        (m for m in request.messages if isinstance(m, UserMessage) and not m.tool_results), None
    )
    if first is None:
        return []
    text = "\n".join(b.text for b in first.content if isinstance(b, TextBlock))
    return [ln for ln in TAGS.sub(" ", text).splitlines() if ln.strip()]


def _cut_task(lines: list[str], count: Count, room: int) -> str:
    """The task's lines within ``room`` tokens, cut at a line end, the cut said: how many
    lines are left out (with those an earlier cut left out)."""
    left = 0
    whole: list[str] = []
    for line in lines:
        note = _CUT_NOTE.match(line.strip())
        if note:
            left += int(note.group(1))
        elif line.strip():
            whole.append(line)
    kept: list[str] = []
    used = 12  # the note's room
    for line in whole:
        used += count(line) + 1
        if used > room:
            break
        kept.append(line)
    left += len(whole) - len(kept)
    if left:
        kept.append(f"[the task continues for {left} more lines]")
    return "\n".join(kept)


def _units(request: SummaryRequest, span: Span, count: Count, budget: int) -> list[_Unit]:
    """The summary's candidate lines, field by field, in the order they are written (``order``)
    and with the rank that decides what gives way to the budget (`_fit`)."""
    previous = request.previous_summary
    old = previous.fields if previous is not None else {}
    units = _task_units(request, span, old, count, budget)
    _state_units(units, span, old)
    # important_discoveries: each failed command, fixed or not; what an earlier summary said
    # of a command this span ran again is superseded.
    said = {u.text for u in units}
    earlier = [ln for ln in old.get("important_discoveries", "").splitlines() if _kept(ln, said)]
    carried, found = discoveries(span.runs, earlier)
    units[0:0] = [_Unit("important_discoveries", text, rank) for text, rank in carried]
    units.extend(_Unit("important_discoveries", text, rank) for text, rank in found)
    _next_step_units(units, span, old)
    _context_units(units, span, old)
    for order, unit in enumerate(units):
        unit.order = order
    return units


def _state_units(units: list[_Unit], span: Span, old: dict[str, str]) -> None:
    """``current_state``: files changed (what differs), the plan, the last action; then the
    earlier summary's lines this span did not supersede."""
    # A file an earlier summary said was changed, changed again here, is one line: its latest
    # changes, the count of the rest.
    carried_edits = _carried_edits(old.get("current_state", ""))
    for path, changes in span.edits.items():
        older = len(changes) - 2 + carried_edits.get(path, 0)
        more = f" (+{older} earlier edits)" if older > 0 else ""
        units.append(_Unit("current_state", f"Changed {path}: {'; '.join(changes[-2:])}{more}", 1))
    for line in span.todos:
        units.append(_Unit("current_state", f"Plan {line}", 1))
    if span.last_action:
        units.append(_Unit("current_state", f"Last action: {span.last_action}", 1))
    # A span with no action of its own (the last piece of a span summarized in pieces can be
    # a turn of results alone) keeps the earlier summary's last action and next steps.
    acted = bool(span.last_action)
    edited = {f"Changed {path}: " for path in span.edits}
    _carry(
        units,
        old,
        "current_state",
        5,
        keep=lambda ln: _carried_state(ln, acted) and not ln.startswith(tuple(edited)),
    )


def _next_step_units(units: list[_Unit], span: Span, old: dict[str, str]) -> None:
    """``next_steps``: a failing last run first, the agent's last stated intent (never its
    self-assessment standing for a step, `_next_steps.py`), then open todo items; failing
    those, what follows the last action, the earlier summary's steps, or the task's start."""
    for sentence in next_steps(span):
        units.append(_Unit("next_steps", sentence, 2))
    units.extend(
        _Unit("next_steps", f"Open: {t}", 2) for t in span.todos if not t.startswith("[completed]")
    )
    if not any(u.field == "next_steps" for u in units):
        if span.last_action:
            units.append(_Unit("next_steps", f"Continue after: {span.last_action}", 2))
        else:
            _carry(units, old, "next_steps", 2)
    if not any(u.field == "next_steps" for u in units) and not span.runs and not span.edits:
        units.append(_Unit("next_steps", _NOT_STARTED, 2))


def _context_units(units: list[_Unit], span: Span, old: dict[str, str]) -> None:
    """``context_to_preserve``: commands with outcomes (recent first), files read, values
    written (those the summary does not already write), the earlier summary's lines."""
    for index, run in enumerate(span.runs):
        recent = len(span.runs) - index
        rank = 8 if len(run.command) > _LONG_COMMAND else 4 + min(recent // 15, 2)
        units.append(_Unit("context_to_preserve", f"$ {run.command}  → {run.outcome}", rank))
    _carry(units, old, "context_to_preserve", 7, keep=lambda ln: ln.startswith("$ "))
    texts = [u.text for u in units]
    written = " ".join(texts)
    reads = [p for p in dict.fromkeys(span.reads) if p not in written]
    if reads:
        units.append(_Unit("context_to_preserve", "Files read: " + ", ".join(reads), 6))
    written += " " + " ".join(reads)
    # Already written as a word of its own (inside a longer name it is not written).
    values = unwritten(span.values, written, parts=[*texts, *reads])
    if values:
        # In lines of a few: what does not fit goes a line at a time, the oldest first.
        for start in range(0, len(values), _VALUES_PER_LINE):
            chunk = ", ".join(values[start : start + _VALUES_PER_LINE])
            units.append(_Unit("context_to_preserve", f"Values and names: {chunk}", 5))
    _carry(units, old, "context_to_preserve", 9, keep=lambda ln: not ln.startswith("$ "))


def _kept(line: str, said: set[str]) -> bool:
    # An earlier summary's line worth carrying: not blank, not a placeholder, not said again.
    return bool(line.strip()) and line not in _NOTHING and line not in said


_EARLIER_EDITS = re.compile(r" \(\+(\d+) earlier edits\)$")


def _carried_edits(state: str) -> dict[str, int]:
    """How many edits each file's "Changed" line of an earlier ``current_state`` stands for:
    the changes it shows (``; ``-separated, outside backticks) and the earlier ones it counts."""
    counts: dict[str, int] = {}
    for line in state.splitlines():
        if not line.startswith("Changed ") or ": " not in line:
            continue
        path, changes = line[len("Changed ") :].split(": ", 1)
        tally = _EARLIER_EDITS.search(changes)
        shown, ticks = 1, 0
        for part in changes.split("; ")[:-1]:
            ticks += part.count("`")
            shown += ticks % 2 == 0  # a "; " inside a quoted side separates nothing
        counts[path] = counts.get(path, 0) + shown + (int(tally.group(1)) if tally else 0)
    return counts


def _carried_state(line: str, acted: bool) -> bool:
    return line.startswith("Changed ") or (not acted and line.startswith("Last action: "))


def _carry(
    units: list[_Unit],
    old: dict[str, str],
    name: str,
    rank: int,
    keep: Callable[[str], bool] = lambda _: True,
) -> None:
    """An earlier summary's lines of ``name``, behind this span's, unless already said."""
    said = {u.text for u in units}
    lines = old.get(name, "").splitlines()
    carried = [ln for ln in lines if _kept(ln, said) and keep(ln)]
    units[0:0] = [_Unit(name, ln, rank) for ln in carried if ln not in said]


def _fit(units: list[_Unit], budget: int, count: Count) -> list[_Unit]:
    """The units that fit ``budget``: taken by rank, the most recent first within a rank;
    a unit too large for what is left is skipped (smaller ones may still fit)."""
    chosen: list[_Unit] = []
    used = 0
    # By rank, the most recent first: ``units`` are in their order (`_units` numbers them by
    # position), so a stable sort of them reversed, on the rank alone, is that order — a third
    # of the time of a key tuple built per unit (180 units: 270 → 85 µs, 235 summaries a move).
    for unit in sorted(reversed(units), key=_RANK):
        tokens = count(unit.text) + 1
        if used + tokens <= budget:
            chosen.append(unit)
            used += tokens
    return sorted(chosen, key=_ORDER)


_RANK = attrgetter("rank")
_ORDER = attrgetter("order")


def _attached(units: list[_Unit]) -> list[_Unit]:
    """``units`` without a failure line whose command's line the budget left out (it would
    read as another command's)."""
    kept: list[_Unit] = []
    under: str | None = None  # the command line the failure lines that follow belong to
    for unit in units:
        if unit.field == "important_discoveries":
            if unit.text.startswith(DETAIL):
                if under is None:
                    continue
            else:
                under = unit.text if unit.text.endswith(OTHERS_BELOW) else None
        kept.append(unit)
    return kept


async def extractive_summarizer(request: SummaryRequest) -> dict[str, str]:
    """A deterministic handover summary within the request's budget (see the module's
    documentation for what each field holds and what goes first when space is short)."""
    instance_of(request, SummaryRequest, "request", "a SummaryRequest (what compaction passes)")
    count = request.count or (lambda text: len(text) // 4 + 1)
    budget = request.budget_tokens or _DEFAULT_BUDGET
    span = read_span(request.messages)
    units = _attached(_fit(_units(request, span, count, budget), budget - _TEMPLATE_TOKENS, count))
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
