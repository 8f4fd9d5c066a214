"""A run's offload hints made its own.

The state a branch starts from may end a tool result with "read /origin/context_offload/x.txt
for the full output": a file its origin offloaded (*as it was*), or that the replay bringing
the branch there offloaded into the branch's folder (*as if from the start*). A run's tools act
on its own workspace only, so they refuse that path — and a workspace filled afresh (the demo
project) has no such file at all. Each file a hint of the state names is therefore copied to
the same path under the run's workspace, and the hints name that copy: the run reads what its
context tells it to read, and never reaches the origin. A copied file that names another
(a result evicted to one file, its preview then truncated into a second) names the run's copy.

The paths a run is shown are relative to its workspace (`RunOffloader`; the hints of the state
it starts from are rewritten so): the run's tools take them as they are, and what the model is
shown does not depend on the folder the run was made in (``run-1`` and ``run-10``, a temporary
folder's name tokenize differently — two runs of a deterministic model would cost differently).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ctxlab.agent import ForkPoint
from ctxlab.exceptions import OffloadError
from ctxlab.manifest import ContextManifest
from ctxlab.messages._state import WorkingState
from ctxlab.pipeline import WorkspaceOffloader
from ctxlab.util._files import write_atomic
from ctxlab.util._paths import resolved_within

__all__ = ["OFFLOAD_KINDS", "RunOffloader", "own_offloads"]

OFFLOAD_KINDS = frozenset({"tool_result_offload", "tool_result_truncation", "image_offload"})
"""The transforms whose detail is the path of a file the pipeline offloaded."""


class RunOffloader(WorkspaceOffloader):
    """A `WorkspaceOffloader` that shows the model each file's path relative to its folder
    (a branch's run, or the folder a replay up to the fork offloads into)."""

    def write(self, relative_path: str, data: bytes) -> str:
        """Write as `WorkspaceOffloader.write` does; return the path under the folder."""
        return Path(super().write(relative_path, data)).relative_to(self.root).as_posix()


def own_offloads(
    point: ForkPoint, roots: Sequence[Path], workspace: Path | None
) -> tuple[ForkPoint, list[str]]:
    """``point`` with every offloaded file under ``roots`` that its state names copied to the
    same path under ``workspace`` (the run's) and named by its copy; the notes of files that
    could not be."""
    if workspace is None:
        return point, []  # no workspace: the run has no tool to read a file with
    named = _named(point.manifests, roots)
    if not named:
        return point, []
    dumped = point.state.model_dump()
    copier = _Copier(named, workspace.resolve())
    _mapped(dumped, copier.copy_mentioned)
    moved = {old: new for old, new in copier.moved.items() if old != new}
    if not moved:
        return point, copier.notes
    state = WorkingState.model_validate(_mapped(dumped, lambda text: _replaced(text, moved)))
    return dataclasses.replace(point, state=state), copier.notes


class _Copier:
    """Copies offloaded files into a run's workspace, each once; the one a file names first."""

    def __init__(self, named: dict[str, tuple[Path, str]], workspace: Path) -> None:
        self.named = named
        self.workspace = workspace
        self.moved: dict[str, str] = {}
        """Each path copied, and its copy's."""
        self.notes: list[str] = []
        self._busy: set[str] = set()
        self._under: dict[str, list[str]] = {}
        for path in named:
            # Found by the folder that holds them (a relative path has no root to search by).
            self._under.setdefault(path[: path.rfind("/") + 1], []).append(path)

    def mentions(self, text: str) -> set[str]:
        """The named paths ``text`` holds (found by their folders: a text names few)."""
        found: set[str] = set()
        for prefix, paths in self._under.items():
            at = text.find(prefix)
            while at >= 0:
                found.update(p for p in paths if text.startswith(p, at))
                at = text.find(prefix, at + len(prefix))
        return found

    def copy_mentioned(self, text: str) -> str:
        """Copy each file ``text`` names; ``text`` as it is."""
        for path in self.mentions(text):
            self.copy(path)
        return text

    def copy(self, path: str) -> None:
        if path in self.moved or path in self._busy:
            return
        self._busy.add(path)
        root, relative = self.named[path]
        # Under its root: a relative path (a replay's, `RunOffloader`) names no file on its own.
        source = resolved_within(root, root / relative)
        try:
            if source is None or not source.is_file():
                msg = "it is gone, or leads out of its folder"
                raise OffloadError(msg)
            # Any bytes round-trip through the text (an image holds no path, and stays as is).
            text = source.read_bytes().decode("utf-8", "surrogateescape")
            inner = self.mentions(text) - {path}
            for other in inner:
                self.copy(other)
            text = _replaced(text, {o: self.moved[o] for o in inner if o in self.moved})
            self._write(relative, text.encode("utf-8", "surrogateescape"))
            self.moved[path] = relative  # shown relative to the run's workspace
        except (OSError, OffloadError) as exc:
            self.notes.append(
                f"offload: {path} (named by the context at the fork) not copied: {exc}"
            )

    def _write(self, relative: str, data: bytes) -> Path:
        target = resolved_within(self.workspace, self.workspace / relative)
        if target is None:
            msg = f"{relative!r} leads out of the run's workspace (a link)"
            raise OffloadError(msg)
        # A copied workspace holds the origin's file there already: the same bytes are kept;
        # a file naming the origin's paths is replaced by the copy naming the run's (the
        # run's own folder: nothing of the user's is there).
        if not (target.is_file() and target.read_bytes() == data):
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, data, what="copy of an offloaded file")
        return target


def _named(
    manifests: Iterable[ContextManifest], roots: Sequence[Path]
) -> dict[str, tuple[Path, str]]:
    """Each offloaded path the manifests name under one of ``roots``: its root and its path
    under it. A relative path (a run's, a replay's: `RunOffloader`) is under the first root
    that holds that file."""
    bases = [root.resolve() for root in roots]
    named: dict[str, tuple[Path, str]] = {}
    for manifest in manifests:
        for transform in manifest.transforms:
            if transform.kind not in OFFLOAD_KINDS or not transform.detail:
                continue
            path = Path(transform.detail)
            for base in bases:
                if path.is_absolute() and path.is_relative_to(base):
                    named[transform.detail] = (base, path.relative_to(base).as_posix())
                    break
                if not path.is_absolute() and (base / path).is_file():
                    named[transform.detail] = (base, path.as_posix())
                    break
    return named


def _mapped(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` (a state's dump) with ``change`` applied to each of its strings."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {key: _mapped(item, change) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_mapped(item, change) for item in value)
    return value


def _replaced(text: str, moved: dict[str, str]) -> str:
    """``text`` with ``moved``'s paths replaced, the longest first (no path is replaced inside
    a longer one that holds it)."""
    for old in sorted(moved, key=len, reverse=True):
        if old in text:
            text = text.replace(old, moved[old])
    return text
