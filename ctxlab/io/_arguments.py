"""A recording passed where one is read: a `Transcript`, checked first, so that a path, a name
or a dict given in its place is a `UsageError` saying what to pass — not an attribute never
found deep inside."""

from __future__ import annotations

from typing import Any

from ctxlab.exceptions import UsageError
from ctxlab.io._transcript import Transcript
from ctxlab.util._checks import shown

__all__ = ["checked_transcript"]


def checked_transcript(value: Any, reader: str) -> Transcript:
    """``value`` when it is a `Transcript`; ``reader`` names the entry point in the message."""
    if not isinstance(value, Transcript):
        msg = f"{reader} reads a Transcript, got {shown(value)}: pass ctxlab.load(path)"
        raise UsageError(msg)
    return value
