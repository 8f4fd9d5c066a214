"""Workspace material: ``AGENTS.md`` into System; ``MEMORY.md`` and knowledge files as references.

Loaded once per agent call (editing a file during the call takes effect at the next call), as the
reference harness does. Only files inside the workspace are read, every symlink followed: a file
that leads outside it (a cloned repository's ``knowledge/notes.md`` linked to
``~/.aws/credentials``), or is larger than `MAX_FILE_BYTES`, is not read, and a
``workspace_refused`` transform says which and why — nothing of it is sent to the model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from ctxlab.manifest import Transform
from ctxlab.materials._block import ContextBlock, Material, SystemPart
from ctxlab.tokens import head_within
from ctxlab.util._path_args import path_argument
from ctxlab.util._paths import resolved_within

__all__ = ["MAX_FILE_BYTES", "WorkspaceMaterial", "limit_workspace", "load_workspace"]

TRIM_NOTE = "\n[... workspace material cut to fit {limit} tokens; read {name} for the rest ...]"

KNOWLEDGE_SUFFIXES = (".md", ".txt")


MAX_FILE_BYTES = 10_000_000
"""The largest workspace file read (10 MB, some 2.5 million tokens: past any context window);
a larger one is refused rather than read whole into memory."""


class WorkspaceMaterial(NamedTuple):
    """What `load_workspace` read: System parts, reference material, and what it refused."""

    system: tuple[SystemPart, ...]
    materials: tuple[Material, ...]
    refused: tuple[Transform, ...] = ()
    """A ``workspace_refused`` transform per file not read (outside the workspace, too large,
    unreadable), for the manifest."""


def load_workspace(root: Path | None) -> WorkspaceMaterial:
    """The System parts, reference material and refusals of the workspace at ``root`` (empty
    when None)."""
    if root is not None:
        root = path_argument(root, "root", what="the workspace folder")
    if root is None or not root.is_dir():
        return WorkspaceMaterial((), ())
    system: list[SystemPart] = []
    materials: list[Material] = []
    refused: list[Transform] = []

    def read(path: Path) -> str | None:
        text, why = _read(root, path)
        if why is not None:
            relative = path.relative_to(root).as_posix()
            refused.append(Transform("workspace_refused", f"workspace/{relative}", why))
        return text

    agents = root / "AGENTS.md"
    text = read(agents) if agents.is_file() or agents.is_symlink() else None
    if text is not None:
        system.append(SystemPart("workspace/AGENTS.md", text))
    memory = root / "MEMORY.md"
    text = read(memory) if memory.is_file() or memory.is_symlink() else None
    if text is not None and text.strip():
        materials.append(
            Material(
                "workspace/MEMORY.md",
                "workspace",
                "memory",
                ContextBlock.reference("MEMORY.md", text),
            )
        )
    knowledge = root / "knowledge"
    if knowledge.is_dir() and resolved_within(root, knowledge) is None:
        # A linked-out folder is not even walked (it may be the whole disk).
        refused.append(
            Transform(
                "workspace_refused",
                "workspace/knowledge",
                "a link that leads outside the workspace: not read, nothing sent",
            )
        )
    elif knowledge.is_dir():
        # rglob does not descend into linked folders; a linked file is checked by _read.
        for path in sorted(knowledge.rglob("*")):
            if path.suffix not in KNOWLEDGE_SUFFIXES or not (path.is_file() or path.is_symlink()):
                continue
            text = read(path)
            if text is not None and text.strip():
                relative = path.relative_to(root).as_posix()
                materials.append(
                    Material(
                        f"workspace/{relative}",
                        "workspace",
                        "knowledge",
                        ContextBlock.reference(relative, text),
                    )
                )
    return WorkspaceMaterial(tuple(system), tuple(materials), tuple(refused))


def _read(root: Path, path: Path) -> tuple[str | None, str | None]:
    """(The file's text, None) or (None, why it is not read)."""
    target = resolved_within(root, path)
    if target is None:
        try:
            leads = f" (to {str(path.resolve())!r})"
        except (OSError, RuntimeError):
            leads = ""
        return None, f"a link that leads outside the workspace{leads}: not read, nothing sent"
    try:
        size = target.stat().st_size
        if not target.is_file():
            return None, "not a regular file: not read"
        if size > MAX_FILE_BYTES:
            return None, f"{size:,} bytes, over the {MAX_FILE_BYTES:,} read: not read"
        # A file that is not UTF-8 is still read (invalid bytes replaced): it is the user's.
        return target.read_bytes().decode("utf-8", "replace"), None
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or exc}"


def limit_workspace(
    system: tuple[SystemPart, ...],
    blocks: tuple[Material, ...],
    max_tokens: int,
    count: Callable[[str], int],
) -> tuple[tuple[SystemPart, ...], tuple[Material, ...], list[Transform]]:
    """Workspace material cut to ``max_tokens`` in all (000's ``maxContextTokens``): knowledge
    files give way first (the last first), then ``MEMORY.md``, then ``AGENTS.md``; each cut keeps
    its head and says where the rest is. Other System parts and sources are not counted here."""
    parts = [p for p in system if p.name.startswith("workspace/")]
    mine = [m for m in blocks if m.source_id == "workspace"]
    sizes = {p.name: count(p.text) for p in parts} | {m.item_id: count(m.block.text) for m in mine}
    excess = sum(sizes.values()) - max_tokens
    if max_tokens <= 0 or excess <= 0:
        return system, blocks, []
    order = [m.item_id for m in reversed(mine) if m.category == "knowledge"]
    order += [m.item_id for m in mine if m.category != "knowledge"]
    order += [p.name for p in parts]
    cut: dict[str, str] = {}
    transforms: list[Transform] = []
    for item_id in order:
        if excess <= 0:
            break
        text = next((p.text for p in parts if p.name == item_id), None)
        if text is None:
            text = next(m.block.text for m in mine if m.item_id == item_id)
        name = item_id.removeprefix("workspace/")
        note = TRIM_NOTE.format(limit=max_tokens, name=name)
        cut[item_id] = _cut_to(text, sizes[item_id] - excess, note, count)
        after = count(cut[item_id])
        excess -= sizes[item_id] - after
        transforms.append(Transform("workspace_trimmed", item_id, name, sizes[item_id], after))
    new_system = tuple(
        dataclasses.replace(p, text=cut[p.name]) if p.name in cut else p for p in system
    )
    new_blocks = tuple(
        dataclasses.replace(m, block=dataclasses.replace(m.block, text=cut[m.item_id]))
        if m.item_id in cut
        else m
        for m in blocks
    )
    return new_system, new_blocks, transforms


def _cut_to(text: str, target: int, note: str, count: Callable[[str], int]) -> str:
    """The head of ``text`` plus ``note`` within ``target`` tokens (a head and its note need not
    count as the sum of their parts: a few corrections)."""
    keep = target - count(note)
    cut = head_within(text, max(keep, 0), count) + note
    for _ in range(4):
        over = count(cut) - target
        if over <= 0 or keep <= 0:
            break
        keep -= over
        cut = head_within(text, max(keep, 0), count) + note
    return cut
