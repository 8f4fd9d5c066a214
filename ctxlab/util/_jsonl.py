"""Reading a JSON Lines file with errors that name the file and the line (shared by
`load_transcript` and the importers of `ctxlab.load`).

A session's file is read whole even where a few of its lines are not JSON (`session_lines`): a
line damaged in the middle (two writes interleaved, an editor's stray keystroke, a line of a
tool's own log) is skipped and named, never the reason to lose the file. A file is refused
when more than one of its lines in ten is not JSON (`MOST_NOT_JSON`) — a file of another kind
(Markdown, CSV, a binary that decodes as UTF-8), or a session damaged beyond a few lines —
or when no two of its lines are JSON. A last line cut off part way (a session still being
written) is said as such, and counts toward neither.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError

__all__ = [
    "MOST_NOT_JSON",
    "SessionLines",
    "check_regular_file",
    "cut_off",
    "json_lines",
    "read_text",
    "session_lines",
]

MOST_NOT_JSON = 10
"""A JSON Lines session is read without its lines that are not JSON when they are at most one
in this many of its lines (or a single such line among at least two records); more, and the
file is refused as not JSON Lines."""


def check_regular_file(path: Path) -> None:
    """`MessageFormatError` unless ``path`` is a regular file that exists: checked before any
    open, because opening a FIFO waits forever for a writer (and a device never ends)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        msg = f"cannot read {path}: {exc.strerror or exc}"
        raise MessageFormatError(msg) from exc
    if stat.S_ISDIR(mode):
        msg = f"cannot read {path}: it is a folder; ctxlab.sessions(folder) lists its sessions"
        raise MessageFormatError(msg)
    if not stat.S_ISREG(mode):
        msg = (
            f"cannot read {path}: it is not a regular file (a pipe, socket or device); save the "
            "session to a file first"
        )
        raise MessageFormatError(msg)


def read_text(path: Path) -> str:
    """The file's text; `MessageFormatError` naming the line of the first byte that is not
    UTF-8, or why the file cannot be read."""
    check_regular_file(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        msg = f"cannot read {path}: {exc.strerror or exc}"
        raise MessageFormatError(msg) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = data[: exc.start].count(b"\n") + 1
        msg = f"{path} line {at}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        raise MessageFormatError(msg) from exc


def json_lines(path: Path, text: str) -> list[tuple[int, Any]]:
    """(line number, value) of every non-blank line of ``text``, read from ``path``; the first
    line that is not JSON is a `MessageFormatError` naming it."""
    lines, _ = _parsed(text)
    if lines.not_json:
        number, reason = lines.not_json[0]
        msg = f"{path} line {number}: not JSON ({reason})"
        raise MessageFormatError(msg)
    return lines.records


@dataclass(frozen=True)
class SessionLines:
    """The records of a JSON Lines session file, and the lines left out of them."""

    records: list[tuple[int, Any]]
    """(line number, value) of each line that is JSON."""
    not_json: list[tuple[int, str]]
    """(line number, why) of each line that is not JSON, skipped."""
    cut_line: int | None = None
    """The number of a last line cut off part way (still being written), left out."""

    @property
    def left_out(self) -> dict[str, int]:
        """Each line left out, named by its number, for a census's ``skipped``."""
        skipped = {f"line {number} not JSON": 1 for number, _ in self.not_json}
        if self.cut_line is not None:
            reason = f"line {self.cut_line} cut off at the end of the file (still being written?)"
            skipped[reason] = 1
        return skipped

    @property
    def left_out_read(self) -> dict[str, int]:
        """The lines left out by kind, for a census's ``read``."""
        kinds = {
            "line not JSON": len(self.not_json),
            "line cut off": int(self.cut_line is not None),
        }
        return {kind: count for kind, count in kinds.items() if count}

    def name_left_out(self, meta: dict[str, Any]) -> None:
        """Name the lines left out in a transcript's ``meta``: ``lines_not_json`` (each line's
        number and why), ``cut_line``, and each in ``skipped``."""
        if self.not_json:
            meta["lines_not_json"] = [{"line": n, "reason": why} for n, why in self.not_json]
        if self.cut_line is not None:
            meta["cut_line"] = self.cut_line
        if self.left_out:
            meta["skipped"] = {**(meta.get("skipped") or {}), **self.left_out}


def session_lines(path: Path, text: str, split: list[str] | None = None) -> SessionLines:
    """The lines of ``text`` (read from ``path``) as a JSON Lines session: its records, its
    lines that are not JSON (skipped, named) and a last line cut off part way — or a
    `MessageFormatError` naming the first line that is not JSON when too many are
    (see the module). ``split``: ``text.splitlines()``, when the caller split it already."""
    lines, last = _parsed(text, split)
    bad, cut = list(lines.not_json), None
    if bad and bad[-1][0] == last[0] and _cut_last(last[1]):
        cut = bad.pop()[0]
    if bad and not _few(len(lines.records), len(bad)):
        number, reason = bad[0]
        total = len(lines.records) + len(bad)
        msg = f"{path} line {number}: not JSON ({reason})"
        if lines.records:
            msg += (
                f"; {len(bad):,} of its {total:,} lines are not JSON — more than one in "
                f"{MOST_NOT_JSON}: not a JSON Lines session. If it is one whose lines were "
                "damaged, remove the lines that are not JSON"
            )
        elif total > 1:
            msg += f"; none of its {total:,} lines is JSON: not a JSON Lines session"
        raise MessageFormatError(msg)
    return SessionLines(lines.records, bad, cut)


def _few(records: int, bad: int) -> bool:
    # At most one line in MOST_NOT_JSON, or a single one among at least two records.
    return bad * MOST_NOT_JSON <= records + bad or (bad == 1 and records >= 2)


def _cut_last(line: str) -> bool:
    # A last line that stops part way through an object: cut off while being written.
    return line.startswith("{") and cut_off(line) is not None


def _parsed(text: str, split: list[str] | None = None) -> tuple[SessionLines, tuple[int, str]]:
    # The lines read, and the last line with text (its number, its text).
    records: list[tuple[int, Any]] = []
    bad: list[tuple[int, str]] = []
    last = (0, "")
    for number, line in enumerate(text.splitlines() if split is None else split, start=1):
        stripped = line.strip()  # (once: a file's lines are each stripped, tens of thousands)
        if not stripped:
            continue
        last = (number, stripped)
        try:
            records.append((number, json.loads(line)))
        except (ValueError, RecursionError) as exc:
            # ValueError besides JSONDecodeError: a number of over 4,300 digits.
            reason = (
                exc.msg
                if isinstance(exc, json.JSONDecodeError)
                else "nested too deeply"
                if isinstance(exc, RecursionError)
                else str(exc)
            )
            bad.append((number, reason))
    return SessionLines(records, bad), last


def cut_off(text: str) -> json.JSONDecodeError | None:
    """The error of JSON ``text`` that stops part way (the decoder wanted more), else None."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated string"):
            return exc
    except (ValueError, RecursionError):  # a number of over 4,300 digits, a deep nesting
        return None
    return None
