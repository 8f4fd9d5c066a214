"""Workspace material: ``AGENTS.md`` into System; ``MEMORY.md`` and knowledge files as references.

Loaded once per agent call (editing a file during the call takes effect at the next call), as the
reference harness does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from ctxlab.manifest import Transform
from ctxlab.materials._block import ContextBlock, Material, SystemPart
from ctxlab.tokens import head_within

__all__ = ["limit_workspace", "load_workspace"]

TRIM_NOTE = "\n[... workspace material cut to fit {limit} tokens; read {name} for the rest ...]"

KNOWLEDGE_SUFFIXES = (".md", ".txt")


def load_workspace(root: Path | None) -> tuple[tuple[SystemPart, ...], tuple[Material, ...]]:
    """(System parts, reference material) of the workspace at ``root`` (empty when None)."""
    if root is None or not root.is_dir():
        return (), ()
    system: list[SystemPart] = []
    materials: list[Material] = []
    agents = root / "AGENTS.md"
    if agents.is_file():
        system.append(SystemPart("workspace/AGENTS.md", _read(agents)))
    memory = root / "MEMORY.md"
    if memory.is_file():
        text = _read(memory)
        if text.strip():
            materials.append(
                Material(
                    "workspace/MEMORY.md",
                    "workspace",
                    "memory",
                    ContextBlock.reference("MEMORY.md", text),
                )
            )
    knowledge = root / "knowledge"
    if knowledge.is_dir():
        for path in sorted(knowledge.rglob("*")):
            if path.is_file() and path.suffix in KNOWLEDGE_SUFFIXES:
                relative = path.relative_to(root).as_posix()
                text = _read(path)
                if text.strip():
                    materials.append(
                        Material(
                            f"workspace/{relative}",
                            "workspace",
                            "knowledge",
                            ContextBlock.reference(relative, text),
                        )
                    )
    return tuple(system), tuple(materials)


def _read(path: Path) -> str:
    # A file that is not UTF-8 is still read (invalid bytes replaced): it is the user's text.
    return path.read_bytes().decode("utf-8", "replace")


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
