"""What a stretch of conversation holds that an agent must not lose, read from the original
messages (before truncation, offload or masking), by category.

This module is the measuring side of compaction: no summarizer calls it, and it calls nothing
of theirs, so that a summary cannot score by writing what the metric happens to count. What is
and is not counted (also in the docs' compaction page):

- ``task``: the lines of the first user message (a line with three letters or more; hints and
  ``<system-reminder>`` sections left out);
- ``instructions``: every later line a user wrote (user text after the first message; tool
  results, hints, harness tags such as ``<command-name>`` and a harness's recorded compaction
  summary — Claude Code's "This session is being continued…" — are not instructions);
- ``files``: every path passed to a tool — a path argument (``path``, ``file_path``, ...) or a
  path inside a shell command — with its action: ``read``, ``edited``, ``created`` or ``run``;
  not the repository root (a directory most of the span's other paths sit under, a ``cd``
  target, ``.``): any summary naming a file under it would "keep" it;
- ``edits``: the files among them that were edited or created (the file changed);
- ``commands``: every whole shell command, whitespace collapsed — never a prefix; an editor's
  sub-command (``view``, ``create``, ``str_replace``… beside a ``path``) is an action on a file,
  not a command;
- ``outcomes``: for the last run of each command, the failing test names and the error lines of
  its output (the exit status is not counted: a summary writes it in its own words);
- ``numbers``: numbers (two digits or more, versions, decimals) and code identifiers
  (``snake_case``, ``CamelCase``, ``dotted.names``) the agent wrote — in its text and its
  commands, not in file contents it wrote, and not an editor's vocabulary (``str_replace``,
  ``undo_edit``, ``str_replace_editor``: every summary of such a session names them);
- ``output_only``: paths and numbers found only in tool output (reported, not a target: an
  output can be read again).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.retention._paths import (
    EDITOR_SUBCOMMANDS,
    SHELL_PATH,
    FileAction,
    command_files,
    path_argument,
    roots,
    stronger,
    tool_action,
)
from ctxlab.retention._users import UserLines
from ctxlab.util._lines import lines_holding
from ctxlab.util._memo import Memo
from ctxlab.util._views import Later

__all__ = [
    "CATEGORIES",
    "TARGETS",
    "FileAction",
    "Inventory",
    "collapse",
    "inventory",
]

Message = UserMessage | AssistantMessage

CATEGORIES = (
    "task",
    "instructions",
    "files",
    "edits",
    "commands",
    "outcomes",
    "numbers",
    "output_only",
)
"""Every category retention reports, in order."""

TARGETS = ("task", "instructions", "files", "commands", "outcomes", "numbers")
"""The categories the headline figure averages (``edits`` is a part of ``files``;
``output_only`` is reported, not a target)."""

_SPLIT = re.compile(r"[\s:=,;()\[\]{}<>\"'`|]+")
_SHELL_KEYS = ("command", "cmd", "script")
# The editor tools' own words: a sub-command or a tool name is not a value the agent chose.
_EDITOR_WORDS = frozenset(
    {*EDITOR_SUBCOMMANDS, "str_replace_editor", "str_replace_based_edit_tool", "edit_file"}
)
# File contents an agent writes are edits, not values it "wrote" in its reasoning.
_PAYLOAD_KEYS = {
    "content",
    "new_str",
    "old_str",
    "new_string",
    "old_string",
    "file_text",
    "text",
    "edits",
    "replace",
    "search",
    "patch",
}
# The look-behind every branch starts with, written once before the branches: tried once a
# position, not once a branch (1.6-1.7x faster on the corpus, the same matches:
# tests/retention/test_value_patterns.py). A number ends where its run of word characters and
# dots holds no more word character — the dots that follow it, then anything but a word
# character: `(?!\.*+\w)`, which reads as far as `(?![\w.]*\w)` decides. Its digits are taken
# possessively: a digit given back is followed by a digit, which the look-ahead refuses anyway,
# and giving them back one by one, each time reading the rest of the run again, took the square
# of the run's length (issue 51: '1' * k + 'x').
_NUMBER = re.compile(r"(?<![\w.])(?:v?\d++(?:\.\d++)++|\d{2,}+)(?!\.*+\w)")
_IDENTIFIER = re.compile(
    r"(?<![\w.])(?:"
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?!\w)"
    r"|_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?!\w)"
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+(?!\w)"
    r")"
)
_FAILED_TEST = re.compile(
    r"^(?:FAILED|ERROR)\s+(\S+::\S+)|^(test\w*) \([\w.]+\) \.\.\. (?:FAIL|ERROR)", re.MULTILINE
)
# The white space before an error: after pytest's "E", all of it (each run belongs to one "E"
# line); else at most one line break (as `\s*` did across the blank lines `lines_holding` keeps)
# — a run of blank lines is not scanned again from each of its lines. What a match holds
# besides is white space, which `collapse` removes.
_ERROR_LINE = re.compile(
    r"^(?:E\s++|(?:[^\S\n]*+\n)?[^\S\n]*+)"
    r"(?:[\w.]*(?:Error|Exception)\b(?::.*)?|(?:FAILED|FAIL|ERROR)\b.*|.*\b[Ee]rror: .*"
    r"|fatal: .*)$",
    re.MULTILINE,
)
_ERROR_WORDS = ("Error", "Exception", "FAIL", "ERROR", "rror: ", "fatal: ")  # one per match
_FILE_NAME = re.compile(r"\.(?:py|pyi|js|ts|md|rst|txt|json|toml|ya?ml|cfg|ini|sh|html|css|c|h)$")
_RULER = re.compile(r"^[\W_]+$")
_OUTPUT_SCAN = 60_000
_MAX_OUTCOMES = 8


def collapse(text: str) -> str:
    """``text`` with every run of white space made one space (how items are matched)."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Inventory:
    """A span's items by category, each in order of first appearance (see the module)."""

    items: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    actions: Mapping[str, FileAction] = field(default_factory=dict)
    """The last action on each file of ``files``."""

    def of(self, category: str) -> tuple[str, ...]:
        """The items of one category (one of `CATEGORIES`)."""
        return self.items.get(category, ())

    @property
    def count(self) -> int:
        """How many target items in all."""
        return sum(len(self.of(c)) for c in TARGETS)


def _shell_command(block: ToolUseBlock) -> str | None:
    for key in _SHELL_KEYS:
        value = block.input.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = " ".join(value)
        if not isinstance(value, str) or not value.strip():
            continue
        if value.strip() in EDITOR_SUBCOMMANDS and path_argument(block) is not None:
            return None  # an editor's sub-command: an action on a file
        return value
    return None


_memo: Memo[tuple[str, str], tuple[str, ...]] = Memo(50_000)


def _memoized(kind: str, text: str, find: Callable[[str], list[str]]) -> tuple[str, ...]:
    # A replay under ten configs measures the same messages again and again: the regex scans
    # of a text are kept (bounded), keyed by the text itself.
    return _memo.get((kind, text), lambda: tuple(find(text)))


def _words_of(text: str) -> tuple[str, ...]:
    return _memoized("words", text, _SPLIT.split)


def _output_values(text: str) -> tuple[str, ...]:
    return _memoized("output", text, lambda t: [*SHELL_PATH.findall(t), *_NUMBER.findall(t)])


def _agent_values(text: str) -> tuple[str, ...]:
    return _memoized("agent", text, _scan_agent_values)


def _scan_agent_values(text: str) -> list[str]:
    names = [
        i
        for i in _IDENTIFIER.findall(text)
        if len(i) >= 4 and not _FILE_NAME.search(i) and i not in _EDITOR_WORDS
    ]
    return _NUMBER.findall(text) + names


def _reasoning_strings(value: Any, key: str = "") -> Iterable[str]:
    if key in _PAYLOAD_KEYS:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _reasoning_strings(v, str(k))
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _reasoning_strings(v, key)


def _outcomes(output: str) -> tuple[str, ...]:
    return _memoized("outcomes", output, _scan_outcomes)


def _scan_outcomes(output: str) -> list[str]:
    text = output[:_OUTPUT_SCAN]
    found = [a or b for a, b in _FAILED_TEST.findall(text)]
    for line in _ERROR_LINE.findall(lines_holding(text, _ERROR_WORDS, lead=("E",))):
        line = re.sub(r"^E\s+", "", collapse(line))
        if line and not _RULER.match(line) and len(line) <= 400:
            found.append(line)
    return list(dict.fromkeys(found))[-_MAX_OUTCOMES:]


def inventory(
    messages: Sequence[Message],
    *,
    users: Sequence[Message] | None = None,
    reader: UserLines | None = None,
) -> Inventory:
    """The items of ``messages`` (the original span) by category.

    ``users``: the messages whose user lines count as ``task`` and ``instructions`` (default
    ``messages``); a compaction's measure passes every message before the kept tail, so the
    user's words are targets at every compaction, not only the one that first compacted them.
    ``reader``: a `UserLines` kept across calls whose ``users`` grow (it reads each once).
    """
    out: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    actions: dict[str, FileAction] = {}
    users = users if users is not None else messages
    task, instructions = (reader or UserLines()).upto(users, len(users))
    out["task"].extend(task)
    out["instructions"].extend(instructions)
    last_run: dict[str, str] = {}
    pending: dict[str, str] = {}
    agent_text: list[str] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextBlock):
                    agent_text.append(block.text)
                    out["numbers"].extend(_agent_values(block.text))
                elif isinstance(block, ToolUseBlock):
                    _tool_use(block, out, actions, pending, agent_text)
        else:
            for result in message.tool_results:
                command = pending.pop(result.tool_use_id, None)
                if command is not None:
                    last_run[command] = result.text
    for output in last_run.values():
        out["outcomes"].extend(_outcomes(output))
    for root in roots(list(actions), out["commands"]):
        del actions[root]
    out["files"] = list(actions)
    out["edits"] = [p for p, a in actions.items() if a in ("edited", "created")]
    out.pop("output_only")
    items = {c: tuple(dict.fromkeys(v)) for c, v in out.items()}
    items["instructions"] = tuple(i for i in items["instructions"] if i not in items["task"])
    said = (*agent_text, *items["task"], *items["instructions"])
    return Inventory(Later(items, "output_only", lambda: _output_only(messages, said)), actions)


def _output_only(messages: Sequence[Message], said: Iterable[str]) -> tuple[str, ...]:
    # Whole words of what the agent and the user wrote (paths and numbers are words).
    words = {w for t in said for w in _words_of(t)}
    found = (
        value
        for message in messages
        if isinstance(message, UserMessage)
        for result in message.tool_results
        for value in _output_values(result.text[:_OUTPUT_SCAN])
        if value not in words
    )
    return tuple(dict.fromkeys(found))


def _tool_use(
    block: ToolUseBlock,
    out: dict[str, list[str]],
    actions: dict[str, FileAction],
    pending: dict[str, str],
    agent_text: list[str],
) -> None:
    command = _shell_command(block)
    if command is not None:
        whole = collapse(command)
        out["commands"].append(whole)
        pending[block.id] = whole
        agent_text.append(command)
        out["numbers"].extend(_agent_values(command))
        for found, action in command_files(command):
            actions[found] = stronger(actions.get(found), action)
    argument = path_argument(block)
    if argument is not None:
        actions[argument] = stronger(actions.get(argument), tool_action(block))
    for value in _reasoning_strings(block.input):
        if value is not command:
            agent_text.append(value)
            out["numbers"].extend(_agent_values(value))
