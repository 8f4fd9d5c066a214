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
- ``edits``: the files among them that were edited or created (the file changed);
- ``commands``: every whole shell command, whitespace collapsed — never a prefix; an editor's
  sub-command (``view``, ``create``, ``str_replace``… beside a ``path``) is an action on a file,
  not a command;
- ``outcomes``: for the last run of each command, the failing test names and the error lines of
  its output (the exit status is not counted: a summary writes it in its own words);
- ``numbers``: numbers (two digits or more, versions, decimals) and code identifiers
  (``snake_case``, ``CamelCase``, ``dotted.names``) the agent wrote — in its text and its
  commands, not in file contents it wrote;
- ``output_only``: paths and numbers found only in tool output (reported, not a target: an
  output can be read again).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ToolUseBlock,
    UserMessage,
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
FileAction = Literal["read", "edited", "created", "run"]

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
_PATH_KEYS = ("path", "file_path", "filename", "file", "notebook_path", "file_name", "dir")
_SHELL_KEYS = ("command", "cmd", "script")
_EDITOR_SUBCOMMANDS = {
    "view": "read",
    "create": "created",
    "str_replace": "edited",
    "insert": "edited",
    "undo_edit": "edited",
    "edit": "edited",
}
_TOOL_ACTIONS: dict[str, FileAction] = {
    "read": "read",
    "view": "read",
    "open": "read",
    "cat": "read",
    "grep": "read",
    "glob": "read",
    "ls": "read",
    "edit": "edited",
    "multiedit": "edited",
    "str_replace": "edited",
    "insert": "edited",
    "apply_patch": "edited",
    "write": "created",
    "create": "created",
    "notebookedit": "edited",
}
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
_SHELL_PATH = re.compile(
    r"(?<![\w/.~$-])(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*\w(?:\.\w{1,8})?"
    r"|(?<![\w/.$-])[\w-]+\.(?:py|pyi|js|ts|tsx|jsx|md|rst|txt|json|toml|ya?ml|cfg|ini|rs|go|"
    r"java|c|h|cc|cpp|hpp|sh|sql|html|css|xml|csv|ipynb|lock)\b"
)
# The look-behind every branch starts with, written once before the branches: tried once a
# position, not once a branch (1.6-1.7x faster on the corpus, the same matches:
# tests/retention/test_value_patterns.py).
_NUMBER = re.compile(r"(?<![\w.])(?:v?\d+(?:\.\d+)+(?![\w.]*\w)|\d{2,}(?![\w.]*\w))")
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
_REDIRECT = re.compile(r"(?:>>?|\btee(?:\s+-a)?)\s*['\"]?([^\s'\";|&]+)")
_EDITS = re.compile(r"\bperl\s++-p?i|\bpatch\b|\bgit\s++apply\b")
_SED = re.compile(r"\bsed\s++")
_SED_OPTION = re.compile(r"-\w++\s++")
_RUNS = re.compile(r"(?:^|&&|;|\|\|)\s*(?:python3?|pytest|bash|sh|node|ruby|go run|cargo run)\b")


def _edits_in_place(command: str) -> bool:
    """Whether a shell command edits files in place: ``sed`` with ``-i`` among its leading
    options (``sed -n -i s/a/b/ f``), ``perl -pi``, ``patch``, ``git apply``. sed's options
    are read once each: a command that repeats ``sed -x`` is not read again from every ``sed``
    (the pattern ``sed\\s+(?:-\\w+\\s+)*-i`` took the square of its length)."""
    if _EDITS.search(command):
        return True
    position = 0
    while (sed := _SED.search(command, position)) is not None:
        at = sed.end()
        while not command.startswith("-i", at):
            option = _SED_OPTION.match(command, at)
            if option is None:
                break
            at = option.end()
        else:
            return True
        # A later "sed" among these options reads the same options to the same end: skipped.
        position = max(at, sed.start() + 1)
    return False


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
        if value.strip() in _EDITOR_SUBCOMMANDS and _path_argument(block) is not None:
            return None  # an editor's sub-command: an action on a file
        return value
    return None


def _path_argument(block: ToolUseBlock) -> str | None:
    for key in _PATH_KEYS:
        value = block.input.get(key)
        if isinstance(value, str) and value.strip() and "\n" not in value:
            return value.strip()
    return None


def _tool_action(block: ToolUseBlock) -> FileAction:
    sub = block.input.get("command")
    if isinstance(sub, str) and sub.strip() in _EDITOR_SUBCOMMANDS:
        action: str = _EDITOR_SUBCOMMANDS[sub.strip()]
        return action  # type: ignore[return-value]
    return _TOOL_ACTIONS.get(block.name.lower().replace("_file", ""), "read")


def _is_file(path: str) -> bool:
    # A shell word is taken for a file when it has an extension or is rooted (``/``, ``./``,
    # ``~/``); a sed expression (``s/old/new/``) and a bare directory are not files.
    if re.match(r"^[sy]/", path):
        return False
    return bool(re.search(r"\.\w{1,8}$", path)) or path.startswith(("/", "./", "../", "~/"))


def _command_files(command: str) -> list[tuple[str, FileAction]]:
    written = {m.group(1) for m in _REDIRECT.finditer(command)}
    in_place = _edits_in_place(command)
    runs = bool(_RUNS.search(command))
    found: list[tuple[str, FileAction]] = []
    for path in _SHELL_PATH.findall(command):
        if not _is_file(path) or path.startswith("/dev/"):
            continue
        if path in written:
            action: FileAction = "created" if "<<" in command else "edited"
        elif in_place:
            action = "edited"
        elif runs:
            action = "run"
        else:
            action = "read"
        found.append((path, action))
    return found


_memo: Memo[tuple[str, str], tuple[str, ...]] = Memo(50_000)
_files: Memo[str, tuple[tuple[str, FileAction], ...]] = Memo(20_000)  # by command, as `_memo`


def _memoized(kind: str, text: str, find: Callable[[str], list[str]]) -> tuple[str, ...]:
    # A replay under ten configs measures the same messages again and again: the regex scans
    # of a text are kept (bounded), keyed by the text itself.
    return _memo.get((kind, text), lambda: tuple(find(text)))


def _words_of(text: str) -> tuple[str, ...]:
    return _memoized("words", text, _SPLIT.split)


def _output_values(text: str) -> tuple[str, ...]:
    return _memoized("output", text, lambda t: [*_SHELL_PATH.findall(t), *_NUMBER.findall(t)])


def _agent_values(text: str) -> tuple[str, ...]:
    return _memoized("agent", text, _scan_agent_values)


def _scan_agent_values(text: str) -> list[str]:
    names = [i for i in _IDENTIFIER.findall(text) if len(i) >= 4 and not _FILE_NAME.search(i)]
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
        for found, action in _files.get(command, lambda: tuple(_command_files(command))):
            actions[found] = _stronger(actions.get(found), action)
    argument = _path_argument(block)
    if argument is not None:
        actions[argument] = _stronger(actions.get(argument), _tool_action(block))
    for value in _reasoning_strings(block.input):
        if value is not command:
            agent_text.append(value)
            out["numbers"].extend(_agent_values(value))


_STRENGTH = {"read": 0, "run": 1, "edited": 2, "created": 3}


def _stronger(old: FileAction | None, new: FileAction) -> FileAction:
    # A file read then edited was edited; created then edited stays created.
    return new if old is None or _STRENGTH[new] >= _STRENGTH[old] else old
