"""The agent's side of the session log: committing turns, resuming, and the session calls and
tools."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ctxlab._state import WorkingState
from ctxlab._tasks import TaskState
from ctxlab.agent._events import (
    CompactionEvent,
    ContextBuildEvent,
    ErrorEvent,
    Event,
    ModelResponseEvent,
    ToolResultEvent,
    TurnCommittedEvent,
)
from ctxlab.agent._tools import Tool
from ctxlab.exceptions import UsageError
from ctxlab.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, parse_messages
from ctxlab.session import LoggedMessage, SessionKey, SessionLog

__all__ = ["SessionMixin", "log_record"]


def log_record(event: Event) -> tuple[str, dict[str, Any]] | None:
    """What the session log keeps of an event (messages are logged on their own)."""
    if isinstance(event, ContextBuildEvent):
        return "context_build", {"context_manifest": event.manifest.to_dict()}
    if isinstance(event, CompactionEvent):
        return "compaction", {"kind": event.kind, **dataclasses.asdict(event.record)}
    if isinstance(event, ModelResponseEvent):
        usage = dataclasses.asdict(event.usage) if event.usage else None
        return "model_response", {
            "call_id": event.call_id,
            "stop": event.stop_reason,
            "usage": usage,
        }
    if isinstance(event, ToolResultEvent):
        return "tool_result", {
            "id": event.tool_use.id,
            "name": event.tool_use.name,
            "is_error": bool(event.result.is_error),
            "seconds": event.seconds,
        }
    if isinstance(event, ErrorEvent):
        return "error", {"error": event.message}
    return None


class SessionMixin:
    """Session-log recording and queries of an `Agent`."""

    if TYPE_CHECKING:
        _call: str
        _history: list[Message]
        _state: WorkingState
        _unlogged_events: list[tuple[str, dict[str, Any]]]
        _unlogged_messages: list[Message]
        agent_id: str
        session_id: str
        session_log: SessionLog | None
        task: TaskState
        user_id: str | None

        def _emit(self, event: Event) -> None: ...

        def add_tool(self, item: Callable[..., Any] | Tool) -> Tool: ...

    @property
    def session_key(self) -> SessionKey:
        """(agent id, user id, session id) in the session log."""
        return SessionKey(self.agent_id, self.user_id or "", self.session_id)

    def _resume(self) -> None:
        assert self.session_log is not None
        checkpoint = self.session_log.checkpoint(self.session_key)
        if checkpoint is None:
            return
        self._state = WorkingState.model_validate_json(checkpoint.state)
        self.task = TaskState.model_validate_json(checkpoint.task)
        payloads = self.session_log.message_payloads(self.session_key)
        self._history = parse_messages(json.loads(p) for p in payloads)

    async def _commit_turn(self) -> None:
        if self.session_log is None:
            self._unlogged_messages.clear()
            return
        messages = [
            LoggedMessage(m.role, m.model_dump_json(), _plain_text(m))
            for m in self._unlogged_messages
        ]
        events = list(self._unlogged_events)
        state, task = self._state.model_dump_json(), self.task.model_dump_json()
        turn = await asyncio.to_thread(
            self.session_log.commit_turn,
            self.session_key,
            events=events,
            messages=messages,
            state=state,
            task=task,
        )
        self._unlogged_messages.clear()
        del self._unlogged_events[: len(events)]
        self._emit(TurnCommittedEvent(turn, len(messages), self._call))

    def _require_log(self) -> SessionLog:
        if self.session_log is None:
            msg = "this agent has no session log; pass session_log=... when building it"
            raise UsageError(msg)
        return self.session_log

    def session_list(self) -> Any:
        """This user's sessions of this agent, as a DataFrame."""
        return self._require_log().sessions(user_id=self.user_id or "", agent_id=self.agent_id)

    def session_history(self, session_id: str | None = None, last_n: int = 20) -> Any:
        """The last messages of a session of this user (this one by default), as a DataFrame."""
        key = SessionKey(self.agent_id, self.user_id or "", session_id or self.session_id)
        return self._require_log().history(key, last_n)

    def session_search(self, query: str, limit: int = 20) -> Any:
        """This user's messages with this agent matching ``query`` (full-text), as a DataFrame."""
        return self._require_log().search(
            query, user_id=self.user_id or "", agent_id=self.agent_id, limit=limit
        )

    def enable_session_tools(self) -> None:
        """Give the model ``session_list``, ``session_history`` and ``session_search``."""
        self._require_log()
        agent = self

        def session_list() -> str:
            """List your earlier sessions with this user."""
            return str(agent.session_list().to_string(index=False))

        def session_history(session_id: str, last_n: int = 20) -> str:
            """Read the last messages of one of your sessions.

            Args:
                session_id: The session, from session_list.
                last_n: How many messages.
            """
            return str(agent.session_history(session_id, last_n).to_string(index=False))

        def session_search(query: str) -> str:
            """Search your conversations with this user for words.

            Args:
                query: Words to find.
            """
            found = agent.session_search(query)
            return found.to_string(index=False) if len(found) else f"nothing matches {query!r}"

        for fn in (session_list, session_history, session_search):
            self.add_tool(fn)


def _plain_text(message: Message) -> str:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            parts.append(f"{block.name} {block.input_json}")
        elif isinstance(block, ToolResultBlock):
            parts.append(block.text)
    return "\n".join(parts)
