"""Reading a JSON Lines file with errors that name the file and the line (shared by
`load_transcript` and the importers of `ctxlab.load`)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError

__all__ = ["check_regular_file", "json_lines", "read_text"]


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
    """(line number, value) of every non-blank line of ``text``, read from ``path``."""
    records: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
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
            msg = f"{path} line {number}: not JSON ({reason})"
            raise MessageFormatError(msg) from exc
    return records
