"""Which format a session is, asked of the registry (`ctxlab.io._registry`): each format's
detector once, in priority order — the chat formats, known by their role fields alone, after all
the others; what no format recognises is said with the formats considered."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._foreign import foreign_document
from ctxlab.io._registry import detectors, format_names, formats

__all__ = ["Format", "detect_format", "detect_lines"]

Format = str
"""A format's name: one of ``ctxlab.FORMATS`` (ctxlab's own, and those registered)."""


def detect_format(value: Any) -> Format:
    """The format of a decoded document or of the first record of a JSON Lines file."""
    found = _format_of(value)
    if found is not None:
        return found
    foreign = foreign_document(value[0] if isinstance(value, list) and value else value)
    if foreign is not None:
        raise MessageFormatError(foreign)
    msg = (
        f"cannot tell the format of this session ({_shape(value)}): it reads as none of "
        f"{', '.join(format_names())}; if it is one of them, pass format= to read it as that"
    )
    raise MessageFormatError(msg)


def _format_of(value: Any) -> Format | None:
    # The first format whose detector claims ``value``; the chat formats (``guess``) only when
    # no other does and the value is no foreign tool's.
    if isinstance(value, Mapping):
        found = _claimed(value, "document", guess=False)
        if found is not None or foreign_document(value) is not None:
            return found
        return _claimed(value, "document", guess=True)
    if isinstance(value, list) and value:
        if foreign_document(value[0]) is not None:
            return None
        found = _claimed(value, "records", guess=False)
        return found if found is not None else _claimed(value, "records", guess=True)
    return None


def _claimed(value: Any, kind: str, *, guess: bool) -> Format | None:
    return next((name for claims, name in detectors(kind, guess) if claims(value)), None)


def _shape(value: Any) -> str:
    # What the data looked like, in a few words, for the error.
    if isinstance(value, Mapping):
        keys = ", ".join(repr(str(k)) for k in list(value)[:6])
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(value, list):
        first = value[0] if value else None
        inner = "an object" if isinstance(first, Mapping) else f"a JSON {type(first).__name__}"
        return f"a list of {len(value)}, the first {inner}" if value else "an empty list"
    return f"a JSON {type(value).__name__}"


def detect_lines(records: list[tuple[int, Any]]) -> Format:
    """The format of a JSON Lines file from its first records: a format that knows its files by
    their lines, else the first record's — unless the lines after it are of one line format (a
    file that opens with another tool's line)."""
    head = [value for _, value in records[:20]]
    found = _claimed(head, "lines", guess=False)
    if found is not None:
        return found
    guesses = [_format_of(value) for value in head]
    line_formats = {f.name for f in formats() if f.line_format}
    later = [g for g in guesses[1:] if g in line_formats]
    if later:
        common = Counter(later).most_common(1)[0][0]
        if guesses[0] != common:
            return common
    return guesses[0] or detect_format(records[0][1])
