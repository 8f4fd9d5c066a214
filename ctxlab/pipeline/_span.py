"""What a span of conversation did, read once for the offline summarizer (`_handover.py`):
the user's lines, the files read and edited (what each edit changed: `_changes.py`), the
commands run with their outcomes and whether each run failed, the plan, the values the agent
wrote, its last words and action.

The rules are this module's own: it shares no code with `ctxlab.retention`, which grades the
summaries written from it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.pipeline._changes import edit_change, shell_changes
from ctxlab.pipeline._handover_warnings import warning_lines
from ctxlab.pipeline._results import TRUNCATION_MARKER
from ctxlab.pipeline._span_text import _values, files_named, flat, short, short_flat
from ctxlab.util._lines import lines_holding
from ctxlab.util._memo import Memo
from ctxlab.util._tags import PairedTags

__all__ = ["TAGS", "Run", "Span", "flat", "read_span", "short"]

Message = UserMessage | AssistantMessage

_SHELL = ("command", "cmd", "script")
_EDITOR = {"view", "create", "str_replace", "insert", "undo_edit"}
_FILE_ARGS = ("file_path", "path", "filename", "notebook_path", "file")
_READERS = {"read", "view", "open", "glob", "grep", "ls", "notebookread"}
_WRITERS = {"write", "create", "write_file", "create_file"}
_EDITORS = {
    "edit",
    "edit_file",
    "multiedit",
    "str_replace",
    "notebookedit",
    "apply_patch",
    "insert",
    "replace_in_file",
}
# What an edit writes is the file's content, not a value the agent reasoned with.
_CONTENT_ARGS = {
    "content",
    "old_string",
    "new_string",
    "old_str",
    "new_str",
    "old",
    "new",
    "file_text",
}
_TODO_TOOLS = {"todowrite", "todo_write", "update_plan", "write_todos"}
_CHANGERS = _EDITORS | _WRITERS  # tools that change the file they name (made once, not per call)
_EDITOR_CHANGES = _EDITOR - {"view"}  # an editor's sub-commands that change the file
TAGS = PairedTags(
    re.compile(r"<(system-reminder|(?:local-)?command-\w++)>"),
    re.compile(r"</(system-reminder|(?:local-)?command-\w++)>"),
)
"""A harness's tags in a user message (reminders, slash commands and their output)."""
_EXIT = re.compile(r"<returncode>(-?\d+)</returncode>|\b[Ee]xit (?:code|status):? ?(-?\d+)")
# A test run's tally line: pytest's "=== 3 passed, 1 failed in 0.2s ===" (bare under ``-q``:
# "3 passed in 0.2s"), unittest's "OK", "FAILED (failures=1)" and "Ran 4 tests in 0.1s"
# (`_tallies`).
_TALLY_RULE = re.compile(r"(?<!=)=++ ")
_TALLY_WORD = re.compile(r"\b(?:passed|failed|error|errors|skipped)\b")
_TALLY_LINE = re.compile(
    r"^(?:(FAILED \(.*\)|OK(?: \(.*\))?)|(Ran \d+ tests? in .*)"
    r"|(\d++ (?:passed|failed|errors?|skipped)\b[\w ,]* in [\d.]++s))$"
)
# A failure line, bare or behind pytest's ``E`` or ``INTERNALERROR>`` gutter. The white space
# before it: after the gutter, all of it (each run belongs to one gutter line); else at most one
# line break (as `\s*` did across the blank lines before it, which `lines_holding` keeps) — a
# run of blank lines is not scanned again from each of its lines.
_FAILURE = re.compile(
    r"^(?:E ++\s*+|INTERNALERROR> *+\s*+|(?:[^\S\n]*+\n)?[^\S\n]*+)"
    r"((?:[\w.]+(?:Error|Exception)\b(?::.*)?)"
    r"|(?:FAILED|FAIL|ERROR):? \S.*|.*\b[Ee]rror: .*|fatal: .*|.*: command not found)$",
    re.MULTILINE,
)
# A tally that reports a failure (``2 failed``, ``10 errors``, SymPy's ``2 exceptions``; not
# ``0 failed`` nor ``2 expected to fail``), or unittest's ``FAILED (failures=1)``.
_FAILING_TALLY = re.compile(r"\b[1-9]\d* (?:failed|errors?|exceptions?)\b|^FAILED\b")
_TAG = re.compile(r"</?[A-Za-z][\w-]*>")  # a wrapper tag around a line (``<tool_use_error>``)
_TAG_LINE = re.compile(r"^\s*(?:</?\w+>|<returncode>-?\d+</returncode>)\s*$")
_RULER = " \t=-_*#"  # the ends of a tally's line (``=== 1 failed in 0.02s ===``)
# A line each pattern can match holds one of these (`lines_holding`: the patterns read those
# lines only, not 40,000 characters of output).
_EXIT_WORDS = ("<returncode>", "xit code", "xit status")
_TALLY_WORDS = ("passed", "failed", "error", "skipped", "FAILED (", "OK", "Ran ")
_FAILURE_WORDS = ("Error", "Exception", "FAIL", "ERROR", "rror: ", "fatal: ", "command not found")
# A harness's words for a command that did not finish or did not run (mini-SWE-agent's timeout
# template; SWE-agent's timeout and syntax-check templates), each with the outcome it means.
_NOT_DONE = (
    ("timed out and has been killed", "timed out"),
    ("was cancelled because it took more than", "timed out"),
    ("was NOT executed", "not run"),
)
_TRACEBACK = "Traceback (most recent call last)"
_RECORDED_SUMMARY = "This session is being continued from a previous conversation"


@dataclass(frozen=True, slots=True)
class Run:
    """One run of a command and what came of it."""

    command: str
    """The command, white space collapsed."""
    outcome: str
    """Its exit status, test tally and last failure line, in a few words (``"no result yet"``
    when the span ends before its result)."""
    status: str = ""
    """Its exit status and test tally alone (the outcome without the failure line)."""
    failures: tuple[str, ...] = ()
    """Every distinct failure line of its output (error lines, ``FAILED`` tests), in order."""
    failed: bool = False
    """Did not pass: exited non-zero, was reported as an error, or printed a failure line or a
    failing tally (whatever its exit status)."""
    telling: str = ""
    """For a run that failed without a failure line, the line that says most, labelled: its
    output's ``last line: …``, or — the pipeline cut the output, so its end is not seen — its
    ``first line: …`` (a tool's verdict usually leads). Empty for any other run."""
    warnings: tuple[str, ...] = ()
    """The warning lines its output printed (`_handover_warnings.py`), in order — read for the
    span's last run with a result alone, the one run the handover says them of
    (`_next_steps._first_step`); empty for the others."""


@dataclass
class Span:
    """What the span did, read once."""

    users: list[str] = field(default_factory=list)
    first_lines: int = -1
    """How many of ``users`` are the span's first user message (-1: the span has none)."""
    edits: dict[str, list[str]] = field(default_factory=dict)
    """What each edit of a file changed (`_changes.py`), in order, by path."""
    reads: list[str] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)
    values: list[str] = field(default_factory=list)
    last_text: str = ""
    last_action: str = ""
    recorded: list[str] = field(default_factory=list)
    """The lines of a summary the recorded harness wrote (Claude Code's compaction summary)."""


_Scan = tuple[str, str, tuple[str, ...], bool, str]  # outcome, status, failures, failed, telling
_seen: Memo[tuple[str, bool], _Scan] = Memo(20_000)
_shell_edits: Memo[str, tuple[tuple[str, str], ...]] = Memo(20_000)  # by command, as `_values`


def _read_result(output: str, is_error: bool) -> _Scan:
    """A result's outcome, status, failure lines, whether the run failed and its telling line,
    kept per text (a replay under several configs summarizes the same results again)."""
    return _seen.get((output, is_error), lambda: _scan_result(output, is_error))


def _scan_result(output: str, is_error: bool) -> _Scan:
    text = output[:40_000]
    failures = _FAILURE.findall(lines_holding(text, _FAILURE_WORDS, lead=("E",)))
    code = _EXIT.search(lines_holding(text, _EXIT_WORDS))
    status = (code.group(1) or code.group(2)) if code else None
    tally = _tallies(lines_holding(text, _TALLY_WORDS))
    # A command the harness killed or never ran (its notice leads the result).
    parts = [said for words, said in _NOT_DONE if words in text[:2_000]][:1]
    unfinished = bool(parts)
    if status is not None:
        parts.append(f"exit {status}")
    elif is_error:
        parts.append("error")
    if tally:
        parts.append(flat(tally[-1]))
    traceback = _TRACEBACK in text  # (a pass over the output: made once, read twice)
    if traceback and not failures:
        # A traceback whose last line names no error (``ImproperlyConfigured: …``).
        parts.append("traceback")
    summary = "; ".join(dict.fromkeys(parts))
    if failures:
        parts.append(short(failures[-1], 160))
    outcome = "; ".join(dict.fromkeys(parts)) or ("no output" if not text.strip() else "ok")
    # A run that exits 0 but prints a failure (a script catching its exception and printing
    # it, as reproduction scripts do) has not passed either.
    failing_tally = bool(tally and _FAILING_TALLY.search(tally[-1]))
    failed = (
        is_error
        or unfinished
        or bool(failures)
        or failing_tally
        or (status is not None and int(status) != 0)
        or traceback
    )
    # The telling line is read only where the handover quotes it (`_discoveries._failure`: a
    # failed run without a failure line); reading every output's last lines for it was a
    # fifth of a result's scan (held-out corpus, i66-summ).
    telling = _telling(output) if failed and not failures else ""
    return outcome, summary, tuple(dict.fromkeys(failures)), failed, telling


def _tallies(text: str) -> list[str]:
    """The tally of each line that has one, in order: a line opening with unittest's verdict
    or count, else pytest's rule (``=== … passed … ===``: what lies between the first rule
    followed by a space and the closing one, holding one of the words). Line by line, in time
    linear in the text (the one pattern it replaces took the square of a line's length)."""
    found: list[str] = []
    for line in text.split("\n"):
        verdict = _TALLY_LINE.match(line)
        if verdict is not None:
            found.append(verdict.group(1) or verdict.group(2) or verdict.group(3))
            continue
        rest = line.rstrip("=")
        if rest == line or not rest.endswith(" "):
            continue  # no closing rule
        opening = _TALLY_RULE.search(line)
        if opening is not None and opening.end() < len(rest):
            inside = line[opening.end() : len(rest) - 1]
            if _TALLY_WORD.search(inside):
                found.append(inside)
    return found


def _telling(output: str) -> str:
    # The last line that says something (not a wrapper tag such as ``</output>``, nor a
    # harness's reminder appended to the output); of a result the pipeline cut, the first.
    if "<system-reminder>" in output:
        output = TAGS.sub(" ", output)
    if TRUNCATION_MARKER in output:
        lines = output[: output.find(TRUNCATION_MARKER)].splitlines()[:8]
        label = "first line"
    else:
        lines = output[-4_000:].splitlines()[-8:][::-1]
        label = "last line"
    for line in lines:
        if line.strip(_RULER) and not _TAG_LINE.match(line):
            return f"{label}: {short(_TAG.sub('', line).strip(_RULER), 160)}"
    return ""


def _shell(block: ToolUseBlock) -> str | None:
    for key in _SHELL:
        value = block.input.get(key)
        if isinstance(value, str) and value.strip():
            if value.strip() in _EDITOR:
                return None
            return value
    return None


def _file_arg(block: ToolUseBlock) -> str | None:
    for key in _FILE_ARGS:
        value = block.input.get(key)
        if isinstance(value, str) and value.strip() and "\n" not in value:
            return value.strip()
    return None


def _todos(block: ToolUseBlock) -> list[str]:
    items = block.input.get("todos") or block.input.get("plan") or []
    out: list[str] = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            text = item.get("content") or item.get("step") or item.get("title") or ""
            status = item.get("status", "")
            if text:
                out.append(f"[{status or 'pending'}] {short(str(text), 120)}")
    return out


def read_span(messages: Iterable[Message]) -> Span:
    span = Span()
    calls: dict[str, _CallRead] = {}
    last: ToolResultBlock | None = None  # the result of the span's last run with one
    for message in messages:
        if isinstance(message, UserMessage):
            if not message.tool_results:
                text = TAGS.sub(
                    " ", "\n".join(b.text for b in message.content if isinstance(b, TextBlock))
                )
                lines = [line for ln in text.splitlines() if len(line := flat(ln)) > 2]
                if lines and lines[0].startswith(_RECORDED_SUMMARY):
                    span.recorded.extend(lines)  # a harness's summary, not the user's words
                else:
                    span.users.extend(lines)
                    if span.first_lines < 0:
                        span.first_lines = len(lines)
            for result in message.tool_results:
                if _result(span, calls.pop(result.tool_use_id, None), result):
                    last = result
            continue
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                span.last_text = block.text
                span.values.extend(_values(block.text))
            elif isinstance(block, ToolUseBlock):
                calls[block.id] = _call(span, block)
    if last is not None:
        # Its warnings: what a run printed is read for this run alone (every result read for
        # them was 3-4 % of a cold summary on the held-out corpus, i66-summ).
        span.runs[-1] = replace(span.runs[-1], warnings=warning_lines(last.text))
    for read in calls.values():  # calls whose results are not in the span
        if read.command:
            span.runs.append(Run(read.command, "no result yet"))
    return span


@dataclass(frozen=True, slots=True)
class _CallRead:
    """What a tool call tells the span, whatever span it is in: read once per call's content
    (a what-if summarizes the same calls in spans that differ config after config)."""

    command: str
    """The command it runs, white space collapsed ("" when it runs none)."""
    action: str
    """The span's last action once this call is made."""
    ran: str = ""
    """What the span's last action reads when this command ran last (its result's outcome is
    then added to it)."""
    values: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    edits: tuple[tuple[str, str], ...] = ()
    """The files it changes, each with what changed, in order."""
    todos: tuple[str, ...] | None = None
    """The plan it writes (None: not a plan tool; empty: the plan stands as it was)."""


_calls: Memo[str, _CallRead] = Memo(20_000)


def _call(span: Span, block: ToolUseBlock) -> _CallRead:
    read = _calls.get(block.content_hash, lambda: _read_call(block))
    if read.todos is not None:
        span.todos = list(read.todos) or span.todos
    span.last_action = read.action
    span.values.extend(read.values)
    span.reads.extend(read.reads)
    for changed, what in read.edits:
        span.edits.setdefault(changed, []).append(what)
    return read


def _read_call(block: ToolUseBlock) -> _CallRead:
    name = block.name.lower()
    if name in _TODO_TOOLS:
        return _CallRead("", f"{block.name}: plan updated", todos=tuple(_todos(block)))
    raw = _shell(block)
    values: list[str] = []
    for key, value in block.input.items():
        # An editor's sub-command (``str_replace``) is the tool's vocabulary, not a value.
        if isinstance(value, str) and key not in _CONTENT_ARGS and value.strip() not in _EDITOR:
            values.extend(_values(value))
    if raw is not None:
        command = flat(raw)
        edits = _shell_edits.get(raw, lambda: tuple(shell_changes(raw)))
        reads = tuple(files_named(command))
        ran = f"$ {short_flat(command, 200)}"
        return _CallRead(command, ran, ran, tuple(values), reads, edits)
    # A command's call names no file to read it by (its path and editor sub-command are read
    # only for the others: 2,287 of the 3,355 calls of the held-out replays run a command).
    path = _file_arg(block)
    if path is not None:
        sub = str(block.input.get("command", "")).strip()
        action = f"{block.name} {path}"
        if name in _CHANGERS or sub in _EDITOR_CHANGES:
            change = edit_change(block.input, writes=name in _WRITERS)
            return _CallRead("", action, values=tuple(values), edits=((path, change),))
        return _CallRead("", action, values=tuple(values), reads=(path,))
    args = json.dumps(block.input, ensure_ascii=False, sort_keys=True)
    command = f"{block.name} {args}" if len(args) <= 400 else ""
    ran = f"$ {short(command, 200)}" if command else ""
    return _CallRead(command, f"{block.name} {short(args, 200)}", ran, tuple(values))


def _result(span: Span, call: _CallRead | None, result: ToolResultBlock) -> bool:
    """The run of ``call`` with its ``result`` added to ``span`` (without its warnings: only
    the last run's are read, by `read_span`); False when the call runs no command."""
    if call is None or not call.command:
        return False
    outcome, status, failures, failed, telling = _read_result(result.text, bool(result.is_error))
    span.runs.append(Run(call.command, outcome, status, failures, failed, telling))
    if span.last_action == call.ran:
        span.last_action += f" → {outcome}"
    return True
