"""Offloading: content removed from the context is written to the workspace first.

A write is atomic (a temporary file renamed into place), so a reader never sees half a file, and a
failed write raises before anything in the context is replaced: the caller keeps the original.
No path can leave the workspace.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Protocol, runtime_checkable

from ctxlab.exceptions import OffloadError

__all__ = ["Offloader", "WorkspaceOffloader", "safe_name"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def safe_name(text: str) -> str:
    """``text`` reduced to characters safe in a file name (ids from providers are not trusted)."""
    cleaned = _UNSAFE.sub("_", text).strip(".") or "item"
    return cleaned[:120]


@runtime_checkable
class Offloader(Protocol):
    """Persists removed content and tells where the model can read it back."""

    def write(self, relative_path: str, data: bytes) -> str:
        """Store ``data`` at ``relative_path``; return the path to show the model.

        Raise `OffloadError` when it cannot be stored.
        """
        ...


class WorkspaceOffloader:
    """Writes offloaded content to files under ``root`` (the agent's workspace)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()

    def resolve(self, relative_path: str) -> Path:
        """The absolute path for ``relative_path``; `OffloadError` if it leaves the workspace."""
        if os.path.isabs(relative_path):
            msg = f"offload path {relative_path!r} is absolute; give a path inside the workspace"
            raise OffloadError(msg)
        target = (self.root / relative_path).resolve()
        if not target.is_relative_to(self.root):
            msg = f"offload path {relative_path!r} leaves the workspace {str(self.root)!r}"
            raise OffloadError(msg)
        return target

    def write(self, relative_path: str, data: bytes) -> str:
        """Write atomically; return the absolute path."""
        target = self.resolve(relative_path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".offload-", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            msg = f"could not write offloaded content to {str(target)!r}: {exc}"
            raise OffloadError(msg) from exc
        return str(target)
