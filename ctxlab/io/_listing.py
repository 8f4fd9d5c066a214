"""Which files of a folder are sessions, as the registered formats say (`sessions` asks): the
file endings they are kept in, the files of an ending other files share that are sessions (of
Markdown, only chat histories), the files that are parts of a session listed under another,
the folders that are sessions of their own, and the files a session's read looks at beside
its own (which `sessions`' kept tables watch)."""

from __future__ import annotations

from pathlib import Path

from ctxlab.io._registry import formats

__all__ = ["companion", "listed", "read_beside", "session_folders", "session_suffixes"]

_JSON = (".jsonl", ".json")
"""The endings of every JSON format's files."""


def session_suffixes() -> tuple[str, ...]:
    """The file endings that may hold a session: JSON, JSON Lines, and every format's own."""
    endings = [*_JSON]
    for declared in formats():
        endings.extend(s.lower() for s in declared.suffixes if s.lower() not in endings)
    return tuple(endings)


def listed(path: Path) -> bool:
    """Whether ``path`` may be a session by its name: a file of an ending some format keeps
    sessions in without saying more, or one a format keeping that ending claims."""
    name = path.name.lower()
    owners = [f for f in formats() if any(name.endswith(s.lower()) for s in f.suffixes)]
    if not owners or any(f.listed is None for f in owners):
        return True
    return any(f.listed(path) for f in owners if f.listed is not None)


def companion(path: Path) -> bool:
    """Whether ``path`` is a part of a session that `sessions` lists under another file."""
    return any(f.part is not None and f.part(path) for f in formats())


def session_folders(files: list[Path]) -> list[Path]:
    """The folders that are sessions of their own, among the files found (in order)."""
    folders: list[Path] = []
    for declared in formats():
        if declared.folders is not None:
            folders.extend(declared.folders(files))
    return sorted(folders)


def read_beside(path: Path) -> list[Path]:
    """The files and folders that reading the session file ``path`` looks at besides the file
    itself, as its formats say (`SessionFormat.reads`); empty for most files."""
    found: list[Path] = []
    for declared in formats():
        if declared.reads is not None:
            found.extend(declared.reads(path))
    return found
