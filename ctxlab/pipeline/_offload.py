"""Offloading: content removed from the context is written to the workspace first.

A write is atomic (a temporary file renamed into place), so a reader never sees half a file, and a
failed write raises before anything in the context is replaced: the caller keeps the original.
No path can leave the workspace.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Protocol, runtime_checkable

from ctxlab.exceptions import OffloadError, UsageError, WriteError
from ctxlab.util._checks import shown
from ctxlab.util._files import write_atomic
from ctxlab.util._path_args import path_argument
from ctxlab.util._paths import resolved_within

__all__ = ["Offloader", "WorkspaceOffloader", "offload_name", "safe_name"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def safe_name(text: str) -> str:
    """``text`` reduced to characters safe in a file name (ids from providers are not trusted)."""
    cleaned = _UNSAFE.sub("_", text).strip(".") or "item"
    return cleaned[:120]


def offload_name(item_id: str, data: bytes) -> str:
    """A file name unique to this output: a readable prefix of the (untrusted) id plus a short
    hash of the id and the content, so ids that clean to the same text (``call:1`` and
    ``call/1``), ids sharing a long prefix, and a repeated id with other output never collide."""
    digest = hashlib.sha256(item_id.encode("utf-8", "replace") + b"\0" + data).hexdigest()[:12]
    return f"{safe_name(item_id)[:80]}-{digest}"


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
        self.root = path_argument(root, "the offload root", what="a folder").resolve()

    def resolve(self, relative_path: str) -> Path:
        """The absolute path for ``relative_path``; `OffloadError` if it leaves the workspace, or
        is no path a file system takes (a NUL, a lone surrogate — a hostile file's tool id may
        hold one — a name too long): the pipeline then keeps the content in the context."""
        if not isinstance(relative_path, str):
            msg = f"an offload path is text, got {shown(relative_path)}"
            raise UsageError(msg)
        try:
            path_argument(str(self.root / relative_path), "the offload path")
        except UsageError as exc:
            raise OffloadError(f"{exc}: nothing was written") from exc
        if os.path.isabs(relative_path):
            msg = f"offload path {relative_path!r} is absolute; give a path inside the workspace"
            raise OffloadError(msg)
        target = resolved_within(self.root, self.root / relative_path)
        if target is None:
            msg = (
                f"offload path {relative_path!r} leaves the workspace {str(self.root)!r} (a "
                "'..' or a link out of it): nothing was written"
            )
            raise OffloadError(msg)
        return target

    def write(self, relative_path: str, data: bytes) -> str:
        """Write atomically; return the absolute path. A file already there is never replaced
        by other content: the same content is reused, other content gets a numbered name."""
        if not isinstance(data, bytes | bytearray):
            msg = f"offloaded content is bytes, got {shown(data)}"
            raise UsageError(msg)
        target = self.resolve(relative_path)
        stem, suffix = os.path.splitext(relative_path)
        for number in range(1, 1000):
            if not target.exists() or _same_content(target, data):
                break
            target = self.resolve(f"{stem}-{number}{suffix}")
        if target.exists():
            return str(target)  # the same output, written before
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, data, what="offloaded content")
        except (OSError, WriteError) as exc:
            msg = f"could not write offloaded content to {str(target)!r}: {exc}"
            raise OffloadError(msg) from exc
        return str(target)


def _same_content(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False
