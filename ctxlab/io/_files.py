"""A session file's records: one JSON document, JSON Lines, or JSON objects one after another —
with a file cut off said as such, where it stops (never blamed on its first line), and a JSON
Lines file read without its last line when it is cut off (a session still being written) and
without the few lines that are not JSON (`ctxlab.util._jsonl.session_lines`: at most one in
ten), each counted in the census and named by its number; a document saved as a JSON string
of itself, and a file's first bytes (for the Markdown histories, known before any JSON is
read)."""

from __future__ import annotations

import errno
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._census import Census
from ctxlab.io._transcript import Transcript
from ctxlab.util._jsonl import SessionLines, cut_off, read_text, session_lines

__all__ = [
    "FileRecords",
    "count_skipped_lines",
    "head",
    "inner_document",
    "path_problem",
    "read_records",
    "shown_path",
]


@dataclass(frozen=True)
class FileRecords:
    """What a file holds: its JSON Lines records, or its one document."""

    records: list[tuple[int, Any]]
    """(line number, value) of each record; empty for a document."""
    document: Any = None
    lines: SessionLines | None = None
    """Of JSON Lines, the lines left out: a last line cut off, lines that are not JSON."""

    @property
    def cut_line(self) -> int | None:
        """The number of a last line cut off part way, left out."""
        return self.lines.cut_line if self.lines is not None else None


def read_records(path: Path) -> FileRecords:
    """The records of the file at ``path`` (see the module)."""
    text = read_text(path)
    try:
        return FileRecords([], json.loads(text))
    except (ValueError, RecursionError):  # (ValueError: a number of over 4,300 digits too)
        pass
    # Split once, for both questions below: splitting a file of hundreds of megabytes (and
    # stripping each line) twice was a tenth of reading it.
    split = text.splitlines()
    _raise_if_truncated(path, text, split)
    try:
        lines: SessionLines | None = session_lines(path, text, split)
    except MessageFormatError:
        lines = None
    if lines is None or lines.not_json or lines.cut_line is not None:
        # Pretty-printed JSON objects one after another (the OpenTelemetry console exporter).
        concatenated = _concatenated(text)
        if concatenated is not None:
            return FileRecords(concatenated)
    if lines is None:
        lines = session_lines(path, text, split)  # raises again, naming the first line not JSON
    if not lines.records:
        msg = f"{path} is empty"
        raise MessageFormatError(msg)
    return FileRecords(lines.records, None, lines)


def _raise_if_truncated(path: Path, text: str, split: list[str]) -> None:
    # One document (compact or pretty-printed) that stops part way: said as such, where it
    # stops, rather than as its first line not being JSON. (``split``: ``text.splitlines()``.)
    filled = _filled(split, 2)
    # The text's first character that is not whitespace: its first filled line's (every line
    # break `str.splitlines` splits at is whitespace).
    if not filled or filled[0].lstrip()[0] not in "[{" or _is_json_lines(filled):
        return
    exc = cut_off(text)
    if exc is not None:
        line = text.rstrip().count("\n") + 1  # where the text stops, not after it
        msg = (
            f"{path} ends before its JSON document does (line {line}: {exc.msg}): the file "
            "looks truncated — copy or export it again"
        )
        raise MessageFormatError(msg) from exc


def _filled(split: list[str], most: int) -> list[str]:
    # The first ``most`` lines of ``split`` that are not blank.
    found: list[str] = []
    for line in split:
        if line.strip():
            found.append(line)
            if len(found) == most:
                break
    return found


def _is_json_lines(lines: list[str]) -> bool:
    # A whole JSON value on its first line and more lines after: JSON Lines (whose last line
    # may be the one cut off), not one document. (``lines``: the text's first two filled.)
    if len(lines) < 2:
        return False
    try:
        json.loads(lines[0])
    except (ValueError, RecursionError):  # (ValueError: a number of over 4,300 digits too)
        return False
    return True


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
        except (ValueError, RecursionError):  # (ValueError: a number of over 4,300 digits too)
            return None
        records.append((text.count("\n", 0, position) + 1, value))
        position = end
    return records if len(records) > 1 else None


def count_skipped_lines(transcript: Transcript, read: FileRecords) -> Transcript:
    """``transcript`` with its file's lines that were left out — a last line cut off, lines
    that are not JSON — in its census and ``meta`` (each named by its number)."""
    lines = read.lines
    if lines is None or not lines.left_out:
        return transcript
    meta = dict(transcript.meta)
    lines.name_left_out(meta)
    census = Census.from_meta(transcript.meta.get("census"))
    if census is not None:
        data = census.as_meta()
        for kind, count in lines.left_out_read.items():
            data["read"][kind] = data["read"].get(kind, 0) + count
        data["skipped"] = {**data["skipped"], **lines.left_out}
        meta["census"] = data
    return Transcript(
        name=transcript.name,
        meta=meta,
        system=transcript.system,
        messages=transcript.messages,
        extra=transcript.extra,
        tools=transcript.tools,
        usage=transcript.usage,
        times=transcript.times,
    )


def inner_document(path: Path, text: str) -> Any:
    """The JSON document a file saved as one JSON string of itself holds (seen in Letta's
    published agent files)."""
    if not text.lstrip().startswith(("{", "[")):
        msg = f"{path} holds one JSON string, not a session"
        raise MessageFormatError(msg)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        msg = f"{path} holds one JSON string whose text is not JSON: not a session"
        raise MessageFormatError(msg) from exc


def head(path: Path) -> str:
    """The file's first 2,048 characters (empty when it cannot be read)."""
    # A Markdown chat history (aider's, SpecStory's), not JSON: known from its first bytes.
    try:
        with path.open("rb") as handle:
            return handle.read(2048).decode("utf-8", "replace")
    except OSError:
        return ""


_SHOWN = 256
"""The characters an error message shows of a path no system could hold (a session's text
passed as a path can run to megabytes)."""


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` for an error message: whole when a file system could hold it (every name up to
    255 characters, the whole up to 4,096), else its first characters and its length."""
    text = str(path)
    if len(text) <= 4096 and all(len(name) <= 255 for name in text.split(os.sep)):
        return text
    return f"{text[:_SHOWN]}… ({len(text):,} characters)"


def path_problem(path: Path) -> str | None:
    """Why ``path`` cannot even be looked up — a name longer than the system allows, a NUL
    character, a folder on the way that cannot be searched — or None (it exists, or simply does
    not: the caller says which it needed). Checked before any ``is_dir``/``is_file``, which
    raise a bare `OSError` for such a path."""
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            return exc.strerror or str(exc)
        problem = f"a name of {len(str(path)):,} characters is too long for a file path"
    except ValueError:  # an embedded NUL
        problem = "a file path cannot hold a NUL character"
    else:
        return None
    text = str(path).lstrip()
    if "\n" in text or text.startswith(("{", "[")):
        problem += (
            "; this looks like a session's text, not a path: pass its decoded data "
            "(json.loads(text), or a list of its lines' records) or save it to a file"
        )
    return problem
