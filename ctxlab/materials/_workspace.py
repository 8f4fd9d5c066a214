"""Workspace material: ``AGENTS.md`` into System; ``MEMORY.md`` and knowledge files as references.

Loaded once per agent call (editing a file during the call takes effect at the next call), as the
reference harness does.
"""

from __future__ import annotations

from pathlib import Path

from ctxlab.materials._block import ContextBlock, Material, SystemPart

__all__ = ["load_workspace"]

KNOWLEDGE_SUFFIXES = (".md", ".txt")


def load_workspace(root: Path | None) -> tuple[tuple[SystemPart, ...], tuple[Material, ...]]:
    """(System parts, reference material) of the workspace at ``root`` (empty when None)."""
    if root is None or not root.is_dir():
        return (), ()
    system: list[SystemPart] = []
    materials: list[Material] = []
    agents = root / "AGENTS.md"
    if agents.is_file():
        system.append(SystemPart("workspace/AGENTS.md", agents.read_text(encoding="utf-8")))
    memory = root / "MEMORY.md"
    if memory.is_file():
        text = memory.read_text(encoding="utf-8")
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
                text = path.read_text(encoding="utf-8")
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
