"""Where a branch's files go: the ``root`` and ``name`` a `fork` is given, checked, and a new
folder under the root for each branch (its name numbered when taken, cut to what a file system
holds). Kept apart from `fork` so that it stays about what a branch takes from its origin."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
from pathlib import Path

from ctxlab.exceptions import ForkError
from ctxlab.fork._workspace import folder_problem

__all__ = ["MAX_NAME", "branch_folder", "checked_name", "checked_root"]

_ROOT: list[Path] = []


MAX_NAME = 100
"""The longest name a branch takes, in characters: it labels the branch's rows and names its
folder (cut to `_NAME_BYTES` bytes there: a file system takes 255 at most)."""

_NAME_BYTES = 100


def _default_root() -> Path:
    # One folder per process for the branches made without root=, removed when it ends.
    if not _ROOT:
        try:
            made = Path(tempfile.mkdtemp(prefix="ctxlab-forks-"))
        except OSError as exc:
            msg = (
                f"could not make a temporary folder for the branches: {exc}. Pass root= a "
                "folder you can write to"
            )
            raise ForkError(msg) from exc
        atexit.register(shutil.rmtree, made, ignore_errors=True)
        _ROOT.append(made)
    return _ROOT[0]


def checked_root(root: object) -> Path:
    """Where the branches' folders go: ``root``, or the process's temporary folder."""
    if root is None:
        return _default_root()
    if not isinstance(root, str | os.PathLike) or not str(os.fspath(root)).strip():
        msg = (
            f"root must be the path of a folder (a str or a Path) where the branches' folders "
            f"are made, got {root!r:.80}"
        )
        raise ForkError(msg)
    folder = Path(os.fspath(root))
    try:
        is_file = folder.exists() and not folder.is_dir()
    except OSError as exc:  # a name too long, a link loop: nothing can be made there
        raise ForkError(folder_problem(folder, exc)) from exc
    if is_file:
        msg = (
            f"root {str(folder)!r} is a file, not a folder: pass root= a folder (it is made "
            "when missing)"
        )
        raise ForkError(msg)
    # Absolute: a run's tools move the process's working folder while they run (`in_folder`),
    # and another run's folder made meanwhile must land where it was asked for.
    return folder.absolute()


def checked_name(name: object) -> str | None:
    if name is None:
        return None
    if not isinstance(name, str):
        msg = f"name must be a string (the branch's name), got {type(name).__name__}"
        raise ForkError(msg)
    if len(name) > MAX_NAME:
        msg = (
            f"name is {len(name):,} characters long: a branch's name labels its rows and names "
            f"its folder; give one of at most {MAX_NAME}"
        )
        raise ForkError(msg)
    return name


def branch_folder(root: Path, name: str) -> tuple[str, Path]:
    """A new folder for branch ``name`` under ``root`` (the name numbered when taken)."""
    base = re.sub(r"[^\w.-]+", "-", name).strip(".-") or "branch"
    # Cut to whole characters within the bytes a file name may hold (a name of accents or
    # of CJK characters takes two to four bytes each).
    base = base.encode()[:_NAME_BYTES].decode(errors="ignore").rstrip(".-") or "branch"
    chosen, number = name, 1
    try:
        while (root / base if number == 1 else root / f"{base}-{number}").exists():
            number += 1
            chosen = f"{name}-{number}"
        folder = root / (base if number == 1 else f"{base}-{number}")
        folder.mkdir(parents=True)
    except OSError as exc:
        raise ForkError(folder_problem(root, exc)) from exc
    return chosen, folder
