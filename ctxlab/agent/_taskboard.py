"""`TaskBoard`: the owner of the task state (todo list, requirements, verification) — the
``todo_write`` and ``propose_requirement`` tools, and the ``TASK_STATE`` projection of each request.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxlab.agent._builtins import (
    MODE_SCHEMA,
    PROPOSE_SCHEMA,
    RECEIPT,
    SHORTENED_RECEIPT,
    TODO_SCHEMA,
)
from ctxlab.materials import ContextBlock, Material
from ctxlab.materials._tasks import TaskOptions, TaskState, TodoItem, Verification
from ctxlab.messages import Message, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.messages._request import ToolSchema

__all__ = ["TaskBoard"]

_RECEIPT_PREFIX = "Todo list updated (revision"


class TaskBoard:
    """Task state and its projections; survives compaction (it lives outside the conversation)."""

    def __init__(self) -> None:
        self.state = TaskState()
        """The task state; each change makes a new `TaskState`."""
        self.options = TaskOptions()
        """Which optional projections are on."""
        self.todo_enabled = False
        """Whether the model has ``todo_write``."""
        self.mode_tool_enabled = False
        """Whether the model has ``switch_mode`` (PLAN/BUILD)."""

    def schemas(self) -> list[ToolSchema]:
        """The schemas of the task tools in force."""
        schemas = [TODO_SCHEMA] if self.todo_enabled else []
        if self.mode_tool_enabled:
            schemas.append(MODE_SCHEMA)
        if self.options.allow_requirement_proposals:
            schemas.append(PROPOSE_SCHEMA)
        return schemas

    # -- application calls --------------------------------------------------------------------

    def begin(self, scope: str, objective: str) -> None:
        """Set the task's identity and objective."""
        self.state = self.state.begin(scope, objective)

    def propose(self, text: str) -> str:
        """Add a proposed requirement; returns its id."""
        self.state, requirement = self.state.propose(text)
        return requirement.id

    def decide(self, requirement_id: str, *, accept: bool, expected_revision: int) -> None:
        """Confirm or reject a requirement; `StateConflict` when the state moved on."""
        self.state = self.state.decide(
            requirement_id, accept=accept, expected_revision=expected_revision
        )

    def set_subject_version(self, version: str | None) -> None:
        """Record which version of the subject checks refer to (None: changed, unknown)."""
        self.state = self.state.with_subject_version(version)

    def record_verification(self, name: str, *, passed: bool, summary: str = "") -> None:
        """Store a verification result against the current subject version."""
        self.state = self.state.with_verification(
            Verification(
                name=name,
                passed=passed,
                summary=summary,
                subject_version=self.state.subject_version,
            )
        )

    # -- tools ----------------------------------------------------------------------------------

    def todo_write(self, use: ToolUseBlock) -> ToolResultBlock:
        """The ``todo_write`` tool: replace the list, answer with the receipt."""
        try:
            todos = [TodoItem.model_validate(t) for t in use.input.get("todos", [])]
        except Exception as exc:
            return ToolResultBlock(
                tool_use_id=use.id, content=f"Invalid todo list: {exc}", is_error=True
            )
        self.state = self.state.with_todos(todos)
        return ToolResultBlock(tool_use_id=use.id, content=self.receipt())

    def propose_tool(self, use: ToolUseBlock) -> ToolResultBlock:
        """The ``propose_requirement`` tool."""
        text = use.input.get("text")
        if not isinstance(text, str) or not text.strip():
            return ToolResultBlock(
                tool_use_id=use.id, content="Give the requirement's text.", is_error=True
            )
        requirement_id = self.propose(text)
        return ToolResultBlock(
            tool_use_id=use.id, content=f"Proposed {requirement_id}; the user will decide."
        )

    def mode_tool(self, use: ToolUseBlock) -> ToolResultBlock:
        """The ``switch_mode`` tool."""
        mode, path = use.input.get("mode"), use.input.get("plan_path")
        if mode not in ("plan", "build") or (path is not None and not isinstance(path, str)):
            return ToolResultBlock(
                tool_use_id=use.id, content="Give mode 'plan' or 'build'.", is_error=True
            )
        self.state = self.state.with_mode(mode, path)
        return ToolResultBlock(tool_use_id=use.id, content=f"Now in {mode.upper()} mode.")

    def receipt(self) -> str:
        """The current list as ``todo_write`` reports it."""
        return RECEIPT.format(revision=self.state.revision, todos=self.state.render_todos())

    # -- projection -----------------------------------------------------------------------------

    def project(self, conversation: Sequence[Message]) -> list[Material]:
        """The ``TASK_STATE`` material for a request whose conversation is ``conversation``."""
        text = self.state.render(
            self.options, include_todos=not self._receipt_visible(conversation)
        )
        if not text:
            return []
        block = ContextBlock.runtime("task_state", text)
        return [Material("task/state", "task", "task", block, tag="TASK_STATE")]

    def _receipt_visible(self, conversation: Sequence[Message]) -> bool:
        # 000: the current receipt is used while it is visible and whole; otherwise the list is
        # reconstructed from state.
        if not self.state.todos:
            return True
        expected = self.receipt()
        for message in reversed(conversation):
            if isinstance(message, UserMessage):
                for result in message.tool_results:
                    if result.text.startswith(_RECEIPT_PREFIX):
                        return result.text == expected
        return False

    @staticmethod
    def shorten_old_receipts(
        conversation: Sequence[Message],
    ) -> tuple[Message, ...] | None:
        """The conversation with every receipt but the latest shortened (None: nothing to do).

        000: older receipts are shortened so obsolete progress does not compete with the list.
        """
        out = list(conversation)
        latest_seen = changed = False
        for index in range(len(out) - 1, -1, -1):
            message = out[index]
            if not isinstance(message, UserMessage):
                continue
            content = list(message.content)
            shortened = False
            for position, block in enumerate(content):
                if isinstance(block, ToolResultBlock) and block.text.startswith(_RECEIPT_PREFIX):
                    if latest_seen and block.text != SHORTENED_RECEIPT:
                        content[position] = block.evolve(content=SHORTENED_RECEIPT)
                        shortened = changed = True
                    latest_seen = True
            if shortened:
                out[index] = UserMessage(content=tuple(content))
        return tuple(out) if changed else None
