"""What the harness places around the conversation: sources, instructions, workspace material,
and the task state (todo list, requirements, verification) projected into each request."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlab._state import WorkingState
from ctxlab._tasks import TaskOptions, TaskState, TodoItem, Verification
from ctxlab.agent._builtins import RECEIPT, SHORTENED_RECEIPT
from ctxlab.exceptions import UsageError
from ctxlab.materials import (
    ContextBlock,
    ContextRequest,
    FailurePolicy,
    Material,
    Materials,
    SourceRegistration,
    SystemPart,
    load_sources,
    load_workspace,
    validate_source_name,
)
from ctxlab.messages import Message, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.pipeline import Purpose

__all__ = ["HarnessMixin"]


class HarnessMixin:
    """Sources, instructions, workspace material and task state of an `Agent`."""

    if TYPE_CHECKING:
        _state: WorkingState
        _todo_enabled: bool
        _workspace_material: tuple[tuple[SystemPart, ...], tuple[Material, ...]] | None
        agent_id: str
        instructions: dict[str, str]
        session_id: str
        sources: dict[str, SourceRegistration]
        system_prompt: str
        task: TaskState
        task_options: TaskOptions
        user_id: str | None
        workspace: Path | None

    async def load_materials(self, purpose: Purpose = "reasoning", call_id: str = "") -> Materials:
        """The material of a request: System parts, task state, workspace material, sources.

        Sources are loaded here (once per preparation; never for summary preparations).
        """
        workspace = self._workspace_material
        if workspace is None:
            workspace = await asyncio.to_thread(load_workspace, self.workspace)
        system: list[SystemPart] = []
        if self.system_prompt:
            system.append(SystemPart("system_prompt", self.system_prompt))
        system.extend(SystemPart(f"instruction/{n}", t) for n, t in self.instructions.items())
        system.extend(workspace[0])
        blocks: list[Material] = list(workspace[1])
        failures: list[tuple[str, str]] = []
        if purpose != "summary" and self.sources:
            request = ContextRequest(self.agent_id, self.user_id, self.session_id, call_id, purpose)
            loaded, failures = await load_sources(list(self.sources.values()), request)
            blocks.extend(loaded)
        return Materials(system=tuple(system), blocks=tuple(blocks), failures=tuple(failures))

    def context_source(
        self,
        name: str,
        source: Any,
        *,
        timeout: float = 5.0,
        on_failure: FailurePolicy = "fail",
    ) -> SourceRegistration:
        """Register a source read before every reasoning request (not at construction).

        ``source`` is a `ContextSource` (async ``load(request)``) or an async callable taking a
        `ContextRequest` and returning a list of `ContextBlock`. Manifest ids are
        ``source/<name>/<block id>``.
        """
        validate_source_name(name)
        if name in self.sources:
            msg = f"a source named {name!r} is already registered; names must be unique"
            raise UsageError(msg)
        registration = SourceRegistration(name, source, timeout=timeout, on_failure=on_failure)
        self.sources[name] = registration
        return registration

    def remove_source(self, name: str) -> None:
        """Unregister a source."""
        if self.sources.pop(name, None) is None:
            msg = f"no source named {name!r}; registered: {', '.join(self.sources) or 'none'}"
            raise UsageError(msg)

    def instruction(self, name: str, text: str) -> None:
        """Add (or replace) a named instruction, placed in System as ``system/instruction/<name>``."""
        validate_source_name(name)
        self.instructions[name] = text

    def enable_task_list(self) -> None:
        """Give the model the ``todo_write`` tool; the current list is projected every step."""
        self._todo_enabled = True

    def task_context(
        self,
        *,
        include_requirements: bool = False,
        include_verification_results: bool = False,
        allow_requirement_proposals: bool = False,
    ) -> None:
        """Choose the optional task projections (replaces the previous choice)."""
        self.task_options = TaskOptions(
            include_requirements=include_requirements,
            include_verification_results=include_verification_results,
            allow_requirement_proposals=allow_requirement_proposals,
        )

    def begin_task(self, scope: str, objective: str) -> None:
        """Set the task's identity and objective."""
        self.task = self.task.begin(scope, objective)

    def propose_requirement(self, text: str) -> str:
        """Add a proposed requirement; returns its id."""
        self.task, requirement = self.task.propose(text)
        return requirement.id

    def decide_requirement(
        self, requirement_id: str, *, accept: bool, expected_revision: int
    ) -> None:
        """Confirm or reject a requirement; `StateConflict` when the state moved on."""
        self.task = self.task.decide(
            requirement_id, accept=accept, expected_revision=expected_revision
        )

    def set_subject_version(self, version: str) -> None:
        """Record which version of the subject checks refer to."""
        self.task = self.task.with_subject_version(version)

    def invalidate_subject(self) -> None:
        """Mark the subject as changed: earlier verification results become stale."""
        self.task = self.task.with_subject_version(None)

    def record_verification(self, name: str, *, passed: bool, summary: str = "") -> None:
        """Store a verification result against the current subject version."""
        self.task = self.task.with_verification(
            Verification(
                name=name, passed=passed, summary=summary, subject_version=self.task.subject_version
            )
        )

    def _todo_write(self, use: ToolUseBlock) -> ToolResultBlock:
        try:
            todos = [TodoItem.model_validate(t) for t in use.input.get("todos", [])]
        except Exception as exc:
            return ToolResultBlock(
                tool_use_id=use.id, content=f"Invalid todo list: {exc}", is_error=True
            )
        self.task = self.task.with_todos(todos)
        return ToolResultBlock(tool_use_id=use.id, content=self._receipt())

    def _propose_tool(self, use: ToolUseBlock) -> ToolResultBlock:
        text = use.input.get("text")
        if not isinstance(text, str) or not text.strip():
            return ToolResultBlock(
                tool_use_id=use.id, content="Give the requirement's text.", is_error=True
            )
        requirement_id = self.propose_requirement(text)
        return ToolResultBlock(
            tool_use_id=use.id, content=f"Proposed {requirement_id}; the user will decide."
        )

    def _receipt(self) -> str:
        return RECEIPT.format(revision=self.task.revision, todos=self.task.render_todos())

    def project_task(self, conversation: Sequence[Message]) -> list[Material]:
        """The ``TASK_STATE`` material for a request whose conversation is ``conversation``."""
        text = self.task.render(
            self.task_options, include_todos=not self._receipt_visible(conversation)
        )
        if not text:
            return []
        block = ContextBlock.runtime("task_state", text)
        return [Material("task/state", "task", "task", block, tag="TASK_STATE")]

    def _receipt_visible(self, conversation: Sequence[Message]) -> bool:
        # 000: the current receipt is used while it is visible and whole; otherwise the list is
        # reconstructed from state.
        if not self.task.todos:
            return True
        expected = self._receipt()
        for message in reversed(conversation):
            if isinstance(message, UserMessage):
                for result in message.tool_results:
                    if result.text.startswith("Todo list updated (revision"):
                        return result.text == expected
        return False

    def _shorten_old_receipts(self) -> None:
        conversation = list(self._state.conversation)
        latest_seen = False
        changed = False
        for index in range(len(conversation) - 1, -1, -1):
            message = conversation[index]
            if not isinstance(message, UserMessage):
                continue
            content = list(message.content)
            for position, block in enumerate(content):
                if isinstance(block, ToolResultBlock) and block.text.startswith(
                    "Todo list updated (revision"
                ):
                    if latest_seen:
                        content[position] = block.evolve(content=SHORTENED_RECEIPT)
                        changed = True
                    latest_seen = True
            conversation[index] = UserMessage(content=tuple(content))
        if changed:
            self._state = WorkingState(
                conversation=tuple(conversation),
                summary=self._state.summary,
                revision=self._state.revision + 1,
            )
