"""The files a span's tool calls name, and what was done to each: a path argument (``path``,
``file_path``, …) or a file named in a shell command, with its action — ``read``, ``edited``,
``created`` or ``run`` — and the repository root, which is no item (any summary naming a file
under it would "keep" it). The measuring side's own reading (`_extract.py` uses it); no
summarizer calls it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from ctxlab.messages import ToolUseBlock
from ctxlab.util._memo import Memo

__all__ = [
    "EDITOR_SUBCOMMANDS",
    "SHELL_PATH",
    "FileAction",
    "command_files",
    "path_argument",
    "roots",
    "stronger",
    "tool_action",
]

FileAction = Literal["read", "edited", "created", "run"]

EDITOR_SUBCOMMANDS: dict[str, FileAction] = {
    "view": "read",
    "create": "created",
    "str_replace": "edited",
    "insert": "edited",
    "undo_edit": "edited",
    "edit": "edited",
}
"""An editor tool's sub-commands (beside a ``path``), each with its action on the file."""
SHELL_PATH = re.compile(
    r"(?<![\w/.~$-])(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*\w(?:\.\w{1,8})?"
    r"|(?<![\w/.$-])[\w-]+\.(?:py|pyi|js|ts|tsx|jsx|md|rst|txt|json|toml|ya?ml|cfg|ini|rs|go|"
    r"java|c|h|cc|cpp|hpp|sh|sql|html|css|xml|csv|ipynb|lock)\b"
)
"""A path in a shell command or an output: with a directory part, or a file name with an
extension."""

_PATH_KEYS = ("path", "file_path", "filename", "file", "notebook_path", "file_name", "dir")
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
_CD = re.compile(r"(?:^|[;&|(]\s*)cd\s+(['\"]?)([^\s'\";&|]+)\1")
_REDIRECT = re.compile(r"(?:>>?|\btee(?:\s+-a)?)\s*['\"]?([^\s'\";|&]+)")
_EDITS = re.compile(r"\bperl\s++-p?i|\bpatch\b|\bgit\s++apply\b")
_SED = re.compile(r"\bsed\s++")
_SED_OPTION = re.compile(r"-\w++\s++")
_RUNS = re.compile(r"(?:^|&&|;|\|\|)\s*(?:python3?|pytest|bash|sh|node|ruby|go run|cargo run)\b")
_STRENGTH = {"read": 0, "run": 1, "edited": 2, "created": 3}


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


def path_argument(block: ToolUseBlock) -> str | None:
    """The path a tool call was given as an argument (``path``, ``file_path``, …), if any."""
    for key in _PATH_KEYS:
        value = block.input.get(key)
        if isinstance(value, str) and value.strip() and "\n" not in value:
            return value.strip()
    return None


def tool_action(block: ToolUseBlock) -> FileAction:
    """What a tool call did to the file of its path argument."""
    sub = block.input.get("command")
    if isinstance(sub, str) and sub.strip() in EDITOR_SUBCOMMANDS:
        return EDITOR_SUBCOMMANDS[sub.strip()]
    return _TOOL_ACTIONS.get(block.name.lower().replace("_file", ""), "read")


def _is_file(path: str) -> bool:
    # A shell word is taken for a file when it has an extension or is rooted (``/``, ``./``,
    # ``~/``); a sed expression (``s/old/new/``) and a bare directory are not files.
    if re.match(r"^[sy]/", path):
        return False
    return bool(re.search(r"\.\w{1,8}$", path)) or path.startswith(("/", "./", "../", "~/"))


def _command_files(command: str) -> tuple[tuple[str, FileAction], ...]:
    written = {m.group(1) for m in _REDIRECT.finditer(command)}
    in_place = _edits_in_place(command)
    runs = bool(_RUNS.search(command))
    found: list[tuple[str, FileAction]] = []
    for path in SHELL_PATH.findall(command):
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
    return tuple(found)


_files: Memo[str, tuple[tuple[str, FileAction], ...]] = Memo(20_000)


def command_files(command: str) -> tuple[tuple[str, FileAction], ...]:
    """The files a shell command names, each with its action; kept per command (a replay
    under several configs reads the same commands again)."""
    return _files.get(command, lambda: _command_files(command))


def roots(paths: Sequence[str], commands: Sequence[str]) -> list[str]:
    """The paths of ``paths`` that are the repository root, or a directory above it: ``.``, a
    ``cd`` target of ``commands``, or a directory that at least half of the other paths sit
    under — whatever its name ends with (SWE-agent's ``/pytest-dev__pytest__5.4`` ends in a
    version, not an extension: what sits under it says it is a folder)."""
    cds = {m.group(2).rstrip("/") for c in commands if "cd" in c for m in _CD.finditer(c)}
    found: list[str] = []
    for path in paths:
        base = path.rstrip("/")
        if base in ("", ".", "~"):
            found.append(path)
            continue
        under = sum(1 for p in paths if p.startswith(base + "/"))
        if base in cds or (under and 2 * under >= len(paths) - 1):
            found.append(path)
    return found


def stronger(old: FileAction | None, new: FileAction) -> FileAction:
    """The action that describes a file best: read then edited was edited; created then
    edited stays created."""
    return new if old is None or _STRENGTH[new] >= _STRENGTH[old] else old
