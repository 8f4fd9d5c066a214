"""Reading a session file: its JSON records (JSON Lines, one document, or pretty-printed objects
one after another), a document saved as a JSON string of itself, and a file's first bytes (for
the Markdown histories, known before any JSON is read)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.util._jsonl import json_lines, read_text

__all__ = ["head", "inner_document", "records"]


def records(path: Path) -> tuple[list[tuple[int, Any]], Any]:
    """(line number, value) of a JSON Lines file, or the whole JSON document."""
    text = read_text(path)
    try:
        return [], json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        lines = json_lines(path, text)
    except MessageFormatError:
        # Pretty-printed JSON objects one after another (the OpenTelemetry console exporter).
        concatenated = _concatenated(text)
        if concatenated is None:
            _raise_if_truncated(path, text)
            raise
        lines = concatenated
    if not lines:
        msg = f"{path} is empty"
        raise MessageFormatError(msg)
    return lines, None


def _raise_if_truncated(path: Path, text: str) -> None:
    # A pretty-printed document that stops part way: said as such, where it stops, rather than
    # as its first line not being JSON.
    stripped = text.strip()
    if (
        not stripped
        or stripped[0] not in "[{"
        or stripped.splitlines()[0].strip() not in ("[", "{")
    ):
        return
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()) - 1:
            msg = (
                f"{path} ends before its JSON document does (line {exc.lineno}: {exc.msg}): the "
                "file looks truncated — copy or export it again"
            )
            raise MessageFormatError(msg) from exc
    except RecursionError:
        return


def _concatenated(text: str) -> list[tuple[int, Any]] | None:
    decoder = json.JSONDecoder()
    records: list[tuple[int, Any]] = []
    position = 0
    while position < len(text):
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            break
        try:
            value, end = decoder.raw_decode(text, position)
        except (json.JSONDecodeError, RecursionError):
            return None
        records.append((text.count("\n", 0, position) + 1, value))
        position = end
    return records if len(records) > 1 else None


def inner_document(path: Path, text: str) -> Any:
    if not text.lstrip().startswith(("{", "[")):
        msg = f"{path} holds one JSON string, not a session"
        raise MessageFormatError(msg)
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        msg = f"{path} holds one JSON string whose text is not JSON: not a session"
        raise MessageFormatError(msg) from exc


def head(path: Path) -> str:
    # A Markdown chat history (aider's, SpecStory's), not JSON: known from its first bytes.
    try:
        with path.open("rb") as handle:
            return handle.read(2048).decode("utf-8", "replace")
    except OSError:
        return ""
