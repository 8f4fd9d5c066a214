"""`MaterialLoader`: what the harness places around the conversation — the system prompt, named
instructions, workspace material (``AGENTS.md``, ``MEMORY.md``, knowledge) and context sources."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ctxlab.exceptions import UsageError
from ctxlab.manifest import Purpose, Transform
from ctxlab.materials import (
    ContextRequest,
    FailurePolicy,
    Material,
    Materials,
    SourceRegistration,
    SystemPart,
    WorkspaceMaterial,
    limit_workspace,
    load_sources,
    load_workspace,
    validate_source_name,
)
from ctxlab.pipeline import SelectionPolicy

__all__ = ["MaterialLoader"]


class MaterialLoader:
    """Loads a request's material: workspace material once per agent call (000), sources once
    per preparation (never for summary preparations)."""

    def __init__(
        self,
        system_prompt: str,
        workspace: Path | None,
        selection_policy: SelectionPolicy | None = None,
    ) -> None:
        self.system_prompt = system_prompt
        self.selection_policy = selection_policy
        """The omission order of optional material (None: memory → knowledge → sources)."""
        """Persistent behaviour; the first part of the System message."""
        self.workspace = workspace
        self.sources: dict[str, SourceRegistration] = {}
        """Registered context sources by name (their options can be edited between steps)."""
        self.instructions: dict[str, str] = {}
        """Named instructions, placed in System after the system prompt."""
        self._call_material: WorkspaceMaterial | None = None

    async def begin_call(self) -> None:
        """Load the workspace material the call's preparations share."""
        self._call_material = await asyncio.to_thread(load_workspace, self.workspace)

    def end_call(self) -> None:
        """Forget the call's workspace material: the next call reads the files again."""
        self._call_material = None

    async def load(
        self,
        purpose: Purpose,
        request: ContextRequest,
        *,
        count: Callable[[str], int] | None = None,
        workspace_max_tokens: int = 0,
    ) -> Materials:
        """The material of one preparation: System parts, workspace material (cut to
        ``workspace_max_tokens`` counted with ``count``), sources."""
        workspace = self._call_material
        if workspace is None:
            workspace = await asyncio.to_thread(load_workspace, self.workspace)
        notes: list[Transform] = list(workspace.refused)
        if count is not None and workspace_max_tokens:
            system_parts, blocks_, cuts = limit_workspace(
                workspace.system, workspace.materials, workspace_max_tokens, count
            )
            workspace = WorkspaceMaterial(system_parts, blocks_, workspace.refused)
            notes += cuts
        system: list[SystemPart] = []
        if self.system_prompt:
            system.append(SystemPart("system_prompt", self.system_prompt))
        system.extend(SystemPart(f"instruction/{n}", t) for n, t in self.instructions.items())
        system.extend(workspace[0])
        blocks: list[Material] = list(workspace[1])
        failures: list[tuple[str, str]] = []
        if purpose != "summary" and self.sources:
            loaded, failures = await load_sources(list(self.sources.values()), request)
            blocks.extend(loaded)
        return Materials(
            system=tuple(system),
            blocks=tuple(blocks),
            failures=tuple(failures),
            notes=tuple(notes),
        )

    def add_source(
        self, name: str, source: Any, *, timeout: float, on_failure: FailurePolicy
    ) -> SourceRegistration:
        """Register a source under a unique, valid name."""
        validate_source_name(name)
        if name in self.sources:
            msg = f"a source named {name!r} is already registered; names must be unique"
            raise UsageError(msg)
        registration = SourceRegistration(name, source, timeout=timeout, on_failure=on_failure)
        self.sources[name] = registration
        return registration

    def add_instruction(self, name: str, text: str) -> None:
        """Add (or replace) a named instruction."""
        validate_source_name(name, "instruction")
        self.instructions[name] = text
