"""Two facets of an `Agent` that are not its loop: its task state (``agent.tasks``) and its
session log (``agent.log``). Each forwards to the collaborator that owns the state (the
`TaskBoard`, the `Recorder`), so the agent's own surface stays the loop, the context and its
steering."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from ctxlab.materials._tasks import TaskOptions, TaskState

if TYPE_CHECKING:
    import pandas as pd

    from ctxlab.agent._recorder import Recorder
    from ctxlab.agent._taskboard import TaskBoard
    from ctxlab.materials import Material
    from ctxlab.messages import AssistantMessage, UserMessage
    from ctxlab.session import SessionKey, SessionLog

__all__ = ["AgentLog", "AgentTasks"]


class AgentTasks:
    """The task state of an agent (``agent.tasks``): todo list, requirements, verification,
    PLAN/BUILD mode — projected into every request and kept across compaction."""

    def __init__(self, board: TaskBoard) -> None:
        self._board = board

    @property
    def state(self) -> TaskState:
        """The task state (todo list, requirements, verification); survives compaction."""
        return self._board.state

    @property
    def options(self) -> TaskOptions:
        """Which optional task projections are on."""
        return self._board.options

    def set_mode(self, mode: Literal["plan", "build"], plan_path: str | None = None) -> None:
        """PLAN/BUILD mode: projected at every model boundary, survives compaction."""
        self._board.state = self._board.state.with_mode(mode, plan_path)

    def enable_mode_tool(self) -> None:
        """Give the model ``switch_mode`` (PLAN ↔ BUILD)."""
        self._board.mode_tool_enabled = True

    def enable_list(self) -> None:
        """Give the model the ``todo_write`` tool; the current list is projected every step."""
        self._board.todo_enabled = True

    def context(
        self,
        *,
        include_requirements: bool = False,
        include_verification_results: bool = False,
        allow_requirement_proposals: bool = False,
    ) -> None:
        """Choose the optional task projections (replaces the previous choice)."""
        self._board.options = TaskOptions(
            include_requirements=include_requirements,
            include_verification_results=include_verification_results,
            allow_requirement_proposals=allow_requirement_proposals,
        )

    def begin(self, scope: str, objective: str) -> None:
        """Set the task's identity and objective."""
        self._board.begin(scope, objective)

    def propose_requirement(self, text: str) -> str:
        """Add a proposed requirement; returns its id."""
        return self._board.propose(text)

    def decide_requirement(
        self, requirement_id: str, *, accept: bool, expected_revision: int
    ) -> None:
        """Confirm or reject a requirement; `StateConflict` when the state moved on."""
        self._board.decide(requirement_id, accept=accept, expected_revision=expected_revision)

    def set_subject_version(self, version: str) -> None:
        """Record which version of the subject checks refer to."""
        self._board.set_subject_version(version)

    def invalidate_subject(self) -> None:
        """Mark the subject as changed: earlier verification results become stale."""
        self._board.set_subject_version(None)

    def record_verification(self, name: str, *, passed: bool, summary: str = "") -> None:
        """Store a verification result against the current subject version."""
        self._board.record_verification(name, passed=passed, summary=summary)

    def project(self, conversation: Sequence[UserMessage | AssistantMessage]) -> list[Material]:
        """The ``TASK_STATE`` material for a request whose conversation is ``conversation``."""
        return self._board.project(conversation)


class AgentLog:
    """The session log of an agent (``agent.log``): where its turns, checkpoints and events are
    kept, and what the model may look up in it."""

    def __init__(self, recorder: Recorder, add_tool: Any) -> None:
        self._recorder = recorder
        self._add_tool = add_tool

    @property
    def store(self) -> SessionLog | None:
        """The SQLite session log, when the agent has one."""
        return self._recorder.log

    @property
    def key(self) -> SessionKey:
        """(agent id, user id, session id) in the session log."""
        return self._recorder.key

    def sessions(self) -> pd.DataFrame:
        """This user's sessions of this agent, as a DataFrame."""
        return self._recorder.sessions()

    def history(self, session_id: str | None = None, last_n: int = 20) -> pd.DataFrame:
        """The last messages of a session of this user (this one by default), as a DataFrame."""
        return self._recorder.history(session_id, last_n)

    def search(self, query: str, limit: int = 20) -> pd.DataFrame:
        """This user's messages with this agent matching ``query`` (full-text), as a DataFrame."""
        return self._recorder.search(query, limit)

    def enable_tools(self) -> None:
        """Give the model ``session_list``, ``session_history`` and ``session_search``."""
        for fn in self._recorder.session_tools(self):
            self._add_tool(fn)
