"""Where a branch's files come from: each run of a branch gets a folder of its own — a copy of a
folder the user names (or of the agent's workspace), or one a function fills (the demo project)
— so that nothing a branch does reaches the original folder or another branch.

The original is only read, and no write through the copy reaches it or anything outside the copy
(a user's tool may open paths itself, following links): a symbolic link into the folder copied
(absolute, or relative through ``..``) points to the same place inside the copy, relative so the
copy may move; a link out of it becomes a file holding its target's content when the target is
a regular file (the branch reads what the origin read), and is left out otherwise (a folder, a
missing target, a device), each told in the run's notes. A copy is refused where it would land
inside the folder it copies.
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

__all__ = [
    "Workspace",
    "contain_links",
    "folder_problem",
    "redo_calls",
    "refuse_inside",
    "workspace_of",
]

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

    def make(self, target: Path, notes: list[str] | None = None) -> Path:
        """Make ``target`` (a new folder) the branch's workspace: copy or fill it, every link
        in it kept inside it (see the module); what was done to a link out of it is appended
        to ``notes``."""
        if target.exists():
            msg = f"{target} exists already; a branch's workspace is always a new folder"
            raise ForkError(msg)
        if isinstance(self.source, Path):
            _copy(self.source, target)
            told = contain_links(target, self.source.resolve())
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
            told = contain_links(target, target.resolve())
        if notes is not None:
            notes.extend(told)
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
        # Links copied as links (never followed by the copy): `contain_links` then settles them.
        shutil.copytree(source, target, symlinks=True)
    except (OSError, shutil.Error) as exc:
        msg = f"could not copy the workspace {str(source)!r} for a branch: {exc}"
        raise ForkError(msg) from exc


def contain_links(copy: Path, origin: Path) -> list[str]:
    """Make every symbolic link in ``copy`` (a copy of the resolved folder ``origin``, or
    ``origin`` itself) resolve inside ``copy``: one whose target, resolved in ``origin``, lies
    inside it points to the same place in ``copy``; one out of it becomes a copy of its target
    when that is a regular file, and is removed otherwise. Returns a note for each link out."""
    # Every link's fate is decided before any is changed: one link's target may be another.
    plans = [(link, _resolved(origin / link.relative_to(copy))) for link in _links(copy)]
    notes: list[str] = []
    try:
        for link, real in plans:
            name = link.relative_to(copy).as_posix()
            link.unlink()
            if real.is_relative_to(origin):
                _relink(link, copy / real.relative_to(origin))
            elif real.is_file():
                shutil.copy2(real, link)
                notes.append(
                    f"workspace: the link {name!r} points out of the copied folder "
                    f"({str(real)!r}): the branch has a copy of that file instead, so its "
                    "writes stay in its own folder"
                )
            else:
                what = "a folder" if real.is_dir() else "nothing there or not a file"
                notes.append(
                    f"workspace: the link {name!r} points out of the copied folder "
                    f"({str(real)!r}, {what}): left out of the branch's folder"
                )
    except OSError as exc:
        msg = f"could not settle the links of a branch's workspace {str(copy)!r}: {exc}"
        raise ForkError(msg) from exc
    return notes


def _links(folder: Path) -> list[Path]:
    """The symbolic links under ``folder``, never descending through one."""
    found: list[Path] = []
    for parent, dirs, files in os.walk(folder):
        found.extend(Path(parent, n) for n in (*dirs, *files) if Path(parent, n).is_symlink())
    return sorted(found)


def _resolved(path: Path) -> Path:
    """Where ``path`` leads once every link is followed (as far as they go: a missing part
    stays, a loop ends where it turns)."""
    return Path(os.path.realpath(path))


def _relink(link: Path, target: Path) -> None:
    """``link`` made a relative link to ``target`` (both inside one copy)."""
    os.symlink(os.path.relpath(target, link.parent), link, target_is_directory=target.is_dir())


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
