"""A path a user passes to an entry point, checked before any file is touched.

The file system refuses some paths by raising from deep inside: a NUL character (``ValueError``),
a lone surrogate no file name can be written in (``UnicodeEncodeError``), a name past 255 bytes
(a bare ``OSError``), bytes or a number (``TypeError``). `path_argument` refuses each first, with a
`UsageError` naming the argument and what it takes; what only the file system can tell (a
read-only folder, a file where a folder should be) is the caller's to say where it opens the file
(`os_problem`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ctxlab.exceptions import UsageError
from ctxlab.util._checks import shown

__all__ = ["NAME_MAX", "PATH_MAX", "os_problem", "path_argument"]

NAME_MAX = 255
"""The longest name (in bytes) of a file or folder common file systems take."""
PATH_MAX = 4096
"""The longest path (in bytes) Linux takes."""


def path_argument(value: Any, name: str, *, what: str = "a file") -> Path:
    """``value`` as a `Path`: text or an ``os.PathLike`` of text, not empty, with no NUL, that
    can be written as a file name, no name of it over `NAME_MAX` bytes nor the whole over
    `PATH_MAX`. ``what`` says what it should name (``"a folder"``) in the message."""
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(text, str):
        msg = f"{name} must be a path to {what} (text or a pathlib.Path), got {shown(value)}"
        raise UsageError(msg)
    problem = _problem(text)
    if problem is not None:
        msg = f"{name} cannot be a path to {what}: {shown(text)} {problem}"
        raise UsageError(msg)
    return Path(text)


def _problem(text: str) -> str | None:
    if not text:
        return "is empty"
    if "\x00" in text:
        return "holds a NUL character, which no file name can"
    try:
        encoded = os.fsencode(text)
    except UnicodeEncodeError:
        return "holds a character no file name can be written in (a lone surrogate)"
    if len(encoded) > PATH_MAX:
        return f"is {len(encoded):,} bytes long: paths end at {PATH_MAX:,}"
    longest = max(len(part) for part in encoded.split(os.fsencode(os.sep)))
    if longest > NAME_MAX:
        return f"has a name of {longest:,} bytes: a file system takes names of up to {NAME_MAX}"
    return None


def os_problem(exc: OSError) -> str:
    """What an ``OSError`` from opening or creating a file means, in words, with what to do."""
    if isinstance(exc, PermissionError):
        return (
            "it cannot be written (a read-only file or folder): make it writable or choose another"
        )
    if isinstance(exc, NotADirectoryError):
        return "a file stands where a folder is needed on the way: choose another place"
    if isinstance(exc, IsADirectoryError):
        return "it is a folder: give a file name"
    if isinstance(exc, FileExistsError):
        return "a file of that name is there already: choose another"
    return f"{exc.strerror or exc}: choose another place"
