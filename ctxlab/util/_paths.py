"""Confinement to a folder: a path is used only where it leads inside the folder, every
symlink followed — a workspace cloned from elsewhere may link ``knowledge/notes.md`` to
``~/.aws/credentials``, and what ctxlab reads from a workspace is sent to a model."""

from __future__ import annotations

from pathlib import Path

__all__ = ["resolved_within"]


def resolved_within(root: Path, path: Path) -> Path | None:
    """``path`` with every symlink resolved, when it leads inside ``root`` (itself resolved);
    None when it leads elsewhere or cannot be resolved (a symlink loop)."""
    try:
        base = root.resolve()
        target = path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python before 3.13)
        return None
    return target if target.is_relative_to(base) else None
