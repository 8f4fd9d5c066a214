"""Where a branch's files come from: each run of a branch gets a folder of its own — a copy of a
folder the user names (or of the agent's workspace), or one a function fills (the demo project)
— so that nothing a branch does reaches the original folder or another branch.

The original is only read: the copy keeps symbolic links as links (never following one out of
the folder), and a copy is refused where it would land inside the folder it copies.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxlab.agent import Tool
from ctxlab.exceptions import ForkError
from ctxlab.messages import AssistantMessage, Message, UserMessage

__all__ = ["Workspace", "folder_problem", "redo_calls", "refuse_inside", "workspace_of"]

Filler = Callable[[Path], Any]
"""A function that fills an empty folder with a branch's files (e.g. `ctxlab.demo.prepare_workspace`)."""


@dataclass(frozen=True)
class Workspace:
    """Where each run of a branch gets its files.

    Args:
        source: A folder to copy (its state now), or a function that fills the empty folder
            it is given (the project as it was at the start: `ctxlab.demo.prepare_workspace`).
        redo: Tools whose calls in the session before the fork are run again, in order, on
            the fresh copy — with a ``source`` that is the project as it was at the start,
            ``("edit_file",)`` brings it to the state it had at the fork. A redone call whose
            result differs from the recorded one is noted on the run.
    """

    source: Path | Filler
    redo: tuple[str, ...] = ()

    def make(self, target: Path) -> Path:
        """Make ``target`` (a new folder) the branch's workspace: copy or fill it."""
        if target.exists():
            msg = f"{target} exists already; a branch's workspace is always a new folder"
            raise ForkError(msg)
        if isinstance(self.source, Path):
            _copy(self.source, target)
        else:
            target.mkdir(parents=True)
            try:
                self.source(target)
            except Exception as exc:
                name = getattr(self.source, "__name__", repr(self.source))
                msg = (
                    f"could not fill a branch's workspace with {name}: {type(exc).__name__}: {exc}"
                )
                raise ForkError(msg) from exc
        return target


def workspace_of(
    value: Any, redo: Sequence[str] = (), *, default: Path | None = None
) -> Workspace | None:
    """A `Workspace` from what ``fork`` was given: a `Workspace`, a folder, a filling
    function, or None (``default``: the origin agent's workspace, or none)."""
    if isinstance(value, Workspace):
        if redo:
            return Workspace(value.source, tuple(dict.fromkeys((*value.redo, *redo))))
        return value
    if value is None:
        return Workspace(default, tuple(redo)) if default is not None else None
    if isinstance(value, str | os.PathLike):
        folder = Path(value)
        if not folder.is_dir():
            msg = f"the workspace to copy for the branches, {str(folder)!r}, is not a folder"
            raise ForkError(msg)
        return Workspace(folder.resolve(), tuple(redo))
    if callable(value):
        return Workspace(value, tuple(redo))
    msg = (
        f"workspace must be a folder, a function that fills one, or a Workspace; got "
        f"{type(value).__name__}"
    )
    raise ForkError(msg)


def refuse_inside(target: Path, source: Path) -> None:
    """`ForkError` when ``target`` (where branches go) is inside ``source`` (what they copy)."""
    if target.resolve().is_relative_to(source.resolve()):
        msg = (
            f"the branches' folder {str(target)!r} is inside the workspace it copies "
            f"({str(source)!r}): the copy would copy itself, and the original would change. "
            "Pass root= outside it"
        )
        raise ForkError(msg)


def folder_problem(root: Path, exc: OSError) -> str:
    """What to tell of a branch's folder that could not be made under ``root``."""
    if isinstance(exc, PermissionError):
        why = "permission denied (a read-only folder?): pass root= a folder you can write to"
    elif isinstance(exc, NotADirectoryError):
        why = "a part of its path is a file, not a folder: pass root= a folder"
    elif exc.errno == errno.ENAMETOOLONG:
        why = "the path is too long for the file system: pass root= a shorter path"
    else:
        why = f"{exc.strerror or exc}: pass root= a folder you can write to"
    return f"could not make a branch's folder under {str(root)!r}: {why}"


def _copy(source: Path, target: Path) -> None:
    source = source.resolve()
    refuse_inside(target, source)
    try:
        # Links stay links: a link out of the folder is never followed (nor read) by the copy.
        shutil.copytree(source, target, symlinks=True)
    except (OSError, shutil.Error) as exc:
        msg = f"could not copy the workspace {str(source)!r} for a branch: {exc}"
        raise ForkError(msg) from exc


async def redo_calls(
    history: Sequence[Message], names: Sequence[str], tools: Mapping[str, Tool]
) -> list[str]:
    """Run the calls of tools ``names`` in ``history`` again, in order, with ``tools`` (a
    branch's, over its copy); returns a note for each whose result differs from the recorded
    one (or whose tool the branch lacks)."""
    if not names:
        return []
    results = {
        r.tool_use_id: r for m in history if isinstance(m, UserMessage) for r in m.tool_results
    }
    notes: list[str] = []
    for message in history:
        if not isinstance(message, AssistantMessage):
            continue
        for use in message.tool_uses:
            if use.name not in names:
                continue
            tool = tools.get(use.name)
            if tool is None:
                notes.append(f"redo: the branch has no tool {use.name!r} to run {use.id} again")
                continue
            again = await tool.run(use.id, use.input)
            recorded = results.get(use.id)
            if recorded is None or recorded.text != again.text:
                was = "no result" if recorded is None else repr(recorded.text[:200])
                notes.append(
                    f"redo: {use.name} {use.input_json[:80]} gave {again.text[:200]!r}, "
                    f"recorded {was}"
                )
    return notes
